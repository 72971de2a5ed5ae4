// SPDX-License-Identifier: GPL-2.0
/*
 * readcall: the cost of one small read(), per device.
 *
 *   readcall [-n CALLS] [DEVICE...]     (default: /dev/zero /dev/zczero)
 *
 * Reads of 1 B, 64 B and 1 KiB, below the size where zcdev's read path
 * takes rep stosb, so that TCG's counting of a rep string instruction
 * once per byte does not distort them: in a VM with -icount shift=0
 * (lab/vm/run.sh -i) a guest nanosecond is an instruction, and the
 * figures are instructions per call.  Twice over, to show they repeat.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "zclab.h"

int main(int argc, char **argv)
{
	static const char *const stock[] = { "/dev/zero", "/dev/zczero" };
	static const size_t sizes[] = { 1, 64, 1024 };
	int ndevs = 2, calls, round, d, s, i, fd;
	const char *const *devs;
	static char buf[1024];
	double t, n = 20000;

	devs = bench_args(argc, argv, "readcall [-n CALLS] [DEVICE...]", 'n', 1, &n,
			  stock, &ndevs);
	calls = n;
	for (round = 0; round < 2; round++) {
		for (d = 0; d < ndevs; d++) {
			fd = open(devs[d], O_RDONLY | O_CLOEXEC);
			if (fd < 0) {
				fprintf(stderr, "%s: %s\n", devs[d], strerror(errno));
				return 1;
			}
			for (s = 0; s < 3; s++) {
				for (i = 0; i < 1000; i++)	/* warm */
					if (read(fd, buf, sizes[s]) < 0)
						return 1;
				t = now_ns();
				for (i = 0; i < calls; i++)
					if (read(fd, buf, sizes[s]) != (ssize_t)sizes[s])
						return 1;
				printf("%-12s %5zu B %8.0f ns/call\n", devs[d],
				       sizes[s], (now_ns() - t) / calls);
			}
			close(fd);
		}
	}
	return 0;
}
