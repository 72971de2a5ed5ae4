// SPDX-License-Identifier: GPL-2.0
/*
 * zcbench's library, its engine: the configuration; workers that set up,
 * wait at a start gate, run and tear down, each as its measurement says
 * (the benchmark's functions, which the engine only calls through it);
 * one measurement of m->threads of them, timed from the gate until the
 * last has been joined; its row in the table and the CSV.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "zcbench.h"

const char *const status_name[] = {
	[ST_OK]		 = "ok",
	[ST_ABSENT]	 = "absent",
	[ST_UNSUPPORTED] = "unsupported",
	[ST_SKIPPED]	 = "skipped",
	[ST_ERROR]	 = "error",
};

/* Start gate: workers report ready, main opens the gate (or aborts). */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int ready;
	int state;		/* 0 closed, 1 go, -1 abort */
} gate = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

struct zcb_config zcb = {
	.dev_path	= "/dev/zczero",
	.ref_path	= "/dev/zero",
	.null_path	= "/dev/null",
	.bytes		= 256 * MIB,
	.map		= GIB,
	.seconds	= 30.0,
	.repeat		= 1,
};

static struct result results[MAX_RESULTS];
static int nresults;
static FILE *csv;
static const char *csv_name;
static int nerrors;
static double deadline;
static char ratio_ref_hdr[64], ratio_peer_hdr[64], ratio_patch_hdr[64];
static int ratio_w;

/* Sets *@st to @s if it is still ST_OK: the first failure is kept. */
bool claim_status(enum status *st, enum status s)
{
	if (*st != ST_OK)
		return false;
	*st = s;
	return true;
}

/* Report a failed syscall by name; errno is read here. */
void fail_sys(struct worker *w, const char *name)
{
	set_status(&w->status, w->msg, ST_ERROR, "%s: %s", name,
		   strerror(errno));
}

bool check_zero(struct worker *w, const void *p, size_t len,
		const char *what)
{
	long off = not_byte(p, len, 0);

	if (off < 0)
		return true;
	set_status(&w->status, w->msg, ST_ERROR,
		   "data check after %s: byte %ld of %zu is 0x%02x, not 0",
		   what, off, len, ((const unsigned char *)p)[off]);
	return false;
}

/*
 * The first n bytes of a row, read back from fd and checked for zeros
 * before timing: whether they are (else the worker's status says why).
 */
bool read_zeros_back(struct worker *w, int fd, size_t n, const char *what)
{
	unsigned char *tmp = malloc(n);
	ssize_t r;

	if (!tmp) {
		fail_sys(w, "malloc");
		return false;
	}
	memset(tmp, 0xa5, n);
	r = read_full(fd, tmp, n);
	if (r >= 0 && r < (ssize_t)n)
		errno = EIO;
	if (r != (ssize_t)n)
		fail_sys(w, what);
	else
		check_zero(w, tmp, n, what);
	free(tmp);
	return w->status == ST_OK;
}

void *alloc_buf(struct worker *w, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		fail_sys(w, "mmap");
		return NULL;
	}
	w->buf = p;
	w->buf_len = len;
	return p;
}

/* Whether an open's error says that the device or its driver is absent */
bool absent_errno(int err)
{
	return err == ENOENT || err == ENXIO || err == ENODEV;
}

/* Open a device; a missing device or driver is "absent", not an error. */
int open_dev(struct worker *w, const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	if (absent_errno(errno))
		set_status(&w->status, w->msg, ST_ABSENT, "open %s: %s",
			   path, strerror(errno));
	else
		set_status(&w->status, w->msg, ST_ERROR, "open %s: %s",
			   path, strerror(errno));
	return -1;
}

/*
 * Whether a call moved bytes; if not, its failure (what: the call) is
 * the worker's status: errno's, or "returned 0".
 */
bool moved(struct worker *w, ssize_t n, const char *what)
{
	if (n < 0)
		fail_sys(w, what);
	else if (!n)
		set_status(&w->status, w->msg, ST_ERROR, "%s: returned 0", what);
	return n > 0;
}

/* Start the worker's reader or receiver thread: whether it runs */
bool start_reader(struct worker *w, void *(*fn)(void *), const char *what)
{
	errno = pthread_create(&w->reader, NULL, fn, w);
	if (errno) {
		fail_sys(w, what);
		return false;
	}
	w->reader_started = true;
	return true;
}

/* The time of a measurement's start; its deadline is the cap after it */
double start_clock(void)
{
	double t0 = now_s();

	deadline = t0 + zcb.seconds;
	return t0;
}

bool time_up(unsigned long iter)
{
	return iter % CLOCK_EVERY == 0 && now_s() > deadline;
}

static void setup(struct worker *w)
{
	const struct meas *m = w->m;

	if (m->path) {
		w->src = open_dev(w, m->path, O_RDONLY);
		if (w->src < 0)
			return;
	}
	m->setup(w);
}

static void teardown(struct worker *w)
{
	if (w->m->sink == SINK_TCP && w->sink >= 0)
		shutdown(w->sink, SHUT_WR);	/* receiver sees EOF */
	if (w->pipe_w >= 0)
		close(w->pipe_w);	/* reader sees EOF */
	if (w->reader_started) {
		pthread_join(w->reader, NULL);
		if (w->reader_status != ST_OK)
			set_status(&w->status, w->msg, w->reader_status, "%s",
				   w->reader_msg);
		else if (w->status == ST_OK && w->reader_done != w->done)
			set_status(&w->status, w->msg, ST_ERROR,
				   "reader drained %llu bytes of %llu",
				   w->reader_done, w->done);
	} else if (w->pipe_r >= 0) {
		close(w->pipe_r);
	}
	if (w->rsock >= 0)
		close(w->rsock);
	if (w->rpipe_r >= 0)
		close(w->rpipe_r);
	if (w->rpipe_w >= 0)
		close(w->rpipe_w);
	if (w->rnull >= 0)
		close(w->rnull);
	if (w->ring_ok)
		io_uring_queue_exit(&w->ring);
	if (w->sink >= 0)
		close(w->sink);
	if (w->src >= 0)
		close(w->src);
	if (w->buf)
		munmap(w->buf, w->buf_len);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int state;

	setup(w);

	pthread_mutex_lock(&gate.lock);
	gate.ready++;
	pthread_cond_broadcast(&gate.cond);
	while (!gate.state)
		pthread_cond_wait(&gate.cond, &gate.lock);
	state = gate.state;
	pthread_mutex_unlock(&gate.lock);

	if (state > 0 && w->status == ST_OK)
		w->m->run(w);
	teardown(w);
	return NULL;
}

static const struct meas *current_meas;

/* A syscall that never returns must not hang the VM run: say so, exit. */
static void watchdog(int sig)
{
	char msg[256];
	int len;

	(void)sig;
	len = snprintf(msg, sizeof(msg),
		       "zcbench: %s %s %zu threads=%d hung (no progress within the time cap + %d s), exiting\n",
		       current_meas ? current_meas->test : "?",
		       current_meas ? current_meas->label : "?",
		       current_meas ? current_meas->size : 0,
		       current_meas ? current_meas->threads : 0, WATCHDOG_SLACK);
	if (len > 0 && write(STDERR_FILENO, msg, len) < 0)
		_exit(3);
	_exit(3);
}

/* Run one measurement with m->threads workers; fills r. */
static void measure(const struct meas *m, struct result *r)
{
	struct worker *ws;
	unsigned long long per;
	double t0, t1;
	int i, created, go = 1;

	memset(r, 0, sizeof(*r));
	r->test = m->test;
	r->label = m->label;
	r->size = m->size;
	r->threads = m->threads;
	r->noverdict = zcb.noverdict_note && m->reads;

	ws = calloc(m->threads, sizeof(*ws));
	if (!ws) {
		r->status = ST_ERROR;
		snprintf(r->msg, MSG_LEN, "calloc: %s", strerror(errno));
		return;
	}
	per = zcb.bytes / m->threads;
	if (m->reads) {
		/* whole buffers, and enough of them */
		per = (per + m->size - 1) / m->size * m->size;
		if (per < MIN_OPS * m->size)
			per = MIN_OPS * m->size;
	}

	current_meas = m;
	alarm((unsigned int)zcb.seconds + WATCHDOG_SLACK);
	gate.ready = 0;
	gate.state = 0;
	for (created = 0; created < m->threads; created++) {
		struct worker *w = &ws[created];

		w->m = m;
		w->target = per;
		w->src = -1;
		w->pipe_r = -1;
		w->pipe_w = -1;
		w->sink = -1;
		w->rsock = -1;
		w->rpipe_r = -1;
		w->rpipe_w = -1;
		w->rnull = -1;
		errno = pthread_create(&w->tid, NULL, worker_main, w);
		if (errno) {
			r->status = ST_ERROR;
			snprintf(r->msg, MSG_LEN, "pthread_create: %s",
				 strerror(errno));
			go = -1;
			break;
		}
	}

	pthread_mutex_lock(&gate.lock);
	while (gate.ready < created)
		pthread_cond_wait(&gate.cond, &gate.lock);
	for (i = 0; i < created; i++)
		if (ws[i].status != ST_OK)
			go = -1;
	t0 = start_clock();
	gate.state = go;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);

	for (i = 0; i < created; i++)
		pthread_join(ws[i].tid, NULL);
	t1 = now_s();
	alarm(0);

	for (i = 0; i < created; i++) {
		/* the first failure of the most serious kind wins */
		if (ws[i].status > r->status) {
			r->status = ws[i].status;
			snprintf(r->msg, MSG_LEN, "%s", ws[i].msg);
		}
		r->bytes += ws[i].done;
		r->zc_done += ws[i].zc_done;
		r->zc_copied += ws[i].zc_copied;
	}
	r->seconds = t1 - t0;
	if (r->status == ST_OK && (r->bytes == 0 || r->seconds <= 0)) {
		r->status = ST_ERROR;
		snprintf(r->msg, MSG_LEN, "nothing transferred");
	}
	free(ws);
}

double gbps(const struct result *r)
{
	return r->bytes / r->seconds / 1e9;
}

const struct result *find(const char *test, const char *label,
			  size_t size, int threads)
{
	int i;

	for (i = 0; i < nresults; i++) {
		const struct result *r = &results[i];

		if (!strcmp(r->test, test) && !strcmp(r->label, label) &&
		    r->size == size && r->threads == threads)
			return r;
	}
	return NULL;
}

static void ratio_str(const struct result *a, const struct result *b,
		      char *buf, size_t len)
{
	if (a && a->noverdict)
		snprintf(buf, len, "n/v");
	else if (!a || !b || a->status != ST_OK || b->status != ST_OK)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.2fx", gbps(a) / gbps(b));
}

void zcb_header_row(void)
{
	printf("%-13s %5s %3s %-10s %9s", "test", "size", "thr", "device",
	       "GB/s");
	if (zcb.instr)
		printf(" %9s", "instr/B");
	printf(" %*s %*s", ratio_w, ratio_ref_hdr, ratio_w, ratio_peer_hdr);
	if (zcb.patch_path)
		printf(" %*s", ratio_w, ratio_patch_hdr);
	putchar('\n');
}

/* One row; ratios (DEV rows) against ref, peer and the patch's loop. */
static void print_row(const struct result *r, const struct result *ref,
		      const struct result *peer, const struct result *pat)
{
	char sz[24], gb[16], r1[16], r2[16], r3[16];

	if (r->status == ST_OK)
		snprintf(gb, sizeof(gb), "%.3f", gbps(r));
	else
		snprintf(gb, sizeof(gb), "%s", status_name[r->status]);
	printf("%-13s %5s %3d %-10s %9s", r->test,
	       size_str(r->size, sz, sizeof(sz)), r->threads, r->label, gb);
	if (zcb.instr) {
		if (r->status == ST_OK)
			printf(" %9.4f", r->seconds * 1e9 / r->bytes);
		else
			printf(" %9s", "-");
	}
	if (ref || peer) {
		ratio_str(r, ref, r1, sizeof(r1));
		ratio_str(r, peer, r2, sizeof(r2));
		printf(" %*s %*s", ratio_w, r1, ratio_w, r2);
		if (zcb.patch_path) {
			ratio_str(r, pat, r3, sizeof(r3));
			printf(" %*s", ratio_w, r3);
		}
	}
	if (r->status != ST_OK)
		printf("  (%s)", r->msg);
	else if (r->zc_done)
		printf("  (%llu of %llu zerocopy sends copied by the kernel)",
		       r->zc_copied, r->zc_done);
	else if (r->mapped)
		printf("  (%lld faults, AnonHugePages %lld kB, %s)", r->faults,
		       r->anon_huge_kb,
		       r->aligned ? "2M-aligned" : "not 2M-aligned");
	if (r->noverdict)
		printf("  [%s]", zcb.noverdict_note);
	putchar('\n');
	fflush(stdout);

	if (csv) {
		fprintf(csv, "%s,%zu,%d,%s,%llu,%.9f,", r->test, r->size,
			r->threads, r->label, r->bytes, r->seconds);
		if (r->status == ST_OK)
			fprintf(csv, "%.6f,", gbps(r));
		else
			fprintf(csv, "%s,", status_name[r->status]);
		if (r->mapped && r->status == ST_OK)
			fprintf(csv, "%lld,%lld,", r->faults, r->anon_huge_kb);
		else
			fprintf(csv, ",,");
		fprintf(csv, "%s\n", r->noverdict ? zcb.noverdict_note : "");
		fflush(csv);
	}
	if (r->status == ST_ERROR)
		nerrors++;
}

/*
 * A group's rows: DEV's, with its ratios to REF, the peer and the patch's
 * loop; then each of theirs and more's, those measured.
 */
void print_rows(const struct result *d, const struct result *ref,
		const struct result *peer, const struct result *pat,
		const struct result *more[], unsigned int nmore)
{
	const struct result *rest[] = { ref, pat };
	unsigned int i;

	print_row(d, ref, peer, pat);
	for (i = 0; i < ARRAY_SIZE(rest); i++)
		if (rest[i])
			print_row(rest[i], NULL, NULL, NULL);
	for (i = 0; i < nmore; i++)
		if (more[i])
			print_row(more[i], NULL, NULL, NULL);
}

/*
 * A measurement, made opt_repeat times while it succeeds: the fastest,
 * as a row of the table.
 */
const struct result *best_of(void (*once)(const void *arg, struct result *r),
			     const void *arg)
{
	struct result *r, again;
	int i;

	if (nresults == MAX_RESULTS) {
		fprintf(stderr, "zcbench: too many results\n");
		exit(1);
	}
	r = &results[nresults];
	once(arg, r);
	for (i = 1; i < zcb.repeat && r->status == ST_OK; i++) {
		once(arg, &again);
		if (again.status != ST_OK || gbps(&again) > gbps(r))
			*r = again;
	}
	nresults++;
	return r;
}

static void measure_once(const void *arg, struct result *r)
{
	measure(arg, r);
}

const struct result *do_meas(const struct meas *m)
{
	return best_of(measure_once, m);
}

/*
 * m's rows of DEV, of REF (unless ref is NULL) and of the patch's loop
 * (when -z named it); m->path is NULL after, for the peers.
 */
void meas_sources(struct meas *m, const struct result **d,
		  const struct result **ref, const struct result **pat)
{
	m->path = zcb.dev_path;
	m->label = zcb.dev_label;
	*d = do_meas(m);
	if (ref) {
		m->path = zcb.ref_path;
		m->label = zcb.ref_label;
		*ref = do_meas(m);
	}
	if (zcb.patch_path) {
		m->path = zcb.patch_path;
		m->label = PATCH_LABEL;
		*pat = do_meas(m);
	}
	m->path = NULL;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The devices' labels, and the ratio columns' headers */
static void labels(void)
{
	zcb.dev_label = base_name(zcb.dev_path);
	zcb.ref_label = base_name(zcb.ref_path);
	if (!strcmp(zcb.dev_label, zcb.ref_label)) {
		/* e.g. -d /dev/zero to exercise the code paths natively */
		static char dl[64], rl[64];

		snprintf(dl, sizeof(dl), "%.50s(dev)", zcb.dev_label);
		snprintf(rl, sizeof(rl), "%.50s(ref)", zcb.ref_label);
		zcb.dev_label = dl;
		zcb.ref_label = rl;
	}
	snprintf(ratio_ref_hdr, sizeof(ratio_ref_hdr), "%.20s/%.20s",
		 zcb.dev_label, zcb.ref_label);
	snprintf(ratio_peer_hdr, sizeof(ratio_peer_hdr), "%.20s/peer",
		 zcb.dev_label);
	snprintf(ratio_patch_hdr, sizeof(ratio_patch_hdr), "%.20s/%s",
		 zcb.dev_label, PATCH_LABEL);
	ratio_w = strlen(ratio_ref_hdr);
	if ((int)strlen(ratio_peer_hdr) > ratio_w)
		ratio_w = strlen(ratio_peer_hdr);
	if (zcb.patch_path && (int)strlen(ratio_patch_hdr) > ratio_w)
		ratio_w = strlen(ratio_patch_hdr);
}

static void probe_uring(void)
{
	struct io_uring ring;
	int ret = io_uring_queue_init(1, &ring, 0);

	if (ret < 0) {
		snprintf(zcb.uring_msg, MSG_LEN, "io_uring_queue_init: %s",
			 strerror(-ret));
		return;
	}
	io_uring_queue_exit(&ring);
	zcb.uring_ok = true;
}

/*
 * Before the first measurement, once zcb holds the options: the labels,
 * whether io_uring works, the CSV (at @csv_path, if any) with its header.
 */
bool zcb_begin(const char *csv_path)
{
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, watchdog);
	labels();
	probe_uring();
	if (!csv_path)
		return true;
	csv = fopen(csv_path, "w");
	if (!csv) {
		fprintf(stderr, "zcbench: fopen %s: %s\n", csv_path,
			strerror(errno));
		return false;
	}
	csv_name = csv_path;
	fprintf(csv, "%s\n", CSV_HEADER);
	return true;
}

/* After the last measurement: the exit status, 1 if a row failed */
int zcb_end(void)
{
	if (csv && fclose(csv)) {
		fprintf(stderr, "zcbench: fclose %s: %s\n", csv_name,
			strerror(errno));
		return 1;
	}
	if (nerrors) {
		fprintf(stderr, "zcbench: %d measurement(s) failed\n", nerrors);
		return 1;
	}
	return 0;
}
