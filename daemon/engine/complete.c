// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * complete.c - a job's work after its launch: on the thread holding the
 * device (engine_priv.h), the D2H copies of what clients will pull,
 * queued behind the kernel on the job's lane before its fence; then, on
 * whichever thread saw the fence pass (completer.c), the commit of where
 * each datablock's bytes now are (outputs valid where they were made,
 * and in the host pages if written back; an in/out input valid only in
 * the job's space), statistics and scheduling history, and
 * EXEC_COMPLETE.  Any error completes the invocation with it instead
 * (its graph fails) and releases the outputs made.  An output left
 * current only on the device keeps a mapping of its host pages (struct
 * pd_dbrec.host_map), so that it can be written back before its last
 * copy is evicted (devpool.c) or once it has been idle a while
 * (space.c).
 *
 * Chains ahead (engine_priv.h): a job whose outputs only GPU ptasks read
 * is committed and completed ahead (pd_job_ahead) as soon as its fence
 * is queued; pd_job_finish then *settles* it (its status and device
 * time) once the fence passed.  A job reading what a job completed ahead
 * wrote holds it (pd_jport.upstream) and is finished only after it was
 * settled (pd_job_upstream_settled_locked, from the lane's reaper); it
 * fails with -EIO when that one failed.
 */
#include <errno.h>
#include "daemon/backend/host.h"
#include "daemon/engine/engine_priv.h"

/* Output port @i's datablock is pulled by a client: write it back. */
static bool to_client(const struct pd_job *job, uint32_t i)
{
	return job->ports[i].kind == PTASK_PORT_OUTPUT &&
	       (job->ports[i].flags & PTASK_INVP_TO_CLIENT);
}

/**
 * pd_job_after_launch() - queue the copies behind @job's kernel
 * @dev: the device (on the thread holding it)
 * @job: the job, launched
 *
 * Queues the D2H copies of what clients will pull (new outputs and
 * in/out inputs whose peer feeds a client), and maps every in/out input
 * (its record will hold a mapping while it is dirty).  No lock held.
 * Return: 0 or -errno.
 */
int pd_job_after_launch(struct pd_device *dev, struct pd_job *job)
{
	struct pd_engine *e = dev->e;
	uint64_t bytes = 0;
	uint32_t i;
	int err = 0;

	pd_engine_lock(e);
	for (i = 0; i < job->inv.n_ports && !err; i++) {
		const struct ptask_invocation_port *p = &job->ports[i];
		struct pd_jport *jp = &job->jp[i];
		bool inout = pd_port_is_input(p) &&
			     (p->flags & PTASK_PORT_INOUT);

		if (inout)
			err = pd_job_map_input_locked(e, job, i);
		if (err || !jp->view ||
		    !(inout ? to_client(job, p->peer) : to_client(job, i)))
			continue;
		pd_engine_unlock(e);
		err = e->be->ops->copy_d2h(e->be, job->space->be_space,
					   job->lane, jp->host, jp->view->dptr,
					   jp->rec->bytes);
		pd_engine_lock(e);
		bytes += jp->rec->bytes;
	}
	if (!err)
		e->stats.bytes_d2h += bytes;
	pd_engine_unlock(e);
	return err;
}

/* The launch and its copies succeeded: record where the bytes now are. */
static void commit_locked(struct pd_engine *e, struct pd_job *job,
			  uint64_t now_ns)
{
	uint32_t i;

	pd_assert_locked(e);
	for (i = 0; i < job->inv.n_ports; i++) {
		const struct ptask_invocation_port *p = &job->ports[i];
		struct pd_jport *jp = &job->jp[i];
		struct pd_dbrec *rec = jp->rec;
		struct pd_view *v;

		if (p->kind == PTASK_PORT_OUTPUT && jp->created &&
		    jp->inplace) {
			/* Written in place: only the host pages hold it. */
			rec->gen_known = false;
			rec->host_valid = true;
			rec->exposed = true;
			continue;
		}
		if (p->kind == PTASK_PORT_OUTPUT && jp->created) {
			jp->view->valid = true;
			rec->gen_known = false;
			if (to_client(job, i)) {
				rec->host_valid = true;
				rec->exposed = true;
			} else {
				rec->host_valid = false;
				rec->host_map = jp->host;
				jp->host = NULL;
				rec->dirty_ns = now_ns;
			}
			continue;
		}
		if (!pd_port_is_input(p) || !(p->flags & PTASK_PORT_INOUT) ||
		    !jp->view)
			continue;
		/* Pushed again meanwhile: the client's bytes win. */
		if (rec->dead || rec->generation != jp->gen)
			continue;
		if (to_client(job, p->peer)) {
			for (v = rec->views; v; v = v->rec_next)
				v->valid = v == jp->view;
			rec->host_valid = true;
			continue;
		}
		if (!rec->host_map) {
			rec->host_map = jp->host;
			jp->host = NULL;
		}
		pd_rec_only_valid_locked(e, rec, jp->view);
		rec->dirty_ns = now_ns;
	}
}

void pd_job_mark_views_locked(struct pd_engine *e, struct pd_job *job)
{
	uint32_t i;

	pd_assert_locked(e);
	for (i = 0; i < job->inv.n_ports; i++) {
		struct pd_view *v = job->jp[i].view;

		if (!v)
			continue;
		if (job->jp[i].wrote) {
			v->write_lane = job->lane;
			v->write_ticket = job->ticket;
		}
		v->read_ticket[job->lane] = job->ticket;
	}
}

/*
 * Drop the job's pins; records made for outputs die when @kill.  Its
 * fence passed: the views it marked need no more waiting for it.
 */
static void unpin_locked(struct pd_engine *e, struct pd_job *job, bool kill)
{
	uint32_t i;

	pd_assert_locked(e);
	for (i = 0; i < job->inv.n_ports; i++) {
		struct pd_jport *jp = &job->jp[i];
		struct pd_view *v = jp->view;

		if (v && job->ticket && v->write_ticket == job->ticket &&
		    v->write_lane == job->lane)
			v->write_ticket = 0;
		if (v && job->ticket &&
		    v->read_ticket[job->lane] == job->ticket)
			v->read_ticket[job->lane] = 0;
		if (jp->view)
			jp->view->pins--;
		if (jp->src_view)
			jp->src_view->pins--;
		jp->view = jp->src_view = NULL;
		/* a segment's link: its readers ran (the fence passed) */
		if (jp->scratch_cap)
			pd_devmem_pool_locked(job->space, jp->value,
					      jp->scratch_cap);
		jp->scratch_cap = 0;
	}
	for (i = 0; i < job->inv.n_ports; i++) {
		struct pd_jport *jp = &job->jp[i];

		if (!jp->rec)
			continue;
		if (kill && jp->created)
			pd_rec_forget_locked(e, jp->rec);
		pd_rec_unpin_locked(e, jp->rec);
		jp->rec = NULL;
	}
}

/* The datablock output port @index emits. */
static uint32_t output_datablock(const struct pd_job *job, uint32_t index)
{
	uint32_t i;

	if (job->jp[index].created)
		return job->jp[index].created;
	for (i = 0; i < job->inv.n_ports; i++)
		if (pd_port_is_input(&job->ports[i]) &&
		    (job->ports[i].flags & PTASK_PORT_INOUT) &&
		    job->ports[i].peer == index)
			return job->ports[i].datablock;
	return 0;
}

/* EXEC_COMPLETE's output records of @job into @outs: how many. */
static uint32_t outputs_fill(const struct pd_job *job,
			     struct ptask_exec_output *outs)
{
	uint32_t i, n = 0;

	for (i = 0; i < job->inv.n_ports; i++) {
		/* a segment's links are its own: its last ptask's go on */
		if (job->ports[i].kind != PTASK_PORT_OUTPUT ||
		    (job->ports[i].flags & PTASK_INVP_FUSED))
			continue;
		outs[n].index = job->ports[i].index;
		outs[n].datablock = output_datablock(job, i);
		n++;
	}
	return n;
}

/* Statistics and scheduling history of a finished job. */
static void count_locked(struct pd_engine *e, struct pd_job *job,
			 struct pd_device *dev, bool ok, uint64_t gpu_ns,
			 uint64_t run_ns)
{
	uint32_t runs = pd_job_runs(job);

	pd_assert_locked(e);
	e->stats.invocations += runs;
	if (!ok) {
		e->stats.failed += runs;
		return;
	}
	if (pd_job_is_segment(job)) {
		e->stats.segments++;
		e->stats.fused += job->nmembers;
	} else if (job->batch) {
		e->stats.batches++;
		e->stats.batched += runs;
	}
	e->stats.per_device[dev->index] += runs;
	e->stats.gpu_ns += gpu_ns;
	/*
	 * an estimate with the copies in it: not the kernel's time; nor
	 * one up to a late look (pd_job_fence_seen_locked); a batch's
	 * members each ran a share
	 */
	if (!job->estimated_copies && !job->estimated_contended &&
	    !(job->untimed && job->seen_late))
		pd_sched_ran_locked(e, job, (gpu_ns ? gpu_ns : run_ns) / runs);
}

/* Does @job's work write port @i's datablock (a new output, in/out)? */
static bool writes_rec(const struct pd_job *job, uint32_t i)
{
	const struct ptask_invocation_port *p = &job->ports[i];

	if (!job->jp[i].rec)
		return false;
	if (p->kind == PTASK_PORT_OUTPUT)
		return job->jp[i].created != 0;
	return pd_port_is_input(p) && (p->flags & PTASK_PORT_INOUT);
}

/* Who writes @job's datablocks now: @writer (@job, or NULL: nobody). */
static void set_writer_locked(struct pd_engine *e, struct pd_job *job,
			      struct pd_job *writer)
{
	uint32_t i;

	pd_assert_locked(e);
	for (i = 0; i < job->inv.n_ports; i++) {
		struct pd_dbrec *rec = job->jp[i].rec;

		if (!writes_rec(job, i))
			continue;
		if (writer)
			rec->ahead_writer = writer;
		else if (rec->ahead_writer == job)
			rec->ahead_writer = NULL;
	}
}

void pd_job_link_upstream_locked(struct pd_engine *e, struct pd_job *job)
{
	uint32_t i;

	pd_assert_locked(e);
	for (i = 0; i < job->inv.n_ports; i++) {
		struct pd_jport *jp = &job->jp[i];
		struct pd_job *w;

		if (!pd_port_is_input(&job->ports[i]) || !jp->rec ||
		    jp->upstream)
			continue;
		w = jp->rec->ahead_writer;
		if (!w || w == job)
			continue;
		jp->upstream = w;
		w->refs++;
	}
}

/* Did work that @job read fail (its upstream, or its input's bytes)? */
static bool upstream_failed_locked(const struct pd_job *job)
{
	uint32_t i;

	for (i = 0; i < job->inv.n_ports; i++) {
		const struct pd_jport *jp = &job->jp[i];

		if (jp->upstream && jp->upstream->failed)
			return true;
		if (pd_port_is_input(&job->ports[i]) && jp->rec &&
		    jp->rec->failed)
			return true;
	}
	return false;
}

bool pd_job_result_at_fence_locked(struct pd_engine *e,
				   const struct pd_job *job)
{
	uint32_t i;

	pd_assert_locked(e);
	for (i = 0; i < job->inv.n_ports; i++)
		if (job->jp[i].upstream && !job->jp[i].upstream->settled)
			return false;
	return !upstream_failed_locked(job);
}

bool pd_job_can_ahead_locked(struct pd_engine *e, const struct pd_job *job,
			     bool waiter)
{
	uint32_t i;

	pd_assert_locked(e);
	/* The core completed it ahead as it was taken: it is, whatever. */
	if (job->taken_ahead)
		return true;
	/* the core never completes a segment ahead */
	if (!(e->src->ops->caps & PD_SOURCE_AHEAD) || e->cfg.no_ahead ||
	    job->err || job->info->kind != PTASK_KIND_GPU ||
	    job->nmembers > 1)
		return false;
	for (i = 0; i < job->inv.n_ports; i++) {
		const struct ptask_invocation_port *p = &job->ports[i];

		if (p->kind != PTASK_PORT_OUTPUT)
			continue;
		/*
		 * Host code reads it: only where clients alone read it, by
		 * pulls, which wait for the settle; and only when the ptask's
		 * next invocation waits for this one (a stream of pushes), or
		 * when the thread that submitted it waits for its fence and
		 * settles it itself (@waiter, the lone invocation: the
		 * completion's namespace work is done while the kernel runs,
		 * and only the settle is left after it; handed to the
		 * completion thread instead, the pull would wait for a
		 * thread that may sleep).
		 */
		if (p->flags & PTASK_INVP_TO_CLIENT) {
			if (!(p->flags & PTASK_INVP_PULLED_ONLY) ||
			    (!(job->inv.flags & PTASK_INV_BACKLOG) &&
			     (!waiter || e->cfg.no_lone_ahead)))
				return false;
			continue;
		}
		/* GPU ptasks read it: from the device, behind the fence. */
		if (job->jp[i].created && !job->jp[i].view)
			return false;
	}
	return !upstream_failed_locked(job);
}

/**
 * pd_job_ahead() - complete @job before its fence passed
 * @dev: the device (on the thread holding it)
 * @job: fenced, not yet on its lane (so nobody else completes it)
 * @defer: the helper's held-back wake-ups, or NULL
 *
 * Commits where its outputs will be (valid in its space: readers order
 * themselves behind its fence, which the views remember), makes it the
 * writer of what it writes, and completes it with
 * PTASK_EXEC_COMPLETE_AHEAD: the ptasks downstream may be taken now.
 * -ECANCELED (its graph went away): nothing to settle.  Another error
 * (a module without the flag: -EINVAL): it is completed plainly later.
 * No lock held.
 */
void pd_job_ahead(struct pd_device *dev, struct pd_job *job,
		  struct pd_wake_defer *defer)
{
	struct pd_engine *e = dev->e;
	struct ptask_exec_output outs[PTASK_MAX_PORTS];
	struct ptask_exec_complete arg = {
		.size = sizeof(arg), .flags = PTASK_EXEC_COMPLETE_AHEAD,
		.id = job->inv.id, .accel = dev->index + 1,
	};
	int cerr;

	pd_engine_lock(e);
	/*
	 * Taken ahead, its completion is the core's already: what it wrote
	 * is where the views say once its fence is queued; if it failed
	 * before, it wrote nothing, and its settle fails the graph.
	 */
	if (job->taken_ahead) {
		if (!job->err) {
			commit_locked(e, job, pd_now_ns());
			job->committed = true;
			set_writer_locked(e, job, job);
		}
		e->stats.ahead += pd_job_runs(job);
		e->stats.taken_ahead += pd_job_runs(job);
		pd_engine_unlock(e);
		return;
	}
	commit_locked(e, job, pd_now_ns());
	job->committed = true;
	set_writer_locked(e, job, job);
	pd_engine_unlock(e);
	arg.n_outputs = outputs_fill(job, outs);
	arg.outputs = (uintptr_t)outs;
	cerr = e->src->ops->complete(e->src, &arg, outs, defer);
	pd_engine_lock(e);
	if (!cerr) {
		job->ahead = true;
		e->stats.ahead++;
	} else {
		set_writer_locked(e, job, NULL);
		if (cerr == -ECANCELED)
			job->ahead = job->ahead_gone = true;
		else
			pd_log_debug("engine: invocation %llu: no completion ahead (%d): completed when its fence passes",
				     (unsigned long long)job->inv.id, cerr);
	}
	pd_engine_unlock(e);
}

bool pd_job_upstream_settled_locked(struct pd_engine *e, struct pd_job *job,
				    struct pd_wake_defer *defer)
{
	uint32_t i;

	pd_assert_locked(e);
	for (i = 0; i < job->inv.n_ports; i++) {
		struct pd_job *u = job->jp[i].upstream;

		if (!u || u->settled)
			continue;
		/* Its fence passed before ours (we waited for it): reap it. */
		if (u->space && !(u->space == job->space &&
				  u->lane == job->lane))
			pd_lane_reap_locked(e, u->space, u->lane, defer);
		/* Being settled by another thread, or not on its lane yet. */
		if (!u->settled)
			return false;
	}
	return true;
}

/*
 * Settle @job, completed ahead: its status and device time; a batch's
 * members each, with a share of the time.
 */
/*
 * The accelerator's code for @job's failure @err (EXEC_COMPLETE's
 * @error_code): the backend's last noted one, if noted after the job's
 * launch (another job's failure in that window is taken for this one's:
 * a sticky CUDA error is every job's anyway); 0 without a failure.
 */
uint32_t pd_job_error_code(const struct pd_job *job, int err)
{
	if (!err || !job->error_seq_set ||
	    pd_backend_error_seq() == job->error_seq)
		return 0;
	return pd_backend_error_code();
}

static void settle(struct pd_device *dev, struct pd_job *job,
		   struct ptask_exec_complete *arg, int err,
		   struct pd_wake_defer *defer)
{
	struct pd_engine *e = dev->e;
	uint32_t m, runs = pd_job_runs(job);
	int cerr;

	/* its graph gone (closed, terminated) meanwhile: no daemon error */
	if (err && job->ahead_gone)
		pd_log_debug("engine: invocation %llu of ptask %u ('%s') on %s, completed ahead: its graph went (%d)",
			     (unsigned long long)job->inv.id, job->inv.ptask,
			     job->info->entry, e->be->info[dev->index].name,
			     err);
	else if (err)
		pd_log_err("engine: invocation %llu of ptask %u ('%s') on %s, completed ahead, failed: %d (accelerator code %u)",
			   (unsigned long long)job->inv.id, job->inv.ptask,
			   job->info->entry, e->be->info[dev->index].name, err,
			   pd_job_error_code(job, err));
	if (job->ahead_gone)
		return;
	arg->flags = PTASK_EXEC_COMPLETE_SETTLE;
	arg->status = err;
	arg->error_code = pd_job_error_code(job, err);
	arg->gpu_ns /= runs;
	/* A batch's members in one lock round of the source's. */
	if (job->batch && runs > 1 && runs <= PD_BATCH_MAX &&
	    e->src->ops->settle_many) {
		uint64_t ids[PD_BATCH_MAX];
		int errs[PD_BATCH_MAX];

		for (m = 0; m < runs; m++)
			ids[m] = job->members[m].id;
		e->src->ops->settle_many(e->src, arg, ids, runs, errs, defer);
		for (m = 0; m < runs; m++)
			if (errs[m] && errs[m] != -ECANCELED)
				pd_log_err("engine: settling invocation %llu: %d",
					   (unsigned long long)ids[m], errs[m]);
		return;
	}
	for (m = 0; m < runs; m++) {
		if (job->batch)
			arg->id = job->members[m].id;
		cerr = e->src->ops->complete(e->src, arg, NULL, defer);
		if (cerr && cerr != -ECANCELED)
			pd_log_err("engine: settling invocation %llu: %d",
				   (unsigned long long)arg->id, cerr);
	}
}

/* Handles given back to the source per db_unmap_many call at most. */
#define UNMAP_BATCH	64

/*
 * Give back the host mappings @job made (its inputs' and outputs'), in
 * lock rounds of UNMAP_BATCH where the source has db_unmap_many.
 */
static void unmap_ports(struct pd_engine *e, struct pd_job *job)
{
	uint32_t handles[UNMAP_BATCH], i, n = 0;

	for (i = 0; i < job->inv.n_ports; i++) {
		struct pd_jport *jp = &job->jp[i];
		uint32_t h = jp->created ? jp->created : job->ports[i].datablock;

		if (!jp->host)
			continue;
		if (!e->src->ops->db_unmap_many) {
			e->src->ops->db_unmap(e->src, h, jp->host,
					      job->ports[i].bytes);
		} else {
			handles[n++] = h;
			if (n == UNMAP_BATCH) {
				e->src->ops->db_unmap_many(e->src, n, handles);
				n = 0;
			}
		}
		jp->host = NULL;
	}
	if (n)
		e->src->ops->db_unmap_many(e->src, n, handles);
}

/**
 * pd_job_finish() - complete @job with its outputs, or fail it with @err
 * @dev: the device it ran on (any thread: no backend call)
 * @job: the job, its fence passed (or never fenced), its upstream
 *	settled; freed here (kept while jobs downstream hold it)
 * @err: 0, or why it failed (-EIO too when work it read failed)
 * @gpu_ns: its device time (its fence's, fence_poll)
 * @run_ns: launch to fence seen, wall time (history when @gpu_ns is 0)
 * @defer: the helper's held-back wake-ups (pd_engine_help), or NULL
 *
 * No lock held.
 */
void pd_job_finish(struct pd_device *dev, struct pd_job *job, int err,
		   uint64_t gpu_ns, uint64_t run_ns,
		   struct pd_wake_defer *defer)
{
	struct pd_engine *e = dev->e;
	struct ptask_exec_output outs[PTASK_MAX_PORTS];
	uint32_t capacity = e->be->info[dev->index].capacity;
	double scale = (e->be->wall_per_gpu_ns > 0 ? e->be->wall_per_gpu_ns :
			1.0) / (capacity ? capacity : 1);
	/*
	 * PTSched charges wall time of a whole device: a device that runs
	 * several launches at once on hardware of their own (cpu lanes)
	 * gives each its share.
	 */
	struct ptask_exec_complete arg = {
		.size = sizeof(arg), .id = job->inv.id,
		.gpu_ns = (uint64_t)((double)gpu_ns * scale),
		.accel = dev->index + 1,
	};
	uint64_t now;
	uint32_t i;
	int cerr;

	if (pd_log_level >= PD_LOG_DEBUG)
		pd_log_debug("engine: %s: ptask %u ('%s'): device time %llu us, %llu us from launch to fence seen, lane %u%s",
			     e->be->info[dev->index].name, job->inv.ptask,
			     job->info->entry, (unsigned long long)gpu_ns / 1000,
			     (unsigned long long)run_ns / 1000, job->lane,
			     job->ahead ? ", completed ahead" : "");
	pd_engine_lock(e);
	/*
	 * Sampled out under contention (worker.c, launch_sampled_timed):
	 * the estimate counts the other processes' work, the ptask's timed
	 * runs say what its own costs.
	 */
	if (job->estimated_contended && e->be->untimed_estimated &&
	    job->info->runs) {
		gpu_ns = (uint64_t)(job->info->avg_run_ns * pd_job_runs(job));
		arg.gpu_ns = (uint64_t)((double)gpu_ns * scale);
	}
	if (!err && upstream_failed_locked(job)) {
		/* Its inputs are what a failed job left: never a result. */
		err = -EIO;
		e->stats.upstream_failed++;
	}
	now = pd_now_ns();	/* one read for both (40-45 ns each) */
	if (!err && !job->committed)
		commit_locked(e, job, now);
	job->failed = err != 0 || job->ahead_gone;
	for (i = 0; job->ahead && err && i < job->inv.n_ports; i++)
		if (writes_rec(job, i))
			job->jp[i].rec->failed = true;
	set_writer_locked(e, job, NULL);
	/* Ahead, its outputs went on: the graph's failure releases them. */
	unpin_locked(e, job, job->ahead ? job->ahead_gone : err != 0);
	if (job->space)
		job->space->last_use_ns = now;
	/* Counted first: whoever sees the completion sees it counted. */
	count_locked(e, job, dev, err == 0 && !job->ahead_gone, gpu_ns,
		     run_ns);
	pd_engine_unlock(e);
	if (job->ahead) {
		settle(dev, job, &arg, err, defer);
	} else if (!err) {
		arg.n_outputs = outputs_fill(job, outs);
		arg.outputs = (uintptr_t)outs;
		cerr = e->src->ops->complete(e->src, &arg, outs, defer);
		if (cerr) {
			/* The outputs made die: released below or by the core. */
			pd_engine_lock(e);
			for (i = 0; i < job->inv.n_ports; i++) {
				struct pd_dbrec *rec = job->jp[i].created ?
					pd_rec_find_locked(e, job->jp[i].created) :
					NULL;

				if (rec)
					pd_rec_forget_locked(e, rec);
			}
			pd_engine_unlock(e);
		}
		if (cerr && cerr != -ECANCELED) {
			pd_log_err("engine: completing invocation %llu of ptask %u: %d",
				   (unsigned long long)job->inv.id,
				   job->inv.ptask, cerr);
			err = cerr;
		}
		if (cerr) {
			pd_engine_lock(e);
			e->stats.failed++;
			e->stats.per_device[dev->index]--;
			e->stats.gpu_ns -= gpu_ns;
			pd_engine_unlock(e);
		}
	}
	if (err && !job->ahead) {
		arg.status = err;
		arg.error_code = pd_job_error_code(job, err);
		/* reset under it (MPS): the core runs it again where it can */
		if (pd_backend_collateral(arg.error_code))
			arg.flags = PTASK_EXEC_COMPLETE_REQUEUE;
		arg.n_outputs = 0;
		arg.outputs = 0;
		arg.gpu_ns = 0;
		cerr = e->src->ops->complete(e->src, &arg, NULL, defer);
		/*
		 * -ECANCELED: its graph went while it ran (a client closed or
		 * terminated it, or died), which is no daemon error.
		 */
		if (cerr == -ECANCELED)
			pd_log_debug("engine: invocation %llu of ptask %u ('%s') on %s: its graph went (%d)",
				     (unsigned long long)job->inv.id,
				     job->inv.ptask, job->info->entry,
				     e->be->info[dev->index].name, err);
		else if (arg.flags & PTASK_EXEC_COMPLETE_REQUEUE)
			pd_log_warn("engine: invocation %llu of ptask %u ('%s') on %s was lost to a reset (%d, accelerator code %u): queued again where it can run again",
				    (unsigned long long)job->inv.id,
				    job->inv.ptask, job->info->entry,
				    e->be->info[dev->index].name, err,
				    arg.error_code);
		else
			pd_log_err("engine: invocation %llu of ptask %u ('%s') on %s failed: %d (accelerator code %u)",
				   (unsigned long long)job->inv.id,
				   job->inv.ptask, job->info->entry,
				   e->be->info[dev->index].name, err,
				   arg.error_code);
		if (cerr && cerr != -ECANCELED)
			pd_log_err("engine: failing invocation %llu: %d",
				   (unsigned long long)job->inv.id, cerr);
		for (i = 0; i < job->inv.n_ports; i++)
			if (job->jp[i].created)
				e->src->ops->db_release(e->src,
							job->jp[i].created,
							defer);
	}
	unmap_ports(e, job);
	pd_views_flush_unmaps(e);
	pd_engine_lock(e);
	pd_job_free_locked(e, job);
	pd_engine_unlock(e);
}
