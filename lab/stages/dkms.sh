#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The DKMS stage of the lane:  lab/stages/dkms.sh [KERNEL_ID...]
# (default: 6.1, 6.12 and 7, those the lane has ready), one after another.
#
# Has DKMS add, build and install zcdev for one lab kernel against the
# lab's headers (make dkms-install), in a private DKMS tree: --dkmstree,
# --sourcetree and --installtree all point under $WORK, so the host's
# /usr/src, /var/lib/dkms and /lib/modules are never touched.  Then boots
# that kernel (lab/vm/run.sh) with the installed module tree, and nothing
# else of zcdev, as /lib/modules/KREL, and checks in the guest that
# "modprobe zcdev" loads the DKMS build (its version and srcversion), the
# devices appear and read zeros, and "modprobe -r zcdev" unloads it.
# Last, dkms remove (make dkms-remove) must leave the private tree empty.
#
# Prints TAP lines "ok - dkms: ..." / "not ok - dkms: ..." with the
# failing step's log as "#" lines, and exits non-zero when one failed.
# Logs: out/check/dkms-KERNEL_ID in the lane, else out/dkms-KERNEL_ID; the
# work tree is removed unless a step failed.
#
# The work tree is the run's own (its process id in the name): lanes of
# other checkouts may run beside this one on the same lab.
#
# Kernels whose headers live in a build root (BROOT: 7.x, built with
# gcc-14) have DKMS run inside that root, with its own dkms, the tree
# bind-mounted at /zcdev-src and the private DKMS tree under its /tmp.

# The checks are functions run through step(), which shellcheck cannot see.
# shellcheck disable=SC2317
set -euo pipefail
cd "$(dirname "$0")/../.."
TOP=$PWD
WHAT=dkms
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh

if [ $# -ne 1 ]; then
	[ $# -gt 0 ] || set -- 6.1 6.12 7
	rc=0
	for k; do
		lane_has ready "$k" || continue
		in_time "$k" || { rc=1; continue; }
		"$0" "$k" || rc=1
	done
	exit $rc
fi
k=$1
env=$LAB/kernels/$k/env
[ -s "$env" ] || { echo "dkms: kernel $k is not set up (lab/vm/setup.sh $k)" >&2; exit 2; }
# shellcheck disable=SC1090
. "$env"

OUT=${LANE_OUT:-$TOP/out}/dkms-$k
V=$(cat VERSION)
if [ -n "$BROOT" ]; then
	RWORK=/tmp/zcdev-dkms.$k.$$		# as DKMS sees it, in the root
	WORK=$BROOT$RWORK			# as the host sees it
	RTOP=/zcdev-src
else
	WORK=${TMPDIR:-/tmp}/zcdev-dkms.$k.$$
	RTOP=$TOP RWORK=$WORK
fi
MODDIR=$WORK/root/lib/modules
KO=$MODDIR/$KREL/updates/dkms/zcdev.ko
DKMS_TREES=(--dkmstree "$RWORK/dkms" --sourcetree "$RWORK/src"
	--installtree "$RWORK/root/lib/modules")
DKMS_MAKE=(make -s --no-print-directory -C "$RTOP" KDIR="$KDIR" KVER="$KREL"
	DKMS_VERSION="$V" DKMS_SOURCE_TREE="$RWORK/src"
	DKMS_FLAGS="--dkmstree $RWORK/dkms --installtree $RWORK/root/lib/modules --no-depmod --verbose")

# in_root CMD...: CMD on the host, or in the kernel's build root with the
# tree at /zcdev-src (lab/vm/in-root.sh).
in_root() {
	if [ -z "$BROOT" ]; then
		"$@"
	else
		lab/vm/in-root.sh -b "$TOP:/zcdev-src" "$BROOT" "$@"
	fi
}

rm -rf "$WORK" "$OUT"
mkdir -p "$WORK/dkms" "$WORK/src" "$MODDIR/$KREL" "$OUT"

installed() {
	local status
	in_root "${DKMS_MAKE[@]}" dkms-install &&
	status=$(in_root dkms status "${DKMS_TREES[@]}" "zcdev/$V" -k "$KREL") &&
	echo "dkms status: $status" &&
	[ "$status" = "zcdev/$V, $KREL, $(uname -m): installed" ] &&
	[ -f "$KO" ]
}
step "$k: dkms add, build, install zcdev/$V for $KREL against the lab's headers${BROOT:+ (in its build root)}" \
	"$OUT/dkms-install.log" installed
[ -f "$KO" ] || finish "the DKMS tree"

modinfo "$KO" >"$OUT/modinfo.txt" 2>&1 || true
srcversion=$(sed -n 's/^srcversion: *//p' "$OUT/modinfo.txt")
good_modinfo() {
	cat "$OUT/modinfo.txt"
	grep -qx "version: *$V" "$OUT/modinfo.txt" &&
	grep -qx "vermagic: *$KREL .*" "$OUT/modinfo.txt" &&
	grep -q '^description: ' "$OUT/modinfo.txt" &&
	grep -q '^license: *GPL' "$OUT/modinfo.txt" &&
	[ -n "$srcversion" ] &&
	[ "$(grep -c '^parm: *[a-z_]*:.' "$OUT/modinfo.txt")" -ge 2 ]
}
step "$k: modinfo of the DKMS build: version $V (PACKAGE_VERSION), description, license, parameter descriptions" \
	"$OUT/modinfo.log" good_modinfo

depmod_tree() {
	depmod -b "$WORK/root" "$KREL" &&
	grep -x 'updates/dkms/zcdev.ko:' "$MODDIR/$KREL/modules.dep"
}
step "$k: depmod -b lists updates/dkms/zcdev.ko" "$OUT/depmod.log" depmod_tree

# The guest: the DKMS tree as /lib/modules, and no other zcdev.ko.
modprobe_guest "$k" "$MODDIR" "/lib/modules/$KREL/updates/dkms/zcdev.ko" "$V" \
	"$srcversion" "$OUT/guest"

removed() {
	in_root "${DKMS_MAKE[@]}" dkms-remove &&
	[ -z "$(in_root dkms status "${DKMS_TREES[@]}" zcdev)" ] &&
	[ ! -e "$KO" ] && [ ! -e "$WORK/src/zcdev-$V" ] &&
	[ -z "$(find "$WORK/dkms" -name 'zcdev*.ko*')" ]
}
step "$k: dkms remove takes zcdev/$V out again" "$OUT/dkms-remove.log" removed

finish "the DKMS tree"
