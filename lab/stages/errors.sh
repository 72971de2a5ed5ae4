#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where users go wrong, on the host:  lab/stages/errors.sh [KERNEL_ID]
# (default: 6.1, when the lane fetched it)
#
# In a copy of the tree, each of these must fail with one line of the
# Makefile's own that says what to install or what to pass, and without
# what a user got before it had them (make's "No such file or directory.
# Stop." from inside kbuild, "Permission denied" from modules_install):
#
#   make                  with no headers for the running kernel (the
#                         lane's machines have none; elsewhere KVER= names
#                         a release that has none)
#   make KDIR=...         a directory that is not a kernel tree, and an
#                         unpacked kernel source that was never built
#                         (linux-source's top Makefile, no Module.symvers)
#   make install          as nobody, with the lab's headers of KERNEL_ID
#   make sign             without SIGN_KEY and SIGN_CERT
#
# Then the same checks against the Makefile with its checks turned off
# (need-kdir, need-writable and need-sign-key emptied on the command
# line) must all fail: they see the difference.
#
# Prints TAP lines "ok - errors: ..." / "not ok - errors: ..." and exits
# non-zero when one failed.  Logs: out/check/errors-KERNEL_ID in the lane,
# else out/errors-KERNEL_ID.

set -euo pipefail
cd "$(dirname "$0")/../.."
WHAT=errors
# shellcheck source=lab/stages/lib.sh
. lab/stages/lib.sh

NEEDS=ready kernel_stage -h errors 6.1 "$@"
# The copy is where nobody can reach it, whoever owns the checkout.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/zcdev-errors.XXXXXX")
chmod 755 "$WORK"
SRC=$WORK/src

# The tree as a user has it, and owned by nobody, who builds in it.
make -s sources DEST="$SRC" && cp Makefile "$SRC/"
chown -R nobody: "$SRC"
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env)

# An unpacked kernel source that was never built: linux-source's top
# Makefile (lab/vm/setup.sh installs the package).
tarball=$(find /usr/src -maxdepth 1 -name 'linux-source-*.tar.xz' | sort -V | tail -1)
[ -n "$tarball" ] || { echo "errors: no linux-source (lab/vm/setup.sh)" >&2; exit 2; }
tar -xJf "$tarball" -C "$WORK" --occurrence=1 --wildcards --no-wildcards-match-slash \
	'linux-source-*/Makefile'
UNBUILT=$(find "$WORK" -maxdepth 1 -name 'linux-source-*' | head -1)

# The release "make" looks for: the running kernel's, as a new user has
# it, where it has no headers; else one that has none.
KVER_ARG=()
if [ -e "/lib/modules/$(uname -r)/build" ]; then
	KVER_ARG=(KVER=0.0.0-zcdev-no-headers)
fi

# says NAME LOG PATTERN CMD...: CMD fails; it prints one line that
# matches PATTERN, the message, and none of what users got before.
says() {
	local log=$2 pat=$3 rc=0
	shift 3
	echo "\$ $*" >"$log"
	"$@" >>"$log" 2>&1 || rc=$?
	echo "exit $rc" >>"$log"
	[ $rc -ne 0 ] && [ "$(grep -cE "$pat" "$log")" = 1 ] &&
	! grep -qE 'No such file or directory|Permission denied|Stop\.$' "$log"
}

# check NAME LOG PATTERN CMD...: says() as a TAP line, with the message.
check() {
	local name=$1 log=$2 pat=$3
	if says "$@"; then
		result ok "$name: $(grep -E "$pat" "$log")"
	else
		result fail "$name" "$log"
	fi
}

# planted NAME LOG PATTERN CMD...: says(), where it must fail; counts
# the ones that passed all the same.
passed=0
planted() {
	if says "$@"; then
		passed=$((passed + 1))
		echo "# errors: passed without the Makefile's checks: $1"
	fi
	return 0
}

# all [MAKE VARIABLES...]: the five, through $CHECK, each into a log
# under $OUT/$TAG.
all() {
	local d=$OUT/$TAG
	mkdir -p "$d"
	$CHECK "make without the running kernel's headers says what to install" "$d/headers.log" \
		'^zcdev: no headers for kernel .*apt-get install linux-headers-' \
		make -C "$SRC" "${KVER_ARG[@]}" "$@"
	$CHECK "make KDIR=<not a kernel tree> says what to pass" "$d/kdir-none.log" \
		'^zcdev: KDIR=.* is not a kernel build tree .*give KDIR=' \
		make -C "$SRC" KDIR="$WORK/no-such-tree" "$@"
	$CHECK "make KDIR=<a kernel source never built> says to build it or give headers" \
		"$d/kdir-unbuilt.log" '^zcdev: KDIR=.* was never built .*make -C .*give KDIR=' \
		make -C "$SRC" KDIR="$UNBUILT" "$@"
	$CHECK "make install as nobody says to be root or give DESTDIR" "$d/install.log" \
		'^make install: cannot write to .*sudo make install.*DESTDIR=' \
		"${NOBODY[@]}" env PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		make -C "$SRC" install KDIR="$KDIR" "$@"
	$CHECK "make sign without a key says what to pass" "$d/sign.log" \
		'^make sign: give the signing key and its certificate: make sign SIGN_KEY=' \
		make -C "$SRC" sign KDIR="$KDIR" "$@"
}

TAG=messages CHECK=check all

# The gate: with the checks emptied, each of the five must fail, and
# what make and kbuild say instead is what users got before.
TAG=planted CHECK=planted all need-kdir=: need-writable=: need-sign-key=:
if [ $passed -eq 0 ]; then
	result ok "gate: with the Makefile's checks emptied, all five fail (make alone says: $(grep -m1 -E 'No such file or directory' "$OUT/planted/headers.log" | cut -c1-100))"
else
	result fail "gate: with the Makefile's checks emptied, all five fail ($passed passed)"
fi
finish "the tree"
