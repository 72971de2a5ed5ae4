#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Each kernel's part of the lane:  lab/stages/kernels.sh [-b|-g] [KERNEL...]
# (default: every stock kernel the setup stage made ready).
#
# zcdev built with W=1 and with sparse (C=2) against the kernel's headers,
# neither with a warning, and modinfo's fields; then the kernel booted in
# QEMU with the module and the selftests (lab/guest/check.sh: the
# selftests, the peer suite, the fuzzers, the parameters, reloads), and
# the run judged (lab/vm/judge.sh).  Each kernel built is listed in
# LANE_OUT/built; its module is LANE_OUT/KERNEL/zcdev.ko.  With -b, the
# builds alone, with -g the guests alone, of the kernels built: the lane
# makes the stock kernels' builds in one stage (builds), so that the
# stages that need a module start early, and each one's guest in a stage
# of its own (kernel:K, lab/check.sh).  The fuzzers run
# longer on the debug kernel, where a second does a tenth of what it does
# on the others (CHECK_DEBUG_FUZZ, default 30 s); its reloads and
# stress-ng's operations are fewer and stress-ng's mappings smaller (a
# reload takes 17 s there), and its selftests run in two guests at once.
# On the debug kernel the module is a coverage build (GCOV_ARGS):
# lab/stages/coverage.sh reports what its guests ran.

set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh
[ -n "$LANE_OUT" ] || { echo "kernels: run by lab/check.sh" >&2; exit 2; }

# kbuild K: the module for kernel K, with W=1 and sparse, and modinfo
kbuild() {
	local k=$1 dir=$LANE_OUT/$1 cov=()
	# shellcheck disable=SC1090
	. "$LAB/kernels/$k/env"
	echo "# kernel $k: $KREL"
	mkdir -p "$dir"
	[ "$k" != debug ] || cov=("${GCOV_ARGS[@]}")
	if ! build "$k" "$dir/src" W=1 "${cov[@]}"; then
		result fail "$k: builds with W=1, no warnings" "$dir/src.log"
		return 1
	fi
	result ok "$k: builds with W=1, no warnings"
	cp "$dir/src/zcdev.ko" "$dir/zcdev.ko"
	lane_add built "$k"

	# clean, and it did check (on 7.x, sid's sparse: lab/vm/kmake.sh)
	if build "$k" "$dir/sparse" C=2 &&
	   [ "$(grep -cE '^  CHECK +.*zcdev_(main|pipe)\.c$' "$dir/sparse.log")" = 2 ]; then
		result ok "$k: sparse (C=2) checked zcdev_main.c and zcdev_pipe.c: clean"
	else
		result fail "$k: sparse (C=2) checked zcdev_main.c and zcdev_pipe.c: clean" "$dir/sparse.log"
	fi

	if modinfo "$dir/zcdev.ko" >"$dir/modinfo.log" 2>&1 &&
	   grep -q "^version: *$VERSION" "$dir/modinfo.log" &&
	   grep -q '^description: ' "$dir/modinfo.log" &&
	   grep -q '^license: *GPL' "$dir/modinfo.log" &&
	   [ "$(grep -c '^parm: .*(' "$dir/modinfo.log")" -ge 2 ]; then
		result ok "$k: modinfo has description, version, license, parameters"
	else
		result fail "$k: modinfo has description, version, license, parameters" "$dir/modinfo.log"
	fi
}

# kguest K: kernel K's guests, its module built, and their verdicts
kguest() {
	local k=$1 dir=$LANE_OUT/$1 fuzz=()
	# shellcheck disable=SC1090
	. "$LAB/kernels/$k/env"
	echo "# kernel $k: $KREL, its guest"
	# The newest stock kernel, 7, makes the full counts of the tests
	# whose strength is a count or a time (ZCDEV_SCALE, lab/selftests/
	# zcdev_util.h; the fuzzers' time, lab/guest/check.sh), the other
	# stock kernels a quarter.  On the debug kernel a system call costs
	# some ten times more: a sixteenth there, and the -m32 builds, the
	# zero-page runs, zcdev_guard, zcdev_splice and the programs that
	# need the debug kernel's fault injection (zcdev_inject) go to a
	# second guest beside the first (lab/guest/programs.sh), as one guest
	# took a quarter of an hour; the first has the stress-ng, fuzzer and
	# reload steps, and the two take about as long.  The stock devices'
	# variants, a reference never counted, run on the stock kernels only
	# (ZCDEV_REFS=0): the debug kernel is kernel 7's release.
	[ "$k" = 7 ] || fuzz=(-a ZCDEV_SCALE=4)
	if [ "$k" = debug ]; then
		second='_32$\| zeropage$\|^zcdev_guard$\|^zcdev_splice$'
		grep -v "$second" "$LANE_OUT/selftests/lane-list" >"$dir/lane-list"
		cat <(grep "$second" "$LANE_OUT/selftests/lane-list") \
			"$LANE_OUT/selftests/inject-list" >"$dir/lane-list-b"
		LABEL="$k (second guest)" guest "$k" "$dir" guest-b "$dir/zcdev.ko" \
			lab/guest/programs.sh -a "ZCDEV_LIST=/lane-list ZCDEV_SCALE=16 ZCDEV_REFS=0" \
			-f "$dir/lane-list-b:/lane-list" &
		fuzz=(-a "ZCDEV_FUZZ=${CHECK_DEBUG_FUZZ:-30} ZCDEV_RELOADS=3 STRESS_OPS=500 STRESS_MMAP=1M"
		      -a "ZCDEV_SCALE=16 ZCDEV_REFS=0"
		      -a ZCDEV_LIST=/lane-list -f "$dir/lane-list:/lane-list")
	fi
	guest "$k" "$dir" guest "$dir/zcdev.ko" lab/guest/check.sh "${fuzz[@]}"
	wait
	cat "$dir"/guest*.tap
	grep -q '^not ok' "$dir"/guest*.tap && failed=1
}

part=both
case ${1:-} in
-b) part=builds; shift ;;
-g) part=guests; shift ;;
esac
kernels=("$@")
if [ ${#kernels[@]} -eq 0 ]; then
	mapfile -t kernels < <(grep -vx debug "$LANE_OUT/ready")
fi
for k in "${kernels[@]}"; do
	in_time "$k" || continue
	if [ $part = guests ]; then
		lane_has built "$k" || continue	# the builds stage said why
	elif ! kbuild "$k"; then
		continue
	fi
	[ $part = builds ] || kguest "$k"
done
exit $failed
