#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bring your own kernel ("make check IMAGE= KDIR="), proven with Debian's
# 7.x image and headers given as a user's would be: they must boot the
# module as kernel "user" (lab/vm/user-kernel.sh), and a copy of the tree
# whose .config lacks devtmpfs must be refused with a message.  Not run
# when the lane runs on a user's kernel itself.

set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh
lane_has built 7 && [ -n "$LANE_OUT" ] && [ -z "${ZCDEV_IMAGE:-}" ] || exit 0
in_time "user kernel" || exit 1
G=$LANE_OUT/gates
mkdir -p "$G"

(
	set -e
	# shellcheck disable=SC1090
	. "$LAB/kernels/7/env"
	lab/vm/user-kernel.sh "$VMLINUZ" "$BROOT$KDIR" "$BROOT"
	build user "$G/user-src"
	guest user "$G" user "$G/user-src/zcdev.ko" lab/guest/smoke.sh
) >"$G/user.log" 2>&1
what="IMAGE=, KDIR=: a kernel given as a user's (Debian's 7.x image and headers) runs the module"
if grep -q '^ok - .*the guest ran all' "$G/user.tap" 2>/dev/null &&
   ! grep -q '^not ok' "$G/user.tap"; then
	result ok "$what"
else
	result fail "$what" "$G/user.log"
fi

(
	# shellcheck disable=SC1090
	. "$LAB/kernels/7/env"
	fake=$G/user-nodevtmpfs
	mkdir -p "$fake/include/config"
	cp "$BROOT$KDIR/Makefile" "$BROOT$KDIR/Module.symvers" "$fake/"
	cp "$BROOT$KDIR/include/config/kernel.release" "$fake/include/config/"
	sed 's/^CONFIG_DEVTMPFS=y$/# CONFIG_DEVTMPFS is not set/' \
		"$BROOT$KDIR/.config" >"$fake/.config"
	ZCDEV_LAB=$G/user-lab lab/vm/user-kernel.sh "$VMLINUZ" "$fake"
) >"$G/user-refused.log" 2>&1
if [ $? -ne 0 ] && grep -q 'CONFIG_DEVTMPFS' "$G/user-refused.log"; then
	result ok "IMAGE=, KDIR=: a kernel without devtmpfs is refused: $(tail -1 "$G/user-refused.log")"
else
	result fail "IMAGE=, KDIR=: a kernel without devtmpfs is refused with a message" \
		"$G/user-refused.log"
fi
exit $failed
