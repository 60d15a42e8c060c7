// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * worker.c - one thread per device: it owns the device's memory spaces
 * (opens them on first use, closes them at stop), the kernels loaded in
 * them, and runs the jobs placed on the device, one at a time (a short
 * job a helper claimed runs on the helper's thread instead, the same
 * way: pd_worker_run_claimed):
 *
 *  1. the space of the job's owner (per-client isolation) or the shared
 *     one, and the ptask's kernel loaded in it;
 *  2. inputs: a record per datablock at the invocation's generation; a
 *     view in the space made valid if it is not (H2D from the host pages
 *     when they are current, else D2D from another space holding it);
 *  3. outputs: a datablock per output port (db_create) with a fresh view;
 *  4. the launch: parameters by param_index, geometry explicit or
 *     inferred; then D2H of the outputs a client will pull; one sync,
 *     which gives the GPU time;
 *  5. commit: outputs valid where they were made (and in the host pages
 *     if written back), an in/out input valid only in this space; then
 *     EXEC_COMPLETE.  Any error completes the invocation with it (its
 *     graph fails) and releases the outputs made.
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
#include <stdlib.h>
#include <string.h>
#include "daemon/backend/host.h"
#include "daemon/engine/engine_priv.h"

/* The space of @owner on @dev, opened on first use.  No lock held. */
static int space_get(struct pd_device *dev, uint64_t owner,
		     struct pd_space **out)
{
	struct pd_engine *e = dev->e;
	struct ptask_list *pos;
	struct pd_space *s;
	unsigned int c;
	void *bs;
	int err;

	pd_engine_lock(e);
	ptask_list_for_each(pos, &dev->spaces) {
		s = ptask_list_entry(pos, struct pd_space, node);
		if (s->owner == owner) {
			pd_engine_unlock(e);
			*out = s;
			return 0;
		}
	}
	pd_engine_unlock(e);
	/* Only this worker adds spaces to @dev: no one races the open. */
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = e->be->ops->space_open(e->be, dev->index, owner, &bs);
	if (err) {
		pd_log_err("engine: %s: opening a space for pid %llu: %d",
			   e->be->info[dev->index].name,
			   (unsigned long long)owner, err);
		free(s);
		return err;
	}
	s->dev = dev;
	s->owner = owner;
	s->be_space = bs;
	for (c = 0; c < PD_POOL_CLASSES; c++)
		ptask_list_init(&s->pool[c]);
	s->last_use_ns = pd_now_ns();
	pd_engine_lock(e);
	ptask_list_add_tail(&s->node, &dev->spaces);
	e->stats.spaces++;
	pd_engine_unlock(e);
	*out = s;
	return 0;
}

/*
 * The kernel of @info in @space, loaded on first use; kernels of ptasks
 * forgotten meanwhile are unloaded on the way.  The list is the worker's
 * own; only the info references need the lock.
 */
static int kernel_get(struct pd_device *dev, struct pd_space *space,
		      struct pd_ptask_info *info, void **kernel)
{
	struct pd_engine *e = dev->e;
	struct pd_kernel_ref **pp = &space->kernels, *ref;
	int err;

	while ((ref = *pp)) {
		bool dead;

		pd_engine_lock(e);
		dead = ref->info->dead;
		pd_engine_unlock(e);
		if (ref->info == info && !dead) {
			*kernel = ref->kernel;
			return 0;
		}
		if (!dead) {
			pp = &ref->next;
			continue;
		}
		*pp = ref->next;
		e->be->ops->kernel_unload(e->be, space->be_space, ref->kernel);
		pd_engine_lock(e);
		pd_info_put_locked(e, ref->info);
		pd_engine_unlock(e);
		free(ref);
	}
	ref = calloc(1, sizeof(*ref));
	if (!ref)
		return -ENOMEM;
	err = e->be->ops->kernel_load(e->be, space->be_space, info->code,
				      info->code_len, info->entry,
				      &ref->kernel);
	if (err) {
		pd_log_err("engine: %s: loading kernel '%s' of ptask %u: %d",
			   e->be->info[dev->index].name, info->entry,
			   info->handle, err);
		free(ref);
		return err;
	}
	pd_engine_lock(e);
	info->refs++;
	pd_engine_unlock(e);
	ref->info = info;
	ref->next = space->kernels;
	space->kernels = ref;
	*kernel = ref->kernel;
	return 0;
}

/* Is @view's datablock current nowhere but in device memory? */
static bool dirty_view(const struct pd_view *view)
{
	const struct pd_dbrec *rec = view->rec;

	return view->valid && !rec->host_valid && !rec->dead &&
	       rec->host_map;
}

/**
 * pd_worker_writebehind_locked() - write back long-idle device-only data
 * @dev: the device (on its worker, while it has no job)
 * @now_ns: now
 *
 * A datablock current only on a device holds a mapping of its host
 * pages.  In user mode that mapping keeps the datablock's memory alive,
 * so the namespace cannot say it died (pd_engine_forget) while the
 * engine holds it.  Intermediate results are normally consumed at once;
 * one left dirty for PD_WRITEBEHIND_NS is written back, which frees the
 * mapping: a dead datablock is then forgotten, a live one keeps its
 * (now clean) views.  At most 16 per call, so a job placed meanwhile
 * waits little.
 */
void pd_worker_writebehind_locked(struct pd_device *dev, uint64_t now_ns)
{
	struct pd_engine *e = dev->e;
	unsigned int done = 0;
	bool again = true;

	pd_assert_locked(e);
	while (again && done < 16 && !dev->job) {
		struct ptask_list *pos;

		again = false;
		ptask_list_for_each(pos, &dev->lru) {
			struct pd_view *v = ptask_list_entry(pos,
					struct pd_view, lru_node);

			struct pd_dbrec *rec = v->rec;
			int err;

			if (v->pins || !dirty_view(v) ||
			    now_ns - rec->dirty_ns < PD_WRITEBEHIND_NS)
				continue;
			rec->pins++;
			err = pd_devmem_writeback_locked(dev, v);
			pd_rec_unpin_locked(e, rec);
			if (err)
				return;	/* logged; try again next time */
			done++;
			again = true;
			break;
		}
	}
}

/*
 * Close @space: write back what only it holds, drop its views, free its
 * pool, unload its kernels.  -EBUSY (and the space stays, maybe emptier)
 * when a view of it is in use: another device copies from it.  Locked on
 * entry and exit; the worker of @dev only.
 */
static int close_space_locked(struct pd_device *dev, struct pd_space *space)
{
	struct pd_engine *e = dev->e;
	struct pd_kernel_ref *ref;
	bool again = true;

	while (again) {
		struct ptask_list *pos;

		again = false;
		ptask_list_for_each(pos, &dev->lru) {
			struct pd_view *v = ptask_list_entry(pos,
					struct pd_view, lru_node);
			struct pd_dbrec *rec = v->rec;

			if (v->space != space)
				continue;
			if (v->pins)
				return -EBUSY;
			if (dirty_view(v)) {
				/* The pin keeps @v: only we drop its views. */
				rec->pins++;
				if (pd_devmem_writeback_locked(dev, v)) {
					pd_log_err("engine: datablock %u lost its only copy",
						   rec->handle);
					v->valid = false;
				}
				pd_rec_unpin_locked(e, rec);
			} else {
				pd_view_drop_locked(e, v);
				pd_rec_maybe_free_locked(e, rec);
			}
			again = true;
			break;
		}
	}
	pd_devmem_trim_space_locked(space);
	PD_ASSERT(!space->pooled_bytes);
	ptask_list_del(&space->node);
	e->stats.spaces--;
	pd_engine_unlock(e);
	for (ref = space->kernels; ref; ref = ref->next)
		e->be->ops->kernel_unload(e->be, space->be_space, ref->kernel);
	e->be->ops->space_close(e->be, space->be_space);
	pd_engine_lock(e);
	while ((ref = space->kernels)) {
		space->kernels = ref->next;
		pd_info_put_locked(e, ref->info);
		free(ref);
	}
	free(space);
	return 0;
}

/**
 * pd_worker_close_idle_locked() - close clients' spaces nobody used lately
 * @dev: the device (on its worker, while it has no job)
 * @now_ns: now
 *
 * A per-client space is a CUDA context (hundreds of MiB of device memory
 * and a slot of the device's context switching): one whose client is
 * gone, or idle for space_idle_ms, is closed.  The next job of that
 * client opens it again and copies its inputs in again.
 */
void pd_worker_close_idle_locked(struct pd_device *dev, uint64_t now_ns)
{
	struct pd_engine *e = dev->e;
	uint64_t idle = (uint64_t)(e->cfg.space_idle_ms ?
				   e->cfg.space_idle_ms : PD_SPACE_IDLE_MS) *
			1000000ULL;
	bool again = true;

	pd_assert_locked(e);
	if (e->cfg.shared_isolation)
		return;
	while (again && !dev->job) {
		struct ptask_list *pos;

		again = false;
		ptask_list_for_each(pos, &dev->spaces) {
			struct pd_space *s = ptask_list_entry(pos,
					struct pd_space, node);

			if (now_ns - s->last_use_ns < idle)
				continue;
			/* Not again soon if busy: a job will touch it. */
			s->last_use_ns = now_ns;
			if (!close_space_locked(dev, s)) {
				e->stats.spaces_closed++;
				again = true;
			}
			break;
		}
	}
}

/*
 * Stop: write back what only this device holds, drop every view, free
 * the pools, unload the kernels and close the spaces.  Locked on entry
 * and exit.
 */
static void shutdown_locked(struct pd_device *dev)
{
	while (!ptask_list_empty(&dev->spaces)) {
		struct pd_space *s = ptask_list_first(&dev->spaces,
						      struct pd_space, node);

		/* Every job is done: nothing can pin a view. */
		int err = close_space_locked(dev, s);

		PD_ASSERT(!err);
	}
	PD_ASSERT(ptask_list_empty(&dev->lru));
}

static bool is_input(const struct ptask_invocation_port *p)
{
	return p->kind == PTASK_PORT_INPUT || p->kind == PTASK_PORT_STICKY;
}

/* Map input @i's host pages for the job, once.  Locked on entry/exit. */
static int job_map_input(struct pd_engine *e, struct pd_job *job, uint32_t i)
{
	const struct ptask_invocation_port *p = &job->ports[i];
	struct pd_jport *jp = &job->jp[i];
	uint64_t t;
	void *addr;
	int err;

	if (jp->host)
		return 0;
	t = pd_now_ns();
	pd_engine_unlock(e);
	err = e->src->ops->db_map(e->src, p->datablock, p->mmap_offset,
				  p->bytes, &addr);
	pd_engine_lock(e);
	job->source_ns += pd_now_ns() - t;
	if (err) {
		pd_log_err("engine: mapping datablock %u: %d", p->datablock,
			   err);
		return err;
	}
	jp->host = addr;
	return 0;
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
		t = pd_now_ns();
		err = pd_devmem_alloc_locked(dev, space, rec->bytes, &dptr,
					     &cap);
		job->alloc_ns += pd_now_ns() - t;
		if (err)
			return err;
		/* Only this worker adds views to its spaces: still none. */
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
	if (v->valid)
		return 0;
	generation = rec->generation;
	if (rec->host_valid) {
		err = job_map_input(e, job, i);
		if (err)
			return err;
		t = pd_now_ns();
		pd_engine_unlock(e);
		err = ops->copy_h2d(e->be, space->be_space, v->dptr, jp->host,
				    rec->bytes);
		pd_engine_lock(e);
		job->copy_ns += pd_now_ns() - t;
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
		/* Pinned until the job's sync: the copy may be queued. */
		src->pins++;
		jp->src_view = src;
		t = pd_now_ns();
		pd_engine_unlock(e);
		err = ops->copy_d2d(e->be, space->be_space, v->dptr,
				    src->space->be_space, src->dptr,
				    rec->bytes);
		pd_engine_lock(e);
		job->copy_ns += pd_now_ns() - t;
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
	err = job_map_input(e, job, i);
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
	err = e->be->ops->copy_d2h(e->be, space, jp->host, jp->view->dptr,
				   rec->bytes);
	if (!err)
		err = e->be->ops->sync(e->be, space, NULL);
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
	t = pd_now_ns();
	pd_engine_unlock(e);
	err = e->src->ops->db_create(e->src, &job->inv, p->bytes, &handle,
				     &addr, defer);
	pd_engine_lock(e);
	job->source_ns += pd_now_ns() - t;
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
	t = pd_now_ns();
	err = pd_devmem_alloc_locked(dev, job->space, p->bytes, &dptr, &cap);
	job->alloc_ns += pd_now_ns() - t;
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
	return 0;
}

/* Does some in/out input of @job name output port @index as its peer? */
static bool is_peer_output(const struct pd_job *job, uint32_t index)
{
	uint32_t i;

	for (i = 0; i < job->inv.n_ports; i++) {
		const struct ptask_invocation_port *p = &job->ports[i];

		if (is_input(p) && (p->flags & PTASK_PORT_INOUT) &&
		    p->peer == index)
			return true;
	}
	return false;
}

/*
 * The job's kernel parameters, as port numbers in param_index order
 * (insertion sort: at most PTASK_MAX_PORTS).  -EINVAL for two ports on
 * one parameter or an in/out input without an output peer.
 */
static int param_order(const struct pd_job *job, uint32_t order[],
		       uint32_t *n)
{
	uint32_t i, j, k = 0;

	for (i = 0; i < job->inv.n_ports; i++) {
		const struct ptask_invocation_port *p = &job->ports[i];

		if (p->flags & PTASK_PORT_RUNTIME)
			continue;
		if (p->kind == PTASK_PORT_OUTPUT && is_peer_output(job, p->index))
			continue;
		if (is_input(p) && (p->flags & PTASK_PORT_INOUT) &&
		    (p->peer >= job->inv.n_ports ||
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

/*
 * Everything before the launch: records and generations of the inputs,
 * valid views (or bytes) for the parameters, new outputs; then the
 * launch description.  No lock held on entry or exit.
 */
static int prepare(struct pd_device *dev, struct pd_job *job,
		   struct pd_launch *launch, struct pd_wake_defer *defer)
{
	struct pd_engine *e = dev->e;
	const struct pd_ptask_info *info = job->info;
	uint32_t order[PTASK_MAX_PORTS], n, i;
	uint64_t threads = 0;
	int err;

	err = param_order(job, order, &n);
	if (err) {
		pd_log_err("engine: ptask %u: ports do not make a parameter list (a shared param_index, or an in/out input without an output peer)",
			   job->inv.ptask);
		return err;
	}
	pd_engine_lock(e);
	for (i = 0; i < job->inv.n_ports; i++) {
		const struct ptask_invocation_port *p = &job->ports[i];
		struct pd_jport *jp = &job->jp[i];

		if (!is_input(p) || !p->datablock)
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
	for (i = 0; i < n && !err; i++) {
		const struct ptask_invocation_port *p = &job->ports[order[i]];
		struct pd_jport *jp = &job->jp[order[i]];

		if (p->kind == PTASK_PORT_OUTPUT)
			err = make_output(dev, job, order[i], defer);
		else if (!jp->rec)
			err = -EINVAL;		/* an input without datablock */
		else if (pd_port_by_value(p))
			err = read_by_value(dev, job, order[i]);
		else
			err = make_valid(dev, job, order[i]);
		launch->params[i] = jp->by_value ? jp->host : &jp->value;
		launch->param_bytes[i] = jp->by_value ? (uint32_t)p->bytes :
				       sizeof(uint64_t);
		if (!threads && (p->kind == PTASK_PORT_OUTPUT ||
				 (p->flags & PTASK_PORT_INOUT)))
			threads = p->bytes / 4;
	}
	launch->nparams = n;
out_unlock:
	pd_engine_unlock(e);
	if (err)
		return err;
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
	return 0;
}

/* Output port @i's datablock is pulled by a client: write it back. */
static bool to_client(const struct pd_job *job, uint32_t i)
{
	return job->ports[i].kind == PTASK_PORT_OUTPUT &&
	       (job->ports[i].flags & PTASK_INVP_TO_CLIENT);
}

/*
 * After the launch: queue the D2H copies of what clients will pull (new
 * outputs and in/out inputs whose peer feeds a client), and map every
 * in/out input (its record will hold a mapping while it is dirty).  No
 * lock held.
 */
static int after_launch(struct pd_device *dev, struct pd_job *job)
{
	struct pd_engine *e = dev->e;
	uint64_t bytes = 0;
	uint32_t i;
	int err = 0;

	pd_engine_lock(e);
	for (i = 0; i < job->inv.n_ports && !err; i++) {
		const struct ptask_invocation_port *p = &job->ports[i];
		struct pd_jport *jp = &job->jp[i];
		bool inout = is_input(p) && (p->flags & PTASK_PORT_INOUT);

		if (inout)
			err = job_map_input(e, job, i);
		if (err || !jp->view ||
		    !(inout ? to_client(job, p->peer) : to_client(job, i)))
			continue;
		pd_engine_unlock(e);
		err = e->be->ops->copy_d2h(e->be, job->space->be_space,
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
		if (!is_input(p) || !(p->flags & PTASK_PORT_INOUT) ||
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
		if (is_input(&job->ports[i]) &&
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

/* Complete @job with its outputs, or fail it with @err. */
static void finish(struct pd_device *dev, struct pd_job *job, int err,
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

/*
 * Run @job on @dev, from space to complete, for the helper whose
 * held-back wake-ups @defer are (NULL: on the worker).  No lock held.
 */
static void run_job(struct pd_device *dev, struct pd_job *job,
		    struct pd_wake_defer *defer)
{
	struct pd_engine *e = dev->e;
	const struct pd_backend_ops *ops = e->be->ops;
	uint32_t job_ptask = job->inv.ptask;	/* @job is freed by finish */
	uint64_t alloc_ns, source_ns, copy_ns;
	struct pd_launch launch = { 0 };
	uint64_t gpu_ns = 0, t0 = pd_now_ns(), start = 0, synced = 0;
	void *kernel = NULL;
	int err;

	err = space_get(dev, pd_sched_owner(e, job), &job->space);
	if (!err)
		err = kernel_get(dev, job->space, job->info, &kernel);
	if (!err)
		err = prepare(dev, job, &launch, defer);
	if (!err) {
		start = pd_now_ns();
		err = ops->launch(e->be, job->space->be_space, kernel, &launch);
	}
	if (!err)
		err = after_launch(dev, job);
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
	finish(dev, job, err, gpu_ns, start ? synced - start : 0, defer);
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
	pd_worker_writebehind_locked(dev, now);
	pd_worker_close_idle_locked(dev, now);
	dev->tidying = false;
}

/**
 * pd_worker_can_claim_locked() - may a helper run @job on @dev itself?
 * @dev: an idle device placement chose for @job
 * @job: the job
 *
 * Only short work (PD_INLINE_RUN_NS, PD_INLINE_BYTES: the helper is a
 * client's connection, which waits meanwhile) whose space and kernel are
 * ready on @dev, so a helper never opens a context or loads code.  The
 * device is idle and its worker is not tidying, so nobody changes its
 * spaces or their kernel lists while they are read here.
 */
bool pd_worker_can_claim_locked(struct pd_device *dev,
				const struct pd_job *job)
{
	struct pd_engine *e = dev->e;
	const struct pd_ptask_info *info = job->info;
	uint64_t owner = pd_sched_owner(e, job), bytes = 0;
	const struct pd_kernel_ref *ref;
	struct ptask_list *pos;
	uint32_t i;

	pd_assert_locked(e);
	if (dev->job || dev->tidying || e->draining || info->dead ||
	    !info->runs || info->avg_run_ns > (double)PD_INLINE_RUN_NS)
		return false;
	for (i = 0; i < job->inv.n_ports; i++)
		bytes += job->ports[i].bytes;
	if (bytes > PD_INLINE_BYTES)
		return false;
	ptask_list_for_each(pos, &dev->spaces) {
		const struct pd_space *s = ptask_list_entry(pos,
				struct pd_space, node);

		if (s->owner != owner)
			continue;
		for (ref = s->kernels; ref; ref = ref->next)
			if (ref->info == info)
				return true;
		return false;
	}
	return false;
}

/**
 * pd_worker_run_claimed() - run the job a helper claimed, on its thread
 * @dev: the device placement gave it (dev->claimed, dev->self the caller)
 * @defer: the helper's held-back wake-ups (pd_engine_help)
 *
 * As the worker would, then gives the device back: the next queued jobs
 * are placed (on workers), and the worker is woken when its
 * housekeeping is due, since that stays with it.  No lock held.
 */
void pd_worker_run_claimed(struct pd_device *dev, struct pd_wake_defer *defer)
{
	struct pd_engine *e = dev->e;
	struct pd_job *job;

	pd_engine_lock(e);
	job = dev->job;
	PD_ASSERT(job && dev->claimed &&
		  pthread_equal(dev->self, pthread_self()));
	pd_engine_unlock(e);
	run_job(dev, job, defer);
	pd_engine_lock(e);
	dev->job = NULL;
	dev->claimed = false;
	if (pd_now_ns() >= dev->tidy_ns)
		pthread_cond_signal(&dev->cond);
	pd_sched_dispatch_locked(e);
	pthread_cond_broadcast(&e->idle_cond);
	pd_engine_unlock(e);
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
			run_job(dev, job, NULL);
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
	shutdown_locked(dev);
	pd_engine_unlock(e);
	return NULL;
}
