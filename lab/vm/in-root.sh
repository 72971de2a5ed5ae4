#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a command in one of the lab's build roots, chrooted, with /proc
# mounted, in a mount namespace of its own (nothing stays mounted if it is
# killed) and with a clean environment:
#
#   lab/vm/in-root.sh [-b HOSTDIR:DIR] [-o WORK] ROOT CMD...
#
#   -b   bind HOSTDIR at DIR inside the root (once)
#   -o   leave ROOT as it is: run in an overlay of it whose changes go to
#        WORK/upper (WORK/work, WORK/merged beside it), thrown away with WORK

set -euo pipefail
bind='' work=''
while getopts "b:o:" opt; do
	case $opt in
	b) bind=$OPTARG ;;
	o) work=$OPTARG ;;
	*) sed -n '4,12s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { echo "in-root: give a root and a command" >&2; exit 2; }
root=$1
shift
[ -z "$work" ] || mkdir -p "$work/upper" "$work/work" "$work/merged"

# shellcheck disable=SC2016
exec unshare -m sh -c 'root=$1 bind=$2 work=$3; shift 3
	if [ -n "$work" ]; then
		mount -t overlay overlay \
			-o "lowerdir=$root,upperdir=$work/upper,workdir=$work/work" \
			"$work/merged" || exit
		root=$work/merged
	fi
	mount -t proc proc "$root/proc" || exit
	if [ -n "$bind" ]; then
		mkdir -p "$root/${bind#*:}" &&
		mount --bind "${bind%%:*}" "$root/${bind#*:}" || exit
	fi
	exec chroot "$root" "$@"' \
	in-root "$root" "$bind" "$work" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/root LC_ALL=C DEBIAN_FRONTEND=noninteractive "$@"
