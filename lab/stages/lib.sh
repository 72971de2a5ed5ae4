# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What the lane's scripts of what users install share (dkms-check,
# install-check, kselftest-check, deb-check): sourced by them, after they
# set WHAT, the prefix of their TAP lines ("ok - WHAT: ...").  They run
# from the top of the tree.

# shellcheck source=scripts/bad-log
. scripts/bad-log

# shellcheck disable=SC2034	# read by the scripts that source this
failed=0

# result VERDICT NAME [LOG]: one TAP line; a failure shows the log's tail.
result() {
	if [ "$1" = ok ]; then
		echo "ok - $WHAT: $2"
	else
		failed=1
		echo "not ok - $WHAT: $2"
		[ -n "${3:-}" ] && [ -s "$3" ] && tail -30 "$3" | sed 's/^/#   /'
	fi
	return 0
}

# step NAME LOG CMD...: run CMD with its output in LOG, and say how it went.
step() {
	local name=$1 log=$2
	shift 2
	if "$@" >"$log" 2>&1; then
		result ok "$name"
	else
		result fail "$name" "$log"
	fi
}

# modprobe_guest K MODULES KO V SRCV LOGS: boot the lab's kernel K with
# the module tree MODULES as /lib/modules (scripts/guest-modprobe), where
# KO (/lib/modules/<release>/...) must be the only zcdev.ko and modprobe
# must load it: version V, srcversion SRCV.  Its TAP lines with K named,
# then whether the VM ran to its end and reported all six, and the kernel
# log.  The console and the rest are LOGS.console, LOGS.guest, ...  With
# PLANT_LOG=1 the guest writes a warning into its kernel log, for a gate.
modprobe_guest() {
	local k=$1 modules=$2 ko=$3 v=$4 srcv=$5 logs=$6 rel rc=0 steps=0 line

	rel=${ko#/lib/modules/}
	rel=${rel%%/*}
	{
		echo "WHAT=$WHAT KREL='$rel' KO='$ko' V='$v' SRCV='$srcv' PLANT_LOG='${PLANT_LOG:-}'"
		cat scripts/guest-modprobe
	} >"$logs.sh"
	scripts/vm-run -k "$k" -t 300 -f "$modules:/lib/modules" "$logs.sh" \
		>"$logs.console" 2>&1 || rc=$?
	sed -n '/^==ZCVM== begin$/,/^==ZCVM== rc=/p' "$logs.console" | sed '1d;$d' >"$logs.guest"
	sed -n '/^==ZCVM== dmesg$/,/^==ZCVM== end$/p' "$logs.console" >"$logs.dmesg"
	if [ $rc -eq 124 ] || [ ! -s "$logs.guest" ]; then
		tail -40 "$logs.console" >"$logs.tail"
		result fail "$k: the VM ran to its end" "$logs.tail"
	else
		result ok "$k: the VM ran to its end"
	fi
	while IFS= read -r line; do
		case $line in
		"ok - $WHAT: "*|"not ok - $WHAT: "*)
			steps=$((steps + 1))
			# shellcheck disable=SC2034
			case $line in not*) failed=1 ;; esac
			echo "${line/ - $WHAT: / - $WHAT: $k: }" ;;
		"#   "*)
			echo "$line" ;;
		esac
	done <"$logs.guest"
	[ $steps -eq 6 ] || result fail "$k: all 6 guest steps reported ($steps)" "$logs.guest"
	grep -E "$BAD_LOG" "$logs.dmesg" >"$logs.bad-dmesg" || true
	if [ -s "$logs.dmesg" ] && [ ! -s "$logs.bad-dmesg" ]; then
		result ok "$k: kernel log free of warnings and oopses"
	else
		result fail "$k: kernel log free of warnings and oopses" "$logs.bad-dmesg"
	fi
}
