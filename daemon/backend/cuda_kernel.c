// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cuda_kernel.c - code of ptaskd's CUDA backend (see cuda_priv.h): the
 * per-space module cache, kernels and launches.
 *
 * Device time: launches are timed per fence span (cuda_fence.c, "device
 * time per fence"): pd_cuda_span_before and pd_cuda_span_after around
 * each launch.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/backend/cuda_priv.h"

static void module_free(struct cuda_be *cb, struct cuda_module *m)
{
	CUresult r = cb->cu.ModuleUnload(m->mod);

	if (r != CUDA_SUCCESS)
		pd_cuda_fail(cb, r, "cuModuleUnload");
	free(m->code);
	free(m);
}

void pd_cuda_code_release(struct cuda_be *cb, struct cuda_space *s)
{
	struct cuda_module *m;

	while ((m = s->modules)) {
		s->modules = m->next;
		module_free(cb, m);
	}
	s->nmodules = 0;
}

/* FNV-1a: finds a module again; memcmp of the code makes it exact */
static uint64_t code_hash(const void *code, size_t len)
{
	return pc_fnv1a(code, len, PC_FNV1A_INIT);
}

static int module_load(struct cuda_be *cb, struct cuda_space *s,
		       const void *code, size_t len, struct cuda_module **out)
{
	char log[4096] = "";
	CUjit_option opt[2] = { CU_JIT_ERROR_LOG_BUFFER,
				CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *val[2] = { log, (void *)(uintptr_t)sizeof(log) };
	uint64_t h = code_hash(code, len);
	struct cuda_module *m;
	CUresult r;
	int err;

	for (m = s->modules; m; m = m->next) {
		if (m->hash == h && m->len == len && !memcmp(m->code, code, len)) {
			*out = m;
			return 0;
		}
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	/* PTX must end in a NUL; a cubin or fatbin ignores the extra byte */
	m->code = malloc(len + 1);
	if (!m->code) {
		err = -ENOMEM;
		goto err_free_module;
	}
	memcpy(m->code, code, len);
	m->code[len] = '\0';
	m->len = len;
	m->hash = h;
	r = cb->cu.ModuleLoadDataEx(&m->mod, m->code, 2, opt, val);
	if (r != CUDA_SUCCESS) {
		err = pd_cuda_fail(cb, r, "cuModuleLoadDataEx");
		if (log[0])
			fprintf(stderr, "ptaskd: cuda: %.*s\n",
				(int)sizeof(log), log);
		switch (r) {
		case CUDA_ERROR_INVALID_PTX:
		case CUDA_ERROR_INVALID_IMAGE:
		case CUDA_ERROR_INVALID_SOURCE:
		case CUDA_ERROR_INVALID_VALUE:
		case CUDA_ERROR_NO_BINARY_FOR_GPU:
		case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
			err = -EINVAL;
			break;
		}
		goto err_free_code;
	}
	m->next = s->modules;
	s->modules = m;
	s->nmodules++;
	*out = m;
	return 0;

err_free_code:
	free(m->code);
err_free_module:
	free(m);
	return err;
}

/* Drop @m if no kernel uses it and the space caches too many. */
static void module_put(struct cuda_be *cb, struct cuda_space *s,
		       struct cuda_module *m)
{
	struct cuda_module **pp;

	if (m->refs || s->nmodules <= PD_CUDA_MODULE_CACHE)
		return;
	for (pp = &s->modules; *pp != m; pp = &(*pp)->next)
		;
	*pp = m->next;
	s->nmodules--;
	module_free(cb, m);
}

/*
 * Learn @k's parameter count and sizes, so that launch can refuse a
 * parameter list that does not match: cuLaunchKernel reads as many
 * values as the kernel takes, from wherever params[] points.
 */
static int kernel_params(struct cuda_be *cb, struct cuda_kernel *k)
{
	size_t off, size;
	uint32_t i;
	CUresult r;

	if (!cb->cu.FuncGetParamInfo)
		return 0;	/* driver < 12.4: launches go unchecked */
	for (i = 0;; i++) {
		r = cb->cu.FuncGetParamInfo(k->fn, i, &off, &size);
		if (r == CUDA_ERROR_INVALID_VALUE)
			break;	/* past the last parameter */
		if (r != CUDA_SUCCESS) {
			/* the kernel still runs; its launches go unchecked */
			pd_cuda_fail(cb, r, "cuFuncGetParamInfo");
			return 0;
		}
		if (i == PD_MAX_PARAMS) {
			fprintf(stderr, "ptaskd: cuda: kernel takes over %d parameters\n",
				PD_MAX_PARAMS);
			return -EINVAL;
		}
		k->param_bytes[i] = (uint32_t)size;
	}
	k->nparams = i;
	k->checked = true;
	return 0;
}

int pd_cuda_kernel_load(struct pd_backend *be, void *space, const void *code,
			size_t code_len, const char *entry, void **kernel)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	struct cuda_kernel *k;
	CUresult r;
	int err;

	if (!code || !code_len || !entry || !*entry)
		return -EINVAL;
	err = pd_cuda_ctx_use(cb, &s->c);
	if (err)
		return err;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	err = module_load(cb, s, code, code_len, &k->module);
	if (err)
		goto err_free_kernel;
	k->module->refs++;
	r = cb->cu.ModuleGetFunction(&k->fn, k->module->mod, entry);
	if (r != CUDA_SUCCESS) {
		err = pd_cuda_fail(cb, r, "cuModuleGetFunction");
		if (r == CUDA_ERROR_NOT_FOUND)
			err = -ENOENT;
		goto err_put_module;
	}
	err = kernel_params(cb, k);
	if (err)
		goto err_put_module;
	*kernel = k;
	return 0;

err_put_module:
	k->module->refs--;
	module_put(cb, s, k->module);
err_free_kernel:
	free(k);
	return err;
}

void pd_cuda_kernel_unload(struct pd_backend *be, void *space, void *kernel)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	struct cuda_kernel *k = kernel;

	if (!k)
		return;
	/* nothing held or replayable may name its function any more */
	pd_cuda_flush_all(cb, s);
	pd_shapes_drop_kernel(&s->shapes, k);
	pd_cuda_lone_drop(cb, s, k);
	k->module->refs--;
	/* cuModuleUnload acts in the current context */
	if (pd_cuda_ctx_use(cb, &s->c) == 0)
		module_put(cb, s, k->module);
	free(k);
}

static int launch_check(const struct cuda_kernel *k, const struct pd_launch *l)
{
	uint32_t i;

	if (l->nparams > PD_MAX_PARAMS)
		return -EINVAL;
	for (i = 0; i < 3; i++)
		if (!l->grid[i] || !l->block[i])
			return -EINVAL;
	for (i = 0; i < l->nparams; i++)
		if (!l->params[i])
			return -EINVAL;
	if (!k->checked)
		return 0;
	if (l->nparams != k->nparams) {
		fprintf(stderr, "ptaskd: cuda: launch with %u parameters, kernel takes %u\n",
			l->nparams, k->nparams);
		return -EINVAL;
	}
	for (i = 0; i < l->nparams; i++) {
		if (l->param_bytes[i] != k->param_bytes[i]) {
			fprintf(stderr, "ptaskd: cuda: parameter %u is %u bytes, kernel takes %u\n",
				i, l->param_bytes[i], k->param_bytes[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/* May @l be held: untimed, asked to, and proven with its geometry? */
static bool may_hold(const struct cuda_space *s, const struct cuda_kernel *k,
		     const struct pd_launch *l)
{
	return l->hold && l->untimed && k->proven &&
	       atomic_load_explicit(&s->memops, memory_order_relaxed) &&
	       !memcmp(k->grid, l->grid, sizeof(k->grid)) &&
	       !memcmp(k->block, l->block, sizeof(k->block)) &&
	       k->shared_bytes == l->shared_bytes;
}

int pd_cuda_launch(struct pd_backend *be, void *space, uint32_t lane,
		   void *kernel, const struct pd_launch *l)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	struct cuda_kernel *k = kernel;
	struct cuda_lane *ln;
	bool again;
	CUresult r;
	int err;

	err = launch_check(k, l);
	if (!err)
		err = pd_cuda_lane_get(s, lane, &ln);
	if (!err && may_hold(s, k, l)) {
		if (ln->held.n >= PD_HELD_MAX) {
			err = pd_cuda_lane_flush(cb, s, ln);
			if (err < 0)
				return err;
		}
		err = pd_cuda_ctx_use(cb, &s->c);
		if (!err)
			err = pd_cuda_span_before(cb, s, ln, true);
		if (!err)
			err = pd_held_add(&ln->held, k, l);
		return err;
	}
	/* what the lane holds goes first */
	if (!err && (ln->held.n || ln->held.first_deferred))
		err = pd_cuda_lane_flush(cb, s, ln);
	if (err < 0)
		return err;
	err = pd_cuda_ctx_use(cb, &s->c);
	if (!err)
		err = pd_cuda_span_before(cb, s, ln, l->untimed);
	if (err)
		return err;
	if (pd_cuda_lone_launch(cb, s, ln, k, l) == 1) {
		/* the geometry launched last, as may_hold compares it */
		memcpy(k->grid, l->grid, sizeof(k->grid));
		memcpy(k->block, l->block, sizeof(k->block));
		k->shared_bytes = l->shared_bytes;
		return pd_cuda_span_after(cb, ln);
	}
	r = cb->cu.LaunchKernel(k->fn, l->grid[0], l->grid[1], l->grid[2],
				l->block[0], l->block[1], l->block[2],
				l->shared_bytes, ln->stream,
				(void **)l->params, NULL);
	if (r != CUDA_SUCCESS) {
		/*
		 * The span stays open: its start event is recorded, and it
		 * is timed only from a launch whose end is (span_after).
		 */
		err = pd_cuda_queue_fail(cb, s, r, "cuLaunchKernel");
		/* a geometry or shared size the kernel cannot run with */
		if (r == CUDA_ERROR_INVALID_VALUE ||
		    r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
			return -EINVAL;
		return err;
	}
	/* the second launch in a row with one geometry earns a graph */
	again = k->proven && !memcmp(k->grid, l->grid, sizeof(k->grid)) &&
		!memcmp(k->block, l->block, sizeof(k->block)) &&
		k->shared_bytes == l->shared_bytes;
	k->proven = true;
	memcpy(k->grid, l->grid, sizeof(k->grid));
	memcpy(k->block, l->block, sizeof(k->block));
	k->shared_bytes = l->shared_bytes;
	err = pd_cuda_span_after(cb, ln);
	if (!err)
		pd_cuda_lone_learn(cb, ln, k, l, again);
	return err;
}

/**
 * DOC: held launches as CUDA graphs
 *
 * A sequence of held launches (held.h) whose shape was flushed one by
 * one PD_SHAPE_BUILD_AFTER times is built into a CUDA graph: one kernel
 * node per launch, each depending on the one before (the lane's order),
 * instantiated once.  A later flush of that shape replays an
 * instantiation whose nodes have its parameter values (a chain's
 * intermediate datablocks come from the pools, so their addresses often
 * repeat), or makes another one while the shape has fewer than
 * cb->variants (cuda_lone.c, "Variants": a patched instantiation is
 * uploaded again before it runs, 10 us for 100 nodes on an H200), or
 * else patches the nodes whose values changed in the one that needs
 * fewest patches (cuGraphExecKernelNodeSetParams), and launches it with
 * cuGraphLaunch, which is ordered behind the lane's earlier work and
 * earlier launches.  A graph that cannot be built or launched is
 * dropped and its launches are queued one by one.  A graph uses its
 * kernels' functions: unloading a kernel frees the graphs that launch it
 * first.
 *
 * struct cuda_graph_exec - one instantiation of a shape's graph
 * @x: the instantiation
 * @vals: the parameter values each node was given last (patches compare)
 * @lens: their sizes
 * @used: the graph's @clock at its last launch
 */
struct cuda_graph_exec {
	CUgraphExec x;
	unsigned char **vals;
	size_t *lens;
	uint64_t used;
};

/**
 * struct cuda_graph - a shape's graph
 * @g: the graph (its nodes keep the values it was built with: @vals0)
 * @n: its nodes
 * @nodes: each kernel node, in launch order
 * @vals0: the values it was built with, @lens0 their sizes
 * @lens0: see @vals0
 * @nx: instantiations made, in @ex
 * @ex: each instantiation (at most PD_CUDA_VARIANTS_MAX)
 * @clock: counts its launches
 * @no_more: an instantiation failed: no more are made
 */
struct cuda_graph {
	CUgraph g;
	uint32_t n;
	CUgraphNode *nodes;
	unsigned char **vals0;
	size_t *lens0;
	uint32_t nx;
	struct cuda_graph_exec ex[PD_CUDA_VARIANTS_MAX];
	uint64_t clock;
	bool no_more;
};

static void graph_node_params(const struct pd_held_launch *h,
			      CUDA_KERNEL_NODE_PARAMS *p)
{
	pd_cuda_node_params(h->kernel, &h->l, p);
}

/* Remember @len bytes of @v in @vals[i], @lens[i] (false: -ENOMEM). */
static bool keep_vals(unsigned char **vals, size_t *lens, uint32_t i,
		      const unsigned char *v, size_t len)
{
	unsigned char *c = realloc(vals[i], len ? len : 1);

	if (!c)
		return false;
	memcpy(c, v, len);
	vals[i] = c;
	lens[i] = len;
	return true;
}

static void exec_free(struct cuda_be *cb, struct cuda_graph_exec *x,
		      uint32_t n)
{
	uint32_t i;

	if (x->x)
		cb->cu.GraphExecDestroy(x->x);
	for (i = 0; x->vals && i < n; i++)
		free(x->vals[i]);
	free(x->vals);
	free(x->lens);
	memset(x, 0, sizeof(*x));
}

void pd_cuda_graph_free(void *ctx, struct pd_shape *shape)
{
	struct cuda_be *cb = ctx;
	struct cuda_graph *gr = shape->unit;
	uint32_t i;

	if (!gr)
		return;
	for (i = 0; i < gr->nx; i++)
		exec_free(cb, &gr->ex[i], gr->n);
	if (gr->g)
		cb->cu.GraphDestroy(gr->g);
	for (i = 0; gr->vals0 && i < gr->n; i++)
		free(gr->vals0[i]);
	free(gr->vals0);
	free(gr->lens0);
	free(gr->nodes);
	free(gr);
	shape->unit = NULL;
}

/*
 * Instantiate @gr's graph once more, as @gr->ex[@gr->nx] (its values
 * those the graph was built with).  0, -ENOMEM, or the driver's error
 * (logged).
 */
static int exec_add(struct cuda_be *cb, struct cuda_graph *gr)
{
	struct cuda_graph_exec *x = &gr->ex[gr->nx];
	CUresult r;
	uint32_t i;

	x->vals = calloc(gr->n, sizeof(*x->vals));
	x->lens = calloc(gr->n, sizeof(*x->lens));
	if (!x->vals || !x->lens)
		goto err_nomem;
	for (i = 0; i < gr->n; i++)
		if (!keep_vals(x->vals, x->lens, i, gr->vals0[i], gr->lens0[i]))
			goto err_nomem;
	r = cb->cu.GraphInstantiate(&x->x, gr->g, 0);
	if (r != CUDA_SUCCESS) {
		x->x = NULL;
		exec_free(cb, x, gr->n);
		return pd_cuda_fail(cb, r, "cuGraphInstantiateWithFlags");
	}
	gr->nx++;
	atomic_fetch_add_explicit(&cb->held_execs, 1, memory_order_relaxed);
	return 0;

err_nomem:
	exec_free(cb, x, gr->n);
	return -ENOMEM;
}

/* Build @shape's graph from @h's launches (context current). */
static int graph_build(struct cuda_be *cb, struct pd_shape *shape,
		       const struct pd_held_lane *h)
{
	CUDA_KERNEL_NODE_PARAMS p;
	struct cuda_graph *gr;
	CUresult r;
	uint32_t i;
	int err;

	gr = calloc(1, sizeof(*gr));
	if (!gr)
		return -ENOMEM;
	shape->unit = gr;
	gr->n = h->n;
	gr->nodes = calloc(h->n, sizeof(*gr->nodes));
	gr->vals0 = calloc(h->n, sizeof(*gr->vals0));
	gr->lens0 = calloc(h->n, sizeof(*gr->lens0));
	if (!gr->nodes || !gr->vals0 || !gr->lens0)
		goto err_nomem;
	r = cb->cu.GraphCreate(&gr->g, 0);
	if (r != CUDA_SUCCESS) {
		pd_cuda_graph_free(cb, shape);
		return pd_cuda_fail(cb, r, "cuGraphCreate");
	}
	for (i = 0; i < h->n; i++) {
		graph_node_params(&h->v[i], &p);
		r = cb->cu.GraphAddKernelNode(&gr->nodes[i], gr->g,
					      i ? &gr->nodes[i - 1] : NULL,
					      i ? 1 : 0, &p);
		if (r != CUDA_SUCCESS) {
			pd_cuda_graph_free(cb, shape);
			return pd_cuda_fail(cb, r, "cuGraphAddKernelNode");
		}
		if (!keep_vals(gr->vals0, gr->lens0, i, h->v[i].vals,
			       h->v[i].vals_len))
			goto err_nomem;
	}
	err = exec_add(cb, gr);
	if (err)
		pd_cuda_graph_free(cb, shape);
	return err;

err_nomem:
	pd_cuda_graph_free(cb, shape);
	return -ENOMEM;
}

/* Nodes of @x whose values differ from @h's, counted up to @most. */
static uint32_t exec_diff(const struct cuda_graph *gr,
			  const struct cuda_graph_exec *x,
			  const struct pd_held_lane *h, uint32_t most)
{
	uint32_t i, d = 0;

	for (i = 0; i < gr->n && d < most; i++)
		d += x->lens[i] != h->v[i].vals_len ||
		     memcmp(x->vals[i], h->v[i].vals, h->v[i].vals_len);
	return d;
}

/*
 * The instantiation of @shape's graph to launch @h's launches with: one
 * whose values are @h's (the most recently used first), else a new one
 * while there are fewer than cb->variants, else the one that needs
 * fewest patches.  *@patch: nodes it must patch (0: none; UINT32_MAX:
 * unknown, compare each).
 */
static struct cuda_graph_exec *exec_pick(struct cuda_be *cb,
					 struct cuda_graph *gr,
					 const struct pd_held_lane *h,
					 uint32_t *patch)
{
	struct cuda_graph_exec *best = NULL;
	uint32_t i, d, best_d = UINT32_MAX;
	bool tried[PD_CUDA_VARIANTS_MAX] = { false };

	/* most recently used first: a chain that repeats finds it at once */
	for (;;) {
		struct cuda_graph_exec *x = NULL;

		for (i = 0; i < gr->nx; i++)
			if (!tried[i] && (!x || gr->ex[i].used > x->used))
				x = &gr->ex[i];
		if (!x)
			break;
		tried[x - gr->ex] = true;
		d = exec_diff(gr, x, h, best_d);
		if (d < best_d) {
			best = x;
			best_d = d;
			if (!d)
				break;
		}
	}
	if (best_d && gr->nx < cb->variants && !gr->no_more) {
		if (!exec_add(cb, gr)) {
			best = &gr->ex[gr->nx - 1];
			best_d = UINT32_MAX;
		} else {
			gr->no_more = true;	/* logged once: patch from now on */
		}
	}
	*patch = best_d;
	return best;
}

/* Patch an instantiation of @shape's graph to @h's values; launch it on @l. */
static int graph_replay(struct cuda_be *cb, struct cuda_lane *l,
			struct pd_shape *shape, const struct pd_held_lane *h)
{
	struct cuda_graph *gr = shape->unit;
	struct cuda_graph_exec *x;
	CUDA_KERNEL_NODE_PARAMS p;
	uint32_t i, patch, patched = 0;
	CUresult r;

	x = exec_pick(cb, gr, h, &patch);
	for (i = 0; patch && i < h->n; i++) {
		if (x->lens[i] == h->v[i].vals_len &&
		    !memcmp(x->vals[i], h->v[i].vals, h->v[i].vals_len))
			continue;
		graph_node_params(&h->v[i], &p);
		r = cb->cu.GraphExecKernelNodeSetParams(x->x, gr->nodes[i], &p);
		if (r != CUDA_SUCCESS)
			return pd_cuda_fail(cb, r, "cuGraphExecKernelNodeSetParams");
		if (!keep_vals(x->vals, x->lens, i, h->v[i].vals,
			       h->v[i].vals_len))
			return -ENOMEM;
		patched++;
	}
	r = cb->cu.GraphLaunch(x->x, l->stream);
	if (r != CUDA_SUCCESS)
		return pd_cuda_fail(cb, r, "cuGraphLaunch");
	x->used = ++gr->clock;
	atomic_fetch_add_explicit(&cb->held_replays, 1, memory_order_relaxed);
	if (patched) {
		atomic_fetch_add_explicit(&cb->held_patched, 1,
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&cb->held_nodes_patched, patched,
					  memory_order_relaxed);
	}
	return 0;
}

/*
 * The estimated spans of the held launches start now, not when they were
 * held: an untimed launch's device time runs from its span's submit_ns
 * (cuda_fence.c), and PTSched must not charge the time a launch waited
 * to be flushed.  They pass together, so each takes an equal share
 * (batch_n) of the time from now to its being seen, rather than the
 * first one polled taking it all: the engine's averages per ptask decide
 * which jobs a helper runs (PD_INLINE_RUN_NS), and a chain's first hop
 * charged with the whole chain's time was then left to the worker.
 * Their slots: the deferred fences' and the open span's.
 */
static void held_spans_start(struct cuda_lane *l)
{
	uint64_t t = l->held.first_deferred ? l->held.first_deferred :
					      l->made + 1, u;
	struct timespec ts;
	uint64_t now;

	uint32_t n = 0;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	pthread_mutex_lock(&l->lock);
	for (u = t; u <= l->made + 1; u++) {
		struct cuda_fence *f = &l->ring[u % PD_CUDA_FENCE_RING];

		n += f->ticket == u && f->estimated;
	}
	for (u = t; u <= l->made + 1; u++) {
		struct cuda_fence *f = &l->ring[u % PD_CUDA_FENCE_RING];

		if (f->ticket == u && f->estimated) {
			f->submit_ns = now;
			f->batch_n = n;
		}
	}
	pthread_mutex_unlock(&l->lock);
}

int pd_cuda_held_queue(struct cuda_be *cb, struct cuda_space *s,
		       struct cuda_lane *l)
{
	const struct pd_held_lane *h = &l->held;
	struct pd_shape *shape = NULL;
	CUresult r;
	uint32_t i;

	if (!h->n)
		return 0;
	held_spans_start(l);
	if (h->n >= 2 && pd_cuda_graphs_usable(cb))
		shape = pd_shapes_see(&s->shapes, h);
	if (shape && !shape->unit && shape->seen > PD_SHAPE_BUILD_AFTER)
		graph_build(cb, shape, h);
	if (shape && shape->unit) {
		if (!graph_replay(cb, l, shape, h))
			return 1;
		/* one by one from now on, until the shape is seen anew */
		pd_cuda_graph_free(cb, shape);
		shape->seen = 0;
	}
	for (i = 0; i < h->n; i++) {
		const struct pd_held_launch *e = &h->v[i];
		const struct cuda_kernel *k = e->kernel;

		r = cb->cu.LaunchKernel(k->fn, e->l.grid[0], e->l.grid[1],
					e->l.grid[2], e->l.block[0],
					e->l.block[1], e->l.block[2],
					e->l.shared_bytes, l->stream,
					(void **)e->l.params, NULL);
		if (r != CUDA_SUCCESS)
			return pd_cuda_space_fail(cb, s, r,
						  "cuLaunchKernel (held)");
	}
	return 0;
}
