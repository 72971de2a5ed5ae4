// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev_pageref: shared writes counted, not timed.  On a kernel with
 * CONFIG_DEBUG_PAGE_REF, every write of a page's reference count is a
 * page_ref tracepoint event that names its CPU and the page's pfn.  Two
 * threads, pinned to CPUs 0 and 1, make round trips through a pipe of
 * 64 KiB; the events on pages that both CPUs wrote, per round trip, are
 * the cache lines the workload makes two CPUs fight over.  zcdev's pipe
 * round trips must make none (zcdev_pipe.c): that is judged, with one
 * TAP line each; sockets take page references whatever the pipe's
 * buffers are, and their figures are reported.
 *
 *   zcdev_pageref [-d DEV] [-l LABEL] [-w NAME] [-n ROUNDS] [-s ROUNDS] [-f]
 *
 *   -d DEV    the device (default /dev/zczero)
 *   -w NAME   one workload of those below (default: all)
 *   -l LABEL  its name in the lines (default: the device's)
 *   -n ROUNDS round trips a thread makes through a pipe (default 10000)
 *   -s ROUNDS the same into a socket (default 1000)
 *   -f        figures only: every line is a report, nothing is judged
 *             (for the references, stock /dev/zero and zeropatch)
 *
 * The workloads, two threads each:
 *   null    DEV -> pipe -> /dev/null, each thread on its own CPU
 *   self    DEV -> pipe -> DEV, each thread on its own CPU
 *   reader  DEV -> pipe on CPU 0, a reader on CPU 1 reads it out
 *   unix    DEV -> pipe -> AF_UNIX socket, read back, each on its CPU
 *   tcp     the same through a TCP connection on loopback
 * Runs as root (tracefs); prints TAP lines without numbers, as the
 * lane's steps do, and exits 1 if a judged line is "not ok".
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "zclab.h"

#define TRACING		"/sys/kernel/tracing"
#define CHUNK		(64 * KIB)
#define WARMUP		100	/* round trips before the count starts */
/* Events a round trip may show on shared pages and still count as none */
#define NONE_BELOW	0.01

enum sink_kind { SINK_NULL, SINK_SELF, SINK_READER, SINK_UNIX, SINK_TCP };

static const struct workload {
	const char *name;
	const char *what;
	enum sink_kind sink;
	bool judged;
} workloads[] = {
	{ "null", "pipe -> /dev/null", SINK_NULL, true },
	{ "self", "pipe -> itself", SINK_SELF, true },
	{ "reader", "pipe -> a reader thread on the other CPU", SINK_READER, true },
	{ "unix", "pipe -> AF_UNIX socket, read back", SINK_UNIX, false },
	{ "tcp", "pipe -> TCP on loopback, read back", SINK_TCP, false },
};

static const char *dev = "/dev/zczero";
static const char *label, *only;
static unsigned long pipe_rounds = 10000, sock_rounds = 1000;
static bool figures_only;

struct worker {
	pthread_t thread;
	int cpu;
	enum sink_kind sink;
	bool reads;		/* SINK_READER's reader */
	unsigned long rounds;
	pthread_barrier_t *go;	/* set up; then counting */
	int in, out;		/* DEV, and where the pipe goes */
	int p[2];		/* the pipe; the reader has the producer's */
	int sv[2];		/* the socket pair */
	unsigned char *buf;
	const char *err;	/* what failed, or NULL */
	int errnum;
};

static bool fail(struct worker *w, const char *what)
{
	if (!w->err) {
		w->err = what;
		w->errnum = errno;
	}
	return false;
}

static bool pin(struct worker *w)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	errno = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	return !errno || fail(w, "pinning to a CPU");
}

/* Move n bytes from fd to out with splice(), all of them */
static bool splice_all(struct worker *w, int fd, int out, size_t n)
{
	ssize_t r;

	while (n) {
		r = splice(fd, NULL, out, NULL, n, 0);
		if (r <= 0)
			return fail(w, "splice");
		n -= r;
	}
	return true;
}

/* One round trip: CHUNK bytes from DEV through the pipe to the sink */
static bool round_trip(struct worker *w)
{
	switch (w->sink) {
	case SINK_READER:
		if (w->reads)
			return read_full(w->p[0], w->buf, CHUNK) == CHUNK ||
			       fail(w, "read from the pipe");
		return splice_all(w, w->in, w->p[1], CHUNK);
	case SINK_UNIX:
	case SINK_TCP:
		return splice_all(w, w->in, w->p[1], CHUNK) &&
		       splice_all(w, w->p[0], w->sv[0], CHUNK) &&
		       (read_full(w->sv[1], w->buf, CHUNK) == CHUNK ||
			fail(w, "read from the socket"));
	default:
		return splice_all(w, w->in, w->p[1], CHUNK) &&
		       splice_all(w, w->p[0], w->out, CHUNK);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned long i;
	bool ok = pin(w);

	for (i = 0; ok && i < WARMUP; i++)
		ok = round_trip(w);
	pthread_barrier_wait(w->go);	/* the main thread starts tracing */
	pthread_barrier_wait(w->go);
	for (i = 0; ok && i < w->rounds; i++)
		ok = round_trip(w);
	return NULL;
}

static int setup(struct worker *w, const struct workload *wl, int cpu,
		 struct worker *producer)
{
	memset(w, 0, sizeof(*w));
	w->cpu = cpu;
	w->sink = wl->sink;
	w->in = -1;
	w->out = -1;
	memset(w->p, -1, sizeof(w->p));
	memset(w->sv, -1, sizeof(w->sv));
	w->rounds = wl->sink >= SINK_UNIX ? sock_rounds : pipe_rounds;
	w->buf = malloc(CHUNK);
	if (!w->buf)
		return -1;
	if (producer) {		/* the reader of the producer's pipe */
		w->reads = true;
		w->p[0] = producer->p[0];
		return 0;
	}
	w->in = open(dev, O_RDWR | O_CLOEXEC);
	if (w->in < 0 || pipe2(w->p, O_CLOEXEC) ||
	    fcntl(w->p[1], F_SETPIPE_SZ, CHUNK) < 0)
		return -1;
	switch (wl->sink) {
	case SINK_NULL:
		w->out = open("/dev/null", O_WRONLY | O_CLOEXEC);
		return w->out < 0 ? -1 : 0;
	case SINK_SELF:
		w->out = w->in;
		return 0;
	case SINK_UNIX:
	case SINK_TCP:
		errno = sock_pair(wl->sink == SINK_TCP, w->sv);
		return errno ? -1 : 0;
	default:
		return 0;
	}
}

static void teardown(struct worker *w)
{
	if (!w->reads) {
		if (w->out >= 0 && w->out != w->in)
			close(w->out);
		if (w->in >= 0)
			close(w->in);
		if (w->p[0] >= 0)
			close(w->p[0]);
		if (w->p[1] >= 0)
			close(w->p[1]);
		if (w->sv[0] >= 0)
			close(w->sv[0]);
		if (w->sv[1] >= 0)
			close(w->sv[1]);
	}
	free(w->buf);
}

static int tracing_write(const char *file, const char *val)
{
	char path[256];
	int fd, ret = 0;

	snprintf(path, sizeof(path), TRACING "/%s", file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -1;
	close(fd);
	return ret;
}

/* tracefs mounted, the page_ref events ready and off: 0, or why not */
static const char *tracing_setup(void)
{
	struct stat st;

	if (stat(TRACING "/events", &st) &&
	    mount("nodev", TRACING, "tracefs", 0, NULL))
		return "cannot mount tracefs";
	if (stat(TRACING "/events/page_ref", &st))
		return "no page_ref events: this kernel lacks CONFIG_DEBUG_PAGE_REF";
	if (tracing_write("tracing_on", "0") || tracing_write("trace", "") ||
	    tracing_write("buffer_size_kb", "65536") ||
	    tracing_write("events/page_ref/enable", "1"))
		return "cannot set up the page_ref events";
	return NULL;
}

/* Events lost to a full buffer since the last clear, on any CPU */
static long overruns(void)
{
	char path[128], line[128];
	long total = 0, n;
	FILE *f;
	int cpu;

	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		snprintf(path, sizeof(path),
			 TRACING "/per_cpu/cpu%d/stats", cpu);
		f = fopen(path, "re");
		if (!f)
			break;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "overrun: %ld", &n) == 1)
				total += n;
		fclose(f);
	}
	return total;
}

/* Per page: the CPUs that wrote its count, and how many times */
struct page_writes {
	unsigned long long pfn;
	unsigned long long cpus;	/* a bit per CPU, CPUs 0..63 */
	unsigned long events;
};

static int by_pfn(const void *a, const void *b)
{
	const struct page_writes *x = a, *y = b;

	return x->pfn < y->pfn ? -1 : x->pfn > y->pfn;
}

/* The CPU of a trace line, its "[001]" after the task */
static bool trace_cpu(const char *line, unsigned int *cpu)
{
	const char *s = line;
	char after;

	while ((s = strchr(s, '['))) {
		if (sscanf(s, "[%u]%c", cpu, &after) == 2 && after == ' ')
			return *cpu < 64;
		s++;
	}
	return false;
}

/*
 * Read the trace: the events on pages that more than one CPU wrote,
 * and all events, into *shared and *all.  0, or -1.
 */
static int count_shared(unsigned long *shared, unsigned long *all)
{
	struct page_writes *ev = NULL, *p;
	size_t n = 0, cap = 0, i, j;
	unsigned long long pfn;
	char line[512], *s;
	unsigned int cpu;
	FILE *f;

	*shared = *all = 0;
	f = fopen(TRACING "/trace", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || !strstr(line, " page_ref_") ||
		    !trace_cpu(line, &cpu))
			continue;
		s = strstr(line, "pfn=0x");
		if (!s || sscanf(s, "pfn=0x%llx", &pfn) != 1)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			p = realloc(ev, cap * sizeof(*ev));
			if (!p) {
				free(ev);
				fclose(f);
				return -1;
			}
			ev = p;
		}
		ev[n++] = (struct page_writes){ pfn, 1ULL << cpu, 1 };
	}
	fclose(f);
	qsort(ev, n, sizeof(*ev), by_pfn);
	for (i = 0; i < n; i = j) {
		struct page_writes page = ev[i];

		for (j = i + 1; j < n && ev[j].pfn == page.pfn; j++) {
			page.cpus |= ev[j].cpus;
			page.events++;
		}
		*all += page.events;
		if (page.cpus & (page.cpus - 1))
			*shared += page.events;
	}
	free(ev);
	return 0;
}

/* One workload: its line; whether it may pass */
static bool run(const struct workload *wl)
{
	struct worker w[2];
	pthread_barrier_t go;
	unsigned long shared = 0, all = 0, rounds;
	const char *err = NULL;
	double per_trip = 0;
	bool judged = wl->judged && !figures_only, ok;
	int i;

	pthread_barrier_init(&go, NULL, 3);
	for (i = 0; i < 2; i++) {
		if (setup(&w[i], wl, i, wl->sink == SINK_READER && i ?
			  &w[0] : NULL)) {
			err = "setting up";
			w[i].errnum = errno;
		}
		w[i].go = &go;
		w[i].reads = wl->sink == SINK_READER && i;
	}
	/* the reader reads what one producer makes: it counts one thread */
	rounds = wl->sink == SINK_READER ? w[0].rounds : 2 * w[0].rounds;
	if (!err) {
		for (i = 0; i < 2; i++)
			pthread_create(&w[i].thread, NULL, worker_main, &w[i]);
		pthread_barrier_wait(&go);
		if (tracing_write("trace", "") ||
		    tracing_write("tracing_on", "1"))
			err = "starting the trace";
		pthread_barrier_wait(&go);
		for (i = 0; i < 2; i++)
			pthread_join(w[i].thread, NULL);
		tracing_write("tracing_on", "0");
		for (i = 0; i < 2; i++)
			if (!err && w[i].err) {
				err = w[i].err;
				errno = w[i].errnum;
			}
		if (!err && overruns())
			err = "the trace buffer overran";
		if (!err && count_shared(&shared, &all))
			err = "reading the trace";
	}
	for (i = 0; i < 2; i++)
		teardown(&w[i]);
	pthread_barrier_destroy(&go);

	per_trip = (double)shared / rounds;
	ok = !err && (!judged || per_trip < NONE_BELOW);
	if (err) {
		printf("not ok - pageref: %s: %s: %s: %s\n", label, wl->what,
		       err, strerror(errno));
	} else {
		printf("%spageref: %s: %s, 2 CPUs: ",
		       !judged ? "# report: " : ok ? "ok - " : "not ok - ",
		       label, wl->what);
		printf("%.3f page-reference writes a round trip on pages both CPUs wrote",
		       per_trip);
		printf(" (%lu round trips of %lu KiB; %lu such events of %lu)%s\n",
		       rounds, CHUNK / KIB, shared, all,
		       judged ? ", want none" : "");
	}
	fflush(stdout);
	return ok;
}

/* The options that take a value: a string, or a count of round trips */
static const struct option_arg {
	int name;
	const char **str;
	unsigned long *count;
} option_args[] = {
	{ 'd', &dev, NULL },
	{ 'l', &label, NULL },
	{ 'w', &only, NULL },
	{ 'n', NULL, &pipe_rounds },
	{ 's', NULL, &sock_rounds },
};

/* Set the option named opt from optarg: whether it is one */
static bool set_option(int opt)
{
	const struct option_arg *o;

	for (o = option_args; o < option_args + ARRAY_SIZE(option_args); o++) {
		if (o->name != opt)
			continue;
		if (o->str)
			*o->str = optarg;
		else
			*o->count = strtoul(optarg, NULL, 0);
		return true;
	}
	return false;
}

int main(int argc, char **argv)
{
	const char *why;
	bool ok = true;
	size_t i;
	int opt;

	while ((opt = getopt(argc, argv, "d:l:w:n:s:f")) != -1) {
		if (opt == 'f') {
			figures_only = true;
		} else if (!set_option(opt)) {
			fprintf(stderr, "usage: %s [-d DEV] [-l LABEL] [-w WORKLOAD]",
				argv[0]);
			fprintf(stderr, " [-n ROUNDS] [-s ROUNDS] [-f]\n");
			return 2;
		}
	}
	if (!pipe_rounds || !sock_rounds) {
		fprintf(stderr, "%s: give a number of round trips above 0\n",
			argv[0]);
		return 2;
	}
	for (i = 0; only && i < ARRAY_SIZE(workloads); i++)
		if (!strcmp(only, workloads[i].name))
			break;
	if (only && i == ARRAY_SIZE(workloads)) {
		fprintf(stderr, "%s: no workload %s: null, self, reader, unix or tcp\n",
			argv[0], only);
		return 2;
	}
	if (!label)
		label = strrchr(dev, '/') ? strrchr(dev, '/') + 1 : dev;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("not ok - pageref: %s: needs two CPUs\n", label);
		return 1;
	}
	why = tracing_setup();
	if (why) {
		printf("not ok - pageref: %s: %s\n", label, why);
		return 1;
	}
	for (i = 0; i < ARRAY_SIZE(workloads); i++)
		if (!only || !strcmp(only, workloads[i].name))
			ok &= run(&workloads[i]);
	tracing_write("events/page_ref/enable", "0");
	tracing_write("trace", "");
	return ok ? 0 : 1;
}
