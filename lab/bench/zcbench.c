// SPDX-License-Identifier: GPL-2.0
/*
 * zcbench - throughput of /dev/zczero against stock /dev/zero and against
 * the best user-space way of producing the same zeros.
 *
 * Every measurement is bounded by a byte count (-b, split across the
 * threads) and, as a safety net, by a time cap (-s); a measurement that
 * is still not done 30 s after the cap (a syscall that never returns)
 * ends the program with exit status 3.  Each is timed with
 * CLOCK_MONOTONIC from the moment all threads are set up until the last
 * one (and its pipe reader, if any) has been joined.  The first buffer of
 * every measurement is checked to be all zeros before timing starts, so
 * a broken device cannot report a nonsense speed.
 *
 * Tests (device column: DEV, REF or the user-space peer):
 *   splice-null    DEV -> pipe -> /dev/null, drained by the same thread
 *   splice-reader  DEV -> pipe, a reader thread splices it on to /dev/null
 *   splice-self    DEV -> pipe -> DEV (zczero's splice_write), DEV only
 *   tcp-sendfile   sendfile(TCP socket, DEV) on loopback, size bytes a call
 *   tcp-splice     DEV -> pipe -> TCP socket on loopback
 *   read           read() of size bytes into a reused buffer
 *   uring-qd1/32   io_uring reads, queue depth 1 and 32 (in-flight reads
 *                  share a buffer pool of at most 2 MiB, so the footprint
 *                  stays near that of read())
 *   mmap-touch     a private mapping of DEV (1 GiB, -M), MADV_HUGEPAGE,
 *                  one byte written per 4 KiB page: time, page faults
 *                  (getrusage) and the VMA's AnonHugePages (smaps); the
 *                  peer is an anonymous mapping.  A fresh mapping of the
 *                  device is checked to read zeros first, and after the
 *                  touch the bytes beside each written one still must.
 * The peer for splice-* is vmsplice() of a zeroed buffer into the pipe,
 * drained the same way; the peer for read and uring-* is memset() of the
 * same buffer (the store-bandwidth ceiling); the peers for tcp-* are
 * send() of a zeroed buffer ("send", the peer of the ratio column) and
 * send(MSG_ZEROCOPY) with its completions reaped from the error queue
 * ("send-zc").  Every tcp-* connection has a receiver thread that splices
 * what arrives to /dev/null through a pipe of its own, and its work is in
 * the time: a tcp-* figure is that of sender and receiver together.
 *
 * With -z PATH, the device at PATH is measured on every splice and tcp
 * row as "zeropatch": lab/bench/zcref's /dev/zcref runs the loop of the
 * zero-page splice patch proposed for /dev/zero (PAGE_SIZE buffers of the
 * zero page, no-op get and release), the reference zczero is compared
 * with in the same run.  Into itself (splice-self) it splices as /dev/null does.
 *
 * GB/s is 10^9 bytes per second, all threads together.  With -i an
 * instr/B column gives guest nanoseconds per byte, which is instructions
 * per byte when the guest runs under QEMU with -icount shift=0.
 *
 * With -V NOTE (lab/bench.sh passes "no verdict (TCG)" in its TCG modes)
 * the read, io_uring and memset rows keep their figures but carry NOTE
 * instead of ratios, in the table and the CSV's verdict column, and the
 * plots leave them out: TCG runs rep stosb one byte at a time, so those
 * figures say nothing about the read path on hardware.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>

#include "zcbench.h"

/* The table of benchmarks, in the order they run; -T picks by name */
static const struct bench {
	const char *name;
	void (*run)(const int *threads, int n);
	void (*header)(void);		/* lines of its own in the header */
} benches[] = {
	{ "splice",	bench_splice,	NULL },
	{ "tcp",	bench_tcp,	header_tcp },
	{ "read",	bench_read,	NULL },
	{ "uring",	bench_uring,	header_uring },
	{ "mmap",	bench_mmap,	header_mmap },
};

static bool selected[ARRAY_SIZE(benches)];
static int opt_threads;		/* -t */

static void cpu_info(char *model, size_t len, char *flags, size_t flen)
{
	static const char *const wanted[] = { "erms", "fsrm", "fsrs", "fzrm" };
	char line[16384];
	FILE *f = fopen("/proc/cpuinfo", "r");
	bool have_model = false, have_flags = false;
	size_t i;

	snprintf(model, len, "unknown");
	flags[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && !(have_model && have_flags)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		if (!have_model && !strncmp(line, "model name", 10)) {
			colon += 2;
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(model, len, "%s", colon);
			have_model = true;
		} else if (!have_flags && !strncmp(line, "flags", 5)) {
			char *tok, *save;

			for (tok = strtok_r(colon + 1, " \t\n", &save); tok;
			     tok = strtok_r(NULL, " \t\n", &save)) {
				for (i = 0; i < ARRAY_SIZE(wanted); i++) {
					if (strcmp(tok, wanted[i]) ||
					    strlen(flags) + strlen(tok) + 2 > flen)
						continue;
					strcat(flags, " ");
					strcat(flags, tok);
				}
			}
			have_flags = true;
		}
	}
	fclose(f);
	if (!flags[0])
		snprintf(flags, flen, " none");
}

static void usage_exit(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-d DEV] [-r REF] [-z PATCHDEV] [-t MAXTHREADS] [-b BYTES]\n"
		"          [-s SECONDS] [-n N] [-q] [-c FILE.csv] [-m LABEL] [-T TESTS] [-i]\n"
		"          [-M BYTES] [-V NOTE]\n"
		"  -d DEV      device under test (default /dev/zczero)\n"
		"  -r REF      reference device (default /dev/zero)\n"
		"  -z PATCHDEV the zero-page splice proposed for /dev/zero, e.g. /dev/zcref\n"
		"              (bench/zcref): splice and tcp rows labelled %s\n"
		"  -t N        threads 1, 2, 4, ... up to N (default: online CPUs)\n"
		"  -b BYTES    bytes per measurement, all threads together;\n"
		"              K/M/G suffixes (default 256M)\n"
		"  -q          quick: -b 32M\n"
		"  -s SECONDS  time cap per measurement (default 30); exit 3 if\n"
		"              one is stuck 30 s past it\n"
		"  -n N        run each measurement N times, keep the fastest\n"
		"              (default 1; a failed run is always reported)\n"
		"  -c FILE     also write CSV: test,size,threads,device,bytes,seconds,\n"
		"              gbps,faults,anonhuge_kb,verdict\n"
		"  -m LABEL    machine label for the header\n"
		"  -T TESTS    comma list of splice,tcp,read,uring,mmap (default all)\n"
		"  -i          print instr/B (= ns/B; under QEMU -icount shift=0)\n"
		"  -M BYTES    mmap-touch mapping size (default 1G)\n"
		"  -V NOTE     read, io_uring and memset rows: NOTE instead of\n"
		"              ratios, e.g. \"no verdict (TCG)\"; no commas\n",
		prog, PATCH_LABEL);
	exit(2);
}

static bool parse_bytes(const char *s, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return false;
	switch (*end) {
	case 'k': case 'K':
		v *= KIB; end++;
		break;
	case 'm': case 'M':
		v *= MIB; end++;
		break;
	case 'g': case 'G':
		v *= GIB; end++;
		break;
	}
	if (*end == 'i' || *end == 'B')
		end += *end == 'i' ? (end[1] == 'B' ? 2 : 1) : 1;
	if (*end || !v)
		return false;
	*out = v;
	return true;
}

/* A number from lo to hi: whether s is one */
static bool parse_num(const char *s, double lo, double hi, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return !errno && !*end && end != s && *out >= lo && *out <= hi;
}

static bool parse_int(const char *s, int lo, int hi, int *out)
{
	double v;

	if (!parse_num(s, lo, hi, &v) || v != (int)v)
		return false;
	*out = v;
	return true;
}

static bool parse_tests(char *s)
{
	const char *names[ARRAY_SIZE(benches)];
	bool *flags[ARRAY_SIZE(benches)];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(benches); i++) {
		names[i] = benches[i].name;
		flags[i] = &selected[i];
	}
	return parse_list(s, names, flags, ARRAY_SIZE(benches));
}

/* An option that takes a string as it is: whether c is one, and it set */
static bool text_option(int c, const char *arg, const char **csv_path)
{
	const struct {
		int opt;
		const char **to;
	} opts[] = {
		{ 'd', &zcb.dev_path }, { 'r', &zcb.ref_path },
		{ 'z', &zcb.patch_path }, { 'm', &zcb.machine_label },
		{ 'c', csv_path },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(opts); i++) {
		if (opts[i].opt == c) {
			*opts[i].to = arg;
			return true;
		}
	}
	return false;
}

/* The options; the CSV's path, if any */
static const char *parse_options(int argc, char **argv)
{
	const char *csv_path = NULL;
	bool bytes_set = false, quick = false;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int i;
	int c;

	opt_threads = ncpu > 0 ? ncpu : 1;
	for (i = 0; i < ARRAY_SIZE(benches); i++)
		selected[i] = true;
	while ((c = getopt(argc, argv, "d:r:z:t:b:s:n:qc:m:T:iM:V:h")) != -1) {
		bool ok = true;

		if (text_option(c, optarg, &csv_path))
			continue;
		switch (c) {
		case 'q':
			quick = true;
			break;
		case 'i':
			zcb.instr = true;
			break;
		case 't':
			ok = parse_int(optarg, 1, 1024, &opt_threads);
			break;
		case 's':
			ok = parse_num(optarg, 0.001, 86400, &zcb.seconds);
			break;
		case 'n':
			ok = parse_int(optarg, 1, 100, &zcb.repeat);
			break;
		case 'T':
			ok = parse_tests(optarg);
			break;
		case 'b':
			ok = parse_bytes(optarg, &zcb.bytes);
			bytes_set = true;
			break;
		case 'M':
			ok = parse_bytes(optarg, &zcb.map) && zcb.map >= MAP_CHECK_LEN;
			break;
		case 'V':
			ok = *optarg && !strchr(optarg, ',');
			zcb.noverdict_note = optarg;
			break;
		default:
			ok = false;
		}
		if (!ok)
			usage_exit(argv[0]);
	}
	if (optind != argc)
		usage_exit(argv[0]);
	if (quick && !bytes_set)
		zcb.bytes = 32 * MIB;
	return csv_path;
}

/* What was measured, where and how: the lines above the table */
static void banner(void)
{
	char model[256], flags[64], date[64];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct utsname uts;
	unsigned int i;
	time_t t;

	if (uname(&uts))
		snprintf(uts.release, sizeof(uts.release), "unknown");
	cpu_info(model, sizeof(model), flags, sizeof(flags));
	t = time(NULL);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", localtime(&t));

	printf("zcbench: %s vs %s; peers vmsplice (pipes), memset (reads), send (tcp)\n",
	       zcb.dev_path, zcb.ref_path);
	if (zcb.patch_path)
		printf("patch:   %s as %s, the zero-page splice proposed for /dev/zero\n",
		       zcb.patch_path, PATCH_LABEL);
	printf("machine: %s\n", zcb.machine_label ? zcb.machine_label : "(no -m label)");
	printf("kernel:  %s %s\n", uts.release, uts.machine);
	printf("cpu:     %s (%ld online; flags:%s)\n", model, ncpu, flags);
	printf("date:    %s\n", date);
	printf("run:     %llu bytes per measurement over all threads, cap %.0f s, ",
	       zcb.bytes, zcb.seconds);
	printf("best of %d; threads up to %d\n", zcb.repeat, opt_threads);
	if (zcb.instr) {
		printf("instr/B: guest ns per byte; instructions per byte under -icount shift=0 ");
		printf("(threads=1 rows)\n");
	}
	if (zcb.noverdict_note)
		printf("reads:   [%s]: %s\n", zcb.noverdict_note,
		       "figures kept, no ratios, left out of the plots");
	for (i = 0; i < ARRAY_SIZE(benches); i++)
		if (selected[i] && benches[i].header)
			benches[i].header();
	printf("GB/s = 1e9 bytes/s; ratios on %s rows: vs %s, vs the user-space peer%s\n\n",
	       zcb.dev_label, zcb.ref_label, zcb.patch_path ? ", vs " PATCH_LABEL : "");
}

/* Every benchmark asked for, at 1, 2, 4, ... threads up to -t */
static void run_benchmarks(void)
{
	int threads[32], n = 0, t;
	unsigned int i;

	for (t = 1; t < opt_threads && n < 31; t *= 2)
		threads[n++] = t;
	threads[n++] = opt_threads;
	for (i = 0; i < ARRAY_SIZE(benches); i++)
		if (selected[i])
			benches[i].run(threads, n);
}

int main(int argc, char **argv)
{
	const char *csv_path = parse_options(argc, argv);

	if (!zcb_begin(csv_path))
		return 1;
	banner();
	zcb_header_row();
	fflush(stdout);
	run_benchmarks();
	return zcb_end();
}
