/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * host.h - helpers shared by the backends whose "device memory"
 * is host memory (sim and cpu), and by every backend (strength ranking).
 *
 * struct pd_hostspace is the memory of one space of such a backend: every
 * allocation it made, sorted by address, so that
 *  - a copy or a free naming an address the space never allocated is
 *    refused (-EFAULT) instead of scribbling over the daemon's heap, and
 *  - a host kernel can ask how many bytes lie behind a pointer parameter
 *    (pd_hostspace_extent), so a client's size parameter cannot make the
 *    privileged daemon read or write past a buffer, nor into another
 *    space's buffers (isolation holds for sim and cpu as for cuda).
 *
 * Locking: hs->lock guards the table.  The owning device worker allocates
 * and frees; another worker may look up ranges at the same time (the
 * source side of copy_d2d), hence the lock.
 */
#ifndef PTASKD_BACKEND_HOST_H
#define PTASKD_BACKEND_HOST_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "daemon/backend/backend.h"
#include "uapi/ptask_twin.h"

/* Alignment of host "device" allocations, as cuMemAlloc gives at least. */
#define PD_HOSTMEM_ALIGN	256

struct pd_hostblock {
	uint64_t addr;
	uint64_t bytes;
};

/**
 * struct pd_hostspace - one space's allocations
 * @lock: guards the fields below
 * @blocks: live allocations sorted by @addr
 * @n: entries in @blocks
 * @cap: room in @blocks
 * @used: bytes allocated
 * @borrowed: the blocks are someone else's memory (a registry of
 *	host_register ranges): tracked, never freed here
 */
struct pd_hostspace {
	pthread_mutex_t lock;
	struct pd_hostblock *blocks;
	size_t n;
	size_t cap;
	uint64_t used;
	bool borrowed;
};

int pd_hostspace_init(struct pd_hostspace *hs);
/* Frees every allocation still live; returns how many bytes they had. */
uint64_t pd_hostspace_fini(struct pd_hostspace *hs);
/* -ENOMEM when malloc fails (budgets are the caller's). */
int pd_hostspace_alloc(struct pd_hostspace *hs, size_t bytes,
		       uint64_t *dptr);
/* The allocation's size, or 0 (and nothing freed) when @dptr is none. */
uint64_t pd_hostspace_free(struct pd_hostspace *hs, uint64_t dptr);
/* Bytes from @addr to the end of the allocation holding it, or 0. */
uint64_t pd_hostspace_extent(struct pd_hostspace *hs, uint64_t addr);
/* Is [@addr, @addr + @bytes) inside one allocation? */
bool pd_hostspace_holds(struct pd_hostspace *hs, uint64_t addr,
			uint64_t bytes);
/*
 * A borrowed table (hs->borrowed): track [@addr, @addr + @bytes) without
 * allocating (host_register of sim and cpu), and forget it again.
 * -EEXIST when @addr is tracked already.
 */
int pd_hostspace_track(struct pd_hostspace *hs, uint64_t addr,
		       uint64_t bytes);
void pd_hostspace_untrack(struct pd_hostspace *hs, uint64_t addr);

/*
 * host_register, host_unregister and host_device_ptr of the host
 * backends (sim and cpu), whose state begins with a struct pd_hostreg:
 * registered ranges are tracked, and in place a kernel reads them at
 * their own address.  A range nobody registered: -ENOENT (kernel mode's
 * datablock mappings, which ptaskd does not register).
 */
struct pd_hostreg {
	struct pd_hostspace ranges;
};

int pd_hostreg_register(struct pd_backend *be, void *p, size_t bytes);
void pd_hostreg_unregister(struct pd_backend *be, void *p);
int pd_hostreg_device_ptr(struct pd_backend *be, void *space, void *host,
			  size_t bytes, uint64_t *dptr);
/* Bytes from @addr to the end of its registered range, or 0. */
uint64_t pd_hostreg_extent(struct pd_backend *be, uint64_t addr);

/*
 * Set be->info[*].strength: cores x core clock x memory clock, divided by
 * the largest, so the strongest device is 1.0 (PTask's ranking).  A
 * device with a zero factor gets a small positive strength so that it
 * still ranks, last; when no device reports its clocks (cpu) all are 1.0.
 */
void pd_backend_rank(struct pd_backend *be);

/*
 * kernel_load and kernel_unload of the host backends (cpu, sim): the
 * kernel is the host twin of @entry in exactly @code (twins.h), -ENOENT
 * if there is none.
 */
int pd_twin_kernel_load(struct pd_backend *be, void *space, const void *code,
			size_t code_len, const char *entry, void **kernel);
void pd_twin_kernel_unload(struct pd_backend *be, void *space, void *kernel);

/* The twin's view of @launch, with @extent(@ctx, p) for its buffers. */
void pd_twin_call_init(struct ptask_twin_call *call,
		       const struct pd_launch *launch,
		       uint64_t (*extent)(void *ctx, const void *p), void *ctx);

/* CLOCK_MONOTONIC now, in ns. */
uint64_t pd_now_ns(void);
/*
 * The same, or 0 unless -vv: for times only the debug log reports (a
 * clock read costs 40-45 ns on the GPU machines, and a small
 * invocation's path made about twenty of them; PTask's P1 round trip is
 * about 12 us there).
 */
uint64_t pd_debug_now_ns(void);
/* Sleep until CLOCK_MONOTONIC reaches @deadline_ns (no-op if past). */
void pd_sleep_until(uint64_t deadline_ns);

#endif /* PTASKD_BACKEND_HOST_H */
