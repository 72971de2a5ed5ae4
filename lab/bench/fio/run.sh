#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run fio job files, one after another; exit non-zero if any fio fails.
#   bench/fio/run.sh [JOBFILE...]        (default: every *.fio here)
# Environment:
#   ZCDEV=/dev/zero    put this in place of /dev/zczero (native testing)
#   ZCFULL=/dev/full   put this in place of /dev/zcfull
#   OUT=DIR            also keep each fio output as DIR/fio-NAME.txt
#   FIO=fio            the fio binary
set -u
here=$(cd "$(dirname "$0")" && pwd)
fio=${FIO:-fio}
[ $# -gt 0 ] || set -- "$here"/*.fio
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
[ -n "${OUT:-}" ] && mkdir -p "$OUT"
fail=0
for job in "$@"; do
	name=$(basename "$job" .fio)
	sed -e "s#/dev/zczero#${ZCDEV:-/dev/zczero}#g" \
	    -e "s#/dev/zcfull#${ZCFULL:-/dev/zcfull}#g" "$job" > "$tmp/$name.fio" || exit 1
	echo "== $name.fio${ZCDEV:+ (zczero -> $ZCDEV)}${ZCFULL:+ (zcfull -> $ZCFULL)}"
	if [ -n "${OUT:-}" ]; then
		"$fio" "$tmp/$name.fio" > "$OUT/fio-$name.txt" 2>&1
		rc=$?
		grep -E '^[A-Za-z0-9_.-]+: \(groupid|^  read:|verify failed|^fio: ' "$OUT/fio-$name.txt"
	else
		"$fio" "$tmp/$name.fio"
		rc=$?
	fi
	if [ "$rc" -ne 0 ]; then
		echo "== $name.fio: fio exited $rc" >&2
		fail=1
	fi
done
exit $fail
