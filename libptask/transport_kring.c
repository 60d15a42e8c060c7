// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * transport_kring.c - libptask's kernel mode through ptask.ko's rings
 * (uapi/ptask.h, "Kernel-mode rings"): push, pull, datablock create and
 * release as ring entries, many per PTASK_IOC_RING_ENTER.  The pool and
 * the call are the ring client's (ring_client.c); this file supplies
 * what is the module's own: a ring is set up by PTASK_IOC_RING_SETUP and
 * mmap of /dev/ptask, and entries are seen only when entered.
 *
 * A module without rings (-ENOTTY, -EINVAL) turns them off for the
 * context; one that cannot make one more now (-ENOSPC, -ENOMEM) sends
 * that call by its ioctl.
 *
 * Releases are held (lp_ring_ops.hold_releases): queued in an idle
 * ring's SQ and not entered; the next call through that ring enters them
 * together with its own entry, so a push and the releases before it cost
 * one system call.  A call that goes by its ioctl, and ptask_ctx_close(),
 * first enter the releases every idle ring holds (ctx->ring_pending
 * counts them), so a release never waits behind a call of another kind.
 *
 * ENTER runs the entries as the ioctls (min_complete ~0: block as they
 * would); a signal ends it early (-EINTR, or fewer consumed), and the
 * entries not consumed are entered again, as the ioctl path restarts.
 * What is queued and not entered is what the SQ holds: the module moves
 * the SQ's head only inside ENTER.
 *
 * Locking: as the ring client's; a ring is its caller's alone.
 */
#define _FILE_OFFSET_BITS 64	/* ring offsets start at 2^48 */
#include <errno.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include "ring_client.h"

/**
 * struct lp_kring - one ring of the pool, kernel mode
 * @ring: what the ring client knows of it
 * @id: the module's id for it (RING_ENTER's @ring)
 */
struct lp_kring {
	struct lp_ring ring;
	uint32_t id;
};

static struct lp_kring *to_kring(struct lp_ring *lr)
{
	return (struct lp_kring *)((char *)lr - offsetof(struct lp_kring, ring));
}

/*
 * The region lives with the fd: one this program frees (or cannot map)
 * stays unused until ptask_ctx_close (the module frees it then).
 */
static void kring_free(struct lp_ring *lr)
{
	lp_ring_unmap(lr);
	free(to_kring(lr));
}

/* A new ring; 1: none now (the ioctl, this time); 2: the module has none. */
static int kring_open(struct ptask_ctx *ctx, struct lp_ring **out)
{
	struct ptask_ring_setup a = { .size = sizeof(a) };
	struct lp_kring *kr;
	int err;

	if (ioctl(ctx->fd, PTASK_IOC_RING_SETUP, &a)) {
		err = errno;
		return err == ENOTTY || err == EINVAL ? 2 : 1;
	}
	kr = calloc(1, sizeof(*kr));
	if (!kr)
		return 1;
	kr->id = a.ring;
	err = lp_ring_map(&kr->ring, ctx->fd, a.mmap_offset, a.region_bytes,
			  a.sq_entries, a.cq_entries);
	if (err) {
		kring_free(&kr->ring);
		return err;
	}
	*out = &kr->ring;
	return 0;
}

/*
 * Enter every entry queued, reaping as it goes; the completion of @id
 * (0: none) in @out.  0 or -errno (the ring is then unusable).
 */
static int enter_all(struct ptask_ctx *ctx, struct lp_ring *lr, uint64_t id,
		     struct ptask_cqe *out)
{
	struct ptask_ring_enter e = {
		.size = sizeof(e), .ring = to_kring(lr)->id,
		.min_complete = ~0U,
	};
	int n, found = 0, err;

	for (;;) {
		n = pc_ring_q_space(&lr->r.sq);
		if (n < 0)
			return n;
		e.to_submit = lr->r.sq.entries - (uint32_t)n;
		if (!e.to_submit)
			break;
		n = ioctl(ctx->fd, PTASK_IOC_RING_ENTER, &e);
		if (n < 0 && errno != EINTR)
			return -errno;
		/* Reap whatever came, so the CQ never stops ENTER. */
		err = lp_ring_reap(ctx, lr, found ? 0 : id, out);
		if (err < 0)
			return err;
		found |= err;
	}
	/* The releases that rode along are done (or counted as failed). */
	lp_ring_entered(ctx, lr);
	if (id && !found)
		return -EPROTO;
	return 0;
}

/* A full SQ holds releases only: enter them. */
static int kring_flush(struct ptask_ctx *ctx, struct lp_ring *lr)
{
	return enter_all(ctx, lr, 0, NULL);
}

static int kring_wait(struct ptask_ctx *ctx, struct lp_ring *lr, uint64_t id,
		      unsigned int cmd, struct ptask_cqe *cqe)
{
	(void)cmd;	/* ENTER blocks as the call's ioctl would */
	return enter_all(ctx, lr, id, cqe);
}

static const struct lp_ring_ops kring_ops = {
	.open = kring_open,
	.free = kring_free,
	.make_room = kring_flush,
	.wait = kring_wait,
	.flush = kring_flush,
	.hold_releases = true,
};

int lp_kring_call(struct ptask_ctx *ctx, unsigned int cmd, void *arg)
{
	/* The module's datablocks map by mmap_offset: no @mem. */
	return lp_ring_client_call(ctx, &kring_ops, cmd, arg, NULL);
}

void lp_krings_flush(struct ptask_ctx *ctx)
{
	lp_ring_client_flush(ctx, &kring_ops);
}

void lp_krings_close(struct ptask_ctx *ctx)
{
	lp_ring_client_close(ctx, &kring_ops);
}
