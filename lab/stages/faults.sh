#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What zcdev's guard of page counts, its folios and its failed loads must
# hold, proven with builds that plant a fault (lab/faults/NAME.patch), on
# the gates' kernel (the newest stock kernel: on the debug kernel KASAN's
# quarantine keeps tens of MiB of freed memory from MemFree):
#
# - lab/guest/faults.sh: 50 loads of "init", whose second device fails
#   to register, lower MemFree by less than 8 MiB, and 50 of "init-leak"
#   fail that check; with "refs", every folio 256 references short of
#   the guard, zcdev_refs's splices, tees and sends all work and zcdev_pin
#   pins no more than 32 MiB in 20 s of trying; with "nofolio", whose
#   first folio allocations fail, zcdev_fallback sees the zero page and
#   then large buffers again; the kernel log stays clean throughout;
# - "refs-unguarded", 256 short of overflow and no guard: with
#   panic_on_warn=0, zcdev_refs overflows the count and the kernel-log
#   gate fails the run;
# - "dirty-zero", a byte of each folio written: the check when a folio
#   leaves service WARNs at rmmod, and the kernel-log gate fails the run;
# - "budget", a page budget charged on every confirm as zcdev once did:
#   zcdev_guard's attacks, which consume nothing, must make every one of
#   its tests fail.

set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh
[ -s "${LANE_OUT:-}/built" ] || exit 0
k=$(gate_kernel)
[ -n "$k" ] || exit 0
in_time "faults" || exit 1
G=$LANE_OUT/gates/faults
mkdir -p "$G"

for f in refs init init-leak nofolio refs-unguarded dirty-zero budget; do
	FAULT=$f build "$k" "$G/$f-src" ||
		{ result fail "gate: a module with lab/faults/$f.patch builds ($k)" "$G/$f-src.log"; exit 1; }
done

guest "$k" "$G" faults "$G/refs-src/zcdev.ko" lab/guest/faults.sh \
	-f "$G/init-src/zcdev.ko:/zcdev-init.ko" \
	-f "$G/init-leak-src/zcdev.ko:/zcdev-init-leak.ko" \
	-f "$G/nofolio-src/zcdev.ko:/zcdev-nofolio.ko"
cat "$G/faults.tap"
grep -q '^not ok' "$G/faults.tap" && failed=1

# log_gate FAULT PROG WHAT: the FAULT build loaded, the selftest PROG run
# (none: load and unload only), with panic_on_warn=0: the guest must run
# to its end and the kernel-log gate fail it.
log_gate() {
	local f=$1 prog=$2 what=$3
	{
		echo ". /guest-lib"
		echo "plan \"\$0\""
		echo "step \"insmod the $f build\" insmod /zcdev.ko"
		[ "$prog" = none ] ||
			echo "step \"selftests: $prog ran to its end\" selftests $prog ${prog}_$f"
		echo "step \"rmmod\" unload"
	} >"$G/$f.sh"
	guest "$k" "$G" "$f" "$G/$f-src/zcdev.ko" "$G/$f.sh" -a panic_on_warn=0
	if grep -q '^not ok - .*kernel log free' "$G/$f.tap" &&
	   grep -q '^ok - .*the VM ran to its end' "$G/$f.tap"; then
		result ok "$what ($k, panic_on_warn=0): $(grep -am1 'WARNING:' "$G/$f.console" | cut -c1-100)"
	else
		result fail "$what ($k, panic_on_warn=0)" "$G/$f.tap"
	fi
}

log_gate refs-unguarded zcdev_refs \
	"gate: a folio count without zcdev's guard overflows, and the kernel log fails it"
log_gate dirty-zero none \
	"gate: a zero folio written to WARNs when it leaves service, and the kernel log fails it"

# The old budget: every test of zcdev's devices in zcdev_guard must fail.
cat >"$G/budget.sh" <<-'EOT'
insmod /zcdev.ko || exit 1
ZCDEV_KO=/zcdev.ko /t/zcdev_guard
echo "zcdev_guard: exit $?"
EOT
lab/vm/run.sh -k "$k" -t 1200 -f "$G/budget-src/zcdev.ko:/zcdev.ko" \
	-f "$LANE_OUT/selftests:/t" "$G/budget.sh" >"$G/budget.console" 2>&1
c=$G/budget.console
bad=$(grep -cE '^not ok [0-9]+ guard\.zc(zero|full)\.' "$c")
good=$(grep -cE '^ok [0-9]+ guard\.zc(zero|full)\.' "$c")
what="gate: a budget charged per confirm fails every zcdev_guard test ($k)"
if [ "$bad" -gt 0 ] && [ "$good" -eq 0 ] && grep -qx 'zcdev_guard: exit 1' "$c"; then
	result ok "$what: $bad of $bad failed"
else
	result fail "$what: $bad failed, $good passed" "$c"
fi
exit $failed
