// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ptask_gpu - what a ptask costs on a GPU, through libptask and ptaskd:
 *
 *   dispatch: push a 4-byte datablock into a one-ptask graph whose GPU
 *             ptask (ptask_empty) writes a 4-byte output; pull it.  The
 *             round trip, median over --iters, in microseconds.
 *   transfer: the same graph with a 64 MiB input: every push makes the
 *             input valid on the GPU again (one host-to-device copy of
 *             the datablock's own pages, pinned once per arena); the
 *             round trip minus the dispatch median gives the copy, and
 *             64 MiB over that gives GB/s.
 *
 * Usage: ptask_gpu --ptx FILE [--iters N] [--transfer-mib M]
 * Needs a running ptaskd (PTASK_MODE / PTASK_SOCKET as for any client).
 * Prints "dispatch_us=<median>" and "transfer_gbps=<x>" lines; checks every
 * result (in[0] + 1) before it counts.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "libptask.h"
#include "bench/read_ptx.h"

struct graph {
	uint32_t g, in, out;
};

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

static int build(struct ptask_ctx *ctx, const char *ptx, size_t ptx_len,
		 uint64_t in_bytes, struct graph *gr)
{
	const uint32_t one[3] = { 1, 1, 1 }, grid[3] = { 1, 1, 1 };
	const uint32_t in_dims[3] = { (uint32_t)(in_bytes / 4), 1, 1 };
	uint32_t t_in, t_out, p, pin, pout;
	int err;

	err = ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600, &gr->g);
	err = err ?: ptask_template_open(ctx, gr->g, "in", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_GLOBAL, 4, in_dims, &t_in);
	err = err ?: ptask_template_open(ctx, gr->g, "out", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_GLOBAL, 4, one, &t_out);
	err = err ?: ptask_gpu_ptask_open(ctx, gr->g, "empty", ptx, ptx_len,
					  "ptask_empty", 2, &p);
	err = err ?: ptask_port_open(ctx, p, "in", PTASK_PORT_INPUT, 0, t_in, 0, 0, &pin);
	err = err ?: ptask_port_open(ctx, p, "out", PTASK_PORT_OUTPUT, 0, t_out, 1, 0, &pout);
	err = err ?: ptask_set_geometry(ctx, p, grid, grid, 0);
	err = err ?: ptask_channel_open(ctx, gr->g, "in", 0, pin, 2, 0, &gr->in);
	err = err ?: ptask_channel_open(ctx, gr->g, "out", pout, 0, 2, 0, &gr->out);
	return err ?: ptask_graph_run(ctx, gr->g);
}

/* @iters round trips; the median in us, or a negative errno. */
static double rounds(struct ptask_ctx *ctx, struct graph *gr, uint64_t bytes,
		     int iters)
{
	struct ptask_db *in, *out;
	double *t, median;
	uint32_t *pin, *pout;
	int i, err;

	t = calloc((size_t)iters, sizeof(*t));
	err = t ? ptask_datablock_create(ctx, 0, bytes, 0, &in) : -ENOMEM;
	err = err ?: ptask_datablock_map(ctx, in, (void **)&pin);
	for (i = 0; !err && i < iters; i++) {
		double t0 = now_us();

		pin[0] = (uint32_t)i;
		err = ptask_push(ctx, gr->in, in, -1, PTASK_FOREVER) ?:
		      ptask_pull(ctx, gr->out, 10LL * 1000000000, &out);
		if (err)
			break;
		t[i] = now_us() - t0;
		err = ptask_datablock_map(ctx, out, (void **)&pout);
		if (!err && pout[0] != (uint32_t)i + 1) {
			fprintf(stderr, "ptask_gpu: round %d: got %u, want %u\n", i,
				pout[0], (uint32_t)i + 1);
			err = -EBADMSG;
		}
		ptask_datablock_release(ctx, out);
	}
	if (err) {
		free(t);
		return err;
	}
	ptask_datablock_release(ctx, in);
	qsort(t, (size_t)iters, sizeof(*t), cmp_double);
	median = t[iters / 2];
	free(t);
	return median;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "ptx", required_argument, NULL, 'p' },
		{ "iters", required_argument, NULL, 'i' },
		{ "transfer-mib", required_argument, NULL, 't' },
		{ }
	};
	const char *ptx_path = NULL;
	int iters = 2000, mib = 64, ch;
	struct graph small, big;
	struct ptask_ctx *ctx;
	double d, x;
	size_t ptx_len;
	char *ptx;
	int err;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 'p')
			ptx_path = optarg;
		else if (ch == 'i')
			iters = atoi(optarg);
		else if (ch == 't')
			mib = atoi(optarg);
		else
			return 2;
	}
	if (!ptx_path || iters < 3 || mib < 1 || mib > 256) {
		fprintf(stderr, "usage: ptask_gpu --ptx FILE [--iters N>=3] [--transfer-mib 1..256]\n");
		return 2;
	}
	ptx = read_ptx(ptx_path, &ptx_len);
	if (!ptx) {
		fprintf(stderr, "ptask_gpu: cannot read %s\n", ptx_path);
		return 1;
	}
	err = ptask_ctx_open(PTASK_MODE_AUTO, NULL, &ctx);
	if (err) {
		fprintf(stderr, "ptask_gpu: no ptask: %s\n", strerror(-err));
		return 1;
	}
	printf("ptask_gpu: %s mode, %d iterations\n", ptask_mode_name(ptask_ctx_mode(ctx)), iters);
	err = build(ctx, ptx, ptx_len, 4, &small) ?:
	      build(ctx, ptx, ptx_len, (uint64_t)mib << 20, &big);
	if (err) {
		fprintf(stderr, "ptask_gpu: graph: %s\n", strerror(-err));
		return 1;
	}
	d = rounds(ctx, &small, 4, iters);
	x = d < 0 ? d : rounds(ctx, &big, (uint64_t)mib << 20, iters / 20 + 3);
	if (d < 0 || x < 0) {
		fprintf(stderr, "ptask_gpu: %s\n", strerror((int)-(d < 0 ? d : x)));
		return 1;
	}
	printf("dispatch_us=%.2f\n", d);
	printf("transfer_round_us=%.1f (%d MiB input)\n", x, mib);
	printf("transfer_gbps=%.2f\n", (double)((uint64_t)mib << 20) / ((x - d) * 1e3));
	ptask_ctx_close(ctx);
	free(ptx);
	return 0;
}
