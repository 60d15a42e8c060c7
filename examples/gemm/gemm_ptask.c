// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gemm_ptask.c - D = (A x B) x C as a graph of two sgemm ptasks
 * (PTask, SOSP 2011, Figure 7):
 *
 *   A --> [ gemm1: A, B -> T ] --T--> [ gemm2: T, C -> D ] --> D
 *   B --/    n1 (sticky) -/        C -/   n2 (sticky) -/
 *
 * Ports follow the kernel's formal parameters: 0 and 1 the input matrices
 * (global memory, template n x n float), 2 the output (same template), 3
 * n, a sticky port whose datablock is one int32 passed by value (a
 * PTASK_BIND_PARAM template).  The n datablocks are pushed once; the
 * sticky ports keep them for every chain.  The channel T joins gemm1's
 * output to gemm2's first input, and no client pulls from it, so the
 * executor may leave the intermediate on the GPU.
 *
 * A chain pushes the A, B and C datablocks (made and filled once; each
 * push bumps their generation, so the executor copies them in again, as
 * the other ways do) and pulls D.  The pulled datablock is the result:
 * its pages are shared, so no copy is made to read it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libptask/libptask.h"
#include "gemm.h"

#define CHAN_CAP	2

struct gemm_ptask {
	struct ptask_ctx *ctx;
	int n;
	int64_t timeout_ns;
	uint32_t graph;
	uint32_t ch_a, ch_b, ch_c, ch_d;
	struct ptask_db *a, *b, *c, *nparam;
	struct ptask_db *d;		/* the last chain's result */
	const float *d_data;
};

/* Logs a failed call; passes its return value through. */
static int chk(int err, const char *what)
{
	if (err < 0)
		fprintf(stderr, "gemm: ptask: %s: %s\n", what, strerror(-err));
	return err;
}

/**
 * struct gemm_node - the handles of one sgemm ptask
 * @ptask: the ptask
 * @in0: first input (A, or T for gemm2)
 * @in1: second input (B, or C)
 * @out: the product
 * @n: the sticky n port
 */
struct gemm_node {
	uint32_t ptask, in0, in1, out, n;
};

static int node_open(struct gemm_ptask *g, const char *name, uint32_t mat,
		     uint32_t nt, struct gemm_node *nd)
{
	const uint32_t grid[3] = { gemm_grid(g->n), gemm_grid(g->n), 1 };
	const uint32_t block[3] = { GEMM_TILE, GEMM_TILE, 1 };
	struct ptask_ctx *ctx = g->ctx;
	char pn[PTASK_NAME_MAX];
	int err;

	err = chk(ptask_gpu_ptask_open(ctx, g->graph, name, gemm_ptx,
				       gemm_ptx_len, GEMM_ENTRY, 4, &nd->ptask),
		  "ptask_gpu_ptask_open");
	if (err)
		return err;
	/* opened in parameter order, so port index == param_index */
	snprintf(pn, sizeof(pn), "%s_a", name);
	err = chk(ptask_port_open(ctx, nd->ptask, pn, PTASK_PORT_INPUT, 0,
				  mat, 0, 0, &nd->in0), "port a");
	snprintf(pn, sizeof(pn), "%s_b", name);
	err = err ? err : chk(ptask_port_open(ctx, nd->ptask, pn,
					      PTASK_PORT_INPUT, 0, mat, 1, 0,
					      &nd->in1), "port b");
	snprintf(pn, sizeof(pn), "%s_c", name);
	err = err ? err : chk(ptask_port_open(ctx, nd->ptask, pn,
					      PTASK_PORT_OUTPUT, 0, mat, 2, 0,
					      &nd->out), "port c");
	snprintf(pn, sizeof(pn), "%s_n", name);
	err = err ? err : chk(ptask_port_open(ctx, nd->ptask, pn,
					      PTASK_PORT_STICKY, 0, nt, 3, 0,
					      &nd->n), "port n");
	if (err)
		return err;
	return chk(ptask_set_geometry(ctx, nd->ptask, grid, block, 0),
		   "ptask_set_geometry");
}

/* A datablock of template @tmpl holding @bytes from @src. */
static int db_make(struct gemm_ptask *g, uint32_t tmpl, uint64_t records,
		   const void *src, size_t bytes, struct ptask_db **out)
{
	void *p;
	int err;

	err = chk(ptask_datablock_create(g->ctx, tmpl, 0, records, out),
		  "ptask_datablock_create");
	if (err)
		return err;
	err = chk(ptask_datablock_map(g->ctx, *out, &p), "ptask_datablock_map");
	if (err) {
		ptask_datablock_release(g->ctx, *out);
		*out = NULL;
		return err;
	}
	if (ptask_db_bytes(*out) < bytes) {
		fprintf(stderr, "gemm: ptask: datablock of %llu bytes, want %zu\n",
			(unsigned long long)ptask_db_bytes(*out), bytes);
		ptask_datablock_release(g->ctx, *out);
		*out = NULL;
		return -EPROTO;
	}
	memcpy(p, src, bytes);
	return 0;
}

/* Templates, both ptasks, the channels; then run. */
static int graph_build(struct gemm_ptask *g, uint32_t *mat_out,
		       uint32_t *nt_out, uint32_t ch_n[2])
{
	const uint32_t mdims[3] = { (uint32_t)g->n, (uint32_t)g->n, 1 };
	const uint32_t ndims[3] = { 1, 1, 1 };
	struct ptask_ctx *ctx = g->ctx;
	struct gemm_node n1, n2;
	uint32_t mat, nt, ch_t;
	int err;

	err = chk(ptask_template_open(ctx, g->graph, "matrix",
				      PTASK_TEMPLATE_ARRAY, PTASK_BIND_GLOBAL,
				      sizeof(float), mdims, &mat),
		  "template matrix");
	err = err ? err : chk(ptask_template_open(ctx, g->graph, "n",
						  PTASK_TEMPLATE_ARRAY,
						  PTASK_BIND_PARAM,
						  sizeof(int32_t), ndims, &nt),
			      "template n");
	err = err ? err : node_open(g, "gemm1", mat, nt, &n1);
	err = err ? err : node_open(g, "gemm2", mat, nt, &n2);
	if (err)
		return err;
	err = chk(ptask_channel_open(ctx, g->graph, "A", 0, n1.in0, CHAN_CAP,
				     mat, &g->ch_a), "channel A");
	err = err ? err : chk(ptask_channel_open(ctx, g->graph, "B", 0, n1.in1,
						 CHAN_CAP, mat, &g->ch_b),
			      "channel B");
	err = err ? err : chk(ptask_channel_open(ctx, g->graph, "n1", 0, n1.n,
						 1, nt, &ch_n[0]),
			      "channel n1");
	/* the edge that makes the difference: T stays with the executor */
	err = err ? err : chk(ptask_channel_open(ctx, g->graph, "T", n1.out,
						 n2.in0, CHAN_CAP, mat, &ch_t),
			      "channel T");
	err = err ? err : chk(ptask_channel_open(ctx, g->graph, "C", 0, n2.in1,
						 CHAN_CAP, mat, &g->ch_c),
			      "channel C");
	err = err ? err : chk(ptask_channel_open(ctx, g->graph, "n2", 0, n2.n,
						 1, nt, &ch_n[1]),
			      "channel n2");
	err = err ? err : chk(ptask_channel_open(ctx, g->graph, "D", n2.out, 0,
						 CHAN_CAP, mat, &g->ch_d),
			      "channel D");
	err = err ? err : chk(ptask_graph_run(ctx, g->graph), "ptask_graph_run");
	*mat_out = mat;
	*nt_out = nt;
	return err;
}

int gemm_ptask_open(struct ptask_ctx *ctx, const struct gemm_inputs *in,
		    int64_t timeout_ns, struct gemm_ptask **out)
{
	const size_t bytes = gemm_bytes(in->n);
	const uint64_t elems = (uint64_t)in->n * (uint64_t)in->n;
	const int32_t n32 = in->n;
	struct gemm_ptask *g;
	uint32_t mat, nt, ch_n[2];
	int err;

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->ctx = ctx;
	g->n = in->n;
	g->timeout_ns = timeout_ns;
	err = chk(ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600,
				   &g->graph), "ptask_graph_open");
	if (err)
		goto err_free;
	err = graph_build(g, &mat, &nt, ch_n);
	if (err)
		goto err_close_graph;
	err = db_make(g, mat, elems, in->a, bytes, &g->a);
	if (err)
		goto err_close_graph;
	err = db_make(g, mat, elems, in->b, bytes, &g->b);
	if (err)
		goto err_release_a;
	err = db_make(g, mat, elems, in->c, bytes, &g->c);
	if (err)
		goto err_release_b;
	err = db_make(g, nt, 1, &n32, sizeof(n32), &g->nparam);
	if (err)
		goto err_release_c;
	/* one datablock for both sticky ports: a datablock is shared */
	err = chk(ptask_push(ctx, ch_n[0], g->nparam, -1, timeout_ns),
		  "push n1");
	err = err ? err : chk(ptask_push(ctx, ch_n[1], g->nparam, -1,
					 timeout_ns), "push n2");
	if (err)
		goto err_release_n;
	*out = g;
	return 0;

err_release_n:
	ptask_datablock_release(ctx, g->nparam);
err_release_c:
	ptask_datablock_release(ctx, g->c);
err_release_b:
	ptask_datablock_release(ctx, g->b);
err_release_a:
	ptask_datablock_release(ctx, g->a);
err_close_graph:
	ptask_graph_close(ctx, g->graph);
err_free:
	free(g);
	return err;
}

int gemm_ptask_chain(struct gemm_ptask *g)
{
	struct ptask_ctx *ctx = g->ctx;
	const int64_t t = g->timeout_ns;
	void *p;
	int err;

	if (g->d) {
		ptask_datablock_release(ctx, g->d);
		g->d = NULL;
		g->d_data = NULL;
	}
	err = chk(ptask_push(ctx, g->ch_a, g->a, -1, t), "push A");
	err = err ? err : chk(ptask_push(ctx, g->ch_b, g->b, -1, t), "push B");
	err = err ? err : chk(ptask_push(ctx, g->ch_c, g->c, -1, t), "push C");
	err = err ? err : chk(ptask_pull(ctx, g->ch_d, t, &g->d), "pull D");
	if (err)
		return err;
	if (ptask_db_bytes(g->d) != gemm_bytes(g->n)) {
		fprintf(stderr, "gemm: ptask: pulled %llu bytes, want %zu\n",
			(unsigned long long)ptask_db_bytes(g->d),
			gemm_bytes(g->n));
		return -EPROTO;
	}
	err = chk(ptask_datablock_map(ctx, g->d, &p), "map D");
	if (err)
		return err;
	g->d_data = p;
	return 0;
}

const float *gemm_ptask_result(struct gemm_ptask *g)
{
	return g->d_data;
}

void gemm_ptask_close(struct gemm_ptask *g)
{
	struct ptask_ctx *ctx = g->ctx;

	if (g->d)
		ptask_datablock_release(ctx, g->d);
	ptask_datablock_release(ctx, g->nparam);
	ptask_datablock_release(ctx, g->c);
	ptask_datablock_release(ctx, g->b);
	ptask_datablock_release(ctx, g->a);
	/* terminate first: drops whatever a failed chain left queued */
	ptask_graph_terminate(ctx, g->graph);
	ptask_graph_close(ctx, g->graph);
	free(g);
}
