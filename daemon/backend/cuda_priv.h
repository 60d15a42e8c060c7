/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cuda_priv.h - what the files of ptaskd's CUDA backend share.
 *
 * The backend (struct pd_backend_ops pd_backend_cuda, backend.h) is
 * split by what it manages:
 *
 *   cuda.c         the driver and its devices: loading, probing, errors,
 *                  init and fini, the ops table
 *   cuda_space.c   contexts and spaces: the current-context cache,
 *                  primary and own contexts, space open and close
 *   cuda_mem.c     memory: a space's allocations, pinned host memory,
 *                  copies within and between spaces
 *   cuda_kernel.c  code: the module cache, kernels, launches and their
 *                  device time (timing events), sync
 *   cuda_fence.c   lanes and fences: fence, fence_poll, fence_wait,
 *                  lane_wait, and the per-fence device time
 *   cuda_calib.c   inplace_max: the copy curve measured at init
 *
 * The driver is reached only through common/cuda_dl.h (libcuda.so.1,
 * loaded at run time).  Functions here that take a space are called by
 * the space's owning thread (backend.h), unless they say otherwise.
 */
#ifndef PTASKD_CUDA_PRIV_H
#define PTASKD_CUDA_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/cuda_dl.h"
#include "common/hash.h"
#include "daemon/backend/backend.h"
#include "daemon/backend/held.h"

#define PD_CUDA_FENCE_RING	128	/* fences in flight per lane */
#define PD_CUDA_LANES		4	/* lanes (streams) per space by default */
/* with no progress for this long, fence_poll asks the driver for a fault */
#define PD_CUDA_STALL_NS	(1000ULL * 1000)
/* the lane words: one per lane, a cache line apart, in one pinned page */
#define PD_CUDA_WORD_STRIDE	64
#define PD_CUDA_WORDS_BYTES	(PD_MAX_LANES * PD_CUDA_WORD_STRIDE)
#define PD_CUDA_MAX_HOSTREGS	256	/* host_register ranges at a time */
#define PD_CUDA_MODULE_CACHE	32	/* modules kept loaded per space */
#define PD_CUDA_MAX_PEERS	(2 * PD_MAX_DEVICES)

/**
 * struct cuda_ctx - a context and its id
 * @ctx: the context
 * @id: a counter never reused (the driver may hand out a destroyed
 *	context's address again), what the current-context cache holds
 */
struct cuda_ctx {
	CUcontext ctx;
	uint64_t id;
};

/**
 * struct cuda_be - the backend's state (pd_backend.priv)
 * @cu: driver entry points, read-only after init
 * @ndev: devices used
 * @dev: CUdevice of each index
 * @shared: config "shared": every space uses the primary context
 * @lock: protects @primary (host_register may come from any thread)
 * @primary: each device's primary context once retained, else ctx NULL
 * @info: be->info, for peer checks in copy_d2d
 * @lanes: lanes (streams) per space, config "lanes=N" (PD_CUDA_LANES)
 * @event_fences: config "fences=events": never stream memory operations
 * @memops: per device: fences are cuStreamWriteValue32 into a pinned
 *	word (else an event per fence, polled with cuEventQuery); cleared
 *	for good when a write says CUDA_ERROR_NOT_SUPPORTED
 * @regs: the ranges given to host_register, @nregs of them (@lock)
 * @nregs: entries in @regs
 * @lone_graphs: launches that are not held go through one-node graphs
 *	(cuda_lone.c; off with PTASKD_NO_LONE_GRAPH in the environment)
 * @lone_replays: launches that did, counted (any thread reads it)
 * @variants: instantiations per held shape (PD_CUDA_VARIANTS, or
 *	PTASKD_GRAPH_VARIANTS: 1 patches one, as before variants)
 * @lone_variants: one-node graphs per kernel and geometry on a lane
 *	(PD_CUDA_LONE_VARIANTS, or PTASKD_LONE_VARIANTS)
 * @lone_patched: lone replays that patched their node first
 * @lone_built: one-node graphs built
 * @held_replays: held sequences replayed as a graph
 * @held_patched: of those, replays that patched nodes first
 * @held_nodes_patched: the nodes they patched
 * @held_execs: held shapes' instantiations made (the first of each
 *	shape included)
 */
struct cuda_be {
	struct pc_cuda_api cu;
	uint32_t ndev;
	CUdevice dev[PD_MAX_DEVICES];
	bool shared;
	pthread_mutex_t lock;
	struct cuda_ctx primary[PD_MAX_DEVICES];
	const struct pd_device_info *info;
	uint32_t lanes;
	bool event_fences;
	_Atomic bool memops[PD_MAX_DEVICES];
	struct cuda_hostreg {
		uintptr_t base;
		size_t bytes;
		bool mapped;	/* registered with DEVICEMAP */
		CUdeviceptr dbase;	/* @base's device address */
	} regs[PD_CUDA_MAX_HOSTREGS];
	uint32_t nregs;
	bool lone_graphs;
	_Atomic uint64_t lone_replays;
	uint32_t variants;
	uint32_t lone_variants;
	_Atomic uint64_t lone_patched;
	_Atomic uint64_t lone_built;
	_Atomic uint64_t held_replays;
	_Atomic uint64_t held_patched;
	_Atomic uint64_t held_nodes_patched;
	_Atomic uint64_t held_execs;
};

/**
 * struct cuda_module - a module loaded in a space, found again by its
 * code's bytes
 * @next: next in the space's cache
 * @hash: FNV-1a of @code
 * @len: @code's length
 * @code: @len bytes and a NUL
 * @mod: the module
 * @refs: kernels handed out
 */
struct cuda_module {
	struct cuda_module *next;
	uint64_t hash;
	size_t len;
	char *code;
	CUmodule mod;
	unsigned int refs;
};

/**
 * struct cuda_kernel - a kernel handed to the engine
 * @module: its module
 * @fn: the function
 * @checked: @nparams and @param_bytes are known
 * @nparams: parameters it takes
 * @param_bytes: their sizes
 * @proven: a launch with @grid, @block and @shared_bytes was queued
 *	without an error: such launches may be held (cuda_kernel.c), since a
 *	held launch's error would surface only at the flush
 * @grid: that launch's grid
 * @block: its block
 * @shared_bytes: its dynamic shared memory
 */
struct cuda_kernel {
	struct cuda_module *module;
	CUfunction fn;
	bool checked;
	uint32_t nparams;
	uint32_t param_bytes[PD_MAX_PARAMS];
	bool proven;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t shared_bytes;
};

/**
 * struct cuda_fence - one fence of a lane, in the lane's ring (slot
 * ticket % PD_CUDA_FENCE_RING)
 * @ticket: the fence it holds now (0: none yet)
 * @taken: its device time was reported (or folded into orphan_ns)
 * @timed: launches were queued in its span: @start .. @end time them
 * @start: recorded before the span's first launch (timing event)
 * @end: recorded after each launch of the span (timing event)
 * @done: recorded with the fence (no timing): lane_wait waits on it, and
 *	without stream memory operations fence_poll queries it
 * @estimated: its span's launches were untimed (pd_launch.untimed): its
 *	device time is estimated from @submit_ns and when its fence was
 *	seen to pass
 * @submit_ns: when the span's first launch was queued
 * @deferred: made by fence_defer, its lane not flushed since: no mark
 *	is queued for it yet (fence_wait refuses it, lane_wait flushes)
 * @cover: 0, or the later ticket whose mark and done event passed for
 *	it (a deferred fence, once its lane was flushed)
 * @batch_n: estimated spans flushed together with this one (0: not
 *	flushed with others): its estimate is a 1/@batch_n share of the
 *	time from the flush (@submit_ns) to its being seen
 * @evented: @done was recorded with its mark; else its word write was
 *	queued alone (cuda_fence.c, "fences"), and the word says it passed
 *
 * The events are made on the slot's first use and kept.  The lane's
 * owner thread fills a slot; @ticket, @taken and reading the events'
 * times go under the lane's lock, for the pollers.
 */
struct cuda_fence {
	uint64_t ticket;
	bool taken;
	bool timed;
	CUevent start;
	CUevent end;
	CUevent done;
	bool estimated;
	uint64_t submit_ns;
	bool deferred;
	uint64_t cover;
	uint32_t batch_n;
	bool evented;
};

#define PD_CUDA_LONE		4	/* one-node graphs per lane (cuda_lone.c) */
/*
 * Instantiations per held shape, and one-node graphs per kernel and
 * geometry on a lane, each for its own parameter values (cuda_lone.c,
 * "DOC: variants"): the defaults, and the most PTASKD_GRAPH_VARIANTS and
 * PTASKD_LONE_VARIANTS may ask for.  One-node graphs default to one:
 * two did not make P1 faster on an H200 (2026-12-02, ptaskd.md).
 */
#define PD_CUDA_VARIANTS	2
#define PD_CUDA_LONE_VARIANTS	1
#define PD_CUDA_VARIANTS_MAX	4
/* a lane's graph is replaced only after this many launches unused */
#define PD_CUDA_LONE_IDLE	(4 * PD_CUDA_LONE)
/* after a graph failed, a lane builds none for this many launches */
#define PD_CUDA_LONE_BACKOFF	1024

/**
 * struct cuda_lone - a kernel's one-node graph on one lane (cuda_lone.c)
 * @kernel: whose (NULL: the slot is free)
 * @grid: the geometry it was built for, with @block and @shared_bytes
 * @block: see @grid
 * @shared_bytes: see @grid
 * @g: the graph
 * @x: its instantiation
 * @node: its kernel node
 * @nparams: the parameters @vals holds
 * @vals: the values the node was given last, back to back (@vals_len
 *	bytes of @vals_cap): a launch with the same ones needs no patch
 * @vals_len: see @vals
 * @vals_cap: see @vals
 * @used: the lane's @lone_clock at its last launch (least recently used
 *	goes first, once idle for PD_CUDA_LONE_IDLE launches)
 */
struct cuda_lone {
	const struct cuda_kernel *kernel;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t shared_bytes;
	CUgraph g;
	CUgraphExec x;
	CUgraphNode node;
	uint32_t nparams;
	unsigned char *vals;
	size_t vals_len;
	size_t vals_cap;
	uint64_t used;
};

/**
 * struct cuda_lane - one lane of a space: a stream and its fences
 * @stream: the non-blocking stream
 * @word: this lane's u32 in the space's pinned page (the GPU writes each
 *	fence's ticket there); NULL without stream memory operations
 * @word_dev: @word's device address
 * @made: the last ticket made (owner thread; @issued publishes it)
 * @span_open: a launch was queued since the last fence (owner thread)
 * @dirty: work was queued since the last sync (owner thread; copy_d2d
 *	from the other space's thread sets it too, hence atomic)
 * @collected: sync took the times of every ticket up to this one
 * @issued: the last ticket made, for the pollers (release store)
 * @passed: every ticket up to this one has passed (a hint, only grows)
 * @orphan_ns: device time of fences whose slot was reused before anyone
 *	took it: given to the next poll that reports a time, or to sync
 * @seen_word: the word as the last stall check saw it
 * @seen_ns: when it last changed (or the stall watch began)
 * @lock: protects the slots' @ticket and @taken, and their event times
 * @ring: the fences
 * @held: launches held until the lane is flushed (owner thread)
 * @lone: its kernels' one-node graphs (owner thread; cuda_lone.c)
 * @lone_clock: counts the lane's launches that are not held, for @lone's
 *	@used
 * @lone_backoff: no graph is built before @lone_clock reaches it (one
 *	failed)
 */
struct cuda_lane {
	CUstream stream;
	uint32_t *word;
	CUdeviceptr word_dev;
	uint64_t made;
	bool span_open;
	_Atomic bool dirty;
	uint64_t collected;
	_Atomic uint64_t issued;
	_Atomic uint64_t passed;
	_Atomic uint64_t orphan_ns;
	_Atomic uint32_t seen_word;
	_Atomic uint64_t seen_ns;
	pthread_mutex_t lock;
	struct cuda_fence ring[PD_CUDA_FENCE_RING];
	struct pd_held_lane held;
	struct cuda_lone lone[PD_CUDA_LONE];
	uint64_t lone_clock;
	uint64_t lone_backoff;
};

/**
 * struct cuda_space - one device seen through one context
 * @cb: the backend
 * @dev: the device's index
 * @owner: the client it is for (0: none)
 * @primary: it uses the device's primary context (else one of its own)
 * @c: its context
 * @nlanes: lanes in @lane made so far (cuda_be.lanes once open)
 * @memops: its fences use stream memory operations (@words is set)
 * @last_seen_ns: when a poll last took a fence's time in this space: an
 *	estimated span starts no earlier, so estimates of overlapping lanes
 *	never add up to more than the wall time (PTSched would hold a
 *	process alone on its device for time it did not use)
 * @words: the pinned page of the lanes' fence words (cuMemHostAlloc)
 * @failed: 0, or -EIO once a lane faulted (sticky; any thread)
 * @fail_logged: the fault was logged
 * @lane: the lanes
 * @xlock: protects @xev
 * @xev: orders copies between spaces and lanes
 * @modules: the module cache, @nmodules long
 * @nmodules: modules loaded
 * @allocs: its device allocations (struct cuda_alloc), by pointer
 * @peers: ids of the contexts it can access, @npeers of them
 * @npeers: entries in @peers
 * @shapes: sequences of held launches its lanes flushed, with their
 *	CUDA graphs once built (cuda_kernel.c)
 *
 * Everything but @xlock, @xev, @failed and the lanes' atomics and
 * locked slots is used by the space's owning thread alone (backend.h);
 * copy_d2d, run by the thread of the other space, takes @xlock around
 * @xev and queues waits on a lane's stream (thread-safe in the driver);
 * pollers (any thread) read the lanes' words and atomics and take a
 * lane's lock for its slots.
 */
struct cuda_space {
	struct cuda_be *cb;
	uint32_t dev;
	uint64_t owner;
	bool primary;
	struct cuda_ctx c;
	uint32_t nlanes;
	_Atomic bool memops;
	_Atomic uint64_t last_seen_ns;
	uint32_t *words;
	_Atomic int failed;
	_Atomic bool fail_logged;
	struct cuda_lane lane[PD_MAX_LANES];
	pthread_mutex_t xlock;
	CUevent xev;
	struct cuda_module *modules;
	uint32_t nmodules;
	struct pc_hash allocs;
	uint64_t peers[PD_CUDA_MAX_PEERS];
	uint32_t npeers;
	struct pd_shapes shapes;
};

/* --- cuda.c ----------------------------------------------------------- */

/*
 * Log failed driver call @what and map @r: -ENOMEM or -EIO.  An error
 * that poisons the process's CUDA ends ptaskd (pd_fatal).
 */
int pd_cuda_fail(struct cuda_be *cb, CUresult r, const char *what);
/* Does @r poison every context of the process (a kernel's fault)? */
bool pd_cuda_sticky(CUresult r);
/*
 * pd_cuda_fail for a call queued on @s: a sticky error also makes @s
 * fail (pd_cuda_space_fail), since nothing queued on it will complete.
 */
int pd_cuda_queue_fail(struct cuda_be *cb, struct cuda_space *s, CUresult r,
		       const char *what);

/* --- cuda_space.c ----------------------------------------------------- */

/* Make @c current on this thread unless it already is: 0 or -errno. */
int pd_cuda_ctx_use(struct cuda_be *cb, const struct cuda_ctx *c);
/* Device @dev's primary context, retained on first use (any thread). */
int pd_cuda_ctx_primary(struct cuda_be *cb, uint32_t dev,
			struct cuda_ctx *out);
/* Context @id is gone: this thread's cache must not name it any more. */
void pd_cuda_ctx_forget(uint64_t id);

int pd_cuda_space_open(struct pd_backend *be, uint32_t dev, uint64_t owner,
		       void **space);
void pd_cuda_space_close(struct pd_backend *be, void *space);

/* --- cuda_mem.c ------------------------------------------------------- */

int pd_cuda_mem_alloc(struct pd_backend *be, void *space, size_t bytes,
		      uint64_t *dptr);
void pd_cuda_mem_free(struct pd_backend *be, void *space, uint64_t dptr);
/*
 * Forget @s's allocations; with @free_memory (its context current), free
 * them on the device too.
 */
void pd_cuda_mem_release(struct cuda_be *cb, struct cuda_space *s,
			 bool free_memory);
int pd_cuda_host_register(struct pd_backend *be, void *p, size_t bytes);
void pd_cuda_host_unregister(struct pd_backend *be, void *p);
int pd_cuda_host_device_ptr(struct pd_backend *be, void *space, void *host,
			    size_t bytes, uint64_t *dptr);
int pd_cuda_copy_h2d(struct pd_backend *be, void *space, uint32_t lane,
		     uint64_t dst, const void *src, size_t bytes);
int pd_cuda_copy_d2h(struct pd_backend *be, void *space, uint32_t lane,
		     void *dst, uint64_t src, size_t bytes);
int pd_cuda_copy_d2d(struct pd_backend *be, void *dst_space,
		     uint32_t dst_lane, uint64_t dst, void *src_space,
		     uint32_t src_lane, uint64_t src, size_t bytes);

/* --- cuda_kernel.c ---------------------------------------------------- */

/* Unload @s's modules (context current). */
void pd_cuda_code_release(struct cuda_be *cb, struct cuda_space *s);
int pd_cuda_kernel_load(struct pd_backend *be, void *space, const void *code,
			size_t code_len, const char *entry, void **kernel);
void pd_cuda_kernel_unload(struct pd_backend *be, void *space, void *kernel);
int pd_cuda_launch(struct pd_backend *be, void *space, uint32_t lane,
		   void *kernel, const struct pd_launch *l);
/*
 * Queue the launches @l holds (context current), as a CUDA graph when
 * their shape was flushed PD_SHAPE_BUILD_AFTER times before: 1 when a
 * graph was launched, 0 when they were launched one by one (or none was
 * held), -EIO when one could not be (the space failed).  The mark of the
 * deferred fences is the caller's (pd_cuda_lane_flush).
 */
int pd_cuda_held_queue(struct cuda_be *cb, struct cuda_space *s,
		       struct cuda_lane *l);
/* Free a shape's graph (struct pd_shapes.free_unit). */
void pd_cuda_graph_free(void *ctx, struct pd_shape *shape);

/* --- cuda_lone.c ------------------------------------------------------ */

/* Has the driver what graphs built node by node need (held and lone)? */
bool pd_cuda_graphs_usable(const struct cuda_be *cb);
/* @l of @k as a kernel node's parameters (its params, not copied) */
void pd_cuda_node_params(const struct cuda_kernel *k, const struct pd_launch *l,
			 CUDA_KERNEL_NODE_PARAMS *p);
/*
 * Launch @l of @k on @ln through its one-node graph (context current,
 * after the lane's held launches): 1 when the graph was launched, 0 when
 * there is none (or it failed and was dropped): launch it as usual.
 */
int pd_cuda_lone_launch(struct cuda_be *cb, struct cuda_space *s,
			struct cuda_lane *ln, const struct cuda_kernel *k,
			const struct pd_launch *l);
/*
 * @l of @k was launched plainly on @ln (context current): count it, and
 * if @again (@k's last launch had the same geometry) build its graph
 * there, in a free slot or one unused for PD_CUDA_LONE_IDLE launches; a
 * failure is logged, and the kernel goes on being launched as usual.
 */
void pd_cuda_lone_learn(struct cuda_be *cb, struct cuda_lane *ln,
			const struct cuda_kernel *k, const struct pd_launch *l,
			bool again);
/* Drop @k's graphs on every lane of @s (@k NULL: all of them). */
void pd_cuda_lone_drop(struct cuda_be *cb, struct cuda_space *s,
		       const struct cuda_kernel *k);

/* --- cuda_fence.c ----------------------------------------------------- */

/* Make @s's lanes: streams, locks, fence words (context current). */
int pd_cuda_lanes_open(struct cuda_be *cb, struct cuda_space *s);
/* Undo pd_cuda_lanes_open, events included (context current, idle). */
void pd_cuda_lanes_close(struct cuda_be *cb, struct cuda_space *s);
/*
 * Check @lane of @s for a queuing operation: -EINVAL out of range,
 * -EIO once the space failed; marks the lane dirty.
 */
int pd_cuda_lane_get(struct cuda_space *s, uint32_t lane,
		     struct cuda_lane **out);
/* Time a launch about to be queued on @l (before / after it). */
int pd_cuda_span_before(struct cuda_be *cb, struct cuda_space *s,
			struct cuda_lane *l, bool untimed);
int pd_cuda_span_after(struct cuda_be *cb, struct cuda_lane *l);
/* The space failed (a fault): log once, make every later call fail. */
int pd_cuda_space_fail(struct cuda_be *cb, struct cuda_space *s, CUresult r,
		       const char *what);
int pd_cuda_fence(struct pd_backend *be, void *space, uint32_t lane,
		  uint64_t *ticket);
int pd_cuda_fence_poll(struct pd_backend *be, void *space, uint32_t lane,
		       uint64_t ticket, uint64_t *gpu_ns);
int pd_cuda_fence_wait(struct pd_backend *be, void *space, uint32_t lane,
		       uint64_t ticket, uint64_t *gpu_ns);
int pd_cuda_lane_wait(struct pd_backend *be, void *space, uint32_t lane,
		      uint32_t from, uint64_t ticket);
int pd_cuda_sync(struct pd_backend *be, void *space, uint64_t *gpu_ns);
int pd_cuda_fence_defer(struct pd_backend *be, void *space, uint32_t lane,
			uint64_t *ticket);
int pd_cuda_flush(struct pd_backend *be, void *space, uint32_t lane);
/*
 * Flush lane @l of @s (backend.h: held launches, then the mark of its
 * deferred fences): 1 replayed, 0, or -errno.  Owner thread; makes @s's
 * context current.
 */
int pd_cuda_lane_flush(struct cuda_be *cb, struct cuda_space *s,
		       struct cuda_lane *l);
/* Flush every lane of @s: 0 or the first -errno. */
int pd_cuda_flush_all(struct cuda_be *cb, struct cuda_space *s);

/* --- cuda_calib.c ----------------------------------------------------- */

/*
 * Measure device @dev's copy curve and set be->info[@dev].inplace_max
 * (in its primary context, retained until fini).  -errno on a driver
 * error (init then logs it and sets 0: always copy).
 */
int pd_cuda_calibrate(struct pd_backend *be, uint32_t dev);

#endif /* PTASKD_CUDA_PRIV_H */
