// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * completer.c - completing the jobs in flight (engine_priv.h,
 * "Pipelining") without a synchronize per job: the completion thread
 * polls the fence of the oldest job of every lane in flight and
 * completes the jobs whose fence passed, each lane's in order.
 *
 * One thread for the whole engine, not one per device: a fence poll is
 * a load from memory the device writes (cuda) or a lock and a compare
 * (sim, cpu), so one pass over every lane of every device costs little,
 * while a spinning thread per device would take a core each (the
 * development machines have two).
 *
 * When it polls: each job carries the time its fence is expected to
 * pass (worker.c: its ptask's average wall time, after the job before
 * it on its lane).  While a fence is due within PD_COMPLETE_SPIN_NS, or
 * late by less than that, the thread spins, yielding the core between
 * passes (a sleeping thread takes 12-14 us to wake on these VMs, more
 * than a short kernel); otherwise it sleeps until PD_COMPLETE_SPIN_NS
 * before the next fence is due, and while fences are late it naps
 * PD_COMPLETE_NAP_MIN_NS, doubling to PD_COMPLETE_NAP_MAX_NS.  With
 * nothing in flight it sleeps until a job is submitted, so an idle
 * ptaskd burns no CPU.
 *
 * Who completes: a helper that submitted a short job, or a worker that
 * submitted one alone (nothing else in flight or waiting), waits for that
 * job's fence itself (fence_wait) and completes it (help.c, worker.c):
 * one thread from submission to completion, the fastest for one
 * invocation at a time; while it waits the job is marked (struct
 * pd_job.waiter) and nobody polls it.
 * Whoever takes a job off its lane, under e->lock, completes it: exactly
 * once.  One thread at a time completes a lane's jobs (struct
 * pd_lane.finishing), so they complete in lane order.
 */
#include <sched.h>
#include <time.h>
#include "daemon/backend/host.h"
#include "daemon/engine/engine_priv.h"
#include "daemon/trace.h"

/**
 * pd_lane_reap_locked() - complete the jobs of a lane whose fence passed
 * @e: the engine
 * @space: the space
 * @lane: its lane
 * @defer: the helper's held-back wake-ups (pd_engine_help), or NULL
 *
 * From the oldest job in flight on the lane: poll its fence (unless its
 * helper saw it pass), and complete it when it passed, then the next,
 * until one has not passed, is waited for by its helper, or the lane is
 * empty.  Nothing when another thread completes this lane's jobs now
 * (that one goes on to the jobs that passed since).  Locked on entry and
 * exit; the lock is dropped around each completion, so @space may be
 * closed once this returns having completed its last job.
 *
 * Return: the jobs completed.
 */
/*
 * The completion thread is in its first pass after it slept until a
 * fence was nearly due: when it meant to look again (0: not so).  A
 * fence it finds passed passed before that, or while the sleep
 * overshot (pd_job_fence_seen_locked).  Not after a nap for a late
 * fence: what it finds then is late, and learnt as such.
 */
static __thread uint64_t first_look;

uint32_t pd_lane_reap_locked(struct pd_engine *e, struct pd_space *space,
			     uint32_t lane, struct pd_wake_defer *defer)
{
	const struct pd_backend_ops *ops = e->be->ops;
	struct pd_lane *ln = &space->lanes[lane];
	struct pd_device *dev = space->dev;
	uint32_t n = 0;

	pd_assert_locked(e);
	if (ln->finishing)
		return 0;
	ln->finishing = true;
	while (!ptask_list_empty(&ln->jobs)) {
		struct pd_job *job = ptask_list_first(&ln->jobs, struct pd_job,
						      lnode);
		uint64_t gpu_ns = 0, now;
		int rc;

		if (!job->fenced) {
			if (job->waiter)
				break;
			rc = ops->fence_poll(e->be, space->be_space, lane,
					     job->ticket, &gpu_ns);
			if (!rc)
				break;
			job->fenced = true;
			job->gpu_ns = rc > 0 ? gpu_ns : 0;
			if (rc < 0 && !job->err)
				job->err = rc;
			pd_job_fence_seen_locked(e, job, ln, pd_now_ns(),
						 first_look);
			pd_trace(PD_TR_FENCE_SEEN);
		}
		/*
		 * What it read was written by jobs completed ahead: they are
		 * settled first (their failure is its failure).  The lock may
		 * be dropped; this lane is still ours (finishing).
		 */
		if (!pd_job_upstream_settled_locked(e, job, defer)) {
			pd_completer_kick_locked(e);
			break;
		}
		ptask_list_del(&job->lnode);
		ln->njobs--;
		now = pd_now_ns();
		pd_engine_unlock(e);
		pd_job_finish(dev, job, job->err, job->gpu_ns,
			      job->launch_ns ? now - job->launch_ns : 0,
			      defer);
		pd_trace(PD_TR_FINISHED);
		pd_engine_lock(e);
		space->ninflight--;
		dev->ninflight--;
		e->ninflight--;
		n++;
	}
	ln->finishing = false;
	if (n) {
		/* Free slots: more jobs may be placed; stop may be waiting. */
		pd_sched_dispatch_locked(e);
		pthread_cond_broadcast(&e->idle_cond);
	}
	return n;
}

/* A job was placed on @dev: a hint, read without the lock. */
static bool job_placed(const struct pd_device *dev)
{
	return dev && __atomic_load_n(&dev->job, __ATOMIC_RELAXED);
}

/*
 * Poll @job's fence until it passed, until @until, or (@yield_to) until a
 * job is placed on @yield_to.  Returns fence_poll's last result (0: not
 * passed).  No lock held.
 */
static int poll_until(struct pd_engine *e, struct pd_job *job, uint64_t until,
		      const struct pd_device *yield_to, uint64_t *gpu_ns)
{
	int rc;

	do {
		rc = e->be->ops->fence_poll(e->be, job->space->be_space,
					    job->lane, job->ticket, gpu_ns);
		if (rc || job_placed(yield_to))
			return rc;
	} while (pd_now_ns() < until);
	return 0;
}

/*
 * A worker's wait past its polling: sleep between polls, 5 us doubling to
 * 200 us (as cuda's fence_wait), until the fence passed or a job is
 * placed on @dev.  Returns fence_poll's last result (0: a job came).  No
 * lock held.
 */
static int sleep_poll(struct pd_engine *e, struct pd_job *job,
		      const struct pd_device *dev, uint64_t *gpu_ns)
{
	uint64_t nap = PD_WAIT_SLEEP_MIN_NS;
	int rc;

	for (;;) {
		struct timespec ts = {
			.tv_sec = 0, .tv_nsec = (long)nap,
		};

		rc = e->be->ops->fence_poll(e->be, job->space->be_space,
					    job->lane, job->ticket, gpu_ns);
		if (rc || job_placed(dev))
			return rc;
		nanosleep(&ts, NULL);
		if (nap < PD_WAIT_SLEEP_MAX_NS)
			nap *= 2;
	}
}

/**
 * pd_job_wait_complete_locked() - wait for @job's fence and complete it
 * @e: the engine
 * @job: a job in flight that its caller submitted with @wait
 *	(job->waiter: nobody else polls it)
 * @defer: the helper's held-back wake-ups, or NULL
 * @yield_to: the waiting worker's device, or NULL (a helper): the wait
 *	is given up when a job is placed on that device meanwhile
 *
 * fence_wait (on the cpu backend the waiting thread runs the lane's
 * work itself), then the job and the older ones of its lane are
 * completed, unless another thread completes that lane now (it then
 * completes this one too).
 *
 * A worker waits only for a short job submitted alone (worker.c,
 * waits_for), but the next invocation may come meanwhile: a pipelining
 * client pushes its next one while this one runs.  Blocked in
 * fence_wait, the worker would submit it only after this fence (gemm's
 * pipelined chains on an H200, 2026-11-27: 13% of the worker's CPU was
 * such waits).  So a worker polls until the job is due and a little
 * after (PD_FENCE_SPIN_NS; PD_WAIT_POLL_MAX_NS at most), then sleeps
 * between polls as fence_wait would (sleep_poll), and gives the job to
 * the completion thread as soon as a job is placed on its device.
 * (Handing a late job over at once instead was slower: a lone 4 MiB
 * round trip took 301-305 us against 217-225 on an H200, the completion
 * thread's wake-up added.)  Not where fence_wait runs the lane's work
 * (pd_backend.wait_runs_work).
 *
 * While it waits, the owner of @defer may do its own work there
 * (@defer->idle): a ring's releases, held back so that they run beside
 * the kernel instead of before the round's push (ring_server.c).
 *
 * Locked on entry and exit; dropped while waiting.  Return: true when
 * the job was completed (by this thread or the one reaping its lane),
 * false when it was left to the completion thread.
 */
bool pd_job_wait_complete_locked(struct pd_engine *e, struct pd_job *job,
				 struct pd_wake_defer *defer,
				 const struct pd_device *yield_to)
{
	struct pd_space *space = job->space;
	uint32_t lane = job->lane;
	uint64_t ticket = job->ticket, gpu_ns = 0, ahead_id;
	uint64_t until = job->due_ns;
	bool poll;
	int rc = 0;

	pd_assert_locked(e);
	PD_ASSERT(job->waiter && !job->fenced);
	if (e->be->wait_runs_work)
		yield_to = NULL;
	/*
	 * Poll until a little after the fence is due: fence_wait spins for
	 * PD_FENCE_SPIN_NS only, then sleeps, and a sleep on these machines
	 * overshoots by tens of us, which a chain of held launches replayed
	 * as one graph (tens of us of device time) paid at every round.  Only
	 * after such a batch, or for a worker: elsewhere the cpu backend's
	 * fence_wait runs the lane's work on the waiting thread, which
	 * polling would delay.
	 */
	poll = (job->after_held || yield_to) && until != UINT64_MAX;
	/*
	 * A lone invocation completed ahead whose fence this thread sees
	 * (no yield_to: it never hands the job over): its owner may answer
	 * the pull of its output when the fence passes, before the settle.
	 */
	ahead_id = !yield_to && job->ahead && !job->ahead_gone &&
		   !job->err && pd_job_runs(job) == 1 &&
		   !pd_job_is_segment(job) &&
		   pd_job_result_at_fence_locked(e, job) ? job->inv.id : 0;
	pd_engine_unlock(e);
	/*
	 * The owner's own work fits in the kernel's run (a ring's releases),
	 * unless this thread is the one that runs it (cpu: fence_wait).
	 */
	if (!defer || e->be->wait_runs_work)
		ahead_id = 0;
	if (defer && defer->idle && !e->be->wait_runs_work)
		defer->idle(defer->idle_arg, ahead_id, until);
	if (poll) {
		uint64_t now = pd_now_ns(), cap = now + PD_WAIT_POLL_MAX_NS;

		until += PD_FENCE_SPIN_NS;
		if (until > cap)
			until = cap;
		rc = poll_until(e, job, until, yield_to, &gpu_ns);
	}
	if (!rc && yield_to && !job_placed(yield_to))
		rc = sleep_poll(e, job, yield_to, &gpu_ns);
	if (!rc && yield_to) {
		/* a job to submit: this one is the completion thread's */
		pd_engine_lock(e);
		job->waiter = false;
		pd_completer_kick_locked(e);
		return false;
	}
	if (!rc)
		rc = e->be->ops->fence_wait(e->be, space->be_space, lane,
					    ticket, &gpu_ns);
	pd_trace(PD_TR_FENCE_SEEN);
	/* First thing: the client waiting for its output goes on. */
	if (ahead_id && defer->seen)
		defer->seen(defer->idle_arg, ahead_id, rc < 0 ? rc : 0);
	pd_engine_lock(e);
	job->fenced = true;
	job->waiter = false;
	job->gpu_ns = rc > 0 ? gpu_ns : 0;
	if (rc < 0 && !job->err)
		job->err = rc;
	pd_job_fence_seen_locked(e, job, &space->lanes[lane], pd_now_ns(),
				 0);
	pd_lane_reap_locked(e, space, lane, defer);
	return true;
}

void pd_completer_kick_locked(struct pd_engine *e)
{
	pd_assert_locked(e);
	if (e->completer_napping)
		pthread_cond_signal(&e->completer_cond);
}

/*
 * A stream of short jobs submitted one after another would wake the
 * completion thread once each (a futex call, 0.9 us of the submitter's
 * CPU an invocation measured on an H200), though it already sleeps
 * until an earlier job is due and then passes every lane.
 */
void pd_completer_kick_due_locked(struct pd_engine *e, uint64_t due_ns)
{
	pd_assert_locked(e);
	if (e->completer_napping && due_ns < e->completer_until)
		pthread_cond_signal(&e->completer_cond);
}

/*
 * One pass over every lane in flight: complete what passed.  Returns
 * the jobs completed, and in *@due the earliest time a fence not yet
 * seen is expected to pass (UINT64_MAX: none).  The pass starts over
 * after each lane that completed something, since spaces may have
 * closed meanwhile.
 */
static uint32_t pass_locked(struct pd_engine *e, uint64_t *due)
{
	uint32_t d, l, n = 0;

again:
	*due = UINT64_MAX;
	for (d = 0; d < e->ndev; d++) {
		struct pd_device *dev = &e->dev[d];
		struct ptask_list *pos;

		if (!dev->ninflight)
			continue;
		ptask_list_for_each(pos, &dev->spaces) {
			struct pd_space *s = ptask_list_entry(pos,
					struct pd_space, node);

			if (!s->ninflight)
				continue;
			for (l = 0; l < s->nlanes; l++) {
				struct pd_lane *ln = &s->lanes[l];
				struct pd_job *head;
				uint32_t done;

				if (ptask_list_empty(&ln->jobs))
					continue;
				done = pd_lane_reap_locked(e, s, l,
							   &e->completer_defer);
				if (done) {
					n += done;
					goto again;
				}
				if (ptask_list_empty(&ln->jobs))
					continue;
				head = ptask_list_first(&ln->jobs,
							struct pd_job, lnode);
				if (!head->waiter && head->due_ns < *due)
					*due = head->due_ns;
			}
		}
	}
	return n;
}

/**
 * pd_completer_main() - the completion thread
 * @arg: the engine
 *
 * Returns once the engine exits and nothing is in flight.
 */
void *pd_completer_main(void *arg)
{
	struct pd_engine *e = arg;
	uint64_t nap = PD_COMPLETE_NAP_MIN_NS, slept = 0;

	pd_engine_lock(e);
	for (;;) {
		uint64_t due, now;
		uint32_t done;

		if (!e->ninflight) {
			if (e->exiting)
				break;
			slept = 0;
			e->completer_napping = true;
			e->completer_until = UINT64_MAX;
			pd_engine_wait(e, &e->completer_cond);
			e->completer_napping = false;
			continue;
		}
		first_look = slept;
		done = pass_locked(e, &due);
		first_look = slept = 0;
		/*
		 * What it completed (or settled upstream of a job whose fence
		 * passed) made ready: placed from here, without the taker.
		 */
		if (e->completer_defer.deferred) {
			pd_engine_unlock(e);
			pd_engine_take_made(e, &e->completer_defer);
			pd_engine_lock(e);
		}
		if (done) {
			nap = PD_COMPLETE_NAP_MIN_NS;
			continue;
		}
		now = pd_now_ns();
		if (due != UINT64_MAX && due <= now + PD_COMPLETE_SPIN_NS &&
		    now <= due + PD_COMPLETE_SPIN_NS) {
			/* Due now: spin, letting others have the core. */
			pd_engine_unlock(e);
			sched_yield();
			pd_engine_lock(e);
			continue;
		}
		if (due != UINT64_MAX && due > now + PD_COMPLETE_SPIN_NS) {
			/* Early: sleep until it is nearly due (bounded). */
			uint64_t until = due - PD_COMPLETE_SPIN_NS;

			if (until > now + PD_COMPLETE_NAP_MAX_NS)
				until = now + PD_COMPLETE_NAP_MAX_NS;
			e->completer_napping = true;
			e->completer_until = until;
			pd_engine_timedwait(e, &e->completer_cond, until);
			e->completer_napping = false;
			nap = PD_COMPLETE_NAP_MIN_NS;
			/* kicked awake early: it looks when it was told to */
			slept = pd_now_ns() >= until ? until : 0;
			continue;
		}
		/* Late, or only helpers' jobs: nap, longer each time. */
		pd_engine_timedwait(e, &e->completer_cond, now + nap);
		if (nap < PD_COMPLETE_NAP_MAX_NS)
			nap *= 2;
	}
	pd_engine_unlock(e);
	return NULL;
}
