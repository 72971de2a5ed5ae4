/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device fixture of zcdev's selftests, after kselftest_harness.h.
 *
 * Every test runs for /dev/zczero and /dev/zcfull, and for the stock
 * /dev/zero and /dev/full as a reference (variants ref_zero, ref_full)
 * that keeps the tests honest: the lane prints the reference's results
 * but never counts them.  Where the exact outcome is written down nowhere,
 * a zcdev device is compared at run time with its stock twin.  A program
 * may add variants of its own, e.g. with other read parameters: the setup
 * sets them and the teardown restores the defaults.
 */
#ifndef ZCDEV_FIXTURE_H
#define ZCDEV_FIXTURE_H

#include "zcdev_util.h"

/* The variants' fields every fixture of the devices has */
#define DEVICE_VARIANT_FIELDS						\
	const char *path;						\
	const char *stock;	/* the stock device it must behave like */ \
	bool is_full;							\
	bool is_stock

/* The devices, as a variant's first fields */
#define ZCZERO_DEV	.path = "/dev/zczero", .stock = "/dev/zero"
#define ZCFULL_DEV	.path = "/dev/zcfull", .stock = "/dev/full", .is_full = true
#define REF_ZERO_DEV	.path = "/dev/zero", .stock = "/dev/zero", .is_stock = true
#define REF_FULL_DEV	.path = "/dev/full", .stock = "/dev/full", .is_full = true, \
			.is_stock = true

/*
 * A variant's device, read-write: -1 when it is a stock device that is
 * absent or not run (ZCDEV_REFS=0), and the test skips, as device_skip()
 * says; zcdev missing is a failure, never a skip.
 */
static inline int device_open(struct __test_metadata *_metadata,
			      const char *path, bool is_stock)
{
	int fd, err;

	if (is_stock && refs_off())
		return -1;
	fd = open(path, O_RDWR | O_CLOEXEC);
	err = errno;
	if (fd < 0 && err == ENOENT && is_stock)
		return -1;
	ASSERT_LE(0, fd) TH_LOG("open %s: %s%s", path, strerror(err),
				err == ENOENT ? ": zcdev is not loaded" : "");
	return fd;
}

/* Why device_open() gave -1 for a stock device */
static inline const char *device_skip(bool is_stock)
{
	return is_stock && refs_off() ? "a reference, not run: ZCDEV_REFS=0" :
					"absent";
}

FIXTURE(zcdev) {
	int fd;		/* the device under test, read-write */
	int ref;	/* its stock twin, /dev/zero or /dev/full */
	bool skip;	/* the device is absent: every test returns at once */
};

FIXTURE_VARIANT(zcdev) {
	DEVICE_VARIANT_FIELDS;
	const char *read_path;	/* zcdev's parameters for the test, if any */
	const char *read_chunk;
};

FIXTURE_VARIANT_ADD(zcdev, zczero) { ZCZERO_DEV };
FIXTURE_VARIANT_ADD(zcdev, zcfull) { ZCFULL_DEV };
FIXTURE_VARIANT_ADD(zcdev, ref_zero) { REF_ZERO_DEV };
FIXTURE_VARIANT_ADD(zcdev, ref_full) { REF_FULL_DEV };

/* The parameters' defaults, which the teardown puts back */
#define READ_PATH_DEFAULT	"auto"
#define READ_CHUNK_DEFAULT	"1048576"

FIXTURE_SETUP(zcdev)
{
	int err;

	self->ref = -1;
	self->fd = device_open(_metadata, variant->path, variant->is_stock);
	if (self->fd < 0) {
		/*
		 * Older harnesses run the test after a SKIP() here: the
		 * tests return at once when they see self->skip.
		 */
		self->skip = true;
		SKIP(return, "%s: %s", variant->path,
		     device_skip(variant->is_stock));
	}
	self->ref = open(variant->stock, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->ref) TH_LOG("open %s: %s", variant->stock,
				       strerror(errno));
	if (variant->read_path) {
		err = param_set("read_path", variant->read_path,
				strlen(variant->read_path));
		if (err == EINVAL && !kernel_is_x86_64()) {
			self->skip = true;
			SKIP(return, "read_path=%s: only on x86-64 kernels",
			     variant->read_path);
		}
		ASSERT_EQ(0, err) TH_LOG("read_path=%s: %s",
					 variant->read_path, strerror(err));
	}
	if (variant->read_chunk) {
		err = param_set("read_chunk", variant->read_chunk,
				strlen(variant->read_chunk));
		ASSERT_EQ(0, err) TH_LOG("read_chunk=%s: %s",
					 variant->read_chunk, strerror(err));
	}
}

FIXTURE_TEARDOWN(zcdev)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->ref >= 0)
		close(self->ref);
	if (variant->read_path)
		param_set("read_path", READ_PATH_DEFAULT,
			  strlen(READ_PATH_DEFAULT));
	if (variant->read_chunk)
		param_set("read_chunk", READ_CHUNK_DEFAULT,
			  strlen(READ_CHUNK_DEFAULT));
}

#endif /* ZCDEV_FIXTURE_H */
