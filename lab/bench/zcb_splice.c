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

static void setup_pipe(struct worker *w)
{
	const struct meas *m = w->m;
	ssize_t n;

	if (!make_pipe(w, &w->pipe_r, &w->pipe_w, m->size))
		return;

	if (m->sink == SINK_DEV)
		/* a device into itself, the peer into DEV */
		w->sink = open_dev(w, m->path ? m->path : zcb.dev_path, O_WRONLY);
	else
		w->sink = open(zcb.null_path, O_WRONLY | O_CLOEXEC);
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

static void run_pipe(struct worker *w)
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

static const size_t pipe_sizes[] = { 64 * KIB, 1 * MIB };

static void splice_group(const char *test, enum sink_kind sink, size_t size,
			 int threads)
{
	struct meas m = {
		.test = test, .sink = sink, .size = size, .threads = threads,
		.setup = setup_pipe, .run = run_pipe,
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

void bench_splice(const int *threads, int n)
{
	static const struct {
		const char *test;
		enum sink_kind sink;
	} sinks[] = {
		{ "splice-null", SINK_NULL },
		{ "splice-reader", SINK_READER },
		{ "splice-self", SINK_DEV },
	};
	unsigned int i, s;
	int t;

	for (i = 0; i < ARRAY_SIZE(sinks); i++)
		for (s = 0; s < ARRAY_SIZE(pipe_sizes); s++)
			for (t = 0; t < n; t++)
				splice_group(sinks[i].test, sinks[i].sink,
					     pipe_sizes[s], threads[t]);
}
