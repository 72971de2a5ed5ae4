# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# Runs as root inside the debug kernel's VM (busybox sh; the kernel has
# CONFIG_DEBUG_PAGE_REF), booted by lab/stages/pageref.sh, with
# /guest-lib, the selftests in /t, zcdev as
# /zcdev.ko, a build whose buffers share a folio reference as
# /zcdev-shared.ko (shared.patch) and the zero-page patch's loop
# as /zcref.ko.  zcdev_pageref counts, per pipe round trip, the writes of
# page reference counts on pages that two CPUs both wrote: none for
# zcdev's pipe round trips, each judged in a line of its own; the
# sockets', and the references', reported as figures.  The shared build
# must fail the count.

KO=/zcdev.ko

# step "$(pageref WORKLOAD)" pageref_ok: zcdev_pageref -w WORKLOAD's
# judged line as a step of the lane's, whose name carries the figure.
pageref() {
	local line

	/t/zcdev_pageref -w "$1" >/tmp/pageref.out 2>&1
	line=$(grep -m1 -E '^(not )?ok - ' /tmp/pageref.out)
	line=${line#not ok - }
	echo "${line#ok - }" | grep . || echo "pageref: $1: no verdict"
}

pageref_ok() {
	grep -q '^ok - ' /tmp/pageref.out || { cat /tmp/pageref.out; return 1; }
}

# figures ARGS...: zcdev_pageref's report lines, to the console: counts
# a round trip, which a few hundred of them show as well as thousands
figures() {
	/t/zcdev_pageref -f "$@" 2>&1 | sed -n 's/^# report: /# report: /p' >/dev/console
}

# The shared build's count must fail, and says how much it counted.
shared_fails() {
	/t/zcdev_pageref -w null -l "zczero (shared.patch)" >/tmp/pageref.out 2>&1
	rc=$?
	sed -n 's/^not ok - /# report: /p' /tmp/pageref.out >/dev/console
	cat /tmp/pageref.out
	[ $rc = 1 ] && grep -q '^not ok - pageref:.*page-reference writes' /tmp/pageref.out
}

. /guest-lib
plan "$0"
step "insmod zcdev.ko" insmod $KO
step "$(pageref null)" pageref_ok
step "$(pageref self)" pageref_ok
step "$(pageref reader)" pageref_ok
figures -w unix -s 250
figures -w tcp -s 250
step "insmod zcref.ko, the zero-page patch's loop, as a reference" insmod /zcref.ko
figures -d /dev/zcref -l zeropatch -n 1000 -s 125
figures -d /dev/zero -l "zero (stock)" -n 250 -s 125
step "rmmod" unload
step "insmod zcdev-shared.ko (shared.patch)" insmod /zcdev-shared.ko
step "gate: zcdev_pageref fails buffers that share a folio count" shared_fails
step "rmmod the shared build" unload
