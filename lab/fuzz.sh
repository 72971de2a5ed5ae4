#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make fuzz: zcdev_fuzz for longer than the lane runs it, in a VM of the
# lab, with the module reloaded under it.
#
#   lab/fuzz.sh [-k KERNEL] [-s SEED] [-t SECONDS] [-j THREADS]
#
# KERNEL is one of the lab's (default 7), SEED the run's seed (default:
# from the clock, printed), SECONDS how long (default 300).  A violation
# prints the seed and the sequence that reproduces it; the exit code is
# zcdev_fuzz's, or 124 when the guest did not finish.

set -euo pipefail
cd "$(dirname "$0")/.."
k=7 seed=$(date +%s) secs=300 jobs=3
while getopts "k:s:t:j:h" opt; do
	case $opt in
	k) k=$OPTARG ;;
	s) seed=$OPTARG ;;
	t) secs=$OPTARG ;;
	j) jobs=$OPTARG ;;
	*) sed -n '4,12s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
case "$seed$secs$jobs" in
*[!0-9]*) echo "fuzz: SEED, SECONDS and THREADS are whole numbers" >&2; exit 2 ;;
esac

OUT=$PWD/out/fuzz
rm -rf "$OUT"
mkdir -p "$OUT"
lab/vm/setup.sh "$k" >"$OUT/lab.log" 2>&1 ||
	{ tail "$OUT/lab.log" >&2; exit 1; }
make -s -C lab/selftests STATIC=1 OUTPUT="$OUT/t" >"$OUT/build.log" 2>&1 ||
	{ tail "$OUT/build.log" >&2; exit 1; }
make -s sources DEST="$OUT/src" >/dev/null
lab/vm/kmake.sh "$k" "$OUT/src" >"$OUT/kmake.log" 2>&1 ||
	{ tail "$OUT/kmake.log" >&2; exit 1; }
cat >"$OUT/guest.sh" <<EOT
insmod /zcdev.ko || exit 1
ZCDEV_KO=/zcdev.ko /t/zcdev_fuzz -s $seed -t $secs -j $jobs
EOT
echo "fuzz: kernel $k, seed $seed, $secs s"
lab/vm/run.sh -k "$k" -t $((secs + 600)) -f "$OUT/src/zcdev.ko:/zcdev.ko" \
	-f "$OUT/t:/t" "$OUT/guest.sh" | tee "$OUT/console" |
	grep -aE '^(#|[0-9]+ operations)' | grep -av '^# reference'
