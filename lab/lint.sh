#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.pl --strict over every C file of the tree, and shellcheck
# (warnings and errors) over every shell script; or over the FILEs given,
# each by its kind (*.c, *.h: C; anything else: shell).  checkpatch comes
# from Debian's linux-source package, extracted on first use.
#
#   lab/lint.sh [FILE...]

set -euo pipefail
LAB=${ZCDEV_LAB:-/var/cache/zcdev-lab}
CP=$LAB/checkpatch

cfiles=() shfiles=()
for f in "$@"; do
	case $f in
	*.[ch]) cfiles+=("$(realpath "$f")") ;;
	*) shfiles+=("$(realpath "$f")") ;;
	esac
done
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
	mapfile -t cfiles < <(find . -name '*.[ch]' -not -path './out/*' \
		-not -path '*/.ksft/*' -not -path './.git/*' -not -name '*.mod.c' \
		-not -name 'zcdev_probes.h' | sort)
	# scripts with a shell's #! line, and those sourced or run by
	# busybox sh, which name their shell to shellcheck
	mapfile -t shfiles < <(git ls-files | while read -r f; do
		head -3 "$f" | grep -qE '^#!/bin/(ba)?sh|^# shellcheck shell=' && echo "$f"
	done)
fi

if [ ! -x "$CP/checkpatch.pl" ]; then
	tarball=$(find /usr/src -maxdepth 1 -name 'linux-source-*.tar.xz' | sort -V | tail -1)
	[ -n "$tarball" ] || { echo "lint: apt-get install linux-source-6.1" >&2; exit 1; }
	mkdir -p "$CP"
	tar -xJf "$tarball" -C "$CP" --strip-components=2 --wildcards \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch'
fi
command -v shellcheck >/dev/null || { echo "lint: apt-get install shellcheck" >&2; exit 1; }

rc=0
[ ${#cfiles[@]} -eq 0 ] ||
	"$CP/checkpatch.pl" --strict --no-tree --terse --show-types -f "${cfiles[@]}" || rc=1
[ ${#shfiles[@]} -eq 0 ] || shellcheck -x -S warning "${shfiles[@]}" || rc=1
exit $rc
