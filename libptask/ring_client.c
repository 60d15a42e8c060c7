// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * ring_client.c - libptask's ring client, for both modes (see
 * ring_client.h): the pool of rings, queueing an entry, reaping
 * completions, and one call through a ring.  What differs between
 * ptaskd's rings and ptask.ko's comes in a struct lp_ring_ops
 * (transport_ring.c, transport_kring.c).
 *
 * Locking: ctx->lock protects the pool (ctx->rings); ctx->rings_off,
 * ctx->ring_pending, ctx->release_failed and ctx->release_err are
 * atomics.  A ring taken from the pool is its caller's alone, so nothing
 * of struct lp_ring needs a lock.
 */
#define _FILE_OFFSET_BITS 64	/* kernel mode's ring offsets start at 2^48 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include "ring_client.h"

bool lp_ring_cmd(unsigned int cmd)
{
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(PTASK_IOC_PUSH):
	case _IOC_NR(PTASK_IOC_PULL):
	case _IOC_NR(PTASK_IOC_DATABLOCK_CREATE):
	case _IOC_NR(PTASK_IOC_DATABLOCK_RELEASE):
		return true;
	}
	return false;
}

int lp_ring_map(struct lp_ring *lr, int fd, uint64_t offset, uint64_t bytes,
		uint32_t sq_entries, uint32_t cq_entries)
{
	int err;

	lr->bytes = (size_t)bytes;
	lr->map = mmap(NULL, lr->bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, (off_t)offset);
	if (lr->map == MAP_FAILED) {
		lr->map = NULL;
		return 1;
	}
	err = pc_ring_attach(&lr->r, lr->map, lr->bytes, PC_RING_CLIENT);
	if (!err && (lr->r.sq.entries != sq_entries ||
		     lr->r.cq.entries != cq_entries))
		err = -EPROTO;
	return err;
}

void lp_ring_unmap(struct lp_ring *lr)
{
	if (lr->map)
		munmap(lr->map, lr->bytes);
	lr->map = NULL;
}

/* An idle ring, or a new one; 1: none to be had (the other way, then). */
static int ring_get(struct ptask_ctx *ctx, const struct lp_ring_ops *ops,
		    struct lp_ring **out)
{
	int err;

	pthread_mutex_lock(&ctx->lock);
	*out = ctx->rings;
	if (*out)
		ctx->rings = (*out)->next;
	pthread_mutex_unlock(&ctx->lock);
	if (*out)
		return 0;
	err = ops->open(ctx, out);
	if (err == 2) {
		__atomic_store_n(&ctx->rings_off, true, __ATOMIC_RELAXED);
		err = 1;
	}
	return err;
}

/*
 * Back to the pool, or freed when it broke (@err): the other side's end
 * of it is its own to free.  ctx->ring_pending may then count releases
 * it held: a hint for lp_ring_client_flush(), never a promise.
 */
static void ring_put(struct ptask_ctx *ctx, const struct lp_ring_ops *ops,
		     struct lp_ring *lr, int err)
{
	if (err) {
		ops->free(lr);
		return;
	}
	pthread_mutex_lock(&ctx->lock);
	lr->next = ctx->rings;
	ctx->rings = lr;
	pthread_mutex_unlock(&ctx->lock);
}

static void count_release_failure(struct ptask_ctx *ctx, int res)
{
	if (__atomic_fetch_add(&ctx->release_failed, 1, __ATOMIC_RELAXED) == 0)
		__atomic_store_n(&ctx->release_err, res, __ATOMIC_RELAXED);
}

int lp_ring_reap(struct ptask_ctx *ctx, struct lp_ring *lr, uint64_t id,
		 struct ptask_cqe *out)
{
	struct ptask_cqe cqe;
	int n, found = 0;

	n = pc_ring_q_ready(&lr->r.cq);
	if (n < 0)
		return n;
	while (n--) {
		pc_ring_q_peek(&lr->r.cq, &cqe);
		pc_ring_q_consume(&lr->r.cq);
		if (cqe.user_data & LP_RING_RELEASE_TAG) {
			count_release_failure(ctx, cqe.res);
		} else if (id && cqe.user_data == id && !found) {
			*out = cqe;
			found = 1;
		} else {
			return -EPROTO;
		}
	}
	return found;
}

void lp_ring_entered(struct ptask_ctx *ctx, struct lp_ring *lr)
{
	if (!lr->held)
		return;
	__atomic_fetch_sub(&ctx->ring_pending, lr->held, __ATOMIC_RELAXED);
	lr->held = 0;
}

/* Queue @sqe, making room (the transport's way) while the SQ is full. */
static int queue(struct ptask_ctx *ctx, const struct lp_ring_ops *ops,
		 struct lp_ring *lr, const struct ptask_sqe *sqe)
{
	int space, err;

	for (;;) {
		space = pc_ring_q_space(&lr->r.sq);
		if (space < 0)
			return space;
		if (space)
			break;
		err = ops->make_room(ctx, lr);
		if (err)
			return err;
	}
	memcpy(pc_ring_q_slot(&lr->r.sq), sqe, sizeof(*sqe));
	pc_ring_q_publish(&lr->r.sq, 1);
	return 0;
}

static int release(struct ptask_ctx *ctx, const struct lp_ring_ops *ops,
		   struct lp_ring *lr, struct ptask_sqe *sqe)
{
	int err;

	sqe->user_data = LP_RING_RELEASE_TAG;
	sqe->flags = PTASK_SQE_NO_CQE_ON_SUCCESS;
	err = queue(ctx, ops, lr, sqe);
	if (!err && ops->hold_releases) {
		lr->held++;
		__atomic_fetch_add(&ctx->ring_pending, 1, __ATOMIC_RELAXED);
	}
	return err;
}

/* Queue @sqe and wait for its completion in @cqe. */
static int call(struct ptask_ctx *ctx, const struct lp_ring_ops *ops,
		struct lp_ring *lr, struct ptask_sqe *sqe, struct ptask_cqe *cqe)
{
	int err;

	/* Never the release tag, never 0. */
	lr->next_id = (lr->next_id + 1) & ~LP_RING_RELEASE_TAG;
	if (!lr->next_id)
		lr->next_id = 1;
	sqe->user_data = lr->next_id;
	err = queue(ctx, ops, lr, sqe);
	return err ?: ops->wait(ctx, lr, sqe->user_data, sqe->cmd, cqe);
}

int lp_ring_client_call(struct ptask_ctx *ctx, const struct lp_ring_ops *ops,
			unsigned int cmd, void *arg, struct lp_mem *mem)
{
	struct ptask_sqe sqe = { .cmd = cmd };
	struct ptask_cqe cqe;
	struct lp_ring *lr;
	uint32_t size;
	int err;

	memcpy(&size, arg, sizeof(size));
	/* What an entry has no room for: the other way then. */
	if (size > sizeof(sqe.arg))
		return 1;
	err = ring_get(ctx, ops, &lr);
	if (err)
		return err;
	memcpy(&sqe.arg, arg, size);
	if (_IOC_NR(cmd) == _IOC_NR(PTASK_IOC_DATABLOCK_RELEASE)) {
		err = release(ctx, ops, lr, &sqe);
		ring_put(ctx, ops, lr, err);
		return err;
	}
	err = call(ctx, ops, lr, &sqe, &cqe);
	ring_put(ctx, ops, lr, err);
	if (err)
		return err;
	if (!cqe.res && (_IOC_NR(cmd) == _IOC_NR(PTASK_IOC_PULL) ||
			 _IOC_NR(cmd) == _IOC_NR(PTASK_IOC_DATABLOCK_CREATE)))
		memcpy(arg, &cqe.arg, size);
	if (!cqe.res && mem && (cqe.flags & PTASK_CQE_MEM)) {
		mem->known = true;
		mem->arena = cqe.arena;
		mem->arena_bytes = cqe.arena_bytes;
		mem->offset = cqe.arena_offset;
	}
	return cqe.res;
}

void lp_ring_client_flush(struct ptask_ctx *ctx, const struct lp_ring_ops *ops)
{
	struct lp_ring *lr, *list;

	if (!ops->hold_releases ||
	    !__atomic_load_n(&ctx->ring_pending, __ATOMIC_RELAXED))
		return;
	/* Take the idle rings, flush what they hold, put them back. */
	pthread_mutex_lock(&ctx->lock);
	list = ctx->rings;
	ctx->rings = NULL;
	pthread_mutex_unlock(&ctx->lock);
	while ((lr = list)) {
		list = lr->next;
		ring_put(ctx, ops, lr, lr->held ? ops->flush(ctx, lr) : 0);
	}
}

void lp_ring_client_close(struct ptask_ctx *ctx, const struct lp_ring_ops *ops)
{
	struct lp_ring *lr;

	lp_ring_client_flush(ctx, ops);
	while ((lr = ctx->rings)) {
		ctx->rings = lr->next;
		/* Releases still queued go with the client, as all it held. */
		lp_ring_reap(ctx, lr, 0, NULL);
		ops->free(lr);
	}
}
