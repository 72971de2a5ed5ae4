// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev's selftests, the module's lifetime: pipe buffers that came from
 * zcdev keep it loaded, and it unloads once they are gone.  As root, with
 * ZCDEV_KO naming the module file: the tests unload and reload it.
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
