#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot one of the lab's kernels in QEMU with a busybox initramfs, run a
# script in it as root, and print what it printed, then the kernel log.
#
#   lab/vm/run.sh -k ID [-f SRC[:DST]]... [-b BIN]... [-i] [-t SECS]
#                  [-m MEM] [-c CPUS] [-a APPEND] [-I INITRD] [-o GCDA] SCRIPT
#
#   -k ID     kernel of the lab (lab/vm/setup.sh): 6.1, 6.12, 7, 7-rt
#   -f        put file or directory SRC into the guest at DST (default /)
#   -b BIN    put an executable and the shared libraries it needs
#   -i        deterministic timing: one CPU, -icount shift=0,sleep=off
#             (one guest nanosecond per instruction), nokaslr
#   -t SECS   the guest's time budget: end it after SECS seconds (default 1200)
#   -w SECS   watchdog: end a guest that prints nothing for SECS (default 120,
#             or the kernel's VM_SILENCE), after asking it with SysRq for
#             its blocked tasks (w) and every CPU's backtrace (l).  A stock
#             kernel's selftest can be silent for 50 s when the lane runs
#             two guests at once.  Until the payload begins, 90 s at most
#             (VM_BOOT_SILENCE): the debug kernel, the slowest to boot, takes
#             up to 40 s from its last line to the payload beside another
#             guest.
#   -a ARGS   more kernel command line (the lane boots with panic_on_warn=1,
#             oops=panic, softlockup_panic=1, hung_task_panic=1, loglevel=5,
#             and the kernel's VM_APPEND); may be given more than once
#   -I INITRD boot the initramfs INITRD (a cpio archive, e.g. a whole root
#             with systemd) instead of busybox's, with SCRIPT added as /payload:
#             its init (-a rdinit=...) must run it and frame it as below
#   -o GCDA   after the script, the kernel's gcov data (every .gcda file
#             under debugfs's gcov/, kept there for modules since unloaded)
#             as a tar archive into directory GCDA, through the guest's
#             second serial port, which carries nothing else
#
# The guest's output is framed by "==ZCVM== accel=kvm|tcg", "==ZCVM== begin",
# "==ZCVM== rc=N", "==ZCVM== dmesg" and "==ZCVM== end", or ends with
# "==ZCVM== ended: WHY" when the watchdog or the time budget ended it.  The
# exit code is the script's, or 124 when the guest did not finish (hang,
# panic, watchdog, time budget).

set -euo pipefail
LAB=${ZCDEV_LAB:-/var/cache/zcdev-lab}
id='' files=() bins=() icount='' timeout=1200 silence='' mem=2G cpus=2 append='' initrd=''

usage() { sed -n '4,39s/^# \{0,1\}//p' "$0" >&2; exit 2; }
gcda=''
while getopts "k:f:b:it:w:m:c:a:I:o:h" opt; do
	case $opt in
	k) id=$OPTARG ;;
	f) files+=("$OPTARG") ;;
	b) bins+=("$OPTARG") ;;
	i) icount=1 ;;
	t) timeout=$OPTARG ;;
	w) silence=$OPTARG ;;
	m) mem=$OPTARG ;;
	c) cpus=$OPTARG ;;
	a) append="$append $OPTARG" ;;
	I) initrd=$OPTARG ;;
	o) gcda=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] && [ -n "$id" ] || usage
script=$1
[ -r "$script" ] || { echo "vm-run: cannot read $script" >&2; exit 2; }
env=$LAB/kernels/$id/env
[ -s "$env" ] || { echo "vm-run: kernel $id is not set up (lab/vm/setup.sh $id)" >&2; exit 2; }
VM_APPEND='' VM_SILENCE='' VM_MACHINE=''
# shellcheck disable=SC1090
. "$env"
silence=${silence:-${VM_SILENCE:-120}}
boot_silence=${VM_BOOT_SILENCE:-90}
[ "$boot_silence" -le "$silence" ] || boot_silence=$silence
append="$VM_APPEND $append"

# VM_MACHINE=microvm (the debug kernel's): no PCI bus, and ACPI tables of
# little more than the CPUs, where pc's cost a KASAN and lockdep kernel
# 10 s of AML interpreted at each boot.  But microvm has no HPET or PM
# timer, so the TSC's only reference is the PIT, whose calibration under
# TCG fails about one boot in three and leaves the kernel hanging.  A
# guest reads the host's TSC, so the kernel is told its rate
# (tsc_early_khz) where the host knows it: a guest itself with a TSC of
# known frequency, whose "cpu MHz" is that rate.  Elsewhere, pc.
host_tsc_khz() {
	local flags
	flags=$(grep -m1 '^flags' /proc/cpuinfo)
	[[ " $flags " == *" hypervisor "* && " $flags " == *" tsc_known_freq "* ]] &&
	awk -F': *' '/^cpu MHz/ { printf "%.0f\n", $2 * 1000; exit }' /proc/cpuinfo
}
if [[ $VM_MACHINE == microvm* ]]; then
	if khz=$(host_tsc_khz) && [ -n "$khz" ]; then
		append="tsc_early_khz=$khz $append"
	else
		VM_MACHINE=pc
	fi
fi

work=$(mktemp -d /tmp/zcvm.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,etc,root,lib,lib64,usr/bin,usr/lib}
cp /bin/busybox "$root/bin/busybox"
echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
echo "root:x:0:" >"$root/etc/group"

add_bin() {
	local bin lib
	bin=$(command -v "$1") || { echo "vm-run: no $1" >&2; exit 2; }
	cp -L --parents "$bin" "$root"
	for lib in $(ldd "$bin" 2>/dev/null | grep -o '/[^ ]*'); do
		cp -L --parents "$lib" "$root"
	done
}
for b in "${bins[@]}"; do
	add_bin "$b"
done
for f in "${files[@]}"; do
	src=${f%%:*} dst=/
	[ "$src" != "$f" ] && dst=${f#*:}
	mkdir -p "$root/$(dirname "$dst")"
	cp -a "$src" "$root/$dst"
done
cp "$script" "$root/payload"
[ -z "$gcda" ] || touch "$root/zcvm-gcov"

cat >"$root/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/shm /dev/pts
mount -t tmpfs tmp /tmp
mount -t tmpfs shm /dev/shm
ip link set lo up
cd /root
echo; echo "==ZCVM== begin"
sh /payload </dev/null 2>&1
echo "==ZCVM== rc=$?"
if [ -e /zcvm-gcov ]; then
	mount -t debugfs none /sys/kernel/debug 2>/dev/null
	mkdir -p /tmp/gcov
	# cat, not cp or tar: the files are seq_files of no size
	(cd /sys/kernel/debug/gcov 2>/dev/null && find . -name '*.gcda') | while read -r f; do
		mkdir -p "/tmp/gcov/${f%/*}" && cat "/sys/kernel/debug/gcov/$f" >"/tmp/gcov/$f"
	done
	{ tar -cf - -C /tmp/gcov . | base64; echo "==ZCVM== gcov end"; } >/dev/ttyS1
	echo "==ZCVM== gcov: $(find /tmp/gcov -name '*.gcda' | wc -l) files"
fi
echo "==ZCVM== dmesg"
dmesg
echo "==ZCVM== end"
reboot -f
EOF
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet) >"$work/initrd"
if [ -n "$initrd" ]; then
	# the caller's, and the script as a second archive, which the kernel
	# unpacks over the first
	mkdir "$work/payload"
	cp "$script" "$work/payload/payload"
	{ cat "$initrd"; (cd "$work/payload" && echo payload | cpio -o -H newc --quiet); } \
		>"$work/initrd"
fi

# KVM only where a test guest has proven it runs (lab/vm/accel.sh).
ACCEL=${ZCDEV_ACCEL:-$("$(dirname "$0")"/accel.sh "$VMLINUZ" 2>/dev/null)}
accel=(-accel tcg -cpu max)
[ "$ACCEL" = kvm ] && accel=(-accel kvm -cpu host)
# Warnings reach the console (loglevel=5, not quiet), and any warning,
# oops, soft lockup or hung task ends the guest at once: the lane sees it
# whatever the test does afterwards.  The log is never cleared, and large
# enough to keep the whole run for the final dmesg.
cmdline="console=ttyS0 panic=-1 loglevel=5 printk.time=1 log_buf_len=8M"
cmdline="$cmdline panic_on_warn=1 oops=panic softlockup_panic=1 hung_task_panic=1"
cmdline="$cmdline sysrq_always_enabled $append"
if [ -n "$icount" ]; then
	ACCEL=tcg
	# shellcheck disable=SC2054 # commas belong to -icount's value
	accel=(-accel tcg -icount shift=0,sleep=off -cpu max)
	cpus=1
	cmdline="$cmdline nokaslr"
fi
echo "==ZCVM== accel=$ACCEL"

# ZCDEV_VM_SLOTS=N: at most N guests of the lab at once on this machine,
# each holding one of N locks in /run/lock/zcdev-vm (ZCDEV_VM_SLOTS_DIR)
# while it runs; the others wait for one, and the wait counts against
# their time budget (-t).
# Under TCG, vCPUs beyond the host's CPUs spin where they wait for each
# other: three debug guests at once on two CPUs took 18% more CPU each
# than two did.  The lane sets 2; unset, no limit.
slot() {
	local dir=${ZCDEV_VM_SLOTS_DIR:-/run/lock/zcdev-vm} i waited=$SECONDS

	mkdir -p "$dir"
	while [ $((SECONDS - waited)) -lt "$timeout" ]; do
		for ((i = 1; i <= ZCDEV_VM_SLOTS; i++)); do
			exec 9>"$dir/slot.$i"
			if flock -n 9; then
				timeout=$((timeout - (SECONDS - waited)))
				return
			fi
		done
		exec 9>&-
		sleep 1
	done
	echo "==ZCVM== ended: no guest slot of $ZCDEV_VM_SLOTS came free in $timeout s"
	echo "vm-run: no guest slot of $ZCDEV_VM_SLOTS came free in $timeout s" >&2
	exit 124
}
[ -z "${ZCDEV_VM_SLOTS:-}" ] || slot

# The guest runs in the background; the loop below ends it when it has
# printed nothing for $silence seconds, $boot_silence before the payload
# has begun (a guest that never gets past the BIOS, a kernel that hangs
# without a word), or used up its $timeout.
start=$SECONDS ended=
serial=()
# The second serial port as a device of its own: "-serial" gives microvm
# (the debug kernel's VM_MACHINE) one port only.
# shellcheck disable=SC2054 # commas belong to -chardev's and -device's values
[ -z "$gcda" ] || serial=(-serial mon:stdio -chardev "file,id=gcda,path=$work/ttyS1"
			  -device isa-serial,chardev=gcda,iobase=0x2f8,irq=3)

# A silent guest is asked what it is waiting for before it is ended: SysRq
# w and l on its keyboard, through QEMU's monitor, and a few seconds to
# print the answer (not the debug kernel: it has neither SysRq nor, on
# microvm, a keyboard; its hung-task panic says what waits).
sysrq() {
	local key
	for key in w l; do
		echo "sendkey alt-sysrq-$key" |
			timeout 5 socat - "UNIX-CONNECT:$work/monitor" >/dev/null 2>&1 || true
		sleep 5
	done
}

boot() {
	local qemu printer quiet_since=$SECONDS size=0 now limit=$boot_silence

	: >"$work/raw"
	: >"$work/ttyS1"
	# at niceness 0, whatever the caller's (lab/check.sh runs its stages
	# at 10, so that their builds take only what the guests leave)
	nice -n "$((-$(nice)))" qemu-system-x86_64 -M "${VM_MACHINE:-pc}" "${accel[@]}" "${serial[@]}" \
		-smp "$cpus" -m "$mem" -nographic -no-reboot -nic none \
		-monitor "unix:$work/monitor,server=on,wait=off" \
		-kernel "$VMLINUZ" -initrd "$work/initrd" -append "$cmdline" \
		</dev/null >"$work/raw" 2>&1 &
	qemu=$!
	tail -n +1 -s 0.2 -f --pid=$qemu "$work/raw" | sed -u 's/\r//g' | tee "$work/console" &
	printer=$!

	while kill -0 $qemu 2>/dev/null; do
		sleep 1
		now=$(stat -c %s "$work/raw")
		if [ "$now" != "$size" ]; then
			size=$now quiet_since=$SECONDS
			[ "$limit" = "$silence" ] || ! grep -aq '^==ZCVM== begin' "$work/raw" ||
				limit=$silence
		elif [ $((SECONDS - quiet_since)) -ge "$limit" ]; then
			ended="it printed nothing for $limit s"
			sysrq
		fi
		[ $((SECONDS - start)) -lt "$timeout" ] || ended="its time budget of $timeout s ran out"
		if [ -n "$ended" ]; then
			kill $qemu 2>/dev/null || true
			sleep 2
			kill -9 $qemu 2>/dev/null || true
			break
		fi
	done
	wait $qemu 2>/dev/null || true
	wait $printer 2>/dev/null || true
}
boot
# A kernel that crashes or hangs while it boots, before the payload has
# begun (and before anything of zcdev's is loaded), is booted once more,
# and says so.  Debian's 7.3 kernel has been seen to hit its own int3 in
# sched_clock_cpu() when it patches a static key ("sched_clock: Marking
# stable") under TCG with two vCPUs, twice in a day of boots here; it and
# the debug kernel have each been seen to fall silent, SysRq and all, once
# in some hundred boots (after the PCI probe; after APIC calibration).
# lab/vm/judge.sh judges the second boot and reports the first.
why=''
if ! grep -q '^==ZCVM== begin$' "$work/console"; then
	# the kernel's last line before SysRq's answers
	last=$(sed '/sysrq: /,$d' "$work/console" | grep -a '^\[' | tail -1 | cut -c1-160)
	if [ -z "$ended" ] && grep -aqE 'Oops|BUG:|Kernel panic' "$work/console"; then
		why="the kernel crashed before the payload began: $(grep -aE -m1 'Oops|BUG:|Kernel panic' "$work/console" | cut -c1-160)"
	elif [ "$ended" = "it printed nothing for $boot_silence s" ]; then
		why="the kernel printed nothing for $boot_silence s before the payload began, after: $last"
	fi
fi
if [ -n "$why" ]; then
	# to stderr first, without the kernel's timestamp: the judge reads
	# what follows the retry line as the kernel log of the second boot
	echo "vm-run: $KREL ${why#the kernel }: booting it again" | sed 's/: \[[^]]*\] */: /' >&2
	echo "==ZCVM== retry: $why"
	ended=''
	start=$SECONDS
	boot
fi

# the gcov data: a tar archive in base64, which ends with a line of its own
if [ -n "$gcda" ]; then
	mkdir -p "$gcda"
	if ! grep -q '^==ZCVM== gcov end' "$work/ttyS1" ||
	   ! tr -d '\r' <"$work/ttyS1" | sed '/^==ZCVM== gcov end$/,$d' | base64 -d |
		tar -xf - -C "$gcda"; then
		echo "vm-run: no gcov data came from the guest" >&2
	fi
fi

if [ -n "$ended" ]; then
	echo "==ZCVM== ended: $ended"
	echo "vm-run: guest on $KREL ended: $ended" >&2
	exit 124
fi
rc=$(sed -n 's/^==ZCVM== rc=\([0-9]*\)$/\1/p' "$work/console" | tail -1)
if [ -z "$rc" ] || ! grep -q '^==ZCVM== end$' "$work/console"; then
	echo "vm-run: the guest did not finish (kernel $KREL)" >&2
	exit 124
fi
exit "$rc"
