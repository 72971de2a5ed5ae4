// SPDX-License-Identifier: GPL-2.0
/* The model of a pipe's content (pipe_model.h) */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_model.h"

void pm_push(struct pipe_model *m, const unsigned char *base, size_t len)
{
	struct pipe_run *last, *run;

	if (!len)
		return;
	m->bytes += len;
	if (m->nr) {
		last = &m->run[m->first + m->nr - 1];
		if ((!last->base && !base) ||
		    (last->base && base == last->base + last->len)) {
			last->len += len;
			return;
		}
	}
	if (m->first + m->nr == m->cap) {
		if (m->first > m->cap / 2) {
			memmove(m->run, m->run + m->first,
				m->nr * sizeof(*m->run));
			m->first = 0;
		} else {
			m->cap = m->cap ? 2 * m->cap : 64;
			run = realloc(m->run, m->cap * sizeof(*m->run));
			if (!run) {
				perror("# realloc");
				exit(2);
			}
			m->run = run;
		}
	}
	m->run[m->first + m->nr++] = (struct pipe_run){ base, len };
}

void pm_peek(const struct pipe_model *m, size_t n, unsigned char *out)
{
	const struct pipe_run *run = m->run + m->first;
	size_t k;

	for (; n; run++) {
		k = run->len < n ? run->len : n;
		if (run->base)
			memcpy(out, run->base, k);
		else
			memset(out, 0, k);
		out += k;
		n -= k;
	}
}

const unsigned char *pm_base_at(const struct pipe_model *m, size_t i)
{
	const struct pipe_run *run = m->run + m->first;

	while (i >= run->len)
		i -= run++->len;
	return run->base ? run->base + i : NULL;
}

bool pm_zero_at(const struct pipe_model *m, size_t i)
{
	return !pm_base_at(m, i);
}

void pm_copy(const struct pipe_model *src, size_t n, struct pipe_model *dst)
{
	const struct pipe_run *run = src->run + src->first;
	size_t k;

	for (; n; run++) {
		k = run->len < n ? run->len : n;
		pm_push(dst, run->base, k);
		n -= k;
	}
}

size_t pm_drop(struct pipe_model *m, size_t n)
{
	struct pipe_run *run;
	size_t done;

	if (n > m->bytes)
		n = m->bytes;
	done = n;
	m->bytes -= n;
	while (n) {
		run = &m->run[m->first];
		if (run->len > n) {
			run->len -= n;
			if (run->base)
				run->base += n;
			return done;
		}
		n -= run->len;
		m->first++;
		m->nr--;
	}
	if (!m->nr)
		m->first = 0;
	return done;
}

void pm_clear(struct pipe_model *m)
{
	m->first = 0;
	m->nr = 0;
	m->bytes = 0;
}

void pm_free(struct pipe_model *m)
{
	free(m->run);
	memset(m, 0, sizeof(*m));
}
