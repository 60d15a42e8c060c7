// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * transport_kring.c - libptask's kernel mode through ptask.ko's rings
 * (uapi/ptask.h, "Kernel-mode rings"): push, pull, datablock create and
 * release as ring entries, many per PTASK_IOC_RING_ENTER.
 *
 * A pool of rings, as user mode's (transport_ring.c): a call takes an
 * idle ring or sets up one more (PTASK_IOC_RING_SETUP, mmap), so a ring
 * carries one waiting call at a time and a pull that blocks never holds
 * up another thread's push.  A module without rings (-ENOTTY, -EINVAL)
 * turns them off for the context; one that cannot make one more now
 * (-ENOSPC, -ENOMEM) sends that call by its ioctl.
 *
 * Releases are fire and forget: queued with PTASK_SQE_NO_CQE_ON_SUCCESS
 * in an idle ring's SQ and not entered; the next call through that ring
 * enters them together with its own entry, so a push and the releases
 * before it cost one system call.  A call that goes by its ioctl, and
 * ptask_ctx_close(), first enter the releases every idle ring holds
 * (ctx->kring_pending counts them), so a release never waits behind a
 * call of another kind.  A release the module refuses completes with a
 * CQE tagged RELEASE_TAG, counted in ctx->release_failed as in user mode.
 *
 * ENTER runs the entries as the ioctls (min_complete ~0: block as they
 * would); a signal ends it early (-EINTR, or fewer consumed), and the
 * entries not consumed are entered again, as the ioctl path restarts.
 *
 * Locking: ctx->lock protects the pool (ctx->krings); a ring taken from
 * the pool is its caller's alone.
 */
#define _FILE_OFFSET_BITS 64	/* ring offsets start at 2^48 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include "common/ring.h"
#include "internal.h"

#define RELEASE_TAG		(1ULL << 63)

/**
 * struct lp_kring - one ring of the pool
 * @id: the module's id for it (RING_ENTER's @ring)
 * @map: the region's mapping
 * @bytes: its size
 * @r: the attached ring
 * @queued: entries in the SQ not entered yet
 * @next_id: user_data of the next waited-for entry
 * @next: next idle ring
 */
struct lp_kring {
	uint32_t id;
	void *map;
	size_t bytes;
	struct pc_ring r;
	uint32_t queued;
	uint64_t next_id;
	struct lp_kring *next;
};

static void kring_free(struct lp_kring *kr)
{
	if (kr->map)
		munmap(kr->map, kr->bytes);
	free(kr);
}

/* A new ring; 1: none now (the ioctl, this time); 2: the module has none. */
static int kring_open(struct ptask_ctx *ctx, struct lp_kring **out)
{
	struct ptask_ring_setup a = { .size = sizeof(a) };
	struct lp_kring *kr;
	int err;

	if (ioctl(ctx->fd, PTASK_IOC_RING_SETUP, &a)) {
		err = errno;
		return err == ENOTTY || err == EINVAL ? 2 : 1;
	}
	/*
	 * The region lives with the fd; one this program cannot map stays
	 * unused until ptask_ctx_close (the module frees it then).
	 */
	kr = calloc(1, sizeof(*kr));
	if (!kr)
		return 1;
	kr->id = a.ring;
	kr->bytes = (size_t)a.region_bytes;
	kr->map = mmap(NULL, kr->bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ctx->fd, (off_t)a.mmap_offset);
	if (kr->map == MAP_FAILED) {
		kr->map = NULL;
		kring_free(kr);
		return 1;
	}
	err = pc_ring_attach(&kr->r, kr->map, kr->bytes, PC_RING_CLIENT);
	if (!err && (kr->r.sq.entries != a.sq_entries ||
		     kr->r.cq.entries != a.cq_entries))
		err = -EPROTO;
	if (err) {
		kring_free(kr);
		return err;
	}
	*out = kr;
	return 0;
}

/* An idle ring, or a new one; 1: none to be had (the ioctl, then). */
static int kring_get(struct ptask_ctx *ctx, struct lp_kring **out)
{
	int err;

	pthread_mutex_lock(&ctx->lock);
	*out = ctx->krings;
	if (*out)
		ctx->krings = (*out)->next;
	pthread_mutex_unlock(&ctx->lock);
	if (*out)
		return 0;
	err = kring_open(ctx, out);
	if (err == 2) {
		__atomic_store_n(&ctx->krings_off, true, __ATOMIC_RELAXED);
		err = 1;
	}
	return err;
}

/*
 * Back to the pool, or freed when ENTER failed (@err): the module's side
 * of it lives on with the fd, unused.  ctx->kring_pending may then count
 * releases it held: it is a hint for lp_krings_flush(), never a promise.
 */
static void kring_put(struct ptask_ctx *ctx, struct lp_kring *kr, int err)
{
	if (err) {
		kring_free(kr);
		return;
	}
	pthread_mutex_lock(&ctx->lock);
	kr->next = ctx->krings;
	ctx->krings = kr;
	pthread_mutex_unlock(&ctx->lock);
}

static void count_release_failure(struct ptask_ctx *ctx, int res)
{
	if (__atomic_fetch_add(&ctx->release_failed, 1, __ATOMIC_RELAXED) == 0)
		__atomic_store_n(&ctx->release_err, res, __ATOMIC_RELAXED);
}

/*
 * Take every completion the CQ holds; the one for @id (0: none expected)
 * goes to @out and makes this return 1.  Release failures are counted;
 * anything else is a broken ring (-EPROTO).
 */
static int reap(struct ptask_ctx *ctx, struct lp_kring *kr, uint64_t id,
		struct ptask_cqe *out)
{
	struct ptask_cqe cqe;
	int n, found = 0;

	n = pc_ring_q_ready(&kr->r.cq);
	if (n < 0)
		return n;
	while (n--) {
		pc_ring_q_peek(&kr->r.cq, &cqe);
		pc_ring_q_consume(&kr->r.cq);
		if (cqe.user_data & RELEASE_TAG) {
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

/*
 * Enter every entry queued, reaping as it goes; the completion of @id
 * (0: none) in @out.  0 or -errno (the ring is then unusable).
 */
static int enter_all(struct ptask_ctx *ctx, struct lp_kring *kr, uint64_t id,
		     struct ptask_cqe *out)
{
	struct ptask_ring_enter e = {
		.size = sizeof(e), .ring = kr->id, .min_complete = ~0U,
	};
	int n, found = 0, err;

	while (kr->queued) {
		e.to_submit = kr->queued;
		n = ioctl(ctx->fd, PTASK_IOC_RING_ENTER, &e);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			kr->queued -= (uint32_t)n;
		/* Reap whatever came, so the CQ never stops ENTER. */
		err = reap(ctx, kr, found ? 0 : id, out);
		if (err < 0)
			return err;
		found |= err;
	}
	if (id && !found)
		return -EPROTO;
	return 0;
}

/* Queue @sqe; a full SQ (releases only) is entered first. */
static int queue(struct ptask_ctx *ctx, struct lp_kring *kr,
		 const struct ptask_sqe *sqe)
{
	int space = pc_ring_q_space(&kr->r.sq), err;

	if (space < 0)
		return space;
	if (!space) {
		uint32_t queued = kr->queued;	/* releases only */

		err = enter_all(ctx, kr, 0, NULL);
		if (err)
			return err;
		__atomic_fetch_sub(&ctx->kring_pending, queued,
				   __ATOMIC_RELAXED);
	}
	memcpy(pc_ring_q_slot(&kr->r.sq), sqe, sizeof(*sqe));
	pc_ring_q_publish(&kr->r.sq, 1);
	kr->queued++;
	return 0;
}

int lp_kring_call(struct ptask_ctx *ctx, unsigned int cmd, void *arg)
{
	struct ptask_sqe sqe = { .cmd = cmd };
	struct ptask_cqe cqe;
	struct lp_kring *kr;
	uint32_t size, released;
	int err;

	memcpy(&size, arg, sizeof(size));
	/* What an entry has no room for: the ioctl then. */
	if (size > sizeof(sqe.arg))
		return 1;
	err = kring_get(ctx, &kr);
	if (err)
		return err;
	memcpy(&sqe.arg, arg, size);
	if (_IOC_NR(cmd) == _IOC_NR(PTASK_IOC_DATABLOCK_RELEASE)) {
		sqe.user_data = RELEASE_TAG;
		sqe.flags = PTASK_SQE_NO_CQE_ON_SUCCESS;
		err = queue(ctx, kr, &sqe);
		if (!err)
			__atomic_fetch_add(&ctx->kring_pending, 1,
					   __ATOMIC_RELAXED);
		kring_put(ctx, kr, err);
		return err;
	}
	/* Never RELEASE_TAG, never 0. */
	kr->next_id = (kr->next_id + 1) & ~RELEASE_TAG;
	if (!kr->next_id)
		kr->next_id = 1;
	sqe.user_data = kr->next_id;
	released = kr->queued;
	err = queue(ctx, kr, &sqe);
	if (!err)
		err = enter_all(ctx, kr, sqe.user_data, &cqe);
	/* The releases that rode along are done (or counted as failed). */
	if (!err && released)
		__atomic_fetch_sub(&ctx->kring_pending, released,
				   __ATOMIC_RELAXED);
	kring_put(ctx, kr, err);
	if (err)
		return err;
	if (!cqe.res && (_IOC_NR(cmd) == _IOC_NR(PTASK_IOC_PULL) ||
			 _IOC_NR(cmd) == _IOC_NR(PTASK_IOC_DATABLOCK_CREATE)))
		memcpy(arg, &cqe.arg, size);
	return cqe.res;
}

void lp_krings_flush(struct ptask_ctx *ctx)
{
	struct lp_kring *kr, *list;

	if (!__atomic_load_n(&ctx->kring_pending, __ATOMIC_RELAXED))
		return;
	/* Take the idle rings, enter what they hold, put them back. */
	pthread_mutex_lock(&ctx->lock);
	list = ctx->krings;
	ctx->krings = NULL;
	pthread_mutex_unlock(&ctx->lock);
	while ((kr = list)) {
		uint32_t queued = kr->queued;
		int err;

		list = kr->next;
		err = enter_all(ctx, kr, 0, NULL);
		if (!err)
			__atomic_fetch_sub(&ctx->kring_pending, queued,
					   __ATOMIC_RELAXED);
		kring_put(ctx, kr, err);
	}
}

void lp_krings_close(struct ptask_ctx *ctx)
{
	struct lp_kring *kr;

	lp_krings_flush(ctx);
	while ((kr = ctx->krings)) {
		ctx->krings = kr->next;
		kring_free(kr);
	}
}
