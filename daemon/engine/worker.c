// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * worker.c - one thread per device, and a job's run.  The worker runs
 * the jobs placed on its device, one at a time (a short job a helper
 * claimed runs on the helper's thread instead, the same way: help.c);
 * while the device has no job it tidies up its spaces (space.c); at
 * stop it closes them.  A job's run, from placement to complete:
 *
 *  1. the space of the job's owner (per-client isolation) or the shared
 *     one, and the ptask's kernel loaded in it (space.c);
 *  2. inputs made valid there, outputs made, the launch description
 *     (prepare.c);
 *  3. the launch; then the D2H copies of what clients will pull
 *     (complete.c); one sync, which gives the GPU time;
 *  4. commit and EXEC_COMPLETE, or the invocation failed with the error
 *     (complete.c).
 */
#include "daemon/backend/host.h"
#include "daemon/engine/engine_priv.h"

/**
 * pd_job_run() - run @job on @dev, from space to complete
 * @dev: the device placement gave it (on the thread holding it)
 * @job: the job; freed here
 * @defer: the held-back wake-ups of the helper that claimed it
 *	(pd_engine_help), NULL on the worker
 *
 * No lock held.
 */
void pd_job_run(struct pd_device *dev, struct pd_job *job,
		struct pd_wake_defer *defer)
{
	struct pd_engine *e = dev->e;
	const struct pd_backend_ops *ops = e->be->ops;
	uint32_t job_ptask = job->inv.ptask;	/* pd_job_finish frees @job */
	uint64_t alloc_ns, source_ns, copy_ns;
	struct pd_launch launch = { 0 };
	uint64_t gpu_ns = 0, t0 = pd_now_ns(), start = 0, synced = 0;
	void *kernel = NULL;
	int err;

	err = pd_space_get(dev, pd_sched_owner(e, job), &job->space);
	if (!err)
		err = pd_space_kernel_get(dev, job->space, job->info, &kernel);
	if (!err)
		err = pd_job_prepare(dev, job, &launch, defer);
	if (!err) {
		start = pd_now_ns();
		err = ops->launch(e->be, job->space->be_space, 0, kernel, &launch);
	}
	if (!err)
		err = pd_job_after_launch(dev, job);
	if (job->space) {
		/* Sync even after an error: queued copies use our buffers. */
		int serr = ops->sync(e->be, job->space->be_space, &gpu_ns);

		if (!err)
			err = serr;
	}
	synced = pd_now_ns();
	alloc_ns = job->alloc_ns;
	source_ns = job->source_ns;
	copy_ns = job->copy_ns;
	pd_job_finish(dev, job, err, gpu_ns, start ? synced - start : 0,
		      defer);
	/* Where a job's time goes, for -vv: what is the engine's share. */
	pd_log_debug("engine: %s: ptask %u: %llu us to launch (%llu allocating, %llu mapping/creating, %llu queueing copies), %llu us launch to synced (gpu %llu us), %llu us to complete",
		     e->be->info[dev->index].name, job_ptask,
		     (unsigned long long)((start ? start : synced) - t0) / 1000,
		     (unsigned long long)alloc_ns / 1000,
		     (unsigned long long)source_ns / 1000,
		     (unsigned long long)copy_ns / 1000,
		     (unsigned long long)(start ? synced - start : 0) / 1000,
		     (unsigned long long)gpu_ns / 1000,
		     (unsigned long long)(pd_now_ns() - synced) / 1000);
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
 * Runs the jobs placed on the device; when it has none for a while,
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
			dev->self = pthread_self();
			pd_engine_unlock(e);
			pd_job_run(dev, job, NULL);
			pd_engine_lock(e);
			dev->job = NULL;
			/* A busy device tidies up between jobs too. */
			if (pd_now_ns() >= dev->tidy_ns)
				tidy_locked(dev);
			pd_sched_dispatch_locked(e);
			pthread_cond_broadcast(&e->idle_cond);
			continue;
		}
		if (e->exiting && !job)
			break;
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
