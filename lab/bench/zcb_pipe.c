// SPDX-License-Identifier: GPL-2.0
/*
 * zcbench's library, pipes: one of a given size, filled from the source
 * by splice or vmsplice, drained into the sink, and a reader's splice.
 * The splice and tcp benchmarks both use them.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

#include "zcbench.h"

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
