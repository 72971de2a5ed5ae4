# SPDX-License-Identifier: GPL-2.0
#
# targets.txt of make bench: each target a figure with "met" or "MISSED"
# (and by how much), never a failure; then the figures beside them.
#
#   awk -f targets.awk -v ic=ICOUNT.csv -v wc=WALLCLOCK.csv -v cl=CLEAR.csv \
#       -v rc=READCALL.txt -v oc=OPENCALL.txt -v accel=kvm|tcg -v nv=NOTE FILES...
#
# The CSVs are csv.h's: columns are found by their names in the first line.
# readcall's and opencall's are their text output.

BEGIN { FS = "," }
function file_kind(f) {
	return f == ic ? 1 : f == wc ? 2 : f == cl ? 3 : f == rc ? 4 : f == oc ? 5 : 0
}
FNR == 1 { f = file_kind(FILENAME) }
f == 4 {	# readcall: DEVICE SIZE B NS ns/call; the last round wins
	n = split($0, w, " ")
	if (n >= 4 && w[3] == "B") {
		d = w[1]
		sub(/.*\//, "", d)
		call[d, w[2]] = w[4]
	}
	next
}
f == 5 {	# opencall: DEVICE N threads RATE open+close a second
	if (split($0, w, " ") >= 4 && w[3] == "threads") {
		d = w[1]
		sub(/.*\//, "", d)
		opens[d, w[2]] = w[4]
	}
	next
}
FNR == 1 {
	split("", col)
	for (i = 1; i <= NF; i++)
		col[$i] = i
	next
}
{
	key = $col["test"] "," $col["size"] "," $col["threads"] "," $col["device"]
	gbps[f, key] = $col["gbps"]
	sec[f, key] = $col["seconds"]
	ipb[f, key] = ($col["bytes"] > 0 && $col["gbps"] ~ /^[0-9.]+$/) ? \
		$col["seconds"] * 1e9 / $col["bytes"] : -1
	flt[f, key] = $col["faults"]
	ahp[f, key] = $col["anonhuge_kb"]
	if (f == 1 && $col["test"] == "mmap-touch")
		msize = $col["size"]
}
function num(f, k) { return ((f, k) in gbps) && gbps[f, k] ~ /^[0-9.]+$/ && gbps[f, k] > 0 }
function ratio(f, a, b) { return (num(f, a) && num(f, b)) ? gbps[f, a] / gbps[f, b] : -1 }
function ipbof(f, k) { return num(f, k) ? ipb[f, k] : -1 }
function size(b) {
	return b >= 1073741824 ? b / 1073741824 "G" : b >= 1048576 ? b / 1048576 "M" : \
		b >= 1024 ? b / 1024 "K" : b
}
function unmeasured(what) { printf "  %-40s not measured\n", what }
# at most lim: met, or MISSED and by how much
function le(what, v, lim, unit) {
	if (v < 0)
		return unmeasured(what)
	printf "  %-40s %.4f %s (target <= %s): %s\n", what, v, unit, lim,
		(v <= lim ? "met" : sprintf("MISSED, %.2fx the target", v / lim))
}
# at least lim
function ge(what, v, lim, of) {
	if (v < 0)
		return unmeasured(what)
	printf "  %-40s %.2fx %s (target >= %.2fx): %s\n", what, v, of, lim,
		(v >= lim ? "met" : sprintf("MISSED, %.0f%% short", 100 * (1 - v / lim)))
}
# scaling: a's 2-thread/1-thread ratio against b's, wanted at least lim
function scale(what, a1, a2, b1, b2, an, bn, lim,    ra, rb) {
	ra = (a1 > 0 && a2 > 0) ? a2 / a1 : -1
	rb = (b1 > 0 && b2 > 0) ? b2 / b1 : -1
	if (ra < 0 || rb < 0)
		return unmeasured(what)
	printf "  %-40s %s %.2fx, %s %.2fx: %.2f of it (target >= %.2f): %s\n", what,
		an, ra, bn, rb, ra / rb, lim, (ra / rb >= lim ? "met" : "MISSED")
}
function g(f, k) { return num(f, k) ? gbps[f, k] : -1 }
END {
	print "targets: icount VM on the newest 7.x unless noted; figures, never a failure"
	le("1M pipe -> /dev/null", ipbof(1, "splice-null,1048576,1,zczero"), 0.004, "instr/B")
	ge("1M pipe -> /dev/null", ratio(1, "splice-null,1048576,1,zczero", "splice-null,1048576,1,zeropatch"), 5, "zeropatch")
	ge("64K pipe -> /dev/null", ratio(1, "splice-null,65536,1,zczero", "splice-null,65536,1,vmsplice"), 2.5, "vmsplice")
	ge("64K pipe -> /dev/null", ratio(1, "splice-null,65536,1,zczero", "splice-null,65536,1,zeropatch"), 1.4, "zeropatch")
	le("1M pipe -> /dev/zczero", ipbof(1, "splice-self,1048576,1,zczero"), 0.002, "instr/B")
	ge("1M pipe -> reader thread", ratio(1, "splice-reader,1048576,1,zczero", "splice-reader,1048576,1,vmsplice"), 5, "vmsplice")
	ns = split("1 64 1024", rs, " ")
	for (j = 1; j <= ns; j++) {
		what = sprintf("small read, %s B, instr/call", rs[j])
		if (!(("zczero", rs[j]) in call) || !(("zero", rs[j]) in call)) {
			unmeasured(what)
			continue
		}
		z = call["zczero", rs[j]]
		s = call["zero", rs[j]]
		printf "  %-40s zczero %d, /dev/zero %d, %+.1f%% (target: no more): %s\n",
			what, z, s, 100 * (z / s - 1),
			(z <= s ? "met" : sprintf("MISSED by %d instructions", z - s))
	}
	zk = "mmap-touch," msize ",1,zczero"
	rk = "mmap-touch," msize ",1,zero"
	what = sprintf("mmap %s private, AnonHugePages", size(msize))
	if (msize == "" || !num(1, zk) || !num(1, rk)) {
		unmeasured(what)
	} else {
		printf "  %-40s zczero %d kB, /dev/zero %d kB (target: the same): %s\n",
			what, ahp[1, zk], ahp[1, rk], (ahp[1, zk] == ahp[1, rk] ? "met" : \
			sprintf("MISSED by %d kB", ahp[1, rk] - ahp[1, zk]))
		printf "  %-40s zczero %d faults, %.0f Minstr; /dev/zero %d faults, %.0f Minstr\n",
			"", flt[1, zk], sec[1, zk] * 1e3, flt[1, rk], sec[1, rk] * 1e3
	}

	print ""
	printf "scaling: 2 threads against 1, each with its own fd and pipe, wall clock (2 vCPUs, %s)\n", toupper(accel)
	split("65536 1048576", ps, " ")
	for (j = 1; j <= 2; j++) {
		k = "splice-null," ps[j] ","
		scale(sprintf("splice, %s pipe -> /dev/null", size(ps[j])),
			g(2, k "1,zczero"), g(2, k "2,zczero"),
			g(2, k "1,zeropatch"), g(2, k "2,zeropatch"), "zczero", "zeropatch", 1)
	}
	scale("open() and close()", opens["zczero", 1], opens["zczero", 2],
		opens["zero", 1], opens["zero", 2], "zczero", "/dev/zero", 0.9)
	if (("zczero", 4) in opens && ("zero", 4) in opens)
		printf "  %-40s zczero %.0f, /dev/zero %.0f a second\n", "open() and close(), 4 threads",
			opens["zczero", 4], opens["zero", 4]

	print ""
	print "reads: under TCG the VM read and io_uring rows are [" nv "]: TCG runs rep stosb"
	print "a byte at a time (and counts each under icount).  The verdict, natively, from"
	print "clearbench (hot buffer, GB/s; zczero clears with rep stosb from 2 KiB up, stock"
	print "/dev/zero with clear_user(), the store loop on CPUs without FSRS):"
	ns = split("4096 65536 1048576 16777216", cs, " ")
	for (j = 1; j <= ns; j++) {
		a = "clear," cs[j] ",1,stosb"
		b = "clear," cs[j] ",1,storeloop"
		if (!num(3, a) || !num(3, b)) {
			printf "  %-4s not measured\n", size(cs[j])
			continue
		}
		printf "  %-4s rep stosb %6.1f, store loop %6.1f: %.2fx\n", size(cs[j]),
			gbps[3, a], gbps[3, b], gbps[3, a] / gbps[3, b]
	}
	if (accel == "kvm") {
		print "reads in the KVM guest, hardware speed (wall clock, 1 thread): zczero/zero"
		split("read uring-qd1 uring-qd32", rt, " ")
		for (i = 1; i <= 3; i++) {
			line = sprintf("  %-10s", rt[i])
			for (j = 1; j <= ns; j++) {
				r = ratio(2, rt[i] "," cs[j] ",1,zczero", rt[i] "," cs[j] ",1,zero")
				line = line sprintf(" %s %s", size(cs[j]), r < 0 ? "-" : sprintf("%.2fx", r))
			}
			print line
		}
	} else {
		print "  reads at hardware speed in a KVM guest: not measured, this host runs its guests under TCG"
	}

	print ""
	print "zczero against the zero-page splice patch proposed for /dev/zero (zeropatch, lab/bench/zcref), icount; figures, not targets"
	n = split("splice-null,65536 splice-null,1048576 splice-reader,1048576 splice-self,1048576", tk, " ")
	split("64K pipe -> /dev/null|1M pipe -> /dev/null|1M pipe -> reader thread|1M pipe -> itself (*)", tname, "|")
	for (j = 1; j <= n; j++) {
		z = tk[j] ",1,zczero"
		p = tk[j] ",1,zeropatch"
		if (!num(1, p) || !num(1, z)) {
			unmeasured(tname[j])
			continue
		}
		printf "  %-30s zczero %.4f instr/B, zeropatch %.4f; zczero/zeropatch %.2fx\n",
			tname[j] ":", ipb[1, z], ipb[1, p], ratio(1, z, p)
	}
	print "  (*) the patched /dev/zero splices into itself as /dev/null does"
	print "sendfile and splice into TCP on loopback, receiver included (instr/B, icount; send, send-zc: the same peers for both)"
	n = split("tcp-sendfile,65536 tcp-sendfile,1048576 tcp-splice,65536 tcp-splice,1048576", tk, " ")
	split("sendfile, 64K a call|sendfile, 1M a call|splice, 64K pipe|splice, 1M pipe", tname, "|")
	split("zczero zero zeropatch send send-zc", dv, " ")
	for (j = 1; j <= n; j++) {
		line = sprintf("  %-22s", tname[j] ":")
		for (d = 1; d <= 5; d++) {
			key = (d >= 4 ? "tcp-sendfile," substr(tk[j], index(tk[j], ",") + 1) : tk[j]) ",1," dv[d]
			if (num(1, key))
				line = line sprintf(" %s %.4f", dv[d], ipb[1, key])
			else if ((1, key) in gbps)
				line = line sprintf(" %s %s", dv[d], gbps[1, key])
		}
		print line
	}
}
