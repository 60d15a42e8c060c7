// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kring_roundtrip - one small invocation through libptask in kernel mode
 * as a caller pays for it (create a 4-byte datablock, map, write, push,
 * release, pull, map, check, release), with ptask.ko's rings and with
 * PTASK_TRANSPORT=ioctl, alternating in the same run; the executor is
 * the kselftests' test_executor (a second process that copies input 0
 * to output 0).  Only the ratio means something in the emulated guest.
 * A measurement helper, not a test (it asserts only the values).
 *
 * Build (static, for the guest) and run:
 *   cc -static -O2 -I. -Ilibptask -Iuapi -o build/kring_roundtrip \
 *	tests/kselftest/bench/kring_roundtrip.c build/lib/libptask.a \
 *	build/lib/libptask-common.a -lpthread
 *   PTASK_VM_ARGS="5000" tests/vm/run.sh bench kmod/ptask.ko \
 *	build/kring_roundtrip --helper build/kselftest/test_executor
 *
 * Usage: kring_roundtrip [ITERATIONS] (default 3000, after 200 warm-up
 * rounds, in 8 alternating blocks per transport)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "libptask.h"

#define BLOCKS	8

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

static int build(struct ptask_ctx *ctx, uint32_t *in, uint32_t *out)
{
	static const char code[] = "// test_executor copies; no code runs\n";
	const uint32_t one[3] = { 1, 1, 1 };
	uint32_t g, t, p, pin, pout;
	int err;

	err = ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600, &g);
	err = err ?: ptask_template_open(ctx, g, "w", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_GLOBAL, 4, one, &t);
	err = err ?: ptask_gpu_ptask_open(ctx, g, "copy", code, sizeof(code),
					  "copy", 2, &p);
	err = err ?: ptask_port_open(ctx, p, "in", PTASK_PORT_INPUT, 0, t, 0,
				     0, &pin);
	err = err ?: ptask_port_open(ctx, p, "out", PTASK_PORT_OUTPUT, 0, t, 1,
				     0, &pout);
	err = err ?: ptask_channel_open(ctx, g, "in", 0, pin, 2, 0, in);
	err = err ?: ptask_channel_open(ctx, g, "out", pout, 0, 2, 0, out);
	return err ?: ptask_graph_run(ctx, g);
}

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
	if (!err && p[0] != v)
		err = -EBADMSG;
	ptask_datablock_release(ctx, res);
	return err;
}

/* Does this process map a ring region (an offset from 2^48 up)? */
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
 * Create and release, no executor, no map: the system calls alone (rings:
 * one ENTER per create, the release riding with the next; ioctl: two).
 * Microseconds per pair.
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

struct way {
	const char *transport;
	struct ptask_ctx *ctx;
	uint32_t in, out;
	double *t;
	int n;
};

static int way_open(struct way *w, int iters)
{
	int err, i;

	setenv("PTASK_TRANSPORT", w->transport, 1);
	err = ptask_ctx_open(PTASK_MODE_KERNEL, NULL, &w->ctx);
	unsetenv("PTASK_TRANSPORT");
	err = err ?: build(w->ctx, &w->in, &w->out);
	for (i = 0; !err && i < 200; i++)
		err = one_round(w->ctx, w->in, w->out, (uint32_t)i);
	w->t = calloc((size_t)iters, sizeof(double));
	return err ?: (w->t ? 0 : -ENOMEM);
}

static int way_run(struct way *w, int rounds)
{
	int i, err = 0;

	for (i = 0; !err && i < rounds; i++) {
		double t0 = now_us();

		err = one_round(w->ctx, w->in, w->out, (uint32_t)i);
		w->t[w->n++] = now_us() - t0;
	}
	return err;
}

static double way_report(struct way *w)
{
	double med;

	qsort(w->t, (size_t)w->n, sizeof(double), cmp_double);
	med = w->t[w->n / 2];
	printf("kernel mode, %-5s: median %8.1f us  p99 %8.1f us  (%d rounds)\n",
	       w->transport, med, w->t[w->n * 99 / 100], w->n);
	return med;
}

int main(int argc, char **argv)
{
	struct way w[2] = { { .transport = "ring" }, { .transport = "ioctl" } };
	int iters = argc > 1 ? atoi(argv[1]) : 3000, b, i, err = 0;
	const char *exe = getenv("PTASK_TEST_EXECUTOR");
	double m[2], cr[2][BLOCKS];
	pid_t ex;

	if (iters < BLOCKS * 10)
		return 2;
	ex = fork();
	if (ex == 0) {
		execl(exe ? exe : "/bin/test_executor", "test_executor",
		      (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 200; i++) {	/* until it registered */
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
	err = way_open(&w[0], iters);
	/* The ring context's calls went by a ring it mapped. */
	if (!err)
		printf("ring context maps a ring region: %s\n",
		       maps_a_ring() > 0 ? "yes" : "NO");
	err = err ?: way_open(&w[1], iters);
	for (b = 0; !err && b < BLOCKS; b++)
		for (i = 0; !err && i < 2; i++)
			err = way_run(&w[i], iters / BLOCKS);
	if (err) {
		fprintf(stderr, "kring_roundtrip: %s\n", strerror(-err));
	} else {
		m[0] = way_report(&w[0]);
		m[1] = way_report(&w[1]);
		printf("ratio ring/ioctl (median): %.2f\n", m[0] / m[1]);
		/* Alternating blocks again; the median block of each. */
		for (b = 0; b < BLOCKS; b++)
			for (i = 0; i < 2; i++)
				cr[i][b] = create_release(w[i].ctx, iters / 2);
		for (i = 0; i < 2; i++) {
			qsort(cr[i], BLOCKS, sizeof(double), cmp_double);
			printf("create+release, %-5s: %.2f us per pair (median of %d blocks, min %.2f)\n",
			       w[i].transport, cr[i][BLOCKS / 2], BLOCKS,
			       cr[i][0]);
		}
		printf("ratio ring/ioctl (create+release): %.2f\n",
		       cr[0][BLOCKS / 2] / cr[1][BLOCKS / 2]);
	}
	ptask_ctx_close(w[0].ctx);
	ptask_ctx_close(w[1].ctx);
	kill(ex, SIGTERM);
	waitpid(ex, NULL, 0);
	return err ? 1 : 0;
}
