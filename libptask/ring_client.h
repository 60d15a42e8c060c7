/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * ring_client.h - libptask's ring client: the pool of rings and the call
 * through one (ring_client.c), shared by user mode's rings in ptaskd
 * (transport_ring.c) and kernel mode's rings in ptask.ko
 * (transport_kring.c).  A transport supplies only what differs, in a
 * struct lp_ring_ops: how a ring is set up and freed, what is done when
 * the SQ is full, and how a completion is waited for (user mode: spin,
 * then sleep on the CQ; kernel mode: PTASK_IOC_RING_ENTER).
 *
 * A ring carries one waiting call at a time: a call takes an idle ring
 * from the context's pool (ctx->rings) or has the transport set up one
 * more, so a pull that blocks never holds up another thread's push.
 *
 * Releases are fire and forget: queued with PTASK_SQE_NO_CQE_ON_SUCCESS
 * and tagged LP_RING_RELEASE_TAG, never waited for.  One that fails
 * completes with a CQE that whoever next reaps that ring counts in
 * ctx->release_failed (ptask_ctx_close says so on stderr).
 *
 * Locking: ctx->lock protects the pool (ctx->rings) and ctx->rings_off;
 * a ring taken from the pool is its caller's alone.
 */
#ifndef LIBPTASK_RING_CLIENT_H
#define LIBPTASK_RING_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/ring.h"
#include "internal.h"

/* user_data of every release; waited-for entries never carry it. */
#define LP_RING_RELEASE_TAG	(1ULL << 63)
/*
 * user_data of every asynchronous push (with its number in the
 * context's submission order): completed always, reaped whenever the
 * asynchronous ring is looked at, waited for by lp_ring_client_async_wait.
 */
#define LP_RING_ASYNC_TAG	(1ULL << 62)
/*
 * Asynchronous pushes pending at most (ctx->async_handles' entries); one
 * more waits for the earlier ones first.  A power of two, above what a
 * ring holds in its SQ and CQ.
 */
#define LP_ASYNC_HANDLES	1024

/**
 * struct lp_ring - one ring of the pool, as both transports see it (each
 *	embeds it in a struct of its own for what only it needs)
 * @map: the region's mapping (NULL: not mapped)
 * @bytes: its size
 * @r: the attached ring
 * @next_id: user_data of the last waited-for entry
 * @held: releases queued and not yet seen by the other side (only with
 *	&lp_ring_ops.hold_releases; part of ctx->ring_pending)
 * @next: next idle ring
 * @data: user mode: the ring's data area (PTASKD_RING_DATA), which its
 *	executor entries use (PTASK_SQE_DATA); NULL without one
 * @data_bytes: its size
 */
struct lp_ring {
	void *map;
	size_t bytes;
	uint8_t *data;
	size_t data_bytes;
	struct pc_ring r;
	uint64_t next_id;
	uint32_t held;
	struct lp_ring *next;
};

/**
 * struct lp_ring_ops - what a transport's rings do their own way
 * @open: set up one more ring: 0 and *@out; 1: none can be had now (this
 *	call goes the transport's other way); 2: the other side has no
 *	rings at all (rings are turned off for the context); or -errno
 *	(the call fails with it)
 * @free: unmap (lp_ring_unmap()) and free what @open made
 * @make_room: the SQ is full: make room or wait a while; 0 (the SQ is
 *	looked at again) or -errno (the ring is broken)
 * @wait: entry @id (a @cmd) is queued: its completion into @cqe; 0 or
 *	-errno (the ring is broken)
 * @flush: enter the releases @lr holds (hold_releases only): 0 or -errno
 *	(the ring is broken)
 * @hold_releases: a release stays queued until the next call through its
 *	ring, or a flush (kernel mode: it rides along with that ENTER);
 *	false: the other side sees it at once (user mode: ptaskd polls)
 */
struct lp_ring_ops {
	int (*open)(struct ptask_ctx *ctx, struct lp_ring **out);
	void (*free)(struct lp_ring *lr);
	int (*make_room)(struct ptask_ctx *ctx, struct lp_ring *lr);
	int (*wait)(struct ptask_ctx *ctx, struct lp_ring *lr, uint64_t id,
		    unsigned int cmd, struct ptask_cqe *cqe);
	int (*flush)(struct ptask_ctx *ctx, struct lp_ring *lr);
	bool hold_releases;
};

/*
 * For the transports' @open: map @bytes of @fd at @offset and attach as
 * the client, checking the sizes the setup answer gave.  0; 1 if the
 * mapping failed (no room here: the other way, this time); the attach's
 * -EINVAL or -EPROTO; -EPROTO if the region's sizes are not the answer's.
 */
int lp_ring_map(struct lp_ring *lr, int fd, uint64_t offset, uint64_t bytes,
		uint32_t sq_entries, uint32_t cq_entries);
/* For the transports' @free: undo lp_ring_map() (if it mapped). */
void lp_ring_unmap(struct lp_ring *lr);

/*
 * Take every completion the CQ holds; the one for @id (0: none expected)
 * goes to @out and makes this return 1.  Release failures are counted;
 * anything else is a broken ring (-EPROTO).
 */
int lp_ring_reap(struct ptask_ctx *ctx, struct lp_ring *lr, uint64_t id,
		 struct ptask_cqe *out);
/* For @wait and @flush: the releases @lr held have been entered. */
void lp_ring_entered(struct ptask_ctx *ctx, struct lp_ring *lr);

/*
 * A call (push, pull, datablock create or release: lp_ring_cmd(); or,
 * on a ring with a data area, EXEC_TAKE and EXEC_COMPLETE:
 * lp_ring_data_cmd()) through a ring of @ops: 0 or -errno as the ioctl
 * (a release: 0, fire and forget), or 1: no ring for this call (none to
 * be had, no data area, or the struct does not fit an entry): the
 * transport's other way.  @mem (may be NULL): where a pulled or created
 * datablock's bytes are, if the CQE says; for EXEC_TAKE an array of the
 * take's @max_ports entries, one per port record written.
 */
int lp_ring_client_call(struct ptask_ctx *ctx, const struct lp_ring_ops *ops,
			unsigned int cmd, void *arg, struct lp_mem *mem);
/*
 * Queue a push (@a, its timeout PTASK_FOREVER) on the context's
 * asynchronous ring without waiting for it: 0; the first failure of an
 * earlier one not yet returned (this one is not queued); -errno; or 1:
 * no ring to be had (push synchronously).  Pushes queued this way run
 * in order; a failure is counted in the context.
 */
int lp_ring_client_push_async(struct ptask_ctx *ctx,
			      const struct lp_ring_ops *ops,
			      const struct ptask_push *a);
/* Wait for every asynchronous push queued so far: 0 or -errno. */
int lp_ring_client_async_wait(struct ptask_ctx *ctx,
			      const struct lp_ring_ops *ops);
/* Flush the releases the idle rings hold (hold_releases only). */
void lp_ring_client_flush(struct ptask_ctx *ctx, const struct lp_ring_ops *ops);
/* Flush, then free every ring of the pool (ptask_ctx_close). */
void lp_ring_client_close(struct ptask_ctx *ctx, const struct lp_ring_ops *ops);

#endif /* LIBPTASK_RING_CLIENT_H */
