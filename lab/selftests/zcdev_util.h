/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What zcdev's selftests share, beyond the lab's own helpers (zclab.h):
 * buffers that notice stray writes, pipe helpers, the read methods,
 * module loading and parameters.  Each area of the tests (read, splice,
 * drain, mmap, lifetime, io_uring) is a program of its own, linked with
 * zcdev_util.c and zclab.c, as selftests/mm's are with vm_util.c.
 */
#ifndef ZCDEV_UTIL_H
#define ZCDEV_UTIL_H

#include "zclab.h"

#define FILL		0xa5	/* what buffers hold before a read */
#define PARAM_DIR	"/sys/module/zcdev/parameters/"

/*
 * A guarded buffer: len bytes at offset off into a mapping whose other
 * bytes, a whole page on either side included, hold FILL and must keep it.
 */
struct gbuf {
	unsigned char *map;
	size_t map_len;
	unsigned char *p;
	size_t len;
};

/* The outcome of a system call: what it returned and, if it failed, errno */
struct outcome {
	long ret;
	int err;
};

/* Sends SIGUSR1 to a thread every period_ms until told to stop */
struct pinger {
	pthread_t thread;
	pthread_t target;
	unsigned int period_ms;
	int stop;
};

/* How the read tests read */
enum rd_method { RD_READ, RD_PREAD, RD_READV, RD_PREADV2, RD_NOWAIT, RD_NR };

extern const char * const rd_name[RD_NR];
extern int sigusr1_count;

size_t page_size(void);
size_t max_rw(void);

int gbuf_init(struct gbuf *b, size_t len, size_t off);
void gbuf_refill(struct gbuf *b);
void gbuf_free(struct gbuf *b);
long gbuf_bad(const struct gbuf *b, size_t n);

struct outcome outcome(long ret);
void *hole_addr(void);

long read_zeros(int fd, size_t n);
int pipe_bytes(int fd);
int tmpfs_file(void);
long long fdinfo_pos(int fd);
int splice_read_errno(int fd);
int splice_write_errno(int fd);
bool stock_cannot_splice_read(int fd, bool is_stock);
ssize_t splice_through(int in, int p[2], int out, size_t n,
		       unsigned int flags);
ssize_t sendfile_full(int out, int in, size_t n);
int pipe_max_raise(size_t size, long *old);
void pipe_max_restore(long old);
long pipe_fill(int dev, int p[2], size_t want);
int pipe_read_zeros(int fd, size_t n);

void on_sigusr1(int sig);
void *pinger_main(void *arg);

ssize_t rd(int fd, enum rd_method m, void *p, size_t n);

/* The module: load, unload, parameters */
bool wait_path(const char *path, bool exist, unsigned int ms);
long chrdev_major(const char *name);
long long class_devt(const char *path);
int load_module(const char *ko, const char *params);
/* Small files (sysfs, debugfs, /proc): 0, or the errno */
int file_write(const char *path, const char *val, size_t len);
int file_read(const char *path, char *buf, size_t size);
int param_set(const char *name, const char *val, size_t len);
int param_get(const char *name, char *buf, size_t size);
long splice_buffer_size(bool is_stock);
bool kmsg_says(int kmsg, const char *text);
/* Whether the running kernel is x86-64, whatever this program is built as */
bool kernel_is_x86_64(void);

/* Memory */
long meminfo_kb(const char *field);
int vm_drop_caches(void);

/* A file that splices zero buffers: fd's, or zczero's if a stock fd cannot */
int zero_splicer(int fd, bool is_stock);
/* Whether thread tid of this process sleeps in system call nr within ms */
bool wait_blocked(pid_t tid, long nr, unsigned int ms);

/*
 * ZCDEV_SCALE=N, 1 (the default) to 64: the tests whose strength is a
 * count of calls or a time make 1/N of it: zcdev_guard's calls,
 * zcdev_refs's datagrams, the chunks of zcdev_read's largest read,
 * zcdev_lifetime's churn and its flood's time (not its count), and
 * zcdev_pin's time unless ZCDEV_PIN_SECS gives it.  The
 * lane makes the full counts on the newest stock kernel, fewer on the
 * others (lab/stages/kernels.sh).
 */
unsigned int test_scale(void);
/* n / test_scale(), and no less than min */
unsigned long scaled(unsigned long n, unsigned long min);

/*
 * ZCDEV_REFS=0: the stock devices' variants, the reference, are not run
 * and report a skip, which is never counted.  The lane sets it where
 * another guest of the same kernel runs them (the debug kernel and the
 * kselftest stage, both Linux 7.x like the stock kernel 7).
 */
bool refs_off(void);

#endif /* ZCDEV_UTIL_H */
