// SPDX-License-Identifier: GPL-2.0
/* zcdev_fuzz: the checks, and what the operations share (zcdev_fuzz.h) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/wait.h>

#include "zcdev_fuzz.h"

struct fz_conf fzc = {
	.seed = 1,
	.seconds = 10,
	.threads = 3,
};

/* The checks' own state */
static int stop;			/* the __atomic_* builtins */
static unsigned int violations;
static unsigned int win_gen;		/* odd while zcdev may be missing */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

unsigned int fz_violations(void)
{
	return __atomic_load_n(&violations, __ATOMIC_SEQ_CST);
}

/* Output of more than a line, whole: a violation's, a progress line */
void fz_out_lock(void)
{
	pthread_mutex_lock(&out_lock);
}

void fz_out_unlock(void)
{
	pthread_mutex_unlock(&out_lock);
}

/* What is fuzzed: zcdev's devices, or others given with -d */
static const char * const zc_path[] = { "/dev/zczero", "/dev/zcfull" };
const char * const dev_name[2] = { "zczero", "zcfull" };

const char *dev_path(int kind)
{
	return fzc.other_path[kind] ? fzc.other_path[kind] : zc_path[kind];
}

/* splitmix64: a state that only counts, scrambled by a bijection */
unsigned long long fz_mix(unsigned long long z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

unsigned long long fz_next(unsigned long long *s)
{
	*s += 0x9e3779b97f4a7c15ULL;
	return fz_mix(*s);
}

/* Whether the run was stopped: a violation, or fz_stop() */
bool stopped(void)
{
	return __atomic_load_n(&stop, __ATOMIC_ACQUIRE);
}

/* Whether to begin no more: stopped, or past the deadline */
bool stopping(void)
{
	return stopped() || (!fzc.replay && now_ms() >= fzc.deadline);
}

void fz_stop(void)
{
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
}

/*
 * A byte count drawn to hit what matters: tiny ones, a page and a byte
 * either side, whole pages, pages and a byte, and anything up to max.
 */
size_t rlen(unsigned long long r, size_t max)
{
	size_t pg = fzc.pg, n;

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

/* The same, but never 0 */
size_t rlen_nz(unsigned long long r, size_t max)
{
	size_t n = rlen(r, max);

	return n ? n : 1;
}

/* ---- the log of a sequence, and violations ---------------------------- */

/* Start a line of the sequence's log, or go on with the last one */
void log_add(struct worker *w, bool new_line, const char *fmt, ...)
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

/* A result for the log: the count, or the error's name */
void log_ret(struct worker *w, long r, int err)
{
	if (r < 0)
		LOG_MORE(w, " = -1 %s", strerror(err));
	else
		LOG_MORE(w, " = %ld", r);
}

void print_log(struct worker *w)
{
	unsigned int i;

	for (i = 0; i < w->nlog; i++)
		printf("#   %s\n", w->log[i]);
	if (w->nlog_lost)
		printf("#   ... and %u lines more\n", w->nlog_lost);
}

/*
 * Report a violation, with what reproduces it, and stop the run: the
 * first violation is the one worth reading.  Returns false, for the
 * checks to return.
 */
bool fz_fail(struct worker *w, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	__atomic_add_fetch(&violations, 1, __ATOMIC_SEQ_CST);
	fz_stop();
	pthread_mutex_lock(&out_lock);
	if (!w) {
		printf("# violation: %s (seed %llu)\n", msg, fzc.seed);
	} else {
		w->violated = true;
		printf("# violation in thread %u, sequence %llu (seed %llu): %s\n",
		       w->id, w->seq, fzc.seed, msg);
		printf("# reproduce: zcdev_fuzz -s %llu -r %u:%llu", fzc.seed, w->id,
		       w->seq);
		printf(" (the whole run: zcdev_fuzz -s %llu -j %u -t %u%s)\n",
		       fzc.seed, fzc.threads, fzc.seconds,
		       fzc.mod_ops ? ", ZCDEV_KO set" : "");
		printf("# the sequence, as far as it got:\n");
		print_log(w);
	}
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	return false;
}

/* The result of a call that had to fail with errno want */
bool want_err(struct worker *w, const char *what, long r, int err,
	      int want)
{
	if (r < 0 && err == want)
		return true;
	if (r < 0)
		return fz_fail(w, "%s failed with %s, not %s", what, strerror(err), strerror(want));
	return fz_fail(w, "%s returned %ld, not -1 with %s", what, r, strerror(want));
}

/* ---- the module's gaps: opens that may fail -------------------------- */

unsigned int win_now(void)
{
	return __atomic_load_n(&win_gen, __ATOMIC_SEQ_CST);
}

/* The module thread opens a window before delete_module, closes it after */
void win_open(void)
{
	__atomic_add_fetch(&win_gen, 1, __ATOMIC_SEQ_CST);
}

void win_close(void)
{
	__atomic_add_fetch(&win_gen, 1, __ATOMIC_SEQ_CST);
}

/*
 * Whether an open that failed with err may have met the module unloaded:
 * a window was open when it started, or one opened since.
 */
bool refusal_ok(unsigned int gen, int err)
{
	return fzc.mod_ops && away_errno(err) &&
	       ((gen & 1) || win_now() != gen);
}

/* ---- slots ----------------------------------------------------------- */

const char *acc_name(int acc)
{
	return acc == O_RDONLY ? "r" : acc == O_WRONLY ? "w" : "rw";
}

bool dev_reads(const struct dev_slot *d)
{
	return d->acc != O_WRONLY;
}

bool dev_writes(const struct dev_slot *d)
{
	return d->acc != O_RDONLY;
}

/* "d1(zczero,rw)": a device slot for the log */
const char *dname(struct worker *w, unsigned int i, char *buf)
{
	struct dev_slot *d = &w->dev[i];

	sprintf(buf, "d%u(%s,%s%s)", i, dev_name[d->kind], acc_name(d->acc),
		d->nonblock ? ",nb" : "");
	return buf;
}

enum slot_kind { SLOT_DEV, SLOT_PIPE, SLOT_MAP };

static bool in_use(struct worker *w, enum slot_kind kind, unsigned int i)
{
	return kind == SLOT_DEV ? w->dev[i].fd >= 0 :
	       kind == SLOT_PIPE ? w->pipe[i].rfd >= 0 : !!w->map[i].addr;
}

/* The first slot of a kind in use from r on, or -1 */
static int pick(struct worker *w, enum slot_kind kind, unsigned long long r)
{
	static const unsigned int nr[] = { NDEV, NPIPE, NMAP };
	unsigned int i, k;

	for (k = 0; k < nr[kind]; k++) {
		i = (r + k) % nr[kind];
		if (in_use(w, kind, i))
			return i;
	}
	return -1;
}

int pick_dev(struct worker *w, unsigned long long r)
{
	return pick(w, SLOT_DEV, r);
}

int pick_pipe(struct worker *w, unsigned long long r)
{
	return pick(w, SLOT_PIPE, r);
}

int pick_map(struct worker *w, unsigned long long r)
{
	return pick(w, SLOT_MAP, r);
}

bool dev_close(struct worker *w, unsigned int i)
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

void pipe_close(struct worker *w, unsigned int i)
{
	struct pipe_slot *p = &w->pipe[i];

	if (p->rfd < 0)
		return;
	close(p->rfd);
	close(p->wfd);
	p->rfd = -1;
	p->wfd = -1;
	pm_clear(&p->m);
}

size_t pipe_size(struct pipe_slot *p)
{
	int r = fcntl(p->wfd, F_GETPIPE_SZ);

	return r < 0 ? 0 : r;
}

/* What each page of a mapping must hold, checked */
bool map_check(struct worker *w, unsigned int i)
{
	struct map_slot *m = &w->map[i];
	unsigned int k;
	long bad;

	for (k = 0; k < m->pages; k++) {
		bad = not_byte(m->addr + k * fzc.pg, fzc.pg, m->tag[k]);
		if (bad >= 0)
			return fz_fail(w, "byte %ld of page %u of m%u (%s) is 0x%02x, not 0x%02x",
				       bad, k, i, m->shared ? "shared" : "private",
				       m->addr[k * fzc.pg + bad], m->tag[k]);
	}
	return true;
}

void map_drop(struct worker *w, unsigned int i)
{
	struct map_slot *m = &w->map[i];

	if (!m->addr)
		return;
	munmap(m->addr, m->pages * fzc.pg);
	m->addr = NULL;
}

/* ---- the invariants -------------------------------------------------- */

/* The zero page is still zero: a fresh anonymous page, and zczero's */
bool fresh_zero_check(struct worker *w)
{
	unsigned int gen;
	unsigned char *p;
	long bad;
	int fd;

	p = mmap(NULL, fzc.pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return fz_fail(w, "mmap of an anonymous page: %s", strerror(errno));
	bad = not_byte(p, fzc.pg, 0);
	munmap(p, fzc.pg);
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
	p = mmap(NULL, 2 * fzc.pg, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return fz_fail(w, "mmap of zczero, private: %s", strerror(errno));
	bad = not_byte(p, 2 * fzc.pg, 0);
	munmap(p, 2 * fzc.pg);
	if (bad >= 0)
		return fz_fail(w, "a fresh private mapping of zczero has byte %ld non-zero", bad);
	return true;
}

/* After every step: FIONREAD is the model's length, the zero page zero */
bool step_check(struct worker *w)
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
		if (p->m.bytes > p->size / 4096 * fzc.buf_size)
			return fz_fail(w, "p%u holds %zu bytes, more than %zu slots of %zu",
				       i, p->m.bytes, p->size / 4096, fzc.buf_size);
	}
	bad = not_byte(fzc.zp, fzc.pg, 0);
	if (bad >= 0)
		return fz_fail(w, "byte %ld of the zero page is 0x%02x", bad, fzc.zp[bad]);
	return true;
}

/*
 * n bytes that left pipe i for user memory at got: they must be the
 * model's first n, and then leave the model.
 */
bool pipe_consumed(struct worker *w, unsigned int i,
		   const unsigned char *got, size_t n, const char *how)
{
	struct pipe_model *m = &w->pipe[i].m;
	size_t k;

	pm_peek(m, n, w->scratch);
	if (memcmp(got, w->scratch, n)) {
		for (k = 0; got[k] == w->scratch[k]; k++)
			;
		return fz_fail(w,
			       "%s: byte %zu of the %zu read from p%u is 0x%02x, the model says 0x%02x (%s)",
			       how, k, n, i, got[k], w->scratch[k],
			       pm_zero_at(m, k) ? "zeros from zcdev" : "written or from tmpfs");
	}
	pm_drop(m, n);
	return true;
}

/* Read pipe i to its end, checking every byte: it must then be empty */
bool pipe_drain(struct worker *w, unsigned int i)
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
unsigned char *dst_prepare(struct worker *w, size_t valid)
{
	unsigned char *p = w->area_end - valid;

	memset(p - MARGIN, FILL, valid + MARGIN);
	return p;
}

/*
 * A destination for len bytes, as r draws it: mostly with room, now and
 * then running into the PROT_NONE page part-way; its valid bytes too.
 */
unsigned char *dst_draw(struct worker *w, unsigned long long r, size_t len,
			size_t *valid)
{
	*valid = (r & 3) || !len ? len + (r >> 8) % MARGIN : (r >> 8) % len;
	return dst_prepare(w, *valid);
}

/* An operation that lacks what it works on logs so: whether it does */
bool nothing_to_do(struct worker *w, bool lacking, const char *why)
{
	if (lacking)
		LOG(w, "%s", why);
	return lacking;
}

/* A call of 0 bytes must return 0, whatever else: whether it was one */
bool zero_len(struct worker *w, const char *what, size_t len, long r)
{
	if (len)
		return false;
	if (r)
		fz_fail(w, "%s of 0 bytes returned %ld", what, r);
	return true;
}

bool dst_margins(struct worker *w, const unsigned char *p, size_t n,
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
int split_iov(struct iovec *iov, unsigned char *p, size_t n,
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

const char * const rm_name[RM_NR] = {
	"read", "readv", "preadv2(-1)", "preadv2(-1,NOWAIT)", "pread",
	"preadv2(off)",
};

bool rm_nowait(enum rmeth m, unsigned long long r)
{
	return m == RM_NOWAIT || (m == RM_PREADV2_OFF && (r >> 40) & 1);
}

ssize_t do_read(int fd, enum rmeth m, unsigned char *p, size_t n,
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

const char * const wm_name[WM_NR] = {
	"write", "writev", "pwrite", "pwritev2",
};

ssize_t do_write(int fd, enum wmeth m, const unsigned char *p,
		 size_t n, unsigned long long r, off_t off)
{
	struct iovec iov[4];
	int k = split_iov(iov, (unsigned char *)p, n, r);

	if (m == WM_WRITE)
		return write(fd, p, n);
	if (m == WM_WRITEV)
		return writev(fd, iov, k);
	if (m == WM_PWRITE)
		return pwrite(fd, p, n, off);
	return pwritev2(fd, iov, k, (r >> 40) & 1 ? -1 : off,
			(r >> 41) & 1 ? RWF_NOWAIT : 0);
}

/* n bytes of the pattern, from somewhere r says */
const unsigned char *pat_at(unsigned long long r, size_t n)
{
	return fzc.pat + (r % (PAT_LEN - n + 1));
}

