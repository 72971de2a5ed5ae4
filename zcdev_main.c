// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev: /dev/zczero and /dev/zcfull, zero(4) and full(4) made fast.
 *
 * Both devices read as an endless run of zeros; writes to zczero are
 * discarded and writes to zcfull fail with ENOSPC, as the stock devices
 * do.  What differs is the cost: reads clear user memory with one
 * `rep stosb` per large chunk (zcdev_clear.h), and splice hands out
 * references to memory that stays zero, up to 2 MiB a pipe buffer,
 * instead of copies (zcdev_pipe.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "compat.h"
#include "zcdev_clear.h"
#include "zcdev_pipe.h"

enum zc_read_path { ZC_READ_AUTO, ZC_READ_STOSB, ZC_READ_KERNEL };

static const char * const zc_read_paths[] = {
	[ZC_READ_AUTO]		= "auto",
	[ZC_READ_STOSB]		= "stosb",
	[ZC_READ_KERNEL]	= "kernel",
};

static int zc_read_path = ZC_READ_AUTO;
static bool zc_use_stosb;		/* what zc_read_path resolves to */
static unsigned int zc_read_chunk = SZ_1M;

/*
 * Below this size the kernel's own clear_user() is as fast: a string of
 * 128 bytes or more has a start-up cost that an 8-byte store loop beats
 * up to about 1 KiB; 2 KiB keeps a margin (lab/bench/RESULTS-clear.md).
 */
#define ZC_STOSB_MIN	SZ_2K

#ifdef ZC_HAVE_STOSB
static bool zc_cpu_has_erms(void)
{
	return boot_cpu_has(X86_FEATURE_ERMS);
}

static unsigned long zc_clear_user(void __user *to, unsigned long len)
{
	if (unlikely(!access_ok(to, len)))
		return len;
	stac();
	len = zc_stosb(to, len);
	clac();
	return len;
}
#else
static bool zc_cpu_has_erms(void)
{
	return false;
}

static unsigned long zc_clear_user(void __user *to, unsigned long len)
{
	return clear_user(to, len);
}
#endif

static void zc_resolve_read_path(int path)
{
	WRITE_ONCE(zc_use_stosb, path == ZC_READ_STOSB ||
		   (path == ZC_READ_AUTO && zc_cpu_has_erms()));
}

/* How much of a refused value a message quotes. */
#define ZC_QUOTE_MAX	32

static int read_path_set(const char *val, const struct kernel_param *kp)
{
	/* the whole value: one of the names, with a newline or not */
	int path = sysfs_match_string(zc_read_paths, val);
	size_t len = strcspn(val, "\n");

	if (path < 0) {
		pr_err("read_path: '%.*s'%s is not one of auto, stosb, kernel\n",
		       (int)min_t(size_t, len, ZC_QUOTE_MAX), val,
		       len > ZC_QUOTE_MAX ? "..." : "");
		return -EINVAL;
	}
#ifndef ZC_HAVE_STOSB
	if (path == ZC_READ_STOSB) {
		pr_err("read_path: stosb needs an x86-64 CPU\n");
		return -EINVAL;
	}
#endif
	WRITE_ONCE(zc_read_path, path);
	zc_resolve_read_path(path);
	return 0;
}

static int read_path_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", zc_read_paths[READ_ONCE(zc_read_path)]);
}

static const struct kernel_param_ops read_path_ops = {
	.set	= read_path_set,
	.get	= read_path_get,
};

module_param_cb(read_path, &read_path_ops, NULL, 0644);
MODULE_PARM_DESC(read_path,
		 "How reads clear user memory: auto (rep stosb on ERMS CPUs), stosb, kernel (clear_user)");

static int read_chunk_set(const char *val, const struct kernel_param *kp)
{
	unsigned int chunk;

	if (kstrtouint(val, 0, &chunk) || chunk < PAGE_SIZE || chunk > SZ_64M) {
		pr_err("read_chunk: give a byte count from %lu to %u\n",
		       PAGE_SIZE, SZ_64M);
		return -EINVAL;
	}
	WRITE_ONCE(zc_read_chunk, chunk);
	return 0;
}

static const struct kernel_param_ops read_chunk_ops = {
	.set	= read_chunk_set,
	.get	= param_get_uint,
};

module_param_cb(read_chunk, &read_chunk_ops, &zc_read_chunk, 0644);
MODULE_PARM_DESC(read_chunk,
		 "Bytes cleared between checks for signals and rescheduling (4096..67108864, default 1 MiB)");

/*
 * The current user segment of a ubuf or iovec iterator.  (iter_iov_len()
 * gets a ubuf iterator wrong once it has advanced, as in 6.12.)
 */
static void __user *iter_user_addr(const struct iov_iter *iter)
{
	if (iter_is_ubuf(iter))
		return iter->ubuf + iter->iov_offset;
	return iter_iov(iter)->iov_base + iter->iov_offset;
}

static size_t iter_user_len(const struct iov_iter *iter)
{
	if (iter_is_ubuf(iter))
		return iter->count;
	return iter_iov(iter)->iov_len - iter->iov_offset;
}

/*
 * clear_user() may stop a word short of a fault (an 8-byte store loop
 * cannot store part of a word): finish byte by byte, so that a short
 * read is exact to the byte whichever way the bytes were cleared.
 */
static unsigned long clear_user_exact(void __user *to, unsigned long len)
{
	unsigned long left = clear_user(to, len);

	while (left && !put_user(0, (char __user *)to + len - left))
		left--;
	return left;
}

static unsigned long clear_user_chunk(void __user *to, unsigned long len)
{
	if (READ_ONCE(zc_use_stosb) && len >= ZC_STOSB_MIN)
		return zc_clear_user(to, len);
	return clear_user_exact(to, len);
}

/* Clear @bytes of a user iterator, segment by segment; stop at a fault. */
static size_t zero_user_iter(size_t bytes, struct iov_iter *iter)
{
	size_t done = 0;

	might_fault();
	while (done < bytes) {
		size_t len = min(iter_user_len(iter), bytes - done);
		size_t left = clear_user_chunk(iter_user_addr(iter), len);

		iov_iter_advance(iter, len - left);
		done += len - left;
		if (left)
			break;
	}
	return done;
}

static size_t zero_iter(size_t bytes, struct iov_iter *iter)
{
	if (user_backed_iter(iter))
		return zero_user_iter(bytes, iter);
	return iov_iter_zero(bytes, iter);
}

static ssize_t read_iter_zero(struct kiocb *iocb, struct iov_iter *iter)
{
	size_t chunk_max = READ_ONCE(zc_read_chunk);
	size_t written = 0;

	while (iov_iter_count(iter)) {
		size_t chunk = min(iov_iter_count(iter), chunk_max), n;

		n = zero_iter(chunk, iter);
		if (!n)
			return written ? written : -EFAULT;
		written += n;
		if (n < chunk)		/* a fault part-way */
			return written;
		if (signal_pending(current))
			return written;
		if (!need_resched())
			continue;
		if (iocb->ki_flags & IOCB_NOWAIT)
			return written;
		cond_resched();
	}
	return written;
}

/*
 * read() and pread() come here rather than through read_iter_zero(): for
 * the small reads that are most of them, building a kiocb and an
 * iterator costs more than clearing the bytes (about 120 instructions of
 * 800 for a one-byte read on 7.3, lab/bench/RESULTS-read.md), which is why
 * /dev/zero has both.  Vectored, NOWAIT and io_uring reads take the
 * iterator path.  kernel_read() takes neither: __kernel_read() refuses a
 * file that has both, with a message, as it refuses /dev/zero.
 */
static ssize_t read_zero(struct file *file, char __user *buf, size_t count,
			 loff_t *ppos)
{
	size_t chunk_max = READ_ONCE(zc_read_chunk);
	size_t cleared = 0;

	while (count) {
		size_t chunk = min(count, chunk_max);
		size_t left = clear_user_chunk(buf + cleared, chunk);

		if (unlikely(left)) {
			cleared += chunk - left;
			return cleared ? cleared : -EFAULT;
		}
		cleared += chunk;
		count -= chunk;
		if (signal_pending(current))
			break;
		cond_resched();
	}
	return cleared;
}

static ssize_t write_zero(struct file *file, const char __user *buf,
			  size_t count, loff_t *ppos)
{
	return count;
}

static ssize_t write_iter_zero(struct kiocb *iocb, struct iov_iter *from)
{
	size_t count = iov_iter_count(from);

	iov_iter_advance(from, count);
	return count;
}

static ssize_t write_iter_full(struct kiocb *iocb, struct iov_iter *from)
{
	return -ENOSPC;
}

static loff_t zero_lseek(struct file *file, loff_t offset, int orig)
{
	return file->f_pos = 0;
}

/*
 * As /dev/zero: a private mapping is anonymous memory, a shared one is
 * shared anonymous memory, a shmem file of its own.
 */
static int mmap_zero(struct file *file, struct vm_area_struct *vma)
{
	if (vma->vm_flags & VM_SHARED)
		return shmem_zero_setup(vma);
	vma_set_anonymous(vma);
	return 0;
}

/*
 * Large mappings where huge pages can back them: thp_get_unmapped_area()
 * aligns a mapping of 2 MiB or more to PMD_SIZE where it can (6.1 as
 * well), else it is a plain area; without THP, a plain area.  Stock
 * /dev/zero does the same for private mappings from 6.18 on, and gives
 * shared ones shmem's choice; shmem_get_unmapped_area() is not exported,
 * so zczero's shared mappings get the same alignment, which is shmem's
 * where its huge pages are on.
 */
static const struct file_operations zero_fops = {
	.owner		= THIS_MODULE,
	.llseek		= zero_lseek,
	.read		= read_zero,
	.read_iter	= read_iter_zero,
	.write		= write_zero,
	.write_iter	= write_iter_zero,
	.splice_read	= zc_splice_read,
	.splice_write	= zc_splice_write_zero,
	.mmap		= mmap_zero,
	.get_unmapped_area = thp_get_unmapped_area,
};

static const struct file_operations full_fops = {
	.owner		= THIS_MODULE,
	.llseek		= zero_lseek,
	.read		= read_zero,
	.read_iter	= read_iter_zero,
	.write_iter	= write_iter_full,
	.splice_read	= zc_splice_read,
	.splice_write	= zc_splice_write_full,
};

/*
 * One character device region of zcdev's own, a minor each, as
 * drivers/char/mem.c has /dev/zero and /dev/full: an open looks its
 * minor up here without a lock of zcdev's (a misc device's open takes
 * the global misc_mtx).
 */
static const struct zc_dev {
	const char *name;
	const struct file_operations *fops;
} zc_devlist[] = {
	{ "zczero", &zero_fops },
	{ "zcfull", &full_fops },
};

static int zc_open(struct inode *inode, struct file *file)
{
	unsigned int minor = iminor(inode);

	if (minor >= ARRAY_SIZE(zc_devlist))
		return -ENXIO;
	file->f_op = zc_devlist[minor].fops;
	file->f_mode |= FMODE_NOWAIT;	/* reads never block: io_uring inline */
	return 0;
}

static const struct file_operations zc_fops = {
	.owner		= THIS_MODULE,
	.open		= zc_open,
	.llseek		= noop_llseek,
};

/* The nodes udev and devtmpfs make: /dev/zczero and /dev/zcfull, 0666. */
static char *zc_devnode(zc_devnode_device *dev, umode_t *mode)
{
	if (mode)
		*mode = 0666;
	return NULL;
}

static struct class zc_class = {
	.name		= "zcdev",
	.devnode	= zc_devnode,
};

static dev_t zc_devt;
static struct cdev zc_cdev;

static void zc_devices_destroy(unsigned int n)
{
	while (n--)
		device_destroy(&zc_class, zc_devt + n);
}

static int zc_devices_create(void)
{
	struct device *dev;
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(zc_devlist); i++) {
		dev = device_create(&zc_class, NULL, zc_devt + i, NULL, "%s",
				    zc_devlist[i].name);
		ret = PTR_ERR_OR_ZERO(dev);
		if (ret)
			goto fail;
	}
	return 0;
fail:
	pr_err("cannot register /dev/%s: %d\n", zc_devlist[i].name, ret);
	zc_devices_destroy(i);
	return ret;
}

/*
 * In drivers/char/mem.c's order: the class and the device nodes first,
 * the character device last.  Until cdev_add() an open of a node finds
 * no device and fails with ENXIO (chrdev_open()), so a load that fails
 * has had no file open; and nothing after cdev_add() can fail, so no
 * module is freed under an open file (try_module_get() succeeds on a
 * module whose init is still running).
 */
static int __init zcdev_init(void)
{
	int ret;

	zc_resolve_read_path(zc_read_path);
	ret = zc_pipe_init();
	if (ret)
		return ret;
	ret = alloc_chrdev_region(&zc_devt, 0, ARRAY_SIZE(zc_devlist), "zcdev");
	if (ret)
		goto out_pipe;
	ret = class_register(&zc_class);
	if (ret)
		goto out_region;
	ret = zc_devices_create();
	if (ret)
		goto out_class;
	cdev_init(&zc_cdev, &zc_fops);
	zc_cdev.owner = THIS_MODULE;
	ret = cdev_add(&zc_cdev, zc_devt, ARRAY_SIZE(zc_devlist));
	if (ret)
		goto out_devices;
	return 0;

out_devices:
	zc_devices_destroy(ARRAY_SIZE(zc_devlist));
out_class:
	class_unregister(&zc_class);
out_region:
	unregister_chrdev_region(zc_devt, ARRAY_SIZE(zc_devlist));
out_pipe:
	zc_pipe_exit();
	return ret;
}

static void __exit zcdev_exit(void)
{
	cdev_del(&zc_cdev);
	zc_devices_destroy(ARRAY_SIZE(zc_devlist));
	class_unregister(&zc_class);
	unregister_chrdev_region(zc_devt, ARRAY_SIZE(zc_devlist));
	zc_pipe_exit();
}

module_init(zcdev_init);
module_exit(zcdev_exit);

MODULE_DESCRIPTION("/dev/zczero and /dev/zcfull: zero(4) and full(4) with zero-copy splice");
MODULE_AUTHOR("The zcdev developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(ZCDEV_VERSION);
