// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of zcdev's /dev/zczero and /dev/zcfull, which must behave exactly
 * like zero(4) and full(4).
 *
 * Every test of the zcdev fixture runs for both zcdev devices and, as a
 * reference that keeps the tests honest, for the stock /dev/zero and
 * /dev/full, wherever the running kernel supports the operation there
 * (Linux 6.1's stock devices cannot splice, for one).  Where the exact
 * outcome is not written down anywhere, a zcdev device is compared at run
 * time with its stock twin.  Without the module loaded the zcdev variants
 * are skipped.
 *
 * The unload test runs only as root and when ZCDEV_KO names the module
 * file: it unloads and reloads the module.
 */

#include <errno.h>
#include <fcntl.h>
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
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
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

#include <liburing.h>

/* The harness has a signal handler that ignores an argument */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define KIB		1024UL
#define MIB		(1024 * KIB)
#define FILL		0xa5	/* what buffers hold before a read */
#define MISC_MAJOR	10
#define MODNAME		"zcdev"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

static size_t page_size(void)
{
	static size_t pg;

	if (!pg)
		pg = sysconf(_SC_PAGESIZE);
	return pg;
}

/* The most one read or write moves: MAX_RW_COUNT */
static size_t max_rw(void)
{
	return INT_MAX & ~(page_size() - 1);
}

/* The index of the first byte of p[0..n) that is not c, or -1 */
static long not_byte(const void *p, size_t n, unsigned char c)
{
	const unsigned char *b = p;
	size_t i;

	/* all equal to b[0] exactly when b[0..n-1) equals b[1..n) */
	if (!n || (b[0] == c && !memcmp(b, b + 1, n - 1)))
		return -1;
	for (i = 0; i < n; i++)
		if (b[i] != c)
			return i;
	return -1;
}

static void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * A guarded buffer: len bytes at offset off into a mapping whose other
 * bytes, a whole page on either side included, hold FILL and must keep it.
 */
struct gbuf {
	unsigned char *map;
	size_t map_len;
	unsigned char *p;
	size_t len;
};

static int gbuf_init(struct gbuf *b, size_t len, size_t off)
{
	size_t pg = page_size();

	b->map_len = pg + (off + len + pg - 1) / pg * pg + pg;
	b->map = map_anon(b->map_len);
	if (!b->map)
		return -1;
	b->p = b->map + pg + off;
	b->len = len;
	memset(b->map, FILL, b->map_len);
	return 0;
}

static void gbuf_refill(struct gbuf *b)
{
	memset(b->map, FILL, b->map_len);
}

static void gbuf_free(struct gbuf *b)
{
	if (b->map)
		munmap(b->map, b->map_len);
	b->map = NULL;
}

/*
 * Check that the first n bytes of the buffer are zero and that every other
 * byte of the mapping still holds FILL: the index into the mapping of the
 * first wrong byte, or -1.
 */
static long gbuf_bad(const struct gbuf *b, size_t n)
{
	size_t head = b->p - b->map;
	long i;

	i = not_byte(b->map, head, FILL);
	if (i >= 0)
		return i;
	i = not_byte(b->p, n, 0);
	if (i >= 0)
		return head + i;
	i = not_byte(b->p + n, b->map_len - head - n, FILL);
	if (i >= 0)
		return head + n + i;
	return -1;
}

/* The outcome of a system call: what it returned and, if it failed, errno */
struct outcome {
	long ret;
	int err;
};

static struct outcome outcome(long ret)
{
	struct outcome o = { .ret = ret, .err = ret < 0 ? errno : 0 };

	return o;
}

/* An address in the canonical user range with nothing mapped at it */
static void *hole_addr(void)
{
	void *p = map_anon(4 * page_size());

	if (!p)
		return NULL;
	munmap(p, 4 * page_size());
	return p;
}

/* Read until n bytes, end of file or an error; the count, or -1 */
static ssize_t read_full(int fd, void *buf, size_t n)
{
	size_t done = 0;
	ssize_t r;

	while (done < n) {
		r = read(fd, (char *)buf + done, n - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return done ? (ssize_t)done : -1;
		if (!r)
			break;
		done += r;
	}
	return done;
}

/*
 * Read n bytes from fd (a pipe, a socket) and check them: the number of
 * bytes that were not zero, or -1 when fewer than n could be read.
 */
static long read_zeros(int fd, size_t n)
{
	size_t chunk, size = 256 * KIB;
	unsigned char *buf;
	long bad = 0, i;

	buf = malloc(size);
	if (!buf)
		return -1;
	while (n) {
		chunk = n < size ? n : size;
		memset(buf, FILL, chunk);
		if (read_full(fd, buf, chunk) != (ssize_t)chunk) {
			bad = -1;
			break;
		}
		i = not_byte(buf, chunk, 0);
		if (i >= 0)
			for (; i < (long)chunk; i++)
				bad += buf[i] != 0;
		n -= chunk;
	}
	free(buf);
	return bad;
}

static int pipe_bytes(int fd)
{
	int n = -1;

	if (ioctl(fd, FIONREAD, &n))
		return -1;
	return n;
}

/* A shmem file: a memfd, else an unlinked file in /dev/shm or /tmp */
static int tmpfs_file(void)
{
	static const char * const dirs[] = { "/dev/shm", "/tmp" };
	unsigned int i;
	int fd;

	fd = memfd_create("zcdev_test", MFD_CLOEXEC);
	if (fd >= 0)
		return fd;
	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		fd = open(dirs[i], O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

/* The file position /proc reports for fd, or -1 when it cannot tell */
static long long fdinfo_pos(int fd)
{
	char path[64], line[256];
	long long pos = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "pos: %lld", &pos) == 1)
			break;
	fclose(f);
	return pos;
}

/* 0 when fd can splice into a pipe, else the errno of the attempt */
static int splice_read_errno(int fd)
{
	int p[2], err = 0;

	if (pipe2(p, O_CLOEXEC))
		return errno;
	if (splice(fd, NULL, p[1], NULL, 1, SPLICE_F_NONBLOCK) != 1)
		err = errno ? errno : EIO;
	close(p[0]);
	close(p[1]);
	return err;
}

/* 0 when a pipe can splice into fd, else the errno of the attempt */
static int splice_write_errno(int fd)
{
	int p[2], err = 0;

	if (pipe2(p, O_CLOEXEC))
		return errno;
	if (write(p[1], "x", 1) != 1 ||
	    splice(p[0], NULL, fd, NULL, 1, SPLICE_F_NONBLOCK) != 1)
		err = errno ? errno : EIO;
	close(p[0]);
	close(p[1]);
	return err;
}

/*
 * Splice up to n bytes from in to out through the pipe p, looping over
 * short transfers: the number of bytes that reached out, or -1.
 */
static ssize_t splice_through(int in, int p[2], int out, size_t n,
			      unsigned int flags)
{
	size_t done = 0;
	ssize_t r, w;

	while (done < n) {
		r = splice(in, NULL, p[1], NULL, n - done, flags);
		if (r <= 0)
			return done ? (ssize_t)done : -1;
		while (r) {
			w = splice(p[0], NULL, out, NULL, r, flags);
			if (w <= 0)
				return -1;
			r -= w;
			done += w;
		}
	}
	return done;
}

static ssize_t sendfile_full(int out, int in, size_t n)
{
	size_t done = 0;
	ssize_t r;

	while (done < n) {
		r = sendfile(out, in, NULL, n - done);
		if (r <= 0)
			return done ? (ssize_t)done : -1;
		done += r;
	}
	return done;
}

/* Bring the loopback interface up if it is not (a bare VM) */
static void loopback_up(void)
{
	struct ifreq ifr;
	int s;

	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (!ioctl(s, SIOCGIFFLAGS, &ifr) && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
}

/*
 * A connected pair of stream sockets, TCP over 127.0.0.1 or AF_UNIX:
 * sv[0] to write, sv[1] to read.  0, or an errno.
 */
static int sock_pair(bool tcp, int sv[2])
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t alen = sizeof(a);
	int l, err;

	if (!tcp)
		return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) ?
		       errno : 0;
	loopback_up();
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		return errno;
	sv[0] = -1;
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &alen))
		goto fail;
	sv[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sv[0] < 0 || connect(sv[0], (struct sockaddr *)&a, sizeof(a)))
		goto fail;
	sv[1] = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (sv[1] < 0)
		goto fail;
	close(l);
	return 0;
fail:
	err = errno;
	if (sv[0] >= 0)
		close(sv[0]);
	close(l);
	return err;
}

/* A thread that reads a socket to its end and counts what it got */
struct sink {
	pthread_t thread;
	int fd;
	size_t total;
	size_t bad;	/* bytes that were not zero */
	int err;
};

static void *sink_main(void *arg)
{
	struct sink *s = arg;
	unsigned char *buf = malloc(64 * KIB);
	ssize_t r, i;

	if (!buf) {
		s->err = ENOMEM;
		return NULL;
	}
	for (;;) {
		r = read(s->fd, buf, 64 * KIB);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			s->err = errno;
		if (r <= 0)
			break;
		if (not_byte(buf, r, 0) >= 0)
			for (i = 0; i < r; i++)
				s->bad += buf[i] != 0;
		s->total += r;
	}
	free(buf);
	return NULL;
}

/* Sends SIGUSR1 to a thread every period_ms until told to stop */
struct pinger {
	pthread_t thread;
	pthread_t target;
	unsigned int period_ms;
	int stop;
};

static int sigusr1_count;

static void on_sigusr1(int sig)
{
	(void)sig;
	__atomic_fetch_add(&sigusr1_count, 1, __ATOMIC_RELAXED);
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void *pinger_main(void *arg)
{
	struct pinger *pg = arg;

	while (!__atomic_load_n(&pg->stop, __ATOMIC_ACQUIRE)) {
		sleep_ms(pg->period_ms);
		if (__atomic_load_n(&pg->stop, __ATOMIC_ACQUIRE))
			break;
		pthread_kill(pg->target, SIGUSR1);
	}
	return NULL;
}

/* How the read tests read */
enum rd_method { RD_READ, RD_PREAD, RD_READV, RD_PREADV2, RD_NOWAIT, RD_NR };

static const char * const rd_name[RD_NR] = {
	"read", "pread", "readv", "preadv2", "preadv2(RWF_NOWAIT)",
};

/*
 * Read n bytes to p with the given method; the vectored ones split the
 * buffer into two iovecs with an empty one between them.
 */
static ssize_t rd(int fd, enum rd_method m, void *p, size_t n)
{
	struct iovec iov[3] = {
		{ p, n / 3 },
		{ NULL, 0 },
		{ (char *)p + n / 3, n - n / 3 },
	};

	switch (m) {
	case RD_READ:
		return read(fd, p, n);
	case RD_PREAD:
		return pread(fd, p, n, 4097);
	case RD_READV:
		return readv(fd, iov, 3);
	case RD_PREADV2:
		return preadv2(fd, iov, 3, -1, 0);
	case RD_NOWAIT:
		return preadv2(fd, iov, 3, 0, RWF_NOWAIT);
	default:
		break;
	}
	errno = EINVAL;
	return -1;
}

FIXTURE(zcdev) {
	int fd;		/* the device under test, read-write */
	int ref;	/* its stock twin, /dev/zero or /dev/full */
	bool skip;	/* the device is absent: every test returns at once */
};

FIXTURE_VARIANT(zcdev) {
	const char *path;
	const char *stock;	/* the stock device it must behave like */
	bool is_full;
	bool is_stock;
};

FIXTURE_VARIANT_ADD(zcdev, zczero) {
	.path = "/dev/zczero",
	.stock = "/dev/zero",
};

FIXTURE_VARIANT_ADD(zcdev, zcfull) {
	.path = "/dev/zcfull",
	.stock = "/dev/full",
	.is_full = true,
};

FIXTURE_VARIANT_ADD(zcdev, zero) {
	.path = "/dev/zero",
	.stock = "/dev/zero",
	.is_stock = true,
};

FIXTURE_VARIANT_ADD(zcdev, full) {
	.path = "/dev/full",
	.stock = "/dev/full",
	.is_full = true,
	.is_stock = true,
};

FIXTURE_SETUP(zcdev)
{
	self->ref = -1;
	self->fd = open(variant->path, O_RDWR | O_CLOEXEC);
	if (self->fd < 0 && errno == ENOENT) {
		/*
		 * Older harnesses run the test after a SKIP() here: the
		 * tests return at once when they see self->skip.
		 */
		self->skip = true;
		SKIP(return, "%s is absent%s", variant->path,
		     variant->is_stock ? "" : ": zcdev is not loaded");
	}
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", variant->path,
				      strerror(errno));
	self->ref = open(variant->stock, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->ref) TH_LOG("open %s: %s", variant->stock,
				       strerror(errno));
}

FIXTURE_TEARDOWN(zcdev)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->ref >= 0)
		close(self->ref);
}

/* Only a stock device may lack splice_read (Linux 6.1 has none) */
static bool stock_cannot_splice_read(int fd, bool is_stock)
{
	return is_stock && splice_read_errno(fd) == EINVAL;
}

TEST_F(zcdev, node)
{
	struct stat st, fst;

	if (self->skip)
		return;
	ASSERT_EQ(0, stat(variant->path, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0666U, st.st_mode & 07777);
	EXPECT_TRUE(variant->is_stock || major(st.st_rdev) == MISC_MAJOR)
		TH_LOG("major %u, not misc", major(st.st_rdev));
	/* the node is the device we opened */
	ASSERT_EQ(0, fstat(self->fd, &fst));
	EXPECT_EQ(st.st_rdev, fst.st_rdev);
}

TEST_F_TIMEOUT(zcdev, read_sizes, 240)
{
	static const size_t sizes[] = {
		0, 1, 4095, 4096, 4097, MIB + 3, 64 * MIB,
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
		n = sizes[s];
		for (o = 0; o < ARRAY_SIZE(offs); o++) {
			/* 64 MiB: two methods at two offsets are enough */
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
	for (o = 1; o <= 64; o++) {
		for (k = 0; k < ARRAY_SIZE(meths); k++) {
			off = 2 * pg - o;
			ASSERT_EQ(0, mprotect(m + 2 * pg, pg,
					      PROT_READ | PROT_WRITE));
			memset(m, FILL, 4 * pg);
			ASSERT_EQ(0, mprotect(m + 2 * pg, pg, PROT_NONE));
			errno = 0;
			ret = rd(self->fd, meths[k], m + off, o + 40);
			got = ret < 0 ? 0 : ret < (ssize_t)o ? ret : o;
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
	size_t n = 64 * MIB, want;
	struct iovec iov[32];
	bool interrupted;
	unsigned int i;
	unsigned char *buf;
	ssize_t ret = 0;

	if (self->skip)
		return;
	buf = map_anon(n);
	ASSERT_NE(NULL, buf);
	memset(buf, FILL, n);
	for (i = 0; i < ARRAY_SIZE(iov); i++) {
		iov[i].iov_base = buf;
		iov[i].iov_len = n;
	}
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
		ret = readv(self->fd, iov, ARRAY_SIZE(iov));
		interrupted = cut_short(_metadata, "readv", ret, errno, want);
	}
	EXPECT_TRUE(interrupted) TH_LOG("readv never interrupted");
	/* every vector is the same buffer */
	if (ret < 0)
		ret = 0;
	EXPECT_EQ(-1, not_byte(buf, (size_t)ret < n ? (size_t)ret : n, 0));
	EXPECT_EQ(-1, not_byte(buf + ret, (size_t)ret < n ? n - ret : 0,
			       FILL));

	/* read: 64 MiB at a time, each cut short when a signal comes */
	memset(buf, FILL, n);
	interrupted = false;
	for (i = 0; i < 400 && !interrupted; i++) {
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

/* What io_uring_setup() says when io_uring cannot be used at all */
static int uring_unavailable(void)
{
	struct io_uring_params p;

	/* no entries: EINVAL wherever io_uring works */
	memset(&p, 0, sizeof(p));
	if (syscall(__NR_io_uring_setup, 0, &p) < 0 && errno != EINVAL)
		return errno;
	return 0;
}

enum uring_op { UR_READ, UR_READV, UR_ASYNC, UR_FIXED, UR_WRITE, UR_NR };

/* One request on its own: the completion's result, or -errno */
static int uring_one(struct io_uring *ring, enum uring_op op, int fd,
		     struct gbuf *b, size_t n)
{
	struct iovec iov[3] = {
		{ b->p, n / 2 }, { NULL, 0 }, { b->p + n / 2, n - n / 2 },
	};
	struct iovec whole = { b->map, b->map_len };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret;

	if (op == UR_FIXED) {
		ret = io_uring_register_buffers(ring, &whole, 1);
		if (ret)
			return ret;
	}
	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		return -EBUSY;
	switch (op) {
	case UR_READV:
		io_uring_prep_readv(sqe, fd, iov, 3, 0);
		break;
	case UR_FIXED:
		io_uring_prep_read_fixed(sqe, fd, b->p, n, 0, 0);
		break;
	case UR_WRITE:
		io_uring_prep_write(sqe, fd, b->p, n, 0);
		break;
	default:
		io_uring_prep_read(sqe, fd, b->p, n, 0);
		if (op == UR_ASYNC)
			sqe->flags |= IOSQE_ASYNC;
		break;
	}
	ret = io_uring_submit(ring);
	if (ret == 1)
		ret = io_uring_wait_cqe(ring, &cqe);
	else if (ret >= 0)
		ret = -EIO;
	if (!ret) {
		ret = cqe->res;
		io_uring_cqe_seen(ring, cqe);
	}
	if (op == UR_FIXED)
		io_uring_unregister_buffers(ring);
	return ret;
}

/* Reads to plain, vectored and registered buffers; and writes */
TEST_F_TIMEOUT(zcdev, io_uring, 120)
{
	static const size_t sizes[] = { 1, 4097, MIB + 3 };
	static const char * const name[UR_NR] = {
		"read", "readv", "read(IOSQE_ASYNC)", "read_fixed", "write",
	};
	size_t n, pg = page_size();
	struct io_uring ring;
	enum uring_op op;
	unsigned int s, o;
	struct gbuf b;
	int ret;

	if (self->skip)
		return;
	ret = uring_unavailable();
	if (ret)
		SKIP(return, "io_uring unavailable: %s", strerror(ret));
	ret = io_uring_queue_init(8, &ring, 0);
	ASSERT_EQ(0, ret) TH_LOG("io_uring_queue_init: %s", strerror(-ret));

	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		for (o = 0; o < 2; o++) {
			n = sizes[s];
			ASSERT_EQ(0, gbuf_init(&b, n, o * 7));
			for (op = 0; op < UR_NR; op++) {
				gbuf_refill(&b);
				ret = uring_one(&ring, op, self->fd, &b, n);
				if (op == UR_WRITE) {
					EXPECT_EQ(variant->is_full ? -ENOSPC :
						  (int)n, ret);
					continue;
				}
				/*
				 * A non-blocking attempt may stop short when
				 * the task should reschedule, and io_uring
				 * does not retry a character device
				 */
				EXPECT_LE((int)(n < pg ? n : pg), ret)
					TH_LOG("%s of %zu: %s", name[op], n,
					       ret < 0 ? strerror(-ret) :
					       "short");
				EXPECT_GE((int)n, ret);
				EXPECT_EQ(-1, gbuf_bad(&b, ret > 0 ? ret : 0))
					TH_LOG("%s of %zu", name[op], n);
			}
			gbuf_free(&b);
		}
	}
	io_uring_queue_exit(&ring);
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

TEST_F(zcdev, splice_sizes)
{
	static const size_t sizes[] = {
		1, 4095, 4096, 4097, 3 * 4096 + 5, 65536,
	};
	unsigned int i, k;
	int p[2];
	loff_t off;

	if (self->skip)
		return;
	if (stock_cannot_splice_read(self->fd, variant->is_stock))
		SKIP(return, "%s cannot splice on this kernel", variant->path);
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		EXPECT_EQ((ssize_t)sizes[i], splice(self->fd, NULL, p[1], NULL,
						    sizes[i], 0))
			TH_LOG("splice of %zu: %s", sizes[i], strerror(errno));
		EXPECT_EQ((int)sizes[i], pipe_bytes(p[0]));
		EXPECT_EQ(0, read_zeros(p[0], sizes[i]));
		EXPECT_EQ(0, pipe_bytes(p[0]));
	}
	/* ten 1-byte splices, then read back at once */
	for (k = 0; k < 10; k++)
		EXPECT_EQ(1, splice(self->fd, NULL, p[1], NULL, 1, 0));
	EXPECT_EQ(10, pipe_bytes(p[0]));
	EXPECT_EQ(0, read_zeros(p[0], 10));
	/* nothing asked, nothing given */
	EXPECT_EQ(0, splice(self->fd, NULL, p[1], NULL, 0, 0));
	EXPECT_EQ(0, pipe_bytes(p[0]));

	/* with an input offset: as the stock device does it */
	if (!splice_read_errno(self->ref)) {
		struct outcome st, dv;
		loff_t soff = 1000;

		off = 1000;
		errno = 0;
		st = outcome(splice(self->ref, &soff, p[1], NULL, 4097, 0));
		EXPECT_EQ(0, read_zeros(p[0], pipe_bytes(p[0])));
		dv = outcome(splice(self->fd, &off, p[1], NULL, 4097, 0));
		EXPECT_EQ(st.ret, dv.ret);
		EXPECT_EQ(st.err, dv.err);
		EXPECT_EQ(soff, off);
		EXPECT_EQ(0, read_zeros(p[0], pipe_bytes(p[0])));
	}
	close(p[0]);
	close(p[1]);
}

/* Splice a pipe full: 1 MiB asked for, the pipe's size given */
static long fill_pipe(int fd, int p[2], int *err)
{
	long total = 0;
	ssize_t r;
	int i;

	*err = 0;
	for (i = 0; i < 4096; i++) {
		r = splice(fd, NULL, p[1], NULL, MIB, SPLICE_F_NONBLOCK);
		if (r <= 0) {
			*err = r < 0 ? errno : 0;
			break;
		}
		total += r;
	}
	return total;
}

TEST_F_TIMEOUT(zcdev, splice_fill_pipe, 120)
{
	int p[2], size, err;
	long total;

	if (self->skip)
		return;
	if (stock_cannot_splice_read(self->fd, variant->is_stock))
		SKIP(return, "%s cannot splice on this kernel", variant->path);
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	size = fcntl(p[1], F_GETPIPE_SZ);
	ASSERT_LT(0, size);
	EXPECT_EQ(65536, size);
	total = fill_pipe(self->fd, p, &err);
	EXPECT_EQ(size, total);
	EXPECT_EQ(EAGAIN, err);
	/* a pipe made non-blocking refuses a full pipe as well */
	ASSERT_EQ(0, fcntl(p[1], F_SETFL, O_NONBLOCK));
	errno = 0;
	EXPECT_EQ(-1, splice(self->fd, NULL, p[1], NULL, 1, 0));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(0, read_zeros(p[0], size));
	EXPECT_EQ(0, pipe_bytes(p[0]));

	/* a 1 MiB pipe, where the system allows one */
	size = fcntl(p[1], F_SETPIPE_SZ, MIB);
	if (size < 0 && errno == EPERM) {
		close(p[0]);
		close(p[1]);
		SKIP(return, "F_SETPIPE_SZ of 1 MiB not allowed");
	}
	ASSERT_LE((int)MIB, size);
	total = fill_pipe(self->fd, p, &err);
	EXPECT_EQ(size, total);
	EXPECT_EQ(EAGAIN, err);
	EXPECT_EQ(0, read_zeros(p[0], size));
	EXPECT_EQ(0, pipe_bytes(p[0]));
	close(p[0]);
	close(p[1]);
}

TEST_F_TIMEOUT(zcdev, splice_tee_vmsplice, 120)
{
	size_t n = 3 * 4096 + 5;
	int p1[2], p2[2];
	struct iovec iov;
	struct gbuf b;

	if (self->skip)
		return;
	if (stock_cannot_splice_read(self->fd, variant->is_stock))
		SKIP(return, "%s cannot splice on this kernel", variant->path);
	ASSERT_EQ(0, pipe2(p1, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(p2, O_CLOEXEC));

	/* tee copies the buffers; both pipes read back zeros */
	ASSERT_EQ((ssize_t)n, splice(self->fd, NULL, p1[1], NULL, n, 0));
	EXPECT_EQ((ssize_t)n, tee(p1[0], p2[1], n, 0));
	EXPECT_EQ((int)n, pipe_bytes(p2[0]));
	EXPECT_EQ(0, read_zeros(p2[0], n));
	EXPECT_EQ((int)n, pipe_bytes(p1[0]));
	EXPECT_EQ(0, read_zeros(p1[0], n));
	/* a partial tee */
	ASSERT_EQ((ssize_t)n, splice(self->fd, NULL, p1[1], NULL, n, 0));
	EXPECT_EQ(100, tee(p1[0], p2[1], 100, 0));
	EXPECT_EQ(0, read_zeros(p2[0], 100));
	EXPECT_EQ(0, read_zeros(p1[0], n));

	/* vmsplice on the read end copies the buffers out */
	ASSERT_EQ(0, gbuf_init(&b, n, 3));
	ASSERT_EQ((ssize_t)n, splice(self->fd, NULL, p1[1], NULL, n, 0));
	iov.iov_base = b.p;
	iov.iov_len = n;
	EXPECT_EQ((ssize_t)n, vmsplice(p1[0], &iov, 1, 0));
	EXPECT_EQ(-1, gbuf_bad(&b, n));
	EXPECT_EQ(0, pipe_bytes(p1[0]));
	/* a pipe-to-pipe splice moves them */
	ASSERT_EQ((ssize_t)n, splice(self->fd, NULL, p1[1], NULL, n, 0));
	EXPECT_EQ(4097, splice(p1[0], NULL, p2[1], NULL, 4097, 0));
	EXPECT_EQ((ssize_t)(n - 4097), splice(p1[0], NULL, p2[1], NULL, n, 0));
	EXPECT_EQ(0, read_zeros(p2[0], n));
	gbuf_free(&b);
	close(p1[0]);
	close(p1[1]);
	close(p2[0]);
	close(p2[1]);
}

TEST_F_TIMEOUT(zcdev, splice_to_file, 120)
{
	size_t n = 5 * 4096 + 7, flen = 64 * KIB;
	unsigned char *fb;
	unsigned int k;
	int p[2], f;
	loff_t off;

	if (self->skip)
		return;
	if (stock_cannot_splice_read(self->fd, variant->is_stock))
		SKIP(return, "%s cannot splice on this kernel", variant->path);
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	f = tmpfs_file();
	ASSERT_LE(0, f);
	fb = malloc(flen);
	ASSERT_NE(NULL, fb);
	for (k = 0; k < 3; k++) {
		/* a file full of FILL, so that zeros are not holes */
		memset(fb, FILL, flen);
		ASSERT_EQ((ssize_t)flen, pwrite(f, fb, flen, 0));
		if (k < 2) {
			ASSERT_EQ((ssize_t)n, splice(self->fd, NULL, p[1],
						     NULL, n, 0));
			off = 7;
			EXPECT_EQ((ssize_t)n,
				  splice(p[0], NULL, f, &off, n,
					 k ? SPLICE_F_MOVE : 0));
			EXPECT_EQ((loff_t)(7 + n), off);
		} else {
			ASSERT_EQ(7, lseek(f, 7, SEEK_SET));
			EXPECT_EQ((ssize_t)n, sendfile_full(f, self->fd, n));
		}
		ASSERT_EQ((ssize_t)flen, pread(f, fb, flen, 0));
		EXPECT_EQ(-1, not_byte(fb, 7, FILL)) TH_LOG("way %u", k);
		EXPECT_EQ(-1, not_byte(fb + 7, n, 0)) TH_LOG("way %u", k);
		EXPECT_EQ(-1, not_byte(fb + 7 + n, flen - 7 - n, FILL))
			TH_LOG("way %u", k);
	}
	free(fb);
	close(f);
	close(p[0]);
	close(p[1]);
}

TEST_F_TIMEOUT(zcdev, splice_to_socket, 120)
{
	size_t n = 256 * KIB + 5, m = 128 * KIB + 3;
	struct sink sk;
	int p[2], sv[2], err;
	unsigned int tcp;

	if (self->skip)
		return;
	if (stock_cannot_splice_read(self->fd, variant->is_stock))
		SKIP(return, "%s cannot splice on this kernel", variant->path);
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	for (tcp = 0; tcp < 2; tcp++) {
		err = sock_pair(tcp, sv);
		if (err && tcp)
			SKIP(break, "no TCP over 127.0.0.1: %s", strerror(err));
		ASSERT_EQ(0, err);
		memset(&sk, 0, sizeof(sk));
		sk.fd = sv[1];
		ASSERT_EQ(0, pthread_create(&sk.thread, NULL, sink_main, &sk));
		EXPECT_EQ((ssize_t)n, splice_through(self->fd, p, sv[0], n, 0))
			TH_LOG("%s: %s", tcp ? "tcp" : "unix", strerror(errno));
		EXPECT_EQ((ssize_t)m, sendfile_full(sv[0], self->fd, m))
			TH_LOG("%s: %s", tcp ? "tcp" : "unix", strerror(errno));
		shutdown(sv[0], SHUT_WR);
		pthread_join(sk.thread, NULL);
		EXPECT_EQ(0, sk.err);
		EXPECT_EQ(n + m, sk.total);
		EXPECT_EQ(0UL, sk.bad);
		close(sv[0]);
		close(sv[1]);
	}
	close(p[0]);
	close(p[1]);
}

/* Is every page a fresh mapping reads the zero page through still zero? */
static long zero_page_bad(const char *path)
{
	size_t n = 16 * page_size();
	unsigned char *m;
	long bad;
	int fd;

	m = mmap(NULL, n, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -2;
	bad = not_byte(m, n, 0);
	munmap(m, n);
	if (bad >= 0 || !path)
		return bad;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;	/* no such device: nothing to check */
	m = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -2;
	bad = not_byte(m, n, 0);
	munmap(m, n);
	return bad;
}

/*
 * Whatever is done with spliced buffers, no byte is ever written into the
 * page they share (the zero page, for zcdev).
 */
TEST_F_TIMEOUT(zcdev, zero_page_stays_zero, 120)
{
	unsigned char ff[200], back[4096 + 300];
	size_t pg = page_size(), n;
	int p[2], p2[2], f, dn;
	unsigned char *m;
	struct iovec iov;
	struct gbuf b;
	ssize_t r;

	if (self->skip)
		return;
	if (stock_cannot_splice_read(self->fd, variant->is_stock))
		SKIP(return, "%s cannot splice on this kernel", variant->path);
	memset(ff, 0xff, sizeof(ff));
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(p2, O_CLOEXEC));
	f = tmpfs_file();
	ASSERT_LE(0, f);
	dn = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, dn);

	/* a write after a partly filled spliced page must not merge in it */
	ASSERT_EQ(4097, splice(self->fd, NULL, p[1], NULL, 4097, 0));
	ASSERT_EQ(100, write(p[1], ff, 100));
	memset(back, FILL, sizeof(back));
	EXPECT_EQ(4197, read_full(p[0], back, 4197));
	EXPECT_EQ(-1, not_byte(back, 4097, 0));
	EXPECT_EQ(-1, not_byte(back + 4097, 100, 0xff));
	EXPECT_EQ(-1, zero_page_bad(NULL));

	/* the same after the buffers went on to another pipe */
	ASSERT_EQ(10, splice(self->fd, NULL, p[1], NULL, 10, 0));
	ASSERT_EQ(10, splice(p[0], NULL, p2[1], NULL, 10, 0));
	ASSERT_EQ(100, write(p2[1], ff, 100));
	ASSERT_EQ(3, splice(self->fd, NULL, p[1], NULL, 3, 0));
	ASSERT_EQ(3, tee(p[0], p2[1], 3, 0));
	ASSERT_EQ(50, write(p2[1], ff, 50));
	ASSERT_EQ(50, write(p[1], ff, 50));
	memset(back, FILL, sizeof(back));
	EXPECT_EQ(163, read_full(p2[0], back, 163));
	EXPECT_EQ(-1, not_byte(back, 10, 0));
	EXPECT_EQ(-1, not_byte(back + 10, 100, 0xff));
	EXPECT_EQ(-1, not_byte(back + 110, 3, 0));
	EXPECT_EQ(-1, not_byte(back + 113, 50, 0xff));
	EXPECT_EQ(53, read_full(p[0], back, 53));
	EXPECT_EQ(-1, not_byte(back, 3, 0));
	EXPECT_EQ(-1, not_byte(back + 3, 50, 0xff));
	EXPECT_EQ(-1, zero_page_bad(NULL));

	/* SPLICE_F_MOVE into a tmpfs file, then the file is written */
	ASSERT_EQ(8192, splice(self->fd, NULL, p[1], NULL, 8192, 0));
	ASSERT_EQ(50, write(p[1], ff, 50));
	EXPECT_EQ(8242, splice(p[0], NULL, f, NULL, 8242, SPLICE_F_MOVE));
	ASSERT_EQ(200, pwrite(f, ff, 200, 4000));
	memset(back, FILL, sizeof(back));
	ASSERT_EQ(4396, pread(f, back, 4396, 0));
	EXPECT_EQ(-1, not_byte(back, 4000, 0));
	EXPECT_EQ(-1, not_byte(back + 4000, 200, 0xff));
	EXPECT_EQ(-1, not_byte(back + 4200, 196, 0));
	/* and into /dev/null */
	ASSERT_EQ(8192, splice(self->fd, NULL, p[1], NULL, 8192, 0));
	EXPECT_EQ(8192, splice(p[0], NULL, dn, NULL, 8192, SPLICE_F_MOVE));
	EXPECT_EQ(0, pipe_bytes(p[0]));
	EXPECT_EQ(-1, zero_page_bad(NULL));

	/*
	 * Gift pages that map the zero page (read-faulted anonymous memory,
	 * or a private mapping of the device) and move them on.
	 */
	n = 4 * pg;
	m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd, 0);
	if (m == MAP_FAILED)
		m = map_anon(n);
	ASSERT_NE(NULL, m);
	EXPECT_EQ(-1, not_byte(m, n, 0));
	iov.iov_base = m;
	iov.iov_len = n;
	r = vmsplice(p[1], &iov, 1, SPLICE_F_GIFT);
	EXPECT_EQ((ssize_t)n, r);
	ASSERT_EQ(100, write(p[1], ff, 100));
	ASSERT_EQ(0, ftruncate(f, 0));
	ASSERT_EQ(0, lseek(f, 0, SEEK_SET));
	EXPECT_EQ((ssize_t)(n + 100), splice(p[0], NULL, f, NULL, n + 100,
					     SPLICE_F_MOVE));
	ASSERT_EQ(200, pwrite(f, ff, 200, 10));
	ASSERT_EQ(0, gbuf_init(&b, n + 100, 0));
	EXPECT_EQ((ssize_t)(n + 100), pread(f, b.p, n + 100, 0));
	EXPECT_EQ(-1, not_byte(b.p, 10, 0));
	EXPECT_EQ(-1, not_byte(b.p + 10, 200, 0xff));
	EXPECT_EQ(-1, not_byte(b.p + 210, n - 210, 0));
	EXPECT_EQ(-1, not_byte(b.p + n, 100, 0xff));
	gbuf_free(&b);
	/* the gifted memory is still ours, and writable privately */
	memset(m, 0x77, pg);
	EXPECT_EQ(-1, not_byte(m + pg, n - pg, 0));
	munmap(m, n);

	/* the device, the stock /dev/zero and the zero page read zeros */
	ASSERT_EQ(0, gbuf_init(&b, MIB, 0));
	EXPECT_EQ((ssize_t)MIB, read(self->fd, b.p, MIB));
	EXPECT_EQ(-1, gbuf_bad(&b, MIB));
	close(f);
	f = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, f);
	gbuf_refill(&b);
	EXPECT_EQ((ssize_t)MIB, read(f, b.p, MIB));
	EXPECT_EQ(-1, gbuf_bad(&b, MIB));
	close(f);
	gbuf_free(&b);
	EXPECT_EQ(-1, zero_page_bad("/dev/zczero"));
	EXPECT_EQ(-1, zero_page_bad("/dev/zero"));
	close(dn);
	close(p[0]);
	close(p[1]);
	close(p2[0]);
	close(p2[1]);
}

/* Splicing from a pipe into the device */
TEST_F(zcdev, splice_into)
{
	unsigned char pat[4096], back[4096];
	unsigned int i;
	int p[2], err;

	if (self->skip)
		return;
	err = splice_write_errno(self->fd);
	if (variant->is_stock && err == EINVAL)
		SKIP(return, "%s cannot be spliced to on this kernel",
		     variant->path);
	for (i = 0; i < sizeof(pat); i++)
		pat[i] = i * 7 + 1;
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(4096, write(p[1], pat, 4096));
	if (variant->is_full) {
		/* fails, and the data stay in the pipe */
		errno = 0;
		EXPECT_EQ(-1, splice(p[0], NULL, self->fd, NULL, 4096, 0));
		EXPECT_EQ(ENOSPC, errno);
		EXPECT_EQ(4096, pipe_bytes(p[0]));
		errno = 0;
		EXPECT_EQ(-1, splice(p[0], NULL, self->fd, NULL, 100, 0));
		EXPECT_EQ(ENOSPC, errno);
		EXPECT_EQ(4096, read_full(p[0], back, 4096));
		EXPECT_EQ(0, memcmp(pat, back, 4096));
		goto out;
	}
	/* consumed whole */
	EXPECT_EQ(4096, splice(p[0], NULL, self->fd, NULL, 4096, 0));
	EXPECT_EQ(0, pipe_bytes(p[0]));
	/* in part: the rest stays readable */
	ASSERT_EQ(4096, write(p[1], pat, 4096));
	EXPECT_EQ(100, splice(p[0], NULL, self->fd, NULL, 100, 0));
	EXPECT_EQ(3996, pipe_bytes(p[0]));
	EXPECT_EQ(3996, read_full(p[0], back, 3996));
	EXPECT_EQ(0, memcmp(pat + 100, back, 3996));
	/* spliced buffers and written data together; more asked than there */
	if (!splice_read_errno(self->fd)) {
		ASSERT_EQ(8192, splice(self->fd, NULL, p[1], NULL, 8192, 0));
		ASSERT_EQ(4096, write(p[1], pat, 4096));
		EXPECT_EQ(12288, splice(p[0], NULL, self->fd, NULL, MIB, 0));
		EXPECT_EQ(0, pipe_bytes(p[0]));
	}
	/* an empty pipe: EAGAIN when not blocking, 0 once no writer is left */
	errno = 0;
	EXPECT_EQ(-1, splice(p[0], NULL, self->fd, NULL, 4096,
			     SPLICE_F_NONBLOCK));
	EXPECT_EQ(EAGAIN, errno);
	close(p[1]);
	p[1] = -1;
	EXPECT_EQ(0, splice(p[0], NULL, self->fd, NULL, 4096, 0));
out:
	close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
}

/*
 * Map fd shared at offset off and touch the mapping, in a child: 0 when
 * that went well, 1 when it read wrong, 1000 + the signal that killed it
 * (SIGBUS, where the object ends before the offset), or -1
 */
static int touch_shared_at(int fd, off_t off)
{
	size_t n = 2 * page_size();
	unsigned char *a;
	int status;
	pid_t pid;

	a = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	if (a == MAP_FAILED)
		return -1;
	pid = fork();
	if (!pid) {
		struct rlimit no_core = { 0, 0 };

		setrlimit(RLIMIT_CORE, &no_core);
		a[0] = 1;
		_exit(a[n - 1] == 0 && a[0] == 1 ? 0 : 1);
	}
	munmap(a, n);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 1000 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(zcdev, mmap)
{
	size_t pg = page_size(), n = 4 * pg;
	unsigned char *a, *b;
	int status, i;
	pid_t pid;

	if (self->skip)
		return;
	if (variant->is_full) {
		/* /dev/full cannot be mapped: neither can zcfull */
		static const int flags[] = { MAP_PRIVATE, MAP_SHARED };

		for (i = 0; i < 2; i++) {
			struct outcome st, dv;
			void *r;

			errno = 0;
			r = mmap(NULL, n, PROT_READ, flags[i], self->ref, 0);
			st = outcome(r == MAP_FAILED ? -1 : 0);
			if (r != MAP_FAILED)
				munmap(r, n);
			r = mmap(NULL, n, PROT_READ, flags[i], self->fd, 0);
			dv = outcome(r == MAP_FAILED ? -1 : 0);
			if (r != MAP_FAILED)
				munmap(r, n);
			EXPECT_EQ(st.ret, dv.ret);
			EXPECT_EQ(st.err, dv.err) TH_LOG("%s, not %s",
							 strerror(dv.err),
							 strerror(st.err));
			EXPECT_TRUE(!variant->is_stock || dv.err == ENODEV);
		}
		return;
	}

	/* private: zero-filled, writable, and not shared with a child */
	a = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd, 0);
	ASSERT_NE(MAP_FAILED, a);
	EXPECT_EQ(-1, not_byte(a, n, 0));
	memset(a, 0x11, n);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		bool ok = not_byte(a, n, 0x11) < 0;

		memset(a, 0x22, n);
		_exit(ok && not_byte(a, n, 0x22) < 0 ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(-1, not_byte(a, n, 0x11));
	munmap(a, n);

	/* at an offset, and read-only */
	a = mmap(NULL, n, PROT_READ, MAP_PRIVATE, self->fd, 1000 * pg);
	ASSERT_NE(MAP_FAILED, a);
	EXPECT_EQ(-1, not_byte(a, n, 0));
	munmap(a, n);
	/* a shared mapping at an offset: whatever the stock device does */
	EXPECT_EQ(touch_shared_at(self->ref, 1000 * pg),
		  touch_shared_at(self->fd, 1000 * pg));

	/* shared: a child's writes show in the parent */
	a = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, a);
	EXPECT_EQ(-1, not_byte(a, n, 0));
	a[0] = 1;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		bool ok = a[0] == 1;

		memset(a, 0x33, n);
		_exit(ok ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(-1, not_byte(a, n, 0x33));
	/* but each mmap() is an object of its own */
	b = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, b);
	EXPECT_EQ(-1, not_byte(b, n, 0));
	memset(b, 0x44, n);
	EXPECT_EQ(-1, not_byte(a, n, 0x33));
	munmap(b, n);
	munmap(a, n);
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

/* Threads that splice, and threads that read, at the same time */
struct worker {
	pthread_t thread;
	int fd;		/* the device */
	int sink;	/* where spliced data go: /dev/null, or the device */
	bool splice;
	unsigned int iterations;
	unsigned long moved;
	unsigned long bad;	/* bytes that were not zero */
	unsigned long errors;	/* calls that failed or fell short */
};

static void *splicer_main(void *arg)
{
	struct worker *w = arg;
	unsigned int i;
	ssize_t r, s;
	long bad;
	int p[2];

	if (pipe2(p, O_CLOEXEC)) {
		w->errors++;
		return NULL;
	}
	for (i = 0; i < w->iterations; i++) {
		r = splice(w->fd, NULL, p[1], NULL, 64 * KIB, 0);
		if (r != 64 * KIB) {
			w->errors++;
			break;
		}
		w->moved += r;
		if (i % 8 == 0) {
			/* a sample: read back and check */
			bad = read_zeros(p[0], r);
			if (bad < 0)
				w->errors++;
			else
				w->bad += bad;
			continue;
		}
		while (r > 0) {
			s = splice(p[0], NULL, w->sink, NULL, r, 0);
			if (s <= 0) {
				w->errors++;
				goto out;
			}
			r -= s;
		}
	}
out:
	close(p[0]);
	close(p[1]);
	return NULL;
}

static void *reader_main(void *arg)
{
	struct worker *w = arg;
	unsigned char *buf = map_anon(MIB);
	unsigned int i;
	ssize_t r;
	long at;

	if (!buf) {
		w->errors++;
		return NULL;
	}
	for (i = 0; i < w->iterations; i++) {
		memset(buf, FILL, MIB);
		r = read(w->fd, buf, MIB);
		if (r != (ssize_t)MIB) {
			w->errors++;
			continue;
		}
		w->moved += r;
		at = not_byte(buf, MIB, 0);
		if (at >= 0)
			for (; at < (long)MIB; at++)
				w->bad += buf[at] != 0;
	}
	munmap(buf, MIB);
	return NULL;
}

TEST_F_TIMEOUT(zcdev, concurrency, 180)
{
	struct worker w[6];
	bool splice_ok, into_dev;
	unsigned int i;
	int null;

	if (self->skip)
		return;
	/* a stock device that cannot splice still has its readers run */
	splice_ok = !stock_cannot_splice_read(self->fd, variant->is_stock);
	/* half the splicers drain into the device, where it takes them */
	into_dev = !splice_write_errno(self->fd);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, null);
	memset(w, 0, sizeof(w));
	for (i = 0; i < ARRAY_SIZE(w); i++) {
		w[i].fd = self->fd;
		w[i].sink = into_dev && (i & 1) ? self->fd : null;
		w[i].splice = i < 4;
		w[i].iterations = w[i].splice ? 128 : 16;
		if (w[i].splice && !splice_ok)
			continue;
		ASSERT_EQ(0, pthread_create(&w[i].thread, NULL,
					    w[i].splice ? splicer_main :
					    reader_main, &w[i]));
	}
	for (i = 0; i < ARRAY_SIZE(w); i++) {
		if (w[i].splice && !splice_ok)
			continue;
		pthread_join(w[i].thread, NULL);
		EXPECT_EQ(0UL, w[i].errors) TH_LOG("worker %u", i);
		EXPECT_EQ(0UL, w[i].bad) TH_LOG("worker %u", i);
		EXPECT_EQ(w[i].iterations * (w[i].splice ? 64 * KIB : MIB),
			  w[i].moved) TH_LOG("worker %u", i);
	}
	close(null);
}

/*
 * Unloading: pipe buffers that came from zcdev keep the module loaded, a
 * tee'd copy included, until the last one is gone; then it unloads, and
 * loads again.
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

static int delete_module(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK);
}

static bool module_busy_errno(int err)
{
	return err == EBUSY || err == EWOULDBLOCK;
}

/* Wait up to ms for path to exist (or not): whether it got there */
static bool wait_path(const char *path, bool exist, unsigned int ms)
{
	unsigned int t;

	for (t = 0; t <= ms; t += 20) {
		if (!access(path, F_OK) == exist)
			return true;
		sleep_ms(20);
	}
	return false;
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
	int fd, kfd, null, p1[2], p2[2], p3[2], r, err;
	unsigned char buf[4096];
	bool unloaded = false;
	unsigned int i;

	if (!ko || !*ko)
		SKIP(return, "set ZCDEV_KO to the module file to test unloading");
	if (geteuid())
		SKIP(return, "unloading needs root");
	ASSERT_EQ(0, access(ko, R_OK)) TH_LOG("%s: %s", ko, strerror(errno));
	if (access("/dev/zczero", F_OK)) {
		kfd = open(ko, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, kfd);
		ASSERT_EQ(0, syscall(SYS_finit_module, kfd, "", 0))
			TH_LOG("load %s: %s", ko, strerror(errno));
		close(kfd);
		ASSERT_TRUE(wait_path("/dev/zczero", true, 5000));
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
	for (i = 0; i < 200 && !unloaded; i++) {
		errno = 0;
		r = delete_module(MODNAME);
		err = errno;
		if (!r) {
			unloaded = true;
			break;
		}
		ASSERT_TRUE(module_busy_errno(err))
			TH_LOG("delete_module: %s", strerror(err));
		sleep_ms(50);
	}
	ASSERT_TRUE(unloaded) TH_LOG("still busy with the pipes drained");
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
	kfd = open(ko, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, kfd);
	ASSERT_EQ(0, syscall(SYS_finit_module, kfd, "", 0))
		TH_LOG("reload %s: %s", ko, strerror(errno));
	close(kfd);
	ASSERT_TRUE(wait_path("/dev/zczero", true, 5000));
	EXPECT_TRUE(wait_path("/dev/zcfull", true, 5000));
	fd = open("/dev/zczero", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	memset(buf, FILL, sizeof(buf));
	EXPECT_EQ(4096, read(fd, buf, sizeof(buf)));
	EXPECT_EQ(-1, not_byte(buf, sizeof(buf), 0));
	close(fd);
}

TEST_HARNESS_MAIN
