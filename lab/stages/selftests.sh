#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The selftests, built as the guests run them: static (the guests have no
# C library), 64-bit and -m32, without a warning, in LANE_OUT/selftests,
# with lane-list, the programs lab/guest/check.sh runs and how
# (lab/selftests/Makefile: emit_lane), and inject-list, those it runs on
# the debug kernel only (emit_inject).

set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh
OUT=${LANE_OUT:-$PWD/out}/selftests

built() {
	make -s -C lab/selftests STATIC=1 M32=1 OUTPUT="$OUT" &&
	make -s --no-print-directory -C lab/selftests M32=1 emit_lane >"$OUT/lane-list" &&
	make -s --no-print-directory -C lab/selftests emit_inject >"$OUT/inject-list" &&
	cat "$OUT/lane-list"
}
mkdir -p "$OUT"
if built >"$OUT.log" 2>&1 && ! grep -q 'warning:' "$OUT.log"; then
	result ok "selftests build, 64-bit and -m32 (static, no warnings)"
else
	result fail "selftests build, 64-bit and -m32 (static, no warnings)" "$OUT.log"
fi
exit $failed
