// SPDX-License-Identifier: GPL-2.0
/*
 * zcdev_fuzz: a fuzzer of zcdev's own, that knows what every byte must be.
 *
 * A generic fuzzer finds crashes; it cannot tell that a splice reported
 * one byte more than it queued, or that a pipe handed out a page that is
 * not all zeros.  This one runs seeded random sequences of operations on
 * zczero, zcfull, pipes and tmpfs files from several threads, and checks
 * each result against a model:
 *
 *  - every pipe's content is modelled as runs of bytes that are known:
 *    zeros from the devices, a fixed pattern from write() and vmsplice(),
 *    a tmpfs file's bytes from a copy kept here.  FIONREAD must equal the
 *    model's length after every step, a read from a pipe must return the
 *    model's bytes exactly, and what leaves a pipe leaves the model;
 *  - a read from a device clears exactly the bytes it reports, to the
 *    byte even where the buffer runs into a PROT_NONE page, and nothing
 *    around them; writes to zczero return the full count, writes and
 *    splices to zcfull fail with ENOSPC;
 *  - the shared zero page is still zero: a page of anonymous memory that
 *    is only ever read maps it, and is looked at after every step;
 *  - an operation returns: one still running a minute after the end is
 *    reported with the sequence that led to it;
 *  - as root with ZCDEV_KO naming the module file, a thread of its own
 *    unloads (delete_module, O_NONBLOCK) and reloads zcdev while the
 *    others work: an open that meets the gap fails with ENOENT or ENXIO,
 *    which is counted, not a violation.  Every few seconds it stops the
 *    workers between two sequences, when they hold no file, no mapping
 *    and no pipe: zcdev must then unload within 5 s; it comes
 *    back as they go on, or goes again as they go on, their first opens
 *    racing with it.
 *    At the end, all closed, it must unload once more, and is loaded again
 *    for what runs next.
 *
 * The operations of a sequence are drawn from a PRNG seeded with the run's
 * seed, the thread and the sequence's number, never from a result, so
 * "-r THREAD:SEQUENCE" replays the same operations alone: a violation
 * prints that command line and the sequence's log.  What other threads
 * and the module thread did meanwhile is not replayed; a race may need the
 * whole run again, which the same seed gives as nearly as timing allows.
 *
 * Output: "# " comment lines, then exactly one line
 *	N operations, M sequences, seed S, V violations
 * and the exit code is 0 when V is 0, else 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/wait.h>

#include "zcdev_fuzz.h"

/* The rest of the options (fzc has the others), and what the run's own threads share */
static struct {
	unsigned long long max_seqs;	/* 0: no bound */
	bool verbose, other_devs;
	unsigned int replay_thread;
	unsigned long long replay_seq;
	const char *ko;
	long long start;

	unsigned long long seqs_begun;	/* the __atomic_* builtins */
	unsigned long long unloads, quiesced_unloads, raced_unloads, busy;
	long long unload_wait_max;	/* ms an idle zcdev took to unload */

	pthread_mutex_t lock;		/* the fields below */
	pthread_cond_t cond;
	bool quiesce;			/* workers are to park between sequences */
	int mod_done;			/* the module thread has finished */
	unsigned int parked;		/* parked workers, and finished ones */
} run = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

/* ---- sequences ----------------------------------------------------------- */

/* The tmpfs files of a sequence: src holes and pattern, dst empty */
static bool files_setup(struct worker *w, unsigned long long r)
{
	size_t size = (r & 3) ? (r >> 2) % (SRC_MAX + 1) : 0, at, n;
	unsigned long long x = r;

	w->src_fd = tmpfs_file();
	w->dst_fd = tmpfs_file();
	if (w->src_fd < 0 || w->dst_fd < 0)
		return fz_fail(w, "no tmpfs file: %s", strerror(errno));
	memset(w->src, 0, SRC_MAX);
	memset(w->dst, 0, DST_MAX);
	w->dst_size = 0;
	w->src_size = size;
	if (ftruncate(w->src_fd, size))
		return fz_fail(w, "ftruncate: %s", strerror(errno));
	for (at = 0; at < size; at += n) {
		fz_next(&x);
		n = 1 + x % (16 * KIB);
		if (n > size - at)
			n = size - at;
		if (x & (1ULL << 40))
			continue;	/* a hole: zeros */
		memcpy(w->src + at, pat_at(x >> 20, n), n);
		if (pwrite(w->src_fd, w->src + at, n, at) != (ssize_t)n)
			return fz_fail(w, "pwrite to the source file: %s", strerror(errno));
	}
	LOG(w, "src: %zu bytes of pattern and holes; dst: empty", size);
	return true;
}

/*
 * The end of a sequence: every pipe read to its end against the model,
 * every mapping checked, every file closed.  After a violation only
 * closed: the model no longer says anything.
 */
static void seq_finish(struct worker *w)
{
	unsigned int i;

	for (i = 0; i < NPIPE; i++) {
		if (w->pipe[i].rfd < 0)
			continue;
		if (!w->violated) {
			LOG(w, "end: drain p%u (%zu bytes)", i, w->pipe[i].m.bytes);
			pipe_drain(w, i);
		}
		pipe_close(w, i);
	}
	for (i = 0; i < NMAP; i++) {
		if (w->map[i].addr && !w->violated)
			map_check(w, i);
		map_drop(w, i);
	}
	for (i = 0; i < NDEV; i++)
		dev_close(w, i);
	if (w->src_fd >= 0)
		close(w->src_fd);
	if (w->dst_fd >= 0)
		close(w->dst_fd);
	w->src_fd = -1;
	w->dst_fd = -1;
	if (!w->violated)
		fresh_zero_check(w);
}

/* The PRNG of sequence q of thread t: all that a replay needs */
static unsigned long long seq_seed(unsigned int t, unsigned long long q)
{
	return fz_mix(fz_mix(fzc.seed) ^ fz_mix(((unsigned long long)t << 48) ^ q));
}

static void op_zerocheck(struct worker *w, const struct draws *dr)
{
	(void)dr;
	LOG(w, "zero-page check");
	fresh_zero_check(w);
}

/* Each operation: its name, how often it is drawn, and what does it */
static const struct {
	const char *name;
	unsigned int weight;
	void (*run)(struct worker *w, const struct draws *dr);
} ops[OP_NR] = {
	[OP_OPEN]		= { "open", 8, op_open },
	[OP_DUP]		= { "dup", 3, op_dup },
	[OP_CLOSE_DEV]		= { "close", 4, op_close_dev },
	[OP_PIPE]		= { "pipe", 3, op_pipe },
	[OP_CLOSE_PIPE]		= { "close-pipe", 2, op_close_pipe },
	[OP_PIPE_SZ]		= { "F_SETPIPE_SZ", 4, op_pipe_sz },
	[OP_SPLICE_DP]		= { "splice-dev-pipe", 12, op_splice_dp },
	[OP_SPLICE_PD]		= { "splice-pipe-dev", 8, op_splice_pd },
	[OP_SPLICE_PP]		= { "splice-pipe-pipe", 5, op_splice_pp },
	[OP_TEE]		= { "tee", 5, op_tee },
	[OP_VMSPLICE_IN]	= { "vmsplice-in", 4, op_vmsplice_in },
	[OP_VMSPLICE_OUT]	= { "vmsplice-out", 4, op_vmsplice_out },
	[OP_READ_DEV]		= { "read-dev", 8, op_read_dev },
	[OP_READ_PIPE]		= { "read-pipe", 7, op_read_pipe },
	[OP_WRITE_DEV]		= { "write-dev", 4, op_write_dev },
	[OP_WRITE_PIPE]		= { "write-pipe", 4, op_write_pipe },
	[OP_MMAP]		= { "mmap", 2, op_mmap },
	[OP_TOUCH]		= { "touch", 3, op_touch },
	[OP_MUNMAP]		= { "munmap", 1, op_munmap },
	[OP_LSEEK]		= { "lseek", 2, op_lseek },
	[OP_FIONREAD]		= { "FIONREAD", 1, op_fionread },
	[OP_SENDFILE]		= { "sendfile", 5, op_sendfile },
	[OP_SPLICE_FP]		= { "splice-file-pipe", 3, op_splice_fp },
	[OP_SPLICE_PF]		= { "splice-pipe-file", 3, op_splice_pf },
	[OP_FILE_IO]		= { "file-io", 2, op_file_io },
	[OP_FORK]		= { "fork", 1, op_fork },
	[OP_ZEROCHECK]		= { "zero-page", 1, op_zerocheck },
};

static unsigned int op_total;	/* the sum of the weights */

static enum op pick_op(unsigned long long r)
{
	unsigned int i, x = r % op_total;

	for (i = 0; x >= ops[i].weight; i++)
		x -= ops[i].weight;
	return i;
}

/*
 * Sequence q of worker w.  Its first operations open two devices and two
 * pipes, in slots of their own, so that the rest has something to work
 * on; every operation draws the same five numbers whatever it is, so that
 * the draws never depend on a result.
 */
static void run_sequence(struct worker *w, unsigned long long q)
{
	static const enum op setup[] = { OP_OPEN, OP_PIPE, OP_OPEN, OP_PIPE };
	unsigned long long k, n;
	struct draws dr;
	enum op op;

	w->seq = q;
	w->rng = seq_seed(w->id, q);
	w->violated = false;
	w->nlog = 0;
	w->nlog_lost = 0;
	n = ARRAY_SIZE(setup) + 4 + fz_next(&w->rng) % (SEQ_OPS - 3);
	if (!files_setup(w, fz_next(&w->rng)))
		goto out;
	for (k = 0; k < n && !w->violated; k++) {
		op = pick_op(fz_next(&w->rng));
		if (k < ARRAY_SIZE(setup))
			op = setup[k];
		dr.slots = fz_next(&w->rng);
		if (k < ARRAY_SIZE(setup))	/* slot k % NDEV, k % NPIPE */
			dr.slots = dr.slots - dr.slots % (NDEV * NPIPE) + k;
		dr.len = fz_next(&w->rng);
		dr.how = fz_next(&w->rng);
		dr.more = fz_next(&w->rng);
		ops[op].run(w, &dr);
		__atomic_add_fetch(&w->count[op], 1, __ATOMIC_RELAXED);
		if (stopped())
			break;	/* a violation elsewhere: finish soon */
		if (!w->violated)
			step_check(w);
	}
out:
	seq_finish(w);
	__atomic_add_fetch(&w->seqs, 1, __ATOMIC_RELAXED);
	if (run.verbose || fzc.replay) {
		fz_out_lock();
		printf("# thread %u sequence %llu:\n", w->id, q);
		print_log(w);
		fflush(stdout);
		fz_out_unlock();
	}
}

/* Between sequences: park while the module thread wants every file closed */
static void quiesce_point(void)
{
	pthread_mutex_lock(&run.lock);
	if (run.quiesce) {
		run.parked++;
		pthread_cond_broadcast(&run.cond);
		while (run.quiesce)
			pthread_cond_wait(&run.cond, &run.lock);
		run.parked--;
	}
	pthread_mutex_unlock(&run.lock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned long long q;

	if (fzc.replay)
		run_sequence(w, run.replay_seq);
	for (q = 0; !fzc.replay && !stopping(); q++) {
		quiesce_point();
		if (stopping())
			break;
		if (run.max_seqs &&
		    __atomic_fetch_add(&run.seqs_begun, 1, __ATOMIC_SEQ_CST) >= run.max_seqs)
			break;
		run_sequence(w, q);
	}
	/* a finished worker counts as parked for good */
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&run.lock);
	run.parked++;
	pthread_cond_broadcast(&run.cond);
	pthread_mutex_unlock(&run.lock);
	return NULL;
}

/* ---- the module thread ----------------------------------------------------- */

/* delete_module until it works or ms have passed: 0, or the last errno */
static int unload_within(unsigned int ms)
{
	long long start = now_ms();
	int err = unload_module(ms);

	if (!err && now_ms() - start > run.unload_wait_max)
		run.unload_wait_max = now_ms() - start;
	return err;
}

static void reload(void)
{
	int err = load_module(run.ko, "");

	if (err)
		fz_fail(NULL, "reloading %s: %s", run.ko, strerror(err));
}

/*
 * Every worker parked between two sequences holds nothing of zcdev's: no
 * file, no mapping, no pipe buffer.  zcdev must then unload within
 * UNLOAD_MS: the last generation ends within a quarter of a second of
 * its start, and goes two grace periods after its last buffer
 * (zcdev_pipe.c).  Then, one time in two, it is loaded again a moment
 * after the workers went on, so that their first opens meet a
 * module that is not there or still initialising; the other time it is
 * loaded before they go on, and unloaded as they go: their first opens
 * race with delete_module.
 */
static void quiesced_unload(unsigned long long *rng, bool race)
{
	long long end;
	int err;

	pthread_mutex_lock(&run.lock);
	run.quiesce = true;
	while (run.parked < fzc.threads)
		pthread_cond_wait(&run.cond, &run.lock);
	pthread_mutex_unlock(&run.lock);

	win_open();
	err = unload_within(UNLOAD_MS);
	if (!err) {
		__atomic_add_fetch(&run.quiesced_unloads, 1, __ATOMIC_RELAXED);
		if (race)
			reload();
	}

	pthread_mutex_lock(&run.lock);
	run.quiesce = false;
	pthread_cond_broadcast(&run.cond);
	pthread_mutex_unlock(&run.lock);

	if (err) {
		fz_fail(NULL,
			"zcdev still busy %u ms after every file was closed and every pipe drained: %s",
			UNLOAD_MS, strerror(err));
	} else if (!race) {
		sleep_ms(fz_next(rng) % 50);
		reload();
	} else {
		for (end = now_ms() + 200; now_ms() < end;) {
			if (!delete_module(MODNAME)) {
				__atomic_add_fetch(&run.raced_unloads, 1, __ATOMIC_RELAXED);
				sleep_ms(fz_next(rng) % 50);
				reload();
				break;
			}
			if (!module_busy_errno(errno)) {
				fz_fail(NULL, "delete_module: %s", strerror(errno));
				break;
			}
		}
	}
	win_close();
}

static void *module_main(void *arg)
{
	unsigned long long rng = fz_mix(fzc.seed ^ 0x6d6f64756c65ULL);
	long long last = now_ms();
	bool race = false;

	(void)arg;
	while (!stopping()) {
		sleep_ms(10 + fz_next(&rng) % 200);
		if (stopping())
			break;
		if (now_ms() - last >= QUIESCE_MS) {
			quiesced_unload(&rng, race);
			race = !race;
			last = now_ms();
			continue;
		}
		/* mostly EWOULDBLOCK: the workers hold files and buffers */
		win_open();
		if (!delete_module(MODNAME)) {
			__atomic_add_fetch(&run.unloads, 1, __ATOMIC_RELAXED);
			sleep_ms(fz_next(&rng) % 50);
			reload();
		} else if (module_busy_errno(errno)) {
			__atomic_add_fetch(&run.busy, 1, __ATOMIC_RELAXED);
		} else {
			fz_fail(NULL, "delete_module: %s", strerror(errno));
		}
		win_close();
	}
	__atomic_store_n(&run.mod_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* ---- main ------------------------------------------------------------------ */

/* The operations and sequences the workers have done so far */
static void totals(struct worker **w, unsigned long long *nops,
		   unsigned long long *nseqs)
{
	unsigned int i, k;

	*nops = 0;
	*nseqs = 0;
	for (i = 0; i < fzc.threads; i++) {
		for (k = 0; k < OP_NR; k++)
			*nops += __atomic_load_n(&w[i]->count[k], __ATOMIC_RELAXED);
		*nseqs += __atomic_load_n(&w[i]->seqs, __ATOMIC_RELAXED);
	}
}

/* Something has not returned long after the end: report it, and exit */
static void stuck(struct worker **w)
{
	unsigned long long nops, nseqs;
	unsigned int i;

	for (i = 0; i < fzc.threads; i++)
		if (!__atomic_load_n(&w[i]->done, __ATOMIC_ACQUIRE))
			fz_fail(w[i], "still running %u s after the end: %s",
				HANG_MS / 1000, "its last operation never returned");
	if (fzc.mod_ops && !__atomic_load_n(&run.mod_done, __ATOMIC_ACQUIRE))
		fz_fail(NULL, "the module thread still runs %u s after the end: %s",
			HANG_MS / 1000, "delete_module or finit_module never returned");
	totals(w, &nops, &nseqs);
	printf("%llu operations, %llu sequences, seed %llu, %u violations\n", nops, nseqs,
	       fzc.seed, fz_violations());
	fflush(stdout);
	_exit(1);
}

static void help(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-s SEED] [-t SECONDS] [-n SEQUENCES] [-j THREADS] [-r T:Q] [-v]\n"
		"          [-d ZERO,FULL]\n"
		"  -s SEED       the run's seed (default 1)\n"
		"  -t SECONDS    how long to run (default 10)\n"
		"  -n SEQUENCES  stop after that many sequences in all\n"
		"  -j THREADS    worker threads (default 3)\n"
		"  -r T:Q        replay sequence Q of thread T alone, and print it\n"
		"  -v            print every sequence's operations\n"
		"  -d ZERO,FULL  fuzz these device nodes instead, say the stock\n"
		"                /dev/zero,/dev/full to compare (zcdev is not unloaded)\n"
		"As root with ZCDEV_KO=zcdev.ko, a thread unloads and reloads zcdev\n"
		"meanwhile, and zcdev must unload at the end.\n", prog);
	exit(2);
}

static void parse(int argc, char **argv)
{
	char *end;
	int c;

	while ((c = getopt(argc, argv, "s:t:n:j:r:d:vh")) != -1) {
		errno = 0;
		switch (c) {
		case 's':
			fzc.seed = strtoull(optarg, &end, 0);
			break;
		case 't':
			fzc.seconds = strtoul(optarg, &end, 0);
			break;
		case 'n':
			run.max_seqs = strtoull(optarg, &end, 0);
			break;
		case 'j':
			fzc.threads = strtoul(optarg, &end, 0);
			if (!fzc.threads || fzc.threads > 64)
				help(argv[0]);
			break;
		case 'r':
			fzc.replay = true;
			run.replay_thread = strtoul(optarg, &end, 0);
			if (*end != ':')
				help(argv[0]);
			run.replay_seq = strtoull(end + 1, &end, 0);
			break;
		case 'v':
			run.verbose = true;
			end = "";
			break;
		case 'd':
			run.other_devs = true;
			fzc.other_path[ZERO] = optarg;
			end = strchr(optarg, ',');
			if (!end)
				help(argv[0]);
			*end++ = '\0';
			fzc.other_path[FULL] = end;
			end = "";
			break;
		default:
			help(argv[0]);
		}
		if (errno || *end)
			help(argv[0]);
	}
	if (optind != argc)
		help(argv[0]);
}

static struct worker *worker_new(unsigned int id)
{
	struct worker *w = calloc(1, sizeof(*w));
	unsigned char *map;
	unsigned int i;

	if (!w)
		return NULL;
	w->id = id;
	for (i = 0; i < NDEV; i++)
		w->dev[i].fd = -1;
	for (i = 0; i < NPIPE; i++) {
		w->pipe[i].rfd = -1;
		w->pipe[i].wfd = -1;
	}
	w->src_fd = -1;
	w->dst_fd = -1;
	w->src = malloc(SRC_MAX);
	w->dst = malloc(DST_MAX);
	w->scratch = malloc(BUF_MAX);
	w->child = mmap(NULL, fzc.pg, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w->child == MAP_FAILED)
		return NULL;
	/* the area, with a PROT_NONE page on either side */
	map = mmap(NULL, BUF_MAX + 3 * fzc.pg, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!w->src || !w->dst || !w->scratch || map == MAP_FAILED ||
	    mprotect(map + fzc.pg, BUF_MAX + fzc.pg, PROT_READ | PROT_WRITE))
		return NULL;
	w->area = map + fzc.pg;
	w->area_end = w->area + BUF_MAX + fzc.pg;
	return w;
}

/* The pattern: never a zero byte, and no period of a page */
static bool pattern_setup(void)
{
	unsigned char *pat;
	size_t i;

	pat = mmap(NULL, PAT_LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pat == MAP_FAILED)
		return false;
	for (i = 0; i < PAT_LEN; i++)
		pat[i] = 1 + (i * 7 + (i >> 9) * 13) % 251;
	fzc.pat = pat;
	/* read-only: pipes may hold its pages (vmsplice), nothing writes it */
	return !mprotect(pat, PAT_LEN, PROT_READ);
}

int main(int argc, char **argv)
{
	unsigned long long nops = 0, nseqs = 0, refused = 0, count[OP_NR] = { 0 };
	struct worker *w[64];
	long long next_progress, secs;
	pthread_t mod_thread;
	unsigned int i, k;
	int fd, err;

	parse(argc, argv);
	for (k = 0; k < OP_NR; k++)
		op_total += ops[k].weight;
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	fzc.pg = page_size();
	run.ko = getenv("ZCDEV_KO");
	fzc.mod_ops = !fzc.replay && !run.other_devs && !geteuid() && run.ko && *run.ko;
	if (fzc.replay)
		fzc.threads = 1;

	if (!pattern_setup()) {
		perror("# the pattern");
		return 2;
	}
	fzc.zp = mmap(NULL, fzc.pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fzc.zp == MAP_FAILED) {
		perror("# mmap");
		return 2;
	}
	printf("# zcdev_fuzz: seed %llu, %u s, %u threads%s\n", fzc.seed, fzc.seconds, fzc.threads,
	       fzc.mod_ops ? ", unloading and reloading zcdev meanwhile" : "");

	fd = open(dev_path(ZERO), O_RDONLY | O_CLOEXEC);
	if (fd < 0 && fzc.mod_ops && away_errno(errno)) {
		err = load_module(run.ko, "");
		if (err)
			printf("# loading %s: %s\n", run.ko, strerror(err));
		fd = open(dev_path(ZERO), O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		fz_fail(NULL, "%s cannot be opened: %s", dev_path(ZERO), strerror(errno));
		printf("0 operations, 0 sequences, seed %llu, 1 violations\n", fzc.seed);
		return 1;
	}
	close(fd);
	fzc.buf_size = splice_buffer_size(run.other_devs);
	fzc.large_bufs = fzc.buf_size > 4096;
	if (fzc.large_bufs)
		printf("# zcdev's buffers carry up to %zu bytes: pipes bounded by slots\n",
		       fzc.buf_size);
	if (not_byte(fzc.zp, fzc.pg, 0) >= 0)
		fz_fail(NULL, "the zero page is not zero at the start");

	run.start = now_ms();
	fzc.deadline = run.start + fzc.seconds * 1000LL;
	for (i = 0; i < fzc.threads; i++) {
		w[i] = worker_new(fzc.replay ? run.replay_thread : i);
		if (!w[i] || pthread_create(&w[i]->thread, NULL, worker_main, w[i])) {
			fprintf(stderr, "# thread %u: cannot start\n", i);
			return 2;
		}
	}
	if (fzc.mod_ops && pthread_create(&mod_thread, NULL, module_main, NULL)) {
		fprintf(stderr, "# the module thread: cannot start\n");
		return 2;
	}

	/*
	 * Progress now and then, for whoever watches (a guest silent for
	 * 60 s is ended), until the workers and then the module thread are
	 * done.  Every call here returns in milliseconds: one that has not
	 * long after the end is stuck, which is a violation too.
	 */
	next_progress = run.start + PROGRESS_MS;
	for (;;) {
		for (i = 0, k = 0; i < fzc.threads; i++)
			k += __atomic_load_n(&w[i]->done, __ATOMIC_ACQUIRE);
		if (k == fzc.threads) {
			fz_stop();	/* -n: the module thread is to end too */
			if (!fzc.mod_ops || __atomic_load_n(&run.mod_done, __ATOMIC_ACQUIRE))
				break;
		}
		if (!fzc.replay && now_ms() > fzc.deadline + HANG_MS)
			stuck(w);
		sleep_ms(100);
		if (now_ms() < next_progress)
			continue;
		next_progress += PROGRESS_MS;
		totals(w, &nops, &nseqs);
		fz_out_lock();
		printf("# %lld s: %llu operations, %llu sequences, %llu unloads\n",
		       (now_ms() - run.start) / 1000, nops, nseqs,
		       __atomic_load_n(&run.unloads, __ATOMIC_RELAXED) +
		       __atomic_load_n(&run.raced_unloads, __ATOMIC_RELAXED) +
		       __atomic_load_n(&run.quiesced_unloads, __ATOMIC_RELAXED));
		fz_out_unlock();
	}
	fz_stop();
	for (i = 0; i < fzc.threads; i++)
		pthread_join(w[i]->thread, NULL);
	if (fzc.mod_ops)
		pthread_join(mod_thread, NULL);
	secs = now_ms() - run.start;

	/* every file closed, every pipe drained: zcdev must go, and come back */
	if (not_byte(fzc.zp, fzc.pg, 0) >= 0)
		fz_fail(NULL, "the zero page is not zero at the end");
	if (fzc.mod_ops) {
		err = unload_within(UNLOAD_MS);
		if (err)
			fz_fail(NULL, "zcdev did not unload within %u ms of the end: %s", UNLOAD_MS,
				strerror(err));
		else
			reload();
	}

	nops = 0;
	nseqs = 0;
	for (i = 0; i < fzc.threads; i++) {
		for (k = 0; k < OP_NR; k++) {
			count[k] += w[i]->count[k];
			nops += w[i]->count[k];
		}
		nseqs += w[i]->seqs;
		refused += w[i]->refused;
	}
	printf("# operations:");
	for (k = 0; k < OP_NR; k++)
		printf("%s %s %llu", k ? "," : "", ops[k].name, count[k]);
	printf("\n# %.1f s, %llu operations a second; %llu opens refused while zcdev was away\n",
	       secs / 1000.0, secs ? nops * 1000 / secs : 0, refused);
	if (fzc.mod_ops) {
		printf("# zcdev unloaded %llu times between sequences,",
		       run.quiesced_unloads);
		printf(" %llu times as they started again, %llu times while in use",
		       run.raced_unloads, run.unloads);
		printf(" (%llu attempts found it busy)\n", run.busy);
		printf("# the longest an idle zcdev took to unload: %lld ms\n",
		       run.unload_wait_max);
	}
	printf("%llu operations, %llu sequences, seed %llu, %u violations\n", nops, nseqs, fzc.seed,
	       fz_violations());
	return fz_violations() ? 1 : 0;
}
