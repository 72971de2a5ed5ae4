#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Loading at boot, under systemd:  lab/stages/systemd.sh [KERNEL_ID]
# (default: 6.1, when the lane fetched it)
#
# The README's "make install install-autoload", with DESTDIR a tree laid
# over the lab's bookworm root with systemd, udev and kmod (lab/vm/setup.sh
# systemd, made in the background since the setup stage), boots with the
# lab's kernel KERNEL_ID (6.1 or 6.12: built with the host's make): the
# root and that tree are packed into an initramfs whose init is systemd
# itself (lab/vm/run.sh -I, rdinit=/lib/systemd/systemd), so that no disk
# driver is needed, and the kernel's own modules are not in it (the lab
# has none).  A unit of the lab's, after multi-user.target, runs the
# checks (lab/guest/systemd.sh) and powers off.  At that boot:
#
#   - systemd-modules-load loaded zcdev, the installed build (version,
#     srcversion);
#   - /dev/zczero and /dev/zcfull existed when a unit ordered
#     After=systemd-modules-load.service ran;
#   - they read zeros;
#   - nothing of zcdev's, nor systemd-modules-load.service, is in
#     "systemctl --failed".
#
# Then "make uninstall" and another boot: zcdev is not loaded, no zcdev.ko
# and no modules-load.d entry is left, nothing failed.  The gate: the
# installed tree with a modules-load.d entry of a wrong name must fail the
# first boot's checks, with systemd-modules-load's message shown.
#
# Prints TAP lines "ok - systemd: ..." / "not ok - systemd: ..." and exits
# non-zero when one failed.  Logs: out/check/systemd-KERNEL_ID in the
# lane, else out/systemd-KERNEL_ID.

# The checks are functions run through step(), which shellcheck cannot see.
# shellcheck disable=SC2317
set -euo pipefail
cd "$(dirname "$0")/../.."
WHAT=systemd
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh

NEEDS=ready kernel_stage -h systemd 6.1 "$@"
# in the lane, made already: this waits for the setup stage's job
lab/vm/setup.sh systemd >"$OUT/lab-setup.log" 2>&1 ||
	{ tail -20 "$OUT/lab-setup.log" >&2; exit 2; }
ROOT=$LAB/systemd-root

# --- what the lab adds to the root ---------------------------------------
LABTREE=$OUT/lab
U=$LABTREE/etc/systemd/system
mkdir -p "$U/multi-user.target.wants" "$U/sysinit.target.wants" "$LABTREE/usr/lib/lab"
cp lab/guest/lib.sh "$LABTREE/usr/lib/lab/guest-lib"
# no logins on the console, which is the lab's
ln -s /dev/null "$U/getty.target"
ln -s /dev/null "$U/serial-getty@ttyS0.service"
cat >"$U/lab-early.service" <<'UNIT'
[Unit]
Description=Lab: the devices, as a unit after systemd-modules-load sees them
DefaultDependencies=no
After=systemd-modules-load.service
Before=sysinit.target

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'ls -l /dev/zczero /dev/zcfull >/run/lab-early 2>&1; echo "exit $?" >>/run/lab-early'
UNIT
ln -s ../lab-early.service "$U/sysinit.target.wants/lab-early.service"
cat >"$U/lab-run.service" <<'UNIT'
[Unit]
Description=Lab: the checks, framed for lab/vm/run.sh, then power off
After=multi-user.target

[Service]
Type=oneshot
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
ExecStart=/bin/sh /usr/lib/lab/run
UNIT
ln -s ../lab-run.service "$U/multi-user.target.wants/lab-run.service"
cat >"$LABTREE/usr/lib/lab/run" <<'RUN'
echo
echo "==ZCVM== begin"
sh /payload </dev/null 2>&1
echo "==ZCVM== rc=$?"
echo "==ZCVM== dmesg"
dmesg
echo "==ZCVM== end"
systemctl poweroff --force --force
RUN

# mktree NAME: a copy of the lab's tree, where make install puts zcdev
mktree() {
	rm -rf "${OUT:?}/${1:?}"
	cp -a "$LABTREE" "$OUT/$1"
	ln -s usr/lib "$OUT/$1/lib"
}

# boot NAME TREE BOOT: boot the root with the tree TREE, run the guest's
# checks of BOOT (lab/guest/systemd.sh); the guest's lines of the console
# in NAME.guest, its kernel log in NAME.dmesg.
boot() {
	local name=$1 tree=$2 rc=0 start=$SECONDS
	{ echo "BOOT='$3' V='$V' SRCV='$SRCV'"; cat lab/guest/systemd.sh; } >"$OUT/$name.sh"
	{ cat "$OUT/root.cpio"
	  (cd "$OUT/$tree" && find . | cpio -o -H newc --quiet); } >"$OUT/$name.cpio"
	lab/vm/run.sh -k "$k" -t 400 -w 120 -I "$OUT/$name.cpio" \
		-a rdinit=/lib/systemd/systemd "$OUT/$name.sh" >"$OUT/$name.console" 2>&1 || rc=$?
	rm -f "$OUT/$name.cpio"
	echo "# systemd: the $name boot took $((SECONDS - start)) s (vm-run exit $rc)"
	console_parts "$OUT/$name.console" "$OUT/$name.guest" "$OUT/$name.dmesg"
	[ $rc -ne 124 ] && [ -s "$OUT/$name.guest" ]
}

# judge NAME N: the boot's TAP lines, all N of them, with the kernel
# named, and its kernel log
judge() {
	local name=$1 n=$2 steps
	steps=$(grep -cE '^(not )?ok - systemd: ' "$OUT/$name.guest") || true
	grep -E '^(not )?ok - systemd: |^#' "$OUT/$name.guest" |
		sed "s/^\(\(not \)\{0,1\}ok - systemd: \)/\1$k: /"
	if grep -q '^not ok - ' "$OUT/$name.guest"; then failed=1; fi
	[ "$steps" -eq "$n" ] || result fail "$k: $name: all $n guest steps reported ($steps)" "$OUT/$name.guest"
	log_clean "$k: $name" "$OUT/$name.dmesg" "$OUT/$name.bad-dmesg"
}

# --- make install install-autoload, and the boot ------------------------------
SRC=$OUT/src
KO=/lib/modules/$KREL/updates/zcdev.ko
installed() {
	make -s sources DEST="$SRC" && cp Makefile "$SRC/" &&
	mktree installed &&
	make -C "$SRC" install install-autoload DESTDIR="$OUT/installed" KDIR="$KDIR" &&
	find "$OUT/installed" -path '*zcdev*' &&
	[ -f "$OUT/installed$KO" ] &&
	grep -x 'updates/zcdev.ko:' "$OUT/installed/lib/modules/$KREL/modules.dep" &&
	grep -x zcdev "$OUT/installed/etc/modules-load.d/zcdev.conf"
}
step "$k: make install install-autoload DESTDIR=<the root's tree> KDIR=<its headers>" \
	"$OUT/install.log" installed
[ -f "$OUT/installed$KO" ] || finish
V=$(modinfo -F version "$OUT/installed$KO")
SRCV=$(modinfo -F srcversion "$OUT/installed$KO")

# The gate's tree, made before uninstall: the entry names "zcdevx".
cp -a "$OUT/installed" "$OUT/planted"
echo zcdevx >"$OUT/planted/etc/modules-load.d/zcdev.conf"

# The root, packed once; each boot adds an archive of its own tree
# (bookworm's /lib is /usr/lib: the tree has the same link).
(cd "$ROOT" && find . ! -name .zcdev-ready | cpio -o -H newc --quiet) >"$OUT/root.cpio"

if boot installed installed installed; then
	result ok "$k: a root with systemd as init boots to multi-user.target and runs the checks"
else
	result fail "$k: a root with systemd as init boots to multi-user.target and runs the checks" \
		"$OUT/installed.console"
fi
judge installed 4

# --- make uninstall, and the next boot ------------------------------------
uninstalled() {
	make -C "$SRC" uninstall DESTDIR="$OUT/installed" KDIR="$KDIR" &&
	left=$(find "$OUT/installed" -name 'zcdev*') &&
	echo "left: ${left:-nothing}" && [ -z "$left" ]
}
step "$k: make uninstall DESTDIR=<the root's tree>" "$OUT/uninstall.log" uninstalled
if boot uninstalled installed uninstalled; then
	judge uninstalled 2
else
	result fail "$k: the boot after make uninstall runs the checks" "$OUT/uninstalled.console"
fi

# --- the gate: a modules-load.d entry of a wrong name -------------------------
# The first boot's checks must fail that it was loaded and that the
# devices were there, with systemd-modules-load's message.  (It does not
# fail the service for a module it cannot find: systemctl --failed alone
# would not see it.)
boot planted planted installed || true
if grep -q '^not ok - systemd: zcdev loaded at boot' "$OUT/planted.guest" &&
   grep -q '^not ok - systemd: /dev/zczero and /dev/zcfull exist when' "$OUT/planted.guest" &&
   grep -q "^#   Failed to find module 'zcdevx'$" "$OUT/planted.guest"; then
	result ok "$k: gate: a modules-load.d entry naming zcdevx fails the boot checks: $(grep -m1 -o "Failed to find module 'zcdevx'" "$OUT/planted.guest")"
else
	result fail "$k: gate: a modules-load.d entry naming zcdevx fails the boot checks" \
		"$OUT/planted.guest"
fi
rm -f "$OUT/root.cpio"
echo "# systemd: version $V"
finish
