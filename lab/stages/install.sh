#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The README's install commands, in the lane:  lab/stages/install.sh [KERNEL_ID]
# (default: 6.1, when the lane built it)
#
# In a copy of the module's sources, "make install install-autoload" with
# DESTDIR and the lab's KDIR of that kernel must put zcdev.ko under
# lib/modules/<release>/updates/, list it in modules.dep and write
# modules-load.d/zcdev.conf; that tree boots with its kernel
# (lab/guest/modprobe.sh), where modprobe loads the installed build;
# "make uninstall" must take all of it out again.  Kernels with a build
# root (7.x) are left to DKMS and the package lane: "make install" runs
# the host's depmod, which is what a user of that kernel runs too.
#
# Prints TAP lines "ok - install: ..." / "not ok - install: ..." and exits
# non-zero when one failed.  Logs: out/check/install-KERNEL_ID in the
# lane, else out/install-KERNEL_ID.

# The checks are functions run through step(), which shellcheck cannot see.
# shellcheck disable=SC2317
set -euo pipefail
cd "$(dirname "$0")/../.."
WHAT=install
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh

one_kernel install 6.1 "$@"
# shellcheck disable=SC1090
. "$LAB/kernels/$k/env"
[ -z "$BROOT" ] || { echo "install: kernel $k builds in a root (use DKMS)" >&2; exit 2; }
OUT=${LANE_OUT:-$PWD/out}/install-$k
SRC=$OUT/src DEST=$OUT/root
V=$(cat VERSION)
rm -rf "$OUT"
mkdir -p "$OUT"

KO=/lib/modules/$KREL/updates/zcdev.ko
installed() {
	make -s sources DEST="$SRC" && cp Makefile "$SRC/" &&
	make -C "$SRC" install install-autoload DESTDIR="$DEST" KDIR="$KDIR" &&
	find "$DEST" -type f | sort &&
	[ -f "$DEST$KO" ] &&
	grep -x 'updates/zcdev.ko:' "$DEST/lib/modules/$KREL/modules.dep" &&
	grep -x zcdev "$DEST/etc/modules-load.d/zcdev.conf" &&
	modinfo "$DEST$KO" | grep -E "^vermagic: *$KREL "
}
step "$k: make install install-autoload DESTDIR= KDIR=<its headers>: updates/zcdev.ko, modules.dep, modules-load.d/zcdev.conf" \
	"$OUT/install.log" installed

# The guest boots that tree; then, to prove its checks live, a doctored
# copy of it: a second zcdev.ko, a srcversion that is not the build's and
# a warning in the kernel log must each fail, and nothing else.
if [ -f "$DEST$KO" ]; then
	kov=$(modinfo -F version "$DEST$KO")
	modprobe_guest "$k" "$DEST/lib/modules" "$KO" "$kov" \
		"$(modinfo -F srcversion "$DEST$KO")" "$OUT/guest"

	P=$OUT/faulty
	mkdir -p "$P/lib/modules/$KREL/extra"
	cp -a "$DEST/lib/modules/." "$P/lib/modules/"
	cp "$DEST$KO" "$P/lib/modules/$KREL/extra/"
	(FAULT_LOG=1 modprobe_guest "$k" "$P/lib/modules" "$KO" "$kov" FAULTY \
		"$P/guest") >"$P.tap"
	if [ "$(grep -c '^not ok' "$P.tap")" = 3 ] &&
	   grep -q "^not ok - $WHAT: $k: the only zcdev.ko in the guest" "$P.tap" &&
	   grep -q "^not ok - $WHAT: $k: /sys/module/zcdev is that build" "$P.tap" &&
	   grep -q "^not ok - $WHAT: $k: kernel log free" "$P.tap"; then
		result ok "gate: the guest fails a second zcdev.ko, another srcversion and a kernel warning ($k)"
	else
		result fail "gate: the guest fails a second zcdev.ko, another srcversion and a kernel warning ($k)" \
			"$P.tap"
	fi
fi

uninstalled() {
	make -C "$SRC" uninstall DESTDIR="$DEST" KDIR="$KDIR" &&
	left=$(find "$DEST" -name 'zcdev*') &&
	echo "left: ${left:-nothing}" && [ -z "$left" ] &&
	! grep -q zcdev "$DEST/lib/modules/$KREL/modules.dep"
}
step "$k: make uninstall takes zcdev.ko, its modules.dep line and zcdev.conf out" \
	"$OUT/uninstall.log" uninstalled
echo "# install: version $V, logs in $OUT"
exit $failed
