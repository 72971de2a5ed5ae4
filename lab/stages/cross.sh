#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Cross-build zcdev for arm64 with W=1, to prove that the module builds
# without the x86-64 rep stosb path (zcdev_clear.h) on an architecture
# that lacks it: AArch64 objects, whose read path refuses read_path=stosb.
#
#   lab/stages/cross.sh    prints TAP lines, exits non-zero on a failure
#
# The cross compiler lives in the lab's trixie build root
# (lab/vm/setup.sh cross): on the host, Debian's gcc-aarch64-linux-gnu
# conflicts with gcc-multilib, which the -m32 selftests need.  The kernel
# tree is the host's linux-source-6.1, unpacked into that root and
# prepared once (defconfig, modules_prepare), one tree per version of the
# package.  Every step is bounded by a timeout.  Logs: out/check/cross in
# the lane, else out/cross.

set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
WHAT=cross
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh
OUT=${LANE_OUT:-$PWD/out}/cross
ROOT=$LAB/trixie-root
MAKE=(nice make ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
# the tree, as the root sees it
TREE=/usr/src/zcdev-cross/arm64-defconfig-$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null)

# The prepared tree, made once under a lock: concurrent runs wait for
# the first, and a run killed half-way leaves only a .tmp directory.
prepare_tree() {
	local tmp=$TREE.tmp

	exec 8>"$LAB/.cross-arm64.lock"
	flock 8
	[ -f "$ROOT$TREE/.zcdev-prepared" ] && return
	rm -rf "$ROOT$tmp" "$ROOT$(dirname "$TREE")"
	mkdir -p "$ROOT$tmp"
	# Documentation is not needed to configure or prepare (its Kconfig is).
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$ROOT$tmp" --strip-components=1 \
		--exclude='linux-source-6.1/Documentation/[!K]*' &&
	lab/vm/in-root.sh "$ROOT" "${MAKE[@]}" -C "$tmp" -j"$(nproc)" defconfig modules_prepare &&
	touch "$ROOT$tmp/.zcdev-prepared" &&
	mv "$ROOT$tmp" "$ROOT$TREE"
}

# The module's objects (Kbuild's list) against the tree.  Not the .ko:
# modules_prepare makes no vmlinux symbol list, so modpost could only
# warn about every symbol the module uses.
build() {
	local objs

	objs=$(sed -n 's/^zcdev-y *:= *//p' Kbuild)
	rm -rf "$OUT/src"
	make -s sources DEST="$OUT/src" >/dev/null || return
	# shellcheck disable=SC2086
	lab/vm/in-root.sh -b "$OUT/src:/build" "$ROOT" "${MAKE[@]}" -C "$TREE" M=/build W=1 $objs
}

# What proves that the fallback was built: AArch64 objects, with the
# message that refuses read_path=stosb where there is no rep stosb.
no_stosb_path() {
	local o

	for o in $(sed -n 's/^zcdev-y *:= *//p' Kbuild); do
		readelf -h "$OUT/src/$o" | grep 'Machine: *AArch64' >/dev/null || return 1
	done
	grep -qa 'stosb needs an x86-64 CPU' "$OUT/src/zcdev_main.o"
}

# The steps run as "$0 --step NAME" under timeout(1), which bounds them.
if [ "${1:-}" = --step ]; then
	case $2 in
	prepare_tree)	prepare_tree ;;
	build)		build ;;
	esac
	exit
fi

in_time "cross" || exit 1
rm -rf "$OUT"
mkdir -p "$OUT"
if ! timeout 900 lab/vm/setup.sh cross >"$OUT/packages.log" 2>&1; then
	result fail "arm64: cross compiler installed in the trixie root" "$OUT/packages.log"
	exit 1
fi

start=$SECONDS
if ! timeout 2400 "$0" --step prepare_tree >"$OUT/prepare.log" 2>&1; then
	result fail "arm64: kernel tree prepared (defconfig, modules_prepare)" "$OUT/prepare.log"
	exit 1
fi
echo "# cross: tree $TREE ready in $((SECONDS - start)) s"

start=$SECONDS
if timeout 300 "$0" --step build >"$OUT/build.log" 2>&1 &&
   ! grep -E 'warning:|error:' "$OUT/build.log" >/dev/null && no_stosb_path; then
	result ok "arm64: builds without the rep stosb path (W=1)"
else
	result fail "arm64: builds without the rep stosb path (W=1)" "$OUT/build.log"
fi
echo "# cross: module built in $((SECONDS - start)) s"
exit $failed
