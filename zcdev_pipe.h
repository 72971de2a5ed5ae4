/* SPDX-License-Identifier: GPL-2.0 */
#ifndef ZCDEV_PIPE_H
#define ZCDEV_PIPE_H

#include <linux/fs.h>
#include <linux/pipe_fs_i.h>

int zc_pipe_init(void);
void zc_pipe_exit(void);

ssize_t zc_splice_read(struct file *in, loff_t *ppos,
		       struct pipe_inode_info *pipe, size_t len,
		       unsigned int flags);
ssize_t zc_splice_write_zero(struct pipe_inode_info *pipe, struct file *out,
			     loff_t *ppos, size_t len, unsigned int flags);
ssize_t zc_splice_write_full(struct pipe_inode_info *pipe, struct file *out,
			     loff_t *ppos, size_t len, unsigned int flags);

#endif /* ZCDEV_PIPE_H */
