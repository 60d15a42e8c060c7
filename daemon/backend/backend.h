/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * backend.h - what ptaskd asks of an accelerator backend (cuda, sim, cpu).
 *
 * A backend discovers its devices at init and then works on *memory
 * spaces*: one device seen through one context.  With per-client
 * isolation (the default) ptaskd opens one space per (client, device), so
 * one client's kernels cannot read another's device memory; with shared
 * isolation one space per device serves everybody.  Every operation on a
 * space is queued in order on that space's stream and completes by
 * pd_backend_ops.sync; copies and launches queued on one space therefore
 * overlap with work on other spaces.
 *
 * Kernels are found by entry name in code bytes (PTX or cubin for cuda).
 * The sim and cpu backends run the host twin bound to that entry name
 * and exactly those code bytes (twins.h); sim also models
 * the time the kernel and every copy would take on its simulated device.
 *
 * Device addresses are u64 (CUdeviceptr for cuda, host addresses for sim
 * and cpu).  Every function returns 0 or a negative errno; a backend logs
 * the detail (a CUDA error name, say) itself before returning -EIO.
 *
 * Lanes and fences: each space has pd_device_info.lanes lanes, queues
 * that run in order, each with the others' work overlapping (cuda:
 * streams; cpu: worker threads; sim: modelled queues).  Every queued
 * operation names its lane.  A fence marks the end of what was queued on
 * a lane so far; fence_poll (never blocks) and fence_wait say when it
 * passed and give the device time of the launches it covers; lane_wait
 * orders one lane behind a fence of another.
 *
 * Threads: queuing operations on a space (copies, launches, fence,
 * lane_wait, mem_alloc, mem_free, kernel_load/unload, sync, space_close)
 * come from one thread at a time per space (the engine serializes them
 * per device); fence_poll and fence_wait may come from any thread at any
 * time, also concurrently with queuing on the same space; init, fini,
 * host_register, host_unregister and host_device_ptr from any thread.
 */
#ifndef PTASKD_BACKEND_H
#define PTASKD_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PD_MAX_DEVICES		16
#define PD_MAX_PARAMS		64
#define PD_MAX_LANES		16
/* fence_wait spins this long before it sleeps or yields (20 us: the
 * measured wake-up cost of a sleeping thread is 12-14 us). */
#define PD_FENCE_SPIN_NS	(20ULL * 1000)

/**
 * struct pd_device_info - one accelerator as the scheduler sees it
 * @name: e.g. "NVIDIA H100 80GB HBM3", "sim0"
 * @kind: enum ptask_accel_kind (uapi/ptask.h)
 * @memory: device memory bytes
 * @cores: multiprocessors (or simulated cores)
 * @core_khz: core clock
 * @mem_khz: memory clock
 * @strength: cores x core clock x memory clock, normalised so the
 *	strongest device is 1.0 (PTask's ranking of fit accelerators)
 * @peer: @peer[j]: this device can copy to and from device j directly
 * @lanes: lanes each space of this device has (1..PD_MAX_LANES): queues
 *	that run in order, each with the others' work overlapping (cuda:
 *	streams; cpu: worker threads; sim: modelled queues)
 * @inplace_max: bytes up to which a kernel reading or writing host
 *	memory registered with host_register in place (through
 *	host_device_ptr) beats copying it, as the backend measured or
 *	modelled at init; 0: never in place.  ptaskd's --inplace-max
 *	overrides it.
 * @capacity: device-seconds the device delivers per wall second: how
 *	many of its lanes run launches on hardware of their own at once
 *	(cpu: its lanes, a core each; sim and cuda: 1, their kernels share
 *	the device).  0 counts as 1.  PTSched's budgets give a process at
 *	most the device's wall time, so the engine charges each
 *	invocation's device time divided by it.  (Added for issue 12 by
 *	the engine's side; cuda leaves it 0.)
 */
struct pd_device_info {
	char name[64];
	uint32_t kind;
	uint64_t memory;
	uint32_t cores;
	uint32_t core_khz;
	uint32_t mem_khz;
	double strength;
	bool peer[PD_MAX_DEVICES];
	uint32_t lanes;
	uint64_t inplace_max;
	uint32_t capacity;
};

/**
 * struct pd_launch - one kernel launch
 * @grid: blocks in x, y, z
 * @block: threads per block in x, y, z
 * @shared_bytes: dynamic shared memory per block
 * @nparams: entries in @params
 * @params: pointers to each parameter's value, as cuLaunchKernel takes
 *	them (a device pointer parameter: a pointer to a u64)
 * @param_bytes: each parameter's size
 * @untimed: nobody needs this launch's exact device time (no other
 *	process used the device lately, so PTSched has nobody to be fair
 *	to): a backend may skip timing it and have its fence report an
 *	estimate (cuda: timing events cost about 1 us of CPU each on the
 *	submission path)
 * @hold: more launches will follow on this lane at once (a chain's
 *	hops): a backend with @flush may hold this launch, with the fences
 *	made by fence_defer after it, until the lane is flushed ("Held
 *	launches" below).  Only with @untimed.
 */
struct pd_launch {
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t shared_bytes;
	uint32_t nparams;
	void *params[PD_MAX_PARAMS];
	uint32_t param_bytes[PD_MAX_PARAMS];
	bool untimed;
	bool hold;
};

struct pd_backend;

/**
 * struct pd_backend_ops - a backend's operations
 * @name: "cuda", "sim" or "cpu"
 * @init: discover devices; @config is the backend's option string
 *	(sim: a config file path or "" for the default two devices; cuda:
 *	"", "shared", "lanes=N", "shared,lanes=N", "fences=events", see
 *	cuda.c); fills be->ndev and
 *	be->info.  -ENODEV when there is no device (cuda without
 *	libcuda.so.1 or without a GPU).
 * @fini: free everything init made (every space is closed first)
 * @space_open: a memory space on device @dev for client @owner (0 with
 *	shared isolation); its stream and its GPU-time events
 * @space_close: free a space and everything allocated in it
 * @host_register: make host memory DMA-able for every space (cuda:
 *	cuMemHostRegister); ptaskd calls it once per datablock arena,
 *	never per invocation.  Optional (NULL: nothing to do).
 * @host_unregister: undo host_register
 * @mem_alloc: device memory in a space
 * @mem_free: give it back
 * @copy_h2d: queue a copy from host memory to the space's device on
 *	@lane
 * @copy_d2h: queue a copy from the space's device to host memory on
 *	@lane
 * @copy_d2d: queue a copy between two spaces (peer copy when the devices
 *	allow it, else through host memory); ordered after everything
 *	queued on both lanes; runs on @dst_lane
 * @kernel_load: find kernel @entry in @code (@code_len bytes) for @space;
 *	-ENOENT when the code has no such entry, -EINVAL for bad code
 * @kernel_unload: drop a loaded kernel
 * @launch: queue a launch of a loaded kernel on @lane
 * @sync: wait for everything queued on every lane of the space; *@gpu_ns
 *	(may be NULL) gets the device time of the launches not yet
 *	reported by a fence poll or wait (events around each launch for
 *	cuda; the modelled time for sim; the measured time for cpu)
 * @fence: mark the end of everything queued on @lane so far; *@ticket
 *	names the mark (tickets of one lane increase).  Cheap: no wait.
 * @fence_poll: has fence @ticket of @lane passed?  1: yes, and *@gpu_ns
 *	(may be NULL) gets the device time of the launches queued on
 *	@lane after the previous fence and before this one (each fence's
 *	time is reported once, by the first poll or wait that sees it
 *	pass, 0 after); 0: not yet; -errno: the lane failed (a kernel
 *	fault: -EIO; the space is then unusable and every later poll
 *	fails too).  Never blocks.  ANY THREAD, also while the space's
 *	owner queues more work on any lane (the engine's completion
 *	thread polls while a worker submits).
 * @fence_wait: like fence_poll but blocks until the fence passes (spins
 *	at most PD_FENCE_SPIN_NS, then sleeps or yields): any thread, as
 *	fence_poll.
 * @lane_wait: work queued on @lane after this call waits until fence
 *	@ticket of lane @from of the same space has passed (cuda:
 *	cuStreamWaitEvent on an event recorded with the fence).  @from ==
 *	@lane is a no-op.
 * @host_device_ptr: the device address through which a kernel in @space
 *	reads and writes host memory [@host, @host + @bytes) in place; the
 *	range must lie in memory given to host_register.  -ENOENT if it
 *	does not, -EOPNOTSUPP if the device cannot.  (cuda:
 *	cuMemHostGetDevicePointer of a range registered with
 *	CU_MEMHOSTREGISTER_DEVICEMAP; sim and cpu: the host address.)
 * @fence_defer: like fence, but the mark may be queued later: with the
 *	next fence or flush of @lane (optional, with @flush; the engine
 *	holds no launch without them).  Its ticket passes when that one
 *	does.  Until the lane is flushed, fence_poll says 0 for it and
 *	fence_wait refuses it (-EDEADLK: nobody may wait for what is not
 *	queued).
 * @flush: queue what @lane holds: the launches made with
 *	pd_launch.hold since its last flush, in order, then the mark of its
 *	deferred fences.  A backend may replay a sequence it saw before as
 *	one unit (cuda: a CUDA graph, its kernel nodes' parameters patched).
 *	Returns 1 when it replayed, 0 when it queued them one by one or
 *	held nothing, -errno when it could not queue them (the space then
 *	fails: every later poll and wait fails too, so the jobs whose
 *	launches were held fail with it).  Optional.
 *
 * Held launches: a backend with @flush may hold a launch made with
 * pd_launch.hold instead of queuing it.  Every other queuing operation
 * that orders work on a lane flushes it first (copies on it or from
 * it, fence, lane_wait naming it either way, sync, space_close,
 * kernel_unload, which flushes every lane of the space), so held
 * launches keep their place in the lane's order; the engine flushes a
 * lane itself before it leaves it held with no launch to follow.  The
 * launch's parameter values are copied when it is held.
 */
struct pd_backend_ops {
	const char *name;
	int (*init)(struct pd_backend *be, const char *config);
	void (*fini)(struct pd_backend *be);
	int (*space_open)(struct pd_backend *be, uint32_t dev, uint64_t owner,
			  void **space);
	void (*space_close)(struct pd_backend *be, void *space);
	int (*host_register)(struct pd_backend *be, void *p, size_t bytes);
	void (*host_unregister)(struct pd_backend *be, void *p);
	int (*mem_alloc)(struct pd_backend *be, void *space, size_t bytes,
			 uint64_t *dptr);
	void (*mem_free)(struct pd_backend *be, void *space, uint64_t dptr);
	int (*copy_h2d)(struct pd_backend *be, void *space, uint32_t lane,
			uint64_t dst, const void *src, size_t bytes);
	int (*copy_d2h)(struct pd_backend *be, void *space, uint32_t lane,
			void *dst, uint64_t src, size_t bytes);
	int (*copy_d2d)(struct pd_backend *be, void *dst_space,
			uint32_t dst_lane, uint64_t dst, void *src_space,
			uint32_t src_lane, uint64_t src, size_t bytes);
	int (*kernel_load)(struct pd_backend *be, void *space,
			   const void *code, size_t code_len,
			   const char *entry, void **kernel);
	void (*kernel_unload)(struct pd_backend *be, void *space,
			      void *kernel);
	int (*launch)(struct pd_backend *be, void *space, uint32_t lane,
		      void *kernel, const struct pd_launch *launch);
	int (*sync)(struct pd_backend *be, void *space, uint64_t *gpu_ns);
	int (*fence)(struct pd_backend *be, void *space, uint32_t lane,
		     uint64_t *ticket);
	int (*fence_poll)(struct pd_backend *be, void *space, uint32_t lane,
			  uint64_t ticket, uint64_t *gpu_ns);
	int (*fence_wait)(struct pd_backend *be, void *space, uint32_t lane,
			  uint64_t ticket, uint64_t *gpu_ns);
	int (*lane_wait)(struct pd_backend *be, void *space, uint32_t lane,
			 uint32_t from, uint64_t ticket);
	int (*host_device_ptr)(struct pd_backend *be, void *space,
			       void *host, size_t bytes, uint64_t *dptr);
	int (*fence_defer)(struct pd_backend *be, void *space, uint32_t lane,
			   uint64_t *ticket);
	int (*flush)(struct pd_backend *be, void *space, uint32_t lane);
};

/**
 * struct pd_backend - a backend instance
 * @ops: its operations
 * @ndev: devices found by init
 * @info: each device
 * @priv: the backend's own state
 */
struct pd_backend {
	const struct pd_backend_ops *ops;
	uint32_t ndev;
	struct pd_device_info info[PD_MAX_DEVICES];
	void *priv;
	/*
	 * Wall ns per ns that sync reports (1 when 0): the sim's time_scale.
	 * GPU budgets refill in wall time, so what is charged must be too.
	 */
	double wall_per_gpu_ns;
	/*
	 * fence_wait runs the lane's queued work on the waiting thread
	 * (cpu): a waiter that polls fence_poll instead would leave that
	 * work to the lane threads, and wait longer.
	 */
	bool wait_runs_work;
	/*
	 * An untimed launch's fence reports an estimate (cuda: from its
	 * submission to its fence seen), which counts whatever else the
	 * device ran meanwhile; sim and cpu report the launch's own time
	 * whether timed or not.  The engine charges a sampled-out launch
	 * under contention its ptask's average instead (worker.c).
	 */
	bool untimed_estimated;
};

/*
 * The accelerator's own code for the last failure the backend met (cuda:
 * the CUresult of a failed call or fence; sim: 700, a modelled illegal
 * address), and a count that moves with every note, so the engine can
 * tell whether a failure came after a job was submitted: what it gives
 * EXEC_COMPLETE as @error_code.  One per process (ptaskd runs one
 * backend); any thread.
 */
void pd_backend_note_error(uint32_t code);
/*
 * Is @code a reset by someone else's fault (CUDA's MPS codes 805-807 and
 * 810, which the sim models too): the work it failed did nothing wrong
 * and runs again (PTASK_EXEC_COMPLETE_REQUEUE).
 */
bool pd_backend_collateral(uint32_t code);
/* The count of notes so far (0: none), and the last note's code. */
uint64_t pd_backend_error_seq(void);
uint32_t pd_backend_error_code(void);

extern const struct pd_backend_ops pd_backend_cuda;
extern const struct pd_backend_ops pd_backend_sim;
extern const struct pd_backend_ops pd_backend_cpu;

/* The ops named @name ("cuda", "sim", "cpu"), or NULL. */
const struct pd_backend_ops *pd_backend_find(const char *name);

#endif /* PTASKD_BACKEND_H */
