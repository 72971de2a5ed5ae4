# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# A guest of selftests alone, the programs of ZCDEV_LIST (default
# /t/lane-list): the debug kernel's second guest (lab/stages/kernels.sh),
# which runs the -m32 builds, the zero-page runs and some programs beside
# the first's lab/guest/check.sh, so that neither takes a quarter of an
# hour.  Its plan, zcdev loaded, each program a step, unloaded, and where
# the kernel has kmemleak, its verdict.

KO=/zcdev.ko
LIST=${ZCDEV_LIST:-/t/lane-list}

. /guest-lib
echo "# kernel $(uname -r), the programs of $LIST"
plan "$0" "$(wc -l <"$LIST")"
step "insmod zcdev.ko" insmod $KO
lane_programs "$LIST"
step "rmmod" unload
kstep "kmemleak: nothing of zcdev's leaked, module unloaded" kmemleak_check unloaded
