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
# The lane is the stages below, run in order: each is lab/stages/NAME.sh,
# says what it proves at its top, and prints TAP lines without numbers
# ("ok - ...", "not ok - ...", "# ..."), which this script numbers and
# counts; a stage that exits non-zero without a "not ok" fails as well.
# Its whole output is in out/check/stage-NAME.log.  To add a stage, write
# lab/stages/NAME.sh (lab/stages/lib.sh has what they share) and name it
# in STAGES.  CHECK_STAGES="setup kernels ..." runs only those (setup
# first: the others need what it leaves).  It closes with "N passed, N
# failed, N skipped".
#
# The debug kernel (lab/vm/debug-kernel.sh) and the roots of the early
# warning, the package stage and the systemd stage are made in the
# background, at nice 19, while the stock kernels run
# (lab/stages/setup.sh).  The stages are run in their order, except that
# one which waits for such a job (job_of) is put off while it runs and
# the next stage that waits for nothing goes first: the foreground waits
# only when nothing else is left.  At the end, each stage's wall time,
# how long the foreground waited, and the total.
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
	kernels		# each stock kernel: W=1, sparse, modinfo, its guest judged
	gates		# the judge and the kernel-log gate fail planted faults
	faults		# the page-count guard, folios and failed loads, planted
	cross		# arm64 builds without the rep stosb path
	probe		# the build probes follow the kernel tree
	debug		# the debug kernel: the same as a stock kernel
	debug-gates	# KASAN and kmemleak fail planted faults
	pageref		# shared writes counted on the debug kernel: none
	coverage	# zcdev's lines and branches the debug guests reached
	user-image	# make check IMAGE= KDIR=, with Debian's 7.x as a user's
	sid		# the early warning: sid's newest headers
	dkms		# DKMS on 6.1, 6.12 and 7.x
	install		# make install on 6.1
	systemd		# make install-autoload: loaded at boot under systemd, 6.1
	kselftest	# kselftest's packaging, run by run_kselftest.sh on 7.x
	deb		# the Debian package, installed with apt
	sign		# make sign under signature enforcement, on the debug kernel
)

[ -z "${CHECK_STAGES:-}" ] || read -ra STAGES <<<"$CHECK_STAGES"
KERNELS=("$@")
if [ ${#KERNELS[@]} -eq 0 ]; then
	KERNELS=(6.1 6.12 7 7-rt debug)
	[ -z "${ZCDEV_IMAGE:-}" ] || KERNELS=(user)
fi
CHECK_SECS=${CHECK_SECS:-5100}
CHECK_DEADLINE=$(($(date +%s) + CHECK_SECS))
LANE_OUT=$PWD/out/check
LANE_KERNELS=${KERNELS[*]}
VERSION=$(git describe --tags --always --dirty 2>/dev/null || cat VERSION)
export CHECK_SECS CHECK_DEADLINE LANE_OUT LANE_KERNELS VERSION

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

# stage NAME: run lab/stages/NAME.sh, count its TAP lines and pass its
# comments through as they come.
stage() {
	local s=$1 line rc=0 failed='' log=$LANE_OUT/stage-$1.log
	while IFS= read -r line; do
		case $line in
		"not ok - "*)		tap fail "${line#not ok - }"; failed=1 ;;
		"ok - "*"# SKIP"*)	tap skip "$(sed 's/ *# SKIP.*//' <<<"${line#ok - }")" ;;
		"ok - "*)		tap ok "${line#ok - }" ;;
		"==stage rc="*)		rc=${line#==stage rc=} ;;
		"#"*)			echo "$line" ;;
		esac
	done < <("lab/stages/$s.sh" 2>&1 </dev/null | tee "$log"; echo "==stage rc=${PIPESTATUS[0]}")
	[ "$rc" = 0 ] || [ -n "$failed" ] || tap fail "$s: lab/stages/$s.sh ran to its end" "$log"
}

# job_of STAGE: the setup stage's background job that STAGE waits for.
job_of() {
	case $1 in
	debug | debug-gates | pageref | coverage | sign) echo debug-build ;;
	sid | systemd | deb) echo sid-deb ;;
	esac
}

# waits STAGE: whether STAGE would wait: its job was started and runs.
waits() {
	local j
	j=$(job_of "$1")
	[ -n "$j" ] && [ -e "$LANE_OUT/$j.started" ] && [ ! -s "$LANE_OUT/$j.rc" ]
}

# first_ready: the index in todo of the first stage that waits for
# nothing, or -1.
first_ready() {
	local i
	for i in "${!todo[@]}"; do
		waits "${todo[$i]}" || { echo "$i"; return; }
	done
	echo -1
}

rm -rf "$LANE_OUT"
mkdir -p "$LANE_OUT"
echo "TAP version 13"
todo=("${STAGES[@]}") times=() idle=0
while [ ${#todo[@]} -gt 0 ]; do
	next=$(first_ready)
	if [ "$next" -lt 0 ]; then
		echo "# nothing left but ${todo[*]}, which wait for background jobs: waiting"
		t=$SECONDS
		until [ "$(first_ready)" -ge 0 ]; do
			sleep 5
		done
		idle=$((idle + SECONDS - t))
		continue
	fi
	s=${todo[$next]} t=$SECONDS
	stage "$s"
	times+=("$s $((SECONDS - t))")
	unset "todo[$next]"
	todo=("${todo[@]}")
done
echo "# wall time of each stage, in the order they ran (s):"
printf '%s\n' "${times[@]}" | awk '{ printf "#   %-12s %5d\n", $1, $2 }'
echo "# the foreground waited for background jobs: $idle s"
sed -n 's/^debug-kernel: .*\] \(cold build: .*\)/# the debug kernel'"'"'s \1/p' \
	"$LANE_OUT/debug-build.log" 2>/dev/null | tail -1
echo "# the lane took $SECONDS s"
echo "1..$n"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
