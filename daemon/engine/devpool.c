// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * devpool.c - device memory for views: pools per space, the per-device
 * limit, and eviction under pressure.
 *
 * Buffers come in size classes (four per power of two above 4 KiB, so at
 * most a quarter is wasted) and go back to their space's pool when a
 * view is dropped: the next datablock of a similar size in that space
 * reuses one without a backend allocation (cuMemAlloc synchronizes the
 * device; a pool hit is a list operation).  Pools are per space because
 * a buffer belongs to the context it was allocated in.
 *
 * Pressure: an allocation that would pass the device's limit
 * (device_memory_limit, or the device's memory), or that the backend
 * refuses with -ENOMEM, first frees every pooled buffer of the device,
 * then evicts views, least recently used first, skipping pinned ones.
 * A view holding the only current copy of its datablock is written back
 * to the host pages first (its record holds a mapping for that).
 *
 * Threads: every function that calls the backend runs on the thread
 * holding the device (its worker, or a helper running a job it claimed:
 * engine_priv.h) and asserts it; the lock is dropped around backend
 * calls.
 */
#include <errno.h>
#include <stdlib.h>
#include "daemon/engine/engine_priv.h"

static void assert_worker(struct pd_device *dev)
{
	PD_ASSERT(pthread_equal(pthread_self(), dev->self));
}

/**
 * pd_pool_class() - the size class of a buffer for @bytes
 * @bytes: bytes needed
 * @cap: out: the class's buffer size
 *
 * Class 0 is PD_POOL_MIN_BYTES (4 KiB); above it, each octave
 * (2^(p-1), 2^p] has four classes of 2^(p-3) steps.
 *
 * Return: the class index, below PD_POOL_CLASSES.
 */
unsigned int pd_pool_class(uint64_t bytes, uint64_t *cap)
{
	unsigned int p;
	uint64_t step, c;

	if (bytes <= PD_POOL_MIN_BYTES) {
		*cap = PD_POOL_MIN_BYTES;
		return 0;
	}
	p = 64 - (unsigned int)__builtin_clzll(bytes - 1);
	step = 1ULL << (p - 3);
	c = (bytes + step - 1) & ~(step - 1);
	*cap = c;
	return 1 + (p - 13) * 4 + (unsigned int)(c >> (p - 3)) - 5;
}

/* Give buffer @dptr (a class size @cap) to @space's pool. */
void pd_devmem_pool_locked(struct pd_space *space, uint64_t dptr,
			   uint64_t cap)
{
	struct pd_engine *e = space->dev->e;
	struct pd_pooled *p;
	uint64_t check;
	unsigned int cls = pd_pool_class(cap, &check);

	pd_assert_locked(e);
	PD_ASSERT(check == cap);
	p = malloc(sizeof(*p));
	if (!p) {
		/*
		 * No node to pool it with: it stays allocated until its space
		 * closes (the backend frees a space's memory then), counted.
		 */
		pd_log_warn("engine: out of memory: a %llu-byte device buffer idles until its space closes",
			    (unsigned long long)cap);
		return;
	}
	p->space = space;
	p->dptr = dptr;
	p->cap = cap;
	ptask_list_add_tail(&p->node, &space->pool[cls]);
	space->pooled_bytes += cap;
}

/* Move @s's pooled buffers to @victims (to be freed without the lock). */
static void pool_take_locked(struct pd_space *s, struct ptask_list *victims)
{
	unsigned int c;

	for (c = 0; c < PD_POOL_CLASSES; c++) {
		while (!ptask_list_empty(&s->pool[c])) {
			struct pd_pooled *p = ptask_list_first(&s->pool[c],
					struct pd_pooled, node);

			ptask_list_del(&p->node);
			ptask_list_add_tail(&p->node, victims);
			s->pooled_bytes -= p->cap;
			s->dev->allocated -= p->cap;
		}
	}
}

/* Free @victims' buffers; the lock is dropped meanwhile. */
static void pool_free_locked(struct pd_device *dev, struct ptask_list *victims)
{
	struct pd_engine *e = dev->e;
	struct ptask_list *pos, *tmp;

	if (ptask_list_empty(victims))
		return;
	pd_engine_unlock(e);
	ptask_list_for_each_safe(pos, tmp, victims) {
		struct pd_pooled *p = ptask_list_entry(pos, struct pd_pooled,
						       node);

		e->be->ops->mem_free(e->be, p->space->be_space, p->dptr);
		free(p);
	}
	pd_engine_lock(e);
}

/**
 * pd_devmem_trim_locked() - free every pooled buffer of @dev
 * @dev: the device (called on its worker)
 */
void pd_devmem_trim_locked(struct pd_device *dev)
{
	struct ptask_list victims, *pos;

	pd_assert_locked(dev->e);
	assert_worker(dev);
	ptask_list_init(&victims);
	ptask_list_for_each(pos, &dev->spaces)
		pool_take_locked(ptask_list_entry(pos, struct pd_space, node),
				 &victims);
	pool_free_locked(dev, &victims);
}

/**
 * pd_devmem_trim_space_locked() - free every pooled buffer of @space
 * @space: a space of the calling worker's device
 */
void pd_devmem_trim_space_locked(struct pd_space *space)
{
	struct ptask_list victims;

	pd_assert_locked(space->dev->e);
	assert_worker(space->dev);
	ptask_list_init(&victims);
	pool_take_locked(space, &victims);
	pool_free_locked(space->dev, &victims);
}

/**
 * pd_devmem_writeback_locked() - copy a view's bytes to the host pages
 * @dev: the view's device (called on its worker)
 * @view: a valid view whose record holds a mapping
 *
 * Afterwards the host pages are current and the record gives its mapping
 * back.  Nothing may be launched on the space and not yet synced (sync's
 * GPU time would be taken from that launch).  @view may be freed when
 * this returns (its record may have died meanwhile), unless the caller
 * pinned its record.  On failure the view stays valid (the bytes are
 * still on the device).
 *
 * Return: 0 or the backend's -errno.
 */
int pd_devmem_writeback_locked(struct pd_device *dev, struct pd_view *view)
{
	struct pd_engine *e = dev->e;
	const struct pd_backend_ops *ops = e->be->ops;
	struct pd_dbrec *rec = view->rec;
	void *space = view->space->be_space, *host = rec->host_map;
	uint32_t generation = rec->generation;
	int err;

	pd_assert_locked(e);
	assert_worker(dev);
	PD_ASSERT(view->space->dev == dev && view->valid && host);
	view->pins++;
	rec->pins++;
	/* Another device may write the same record back meanwhile. */
	rec->map_users++;
	pd_engine_unlock(e);
	err = ops->copy_d2h(e->be, space, 0, host, view->dptr, rec->bytes);
	if (!err)
		err = ops->sync(e->be, space, NULL);
	pd_engine_lock(e);
	view->pins--;
	if (!--rec->map_users && rec->map_drop)
		pd_rec_drop_map_locked(e, rec);
	if (!err) {
		e->stats.bytes_d2h += rec->bytes;
		/* Unless pushed again meanwhile (then the host won anyway). */
		if (rec->generation == generation && view->valid) {
			rec->host_valid = true;
			pd_rec_drop_map_locked(e, rec);
		}
	} else {
		pd_log_err("engine: writing datablock %u back from %s: %d",
			   rec->handle, e->be->info[dev->index].name, err);
	}
	pd_rec_unpin_locked(e, rec);
	return err;
}

/* Does @view hold the only current copy of its datablock? */
static bool only_copy(struct pd_view *view)
{
	struct pd_dbrec *rec = view->rec;
	struct pd_view *v;

	if (!view->valid || rec->host_valid || rec->dead)
		return false;
	for (v = rec->views; v; v = v->rec_next)
		if (v != view && v->valid)
			return false;
	return true;
}

/*
 * Evict the least recently used unpinned view of @dev (writing it back
 * first when it is the only copy).  -ENOMEM when every view is pinned.
 */
static int evict_one_locked(struct pd_device *dev)
{
	struct pd_engine *e = dev->e;
	struct ptask_list *pos;

	pd_assert_locked(e);
	ptask_list_for_each(pos, &dev->lru) {
		struct pd_view *v = ptask_list_entry(pos, struct pd_view,
						     lru_node);
		struct pd_dbrec *rec = v->rec;

		if (v->pins)
			continue;
		if (only_copy(v))
			/* The list changed meanwhile: the caller tries again. */
			return pd_devmem_writeback_locked(dev, v);
		pd_view_drop_locked(e, v);
		e->stats.evictions++;
		pd_rec_maybe_free_locked(e, rec);
		return 0;
	}
	return -ENOMEM;
}

static bool has_pooled(struct pd_device *dev)
{
	struct ptask_list *pos;

	ptask_list_for_each(pos, &dev->spaces)
		if (ptask_list_entry(pos, struct pd_space, node)->pooled_bytes)
			return true;
	return false;
}

/**
 * pd_devmem_alloc_locked() - a device buffer for @bytes in @space
 * @dev: @space's device (called on its worker)
 * @space: the space
 * @bytes: bytes needed
 * @dptr: out: the buffer
 * @cap: out: its size (a class size, >= @bytes)
 *
 * Return: 0, -ENOMEM when nothing more can be freed or evicted, or the
 * backend's -errno.
 */
int pd_devmem_alloc_locked(struct pd_device *dev, struct pd_space *space,
			   uint64_t bytes, uint64_t *dptr, uint64_t *cap)
{
	struct pd_engine *e = dev->e;
	uint64_t c, p;
	unsigned int cls = pd_pool_class(bytes, &c);
	int err;

	pd_assert_locked(e);
	assert_worker(dev);
	for (;;) {
		if (!ptask_list_empty(&space->pool[cls])) {
			struct pd_pooled *pb = ptask_list_first(
				&space->pool[cls], struct pd_pooled, node);

			ptask_list_del(&pb->node);
			space->pooled_bytes -= pb->cap;
			*dptr = pb->dptr;
			*cap = pb->cap;
			free(pb);
			return 0;
		}
		if (c <= dev->limit && dev->allocated <= dev->limit - c) {
			dev->allocated += c;
			pd_engine_unlock(e);
			err = e->be->ops->mem_alloc(e->be, space->be_space, c,
						    &p);
			pd_engine_lock(e);
			if (!err) {
				*dptr = p;
				*cap = c;
				return 0;
			}
			dev->allocated -= c;
			if (err != -ENOMEM)
				return err;
		}
		if (has_pooled(dev)) {
			pd_devmem_trim_locked(dev);
			continue;
		}
		err = evict_one_locked(dev);
		if (err)
			return err;
	}
}
