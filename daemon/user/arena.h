/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * arena.h - datablock memory of the user-mode namespace: memfd arenas
 * carved into page-aligned extents.
 *
 * An arena is one memfd the daemon maps once and registers once with the
 * backend for DMA; clients receive its fd and map it themselves.  Arenas
 * belong to one uid (see ns_user.h for why).  Locking: the namespace lock
 * protects every arena and extent list.
 *
 * Spares: an arena left empty is kept for its uid's next datablocks,
 * because making one costs milliseconds (memfd, mmap, and above all
 * cuMemHostRegister) and a workload that creates and frees a large
 * datablock per round would otherwise make and register an arena per
 * round.  A uid keeps at most spare_max bytes of empty arenas (an arena
 * that would pass it is destroyed at once); a spare unused for
 * PD_ARENA_SPARE_NS is destroyed at the next allocation or free, except
 * a uid's last arena of the ordinary size.
 *
 * Own arenas: a datablock that clients of other uids may be handed (it
 * belongs to a graph whose mode lets them in: PTASK_BUF_OWN_MEMORY) gets
 * an arena of its own, exactly its pages, which is never registered
 * (milliseconds a datablock; copies go through pageable memory) and
 * never reused: it is destroyed with its datablock, and a client that
 * still maps it keeps the old pages, which nobody else ever gets.  An
 * arena of a uid's is handed only to that uid's clients (and root's).
 */
#ifndef PTASKD_ARENA_H
#define PTASKD_ARENA_H

#include <stdbool.h>
#include <stdint.h>
#include "daemon/backend/backend.h"

#define PD_ARENA_SPARE_BYTES	(256ULL << 20)	/* spare_max's default */
#define PD_ARENA_SPARE_NS	(60ULL * 1000 * 1000 * 1000)

struct pd_extent;

/**
 * struct pd_arena - one memfd of datablock memory
 * @id: namespace-unique, never reused
 * @fd: the memfd
 * @bytes: its size
 * @base: the daemon's mapping
 * @uid: whose datablocks it holds
 * @used: bytes handed out
 * @fresh: offsets from here on were never handed out, so they still read
 *	as zero (a new memfd's pages)
 * @idle_ns: when it last became empty (valid while @used is 0)
 * @free: free extents in offset order
 * @registered: host_register succeeded
 * @own: one datablock's alone (see "Own arenas" above)
 * @next: next arena of the namespace
 */
struct pd_arena {
	uint64_t id;
	int fd;
	uint64_t bytes;
	unsigned char *base;
	uint32_t uid;
	uint64_t used;
	uint64_t fresh;
	uint64_t idle_ns;
	struct pd_extent *free;
	bool registered;
	bool own;
	struct pd_arena *next;
};

/**
 * struct pd_arenas - every arena of a namespace
 * @be: backend to register arenas with (may be NULL)
 * @list: the arenas
 * @next_id: next arena id
 * @chunk: bytes of an ordinary arena
 * @spare_max: most bytes of empty arenas a uid keeps (PD_ARENA_SPARE_BYTES)
 * @count: arenas alive
 * @created: arenas made since init (for tests: reuse makes none)
 */
struct pd_arenas {
	struct pd_backend *be;
	struct pd_arena *list;
	uint64_t next_id;
	uint64_t chunk;
	uint64_t spare_max;
	uint32_t count;
	uint64_t created;
};

void pd_arenas_init(struct pd_arenas *as, struct pd_backend *be,
		    uint64_t chunk);
void pd_arenas_fini(struct pd_arenas *as);
/*
 * @bytes (rounded up to pages) for @uid: the arena and offset, and in
 * *@used how many of its first bytes were handed out before (the rest
 * still read as zero).  Arenas in use are filled first, then the
 * smallest spare that fits, then a new arena is made.  Returns 0,
 * -ENOMEM or the memfd/mmap error.
 */
int pd_arenas_alloc(struct pd_arenas *as, uint32_t uid, uint64_t bytes,
		    struct pd_arena **arena, uint64_t *offset, uint64_t *used);
/*
 * @bytes in an own arena of @uid's (see above): offset 0, its pages
 * zero.  Returns 0, -ENOMEM or the memfd/mmap error.
 */
int pd_arenas_alloc_own(struct pd_arenas *as, uint32_t uid, uint64_t bytes,
			struct pd_arena **arena);
/*
 * Give an extent back; an arena left empty stays as a spare (see above),
 * an own arena goes.
 */
void pd_arenas_free(struct pd_arenas *as, struct pd_arena *arena,
		    uint64_t offset, uint64_t bytes);
/* The arena with id @id, or NULL. */
struct pd_arena *pd_arenas_find(struct pd_arenas *as, uint64_t id);

#endif /* PTASKD_ARENA_H */
