// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev's selftests, mmap: private mappings of zczero are anonymous
 * memory and shared ones shared anonymous memory, as /dev/zero's are.
 * A shared mapping of /dev/zero is backed by a kernel-internal shmem
 * file: named "/dev/zero (deleted)" in /proc/PID/maps, on the kernel's
 * internal shmem mount, and S_PRIVATE, so that LSMs do not label or
 * check it (mm/shmem.c, shmem_zero_setup()).  zczero's must be the same
 * on every kernel.  S_PRIVATE shows where SELinux runs with a policy
 * loaded: a private inode has no security.selinux label.
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
#include <sys/xattr.h>

/* The harness has a signal handler that ignores an argument */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#include "zcdev_fixture.h"

/*
 * Map fd shared at offset off and touch the mapping, in a child: 0 when
 * that went well, 1 when it read wrong, 1000 + the signal that killed it
 * (SIGBUS, where the object ends before the offset), or -1
 */
static int touch_shared_at(int fd, off_t off)
{
	size_t n = 2 * page_size();
	unsigned char *a;
	int status;
	pid_t pid;

	a = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	if (a == MAP_FAILED)
		return -1;
	pid = fork();
	if (!pid) {
		struct rlimit no_core = { 0, 0 };

		setrlimit(RLIMIT_CORE, &no_core);
		a[0] = 1;
		_exit(a[n - 1] == 0 && a[0] == 1 ? 0 : 1);
	}
	munmap(a, n);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 1000 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F_TIMEOUT(zcdev, mmap, 240)
{
	size_t pg = page_size(), n = 4 * pg;
	unsigned char *a, *b;
	int status, i;
	pid_t pid;

	if (self->skip)
		return;
	if (variant->is_full) {
		/* /dev/full cannot be mapped: neither can zcfull */
		static const int flags[] = { MAP_PRIVATE, MAP_SHARED };

		for (i = 0; i < 2; i++) {
			struct outcome st, dv;
			void *r;

			errno = 0;
			r = mmap(NULL, n, PROT_READ, flags[i], self->ref, 0);
			st = outcome(r == MAP_FAILED ? -1 : 0);
			if (r != MAP_FAILED)
				munmap(r, n);
			r = mmap(NULL, n, PROT_READ, flags[i], self->fd, 0);
			dv = outcome(r == MAP_FAILED ? -1 : 0);
			if (r != MAP_FAILED)
				munmap(r, n);
			EXPECT_EQ(st.ret, dv.ret);
			EXPECT_EQ(st.err, dv.err) TH_LOG("%s, not %s",
							 strerror(dv.err),
							 strerror(st.err));
			EXPECT_TRUE(!variant->is_stock || dv.err == ENODEV);
		}
		return;
	}

	/* private: zero-filled, writable, and not shared with a child */
	a = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd, 0);
	ASSERT_NE(MAP_FAILED, a);
	EXPECT_EQ(-1, not_byte(a, n, 0));
	memset(a, 0x11, n);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		bool ok = not_byte(a, n, 0x11) < 0;

		memset(a, 0x22, n);
		_exit(ok && not_byte(a, n, 0x22) < 0 ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(-1, not_byte(a, n, 0x11));
	munmap(a, n);

	/* at an offset, and read-only */
	a = mmap(NULL, n, PROT_READ, MAP_PRIVATE, self->fd, 1000 * pg);
	ASSERT_NE(MAP_FAILED, a);
	EXPECT_EQ(-1, not_byte(a, n, 0));
	munmap(a, n);
	/* a shared mapping at an offset: whatever the stock device does */
	EXPECT_EQ(touch_shared_at(self->ref, 1000 * pg),
		  touch_shared_at(self->fd, 1000 * pg));

	/* shared: a child's writes show in the parent */
	a = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, a);
	EXPECT_EQ(-1, not_byte(a, n, 0));
	a[0] = 1;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		bool ok = a[0] == 1;

		memset(a, 0x33, n);
		_exit(ok ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(-1, not_byte(a, n, 0x33));
	/* but each mmap() is an object of its own */
	b = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, b);
	EXPECT_EQ(-1, not_byte(b, n, 0));
	memset(b, 0x44, n);
	EXPECT_EQ(-1, not_byte(a, n, 0x33));
	munmap(b, n);
	munmap(a, n);
}

#define NAME_MAX_LEN	256

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
TEST_F(zcdev, shared_map_name)
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
TEST_F(zcdev, shared_map_private_inode)
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

/* AnonHugePages of the mapping at addr, in kB (/proc/self/smaps), or -1 */
static long anon_huge_kb(void *addr)
{
	char line[256], start[32];
	bool in = false;
	long kb = -1;
	FILE *f;

	snprintf(start, sizeof(start), "%lx-", (unsigned long)addr);
	f = fopen("/proc/self/smaps", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, '-') < strchr(line, ' '))
			in = !strncmp(line, start, strlen(start));
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

#define PMD_BYTES	(2UL << 20)
#define HUGE_MAPS	4

/*
 * Map fd privately HUGE_MAPS times, 8 MiB and a page each: how many of
 * the mappings start on a 2 MiB boundary, and the AnonHugePages of the
 * first after madvise(MADV_HUGEPAGE) and a write to its first 4 MiB.
 */
static int huge_maps(int fd, long *huge_kb)
{
	size_t n = 4 * PMD_BYTES + page_size();
	void *a[HUGE_MAPS];
	int i, aligned = 0;

	*huge_kb = -1;
	for (i = 0; i < HUGE_MAPS; i++) {
		a[i] = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		if (a[i] == MAP_FAILED)
			return -1;
		if (!((unsigned long)a[i] & (PMD_BYTES - 1)))
			aligned++;
	}
	if (!madvise(a[0], n, MADV_HUGEPAGE)) {
		memset(a[0], 1, 2 * PMD_BYTES);
		*huge_kb = anon_huge_kb(a[0]);
	}
	for (i = 0; i < HUGE_MAPS; i++)
		munmap(a[i], n);
	return aligned;
}

/*
 * Large private mappings are placed and backed as the stock device's:
 * where every /dev/zero mapping starts on a 2 MiB boundary (from 6.7 on,
 * with THP), every zczero one must too, and where /dev/zero's is backed
 * by huge pages after MADV_HUGEPAGE, so must zczero's be.
 */
TEST_F_TIMEOUT(zcdev, huge_alignment, 240)
{
	long st_kb, dv_kb;
	int st, dv;

	if (self->skip || variant->is_full)
		return;
	st = huge_maps(self->ref, &st_kb);
	dv = huge_maps(self->fd, &dv_kb);
	ASSERT_LE(0, st);
	ASSERT_LE(0, dv);
	TH_LOG("aligned: %d of %d (stock %d); AnonHugePages %ld kB (stock %ld)",
	       dv, HUGE_MAPS, st, dv_kb, st_kb);
	if (st == HUGE_MAPS)
		EXPECT_EQ(HUGE_MAPS, dv);
	EXPECT_GE(dv_kb, st_kb);
}

TEST_HARNESS_MAIN
