# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The lab's roots other than the kernels' (lab/vm/setup.sh, which sources
# this file and gives it mirror(), say() and die()): sid's, for the early
# warning, the package stage's bookworm root, and the systemd stage's.

# The newest headers of sid, in a root of its own: the lane builds zcdev
# against them before any user runs them.  Refreshed every run.
setup_sid_kernel() {
	local root=$LAB/sid-root dir=$LAB/kernels/sid rel
	if [ ! -x "$root/usr/bin/apt-get" ] || [ ! -e "$root/.zcdev-ready" ]; then
		rm -rf "$root"
		say "debootstrap sid"
		debootstrap --variant=minbase sid "$root" "$(mirror)" >/dev/null
		echo "deb $(mirror) sid main" >"$root/etc/apt/sources.list"
		# A mirror that is a snapshot serves a sid Release whose
		# Valid-Until has passed (seen: 27 days); the lane says how
		# old it is (lab/check.sh) rather than fail.
		echo 'Acquire::Check-Valid-Until "false";' \
			>"$root/etc/apt/apt.conf.d/99zcdev-valid-until"
		touch "$root/.zcdev-ready"
	fi
	say "sid: the newest linux-headers-amd64"
	chroot "$root" apt-get update -qq
	chroot "$root" apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends \
		make gcc libc6-dev linux-headers-amd64 >/dev/null
	rel=$(chroot "$root" dpkg-query -W -f='${Depends}' linux-headers-amd64 |
		grep -o 'linux-headers-[0-9][^ ,]*' | head -1)
	rel=${rel#linux-headers-}
	if [ -z "$rel" ] || [ ! -d "$root/usr/src/linux-headers-$rel" ]; then
		die "no linux-headers-amd64 in sid"
	fi
	mkdir -p "$dir"
	cat >"$dir/env" <<-EOF
	KREL=$rel
	KDIR=/usr/src/linux-headers-$rel
	BROOT=$root
	VMLINUZ=
	EOF
}

# The package lane's bookworm root: the machine's own apt sources (where
# its 6.1 kernel comes from) and bookworm-backports (6.12), with the lab's
# 6.1 headers installed.  lab/stages/deb.sh installs zcdev-dkms into an
# overlay of it, so it stays as made here.
setup_deb_root() {
	local root=$LAB/bookworm-root rel
	[ -s "$LAB/kernels/6.1/env" ] || die "deb: set up kernel 6.1 first"
	# shellcheck disable=SC1091
	rel=$(. "$LAB/kernels/6.1/env" && echo "$KREL")
	if [ ! -x "$root/usr/bin/apt-get" ] || [ ! -e "$root/.zcdev-ready" ]; then
		rm -rf "$root"
		say "debootstrap bookworm"
		debootstrap --variant=minbase bookworm "$root" "$(mirror)" >/dev/null
		cp /etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list.d/" 2>/dev/null || true
		# debootstrap's own line is in the machine's sources already
		if [ -s /etc/apt/sources.list ]; then
			cp /etc/apt/sources.list "$root/etc/apt/"
		else
			: >"$root/etc/apt/sources.list"
		fi
		echo "deb $(mirror) bookworm-backports main" \
			>"$root/etc/apt/sources.list.d/zcdev-backports.list"
		touch "$root/.zcdev-ready"
	fi
	if ! chroot "$root" dpkg-query -W -f='${Status}\n' "linux-headers-$rel" 2>/dev/null |
	     grep -q '^install ok installed'; then
		say "installing linux-headers-$rel in the bookworm root"
		chroot "$root" apt-get update -qq
		chroot "$root" apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends \
			"linux-headers-$rel" >/dev/null
	fi
	echo "$root"
}

# The systemd stage's root (lab/stages/systemd.sh): bookworm with
# systemd, udev and kmod, which boots as an initramfs with systemd as its
# init; without documentation and apt's lists, to keep it small.
setup_systemd_root() {
	local root=$LAB/systemd-root
	[ -e "$root/.zcdev-ready" ] && return
	rm -rf "$root"
	say "debootstrap bookworm with systemd, udev and kmod"
	debootstrap --variant=minbase --include=systemd,udev,kmod bookworm "$root" \
		"$(mirror)" >/dev/null
	rm -rf "${root:?}"/usr/share/{doc,man,info,locale} "${root:?}"/var/lib/apt/lists/* \
		"${root:?}"/var/cache/apt/*.bin "${root:?}"/var/cache/apt/archives/*.deb
	touch "$root/.zcdev-ready"
}
