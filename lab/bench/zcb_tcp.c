// SPDX-License-Identifier: GPL-2.0
/*
 * zcbench, tcp: sendfile(socket, DEV) of 64 KiB and 1 MiB a call
 * (tcp-sendfile) and DEV -> pipe -> socket (tcp-splice) into a TCP
 * connection on loopback, against send() and send(MSG_ZEROCOPY) of a
 * zeroed buffer.  A receiver thread splices what arrives to /dev/null,
 * in the time.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <poll.h>
#include <netinet/in.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <linux/errqueue.h>

#include "zcbench.h"

/*
 * Reap MSG_ZEROCOPY completions: every one queued, then more, waiting,
 * until @want sends are complete.  Reads of the error queue never block.
 */
static bool reap_zc(struct worker *w, unsigned long long want)
{
	for (;;) {
		char control[256];
		struct msghdr msg = {
			.msg_control = control,
			.msg_controllen = sizeof(control),
		};
		struct cmsghdr *cm;

		if (recvmsg(w->sink, &msg, MSG_ERRQUEUE) < 0) {
			struct pollfd pfd = { .fd = w->sink };

			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				fail_sys(w, "recvmsg(MSG_ERRQUEUE)");
				return false;
			}
			if (w->zc_done >= want)
				return true;
			/* POLLERR: the error queue is not empty */
			if (poll(&pfd, 1, -1) < 0 && errno != EINTR) {
				fail_sys(w, "poll(POLLERR)");
				return false;
			}
			continue;
		}
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			struct sock_extended_err ee;
			unsigned long long n;

			if (cm->cmsg_level != SOL_IP || cm->cmsg_type != IP_RECVERR)
				continue;
			memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
			if (ee.ee_errno || ee.ee_origin != SO_EE_ORIGIN_ZEROCOPY) {
				set_status(&w->status, w->msg, ST_ERROR,
					   "error queue: errno %u, origin %u",
					   ee.ee_errno, ee.ee_origin);
				return false;
			}
			/* sends ee_info..ee_data, inclusive, are complete */
			n = ee.ee_data - ee.ee_info + 1;
			w->zc_done += n;
			if (ee.ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
				w->zc_copied += n;
		}
	}
}

/*
 * Up to len bytes into the socket, one call of the row's kind (for
 * tcp-splice: one splice into the pipe, then the pipe into the socket).
 * Returns the bytes sent, or -1 with errno and *what set (or the status
 * already set).
 */
static ssize_t tcp_put(struct worker *w, size_t len, const char **what)
{
	ssize_t n;

	for (;;) {
		switch (w->m->kind) {
		case K_SENDFILE:
			*what = "sendfile(socket, dev)";
			n = sendfile(w->sink, w->src, NULL, len);
			break;
		case K_SEND:
			*what = "send";
			n = send(w->sink, w->buf, len, 0);
			break;
		case K_SENDZC:
			*what = "send(MSG_ZEROCOPY)";
			n = send(w->sink, w->buf, len, MSG_ZEROCOPY);
			if (n < 0 && errno == ENOBUFS) {
				/* notifications fill the option memory */
				if (!reap_zc(w, w->zc_done + 1))
					return -1;
				continue;
			}
			if (n > 0)
				w->zc_sent++;	/* each such call is one id */
			break;
		default:
			*what = "splice(dev->pipe)";
			n = fill(w, len);
			if (n > 0 && !drain(w, n))
				return -1;
			break;
		}
		if (n >= 0 || errno != EINTR)
			return n;
	}
}

/* Receiver: the socket, through a pipe, to /dev/null, until EOF. */
static void *receiver_main(void *arg)
{
	struct worker *w = arg;
	ssize_t n, k;

	/* until the sender shuts its side down */
	while ((n = reader_splice(w, w->rsock, w->rpipe_w, w->m->size,
				  "splice(socket->pipe) in receiver")) > 0) {
		w->reader_done += n;
		for (; n > 0; n -= k) {
			k = reader_splice(w, w->rpipe_r, w->rnull, n,
					  "splice(pipe->/dev/null) in receiver");
			if (!k)
				set_status(&w->reader_status, w->reader_msg, ST_ERROR,
					   "splice(pipe->/dev/null) in receiver: returned 0");
			if (k <= 0)
				goto out;
		}
	}
out:
	/* A sender blocked on a full socket gets an error, not a hang. */
	close(w->rsock);
	w->rsock = -1;
	return NULL;
}

/* A loopback TCP connection, the first bytes checked, the receiver. */
static void setup_tcp(struct worker *w)
{
	const struct meas *m = w->m;
	const char *what = "";
	int sv[2], one = 1;
	size_t off;
	ssize_t n;

	errno = sock_pair(true, sv);
	if (errno) {
		fail_sys(w, "a TCP connection on 127.0.0.1");
		return;
	}
	w->sink = sv[0];
	w->rsock = sv[1];
	if (w->rsock < 0 ||
	    !make_pipe(w, &w->rpipe_r, &w->rpipe_w, m->size))
		return;
	w->rnull = open(zcb.null_path, O_WRONLY | O_CLOEXEC);
	if (w->rnull < 0) {
		fail_sys(w, "open /dev/null");
		return;
	}

	if (m->kind == K_SPLICE &&
	    !make_pipe(w, &w->pipe_r, &w->pipe_w, m->size))
		return;
	if (m->kind == K_SEND || m->kind == K_SENDZC) {
		if (!alloc_buf(w, m->size))
			return;
		memset(w->buf, 0, m->size);
	}
	if (m->kind == K_SENDZC &&
	    setsockopt(w->sink, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one))) {
		set_status(&w->status, w->msg, ST_UNSUPPORTED,
			   "setsockopt(SO_ZEROCOPY): %s", strerror(errno));
		return;
	}

	/* Check the first bytes: send them, receive them here, look. */
	for (off = 0; off < TCP_CHECK_LEN; off += n) {
		n = tcp_put(w, TCP_CHECK_LEN - off, &what);
		if (n < 0 && w->status == ST_OK) {
			if (errno == EINVAL && m->path)
				set_status(&w->status, w->msg, ST_UNSUPPORTED,
					   "%s from %s: EINVAL", what, m->path);
			else
				fail_sys(w, what);
		}
		if (n == 0)
			set_status(&w->status, w->msg, ST_ERROR,
				   "%s: returned 0", what);
		if (w->status != ST_OK)
			return;
	}
	if (!read_zeros_back(w, w->rsock, TCP_CHECK_LEN, "tcp"))
		return;
	if (m->kind == K_SENDZC) {
		/* all complete: count the timed sends only */
		if (!reap_zc(w, w->zc_sent))
			return;
		w->zc_sent = 0;
		w->zc_done = 0;
		w->zc_copied = 0;
	}

	start_reader(w, receiver_main, "pthread_create(receiver)");
}

static void run_tcp(struct worker *w)
{
	const struct meas *m = w->m;
	unsigned long iter = 0;
	const char *what = "";

	while (w->done < w->target) {
		size_t want = m->size;
		ssize_t n;

		if (want > w->target - w->done)
			want = w->target - w->done;
		n = tcp_put(w, want, &what);
		if (!moved(w, n, what))
			break;
		w->done += n;
		if (m->kind == K_SENDZC && !reap_zc(w, 0))
			break;
		if (time_up(++iter))
			break;
	}
	/* The buffer is the sender's again only when every send is done. */
	if (m->kind == K_SENDZC && w->status == ST_OK)
		reap_zc(w, w->zc_sent);
}

/*
 * tcp-sendfile and tcp-splice: DEV, REF and the patch's loop into a
 * loopback TCP socket.  The peers, send() and send(MSG_ZEROCOPY) of a
 * zeroed buffer, are measured with tcp-sendfile and compared with both.
 */
static void tcp_group(const char *test, enum kind kind, size_t size,
		      int threads)
{
	struct meas m = {
		.test = test, .kind = kind, .sink = SINK_TCP, .size = size,
		.threads = threads, .setup = setup_tcp, .run = run_tcp,
	};
	const struct result *d, *ref, *pat = NULL, *p, *pz = NULL, *own[2];
	bool own_peer = kind == K_SENDFILE;

	meas_sources(&m, &d, &ref, &pat);
	if (own_peer) {
		m.kind = K_SEND;
		m.label = "send";
		p = do_meas(&m);
		m.kind = K_SENDZC;
		m.label = "send-zc";
		pz = do_meas(&m);
	} else {
		p = find("tcp-sendfile", "send", size, threads);
	}

	own[0] = p;
	own[1] = pz;
	print_rows(d, ref, p, pat, own, own_peer ? 2 : 0);
}

void bench_tcp(const int *threads, int n)
{
	static const size_t sizes[] = { 64 * KIB, 1 * MIB };
	static const struct {
		const char *test;
		enum kind kind;
	} tests[] = {
		{ "tcp-sendfile", K_SENDFILE },
		{ "tcp-splice", K_SPLICE },
	};
	unsigned int i, s;
	int t;

	for (i = 0; i < ARRAY_SIZE(tests); i++)
		for (s = 0; s < ARRAY_SIZE(sizes); s++)
			for (t = 0; t < n; t++)
				tcp_group(tests[i].test, tests[i].kind,
					  sizes[s], threads[t]);
}

void header_tcp(void)
{
	printf("tcp:     loopback; a receiver thread splices to /dev/null, in the time\n");
}
