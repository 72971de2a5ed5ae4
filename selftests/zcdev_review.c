// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev: what a shared mapping of zczero is made of, and how the
 * read_path parameter takes its value.
 *
 * A shared mapping of /dev/zero is backed by a kernel-internal shmem
 * file: named "/dev/zero (deleted)" in /proc/PID/maps, on the kernel's
 * internal shmem mount, and S_PRIVATE, so that LSMs do not label or
 * check it (mm/shmem.c, shmem_zero_setup()).  zczero's must be the
 * same, on every kernel: each test compares with the stock /dev/zero of
 * the running kernel.  S_PRIVATE shows where SELinux runs with a policy
 * loaded: a private inode has no security.selinux label.
 *
 * The fixture runs for zczero and zcfull and, as references, for the
 * stock /dev/zero and /dev/full (variants ref_zero, ref_full).  The
 * parameter test needs root, as writing a module parameter does.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/xattr.h>

/* The harness has a signal handler that ignores an argument */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define READ_PATH	"/sys/module/zcdev/parameters/read_path"
#define NAME_MAX_LEN	256

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

FIXTURE(review) {
	int fd;		/* the device under test */
	int ref;	/* its stock twin */
	bool skip;
};

FIXTURE_VARIANT(review) {
	const char *path;
	const char *stock;
	bool is_full;
	bool is_stock;
};

FIXTURE_VARIANT_ADD(review, zczero) {
	.path = "/dev/zczero",
	.stock = "/dev/zero",
};

FIXTURE_VARIANT_ADD(review, zcfull) {
	.path = "/dev/zcfull",
	.stock = "/dev/full",
	.is_full = true,
};

FIXTURE_VARIANT_ADD(review, ref_zero) {
	.path = "/dev/zero",
	.stock = "/dev/zero",
	.is_stock = true,
};

FIXTURE_VARIANT_ADD(review, ref_full) {
	.path = "/dev/full",
	.stock = "/dev/full",
	.is_full = true,
	.is_stock = true,
};

FIXTURE_SETUP(review)
{
	self->ref = -1;
	self->fd = open(variant->path, O_RDWR | O_CLOEXEC);
	if (self->fd < 0 && errno == ENOENT) {
		self->skip = true;
		SKIP(return, "%s is absent%s", variant->path,
		     variant->is_stock ? "" : ": zcdev is not loaded");
	}
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", variant->path,
				      strerror(errno));
	self->ref = open(variant->stock, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->ref) TH_LOG("open %s: %s", variant->stock,
				       strerror(errno));
}

FIXTURE_TEARDOWN(review)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->ref >= 0)
		close(self->ref);
}

/* What a shared mapping's backing file looks like from user space. */
struct backing {
	int map_err;		/* errno of mmap(), or 0 */
	char dev[32];		/* the maps line's device, as "00:01" */
	char name[NAME_MAX_LEN];	/* and its path name */
	long list_len;		/* listxattr(): its length, or -errno */
	char list[NAME_MAX_LEN];	/* the names, ','-separated */
	long label_len;		/* getxattr(security.selinux), or -errno */
	char label[NAME_MAX_LEN];
};

/* The maps line of the mapping at addr: its device and name fields. */
static int maps_fields(void *addr, struct backing *b)
{
	char line[512], want[32];
	FILE *maps = fopen("/proc/self/maps", "r");
	int ret = -1;

	if (!maps)
		return -1;
	snprintf(want, sizeof(want), "%lx-", (unsigned long)addr);
	while (fgets(line, sizeof(line), maps)) {
		int name_at = 0;

		if (strncmp(line, want, strlen(want)))
			continue;
		line[strcspn(line, "\n")] = '\0';
		/* start-end perms offset dev inode name */
		if (sscanf(line, "%*s %*s %*s %31s %*s %n", b->dev,
			   &name_at) == 1 && name_at) {
			snprintf(b->name, sizeof(b->name), "%s",
				 line + name_at);
			ret = 0;
		}
		break;
	}
	fclose(maps);
	return ret;
}

/*
 * The extended attributes of the file behind the mapping, through
 * /proc/self/map_files (root only): what the file system lists, and the
 * label SELinux gives an inode that is not private (with a policy
 * loaded; for a private one the file system answers, with no label).
 */
static void xattr_names(void *addr, size_t len, struct backing *b)
{
	char path[64], buf[NAME_MAX_LEN];
	long n, i;

	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
		 (unsigned long)addr, (unsigned long)addr + len);
	n = listxattr(path, buf, sizeof(buf));
	b->list_len = n < 0 ? -errno : n;
	for (i = 0; i < n; i++)
		b->list[i] = buf[i] ? buf[i] : ',';
	b->list[n > 0 ? n : 0] = '\0';
	n = getxattr(path, "security.selinux", b->label,
		     sizeof(b->label) - 1);
	b->label_len = n < 0 ? -errno : n;
	b->label[n > 0 ? n : 0] = '\0';
}

static void shared_backing(int fd, struct backing *b)
{
	size_t len = 2 * sysconf(_SC_PAGESIZE);
	void *a;

	memset(b, 0, sizeof(*b));
	a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (a == MAP_FAILED) {
		b->map_err = errno;
		return;
	}
	if (maps_fields(a, b))
		snprintf(b->name, sizeof(b->name), "(no maps line)");
	xattr_names(a, len, b);
	munmap(a, len);
}

/* The shared mapping's file has the name and device of /dev/zero's. */
TEST_F(review, shared_map_name)
{
	struct backing st, dv;

	if (self->skip)
		return;
	shared_backing(self->ref, &st);
	shared_backing(self->fd, &dv);
	EXPECT_EQ(st.map_err, dv.map_err) TH_LOG("mmap: %s, not %s",
						 strerror(dv.map_err),
						 strerror(st.map_err));
	if (variant->is_full || st.map_err)
		return;
	TH_LOG("%s: dev %s, '%s'", variant->stock, st.dev, st.name);
	EXPECT_STREQ(st.name, dv.name);
	EXPECT_STREQ(st.dev, dv.dev);
}

/*
 * The shared mapping's file is private to the kernel, as /dev/zero's:
 * an LSM that labels inodes has no label for it.
 */
TEST_F(review, shared_map_private_inode)
{
	struct backing st, dv;

	if (self->skip)
		return;
	shared_backing(self->ref, &st);
	shared_backing(self->fd, &dv);
	if (variant->is_full || st.map_err)
		return;
	TH_LOG("%s: listxattr %ld '%s'", variant->stock, st.list_len, st.list);
	EXPECT_EQ(st.list_len, dv.list_len)
		TH_LOG("%s: listxattr %ld '%s'", variant->path, dv.list_len,
		       dv.list);
	EXPECT_STREQ(st.list, dv.list);
	TH_LOG("%s: security.selinux %ld '%s'", variant->stock, st.label_len,
	       st.label);
	EXPECT_EQ(st.label_len, dv.label_len)
		TH_LOG("%s: security.selinux %ld '%s'", variant->path,
		       dv.label_len, dv.label);
	EXPECT_STREQ(st.label, dv.label);
}

/* --- the read_path parameter ------------------------------------------ */

FIXTURE(param) {
	char saved[32];		/* the value before the test */
	int kmsg;		/* /dev/kmsg, read from its end */
	bool skip;
};

FIXTURE_SETUP(param)
{
	int fd = open(READ_PATH, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	self->kmsg = -1;
	if (fd < 0 && errno == ENOENT) {
		self->skip = true;
		SKIP(return, "no %s: zcdev is not loaded", READ_PATH);
	}
	ASSERT_LE(0, fd) TH_LOG("open %s: %s", READ_PATH, strerror(errno));
	n = read(fd, self->saved, sizeof(self->saved) - 1);
	close(fd);
	ASSERT_LT(0, n);
	self->saved[n] = '\0';
	self->saved[strcspn(self->saved, "\n")] = '\0';
	if (geteuid()) {
		self->skip = true;
		SKIP(return, "writing a module parameter needs root");
	}
	self->kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, self->kmsg) TH_LOG("open /dev/kmsg: %s", strerror(errno));
	lseek(self->kmsg, 0, SEEK_END);
}

FIXTURE_TEARDOWN(param)
{
	int fd;

	if (self->kmsg >= 0)
		close(self->kmsg);
	if (self->skip)
		return;
	fd = open(READ_PATH, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, self->saved, strlen(self->saved)) < 0)
			perror("restore " READ_PATH);
		close(fd);
	}
}

/* Write val to read_path: 0 or the errno. */
static int set_read_path(const char *val, size_t len)
{
	int fd = open(READ_PATH, O_WRONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, val, len) != (ssize_t)len)
		err = errno ? errno : EIO;
	close(fd);
	return err;
}

static void get_read_path(char *buf, size_t size)
{
	int fd = open(READ_PATH, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* Whether the kernel log got a line with text since the last call. */
static bool kmsg_says(int kmsg, const char *text)
{
	char rec[2048];
	bool found = false;
	ssize_t n;

	while ((n = read(kmsg, rec, sizeof(rec) - 1)) > 0 || errno == EPIPE) {
		if (n <= 0)
			continue;	/* overwritten records: go on */
		rec[n] = '\0';
		if (strstr(rec, text))
			found = true;
	}
	return found;
}

/*
 * A value is one of the names, with at most a newline after it: junk
 * after a name is refused however long the value is, with a message,
 * and the setting stays as it was.
 */
TEST_F(param, read_path_refuses_junk)
{
	static char padded[17], longval[300];
	static const char *const bad[] = {
		"stosb          junk",	/* a name, then junk past 15 chars */
		padded,			/* and spaces past them */
		"stosb\n\n",
		"stosbstosbstosbstosb",
		"",
		longval,
	};
	char before[32], after[32];
	unsigned int i;

	if (self->skip)
		return;
	snprintf(padded, sizeof(padded), "%-15s\n", "kernel");
	memset(longval, 'a', sizeof(longval) - 1);
	memcpy(longval, "auto", 4);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		get_read_path(before, sizeof(before));
		EXPECT_EQ(EINVAL, set_read_path(bad[i], strlen(bad[i]) ?: 1))
			TH_LOG("read_path='%.40s' accepted", bad[i]);
		get_read_path(after, sizeof(after));
		EXPECT_STREQ(before, after);
		EXPECT_TRUE(kmsg_says(self->kmsg, "zcdev: read_path: '"))
			TH_LOG("no message for read_path='%.40s'", bad[i]);
	}
}

/* The names themselves are taken, with or without a newline. */
TEST_F(param, read_path_takes_names)
{
	char now[32];

	if (self->skip)
		return;
	ASSERT_EQ(0, set_read_path("kernel\n", 7));
	get_read_path(now, sizeof(now));
	EXPECT_STREQ("kernel", now);
	ASSERT_EQ(0, set_read_path("auto", 4));
	get_read_path(now, sizeof(now));
	EXPECT_STREQ("auto", now);
#ifdef __x86_64__
	ASSERT_EQ(0, set_read_path("stosb\n", 6));
	get_read_path(now, sizeof(now));
	EXPECT_STREQ("stosb", now);
#endif
}

TEST_HARNESS_MAIN
