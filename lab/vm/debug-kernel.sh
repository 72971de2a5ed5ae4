#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the lane's debug kernel from Debian's own kernel source package
# (linux-source-X.Y) in the lab's trixie build root (gcc-14): "make
# allnoconfig" with lab/vm/debug.config as KCONFIG_ALLCONFIG, so that the
# kernel has what the lane's guests use and the debug options (KASAN,
# lockdep, kmemleak, DEBUG_PAGEALLOC, UBSAN, gcov, ...) and nothing else:
# a cold build takes about a third of what x86_64_defconfig's did.  Every
# option the fragment asks for is checked; one that did not stick fails
# the run.
#
# The build is cached under the lab directory, keyed by the source
# package's version and a hash of the fragment, so that a second run
# takes a second.  A build is taken as done only by its marker, written
# last: a run that was killed half-way is resumed (or redone) next time.
# The kernel's object files are deleted once it is built; the tree still
# builds external modules.
#
# Usage: lab/vm/debug-kernel.sh [SERIES]
#   SERIES  the linux-source-SERIES to build, e.g. 7.3 or 6.12 (default:
#           the newest one trixie and trixie-backports have)
#
# Prints nothing but progress; leaves $ZCDEV_LAB/kernels/debug/env (KREL,
# KDIR, BROOT, VMLINUZ, as lab/vm/setup.sh does, and what lab/vm/run.sh
# boots it with: VM_APPEND, VM_SILENCE, VM_MACHINE), for
# "lab/vm/kmake.sh debug DIR" and "lab/vm/run.sh -k debug SCRIPT".  The
# build runs with -j$(nproc)+1 at the stages' priority: in the lane the
# debug kernel's stages, the longest chain, wait for it, while the stock
# kernels' guests beside it have time to spare.  Its log is in
# $ZCDEV_LAB/kernels/debug/KEY/build.log, and the cold build's time and
# the machine's load meanwhile in KEY/build.time, which every later run
# prints ("debug-kernel: cold build: ...").
#
# It boots with "no5lvl" (VM_APPEND): on a CPU with LA57, as QEMU's
# "-cpu max" is, an interrupt that comes while identify_cpu() has cleared
# the boot CPU's feature bits makes KASAN compute its shadow for 4-level
# paging and report a wild-memory-access in the interrupt handler (seen
# once in eight boots).  The kernel's own command line cannot say it: the
# decompressor picks the paging mode from the boot loader's.  The kernel
# has slub_debug=U built in (see debug.config).  Its watchdog is five
# minutes (VM_SILENCE): under TCG a KASAN and lockdep kernel runs some
# single tests for more than the stock kernels' one minute without a word.
# Its machine is QEMU's microvm (VM_MACHINE): on pc, ACPI's AML took 10 of
# the 18 s it took to boot alone (lab/vm/run.sh says what microvm lacks).

set -euo pipefail

LAB=${ZCDEV_LAB:-/var/cache/zcdev-lab}
HERE=$(cd "$(dirname "$0")" && pwd)
FRAGMENT=$HERE/debug.config
ROOT=$LAB/trixie-root
DEBUG=$LAB/kernels/debug
SRCDIR=/usr/src/zcdev-debug		# inside the build root
BUILD_PKGS="make gcc libc6-dev binutils flex bison bc libelf-dev libssl-dev openssl
	cpio kmod rsync xz-utils"
NEED_GB=15				# free disk a cold build needs
JOBS=$(($(nproc) + 1))			# make's: one more than the CPUs
export DEBIAN_FRONTEND=noninteractive

say() { printf 'debug-kernel: [%4ds] %s\n' "$SECONDS" "$*" >&2; }
die() { say "error: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (it uses chroot)"
[ -r "$FRAGMENT" ] || die "no config fragment $FRAGMENT"

mkdir -p "$DEBUG"
exec 8>"$LAB/.debug-kernel.lock"
if ! flock -n 8; then
	say "waiting for another debug-kernel run"
	flock 8
fi

# in_root CMD...: CMD in the build root (lab/vm/in-root.sh).
in_root() {
	"$HERE/in-root.sh" "$ROOT" "$@"
}

# root_apt ARGS...: apt-get in the build root; waits for other users of
# its dpkg and lists (lab/vm/setup.sh) rather than failing.  Its output
# goes to a log, shown when it fails for good.
root_apt() {
	local try log=$DEBUG/apt.log
	for try in 1 2 3 4 5 6 7 8 9 10; do
		in_root apt-get -q -o DPkg::Lock::Timeout=300 -o Dpkg::Use-Pty=0 "$@" \
			>"$log" 2>&1 && return 0
		say "apt-get $1 failed (try $try), again in 30 s"
		sleep 30
	done
	tail -20 "$log" >&2
	return 1
}

# --- the build root and the source's version ------------------------------
if [ ! -e "$ROOT/.zcdev-ready" ]; then
	say "no trixie build root: making it (lab/vm/setup.sh 7)"
	"$HERE/setup.sh" 7
fi
[ -e "$ROOT/.zcdev-ready" ] || die "no trixie build root in $ROOT"

if [ -z "$(find "$ROOT/var/lib/apt/lists" -name '*_Packages' -mmin -720 2>/dev/null)" ]; then
	say "reading trixie and trixie-backports"
	root_apt update || die "apt-get update in $ROOT failed"
fi

series=${1:-}
if [ -z "$series" ]; then
	series=$(in_root apt-cache pkgnames linux-source- |
		sed -n 's/^linux-source-\([0-9][0-9]*\.[0-9][0-9]*\)$/\1/p' | sort -V | tail -1)
	[ -n "$series" ] || die "no linux-source-X.Y in the build root's suites"
fi
case $series in
[0-9]*.[0-9]*) ;;
*) die "SERIES is like 7.3 or 6.12, not '$series'" ;;
esac
pkg=linux-source-$series
ver=$(in_root apt-cache policy "$pkg" | awk '/Candidate:/ { print $2 }')
case $ver in
"" | "(none)") die "no $pkg in trixie or trixie-backports" ;;
esac

# The lab's test key, which the kernel trusts (CONFIG_SYSTEM_TRUSTED_KEYS)
# as a user's kernel trusts an enrolled key: made once, kept in the lab,
# and part of the cache key.  The module-signing test signs with it.
KEYS=$LAB/keys
if [ ! -s "$KEYS/test.der" ]; then
	say "making the lab's module-signing test key"
	mkdir -p "$KEYS"
	openssl req -new -x509 -newkey rsa:2048 -sha256 -nodes -days 36500 \
		-subj "/CN=zcdev lab test key/" -keyout "$KEYS/test.priv.tmp" \
		-outform DER -out "$KEYS/test.der.tmp" 2>/dev/null ||
		die "openssl could not make a key"
	openssl x509 -inform DER -in "$KEYS/test.der.tmp" -out "$KEYS/test.pem"
	mv "$KEYS/test.priv.tmp" "$KEYS/test.priv"
	mv "$KEYS/test.der.tmp" "$KEYS/test.der"
fi
config=$DEBUG/fragment.config		# debug.config and the trusted key
{ cat "$FRAGMENT"; echo "CONFIG_SYSTEM_TRUSTED_KEYS=\"$SRCDIR/keys/test.pem\""; } >"$config"
hash=$( { cat "$config" "$KEYS/test.pem"; } | sha256sum | cut -c1-12)
key=$(printf '%s' "$ver-$hash" | tr -c 'A-Za-z0-9.+_-' '_')
out=$DEBUG/$key				# on the host: vmlinuz, config, logs, marker
top=$SRCDIR/$key			# in the root: the unpacked source
kdir=$top/linux-source-$series		# in the root: the tree, KDIR

write_env() {
	local krel
	krel=$(cat "$out/kernel.release")
	cat >"$DEBUG/env.tmp" <<-EOF
	KREL=$krel
	KDIR=$kdir
	BROOT=$ROOT
	VMLINUZ=$out/vmlinuz
	VM_APPEND=no5lvl
	VM_SILENCE=300
	VM_MACHINE=microvm
	TEST_KEY=$KEYS/test.priv
	TEST_CERT=$KEYS/test.der
	EOF
	mv "$DEBUG/env.tmp" "$DEBUG/env"
	say "kernel debug: $krel ($pkg $ver, fragment $hash)"
}

if [ -e "$out/done" ] && [ -s "$out/vmlinuz" ] && [ -s "$ROOT$kdir/Module.symvers" ]; then
	write_env
	say "cached (made in $(cat "$out/done") s)"
	[ ! -s "$out/build.time" ] || say "cold build: $(cat "$out/build.time")"
	exit 0
fi

# --- a cold build ---------------------------------------------------------
say "building $pkg $ver with lab/vm/debug.config (key $key)"
avail=$(df --output=avail -BG "$ROOT" | tail -1 | tr -dc 0-9)
[ "$avail" -ge "$NEED_GB" ] ||
	die "only ${avail} GB free under $ROOT; a debug kernel build needs about $NEED_GB GB"

missing=()
for p in $BUILD_PKGS; do
	# shellcheck disable=SC2016
	in_root dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		grep -q '^install ok installed' || missing+=("$p")
done
# shellcheck disable=SC2016
[ "$(in_root dpkg-query -W -f='${Status} ${Version}\n' "$pkg" 2>/dev/null)" = \
  "install ok installed $ver" ] || missing+=("$pkg=$ver")
if [ ${#missing[@]} -gt 0 ]; then
	say "installing into the build root: ${missing[*]}"
	root_apt install -y --no-install-recommends "${missing[@]}" ||
		die "could not install ${missing[*]} in $ROOT"
	rm -f "$ROOT"/var/cache/apt/archives/linux-source-*.deb
fi
tarball=$ROOT/usr/src/linux-source-$series.tar.xz
[ -s "$tarball" ] || die "$pkg did not leave $tarball"

mkdir -p "$out"
if [ ! -e "$ROOT$top/.unpacked" ]; then
	say "unpacking $(basename "$tarball")"
	rm -rf "$ROOT$top"
	mkdir -p "$ROOT$top"
	tar -xJf "$tarball" -C "$ROOT$top"
	[ -d "$ROOT$kdir" ] || die "$tarball does not hold linux-source-$series/"
	touch "$ROOT$top/.unpacked"
else
	say "resuming the build in $ROOT$kdir"
fi

# allnoconfig with the fragment as KCONFIG_ALLCONFIG: the fragment's
# values, and every other option that has a prompt off.
mkdir -p "$ROOT$SRCDIR/keys"
cp "$KEYS/test.pem" "$ROOT$SRCDIR/keys/test.pem"
cp "$config" "$ROOT$kdir/kernel/configs/zcdev-debug.config"
say "configuring: allnoconfig + debug.config"
in_root make -C "$kdir" KCONFIG_ALLCONFIG="$kdir/kernel/configs/zcdev-debug.config" \
	allnoconfig >"$out/config.log" 2>&1 ||
	{ tail -20 "$out/config.log" >&2; die "configuring failed (log: $out/config.log)"; }

# Every option the fragment sets, or unsets, must have ended up so.
cfg=$ROOT$kdir/.config
bad=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*)		sym=${line%%=*} want=${line#*=} ;;
	"# CONFIG_"*" is not set") sym=${line#\# }; sym=${sym%% *}; want=n ;;
	*)			continue ;;
	esac
	got=$(sed -n "s/^$sym=//p" "$cfg")
	[ -n "$got" ] || got=n
	if [ "$got" != "$want" ]; then
		say "error: $sym: debug.config wants $want, the final .config has $got"
		bad=$((bad + 1))
	fi
done <"$config"
[ $bad -eq 0 ] || die "$bad option(s) of debug.config did not stick in $pkg (missing dependency or renamed symbol); see $cfg"
say "configured: every option of debug.config is set as asked"

# build: the kernel, its modules and Module.symvers, with a word of
# progress every two minutes.  The ticker ends with this script.
ticker=
trap '[ -z "$ticker" ] || kill "$ticker" 2>/dev/null || true' EXIT
build() {
	local log=$out/build.log rc=0
	(
		exec 8>&-
		while sleep 120 && kill -0 $$ 2>/dev/null; do
			say "building: $(grep -c '^  CC' "$log" 2>/dev/null || true) files compiled"
		done
	) &
	ticker=$!
	in_root make -C "$kdir" -j"$JOBS" all >"$log" 2>&1 || rc=$?
	kill "$ticker" 2>/dev/null || true
	wait "$ticker" 2>/dev/null || true
	ticker=
	return $rc
}

start=$SECONDS
load0=$(cut -d' ' -f1 /proc/loadavg)
times >"$out/times.0"		# this shell's children's CPU time so far
resumed=
[ -e "$ROOT$kdir/.zcdev-started" ] && resumed=1
touch "$ROOT$kdir/.zcdev-started"
say "building with -j$JOBS (log: $out/build.log)"
if ! build; then
	# A killed run may have left a truncated object behind: start clean.
	[ -n "$resumed" ] || { tail -30 "$out/build.log" >&2; die "the build failed (log: $out/build.log)"; }
	say "the resumed build failed; cleaning the tree and building it again"
	in_root make -C "$kdir" clean >/dev/null 2>&1
	build || { tail -30 "$out/build.log" >&2; die "the build failed (log: $out/build.log)"; }
fi
for f in arch/x86/boot/bzImage Module.symvers include/config/kernel.release; do
	[ -s "$ROOT$kdir/$f" ] || die "the build left no $f"
done
# The figure the lane prints: make's wall time, on how many CPUs, and
# the load average (1 minute) when it began and ended: the CPUs are
# shared with the stock kernels' guests.  So also
# the CPU time make used (user and system, of all its children), which
# no load changes: divided by the CPUs, what an idle machine would take.
times >"$out/times.1"
cpu=$(awk 'FNR == 2 {
	s = 0; for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] }
	c[NR > 2] = s } END { printf "%d", c[1] - c[0] }' "$out/times.0" "$out/times.1")
echo "$((SECONDS - start)) s of make -j$JOBS${resumed:+ (resumed)}, $(grep -c '^  CC' "$out/build.log") files compiled; $cpu s of CPU, $((cpu / $(nproc))) s of $(nproc) idle CPUs; load $load0 at its start and $(cut -d' ' -f1 /proc/loadavg) at its end" \
	>"$out/build.time"
say "built in $((SECONDS - start)) s: $(cat "$ROOT$kdir/include/config/kernel.release")"
say "cold build: $(cat "$out/build.time")"

cp "$ROOT$kdir/arch/x86/boot/bzImage" "$out/vmlinuz"
cp "$cfg" "$out/config"
cp "$ROOT$kdir/include/config/kernel.release" "$out/kernel.release"

# External modules need the configured tree, its scripts and tools,
# Module.symvers and the headers, not the kernel's own objects.
say "deleting the kernel's objects ($(du -sh "$ROOT$kdir" | cut -f1) before)"
find "$ROOT$kdir" -type f \( -name '*.o' -o -name 'built-in.a' -o -name 'lib.a' \
	-o -name 'vmlinux.a' -o -name 'vmlinux.unstripped' -o -name '.tmp_vmlinux*' \) -delete
rm -f "$ROOT$kdir"/arch/x86/boot/vmlinux.bin "$ROOT$kdir"/arch/x86/boot/compressed/vmlinux*
say "the tree is $(du -sh "$ROOT$kdir" | cut -f1) now"

echo "$SECONDS" >"$out/done"
write_env

# Earlier builds of this lab (another version or fragment, or killed
# half-way) go, with their trees in the root; a tree in the root that no
# build of this lab names may be another lab's (a ZCDEV_LAB that shares
# the root), and stays.
for d in "$DEBUG"/*/; do
	[ -d "$d" ] || continue
	b=$(basename "$d")
	[ "$b" != "$key" ] || continue
	say "removing the earlier build $b"
	rm -rf "$d" "${ROOT:?}$SRCDIR/$b"
done
say "done in $SECONDS s"
