#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The debug kernel's instruments, proven live, with panic_on_warn=0 so
# that no panic helps: a planted use-after-free (lab/faults/uaf.patch)
# must fail the run through KASAN's report in the kernel log, a planted
# leak (lab/faults/leak.patch) through kmemleak's step alone
# (lab/guest/smoke.sh); and a build that hides its failures from its
# callers (lab/faults/inject.patch) must fail zcdev_inject, whose failed
# allocations only this kernel can make: its load test, and its splice
# test on both devices; and zcdev_worn's tests, on both devices, which
# that build's worn zeros (refs.patch's counts) let run.

set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh
lane_has built debug && [ -n "$LANE_OUT" ] || exit 0
in_time "debug gates" || exit 1
G=$LANE_OUT/gates
mkdir -p "$G"

# faulty FAULT WHAT [ARGS]: a smoke run of a module with FAULT planted
faulty() {
	local src=$G/$1-src
	if ! FAULT=$1 build debug "$src"; then
		result fail "gate: a module with a planted $2 builds (debug)" "$src.log"
		return 1
	fi
	guest debug "$G" "fault-$1" "$src/zcdev.ko" lab/guest/smoke.sh -a panic_on_warn=0 "${@:3}"
}

# KASAN's gate asks nothing of kmemleak, whose scans take half a minute
g=$G/fault-uaf
if faulty uaf "use-after-free" -a ZCDEV_KMEMLEAK=0; then
	if grep -q '^not ok - .*kernel log free' "$g.tap" &&
	   grep -q '^ok - .*the VM ran to its end' "$g.tap" &&
	   grep -aq 'BUG: KASAN: slab-use-after-free in zc_fault_uaf' "$g.console"; then
		result ok "gate: KASAN fails a planted use-after-free (debug, panic_on_warn=0)"
	else
		result fail "gate: KASAN fails a planted use-after-free (debug, panic_on_warn=0)" "$g.tap"
	fi
fi
g=$G/fault-leak
if faulty leak "leak"; then
	if grep -q "^not ok - .*kmemleak: nothing of zcdev's leaked" "$g.tap" &&
	   grep -q '^ok - .*kernel log free' "$g.tap"; then
		result ok "gate: kmemleak fails a planted leak (debug)"
	else
		result fail "gate: kmemleak fails a planted leak (debug)" "$g.tap"
	fi
fi

g=$G/fault-inject
what="gate: zcdev_inject and zcdev_worn fail a load, splices and moves that hide failed allocations (lab/faults/inject.patch, debug)"
if ! FAULT=inject build debug "$g-src"; then
	result fail "gate: a module with planted unseen failures builds (debug)" "$g-src.log"
else
	printf '%s\n' zcdev_inject zcdev_worn >"$g.list"
	guest debug "$G" fault-inject "$g-src/zcdev.ko" lab/guest/programs.sh \
		-a "ZCDEV_LIST=/inject-list ZCDEV_KMEMLEAK=0" -f "$g.list:/inject-list"
	n=$(grep -cE '^not ok - debug: (zcdev_inject\.(load|splice\.zczero|splice\.zcfull)\.each_allocation_fails|zcdev_worn\.worn\.(zczero|zcfull)\.(each_allocation_of_a_move_fails|folios_fail))$' "$g.tap")
	if [ "$n" = 7 ] && grep -q '^ok - .*the VM ran to its end' "$g.tap"; then
		result ok "$what: 7 of 7 tests"
	else
		result fail "$what: $n of 7 tests" "$g.tap"
	fi
fi
exit $failed
