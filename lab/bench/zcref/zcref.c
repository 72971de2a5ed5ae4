// SPDX-License-Identifier: GPL-2.0
/*
 * zcref: /dev/zcref, a test-only reference for zcbench.
 *
 * A patch proposed for /dev/zero (in no tree's archive up to October
 * 2026: not the mm tree, linux-next or mainline) makes it splice the zero
 * page: splice_read_zero() fills the free slots of the pipe with
 * PAGE_SIZE buffers of ZERO_PAGE(0), whose operations do nothing on get
 * and release and refuse to be stolen.  Stock kernels copy
 * (copy_splice_read, 6.5 and later) or cannot splice /dev/zero at all
 * (6.1), so this module runs that patch's loop on any of them and zcbench
 * measures it beside /dev/zczero in the same run ("zeropatch").
 *
 * splice_read is that patch's loop and nothing else; read_iter,
 * write_iter and splice_write are those of stock /dev/zero
 * (read_iter_zero, write_iter_null, splice_write_null), so a splice
 * into /dev/zcref costs what one into /dev/null or the patched
 * /dev/zero costs.
 *
 * No unload safety: the pipe buffers point at operations in this module
 * and outlive the files they were spliced from.  The benchmark loads it
 * once and never unloads it while a pipe or socket may still hold its
 * buffers; nothing else may load it.  It is built only by lab/bench.sh,
 * never installed.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pipe_fs_i.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/splice.h>
#include <linux/uio.h>

static ssize_t zcref_read_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	size_t written = 0;

	while (iov_iter_count(iter)) {
		size_t chunk = iov_iter_count(iter), n;

		if (chunk > PAGE_SIZE)
			chunk = PAGE_SIZE;	/* as stock: for latency */
		n = iov_iter_zero(chunk, iter);
		if (!n && iov_iter_count(iter))
			return written ? written : -EFAULT;
		written += n;
		if (signal_pending(current))
			return written ? written : -ERESTARTSYS;
		if (!need_resched())
			continue;
		if (iocb->ki_flags & IOCB_NOWAIT)
			return written ? written : -EAGAIN;
		cond_resched();
	}
	return written;
}

static ssize_t zcref_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	size_t count = iov_iter_count(from);

	iov_iter_advance(from, count);
	return count;
}

static int zcref_pipe_to_null(struct pipe_inode_info *pipe,
			      struct pipe_buffer *buf, struct splice_desc *sd)
{
	return sd->len;
}

/* splice_write_null(): splice_from_pipe() is not exported, its body is. */
static ssize_t zcref_splice_write(struct pipe_inode_info *pipe,
				  struct file *out, loff_t *ppos, size_t len,
				  unsigned int flags)
{
	struct splice_desc sd = { .total_len = len, .flags = flags };
	ssize_t ret;

	sd.pos = *ppos;
	sd.u.file = out;
	pipe_lock(pipe);
	ret = __splice_from_pipe(pipe, &sd, zcref_pipe_to_null);
	pipe_unlock(pipe);
	return ret;
}

static bool zero_pipe_buf_get(struct pipe_inode_info *pipe,
			      struct pipe_buffer *buf)
{
	return true;
}

static void zero_pipe_buf_release(struct pipe_inode_info *pipe,
				  struct pipe_buffer *buf)
{
}

static bool zero_pipe_buf_try_steal(struct pipe_inode_info *pipe,
				    struct pipe_buffer *buf)
{
	return false;
}

static const struct pipe_buf_operations zero_pipe_buf_ops = {
	.release	= zero_pipe_buf_release,
	.try_steal	= zero_pipe_buf_try_steal,
	.get		= zero_pipe_buf_get,
};

/*
 * mm/shmem.c's splice_zeropage_into_pipe(), which the patch calls.  The
 * 6.1 spelling of pipe_is_full() and pipe_head_buf() (6.14 and 6.5), so
 * that the same code builds on 6.1 to 7.x.
 */
static size_t splice_zeropage_into_pipe(struct pipe_inode_info *pipe,
					loff_t fpos, size_t size)
{
	size_t offset = fpos & ~PAGE_MASK;

	size = min_t(size_t, size, PAGE_SIZE - offset);

	if (!pipe_full(pipe->head, pipe->tail, pipe->max_usage)) {
		struct pipe_buffer *buf =
			&pipe->bufs[pipe->head & (pipe->ring_size - 1)];

		*buf = (struct pipe_buffer) {
			.ops	= &zero_pipe_buf_ops,
			.page	= ZERO_PAGE(0),
			.offset	= offset,
			.len	= size,
		};
		pipe->head++;
	}

	return size;
}

/* The patch's splice_read_zero(); pipe_buf_usage() is 6.14's name. */
static ssize_t zcref_splice_read(struct file *in, loff_t *ppos,
				 struct pipe_inode_info *pipe, size_t len,
				 unsigned int flags)
{
	size_t total = 0;
	loff_t pos = 0;
	size_t used, npages;

	used = pipe_occupancy(pipe->head, pipe->tail);
	if (used >= pipe->max_usage)
		return -EAGAIN;
	npages = pipe->max_usage - used;
	len = min_t(size_t, len, npages * PAGE_SIZE);

	while (len) {
		size_t n = splice_zeropage_into_pipe(pipe, pos, len);

		pos += n;
		total += n;
		len -= n;
	}

	return total;
}

static loff_t zcref_lseek(struct file *file, loff_t offset, int orig)
{
	return file->f_pos = 0;
}

static int zcref_open(struct inode *inode, struct file *file)
{
	file->f_mode |= FMODE_NOWAIT;	/* as stock /dev/zero */
	return 0;
}

static const struct file_operations zcref_fops = {
	.owner = THIS_MODULE, .open = zcref_open, .llseek = zcref_lseek,
	.read_iter = zcref_read_iter, .write_iter = zcref_write_iter,
	.splice_read = zcref_splice_read, .splice_write = zcref_splice_write,
};

static struct miscdevice zcref_dev = {
	.minor = MISC_DYNAMIC_MINOR, .name = "zcref", .fops = &zcref_fops, .mode = 0666,
};

static int __init zcref_init(void)
{
	return misc_register(&zcref_dev);
}

/* Only after every pipe that held its buffers is gone: see the top. */
static void __exit zcref_exit(void)
{
	misc_deregister(&zcref_dev);
}

module_init(zcref_init);
module_exit(zcref_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("zcbench reference: the zero-page splice proposed for /dev/zero");
