#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: how much faster /dev/zczero is than what you would use
# instead, measured in one run against /dev/zero and user-space peers.
#
#   lab/bench.sh [native|vm] [KERNEL]
#
# native  when this machine can load modules (root, CONFIG_MODULES, the
#         running kernel's headers): insmod, zcbench, fio, clearbench.
# vm      otherwise, in the lab's VM, by default on the newest 7.x kernel
#         (its /dev/zero splices by copying):
#         - icount: one CPU, -icount shift=0,sleep=off (TCG); guest time is
#           the instruction count, so figures repeat to the digit; also
#           lab/bench/readcall, instructions per small read();
#         - wall clock: two CPUs, for thread scaling (splice at 1 and 2
#           threads, each with its own fd and pipe; lab/bench/opencall at
#           1, 2 and 4), fio and, where KVM
#           works (lab/vm/accel.sh says kvm; ZCDEV_ACCEL=kvm forces it),
#           reads at hardware speed.
#         Under TCG a rep-string instruction runs, and under icount counts,
#         once per element, so the read and io_uring rows of TCG runs are
#         marked "no verdict (TCG)" (zcbench -V) and left out of the plots.
#         clearbench always runs natively: it is user-space code, and its
#         figures are the read path's verdict wherever reads ran under TCG.
#
# Beside zczero, every splice and tcp row measures lab/bench/zcref's
# /dev/zcref ("zeropatch"): the loop of the zero-page splice patch
# proposed for /dev/zero, built here for the kernel measured, loaded for the run only
# (test-only: never installed).  If it does not build or load, the run
# goes on without those rows.
#
# Results go to out/bench/: *.txt tables, *.csv, *.png, targets.txt and
# summary.txt.  BENCH_BYTES sets the bytes per measurement (default 64M in
# the icount VM, 512M in the wall-clock VM, 256M natively), BENCH_MMAP the
# size of mmap-touch's mapping (default 1G).  Targets are figures with
# "met" or "MISSED": they never fail the run.

set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
LAB=${ZCDEV_LAB:-/var/cache/zcdev-lab}
OUT=$TOP/out/bench
MODE=${1:-auto}
KERNEL=${2:-7}
BYTES=${BENCH_BYTES:-256M}
MAPSIZE=${BENCH_MMAP:-1G}
NOVERDICT="no verdict (TCG)"
VERSION=$(git describe --tags --always --dirty 2>/dev/null || cat VERSION)
CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')

can_load_modules() {
	[ "$(id -u)" = 0 ] && [ -e /proc/modules ] &&
		[ -d "/lib/modules/$(uname -r)/build" ]
}

if [ "$MODE" = auto ]; then
	if can_load_modules; then MODE=native; else MODE=vm; fi
fi
rm -rf "$OUT"
mkdir -p "$OUT"
say() { echo "bench: $*" >&2; }

plot() {
	for csv in "$OUT"/*.csv; do
		[ -s "$csv" ] && lab/bench/plot.sh "$csv" >/dev/null 2>&1 || true
	done
}

# --- clearbench: the read path's clearing routine, natively --------------
make -s -C lab/bench clearbench >/dev/null
say "clearbench (native, $CPU)"
lab/bench/clearbench -m "native, kernel $(uname -r), $CPU" -c "$OUT/clear.csv" \
	>"$OUT/clear.txt" 2>&1 || true

if [ "$MODE" = native ]; then
	say "native: building zcdev for $(uname -r)"
	make -s >/dev/null
	make -s -C lab/bench zcbench >/dev/null
	loaded=
	if ! lsmod | grep '^zcdev' >/dev/null; then
		insmod ./zcdev.ko
		loaded=1
	fi
	zref=()
	if make -s -C lab/bench zcref >"$OUT/build-zcref.log" 2>&1 &&
		insmod lab/bench/zcref/zcref.ko; then
		zref=(-z /dev/zcref)
	else
		say "zcref: see $OUT/build-zcref.log; no zeropatch rows"
	fi
	label="native, kernel $(uname -r), $CPU, wall clock"
	rc=0
	lab/bench/zcbench -b "$BYTES" -M "$MAPSIZE" -n 3 "${zref[@]}" -c "$OUT/zcbench.csv" \
		-m "$label" | tee "$OUT/zcbench.txt" || rc=1
	OUT=$OUT lab/bench/fio/run.sh >"$OUT/fio.txt" 2>&1 || say "fio: see $OUT/fio.txt"
	plot
	[ -z "$loaded" ] || rmmod zcdev
	# zcbench has exited: no pipe or socket holds zcref's buffers now.
	[ ${#zref[@]} = 0 ] || rmmod zcref
	exit $rc
fi

# --- in the VM ---------------------------------------------------------
lab/vm/setup.sh "$KERNEL" >/dev/null
# shellcheck disable=SC1090
. "$LAB/kernels/$KERNEL/env"
say "vm: kernel $KREL"
build=$OUT/build
mkdir -p "$build"
make -s sources DEST="$build" >/dev/null
lab/vm/kmake.sh "$KERNEL" "$build" ZCDEV_VERSION="$VERSION" >"$OUT/build.log" 2>&1
# The zero-page patch's loop, for the same kernel.
refbuild=$OUT/build-zcref
mkdir -p "$refbuild"
cp lab/bench/zcref/zcref.c lab/bench/zcref/Kbuild "$refbuild/"
reffiles=()
if lab/vm/kmake.sh "$KERNEL" "$refbuild" >"$OUT/build-zcref.log" 2>&1; then
	reffiles=(-f "$refbuild/zcref.ko:/zcref.ko")
else
	say "zcref did not build, see $OUT/build-zcref.log; no zeropatch rows"
fi
make -s -C lab/bench zcbench readcall opencall STATIC=1 >/dev/null
# One probe for both runs: vm-run takes ZCDEV_ACCEL as the answer.
ZCDEV_ACCEL=$(lab/vm/accel.sh "$VMLINUZ" 2>"$OUT/accel.log") || ZCDEV_ACCEL=tcg
export ZCDEV_ACCEL
say "vm: wall-clock guest under $ZCDEV_ACCEL ($(cat "$OUT/accel.log"))"

# payload LABEL: a guest script running zcbench with the script's
# arguments (run_vm puts a "set --" line before it), then readcall and fio
# when the guest has them.
payload() {
	local label=$1
	cat <<-EOF
	insmod /zcdev.ko || exit 1
	zref=
	if [ -e /zcref.ko ]; then
		if insmod /zcref.ko; then zref="-z /dev/zcref"
		else echo "zcref: insmod failed: no zeropatch rows"; fi
	fi
	# Let the boot-time work (crypto self-tests) finish: with one CPU it
	# would run inside the first measurements.
	sleep 5
	/zcbench \$zref -m "$label" -c /tmp/out.csv "\$@" || exit 1
	echo "==CSV=="
	cat /tmp/out.csv
	echo "==CSV-END=="
	for prog in readcall opencall; do
		[ -x /\$prog ] || continue
		echo "==\$prog=="
		/\$prog /dev/zero /dev/zczero
		echo "==\$prog-end=="
	done
	if [ -x /usr/bin/fio ]; then
		echo "==FIO=="
		cd /fio && OUT=/tmp/fio sh ./run.sh 2>&1
		echo "==FIO-END=="
	fi
	EOF
}

run_vm() {		# run_vm NAME VM-ARGS... -- ZCBENCH-ARGS...
	# icount (-i) is TCG whatever vm-accel says; the wall-clock guest
	# runs under $ZCDEV_ACCEL.
	local name=$1 vmargs=() label accel=$ZCDEV_ACCEL
	shift
	while [ "$1" != -- ]; do vmargs+=("$1"); shift; done
	shift
	case " ${vmargs[*]} " in
	*" -i "*)
		accel=tcg
		label="VM, kernel $KREL, $CPU (TCG), icount: 1 instruction = 1 ns" ;;
	*)
		if [ "$accel" = kvm ]; then
			label="VM, kernel $KREL, $CPU (KVM: reads at hardware speed), wall clock, 2 vCPUs"
		else
			label="VM, kernel $KREL, $CPU (TCG), wall clock, 2 vCPUs"
		fi ;;
	esac
	# TCG runs rep stosb a byte at a time: its read figures are no verdict.
	[ "$accel" = kvm ] || set -- "$@" -V "$NOVERDICT"
	set -- "$@" -M "$MAPSIZE"
	{
		printf 'set --'
		printf " '%s'" "$@"
		echo
		payload "$label"
	} >"$OUT/$name.payload"
	say "vm: $name"
	# -w: a row is printed once all of its devices are measured, each up
	# to -n times and up to zcbench's 30 s cap: minutes of silence.
	lab/vm/run.sh -k "$KERNEL" -t 3000 -w 900 "${vmargs[@]}" \
		-f "$build/zcdev.ko:/zcdev.ko" -f lab/bench/zcbench:/zcbench \
		"${reffiles[@]}" \
		"$OUT/$name.payload" >"$OUT/$name.console" 2>&1 || {
		say "vm: $name failed, see $OUT/$name.console"
		return 1
	}
	if ! grep -q "^==ZCVM== accel=$accel\$" "$OUT/$name.console"; then
		say "vm: $name: the guest did not run under $accel as its label says"
	fi
	sed -n '/^==ZCVM== begin$/,/^==CSV==$/p' "$OUT/$name.console" |
		sed '1d;$d' >"$OUT/$name.txt"
	sed -n '/^==CSV==$/,/^==CSV-END==$/p' "$OUT/$name.console" |
		sed '1d;$d' >"$OUT/$name.csv"
	sed -n '/^==FIO==$/,/^==FIO-END==$/p' "$OUT/$name.console" |
		sed '1d;$d' >"$OUT/$name-fio.txt"
	[ -s "$OUT/$name-fio.txt" ] || rm -f "$OUT/$name-fio.txt"
	for prog in readcall opencall; do
		sed -n "/^==$prog==\$/,/^==$prog-end==\$/p" "$OUT/$name.console" |
			sed '1d;$d' >"$OUT/$name-$prog.txt"
		[ -s "$OUT/$name-$prog.txt" ] || rm -f "$OUT/$name-$prog.txt"
	done
	cat "$OUT/$name.txt"
}

# targets: lab/bench/targets.awk over what was measured
targets() {
	local f files=()
	for f in icount.csv wallclock.csv icount-readcall.txt wallclock-opencall.txt clear.csv; do
		[ -s "$OUT/$f" ] && files+=("$OUT/$f")
	done
	[ ${#files[@]} -gt 0 ] || { echo "targets: nothing was measured"; return 0; }
	awk -f lab/bench/targets.awk -v ic="$OUT/icount.csv" -v wc="$OUT/wallclock.csv" \
		-v cl="$OUT/clear.csv" -v rc="$OUT/icount-readcall.txt" \
		-v oc="$OUT/wallclock-opencall.txt" -v accel="$ZCDEV_ACCEL" -v nv="$NOVERDICT" \
		"${files[@]}"
}

rc=0
run_vm icount -i -f lab/bench/readcall:/readcall -- -i -t 1 -b "${BENCH_BYTES:-64M}" || rc=1
# mmap-touch counts instructions: the icount run has it, this one not.
# Each splice thread has its own fd and pipe: 1 and 2 threads of zczero
# and zeropatch side by side; and open() at 1, 2 and 4 threads (opencall).
run_vm wallclock -b fio -f lab/bench/fio:/fio -f lab/bench/opencall:/opencall -- -t 2 -b "${BENCH_BYTES:-512M}" -n 2 \
	-T splice,tcp,read,uring || rc=1
plot
targets | tee "$OUT/targets.txt"
{
	echo "zcdev $VERSION benchmarks, $(date -u +%Y-%m-%d)"
	echo "host CPU: $CPU; wall-clock guest: $ZCDEV_ACCEL"
	for f in icount wallclock; do
		[ -s "$OUT/$f.txt" ] && { echo; cat "$OUT/$f.txt"; }
	done
	if [ -s "$OUT/icount-readcall.txt" ]; then
		echo
		echo "small reads, instructions per call (lab/bench/readcall, icount VM; two rounds):"
		cat "$OUT/icount-readcall.txt"
	fi
	if [ -s "$OUT/wallclock-opencall.txt" ]; then
		echo
		echo "open() and close() a second (lab/bench/opencall, wall-clock VM):"
		cat "$OUT/wallclock-opencall.txt"
	fi
	echo
	echo "clearing routine, native (the read path's verdict where the VM ran reads under TCG):"
	cat "$OUT/clear.txt"
	echo
	cat "$OUT/targets.txt"
} >"$OUT/summary.txt"
say "results in out/bench/ (summary.txt, targets.txt, *.csv, *.png)"
exit $rc
