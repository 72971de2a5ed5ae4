# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# A guest of the DKMS and package lanes (lab/stages/dkms.sh, deb-check):
# busybox sh, with a module tree that DKMS made as /lib/modules.  The
# caller puts a line before it that sets WHAT (the TAP lines' prefix), KREL,
# KO (the module's one path in the guest), V (its version) and SRCV (its
# srcversion), and FAULT_LOG (1: a warning in the kernel log, for the
# gate of lab/stages/install.sh).  One TAP line per step; "modprobe zcdev"
# must load that build and no other.

step() {
	name=$1
	shift
	if "$@" >/tmp/step.out 2>&1; then
		echo "ok - $WHAT: $name"
	else
		echo "not ok - $WHAT: $name"
		sed 's/^/#   /' /tmp/step.out | tail -20
	fi
}
only_one_ko() {
	find / \( -path /proc -o -path /sys \) -prune -o -name 'zcdev*.ko*' -print |
		tee /tmp/found
	[ "$(cat /tmp/found)" = "$KO" ]
}
is_the_build() {
	grep '^zcdev ' /proc/modules &&
	echo "version $(cat /sys/module/zcdev/version)," \
	     "srcversion $(cat /sys/module/zcdev/srcversion)" &&
	[ "$(cat /sys/module/zcdev/version)" = "$V" ] &&
	[ "$(cat /sys/module/zcdev/srcversion)" = "$SRCV" ]
}
nodes() {
	ls -l /dev/zczero /dev/zcfull && [ -c /dev/zczero ] && [ -c /dev/zcfull ]
}
zeros() {
	[ "$(dd if=/dev/zczero bs=1M count=16 2>/dev/null | wc -c)" = 16777216 ] &&
	[ "$(dd if=/dev/zczero bs=1M count=16 2>/dev/null | tr -d '\000' | wc -c)" = 0 ] &&
	[ "$(dd if=/dev/zcfull bs=4096 count=4 2>/dev/null | tr -d '\000' | wc -c)" = 0 ]
}
unloaded() {
	modprobe -r zcdev && [ ! -e /sys/module/zcdev ] && [ ! -e /dev/zczero ]
}
echo "# kernel $(uname -r)"
[ "$FAULT_LOG" != 1 ] || echo "guest-modprobe: WARNING: a fault of the lane's" >/dev/kmsg
step "the only zcdev.ko in the guest is $KO" only_one_ko
step "modprobe zcdev" modprobe zcdev
step "/sys/module/zcdev is that build (version $V, srcversion $SRCV)" is_the_build
step "/dev/zczero and /dev/zcfull appear" nodes
step "/dev/zczero and /dev/zcfull read zeros" zeros
step "modprobe -r zcdev unloads it" unloaded
