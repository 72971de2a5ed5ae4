// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev's selftests, the fallback: when no zeroed folio can be had,
 * splices hand out the kernel's zero page, a page a buffer, and a later
 * generation (a quarter of a second on) tries again; the large buffers
 * come back by themselves.
 *
 * What user space sees of it: a default pipe has 16 slots, and the VFS
 * caps a splice at 16 pages.  With page-sized buffers one splice fills
 * all 16 slots with 64 KiB and a second, non-blocking, finds none free
 * (EAGAIN); with large ones the first is one buffer of 64 KiB and the
 * second has 15 slots to fill.  The test probes so every 100 ms for up
 * to 10 s, until the large buffers are there: on a normal build at the
 * first probe.  The stock devices, the references, always splice a page
 * a buffer (where they splice at all): the probe must say so, which
 * keeps it honest; so must zcdev loaded with splice_buffer=4096.
 *
 * ZCDEV_EXPECT_FALLBACK=1 (with ZCDEV_KO, the module file) is for a
 * build whose first folio allocations fail (the planted fault
 * "nofolio"): each zcdev test then reloads the module and requires the
 * zero page at the first probe, right after the load, before the large
 * buffers come back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The harness has a signal handler that ignores an argument */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#include "zcdev_fixture.h"

#define SLOTS		16
#define PROBE_MS	100
#define RETURN_MS	10000

FIXTURE(fallback) {
	bool skip;
};

FIXTURE_VARIANT(fallback) {
	DEVICE_VARIANT_FIELDS;
};

FIXTURE_VARIANT_ADD(fallback, zczero) { ZCZERO_DEV };
FIXTURE_VARIANT_ADD(fallback, zcfull) { ZCFULL_DEV };
FIXTURE_VARIANT_ADD(fallback, ref_zero) { REF_ZERO_DEV };
FIXTURE_VARIANT_ADD(fallback, ref_full) { REF_FULL_DEV };

FIXTURE_SETUP(fallback)
{
}

FIXTURE_TEARDOWN(fallback)
{
}

static bool expect_fallback(void)
{
	const char *s = getenv("ZCDEV_EXPECT_FALLBACK");

	return s && *s && strcmp(s, "0");
}

enum probe { PROBE_FAILED = -1, PAGES, LARGE };

/*
 * One probe of the device: PAGES when a 16-slot pipe took 64 KiB in one
 * splice and then nothing, LARGE when it took more, each byte zero.
 */
static enum probe probe(struct __test_metadata *_metadata, int dev)
{
	enum probe what = PROBE_FAILED;
	int p[2], err;
	ssize_t r1, r2;

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC | O_NONBLOCK));
	ASSERT_EQ(SLOTS * 4096, fcntl(p[1], F_SETPIPE_SZ, SLOTS * 4096));
	r1 = splice(dev, NULL, p[1], NULL, MIB, SPLICE_F_NONBLOCK);
	EXPECT_EQ(SLOTS * 4096, r1) TH_LOG("splice: %s", strerror(errno));
	EXPECT_EQ(SLOTS * 4096, pipe_bytes(p[0]));
	errno = 0;
	r2 = splice(dev, NULL, p[1], NULL, MIB, SPLICE_F_NONBLOCK);
	err = errno;
	if (r1 == SLOTS * 4096 && r2 > 0) {
		what = LARGE;
	} else if (r1 == SLOTS * 4096 && r2 == -1) {
		EXPECT_EQ(EAGAIN, err)
			TH_LOG("a second splice: %s", strerror(err));
		what = err == EAGAIN ? PAGES : PROBE_FAILED;
	}
	err = pipe_read_zeros(p[0], pipe_bytes(p[0]));
	EXPECT_EQ(0, err) TH_LOG("reading back: %s", strerror(err));
	close(p[0]);
	close(p[1]);
	return err ? PROBE_FAILED : what;
}

/* zcdev reloaded, for a test that needs it fresh: 0, or an errno */
static int reload(void)
{
	const char *ko = getenv("ZCDEV_KO");
	int err = ENOENT;

	if (!ko || !*ko)
		return err;
	err = unload_module(10000);
	if (err && err != ENOENT)
		return err;
	return load_module(ko, "");
}

TEST_F_TIMEOUT(fallback, large_buffers_return, 60)
{
	bool fresh = expect_fallback() && !variant->is_stock;
	long long t0, t = 0;
	unsigned int probes = 0;
	enum probe first, now;
	bool large_ever;
	int fd, err;

	if (fresh) {
		err = reload();
		ASSERT_EQ(0, err)
			TH_LOG("reloading zcdev (ZCDEV_KO): %s", strerror(err));
	}
	fd = device_open(_metadata, variant->path, variant->is_stock);
	if (fd < 0)
		SKIP(return, "%s: %s", variant->path,
		     device_skip(variant->is_stock));
	if (stock_cannot_splice_read(fd, variant->is_stock)) {
		close(fd);
		SKIP(return, "%s cannot splice on this kernel", variant->path);
	}
	/* the stock devices and splice_buffer=4096: a page a buffer */
	large_ever = splice_buffer_size(variant->is_stock) > 4096;

	t0 = now_ms();
	first = probe(_metadata, fd);
	now = first;
	while (now == PAGES && large_ever && t < RETURN_MS) {
		sleep_ms(PROBE_MS);
		now = probe(_metadata, fd);
		probes++;
		t = now_ms() - t0;
	}
	close(fd);
	ASSERT_NE(PROBE_FAILED, first);
	ASSERT_NE(PROBE_FAILED, now);
	if (!large_ever) {
		EXPECT_EQ(PAGES, first) TH_LOG("buffers larger than a page");
		return;
	}
	if (fresh)
		EXPECT_EQ(PAGES, first)
			TH_LOG("large buffers right after the load: no fallback seen");
	EXPECT_EQ(LARGE, now)
		TH_LOG("still the zero page after %.1f s", t / 1e3);
	if (first == PAGES)
		TH_LOG("the zero page for %u probes, %.1f s, then large buffers",
		       probes, t / 1e3);
	else
		TH_LOG("large buffers at once");
}

TEST_HARNESS_MAIN
