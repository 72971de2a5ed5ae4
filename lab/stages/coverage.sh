#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Coverage of zcdev's own code, on the debug kernel (CONFIG_GCOV_KERNEL).
# The debug stage's module is a coverage build (GCOV_ARGS in
# lab/stages/lib.sh: the lab's builds only, never the product's), and
# every guest of the debug kernel leaves gcov's data (lab/vm/run.sh -o),
# which the kernel keeps across the module's unloads and reloads: the
# debug stage's guest (selftests, stress-ng, trinity, zcdev_fuzz, the
# parameters, the lifetime tests and the reloads) and pageref's probes.
# lab/vm/gcov-report.sh adds them up: one TAP line with the totals of
# zcdev_main.c and zcdev_pipe.c, a comment per function, and
# out/check/coverage/coverage.md with every line no guest reached.
#
# The guard and the re-homing act only once a folio's page count reaches
# 2^30, which no test can take for real (some 50 GB of socket memory):
# the faults stage plants a start 256 short of it (lab/faults/refs.patch)
# and runs zcdev_refs on a stock kernel.  Here that fault, in a coverage
# build, runs zcdev_refs on the debug kernel too, and zcdev_worn (the
# replacement of a worn zero failing, which needs both the worn zeros and
# the debug kernel's fault injection), and its data counts for
# the lines that the patch left as they are (gcov-report.sh's
# GCDA@BUILD).
#
# The instrument, proven live: the shortest guest (lab/guest/smoke.sh)
# runs that build, then one with lab/faults/coverage-dead.patch (a
# function that nothing calls): the second's zcdev_main.c line figure must
# be lower, and its report must name the function, none of its lines run.
# That patch also moves every line of both files: its run, mapped back,
# must reach the lines the first run reached.

set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
WHAT=coverage
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh
lane_has built debug && [ -n "$LANE_OUT" ] || exit 0
in_time coverage || exit 1
G=$LANE_OUT/coverage
BUILD=$LANE_OUT/debug/src
mkdir -p "$G"

# figure REPORT FILE: "N% lines, M% branches" of FILE in REPORT
figure() {
	awk -v f="$2" '$1 == "file" && $2 == f {
		printf "%.1f%% lines, %.1f%% branches", $4 ? 100 * $3 / $4 : 0, $6 ? 100 * $5 / $6 : 0 }' "$1"
}

# reached REPORT: its lines' totals and the lines it did not reach
reached() {
	awk '$1 == "file" { print $1, $2, $3, $4 } $1 == "unreached" { print $2, $3 }' "$1"
}

# --- the guests of this stage ----------------------------------------------
# smoke NAME BUILD: the smoke guest with BUILD's module, and its report
smoke() {
	guest debug "$G" "$1" "$2/zcdev.ko" lab/guest/smoke.sh
	sed "s/^\(\(not \)\{0,1\}ok - \)debug: /\1coverage: $1: /" "$G/$1.tap"
	! grep -q '^not ok' "$G/$1.tap" &&
	lab/vm/gcov-report.sh debug "$2" "$G/$1.gcda" >"$G/$1.report" 2>"$G/$1.log"
}

refs=$G/refs-src
if ! FAULT=refs build debug "$refs" "${GCOV_ARGS[@]}"; then
	result fail "a coverage build with lab/faults/refs.patch builds (debug)" "$refs.log"
	exit 1
fi
cat >"$G/refs.sh" <<'EOT'
. /guest-lib
plan "$0"
step "insmod the refs build: counts 256 short of the guard" insmod /zcdev.ko
step "selftests: zcdev_refs, counts 256 short of the guard, ran to its end" \
	selftests zcdev_refs zcdev_refs_fault
step "selftests: zcdev_worn, a worn zero's replacement failing, ran to its end" \
	selftests zcdev_worn
step "rmmod" unload
EOT
LABEL="coverage: refs" guest debug "$G" refs "$refs/zcdev.ko" "$G/refs.sh" \
	-a "ZCDEV_SCALE=16 ZCDEV_REFS=0 ZCDEV_KMEMLEAK=0" &

dead=$G/dead-src
if ! { make -s sources DEST="$dead" >/dev/null &&
       patch -p1 -d "$dead" <lab/faults/coverage-dead.patch >"$dead.log" 2>&1 &&
       lab/vm/kmake.sh debug "$dead" ZCDEV_VERSION="$VERSION-coverage-dead" \
		"${GCOV_ARGS[@]}" >>"$dead.log" 2>&1 &&
       ! grep -qE 'warning:|error:' "$dead.log"; }; then
	result fail "gate: a coverage build with lab/faults/coverage-dead.patch builds (debug)" "$dead.log"
	exit 1
fi
smoked=0
smoke smoke "$BUILD" && smoke smoke-dead "$dead" && smoked=1
wait
cat "$G/refs.tap"
grep -q '^not ok' "$G/refs.tap" && failed=1

# --- the lane's figures ---------------------------------------------------
runs=()
while IFS= read -r d; do
	[ -z "$(find "$d" -name 'zcdev_main.gcda')" ] || runs+=("$d")
done < <(find "$LANE_OUT" -path "$G" -prune -o -type d -name '*.gcda' -print | sort)
if [ ${#runs[@]} -eq 0 ]; then
	result fail "no guest of the debug kernel left gcov data of zcdev"
elif lab/vm/gcov-report.sh -m "$G/coverage.md" debug "$BUILD" "${runs[@]}" "$G/refs.gcda@$refs" \
	>"$G/report.txt" 2>"$G/report.log"; then
	echo "# coverage: gcov data of ${#runs[@]} guest runs: ${runs[*]#"$LANE_OUT"/}; and of refs.patch's build: coverage/refs.gcda"
	result ok "zcdev_main.c $(figure "$G/report.txt" zcdev_main.c); zcdev_pipe.c $(figure "$G/report.txt" zcdev_pipe.c)"
	awk '$1 == "function" { printf "#   %s %s: %d/%d lines, %d/%d branches\n", $2, $3, $4, $5, $6, $7 }' \
		"$G/report.txt"
	echo "#   lines no guest reached: $(grep -c '^unreached ' "$G/report.txt"); lines run with a branch never taken: $(grep -c '^untaken ' "$G/report.txt") (out/check/coverage/coverage.md)"
else
	result fail "gcov's report of the debug guests' runs" "$G/report.log"
fi

# --- the instrument, proven live ------------------------------------------
if [ "$smoked" = 1 ]; then
	read -r h0 n0 < <(awk '$1 == "file" && $2 == "zcdev_main.c" { print $3, $4 }' "$G/smoke.report")
	read -r h1 n1 < <(awk '$1 == "file" && $2 == "zcdev_main.c" { print $3, $4 }' "$G/smoke-dead.report")
	fn=$(awk '$1 == "function" && $3 == "zc_coverage_dead" && $4 == 0 && $5 > 0 { print $4 "/" $5 }' \
		"$G/smoke-dead.report")
	if [ -n "$fn" ] && [ $((h1 * n0)) -lt $((h0 * n1)) ] &&
	   grep -q '^unreached zcdev_main.c [0-9]* zc_coverage_dead ' "$G/smoke-dead.report"; then
		result ok "gate: a function nothing calls (lab/faults/coverage-dead.patch) lowers zcdev_main.c from $(figure "$G/smoke.report" zcdev_main.c) to $(figure "$G/smoke-dead.report" zcdev_main.c) and is named: zc_coverage_dead, $fn lines run"
	else
		result fail "gate: a function nothing calls (lab/faults/coverage-dead.patch) lowers zcdev_main.c's line figure and is named" \
			"$G/smoke-dead.report"
	fi
	# The same build's run alone, mapped back (an empty run of the
	# product's build gives its lines): the lines it reached must be the
	# product's smoke run's, though the patch moved every one of them.
	mkdir -p "$G/none.gcda"
	what="gate: coverage-dead.patch's smoke run, every line moved, mapped back to the product's lines reaches the lines the product's smoke run reaches"
	if lab/vm/gcov-report.sh debug "$BUILD" "$G/none.gcda" "$G/smoke-dead.gcda@$dead" \
		>"$G/smoke-mapped.report" 2>"$G/smoke-mapped.log" &&
	   diff <(reached "$G/smoke.report") <(reached "$G/smoke-mapped.report") >"$G/smoke-mapped.diff"; then
		result ok "$what: zcdev_main.c $(figure "$G/smoke-mapped.report" zcdev_main.c), zcdev_pipe.c $(figure "$G/smoke-mapped.report" zcdev_pipe.c)"
	else
		result fail "$what" "$G/smoke-mapped.diff"
	fi
else
	result fail "gate: the smoke guests of the coverage builds ran, and gcov reported them" \
		"$G/smoke-dead.log"
fi
exit $failed
