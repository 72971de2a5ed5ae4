#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Line and branch coverage of zcdev's own code, per function, from the
# gcov data of guest runs of one coverage build:
#
#   lab/vm/gcov-report.sh [-m MARKDOWN] KERNEL_ID BUILD GCDA...
#
# BUILD is the directory lab/vm/kmake.sh built zcdev in with $GCOV_ARGS
# (lab/stages/lib.sh): its sources and .gcno files.  Each GCDA is a
# directory that lab/vm/run.sh -o filled after a guest run.  The gcov of
# the compiler that built the module (in the kernel's build root)
# annotates each run's data (gcov -b -c), and every line's and branch's
# counts are added up over the runs.  A line is one gcov counts (code);
# a branch is covered when taken at least once, as lcov counts them.
# The function of a line is the one whose body it is in the source.
# Prints, for zcdev_main.c and zcdev_pipe.c:
#
#   file FILE LINES-RUN LINES BRANCHES-TAKEN BRANCHES
#   function FILE NAME LINES-RUN LINES BRANCHES-TAKEN BRANCHES
#   unreached FILE LINE FUNCTION SOURCE-TEXT
#
# With -m, also a report in Markdown: the totals, a table per file, and
# every line no run reached.

set -euo pipefail
LAB=${ZCDEV_LAB:-/var/cache/zcdev-lab}
FILES="zcdev_main.c zcdev_pipe.c"
md=''
[ "${1:-}" != -m ] || { md=$2; shift 2; }
[ $# -ge 3 ] || { sed -n '4,24s/^# \{0,1\}//p' "$0" >&2; exit 2; }
k=$1 build=$(realpath "$2")
shift 2
BROOT=''
# shellcheck disable=SC1090
. "$LAB/kernels/$k/env"

# Each run's data beside a copy of the notes (.gcno), in the build
# directory, which the root sees where the module was built (/build).
rm -rf "$build/.gcov"
n=0
for d; do
	n=$((n + 1))
	mkdir -p "$build/.gcov/$n"
	for f in $FILES; do
		cp "$build/${f%.c}.gcno" "$build/.gcov/$n/"
		g=$(find "$d" -name "${f%.c}.gcda" | head -1)
		[ -z "$g" ] || cp "$g" "$build/.gcov/$n/"
	done
done
# gcov finds the sources by the names the compiler was given, relative
# to the build directory, and writes its annotations there.
# shellcheck disable=SC2016
script='cd /build && for d in /build/.gcov/*/; do
	gcov -b -c -o "$d" '"$FILES"' >/dev/null && mv ./*.gcov "$d" || exit
done'
if [ -n "$BROOT" ]; then
	lab/vm/in-root.sh -b "$build:/build" "$BROOT" sh -c "$script"
else
	sh -c "${script//\/build/$build}"
fi

# Runs' annotations, added up.
for f in $FILES; do
	cat "$build"/.gcov/*/"$f.gcov"
done | awk -v md="$md" -v runs="$n" '
function pct(a, b) { return b ? sprintf("%.1f%%", 100 * a / b) : "-" }
/^ *-: *0:Source:/ { file = $0; sub(/.*Source:/, "", file); sub(/.*\//, "", file); fn = "(file scope)"; next }
/^function / { fn = $2; if (!((file, fn) in seen)) { seen[file, fn] = 1; fns[file] = fns[file] " " fn }; next }
/^branch / {
	c = ($3 == "taken") ? $4 + 0 : 0
	key = file SUBSEP line SUBSEP $2
	if (!(key in br)) { nbr[file, fnof[file, line]]++; nbr[file]++ }
	if (!(key in br) || br[key] == 0) if (c > 0) { tbr[file, fnof[file, line]]++; tbr[file]++ }
	br[key] += c
	next
}
/^ *([0-9]+\*?|#####|=====|-): *[0-9]+:/ {
	cnt = $0; sub(/:.*/, "", cnt); gsub(/[ *]/, "", cnt)
	rest = $0; sub(/^[^:]*: */, "", rest); line = rest + 0; sub(/^[0-9]+:/, "", rest)
	if (line == 0 || cnt == "-") next
	c = (cnt ~ /^[0-9]+$/) ? cnt + 0 : 0
	key = file SUBSEP line
	if (!(key in hits)) {
		fnof[key] = fn; text[key] = rest; nl[file, fn]++; nl[file]++
		order[file] = order[file] " " line
	}
	if (c > 0 && !(hits[key] > 0)) { hl[file, fn]++; hl[file]++ }
	hits[key] += c
	next
}
END {
	split("zcdev_main.c zcdev_pipe.c", F, " ")
	for (i = 1; i <= 2; i++) {
		f = F[i]
		printf "file %s %d %d %d %d\n", f, hl[f], nl[f], tbr[f], nbr[f]
		m = split(fns[f], fn_, " ")
		for (j = 1; j <= m; j++) {
			g = fn_[j]
			printf "function %s %s %d %d %d %d\n", f, g, hl[f, g], nl[f, g], tbr[f, g], nbr[f, g]
		}
		m = split(order[f], L, " ")
		for (j = 1; j <= m; j++)
			if (!(hits[f, L[j]] > 0))
				printf "unreached %s %d %s %s\n", f, L[j], fnof[f, L[j]], text[f, L[j]]
	}
	if (md == "") exit
	print "# Coverage of zcdev_main.c and zcdev_pipe.c\n" >md
	printf "gcov -b -c over %d guest runs of one coverage build on the debug kernel, added up; a branch counts as covered when taken at least once.\n\n", runs >md
	print "| file | lines | branches |\n|---|---|---|" >md
	for (i = 1; i <= 2; i++)
		printf "| %s | %d/%d (%s) | %d/%d (%s) |\n", F[i], hl[F[i]], nl[F[i]], pct(hl[F[i]], nl[F[i]]), tbr[F[i]], nbr[F[i]], pct(tbr[F[i]], nbr[F[i]]) >md
	for (i = 1; i <= 2; i++) {
		f = F[i]
		printf "\n## %s\n\n| function | lines | branches |\n|---|---|---|\n", f >md
		m = split(fns[f], fn_, " ")
		for (j = 1; j <= m; j++) {
			g = fn_[j]
			printf "| %s | %d/%d (%s) | %d/%d (%s) |\n", g, hl[f, g], nl[f, g], pct(hl[f, g], nl[f, g]), tbr[f, g], nbr[f, g], pct(tbr[f, g], nbr[f, g]) >md
		}
	}
	print "\n## Lines no run reached\n" >md
	for (i = 1; i <= 2; i++) {
		f = F[i]
		m = split(order[f], L, " ")
		for (j = 1; j <= m; j++)
			if (!(hits[f, L[j]] > 0)) {
				t = text[f, L[j]]; gsub(/^[ \t]+/, "", t); gsub(/`/, "\x27", t)
				printf "- %s:%d (%s): `%s`\n", f, L[j], fnof[f, L[j]], t >md
			}
	}
}'
