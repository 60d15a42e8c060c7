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
 * Two ways to drive it:
 *
 *   one at a time (gemm_ptask_chain): push A, B, C; pull D; map it.  The
 *   next chain starts when the host has D, so nothing overlaps.
 *
 *   pipelined (gemm_ptask_push, gemm_ptask_pull; gemm.c keeps up to
 *   @depth chains in flight): chain i + depth is pushed as soon as chain
 *   i's D is pulled, so the executor has the next chains' inputs queued
 *   and copies them in while earlier chains' kernels run.
 *
 * Each chain in flight has its own *slot*: its own A, B and C datablocks,
 * made and filled once.  Pushing a datablock that is still queued or in
 * use would not be a copy: a datablock is shared memory, and its push
 * only bumps its generation (Documentation/ptaskd.md, "Generations"),
 * so a client that wrote new inputs into it would change a chain already
 * queued, and the executor would order the new copy-in behind every job
 * still reading the old one (ptaskd.md, "Pipelining", hazards): the very
 * overlap this way is for would be lost.  Slot s is pushed again only once the chain that
 * last used it has been pulled.
 *
 * Slot s holds A x 2^s (B and C are the same in every slot): scaling by a
 * power of two is exact in float, so slot s's D is exactly 2^s times
 * slot 0's, and gemm.c checks each pulled D against the one reference
 * scaled for the slot it came from: a D from the wrong chain fails.
 *
 * Each push bumps the datablocks' generation, so the executor copies them
 * in again, as the other ways do.  A pulled datablock is the result: its
 * pages are shared, so no copy is made to read it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libptask/libptask.h"
#include "gemm.h"

/* Channel capacity of the one-at-a-time way (and the least of any). */
#define CHAN_CAP_MIN	2

/**
 * struct gemm_slot - the inputs of one chain in flight
 * @a: A x 2^slot, @b: B, @c: C (made and filled once, pushed per chain)
 */
struct gemm_slot {
	struct ptask_db *a, *b, *c;
};

/**
 * struct gemm_ptask - the graph of one size and its datablocks
 * @depth: slots, so chains in flight at most
 * @chan_cap: capacity of every matrix channel: at least @depth, since
 *	with depth chains in flight up to depth D wait in channel D for the
 *	client (and as many inputs in A, B, C) while it pushes the next;
 *	a smaller D channel would block gemm2 and so the pipeline
 * @d: the one-at-a-time way's last result, @d_data its pages
 *
 * Used by one thread (the datablocks belong to it, libptask.h).
 */
struct gemm_ptask {
	struct ptask_ctx *ctx;
	int n;
	int depth;
	uint32_t chan_cap;
	int64_t timeout_ns;
	uint32_t graph;
	uint32_t ch_a, ch_b, ch_c, ch_d;
	struct gemm_slot slot[GEMM_MAX_DEPTH];
	struct ptask_db *nparam;
	struct ptask_db *d;
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

/*
 * A datablock of template @tmpl holding @count elements of 4 bytes from
 * @src; floats are multiplied by @scale on the way (1: copied as they are).
 */
static int db_make(struct gemm_ptask *g, uint32_t tmpl, uint64_t records,
		   const void *src, size_t count, float scale,
		   struct ptask_db **out)
{
	const size_t bytes = count * sizeof(float);
	size_t i;
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
	if (scale == 1.0f) {
		memcpy(p, src, bytes);
	} else {
		const float *from = src;
		float *to = p;

		/* a power of two: exact */
		for (i = 0; i < count; i++)
			to[i] = from[i] * scale;
	}
	return 0;
}

/* Templates, both ptasks, the channels; then run. */
static int graph_build(struct gemm_ptask *g, uint32_t *mat_out,
		       uint32_t *nt_out, uint32_t ch_n[2])
{
	const uint32_t mdims[3] = { (uint32_t)g->n, (uint32_t)g->n, 1 };
	const uint32_t ndims[3] = { 1, 1, 1 };
	const uint32_t cap = g->chan_cap;
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
	err = chk(ptask_channel_open(ctx, g->graph, "A", 0, n1.in0, cap,
				     mat, &g->ch_a), "channel A");
	err = err ? err : chk(ptask_channel_open(ctx, g->graph, "B", 0, n1.in1,
						 cap, mat, &g->ch_b),
			      "channel B");
	err = err ? err : chk(ptask_channel_open(ctx, g->graph, "n1", 0, n1.n,
						 1, nt, &ch_n[0]),
			      "channel n1");
	/* the edge that makes the difference: T stays with the executor */
	err = err ? err : chk(ptask_channel_open(ctx, g->graph, "T", n1.out,
						 n2.in0, cap, mat, &ch_t),
			      "channel T");
	err = err ? err : chk(ptask_channel_open(ctx, g->graph, "C", 0, n2.in1,
						 cap, mat, &g->ch_c),
			      "channel C");
	err = err ? err : chk(ptask_channel_open(ctx, g->graph, "n2", 0, n2.n,
						 1, nt, &ch_n[1]),
			      "channel n2");
	err = err ? err : chk(ptask_channel_open(ctx, g->graph, "D", n2.out, 0,
						 cap, mat, &g->ch_d),
			      "channel D");
	err = err ? err : chk(ptask_graph_run(ctx, g->graph), "ptask_graph_run");
	*mat_out = mat;
	*nt_out = nt;
	return err;
}

/* Release every slot's datablocks that exist (a NULL one ends nothing). */
static void slots_release(struct gemm_ptask *g)
{
	int s;

	for (s = 0; s < g->depth; s++) {
		if (g->slot[s].c)
			ptask_datablock_release(g->ctx, g->slot[s].c);
		if (g->slot[s].b)
			ptask_datablock_release(g->ctx, g->slot[s].b);
		if (g->slot[s].a)
			ptask_datablock_release(g->ctx, g->slot[s].a);
	}
}

/* Slot @s's A (scaled), B and C; on failure the caller releases them. */
static int slot_make(struct gemm_ptask *g, const struct gemm_inputs *in,
		     uint32_t mat, int s)
{
	const size_t count = (size_t)in->n * (size_t)in->n;
	struct gemm_slot *sl = &g->slot[s];
	int err;

	err = db_make(g, mat, count, in->a, count, gemm_slot_scale(s), &sl->a);
	err = err ? err : db_make(g, mat, count, in->b, count, 1.0f, &sl->b);
	return err ? err : db_make(g, mat, count, in->c, count, 1.0f, &sl->c);
}

int gemm_ptask_open(struct ptask_ctx *ctx, const struct gemm_inputs *in,
		    int depth, int64_t timeout_ns, struct gemm_ptask **out)
{
	const int32_t n32 = in->n;
	struct gemm_ptask *g;
	uint32_t mat, nt, ch_n[2];
	int s, err;

	if (depth < 1 || depth > GEMM_MAX_DEPTH) {
		fprintf(stderr, "gemm: ptask: depth %d, want 1..%d\n", depth,
			GEMM_MAX_DEPTH);
		return -EINVAL;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->ctx = ctx;
	g->n = in->n;
	g->depth = depth;
	g->chan_cap = depth > CHAN_CAP_MIN ? (uint32_t)depth : CHAN_CAP_MIN;
	g->timeout_ns = timeout_ns;
	err = chk(ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600,
				   &g->graph), "ptask_graph_open");
	if (err)
		goto err_free;
	err = graph_build(g, &mat, &nt, ch_n);
	if (err)
		goto err_close_graph;
	for (s = 0; s < depth && !err; s++)
		err = slot_make(g, in, mat, s);
	if (err)
		goto err_release_slots;
	err = db_make(g, nt, 1, &n32, 1, 1.0f, &g->nparam);
	if (err)
		goto err_release_slots;
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
err_release_slots:
	slots_release(g);
err_close_graph:
	ptask_graph_close(ctx, g->graph);
err_free:
	free(g);
	return err;
}

int gemm_ptask_push(struct gemm_ptask *g, int slot)
{
	struct ptask_ctx *ctx = g->ctx;
	const int64_t t = g->timeout_ns;
	struct gemm_slot *sl;
	int err;

	if (slot < 0 || slot >= g->depth) {
		fprintf(stderr, "gemm: ptask: slot %d of %d\n", slot, g->depth);
		return -EINVAL;
	}
	sl = &g->slot[slot];
	err = chk(ptask_push(ctx, g->ch_a, sl->a, -1, t), "push A");
	err = err ? err : chk(ptask_push(ctx, g->ch_b, sl->b, -1, t), "push B");
	return err ? err : chk(ptask_push(ctx, g->ch_c, sl->c, -1, t), "push C");
}

int gemm_ptask_pull(struct gemm_ptask *g, struct ptask_db **d,
		    const float **data)
{
	struct ptask_ctx *ctx = g->ctx;
	void *p;
	int err;

	err = chk(ptask_pull(ctx, g->ch_d, g->timeout_ns, d), "pull D");
	if (err)
		return err;
	if (ptask_db_bytes(*d) != gemm_bytes(g->n)) {
		fprintf(stderr, "gemm: ptask: pulled %llu bytes, want %zu\n",
			(unsigned long long)ptask_db_bytes(*d),
			gemm_bytes(g->n));
		err = -EPROTO;
		goto err_release;
	}
	err = chk(ptask_datablock_map(ctx, *d, &p), "map D");
	if (err)
		goto err_release;
	*data = p;
	return 0;

err_release:
	ptask_datablock_release(ctx, *d);
	*d = NULL;
	return err;
}

void gemm_ptask_release(struct gemm_ptask *g, struct ptask_db *d)
{
	chk(ptask_datablock_release(g->ctx, d), "release D");
}

int gemm_ptask_chain(struct gemm_ptask *g)
{
	int err;

	if (g->d) {
		gemm_ptask_release(g, g->d);
		g->d = NULL;
		g->d_data = NULL;
	}
	err = gemm_ptask_push(g, 0);
	return err ? err : gemm_ptask_pull(g, &g->d, &g->d_data);
}

const float *gemm_ptask_result(struct gemm_ptask *g)
{
	return g->d_data;
}

int gemm_ptask_depth(const struct gemm_ptask *g)
{
	return g->depth;
}

void gemm_ptask_close(struct gemm_ptask *g)
{
	struct ptask_ctx *ctx = g->ctx;

	if (g->d)
		ptask_datablock_release(ctx, g->d);
	ptask_datablock_release(ctx, g->nparam);
	slots_release(g);
	/* terminate first: drops whatever a failed chain left queued */
	ptask_graph_terminate(ctx, g->graph);
	ptask_graph_close(ctx, g->graph);
	free(g);
}
