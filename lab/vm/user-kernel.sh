#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bring your own kernel: make a kernel the user built a kernel of the lab,
# id "user", for "make check IMAGE=<bzImage> KDIR=<its build tree>".
#
#   lab/vm/user-kernel.sh IMAGE KDIR [BROOT]
#
# IMAGE   the kernel image to boot (bzImage)
# KDIR    its build tree, configured and built (Module.symvers), on the
#         host's paths
# BROOT   a root directory whose compiler built the kernel, when the
#         host's gcc is too old for it (KDIR then lies inside BROOT)
#
# Refuses, with a message that says why, a kernel the lane cannot use:
# one without loadable and unloadable modules, devtmpfs, an initramfs or
# a serial console, or an image that is not the build tree's.  Leaves
# $ZCDEV_LAB/kernels/user/env (KREL, KDIR, BROOT, VMLINUZ), as
# lab/vm/setup.sh does for the lab's own kernels; ZCDEV_IMAGE_APPEND
# adds to the guests' kernel command line (VM_APPEND) and
# ZCDEV_IMAGE_SILENCE sets their watchdog (VM_SILENCE, default 120 s).

set -euo pipefail
LAB=${ZCDEV_LAB:-/var/cache/zcdev-lab}

die() { echo "user-kernel: $*" >&2; exit 1; }

[ $# -ge 2 ] && [ $# -le 3 ] || die "usage: lab/vm/user-kernel.sh IMAGE KDIR [BROOT]"
image=$(realpath -e "$1" 2>/dev/null) || die "IMAGE=$1: no such file"
kdir=$(realpath -e "$2" 2>/dev/null) || die "KDIR=$2: no such directory"
broot=
if [ $# -eq 3 ] && [ -n "$3" ]; then
	broot=$(realpath -e "$3" 2>/dev/null) || die "BROOT=$3: no such directory"
	case $kdir in
	"$broot"/*) ;;
	*) die "KDIR=$2 is not inside BROOT=$3" ;;
	esac
fi

# An x86 boot image: "HdrS" at 0x202, the boot protocol's signature.
[ "$(dd if="$image" bs=1 skip=514 count=4 2>/dev/null)" = HdrS ] ||
	die "IMAGE=$1 is not an x86 kernel image (bzImage)"

for f in Makefile .config include/config/kernel.release Module.symvers; do
	[ -s "$kdir/$f" ] ||
		die "KDIR=$2 has no $f: give the tree the kernel was built in (make, or make modules_prepare and a Module.symvers)"
done

# What the lane's guests need of the kernel.
need() {		# need OPTION WHY
	grep -qx "$1=y" "$kdir/.config" ||
		die "KDIR's .config has no $1=y: $2"
}
need CONFIG_MODULES "zcdev is a loadable module"
need CONFIG_MODULE_UNLOAD "the lane unloads and reloads zcdev"
need CONFIG_DEVTMPFS "the guests find /dev/zczero in devtmpfs"
need CONFIG_BLK_DEV_INITRD "the guests run from an initramfs"
need CONFIG_SERIAL_8250_CONSOLE "the lane reads the guest on the serial console"
need CONFIG_X86_64 "the lane boots x86-64 guests"

krel=$(cat "$kdir/include/config/kernel.release")
# The image's own release: the boot header's kernel_version string, at
# the offset 0x20e points to, plus 0x200.
off=$(od -An -tu2 -j526 -N2 "$image" | tr -d ' ')
ver=$(dd if="$image" bs=1 skip=$((off + 512)) count=256 2>/dev/null | tr '\0' '\n' | head -1)
[ "${ver%% *}" = "$krel" ] ||
	die "IMAGE=$1 is release '${ver%% *}', KDIR=$2 is $krel: give the image built in that tree"

dir=$LAB/kernels/user
mkdir -p "$dir"
cat >"$dir/env.tmp" <<-EOT
KREL=$krel
KDIR=${kdir#"$broot"}
BROOT=$broot
VMLINUZ=$image
VM_APPEND="${ZCDEV_IMAGE_APPEND:-}"
VM_SILENCE=${ZCDEV_IMAGE_SILENCE:-120}
EOT
mv "$dir/env.tmp" "$dir/env"
echo "user-kernel: kernel user: $krel ($image)" >&2
