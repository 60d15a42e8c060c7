/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * engine_priv.h - the engine's own objects, shared by its files:
 *
 *   engine.c   start, stop, the taker thread (invocations to jobs), the
 *              ptask-info cache, the housekeeping thread
 *   sched.c    effective priority and placement (PTask section 5.1)
 *   views.c    datablock records and their views per memory space,
 *              pd_engine_forget
 *   devpool.c  device memory: per-space pools by size class, the device
 *              memory limit, eviction
 *   space.c    a device's memory spaces: opened on first use, the
 *              kernels loaded in them, write-behind of idle device-only
 *              data, idle spaces closed, all closed at stop
 *   worker.c   one thread per device, and a job's submission: space,
 *              kernel, prepare, launch, copies back, fence (pd_job_run)
 *   completer.c the completion thread: polls the fences of the jobs in
 *              flight and completes those whose fence passed, in lane
 *              order (pd_lane_reap_locked, also used by helpers)
 *   prepare.c  a job before its launch: inputs made valid in its space,
 *              outputs made, kernel parameters and geometry
 *   complete.c a job after its launch: copies back for clients, where
 *              the bytes now are (commit), EXEC_COMPLETE or the failure
 *   help.c     helpers (pd_engine_help): a source's thread that made
 *              work ready takes it and runs short jobs itself
 *
 * Pipelining: a device takes up to max_inflight jobs at once.  Placement
 * gives a device one job at a time to *submit* (dev->job): its space
 * and kernel, its inputs made valid on a lane of the space (prepare.c),
 * the launch and the copies back queued on that lane, then a fence
 * (worker.c).  The job then waits in its lane's in-flight list
 * (struct pd_lane) and the device takes the next one.  It is completed
 * (complete.c: commit, EXEC_COMPLETE) once its fence passed, by whoever
 * sees that first: the completion thread (completer.c), or the helper
 * or worker that submitted it and waits for its fence itself (a short
 * job: completer.c says when).  Jobs of one lane
 * complete in lane order.  A job that fails after queuing work on its
 * lane is fenced all the same and fails when its fence passes, since
 * that work uses its buffers.
 *
 * Chains ahead (Documentation/ptaskd.md, "Chains"): a job whose
 * outputs all go on to GPU ptasks (none PTASK_INVP_TO_CLIENT), or go
 * to pulls alone while its next invocation waits or its submitter waits
 * for its fence (pd_job_can_ahead_locked), is
 * completed at once when its fence is queued (pd_job_ahead: commit, then
 * EXEC_COMPLETE with PTASK_EXEC_COMPLETE_AHEAD), before it joins its
 * lane, so the ptasks downstream are taken, placed and queued behind its
 * work (same lane, or lane_wait on its fence: the views it wrote
 * remember it) while it runs.  When its fence passes it is *settled*
 * (pd_job_finish: EXEC_COMPLETE with PTASK_EXEC_COMPLETE_SETTLE, its
 * status and device time).  What it wrote remembers it
 * (pd_dbrec.ahead_writer) until then; a job that reads such a datablock
 * holds a reference to the writer (pd_jport.upstream) and is completed
 * only after the writer was settled (pd_lane_reap_locked reaps the
 * writer's lane first, or waits), and fails with -EIO when the writer
 * failed (pd_job.failed, pd_dbrec.failed): bytes a failed job wrote
 * never reach a client.  The hops' launches are held and flushed
 * together at the chain's last hop (worker.c, "Held launches"), so a
 * chain that repeats is replayed as one CUDA graph.
 *
 * Hazards between lanes of one space: a view remembers the lane and
 * ticket of the fence after the work that made it valid
 * (write_lane/write_ticket) and, per lane, the last fence after work
 * that read it (read_ticket); a job on another lane that reads it waits
 * for the writer (lane_wait), and one that overwrites it (a newer
 * generation copied in, an in/out input) waits for every reader and the
 * writer.  Readers in other spaces (the source of a copy_d2d) wait for
 * their copy before they let go of the source view, so a view's readers
 * in flight are always in its own space.  Views in use are pinned until
 * their jobs complete, so eviction, write-behind and pools never free
 * or reuse a buffer that work in flight uses.
 *
 * Threads: one taker (takes invocations, makes jobs), one housekeeper
 * (re-runs placement while data-aware holds jobs back; unmaps what
 * pd_engine_forget could not), one worker per device (submits the jobs
 * placed on it: every queuing backend operation on its spaces comes from
 * it, except the source side of copy_d2d, which backend.h allows), one
 * completion thread (fence_poll, which backend.h allows from any thread,
 * and completing), and helpers: threads of the source that made work
 * ready and lend themselves (pd_engine_help).  A helper takes and places
 * like the taker, and may *claim* a short job it placed on a device: it
 * then holds that device instead of its worker while it submits the job
 * (struct pd_device.claimed), then waits for the job's fence and
 * completes it, which saves the thread hand-offs per invocation.
 * Workers and the completion thread likewise take the work the jobs
 * they complete make ready (pd_engine_take_made) instead of waking the
 * taker: a chain's next hop lands on the worker of its last one.
 * Whoever holds a device for submission (its worker, or a helper with a
 * claimed job) is named by dev->self, and only it queues work on the
 * device's spaces.
 *
 * Locking: one mutex, e->lock, guards everything below that is not
 * marked otherwise: the queue, device states, spaces' pools and LRU
 * lists, records and views, the ptask-info cache, statistics.  It is
 * never held across a backend call or a source call: a source call can
 * come back into the engine (user mode: db_unmap and complete drop the
 * last reference of a datablock, and the namespace calls
 * pd_engine_forget under its own lock), and backend calls sleep.  Every
 * function named *_locked asserts it (pd_assert_locked).  Whoever drops
 * the lock around a backend call pins what it uses first (view->pins,
 * rec->pins, info->refs), so nothing it holds is freed or evicted
 * meanwhile, and re-checks what may have changed after retaking it.
 * One exception: fence_poll, which never blocks, is called under the
 * lock (completer.c), so that seeing a fence pass and taking its job off
 * its lane are one step.
 */
#ifndef PTASKD_ENGINE_PRIV_H
#define PTASKD_ENGINE_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include "core/ptask_os.h"
#include "core/list.h"
#include "common/hash.h"
#include "daemon/engine/engine.h"
#include "daemon/log.h"

#define PD_REC_BUCKETS		4096	/* records hash, buckets to start with */
#define PD_INFO_BUCKETS		256	/* ptask-info hash, likewise */
#define PD_POOL_MIN_BYTES	4096	/* smallest pooled buffer */
#define PD_POOL_CLASSES		(1 + 4 * 52)	/* see pd_pool_class() */
#define PD_BYVALUE_MAX		4096	/* most bytes passed by value */
#define PD_TAKE_SLICE_NS	(200ULL * 1000 * 1000)
#define PD_HOLD_POLL_NS		(1ULL * 1000 * 1000)
/* Dead datablocks' mappings wait this long for the housekeeper at most. */
#define PD_UNMAP_DELAY_NS	(5ULL * 1000 * 1000)
/* ... unless this many bytes wait: then at once. */
#define PD_UNMAP_BYTES_NOW	(256ULL << 10)
/* another process used the device this recently: time launches exactly */
#define PD_CONTEND_NS		(1000ULL * 1000 * 1000)
#define PD_WRITEBEHIND_NS	(1000ULL * 1000 * 1000)
#define PD_SPACE_IDLE_MS	60000	/* default space_idle_ms */
#define PD_DEFAULT_BLOCK	256
#define PD_QUEUE_MAX		(4 * PTASK_TAKE_MAX_INVOCATIONS)
/*
 * A helper runs a job itself only when it is short: its ptask ran
 * before, for at most PD_INLINE_RUN_NS of device time on average, with
 * at most PD_INLINE_BYTES in all its ports (copies), and its space and
 * kernel are ready on the device (no context creation or JIT on a
 * client's connection thread).  Longer work goes to the device's worker,
 * so a connection is never held up for long.  A helper stops claiming
 * once it has helped for PD_HELP_NS.
 */
#define PD_INLINE_RUN_NS	(100ULL * 1000)
/*
 * ... and a segment's (its run is a chain's, PTASK_TAKE_FUSE): handed to
 * the worker and the completion thread instead, a 100-deep segment on an
 * H200 (2026-11-27) took 1.78-1.94 us a ptask, run by the thread that
 * took it 1.43-1.45 (two hand-offs and a cold completion less).
 */
#define PD_INLINE_SEGMENT_RUN_NS	(400ULL * 1000)
/*
 * A job that copies has its launch timed only if its kernel is this short
 * (worker.c, launch_sampled_timed): the jobs a helper would run inline.  Of
 * those, after a ptask's first PD_TIMED_COPIES_FIRST timed runs, one in
 * PD_TIMED_COPIES_EVERY is timed: enough to keep its averages, not two
 * cuEventRecord calls (about 4 us of CPU on an H200) on every job.
 */
#define PD_TIMED_COPIES_MAX_NS	PD_INLINE_RUN_NS
#define PD_TIMED_COPIES_FIRST	4
#define PD_TIMED_COPIES_EVERY	8
#define PD_INLINE_BYTES		(256ULL << 10)
#define PD_HELP_NS		(200ULL * 1000)
/* Helpers waiting their turn for a claimed device at once (help.c). */
#define PD_TURN_WAITERS_MAX	2
/*
 * Invocations per helper take: as many as a take returns, so a stream's
 * invocations the core took ahead come in one take (engine.c,
 * "Batches").
 */
#define PD_HELP_TAKE		PTASK_TAKE_MAX_INVOCATIONS
/*
 * Invocations a batch runs at most (engine.c, "Batches").  Its members'
 * pulls wait for its one fence: on an H200 (2026-11-27, fastpath P1b,
 * 64 asynchronous pushes then 64 pulls, three runs each alternated)
 * batches of up to 16 ran 77k-88k invocations/s, of up to 32 60k-76k,
 * of up to 64 67k-71k (the first output came after the whole batch),
 * a job each 51k-59k; 8 varied most (39k-79k).
 */
#define PD_BATCH_MAX		16
/* Ports of a batch's members mapped in one call (prepare.c, map_batch). */
#define PD_BATCH_MAP_PORTS	4
#define PD_TAKE_MADE_ROUNDS	4	/* takes of pd_engine_take_made */
/* takes a helper makes for the workers after a batch of pushes (help.c) */
#define PD_HELP_BATCH_ROUNDS	(PTASK_TAKE_MAX_INVOCATIONS / PD_HELP_TAKE)
/*
 * Launches held on a lane at most (worker.c): then they are flushed and
 * the chain holds anew.  As many as a device takes jobs by default: on
 * an H200 (2026-11-27, fastpath P11, a 100-deep chain) flushing every 16
 * or 32 hops ran the chain 15-50% slower than holding up to the device's
 * 64 slots, since each flush in mid-chain made the device wait for the
 * host and the next batch started a new graph (measured with a build
 * that read the limit from the environment, alternating in one lease).
 */
#define PD_HOLD_BATCH		64
/* Prewarm requests queued at most (more are dropped: a cold start). */
#define PD_PREWARM_MAX		64

/**
 * struct pd_prewarm - a GPU ptask a client opened, to make ready
 * @ptask: its handle
 * @owner: its space's owner (the opening process, or 0 with shared
 *	isolation: pd_sched_owner's key)
 * @dev: the device whose worker makes it ready
 */
struct pd_prewarm {
	uint32_t ptask;
	uint64_t owner;
	uint32_t dev;
};
/*
 * The completion thread spins (yielding) while a fence is due within
 * PD_COMPLETE_SPIN_NS, and until PD_COMPLETE_SPIN_NS after it was due;
 * then it sleeps, PD_COMPLETE_NAP_MIN_NS doubling up to
 * PD_COMPLETE_NAP_MAX_NS while a fence is late, and never longer than
 * PD_COMPLETE_NAP_MAX_NS while jobs are in flight; with none it sleeps
 * until a job is submitted.
 */
#define PD_COMPLETE_SPIN_NS	(50ULL * 1000)
#define PD_COMPLETE_NAP_MIN_NS	(20ULL * 1000)
#define PD_COMPLETE_NAP_MAX_NS	(200ULL * 1000)	/* as cuda's fence_wait */
/* A helper or worker waiting for its job polls until it is due, this long at most. */
#define PD_WAIT_POLL_MAX_NS	(200ULL * 1000)
/*
 * Then a worker sleeps between polls (completer.c), 5 us doubling to 200
 * us, as cuda's fence_wait does, so that it sees new work meanwhile.
 */
#define PD_WAIT_SLEEP_MIN_NS	(5ULL * 1000)
#define PD_WAIT_SLEEP_MAX_NS	(200ULL * 1000)
/*
 * With this many CPUs or fewer, the completion thread is not woken for
 * each hop a helper completes ahead: it would spin beside the helper and
 * the device's threads (cpu backend) on cores they need, and the helper
 * reaps the lane itself when it waits for the chain's last hop.  With
 * more, it settles the hops while the device runs the later ones.
 */
#define PD_FEW_CORES		2

/* Always on: these guard invariants whose breach corrupts memory. */
#define PD_ASSERT(cond)							\
	do {								\
		if (!(cond))						\
			pd_engine_assert_failed(__FILE__, __LINE__, #cond); \
	} while (0)

void pd_engine_assert_failed(const char *file, int line, const char *what)
	__attribute__((noreturn));

struct pd_engine;
struct pd_device;
struct pd_dbrec;
struct pd_space;

/**
 * struct pd_ptask_info - what EXEC_PTASK_INFO said of one ptask, read
 * once per ptask (code included), and its scheduling history
 * @handle: the ptask
 * @kind: enum ptask_ptask_kind
 * @nports: its ports
 * @shared_bytes: dynamic shared memory per block
 * @grid: blocks (all 0: inferred per invocation)
 * @block: threads per block
 * @entry: kernel entry name
 * @code: its code (PTX or cubin), @code_len bytes
 * @refs: the cache's reference, one per job, one per kernel loaded
 * @dead: forgotten (out of the cache; freed with the last reference)
 * @avg_wait_ns: moving average of the time its invocations waited
 *	from queued to placed
 * @avg_run_ns: moving average of their device time
 * @runs: invocations completed (0: no history yet)
 * @avg_wall_ns: moving average of their wall time on their lane, from
 *	the start of their run (launch, or the fence before theirs on the
 *	lane seen) to their fence seen: when the completion thread expects
 *	a fence (worker.c, due_locked).  Not @avg_run_ns: a cpu launch
 *	split over lanes keeps several cores busy, so its device time (the
 *	charge) is a multiple of its wall time.
 * @walls: fences seen that @avg_wall_ns averages (0: none yet)
 * @untimed_streak: its jobs that copy or ran under contention launched
 *	untimed since the last such one timed (worker.c,
 *	launch_sampled_timed)
 * @hnode: its place in e->infos, keyed by @handle (while not @dead)
 */
struct pd_ptask_info {
	uint32_t handle;
	uint32_t kind;
	uint32_t nports;
	uint32_t shared_bytes;
	uint32_t grid[3];
	uint32_t block[3];
	char entry[PTASK_NAME_MAX];
	void *code;
	uint32_t code_len;
	uint32_t refs;
	bool dead;
	double avg_wait_ns;
	double avg_run_ns;
	uint64_t runs;
	double avg_wall_ns;
	uint64_t walls;
	uint32_t untimed_streak;
	struct pc_hash_node hnode;
};

/**
 * struct pd_kernel_ref - a kernel loaded in one space (worker-owned: only
 * the space's worker touches the list)
 * @info: the ptask it runs (one reference)
 * @kernel: the backend's handle
 * @next: next in the space's list
 */
struct pd_kernel_ref {
	struct pd_ptask_info *info;
	void *kernel;
	struct pd_kernel_ref *next;
};

/**
 * struct pd_pooled - a free device buffer kept for reuse
 * @space: the space it belongs to
 * @dptr: the buffer
 * @cap: its size (a size class)
 * @node: in its space's pool list of that class
 */
struct pd_pooled {
	struct pd_space *space;
	uint64_t dptr;
	uint64_t cap;
	struct ptask_list node;
};

/**
 * struct pd_lane - one lane of a space, as the engine sees it
 * @jobs: its jobs in flight, in fence order (struct pd_job.lnode)
 * @njobs: entries in @jobs
 * @finishing: a thread is completing its jobs (pd_lane_reap_locked):
 *	nobody else does meanwhile, which keeps lane order
 * @due_ns: when its last job is expected to complete
 * @seen_ns: when the fence of its last job was seen to pass (the next
 *	job's run starts then, if it was launched before)
 */
struct pd_lane {
	struct ptask_list jobs;
	uint32_t njobs;
	bool finishing;
	uint64_t due_ns;
	uint64_t seen_ns;
};

/**
 * struct pd_space - one memory space: a device seen through one context
 * @dev: its device
 * @owner: the client pid it serves (0 with shared isolation)
 * @be_space: the backend's space
 * @node: in dev->spaces
 * @pool: free buffers by size class (pd_pool_class)
 * @pooled_bytes: bytes in @pool
 * @kernels: kernels loaded here (worker-owned, no lock)
 * @last_use_ns: when a job last ran in it
 * @nlanes: its lanes (the device's pd_device_info.lanes, at least 1)
 * @lanes: each lane's jobs in flight
 * @ninflight: jobs in flight in it (it stays open while any are)
 */
struct pd_space {
	struct pd_device *dev;
	uint64_t owner;
	void *be_space;
	struct ptask_list node;
	struct ptask_list pool[PD_POOL_CLASSES];
	uint64_t pooled_bytes;
	struct pd_kernel_ref *kernels;
	uint64_t last_use_ns;
	uint32_t nlanes;
	struct pd_lane lanes[PD_MAX_LANES];
	uint32_t ninflight;
};

/**
 * struct pd_view - a datablock's copy in one space
 * @rec: the datablock
 * @space: where
 * @rec_next: next view of @rec
 * @lru_node: in its device's LRU list (least recently used first)
 * @dptr: the device buffer
 * @cap: its size (a pool class, >= rec->bytes)
 * @valid: holds the datablock's current bytes
 * @pins: users that dropped the lock while relying on it (a job, the
 *	source side of a copy); a pinned view is never evicted or freed
 * @write_lane: the lane of the work in flight that made it valid
 * @write_ticket: that work's fence (0: none in flight)
 * @read_ticket: per lane, the fence after the last work in flight that
 *	reads it (0: none)
 */
struct pd_view {
	struct pd_dbrec *rec;
	struct pd_space *space;
	struct pd_view *rec_next;
	struct ptask_list lru_node;
	uint64_t dptr;
	uint64_t cap;
	bool valid;
	uint32_t pins;
	uint32_t write_lane;
	uint64_t write_ticket;
	uint64_t read_ticket[PD_MAX_LANES];
};

/**
 * struct pd_dbrec - what the engine knows of one datablock
 * @handle: the datablock
 * @generation: its generation when last seen (struct
 *	ptask_invocation_port.generation); views are of this generation
 * @gen_known: @generation was seen on an invocation port (a datablock
 *	the engine created has none until it comes back as an input)
 * @host_valid: its host pages hold the current bytes
 * @exposed: its bytes were written back for a client to pull (a client
 *	may have changed them and pushed them again)
 * @dead: forgotten while pinned: freed when the last pin goes
 * @bytes: its size
 * @host_map: a mapping the engine holds while the only current copies
 *	are on devices (so an eviction can write them back); else NULL
 * @map_users: writebacks copying into @host_map right now (without
 *	e->lock): the mapping is kept until they are done
 * @map_drop: @host_map was given up while @map_users was not 0
 * @pins: jobs using it
 * @views: its views, one per space at most
 * @hnode: its place in e->recs, keyed by @handle (while not @dead)
 * @dirty_ns: when its only current copies became device ones
 * @ahead_writer: the job completed ahead, not yet settled, whose work
 *	writes it (engine_priv.h, "Chains ahead"), or NULL
 * @failed: work that wrote its current bytes failed: a job reading them
 *	fails (cleared when a client pushes it again)
 */
struct pd_dbrec {
	uint32_t handle;
	uint32_t generation;
	bool gen_known;
	bool host_valid;
	bool exposed;
	bool dead;
	uint64_t bytes;
	void *host_map;
	uint32_t map_users;
	bool map_drop;
	uint32_t pins;
	struct pd_view *views;
	struct pc_hash_node hnode;
	uint64_t dirty_ns;
	struct pd_job *ahead_writer;
	bool failed;
};

/**
 * struct pd_unmap - a mapping to hand back to the source (db_unmap)
 * outside e->lock
 * @handle: the datablock
 * @addr: the mapping
 * @bytes: its length
 * @next: next in e->unmaps
 */
struct pd_unmap {
	uint32_t handle;
	void *addr;
	uint64_t bytes;
	struct pd_unmap *next;
};

/**
 * struct pd_jport - one port of a job while it runs
 * @rec: input: its datablock; output: the datablock made for it (NULL
 *	for the peer of an in/out input)
 * @view: the view in the job's space it uses (pinned)
 * @src_view: a view in another space copied from (pinned until sync)
 * @host: a mapping the job made or was given (@rec's bytes), or NULL
 * @created: output: handle of the datablock made with db_create
 * @by_value: input passed by value: the parameter is at @host
 * @value: the device pointer passed (unless @by_value)
 * @gen: input: the generation of @rec the job runs with
 * @wrote: the job's work writes @view (a copy in, an output, in/out)
 * @inplace: the kernel uses @host in place (@value is its device
 *	address; no view)
 * @upstream: input: the job completed ahead and not yet settled that
 *	wrote @rec when this job was prepared (one reference), or NULL
 * @scratch_cap: a segment's first link (PTASK_INVP_FUSED output): @value
 *	is device memory of this capacity from the job's space, holding
 *	every link of the segment, given back to its pool when the job is
 *	done (0: none)
 */
struct pd_jport {
	struct pd_dbrec *rec;
	struct pd_view *view;
	struct pd_view *src_view;
	void *host;
	uint32_t created;
	bool by_value;
	uint64_t value;
	uint32_t gen;
	bool wrote;
	bool inplace;
	struct pd_job *upstream;
	uint64_t scratch_cap;
};

/**
 * struct pd_member - one ptask of a job: the job's own, each of a
 * segment's (PTASK_INV_SEGMENT) in turn, or each invocation of a batch
 * (pd_job.batch)
 * @info: its ptask (members[0]: the job's @info; the others one
 *	reference each)
 * @kernel: its kernel in the job's space (pd_job_run)
 * @first: its first port record in the job's
 * @nports: its port records
 * @id: its invocation (a batch's member: each is settled by its own id;
 *	else the job's)
 */
struct pd_member {
	struct pd_ptask_info *info;
	void *kernel;
	uint32_t first;
	uint32_t nports;
	uint64_t id;
};

/**
 * struct pd_job - one invocation from take to complete
 * @inv: as taken
 * @ports: its port records (inv.n_ports of them, by port index order),
 *	stored after the job (job_make sizes the allocation to the ports
 *	used: zeroing room for PTASK_MAX_PORTS, 8 KiB, cost every small
 *	invocation a cache-wide memset)
 * @info: its ptask (one reference)
 * @node: in e->queue while queued
 * @seq: arrival order (FIFO ties)
 * @queued_ns: when it became ready (the invocation's queued_ns)
 * @eff: effective priority at the last placement
 * @dev: the device it was placed on
 * @space: the space it runs in (worker)
 * @jp: per port, run state (inv.n_ports, stored after @ports)
 * @alloc_ns: time spent getting device buffers (pools, backend, eviction)
 * @source_ns: time spent in the source's db_map and db_create
 * @copy_ns: time spent queueing copies before the launch (these three
 *	for the -vv log alone: 0 without it, pd_debug_now_ns)
 * @lane: the lane of @space it runs on
 * @ticket: its fence (0: none: it never reached its space)
 * @lnode: in its lane's in-flight list
 * @err: why it failed before its fence, or 0
 * @launch_ns: when it was launched (0: not launched)
 * @submit_ns: when its fence was queued
 * @due_ns: when its fence is expected to pass (completer.c)
 * @waiter: its submitter (a helper, or the worker) waits for its fence
 *	(fence_wait): nobody else polls it until @fenced
 * @fenced: its fence was seen to pass; @gpu_ns and @err hold the result
 * @gpu_ns: its device time
 * @ahead: completed ahead (EXEC_COMPLETE AHEAD succeeded): its outputs
 *	moved on; when its fence passed it is settled, not completed
 * @ahead_gone: the ahead completion found its graph gone (-ECANCELED):
 *	nothing to settle
 * @after: it reads what this job, taken ahead and queued, writes: a
 *	reference (@refs) until it is placed, and dispatch never places it
 *	before that one (priorities would reorder a chain's hops taken in
 *	one call)
 * @pending_in: an input is PTASK_INVP_PENDING (see @after)
 * @after_known: no producer of it is left queued or on its way
 *	(sched.c, after_placed_locked)
 * @taken_ahead: the core completed it ahead as it was taken
 *	(PTASK_INV_AHEAD): @ahead from the start, its output datablocks named
 *	in its port records, only committed once its fence is queued
 * @committed: commit_locked ran (at the ahead completion)
 * @refs: jobs downstream holding it (pd_jport.upstream): it is freed
 *	once settled and unreferenced
 * @settled: it was completed or settled (the source knows its status);
 *	kept only for @refs
 * @failed: it finished with an error (its writes are garbage)
 * @held: its launch is held (worker.c) and its lane not flushed since:
 *	its run starts at the flush, which sets @launch_ns then
 * @after_held: its launch flushed held ones with it (a chain's last hop):
 *	its waiter polls until it is due (pd_job_wait_complete_locked)
 * @estimated_copies: it copies and its launch was untimed: its device
 *	time is an estimate that counts the copies, which the ptask's
 *	averages must not learn (complete.c, count_locked)
 * @estimated_contended: another process used the device lately and its
 *	launch was untimed (sampled out, worker.c): its estimate counts
 *	that process's work, so the averages do not learn it and, where the
 *	backend's untimed time is such an estimate, it is charged its
 *	ptask's average instead (complete.c, pd_job_finish)
 * @nmembers: its ptasks: 1, or a segment's (PTASK_INV_SEGMENT: launched
 *	one after another on its lane, held together where the engine
 *	holds launches, their links in scratch memory; the history of the
 *	first one's @info is the segment's)
 * @members: each of them (stored after @jp)
 * @batch: a batch (engine.c, "Batches"): @nmembers invocations of one
 *	ptask, each completed ahead by the core as it was taken, launched
 *	one after another behind one fence and settled together
 * @untimed: its launch was untimed (pd_launch.untimed): its device time
 *	is an estimate up to when its fence was seen
 * @seen_late: its fence was found passed at the completion thread's
 *	first look after a sleep: when it was seen bounds its run only from
 *	above (pd_job_fence_seen_locked), so an untimed estimate is not
 *	learnt
 */
struct pd_job {
	struct ptask_invocation inv;
	struct ptask_invocation_port *ports;
	struct pd_ptask_info *info;
	struct ptask_list node;
	uint64_t seq;
	uint64_t queued_ns;
	double eff;
	int dev;
	struct pd_space *space;
	struct pd_jport *jp;
	uint64_t alloc_ns;
	uint64_t source_ns;
	uint64_t copy_ns;
	uint32_t lane;
	uint64_t ticket;
	struct ptask_list lnode;
	int err;
	uint64_t launch_ns;
	uint64_t submit_ns;
	uint64_t error_seq;	/* pd_backend_error_seq() before its launch */
	bool error_seq_set;	/* ... taken (it reached its launch) */
	uint64_t due_ns;
	bool waiter;
	bool fenced;
	uint64_t gpu_ns;
	bool ahead;
	bool taken_ahead;
	bool pending_in;
	bool after_known;
	struct pd_job *after;
	bool ahead_gone;
	bool committed;
	uint32_t refs;
	bool settled;
	bool failed;
	bool held;
	bool after_held;
	bool estimated_copies;
	bool estimated_contended;
	uint32_t nmembers;
	struct pd_member *members;
	bool batch;
	bool untimed;
	bool seen_late;
};

/**
 * struct pd_device - one accelerator and its worker
 * @e: the engine
 * @index: its number in the backend
 * @thread: its worker (written by the starting thread)
 * @self: the thread holding the device (its worker, or the helper
 *	that claimed @job), written under e->lock by whoever takes hold:
 *	the assertions that backend calls come from the holder compare
 *	with it
 * @cond: the worker sleeps here for a job or exit
 * @job: the job placed on it and not yet submitted (NULL: none)
 * @claimed: @job is submitted by the helper that placed it, not the
 *	worker
 * @tidying: the worker is writing back or closing spaces with e->lock
 *	dropped: a job placed meanwhile waits for it (no helper claims)
 * @defer: the wake-ups the worker's source calls held back
 *	(pd_engine_take_made); the worker's alone
 * @spaces: its spaces (struct pd_space.node)
 * @lru: views in its spaces, least recently used first
 * @allocated: bytes of device memory taken from the backend (pools too)
 * @limit: most bytes the engine takes (device_memory_limit or memory)
 * @tidy_ns: when the worker next writes back idle data and closes idle
 *	spaces
 * @started: the worker thread runs (for unwinding a failed start)
 * @ninflight: jobs submitted and not yet complete
 * @inplace_max: bytes up to which inputs and outputs are used in place
 *	(pd_device_info.inplace_max or the configuration's)
 * @last_owner: the process whose job was launched last (its holder's)
 * @mixed_ns: when a job of another process than the one before was
 *	launched: within PD_CONTEND_NS of it launches are timed exactly
 * @held: launches are held on lane @held_lane of @held_space (worker.c,
 *	"Held launches"): whoever holds the device next continues them or
 *	flushes them (under e->lock; the holder's to change)
 * @held_space: that space (open: its held jobs are in flight)
 * @held_lane: that lane
 * @held_n: launches held there since its last flush
 */
struct pd_device {
	struct pd_engine *e;
	uint32_t index;
	pthread_t thread;
	pthread_t self;
	pthread_cond_t cond;
	struct pd_job *job;
	bool claimed;
	bool tidying;
	struct pd_wake_defer defer;
	struct ptask_list spaces;
	struct ptask_list lru;
	uint64_t allocated;
	uint64_t limit;
	uint64_t tidy_ns;
	bool started;
	uint32_t ninflight;
	uint64_t inplace_max;
	uint32_t last_owner;
	uint64_t mixed_ns;
	bool held;
	struct pd_space *held_space;
	uint32_t held_lane;
	uint32_t held_n;
};

/**
 * struct pd_engine - the engine
 * @src: where invocations come from
 * @be: the accelerators
 * @cfg: as started (cfg.policy is the current policy)
 * @own_policy: the policy ptaskd was started with (or last set through
 *	pd_engine_set_policy), used while the administrator's is "default"
 * @lock: see the top of this file
 * @lock_owner: the thread holding @lock (valid while @locked)
 * @locked: @lock is held
 * @stopping: the taker must stop taking
 * @draining: placement holds nothing back (stop is waiting for idle)
 * @exiting: workers and the housekeeper must return
 * @taker: the taker thread
 * @housekeeper: the housekeeping thread
 * @hk_cond: the housekeeper sleeps here
 * @hk_due_ns: when it wakes by itself next (pd_engine_forget wakes it
 *	only when that is more than PD_UNMAP_DELAY_NS away)
 * @idle_cond: broadcast when a device goes idle (stop waits on it)
 * @taker_cond: the taker waits here while @queue is full
 * @queue: jobs waiting for placement, in arrival order
 * @nqueued: jobs in @queue
 * @taking: threads between a take from the source and queueing what it
 *	took (pd_engine_take_begin_locked): a job taken ahead may be on its
 *	way to @queue meanwhile (pd_job.after)
 * @taking_waits: dispatch left a job waiting for @taking to drop to 0
 * @next_seq: next job's @seq
 * @held: jobs data-aware held back at the last placement
 * @ndev: devices
 * @dev: each device
 * @recs: datablock records by handle
 * @infos: ptask infos by handle
 * @unmaps: mappings to give back to the source once the lock is off
 *	(pd_views_flush_unmaps)
 * @unmap_bytes: the bytes they map
 * @take_errors: failed takes (logged at powers of two)
 * @stats: counters
 * @avg_run_ns: moving average of every invocation's device time
 * @avg_wait_ns: moving average of every invocation's wait for placement
 * @max_inflight: jobs a device takes at once (cfg.max_inflight or the
 *	default)
 * @ninflight: jobs in flight on every device
 * @completer: the completion thread
 * @completer_started: it runs (for unwinding a failed start)
 * @completer_cond: it sleeps here; signalled when a job is submitted
 *	while it sleeps for long (@completer_napping)
 * @completer_napping: it sleeps until a job is submitted or for long
 * @completer_until: when that sleep ends by itself (UINT64_MAX: not
 *	before it is signalled)
 * @completer_defer: the wake-ups its source calls held back
 *	(pd_engine_take_made); the completion thread's alone
 * @prewarm: GPU ptasks clients opened, to make ready (prewarm.c)
 * @nprewarm: entries in @prewarm
 * @few_cores: at most PD_FEW_CORES CPUs online: a helper's hops completed
 *	ahead do not wake the completion thread (worker.c, help.c)
 * @forget_lock: guards @forget_q, @forget_n and @forget_cap (taken
 *	under @lock or alone, never the other way round)
 * @forget_q: handles pd_engine_forget queued while @lock was taken,
 *	forgotten by the next pd_engine_lock (views.c)
 * @forget_n: handles in @forget_q
 * @forget_cap: its room
 * @forgets_queued: @forget_n is not 0 (read without @forget_lock)
 * @turn_waiters: helpers waiting for a device another helper claimed
 *	(help.c, wait_turn_locked): a device's holder that lets go of it
 *	leaves the queued jobs to them instead of placing them on workers
 * @devs_let_go: bumped under @lock whenever a holder lets go of a
 *	device (its @job slot empties); read without it by the helpers
 *	waiting their turn, so that they do not spin on @lock
 */
struct pd_engine {
	struct pd_source *src;
	struct pd_backend *be;
	struct pd_engine_config cfg;
	int own_policy;
	bool no_outputs;	/* the source refused PTASK_TAKE_OUTPUTS */
	pthread_mutex_t lock;
	pthread_t lock_owner;
	bool locked;
	bool stopping;
	bool draining;
	bool exiting;
	pthread_t taker;
	pthread_t housekeeper;
	pthread_cond_t hk_cond;
	uint64_t hk_due_ns;
	pthread_cond_t idle_cond;
	pthread_cond_t taker_cond;
	struct ptask_list queue;
	uint32_t nqueued;
	uint32_t taking;
	bool taking_waits;
	uint64_t next_seq;
	uint32_t held;
	uint32_t ndev;
	struct pd_device dev[PD_MAX_DEVICES];
	struct pc_hash recs;
	struct pc_hash infos;
	struct pd_unmap *unmaps;
	uint64_t unmap_bytes;
	uint64_t take_errors;
	struct pd_engine_stats stats;
	double avg_run_ns;
	double avg_wait_ns;
	uint32_t max_inflight;
	uint32_t ninflight;
	pthread_t completer;
	bool completer_started;
	pthread_cond_t completer_cond;
	bool completer_napping;
	uint64_t completer_until;
	struct pd_wake_defer completer_defer;
	struct pd_prewarm prewarm[PD_PREWARM_MAX];
	uint32_t nprewarm;
	bool few_cores;
	pthread_mutex_t forget_lock;
	uint32_t *forget_q;
	uint32_t forget_n;
	uint32_t forget_cap;
	_Atomic bool forgets_queued;
	uint32_t turn_waiters;
	_Atomic uint64_t devs_let_go;
};

void pd_engine_forget_drain_locked(struct pd_engine *e);

/*
 * The engine's lock; its holder first forgets the handles
 * pd_engine_forget queued while the lock was taken (views.c).
 */
static inline void pd_engine_lock(struct pd_engine *e)
{
	pthread_mutex_lock(&e->lock);
	e->lock_owner = pthread_self();
	e->locked = true;
	if (atomic_load_explicit(&e->forgets_queued, memory_order_relaxed))
		pd_engine_forget_drain_locked(e);
}

static inline void pd_engine_unlock(struct pd_engine *e)
{
	e->locked = false;
	pthread_mutex_unlock(&e->lock);
}

static inline void pd_assert_locked(struct pd_engine *e)
{
	PD_ASSERT(e->locked && pthread_equal(e->lock_owner, pthread_self()));
}

/* Is port @p an input (plain or sticky), as opposed to an output? */
static inline bool pd_port_is_input(const struct ptask_invocation_port *p)
{
	return p->kind == PTASK_PORT_INPUT || p->kind == PTASK_PORT_STICKY;
}

/* Is port @p a kernel parameter passed by value (template binding)? */
static inline bool pd_port_by_value(const struct ptask_invocation_port *p)
{
	return PTASK_INVP_BINDING(p->flags) == PTASK_BIND_PARAM;
}

/* pthread_cond_wait on e->lock, keeping the owner bookkeeping right. */
static inline void pd_engine_wait(struct pd_engine *e, pthread_cond_t *cond)
{
	pd_assert_locked(e);
	e->locked = false;
	pthread_cond_wait(cond, &e->lock);
	e->lock_owner = pthread_self();
	e->locked = true;
}

/* ... until CLOCK_MONOTONIC @deadline_ns (conds use that clock). */
void pd_engine_timedwait(struct pd_engine *e, pthread_cond_t *cond,
			 uint64_t deadline_ns);

/* engine.c */
void pd_info_put_locked(struct pd_engine *e, struct pd_ptask_info *info);
void pd_jobs_make(struct pd_engine *e, const struct ptask_exec_take *take,
		  const struct ptask_invocation *invs,
		  const struct ptask_invocation_port *ports,
		  struct pd_wake_defer *defer);
void pd_job_free_locked(struct pd_engine *e, struct pd_job *job);
/*
 * A take with PTASK_TAKE_AHEAD was refused (-EINVAL: a module that
 * predates the flag): log it once and take without it from now on.
 */
void pd_engine_take_ahead_refused(struct pd_engine *e);
/*
 * A take was refused (-EINVAL) with @flags: the flag a module that
 * predates it does not know is dropped from then on (PTASK_TAKE_FUSE,
 * else PTASK_TAKE_AHEAD).  Returns whether one was.
 */
bool pd_engine_take_refused(struct pd_engine *e, uint32_t flags);
/* Drop a job downstream's reference to @job (pd_job.refs): freed once settled. */
void pd_job_put_locked(struct pd_engine *e, struct pd_job *job);
/* Complete @job with @status < 0 and nothing else (no outputs). */
void pd_job_fail(struct pd_engine *e, struct pd_job *job, int status,
		 struct pd_wake_defer *defer);

/* sched.c */
void pd_sched_enqueue_locked(struct pd_engine *e, struct pd_job *job);
void pd_sched_dispatch_locked(struct pd_engine *e);
/*
 * Placement, as pd_sched_dispatch_locked, by a helper: the first job it
 * places on a device that pd_help_can_claim_locked allows is claimed
 * for the calling thread (its worker is not woken).  Returns that
 * device, or -1.
 */
int pd_sched_dispatch_claim_locked(struct pd_engine *e);
void pd_sched_ran_locked(struct pd_engine *e, struct pd_job *job,
			 uint64_t run_ns);
uint64_t pd_sched_owner(const struct pd_engine *e, const struct pd_job *job);

/* views.c */
struct pd_dbrec *pd_rec_find_locked(struct pd_engine *e, uint32_t handle);
struct pd_dbrec *pd_rec_get_locked(struct pd_engine *e, uint32_t handle,
				   uint64_t bytes);
void pd_rec_see_generation_locked(struct pd_engine *e, struct pd_dbrec *rec,
				  uint32_t generation);
void pd_rec_unpin_locked(struct pd_engine *e, struct pd_dbrec *rec);
void pd_rec_maybe_free_locked(struct pd_engine *e, struct pd_dbrec *rec);
void pd_rec_forget_locked(struct pd_engine *e, struct pd_dbrec *rec);
void pd_rec_drop_map_locked(struct pd_engine *e, struct pd_dbrec *rec);
void pd_rec_only_valid_locked(struct pd_engine *e, struct pd_dbrec *rec,
			      struct pd_view *view);
struct pd_view *pd_view_find_locked(struct pd_engine *e,
				    struct pd_dbrec *rec,
				    struct pd_space *space);
struct pd_view *pd_view_add_locked(struct pd_engine *e, struct pd_dbrec *rec,
				   struct pd_space *space, uint64_t dptr,
				   uint64_t cap);
void pd_view_drop_locked(struct pd_engine *e, struct pd_view *view);
void pd_view_touch_locked(struct pd_engine *e, struct pd_view *view);
struct pd_view *pd_rec_copy_source_locked(struct pd_engine *e,
					  struct pd_dbrec *rec,
					  struct pd_space *to);
uint64_t pd_rec_bytes_on_locked(struct pd_engine *e, struct pd_dbrec *rec,
				uint32_t dev, uint64_t owner);
void pd_views_flush_unmaps(struct pd_engine *e);
void pd_views_free_all_locked(struct pd_engine *e);

/* devpool.c */
unsigned int pd_pool_class(uint64_t bytes, uint64_t *cap);
int pd_devmem_alloc_locked(struct pd_device *dev, struct pd_space *space,
			   uint64_t bytes, uint64_t *dptr, uint64_t *cap);
void pd_devmem_pool_locked(struct pd_space *space, uint64_t dptr,
			   uint64_t cap);
void pd_devmem_trim_locked(struct pd_device *dev);
void pd_devmem_trim_space_locked(struct pd_space *space);
int pd_devmem_writeback_locked(struct pd_device *dev, struct pd_view *view);

/* space.c */
int pd_space_get(struct pd_device *dev, uint64_t owner,
		 struct pd_space **out);
int pd_space_kernels_get(struct pd_device *dev, struct pd_space *space,
			 struct pd_member *mb, uint32_t n);
bool pd_space_kernels_loaded(const struct pd_space *space,
			     const struct pd_member *mb, uint32_t n);
int pd_space_kernel_get(struct pd_device *dev, struct pd_space *space,
			struct pd_ptask_info *info, void **kernel);
void pd_space_writebehind_locked(struct pd_device *dev, uint64_t now_ns);
void pd_space_close_idle_locked(struct pd_device *dev, uint64_t now_ns);
void pd_space_close_all_locked(struct pd_device *dev);

/* Is @dev free to take one more job (nothing to submit, a free slot)? */
static inline bool pd_dev_available(const struct pd_device *dev)
{
	return !dev->job && dev->ninflight < dev->e->max_inflight;
}

/*
 * A device's holder let go of it (dev->job is NULL again): helpers
 * waiting their turn claim what is queued; with none waiting, it is
 * placed on the workers (help.c).
 */
void pd_dev_let_go_locked(struct pd_engine *e);

/* worker.c */
void *pd_worker_main(void *arg);
/* @job's fence was seen to pass at @now: learn its wall time. */
void pd_job_fence_seen_locked(struct pd_engine *e, struct pd_job *job,
			      struct pd_lane *lane, uint64_t now,
			      uint64_t first_look);
/*
 * Submit @job on @dev (on the thread holding it); it is in flight on its
 * lane afterwards (returns true), or was completed at once (false: it
 * never reached a space, or its fence could not be queued).  With
 * @wait, the caller (a helper) will wait for its fence: it is marked so.
 */
bool pd_job_run(struct pd_device *dev, struct pd_job *job,
		struct pd_wake_defer *defer, bool wait);

/*
 * May the engine hold launches (worker.c, "Held launches")?  The backend
 * has fence_defer and flush, one device (a copy to another device's
 * space would come from its holder, who cannot flush this one's lane),
 * and the configuration allows it.
 */
/*
 * The flags an executor's take adds: PTASK_TAKE_AHEAD where the source
 * takes it, chains complete ahead, and there is one device (a hop taken
 * before its upstream ran could not be placed by where its input will
 * be, as data-aware placement needs).
 */
/* complete.c: the accelerator's code for @job's failure @err, or 0. */
uint32_t pd_job_error_code(const struct pd_job *job, int err);

static inline uint32_t pd_engine_take_flags(const struct pd_engine *e)
{
	return (e->src->ops->caps & PD_SOURCE_TAKE_AHEAD) && e->ndev == 1 &&
	       !e->cfg.no_ahead && !e->cfg.no_take_ahead ?
	       PTASK_TAKE_AHEAD : 0;
}

/*
 * PTASK_TAKE_FUSE where the source takes it: every thread that takes
 * asks for segments (they carry nothing another take waits for).
 */
static inline uint32_t pd_engine_fuse_flag(const struct pd_engine *e)
{
	return ((e->src->ops->caps & PD_SOURCE_FUSE) && !e->cfg.no_fuse ?
		PTASK_TAKE_FUSE : 0) |
	       ((e->src->ops->caps & PD_SOURCE_OUTPUTS) && !e->no_outputs ?
		PTASK_TAKE_OUTPUTS : 0);
}

/* Is @job a segment (PTASK_INV_SEGMENT: members linked in scratch)? */
static inline bool pd_job_is_segment(const struct pd_job *job)
{
	return job->nmembers > 1 && !job->batch;
}

/* The invocations @job runs of its ptask: a batch's members, else 1. */
static inline uint32_t pd_job_runs(const struct pd_job *job)
{
	return job->batch ? job->nmembers : 1;
}

/*
 * How long a run the thread that took @job may wait for itself: a
 * segment's or a batch's (several launches) is compared with
 * PD_INLINE_SEGMENT_RUN_NS, its members' expected runs together
 * (pd_job_expected_run_ns).
 */
static inline double pd_inline_run_ns(const struct pd_job *job)
{
	return (double)(job->nmembers > 1 ? PD_INLINE_SEGMENT_RUN_NS :
			PD_INLINE_RUN_NS);
}

/* @job's expected device time: its ptask's average, times its runs. */
static inline double pd_job_expected_run_ns(const struct pd_job *job)
{
	return job->info->avg_run_ns * pd_job_runs(job);
}

static inline bool pd_engine_may_hold(const struct pd_engine *e)
{
	return e->be->ops->flush && e->be->ops->fence_defer && e->ndev == 1 &&
	       !e->cfg.no_hold;
}
/*
 * Flush the launches held on @dev (dev->held), on the thread holding it:
 * the backend's answer (1 replayed, 0, -errno: a held launch failed).
 * No lock held.
 */
int pd_dev_flush_held(struct pd_device *dev);

/* completer.c */
void *pd_completer_main(void *arg);
/* Complete the passed jobs at the head of @space's lane @lane, in order. */
uint32_t pd_lane_reap_locked(struct pd_engine *e, struct pd_space *space,
			     uint32_t lane, struct pd_wake_defer *defer);
bool pd_job_wait_complete_locked(struct pd_engine *e, struct pd_job *job,
				 struct pd_wake_defer *defer,
				 const struct pd_device *yield_to);
/* A job was submitted: the completion thread must know when it is due. */
void pd_completer_kick_locked(struct pd_engine *e);
/* The same for a job due at @due_ns: no wake-up if it wakes before. */
void pd_completer_kick_due_locked(struct pd_engine *e, uint64_t due_ns);

/* prepare.c */
int pd_job_map_input_locked(struct pd_engine *e, struct pd_job *job,
			    uint32_t i);
int pd_job_prepare(struct pd_device *dev, struct pd_job *job,
		   struct pd_launch *launch, struct pd_wake_defer *defer);
void pd_job_launch_desc(const struct pd_job *job, uint32_t m,
			struct pd_launch *launch);

/* complete.c */
int pd_job_after_launch(struct pd_device *dev, struct pd_job *job);
/*
 * Before @job's launch: the jobs completed ahead whose work writes what
 * it reads become its upstream (referenced).  Locked.
 */
void pd_job_link_upstream_locked(struct pd_engine *e, struct pd_job *job);
/*
 * Is @job's result known good once its own fence passes: nothing it read
 * was written by a job that failed or has not settled yet?  Locked.
 */
bool pd_job_result_at_fence_locked(struct pd_engine *e,
				   const struct pd_job *job);
/*
 * May @job, fenced, be completed ahead (engine_priv.h)?  @waiter: its
 * submitter waits for its fence and settles it (pd_job_run's @wait).
 * Locked.
 */
bool pd_job_can_ahead_locked(struct pd_engine *e, const struct pd_job *job,
			     bool waiter);
/*
 * Complete @job ahead: commit, then EXEC_COMPLETE with
 * PTASK_EXEC_COMPLETE_AHEAD.  On the thread holding the device, after
 * its fence was queued and before it joins its lane.  No lock held.
 */
void pd_job_ahead(struct pd_device *dev, struct pd_job *job,
		  struct pd_wake_defer *defer);
/*
 * Are @job's upstream jobs settled?  Those on other lanes are reaped
 * first if they can be.  Locked (dropped meanwhile).
 */
bool pd_job_upstream_settled_locked(struct pd_engine *e, struct pd_job *job,
				    struct pd_wake_defer *defer);
void pd_job_finish(struct pd_device *dev, struct pd_job *job, int err,
		   uint64_t gpu_ns, uint64_t run_ns,
		   struct pd_wake_defer *defer);
/*
 * After @job's fence was queued (its ticket set): the views it reads and
 * writes remember it (lane hazards, top of this file).  Locked.
 */
void pd_job_mark_views_locked(struct pd_engine *e, struct pd_job *job);

/* help.c */
void pd_engine_take_made(struct pd_engine *e, struct pd_wake_defer *defer);
/* prewarm.c: make one ptask queued for @dev ready; false if none. */
bool pd_prewarm_one_locked(struct pd_device *dev);
/* engine.c: ptask @handle's info, with a reference (pd_info_put_locked) */
int pd_info_get(struct pd_engine *e, uint32_t handle,
		struct pd_ptask_info **out);
/* engine.c: the same, fetched now and not cached (marked dead) */
int pd_info_fetch_private(struct pd_engine *e, uint32_t handle,
			  struct pd_ptask_info **out);
/* May a helper run @job on idle device @dev itself (see PD_INLINE_*)? */
bool pd_help_can_claim_locked(struct pd_device *dev,
			      const struct pd_job *job);

#endif /* PTASKD_ENGINE_PRIV_H */
