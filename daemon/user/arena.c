// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * arena.c - memfd arenas for user-mode datablocks (see arena.h).
 *
 * First fit over a free list kept in offset order, with neighbours merged
 * on free: datablocks come and go in a few sizes, so the list stays short.
 * Registering costs milliseconds (DESIGN.md: 2.8 ms for 64 MiB), which is
 * why an arena is registered once when made and never per datablock, and
 * why an emptied arena is kept as a spare (arena.h) rather than made again
 * for the next round: measured on an H100 (2026-11-22), a round of
 * bench/ptask_gpu.c's 64 MiB transfer took 31.7 ms with --isolation
 * shared while each round made, registered and destroyed an arena for
 * its 4-byte output.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "daemon/user/arena.h"
#include "daemon/log.h"

struct pd_extent {
	uint64_t offset;
	uint64_t bytes;
	struct pd_extent *next;
};

static uint64_t page_round(uint64_t bytes)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	return (bytes + page - 1) & ~(page - 1);
}

void pd_arenas_init(struct pd_arenas *as, struct pd_backend *be,
		    uint64_t chunk)
{
	as->be = be;
	as->list = NULL;
	as->next_id = 1;
	as->chunk = chunk;
	as->spare_max = PD_ARENA_SPARE_BYTES;
	as->count = 0;
	as->created = 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * A spare's age, read at every allocation and free (two on a small
 * invocation's path): the coarse clock, a few ms fine against
 * PD_ARENA_SPARE_NS's minute, costs 6 ns against 40-45 for the exact one
 * on the GPU machines.
 */
static uint64_t coarse_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void arena_destroy(struct pd_arenas *as, struct pd_arena *a)
{
	struct pd_extent *e, *next;

	pd_log_debug("arena %llu: %llu bytes destroyed (%u arenas left)",
		     (unsigned long long)a->id, (unsigned long long)a->bytes,
		     as->count - 1);

	if (a->registered && as->be && as->be->ops->host_unregister)
		as->be->ops->host_unregister(as->be, a->base);
	munmap(a->base, a->bytes);
	close(a->fd);
	for (e = a->free; e; e = next) {
		next = e->next;
		free(e);
	}
	free(a);
	as->count--;
}

void pd_arenas_fini(struct pd_arenas *as)
{
	struct pd_arena *a, *next;

	for (a = as->list; a; a = next) {
		next = a->next;
		if (a->used)
			pd_log_warn("arena %llu freed with %llu bytes in use",
				    (unsigned long long)a->id,
				    (unsigned long long)a->used);
		arena_destroy(as, a);
	}
	as->list = NULL;
}

static int arena_create(struct pd_arenas *as, uint32_t uid, uint64_t bytes,
			bool own, struct pd_arena **out)
{
	struct pd_arena *a;
	uint64_t t0;
	int err;

	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->free = calloc(1, sizeof(*a->free));
	if (!a->free) {
		err = -ENOMEM;
		goto err_free_arena;
	}
	a->fd = memfd_create("ptask-arena", MFD_CLOEXEC);
	if (a->fd < 0) {
		err = -errno;
		goto err_free_extent;
	}
	if (ftruncate(a->fd, (off_t)bytes)) {
		err = -errno;
		goto err_close;
	}
	a->base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, 0);
	if (a->base == MAP_FAILED) {
		err = -errno;
		goto err_close;
	}
	t0 = now_ns();
	if (!own && as->be && as->be->ops->host_register) {
		err = as->be->ops->host_register(as->be, a->base, bytes);
		if (err)	/* still usable: copies go through pageable memory */
			pd_log_warn("arena of %llu bytes not registered for DMA: %d",
				    (unsigned long long)bytes, err);
		a->registered = !err;
	}
	a->id = as->next_id++;
	a->bytes = bytes;
	a->uid = uid;
	a->own = own;
	a->fresh = 0;
	a->free->offset = 0;
	a->free->bytes = bytes;
	a->next = as->list;
	as->list = a;
	as->count++;
	as->created++;
	pd_log_debug("arena %llu: %llu bytes for uid %u, registered in %llu us; %u arenas, %llu made",
		     (unsigned long long)a->id, (unsigned long long)bytes, uid,
		     (unsigned long long)(now_ns() - t0) / 1000, as->count,
		     (unsigned long long)as->created);
	*out = a;
	return 0;

err_close:
	close(a->fd);
err_free_extent:
	free(a->free);
err_free_arena:
	free(a);
	return err;
}

/*
 * First fit in @a; 0 and *@offset, with *@used the bytes of it handed out
 * before (below a->fresh), or -ENOSPC.
 */
static int arena_take(struct pd_arena *a, uint64_t bytes, uint64_t *offset,
		      uint64_t *used)
{
	struct pd_extent **pp, *e;

	for (pp = &a->free; (e = *pp); pp = &e->next) {
		if (e->bytes < bytes)
			continue;
		*offset = e->offset;
		*used = a->fresh <= e->offset ? 0 :
			a->fresh - e->offset < bytes ? a->fresh - e->offset :
			bytes;
		e->offset += bytes;
		e->bytes -= bytes;
		if (!e->bytes) {
			*pp = e->next;
			free(e);
		}
		if (a->fresh < *offset + bytes)
			a->fresh = *offset + bytes;
		a->used += bytes;
		return 0;
	}
	return -ENOSPC;
}

static void arena_unlink(struct pd_arenas *as, struct pd_arena *a)
{
	struct pd_arena **pp;

	for (pp = &as->list; *pp; pp = &(*pp)->next) {
		if (*pp == a) {
			*pp = a->next;
			return;
		}
	}
}

/* Bytes of @uid's empty arenas, @skip left out. */
static uint64_t spare_bytes(struct pd_arenas *as, uint32_t uid,
			    const struct pd_arena *skip)
{
	struct pd_arena *a;
	uint64_t sum = 0;

	for (a = as->list; a; a = a->next)
		if (a != skip && a->uid == uid && !a->used)
			sum += a->bytes;
	return sum;
}

/*
 * Is @a its uid's last arena of the ordinary size?  That one always stays
 * (as before spares), so a uid's next small datablock costs no
 * registration.
 */
static bool uid_keeps(struct pd_arenas *as, struct pd_arena *a)
{
	struct pd_arena *o;

	if (a->bytes > as->chunk)
		return false;
	if (a->own)
		return false;
	for (o = as->list; o; o = o->next)
		if (o != a && o->uid == a->uid && !o->own)
			return false;
	return true;
}

/* Destroy the spares unused for PD_ARENA_SPARE_NS (see arena.h). */
static void expire_spares(struct pd_arenas *as, uint64_t now)
{
	struct pd_arena **pp = &as->list, *a;

	while ((a = *pp)) {
		if (a->used || now - a->idle_ns < PD_ARENA_SPARE_NS ||
		    uid_keeps(as, a)) {
			pp = &a->next;
			continue;
		}
		*pp = a->next;
		arena_destroy(as, a);
	}
}

int pd_arenas_alloc(struct pd_arenas *as, uint32_t uid, uint64_t bytes,
		    struct pd_arena **arena, uint64_t *offset, uint64_t *used)
{
	struct pd_arena *a, *best = NULL;
	uint64_t size = page_round(bytes ? bytes : 1);
	int err;

	expire_spares(as, coarse_now_ns());
	/* Arenas in use first: spares stay whole for large datablocks. */
	for (a = as->list; a; a = a->next) {
		if (a->uid == uid && a->used && !a->own &&
		    !arena_take(a, size, offset, used)) {
			*arena = a;
			return 0;
		}
	}
	for (a = as->list; a; a = a->next)
		if (a->uid == uid && !a->used && !a->own && a->bytes >= size &&
		    (!best || a->bytes < best->bytes))
			best = a;
	if (best && !arena_take(best, size, offset, used)) {
		*arena = best;
		return 0;
	}
	err = arena_create(as, uid, size > as->chunk ? size : as->chunk, false,
			   &a);
	if (err)
		return err;
	err = arena_take(a, size, offset, used);
	if (err)
		return err;
	*arena = a;
	return 0;
}

int pd_arenas_alloc_own(struct pd_arenas *as, uint32_t uid, uint64_t bytes,
			struct pd_arena **arena)
{
	uint64_t size = page_round(bytes ? bytes : 1), offset, used;
	struct pd_arena *a;
	int err;

	expire_spares(as, coarse_now_ns());
	err = arena_create(as, uid, size, true, &a);
	if (err)
		return err;
	err = arena_take(a, size, &offset, &used);
	if (err) {	/* a new arena of exactly @size: cannot happen */
		arena_unlink(as, a);
		arena_destroy(as, a);
		return err;
	}
	*arena = a;
	return 0;
}

void pd_arenas_free(struct pd_arenas *as, struct pd_arena *a,
		    uint64_t offset, uint64_t bytes)
{
	struct pd_extent **pp, *e, *prev = NULL, *n;
	uint64_t size = page_round(bytes ? bytes : 1);

	/* Never reused: a client may still map it (arena.h). */
	if (a->own) {
		arena_unlink(as, a);
		arena_destroy(as, a);
		return;
	}
	for (pp = &a->free; (e = *pp) && e->offset < offset; pp = &e->next)
		prev = e;
	a->used -= size;
	if (prev && prev->offset + prev->bytes == offset) {
		prev->bytes += size;
		if (e && prev->offset + prev->bytes == e->offset) {
			prev->bytes += e->bytes;
			prev->next = e->next;
			free(e);
		}
	} else if (e && offset + size == e->offset) {
		e->offset = offset;
		e->bytes += size;
	} else {
		n = malloc(sizeof(*n));
		if (!n) {	/* lose the extent rather than the arena */
			pd_log_warn("arena %llu: extent lost (no memory)",
				    (unsigned long long)a->id);
			return;
		}
		n->offset = offset;
		n->bytes = size;
		n->next = e;
		*pp = n;
	}
	if (!a->used) {
		/* A spare, within its uid's budget (arena.h). */
		a->idle_ns = coarse_now_ns();
		if (spare_bytes(as, a->uid, a) + a->bytes > as->spare_max &&
		    !uid_keeps(as, a)) {
			arena_unlink(as, a);
			arena_destroy(as, a);
		}
	}
	expire_spares(as, coarse_now_ns());
}

struct pd_arena *pd_arenas_find(struct pd_arenas *as, uint64_t id)
{
	struct pd_arena *a;

	for (a = as->list; a; a = a->next)
		if (a->id == id)
			return a;
	return NULL;
}
