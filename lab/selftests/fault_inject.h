/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's fault injection, for the selftests that fail zcdev's
 * allocations (zcdev_inject, zcdev_worn): failslab and fail_page_alloc
 * set up so that only allocations made on a stack through module code
 * may fail, and /proc/thread-self/fail-nth to fail the nth of those.
 */
#ifndef FAULT_INJECT_H
#define FAULT_INJECT_H

#include <stdbool.h>

/* The fault attributes written, with what they held, put back at the end */
struct inject_saved {
	const char *dir;
	const char *attr;
	char old[32];
};

struct inject {
	bool mounted;		/* debugfs, by inject_on() */
	unsigned int n;
	struct inject_saved saved[16];
};

/*
 * Fault injection set up for zcdev alone: NULL; else what the kernel
 * lacks (*err 0: the test skips), or what failed (*err: its errno).
 */
const char *inject_on(struct inject *in, int *err);
/* A fault attribute written, its old value kept: 0, or the errno */
int inject_set(struct inject *in, const char *dir, const char *attr,
	       const char *val);
/* Every attribute put back, in the reverse order; debugfs unmounted */
void inject_off(struct inject *in);

/* The nth allocation that may fail, fails: from now on in this thread */
int inject_arm(unsigned int n);
/* Disarmed: whether the armed failure happened */
bool inject_disarm(void);

#endif /* FAULT_INJECT_H */
