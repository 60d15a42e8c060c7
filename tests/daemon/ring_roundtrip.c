// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ring_roundtrip - one small invocation through libptask as a caller
 * pays for it (create a 4-byte datablock, map, write, push, release,
 * pull, map, check, release), over the transports named, in alternating
 * blocks of the same run, beside a 4-byte ping-pong over a UNIX
 * socketpair between two processes.  A helper for measuring rings
 * against the path without them (not a test: it asserts nothing but the
 * results' values).  One source for both modes:
 *
 * User mode (the default): a running ptaskd (PTASK_SOCKET) runs the
 * one-ptask graph's ptask_empty, which writes in[0] + 1; --ptx names its
 * PTX.  Transports: ring and socket ($PTASK_TRANSPORT, or ring, unless
 * --transport says).  Built by `make check-daemon` for the host:
 *   build/tests/helpers/ring_roundtrip --ptx bench/kernels.ptx
 *
 * Kernel mode (--kernel): ptask.ko's rings against PTASK_TRANSPORT=ioctl
 * (unless --transport says); the executor is the kselftests'
 * test_executor (started here from $PTASK_TEST_EXECUTOR, or
 * /bin/test_executor; it copies input 0 to output 0), so only the ratio
 * means something in the emulated guest.  Also: whether the ring
 * context maps a ring region, and create + release pairs alone (the
 * system calls: rings, one ENTER per create with the release riding
 * along; ioctl, two).  Built static for the guest by `make bench-progs`
 * and run there:
 *   PTASK_VM_ARGS="--kernel --iters 5000" tests/vm/run.sh bench \
 *	kmod/ptask.ko build/vm/ring_roundtrip \
 *	--helper build/kselftest/test_executor
 *
 * Usage: ring_roundtrip [--kernel] [--ptx FILE] [--iters N>=100]
 *			 [--transport NAME[,NAME]] [--threads]
 * Medians and p99 in microseconds, after 200 warm-up rounds per
 * transport, over BLOCKS alternating blocks.  --threads: a pusher thread
 * and a puller thread instead (the pull waits for the output, as on a
 * GPU), with the first transport; rounds per second.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "libptask.h"
#include "bench/read_ptx.h"
#include "common/ring.h"

#define BLOCKS		8
#define WAYS_MAX	2
#define WARM_UP		200
#define PULL_NS		(10LL * 1000000000)

/**
 * struct rt - what every round needs
 * @mode: PTASK_MODE_USER or PTASK_MODE_KERNEL
 * @code: the ptask's code (user mode: PTX; kernel mode: a stand-in the
 *	copying executor never runs)
 * @code_len: its bytes
 * @entry: its kernel's name
 * @delta: what the ptask adds to the word (1: ptask_empty; 0: a copy)
 */
struct rt {
	enum ptask_mode mode;
	const char *code;
	size_t code_len;
	const char *entry;
	uint32_t delta;
};

/**
 * struct way - one transport under measurement
 * @transport: its PTASK_TRANSPORT
 * @ctx: a context opened with it
 * @in: the graph's input channel
 * @out: its output channel
 * @t: round times (us)
 * @n: rounds measured
 */
struct way {
	const char *transport;
	struct ptask_ctx *ctx;
	uint32_t in, out;
	double *t;
	int n;
};

static double now_us(void)
{
	return (double)pc_ring_now_ns() / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sort @t and print its median and p99; returns the median. */
static double report(const char *what, double *t, int n)
{
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	printf("%-28s median %7.2f us  p99 %7.2f us  (%d rounds)\n", what,
	       t[n / 2], t[(int)((long)n * 99 / 100)], n);
	return t[n / 2];
}

static int build(const struct rt *rt, struct ptask_ctx *ctx, uint32_t *in,
		 uint32_t *out)
{
	const uint32_t one[3] = { 1, 1, 1 };
	uint32_t g, t_in, t_out, p, pin, pout;
	int err;

	err = ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600, &g);
	err = err ?: ptask_template_open(ctx, g, "in", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_GLOBAL, 4, one, &t_in);
	err = err ?: ptask_template_open(ctx, g, "out", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_GLOBAL, 4, one, &t_out);
	err = err ?: ptask_gpu_ptask_open(ctx, g, "rt", rt->code, rt->code_len,
					  rt->entry, 2, &p);
	err = err ?: ptask_port_open(ctx, p, "in", PTASK_PORT_INPUT, 0, t_in, 0, 0, &pin);
	err = err ?: ptask_port_open(ctx, p, "out", PTASK_PORT_OUTPUT, 0, t_out, 1, 0, &pout);
	err = err ?: ptask_set_geometry(ctx, p, one, one, 0);
	err = err ?: ptask_channel_open(ctx, g, "in", 0, pin, 2, 0, in);
	err = err ?: ptask_channel_open(ctx, g, "out", pout, 0, 2, 0, out);
	return err ?: ptask_graph_run(ctx, g);
}

/* Create, map, write @v and push a datablock; release it.  0 or -errno. */
static int push_one(struct ptask_ctx *ctx, uint32_t in, uint32_t v)
{
	struct ptask_db *db;
	uint32_t *p;
	int err;

	err = ptask_datablock_create(ctx, 0, 4, 0, &db);
	if (err)
		return err;
	err = ptask_datablock_map(ctx, db, (void **)&p);
	if (!err) {
		p[0] = v;
		err = ptask_push(ctx, in, db, -1, PTASK_FOREVER);
	}
	ptask_datablock_release(ctx, db);
	return err;
}

/* Pull, map and check for @want; release.  0 or -errno. */
static int pull_one(struct ptask_ctx *ctx, uint32_t out, uint32_t want)
{
	struct ptask_db *res;
	uint32_t *p;
	int err;

	err = ptask_pull(ctx, out, PULL_NS, &res);
	if (err)
		return err;
	err = ptask_datablock_map(ctx, res, (void **)&p);
	if (!err && p[0] != want)
		err = -EBADMSG;
	ptask_datablock_release(ctx, res);
	return err;
}

/* One invocation as a caller pays for it; 0 or -errno. */
static int one_round(const struct rt *rt, struct way *w, uint32_t v)
{
	return push_one(w->ctx, w->in, v) ?: pull_one(w->ctx, w->out,
						      v + rt->delta);
}

static int way_open(const struct rt *rt, struct way *w, int iters)
{
	int err, i;

	setenv("PTASK_TRANSPORT", w->transport, 1);
	err = ptask_ctx_open(rt->mode, NULL, &w->ctx);
	unsetenv("PTASK_TRANSPORT");
	if (err) {
		w->ctx = NULL;
		return err;
	}
	err = build(rt, w->ctx, &w->in, &w->out);
	for (i = 0; !err && i < WARM_UP; i++)
		err = one_round(rt, w, (uint32_t)i);
	w->t = calloc((size_t)iters, sizeof(double));
	return err ?: (w->t ? 0 : -ENOMEM);
}

static int way_run(const struct rt *rt, struct way *w, int rounds)
{
	int i, err = 0;

	for (i = 0; !err && i < rounds; i++) {
		double t0 = now_us();

		err = one_round(rt, w, (uint32_t)i);
		w->t[w->n++] = now_us() - t0;
	}
	return err;
}

static void way_close(struct way *w)
{
	if (w->ctx)
		ptask_ctx_close(w->ctx);
	free(w->t);
}

struct pusher {
	struct ptask_ctx *ctx;
	uint32_t in;
	int iters;
	int err;
};

static void *push_thread(void *arg)
{
	struct pusher *p = arg;
	int i;

	for (i = 0; !p->err && i < p->iters; i++)
		p->err = push_one(p->ctx, p->in, (uint32_t)i);
	return NULL;
}

/* A pusher and a puller: rounds per second, or -errno. */
static double threads(const struct rt *rt, struct way *w, int iters)
{
	struct pusher p = { .ctx = w->ctx, .in = w->in, .iters = iters };
	double t0 = now_us();
	pthread_t th;
	int i, err = 0;

	if (pthread_create(&th, NULL, push_thread, &p))
		return -EAGAIN;
	for (i = 0; !err && i < iters; i++)
		err = pull_one(w->ctx, w->out, (uint32_t)i + rt->delta);
	pthread_join(th, NULL);
	if (err || p.err)
		return err ? err : p.err;
	return iters / ((now_us() - t0) / 1e6);
}

static int pingpong(double *t, int iters)
{
	int sv[2], i;
	uint32_t v = 0;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		close(sv[0]);
		while (read(sv[1], &v, 4) == 4) {
			v++;
			if (write(sv[1], &v, 4) != 4)
				break;
		}
		_exit(0);
	}
	close(sv[1]);
	for (i = 0; i < iters; i++) {
		double t0 = now_us();

		if (write(sv[0], &i, 4) != 4 || read(sv[0], &v, 4) != 4)
			break;
		t[i] = now_us() - t0;
	}
	close(sv[0]);
	waitpid(pid, NULL, 0);
	return i == iters ? 0 : -EIO;
}

/* Does this process map a kernel-mode ring region (offset 2^48 up)? */
static int maps_a_ring(void)
{
	char line[512], dev[64];
	unsigned long long off;
	FILE *f = fopen("/proc/self/maps", "re");
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %llx %*s %*s %63s", &off, dev) == 2 &&
		    off >= (1ULL << 48))
			found = 1;
	fclose(f);
	return found;
}

/*
 * Create and release, no executor, no map: the calls alone.
 * Microseconds per pair, or -1.
 */
static double create_release(struct ptask_ctx *ctx, int n)
{
	struct ptask_db *db;
	double t0 = now_us();
	int i;

	for (i = 0; i < n; i++) {
		if (ptask_datablock_create(ctx, 0, 4, 0, &db))
			return -1;
		ptask_datablock_release(ctx, db);
	}
	return (now_us() - t0) / n;
}

/* Create + release pairs per way in alternating blocks; 0 or -EIO. */
static int create_release_report(struct way *w, int n_ways, int iters)
{
	double cr[WAYS_MAX][BLOCKS];
	int b, i;

	for (b = 0; b < BLOCKS; b++)
		for (i = 0; i < n_ways; i++) {
			cr[i][b] = create_release(w[i].ctx, iters / 2);
			if (cr[i][b] < 0)
				return -EIO;
		}
	for (i = 0; i < n_ways; i++) {
		qsort(cr[i], BLOCKS, sizeof(double), cmp_double);
		printf("create+release, %-6s: %.2f us per pair (median of %d blocks, min %.2f)\n",
		       w[i].transport, cr[i][BLOCKS / 2], BLOCKS, cr[i][0]);
	}
	if (n_ways == 2)
		printf("ratio %s/%s (create+release): %.2f\n", w[0].transport,
		       w[1].transport, cr[0][BLOCKS / 2] / cr[1][BLOCKS / 2]);
	return 0;
}

/* Start the copying executor; wait until it registered.  Its pid. */
static pid_t executor_start(void)
{
	const char *exe = getenv("PTASK_TEST_EXECUTOR");
	pid_t ex = fork();
	int i;

	if (ex == 0) {
		execl(exe ? exe : "/bin/test_executor", "test_executor",
		      (char *)NULL);
		_exit(127);
	}
	for (i = 0; ex > 0 && i < 200; i++) {
		FILE *f = fopen("/sys/kernel/ptask/executors", "re");
		int n = 0;

		if (f && fscanf(f, "%d", &n) != 1)
			n = 0;
		if (f)
			fclose(f);
		if (n > 0)
			break;
		usleep(50000);
	}
	return ex;
}

/* Split "a[,b]" into @w's transports; the count, or -EINVAL. */
static int parse_transports(char *list, struct way *w)
{
	char *save = NULL, *name;
	int n = 0;

	for (name = strtok_r(list, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		if (n == WAYS_MAX || !*name)
			return -EINVAL;
		w[n++].transport = name;
	}
	return n ? n : -EINVAL;
}

static void usage(void)
{
	fprintf(stderr, "usage: ring_roundtrip [--kernel] [--ptx FILE] [--iters N>=100]\n"
		"                      [--transport NAME[,NAME]] [--threads]\n"
		"  user mode needs --ptx (bench/kernels.ptx); kernel mode takes none\n");
}

/* Measure @n_ways ways; 0 or -errno. */
static int measure(const struct rt *rt, struct way *w, int n_ways, int iters,
		   bool split)
{
	char what[64];
	double m[WAYS_MAX], r;
	int b, i, err = 0;

	for (i = 0; !err && i < n_ways; i++) {
		err = way_open(rt, &w[i], iters);
		if (err)
			fprintf(stderr, "ring_roundtrip: %s mode, PTASK_TRANSPORT=%s: the context or its warm-up failed\n",
				rt->mode == PTASK_MODE_KERNEL ? "kernel" : "user",
				w[i].transport);
	}
	if (err)
		return err;
	if (rt->mode == PTASK_MODE_KERNEL)
		printf("ring context maps a ring region: %s\n",
		       maps_a_ring() > 0 ? "yes" : "NO");
	if (split) {
		r = threads(rt, &w[0], iters);
		if (r < 0)
			return (int)r;
		printf("ptask (%s), pusher + puller threads: %.0f rounds/s\n",
		       w[0].transport, r);
		return 0;
	}
	for (b = 0; !err && b < BLOCKS; b++)
		for (i = 0; !err && i < n_ways; i++)
			err = way_run(rt, &w[i], iters / BLOCKS);
	if (err)
		return err;
	for (i = 0; i < n_ways; i++) {
		snprintf(what, sizeof(what), "ptask (%s, %s)",
			 rt->mode == PTASK_MODE_KERNEL ? "kernel" : "user",
			 w[i].transport);
		m[i] = report(what, w[i].t, w[i].n);
	}
	if (n_ways == 2)
		printf("ratio %s/%s (median): %.2f\n", w[0].transport,
		       w[1].transport, m[0] / m[1]);
	if (rt->mode == PTASK_MODE_KERNEL)
		return create_release_report(w, n_ways, iters);
	return 0;
}

/* The IPC floor, once the contexts are closed; 0 or -errno. */
static int pingpong_report(int iters)
{
	double *t = calloc((size_t)iters, sizeof(*t));
	int err = t ? pingpong(t, iters) : -ENOMEM;

	if (!err)
		report("socketpair ping-pong", t, iters);
	free(t);
	return err;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kernel", no_argument, NULL, 'k' },
		{ "ptx", required_argument, NULL, 'p' },
		{ "iters", required_argument, NULL, 'i' },
		{ "transport", required_argument, NULL, 'T' },
		{ "threads", no_argument, NULL, 't' },
		{ }
	};
	const char *ptx_path = NULL, *env = getenv("PTASK_TRANSPORT");
	struct rt rt = { .mode = PTASK_MODE_USER, .entry = "ptask_empty",
			 .delta = 1 };
	struct way w[WAYS_MAX] = { };
	char *transports = NULL, *owned = NULL, *ptx = NULL, *end;
	int iters = 5000, ch, i, n_ways, err;
	bool split = false;
	pid_t ex = -1;
	long v;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'k':
			rt.mode = PTASK_MODE_KERNEL;
			break;
		case 'p':
			ptx_path = optarg;
			break;
		case 'i':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (*end || errno || v < 100 || v > 10000000) {
				fprintf(stderr, "ring_roundtrip: --iters '%s': a whole number from 100 to 10000000\n",
					optarg);
				return 2;
			}
			iters = (int)v;
			break;
		case 'T':
			transports = optarg;
			break;
		case 't':
			split = true;
			break;
		default:
			usage();
			return 2;
		}
	}
	if (optind < argc || (rt.mode == PTASK_MODE_USER) != !!ptx_path) {
		usage();
		return 2;
	}
	if (!transports)
		transports = owned = strdup(rt.mode == PTASK_MODE_KERNEL ?
					    "ring,ioctl" :
					    env && *env ? env : "ring");
	if (!transports)
		return 1;
	n_ways = parse_transports(transports, w);
	if (n_ways < 0) {
		fprintf(stderr, "ring_roundtrip: --transport: one or two names, comma-separated\n");
		return 2;
	}
	if (rt.mode == PTASK_MODE_USER) {
		ptx = read_ptx(ptx_path, &rt.code_len);
		if (!ptx) {
			fprintf(stderr, "ring_roundtrip: cannot read %s\n",
				ptx_path);
			return 1;
		}
		rt.code = ptx;
	} else {
		static const char code[] = "// test_executor copies; no code runs\n";

		rt.code = code;
		rt.code_len = sizeof(code);
		rt.entry = "copy";
		rt.delta = 0;
		ex = executor_start();
	}
	err = measure(&rt, w, n_ways, iters, split);
	if (err)
		fprintf(stderr, "ring_roundtrip: %s\n", strerror(-err));
	for (i = 0; i < n_ways; i++)
		way_close(&w[i]);
	if (ex > 0) {
		kill(ex, SIGTERM);
		waitpid(ex, NULL, 0);
	}
	if (!err && !split) {
		err = pingpong_report(iters);
		if (err)
			fprintf(stderr, "ring_roundtrip: ping-pong: %s\n",
				strerror(-err));
	}
	free(owned);
	free(ptx);
	return err ? 1 : 0;
}
