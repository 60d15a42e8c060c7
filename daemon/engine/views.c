// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * views.c - datablock records and their views (HiWay's valid bits).
 *
 * A record (struct pd_dbrec) exists for a datablock while the engine has
 * a view of it in some space, a mapping of it, or a job using it.  Each
 * view is a device buffer in one space with a valid bit; the host pages
 * have their own (rec->host_valid).  Invariants, under e->lock:
 *
 *  - a valid view holds the bytes of generation rec->generation;
 *  - some copy is current: host_valid, or at least one view valid;
 *  - when no copy but device ones is current ("dirty"), the engine holds
 *    a mapping of the datablock (rec->host_map), so it can always write
 *    the bytes back before it evicts the last device copy, even when the
 *    datablock is no longer part of an invocation it took (and so could
 *    not map it any more);
 *  - a record with no view, no mapping and no pin is freed: it knows
 *    nothing the next invocation port will not tell again.
 *
 * Generations: each push of a datablock bumps its generation (a client
 * may have written its bytes).  When an invocation names a datablock at
 * another generation than the record's, the host pages are the truth:
 * every view becomes invalid.  A datablock the engine made has no known
 * generation until it comes back as an input; then its views are
 * adopted as they are, unless its bytes were written back for a client
 * (rec->exposed), who may have changed them and pushed them again.
 */
#include <errno.h>
#include <stdlib.h>
#include "daemon/backend/host.h"
#include "daemon/engine/engine_priv.h"

struct pd_dbrec *pd_rec_find_locked(struct pd_engine *e, uint32_t handle)
{
	struct pc_hash_node *n;

	pd_assert_locked(e);
	n = pc_hash_find(&e->recs, handle);
	return n ? pc_hash_entry(n, struct pd_dbrec, hnode) : NULL;
}

static void rec_unhash_locked(struct pd_engine *e, struct pd_dbrec *rec)
{
	int err;

	pd_assert_locked(e);
	err = pc_hash_del(&e->recs, &rec->hnode);
	PD_ASSERT(!err);
}

/* Free @rec if it no longer carries anything (see the top of the file). */
void pd_rec_maybe_free_locked(struct pd_engine *e, struct pd_dbrec *rec)
{
	pd_assert_locked(e);
	if (rec->pins)
		return;
	if (rec->dead) {
		while (rec->views) {
			PD_ASSERT(!rec->views->pins);
			pd_view_drop_locked(e, rec->views);
		}
		pd_rec_drop_map_locked(e, rec);
		free(rec);
		return;
	}
	if (rec->views || rec->host_map)
		return;
	rec_unhash_locked(e, rec);
	free(rec);
}

/**
 * pd_rec_get_locked() - the record of datablock @handle, made if needed
 * @e: the engine
 * @handle: the datablock
 * @bytes: its size
 *
 * A new record starts with its host pages current (a datablock the
 * engine meets first as an input came from a client or another
 * executor).  A record of another size is a stale one of a handle that
 * was reused (after 2^32 datablocks): it is dropped first, unless a job
 * still uses it.
 *
 * Return: the record, or NULL (out of memory, or a stale record in use).
 */
struct pd_dbrec *pd_rec_get_locked(struct pd_engine *e, uint32_t handle,
				   uint64_t bytes)
{
	struct pd_dbrec *rec = pd_rec_find_locked(e, handle);

	if (rec && rec->bytes != bytes) {
		if (rec->pins)
			return NULL;
		rec_unhash_locked(e, rec);
		rec->dead = true;
		pd_rec_maybe_free_locked(e, rec);
		rec = NULL;
	}
	if (rec)
		return rec;
	rec = calloc(1, sizeof(*rec));
	if (!rec)
		return NULL;
	rec->handle = handle;
	rec->bytes = bytes;
	rec->host_valid = true;
	pc_hash_add(&e->recs, &rec->hnode, handle);
	return rec;
}

/**
 * pd_rec_see_generation_locked() - an invocation names @rec at @generation
 * @e: the engine
 * @rec: the record
 * @generation: the invocation port's generation
 */
void pd_rec_see_generation_locked(struct pd_engine *e, struct pd_dbrec *rec,
				  uint32_t generation)
{
	struct pd_view *v;

	pd_assert_locked(e);
	/*
	 * The same, or older (an invocation taken before the newest push,
	 * whose job starts later: the record already follows the newer
	 * bytes, which are the ones in the host pages too).
	 */
	if (rec->gen_known && (int32_t)(generation - rec->generation) <= 0)
		return;
	if (!rec->gen_known && !rec->exposed) {
		rec->generation = generation;
		rec->gen_known = true;
		return;
	}
	/* Pushed again: the host pages are the truth. */
	rec->generation = generation;
	rec->gen_known = true;
	rec->failed = false;
	rec->exposed = false;
	rec->host_valid = true;
	for (v = rec->views; v; v = v->rec_next)
		v->valid = false;
	pd_rec_drop_map_locked(e, rec);
}

void pd_rec_unpin_locked(struct pd_engine *e, struct pd_dbrec *rec)
{
	pd_assert_locked(e);
	PD_ASSERT(rec->pins > 0);
	rec->pins--;
	pd_rec_maybe_free_locked(e, rec);
}

/**
 * pd_rec_drop_map_locked() - give up the mapping a record holds
 * @e: the engine
 * @rec: the record
 *
 * Not while a writeback copies into it (rec->map_users): the last one
 * gives it up then.  The source's db_unmap may take the namespace lock
 * (user mode), and
 * pd_engine_forget is called under it, so the mapping is queued on
 * e->unmaps and handed back by pd_views_flush_unmaps without e->lock.
 * Should the queue node not be allocated, the mapping is leaked (logged)
 * rather than unmapped under the lock.
 */
void pd_rec_drop_map_locked(struct pd_engine *e, struct pd_dbrec *rec)
{
	struct pd_unmap *u;

	pd_assert_locked(e);
	if (!rec->host_map)
		return;
	if (rec->map_users) {
		rec->map_drop = true;	/* the last writeback drops it */
		return;
	}
	rec->map_drop = false;
	u = malloc(sizeof(*u));
	if (!u) {
		pd_log_err("engine: out of memory: datablock %u stays mapped",
			   rec->handle);
		rec->host_map = NULL;
		return;
	}
	u->handle = rec->handle;
	u->addr = rec->host_map;
	u->bytes = rec->bytes;
	u->next = e->unmaps;
	e->unmaps = u;
	e->unmap_bytes += rec->bytes;
	rec->host_map = NULL;
}

void pd_views_flush_unmaps(struct pd_engine *e)
{
	struct pd_unmap *u, *next;

	/*
	 * Every job's completion calls this, and there is rarely anything
	 * to hand back: no lock round then.  A hint (queued under the lock,
	 * read without it): one queued meanwhile goes at the next call.
	 */
	if (!__atomic_load_n(&e->unmaps, __ATOMIC_RELAXED))
		return;
	pd_engine_lock(e);
	u = e->unmaps;
	e->unmaps = NULL;
	e->unmap_bytes = 0;
	pd_engine_unlock(e);
	for (; u; u = next) {
		next = u->next;
		e->src->ops->db_unmap(e->src, u->handle, u->addr, u->bytes);
		free(u);
	}
}

/**
 * pd_rec_only_valid_locked() - @view now holds the only current bytes
 * @e: the engine
 * @rec: its record (which must hold a mapping: the caller gives it one)
 * @view: the view a kernel wrote
 */
void pd_rec_only_valid_locked(struct pd_engine *e, struct pd_dbrec *rec,
			      struct pd_view *view)
{
	struct pd_view *v;

	pd_assert_locked(e);
	PD_ASSERT(view->rec == rec && rec->host_map);
	for (v = rec->views; v; v = v->rec_next)
		v->valid = v == view;
	rec->host_valid = false;
	rec->exposed = false;
	/* Dirty again: a writeback in flight must not give the mapping up. */
	rec->map_drop = false;
}

struct pd_view *pd_view_find_locked(struct pd_engine *e,
				    struct pd_dbrec *rec,
				    struct pd_space *space)
{
	struct pd_view *v;

	pd_assert_locked(e);
	for (v = rec->views; v; v = v->rec_next)
		if (v->space == space)
			return v;
	return NULL;
}

/* A new, invalid view of @rec in @space on buffer @dptr of @cap bytes. */
struct pd_view *pd_view_add_locked(struct pd_engine *e, struct pd_dbrec *rec,
				   struct pd_space *space, uint64_t dptr,
				   uint64_t cap)
{
	struct pd_view *v;

	pd_assert_locked(e);
	PD_ASSERT(!pd_view_find_locked(e, rec, space) && cap >= rec->bytes);
	v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->rec = rec;
	v->space = space;
	v->dptr = dptr;
	v->cap = cap;
	v->rec_next = rec->views;
	rec->views = v;
	ptask_list_add_tail(&v->lru_node, &space->dev->lru);
	return v;
}

/*
 * Unlink and free @view; its buffer goes to its space's pool.  The
 * record is left for the caller (pd_rec_maybe_free_locked), which may be
 * walking it.
 */
void pd_view_drop_locked(struct pd_engine *e, struct pd_view *view)
{
	struct pd_view **pp = &view->rec->views;

	pd_assert_locked(e);
	PD_ASSERT(!view->pins);
	while (*pp && *pp != view)
		pp = &(*pp)->rec_next;
	PD_ASSERT(*pp == view);
	*pp = view->rec_next;
	ptask_list_del(&view->lru_node);
	pd_devmem_pool_locked(view->space, view->dptr, view->cap);
	free(view);
}

void pd_view_touch_locked(struct pd_engine *e, struct pd_view *view)
{
	pd_assert_locked(e);
	ptask_list_del(&view->lru_node);
	ptask_list_add_tail(&view->lru_node, &view->space->dev->lru);
}

/**
 * pd_rec_copy_source_locked() - the best valid view to copy @rec from
 * into space @to
 * @e: the engine
 * @rec: the record
 * @to: the space that needs it
 *
 * Another space on the same device first (a copy inside device memory),
 * then a device @to's device reaches by peer copy, then any (the
 * backend stages such a copy through host memory).
 *
 * Return: the view, or NULL when no other space holds a valid one.
 */
struct pd_view *pd_rec_copy_source_locked(struct pd_engine *e,
					  struct pd_dbrec *rec,
					  struct pd_space *to)
{
	const struct pd_device_info *info = &e->be->info[to->dev->index];
	struct pd_view *v, *best = NULL;
	int best_rank = -1;

	pd_assert_locked(e);
	for (v = rec->views; v; v = v->rec_next) {
		int rank;

		if (!v->valid || v->space == to)
			continue;
		if (v->space->dev == to->dev)
			rank = 2;
		else if (info->peer[v->space->dev->index])
			rank = 1;
		else
			rank = 0;
		if (rank > best_rank) {
			best = v;
			best_rank = rank;
		}
	}
	return best;
}

/* @rec's bytes when it has a valid view in space (@dev, @owner), else 0. */
uint64_t pd_rec_bytes_on_locked(struct pd_engine *e, struct pd_dbrec *rec,
				uint32_t dev, uint64_t owner)
{
	struct pd_view *v;

	pd_assert_locked(e);
	for (v = rec->views; v; v = v->rec_next)
		if (v->valid && v->space->dev->index == dev &&
		    v->space->owner == owner)
			return rec->bytes;
	return 0;
}

/**
 * pd_rec_forget_locked() - @rec's datablock is gone
 * @e: the engine
 * @rec: a record still in the hash (not dead yet)
 *
 * Freed now, or when the last job using it lets go.
 */
void pd_rec_forget_locked(struct pd_engine *e, struct pd_dbrec *rec)
{
	pd_assert_locked(e);
	if (rec->dead)
		return;
	rec_unhash_locked(e, rec);
	rec->dead = true;
	pd_rec_maybe_free_locked(e, rec);
}

/* Unhash a ptask info of @handle, if any (ptask handles die too). */
static void forget_info_locked(struct pd_engine *e, uint32_t handle)
{
	struct pd_ptask_info *info;
	struct pc_hash_node *n;

	pd_assert_locked(e);
	n = pc_hash_find(&e->infos, handle);
	if (!n)
		return;
	info = pc_hash_entry(n, struct pd_ptask_info, hnode);
	pc_hash_del(&e->infos, n);
	info->dead = true;
	pd_info_put_locked(e, info);
}

/* @handle is gone: its record and cached info (pd_engine_forget). */
static void forget_locked(struct pd_engine *e, uint32_t handle)
{
	struct pd_dbrec *rec;

	pd_assert_locked(e);
	rec = pd_rec_find_locked(e, handle);
	if (rec)
		pd_rec_forget_locked(e, rec);
	forget_info_locked(e, handle);
}

/*
 * The housekeeper unmaps within PD_UNMAP_DELAY_NS, not at once: woken
 * per datablock, it cost a context switch on every round of a client
 * that releases an output per invocation.  Most are unmapped sooner, by
 * the job completion that dropped them (pd_job_finish).  Large ones go
 * at once: their memory is what the next datablocks are made of (a
 * 4 MiB chain's round trip took 100 us longer while they waited).
 */
static void forget_kick_locked(struct pd_engine *e)
{
	pd_assert_locked(e);
	if (e->unmaps && (e->unmap_bytes >= PD_UNMAP_BYTES_NOW ||
			  e->hk_due_ns > pd_now_ns() + PD_UNMAP_DELAY_NS))
		pthread_cond_signal(&e->hk_cond);
}

/**
 * pd_engine_forget_drain_locked() - forget what pd_engine_forget queued
 * @e: the engine, locked (pd_engine_lock calls it when some are queued)
 */
void pd_engine_forget_drain_locked(struct pd_engine *e)
{
	uint32_t *handles, n, i;

	pd_assert_locked(e);
	pthread_mutex_lock(&e->forget_lock);
	handles = e->forget_q;
	n = e->forget_n;
	e->forget_q = NULL;
	e->forget_n = e->forget_cap = 0;
	atomic_store_explicit(&e->forgets_queued, false, memory_order_relaxed);
	pthread_mutex_unlock(&e->forget_lock);
	for (i = 0; i < n; i++)
		forget_locked(e, handles[i]);
	free(handles);
	if (n)
		forget_kick_locked(e);
}

/* Queue @handle for the next holder of the engine's lock: 0 or -ENOMEM. */
static int forget_queue(struct pd_engine *e, uint32_t handle)
{
	int err = 0;

	pthread_mutex_lock(&e->forget_lock);
	if (e->forget_n == e->forget_cap) {
		uint32_t cap = e->forget_cap ? 2 * e->forget_cap : 64;
		uint32_t *grown = realloc(e->forget_q, cap * sizeof(*grown));

		if (grown) {
			e->forget_q = grown;
			e->forget_cap = cap;
		} else {
			err = -ENOMEM;
		}
	}
	if (!err) {
		e->forget_q[e->forget_n++] = handle;
		atomic_store_explicit(&e->forgets_queued, true,
				      memory_order_relaxed);
	}
	pthread_mutex_unlock(&e->forget_lock);
	return err;
}

/**
 * pd_engine_forget() - datablock (or ptask) @handle is gone
 * @e: the engine
 * @handle: its handle
 *
 * Its views go back to their pools without being written back (nobody
 * can read them any more).  A record a job still uses is marked dead and
 * freed when the job lets go.  Called from any thread, possibly under
 * the source's own lock: so it makes no source or backend call.
 *
 * Under the source's lock (a release in the namespace), waiting for the
 * engine's made every other namespace call wait behind it: profiled on
 * an H200 (2026-12-02, P1b, 64 asynchronous pushes then their pulls),
 * a ring thread's releases spent 0.35 us an invocation in
 * pthread_mutex_lock here while holding the namespace, which the
 * pushing ring's takes and the completion thread's settles wanted.  So
 * when the engine's lock is taken, the handle is queued instead and the
 * next pd_engine_lock forgets it before anything else: whoever looks a
 * handle up after the release returned locks the engine after this
 * (through the namespace's lock), so never finds the dead record.
 */
void pd_engine_forget(struct pd_engine *e, uint32_t handle)
{
	if (pthread_mutex_trylock(&e->lock) == 0) {
		e->lock_owner = pthread_self();
		e->locked = true;
	} else if (!forget_queue(e, handle)) {
		return;
	} else {
		pd_engine_lock(e);	/* no memory to queue it: wait */
	}
	if (atomic_load_explicit(&e->forgets_queued, memory_order_relaxed))
		pd_engine_forget_drain_locked(e);
	forget_locked(e, handle);
	forget_kick_locked(e);
	pd_engine_unlock(e);
}

/* Stop: free every record (workers have dropped every view). */
void pd_views_free_all_locked(struct pd_engine *e)
{
	struct pc_hash_node *n;

	pd_assert_locked(e);
	while ((n = pc_hash_pop(&e->recs))) {
		struct pd_dbrec *rec = pc_hash_entry(n, struct pd_dbrec, hnode);

		PD_ASSERT(!rec->pins && !rec->views);
		pd_rec_drop_map_locked(e, rec);
		free(rec);
	}
}
