/* SPDX-License-Identifier: GPL-2.0 */
/*
 * zcbench: what its files share.  One file per benchmark, as
 * tools/perf/bench has them, over one engine:
 *
 *   zcbench.c     options, the header, the list of benchmarks (main)
 *   zcb_run.c     the engine: workers, one measurement, rows, the CSV
 *   zcb_splice.c  splice-null, splice-reader, splice-self
 *   zcb_tcp.c     tcp-sendfile, tcp-splice
 *   zcb_read.c    read, uring-qd1, uring-qd32
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

struct meas {
	const char *test;
	const char *label;
	const char *path;	/* source device; NULL for the user-space peers */
	enum kind kind;
	enum sink_kind sink;
	size_t size;		/* pipe size or buffer size */
	unsigned int qd;	/* io_uring queue depth */
	int threads;
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

/* The options (zcbench.c) */
extern const char *dev_path, *ref_path, *patch_path, *null_path;
extern const char *dev_label, *ref_label, *machine_label;
extern const char *noverdict_note;	/* -V */
extern unsigned long long opt_bytes, opt_map;
extern double opt_seconds;
extern int opt_threads, opt_repeat;
extern bool opt_instr;
extern bool do_splice, do_read, do_uring, do_tcp, do_mmap;

/* The engine (zcb_run.c) */
extern FILE *csv;
extern int nerrors;
extern double deadline;
extern char ratio_ref_hdr[64], ratio_peer_hdr[64], ratio_patch_hdr[64];
extern int ratio_w;
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
bool moved(struct worker *w, ssize_t n, const char *what);
bool start_reader(struct worker *w, void *(*fn)(void *), const char *what);
bool time_up(unsigned long iter);
void watchdog(int sig);
double gbps(const struct result *r);
const struct result *find(const char *test, const char *label, size_t size,
			  int threads);
void print_header_row(void);
void print_rows(const struct result *d, const struct result *ref,
		const struct result *peer, const struct result *pat,
		const struct result *more[], unsigned int nmore);
void print_row(const struct result *r, const struct result *ref,
	       const struct result *peer, const struct result *pat);
const struct result *best_of(void (*once)(const void *arg, struct result *r),
			     const void *arg);
const struct result *do_meas(const struct meas *m);
void meas_sources(struct meas *m, const struct result **d,
		  const struct result **ref, const struct result **pat);
const struct result *skip_meas(const struct meas *m, enum status st,
			       const char *msg);

/* The benchmarks: each measures its rows, and sets up and runs a worker */
extern const size_t pipe_sizes[2], read_sizes[4];
ssize_t fill(struct worker *w, size_t len);
bool drain(struct worker *w, size_t len);
ssize_t reader_splice(struct worker *w, int in, int out, size_t len,
		      const char *what);
int open_dev(struct worker *w, const char *path, int flags);
void splice_group(const char *test, enum sink_kind sink, size_t size, int threads);
bool make_pipe(struct worker *w, int *rd, int *wr, size_t size);
void setup_pipe(struct worker *w);
void run_pipe(struct worker *w);
void tcp_group(const char *test, enum kind kind, size_t size, int threads);
void setup_tcp(struct worker *w);
void run_tcp(struct worker *w);
void read_group(const char *test, enum kind kind, unsigned int qd,
		size_t size, int threads);
void probe_uring(void);
extern bool uring_ok;
extern char uring_msg[MSG_LEN];
void setup_read(struct worker *w);
void setup_uring(struct worker *w);
void run_read(struct worker *w);
void run_uring(struct worker *w);
void map_group(void);

#endif /* ZCBENCH_H */
