#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Line and branch coverage of zcdev's own code, per function, from the
# gcov data of guest runs of a coverage build (and of builds with a
# planted fault, on the lines they have unchanged):
#
#   lab/vm/gcov-report.sh [-m MARKDOWN] KERNEL_ID BUILD GCDA[@OTHER]...
#
# BUILD is the directory lab/vm/kmake.sh built zcdev in with $GCOV_ARGS
# (lab/stages/lib.sh): its sources and .gcno files.  Each GCDA is a
# directory that lab/vm/run.sh -o filled after a guest run, of BUILD; or
# GCDA@OTHER, a run of the coverage build OTHER of sources that a patch
# changed (a planted fault, lab/faults/): its counts go to the lines of
# BUILD that OTHER has unchanged (diff tells which), and what the patch
# added or changed counts for nothing.  Such a run adds no line nor
# branch that BUILD's runs do not have.  The gcov of
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
#   untaken FILE LINE FUNCTION UNTAKEN/ARMS SOURCE-TEXT  (a line run, with
#                                         branch arms never taken)
#
# With -m, also a report in Markdown: the totals, a table per file, and
# every line no run reached.

set -euo pipefail
LAB=${ZCDEV_LAB:-/var/cache/zcdev-lab}
FILES="zcdev_main.c zcdev_pipe.c"
md=''
[ "${1:-}" != -m ] || { md=$2; shift 2; }
[ $# -ge 3 ] || { sed -n '4,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 2; }
k=$1 build=$(realpath "$2")
shift 2
BROOT=''
# shellcheck disable=SC1090
. "$LAB/kernels/$k/env"

# Each run's data beside a copy of the notes (.gcno) of its build, in
# that build's directory, which the root sees where the module was built
# (/build).  gcov finds the sources by the names the compiler was given,
# relative to the build directory, and writes its annotations there.
# shellcheck disable=SC2016
script='cd /build && for d in /build/.gcov/*/; do
	gcov -b -c -o "$d" '"$FILES"' >/dev/null && mv ./*.gcov "$d" || exit
done'
builds=() runs=()
n=0
for arg; do
	d=${arg%@*} b=$build
	[ "$d" = "$arg" ] || b=$(realpath "${arg##*@}")
	if [[ " ${builds[*]} " != *" $b "* ]]; then
		builds+=("$b")
		rm -rf "$b/.gcov"
	fi
	n=$((n + 1))
	runs+=("$b/.gcov/$n")
	mkdir -p "$b/.gcov/$n"
	for f in $FILES; do
		cp "$b/${f%.c}.gcno" "$b/.gcov/$n/"
		g=$(find "$d" -name "${f%.c}.gcda" | head -1)
		[ -z "$g" ] || cp "$g" "$b/.gcov/$n/"
	done
done
for b in "${builds[@]}"; do
	if [ -n "$BROOT" ]; then
		lab/vm/in-root.sh -b "$b:/build" "$BROOT" sh -c "$script"
	else
		sh -c "${script//\/build/$b}"
	fi
done

# annotation FILE RUN: RUN's gcov annotation of FILE after a line that
# says whose build it is ("==run== own" or "other"), its lines numbered
# as BUILD's: of another build, a line that BUILD has unchanged gets
# BUILD's number, one that the patch made is left out with its branches.
annotation() {
	local f=$1 b=${2%/.gcov/*}
	if [ "$b" = "$build" ]; then
		echo "==run== own"
		cat "$2/$f.gcov"
		return
	fi
	echo "==run== other"
	{ diff --old-line-format=$'o\n' --new-line-format=$'n\n' \
		--unchanged-line-format=$'u\n' "$build/$f" "$b/$f" || true; } |
	awk '$0 == "o" { p++ } $0 == "n" { q++ } $0 == "u" { print ++q, ++p }' |
	awk 'NR == FNR { to[$1] = $2; next }
	/^ *([0-9]+\*?|#####|=====|-): *[0-9]+:/ {
		head = $0; sub(/:.*/, "", head); rest = $0; sub(/^[^:]*: */, "", rest)
		line = rest + 0; sub(/^[0-9]+/, "", rest)
		drop = line && !(line in to)
		if (!drop) printf "%s:%5d%s\n", head, line ? to[line] : 0, rest
		next
	}
	!drop' - "$2/$f.gcov"
}

# Runs' annotations, added up.
for f in $FILES; do
	for r in "${runs[@]}"; do
		annotation "$f" "$r"
	done
done | awk -v md="$md" -v runs="$n" '
function pct(a, b) { return b ? sprintf("%.1f%%", 100 * a / b) : "-" }
/^==run== / { other = $2 == "other"; next }
/^ *-: *0:Source:/ { file = $0; sub(/.*Source:/, "", file); sub(/.*\//, "", file); fn = "(file scope)"; next }
/^function / { fn = $2; if (!other && !((file, fn) in seen)) { seen[file, fn] = 1; fns[file] = fns[file] " " fn }; next }
/^branch / {
	c = ($3 == "taken") ? $4 + 0 : 0
	key = file SUBSEP line SUBSEP $2
	if (other && !(key in br)) next
	if (!(key in br)) { nbr[file, fnof[file, line]]++; nbr[file]++; arms[file, line]++ }
	if (c > 0 && (!(key in br) || br[key] == 0)) {
		tbr[file, fnof[file, line]]++; tbr[file]++; taken[file, line]++
	}
	br[key] += c
	next
}
/^ *([0-9]+\*?|#####|=====|-): *[0-9]+:/ {
	cnt = $0; sub(/:.*/, "", cnt); gsub(/[ *]/, "", cnt)
	rest = $0; sub(/^[^:]*: */, "", rest); line = rest + 0; sub(/^[0-9]+:/, "", rest)
	if (line == 0 || cnt == "-") next
	c = (cnt ~ /^[0-9]+$/) ? cnt + 0 : 0
	key = file SUBSEP line
	if (other && !(key in hits)) next
	if (!(key in hits)) {
		fnof[key] = fn; text[key] = rest; nl[file, fn]++; nl[file]++
		order[file] = order[file] " " line
	}
	if (c > 0 && !(hits[key] > 0)) { hl[file, fnof[key]]++; hl[file]++ }
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
		for (j = 1; j <= m; j++)
			if (hits[f, L[j]] > 0 && taken[f, L[j]] < arms[f, L[j]])
				printf "untaken %s %d %s %d/%d %s\n", f, L[j], fnof[f, L[j]],
					arms[f, L[j]] - taken[f, L[j]], arms[f, L[j]], text[f, L[j]]
	}
	if (md == "") exit
	print "# Coverage of zcdev_main.c and zcdev_pipe.c\n" >md
	printf "gcov -b -c over %d guest runs on the debug kernel, added up: of one coverage build, and of builds with a planted fault on the lines they have unchanged; a branch counts as covered when taken at least once.\n\n", runs >md
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
	print "\n## Lines run with a branch never taken\n\nArms never taken of the line\x27s arms, as gcov numbers them (an inlined helper\x27s checks count on the line that calls it).\n" >md
	for (i = 1; i <= 2; i++) {
		f = F[i]
		m = split(order[f], L, " ")
		for (j = 1; j <= m; j++)
			if (hits[f, L[j]] > 0 && taken[f, L[j]] < arms[f, L[j]]) {
				t = text[f, L[j]]; gsub(/^[ \t]+/, "", t); gsub(/`/, "\x27", t)
				printf "- %s:%d (%s), %d of %d: `%s`\n", f, L[j], fnof[f, L[j]], arms[f, L[j]] - taken[f, L[j]], arms[f, L[j]], t >md
			}
	}
}'
