// SPDX-License-Identifier: GPL-2.0
/*
 * zcbench, mmap-touch: a private mapping of DEV, of REF and, as the peer,
 * an anonymous one, MADV_HUGEPAGE, a byte written per 4 KiB page: the
 * time, the page faults and the mapping's AnonHugePages.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "zcbench.h"

/* AnonHugePages of the mapping that starts at @addr, from smaps; -1 if none. */
static long long smaps_anon_huge(const void *addr)
{
	char line[512], want[32];
	FILE *f = fopen("/proc/self/smaps", "r");
	long long kb = -1;
	bool in = false;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%lx-", (unsigned long)addr);
	while (fgets(line, sizeof(line), f)) {
		if (!in) {
			in = !strncmp(line, want, strlen(want));
			continue;
		}
		if (sscanf(line, "AnonHugePages: %lld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

static long long faults_now(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	return ru.ru_minflt + ru.ru_majflt;
}

/*
 * The zero check of mmap-touch: a fresh private mapping of the device
 * reads zeros.  A mapping of its own, so that the read faults it takes
 * are not counted against the timed one.
 */
static bool map_check(int fd, struct result *r)
{
	void *p = mmap(NULL, MAP_CHECK_LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE, fd, 0);
	long off;

	if (p == MAP_FAILED) {
		set_status(&r->status, r->msg, ST_ERROR, "mmap %zu: %s",
			   (size_t)MAP_CHECK_LEN, strerror(errno));
		return false;
	}
	off = not_byte(p, MAP_CHECK_LEN, 0);
	if (off >= 0)
		set_status(&r->status, r->msg, ST_ERROR,
			   "data check of a fresh mapping: byte %ld is 0x%02x, not 0",
			   off, ((unsigned char *)p)[off]);
	munmap(p, MAP_CHECK_LEN);
	return off < 0;
}

/*
 * mmap-touch: map opt_map bytes MAP_PRIVATE of @path (anonymous memory
 * when NULL), ask for huge pages, write one byte per 4 KiB page, and
 * count the time, the faults and the VMA's AnonHugePages.
 */
static void map_touch(const char *path, const char *label, struct result *r)
{
	int fd = -1, flags = MAP_PRIVATE;
	char *p;
	size_t len = zcb.map, off = 0;
	unsigned long iter = 0;
	long long f0;
	double t0;

	memset(r, 0, sizeof(*r));
	r->test = "mmap-touch";
	r->label = label;
	r->size = len;
	r->threads = 1;
	if (path) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			set_status(&r->status, r->msg,
				   absent_errno(errno) ? ST_ABSENT : ST_ERROR,
				   "open %s: %s", path, strerror(errno));
			return;
		}
		if (!map_check(fd, r))
			goto out;
	} else {
		flags |= MAP_ANONYMOUS;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (p == MAP_FAILED) {
		set_status(&r->status, r->msg, ST_ERROR, "mmap %zu: %s", len,
			   strerror(errno));
		goto out;
	}
	r->aligned = (unsigned long)p % HUGE_ALIGN == 0;
	/* EINVAL: a kernel without THP; the row says AnonHugePages 0 */
	madvise(p, len, MADV_HUGEPAGE);

	alarm((unsigned int)zcb.seconds + WATCHDOG_SLACK);
	f0 = faults_now();
	t0 = start_clock();
	while (off < len) {
		p[off] = 1;
		off += TOUCH_STRIDE;
		if (time_up(++iter))
			break;
	}
	r->seconds = now_s() - t0;
	r->faults = faults_now() - f0;
	alarm(0);
	r->bytes = off < len ? off : len;
	r->anon_huge_kb = smaps_anon_huge(p);
	r->mapped = true;

	/* the bytes beside each one written are still zero */
	for (off = 0; off < r->bytes; off += TOUCH_STRIDE) {
		long z = not_byte(p + off + 1, 63, 0);

		if (z >= 0) {
			set_status(&r->status, r->msg, ST_ERROR,
				   "data check after the touch: byte %zu is not 0",
				   off + 1 + z);
			break;
		}
	}
	munmap(p, len);
out:
	if (fd >= 0)
		close(fd);
}

struct touch {
	const char *path, *label;
};

static void touch_once(const void *arg, struct result *r)
{
	const struct touch *t = arg;

	map_touch(t->path, t->label, r);
}

static const struct result *map_meas(const char *path, const char *label)
{
	struct touch t = { path, label };

	return best_of(touch_once, &t);
}

/*
 * mmap-touch of DEV, REF and an anonymous mapping (the peer), after an
 * untimed touch of an anonymous mapping: the first to touch that much
 * memory pays for more than its own faults (a VM's host maps the guest's
 * memory on first use), and it must not be DEV.
 */
void bench_mmap(const int *threads, int n)
{
	const struct result *d, *ref, *p;
	struct result warm;

	(void)threads;		/* one thread, one mapping */
	(void)n;
	map_touch(NULL, "warm-up", &warm);
	d = map_meas(zcb.dev_path, zcb.dev_label);
	ref = map_meas(zcb.ref_path, zcb.ref_label);
	p = map_meas(NULL, "anon");
	print_rows(d, ref, p, NULL, &p, 1);
}

/* The system's THP setting, the bracketed word of "enabled". */
static void thp_mode(char *buf, size_t len)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	char line[128], *a, *b;

	snprintf(buf, len, "none");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f)) {
		a = strchr(line, '[');
		b = a ? strchr(a, ']') : NULL;
		if (a && b) {
			*b = '\0';
			snprintf(buf, len, "%s", a + 1);
		}
	}
	fclose(f);
}

void header_mmap(void)
{
	char thp[32];

	thp_mode(thp, sizeof(thp));
	printf("mmap:    %llu bytes MAP_PRIVATE, MADV_HUGEPAGE, ", zcb.map);
	printf("a byte written per %lu; THP %s\n", TOUCH_STRIDE, thp);
}
