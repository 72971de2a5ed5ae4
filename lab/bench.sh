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
#           bench/readcall, instructions per small read();
#         - wall clock: two CPUs, for thread scaling, fio and, where KVM
#           works (lab/vm/accel.sh says kvm; ZCDEV_ACCEL=kvm forces it),
#           reads at hardware speed.
#         Under TCG a rep-string instruction runs, and under icount counts,
#         once per element, so the read and io_uring rows of TCG runs are
#         marked "no verdict (TCG)" (zcbench -V) and left out of the plots.
#         clearbench always runs natively: it is user-space code, and its
#         figures are the read path's verdict wherever reads ran under TCG.
#
# Beside zczero, every splice and tcp row measures bench/zcref's
# /dev/zcref ("zeropatch"): the loop of the mm tree's zero-page splice for
# /dev/zero, built here for the kernel measured, loaded for the run only
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
		[ -s "$csv" ] && bench/plot.sh "$csv" >/dev/null 2>&1 || true
	done
}

# --- clearbench: the read path's clearing routine, natively --------------
make -s -C bench clearbench >/dev/null
say "clearbench (native, $CPU)"
bench/clearbench -m "native, kernel $(uname -r), $CPU" -c "$OUT/clear.csv" \
	>"$OUT/clear.txt" 2>&1 || true

if [ "$MODE" = native ]; then
	say "native: building zcdev for $(uname -r)"
	make -s >/dev/null
	make -s -C bench zcbench >/dev/null
	loaded=
	if ! lsmod | grep -q '^zcdev'; then
		insmod ./zcdev.ko
		loaded=1
	fi
	zref=()
	if make -s -C bench zcref >"$OUT/build-zcref.log" 2>&1 &&
		insmod bench/zcref/zcref.ko; then
		zref=(-z /dev/zcref)
	else
		say "zcref: see $OUT/build-zcref.log; no zeropatch rows"
	fi
	label="native, kernel $(uname -r), $CPU, wall clock"
	rc=0
	bench/zcbench -b "$BYTES" -M "$MAPSIZE" -n 3 "${zref[@]}" -c "$OUT/zcbench.csv" \
		-m "$label" | tee "$OUT/zcbench.txt" || rc=1
	OUT=$OUT bench/fio/run.sh >"$OUT/fio.txt" 2>&1 || say "fio: see $OUT/fio.txt"
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
cp bench/zcref/zcref.c bench/zcref/Kbuild "$refbuild/"
reffiles=()
if lab/vm/kmake.sh "$KERNEL" "$refbuild" >"$OUT/build-zcref.log" 2>&1; then
	reffiles=(-f "$refbuild/zcref.ko:/zcref.ko")
else
	say "zcref did not build, see $OUT/build-zcref.log; no zeropatch rows"
fi
make -s -C bench zcbench readcall STATIC=1 >/dev/null
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
	if [ -x /readcall ]; then
		echo "==READCALL=="
		/readcall
		echo "==READCALL-END=="
	fi
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
		-f "$build/zcdev.ko:/zcdev.ko" -f bench/zcbench:/zcbench \
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
	sed -n '/^==READCALL==$/,/^==READCALL-END==$/p' "$OUT/$name.console" |
		sed '1d;$d' >"$OUT/$name-readcall.txt"
	[ -s "$OUT/$name-readcall.txt" ] || rm -f "$OUT/$name-readcall.txt"
	cat "$OUT/$name.txt"
}

# targets: the issue's targets, each a figure with "met" or "MISSED" (and
# by how much), never a failure; then the figures beside them: zeropatch,
# TCP, small reads and the read path's verdict.  Reads out/bench's
# icount.csv, wallclock.csv, icount-readcall.txt and clear.csv, those
# that exist.
targets() {
	local files=() f
	for f in icount.csv wallclock.csv icount-readcall.txt clear.csv; do
		[ -s "$OUT/$f" ] && files+=("$OUT/$f")
	done
	[ ${#files[@]} -gt 0 ] || { echo "targets: nothing was measured"; return 0; }
	awk -F, -v ic="$OUT/icount.csv" -v wc="$OUT/wallclock.csv" \
		-v cl="$OUT/clear.csv" -v accel="$ZCDEV_ACCEL" -v nv="$NOVERDICT" '
	FNR == 1 { f = FILENAME == ic ? 1 : FILENAME == wc ? 2 : FILENAME == cl ? 3 : 4 }
	f == 4 {	# readcall: DEVICE SIZE B NS ns/call; the last round wins
		n = split($0, w, " ")
		if (n >= 4 && w[3] == "B") {
			d = w[1]
			sub(/.*\//, "", d)
			call[d, w[2]] = w[4]
		}
		next
	}
	FNR == 1 { next }
	{
		key = $1 "," $2 "," $3 "," $4
		gbps[f, key] = $7
		sec[f, key] = $6
		ipb[f, key] = ($5 > 0 && $7 ~ /^[0-9.]+$/) ? $6 * 1e9 / $5 : -1
		flt[f, key] = $8
		ahp[f, key] = $9
		if (f == 1 && $1 == "mmap-touch")
			msize = $2
		if (f == 2 && $3 + 0 > maxthr)
			maxthr = $3 + 0
	}
	function num(f, k) { return ((f, k) in gbps) && gbps[f, k] ~ /^[0-9.]+$/ && gbps[f, k] > 0 }
	function ratio(f, a, b) { return (num(f, a) && num(f, b)) ? gbps[f, a] / gbps[f, b] : -1 }
	function ipbof(f, k) { return num(f, k) ? ipb[f, k] : -1 }
	function size(b) { return b >= 1073741824 ? b / 1073741824 "G" : b >= 1048576 ? b / 1048576 "M" : b >= 1024 ? b / 1024 "K" : b }
	# at most lim: met, or MISSED and by how much
	function le(what, v, lim, unit) {
		if (v < 0) { printf "  %-40s not measured\n", what; return }
		printf "  %-40s %.4f %s (target <= %s): %s\n", what, v, unit, lim,
			(v <= lim ? "met" : sprintf("MISSED, %.2fx the target", v / lim))
	}
	# at least lim
	function ge(what, v, lim, of) {
		if (v < 0) { printf "  %-40s not measured\n", what; return }
		printf "  %-40s %.2fx %s (target >= %.2fx): %s\n", what, v, of, lim,
			(v >= lim ? "met" : sprintf("MISSED, %.0f%% short", 100 * (1 - v / lim)))
	}
	END {
		print "targets (issue 11): icount VM on the newest 7.x unless noted; figures, never a failure"
		le("1M pipe -> /dev/null", ipbof(1, "splice-null,1048576,1,zczero"), 0.004, "instr/B")
		ge("1M pipe -> /dev/null", ratio(1, "splice-null,1048576,1,zczero", "splice-null,1048576,1,zeropatch"), 5, "zeropatch")
		ge("64K pipe -> /dev/null", ratio(1, "splice-null,65536,1,zczero", "splice-null,65536,1,vmsplice"), 2.5, "vmsplice")
		ge("64K pipe -> /dev/null", ratio(1, "splice-null,65536,1,zczero", "splice-null,65536,1,zeropatch"), 1.4, "zeropatch")
		le("1M pipe -> /dev/zczero", ipbof(1, "splice-self,1048576,1,zczero"), 0.002, "instr/B")
		ge("1M pipe -> reader thread", ratio(1, "splice-reader,1048576,1,zczero", "splice-reader,1048576,1,vmsplice"), 5, "vmsplice")
		# small reads: bench/readcall, instructions per call
		ns = split("1 64 1024", rs, " ")
		for (j = 1; j <= ns; j++) {
			what = sprintf("small read, %s B, instr/call", rs[j])
			if (!(("zczero", rs[j]) in call) || !(("zero", rs[j]) in call)) {
				printf "  %-40s not measured\n", what
				continue
			}
			z = call["zczero", rs[j]]
			s = call["zero", rs[j]]
			printf "  %-40s zczero %d, /dev/zero %d, %+.1f%% (target: no more): %s\n",
				what, z, s, 100 * (z / s - 1),
				(z <= s ? "met" : sprintf("MISSED by %d instructions", z - s))
		}
		# mmap: the same AnonHugePages as /dev/zero
		zk = "mmap-touch," msize ",1,zczero"
		rk = "mmap-touch," msize ",1,zero"
		what = sprintf("mmap %s private, AnonHugePages", size(msize))
		if (msize == "" || !num(1, zk) || !num(1, rk)) {
			printf "  %-40s not measured\n", what
		} else {
			printf "  %-40s zczero %d kB, /dev/zero %d kB (target: the same): %s\n",
				what, ahp[1, zk], ahp[1, rk], (ahp[1, zk] == ahp[1, rk] ? "met" : \
				sprintf("MISSED by %d kB", ahp[1, rk] - ahp[1, zk]))
			printf "  %-40s zczero %d faults, %.0f Minstr; /dev/zero %d faults, %.0f Minstr\n",
				"", flt[1, zk], sec[1, zk] * 1e3, flt[1, rk], sec[1, rk] * 1e3
		}
		# threads, wall clock
		n = maxthr
		split("splice-null,65536 splice-null,1048576 splice-self,1048576", tt, " ")
		split("64K -> /dev/null|1M -> /dev/null|1M -> /dev/zczero", tw, "|")
		for (j = 1; j <= 3; j++) {
			what = sprintf("%d threads vs one, %s", n, tw[j])
			if (n < 2) { printf "  %-40s not measured\n", what; continue }
			ge(what, ratio(2, tt[j] "," n ",zczero", tt[j] ",1,zczero"), 0.9 * n,
			   sprintf("one thread, wall clock (%s)", toupper(accel)))
		}

		print ""
		print "reads: under TCG the VM read and io_uring rows are [" nv "]: TCG runs rep stosb"
		print "a byte at a time (and counts each under icount).  The verdict, natively, from"
		print "clearbench (hot buffer, GB/s; zczero clears with rep stosb from 2 KiB up, stock"
		print "/dev/zero with clear_user(), the store loop on CPUs without FSRS):"
		ns = split("4096 65536 1048576 16777216", cs, " ")
		for (j = 1; j <= ns; j++) {
			a = "clear," cs[j] ",1,stosb"
			b = "clear," cs[j] ",1,storeloop"
			if (!num(3, a) || !num(3, b)) {
				printf "  %-4s not measured\n", size(cs[j])
				continue
			}
			printf "  %-4s rep stosb %6.1f, store loop %6.1f: %.2fx\n", size(cs[j]),
				gbps[3, a], gbps[3, b], gbps[3, a] / gbps[3, b]
		}
		if (accel == "kvm") {
			print "reads in the KVM guest, hardware speed (wall clock, 1 thread): zczero/zero"
			split("read uring-qd1 uring-qd32", rt, " ")
			for (i = 1; i <= 3; i++) {
				line = sprintf("  %-10s", rt[i])
				for (j = 1; j <= ns; j++) {
					r = ratio(2, rt[i] "," cs[j] ",1,zczero", rt[i] "," cs[j] ",1,zero")
					line = line sprintf(" %s %s", size(cs[j]), r < 0 ? "-" : sprintf("%.2fx", r))
				}
				print line
			}
		} else {
			print "  reads at hardware speed in a KVM guest: not measured, this host runs its guests under TCG"
		}

		print ""
		print "zczero against the zero-page splice queued in the mm tree (zeropatch, bench/zcref), icount; figures, not targets"
		n = split("splice-null,65536 splice-null,1048576 splice-reader,1048576 splice-self,1048576", tk, " ")
		split("64K pipe -> /dev/null|1M pipe -> /dev/null|1M pipe -> reader thread|1M pipe -> itself (*)", tname, "|")
		for (j = 1; j <= n; j++) {
			z = tk[j] ",1,zczero"
			p = tk[j] ",1,zeropatch"
			if (!num(1, p) || !num(1, z)) {
				printf "  %-30s not measured\n", tname[j] ":"
				continue
			}
			printf "  %-30s zczero %.4f instr/B, zeropatch %.4f; zczero/zeropatch %.2fx\n", tname[j] ":", ipb[1, z], ipb[1, p], ratio(1, z, p)
		}
		print "  (*) the patched /dev/zero splices into itself as /dev/null does"
		print "sendfile and splice into TCP on loopback, receiver included (instr/B, icount; send, send-zc: the same peers for both)"
		n = split("tcp-sendfile,65536 tcp-sendfile,1048576 tcp-splice,65536 tcp-splice,1048576", tk, " ")
		split("sendfile, 64K a call|sendfile, 1M a call|splice, 64K pipe|splice, 1M pipe", tname, "|")
		for (j = 1; j <= n; j++) {
			k = tk[j] ",1,"
			line = sprintf("  %-22s", tname[j] ":")
			split("zczero zero zeropatch send send-zc", dv, " ")
			for (d = 1; d <= 5; d++) {
				key = (d >= 4 ? "tcp-sendfile," substr(tk[j], index(tk[j], ",") + 1) ",1," : k) dv[d]
				if (num(1, key))
					line = line sprintf(" %s %.4f", dv[d], ipb[1, key])
				else if ((1, key) in gbps)
					line = line sprintf(" %s %s", dv[d], gbps[1, key])
			}
			print line
		}
	}' "${files[@]}"
}

rc=0
run_vm icount -i -f bench/readcall:/readcall -- -i -t 1 -b "${BENCH_BYTES:-64M}" || rc=1
# mmap-touch counts instructions: the icount run has it, this one not.
run_vm wallclock -b fio -f bench/fio:/fio -- -t 2 -b "${BENCH_BYTES:-512M}" -n 2 \
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
		echo "small reads, instructions per call (bench/readcall, icount VM; two rounds):"
		cat "$OUT/icount-readcall.txt"
	fi
	echo
	echo "clearing routine, native (the read path's verdict where the VM ran reads under TCG):"
	cat "$OUT/clear.txt"
	echo
	cat "$OUT/targets.txt"
} >"$OUT/summary.txt"
say "results in out/bench/ (summary.txt, targets.txt, *.csv, *.png)"
exit $rc
