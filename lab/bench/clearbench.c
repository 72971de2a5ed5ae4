// SPDX-License-Identifier: GPL-2.0
/*
 * clearbench - user-space microbenchmark of zcdev's read-path clearing
 * routine, in the way `perf bench mem memset` builds the kernel's memset:
 * zc_stosb() comes from ../../zcdev_clear.h compiled with -DZC_USERSPACE, so
 * what is timed is the module's own instruction sequence.
 *
 * It is compared with:
 *   storeloop  the kernel's rep_stos_alternative (arch/x86/lib/
 *              clear_page_64.S), which clear_user() calls on CPUs without
 *              FSRS: 64-byte unrolled movq stores, an 8-byte loop, a byte
 *              tail; a called function, as in the kernel
 *   stosq      rep stosq for len / 8, rep stosb for the rest
 *   movnti     non-temporal 8-byte stores (64-byte unrolled) + sfence
 *   memset     glibc memset (called through a pointer, never inlined)
 * for sizes 64 B to 64 MiB, on a hot, reused buffer ("clear") and with
 * the destination walking through 64 MiB so it is not cached
 * ("clear-cold"); and then 4, 16 and 64 MiB clears of a reused buffer
 * cut into chunks ("chunk-4M", ...), with a flag check between chunks as
 * the read path checks for signals and need_resched.
 *
 * Each figure is the best of several runs (-r), each run lasting at least
 * the minimum time (-T).  GB/s is 10^9 bytes per second.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <immintrin.h>
#include <sys/mman.h>
#include <sys/utsname.h>

#include "csv.h"
#include "zclab.h"

/*
 * glibc's <sys/cdefs.h>, included above, defines __always_inline (used by
 * zcdev_clear.h) and __attribute_noinline__.
 */
#define noinline	__attribute_noinline__
#include "zcdev_clear.h"

#ifndef ZC_HAVE_STOSB
#error "zcdev_clear.h provides no zc_stosb() for this architecture"
#endif

#define MAX_LEN		(64 * MIB)
#define GUARD		4096UL
#define NSTRAT		5

/*
 * Set by nobody: stands for signal_pending() || need_resched().  main()
 * passes its address to escape(), so the compiler cannot prove it stays 0
 * and loads it after every chunk (each clear clobbers memory).
 */
static int stop_flag;

/* The stores must happen: dst escapes and memory is clobbered. */
static inline void escape(void *p)
{
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

/*
 * rep_stos_alternative from arch/x86/lib/clear_page_64.S (6.4+), less the
 * exception table: %rdi = dst, %rcx = len, %rax = 0; returns bytes left.
 */
static noinline unsigned long store_loop(void *dst, unsigned long len)
{
	__asm__ __volatile__("	cmpq $64, %%rcx\n"
		"	jae 30f\n"
		"	cmpl $8, %%ecx\n"
		"	jae 20f\n"
		"	testl %%ecx, %%ecx\n"
		"	je 90f\n"
		"10:	movb %%al, (%%rdi)\n"		/* .Lclear_user_tail */
		"	incq %%rdi\n"
		"	decq %%rcx\n"
		"	jnz 10b\n"
		"	jmp 90f\n"
		"20:	movq %%rax, (%%rdi)\n"		/* .Lword */
		"	addq $8, %%rdi\n"
		"	subl $8, %%ecx\n"
		"	je 90f\n"
		"	cmpl $8, %%ecx\n"
		"	jae 20b\n"
		"	jmp 10b\n"
		"	.p2align 4\n"
		"30:	movq %%rax, (%%rdi)\n"		/* .Lunrolled */
		"	movq %%rax, 8(%%rdi)\n"
		"	movq %%rax, 16(%%rdi)\n"
		"	movq %%rax, 24(%%rdi)\n"
		"	movq %%rax, 32(%%rdi)\n"
		"	movq %%rax, 40(%%rdi)\n"
		"	movq %%rax, 48(%%rdi)\n"
		"	movq %%rax, 56(%%rdi)\n"
		"	addq $64, %%rdi\n"
		"	subq $64, %%rcx\n"
		"	cmpq $64, %%rcx\n"
		"	jae 30b\n"
		"	cmpl $8, %%ecx\n"
		"	jae 20b\n"
		"	testl %%ecx, %%ecx\n"
		"	jne 10b\n"
		"90:\n"
		: "+c"(len), "+D"(dst)
		: "a"(0UL)
		: "memory", "cc");
	return len;
}

static __always_inline void rep_stosq(void *dst, unsigned long len)
{
	unsigned long quads = len >> 3;

	__asm__ __volatile__("rep stosq\n\t"
			     "movq %[tail], %%rcx\n\t"
			     "rep stosb"
			     : "+c"(quads), "+D"(dst)
			     : "a"(0UL), [tail] "r"(len & 7)
			     : "memory");
}

static noinline void nt_clear(void *dst, unsigned long len)
{
	char *p = dst;

	/* escape() in the byte loops: stores one by one, not a memset() call */
	while (len && ((uintptr_t)p & 7)) {
		*p = 0;
		escape(p);
		p++;
		len--;
	}
	for (; len >= 64; len -= 64, p += 64) {
		_mm_stream_si64((long long *)p, 0);
		_mm_stream_si64((long long *)(p + 8), 0);
		_mm_stream_si64((long long *)(p + 16), 0);
		_mm_stream_si64((long long *)(p + 24), 0);
		_mm_stream_si64((long long *)(p + 32), 0);
		_mm_stream_si64((long long *)(p + 40), 0);
		_mm_stream_si64((long long *)(p + 48), 0);
		_mm_stream_si64((long long *)(p + 56), 0);
	}
	for (; len >= 8; len -= 8, p += 8)
		_mm_stream_si64((long long *)p, 0);
	for (; len; len--, p++) {
		*p = 0;
		escape(p);
	}
	_mm_sfence();
}

/* main() escape()s its address: each call loads it, memset() is not inlined */
static void *(*memset_fn)(void *, int, size_t) = memset;

/*
 * One timing loop per strategy, so each is inlined into its own loop.
 * With @walk set, each call clears the next @len bytes of the 64 MiB
 * buffer (wrapping), so the destination is not in the caches.
 */
#define DEFINE_LOOP(name, stmt)						\
static double loop_##name(char *buf, unsigned long len,			\
			  unsigned long iters, unsigned long walk,	\
			  unsigned long *left)				\
{									\
	unsigned long i, off = 0, l = 0;				\
	double t0 = now_s();						\
									\
	for (i = 0; i < iters; i++) {					\
		char *dst = buf + off;					\
									\
		stmt;							\
		escape(dst);						\
		if (walk) {						\
			off += len;					\
			if (off + len > MAX_LEN)			\
				off = 0;				\
		}							\
	}								\
	*left = l;							\
	return now_s() - t0;						\
}

DEFINE_LOOP(stosb, l |= zc_stosb(dst, len))
DEFINE_LOOP(storeloop, l |= store_loop(dst, len))
DEFINE_LOOP(stosq, rep_stosq(dst, len))
DEFINE_LOOP(movnti, nt_clear(dst, len))
DEFINE_LOOP(memset, memset_fn(dst, 0, len))

typedef double (*loop_fn)(char *dst, unsigned long len, unsigned long iters,
			  unsigned long arg, unsigned long *left);

struct strategy {
	const char *name;
	loop_fn loop;
};

static const struct strategy strategies[NSTRAT] = {
	{ "stosb",	loop_stosb },
	{ "storeloop",	loop_storeloop },
	{ "stosq",	loop_stosq },
	{ "movnti",	loop_movnti },
	{ "memset",	loop_memset },
};

/*
 * A clear of @len bytes in chunks of @chunk bytes, with a flag check
 * between chunks as the read path checks for signals and need_resched.
 */
#define DEFINE_CHUNKED(name, call)					\
static double chunked_##name(char *dst, unsigned long len,		\
			     unsigned long iters, unsigned long chunk,	\
			     unsigned long *left)			\
{									\
	unsigned long i, off, n, l = 0;					\
	double t0 = now_s();						\
									\
	for (i = 0; i < iters; i++) {					\
		for (off = 0; off < len; off += n) {			\
			n = len - off < chunk ? len - off : chunk;	\
			l |= call(dst + off, n);			\
			if (stop_flag)					\
				break;					\
		}							\
		escape(dst);						\
	}								\
	*left = l;							\
	return now_s() - t0;						\
}

DEFINE_CHUNKED(stosb, zc_stosb)
DEFINE_CHUNKED(storeloop, store_loop)

static char *base;		/* GUARD | MAX_LEN + offset | GUARD */
static char *base_dst;		/* base + GUARD + offset */
static unsigned long opt_offset;
static double min_time = 0.02;
static int repeats = 5;
/* lengths of the chunked clear: cache-resident ones and one that is not */
static unsigned long chunk_totals[3] = { 4 * MIB, 16 * MIB, MAX_LEN };
static int nchunk_totals = 3;
static bool do_sizes = true, do_cold = true, do_chunks = true;
static FILE *csv;
static int failures;

static const unsigned long sizes[] = {
	64, 100, 128, 256, 512, 1000, 1024, 2048, 4096, 4097, 8192, 16384,
	32768, 65536, 65537, 131072, 262144, 524288, 1048576, 1000003,
	2097152, 4194304, 8388608, 16777216, 33554432, 67108864,
};

#define NSIZES ARRAY_SIZE(sizes)

/* chunk sizes tried below the total, which is tried last (no chunks) */
static const unsigned long chunks[] = {
	4 * KIB, 64 * KIB, 256 * KIB, 1 * MIB, 2 * MIB, 4 * MIB, 8 * MIB,
	16 * MIB,
};

#define NCHUNKS ARRAY_SIZE(chunks)

/* Clear once over a 0xa5 pattern; the bytes around must stay 0xa5. */
static bool check_once(const char *name, char *dst, unsigned long len,
		       loop_fn fn, unsigned long arg)
{
	unsigned long left, i;
	const unsigned char *p = (const unsigned char *)dst;

	memset(dst - 64, 0xa5, len + 128);
	fn(dst, len, 1, arg, &left);
	for (i = 0; i < len; i++)
		if (p[i])
			break;
	if (left || i < len || p[-1] != 0xa5 || p[len] != 0xa5) {
		fprintf(stderr,
			"clearbench: %s(%lu) is wrong: %lu left, first non-zero %lu, guards %02x %02x\n",
			name, len, left, i, p[-1], p[len]);
		failures++;
		return false;
	}
	return true;
}

/* One figure: a routine at one size, and the best run so far. */
struct figure {
	loop_fn fn;
	unsigned long len;
	unsigned long arg;
	unsigned long iters;	/* calls per run: a run lasts >= min_time */
	double gbs;		/* best of the runs */
	double secs;
	unsigned long long bytes;
};

static void calibrate(struct figure *f)
{
	unsigned long iters = 1, left;
	double t;

	for (;;) {
		t = f->fn(base_dst, f->len, iters, f->arg, &left);
		if (t >= min_time / 4 || iters >= (1UL << 40))
			break;
		iters *= t > 0 ? (min_time / 4 / t > 16 ? 16 : 2) : 16;
	}
	if (t < min_time)
		iters = iters * (min_time / (t > 0 ? t : 1 / 1e9)) + 1;
	f->iters = iters;
	f->gbs = 0;
}

/*
 * Best GB/s of each figure over the runs.  The runs go round the figures
 * (a, b, c, a, b, c, ...) so that a slow patch of the machine (another
 * tenant, a frequency change) does not fall on one figure only.
 */
static void bench(struct figure *f, int n)
{
	unsigned long left;
	int r, i;

	for (i = 0; i < n; i++)
		calibrate(&f[i]);
	for (r = 0; r < repeats; r++) {
		for (i = 0; i < n; i++) {
			double t = f[i].fn(base_dst, f[i].len, f[i].iters,
					   f[i].arg, &left);
			double gbs = (double)f[i].len * f[i].iters / t / 1e9;

			if (gbs > f[i].gbs) {
				f[i].gbs = gbs;
				f[i].secs = t;
				f[i].bytes = (unsigned long long)f[i].len *
					     f[i].iters;
			}
		}
	}
}

static void csv_row(const char *test, unsigned long size, const char *dev,
		    unsigned long long bytes, double secs, double gbs)
{
	if (csv)
		fprintf(csv, "%s,%lu,1,%s,%llu,%.9f,%.6f,,,\n", test, size, dev,
			bytes, secs, gbs);
}

static void cpu_model(char *buf, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (colon && !strncmp(line, "model name", 10)) {
			colon += 2;
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(buf, len, "%s", colon);
			break;
		}
	}
	fclose(f);
}

static void usage_exit(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-q] [-r RUNS] [-T MS] [-o OFFSET] [-H] [-t TESTS] [-L MIB]\n"
		"          [-c FILE.csv] [-m LABEL]\n"
		"  -q         quick: -r 3 -T 5\n"
		"  -r RUNS    runs per figure, the best is kept (default 5)\n"
		"  -T MS      minimum time of one run in ms (default 20)\n"
		"  -o OFFSET  misalign the destination by OFFSET bytes (0..63)\n"
		"  -H         madvise(MADV_HUGEPAGE) on the buffer\n"
		"  -t TESTS   comma list of sizes,cold,chunks (default all)\n"
		"  -L MIB     length of the chunked clear in MiB, 1..64\n"
		"             (default: 4, 16 and 64)\n"
		"  -c FILE    also write CSV: test,size,threads,device,bytes,seconds,gbps\n"
		"  -m LABEL   machine label for the header\n",
		prog);
	exit(2);
}

static long parse_long(const char *s, const char *prog, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < lo || v > hi)
		usage_exit(prog);
	return v;
}

static void run_sizes(bool walk)
{
	struct figure f[NSTRAT];
	double gbs[NSIZES][NSTRAT];
	unsigned long i, threshold;
	char sz[24];
	int s, b;

	if (walk)
		printf("\nGB/s, destination walking through %lu MiB (cold)\n%9s",
		       MAX_LEN / MIB, "size");
	else
		printf("\nGB/s, buffer reused (hot)\n%9s", "size");
	for (s = 0; s < NSTRAT; s++)
		printf(" %9s", strategies[s].name);
	printf(" %9s %11s\n", "best", "stosb/loop");
	for (i = 0; i < NSIZES; i++) {
		for (s = 0; s < NSTRAT; s++)
			f[s] = (struct figure){ .fn = strategies[s].loop,
						.len = sizes[i], .arg = walk };
		bench(f, NSTRAT);
		printf("%9s", size_str(sizes[i], sz, sizeof(sz)));
		b = 0;
		for (s = 0; s < NSTRAT; s++) {
			gbs[i][s] = f[s].gbs;
			csv_row(walk ? "clear-cold" : "clear", sizes[i],
				strategies[s].name, f[s].bytes, f[s].secs,
				f[s].gbs);
			if (gbs[i][s] > gbs[i][b])
				b = s;
			printf(" %9.2f", gbs[i][s]);
		}
		printf(" %9s %10.2fx\n", strategies[b].name,
		       gbs[i][0] / gbs[i][1]);
		fflush(stdout);
	}

	/*
	 * Threshold: the smallest size from which rep stosb is at least as
	 * fast as the store loop at every larger size measured.
	 */
	threshold = 0;
	for (i = NSIZES; i-- > 0;) {
		if (gbs[i][0] < gbs[i][1])
			break;
		threshold = sizes[i];
	}
	if (threshold)
		printf("\n%s: rep stosb >= storeloop at every size from %lu bytes up\n",
		       walk ? "cold" : "hot", threshold);
	else
		printf("\n%s: rep stosb < storeloop at the largest size\n",
		       walk ? "cold" : "hot");
}

static void run_chunks(unsigned long chunk_total)
{
	struct figure f[NCHUNKS + 2];
	unsigned long i, n = 0;
	char sz[24], tot[24], test[32];
	double best = 0;

	for (i = 0; i < NCHUNKS; i++)
		if (chunks[i] < chunk_total)
			f[n++] = (struct figure){ .fn = chunked_stosb,
						  .len = chunk_total,
						  .arg = chunks[i] };
	/* unchunked */
	f[n++] = (struct figure){ .fn = chunked_stosb, .len = chunk_total,
				  .arg = chunk_total };
	/* what stock /dev/zero does: clear_user() a page at a time */
	f[n] = (struct figure){ .fn = chunked_storeloop, .len = chunk_total,
				.arg = 4 * KIB };
	bench(f, n + 1);
	size_str(chunk_total, tot, sizeof(tot));
	snprintf(test, sizeof(test), "chunk-%s", tot);

	printf("\n%s clear in chunks, flag checked between chunks\n", tot);
	printf("%9s %9s %9s %12s %8s\n", "chunk", "routine", "GB/s",
	       "us/chunk", "vs 1");
	for (i = 0; i <= n; i++) {
		bool loop = f[i].fn == chunked_storeloop;

		csv_row(test, f[i].arg, loop ? "storeloop" : "stosb",
			f[i].bytes, f[i].secs, f[i].gbs);
		printf("%9s %9s %9.2f %12.2f %7.2fx%s\n",
		       size_str(f[i].arg, sz, sizeof(sz)),
		       loop ? "storeloop" : "stosb", f[i].gbs,
		       f[i].arg / f[i].gbs / 1e3, f[i].gbs / f[n - 1].gbs,
		       loop ? "  (stock /dev/zero: clear_user per page)" : "");
		if (!loop && f[i].gbs > best)
			best = f[i].gbs;
	}
	for (i = 0; i < n; i++)
		if (f[i].gbs >= 0.95 * best)
			break;
	printf("\nsmallest chunk within 5%% of the best: %s (%.2f GB/s, %.1f us between checks)\n",
	       size_str(f[i].arg, sz, sizeof(sz)), f[i].gbs,
	       f[i].arg / f[i].gbs / 1e3);
}

static bool parse_tests(char *s)
{
	static const char *const names[] = { "sizes", "cold", "chunks" };
	bool *const flags[] = { &do_sizes, &do_cold, &do_chunks };

	return parse_list(s, names, flags, ARRAY_SIZE(names));
}

int main(int argc, char **argv)
{
	const char *label = NULL, *csv_path = NULL;
	bool quick = false, huge = false, runs_set = false, time_set = false;
	char model[256], date[64];
	unsigned long i;
	size_t map_len = MAX_LEN + 2 * GUARD + 64;
	struct utsname uts;
	char *dst;
	time_t t;
	int c, s;

	while ((c = getopt(argc, argv, "qr:T:o:Ht:L:c:m:h")) != -1) {
		switch (c) {
		case 'q':
			quick = true;
			break;
		case 'r':
			repeats = parse_long(optarg, argv[0], 1, 1000);
			runs_set = true;
			break;
		case 'T':
			min_time = parse_long(optarg, argv[0], 1, 60000) / 1e3;
			time_set = true;
			break;
		case 'o':
			opt_offset = parse_long(optarg, argv[0], 0, 63);
			break;
		case 'H':
			huge = true;
			break;
		case 't':
			if (!parse_tests(optarg))
				usage_exit(argv[0]);
			break;
		case 'L':
			chunk_totals[0] = parse_long(optarg, argv[0], 1,
						     MAX_LEN / MIB) * MIB;
			nchunk_totals = 1;
			break;
		case 'c':
			csv_path = optarg;
			break;
		case 'm':
			label = optarg;
			break;
		default:
			usage_exit(argv[0]);
		}
	}
	if (optind != argc)
		usage_exit(argv[0]);
	if (quick) {
		if (!runs_set)
			repeats = 3;
		if (!time_set)
			min_time = 0.005;
	}

	base = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		fprintf(stderr, "clearbench: mmap: %s\n", strerror(errno));
		return 1;
	}
	if (huge && madvise(base, map_len, MADV_HUGEPAGE))
		fprintf(stderr, "clearbench: madvise(MADV_HUGEPAGE): %s\n",
			strerror(errno));
	memset(base, 0xa5, map_len);	/* fault everything in */
	/* as if something else could set stop_flag or change memset_fn */
	escape(&stop_flag);
	escape(&memset_fn);
	base_dst = base + GUARD + opt_offset;
	dst = base_dst;

	if (csv_path) {
		csv = fopen(csv_path, "w");
		if (!csv) {
			fprintf(stderr, "clearbench: fopen %s: %s\n", csv_path,
				strerror(errno));
			return 1;
		}
		fprintf(csv, "%s\n", CSV_HEADER);
	}

	if (uname(&uts))
		snprintf(uts.release, sizeof(uts.release), "unknown");
	cpu_model(model, sizeof(model));
	t = time(NULL);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", localtime(&t));
	printf("clearbench: zcdev_clear.h zc_stosb() against other ways to clear memory\n");
	printf("machine: %s\n", label ? label : "(no -m label)");
	printf("kernel:  %s %s\n", uts.release, uts.machine);
	printf("cpu:     %s\n", model);
	printf("date:    %s\n", date);
	printf("run:     best of %d runs of >= %.0f ms; dst offset %lu%s\n",
	       repeats, min_time * 1e3, opt_offset,
	       huge ? "; MADV_HUGEPAGE" : "");

	/* correctness first: a wrong routine has no speed */
	for (i = 0; i < NSIZES; i++)
		for (s = 0; s < NSTRAT; s++)
			check_once(strategies[s].name, dst, sizes[i],
				   strategies[s].loop, 0);
	for (i = 0; i < NCHUNKS; i++) {
		check_once("chunked stosb", dst, MAX_LEN - 1, chunked_stosb,
			   chunks[i]);
		check_once("chunked storeloop", dst, MAX_LEN - 1,
			   chunked_storeloop, chunks[i]);
	}
	if (failures)
		return 1;

	if (do_sizes)
		run_sizes(false);
	if (do_cold)
		run_sizes(true);
	for (c = 0; do_chunks && c < nchunk_totals; c++)
		run_chunks(chunk_totals[c]);

	if (csv && fclose(csv)) {
		fprintf(stderr, "clearbench: fclose %s: %s\n", csv_path,
			strerror(errno));
		return 1;
	}
	munmap(base, map_len);
	return 0;
}
