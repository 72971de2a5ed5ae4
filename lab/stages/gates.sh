#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lane's gates, proven live: a gate that has never failed is not yet a
# gate.  On the newest stock kernel built (7, else the last one):
#
# - the judge (lab/vm/judge.sh) is fed copies of that kernel's real run,
#   each doctored one way: a guest that stops half-way, skips one step,
#   has a zczero test skip or fail (whose diagnostics it must show), or
#   logs a warning; it must fail each;
# - a module with a planted WARN_ON_ONCE() on the read path
#   (ZCDEV_FAULT=warn, zcdev_fault.h) must fail a guest, with the lane's
#   command line and with panic_on_warn=0, where the kernel-log gate alone
#   stands between it and a pass;
# - a module whose read() leaves a byte at 1 now and then
#   (ZCDEV_FAULT=dirty) logs nothing: zcdev_fuzz alone can see it, and must.

set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh
[ -s "${LANE_OUT:-}/built" ] || exit 0
in_time "gates" || exit 1

k=$(gate_kernel)
[ -n "$k" ] || exit 0
real=$LANE_OUT/$k/guest.console
G=$LANE_OUT/gates
mkdir -p "$G"
if grep -q '^not ok' "$LANE_OUT/$k/guest.tap"; then
	echo "# the gate proofs below doctor $k's run, which failed already"
fi

judged() {		# judged WHAT CONSOLE: the judge must fail it
	lab/vm/judge.sh gate "$2" 0 >"$2.tap"
	if grep -q '^not ok' "$2.tap"; then
		result ok "gate: the judge fails $1"
	else
		result fail "gate: the judge fails $1" "$2.tap"
	fi
}

# Stops half-way through the guest's output; the end of the run faked.
begin=$(grep -n '^==ZCVM== begin$' "$real" | cut -d: -f1)
end=$(grep -n '^==ZCVM== rc=' "$real" | cut -d: -f1)
{ head -n $(((${begin:-0} + ${end:-0}) / 2)) "$real"
  sed -n '/^==ZCVM== rc=/,$p' "$real"; } >"$G/early.console"
judged "a guest that stops half-way" "$G/early.console"
# One lane step gone, all else intact.
awk '/^ok - / && !done { done = 1; next } 1' "$real" >"$G/step.console"
judged "a guest that skips one step" "$G/step.console"
# One zczero test skipped.
ZCZERO_OK='/^ok [0-9]+ [a-z0-9_.]+\.zczero\.[a-z0-9_]+$/'
awk "!done && $ZCZERO_OK"' { $0 = $0 " # SKIP planted"; done = 1 } 1' \
	"$real" >"$G/skip.console"
judged "a zczero test that skips" "$G/skip.console"
# One zczero test failed, with its diagnostics, which must be shown.
awk "!done && $ZCZERO_OK"' {
	print "# planted.c:1:planted:Expected 0 (0) == 1 (1)"
	print "# planted.c:1:planted:the planted reason"
	sub(/^ok/, "not ok"); done = 1 } 1' "$real" >"$G/fail.console"
judged "a zczero test that fails" "$G/fail.console"
if grep -q '^#   # planted.c:1:planted:the planted reason$' "$G/fail.console.tap"; then
	result ok "gate: the judge shows a failed test's diagnostics"
else
	result fail "gate: the judge shows a failed test's diagnostics" "$G/fail.console.tap"
fi
# A warning in the middle of the run, not in the final dmesg.
awk '!done && /^ok - / { print "[   10.000000] WARNING: CPU: 0 PID: 1 at planted.c:1 planted"; done = 1 } 1' \
	"$real" >"$G/warn.console"
judged "a kernel warning on the console" "$G/warn.console"

# The planted WARN_ON_ONCE(): with the lane's command line, and with
# panic_on_warn=0.
if build "$k" "$G/warn-src" ZCDEV_FAULT=warn; then
	guest "$k" "$G" fault-warn "$G/warn-src/zcdev.ko" lab/guest/smoke.sh
	if grep -q '^not ok' "$G/fault-warn.tap"; then
		result ok "gate: a planted WARN_ON_ONCE() fails the run ($k)"
	else
		result fail "gate: a planted WARN_ON_ONCE() fails the run ($k)" "$G/fault-warn.tap"
	fi
	guest "$k" "$G" fault-warn-nopanic "$G/warn-src/zcdev.ko" lab/guest/smoke.sh \
		-a panic_on_warn=0
	if grep -q '^not ok - .*kernel log free' "$G/fault-warn-nopanic.tap" &&
	   grep -q '^ok - .*the VM ran to its end' "$G/fault-warn-nopanic.tap"; then
		result ok "gate: the kernel-log gate alone fails a planted WARN_ON_ONCE() ($k, panic_on_warn=0)"
	else
		result fail "gate: the kernel-log gate alone fails a planted WARN_ON_ONCE() ($k, panic_on_warn=0)" \
			"$G/fault-warn-nopanic.tap"
	fi
else
	result fail "gate: a module with a planted WARN_ON_ONCE() builds ($k)" "$G/warn-src.log"
fi

# The planted dirty read(): zcdev_fuzz, 10 s of seed 1, must report the
# violation and exit 1.
if build "$k" "$G/dirty-src" ZCDEV_FAULT=dirty; then
	cat >"$G/fuzz.sh" <<-'EOT'
	insmod /zcdev.ko || exit 1
	ZCDEV_KO=/zcdev.ko /t/zcdev_fuzz -s 1 -t 10
	echo "zcdev_fuzz: exit $?"
	EOT
	lab/vm/run.sh -k "$k" -t 300 -f "$G/dirty-src/zcdev.ko:/zcdev.ko" \
		-f "$LANE_OUT/selftests:/t" "$G/fuzz.sh" >"$G/fault-dirty.console" 2>&1
	c=$G/fault-dirty.console
	if grep -q '^# violation.*: ' "$c" &&
	   grep -qE '^[0-9]+ operations, .*, [1-9][0-9]* violations$' "$c" &&
	   grep -qx 'zcdev_fuzz: exit 1' "$c"; then
		result ok "gate: zcdev_fuzz fails a planted read() that is not all zeros ($k): $(grep -m1 '^# violation' "$c" | cut -c3-120)"
	else
		result fail "gate: zcdev_fuzz fails a planted read() that is not all zeros ($k)" "$c"
	fi
else
	result fail "gate: a module with a planted dirty read() builds ($k)" "$G/dirty-src.log"
fi
exit $failed
