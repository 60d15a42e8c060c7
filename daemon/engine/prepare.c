// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * prepare.c - a job's work before its launch, on the thread holding the
 * device (engine_priv.h), with the job's space open and its kernel
 * loaded (space.c):
 *
 *  - inputs: a record per datablock at the invocation's generation; a
 *    view in the space made valid if it is not (H2D from the host pages
 *    when they are current, else D2D from another space holding it), or
 *    the datablock's bytes for a parameter passed by value;
 *  - outputs: a datablock per output port (db_create) with a fresh view;
 *  - the launch description: parameters and geometry.
 *
 * Lanes: the job runs on one lane of its space (struct pd_job.lane),
 * chosen first: the lane with the fewest jobs in flight, counting one
 * less for the lane where in-flight work is making one of its inputs
 * valid (there it needs no lane_wait); ties go to the lowest-numbered
 * lane, so that work that comes one job at a time runs on lane 0 alone.
 * Why not round robin: on an H200 (driver 580.159.04, 2026-12-03) a CUDA
 * context in which three or more streams ever launched kernels replays
 * a 100-node chain graph in 104 us, against 86 us while at most two have
 * (0.18 us a node; streams that only copied or wrote memory words do
 * not count, destroying the streams does not undo it, and
 * CUDA_DEVICE_MAX_CONNECTIONS does not change it), and round robin put
 * a lone client's every invocation on the next of the four lanes.
 *
 * The next hop of a chain completed ahead (its producer is a job
 * completed ahead, pd_dbrec.ahead_writer) stays on its producer's lane:
 * stream order, no lane_wait, and the launches held there go on.  A
 * job's copies are queued on its lane, after lane_waits for work on
 * other lanes that writes what it reads, or reads or writes what it
 * overwrites (engine_priv.h, "Hazards").
 *
 * In place: an input of at most the device's inplace_max bytes whose
 * host pages are current and registered (host_device_ptr answers) is
 * passed at the device address of its host pages, with no view and no
 * copy; an output of at most inplace_max that goes to a client is
 * written by the kernel straight into the new datablock's pages (no
 * view, no copy back), host-valid once the job's fence passed.  Host
 * pages the backend cannot reach (kernel mode's mappings: -ENOENT;
 * cuda without mapped memory: -EOPNOTSUPP) are copied as before.
 * In/out inputs and by-value parameters are never in place.
 *
 * Kernel parameters: the ports that are not PTASK_PORT_RUNTIME, ordered
 * by param_index (gaps close up; two ports with one index are -EINVAL),
 * except the output that emits an in/out input (its parameter is the
 * input's).  An input or sticky port whose template binds
 * PTASK_BIND_PARAM (PTASK_INVP_BINDING) passes its datablock's bytes by
 * value (at most PD_BYVALUE_MAX, 4 KiB, as CUDA's parameter space); any
 * other (PTASK_BIND_GLOBAL, no template, and PTASK_BIND_CONSTANT, which
 * would need a named __constant__ symbol the ABI does not carry) passes
 * the device pointer of its view.  An output port passes the device
 * pointer of a new datablock of the port's template size (-EINVAL
 * without a template).
 *
 * Geometry: the ptask's own when set; else one thread per 4 bytes of the
 * first output (or of the first in/out input), in blocks of
 * PD_DEFAULT_BLOCK threads.
 */
#include <errno.h>
#include <string.h>
#include "daemon/backend/host.h"
#include "daemon/engine/engine_priv.h"

/**
 * pd_job_map_input_locked() - map input @i's host pages for @job, once
 * @e: the engine
 * @job: the job
 * @i: the port
 *
 * Locked on entry and exit; the lock is dropped around the source's
 * db_map.  The mapping stays in job->jp[@i].host until the job is
 * finished.  Return: 0 or the source's -errno.
 */
int pd_job_map_input_locked(struct pd_engine *e, struct pd_job *job,
			    uint32_t i)
{
	const struct ptask_invocation_port *p = &job->ports[i];
	struct pd_jport *jp = &job->jp[i];
	uint64_t t;
	void *addr;
	int err;

	if (jp->host)
		return 0;
	t = pd_debug_now_ns();
	pd_engine_unlock(e);
	err = e->src->ops->db_map(e->src, p->datablock, p->mmap_offset,
				  p->bytes, &addr);
	pd_engine_lock(e);
	job->source_ns += pd_debug_now_ns() - t;
	if (err) {
		/*
		 * -ENOENT: the datablock went with its graph (closed or
		 * terminated while this ran); the invocation's failure says
		 * what matters, once its completion shows whether the graph
		 * is gone.
		 */
		if (err == -ENOENT)
			pd_log_debug("engine: mapping datablock %u: %d",
				     p->datablock, err);
		else
			pd_log_err("engine: mapping datablock %u: %d",
				   p->datablock, err);
		return err;
	}
	jp->host = addr;
	return 0;
}

/*
 * A batch's host mappings in one call to the source (one lock round of
 * its, not two a member: profiled on an H200, 2026-11-27, mapping each
 * member's input and output cost the device's worker 1.6 us an
 * invocation, most of it in the two locks): the inputs the members
 * will read in place (as input_in_place decides) and the outputs the
 * core made.  What fails here is mapped alone later, which meets and
 * logs the error.  Locked on entry/exit.
 */
static void map_batch(struct pd_device *dev, struct pd_job *job)
{
	struct pd_engine *e = dev->e;
	struct pd_map_req reqs[PD_BATCH_MAX * PD_BATCH_MAP_PORTS];
	uint32_t at[PD_BATCH_MAX * PD_BATCH_MAP_PORTS], i, n = 0;
	void *data[PD_BATCH_MAX * PD_BATCH_MAP_PORTS];
	uint64_t t;

	for (i = 0; i < job->inv.n_ports &&
	     n < sizeof(reqs) / sizeof(reqs[0]); i++) {
		const struct ptask_invocation_port *p = &job->ports[i];
		const struct pd_jport *jp = &job->jp[i];
		bool in = pd_port_is_input(p);

		if (jp->host || !p->datablock ||
		    (in && (!jp->rec || !jp->rec->host_valid ||
			    jp->rec->bytes > dev->inplace_max ||
			    pd_port_by_value(p))))
			continue;
		reqs[n].handle = p->datablock;
		reqs[n].mmap_offset = p->mmap_offset;
		reqs[n].bytes = p->bytes;
		at[n++] = i;
	}
	if (n < 2)
		return;
	t = pd_debug_now_ns();
	pd_engine_unlock(e);
	e->src->ops->db_map_many(e->src, n, reqs, data);
	pd_engine_lock(e);
	job->source_ns += pd_debug_now_ns() - t;
	for (i = 0; i < n; i++)
		job->jp[at[i]].host = data[i];
}

/*
 * Wait until everything queued on @job's lane so far is done (no lock
 * held).  Its fence covers no launch (each job fences after its own),
 * so no device time is taken from another job.
 */
static int lane_drain(struct pd_engine *e, struct pd_job *job)
{
	uint64_t ticket;
	int err;

	err = e->be->ops->fence(e->be, job->space->be_space, job->lane,
				&ticket);
	if (!err)
		err = e->be->ops->fence_wait(e->be, job->space->be_space,
					     job->lane, ticket, NULL);
	return err < 0 ? err : 0;
}

/* Order @job's lane behind fence @ticket of lane @from (counted). */
static int lane_order(struct pd_engine *e, struct pd_job *job, uint32_t from,
		      uint64_t ticket)
{
	int err;

	if (!ticket || from == job->lane)
		return 0;
	pd_engine_unlock(e);
	err = e->be->ops->lane_wait(e->be, job->space->be_space, job->lane,
				    from, ticket);
	pd_engine_lock(e);
	if (!err)
		e->stats.lane_waits++;
	else
		pd_log_err("engine: lane_wait %u -> %u: %d", job->lane, from,
			   err);
	return err;
}

/*
 * Before @job reads @v (in its space): wait for the work in flight on
 * another lane that makes it valid.  Before it writes @v: also for every
 * reader in flight on another lane.  Locked; @v is pinned.
 */
static int view_order(struct pd_engine *e, struct pd_job *job,
		      struct pd_view *v, bool write)
{
	uint32_t l;
	int err;

	err = lane_order(e, job, v->write_lane, v->write_ticket);
	for (l = 0; write && !err && l < job->space->nlanes; l++)
		err = lane_order(e, job, l, v->read_ticket[l]);
	return err;
}

/*
 * The lane @job runs on (see the top of this file).  Locked, with the
 * device held (nobody else submits to its spaces).
 */
static void choose_lane_locked(struct pd_engine *e, struct pd_job *job)
{
	struct pd_space *space = job->space;
	uint32_t n = space->nlanes, i, l, best = 0, producer = n;
	long score, best_score = -1;
	bool chain = false;

	for (i = 0; i < job->inv.n_ports && producer == n; i++) {
		const struct ptask_invocation_port *p = &job->ports[i];
		struct pd_dbrec *rec;
		struct pd_view *v;

		if (!pd_port_is_input(p) || !p->datablock)
			continue;
		rec = pd_rec_find_locked(e, p->datablock);
		v = rec ? pd_view_find_locked(e, rec, space) : NULL;
		if (v && v->valid && v->write_ticket) {
			producer = v->write_lane;
			chain = rec->ahead_writer != NULL;
		}
	}
	/*
	 * A chain's next hop stays on its producer's lane: it depends on
	 * that lane's last work anyway, so another lane gains no overlap and
	 * costs a lane_wait, and it breaks the launches held there
	 * (worker.c) into two flushes.
	 */
	if (chain) {
		job->lane = producer;
		e->stats.per_lane[producer]++;
		return;
	}
	for (l = 0; l < n; l++) {
		score = (long)space->lanes[l].njobs - (l == producer);
		if (best_score < 0 || score < best_score) {
			best = l;
			best_score = score;
		}
	}
	job->lane = best;
	e->stats.per_lane[best]++;
}

/*
 * Input @i in place: its host pages, current and registered, at their
 * device address.  Locked on entry/exit.  Return: true when it is.
 */
static bool input_in_place(struct pd_device *dev, struct pd_job *job,
			   uint32_t i)
{
	struct pd_engine *e = dev->e;
	struct pd_jport *jp = &job->jp[i];
	uint64_t dptr;
	int err;

	if (!jp->rec->host_valid || jp->rec->bytes > dev->inplace_max ||
	    (job->ports[i].flags & PTASK_PORT_INOUT))
		return false;
	if (pd_job_map_input_locked(e, job, i))
		return false;	/* logged; the copy path meets it again */
	pd_engine_unlock(e);
	err = e->be->ops->host_device_ptr(e->be, job->space->be_space,
					  jp->host, jp->rec->bytes, &dptr);
	pd_engine_lock(e);
	if (err)
		return false;
	jp->inplace = true;
	jp->value = dptr;
	e->stats.bytes_inplace += jp->rec->bytes;
	return true;
}

/*
 * Make input @i's datablock valid in the job's space: a view there
 * (allocated, evicting if need be), then nothing if it is valid, an H2D
 * copy when the host pages are current, else a D2D copy from the best
 * other space holding it.  Locked on entry/exit; the view stays pinned.
 */
static int make_valid(struct pd_device *dev, struct pd_job *job, uint32_t i)
{
	struct pd_engine *e = dev->e;
	const struct pd_backend_ops *ops = e->be->ops;
	struct pd_jport *jp = &job->jp[i];
	struct pd_dbrec *rec = jp->rec;
	struct pd_space *space = job->space;
	struct pd_view *v = pd_view_find_locked(e, rec, space), *src;
	uint32_t generation;
	uint64_t dptr, cap, t;
	int err;

	if (!v) {
		t = pd_debug_now_ns();
		err = pd_devmem_alloc_locked(dev, space, rec->bytes, &dptr,
					     &cap);
		job->alloc_ns += pd_debug_now_ns() - t;
		if (err)
			return err;
		/* Only the device's holder adds views to its spaces. */
		v = pd_view_add_locked(e, rec, space, dptr, cap);
		if (!v) {
			pd_devmem_pool_locked(space, dptr, cap);
			return -ENOMEM;
		}
	}
	v->pins++;
	jp->view = v;
	jp->value = v->dptr;
	pd_view_touch_locked(e, v);
	/* In/out: the kernel writes it; else a copy in writes it. */
	err = view_order(e, job, v, !v->valid ||
			 (job->ports[i].flags & PTASK_PORT_INOUT));
	if (err)
		return err;
	if (job->ports[i].flags & PTASK_PORT_INOUT)
		jp->wrote = true;
	if (v->valid)
		return 0;
	jp->wrote = true;
	generation = rec->generation;
	if (rec->host_valid) {
		err = pd_job_map_input_locked(e, job, i);
		if (err)
			return err;
		t = pd_debug_now_ns();
		pd_engine_unlock(e);
		err = ops->copy_h2d(e->be, space->be_space, job->lane, v->dptr,
				    jp->host, rec->bytes);
		pd_engine_lock(e);
		job->copy_ns += pd_debug_now_ns() - t;
		if (err)
			return err;
		e->stats.bytes_h2d += rec->bytes;
	} else {
		src = pd_rec_copy_source_locked(e, rec, space);
		if (!src) {
			pd_log_err("engine: datablock %u is current nowhere",
				   rec->handle);
			return -EIO;
		}
		/*
		 * Pinned until the copy is done: it is waited for at once
		 * (rare: a migration), so that no reader in flight of a view
		 * lives in another space (engine_priv.h, "Hazards").
		 */
		src->pins++;
		jp->src_view = src;
		t = pd_debug_now_ns();
		pd_engine_unlock(e);
		err = ops->copy_d2d(e->be, space->be_space, job->lane, v->dptr,
				    src->space->be_space,
				    src->write_ticket ? src->write_lane : 0,
				    src->dptr, rec->bytes);
		if (!err)
			err = lane_drain(e, job);
		pd_engine_lock(e);
		src->pins--;
		jp->src_view = NULL;
		job->copy_ns += pd_debug_now_ns() - t;
		if (err)
			return err;
		e->stats.bytes_d2d += rec->bytes;
		if (!src->valid)
			return 0;	/* pushed again meanwhile */
	}
	/* Unless pushed again meanwhile: then the next job copies anew. */
	if (rec->generation == generation && !rec->dead)
		v->valid = true;
	return 0;
}

/*
 * Input @i passed by value (PTASK_BIND_PARAM): the parameter is its host
 * pages, made current first when the bytes are only on a device (copied
 * back through the job's space, which makes the host pages valid for
 * everybody).  Locked on entry/exit.
 */
static int read_by_value(struct pd_device *dev, struct pd_job *job,
			 uint32_t i)
{
	struct pd_engine *e = dev->e;
	struct pd_jport *jp = &job->jp[i];
	struct pd_dbrec *rec = jp->rec;
	uint32_t generation = rec->generation;
	void *space;
	int err;

	if (rec->bytes > PD_BYVALUE_MAX || (job->ports[i].flags &
					    PTASK_PORT_INOUT)) {
		pd_log_err("engine: ptask %u: port %u: a by-value parameter of %llu bytes%s",
			   job->inv.ptask, job->ports[i].index,
			   (unsigned long long)rec->bytes,
			   rec->bytes > PD_BYVALUE_MAX ? " (4 KiB at most)" :
			   " cannot be in/out");
		return -EINVAL;
	}
	err = pd_job_map_input_locked(e, job, i);
	if (err)
		return err;
	jp->by_value = true;
	if (rec->host_valid)
		return 0;
	err = make_valid(dev, job, i);
	if (err)
		return err;
	space = job->space->be_space;
	pd_engine_unlock(e);
	err = e->be->ops->copy_d2h(e->be, space, job->lane, jp->host,
				   jp->view->dptr, rec->bytes);
	if (!err)
		err = lane_drain(e, job);
	pd_engine_lock(e);
	if (err)
		return err;
	e->stats.bytes_d2h += rec->bytes;
	if (rec->generation == generation && jp->view->valid) {
		rec->host_valid = true;
		pd_rec_drop_map_locked(e, rec);
	}
	return 0;
}

static bool is_peer_output(const struct pd_job *job, uint32_t index);

/*
 * A new datablock for output @i, with a view in the job's space; @defer:
 * the helper's held-back wake-ups (pd_engine_help), or NULL.
 */
static int make_output(struct pd_device *dev, struct pd_job *job, uint32_t i,
		       struct pd_wake_defer *defer)
{
	struct pd_engine *e = dev->e;
	const struct ptask_invocation_port *p = &job->ports[i];
	struct pd_jport *jp = &job->jp[i];
	uint64_t dptr, cap, t;
	struct pd_view *v;
	uint32_t handle;
	void *addr;
	int err;

	if (!p->bytes) {
		pd_log_err("engine: ptask %u: output port %u has no template, so no size",
			   job->inv.ptask, p->index);
		return -EINVAL;
	}
	t = pd_debug_now_ns();
	pd_engine_unlock(e);
	/* Taken ahead: the core made it (its invocation holds it). */
	if (job->taken_ahead && p->datablock && jp->host) {
		handle = p->datablock;	/* mapped already (map_batch) */
		addr = jp->host;
		err = 0;
	} else if ((job->taken_ahead || (p->flags & PTASK_INVP_MADE)) &&
		   p->datablock) {
		/* ... or made it as it was taken (PTASK_TAKE_OUTPUTS) */
		handle = p->datablock;
		err = e->src->ops->db_map(e->src, handle, p->mmap_offset,
					  p->bytes, &addr);
	} else {
		err = e->src->ops->db_create(e->src, &job->inv, p->bytes,
					     &handle, &addr, defer);
	}
	pd_engine_lock(e);
	job->source_ns += pd_debug_now_ns() - t;
	if (err)
		return err;
	jp->created = handle;
	jp->host = addr;
	/* A record of this handle is of a dead namesake (kernel mode has
	 * no pd_engine_forget; handles wrap after 2^32). */
	jp->rec = pd_rec_find_locked(e, handle);
	if (jp->rec)
		pd_rec_forget_locked(e, jp->rec);
	jp->rec = pd_rec_get_locked(e, handle, p->bytes);
	if (!jp->rec)
		return -ENOMEM;
	jp->rec->pins++;
	if ((p->flags & PTASK_INVP_TO_CLIENT) && p->bytes <= dev->inplace_max &&
	    !is_peer_output(job, p->index)) {
		uint64_t dptr_in_place;

		pd_engine_unlock(e);
		err = e->be->ops->host_device_ptr(e->be, job->space->be_space,
						  addr, p->bytes,
						  &dptr_in_place);
		pd_engine_lock(e);
		if (!err) {
			jp->inplace = true;
			jp->value = dptr_in_place;
			e->stats.bytes_inplace += p->bytes;
			return 0;
		}
	}
	t = pd_debug_now_ns();
	err = pd_devmem_alloc_locked(dev, job->space, p->bytes, &dptr, &cap);
	job->alloc_ns += pd_debug_now_ns() - t;
	if (err)
		return err;
	v = pd_view_add_locked(e, jp->rec, job->space, dptr, cap);
	if (!v) {
		pd_devmem_pool_locked(job->space, dptr, cap);
		return -ENOMEM;
	}
	v->pins++;
	jp->view = v;
	jp->value = dptr;
	jp->wrote = true;
	return 0;
}

/*
 * Does some in/out input of @job name output port @index as its peer?
 * A segment has none (the core fuses no in/out port): not looked for
 * there, which would cost every member a walk of all its records.
 */
static bool is_peer_output(const struct pd_job *job, uint32_t index)
{
	uint32_t i;

	if (job->nmembers > 1)
		return false;	/* nor has a batch (engine.c, batchable) */
	for (i = 0; i < job->inv.n_ports; i++) {
		const struct ptask_invocation_port *p = &job->ports[i];

		if (pd_port_is_input(p) && (p->flags & PTASK_PORT_INOUT) &&
		    p->peer == index)
			return true;
	}
	return false;
}

/*
 * The kernel parameters of @job's member @mb, as port record numbers in
 * param_index order (insertion sort: at most PTASK_MAX_PORTS).  -EINVAL
 * for two ports on one parameter or an in/out input without an output
 * peer (a segment has no in/out port: the core fuses none).
 */
static int param_order(const struct pd_job *job, const struct pd_member *mb,
		       uint32_t order[], uint32_t *n)
{
	uint32_t i, j, k = 0;

	if (mb->nports > PTASK_MAX_PORTS)
		return -EINVAL;
	for (i = mb->first; i < mb->first + mb->nports; i++) {
		const struct ptask_invocation_port *p = &job->ports[i];

		if (p->flags & PTASK_PORT_RUNTIME)
			continue;
		if (p->kind == PTASK_PORT_OUTPUT && is_peer_output(job, p->index))
			continue;
		if (pd_port_is_input(p) && (p->flags & PTASK_PORT_INOUT) &&
		    (job->nmembers > 1 || p->peer >= job->inv.n_ports ||
		     job->ports[p->peer].kind != PTASK_PORT_OUTPUT))
			return -EINVAL;
		for (j = k; j > 0 &&
		     job->ports[order[j - 1]].param_index > p->param_index; j--)
			order[j] = order[j - 1];
		if (j > 0 &&
		    job->ports[order[j - 1]].param_index == p->param_index)
			return -EINVAL;
		order[j] = i;
		k++;
	}
	if (k > PD_MAX_PARAMS)
		return -E2BIG;
	*n = k;
	return 0;
}

/* Where a link starts in a segment's scratch buffer: aligned so. */
#define PD_LINK_ALIGN	256ULL

/*
 * A segment's links: the scratch device memory each output marked
 * PTASK_INVP_FUSED writes and the next member's launch reads, all in one
 * buffer from the space's pools, owned by the first link's record (one
 * allocation a round, however deep; a chain's buffer comes back at the
 * same address, so a replayed graph needs no patching).  Each link's
 * record gets its address (pd_jport.value).  Locked on entry/exit.
 */
static int make_links(struct pd_device *dev, struct pd_job *job)
{
	uint64_t bytes = 0, off = 0, dptr, cap, t;
	uint32_t i, first = UINT32_MAX;
	int err;

	for (i = 0; i < job->inv.n_ports; i++) {
		const struct ptask_invocation_port *p = &job->ports[i];

		if (p->kind != PTASK_PORT_OUTPUT ||
		    !(p->flags & PTASK_INVP_FUSED))
			continue;
		if (!p->bytes || p->bytes > UINT64_MAX / 2 - bytes)
			return -EINVAL;
		if (first == UINT32_MAX)
			first = i;
		bytes += (p->bytes + PD_LINK_ALIGN - 1) & ~(PD_LINK_ALIGN - 1);
	}
	if (first == UINT32_MAX)
		return 0;
	t = pd_debug_now_ns();
	err = pd_devmem_alloc_locked(dev, job->space, bytes, &dptr, &cap);
	job->alloc_ns += pd_debug_now_ns() - t;
	if (err)
		return err;
	job->jp[first].scratch_cap = cap;
	for (i = first; i < job->inv.n_ports; i++) {
		const struct ptask_invocation_port *p = &job->ports[i];

		if (p->kind != PTASK_PORT_OUTPUT ||
		    !(p->flags & PTASK_INVP_FUSED))
			continue;
		job->jp[i].value = dptr + off;
		off += (p->bytes + PD_LINK_ALIGN - 1) & ~(PD_LINK_ALIGN - 1);
	}
	return 0;
}

/*
 * The parameters of member @m of @job: outputs made (a segment's links
 * in scratch memory, each read by the next member), inputs valid where
 * its kernel reads them.  @link: the last link made (the member before
 * reads it).  Locked on entry/exit.
 */
static int prepare_member(struct pd_device *dev, struct pd_job *job,
			  uint32_t m, uint64_t *link,
			  struct pd_wake_defer *defer)
{
	const struct pd_member *mb = &job->members[m];
	uint32_t order[PTASK_MAX_PORTS], n, i;
	int err;

	err = param_order(job, mb, order, &n);
	if (err) {
		pd_log_err("engine: ptask %u: ports do not make a parameter list (a shared param_index, or an in/out input without an output peer)",
			   mb->info->handle);
		return err;
	}
	/* first what this member reads of the one before: then its own */
	for (i = mb->first; i < mb->first + mb->nports; i++)
		if (pd_port_is_input(&job->ports[i]) &&
		    (job->ports[i].flags & PTASK_INVP_FUSED))
			job->jp[i].value = *link;
	for (i = 0; i < n && !err; i++) {
		const struct ptask_invocation_port *p = &job->ports[order[i]];
		struct pd_jport *jp = &job->jp[order[i]];

		if (p->flags & PTASK_INVP_FUSED) {
			/* its address is make_links's */
			if (p->kind == PTASK_PORT_OUTPUT)
				*link = jp->value;
		} else if (p->kind == PTASK_PORT_OUTPUT) {
			err = make_output(dev, job, order[i], defer);
		} else if (!jp->rec) {
			err = -EINVAL;		/* an input without datablock */
		} else if (pd_port_by_value(p)) {
			err = read_by_value(dev, job, order[i]);
		} else if (!input_in_place(dev, job, order[i])) {
			err = make_valid(dev, job, order[i]);
		}
	}
	return err;
}

/**
 * pd_job_launch_desc() - the launch of @job's member @m, prepared
 * @job: the job (pd_job_prepare succeeded)
 * @m: which member (0: the job's ptask)
 * @launch: filled in: parameters and geometry (@untimed and @hold are
 *	left alone)
 */
void pd_job_launch_desc(const struct pd_job *job, uint32_t m,
			struct pd_launch *launch)
{
	const struct pd_member *mb = &job->members[m];
	const struct pd_ptask_info *info = mb->info;
	uint32_t order[PTASK_MAX_PORTS], n = 0, i;
	uint64_t threads = 0;

	/* it succeeded in pd_job_prepare */
	if (param_order(job, mb, order, &n))
		n = 0;
	for (i = 0; i < n; i++) {
		const struct ptask_invocation_port *p = &job->ports[order[i]];
		const struct pd_jport *jp = &job->jp[order[i]];

		launch->params[i] = jp->by_value ? jp->host :
				    (void *)&jp->value;
		launch->param_bytes[i] = jp->by_value ? (uint32_t)p->bytes :
				       sizeof(uint64_t);
		if (!threads && (p->kind == PTASK_PORT_OUTPUT ||
				 (p->flags & PTASK_PORT_INOUT)))
			threads = p->bytes / 4;
	}
	launch->nparams = n;
	launch->shared_bytes = info->shared_bytes;
	if (info->grid[0] && info->block[0]) {
		memcpy(launch->grid, info->grid, sizeof(launch->grid));
		memcpy(launch->block, info->block, sizeof(launch->block));
	} else {
		launch->block[0] = PD_DEFAULT_BLOCK;
		launch->grid[0] = (uint32_t)((threads + PD_DEFAULT_BLOCK - 1) /
					     PD_DEFAULT_BLOCK);
		if (!launch->grid[0])
			launch->grid[0] = 1;
		launch->grid[1] = launch->grid[2] = 1;
		launch->block[1] = launch->block[2] = 1;
	}
}

/**
 * pd_job_prepare() - everything before @job's launch
 * @dev: the device (on the thread holding it), job->space open there
 * @job: the job
 * @launch: its (its first member's) launch description, filled in
 * @defer: the helper's held-back wake-ups (pd_engine_help), or NULL
 *
 * Records and generations of the inputs, valid views (or bytes) for the
 * parameters, new outputs, a segment's links; then the launch
 * description.  What it pinned and made stays in @job for
 * pd_job_finish, also on error.  No lock held on entry or exit.
 * Return: 0 or -errno.
 */
int pd_job_prepare(struct pd_device *dev, struct pd_job *job,
		   struct pd_launch *launch, struct pd_wake_defer *defer)
{
	struct pd_engine *e = dev->e;
	uint64_t link = 0;
	uint32_t i, m;
	int err = 0;

	pd_engine_lock(e);
	choose_lane_locked(e, job);
	for (i = 0; i < job->inv.n_ports; i++) {
		const struct ptask_invocation_port *p = &job->ports[i];
		struct pd_jport *jp = &job->jp[i];

		if (!pd_port_is_input(p) || !p->datablock)
			continue;
		jp->rec = pd_rec_get_locked(e, p->datablock, p->bytes);
		if (!jp->rec) {
			err = -ENOMEM;
			goto out_unlock;
		}
		jp->rec->pins++;
		pd_rec_see_generation_locked(e, jp->rec, p->generation);
		jp->gen = p->generation;
	}
	if (pd_job_is_segment(job))
		err = make_links(dev, job);
	if (!err && job->batch && e->src->ops->db_map_many)
		map_batch(dev, job);
	for (m = 0; m < job->nmembers && !err; m++)
		err = prepare_member(dev, job, m, &link, defer);
out_unlock:
	pd_engine_unlock(e);
	if (!err)
		pd_job_launch_desc(job, 0, launch);
	return err;
}
