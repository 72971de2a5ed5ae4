#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Judge one guest run of the lane from its console (what lab/vm/run.sh
# printed) and print the verdicts as TAP lines without numbers, which
# lab/check.sh counts:
#
#   lab/vm/judge.sh LABEL CONSOLE VM-EXIT-CODE
#
# - the guest ran to its end: no hang, panic, watchdog or time budget;
# - every TAP line the guest printed: the selftests' and the lane's steps.
#   The stock devices' variants (ref_zero, ref_full) are a reference for
#   the reader, printed as "# reference:" comments and never counted; a
#   zcdev variant that skips fails, since zcdev lacks nothing it offers;
# - the guest ran every test and step it planned: the "1..N" plans of the
#   selftests and of guest-check add up to the results it printed, so a
#   guest that stops early or skips a step fails even without a "not ok";
# - the kernel log: the kernel's lines on the whole console and the final
#   dmesg are free of warnings, oopses, lockdep, KASAN and UBSAN reports.

set -uo pipefail

# What the kernel log must never say: BAD_LOG.
# shellcheck source=lab/vm/bad-log.sh
. "$(dirname "$0")/bad-log.sh"
BAD_LOG=${BAD_LOG:-}
# A kernel line on the console: the timestamp of printk.time=1.
KLINE='\[ *[0-9]+\.[0-9]+\] '

[ $# -eq 3 ] || { echo "usage: lab/vm/judge.sh LABEL CONSOLE VM-EXIT-CODE" >&2; exit 2; }
label=$1 console=$2 vmrc=$3
[ -r "$console" ] || { echo "not ok - $label: no console log $console"; exit 0; }

ok() { echo "ok - $label: $1"; }
notok() { echo "not ok - $label: $1"; }

# "ok 12 - name", "ok 12 name" -> "name"
tap_name() {
	sed -E 's/^(not ok|ok)( [0-9]+)?( -)? //' <<<"$1"
}

# [program.]fixture.variant.test of a stock device (variant ref_*): a
# reference, not a test.
is_reference() {
	[[ $1 =~ ^([a-z0-9_]+\.)?[a-z0-9_]+\.ref_[a-z0-9_]+\. ]]
}

# The console with the lines that a kernel message cut made whole
# (JUDGE_UNSPLIT=cat: as it is, for the gate that proves it matters).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
${JUDGE_UNSPLIT:-"$(dirname "$0")/unsplit.sh"} <"$console" >"$tmp/console"
console=$tmp/console

accel=$(sed -n 's/^==ZCVM== accel=//p' "$console" | head -1)

# A kernel that crashed while it booted, before the guest's payload began,
# was booted again by lab/vm/run.sh: the second boot is judged, the first
# reported.
if grep -q '^==ZCVM== retry: ' "$console"; then
	sed -n 's/^==ZCVM== retry: /# vm-run booted the kernel twice: /p' "$console"
	awk '/^==ZCVM== retry: / { n = NR } { line[NR] = $0 }
		END { for (i = n + 1; i <= NR; i++) print line[i] }' "$console" >"$tmp/second"
	console=$tmp/second
fi

# --- did it end? -------------------------------------------------------
ended=$(sed -n 's/^==ZCVM== ended: //p' "$console")
if [ "$vmrc" != 124 ] && grep -q '^==ZCVM== end$' "$console"; then
	ok "the VM ran to its end under ${accel:-?} (no hang, no panic)"
else
	notok "the VM ran to its end under ${accel:-?} (no hang, no panic)"
	echo "#   ${ended:-the guest did not finish}; the console's last lines:"
	# a silent guest's: what it printed last, then its blocked tasks
	# (lab/vm/run.sh asked with SysRq w)
	awk '/sysrq: Show Blocked State/ { n = NR } { line[NR] = $0 }
		END { if (!n) n = NR + 1
		      for (i = n - 40; i < n; i++) if (i > 0) print line[i]
		      for (i = n; i < n + 60 && i <= NR; i++) print line[i] }' "$console" |
		grep -av '^==ZCVM== ended' | cut -c1-200 | sed 's/^/#   /'
fi

# --- the guest's own TAP lines -----------------------------------------
# The harness prints a failure's diagnostics before its verdict, the
# lane's steps after it.
planned=0 seen=0 diag=() after='' run=''
while IFS= read -r line; do
	case $line in
	"#  RUN "*)	# older harnesses name a skipped test only here
		run=$(awk '{ print $3 }' <<<"$line") ;;&
	1..[0-9]*)
		planned=$((planned + ${line#1..})) ;;
	"not ok "*|"ok "*)
		seen=$((seen + 1))
		name=$(tap_name "$line" | sed 's/ *# SKIP.*//')
		name=${name:-$run}
		if is_reference "$name"; then
			echo "# reference: $line"
			diag=() after=
			continue
		fi
		case $line in
		"not ok "*)
			notok "$name"
			# its last 25 lines ("${diag[@]: -25}" is empty when fewer)
			first=$((${#diag[@]} > 25 ? ${#diag[@]} - 25 : 0))
			[ ${#diag[@]} -eq 0 ] || printf '#   %s\n' "${diag[@]:first}"
			diag=() after=1 ;;
		*"# SKIP"*)
			notok "$name: skipped, but zcdev must not skip"
			echo "#   ${line##*# SKIP}"
			diag=() after= ;;
		*)
			ok "$name"
			diag=() after= ;;
		esac ;;
	"# report: "*)
		echo "# $label: ${line#\# report: }" ;;
	"#"*)
		if [ -n "$after" ]; then echo "#   $line"; else diag+=("$line"); fi ;;
	esac
done < <(sed -n '/^==ZCVM== begin$/,/^==ZCVM== rc=/p' "$console" | sed '1d;$d')

if [ $planned -gt 0 ] && [ $seen -eq $planned ]; then
	ok "the guest ran all $planned planned tests and steps"
else
	notok "the guest ran all $planned planned tests and steps (it reported $seen)"
fi

# --- the kernel log ----------------------------------------------------
if [ -z "$BAD_LOG" ]; then
	notok "kernel log: the judge has no list of what it must never say (lab/vm/bad-log.sh)"
	exit 0
fi
bad=$(grep -aE "$KLINE" "$console" | grep -aE "$BAD_LOG")
dmesg_lines=$(sed -n '/^==ZCVM== dmesg$/,/^==ZCVM== end$/p' "$console" | grep -acE "$KLINE")
if [ -z "$bad" ] && [ "$dmesg_lines" -gt 0 ]; then
	ok "kernel log free of warnings, oopses, lockdep, KASAN and UBSAN reports"
else
	notok "kernel log free of warnings, oopses, lockdep, KASAN and UBSAN reports"
	[ -n "$bad" ] || echo "#   no final dmesg: the guest did not get that far"
	grep -aE -A12 "$KLINE.*($BAD_LOG)" "$console" | awk '!seen[$0]++' |
		head -40 | cut -c1-200 | sed 's/^/#   /'
fi
