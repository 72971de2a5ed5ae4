#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# lab/bench/out/NAME.png from every lab/bench/out/NAME.csv (zcbench or
# clearbench CSV, csv.h), for the rows with one thread; and bench/out/NAME-tN.png for the
# rows with the most threads N when the CSV has more than one thread.
#   bench/plot.sh [FILE.csv...]          (default: bench/out/*.csv)
# TITLE=... sets the plot title (default: the file name).
set -u
here=$(cd "$(dirname "$0")" && pwd)
command -v gnuplot >/dev/null 2>&1 || { echo "plot.sh: gnuplot not found" >&2; exit 1; }
if [ $# -eq 0 ]; then
	set -- "$here"/out/*.csv
	[ -e "$1" ] || { echo "plot.sh: no CSV in $here/out" >&2; exit 1; }
fi
fail=0
for csv in "$@"; do
	base=${csv%.csv}
	name=$(basename "$base")
	title=${TITLE:-$name}
	if gnuplot -c "$here/plot.gp" "$csv" "$base.png" 1 "$title"; then
		echo "$base.png"
	else
		fail=1
	fi
	# the most threads of a row: the column named so (csv.h)
	max=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "threads") t = i; next }
		$t + 0 > m { m = $t + 0 } END { print m + 0 }' "$csv")
	if [ "$max" -gt 1 ]; then
		if gnuplot -c "$here/plot.gp" "$csv" "$base-t$max.png" "$max" "$title"; then
			echo "$base-t$max.png"
		else
			fail=1
		fi
	fi
done
exit $fail
