// SPDX-License-Identifier: GPL-2.0
/*
 * zcbench, read: read() of 4 KiB to 16 MiB into a reused buffer, and
 * io_uring reads at queue depth 1 and 32, against memset() of the same
 * buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "zcbench.h"

static const size_t read_sizes[] = { 4 * KIB, 64 * KIB, 1 * MIB, 16 * MIB };

static void setup_read(struct worker *w)
{
	const struct meas *m = w->m;
	ssize_t n;

	if (!alloc_buf(w, m->size))
		return;
	memset(w->buf, 0xa5, m->size);
	if (m->kind == K_MEMSET)
		return;
	n = read(w->src, w->buf, m->size);
	if (n < 0) {
		fail_sys(w, "read");
		return;
	}
	if (n == 0) {
		set_status(&w->status, w->msg, ST_ERROR, "read: returned 0");
		return;
	}
	check_zero(w, w->buf, n, "read");
}

static void setup_uring(struct worker *w)
{
	const struct meas *m = w->m;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	size_t nbuf;
	int ret;

	nbuf = URING_POOL / m->size;
	if (nbuf > m->qd)
		nbuf = m->qd;
	if (nbuf < 1)
		nbuf = 1;
	w->nbuf = nbuf;
	if (!alloc_buf(w, nbuf * m->size))
		return;
	memset(w->buf, 0xa5, nbuf * m->size);

	ret = io_uring_queue_init(m->qd, &w->ring, 0);
	if (ret < 0) {
		set_status(&w->status, w->msg, ST_SKIPPED,
			   "io_uring_queue_init: %s", strerror(-ret));
		return;
	}
	w->ring_ok = true;

	/* One read through the ring, checked. */
	sqe = io_uring_get_sqe(&w->ring);
	io_uring_prep_read(sqe, w->src, w->buf, m->size, 0);
	ret = io_uring_submit_and_wait(&w->ring, 1);
	if (ret < 0) {
		set_status(&w->status, w->msg, ST_ERROR,
			   "io_uring_submit_and_wait: %s", strerror(-ret));
		return;
	}
	ret = io_uring_wait_cqe(&w->ring, &cqe);
	if (ret < 0) {
		set_status(&w->status, w->msg, ST_ERROR,
			   "io_uring_wait_cqe: %s", strerror(-ret));
		return;
	}
	ret = cqe->res;
	io_uring_cqe_seen(&w->ring, cqe);
	if (ret <= 0) {
		set_status(&w->status, w->msg, ST_ERROR, "io_uring read: %s",
			   ret ? strerror(-ret) : "returned 0");
		return;
	}
	check_zero(w, w->buf, ret, "io_uring read");
}

static void run_read(struct worker *w)
{
	const struct meas *m = w->m;
	unsigned long iter = 0;

	while (w->done < w->target) {
		ssize_t n;

		if (m->kind == K_MEMSET) {
			memset(w->buf, 0, m->size);
			/* the stores are visible: gcc must not drop them */
			__asm__ __volatile__("" : : "r"(w->buf) : "memory");
			n = m->size;
		} else {
			n = read(w->src, w->buf, m->size);
			if (n < 0 && errno == EINTR)
				continue;
			if (!moved(w, n, "read"))
				break;
		}
		w->done += n;
		if (time_up(++iter))
			break;
	}
}

static void run_uring(struct worker *w)
{
	const struct meas *m = w->m;
	unsigned long long queued = 0;	/* bytes done + bytes in flight */
	unsigned long slot = 0, iter = 0;
	unsigned int inflight = 0;
	int filled0 = 0;		/* longest read completed into buffer 0 */
	bool stop = false;

	while (w->done < w->target || inflight) {
		struct io_uring_cqe *cqe;
		unsigned int head, seen = 0;
		int ret;

		while (!stop && inflight < m->qd && queued < w->target) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
			char *b = (char *)w->buf + (slot % w->nbuf) * m->size;

			if (!sqe)
				break;
			io_uring_prep_read(sqe, w->src, b, m->size, 0);
			io_uring_sqe_set_data64(sqe, slot % w->nbuf);
			slot++;
			inflight++;
			queued += m->size;
		}
		if (!inflight)
			break;
		ret = io_uring_submit_and_wait(&w->ring, 1);
		if (ret < 0) {
			if (ret == -EINTR)
				continue;
			set_status(&w->status, w->msg, ST_ERROR,
				   "io_uring_submit_and_wait: %s",
				   strerror(-ret));
			break;	/* io_uring_queue_exit() reaps the rest */
		}
		io_uring_for_each_cqe(&w->ring, head, cqe) {
			int res = cqe->res;

			seen++;
			inflight--;
			if (res <= 0) {
				set_status(&w->status, w->msg, ST_ERROR,
					   "io_uring read: %s",
					   res ? strerror(-res) : "returned 0");
				stop = true;
				queued -= m->size;
				continue;
			}
			w->done += res;
			queued -= m->size - res;	/* a short read */
			if (cqe->user_data == 0 && res > filled0)
				filled0 = res;
		}
		io_uring_cq_advance(&w->ring, seen);
		if (time_up(++iter))
			stop = true;
	}
	/*
	 * Last check: buffer 0 was 0xa5 before the first read, and reads may
	 * be short (stock /dev/zero stops early under IOCB_NOWAIT when it
	 * should reschedule), so look at what the longest one filled.
	 */
	if (w->status == ST_OK)
		check_zero(w, w->buf, filled0, "io_uring reads");
}

static void read_group(const char *test, enum kind kind, unsigned int qd,
		       size_t size, int threads)
{
	struct meas m = {
		.test = test, .kind = kind, .qd = qd, .size = size,
		.threads = threads, .reads = true,
		.setup = kind == K_URING ? setup_uring : setup_read,
		.run = kind == K_URING ? run_uring : run_read,
	};
	const struct result *d, *ref, *p;
	bool own_peer;

	m.path = zcb.dev_path;
	m.label = zcb.dev_label;
	d = do_meas(&m);
	m.path = zcb.ref_path;
	m.label = zcb.ref_label;
	ref = do_meas(&m);
	/* the peer: memset() of the buffer, measured once per row of read */
	p = find("read", "memset", size, threads);
	own_peer = !p;
	if (own_peer) {
		m.test = "read";
		m.kind = K_MEMSET;
		m.path = NULL;
		m.label = "memset";
		m.setup = setup_read;
		m.run = run_read;
		p = do_meas(&m);
	}

	print_rows(d, ref, p, NULL, &p, own_peer);
}

void bench_read(const int *threads, int n)
{
	unsigned int s;
	int t;

	for (s = 0; s < ARRAY_SIZE(read_sizes); s++)
		for (t = 0; t < n; t++)
			read_group("read", K_READ, 0, read_sizes[s], threads[t]);
}

void bench_uring(const int *threads, int n)
{
	static const unsigned int depths[] = { 1, 32 };
	static const char *const tests[] = { "uring-qd1", "uring-qd32" };
	unsigned int i, s;
	int t;

	if (!zcb.uring_ok)
		return;		/* the header says why */
	for (i = 0; i < ARRAY_SIZE(depths); i++)
		for (s = 0; s < ARRAY_SIZE(read_sizes); s++)
			for (t = 0; t < n; t++)
				read_group(tests[i], K_URING, depths[i],
					   read_sizes[s], threads[t]);
}

void header_uring(void)
{
	if (!zcb.uring_ok)
		printf("io_uring: unavailable (%s); io_uring rows skipped\n",
		       zcb.uring_msg);
}
