/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * arena.h - datablock memory of the user-mode namespace: memfd arenas
 * carved into page-aligned extents.
 *
 * An arena is one memfd the daemon maps once and registers once with the
 * backend for DMA; clients receive its fd and map it themselves.  Arenas
 * belong to one uid (see ns_user.h for why).  Locking: the namespace lock
 * protects every arena and extent list.
 */
#ifndef PTASKD_ARENA_H
#define PTASKD_ARENA_H

#include <stdbool.h>
#include <stdint.h>
#include "backend.h"

struct pd_extent;

/**
 * struct pd_arena - one memfd of datablock memory
 * @id: namespace-unique, never reused
 * @fd: the memfd
 * @bytes: its size
 * @base: the daemon's mapping
 * @uid: whose datablocks it holds
 * @used: bytes handed out
 * @free: free extents in offset order
 * @registered: host_register succeeded
 * @next: next arena of the namespace
 */
struct pd_arena {
	uint64_t id;
	int fd;
	uint64_t bytes;
	unsigned char *base;
	uint32_t uid;
	uint64_t used;
	struct pd_extent *free;
	bool registered;
	struct pd_arena *next;
};

/**
 * struct pd_arenas - every arena of a namespace
 * @be: backend to register arenas with (may be NULL)
 * @list: the arenas
 * @next_id: next arena id
 * @chunk: bytes of an ordinary arena
 * @count: arenas alive
 */
struct pd_arenas {
	struct pd_backend *be;
	struct pd_arena *list;
	uint64_t next_id;
	uint64_t chunk;
	uint32_t count;
};

void pd_arenas_init(struct pd_arenas *as, struct pd_backend *be,
		    uint64_t chunk);
void pd_arenas_fini(struct pd_arenas *as);
/*
 * @bytes (rounded up to pages) for @uid: the arena and offset.
 * Returns 0, -ENOMEM or the memfd/mmap error.
 */
int pd_arenas_alloc(struct pd_arenas *as, uint32_t uid, uint64_t bytes,
		    struct pd_arena **arena, uint64_t *offset);
/* Give an extent back; an arena left empty is freed unless it is @uid's last. */
void pd_arenas_free(struct pd_arenas *as, struct pd_arena *arena,
		    uint64_t offset, uint64_t bytes);
/* The arena with id @id, or NULL. */
struct pd_arena *pd_arenas_find(struct pd_arenas *as, uint64_t id);

#endif /* PTASKD_ARENA_H */
