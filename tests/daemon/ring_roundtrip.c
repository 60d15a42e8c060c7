// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ring_roundtrip - one small invocation through libptask as a caller
 * pays for it (push a 4-byte datablock, the one-ptask graph's
 * ptask_empty writes in[0] + 1, pull, map, release), against a 4-byte
 * ping-pong over a UNIX socketpair between two processes in the same
 * run.  A helper for measuring rings against PTASK_TRANSPORT=socket (not
 * a test: it asserts nothing but the results' values).
 *
 * --threads: a pusher thread and a puller thread instead (the pull
 * waits for the output in ptaskd, as on a GPU); reports rounds per
 * second.
 *
 * Usage: ring_roundtrip --ptx bench/kernels.ptx [--iters N] [--threads]
 * Needs a running ptaskd (PTASK_SOCKET, PTASK_MODE=user; PTASK_TRANSPORT
 * picks rings or the socket).  Prints median and p99 in microseconds.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "libptask.h"
#include "bench/read_ptx.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, double *t, int n)
{
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	printf("%-28s median %7.2f us  p99 %7.2f us  (%d rounds)\n", what,
	       t[n / 2], t[(int)((long)n * 99 / 100)], n);
}

static int build(struct ptask_ctx *ctx, const char *ptx, size_t ptx_len,
		 uint32_t *in, uint32_t *out)
{
	const uint32_t one[3] = { 1, 1, 1 };
	uint32_t g, t_in, t_out, p, pin, pout;
	int err;

	err = ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600, &g);
	err = err ?: ptask_template_open(ctx, g, "in", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_GLOBAL, 4, one, &t_in);
	err = err ?: ptask_template_open(ctx, g, "out", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_GLOBAL, 4, one, &t_out);
	err = err ?: ptask_gpu_ptask_open(ctx, g, "empty", ptx, ptx_len,
					  "ptask_empty", 2, &p);
	err = err ?: ptask_port_open(ctx, p, "in", PTASK_PORT_INPUT, 0, t_in, 0, 0, &pin);
	err = err ?: ptask_port_open(ctx, p, "out", PTASK_PORT_OUTPUT, 0, t_out, 1, 0, &pout);
	err = err ?: ptask_set_geometry(ctx, p, one, one, 0);
	err = err ?: ptask_channel_open(ctx, g, "in", 0, pin, 2, 0, in);
	err = err ?: ptask_channel_open(ctx, g, "out", pout, 0, 2, 0, out);
	return err ?: ptask_graph_run(ctx, g);
}

/* One invocation as a caller pays for it; 0 or -errno. */
static int one_round(struct ptask_ctx *ctx, uint32_t in, uint32_t out,
		     uint32_t v)
{
	struct ptask_db *db, *res;
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
	err = err ?: ptask_pull(ctx, out, 10LL * 1000000000, &res);
	if (err)
		return err;
	err = ptask_datablock_map(ctx, res, (void **)&p);
	if (!err && p[0] != v + 1)
		err = -EBADMSG;
	ptask_datablock_release(ctx, res);
	return err;
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
	struct ptask_db *db;
	uint32_t *v;
	int i;

	for (i = 0; !p->err && i < p->iters; i++) {
		p->err = ptask_datablock_create(p->ctx, 0, 4, 0, &db);
		if (p->err)
			break;
		p->err = ptask_datablock_map(p->ctx, db, (void **)&v);
		if (!p->err) {
			v[0] = (uint32_t)i;
			p->err = ptask_push(p->ctx, p->in, db, -1, PTASK_FOREVER);
		}
		ptask_datablock_release(p->ctx, db);
	}
	return NULL;
}

/* A pusher and a puller: rounds per second, or -errno. */
static double threads(struct ptask_ctx *ctx, uint32_t in, uint32_t out,
		      int iters)
{
	struct pusher p = { .ctx = ctx, .in = in, .iters = iters };
	struct ptask_db *res;
	double t0 = now_us();
	pthread_t th;
	uint32_t *v;
	int i, err = 0;

	if (pthread_create(&th, NULL, push_thread, &p))
		return -EAGAIN;
	for (i = 0; !err && i < iters; i++) {
		err = ptask_pull(ctx, out, 10LL * 1000000000, &res);
		if (err)
			break;
		err = ptask_datablock_map(ctx, res, (void **)&v);
		if (!err && v[0] != (uint32_t)i + 1)
			err = -EBADMSG;
		ptask_datablock_release(ctx, res);
	}
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

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ptx", required_argument, NULL, 'p' },
		{ "iters", required_argument, NULL, 'i' },
		{ "threads", no_argument, NULL, 't' },
		{ }
	};
	const char *ptx_path = NULL, *tr = getenv("PTASK_TRANSPORT");
	int iters = 5000, ch, i, err = 0, split = 0;
	struct ptask_ctx *ctx;
	uint32_t in, out;
	size_t ptx_len;
	char what[64];
	double *t;
	char *ptx;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 'p')
			ptx_path = optarg;
		else if (ch == 'i')
			iters = atoi(optarg);
		else if (ch == 't')
			split = 1;
		else
			return 2;
	}
	if (!ptx_path || iters < 100) {
		fprintf(stderr, "usage: ring_roundtrip --ptx FILE [--iters N>=100]\n");
		return 2;
	}
	ptx = read_ptx(ptx_path, &ptx_len);
	t = calloc((size_t)iters, sizeof(*t));
	if (!ptx || !t)
		return 1;
	err = ptask_ctx_open(PTASK_MODE_USER, NULL, &ctx);
	err = err ?: build(ctx, ptx, ptx_len, &in, &out);
	for (i = 0; !err && i < 200; i++)	/* warm up */
		err = one_round(ctx, in, out, (uint32_t)i);
	if (!err && split) {
		double r = threads(ctx, in, out, iters);

		if (r < 0) {
			fprintf(stderr, "ring_roundtrip: %s\n", strerror((int)-r));
			return 1;
		}
		printf("ptask (%s), pusher + puller threads: %.0f rounds/s\n",
		       tr && *tr ? tr : "ring", r);
		ptask_ctx_close(ctx);
		return 0;
	}
	for (i = 0; !err && i < iters; i++) {
		double t0 = now_us();

		err = one_round(ctx, in, out, (uint32_t)i);
		t[i] = now_us() - t0;
	}
	if (err) {
		fprintf(stderr, "ring_roundtrip: %s\n", strerror(-err));
		return 1;
	}
	snprintf(what, sizeof(what), "ptask (%s)", tr && *tr ? tr : "ring");
	report(what, t, iters);
	ptask_ctx_close(ctx);
	if (pingpong(t, iters))
		return 1;
	report("socketpair ping-pong", t, iters);
	free(t);
	free(ptx);
	return 0;
}
