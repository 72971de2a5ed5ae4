/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The read path's clearing routine: one `rep stosb` per chunk.
 *
 * On CPUs with ERMS (Enhanced REP MOVSB/STOSB) the string instruction is
 * the fastest way to clear memory of any size above a few cache lines:
 * the microcode picks the store width and avoids read-for-ownership.
 * The kernel's clear_user() uses it only on FSRS CPUs since 6.4 and falls
 * back to an 8-byte store loop elsewhere, which runs at a fifth of the
 * speed on ERMS CPUs without FSRS.
 *
 * The same code builds for user space with -DZC_USERSPACE, so that
 * lab/bench/clearbench measures exactly what the module runs.
 */
#ifndef ZCDEV_CLEAR_H
#define ZCDEV_CLEAR_H

/*
 * ZC_HAVE_STOSB: the rep stosb path exists.  In the kernel that is x86-64
 * proper: UML sets CONFIG_X86_64 too (arch/x86/um/Kconfig) but has no
 * stac/clac and no exception table for user accesses.  In user space it
 * is what the compiler builds for.
 */
#ifdef ZC_USERSPACE
#define __user
#define ZC_STOSB_FIXUP(from, to)
#ifdef __x86_64__
#define ZC_HAVE_STOSB	1
#endif
#elif defined(CONFIG_X86_64) && !defined(CONFIG_UML)
#include <asm/asm.h>
/* A fault stops the string; the fixup resumes after it with %rcx left. */
#define ZC_STOSB_FIXUP(from, to)	_ASM_EXTABLE_UA(from, to)
#define ZC_HAVE_STOSB	1
#endif

#ifdef ZC_HAVE_STOSB
/**
 * zc_stosb() - store @len zero bytes at @dst
 * @dst: where to start
 * @len: how many bytes
 *
 * Return: the number of bytes not cleared: 0, or the rest of the string
 * from the first byte that faulted.
 */
static __always_inline unsigned long zc_stosb(void __user *dst,
					      unsigned long len)
{
	asm volatile("1:	rep stosb\n"
		     "2:\n"
		     ZC_STOSB_FIXUP(1b, 2b)
		     : "+c" (len), "+D" (dst)
		     : "a" (0)
		     : "memory");
	return len;
}
#endif /* ZC_HAVE_STOSB */

#endif /* ZCDEV_CLEAR_H */
