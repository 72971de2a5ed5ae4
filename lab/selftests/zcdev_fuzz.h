/* SPDX-License-Identifier: GPL-2.0 */
/*
 * zcdev_fuzz: what its files share (zcdev_fuzz.c says what it does).
 *
 *   zcdev_fuzz.c        the run: sequences, the module thread, main
 *   zcdev_fuzz_check.c  the checks: the run as they see it (fzc),
 *                       logs and violations, the slots, the invariants
 *                       after every step, user buffers
 *   zcdev_fuzz_ops.c    operations on devices and pipes
 *   zcdev_fuzz_files.c  operations on mappings and files, and fork
 *   pipe_model.c        what a pipe holds, byte for byte
 */
#ifndef ZCDEV_FUZZ_H
#define ZCDEV_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "pipe_model.h"
#include "zcdev_util.h"

#define NDEV		4	/* device slots of a worker */
#define NPIPE		3	/* pipe slots */
#define NMAP		2	/* mapping slots */
#define MAP_PAGES	8	/* the most pages a mapping has */
#define BUF_MAX		(256 * KIB)	/* the most one read or write moves */
#define SPLICE_MAX	(2 * MIB)	/* the most a splice asks for */
#define PAT_LEN		(1 * MIB)	/* the pattern that writes come from */
#define SRC_MAX		(256 * KIB)	/* the tmpfs file spliced from */
#define DST_MAX		(512 * KIB)	/* the tmpfs file written to */
#define MARGIN		64	/* bytes around a read that must keep FILL */
#define SEQ_OPS		40	/* random operations in a sequence, at most */
#define LOG_LINES	96
#define LOG_LEN		224
#define QUIESCE_MS	3000	/* how often all workers stop for an unload */
#define UNLOAD_MS	5000	/* how long an idle zcdev may stay busy */
#define PROGRESS_MS	5000
#define HANG_MS		60000	/* how long past the end a thread may take */

/*
 * The kernel's __printf(), for user space: the format strings below are
 * checked by the compiler.  (GCC's other spelling of the keyword keeps
 * checkpatch from asking for __printf() in its own definition.)
 */
#ifndef __printf
#define __printf(a, b)	__attribute((format(printf, a, b)))
#endif

enum dev_kind { ZERO, FULL };

/* What is fuzzed: zcdev's devices, or others given with -d */
extern const char * const dev_name[2];

struct dev_slot {
	int fd;			/* -1: empty */
	int kind;
	int acc;		/* O_RDONLY, O_WRONLY or O_RDWR */
	bool nonblock;
};

struct pipe_slot {
	int rfd, wfd;		/* -1: empty; both ends open or neither */
	size_t size;		/* F_GETPIPE_SZ */
	struct pipe_model m;
};

struct map_slot {
	unsigned char *addr;	/* NULL: empty */
	size_t pages;
	bool shared;
	/* what each page holds: 0 zeros, else that byte all over */
	unsigned char tag[MAP_PAGES];
	/* a pipe may reference the page (vmsplice): never write it */
	bool pinned[MAP_PAGES];
};

enum op {
	OP_OPEN, OP_DUP, OP_CLOSE_DEV, OP_PIPE, OP_CLOSE_PIPE, OP_PIPE_SZ,
	OP_SPLICE_DP, OP_SPLICE_PD, OP_SPLICE_PP, OP_TEE, OP_VMSPLICE_IN,
	OP_VMSPLICE_OUT, OP_READ_DEV, OP_READ_PIPE, OP_WRITE_DEV,
	OP_WRITE_PIPE, OP_MMAP, OP_TOUCH, OP_MUNMAP, OP_LSEEK, OP_FIONREAD,
	OP_SENDFILE, OP_SPLICE_FP, OP_SPLICE_PF, OP_FILE_IO, OP_FORK,
	OP_ZEROCHECK, OP_NR
};

/*
 * The random draws of one operation, the same four whatever it is, so
 * that the draws never depend on a result: by convention, which slots it
 * works on, a length, how (flags, offsets, methods), and one more for the
 * few that need it.
 */
struct draws {
	unsigned long long slots, len, how, more;
};

/* What a child leaves for its parent to print, in a shared page */
struct child_report {
	long len, ret, bad;	/* wanted, returned, first non-zero byte or -1 */
	int err, byte;
};

/* How reads are made */
enum rmeth { RM_READ, RM_READV, RM_PREADV2, RM_NOWAIT, RM_PREAD, RM_PREADV2_OFF,
	     RM_NR };
extern const char * const rm_name[RM_NR];

/* How writes are made */
enum wmeth { WM_WRITE, WM_WRITEV, WM_PWRITE, WM_PWRITEV2, WM_NR };
extern const char * const wm_name[WM_NR];

enum child_fail { CF_OK, CF_READ, CF_SPLICE, CF_PIPE_READ, CF_WRITE,
		  CF_DRAIN, CF_OPEN, CF_FRESH_SPLICE, CF_FRESH_READ, CF_NR };

struct worker {
	unsigned int id;
	pthread_t thread;
	unsigned long long rng;		/* the current sequence's PRNG */
	unsigned long long seq;		/* its number */
	bool violated;			/* in the current sequence */
	unsigned int nlog, nlog_lost;
	char log[LOG_LINES][LOG_LEN];	/* the current sequence */
	struct dev_slot dev[NDEV];
	struct pipe_slot pipe[NPIPE];
	struct map_slot map[NMAP];
	/*
	 * Two tmpfs files: src is never written after its set-up, for pipes
	 * may hold its pages; dst is written, never spliced from.
	 */
	int src_fd, dst_fd;
	size_t src_size, dst_size;
	unsigned char *src, *dst;	/* what they hold */
	unsigned char *area;		/* between two PROT_NONE pages */
	unsigned char *area_end;
	unsigned char *scratch;		/* BUF_MAX bytes of the model */
	struct child_report *child;	/* shared with a child of fork() */
	unsigned long long count[OP_NR];
	unsigned long long seqs, refused;
	int done;			/* the thread has finished */
};

/*
 * The run as the checks and the operations see it, which the checks
 * (zcdev_fuzz_check.c) hold: zcdev_fuzz.c fills it from the options and
 * what it finds before any worker starts, and it does not change after.
 * The checks' own state (the stop, the violations, the module's windows,
 * the output's lock) is theirs, behind functions.
 */
struct fz_conf {
	unsigned long long seed;
	unsigned int seconds;
	unsigned int threads;
	bool replay;			/* -r: one sequence, no deadline */
	bool mod_ops;			/* the module thread unloads and reloads */
	const char *other_path[2];	/* -d: devices fuzzed instead of zcdev's */
	size_t pg;
	size_t buf_size;		/* the most a buffer of a device carries */
	bool large_bufs;		/* zcdev's: more than a page */
	const unsigned char *pat;	/* PAT_LEN bytes, none zero, read-only */
	const unsigned char *zp;	/* a page only ever read: the zero page */
	long long deadline;		/* now_ms() when the run ends */
};

extern struct fz_conf fzc;
unsigned int fz_violations(void);
void fz_out_lock(void);
void fz_out_unlock(void);

__printf(3, 4) void log_add(struct worker *w, bool new_line, const char *fmt, ...);
#define LOG(w, ...)	log_add(w, true, __VA_ARGS__)
#define LOG_MORE(w, ...)	log_add(w, false, __VA_ARGS__)
__printf(2, 3) bool fz_fail(struct worker *w, const char *fmt, ...);
const char *dev_path(int kind);
/* zcdev_fuzz_check.c: the checks */
unsigned long long fz_mix(unsigned long long z);
unsigned long long fz_next(unsigned long long *s);
bool stopped(void);
bool stopping(void);
void fz_stop(void);
size_t rlen(unsigned long long r, size_t max);
size_t rlen_nz(unsigned long long r, size_t max);
void log_ret(struct worker *w, long r, int err);
void print_log(struct worker *w);
bool fz_fail(struct worker *w, const char *fmt, ...);
bool want_err(struct worker *w, const char *what, long r, int err, int want);
unsigned int win_now(void);
void win_open(void);
void win_close(void);
bool refusal_ok(unsigned int gen, int err);
const char *acc_name(int acc);
bool dev_reads(const struct dev_slot *d);
bool dev_writes(const struct dev_slot *d);
const char *dname(struct worker *w, unsigned int i, char *buf);
int pick_dev(struct worker *w, unsigned long long r);
int pick_pipe(struct worker *w, unsigned long long r);
int pick_map(struct worker *w, unsigned long long r);
bool dev_close(struct worker *w, unsigned int i);
void pipe_close(struct worker *w, unsigned int i);
size_t pipe_size(struct pipe_slot *p);
bool map_check(struct worker *w, unsigned int i);
void map_drop(struct worker *w, unsigned int i);
bool fresh_zero_check(struct worker *w);
bool step_check(struct worker *w);
bool pipe_consumed(struct worker *w, unsigned int i, const unsigned char *got,
		   size_t n, const char *how);
bool pipe_drain(struct worker *w, unsigned int i);
unsigned char *dst_prepare(struct worker *w, size_t valid);
unsigned char *dst_draw(struct worker *w, unsigned long long r, size_t len,
			size_t *valid);
bool nothing_to_do(struct worker *w, bool lacking, const char *why);
bool zero_len(struct worker *w, const char *what, size_t len, long r);
bool dst_margins(struct worker *w, const unsigned char *p, size_t n,
		 size_t valid, const char *what);
int split_iov(struct iovec *iov, unsigned char *p, size_t n,
	      unsigned long long r);
bool rm_nowait(enum rmeth m, unsigned long long r);
ssize_t do_read(int fd, enum rmeth m, unsigned char *p, size_t n,
		unsigned long long r, off_t off);
ssize_t do_write(int fd, enum wmeth m, const unsigned char *p, size_t n,
		 unsigned long long r, off_t off);
const unsigned char *pat_at(unsigned long long r, size_t n);

/* zcdev_fuzz_ops.c: devices and pipes */
void op_open(struct worker *w, const struct draws *dr);
void op_dup(struct worker *w, const struct draws *dr);
void op_close_dev(struct worker *w, const struct draws *dr);
void op_pipe(struct worker *w, const struct draws *dr);
void op_close_pipe(struct worker *w, const struct draws *dr);
void op_pipe_sz(struct worker *w, const struct draws *dr);
unsigned int more_flags(unsigned long long r);
size_t pipe_room(const struct pipe_slot *p);
bool dev_to_pipe_count(struct worker *w, const char *what, long r, int err,
		       size_t len, unsigned int j);
void op_splice_dp(struct worker *w, const struct draws *dr);
void op_splice_pd(struct worker *w, const struct draws *dr);
void op_vmsplice_in(struct worker *w, const struct draws *dr);
void op_vmsplice_out(struct worker *w, const struct draws *dr);
void op_read_dev(struct worker *w, const struct draws *dr);
void op_read_pipe(struct worker *w, const struct draws *dr);
void op_write_dev(struct worker *w, const struct draws *dr);
void op_write_pipe(struct worker *w, const struct draws *dr);
void op_splice_pp(struct worker *w, const struct draws *dr);
void op_tee(struct worker *w, const struct draws *dr);

/* zcdev_fuzz_files.c: mappings, files, fork */
void op_mmap(struct worker *w, const struct draws *dr);
void op_touch(struct worker *w, const struct draws *dr);
void op_munmap(struct worker *w, const struct draws *dr);
void op_lseek(struct worker *w, const struct draws *dr);
void op_fionread(struct worker *w, const struct draws *dr);
void op_sendfile(struct worker *w, const struct draws *dr);
void op_splice_fp(struct worker *w, const struct draws *dr);
void op_splice_pf(struct worker *w, const struct draws *dr);
void op_file_io(struct worker *w, const struct draws *dr);
void op_fork(struct worker *w, const struct draws *dr);

#endif /* ZCDEV_FUZZ_H */
