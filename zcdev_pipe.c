// SPDX-License-Identifier: GPL-2.0
/*
 * Splicing zeros: every pipe buffer is a reference to memory that is
 * zero and stays zero.  Nothing is allocated, cleared or copied per call,
 * and no cache line is written by two CPUs, whatever the size.
 *
 * The memory is a "zero": a zeroed folio of up to 2 MiB (splice_buffer),
 * one buffer of up to its size each, so that a splice of a whole pipe is
 * one buffer; or, with splice_buffer=4096 or when no folio of even two
 * pages can be had, the kernel's zero page, one page a buffer, as
 * shmem's holes and the zero-page splice patch proposed for /dev/zero
 * hand out.  Buffers are never mergeable (flags 0) and cannot be stolen,
 * so nobody can map or write that memory through a pipe.
 *
 * The buffers' operations are the module's own (zc_pipe_buf_ops), and a
 * buffer holds no page reference: it holds one on a "generation", a
 * percpu_ref, which costs a this_cpu add on the CPU that splices or tees
 * and a this_cpu sub on the CPU that releases.  Whatever CPUs they run
 * on, a round trip through a pipe into /dev/null, back into /dev/zczero
 * or to a reader thread writes no shared line: not the folio's count,
 * not the generation's (a producer on one CPU and a consumer on another
 * share the pipe's own lines, as for any pipe, and nothing of ours).
 *
 * The choice, and what it was weighed against:
 *
 * - One folio, and a folio reference per buffer with the kernel's
 *   nosteal_pipe_buf_ops, was zcdev's first design: two atomic writes a
 *   round trip on one line for all CPUs, and a 32-bit count that any
 *   user can drive towards a wrap, since tee takes a reference per copy
 *   with no bound.
 * - A folio per CPU (or per LLC or node) with nosteal_pipe_buf_ops keeps
 *   the count local only while the consumer runs where the producer did,
 *   costs 2 MiB per CPU, and leaves the count to tee and the sockets:
 *   no bound either.
 * - Module-owned operations and per-CPU references (this design) keep
 *   every count local, and see every copy (->get) and every consumer
 *   (->confirm), which is what a bound on the folio's count needs.  The
 *   price: a pipe buffer points into the module, so the module stays
 *   while buffers exist.
 *
 * The page count.  Whoever consumes a pipe buffer calls ->confirm()
 * before reading it (pipe_read(), splice_from_pipe_feed(),
 * splice_to_socket(), iter_file_splice_write(), fuse), and a consumer
 * that keeps pages rather than copying them (a socket's frags, a bvec's
 * direct I/O) takes at most one page reference per page of the buffer
 * then.  So zc_pipe_buf_confirm() charges the zero the pages the buffer
 * spans, and refuses (ENOMEM) once the zero's budget is spent: however
 * a user tees, splices and sends, the folio's count stays below its
 * budget, a quarter of what the count holds before try_get_page() gives
 * up on it, with the rest as margin for what the network stack does
 * with a frag once it has it.  A zero that has spent half its budget is
 * worn: the next splice starts a new one, and the old folio goes with
 * its last buffer or socket reference.  Charges come from a per-CPU
 * lease (zc_lease), so the shared budget is written once per lease.
 *
 * Unloading.  Each buffer holds a reference on its generation, and a
 * generation pins the module from its first splice until its last buffer
 * is gone, so rmmod fails with EBUSY (EWOULDBLOCK from the syscall) while
 * buffers may exist.  A generation is ended a quarter of a second after
 * it began (zc_gen_expire(), or sooner); the next splice starts another.
 * Its percpu_ref then turns atomic a grace period later, and when its
 * last buffer goes, an RCU callback frees it and drops the module
 * reference: rmmod succeeds once the pipes are drained, a quarter of a
 * second and two grace periods after the last splice at the most.
 * No per-open state: open() and close() touch nothing of ours.
 *
 * The callback runs a grace period after the last put, whose RCU
 * read-side section holds the put itself, and zc_pipe_exit() waits for it
 * with rcu_barrier().  That still leaves the instructions after a put:
 * zc_pipe_buf_release() returning out of this module after
 * percpu_ref_put()'s read-side section has ended.  Under preemptible RCU
 * a task can be preempted right there, past any grace period, while the
 * last put elsewhere lets rmmod free the text it is about to run.  Tasks
 * RCU waits for exactly such tasks, so zc_pipe_exit() waits for one too,
 * as modules with trampolines do.  Only an rmmod after splices pays it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cache.h>
#include <linux/kref.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/percpu-refcount.h>
#include <linux/poll.h>
#include <linux/rcupdate.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/splice.h>
#include <linux/workqueue.h>
#include "zcdev_pipe.h"

#define ZC_SPLICE_BUFFER_MAX	((unsigned long)SZ_2M)

/* Page references a zero's folio may become (see above): 2^29. */
#define ZC_ZERO_REFS		BIT(29)
/* Pages a CPU charges between two writes of a zero's budget. */
#define ZC_LEASE_MAX		BIT(16)
/* How long a generation takes new buffers. */
#define ZC_GEN_LIFE		(HZ / 4)

struct zc_zero {
	struct folio *folio;		/* NULL: the zero page */
	unsigned int buf_max;		/* bytes a buffer carries */
	bool worn;			/* half the budget spent */
	u64 seq;			/* names it to the leases */
	long worn_below;
	struct kref kref;		/* current, and one per generation */
	atomic_long_t budget ____cacheline_aligned_in_smp;
};

/* A line of its own: every splice reads it, nobody else writes it. */
struct zc_gen {
	struct percpu_ref bufs;		/* one per pipe buffer */
	struct zc_zero *zero;
	struct rcu_head rcu;
} ____cacheline_aligned_in_smp;

/* Pages this CPU may still charge to zero @seq. */
struct zc_lease {
	u64 seq;
	long left;
};

static DEFINE_MUTEX(zc_lock);
static struct zc_gen __rcu *zc_gen __read_mostly; /* NULL until a splice */
static struct zc_zero *zc_zero;		/* of the next generation */
static u64 zc_zero_seq;
static bool zc_gens_made;
static long zc_lease_pages __read_mostly;
static DEFINE_PER_CPU(struct zc_lease, zc_lease);
static unsigned int zc_splice_buffer = SZ_2M;

static void zc_gen_expire(struct work_struct *work);
static DECLARE_DELAYED_WORK(zc_gen_expiry, zc_gen_expire);

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
 * allocation costs speed, never a splice.  Called under zc_lock, or
 * alone at init.
 */
static struct zc_zero *zc_zero_new(unsigned int size, gfp_t gfp)
{
	struct zc_zero *zero = kzalloc(sizeof(*zero), gfp);
	unsigned int order = ilog2(size >> PAGE_SHIFT);
	long budget = ZC_ZERO_REFS;

	if (!zero)
		return NULL;
	for (; order; order--) {
		zero->folio = folio_alloc(gfp | __GFP_ZERO | __GFP_NOWARN |
					  __GFP_NORETRY, order);
		if (zero->folio)
			break;
	}
	zero->buf_max = PAGE_SIZE << order;
	zero->seq = ++zc_zero_seq;
	zero->worn_below = budget / 2;
	atomic_long_set(&zero->budget, budget);
	kref_init(&zero->kref);
	return zero;
}

/* Any context: the folio goes with the last socket reference, if any. */
static void zc_zero_free(struct kref *kref)
{
	struct zc_zero *zero = container_of(kref, struct zc_zero, kref);

	if (zero->folio)
		folio_put(zero->folio);
	kfree(zero);
}

/* Take @pages of @zero's budget, or nothing. */
static bool zc_zero_take(struct zc_zero *zero, long pages)
{
	long left = atomic_long_sub_return(pages, &zero->budget);

	if (left < zero->worn_below && !READ_ONCE(zero->worn))
		WRITE_ONCE(zero->worn, true);
	if (left >= 0)
		return true;
	atomic_long_add(pages, &zero->budget);
	return false;
}

/*
 * Charge @pages to @zero: from this CPU's lease, which a zero that is not
 * worn refills; a worn one is charged exactly, so that a CPU moving
 * between old and new buffers wastes nothing of what the old ones have
 * left.
 */
static bool zc_zero_charge(struct zc_zero *zero, long pages)
{
	struct zc_lease *lease;
	bool ok = true;

	lease = get_cpu_ptr(&zc_lease);
	if (likely(lease->seq == zero->seq && lease->left >= pages)) {
		lease->left -= pages;
	} else if (!READ_ONCE(zero->worn) &&
		   zc_zero_take(zero, zc_lease_pages + pages)) {
		lease->seq = zero->seq;
		lease->left = zc_lease_pages;
	} else {
		ok = zc_zero_take(zero, pages);
	}
	put_cpu_ptr(&zc_lease);
	return ok;
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
 * A new current generation, on a new zero if the current one is worn;
 * accounted to the task that splices.  Under zc_lock.
 */
static struct zc_gen *zc_gen_start(void)
{
	struct zc_zero *zero;
	struct zc_gen *gen;

	if (zc_zero->worn) {
		zero = zc_zero_new(zc_zero->buf_max, GFP_KERNEL_ACCOUNT);
		if (zero) {
			kref_put(&zc_zero->kref, zc_zero_free);
			zc_zero = zero;
		}
	}
	gen = kzalloc(sizeof(*gen), GFP_KERNEL_ACCOUNT);
	if (!gen || percpu_ref_init(&gen->bufs, zc_gen_drained, 0,
				    GFP_KERNEL_ACCOUNT)) {
		kfree(gen);
		return NULL;
	}
	kref_get(&zc_zero->kref);
	gen->zero = zc_zero;
	__module_get(THIS_MODULE);	/* a file of ours is open: live */
	zc_gens_made = true;
	rcu_assign_pointer(zc_gen, gen);
	schedule_delayed_work(&zc_gen_expiry, ZC_GEN_LIFE);
	return gen;
}

/* How many buffers carry @len, in at most @slots. */
static unsigned int zc_bufs_for(const struct zc_zero *zero, size_t len,
				unsigned int slots)
{
	return min_t(size_t, slots, DIV_ROUND_UP(len, zero->buf_max));
}

static struct zc_gen *zc_gen_get_slow(size_t len, unsigned int *slots)
{
	struct zc_gen *gen;

	mutex_lock(&zc_lock);
	gen = rcu_dereference_protected(zc_gen, lockdep_is_held(&zc_lock));
	if (!gen || gen->zero->worn) {
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
	zc_lease_pages = clamp_t(long, ZC_ZERO_REFS / 8 / num_possible_cpus(),
				 1, ZC_LEASE_MAX);
	zc_zero = zc_zero_new(zc_splice_buffer, GFP_KERNEL);
	if (!zc_zero)
		return -ENOMEM;
	if (zc_splice_buffer > zc_zero->buf_max)
		pr_info("splice_buffer: no %u bytes to be had, %u it is\n",
			zc_splice_buffer, zc_zero->buf_max);
	zc_splice_buffer = zc_zero->buf_max;
	return 0;
}

/*
 * At unload, or after a failed load: no file is open and no generation
 * is left, but the last one's callback, or the work that ended it, may
 * still be running their last instructions.
 */
void zc_pipe_exit(void)
{
	cancel_delayed_work_sync(&zc_gen_expiry);
	if (zc_gens_made) {
		rcu_barrier();
		synchronize_rcu_tasks();
	}
	kref_put(&zc_zero->kref, zc_zero_free);
}

static struct zc_gen *buf_gen(const struct pipe_buffer *buf)
{
	return (struct zc_gen *)buf->private;
}

/* The pages @buf spans: what a consumer may take a reference on. */
static long buf_pages(const struct pipe_buffer *buf)
{
	if (!buf->len)
		return 0;
	return ((buf->offset + buf->len - 1) >> PAGE_SHIFT) -
	       (buf->offset >> PAGE_SHIFT) + 1;
}

static int zc_pipe_buf_confirm(struct pipe_inode_info *pipe,
			       struct pipe_buffer *buf)
{
	struct zc_zero *zero = buf_gen(buf)->zero;

	if (!zero->folio || zc_zero_charge(zero, buf_pages(buf)))
		return 0;
	pr_notice_ratelimited("a zero folio's page references are spent: ENOMEM\n");
	return -ENOMEM;
}

static void zc_pipe_buf_release(struct pipe_inode_info *pipe,
				struct pipe_buffer *buf)
{
	percpu_ref_put(&buf_gen(buf)->bufs);
}

static bool zc_pipe_buf_try_steal(struct pipe_inode_info *pipe,
				  struct pipe_buffer *buf)
{
	return false;
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
	.try_steal	= zc_pipe_buf_try_steal,
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
	struct page *page = ZERO_PAGE(0);
	unsigned int head = pipe->head, mask = pipe->ring_size - 1;
	size_t spliced = 0;

	if (zero->folio)
		page = folio_page(zero->folio, 0);
	while (n--) {
		size_t chunk = min_t(size_t, len - spliced, zero->buf_max);

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
 * that a page-cache page that failed to read in fails the splice.  Ours
 * need no confirming: nothing here takes a page reference.
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
	return done ? done : err;
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
