# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# The shortest guest run of the lane (busybox sh, as root, with /guest-lib):
# load /zcdev.ko, read from both devices, unload it, and where the kernel
# has kmemleak, ask it before and after the unload.  lab/check.sh boots it with planted-fault builds
# to prove that the kernel-log gate and kmemleak each fail them alone.

KO=/zcdev.ko

reads_zeros() {		# reads_zeros DEV: 1 MiB of zeros from DEV
	[ "$(dd if="$1" bs=64k count=16 2>/dev/null | tr -d '\000' | wc -c)" = 0 ]
}

. /guest-lib
plan "$0"
step "insmod zcdev.ko" insmod $KO
step "/dev/zczero reads zeros" reads_zeros /dev/zczero
step "/dev/zcfull reads zeros" reads_zeros /dev/zcfull
kstep "kmemleak: nothing of zcdev's leaked, module loaded" kmemleak_check loaded
step "rmmod" unload
kstep "kmemleak: nothing of zcdev's leaked, module unloaded" kmemleak_check unloaded
