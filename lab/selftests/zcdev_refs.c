// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev's selftests, page references: what a user can make of zcdev's
 * buffers in numbers.  Every byte of a buffer spliced on into a socket
 * can become a page reference that the socket keeps; tee copies a
 * buffer as often as asked; UDP with segmentation offload (UDP_SEGMENT)
 * takes a reference per segment, TCP with a tiny MSS one per skb.
 * Whatever the sequence, every call works: the module keeps no count of
 * its own that a call could spend (it reads the folio's real count, and
 * moves a buffer to a newer folio when that is high), and what arrives
 * reads zeros.  On a stock kernel that takes a while to matter; the lane
 * runs these tests again with a module whose folios start 256
 * references short of that threshold (lab/faults/refs.patch), where the
 * kernel log must stay clean and each folio wears out after 256
 * references, and with one that has no guard (refs-unguarded), where
 * it must not.  As at most 16 folios may live at once, no test holds
 * references on more than a few: the receivers are read as it goes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <sys/time.h>

/* The harness has a signal handler that ignores an argument */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#include "zcdev_fixture.h"

/* More than the 256 references a folio of the refs fault build has left */
#define ROUNDS		400
/* Room in a socket for ROUNDS one-byte sends kept unread */
#define SOCK_BUF	(8 * MIB)

/* What a run of calls came to: successes, and the rest (ENOMEM too) */
struct tally {
	unsigned int ok;
	unsigned int failed;
	long ret;		/* the first failure's return */
	int err;		/* and errno */
	const char *what;	/* and its call */
};

static void tally(struct tally *t, ssize_t r, ssize_t want, const char *what)
{
	if (r == want) {
		t->ok++;
	} else if (!t->failed++) {
		t->ret = r;
		t->err = r < 0 ? errno : 0;
		t->what = what;
	}
}

/* Every call worked */
static void expect_tally(struct __test_metadata *_metadata,
			 const struct tally *t)
{
	TH_LOG("%u calls worked", t->ok);
	EXPECT_EQ(0U, t->failed)
		TH_LOG("%u failed, the first: %s: %ld: %s", t->failed,
		       t->what, t->ret, t->ret < 0 ? strerror(t->err) :
		       "short");
	EXPECT_LT(0U, t->ok);
}

/*
 * What a test splices through: two pipes, an AF_UNIX stream pair whose
 * sender can hold ROUNDS unread sends, and /dev/null; -1 where closed.
 */
struct rig {
	int p[2], q[2], sv[2], null;
};

/*
 * A call that blocks this long fails (EAGAIN) with the test's message,
 * before the harness's timeout kills it without one.
 */
static const struct timeval stall = { .tv_sec = 20 };

static int rig_open(struct rig *r)
{
	int size = SOCK_BUF;

	r->null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (r->null < 0 || pipe2(r->p, O_CLOEXEC | O_NONBLOCK) ||
	    pipe2(r->q, O_CLOEXEC | O_NONBLOCK) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, r->sv))
		return -1;
	if (setsockopt(r->sv[0], SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)))
		setsockopt(r->sv[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	return setsockopt(r->sv[0], SOL_SOCKET, SO_SNDTIMEO, &stall,
			  sizeof(stall));
}

static void rig_close(struct rig *r)
{
	int *fd[] = { &r->p[0], &r->p[1], &r->q[0], &r->q[1], &r->sv[0],
		      &r->sv[1], &r->null };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fd); i++)
		if (*fd[i] >= 0)
			close(*fd[i]);
}

/* A pipe that still holds what a failed call left: a new one instead */
static int renew(int p[2])
{
	if (pipe_bytes(p[0]) <= 0)
		return 0;
	close(p[0]);
	close(p[1]);
	return pipe2(p, O_CLOEXEC | O_NONBLOCK);
}

/* Splice a byte from pipe in[] to out, counted in t and, if sent, *sent */
static int splice_on(struct tally *t, int in[2], int out, const char *what,
		     unsigned int *sent)
{
	ssize_t r = splice(in[0], NULL, out, NULL, 1, SPLICE_F_NONBLOCK);

	tally(t, r, 1, what);
	*sent += r == 1;
	return renew(in);
}

/* A test's rig and what its calls came to */
struct run {
	struct rig r;
	struct tally t;
	unsigned int sent;	/* bytes that reached a sink */
};

/*
 * The device (fd, the stock one if is_stock) can splice and the run's rig
 * is open: whether the test goes on
 */
static bool run_start(struct __test_metadata *_metadata, int fd,
		      bool is_stock, const char *path, struct run *x)
{
	memset(x, 0, sizeof(*x));
	memset(&x->r, -1, sizeof(x->r));
	if (stock_cannot_splice_read(fd, is_stock))
		SKIP(return false, "%s cannot splice on this kernel", path);
	if (!rig_open(&x->r))
		return true;
	TH_LOG("pipes and sockets: %s", strerror(errno));
	EXPECT_TRUE(false);
	return false;
}

/* ROUNDS times: a byte from the device into pipe p, and on into out */
static int splice_rounds(struct run *x, int fd, int out, const char *what)
{
	int i;

	for (i = 0; i < ROUNDS; i++) {
		tally(&x->t, splice(fd, NULL, x->r.p[1], NULL, 1, 0), 1,
		      "splice from the device");
		if (splice_on(&x->t, x->r.p, out, what, &x->sent))
			return -1;
	}
	return 0;
}

/* ROUNDS times: a copy of pipe p's byte into pipe q, and on into out */
static int tee_rounds(struct run *x, int out, const char *what)
{
	int i;

	for (i = 0; i < ROUNDS; i++) {
		tally(&x->t, tee(x->r.p[0], x->r.q[1], 1, 0), 1, "tee");
		if (splice_on(&x->t, x->r.q, out, what, &x->sent))
			return -1;
	}
	return 0;
}

/* The four sequences, each ROUNDS rounds */
enum refs_case {
	SPLICES,	/* device -> pipe -> /dev/null */
	TEES,		/* one buffer tee'd, each copy -> /dev/null */
	SOCKET_FRAGS,	/* device -> pipe -> a socket that keeps them all */
	TEES_INTO_SOCKET, /* one buffer tee'd, each copy -> that socket */
};

/* Sequence c on the device fd */
static void refs_run(struct __test_metadata *_metadata, int fd,
		     bool is_stock, const char *path, enum refs_case c)
{
	bool tees = c == TEES || c == TEES_INTO_SOCKET;
	bool sock = c == SOCKET_FRAGS || c == TEES_INTO_SOCKET;
	struct run x;
	int out;

	if (!run_start(_metadata, fd, is_stock, path, &x))
		return;
	out = sock ? x.r.sv[0] : x.r.null;
	if (tees) {
		/* one buffer; each copy goes on */
		ASSERT_EQ(1, splice(fd, NULL, x.r.p[1], NULL, 1, 0));
		ASSERT_EQ(0, tee_rounds(&x, out, sock ?
					"splice the copy to the socket" :
					"splice the copy to /dev/null"));
		EXPECT_EQ(1, pipe_bytes(x.r.p[0]));	/* still there */
	} else {
		ASSERT_EQ(0, splice_rounds(&x, fd, out, sock ?
					   "splice to the socket" :
					   "splice to /dev/null"));
	}
	expect_tally(_metadata, &x.t);
	if (sock)	/* what the socket kept reads zeros */
		EXPECT_EQ(0, read_zeros(x.r.sv[1], x.sent));
	rig_close(&x.r);
}

/* Each sequence in turn, its rig fresh */
TEST_F_TIMEOUT(zcdev, references_stay_bounded, 240)
{
	static const char *const names[] = {
		[SPLICES]		= "splices",
		[TEES]			= "tees",
		[SOCKET_FRAGS]		= "splices into a socket",
		[TEES_INTO_SOCKET]	= "tees into a socket",
	};
	enum refs_case c;

	for (c = SPLICES; !self->skip && c <= TEES_INTO_SOCKET; c++) {
		TH_LOG("%s", names[c]);
		refs_run(_metadata, self->fd, variant->is_stock, variant->path,
			 c);
	}
}

/*
 * Into the network on loopback, ROUNDS rounds (net_rounds()) of a 4 KiB
 * splice from the device, on into a socket: UDP datagrams, UDP datagrams
 * the stack cuts into 64-byte segments (UDP_SEGMENT: a page reference
 * each, 64 a page; 64 segments is 6.1's most), and TCP with the smallest
 * MSS.  UDP's receiver is read every BATCH datagrams, TCP's by a thread
 * as it goes.
 */
enum net_case { UDP_DGRAMS, UDP_GSO, TCP_TINY_MSS };

#define DGRAM		4096
#define GSO_SIZE	64
#define BATCH		8
#define TINY_MSS	88	/* TCP_MIN_MSS */
/*
 * TCP's buffers, each side (the kernel doubles it): small, so that what is
 * in flight, a reference per skb and page, stays on a few folios.
 */
#define TCP_BUF		(16 * KIB)

/* Loopback sockets, sv[0] connected to sv[1]: 0, or an errno */
static int net_pair(enum net_case c, int sv[2])
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int type = c == TCP_TINY_MSS ? SOCK_STREAM : SOCK_DGRAM;
	socklen_t alen = sizeof(a);
	int size = c == TCP_TINY_MSS ? TCP_BUF : SOCK_BUF, mss = TINY_MSS, l;
	int opt = c == TCP_TINY_MSS ? SO_RCVBUF : SO_RCVBUFFORCE;

	loopback_up();
	sv[0] = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	l = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	if (sv[0] < 0 || l < 0)
		return errno;
	if (setsockopt(l, SOL_SOCKET, opt, &size, sizeof(size)) ||
	    setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &stall, sizeof(stall)) ||
	    setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &stall, sizeof(stall)) ||
	    setsockopt(sv[0], SOL_SOCKET, opt == SO_RCVBUF ? SO_SNDBUF :
		       SO_SNDBUFFORCE, &size, sizeof(size)))
		return errno;
	if (c == TCP_TINY_MSS &&
	    (setsockopt(l, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof(mss)) ||
	     setsockopt(sv[0], IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof(mss))))
		return errno;
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(l, (struct sockaddr *)&a, &alen) ||
	    (c == TCP_TINY_MSS && listen(l, 1)) ||
	    connect(sv[0], (struct sockaddr *)&a, sizeof(a)))
		return errno;
	if (c != TCP_TINY_MSS) {
		sv[1] = l;
		return 0;
	}
	sv[1] = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	close(l);
	return sv[1] < 0 ? errno : 0;
}

/* UDP: the datagrams of n bytes in all, each byte zero */
static void udp_receive(struct tally *t, int fd, size_t n)
{
	static unsigned char buf[64 * KIB];
	ssize_t r;

	while (n) {
		r = recv(fd, buf, sizeof(buf), 0);
		if (r <= 0 || (size_t)r > n) {
			tally(t, r, n, "recv");
			return;
		}
		tally(t, not_byte(buf, r, 0), -1, "what arrived is zeros");
		n -= r;
	}
}

/* The whole pipe p into the socket: a TCP send may take part of it */
static void send_all(struct tally *t, int p[2], int out, size_t n)
{
	ssize_t r;

	while (n) {
		r = splice(p[0], NULL, out, NULL, n, 0);
		if (r <= 0 || (size_t)r > n) {
			tally(t, r, n, "splice to the socket");
			return;
		}
		tally(t, r, r, "splice to the socket");
		n -= r;
	}
}

/*
 * ROUNDS, or 1/ZCDEV_SCALE of it in whole batches: 64 segments of a
 * round cost a debug kernel under TCG a tenth of a second.
 */
static int net_rounds(void)
{
	int n = ROUNDS / test_scale() / BATCH * BATCH;

	return n < BATCH ? BATCH : n;
}

static void net_run(struct __test_metadata *_metadata, int fd,
		    bool is_stock, const char *path, enum net_case c)
{
	int p[2] = { -1, -1 }, sv[2] = { -1, -1 }, gso = GSO_SIZE, err, i;
	int rounds = net_rounds();
	struct tally t = { 0 };
	struct sink s = { 0 };
	ssize_t r;

	if (stock_cannot_splice_read(fd, is_stock))
		SKIP(return, "%s cannot splice on this kernel", path);
	err = net_pair(c, sv);
	ASSERT_EQ(0, err) TH_LOG("sockets: %s", strerror(err));
	if (c == UDP_GSO &&
	    setsockopt(sv[0], SOL_UDP, UDP_SEGMENT, &gso, sizeof(gso))) {
		err = errno;
		close(sv[0]);
		close(sv[1]);
		if (err == ENOPROTOOPT || err == EINVAL)
			SKIP(return, "UDP_SEGMENT: %s", strerror(err));
		ASSERT_EQ(0, err) TH_LOG("UDP_SEGMENT: %s", strerror(err));
	}
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	if (c == TCP_TINY_MSS) {
		s.fd = sv[1];
		ASSERT_EQ(0, pthread_create(&s.thread, NULL, sink_main, &s));
	}
	for (i = 1; i <= rounds; i++) {
		r = splice(fd, NULL, p[1], NULL, DGRAM, 0);
		tally(&t, r, DGRAM, "splice from the device");
		if (r != DGRAM)
			break;
		send_all(&t, p, sv[0], DGRAM);
		if (c != TCP_TINY_MSS && !(i % BATCH))
			udp_receive(&t, sv[1], BATCH * DGRAM);
		if (t.failed)
			break;
	}
	if (c == TCP_TINY_MSS) {
		shutdown(sv[0], SHUT_WR);
		pthread_join(s.thread, NULL);
		EXPECT_EQ(0, s.err) TH_LOG("TCP's receiver: %s",
					   strerror(s.err));
		EXPECT_EQ((size_t)rounds * DGRAM, s.total);
		EXPECT_EQ(0U, s.bad);
	}
	expect_tally(_metadata, &t);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
}

TEST_F_TIMEOUT(zcdev, udp_datagrams, 240)
{
	if (!self->skip)
		net_run(_metadata, self->fd, variant->is_stock, variant->path,
			UDP_DGRAMS);
}

TEST_F_TIMEOUT(zcdev, udp_segments, 240)
{
	if (!self->skip)
		net_run(_metadata, self->fd, variant->is_stock, variant->path,
			UDP_GSO);
}

TEST_F_TIMEOUT(zcdev, tcp_tiny_mss, 240)
{
	if (!self->skip)
		net_run(_metadata, self->fd, variant->is_stock, variant->path,
			TCP_TINY_MSS);
}

TEST_HARNESS_MAIN
