// SPDX-License-Identifier: GPL-2.0
/* What the lab's C programs share (zclab.h) */

#include <errno.h>
#include <stdio.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <fcntl.h>

#include "zclab.h"

long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

long long now_ms(void)
{
	return now_ns() / 1000000;
}

double now_s(void)
{
	return now_ns() / 1e9;
}

/* The index of the first byte of p[0..n) that is not c, or -1 */
long not_byte(const void *p, size_t n, unsigned char c)
{
	const unsigned char *b = p;
	size_t i;

	/* all equal to b[0] exactly when b[0..n-1) equals b[1..n) */
	if (!n || (b[0] == c && !memcmp(b, b + 1, n - 1)))
		return -1;
	for (i = 0; i < n; i++)
		if (b[i] != c)
			return i;
	return -1;
}

void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Read until n bytes, end of file or an error; the count, or -1 */
ssize_t read_full(int fd, void *buf, size_t n)
{
	size_t done = 0;
	ssize_t r;

	while (done < n) {
		r = read(fd, (char *)buf + done, n - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return done ? (ssize_t)done : -1;
		if (!r)
			break;
		done += r;
	}
	return done;
}

/* Bring the loopback interface up if it is not (a bare VM) */
void loopback_up(void)
{
	struct ifreq ifr;
	int s;

	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (!ioctl(s, SIOCGIFFLAGS, &ifr) && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
}

/*
 * A connected pair of stream sockets, TCP over 127.0.0.1 or AF_UNIX:
 * sv[0] to write, sv[1] to read.  0, or an errno.
 */
int sock_pair(bool tcp, int sv[2])
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	socklen_t alen = sizeof(a);
	int l, err;

	if (!tcp)
		return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) ?
		       errno : 0;
	loopback_up();
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0)
		return errno;
	sv[0] = -1;
	if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &alen))
		goto fail;
	sv[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sv[0] < 0 || connect(sv[0], (struct sockaddr *)&a, sizeof(a)))
		goto fail;
	sv[1] = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	if (sv[1] < 0)
		goto fail;
	close(l);
	return 0;
fail:
	err = errno;
	if (sv[0] >= 0)
		close(sv[0]);
	close(l);
	return err;
}

void *sink_main(void *arg)
{
	struct sink *s = arg;
	unsigned char *buf = malloc(64 * KIB);
	ssize_t r, i;

	if (!buf) {
		s->err = ENOMEM;
		return NULL;
	}
	for (;;) {
		r = read(s->fd, buf, 64 * KIB);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			s->err = errno;
		if (r <= 0)
			break;
		if (not_byte(buf, r, 0) >= 0)
			for (i = 0; i < r; i++)
				s->bad += buf[i] != 0;
		s->total += r;
	}
	free(buf);
	return NULL;
}

void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int delete_module(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK);
}

bool module_busy_errno(int err)
{
	return err == EBUSY || err == EWOULDBLOCK;
}

/*
 * Whether an open failed because zcdev is away: no node (ENOENT), or a
 * node whose character device is not added yet or gone (ENXIO, from
 * chrdev_open()).
 */
bool away_errno(int err)
{
	return err == ENOENT || err == ENXIO;
}

/*
 * Unload zcdev, trying again for up to ms while it is busy: what still
 * pins it may be going away (an RCU callback drops the last reference,
 * zcdev_pipe.c).  0, or the errno of the last attempt.
 */
int unload_module(unsigned int ms)
{
	long long end = now_ms() + ms;
	int err;

	for (;;) {
		if (!delete_module(MODNAME))
			return 0;
		err = errno;
		if (!module_busy_errno(err) || now_ms() >= end)
			return err;
		sleep_ms(20);
	}
}

const char *size_str(size_t size, char *buf, size_t len)
{
	if (size >= MIB && size % MIB == 0)
		snprintf(buf, len, "%zuM", (size_t)(size / MIB));
	else if (size >= KIB && size % KIB == 0)
		snprintf(buf, len, "%zuK", (size_t)(size / KIB));
	else
		snprintf(buf, len, "%zu", size);
	return buf;
}

bool parse_list(char *s, const char *const names[], bool *const flags[],
		unsigned int n)
{
	bool any = false, known;
	char *tok, *save;
	unsigned int i;

	for (i = 0; i < n; i++)
		*flags[i] = false;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		known = false;
		for (i = 0; i < n; i++) {
			if (!strcmp(tok, names[i])) {
				*flags[i] = true;
				known = true;
			}
		}
		if (!known)
			return false;
		any = true;
	}
	return any;
}

const char *const *bench_args(int argc, char **argv, const char *usage, char opt,
			      double min, double *value, const char *const *dflt,
			      int *ndevs)
{
	char opts[3] = { opt, ':', '\0' };
	int c;

	while ((c = getopt(argc, argv, opts)) != -1) {
		if (c != opt) {
			fprintf(stderr, "usage: %s\n", usage);
			exit(2);
		}
		*value = atof(optarg);
		if (*value < min)
			*value = min;
	}
	if (optind == argc)
		return dflt;
	*ndevs = argc - optind;
	return (const char *const *)argv + optind;
}
