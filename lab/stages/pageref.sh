#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared writes, counted rather than timed (lab/guest/pageref.sh): on the
# debug kernel, whose page_ref tracepoints name the CPU and pfn of every
# page-reference write (CONFIG_DEBUG_PAGE_REF), zcdev_pageref counts per
# pipe round trip of two threads on two CPUs the writes on pages both
# CPUs wrote: none for zcdev's pipes, each judged; the sockets', the
# zero-page patch's loop's (lab/bench/zcref) and stock /dev/zero's as
# figures.  A build whose buffers share a folio count, as zcdev's first
# design had them (lab/faults/shared.patch), must fail the count.

set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh
lane_has built debug && [ -n "$LANE_OUT" ] || exit 0
in_time "pageref" || exit 1
G=$LANE_OUT/gates/pageref
mkdir -p "$G/zcref-src"
cp lab/bench/zcref/zcref.c lab/bench/zcref/Kbuild "$G/zcref-src/"
if ! FAULT=shared build debug "$G/shared-src"; then
	result fail "pageref: a module with lab/faults/shared.patch builds (debug)" "$G/shared-src.log"
	exit 1
fi
if ! lab/vm/kmake.sh debug "$G/zcref-src" >"$G/zcref-src.log" 2>&1; then
	result fail "pageref: zcref builds (debug)" "$G/zcref-src.log"
	exit 1
fi
guest debug "$G" pageref "$LANE_OUT/debug/zcdev.ko" lab/guest/pageref.sh \
	-f "$G/shared-src/zcdev.ko:/zcdev-shared.ko" \
	-f "$G/zcref-src/zcref.ko:/zcref.ko"
cat "$G/pageref.tap"
grep -q '^not ok' "$G/pageref.tap" && failed=1
exit $failed
