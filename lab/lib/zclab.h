/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the lab's C programs share, the selftests (lab/selftests) and the
 * benchmarks (lab/bench) alike: the clock, a check that bytes are zero,
 * reading to the end, a connected socket pair and a thread that drains
 * one, and unloading zcdev with patience.
 */
#ifndef ZCLAB_H
#define ZCLAB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define KIB		1024UL
#define MIB		(1024 * KIB)
#define GIB		(1024 * MIB)
#define MODNAME		"zcdev"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* CLOCK_MONOTONIC, in nanoseconds, milliseconds and seconds */
long long now_ns(void);
long long now_ms(void);
double now_s(void);
void sleep_ms(unsigned int ms);

/* The index of the first byte of p[0..n) that is not c, or -1 */
long not_byte(const void *p, size_t n, unsigned char c);
void *map_anon(size_t len);
/* Read until n bytes, end of file or an error: the count, or -1 */
ssize_t read_full(int fd, void *buf, size_t n);

/* A thread that reads a socket to its end and counts what it got */
struct sink {
	pthread_t thread;
	int fd;
	size_t total;
	size_t bad;	/* bytes that were not zero */
	int err;
};

void loopback_up(void);
/* Connected stream sockets, TCP on loopback or AF_UNIX: 0, or an errno */
int sock_pair(bool tcp, int sv[2]);
void *sink_main(void *arg);

/* "64K", "1M", or the bytes: size in buf */
const char *size_str(size_t size, char *buf, size_t len);
/*
 * A comma-separated list of names: each named one's flag on, the others
 * off; false for a name not among the n, or no name.
 */
bool parse_list(char *s, const char *const names[], bool *const flags[],
		unsigned int n);

/*
 * The command line of a small benchmark, "PROG [-OPT VALUE] [DEVICE...]":
 * sets *value from -OPT (at least min), *ndevs; the devices given, else
 * dflt.  Exits with usage on anything else.
 */
const char *const *bench_args(int argc, char **argv, const char *usage, char opt,
			      double min, double *value, const char *const *dflt,
			      int *ndevs);

/* delete_module(2), O_NONBLOCK: 0, or -1 with errno */
int delete_module(const char *name);
bool module_busy_errno(int err);
/* Whether an open's errno says zcdev is away: gone, going or not live */
bool away_errno(int err);
/* Unload zcdev, trying again for up to ms while it is busy: 0, or errno */
int unload_module(unsigned int ms);

#endif /* ZCLAB_H */
