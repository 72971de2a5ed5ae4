/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault injection: faults planted on purpose, to prove that the test
 * lane sees them.  A
 * build with ZCDEV_FAULT=warn, uaf or leak (kbuild variable) warns, reads
 * freed memory, or leaks an allocation on the read path, once; one with
 * ZCDEV_FAULT=dirty leaves the first byte of every 8th read() at 1, a
 * data bug that only a check of the bytes sees.  Only the lane's gate
 * tests make such builds; in any other build zc_fault_inject() and
 * zc_fault_dirty_read() are empty.
 */
#ifndef ZCDEV_FAULT_H
#define ZCDEV_FAULT_H

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#if defined(ZCDEV_FAULT_DIRTY)
static noinline void zc_fault_dirty_read(char __user *buf, size_t cleared)
{
	static atomic_t reads;

	if (cleared && !(atomic_inc_return(&reads) % 8) && put_user(1, buf))
		pr_info("planted dirty read: the byte did not go\n");
}
#else
static inline void zc_fault_dirty_read(char __user *buf, size_t cleared)
{
}
#endif

#if defined(ZCDEV_FAULT_WARN)
static inline void zc_fault_inject(void)
{
	WARN_ON_ONCE(1);
}
#elif defined(ZCDEV_FAULT_UAF)
static noinline void zc_fault_inject(void)
{
	static bool done;
	char *p;

	if (done)
		return;
	done = true;
	p = kmalloc(64, GFP_KERNEL);
	if (!p)
		return;
	kfree(p);
	pr_info("planted use-after-free reads %d\n", READ_ONCE(p[8]));
}
#elif defined(ZCDEV_FAULT_LEAK)
static noinline void zc_fault_inject(void)
{
	static bool done;
	char *p;

	if (done)
		return;
	done = true;
	p = kmalloc(64, GFP_KERNEL);
	OPTIMIZER_HIDE_VAR(p);
	if (p)
		memset(p, 0x5a, 64);
}
#else
static inline void zc_fault_inject(void)
{
}
#endif

#endif /* ZCDEV_FAULT_H */
