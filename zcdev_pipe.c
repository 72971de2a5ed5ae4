// SPDX-License-Identifier: GPL-2.0
/*
 * Splicing zeros: every pipe buffer is a reference to the kernel's zero
 * page.  Nothing is allocated, cleared or copied, whatever the size.
 *
 * The buffers are never mergeable (flags 0), so a later write() into the
 * pipe gets a page of its own, and they cannot be stolen, so nobody can
 * ever map the zero page writable through them.
 *
 * Unload safety.  A pipe outlives the file it was spliced from, and its
 * buffers point at zero_pipe_buf_ops, which live in this module.  Taking a
 * page reference or a module reference per buffer would make every page
 * an atomic operation on one cache line shared by all CPUs.  Instead each
 * buffer holds a reference on a percpu_ref: a this_cpu add, no shared
 * cache line.  All files opened while any is open share one such "epoch";
 * the epoch pins the module once, so rmmod fails with EBUSY (EWOULDBLOCK
 * from the syscall) while buffers may exist.  When the last file is closed
 * the epoch is killed without waiting: the percpu_ref turns atomic a grace
 * period later, and when its last buffer is released, an RCU callback
 * frees it and drops the module reference, so rmmod succeeds once the
 * pipes are drained and the grace periods have passed (milliseconds;
 * waiting for them in close() instead would slow every such close down).
 * The callback runs a grace period after the last put, whose RCU
 * read-side section holds the put itself, and zc_pipe_exit() waits for it
 * with rcu_barrier().
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
 * read()-only users pay nothing for this.
 *
 * The alternatives weighed: kernel-owned nosteal_pipe_buf_ops with pages
 * of our own would make unloading trivial, but put a page reference, an
 * atomic, on every buffer; a module that can never be unloaded would save
 * the per-CPU add, and take rmmod away from its users.
 */
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu-refcount.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/splice.h>
#include "zcdev_pipe.h"

struct zc_epoch {
	struct percpu_ref bufs;
	struct rcu_head rcu;
	bool spliced;
};

static DEFINE_MUTEX(zc_epoch_lock);
static struct zc_epoch *zc_epoch;	/* of the open files, or idle */
static unsigned int zc_open_files;
static struct page *zc_zero_page;

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

void zc_pipe_init(void)
{
	zc_zero_page = ZERO_PAGE(0);
}

void zc_pipe_exit(void)
{
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

/* Called with the pipe locked and, by the VFS, waited for space. */
ssize_t splice_read_zero(struct file *in, loff_t *ppos,
			 struct pipe_inode_info *pipe, size_t len,
			 unsigned int flags)
{
	struct zc_epoch *epoch = in->private_data;
	struct pipe_buffer *bufs = pipe->bufs;
	unsigned int head = pipe->head, mask = pipe->ring_size - 1;
	unsigned int slots = pipe->max_usage - pipe_occupancy(head, pipe->tail);
	size_t spliced;

	slots = min_t(size_t, slots, DIV_ROUND_UP(len, PAGE_SIZE));
	if (!slots)
		return len ? -EAGAIN : 0;

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

/*
 * Consume up to @len bytes of what the pipe holds, without a call per
 * zero-page buffer: their references go back in one batch per epoch.
 * Other buffers are confirmed first, as splice_from_pipe_feed() does, so
 * that a page-cache page that failed to read in fails the splice.
 */
static ssize_t zc_pipe_drain(struct pipe_inode_info *pipe, size_t len)
{
	struct pipe_buffer *bufs = pipe->bufs;
	unsigned int tail = pipe->tail, head = pipe->head;
	unsigned int mask = pipe->ring_size - 1;
	struct zc_epoch *epoch = NULL;
	unsigned long refs = 0;
	size_t done = 0;
	int err = 0;

	while (!pipe_empty(head, tail) && done < len) {
		struct pipe_buffer *buf = &bufs[tail & mask];
		size_t n = min_t(size_t, buf->len, len - done);
		bool ours = buf->ops == &zero_pipe_buf_ops;

		if (!ours) {
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
		if (!ours) {
			pipe_buf_release(pipe, buf);
		} else {
			if (buf_epoch(buf) != epoch) {
				if (refs)
					percpu_ref_put_many(&epoch->bufs, refs);
				epoch = buf_epoch(buf);
				refs = 0;
			}
			refs++;
			buf->ops = NULL;
		}
		tail++;
	}
	if (refs)
		percpu_ref_put_many(&epoch->bufs, refs);
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
