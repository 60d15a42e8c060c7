/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * engine.h - ptaskd's executor: takes queued invocations from a source,
 * places them on accelerators by policy, makes their inputs valid there,
 * launches, and completes them with their outputs and GPU time.
 *
 * A *source* is where invocations come from:
 *   user mode   - the namespace ptaskd holds itself (source_user.c: core
 *                 calls under the namespace lock, datablocks in memfd
 *                 arenas the daemon maps);
 *   kernel mode - ptask.ko through a registered /dev/ptask fd
 *                 (source_kernel.c: EXEC_TAKE/EXEC_COMPLETE ioctls,
 *                 datablocks mmapped from the module).
 * The engine sees only struct pd_source_ops, so both modes share every
 * line of scheduling and transfer code.
 *
 * Datablock views: for each datablock handle the engine keeps one view
 * per memory space (backend.h) with a valid bit and the datablock's
 * generation (struct ptask_invocation_port.generation) when it was
 * copied; host memory is the datablock's own pages (never a bounce
 * buffer).  Inputs are copied to a space only when its view is not valid
 * at the current generation; outputs are valid only where they were made
 * and are written back to host memory only when a client will pull them
 * (PTASK_INVP_TO_CLIENT) or when they are needed in a space that cannot
 * be reached from where they are valid.
 */
#ifndef PTASKD_ENGINE_H
#define PTASKD_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include "uapi/ptask.h"
#include "daemon/backend/backend.h"

struct pd_source;

/**
 * struct pd_wake_defer - executor wake-ups one thread holds back
 * @deferred: a call made with this record made work ready, and the
 *	executor (the engine's taker) was not woken for it
 * @idle: NULL, or work of the owner's that the engine runs on the
 *	owner's thread while it waits for the fence of a job the owner
 *	runs (pd_job_wait_complete_locked, the engine's lock not held):
 *	a ring's releases held back from a round's path (ring_server.c)
 * @idle_arg: @idle's argument
 *
 * The thread that made ptasks ready runs them itself where it can:
 * waking the taker as well would only cost a context switch on the
 * invocation's critical path (and the taker wakes a worker: another),
 * or race it for the work.  Such threads are a client's connection
 * once it has answered its client (pd_engine_help), a device's worker
 * after a job that completed (ahead or not) and the completion thread
 * (pd_engine_take_made).  The thread passes its record with its source
 * calls (user mode: struct pd_call_ctx.defer, and the source ops'
 * @defer); while such a call holds the namespace lock, the namespace
 * notes here the executor wake-ups it makes instead of making them
 * (pd_ns.wake_defer).  A call that sleeps makes them first.  Whoever
 * holds one back and does not take all the work makes it
 * (pd_ns_wake_executor, the source's @wake).  A source that never holds
 * one back (kernel mode: the module wakes the taker) ignores it.
 *
 * While the engine waits on the owner's thread for a job's fence
 * (pd_job_wait_complete_locked), it calls @idle first, then @seen once
 * the fence passed or failed (@err: 0 or -errno), both with @idle_arg
 * and no lock held: the owner's own work beside the kernel (a ring's
 * held releases; its pull of the job's output, answered the moment the
 * fence passes: ring_server.c).  @ahead_id is the invocation's id when
 * it is a lone invocation completed ahead, whose fence this thread is
 * sure to see itself, else 0; @seen is called only then.  @due_ns: when
 * the fence is expected to pass (CLOCK_MONOTONIC; UINT64_MAX: unknown),
 * which bounds whatever @idle waits for.  Either may be NULL.
 *
 * Locking: none.  Only its owner's calls see it, so only its owner's
 * thread reads or writes it.
 */
struct pd_wake_defer {
	bool deferred;
	void (*idle)(void *arg, uint64_t ahead_id, uint64_t due_ns);
	void (*seen)(void *arg, uint64_t ahead_id, int err);
	void *idle_arg;
};

/* Was an executor wake-up held back in @d since last asked?  Forgets it. */
static inline bool pd_wake_defer_take(struct pd_wake_defer *d)
{
	bool was = d->deferred;

	d->deferred = false;
	return was;
}

/* One datablock to map (struct pd_source_ops.db_map_many). */
struct pd_map_req {
	uint32_t handle;
	uint64_t mmap_offset;
	uint64_t bytes;
};

/**
 * struct pd_source_ops - what the engine needs from a source
 * @take: EXEC_TAKE semantics (uapi/ptask.h): blocks until
 *	@arg->timeout_ns (absolute CLOCK_MONOTONIC, 0: forever) for at least
 *	one invocation; fills @inv and @ports; -ETIMEDOUT, -EINTR after
 *	@interrupt, other -errno on failure
 * @complete: EXEC_COMPLETE; @outs has @arg->n_outputs entries
 * @settle_many: @complete of @arg (a settle, no outputs) for each of the
 *	@n invocation ids @ids (@arg->id is overwritten), in one lock round
 *	of the source's; @errs gets each one's result.  NULL for a source
 *	without it (the engine calls @complete for each)
 * @ptask_info: EXEC_PTASK_INFO; @code may be NULL to learn the size
 * @db_map: host address of datablock @handle (an input of an invocation
 *	the engine took, or one it created); valid until @db_unmap
 * @db_map_many: @db_map for the @n datablocks of @reqs in one call (one
 *	lock round), each address in @data, NULL where that one failed (the
 *	engine maps it alone then, and meets its error); NULL for a source
 *	without it
 * @db_unmap: the engine no longer needs that address
 * @db_unmap_many: @db_unmap for the @n datablocks @handles in one call
 *	(one lock round); NULL for a source without it
 * @db_create: a datablock of @bytes for an output of invocation @inv,
 *	held by the engine (its reference passes on when it is emitted as
 *	an output), mapped at *@data
 * @db_release: drop the engine's reference to a datablock it created and
 *	did not emit
 * @interrupt: make a blocked @take return -EINTR (shutdown)
 * @wake: make the executor wake-ups held back in struct pd_wake_defer
 *	records now (for an engine thread that held some back and left work
 *	it did not take); NULL for a source that holds none back
 * @caps: PD_SOURCE_* the source supports
 *
 * The ops that change the source's state, and so may make work ready
 * (@take, @complete, @settle_many, @db_create, @db_release), carry
 * @defer: the
 * helper's record when the engine calls them for a helper
 * (pd_engine_help) or for a worker or the completion thread (their own
 * records: pd_engine_take_made), NULL from the taker.
 */
struct pd_source_ops {
	int (*take)(struct pd_source *s, struct ptask_exec_take *arg,
		    struct ptask_invocation *inv,
		    struct ptask_invocation_port *ports,
		    struct pd_wake_defer *defer);
	int (*complete)(struct pd_source *s, struct ptask_exec_complete *arg,
			const struct ptask_exec_output *outs,
			struct pd_wake_defer *defer);
	void (*settle_many)(struct pd_source *s,
			    struct ptask_exec_complete *arg,
			    const uint64_t *ids, uint32_t n, int *errs,
			    struct pd_wake_defer *defer);
	int (*ptask_info)(struct pd_source *s,
			  struct ptask_exec_ptask_info *arg, void *code);
	int (*db_map)(struct pd_source *s, uint32_t handle,
		      uint64_t mmap_offset, uint64_t bytes, void **data);
	void (*db_map_many)(struct pd_source *s, uint32_t n,
			    const struct pd_map_req *reqs, void **data);
	void (*db_unmap)(struct pd_source *s, uint32_t handle, void *data,
			 uint64_t bytes);
	void (*db_unmap_many)(struct pd_source *s, uint32_t n,
			      const uint32_t *handles);
	int (*db_create)(struct pd_source *s, const struct ptask_invocation *inv,
			 uint64_t bytes, uint32_t *handle, void **data,
			 struct pd_wake_defer *defer);
	int (*db_release)(struct pd_source *s, uint32_t handle,
			  struct pd_wake_defer *defer);
	void (*interrupt)(struct pd_source *s);
	void (*wake)(struct pd_source *s);
	uint32_t caps;
};

/*
 * @complete takes PTASK_EXEC_COMPLETE_AHEAD and _SETTLE (chains ahead,
 * Documentation/ptaskd.md "Chains").  Both sources set it: user mode's
 * core and ptask.ko take the flags on EXEC_COMPLETE.  A module that
 * predates them answers -EINVAL, and the engine then completes that
 * invocation plainly, once its fence passed.
 */
#define PD_SOURCE_AHEAD		(1U << 0)
/*
 * @take takes PTASK_TAKE_AHEAD: the core completes ahead, with outputs of
 * its own making, what it takes of a chain or a stream, and takes what
 * that made ready in the same call (pd_engine_take_flags).  Both sources
 * set it; a module that predates the flag answers -EINVAL, and the
 * engine then takes without it from then on.
 */
#define PD_SOURCE_TAKE_AHEAD	(1U << 1)
/*
 * The taker is the only thread that takes: the source holds no wake-up
 * back for another (kernel mode: ptask.ko wakes the taker itself, and no
 * connection thread helps), so the taker may take ahead too (no other
 * take can be on its way to the queue with what a job waits for).
 */
#define PD_SOURCE_ONE_TAKER	(1U << 2)
/*
 * @take takes PTASK_TAKE_FUSE: a run of GPU ptasks linked only to each
 * other comes as one invocation, a segment (Documentation/ptaskd.md,
 * "Segments").  A module that predates the flag answers -EINVAL, and the
 * engine then takes without it from then on.
 */
#define PD_SOURCE_FUSE		(1U << 3)
/*
 * @take takes PTASK_TAKE_OUTPUTS: the core makes the outputs' datablocks
 * as it takes (PTASK_INVP_MADE), for a source where each db_create is a
 * round trip (kernel mode's ioctl, an executor process's message).  A
 * module that predates the flag answers -EINVAL, and the engine then
 * takes without it from then on.
 */
#define PD_SOURCE_OUTPUTS	(1U << 4)

struct pd_source {
	const struct pd_source_ops *ops;
};

/* Scheduling policies (PTask section 5.1). */
enum pd_policy {
	PD_POLICY_FIRST_AVAILABLE = 0,
	PD_POLICY_FIFO = 1,
	PD_POLICY_PRIORITY = 2,
	PD_POLICY_DATA_AWARE = 3,
	__PD_POLICY_MAX,
};

/* "first-available", "fifo", "priority", "data-aware"; -EINVAL if none. */
int pd_policy_parse(const char *name);
const char *pd_policy_name(int policy);

/**
 * struct pd_engine_config - how the engine starts
 * @policy: enum pd_policy
 * @shared_isolation: one memory space per device for every client
 *	(else one per client per device)
 * @migrate_threshold: data-aware: effective priority above which a ptask
 *	runs on another device than the one holding its inputs; 0: the
 *	default, 90 (Documentation/ptaskd.md, "Scheduling")
 * @device_memory_limit: 0, or bytes of device memory the engine may use
 *	per device (below what the device has), to exercise eviction
 * @space_idle_ms: a client's memory space (its context) unused this long
 *	is closed, its device-only data written back first; 0: 60 s.
 *	Shared spaces (@shared_isolation) stay open.
 * @max_inflight: jobs a device takes at once (submitted and not yet
 *	completed, over all its lanes); 0: PD_INFLIGHT_DEFAULT (64)
 * @inplace_set: @inplace_max overrides what each device reports
 *	(pd_device_info.inplace_max); else the backend's is used
 * @inplace_max: with @inplace_set, bytes up to which registered host
 *	pages are used in place instead of copied (0: never)
 * @no_ahead: never complete an invocation ahead of its fence (chains
 *	wait for the host at every hop, as before issue 12: for comparison)
 * @no_hold: never hold a chain's launches for one flush (each hop is
 *	launched and fenced on its own: for comparison)
 * @no_lone_ahead: never complete ahead a lone invocation pulled by a
 *	client (its waiting submitter completes it after its fence, as
 *	before 2026-12-02: for comparison)
 * @no_take_ahead: never ask the core to complete ahead what it takes
 *	(each hop is taken, then completed ahead, one call each: for
 *	comparison)
 * @no_fuse: never ask the core for segments (each ptask of a chain is an
 *	invocation of its own: for comparison)
 * @no_batch: a job for every invocation, never a batch of a stream's
 *	(engine.c, "Batches": for comparison)
 * @no_turn_wait: a helper whose short job finds the device claimed by
 *	another helper leaves it to the device's worker at once instead of
 *	waiting its turn (help.c, wait_turn_locked: for comparison)
 * @turn_wait_few_cores: helpers wait their turn even with few CPUs
 *	(PD_FEW_CORES), where it is off otherwise (tests)
 * @time_contended: time every launch while another process uses the
 *	device, short kernels' too, instead of a sample (worker.c,
 *	launch_sampled_timed: for comparison)
 */
struct pd_engine_config {
	int policy;
	bool shared_isolation;
	double migrate_threshold;
	uint64_t device_memory_limit;
	uint32_t space_idle_ms;
	uint32_t max_inflight;
	bool inplace_set;
	uint64_t inplace_max;
	bool no_ahead;
	bool no_lone_ahead;
	bool no_hold;
	bool no_take_ahead;
	bool no_fuse;
	bool no_batch;
	bool time_contended;
	bool no_turn_wait;
	bool turn_wait_few_cores;
};

#define PD_INFLIGHT_DEFAULT	64
#define PD_INFLIGHT_MAX		4096

/**
 * struct pd_engine_stats - counters since start (for tests and ptaskctl)
 * @invocations: completed invocations
 * @failed: invocations completed with an error status
 * @migrations: invocations run on a device other than the one where
 *	most of their inputs were valid
 * @per_device: invocations run on each device
 * @bytes_h2d: bytes copied host to device
 * @bytes_d2h: bytes copied device to host
 * @bytes_d2d: bytes copied between spaces
 * @evictions: views evicted under device memory pressure
 * @gpu_ns: device time of all invocations
 * @spaces: memory spaces open now
 * @spaces_closed: spaces closed because they were idle
 * @bytes_inplace: input and output bytes a kernel used in place in host
 *	memory instead of being copied
 * @lane_waits: lane_wait calls (a job ordered behind another lane)
 * @inflight_max: most jobs in flight on one device at once
 * @helped: jobs a helper submitted itself (pd_engine_help)
 * @ahead: invocations completed ahead of their fence (settled later)
 * @upstream_failed: jobs failed because work they read failed
 * @prewarmed: ptasks whose space and kernel were made ready before their
 *	first invocation (pd_engine_prewarm)
 * @held: launches held for a later flush (a chain's hops: worker.c)
 * @flushes: flushes of held launches
 * @replays: flushes the backend ran as one replayed unit (cuda: a graph)
 * @taken_ahead: of @ahead, invocations the core completed ahead as they
 *	were taken (PTASK_TAKE_AHEAD)
 * @segments: of @invocations, segments (PTASK_TAKE_FUSE) completed
 * @fused: the ptasks those segments ran
 * @batches: jobs that ran several invocations of one ptask taken ahead
 *	(engine.c, "Batches")
 * @batched: the invocations those batches ran
 * @queued: jobs made and waiting for a device now (not a counter)
 * @infos: ptask infos cached now (not a counter): ptasks alive that ran,
 *	until their death notice
 * @contended: launches while another process used their device lately
 *	(worker.c, launch_timed)
 * @turn_waits: a helper waited for a device another helper claimed
 * @turn_claims: of @turn_waits, it then claimed a job itself
 * @contended_untimed: of @contended, launches sampled out of timing and
 *	charged their ptask's average (worker.c, launch_sampled_timed)
 * @per_lane: jobs placed on each lane index, all spaces together (a
 *	segment or a batch counts once; ties between lanes go to the
 *	lowest: prepare.c, "Lanes")
 */
struct pd_engine_stats {
	uint64_t invocations;
	uint64_t failed;
	uint64_t migrations;
	uint64_t per_device[PD_MAX_DEVICES];
	uint64_t bytes_h2d;
	uint64_t bytes_d2h;
	uint64_t bytes_d2d;
	uint64_t evictions;
	uint64_t gpu_ns;
	uint64_t spaces;
	uint64_t spaces_closed;
	uint64_t bytes_inplace;
	uint64_t lane_waits;
	uint64_t inflight_max;
	uint64_t helped;
	uint64_t ahead;
	uint64_t upstream_failed;
	uint64_t prewarmed;
	uint64_t held;
	uint64_t flushes;
	uint64_t replays;
	uint64_t taken_ahead;
	uint64_t segments;
	uint64_t fused;
	uint64_t batches;
	uint64_t batched;
	uint64_t queued;
	uint64_t infos;
	uint64_t contended;
	uint64_t contended_untimed;
	uint64_t turn_waits;
	uint64_t turn_claims;
	uint64_t per_lane[PD_MAX_LANES];
};

struct pd_engine;

/* Start the taker and device threads.  Returns 0 or -errno. */
int pd_engine_start(struct pd_source *src, struct pd_backend *be,
		    const struct pd_engine_config *cfg,
		    struct pd_engine **out);
/*
 * Stop taking, finish (complete) every invocation already taken, join
 * the threads, free every view and space.
 */
void pd_engine_stop(struct pd_engine *e);
int pd_engine_set_policy(struct pd_engine *e, int policy);
void pd_engine_get_stats(struct pd_engine *e, struct pd_engine_stats *st);
/*
 * Datablock @handle is gone: drop its views (user mode: the namespace's
 * forget notifier, which ptaskd wires to this).  Any thread, also under
 * the source's own lock: it makes no source call.  A ptask's handle may
 * be given too (its cached info is dropped).
 */
void pd_engine_forget(struct pd_engine *e, uint32_t handle);
/*
 * A client (process @owner_pid) opened GPU ptask @ptask: a device's
 * worker makes the client's space and loads the ptask's kernel ahead of
 * its first invocation (engine/prewarm.c).  Any thread, also under the
 * source's own lock: it only queues the request.
 */
void pd_engine_prewarm(struct pd_engine *e, uint32_t ptask,
		       int32_t owner_pid);
/*
 * A thread of the source that just made invocations ready (user mode: a
 * client's connection, after answering its call) takes them itself and
 * runs short ones on an idle device instead of handing them to the
 * taker and a worker; see help.c.  The taker's wake-up for that work was
 * held back in @defer, which goes with every source call made on the
 * helper's behalf; @more(@defer) says whether the jobs it ran made more
 * work ready (a wake-up was held back since: it takes again then).  Not
 * while pd_engine_stop runs.  Returns true when ready work may be left
 * for the taker to take (the caller wakes it).
 */
bool pd_engine_help(struct pd_engine *e, struct pd_wake_defer *defer,
		    bool (*more)(struct pd_wake_defer *defer));

#endif /* PTASKD_ENGINE_H */
