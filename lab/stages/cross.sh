#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Cross-build zcdev for arm64 with W=1, to prove that the module builds
# without the x86-64 rep stosb path (zcdev_clear.h) on an architecture
# that lacks it.  The kernel tree is Debian's linux-source-6.1, prepared
# once (defconfig + modules_prepare) and kept in the lab cache.
#
#   scripts/cross-check            prints TAP, exits non-zero on a failure
#
# Measured on the lab machine (2 cores): cold, with the cross compiler to
# install and the tree to extract and prepare, about 30 s; warm, 3-10 s.
# Every step is bounded by a timeout.  Logs are in out/cross/.

set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
LAB=${ZCDEV_LAB:-/var/cache/zcdev-lab}
OUT=$TOP/out/cross
ARCH=arm64
CROSS=aarch64-linux-gnu-
PKGS="gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu flex bison bc libssl-dev make xz-utils linux-source-6.1"
export DEBIAN_FRONTEND=noninteractive

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

packages() {
	local missing=() p
	for p in $PKGS; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# The prepared tree, made once under a lock: concurrent runs wait for
# the first, and a run killed half-way leaves only a .tmp directory.
prepare_tree() {
	local tarball=/usr/src/linux-source-6.1.tar.xz tmp

	exec 8>"$LAB/.cross-$ARCH.lock"
	flock 8
	[ -f "$TREE/.zcdev-prepared" ] && return
	tmp=$TREE.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp"
	# Documentation is not needed to configure or prepare (its Kconfig is).
	tar -xJf "$tarball" -C "$tmp" --strip-components=1 \
		--exclude='linux-source-6.1/Documentation/[!K]*'
	nice make -C "$tmp" ARCH="$ARCH" CROSS_COMPILE="$CROSS" -j"$(nproc)" \
		defconfig modules_prepare
	touch "$tmp/.zcdev-prepared"
	rm -rf "$TREE"
	mv "$tmp" "$TREE"
}

# The module's objects (Kbuild's list) against the tree.  Not the .ko:
# modules_prepare makes no vmlinux symbol list, so modpost could only
# warn about every symbol the module uses.
build() {
	local objs

	rm -rf "$OUT/src"
	make -s sources DEST="$OUT/src" >/dev/null
	objs=$(sed -n 's/^zcdev-y *:= *//p' Kbuild)
	[ -n "$objs" ] || { echo "cross-check: no zcdev-y in Kbuild" >&2; return 1; }
	# shellcheck disable=SC2086
	nice make -C "$TREE" ARCH="$ARCH" CROSS_COMPILE="$CROSS" M="$OUT/src" W=1 $objs
}

# What proves that the fallback was built: AArch64 objects, with the
# message that refuses read_path=stosb where there is no rep stosb.
no_stosb_path() {
	local o

	# shellcheck disable=SC2013
	for o in $(sed -n 's/^zcdev-y *:= *//p' Kbuild); do
		${CROSS}readelf -h "$OUT/src/$o" | grep -q 'Machine: *AArch64' || return 1
	done
	grep -qa 'stosb needs an x86-64 CPU' "$OUT/src/zcdev_main.o"
}

# One tree per version of the source package: an upgrade prepares anew.
# (Set before the package is installed, so only if it is.)
TREE=$LAB/$ARCH-defconfig-$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || true)

# The steps run as "$0 --step NAME" under timeout(1), which bounds them.
if [ "${1:-}" = --step ]; then
	case $2 in
	packages)	packages ;;
	prepare_tree)	prepare_tree ;;
	build)		build ;;
	esac
	exit
fi

rm -rf "$OUT"
mkdir -p "$OUT" "$LAB"
echo "TAP version 13"
if ! timeout 600 "$0" --step packages \
		>"$OUT/packages.log" 2>&1; then
	tap fail "$ARCH: cross compiler installed" "$OUT/packages.log"
	echo "1..$n"
	exit 1
fi

start=$SECONDS
if ! timeout 2400 "$0" --step prepare_tree >"$OUT/prepare.log" 2>&1; then
	tap fail "$ARCH: kernel tree prepared (defconfig, modules_prepare)" "$OUT/prepare.log"
	echo "1..$n"
	exit 1
fi
echo "# tree $TREE ready in $((SECONDS - start)) s"

start=$SECONDS
if timeout 300 "$0" --step build \
		>"$OUT/build.log" 2>&1 &&
   ! grep -E 'warning:|error:' "$OUT/build.log" >/dev/null && no_stosb_path; then
	tap ok "$ARCH: builds without the rep stosb path (W=1)"
else
	tap fail "$ARCH: builds without the rep stosb path (W=1)" "$OUT/build.log"
fi
echo "# module built in $((SECONDS - start)) s"
echo "1..$n"
exit $failed
