// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev's selftests, drain: pipes spliced into the devices, checked byte
 * for byte against a model of a pipe that holds every kind of buffer
 * (written data, vmspliced pages, page-cache pages, zero buffers), by
 * lengths that end inside buffers, after the ring's indices wrapped,
 * while a writer blocks on a full pipe, and across F_SETPIPE_SZ.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>

/* The harness has a signal handler that ignores an argument */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#include "pipe_model.h"
#include "zcdev_fixture.h"

/*
 * The sources that fill a pipe: write() from a buffer, vmsplice() of user
 * pages, splice() of page-cache pages of a tmpfs file, and splice() of
 * zero buffers from the device.  Each but the last has a pattern of its
 * own, which the pipe's model (pipe_model.h) points into.
 */
enum source { SRC_ZERO, SRC_WRITE, SRC_VMSPLICE, SRC_FILE, SRC_NR };

static const char * const src_name[SRC_NR] = {
	"zero", "write", "vmsplice", "file",
};

#define SRC_BYTES	(256 * KIB)	/* the pattern of each source */

/*
 * Byte off of a source's pattern: never zero but for zero buffers, and
 * different a page (4096 % 255 != 0) or a byte further on, so that bytes
 * out of place or of the wrong source show.
 */
static unsigned char pat(enum source src, size_t off)
{
	if (src == SRC_ZERO)
		return 0;
	return 1 + (off * 7 + src * 61) % 255;
}

/* A pipe, its sources and its model */
struct pipe_ctx {
	int p[2];		/* the write end is O_NONBLOCK: a plan */
				/* that overfills fails, never hangs */
	int zero;		/* splices zero buffers (zero_splicer()) */
	int file;		/* a tmpfs file, the file's pattern in it */
	unsigned char *wbuf;	/* the write pattern */
	unsigned char *vbuf;	/* the vmsplice pattern: never written */
				/* again, as pipes refer to its pages */
	unsigned char *fbuf;	/* the file's pattern */
	size_t next[SRC_NR];	/* where each source goes on */
	struct pipe_model m;
};

/* Where source src's pattern is, for the model: NULL for zeros */
static const unsigned char *src_base(const struct pipe_ctx *c, enum source src)
{
	const unsigned char *base[SRC_NR] = { NULL, c->wbuf, c->vbuf, c->fbuf };

	return base[src];
}

/* Which source byte at of the pipe came from, for the log */
static const char *src_at(const struct pipe_ctx *c, size_t at)
{
	const unsigned char *b;
	unsigned int s;

	if (at >= c->m.bytes)
		return "nothing";
	b = pm_base_at(&c->m, at);
	for (s = SRC_WRITE; s < SRC_NR; s++)
		if (b >= src_base(c, s) && b < src_base(c, s) + SRC_BYTES)
			return src_name[s];
	return src_name[SRC_ZERO];
}

/* Where each source starts in a fresh pipe: mid-page, for odd pieces */
static const size_t src_start[SRC_NR] = { 0, 0, 100, 3 };

static int ctx_pipe(struct pipe_ctx *c)
{
	if (c->p[0] >= 0) {
		close(c->p[0]);
		close(c->p[1]);
	}
	pm_clear(&c->m);
	memcpy(c->next, src_start, sizeof(c->next));
	if (pipe2(c->p, O_CLOEXEC))
		return -1;
	return fcntl(c->p[1], F_SETFL, O_NONBLOCK);
}

/* zero is zero_splicer()'s file, which the context takes over */
static int ctx_init(struct pipe_ctx *c, int zero)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	c->p[0] = -1;
	c->p[1] = -1;
	c->zero = zero;
	c->file = tmpfs_file();
	c->wbuf = malloc(SRC_BYTES);
	c->fbuf = malloc(SRC_BYTES);
	c->vbuf = map_anon(SRC_BYTES);
	if (c->file < 0 || !c->wbuf || !c->fbuf || !c->vbuf)
		return -1;
	for (i = 0; i < SRC_BYTES; i++) {
		c->wbuf[i] = pat(SRC_WRITE, i);
		c->vbuf[i] = pat(SRC_VMSPLICE, i);
		c->fbuf[i] = pat(SRC_FILE, i);
	}
	if (pwrite(c->file, c->fbuf, SRC_BYTES, 0) != (ssize_t)SRC_BYTES)
		return -1;
	return ctx_pipe(c);
}

static void ctx_free(struct pipe_ctx *c)
{
	if (c->p[0] >= 0) {
		close(c->p[0]);
		close(c->p[1]);
	}
	if (c->file >= 0)
		close(c->file);
	if (c->zero >= 0)
		close(c->zero);
	free(c->wbuf);
	free(c->fbuf);
	if (c->vbuf)
		munmap(c->vbuf, SRC_BYTES);
	pm_free(&c->m);
}

/* Queue len bytes of src into the pipe, and into the model: 0, or errno */
static int queue(struct pipe_ctx *c, enum source src, size_t len)
{
	size_t off = c->next[src];
	struct iovec iov;
	loff_t foff = off;
	ssize_t r;

	/* a plan past the end of the pattern: the test's fault */
	if (off + len > SRC_BYTES) {
		errno = ERANGE;
		return errno;
	}
	switch (src) {
	case SRC_ZERO:
		r = splice(c->zero, NULL, c->p[1], NULL, len, 0);
		break;
	case SRC_WRITE:
		r = write(c->p[1], c->wbuf + off, len);
		break;
	case SRC_VMSPLICE:
		iov.iov_base = c->vbuf + off;
		iov.iov_len = len;
		r = vmsplice(c->p[1], &iov, 1, 0);
		break;
	default:
		r = splice(c->file, &foff, c->p[1], NULL, len, 0);
		break;
	}
	if (r != (ssize_t)len)
		return r < 0 ? errno : EIO;
	c->next[src] = off + len;
	pm_push(&c->m, src ? src_base(c, src) + off : NULL, len);
	return 0;
}

struct step {
	enum source src;
	size_t len;
};

/* Queue a plan: 0, or the errno of the step that failed */
static int queue_plan(struct pipe_ctx *c, const struct step *plan,
		      unsigned int n)
{
	unsigned int i;
	int err;

	for (i = 0; i < n; i++) {
		err = queue(c, plan[i].src, plan[i].len);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Every source in one pipe, 16 buffers in all: the default pipe full.
 * The two writes share a buffer; the vmsplice and the file start
 * mid-page, so each makes two buffers; the one-byte pieces come after
 * buffers they cannot merge with.  Zero splices are a page or less each,
 * so that each is one buffer whatever zcdev's splice_buffer.
 */
static const struct step mixed[] = {
	{ SRC_WRITE, 100 }, { SRC_WRITE, 3000 },
	{ SRC_VMSPLICE, 4096 + 200 },
	{ SRC_FILE, 5000 },
	{ SRC_ZERO, 4096 }, { SRC_ZERO, 1 },
	{ SRC_WRITE, 1 }, { SRC_ZERO, 1 }, { SRC_FILE, 1 },
	{ SRC_VMSPLICE, 10 },
	{ SRC_ZERO, 4096 }, { SRC_ZERO, 4096 }, { SRC_ZERO, 4096 },
	{ SRC_ZERO, 5 },
	{ SRC_WRITE, 50 },
};

/*
 * Read the whole pipe and compare it with the model: the index of the
 * first wrong byte, -1 when all are right, -2 when fewer could be read.
 * The reads do not block: a pipe that holds less fails, and never hangs.
 */
static long pipe_differs(int fd, const struct pipe_model *m)
{
	int fl = fcntl(fd, F_GETFL);
	unsigned char *got, *want;
	long ret = -1;
	size_t i;

	got = malloc(m->bytes + 1);
	want = malloc(m->bytes + 1);
	if (!got || !want) {
		ret = -2;
		goto out;
	}
	memset(got, FILL, m->bytes);
	pm_peek(m, m->bytes, want);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) ||
	    read_full(fd, got, m->bytes) != (ssize_t)m->bytes) {
		ret = -2;
		goto out;
	}
	for (i = 0; i < m->bytes; i++) {
		if (got[i] != want[i]) {
			ret = i;
			break;
		}
	}
out:
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl);
	free(got);
	free(want);
	return ret;
}

/*
 * The pipe holds what the model says, and keeps it: its buffers are
 * tee'd into a pipe of a size to take them all, which is read instead.
 * The index of the first wrong byte, -1 when all are right, -2 on error.
 */
static long pipe_peek_differs(int fd, const struct pipe_model *m)
{
	int q[2];
	long ret = -2;

	if (pipe2(q, O_CLOEXEC | O_NONBLOCK))
		return -2;
	if (fcntl(q[1], F_SETPIPE_SZ, MIB) >= 0 &&
	    tee(fd, q[1], m->bytes, SPLICE_F_NONBLOCK) == (ssize_t)m->bytes)
		ret = pipe_differs(q[0], m);
	close(q[0]);
	close(q[1]);
	return ret;
}

/* The rest of the pipe is what the model says, and then nothing */
static void check_rest(struct __test_metadata *_metadata, struct pipe_ctx *c,
		       const char *what)
{
	long at;

	EXPECT_EQ((int)c->m.bytes, pipe_bytes(c->p[0])) TH_LOG("%s", what);
	at = pipe_differs(c->p[0], &c->m);
	EXPECT_EQ(-1, at) TH_LOG("%s: byte %ld of the %zu left (%s) is wrong",
				 what, at, c->m.bytes,
				 at >= 0 ? src_at(c, at) : "short");
	EXPECT_EQ(0, pipe_bytes(c->p[0])) TH_LOG("%s", what);
	pm_drop(&c->m, c->m.bytes);
}

/*
 * Splice n bytes of the pipe into the device, and check the outcome: a
 * zero device takes what there is, up to n; a full one refuses with
 * ENOSPC and leaves the pipe as it was, and then the bytes are read
 * instead (and checked), so that a test goes on the same way for both.
 * The model follows.  A writer may be adding to the pipe meanwhile.
 */
static void drain_racing(struct __test_metadata *_metadata,
			 struct pipe_ctx *c, int dev, bool full, size_t n,
			 unsigned int flags)
{
	size_t want = n < c->m.bytes ? n : c->m.bytes;
	unsigned char *got, *exp;
	struct outcome o;

	errno = 0;
	o = outcome(splice(c->p[0], NULL, dev, NULL, n, flags));
	if (!full || !n) {
		EXPECT_EQ((long)want, o.ret)
			TH_LOG("drain of %zu of %zu: %s", n, c->m.bytes,
			       strerror(o.err));
		/* the model follows what went, so that the rest is checked */
		pm_drop(&c->m, o.ret > 0 ? o.ret : 0);
		return;
	}
	EXPECT_EQ(-1, o.ret) TH_LOG("drain of %zu", n);
	EXPECT_EQ(ENOSPC, o.err) TH_LOG("drain of %zu", n);
	if (o.ret > 0) {
		pm_drop(&c->m, o.ret);
		return;
	}
	EXPECT_EQ((int)c->m.bytes, pipe_bytes(c->p[0]));
	got = malloc(want + 1);
	exp = malloc(want + 1);
	ASSERT_NE(NULL, got);
	ASSERT_NE(NULL, exp);
	pm_peek(&c->m, want, exp);
	EXPECT_EQ((ssize_t)want, read_full(c->p[0], got, want));
	EXPECT_EQ(0, memcmp(got, exp, want)) TH_LOG("read of %zu", n);
	free(got);
	free(exp);
	pm_drop(&c->m, want);
}

/* As drain_racing(), nobody else writing: FIONREAD agrees after */
static void drain(struct __test_metadata *_metadata, struct pipe_ctx *c,
		  int dev, bool full, size_t n, unsigned int flags)
{
	drain_racing(_metadata, c, dev, full, n, flags);
	EXPECT_EQ((int)c->m.bytes, pipe_bytes(c->p[0]))
		TH_LOG("after taking %zu", n);
}

/* Why a drain test skips a stock device */
enum { DRAIN_READY, NO_SPLICE_WRITE, NO_ZERO_BUFS };

static const char * const drain_skip[] = {
	[NO_SPLICE_WRITE] = "cannot be spliced to on this kernel",
	[NO_ZERO_BUFS] = "cannot splice, and zczero is absent",
};

/*
 * Prepare a drain test: DRAIN_READY, a reason to skip a stock device
 * (/dev/full has no splice_write), or -1 with errno.  The zero buffers
 * come from the device, or from zczero where a stock device cannot
 * splice them.
 */
static int drain_prepare(struct pipe_ctx *c, int fd, bool is_stock)
{
	int zfd;

	if (is_stock && splice_write_errno(fd) == EINVAL)
		return NO_SPLICE_WRITE;
	zfd = zero_splicer(fd, is_stock);
	if (zfd < 0)
		return is_stock ? NO_ZERO_BUFS : -1;
	return ctx_init(c, zfd);
}

/*
 * The drain tests' fixture: the device (the four variants of
 * zcdev_fixture.h's, the same four) and a pipe with its sources and model, set up as
 * drain_prepare() says.  A stock device that cannot take part skips.
 */
FIXTURE(drain) {
	int fd;
	bool skip;
	struct pipe_ctx c;
};

FIXTURE_VARIANT(drain) {
	DEVICE_VARIANT_FIELDS;
};

FIXTURE_VARIANT_ADD(drain, zczero) { ZCZERO_DEV };
FIXTURE_VARIANT_ADD(drain, zcfull) { ZCFULL_DEV };
FIXTURE_VARIANT_ADD(drain, ref_zero) { REF_ZERO_DEV };
FIXTURE_VARIANT_ADD(drain, ref_full) { REF_FULL_DEV };

FIXTURE_SETUP(drain)
{
	int ret;

	self->c.p[0] = -1;
	self->c.zero = -1;
	self->c.file = -1;
	self->fd = device_open(_metadata, variant->path, variant->is_stock);
	if (self->fd < 0) {
		self->skip = true;
		SKIP(return, "%s: %s", variant->path,
		     device_skip(variant->is_stock));
	}
	ret = drain_prepare(&self->c, self->fd, variant->is_stock);
	if (ret > 0) {
		self->skip = true;
		SKIP(return, "%s %s", variant->path, drain_skip[ret]);
	}
	ASSERT_EQ(0, ret) TH_LOG("drain setup: %s", strerror(errno));
}

FIXTURE_TEARDOWN(drain)
{
	ctx_free(&self->c);
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * Drains that end anywhere: in written data, vmspliced and page-cache
 * pages and zero buffers, at their edges, a byte either side of a page,
 * the whole pipe and more than it holds; then drains one after another.
 */
TEST_F_TIMEOUT(drain, drain_mixed, 120)
{
	const size_t pg = 4096;
	size_t lens[] = {
		1, 99, 100, 3099, 3100, 3101, pg - 1, pg, pg + 1, 7777,
		12345, 0, 0, 0, 0, MIB,		/* the zeros: from the total */
	};
	static const size_t steps[] = { 1, 2, 97, 3000, 4096, 4097, 1, 8191,
					5, 333 };
	struct pipe_ctx *c = &self->c;
	char what[64];
	unsigned int i;
	size_t total;

	if (self->skip)
		return;
	ASSERT_EQ(0, queue_plan(c, mixed, ARRAY_SIZE(mixed)));
	total = c->m.bytes;
	EXPECT_EQ(16 * pg, (size_t)fcntl(c->p[0], F_GETPIPE_SZ));
	/* 16 buffers: the pipe is full (a write could still merge) */
	EXPECT_EQ(EAGAIN, queue(c, SRC_ZERO, 1));
	check_rest(_metadata, c, "no drain");
	lens[11] = total / 2 + 1;
	lens[12] = total - 1;
	lens[13] = total;
	lens[14] = total + 1;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		ASSERT_EQ(0, ctx_pipe(c));
		ASSERT_EQ(0, queue_plan(c, mixed, ARRAY_SIZE(mixed)));
		drain(_metadata, c, self->fd, variant->is_full, lens[i], 0);
		snprintf(what, sizeof(what), "drain of %zu of %zu", lens[i],
			 total);
		check_rest(_metadata, c, what);
	}

	/* one drain after another, FIONREAD checked after each */
	ASSERT_EQ(0, ctx_pipe(c));
	ASSERT_EQ(0, queue_plan(c, mixed, ARRAY_SIZE(mixed)));
	for (i = 0; i < ARRAY_SIZE(steps); i++)
		drain(_metadata, c, self->fd, variant->is_full, steps[i], 0);
	check_rest(_metadata, c, "drains one after another");

	/* more than there is, on a non-blocking pipe: all, then EAGAIN */
	ASSERT_EQ(0, ctx_pipe(c));
	ASSERT_EQ(0, queue_plan(c, mixed, ARRAY_SIZE(mixed)));
	ASSERT_EQ(0, fcntl(c->p[0], F_SETFL, O_NONBLOCK));
	drain(_metadata, c, self->fd, variant->is_full, 2 * total, 0);
	EXPECT_EQ(0, pipe_bytes(c->p[0]));
	errno = 0;
	EXPECT_EQ(-1, splice(c->p[0], NULL, self->fd, NULL, 1, 0));
	EXPECT_EQ(variant->is_full ? ENOSPC : EAGAIN, errno);
	/* and refilled after it: the pipe works on */
	memcpy(c->next, src_start, sizeof(c->next));
	ASSERT_EQ(0, queue_plan(c, mixed, ARRAY_SIZE(mixed)));
	drain(_metadata, c, self->fd, variant->is_full, 4097, 0);
	check_rest(_metadata, c, "refilled");
}

/* A thread that writes or splices into a full pipe, and blocks there */
struct blocked {
	pthread_t thread;
	struct pipe_ctx *c;
	enum source src;	/* SRC_WRITE: write(), SRC_FILE: splice() */
	size_t off, len;
	pid_t tid;
	size_t done;
	int err;
};

static void *blocked_main(void *arg)
{
	struct blocked *b = arg;
	loff_t foff = b->off;
	ssize_t r;

	__atomic_store_n(&b->tid, syscall(SYS_gettid), __ATOMIC_RELEASE);
	while (b->done < b->len) {
		if (b->src == SRC_WRITE)
			r = write(b->c->p[1], b->c->wbuf + b->off + b->done,
				  b->len - b->done);
		else
			r = splice(b->c->file, &foff, b->c->p[1], NULL,
				   b->len - b->done, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			b->err = r < 0 ? errno : EIO;
			break;
		}
		b->done += r;
	}
	return NULL;
}

/*
 * A writer blocked on a full pipe, in write() or in splice(), is woken by
 * a drain into zczero and completes.  zcfull refuses the drain, and then
 * a read of the pipe wakes the writer instead.  A writer left asleep
 * hangs the join: the harness's timeout fails the test, well before the
 * lane's guest is ended for printing nothing.
 */
TEST_F_TIMEOUT(drain, drain_wakes_writer, 30)
{
	/* a buffer a zero splice, whatever zcdev's splice_buffer */
	static const struct step fill[] = {
		{ SRC_WRITE, 1000 },
		{ SRC_ZERO, 4096 }, { SRC_ZERO, 4096 }, { SRC_ZERO, 4096 },
		{ SRC_ZERO, 4096 }, { SRC_ZERO, 4096 }, { SRC_ZERO, 4096 },
		{ SRC_ZERO, 4096 }, { SRC_ZERO, 4096 }, { SRC_ZERO, 4096 },
		{ SRC_ZERO, 4096 }, { SRC_ZERO, 4096 }, { SRC_ZERO, 4096 },
		{ SRC_ZERO, 4096 }, { SRC_ZERO, 4096 }, { SRC_ZERO, 4096 },
	};
	/* frees six buffers; the writer needs four, or three */
	const size_t n = 1000 + 5 * 4096 + 7;
	static const enum source kinds[] = { SRC_WRITE, SRC_FILE };
	static const long nr[] = { SYS_write, SYS_splice };
	struct pipe_ctx *c = &self->c;
	struct blocked b;
	unsigned int k;
	pid_t tid;

	if (self->skip)
		return;
	for (k = 0; k < ARRAY_SIZE(kinds); k++) {
		ASSERT_EQ(0, ctx_pipe(c));
		ASSERT_EQ(0, queue_plan(c, fill, ARRAY_SIZE(fill)));
		ASSERT_EQ(0, fcntl(c->p[1], F_SETFL, 0));
		memset(&b, 0, sizeof(b));
		b.c = c;
		b.src = kinds[k];
		b.off = c->next[b.src];
		b.len = b.src == SRC_WRITE ? 3 * 4096 + 5 : 3 * 4096;
		ASSERT_EQ(0, pthread_create(&b.thread, NULL, blocked_main, &b));
		while (!(tid = __atomic_load_n(&b.tid, __ATOMIC_ACQUIRE)))
			sleep_ms(1);
		ASSERT_TRUE(wait_blocked(tid, nr[k], 10000))
			TH_LOG("the %s thread never blocked",
			       src_name[b.src]);
		/* nothing of it got in: the pipe held what it did */
		EXPECT_EQ((int)c->m.bytes, pipe_bytes(c->p[0]));

		drain_racing(_metadata, c, self->fd, variant->is_full, n, 0);
		pthread_join(b.thread, NULL);
		EXPECT_EQ(0, b.err) TH_LOG("%s", strerror(b.err));
		EXPECT_EQ(b.len, b.done) TH_LOG("%s", src_name[b.src]);
		pm_push(&c->m, src_base(c, b.src) + b.off, b.done);
		check_rest(_metadata, c, src_name[b.src]);
	}
}

/* A drain of an empty pipe waits for a writer, as stock devices do */
struct late_writer {
	pthread_t thread;
	int fd;
	pid_t drainer;
	int err;
};

static void *late_writer_main(void *arg)
{
	struct late_writer *w = arg;
	static const char data[5] = "abcde";

	/* write only once the drainer sleeps in splice() */
	if (!wait_blocked(w->drainer, SYS_splice, 10000))
		w->err = ETIMEDOUT;
	if (write(w->fd, data, sizeof(data)) != sizeof(data))
		w->err = errno ? errno : EIO;
	return NULL;
}

TEST_F_TIMEOUT(drain, drain_waits_for_data, 30)
{
	struct late_writer w;
	struct outcome o;
	int p[2];

	if (self->skip)
		return;
	if (variant->is_stock && splice_write_errno(self->fd) == EINVAL)
		SKIP(return, "%s cannot be spliced to on this kernel",
		     variant->path);
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	if (variant->is_full) {
		/* refused at once: zcfull never waits for data it refuses */
		errno = 0;
		EXPECT_EQ(-1, splice(p[0], NULL, self->fd, NULL, 10, 0));
		EXPECT_EQ(ENOSPC, errno);
		goto out;
	}
	memset(&w, 0, sizeof(w));
	w.fd = p[1];
	w.drainer = syscall(SYS_gettid);
	ASSERT_EQ(0, pthread_create(&w.thread, NULL, late_writer_main, &w));
	errno = 0;
	o = outcome(splice(p[0], NULL, self->fd, NULL, 10, 0));
	pthread_join(w.thread, NULL);
	EXPECT_EQ(0, w.err) TH_LOG("%s", strerror(w.err));
	EXPECT_EQ(5, o.ret) TH_LOG("%s", strerror(o.err));
	EXPECT_EQ(0, pipe_bytes(p[0]));
out:
	close(p[0]);
	close(p[1]);
}

/*
 * The ring's indices far past its size: 65536 one-byte write/read pairs
 * move head and tail on by 65536, a lap of a 16-bit index (pipe_index_t
 * on 32-bit kernels since 6.14), then a mixed fill is drained.
 */
TEST_F_TIMEOUT(drain, drain_ring_wrap, 180)
{
	/* the last ends in the file's data: a wrong offset shows */
	static const size_t steps[] = { 4095, 1, 4097, 3, 777, 5 };
	unsigned long bad = 0, i;
	unsigned char in, out;
	struct pipe_ctx *c = &self->c;
	unsigned int k;

	if (self->skip)
		return;
	ASSERT_EQ(0, fcntl(c->p[1], F_SETFL, 0));
	for (i = 0; i < 65536; i++) {
		in = i * 13;
		out = ~in;
		if (write(c->p[1], &in, 1) != 1 || read(c->p[0], &out, 1) != 1 ||
		    out != in)
			bad++;
	}
	EXPECT_EQ(0UL, bad);
	EXPECT_EQ(0, pipe_bytes(c->p[0]));
	ASSERT_EQ(0, fcntl(c->p[1], F_SETFL, O_NONBLOCK));
	/* twice: the second fill starts where the first left the ring */
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, queue_plan(c, mixed, ARRAY_SIZE(mixed)));
		for (i = 0; i < ARRAY_SIZE(steps); i++)
			drain(_metadata, c, self->fd, variant->is_full,
			      steps[i], 0);
		check_rest(_metadata, c, "after the wrap");
		memcpy(c->next, src_start, sizeof(c->next));
	}
}

/*
 * F_SETPIPE_SZ with zero buffers queued: the ring grows under them and
 * takes more; it shrinks only to what still holds them (EBUSY below
 * that), and what they hold is intact after each move.
 */
TEST_F_TIMEOUT(drain, pipe_resize_queued, 120)
{
	static const struct step first[] = {
		{ SRC_ZERO, 4096 }, { SRC_ZERO, 1 }, { SRC_WRITE, 10 },
		{ SRC_FILE, 100 }, { SRC_ZERO, 4096 }, { SRC_ZERO, 4096 },
		{ SRC_ZERO, 4096 }, { SRC_VMSPLICE, 300 },
	};	/* eight buffers: a zero splice of a page or less is one */
	const size_t pg = 4096, grown = 256 * KIB;
	struct pipe_ctx *c = &self->c;
	unsigned int i;
	size_t before;

	if (self->skip)
		return;
	ASSERT_EQ(0, queue_plan(c, first, ARRAY_SIZE(first)));
	before = c->m.bytes;
	/* a size unprivileged users may set (pipe-max-size is 1 MiB) */
	EXPECT_EQ((int)grown, fcntl(c->p[0], F_SETPIPE_SZ, grown));
	EXPECT_EQ((int)before, pipe_bytes(c->p[0]));
	/* 28 buffers: more than the old ring had */
	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, queue(c, SRC_ZERO, pg));
	EXPECT_EQ((int)c->m.bytes, pipe_bytes(c->p[0]));
	/* below the 28 buffers: refused, the ring as it was */
	errno = 0;
	EXPECT_EQ(-1, fcntl(c->p[0], F_SETPIPE_SZ, pg));
	EXPECT_EQ(EBUSY, errno);
	errno = 0;
	EXPECT_EQ(-1, fcntl(c->p[0], F_SETPIPE_SZ, 16 * pg));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ((int)grown, fcntl(c->p[0], F_GETPIPE_SZ));
	EXPECT_EQ((int)c->m.bytes, pipe_bytes(c->p[0]));

	/* into the written bytes, in the ring moved (26 buffers left) */
	drain(_metadata, c, self->fd, variant->is_full, 4097 + 3, 0);
	EXPECT_EQ(-1, pipe_peek_differs(c->p[0], &c->m));
	errno = 0;
	EXPECT_EQ(-1, fcntl(c->p[0], F_SETPIPE_SZ, 16 * pg));
	EXPECT_EQ(EBUSY, errno);
	/* the rest of the first eight, five zero pages and a byte: 15 left */
	drain(_metadata, c, self->fd, variant->is_full,
	      before - 4100 + 5 * pg + 1, 0);
	EXPECT_EQ(16 * (int)pg, fcntl(c->p[0], F_SETPIPE_SZ, 16 * pg));
	EXPECT_EQ((int)c->m.bytes, pipe_bytes(c->p[0]));
	EXPECT_EQ(-1, pipe_peek_differs(c->p[0], &c->m));
	errno = 0;
	EXPECT_EQ(-1, fcntl(c->p[0], F_SETPIPE_SZ, 8 * pg));
	EXPECT_EQ(EBUSY, errno);
	/* the sixteenth buffer, and then the pipe is full */
	ASSERT_EQ(0, queue(c, SRC_WRITE, 10));
	EXPECT_EQ(EAGAIN, queue(c, SRC_ZERO, 1));
	drain(_metadata, c, self->fd, variant->is_full, 3 * pg + 3, 0);
	/* grown again with what is left, and filled past the old size */
	EXPECT_EQ(32 * (int)pg, fcntl(c->p[0], F_SETPIPE_SZ, 32 * pg));
	ASSERT_EQ(0, queue(c, SRC_ZERO, 10 * pg + 1));
	ASSERT_EQ(0, queue(c, SRC_VMSPLICE, 5));
	check_rest(_metadata, c, "after resizing");
}

TEST_HARNESS_MAIN
