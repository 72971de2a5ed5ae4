// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev's selftests, a worn zero's replacement when memory is short.
 * ->confirm() of a buffer whose folio holds ZC_REFS_HIGH page references
 * moves the buffer onto the current zero, and when that is the worn one,
 * the task that confirms replaces it (zc_zero_renew(): a struct zc_zero,
 * the largest folio to be had, a generation).  Here those allocations
 * fail: each in turn (fail-nth, as zcdev_inject does), and then every
 * folio of 64 KiB and up, in any task.  The move fails with ENOMEM and
 * leaves the buffer in its pipe, to move on the next try; or it gets
 * past the failure onto a smaller zero, at offset 0 when it does not fit
 * where it was; a buffer larger than any zero to be had fails with
 * ENOMEM, and the kernel log says so; the background renewal finds
 * nothing better, and once memory is back replaces the small zero, and
 * the buffer moves.  Whatever arrives reads zeros.
 *
 * The 2^30 references of a real wear are out of reach: the tests need
 * the refs build (lab/faults/refs.patch, every folio 256 references
 * short), which a socket wears with 16 sends of 64 KiB, and the kernel's
 * fault injection (the lane's debug kernel): the lane's coverage stage
 * runs them.  As root, with ZCDEV_KO naming the module file; they leave
 * zcdev loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>

/* The harness has a signal handler that ignores an argument */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#include "fault_inject.h"
#include "zcdev_fixture.h"

#define WEAR_SEND	(64 * KIB)	/* a buffer sent on: a page reference a page */
#define WEAR_SENDS	16		/* 256 references: a refs build's zero is worn */
#define SOCK_BUF	(8 * MIB)	/* room for what the socket keeps unread */
#define NTH_MAX		100U		/* a move makes three allocations */
#define NOTICE		"no zero of"	/* the kernel log, when a move fails so */

/*
 * A test's pipes and socket: held[] has the buffer that moves, wear[]
 * carries the sends that wear the zero, sv[0] keeps the pages of all
 * that is sent into it, unread, until the test reads sv[1]; -1 where
 * closed.
 */
struct rig {
	int dev;
	int held[2], wear[2], sv[2];
	size_t sent;
};

FIXTURE(worn) {
	struct inject in;
	const char *skip;	/* what the kernel lacks */
	struct rig r;
	int kmsg;
};

FIXTURE_VARIANT(worn) {
	DEVICE_VARIANT_FIELDS;
};

FIXTURE_VARIANT_ADD(worn, zczero) { ZCZERO_DEV };
FIXTURE_VARIANT_ADD(worn, zcfull) { ZCFULL_DEV };

static void rig_close(struct rig *r)
{
	int *fd[] = { &r->dev, &r->held[0], &r->held[1], &r->wear[0],
		      &r->wear[1], &r->sv[0], &r->sv[1] };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fd); i++) {
		if (*fd[i] >= 0)
			close(*fd[i]);
		*fd[i] = -1;
	}
	r->sent = 0;
}

/* zcdev loaded afresh (a zero that nothing wore), the rig open: 0, or errno */
static int rig_fresh(struct rig *r, const char *path)
{
	static const struct timeval stall = { .tv_sec = 20 };
	int size = SOCK_BUF, err;

	rig_close(r);
	err = unload_module(10000);
	if (err && err != ENOENT)
		return err;
	err = load_module(getenv("ZCDEV_KO"), "");
	if (err)
		return err;
	r->dev = open(path, O_RDONLY | O_CLOEXEC);
	if (r->dev < 0 || pipe2(r->held, O_NONBLOCK | O_CLOEXEC) ||
	    pipe2(r->wear, O_NONBLOCK | O_CLOEXEC) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, r->sv) ||
	    setsockopt(r->sv[0], SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) ||
	    setsockopt(r->sv[0], SOL_SOCKET, SO_SNDTIMEO, &stall, sizeof(stall)))
		return errno;
	return 0;
}

/*
 * In held[], one buffer of size bytes, read but for its last left: it
 * lies at offset size - left of its zero.  0, or an errno.
 */
static int rig_hold(struct rig *r, size_t size, size_t left)
{
	if (size > 64 * KIB && fcntl(r->held[1], F_SETPIPE_SZ, (int)size) < 0)
		return errno;
	if (pipe_fill(r->dev, r->held, size) != (long)size)
		return errno ? errno : EIO;
	return pipe_read_zeros(r->held[0], size - left);
}

/* The zero worn: 16 sends of 64 KiB into the socket, which keeps them */
static int rig_wear(struct rig *r)
{
	unsigned int i;

	for (i = 0; i < WEAR_SENDS; i++) {
		if (pipe_fill(r->dev, r->wear, WEAR_SEND) != (long)WEAR_SEND)
			return errno ? errno : EIO;
		if (splice(r->wear[0], NULL, r->sv[0], NULL, WEAR_SEND, 0) !=
		    (ssize_t)WEAR_SEND)
			return errno ? errno : EIO;
		r->sent += WEAR_SEND;
	}
	return 0;
}

/* n bytes spliced from the device read back as zeros: 0, or an errno */
static int rig_splice(struct rig *r, size_t n)
{
	if (pipe_fill(r->dev, r->wear, n) != (long)n)
		return errno ? errno : EIO;
	return pipe_read_zeros(r->wear[0], n);
}

/* The held buffer's n bytes on into the socket: its ->confirm() moves it */
static ssize_t rig_send_held(struct rig *r, size_t n)
{
	ssize_t ret = splice(r->held[0], NULL, r->sv[0], NULL, n,
			     SPLICE_F_NONBLOCK);

	if (ret > 0)
		r->sent += ret;
	return ret;
}

FIXTURE_SETUP(worn)
{
	int err;

	memset(&self->r, -1, sizeof(self->r));
	self->r.sent = 0;
	self->kmsg = -1;
	ASSERT_TRUE(getenv("ZCDEV_KO") && *getenv("ZCDEV_KO"))
		TH_LOG("set ZCDEV_KO to the module file: the tests load it");
	self->skip = inject_on(&self->in, &err);
	ASSERT_EQ(0, err) TH_LOG("fault injection: %s: %s", self->skip, strerror(err));
	if (self->skip)
		SKIP(return, "%s", self->skip);
	self->kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, self->kmsg) TH_LOG("/dev/kmsg: %s", strerror(errno));
}

FIXTURE_TEARDOWN(worn)
{
	rig_close(&self->r);
	inject_off(&self->in);
	if (self->kmsg >= 0)
		close(self->kmsg);
	if (access("/sys/module/" MODNAME, F_OK))
		load_module(getenv("ZCDEV_KO"), "");
}

/*
 * Each allocation of the move in turn fails, until one makes none that
 * fails.  The buffer is a 2 MiB buffer's last byte: the smaller folio
 * that a failed 2 MiB one leaves takes it at offset 0.
 */
TEST_F_TIMEOUT(worn, each_allocation_of_a_move_fails, 600)
{
	unsigned int n, failed = 0, moved = 0, notices = 0;
	struct rig *r = &self->r;
	bool hit = true;
	ssize_t ret;
	int err;

	if (self->skip)
		return;		/* the 6.1 harness runs a test its setup skipped */
	for (n = 1; hit; n++) {
		ASSERT_GT(NTH_MAX, n) TH_LOG("still failing moves at %u", n);
		err = rig_fresh(r, variant->path);
		ASSERT_EQ(0, err) TH_LOG("zcdev loaded, pipes and sockets: %s", strerror(err));
		err = rig_hold(r, 2 * MIB, 1);
		ASSERT_EQ(0, err) TH_LOG("a 2 MiB buffer, read to its last byte: %s",
					 strerror(err));
		err = rig_wear(r);
		ASSERT_EQ(0, err) TH_LOG("256 references into the socket: %s", strerror(err));

		lseek(self->kmsg, 0, SEEK_END);
		ASSERT_EQ(0, inject_arm(n));
		ret = rig_send_held(r, 1);
		err = errno;
		hit = inject_disarm();
		notices += kmsg_says(self->kmsg, NOTICE);
		ASSERT_TRUE(hit || n > 1)
			TH_LOG("the held buffer's move made no allocation: %s",
			       "its zero did not wear at 256 references (the refs build, lab/faults/refs.patch, wears it there)");
		if (ret < 0) {
			failed++;
			ASSERT_TRUE(hit) TH_LOG("a move failed with no failure made: %s",
						strerror(err));
			ASSERT_EQ(ENOMEM, err) TH_LOG("allocation %u failed, the move said %s",
						      n, strerror(err));
			ASSERT_EQ(1, pipe_bytes(r->held[0]))
				TH_LOG("the buffer that failed to move left its pipe");
			ret = rig_send_held(r, 1);
			err = errno;
		} else {
			moved += hit;
		}
		ASSERT_EQ(1, ret) TH_LOG("allocation %u %s, the move gave %zd: %s", n,
					 hit ? "failed" : "did not fail", ret,
					 ret < 0 ? strerror(err) : "");
		EXPECT_EQ(0, read_zeros(r->sv[1], r->sent));
	}
	TH_LOG("%u allocations failed in turn: %u moves failed with ENOMEM (%u %s), %u got past it",
	       n - 2, failed, notices, "said so", moved);
	/* the injection is live, and both outcomes were seen */
	EXPECT_LT(0U, failed);
	EXPECT_LT(0U, moved);
	EXPECT_LT(0U, notices);
}

/* The fault attributes for every folio of 64 KiB and up to fail, or none */
static int folios_fail(struct inject *in, bool on)
{
	static const char *const attrs[][2] = {
		{ "interval", "1" }, { "times", "-1" }, { "space", "0" },
		{ "task-filter", "N" },
	};
	unsigned int i;
	int err = 0;

	for (i = 0; on && !err && i < ARRAY_SIZE(attrs); i++)
		err = inject_set(in, "fail_page_alloc", attrs[i][0], attrs[i][1]);
	return err ? err : inject_set(in, "fail_page_alloc", "probability",
				      on ? "100" : "0");
}

/*
 * Every folio of 64 KiB and up fails, in any task: the worn zero's
 * replacement is a 32 KiB folio.  A buffer's last byte moves onto it, at
 * offset 0; a 48 KiB buffer fails with ENOMEM, and the kernel log says
 * so.  The background renewal that the smaller zero asks for finds
 * nothing better.  With memory back, it replaces the zero, and the
 * 48 KiB buffer moves, tried every 300 ms for up to a minute.
 */
TEST_F_TIMEOUT(worn, folios_fail, 300)
{
	struct rig *r = &self->r;
	int small[2], err, tries;
	ssize_t ret;

	if (self->skip)
		return;
	err = rig_fresh(r, variant->path);
	ASSERT_EQ(0, err) TH_LOG("zcdev loaded, pipes and sockets: %s", strerror(err));
	ASSERT_EQ(0, pipe2(small, O_NONBLOCK | O_CLOEXEC));
	ASSERT_EQ((long)(64 * KIB), pipe_fill(r->dev, small, 64 * KIB));
	ASSERT_EQ(0, pipe_read_zeros(small[0], 64 * KIB - 1));
	err = rig_hold(r, 64 * KIB, 48 * KIB);
	ASSERT_EQ(0, err) TH_LOG("a 64 KiB buffer, read to its last 48 KiB: %s",
				 strerror(err));
	err = rig_wear(r);
	ASSERT_EQ(0, err) TH_LOG("256 references into the socket: %s", strerror(err));

	err = folios_fail(&self->in, true);
	ASSERT_EQ(0, err) TH_LOG("fail_page_alloc: %s", strerror(err));
	ret = splice(small[0], NULL, r->sv[0], NULL, 1, SPLICE_F_NONBLOCK);
	err = errno;
	close(small[0]);
	close(small[1]);
	ASSERT_EQ(1, ret) TH_LOG("a byte's move onto a smaller zero: %s",
				 ret < 0 ? strerror(err) : "nothing");
	r->sent++;
	lseek(self->kmsg, 0, SEEK_END);
	ret = rig_send_held(r, 48 * KIB);
	err = errno;
	EXPECT_EQ(-1, ret) TH_LOG("48 KiB moved while no zero could hold them");
	EXPECT_EQ(ENOMEM, ret < 0 ? err : 0)
		TH_LOG("the move said %s", ret < 0 ? strerror(err) : "nothing: it moved");
	EXPECT_TRUE(kmsg_says(self->kmsg, NOTICE " 49152 bytes"))
		TH_LOG("the kernel log did not say why the move failed");
	err = rig_splice(r, 64 * KIB);
	ASSERT_EQ(0, err) TH_LOG("a splice while folios fail: %s", strerror(err));
	sleep_ms(500);	/* the renewal it asked for, failing */

	err = folios_fail(&self->in, false);
	ASSERT_EQ(0, err) TH_LOG("fail_page_alloc: %s", strerror(err));
	for (tries = 0; tries < 200 && ret != (ssize_t)(48 * KIB); tries++) {
		sleep_ms(300);	/* a generation ends, the next asks for a renewal */
		err = rig_splice(r, 4 * KIB);
		ASSERT_EQ(0, err) TH_LOG("a splice: %s", strerror(err));
		ret = rig_send_held(r, 48 * KIB);
	}
	ASSERT_EQ((ssize_t)(48 * KIB), ret)
		TH_LOG("with memory back, the 48 KiB buffer did not move in a minute");
	EXPECT_EQ(0, read_zeros(r->sv[1], r->sent));
}

TEST_HARNESS_MAIN
