// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cpu.c - the host as one accelerator: device memory is host memory,
 * copies are memcpy, kernels are the ptasks' host twins (twins.h), and
 * the device time reported is the measured wall time of the launches.
 * For machines without a GPU that still want a graph of GPU ptasks
 * computed (and for comparing results with cuda).
 *
 * A real device: its lanes are worker threads, one per online core by
 * default ("lanes=N" in the backend's config string overrides it,
 * 1..PD_MAX_LANES).  Each lane thread runs its queue of copies, twin
 * launches, fences and waits in order; lanes run in parallel, so
 * independent invocations run one per core.  The threads are the
 * device's, shared by its spaces: lane l of every space is queued on
 * thread l, so the process has one thread per core whatever the number
 * of clients.  (A wait queued on a lane only names work queued before
 * it, so shared threads cannot wait on each other in a cycle.)
 *
 * Fences: a fence is an item in its lane's queue; it passes when the
 * lane thread reaches it, and records the wall time of the launches
 * before it.  A thread that waits for a fence (fence_wait) does not
 * sleep while the lane has work nobody runs: it runs the lane's items
 * itself, in order, as the lane thread would (one at a time per lane:
 * struct cpu_lane.running), so a short invocation waited for by the
 * thread that submitted it runs on that thread, without waking the lane
 * thread and being woken back (two thread wake-ups, 50-100 us each on a
 * busy VM, for a kernel of a few microseconds).  lane_wait queues a wait
 * for another lane's fence; copy_d2d waits for everything queued on the
 * source lane so far (by the lane thread's sequence numbers).  A twin's
 * error (its run returned one) is its launch's alone: the fence covering
 * it reports it, later fences do not, since a host twin cannot poison
 * its space as a faulting CUDA kernel poisons its context.  Arguments
 * are checked at launch (the twin's cost function runs on the caller's
 * thread), so most bad launches fail at once.
 *
 * In place: host memory is device memory, so a registered range is
 * passed at its own address and a copy only costs: inplace_max is
 * unlimited.  A twin's pointer into a registered range may reach the
 * rest of that range (an arena, which belongs to one uid: arena.h), not
 * other memory.
 *
 * Block ranges: a GPU runs one launch's thread blocks across its
 * multiprocessors; this device runs a large launch's blocks across its
 * lanes, when its twin has a block-range entry (uapi/ptask_twin.h,
 * "Block ranges").  The thread that runs the launch (its lane's, or a
 * fence_wait helping) cuts the grid into CPU_SPLIT_PER_LANE contiguous
 * ranges per lane, publishes them (struct cpu_split) and wakes the lane
 * threads that sleep with nothing to do; it takes ranges itself until
 * none is left, and the launch ends, and the items after it on its lane
 * run, once every range is done.  A lane thread takes a range whenever
 * it has nothing of its own to run, one at a time, looking at its own
 * queue in between: so a lane busy when the launch began joins it as
 * soon as its own work is done (a pipeline's stage that owns a lane
 * now and then still gets the whole device), and a lane's own work
 * waits for one range at most.  The launch's device time is what it
 * kept the lanes busy: its own thread's wall time plus the time the
 * other threads spent on its ranges (the wall time times the threads
 * when they all start at once); pd_device_info.capacity is the lanes,
 * so the engine's charge stays a share of the device.  An error in any
 * range is the launch's.  A launch is only split when the twin's cost
 * (flops + bytes) reaches split_min (CPU_SPLIT_MIN by default; waking a
 * thread costs 50-100 us on a busy VM), and never with "split=off".  A
 * twin without the entry, or a grid of one block, runs whole.
 *
 * Device memory has no budget but the host's: pd_device_info.memory is
 * the machine's physical memory, and an allocation fails only when
 * malloc does.  The engine's device_memory_limit still applies.
 *
 * Locking: each lane's mutex guards its queue and, for every space, the
 * fence state of that lane (struct cpu_flane); its cond is broadcast
 * when work arrives or a fence or item is done.  A thread waiting on
 * another lane takes only that lane's mutex (never two at once).
 * cpu->split_lock guards the open splits and every struct cpu_split's
 * counters; it is taken inside a lane's mutex (a lane thread looking
 * for a range before it sleeps), never the other way round, and
 * split_cond is broadcast when a split's last range is done.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "uapi/ptask.h"
#include "daemon/backend/host.h"
#include "daemon/backend/twins.h"
#include "daemon/log.h"

/* Fences remembered per space and lane. */
#define CPU_FENCE_RING	1024
/*
 * Least work (a twin's cost: flops + bytes) split across lanes: about
 * 0.2-1 ms of a core for the twins measured (gesture_filter does some 6
 * flops and 8 bytes per ns), several times a thread's wake-up.
 */
#define CPU_SPLIT_MIN	(4ULL << 20)
/*
 * Ranges per lane of a split launch: several, so that lanes that become
 * free while it runs still find work in it; not many, since each range
 * checks the twin's parameters again and takes split_lock twice.  (The
 * gesture demo, 2 lanes: 8 gave 67-72 fps, 4 gave 62-71; gesture_filter
 * ranges are then about 0.8 ms each.)
 */
#define CPU_SPLIT_PER_LANE	8

enum cpu_op { CO_COPY, CO_LAUNCH, CO_FENCE, CO_WAIT_FENCE, CO_WAIT_SEQ };

struct cpu_space;

/**
 * struct cpu_item - one queued operation
 * @op: what
 * @space: whose
 * @next: next in the lane's queue
 * @seq: its sequence number on its lane
 * @dst, @src, @bytes: CO_COPY
 * @twin, @launch, @args: CO_LAUNCH (@args holds the parameter values,
 *	copied at launch as cuLaunchKernel does)
 * @run_blocks: CO_LAUNCH: the twin's block-range entry when the launch
 *	may be split (large enough, more than one block), else NULL
 * @ticket: CO_FENCE: the fence; CO_WAIT_FENCE: the fence of lane @from
 * @from: CO_WAIT_FENCE, CO_WAIT_SEQ: the lane waited for
 * @upto: CO_WAIT_SEQ: the item sequence number waited for
 */
struct cpu_item {
	enum cpu_op op;
	struct cpu_space *space;
	struct cpu_item *next;
	uint64_t seq;
	void *dst;
	const void *src;
	size_t bytes;
	const struct ptask_twin *twin;
	ptask_twin_blocks_fn run_blocks;
	struct pd_launch launch;
	uint64_t ticket;
	uint32_t from;
	uint64_t upto;
	unsigned char args[];
};

/**
 * struct cpu_lane - one worker thread of the device
 * @lock: guards everything here and each space's struct cpu_flane of
 *	this lane
 * @cond: work arrived, an item or a fence is done, or stop
 * @head, @tail: its queue
 * @queued: sequence number of the last item queued
 * @done: sequence number of the last item done
 * @running: a thread (the lane's, or a fence_wait helping) runs the
 *	item at the head now: nobody else takes one meanwhile
 * @idle: the lane thread sleeps with nothing it could run: a split
 *	launch may give it a range
 * @stop: the thread must return once its queue is empty
 * @thread: the thread
 * @cpu: the backend
 * @index: its number
 */
struct cpu_lane {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct cpu_item *head, *tail;
	uint64_t queued;
	uint64_t done;
	bool running;
	bool idle;
	bool stop;
	pthread_t thread;
	struct cpu_state *cpu;
	uint32_t index;
};

/**
 * struct cpu_split - one launch run as block ranges by several threads
 *	(on the stack of the thread that runs the launch, which returns
 *	only once every range is done)
 * @run_blocks: the twin's block-range entry
 * @call: the launch
 * @nblocks: blocks in its grid
 * @parts: ranges it is cut into (2..CPU_SPLIT_PER_LANE x nlanes)
 * @taken: ranges handed out so far
 * @finished: ranges done
 * @helpers: lanes whose threads ran a range (bit per lane)
 * @helper_ns: the time other threads spent on its ranges
 * @err: the first error a range returned
 * @next: the next open split (cpu->splits)
 *
 * The counters, @err and @next are under cpu->split_lock.
 */
struct cpu_split {
	ptask_twin_blocks_fn run_blocks;
	struct ptask_twin_call call;
	uint64_t nblocks;
	uint32_t parts;
	uint32_t taken;
	uint32_t finished;
	uint32_t helpers;
	uint64_t helper_ns;
	int err;
	struct cpu_split *next;
};

/**
 * struct cpu_state - the backend (pd_backend.priv)
 * @reg: host_register ranges (first: pd_hostreg_* take be->priv)
 * @nlanes: lanes
 * @split_min: least cost (flops + bytes) of a launch split across lanes;
 *	UINT64_MAX: never ("split=off")
 * @split_lock: guards @splits and the splits' counters
 * @split_cond: a split's last range is done
 * @splits: splits with ranges nobody took yet
 * @nsplit: launches split so far (split_lock; logged at fini)
 * @nsplit_threads: threads that ran their ranges, summed (likewise)
 * @lanes: their threads
 */
struct cpu_state {
	struct pd_hostreg reg;
	uint32_t nlanes;
	uint64_t split_min;
	pthread_mutex_t split_lock;
	pthread_cond_t split_cond;
	struct cpu_split *splits;
	uint64_t nsplit;
	uint64_t nsplit_threads;
	struct cpu_lane lanes[PD_MAX_LANES];
};

/**
 * struct cpu_fence - one fence's record
 * @ticket: its ticket (0: unused)
 * @gpu_ns: wall time of the launches it covers
 * @err: a twin's error among them, or 0
 * @reported: a poll or wait gave @gpu_ns already
 */
struct cpu_fence {
	uint64_t ticket;
	uint64_t gpu_ns;
	int err;
	bool reported;
};

/**
 * struct cpu_flane - one space's fence state on one lane (the lane's lock)
 * @last: the last ticket given
 * @passed: the last ticket the lane thread reached
 * @pending_ns: launch time since the last fence
 * @pending_err: a twin's error since the last fence
 * @ring: fences by ticket % CPU_FENCE_RING (allocated on first fence)
 */
struct cpu_flane {
	uint64_t last;
	uint64_t passed;
	uint64_t pending_ns;
	int pending_err;
	struct cpu_fence *ring;
};

/**
 * struct cpu_space - one space of the cpu backend
 * @mem: its allocations (first member)
 * @cpu: the backend
 * @fl: its fence state per lane
 */
struct cpu_space {
	struct pd_hostspace mem;
	struct cpu_state *cpu;
	struct cpu_flane fl[PD_MAX_LANES];
};

/* A kernel's buffers: its space's, or registered host memory in place. */
static uint64_t cpu_extent(void *ctx, const void *p)
{
	struct cpu_space *s = ctx;
	uint64_t n = pd_hostspace_extent(&s->mem, (uint64_t)(uintptr_t)p);

	return n ? n : pd_hostspace_extent(&s->cpu->reg.ranges,
					   (uint64_t)(uintptr_t)p);
}

/* Wait on lane @ln until @done(@ln, @arg) holds. */
static void wait_on(struct cpu_lane *ln,
		    bool (*done)(struct cpu_lane *ln, const void *arg),
		    const void *arg)
{
	pthread_mutex_lock(&ln->lock);
	while (!done(ln, arg))
		pthread_cond_wait(&ln->cond, &ln->lock);
	pthread_mutex_unlock(&ln->lock);
}

struct fence_ref {
	const struct cpu_flane *fl;
	uint64_t ticket;
};

static bool fence_passed(struct cpu_lane *ln, const void *arg)
{
	const struct fence_ref *f = arg;

	(void)ln;
	return f->fl->passed >= f->ticket;
}

static bool seq_done(struct cpu_lane *ln, const void *arg)
{
	return ln->done >= *(const uint64_t *)arg;
}

/* @sp has no range left to take: off the open list.  split_lock held. */
static void split_unlink_locked(struct cpu_state *cpu, struct cpu_split *sp)
{
	struct cpu_split **at = &cpu->splits;

	while (*at && *at != sp)
		at = &(*at)->next;
	if (*at)
		*at = sp->next;
}

/*
 * Take a range of @sp (NULL: of the first open split): *@part its index;
 * the split, or NULL when none is open.  split_lock held.
 */
static struct cpu_split *split_take_locked(struct cpu_state *cpu,
					   struct cpu_split *sp,
					   uint32_t *part)
{
	if (!sp)
		sp = cpu->splits;
	if (!sp || sp->taken == sp->parts)
		return NULL;
	*part = sp->taken++;
	if (sp->taken == sp->parts)
		split_unlink_locked(cpu, sp);
	return sp;
}

/*
 * Run range @part of @sp (no lock held), then count it done; lane
 * @helper's thread, or the launch's own (@helper UINT32_MAX).
 */
static void split_run_part(struct cpu_state *cpu, struct cpu_split *sp,
			   uint32_t part, uint32_t helper)
{
	uint64_t first = sp->nblocks * part / sp->parts;
	uint64_t end = sp->nblocks * (part + 1) / sp->parts;
	uint64_t t0 = pd_now_ns();
	int err = end > first ?
		  sp->run_blocks(&sp->call, first, end - first) : 0;

	t0 = pd_now_ns() - t0;
	pthread_mutex_lock(&cpu->split_lock);
	if (helper != UINT32_MAX) {
		sp->helpers |= 1U << helper;
		sp->helper_ns += t0;
	}
	if (err && !sp->err)
		sp->err = err;
	if (++sp->finished == sp->parts)
		pthread_cond_broadcast(&cpu->split_cond);
	pthread_mutex_unlock(&cpu->split_lock);
}

/*
 * Lane @l's thread, with nothing of its own to run: one range of an open
 * split, if there is one.  false when there was none.
 */
static bool split_help(struct cpu_state *cpu, uint32_t l)
{
	struct cpu_split *sp;
	uint32_t part;

	pthread_mutex_lock(&cpu->split_lock);
	sp = split_take_locked(cpu, NULL, &part);
	pthread_mutex_unlock(&cpu->split_lock);
	if (!sp)
		return false;
	split_run_part(cpu, sp, part, l);
	return true;
}

/*
 * The lanes whose threads sleep with nothing to run (bit per lane), to
 * be woken for a split just published.
 */
static uint32_t idle_lanes(struct cpu_state *cpu)
{
	uint32_t mask = 0, l;

	for (l = 0; l < cpu->nlanes; l++) {
		pthread_mutex_lock(&cpu->lanes[l].lock);
		if (cpu->lanes[l].idle)
			mask |= 1U << l;
		pthread_mutex_unlock(&cpu->lanes[l].lock);
	}
	return mask;
}

/*
 * Run launch @it (by whichever thread runs its lane's head) in block
 * ranges, with every lane thread that has nothing else to do.  Returns
 * when every range is done: its error, or 0; *@helper_ns the time other
 * threads spent on it (its device time is its wall time plus that).
 */
static int run_split(struct cpu_state *cpu, const struct cpu_item *it,
		     const struct ptask_twin_call *call, uint64_t *helper_ns)
{
	uint32_t idle, l2, part;
	struct cpu_split sp;

	sp = (struct cpu_split){
		.run_blocks = it->run_blocks, .call = *call,
		.nblocks = ptask_twin_blocks(call),
		.parts = CPU_SPLIT_PER_LANE * cpu->nlanes,
	};
	if (sp.parts > sp.nblocks)
		sp.parts = (uint32_t)sp.nblocks;
	*helper_ns = 0;
	if (sp.parts < 2 || cpu->nlanes < 2)
		return it->twin->run(call);
	pthread_mutex_lock(&cpu->split_lock);
	sp.next = NULL;
	if (!cpu->splits) {
		cpu->splits = &sp;
	} else {
		struct cpu_split *at = cpu->splits;

		while (at->next)
			at = at->next;
		at->next = &sp;
	}
	pthread_mutex_unlock(&cpu->split_lock);
	/*
	 * Asleep now (after the split is out): a lane thread either saw it
	 * before sleeping, or sleeps with @idle set under its lock already.
	 */
	idle = idle_lanes(cpu);
	for (l2 = 0; l2 < cpu->nlanes; l2++) {
		if (!(idle & (1U << l2)))
			continue;
		pthread_mutex_lock(&cpu->lanes[l2].lock);
		pthread_cond_broadcast(&cpu->lanes[l2].cond);
		pthread_mutex_unlock(&cpu->lanes[l2].lock);
	}
	/* This thread takes ranges too, until none is left. */
	for (;;) {
		bool took;

		pthread_mutex_lock(&cpu->split_lock);
		took = split_take_locked(cpu, &sp, &part);
		pthread_mutex_unlock(&cpu->split_lock);
		if (!took)
			break;
		split_run_part(cpu, &sp, part, UINT32_MAX);
	}
	pthread_mutex_lock(&cpu->split_lock);
	while (sp.finished < sp.parts)
		pthread_cond_wait(&cpu->split_cond, &cpu->split_lock);
	*helper_ns = sp.helper_ns;
	cpu->nsplit++;
	cpu->nsplit_threads += 1 + (uint32_t)__builtin_popcount(sp.helpers);
	pthread_mutex_unlock(&cpu->split_lock);
	return sp.err;
}

/* Run @it on lane @l's thread (no lock held). */
static void run_item(struct cpu_state *cpu, uint32_t l, struct cpu_item *it)
{
	struct cpu_lane *ln = &cpu->lanes[l];
	struct cpu_flane *fl = &it->space->fl[l];
	struct ptask_twin_call call;
	uint64_t start, helper_ns;
	int err;

	switch (it->op) {
	case CO_COPY:
		memmove(it->dst, it->src, it->bytes);
		break;
	case CO_LAUNCH:
		pd_twin_call_init(&call, &it->launch, cpu_extent, it->space);
		start = pd_now_ns();
		helper_ns = 0;
		err = it->run_blocks ? run_split(cpu, it, &call, &helper_ns) :
				       it->twin->run(&call);
		start = pd_now_ns() - start + helper_ns;
		pthread_mutex_lock(&ln->lock);
		fl->pending_ns += start;
		if (err && !fl->pending_err)
			fl->pending_err = err;
		pthread_mutex_unlock(&ln->lock);
		break;
	case CO_FENCE: {
		struct cpu_fence *f = &fl->ring[it->ticket % CPU_FENCE_RING];

		pthread_mutex_lock(&ln->lock);
		f->ticket = it->ticket;
		f->gpu_ns = fl->pending_ns;
		f->err = fl->pending_err;
		f->reported = false;
		fl->pending_ns = 0;
		fl->pending_err = 0;
		fl->passed = it->ticket;
		pthread_mutex_unlock(&ln->lock);
		break;
	}
	case CO_WAIT_FENCE: {
		struct fence_ref ref = { &it->space->fl[it->from], it->ticket };

		wait_on(&cpu->lanes[it->from], fence_passed, &ref);
		break;
	}
	case CO_WAIT_SEQ:
		wait_on(&cpu->lanes[it->from], seq_done, &it->upto);
		break;
	}
}

/*
 * Run the item at the head of @ln's queue (there is one, and nobody runs
 * one: !ln->running), then take it off.  Locked on entry and exit; the
 * lock is dropped while it runs.
 */
static void run_head_locked(struct cpu_lane *ln)
{
	struct cpu_item *it = ln->head;

	ln->running = true;
	pthread_mutex_unlock(&ln->lock);
	run_item(ln->cpu, ln->index, it);
	pthread_mutex_lock(&ln->lock);
	ln->running = false;
	ln->head = it->next;
	if (!ln->head)
		ln->tail = NULL;
	ln->done = it->seq;
	free(it);
	pthread_cond_broadcast(&ln->cond);
}

static void *lane_main(void *arg)
{
	struct cpu_lane *ln = arg;
	bool helped;

	pthread_mutex_lock(&ln->lock);
	for (;;) {
		if (ln->head && !ln->running) {
			run_head_locked(ln);
			continue;
		}
		if (!ln->head && ln->stop)
			break;
		/* Nothing of its own: a range of a split launch, if any. */
		pthread_mutex_unlock(&ln->lock);
		helped = split_help(ln->cpu, ln->index);
		pthread_mutex_lock(&ln->lock);
		if (helped || (ln->head && !ln->running))
			continue;
		/*
		 * A split published after split_help looked: take it.  One
		 * published after this look finds @idle set (under this lock,
		 * held until the wait) and wakes the thread.
		 */
		pthread_mutex_lock(&ln->cpu->split_lock);
		helped = ln->cpu->splits != NULL;
		pthread_mutex_unlock(&ln->cpu->split_lock);
		/*
		 * A stop set while the lock was dropped for split_help was
		 * broadcast to nobody: look at it again before sleeping.
		 */
		if (helped || ln->stop)
			continue;
		ln->idle = true;
		pthread_cond_wait(&ln->cond, &ln->lock);
		ln->idle = false;
	}
	pthread_mutex_unlock(&ln->lock);
	return NULL;
}

/* Queue @it on lane @l; returns its sequence number. */
static uint64_t enqueue(struct cpu_state *cpu, uint32_t l,
			struct cpu_item *it)
{
	struct cpu_lane *ln = &cpu->lanes[l];
	uint64_t seq;

	pthread_mutex_lock(&ln->lock);
	it->seq = seq = ++ln->queued;
	it->next = NULL;
	if (ln->tail)
		ln->tail->next = it;
	else
		ln->head = it;
	ln->tail = it;
	pthread_cond_broadcast(&ln->cond);
	pthread_mutex_unlock(&ln->lock);
	return seq;
}

static struct cpu_item *item_new(struct cpu_space *s, enum cpu_op op,
				 size_t extra)
{
	struct cpu_item *it = calloc(1, sizeof(*it) + extra);

	if (it) {
		it->op = op;
		it->space = s;
	}
	return it;
}

static void lanes_stop(struct cpu_state *cpu, uint32_t n)
{
	uint32_t l;

	for (l = 0; l < n; l++) {
		pthread_mutex_lock(&cpu->lanes[l].lock);
		cpu->lanes[l].stop = true;
		pthread_cond_broadcast(&cpu->lanes[l].cond);
		pthread_mutex_unlock(&cpu->lanes[l].lock);
		pthread_join(cpu->lanes[l].thread, NULL);
		pthread_cond_destroy(&cpu->lanes[l].cond);
		pthread_mutex_destroy(&cpu->lanes[l].lock);
	}
}

/* A decimal number from @s to the next ',' or the end; -EINVAL if none. */
static int parse_number(const char *s, const char **next,
			unsigned long long *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (errno || (*end && *end != ','))
		return -EINVAL;
	*next = end;
	return 0;
}

/*
 * The config: keys separated by commas, each at most once: "lanes=N"
 * (1..PD_MAX_LANES; *@lanes 0 when not given), "split=on" or "split=off"
 * (block ranges across lanes), "split_min=N" (least cost split; implies
 * split=on).  "" for the defaults.
 */
static int parse_config(const char *config, uint32_t *lanes,
			uint64_t *split_min)
{
	bool seen_lanes = false, seen_split = false, seen_min = false;
	const char *at = config ? config : "";
	unsigned long long n;
	bool off = false;
	int err;

	*lanes = 0;
	*split_min = CPU_SPLIT_MIN;
	while (*at) {
		if (!strncmp(at, "lanes=", 6) && !seen_lanes) {
			seen_lanes = true;
			err = parse_number(at + 6, &at, &n);
			if (err || n < 1 || n > PD_MAX_LANES)
				return -EINVAL;
			*lanes = (uint32_t)n;
		} else if (!strncmp(at, "split_min=", 10) && !seen_min) {
			seen_min = true;
			err = parse_number(at + 10, &at, &n);
			if (err)
				return err;
			*split_min = n;
		} else if (!strncmp(at, "split=", 6) && !seen_split) {
			seen_split = true;
			at += 6;
			if (!strncmp(at, "on", 2) && (!at[2] || at[2] == ','))
				at += 2;
			else if (!strncmp(at, "off", 3) &&
				 (!at[3] || at[3] == ','))
				off = true, at += 3;
			else
				return -EINVAL;
		} else {
			return -EINVAL;
		}
		if (*at == ',' && !*++at)
			return -EINVAL;		/* a trailing comma */
	}
	if (off && seen_min)
		return -EINVAL;			/* split=off,split_min=N */
	if (off)
		*split_min = UINT64_MAX;
	return 0;
}

static int cpu_init(struct pd_backend *be, const char *config)
{
	struct pd_device_info *info = &be->info[0];
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct cpu_state *cpu;
	uint64_t split_min;
	uint32_t lanes, l;
	int err;

	err = parse_config(config, &lanes, &split_min);
	if (err)
		return err;
	if (!lanes)
		lanes = cpus < 1 ? 1 : cpus > PD_MAX_LANES ? PD_MAX_LANES :
			(uint32_t)cpus;
	cpu = calloc(1, sizeof(*cpu));
	if (!cpu)
		return -ENOMEM;
	cpu->split_min = split_min;
	err = -pthread_mutex_init(&cpu->split_lock, NULL);
	if (err)
		goto err_free;
	err = -pthread_cond_init(&cpu->split_cond, NULL);
	if (err)
		goto err_split_lock;
	err = pd_hostspace_init(&cpu->reg.ranges);
	if (err)
		goto err_split_cond;
	cpu->reg.ranges.borrowed = true;
	for (l = 0; l < lanes; l++) {
		struct cpu_lane *ln = &cpu->lanes[l];

		ln->cpu = cpu;
		ln->index = l;
		err = -pthread_mutex_init(&ln->lock, NULL);
		if (err)
			goto err_lanes;
		err = -pthread_cond_init(&ln->cond, NULL);
		if (!err)
			err = -pthread_create(&ln->thread, NULL, lane_main, ln);
		if (err) {
			pthread_cond_destroy(&ln->cond);
			pthread_mutex_destroy(&ln->lock);
			goto err_lanes;
		}
	}
	cpu->nlanes = lanes;
	memset(info, 0, sizeof(*info));
	strcpy(info->name, "cpu");
	info->kind = PTASK_ACCEL_CPU;
	info->memory = pages > 0 && page > 0 ?
		       (uint64_t)pages * (uint64_t)page : 0;
	info->cores = cpus > 0 ? (uint32_t)cpus : 1;
	info->lanes = lanes;
	info->inplace_max = UINT64_MAX;
	/* Each lane a core: N launches at once are N devices' worth. */
	info->capacity = lanes;
	be->ndev = 1;
	be->wait_runs_work = true;
	pd_backend_rank(be);
	be->priv = cpu;
	return 0;

err_lanes:
	lanes_stop(cpu, l);
	pd_hostspace_fini(&cpu->reg.ranges);
err_split_cond:
	pthread_cond_destroy(&cpu->split_cond);
err_split_lock:
	pthread_mutex_destroy(&cpu->split_lock);
err_free:
	free(cpu);
	return err;
}

static void cpu_fini(struct pd_backend *be)
{
	struct cpu_state *cpu = be->priv;

	lanes_stop(cpu, cpu->nlanes);
	if (cpu->nsplit)
		pd_log_info("cpu: %llu launches ran in block ranges, on %.2f threads each on average",
			    (unsigned long long)cpu->nsplit,
			    (double)cpu->nsplit_threads / (double)cpu->nsplit);
	pd_hostspace_fini(&cpu->reg.ranges);
	pthread_cond_destroy(&cpu->split_cond);
	pthread_mutex_destroy(&cpu->split_lock);
	free(cpu);
	be->priv = NULL;
}

static int cpu_space_open(struct pd_backend *be, uint32_t dev,
			  uint64_t owner, void **space)
{
	struct cpu_space *s;
	int err;

	(void)owner;
	if (dev >= be->ndev)
		return -ENODEV;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = pd_hostspace_init(&s->mem);
	if (err) {
		free(s);
		return err;
	}
	s->cpu = be->priv;
	*space = s;
	return 0;
}

/* Wait until every item queued so far on every lane is done. */
static void drain(struct cpu_state *cpu)
{
	uint64_t upto[PD_MAX_LANES];
	uint32_t l;

	for (l = 0; l < cpu->nlanes; l++) {
		pthread_mutex_lock(&cpu->lanes[l].lock);
		upto[l] = cpu->lanes[l].queued;
		pthread_mutex_unlock(&cpu->lanes[l].lock);
	}
	for (l = 0; l < cpu->nlanes; l++)
		wait_on(&cpu->lanes[l], seq_done, &upto[l]);
}

static void cpu_space_close(struct pd_backend *be, void *space)
{
	struct cpu_space *s = space;
	uint32_t l;

	/* Nothing may run on memory about to be freed. */
	drain(be->priv);
	pd_hostspace_fini(&s->mem);
	for (l = 0; l < PD_MAX_LANES; l++)
		free(s->fl[l].ring);
	free(s);
}

static int cpu_mem_alloc(struct pd_backend *be, void *space, size_t bytes,
			 uint64_t *dptr)
{
	struct cpu_space *s = space;

	(void)be;
	return pd_hostspace_alloc(&s->mem, bytes, dptr);
}

static void cpu_mem_free(struct pd_backend *be, void *space, uint64_t dptr)
{
	struct cpu_space *s = space;

	(void)be;
	pd_hostspace_free(&s->mem, dptr);
}

static bool bad_lane(const struct pd_backend *be, uint32_t lane)
{
	return lane >= ((const struct cpu_state *)be->priv)->nlanes;
}

static int queue_copy(struct pd_backend *be, struct cpu_space *s,
		      uint32_t lane, void *dst, const void *src, size_t bytes)
{
	struct cpu_item *it;

	if (!bytes)
		return 0;
	it = item_new(s, CO_COPY, 0);
	if (!it)
		return -ENOMEM;
	it->dst = dst;
	it->src = src;
	it->bytes = bytes;
	enqueue(be->priv, lane, it);
	return 0;
}

static int cpu_copy_h2d(struct pd_backend *be, void *space, uint32_t lane,
			uint64_t dst, const void *src, size_t bytes)
{
	struct cpu_space *s = space;

	if (bad_lane(be, lane))
		return -EINVAL;
	if (!pd_hostspace_holds(&s->mem, dst, bytes))
		return -EFAULT;
	return queue_copy(be, s, lane, (void *)(uintptr_t)dst, src, bytes);
}

static int cpu_copy_d2h(struct pd_backend *be, void *space, uint32_t lane,
			void *dst, uint64_t src, size_t bytes)
{
	struct cpu_space *s = space;

	if (bad_lane(be, lane))
		return -EINVAL;
	if (!pd_hostspace_holds(&s->mem, src, bytes))
		return -EFAULT;
	return queue_copy(be, s, lane, dst, (const void *)(uintptr_t)src,
			  bytes);
}

static int cpu_copy_d2d(struct pd_backend *be, void *dst_space,
			uint32_t dst_lane, uint64_t dst, void *src_space,
			uint32_t src_lane, uint64_t src, size_t bytes)
{
	struct cpu_state *cpu = be->priv;
	struct cpu_space *ds = dst_space, *ss = src_space;
	struct cpu_item *it;

	if (bad_lane(be, dst_lane) || bad_lane(be, src_lane))
		return -EINVAL;
	if (!pd_hostspace_holds(&ds->mem, dst, bytes) ||
	    !pd_hostspace_holds(&ss->mem, src, bytes))
		return -EFAULT;
	if (src_lane != dst_lane) {
		it = item_new(ds, CO_WAIT_SEQ, 0);
		if (!it)
			return -ENOMEM;
		it->from = src_lane;
		pthread_mutex_lock(&cpu->lanes[src_lane].lock);
		it->upto = cpu->lanes[src_lane].queued;
		pthread_mutex_unlock(&cpu->lanes[src_lane].lock);
		enqueue(cpu, dst_lane, it);
	}
	return queue_copy(be, ds, dst_lane, (void *)(uintptr_t)dst,
			  (const void *)(uintptr_t)src, bytes);
}

/*
 * Queue a launch; its parameter values are copied now (the caller's
 * may change once this returns), and the twin's cost function checks
 * them here, so most bad launches fail at once.
 */
static int cpu_launch(struct pd_backend *be, void *space, uint32_t lane,
		      void *kernel, const struct pd_launch *launch)
{
	struct cpu_state *cpu = be->priv;
	struct cpu_space *s = space;
	const struct ptask_twin *k = kernel;
	struct ptask_twin_call call;
	struct ptask_twin_cost cost;
	struct cpu_item *it;
	size_t total = 0, at = 0;
	uint32_t i;
	int err;

	if (bad_lane(be, lane) || launch->nparams > PD_MAX_PARAMS)
		return -EINVAL;
	for (i = 0; i < launch->nparams; i++) {
		if (!launch->params[i] && launch->param_bytes[i])
			return -EINVAL;
		total += (launch->param_bytes[i] + 7) & ~(size_t)7;
	}
	pd_twin_call_init(&call, launch, cpu_extent, s);
	err = k->cost(&call, &cost);
	if (err)
		return err;
	it = item_new(s, CO_LAUNCH, total);
	if (!it)
		return -ENOMEM;
	it->twin = k;
	/* Worth splitting?  (The sum saturates: no overflow to a small one.) */
	if (cpu->split_min != UINT64_MAX && ptask_twin_blocks(&call) > 1 &&
	    (cost.flops >= cpu->split_min || cost.bytes >= cpu->split_min ||
	     cost.flops + cost.bytes >= cpu->split_min))
		it->run_blocks = pd_twin_run_blocks(k);
	it->launch = *launch;
	for (i = 0; i < launch->nparams; i++) {
		memcpy(it->args + at, launch->params[i],
		       launch->param_bytes[i]);
		it->launch.params[i] = it->args + at;
		at += (launch->param_bytes[i] + 7) & ~(size_t)7;
	}
	enqueue(be->priv, lane, it);
	return 0;
}

/* Wait for every lane; the launch time no fence took. */
static int cpu_sync(struct pd_backend *be, void *space, uint64_t *gpu_ns)
{
	struct cpu_state *cpu = be->priv;
	struct cpu_space *s = space;
	uint64_t ns = 0;
	int err = 0;
	uint32_t l;

	drain(cpu);
	for (l = 0; l < cpu->nlanes; l++) {
		pthread_mutex_lock(&cpu->lanes[l].lock);
		ns += s->fl[l].pending_ns;
		s->fl[l].pending_ns = 0;
		if (!err)
			err = s->fl[l].pending_err;
		s->fl[l].pending_err = 0;
		pthread_mutex_unlock(&cpu->lanes[l].lock);
	}
	if (gpu_ns)
		*gpu_ns = ns;
	return err;
}

static int cpu_fence(struct pd_backend *be, void *space, uint32_t lane,
		     uint64_t *ticket)
{
	struct cpu_state *cpu = be->priv;
	struct cpu_space *s = space;
	struct cpu_flane *fl;
	struct cpu_item *it;

	if (bad_lane(be, lane))
		return -EINVAL;
	fl = &s->fl[lane];
	it = item_new(s, CO_FENCE, 0);
	if (!it)
		return -ENOMEM;
	pthread_mutex_lock(&cpu->lanes[lane].lock);
	if (!fl->ring) {
		fl->ring = calloc(CPU_FENCE_RING, sizeof(*fl->ring));
		if (!fl->ring) {
			pthread_mutex_unlock(&cpu->lanes[lane].lock);
			free(it);
			return -ENOMEM;
		}
	}
	it->ticket = *ticket = ++fl->last;
	pthread_mutex_unlock(&cpu->lanes[lane].lock);
	enqueue(cpu, lane, it);
	return 0;
}

/*
 * Fence @ticket of @fl: 1 passed (its time and error reported once),
 * 0 not yet, -EINVAL never given.  The lane's lock held.
 */
static int poll_locked(struct cpu_flane *fl, uint64_t ticket,
		       uint64_t *gpu_ns)
{
	struct cpu_fence *f;
	uint64_t ns = 0;
	int ret = 1;

	if (!ticket || ticket > fl->last)
		return -EINVAL;
	if (fl->passed < ticket)
		return 0;
	f = &fl->ring[ticket % CPU_FENCE_RING];
	if (f->ticket == ticket && f->err)
		return f->err;		/* a twin's error: this fence's */
	if (f->ticket == ticket && !f->reported) {
		ns = f->gpu_ns;
		f->reported = true;
	}
	if (ret == 1 && gpu_ns)
		*gpu_ns = ns;
	return ret;
}

static int cpu_fence_poll(struct pd_backend *be, void *space, uint32_t lane,
			  uint64_t ticket, uint64_t *gpu_ns)
{
	struct cpu_state *cpu = be->priv;
	struct cpu_space *s = space;
	int ret;

	if (bad_lane(be, lane))
		return -EINVAL;
	pthread_mutex_lock(&cpu->lanes[lane].lock);
	ret = poll_locked(&s->fl[lane], ticket, gpu_ns);
	pthread_mutex_unlock(&cpu->lanes[lane].lock);
	return ret;
}

/*
 * Run the lane's items while nobody does; else spin PD_FENCE_SPIN_NS
 * (yielding), then sleep on the lane's cond.
 */
static int cpu_fence_wait(struct pd_backend *be, void *space, uint32_t lane,
			  uint64_t ticket, uint64_t *gpu_ns)
{
	struct cpu_state *cpu = be->priv;
	struct cpu_space *s = space;
	uint64_t spin_end = 0;
	struct cpu_lane *ln;
	int ret;

	if (bad_lane(be, lane))
		return -EINVAL;
	ln = &cpu->lanes[lane];
	pthread_mutex_lock(&ln->lock);
	while (!(ret = poll_locked(&s->fl[lane], ticket, gpu_ns))) {
		if (ln->head && !ln->running) {
			run_head_locked(ln);
			continue;
		}
		if (!spin_end)
			spin_end = pd_now_ns() + PD_FENCE_SPIN_NS;
		if (pd_now_ns() < spin_end) {
			/* Someone runs it: likely done soon. */
			pthread_mutex_unlock(&ln->lock);
			sched_yield();
			pthread_mutex_lock(&ln->lock);
			continue;
		}
		pthread_cond_wait(&ln->cond, &ln->lock);
	}
	pthread_mutex_unlock(&ln->lock);
	return ret;
}

static int cpu_lane_wait(struct pd_backend *be, void *space, uint32_t lane,
			 uint32_t from, uint64_t ticket)
{
	struct cpu_state *cpu = be->priv;
	struct cpu_space *s = space;
	struct cpu_item *it;
	bool never;

	if (bad_lane(be, lane) || bad_lane(be, from))
		return -EINVAL;
	pthread_mutex_lock(&cpu->lanes[from].lock);
	never = !ticket || ticket > s->fl[from].last;
	pthread_mutex_unlock(&cpu->lanes[from].lock);
	if (never)
		return -EINVAL;
	if (from == lane)
		return 0;
	it = item_new(s, CO_WAIT_FENCE, 0);
	if (!it)
		return -ENOMEM;
	it->from = from;
	it->ticket = ticket;
	enqueue(cpu, lane, it);
	return 0;
}

const struct pd_backend_ops pd_backend_cpu = {
	.name = "cpu",
	.init = cpu_init,
	.fini = cpu_fini,
	.space_open = cpu_space_open,
	.space_close = cpu_space_close,
	.host_register = pd_hostreg_register,
	.host_unregister = pd_hostreg_unregister,
	.mem_alloc = cpu_mem_alloc,
	.mem_free = cpu_mem_free,
	.copy_h2d = cpu_copy_h2d,
	.copy_d2h = cpu_copy_d2h,
	.copy_d2d = cpu_copy_d2d,
	.kernel_load = pd_twin_kernel_load,
	.kernel_unload = pd_twin_kernel_unload,
	.launch = cpu_launch,
	.sync = cpu_sync,
	.fence = cpu_fence,
	.fence_poll = cpu_fence_poll,
	.fence_wait = cpu_fence_wait,
	.lane_wait = cpu_lane_wait,
	.host_device_ptr = pd_hostreg_device_ptr,
};
