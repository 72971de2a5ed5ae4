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
 * row as "zeropatch": bench/zcref's /dev/zcref runs the loop of the mm
 * tree's zero-page splice for /dev/zero (PAGE_SIZE buffers of the zero
 * page, no-op get and release), the reference zczero is compared with in
 * the same run.  Into itself (splice-self) it splices as /dev/null does.
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
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <linux/errqueue.h>
#include <liburing.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define KIB		1024UL
#define MIB		(1024UL * KIB)
#define GIB		(1024UL * MIB)
#define MSG_LEN		192
#define MAX_RESULTS	1024
#define URING_POOL	(2 * MIB)	/* in-flight reads share at most this */
#define MIN_OPS		4		/* minimum operations per thread */
#define CLOCK_EVERY	64		/* loop iterations between time checks */
#define WATCHDOG_SLACK	30		/* seconds past the cap before exit(3) */
#define TCP_CHECK_LEN	(16 * KIB)	/* bytes checked before a tcp-* row */
#define PATCH_LABEL	"zeropatch"
#define TOUCH_STRIDE	4096UL		/* mmap-touch: one byte per this */
#define MAP_CHECK_LEN	(4 * MIB)	/* mmap-touch: read before timing */
#define HUGE_ALIGN	(2 * MIB)

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY	60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY	0x4000000
#endif

enum kind {
	K_SPLICE,	/* splice(src -> pipe) */
	K_VMSPLICE,	/* vmsplice(zeroed buffer -> pipe) */
	K_READ,		/* read(src) */
	K_URING,	/* io_uring read(src) */
	K_MEMSET,	/* memset(buffer) */
	K_SENDFILE,	/* sendfile(socket, src) */
	K_SEND,		/* send(socket, zeroed buffer) */
	K_SENDZC,	/* send(socket, zeroed buffer, MSG_ZEROCOPY) */
};

enum sink {
	SINK_NONE,
	SINK_NULL,	/* same thread splices the pipe to /dev/null */
	SINK_READER,	/* a reader thread splices the pipe to /dev/null */
	SINK_DEV,	/* same thread splices the pipe to DEV */
	SINK_TCP,	/* a loopback TCP socket; a receiver thread drains it */
};

enum status {
	ST_OK,
	ST_ABSENT,
	ST_UNSUPPORTED,
	ST_SKIPPED,
	ST_ERROR,
};

static const char *const status_name[] = {
	[ST_OK]		 = "ok",
	[ST_ABSENT]	 = "absent",
	[ST_UNSUPPORTED] = "unsupported",
	[ST_SKIPPED]	 = "skipped",
	[ST_ERROR]	 = "error",
};

/* One row of the table: one device (or peer), one size, one thread count. */
struct result {
	const char *test;
	const char *label;	/* device column */
	size_t size;
	int threads;
	enum status status;
	char msg[MSG_LEN];
	unsigned long long bytes;
	double seconds;
	unsigned long long zc_done;	/* MSG_ZEROCOPY sends completed */
	unsigned long long zc_copied;	/* ... of them copied by the kernel */
	bool noverdict;			/* -V: figures only, no ratios */
	bool mapped;			/* mmap-touch: the fields below */
	bool aligned;			/* the mapping starts on 2 MiB */
	long long faults;		/* minor + major faults of the touch */
	long long anon_huge_kb;		/* AnonHugePages of the VMA */
};

struct meas {
	const char *test;
	const char *label;
	const char *path;	/* source device; NULL for the user-space peers */
	const char *sink_path;	/* SINK_DEV: the device spliced into */
	enum kind kind;
	enum sink sink;
	size_t size;		/* pipe size or buffer size */
	unsigned int qd;	/* io_uring queue depth */
	int threads;
};

struct worker {
	const struct meas *m;
	pthread_t tid;
	unsigned long long target;
	unsigned long long done;
	enum status status;
	char msg[MSG_LEN];

	int src;		/* source device */
	int pipe_r, pipe_w;
	int sink;		/* /dev/null or DEV, opened for writing */
	void *buf;
	size_t buf_len;

	bool ring_ok;
	struct io_uring ring;
	unsigned int nbuf;

	/* SINK_TCP: the receiving socket and the receiver's pipe */
	int rsock;
	int rpipe_r, rpipe_w;
	int rnull;
	unsigned long long zc_sent, zc_done, zc_copied;

	/*
	 * Reader thread for SINK_READER (it owns pipe_r once started) and
	 * receiver thread for SINK_TCP (it owns rsock).
	 */
	bool reader_started;
	pthread_t reader;
	unsigned long long reader_done;
	enum status reader_status;
	char reader_msg[MSG_LEN];
};

/* Start gate: workers report ready, main opens the gate (or aborts). */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int ready;
	int state;		/* 0 closed, 1 go, -1 abort */
} gate = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static const char *dev_path = "/dev/zczero";
static const char *ref_path = "/dev/zero";
static const char *patch_path;		/* -z: the zero-page patch's loop */
static const char *null_path = "/dev/null";
static const char *dev_label, *ref_label;
static const char *machine_label;
static const char *noverdict_note;	/* -V */
static unsigned long long opt_bytes = 256 * MIB;
static unsigned long long opt_map = GIB;
static double opt_seconds = 30.0;
static int opt_threads;
static int opt_repeat = 1;
static bool opt_instr;
static bool do_splice = true, do_read = true, do_uring = true;
static bool do_tcp = true, do_mmap = true;
static bool uring_ok;
static char uring_msg[MSG_LEN];
static double deadline;

static struct result results[MAX_RESULTS];
static int nresults;
static FILE *csv;
static int nerrors;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sets *@st to @s if it is still ST_OK: the first failure is kept. */
static bool claim_status(enum status *st, enum status s)
{
	if (*st != ST_OK)
		return false;
	*st = s;
	return true;
}

/*
 * Record a failure and its message, unless one is already recorded.  The
 * message goes straight to snprintf() so that the compiler checks the
 * format against the arguments.
 */
#define set_status(st, msg, s, ...)					\
	do {								\
		if (claim_status(st, s))				\
			snprintf(msg, MSG_LEN, __VA_ARGS__);		\
	} while (0)

/* Report a failed syscall by name; errno is read here. */
static void fail_sys(struct worker *w, const char *name)
{
	set_status(&w->status, w->msg, ST_ERROR, "%s: %s", name,
		   strerror(errno));
}

static const char *size_str(size_t size, char *buf, size_t len)
{
	if (size >= MIB && size % MIB == 0)
		snprintf(buf, len, "%zuM", size / MIB);
	else if (size >= KIB && size % KIB == 0)
		snprintf(buf, len, "%zuK", size / KIB);
	else
		snprintf(buf, len, "%zu", size);
	return buf;
}

/* Returns the offset of the first non-zero byte, or -1. */
static long first_nonzero(const void *p, size_t len)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (c[i])
			return i;
	return -1;
}

static bool check_zero(struct worker *w, const void *p, size_t len,
		       const char *what)
{
	long off = first_nonzero(p, len);

	if (off < 0)
		return true;
	set_status(&w->status, w->msg, ST_ERROR,
		   "data check after %s: byte %ld of %zu is 0x%02x, not 0",
		   what, off, len, ((const unsigned char *)p)[off]);
	return false;
}

static void *alloc_buf(struct worker *w, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		fail_sys(w, "mmap");
		return NULL;
	}
	w->buf = p;
	w->buf_len = len;
	return p;
}

/* Open a device; a missing device or driver is "absent", not an error. */
static int open_dev(struct worker *w, const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	if (errno == ENOENT || errno == ENXIO || errno == ENODEV)
		set_status(&w->status, w->msg, ST_ABSENT, "open %s: %s",
			   path, strerror(errno));
	else
		set_status(&w->status, w->msg, ST_ERROR, "open %s: %s",
			   path, strerror(errno));
	return -1;
}

static bool time_up(unsigned long iter)
{
	return iter % CLOCK_EVERY == 0 && now() > deadline;
}

/* Move len bytes from the pipe to the sink; returns false on error. */
static bool drain(struct worker *w, size_t len)
{
	while (len) {
		ssize_t n = splice(w->pipe_r, NULL, w->sink, NULL, len,
				   SPLICE_F_MOVE);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			fail_sys(w, "splice(pipe->sink)");
			return false;
		}
		if (n == 0) {
			set_status(&w->status, w->msg, ST_ERROR,
				   "splice(pipe->sink): returned 0");
			return false;
		}
		len -= n;
	}
	return true;
}

/* Put up to len bytes into the pipe from the source; <0 on error. */
static ssize_t fill(struct worker *w, size_t len)
{
	ssize_t n;

	for (;;) {
		if (w->m->kind == K_SPLICE) {
			n = splice(w->src, NULL, w->pipe_w, NULL, len,
				   SPLICE_F_MOVE);
		} else {
			struct iovec iov = { .iov_base = w->buf, .iov_len = len };

			n = vmsplice(w->pipe_w, &iov, 1, 0);
		}
		if (n >= 0 || errno != EINTR)
			return n;
	}
}

static void *reader_main(void *arg)
{
	struct worker *w = arg;
	size_t len = w->m->size;

	for (;;) {
		ssize_t n = splice(w->pipe_r, NULL, w->sink, NULL, len,
				   SPLICE_F_MOVE);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			set_status(&w->reader_status, w->reader_msg, ST_ERROR,
				   "splice(pipe->/dev/null) in reader: %s",
				   strerror(errno));
			break;
		}
		if (n == 0)
			break;	/* writer closed the pipe */
		w->reader_done += n;
	}
	/* A writer blocked on a full pipe gets EPIPE instead of hanging. */
	close(w->pipe_r);
	return NULL;
}

/* A pipe of size bytes; false (and the status set) on failure. */
static bool make_pipe(struct worker *w, int *rd, int *wr, size_t size)
{
	int fds[2];
	int ret;

	if (pipe2(fds, O_CLOEXEC)) {
		fail_sys(w, "pipe2");
		return false;
	}
	*rd = fds[0];
	*wr = fds[1];
	ret = fcntl(*wr, F_SETPIPE_SZ, (int)size);
	if (ret < 0) {
		fail_sys(w, "fcntl(F_SETPIPE_SZ)");
		return false;
	}
	if ((size_t)ret < size) {
		set_status(&w->status, w->msg, ST_ERROR,
			   "fcntl(F_SETPIPE_SZ): got %d, wanted %zu", ret, size);
		return false;
	}
	return true;
}

static void setup_pipe(struct worker *w)
{
	const struct meas *m = w->m;
	ssize_t n;

	if (!make_pipe(w, &w->pipe_r, &w->pipe_w, m->size))
		return;

	if (m->sink == SINK_DEV)
		w->sink = open_dev(w, m->sink_path, O_WRONLY);
	else
		w->sink = open(null_path, O_WRONLY | O_CLOEXEC);
	if (w->sink < 0) {
		if (w->status == ST_OK)
			fail_sys(w, "open /dev/null");
		return;
	}

	/* Zeroed source buffer for vmsplice, touched so it has real pages. */
	if (m->kind == K_VMSPLICE) {
		if (!alloc_buf(w, m->size))
			return;
		memset(w->buf, 0, m->size);
	}

	/* Check the first pipe-full: read it back and look at it. */
	n = fill(w, m->size);
	if (n < 0) {
		if (m->kind == K_SPLICE && errno == EINVAL)
			set_status(&w->status, w->msg, ST_UNSUPPORTED,
				   "splice from %s: EINVAL", m->path);
		else
			fail_sys(w, m->kind == K_SPLICE ? "splice(dev->pipe)" :
				 "vmsplice");
		return;
	}
	if (n == 0) {
		set_status(&w->status, w->msg, ST_ERROR,
			   "splice(dev->pipe): returned 0 (EOF)");
		return;
	}
	{
		unsigned char *tmp = malloc(n);
		ssize_t off = 0;

		if (!tmp) {
			fail_sys(w, "malloc");
			return;
		}
		memset(tmp, 0xa5, n);
		while (off < n) {
			ssize_t r = read(w->pipe_r, tmp + off, n - off);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				if (r == 0)
					errno = EIO;
				fail_sys(w, "read(pipe)");
				break;
			}
			off += r;
		}
		if (w->status == ST_OK)
			check_zero(w, tmp, n, "splice");
		free(tmp);
	}
	if (w->status != ST_OK)
		return;

	if (m->sink == SINK_READER) {
		errno = pthread_create(&w->reader, NULL, reader_main, w);
		if (errno) {
			fail_sys(w, "pthread_create(reader)");
			return;
		}
		w->reader_started = true;
	}
}

/*
 * Reap MSG_ZEROCOPY completions: every one queued, then more, waiting,
 * until @want sends are complete.  Reads of the error queue never block.
 */
static bool reap_zc(struct worker *w, unsigned long long want)
{
	for (;;) {
		char control[256];
		struct msghdr msg = {
			.msg_control = control,
			.msg_controllen = sizeof(control),
		};
		struct cmsghdr *cm;

		if (recvmsg(w->sink, &msg, MSG_ERRQUEUE) < 0) {
			struct pollfd pfd = { .fd = w->sink };

			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				fail_sys(w, "recvmsg(MSG_ERRQUEUE)");
				return false;
			}
			if (w->zc_done >= want)
				return true;
			/* POLLERR: the error queue is not empty */
			if (poll(&pfd, 1, -1) < 0 && errno != EINTR) {
				fail_sys(w, "poll(POLLERR)");
				return false;
			}
			continue;
		}
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			struct sock_extended_err ee;
			unsigned long long n;

			if (cm->cmsg_level != SOL_IP || cm->cmsg_type != IP_RECVERR)
				continue;
			memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
			if (ee.ee_errno || ee.ee_origin != SO_EE_ORIGIN_ZEROCOPY) {
				set_status(&w->status, w->msg, ST_ERROR,
					   "error queue: errno %u, origin %u",
					   ee.ee_errno, ee.ee_origin);
				return false;
			}
			/* sends ee_info..ee_data, inclusive, are complete */
			n = ee.ee_data - ee.ee_info + 1;
			w->zc_done += n;
			if (ee.ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
				w->zc_copied += n;
		}
	}
}

/*
 * Up to len bytes into the socket, one call of the row's kind (for
 * tcp-splice: one splice into the pipe, then the pipe into the socket).
 * Returns the bytes sent, or -1 with errno and *what set (or the status
 * already set).
 */
static ssize_t tcp_put(struct worker *w, size_t len, const char **what)
{
	ssize_t n;

	for (;;) {
		switch (w->m->kind) {
		case K_SENDFILE:
			*what = "sendfile(socket, dev)";
			n = sendfile(w->sink, w->src, NULL, len);
			break;
		case K_SEND:
			*what = "send";
			n = send(w->sink, w->buf, len, 0);
			break;
		case K_SENDZC:
			*what = "send(MSG_ZEROCOPY)";
			n = send(w->sink, w->buf, len, MSG_ZEROCOPY);
			if (n < 0 && errno == ENOBUFS) {
				/* notifications fill the option memory */
				if (!reap_zc(w, w->zc_done + 1))
					return -1;
				continue;
			}
			if (n > 0)
				w->zc_sent++;	/* each such call is one id */
			break;
		default:
			*what = "splice(dev->pipe)";
			n = fill(w, len);
			if (n > 0 && !drain(w, n))
				return -1;
			break;
		}
		if (n >= 0 || errno != EINTR)
			return n;
	}
}

/* Receiver: the socket, through a pipe, to /dev/null, until EOF. */
static void *receiver_main(void *arg)
{
	struct worker *w = arg;
	size_t len = w->m->size;

	for (;;) {
		ssize_t n = splice(w->rsock, NULL, w->rpipe_w, NULL, len,
				   SPLICE_F_MOVE);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			set_status(&w->reader_status, w->reader_msg, ST_ERROR,
				   "splice(socket->pipe) in receiver: %s",
				   strerror(errno));
			break;
		}
		if (n == 0)
			break;	/* the sender shut its side down */
		w->reader_done += n;
		while (n > 0) {
			ssize_t k = splice(w->rpipe_r, NULL, w->rnull, NULL, n,
					   SPLICE_F_MOVE);

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				set_status(&w->reader_status, w->reader_msg,
					   ST_ERROR,
					   "splice(pipe->/dev/null) in receiver: %s",
					   k ? strerror(errno) : "returned 0");
				goto out;
			}
			n -= k;
		}
	}
out:
	/* A sender blocked on a full socket gets an error, not a hang. */
	close(w->rsock);
	w->rsock = -1;
	return NULL;
}

/* A loopback TCP connection, the first bytes checked, the receiver. */
static void setup_tcp(struct worker *w)
{
	const struct meas *m = w->m;
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t slen = sizeof(sin);
	const char *what = "";
	unsigned char *tmp;
	size_t off;
	ssize_t n;
	int lfd, one = 1;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0) {
		fail_sys(w, "socket");
		return;
	}
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    listen(lfd, 1) ||
	    getsockname(lfd, (struct sockaddr *)&sin, &slen)) {
		fail_sys(w, "listen on 127.0.0.1");
		close(lfd);
		return;
	}
	w->sink = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (w->sink < 0 ||
	    connect(w->sink, (struct sockaddr *)&sin, sizeof(sin))) {
		fail_sys(w, "connect to 127.0.0.1");
		close(lfd);
		return;
	}
	w->rsock = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (w->rsock < 0)
		fail_sys(w, "accept4");
	close(lfd);
	if (w->rsock < 0 ||
	    !make_pipe(w, &w->rpipe_r, &w->rpipe_w, m->size))
		return;
	w->rnull = open(null_path, O_WRONLY | O_CLOEXEC);
	if (w->rnull < 0) {
		fail_sys(w, "open /dev/null");
		return;
	}

	if (m->kind == K_SPLICE &&
	    !make_pipe(w, &w->pipe_r, &w->pipe_w, m->size))
		return;
	if (m->kind == K_SEND || m->kind == K_SENDZC) {
		if (!alloc_buf(w, m->size))
			return;
		memset(w->buf, 0, m->size);
	}
	if (m->kind == K_SENDZC &&
	    setsockopt(w->sink, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one))) {
		set_status(&w->status, w->msg, ST_UNSUPPORTED,
			   "setsockopt(SO_ZEROCOPY): %s", strerror(errno));
		return;
	}

	/* Check the first bytes: send them, receive them here, look. */
	for (off = 0; off < TCP_CHECK_LEN; off += n) {
		n = tcp_put(w, TCP_CHECK_LEN - off, &what);
		if (n < 0 && w->status == ST_OK) {
			if (errno == EINVAL && m->path)
				set_status(&w->status, w->msg, ST_UNSUPPORTED,
					   "%s from %s: EINVAL", what, m->path);
			else
				fail_sys(w, what);
		}
		if (n == 0)
			set_status(&w->status, w->msg, ST_ERROR,
				   "%s: returned 0", what);
		if (w->status != ST_OK)
			return;
	}
	tmp = malloc(TCP_CHECK_LEN);
	if (!tmp) {
		fail_sys(w, "malloc");
		return;
	}
	memset(tmp, 0xa5, TCP_CHECK_LEN);
	for (off = 0; off < TCP_CHECK_LEN; off += n) {
		n = recv(w->rsock, tmp + off, TCP_CHECK_LEN - off, 0);
		if (n < 0 && errno == EINTR) {
			n = 0;
			continue;
		}
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			fail_sys(w, "recv");
			break;
		}
	}
	if (w->status == ST_OK)
		check_zero(w, tmp, TCP_CHECK_LEN, "tcp");
	free(tmp);
	if (w->status != ST_OK)
		return;
	if (m->kind == K_SENDZC) {
		/* all complete: count the timed sends only */
		if (!reap_zc(w, w->zc_sent))
			return;
		w->zc_sent = 0;
		w->zc_done = 0;
		w->zc_copied = 0;
	}

	errno = pthread_create(&w->reader, NULL, receiver_main, w);
	if (errno) {
		fail_sys(w, "pthread_create(receiver)");
		return;
	}
	w->reader_started = true;
}

static void setup_read(struct worker *w)
{
	const struct meas *m = w->m;
	ssize_t n;

	if (!alloc_buf(w, m->size))
		return;
	memset(w->buf, 0xa5, m->size);
	if (m->kind == K_MEMSET)
		return;
	n = read(w->src, w->buf, m->size);
	if (n < 0) {
		fail_sys(w, "read");
		return;
	}
	if (n == 0) {
		set_status(&w->status, w->msg, ST_ERROR, "read: returned 0");
		return;
	}
	check_zero(w, w->buf, n, "read");
}

static void setup_uring(struct worker *w)
{
	const struct meas *m = w->m;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	size_t nbuf;
	int ret;

	nbuf = URING_POOL / m->size;
	if (nbuf > m->qd)
		nbuf = m->qd;
	if (nbuf < 1)
		nbuf = 1;
	w->nbuf = nbuf;
	if (!alloc_buf(w, nbuf * m->size))
		return;
	memset(w->buf, 0xa5, nbuf * m->size);

	ret = io_uring_queue_init(m->qd, &w->ring, 0);
	if (ret < 0) {
		set_status(&w->status, w->msg, ST_SKIPPED,
			   "io_uring_queue_init: %s", strerror(-ret));
		return;
	}
	w->ring_ok = true;

	/* One read through the ring, checked. */
	sqe = io_uring_get_sqe(&w->ring);
	io_uring_prep_read(sqe, w->src, w->buf, m->size, 0);
	ret = io_uring_submit_and_wait(&w->ring, 1);
	if (ret < 0) {
		set_status(&w->status, w->msg, ST_ERROR,
			   "io_uring_submit_and_wait: %s", strerror(-ret));
		return;
	}
	ret = io_uring_wait_cqe(&w->ring, &cqe);
	if (ret < 0) {
		set_status(&w->status, w->msg, ST_ERROR,
			   "io_uring_wait_cqe: %s", strerror(-ret));
		return;
	}
	ret = cqe->res;
	io_uring_cqe_seen(&w->ring, cqe);
	if (ret <= 0) {
		set_status(&w->status, w->msg, ST_ERROR, "io_uring read: %s",
			   ret ? strerror(-ret) : "returned 0");
		return;
	}
	check_zero(w, w->buf, ret, "io_uring read");
}

static void setup(struct worker *w)
{
	const struct meas *m = w->m;

	if (m->path) {
		w->src = open_dev(w, m->path, O_RDONLY);
		if (w->src < 0)
			return;
	}
	if (m->sink == SINK_TCP) {
		setup_tcp(w);
		return;
	}
	switch (m->kind) {
	case K_SPLICE:
	case K_VMSPLICE:
		setup_pipe(w);
		break;
	case K_READ:
	case K_MEMSET:
		setup_read(w);
		break;
	case K_URING:
		setup_uring(w);
		break;
	default:
		break;
	}
}

static void run_pipe(struct worker *w)
{
	const struct meas *m = w->m;
	unsigned long iter = 0;

	while (w->done < w->target) {
		size_t want = m->size;
		ssize_t n;

		if (want > w->target - w->done)
			want = w->target - w->done;
		n = fill(w, want);
		if (n < 0) {
			fail_sys(w, m->kind == K_SPLICE ? "splice(dev->pipe)" :
				 "vmsplice");
			break;
		}
		if (n == 0) {
			set_status(&w->status, w->msg, ST_ERROR,
				   "splice(dev->pipe): returned 0 (EOF)");
			break;
		}
		w->done += n;
		if (m->sink != SINK_READER && !drain(w, n))
			break;
		if (time_up(++iter))
			break;
	}
}

static void run_read(struct worker *w)
{
	const struct meas *m = w->m;
	unsigned long iter = 0;

	while (w->done < w->target) {
		ssize_t n;

		if (m->kind == K_MEMSET) {
			memset(w->buf, 0, m->size);
			/* the stores are visible: gcc must not drop them */
			__asm__ __volatile__("" : : "r"(w->buf) : "memory");
			n = m->size;
		} else {
			n = read(w->src, w->buf, m->size);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				fail_sys(w, "read");
				break;
			}
			if (n == 0) {
				set_status(&w->status, w->msg, ST_ERROR,
					   "read: returned 0");
				break;
			}
		}
		w->done += n;
		if (time_up(++iter))
			break;
	}
}

static void run_uring(struct worker *w)
{
	const struct meas *m = w->m;
	unsigned long long queued = 0;	/* bytes done + bytes in flight */
	unsigned long slot = 0, iter = 0;
	unsigned int inflight = 0;
	int filled0 = 0;		/* longest read completed into buffer 0 */
	bool stop = false;

	while (w->done < w->target || inflight) {
		struct io_uring_cqe *cqe;
		unsigned int head, seen = 0;
		int ret;

		while (!stop && inflight < m->qd && queued < w->target) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
			char *b = (char *)w->buf + (slot % w->nbuf) * m->size;

			if (!sqe)
				break;
			io_uring_prep_read(sqe, w->src, b, m->size, 0);
			io_uring_sqe_set_data64(sqe, slot % w->nbuf);
			slot++;
			inflight++;
			queued += m->size;
		}
		if (!inflight)
			break;
		ret = io_uring_submit_and_wait(&w->ring, 1);
		if (ret < 0) {
			if (ret == -EINTR)
				continue;
			set_status(&w->status, w->msg, ST_ERROR,
				   "io_uring_submit_and_wait: %s",
				   strerror(-ret));
			break;	/* io_uring_queue_exit() reaps the rest */
		}
		io_uring_for_each_cqe(&w->ring, head, cqe) {
			int res = cqe->res;

			seen++;
			inflight--;
			if (res <= 0) {
				set_status(&w->status, w->msg, ST_ERROR,
					   "io_uring read: %s",
					   res ? strerror(-res) : "returned 0");
				stop = true;
				queued -= m->size;
				continue;
			}
			w->done += res;
			queued -= m->size - res;	/* a short read */
			if (cqe->user_data == 0 && res > filled0)
				filled0 = res;
		}
		io_uring_cq_advance(&w->ring, seen);
		if (time_up(++iter))
			stop = true;
	}
	/*
	 * Last check: buffer 0 was 0xa5 before the first read, and reads may
	 * be short (stock /dev/zero stops early under IOCB_NOWAIT when it
	 * should reschedule), so look at what the longest one filled.
	 */
	if (w->status == ST_OK)
		check_zero(w, w->buf, filled0, "io_uring reads");
}

static void run_tcp(struct worker *w)
{
	const struct meas *m = w->m;
	unsigned long iter = 0;
	const char *what = "";

	while (w->done < w->target) {
		size_t want = m->size;
		ssize_t n;

		if (want > w->target - w->done)
			want = w->target - w->done;
		n = tcp_put(w, want, &what);
		if (n < 0) {
			if (w->status == ST_OK)
				fail_sys(w, what);
			break;
		}
		if (n == 0) {
			set_status(&w->status, w->msg, ST_ERROR,
				   "%s: returned 0", what);
			break;
		}
		w->done += n;
		if (m->kind == K_SENDZC && !reap_zc(w, 0))
			break;
		if (time_up(++iter))
			break;
	}
	/* The buffer is the sender's again only when every send is done. */
	if (m->kind == K_SENDZC && w->status == ST_OK)
		reap_zc(w, w->zc_sent);
}

static void run(struct worker *w)
{
	if (w->m->sink == SINK_TCP) {
		run_tcp(w);
		return;
	}
	switch (w->m->kind) {
	case K_SPLICE:
	case K_VMSPLICE:
		run_pipe(w);
		break;
	case K_READ:
	case K_MEMSET:
		run_read(w);
		break;
	case K_URING:
		run_uring(w);
		break;
	default:
		break;
	}
}

static void teardown(struct worker *w)
{
	if (w->m->sink == SINK_TCP && w->sink >= 0)
		shutdown(w->sink, SHUT_WR);	/* receiver sees EOF */
	if (w->pipe_w >= 0)
		close(w->pipe_w);	/* reader sees EOF */
	if (w->reader_started) {
		pthread_join(w->reader, NULL);
		if (w->reader_status != ST_OK)
			set_status(&w->status, w->msg, w->reader_status, "%s",
				   w->reader_msg);
		else if (w->status == ST_OK && w->reader_done != w->done)
			set_status(&w->status, w->msg, ST_ERROR,
				   "reader drained %llu bytes of %llu",
				   w->reader_done, w->done);
	} else if (w->pipe_r >= 0) {
		close(w->pipe_r);
	}
	if (w->rsock >= 0)
		close(w->rsock);
	if (w->rpipe_r >= 0)
		close(w->rpipe_r);
	if (w->rpipe_w >= 0)
		close(w->rpipe_w);
	if (w->rnull >= 0)
		close(w->rnull);
	if (w->ring_ok)
		io_uring_queue_exit(&w->ring);
	if (w->sink >= 0)
		close(w->sink);
	if (w->src >= 0)
		close(w->src);
	if (w->buf)
		munmap(w->buf, w->buf_len);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int state;

	setup(w);

	pthread_mutex_lock(&gate.lock);
	gate.ready++;
	pthread_cond_broadcast(&gate.cond);
	while (!gate.state)
		pthread_cond_wait(&gate.cond, &gate.lock);
	state = gate.state;
	pthread_mutex_unlock(&gate.lock);

	if (state > 0 && w->status == ST_OK)
		run(w);
	teardown(w);
	return NULL;
}

static const struct meas *current_meas;

/* A syscall that never returns must not hang the VM run: say so, exit. */
static void watchdog(int sig)
{
	char msg[256];
	int len;

	(void)sig;
	len = snprintf(msg, sizeof(msg),
		       "zcbench: %s %s %zu threads=%d hung (no progress within the time cap + %d s), exiting\n",
		       current_meas ? current_meas->test : "?",
		       current_meas ? current_meas->label : "?",
		       current_meas ? current_meas->size : 0,
		       current_meas ? current_meas->threads : 0, WATCHDOG_SLACK);
	if (len > 0 && write(STDERR_FILENO, msg, len) < 0)
		_exit(3);
	_exit(3);
}

/* Run one measurement with m->threads workers; fills r. */
static void measure(const struct meas *m, struct result *r)
{
	struct worker *ws;
	unsigned long long per;
	double t0, t1;
	int i, created, go = 1;

	memset(r, 0, sizeof(*r));
	r->test = m->test;
	r->label = m->label;
	r->size = m->size;
	r->threads = m->threads;
	r->noverdict = noverdict_note && (m->kind == K_READ ||
					  m->kind == K_URING ||
					  m->kind == K_MEMSET);

	ws = calloc(m->threads, sizeof(*ws));
	if (!ws) {
		r->status = ST_ERROR;
		snprintf(r->msg, MSG_LEN, "calloc: %s", strerror(errno));
		return;
	}
	per = opt_bytes / m->threads;
	if (m->kind == K_READ || m->kind == K_URING || m->kind == K_MEMSET) {
		/* whole buffers, and enough of them */
		per = (per + m->size - 1) / m->size * m->size;
		if (per < MIN_OPS * m->size)
			per = MIN_OPS * m->size;
	}

	current_meas = m;
	alarm((unsigned int)opt_seconds + WATCHDOG_SLACK);
	gate.ready = 0;
	gate.state = 0;
	for (created = 0; created < m->threads; created++) {
		struct worker *w = &ws[created];

		w->m = m;
		w->target = per;
		w->src = -1;
		w->pipe_r = -1;
		w->pipe_w = -1;
		w->sink = -1;
		w->rsock = -1;
		w->rpipe_r = -1;
		w->rpipe_w = -1;
		w->rnull = -1;
		errno = pthread_create(&w->tid, NULL, worker_main, w);
		if (errno) {
			r->status = ST_ERROR;
			snprintf(r->msg, MSG_LEN, "pthread_create: %s",
				 strerror(errno));
			go = -1;
			break;
		}
	}

	pthread_mutex_lock(&gate.lock);
	while (gate.ready < created)
		pthread_cond_wait(&gate.cond, &gate.lock);
	for (i = 0; i < created; i++)
		if (ws[i].status != ST_OK)
			go = -1;
	t0 = now();
	deadline = t0 + opt_seconds;
	gate.state = go;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);

	for (i = 0; i < created; i++)
		pthread_join(ws[i].tid, NULL);
	t1 = now();
	alarm(0);

	for (i = 0; i < created; i++) {
		/* the first failure of the most serious kind wins */
		if (ws[i].status > r->status) {
			r->status = ws[i].status;
			snprintf(r->msg, MSG_LEN, "%s", ws[i].msg);
		}
		r->bytes += ws[i].done;
		r->zc_done += ws[i].zc_done;
		r->zc_copied += ws[i].zc_copied;
	}
	r->seconds = t1 - t0;
	if (r->status == ST_OK && (r->bytes == 0 || r->seconds <= 0)) {
		r->status = ST_ERROR;
		snprintf(r->msg, MSG_LEN, "nothing transferred");
	}
	free(ws);
}

static double gbps(const struct result *r)
{
	return r->bytes / r->seconds / 1e9;
}

static const struct result *find(const char *test, const char *label,
				 size_t size, int threads)
{
	int i;

	for (i = 0; i < nresults; i++) {
		const struct result *r = &results[i];

		if (!strcmp(r->test, test) && !strcmp(r->label, label) &&
		    r->size == size && r->threads == threads)
			return r;
	}
	return NULL;
}

static void ratio_str(const struct result *a, const struct result *b,
		      char *buf, size_t len)
{
	if (a && a->noverdict)
		snprintf(buf, len, "n/v");
	else if (!a || !b || a->status != ST_OK || b->status != ST_OK)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.2fx", gbps(a) / gbps(b));
}

static char ratio_ref_hdr[64], ratio_peer_hdr[64], ratio_patch_hdr[64];
static int ratio_w;

static void print_header_row(void)
{
	printf("%-13s %5s %3s %-10s %9s", "test", "size", "thr", "device",
	       "GB/s");
	if (opt_instr)
		printf(" %9s", "instr/B");
	printf(" %*s %*s", ratio_w, ratio_ref_hdr, ratio_w, ratio_peer_hdr);
	if (patch_path)
		printf(" %*s", ratio_w, ratio_patch_hdr);
	putchar('\n');
}

/* One row; ratios (DEV rows) against ref, peer and the patch's loop. */
static void print_row(const struct result *r, const struct result *ref,
		      const struct result *peer, const struct result *pat)
{
	char sz[24], gb[16], r1[16], r2[16], r3[16];

	if (r->status == ST_OK)
		snprintf(gb, sizeof(gb), "%.3f", gbps(r));
	else
		snprintf(gb, sizeof(gb), "%s", status_name[r->status]);
	printf("%-13s %5s %3d %-10s %9s", r->test,
	       size_str(r->size, sz, sizeof(sz)), r->threads, r->label, gb);
	if (opt_instr) {
		if (r->status == ST_OK)
			printf(" %9.4f", r->seconds * 1e9 / r->bytes);
		else
			printf(" %9s", "-");
	}
	if (ref || peer) {
		ratio_str(r, ref, r1, sizeof(r1));
		ratio_str(r, peer, r2, sizeof(r2));
		printf(" %*s %*s", ratio_w, r1, ratio_w, r2);
		if (patch_path) {
			ratio_str(r, pat, r3, sizeof(r3));
			printf(" %*s", ratio_w, r3);
		}
	}
	if (r->status != ST_OK)
		printf("  (%s)", r->msg);
	else if (r->zc_done)
		printf("  (%llu of %llu zerocopy sends copied by the kernel)",
		       r->zc_copied, r->zc_done);
	else if (r->mapped)
		printf("  (%lld faults, AnonHugePages %lld kB, %s)", r->faults,
		       r->anon_huge_kb,
		       r->aligned ? "2M-aligned" : "not 2M-aligned");
	if (r->noverdict)
		printf("  [%s]", noverdict_note);
	putchar('\n');
	fflush(stdout);

	if (csv) {
		fprintf(csv, "%s,%zu,%d,%s,%llu,%.9f,", r->test, r->size,
			r->threads, r->label, r->bytes, r->seconds);
		if (r->status == ST_OK)
			fprintf(csv, "%.6f,", gbps(r));
		else
			fprintf(csv, "%s,", status_name[r->status]);
		if (r->mapped && r->status == ST_OK)
			fprintf(csv, "%lld,%lld,", r->faults, r->anon_huge_kb);
		else
			fprintf(csv, ",,");
		fprintf(csv, "%s\n", r->noverdict ? noverdict_note : "");
		fflush(csv);
	}
	if (r->status == ST_ERROR)
		nerrors++;
}

static const struct result *do_meas(const struct meas *m)
{
	struct result *r;
	int i;

	if (nresults == MAX_RESULTS) {
		fprintf(stderr, "zcbench: too many results\n");
		exit(1);
	}
	r = &results[nresults];
	measure(m, r);
	for (i = 1; i < opt_repeat && r->status == ST_OK; i++) {
		struct result again;

		/* keep the fastest run */
		measure(m, &again);
		if (again.status != ST_OK || gbps(&again) > gbps(r))
			*r = again;
	}
	nresults++;
	return r;
}

static const struct result *skip_meas(const struct meas *m, enum status st,
				      const char *msg)
{
	struct result *r = &results[nresults++];

	memset(r, 0, sizeof(*r));
	r->test = m->test;
	r->label = m->label;
	r->size = m->size;
	r->threads = m->threads;
	r->status = st;
	snprintf(r->msg, MSG_LEN, "%s", msg);
	return r;
}

static const size_t pipe_sizes[] = { 64 * KIB, 1 * MIB };
static const size_t read_sizes[] = { 4 * KIB, 64 * KIB, 1 * MIB, 16 * MIB };

static void splice_group(const char *test, enum sink sink, size_t size,
			 int threads)
{
	struct meas m = {
		.test = test, .sink = sink, .size = size, .threads = threads,
	};
	const struct result *d, *ref = NULL, *pat = NULL, *p;

	m.kind = K_SPLICE;
	m.path = dev_path;
	m.sink_path = dev_path;
	m.label = dev_label;
	d = do_meas(&m);
	if (sink != SINK_DEV) {
		m.path = ref_path;
		m.label = ref_label;
		ref = do_meas(&m);
	}
	if (patch_path) {
		/* splice-self: into itself, as the patched /dev/zero would */
		m.path = patch_path;
		m.sink_path = patch_path;
		m.label = PATCH_LABEL;
		pat = do_meas(&m);
		m.sink_path = dev_path;
	}
	m.kind = K_VMSPLICE;
	m.path = NULL;
	m.label = "vmsplice";
	p = do_meas(&m);

	print_row(d, ref, p, pat);
	if (ref)
		print_row(ref, NULL, NULL, NULL);
	if (pat)
		print_row(pat, NULL, NULL, NULL);
	print_row(p, NULL, NULL, NULL);
}

/*
 * tcp-sendfile and tcp-splice: DEV, REF and the patch's loop into a
 * loopback TCP socket.  The peers, send() and send(MSG_ZEROCOPY) of a
 * zeroed buffer, are measured with tcp-sendfile and compared with both.
 */
static void tcp_group(const char *test, enum kind kind, size_t size,
		      int threads)
{
	struct meas m = {
		.test = test, .kind = kind, .sink = SINK_TCP, .size = size,
		.threads = threads,
	};
	const struct result *d, *ref, *pat = NULL, *p, *pz = NULL;
	bool own_peer = kind == K_SENDFILE;

	m.path = dev_path;
	m.label = dev_label;
	d = do_meas(&m);
	m.path = ref_path;
	m.label = ref_label;
	ref = do_meas(&m);
	if (patch_path) {
		m.path = patch_path;
		m.label = PATCH_LABEL;
		pat = do_meas(&m);
	}
	m.path = NULL;
	if (own_peer) {
		m.kind = K_SEND;
		m.label = "send";
		p = do_meas(&m);
		m.kind = K_SENDZC;
		m.label = "send-zc";
		pz = do_meas(&m);
	} else {
		p = find("tcp-sendfile", "send", size, threads);
	}

	print_row(d, ref, p, pat);
	print_row(ref, NULL, NULL, NULL);
	if (pat)
		print_row(pat, NULL, NULL, NULL);
	if (own_peer) {
		print_row(p, NULL, NULL, NULL);
		print_row(pz, NULL, NULL, NULL);
	}
}

static void read_group(const char *test, enum kind kind, unsigned int qd,
		       size_t size, int threads)
{
	struct meas m = {
		.test = test, .kind = kind, .qd = qd, .size = size,
		.threads = threads,
	};
	const struct result *d, *ref, *p;
	bool own_peer = kind == K_READ;

	m.path = dev_path;
	m.label = dev_label;
	if (kind == K_URING && !uring_ok)
		d = skip_meas(&m, ST_SKIPPED, uring_msg);
	else
		d = do_meas(&m);
	m.path = ref_path;
	m.label = ref_label;
	if (kind == K_URING && !uring_ok)
		ref = skip_meas(&m, ST_SKIPPED, uring_msg);
	else
		ref = do_meas(&m);
	if (own_peer) {
		m.kind = K_MEMSET;
		m.path = NULL;
		m.label = "memset";
		p = do_meas(&m);
	} else {
		p = find("read", "memset", size, threads);
	}

	print_row(d, ref, p, NULL);
	print_row(ref, NULL, NULL, NULL);
	if (own_peer)
		print_row(p, NULL, NULL, NULL);
}

static void probe_uring(void)
{
	struct io_uring ring;
	int ret = io_uring_queue_init(1, &ring, 0);

	if (ret < 0) {
		snprintf(uring_msg, MSG_LEN, "io_uring_queue_init: %s",
			 strerror(-ret));
		return;
	}
	io_uring_queue_exit(&ring);
	uring_ok = true;
}

/* AnonHugePages of the mapping that starts at @addr, from smaps; -1 if none. */
static long long smaps_anon_huge(const void *addr)
{
	char line[512], want[32];
	FILE *f = fopen("/proc/self/smaps", "r");
	long long kb = -1;
	bool in = false;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%lx-", (unsigned long)addr);
	while (fgets(line, sizeof(line), f)) {
		if (!in) {
			in = !strncmp(line, want, strlen(want));
			continue;
		}
		if (sscanf(line, "AnonHugePages: %lld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

static long long faults_now(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	return ru.ru_minflt + ru.ru_majflt;
}

/*
 * The zero check of mmap-touch: a fresh private mapping of the device
 * reads zeros.  A mapping of its own, so that the read faults it takes
 * are not counted against the timed one.
 */
static bool map_check(int fd, struct result *r)
{
	void *p = mmap(NULL, MAP_CHECK_LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE, fd, 0);
	long off;

	if (p == MAP_FAILED) {
		set_status(&r->status, r->msg, ST_ERROR, "mmap %zu: %s",
			   (size_t)MAP_CHECK_LEN, strerror(errno));
		return false;
	}
	off = first_nonzero(p, MAP_CHECK_LEN);
	if (off >= 0)
		set_status(&r->status, r->msg, ST_ERROR,
			   "data check of a fresh mapping: byte %ld is 0x%02x, not 0",
			   off, ((unsigned char *)p)[off]);
	munmap(p, MAP_CHECK_LEN);
	return off < 0;
}

/*
 * mmap-touch: map opt_map bytes MAP_PRIVATE of @path (anonymous memory
 * when NULL), ask for huge pages, write one byte per 4 KiB page, and
 * count the time, the faults and the VMA's AnonHugePages.
 */
static void map_touch(const char *path, const char *label, struct result *r)
{
	int fd = -1, flags = MAP_PRIVATE;
	char *p;
	size_t len = opt_map, off = 0;
	unsigned long iter = 0;
	long long f0;
	double t0;

	memset(r, 0, sizeof(*r));
	r->test = "mmap-touch";
	r->label = label;
	r->size = len;
	r->threads = 1;
	if (path) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			set_status(&r->status, r->msg,
				   errno == ENOENT || errno == ENXIO ||
				   errno == ENODEV ? ST_ABSENT : ST_ERROR,
				   "open %s: %s", path, strerror(errno));
			return;
		}
		if (!map_check(fd, r))
			goto out;
	} else {
		flags |= MAP_ANONYMOUS;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (p == MAP_FAILED) {
		set_status(&r->status, r->msg, ST_ERROR, "mmap %zu: %s", len,
			   strerror(errno));
		goto out;
	}
	r->aligned = (unsigned long)p % HUGE_ALIGN == 0;
	/* EINVAL: a kernel without THP; the row says AnonHugePages 0 */
	madvise(p, len, MADV_HUGEPAGE);

	alarm((unsigned int)opt_seconds + WATCHDOG_SLACK);
	f0 = faults_now();
	t0 = now();
	deadline = t0 + opt_seconds;
	while (off < len) {
		p[off] = 1;
		off += TOUCH_STRIDE;
		if (time_up(++iter))
			break;
	}
	r->seconds = now() - t0;
	r->faults = faults_now() - f0;
	alarm(0);
	r->bytes = off < len ? off : len;
	r->anon_huge_kb = smaps_anon_huge(p);
	r->mapped = true;

	/* the bytes beside each one written are still zero */
	for (off = 0; off < r->bytes; off += TOUCH_STRIDE) {
		long z = first_nonzero(p + off + 1, 63);

		if (z >= 0) {
			set_status(&r->status, r->msg, ST_ERROR,
				   "data check after the touch: byte %zu is not 0",
				   off + 1 + z);
			break;
		}
	}
	munmap(p, len);
out:
	if (fd >= 0)
		close(fd);
}

static const struct result *map_meas(const char *path, const char *label)
{
	struct result *r;
	int i;

	if (nresults == MAX_RESULTS) {
		fprintf(stderr, "zcbench: too many results\n");
		exit(1);
	}
	r = &results[nresults];
	map_touch(path, label, r);
	for (i = 1; i < opt_repeat && r->status == ST_OK; i++) {
		struct result again;

		map_touch(path, label, &again);
		if (again.status != ST_OK || gbps(&again) > gbps(r))
			*r = again;
	}
	nresults++;
	return r;
}

/*
 * mmap-touch of DEV, REF and an anonymous mapping (the peer), after an
 * untimed touch of an anonymous mapping: the first to touch that much
 * memory pays for more than its own faults (a VM's host maps the guest's
 * memory on first use), and it must not be DEV.
 */
static void map_group(void)
{
	const struct result *d, *ref, *p;
	struct result warm;

	map_touch(NULL, "warm-up", &warm);
	d = map_meas(dev_path, dev_label);
	ref = map_meas(ref_path, ref_label);
	p = map_meas(NULL, "anon");
	print_row(d, ref, p, NULL);
	print_row(ref, NULL, NULL, NULL);
	print_row(p, NULL, NULL, NULL);
}

/* The system's THP setting, the bracketed word of "enabled". */
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
		"  -z PATCHDEV the mm tree's zero-page splice, e.g. /dev/zcref\n"
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

static bool parse_tests(char *s)
{
	char *tok, *save;

	do_splice = false;
	do_tcp = false;
	do_read = false;
	do_uring = false;
	do_mmap = false;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "splice"))
			do_splice = true;
		else if (!strcmp(tok, "read"))
			do_read = true;
		else if (!strcmp(tok, "uring"))
			do_uring = true;
		else if (!strcmp(tok, "tcp"))
			do_tcp = true;
		else if (!strcmp(tok, "mmap"))
			do_mmap = true;
		else
			return false;
	}
	return do_splice || do_tcp || do_read || do_uring || do_mmap;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

int main(int argc, char **argv)
{
	const char *csv_path = NULL;
	bool bytes_set = false, quick = false;
	char model[256], flags[64], date[64], thp[32], *end;
	struct utsname uts;
	time_t t;
	int c, nthr[32], nn = 0, i, s, ti;
	long ncpu;

	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	opt_threads = ncpu > 0 ? ncpu : 1;

	while ((c = getopt(argc, argv, "d:r:z:t:b:s:n:qc:m:T:iM:V:h")) != -1) {
		switch (c) {
		case 'd':
			dev_path = optarg;
			break;
		case 'r':
			ref_path = optarg;
			break;
		case 'z':
			patch_path = optarg;
			break;
		case 't':
			errno = 0;
			opt_threads = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || opt_threads < 1 ||
			    opt_threads > 1024)
				usage_exit(argv[0]);
			break;
		case 'b':
			if (!parse_bytes(optarg, &opt_bytes))
				usage_exit(argv[0]);
			bytes_set = true;
			break;
		case 's':
			errno = 0;
			opt_seconds = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(opt_seconds > 0) ||
			    opt_seconds > 86400)
				usage_exit(argv[0]);
			break;
		case 'n':
			errno = 0;
			opt_repeat = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || opt_repeat < 1 ||
			    opt_repeat > 100)
				usage_exit(argv[0]);
			break;
		case 'q':
			quick = true;
			break;
		case 'c':
			csv_path = optarg;
			break;
		case 'm':
			machine_label = optarg;
			break;
		case 'T':
			if (!parse_tests(optarg))
				usage_exit(argv[0]);
			break;
		case 'i':
			opt_instr = true;
			break;
		case 'M':
			if (!parse_bytes(optarg, &opt_map) ||
			    opt_map < MAP_CHECK_LEN)
				usage_exit(argv[0]);
			break;
		case 'V':
			if (!*optarg || strchr(optarg, ','))
				usage_exit(argv[0]);
			noverdict_note = optarg;
			break;
		default:
			usage_exit(argv[0]);
		}
	}
	if (optind != argc)
		usage_exit(argv[0]);
	if (quick && !bytes_set)
		opt_bytes = 32 * MIB;

	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, watchdog);

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

	if (csv_path) {
		csv = fopen(csv_path, "w");
		if (!csv) {
			fprintf(stderr, "zcbench: fopen %s: %s\n", csv_path,
				strerror(errno));
			return 1;
		}
		fprintf(csv, "test,size,threads,device,bytes,seconds,gbps,%s\n",
			"faults,anonhuge_kb,verdict");
	}

	if (uname(&uts))
		snprintf(uts.release, sizeof(uts.release), "unknown");
	cpu_info(model, sizeof(model), flags, sizeof(flags));
	t = time(NULL);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", localtime(&t));
	if (do_uring)
		probe_uring();

	for (i = 1; i < opt_threads && nn < 31; i *= 2)
		nthr[nn++] = i;
	nthr[nn++] = opt_threads;

	printf("zcbench: %s vs %s; peers vmsplice (pipes), memset (reads), send (tcp)\n",
	       dev_path, ref_path);
	if (patch_path)
		printf("patch:   %s as %s, the mm tree's zero-page splice for /dev/zero\n",
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
	print_header_row();
	fflush(stdout);

	if (do_splice) {
		static const struct {
			const char *test;
			enum sink sink;
		} sinks[] = {
			{ "splice-null", SINK_NULL },
			{ "splice-reader", SINK_READER },
			{ "splice-self", SINK_DEV },
		};

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
