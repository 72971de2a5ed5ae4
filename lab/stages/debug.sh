#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The debug kernel's part of the lane (KASAN, lockdep, kmemleak, ...:
# lab/vm/debug-kernel.sh, built in the background since the setup stage):
# waits for its build, then runs it as lab/stages/kernels.sh runs a stock
# kernel.

set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh
[ -e "${LANE_OUT:-}/debug-build.started" ] || exit 0

echo "# waiting for the debug kernel's build"
if ! wait_job debug-build; then
	result fail "lab: kernel debug built (or cached) and ready" "$LANE_OUT/debug-build.log"
	exit 1
fi
grep 'debug-kernel:' "$LANE_OUT/debug-build.log" | grep -v 'cold build:' | tail -3 | sed 's/^/#   /'
# how long its cold build took, and the load meanwhile
sed -n 's/^debug-kernel: .*\] cold build: /# the debug kernel'"'"'s cold build: /p' \
	"$LANE_OUT/debug-build.log" | tail -1
result ok "lab: kernel debug built (or cached) and ready"
lane_add ready debug
exec lab/stages/kernels.sh debug
