/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The mainline API on older kernels.  zcdev is written against the newest
 * kernel; what an older one lacks is supplied here, decided by the probes
 * of compat/probe.sh, so that no other file needs a version check.
 */
#ifndef ZCDEV_COMPAT_H
#define ZCDEV_COMPAT_H

#include <linux/device.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/shmem_fs.h>
#include <linux/uio.h>
#include "zcdev_probes.h"

#ifdef ZC_UNSUPPORTED_KERNEL
#error "zcdev supports Linux 6.1 and later"
#endif

/* The device a class's ->devnode() takes: before 6.2, not const. */
#ifdef ZC_HAVE_CONST_DEVNODE
#define zc_devnode_device	const struct device
#else
#define zc_devnode_device	struct device
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

/* The VMA flags shmem_file_setup() takes: vma_flags_t from 7.0 on. */
#ifdef ZC_SHMEM_SETUP_VMA_FLAGS
#define zc_shmem_flags(vma)	((vma)->flags)
#else
#define zc_shmem_flags(vma)	((vma)->vm_flags)
#endif

#ifndef ZC_HAVE_SHMEM_ZERO_SETUP
#ifndef ZC_HAVE_SHMEM_KERNEL_FILE_SETUP
#define shmem_kernel_file_setup	shmem_file_setup
#endif

/*
 * Where shmem_zero_setup() is not exported (6.12, 7.3): what it does, a
 * kernel-internal shmem file (S_PRIVATE, so no LSM checks: see its
 * comment in mm/shmem.c) behind the shared mapping.  Its vm_ops are not
 * exported either: shmem's own mmap() sets them.
 */
static inline int zc_shmem_zero_setup(struct vm_area_struct *vma)
{
	struct file *shm;

	shm = shmem_kernel_file_setup("dev/zero", vma->vm_end - vma->vm_start,
				      zc_shmem_flags(vma));
	if (IS_ERR(shm))
		return PTR_ERR(shm);
	vma_set_file(vma, shm);
	fput(shm);
	return vfs_mmap(shm, vma);
}

#define shmem_zero_setup	zc_shmem_zero_setup
#endif

#endif /* ZCDEV_COMPAT_H */
