#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make sign, where signatures are enforced:  lab/stages/sign.sh [KERNEL_ID]
# (default: debug, once the lane has built it)
#
# The lab's debug kernel (lab/vm/debug-kernel.sh) trusts the lab's test
# key through CONFIG_SYSTEM_TRUSTED_KEYS, as a user's kernel trusts a key
# enrolled with mokutil, and its env names that key (TEST_KEY,
# TEST_CERT).  In its build root, from a copy of the tree:
#
#   make                                      zcdev.ko, unsigned
#   make sign SIGN_KEY=test.priv SIGN_CERT=test.der      signed with it
#   make sign SIGN_KEY=other.priv SIGN_CERT=other.der    signed with a key
#                                             made here, which it does not trust
#
# modinfo must name each one's signer.  Then the kernel boots with
# module.sig_enforce=1 (lab/guest/sign.sh): the module signed with the
# trusted key must load and its devices read zeros; the unsigned one and
# the one signed with the other key are the gate's planted faults: each
# must be refused with EKEYREJECTED, and the kernel's own message for it
# is shown.
#
# Prints TAP lines "ok - sign: ..." / "not ok - sign: ..." and exits
# non-zero when one failed.  Logs: out/check/sign-KERNEL_ID in the lane,
# else out/sign-KERNEL_ID; the work tree is removed unless a step failed.

# The checks are functions run through step(), which shellcheck cannot see.
# shellcheck disable=SC2317
set -euo pipefail
cd "$(dirname "$0")/../.."
WHAT=sign
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh

# the debug kernel, built in the background since the setup stage
# (lab/stages/debug.sh reports it)
after_job debug-build
TEST_KEY='' TEST_CERT=''
NEEDS='' kernel_stage sign debug "$@"
[ -n "$TEST_KEY" ] && [ -n "$TEST_CERT" ] ||
	{ echo "sign: kernel $k trusts no test key of the lab's (TEST_KEY, TEST_CERT)" >&2; exit 2; }
# The copy of the tree and the keys, where make runs: in the kernel's
# build root when it has one (its sign-file is linked against it), in a
# directory of this run's own.
RWORK=${TMPDIR:-/tmp}/zcdev-sign.$k.$$		# as make sees it
[ -z "$BROOT" ] || RWORK=/tmp/zcdev-sign.$k.$$
WORK=$BROOT$RWORK				# as the host sees it
rm -rf "$WORK"
mkdir -p "$WORK/keys"
MAKE=(make -C "$RWORK/src" KDIR="$KDIR")

# in_root CMD...: CMD in the kernel's build root (lab/vm/in-root.sh), or
# on the host
in_root() {
	if [ -n "$BROOT" ]; then
		lab/vm/in-root.sh "$BROOT" "$@"
	else
		"$@"
	fi
}

# --- the three modules ----------------------------------------------------
keys() {
	cp "$TEST_KEY" "$WORK/keys/test.priv" && cp "$TEST_CERT" "$WORK/keys/test.der" &&
	openssl req -new -x509 -newkey rsa:2048 -sha256 -nodes -days 1 \
		-subj "/CN=zcdev sign stage other key/" -keyout "$WORK/keys/other.priv" \
		-outform DER -out "$WORK/keys/other.der" &&
	openssl x509 -inform DER -in "$WORK/keys/test.der" -noout -subject
}
step "the lab's trusted test key, and another key made now (openssl)" "$OUT/keys.log" keys

# signer KO: what modinfo says signed it
signer() {
	modinfo -F signer "$1"
}
built() {
	make -s sources DEST="$WORK/src" && cp Makefile "$WORK/src/" &&
	in_root "${MAKE[@]}" && cp "$WORK/src/zcdev.ko" "$OUT/unsigned.ko" &&
	[ -z "$(signer "$OUT/unsigned.ko")" ]
}
step "$k: make: zcdev.ko, unsigned" "$OUT/build.log" built

# signed NAME KEY: make sign with the key KEY; modinfo names its signer
signed() {
	local name=$1 key=$2 subject
	subject=$(openssl x509 -inform DER -in "$WORK/keys/$key.der" -noout -subject -nameopt multiline |
		sed -n 's/^ *commonName *= *//p')
	in_root "${MAKE[@]}" sign SIGN_KEY="$RWORK/keys/$key.priv" \
		SIGN_CERT="$RWORK/keys/$key.der" &&
	cp "$WORK/src/zcdev.ko" "$OUT/$name.ko" &&
	modinfo "$OUT/$name.ko" | grep -E '^(signer|sig_key|sig_hashalgo):' &&
	[ "$(signer "$OUT/$name.ko")" = "$subject" ]
}
step "$k: make sign SIGN_KEY=<the trusted test key>: modinfo names its signer" \
	"$OUT/sign-test.log" signed signed test
step "$k: make sign SIGN_KEY=<another key>: modinfo names its signer" \
	"$OUT/sign-other.log" signed other other
for m in unsigned signed other; do
	[ -f "$OUT/$m.ko" ] || finish "the tree and keys"
done

# --- the guest, under module.sig_enforce=1 --------------------------------
rc=0
lab/vm/run.sh -k "$k" -t 900 -a module.sig_enforce=1 \
	-f "$OUT/unsigned.ko:/unsigned.ko" -f "$OUT/signed.ko:/signed.ko" \
	-f "$OUT/other.ko:/other.ko" lab/guest/sign.sh >"$OUT/console.log" 2>&1 || rc=$?
console_parts "$OUT/console.log" "$OUT/guest.log" "$OUT/dmesg.log"
if [ $rc -eq 124 ] || ! grep -q '^loaded signed: ' "$OUT/guest.log"; then
	tail -40 "$OUT/console.log" >"$OUT/tail.log"
	result fail "$k: the VM ran to its end" "$OUT/tail.log"
else
	result ok "$k: the VM ran to its end"
fi
grep '^# kernel ' "$OUT/guest.log" || true

enforced() { grep -x '# kernel .*, sig_enforce=Y' "$OUT/guest.log"; }
step "$k: booted with module.sig_enforce=1, /sys/module/module/parameters/sig_enforce is Y" \
	"$OUT/enforced.log" enforced

if grep -qx 'load signed: rc=0' "$OUT/guest.log" &&
   grep -qx 'loaded signed: yes' "$OUT/guest.log" &&
   grep -qx 'zeros signed: yes' "$OUT/guest.log"; then
	result ok "$k: signed module loads under enforcement: the one make sign signed with the trusted key ($(signer "$OUT/signed.ko")), its devices read zeros"
else
	result fail "$k: signed module loads under enforcement: the one make sign signed with the trusted key" \
		"$OUT/guest.log"
fi

# refused NAME WHAT MESSAGE: the gate; module NAME must not load, insmod
# must say EKEYREJECTED's words, and the kernel MESSAGE
refused() {
	local name=$1 what=$2 msg=$3
	if grep -q "^load $name: rc=[1-9].*Key was rejected by service" "$OUT/guest.log" &&
	   grep -qx "loaded $name: no" "$OUT/guest.log" &&
	   grep -q "^kernel $name: .*$msg" "$OUT/guest.log"; then
		result ok "$k: gate: $what is refused under enforcement: $(grep -m1 -o "$msg" "$OUT/guest.log"); insmod: $(sed -n "s/^load $name: rc=[0-9]* .*: //p" "$OUT/guest.log")"
	else
		result fail "$k: gate: $what is refused under enforcement, with the kernel's message" \
			"$OUT/guest.log"
	fi
}
refused unsigned "an unsigned module" 'Loading of unsigned module is rejected'
refused other "a module signed with another key" 'Loading of module with unavailable key is rejected'

log_clean "$k" "$OUT/dmesg.log" "$OUT/bad-dmesg.log"

finish "the tree and keys"
