// SPDX-License-Identifier: GPL-2.0
/* zcdev's selftests: the helpers every area shares (zcdev_util.h) */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/utsname.h>

#include "zcdev_util.h"

size_t page_size(void)
{
	static size_t pg;

	if (!pg)
		pg = sysconf(_SC_PAGESIZE);
	return pg;
}

/* The most one read or write moves: MAX_RW_COUNT */
size_t max_rw(void)
{
	return INT_MAX & ~(page_size() - 1);
}

int gbuf_init(struct gbuf *b, size_t len, size_t off)
{
	size_t pg = page_size();

	b->map_len = pg + (off + len + pg - 1) / pg * pg + pg;
	b->map = map_anon(b->map_len);
	if (!b->map)
		return -1;
	b->p = b->map + pg + off;
	b->len = len;
	memset(b->map, FILL, b->map_len);
	return 0;
}

void gbuf_refill(struct gbuf *b)
{
	memset(b->map, FILL, b->map_len);
}

void gbuf_free(struct gbuf *b)
{
	if (b->map)
		munmap(b->map, b->map_len);
	b->map = NULL;
}

/*
 * Check that the first n bytes of the buffer are zero and that every other
 * byte of the mapping still holds FILL: the index into the mapping of the
 * first wrong byte, or -1.
 */
long gbuf_bad(const struct gbuf *b, size_t n)
{
	size_t head = b->p - b->map;
	long i;

	i = not_byte(b->map, head, FILL);
	if (i >= 0)
		return i;
	i = not_byte(b->p, n, 0);
	if (i >= 0)
		return head + i;
	i = not_byte(b->p + n, b->map_len - head - n, FILL);
	if (i >= 0)
		return head + n + i;
	return -1;
}

struct outcome outcome(long ret)
{
	struct outcome o = { .ret = ret, .err = ret < 0 ? errno : 0 };

	return o;
}

/* An address in the canonical user range with nothing mapped at it */
void *hole_addr(void)
{
	void *p = map_anon(4 * page_size());

	if (!p)
		return NULL;
	munmap(p, 4 * page_size());
	return p;
}

/*
 * Read n bytes from fd (a pipe, a socket) and check them: the number of
 * bytes that were not zero, or -1 when fewer than n could be read.
 */
long read_zeros(int fd, size_t n)
{
	size_t chunk, size = 256 * KIB;
	unsigned char *buf;
	long bad = 0, i;

	buf = malloc(size);
	if (!buf)
		return -1;
	while (n) {
		chunk = n < size ? n : size;
		memset(buf, FILL, chunk);
		if (read_full(fd, buf, chunk) != (ssize_t)chunk) {
			bad = -1;
			break;
		}
		i = not_byte(buf, chunk, 0);
		if (i >= 0)
			for (; i < (long)chunk; i++)
				bad += buf[i] != 0;
		n -= chunk;
	}
	free(buf);
	return bad;
}

int pipe_bytes(int fd)
{
	int n = -1;

	if (ioctl(fd, FIONREAD, &n))
		return -1;
	return n;
}

/* A shmem file: a memfd, else an unlinked file in /dev/shm or /tmp */
int tmpfs_file(void)
{
	static const char * const dirs[] = { "/dev/shm", "/tmp" };
	unsigned int i;
	int fd;

	fd = memfd_create("zcdev_test", MFD_CLOEXEC);
	if (fd >= 0)
		return fd;
	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		fd = open(dirs[i], O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

/* The file position /proc reports for fd, or -1 when it cannot tell */
long long fdinfo_pos(int fd)
{
	char path[64], line[256];
	long long pos = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "pos: %lld", &pos) == 1)
			break;
	fclose(f);
	return pos;
}

/* 0 when fd can splice into a pipe, else the errno of the attempt */
int splice_read_errno(int fd)
{
	int p[2], err = 0;

	if (pipe2(p, O_CLOEXEC))
		return errno;
	if (splice(fd, NULL, p[1], NULL, 1, SPLICE_F_NONBLOCK) != 1)
		err = errno ? errno : EIO;
	close(p[0]);
	close(p[1]);
	return err;
}

/* 0 when a pipe can splice into fd, else the errno of the attempt */
int splice_write_errno(int fd)
{
	int p[2], err = 0;

	if (pipe2(p, O_CLOEXEC))
		return errno;
	if (write(p[1], "x", 1) != 1 ||
	    splice(p[0], NULL, fd, NULL, 1, SPLICE_F_NONBLOCK) != 1)
		err = errno ? errno : EIO;
	close(p[0]);
	close(p[1]);
	return err;
}

/*
 * Splice up to n bytes from in to out through the pipe p, looping over
 * short transfers: the number of bytes that reached out, or -1.
 */
ssize_t splice_through(int in, int p[2], int out, size_t n,
		       unsigned int flags)
{
	size_t done = 0;
	ssize_t r, w;

	while (done < n) {
		r = splice(in, NULL, p[1], NULL, n - done, flags);
		if (r <= 0)
			return done ? (ssize_t)done : -1;
		while (r) {
			w = splice(p[0], NULL, out, NULL, r, flags);
			if (w <= 0)
				return -1;
			r -= w;
			done += w;
		}
	}
	return done;
}

ssize_t sendfile_full(int out, int in, size_t n)
{
	size_t done = 0;
	ssize_t r;

	while (done < n) {
		r = sendfile(out, in, NULL, n - done);
		if (r <= 0)
			return done ? (ssize_t)done : -1;
		done += r;
	}
	return done;
}

int sigusr1_count;

void on_sigusr1(int sig)
{
	(void)sig;
	__atomic_fetch_add(&sigusr1_count, 1, __ATOMIC_RELAXED);
}

void *pinger_main(void *arg)
{
	struct pinger *pg = arg;

	while (!__atomic_load_n(&pg->stop, __ATOMIC_ACQUIRE)) {
		sleep_ms(pg->period_ms);
		if (__atomic_load_n(&pg->stop, __ATOMIC_ACQUIRE))
			break;
		pthread_kill(pg->target, SIGUSR1);
	}
	return NULL;
}

const char * const rd_name[RD_NR] = {
	"read", "pread", "readv", "preadv2", "preadv2(RWF_NOWAIT)",
};

/*
 * Read n bytes to p with the given method; the vectored ones split the
 * buffer into two iovecs with an empty one between them.
 */
ssize_t rd(int fd, enum rd_method m, void *p, size_t n)
{
	struct iovec iov[3] = {
		{ p, n / 3 },
		{ NULL, 0 },
		{ (char *)p + n / 3, n - n / 3 },
	};

	switch (m) {
	case RD_READ:
		return read(fd, p, n);
	case RD_PREAD:
		return pread(fd, p, n, 4097);
	case RD_READV:
		return readv(fd, iov, 3);
	case RD_PREADV2:
		return preadv2(fd, iov, 3, -1, 0);
	case RD_NOWAIT:
		return preadv2(fd, iov, 3, 0, RWF_NOWAIT);
	default:
		break;
	}
	errno = EINVAL;
	return -1;
}

/* Only a stock device may lack splice_read (Linux 6.1 has none) */
bool stock_cannot_splice_read(int fd, bool is_stock)
{
	return is_stock && splice_read_errno(fd) == EINVAL;
}

/* Wait up to ms for path to exist (or not): whether it got there */
bool wait_path(const char *path, bool exist, unsigned int ms)
{
	unsigned int t;

	for (t = 0; t <= ms; t += 20) {
		if (!access(path, F_OK) == exist)
			return true;
		sleep_ms(20);
	}
	return false;
}

/* The major of character device region name in /proc/devices, or -1 */
long chrdev_major(const char *name)
{
	char line[128], what[64];
	long major = -1, m;
	bool chr = false;
	FILE *f = fopen("/proc/devices", "re");

	if (!f)
		return -1;
	while (major < 0 && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Character devices:", 18))
			chr = true;
		else if (!strncmp(line, "Block devices:", 14))
			chr = false;
		else if (chr && sscanf(line, "%ld %63s", &m, what) == 2 &&
			 !strcmp(what, name))
			major = m;
	}
	fclose(f);
	return major;
}

/*
 * The device number that /sys/class/zcdev/NAME/dev gives for the node
 * /dev/NAME, as makedev(major, minor), or -1
 */
long long class_devt(const char *path)
{
	const char *name = strrchr(path, '/');
	unsigned int major, minor;
	char sys[256];
	FILE *f;
	int n;

	snprintf(sys, sizeof(sys), "/sys/class/%s/%s/dev", MODNAME,
		 name ? name + 1 : path);
	f = fopen(sys, "re");
	if (!f)
		return -1;
	n = fscanf(f, "%u:%u", &major, &minor);
	fclose(f);
	return n == 2 ? (long long)makedev(major, minor) : -1;
}

/*
 * finit_module(ko, params) and wait for its devices: 0, or an errno.
 * Without params of its own, a test loads zcdev as the lane does:
 * with ZCDEV_PARAMS, when that is set.
 */
int load_module(const char *ko, const char *params)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errno;
	if (!*params && getenv("ZCDEV_PARAMS"))
		params = getenv("ZCDEV_PARAMS");
	if (syscall(SYS_finit_module, fd, params, 0))
		err = errno;
	close(fd);
	if (!err && (!wait_path("/dev/zczero", true, 5000) ||
		     !wait_path("/dev/zcfull", true, 5000)))
		err = ENODEV;
	return err;
}

/* Write len bytes of val to the file at path: 0, or the errno */
int file_write(const char *path, const char *val, size_t len)
{
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (write(fd, val, len) != (ssize_t)len)
		err = errno ? errno : EIO;
	close(fd);
	return err;
}

/*
 * The start of the file at path, up to size - 1 bytes and without the
 * newline: 0, or the errno
 */
int file_read(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Write len bytes of val to parameter name: 0, or the errno */
int param_set(const char *name, const char *val, size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	return file_write(path, val, len);
}

/*
 * The bytes a spliced pipe buffer of the device carries at most: zcdev's
 * splice_buffer, a page for the stock devices (and for a zcdev without
 * the parameter).
 */
long splice_buffer_size(bool is_stock)
{
	char val[32];
	long n;

	if (is_stock || param_get("splice_buffer", val, sizeof(val)))
		return 4096;
	n = strtol(val, NULL, 0);
	return n >= 4096 ? n : 4096;
}

/* Parameter name's value, without its newline: 0, or the errno */
int param_get(const char *name, char *buf, size_t size)
{
	char path[128];

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	return file_read(path, buf, size);
}

/* Whether the kernel log got a line with text since the last call */
bool kmsg_says(int kmsg, const char *text)
{
	char rec[2048];
	bool found = false;
	ssize_t n;

	while ((n = read(kmsg, rec, sizeof(rec) - 1)) > 0 || errno == EPIPE) {
		if (n <= 0)
			continue;	/* overwritten records: go on */
		rec[n] = '\0';
		if (strstr(rec, text))
			found = true;
	}
	return found;
}

bool kernel_is_x86_64(void)
{
	struct utsname u;

	return !uname(&u) && !strcmp(u.machine, "x86_64");
}

/* A field of /proc/meminfo ("Percpu", say) in kB, or -1 */
long meminfo_kb(const char *field)
{
	size_t len = strlen(field);
	char line[256];
	long kb = -1;
	FILE *f;

	f = fopen("/proc/meminfo", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, len) && line[len] == ':' &&
		    sscanf(line + len + 1, "%ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Free the page cache and reclaimable slab objects (root): 0, or errno */
int vm_drop_caches(void)
{
	int fd, err = 0;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (write(fd, "3", 1) != 1)
		err = errno ? errno : EIO;
	close(fd);
	return err;
}

/*
 * A new file description that splices zero buffers into pipes: fd's own
 * file where it can, else /dev/zczero, for a stock device of a kernel
 * whose /dev/zero has no splice_read (6.1).  -1 with errno when neither.
 */
int zero_splicer(int fd, bool is_stock)
{
	if (!stock_cannot_splice_read(fd, is_stock))
		return fcntl(fd, F_DUPFD_CLOEXEC, 0);
	return open("/dev/zczero", O_RDONLY | O_CLOEXEC);
}

/* The state letter of thread tid of this process, or 0 */
static char task_state(pid_t tid)
{
	char path[64], line[512], *p;
	char state = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	/* the command may hold spaces and brackets: go past the last ')' */
	if (fgets(line, sizeof(line), f)) {
		p = strrchr(line, ')');
		if (p && p[1] == ' ')
			state = p[2];
	}
	fclose(f);
	return state;
}

/* The system call thread tid is in: -1 if running, -2 if /proc cannot tell */
static long task_syscall(pid_t tid)
{
	char path[64], line[256], *end;
	long nr = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -2;
	/* "running", or the number and the arguments */
	if (fgets(line, sizeof(line), f)) {
		nr = strtol(line, &end, 10);
		if (end == line)
			nr = -1;
	}
	fclose(f);
	return nr;
}

/*
 * Wait up to ms for thread tid to sleep in system call nr: a test that
 * means to wake a blocked thread must know that it blocked first.  Where
 * /proc has no syscall file, its sleeping state has to do.
 */
bool wait_blocked(pid_t tid, long nr, unsigned int ms)
{
	unsigned int t;
	long now;

	for (t = 0; t <= ms; t += 5) {
		now = task_syscall(tid);
		if (task_state(tid) == 'S' && (now == nr || now == -2))
			return true;
		sleep_ms(5);
	}
	return false;
}

#define PIPE_MAX_SIZE	"/proc/sys/fs/pipe-max-size"

/*
 * Let a pipe grow to size bytes (root): pipe-max-size raised when it is
 * lower, its old value in *old (-1 when it was left alone).  0, or errno.
 */
int pipe_max_raise(size_t size, long *old)
{
	char val[32];
	long cur = -1;
	FILE *f;
	int fd, len, err = 0;

	*old = -1;
	f = fopen(PIPE_MAX_SIZE, "re");
	if (!f)
		return errno;
	if (fscanf(f, "%ld", &cur) != 1)
		err = EIO;
	fclose(f);
	if (err || cur >= (long)size)
		return err;
	fd = open(PIPE_MAX_SIZE, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	len = snprintf(val, sizeof(val), "%zu", size);
	if (write(fd, val, len) != len)
		err = errno ? errno : EIO;
	else
		*old = cur;
	close(fd);
	return err;
}

/* Put back what pipe_max_raise() changed */
void pipe_max_restore(long old)
{
	char val[32];
	int fd, len;

	if (old < 0)
		return;
	fd = open(PIPE_MAX_SIZE, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	len = snprintf(val, sizeof(val), "%ld", old);
	if (write(fd, val, len) != len)
		perror(PIPE_MAX_SIZE);
	close(fd);
}

/*
 * Splice from dev into the non-blocking pipe p until it holds want bytes
 * or is full (each splice capped at its free slots): what it holds, or
 * -1 with errno when the first splice failed.
 */
long pipe_fill(int dev, int p[2], size_t want)
{
	int have = 0;
	ssize_t r;

	while ((size_t)have < want) {
		r = splice(dev, NULL, p[1], NULL, want - have,
			   SPLICE_F_NONBLOCK);
		if (r <= 0) {
			if (!have)
				return -1;
			break;
		}
		have = pipe_bytes(p[0]);
		if (have < 0)
			return -1;
	}
	return have;
}

/*
 * Read n bytes of the non-blocking pipe fd in large reads: 0 when they
 * all came and were zero; else a failed read's errno, EAGAIN when the
 * pipe held fewer, EILSEQ when a byte was not zero.
 */
int pipe_read_zeros(int fd, size_t n)
{
	size_t chunk, size = 256 * KIB;
	unsigned char *buf;
	ssize_t r;
	int err;

	buf = malloc(size);
	err = buf ? 0 : ENOMEM;
	while (n && !err) {
		chunk = n < size ? n : size;
		memset(buf, FILL, chunk);
		r = read(fd, buf, chunk);
		if (r <= 0)
			err = r ? errno : EAGAIN;
		else if (not_byte(buf, r, 0) >= 0)
			err = EILSEQ;
		else
			n -= r;
	}
	free(buf);
	return err;
}

/* ZCDEV_SCALE, 1 to 64 */
unsigned int test_scale(void)
{
	const char *s = getenv("ZCDEV_SCALE");
	long n = s ? strtol(s, NULL, 10) : 1;

	return n < 1 ? 1 : n > 64 ? 64 : n;
}

unsigned long scaled(unsigned long n, unsigned long min)
{
	n /= test_scale();
	return n < min ? min : n;
}

/* ZCDEV_REFS=0 */
bool refs_off(void)
{
	const char *s = getenv("ZCDEV_REFS");

	return s && !strcmp(s, "0");
}
