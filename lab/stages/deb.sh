#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The package stage of the lane:  lab/stages/deb.sh
#
# Builds zcdev-dkms from a copy of the tree (dpkg-buildpackage -us -uc -b)
# and checks it with lintian.  Then installs it with apt, as a user would,
# in a root of each suite the lane's kernels come from, each an overlay of
# the lab's root (lab/vm/setup.sh deb), so that the lab stays as it is:
#
#   bookworm  holds the 6.1 kernel's headers: the package's postinst must
#             build zcdev for it through DKMS.  Then 6.12's headers are
#             installed, and DKMS must build for 6.12 by itself.
#   trixie    holds 7.x's and 7.x-rt's headers; the lab's dkms is purged
#             from it first, so that apt must pull in trixie's, and the
#             postinst must build for both.
#
# Each kernel's module tree, as DKMS left it, boots with its kernel
# (lab/vm/run.sh, lab/guest/modprobe.sh): modprobe loads the package's
# build, the devices read zeros, it unloads.  In bookworm, the next
# version (a copy with VERSION and the changelog bumped) is installed over
# it: DKMS must replace the builds for both kernels, leave nothing of the
# old version, and 6.1 boots the new build.  Last, "apt-get remove" must
# leave no zcdev.ko, no DKMS tree and no source behind.
#
# Prints TAP lines "ok - deb: ..." / "not ok - deb: ..." with the failing
# step's log as "#" lines; exits non-zero when one failed.  Logs:
# out/check/deb in the lane, else out/deb; the work tree is removed unless
# a step failed.

# The checks are functions run through step(), which shellcheck cannot see.
# shellcheck disable=SC2317
set -euo pipefail
cd "$(dirname "$0")/../.."
WHAT=deb
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh
if [ -n "$LANE_OUT" ]; then
	wait_job sid-deb || exit 0	# lab/stages/sid.sh says why
	in_time "deb" || exit 1
fi
OUT=${LANE_OUT:-$PWD/out}/deb
# one of its own: lanes of other checkouts may run beside this one
WORK=${TMPDIR:-/tmp}/zcdev-deb.$$
V=$(cat VERSION)
DEB=zcdev-dkms_${V}_all.deb

for f in kernels/6.1/env kernels/6.12/env kernels/7/env kernels/7-rt/env \
	 bookworm-root/.zcdev-ready trixie-root/.zcdev-ready; do
	if [ ! -e "$LAB/$f" ]; then
		echo "deb: the lab is not ready (lab/vm/setup.sh 6.1 6.12 7 7-rt deb)" >&2
		exit 2
	fi
done
krel() {	# krel ID: the release of the lab's kernel ID
	# shellcheck disable=SC1090
	(. "$LAB/kernels/$1/env" && echo "$KREL")
}

rm -rf "$WORK" "$OUT"
mkdir -p "$WORK" "$OUT"

# --- the package -------------------------------------------------------
# From a copy: the tracked files, or all but out/ outside git.
built() {
	mkdir -p "$WORK/build/zcdev"
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -z | tar -c --null -T - -f - | tar -x -C "$WORK/build/zcdev"
	else
		tar -c --exclude=./out -f - . | tar -x -C "$WORK/build/zcdev"
	fi
	(cd "$WORK/build/zcdev" && dpkg-buildpackage -us -uc -b) &&
	cp "$WORK/build/$DEB" "$WORK/"
}
step "dpkg-buildpackage -us -uc -b builds $DEB" "$OUT/build.log" built
[ -f "$WORK/$DEB" ] || finish "the roots' changes"

contents() {
	dpkg-deb -I "$WORK/$DEB" && dpkg-deb -c "$WORK/$DEB" &&
	dpkg-deb -c "$WORK/$DEB" | grep " \./usr/src/zcdev-$V/zcdev_main\.c$" >/dev/null &&
	dpkg-deb --fsys-tarfile "$WORK/$DEB" |
		tar -xO "./usr/src/zcdev-$V/dkms.conf" >"$OUT/dkms.conf" &&
	grep -x "PACKAGE_VERSION=\"$V\"" "$OUT/dkms.conf" &&
	dpkg-deb -I "$WORK/$DEB" postinst | grep 'common.postinst' >/dev/null
}
step "$DEB holds the source in /usr/src/zcdev-$V, dkms.conf of version $V, a DKMS postinst" \
	"$OUT/contents.log" contents

# The package's file list: the module's sources, as they are in the tree,
# and dkms.conf in /usr/src; docs in /usr/share/doc; nothing of the lab.
product() {
	local f
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files Kbuild VERSION compat 'zcdev_*.c' 'zcdev_*.h'
	else
		for f in Kbuild VERSION compat/* zcdev_*.[ch]; do
			[ "$f" = zcdev_probes.h ] || echo "$f"
		done
	fi
	echo dkms.conf
}
only_product() {
	local src=./usr/src/zcdev-$V/
	dpkg-deb -c "$WORK/$DEB" | awk '$1 !~ /^d/ { print $6 }' >"$OUT/files"
	grep -vE "^(\./usr/share/doc/zcdev-dkms/|$src)" "$OUT/files" |
		sed 's/^/outside the source and the docs: /'
	grep "^$src" "$OUT/files" | sed "s|^$src||" | sort >"$OUT/files.src"
	product | sort | diff -u --label expected --label "$DEB" - "$OUT/files.src" &&
	! grep -vqE "^(\./usr/share/doc/zcdev-dkms/|$src)" "$OUT/files" &&
	dpkg-deb --fsys-tarfile "$WORK/$DEB" | tar -xO --wildcards "$src*.[ch]" "${src}Kbuild" |
		{ ! grep -nE 'ZCDEV_FAULT|zc_fault_|planted'; }
}
step "$DEB holds only the product: the module's sources and dkms.conf, its docs, no test hook" \
	"$OUT/only-product.log" only_product

# lintian's own verdict: no errors; its warnings are shown, not failed.
lint() {
	lintian --fail-on error --info "$WORK"/build/zcdev_*_amd64.changes
}
step "lintian: no errors" "$OUT/lintian.log" lint
sed -n 's/^[WIP]: /#   lintian: &/p' "$OUT/lintian.log" | awk 'NR <= 20'

# --- installed with apt in a suite's root ---------------------------------
# in_root NAME LOWER CMD...: CMD in the root LOWER as overlaid by
# $WORK/NAME, with the package as /zcdev-deb (lab/vm/in-root.sh).
in_root() {
	local name=$1 lower=$2
	shift 2
	lab/vm/in-root.sh -o "$WORK/$name" -b "$WORK/deb:/zcdev-deb" "$lower" "$@"
}
mkdir -p "$WORK/deb"
cp "$WORK/$DEB" "$WORK/deb/"
APT=(apt-get install -y -o Dpkg::Use-Pty=0 --no-install-recommends)

# dkms_has ROOT LOWER ID...: DKMS says zcdev/V is installed for each
# kernel, and its module is in that kernel's tree.
dkms_has() {
	local name=$1 lower=$2 k rel status
	shift 2
	for k in "$@"; do
		rel=$(krel "$k")
		status=$(in_root "$name" "$lower" dkms status "zcdev/$V" -k "$rel") || return 1
		echo "dkms status: $status"
		[ "$status" = "zcdev/$V, $rel, x86_64: installed" ] || return 1
		in_root "$name" "$lower" sh -c "ls /lib/modules/$rel/updates/dkms/zcdev.ko*" ||
			return 1
	done
}

# stage ROOT LOWER ID: the module tree of kernel ID as DKMS left it, for
# the guest: without the build and source links, and without the kernel's
# own modules where apt installed its image (6.12's headers depend on it).
# trixie's dkms runs no depmod for a kernel whose modules.dep is missing,
# as it is where only the headers are installed: a kernel's image makes
# one in its postinst, and depmod -b stands in for it here.  The tree is
# $WORK/root-ID, or root-TREE with a fourth argument.
stage() {
	local name=$1 lower=$2 rel dir tree=$WORK/root-${4:-$3}
	rel=$(krel "$3")
	dir=$tree/lib/modules
	mkdir -p "$dir/$rel"
	in_root "$name" "$lower" tar -C "/lib/modules/$rel" --exclude=./build \
		--exclude=./source --exclude=./kernel -cf - . | tar -x -C "$dir/$rel"
	[ -s "$dir/$rel/modules.dep" ] || depmod -b "$tree" "$rel"
	grep '^updates/dkms/zcdev\.ko[.a-z]*:' "$dir/$rel/modules.dep"
}

# nothing_left ROOT LOWER: what apt-get remove must leave.
nothing_left() {
	local left
	left=$(in_root "$1" "$2" sh -c 'find /lib/modules /usr/lib/modules -name "zcdev*.ko*";
		ls -d /var/lib/dkms/zcdev /usr/src/zcdev-[0-9]* 2>/dev/null;
		dkms status zcdev' 2>&1) || true
	echo "left: ${left:-nothing}"
	[ -z "$left" ]
}

install_deb() {		# install_deb ROOT LOWER
	in_root "$1" "$2" apt-get update -qq &&
	in_root "$1" "$2" "${APT[@]}" "/zcdev-deb/$DEB"
}

B=$LAB/bookworm-root T=$LAB/trixie-root
bookworm_install() { install_deb bookworm "$B" && dkms_has bookworm "$B" 6.1; }
step "bookworm: apt-get install ./$DEB; its postinst builds zcdev for $(krel 6.1) through DKMS" \
	"$OUT/bookworm-install.log" bookworm_install
bookworm_upgrade() {
	in_root bookworm "$B" "${APT[@]}" "linux-headers-$(krel 6.12)" &&
	dkms_has bookworm "$B" 6.12 6.1
}
step "bookworm: apt-get install linux-headers-$(krel 6.12); DKMS builds zcdev for it by itself" \
	"$OUT/bookworm-upgrade.log" bookworm_upgrade
bookworm_stage() { stage bookworm "$B" 6.1 && stage bookworm "$B" 6.12; }
step "bookworm: the module trees of $(krel 6.1) and $(krel 6.12)" "$OUT/bookworm-stage.log" \
	bookworm_stage

# The lab's trixie root has dkms for lab/stages/dkms.sh; a user's has not.
trixie_install() {
	in_root trixie "$T" dpkg --purge dkms &&
	install_deb trixie "$T" &&
	in_root trixie "$T" dpkg-query -W dkms &&
	dkms_has trixie "$T" 7 7-rt
}
step "trixie: apt-get install ./$DEB pulls in dkms; its postinst builds zcdev for $(krel 7) and $(krel 7-rt) through DKMS" \
	"$OUT/trixie-install.log" trixie_install
step "trixie: the module tree of $(krel 7)" "$OUT/trixie-stage.log" stage trixie "$T" 7

# --- an upgrade, as apt does it: this version to the next -----------------
# A copy of the tree with the next version in VERSION and a changelog
# entry of its own, installed over the bookworm root's, where zcdev is
# built for 6.1 and 6.12: DKMS must take the old version's builds out and
# build the new one for both, and no DKMS tree, source or module of the
# old one may stay.  6.1 boots the new build; removing the package below
# must leave nothing of either.  The gate: a next version without its
# DKMS postinst, installed over a good one, must fail the same check.
V2=${V%.*}.$((${V##*.} + 1))
DEB2=zcdev-dkms_${V2}_all.deb
UP="upgrade $V → $V2"

# next_version DIR: the package's tree, as version V2, in DIR/zcdev
next_version() {
	local ch=$1/zcdev/debian/changelog who
	mkdir -p "$1" && cp -a "$WORK/build/zcdev" "$1/" &&
	echo "$V2" >"$1/zcdev/VERSION" &&
	who=$(sed -n '1,/^ -- /s/^ -- \(.*>\)  .*/\1/p' "$ch") &&
	{ printf 'zcdev (%s) unstable; urgency=medium\n\n  * The next version.\n\n -- %s  %s\n\n' \
		"$V2" "$who" "$(date -R)"; cat "$ch"; } >"$ch.new" && mv "$ch.new" "$ch"
}

# without_dkms DIR: the package's tree in DIR/zcdev built with its
# postinst's DKMS step planted away (dh_dkms), for the gates
without_dkms() {
	local rules=$1/zcdev/debian/rules
	sed -i 's/^\tdh_dkms -V .*/\ttrue/' "$rules" &&
	! grep -q '^.dh_dkms' "$rules" &&
	(cd "$1/zcdev" && dpkg-buildpackage -us -uc -b)
}
built2() {
	next_version "$WORK/up" &&
	(cd "$WORK/up/zcdev" && dpkg-buildpackage -us -uc -b) &&
	cp "$WORK/up/$DEB2" "$WORK/deb/" &&
	dpkg-deb -c "$WORK/deb/$DEB2" | grep " \./usr/src/zcdev-$V2/dkms\.conf$"
}
step "$UP: dpkg-buildpackage builds $DEB2 from a copy with version $V2" \
	"$OUT/upgrade-build.log" built2

# upgraded ROOT LOWER DEB ID...: DEB (V2) installed over V, built and
# installed for each kernel ID; nothing of V's left.
upgraded() {
	local name=$1 lower=$2 deb=$3 left
	shift 3
	in_root "$name" "$lower" "${APT[@]}" "/zcdev-deb/$deb" &&
	in_root "$name" "$lower" dpkg-query -W zcdev-dkms | grep -x "zcdev-dkms.$V2" &&
	V=$V2 dkms_has "$name" "$lower" "$@" || return 1
	# shellcheck disable=SC2016
	left=$(in_root "$name" "$lower" sh -c 'v=$1; dkms status "zcdev/$v";
		ls -d "/var/lib/dkms/zcdev/$v" "/usr/src/zcdev-$v" 2>/dev/null
		find /lib/modules /usr/lib/modules -name "zcdev*.ko*" | while read -r f; do
			echo "$f: version $(modinfo -F version "$f")"; done | grep -v ": version $2\$"' \
		left "$V" "$V2" 2>&1) || true
	echo "left of $V: ${left:-nothing}"
	[ -z "$left" ]
}
step "$UP: apt-get install ./$DEB2 in bookworm: DKMS takes out $V's builds and builds $V2 for $(krel 6.1) and $(krel 6.12); no DKMS tree, source or module of $V left" \
	"$OUT/upgrade.log" upgraded bookworm "$B" "$DEB2" 6.1 6.12
step "$UP: the module tree of $(krel 6.1)" "$OUT/upgrade-stage.log" stage bookworm "$B" 6.1 6.1-up
ko=$(cd "$WORK/root-6.1-up" 2>/dev/null && find . -name 'zcdev.ko*' | sed 's|^\.||') || true
if [ -n "$ko" ]; then
	WHAT="deb: $UP" modprobe_guest 6.1 "$WORK/root-6.1-up/lib/modules" "$ko" "$V2" \
		"$(modinfo -F srcversion "$WORK/root-6.1-up$ko")" "$OUT/guest-6.1-up"
fi

upgrade_planted() {
	next_version "$WORK/up-planted" && without_dkms "$WORK/up-planted" &&
	cp "$WORK/up-planted/$DEB2" "$WORK/deb/planted_${V2}_all.deb" &&
	in_root planted-up "$B" "${APT[@]}" "/zcdev-deb/$DEB" &&
	dkms_has planted-up "$B" 6.1 &&
	echo "$V is installed and built; over it, $V2 without its DKMS postinst; the check says:" &&
	! upgraded planted-up "$B" "planted_${V2}_all.deb" 6.1
}
step "gate: a next version without its DKMS postinst fails the upgrade check" \
	"$OUT/upgrade-planted.log" upgrade_planted

remove() { in_root "$1" "$2" apt-get remove -y -o Dpkg::Use-Pty=0 zcdev-dkms && nothing_left "$1" "$2"; }
step "bookworm: apt-get remove zcdev-dkms leaves no zcdev.ko, DKMS tree or source" \
	"$OUT/bookworm-remove.log" remove bookworm "$B"
step "trixie: apt-get remove zcdev-dkms leaves no zcdev.ko, DKMS tree or source" \
	"$OUT/trixie-remove.log" remove trixie "$T"

# --- the install check, proven live ------------------------------------
# A package whose postinst does not run DKMS (dh_dkms planted away in a
# copy) installs, and puts its source in /usr/src, as apt sees it; the
# check must fail it all the same, as it looks at what DKMS did.
planted() {
	mkdir -p "$WORK/planted" && cp -a "$WORK/build/zcdev" "$WORK/planted/" &&
	without_dkms "$WORK/planted" &&
	cp "$WORK/planted/$DEB" "$WORK/deb/planted_${V}_all.deb" &&
	in_root planted "$B" "${APT[@]}" "/zcdev-deb/planted_${V}_all.deb" &&
	in_root planted "$B" ls "/usr/src/zcdev-$V/dkms.conf" &&
	echo "the planted package is installed; the check says:" &&
	! dkms_has planted "$B" 6.1
}
step "gate: a planted package without its DKMS postinst fails the install check" \
	"$OUT/planted.log" planted

# --- each kernel boots its module tree -------------------------------------
for k in 6.1 6.12 7; do
	ko=$(cd "$WORK/root-$k" 2>/dev/null && find . -name 'zcdev.ko*' | sed 's|^\.||')
	if [ -z "$ko" ]; then
		result fail "$k: a module tree of DKMS's to boot"
		continue
	fi
	srcv=$(modinfo -F srcversion "$WORK/root-$k$ko" 2>/dev/null) || true
	modprobe_guest "$k" "$WORK/root-$k/lib/modules" "$ko" "$V" "$srcv" "$OUT/guest-$k"
done

finish "the roots' changes"
