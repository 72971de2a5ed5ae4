/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The mainline API on older kernels.  zcdev is written against the newest
 * kernel; what an older one lacks is supplied here, decided by the probes
 * of compat/probe.sh, so that no other file needs a version check.
 */
#ifndef ZCDEV_COMPAT_H
#define ZCDEV_COMPAT_H

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/shmem_fs.h>
#include <linux/uio.h>
#include "zcdev_probes.h"

#ifdef ZC_UNSUPPORTED_KERNEL
#error "zcdev supports Linux 6.1 and later"
#endif

#ifndef ZC_HAVE_ITER_IOV
/* Before 6.4 the current iovec was iter->iov. */
static inline const struct iovec *iter_iov(const struct iov_iter *iter)
{
	return iter->iov;
}
#endif

#ifndef ZC_HAVE_VFS_MMAP
/* Before 6.17 vfs_mmap() was call_mmap(). */
static inline int vfs_mmap(struct file *file, struct vm_area_struct *vma)
{
	return call_mmap(file, vma);
}
#endif

/*
 * The file behind a shared mapping, made as shmem_zero_setup() does: a
 * kernel-internal shmem file (no LSM checks) where that is exported.
 */
#ifndef ZC_HAVE_SHMEM_KERNEL_FILE_SETUP
#define shmem_kernel_file_setup	shmem_file_setup
#endif

/* The VMA flags shmem_file_setup() takes: vma_flags_t from 7.0 on. */
#ifdef ZC_SHMEM_SETUP_VMA_FLAGS
#define zc_shmem_flags(vma)	((vma)->flags)
#else
#define zc_shmem_flags(vma)	((vma)->vm_flags)
#endif

#endif /* ZCDEV_COMPAT_H */
