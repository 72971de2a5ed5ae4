// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev's selftests, pinning: however a user wears zcdev's zeroed folios
 * out and holds on to them, at most 16 of them (32 MiB) exist at once.
 *
 * A folio is worn when its page count passes a threshold (2^30 page
 * references; 256 past its start in the build with lab/faults/refs.patch):
 * the next use of a buffer on it moves that buffer to a newer folio, and
 * the old one lives on while anything still points into it.  So for
 * ZCDEV_PIN_SECS seconds (by default 60, or 1/ZCDEV_SCALE of it and no
 * less than 4) the test makes and pins all the folios it can: round after
 * round it splices a 64 KiB buffer into a pipe, holds a one-byte tee'd
 * copy of it in a holding pipe (which pins whichever folio the buffer is
 * on), and sends the buffer into AF_UNIX sockets that nobody reads (a page
 * reference per page, or per send on 6.1), closing the sockets when they
 * are full, which drops their references.  Sends may fail with ENOMEM once
 * no folio may be made: the buffer is then dropped with its pipe.  Nothing
 * else may fail.  MemAvailable is read after each socket, and the test
 * stops early once it has fallen past the bound, before a build without
 * one runs the guest out of memory.
 *
 * At the end, with the sockets closed and the copies still held, the
 * page cache dropped, MemAvailable must have fallen by no more than
 * 32 MiB (the folios) and SLACK_MIB more: what the run leaves behind
 * that is not a folio.  That is the holding pipe's ring (4096 slots of
 * 40 bytes, 160 KiB) and the test's own pipes and memory (well under
 * 1 MiB), the zcdev generations the copies pin (one per quarter of a
 * second, a few hundred bytes each: under 100 KiB a minute), the free
 * pages the two CPUs' per-CPU lists keep (a few MiB at the most in a
 * 2 GiB guest), and slab pages the sockets' buffers grew and that stay
 * partly used when freed (skbuff and unix socket caches: some hundred
 * KiB a socket's worth).  8 MiB covers these several times over, and is
 * a quarter of the folios' own bound: a build without the bound, which
 * would let the test pin a folio per few sends on the refs build, fails
 * it within seconds.  A warm-up round before the first measurement grows
 * those caches first.  On a normal build nothing wears out in a minute
 * (2^30 references would take some 50 GB of sockets' memory), and
 * MemAvailable barely moves; on the refs build the bound is what holds.
 * On a KASAN kernel, freed objects wait in a quarantine of up to 1/32 of
 * memory: run it on a stock kernel.
 *
 * The number of folios pinned cannot be seen from user space; the test
 * reports what it did (sends, copies held, ENOMEMs) and what memory it
 * cost, in folios' worth.
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

#define FOLIO		(2 * MIB)
#define FOLIOS_MAX	16
#define SLACK_MIB	8
#define SEND		(64 * KIB)
#define HOLD_PIPE	(16 * MIB)	/* 4096 slots for one-byte copies */
#define SOCK_BUF	(8 * MIB)
#define PIN_SECS	60

/*
 * Only zczero: the folios are the module's, whichever device spliced
 * them, and the stock devices have none.
 */
FIXTURE(pin) {
	int fd;
	long pipe_max;
};

FIXTURE_VARIANT(pin) {
	DEVICE_VARIANT_FIELDS;
};

FIXTURE_VARIANT_ADD(pin, zczero) { ZCZERO_DEV };

FIXTURE_SETUP(pin)
{
	int err;

	self->pipe_max = -1;
	self->fd = device_open(_metadata, variant->path, false);
	err = pipe_max_raise(HOLD_PIPE, &self->pipe_max);
	ASSERT_EQ(0, err) TH_LOG("pipe-max-size: %s", strerror(err));
}

FIXTURE_TEARDOWN(pin)
{
	if (self->fd >= 0)
		close(self->fd);
	pipe_max_restore(self->pipe_max);
}

static unsigned int pin_secs(void)
{
	const char *s = getenv("ZCDEV_PIN_SECS");
	long n = s ? strtol(s, NULL, 10) : (long)scaled(PIN_SECS, 4);

	return n < 1 ? 1 : n > 3600 ? 3600 : n;
}

struct pinning {
	long start_kb;		/* MemAvailable before, once measured */
	long bound_kb;		/* how far it may fall */
	int dev;
	int a[2];		/* the buffer the sends come from */
	int hold[2];		/* the one-byte copies */
	unsigned long sends, enomem, copies, sockets;
	int err;		/* the first unexpected errno */
	const char *what;	/* and its call */
};

static void unexpected(struct pinning *x, const char *what, int err)
{
	if (!x->err) {
		x->err = err ? err : EIO;
		x->what = what;
	}
}

/*
 * Pipe a, once the sends emptied it, filled again, a copy of its buffer
 * held: false on a failure
 */
static bool refill(struct pinning *x)
{
	ssize_t r;

	if (pipe_bytes(x->a[0]))
		return true;
	r = splice(x->dev, NULL, x->a[1], NULL, SEND, SPLICE_F_NONBLOCK);
	if (r != (ssize_t)SEND) {
		unexpected(x, "splice from the device", errno);
		return false;
	}
	if (tee(x->a[0], x->hold[1], 1, SPLICE_F_NONBLOCK) == 1)
		x->copies++;
	else if (errno != EAGAIN)	/* EAGAIN: the holding pipe is full */
		unexpected(x, "tee into the holding pipe", errno);
	return true;
}

/* Whether MemAvailable fell past twice the bound, once measured */
static bool too_much(struct pinning *x)
{
	if (!x->start_kb ||
	    x->start_kb - meminfo_kb("MemAvailable") <= 2 * x->bound_kb)
		return false;
	unexpected(x, "MemAvailable fell past twice the bound", EOVERFLOW);
	return true;
}

/*
 * One socket pair filled with sends from pipe a, then closed: false when
 * the test must stop
 */
static bool fill_socket(struct pinning *x, long long end)
{
	int sv[2], size = SOCK_BUF;
	bool go_on = true;
	ssize_t r;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
		       sv)) {
		unexpected(x, "socketpair", errno);
		return false;
	}
	if (setsockopt(sv[0], SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)))
		setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	x->sockets++;
	while (now_ms() < end) {
		if (!refill(x)) {
			go_on = false;
			break;
		}
		r = splice(x->a[0], NULL, sv[0], NULL, SEND, SPLICE_F_NONBLOCK);
		if (r < 0 && errno == ENOMEM) {
			/* its folio worn and no new one: a fresh buffer */
			x->enomem++;
			close(x->a[0]);
			close(x->a[1]);
			if (pipe2(x->a, O_CLOEXEC | O_NONBLOCK)) {
				unexpected(x, "a new pipe", errno);
				go_on = false;
			}
			break;
		}
		if (r < 0 && (errno == EAGAIN || errno == ENOBUFS))
			break;	/* full */
		if (r <= 0) {
			unexpected(x, "splice into the socket", errno);
			go_on = false;
			break;
		}
		if (!(++x->sends % 64) && too_much(x)) {
			go_on = false;
			break;
		}
	}
	close(sv[0]);
	close(sv[1]);
	if (too_much(x))
		go_on = false;
	return go_on && !x->err;
}

/* MemAvailable, in kB, once the page cache is dropped */
static long available_kb(void)
{
	vm_drop_caches();
	sleep_ms(200);
	return meminfo_kb("MemAvailable");
}

TEST_F_TIMEOUT(pin, folios_bounded, 3700)
{
	struct pinning x = { .dev = self->fd };
	unsigned int secs = pin_secs();
	long before, after, fell, bound;
	long long end, next;
	int err;

	ASSERT_EQ(0, pipe2(x.a, O_CLOEXEC | O_NONBLOCK));
	ASSERT_EQ(0, pipe2(x.hold, O_CLOEXEC | O_NONBLOCK));
	ASSERT_LE((int)HOLD_PIPE, fcntl(x.hold[1], F_SETPIPE_SZ,
					(int)HOLD_PIPE));

	/* a warm-up: one socket's worth, its copies dropped */
	fill_socket(&x, now_ms() + 5000);
	ASSERT_EQ(0, x.err) TH_LOG("%s: %s", x.what, strerror(x.err));
	ASSERT_EQ(0, pipe_read_zeros(x.hold[0], pipe_bytes(x.hold[0])));
	x.sends = 0;
	x.enomem = 0;
	x.copies = 0;
	x.sockets = 0;

	before = available_kb();
	ASSERT_LT(0, before);
	bound = (FOLIOS_MAX * FOLIO + SLACK_MIB * MIB) / KIB;
	x.start_kb = before;
	x.bound_kb = bound;
	end = now_ms() + secs * 1000LL;
	/* a line every 10 s: the lane ends a guest silent for a minute */
	for (next = now_ms() + 10000; now_ms() < end && fill_socket(&x, end);) {
		if (now_ms() < next)
			continue;
		TH_LOG("%lu sends, %lu copies held, MemAvailable %ld KiB down",
		       x.sends, x.copies, before - meminfo_kb("MemAvailable"));
		next += 10000;
	}
	after = available_kb();
	fell = before - after;
	TH_LOG("%u s: %lu sends into %lu sockets, %lu refused (ENOMEM), %lu copies held",
	       secs, x.sends, x.sockets, x.enomem, x.copies);
	TH_LOG("MemAvailable fell by %ld KiB, %.1f folios' worth", fell,
	       fell / (FOLIO / 1024.0));
	EXPECT_EQ(0, x.err) TH_LOG("%s: %s", x.what, strerror(x.err));
	EXPECT_LE(fell, bound);

	/* what was held reads zeros */
	EXPECT_EQ((int)x.copies, pipe_bytes(x.hold[0]));
	err = pipe_read_zeros(x.hold[0], pipe_bytes(x.hold[0]));
	EXPECT_EQ(0, err) TH_LOG("the copies: %s", strerror(err));
	err = pipe_read_zeros(x.a[0], pipe_bytes(x.a[0]));
	EXPECT_EQ(0, err) TH_LOG("the buffer: %s", strerror(err));
	close(x.a[0]);
	close(x.a[1]);
	close(x.hold[0]);
	close(x.hold[1]);
}

TEST_HARNESS_MAIN
