// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cuda_lone.c - code of ptaskd's CUDA backend (see cuda_priv.h): a
 * launch that is not held, replayed from a one-kernel-node CUDA graph.
 *
 * DOC: lone launches as one-node graphs
 *
 * Why: on the H200s a cuLaunchKernel costs 3.5-4 us of CPU, and a
 * cuGraphLaunch of a graph with that one kernel node 1.3-1.9 us; from the
 * call to the host seeing the fence written behind it, 9.7-9.9 us against
 * 7.2-7.4, and patching the node's parameters first (another output
 * datablock each round) adds 0.25-0.37 us (gpu_raw's lone_* figures,
 * 2026-12-01).  Every invocation that is not part of a chain or a batch
 * is such a launch: P1's round trip, a pipeline's stages.
 *
 * What: each lane keeps up to PD_CUDA_LONE graphs, up to cb->lone_variants
 * of them per kernel and geometry (kernel, grid, block, dynamic shared
 * memory; DOC: variants below), the least recently used going first.  A
 * launch replays its kernel's graph whose node has its parameter values,
 * or builds another while the kernel has fewer, or else patches the
 * least recently used one's node (cuGraphExecKernelNodeSetParams: later
 * launches only, not the ones in flight), and launches the graph on the
 * lane's stream, where it is
 * ordered as the kernel itself would be, behind the lane's earlier work
 * and every earlier launch of that graph.  One graph per lane, not per
 * space: launches of one graph are ordered behind each other, which
 * would tie the lanes together.  A graph is built once a kernel was
 * launched twice in a row with the same geometry (a kernel launched once
 * is not worth an instantiation, tens of us), and only then: the first
 * launch proves the geometry (a graph's launch errors would show at the
 * replay).  It takes a free slot, or the least recently used one if that
 * was not launched for PD_CUDA_LONE_IDLE of the lane's launches: with
 * more kernels in turn than slots, the ones without a graph go on being
 * launched plainly instead of each evicting the graph the next needs (a
 * build on every launch).  A graph that cannot be built, patched or
 * launched is dropped, the launch goes through cuLaunchKernel, whose
 * error is the one reported, and the lane builds none for
 * PD_CUDA_LONE_BACKOFF launches.  Graphs name their kernels' functions:
 * unloading a kernel drops its graphs first, and closing a space drops
 * them all.
 *
 * PTASKD_NO_LONE_GRAPH=1 in ptaskd's environment launches every such
 * kernel with cuLaunchKernel (for comparison); ptaskd's start says which,
 * and its exit how many launches were replayed.
 *
 * Locking: none; a lane's graphs belong to the thread queuing on the
 * space (backend.h), as its held launches do.  @lone_replays is atomic:
 * tests and the log read it from other threads.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/backend/cuda_priv.h"

bool pd_cuda_graphs_usable(const struct cuda_be *cb)
{
	return cb->cu.GraphCreate && cb->cu.GraphAddKernelNode &&
	       cb->cu.GraphExecKernelNodeSetParams && cb->cu.GraphInstantiate &&
	       cb->cu.GraphLaunch && cb->cu.GraphExecDestroy &&
	       cb->cu.GraphDestroy;
}

static void lone_free(struct cuda_be *cb, struct cuda_lone *g)
{
	if (g->x)
		cb->cu.GraphExecDestroy(g->x);
	if (g->g)
		cb->cu.GraphDestroy(g->g);
	free(g->vals);
	memset(g, 0, sizeof(*g));
}

static bool same_geometry(const struct cuda_lone *g, const struct pd_launch *l)
{
	return !memcmp(g->grid, l->grid, sizeof(g->grid)) &&
	       !memcmp(g->block, l->block, sizeof(g->block)) &&
	       g->shared_bytes == l->shared_bytes;
}

static size_t vals_len(const struct pd_launch *l)
{
	size_t n = 0;
	uint32_t i;

	for (i = 0; i < l->nparams; i++)
		n += l->param_bytes[i];
	return n;
}

/* Do @l's parameter values equal the ones @g's node was given last? */
static bool same_vals(const struct cuda_lone *g, const struct pd_launch *l)
{
	const unsigned char *v = g->vals;
	uint32_t i;

	if (g->nparams != l->nparams || g->vals_len != vals_len(l))
		return false;
	for (i = 0; i < l->nparams; i++) {
		if (memcmp(v, l->params[i], l->param_bytes[i]))
			return false;
		v += l->param_bytes[i];
	}
	return true;
}

/* Remember @l's parameter values as @g's node's (false: -ENOMEM). */
static bool keep_vals(struct cuda_lone *g, const struct pd_launch *l)
{
	size_t len = vals_len(l), off = 0;
	unsigned char *v = g->vals;
	uint32_t i;

	if (len > g->vals_cap) {
		v = realloc(g->vals, len);
		if (!v)
			return false;
		g->vals = v;
		g->vals_cap = len;
	}
	for (i = 0; i < l->nparams; i++) {
		memcpy(v + off, l->params[i], l->param_bytes[i]);
		off += l->param_bytes[i];
	}
	g->vals_len = len;
	g->nparams = l->nparams;
	return true;
}

void pd_cuda_node_params(const struct cuda_kernel *k, const struct pd_launch *l,
			 CUDA_KERNEL_NODE_PARAMS *p)
{
	memset(p, 0, sizeof(*p));
	p->func = k->fn;
	p->gridDimX = l->grid[0];
	p->gridDimY = l->grid[1];
	p->gridDimZ = l->grid[2];
	p->blockDimX = l->block[0];
	p->blockDimY = l->block[1];
	p->blockDimZ = l->block[2];
	p->sharedMemBytes = l->shared_bytes;
	p->kernelParams = (void **)l->params;
}

/* Is @g @k's graph for @l's geometry? */
static bool lone_for(const struct cuda_lone *g, const struct cuda_kernel *k,
		     const struct pd_launch *l)
{
	return g->kernel == k && same_geometry(g, l);
}

/*
 * @k's graph on @ln for @l's geometry whose node has @l's values, or
 * NULL; *@lru: the least recently used of its other graphs (NULL: none),
 * *@n: how many graphs @k has for that geometry.
 */
static struct cuda_lone *lone_find(struct cuda_lane *ln,
				   const struct cuda_kernel *k,
				   const struct pd_launch *l,
				   struct cuda_lone **lru, uint32_t *n)
{
	uint32_t i;

	*lru = NULL;
	*n = 0;
	for (i = 0; i < PD_CUDA_LONE; i++) {
		struct cuda_lone *g = &ln->lone[i];

		if (!lone_for(g, k, l))
			continue;
		if (same_vals(g, l))
			return g;
		++*n;
		if (!*lru || g->used < (*lru)->used)
			*lru = g;
	}
	return NULL;
}

/*
 * Build a graph of @l of @k in a free slot of @ln, or its least recently
 * used one if that is idle (PD_CUDA_LONE_IDLE).  NULL when none may be
 * replaced or the build failed (logged; the lane then builds none for
 * PD_CUDA_LONE_BACKOFF launches).
 */
static struct cuda_lone *lone_build(struct cuda_be *cb, struct cuda_lane *ln,
				    const struct cuda_kernel *k,
				    const struct pd_launch *l)
{
	struct cuda_lone *g = &ln->lone[0];
	CUDA_KERNEL_NODE_PARAMS p;
	const char *what = "cuGraphCreate";
	CUresult r;
	uint32_t i;

	if (ln->lone_clock < ln->lone_backoff)
		return NULL;
	for (i = 0; i < PD_CUDA_LONE; i++) {	/* a free slot, else the LRU */
		if (!ln->lone[i].kernel) {
			g = &ln->lone[i];
			break;
		}
		if (ln->lone[i].used < g->used)
			g = &ln->lone[i];
	}
	/* every graph in use lately: this one is not built */
	if (g->kernel && g->used + PD_CUDA_LONE_IDLE > ln->lone_clock)
		return NULL;
	lone_free(cb, g);
	pd_cuda_node_params(k, l, &p);
	r = cb->cu.GraphCreate(&g->g, 0);
	if (r == CUDA_SUCCESS) {
		what = "cuGraphAddKernelNode";
		r = cb->cu.GraphAddKernelNode(&g->node, g->g, NULL, 0, &p);
	}
	if (r == CUDA_SUCCESS) {
		what = "cuGraphInstantiateWithFlags";
		r = cb->cu.GraphInstantiate(&g->x, g->g, 0);
	}
	if (r != CUDA_SUCCESS || !keep_vals(g, l)) {
		if (r != CUDA_SUCCESS) {
			g->x = NULL;
			pd_cuda_fail(cb, r, what);
		}
		lone_free(cb, g);
		ln->lone_backoff = ln->lone_clock + PD_CUDA_LONE_BACKOFF;
		return NULL;
	}
	g->kernel = k;
	memcpy(g->grid, l->grid, sizeof(g->grid));
	memcpy(g->block, l->block, sizeof(g->block));
	g->shared_bytes = l->shared_bytes;
	g->used = ln->lone_clock;
	atomic_fetch_add_explicit(&cb->lone_built, 1, memory_order_relaxed);
	return g;
}

/*
 * DOC: variants
 *
 * Patching a graph's node costs more than its cuGraphExecKernelNodeSetParams
 * call: measured on an H200 (gpu_raw, 2026-12-02), a one-node graph's
 * round from the launch to its fence seen took 7.20 us unpatched and 7.81
 * patched every round (0.38 us of it the call), and a 100-node chain's
 * replay 107-108 us with its ends fixed against 118 with its last
 * output patched every round: a patched instantiation is uploaded again
 * before it runs.  But the values that change between launches mostly
 * take turns: a client's output datablocks come from an arena, where the
 * one released last is the next one made, so one round's output address
 * is often the one of two rounds before.  So a held shape keeps up to
 * cb->variants instantiations (cuda_kernel.c), and a kernel up to
 * cb->lone_variants graphs per geometry on a lane, each remembering its
 * own values: a launch replays the one whose values it has, builds
 * another while it has fewer than that, and patches the least recently
 * used one only when every variant is built and none matches.  One-node
 * graphs default to one all the same: alternated on an H200 (2026-12-02,
 * the same binary), P1 with two took 10.98 and 10.55 us at the median
 * (per client, shared) against 10.54 and 9.67 with one, though none of
 * its launches was patched: taking two instantiations in turn costs
 * about what the patch of a single node saves.
 */
int pd_cuda_lone_launch(struct cuda_be *cb, struct cuda_space *s,
			struct cuda_lane *ln, const struct cuda_kernel *k,
			const struct pd_launch *l)
{
	struct cuda_lone *g, *lru;
	CUDA_KERNEL_NODE_PARAMS p;
	uint32_t n;
	CUresult r;

	if (!cb->lone_graphs)
		return 0;
	g = lone_find(ln, k, l, &lru, &n);
	if (!g && !n)
		return 0;	/* none yet: pd_cuda_lone_learn builds it */
	if (!g && n < cb->lone_variants)
		g = lone_build(cb, ln, k, l);
	if (!g) {
		g = lru;
		pd_cuda_node_params(k, l, &p);
		r = cb->cu.GraphExecKernelNodeSetParams(g->x, g->node, &p);
		if (r != CUDA_SUCCESS || !keep_vals(g, l)) {
			if (r != CUDA_SUCCESS)
				pd_cuda_fail(cb, r, "cuGraphExecKernelNodeSetParams (lone)");
			lone_free(cb, g);
			ln->lone_backoff = ln->lone_clock + PD_CUDA_LONE_BACKOFF;
			return 0;
		}
		atomic_fetch_add_explicit(&cb->lone_patched, 1,
					  memory_order_relaxed);
	}
	r = cb->cu.GraphLaunch(g->x, ln->stream);
	if (r != CUDA_SUCCESS) {
		pd_cuda_queue_fail(cb, s, r, "cuGraphLaunch (lone)");
		lone_free(cb, g);
		ln->lone_backoff = ln->lone_clock + PD_CUDA_LONE_BACKOFF;
		return 0;
	}
	g->used = ++ln->lone_clock;
	atomic_fetch_add_explicit(&cb->lone_replays, 1, memory_order_relaxed);
	return 1;
}

void pd_cuda_lone_learn(struct cuda_be *cb, struct cuda_lane *ln,
			const struct cuda_kernel *k, const struct pd_launch *l,
			bool again)
{
	struct cuda_lone *lru;
	uint32_t n;

	ln->lone_clock++;
	if (!again || !cb->lone_graphs || lone_find(ln, k, l, &lru, &n) || n)
		return;
	lone_build(cb, ln, k, l);
}

void pd_cuda_lone_drop(struct cuda_be *cb, struct cuda_space *s,
		       const struct cuda_kernel *k)
{
	uint32_t i, j;

	for (i = 0; i < s->nlanes; i++)
		for (j = 0; j < PD_CUDA_LONE; j++)
			if (s->lane[i].lone[j].kernel &&
			    (!k || s->lane[i].lone[j].kernel == k))
				lone_free(cb, &s->lane[i].lone[j]);
}
