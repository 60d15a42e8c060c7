// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ptaskctl_client - a client for ptaskctl's tests to look at (not a test
 * itself: ptaskctl_test.sh and tests/vm/ptaskctl_vm_test.c start it).
 *
 *   ptaskctl_client NAME ROUNDS [busy|failing]
 *
 * Builds graph NAME: push a, b -> [add: vec_add, a GPU ptask] -> pull c,
 * runs ROUNDS invocations and checks their results, prints
 *
 *   ready graph=G ptask=P pid=PID
 *
 * and then waits for SIGTERM or SIGINT (with "busy": keeps invoking until
 * then, so its GPU share is not 0), closes everything and exits 0.  Exit
 * status 1 on any failure, with the reason on stderr.  With "failing"
 * (a daemon whose sim faults, fault_launch) it invokes until a round
 * fails, prints "failed graph=G ptask=P err=E", and keeps its failed
 * graph open until SIGTERM, for ptaskctl show to look at; exit 0.  The mode and
 * socket are libptask's defaults (PTASK_MODE, PTASK_SOCKET).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libptask.h"
#include "tests/twins/test_code.h"

#define N	1024	/* floats per vector */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct graph {
	struct ptask_ctx *ctx;
	uint32_t graph, add, in_a, in_b, out;
};

static int build(struct graph *g, const char *name)
{
	const uint32_t vec_dims[3] = { N, 1, 1 }, one[3] = { 1, 1, 1 };
	uint32_t vec, n_tmpl, pa, pb, pc, pn, n_ch;
	struct ptask_ctx *ctx = g->ctx;
	struct ptask_db *ndb;
	int32_t *np;
	int err;

	err = ptask_graph_open(ctx, name, PTASK_GRAPH_CREATE, 0600, &g->graph);
	err = err ?: ptask_template_open(ctx, g->graph, "vec", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_GLOBAL, sizeof(float), vec_dims, &vec);
	err = err ?: ptask_template_open(ctx, g->graph, "n", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_PARAM, sizeof(int32_t), one, &n_tmpl);
	err = err ?: ptask_gpu_ptask_open(ctx, g->graph, "add", ptask_test_code, sizeof(ptask_test_code),
					  "vec_add", 4, &g->add);
	err = err ?: ptask_port_open(ctx, g->add, "a", PTASK_PORT_INPUT, 0, vec, 0, 0, &pa);
	err = err ?: ptask_port_open(ctx, g->add, "b", PTASK_PORT_INPUT, 0, vec, 1, 0, &pb);
	err = err ?: ptask_port_open(ctx, g->add, "c", PTASK_PORT_OUTPUT, 0, vec, 2, 0, &pc);
	err = err ?: ptask_port_open(ctx, g->add, "n", PTASK_PORT_STICKY, 0, n_tmpl, 3, 0, &pn);
	err = err ?: ptask_channel_open(ctx, g->graph, "a", 0, pa, 4, 0, &g->in_a);
	err = err ?: ptask_channel_open(ctx, g->graph, "b", 0, pb, 4, 0, &g->in_b);
	err = err ?: ptask_channel_open(ctx, g->graph, "n", 0, pn, 1, 0, &n_ch);
	err = err ?: ptask_channel_open(ctx, g->graph, "c", pc, 0, 4, 0, &g->out);
	err = err ?: ptask_datablock_create(ctx, n_tmpl, 0, 1, &ndb);
	if (err)
		return err;
	err = ptask_datablock_map(ctx, ndb, (void **)&np);
	if (!err) {
		*np = N;
		err = ptask_push(ctx, n_ch, ndb, -1, PTASK_FOREVER);
	}
	ptask_datablock_release(ctx, ndb);
	return err ?: ptask_graph_run(ctx, g->graph);
}

static int push_one(struct graph *g, uint32_t channel, float scale)
{
	struct ptask_db *db;
	float *p;
	int err, i;

	err = ptask_datablock_create(g->ctx, 0, N * sizeof(float), 0, &db);
	if (err)
		return err;
	err = ptask_datablock_map(g->ctx, db, (void **)&p);
	for (i = 0; !err && i < N; i++)
		p[i] = scale * (float)i;
	err = err ?: ptask_push(g->ctx, channel, db, -1, PTASK_FOREVER);
	ptask_datablock_release(g->ctx, db);
	return err;
}

/* One invocation: c = a + b = 3 i. */
static int round_trip(struct graph *g)
{
	struct ptask_db *db;
	float *p;
	int err, i;

	err = push_one(g, g->in_a, 1.0f) ?: push_one(g, g->in_b, 2.0f);
	/* 30 s: at once on a quiet machine; only a lost result takes it all. */
	err = err ?: ptask_pull(g->ctx, g->out, 30LL * 1000000000, &db);
	if (err)
		return err;
	err = ptask_datablock_map(g->ctx, db, (void **)&p);
	for (i = 0; !err && i < N; i++)
		if (p[i] != 3.0f * (float)i)
			err = -EBADMSG;
	ptask_datablock_release(g->ctx, db);
	return err;
}

int main(int argc, char *argv[])
{
	struct graph g = { };
	int rounds, k, err;
	bool busy, failing;

	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "busy") &&
				     strcmp(argv[3], "failing"))) {
		fprintf(stderr, "usage: %s NAME ROUNDS [busy|failing]\n",
			argv[0]);
		return 2;
	}
	rounds = atoi(argv[2]);
	failing = argc == 4 && !strcmp(argv[3], "failing");
	busy = argc == 4 && !failing;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	err = ptask_ctx_open(PTASK_MODE_AUTO, NULL, &g.ctx);
	if (err) {
		fprintf(stderr, "ptaskctl_client: connect: %s\n", strerror(-err));
		return 1;
	}
	err = build(&g, argv[1]);
	if (!err && failing) {
		for (k = 0; !err && k < rounds; k++)
			err = round_trip(&g);
		if (!err) {
			fprintf(stderr, "ptaskctl_client: %d rounds, none failed\n",
				rounds);
			ptask_ctx_close(g.ctx);
			return 1;
		}
		printf("failed graph=%u ptask=%u err=%d\n", g.graph, g.add, err);
		fflush(stdout);
		while (!stop)
			pause();
		ptask_ctx_close(g.ctx);
		return 0;
	}
	for (k = 0; !err && k < rounds; k++)
		err = round_trip(&g);
	if (!err) {
		printf("ready graph=%u ptask=%u pid=%d\n", g.graph, g.add,
		       (int)getpid());
		fflush(stdout);
	}
	if (!busy) {
		sigset_t block, old;

		/* Blocked until sigsuspend: a signal between check and sleep waits. */
		sigemptyset(&block);
		sigaddset(&block, SIGTERM);
		sigaddset(&block, SIGINT);
		sigprocmask(SIG_BLOCK, &block, &old);
		while (!err && !stop)
			sigsuspend(&old);
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	while (!err && !stop)
		err = round_trip(&g);
	if (err)
		fprintf(stderr, "ptaskctl_client: %s\n", strerror(-err));
	ptask_ctx_close(g.ctx);
	return err ? 1 : 0;
}
