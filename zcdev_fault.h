/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault injection: faults planted on purpose, so that the tests that
 * should see them are shown to.  A build with ZCDEV_FAULT=KIND (a
 * kbuild variable) has one; only the lane's gates make such builds, and
 * in any other build every function here is empty.
 *
 *   warn   WARN_ON_ONCE() on the read path
 *   uaf    a read of freed memory on the read path, once
 *   leak   an allocation leaked on the read path, once
 *   dirty  the first byte of every 8th read() left at 1: a data bug
 *          that only a check of the bytes sees
 *   refs   every zero folio starts with its page count 256 short of
 *          INT_MAX and a budget of 256 references: the budget alone
 *          keeps the count from overflowing, and must
 *   refs-unguarded  the same count, and no budget: it overflows
 *   shared every buffer also holds a reference on the folio, as
 *          zcdev's first design had it: a count that all CPUs write
 *   init   the second device fails to register: a failed load
 *   init-leak  the same, and the failed load leaves its folio behind
 */
#ifndef ZCDEV_FAULT_H
#define ZCDEV_FAULT_H

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/limits.h>
#include <linux/mm.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#if defined(ZCDEV_FAULT_DIRTY)
static noinline __maybe_unused void
zc_fault_dirty_read(char __user *buf, size_t cleared)
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
#elif defined(ZCDEV_FAULT_UAF) || defined(ZCDEV_FAULT_LEAK)
/* 64 bytes of kmalloc the first time, NULL after */
static noinline __maybe_unused char *zc_fault_alloc_once(void)
{
	static bool done;

	if (done)
		return NULL;
	done = true;
	return kmalloc(64, GFP_KERNEL);
}

#if defined(ZCDEV_FAULT_UAF)
static noinline __maybe_unused void zc_fault_inject(void)
{
	char *p = zc_fault_alloc_once();

	if (!p)
		return;
	kfree(p);
	pr_info("planted use-after-free reads %d\n", READ_ONCE(p[8]));
}
#else
static noinline __maybe_unused void zc_fault_inject(void)
{
	char *p = zc_fault_alloc_once();

	OPTIMIZER_HIDE_VAR(p);
	if (p)
		memset(p, 0x5a, 64);
}
#endif
#else
static inline void zc_fault_inject(void)
{
}
#endif

#if defined(ZCDEV_FAULT_REFS) || defined(ZCDEV_FAULT_REFS_UNGUARDED)
#define ZC_FAULT_REFS_LEFT	256
#define ZC_FAULT_REFS_RAISE	(INT_MAX - 1 - ZC_FAULT_REFS_LEFT)

/* A new zero's folio: its count raised, and the budget it gets. */
static inline long zc_fault_refs_take(struct folio *folio, long budget)
{
	folio_ref_add(folio, ZC_FAULT_REFS_RAISE);
	return ZC_FAULT_REFS_LEFT;
}

static inline void zc_fault_refs_give(struct folio *folio)
{
	folio_ref_sub(folio, ZC_FAULT_REFS_RAISE);
}
#else
static inline long zc_fault_refs_take(struct folio *folio, long budget)
{
	return budget;
}

static inline void zc_fault_refs_give(struct folio *folio)
{
}
#endif

static inline bool zc_fault_refs_unguarded(void)
{
#ifdef ZCDEV_FAULT_REFS_UNGUARDED
	return true;
#else
	return false;
#endif
}

#if defined(ZCDEV_FAULT_SHARED)
static inline void zc_fault_shared_get(struct page *page, unsigned int n)
{
	folio_ref_add(page_folio(page), n);
}

static inline void zc_fault_shared_put(struct page *page)
{
	folio_put(page_folio(page));
}
#else
static inline void zc_fault_shared_get(struct page *page, unsigned int n)
{
}

static inline void zc_fault_shared_put(struct page *page)
{
}
#endif

/* Whether registering device @i fails; whether the failure leaks. */
#if defined(ZCDEV_FAULT_INIT) || defined(ZCDEV_FAULT_INIT_LEAK)
static inline int zc_fault_init(unsigned int i)
{
	return i == 1 ? -ENOMEM : 0;
}
#else
static inline int zc_fault_init(unsigned int i)
{
	return 0;
}
#endif

static inline bool zc_fault_init_leaks(void)
{
#ifdef ZCDEV_FAULT_INIT_LEAK
	return true;
#else
	return false;
#endif
}

#endif /* ZCDEV_FAULT_H */
