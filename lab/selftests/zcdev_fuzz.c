// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev_fuzz: a fuzzer of zcdev's own, that knows what every byte must be.
 *
 * A generic fuzzer finds crashes; it cannot tell that a splice reported
 * one byte more than it queued, or that a pipe handed out a page that is
 * not all zeros.  This one runs seeded random sequences of operations on
 * zczero, zcfull, pipes and tmpfs files from several threads, and checks
 * each result against a model:
 *
 *  - every pipe's content is modelled as runs of bytes that are known:
 *    zeros from the devices, a fixed pattern from write() and vmsplice(),
 *    a tmpfs file's bytes from a copy kept here.  FIONREAD must equal the
 *    model's length after every step, a read from a pipe must return the
 *    model's bytes exactly, and what leaves a pipe leaves the model;
 *  - a read from a device clears exactly the bytes it reports, to the
 *    byte even where the buffer runs into a PROT_NONE page, and nothing
 *    around them; writes to zczero return the full count, writes and
 *    splices to zcfull fail with ENOSPC;
 *  - the shared zero page is still zero: a page of anonymous memory that
 *    is only ever read maps it, and is looked at after every step;
 *  - an operation returns: one still running a minute after the end is
 *    reported with the sequence that led to it;
 *  - as root with ZCDEV_KO naming the module file, a thread of its own
 *    unloads (delete_module, O_NONBLOCK) and reloads zcdev while the
 *    others work: an open that meets the gap fails with ENOENT or ENODEV,
 *    which is counted, not a violation.  Every few seconds it stops the
 *    workers between two sequences, when they hold no file, no mapping and
 *    no pipe: zcdev must then unload within 5 s; it comes back as they go
 *    on, or goes again as they go on, their first opens racing with it.
 *    At the end, all closed, it must unload once more, and is loaded again
 *    for what runs next.
 *
 * The operations of a sequence are drawn from a PRNG seeded with the run's
 * seed, the thread and the sequence's number, never from a result, so
 * "-r THREAD:SEQUENCE" replays the same operations alone: a violation
 * prints that command line and the sequence's log.  What other threads
 * and the module thread did meanwhile is not replayed; a race may need the
 * whole run again, which the same seed gives as nearly as timing allows.
 *
 * Output: "# " comment lines, then exactly one line
 *	N operations, M sequences, seed S, V violations
 * and the exit code is 0 when V is 0, else 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "zcdev_util.h"

#define NDEV		4	/* device slots of a worker */
#define NPIPE		3	/* pipe slots */
#define NMAP		2	/* mapping slots */
#define MAP_PAGES	8	/* the most pages a mapping has */
#define BUF_MAX		(256 * KIB)	/* the most one read or write moves */
#define SPLICE_MAX	(2 * MIB)	/* the most a splice asks for */
#define PAT_LEN		(1 * MIB)	/* the pattern that writes come from */
#define SRC_MAX		(256 * KIB)	/* the tmpfs file spliced from */
#define DST_MAX		(512 * KIB)	/* the tmpfs file written to */
#define MARGIN		64	/* bytes around a read that must keep FILL */
#define SEQ_OPS		40	/* random operations in a sequence, at most */
#define LOG_LINES	96
#define LOG_LEN		224
#define QUIESCE_MS	3000	/* how often all workers stop for an unload */
#define UNLOAD_MS	5000	/* how long an idle zcdev may stay busy */
#define PROGRESS_MS	5000
#define HANG_MS		60000	/* how long past the end a thread may take */

/*
 * The kernel's __printf(), for user space: the format strings below are
 * checked by the compiler.  (GCC's other spelling of the keyword keeps
 * checkpatch from asking for __printf() in its own definition.)
 */
#ifndef __printf
#define __printf(a, b)	__attribute((format(printf, a, b)))
#endif

enum dev_kind { ZERO, FULL };

/* What is fuzzed: zcdev's devices, or others given with -d */
static const char * const zc_path[] = { "/dev/zczero", "/dev/zcfull" };
static const char *other_path[2];
static const char * const dev_name[] = { "zczero", "zcfull" };

static const char *dev_path(int kind)
{
	return other_path[kind] ? other_path[kind] : zc_path[kind];
}

/* A run of bytes a pipe holds: base[0..len), or zeros when base is NULL */
struct run {
	const unsigned char *base;
	size_t len;
};

/* What a pipe holds, oldest byte first: run[first .. first + nr) */
struct model {
	struct run *run;
	size_t first, nr, cap;
	size_t bytes;
};

struct dev_slot {
	int fd;			/* -1: empty */
	int kind;
	int acc;		/* O_RDONLY, O_WRONLY or O_RDWR */
	bool nonblock;
};

struct pipe_slot {
	int rfd, wfd;		/* -1: empty; both ends open or neither */
	size_t size;		/* F_GETPIPE_SZ */
	struct model m;
};

struct map_slot {
	unsigned char *addr;	/* NULL: empty */
	size_t pages;
	bool shared;
	/* what each page holds: 0 zeros, else that byte all over */
	unsigned char tag[MAP_PAGES];
	/* a pipe may reference the page (vmsplice): never write it */
	bool pinned[MAP_PAGES];
};

enum op {
	OP_OPEN, OP_DUP, OP_CLOSE_DEV, OP_PIPE, OP_CLOSE_PIPE, OP_PIPE_SZ,
	OP_SPLICE_DP, OP_SPLICE_PD, OP_SPLICE_PP, OP_TEE, OP_VMSPLICE_IN,
	OP_VMSPLICE_OUT, OP_READ_DEV, OP_READ_PIPE, OP_WRITE_DEV,
	OP_WRITE_PIPE, OP_MMAP, OP_TOUCH, OP_MUNMAP, OP_LSEEK, OP_FIONREAD,
	OP_SENDFILE, OP_SPLICE_FP, OP_SPLICE_PF, OP_FILE_IO, OP_FORK,
	OP_ZEROCHECK, OP_NR
};

static const struct {
	const char *name;
	unsigned int weight;
} ops[OP_NR] = {
	[OP_OPEN]		= { "open", 8 },
	[OP_DUP]		= { "dup", 3 },
	[OP_CLOSE_DEV]		= { "close", 4 },
	[OP_PIPE]		= { "pipe", 3 },
	[OP_CLOSE_PIPE]		= { "close-pipe", 2 },
	[OP_PIPE_SZ]		= { "F_SETPIPE_SZ", 4 },
	[OP_SPLICE_DP]		= { "splice-dev-pipe", 12 },
	[OP_SPLICE_PD]		= { "splice-pipe-dev", 8 },
	[OP_SPLICE_PP]		= { "splice-pipe-pipe", 5 },
	[OP_TEE]		= { "tee", 5 },
	[OP_VMSPLICE_IN]	= { "vmsplice-in", 4 },
	[OP_VMSPLICE_OUT]	= { "vmsplice-out", 4 },
	[OP_READ_DEV]		= { "read-dev", 8 },
	[OP_READ_PIPE]		= { "read-pipe", 7 },
	[OP_WRITE_DEV]		= { "write-dev", 4 },
	[OP_WRITE_PIPE]		= { "write-pipe", 4 },
	[OP_MMAP]		= { "mmap", 2 },
	[OP_TOUCH]		= { "touch", 3 },
	[OP_MUNMAP]		= { "munmap", 1 },
	[OP_LSEEK]		= { "lseek", 2 },
	[OP_FIONREAD]		= { "FIONREAD", 1 },
	[OP_SENDFILE]		= { "sendfile", 5 },
	[OP_SPLICE_FP]		= { "splice-file-pipe", 3 },
	[OP_SPLICE_PF]		= { "splice-pipe-file", 3 },
	[OP_FILE_IO]		= { "file-io", 2 },
	[OP_FORK]		= { "fork", 1 },
	[OP_ZEROCHECK]		= { "zero-page", 1 },
};

struct child_report;

struct worker {
	unsigned int id;
	pthread_t thread;
	unsigned long long rng;		/* the current sequence's PRNG */
	unsigned long long seq;		/* its number */
	bool violated;			/* in the current sequence */
	unsigned int nlog, nlog_lost;
	char log[LOG_LINES][LOG_LEN];	/* the current sequence */
	struct dev_slot dev[NDEV];
	struct pipe_slot pipe[NPIPE];
	struct map_slot map[NMAP];
	/*
	 * Two tmpfs files: src is never written after its set-up, for pipes
	 * may hold its pages; dst is written, never spliced from.
	 */
	int src_fd, dst_fd;
	size_t src_size, dst_size;
	unsigned char *src, *dst;	/* what they hold */
	unsigned char *area;		/* between two PROT_NONE pages */
	unsigned char *area_end;
	unsigned char *scratch;		/* BUF_MAX bytes of the model */
	struct child_report *child;	/* shared with a child of fork() */
	unsigned long long count[OP_NR];
	unsigned long long seqs, refused;
	int done;			/* the thread has finished */
};

/* The run: options, then what the threads share */
static struct {
	unsigned long long seed;
	unsigned int seconds;
	unsigned long long max_seqs;	/* 0: no bound */
	unsigned int threads;
	bool replay, verbose, other_devs;
	unsigned int replay_thread;
	unsigned long long replay_seq;

	size_t pg;
	size_t buf_size;		/* the most a buffer of a device carries */
	bool large_bufs;		/* zcdev's: more than a page */
	const char *ko;
	bool mod_ops;			/* the module thread unloads and reloads */
	unsigned char *pat;		/* PAT_LEN bytes, none zero, read-only */
	const unsigned char *zp;	/* a page only ever read: the zero page */
	long long start, deadline;

	int stop;			/* the __atomic_* builtins */
	unsigned long long seqs_begun;
	unsigned int violations;
	unsigned int win_gen;		/* odd while zcdev may be missing */
	unsigned long long unloads, quiesced_unloads, raced_unloads, busy;
	long long unload_wait_max;	/* ms an idle zcdev took to unload */

	pthread_mutex_t lock;		/* output, and the fields below */
	pthread_cond_t cond;
	bool quiesce;			/* workers are to park between sequences */
	int mod_done;			/* the module thread has finished */
	unsigned int parked;		/* parked workers, and finished ones */
} g = {
	.seed = 1,
	.seconds = 10,
	.threads = 3,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static long long fz_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* splitmix64: a state that only counts, scrambled by a bijection */
static unsigned long long fz_mix(unsigned long long z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned long long fz_next(unsigned long long *s)
{
	*s += 0x9e3779b97f4a7c15ULL;
	return fz_mix(*s);
}

/* The PRNG of sequence q of thread t: all that a replay needs */
static unsigned long long seq_seed(unsigned int t, unsigned long long q)
{
	return fz_mix(fz_mix(g.seed) ^ fz_mix(((unsigned long long)t << 48) ^ q));
}

static bool stopping(void)
{
	return __atomic_load_n(&g.stop, __ATOMIC_ACQUIRE) ||
	       (!g.replay && fz_now() >= g.deadline);
}

static void fz_stop(void)
{
	__atomic_store_n(&g.stop, 1, __ATOMIC_RELEASE);
}

/*
 * A byte count drawn to hit what matters: tiny ones, a page and a byte
 * either side, whole pages, pages and a byte, and anything up to max.
 */
static size_t rlen(unsigned long long r, size_t max)
{
	size_t pg = g.pg, n;

	switch (r & 7) {
	case 0:
		n = 1 + (r >> 3) % 16;
		break;
	case 1:
		n = pg - 1 + (r >> 3) % 3;
		break;
	case 2:
		n = pg * (1 + (r >> 3) % 16);
		break;
	case 3:
		n = pg * (1 + (r >> 3) % 64) + 1;
		break;
	case 4:
		n = 1 + (r >> 3) % (64 * KIB);
		break;
	case 5:
		n = max;
		break;
	case 6:
		n = (r >> 3) % 4 ? 1 + (r >> 5) % pg : 0;
		break;
	default:
		n = 1 + (r >> 3) % max;
		break;
	}
	return n < max ? n : max;
}

/* ---- the log of a sequence, and violations ---------------------------- */

static __printf(3, 4) void log_add(struct worker *w, bool new_line,
				    const char *fmt, ...);

/* Start a line of the sequence's log, or go on with the last one */
static void log_add(struct worker *w, bool new_line, const char *fmt, ...)
{
	va_list ap;
	size_t used;
	char *line;

	if (new_line) {
		if (w->nlog == LOG_LINES) {
			w->nlog_lost++;
			return;
		}
		w->log[w->nlog++][0] = '\0';
	} else if (!w->nlog || w->nlog_lost) {
		return;
	}
	line = w->log[w->nlog - 1];
	used = strlen(line);
	va_start(ap, fmt);
	vsnprintf(line + used, LOG_LEN - used, fmt, ap);
	va_end(ap);
}

#define LOG(w, ...)	log_add(w, true, __VA_ARGS__)
#define LOG_MORE(w, ...)	log_add(w, false, __VA_ARGS__)

/* A result for the log: the count, or the error's name */
static void log_ret(struct worker *w, long r, int err)
{
	if (r < 0)
		LOG_MORE(w, " = -1 %s", strerror(err));
	else
		LOG_MORE(w, " = %ld", r);
}

static void print_log(struct worker *w)
{
	unsigned int i;

	for (i = 0; i < w->nlog; i++)
		printf("#   %s\n", w->log[i]);
	if (w->nlog_lost)
		printf("#   ... and %u lines more\n", w->nlog_lost);
}

static __printf(2, 3) bool fz_fail(struct worker *w, const char *fmt, ...);

/*
 * Report a violation, with what reproduces it, and stop the run: the
 * first violation is the one worth reading.  Returns false, for the
 * checks to return.
 */
static bool fz_fail(struct worker *w, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	__atomic_add_fetch(&g.violations, 1, __ATOMIC_SEQ_CST);
	fz_stop();
	pthread_mutex_lock(&g.lock);
	if (!w) {
		printf("# violation: %s (seed %llu)\n", msg, g.seed);
	} else {
		w->violated = true;
		printf("# violation in thread %u, sequence %llu (seed %llu): %s\n",
		       w->id, w->seq, g.seed, msg);
		printf("# reproduce: zcdev_fuzz -s %llu -r %u:%llu", g.seed, w->id,
		       w->seq);
		printf(" (the whole run: zcdev_fuzz -s %llu -j %u -t %u%s)\n",
		       g.seed, g.threads, g.seconds,
		       g.mod_ops ? ", ZCDEV_KO set" : "");
		printf("# the sequence, as far as it got:\n");
		print_log(w);
	}
	fflush(stdout);
	pthread_mutex_unlock(&g.lock);
	return false;
}

/* The result of a call that had to fail with errno want */
static bool want_err(struct worker *w, const char *what, long r, int err,
		     int want)
{
	if (r < 0 && err == want)
		return true;
	if (r < 0)
		return fz_fail(w, "%s failed with %s, not %s", what, strerror(err), strerror(want));
	return fz_fail(w, "%s returned %ld, not -1 with %s", what, r, strerror(want));
}

/* ---- the module's gaps: opens that may fail -------------------------- */

static unsigned int win_now(void)
{
	return __atomic_load_n(&g.win_gen, __ATOMIC_SEQ_CST);
}

/* The module thread opens a window before delete_module, closes it after */
static void win_open(void)
{
	__atomic_add_fetch(&g.win_gen, 1, __ATOMIC_SEQ_CST);
}

static void win_close(void)
{
	__atomic_add_fetch(&g.win_gen, 1, __ATOMIC_SEQ_CST);
}

/*
 * Whether an open that failed with err may have met the module unloaded:
 * a window was open when it started, or one opened since.
 */
static bool refusal_ok(unsigned int gen, int err)
{
	return g.mod_ops && (err == ENOENT || err == ENODEV || err == ENXIO) &&
	       ((gen & 1) || win_now() != gen);
}

/* ---- the model of a pipe's content ----------------------------------- */

static void m_push(struct model *m, const unsigned char *base, size_t len)
{
	struct run *last, *run;

	if (!len)
		return;
	m->bytes += len;
	if (m->nr) {
		last = &m->run[m->first + m->nr - 1];
		if ((!last->base && !base) ||
		    (last->base && base == last->base + last->len)) {
			last->len += len;
			return;
		}
	}
	if (m->first + m->nr == m->cap) {
		if (m->first > m->cap / 2) {
			memmove(m->run, m->run + m->first,
				m->nr * sizeof(*m->run));
			m->first = 0;
		} else {
			m->cap = m->cap ? 2 * m->cap : 64;
			run = realloc(m->run, m->cap * sizeof(*m->run));
			if (!run) {
				perror("# realloc");
				exit(2);
			}
			m->run = run;
		}
	}
	m->run[m->first + m->nr++] = (struct run){ base, len };
}

/* The first n bytes of the model, to out */
static void m_peek(const struct model *m, size_t n, unsigned char *out)
{
	const struct run *run = m->run + m->first;
	size_t k;

	for (; n; run++) {
		k = run->len < n ? run->len : n;
		if (run->base)
			memcpy(out, run->base, k);
		else
			memset(out, 0, k);
		out += k;
		n -= k;
	}
}

/* Whether byte i of the model came from a device */
static bool m_zero_at(const struct model *m, size_t i)
{
	const struct run *run = m->run + m->first;

	while (i >= run->len)
		i -= run++->len;
	return !run->base;
}

/* Append the first n bytes of src to dst (tee) */
static void m_copy(const struct model *src, size_t n, struct model *dst)
{
	const struct run *run = src->run + src->first;
	size_t k;

	for (; n; run++) {
		k = run->len < n ? run->len : n;
		m_push(dst, run->base, k);
		n -= k;
	}
}

/* The first n bytes are gone */
static void m_drop(struct model *m, size_t n)
{
	struct run *run;

	m->bytes -= n;
	while (n) {
		run = &m->run[m->first];
		if (run->len > n) {
			run->len -= n;
			if (run->base)
				run->base += n;
			return;
		}
		n -= run->len;
		m->first++;
		m->nr--;
	}
	if (!m->nr)
		m->first = 0;
}

static void m_clear(struct model *m)
{
	m->first = 0;
	m->nr = 0;
	m->bytes = 0;
}

/* ---- slots ----------------------------------------------------------- */

static const char *acc_name(int acc)
{
	return acc == O_RDONLY ? "r" : acc == O_WRONLY ? "w" : "rw";
}

static bool dev_reads(const struct dev_slot *d)
{
	return d->acc != O_WRONLY;
}

static bool dev_writes(const struct dev_slot *d)
{
	return d->acc != O_RDONLY;
}

/* "d1(zczero,rw)": a device slot for the log */
static const char *dname(struct worker *w, unsigned int i, char *buf)
{
	struct dev_slot *d = &w->dev[i];

	sprintf(buf, "d%u(%s,%s%s)", i, dev_name[d->kind], acc_name(d->acc),
		d->nonblock ? ",nb" : "");
	return buf;
}

/* The first slot in use from r on, or -1 */
static int pick_dev(struct worker *w, unsigned long long r)
{
	unsigned int i, k;

	for (k = 0; k < NDEV; k++) {
		i = (r + k) % NDEV;
		if (w->dev[i].fd >= 0)
			return i;
	}
	return -1;
}

static int pick_pipe(struct worker *w, unsigned long long r)
{
	unsigned int i, k;

	for (k = 0; k < NPIPE; k++) {
		i = (r + k) % NPIPE;
		if (w->pipe[i].rfd >= 0)
			return i;
	}
	return -1;
}

static int pick_map(struct worker *w, unsigned long long r)
{
	unsigned int i, k;

	for (k = 0; k < NMAP; k++) {
		i = (r + k) % NMAP;
		if (w->map[i].addr)
			return i;
	}
	return -1;
}

static bool dev_close(struct worker *w, unsigned int i)
{
	struct dev_slot *d = &w->dev[i];
	int r;

	if (d->fd < 0)
		return true;
	r = close(d->fd);
	d->fd = -1;
	if (r)
		return fz_fail(w, "close of d%u: %s", i, strerror(errno));
	return true;
}

static void pipe_close(struct worker *w, unsigned int i)
{
	struct pipe_slot *p = &w->pipe[i];

	if (p->rfd < 0)
		return;
	close(p->rfd);
	close(p->wfd);
	p->rfd = -1;
	p->wfd = -1;
	m_clear(&p->m);
}

static size_t pipe_size(struct pipe_slot *p)
{
	int r = fcntl(p->wfd, F_GETPIPE_SZ);

	return r < 0 ? 0 : r;
}

/* What each page of a mapping must hold, checked */
static bool map_check(struct worker *w, unsigned int i)
{
	struct map_slot *m = &w->map[i];
	unsigned int k;
	long bad;

	for (k = 0; k < m->pages; k++) {
		bad = not_byte(m->addr + k * g.pg, g.pg, m->tag[k]);
		if (bad >= 0)
			return fz_fail(w, "byte %ld of page %u of m%u (%s) is 0x%02x, not 0x%02x",
				       bad, k, i, m->shared ? "shared" : "private",
				       m->addr[k * g.pg + bad], m->tag[k]);
	}
	return true;
}

static void map_drop(struct worker *w, unsigned int i)
{
	struct map_slot *m = &w->map[i];

	if (!m->addr)
		return;
	munmap(m->addr, m->pages * g.pg);
	m->addr = NULL;
}

/* ---- the invariants -------------------------------------------------- */

/* The zero page is still zero: a fresh anonymous page, and zczero's */
static bool fresh_zero_check(struct worker *w)
{
	unsigned int gen;
	unsigned char *p;
	long bad;
	int fd;

	p = mmap(NULL, g.pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return fz_fail(w, "mmap of an anonymous page: %s", strerror(errno));
	bad = not_byte(p, g.pg, 0);
	munmap(p, g.pg);
	if (bad >= 0)
		return fz_fail(w,
			       "a fresh anonymous page has byte %ld non-zero: the zero page is dirty",
			       bad);
	gen = win_now();
	fd = open(dev_path(ZERO), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (refusal_ok(gen, errno)) {
			w->refused++;
			return true;
		}
		return fz_fail(w, "open %s: %s", dev_path(ZERO), strerror(errno));
	}
	p = mmap(NULL, 2 * g.pg, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return fz_fail(w, "mmap of zczero, private: %s", strerror(errno));
	bad = not_byte(p, 2 * g.pg, 0);
	munmap(p, 2 * g.pg);
	if (bad >= 0)
		return fz_fail(w, "a fresh private mapping of zczero has byte %ld non-zero", bad);
	return true;
}

/* After every step: FIONREAD is the model's length, the zero page zero */
static bool step_check(struct worker *w)
{
	struct pipe_slot *p;
	unsigned int i;
	long bad;
	int n;

	for (i = 0; i < NPIPE; i++) {
		p = &w->pipe[i];
		if (p->rfd < 0)
			continue;
		n = -1;
		if (ioctl(p->rfd, FIONREAD, &n))
			return fz_fail(w, "FIONREAD on p%u: %s", i, strerror(errno));
		if ((size_t)n != p->m.bytes)
			return fz_fail(w, "p%u: FIONREAD says %d bytes, the model %zu", i, n,
				       p->m.bytes);
		/* a page a slot, or up to a large buffer of zcdev's */
		if (p->m.bytes > p->size / 4096 * g.buf_size)
			return fz_fail(w, "p%u holds %zu bytes, more than %zu slots of %zu",
				       i, p->m.bytes, p->size / 4096, g.buf_size);
	}
	bad = not_byte(g.zp, g.pg, 0);
	if (bad >= 0)
		return fz_fail(w, "byte %ld of the zero page is 0x%02x", bad, g.zp[bad]);
	return true;
}

/*
 * n bytes that left pipe i for user memory at got: they must be the
 * model's first n, and then leave the model.
 */
static bool pipe_consumed(struct worker *w, unsigned int i,
			  const unsigned char *got, size_t n, const char *how)
{
	struct model *m = &w->pipe[i].m;
	size_t k;

	m_peek(m, n, w->scratch);
	if (memcmp(got, w->scratch, n)) {
		for (k = 0; got[k] == w->scratch[k]; k++)
			;
		return fz_fail(w,
			       "%s: byte %zu of the %zu read from p%u is 0x%02x, the model says 0x%02x (%s)",
			       how, k, n, i, got[k], w->scratch[k],
			       m_zero_at(m, k) ? "zeros from zcdev" : "written or from tmpfs");
	}
	m_drop(m, n);
	return true;
}

/* Read pipe i to its end, checking every byte: it must then be empty */
static bool pipe_drain(struct worker *w, unsigned int i)
{
	struct pipe_slot *p = &w->pipe[i];
	size_t want;
	ssize_t r;

	while (p->m.bytes) {
		want = p->m.bytes < BUF_MAX ? p->m.bytes : BUF_MAX;
		r = read(p->rfd, w->area, want);
		if (r <= 0)
			return fz_fail(w,
				       "draining p%u: read of %zu of the %zu bytes the model has: %s",
				       i, want, p->m.bytes, r ? strerror(errno) : "end of file");
		if (!pipe_consumed(w, i, w->area, r, "drain"))
			return false;
	}
	r = read(p->rfd, w->area, 1);
	if (r >= 0 || errno != EAGAIN)
		return fz_fail(w, "p%u should be empty, yet a read returned %zd (%s)", i, r,
			       r < 0 ? strerror(errno) : "no error");
	return true;
}

/* ---- user buffers ---------------------------------------------------- */

/*
 * A destination of n bytes with valid bytes of user memory before the
 * PROT_NONE page after the area: valid < n makes the call fault part-way.
 * MARGIN bytes before it, and those after the n, must keep FILL.
 */
static unsigned char *dst_prepare(struct worker *w, size_t valid)
{
	unsigned char *p = w->area_end - valid;

	memset(p - MARGIN, FILL, valid + MARGIN);
	return p;
}

static bool dst_margins(struct worker *w, const unsigned char *p, size_t n,
			size_t valid, const char *what)
{
	size_t after = valid - n < MARGIN ? valid - n : MARGIN;
	long bad;

	bad = not_byte(p - MARGIN, MARGIN, FILL);
	if (bad >= 0)
		return fz_fail(w, "%s wrote %ld bytes before the buffer", what, MARGIN - bad);
	bad = not_byte(p + n, after, FILL);
	if (bad >= 0)
		return fz_fail(w, "%s reported %zu bytes but wrote byte %zu", what, n,
			       n + (size_t)bad);
	return true;
}

/* Split [p, p + n) into 1 to 4 contiguous iovecs, some may be empty */
static int split_iov(struct iovec *iov, unsigned char *p, size_t n,
		     unsigned long long r)
{
	int k = 1 + r % 4, i, j;
	size_t cut[4], c, prev = 0;

	for (i = 0; i < k - 1; i++) {
		c = fz_mix(r + i) % (n + 1);
		for (j = i; j > 0 && cut[j - 1] > c; j--)
			cut[j] = cut[j - 1];
		cut[j] = c;
	}
	cut[k - 1] = n;
	for (i = 0; i < k; i++) {
		iov[i].iov_base = p + prev;
		iov[i].iov_len = cut[i] - prev;
		prev = cut[i];
	}
	return k;
}

/* How reads are made */
enum rmeth { RM_READ, RM_READV, RM_PREADV2, RM_NOWAIT, RM_PREAD, RM_PREADV2_OFF,
	     RM_NR };
static const char * const rm_name[RM_NR] = {
	"read", "readv", "preadv2(-1)", "preadv2(-1,NOWAIT)", "pread",
	"preadv2(off)",
};

static bool rm_nowait(enum rmeth m, unsigned long long r)
{
	return m == RM_NOWAIT || (m == RM_PREADV2_OFF && (r >> 40) & 1);
}

static ssize_t do_read(int fd, enum rmeth m, unsigned char *p, size_t n,
		       unsigned long long r, off_t off)
{
	struct iovec iov[4];
	int k = split_iov(iov, p, n, r);

	switch (m) {
	case RM_READ:
		return read(fd, p, n);
	case RM_READV:
		return readv(fd, iov, k);
	case RM_PREADV2:
		return preadv2(fd, iov, k, -1, 0);
	case RM_NOWAIT:
		return preadv2(fd, iov, k, -1, RWF_NOWAIT);
	case RM_PREAD:
		return pread(fd, p, n, off);
	default:
		return preadv2(fd, iov, k, off,
			       rm_nowait(m, r) ? RWF_NOWAIT : 0);
	}
}

/* How writes are made */
enum wmeth { WM_WRITE, WM_WRITEV, WM_PWRITE, WM_PWRITEV2, WM_NR };
static const char * const wm_name[WM_NR] = {
	"write", "writev", "pwrite", "pwritev2",
};

static ssize_t do_write(int fd, enum wmeth m, const unsigned char *p,
			size_t n, unsigned long long r, off_t off)
{
	struct iovec iov[4];
	int k = split_iov(iov, (unsigned char *)p, n, r);

	switch (m) {
	case WM_WRITE:
		return write(fd, p, n);
	case WM_WRITEV:
		return writev(fd, iov, k);
	case WM_PWRITE:
		return pwrite(fd, p, n, off);
	default:
		return pwritev2(fd, iov, k, (r >> 40) & 1 ? -1 : off,
				(r >> 41) & 1 ? RWF_NOWAIT : 0);
	}
}

/* n bytes of the pattern, from somewhere r says */
static const unsigned char *pat_at(unsigned long long r, size_t n)
{
	return g.pat + (r % (PAT_LEN - n + 1));
}

/* ---- the operations ---------------------------------------------------- */

static void op_open(struct worker *w, unsigned long long a)
{
	static const int accs[] = { O_RDONLY, O_WRONLY, O_RDWR };
	unsigned int i = a % NDEV, gen;
	struct dev_slot *d = &w->dev[i];
	int kind = (a >> 8) % 3 == 2 ? FULL : ZERO;
	int acc = accs[(a >> 16) % 3];
	bool nb = (a >> 24) & 1;
	int fd;

	LOG(w, "open d%u %s %s%s", i, dev_path(kind), acc_name(acc),
	    nb ? " O_NONBLOCK" : "");
	if (d->fd >= 0)
		LOG_MORE(w, " (closing the old one)");
	if (!dev_close(w, i))
		return;
	gen = win_now();
	fd = open(dev_path(kind), acc | O_CLOEXEC | (nb ? O_NONBLOCK : 0));
	if (fd < 0) {
		log_ret(w, -1, errno);
		if (refusal_ok(gen, errno))
			w->refused++;
		else
			fz_fail(w, "open %s: %s", dev_path(kind), strerror(errno));
		return;
	}
	LOG_MORE(w, " = ok");
	*d = (struct dev_slot){ .fd = fd, .kind = kind, .acc = acc, .nonblock = nb };
}

static void op_dup(struct worker *w, unsigned long long a, unsigned long long b)
{
	int s = pick_dev(w, a), fd;
	unsigned int t = b % NDEV;
	char n1[40];

	if (s < 0) {
		LOG(w, "dup: no device");
		return;
	}
	if (t == (unsigned int)s)
		t = (t + 1) % NDEV;
	LOG(w, "dup %s to d%u", dname(w, s, n1), t);
	if (!dev_close(w, t))
		return;
	fd = (b >> 8) & 1 ? dup(w->dev[s].fd) :
	     fcntl(w->dev[s].fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0) {
		fz_fail(w, "dup: %s", strerror(errno));
		return;
	}
	w->dev[t] = w->dev[s];
	w->dev[t].fd = fd;
}

static void op_close_dev(struct worker *w, unsigned long long a)
{
	int i = pick_dev(w, a);
	char n1[40];

	if (i < 0) {
		LOG(w, "close: no device");
		return;
	}
	LOG(w, "close %s", dname(w, i, n1));
	dev_close(w, i);
}

static void op_pipe(struct worker *w, unsigned long long a)
{
	unsigned int i = a % NPIPE;
	struct pipe_slot *p = &w->pipe[i];
	int fds[2];

	LOG(w, "pipe p%u%s", i, p->rfd >= 0 ? " (closing the old one)" : "");
	pipe_close(w, i);
	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC)) {
		fz_fail(w, "pipe2: %s", strerror(errno));
		return;
	}
	p->rfd = fds[0];
	p->wfd = fds[1];
	p->size = pipe_size(p);
	LOG_MORE(w, ", %zu bytes", p->size);
}

static void op_close_pipe(struct worker *w, unsigned long long a)
{
	int i = pick_pipe(w, a);
	bool drain = (a >> 8) & 1;

	if (i < 0) {
		LOG(w, "close-pipe: no pipe");
		return;
	}
	LOG(w, "close p%u holding %zu bytes%s", i, w->pipe[i].m.bytes,
	    drain ? ", read to its end first" : "");
	if (drain && !pipe_drain(w, i))
		return;
	pipe_close(w, i);
}

/* The size F_SETPIPE_SZ makes of a request: whole pages, a power of two */
static size_t round_pipe(size_t size)
{
	size_t pages = (size + g.pg - 1) / g.pg, n = 1;

	while (n < pages)
		n <<= 1;
	return n * g.pg;
}

static void op_pipe_sz(struct worker *w, unsigned long long a)
{
	static const size_t sizes[] = {
		4 * KIB, 8 * KIB, 12 * KIB, 16 * KIB, 64 * KIB, 128 * KIB,
		1 * MIB, 5000,
	};
	int i = pick_pipe(w, a), r, err;
	struct pipe_slot *p;
	size_t sz = sizes[(a >> 8) % ARRAY_SIZE(sizes)], want, old;

	if (i < 0) {
		LOG(w, "F_SETPIPE_SZ: no pipe");
		return;
	}
	p = &w->pipe[i];
	old = p->size;
	want = round_pipe(sz);
	LOG(w, "F_SETPIPE_SZ p%u %zu (holding %zu)", i, sz, p->m.bytes);
	r = fcntl(p->wfd, F_SETPIPE_SZ, (int)sz);
	err = errno;
	log_ret(w, r, err);
	p->size = pipe_size(p);
	if (r >= 0) {
		if ((size_t)r != want || p->size != want) {
			fz_fail(w, "F_SETPIPE_SZ %zu returned %d, F_GETPIPE_SZ %zu: not %zu", sz, r,
				p->size, want);
			return;
		}
		if (want < p->m.bytes && !g.large_bufs)
			fz_fail(w, "F_SETPIPE_SZ shrank p%u to %zu bytes, which holds %zu", i, want,
				p->m.bytes);
		return;
	}
	/* EBUSY: the pipe holds more buffers than the new size has slots */
	if (!(err == EBUSY && want < old) && err != EPERM && err != ENOMEM)
		fz_fail(w, "F_SETPIPE_SZ %zu from %zu: %s", sz, old, strerror(err));
	else if (p->size != old)
		fz_fail(w, "F_SETPIPE_SZ failed, yet the size went from %zu to %zu", old, p->size);
}

/* Splice flags besides SPLICE_F_NONBLOCK, which every splice here has */
static unsigned int more_flags(unsigned long long r)
{
	return (r & 1 ? SPLICE_F_MORE : 0) | (r & 2 ? SPLICE_F_MOVE : 0);
}

/*
 * The most pipe p takes in one call: its free slots' worth of pages.
 * The model counts bytes, not buffers; that is exact while every buffer
 * carries at most a page.  zcdev's large buffers (splice_buffer) carry
 * more, so a pipe holding them has slots free beyond its bytes: then
 * only its size bounds a call.
 */
static size_t pipe_room(const struct pipe_slot *p)
{
	if (g.large_bufs)
		return p->size;
	return p->size - p->m.bytes;
}

/* The same for a splice or tee from a pipe, which moves whole buffers */
static size_t pipe_room_bufs(const struct pipe_slot *p)
{
	if (g.large_bufs)
		return p->size / 4096 * g.buf_size;
	return p->size - p->m.bytes;
}

/* Zeros from a device into pipe j: what the count must be */
static bool dev_to_pipe_count(struct worker *w, const char *what, long r,
			      int err, size_t len, unsigned int j)
{
	struct pipe_slot *p = &w->pipe[j];
	size_t room = pipe_room(p);
	size_t want = len < p->size ? len : p->size;

	if (!len) {
		if (r)
			return fz_fail(w, "%s of 0 bytes returned %ld", what, r);
		return true;
	}
	if (r < 0) {
		/* EAGAIN only for a pipe that is full, slot by slot */
		if (err == EAGAIN && p->m.bytes)
			return true;
		return fz_fail(w, "%s into p%u holding %zu of %zu: %s", what, j, p->m.bytes,
			       p->size, strerror(err));
	}
	/* an empty pipe takes all it can: zcdev fills every free slot */
	if (!p->m.bytes && (size_t)r != want)
		return fz_fail(w, "%s of %zu into empty p%u of %zu returned %ld, not %zu", what,
			       len, j, p->size, r, want);
	if ((size_t)r > len || (size_t)r > room || !r)
		return fz_fail(w, "%s of %zu into p%u with %zu bytes free returned %ld", what, len,
			       j, room, r);
	m_push(&p->m, NULL, r);
	return true;
}

static void op_splice_dp(struct worker *w, unsigned long long a,
			 unsigned long long b, unsigned long long c)
{
	int i = pick_dev(w, a), j = pick_pipe(w, a >> 8);
	size_t len = rlen(b, SPLICE_MAX);
	bool use_off = c & 4;
	loff_t off = (c >> 8) % MIB, off0 = off;
	unsigned int fl = more_flags(c);
	struct dev_slot *d;
	char n1[40];
	long r;
	int err;

	if (i < 0 || j < 0) {
		LOG(w, "splice-dev-pipe: no device or pipe");
		return;
	}
	d = &w->dev[i];
	LOG(w, "splice %s -> p%u len %zu", dname(w, i, n1), j, len);
	if (use_off)
		LOG_MORE(w, " off_in %lld", (long long)off);
	r = splice(d->fd, use_off ? &off : NULL, w->pipe[j].wfd, NULL, len,
		   SPLICE_F_NONBLOCK | fl);
	err = errno;
	log_ret(w, r, err);
	if (use_off && off != off0)
		LOG_MORE(w, ", off_in now %lld", (long long)off);
	/* splice(2) returns 0 for 0 bytes before it looks at anything */
	if (len && !dev_reads(d)) {
		want_err(w, "splice from a device opened O_WRONLY", r, err, EBADF);
		return;
	}
	dev_to_pipe_count(w, "splice", r, err, len, j);
}

static void op_splice_pd(struct worker *w, unsigned long long a,
			 unsigned long long b, unsigned long long c)
{
	int i = pick_dev(w, a), j = pick_pipe(w, a >> 8);
	size_t len = rlen(b, SPLICE_MAX), want;
	bool use_off = c & 4;
	loff_t off = (c >> 8) % MIB;
	struct pipe_slot *p;
	struct dev_slot *d;
	char n1[40];
	long r;
	int err;

	if (i < 0 || j < 0) {
		LOG(w, "splice-pipe-dev: no device or pipe");
		return;
	}
	d = &w->dev[i];
	p = &w->pipe[j];
	LOG(w, "splice p%u (%zu bytes) -> %s len %zu", j, p->m.bytes,
	    dname(w, i, n1), len);
	if (use_off)
		LOG_MORE(w, " off_out %lld", (long long)off);
	r = splice(p->rfd, NULL, d->fd, use_off ? &off : NULL, len,
		   SPLICE_F_NONBLOCK | more_flags(c));
	err = errno;
	log_ret(w, r, err);
	if (!len) {
		if (r)
			fz_fail(w, "splice of 0 bytes returned %ld", r);
		return;
	}
	if (!dev_writes(d)) {
		want_err(w, "splice to a device opened O_RDONLY", r, err, EBADF);
		return;
	}
	if (d->kind == FULL) {
		want_err(w, "splice to zcfull", r, err, ENOSPC);
		return;
	}
	if (!p->m.bytes) {
		want_err(w, "splice from an empty pipe", r, err, EAGAIN);
		return;
	}
	/* zczero takes everything the pipe has, up to len */
	want = len < p->m.bytes ? len : p->m.bytes;
	if (r < 0 || (size_t)r != want) {
		fz_fail(w,
			"splice of %zu from p%u holding %zu to zczero returned %ld (%s), not %zu",
			len, j, p->m.bytes, r, r < 0 ? strerror(err) : "", want);
		return;
	}
	m_drop(&p->m, r);
}

/* Pipes i and j for splice and tee; the same one now and then */
static bool pick_two(struct worker *w, unsigned long long a, int *i, int *j)
{
	*i = pick_pipe(w, a);
	*j = pick_pipe(w, a >> 8);
	if (*i < 0)
		return false;
	if (*i == *j && (a >> 16) % 8)
		*j = pick_pipe(w, *i + 1);
	return true;
}

static void op_splice_pp(struct worker *w, unsigned long long a,
			 unsigned long long b, bool tee_it)
{
	const char *what = tee_it ? "tee" : "splice";
	size_t len = rlen(b, SPLICE_MAX);
	struct pipe_slot *p, *q;
	int i, j, err;
	long r;

	if (!pick_two(w, a, &i, &j)) {
		LOG(w, "%s: no pipe", what);
		return;
	}
	p = &w->pipe[i];
	q = &w->pipe[j];
	LOG(w, "%s p%u (%zu bytes) -> p%u (%zu of %zu) len %zu", what, i,
	    p->m.bytes, j, q->m.bytes, q->size, len);
	if (tee_it)
		r = tee(p->rfd, q->wfd, len, SPLICE_F_NONBLOCK);
	else
		r = splice(p->rfd, NULL, q->wfd, NULL, len,
			   SPLICE_F_NONBLOCK | more_flags(b >> 40));
	err = errno;
	log_ret(w, r, err);
	if (!len) {
		if (r)
			fz_fail(w, "%s of 0 bytes returned %ld", what, r);
		return;
	}
	if (i == j) {
		want_err(w, "a splice or tee of a pipe to itself", r, err, EINVAL);
		return;
	}
	if (!p->m.bytes) {
		want_err(w, "splice or tee from an empty pipe", r, err, EAGAIN);
		return;
	}
	if (r < 0) {
		if (err != EAGAIN || !q->m.bytes)
			fz_fail(w, "%s p%u -> p%u: %s", what, i, j, strerror(err));
		return;
	}
	if (!r || (size_t)r > len || (size_t)r > p->m.bytes ||
	    (size_t)r > pipe_room_bufs(q)) {
		fz_fail(w, "%s of %zu from p%u holding %zu to p%u with %zu free returned %ld", what,
			len, i, p->m.bytes, j, pipe_room_bufs(q), r);
		return;
	}
	m_copy(&p->m, r, &q->m);
	if (!tee_it)
		m_drop(&p->m, r);
}

static void op_vmsplice_in(struct worker *w, unsigned long long a,
			   unsigned long long b, unsigned long long c)
{
	int j = pick_pipe(w, a), mi = pick_map(w, a >> 8), k, n = 1 + b % 3;
	struct iovec iov[3];
	struct map_slot *m;
	struct pipe_slot *p;
	size_t total = 0, left, len;
	unsigned int pgi;
	long r;
	int err;

	if (j < 0) {
		LOG(w, "vmsplice-in: no pipe");
		return;
	}
	p = &w->pipe[j];
	LOG(w, "vmsplice to p%u (%zu of %zu):", j, p->m.bytes, p->size);
	for (k = 0; k < n; k++) {
		unsigned long long r2 = fz_mix(c + k);

		m = mi >= 0 ? &w->map[mi] : NULL;
		pgi = m ? (r2 >> 20) % m->pages : 0;
		/*
		 * An untouched page of a private mapping is the zero page
		 * itself, mapped read-only: its pipe buffer must read zeros,
		 * and the page is never written while a pipe may hold it.
		 */
		if (m && !m->shared && !m->tag[pgi] && (r2 & 3) == 0) {
			len = 1 + (r2 >> 2) % g.pg;
			iov[k].iov_base = m->addr + pgi * g.pg + (g.pg - len);
			iov[k].iov_len = len;
			m->pinned[pgi] = true;
			LOG_MORE(w, " m%u page %u +%zu", mi, pgi, len);
		} else {
			len = rlen(r2 >> 2, BUF_MAX / 3);
			iov[k].iov_base = (void *)pat_at(r2 >> 24, len);
			iov[k].iov_len = len;
			LOG_MORE(w, " pattern +%zu", len);
		}
		total += len;
	}
	r = vmsplice(p->wfd, iov, n, SPLICE_F_NONBLOCK);
	err = errno;
	log_ret(w, r, err);
	if (!total) {
		if (r)
			fz_fail(w, "vmsplice of 0 bytes returned %ld", r);
		return;
	}
	if (r < 0) {
		if (err != EAGAIN || !p->m.bytes)
			fz_fail(w, "vmsplice of %zu into p%u holding %zu: %s", total, j, p->m.bytes,
				strerror(err));
		return;
	}
	if (!r || (size_t)r > total || (size_t)r > pipe_room(p)) {
		fz_fail(w, "vmsplice of %zu into p%u with %zu free returned %ld", total, j,
			pipe_room(p), r);
		return;
	}
	for (k = 0, left = r; left; k++) {
		len = iov[k].iov_len < left ? iov[k].iov_len : left;
		/* a page of the mapping: the zero page, so zeros */
		if (mi >= 0 && (unsigned char *)iov[k].iov_base >= w->map[mi].addr &&
		    (unsigned char *)iov[k].iov_base <
		    w->map[mi].addr + w->map[mi].pages * g.pg)
			m_push(&p->m, NULL, len);
		else
			m_push(&p->m, iov[k].iov_base, len);
		left -= len;
	}
}

/*
 * Pipe i to user memory: len bytes, valid of them before the PROT_NONE
 * page.  The count is exact when nothing faults: all the pipe has, up to
 * len.  A fault part-way stops at a pipe buffer's start, which the model
 * does not know: then only the bytes reported are checked.
 */
static bool pipe_to_user(struct worker *w, unsigned int i, const char *what,
			 long r, int err, unsigned char *p, size_t len,
			 size_t valid, bool nowait)
{
	struct pipe_slot *ps = &w->pipe[i];
	size_t want = len < ps->m.bytes ? len : ps->m.bytes;
	bool faults = valid < len;

	if (r < 0 && nowait && (err == EOPNOTSUPP || err == EAGAIN))
		return true;	/* 6.1: no RWF_NOWAIT on pipes; a busy lock */
	if (!len) {
		if (r)
			return fz_fail(w, "%s of 0 bytes returned %ld", what, r);
		return true;
	}
	if (!ps->m.bytes)
		return want_err(w, "a read of an empty pipe", r, err, EAGAIN);
	if (r < 0) {
		if (faults && err == EFAULT)
			return true;
		return fz_fail(w, "%s of %zu from p%u holding %zu: %s", what, len, i, ps->m.bytes,
			       strerror(err));
	}
	if (faults ? (size_t)r > want || (size_t)r > valid : (size_t)r != want)
		return fz_fail(w, "%s of %zu (%zu valid) from p%u holding %zu returned %ld", what,
			       len, valid, i, ps->m.bytes, r);
	if (!pipe_consumed(w, i, p, r, what))
		return false;
	return faults || dst_margins(w, p, r, valid, what);
}

static void op_vmsplice_out(struct worker *w, unsigned long long a,
			    unsigned long long b, unsigned long long c)
{
	int i = pick_pipe(w, a), k;
	size_t len = rlen(b, BUF_MAX), valid;
	struct iovec iov[4];
	unsigned char *p;
	long r;
	int err;

	if (i < 0) {
		LOG(w, "vmsplice-out: no pipe");
		return;
	}
	valid = (c & 3) || !len ? len + (c >> 8) % MARGIN : (c >> 8) % len;
	p = dst_prepare(w, valid);
	k = split_iov(iov, p, len, c >> 16);
	LOG(w, "vmsplice from p%u (%zu bytes) to %zu bytes in %d iovecs, %zu valid",
	    i, w->pipe[i].m.bytes, len, k, valid);
	r = vmsplice(w->pipe[i].rfd, iov, k, SPLICE_F_NONBLOCK);
	err = errno;
	log_ret(w, r, err);
	pipe_to_user(w, i, "vmsplice", r, err, p, len, valid, false);
}

static void op_read_dev(struct worker *w, unsigned long long a,
			unsigned long long b, unsigned long long c)
{
	int i = pick_dev(w, a);
	enum rmeth m = (a >> 8) % RM_NR;
	size_t len = rlen(b, BUF_MAX), valid, want;
	off_t off = (c >> 24) % MIB;
	struct dev_slot *d;
	unsigned char *p;
	char n1[40];
	long r;
	int err;

	if (i < 0) {
		LOG(w, "read-dev: no device");
		return;
	}
	d = &w->dev[i];
	valid = (c & 3) || !len ? len + (c >> 8) % MARGIN : (c >> 8) % len;
	p = dst_prepare(w, valid);
	LOG(w, "%s %s %zu bytes, %zu valid", rm_name[m], dname(w, i, n1), len,
	    valid);
	r = do_read(d->fd, m, p, len, c, off);
	err = errno;
	log_ret(w, r, err);
	if (!dev_reads(d)) {
		want_err(w, "a read of a device opened O_WRONLY", r, err, EBADF);
		return;
	}
	want = len < valid ? len : valid;
	if (len && !valid) {
		want_err(w, "a read to unmapped memory", r, err, EFAULT);
		return;
	}
	if (r < 0) {
		fz_fail(w, "%s of %zu from %s: %s", rm_name[m], len, dev_name[d->kind],
			strerror(err));
		return;
	}
	/*
	 * Exact to the byte, faulting part-way or not; only a NOWAIT read
	 * may stop early, between two chunks, when the CPU is wanted.
	 */
	if (rm_nowait(m, c) ? (size_t)r > want || (!r && want) :
	    (size_t)r != want) {
		fz_fail(w, "%s of %zu (%zu valid) from %s returned %ld, not %zu", rm_name[m], len,
			valid, dev_name[d->kind], r, want);
		return;
	}
	if (not_byte(p, r, 0) >= 0) {
		fz_fail(w, "%s from %s: byte %ld of %ld is 0x%02x", rm_name[m], dev_name[d->kind],
			not_byte(p, r, 0), r, p[not_byte(p, r, 0)]);
		return;
	}
	dst_margins(w, p, r, valid, rm_name[m]);
}

static void op_read_pipe(struct worker *w, unsigned long long a,
			 unsigned long long b, unsigned long long c)
{
	int i = pick_pipe(w, a);
	enum rmeth m = (a >> 8) % RM_NR;
	size_t len = rlen(b, BUF_MAX), valid;
	unsigned char *p;
	long r;
	int err;

	if (i < 0) {
		LOG(w, "read-pipe: no pipe");
		return;
	}
	valid = (c & 3) || !len ? len + (c >> 8) % MARGIN : (c >> 8) % len;
	p = dst_prepare(w, valid);
	LOG(w, "%s p%u (%zu bytes) %zu bytes, %zu valid", rm_name[m], i,
	    w->pipe[i].m.bytes, len, valid);
	r = do_read(w->pipe[i].rfd, m, p, len, c, (c >> 24) % MIB);
	err = errno;
	log_ret(w, r, err);
	if (m == RM_PREAD || m == RM_PREADV2_OFF) {
		want_err(w, "a positioned read of a pipe", r, err, ESPIPE);
		return;
	}
	pipe_to_user(w, i, rm_name[m], r, err, p, len, valid, rm_nowait(m, c));
}

static void op_write_dev(struct worker *w, unsigned long long a,
			 unsigned long long b, unsigned long long c)
{
	int i = pick_dev(w, a);
	enum wmeth m = (a >> 8) % WM_NR;
	size_t len = rlen(b, BUF_MAX);
	const unsigned char *src;
	struct dev_slot *d;
	bool bad = !(c & 7);
	char n1[40];
	long r;
	int err;

	if (i < 0) {
		LOG(w, "write-dev: no device");
		return;
	}
	d = &w->dev[i];
	if (!len)
		len = 1;
	/*
	 * zczero discards what it is given without looking at it, as
	 * /dev/null does: a source that runs into a PROT_NONE page is fine.
	 */
	src = bad ? w->area_end - (c >> 8) % (len + 1) : pat_at(c >> 8, len);
	LOG(w, "%s %s %zu bytes%s", wm_name[m], dname(w, i, n1), len,
	    bad ? " partly unmapped" : "");
	r = do_write(d->fd, m, src, len, c, (c >> 24) % MIB);
	err = errno;
	log_ret(w, r, err);
	if (!dev_writes(d))
		want_err(w, "a write to a device opened O_RDONLY", r, err, EBADF);
	else if (d->kind == FULL)
		want_err(w, "a write to zcfull", r, err, ENOSPC);
	else if (r < 0 || (size_t)r != len)
		fz_fail(w, "%s of %zu to zczero returned %ld (%s)", wm_name[m], len, r,
			r < 0 ? strerror(err) : "short");
}

static void op_write_pipe(struct worker *w, unsigned long long a,
			  unsigned long long b, unsigned long long c)
{
	int i = pick_pipe(w, a), k;
	size_t len = rlen(b, BUF_MAX), left, n;
	const unsigned char *src;
	struct iovec iov[4];
	struct pipe_slot *p;
	bool vec = (a >> 8) & 1;
	long r;
	int err;

	if (i < 0) {
		LOG(w, "write-pipe: no pipe");
		return;
	}
	p = &w->pipe[i];
	if (!len)
		len = 1;
	src = pat_at(c, len);
	k = split_iov(iov, (unsigned char *)src, len, c >> 20);
	LOG(w, "%s p%u (%zu of %zu) %zu bytes of the pattern", vec ? "writev" : "write",
	    i, p->m.bytes, p->size, len);
	r = vec ? writev(p->wfd, iov, k) : write(p->wfd, src, len);
	err = errno;
	log_ret(w, r, err);
	if (r < 0) {
		if (err != EAGAIN || !p->m.bytes)
			fz_fail(w, "write of %zu to p%u holding %zu: %s", len, i, p->m.bytes,
				strerror(err));
		return;
	}
	/* an empty pipe takes a page a buffer: all it has room for */
	n = len < p->size ? len : p->size;
	if ((size_t)r > len || !r || (!p->m.bytes && (size_t)r != n)) {
		fz_fail(w, "write of %zu to p%u holding %zu of %zu returned %ld", len, i,
			p->m.bytes, p->size, r);
		return;
	}
	for (k = 0, left = r; left; k++) {
		n = iov[k].iov_len < left ? iov[k].iov_len : left;
		m_push(&p->m, iov[k].iov_base, n);
		left -= n;
	}
}

static void op_mmap(struct worker *w, unsigned long long a,
		    unsigned long long b, unsigned long long c)
{
	unsigned int mi = a % NMAP;
	int i = pick_dev(w, b);
	struct map_slot *m = &w->map[mi];
	size_t pages = 1 + c % MAP_PAGES;
	bool shared = (c >> 8) & 1;
	struct dev_slot *d;
	unsigned char *p;
	char n1[40];
	int err;

	if (i < 0) {
		LOG(w, "mmap: no device");
		return;
	}
	d = &w->dev[i];
	LOG(w, "mmap m%u %s %zu pages of %s", mi, shared ? "shared" : "private",
	    pages, dname(w, i, n1));
	if (m->addr) {
		LOG_MORE(w, " (unmapping the old one)");
		if (!map_check(w, mi))
			return;
		map_drop(w, mi);
	}
	p = mmap(NULL, pages * g.pg, PROT_READ | PROT_WRITE,
		 shared ? MAP_SHARED : MAP_PRIVATE, d->fd, 0);
	err = errno;
	log_ret(w, p == MAP_FAILED ? -1 : 0, err);
	/* zcfull has no mmap; the mode is checked first */
	if ((shared && !dev_writes(d)) || !dev_reads(d)) {
		if (p != MAP_FAILED || (err != EACCES && !(d->kind == FULL && err == ENODEV)))
			fz_fail(w, "mmap of a device opened %s: %s", acc_name(d->acc),
				p == MAP_FAILED ? strerror(err) : "mapped");
	} else if (d->kind == FULL) {
		if (p != MAP_FAILED || err != ENODEV)
			fz_fail(w, "mmap of zcfull: %s",
				p == MAP_FAILED ? strerror(err) : "mapped");
	} else if (p == MAP_FAILED) {
		fz_fail(w, "mmap of zczero: %s", strerror(err));
	}
	if (p == MAP_FAILED)
		return;
	memset(m, 0, sizeof(*m));
	m->addr = p;
	m->pages = pages;
	m->shared = shared;
	map_check(w, mi);
}

static void op_touch(struct worker *w, unsigned long long a,
		     unsigned long long b)
{
	int mi = pick_map(w, a);
	struct map_slot *m;
	unsigned int k;
	unsigned char tag = 1 + b % 255;
	bool write_it = (b >> 8) & 1;
	long bad;

	if (mi < 0) {
		LOG(w, "touch: no mapping");
		return;
	}
	m = &w->map[mi];
	k = (a >> 8) % m->pages;
	write_it = write_it && !m->pinned[k];
	LOG(w, "touch m%u page %u (0x%02x)%s", mi, k, m->tag[k],
	    write_it ? ", then fill it" : "");
	bad = not_byte(m->addr + k * g.pg, g.pg, m->tag[k]);
	if (bad >= 0) {
		fz_fail(w, "byte %ld of page %u of m%u is 0x%02x, not 0x%02x", bad, k, mi,
			m->addr[k * g.pg + bad], m->tag[k]);
		return;
	}
	if (write_it) {
		memset(m->addr + k * g.pg, tag, g.pg);
		m->tag[k] = tag;
		LOG_MORE(w, " with 0x%02x", tag);
	}
}

static void op_munmap(struct worker *w, unsigned long long a)
{
	int mi = pick_map(w, a);

	if (mi < 0) {
		LOG(w, "munmap: no mapping");
		return;
	}
	LOG(w, "munmap m%u", mi);
	if (map_check(w, mi))
		map_drop(w, mi);
}

static void op_lseek(struct worker *w, unsigned long long a,
		     unsigned long long b)
{
	int whence = b % 6, i, err;
	off_t off = (off_t)((b >> 8) % (4 * MIB)) - (off_t)(2 * MIB);
	bool on_pipe = (a >> 16) & 1;
	char n1[40];
	off_t r;

	i = on_pipe ? pick_pipe(w, a) : pick_dev(w, a);
	if (i < 0) {
		LOG(w, "lseek: nothing open");
		return;
	}
	if (on_pipe)
		LOG(w, "lseek p%u %lld whence %d", i, (long long)off, whence);
	else
		LOG(w, "lseek %s %lld whence %d", dname(w, i, n1), (long long)off,
		    whence);
	r = lseek(on_pipe ? w->pipe[i].rfd : w->dev[i].fd, off, whence);
	err = errno;
	log_ret(w, r, err);
	if (whence > SEEK_HOLE)
		want_err(w, "lseek with a bad whence", r, err, EINVAL);
	else if (on_pipe)
		want_err(w, "lseek on a pipe", r, err, ESPIPE);
	else if (r != 0)	/* as /dev/zero: the position is always 0 */
		fz_fail(w, "lseek on %s returned %lld (%s), not 0", dev_name[w->dev[i].kind],
			(long long)r, r < 0 ? strerror(err) : "");
}

static void op_fionread(struct worker *w, unsigned long long a)
{
	int i = pick_dev(w, a), n = -1, r;
	char n1[40];

	if (i < 0) {
		LOG(w, "FIONREAD: no device");
		return;
	}
	LOG(w, "FIONREAD %s", dname(w, i, n1));
	r = ioctl(w->dev[i].fd, FIONREAD, &n);
	log_ret(w, r, errno);
	want_err(w, "FIONREAD on a device", r, errno, ENOTTY);
}

/*
 * sendfile from a device or the source file, to a pipe, the destination
 * file or a device.
 */
static void op_sendfile(struct worker *w, unsigned long long a,
			unsigned long long b, unsigned long long c,
			unsigned long long e)
{
	bool from_file = a & 1, use_off = (a >> 1) & 1;
	int to = (a >> 2) % 3, i = pick_dev(w, a >> 8), j = pick_pipe(w, a >> 16);
	int k = pick_dev(w, a >> 24), in, out, err;
	size_t count = rlen(b, SPLICE_MAX), avail = 0, want;
	off_t off = from_file ? (off_t)(c % (SRC_MAX + 8 * KIB)) :
		    (off_t)(c % MIB), off0 = off, pos = e % DST_MAX;
	const char *what = "sendfile";
	char n1[40], n2[40];
	struct pipe_slot *p;
	long r;

	if (!count)
		count = 1;
	if ((!from_file && i < 0) || (to == 0 && j < 0) || (to == 2 && k < 0)) {
		LOG(w, "sendfile: nothing to send from or to");
		return;
	}
	if (from_file) {
		use_off = true;		/* the file's position is not modelled */
		avail = (size_t)off < w->src_size ? w->src_size - off : 0;
	}
	in = from_file ? w->src_fd : w->dev[i].fd;
	out = to == 0 ? w->pipe[j].wfd : to == 1 ? w->dst_fd : w->dev[k].fd;
	if (to == 1 && count > DST_MAX - pos)
		count = DST_MAX - pos;
	LOG(w, "sendfile %s", from_file ? "src" : dname(w, i, n1));
	if (use_off)
		LOG_MORE(w, " at %lld", (long long)off);
	if (to == 0)
		LOG_MORE(w, " -> p%u (%zu of %zu)", j, w->pipe[j].m.bytes,
			 w->pipe[j].size);
	else if (to == 1)
		LOG_MORE(w, " -> dst at %lld", (long long)pos);
	else
		LOG_MORE(w, " -> %s", dname(w, k, n2));
	LOG_MORE(w, " count %zu", count);
	if (to == 1 && lseek(out, pos, SEEK_SET) != pos) {
		fz_fail(w, "lseek of the destination file: %s", strerror(errno));
		return;
	}
	r = sendfile(out, in, use_off ? &off : NULL, count);
	err = errno;
	log_ret(w, r, err);
	if (from_file && r > 0 && off != off0 + r) {
		fz_fail(w, "sendfile of %ld bytes moved the offset from %lld to %lld", r,
			(long long)off0, (long long)off);
		return;
	}
	if (!from_file && !dev_reads(&w->dev[i])) {
		want_err(w, "sendfile from a device opened O_WRONLY", r, err, EBADF);
		return;
	}
	if (to == 2 && !dev_writes(&w->dev[k])) {
		want_err(w, "sendfile to a device opened O_RDONLY", r, err, EBADF);
		return;
	}
	if (to == 0) {
		p = &w->pipe[j];
		if (!from_file) {
			dev_to_pipe_count(w, what, r, err, count, j);
			return;
		}
		if (r < 0) {
			if (err != EAGAIN || !p->m.bytes)
				fz_fail(w, "sendfile of the file to p%u: %s", j, strerror(err));
			return;
		}
		if ((size_t)r > avail || (size_t)r > count ||
		    (size_t)r > pipe_room(p) ||
		    (!r && avail && !p->m.bytes)) {
			fz_fail(w,
				"sendfile of %zu (%zu left in the file) to p%u with %zu free returned %ld",
				count, avail, j, pipe_room(p), r);
			return;
		}
		m_push(&p->m, w->src + (off - r), r);
		return;
	}
	want = from_file ? (count < avail ? count : avail) : count;
	if (to == 2 && w->dev[k].kind == FULL && want) {
		want_err(w, "sendfile to zcfull", r, err, ENOSPC);
		return;
	}
	if (r < 0 || (size_t)r != want) {
		fz_fail(w, "sendfile of %zu (%s) to %s returned %ld (%s), not %zu", count,
			from_file ? "file" : "device", to == 1 ? "the file" : "zczero", r,
			r < 0 ? strerror(err) : "", want);
		return;
	}
	if (to == 1) {
		if (from_file)
			memcpy(w->dst + pos, w->src + (off - r), r);
		else
			memset(w->dst + pos, 0, r);
		if (r && pos + r > (off_t)w->dst_size)
			w->dst_size = pos + r;
	}
}

static void op_splice_fp(struct worker *w, unsigned long long a,
			 unsigned long long b, unsigned long long c)
{
	int j = pick_pipe(w, a), err;
	size_t len = rlen(b, SPLICE_MAX), avail;
	loff_t off = c % (SRC_MAX + 8 * KIB), off0 = off;
	struct pipe_slot *p;
	long r;

	if (j < 0) {
		LOG(w, "splice-file-pipe: no pipe");
		return;
	}
	p = &w->pipe[j];
	avail = (size_t)off < w->src_size ? w->src_size - off : 0;
	LOG(w, "splice src (%zu bytes) at %lld -> p%u (%zu of %zu) len %zu",
	    w->src_size, (long long)off, j, p->m.bytes, p->size, len);
	r = splice(w->src_fd, &off, p->wfd, NULL, len,
		   SPLICE_F_NONBLOCK | more_flags(c >> 40));
	err = errno;
	log_ret(w, r, err);
	if (r < 0) {
		/* a full pipe is waited for before the file is read */
		if (err != EAGAIN || !p->m.bytes || !len)
			fz_fail(w, "splice of the file to p%u: %s", j, strerror(err));
		return;
	}
	if ((size_t)r > avail || (size_t)r > len ||
	    (size_t)r > pipe_room(p) ||
	    (!r && avail && len && !p->m.bytes) || off != off0 + r) {
		fz_fail(w,
			"splice of %zu (%zu left in the file) to p%u with %zu free returned %ld, offset now %lld",
			len, avail, j, pipe_room(p), r, (long long)off);
		return;
	}
	m_push(&p->m, w->src + off0, r);
}

static void op_splice_pf(struct worker *w, unsigned long long a,
			 unsigned long long b, unsigned long long c)
{
	int j = pick_pipe(w, a), err;
	loff_t off = c % DST_MAX, off0 = off;
	size_t len = rlen(b, DST_MAX - off), want;
	struct pipe_slot *p;
	long r;

	if (j < 0) {
		LOG(w, "splice-pipe-file: no pipe");
		return;
	}
	p = &w->pipe[j];
	LOG(w, "splice p%u (%zu bytes) -> dst at %lld len %zu", j, p->m.bytes,
	    (long long)off, len);
	r = splice(p->rfd, NULL, w->dst_fd, &off, len,
		   SPLICE_F_NONBLOCK | more_flags(c >> 40));
	err = errno;
	log_ret(w, r, err);
	if (!len) {
		if (r)
			fz_fail(w, "splice of 0 bytes returned %ld", r);
		return;
	}
	if (!p->m.bytes) {
		want_err(w, "splice from an empty pipe", r, err, EAGAIN);
		return;
	}
	want = len < p->m.bytes ? len : p->m.bytes;
	if (r <= 0 || (size_t)r > want || off != off0 + r) {
		fz_fail(w,
			"splice of %zu from p%u holding %zu to the file returned %ld (%s), offset now %lld",
			len, j, p->m.bytes, r, r < 0 ? strerror(err) : "", (long long)off);
		return;
	}
	m_peek(&p->m, r, w->dst + off0);
	m_drop(&p->m, r);
	if (off0 + r > (off_t)w->dst_size)
		w->dst_size = off0 + r;
}

/* The destination file reads back what went into it, or gets a write */
static void op_file_io(struct worker *w, unsigned long long a,
		       unsigned long long b)
{
	off_t off = b % (DST_MAX + 4 * KIB);
	size_t len = rlen(a >> 8, BUF_MAX), want;
	const unsigned char *src;
	unsigned char *p = w->area;
	long r;
	int err;

	if (a & 1) {
		if ((size_t)off > DST_MAX - len)
			off = DST_MAX - len;
		src = pat_at(b >> 24, len);
		LOG(w, "pwrite dst %zu bytes at %lld", len, (long long)off);
		r = pwrite(w->dst_fd, src, len, off);
		err = errno;
		log_ret(w, r, err);
		if (r < 0 || (size_t)r != len) {
			fz_fail(w, "pwrite of %zu to the file: %ld (%s)", len, r,
				r < 0 ? strerror(err) : "short");
			return;
		}
		memcpy(w->dst + off, src, len);
		if (len && off + len > w->dst_size)
			w->dst_size = off + len;
		return;
	}
	want = (size_t)off < w->dst_size ? w->dst_size - off : 0;
	want = len < want ? len : want;
	LOG(w, "pread dst (%zu bytes) %zu bytes at %lld", w->dst_size, len,
	    (long long)off);
	r = pread(w->dst_fd, p, len, off);
	err = errno;
	log_ret(w, r, err);
	if (r < 0 || (size_t)r != want) {
		fz_fail(w, "pread of %zu at %lld of the %zu-byte file returned %ld (%s), not %zu",
			len, (long long)off, w->dst_size, r, r < 0 ? strerror(err) : "", want);
		return;
	}
	if (memcmp(p, w->dst + off, r)) {
		size_t k;

		for (k = 0; p[k] == w->dst[off + k]; k++)
			;
		fz_fail(w, "byte %lld of the destination file is 0x%02x, not 0x%02x",
			(long long)(off + k), p[k], w->dst[off + k]);
	}
}

/*
 * A child of fork(): a few operations on the devices it inherited, and on
 * pipes of its own, never on its parent's pipes or mappings, which the
 * parent's model describes.  No stdio or malloc here: another thread may
 * have held their locks at the fork.  The exit code says what failed, a
 * page shared with the parent how.
 */
enum child_fail { CF_OK, CF_READ, CF_SPLICE, CF_PIPE_READ, CF_WRITE,
		  CF_DRAIN, CF_OPEN, CF_FRESH_SPLICE, CF_FRESH_READ, CF_NR };
static const char * const child_fail_name[CF_NR] = {
	"nothing",
	"a read of an inherited device",
	"a splice of an inherited device to a pipe of its own",
	"a read of that pipe",
	"a write to an inherited device",
	"a splice of 1000 written bytes to an inherited device",
	"an open of zczero",
	"a splice of that zczero to a pipe",
	"a read of that pipe once zczero was closed",
};

/* What a child leaves for its parent to print, in a shared page */
struct child_report {
	long len, ret, bad;	/* wanted, returned, first non-zero byte or -1 */
	int err, byte;
};

static int child_failed(struct worker *w, int fail, size_t len, ssize_t r,
			const unsigned char *buf)
{
	struct child_report *cr = w->child;

	cr->len = len;
	cr->ret = r;
	cr->err = r < 0 ? errno : 0;
	cr->bad = buf && r > 0 ? not_byte(buf, r, 0) : -1;
	cr->byte = cr->bad >= 0 ? buf[cr->bad] : 0;
	return fail;
}

static int child_ops(struct worker *w, unsigned long long rng)
{
	unsigned char *buf = w->area;
	int k, i, fds[2], fd;
	struct dev_slot *d;
	ssize_t r, n;
	size_t len;

	for (k = 0; k < 4; k++) {
		unsigned long long x = fz_next(&rng);

		i = pick_dev(w, x >> 8);
		d = i >= 0 ? &w->dev[i] : NULL;
		len = 1 + (x >> 16) % (64 * KIB);
		switch (x % 5) {
		case 0:
			if (!d || !dev_reads(d))
				break;
			memset(buf, FILL, len);
			r = read(d->fd, buf, len);
			if (r != (ssize_t)len || not_byte(buf, len, 0) >= 0)
				return child_failed(w, CF_READ, len, r, buf);
			break;
		case 1:
			if (!d || !dev_reads(d))
				break;
			if (pipe2(fds, O_NONBLOCK))
				return child_failed(w, CF_SPLICE, len, -1, NULL);
			r = splice(d->fd, NULL, fds[1], NULL, len, SPLICE_F_NONBLOCK);
			if (r <= 0)
				return child_failed(w, CF_SPLICE, len, r, NULL);
			memset(buf, FILL, r);
			n = read(fds[0], buf, len);
			if (n != r || not_byte(buf, r, 0) >= 0)
				return child_failed(w, CF_PIPE_READ, r, n, buf);
			close(fds[0]);
			close(fds[1]);
			break;
		case 2:
			if (!d || !dev_writes(d))
				break;
			r = write(d->fd, g.pat, len);
			if (d->kind == ZERO ? r != (ssize_t)len :
			    r >= 0 || errno != ENOSPC)
				return child_failed(w, CF_WRITE, len, r, NULL);
			break;
		case 3:
			if (!d || !dev_writes(d))
				break;
			if (pipe2(fds, O_NONBLOCK) || write(fds[1], g.pat, 1000) != 1000)
				return child_failed(w, CF_DRAIN, 1000, -1, NULL);
			r = splice(fds[0], NULL, d->fd, NULL, len, SPLICE_F_NONBLOCK);
			if (d->kind == ZERO ? r != (ssize_t)(len < 1000 ? len : 1000) :
			    r >= 0 || errno != ENOSPC)
				return child_failed(w, CF_DRAIN, len, r, NULL);
			close(fds[0]);
			close(fds[1]);
			break;
		default:
			fd = open(dev_path(ZERO), O_RDONLY);
			if (fd < 0) {
				/* the module thread may have it unloaded */
				if (g.mod_ops && (errno == ENOENT || errno == ENODEV))
					break;
				return child_failed(w, CF_OPEN, 0, -1, NULL);
			}
			if (pipe2(fds, O_NONBLOCK))
				return child_failed(w, CF_FRESH_SPLICE, len, -1, NULL);
			r = splice(fd, NULL, fds[1], NULL, len, SPLICE_F_NONBLOCK);
			close(fd);	/* the buffers outlive the file */
			if (r <= 0)
				return child_failed(w, CF_FRESH_SPLICE, len, r, NULL);
			memset(buf, FILL, r);
			n = read(fds[0], buf, len);
			if (n != r || not_byte(buf, r, 0) >= 0)
				return child_failed(w, CF_FRESH_READ, r, n, buf);
			close(fds[0]);
			close(fds[1]);
			break;
		}
	}
	return CF_OK;
}

static void op_fork(struct worker *w, unsigned long long a)
{
	struct child_report *cr = w->child;
	pid_t pid;
	int st;

	LOG(w, "fork");
	memset(cr, 0, sizeof(*cr));
	pid = fork();
	if (pid < 0) {
		fz_fail(w, "fork: %s", strerror(errno));
		return;
	}
	if (!pid)
		_exit(child_ops(w, a));
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) >= CF_NR) {
		fz_fail(w, "a child of fork ended with status 0x%x", st);
		return;
	}
	LOG_MORE(w, ": child exit %d", WEXITSTATUS(st));
	if (!WEXITSTATUS(st))
		return;
	if (cr->bad >= 0)
		fz_fail(w, "in a child of fork, %s: byte %ld of %ld is 0x%02x",
			child_fail_name[WEXITSTATUS(st)], cr->bad, cr->ret, cr->byte);
	else
		fz_fail(w, "in a child of fork, %s: %ld bytes wanted, %ld returned (%s)",
			child_fail_name[WEXITSTATUS(st)], cr->len, cr->ret,
			cr->ret < 0 ? strerror(cr->err) : "wrong count");
}

/* ---- sequences ----------------------------------------------------------- */

/* The tmpfs files of a sequence: src holes and pattern, dst empty */
static bool files_setup(struct worker *w, unsigned long long r)
{
	size_t size = (r & 3) ? (r >> 2) % (SRC_MAX + 1) : 0, at, n;
	unsigned long long x = r;

	w->src_fd = tmpfs_file();
	w->dst_fd = tmpfs_file();
	if (w->src_fd < 0 || w->dst_fd < 0)
		return fz_fail(w, "no tmpfs file: %s", strerror(errno));
	memset(w->src, 0, SRC_MAX);
	memset(w->dst, 0, DST_MAX);
	w->dst_size = 0;
	w->src_size = size;
	if (ftruncate(w->src_fd, size))
		return fz_fail(w, "ftruncate: %s", strerror(errno));
	for (at = 0; at < size; at += n) {
		fz_next(&x);
		n = 1 + x % (16 * KIB);
		if (n > size - at)
			n = size - at;
		if (x & (1ULL << 40))
			continue;	/* a hole: zeros */
		memcpy(w->src + at, pat_at(x >> 20, n), n);
		if (pwrite(w->src_fd, w->src + at, n, at) != (ssize_t)n)
			return fz_fail(w, "pwrite to the source file: %s", strerror(errno));
	}
	LOG(w, "src: %zu bytes of pattern and holes; dst: empty", size);
	return true;
}

/*
 * The end of a sequence: every pipe read to its end against the model,
 * every mapping checked, every file closed.  After a violation only
 * closed: the model no longer says anything.
 */
static void seq_finish(struct worker *w)
{
	unsigned int i;

	for (i = 0; i < NPIPE; i++) {
		if (w->pipe[i].rfd < 0)
			continue;
		if (!w->violated) {
			LOG(w, "end: drain p%u (%zu bytes)", i, w->pipe[i].m.bytes);
			pipe_drain(w, i);
		}
		pipe_close(w, i);
	}
	for (i = 0; i < NMAP; i++) {
		if (w->map[i].addr && !w->violated)
			map_check(w, i);
		map_drop(w, i);
	}
	for (i = 0; i < NDEV; i++)
		dev_close(w, i);
	if (w->src_fd >= 0)
		close(w->src_fd);
	if (w->dst_fd >= 0)
		close(w->dst_fd);
	w->src_fd = -1;
	w->dst_fd = -1;
	if (!w->violated)
		fresh_zero_check(w);
}

static unsigned int op_total;	/* the sum of the weights */

static enum op pick_op(unsigned long long r)
{
	unsigned int i, x = r % op_total;

	for (i = 0; x >= ops[i].weight; i++)
		x -= ops[i].weight;
	return i;
}

static void run_op(struct worker *w, enum op kind, unsigned long long a,
		   unsigned long long b, unsigned long long c,
		   unsigned long long d)
{
	switch (kind) {
	case OP_OPEN:
		op_open(w, a);
		break;
	case OP_DUP:
		op_dup(w, a, b);
		break;
	case OP_CLOSE_DEV:
		op_close_dev(w, a);
		break;
	case OP_PIPE:
		op_pipe(w, a);
		break;
	case OP_CLOSE_PIPE:
		op_close_pipe(w, a);
		break;
	case OP_PIPE_SZ:
		op_pipe_sz(w, a);
		break;
	case OP_SPLICE_DP:
		op_splice_dp(w, a, b, c);
		break;
	case OP_SPLICE_PD:
		op_splice_pd(w, a, b, c);
		break;
	case OP_SPLICE_PP:
		op_splice_pp(w, a, b, false);
		break;
	case OP_TEE:
		op_splice_pp(w, a, b, true);
		break;
	case OP_VMSPLICE_IN:
		op_vmsplice_in(w, a, b, c);
		break;
	case OP_VMSPLICE_OUT:
		op_vmsplice_out(w, a, b, c);
		break;
	case OP_READ_DEV:
		op_read_dev(w, a, b, c);
		break;
	case OP_READ_PIPE:
		op_read_pipe(w, a, b, c);
		break;
	case OP_WRITE_DEV:
		op_write_dev(w, a, b, c);
		break;
	case OP_WRITE_PIPE:
		op_write_pipe(w, a, b, c);
		break;
	case OP_MMAP:
		op_mmap(w, a, b, c);
		break;
	case OP_TOUCH:
		op_touch(w, a, b);
		break;
	case OP_MUNMAP:
		op_munmap(w, a);
		break;
	case OP_LSEEK:
		op_lseek(w, a, b);
		break;
	case OP_FIONREAD:
		op_fionread(w, a);
		break;
	case OP_SENDFILE:
		op_sendfile(w, a, b, c, d);
		break;
	case OP_SPLICE_FP:
		op_splice_fp(w, a, b, c);
		break;
	case OP_SPLICE_PF:
		op_splice_pf(w, a, b, c);
		break;
	case OP_FILE_IO:
		op_file_io(w, a, b);
		break;
	case OP_FORK:
		op_fork(w, d);
		break;
	default:
		LOG(w, "zero-page check");
		fresh_zero_check(w);
		break;
	}
}

/*
 * Sequence q of worker w.  Its first operations open two devices and two
 * pipes, in slots of their own, so that the rest has something to work
 * on; every operation draws the same five numbers whatever it is, so that
 * the draws never depend on a result.
 */
static void run_sequence(struct worker *w, unsigned long long q)
{
	static const enum op setup[] = { OP_OPEN, OP_PIPE, OP_OPEN, OP_PIPE };
	unsigned long long a, b, c, d, k, n;
	enum op op;

	w->seq = q;
	w->rng = seq_seed(w->id, q);
	w->violated = false;
	w->nlog = 0;
	w->nlog_lost = 0;
	n = ARRAY_SIZE(setup) + 4 + fz_next(&w->rng) % (SEQ_OPS - 3);
	if (!files_setup(w, fz_next(&w->rng)))
		goto out;
	for (k = 0; k < n && !w->violated; k++) {
		op = pick_op(fz_next(&w->rng));
		if (k < ARRAY_SIZE(setup))
			op = setup[k];
		a = fz_next(&w->rng);
		if (k < ARRAY_SIZE(setup))	/* slot k % NDEV, k % NPIPE */
			a = a - a % (NDEV * NPIPE) + k;
		b = fz_next(&w->rng);
		c = fz_next(&w->rng);
		d = fz_next(&w->rng);
		run_op(w, op, a, b, c, d);
		__atomic_add_fetch(&w->count[op], 1, __ATOMIC_RELAXED);
		if (__atomic_load_n(&g.stop, __ATOMIC_ACQUIRE))
			break;	/* a violation elsewhere: finish soon */
		if (!w->violated)
			step_check(w);
	}
out:
	seq_finish(w);
	__atomic_add_fetch(&w->seqs, 1, __ATOMIC_RELAXED);
	if (g.verbose || g.replay) {
		pthread_mutex_lock(&g.lock);
		printf("# thread %u sequence %llu:\n", w->id, q);
		print_log(w);
		fflush(stdout);
		pthread_mutex_unlock(&g.lock);
	}
}

/* Between sequences: park while the module thread wants every file closed */
static void quiesce_point(void)
{
	pthread_mutex_lock(&g.lock);
	if (g.quiesce) {
		g.parked++;
		pthread_cond_broadcast(&g.cond);
		while (g.quiesce)
			pthread_cond_wait(&g.cond, &g.lock);
		g.parked--;
	}
	pthread_mutex_unlock(&g.lock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned long long q;

	if (g.replay)
		run_sequence(w, g.replay_seq);
	for (q = 0; !g.replay && !stopping(); q++) {
		quiesce_point();
		if (stopping())
			break;
		if (g.max_seqs &&
		    __atomic_fetch_add(&g.seqs_begun, 1, __ATOMIC_SEQ_CST) >= g.max_seqs)
			break;
		run_sequence(w, q);
	}
	/* a finished worker counts as parked for good */
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&g.lock);
	g.parked++;
	pthread_cond_broadcast(&g.cond);
	pthread_mutex_unlock(&g.lock);
	return NULL;
}

/* ---- the module thread ----------------------------------------------------- */

/* delete_module until it works or ms have passed: 0, or the last errno */
static int unload_within(unsigned int ms)
{
	long long start = fz_now(), end = start + ms;
	int err;

	for (;;) {
		if (!delete_module(MODNAME)) {
			if (fz_now() - start > g.unload_wait_max)
				g.unload_wait_max = fz_now() - start;
			return 0;
		}
		err = errno;
		if (!module_busy_errno(err) || fz_now() >= end)
			return err;
		sleep_ms(10);
	}
}

static void reload(void)
{
	int err = load_module(g.ko, "");

	if (err)
		fz_fail(NULL, "reloading %s: %s", g.ko, strerror(err));
}

/*
 * Every worker parked between two sequences holds nothing of zcdev's: no
 * file, no mapping, no pipe buffer.  zcdev must then unload within
 * UNLOAD_MS: the last buffer's epoch is freed a grace period after it
 * went (zcdev_pipe.c).  Then, one time in two, it is loaded again a
 * moment after the workers went on, so that their first opens meet a
 * module that is not there or still initialising; the other time it is
 * loaded before they go on, and unloaded as they go: their first opens
 * race with delete_module.
 */
static void quiesced_unload(unsigned long long *rng, bool race)
{
	long long end;
	int err;

	pthread_mutex_lock(&g.lock);
	g.quiesce = true;
	while (g.parked < g.threads)
		pthread_cond_wait(&g.cond, &g.lock);
	pthread_mutex_unlock(&g.lock);

	win_open();
	err = unload_within(UNLOAD_MS);
	if (!err) {
		__atomic_add_fetch(&g.quiesced_unloads, 1, __ATOMIC_RELAXED);
		if (race)
			reload();
	}

	pthread_mutex_lock(&g.lock);
	g.quiesce = false;
	pthread_cond_broadcast(&g.cond);
	pthread_mutex_unlock(&g.lock);

	if (err) {
		fz_fail(NULL,
			"zcdev still busy %u ms after every file was closed and every pipe drained: %s",
			UNLOAD_MS, strerror(err));
	} else if (!race) {
		sleep_ms(fz_next(rng) % 50);
		reload();
	} else {
		for (end = fz_now() + 200; fz_now() < end;) {
			if (!delete_module(MODNAME)) {
				__atomic_add_fetch(&g.raced_unloads, 1, __ATOMIC_RELAXED);
				sleep_ms(fz_next(rng) % 50);
				reload();
				break;
			}
			if (!module_busy_errno(errno)) {
				fz_fail(NULL, "delete_module: %s", strerror(errno));
				break;
			}
		}
	}
	win_close();
}

static void *module_main(void *arg)
{
	unsigned long long rng = fz_mix(g.seed ^ 0x6d6f64756c65ULL);
	long long last = fz_now();
	bool race = false;

	(void)arg;
	while (!stopping()) {
		sleep_ms(10 + fz_next(&rng) % 200);
		if (stopping())
			break;
		if (fz_now() - last >= QUIESCE_MS) {
			quiesced_unload(&rng, race);
			race = !race;
			last = fz_now();
			continue;
		}
		/* mostly EWOULDBLOCK: the workers hold files and buffers */
		win_open();
		if (!delete_module(MODNAME)) {
			__atomic_add_fetch(&g.unloads, 1, __ATOMIC_RELAXED);
			sleep_ms(fz_next(&rng) % 50);
			reload();
		} else if (module_busy_errno(errno)) {
			__atomic_add_fetch(&g.busy, 1, __ATOMIC_RELAXED);
		} else {
			fz_fail(NULL, "delete_module: %s", strerror(errno));
		}
		win_close();
	}
	__atomic_store_n(&g.mod_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* ---- main ------------------------------------------------------------------ */

/* The operations and sequences the workers have done so far */
static void totals(struct worker **w, unsigned long long *nops,
		   unsigned long long *nseqs)
{
	unsigned int i, k;

	*nops = 0;
	*nseqs = 0;
	for (i = 0; i < g.threads; i++) {
		for (k = 0; k < OP_NR; k++)
			*nops += __atomic_load_n(&w[i]->count[k], __ATOMIC_RELAXED);
		*nseqs += __atomic_load_n(&w[i]->seqs, __ATOMIC_RELAXED);
	}
}

/* Something has not returned long after the end: report it, and exit */
static void stuck(struct worker **w)
{
	unsigned long long nops, nseqs;
	unsigned int i;

	for (i = 0; i < g.threads; i++)
		if (!__atomic_load_n(&w[i]->done, __ATOMIC_ACQUIRE))
			fz_fail(w[i], "still running %u s after the end: %s",
				HANG_MS / 1000, "its last operation never returned");
	if (g.mod_ops && !__atomic_load_n(&g.mod_done, __ATOMIC_ACQUIRE))
		fz_fail(NULL, "the module thread still runs %u s after the end: %s",
			HANG_MS / 1000, "delete_module or finit_module never returned");
	totals(w, &nops, &nseqs);
	printf("%llu operations, %llu sequences, seed %llu, %u violations\n", nops, nseqs,
	       g.seed, g.violations);
	fflush(stdout);
	_exit(1);
}

static void help(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-s SEED] [-t SECONDS] [-n SEQUENCES] [-j THREADS] [-r T:Q] [-v]\n"
		"          [-d ZERO,FULL]\n"
		"  -s SEED       the run's seed (default 1)\n"
		"  -t SECONDS    how long to run (default 10)\n"
		"  -n SEQUENCES  stop after that many sequences in all\n"
		"  -j THREADS    worker threads (default 3)\n"
		"  -r T:Q        replay sequence Q of thread T alone, and print it\n"
		"  -v            print every sequence's operations\n"
		"  -d ZERO,FULL  fuzz these device nodes instead, say the stock\n"
		"                /dev/zero,/dev/full to compare (zcdev is not unloaded)\n"
		"As root with ZCDEV_KO=zcdev.ko, a thread unloads and reloads zcdev\n"
		"meanwhile, and zcdev must unload at the end.\n", prog);
	exit(2);
}

static void parse(int argc, char **argv)
{
	char *end;
	int c;

	while ((c = getopt(argc, argv, "s:t:n:j:r:d:vh")) != -1) {
		errno = 0;
		switch (c) {
		case 's':
			g.seed = strtoull(optarg, &end, 0);
			break;
		case 't':
			g.seconds = strtoul(optarg, &end, 0);
			break;
		case 'n':
			g.max_seqs = strtoull(optarg, &end, 0);
			break;
		case 'j':
			g.threads = strtoul(optarg, &end, 0);
			if (!g.threads || g.threads > 64)
				help(argv[0]);
			break;
		case 'r':
			g.replay = true;
			g.replay_thread = strtoul(optarg, &end, 0);
			if (*end != ':')
				help(argv[0]);
			g.replay_seq = strtoull(end + 1, &end, 0);
			break;
		case 'v':
			g.verbose = true;
			end = "";
			break;
		case 'd':
			g.other_devs = true;
			other_path[ZERO] = optarg;
			end = strchr(optarg, ',');
			if (!end)
				help(argv[0]);
			*end++ = '\0';
			other_path[FULL] = end;
			end = "";
			break;
		default:
			help(argv[0]);
		}
		if (errno || *end)
			help(argv[0]);
	}
	if (optind != argc)
		help(argv[0]);
}

static struct worker *worker_new(unsigned int id)
{
	struct worker *w = calloc(1, sizeof(*w));
	unsigned char *map;
	unsigned int i;

	if (!w)
		return NULL;
	w->id = id;
	for (i = 0; i < NDEV; i++)
		w->dev[i].fd = -1;
	for (i = 0; i < NPIPE; i++) {
		w->pipe[i].rfd = -1;
		w->pipe[i].wfd = -1;
	}
	w->src_fd = -1;
	w->dst_fd = -1;
	w->src = malloc(SRC_MAX);
	w->dst = malloc(DST_MAX);
	w->scratch = malloc(BUF_MAX);
	w->child = mmap(NULL, g.pg, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w->child == MAP_FAILED)
		return NULL;
	/* the area, with a PROT_NONE page on either side */
	map = mmap(NULL, BUF_MAX + 3 * g.pg, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!w->src || !w->dst || !w->scratch || map == MAP_FAILED ||
	    mprotect(map + g.pg, BUF_MAX + g.pg, PROT_READ | PROT_WRITE))
		return NULL;
	w->area = map + g.pg;
	w->area_end = w->area + BUF_MAX + g.pg;
	return w;
}

/* The pattern: never a zero byte, and no period of a page */
static bool pattern_setup(void)
{
	size_t i;

	g.pat = mmap(NULL, PAT_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g.pat == MAP_FAILED)
		return false;
	for (i = 0; i < PAT_LEN; i++)
		g.pat[i] = 1 + (i * 7 + (i >> 9) * 13) % 251;
	/* read-only: pipes may hold its pages (vmsplice), nothing writes it */
	return !mprotect(g.pat, PAT_LEN, PROT_READ);
}

int main(int argc, char **argv)
{
	unsigned long long nops = 0, nseqs = 0, refused = 0, count[OP_NR] = { 0 };
	struct worker *w[64];
	long long next_progress, secs;
	pthread_t mod_thread;
	unsigned int i, k;
	int fd, err;

	parse(argc, argv);
	for (k = 0; k < OP_NR; k++)
		op_total += ops[k].weight;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	g.pg = page_size();
	g.ko = getenv("ZCDEV_KO");
	g.mod_ops = !g.replay && !g.other_devs && !geteuid() && g.ko && *g.ko;
	if (g.replay)
		g.threads = 1;

	if (!pattern_setup()) {
		perror("# the pattern");
		return 2;
	}
	g.zp = mmap(NULL, g.pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g.zp == MAP_FAILED) {
		perror("# mmap");
		return 2;
	}
	printf("# zcdev_fuzz: seed %llu, %u s, %u threads%s\n", g.seed, g.seconds, g.threads,
	       g.mod_ops ? ", unloading and reloading zcdev meanwhile" : "");

	fd = open(dev_path(ZERO), O_RDONLY | O_CLOEXEC);
	if (fd < 0 && g.mod_ops && (errno == ENOENT || errno == ENODEV)) {
		err = load_module(g.ko, "");
		if (err)
			printf("# loading %s: %s\n", g.ko, strerror(err));
		fd = open(dev_path(ZERO), O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		fz_fail(NULL, "%s cannot be opened: %s", dev_path(ZERO), strerror(errno));
		printf("0 operations, 0 sequences, seed %llu, 1 violations\n", g.seed);
		return 1;
	}
	close(fd);
	g.buf_size = splice_buffer_size(g.other_devs);
	g.large_bufs = g.buf_size > 4096;
	if (g.large_bufs)
		printf("# zcdev's buffers carry up to %zu bytes: pipes bounded by slots\n",
		       g.buf_size);
	if (not_byte(g.zp, g.pg, 0) >= 0)
		fz_fail(NULL, "the zero page is not zero at the start");

	g.start = fz_now();
	g.deadline = g.start + g.seconds * 1000LL;
	for (i = 0; i < g.threads; i++) {
		w[i] = worker_new(g.replay ? g.replay_thread : i);
		if (!w[i] || pthread_create(&w[i]->thread, NULL, worker_main, w[i])) {
			fprintf(stderr, "# thread %u: cannot start\n", i);
			return 2;
		}
	}
	if (g.mod_ops && pthread_create(&mod_thread, NULL, module_main, NULL)) {
		fprintf(stderr, "# the module thread: cannot start\n");
		return 2;
	}

	/*
	 * Progress now and then, for whoever watches (a guest silent for
	 * 60 s is ended), until the workers and then the module thread are
	 * done.  Every call here returns in milliseconds: one that has not
	 * long after the end is stuck, which is a violation too.
	 */
	next_progress = g.start + PROGRESS_MS;
	for (;;) {
		for (i = 0, k = 0; i < g.threads; i++)
			k += __atomic_load_n(&w[i]->done, __ATOMIC_ACQUIRE);
		if (k == g.threads) {
			fz_stop();	/* -n: the module thread is to end too */
			if (!g.mod_ops || __atomic_load_n(&g.mod_done, __ATOMIC_ACQUIRE))
				break;
		}
		if (!g.replay && fz_now() > g.deadline + HANG_MS)
			stuck(w);
		sleep_ms(100);
		if (fz_now() < next_progress)
			continue;
		next_progress += PROGRESS_MS;
		totals(w, &nops, &nseqs);
		pthread_mutex_lock(&g.lock);
		printf("# %lld s: %llu operations, %llu sequences, %llu unloads\n",
		       (fz_now() - g.start) / 1000, nops, nseqs,
		       __atomic_load_n(&g.unloads, __ATOMIC_RELAXED) +
		       __atomic_load_n(&g.raced_unloads, __ATOMIC_RELAXED) +
		       __atomic_load_n(&g.quiesced_unloads, __ATOMIC_RELAXED));
		pthread_mutex_unlock(&g.lock);
	}
	fz_stop();
	for (i = 0; i < g.threads; i++)
		pthread_join(w[i]->thread, NULL);
	if (g.mod_ops)
		pthread_join(mod_thread, NULL);
	secs = fz_now() - g.start;

	/* every file closed, every pipe drained: zcdev must go, and come back */
	if (not_byte(g.zp, g.pg, 0) >= 0)
		fz_fail(NULL, "the zero page is not zero at the end");
	if (g.mod_ops) {
		err = unload_within(UNLOAD_MS);
		if (err)
			fz_fail(NULL, "zcdev did not unload within %u ms of the end: %s", UNLOAD_MS,
				strerror(err));
		else
			reload();
	}

	nops = 0;
	nseqs = 0;
	for (i = 0; i < g.threads; i++) {
		for (k = 0; k < OP_NR; k++) {
			count[k] += w[i]->count[k];
			nops += w[i]->count[k];
		}
		nseqs += w[i]->seqs;
		refused += w[i]->refused;
	}
	printf("# operations:");
	for (k = 0; k < OP_NR; k++)
		printf("%s %s %llu", k ? "," : "", ops[k].name, count[k]);
	printf("\n# %.1f s, %llu operations a second; %llu opens refused while zcdev was away\n",
	       secs / 1000.0, secs ? nops * 1000 / secs : 0, refused);
	if (g.mod_ops) {
		printf("# zcdev unloaded %llu times between sequences,",
		       g.quiesced_unloads);
		printf(" %llu times as they started again, %llu times while in use",
		       g.raced_unloads, g.unloads);
		printf(" (%llu attempts found it busy)\n", g.busy);
		printf("# the longest an idle zcdev took to unload: %lld ms\n",
		       g.unload_wait_max);
	}
	printf("%llu operations, %llu sequences, seed %llu, %u violations\n", nops, nseqs, g.seed,
	       g.violations);
	return g.violations ? 1 : 0;
}
