#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: the whole test lane, on a fresh Debian 12 machine.
#
#   scripts/check [KERNEL...]        (default: 6.1 6.12 7 7-rt debug)
#
# With ZCDEV_IMAGE=<bzImage> and ZCDEV_IMAGE_KDIR=<its build tree> ("make
# check IMAGE=... KDIR=..."), the kernel "user" is that kernel
# (scripts/user-kernel; ZCDEV_IMAGE_BROOT when its compiler is not the
# host's), and the default list is that kernel alone.
#
# Installs what it needs (scripts/lab-setup), lints the tree, and for each
# kernel builds zcdev with W=1 and with sparse, boots the kernel in QEMU,
# loads the module, runs the selftests and the stress-ng peer suite,
# reloads it, and judges the run (scripts/judge): every planned test and
# step reported, the kernel log clean on the console and in dmesg.  Then
# it proves its own gates: a run that stops early, skips, or logs a
# warning, and a module with a planted WARN_ON_ONCE(), must all fail.
# Last, what users install, each a script of its own: DKMS on 6.1, 6.12
# and 7.x (scripts/dkms-check), make install (install-check), kselftest's
# packaging run by run_kselftest.sh (kselftest-check), the Debian package
# (deb-check); and zcdev built with W=1 against sid's newest headers, the
# early warning of kernel API changes.
# Prints TAP and closes with "N passed, N failed, N skipped".  Logs are in
# out/check/.
#
# The debug kernel (KASAN, lockdep, kmemleak, ...: scripts/debug-kernel)
# is built in the background while the stock kernels run, and runs last;
# its own gates prove that a planted use-after-free fails the run through
# KASAN and a planted leak through kmemleak.
#
# Time is bounded: KVM is used only where a test guest proves it works
# (scripts/vm-accel), a guest that prints nothing for a minute is ended,
# each guest has a budget (CHECK_VM_SECS, default 1200 s; on the debug
# kernel CHECK_DEBUG_VM_SECS, default 2700 s) that never
# reaches past the lane's own (CHECK_SECS, default 5100 s: CI allows 5400),
# and once that is used up the stages left are reported as failed instead
# of run, so that the lane always closes with its summary.

set -uo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
LAB=${ZCDEV_LAB:-/var/cache/zcdev-lab}
OUT=$TOP/out/check
KERNELS=("$@")
if [ ${#KERNELS[@]} -eq 0 ]; then
	KERNELS=(6.1 6.12 7 7-rt debug)
	[ -z "${ZCDEV_IMAGE:-}" ] || KERNELS=(user)
fi
VERSION=$(git describe --tags --always --dirty 2>/dev/null || cat VERSION)
CHECK_SECS=${CHECK_SECS:-5100}
CHECK_VM_SECS=${CHECK_VM_SECS:-1200}
CHECK_DEBUG_VM_SECS=${CHECK_DEBUG_VM_SECS:-2700}

pass=0 fail=0 skip=0 n=0

# tap VERDICT NAME [DETAIL-FILE]: one TAP line, details as comments.
tap() {
	n=$((n + 1))
	case $1 in
	ok)	pass=$((pass + 1)); echo "ok $n - $2" ;;
	skip)	skip=$((skip + 1)); echo "ok $n - $2 # SKIP" ;;
	*)	fail=$((fail + 1)); echo "not ok $n - $2"
		[ -n "${3:-}" ] && [ -s "$3" ] && tail -40 "$3" | sed 's/^/#   /' ;;
	esac
}

# relay: count the unnumbered TAP lines of a stage (scripts/judge and
# the like) on standard input; pass its comments through.
relay() {
	local line
	while IFS= read -r line; do
		case $line in
		"not ok - "*)		tap fail "${line#not ok - }" ;;
		"ok - "*"# SKIP"*)	tap skip "$(sed 's/ *# SKIP.*//' <<<"${line#ok - }")" ;;
		"ok - "*)		tap ok "${line#ok - }" ;;
		"#"*)			echo "$line" ;;
		esac
	done
}

# in_time NAME: whether there is time left for stage NAME; if not, it
# fails, so that the lane closes with its summary rather than be killed.
in_time() {
	[ "$SECONDS" -lt "$CHECK_SECS" ] && return 0
	tap fail "$1: not run, the lane's time budget of $CHECK_SECS s is spent"
	return 1
}

# guest K DIR NAME KO SCRIPT [VM-RUN ARGS...]: boot kernel K with module
# KO and the lane's test programs, run SCRIPT, and judge the run; the
# console goes to DIR/NAME.console, the verdicts to DIR/NAME.tap.
guest() {
	local k=$1 dir=$2 name=$3 ko=$4 script=$5 rc secs budget=$CHECK_VM_SECS
	shift 5
	[ "$k" != debug ] || budget=$CHECK_DEBUG_VM_SECS
	secs=$((CHECK_SECS - SECONDS))
	[ "$secs" -le "$budget" ] || secs=$budget
	[ "$secs" -gt 0 ] || secs=1
	scripts/vm-run -k "$k" -t "$secs" "$@" \
		-f "$ko:/zcdev.ko" \
		-f "$OUT/selftests:/t" -f scripts/guest-lib:/guest-lib \
		-b stress-ng -b trinity -b setpriv "$script" >"$dir/$name.console" 2>&1
	rc=$?
	scripts/judge "$k" "$dir/$name.console" $rc >"$dir/$name.tap"
}

# build K DIR [KBUILD ARGS...]: the module's sources in DIR, built for K.
build() {
	local k=$1 dir=$2
	shift 2
	mkdir -p "$dir"
	make -s sources DEST="$dir" >/dev/null &&
	scripts/kmake "$k" "$dir" ZCDEV_VERSION="$VERSION" "$@" >"$dir.log" 2>&1 &&
	! grep -qE 'warning:|error:' "$dir.log"
}

rm -rf "$OUT"
mkdir -p "$OUT"
echo "TAP version 13"

# --- the machine -------------------------------------------------------
echo "# setting up the lab in $LAB (idempotent)"
ready=() debug=
for k in "${KERNELS[@]}"; do
	[ "$k" != debug ] || { debug=1; continue; }
	if [ "$k" = user ]; then
		scripts/user-kernel "${ZCDEV_IMAGE:-}" "${ZCDEV_IMAGE_KDIR:-}" \
			"${ZCDEV_IMAGE_BROOT:-}" >"$OUT/lab-$k.log" 2>&1 ||
			{ tap fail "lab: kernel user (IMAGE=, KDIR=) usable" "$OUT/lab-$k.log"; continue; }
	fi
	if scripts/lab-setup "$k" >>"$OUT/lab-$k.log" 2>&1; then
		tap ok "lab: kernel $k fetched and ready"
		ready+=("$k")
	else
		tap fail "lab: kernel $k fetched and ready" "$OUT/lab-$k.log"
	fi
done
# The debug kernel builds (or comes from the cache) beside the others'
# runs, at nice 19; it is waited for when their turn is over.
if [ -n "$debug" ]; then
	scripts/lab-setup debug >"$OUT/lab-debug.log" 2>&1 &
	debug=$!
	echo "# the debug kernel: scripts/debug-kernel in the background ($OUT/lab-debug.log)"
fi
# sid's newest headers (the early warning) and the package lane's roots,
# also in the background: they need only the network and apt.
extra=
if printf '%s\n' "${ready[@]}" | grep -qx 6.1 &&
   printf '%s\n' "${ready[@]}" | grep -qx 6.12 &&
   printf '%s\n' "${ready[@]}" | grep -qx 7 &&
   printf '%s\n' "${ready[@]}" | grep -qx 7-rt; then
	scripts/lab-setup sid deb >"$OUT/lab-sid-deb.log" 2>&1 &
	extra=$!
fi
# One probe for the whole run: every guest after it uses the answer.
ZCDEV_ACCEL=$(scripts/vm-accel 2>"$OUT/accel.log")
export ZCDEV_ACCEL
echo "# accelerator: $(sed 's/^vm-accel: //' "$OUT/accel.log")"

# --- lint, once ----------------------------------------------------------
if scripts/lint >"$OUT/lint.log" 2>&1; then
	tap ok "lint: checkpatch.pl --strict and shellcheck, no errors, warnings or checks"
else
	tap fail "lint: checkpatch.pl --strict and shellcheck, no errors, warnings or checks" "$OUT/lint.log"
fi
# and a line of each kind that it must refuse
mkdir -p "$OUT/lint"
printf '// SPDX-License-Identifier: GPL-2.0\nint planted(int a){ return a; }\n' \
	>"$OUT/lint/planted.c"
printf '#!/bin/bash\nplanted= true\n' >"$OUT/lint/planted"
for f in planted.c planted; do
	if scripts/lint "$OUT/lint/$f" >"$OUT/lint/$f.log" 2>&1; then
		tap fail "gate: lint fails a planted style error ($f)" "$OUT/lint/$f.log"
	else
		tap ok "gate: lint fails a planted style error ($f)"
	fi
done

if make -s -C selftests STATIC=1 M32=1 OUTPUT="$OUT/selftests" \
	>"$OUT/selftests-build.log" 2>&1 &&
   ! grep -q 'warning:' "$OUT/selftests-build.log"; then
	tap ok "selftests build, 64-bit and -m32 (static, no warnings)"
else
	tap fail "selftests build, 64-bit and -m32 (static, no warnings)" "$OUT/selftests-build.log"
fi

# --- each kernel -------------------------------------------------------
# debug_ready: wait for the debug kernel's build; whether it is ready.
debug_ready() {
	local rc=0
	echo "# waiting for the debug kernel's build ($((SECONDS)) s into the lane)"
	wait "$debug" || rc=$?
	grep 'debug-kernel:' "$OUT/lab-debug.log" | tail -3 | sed 's/^/#   /'
	if [ $rc -eq 0 ]; then
		tap ok "lab: kernel debug built (or cached) and ready"
	else
		tap fail "lab: kernel debug built (or cached) and ready" "$OUT/lab-debug.log"
	fi
	return $rc
}
[ -z "$debug" ] || ready+=(debug)

built=()
for k in "${ready[@]}"; do
	[ "$k" != debug ] || debug_ready || continue
	in_time "$k" || continue
	# shellcheck disable=SC1090
	. "$LAB/kernels/$k/env"
	dir=$OUT/$k
	echo "# kernel $k: $KREL"
	mkdir -p "$dir"

	if build "$k" "$dir/src" W=1; then
		tap ok "$k: builds with W=1, no warnings"
	else
		tap fail "$k: builds with W=1, no warnings" "$dir/src.log"
		continue
	fi
	cp "$dir/src/zcdev.ko" "$dir/zcdev.ko"
	built+=("$k")

	if build "$k" "$dir/sparse" C=2; then
		tap ok "$k: sparse (C=2) clean"
	else
		tap fail "$k: sparse (C=2) clean" "$dir/sparse.log"
	fi

	if modinfo "$dir/zcdev.ko" >"$dir/modinfo.log" 2>&1 &&
	   grep -q "^version: *$VERSION" "$dir/modinfo.log" &&
	   grep -q '^description: ' "$dir/modinfo.log" &&
	   grep -q '^license: *GPL' "$dir/modinfo.log" &&
	   [ "$(grep -c '^parm: .*(' "$dir/modinfo.log")" -ge 2 ]; then
		tap ok "$k: modinfo has description, version, license, parameters"
	else
		tap fail "$k: modinfo has description, version, license, parameters" "$dir/modinfo.log"
	fi

	# The fuzzers run longer on the debug kernel, where a second does a
	# tenth of what it does on the others; its reloads are fewer, each
	# takes 17 s there.
	fuzz=()
	[ "$k" != debug ] ||
		fuzz=(-a "ZCDEV_FUZZ=${CHECK_DEBUG_FUZZ:-40} ZCDEV_RELOADS=3")
	guest "$k" "$dir" guest "$dir/zcdev.ko" scripts/guest-check "${fuzz[@]}"
	relay <"$dir/guest.tap"
done

# --- the gates, proven live ----------------------------------------------
# A gate that has never failed is not yet a gate.  First the judge on
# runs doctored from a real one; then real guests with a planted fault.
gate_proof() {		# gate_proof WHAT CONSOLE: the judge must fail it
	local what=$1 console=$2
	scripts/judge gate "$console" 0 >"$console.tap"
	if grep -q '^not ok' "$console.tap"; then
		tap ok "gate: the judge fails $what"
	else
		tap fail "gate: the judge fails $what" "$console.tap"
	fi
}

if [ ${#built[@]} -gt 0 ] && in_time "gate"; then
	# The newest stock kernel, where a guest is quickest; else the last
	# stock one.
	k=${built[-1]}
	for g in "${built[@]}"; do [ "$g" = debug ] || [ "$k" = 7 ] || k=$g; done
	real=$OUT/$k/guest.console
	gates=$OUT/gates
	mkdir -p "$gates"
	if grep -q '^not ok' "$OUT/$k/guest.tap"; then
		echo "# the gate proofs below doctor $k's run, which failed already"
	fi
	# Stops half-way through the guest's output; the end of the run faked.
	begin=$(grep -n '^==ZCVM== begin$' "$real" | cut -d: -f1)
	end=$(grep -n '^==ZCVM== rc=' "$real" | cut -d: -f1)
	{ head -n $(((${begin:-0} + ${end:-0}) / 2)) "$real"
	  sed -n '/^==ZCVM== rc=/,$p' "$real"; } >"$gates/early.console"
	gate_proof "a guest that stops half-way" "$gates/early.console"
	# One lane step gone, all else intact.
	awk '/^ok - / && !done { done = 1; next } 1' "$real" >"$gates/step.console"
	gate_proof "a guest that skips one step" "$gates/step.console"
	# One zczero test skipped.
	awk '!done && /^ok [0-9]+ [a-z0-9_.]+\.zczero\.[a-z0-9_]+$/ { $0 = $0 " # SKIP planted"; done = 1 } 1' \
		"$real" >"$gates/skip.console"
	gate_proof "a zczero test that skips" "$gates/skip.console"
	# One zczero test failed, with its diagnostics, which must be shown.
	awk '!done && /^ok [0-9]+ [a-z0-9_.]+\.zczero\.[a-z0-9_]+$/ {
		print "# planted.c:1:planted:Expected 0 (0) == 1 (1)"
		print "# planted.c:1:planted:the planted reason"
		sub(/^ok/, "not ok"); done = 1 } 1' "$real" >"$gates/fail.console"
	gate_proof "a zczero test that fails" "$gates/fail.console"
	if grep -q '^#   # planted.c:1:planted:the planted reason$' "$gates/fail.console.tap"; then
		tap ok "gate: the judge shows a failed test's diagnostics"
	else
		tap fail "gate: the judge shows a failed test's diagnostics" "$gates/fail.console.tap"
	fi
	# A warning in the middle of the run, not in the final dmesg.
	awk '!done && /^ok - / { print "[   10.000000] WARNING: CPU: 0 PID: 1 at planted.c:1 planted"; done = 1 } 1' \
		"$real" >"$gates/warn.console"
	gate_proof "a kernel warning on the console" "$gates/warn.console"

	# A module with a WARN_ON_ONCE() on the read path (zcdev_fault.h):
	# with the lane's command line, and with panic_on_warn=0, where only
	# the kernel-log gate stands between it and a pass.
	if build "$k" "$gates/warn-src" ZCDEV_FAULT=warn; then
		guest "$k" "$gates" planted "$gates/warn-src/zcdev.ko" scripts/guest-smoke
		if grep -q '^not ok' "$gates/planted.tap"; then
			tap ok "gate: a planted WARN_ON_ONCE() fails the run ($k)"
		else
			tap fail "gate: a planted WARN_ON_ONCE() fails the run ($k)" "$gates/planted.tap"
		fi
		guest "$k" "$gates" planted-nopanic "$gates/warn-src/zcdev.ko" \
			scripts/guest-smoke -a panic_on_warn=0
		if grep -q '^not ok - .*kernel log free' "$gates/planted-nopanic.tap" &&
		   grep -q '^ok - .*the VM ran to its end' "$gates/planted-nopanic.tap"; then
			tap ok "gate: the kernel-log gate alone fails a planted WARN_ON_ONCE() ($k, panic_on_warn=0)"
		else
			tap fail "gate: the kernel-log gate alone fails a planted WARN_ON_ONCE() ($k, panic_on_warn=0)" \
				"$gates/planted-nopanic.tap"
		fi
	else
		tap fail "gate: a module with a planted WARN_ON_ONCE() builds ($k)" "$gates/warn-src.log"
	fi

	# A module whose read() leaves a byte at 1 now and then
	# (ZCDEV_FAULT=dirty): nothing in the kernel log, only zcdev_fuzz's
	# check of the bytes can see it, and must.
	if build "$k" "$gates/dirty-src" ZCDEV_FAULT=dirty; then
		cat >"$gates/fuzz.sh" <<-'EOF'
		insmod /zcdev.ko || exit 1
		ZCDEV_KO=/zcdev.ko /t/zcdev_fuzz -s 1 -t 10
		echo "zcdev_fuzz: exit $?"
		EOF
		scripts/vm-run -k "$k" -t 300 -f "$gates/dirty-src/zcdev.ko:/zcdev.ko" \
			-f "$OUT/selftests:/t" "$gates/fuzz.sh" >"$gates/planted-dirty.console" 2>&1
		if grep -q '^# violation.*: ' "$gates/planted-dirty.console" &&
		   grep -qE '^[0-9]+ operations, .*, [1-9][0-9]* violations$' "$gates/planted-dirty.console" &&
		   grep -qx 'zcdev_fuzz: exit 1' "$gates/planted-dirty.console"; then
			tap ok "gate: zcdev_fuzz fails a planted read() that is not all zeros ($k): $(grep -m1 '^# violation' "$gates/planted-dirty.console" | cut -c3-120)"
		else
			tap fail "gate: zcdev_fuzz fails a planted read() that is not all zeros ($k)" \
				"$gates/planted-dirty.console"
		fi
	else
		tap fail "gate: a module with a planted dirty read() builds ($k)" "$gates/dirty-src.log"
	fi
fi

# The debug kernel's instruments, with panic_on_warn=0 so that no panic
# helps: a planted use-after-free must fail the run through KASAN's report
# in the kernel log, a planted leak through kmemleak's step alone.
debug_gate() {		# debug_gate PLANT WHAT: a guest-smoke run of PLANT
	local plant=$1 what=$2 src=$OUT/gates/$1-src
	if ! build debug "$src" ZCDEV_FAULT="$plant"; then
		tap fail "gate: a module with a planted $what builds (debug)" "$src.log"
		return 1
	fi
	guest debug "$OUT/gates" "planted-$plant" "$src/zcdev.ko" scripts/guest-smoke \
		-a panic_on_warn=0
}
if printf '%s\n' "${built[@]}" | grep -qx debug && in_time "debug gates"; then
	mkdir -p "$OUT/gates"
	g=$OUT/gates/planted-uaf
	if debug_gate uaf "use-after-free"; then
		if grep -q '^not ok - .*kernel log free' "$g.tap" &&
		   grep -q '^ok - .*the VM ran to its end' "$g.tap" &&
		   grep -aq 'BUG: KASAN: slab-use-after-free in zc_fault_inject' "$g.console"; then
			tap ok "gate: KASAN fails a planted use-after-free (debug, panic_on_warn=0)"
		else
			tap fail "gate: KASAN fails a planted use-after-free (debug, panic_on_warn=0)" "$g.tap"
		fi
	fi
	g=$OUT/gates/planted-leak
	if debug_gate leak "leak"; then
		if grep -q "^not ok - .*kmemleak: nothing of zcdev's leaked" "$g.tap" &&
		   grep -q '^ok - .*kernel log free' "$g.tap"; then
			tap ok "gate: kmemleak fails a planted leak (debug)"
		else
			tap fail "gate: kmemleak fails a planted leak (debug)" "$g.tap"
		fi
	fi
fi

# Bring your own kernel, proven with Debian's 7.x image and headers given
# as a user's would be: it must boot the module as kernel "user", and a
# tree without devtmpfs must be refused with a message.
if printf '%s\n' "${built[@]}" | grep -qx 7 && [ -z "${ZCDEV_IMAGE:-}" ] &&
   in_time "user kernel"; then
	mkdir -p "$OUT/gates"
	(
		set -e
		# shellcheck disable=SC1090
		. "$LAB/kernels/7/env"
		scripts/user-kernel "$VMLINUZ" "$BROOT$KDIR" "$BROOT"
		build user "$OUT/gates/user-src"
		guest user "$OUT/gates" user "$OUT/gates/user-src/zcdev.ko" scripts/guest-smoke
	) >"$OUT/gates/user.log" 2>&1
	if grep -q '^ok - .*the guest ran all' "$OUT/gates/user.tap" 2>/dev/null &&
	   ! grep -q '^not ok' "$OUT/gates/user.tap"; then
		tap ok "IMAGE=, KDIR=: a kernel given as a user's (Debian's 7.x image and headers) runs the module"
	else
		tap fail "IMAGE=, KDIR=: a kernel given as a user's (Debian's 7.x image and headers) runs the module" \
			"$OUT/gates/user.log"
	fi
	# the same tree, its .config without devtmpfs
	(
		# shellcheck disable=SC1090
		. "$LAB/kernels/7/env"
		fake=$OUT/gates/user-nodevtmpfs
		mkdir -p "$fake/include/config"
		cp "$BROOT$KDIR/Makefile" "$BROOT$KDIR/Module.symvers" "$fake/"
		cp "$BROOT$KDIR/include/config/kernel.release" "$fake/include/config/"
		sed 's/^CONFIG_DEVTMPFS=y$/# CONFIG_DEVTMPFS is not set/' \
			"$BROOT$KDIR/.config" >"$fake/.config"
		ZCDEV_LAB=$OUT/gates/user-lab scripts/user-kernel "$VMLINUZ" "$fake"
	) >"$OUT/gates/user-refused.log" 2>&1
	if [ $? -ne 0 ] && grep -q 'CONFIG_DEVTMPFS' "$OUT/gates/user-refused.log"; then
		tap ok "IMAGE=, KDIR=: a kernel without devtmpfs is refused: $(tail -1 "$OUT/gates/user-refused.log")"
	else
		tap fail "IMAGE=, KDIR=: a kernel without devtmpfs is refused with a message" \
			"$OUT/gates/user-refused.log"
	fi
fi

# --- early warning: sid's newest headers -----------------------------------
# Kernel API changes show up here before users upgrade to them.
extra_ready=
if [ -n "$extra" ]; then
	if wait "$extra"; then
		tap ok "lab: sid's newest headers and the package lane's bookworm and trixie roots ready"
		extra_ready=1
	else
		tap fail "lab: sid's newest headers and the package lane's bookworm and trixie roots ready" \
			"$OUT/lab-sid-deb.log"
	fi
fi
if [ -n "$extra_ready" ] && in_time "sid"; then
	# shellcheck disable=SC1090
	. "$LAB/kernels/7/env"
	newest=$KREL
	# shellcheck disable=SC1090
	. "$LAB/kernels/sid/env"
	# the versions without Debian's suffix and flavour
	a=${KREL%%[+-]*} b=${newest%%[+-]*}
	if [ "$a" = "$b" ]; then
		echo "# sid's kernel $KREL is the same version as trixie-backports' $newest; built all the same"
	elif [ "$(printf '%s\n' "$a" "$b" | sort -V | tail -1)" = "$b" ]; then
		echo "# sid's kernel $KREL is older than trixie-backports' $newest; built all the same"
	else
		echo "# sid's kernel $KREL is newer than trixie-backports' $newest"
	fi
	sed -n 's/^Date: /# sid as its mirror has it, of /p' "$BROOT"/var/lib/apt/lists/*_sid_InRelease 2>/dev/null |
		head -1
	if build sid "$OUT/sid/src" W=1; then
		tap ok "sid (early warning): builds with W=1 against linux-headers-$KREL, no warnings"
	else
		tap fail "sid (early warning): builds with W=1 against linux-headers-$KREL, no warnings" \
			"$OUT/sid/src.log"
	fi
fi

# --- what users install: a script each, with TAP lines of its own ---------
# stage NAME SCRIPT [ARGS...]: a lane script's TAP lines, counted here;
# its output in NAME.log.
stage() {
	local name=$1 script=$2 rc=0
	shift 2
	"scripts/$script" "$@" >"$OUT/$name.log" 2>&1 || rc=$?
	relay < <(grep -E '^(not ok|ok) - |^#   ' "$OUT/$name.log")
	[ $rc -eq 0 ] || grep -q '^not ok' "$OUT/$name.log" ||
		tap fail "$name: scripts/$script $* ran to its end" "$OUT/$name.log"
}

# DKMS on each Debian kernel series of the lane; 7.x inside its build root.
for k in "${ready[@]}"; do
	case $k in 6.1|6.12|7) ;; *) continue ;; esac
	in_time "dkms $k" || continue
	ZCDEV_DKMS_OUT=$OUT/dkms-$k stage "dkms-$k" dkms-check "$k"
done

# --- make install, and kselftest's own packaging ----------------------------
# The README's install commands on 6.1; the selftests installed as
# kselftest installs them, run by its run_kselftest.sh in a 7.x guest.
if printf '%s\n' "${built[@]}" | grep -qx 6.1 && in_time "install"; then
	ZCDEV_INSTALL_OUT=$OUT/install-6.1 stage install-6.1 install-check 6.1
fi
if printf '%s\n' "${built[@]}" | grep -qx 7 && in_time "kselftest"; then
	ZCDEV_KSFT_OUT=$OUT/kselftest-7 ZCDEV_KSFT_KO=$OUT/7/zcdev.ko \
		stage kselftest-7 kselftest-check 7
fi

# --- the Debian package: built, lintian, apt install, upgrade, remove ----
if [ -n "$extra_ready" ] && in_time "deb"; then
	ZCDEV_DEB_OUT=$OUT/deb stage deb deb-check
fi

echo "# the lane took $SECONDS s"
echo "1..$n"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
