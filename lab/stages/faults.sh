#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What zcdev's budget of page references and its failed loads must hold,
# proven with builds that plant a fault (zcdev_fault.h), on the gates'
# kernel (the newest stock kernel: on the debug kernel KASAN's
# quarantine keeps tens of MiB of freed memory from MemFree):
#
# - lab/guest/faults.sh: with ZCDEV_FAULT=refs, every zero folio starts
#   256 references short of overflowing its count, and zcdev_refs must
#   pass with a clean kernel log; 50 loads of ZCDEV_FAULT=init, whose
#   second device fails to register, must lower MemFree by less than 8 MiB,
#   and 50 of init-leak, which keeps its folio as zcdev once did, must
#   fail that check;
# - ZCDEV_FAULT=refs-unguarded has the same count and no budget: with
#   panic_on_warn=0, zcdev_refs must overflow it, and the kernel-log gate
#   fail the run.

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

for f in refs refs-unguarded; do
	build "$k" "$G/$f-src" ZCDEV_FAULT=$f ||
		{ result fail "gate: a module with ZCDEV_FAULT=$f builds ($k)" "$G/$f-src.log"; exit 1; }
done
for f in init init-leak; do
	FAULT=$f build "$k" "$G/$f-src" ||
		{ result fail "gate: a module with lab/faults/$f.patch builds ($k)" "$G/$f-src.log"; exit 1; }
done

guest "$k" "$G" faults "$G/refs-src/zcdev.ko" lab/guest/faults.sh \
	-f "$G/init-src/zcdev.ko:/zcdev-init.ko" \
	-f "$G/init-leak-src/zcdev.ko:/zcdev-init-leak.ko"
cat "$G/faults.tap"
grep -q '^not ok' "$G/faults.tap" && failed=1

cat >"$G/unguarded.sh" <<-'EOT'
. /guest-lib
plan "$0"
step "insmod the ZCDEV_FAULT=refs-unguarded build" insmod /zcdev.ko
step "selftests: zcdev_refs ran to its end" selftests zcdev_refs zcdev_refs_unguarded
EOT
guest "$k" "$G" unguarded "$G/refs-unguarded-src/zcdev.ko" "$G/unguarded.sh" \
	-a panic_on_warn=0
what="gate: a folio count without zcdev's budget overflows, and the kernel log fails it ($k, panic_on_warn=0)"
if grep -q '^not ok - .*kernel log free' "$G/unguarded.tap" &&
   grep -q '^ok - .*the VM ran to its end' "$G/unguarded.tap"; then
	result ok "$what: $(grep -am1 'WARNING:' "$G/unguarded.console" | cut -c1-100)"
else
	result fail "$what" "$G/unguarded.tap"
fi
exit $failed
