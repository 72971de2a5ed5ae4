#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prove that the build probes (compat/probe.sh -> zcdev_probes.h) follow
# the kernel tree: one source directory built for kernel A, then for B,
# then for A again must each time have the probes, and the module, of a
# fresh build for that kernel; a second build for the same kernel must
# leave them alone.
#
#   lab/stages/probe.sh [A B]      (default: 6.1 7; lab kernels, kmake)
#
# Prints TAP lines.  Five module builds of two files, for kernels that
# lab/vm/setup.sh set up.  Every build is bounded by a timeout.  Logs:
# out/check/probe in the lane, else out/probe.

set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
WHAT=probes
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh
OUT=${LANE_OUT:-$PWD/out}/probe
A=${1:-6.1} B=${2:-7}
lane_has ready "$A" "$B" || exit 0
in_time "probes" || exit 1

krel() {	# the release a lab kernel's module must be built for
	(
		# shellcheck disable=SC1090
		. "$LAB/kernels/$1/env" && echo "$KREL"
	)
}

# kbuild K DIR LOG: build the module in DIR for kernel K, warning-free,
# for K's release.
kbuild() {
	timeout 300 nice lab/vm/kmake.sh "$1" "$2" W=1 >"$3" 2>&1 &&
	! grep -qE 'warning:|error:' "$3" &&
	[ "$(modinfo -F vermagic "$2/zcdev.ko" | cut -d' ' -f1)" = "$(krel "$1")" ]
}

# same_probes DIR K: DIR's probes are those of the fresh build for K.
same_probes() {
	cmp "$1/zcdev_probes.h" "$OUT/fresh-$2/zcdev_probes.h"
}

rm -rf "$OUT"
mkdir -p "$OUT"
start=$SECONDS

for k in "$A" "$B"; do
	make -s sources DEST="$OUT/fresh-$k" >/dev/null
	kbuild "$k" "$OUT/fresh-$k" "$OUT/fresh-$k.log" ||
		result fail "a fresh build for $k" "$OUT/fresh-$k.log"
done
# The check proves nothing if the two kernels probe alike.
if diff <(grep '^#define' "$OUT/fresh-$A/zcdev_probes.h") \
	<(grep '^#define' "$OUT/fresh-$B/zcdev_probes.h") >/dev/null; then
	result fail "kernels $A and $B differ in what they probe"
fi

tree=$OUT/tree
make -s sources DEST="$tree" >/dev/null
if ! kbuild "$A" "$tree" "$OUT/tree-1-$A.log" || ! same_probes "$tree" "$A"; then
	result fail "$A in a new tree" "$OUT/tree-1-$A.log"
fi

if kbuild "$B" "$tree" "$OUT/tree-2-$B.log" &&
   same_probes "$tree" "$B" >>"$OUT/tree-2-$B.log" 2>&1; then
	result ok "$A then $B in one tree gives $B's probes and module"
else
	result fail "$A then $B in one tree gives $B's probes and module" "$OUT/tree-2-$B.log"
fi

if kbuild "$A" "$tree" "$OUT/tree-3-$A.log" &&
   same_probes "$tree" "$A" >>"$OUT/tree-3-$A.log" 2>&1; then
	result ok "and back to $A gives $A's probes and module"
else
	result fail "and back to $A gives $A's probes and module" "$OUT/tree-3-$A.log"
fi

# Nothing changed: the probes run, but neither they nor the objects are
# written again.
before=$(stat -c %Y.%y "$tree/zcdev_probes.h" "$tree/zcdev_main.o")
if kbuild "$A" "$tree" "$OUT/tree-4-$A.log" &&
   [ "$(stat -c %Y.%y "$tree/zcdev_probes.h" "$tree/zcdev_main.o")" = "$before" ] &&
   ! grep -qE ' (UPD|CC) ' "$OUT/tree-4-$A.log"; then
	result ok "building for $A again rewrites neither probes nor objects"
else
	result fail "building for $A again rewrites neither probes nor objects" "$OUT/tree-4-$A.log"
fi

echo "# probes: $((SECONDS - start)) s"
exit $failed
