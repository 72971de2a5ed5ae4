// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev's selftests, splice: zero pages spliced out of the devices into
 * pipes, files and sockets, tee'd and vmspliced, the shared zero page
 * never written through them; sendfile and copy_file_range.  Pipes
 * drained into the devices are zcdev_drain's.
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

/* The harness has a signal handler that ignores an argument */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#include "zcdev_fixture.h"

/*
 * Whether the device has something to test: false when it is absent, or
 * a stock one that cannot splice on this kernel (the test skipped).
 */
static bool splices(struct __test_metadata *_metadata,
		    struct _test_data_zcdev *self,
		    const struct _fixture_variant_zcdev *variant)
{
	if (self->skip)
		return false;
	if (stock_cannot_splice_read(self->fd, variant->is_stock))
		SKIP(return false, "%s cannot splice on this kernel", variant->path);
	return true;
}

/*
 * A splice test's start: false when there is nothing to test (the device
 * is absent, or a stock one that cannot splice on this kernel, and the
 * test skipped); else a new pipe in p.
 */
static bool splice_ready(struct __test_metadata *_metadata,
			 struct _test_data_zcdev *self,
			 const struct _fixture_variant_zcdev *variant, int p[2])
{
	if (!splices(_metadata, self, variant))
		return false;
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	return true;
}

TEST_F_TIMEOUT(zcdev, splice_sizes, 240)
{
	static const size_t sizes[] = {
		1, 4095, 4096, 4097, 3 * 4096 + 5, 65536,
	};
	unsigned int i, k;
	ssize_t r, n;
	int p[2];
	loff_t off;

	if (!splice_ready(_metadata, self, variant, p))
		return;
	/*
	 * What came is read back, not what was asked: a short splice fails
	 * the test, and must not leave its read waiting for bytes that will
	 * never come (stock 7.x-rt's /dev/full has been seen to give 4096
	 * bytes of 4097 under load, its pages allocated in bulk).
	 */
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		r = splice(self->fd, NULL, p[1], NULL, sizes[i], 0);
		EXPECT_EQ((ssize_t)sizes[i], r)
			TH_LOG("splice of %zu: %s", sizes[i], strerror(errno));
		EXPECT_EQ((int)sizes[i], pipe_bytes(p[0]));
		EXPECT_EQ(0, read_zeros(p[0], r > 0 ? r : 0));
		EXPECT_EQ(0, pipe_bytes(p[0]));
	}
	/* ten 1-byte splices, then read back at once */
	for (k = 0, n = 0; k < 10; k++) {
		r = splice(self->fd, NULL, p[1], NULL, 1, 0);
		EXPECT_EQ(1, r);
		n += r > 0 ? r : 0;
	}
	EXPECT_EQ(10, pipe_bytes(p[0]));
	EXPECT_EQ(0, read_zeros(p[0], n));
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

/*
 * What a pipe of size bytes takes of a device whose buffers carry up to
 * buf bytes, one 1 MiB splice after another while a slot is free: the
 * VFS gives each splice a page for each free slot, and the device fills
 * them into as few buffers as it can.  Pages alone: exactly the size.
 */
static long fill_pipe_expect(long size, long buf)
{
	long slots = size / 4096, used = 0, total = 0, give;

	while (used < slots) {
		give = (slots - used) * 4096;
		if (give > (long)MIB)
			give = MIB;
		total += give;
		used += (give + buf - 1) / buf;
	}
	return total;
}

TEST_F_TIMEOUT(zcdev, splice_fill_pipe, 120)
{
	long buf = splice_buffer_size(variant->is_stock);
	int p[2], size, err;
	long total;

	if (!splice_ready(_metadata, self, variant, p))
		return;
	size = fcntl(p[1], F_GETPIPE_SZ);
	ASSERT_LT(0, size);
	EXPECT_EQ(65536, size);
	total = fill_pipe(self->fd, p, &err);
	EXPECT_EQ(fill_pipe_expect(size, buf), total)
		TH_LOG("buffers of up to %ld bytes", buf);
	EXPECT_EQ(EAGAIN, err);
	EXPECT_EQ(total, pipe_bytes(p[0]));
	/* a pipe made non-blocking refuses a full pipe as well */
	ASSERT_EQ(0, fcntl(p[1], F_SETFL, O_NONBLOCK));
	errno = 0;
	EXPECT_EQ(-1, splice(self->fd, NULL, p[1], NULL, 1, 0));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(0, read_zeros(p[0], total));
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
	EXPECT_EQ(fill_pipe_expect(size, buf), total)
		TH_LOG("buffers of up to %ld bytes", buf);
	EXPECT_EQ(EAGAIN, err);
	EXPECT_EQ(total, pipe_bytes(p[0]));
	EXPECT_EQ(0, read_zeros(p[0], total));
	EXPECT_EQ(0, pipe_bytes(p[0]));
	close(p[0]);
	close(p[1]);
}

/*
 * What a user can see of the buffer size: a 1 MiB splice into a 1 MiB
 * pipe is one buffer of zcdev's (256 of a page each for the stock
 * devices and splice_buffer=4096), so the pipe shrinks to one page
 * under it with all its bytes intact, where pages refuse with EBUSY.
 * FIONREAD counts bytes, F_GETPIPE_SZ the ring; partial drains, tees and
 * reads of the large buffer go on from where the last one stopped.
 */
TEST_F_TIMEOUT(zcdev, splice_buffer_size, 120)
{
	long buf = splice_buffer_size(variant->is_stock);
	int p[2], q[2], null, size;

	if (!splice_ready(_metadata, self, variant, p))
		return;
	ASSERT_EQ(0, pipe2(q, O_CLOEXEC));
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, null);
	size = fcntl(p[1], F_SETPIPE_SZ, MIB);
	if (size < 0 && errno == EPERM)
		SKIP(goto out, "F_SETPIPE_SZ of 1 MiB not allowed");
	ASSERT_EQ((int)MIB, size);
	ASSERT_EQ((int)MIB, fcntl(q[1], F_SETPIPE_SZ, MIB));
	ASSERT_EQ((ssize_t)MIB, splice(self->fd, NULL, p[1], NULL, MIB, 0));
	EXPECT_EQ((int)MIB, pipe_bytes(p[0]));
	EXPECT_EQ((int)MIB, fcntl(p[0], F_GETPIPE_SZ));

	errno = 0;
	size = fcntl(p[0], F_SETPIPE_SZ, 4096);
	if (buf >= (long)MIB) {
		EXPECT_EQ(4096, size) TH_LOG("%s", strerror(errno));
	} else {
		EXPECT_EQ(-1, size);
		EXPECT_EQ(EBUSY, errno);
	}
	EXPECT_EQ((int)MIB, pipe_bytes(p[0]));

	/* a page and a byte to /dev/null, then a tee and a read of parts */
	EXPECT_EQ(4097, splice(p[0], NULL, null, NULL, 4097, 0));
	EXPECT_EQ((int)MIB - 4097, pipe_bytes(p[0]));
	EXPECT_EQ(300000, tee(p[0], q[1], 300000, 0));
	EXPECT_EQ(0, read_zeros(q[0], 300000));
	EXPECT_EQ(0, read_zeros(p[0], 123457));
	EXPECT_EQ((int)MIB - 4097 - 123457, pipe_bytes(p[0]));
	EXPECT_EQ(0, read_zeros(p[0], MIB - 4097 - 123457));
	EXPECT_EQ(0, pipe_bytes(p[0]));
	EXPECT_EQ(0, pipe_bytes(q[0]));
out:
	close(null);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

TEST_F_TIMEOUT(zcdev, splice_tee_vmsplice, 120)
{
	size_t n = 3 * 4096 + 5;
	int p1[2], p2[2];
	struct iovec iov;
	struct gbuf b;

	if (!splices(_metadata, self, variant))
		return;
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

	if (!splice_ready(_metadata, self, variant, p))
		return;
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

	if (!splice_ready(_metadata, self, variant, p))
		return;
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

	if (!splices(_metadata, self, variant))
		return;
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
TEST_F_TIMEOUT(zcdev, splice_into, 240)
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
 * A tmpfs file of n bytes: FILL, or with fill < 0 a pattern that is
 * nowhere zero.
 */
static int byte_file(size_t n, int fill)
{
	unsigned char *b = malloc(n);
	int f = tmpfs_file();
	size_t i;

	if (!b || f < 0)
		goto fail;
	for (i = 0; i < n; i++)
		b[i] = 1 + (i * 7 + 183) % 255;
	if (fill >= 0)
		memset(b, fill, n);
	if (pwrite(f, b, n, 0) != (ssize_t)n)
		goto fail;
	free(b);
	return f;
fail:
	free(b);
	if (f >= 0)
		close(f);
	return -1;
}

/*
 * sendfile() from a tmpfs file into the device: zczero consumes all and
 * the file's offset (or the one given) moves on by the count; zcfull
 * refuses with ENOSPC and leaves the offset where it was.  One call each:
 * the kernel goes round its internal pipe until the count is done, short
 * only if the device takes less than it is given.
 */
TEST_F_TIMEOUT(zcdev, sendfile_into, 120)
{
	static const size_t sizes[] = { 1, 4095, 4097, 200 * KIB + 3 };
	size_t flen = 256 * KIB;
	unsigned int i;
	off_t pos = 0;
	loff_t off;
	ssize_t r;
	int f;

	if (self->skip)
		return;
	if (variant->is_stock && splice_write_errno(self->fd) == EINVAL)
		SKIP(return, "%s cannot be spliced to on this kernel",
		     variant->path);
	f = byte_file(flen, -1);
	ASSERT_LE(0, f);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		/* from the file's own offset */
		errno = 0;
		r = sendfile(self->fd, f, NULL, sizes[i]);
		if (variant->is_full) {
			EXPECT_EQ(-1, r);
			EXPECT_EQ(ENOSPC, errno);
		} else {
			EXPECT_EQ((ssize_t)sizes[i], r)
				TH_LOG("%zu: %s", sizes[i], strerror(errno));
			pos += sizes[i];
		}
		EXPECT_EQ(pos, lseek(f, 0, SEEK_CUR));
		/* from an offset given, the file's own unmoved */
		off = 5;
		errno = 0;
		r = sendfile(self->fd, f, &off, sizes[i]);
		if (variant->is_full) {
			EXPECT_EQ(-1, r);
			EXPECT_EQ(ENOSPC, errno);
			EXPECT_EQ(5, off);
		} else {
			EXPECT_EQ((ssize_t)sizes[i], r)
				TH_LOG("%zu at 5: %s", sizes[i],
				       strerror(errno));
			EXPECT_EQ((loff_t)(5 + sizes[i]), off);
		}
		EXPECT_EQ(pos, lseek(f, 0, SEEK_CUR));
		ASSERT_EQ(0, lseek(f, 0, SEEK_SET));
		pos = 0;
	}
	/* at the end of the file there is nothing to send, nor to refuse */
	ASSERT_EQ((off_t)flen, lseek(f, 0, SEEK_END));
	EXPECT_EQ(0, sendfile(self->fd, f, NULL, 4096))
		TH_LOG("%s", strerror(errno));
	close(f);
}

/*
 * sendfile() from the device into itself, through one file and through
 * two: zczero returns the whole count from one call, zcfull refuses with
 * ENOSPC.
 */
TEST_F_TIMEOUT(zcdev, sendfile_self, 120)
{
	static const size_t sizes[] = { 1, 4097, MIB + 3, 8 * MIB + 1 };
	unsigned int i, two;
	ssize_t r;
	int other;

	if (!splices(_metadata, self, variant))
		return;
	if (variant->is_stock && splice_write_errno(self->fd) == EINVAL)
		SKIP(return, "%s cannot be spliced to on this kernel",
		     variant->path);
	other = open(variant->path, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, other);
	for (two = 0; two < 2; two++) {
		for (i = 0; i < ARRAY_SIZE(sizes); i++) {
			errno = 0;
			r = sendfile(self->fd, two ? other : self->fd, NULL,
				     sizes[i]);
			if (variant->is_full) {
				EXPECT_EQ(-1, r);
				EXPECT_EQ(ENOSPC, errno);
			} else {
				EXPECT_EQ((ssize_t)sizes[i], r)
					TH_LOG("%zu through %s: %s", sizes[i],
					       two ? "two files" : "one",
					       strerror(errno));
			}
		}
	}
	close(other);
}

/*
 * sendfile() from the device into TCP over loopback, from its own offset
 * and from one given: a thread receives, counts, and checks every byte.
 */
TEST_F_TIMEOUT(zcdev, sendfile_tcp, 120)
{
	static const size_t sizes[] = {
		1, 4095, 4097, 64 * KIB + 1, MIB + 3, 4 * MIB,
	};
	size_t sent = 0;
	struct sink sk;
	unsigned int i;
	int sv[2], err;
	loff_t off;
	ssize_t r;

	if (!splices(_metadata, self, variant))
		return;
	err = sock_pair(true, sv);
	ASSERT_EQ(0, err) TH_LOG("TCP over 127.0.0.1: %s", strerror(err));
	memset(&sk, 0, sizeof(sk));
	sk.fd = sv[1];
	ASSERT_EQ(0, pthread_create(&sk.thread, NULL, sink_main, &sk));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		r = sendfile_full(sv[0], self->fd, sizes[i]);
		EXPECT_EQ((ssize_t)sizes[i], r)
			TH_LOG("%zu: %s", sizes[i], strerror(errno));
		sent += r > 0 ? r : 0;
		off = 4097;
		r = sendfile(sv[0], self->fd, &off, sizes[i]);
		EXPECT_EQ((ssize_t)sizes[i], r)
			TH_LOG("%zu at 4097: %s", sizes[i], strerror(errno));
		sent += r > 0 ? r : 0;
	}
	shutdown(sv[0], SHUT_WR);
	pthread_join(sk.thread, NULL);
	EXPECT_EQ(0, sk.err);
	EXPECT_EQ(sent, sk.total);
	EXPECT_EQ(0UL, sk.bad);
	close(sv[0]);
	close(sv[1]);
}

/* Whether two files hold the same bytes, as far as n */
static bool same_bytes(int a, int b, size_t n)
{
	unsigned char *x = malloc(n), *y = malloc(n);
	ssize_t na = -1, nb = -2;
	bool same;

	if (x && y) {
		na = pread(a, x, n, 0);
		nb = pread(b, y, n, 0);
	}
	same = na == nb && na >= 0 && !memcmp(x, y, na);
	free(x);
	free(y);
	return same;
}

/* copy_file_range() of n bytes from dev to f, or from f to dev */
static struct outcome dev_copy(int dev, loff_t *doff, int f, loff_t *foff,
			       size_t n, bool from_dev)
{
	errno = 0;
	if (from_dev)
		return outcome(copy_file_range(dev, doff, f, foff, n, 0));
	return outcome(copy_file_range(f, foff, dev, doff, n, 0));
}

/*
 * copy_file_range() between the device and a tmpfs file, either way, with
 * offsets and without: the same return value or errno as the stock
 * device of the running kernel gives (self->ref), the same bytes in the
 * file and the same offsets after.
 */
TEST_F_TIMEOUT(zcdev, copy_file_range_like_stock, 240)
{
	static const size_t sizes[] = { 0, 1, 4097, MIB };
	const size_t flen = 64 * KIB;
	loff_t doff, roff, fdoff, froff;
	struct outcome dv, st;
	unsigned int i, way;
	bool from_dev, offs;
	int fd, fr;

	if (self->skip)
		return;
	for (way = 0; way < 4; way++) {
		from_dev = way & 1;
		offs = way & 2;
		for (i = 0; i < ARRAY_SIZE(sizes); i++) {
			fd = byte_file(flen, FILL);
			fr = byte_file(flen, FILL);
			ASSERT_LE(0, fd);
			ASSERT_LE(0, fr);
			doff = 3;
			roff = 3;
			fdoff = 7;
			froff = 7;
			dv = dev_copy(self->fd, offs ? &doff : NULL, fd,
				      offs ? &fdoff : NULL, sizes[i], from_dev);
			st = dev_copy(self->ref, offs ? &roff : NULL, fr,
				      offs ? &froff : NULL, sizes[i], from_dev);
			EXPECT_EQ(st.ret, dv.ret)
				TH_LOG("%s %zu%s", from_dev ? "from" : "into",
				       sizes[i], offs ? " at offsets" : "");
			EXPECT_EQ(st.err, dv.err)
				TH_LOG("%s %zu%s: %s against %s",
				       from_dev ? "from" : "into", sizes[i],
				       offs ? " at offsets" : "",
				       strerror(dv.err), strerror(st.err));
			EXPECT_EQ(roff, doff);
			EXPECT_EQ(froff, fdoff);
			EXPECT_EQ(lseek(fr, 0, SEEK_CUR),
				  lseek(fd, 0, SEEK_CUR));
			EXPECT_TRUE(same_bytes(fd, fr, flen + MIB));
			close(fd);
			close(fr);
		}
	}
}

TEST_HARNESS_MAIN

