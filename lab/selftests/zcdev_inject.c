// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev's selftests, its failures: each allocation that zcdev's load and
 * its splices make fails in turn, through the kernel's fault injection
 * (/proc/thread-self/fail-nth: of the allocations that may fail, the
 * nth the task makes does).  A load that fails says ENOMEM and leaves
 * nothing behind: no module, device region, class or node.  A load that
 * gets past its failure (a smaller folio, a uevent not sent) has working
 * devices.  A splice that cannot start a generation fails with ENOMEM,
 * never with a short count or an end of file, and the next one works.
 * What a failed load leaked, kmemleak finds: the lane's guest asks it
 * after the selftests (lab/guest/check.sh).
 *
 * Only allocations made on a stack that passes through module code may
 * fail, and of the page allocator's only zcdev's folios (fault_inject.c).
 *
 * It needs fault injection (CONFIG_FAULT_INJECTION, FAILSLAB,
 * FAIL_PAGE_ALLOC, FAULT_INJECTION_DEBUG_FS and
 * FAULT_INJECTION_STACKTRACE_FILTER), which the lane's debug kernel has
 * and Debian's kernels do not: it is not in run_kselftest.sh's list, and
 * the lane runs it on the debug kernel.  As root, with ZCDEV_KO naming
 * the module file; it leaves zcdev loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

/* The harness has a signal handler that ignores an argument */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#include "fault_inject.h"
#include "zcdev_fixture.h"

#define NTH_MAX		1000U	/* zcdev's load makes about a hundred */

struct zc_inject {
	struct inject in;
	int ko;			/* ZCDEV_KO */
	const char *skip;	/* what the kernel lacks */
};

/* Fault injection on, ZCDEV_KO open: NULL, or what the kernel lacks */
static const char *zc_inject_on(struct __test_metadata *_metadata,
				struct zc_inject *zi)
{
	const char *ko = getenv("ZCDEV_KO"), *why;
	int err;

	ASSERT_TRUE(ko && *ko) TH_LOG("set ZCDEV_KO to the module file: the test loads it");
	zi->ko = open(ko, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, zi->ko) TH_LOG("%s: %s", ko, strerror(errno));
	why = inject_on(&zi->in, &err);
	ASSERT_EQ(0, err) TH_LOG("fault injection: %s: %s", why, strerror(err));
	return why;
}

static void zc_inject_off(struct zc_inject *zi)
{
	inject_off(&zi->in);
	if (zi->ko >= 0)
		close(zi->ko);
	if (access("/sys/module/" MODNAME, F_OK))
		load_module(getenv("ZCDEV_KO"), "");
}

/* finit_module() with allocation n failing: 0, or the errno; *hit */
static int load_nth(const struct zc_inject *zi, unsigned int n, bool *hit)
{
	int err = inject_arm(n);

	if (err)
		return err;
	if (syscall(SYS_finit_module, zi->ko, "", 0))
		err = errno;
	*hit = inject_disarm();
	return err;
}

/* After a failed load: what of zcdev is left, or NULL */
static const char *left_behind(void)
{
	if (!access("/sys/module/" MODNAME, F_OK))
		return "the module";
	if (chrdev_major(MODNAME) >= 0)
		return "its device region, in /proc/devices";
	if (!access("/sys/class/" MODNAME, F_OK))
		return "its class";
	if (!access("/dev/zczero", F_OK) || !access("/dev/zcfull", F_OK))
		return "a device node";
	return NULL;
}

/* 64 KiB spliced from dev read back as zeros: 0, or an errno */
static int splice_zeros(int dev)
{
	int p[2], err;

	if (pipe2(p, O_NONBLOCK | O_CLOEXEC))
		return errno;
	if (pipe_fill(dev, p, 64 * KIB) != 64 * KIB)
		err = errno ? errno : EIO;
	else
		err = pipe_read_zeros(p[0], 64 * KIB);
	close(p[0]);
	close(p[1]);
	return err;
}

/*
 * After a load: both devices read zeros, and with @splice splice them
 * too (which starts a generation); 0, or an errno
 */
static int devices_work(bool splice)
{
	static const char *const nodes[] = { "/dev/zczero", "/dev/zcfull" };
	unsigned int i;
	int fd, err = 0;

	for (i = 0; i < ARRAY_SIZE(nodes) && !err; i++) {
		fd = open(nodes[i], O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return errno;
		if (read_zeros(fd, 64 * KIB))
			err = EILSEQ;
		else if (splice)
			err = splice_zeros(fd);
		close(fd);
	}
	return err;
}

FIXTURE(load) {
	struct zc_inject in;
};

FIXTURE_SETUP(load)
{
	int err;

	self->in.ko = -1;
	self->in.skip = zc_inject_on(_metadata, &self->in);
	if (self->in.skip)
		SKIP(return, "%s", self->in.skip);
	err = unload_module(10000);
	ASSERT_TRUE(!err || err == ENOENT) TH_LOG("unloading: %s", strerror(err));
}

FIXTURE_TEARDOWN(load)
{
	zc_inject_off(&self->in);
}

/*
 * Every allocation of zcdev's load fails in turn, until a load makes
 * none that fails: the first n loads fail or get past it, the last one
 * loads as always.  A load that got past its failure reads zeros; if
 * its zero is smaller than asked for (the folio's allocation failed, and
 * the kernel log says so), it splices too: the generation that starts
 * replaces the zero in the background, which the test gives half a
 * second before the unload, which would cancel it.
 */
TEST_F_TIMEOUT(load, each_allocation_fails, 900)
{
	unsigned int n, failed = 0, survived = 0;
	bool hit = true, smaller;
	const char *left;
	int err, kmsg;

	if (self->in.skip)
		return;		/* the 6.1 harness runs a test its setup skipped */
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, kmsg) TH_LOG("/dev/kmsg: %s", strerror(errno));
	for (n = 1; hit; n++) {
		ASSERT_GT(NTH_MAX, n) TH_LOG("still failing loads at %u", n);
		lseek(kmsg, 0, SEEK_END);
		err = load_nth(&self->in, n, &hit);
		if (err) {
			failed++;
			ASSERT_TRUE(hit)
				TH_LOG("load %u failed with no failure made: %s", n, strerror(err));
			ASSERT_EQ(ENOMEM, err)
				TH_LOG("allocation %u failed, the load said %s", n, strerror(err));
			left = left_behind();
			ASSERT_EQ(NULL, left)
				TH_LOG("allocation %u failed the load, which left %s", n, left);
			continue;
		}
		survived += hit;
		smaller = kmsg_says(kmsg, "bytes for now");
		err = devices_work(smaller);
		ASSERT_EQ(0, err)
			TH_LOG("allocation %u failed, zcdev loaded: %s", n, strerror(err));
		if (smaller)
			sleep_ms(500);
		err = unload_module(10000);
		ASSERT_EQ(0, err) TH_LOG("unloading: %s", strerror(err));
	}
	close(kmsg);
	TH_LOG("%u allocations failed in turn: %u loads failed with ENOMEM, %u got past it",
	       n - 2, failed, survived);
	/* the injection is live: some allocation was zcdev's to fail */
	EXPECT_LT(0U, failed);
}

FIXTURE(splice) {
	struct zc_inject in;
};

FIXTURE_VARIANT(splice) {
	DEVICE_VARIANT_FIELDS;
};

FIXTURE_VARIANT_ADD(splice, zczero) { ZCZERO_DEV };
FIXTURE_VARIANT_ADD(splice, zcfull) { ZCFULL_DEV };

FIXTURE_SETUP(splice)
{
	self->in.ko = -1;
	self->in.skip = zc_inject_on(_metadata, &self->in);
	if (self->in.skip)
		SKIP(return, "%s", self->in.skip);
}

FIXTURE_TEARDOWN(splice)
{
	zc_inject_off(&self->in);
}

/*
 * Every allocation of a splice that starts a generation fails in turn:
 * the splice fails with ENOMEM, the next one works.  zcdev is loaded
 * afresh for each, so that no generation is there to take.
 */
TEST_F_TIMEOUT(splice, each_allocation_fails, 300)
{
	unsigned int n, failed = 0;
	bool hit = true;
	int dev, p[2], err;
	ssize_t r;

	if (self->in.skip)
		return;
	for (n = 1; hit; n++) {
		ASSERT_GT(NTH_MAX, n) TH_LOG("still failing splices at %u", n);
		err = unload_module(10000);
		ASSERT_TRUE(!err || err == ENOENT) TH_LOG("unloading: %s", strerror(err));
		err = load_module(getenv("ZCDEV_KO"), "");
		ASSERT_EQ(0, err) TH_LOG("loading: %s", strerror(err));
		dev = open(variant->path, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, dev) TH_LOG("%s: %s", variant->path, strerror(errno));
		ASSERT_EQ(0, pipe2(p, O_NONBLOCK | O_CLOEXEC));

		ASSERT_EQ(0, inject_arm(n));
		r = splice(dev, NULL, p[1], NULL, 64 * KIB, SPLICE_F_NONBLOCK);
		err = errno;
		hit = inject_disarm();
		if (r < 0) {
			failed++;
			ASSERT_TRUE(hit) TH_LOG("splice %u failed with no failure made: %s",
						n, strerror(err));
			ASSERT_EQ(ENOMEM, err) TH_LOG("allocation %u failed, the splice said %s",
						      n, strerror(err));
			r = splice(dev, NULL, p[1], NULL, 64 * KIB, SPLICE_F_NONBLOCK);
			err = errno;
		}
		ASSERT_EQ((ssize_t)(64 * KIB), r)
			TH_LOG("allocation %u %s, a splice gave %zd: %s", n,
			       hit ? "failed" : "did not fail", r, r < 0 ? strerror(err) : "");
		EXPECT_EQ(0, pipe_read_zeros(p[0], r));
		close(p[0]);
		close(p[1]);
		close(dev);
	}
	TH_LOG("%u allocations failed in turn, %u of them failed the splice", n - 2, failed);
	EXPECT_LT(0U, failed);
}

TEST_HARNESS_MAIN
