// SPDX-License-Identifier: GPL-2.0
/*
 * Splicing zeros: every pipe buffer is a reference to memory that is
 * zero and stays zero.  Nothing is allocated, cleared or copied per call,
 * whatever the size.
 *
 * Two kinds of buffer, chosen at load by the splice_buffer parameter:
 *
 * - Large (the default): a zeroed folio of the module's own, up to 2 MiB,
 *   allocated once at load.  One buffer carries up to the folio's size,
 *   so a splice of a whole pipe is one buffer, not one per page.  The
 *   buffers use the kernel's own nosteal_pipe_buf_ops and hold a folio
 *   reference each, as a socket's buffers do: nothing in a pipe points
 *   into this module, rmmod never waits for a pipe, and the folio is
 *   freed by whoever puts its last reference, the module's own dropped at
 *   exit.  The reference is an atomic, one per buffer: at up to 2 MiB a
 *   buffer it does not show.
 *
 * - The zero page (splice_buffer=4096, or when no folio of even two pages
 *   could be had): one page per buffer, as stock /dev/zero on new kernels.
 *   A reference on the shared zero page per page would be an atomic on
 *   one cache line for all CPUs, so these buffers use zero_pipe_buf_ops
 *   and hold a reference on the "epoch" below instead.
 *
 * Either kind is never mergeable (flags 0), so a later write() into the
 * pipe gets a page of its own, and cannot be stolen, so nobody can ever
 * map its memory writable through a pipe.
 *
 * Unload safety of zero-page buffers.  A pipe outlives the file it was
 * spliced from, and these buffers point at zero_pipe_buf_ops, which live
 * in this module.  Each buffer holds a reference on a percpu_ref: a
 * this_cpu add, no shared cache line.  All files opened while any is open
 * share one such "epoch"; the epoch pins the module once, so rmmod fails
 * with EBUSY (EWOULDBLOCK from the syscall) while buffers may exist.  When
 * the last file is closed the epoch is killed without waiting: the
 * percpu_ref turns atomic a grace period later, and when its last buffer
 * is released, an RCU callback frees it and drops the module reference,
 * so rmmod succeeds once the pipes are drained and the grace periods have
 * passed (milliseconds; waiting for them in close() instead would slow
 * every such close down).  The callback runs a grace period after the
 * last put, whose RCU read-side section holds the put itself, and
 * zc_pipe_exit() waits for it with rcu_barrier().
 *
 * That still leaves the instructions after a put: zero_pipe_buf_release()
 * returning out of this module, after percpu_ref_put()'s read-side
 * section has ended.  Under preemptible RCU a task can be preempted right
 * there, past any grace period, while the last put elsewhere lets rmmod
 * free the text it is about to run.  Tasks RCU waits for exactly such
 * tasks (a grace period ends only when every task has switched out
 * voluntarily or run in user space), so zc_pipe_exit() waits for one too,
 * as modules with trampolines do: no code of the module runs after it is
 * gone.  Only rmmod pays for that wait.
 *
 * An epoch that never had a buffer is simply kept for the next open, so
 * read()-only users pay nothing for this; with large buffers, open and
 * close do not touch epochs at all.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu-refcount.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <linux/splice.h>
#include "zcdev_pipe.h"

#define ZC_SPLICE_BUFFER_MAX	((unsigned long)SZ_2M)

struct zc_epoch {
	struct percpu_ref bufs;
	struct rcu_head rcu;
	bool spliced;
};

static DEFINE_MUTEX(zc_epoch_lock);
static struct zc_epoch *zc_epoch;	/* of the open files, or idle */
static unsigned int zc_open_files;
static struct page *zc_zero_page;
static struct folio *zc_zero_folio;	/* large buffers, or NULL */
static unsigned int zc_splice_buffer = SZ_2M;

static int splice_buffer_set(const char *val, const struct kernel_param *kp)
{
	unsigned int size;

	if (kstrtouint(val, 0, &size) || size < PAGE_SIZE ||
	    size > ZC_SPLICE_BUFFER_MAX || !is_power_of_2(size)) {
		pr_err("splice_buffer: give a power of two from %lu to %lu\n",
		       PAGE_SIZE, ZC_SPLICE_BUFFER_MAX);
		return -EINVAL;
	}
	zc_splice_buffer = size;
	return 0;
}

static const struct kernel_param_ops splice_buffer_ops = {
	.set	= splice_buffer_set,
	.get	= param_get_uint,
};

module_param_cb(splice_buffer, &splice_buffer_ops, &zc_splice_buffer, 0444);
MODULE_PARM_DESC(splice_buffer,
		 "Bytes a spliced pipe buffer carries, set at load: 4096 (the zero page) up to 2097152, a power of two (default 2 MiB)");

static void zc_epoch_free(struct rcu_head *rcu)
{
	struct zc_epoch *epoch = container_of(rcu, struct zc_epoch, rcu);

	percpu_ref_exit(&epoch->bufs);
	kfree(epoch);
	module_put(THIS_MODULE);
}

/* The last buffer of a killed epoch is gone: any context. */
static void zc_epoch_drained(struct percpu_ref *ref)
{
	struct zc_epoch *epoch = container_of(ref, struct zc_epoch, bufs);

	call_rcu(&epoch->rcu, zc_epoch_free);
}

static struct zc_epoch *zc_epoch_new(void)
{
	struct zc_epoch *epoch = kzalloc(sizeof(*epoch), GFP_KERNEL_ACCOUNT);

	if (epoch && percpu_ref_init(&epoch->bufs, zc_epoch_drained, 0,
				     GFP_KERNEL_ACCOUNT)) {
		kfree(epoch);
		epoch = NULL;
	}
	return epoch;
}

int zc_pipe_open(struct file *file)
{
	int ret = 0;

	if (zc_zero_folio)
		return 0;
	mutex_lock(&zc_epoch_lock);
	if (!zc_epoch)
		zc_epoch = zc_epoch_new();
	if (!zc_epoch) {
		ret = -ENOMEM;
	} else {
		if (!zc_open_files++)
			__module_get(THIS_MODULE);
		file->private_data = zc_epoch;
	}
	mutex_unlock(&zc_epoch_lock);
	return ret;
}

/*
 * Called from ->release(), which runs with the module pinned by the file
 * and after every splice through any file of the epoch has returned.
 */
void zc_pipe_release(struct file *file)
{
	if (zc_zero_folio)
		return;
	mutex_lock(&zc_epoch_lock);
	if (!--zc_open_files) {
		if (zc_epoch->spliced) {
			percpu_ref_kill(&zc_epoch->bufs);
			zc_epoch = NULL;
		} else {
			module_put(THIS_MODULE);
		}
	}
	mutex_unlock(&zc_epoch_lock);
}

/*
 * The largest zeroed folio up to splice_buffer, else the zero page: a
 * failed allocation costs speed, never the load.
 */
void zc_pipe_init(void)
{
	unsigned int order = ilog2(zc_splice_buffer >> PAGE_SHIFT);

	zc_zero_page = ZERO_PAGE(0);
	for (; order; order--) {
		zc_zero_folio = folio_alloc(GFP_KERNEL | __GFP_ZERO |
					    __GFP_NOWARN | __GFP_NORETRY, order);
		if (zc_zero_folio)
			break;
	}
	if (zc_splice_buffer > (PAGE_SIZE << order))
		pr_info("splice_buffer: no %u bytes to be had, %lu it is\n",
			zc_splice_buffer, PAGE_SIZE << order);
	zc_splice_buffer = PAGE_SIZE << order;
}

void zc_pipe_exit(void)
{
	if (zc_zero_folio)
		folio_put(zc_zero_folio);	/* the pipes may hold it longer */
	if (zc_epoch) {
		percpu_ref_exit(&zc_epoch->bufs);
		kfree(zc_epoch);
	}
	rcu_barrier();
	synchronize_rcu_tasks();
}

static struct zc_epoch *buf_epoch(struct pipe_buffer *buf)
{
	return (struct zc_epoch *)buf->private;
}

static void zero_pipe_buf_release(struct pipe_inode_info *pipe,
				  struct pipe_buffer *buf)
{
	percpu_ref_put(&buf_epoch(buf)->bufs);
}

static bool zero_pipe_buf_try_steal(struct pipe_inode_info *pipe,
				    struct pipe_buffer *buf)
{
	return false;
}

static bool zero_pipe_buf_get(struct pipe_inode_info *pipe,
			      struct pipe_buffer *buf)
{
	percpu_ref_get(&buf_epoch(buf)->bufs);
	return true;
}

static const struct pipe_buf_operations zero_pipe_buf_ops = {
	.release	= zero_pipe_buf_release,
	.try_steal	= zero_pipe_buf_try_steal,
	.get		= zero_pipe_buf_get,
};

static void zero_buf(struct pipe_buffer *buf, size_t len,
		     struct zc_epoch *epoch)
{
	*buf = (struct pipe_buffer) {
		.page		= zc_zero_page,
		.len		= len,
		.ops		= &zero_pipe_buf_ops,
		.private	= (unsigned long)epoch,
	};
}

/*
 * Up to @slots buffers of up to zc_splice_buffer bytes each, in one folio
 * reference update.  The VFS caps @len at the free slots' worth of pages.
 */
static size_t splice_folio_into_pipe(struct pipe_inode_info *pipe,
				     unsigned int slots, size_t len)
{
	struct pipe_buffer *bufs = pipe->bufs;
	unsigned int head = pipe->head, mask = pipe->ring_size - 1;
	size_t spliced = 0;
	unsigned int n;

	for (n = 0; n < slots && spliced < len; n++) {
		size_t chunk = min_t(size_t, len - spliced, zc_splice_buffer);

		bufs[head++ & mask] = (struct pipe_buffer) {
			.page	= &zc_zero_folio->page,
			.len	= chunk,
			.ops	= &nosteal_pipe_buf_ops,
		};
		spliced += chunk;
	}
	folio_ref_add(zc_zero_folio, n);
	pipe->head = head;
	return spliced;
}

static size_t splice_zeropage_into_pipe(struct file *in,
					struct pipe_inode_info *pipe,
					unsigned int slots, size_t len)
{
	struct zc_epoch *epoch = in->private_data;
	struct pipe_buffer *bufs = pipe->bufs;
	unsigned int head = pipe->head, mask = pipe->ring_size - 1;
	size_t spliced;

	slots = min_t(size_t, slots, DIV_ROUND_UP(len, PAGE_SIZE));
	if (!READ_ONCE(epoch->spliced))
		WRITE_ONCE(epoch->spliced, true);
	percpu_ref_get_many(&epoch->bufs, slots);
	spliced = min_t(size_t, len, (size_t)slots << PAGE_SHIFT);
	while (--slots)
		zero_buf(&bufs[head++ & mask], PAGE_SIZE, epoch);
	zero_buf(&bufs[head++ & mask],
		 spliced - ((spliced - 1) & PAGE_MASK), epoch);
	pipe->head = head;
	return spliced;
}

/* Called with the pipe locked and, by the VFS, waited for space. */
ssize_t splice_read_zero(struct file *in, loff_t *ppos,
			 struct pipe_inode_info *pipe, size_t len,
			 unsigned int flags)
{
	unsigned int slots = pipe->max_usage -
			     pipe_occupancy(pipe->head, pipe->tail);

	if (!len)
		return 0;
	if (!slots)
		return -EAGAIN;
	if (zc_zero_folio)
		return splice_folio_into_pipe(pipe, slots, len);
	return splice_zeropage_into_pipe(in, pipe, slots, len);
}

/* Whether @buf is one of ours, and so needs no confirming. */
static bool zc_folio_buf(const struct pipe_buffer *buf)
{
	return buf->ops == &nosteal_pipe_buf_ops && zc_zero_folio &&
	       buf->page == &zc_zero_folio->page;
}

/*
 * Consume up to @len bytes of what the pipe holds, without a call per
 * buffer of ours: their references go back in one batch per epoch, or
 * one for the folio.  Other buffers are confirmed first, as
 * splice_from_pipe_feed() does, so that a page-cache page that failed to
 * read in fails the splice.
 */
static ssize_t zc_pipe_drain(struct pipe_inode_info *pipe, size_t len)
{
	struct pipe_buffer *bufs = pipe->bufs;
	unsigned int tail = pipe->tail, head = pipe->head;
	unsigned int mask = pipe->ring_size - 1;
	struct zc_epoch *epoch = NULL;
	unsigned long refs = 0;
	unsigned int folio_refs = 0;
	size_t done = 0;
	int err = 0;

	while (!pipe_empty(head, tail) && done < len) {
		struct pipe_buffer *buf = &bufs[tail & mask];
		size_t n = min_t(size_t, buf->len, len - done);
		bool zero_page = buf->ops == &zero_pipe_buf_ops;
		bool folio = zc_folio_buf(buf);

		if (!zero_page && !folio) {
			err = pipe_buf_confirm(pipe, buf);
			if (err)
				break;
		}
		done += n;
		if (n < buf->len) {
			buf->offset += n;
			buf->len -= n;
			break;
		}
		if (folio) {
			folio_refs++;
		} else if (!zero_page) {
			pipe_buf_release(pipe, buf);
		} else {
			if (buf_epoch(buf) != epoch) {
				if (refs)
					percpu_ref_put_many(&epoch->bufs, refs);
				epoch = buf_epoch(buf);
				refs = 0;
			}
			refs++;
		}
		buf->ops = NULL;
		tail++;
	}
	if (refs)
		percpu_ref_put_many(&epoch->bufs, refs);
	if (folio_refs)
		folio_put_refs(zc_zero_folio, folio_refs);
	if (tail != pipe->tail) {
		pipe->tail = tail;
		smp_mb();	/* tail before the waitqueue, as splice.c does */
		if (waitqueue_active(&pipe->wr_wait))
			wake_up_interruptible(&pipe->wr_wait);
		kill_fasync(&pipe->fasync_writers, SIGIO, POLL_OUT);
	}
	return done ? done : err;
}

static int pipe_to_null(struct pipe_inode_info *pipe, struct pipe_buffer *buf,
			struct splice_desc *sd)
{
	return sd->len;
}

ssize_t splice_write_zero(struct pipe_inode_info *pipe, struct file *out,
			  loff_t *ppos, size_t len, unsigned int flags)
{
	struct splice_desc sd = {
		.total_len	= len,
		.flags		= flags,
		.pos		= *ppos,
		.u.file		= out,
	};
	ssize_t ret;

	pipe_lock(pipe);
	ret = zc_pipe_drain(pipe, len);
	if (!ret)	/* empty: wait for data the way splice.c does */
		ret = __splice_from_pipe(pipe, &sd, pipe_to_null);
	pipe_unlock(pipe);
	return ret;
}

ssize_t splice_write_full(struct pipe_inode_info *pipe, struct file *out,
			  loff_t *ppos, size_t len, unsigned int flags)
{
	return -ENOSPC;
}
