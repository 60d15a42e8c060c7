/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * source_kernel.h - ptaskd's kernel-mode source (engine.h): invocations
 * come from ptask.ko through a /dev/ptask fd registered as an executor.
 *
 * take        PTASK_IOC_EXEC_TAKE.  A non-blocking take is tried first
 *             (one syscall when work is waiting); when nothing is queued
 *             the caller sleeps in ppoll() on the fd (EPOLLIN: an
 *             invocation is queued for executors) and on an eventfd,
 *             until the deadline.
 * interrupt   writes that eventfd, so a blocked take returns -EINTR at
 *             once, without signals.  It is sticky: every take after it
 *             returns -EINTR too (it means shutdown, and stickiness
 *             closes the race of an interrupt that comes just before the
 *             taker goes to sleep).  complete, ptask_info and the
 *             datablock calls keep working, so the engine can finish
 *             what it took.
 * complete,   PTASK_IOC_EXEC_COMPLETE and PTASK_IOC_EXEC_PTASK_INFO.
 * ptask_info
 * db_map,     mmap(MAP_SHARED) of the module's datablock pages, shared
 * db_unmap    by handle and reference-counted: two invocations holding
 *             the same datablock share one mapping.  When the last user
 *             unmaps it the mapping is kept in a small idle cache (at
 *             most PD_KSRC_IDLE_MAX mappings and PD_KSRC_IDLE_BYTES
 *             bytes, least recently used first out), so a datablock the
 *             engine made for an output and then meets again as the
 *             input of the next ptask is mapped once.  An idle mapping
 *             keeps the datablock's pages alive after the datablock dies
 *             (uapi: mappings outlive datablocks), so the cache is
 *             emptied whenever the source goes idle (no invocation for
 *             PD_KSRC_IDLE_FLUSH_MS while a take waits), and an idle
 *             mapping older than PD_KSRC_IDLE_AGE_MS is dropped: both
 *             bound the memory held and make a handle wrap-around
 *             (2^32 datablocks later) unable to meet a stale mapping.
 *             A hit is checked against the mmap offset too.
 * db_create   PTASK_IOC_DATABLOCK_CREATE by size (no template, records
 *             0) and a mapping of it (cached as above).  Output
 *             datablocks cannot be pooled: their reference passes to the
 *             port on complete.
 * db_release  PTASK_IOC_DATABLOCK_RELEASE; an idle mapping of that
 *             datablock is dropped at once (nobody will meet it again).
 * forgotten   the module's death notices (EXEC_FORGOTTEN), read when a
 *             take says some wait or poll() says EPOLLPRI: a dead
 *             datablock's mapping goes and the forget callback
 *             (pd_kernel_source_set_forget: the engine's
 *             pd_engine_forget) drops its device copies at once.
 *
 * Threads: every operation may be called from any thread at once (the
 * engine's taker and device workers); the mapping cache has its own
 * mutex, the ioctls need none.
 */
#ifndef PTASKD_SOURCE_KERNEL_H
#define PTASKD_SOURCE_KERNEL_H

#include <stdbool.h>
#include <stdint.h>
#include "daemon/engine/engine.h"
#include "daemon/backend/backend.h"

#define PD_KSRC_DEV_PATH	"/dev/" PTASK_DEVICE_NAME
#define PD_KSRC_IDLE_MAX	64
#define PD_KSRC_IDLE_BYTES	(64ULL << 20)
#define PD_KSRC_IDLE_FLUSH_MS	20
#define PD_KSRC_IDLE_AGE_MS	1000

/**
 * struct pd_kernel_stats - the kernel source's counters (for tests and
 * benchmarks)
 * @taken: invocations taken
 * @completed: EXEC_COMPLETE calls that succeeded
 * @maps: mmap() calls made (db_map misses and db_create)
 * @hits: db_map calls served by an existing mapping
 * @unmaps: munmap() calls made
 * @creates: datablocks created
 * @releases: datablocks released
 * @mapped: mappings alive now (in use or idle)
 * @idle: of those, idle
 * @forgotten: death notices read (EXEC_FORGOTTEN)
 * @forgotten_lost: notices the module dropped (its queue was full)
 */
struct pd_kernel_stats {
	uint64_t taken;
	uint64_t completed;
	uint64_t maps;
	uint64_t hits;
	uint64_t unmaps;
	uint64_t creates;
	uint64_t releases;
	uint64_t mapped;
	uint64_t idle;
	uint64_t forgotten;
	uint64_t forgotten_lost;
};

/*
 * Open /dev/ptask (O_RDWR | O_CLOEXEC) and register it as an executor
 * with the inventory of @be (be->info[0 .. be->ndev - 1]), as the
 * executor of uid @exec_uid alone when it is >= 0 (--exec-uid).  Needs
 * CAP_SYS_ADMIN.  Returns 0 or -errno: -ENOENT (no /dev/ptask, or the
 * family is not registered), -EPERM, and those of netlink.h.
 */
int pd_kernel_source_open(struct pd_backend *be, int64_t exec_uid,
			  struct pd_source **out);

/*
 * Unregister, unmap every mapping and close the fd (invocations taken
 * and not completed fail their graphs with -EIO).  Call it after the
 * engine stopped using @src.
 */
void pd_kernel_source_close(struct pd_source *src);

/* /dev/ptask exists and the "ptask" family resolves. */
bool pd_kernel_available(void);

/*
 * Who hears of each dead datablock's handle (the engine's
 * pd_engine_forget); called from the taking thread, without the
 * source's lock.  NULL: nobody.
 */
void pd_kernel_source_set_forget(struct pd_source *src,
				 void (*forget)(void *arg, uint32_t handle),
				 void *arg);

/* The registered fd (for poll-based callers and tests). */
int pd_kernel_source_fd(struct pd_source *src);

void pd_kernel_source_stats(struct pd_source *src, struct pd_kernel_stats *st);

#endif /* PTASKD_SOURCE_KERNEL_H */
