# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What the lane's stages (lab/stages/*.sh) share: sourced by each, from
# the top of the tree, after it sets WHAT, the prefix of its TAP lines
# ("ok - WHAT: ..."; empty for none).
#
# Run by lab/check.sh, a stage finds the lane's state in LANE_OUT
# (out/check): which kernels are fetched (ready) and built (built), the
# selftests the lane built (selftests/), the jobs check.sh started in the
# background (NAME.rc once done), and the lane's deadline
# (CHECK_DEADLINE, seconds since the epoch).  Run alone, a stage has no
# LANE_OUT: every kernel it is given counts as ready, and time is not
# bounded.

# shellcheck source=lab/vm/bad-log.sh
. lab/vm/bad-log.sh

# shellcheck disable=SC2034	# read by the scripts that source this
LAB=${ZCDEV_LAB:-/var/cache/zcdev-lab}
LANE_OUT=${LANE_OUT:-}
WHAT=${WHAT:-}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || cat VERSION)}
# one probe of the accelerator for the whole lane (lab/stages/setup.sh)
if [ -z "${ZCDEV_ACCEL:-}" ] && [ -n "$LANE_OUT" ] && [ -s "$LANE_OUT/accel" ]; then
	ZCDEV_ACCEL=$(cat "$LANE_OUT/accel")
	export ZCDEV_ACCEL
fi

# shellcheck disable=SC2034	# read by the scripts that source this
failed=0

# result VERDICT NAME [LOG]: one TAP line; a failure shows the log's tail.
result() {
	if [ "$1" = ok ]; then
		echo "ok - ${WHAT:+$WHAT: }$2"
	else
		failed=1
		echo "not ok - ${WHAT:+$WHAT: }$2"
		[ -n "${3:-}" ] && [ -s "$3" ] && tail -30 "$3" | sed 's/^/#   /'
	fi
	return 0
}

# step NAME LOG CMD...: run CMD with its output in LOG, and say how it went.
step() {
	local name=$1 log=$2
	shift 2
	if "$@" >"$log" 2>&1; then
		result ok "$name"
	else
		result fail "$name" "$log"
	fi
}

# in_time NAME: whether the lane has time left for NAME; if not, NAME
# fails, so that the lane closes with its summary rather than be killed.
in_time() {
	if [ -z "${CHECK_DEADLINE:-}" ] || [ "$(date +%s)" -lt "$CHECK_DEADLINE" ]; then
		return 0
	fi
	result fail "$1: not run, the lane's time budget of ${CHECK_SECS:-?} s is spent"
	return 1
}

# lane_has LIST K...: whether the lane has each K in LIST (ready: fetched,
# built: built with W=1).  Outside the lane, yes.
lane_has() {
	local list=$1 k
	shift
	[ -n "$LANE_OUT" ] || return 0
	for k; do
		grep -qxF -- "$k" "$LANE_OUT/$list" 2>/dev/null || return 1
	done
}

lane_add() {		# lane_add LIST K
	echo "$2" >>"$LANE_OUT/$1"
}

# wait_job NAME: wait for lab/check.sh's background job NAME to end;
# whether it was started and succeeded.
wait_job() {
	[ -n "$LANE_OUT" ] && [ -e "$LANE_OUT/$1.started" ] || return 1
	until [ -s "$LANE_OUT/$1.rc" ]; do
		sleep 5
	done
	[ "$(cat "$LANE_OUT/$1.rc")" = 0 ]
}

# after_job NAME: in the lane, wait for lab/check.sh's background job
# NAME; the stage ends here, passing, when it was not started or failed
# (the stage that reports on it says why).  Outside the lane, go on.
after_job() {
	[ -z "$LANE_OUT" ] || wait_job "$1" || exit 0
}

# What a coverage build of zcdev adds to kbuild's command line: gcov's
# flags for zcdev's own two objects (only on a kernel with
# CONFIG_GCOV_KERNEL: the debug kernel), never in the product's Kbuild.
# shellcheck disable=SC2034	# read by the scripts that source this
GCOV_ARGS=(GCOV_PROFILE_zcdev_main.o=y GCOV_PROFILE_zcdev_pipe.o=y)

# [FAULT=NAME] build K DIR [KBUILD ARGS...]: the module's sources in DIR,
# built for kernel K without a warning; the log in DIR.log.  With FAULT,
# the planted fault NAME, FAULTS/NAME.patch (FAULTS: lab/faults), applied
# to the sources first (patch -p1, no fuzz), and the version ends in
# -fault-NAME; a patch that does not apply fails the build with one line
# naming it, in DIR.log and on stderr.  The kbuild argument ZCDEV_FAULT=
# that planted faults before them is refused, not ignored.
build() {
	local k=$1 dir=$2 fault=${FAULT:-} pfile a
	shift 2
	for a; do
		case $a in ZCDEV_FAULT=*)
			echo "build: $a is gone: FAULT=${a#ZCDEV_FAULT=} build $k $dir" | tee "$dir.log" >&2
			return 1 ;;
		esac
	done
	pfile=${FAULTS:-lab/faults}/$fault.patch
	if [ -n "$fault" ]; then
		rm -rf "$dir"
		if [ ! -f "$pfile" ]; then
			echo "fault $fault: no $pfile" | tee "$dir.log" >&2
			return 1
		fi
	fi
	mkdir -p "$dir"
	make -s sources DEST="$dir" >/dev/null || return 1
	if [ -n "$fault" ] &&
	   ! patch -d "$dir" -p1 -F0 -s -f --no-backup-if-mismatch <"$pfile" >"$dir.patch.log" 2>&1; then
		echo "fault $fault: $pfile no longer applies" | tee "$dir.log" >&2
		return 1
	fi
	lab/vm/kmake.sh "$k" "$dir" ZCDEV_VERSION="$VERSION${fault:+-fault-$fault}" "$@" \
		>"$dir.log" 2>&1 &&
	! grep -qE 'warning:|error:' "$dir.log"
}

# guest K DIR NAME KO SCRIPT [VM-RUN ARGS...]: boot kernel K with module
# KO, the lane's selftests as /t and lab/guest/lib.sh as /guest-lib, run
# SCRIPT, and judge the run (lab/vm/judge.sh); the console goes to
# DIR/NAME.console, the verdicts to DIR/NAME.tap.  Each guest has a time
# budget (CHECK_VM_SECS, 1200 s; on the debug kernel CHECK_DEBUG_VM_SECS,
# 2700 s) that never reaches past the lane's.  On the debug kernel, gcov's
# data after the run goes to DIR/NAME.gcda (lab/stages/coverage.sh).
# The verdicts name K, or LABEL when it is set.
guest() {
	local k=$1 dir=$2 name=$3 ko=$4 script=$5 rc=0 secs left gcov=()
	shift 5
	[ "$k" != debug ] || gcov=(-o "$dir/$name.gcda")
	secs=${CHECK_VM_SECS:-1200}
	[ "$k" != debug ] || secs=${CHECK_DEBUG_VM_SECS:-2700}
	if [ -n "${CHECK_DEADLINE:-}" ]; then
		left=$((CHECK_DEADLINE - $(date +%s)))
		[ "$left" -ge "$secs" ] || secs=$left
	fi
	[ "$secs" -gt 0 ] || secs=1
	lab/vm/run.sh -k "$k" -t "$secs" "${gcov[@]}" "$@" -f "$ko:/zcdev.ko" \
		-f "$LANE_OUT/selftests:/t" -f lab/guest/lib.sh:/guest-lib \
		-b stress-ng -b trinity -b setpriv "$script" >"$dir/$name.console" 2>&1 || rc=$?
	lab/vm/judge.sh "${LABEL:-$k}" "$dir/$name.console" $rc >"$dir/$name.tap"
}

# console_parts CONSOLE GUEST DMESG: of a lab/vm/run.sh console, what
# the guest's script printed into GUEST, its kernel log into DMESG
# (the lines that a kernel message cut made whole: lab/vm/unsplit.sh)
console_parts() {
	lab/vm/unsplit.sh <"$1" | sed -n '/^==ZCVM== begin$/,/^==ZCVM== rc=/p' |
		sed '1d;$d' >"$2"
	sed -n '/^==ZCVM== dmesg$/,/^==ZCVM== end$/p' "$1" >"$3"
}

# log_clean NAME DMESG BAD: the TAP line of a guest's kernel log DMESG
# (NAME: the kernel, or the boot): it must be there and have no line
# that lab/vm/bad-log.sh names; those go into BAD.
log_clean() {
	grep -E "$BAD_LOG" "$2" >"$3" || true
	if [ -s "$2" ] && [ ! -s "$3" ]; then
		result ok "$1: kernel log free of warnings and oopses"
	else
		result fail "$1: kernel log free of warnings and oopses" "$3"
	fi
}

# modprobe_guest K MODULES KO V SRCV LOGS: boot the lab's kernel K with
# the module tree MODULES as /lib/modules (lab/guest/modprobe.sh), where
# KO (/lib/modules/<release>/...) must be the only zcdev.ko and modprobe
# must load it: version V, srcversion SRCV.  Its TAP lines with K named,
# then whether the VM ran to its end and reported all six, and the kernel
# log.  The console and the rest are LOGS.console, LOGS.guest, ...  With
# FAULT_LOG=1 the guest writes a warning into its kernel log, for a gate.
modprobe_guest() {
	local k=$1 modules=$2 ko=$3 v=$4 srcv=$5 logs=$6 rel rc=0 steps=0 line

	rel=${ko#/lib/modules/}
	rel=${rel%%/*}
	{
		echo "WHAT='$WHAT' KREL='$rel' KO='$ko' V='$v' SRCV='$srcv' FAULT_LOG='${FAULT_LOG:-}'"
		cat lab/guest/modprobe.sh
	} >"$logs.sh"
	lab/vm/run.sh -k "$k" -t 300 -f "$modules:/lib/modules" "$logs.sh" \
		>"$logs.console" 2>&1 || rc=$?
	console_parts "$logs.console" "$logs.guest" "$logs.dmesg"
	if [ $rc -eq 124 ] || [ ! -s "$logs.guest" ]; then
		tail -40 "$logs.console" >"$logs.tail"
		result fail "$k: the VM ran to its end" "$logs.tail"
	else
		result ok "$k: the VM ran to its end"
	fi
	while IFS= read -r line; do
		case $line in
		"ok - $WHAT: "*|"not ok - $WHAT: "*)
			steps=$((steps + 1))
			# shellcheck disable=SC2034
			case $line in not*) failed=1 ;; esac
			echo "${line/ - $WHAT: / - $WHAT: $k: }" ;;
		"#   "*)
			echo "$line" ;;
		esac
	done <"$logs.guest"
	[ $steps -eq 6 ] || result fail "$k: all 6 guest steps reported ($steps)" "$logs.guest"
	log_clean "$k" "$logs.dmesg" "$logs.bad-dmesg"
}

# gate_kernel: the kernel the gates run on, the newest stock kernel the
# lane built (7, else the last one), or nothing.
gate_kernel() {
	local b k=
	while read -r b; do
		[ "$b" = debug ] || [ "$b" = user ] || [ "$k" = 7 ] || k=$b
	done <"$LANE_OUT/built"
	echo "$k"
}

# one_kernel NAME DEFAULT [KERNEL]: the kernel k of a stage of one kernel
# (KERNEL, else DEFAULT); the stage ends here, passing, when the lane did
# not build it (with NEEDS=ready: did not fetch it; with NEEDS empty, the
# caller has asked), and failing when the lane's time is spent.
one_kernel() {
	local name=$1 needs=${NEEDS-built}
	[ $# -le 3 ] || { echo "usage: lab/stages/$name.sh [KERNEL_ID]" >&2; exit 2; }
	k=${3:-$2}
	[ -z "$needs" ] || lane_has "$needs" "$k" || exit 0
	in_time "$name" || exit 1
	[ -s "$LAB/kernels/$k/env" ] ||
		{ echo "$name: kernel $k is not set up (lab/vm/setup.sh $k)" >&2; exit 2; }
}

# kernel_stage [-h] NAME DEFAULT [KERNEL]: one_kernel, then the kernel's
# env (KREL, KDIR, BROOT, VMLINUZ, ...) and the stage's logs OUT, empty:
# out/check/NAME-K in the lane, else out/NAME-K.  With -h, the kernel must
# be one whose headers build with the host's make (no build root).
kernel_stage() {
	local host=
	[ "$1" != -h ] || { host=1; shift; }
	one_kernel "$@"
	# shellcheck disable=SC1090
	. "$LAB/kernels/$k/env"
	[ -z "$host" ] || [ -z "$BROOT" ] ||
		{ echo "$1: kernel $k builds in a root; give 6.1 or 6.12" >&2; exit 2; }
	OUT=${LANE_OUT:-$PWD/out}/$1-$k
	rm -rf "$OUT"
	mkdir -p "$OUT"
}

# finish WHAT: end the stage; its work tree WORK goes when all passed, and
# is kept, holding WHAT, when something failed.
finish() {
	if [ $failed -eq 0 ]; then
		[ -z "${WORK:-}" ] || rm -rf "$WORK"
	else
		echo "# $WHAT: logs in $OUT${WORK:+, ${1:-its work} in $WORK}"
	fi
	exit $failed
}
