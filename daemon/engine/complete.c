// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * complete.c - a job's work after its launch, on the thread holding the
 * device (engine_priv.h): the D2H copies of what clients will pull,
 * queued behind the kernel before the job's one sync; then, once
 * synced, the commit of where each datablock's bytes now are (outputs
 * valid where they were made, and in the host pages if written back; an
 * in/out input valid only in the job's space), statistics and
 * scheduling history, and EXEC_COMPLETE.  Any error completes the
 * invocation with it instead (its graph fails) and releases the outputs
 * made.  An output left current only on the device keeps a mapping of
 * its host pages (struct pd_dbrec.host_map), so that it can be written
 * back before its last copy is evicted (devpool.c) or once it has been
 * idle a while (space.c).
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
		err = e->be->ops->copy_d2h(e->be, job->space->be_space, 0,
					   jp->host, jp->view->dptr,
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

/* Drop the job's pins; records made for outputs die when @kill. */
static void unpin_locked(struct pd_engine *e, struct pd_job *job, bool kill)
{
	uint32_t i;

	pd_assert_locked(e);
	for (i = 0; i < job->inv.n_ports; i++) {
		struct pd_jport *jp = &job->jp[i];

		if (jp->view)
			jp->view->pins--;
		if (jp->src_view)
			jp->src_view->pins--;
		jp->view = jp->src_view = NULL;
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

/* Statistics and scheduling history of a finished job. */
static void count_locked(struct pd_engine *e, struct pd_job *job,
			 struct pd_device *dev, bool ok, uint64_t gpu_ns,
			 uint64_t run_ns)
{
	pd_assert_locked(e);
	e->stats.invocations++;
	if (!ok) {
		e->stats.failed++;
		return;
	}
	e->stats.per_device[dev->index]++;
	e->stats.gpu_ns += gpu_ns;
	pd_sched_ran_locked(e, job, gpu_ns ? gpu_ns : run_ns);
}

/**
 * pd_job_finish() - complete @job with its outputs, or fail it with @err
 * @dev: the device it ran on (on the thread holding it)
 * @job: the job, synced (or never launched); freed here
 * @err: 0, or why it failed
 * @gpu_ns: its device time (the backend's sync)
 * @run_ns: launch to synced, wall time (history when @gpu_ns is 0)
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
	double scale = e->be->wall_per_gpu_ns;
	struct ptask_exec_complete arg = {
		.size = sizeof(arg), .id = job->inv.id,
		.gpu_ns = scale > 0 ? (uint64_t)((double)gpu_ns * scale) : gpu_ns,
		.accel = dev->index + 1,
	};
	uint32_t i, n = 0;
	int cerr;

	pd_engine_lock(e);
	if (!err)
		commit_locked(e, job, pd_now_ns());
	unpin_locked(e, job, err != 0);
	if (job->space)
		job->space->last_use_ns = pd_now_ns();
	/* Counted first: whoever sees the completion sees it counted. */
	count_locked(e, job, dev, err == 0, gpu_ns, run_ns);
	pd_engine_unlock(e);
	if (!err) {
		for (i = 0; i < job->inv.n_ports; i++) {
			if (job->ports[i].kind != PTASK_PORT_OUTPUT)
				continue;
			outs[n].index = job->ports[i].index;
			outs[n].datablock = output_datablock(job, i);
			n++;
		}
		arg.n_outputs = n;
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
	if (err) {
		pd_log_err("engine: invocation %llu of ptask %u ('%s') on %s failed: %d",
			   (unsigned long long)job->inv.id, job->inv.ptask,
			   job->info->entry, e->be->info[dev->index].name, err);
		arg.status = err;
		arg.n_outputs = 0;
		arg.outputs = 0;
		arg.gpu_ns = 0;
		cerr = e->src->ops->complete(e->src, &arg, NULL, defer);
		if (cerr && cerr != -ECANCELED)
			pd_log_err("engine: failing invocation %llu: %d",
				   (unsigned long long)job->inv.id, cerr);
		for (i = 0; i < job->inv.n_ports; i++)
			if (job->jp[i].created)
				e->src->ops->db_release(e->src,
							job->jp[i].created,
							defer);
	}
	for (i = 0; i < job->inv.n_ports; i++) {
		struct pd_jport *jp = &job->jp[i];

		if (jp->host)
			e->src->ops->db_unmap(e->src, jp->created ? jp->created :
					      job->ports[i].datablock,
					      jp->host, job->ports[i].bytes);
		jp->host = NULL;
	}
	pd_views_flush_unmaps(e);
	pd_engine_lock(e);
	pd_job_free_locked(e, job);
	pd_engine_unlock(e);
}
