// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * shared_cost - what a graph other uids may open costs a round in user
 * mode (issue 13, item 3): its datablocks get memfds of their own
 * (daemon/user/arena.h, "Own arenas") instead of places in the uid's
 * arena.  Two graphs of one vec_add (the tests' kernel, run by its host
 * twin on the cpu and sim backends), one 0600 and one 0666, and rounds
 * alternated between them: create the two inputs with the graph's
 * template, map and fill them, push them, pull the result, map and check
 * it, release all three.  Everything a caller pays, client and daemon.
 *
 *   shared_cost [--socket PATH] [--floats N] [--rounds R] [--sets S]
 *
 * Prints one line per graph kind:
 *   graph=private|shared floats=N rounds=R median_us=.. p90_us=..
 * and last a ratio line: shared_over_private=..
 * (the medians of S sets of R rounds each, sets alternated).  Exit
 * status 0, 1 on an error or a wrong result, 2 on a bad option.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "libptask.h"
#include "tests/twins/test_code.h"

struct one_graph {
	uint32_t graph, vec, a, b, out;
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

static int build(struct ptask_ctx *ctx, uint32_t mode, uint32_t floats,
		 struct one_graph *g)
{
	const uint32_t dims[3] = { floats, 1, 1 }, one[3] = { 1, 1, 1 };
	uint32_t n_tmpl, pt, pa, pb, pc, pn, cn;
	struct ptask_db *db;
	int32_t *n;
	int err;

	err = ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, mode, &g->graph);
	err = err ?: ptask_template_open(ctx, g->graph, "vec", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_GLOBAL, sizeof(float), dims, &g->vec);
	err = err ?: ptask_template_open(ctx, g->graph, "n", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_PARAM, sizeof(int32_t), one, &n_tmpl);
	err = err ?: ptask_gpu_ptask_open(ctx, g->graph, "add", ptask_test_code,
					  sizeof(ptask_test_code), "vec_add", 4, &pt);
	err = err ?: ptask_port_open(ctx, pt, "a", PTASK_PORT_INPUT, 0, g->vec, 0, 0, &pa);
	err = err ?: ptask_port_open(ctx, pt, "b", PTASK_PORT_INPUT, 0, g->vec, 1, 0, &pb);
	err = err ?: ptask_port_open(ctx, pt, "c", PTASK_PORT_OUTPUT, 0, g->vec, 2, 0, &pc);
	err = err ?: ptask_port_open(ctx, pt, "n", PTASK_PORT_STICKY, 0, n_tmpl, 3, 0, &pn);
	err = err ?: ptask_channel_open(ctx, g->graph, "a", 0, pa, 2, 0, &g->a);
	err = err ?: ptask_channel_open(ctx, g->graph, "b", 0, pb, 2, 0, &g->b);
	err = err ?: ptask_channel_open(ctx, g->graph, "n", 0, pn, 1, 0, &cn);
	err = err ?: ptask_channel_open(ctx, g->graph, "out", pc, 0, 2, 0, &g->out);
	err = err ?: ptask_datablock_create(ctx, n_tmpl, 0, 1, &db);
	if (err)
		return err;
	err = ptask_datablock_map(ctx, db, (void **)&n);
	if (!err) {
		*n = (int32_t)floats;
		err = ptask_push(ctx, cn, db, -1, PTASK_FOREVER);
	}
	ptask_datablock_release(ctx, db);
	return err ?: ptask_graph_run(ctx, g->graph);
}

static int input(struct ptask_ctx *ctx, const struct one_graph *g,
		 uint32_t ch, uint32_t floats, float v)
{
	struct ptask_db *db;
	float *p;
	uint32_t i;
	int err = ptask_datablock_create(ctx, g->vec, 0, 0, &db);

	if (err)
		return err;
	err = ptask_datablock_map(ctx, db, (void **)&p);
	for (i = 0; !err && i < floats; i++)
		p[i] = v + (float)i;
	err = err ?: ptask_push(ctx, ch, db, -1, PTASK_FOREVER);
	ptask_datablock_release(ctx, db);
	return err;
}

/* One round; -EBADMSG on a wrong result. */
static int round_trip(struct ptask_ctx *ctx, const struct one_graph *g,
		      uint32_t floats, int k)
{
	struct ptask_db *db;
	const float *p;
	int err;

	err = input(ctx, g, g->a, floats, (float)k);
	err = err ?: input(ctx, g, g->b, floats, 1.0f);
	err = err ?: ptask_pull(ctx, g->out, 10LL * 1000000000, &db);
	if (err)
		return err;
	err = ptask_datablock_map(ctx, db, (void **)&p);
	if (!err && (p[0] != (float)k + 1.0f ||
		     p[floats - 1] != (float)k + 1.0f + 2.0f * (float)(floats - 1)))
		err = -EBADMSG;
	ptask_datablock_release(ctx, db);
	return err;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "floats", required_argument, NULL, 'f' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "sets", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const names[2] = { "private", "shared" };
	uint32_t floats = 1024, rounds = 200, sets = 10, s, k;
	const char *socket = NULL;
	struct one_graph g[2];
	struct ptask_ctx *ctx;
	double *lat[2], med[2];
	int ch, err = 0, i;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 's': socket = optarg; break;
		case 'f': floats = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'r': rounds = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'S': sets = (uint32_t)strtoul(optarg, NULL, 0); break;
		default: goto usage;
		}
	}
	if (optind != argc || floats < 1 || floats > (1U << 24) || !rounds ||
	    rounds > 100000 || !sets || sets > 1000)
		goto usage;
	err = ptask_ctx_open(PTASK_MODE_USER, socket, &ctx);
	if (err) {
		fprintf(stderr, "shared_cost: no ptaskd: %s\n", strerror(-err));
		return 1;
	}
	err = build(ctx, 0600, floats, &g[0]) ?: build(ctx, 0666, floats, &g[1]);
	lat[0] = calloc(sets, sizeof(double));
	lat[1] = calloc(sets, sizeof(double));
	if (!err && (!lat[0] || !lat[1]))
		err = -ENOMEM;
	/* warm-up: both graphs, a set each */
	for (i = 0; !err && i < 2; i++)
		for (k = 0; !err && k < rounds; k++)
			err = round_trip(ctx, &g[i], floats, (int)k);
	for (s = 0; !err && s < sets; s++)
		for (i = 0; !err && i < 2; i++) {
			double t0 = now_us();

			for (k = 0; !err && k < rounds; k++)
				err = round_trip(ctx, &g[(i + s) % 2], floats,
						 (int)k);
			lat[(i + s) % 2][s] = (now_us() - t0) / rounds;
		}
	if (err) {
		fprintf(stderr, "shared_cost: %s\n", strerror(-err));
		return 1;
	}
	for (i = 0; i < 2; i++) {
		qsort(lat[i], sets, sizeof(double), cmp_double);
		med[i] = lat[i][sets / 2];
		printf("graph=%s floats=%u rounds=%u sets=%u median_us=%.2f p90_us=%.2f\n",
		       names[i], floats, rounds, sets, med[i],
		       lat[i][sets * 9 / 10]);
	}
	printf("shared_over_private=%.3f\n", med[1] / med[0]);
	ptask_graph_close(ctx, g[0].graph);
	ptask_graph_close(ctx, g[1].graph);
	ptask_ctx_close(ctx);
	free(lat[0]);
	free(lat[1]);
	return 0;

usage:
	fprintf(stderr, "usage: shared_cost [--socket PATH] [--floats 1..16777216] [--rounds 1..100000] [--sets 1..1000]\n");
	return 2;
}
