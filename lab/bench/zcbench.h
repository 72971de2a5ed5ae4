/* SPDX-License-Identifier: GPL-2.0 */
/*
 * zcbench: its library's interface and its benchmarks' entry points.  As
 * tools/perf/bench has them: zcbench.c holds the options and the table of
 * benchmarks; each benchmark is a file of its own that calls only the
 * library, never another benchmark; the library calls no benchmark.
 *
 *   zcbench.c     options, the header, the table of benchmarks (main)
 *   library:
 *   zcb_run.c     the configuration, workers, one measurement, rows, the CSV
 *   zcb_pipe.c    pipes: make one, fill it, drain it, a reader's splice
 *   benchmarks:
 *   zcb_splice.c  splice-null, splice-reader, splice-self
 *   zcb_tcp.c     tcp-sendfile, tcp-splice
 *   zcb_read.c    read; uring-qd1, uring-qd32
 *   zcb_mmap.c    mmap-touch
 *
 * The CSV's columns are csv.h's, shared with clearbench and read by name.
 */
#ifndef ZCBENCH_H
#define ZCBENCH_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <liburing.h>

#include "csv.h"
#include "zclab.h"

#define MSG_LEN		192
#define MAX_RESULTS	1024
#define URING_POOL	(2 * MIB)	/* in-flight reads share at most this */
#define MIN_OPS		4		/* minimum operations per thread */
#define CLOCK_EVERY	64		/* loop iterations between time checks */
#define WATCHDOG_SLACK	30		/* seconds past the cap before exit(3) */
#define TCP_CHECK_LEN	(16 * KIB)	/* bytes checked before a tcp-* row */
#define PATCH_LABEL	"zeropatch"
#define TOUCH_STRIDE	4096UL		/* mmap-touch: one byte per this */
#define MAP_CHECK_LEN	(4 * MIB)	/* mmap-touch: read before timing */
#define HUGE_ALIGN	(2 * MIB)

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY	60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY	0x4000000
#endif

enum kind {
	K_SPLICE,	/* splice(src -> pipe) */
	K_VMSPLICE,	/* vmsplice(zeroed buffer -> pipe) */
	K_READ,		/* read(src) */
	K_URING,	/* io_uring read(src) */
	K_MEMSET,	/* memset(buffer) */
	K_SENDFILE,	/* sendfile(socket, src) */
	K_SEND,		/* send(socket, zeroed buffer) */
	K_SENDZC,	/* send(socket, zeroed buffer, MSG_ZEROCOPY) */
};

enum sink_kind {
	SINK_NONE,
	SINK_NULL,	/* same thread splices the pipe to /dev/null */
	SINK_READER,	/* a reader thread splices the pipe to /dev/null */
	SINK_DEV,	/* same thread splices the pipe to DEV */
	SINK_TCP,	/* a loopback TCP socket; a receiver thread drains it */
};

enum status {
	ST_OK,
	ST_ABSENT,
	ST_UNSUPPORTED,
	ST_SKIPPED,
	ST_ERROR,
};

extern const char *const status_name[];

/* One row of the table: one device (or peer), one size, one thread count. */
struct result {
	const char *test;
	const char *label;	/* device column */
	size_t size;
	int threads;
	enum status status;
	char msg[MSG_LEN];
	unsigned long long bytes;
	double seconds;
	unsigned long long zc_done;	/* MSG_ZEROCOPY sends completed */
	unsigned long long zc_copied;	/* ... of them copied by the kernel */
	bool noverdict;			/* -V: figures only, no ratios */
	bool mapped;			/* mmap-touch: the fields below */
	bool aligned;			/* the mapping starts on 2 MiB */
	long long faults;		/* minor + major faults of the touch */
	long long anon_huge_kb;		/* AnonHugePages of the VMA */
};

struct worker;

/*
 * One measurement: its row, and how each of its workers is set up and
 * run (the benchmark's functions; the library tears every worker down).
 */
struct meas {
	const char *test;
	const char *label;
	const char *path;	/* source device; NULL for the user-space peers */
	enum kind kind;
	enum sink_kind sink;
	size_t size;		/* pipe size or buffer size */
	unsigned int qd;	/* io_uring queue depth */
	int threads;
	bool reads;		/* whole buffers of size, at least MIN_OPS; -V */
	void (*setup)(struct worker *w);
	void (*run)(struct worker *w);
};

struct worker {
	const struct meas *m;
	pthread_t tid;
	unsigned long long target;
	unsigned long long done;
	enum status status;
	char msg[MSG_LEN];

	int src;		/* source device */
	int pipe_r, pipe_w;
	int sink;		/* /dev/null or DEV, opened for writing */
	void *buf;
	size_t buf_len;

	bool ring_ok;
	struct io_uring ring;
	unsigned int nbuf;

	/* SINK_TCP: the receiving socket and the receiver's pipe */
	int rsock;
	int rpipe_r, rpipe_w;
	int rnull;
	unsigned long long zc_sent, zc_done, zc_copied;

	/*
	 * Reader thread for SINK_READER (it owns pipe_r once started) and
	 * receiver thread for SINK_TCP (it owns rsock).
	 */
	bool reader_started;
	pthread_t reader;
	unsigned long long reader_done;
	enum status reader_status;
	char reader_msg[MSG_LEN];
};

/*
 * The library (zcb_run.c, zcb_pipe.c)
 *
 * What zcbench.c's options set, before zcb_begin(); benchmarks read it.
 */
struct zcb_config {
	const char *dev_path, *ref_path, *null_path;
	const char *patch_path;		/* -z: the zero-page patch's loop */
	const char *machine_label;	/* -m */
	const char *noverdict_note;	/* -V */
	unsigned long long bytes;	/* -b: per measurement, all threads */
	unsigned long long map;		/* -M: mmap-touch's mapping */
	double seconds;			/* -s: the cap of a measurement */
	int repeat;			/* -n */
	bool instr;			/* -i */
	/* set by zcb_begin() */
	const char *dev_label, *ref_label;
	bool uring_ok;			/* io_uring_queue_init() works here */
	char uring_msg[MSG_LEN];	/* if not, why */
};

extern struct zcb_config zcb;

bool zcb_begin(const char *csv_path);
void zcb_header_row(void);
int zcb_end(void);
bool claim_status(enum status *st, enum status s);
/*
 * Record a failure and its message, unless one is already recorded.  The
 * message goes straight to snprintf() so that the compiler checks the
 * format against the arguments.
 */
#define set_status(st, msg, s, ...)					\
	do {								\
		if (claim_status(st, s))				\
			snprintf(msg, MSG_LEN, __VA_ARGS__);		\
	} while (0)
void fail_sys(struct worker *w, const char *name);
bool check_zero(struct worker *w, const void *p, size_t len, const char *what);
bool read_zeros_back(struct worker *w, int fd, size_t n, const char *what);
void *alloc_buf(struct worker *w, size_t len);
int open_dev(struct worker *w, const char *path, int flags);
bool absent_errno(int err);
bool moved(struct worker *w, ssize_t n, const char *what);
bool start_reader(struct worker *w, void *(*fn)(void *), const char *what);
double start_clock(void);
bool time_up(unsigned long iter);
double gbps(const struct result *r);
const struct result *find(const char *test, const char *label, size_t size,
			  int threads);
void print_rows(const struct result *d, const struct result *ref,
		const struct result *peer, const struct result *pat,
		const struct result *more[], unsigned int nmore);
const struct result *best_of(void (*once)(const void *arg, struct result *r),
			     const void *arg);
const struct result *do_meas(const struct meas *m);
void meas_sources(struct meas *m, const struct result **d,
		  const struct result **ref, const struct result **pat);

bool make_pipe(struct worker *w, int *rd, int *wr, size_t size);
ssize_t fill(struct worker *w, size_t len);
bool drain(struct worker *w, size_t len);
ssize_t reader_splice(struct worker *w, int in, int out, size_t len,
		      const char *what);

/*
 * The benchmarks, zcbench.c's table: each measures its rows for every
 * thread count of @threads (@n of them), and may print lines of its own
 * in the header first.
 */
void bench_splice(const int *threads, int n);
void bench_tcp(const int *threads, int n);
void header_tcp(void);
void bench_read(const int *threads, int n);
void bench_uring(const int *threads, int n);
void header_uring(void);
void bench_mmap(const int *threads, int n);
void header_mmap(void);

#endif /* ZCBENCH_H */
