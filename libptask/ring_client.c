// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * ring_client.c - libptask's ring client, for both modes (see
 * ring_client.h): the pool of rings, queueing an entry, reaping
 * completions, and one call through a ring.  What differs between
 * ptaskd's rings and ptask.ko's comes in a struct lp_ring_ops
 * (transport_ring.c, transport_kring.c).
 *
 * Asynchronous pushes (ptask_push_async) go through one ring of their
 * own, out of the pool, so that they run in the order they were queued:
 * ctx->async_ring, taken under ctx->async_lock by whoever queues, reaps
 * or waits.  A synchronous push waits for them first (its channel may be
 * theirs), and a release while any is pending goes through that ring
 * behind them (its datablock may be one of theirs).
 *
 * Locking: ctx->lock protects the pool (ctx->rings); ctx->async_lock
 * the asynchronous ring and its counts (taken before ctx->lock, never
 * after); ctx->rings_off, ctx->ring_pending, ctx->release_failed,
 * ctx->release_err, ctx->async_done, ctx->async_failed and
 * ctx->async_err are atomics.  A ring taken from the pool is its
 * caller's alone, so nothing of struct lp_ring needs a lock.
 */
#define _FILE_OFFSET_BITS 64	/* kernel mode's ring offsets start at 2^48 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include "ring_client.h"

bool lp_ring_data_cmd(unsigned int cmd)
{
	return _IOC_NR(cmd) == _IOC_NR(PTASK_IOC_EXEC_TAKE) ||
	       _IOC_NR(cmd) == _IOC_NR(PTASK_IOC_EXEC_COMPLETE);
}

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

/* An asynchronous push completed with @res. */
static void count_async_done(struct ptask_ctx *ctx, int res)
{
	int none = 0;

	if (res < 0) {
		__atomic_fetch_add(&ctx->async_failed, 1, __ATOMIC_RELAXED);
		__atomic_compare_exchange_n(&ctx->async_err, &none, res, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
	__atomic_fetch_add(&ctx->async_done, 1, __ATOMIC_RELEASE);
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
			continue;
		}
		/* Only the asynchronous ring carries these (ring_client.h). */
		if (cqe.user_data & LP_RING_ASYNC_TAG)
			count_async_done(ctx, cqe.res);
		else if (!id || cqe.user_data != id)
			return -EPROTO;
		if (id && cqe.user_data == id && !found) {
			*out = cqe;
			found = 1;
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

	/* Never a tag, never 0. */
	lr->next_id = (lr->next_id + 1) &
		      ~(LP_RING_RELEASE_TAG | LP_RING_ASYNC_TAG);
	if (!lr->next_id)
		lr->next_id = 1;
	sqe->user_data = lr->next_id;
	err = queue(ctx, ops, lr, sqe);
	return err ?: ops->wait(ctx, lr, sqe->user_data, sqe->cmd, cqe);
}

/* The user_data of the @n-th asynchronous push of a context. */
static uint64_t async_id(uint64_t n)
{
	return LP_RING_ASYNC_TAG |
	       (n & ~(LP_RING_RELEASE_TAG | LP_RING_ASYNC_TAG));
}

/* Asynchronous pushes queued and not seen complete (a hint unlocked). */
static bool async_pending(struct ptask_ctx *ctx)
{
	return __atomic_load_n(&ctx->async_done, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(&ctx->async_sent, __ATOMIC_RELAXED);
}

/*
 * The asynchronous ring broke (ptaskd went, or it wrote garbage): what
 * it had queued will never complete, so each counts as failed with
 * @err, and the ring is freed.  ctx->async_lock held.
 */
static void async_ring_broken(struct ptask_ctx *ctx,
			      const struct lp_ring_ops *ops, int err)
{
	while (async_pending(ctx))
		count_async_done(ctx, err);
	ops->free(ctx->async_ring);
	ctx->async_ring = NULL;
}

/* Wait for every queued asynchronous push; ctx->async_lock held. */
static int async_wait_locked(struct ptask_ctx *ctx,
			     const struct lp_ring_ops *ops)
{
	struct ptask_cqe cqe;
	int err;

	if (!ctx->async_ring || !async_pending(ctx))
		return 0;
	/* They complete in order: the last one's CQE says all are done. */
	err = ops->wait(ctx, ctx->async_ring, async_id(ctx->async_sent), 0,
			&cqe);
	if (err)
		async_ring_broken(ctx, ops, err);
	return err;
}

int lp_ring_client_async_wait(struct ptask_ctx *ctx,
			      const struct lp_ring_ops *ops)
{
	int err;

	if (!async_pending(ctx))
		return 0;
	pthread_mutex_lock(&ctx->async_lock);
	err = async_wait_locked(ctx, ops);
	pthread_mutex_unlock(&ctx->async_lock);
	return err;
}

int lp_ring_client_push_async(struct ptask_ctx *ctx,
			      const struct lp_ring_ops *ops,
			      const struct ptask_push *a)
{
	struct ptask_sqe sqe = { .cmd = PTASK_IOC_PUSH };
	int err;

	pthread_mutex_lock(&ctx->async_lock);
	/* Completions of earlier ones (it keeps the CQ from filling up). */
	if (ctx->async_ring) {
		err = lp_ring_reap(ctx, ctx->async_ring, 0, NULL);
		if (err < 0)
			async_ring_broken(ctx, ops, err);
	}
	/* An earlier one failed: say so before queueing more behind it. */
	err = __atomic_exchange_n(&ctx->async_err, 0, __ATOMIC_RELAXED);
	if (err)
		goto out;
	if (!ctx->async_handles) {
		ctx->async_handles = calloc(LP_ASYNC_HANDLES,
					    sizeof(*ctx->async_handles));
		if (!ctx->async_handles) {
			err = -ENOMEM;
			goto out;
		}
	}
	if (!ctx->async_ring) {
		err = ring_get(ctx, ops, &ctx->async_ring);
		if (err)
			goto out;	/* 1: synchronously, then */
	}
	/* Its slot in async_handles is an old one's: let that finish. */
	if (ctx->async_sent - __atomic_load_n(&ctx->async_done,
					      __ATOMIC_ACQUIRE) >=
	    LP_ASYNC_HANDLES) {
		err = async_wait_locked(ctx, ops);
		if (err)
			goto out;
	}
	memcpy(&sqe.arg, a, sizeof(*a));
	sqe.user_data = async_id(ctx->async_sent + 1);
	__atomic_store_n(&ctx->async_handles[(ctx->async_sent + 1) %
					     LP_ASYNC_HANDLES],
			 a->datablock, __ATOMIC_RELAXED);
	err = queue(ctx, ops, ctx->async_ring, &sqe);
	if (err)
		goto out_broken;
	__atomic_store_n(&ctx->async_sent, ctx->async_sent + 1,
			 __ATOMIC_RELEASE);
	goto out;

out_broken:
	async_ring_broken(ctx, ops, err);
out:
	pthread_mutex_unlock(&ctx->async_lock);
	return err;
}

/*
 * Is an asynchronous push of datablock @handle pending?  Without the
 * lock: the pusher may hold it while it waits for room in the ring, and
 * a thread releasing another datablock (a CPU ptask's worker, whose
 * work drains the channel the pusher waits on) must not wait for it.
 */
static bool async_handle_pending(struct ptask_ctx *ctx, uint32_t handle)
{
	uint64_t sent = __atomic_load_n(&ctx->async_sent, __ATOMIC_ACQUIRE);
	uint64_t done = __atomic_load_n(&ctx->async_done, __ATOMIC_ACQUIRE);
	uint64_t n;

	if (!ctx->async_handles || sent - done > LP_ASYNC_HANDLES)
		return sent != done;
	for (n = done + 1; n <= sent; n++)
		if (__atomic_load_n(&ctx->async_handles[n % LP_ASYNC_HANDLES],
				    __ATOMIC_RELAXED) == handle)
			return true;
	return false;
}

/*
 * A release of a datablock an asynchronous push still has to push goes
 * behind that push, on its ring: 0 or -errno, or 1: none pending (the
 * pool's rings, then).
 */
static int release_behind_async(struct ptask_ctx *ctx,
				const struct lp_ring_ops *ops,
				struct ptask_sqe *sqe)
{
	int err = 1;

	if (!async_pending(ctx) ||
	    !async_handle_pending(ctx, sqe->arg.release.handle))
		return 1;
	pthread_mutex_lock(&ctx->async_lock);
	if (ctx->async_ring &&
	    async_handle_pending(ctx, sqe->arg.release.handle)) {
		err = release(ctx, ops, ctx->async_ring, sqe);
		if (err)
			async_ring_broken(ctx, ops, err);
	}
	pthread_mutex_unlock(&ctx->async_lock);
	return err;
}

/* Where a data-area take puts its port records: after room for @inv. */
static uint64_t take_ports_off(uint32_t inv)
{
	uint64_t off = (uint64_t)inv * sizeof(struct ptask_invocation);

	return (off + PTASK_RING_ALIGN - 1) & ~(uint64_t)(PTASK_RING_ALIGN - 1);
}

/*
 * An executor call through @lr's data area (uapi/ptask.h, PTASK_SQE_DATA):
 * EXEC_COMPLETE's outputs written there first, EXEC_TAKE's records read
 * back from there (with each port's struct ptask_ring_mem into @mem).
 * The take goes at its first size (its @policy does not fit an entry) and
 * asks for no more than the area holds.  0 or -errno as the ioctl; a
 * broken ring (the call's own error) is the caller's to drop.
 */
static int data_call(struct ptask_ctx *ctx, const struct lp_ring_ops *ops,
		     struct lp_ring *lr, unsigned int cmd, void *arg,
		     struct lp_mem *mem, int *ring_err)
{
	struct ptask_sqe sqe = { .cmd = cmd, .flags = PTASK_SQE_DATA };
	struct ptask_exec_complete *c = arg;
	struct ptask_exec_take *t = arg, out;
	struct ptask_cqe cqe;
	uint64_t ports_off, fit;
	uint32_t inv, ports, i;
	uint8_t *mems;
	int err;

	if (_IOC_NR(cmd) == _IOC_NR(PTASK_IOC_EXEC_COMPLETE)) {
		size_t len = (size_t)c->n_outputs *
			     sizeof(struct ptask_exec_output);

		if (len && !c->outputs)
			return -EFAULT;
		if (c->size > sizeof(sqe.arg) || len > lr->data_bytes)
			return 1;
		memcpy(&sqe.arg, c, c->size);
		if (len)
			memcpy(lr->data, (const void *)(uintptr_t)c->outputs,
			       len);
		sqe.arg.complete.outputs = 0;
		err = call(ctx, ops, lr, &sqe, &cqe);
		*ring_err = err;
		return err ?: cqe.res;
	}
	inv = t->max_invocations < PTASK_TAKE_MAX_INVOCATIONS ?
	      t->max_invocations : PTASK_TAKE_MAX_INVOCATIONS;
	ports = t->max_ports < PTASK_TAKE_MAX_PORTS ? t->max_ports :
						      PTASK_TAKE_MAX_PORTS;
	ports_off = take_ports_off(inv);
	if (ports_off >= lr->data_bytes)
		return 1;
	fit = (lr->data_bytes - ports_off) /
	      (sizeof(struct ptask_invocation_port) +
	       sizeof(struct ptask_ring_mem));
	if (ports > fit)
		ports = (uint32_t)fit;
	if (!inv || !ports)
		return 1;
	/* An entry holds the struct up to its first size (no @policy). */
	memcpy(&out, t, sizeof(out));
	out.size = PTASK_EXEC_TAKE_SIZE_VER0;
	out.max_invocations = inv;
	out.max_ports = ports;
	out.invocations = 0;
	out.ports = ports_off;
	memcpy(&sqe.arg, &out, PTASK_EXEC_TAKE_SIZE_VER0);
	err = call(ctx, ops, lr, &sqe, &cqe);
	*ring_err = err;
	if (err || cqe.res)
		return err ?: cqe.res;
	memset(&out, 0, sizeof(out));
	memcpy(&out, &cqe.arg, PTASK_EXEC_TAKE_SIZE_VER0);
	if (out.n_invocations > inv || out.n_ports > ports)
		return -EPROTO;
	t->n_invocations = out.n_invocations;
	t->n_ports = out.n_ports;
	t->policy = PTASK_POLICY_DEFAULT;
	memcpy((void *)(uintptr_t)t->invocations, lr->data,
	       (size_t)out.n_invocations * sizeof(struct ptask_invocation));
	memcpy((void *)(uintptr_t)t->ports, lr->data + ports_off,
	       (size_t)out.n_ports * sizeof(struct ptask_invocation_port));
	mems = lr->data + ports_off +
	       (uint64_t)ports * sizeof(struct ptask_invocation_port);
	for (i = 0; mem && i < out.n_ports; i++) {
		struct ptask_ring_mem m;

		memcpy(&m, mems + (size_t)i * sizeof(m), sizeof(m));
		mem[i].known = m.arena && m.offset <= m.arena_bytes;
		mem[i].arena = m.arena;
		mem[i].arena_bytes = m.arena_bytes;
		mem[i].offset = m.offset;
	}
	return 0;
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
	if (lp_ring_data_cmd(cmd)) {
		int ring_err = 0;

		err = ring_get(ctx, ops, &lr);
		if (err)
			return err;
		err = lr->data ? data_call(ctx, ops, lr, cmd, arg, mem,
					   &ring_err) : 1;
		ring_put(ctx, ops, lr, ring_err);
		return err;
	}
	/* What an entry has no room for: the other way then. */
	if (size > sizeof(sqe.arg))
		return 1;
	if (_IOC_NR(cmd) == _IOC_NR(PTASK_IOC_DATABLOCK_RELEASE)) {
		memcpy(&sqe.arg, arg, size);
		err = release_behind_async(ctx, ops, &sqe);
		if (err <= 0)
			return err;
	}
	/* Pushes keep their order: the asynchronous ones go first. */
	if (_IOC_NR(cmd) == _IOC_NR(PTASK_IOC_PUSH)) {
		err = lp_ring_client_async_wait(ctx, ops);
		if (err)
			return err;
	}
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

	/* What was pushed is pushed before the client goes. */
	pthread_mutex_lock(&ctx->async_lock);
	if (!async_wait_locked(ctx, ops) && ctx->async_ring) {
		lp_ring_reap(ctx, ctx->async_ring, 0, NULL);
		ops->free(ctx->async_ring);
		ctx->async_ring = NULL;
	}
	free(ctx->async_handles);
	ctx->async_handles = NULL;
	pthread_mutex_unlock(&ctx->async_lock);
	lp_ring_client_flush(ctx, ops);
	while ((lr = ctx->rings)) {
		ctx->rings = lr->next;
		/* Releases still queued go with the client, as all it held. */
		lp_ring_reap(ctx, lr, 0, NULL);
		ops->free(lr);
	}
}
