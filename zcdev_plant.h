/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Faults planted on purpose, to prove that the test lane sees them.  A
 * build with ZCDEV_PLANT=warn, uaf or leak (kbuild variable) warns, reads
 * freed memory, or leaks an allocation on the read path, once.  Only the
 * lane's gate tests make such builds; in any other build zc_plant() is
 * empty.
 */
#ifndef ZCDEV_PLANT_H
#define ZCDEV_PLANT_H

#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/printk.h>
#include <linux/slab.h>

#if defined(ZCDEV_PLANT_WARN)
static inline void zc_plant(void)
{
	WARN_ON_ONCE(1);
}
#elif defined(ZCDEV_PLANT_UAF)
static noinline void zc_plant(void)
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
#elif defined(ZCDEV_PLANT_LEAK)
static noinline void zc_plant(void)
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
static inline void zc_plant(void)
{
}
#endif

#endif /* ZCDEV_PLANT_H */
