#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A guest's console with its lines made whole again: lab/vm/unsplit.sh
# <CONSOLE >CONSOLE.  The kernel writes its messages to the serial port
# while user space's lines are on their way there, so a message can land
# in the middle of a line: "ok 7 zcdev.zczero.rea[  64.60] zcdev: ..."
# and, after the kernel's lines, "d_sizes".  A kernel line is never cut
# (its record goes out whole), so the part before its timestamp is the
# start of a user line, and the next line that is not the kernel's is
# its end.  The kernel's lines are kept, before the line they cut.  The
# lines of lab/vm/run.sh ("==ZCVM== ...", "vm-run: ...") are left alone:
# they may quote the kernel.  A guest that quotes its own kernel log
# leaves the timestamps out (lab/guest/sign.sh).

exec awk '
function kernel(s) { return s ~ /^\[ *[0-9]+\.[0-9]+\] / }
{
	if (!kernel($0) && !/^(==ZCVM== |vm-run: )/ &&
	    match($0, /\[ *[0-9]+\.[0-9]+\] /)) {
		head = head substr($0, 1, RSTART - 1)
		print substr($0, RSTART)
		next
	}
	if (kernel($0) || head == "") {
		print
		next
	}
	print head $0
	head = ""
}
END { if (head != "") print head }'
