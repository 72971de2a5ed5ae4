# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# What the lane's guest scripts (guest-check, guest-smoke) share: put in
# the guest as /guest-lib by lab/check.sh and sourced there (busybox sh).

KO=${KO:-/zcdev.ko}	# the module under test
KMEMLEAK=/sys/kernel/debug/kmemleak
HAVE_KMEMLEAK=		# set by plan

# debugfs is mounted only while kmemleak is asked: a fuzzer that finds
# tracing files there (trinity) would try them.
debugfs_on() {
	grep -q ' /sys/kernel/debug ' /proc/mounts ||
		mount -t debugfs none /sys/kernel/debug
}

debugfs_off() {
	umount /sys/kernel/debug 2>/dev/null || true
}

# step NAME CMD...: run CMD, print its verdict, and its output on failure.
step() {
	name=$1
	shift
	start=$(cut -d' ' -f1 /proc/uptime)
	if "$@" >/tmp/step.out 2>&1; then
		echo "ok - $name"
		echo "#   $(cut -d' ' -f1 /proc/uptime) s (from $start)"
	else
		echo "not ok - $name"
		sed 's/^/#   /' /tmp/step.out | tail -40
	fi
}

# kstep NAME CMD...: a step of kernels with kmemleak only.
kstep() {
	[ -n "$HAVE_KMEMLEAK" ] || return 0
	step "$@"
}

# report TEXT: a figure for the lane's output (lab/vm/judge.sh relays it).
report() {
	echo "# report: $*" >/dev/console
}

# rmmod, allowing for the last splice's generation: it ends within a
# quarter of a second, and goes two grace periods later (zcdev_pipe.c).
unload() {
	local tries=0

	until rmmod zcdev 2>/dev/null; do
		tries=$((tries + 1))
		[ $tries -lt 100 ] || { rmmod zcdev; return 1; }
		sleep 0.1
	done
}

# selftests PROG: its TAP lines go to the console, not to step's log,
# with the program's name before each test's, as "zcdev_read_32.zcdev.
# zczero.node"; lab/vm/judge.sh judges each test of zcdev's, and prints the
# stock devices' as references.  The step itself asks only that the
# program ran to its end: the harness printed its totals.  Each line goes
# on at once (awk's fflush(); busybox's sed would hold a pipe's output
# until it ends): a test that runs a minute is not a silent guest.
selftests() {		# selftests PROG [NAME]: NAME (default PROG) before its tests
	ZCDEV_KO=$KO /t/$1 2>&1 |
		awk -v n="${2:-$1}" '
		/^(not )?ok [0-9]+ [a-z]/ || /^#  RUN +/ {
			match($0, /^((not )?ok [0-9]+ |#  RUN +)/)
			$0 = substr($0, 1, RLENGTH) n "." substr($0, RLENGTH + 1)
		}
		{ print; fflush() }' |
		tee /tmp/selftests.out >/dev/console
	grep -qE '^# (PASSED|FAILED): [0-9]+ / [0-9]+ tests passed' /tmp/selftests.out
}

# selftests_zeropage PROG: PROG with zcdev loaded with splice_buffer=4096
# (the zero page, one page a buffer, pipes pinning the module), and
# reloaded so by the tests that reload it; its tests named PROG_zeropage.
selftests_zeropage() {
	local rc=0

	unload && insmod $KO splice_buffer=4096 || return 1
	ZCDEV_PARAMS=splice_buffer=4096 selftests $1 $1_zeropage || rc=1
	lsmod | grep -q '^zcdev' || insmod $KO splice_buffer=4096
	[ "$(cat /sys/module/zcdev/parameters/splice_buffer)" = 4096 ] || rc=1
	unload && insmod $KO || rc=1
	return $rc
}

# lane_programs LIST: the programs of LIST (lab/selftests/Makefile's
# emit_lane: "PROG", or "PROG zeropage" for PROG again with zero-page
# buffers), a step each, zcdev loaded again after each if a test left
# it unloaded.
lane_programs() {
	local prog how

	while read -r prog how <&3; do
		if [ "$how" = zeropage ]; then
			step "selftests: $prog, splice_buffer=4096, ran to its end" \
				selftests_zeropage "$prog"
		else
			step "selftests: $prog ran to its end" selftests "$prog"
		fi
		lsmod | grep -q '^zcdev' || insmod $KO
	done 3<"$1"
}

# kmemleak's verdict: no unreferenced object allocated by zcdev (its
# symbols, or addresses in module space once it is gone: the guest loads
# no other module), splice or pipe code.  A scan reports an object only
# once it is five seconds old (kmemleak's minimum age): one scan, six
# seconds after the last test, sees all they left (a scan takes some
# six seconds of a CPU on the debug kernel under TCG).
kmemleak_check() {
	local n ours

	debugfs_on
	sleep 6 && echo scan >$KMEMLEAK &&
		cat $KMEMLEAK >/tmp/kmemleak.out || { debugfs_off; return 1; }
	debugfs_off
	n=$(grep -c '^unreferenced object' /tmp/kmemleak.out)
	# a module's address is printed bare once the module is gone
	ours=$(awk '/^unreferenced object/ { if (hit) o++; hit = 0 }
		/zcdev|splice|pipe/ { hit = 1 }
		/(^|[^<0-9a-fx])0xffffffff[c-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]/ { hit = 1 }
		END { if (hit) o++; print o + 0 }' /tmp/kmemleak.out)
	report "kmemleak ($1): $n unreferenced objects, $ours from zcdev, splice or pipe code"
	[ "$ours" -eq 0 ] || { cat /tmp/kmemleak.out; return 1; }
}

# plan SCRIPT [MORE]: its TAP plan, one for each step line, each kstep
# line where the kernel has kmemleak (and ZCDEV_KMEMLEAK is not 0: a
# guest that proves another gate), and MORE for steps run in a loop.
plan() {
	local n

	debugfs_on
	[ ! -e $KMEMLEAK ] || [ "${ZCDEV_KMEMLEAK:-1}" = 0 ] || HAVE_KMEMLEAK=1
	debugfs_off
	n=$(($(grep -c '^step ' "$1") + ${2:-0}))
	[ -z "$HAVE_KMEMLEAK" ] || n=$((n + $(grep -c '^kstep ' "$1")))
	echo "1..$n"
}
