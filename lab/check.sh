#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: the whole test lane, on a fresh Debian 12 machine.
#
#   lab/check.sh [KERNEL...]        (default: 6.1 6.12 7 7-rt debug)
#
# With ZCDEV_IMAGE=<bzImage> and ZCDEV_IMAGE_KDIR=<its build tree> ("make
# check IMAGE=... KDIR=..."), the kernel "user" is that kernel
# (lab/vm/user-kernel.sh; ZCDEV_IMAGE_BROOT when its compiler is not the
# host's), and the default list is that kernel alone.
#
# The lane is the stages below: each is lab/stages/NAME.sh, says what it
# proves at its top, and prints TAP lines without numbers ("ok - ...",
# "not ok - ...", "# ..."), which this script numbers and counts; a
# stage that exits non-zero without a "not ok" fails as well.  Its whole
# output is in out/check/stage-NAME.log.  To add a stage, write
# lab/stages/NAME.sh (lab/stages/lib.sh has what they share), name it in
# STAGES and, if it reads another stage's results, in needs().
# CHECK_STAGES="setup selftests builds kernels ..." runs only those
# (setup first: the others need what it leaves).  It closes with "N
# passed, N failed, N skipped".
#
# The debug kernel (lab/vm/debug-kernel.sh) and the roots of the early
# warning, the package stage and the systemd stage are made in the
# background (lab/stages/setup.sh).  The stages run in their order
# (the longer first, among those that wait for the same), CHECK_JOBS
# (default 3) at a time, at nice CHECK_NICE (default 10); and two guests
# at most run at once (ZCDEV_VM_SLOTS, lab/vm/run.sh), whichever stages
# they are of, each at the niceness check.sh has.  Under TCG a guest
# keeps about one CPU busy, less where it sleeps or its stage judges or
# boots it: two keep both CPUs 85% busy, and a third stage's builds take
# what they leave, never more.  While such a background job runs, one at
# a time: the job has the other CPU.  A stage starts
# once the stages whose results it reads have ended (needs) and its
# background job, if it has one, is done (job_of); the next that can
# start goes first.  The output is shown stage by stage in the order
# they started, as it comes for the first.  At the end, when each stage
# started and its wall time, how long nothing could run, and the total.
#
# Time is bounded: each guest has a budget (CHECK_VM_SECS, default 1200 s;
# on the debug kernel CHECK_DEBUG_VM_SECS, default 2700 s) that never
# reaches past the lane's own (CHECK_SECS, default 5100 s: CI allows
# 5400); once that is used up, the stages left report their steps as
# failed instead of running them, so that the lane always closes with its
# summary.

set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

STAGES=(
	setup		# the kernels fetched; the debug kernel built beside
	lint		# checkpatch and shellcheck, each failing a planted error
	errors		# make's one line where users go wrong, on the host
	selftests	# the selftests built, static, 64-bit and -m32
	builds		# each stock kernel's module: W=1, sparse, modinfo
	debug		# the debug kernel: the same as a stock kernel
	deb		# the Debian package, installed with apt
	debug-gates	# KASAN and kmemleak fail planted faults
	pageref		# shared writes counted on the debug kernel: none
	kernels		# each stock kernel's guest judged: kernel:K, a stage each
	coverage	# zcdev's lines and branches the debug guests reached
	gates		# the judge and the kernel-log gate fail planted faults
	faults		# the page-count guard, folios and failed loads, planted
	kselftest	# kselftest's packaging, run by run_kselftest.sh on 7.x
	systemd		# make install-autoload: loaded at boot under systemd, 6.1
	dkms		# DKMS on 6.1, 6.12 and 7.x
	sign		# make sign under signature enforcement, on the debug kernel
	install		# make install on 6.1
	probe		# the build probes follow the kernel tree
	user-image	# make check IMAGE= KDIR=, with Debian's 7.x as a user's
	cross		# arm64 builds without the rep stosb path
	sid		# the early warning: sid's newest headers
)

[ -z "${CHECK_STAGES:-}" ] || read -ra STAGES <<<"$CHECK_STAGES"
KERNELS=("$@")
if [ ${#KERNELS[@]} -eq 0 ]; then
	KERNELS=(6.1 6.12 7 7-rt debug)
	[ -z "${ZCDEV_IMAGE:-}" ] || KERNELS=(user)
fi
# "kernels" stands for a stage per stock kernel's guest, kernel:K, that
# of the gates' kernel first (7, else the last one: lab/stages/lib.sh's
# gate_kernel), whose run the gates stage reads.
GATE_K='' guests=() stages=()
for k in "${KERNELS[@]}"; do
	[ "$k" = debug ] || [ "$GATE_K" = 7 ] || GATE_K=$k
done
for k in "${KERNELS[@]}"; do
	[ "$k" = debug ] || [ "$k" = "$GATE_K" ] || guests+=("kernel:$k")
done
[ -z "$GATE_K" ] || guests=("kernel:$GATE_K" "${guests[@]}")
for s in "${STAGES[@]}"; do
	if [ "$s" = kernels ]; then
		stages+=("${guests[@]}")
	else
		stages+=("$s")
	fi
done
STAGES=("${stages[@]}")
CHECK_SECS=${CHECK_SECS:-5100}
CHECK_DEADLINE=$(($(date +%s) + CHECK_SECS))
LANE_OUT=$PWD/out/check
LANE_KERNELS=${KERNELS[*]}
VERSION=$(git describe --tags --always --dirty 2>/dev/null || cat VERSION)
ZCDEV_VM_SLOTS=${ZCDEV_VM_SLOTS:-2}
export CHECK_SECS CHECK_DEADLINE LANE_OUT LANE_KERNELS VERSION ZCDEV_VM_SLOTS

pass=0 fail=0 skip=0 n=0

# tap VERDICT NAME [DETAIL-FILE]: one TAP line, details as comments.
tap() {
	n=$((n + 1))
	case $1 in
	ok)	pass=$((pass + 1)); echo "ok $n - $2" ;;
	skip)	skip=$((skip + 1)); echo "ok $n - $2 # SKIP" ;;
	*)	fail=$((fail + 1)); echo "not ok $n - $2"
		[ -n "${3:-}" ] && [ -s "$3" ] && tail -40 "$3" | sed 's/^/#   /' ;;
	esac
}

# needs STAGE: the stages whose results STAGE reads, besides setup's,
# which every stage reads.  A stage starts when those have ended (ended
# at all: a failed one leaves nothing, and the stage says so); one that
# this run does not have (CHECK_STAGES) counts as ended.
needs() {
	case $1 in
	setup)						;;
	debug)						echo selftests ;;
	kernel:*)					echo selftests builds ;;
	gates)						echo "kernel:$GATE_K" ;;
	faults | user-image | install | kselftest)	echo builds ;;
	debug-gates | pageref)				echo debug ;;
	coverage)					echo debug debug-gates pageref ;;
	*)						echo setup ;;
	esac
}

# job_of STAGE: the setup stage's background job that STAGE waits for.
job_of() {
	case $1 in
	debug | debug-gates | pageref | coverage | sign) echo debug-build ;;
	sid | systemd | deb) echo sid-deb ;;
	esac
}

# job_runs: whether one of the setup stage's background jobs runs.
job_runs() {
	local j
	for j in "$LANE_OUT"/*.started; do
		[ -e "$j" ] && [ ! -s "${j%.started}.rc" ] && return 0
	done
	return 1
}

# ended STAGE: whether STAGE ended, or is not in this run.
ended() {
	[ -s "$LANE_OUT/stage-$1.rc" ] || [[ " ${STAGES[*]} " != *" $1 "* ]]
}

# running: how many stages run.
running() {
	local s r=0
	for s in "${order[@]}"; do
		[ -s "$LANE_OUT/stage-$s.rc" ] || r=$((r + 1))
	done
	echo $r
}

# can_start STAGE: what it reads is there, and its job, if it has one,
# was not started or has ended.
can_start() {
	local d j
	for d in $(needs "$1"); do
		ended "$d" || return 1
	done
	j=$(job_of "$1")
	[ -z "$j" ] || [ ! -e "$LANE_OUT/$j.started" ] || [ -s "$LANE_OUT/$j.rc" ]
}

# start STAGE: lab/stages/STAGE.sh in the background, its output in
# out/check/stage-STAGE.log; its exit code, end and CPU time (its own and
# its guests', user and system, in seconds) in stage-STAGE.rc.
start() {
	local s=$1 cmd=("lab/stages/$1.sh")
	[[ $s != kernel:* ]] || cmd=(lab/stages/kernels.sh -g "${s#kernel:}")
	begun[$s]=$(date +%s)
	( nice -n "${CHECK_NICE:-10}" "${cmd[@]}" </dev/null >"$LANE_OUT/stage-$s.log" 2>&1
	  rc=$?
	  times >"$LANE_OUT/stage-$s.times"	# in a pipe, a subshell's: none
	  echo "$rc $(date +%s) $(awk 'END { for (i = 1; i <= 2; i++) {
		split($i, t, /[ms]/); c += 60 * t[1] + t[2] } printf "%.0f", c }' \
		"$LANE_OUT/stage-$s.times")" >"$LANE_OUT/stage-$s.rc" ) &
	order+=("$s")
}

# take LINE: a line of a stage's output: TAP lines numbered and counted,
# comments passed through.
take() {
	case $1 in
	"not ok - "*)		tap fail "${1#not ok - }"; failed=1 ;;
	"ok - "*"# SKIP"*)	tap skip "$(sed 's/ *# SKIP.*//' <<<"${1#ok - }")" ;;
	"ok - "*)		tap ok "${1#ok - }" ;;
	"#"*)			echo "$1" ;;
	esac
}

# show: the output of the first stage not yet shown, as far as it has
# come: its whole lines, and its last one when it has ended.  Then, if
# it has ended, its summary (a stage that exits non-zero without a "not
# ok" fails as well), and on to the next.
show() {
	local s log lines rc end cpu line

	while [ "$shown" -lt ${#order[@]} ]; do
		s=${order[$shown]} log=$LANE_OUT/stage-${order[$shown]}.log
		rc='' lines=\$
		[ -s "$LANE_OUT/stage-$s.rc" ] && read -r rc end cpu <"$LANE_OUT/stage-$s.rc"
		[ -n "$rc" ] || lines=$(wc -l <"$log")
		if [ "$lines" = \$ ] || [ "$lines" -gt "$seen" ]; then
			while IFS= read -r line; do
				take "$line"
			done < <(sed -n "$((seen + 1)),${lines}p" "$log")
			[ "$lines" = \$ ] || seen=$lines
		fi
		[ -n "$rc" ] || return 0
		[ "$rc" = 0 ] || [ -n "$failed" ] ||
			tap fail "$s: lab/stages/$s.sh ran to its end" "$log"
		times+=("$s $((begun[$s] - lane_start)) $((end - begun[$s])) ${cpu:-?}")
		shown=$((shown + 1)) seen=0 failed=''
	done
}

rm -rf "$LANE_OUT"
mkdir -p "$LANE_OUT"
echo "TAP version 13"
declare -A begun=()
todo=("${STAGES[@]}") order=() times=() shown=0 seen=0 failed='' idle=0
lane_start=$(date +%s)
while [ ${#todo[@]} -gt 0 ] || [ "$shown" -lt ${#order[@]} ]; do
	jobs=${CHECK_JOBS:-3}
	! job_runs || jobs=1
	for i in "${!todo[@]}"; do
		[ "$(running)" -lt "$jobs" ] || break
		can_start "${todo[$i]}" || continue
		start "${todo[$i]}"
		unset "todo[$i]"
	done
	todo=("${todo[@]}")
	show
	t=$SECONDS
	sleep 1
	[ ${#todo[@]} -eq 0 ] || [ "$(running)" -gt 0 ] || idle=$((idle + SECONDS - t))
done
echo "# each stage: when it started, its wall time and its CPU time (its guests included), in the order shown (s):"
printf '%s\n' "${times[@]}" | awk '{ printf "#   %-12s %5d %5d %5s\n", $1, $2, $3, $4; c += $4 }
	END { printf "#   %-12s %11s %5d\n", "all stages", "", c }'
echo "# no stage could run while background jobs ran: $idle s"
sed -n 's/^debug-kernel: .*\] \(cold build: .*\)/# the debug kernel'"'"'s \1/p' \
	"$LANE_OUT/debug-build.log" 2>/dev/null | tail -1
echo "# the lane took $SECONDS s"
echo "1..$n"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
