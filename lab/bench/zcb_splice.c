// SPDX-License-Identifier: GPL-2.0
/*
 * zcbench, splice: DEV -> pipe -> /dev/null (splice-null), the same with a
 * reader thread splicing the pipe on (splice-reader), and DEV -> pipe ->
 * DEV (splice-self), against REF, the zero-page patch's loop (-z) and
 * vmsplice of a zeroed buffer.  64 KiB and 1 MiB pipes; every thread has
 * its own source, pipe and sink.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "zcbench.h"

/* Move len bytes from the pipe to the sink; returns false on error. */
bool drain(struct worker *w, size_t len)
{
	while (len) {
		ssize_t n = splice(w->pipe_r, NULL, w->sink, NULL, len,
				   SPLICE_F_MOVE);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			fail_sys(w, "splice(pipe->sink)");
			return false;
		}
		if (n == 0) {
			set_status(&w->status, w->msg, ST_ERROR,
				   "splice(pipe->sink): returned 0");
			return false;
		}
		len -= n;
	}
	return true;
}

/* Put up to len bytes into the pipe from the source; <0 on error. */
ssize_t fill(struct worker *w, size_t len)
{
	ssize_t n;

	for (;;) {
		if (w->m->kind == K_SPLICE) {
			n = splice(w->src, NULL, w->pipe_w, NULL, len,
				   SPLICE_F_MOVE);
		} else {
			struct iovec iov = { .iov_base = w->buf, .iov_len = len };

			n = vmsplice(w->pipe_w, &iov, 1, 0);
		}
		if (n >= 0 || errno != EINTR)
			return n;
	}
}

/*
 * A reader's or receiver's splice, again after EINTR: its count, or -1
 * with the reader's status set (what: the call, for the message).
 */
ssize_t reader_splice(struct worker *w, int in, int out, size_t len,
		      const char *what)
{
	ssize_t n;

	do
		n = splice(in, NULL, out, NULL, len, SPLICE_F_MOVE);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		set_status(&w->reader_status, w->reader_msg, ST_ERROR, "%s: %s",
			   what, strerror(errno));
	return n;
}

static void *reader_main(void *arg)
{
	struct worker *w = arg;
	ssize_t n;

	/* until the writer closes the pipe */
	while ((n = reader_splice(w, w->pipe_r, w->sink, w->m->size,
				  "splice(pipe->/dev/null) in reader")) > 0)
		w->reader_done += n;
	/* A writer blocked on a full pipe gets EPIPE instead of hanging. */
	close(w->pipe_r);
	return NULL;
}

/* A pipe of size bytes; false (and the status set) on failure. */
bool make_pipe(struct worker *w, int *rd, int *wr, size_t size)
{
	int fds[2];
	int ret;

	if (pipe2(fds, O_CLOEXEC)) {
		fail_sys(w, "pipe2");
		return false;
	}
	*rd = fds[0];
	*wr = fds[1];
	ret = fcntl(*wr, F_SETPIPE_SZ, (int)size);
	if (ret < 0) {
		fail_sys(w, "fcntl(F_SETPIPE_SZ)");
		return false;
	}
	if ((size_t)ret < size) {
		set_status(&w->status, w->msg, ST_ERROR,
			   "fcntl(F_SETPIPE_SZ): got %d, wanted %zu", ret, size);
		return false;
	}
	return true;
}

void setup_pipe(struct worker *w)
{
	const struct meas *m = w->m;
	ssize_t n;

	if (!make_pipe(w, &w->pipe_r, &w->pipe_w, m->size))
		return;

	if (m->sink == SINK_DEV)
		/* a device into itself, the peer into DEV */
		w->sink = open_dev(w, m->path ? m->path : dev_path, O_WRONLY);
	else
		w->sink = open(null_path, O_WRONLY | O_CLOEXEC);
	if (w->sink < 0) {
		if (w->status == ST_OK)
			fail_sys(w, "open /dev/null");
		return;
	}

	/* Zeroed source buffer for vmsplice, touched so it has real pages. */
	if (m->kind == K_VMSPLICE) {
		if (!alloc_buf(w, m->size))
			return;
		memset(w->buf, 0, m->size);
	}

	/* Check the first pipe-full: read it back and look at it. */
	n = fill(w, m->size);
	if (n < 0 && m->kind == K_SPLICE && errno == EINVAL)
		set_status(&w->status, w->msg, ST_UNSUPPORTED,
			   "splice from %s: EINVAL", m->path);
	if (!moved(w, n, m->kind == K_SPLICE ? "splice(dev->pipe)" : "vmsplice"))
		return;
	if (!read_zeros_back(w, w->pipe_r, n, "splice"))
		return;

	if (m->sink == SINK_READER)
		start_reader(w, reader_main, "pthread_create(reader)");
}

void run_pipe(struct worker *w)
{
	const struct meas *m = w->m;
	unsigned long iter = 0;

	while (w->done < w->target) {
		size_t want = m->size;
		ssize_t n;

		if (want > w->target - w->done)
			want = w->target - w->done;
		n = fill(w, want);
		if (!moved(w, n, m->kind == K_SPLICE ? "splice(dev->pipe)" : "vmsplice"))
			break;
		w->done += n;
		if (m->sink != SINK_READER && !drain(w, n))
			break;
		if (time_up(++iter))
			break;
	}
}

const size_t pipe_sizes[2] = { 64 * KIB, 1 * MIB };

void splice_group(const char *test, enum sink_kind sink, size_t size,
		  int threads)
{
	struct meas m = {
		.test = test, .sink = sink, .size = size, .threads = threads,
	};
	const struct result *d, *ref = NULL, *pat = NULL, *p;

	m.kind = K_SPLICE;
	/* splice-self: the patch's loop into itself, as the patched /dev/zero would */
	meas_sources(&m, &d, sink != SINK_DEV ? &ref : NULL, &pat);
	m.kind = K_VMSPLICE;
	m.label = "vmsplice";
	p = do_meas(&m);

	print_rows(d, ref, p, pat, &p, 1);
}

