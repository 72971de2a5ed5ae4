#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The lane's gates, proven live: a gate that has never failed is not yet a
# gate.  On the newest stock kernel built (7, else the last one):
#
# - the judge (lab/vm/judge.sh) is fed copies of that kernel's real run,
#   each doctored one way: a guest that stops half-way, skips one step,
#   has a zczero test skip or fail (whose diagnostics it must show), or
#   logs a warning; it must fail each; and a line that a kernel message
#   cut in two it must read whole, as it reads the run;
# - every planted fault of lab/faults applies to the tree as it is, and
#   a patch that no longer applies fails the build with its name (one
#   doctored so);
# - a module with a planted WARN_ON_ONCE() on the read path
#   (lab/faults/warn.patch) must fail a guest, with the lane's command
#   line and with panic_on_warn=0, where the kernel-log gate alone stands
#   between it and a pass;
# - a module whose read() leaves a byte at 1 now and then
#   (lab/faults/dirty.patch) logs nothing: zcdev_fuzz alone can see it,
#   and must;
# - sparse warns of a __user pointer cast away (lab/faults/sparse.patch),
#   on 6.1 and on 7.x;
# - a guest that goes silent is ended by run.sh's watchdog, which asks it
#   for its blocked tasks first, and the judge shows them.

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
# A kernel message that cuts a zczero test's line after its first letter:
# the judge reads the line whole (lab/vm/unsplit.sh), as the run it was,
# and without that it misses the line.
awk "!done && $ZCZERO_OK"' {
	print "o[   10.000000] zcdev: a planted message"
	$0 = substr($0, 2); done = 1 } 1' "$real" >"$G/split.console"
lab/vm/judge.sh gate "$real" 0 >"$G/real.tap"
lab/vm/judge.sh gate "$G/split.console" 0 >"$G/split.tap"
JUDGE_UNSPLIT="cat" lab/vm/judge.sh gate "$G/split.console" 0 >"$G/split-raw.tap"
if cmp -s "$G/real.tap" "$G/split.tap" && grep -q '^not ok' "$G/split-raw.tap"; then
	result ok "gate: the judge reads a TAP line that a kernel message cut, and needs to"
else
	diff "$G/real.tap" "$G/split.tap" >"$G/split.diff"
	result fail "gate: the judge reads a TAP line that a kernel message cut, and needs to" \
		"$G/split.diff"
fi

# Every planted fault applies (build() applies it the same way), and one
# that no longer does fails its build with one line that names it: warn's
# patch with a line of its context changed.
applies() {
	local p left=
	for p in lab/faults/*.patch; do
		names="$names $(basename "$p" .patch)"
		rm -rf "$G/applies"
		make -s sources DEST="$G/applies" >/dev/null &&
		patch -d "$G/applies" -p1 -F0 -s -f --dry-run <"$p" >>"$G/applies.log" 2>&1 ||
			left="$left $(basename "$p" .patch)"
	done
	rm -rf "$G/applies"
	[ -z "$left" ] || { echo "no longer apply:$left" >>"$G/applies.log"; return 1; }
}
names=
: >"$G/applies.log"
if applies; then
	result ok "gate: every planted fault applies:$names"
else
	result fail "gate: every planted fault applies" "$G/applies.log"
fi
mkdir -p "$G/faults"
sed '0,/^@@/{/^@@/{n;s/^ /&planted drift /}}' lab/faults/warn.patch \
	>"$G/faults/broken.patch"
what="gate: a planted fault that no longer applies fails its build, named ($k)"
if FAULTS=$G/faults FAULT=broken build "$k" "$G/broken-src" 2>/dev/null; then
	result fail "$what" "$G/broken-src.log"
elif [ "$(cat "$G/broken-src.log")" = "fault broken: $G/faults/broken.patch no longer applies" ]; then
	result ok "$what: $(cat "$G/broken-src.log")"
else
	result fail "$what" "$G/broken-src.log"
fi

# The planted WARN_ON_ONCE(): with the lane's command line, and with
# panic_on_warn=0.
if FAULT=warn build "$k" "$G/warn-src"; then
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
if FAULT=dirty build "$k" "$G/dirty-src"; then
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

# sparse sees a __user pointer cast away (lab/faults/sparse.patch), on a
# kernel of bookworm's sparse and on 7.x, where sid's checks.
kks=$k
[ "$k" = 6.1 ] || ! grep -qx 6.1 "$LANE_OUT/built" || kks="6.1 $k"
for kk in $kks; do
	what="gate: sparse fails a planted __user cast ($kk)"
	if FAULT=sparse build "$kk" "$G/sparse-$kk" C=2; then
		result fail "$what" "$G/sparse-$kk.log"
	elif grep -q "warning: cast removes address space '__user'" "$G/sparse-$kk.log"; then
		result ok "$what: $(grep -m1 'address space' "$G/sparse-$kk.log" | sed 's|.*/||')"
	else
		result fail "$what" "$G/sparse-$kk.log"
	fi
done

# A guest that goes silent: the watchdog ends it after asking it for its
# blocked tasks, and the judge shows them.
printf 'echo going quiet\nexec sleep 600\n' >"$G/quiet.sh"
lab/vm/run.sh -k "$k" -w 10 -t 300 "$G/quiet.sh" >"$G/quiet.console" 2>&1
lab/vm/judge.sh "$k" "$G/quiet.console" $? >"$G/quiet.tap"
what="gate: a silent guest is ended and shows its blocked tasks ($k)"
if grep -q '^#   it printed nothing for 10 s' "$G/quiet.tap" &&
   grep -q '^#   going quiet$' "$G/quiet.tap" &&
   grep -q 'sysrq: Show Blocked State' "$G/quiet.tap"; then
	result ok "$what"
else
	result fail "$what" "$G/quiet.tap"
fi
exit $failed
