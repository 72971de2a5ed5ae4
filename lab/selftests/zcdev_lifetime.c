// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev's selftests, the module's lifetime: pipe buffers that came from
 * zcdev keep it loaded, and it unloads once they are gone, also while
 * threads splice, tee and close against unloads and reloads; a flood of
 * unprivileged opens and splices leaves no memory behind.  As root, with
 * ZCDEV_KO naming the module file: the tests unload and reload it, and
 * fail without it (make run_tests sets it to ../../zcdev.ko when it exists).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>

/* The harness has a signal handler that ignores an argument */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#include "zcdev_fixture.h"

#define NO_KO	"set ZCDEV_KO to the module file: the test unloads and reloads zcdev"

/*
 * Unloading.  zcdev's pipe buffers, large or zero-page, a tee'd copy
 * included, keep the module loaded until the last one is gone; then it
 * unloads within seconds, and loads again.
 */
FIXTURE(unload) {
	int dummy;
};

FIXTURE_SETUP(unload)
{
}

FIXTURE_TEARDOWN(unload)
{
}

/*
 * While zcdev's buffers are still in some pipe, the module must not go:
 * delete_module() fails (EWOULDBLOCK from a module reference), or it
 * succeeds and then must have been safe; the first success is remembered.
 */
static void expect_busy(struct __test_metadata *_metadata, bool *unloaded,
			const char *what)
{
	int r, err;

	if (*unloaded)
		return;
	errno = 0;
	r = delete_module(MODNAME);
	err = errno;
	if (!r)
		*unloaded = true;
	EXPECT_TRUE(!r || module_busy_errno(err))
		TH_LOG("delete_module with %s: %s", what, strerror(err));
}

TEST_F_TIMEOUT(unload, pipes_pin_module, 240)
{
	const char *ko = getenv("ZCDEV_KO");
	int fd, null, p1[2], p2[2], p3[2], err;
	unsigned char buf[4096];
	bool unloaded = false;

	if (geteuid())
		SKIP(return, "unloading needs root");
	ASSERT_TRUE(ko && *ko) TH_LOG("%s", NO_KO);
	ASSERT_EQ(0, access(ko, R_OK)) TH_LOG("%s: %s", ko, strerror(errno));
	if (access("/dev/zczero", F_OK)) {
		err = load_module(ko, "");
		ASSERT_EQ(0, err) TH_LOG("load %s: %s", ko, strerror(err));
	}
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, null);
	ASSERT_EQ(0, pipe2(p1, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(p2, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(p3, O_CLOEXEC));

	/* a page in p1 and a tee'd copy in p2, from a file now closed */
	fd = open("/dev/zczero", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(4096, splice(fd, NULL, p1[1], NULL, 4096, 0));
	ASSERT_EQ(4096, tee(p1[0], p2[1], 4096, 0));
	close(fd);
	/* two pages in p3, from another open of zcfull, closed too */
	fd = open("/dev/zcfull", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(8192, splice(fd, NULL, p3[1], NULL, 8192, 0));
	close(fd);
	expect_busy(_metadata, &unloaded, "three pipes full");

	/* p3 drained by a splice into zczero */
	fd = open("/dev/zczero", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(8192, splice(p3[0], NULL, fd, NULL, 8192, 0));
	EXPECT_EQ(0, pipe_bytes(p3[0]));
	close(fd);
	expect_busy(_metadata, &unloaded, "p1 and p2 full");

	/* p1 read out */
	EXPECT_EQ(0, read_zeros(p1[0], 4096));
	expect_busy(_metadata, &unloaded, "the tee'd copy in p2");

	/* p2, the tee'd copy, spliced to /dev/null */
	EXPECT_EQ(4096, splice(p2[0], NULL, null, NULL, 4096, 0));
	EXPECT_EQ(0, pipe_bytes(p2[0]));

	/* now it goes, within ten seconds */
	if (!unloaded) {
		err = unload_module(10000);
		ASSERT_EQ(0, err) TH_LOG("delete_module with the pipes drained: %s",
					 strerror(err));
	}
	EXPECT_TRUE(wait_path("/dev/zczero", false, 5000));
	EXPECT_TRUE(wait_path("/dev/zcfull", false, 5000));
	/* the pipes themselves outlive the module */
	close(p1[0]);
	close(p1[1]);
	close(p2[0]);
	close(p2[1]);
	close(p3[0]);
	close(p3[1]);
	close(null);

	/* and loads again */
	err = load_module(ko, "");
	ASSERT_EQ(0, err) TH_LOG("reload %s: %s", ko, strerror(err));
	fd = open("/dev/zczero", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	memset(buf, FILL, sizeof(buf));
	EXPECT_EQ(4096, read(fd, buf, sizeof(buf)));
	EXPECT_EQ(-1, not_byte(buf, sizeof(buf), 0));
	close(fd);
}

static bool module_loaded(void)
{
	return !access("/sys/module/" MODNAME, F_OK);
}

/* The number of bytes of p[0..n) that are not zero */
static long count_not_zero(const unsigned char *p, size_t n)
{
	long i = not_byte(p, n, 0), bad = 0;

	if (i >= 0)
		for (; i < (long)n; i++)
			bad += p[i] != 0;
	return bad;
}

/*
 * The churn: threads splice from zczero and zcfull into pipes that they
 * keep for a few cycles, tee between them and let go of them in every
 * way a pipe's buffers can go, so that buffers outlive their files, while
 * another thread unloads and reloads zcdev.  Now and then it calls a lull
 * in which the churners empty their pipes: then zcdev must go.
 */
#define CHURNERS	3
#define CHURN_SLOTS	4	/* pipes a churner keeps */
#define CHURN_MS	8000	/* 1/ZCDEV_SCALE of it, at least CHURN_MIN_MS */
#define CHURN_MIN_MS	2000
#define PHASE_MS	300	/* of churn between two lulls */
#define LULL_MS		5000	/* the most a lull may take to unload zcdev */
#define AWAY_MS		20	/* between an unload and the reload */

struct churner;

struct churn_ctl {
	/* read: a churner's cycle; write: a look into all the pipes */
	pthread_rwlock_t lock;
	int stop;
	int lull;		/* churners: empty your pipes and wait */
	struct churner *churner;
};

struct churner {
	pthread_t thread;
	struct churn_ctl *ctl;
	int null;		/* /dev/null, one of the sinks */
	int pipe[CHURN_SLOTS][2];
	unsigned long cycles;
	unsigned long bytes;	/* spliced from the devices */
	unsigned long checked;	/* read back, or read directly, and checked */
	unsigned long bad;	/* of those, bytes that were not zero */
	unsigned long away;	/* opens refused while zcdev was away */
	unsigned long errors;
	const char *what;	/* what failed first */
	int err;		/* and its errno */
};

static void churn_error(struct churner *c, const char *what)
{
	if (!c->errors++) {
		c->what = what;
		c->err = errno;
	}
}

/*
 * Open a device of zcdev, which may be away: gone, going or not live yet
 * (away_errno()).  The fd, or -1.
 */
static int churn_open(struct churner *c, const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd < 0 && away_errno(errno))
		c->away++;
	else if (fd < 0)
		churn_error(c, path);
	return fd;
}

static void churn_check(struct churner *c, long bad, size_t n)
{
	if (bad < 0) {
		churn_error(c, "read");
		return;
	}
	c->bad += bad;
	c->checked += n;
}

/* Splice n bytes, all that a pipe holds, into out */
static void churn_splice_out(struct churner *c, int p[2], int out, int n)
{
	ssize_t r;

	while (n > 0) {
		r = splice(p[0], NULL, out, NULL, n, SPLICE_F_NONBLOCK);
		if (r <= 0) {
			churn_error(c, "splice out of a pipe");
			return;
		}
		n -= r;
	}
}

enum { LET_READ, LET_NULL, LET_ZCZERO, LET_CLOSE, LET_NR };

/* Let go of a pipe and of its buffers, in one of the ways they can go */
static void churn_empty(struct churner *c, int p[2], unsigned int how)
{
	int n = pipe_bytes(p[0]), out;

	if (n < 0) {
		churn_error(c, "FIONREAD");
		n = 0;
	}
	switch (how % LET_NR) {
	case LET_READ:
		churn_check(c, read_zeros(p[0], n), n);
		break;
	case LET_NULL:
		churn_splice_out(c, p, c->null, n);
		break;
	case LET_ZCZERO:
		/* zc_pipe_drain(); while zcdev is away, only the close */
		out = churn_open(c, "/dev/zczero", O_WRONLY);
		if (out >= 0) {
			churn_splice_out(c, p, out, n);
			close(out);
		}
		break;
	case LET_CLOSE:
		break;	/* closed with its buffers in it */
	}
	close(p[0]);
	close(p[1]);
	p[0] = -1;
	p[1] = -1;
}

static void churn_let_go(struct churner *c, unsigned int how)
{
	unsigned int i;

	for (i = 0; i < CHURN_SLOTS; i++)
		if (c->pipe[i][0] >= 0)
			churn_empty(c, c->pipe[i], how + i);
}

/* A read straight from the device, to check that too */
static void churn_read(struct churner *c, int fd, size_t n)
{
	unsigned char buf[8192];

	memset(buf, FILL, n);
	if (read(fd, buf, n) != (ssize_t)n) {
		churn_error(c, "read from the device");
		return;
	}
	churn_check(c, count_not_zero(buf, n), n);
}

/*
 * One cycle: the pipe of slot n % CHURN_SLOTS is let go of, the way its
 * turn says, and a new one gets 1 byte to 64 KiB from a device that is
 * closed again at once.  Every third cycle tees part of it into the next
 * slot's pipe, which lives on longer.
 */
static void churn_cycle(struct churner *c, unsigned int n)
{
	static const char * const dev[] = { "/dev/zczero", "/dev/zcfull" };
	int *p = c->pipe[n % CHURN_SLOTS];
	int *q = c->pipe[(n + 1) % CHURN_SLOTS];
	size_t len = 1 + n * 7919UL % (64 * KIB);
	ssize_t r;
	int fd;

	c->cycles++;
	if (p[0] >= 0)
		churn_empty(c, p, n / CHURN_SLOTS);
	/* 16 pages, the default: room for all of len */
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK)) {
		churn_error(c, "pipe2");
		return;
	}
	fd = churn_open(c, dev[(n / CHURN_SLOTS + n) & 1], O_RDONLY);
	if (fd < 0) {
		sleep_ms(1);	/* away: leave the CPUs to the reload */
		return;
	}
	r = splice(fd, NULL, p[1], NULL, len, SPLICE_F_NONBLOCK);
	if (r != (ssize_t)len)
		churn_error(c, "splice from the device");
	else
		c->bytes += r;
	if (n % 3 == 0 && q[0] >= 0 &&
	    tee(p[0], q[1], len / 2 + 1, SPLICE_F_NONBLOCK) < 0 &&
	    errno != EAGAIN)
		churn_error(c, "tee");
	if (n % 4 == 1)
		churn_read(c, fd, 1 + n % 8192);
	close(fd);
}

static void *churner_main(void *arg)
{
	struct churner *c = arg;
	struct churn_ctl *ctl = c->ctl;
	unsigned int n = 0;
	bool lull;

	while (!__atomic_load_n(&ctl->stop, __ATOMIC_ACQUIRE)) {
		pthread_rwlock_rdlock(&ctl->lock);
		lull = __atomic_load_n(&ctl->lull, __ATOMIC_ACQUIRE);
		if (lull)
			churn_let_go(c, n);
		else
			churn_cycle(c, n++);
		pthread_rwlock_unlock(&ctl->lock);
		if (lull)
			sleep_ms(2);
	}
	/* the unloader may still look: never let it see a slot half closed */
	pthread_rwlock_rdlock(&ctl->lock);
	churn_let_go(c, n);
	pthread_rwlock_unlock(&ctl->lock);
	return NULL;
}

/* The bytes in all the churners' pipes, or -1; under the write lock */
static long churn_held(struct churn_ctl *ctl)
{
	unsigned int i, j;
	long held = 0;
	int n;

	for (i = 0; i < CHURNERS; i++)
		for (j = 0; j < CHURN_SLOTS; j++) {
			if (ctl->churner[i].pipe[j][0] < 0)
				continue;
			n = pipe_bytes(ctl->churner[i].pipe[j][0]);
			if (n < 0)
				return -1;
			held += n;
		}
	return held;
}

struct unloader {
	pthread_t thread;
	struct churn_ctl *ctl;
	const char *ko;
	unsigned long tries;	/* delete_module() calls */
	unsigned long pinned;	/* refused, rightly, with bytes in a pipe */
	unsigned long unloads;
	unsigned long amid;	/* of them, amid the churn, not in a lull */
	unsigned long unsafe;	/* unloads with zcdev's buffers in a pipe */
	long unsafe_held;	/* the bytes those pipes held, the first time */
	unsigned long lulls;
	unsigned long stuck;	/* lulls that did not see zcdev go */
	unsigned long errors;
	const char *what;
	int err;
};

static void unloader_error(struct unloader *u, const char *what, int err)
{
	if (!u->errors++) {
		u->what = what;
		u->err = err;
	}
}

/*
 * One delete_module(): checked, with the churners held between cycles
 * and the bytes in their pipes counted (any byte there is a buffer of
 * zcdev's, so it must refuse), or racing with them.  Whether zcdev went.
 */
static bool try_unload(struct unloader *u, bool checked)
{
	long held = 0;
	int r, err;

	if (checked) {
		pthread_rwlock_wrlock(&u->ctl->lock);
		held = churn_held(u->ctl);
		if (held < 0) {
			err = errno;
			pthread_rwlock_unlock(&u->ctl->lock);
			unloader_error(u, "FIONREAD on a churner's pipe", err);
			return false;
		}
	}
	r = delete_module(MODNAME);
	err = errno;
	if (checked)
		pthread_rwlock_unlock(&u->ctl->lock);
	u->tries++;
	if (r && !module_busy_errno(err))
		unloader_error(u, "delete_module", err);
	if (r && held)
		u->pinned++;
	if (!r && held && !u->unsafe++)
		u->unsafe_held = held;
	return !r;
}

/* Away for a moment, for opens to find zcdev gone, then back */
static void reload(struct unloader *u)
{
	int err;

	u->unloads++;
	sleep_ms(AWAY_MS);
	err = load_module(u->ko, "");
	if (err)
		unloader_error(u, "finit_module", err);
}

static void *unloader_main(void *arg)
{
	struct unloader *u = arg;
	struct churn_ctl *ctl = u->ctl;
	long long t;
	unsigned int i;
	bool gone;

	while (!u->errors && !__atomic_load_n(&ctl->stop, __ATOMIC_ACQUIRE)) {
		/* amid the churn: it may go only when nothing pins it */
		for (t = now_ms(), i = 0; now_ms() - t < PHASE_MS; i++) {
			if (try_unload(u, i & 1)) {
				u->amid++;
				reload(u);
			}
			sleep_ms(5);
		}
		/* a lull: the churners let go of everything, so it goes */
		__atomic_store_n(&ctl->lull, 1, __ATOMIC_RELEASE);
		u->lulls++;
		t = now_ms();
		while (!(gone = try_unload(u, true)) &&
		       now_ms() - t < LULL_MS)
			sleep_ms(5);
		__atomic_store_n(&ctl->lull, 0, __ATOMIC_RELEASE);
		if (gone)
			reload(u);
		else
			u->stuck++;
	}
	return NULL;
}

TEST_F_TIMEOUT(unload, churn_against_unload, 240)
{
	const char *ko = getenv("ZCDEV_KO");
	struct churner c[CHURNERS];
	struct churn_ctl ctl;
	struct unloader u;
	pthread_rwlockattr_t attr;
	unsigned int i, j;
	int null, err;

	if (geteuid())
		SKIP(return, "unloading needs root");
	ASSERT_TRUE(ko && *ko) TH_LOG("%s", NO_KO);
	if (!module_loaded())
		ASSERT_EQ(0, load_module(ko, "")) TH_LOG("load %s", ko);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, null);

	memset(&ctl, 0, sizeof(ctl));
	/* the unloader's look must not wait for a gap in three churners */
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	ASSERT_EQ(0, pthread_rwlock_init(&ctl.lock, &attr));
	ctl.churner = c;
	memset(c, 0, sizeof(c));
	for (i = 0; i < CHURNERS; i++) {
		c[i].ctl = &ctl;
		c[i].null = null;
		for (j = 0; j < CHURN_SLOTS; j++) {
			c[i].pipe[j][0] = -1;
			c[i].pipe[j][1] = -1;
		}
	}
	memset(&u, 0, sizeof(u));
	u.ctl = &ctl;
	u.ko = ko;

	for (i = 0; i < CHURNERS; i++)
		ASSERT_EQ(0, pthread_create(&c[i].thread, NULL, churner_main,
					    &c[i]));
	ASSERT_EQ(0, pthread_create(&u.thread, NULL, unloader_main, &u));
	sleep_ms(scaled(CHURN_MS, CHURN_MIN_MS));
	__atomic_store_n(&ctl.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < CHURNERS; i++)
		pthread_join(c[i].thread, NULL);
	pthread_join(u.thread, NULL);
	close(null);

	for (i = 0; i < CHURNERS; i++) {
		TH_LOG("churner %u: %lu cycles, %lu bytes spliced, %lu checked",
		       i, c[i].cycles, c[i].bytes, c[i].checked);
		TH_LOG("churner %u: %lu opens while zcdev was away", i,
		       c[i].away);
		EXPECT_EQ(0UL, c[i].errors)
			TH_LOG("churner %u: %lu errors, the first: %s: %s",
			       i, c[i].errors, c[i].what, strerror(c[i].err));
		EXPECT_EQ(0UL, c[i].bad) TH_LOG("churner %u", i);
		EXPECT_LT(0UL, c[i].bytes) TH_LOG("churner %u", i);
	}
	TH_LOG("unloader: %lu delete_module calls, %lu refused with buffers in a pipe",
	       u.tries, u.pinned);
	TH_LOG("unloader: %lu unloads (%lu amid the churn) in %lu lulls",
	       u.unloads, u.amid, u.lulls);
	EXPECT_EQ(0UL, u.errors)
		TH_LOG("unloader: %lu errors, the first: %s: %s",
		       u.errors, u.what, strerror(u.err));
	EXPECT_EQ(0UL, u.stuck)
		TH_LOG("%lu lulls did not see zcdev go in %u ms", u.stuck,
		       LULL_MS);
	EXPECT_LT(0UL, u.unloads);
	EXPECT_EQ(0UL, u.unsafe)
		TH_LOG("unloaded %lu times with buffers in a pipe (%ld bytes)",
		       u.unsafe, u.unsafe_held);
	/* not vacuous: it was refused with buffers out */
	EXPECT_LT(0UL, u.pinned);
	pthread_rwlock_destroy(&ctl.lock);

	/* every pipe is closed: it goes within a few seconds, and comes back */
	if (!module_loaded())
		ASSERT_EQ(0, load_module(ko, "")) TH_LOG("load %s", ko);
	err = unload_module(5000);
	EXPECT_EQ(0, err) TH_LOG("unload after the churn: %s", strerror(err));
	if (module_loaded())
		return;
	ASSERT_EQ(0, load_module(ko, "")) TH_LOG("reload %s", ko);
}

/*
 * The flood: a user without privileges opens zczero, splices a byte into
 * a pipe and closes both, as fast as it can; every second of it makes a
 * generation that an RCU callback frees (zcdev_pipe.c).  Afterwards, the memory it
 * took must have come back, and the module must still unload.
 */
#define NOBODY		65534
#define FLOOD_MS	5000	/* at least: 1/ZCDEV_SCALE of it, */
#define FLOOD_MIN_MS	4000	/* and no less than this */
/*
 * and at least so many cycles, within FLOOD_MAX_MS, for a small leak to
 * stand out of the noise of a settled guest: SUnreclaim moves by up to
 * about 120 kB, Percpu by 24 kB, with no leak at all.  A flood whose
 * pace cannot make them by then stops at its time: its memory is not
 * judged, and the rest would only repeat it.
 */
#define FLOOD_CYCLES	40000
#define FLOOD_MAX_MS	20000
#define SETTLE_TRIES	10

struct flood {
	unsigned long cycles;
	long long ms;
	const char *what;	/* what failed */
	int err;
};

static int flood_fail(struct flood *f, const char *what)
{
	f->what = what;
	f->err = errno;
	return -1;
}

/*
 * In a child: drop root, then open, splice a byte and close, for ms and
 * at least cycles times, unless that takes FLOOD_MAX_MS or its pace
 * cannot make them by then
 */
static int flood_main(struct flood *f, unsigned int ms, unsigned long cycles)
{
	long long start, now;
	unsigned int i;
	int fd, p[2];

	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		return flood_fail(f, "dropping root");
	/* no privilege left: unloading is refused */
	errno = 0;
	if (delete_module(MODNAME) != -1 || errno != EPERM)
		return flood_fail(f, "delete_module as nobody");
	start = now_ms();
	do {
		for (i = 0; i < 64; i++) {
			fd = open("/dev/zczero", O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				return flood_fail(f, "open /dev/zczero");
			if (pipe2(p, O_CLOEXEC))
				return flood_fail(f, "pipe2");
			if (splice(fd, NULL, p[1], NULL, 1, 0) != 1)
				return flood_fail(f, "splice");
			/* the file first: its buffer outlives it */
			close(fd);
			close(p[1]);
			close(p[0]);
			f->cycles++;
		}
		now = now_ms();
	} while (now - start < ms ||
		 (f->cycles < cycles &&
		  (long long)f->cycles * FLOOD_MAX_MS >=
		  (long long)cycles * (now - start)));
	f->ms = now - start;
	return 0;
}

/* Run flood_main() in a child, its results in f: the child's status */
static int flood_run(struct flood *f, unsigned int ms, unsigned long cycles)
{
	struct flood *shared;
	int status = -1;
	pid_t pid;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return -1;
	memset(shared, 0, sizeof(*shared));
	pid = fork();
	if (!pid)
		_exit(flood_main(shared, ms, cycles) ? 1 : 0);
	if (pid > 0 && waitpid(pid, &status, 0) != pid)
		status = -1;
	*f = *shared;
	munmap(shared, sizeof(*shared));
	return status;
}

/* What a flood may take: memory it must give back */
struct mem {
	long avail;	/* MemAvailable, kB */
	long unrecl;	/* SUnreclaim: kmalloc, where a generation lives */
	long percpu;	/* Percpu: where a generation's counters live */
};

static void mem_read(struct mem *m)
{
	m->avail = meminfo_kb("MemAvailable");
	m->unrecl = meminfo_kb("SUnreclaim");
	m->percpu = meminfo_kb("Percpu");
}

/* Caches dropped, RCU callbacks given time: memory as it settles */
static void mem_settle(struct mem *m)
{
	vm_drop_caches();
	sleep_ms(1000);
	mem_read(m);
}

TEST_F_TIMEOUT(unload, unprivileged_flood, 240)
{
	const char *ko = getenv("ZCDEV_KO");
	struct mem before, after;
	long leak_kb, tol_kb, pcpu_leak_kb, pcpu_tol_kb, cpus;
	struct flood f;
	unsigned int i;
	int status, err;

	if (geteuid())
		SKIP(return, "unloading needs root");
	ASSERT_TRUE(ko && *ko) TH_LOG("%s", NO_KO);
	if (!module_loaded())
		ASSERT_EQ(0, load_module(ko, "")) TH_LOG("load %s", ko);

	/* a short flood first: caches and percpu chunks grown once */
	status = flood_run(&f, 500, 0);
	ASSERT_EQ(0, status) TH_LOG("warm-up: %s: %s", f.what,
				    strerror(f.err));
	mem_settle(&before);
	ASSERT_LE(0, before.avail);
	ASSERT_LE(0, before.unrecl);
	ASSERT_LE(0, before.percpu);

	status = flood_run(&f, scaled(FLOOD_MS, FLOOD_MIN_MS), FLOOD_CYCLES);
	ASSERT_EQ(0, status) TH_LOG("%s: %s", f.what, strerror(f.err));
	ASSERT_LT(0, f.ms);
	TH_LOG("as uid %d: %lu cycles in %lld ms, %llu a second", NOBODY,
	       f.cycles, f.ms, f.cycles * 1000ULL / f.ms);

	/*
	 * The bounds: a quarter of what a leak would show, of 64 bytes of
	 * kmalloc a cycle, or of one percpu counter (8 bytes on each CPU).
	 */
	cpus = sysconf(_SC_NPROCESSORS_CONF);
	ASSERT_LT(0, cpus);
	leak_kb = f.cycles * 64 / 1024;
	tol_kb = leak_kb / 4;
	pcpu_leak_kb = f.cycles * 8 * cpus / 1024;
	pcpu_tol_kb = pcpu_leak_kb / 4;
	for (i = 0; i < SETTLE_TRIES; i++) {
		mem_settle(&after);
		if (f.cycles < FLOOD_CYCLES ||
		    (before.avail - after.avail <= tol_kb &&
		     after.unrecl - before.unrecl <= tol_kb &&
		     after.percpu - before.percpu <= pcpu_tol_kb))
			break;
	}
	TH_LOG("kB before, after %u settles: MemAvailable %ld, %ld; SUnreclaim %ld, %ld",
	       i < SETTLE_TRIES ? i + 1 : i, before.avail, after.avail,
	       before.unrecl, after.unrecl);
	TH_LOG("  a leak of 64 bytes a cycle: %ld kB, bound %ld", leak_kb,
	       tol_kb);
	TH_LOG("  Percpu %ld, %ld; 8 bytes a cycle on %ld CPUs: %ld kB, bound %ld",
	       before.percpu, after.percpu, cpus, pcpu_leak_kb, pcpu_tol_kb);
	/*
	 * Fewer cycles than FLOOD_CYCLES (a kernel with KASAN and lockdep
	 * under emulation runs a few dozen a second) and a leak could not
	 * stand out of the noise: the memory is not judged then, kmemleak
	 * judges it on such a kernel.
	 */
	if (f.cycles < FLOOD_CYCLES) {
		TH_LOG("  %lu cycles, fewer than %u: memory not judged",
		       f.cycles, FLOOD_CYCLES);
	} else {
		EXPECT_GE(tol_kb, before.avail - after.avail);
		EXPECT_GE(tol_kb, after.unrecl - before.unrecl);
		EXPECT_GE(pcpu_tol_kb, after.percpu - before.percpu);
	}

	/* nothing pins it now: it goes within seconds, and comes back */
	err = unload_module(5000);
	ASSERT_EQ(0, err) TH_LOG("unload after the flood: %s",
				 strerror(err));
	ASSERT_EQ(0, load_module(ko, "")) TH_LOG("reload %s", ko);
}

TEST_HARNESS_MAIN
