// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev's selftests, page references: what a user can make of zcdev's
 * buffers in numbers.  Every byte of a buffer spliced on into a socket
 * can become a page reference that the socket keeps; tee copies a
 * buffer as often as asked.  Whatever the sequence, each call either
 * keeps working or fails with a clean error (ENOMEM, once a zero folio's
 * budget of references is spent: zcdev_pipe.c), and what arrives reads
 * zeros.  On a stock kernel that takes a while to matter; the lane runs
 * these tests again with a module whose folios start 256 references
 * short of overflow (ZCDEV_FAULT=refs), where the kernel log must stay
 * clean, and with one that has no budget (refs-unguarded), where it
 * must not.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

/* The harness has a signal handler that ignores an argument */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#include "zcdev_fixture.h"

/* More than the 256 references a ZCDEV_FAULT=refs folio has left */
#define ROUNDS		400
/* Room in a socket for ROUNDS one-byte sends kept unread */
#define SOCK_BUF	(8 * MIB)

/* What a run of calls came to: successes, clean refusals, and the rest */
struct tally {
	unsigned int ok;
	unsigned int refused;	/* ENOMEM */
	unsigned int failed;
	int err;		/* the first failure's errno */
	const char *what;	/* and its call */
};

static void tally(struct tally *t, ssize_t r, ssize_t want, const char *what)
{
	if (r == want) {
		t->ok++;
	} else if (r < 0 && errno == ENOMEM) {
		t->refused++;
	} else if (!t->failed++) {
		t->err = r < 0 ? errno : 0;
		t->what = what;
	}
}

/* Every call worked or was refused cleanly, and some worked */
static void expect_tally(struct __test_metadata *_metadata,
			 const struct tally *t)
{
	TH_LOG("%u worked, %u refused with ENOMEM", t->ok, t->refused);
	EXPECT_EQ(0U, t->failed)
		TH_LOG("%u failed otherwise, the first: %s: %s",
		       t->failed, t->what, strerror(t->err));
	EXPECT_LT(0U, t->ok);
}

/*
 * What a test splices through: two pipes, an AF_UNIX stream pair whose
 * sender can hold ROUNDS unread sends, and /dev/null; -1 where closed.
 */
struct rig {
	int p[2], q[2], sv[2], null;
};

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
	return 0;
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

/* A pipe that still holds what a refused call left: a new one instead */
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
		/* one buffer; each copy goes on or is refused */
		ASSERT_EQ(1, splice(fd, NULL, x.r.p[1], NULL, 1, 0));
		ASSERT_EQ(0, tee_rounds(&x, out, sock ?
					"splice the copy to the socket" :
					"splice the copy to /dev/null"));
		EXPECT_EQ(1, pipe_bytes(x.r.p[0]));	/* still there */
	} else {
		ASSERT_EQ(0, splice_rounds(&x, fd, out, sock ?
					   "splice to the socket" :
					   "splice to /dev/null"));
		EXPECT_EQ(0U, x.t.refused);	/* each had a fresh buffer */
	}
	expect_tally(_metadata, &x.t);
	if (sock)	/* what the socket kept reads zeros */
		EXPECT_EQ(0, read_zeros(x.r.sv[1], x.sent));
	rig_close(&x.r);
}

/* Each sequence in turn, its rig fresh */
TEST_F(zcdev, references_stay_bounded)
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

TEST_HARNESS_MAIN
