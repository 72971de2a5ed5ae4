// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev's selftests, guards: no use of a buffer fails for bookkeeping.
 *
 * Whoever uses a pipe buffer calls its ->confirm() first, also when the
 * use then consumes nothing: a read of one byte confirms the whole of a
 * 2 MiB buffer, a read into a bad address (EFAULT) is confirmed, and a
 * splice into a file past RLIMIT_FSIZE confirms every buffer of the pipe
 * before the write fails with EFBIG (KERNEL-LAB.md, "Who calls
 * ->confirm").  A module that charged page references per confirm would
 * count attempts, and one user's attempts would spend a folio's count for
 * every buffer of it, in every process.  So each test makes such
 * attempts by the million while a bystander, another process, holds a
 * buffer of the same device that it spliced before the attack; after it,
 * the bystander's buffer must read back whole and zero, a fresh splice
 * must work, and so must every attempt of the attack itself.
 *
 *   bytewise          a 2 MiB pipe holding one 2 MiB buffer (root raises
 *                     pipe-max-size, and puts it back), read a byte a call
 *   bytewise_threads  four threads, each a 1 MiB pipe read a byte a call
 *   efbig             20,000 splices of a full 1 MiB pipe (256 buffers of
 *                     256 down to 1 pages, 32,896 pages) into a file past
 *                     RLIMIT_FSIZE, each EFBIG; the pipe reads back zeros
 *   efault            20,000 reads of one byte of a 2 MiB buffer into an
 *                     unmapped address, each EFAULT
 *   tee_bytewise, tee_efbig, tee_efault
 *                     the same on tee copies of the buffers (tee'd into a
 *                     second pipe first); the originals read back too
 *
 * A byte a call is some two million system calls for 2 MiB, about ten
 * seconds under TCG on a stock kernel, minutes on the lab's debug kernel
 * (KASAN, lockdep, full preemption): ZCDEV_SCALE=N reads only the
 * first 1/N of each pipe a byte a call, and the rest at once, and makes
 * 1/N of the 20,000 failing calls.  The lane makes the full counts on
 * the newest stock kernel, fewer on the others (lab/stages/kernels.sh): a
 * build that charged each confirm 2^20 pages or more still fails at any N
 * up to 64.
 *
 * ZCDEV_GUARD_ONLY=NAME[,NAME...] runs only the tests named (efbig, say)
 * and skips the others: kselftest's harness of 6.1, which the lab
 * builds with, has no -t.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

/* The harness has a signal handler that ignores an argument */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#include "zcdev_fixture.h"

#define BIG_PIPE	(2 * MIB)	/* one 2 MiB buffer: 512 pages */
#define PIPE_1M		MIB		/* 256 slots */
#define FAILING_CALLS	20000
#define THREADS		4
/* RLIMIT_FSIZE for efbig, and where its splices write: past it */
#define FSIZE_LIMIT	(64 * KIB)

FIXTURE(guard) {
	int fd;		/* the device under test */
	bool skip;
	long pipe_max;	/* pipe-max-size to put back, or -1 */
};

FIXTURE_VARIANT(guard) {
	DEVICE_VARIANT_FIELDS;
};

FIXTURE_VARIANT_ADD(guard, zczero) { ZCZERO_DEV };
FIXTURE_VARIANT_ADD(guard, zcfull) { ZCFULL_DEV };
FIXTURE_VARIANT_ADD(guard, ref_zero) { REF_ZERO_DEV };
FIXTURE_VARIANT_ADD(guard, ref_full) { REF_FULL_DEV };

/* Whether ZCDEV_GUARD_ONLY, if set, names test */
static bool selected(const char *test)
{
	const char *only = getenv("ZCDEV_GUARD_ONLY"), *p;
	size_t len = strlen(test);

	if (!only)
		return true;
	for (p = only; (p = strstr(p, test)); p += len)
		if ((p == only || p[-1] == ',') && (!p[len] || p[len] == ','))
			return true;
	return false;
}

FIXTURE_SETUP(guard)
{
	int err;

	self->pipe_max = -1;
	self->fd = -1;
	if (!selected(_metadata->name)) {
		self->skip = true;
		SKIP(return, "not in ZCDEV_GUARD_ONLY");
	}
	self->fd = device_open(_metadata, variant->path, variant->is_stock);
	if (self->fd < 0) {
		self->skip = true;
		SKIP(return, "%s: %s", variant->path,
		     device_skip(variant->is_stock));
	}
	if (stock_cannot_splice_read(self->fd, variant->is_stock)) {
		self->skip = true;
		SKIP(return, "%s cannot splice on this kernel", variant->path);
	}
	err = pipe_max_raise(BIG_PIPE, &self->pipe_max);
	ASSERT_EQ(0, err) TH_LOG("pipe-max-size: %s", strerror(err));
}

FIXTURE_TEARDOWN(guard)
{
	if (self->fd >= 0)
		close(self->fd);
	pipe_max_restore(self->pipe_max);
}

/* A non-blocking pipe of size bytes, filled from dev: what it holds */
static long big_pipe(int dev, int p[2], size_t size, size_t fill)
{
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK))
		return -1;
	if (fcntl(p[1], F_SETPIPE_SZ, (int)size) < (int)size)
		return -1;
	return pipe_fill(dev, p, fill);
}

static void close_pipe(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	p[0] = -1;
	p[1] = -1;
}

/* What the bystander reports when it is done */
struct by_report {
	char stage[32];	/* where it failed, "" if nowhere */
	int err;
	long held;	/* bytes it held through the attack */
};

/* A process that holds a buffer of the device through the attack */
struct bystander {
	pid_t pid;
	int ctl;	/* our end of a socket pair to it */
	long held;
};

static int by_fail(int ctl, struct by_report *r, const char *stage, int err)
{
	snprintf(r->stage, sizeof(r->stage), "%s", stage);
	r->err = err;
	return write(ctl, r, sizeof(*r)) == sizeof(*r) ? 0 : 1;
}

/*
 * The bystander: a 1 MiB pipe, one splice into it, its size told; once
 * told to go on, all of it read back, then a fresh splice read back.
 */
static int bystander_main(int dev, int ctl)
{
	struct by_report r = { .held = -1 };
	int p[2], err;
	long n;
	char go;

	n = big_pipe(dev, p, PIPE_1M, PIPE_1M);
	if (n <= 0)
		return by_fail(ctl, &r, "splice", errno);
	r.held = n;
	if (write(ctl, &n, sizeof(n)) != sizeof(n) ||
	    read(ctl, &go, 1) != 1)
		return by_fail(ctl, &r, "waiting", errno ? errno : EPIPE);
	if (pipe_bytes(p[0]) != n)
		return by_fail(ctl, &r, "FIONREAD", EIO);
	err = pipe_read_zeros(p[0], n);
	if (err)
		return by_fail(ctl, &r, "reading it back", err);
	n = splice(dev, NULL, p[1], NULL, 64 * KIB, SPLICE_F_NONBLOCK);
	if (n <= 0)
		return by_fail(ctl, &r, "a fresh splice", errno ? errno : EIO);
	err = pipe_read_zeros(p[0], n);
	if (err)
		return by_fail(ctl, &r, "the fresh splice", err);
	return by_fail(ctl, &r, "", 0);
}

static void bystander_start(struct __test_metadata *_metadata,
			    struct bystander *b, int dev)
{
	int sv[2];

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	b->pid = fork();
	ASSERT_LE(0, b->pid);
	if (!b->pid) {
		close(sv[0]);
		_exit(bystander_main(dev, sv[1]));
	}
	close(sv[1]);
	b->ctl = sv[0];
	ASSERT_EQ((ssize_t)sizeof(b->held), read(b->ctl, &b->held, sizeof(b->held)))
		TH_LOG("the bystander could not splice");
	ASSERT_LT(0, b->held);
}

/* After the attack: the bystander read back all it held, and spliced */
static void bystander_finish(struct __test_metadata *_metadata,
			     struct bystander *b)
{
	struct by_report r;
	int status;

	EXPECT_EQ(1, write(b->ctl, "g", 1));
	memset(&r, 0, sizeof(r));
	EXPECT_EQ((ssize_t)sizeof(r), read(b->ctl, &r, sizeof(r)));
	EXPECT_STREQ("", r.stage)
		TH_LOG("the bystander, holding %ld bytes: %s: %s", r.held,
		       r.stage, strerror(r.err));
	close(b->ctl);
	EXPECT_EQ(b->pid, waitpid(b->pid, &status, 0));
	EXPECT_EQ(0, status);
}

/* What an attack came to: calls made, and the first that went wrong */
struct attack {
	unsigned long calls;
	unsigned long bad_at;	/* its number, if bad */
	long ret;
	int err;
	bool bad;
	long long ns;
};

static void attack_failed(struct attack *a, long ret, int err)
{
	a->bad = true;
	a->bad_at = a->calls;
	a->ret = ret;
	a->err = err;
}

static void expect_attack(struct __test_metadata *_metadata,
			  const struct attack *a, const char *what)
{
	TH_LOG("%s: %lu calls in %.1f s", what, a->calls, a->ns / 1e9);
	EXPECT_FALSE(a->bad)
		TH_LOG("%s: call %lu returned %ld: %s", what, a->bad_at,
		       a->ret, a->ret < 0 ? strerror(a->err) : "wrong bytes");
}

/*
 * A line now and then in a long attack: the lane ends a guest that has
 * printed nothing for a minute.
 */
static void progress(const struct attack *a, const char *what,
		     long long *last)
{
	long long t = now_ns();

	if (t - *last < 20 * 1000000000LL)
		return;
	*last = t;
	printf("# %s: %lu calls, %.0f s\n", what, a->calls,
	       (t - a->ns) / 1e9);
	fflush(stdout);
}

/*
 * Read pipe fd to its end, n bytes: the first n / test_scale() a byte a
 * call, each one zero byte, the rest in large reads.
 */
static void bytewise(int fd, size_t n, struct attack *a)
{
	size_t ones = n / test_scale();
	long long last;
	unsigned char c;
	ssize_t r;
	int err;

	a->ns = now_ns();
	last = a->ns;
	for (; a->calls < ones; a->calls++) {
		if (!(a->calls & 0xffff))
			progress(a, "a byte a read", &last);
		c = FILL;
		r = read(fd, &c, 1);
		if (r != 1 || c) {
			attack_failed(a, r, errno);
			break;
		}
	}
	if (!a->bad) {
		err = pipe_read_zeros(fd, n - ones);
		if (err)
			attack_failed(a, -1, err);
	}
	a->ns = now_ns() - a->ns;
}

/*
 * The pipe the attack goes at: p itself, or with tee, q, a pipe of the
 * same size that tee fills with copies of p's buffers.
 */
static int *target(struct __test_metadata *_metadata, int p[2], int q[2],
		   bool tee_it, size_t size)
{
	int n = pipe_bytes(p[0]);
	ssize_t r;

	if (!tee_it)
		return p;
	ASSERT_EQ(0, pipe2(q, O_CLOEXEC | O_NONBLOCK));
	ASSERT_LE((int)size, fcntl(q[1], F_SETPIPE_SZ, (int)size));
	r = tee(p[0], q[1], n, SPLICE_F_NONBLOCK);
	ASSERT_EQ(n, r) TH_LOG("tee of %d bytes: %zd: %s", n, r,
			       strerror(errno));
	ASSERT_EQ(n, pipe_bytes(q[0]));
	return q;
}

/* After the attack: whatever is left in p reads back, and so does a splice */
static void still_zeros(struct __test_metadata *_metadata, int dev, int p[2])
{
	int n = pipe_bytes(p[0]), err;
	ssize_t r;

	err = pipe_read_zeros(p[0], n);
	EXPECT_EQ(0, err) TH_LOG("%d bytes left in a pipe: %s", n,
				 strerror(err));
	r = splice(dev, NULL, p[1], NULL, BIG_PIPE, SPLICE_F_NONBLOCK);
	EXPECT_LT(0, r) TH_LOG("a fresh splice: %s", strerror(errno));
	if (r > 0)
		EXPECT_EQ(0, pipe_read_zeros(p[0], r));
}

/*
 * After an attack that consumed nothing: the @n bytes of @target read back,
 * then still_zeros(), and the pipes closed
 */
static void read_back(struct __test_metadata *_metadata, int dev, int target,
		      long n, int p[2], int q[2])
{
	int err = pipe_read_zeros(target, n);

	EXPECT_EQ(0, err) TH_LOG("reading back %ld bytes: %s", n,
				 strerror(err));
	still_zeros(_metadata, dev, p);
	close_pipe(p);
	close_pipe(q);
}

static void run_bytewise(struct __test_metadata *_metadata, int dev,
			 bool tee_it)
{
	int p[2] = { -1, -1 }, q[2] = { -1, -1 }, *t;
	struct bystander by;
	struct attack a = { 0 };
	long n;

	bystander_start(_metadata, &by, dev);
	n = big_pipe(dev, p, BIG_PIPE, BIG_PIPE);
	ASSERT_EQ((long)BIG_PIPE, n) TH_LOG("2 MiB pipe: %s", strerror(errno));
	t = target(_metadata, p, q, tee_it, BIG_PIPE);
	bytewise(t[0], n, &a);
	expect_attack(_metadata, &a, "a byte a read");
	EXPECT_EQ(0, pipe_bytes(t[0]));
	bystander_finish(_metadata, &by);
	if (tee_it)	/* the originals are still there */
		EXPECT_EQ(n, pipe_bytes(p[0]));
	still_zeros(_metadata, dev, p);
	close_pipe(p);
	close_pipe(q);
}

TEST_F_TIMEOUT(guard, bytewise, 600)
{
	if (!self->skip)
		run_bytewise(_metadata, self->fd, false);
}

TEST_F_TIMEOUT(guard, tee_bytewise, 600)
{
	if (!self->skip)
		run_bytewise(_metadata, self->fd, true);
}

/* One of bytewise_threads' readers */
struct reader {
	pthread_t thread;
	int dev;
	long held;
	struct attack a;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	int p[2] = { -1, -1 };

	r->held = big_pipe(r->dev, p, PIPE_1M, PIPE_1M);
	if (r->held == (long)PIPE_1M)
		bytewise(p[0], r->held, &r->a);
	close_pipe(p);
	return NULL;
}

TEST_F_TIMEOUT(guard, bytewise_threads, 900)
{
	struct reader r[THREADS];
	struct bystander by;
	unsigned int i;

	if (self->skip)
		return;
	bystander_start(_metadata, &by, self->fd);
	memset(r, 0, sizeof(r));
	for (i = 0; i < THREADS; i++) {
		r[i].dev = self->fd;
		ASSERT_EQ(0, pthread_create(&r[i].thread, NULL, reader_main,
					    &r[i]));
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(r[i].thread, NULL);
		EXPECT_EQ((long)PIPE_1M, r[i].held);
		expect_attack(_metadata, &r[i].a, "a byte a read, a thread");
	}
	bystander_finish(_metadata, &by);
}

/*
 * efbig: the splices of the whole pipe t into a file at an offset past
 * RLIMIT_FSIZE (SIGXFSZ ignored), each EFBIG, the pipe unchanged
 */
static void efbig(struct __test_metadata *_metadata, int t[2], long n,
		  struct attack *a)
{
	struct rlimit old, lim;
	unsigned long calls = FAILING_CALLS / test_scale();
	loff_t off;
	ssize_t r;
	int file;

	file = tmpfs_file();
	ASSERT_LE(0, file);
	ASSERT_EQ(0, getrlimit(RLIMIT_FSIZE, &old));
	lim = old;
	lim.rlim_cur = FSIZE_LIMIT;
	ASSERT_NE(SIG_ERR, signal(SIGXFSZ, SIG_IGN));
	ASSERT_EQ(0, setrlimit(RLIMIT_FSIZE, &lim));
	a->ns = now_ns();
	for (; a->calls < calls; a->calls++) {
		off = 2 * FSIZE_LIMIT;
		r = splice(t[0], NULL, file, &off, n, SPLICE_F_NONBLOCK);
		if (r != -1 || errno != EFBIG) {
			attack_failed(a, r, errno);
			break;
		}
	}
	a->ns = now_ns() - a->ns;
	EXPECT_EQ(0, setrlimit(RLIMIT_FSIZE, &old));
	signal(SIGXFSZ, SIG_DFL);
	close(file);
	EXPECT_EQ(n, pipe_bytes(t[0]));
}

static void run_efbig(struct __test_metadata *_metadata, int dev,
		      bool tee_it)
{
	int p[2] = { -1, -1 }, q[2] = { -1, -1 }, *t;
	struct bystander by;
	struct attack a = { 0 };
	long n;

	bystander_start(_metadata, &by, dev);
	/* splices until it is full: the most buffers and pages */
	n = big_pipe(dev, p, PIPE_1M, 1024 * MIB);
	ASSERT_LE((long)PIPE_1M, n) TH_LOG("1 MiB pipe: %s", strerror(errno));
	t = target(_metadata, p, q, tee_it, PIPE_1M);
	TH_LOG("the pipe holds %ld KiB", n / (long)KIB);
	efbig(_metadata, t, n, &a);
	expect_attack(_metadata, &a, "splices into a file past RLIMIT_FSIZE");
	bystander_finish(_metadata, &by);
	read_back(_metadata, dev, t[0], n, p, q);
}

TEST_F_TIMEOUT(guard, efbig, 600)
{
	if (!self->skip)
		run_efbig(_metadata, self->fd, false);
}

TEST_F_TIMEOUT(guard, tee_efbig, 600)
{
	if (!self->skip)
		run_efbig(_metadata, self->fd, true);
}

static void run_efault(struct __test_metadata *_metadata, int dev,
		       bool tee_it)
{
	int p[2] = { -1, -1 }, q[2] = { -1, -1 }, *t;
	unsigned long calls = FAILING_CALLS / test_scale();
	struct bystander by;
	struct attack a = { 0 };
	void *nowhere = hole_addr();
	ssize_t r;
	long n;

	ASSERT_NE(NULL, nowhere);
	bystander_start(_metadata, &by, dev);
	n = big_pipe(dev, p, BIG_PIPE, BIG_PIPE);
	ASSERT_EQ((long)BIG_PIPE, n) TH_LOG("2 MiB pipe: %s", strerror(errno));
	t = target(_metadata, p, q, tee_it, BIG_PIPE);
	a.ns = now_ns();
	for (; a.calls < calls; a.calls++) {
		r = read(t[0], nowhere, 1);
		if (r != -1 || errno != EFAULT) {
			attack_failed(&a, r, errno);
			break;
		}
	}
	a.ns = now_ns() - a.ns;
	expect_attack(_metadata, &a, "reads into an unmapped address");
	bystander_finish(_metadata, &by);
	read_back(_metadata, dev, t[0], n, p, q);
}

TEST_F_TIMEOUT(guard, efault, 300)
{
	if (!self->skip)
		run_efault(_metadata, self->fd, false);
}

TEST_F_TIMEOUT(guard, tee_efault, 300)
{
	if (!self->skip)
		run_efault(_metadata, self->fd, true);
}

TEST_HARNESS_MAIN
