// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev's selftests, io_uring: reads into plain, vectored and registered
 * buffers, inline and with IOSQE_ASYNC, and writes.  A program of its own
 * because it needs liburing, which the 32-bit build does without.
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

#include "zcdev_fixture.h"

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

/*
 * An io_uring of 8 entries for a test: false when the kernel has no
 * io_uring, and the test skipped.
 */
static bool ring_init(struct __test_metadata *_metadata, struct io_uring *ring)
{
	int ret = uring_unavailable();

	if (ret)
		SKIP(return false, "io_uring unavailable: %s", strerror(ret));
	ret = io_uring_queue_init(8, ring, 0);
	ASSERT_EQ(0, ret) TH_LOG("io_uring_queue_init: %s", strerror(-ret));
	return true;
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

	if (self->skip || !ring_init(_metadata, &ring))
		return;

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

/* Submit the one request prepared and wait for it: its result, or -errno */
static int uring_wait_one(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	int ret;

	ret = io_uring_submit(ring);
	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	ret = io_uring_wait_cqe(ring, &cqe);
	if (ret)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

/* IORING_OP_SPLICE of n bytes from in to out, no offsets */
static int uring_splice(struct io_uring *ring, int in, int out, size_t n)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_splice(sqe, in, -1, out, -1, n, 0);
	return uring_wait_one(ring);
}

static int uring_tee(struct io_uring *ring, int in, int out, size_t n)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_tee(sqe, in, out, n, 0);
	return uring_wait_one(ring);
}

/*
 * IORING_OP_SPLICE from the device into a pipe, and IORING_OP_TEE of what
 * it got into a second pipe: the counts asked for, and zeros in both.
 */
TEST_F_TIMEOUT(zcdev, uring_splice_tee, 120)
{
	static const size_t sizes[] = { 1, 4095, 4097, 3 * 4096 + 5, 65536 };
	struct io_uring ring;
	int p1[2], p2[2], ret;
	unsigned int i;
	size_t n;

	if (self->skip)
		return;
	if (stock_cannot_splice_read(self->fd, variant->is_stock))
		SKIP(return, "%s cannot splice on this kernel", variant->path);
	if (!ring_init(_metadata, &ring))
		return;
	ASSERT_EQ(0, pipe2(p1, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(p2, O_CLOEXEC));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		n = sizes[i];
		ret = uring_splice(&ring, self->fd, p1[1], n);
		EXPECT_EQ((int)n, ret)
			TH_LOG("splice of %zu: %s", n,
			       ret < 0 ? strerror(-ret) : "short");
		EXPECT_EQ((int)n, pipe_bytes(p1[0]));
		ret = uring_tee(&ring, p1[0], p2[1], n);
		EXPECT_EQ((int)n, ret)
			TH_LOG("tee of %zu: %s", n,
			       ret < 0 ? strerror(-ret) : "short");
		EXPECT_EQ((int)n, pipe_bytes(p2[0]));
		EXPECT_EQ(0, read_zeros(p2[0], n));
		EXPECT_EQ(0, read_zeros(p1[0], n));
		EXPECT_EQ(0, pipe_bytes(p1[0]));
		EXPECT_EQ(0, pipe_bytes(p2[0]));
	}
	/* a tee of part of what is there */
	ASSERT_EQ(4097, uring_splice(&ring, self->fd, p1[1], 4097));
	EXPECT_EQ(100, uring_tee(&ring, p1[0], p2[1], 100));
	EXPECT_EQ(100, pipe_bytes(p2[0]));
	EXPECT_EQ(0, read_zeros(p2[0], 100));
	EXPECT_EQ(0, read_zeros(p1[0], 4097));
	close(p1[0]);
	close(p1[1]);
	close(p2[0]);
	close(p2[1]);
	io_uring_queue_exit(&ring);
}

/* Byte i of what is written into the pipe: never zero */
static unsigned char wpat(size_t i)
{
	return 1 + (i * 7) % 255;
}

/*
 * IORING_OP_SPLICE from a pipe into the device, the pipe holding written
 * data and zero buffers: zczero takes the count asked for and the rest
 * of the pipe is intact; zcfull refuses with ENOSPC and leaves it all.
 */
TEST_F_TIMEOUT(zcdev, uring_splice_into, 120)
{
	const size_t head = 1000, zeros = 2 * 4096 + 1, tail = 300;
	const size_t take = head + zeros + 7;	/* ends in the tail */
	unsigned char wbuf[1300], back[1300];
	struct io_uring ring;
	int p[2], ret, zfd;
	size_t i, left;

	if (self->skip)
		return;
	ret = uring_unavailable();
	if (ret)
		SKIP(return, "io_uring unavailable: %s", strerror(ret));
	if (variant->is_stock && splice_write_errno(self->fd) == EINVAL)
		SKIP(return, "%s cannot be spliced to on this kernel",
		     variant->path);
	zfd = zero_splicer(self->fd, variant->is_stock);
	if (zfd < 0 && variant->is_stock)
		SKIP(return, "%s cannot splice, and zczero is absent",
		     variant->path);
	ASSERT_LE(0, zfd);
	ret = io_uring_queue_init(8, &ring, 0);
	ASSERT_EQ(0, ret) TH_LOG("io_uring_queue_init: %s", strerror(-ret));
	/* non-blocking: a pipe that holds less than it should fails */
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC | O_NONBLOCK));
	for (i = 0; i < sizeof(wbuf); i++)
		wbuf[i] = wpat(i);

	ASSERT_EQ((ssize_t)head, write(p[1], wbuf, head));
	ASSERT_EQ((ssize_t)zeros, splice(zfd, NULL, p[1], NULL, zeros, 0));
	ASSERT_EQ((ssize_t)tail, write(p[1], wbuf + head, tail));
	ret = uring_splice(&ring, p[0], self->fd, take);
	left = head + zeros + tail;
	if (variant->is_full) {
		EXPECT_EQ(-ENOSPC, ret);
		EXPECT_EQ((int)left, pipe_bytes(p[0]));
		/* all there: the data, the zeros, the data */
		memset(back, FILL, sizeof(back));
		EXPECT_EQ((ssize_t)head, read_full(p[0], back, head));
		EXPECT_EQ(0, memcmp(wbuf, back, head));
		EXPECT_EQ(0, read_zeros(p[0], zeros));
		left = tail;
		i = 0;
	} else {
		EXPECT_EQ((int)take, ret) TH_LOG("%s", ret < 0 ?
						 strerror(-ret) : "short");
		left -= take;
		i = take - head - zeros;
	}
	EXPECT_EQ((int)left, pipe_bytes(p[0]));
	memset(back, FILL, sizeof(back));
	EXPECT_EQ((ssize_t)left, read_full(p[0], back, left));
	EXPECT_EQ(0, memcmp(wbuf + head + i, back, left));
	EXPECT_EQ(0, pipe_bytes(p[0]));

	/* more than there is: what there is, zczero waiting for no more */
	ASSERT_EQ((ssize_t)zeros, splice(zfd, NULL, p[1], NULL, zeros, 0));
	ret = uring_splice(&ring, p[0], self->fd, MIB);
	EXPECT_EQ(variant->is_full ? -ENOSPC : (int)zeros, ret);
	EXPECT_EQ(variant->is_full ? (int)zeros : 0, pipe_bytes(p[0]));
	close(zfd);
	close(p[0]);
	close(p[1]);
	io_uring_queue_exit(&ring);
}

/*
 * Reads with IOSQE_ASYNC run in an io-wq worker, which may block: they
 * must return the whole count (read_iter_zero() stops short only for a
 * signal, or to reschedule an IOCB_NOWAIT read, which these are not).
 */
TEST_F_TIMEOUT(zcdev, uring_async_read_whole, 120)
{
	static const size_t sizes[] = { MIB, 8 * MIB, 8 * MIB + 3 };
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	struct iovec iov[2];
	unsigned int i, v;
	struct gbuf b;
	size_t n;
	int ret;

	if (self->skip || !ring_init(_metadata, &ring))
		return;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		n = sizes[i];
		ASSERT_EQ(0, gbuf_init(&b, n, 5));
		for (v = 0; v < 2; v++) {
			gbuf_refill(&b);
			sqe = io_uring_get_sqe(&ring);
			ASSERT_NE(NULL, sqe);
			if (v) {
				iov[0].iov_base = b.p;
				iov[0].iov_len = n / 3;
				iov[1].iov_base = b.p + n / 3;
				iov[1].iov_len = n - n / 3;
				io_uring_prep_readv(sqe, self->fd, iov, 2, 0);
			} else {
				io_uring_prep_read(sqe, self->fd, b.p, n, 0);
			}
			sqe->flags |= IOSQE_ASYNC;
			ret = uring_wait_one(&ring);
			EXPECT_EQ((int)n, ret)
				TH_LOG("%s of %zu: %s", v ? "readv" : "read",
				       n, ret < 0 ? strerror(-ret) : "short");
			EXPECT_EQ(-1, gbuf_bad(&b, ret > 0 ? ret : 0))
				TH_LOG("%s of %zu", v ? "readv" : "read", n);
		}
		gbuf_free(&b);
	}
	io_uring_queue_exit(&ring);
}

TEST_HARNESS_MAIN
