#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run kbuild for one kernel of the lab: lab/vm/kmake.sh ID DIR [ARGS...]
# builds the external module in DIR against kernel ID's headers, in the
# kernel's own build root when it needs a newer toolchain than the host's.

set -euo pipefail
LAB=${ZCDEV_LAB:-/var/cache/zcdev-lab}
id=$1 dir=$(realpath "$2")
shift 2
env=$LAB/kernels/$id/env
[ -s "$env" ] || { echo "kmake: kernel $id is not set up (lab/vm/setup.sh $id)" >&2; exit 1; }
# shellcheck disable=SC1090
. "$env"

# sparse: on a kernel of the trixie root, sid's (lab/vm/setup.sh), which
# the kernel's own check of the checker cannot find, so it is not asked.
if [ -n "$BROOT" ] && [ -x "$BROOT/opt/sid-sparse/sparse" ]; then
	for a; do
		shift
		case $a in
		C=*)	set -- "$@" "KBUILD_CHECKSRC=${a#C=}" CHECK=/opt/sid-sparse/sparse ;;
		*)	set -- "$@" "$a" ;;
		esac
	done
fi

if [ -z "$BROOT" ]; then
	exec make -C "$KDIR" M="$dir" "$@"
fi
# shellcheck disable=SC2016
exec unshare -m bash -c '
	set -e
	root=$1 dir=$2 kdir=$3
	shift 3
	mount -t proc proc "$root/proc"
	mkdir -p "$root/build"
	mount --bind "$dir" "$root/build"
	exec chroot "$root" make -C "$kdir" M=/build "$@"
' kmake "$BROOT" "$dir" "$KDIR" "$@"
