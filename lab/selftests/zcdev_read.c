// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev's selftests, reads and writes: zczero and zcfull read as an
 * endless run of zeros exactly as zero(4) and full(4) do, whatever the
 * size, alignment, destination memory, fault, signal or RWF_NOWAIT, and
 * take writes as their stock twins do.  Reads run through every read
 * path (read_path=auto|stosb|kernel) and read_chunk at its minimum,
 * default and maximum: variants of their own.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
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
#include <sys/time.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>

/* The harness has a signal handler that ignores an argument */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#include "zcdev_fixture.h"

/*
 * The read paths and chunk sizes, through every read test: rep stosb
 * and the kernel's clear_user(), and the chunk at its bounds (one page,
 * 64 MiB).  The default (auto, 1 MiB) is the plain zczero variant.
 */
FIXTURE_VARIANT_ADD(zcdev, zczero_stosb) { ZCZERO_DEV, .read_path = "stosb" };
FIXTURE_VARIANT_ADD(zcdev, zczero_kernel) { ZCZERO_DEV, .read_path = "kernel" };
FIXTURE_VARIANT_ADD(zcdev, zcfull_kernel) { ZCFULL_DEV, .read_path = "kernel" };
FIXTURE_VARIANT_ADD(zcdev, zczero_chunk_min) { ZCZERO_DEV, .read_chunk = "4096" };
FIXTURE_VARIANT_ADD(zcdev, zczero_chunk_max) { ZCZERO_DEV, .read_chunk = "67108864" };
FIXTURE_VARIANT_ADD(zcdev, zczero_kernel_chunk_min) {
	ZCZERO_DEV, .read_path = "kernel", .read_chunk = "4096"
};

/* n bytes of FILL, which every one of the nr iovecs points at */
static unsigned char *iov_same(struct iovec *iov, unsigned int nr, size_t n)
{
	unsigned char *buf = map_anon(n);
	unsigned int i;

	if (buf)
		memset(buf, FILL, n);
	for (i = 0; i < nr; i++) {
		iov[i].iov_base = buf;
		iov[i].iov_len = n;
	}
	return buf;
}

TEST_F(zcdev, node)
{
	struct stat st, fst;

	if (self->skip)
		return;
	ASSERT_EQ(0, stat(variant->path, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0666U, st.st_mode & 07777);
	/* zcdev's own region, the node udev or devtmpfs made for its class */
	if (!variant->is_stock) {
		EXPECT_EQ(chrdev_major(MODNAME), (long)major(st.st_rdev))
			TH_LOG("major %u, not zcdev's in /proc/devices",
			       major(st.st_rdev));
		EXPECT_EQ((long long)st.st_rdev, class_devt(variant->path))
			TH_LOG("%s is not /sys/class/zcdev's device", variant->path);
	}
	/* the node is the device we opened */
	ASSERT_EQ(0, fstat(self->fd, &fst));
	EXPECT_EQ(st.st_rdev, fst.st_rdev);
}

/*
 * The largest read of read_sizes: 64 chunks of the default 1 MiB, or
 * 1/ZCDEV_SCALE of it and no fewer than 4 (MIB + 3 spans two already).
 */
#define BIG_READ	(64 * MIB)

static size_t big_read(void)
{
	return scaled(BIG_READ, 4 * MIB);
}

TEST_F_TIMEOUT(zcdev, read_sizes, 240)
{
	static const size_t sizes[] = {
		0, 1, 4095, 4096, 4097, MIB + 3, BIG_READ,
	};
	static const size_t offs[] = { 0, 1, 7, 4095 };
	unsigned int s, o;
	enum rd_method m;
	struct gbuf b;
	ssize_t ret;
	size_t n;

	if (self->skip)
		return;
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		n = sizes[s] == BIG_READ ? big_read() : sizes[s];
		for (o = 0; o < ARRAY_SIZE(offs); o++) {
			/* the largest: two methods at two offsets are enough */
			if (n > 2 * MIB && o > 1)
				break;
			ASSERT_EQ(0, gbuf_init(&b, n, offs[o]));
			for (m = 0; m < RD_NR; m++) {
				if (n > 2 * MIB && (m & 1) != o)
					continue;
				gbuf_refill(&b);
				errno = 0;
				ret = rd(self->fd, m, b.p, n);
				if (m == RD_NOWAIT && variant->is_stock &&
				    variant->is_full && ret < 0 &&
				    errno == EOPNOTSUPP)
					continue;
				if (m == RD_NOWAIT && n > page_size()) {
					/* may stop early, not before a page */
					EXPECT_LE((ssize_t)page_size(), ret)
						TH_LOG("%s of %zu: %s",
						       rd_name[m], n,
						       strerror(errno));
					EXPECT_GE((ssize_t)n, ret);
				} else {
					EXPECT_EQ((ssize_t)n, ret)
						TH_LOG("%s of %zu at offset %zu: %s",
						       rd_name[m], n, offs[o],
						       strerror(errno));
				}
				if (ret < 0)
					ret = 0;
				EXPECT_EQ(-1, gbuf_bad(&b, ret))
					TH_LOG("%s of %zu at offset %zu: bad byte",
					       rd_name[m], n, offs[o]);
			}
			gbuf_free(&b);
		}
	}
}

/* Vectors of assorted lengths and alignments, empty ones among them */
TEST_F_TIMEOUT(zcdev, readv_many, 120)
{
	static const struct {
		size_t len, off;
	} seg[] = {
		{ 1, 3 }, { 0, 0 }, { 4097, 1 }, { 4096, 0 }, { 0, 5 },
		{ MIB + 3, 7 }, { 100, 4000 },
	};
	struct gbuf b[ARRAY_SIZE(seg)];
	struct iovec iov[ARRAY_SIZE(seg)];
	size_t total = 0, pg = page_size();
	unsigned char *m;
	unsigned int i, k;
	ssize_t ret;
	long bad;

	if (self->skip)
		return;
	for (i = 0; i < ARRAY_SIZE(seg); i++) {
		ASSERT_EQ(0, gbuf_init(&b[i], seg[i].len, seg[i].off));
		iov[i].iov_base = b[i].p;
		iov[i].iov_len = seg[i].len;
		total += seg[i].len;
	}
	for (k = 0; k < 3; k++) {
		for (i = 0; i < ARRAY_SIZE(seg); i++)
			gbuf_refill(&b[i]);
		if (k == 0)
			ret = readv(self->fd, iov, ARRAY_SIZE(iov));
		else if (k == 1)
			ret = preadv(self->fd, iov, ARRAY_SIZE(iov), 12345);
		else
			ret = preadv2(self->fd, iov, ARRAY_SIZE(iov), -1, 0);
		EXPECT_EQ((ssize_t)total, ret) TH_LOG("call %u: %s", k,
						      strerror(errno));
		for (i = 0; i < ARRAY_SIZE(seg); i++)
			EXPECT_EQ(-1, gbuf_bad(&b[i], seg[i].len))
				TH_LOG("call %u, iovec %u", k, i);
	}
	for (i = 0; i < ARRAY_SIZE(seg); i++)
		gbuf_free(&b[i]);

	/*
	 * IOV_MAX vectors of 3 bytes, 5 bytes apart, across page boundaries:
	 * the 2 bytes between them must keep FILL.
	 */
	{
		struct iovec *v = calloc(IOV_MAX + 1, sizeof(*v));
		size_t span = 5 * IOV_MAX, j;

		ASSERT_NE(NULL, v);
		m = map_anon(span + 2 * pg);
		ASSERT_NE(NULL, m);
		memset(m, FILL, span + 2 * pg);
		for (i = 0; i < IOV_MAX; i++) {
			v[i].iov_base = m + pg - 2 + 5 * i;
			v[i].iov_len = 3;
		}
		EXPECT_EQ(3 * IOV_MAX, readv(self->fd, v, IOV_MAX));
		bad = 0;
		for (j = 0; j < span + 2 * pg; j++) {
			size_t at = j - (pg - 2);
			bool in = j >= pg - 2 && at < span && at % 5 < 3;

			bad += m[j] != (in ? 0 : FILL);
		}
		EXPECT_EQ(0, bad);
		/* one vector too many */
		EXPECT_EQ(-1, readv(self->fd, v, IOV_MAX + 1));
		EXPECT_EQ(EINVAL, errno);
		munmap(m, span + 2 * pg);
		free(v);
	}
}

/* Destinations of different kinds of memory */
TEST_F_TIMEOUT(zcdev, read_dest_kinds, 120)
{
	size_t pg = page_size(), n = 64 * pg;
	unsigned char *m, *fillbuf;
	int mfd;

	if (self->skip)
		return;
	/* untouched anonymous memory: the kernel faults it in */
	m = map_anon(n);
	ASSERT_NE(NULL, m);
	EXPECT_EQ((ssize_t)n, read(self->fd, m, n));
	EXPECT_EQ(-1, not_byte(m, n, 0));
	munmap(m, n);

	/* memory read before, so mapping the zero page: copy-on-write */
	m = map_anon(n);
	ASSERT_NE(NULL, m);
	EXPECT_EQ(-1, not_byte(m, n, 0));
	EXPECT_EQ((ssize_t)(n - 3), read(self->fd, m + 3, n - 3));
	EXPECT_EQ(-1, not_byte(m, n, 0));
	munmap(m, n);

	/* a shared mapping of a tmpfs file full of FILL: the file changes */
	mfd = tmpfs_file();
	ASSERT_LE(0, mfd);
	fillbuf = malloc(n);
	ASSERT_NE(NULL, fillbuf);
	memset(fillbuf, FILL, n);
	ASSERT_EQ((ssize_t)n, pwrite(mfd, fillbuf, n, 0));
	m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_EQ((ssize_t)(n - 2 * pg - 1),
		  read(self->fd, m + pg + 1, n - 2 * pg - 1));
	munmap(m, n);
	ASSERT_EQ((ssize_t)n, pread(mfd, fillbuf, n, 0));
	EXPECT_EQ(-1, not_byte(fillbuf, pg + 1, FILL));
	EXPECT_EQ(-1, not_byte(fillbuf + pg + 1, n - 2 * pg - 1, 0));
	EXPECT_EQ(-1, not_byte(fillbuf + n - pg, pg, FILL));
	free(fillbuf);
	close(mfd);

	/* a private mapping of the device itself, where it can map */
	m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd, 0);
	if (m != MAP_FAILED) {
		memset(m, FILL, n);
		EXPECT_EQ((ssize_t)(n - 7), read(self->fd, m + 7, n - 7));
		EXPECT_EQ(-1, not_byte(m, 7, FILL));
		EXPECT_EQ(-1, not_byte(m + 7, n - 7, 0));
		munmap(m, n);
	}
}

/*
 * Odd accesses, given pages m..m+2 of which the third is inaccessible, and
 * a hole: as the stock twin answers them
 */
static struct outcome fault_odd(unsigned int i, int fd, unsigned char *m,
				void *hole)
{
	unsigned char *none = m + 2 * page_size();

	errno = 0;
	switch (i) {
	case 0:
		return outcome(read(fd, none, 0));
	case 1:
		return outcome(read(fd, hole, 0));
	case 2:
		/* the libc wrapper would object to the size */
		return outcome(syscall(SYS_read, fd, m, SIZE_MAX));
	case 3:
		return outcome(write(fd, none, 100));
	case 4:
		return outcome(write(fd, hole, 100));
	}
	return outcome(-2);
}

TEST_F_TIMEOUT(zcdev, fault_partial, 120)
{
	static const size_t offs[] = { 0, 8, 1, 7, 4000, 4095, 4097 };
	static const enum rd_method meths[] = {
		RD_READ, RD_PREAD, RD_READV, RD_PREADV2,
	};
	size_t pg = page_size(), off, want, j, got;
	unsigned int o, k, inexact = 0, changed = 0;
	unsigned char *m;
	char first[128];
	ssize_t ret;
	void *hole;
	bool exact;

	if (self->skip)
		return;
	/* pages 0 and 1 read-write, page 2 inaccessible, page 3 guard */
	m = map_anon(4 * pg);
	ASSERT_NE(NULL, m);
	hole = hole_addr();
	ASSERT_NE(NULL, hole);

	for (o = 0; o < ARRAY_SIZE(offs); o++) {
		for (k = 0; k < ARRAY_SIZE(meths); k++) {
			off = offs[o];
			want = 2 * pg - off;
			ASSERT_EQ(0, mprotect(m + 2 * pg, pg,
					      PROT_READ | PROT_WRITE));
			memset(m, FILL, 4 * pg);
			ASSERT_EQ(0, mprotect(m + 2 * pg, pg, PROT_NONE));

			ret = rd(self->fd, meths[k], m + off, want + pg);
			if (variant->is_stock) {
				/*
				 * The stock clear_user() may stop a word
				 * short of the fault; zcdev must not.
				 */
				EXPECT_GE((ssize_t)want, ret);
				EXPECT_LT((ssize_t)want - 64, ret);
			} else {
				EXPECT_EQ((ssize_t)want, ret)
					TH_LOG("%s at offset %zu: %s",
					       rd_name[meths[k]], off,
					       strerror(errno));
			}
			if (ret < 0)
				ret = 0;
			ASSERT_EQ(0, mprotect(m + 2 * pg, pg,
					      PROT_READ | PROT_WRITE));
			/* zeros exactly where the return says, FILL elsewhere */
			EXPECT_EQ(-1, not_byte(m, off, FILL));
			EXPECT_EQ(-1, not_byte(m + off, ret, 0))
				TH_LOG("%s at offset %zu", rd_name[meths[k]],
				       off);
			j = off + ret;
			EXPECT_EQ(-1, not_byte(m + j, 4 * pg - j, FILL))
				TH_LOG("%s at offset %zu: byte %ld changed",
				       rd_name[meths[k]], off,
				       (long)j + not_byte(m + j, 4 * pg - j,
							   FILL));
		}
	}

	/*
	 * Small reads ending in the inaccessible page, at every alignment.
	 * The kernel's clear_user() may use 8-byte stores there (Linux 6.1
	 * without FSRM does), and then misses the last bytes before the
	 * fault, or fails with EFAULT; zcdev must not.
	 */
	ASSERT_EQ(0, mprotect(m + 2 * pg, pg, PROT_READ | PROT_WRITE));
	memset(m, FILL, 4 * pg);
	ASSERT_EQ(0, mprotect(m + 2 * pg, pg, PROT_NONE));
	for (o = 1; o <= 64; o++) {
		for (k = 0; k < ARRAY_SIZE(meths); k++) {
			/* page 2 cannot change: pages 0 and 1 filled again */
			off = 2 * pg - o;
			memset(m, FILL, 2 * pg);
			errno = 0;
			ret = rd(self->fd, meths[k], m + off, o + 40);
			got = ret < 0 ? 0 : ret < (ssize_t)o ? (size_t)ret : o;
			if (variant->is_stock)
				exact = ret <= (ssize_t)o && got + 8 > o &&
					(ret >= 0 || errno == EFAULT);
			else
				exact = ret == (ssize_t)o;
			if (!exact && !inexact++)
				snprintf(first, sizeof(first),
					 "%s ending %u bytes before: %zd (%s)",
					 rd_name[meths[k]], o, ret,
					 strerror(errno));
			changed += not_byte(m, off, FILL) >= 0 ||
				   not_byte(m + off, got, 0) >= 0 ||
				   not_byte(m + off + got, o - got, FILL) >= 0;
		}
	}
	EXPECT_EQ(0U, inexact)
		TH_LOG("%u reads stopped short, first %s", inexact, first);
	EXPECT_EQ(0U, changed);
	ASSERT_EQ(0, mprotect(m + 2 * pg, pg, PROT_READ | PROT_WRITE));
	EXPECT_EQ(-1, not_byte(m + 2 * pg, 2 * pg, FILL));

	/* starting in the inaccessible page, or at nothing at all */
	memset(m, FILL, 4 * pg);
	ASSERT_EQ(0, mprotect(m + 2 * pg, pg, PROT_NONE));
	for (k = 0; k < ARRAY_SIZE(meths); k++) {
		errno = 0;
		EXPECT_EQ(-1, rd(self->fd, meths[k], m + 2 * pg + 10, 100));
		EXPECT_EQ(EFAULT, errno) TH_LOG("%s", rd_name[meths[k]]);
		errno = 0;
		EXPECT_EQ(-1, rd(self->fd, meths[k], hole, 3 * pg));
		EXPECT_EQ(EFAULT, errno) TH_LOG("%s", rd_name[meths[k]]);
	}

	/* a readv whose second vector faults returns the first */
	{
		struct iovec iov[3] = {
			{ m + 1, 5000 }, { hole, 100 }, { m + 6000, 10 },
		};

		EXPECT_EQ(5000, readv(self->fd, iov, 3));
		iov[1].iov_base = m + 2 * pg;
		EXPECT_EQ(5000, preadv2(self->fd, iov, 3, -1, 0));
		iov[0].iov_base = hole;
		errno = 0;
		EXPECT_EQ(-1, readv(self->fd, iov, 3));
		EXPECT_EQ(EFAULT, errno);
	}
	ASSERT_EQ(0, mprotect(m + 2 * pg, pg, PROT_READ | PROT_WRITE));
	EXPECT_EQ(-1, not_byte(m, 1, FILL));
	EXPECT_EQ(-1, not_byte(m + 1, 5000, 0));
	EXPECT_EQ(-1, not_byte(m + 5001, 4 * pg - 5001, FILL));

	/* what the VFS decides alone must not differ from the stock device */
	ASSERT_EQ(0, mprotect(m + 2 * pg, pg, PROT_NONE));
	for (k = 0; k < 5; k++) {
		struct outcome st = fault_odd(k, self->ref, m, hole);
		struct outcome dv = fault_odd(k, self->fd, m, hole);

		EXPECT_EQ(st.ret, dv.ret) TH_LOG("case %u", k);
		EXPECT_EQ(st.err, dv.err) TH_LOG("case %u: %s, not %s", k,
						 strerror(dv.err),
						 strerror(st.err));
	}
	munmap(m, 4 * pg);
}

/*
 * A read that a signal can cut short: zcdev checks for signals between
 * chunks of read_chunk bytes, so it must span two of them (4 MiB at the
 * least, as for the stock device, which checks every page).
 */
static size_t read_size_to_cut(bool is_stock)
{
	char val[32];
	size_t chunk;

	if (is_stock || param_get("read_chunk", val, sizeof(val)))
		return 4 * MIB;
	chunk = strtoul(val, NULL, 0);
	return chunk > 2 * MIB ? 2 * chunk : 4 * MIB;
}

/*
 * Vectors of 2 GiB in all over a buffer of n bytes, a power of two: a
 * read of gigabytes that faults in and fills no more than n bytes.
 */
#define GIB2	((size_t)2048 * MIB)

static unsigned char *iov_2g(struct iovec *iov, unsigned int *nr, size_t n)
{
	*nr = GIB2 / n < IOV_MAX ? GIB2 / n : IOV_MAX;
	return iov_same(iov, *nr, n);
}

/* How long a loop of reads waits for a signal to cut one short */
#define CUT_WAIT_MS	10000

/* One long read: true when a signal cut it short, as it must be. */
static bool cut_short(struct __test_metadata *_metadata, const char *what,
		      ssize_t ret, int err, size_t want)
{
	if (ret < 0) {
		EXPECT_EQ(EINTR, err) TH_LOG("%s: %s", what, strerror(err));
		return true;
	}
	if ((size_t)ret < want) {
		EXPECT_LT(0, ret);
		return true;
	}
	EXPECT_EQ((ssize_t)want, ret);
	return false;
}

/*
 * A read of gigabytes is interrupted by a signal whose handler does not ask
 * for restarts: it returns early, with a short count or EINTR.
 */
TEST_F_TIMEOUT(zcdev, read_interrupted, 240)
{
	struct sigaction sa = { .sa_handler = on_sigusr1 };
	struct pinger pg = { .period_ms = 50 };
	size_t n = read_size_to_cut(variant->is_stock), want;
	struct iovec iov[IOV_MAX];
	long long until;
	bool interrupted;
	unsigned int i, nr;
	unsigned char *buf;
	ssize_t ret = 0;

	if (self->skip)
		return;
	buf = iov_2g(iov, &nr, n);
	ASSERT_NE(NULL, buf);
	/* 2 GiB asked for: the kernel caps it at MAX_RW_COUNT */
	want = max_rw();

	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	pg.target = pthread_self();
	ASSERT_EQ(0, pthread_create(&pg.thread, NULL, pinger_main, &pg));

	/* readv: a signal lands in one read at the latest */
	interrupted = false;
	for (i = 0; i < 40 && !interrupted; i++) {
		memset(buf, FILL, n);
		errno = 0;
		ret = readv(self->fd, iov, nr);
		interrupted = cut_short(_metadata, "readv", ret, errno, want);
	}
	EXPECT_TRUE(interrupted) TH_LOG("readv never interrupted");
	/* every vector is the same buffer */
	if (ret < 0)
		ret = 0;
	EXPECT_EQ(-1, not_byte(buf, (size_t)ret < n ? (size_t)ret : n, 0));
	EXPECT_EQ(-1, not_byte(buf + ret, (size_t)ret < n ? n - ret : 0,
			       FILL));

	/*
	 * read: two chunks at a time, one cut short when a signal comes, on
	 * the slowest guest as on a CPU that reads them in a millisecond.
	 */
	memset(buf, FILL, n);
	interrupted = false;
	until = now_ms() + CUT_WAIT_MS;
	while (!interrupted && now_ms() < until) {
		errno = 0;
		ret = read(self->fd, buf, n);
		interrupted = cut_short(_metadata, "read", ret, errno, n);
	}
	EXPECT_TRUE(interrupted) TH_LOG("read never interrupted");
	EXPECT_EQ(-1, not_byte(buf, ret > 0 ? ret : 0, 0));

	__atomic_store_n(&pg.stop, 1, __ATOMIC_RELEASE);
	pthread_join(pg.thread, NULL);
	EXPECT_LT(0, __atomic_load_n(&sigusr1_count, __ATOMIC_RELAXED));
	munmap(buf, n);
}

/*
 * A volley of numbered signals at one thread: a queued real-time signal
 * every period_ms until told to stop, its number in si_value and the time
 * it was about to be sent in sent_ns[].  The handler, which runs only on
 * the target thread, notes the first number it sees while armed.
 */
#define VOLLEY_MAX	65536

struct volley {
	pthread_t thread;
	pthread_t target;
	unsigned int period_ms;
	int stop;
	int sent;			/* numbers handed out */
	long long sent_ns[VOLLEY_MAX];
};

static int volley_armed;
static int volley_first = -1;

static void on_volley(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (__atomic_load_n(&volley_armed, __ATOMIC_RELAXED) &&
	    __atomic_load_n(&volley_first, __ATOMIC_RELAXED) < 0)
		__atomic_store_n(&volley_first, si->si_value.sival_int,
				 __ATOMIC_RELAXED);
}

static void *volley_main(void *arg)
{
	struct volley *v = arg;
	union sigval val;
	int n;

	while (!__atomic_load_n(&v->stop, __ATOMIC_ACQUIRE)) {
		n = __atomic_load_n(&v->sent, __ATOMIC_RELAXED);
		if (n == VOLLEY_MAX)
			break;
		v->sent_ns[n] = now_ns();
		__atomic_store_n(&v->sent, n + 1, __ATOMIC_RELEASE);
		val.sival_int = n;
		pthread_sigqueue(v->target, SIGRTMIN, val);
		sleep_ms(v->period_ms);
	}
	return NULL;
}

/*
 * A signal ends a long read within one chunk, whatever read_chunk is:
 * a readv() of 2 GiB, with signals coming all along, must return short
 * (or EINTR) well within the seconds a chunk of 64 MiB could take on the
 * slowest guest.  This is a bound on liveness, not on speed: a read that
 * ignored signals would clear all 2 GiB first.
 *
 * One signal a few milliseconds after the reader's thread was started
 * is not enough on a loaded host: it may come before readv() has begun,
 * be handled then, and leave the read nothing to notice.  So a thread
 * sends a numbered signal every 10 ms for as long as the reads go on, and
 * the handler names the first one it saw during a read (they are queued
 * and handled in order, when readv() returns): the bound runs from when
 * that one was sent.  A signal handled before readv() began is not seen,
 * as the handler is armed just before the call (but for the few
 * instructions between the two); one that came after the read's last
 * check may leave it whole, which is no failure, only no evidence: the
 * read is tried again, up to 20 times, and one of them must be cut short.
 */
#define SIGNAL_BOUND_NS	(5 * 1000000000LL)
#define SIGNAL_TRIES	20

TEST_F_TIMEOUT(zcdev, signal_returns_soon, 240)
{
	struct sigaction sa = { .sa_sigaction = on_volley,
				.sa_flags = SA_SIGINFO };
	size_t n = read_size_to_cut(variant->is_stock), want = max_rw();
	struct volley *v;
	struct iovec iov[IOV_MAX];
	long long took, worst = -1, done_ns;
	unsigned char *buf;
	unsigned int i, nr, cut = 0;
	ssize_t ret;
	int err, first;

	if (self->skip)
		return;
	buf = iov_2g(iov, &nr, n);
	ASSERT_NE(NULL, buf);
	v = calloc(1, sizeof(*v));
	ASSERT_NE(NULL, v);
	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(0, sigaction(SIGRTMIN, &sa, NULL));
	v->target = pthread_self();
	v->period_ms = 10;
	ASSERT_EQ(0, pthread_create(&v->thread, NULL, volley_main, v));
	for (i = 0; i < SIGNAL_TRIES && !cut; i++) {
		__atomic_store_n(&volley_first, -1, __ATOMIC_RELAXED);
		__atomic_store_n(&volley_armed, 1, __ATOMIC_SEQ_CST);
		errno = 0;
		ret = readv(self->fd, iov, nr);
		err = errno;
		done_ns = now_ns();
		__atomic_store_n(&volley_armed, 0, __ATOMIC_SEQ_CST);
		first = __atomic_load_n(&volley_first, __ATOMIC_RELAXED);
		if (first < 0) {	/* no signal during it: all of it */
			EXPECT_EQ((ssize_t)want, ret)
				TH_LOG("readv: %zd (%s) with no signal in it",
				       ret, strerror(err));
			continue;
		}
		took = done_ns - v->sent_ns[first];
		if (ret == (ssize_t)want)	/* after its last check */
			continue;
		EXPECT_TRUE(ret > 0 ? (size_t)ret < want : err == EINTR)
			TH_LOG("readv: %zd (%s) with a signal in it", ret,
			       strerror(err));
		EXPECT_LT(took, SIGNAL_BOUND_NS)
			TH_LOG("readv returned %.3f s after signal %d",
			       took / 1e9, first);
		if (took > worst)
			worst = took;
		cut++;
	}
	__atomic_store_n(&v->stop, 1, __ATOMIC_RELEASE);
	pthread_join(v->thread, NULL);
	ASSERT_LT(0U, cut) TH_LOG("no read of %u was cut short by a signal",
				  i);
	TH_LOG("cut short %.3f s after the first signal in it, %u tries",
	       worst / 1e9, i);
	free(v);
	munmap(buf, n);
}

TEST_F_TIMEOUT(zcdev, nowait, 120)
{
	size_t pg = page_size();
	struct gbuf b;
	struct iovec iov;
	ssize_t ret;
	int fd, err;

	if (self->skip)
		return;
	ASSERT_EQ(0, gbuf_init(&b, MIB, 1));
	iov.iov_base = b.p;
	iov.iov_len = pg;
	errno = 0;
	ret = preadv2(self->fd, &iov, 1, -1, RWF_NOWAIT);
	if (variant->is_stock && variant->is_full && ret < 0) {
		/* the stock /dev/full does not do RWF_NOWAIT */
		EXPECT_EQ(EOPNOTSUPP, errno);
	} else {
		EXPECT_EQ((ssize_t)pg, ret) TH_LOG("RWF_NOWAIT read: %s",
						   strerror(errno));
		EXPECT_EQ(-1, gbuf_bad(&b, pg));
	}

	/* and writes */
	errno = 0;
	ret = pwritev2(self->fd, &iov, 1, -1, RWF_NOWAIT);
	err = errno;
	if (variant->is_full) {
		/* the stock /dev/full does not do RWF_NOWAIT */
		EXPECT_EQ(-1, ret);
		EXPECT_TRUE(err == ENOSPC ||
			    (variant->is_stock && err == EOPNOTSUPP))
			TH_LOG("RWF_NOWAIT write: %s", strerror(err));
	} else {
		EXPECT_EQ((ssize_t)pg, ret) TH_LOG("RWF_NOWAIT write: %s",
						   strerror(err));
	}

	/* O_NONBLOCK changes nothing */
	fd = open(variant->path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, fd);
	gbuf_refill(&b);
	EXPECT_EQ((ssize_t)pg, read(fd, b.p, pg));
	EXPECT_EQ(-1, gbuf_bad(&b, pg));
	gbuf_refill(&b);
	EXPECT_EQ((ssize_t)MIB, read(fd, b.p, MIB));
	EXPECT_EQ(-1, gbuf_bad(&b, MIB));
	errno = 0;
	ret = write(fd, b.p, 100);
	if (variant->is_full) {
		EXPECT_EQ(-1, ret);
		EXPECT_EQ(ENOSPC, errno);
	} else {
		EXPECT_EQ(100, ret);
	}
	close(fd);
	gbuf_free(&b);
}

/* A thread that keeps its CPU busy until told to stop */
static void *spin_main(void *arg)
{
	int *stop = arg;

	while (!__atomic_load_n(stop, __ATOMIC_RELAXED))
		;
	return NULL;
}

/*
 * A long read beside a task that wants its CPU: where the kernel does
 * not preempt a task in a system call (preempt=none or voluntary, as
 * Debian's 6.1 and 6.12 boot; 7.x has full and lazy preemption only),
 * the read sees that it should reschedule.  An RWF_NOWAIT read then
 * returns what it has cleared, as the stock device does, and any other
 * read reschedules and goes on; where the task is preempted instead,
 * both read to their end.  Either way: more than nothing, no more than
 * asked, zeros.  The task is a thread spinning on the reader's CPU;
 * each read is of 64 MiB, some ten ticks under TCG (and one chunk with
 * read_chunk=64 MiB, which no check splits).
 */
#define BUSY_IOVS	16

TEST_F_TIMEOUT(zcdev, read_busy_cpu, 120)
{
	size_t n = 4 * MIB, want = BUSY_IOVS * n, got;
	struct iovec iov[BUSY_IOVS];
	cpu_set_t one, all;
	unsigned char *buf;
	const char *how = "not done (EOPNOTSUPP)";
	pthread_t spinner;
	int stop = 0, i, cpu;
	ssize_t ret;

	if (self->skip)
		return;
	buf = iov_same(iov, BUSY_IOVS, n);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	cpu = sched_getcpu();
	ASSERT_LE(0, cpu) TH_LOG("sched_getcpu: %s", strerror(errno));
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	/* it inherits the one CPU */
	ASSERT_EQ(0, pthread_create(&spinner, NULL, spin_main, &stop));

	for (i = 0; i < 2; i++) {
		memset(buf, FILL, n);
		errno = 0;
		ret = preadv2(self->fd, iov, BUSY_IOVS, -1, i ? RWF_NOWAIT : 0);
		if (ret < 0 && errno == EOPNOTSUPP && variant->is_stock &&
		    variant->is_full)
			continue;	/* the stock /dev/full: no RWF_NOWAIT */
		if (i) {
			EXPECT_LT(0, ret) TH_LOG("RWF_NOWAIT: %s",
						 strerror(errno));
			EXPECT_GE((ssize_t)want, ret);
			how = ret < (ssize_t)want ? "returned early" :
						    "read to its end";
		} else {
			EXPECT_EQ((ssize_t)want, ret) TH_LOG("%s",
							     strerror(errno));
		}
		got = ret > 0 ? (size_t)ret : 0;
		EXPECT_EQ(-1, not_byte(buf, got < n ? got : n, 0));
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(spinner, NULL);
	EXPECT_EQ(0, sched_setaffinity(0, sizeof(all), &all));
	TH_LOG("RWF_NOWAIT beside a busy task: %s", how);
	munmap(buf, n);
}

/* The zero-length and odd writes, as the stock twin answers them */
static struct outcome write_odd(unsigned int i, int fd, void *buf,
				void *hole)
{
	struct iovec z[2] = { { buf, 0 }, { NULL, 0 } };
	struct iovec bad = { hole, 10 };

	errno = 0;
	switch (i) {
	case 0:
		return outcome(write(fd, buf, 0));
	case 1:
		return outcome(write(fd, NULL, 0));
	case 2:
		return outcome(writev(fd, z, 2));
	case 3:
		return outcome(writev(fd, z, 0));
	case 4:
		return outcome(pwrite(fd, buf, 0, 0));
	case 5:
		return outcome(pwritev2(fd, z, 1, -1, 0));
	case 6:
		return outcome(write(fd, hole, 10));
	case 7:
		return outcome(writev(fd, &bad, 1));
	case 8:
		return outcome(pwrite(fd, buf, 10, -1));
	case 9:
		return outcome(pwrite(fd, buf, 10, LLONG_MAX));
	}
	return outcome(-2);
}

TEST_F_TIMEOUT(zcdev, write, 120)
{
	static const size_t sizes[] = { 1, 4097, MIB + 3 };
	struct iovec iov[3], *many;
	unsigned int s, k;
	unsigned char *buf;
	ssize_t ret;
	void *hole;
	size_t n;

	if (self->skip)
		return;
	buf = map_anon(MIB + 3);
	ASSERT_NE(NULL, buf);
	memset(buf, 0x3c, MIB + 3);
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		n = sizes[s];
		iov[0].iov_base = buf;
		iov[0].iov_len = n / 2;
		iov[1].iov_base = NULL;
		iov[1].iov_len = 0;
		iov[2].iov_base = buf + n / 2;
		iov[2].iov_len = n - n / 2;
		for (k = 0; k < 5; k++) {
			errno = 0;
			if (k == 0)
				ret = write(self->fd, buf, n);
			else if (k == 1)
				ret = pwrite(self->fd, buf, n, 1234);
			else if (k == 2)
				ret = writev(self->fd, iov, 3);
			else if (k == 3)
				ret = pwritev(self->fd, iov, 3, 0);
			else
				ret = pwritev2(self->fd, iov, 3, -1, 0);
			if (variant->is_full) {
				EXPECT_EQ(-1, ret);
				EXPECT_EQ(ENOSPC, errno) TH_LOG("call %u", k);
			} else {
				EXPECT_EQ((ssize_t)n, ret)
					TH_LOG("call %u of %zu: %s", k, n,
					       strerror(errno));
			}
		}
	}
	/* the data are not touched */
	EXPECT_EQ(-1, not_byte(buf, MIB + 3, 0x3c));

	/* a gigabyte in one writev, from a read-only buffer */
	ASSERT_EQ(0, mprotect(buf, MIB, PROT_READ));
	many = calloc(IOV_MAX, sizeof(*many));
	ASSERT_NE(NULL, many);
	for (k = 0; k < IOV_MAX; k++) {
		many[k].iov_base = buf;
		many[k].iov_len = MIB;
	}
	errno = 0;
	ret = writev(self->fd, many, IOV_MAX);
	if (variant->is_full) {
		EXPECT_EQ(-1, ret);
		EXPECT_EQ(ENOSPC, errno);
	} else {
		EXPECT_EQ((ssize_t)(IOV_MAX * MIB), ret);
	}
	free(many);

	/* the corner cases answer as the stock device does */
	hole = hole_addr();
	ASSERT_NE(NULL, hole);
	for (k = 0; k < 10; k++) {
		struct outcome st = write_odd(k, self->ref, buf, hole);
		struct outcome dv = write_odd(k, self->fd, buf, hole);

		EXPECT_EQ(st.ret, dv.ret) TH_LOG("case %u: %s", k,
						 strerror(dv.err));
		EXPECT_EQ(st.err, dv.err) TH_LOG("case %u: %s, not %s", k,
						 strerror(dv.err),
						 strerror(st.err));
	}
	munmap(buf, MIB + 3);
}

TEST_F(zcdev, lseek)
{
	static const struct {
		off_t off;
		int whence;
	} seeks[] = {
		{ 123, SEEK_SET }, { 0, SEEK_CUR }, { 5, SEEK_CUR },
		{ -5, SEEK_CUR }, { 0, SEEK_END }, { -100, SEEK_END },
		{ 100, SEEK_END }, { -1, SEEK_SET }, { LLONG_MAX, SEEK_SET },
		{ LLONG_MIN, SEEK_CUR }, { 0, SEEK_DATA }, { 10, SEEK_HOLE },
		{ 0, 99 },
	};
	unsigned char buf[4097];
	unsigned int i;

	if (self->skip)
		return;
	for (i = 0; i < ARRAY_SIZE(seeks); i++) {
		struct outcome st, dv;

		errno = 0;
		st = outcome(lseek(self->ref, seeks[i].off, seeks[i].whence));
		dv = outcome(lseek(self->fd, seeks[i].off, seeks[i].whence));
		/* SEEK_SET, SEEK_CUR and SEEK_END always give 0 */
		EXPECT_TRUE(seeks[i].whence > SEEK_END || !dv.ret)
			TH_LOG("lseek(%lld, %d): %ld, %s",
			       (long long)seeks[i].off, seeks[i].whence,
			       dv.ret, strerror(dv.err));
		EXPECT_EQ(st.ret, dv.ret) TH_LOG("seek %u", i);
		EXPECT_EQ(st.err, dv.err) TH_LOG("seek %u", i);
	}
	/* reads and writes move the position as on the stock device */
	ASSERT_EQ(0, lseek(self->fd, 0, SEEK_SET));
	ASSERT_EQ(0, lseek(self->ref, 0, SEEK_SET));
	EXPECT_EQ(4097, read(self->fd, buf, sizeof(buf)));
	EXPECT_EQ(4097, read(self->ref, buf, sizeof(buf)));
	EXPECT_EQ(fdinfo_pos(self->ref), fdinfo_pos(self->fd));
	EXPECT_EQ(0, lseek(self->fd, 0, SEEK_CUR));
	EXPECT_EQ(write(self->ref, buf, 10), write(self->fd, buf, 10));
	EXPECT_EQ(fdinfo_pos(self->ref), fdinfo_pos(self->fd));
	EXPECT_EQ(0, lseek(self->fd, 0, SEEK_CUR));
	errno = 0;
	EXPECT_EQ(pread(self->ref, buf, 10, -1), pread(self->fd, buf, 10, -1));
	EXPECT_EQ(EINVAL, errno);
}

/* ioctl and poll outcomes, as the stock device answers them */
static struct outcome misc_op(unsigned int i, int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLOUT };
	int v = 0, r;

	errno = 0;
	switch (i) {
	case 0:
		return outcome(ioctl(fd, FIONREAD, &v));
	case 1:
		return outcome(ioctl(fd, _IO('z', 0x42), 0));
	case 2:
		return outcome(ioctl(fd, _IOR('z', 0x43, int), &v));
	case 3:
		v = 1;
		return outcome(ioctl(fd, FIONBIO, &v));
	case 4:
		v = 0;
		return outcome(ioctl(fd, FIONBIO, &v));
	case 5:
		r = poll(&pfd, 1, 0);
		return outcome(r < 0 ? r : pfd.revents);
	}
	return outcome(-2);
}

TEST_F(zcdev, no_poll_no_ioctl)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT };
	unsigned int i;
	int ep;

	if (self->skip)
		return;
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	errno = 0;
	EXPECT_EQ(-1, epoll_ctl(ep, EPOLL_CTL_ADD, self->fd, &ev));
	EXPECT_EQ(EPERM, errno);
	close(ep);
	errno = 0;
	EXPECT_EQ(-1, ioctl(self->fd, _IO('z', 0x42), 0));
	EXPECT_EQ(ENOTTY, errno);
	for (i = 0; i < 6; i++) {
		struct outcome st = misc_op(i, self->ref);
		struct outcome dv = misc_op(i, self->fd);

		EXPECT_EQ(st.ret, dv.ret) TH_LOG("case %u", i);
		EXPECT_EQ(st.err, dv.err) TH_LOG("case %u: %s, not %s", i,
						 strerror(dv.err),
						 strerror(st.err));
	}
}

/* --- the parameters ----------------------------------------------------- */

FIXTURE(param) {
	char saved[32];		/* read_path before the test */
	int kmsg;		/* /dev/kmsg, read from its end */
	bool skip;
};

FIXTURE_SETUP(param)
{
	int err = param_get("read_path", self->saved, sizeof(self->saved));

	self->kmsg = -1;
	ASSERT_EQ(0, err) TH_LOG("%sread_path: %s%s", PARAM_DIR,
				 strerror(err), err == ENOENT ?
				 ": zcdev is not loaded" : "");
	if (geteuid()) {
		self->skip = true;
		SKIP(return, "writing a module parameter needs root");
	}
	self->kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, self->kmsg) TH_LOG("open /dev/kmsg: %s", strerror(errno));
	lseek(self->kmsg, 0, SEEK_END);
}

FIXTURE_TEARDOWN(param)
{
	if (self->kmsg >= 0)
		close(self->kmsg);
	if (!self->skip)
		param_set("read_path", self->saved, strlen(self->saved));
}

/*
 * A value is one of the names, with at most a newline after it: junk
 * after a name is refused however long the value is, with a message,
 * and the setting stays as it was.
 */
TEST_F(param, read_path_refuses_junk)
{
	static char padded[17], longval[300];
	static const char *const bad[] = {
		"stosb          junk",	/* a name, then junk past 15 chars */
		padded,			/* and spaces past them */
		"stosb\n\n",
		"stosbstosbstosbstosb",
		"",
		longval,
	};
	char before[32], after[32];
	unsigned int i;

	if (self->skip)
		return;
	snprintf(padded, sizeof(padded), "%-15s\n", "kernel");
	memset(longval, 'a', sizeof(longval) - 1);
	memcpy(longval, "auto", 4);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		param_get("read_path", before, sizeof(before));
		EXPECT_EQ(EINVAL, param_set("read_path", bad[i],
					    strlen(bad[i]) ?: 1))
			TH_LOG("read_path='%.40s' accepted", bad[i]);
		param_get("read_path", after, sizeof(after));
		EXPECT_STREQ(before, after);
		EXPECT_TRUE(kmsg_says(self->kmsg, "zcdev: read_path: '"))
			TH_LOG("no message for read_path='%.40s'", bad[i]);
	}
}

/* The names themselves are taken, with or without a newline. */
TEST_F(param, read_path_takes_names)
{
	char now[32];

	if (self->skip)
		return;
	ASSERT_EQ(0, param_set("read_path", "kernel\n", 7));
	param_get("read_path", now, sizeof(now));
	EXPECT_STREQ("kernel", now);
	ASSERT_EQ(0, param_set("read_path", "auto", 4));
	param_get("read_path", now, sizeof(now));
	EXPECT_STREQ("auto", now);
	if (!kernel_is_x86_64())
		return;
	ASSERT_EQ(0, param_set("read_path", "stosb\n", 6));
	param_get("read_path", now, sizeof(now));
	EXPECT_STREQ("stosb", now);
}

/*
 * read_chunk takes a byte count from a page to 64 MiB, and refuses
 * anything else with a message, keeping its value.
 */
TEST_F(param, read_chunk_bounds)
{
	static const char *const bad[] = {
		"0", "4095", "67108865", "-1", "1M", "", "4096junk",
	};
	char before[32], now[32];
	unsigned int i;

	if (self->skip)
		return;
	param_get("read_chunk", before, sizeof(before));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(EINVAL, param_set("read_chunk", bad[i],
					    strlen(bad[i]) ?: 1))
			TH_LOG("read_chunk='%s' accepted", bad[i]);
		param_get("read_chunk", now, sizeof(now));
		EXPECT_STREQ(before, now);
		EXPECT_TRUE(kmsg_says(self->kmsg, "zcdev: read_chunk: "))
			TH_LOG("no message for read_chunk='%s'", bad[i]);
	}
	EXPECT_EQ(0, param_set("read_chunk", "4096", 4));
	EXPECT_EQ(0, param_set("read_chunk", "67108864", 8));
	EXPECT_EQ(0, param_set("read_chunk", "0x100000", 8));
	param_get("read_chunk", now, sizeof(now));
	EXPECT_STREQ("1048576", now);
	param_set("read_chunk", before, strlen(before));
}

TEST_HARNESS_MAIN
