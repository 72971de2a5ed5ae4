# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# The sign stage's guest (lab/stages/sign.sh), booted with
# module.sig_enforce=1 and three builds of zcdev: /unsigned.ko, /other.ko
# (signed with a key the kernel does not trust) and /signed.ko (signed
# with the one it trusts), tried in that order, so that a loaded zcdev
# cannot make the refused ones fail for another reason.  For each: "load
# NAME: rc=N <insmod's words>", the kernel's messages as "kernel NAME:
# ...", "loaded NAME: yes|no", and "zeros NAME: yes" when it loaded and
# its device read zeros.  The kernel's messages are quoted without their
# timestamps: lab/vm/unsplit.sh would take a line with one inside for a
# line that a kernel message cut.

echo "# kernel $(uname -r), sig_enforce=$(cat /sys/module/module/parameters/sig_enforce)"
for m in unsigned other signed; do
	before=$(dmesg | wc -l)
	insmod /$m.ko >/tmp/insmod 2>&1
	rc=$?
	said=$(tr '\n' ' ' </tmp/insmod)
	echo "load $m: rc=$rc${said:+ ${said% }}"
	dmesg | tail -n +$((before + 1)) | sed "s/^\[[^]]*\] *//; s/^/kernel $m: /"
	if [ -e /sys/module/zcdev ]; then
		echo "loaded $m: yes"
		[ "$(dd if=/dev/zczero bs=1M count=4 2>/dev/null | tr -d '\000' | wc -c)" = 0 ] &&
		[ "$(dd if=/dev/zczero bs=1M count=4 2>/dev/null | wc -c)" = 4194304 ] &&
			echo "zeros $m: yes"
		rmmod zcdev
	else
		echo "loaded $m: no"
	fi
done
