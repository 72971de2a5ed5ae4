// SPDX-License-Identifier: GPL-2.0
/* zcdev_fuzz: the operations on devices and pipes (zcdev_fuzz.h) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/wait.h>

#include "zcdev_fuzz.h"

/* ---- the operations ---------------------------------------------------- */

void op_open(struct worker *w, const struct draws *dr)
{
	static const int accs[] = { O_RDONLY, O_WRONLY, O_RDWR };
	unsigned int i = dr->slots % NDEV, gen;
	struct dev_slot *d = &w->dev[i];
	int kind = (dr->slots >> 8) % 3 == 2 ? FULL : ZERO;
	int acc = accs[(dr->slots >> 16) % 3];
	bool nb = (dr->slots >> 24) & 1;
	int fd;

	LOG(w, "open d%u %s %s%s", i, dev_path(kind), acc_name(acc),
	    nb ? " O_NONBLOCK" : "");
	if (d->fd >= 0)
		LOG_MORE(w, " (closing the old one)");
	if (!dev_close(w, i))
		return;
	gen = win_now();
	fd = open(dev_path(kind), acc | O_CLOEXEC | (nb ? O_NONBLOCK : 0));
	if (fd < 0) {
		log_ret(w, -1, errno);
		if (refusal_ok(gen, errno))
			w->refused++;
		else
			fz_fail(w, "open %s: %s", dev_path(kind), strerror(errno));
		return;
	}
	LOG_MORE(w, " = ok");
	*d = (struct dev_slot){ .fd = fd, .kind = kind, .acc = acc, .nonblock = nb };
}

void op_dup(struct worker *w, const struct draws *dr)
{
	int s = pick_dev(w, dr->slots), fd;
	unsigned int t = dr->len % NDEV;
	char n1[40];

	if (nothing_to_do(w, s < 0, "dup: no device"))
		return;
	if (t == (unsigned int)s)
		t = (t + 1) % NDEV;
	LOG(w, "dup %s to d%u", dname(w, s, n1), t);
	if (!dev_close(w, t))
		return;
	fd = (dr->len >> 8) & 1 ? dup(w->dev[s].fd) :
	     fcntl(w->dev[s].fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0) {
		fz_fail(w, "dup: %s", strerror(errno));
		return;
	}
	w->dev[t] = w->dev[s];
	w->dev[t].fd = fd;
}

void op_close_dev(struct worker *w, const struct draws *dr)
{
	int i = pick_dev(w, dr->slots);
	char n1[40];

	if (nothing_to_do(w, i < 0, "close: no device"))
		return;
	LOG(w, "close %s", dname(w, i, n1));
	dev_close(w, i);
}

void op_pipe(struct worker *w, const struct draws *dr)
{
	unsigned int i = dr->slots % NPIPE;
	struct pipe_slot *p = &w->pipe[i];
	int fds[2];

	LOG(w, "pipe p%u%s", i, p->rfd >= 0 ? " (closing the old one)" : "");
	pipe_close(w, i);
	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC)) {
		fz_fail(w, "pipe2: %s", strerror(errno));
		return;
	}
	p->rfd = fds[0];
	p->wfd = fds[1];
	p->size = pipe_size(p);
	LOG_MORE(w, ", %zu bytes", p->size);
}

void op_close_pipe(struct worker *w, const struct draws *dr)
{
	int i = pick_pipe(w, dr->slots);
	bool drain = (dr->slots >> 8) & 1;

	if (nothing_to_do(w, i < 0, "close-pipe: no pipe"))
		return;
	LOG(w, "close p%u holding %zu bytes%s", i, w->pipe[i].m.bytes,
	    drain ? ", read to its end first" : "");
	if (drain && !pipe_drain(w, i))
		return;
	pipe_close(w, i);
}

/* The size F_SETPIPE_SZ makes of a request: whole pages, a power of two */
static size_t round_pipe(size_t size)
{
	size_t pages = (size + fzc.pg - 1) / fzc.pg, n = 1;

	while (n < pages)
		n <<= 1;
	return n * fzc.pg;
}

void op_pipe_sz(struct worker *w, const struct draws *dr)
{
	static const size_t sizes[] = {
		4 * KIB, 8 * KIB, 12 * KIB, 16 * KIB, 64 * KIB, 128 * KIB,
		1 * MIB, 5000,
	};
	int i = pick_pipe(w, dr->slots), r, err;
	struct pipe_slot *p;
	size_t sz = sizes[(dr->slots >> 8) % ARRAY_SIZE(sizes)], want, old;

	if (nothing_to_do(w, i < 0, "F_SETPIPE_SZ: no pipe"))
		return;
	p = &w->pipe[i];
	old = p->size;
	want = round_pipe(sz);
	LOG(w, "F_SETPIPE_SZ p%u %zu (holding %zu)", i, sz, p->m.bytes);
	r = fcntl(p->wfd, F_SETPIPE_SZ, (int)sz);
	err = errno;
	log_ret(w, r, err);
	p->size = pipe_size(p);
	if (r >= 0) {
		if ((size_t)r != want || p->size != want) {
			fz_fail(w, "F_SETPIPE_SZ %zu returned %d, F_GETPIPE_SZ %zu: not %zu", sz, r,
				p->size, want);
			return;
		}
		if (want < p->m.bytes && !fzc.large_bufs)
			fz_fail(w, "F_SETPIPE_SZ shrank p%u to %zu bytes, which holds %zu", i, want,
				p->m.bytes);
		return;
	}
	/* EBUSY: the pipe holds more buffers than the new size has slots */
	if (!(err == EBUSY && want < old) && err != EPERM && err != ENOMEM)
		fz_fail(w, "F_SETPIPE_SZ %zu from %zu: %s", sz, old, strerror(err));
	else if (p->size != old)
		fz_fail(w, "F_SETPIPE_SZ failed, yet the size went from %zu to %zu", old, p->size);
}

/* Splice flags besides SPLICE_F_NONBLOCK, which every splice here has */
unsigned int more_flags(unsigned long long r)
{
	return (r & 1 ? SPLICE_F_MORE : 0) | (r & 2 ? SPLICE_F_MOVE : 0);
}

/*
 * The most pipe p takes in one call: its free slots' worth of pages.
 * The model counts bytes, not buffers; that is exact while every buffer
 * carries at most a page.  zcdev's large buffers (splice_buffer) carry
 * more, so a pipe holding them has slots free beyond its bytes: then
 * only its size bounds a call.
 */
size_t pipe_room(const struct pipe_slot *p)
{
	if (fzc.large_bufs)
		return p->size;
	return p->size - p->m.bytes;
}

/* The same for a splice or tee from a pipe, which moves whole buffers */
static size_t pipe_room_bufs(const struct pipe_slot *p)
{
	if (fzc.large_bufs)
		return p->size / 4096 * fzc.buf_size;
	return p->size - p->m.bytes;
}

/* Zeros from a device into pipe j: what the count must be */
bool dev_to_pipe_count(struct worker *w, const char *what, long r,
		       int err, size_t len, unsigned int j)
{
	struct pipe_slot *p = &w->pipe[j];
	size_t room = pipe_room(p);
	size_t want = len < p->size ? len : p->size;

	if (zero_len(w, what, len, r))
		return !w->violated;
	if (r < 0) {
		/* EAGAIN only for a pipe that is full, slot by slot */
		if (err == EAGAIN && p->m.bytes)
			return true;
		return fz_fail(w, "%s into p%u holding %zu of %zu: %s", what, j, p->m.bytes,
			       p->size, strerror(err));
	}
	/* an empty pipe takes all it can: zcdev fills every free slot */
	if (!p->m.bytes && (size_t)r != want)
		return fz_fail(w, "%s of %zu into empty p%u of %zu returned %ld, not %zu", what,
			       len, j, p->size, r, want);
	if ((size_t)r > len || (size_t)r > room || !r)
		return fz_fail(w, "%s of %zu into p%u with %zu bytes free returned %ld", what, len,
			       j, room, r);
	pm_push(&p->m, NULL, r);
	return true;
}

void op_splice_dp(struct worker *w, const struct draws *dr)
{
	int i = pick_dev(w, dr->slots), j = pick_pipe(w, dr->slots >> 8);
	size_t len = rlen(dr->len, SPLICE_MAX);
	bool use_off = dr->how & 4;
	loff_t off = (dr->how >> 8) % MIB, off0 = off;
	unsigned int fl = more_flags(dr->how);
	struct dev_slot *d;
	char n1[40];
	long r;
	int err;

	if (nothing_to_do(w, i < 0 || j < 0, "splice-dev-pipe: no device or pipe"))
		return;
	d = &w->dev[i];
	LOG(w, "splice %s -> p%u len %zu", dname(w, i, n1), j, len);
	if (use_off)
		LOG_MORE(w, " off_in %lld", (long long)off);
	r = splice(d->fd, use_off ? &off : NULL, w->pipe[j].wfd, NULL, len,
		   SPLICE_F_NONBLOCK | fl);
	err = errno;
	log_ret(w, r, err);
	if (use_off && off != off0)
		LOG_MORE(w, ", off_in now %lld", (long long)off);
	/* splice(2) returns 0 for 0 bytes before it looks at anything */
	if (len && !dev_reads(d)) {
		want_err(w, "splice from a device opened O_WRONLY", r, err, EBADF);
		return;
	}
	dev_to_pipe_count(w, "splice", r, err, len, j);
}

void op_splice_pd(struct worker *w, const struct draws *dr)
{
	int i = pick_dev(w, dr->slots), j = pick_pipe(w, dr->slots >> 8);
	struct pipe_slot *p;
	struct dev_slot *d;
	size_t len = rlen(dr->len, SPLICE_MAX), want;
	loff_t off = (dr->how >> 8) % MIB;
	bool use_off = dr->how & 4;
	char n1[40];
	long r;
	int err;

	if (nothing_to_do(w, i < 0 || j < 0, "splice-pipe-dev: no device or pipe"))
		return;
	d = &w->dev[i];
	p = &w->pipe[j];
	LOG(w, "splice p%u (%zu bytes) -> %s len %zu", j, p->m.bytes,
	    dname(w, i, n1), len);
	if (use_off)
		LOG_MORE(w, " off_out %lld", (long long)off);
	r = splice(p->rfd, NULL, d->fd, use_off ? &off : NULL, len,
		   SPLICE_F_NONBLOCK | more_flags(dr->how));
	err = errno;
	log_ret(w, r, err);
	if (zero_len(w, "splice", len, r))
		return;
	if (!dev_writes(d)) {
		want_err(w, "splice to a device opened O_RDONLY", r, err, EBADF);
		return;
	}
	if (d->kind == FULL) {
		want_err(w, "splice to zcfull", r, err, ENOSPC);
		return;
	}
	if (!p->m.bytes) {
		want_err(w, "splice from an empty pipe", r, err, EAGAIN);
		return;
	}
	/* zczero takes everything the pipe has, up to len */
	want = len < p->m.bytes ? len : p->m.bytes;
	if (r < 0 || (size_t)r != want) {
		fz_fail(w,
			"splice of %zu from p%u holding %zu to zczero returned %ld (%s), not %zu",
			len, j, p->m.bytes, r, r < 0 ? strerror(err) : "", want);
		return;
	}
	pm_drop(&p->m, r);
}

/* Pipes i and j for splice and tee; the same one now and then */
static bool pick_two(struct worker *w, unsigned long long slots, int *i, int *j)
{
	*i = pick_pipe(w, slots);
	*j = pick_pipe(w, slots >> 8);
	if (*i < 0)
		return false;
	if (*i == *j && (slots >> 16) % 8)
		*j = pick_pipe(w, *i + 1);
	return true;
}

static void splice_or_tee(struct worker *w, const struct draws *dr, bool tee_it)
{
	const char *what = tee_it ? "tee" : "splice";
	size_t len = rlen(dr->len, SPLICE_MAX);
	struct pipe_slot *p, *q;
	int i, j, err;
	long r;

	if (!pick_two(w, dr->slots, &i, &j)) {
		LOG(w, "%s: no pipe", what);
		return;
	}
	p = &w->pipe[i];
	q = &w->pipe[j];
	LOG(w, "%s p%u (%zu bytes) -> p%u (%zu of %zu) len %zu", what, i,
	    p->m.bytes, j, q->m.bytes, q->size, len);
	if (tee_it)
		r = tee(p->rfd, q->wfd, len, SPLICE_F_NONBLOCK);
	else
		r = splice(p->rfd, NULL, q->wfd, NULL, len,
			   SPLICE_F_NONBLOCK | more_flags(dr->len >> 40));
	err = errno;
	log_ret(w, r, err);
	if (zero_len(w, what, len, r))
		return;
	if (i == j) {
		want_err(w, "a splice or tee of a pipe to itself", r, err, EINVAL);
		return;
	}
	if (!p->m.bytes) {
		want_err(w, "splice or tee from an empty pipe", r, err, EAGAIN);
		return;
	}
	if (r < 0) {
		if (err != EAGAIN || !q->m.bytes)
			fz_fail(w, "%s p%u -> p%u: %s", what, i, j, strerror(err));
		return;
	}
	if (!r || (size_t)r > len || (size_t)r > p->m.bytes ||
	    (size_t)r > pipe_room_bufs(q)) {
		fz_fail(w, "%s of %zu from p%u holding %zu to p%u with %zu free returned %ld", what,
			len, i, p->m.bytes, j, pipe_room_bufs(q), r);
		return;
	}
	pm_copy(&p->m, r, &q->m);
	if (!tee_it)
		pm_drop(&p->m, r);
}

void op_splice_pp(struct worker *w, const struct draws *dr)
{
	splice_or_tee(w, dr, false);
}

void op_tee(struct worker *w, const struct draws *dr)
{
	splice_or_tee(w, dr, true);
}

void op_vmsplice_in(struct worker *w, const struct draws *dr)
{
	int j = pick_pipe(w, dr->slots), mi = pick_map(w, dr->slots >> 8), k, n = 1 + dr->len % 3;
	struct iovec iov[3];
	struct map_slot *m;
	struct pipe_slot *p;
	size_t total = 0, left, len;
	unsigned int pgi;
	long r;
	int err;

	if (nothing_to_do(w, j < 0, "vmsplice-in: no pipe"))
		return;
	p = &w->pipe[j];
	LOG(w, "vmsplice to p%u (%zu of %zu):", j, p->m.bytes, p->size);
	for (k = 0; k < n; k++) {
		unsigned long long r2 = fz_mix(dr->how + k);

		m = mi >= 0 ? &w->map[mi] : NULL;
		pgi = m ? (r2 >> 20) % m->pages : 0;
		/*
		 * An untouched page of a private mapping is the zero page
		 * itself, mapped read-only: its pipe buffer must read zeros,
		 * and the page is never written while a pipe may hold it.
		 */
		if (m && !m->shared && !m->tag[pgi] && (r2 & 3) == 0) {
			len = 1 + (r2 >> 2) % fzc.pg;
			iov[k].iov_base = m->addr + pgi * fzc.pg + (fzc.pg - len);
			iov[k].iov_len = len;
			m->pinned[pgi] = true;
			LOG_MORE(w, " m%u page %u +%zu", mi, pgi, len);
		} else {
			len = rlen(r2 >> 2, BUF_MAX / 3);
			iov[k].iov_base = (void *)pat_at(r2 >> 24, len);
			iov[k].iov_len = len;
			LOG_MORE(w, " pattern +%zu", len);
		}
		total += len;
	}
	r = vmsplice(p->wfd, iov, n, SPLICE_F_NONBLOCK);
	err = errno;
	log_ret(w, r, err);
	if (zero_len(w, "vmsplice", total, r))
		return;
	if (r < 0) {
		if (err != EAGAIN || !p->m.bytes)
			fz_fail(w, "vmsplice of %zu into p%u holding %zu: %s", total, j, p->m.bytes,
				strerror(err));
		return;
	}
	if (!r || (size_t)r > total || (size_t)r > pipe_room(p)) {
		fz_fail(w, "vmsplice of %zu into p%u with %zu free returned %ld", total, j,
			pipe_room(p), r);
		return;
	}
	for (k = 0, left = r; left; k++) {
		len = iov[k].iov_len < left ? iov[k].iov_len : left;
		/* a page of the mapping: the zero page, so zeros */
		if (mi >= 0 && (unsigned char *)iov[k].iov_base >= w->map[mi].addr &&
		    (unsigned char *)iov[k].iov_base <
		    w->map[mi].addr + w->map[mi].pages * fzc.pg)
			pm_push(&p->m, NULL, len);
		else
			pm_push(&p->m, iov[k].iov_base, len);
		left -= len;
	}
}

/*
 * Pipe i to user memory: len bytes, valid of them before the PROT_NONE
 * page.  The count is exact when nothing faults: all the pipe has, up to
 * len.  A fault part-way stops at a pipe buffer's start, which the model
 * does not know: then only the bytes reported are checked.
 */
static bool pipe_to_user(struct worker *w, unsigned int i, const char *what,
			 long r, int err, unsigned char *p, size_t len,
			 size_t valid, bool nowait)
{
	struct pipe_slot *ps = &w->pipe[i];
	size_t want = len < ps->m.bytes ? len : ps->m.bytes;
	bool faults = valid < len;

	if (r < 0 && nowait && (err == EOPNOTSUPP || err == EAGAIN))
		return true;	/* 6.1: no RWF_NOWAIT on pipes; a busy lock */
	if (zero_len(w, what, len, r))
		return !w->violated;
	if (!ps->m.bytes)
		return want_err(w, "a read of an empty pipe", r, err, EAGAIN);
	if (r < 0) {
		if (faults && err == EFAULT)
			return true;
		return fz_fail(w, "%s of %zu from p%u holding %zu: %s", what, len, i, ps->m.bytes,
			       strerror(err));
	}
	if (faults ? (size_t)r > want || (size_t)r > valid : (size_t)r != want)
		return fz_fail(w, "%s of %zu (%zu valid) from p%u holding %zu returned %ld", what,
			       len, valid, i, ps->m.bytes, r);
	if (!pipe_consumed(w, i, p, r, what))
		return false;
	return faults || dst_margins(w, p, r, valid, what);
}

void op_vmsplice_out(struct worker *w, const struct draws *dr)
{
	int i = pick_pipe(w, dr->slots), k;
	size_t len = rlen(dr->len, BUF_MAX), valid;
	struct iovec iov[4];
	unsigned char *p;
	long r;
	int err;

	if (nothing_to_do(w, i < 0, "vmsplice-out: no pipe"))
		return;
	p = dst_draw(w, dr->how, len, &valid);
	k = split_iov(iov, p, len, dr->how >> 16);
	LOG(w, "vmsplice from p%u (%zu bytes) to %zu bytes in %d iovecs, %zu valid",
	    i, w->pipe[i].m.bytes, len, k, valid);
	r = vmsplice(w->pipe[i].rfd, iov, k, SPLICE_F_NONBLOCK);
	err = errno;
	log_ret(w, r, err);
	pipe_to_user(w, i, "vmsplice", r, err, p, len, valid, false);
}

void op_read_dev(struct worker *w, const struct draws *dr)
{
	int i = pick_dev(w, dr->slots);
	enum rmeth m = (dr->slots >> 8) % RM_NR;
	size_t len = rlen(dr->len, BUF_MAX), valid, want;
	off_t off = (dr->how >> 24) % MIB;
	struct dev_slot *d;
	unsigned char *p;
	char n1[40];
	long r;
	int err;

	if (nothing_to_do(w, i < 0, "read-dev: no device"))
		return;
	d = &w->dev[i];
	p = dst_draw(w, dr->how, len, &valid);
	LOG(w, "%s %s %zu bytes, %zu valid", rm_name[m], dname(w, i, n1), len,
	    valid);
	r = do_read(d->fd, m, p, len, dr->how, off);
	err = errno;
	log_ret(w, r, err);
	if (!dev_reads(d)) {
		want_err(w, "a read of a device opened O_WRONLY", r, err, EBADF);
		return;
	}
	want = len < valid ? len : valid;
	if (len && !valid) {
		want_err(w, "a read to unmapped memory", r, err, EFAULT);
		return;
	}
	if (r < 0) {
		fz_fail(w, "%s of %zu from %s: %s", rm_name[m], len, dev_name[d->kind],
			strerror(err));
		return;
	}
	/*
	 * Exact to the byte, faulting part-way or not; only a NOWAIT read
	 * may stop early, between two chunks, when the CPU is wanted.
	 */
	if (rm_nowait(m, dr->how) ? (size_t)r > want || (!r && want) :
	    (size_t)r != want) {
		fz_fail(w, "%s of %zu (%zu valid) from %s returned %ld, not %zu", rm_name[m], len,
			valid, dev_name[d->kind], r, want);
		return;
	}
	if (not_byte(p, r, 0) >= 0) {
		fz_fail(w, "%s from %s: byte %ld of %ld is 0x%02x", rm_name[m], dev_name[d->kind],
			not_byte(p, r, 0), r, p[not_byte(p, r, 0)]);
		return;
	}
	dst_margins(w, p, r, valid, rm_name[m]);
}

void op_read_pipe(struct worker *w, const struct draws *dr)
{
	int i = pick_pipe(w, dr->slots);
	enum rmeth m = (dr->slots >> 8) % RM_NR;
	size_t len = rlen(dr->len, BUF_MAX), valid;
	unsigned char *p;
	long r;
	int err;

	if (nothing_to_do(w, i < 0, "read-pipe: no pipe"))
		return;
	p = dst_draw(w, dr->how, len, &valid);
	LOG(w, "%s p%u (%zu bytes) %zu bytes, %zu valid", rm_name[m], i,
	    w->pipe[i].m.bytes, len, valid);
	r = do_read(w->pipe[i].rfd, m, p, len, dr->how, (dr->how >> 24) % MIB);
	err = errno;
	log_ret(w, r, err);
	if (m == RM_PREAD || m == RM_PREADV2_OFF) {
		want_err(w, "a positioned read of a pipe", r, err, ESPIPE);
		return;
	}
	pipe_to_user(w, i, rm_name[m], r, err, p, len, valid, rm_nowait(m, dr->how));
}

void op_write_dev(struct worker *w, const struct draws *dr)
{
	int i = pick_dev(w, dr->slots);
	enum wmeth m = (dr->slots >> 8) % WM_NR;
	size_t len = rlen_nz(dr->len, BUF_MAX);
	const unsigned char *src;
	struct dev_slot *d;
	bool bad = !(dr->how & 7);
	char n1[40];
	long r;
	int err;

	if (nothing_to_do(w, i < 0, "write-dev: no device"))
		return;
	d = &w->dev[i];
	/*
	 * zczero discards what it is given without looking at it, as
	 * /dev/null does: a source that runs into a PROT_NONE page is fine.
	 */
	src = bad ? w->area_end - (dr->how >> 8) % (len + 1) : pat_at(dr->how >> 8, len);
	LOG(w, "%s %s %zu bytes%s", wm_name[m], dname(w, i, n1), len,
	    bad ? " partly unmapped" : "");
	r = do_write(d->fd, m, src, len, dr->how, (dr->how >> 24) % MIB);
	err = errno;
	log_ret(w, r, err);
	if (!dev_writes(d))
		want_err(w, "a write to a device opened O_RDONLY", r, err, EBADF);
	else if (d->kind == FULL)
		want_err(w, "a write to zcfull", r, err, ENOSPC);
	else if (r < 0 || (size_t)r != len)
		fz_fail(w, "%s of %zu to zczero returned %ld (%s)", wm_name[m], len, r,
			r < 0 ? strerror(err) : "short");
}

void op_write_pipe(struct worker *w, const struct draws *dr)
{
	int i = pick_pipe(w, dr->slots), k;
	size_t len = rlen_nz(dr->len, BUF_MAX), left, n;
	const unsigned char *src;
	struct iovec iov[4];
	struct pipe_slot *p;
	bool vec = (dr->slots >> 8) & 1;
	long r;
	int err;

	if (nothing_to_do(w, i < 0, "write-pipe: no pipe"))
		return;
	p = &w->pipe[i];
	src = pat_at(dr->how, len);
	k = split_iov(iov, (unsigned char *)src, len, dr->how >> 20);
	LOG(w, "%s p%u (%zu of %zu) %zu bytes of the pattern", vec ? "writev" : "write",
	    i, p->m.bytes, p->size, len);
	r = vec ? writev(p->wfd, iov, k) : write(p->wfd, src, len);
	err = errno;
	log_ret(w, r, err);
	if (r < 0) {
		if (err != EAGAIN || !p->m.bytes)
			fz_fail(w, "write of %zu to p%u holding %zu: %s", len, i, p->m.bytes,
				strerror(err));
		return;
	}
	/* an empty pipe takes a page a buffer: all it has room for */
	n = len < p->size ? len : p->size;
	if ((size_t)r > len || !r || (!p->m.bytes && (size_t)r != n)) {
		fz_fail(w, "write of %zu to p%u holding %zu of %zu returned %ld", len, i,
			p->m.bytes, p->size, r);
		return;
	}
	for (k = 0, left = r; left; k++) {
		n = iov[k].iov_len < left ? iov[k].iov_len : left;
		pm_push(&p->m, iov[k].iov_base, n);
		left -= n;
	}
}
