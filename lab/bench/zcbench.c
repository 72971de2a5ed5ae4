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

const char *dev_path = "/dev/zczero";
const char *ref_path = "/dev/zero";
const char *patch_path;		/* -z: the zero-page patch's loop */
const char *null_path = "/dev/null";
const char *dev_label, *ref_label, *machine_label;
const char *noverdict_note;	/* -V */
unsigned long long opt_bytes = 256 * MIB;
unsigned long long opt_map = GIB;
double opt_seconds = 30.0;
int opt_threads;
int opt_repeat = 1;
bool opt_instr;
bool do_splice = true, do_read = true, do_uring = true;
bool do_tcp = true, do_mmap = true;

static void thp_mode(char *buf, size_t len)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	char line[128], *a, *b;

	snprintf(buf, len, "none");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f)) {
		a = strchr(line, '[');
		b = a ? strchr(a, ']') : NULL;
		if (a && b) {
			*b = '\0';
			snprintf(buf, len, "%s", a + 1);
		}
	}
	fclose(f);
}

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
	static const char *const names[] = { "splice", "tcp", "read", "uring", "mmap" };
	bool *const flags[] = { &do_splice, &do_tcp, &do_read, &do_uring, &do_mmap };

	return parse_list(s, names, flags, ARRAY_SIZE(names));
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* An option that takes a string as it is: whether c is one, and it set */
static bool text_option(int c, const char *arg, const char **csv_path)
{
	const struct {
		int opt;
		const char **to;
	} opts[] = {
		{ 'd', &dev_path }, { 'r', &ref_path }, { 'z', &patch_path },
		{ 'm', &machine_label }, { 'c', csv_path },
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
	int c;

	opt_threads = ncpu > 0 ? ncpu : 1;
	while ((c = getopt(argc, argv, "d:r:z:t:b:s:n:qc:m:T:iM:V:h")) != -1) {
		bool ok = true;

		if (text_option(c, optarg, &csv_path))
			continue;
		switch (c) {
		case 'q':
			quick = true;
			break;
		case 'i':
			opt_instr = true;
			break;
		case 't':
			ok = parse_int(optarg, 1, 1024, &opt_threads);
			break;
		case 's':
			ok = parse_num(optarg, 0.001, 86400, &opt_seconds);
			break;
		case 'n':
			ok = parse_int(optarg, 1, 100, &opt_repeat);
			break;
		case 'T':
			ok = parse_tests(optarg);
			break;
		case 'b':
			ok = parse_bytes(optarg, &opt_bytes);
			bytes_set = true;
			break;
		case 'M':
			ok = parse_bytes(optarg, &opt_map) && opt_map >= MAP_CHECK_LEN;
			break;
		case 'V':
			ok = *optarg && !strchr(optarg, ',');
			noverdict_note = optarg;
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
		opt_bytes = 32 * MIB;
	return csv_path;
}

/* The devices' labels, and the ratio columns' headers */
static void labels(void)
{
	dev_label = base_name(dev_path);
	ref_label = base_name(ref_path);
	if (!strcmp(dev_label, ref_label)) {
		/* e.g. -d /dev/zero to exercise the code paths natively */
		static char dl[64], rl[64];

		snprintf(dl, sizeof(dl), "%.50s(dev)", dev_label);
		snprintf(rl, sizeof(rl), "%.50s(ref)", ref_label);
		dev_label = dl;
		ref_label = rl;
	}
	snprintf(ratio_ref_hdr, sizeof(ratio_ref_hdr), "%.20s/%.20s",
		 dev_label, ref_label);
	snprintf(ratio_peer_hdr, sizeof(ratio_peer_hdr), "%.20s/peer",
		 dev_label);
	snprintf(ratio_patch_hdr, sizeof(ratio_patch_hdr), "%.20s/%s",
		 dev_label, PATCH_LABEL);
	ratio_w = strlen(ratio_ref_hdr);
	if ((int)strlen(ratio_peer_hdr) > ratio_w)
		ratio_w = strlen(ratio_peer_hdr);
	if (patch_path && (int)strlen(ratio_patch_hdr) > ratio_w)
		ratio_w = strlen(ratio_patch_hdr);
}

/* What was measured, where and how: the lines above the table */
static void banner(void)
{
	char model[256], flags[64], date[64], thp[32];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct utsname uts;
	time_t t;

	if (uname(&uts))
		snprintf(uts.release, sizeof(uts.release), "unknown");
	cpu_info(model, sizeof(model), flags, sizeof(flags));
	t = time(NULL);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", localtime(&t));
	if (do_uring)
		probe_uring();

	printf("zcbench: %s vs %s; peers vmsplice (pipes), memset (reads), send (tcp)\n",
	       dev_path, ref_path);
	if (patch_path)
		printf("patch:   %s as %s, the zero-page splice proposed for /dev/zero\n",
		       patch_path, PATCH_LABEL);
	if (do_tcp)
		printf("tcp:     loopback; a receiver thread splices to /dev/null, in the time\n");
	printf("machine: %s\n", machine_label ? machine_label : "(no -m label)");
	printf("kernel:  %s %s\n", uts.release, uts.machine);
	printf("cpu:     %s (%ld online; flags:%s)\n", model, ncpu, flags);
	printf("date:    %s\n", date);
	printf("run:     %llu bytes per measurement over all threads, cap %.0f s, ",
	       opt_bytes, opt_seconds);
	printf("best of %d; threads up to %d\n", opt_repeat, opt_threads);
	if (do_uring && !uring_ok)
		printf("io_uring: unavailable (%s); io_uring rows skipped\n",
		       uring_msg);
	if (opt_instr) {
		printf("instr/B: guest ns per byte; instructions per byte under -icount shift=0 ");
		printf("(threads=1 rows)\n");
	}
	if (noverdict_note && (do_read || do_uring))
		printf("reads:   [%s]: %s\n", noverdict_note,
		       "figures kept, no ratios, left out of the plots");
	if (do_mmap) {
		thp_mode(thp, sizeof(thp));
		printf("mmap:    %llu bytes MAP_PRIVATE, MADV_HUGEPAGE, ", opt_map);
		printf("a byte written per %lu; THP %s\n", TOUCH_STRIDE, thp);
	}
	printf("GB/s = 1e9 bytes/s; ratios on %s rows: vs %s, vs the user-space peer%s\n\n",
	       dev_label, ref_label, patch_path ? ", vs " PATCH_LABEL : "");
}

/* Every benchmark asked for, for each size and each thread count */
static void run_benchmarks(void)
{
	static const struct {
		const char *test;
		enum sink_kind sink;
	} sinks[] = {
		{ "splice-null", SINK_NULL },
		{ "splice-reader", SINK_READER },
		{ "splice-self", SINK_DEV },
	};
	int nthr[32], nn = 0, i, s, ti;

	for (i = 1; i < opt_threads && nn < 31; i *= 2)
		nthr[nn++] = i;
	nthr[nn++] = opt_threads;
	if (do_splice) {
		for (i = 0; i < 3; i++)
			for (s = 0; s < 2; s++)
				for (ti = 0; ti < nn; ti++)
					splice_group(sinks[i].test,
						     sinks[i].sink,
						     pipe_sizes[s], nthr[ti]);
	}
	if (do_tcp) {
		for (s = 0; s < 2; s++)
			for (ti = 0; ti < nn; ti++)
				tcp_group("tcp-sendfile", K_SENDFILE,
					  pipe_sizes[s], nthr[ti]);
		for (s = 0; s < 2; s++)
			for (ti = 0; ti < nn; ti++)
				tcp_group("tcp-splice", K_SPLICE,
					  pipe_sizes[s], nthr[ti]);
	}
	if (do_read || do_uring) {
		for (s = 0; s < 4; s++)
			for (ti = 0; ti < nn; ti++)
				read_group("read", K_READ, 0, read_sizes[s],
					   nthr[ti]);
	}
	if (do_uring && uring_ok) {
		for (s = 0; s < 4; s++)
			for (ti = 0; ti < nn; ti++)
				read_group("uring-qd1", K_URING, 1,
					   read_sizes[s], nthr[ti]);
		for (s = 0; s < 4; s++)
			for (ti = 0; ti < nn; ti++)
				read_group("uring-qd32", K_URING, 32,
					   read_sizes[s], nthr[ti]);
	}

	if (do_mmap)
		map_group();
}

int main(int argc, char **argv)
{
	const char *csv_path = parse_options(argc, argv);

	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, watchdog);
	labels();
	if (csv_path) {
		csv = fopen(csv_path, "w");
		if (!csv) {
			fprintf(stderr, "zcbench: fopen %s: %s\n", csv_path,
				strerror(errno));
			return 1;
		}
		fprintf(csv, "%s\n", CSV_HEADER);
	}
	if (do_uring)
		probe_uring();
	banner();
	print_header_row();
	fflush(stdout);
	run_benchmarks();
	if (csv && fclose(csv)) {
		fprintf(stderr, "zcbench: fclose %s: %s\n", csv_path,
			strerror(errno));
		return 1;
	}
	if (nerrors) {
		fprintf(stderr, "zcbench: %d measurement(s) failed\n", nerrors);
		return 1;
	}
	return 0;
}
