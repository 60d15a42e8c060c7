// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * worker.c - one thread per device, and a job's submission.  The worker
 * submits the jobs placed on its device, one after another (a short job
 * a helper claimed is submitted on the helper's thread instead, the same
 * way: help.c); between jobs and while the device has none it tidies up
 * its spaces (space.c); at stop it closes them.  A job's submission:
 *
 *  1. the space of the job's owner (per-client isolation) or the shared
 *     one, and the ptask's kernel loaded in it (space.c);
 *  2. its lane, inputs made valid there, outputs made, the launch
 *     description (prepare.c);
 *  3. the launch; then the D2H copies of what clients will pull
 *     (complete.c); then a fence on its lane;
 *  4. the job waits in its lane's in-flight list; when its fence passed,
 *     whoever saw it completes it: commit and EXEC_COMPLETE, or the
 *     invocation failed with the error (completer.c, complete.c).
 *
 * A short job submitted alone (nothing in flight on the device, nothing
 * waiting for placement) is waited for and completed by the worker
 * itself (waits_for), as a
 * helper does with its jobs: one invocation at a time then needs no
 * hand-off to the completion thread.  What the worker's jobs make ready
 * when they complete, or complete ahead, it takes and places itself
 * (pd_engine_take_made): the next hop of a chain is then its own job,
 * submitted without a wake-up.
 *
 * Held launches: a job that will be completed ahead (engine_priv.h) is
 * the hop of a chain whose next hop comes at once, so its launch is
 * made with pd_launch.hold and its fence with fence_defer: the backend
 * keeps both, and the hops that follow on the same lane join them, until
 * a job that is not completed ahead (the chain's last hop, whose output
 * a client reads) fences for real, which queues them all, replayed as
 * one CUDA graph once the chain's shape repeats (backend/held.h).  The
 * device remembers the held lane (dev->held); every thread that holds
 * the device flushes it unless its job continues it on the same lane:
 * the next job's holder before its launch, the worker before it sleeps,
 * and a helper that stops helping wakes the worker for it (help.c).
 * Nobody waits for a held job's fence (fence_wait would say -EDEADLK):
 * jobs completed ahead are never waited for, and a job whose ahead
 * completion failed is flushed at once.  A held job is not due (the
 * completion thread does not spin for it) and its run starts at the
 * flush, which sets its launch_ns and due_ns (so the averages that
 * decide what a helper runs and when a fence is expected do not count
 * the holding).  At most PD_HOLD_BATCH are held at once.  Only untimed
 * launches are held (PTSched's exact times need events around each
 * launch), and only with one device (pd_engine_may_hold).
 *
 * A job that fails once work is queued on its lane (a failed copy or
 * launch) is still fenced, and fails when its fence passed: the queued
 * work uses its buffers, which its pins keep until then.
 */
#include "daemon/backend/host.h"
#include "daemon/engine/engine_priv.h"
#include "daemon/trace.h"

/* Weight of a new sample in struct pd_ptask_info.avg_wall_ns. */
#define PD_WALL_EMA_WEIGHT	0.125

/*
 * When a job submitted now on @lane should complete (wall ns): after the
 * lane's last job, the shorter of its ptask's average wall time and its
 * average device time (scaled to wall time).  The wall time where it is
 * shorter: a cpu launch split over two lanes has about twice as much
 * device time as wall time, and expecting its fence that late left the
 * completion thread napping past it (up to PD_COMPLETE_NAP_MAX_NS at a
 * time) instead of spinning for it.  The device time where that is
 * shorter: a wall time is measured to when the fence was *seen*, so an
 * expectation that was late made the next one later (a 4 MiB chain on
 * an H200 took 90-100 us longer a round with the wall time alone).
 * Until a fence of the ptask was seen, its device time alone.
 */
static uint64_t due_locked(struct pd_engine *e, struct pd_job *job,
			   struct pd_lane *lane, uint64_t now)
{
	const struct pd_ptask_info *info = job->info;
	double scale = e->be->wall_per_gpu_ns > 0 ? e->be->wall_per_gpu_ns :
						   1.0;
	double dev_run = info->runs ? info->avg_run_ns * scale : 0.0;
	double run = info->walls && (!info->runs ||
				     info->avg_wall_ns < dev_run) ?
		     info->avg_wall_ns : dev_run;
	uint64_t from = lane->due_ns > now ? lane->due_ns : now;

	pd_assert_locked(e);
	return from + (uint64_t)(run * pd_job_runs(job));
}

/**
 * pd_job_fence_seen_locked() - @job's fence was seen to pass: learn its
 *	wall time for due_locked
 * @e: the engine
 * @job: the job, its fence just seen (by a poll or its waiter)
 * @lane: its lane
 * @now: when it was seen
 * @first_look: by the completion thread's first pass after it slept
 *	until a fence was nearly due: when it meant to look (0: not so)
 *
 * Its run started at its launch, or when the fence of the job before it
 * on @lane was seen, whichever is later; it ended no later than @now.
 * The completion thread polls at least every PD_COMPLETE_NAP_MAX_NS
 * while jobs are in flight, so a fence is seen about a nap after it
 * passed at worst, however wrong the expectation was: the average is
 * late by a fraction of a nap, and a wrong one cannot feed itself.
 */
void pd_job_fence_seen_locked(struct pd_engine *e, struct pd_job *job,
			      struct pd_lane *lane, uint64_t now,
			      uint64_t first_look)
{
	struct pd_ptask_info *info = job->info;
	uint64_t start = job->launch_ns > lane->seen_ns ? job->launch_ns :
			 lane->seen_ns;
	double wall;

	pd_assert_locked(e);
	lane->seen_ns = now;
	if (!job->launch_ns || job->err || now < start)
		return;
	/*
	 * Found passed at the completion thread's first look after a
	 * sleep, the fence passed before it meant to look, or while its
	 * sleep overshot (tens of microseconds on these VMs): @now bounds
	 * the run from above only.  Learnt as it is, a late expectation fed
	 * itself: the thread slept until the fence was nearly due, overslept,
	 * found it passed, and learnt when it woke (an H200, 2026-11-27: a
	 * 30-deep segment, slow in its first runs, then 300-370 us a round
	 * for about 30 us of work, for good).  So the time it meant to look
	 * is learnt, which is earlier than the average by the thread's
	 * margin (PD_COMPLETE_SPIN_NS): a late expectation shrinks until the
	 * thread looks before the fence passes.  The job's untimed device
	 * time, an estimate up to the same look, is not learnt
	 * (count_locked).
	 */
	if (first_look) {
		job->seen_late = true;
		/* it meant to look before the job was launched: no sample */
		if (first_look <= start)
			return;
		if (first_look < now)
			now = first_look;
	}
	/* a batch's: each member's share */
	wall = (double)(now - start) / pd_job_runs(job);
	info->avg_wall_ns = info->walls ? info->avg_wall_ns +
			    PD_WALL_EMA_WEIGHT * (wall - info->avg_wall_ns) : wall;
	info->walls++;
}

/* Log where a job's time went, for -vv: the engine's share. */
static void log_submit(struct pd_device *dev, struct pd_job *job,
		       uint64_t t0)
{
	struct pd_engine *e = dev->e;

	pd_log_debug("engine: %s: ptask %u: %llu us to submit (%llu allocating, %llu mapping/creating, %llu queueing copies), lane %u",
		     e->be->info[dev->index].name, job->inv.ptask,
		     (unsigned long long)(pd_now_ns() - t0) / 1000,
		     (unsigned long long)job->alloc_ns / 1000,
		     (unsigned long long)job->source_ns / 1000,
		     (unsigned long long)job->copy_ns / 1000, job->lane);
}

/*
 * Must @job's launch be timed exactly?  Only when another process used
 * @dev within PD_CONTEND_NS: PTSched then weighs the two against each
 * other by these times.  A device one process has to itself gets an
 * estimate (pd_launch.untimed), which spares it the timing events.
 * The device's holder alone calls this (dev->self), so the fields need
 * no lock.
 */
static bool launch_timed(struct pd_device *dev, const struct pd_job *job,
			 uint64_t now)
{
	uint32_t owner = (uint32_t)job->inv.owner_pid;

	if (owner != dev->last_owner) {
		if (dev->last_owner)
			dev->mixed_ns = now;
		dev->last_owner = owner;
	}
	return dev->mixed_ns && now - dev->mixed_ns < PD_CONTEND_NS;
}

/*
 * Does @job copy (inputs queued before its launch: job->copy_ns; or a
 * client's output copied back after it, not written in place)?  An
 * untimed launch's estimate runs from its submission to its fence, so
 * it would count the copies as device time: the engine's averages would
 * then take a 4 MiB round trip for a long kernel (no helper runs it, the
 * completion thread expects it late), measured on an H200 at 1.2 ms
 * instead of 0.29.  Such jobs are timed; the events cost little beside
 * their copies.
 */
static bool job_copies(const struct pd_job *job)
{
	uint32_t i;

	if (job->copy_ns)
		return true;
	for (i = 0; i < job->inv.n_ports; i++) {
		const struct ptask_invocation_port *p = &job->ports[i];

		if (p->kind == PTASK_PORT_OUTPUT &&
		    (p->flags & PTASK_INVP_TO_CLIENT) && !job->jp[i].inplace)
			return true;
	}
	return false;
}

/*
 * Is @job's launch timed, given that it copies (job_copies) and that
 * another process used the device lately (@contended, launch_timed)?
 *
 * Copies: not when its ptask's kernels are long (PD_TIMED_COPIES_MAX_NS):
 * timing events around the launches of lanes that overlap cost the
 * overlap itself.  On an H200 (2026-11-27) gemm's pipeline of three
 * n = 4096 chains (16 ms sgemms, 64 MiB copies) ran at 55 ms a chain
 * with its launches timed and 32.7 ms untimed, against 37.1 for the
 * hand-coded chain one at a time, and at n = 1024 (0.3 ms sgemms) at
 * 0.67-0.68 against 0.55-0.56 ms.  Short kernels stay timed: untimed, a
 * 4 MiB round trip of an empty kernel took 350 us instead of 225-285
 * (the estimate counts the copies, and the completion thread expects the
 * fence late), while a helper or waiter decides by these averages
 * whether to wait for a job itself.  A ptask not yet run is timed: its
 * first time decides.  (The untimed figures are of a build whose limit
 * was read from the environment.)
 *
 * Contention: PTSched weighs the processes by what each is charged, so
 * a long kernel's launch is always timed, and so was every short one's:
 * the two cuEventRecord calls then cost the device's holder 5-6 us an
 * invocation (P1c on an H200, 2026-12-03, two client processes: from
 * prepared to launched 8.6 us at the median against 2.5 with one), on
 * the one thread that submits to the device.  A short kernel's device
 * time varies little from one run to the next, so its launches are
 * timed by sample as well, and a sampled-out one is charged its ptask's
 * average (pd_job.estimated_contended, complete.c) where the backend's
 * untimed time is an estimate that would count the other processes'
 * work (pd_backend.untimed_estimated).  PTASKD_TIME_CONTENDED=1 times
 * every contended launch, as before (for comparison).
 *
 * The sample: the first PD_TIMED_COPIES_FIRST runs of a ptask, then one
 * in PD_TIMED_COPIES_EVERY.  The others' estimates are kept out of the
 * ptask's averages (pd_job.estimated_copies and estimated_contended), so
 * the completion thread's expectations, the helpers' idea of a short job
 * and the charge of the sampled-out runs come from the timed ones alone.
 * Profiled on an H200 (2026-11-27, gemm's pipelined chains at n = 256),
 * the two cuEventRecord calls of a timed launch cost a device's worker
 * 4.4 us an invocation, 11% of its CPU.
 */
static bool launch_sampled_timed_locked(struct pd_engine *e,
					const struct pd_job *job,
					bool copies, bool contended)
{
	struct pd_ptask_info *info = job->info;
	bool long_kernels = info->runs &&
			    info->avg_run_ns > (double)PD_TIMED_COPIES_MAX_NS;

	pd_assert_locked(e);
	if (contended && (long_kernels || e->cfg.time_contended))
		return true;
	if ((!copies && !contended) || long_kernels)
		return false;
	if (info->runs < PD_TIMED_COPIES_FIRST ||
	    ++info->untimed_streak >= PD_TIMED_COPIES_EVERY) {
		info->untimed_streak = 0;
		return true;
	}
	return false;
}

int pd_dev_flush_held(struct pd_device *dev)
{
	struct pd_engine *e = dev->e;
	struct pd_space *space;
	uint32_t lane;
	int ret;

	struct ptask_list *pos;
	uint64_t now;

	pd_engine_lock(e);
	if (!dev->held) {
		pd_engine_unlock(e);
		return 0;
	}
	dev->held = false;
	space = dev->held_space;
	lane = dev->held_lane;
	pd_engine_unlock(e);
	now = pd_now_ns();
	ret = e->be->ops->flush(e->be, space->be_space, lane);
	pd_engine_lock(e);
	if (ret >= 0)
		e->stats.flushes++;
	if (ret > 0)
		e->stats.replays++;
	/*
	 * Their runs start now: the wall times the completion thread learns
	 * (due_locked) and the helpers' idea of a short job must not count
	 * the time they were held.
	 */
	ptask_list_for_each(pos, &space->lanes[lane].jobs) {
		struct pd_job *job = ptask_list_entry(pos, struct pd_job, lnode);
		struct pd_lane *ln = &space->lanes[lane];

		if (job->held) {
			job->held = false;
			job->launch_ns = now;
			job->due_ns = due_locked(e, job, ln, now);
			ln->due_ns = job->due_ns;
		}
	}
	/* due now: the completion thread ignored them while held */
	pd_completer_kick_locked(e);
	pd_engine_unlock(e);
	/* the space failed: its held jobs fail when their fences are polled */
	if (ret < 0)
		pd_log_err("engine: %s: flushing held launches: %d",
			   e->be->info[dev->index].name, ret);
	return ret;
}

/* @job's launch joins (or starts) the ones held on @dev.  Locked. */
static void held_join_locked(struct pd_device *dev, const struct pd_job *job)
{
	pd_assert_locked(dev->e);
	if (!dev->held)
		dev->held_n = 0;
	dev->held = true;
	dev->held_space = job->space;
	dev->held_lane = job->lane;
	dev->held_n++;
	dev->e->stats.held++;
}

/* Does @job run on the lane @dev holds launches on?  Locked. */
static bool held_here_locked(const struct pd_device *dev,
			     const struct pd_job *job)
{
	pd_assert_locked(dev->e);
	return dev->held && dev->held_space == job->space &&
	       dev->held_lane == job->lane;
}

/*
 * Hold @job's launch?  Untimed (the caller checks), the engine may hold,
 * and the job either will be completed ahead and is a chain's hop (a GPU
 * ptask reads an output: more follow at once) or continues the launches
 * held on its own lane (the chain's last hop joins them, so its real
 * fence queues them all at once).  An invocation completed ahead whose
 * outputs clients alone pull (its ptask's next one waits behind it) is
 * no hop: the next launch comes only after a take.  Locked.
 */
static bool hold_launch_locked(struct pd_device *dev, const struct pd_job *job,
			       bool *ahead)
{
	struct pd_engine *e = dev->e;
	uint32_t i;

	pd_assert_locked(e);
	*ahead = false;
	if (!pd_engine_may_hold(e))
		return false;
	*ahead = pd_job_can_ahead_locked(e, job, false);
	/*
	 * A stream's invocation taken ahead with more queued behind it
	 * (the same take brought them): their launches go together too.
	 */
	if (*ahead && job->taken_ahead && e->nqueued)
		return true;
	/* a sink (no output a GPU ptask reads) is no hop */
	for (i = 0; *ahead && i < job->inv.n_ports; i++)
		if (job->ports[i].kind == PTASK_PORT_OUTPUT &&
		    !(job->ports[i].flags & PTASK_INVP_TO_CLIENT))
			break;
	if (*ahead && i == job->inv.n_ports)
		return held_here_locked(dev, job);
	return *ahead || held_here_locked(dev, job);
}

/**
 * pd_job_run() - submit @job on @dev
 * @dev: the device placement gave it (on the thread holding it)
 * @job: the job
 * @defer: the held-back wake-ups of the helper that claimed it
 *	(pd_engine_help), NULL on the worker
 * @wait: the caller waits for the job's fence and completes it itself
 *	(job->waiter): nobody else polls it meanwhile
 *
 * Once its fence is queued, a job whose outputs only GPU ptasks read is
 * completed ahead (complete.c: pd_job_ahead), before it joins its lane;
 * nobody waits for its fence then, not even with @wait.
 *
 * No lock held.  Return: true when the caller must wait for @job's fence
 * and complete it (@wait, and it is in flight on its lane, dev->ninflight
 * counting it, not completed ahead); false when it is in flight for the
 * completion thread, or was completed already (it never reached a
 * space, or no fence could be queued: then the space was synchronized
 * first) and freed.  Only with true may the caller touch @job again.
 */
bool pd_job_run(struct pd_device *dev, struct pd_job *job,
		struct pd_wake_defer *defer, bool wait)
{
	struct pd_engine *e = dev->e;
	const struct pd_backend_ops *ops = e->be->ops;
	struct pd_launch launch = { 0 };
	uint64_t t0 = pd_debug_now_ns(), ticket = 0, now;
	struct pd_lane *lane;
	void *kernel = NULL;
	bool ahead, lone, hold = false, will_ahead = false, held_other;
	uint32_t m;
	int err;

	err = pd_space_get(dev, pd_sched_owner(e, job), &job->space);
	if (!err && pd_job_is_segment(job))
		err = pd_space_kernels_get(dev, job->space, job->members,
					   job->nmembers);
	else if (!err)
		err = pd_space_kernel_get(dev, job->space, job->info, &kernel);
	/* a batch's members all run its ptask's */
	for (m = 0; !err && job->batch && m < job->nmembers; m++)
		job->members[m].kernel = kernel;
	if (pd_job_is_segment(job))
		kernel = job->members[0].kernel;
	if (!err)
		err = pd_job_prepare(dev, job, &launch, defer);
	pd_trace(PD_TR_PREPARED);
	/* a failure noted after this is the accelerator's word on the job */
	job->error_seq = pd_backend_error_seq();
	job->error_seq_set = true;
	if (!err) {
		bool contended, copies = job_copies(job);

		job->launch_ns = pd_now_ns();
		contended = launch_timed(dev, job, job->launch_ns);
		pd_engine_lock(e);
		launch.untimed = !launch_sampled_timed_locked(e, job, copies,
							      contended);
		job->untimed = launch.untimed;
		job->estimated_copies = launch.untimed && copies;
		job->estimated_contended = launch.untimed && contended;
		e->stats.contended += contended;
		e->stats.contended_untimed += job->estimated_contended;
		pd_job_link_upstream_locked(e, job);
		/*
		 * A segment's or a batch's launches go together, then its
		 * fence: batches of one size replay as one graph, patched
		 * where their datablocks differ (engine.c, "Batches").
		 * Not under contention: another process's work would flush
		 * them at once (held_other).
		 */
		if (launch.untimed && !contended)
			hold = job->nmembers > 1 ? pd_engine_may_hold(e) :
			       hold_launch_locked(dev, job, &will_ahead);
		/* launches held elsewhere, or that this one does not join */
		held_other = dev->held && (!hold || !held_here_locked(dev, job));
		if (hold && !held_other)
			held_join_locked(dev, job);
		pd_engine_unlock(e);
		if (held_other) {
			pd_dev_flush_held(dev);
			if (hold) {
				pd_engine_lock(e);
				held_join_locked(dev, job);
				pd_engine_unlock(e);
			}
		}
		launch.hold = hold;
		err = ops->launch(e->be, job->space->be_space, job->lane,
				  kernel, &launch);
		/* the members, one behind the other on its lane */
		for (m = 1; !err && m < job->nmembers; m++) {
			pd_job_launch_desc(job, m, &launch);
			err = ops->launch(e->be, job->space->be_space,
					  job->lane, job->members[m].kernel,
					  &launch);
		}
		pd_trace(PD_TR_LAUNCHED);
	}
	if (!err)
		err = pd_job_after_launch(dev, job);
	job->err = err;
	if (!job->space) {
		pd_job_finish(dev, job, err, 0, 0, defer);
		return false;
	}
	/*
	 * The chain's last hop: its launch joined the held ones, all go now.
	 * A launch that failed there (its error shows only now) fails this
	 * job; the held hops before it fail through their fences.
	 */
	if (hold && (!will_ahead || job->err)) {
		job->launch_ns = pd_now_ns();
		job->after_held = true;
		err = pd_dev_flush_held(dev);
		if (err < 0 && !job->err)
			job->err = err;
	}
	job->held = hold && will_ahead && !job->err;
	/* a hop completed ahead leaves its mark held with its launch */
	if (hold && will_ahead && !job->err)
		err = ops->fence_defer(e->be, job->space->be_space, job->lane,
				       &ticket);
	else
		err = ops->fence(e->be, job->space->be_space, job->lane,
				 &ticket);
	if (hold && (err || !will_ahead || job->err)) {
		/* the real fence (or the failure) flushed the lane */
		pd_engine_lock(e);
		dev->held = false;
		pd_engine_unlock(e);
		will_ahead = false;
	}
	if (err) {
		/* No fence: wait for the space, then complete at once. */
		pd_log_err("engine: %s: fence: %d", e->be->info[dev->index].name,
			   err);
		ops->sync(e->be, job->space->be_space, NULL);
		pd_job_finish(dev, job, job->err ? job->err : err, 0, 0,
			      defer);
		return false;
	}
	pd_trace(PD_TR_FENCED);
	now = pd_now_ns();
	if (pd_log_level >= PD_LOG_DEBUG)
		log_submit(dev, job, t0);
	pd_engine_lock(e);
	job->ticket = ticket;
	job->submit_ns = now;
	pd_job_mark_views_locked(e, job);
	ahead = pd_job_can_ahead_locked(e, job, wait);
	/* ahead only because this thread settles it: it still waits */
	lone = ahead && wait && !pd_job_can_ahead_locked(e, job, false);
	pd_engine_unlock(e);
	/* Before it joins its lane: nobody settles it before this returns. */
	if (ahead)
		pd_job_ahead(dev, job, defer);
	/*
	 * Held, yet not completed ahead: whoever waits for it needs it.  A
	 * batch of PD_HOLD_BATCH goes too: the device starts on it.
	 */
	if (will_ahead && (!job->ahead || dev->held_n >= PD_HOLD_BATCH)) {
		/* not on its lane yet: the flush cannot start its run */
		job->held = false;
		job->launch_ns = pd_now_ns();
		pd_dev_flush_held(dev);
	}
	pd_engine_lock(e);
	/*
	 * Completed ahead: the next hop is taken now, not after the fence;
	 * a lone one's pull waits for the settle, which this thread makes.
	 */
	if (job->ahead && !lone)
		wait = false;
	job->waiter = wait;
	lane = &job->space->lanes[job->lane];
	/* held: not due before its flush (which sets it), so not polled */
	if (job->held) {
		job->due_ns = UINT64_MAX;
	} else {
		job->due_ns = due_locked(e, job, lane, now);
		lane->due_ns = job->due_ns;
	}
	ptask_list_add_tail(&job->lnode, &lane->jobs);
	lane->njobs++;
	job->space->ninflight++;
	dev->ninflight++;
	e->ninflight++;
	if (dev->ninflight > e->stats.inflight_max)
		e->stats.inflight_max = dev->ninflight;
	/*
	 * A job its submitter waits for is nobody else's to poll.  With
	 * few cores (PD_FEW_CORES), neither is one a helper (it claimed
	 * @dev) completed ahead, yet: the helper goes on down the chain,
	 * waits for its last hop and reaps this lane with it, and kicks the
	 * completion thread when it stops helping (pd_engine_help), so that
	 * thread does not spin beside it.
	 */
	if (!wait && !job->held && !(job->ahead && dev->claimed && e->few_cores))
		pd_completer_kick_due_locked(e, job->due_ns);
	pd_engine_unlock(e);
	pd_trace(PD_TR_QUEUED);
	return wait;
}

/*
 * Does the worker wait for @job's fence itself once it submitted it?
 * When the job is short (as a helper's: PD_INLINE_RUN_NS) and alone:
 * nothing in flight on @dev and nothing waiting for placement.  One
 * invocation at a time (a chain) then completes on one thread, with no
 * hand-off to the completion thread, while jobs that come in bursts or
 * overlap are submitted back to back, pipelined.
 */
static bool waits_for(struct pd_engine *e, const struct pd_device *dev,
		      const struct pd_job *job)
{
	pd_assert_locked(e);
	return !e->nqueued && !dev->ninflight && job->info->runs &&
	       pd_job_expected_run_ns(job) <= pd_inline_run_ns(job);
}

/*
 * Write back long-idle device-only data and close idle spaces, at most
 * every half PD_WRITEBEHIND_NS.  Stops early when a job is placed, which
 * then waits for the worker (dev->tidying: no helper claims it).
 */
static void tidy_locked(struct pd_device *dev)
{
	uint64_t now = pd_now_ns();

	dev->self = pthread_self();
	dev->tidying = true;
	dev->tidy_ns = now + PD_WRITEBEHIND_NS / 2;
	pd_space_writebehind_locked(dev, now);
	pd_space_close_idle_locked(dev, now);
	dev->tidying = false;
}

/**
 * pd_worker_main() - a device's worker thread
 * @arg: its struct pd_device
 *
 * Submits the jobs placed on the device; when it has none for a while,
 * writes back long-idle device-only data and closes idle clients'
 * spaces; at exit, frees the device's spaces.
 */
void *pd_worker_main(void *arg)
{
	struct pd_device *dev = arg;
	struct pd_engine *e = dev->e;

	pd_engine_lock(e);
	dev->self = pthread_self();
	for (;;) {
		struct pd_job *job = dev->job;

		/* A claimed job is its helper's: the device is not ours. */
		if (job && !dev->claimed) {
			bool wait = waits_for(e, dev, job), mine;

			dev->self = pthread_self();
			pd_engine_unlock(e);
			mine = pd_job_run(dev, job, &dev->defer, wait);
			pd_engine_lock(e);
			dev->job = NULL;
			/* A busy device tidies up between jobs too. */
			if (pd_now_ns() >= dev->tidy_ns)
				tidy_locked(dev);
			pd_dev_let_go_locked(e);
			pthread_cond_broadcast(&e->idle_cond);
			if (mine)
				pd_job_wait_complete_locked(e, job, &dev->defer,
							    dev);
			/* What it made ready: the next hop is likely ours. */
			if (dev->defer.deferred) {
				pd_engine_unlock(e);
				pd_engine_take_made(e, &dev->defer);
				pd_engine_lock(e);
			}
			continue;
		}
		/* Nothing to continue them: held launches go now. */
		if (!job && dev->held) {
			dev->self = pthread_self();
			dev->tidying = true;
			pd_engine_unlock(e);
			pd_dev_flush_held(dev);
			pd_engine_lock(e);
			dev->tidying = false;
			continue;
		}
		if (e->exiting && !job)
			break;
		/* Between jobs: a ptask a client opened, made ready ahead. */
		if (!job && !e->stopping && pd_prewarm_one_locked(dev))
			continue;
		pd_engine_timedwait(e, &dev->cond,
				    pd_now_ns() + PD_WRITEBEHIND_NS / 2);
		if (!dev->job && !e->exiting && pd_now_ns() >= dev->tidy_ns)
			tidy_locked(dev);
	}
	dev->self = pthread_self();
	pd_space_close_all_locked(dev);
	pd_engine_unlock(e);
	return NULL;
}
