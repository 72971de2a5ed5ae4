// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's fault injection for zcdev's selftests (fault_inject.h).
 *
 * Only allocations made on a stack that passes through module code may
 * fail (the fault attributes' stack-trace filter): not the module
 * loader's own, hundreds of pages for a module's image, nor those of the
 * system call around zcdev.  On x86_64 the modules lie above the
 * kernel's image, from a 512 MiB boundary on (Documentation/arch/x86/
 * x86_64/mm.rst): the filter takes everything above the one that follows
 * the kernel's last symbol.  Of the page allocator's failures, those of
 * MIN_ORDER and up: zcdev's folios, not the slabs' (at most order 3) or
 * the stack depot's, which come and go with what earlier tests left, so
 * that a call's count of allocations would change from one to the next.
 *
 * It needs CONFIG_FAULT_INJECTION, FAILSLAB, FAIL_PAGE_ALLOC,
 * FAULT_INJECTION_DEBUG_FS and FAULT_INJECTION_STACKTRACE_FILTER, which
 * the lane's debug kernel has and Debian's kernels do not.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>

#include "fault_inject.h"
#include "zcdev_util.h"

#define DEBUGFS		"/sys/kernel/debug"
#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define AREA_ALIGN	(512 * MIB)
#define MIN_ORDER	"4"	/* pages that may fail: 64 KiB and up */

/* The first AREA_ALIGN boundary above the kernel's own symbols, or 0 */
static unsigned long module_area(void)
{
	unsigned long a, top = 0;
	char line[512], *end;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		a = strtoul(line, &end, 16);
		if (end != line && !strchr(line, '[') && a > top)
			top = a;
	}
	fclose(f);
	return top ? (top | (AREA_ALIGN - 1)) + 1 : 0;
}

static const char *attr_path(const char *dir, const char *attr)
{
	static char path[128];

	snprintf(path, sizeof(path), DEBUGFS "/%s/%s", dir, attr);
	return path;
}

int inject_set(struct inject *in, const char *dir, const char *attr,
	       const char *val)
{
	struct inject_saved *s = NULL;
	unsigned int i;
	int err;

	for (i = 0; i < in->n && !s; i++)
		if (!strcmp(in->saved[i].dir, dir) &&
		    !strcmp(in->saved[i].attr, attr))
			s = &in->saved[i];
	if (!s) {
		s = &in->saved[in->n];
		err = in->n < ARRAY_SIZE(in->saved) ?
		      file_read(attr_path(dir, attr), s->old, sizeof(s->old)) : ENOSPC;
		if (err)
			return err;
		s->dir = dir;
		s->attr = attr;
		in->n++;
	}
	return file_write(attr_path(dir, attr), val, strlen(val));
}

/*
 * Every failure asked for through FAIL_NTH, of allocations that may sleep
 * too, on a stack through module code, with no report in the kernel log.
 */
const char *inject_on(struct inject *in, int *err)
{
	static const char *const dirs[] = { "failslab", "fail_page_alloc" };
	char area[32];
	unsigned long start;
	unsigned int d, a;
	const char *attrs[][2] = {
		{ "ignore-gfp-wait", "N" }, { "verbose", "0" },
		{ "stacktrace-depth", "32" }, { "require-start", area },
		{ "require-end", "0xffffffffffffffff" },
	};

	memset(in, 0, sizeof(*in));
	*err = 0;
	if (access(FAIL_NTH, F_OK))
		return "no " FAIL_NTH " (CONFIG_FAULT_INJECTION)";
	if (access(DEBUGFS "/failslab", F_OK)) {
		in->mounted = !mount("debugfs", DEBUGFS, "debugfs", 0, NULL);
		if (access(DEBUGFS "/failslab", F_OK))
			return "no failslab in debugfs (FAILSLAB, FAULT_INJECTION_DEBUG_FS)";
	}
	if (access(DEBUGFS "/fail_page_alloc", F_OK))
		return "no fail_page_alloc in debugfs (CONFIG_FAIL_PAGE_ALLOC)";
	if (access(DEBUGFS "/failslab/require-start", F_OK))
		return "no stack-trace filter (CONFIG_FAULT_INJECTION_STACKTRACE_FILTER)";
	if (!kernel_is_x86_64())
		return "the module area's place is known here for x86_64 only";
	start = module_area();
	*err = EINVAL;
	if (!start)
		return "no address of the kernel's in /proc/kallsyms";
	snprintf(area, sizeof(area), "0x%lx", start);
	for (d = 0; d < ARRAY_SIZE(dirs); d++)
		for (a = 0; a < ARRAY_SIZE(attrs); a++) {
			*err = inject_set(in, dirs[d], attrs[a][0], attrs[a][1]);
			if (*err)
				return attrs[a][0];
		}
	*err = inject_set(in, "fail_page_alloc", "min-order", MIN_ORDER);
	return *err ? "fail_page_alloc/min-order" : NULL;
}

void inject_off(struct inject *in)
{
	struct inject_saved *s;

	while (in->n) {
		s = &in->saved[--in->n];
		file_write(attr_path(s->dir, s->attr), s->old, strlen(s->old));
	}
	if (in->mounted)
		umount(DEBUGFS);
	in->mounted = false;
}

int inject_arm(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	return file_write(FAIL_NTH, buf, len);
}

/* "0" is left when the armed failure happened */
bool inject_disarm(void)
{
	char buf[16];
	bool hit = !file_read(FAIL_NTH, buf, sizeof(buf)) && !strcmp(buf, "0");

	return !file_write(FAIL_NTH, "0", 1) && hit;
}
