#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kselftest packaging stage of the lane:
#
#   lab/stages/kselftest.sh [KERNEL_ID]     (default: 7, when the lane built it)
#
# Packs zcdev's selftests as kselftest does for a CI of one's own: "make
# -C lab/selftests install" (STATIC=1: the guest has no libc) and "gen_tar",
# whose tarball must hold run_kselftest.sh and kselftest-list.txt.  Then
# boots that kernel (lab/vm/run.sh) with the tarball and zcdev.ko, and
# nothing else of zcdev, and in the guest (busybox sh) unpacks it as a
# user would and runs kselftest's own run_kselftest.sh:
#
# - first without zcdev, neither loaded nor named by ZCDEV_KO: every test
#   of "-c zcdev", and "-t zcdev:zcdev_read" alone, must report "not ok",
#   a failure and not a skip (the gate, proven live);
# - then with zcdev loaded and ZCDEV_KO=/zcdev.ko, which the tests that
#   unload it reload: every program of
#   kselftest-list.txt must report "ok", none skipped, as many as the list
#   has, and inside each its own totals: the harness's "PASSED: N / N"
#   with no test of zcdev's skipped (the stock devices' reference variants
#   may), zcdev_fuzz's "0 violations".
#
# Prints TAP lines "ok - kselftest: ..." / "not ok - kselftest: ..." with
# the failing step's log as "#" lines, and exits non-zero when one failed.
# Logs: out/check/kselftest-KERNEL_ID in the lane, else
# out/kselftest-KERNEL_ID, replaced at each run.  The module: $ZCDEV_KSFT_KO
# (default out/check/KERNEL_ID/zcdev.ko, the lane's build).  The guest's time budget: $ZCDEV_KSFT_VM_SECS
# (default 600 s).

set -euo pipefail
cd "$(dirname "$0")/../.."
WHAT=kselftest
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh

one_kernel kselftest 7 "$@"
KO=${ZCDEV_KSFT_KO:-${LANE_OUT:-$PWD/out/check}/$k/zcdev.ko}
[ -f "$KO" ] ||
	{ echo "kselftest: no module $KO (set ZCDEV_KSFT_KO=path/zcdev.ko)" >&2; exit 2; }
OUT=${LANE_OUT:-$PWD/out}/kselftest-$k
INST=$OUT/install
TARBALL=$OUT/kselftest.tar.gz

rm -rf "$OUT"
mkdir -p "$OUT"

# --- install and gen_tar, on the host -----------------------------------
# A build of its own (OUTPUT=), so that the lane's static -m32 one is left
# as it is.
MAKE_ARGS=(-C lab/selftests STATIC=1 OUTPUT="$OUT/build" INSTALL_PATH="$INST")

# installed: the tree has kselftest's runner, the list and each program
installed() {
	local t n=0

	make "${MAKE_ARGS[@]}" install || return 1
	ls -lR "$INST"
	[ -x "$INST/run_kselftest.sh" ] && [ -f "$INST/kselftest/runner.sh" ] &&
	[ -f "$INST/zcdev/settings" ] && [ -s "$INST/kselftest-list.txt" ] || return 1
	while IFS= read -r t; do
		case $t in zcdev:*) ;; *) echo "not of collection zcdev: $t"; return 1 ;; esac
		if [ ! -x "$INST/zcdev/${t#zcdev:}" ]; then
			echo "$t: not installed"
			return 1
		fi
		n=$((n + 1))
	done <"$INST/kselftest-list.txt"
	# the list is the Makefile's: every program it builds, no other
	[ "$(make -s --no-print-directory "${MAKE_ARGS[@]}" emit_tests)" = \
	  "$(cat "$INST/kselftest-list.txt")" ]
}
if installed >"$OUT/install.log" 2>&1; then
	result ok "make -C lab/selftests install STATIC=1: run_kselftest.sh, kselftest/runner.sh, zcdev/settings and $(wc -l <"$INST/kselftest-list.txt") tests in kselftest-list.txt"
else
	result fail "make -C lab/selftests install STATIC=1: run_kselftest.sh, kselftest/runner.sh, zcdev/settings and the tests of kselftest-list.txt" \
		"$OUT/install.log"
	finish
fi

tarred() {
	make "${MAKE_ARGS[@]}" gen_tar TAR="$TARBALL" &&
	tar -tzf "$TARBALL" | tee "$OUT/tar-list.txt" >/dev/null &&
	grep -qx './run_kselftest.sh' "$OUT/tar-list.txt" &&
	grep -qx './kselftest-list.txt' "$OUT/tar-list.txt" &&
	grep -qx './kselftest/runner.sh' "$OUT/tar-list.txt" &&
	grep -qx './zcdev/zcdev_read' "$OUT/tar-list.txt"
}
if tarred >"$OUT/gen_tar.log" 2>&1; then
	result ok "make -C lab/selftests gen_tar: $(basename "$TARBALL") holds run_kselftest.sh, kselftest/runner.sh, kselftest-list.txt and zcdev/"
else
	result fail "make -C lab/selftests gen_tar: kselftest.tar.gz holds run_kselftest.sh, kselftest/runner.sh, kselftest-list.txt and zcdev/" \
		"$OUT/gen_tar.log"
	finish
fi
LIST=$INST/kselftest-list.txt
ntests=$(wc -l <"$LIST")

# --- the guest ----------------------------------------------------------
# Each part's output follows a "==KSFT== PART" line.  run_kselftest.sh's
# own exit code says nothing of its tests' (6.1's runner exits 0).
cat >"$OUT/guest.sh" <<'EOF'
echo "# kernel $(uname -r)"
# runner.sh writes the tests' output to /dev/stdout, which udev makes and
# devtmpfs does not: without it, it would fill a file of that name
[ -e /dev/stdout ] || ln -s /proc/self/fd/1 /dev/stdout
mkdir /ksft && cd /ksft && tar -xzf /kselftest.tar.gz || exit 1
echo "==KSFT== list"
./run_kselftest.sh --list
echo "==KSFT== gate-c"
./run_kselftest.sh -c zcdev
echo "==KSFT== gate-t"
./run_kselftest.sh -t zcdev:zcdev_read
echo "==KSFT== run"
insmod /zcdev.ko
ZCDEV_KO=/zcdev.ko ./run_kselftest.sh
echo "==KSFT== end"
EOF

# In the lane, kernel 7's guest (stage kernel:7) has made the full counts
# on this kernel, the stock devices' references included: a sixteenth of
# them here, and no references (ZCDEV_SCALE, ZCDEV_REFS: lab/selftests/zcdev_util.h).
scale=${ZCDEV_SCALE:-1} refs=${ZCDEV_REFS:-1}
[ -z "${LANE_OUT:-}" ] || scale=${ZCDEV_SCALE:-16} refs=${ZCDEV_REFS:-0}
rc=0
# coreutils' timeout: runner.sh enforces settings' timeout with
# /usr/bin/timeout --foreground, which busybox's lacks
lab/vm/run.sh -k "$k" -t "${ZCDEV_KSFT_VM_SECS:-600}" -b timeout \
	-a "ZCDEV_SCALE=$scale ZCDEV_REFS=$refs" -f "$KO:/zcdev.ko" -f "$TARBALL:/kselftest.tar.gz" "$OUT/guest.sh" \
	>"$OUT/console.log" 2>&1 || rc=$?
console_parts "$OUT/console.log" "$OUT/guest.log" "$OUT/dmesg.log"
# part NAME: what the guest printed in that part
for p in list gate-c gate-t run; do
	awk -v p="$p" '/^==KSFT== / { on = ($2 == p); next } on' "$OUT/guest.log" >"$OUT/$p.log"
done
if [ $rc -eq 124 ] || ! grep -q '^==KSFT== end$' "$OUT/guest.log"; then
	tail -40 "$OUT/console.log" >"$OUT/tail.log"
	result fail "$k: the VM ran to its end" "$OUT/tail.log"
else
	result ok "$k: the VM ran to its end"
fi

if [ -s "$OUT/list.log" ] && diff "$LIST" "$OUT/list.log" >"$OUT/list.diff" 2>&1; then
	result ok "$k: run_kselftest.sh --list prints the $ntests tests of kselftest-list.txt"
else
	result fail "$k: run_kselftest.sh --list prints the $ntests tests of kselftest-list.txt" \
		"$OUT/list.diff"
fi

# results LOG: the runner's verdict lines, "ok 1 selftests: zcdev: NAME"
results() {
	grep -E '^(not )?ok [0-9]+ selftests: ' "$1" || true
}

# --- the gate: no zcdev, every test fails -------------------------------
gate() {		# gate LOG N: N results, all "not ok", none a skip
	local n
	n=$(results "$1" | wc -l)
	results "$1"
	[ "$n" -eq "$2" ] && grep -qx "1\.\.$2" "$1" &&
	[ "$(results "$1" | grep -c '^not ok ')" -eq "$2" ] &&
	! results "$1" | grep 'SKIP' >/dev/null
}
if gate "$OUT/gate-c.log" "$ntests" >"$OUT/gate-c.out" 2>&1; then
	result ok "$k: gate: without zcdev, run_kselftest.sh -c zcdev reports all $ntests tests not ok (failed, not skipped)"
else
	result fail "$k: gate: without zcdev, run_kselftest.sh -c zcdev reports all $ntests tests not ok (failed, not skipped)" \
		"$OUT/gate-c.log"
fi
if gate "$OUT/gate-t.log" 1 >"$OUT/gate-t.out" 2>&1 &&
   grep -q '^not ok 1 selftests: zcdev: zcdev_read' "$OUT/gate-t.log"; then
	result ok "$k: gate: without zcdev, run_kselftest.sh -t zcdev:zcdev_read reports it not ok (failed, not skipped)"
else
	result fail "$k: gate: without zcdev, run_kselftest.sh -t zcdev:zcdev_read reports it not ok (failed, not skipped)" \
		"$OUT/gate-t.log"
fi

# --- the run: every program ok, and its own totals ----------------------
# program NAME: that program's part of the run, its verdict line last
program() {
	awk -v t="$1" '$0 == "# selftests: zcdev: " t { on = 1 }
		on { print }
		on && /^(not )?ok [0-9]+ selftests: / { exit }' "$OUT/run.log"
}

# inner NAME: its own totals: the harness's "PASSED: N / N" and no zcdev
# test skipped (the 6.1 harness names a skipped test only in its "RUN"
# line), or zcdev_fuzz's "0 violations"
inner() {
	local name=$1 totals
	if [ "${name%_32}" = zcdev_fuzz ]; then
		grep -E '^# [0-9]+ operations, .* 0 violations$' "$OUT/prog.log"
		return
	fi
	totals=$(grep -E '^# # (PASSED|FAILED): [0-9]+ / [0-9]+ tests passed' "$OUT/prog.log") || return 1
	echo "$totals"
	awk '/^# #  RUN / { run = $4 }
		/^# ok [0-9]+ .*# SKIP/ && run !~ /\.ref_(zero|full)\./ {
			print "skipped, but zcdev must not skip: " run ": " $0; bad = 1 }
		END { exit bad }' "$OUT/prog.log" || return 1
	[[ $totals =~ ^#\ #\ PASSED:\ ([0-9]+)\ /\ ([0-9]+)\  ]] &&
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]
}

while IFS= read -r t; do
	name=${t#zcdev:}
	program "$name" >"$OUT/prog.log"
	cp "$OUT/prog.log" "$OUT/run-$name.log"
	verdict=$(tail -1 "$OUT/prog.log")
	if [[ $verdict =~ ^ok\ [0-9]+\ selftests:\ zcdev:\ $name$ ]] &&
	   inner "$name" >"$OUT/inner-$name.log" 2>&1; then
		result ok "$k: run_kselftest.sh, ZCDEV_KO set: $t ok ($(head -1 "$OUT/inner-$name.log" | sed 's/^[# ]*//'))"
	else
		[ ! -f "$OUT/inner-$name.log" ] || cat "$OUT/inner-$name.log" >>"$OUT/prog.log"
		result fail "$k: run_kselftest.sh, ZCDEV_KO set: $t ok, its own totals clean" \
			"$OUT/prog.log"
	fi
done <"$LIST"
rm -f "$OUT/prog.log"

counted() {		# the runner's plan and verdicts: all ok, as many as listed
	results "$OUT/run.log"
	grep -qx "1\.\.$ntests" "$OUT/run.log" &&
	[ "$(results "$OUT/run.log" | wc -l)" -eq "$ntests" ] &&
	[ "$(results "$OUT/run.log" | grep -cE '^ok [0-9]+ selftests: zcdev: [a-z0-9_]+$')" -eq "$ntests" ]
}
if counted >"$OUT/counted.log" 2>&1; then
	result ok "$k: run_kselftest.sh, ZCDEV_KO set: 1..$ntests, all $ntests ok, none skipped"
else
	result fail "$k: run_kselftest.sh, ZCDEV_KO set: 1..$ntests, all $ntests ok, none skipped" \
		"$OUT/counted.log"
fi

grep -E 'WARNING:|BUG:|Oops|Call Trace:|general protection fault' \
	"$OUT/dmesg.log" >"$OUT/bad-dmesg.log" || true
if [ -s "$OUT/dmesg.log" ] && [ ! -s "$OUT/bad-dmesg.log" ]; then
	result ok "$k: kernel log free of warnings and oopses"
else
	result fail "$k: kernel log free of warnings and oopses" "$OUT/bad-dmesg.log"
fi

finish
