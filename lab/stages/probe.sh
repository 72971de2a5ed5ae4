#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prove that the build probes (compat/probe.sh -> zcdev_probes.h) follow
# the kernel tree: one source directory built for kernel A, then for B,
# then for A again must each time have the probes, and the module, of a
# fresh build for that kernel; a second build for the same kernel must
# leave them alone.
#
#   scripts/probe-check [A B]      (default: 6.1 7; lab kernels, kmake)
#
# Prints TAP.  Five module builds of two files: about 1-2 minutes on the
# lab machine, cold or warm alike (the lab's kernels are set up by
# scripts/lab-setup).  Every build is bounded by a timeout.  Logs are in
# out/probe/.

set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
TOP=$PWD
LAB=${ZCDEV_LAB:-/var/cache/zcdev-lab}
OUT=$TOP/out/probe
A=${1:-6.1} B=${2:-7}
n=0 failed=0

tap() {		# tap ok|fail NAME [LOG]
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n - $2"
	else
		failed=1
		echo "not ok $n - $2"
		[ -n "${3:-}" ] && [ -s "$3" ] && tail -30 "$3" | sed 's/^/#   /'
	fi
}

krel() {	# the release a lab kernel's module must be built for
	(
		# shellcheck disable=SC1090
		. "$LAB/kernels/$1/env" && echo "$KREL"
	)
}

# kbuild K DIR LOG: build the module in DIR for kernel K, warning-free,
# for K's release.
kbuild() {
	timeout 300 nice scripts/kmake "$1" "$2" W=1 >"$3" 2>&1 &&
	! grep -qE 'warning:|error:' "$3" &&
	[ "$(modinfo -F vermagic "$2/zcdev.ko" | cut -d' ' -f1)" = "$(krel "$1")" ]
}

# same_probes DIR K: DIR's probes are those of the fresh build for K.
same_probes() {
	cmp "$1/zcdev_probes.h" "$OUT/fresh-$2/zcdev_probes.h"
}

rm -rf "$OUT"
mkdir -p "$OUT"
echo "TAP version 13"
start=$SECONDS

for k in "$A" "$B"; do
	make -s sources DEST="$OUT/fresh-$k" >/dev/null
	kbuild "$k" "$OUT/fresh-$k" "$OUT/fresh-$k.log" ||
		tap fail "probes: a fresh build for $k" "$OUT/fresh-$k.log"
done
# The check proves nothing if the two kernels probe alike.
if diff <(grep '^#define' "$OUT/fresh-$A/zcdev_probes.h") \
	<(grep '^#define' "$OUT/fresh-$B/zcdev_probes.h") >/dev/null; then
	tap fail "probes: kernels $A and $B differ in what they probe"
fi

tree=$OUT/tree
make -s sources DEST="$tree" >/dev/null
if ! kbuild "$A" "$tree" "$OUT/tree-1-$A.log" || ! same_probes "$tree" "$A"; then
	tap fail "probes: $A in a new tree" "$OUT/tree-1-$A.log"
fi

if kbuild "$B" "$tree" "$OUT/tree-2-$B.log" &&
   same_probes "$tree" "$B" >>"$OUT/tree-2-$B.log" 2>&1; then
	tap ok "probes: $A then $B in one tree gives $B's probes and module"
else
	tap fail "probes: $A then $B in one tree gives $B's probes and module" "$OUT/tree-2-$B.log"
fi

if kbuild "$A" "$tree" "$OUT/tree-3-$A.log" &&
   same_probes "$tree" "$A" >>"$OUT/tree-3-$A.log" 2>&1; then
	tap ok "probes: and back to $A gives $A's probes and module"
else
	tap fail "probes: and back to $A gives $A's probes and module" "$OUT/tree-3-$A.log"
fi

# Nothing changed: the probes run, but neither they nor the objects are
# written again.
before=$(stat -c %Y.%y "$tree/zcdev_probes.h" "$tree/zcdev_main.o")
if kbuild "$A" "$tree" "$OUT/tree-4-$A.log" &&
   [ "$(stat -c %Y.%y "$tree/zcdev_probes.h" "$tree/zcdev_main.o")" = "$before" ] &&
   ! grep -qE ' (UPD|CC) ' "$OUT/tree-4-$A.log"; then
	tap ok "probes: building for $A again rewrites neither probes nor objects"
else
	tap fail "probes: building for $A again rewrites neither probes nor objects" "$OUT/tree-4-$A.log"
fi

echo "# $((SECONDS - start)) s"
echo "1..$n"
exit $failed
