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

TEST_HARNESS_MAIN
