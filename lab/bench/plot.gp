# SPDX-License-Identifier: GPL-2.0
#
# Throughput (GB/s, log scale) against buffer, pipe or chunk size (log
# scale) from a zcbench or clearbench CSV (csv.h: its columns are found by
# their names), one PNG:
#
#   gnuplot -c bench/plot.gp IN.csv OUT.png [THREADS [TITLE]]
#
# One panel per family of tests: splice (pipe size), tcp (bytes per
# sendfile, splice or send), read and io_uring (buffer size) for zcbench;
# clear, clear-cold and chunk-* for clearbench.
# One line per test and device, for rows with THREADS threads (default 1).
# Left out: rows whose gbps is not a number (absent, unsupported, ...),
# rows with a verdict note (zcbench -V: "no verdict (TCG)", reads under
# TCG, whose rep stosb runs a byte at a time; the title says so), and
# mmap-touch (one mapping size: a table row, not a curve).

if (ARGC < 2) {
	print "usage: gnuplot -c plot.gp IN.csv OUT.png [THREADS [TITLE]]"
	exit status 2
}
infile = ARG1
outfile = ARG2
thr = (ARGC >= 3 && strlen(ARG3) > 0) ? ARG3 : "1"
title = (ARGC >= 4) ? ARG4 : system(sprintf("basename '%s' .csv", infile))

# The columns by name (csv.h), and the family of a test: the panel it
# goes in.
fam_awk = "NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } " . \
	  "function fam(t) { if (t ~ /^splice/) return \"splice\"; " . \
	  "if (t == \"read\" || t ~ /^uring/) return \"read\"; " . \
	  "if (t ~ /^tcp/) return \"tcp\"; " . \
	  "if (t ~ /^chunk/) return \"chunk\"; return t } "
# Rows that can be plotted: numeric gbps, the wanted thread count, no
# verdict note, not mmap-touch.
ok_awk = sprintf("NR > 1 && $c[\"threads\"] == %s && $c[\"gbps\"] ~ /^[0-9.]+$/ " . \
	"&& $c[\"gbps\"] > 0 && $c[\"verdict\"] == \"\" && $c[\"test\"] != \"mmap-touch\"", thr)
# The note of the rows left out for it, if any.
note = system(sprintf("awk -F, '%s NR > 1 && $c[\"threads\"] == %s && " . \
	"$c[\"verdict\"] != \"\" { print $c[\"verdict\"]; exit }' '%s'", fam_awk, thr, infile))

families = system(sprintf("awk -F, '%s %s { f = fam($c[\"test\"]); " . \
	"if (!(f in seen)) { seen[f] = 1; printf \"%%s \", f } }' '%s'", \
	fam_awk, ok_awk, infile))
nfam = words(families)
if (nfam == 0) {
	print sprintf("plot.gp: no plottable rows with threads=%s in %s", thr, infile)
	exit status 1
}

# Series of a family, as test:device words, in order of appearance.
series(f) = system(sprintf("awk -F, '%s %s && fam($c[\"test\"]) == \"%s\" { " . \
	"k = $c[\"test\"] \":\" $c[\"device\"]; " . \
	"if (!(k in seen)) { seen[k] = 1; printf \"%%s \", k } }' '%s'", \
	fam_awk, ok_awk, f, infile))
# Data of one series: size and GB/s.
data(f, k) = sprintf("< awk -F, '%s %s && $c[\"test\"] \":\" $c[\"device\"] == \"%s\" " . \
	"{ print $c[\"size\"], $c[\"gbps\"] }' '%s'", fam_awk, ok_awk, k, infile)
# Panel titles say what x is (an x label would collide with the key).
ptitle(f) = (f eq "splice") ? "splice: DEV -> pipe -> sink; x: pipe size" : \
	    (f eq "read") ? "read() and io_uring reads; x: read size" : \
	    (f eq "tcp") ? "to TCP on loopback, receiver included; x: bytes per call" : \
	    (f eq "clear") ? "clear, hot buffer; x: bytes per call" : \
	    (f eq "clear-cold") ? "clear, cold destination; x: bytes per call" : \
	    (f eq "chunk") ? "clear of 4/16/64 MiB in chunks; x: chunk size" : f

set terminal pngcairo size (nfam * 760), 560 font "sans,10"
set output outfile
set datafile separator whitespace
set logscale xy 2
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set xtics ("64" 64, "256" 256, "1K" 1024, "4K" 4096, "16K" 16384, \
	   "64K" 65536, "256K" 262144, "1M" 1048576, "4M" 4194304, \
	   "16M" 16777216, "64M" 67108864)
set ytics ("0.25" 0.25, "0.5" 0.5, "1" 1, "2" 2, "4" 4, "8" 8, "16" 16, \
	   "32" 32, "64" 64, "128" 128, "256" 256)
set ylabel "GB/s (10^9 bytes/s)"
set key outside bottom center horizontal maxrows 4 font "sans,9" noenhanced width 2
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05

# Colour by device, dash and point type by test.
idx(list, w) = sum [n = 1:words(list)] (word(list, n) eq w ? n : 0)
ktest(k) = k[1:strstrt(k, ":") - 1]
kdev(k) = k[strstrt(k, ":") + 1:]
array colour[8] = ["#7b2fbe", "#009e73", "#0072b2", "#e69f00", "#d55e00", \
		   "#56b4e9", "#cc79a7", "#000000"]
dtype(tests, k) = (idx(tests, ktest(k)) - 1) % 5 + 1
array point[6] = [5, 7, 9, 11, 13, 4]

mtitle = sprintf("%s (threads=%s)", title, thr)
if (strlen(note) > 0) {
	mtitle = mtitle . sprintf("; read and io_uring rows left out: %s, " . \
		"see clearbench (clear.png) for the read path", note)
}
set multiplot layout 1, nfam title mtitle noenhanced
do for [i = 1:nfam] {
	f = word(families, i)
	s = series(f)
	devs = ""
	tests = ""
	do for [j = 1:words(s)] {
		k = word(s, j)
		if (idx(devs, kdev(k)) == 0) { devs = devs . kdev(k) . " " }
		if (idx(tests, ktest(k)) == 0) { tests = tests . ktest(k) . " " }
	}
	set title ptitle(f) noenhanced
	plot for [j = 1:words(s)] data(f, word(s, j)) using 1:2 \
		with linespoints lw 2 \
		lc rgb (colour[(idx(devs, kdev(word(s, j))) - 1) % 8 + 1]) \
		dt dtype(tests, word(s, j)) \
		pt (point[(idx(tests, ktest(word(s, j))) - 1) % 6 + 1]) ps 1.2 \
		title word(s, j)
}
unset multiplot
unset output
