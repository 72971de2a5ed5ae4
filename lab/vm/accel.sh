#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Which accelerator the lab's guests can use: prints "kvm" or "tcg", and
# on stderr why.  /dev/kvm existing proves nothing: on some hosts QEMU
# opens it, creates the vCPUs and then never runs the guest past the BIOS,
# on others it aborts setting an MSR.  So boot a guest that must print a
# marker within a few seconds; anything else means TCG.
#
#   lab/vm/accel.sh [VMLINUZ]     (default: the first kernel of the lab)
#
# ZCDEV_ACCEL=kvm|tcg forces the answer without a probe; the probe's CPU
# model is ZCDEV_ACCEL_CPU (default host), its limit ZCDEV_ACCEL_PROBE_SECS
# (default 10 s: under KVM the guest prints its marker within a second or
# two; a host whose KVM never runs a guest takes the whole limit, and
# the lane's first stage waits for it).

set -uo pipefail
LAB=${ZCDEV_LAB:-/var/cache/zcdev-lab}
LIMIT=${ZCDEV_ACCEL_PROBE_SECS:-10}
CPU=${ZCDEV_ACCEL_CPU:-host}
MARK=ZCDEV-ACCEL-PROBE-OK

answer() { echo "$1"; echo "vm-accel: $1: $2" >&2; exit 0; }

case ${ZCDEV_ACCEL:-} in
kvm|tcg)	answer "$ZCDEV_ACCEL" "forced by ZCDEV_ACCEL" ;;
"")		;;
*)		echo "vm-accel: ZCDEV_ACCEL=$ZCDEV_ACCEL is not kvm or tcg" >&2; exit 2 ;;
esac

[ -c /dev/kvm ] || answer tcg "no /dev/kvm"
[ -r /dev/kvm ] && [ -w /dev/kvm ] || answer tcg "/dev/kvm is not read-writable"

vmlinuz=${1:-}
if [ -z "$vmlinuz" ]; then
	vmlinuz=$(cat "$LAB"/kernels/*/env 2>/dev/null | sed -n 's/^VMLINUZ=//p' | head -1)
fi
[ -r "$vmlinuz" ] || answer tcg "no kernel to probe KVM with (lab/vm/setup.sh)"

work=$(mktemp -d /tmp/zcaccel.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root/bin"
cp /bin/busybox "$work/root/bin/busybox"
printf '#!/bin/busybox sh\n/bin/busybox echo %s\n/bin/busybox poweroff -f\n' "$MARK" \
	>"$work/root/init"
chmod +x "$work/root/init"
(cd "$work/root" && find . | cpio -o -H newc --quiet) >"$work/initrd"

start=$(date +%s)
(timeout -k 5 "$LIMIT" qemu-system-x86_64 -accel kvm -cpu "$CPU" -smp 1 -m 256M \
	-nographic -no-reboot -nic none -kernel "$vmlinuz" -initrd "$work/initrd" \
	-append "console=ttyS0 panic=-1 quiet" </dev/null >"$work/out" 2>&1
 echo $? >"$work/rc") 2>/dev/null	# no "Aborted" from the shell
rc=$(cat "$work/rc")
secs=$(($(date +%s) - start))
if grep -q "^$MARK" <(tr -d '\r' <"$work/out"); then
	answer kvm "a test guest booted and printed its marker in ${secs} s"
fi
# The guest's last words, without the BIOS's terminal escapes and QEMU's
# own message about the signal that ended it.
last=$(tr -d '\r' <"$work/out" | sed 's/\x1b[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g' |
	grep -av '^qemu-system' | grep -a '[[:alnum:]]' | tail -1 | cut -c1-60)
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
	answer tcg "/dev/kvm opens, but a test guest did not boot in ${LIMIT} s (its last words: '${last:-nothing}')"
fi
answer tcg "QEMU with KVM failed (exit $rc: $(grep -a -m1 -i error "$work/out" | cut -c1-100))"
