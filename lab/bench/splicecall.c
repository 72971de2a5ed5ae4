// SPDX-License-Identifier: GPL-2.0
/*
 * splicecall: what one pipe round trip costs, per device, against the
 * floor of two system calls.
 *
 *   splicecall [-n ROUNDS] [DEVICE...]
 *              (default: /dev/zczero /dev/zcref /dev/zero)
 *
 * A round trip is what zcbench's splice-null does per pipe-full: a
 * splice() from DEVICE into a 1 MiB pipe and one from the pipe to
 * /dev/null, here of 4 KiB and of 1 MiB; and as splice-self does, from
 * the pipe back into DEVICE ("self").  getppid() gives the cost of a
 * system call that does nothing.  1 MiB round trips are a twentieth as
 * many (stock /dev/zero copies them).  In a VM with -icount shift=0
 * (lab/vm/run.sh -i) a guest nanosecond is an instruction, so the
 * figures are instructions; nothing here is a rep-string instruction.
 * Twice over, to show they repeat.  Unlike zcbench's figures, these have
 * no thread start, join or teardown in them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "zclab.h"

#define PIPE_LEN	(1024 * 1024)
#define WARM		100

/* One round trip of len bytes; false on a failed or short splice. */
static int round_trip(int in, int pw, int pr, int out, size_t len)
{
	return splice(in, NULL, pw, NULL, len, 0) == (ssize_t)len &&
	       splice(pr, NULL, out, NULL, len, 0) == (ssize_t)len;
}

static int pairs(const char *dev, size_t len, int rounds, int self)
{
	int in, out, p[2], i, ok = 0;
	double t;

	if (len > 4096 && rounds >= 20)
		rounds /= 20;

	in = open(dev, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		printf("%-12s %8zu B: %s\n", dev, len, strerror(errno));
		return errno == ENOENT || errno == ENXIO || errno == ENODEV;
	}
	out = open(self ? dev : "/dev/null", O_WRONLY | O_CLOEXEC);
	if (out < 0 || pipe2(p, O_CLOEXEC)) {
		perror("splicecall: the sink or pipe2");
		exit(1);
	}
	if (fcntl(p[1], F_SETPIPE_SZ, PIPE_LEN) < PIPE_LEN) {
		perror("splicecall: F_SETPIPE_SZ");
		exit(1);
	}
	for (i = 0; i < WARM; i++)
		if (!round_trip(in, p[1], p[0], out, len))
			goto out;
	t = now_ns();
	for (i = 0; i < rounds; i++)
		if (!round_trip(in, p[1], p[0], out, len))
			goto out;
	printf("%-12s %8zu B %8.0f ns/round trip -> %s\n", dev, len,
	       (now_ns() - t) / rounds, self ? "self" : "/dev/null");
	ok = 1;
out:
	if (!ok)
		printf("%-12s %8zu B: splice failed or short: %s\n", dev, len,
		       strerror(errno));
	close(p[0]);
	close(p[1]);
	close(out);
	close(in);
	return ok;
}

int main(int argc, char **argv)
{
	static const char *const stock[] = {
		"/dev/zczero", "/dev/zcref", "/dev/zero",
	};
	static const size_t sizes[] = { 4096, PIPE_LEN };
	int ndevs = 3, rounds, round, d, s, i, ok = 1;
	const char *const *devs;
	double t, n = 20000;

	devs = bench_args(argc, argv, "splicecall [-n ROUNDS] [DEVICE...]", 'n', 1, &n,
			  stock, &ndevs);
	rounds = n;
	for (round = 0; round < 2; round++) {
		for (i = 0; i < WARM; i++)
			syscall(SYS_getppid);
		t = now_ns();
		for (i = 0; i < rounds; i++)
			syscall(SYS_getppid);
		printf("%-12s %8s   %8.0f ns/call\n", "getppid()", "-",
		       (now_ns() - t) / rounds);
		for (d = 0; d < ndevs; d++)
			for (s = 0; s < 2; s++)
				ok &= pairs(devs[d], sizes[s], rounds, 0);
		/* only the 1 MiB pipe: the splice-self target */
		for (d = 0; d < ndevs; d++)
			ok &= pairs(devs[d], PIPE_LEN, rounds, 1);
	}
	return !ok;
}
