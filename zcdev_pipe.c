// SPDX-License-Identifier: GPL-2.0
/*
 * Splicing zeros: a pipe buffer of ours points into memory that is zero
 * and stays zero.  Nothing is allocated, cleared or copied per call.
 * The rules a change here must keep:
 *
 * - A buffer points into a zero (struct zc_zero): a zeroed folio of up
 *   to splice_buffer bytes, or the kernel's zero page when no folio can
 *   be had or splice_buffer is 4096.  Buffers are never mergeable and
 *   never stolen (zc_pipe_buf_ops has no ->try_steal), so nobody writes
 *   that memory.
 * - A buffer holds no page reference.  It holds one reference on a
 *   generation (struct zc_gen), a percpu_ref: a splice or tee adds on
 *   its CPU, a release subtracts on its own.  No page count is written
 *   by a round trip into /dev/null, into /dev/zczero or to a reader.
 * - Only consumers that keep pages (socket frags, bvec I/O) take page
 *   references, and they call ->confirm() first.  zc_pipe_buf_confirm()
 *   reads the folio's count and, from ZC_REFS_HIGH (2^30) on, marks the
 *   zero worn and moves the buffer onto a fresh zero, at offset 0 when
 *   it does not fit where it was; it fails only when no zero can hold the
 *   buffer (the zero page holds a page).  So the count passes 2^30 only by
 *   what is taken after one confirm, a few hundred a page at most, and
 *   by references taken without one (skb clones, each with its skb):
 *   the 2^31 - 2^30 left before try_get_page() refuses cost 40 GiB.
 * - A zero is replaced (zc_zero_renew()) only when worn, which takes
 *   2^30 real references at once, or when it is smaller than asked for;
 *   at most ZC_FOLIOS_MAX folios live, 32 MiB, and past that the zero
 *   page serves.  Replacements are not charged to a memory cgroup: they
 *   serve everyone.  A zero leaves service checked to be zero still.
 * - A generation takes new buffers for ZC_GEN_LIFE, pins its zero and
 *   the module until its last buffer is gone, then an RCU callback frees
 *   it: rmmod fails with EBUSY while buffers exist, and works ¼ s and two
 *   grace periods after the last splice once the pipes are drained.
 *   zc_pipe_exit() waits for that callback (rcu_barrier()) and for tasks
 *   preempted between a last percpu_ref_put() and their return out of
 *   this module (synchronize_rcu_tasks()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/kref.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu-refcount.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/splice.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include "zcdev_pipe.h"

#define ZC_SPLICE_BUFFER_MAX	((unsigned long)SZ_2M)

/* The page count from which a folio takes no new consumer. */
#define ZC_REFS_HIGH		BIT(30)
/* How many zeros with a folio may live: 32 MiB of 2 MiB folios. */
#define ZC_FOLIOS_MAX		16
/* How long a generation takes new buffers. */
#define ZC_GEN_LIFE		(HZ / 4)

struct zc_zero {
	struct folio *folio;	/* NULL: the kernel's zero page */
	unsigned int size;	/* the most bytes a buffer of it spans */
	bool worn;		/* its page count reached ZC_REFS_HIGH */
	struct kref kref;	/* zc_next_zero's, and one per generation */
};

/* A line of its own: every splice reads it, nobody else writes it. */
struct zc_gen {
	struct percpu_ref bufs;	/* one per pipe buffer */
	struct zc_zero *zero;	/* what its buffers point into */
	struct rcu_head rcu;	/* zc_gen_free(), after the last buffer */
} ____cacheline_aligned_in_smp;

/* Lock order: a pipe's mutex, zc_renew_lock, zc_lock. */
static DEFINE_MUTEX(zc_renew_lock);	/* one replacement at a time */
static DEFINE_MUTEX(zc_lock);		/* zc_gen, zc_next_zero changing */
static struct zc_gen __rcu *zc_gen __read_mostly; /* NULL: none taking */
static struct zc_zero *zc_next_zero;	/* the next generation's; both locks */
static atomic_t zc_folios;		/* zeros with a folio, alive */
static bool zc_gens_made;		/* zc_pipe_exit() has callbacks to wait for */
static unsigned int zc_splice_buffer = SZ_2M;

static void zc_gen_expire(struct work_struct *work);
static DECLARE_DELAYED_WORK(zc_gen_expiry, zc_gen_expire);
static void zc_zero_renew_work(struct work_struct *work);
static DECLARE_WORK(zc_renewal, zc_zero_renew_work);

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

/*
 * The largest zeroed folio up to @size, else the zero page: a failed
 * allocation costs speed, never a splice.  NULL only when not even the
 * struct can be had.
 */
static struct zc_zero *zc_zero_new(unsigned int size)
{
	struct zc_zero *zero = kzalloc(sizeof(*zero), GFP_KERNEL);
	unsigned int order = ilog2(size >> PAGE_SHIFT);

	if (!zero)
		return NULL;
	if (atomic_inc_return(&zc_folios) > ZC_FOLIOS_MAX)
		order = 0;
	for (; order; order--) {
		zero->folio = folio_alloc(GFP_KERNEL | __GFP_ZERO |
					  __GFP_NOWARN | __GFP_NORETRY, order);
		if (zero->folio)
			break;
	}
	if (!zero->folio)
		atomic_dec(&zc_folios);
	zero->size = PAGE_SIZE << order;
	kref_init(&zero->kref);
	return zero;
}

/* Any context: the folio goes with the last socket reference, if any. */
static void zc_zero_free(struct kref *kref)
{
	struct zc_zero *zero = container_of(kref, struct zc_zero, kref);

	if (zero->folio) {
		folio_put(zero->folio);
		atomic_dec(&zc_folios);
	}
	kfree(zero);
}

/* @zero leaves service: its bytes must be zero still. */
static void zc_zero_retire(struct zc_zero *zero)
{
	struct folio *folio = zero->folio;

	WARN_ONCE(folio && memchr_inv(folio_address(folio), 0, folio_size(folio)),
		  "zcdev: a zero folio was written to\n");
	kref_put(&zero->kref, zc_zero_free);
}

/* Whether @zero should be replaced; under either lock. */
static bool zc_zero_stale(const struct zc_zero *zero)
{
	return READ_ONCE(zero->worn) || zero->size < zc_splice_buffer;
}

static void zc_gen_free(struct rcu_head *rcu)
{
	struct zc_gen *gen = container_of(rcu, struct zc_gen, rcu);

	kref_put(&gen->zero->kref, zc_zero_free);
	percpu_ref_exit(&gen->bufs);
	kfree(gen);
	module_put(THIS_MODULE);
}

/* The last buffer of an ended generation is gone: any context. */
static void zc_gen_drained(struct percpu_ref *ref)
{
	struct zc_gen *gen = container_of(ref, struct zc_gen, bufs);

	call_rcu(&gen->rcu, zc_gen_free);
}

/* End the current generation: it goes with its last buffer. */
static void zc_gen_end(void)
{
	struct zc_gen *gen = rcu_dereference_protected(zc_gen,
					lockdep_is_held(&zc_lock));

	if (!gen)
		return;
	RCU_INIT_POINTER(zc_gen, NULL);
	percpu_ref_kill(&gen->bufs);
}

static void zc_gen_expire(struct work_struct *work)
{
	mutex_lock(&zc_lock);
	zc_gen_end();
	mutex_unlock(&zc_lock);
}

/*
 * Replace the next generation's zero if it is worn, or smaller than
 * asked for and a larger folio can now be had.  The generation taking
 * buffers ends, so that the next splice takes the new zero.
 */
static void zc_zero_renew(void)
{
	struct zc_zero *old, *zero;

	mutex_lock(&zc_renew_lock);
	old = zc_next_zero;
	if (!zc_zero_stale(old))
		goto out;
	zero = zc_zero_new(zc_splice_buffer);
	if (!zero)
		goto out;
	if (!READ_ONCE(old->worn) && zero->size <= old->size) {
		kref_put(&zero->kref, zc_zero_free);	/* no better */
		goto out;
	}
	mutex_lock(&zc_lock);
	zc_next_zero = zero;
	zc_gen_end();
	mutex_unlock(&zc_lock);
	zc_zero_retire(old);
out:
	mutex_unlock(&zc_renew_lock);
}

static void zc_zero_renew_work(struct work_struct *work)
{
	zc_zero_renew();
}

/*
 * A new current generation on the next zero, accounted to the task that
 * splices; a zero smaller than asked for is replaced in the background.
 * Under zc_lock.
 */
static struct zc_gen *zc_gen_start(void)
{
	struct zc_gen *gen;

	if (zc_zero_stale(zc_next_zero))
		schedule_work(&zc_renewal);
	gen = kzalloc(sizeof(*gen), GFP_KERNEL_ACCOUNT);
	if (!gen || percpu_ref_init(&gen->bufs, zc_gen_drained, 0,
				    GFP_KERNEL_ACCOUNT)) {
		kfree(gen);
		return NULL;
	}
	kref_get(&zc_next_zero->kref);
	gen->zero = zc_next_zero;
	__module_get(THIS_MODULE);	/* a file or buffer of ours: live */
	zc_gens_made = true;
	rcu_assign_pointer(zc_gen, gen);
	schedule_delayed_work(&zc_gen_expiry, ZC_GEN_LIFE);
	return gen;
}

/* How many buffers carry @len, in at most @slots. */
static unsigned int zc_bufs_for(const struct zc_zero *zero, size_t len,
				unsigned int slots)
{
	return min_t(size_t, slots, DIV_ROUND_UP(len, zero->size));
}

static struct zc_gen *zc_gen_get_slow(size_t len, unsigned int *slots)
{
	struct zc_gen *gen;
	bool worn;

	mutex_lock(&zc_lock);
	worn = READ_ONCE(zc_next_zero->worn);
	mutex_unlock(&zc_lock);
	if (worn)		/* new buffers need a new zero: now */
		zc_zero_renew();

	mutex_lock(&zc_lock);
	gen = rcu_dereference_protected(zc_gen, lockdep_is_held(&zc_lock));
	if (!gen || READ_ONCE(gen->zero->worn)) {
		zc_gen_end();
		gen = zc_gen_start();
	}
	if (gen) {
		*slots = zc_bufs_for(gen->zero, len, *slots);
		percpu_ref_get_many(&gen->bufs, *slots);
	}
	mutex_unlock(&zc_lock);
	return gen;
}

/*
 * The current generation, with a reference for each of the buffers that
 * carry @len in at most *@slots, their number left in *@slots.
 */
static struct zc_gen *zc_gen_get(size_t len, unsigned int *slots)
{
	struct zc_gen *gen;

	rcu_read_lock();
	gen = rcu_dereference(zc_gen);
	if (likely(gen && !READ_ONCE(gen->zero->worn))) {
		*slots = zc_bufs_for(gen->zero, len, *slots);
		percpu_ref_get_many(&gen->bufs, *slots);
		rcu_read_unlock();
		return gen;
	}
	rcu_read_unlock();
	return zc_gen_get_slow(len, slots);
}

int zc_pipe_init(void)
{
	zc_next_zero = zc_zero_new(zc_splice_buffer);
	if (!zc_next_zero)
		return -ENOMEM;
	if (zc_next_zero->size < zc_splice_buffer)
		pr_info("splice_buffer: %u bytes for now, no folio of %u to be had\n",
			zc_next_zero->size, zc_splice_buffer);
	return 0;
}

/*
 * At unload, or after a failed load: no file is open and no buffer is
 * left, but the last generation's callback, or the work that ended it,
 * may still be running their last instructions.
 */
void zc_pipe_exit(void)
{
	cancel_delayed_work_sync(&zc_gen_expiry);
	cancel_work_sync(&zc_renewal);
	if (zc_gens_made) {
		rcu_barrier();
		synchronize_rcu_tasks();
	}
	zc_zero_retire(zc_next_zero);
}

/* The first page of @zero's memory. */
static struct page *zc_zero_page(const struct zc_zero *zero)
{
	return zero->folio ? folio_page(zero->folio, 0) : ZERO_PAGE(0);
}

static struct zc_gen *buf_gen(const struct pipe_buffer *buf)
{
	return (struct zc_gen *)buf->private;
}

/*
 * Whether @zero can carry @buf's bytes: up to its size (a page for the
 * zero page), and a folio only while it may take more references.
 */
static bool zc_zero_holds(const struct zc_zero *zero,
			  const struct pipe_buffer *buf)
{
	return buf->len <= zero->size &&
	       (!zero->folio || (!READ_ONCE(zero->worn) &&
				 folio_ref_count(zero->folio) < ZC_REFS_HIGH));
}

/*
 * @buf's folio has all the page references it may: move @buf onto the
 * current zero, at the same offset if it fits there, else at 0 (its
 * bytes are zeros either way; every caller of ->confirm() reads
 * buf->page and buf->offset after it).  The new generation's reference
 * is taken before the old one goes: fuse confirms its own copy of a
 * buffer with the pipe unlocked.
 */
static int zc_pipe_buf_rehome(struct pipe_buffer *buf)
{
	struct zc_gen *old = buf_gen(buf), *gen;
	const struct zc_zero *zero;
	unsigned int slots = 1;

	WRITE_ONCE(old->zero->worn, true);
	gen = zc_gen_get(buf->len, &slots);
	if (!gen)
		return -ENOMEM;
	zero = gen->zero;
	if (!zc_zero_holds(zero, buf)) {
		percpu_ref_put(&gen->bufs);
		pr_notice_ratelimited("no zero of %u bytes to move a buffer to: ENOMEM\n",
				      buf->len);
		return -ENOMEM;
	}
	if (buf->offset + buf->len > zero->size)
		buf->offset = 0;
	buf->page = zc_zero_page(zero);
	buf->private = (unsigned long)gen;
	percpu_ref_put(&old->bufs);
	return 0;
}

static int zc_pipe_buf_confirm(struct pipe_inode_info *pipe,
			       struct pipe_buffer *buf)
{
	struct folio *folio = buf_gen(buf)->zero->folio;

	if (!folio || likely(folio_ref_count(folio) < ZC_REFS_HIGH))
		return 0;
	return zc_pipe_buf_rehome(buf);
}

static void zc_pipe_buf_release(struct pipe_inode_info *pipe,
				struct pipe_buffer *buf)
{
	percpu_ref_put(&buf_gen(buf)->bufs);
}

static bool zc_pipe_buf_get(struct pipe_inode_info *pipe,
			    struct pipe_buffer *buf)
{
	percpu_ref_get(&buf_gen(buf)->bufs);
	return true;
}

static const struct pipe_buf_operations zc_pipe_buf_ops = {
	.confirm	= zc_pipe_buf_confirm,
	.release	= zc_pipe_buf_release,
	/* no .try_steal: pipe_buf_try_steal() refuses for us */
	.get		= zc_pipe_buf_get,
};

/*
 * @n buffers of @gen's zero, @len bytes in all.  The VFS caps @len at
 * the free slots' worth of pages, so zero-page buffers fit too.
 */
static size_t splice_zero_into_pipe(struct pipe_inode_info *pipe,
				    struct zc_gen *gen, unsigned int n,
				    size_t len)
{
	const struct zc_zero *zero = gen->zero;
	struct page *page = zc_zero_page(zero);
	unsigned int head = pipe->head, mask = pipe->ring_size - 1;
	size_t spliced = 0;

	while (n--) {
		size_t chunk = min_t(size_t, len - spliced, zero->size);

		pipe->bufs[head++ & mask] = (struct pipe_buffer) {
			.page		= page,
			.len		= chunk,
			.ops		= &zc_pipe_buf_ops,
			.private	= (unsigned long)gen,
		};
		spliced += chunk;
	}
	pipe->head = head;
	return spliced;
}

/* Called with the pipe locked and, by the VFS, waited for space. */
ssize_t zc_splice_read(struct file *in, loff_t *ppos,
		       struct pipe_inode_info *pipe, size_t len,
		       unsigned int flags)
{
	unsigned int slots = pipe->max_usage -
			     pipe_occupancy(pipe->head, pipe->tail);
	struct zc_gen *gen;

	if (!len)
		return 0;
	if (!slots)
		return -EAGAIN;
	gen = zc_gen_get(len, &slots);
	if (!gen)
		return -ENOMEM;
	return splice_zero_into_pipe(pipe, gen, slots, len);
}

/*
 * Consume up to @len bytes of what the pipe holds, without a call per
 * buffer of ours: their references go back in one batch per generation.
 * Other buffers are confirmed first, as splice_from_pipe_feed() does, so
 * that a page-cache page that failed to read in ends the splice (with 0
 * for -ENODATA, as there).  Ours need no confirming: nothing here takes
 * a page reference.
 */
static ssize_t zc_pipe_drain(struct pipe_inode_info *pipe, size_t len)
{
	struct pipe_buffer *bufs = pipe->bufs;
	unsigned int tail = pipe->tail, head = pipe->head;
	unsigned int mask = pipe->ring_size - 1;
	struct zc_gen *gen = NULL;
	unsigned long refs = 0;
	size_t done = 0;
	int err = 0;

	while (!pipe_empty(head, tail) && done < len) {
		struct pipe_buffer *buf = &bufs[tail & mask];
		size_t n = min_t(size_t, buf->len, len - done);
		bool ours = buf->ops == &zc_pipe_buf_ops;

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
			if (buf_gen(buf) != gen) {
				if (refs)
					percpu_ref_put_many(&gen->bufs, refs);
				gen = buf_gen(buf);
				refs = 0;
			}
			refs++;
			buf->ops = NULL;
		}
		tail++;
	}
	if (refs)
		percpu_ref_put_many(&gen->bufs, refs);
	if (tail != pipe->tail) {
		pipe->tail = tail;
		smp_mb();	/* tail before the waitqueue, as splice.c does */
		if (waitqueue_active(&pipe->wr_wait))
			wake_up_interruptible(&pipe->wr_wait);
		kill_fasync(&pipe->fasync_writers, SIGIO, POLL_OUT);
	}
	if (done)
		return done;
	return err == -ENODATA ? 0 : err;
}

static int pipe_to_null(struct pipe_inode_info *pipe, struct pipe_buffer *buf,
			struct splice_desc *sd)
{
	return sd->len;
}

ssize_t zc_splice_write_zero(struct pipe_inode_info *pipe, struct file *out,
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

ssize_t zc_splice_write_full(struct pipe_inode_info *pipe, struct file *out,
			     loff_t *ppos, size_t len, unsigned int flags)
{
	return -ENOSPC;
}
