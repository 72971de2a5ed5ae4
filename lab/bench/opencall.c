// SPDX-License-Identifier: GPL-2.0
/*
 * opencall: open() and close() of a device from many threads at once.
 *
 *   opencall [-t SECONDS] [DEVICE...]   (default: /dev/zero /dev/zczero)
 *
 * For 1, 2 and 4 threads, each opening and closing the device as fast as
 * it can: the pairs a second in all.  lab/bench.sh runs it in its
 * wall-clock guest; targets.txt compares zczero's 2-thread/1-thread ratio
 * with /dev/zero's.  zczero and zcfull are minors of a character device
 * region of zcdev's own, as /dev/zero is of mem's: an open takes no lock
 * of zcdev's.  Wall clock: where the figures were measured (native, KVM,
 * TCG) decides what they mean.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "zclab.h"

struct runner {
	pthread_t thread;
	const char *path;
	double end;
	unsigned long pairs;
	int err;
};

static void *runner_main(void *arg)
{
	struct runner *r = arg;
	unsigned int i;
	int fd;

	while (now_s() < r->end) {
		for (i = 0; i < 64; i++) {
			fd = open(r->path, O_RDONLY | O_CLOEXEC);
			if (fd < 0) {
				r->err = errno;
				return NULL;
			}
			close(fd);
			r->pairs++;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const stock[] = { "/dev/zero", "/dev/zczero" };
	static const unsigned int threads[] = { 1, 2, 4 };
	const char *const *devs;
	struct runner r[4];
	int ndevs = 2, d, t, i;
	double secs = 2, start;
	unsigned long total;

	devs = bench_args(argc, argv, "opencall [-t SECONDS] [DEVICE...]", 't', 0.01,
			  &secs, stock, &ndevs);
	for (d = 0; d < ndevs; d++) {
		for (t = 0; t < (int)ARRAY_SIZE(threads); t++) {
			memset(r, 0, sizeof(r));
			start = now_s();
			for (i = 0; i < (int)threads[t]; i++) {
				r[i].path = devs[d];
				r[i].end = start + secs;
				if (pthread_create(&r[i].thread, NULL, runner_main, &r[i]))
					return 1;
			}
			total = 0;
			for (i = 0; i < (int)threads[t]; i++) {
				pthread_join(r[i].thread, NULL);
				if (r[i].err) {
					fprintf(stderr, "%s: %s\n", devs[d], strerror(r[i].err));
					return 1;
				}
				total += r[i].pairs;
			}
			printf("%-12s %u threads %10.0f open+close a second\n", devs[d],
			       threads[t], total / (now_s() - start));
		}
	}
	return 0;
}
