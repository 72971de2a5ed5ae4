/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A model of what a pipe holds, byte for byte, oldest first: runs of
 * bytes that are known, each a piece of a buffer the test keeps (what was
 * written, vmspliced or is in a file), or zeros from the devices.  What
 * enters the pipe is pushed, what leaves it dropped; a read of the pipe
 * must give what the model peeks.  zcdev_fuzz and zcdev_drain check
 * pipes against it.
 */
#ifndef PIPE_MODEL_H
#define PIPE_MODEL_H

#include <stdbool.h>
#include <stddef.h>

/* A run of bytes a pipe holds: base[0..len), or zeros when base is NULL */
struct pipe_run {
	const unsigned char *base;
	size_t len;
};

/* What a pipe holds: run[first .. first + nr), bytes in all */
struct pipe_model {
	struct pipe_run *run;
	size_t first, nr, cap;
	size_t bytes;
};

/* len bytes of base (NULL: zeros) entered the pipe */
void pm_push(struct pipe_model *m, const unsigned char *base, size_t len);
/* The first n bytes, to out */
void pm_peek(const struct pipe_model *m, size_t n, unsigned char *out);
/* The run byte i is in: its base at that byte, NULL for zeros */
const unsigned char *pm_base_at(const struct pipe_model *m, size_t i);
/* Whether byte i is a zero of the devices' */
bool pm_zero_at(const struct pipe_model *m, size_t i);
/* The first n bytes of src entered dst too (tee) */
void pm_copy(const struct pipe_model *src, size_t n, struct pipe_model *dst);
/* The first n bytes, or all there are, left: how many */
size_t pm_drop(struct pipe_model *m, size_t n);
void pm_clear(struct pipe_model *m);
void pm_free(struct pipe_model *m);

#endif /* PIPE_MODEL_H */
