// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * space.c - a device's memory spaces and what outlives a job in them.
 * A space (a device seen through one context: the client's, or the
 * shared one) is opened on first use by the thread holding the device
 * (engine_priv.h: its worker, or a helper with a claimed job), and the
 * kernels loaded in it stay until their ptask is forgotten.  A space
 * with jobs in flight stays open.  Between submissions its worker tidies
 * up: data left current only on the
 * device for PD_WRITEBEHIND_NS is written back (write-behind), and a
 * client's space nobody used for space_idle_ms is closed.  At stop the
 * worker closes every space.
 *
 * Locking: the device's space list, the views and the pools are under
 * e->lock; a space's kernel list (struct pd_space.kernels) belongs to
 * the device's holder.  Backend calls are made without e->lock.
 */
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include "daemon/backend/host.h"
#include "daemon/engine/engine_priv.h"

/**
 * pd_space_get() - the space of @owner on @dev, opened on first use
 * @dev: the device (on the thread holding it)
 * @owner: the client pid (0 with shared isolation: pd_sched_owner)
 * @out: the space
 *
 * No lock held.  Return: 0, -ENOMEM, or the backend's -errno.
 */
int pd_space_get(struct pd_device *dev, uint64_t owner,
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
	/* Only @dev's holder adds spaces to it: no one races the open. */
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
	s->nlanes = e->be->info[dev->index].lanes;
	if (s->nlanes < 1)
		s->nlanes = 1;
	if (s->nlanes > PD_MAX_LANES)
		s->nlanes = PD_MAX_LANES;
	for (c = 0; c < s->nlanes; c++)
		ptask_list_init(&s->lanes[c].jobs);
	s->last_use_ns = pd_now_ns();
	pd_engine_lock(e);
	ptask_list_add_tail(&s->node, &dev->spaces);
	e->stats.spaces++;
	pd_engine_unlock(e);
	*out = s;
	return 0;
}

/*
 * Load @info's kernel into @space and put it first in its list (one
 * reference to @info).  No lock held.
 */
static int kernel_load_ref(struct pd_device *dev, struct pd_space *space,
			   struct pd_ptask_info *info, void **kernel)
{
	struct pd_engine *e = dev->e;
	struct pd_kernel_ref *ref = calloc(1, sizeof(*ref));
	int err;

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

/*
 * Unload the kernels of ptasks forgotten meanwhile, from *@pp on, but
 * those @keep says a job is about to launch.  No lock held.
 */
static void sweep_dead(struct pd_device *dev, struct pd_space *space,
		       struct pd_kernel_ref **pp,
		       bool (*keep)(const struct pd_kernel_ref *ref, void *arg),
		       void *arg)
{
	struct pd_engine *e = dev->e;
	struct pd_kernel_ref *ref;
	bool dead;

	while ((ref = *pp)) {
		pd_engine_lock(e);
		dead = ref->info->dead;
		pd_engine_unlock(e);
		if (!dead || (keep && keep(ref, arg))) {
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
}

/**
 * pd_space_kernel_get() - the kernel of @info in @space
 * @dev: the device (on the thread holding it)
 * @space: a space of it
 * @info: the ptask
 * @kernel: the backend's kernel
 *
 * Loaded on first use; kernels of ptasks forgotten meanwhile are unloaded
 * on the way.  The list is the device holder's own; only the info
 * references need the lock.  No lock held.  Return: 0, -ENOMEM, or the
 * backend's -errno.
 */
int pd_space_kernel_get(struct pd_device *dev, struct pd_space *space,
			struct pd_ptask_info *info, void **kernel)
{
	struct pd_engine *e = dev->e;
	struct pd_kernel_ref *ref;
	bool dead;
	int err;

	/*
	 * One lock round, for the ref of @info only: a space keeps the
	 * kernels of every ptask its owner ran (146 for fastpath's chains),
	 * and a lock round per entry walked cost a chain's hop about 0.4 us
	 * on an H200, beside the completion thread taking the same lock.
	 */
	for (ref = space->kernels; ref; ref = ref->next) {
		if (ref->info != info)
			continue;
		pd_engine_lock(e);
		dead = info->dead;
		pd_engine_unlock(e);
		if (!dead) {
			*kernel = ref->kernel;
			return 0;
		}
	}
	/*
	 * Loaded before the dead ones go: a kernel of the same code (a
	 * ptask's info made again, a prewarmed one) keeps the module loaded.
	 */
	err = kernel_load_ref(dev, space, info, kernel);
	if (!err)
		sweep_dead(dev, space, &space->kernels->next, NULL, NULL);
	return err;
}

/*
 * A job's members by their info's address (open addressing, at least
 * twice as many slots as members): one walk of a space's kernel list
 * finds them all.  Slots hold a member's index + 1.
 */
struct member_map {
	const struct pd_member *mb;
	uint32_t *slot;
	uint32_t mask;
	uint32_t small[64];
};

static uint32_t member_hash(const struct member_map *mm,
			    const struct pd_ptask_info *info)
{
	return (uint32_t)((uintptr_t)info >> 6) & mm->mask;
}

static int member_map_init(struct member_map *mm, const struct pd_member *mb,
			   uint32_t n)
{
	uint32_t slots = 64, i, h;

	while (slots < 2 * n)
		slots *= 2;
	mm->mb = mb;
	mm->mask = slots - 1;
	mm->slot = slots == 64 ? mm->small : calloc(slots, sizeof(*mm->slot));
	if (!mm->slot)
		return -ENOMEM;
	if (mm->slot == mm->small)
		memset(mm->small, 0, sizeof(mm->small));
	for (i = 0; i < n; i++) {
		for (h = member_hash(mm, mb[i].info); mm->slot[h];
		     h = (h + 1) & mm->mask)
			;
		mm->slot[h] = i + 1;
	}
	return 0;
}

static void member_map_fini(struct member_map *mm)
{
	if (mm->slot != mm->small)
		free(mm->slot);
}

/* Is @info a member's? */
static bool member_of(const struct member_map *mm,
		      const struct pd_ptask_info *info)
{
	uint32_t h;

	for (h = member_hash(mm, info); mm->slot[h]; h = (h + 1) & mm->mask)
		if (mm->mb[mm->slot[h] - 1].info == info)
			return true;
	return false;
}

/* sweep_dead's @keep: a kernel of a member about to be launched. */
static bool keep_member(const struct pd_kernel_ref *ref, void *arg)
{
	return member_of(arg, ref->info);
}

/**
 * pd_space_kernels_get() - the kernels of a job's members in @space
 * @dev: the device (on the thread holding it)
 * @space: a space of it
 * @mb: the members, @n of them; each one's @kernel is set
 * @n: how many
 *
 * As pd_space_kernel_get for each, with one walk of the space's list and
 * one lock round for all that are loaded (one walk and one lock round
 * each cost a 100-deep segment about 10 us a round on an H200); those
 * that are not are loaded, and then the kernels of ptasks forgotten
 * meanwhile unloaded, but the members' (a member forgotten meanwhile is
 * still launched, as a lone job of a forgotten ptask is).  Return: 0 or
 * -errno.
 */
int pd_space_kernels_get(struct pd_device *dev, struct pd_space *space,
			 struct pd_member *mb, uint32_t n)
{
	struct pd_engine *e = dev->e;
	const struct pd_kernel_ref *ref;
	struct member_map mm;
	bool loaded = false;
	uint32_t i, h;
	int err;

	err = member_map_init(&mm, mb, n);
	if (err)
		return err;
	for (i = 0; i < n; i++)
		mb[i].kernel = NULL;
	pd_engine_lock(e);
	for (ref = space->kernels; ref; ref = ref->next) {
		if (ref->info->dead)
			continue;
		for (h = member_hash(&mm, ref->info); mm.slot[h];
		     h = (h + 1) & mm.mask)
			if (mb[mm.slot[h] - 1].info == ref->info)
				mb[mm.slot[h] - 1].kernel = ref->kernel;
	}
	pd_engine_unlock(e);
	for (i = 0; i < n && !err; i++) {
		if (mb[i].kernel)
			continue;
		err = kernel_load_ref(dev, space, mb[i].info, &mb[i].kernel);
		loaded |= !err;
	}
	if (loaded)
		sweep_dead(dev, space, &space->kernels, keep_member, &mm);
	member_map_fini(&mm);
	return err;
}

/**
 * pd_space_kernels_loaded() - are all of a job's members' kernels in @space?
 * @space: a space
 * @mb: the members, @n of them
 * @n: how many
 *
 * For a helper, which never loads code: every member has a kernel of a
 * live ptask in @space.  Locked (the list is read as the holder's).
 */
bool pd_space_kernels_loaded(const struct pd_space *space,
			     const struct pd_member *mb, uint32_t n)
{
	const struct pd_kernel_ref *ref;
	struct member_map mm;
	uint32_t found = 0, h;
	uint8_t *seen;

	if (member_map_init(&mm, mb, n))
		return false;
	seen = calloc(n, 1);
	for (ref = space->kernels; seen && ref; ref = ref->next) {
		if (ref->info->dead)
			continue;
		for (h = member_hash(&mm, ref->info); mm.slot[h];
		     h = (h + 1) & mm.mask) {
			uint32_t m = mm.slot[h] - 1;

			if (mb[m].info == ref->info && !seen[m]) {
				seen[m] = 1;
				found++;
			}
		}
	}
	free(seen);
	member_map_fini(&mm);
	return found == n;
}

/* Is @view's datablock current nowhere but in device memory? */
static bool dirty_view(const struct pd_view *view)
{
	const struct pd_dbrec *rec = view->rec;

	return view->valid && !rec->host_valid && !rec->dead &&
	       rec->host_map;
}

/**
 * pd_space_writebehind_locked() - write back long-idle device-only data
 * @dev: the device (on its worker, while it has no job)
 * @now_ns: now
 *
 * A datablock current only on a device holds a mapping of its host
 * pages, and in user mode that mapping keeps its arena memory alive.  A
 * dead datablock is forgotten when it dies (the namespace's notifier,
 * pd_engine_forget), which drops the mapping; a live one left dirty for
 * PD_WRITEBEHIND_NS is written back here, so its host copy is current and
 * the mapping is let go while nobody uses it.  At most 16 per call, so a
 * job placed meanwhile waits little.
 */
void pd_space_writebehind_locked(struct pd_device *dev, uint64_t now_ns)
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
 * pd_space_close_idle_locked() - close clients' spaces nobody used lately
 * @dev: the device (on its worker, while it has no job)
 * @now_ns: now
 *
 * A per-client space is a CUDA context (hundreds of MiB of device memory
 * and a slot of the device's context switching): one whose client is
 * gone, or idle for space_idle_ms, is closed.  The next job of that
 * client opens it again and copies its inputs in again.
 */
void pd_space_close_idle_locked(struct pd_device *dev, uint64_t now_ns)
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

			if (now_ns - s->last_use_ns < idle || s->ninflight)
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

/**
 * pd_space_close_all_locked() - close every space of @dev (stop)
 * @dev: the device, on its worker, every job done
 *
 * Writes back what only this device holds, drops every view, frees the
 * pools, unloads the kernels and closes the spaces.  Locked on entry and
 * exit.
 */
void pd_space_close_all_locked(struct pd_device *dev)
{
	pd_assert_locked(dev->e);
	while (!ptask_list_empty(&dev->spaces)) {
		struct pd_space *s = ptask_list_first(&dev->spaces,
						      struct pd_space, node);

		/* Every job is done: nothing can pin a view. */
		int err = close_space_locked(dev, s);

		PD_ASSERT(!err);
	}
	PD_ASSERT(ptask_list_empty(&dev->lru));
}
