// SPDX-License-Identifier: GPL-2.0
/* zcdev_fuzz: the operations on mappings and files, and fork (zcdev_fuzz.h) */
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

void op_mmap(struct worker *w, const struct draws *dr)
{
	unsigned int mi = dr->slots % NMAP;
	int i = pick_dev(w, dr->len);
	struct map_slot *m = &w->map[mi];
	size_t pages = 1 + dr->how % MAP_PAGES;
	bool shared = (dr->how >> 8) & 1;
	struct dev_slot *d;
	unsigned char *p;
	char n1[40];
	int err;

	if (nothing_to_do(w, i < 0, "mmap: no device"))
		return;
	d = &w->dev[i];
	LOG(w, "mmap m%u %s %zu pages of %s", mi, shared ? "shared" : "private",
	    pages, dname(w, i, n1));
	if (m->addr) {
		LOG_MORE(w, " (unmapping the old one)");
		if (!map_check(w, mi))
			return;
		map_drop(w, mi);
	}
	p = mmap(NULL, pages * fzc.pg, PROT_READ | PROT_WRITE,
		 shared ? MAP_SHARED : MAP_PRIVATE, d->fd, 0);
	err = errno;
	log_ret(w, p == MAP_FAILED ? -1 : 0, err);
	/* zcfull has no mmap; the mode is checked first */
	if ((shared && !dev_writes(d)) || !dev_reads(d)) {
		if (p != MAP_FAILED || (err != EACCES && !(d->kind == FULL && err == ENODEV)))
			fz_fail(w, "mmap of a device opened %s: %s", acc_name(d->acc),
				p == MAP_FAILED ? strerror(err) : "mapped");
	} else if (d->kind == FULL) {
		if (p != MAP_FAILED || err != ENODEV)
			fz_fail(w, "mmap of zcfull: %s",
				p == MAP_FAILED ? strerror(err) : "mapped");
	} else if (p == MAP_FAILED) {
		fz_fail(w, "mmap of zczero: %s", strerror(err));
	}
	if (p == MAP_FAILED)
		return;
	memset(m, 0, sizeof(*m));
	m->addr = p;
	m->pages = pages;
	m->shared = shared;
	map_check(w, mi);
}

void op_touch(struct worker *w, const struct draws *dr)
{
	int mi = pick_map(w, dr->slots);
	struct map_slot *m;
	unsigned int k;
	unsigned char tag = 1 + dr->len % 255;
	bool write_it = (dr->len >> 8) & 1;
	long bad;

	if (nothing_to_do(w, mi < 0, "touch: no mapping"))
		return;
	m = &w->map[mi];
	k = (dr->slots >> 8) % m->pages;
	write_it = write_it && !m->pinned[k];
	LOG(w, "touch m%u page %u (0x%02x)%s", mi, k, m->tag[k],
	    write_it ? ", then fill it" : "");
	bad = not_byte(m->addr + k * fzc.pg, fzc.pg, m->tag[k]);
	if (bad >= 0) {
		fz_fail(w, "byte %ld of page %u of m%u is 0x%02x, not 0x%02x", bad, k, mi,
			m->addr[k * fzc.pg + bad], m->tag[k]);
		return;
	}
	if (write_it) {
		memset(m->addr + k * fzc.pg, tag, fzc.pg);
		m->tag[k] = tag;
		LOG_MORE(w, " with 0x%02x", tag);
	}
}

void op_munmap(struct worker *w, const struct draws *dr)
{
	int mi = pick_map(w, dr->slots);

	if (nothing_to_do(w, mi < 0, "munmap: no mapping"))
		return;
	LOG(w, "munmap m%u", mi);
	if (map_check(w, mi))
		map_drop(w, mi);
}

void op_lseek(struct worker *w, const struct draws *dr)
{
	int whence = dr->len % 6, i, err;
	off_t off = (off_t)((dr->len >> 8) % (4 * MIB)) - (off_t)(2 * MIB);
	bool on_pipe = (dr->slots >> 16) & 1;
	char n1[40];
	off_t r;

	i = on_pipe ? pick_pipe(w, dr->slots) : pick_dev(w, dr->slots);
	if (nothing_to_do(w, i < 0, "lseek: nothing open"))
		return;
	if (on_pipe)
		LOG(w, "lseek p%u %lld whence %d", i, (long long)off, whence);
	else
		LOG(w, "lseek %s %lld whence %d", dname(w, i, n1), (long long)off,
		    whence);
	r = lseek(on_pipe ? w->pipe[i].rfd : w->dev[i].fd, off, whence);
	err = errno;
	log_ret(w, r, err);
	if (whence > SEEK_HOLE)
		want_err(w, "lseek with a bad whence", r, err, EINVAL);
	else if (on_pipe)
		want_err(w, "lseek on a pipe", r, err, ESPIPE);
	else if (r != 0)	/* as /dev/zero: the position is always 0 */
		fz_fail(w, "lseek on %s returned %lld (%s), not 0", dev_name[w->dev[i].kind],
			(long long)r, r < 0 ? strerror(err) : "");
}

void op_fionread(struct worker *w, const struct draws *dr)
{
	int i = pick_dev(w, dr->slots), n = -1, r;
	char n1[40];

	if (nothing_to_do(w, i < 0, "FIONREAD: no device"))
		return;
	LOG(w, "FIONREAD %s", dname(w, i, n1));
	r = ioctl(w->dev[i].fd, FIONREAD, &n);
	log_ret(w, r, errno);
	want_err(w, "FIONREAD on a device", r, errno, ENOTTY);
}

/*
 * sendfile from a device or the source file, to a pipe, the destination
 * file or a device.
 */
void op_sendfile(struct worker *w, const struct draws *dr)
{
	bool from_file = dr->slots & 1, use_off = (dr->slots >> 1) & 1;
	int to = (dr->slots >> 2) % 3, i = pick_dev(w, dr->slots >> 8);
	int j = pick_pipe(w, dr->slots >> 16);
	int k = pick_dev(w, dr->slots >> 24), in, out, err;
	size_t count = rlen_nz(dr->len, SPLICE_MAX), avail = 0, want;
	off_t off = from_file ? (off_t)(dr->how % (SRC_MAX + 8 * KIB)) :
		    (off_t)(dr->how % MIB), off0 = off, pos = dr->more % DST_MAX;
	const char *what = "sendfile";
	char n1[40], n2[40];
	struct pipe_slot *p;
	long r;

	if (nothing_to_do(w, (!from_file && i < 0) || (to == 0 && j < 0) ||
			  (to == 2 && k < 0), "sendfile: nothing to send from or to"))
		return;
	if (from_file) {
		use_off = true;		/* the file's position is not modelled */
		avail = (size_t)off < w->src_size ? w->src_size - off : 0;
	}
	in = from_file ? w->src_fd : w->dev[i].fd;
	out = to == 0 ? w->pipe[j].wfd : to == 1 ? w->dst_fd : w->dev[k].fd;
	if (to == 1 && count > DST_MAX - pos)
		count = DST_MAX - pos;
	LOG(w, "sendfile %s", from_file ? "src" : dname(w, i, n1));
	if (use_off)
		LOG_MORE(w, " at %lld", (long long)off);
	if (to == 0)
		LOG_MORE(w, " -> p%u (%zu of %zu)", j, w->pipe[j].m.bytes,
			 w->pipe[j].size);
	else if (to == 1)
		LOG_MORE(w, " -> dst at %lld", (long long)pos);
	else
		LOG_MORE(w, " -> %s", dname(w, k, n2));
	LOG_MORE(w, " count %zu", count);
	if (to == 1 && lseek(out, pos, SEEK_SET) != pos) {
		fz_fail(w, "lseek of the destination file: %s", strerror(errno));
		return;
	}
	r = sendfile(out, in, use_off ? &off : NULL, count);
	err = errno;
	log_ret(w, r, err);
	if (from_file && r > 0 && off != off0 + r) {
		fz_fail(w, "sendfile of %ld bytes moved the offset from %lld to %lld", r,
			(long long)off0, (long long)off);
		return;
	}
	if (!from_file && !dev_reads(&w->dev[i])) {
		want_err(w, "sendfile from a device opened O_WRONLY", r, err, EBADF);
		return;
	}
	if (to == 2 && !dev_writes(&w->dev[k])) {
		want_err(w, "sendfile to a device opened O_RDONLY", r, err, EBADF);
		return;
	}
	if (to == 0) {
		p = &w->pipe[j];
		if (!from_file) {
			dev_to_pipe_count(w, what, r, err, count, j);
			return;
		}
		if (r < 0) {
			if (err != EAGAIN || !p->m.bytes)
				fz_fail(w, "sendfile of the file to p%u: %s", j, strerror(err));
			return;
		}
		if ((size_t)r > avail || (size_t)r > count ||
		    (size_t)r > pipe_room(p) ||
		    (!r && avail && !p->m.bytes)) {
			fz_fail(w,
				"sendfile of %zu (%zu left in the file) to p%u with %zu free returned %ld",
				count, avail, j, pipe_room(p), r);
			return;
		}
		pm_push(&p->m, w->src + (off - r), r);
		return;
	}
	want = from_file ? (count < avail ? count : avail) : count;
	if (to == 2 && w->dev[k].kind == FULL && want) {
		want_err(w, "sendfile to zcfull", r, err, ENOSPC);
		return;
	}
	if (r < 0 || (size_t)r != want) {
		fz_fail(w, "sendfile of %zu (%s) to %s returned %ld (%s), not %zu", count,
			from_file ? "file" : "device", to == 1 ? "the file" : "zczero", r,
			r < 0 ? strerror(err) : "", want);
		return;
	}
	if (to == 1) {
		if (from_file)
			memcpy(w->dst + pos, w->src + (off - r), r);
		else
			memset(w->dst + pos, 0, r);
		if (r && pos + r > (off_t)w->dst_size)
			w->dst_size = pos + r;
	}
}

void op_splice_fp(struct worker *w, const struct draws *dr)
{
	int j = pick_pipe(w, dr->slots), err;
	size_t len = rlen(dr->len, SPLICE_MAX), avail;
	loff_t off = dr->how % (SRC_MAX + 8 * KIB), off0 = off;
	struct pipe_slot *p;
	long r;

	if (nothing_to_do(w, j < 0, "splice-file-pipe: no pipe"))
		return;
	p = &w->pipe[j];
	avail = (size_t)off < w->src_size ? w->src_size - off : 0;
	LOG(w, "splice src (%zu bytes) at %lld -> p%u (%zu of %zu) len %zu",
	    w->src_size, (long long)off, j, p->m.bytes, p->size, len);
	r = splice(w->src_fd, &off, p->wfd, NULL, len,
		   SPLICE_F_NONBLOCK | more_flags(dr->how >> 40));
	err = errno;
	log_ret(w, r, err);
	if (r < 0) {
		/* a full pipe is waited for before the file is read */
		if (err != EAGAIN || !p->m.bytes || !len)
			fz_fail(w, "splice of the file to p%u: %s", j, strerror(err));
		return;
	}
	if ((size_t)r > avail || (size_t)r > len ||
	    (size_t)r > pipe_room(p) ||
	    (!r && avail && len && !p->m.bytes) || off != off0 + r) {
		fz_fail(w,
			"splice of %zu (%zu left in the file) to p%u with %zu free returned %ld, offset now %lld",
			len, avail, j, pipe_room(p), r, (long long)off);
		return;
	}
	pm_push(&p->m, w->src + off0, r);
}

void op_splice_pf(struct worker *w, const struct draws *dr)
{
	int j = pick_pipe(w, dr->slots), err;
	loff_t off = dr->how % DST_MAX, off0 = off;
	size_t len = rlen(dr->len, DST_MAX - off), want;
	struct pipe_slot *p;
	long r;

	if (nothing_to_do(w, j < 0, "splice-pipe-file: no pipe"))
		return;
	p = &w->pipe[j];
	LOG(w, "splice p%u (%zu bytes) -> dst at %lld len %zu", j, p->m.bytes,
	    (long long)off, len);
	r = splice(p->rfd, NULL, w->dst_fd, &off, len,
		   SPLICE_F_NONBLOCK | more_flags(dr->how >> 40));
	err = errno;
	log_ret(w, r, err);
	if (zero_len(w, "splice", len, r))
		return;
	if (!p->m.bytes) {
		want_err(w, "splice from an empty pipe", r, err, EAGAIN);
		return;
	}
	want = len < p->m.bytes ? len : p->m.bytes;
	if (r <= 0 || (size_t)r > want || off != off0 + r) {
		fz_fail(w,
			"splice of %zu from p%u holding %zu to the file returned %ld (%s), offset now %lld",
			len, j, p->m.bytes, r, r < 0 ? strerror(err) : "", (long long)off);
		return;
	}
	pm_peek(&p->m, r, w->dst + off0);
	pm_drop(&p->m, r);
	if (off0 + r > (off_t)w->dst_size)
		w->dst_size = off0 + r;
}

/* The destination file reads back what went into it, or gets a write */
void op_file_io(struct worker *w, const struct draws *dr)
{
	off_t off = dr->len % (DST_MAX + 4 * KIB);
	size_t len = rlen(dr->slots >> 8, BUF_MAX), want;
	const unsigned char *src;
	unsigned char *p = w->area;
	long r;
	int err;

	if (dr->slots & 1) {
		if ((size_t)off > DST_MAX - len)
			off = DST_MAX - len;
		src = pat_at(dr->len >> 24, len);
		LOG(w, "pwrite dst %zu bytes at %lld", len, (long long)off);
		r = pwrite(w->dst_fd, src, len, off);
		err = errno;
		log_ret(w, r, err);
		if (r < 0 || (size_t)r != len) {
			fz_fail(w, "pwrite of %zu to the file: %ld (%s)", len, r,
				r < 0 ? strerror(err) : "short");
			return;
		}
		memcpy(w->dst + off, src, len);
		if (len && off + len > w->dst_size)
			w->dst_size = off + len;
		return;
	}
	want = (size_t)off < w->dst_size ? w->dst_size - off : 0;
	want = len < want ? len : want;
	LOG(w, "pread dst (%zu bytes) %zu bytes at %lld", w->dst_size, len,
	    (long long)off);
	r = pread(w->dst_fd, p, len, off);
	err = errno;
	log_ret(w, r, err);
	if (r < 0 || (size_t)r != want) {
		fz_fail(w, "pread of %zu at %lld of the %zu-byte file returned %ld (%s), not %zu",
			len, (long long)off, w->dst_size, r, r < 0 ? strerror(err) : "", want);
		return;
	}
	if (memcmp(p, w->dst + off, r)) {
		size_t k;

		for (k = 0; p[k] == w->dst[off + k]; k++)
			;
		fz_fail(w, "byte %lld of the destination file is 0x%02x, not 0x%02x",
			(long long)(off + k), p[k], w->dst[off + k]);
	}
}

/*
 * A child of fork(): a few operations on the devices it inherited, and on
 * pipes of its own, never on its parent's pipes or mappings, which the
 * parent's model describes.  No stdio or malloc here: another thread may
 * have held their locks at the fork.  The exit code says what failed, a
 * page shared with the parent how.
 */
static const char * const child_fail_name[CF_NR] = {
	"nothing",
	"a read of an inherited device",
	"a splice of an inherited device to a pipe of its own",
	"a read of that pipe",
	"a write to an inherited device",
	"a splice of 1000 written bytes to an inherited device",
	"an open of zczero",
	"a splice of that zczero to a pipe",
	"a read of that pipe once zczero was closed",
};

static int child_failed(struct worker *w, int fail, size_t len, ssize_t r,
			const unsigned char *buf)
{
	struct child_report *cr = w->child;

	cr->len = len;
	cr->ret = r;
	cr->err = r < 0 ? errno : 0;
	cr->bad = buf && r > 0 ? not_byte(buf, r, 0) : -1;
	cr->byte = cr->bad >= 0 ? buf[cr->bad] : 0;
	return fail;
}

/*
 * In a child: len bytes of fd spliced into a pipe of its own and read
 * back, which must be zeros; fd closed in between when close_fd.  CF_OK,
 * or what failed (cf_splice, cf_read).
 */
static int child_splice_read(struct worker *w, int fd, bool close_fd, size_t len,
			     int cf_splice, int cf_read)
{
	unsigned char *buf = w->area;
	ssize_t r, n;
	int fds[2];

	if (pipe2(fds, O_NONBLOCK))
		return child_failed(w, cf_splice, len, -1, NULL);
	r = splice(fd, NULL, fds[1], NULL, len, SPLICE_F_NONBLOCK);
	if (close_fd)
		close(fd);
	if (r <= 0)
		return child_failed(w, cf_splice, len, r, NULL);
	memset(buf, FILL, r);
	n = read(fds[0], buf, len);
	if (n != r || not_byte(buf, r, 0) >= 0)
		return child_failed(w, cf_read, r, n, buf);
	close(fds[0]);
	close(fds[1]);
	return CF_OK;
}

static int child_ops(struct worker *w, unsigned long long rng)
{
	unsigned char *buf = w->area;
	int k, i, fds[2], fd, fail;
	struct dev_slot *d;
	ssize_t r;
	size_t len;

	for (k = 0; k < 4; k++) {
		unsigned long long x = fz_next(&rng);

		i = pick_dev(w, x >> 8);
		d = i >= 0 ? &w->dev[i] : NULL;
		len = 1 + (x >> 16) % (64 * KIB);
		switch (x % 5) {
		case 0:
			if (!d || !dev_reads(d))
				break;
			memset(buf, FILL, len);
			r = read(d->fd, buf, len);
			if (r != (ssize_t)len || not_byte(buf, len, 0) >= 0)
				return child_failed(w, CF_READ, len, r, buf);
			break;
		case 1:
			if (!d || !dev_reads(d))
				break;
			fail = child_splice_read(w, d->fd, false, len, CF_SPLICE,
						 CF_PIPE_READ);
			if (fail)
				return fail;
			break;
		case 2:
			if (!d || !dev_writes(d))
				break;
			r = write(d->fd, fzc.pat, len);
			if (d->kind == ZERO ? r != (ssize_t)len :
			    r >= 0 || errno != ENOSPC)
				return child_failed(w, CF_WRITE, len, r, NULL);
			break;
		case 3:
			if (!d || !dev_writes(d))
				break;
			if (pipe2(fds, O_NONBLOCK) || write(fds[1], fzc.pat, 1000) != 1000)
				return child_failed(w, CF_DRAIN, 1000, -1, NULL);
			r = splice(fds[0], NULL, d->fd, NULL, len, SPLICE_F_NONBLOCK);
			if (d->kind == ZERO ? r != (ssize_t)(len < 1000 ? len : 1000) :
			    r >= 0 || errno != ENOSPC)
				return child_failed(w, CF_DRAIN, len, r, NULL);
			close(fds[0]);
			close(fds[1]);
			break;
		default:
			fd = open(dev_path(ZERO), O_RDONLY);
			if (fd < 0) {
				/* the module thread may have it unloaded */
				if (fzc.mod_ops && away_errno(errno))
					break;
				return child_failed(w, CF_OPEN, 0, -1, NULL);
			}
			/* closed before the read: the buffers outlive the file */
			fail = child_splice_read(w, fd, true, len, CF_FRESH_SPLICE,
						 CF_FRESH_READ);
			if (fail)
				return fail;
			break;
		}
	}
	return CF_OK;
}

void op_fork(struct worker *w, const struct draws *dr)
{
	struct child_report *cr = w->child;
	pid_t pid;
	int st;

	LOG(w, "fork");
	memset(cr, 0, sizeof(*cr));
	pid = fork();
	if (pid < 0) {
		fz_fail(w, "fork: %s", strerror(errno));
		return;
	}
	if (!pid)
		_exit(child_ops(w, dr->more));
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) >= CF_NR) {
		fz_fail(w, "a child of fork ended with status 0x%x", st);
		return;
	}
	LOG_MORE(w, ": child exit %d", WEXITSTATUS(st));
	if (!WEXITSTATUS(st))
		return;
	if (cr->bad >= 0)
		fz_fail(w, "in a child of fork, %s: byte %ld of %ld is 0x%02x",
			child_fail_name[WEXITSTATUS(st)], cr->bad, cr->ret, cr->byte);
	else
		fz_fail(w, "in a child of fork, %s: %ld bytes wanted, %ld returned (%s)",
			child_fail_name[WEXITSTATUS(st)], cr->len, cr->ret,
			cr->ret < 0 ? strerror(cr->err) : "wrong count");
}
