# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# Runs as root inside a test VM (busybox sh), with /guest-lib, the
# selftests in /t and four builds of zcdev with a fault planted
# (lab/faults/): /zcdev.ko ("refs"), /zcdev-init.ko ("init"),
# /zcdev-init-leak.ko ("init-leak") and /zcdev-nofolio.ko ("nofolio");
# lab/stages/faults.sh boots it.
#
# - A load whose second device fails to register gives back what it
#   took: 50 such loads lower MemFree by less than 8 MiB (2 MiB a load
#   would be 100 MiB).  MemFree may rise meanwhile (the kernel frees its
#   boot-time memory late), so only a fall counts.  A build whose failed
#   load leaks its folio must fail that check.
# - With every zero folio 256 references short of the guard, zcdev_refs's
#   splices, tees and sends all work and read zeros, and zcdev_pin, 20 s
#   of wearing folios out and holding on to them, leaves
#   MemAvailable within the bound of 16 folios; the kernel log stays
#   clean (lab/vm/judge.sh).
# - When the first folio allocations fail, splices get the zero page and
#   then, by themselves, large buffers again (zcdev_fallback).

KO=/zcdev.ko
LOADS=50
SLACK_KB=8192

memfree() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	sleep 2
	awk '$1 == "MemFree:" { print $2 }' /proc/meminfo
}

# failed_loads KO: LOADS loads of KO all fail with a message, and
# MemFree falls by less than SLACK_KB.  (busybox's insmod tries
# init_module() after finit_module() fails: the messages count the loads.)
failed_loads() {
	local i=0 before after log loads=0

	insmod "$1" 2>/dev/null	# the first load's one-time costs
	before=$(memfree)
	log=$(dmesg | wc -l)
	while [ "$loads" -lt $LOADS ] && [ $i -lt $LOADS ]; do
		! insmod "$1" 2>/dev/null || { echo "load $i of $1 succeeded"; rmmod zcdev; return 1; }
		i=$((i + 1))
		loads=$(dmesg | tail -n +$((log + 1)) | grep -c 'zcdev: cannot register /dev/zcfull')
	done
	after=$(memfree)
	report "$loads failed loads of $1 ($i insmods): MemFree $before kB before, $after kB after"
	[ "$loads" -ge $LOADS ] || { echo "$loads failed loads said why, of $LOADS"; return 1; }
	[ $((before - after)) -lt $SLACK_KB ] ||
		{ echo "MemFree fell by $((before - after)) kB"; return 1; }
}

. /guest-lib
plan "$0"
step "a load that fails to register its second device, $LOADS times, lowers MemFree by less than $SLACK_KB kB" \
	failed_loads /zcdev-init.ko
step "gate: that check fails a failed load that leaks its folio (init-leak)" \
	eval '! failed_loads /zcdev-init-leak.ko'
step "insmod zcdev.ko (refs: counts 256 short of the guard)" insmod $KO
step "selftests: zcdev_refs, counts 256 short of the guard, ran to its end" \
	selftests zcdev_refs zcdev_refs_fault
export ZCDEV_PIN_SECS=20
step "selftests: zcdev_pin, 20 s of pinning worn folios, ran to its end" \
	selftests zcdev_pin zcdev_pin_fault
step "rmmod" unload
KO=/zcdev-nofolio.ko
step "insmod zcdev-nofolio.ko (nofolio: the first folio allocations fail)" insmod $KO
export ZCDEV_EXPECT_FALLBACK=1
step "selftests: zcdev_fallback, the zero page and then large buffers, ran to its end" \
	selftests zcdev_fallback zcdev_fallback_fault
step "rmmod" unload
