#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what the VM lane needs, idempotently, and fetch the kernels of
# the test matrix:
#
#   6.1   Debian bookworm (the machine's own apt sources)
#   6.12  bookworm-backports
#   7.x   trixie-backports, whose headers need gcc-14: they are installed
#         into a trixie build root made with debootstrap
#   7-rt  the same series' PREEMPT_RT flavour (-rt-amd64)
#   debug the newest linux-source of trixie(-backports) built with KASAN,
#         lockdep, kmemleak and more in the trixie root (lab/vm/debug-kernel.sh;
#         cached, about 20 minutes cold on 2 cores)
#
# and the roots of three stages (lab/vm/roots.sh), which build or boot:
#
#   sid   sid's newest linux-headers-amd64 in a sid root, brought up to
#         date on every run: the lane's early warning of kernel API changes
#   deb   a bookworm root with the 6.1 kernel's headers, for the package
#         lane (lab/stages/deb.sh; needs 6.1 and 6.12 set up first)
#   systemd  a bookworm root with systemd, udev and kmod, booted as an
#         initramfs by lab/stages/systemd.sh
#
# and, for lab/stages/cross.sh, the arm64 cross compiler ("cross").
#
# Other suites are read through a private apt configuration under the
# lab directory; the machine's own sources are never changed.  The mirror
# is the one the machine already uses.
#
# Usage: lab/vm/setup.sh [KERNEL...]     (default: 6.1 6.12 7 7-rt debug)
#        lab/vm/setup.sh sid | deb | systemd | cross
# Prints nothing but progress; leaves $ZCDEV_LAB/kernels/<id>/env.

set -euo pipefail

LAB=${ZCDEV_LAB:-/var/cache/zcdev-lab}
export DEBIAN_FRONTEND=noninteractive
KERNELS=("$@")
[ ${#KERNELS[@]} -gt 0 ] || KERNELS=(6.1 6.12 7 7-rt debug)

HOST_PKGS="qemu-system-x86 busybox-static cpio debootstrap linux-source-6.1
	sparse stress-ng trinity liburing-dev fio gnuplot-nox xz-utils zstd kmod bc
	gcc-multilib
	gcc make libc6-dev dkms dwarves
	dpkg-dev debhelper dh-dkms lintian shellcheck openssl socat"
# In the trixie root: on the host, gcc-aarch64-linux-gnu conflicts with
# gcc-multilib.
CROSS_PKGS="gcc-aarch64-linux-gnu make gcc libc6-dev flex bison bc libssl-dev"

say() { echo "lab-setup: $*" >&2; }
die() { say "error: $*"; exit 1; }

mkdir -p "$LAB"
exec 9>"$LAB/.lock"
flock 9

mirror() {
	local f m
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		m=$(awk '/^URIs:/ { print $2; exit }' "$f")
		case "$m" in */debian) echo "$m"; return ;; esac
	done
	m=$(awk '$1 == "deb" && $2 !~ /^\[/ && $2 ~ /\/debian$/ { print $2; exit }
		 $1 == "deb" && $3 ~ /\/debian$/ { print $3; exit }' \
		/etc/apt/sources.list 2>/dev/null || true)
	[ -n "$m" ] || die "no Debian mirror found in the machine's apt sources"
	echo "$m"
}

# packages PKG...: install those of the host's packages that are missing
packages() {
	local missing=() p
	for p; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return
	say "installing ${missing[*]}"
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Private apt for one suite: apt_suite SUITE, then "${APT[@]}" ...
apt_suite() {
	local suite=$1 dir=$LAB/apt/$1
	mkdir -p "$dir/lists/partial" "$dir/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(mirror) $suite main" \
		>"$dir/sources.list"
	APT=(-o Dir::Etc::SourceList="$dir/sources.list"
	     -o Dir::Etc::SourceParts=/dev/null
	     -o Dir::State::Lists="$dir/lists"
	     -o Dir::Cache="$dir"
	     -o Dir::Cache::Archives="$dir/archives"
	     -o APT::Sandbox::User=root)
	if [ -z "$(find "$dir/lists" -name '*Packages*' -mmin -720 2>/dev/null)" ]; then
		say "reading $suite"
		apt-get "${APT[@]}" update -qq
	fi
}

# The first dependency of PKG that matches PATTERN.
dep_of() {
	apt-cache "${APT[@]}" show "$1" 2>/dev/null |
		awk -v pat="$2" -F'[ ,|]+' '/^Depends:/ {
			for (i = 2; i <= NF; i++) if ($i ~ pat) { print $i; exit } }'
}

fetch_debs() {
	local dest=$1; shift
	mkdir -p "$dest"
	(cd "$dest" && apt-get "${APT[@]}" download -qq "$@" >/dev/null)
}

# A kernel whose headers build with the machine's own gcc (bookworm).
setup_bookworm_kernel() {
	local id=$1 suite=$2 meta rel dir root
	dir=$LAB/kernels/$id
	[ -s "$dir/env" ] && return
	if [ "$suite" = host ]; then
		APT=(-o APT::Sandbox::User=root)
		[ -n "$(apt-cache policy linux-image-amd64 | awk '/Candidate/ { print $2 }' | grep -v none)" ] ||
			apt-get update -qq
	else
		apt_suite "$suite"
	fi
	meta=$(dep_of linux-image-amd64 '^linux-image-[0-9]')
	[ -n "$meta" ] || die "no linux-image-amd64 in $suite"
	rel=${meta#linux-image-}
	say "fetching $rel from $suite"
	local hdr common kbuild
	hdr=linux-headers-$rel
	common=$(dep_of "$hdr" '^linux-headers-.*-common')
	kbuild=$(dep_of "$hdr" '^linux-kbuild-')
	rm -rf "$dir"
	fetch_debs "$dir/debs" "$meta" "$hdr" "$common" "$kbuild"
	root=$dir/root
	for deb in "$dir"/debs/*.deb; do
		dpkg-deb -x "$deb" "$root"
	done
	# The arch headers include the common ones by absolute path.
	sed -i "s|^include /usr/src/|include $root/usr/src/|" \
		"$root/usr/src/linux-headers-$rel/Makefile"
	cp "$root/boot/vmlinuz-$rel" "$dir/vmlinuz"
	rm -rf "$dir/debs" "${root:?}/lib/modules" "${root:?}/boot"
	cat >"$dir/env" <<-EOF
	KREL=$rel
	KDIR=$root/usr/src/linux-headers-$rel
	BROOT=
	VMLINUZ=$dir/vmlinuz
	EOF
}

# trixie build root, for kernels built with gcc-14.
setup_trixie_root() {
	local root=$LAB/trixie-root
	if [ ! -x "$root/usr/bin/apt-get" ] || [ ! -e "$root/.zcdev-ready" ]; then
		rm -rf "$root"
		say "debootstrap trixie"
		debootstrap --variant=minbase trixie "$root" "$(mirror)" >/dev/null
		cat >"$root/etc/apt/sources.list" <<-EOF
		deb $(mirror) trixie main
		deb $(mirror) trixie-backports main
		EOF
		chroot "$root" apt-get update -qq
		chroot "$root" apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends \
			make gcc sparse libc6-dev dwarves >/dev/null
		touch "$root/.zcdev-ready"
	fi
	# DKMS for the 7.x kernels (lab/stages/dkms.sh), in roots made
	# before it was needed too
	if ! chroot "$root" dpkg-query -W -f='${Status}\n' dkms 2>/dev/null |
	     grep -q '^install ok installed'; then
		say "installing dkms in the trixie root"
		chroot "$root" apt-get update -qq
		chroot "$root" apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends \
			dkms kmod >/dev/null
	fi
	setup_sid_sparse "$root"
	echo "$root"
}

# sid's sparse in the trixie root, as /opt/sid-sparse/sparse: 7.x's headers
# need a checker that parses __typeof_unqual__, which trixie's sparse
# (0.6.4) cannot.  It runs on sid's C library, kept beside it.
setup_sid_sparse() {
	local dir=$1/opt/sid-sparse tmp f
	[ -x "$dir/sparse" ] && return
	say "sid's sparse, for 7.x"
	apt_suite sid
	APT+=(-o Acquire::Check-Valid-Until=false)
	tmp=$(mktemp -d)
	fetch_debs "$tmp" sparse libc6
	for f in "$tmp"/*.deb; do
		dpkg-deb -x "$f" "$tmp/x"
	done
	mkdir -p "$dir"
	cp "$tmp/x/usr/bin/sparse" "$dir/sparse.bin"
	for f in libc.so.6 ld-linux-x86-64.so.2; do
		cp -L "$(find "$tmp/x" -name "$f" -type f -o -name "$f" -type l | head -1)" "$dir/$f"
	done
	rm -rf "$tmp"
	cat >"$dir/sparse.tmp" <<-'EOF'
	#!/bin/sh
	d=/opt/sid-sparse
	exec $d/ld-linux-x86-64.so.2 --library-path $d $d/sparse.bin "$@"
	EOF
	chmod +x "$dir/sparse.tmp"
	"$dir/ld-linux-x86-64.so.2" --library-path "$dir" "$dir/sparse.bin" --version >/dev/null ||
		die "sid's sparse does not run"
	mv "$dir/sparse.tmp" "$dir/sparse"
}

# setup_trixie_kernel ID FLAVOUR: trixie-backports' linux-image-FLAVOUR
setup_trixie_kernel() {
	local id=$1 flavour=$2 root dir rel meta
	dir=$LAB/kernels/$id
	root=$(setup_trixie_root)
	[ -s "$dir/env" ] && return
	chroot "$root" apt-get update -qq
	meta=$(chroot "$root" apt-cache -t trixie-backports show "linux-image-$flavour" |
		awk -F'[ ,|]+' '/^Version:/ { v = $2 } /^Depends:/ && v ~ /bpo/ {
			for (i = 2; i <= NF; i++) if ($i ~ /^linux-image-[0-9]/) { print $i; exit } }')
	[ -n "$meta" ] || die "no linux-image-$flavour in trixie-backports"
	rel=${meta#linux-image-}
	say "fetching $rel from trixie-backports"
	chroot "$root" apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends \
		-t trixie-backports "linux-headers-$rel" >/dev/null
	rm -rf "$dir"
	mkdir -p "$dir"
	(cd "$root/tmp" && rm -f linux-binary-*.deb &&
	 chroot "$root" sh -c "cd /tmp && apt-get download -qq linux-binary-$rel" >/dev/null)
	dpkg-deb --fsys-tarfile "$root"/tmp/linux-binary-"$rel"_*.deb |
		tar -xO --wildcards "*/vmlinuz*" >"$dir/vmlinuz"
	rm -f "$root"/tmp/linux-binary-*.deb
	[ -s "$dir/vmlinuz" ] || die "no vmlinuz in linux-binary-$rel"
	cat >"$dir/env" <<-EOF
	KREL=$rel
	KDIR=/usr/src/linux-headers-$rel
	BROOT=$root
	VMLINUZ=$dir/vmlinuz
	EOF
}

# The arm64 cross compiler, in the trixie root, for lab/stages/cross.sh.
setup_cross() {
	local root p missing=()
	root=$(setup_trixie_root)
	for p in $CROSS_PKGS; do
		chroot "$root" dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return
	say "installing ${missing[*]} in the trixie root"
	chroot "$root" apt-get update -qq
	chroot "$root" apt-get install -y -qq -o Dpkg::Use-Pty=0 -o DPkg::Lock::Timeout=300 \
		--no-install-recommends "${missing[@]}" >/dev/null
}

# the roots of the early warning, the package stage and the systemd stage
# shellcheck source=lab/vm/roots.sh
. "$(dirname "$0")/roots.sh"

packages $HOST_PKGS
for k in "${KERNELS[@]}"; do
	case "$k" in
	6.1)	setup_bookworm_kernel 6.1 host ;;
	6.12)	setup_bookworm_kernel 6.12 bookworm-backports ;;
	7)	setup_trixie_kernel 7 amd64 ;;
	7-rt)	setup_trixie_kernel 7-rt rt-amd64 ;;
	debug)	# its own lock; the lab's is not held through a long build
		setup_trixie_root >/dev/null
		flock -u 9
		"$(dirname "$0")/debug-kernel.sh"
		flock 9 ;;
	sid)	setup_sid_kernel ;;
	cross)	setup_cross
		say "cross: the arm64 cross compiler is installed in the trixie root"
		continue ;;
	deb)	setup_deb_root >/dev/null
		setup_trixie_root >/dev/null
		say "deb: the bookworm and trixie roots are ready"
		continue ;;
	systemd) setup_systemd_root
		say "systemd: the bookworm root with systemd is ready"
		continue ;;
	user)	# made by lab/vm/user-kernel.sh: nothing to fetch
		[ -s "$LAB/kernels/user/env" ] ||
			die "kernel user: give IMAGE= and KDIR= (lab/vm/user-kernel.sh)" ;;
	*)	die "unknown kernel '$k' (known: 6.1 6.12 7 7-rt debug, user, sid, deb, systemd, cross)" ;;
	esac
	# shellcheck disable=SC1090
	. "$LAB/kernels/$k/env"
	say "kernel $k: $KREL"
done
