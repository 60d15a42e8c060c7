// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * help.c - helpers: a thread of the source that made work ready (user
 * mode: a client's connection, once it has answered the push) takes
 * that work itself, places it as the taker would, and submits a short
 * job placed on a device on its own thread instead of waking the
 * device's worker (engine_priv.h: it *claims* the device for the job);
 * then it waits for that job's fence itself (fence_wait: the fastest
 * way for one invocation at a time) and completes it, unless the
 * completion thread is completing that lane's jobs, which then
 * completes it too.
 * The taker's wake-up for that work was held back by the source; the
 * helper's struct pd_wake_defer goes with every source call made for
 * it, so the completions of the jobs it runs hold theirs back too, and
 * say whether more work became ready.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include "daemon/backend/host.h"
#include "daemon/engine/engine_priv.h"
#include "daemon/trace.h"

/**
 * pd_help_can_claim_locked() - may a helper run @job on @dev itself?
 * @dev: a device with a free slot placement chose for @job
 * @job: the job
 *
 * Only short work (pd_inline_run_ns, PD_INLINE_BYTES: the helper is a
 * client's connection, which waits meanwhile) whose space and kernel are
 * ready on @dev, so a helper never opens a context or loads code.  The
 * device has no job to submit and its worker is not tidying, so nobody
 * changes its spaces or their kernel lists while they are read here.
 */
bool pd_help_can_claim_locked(struct pd_device *dev,
			      const struct pd_job *job)
{
	struct pd_engine *e = dev->e;
	const struct pd_ptask_info *info = job->info;
	uint64_t owner = pd_sched_owner(e, job), bytes = 0;
	const struct pd_kernel_ref *ref;
	struct ptask_list *pos;
	uint32_t i;

	pd_assert_locked(e);
	if (!pd_dev_available(dev) || dev->tidying || e->draining ||
	    info->dead || !info->runs ||
	    pd_job_expected_run_ns(job) > pd_inline_run_ns(job))
		return false;
	/* a segment's links are never copied */
	for (i = 0; i < job->inv.n_ports; i++)
		if (!(job->ports[i].flags & PTASK_INVP_FUSED))
			bytes += job->ports[i].bytes;
	if (bytes > PD_INLINE_BYTES)
		return false;
	ptask_list_for_each(pos, &dev->spaces) {
		const struct pd_space *s = ptask_list_entry(pos,
				struct pd_space, node);

		if (s->owner != owner)
			continue;
		/* a segment's: every member's, none forgotten */
		if (pd_job_is_segment(job))
			return pd_space_kernels_loaded(s, job->members,
						       job->nmembers);
		for (ref = s->kernels; ref; ref = ref->next)
			if (ref->info == info)
				return true;
		return false;
	}
	return false;
}

/*
 * Submit the job a helper claimed on @dev (dev->claimed, dev->self the
 * caller) on its thread, as the worker would, then give the device back
 * (the next queued jobs are placed, on workers; the worker is woken when
 * its housekeeping is due, since that stays with it); then wait for the
 * job's fence and complete it, with the older jobs of its lane.  A job
 * completed ahead is not waited for: if jobs are queued behind it (the
 * rest of a chain or a stream the core took ahead in one call), the
 * helper claims the next one itself while its time (from @start, at most
 * PD_HELP_NS) lasts, rather than placing it on a worker it would have to
 * wake.  No lock held.
 */
static void run_claimed(struct pd_device *dev, struct pd_wake_defer *defer,
			uint64_t start)
{
	struct pd_engine *e = dev->e;
	struct pd_job *job;
	uint64_t now;
	bool mine;
	int d;

	for (;;) {
		pd_engine_lock(e);
		job = dev->job;
		PD_ASSERT(job && dev->claimed &&
			  pthread_equal(dev->self, pthread_self()));
		pd_engine_unlock(e);
		mine = pd_job_run(dev, job, defer, true);
		pd_engine_lock(e);
		e->stats.helped++;
		dev->job = NULL;
		dev->claimed = false;
		now = pd_now_ns();	/* one read: 40-45 ns each on the GPU VMs */
		if (now >= dev->tidy_ns)
			pthread_cond_signal(&dev->cond);
		d = !mine && now - start < PD_HELP_NS ?
		    pd_sched_dispatch_claim_locked(e) : -1;
		if (d < 0 && (mine || now - start >= PD_HELP_NS))
			pd_dev_let_go_locked(e);
		else if (d < 0)	/* dispatched: what is left is the waiters' */
			atomic_fetch_add_explicit(&e->devs_let_go, 1,
						  memory_order_relaxed);
		pthread_cond_broadcast(&e->idle_cond);
		pd_engine_unlock(e);
		if (d < 0)
			break;
		dev = &e->dev[d];
	}
	/* Done, or completed ahead: the next hop, not its fence, is next. */
	if (!mine)
		return;
	pd_engine_lock(e);
	pd_job_wait_complete_locked(e, job, defer, NULL);
	pd_engine_unlock(e);
}

void pd_dev_let_go_locked(struct pd_engine *e)
{
	pd_assert_locked(e);
	atomic_fetch_add_explicit(&e->devs_let_go, 1, memory_order_relaxed);
	if (!e->turn_waiters)
		pd_sched_dispatch_locked(e);
}

/* Is a device being submitted to by a helper that claimed it? */
static bool helper_holds_a_device_locked(const struct pd_engine *e)
{
	uint32_t d;

	for (d = 0; d < e->ndev; d++)
		if (e->dev[d].job && e->dev[d].claimed)
			return true;
	return false;
}

/*
 * The helper's short job found the device claimed by another helper
 * (another client's ring thread submitting its own job, 5-10 us on an
 * H200).  Left to the device's worker, the job would wait for the
 * worker's wake-up (12-14 us, p99 80-400 us on these VMs), and its
 * output for the completion thread's or the worker's: with two client
 * processes or more in one context, P1c's rate fell below one client's
 * (an H200, 2026-12-03: 100k/s alone, 60k/s for two, 24k/s for 16).
 * The helper has nothing better to do meanwhile (its client waits for
 * the output), so it waits its turn: it polls for a holder letting go
 * of a device (@devs_let_go, without the lock), then claims the first
 * job placeable, which may be another helper's (placement keeps the
 * policy's order), until none is queued, no helper holds a device, or
 * its time (PD_HELP_NS from @start) is up.  While helpers wait, a
 * holder that lets go leaves the queue to them (pd_dev_let_go_locked);
 * the last to leave without a claim places what is left on the
 * workers.  At most PD_TURN_WAITERS_MAX wait at once: on an H200
 * (2026-12-03, P1c, the same binary with and without waiting,
 * alternated three times) any number of waiters took two clients from
 * 46-55k to 76-85k invocations/s but 8 and 16 from 39-43k and 30-32k
 * to 37-41k and 28-31k, the waiters' polling keeping the holders and
 * the clients off the 16 CPUs.  Not with few CPUs (PD_FEW_CORES), where the poller would
 * keep the holder off its CPU, nor with cfg.no_turn_wait.  Locked;
 * drops the lock while it polls.  Returns the device claimed, or -1.
 */
static int wait_turn_locked(struct pd_engine *e, uint64_t start)
{
	uint64_t seen;
	int d = -1;

	pd_assert_locked(e);
	if (e->cfg.no_turn_wait || (e->few_cores && !e->cfg.turn_wait_few_cores) ||
	    e->turn_waiters >= PD_TURN_WAITERS_MAX || !e->nqueued ||
	    e->stopping || !helper_holds_a_device_locked(e))
		return -1;
	e->turn_waiters++;
	e->stats.turn_waits++;
	for (;;) {
		seen = atomic_load_explicit(&e->devs_let_go,
					    memory_order_relaxed);
		pd_engine_unlock(e);
		while (atomic_load_explicit(&e->devs_let_go,
					    memory_order_relaxed) == seen &&
		       pd_now_ns() - start < PD_HELP_NS)
			sched_yield();
		pd_engine_lock(e);
		if (!e->nqueued || e->stopping)
			break;
		d = pd_sched_dispatch_claim_locked(e);
		if (d >= 0 || pd_now_ns() - start >= PD_HELP_NS ||
		    !helper_holds_a_device_locked(e))
			break;
	}
	if (!--e->turn_waiters && d < 0)
		pd_sched_dispatch_locked(e);
	if (d >= 0)
		e->stats.turn_claims++;
	return d;
}

static bool help_loop(struct pd_engine *e, struct pd_wake_defer *defer,
		      bool (*more)(struct pd_wake_defer *defer));
static bool take_for_workers(struct pd_engine *e,
			     struct pd_wake_defer *defer, int n);

/*
 * Take what is ready without blocking (at most PD_HELP_TAKE
 * invocations) and make its jobs, queued for placement.  Returns the
 * invocations taken, 0 when none was ready, -EBUSY when the queue is
 * full or the engine stops (the taker's to take: it waits for room),
 * other -errno when the take failed (the taker meets it and logs it).
 */
static int take_ready(struct pd_engine *e, struct pd_wake_defer *defer)
{
	struct ptask_invocation invs[PD_HELP_TAKE];
	/*
	 * Room for a whole segment (56 KiB of stack, 60 with the 64
	 * invocations; connection threads have 1 MiB, the engine's own
	 * threads the default 8): with PTASK_MAX_PORTS records a 100-deep
	 * chain came as four segments of 32 ptasks or fewer, four jobs a
	 * round.
	 */
	struct ptask_invocation_port ports[PTASK_TAKE_MAX_PORTS];
	struct ptask_exec_take take = {
		.size = sizeof(take),
		.flags = PTASK_NONBLOCK | pd_engine_take_flags(e) |
			 pd_engine_fuse_flag(e),
		.max_invocations = PD_HELP_TAKE,
		.max_ports = PTASK_TAKE_MAX_PORTS,
	};
	bool full;
	int err;

	pd_engine_lock(e);
	full = e->stopping || e->nqueued >= PD_QUEUE_MAX;
	/* A take ahead may carry what another job waits for (sched.c). */
	if (!full)
		e->taking++;
	pd_engine_unlock(e);
	if (full)
		return -EBUSY;
	err = e->src->ops->take(e->src, &take, invs, ports, defer);
	/* A module that predates a flag: without it, then. */
	while (err == -EINVAL && pd_engine_take_refused(e, take.flags)) {
		take.flags &= ~(take.flags & PTASK_TAKE_FUSE ?
				PTASK_TAKE_FUSE : PTASK_TAKE_AHEAD);
		err = e->src->ops->take(e->src, &take, invs, ports, defer);
	}
	if (!err)
		pd_jobs_make(e, &take, invs, ports, defer);
	pd_engine_lock(e);
	/* Jobs dispatch left waiting for this take may go now. */
	if (!--e->taking && e->taking_waits) {
		e->taking_waits = false;
		pd_sched_dispatch_locked(e);
	}
	pd_engine_unlock(e);
	if (err == -EAGAIN)
		return 0;
	if (err)
		return err;
	pd_trace(PD_TR_TAKEN);
	return (int)take.n_invocations;
}

/**
 * pd_engine_take_made() - an engine thread takes the work it made ready
 * @e: the engine
 * @defer: the thread's record (a device's worker: its device's; the
 *	completion thread: the engine's)
 *
 * A job this thread completed, or completed ahead, made downstream
 * invocations ready, and the source held the taker's wake-up back in
 * @defer.  Waking the taker would cost a context switch, and the taker
 * would wake a worker: two hand-offs on the critical path of every hop
 * of a chain (about 12-14 us each where a thread really sleeps).  So
 * the thread takes that work itself, without blocking, and places it:
 * the next hop of a chain lands on the worker that ran the last one,
 * which then submits it without sleeping.  Whatever it does not take is
 * the taker's, woken for it.  No lock held.
 */
void pd_engine_take_made(struct pd_engine *e, struct pd_wake_defer *defer)
{
	int n, rounds = 0;

	if (!pd_wake_defer_take(defer))
		return;
	do {
		n = take_ready(e, defer);
		if (n > 0) {
			pd_engine_lock(e);
			pd_sched_dispatch_locked(e);
			pd_engine_unlock(e);
		}
		/* A full take may have left more (a fan-out). */
	} while (n == PD_HELP_TAKE && ++rounds < PD_TAKE_MADE_ROUNDS);
	/*
	 * Left over, refused (the queue is full: the taker waits for room;
	 * or the take failed: it logs it), or made ready meanwhile (held
	 * back again): the taker's.
	 */
	if ((n < 0 || n == PD_HELP_TAKE || pd_wake_defer_take(defer)) &&
	    e->src->ops->wake)
		e->src->ops->wake(e->src);
}

/**
 * pd_engine_help() - a source's thread that made work ready runs it
 * @e: the engine
 * @defer: the executor wake-ups the source held back for this thread;
 *	every source call made here on its behalf carries it
 * @more: after a job it ran, did that make more work ready (a wake-up
 *	held back in @defer since the last call)?  Saves a take that would
 *	find nothing.
 *
 * The thread that served a call which made ptasks ready (user mode: a
 * client's connection, after answering a push) calls this instead of
 * waking the taker.  It takes what is ready without blocking, places it
 * by policy, and runs a short job placed on an idle device itself
 * (pd_help_can_claim_locked) instead of waking the device's worker:
 * the taker and the worker are two thread hand-offs, each a wake-up on
 * the critical path of every invocation.  It goes on while its jobs
 * make more work ready (a chain), for PD_HELP_NS at most; whatever it
 * does not run goes to the workers as usual.
 *
 * Return: true when ready work may be left that nobody will take (the
 * caller wakes the taker then), false when a take found nothing more.
 */
bool pd_engine_help(struct pd_engine *e, struct pd_wake_defer *defer,
		    bool (*more)(struct pd_wake_defer *defer))
{
	bool left = help_loop(e, defer, more);
	uint32_t d;

	/* Jobs it completed ahead and left in flight: the thread's now. */
	pd_engine_lock(e);
	if (e->ninflight)
		pd_completer_kick_locked(e);
	/*
	 * Launches it held with nothing to follow them (a hop whose next
	 * one waits for another input, or a chain longer than a device's
	 * slots): the device's worker flushes them (worker.c); a job
	 * placed on the device meanwhile continues or flushes them itself.
	 */
	for (d = 0; d < e->ndev; d++)
		if (e->dev[d].held && !e->dev[d].job)
			pthread_cond_signal(&e->dev[d].cond);
	pd_engine_unlock(e);
	pd_trace(PD_TR_HELPED);
	return left;
}

/* pd_engine_help's work, until nothing more is ready or its time is up. */
static bool help_loop(struct pd_engine *e, struct pd_wake_defer *defer,
		      bool (*more)(struct pd_wake_defer *defer))
{
	uint64_t start = pd_now_ns();

	for (;;) {
		bool claim;
		int d, n;

		n = take_ready(e, defer);
		if (!n)
			return false;
		if (n < 0)
			return true;	/* the taker's: room, or its error */
		claim = pd_now_ns() - start < PD_HELP_NS;
		pd_engine_lock(e);
		d = claim ? pd_sched_dispatch_claim_locked(e) : -1;
		if (!claim)
			pd_sched_dispatch_locked(e);
		else if (d < 0 && n < PD_HELP_TAKE)
			d = wait_turn_locked(e, start);
		pd_engine_unlock(e);
		pd_trace(PD_TR_PLACED);
		/* Not ours to run: the rest of a batch is the workers'. */
		if (d < 0)
			return take_for_workers(e, defer, n);
		run_claimed(&e->dev[d], defer, start);
		/* A full take may have left more (a batch of pushes). */
		if (n < PD_HELP_TAKE && !more(defer))
			return false;
	}
}

/*
 * The helper took @n invocations it will not run itself (the devices
 * are busy: a batch of pushes made many ready at once).  Taking the
 * rest of them here and placing them on the workers saves waking the
 * taker for it, which would cost a sleeping thread's wake-up before the
 * workers get more work; at most PD_HELP_BATCH_ROUNDS more takes.
 * Returns true when work may be left for the taker.
 */
static bool take_for_workers(struct pd_engine *e,
			     struct pd_wake_defer *defer, int n)
{
	int rounds = 0;

	if (n < PD_HELP_TAKE)
		return true;	/* as before batches: the taker looks */
	while (n == PD_HELP_TAKE && rounds++ < PD_HELP_BATCH_ROUNDS) {
		n = take_ready(e, defer);
		if (n <= 0)
			break;
		pd_engine_lock(e);
		pd_sched_dispatch_locked(e);
		pd_engine_unlock(e);
	}
	return n < 0 || n == PD_HELP_TAKE;
}
