/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * held.h - launches a backend holds until their lane is flushed
 * (backend.h, "Held launches"), and the shapes of the sequences it
 * flushed, so that a sequence seen before is replayed as one unit (cuda:
 * a CUDA graph) instead of being launched one by one.
 *
 * Why: a chain of GPU ptasks completed ahead (Documentation/ptaskd.md,
 * "Chains") costs the daemon one cuLaunchKernel (3-4 us of CPU on the
 * H200s) and one fence (about 2 us) a hop.  Held, a hop costs a copy of
 * its parameters; its chain is launched at the end as one graph (about
 * 1 us a node on the GPU, a few us of CPU for the whole graph) with one
 * fence.
 *
 * A *shape* is what must match for a replay: the sequence's kernels,
 * geometries, dynamic shared memory and parameter sizes.  Parameter
 * values may differ (device pointers of other datablocks, sizes passed
 * by value): the backend patches the nodes whose values changed.  A
 * shape is built into a unit only once it was flushed one by one
 * PD_SHAPE_BUILD_AFTER times (a sequence seen once is not worth a
 * graph's instantiation, hundreds of us), and a space remembers at most
 * PD_SHAPES of them, the least recently used going first.
 *
 * Locking: none; a lane's held launches and a space's shapes belong to
 * the thread queuing on the space (backend.h).
 */
#ifndef PTASKD_BACKEND_HELD_H
#define PTASKD_BACKEND_HELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/backend/backend.h"

#define PD_HELD_MAX		256	/* held per lane; more: flushed first */
#define PD_SHAPES		8	/* shapes remembered per space */
#define PD_SHAPE_BUILD_AFTER	2	/* flushes one by one before a unit */

/**
 * struct pd_held_launch - one held launch
 * @kernel: the backend's kernel
 * @l: the launch; its params point into @vals
 * @vals: the parameter values, copied (@vals_len bytes, back to back)
 * @vals_len: their size
 * @vals_cap: @vals's allocation
 */
struct pd_held_launch {
	void *kernel;
	struct pd_launch l;
	unsigned char *vals;
	size_t vals_len;
	size_t vals_cap;
};

/**
 * struct pd_held_lane - what one lane holds
 * @v: the held launches, @n of them (@cap allocated, kept for reuse)
 * @n: held now
 * @cap: entries in @v
 * @first_deferred: the first ticket fence_defer gave since the last
 *	flush (0: none)
 * @last_deferred: the last one
 */
struct pd_held_lane {
	struct pd_held_launch *v;
	uint32_t n;
	uint32_t cap;
	uint64_t first_deferred;
	uint64_t last_deferred;
};

/**
 * struct pd_shape - a sequence of launches flushed before
 * @n: launches in it (0: the slot is free)
 * @hash: of everything pd_held_same_shape compares
 * @kernels: each launch's kernel, @n of them (with @geo: the shape)
 * @geo: each launch's grid, block, shared bytes, parameter count and
 *	sizes (a struct pd_launch with no parameter pointers)
 * @seen: flushes of this shape so far
 * @used: when last flushed (the cache's clock)
 * @unit: the backend's replayable unit, once built (cuda: struct
 *	cuda_graph), else NULL
 */
struct pd_shape {
	uint32_t n;
	uint64_t hash;
	void **kernels;
	struct pd_launch *geo;
	uint32_t seen;
	uint64_t used;
	void *unit;
};

/**
 * struct pd_shapes - a space's shapes
 * @s: the slots
 * @clock: counts flushes (pd_shape.used)
 * @free_unit: frees a shape's unit (the backend's), with @ctx
 * @ctx: its argument
 */
struct pd_shapes {
	struct pd_shape s[PD_SHAPES];
	uint64_t clock;
	void (*free_unit)(void *ctx, struct pd_shape *shape);
	void *ctx;
};

/*
 * Hold a copy of launch @l of @kernel on @h (its parameter values too).
 * -ENOSPC when PD_HELD_MAX are held (flush first), -ENOMEM.
 */
int pd_held_add(struct pd_held_lane *h, void *kernel,
		const struct pd_launch *l);
/* Forget what @h holds (after a flush), keeping its memory. */
void pd_held_clear(struct pd_held_lane *h);
/* Free @h's memory (it holds nothing). */
void pd_held_free(struct pd_held_lane *h);
/* Does @h hold a launch of @kernel? */
bool pd_held_uses(const struct pd_held_lane *h, const void *kernel);

/*
 * The shape of @h's launches: the slot remembering it (seen and used
 * updated), or a new one (seen 1; the least recently used slot is freed
 * for it first).  NULL on -ENOMEM (then nothing is remembered).
 */
struct pd_shape *pd_shapes_see(struct pd_shapes *c,
			       const struct pd_held_lane *h);
/* Forget every shape that launches @kernel (it is being unloaded). */
void pd_shapes_drop_kernel(struct pd_shapes *c, const void *kernel);
/* Forget every shape (the space closes). */
void pd_shapes_free(struct pd_shapes *c);

#endif /* PTASKD_BACKEND_HELD_H */
