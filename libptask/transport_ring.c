// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * transport_ring.c - libptask's user mode through shared-memory rings
 * (uapi/ptask.h, "Submission and completion rings"; ptaskd's side is
 * daemon/user/ring_server.c): push, pull, datablock create and release
 * without a socket message per call.  The pool and the call are the ring
 * client's (ring_client.c); this file supplies what is ptaskd's own: how
 * a ring is set up, and how a completion is waited for while ptaskd
 * polls the SQ.
 *
 * A ring is set up by PTASKD_OP_RING_SETUP on a new connection of the
 * context's client, which stays open as the ring's lifeline.  A ptaskd
 * that does not know the op (-ENOTTY) turns rings off for the context:
 * the socket carries everything, as with PTASK_TRANSPORT=socket.
 *
 * Waiting for a completion: poll the CQ for PTASK_SPIN_US (adaptive per
 * kind of call, struct lp_spin, as the socket path), then set the
 * sleeper flag and FUTEX_WAIT on the CQ's tail in slices of
 * SLEEP_SLICE_NS, looking at the lifeline between slices (a ptaskd that
 * dies is -ENOTCONN, as on the socket).
 *
 * Releases are fire and forget and ptaskd sees them at once.  A ring in
 * the pool has no waiting call, so every CQE it holds is a failed
 * release; reaping them while waiting for SQ room keeps ptaskd from
 * waiting on a full CQ while the client waits on a full SQ.
 *
 * Locking: as the ring client's; a ring is its caller's alone.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include "ring_client.h"
#include "uapi/ptaskd.h"

#define SLEEP_SLICE_NS		(100ULL * 1000 * 1000)
#define FULL_SLEEP_US		20

/**
 * struct lp_uring - one ring of the pool, user mode
 * @ring: what the ring client knows of it
 * @fd: the lifeline connection
 */
struct lp_uring {
	struct lp_ring ring;
	int fd;
};

static struct lp_uring *to_uring(struct lp_ring *lr)
{
	return (struct lp_uring *)((char *)lr - offsetof(struct lp_uring, ring));
}

static void uring_free(struct lp_ring *lr)
{
	struct lp_uring *ur = to_uring(lr);

	lp_ring_unmap(lr);
	close(ur->fd);
	free(ur);
}

/*
 * The data area ptaskd laid out after the ring (PTASKD_RING_DATA): from
 * the first page boundary past the ring's part to the region's end.  A
 * region too small for one leaves the ring without (its executor calls
 * go by the socket).
 */
static void data_area(struct lp_ring *lr)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t off = (lr->r.ring_bytes + page - 1) & ~(page - 1);

	if (off >= lr->bytes)
		return;
	lr->data = (uint8_t *)lr->map + off;
	lr->data_bytes = lr->bytes - off;
}

/*
 * A new ring; 1 if none can be had now (the call goes by the socket), 2
 * if ptaskd has none to offer at all.
 */
static int uring_open(struct ptask_ctx *ctx, struct lp_ring **out)
{
	struct ptaskd_ring_setup rs = { .sq_entries = 0 };
	struct lp_uring *ur;
	uint64_t token;
	size_t got = 0;
	int err, memfd = -1;

	ur = calloc(1, sizeof(*ur));
	if (!ur)
		return -ENOMEM;
	pthread_mutex_lock(&ctx->lock);
	token = ctx->token;
	pthread_mutex_unlock(&ctx->lock);
	err = lp_conn_open(ctx->socket_path, &token, &ur->fd);
	if (err) {
		free(ur);
		/* The daemon that knew this client is gone. */
		return err == -ECONNREFUSED || err == -ENOENT ? -ENOTCONN : err;
	}
	/* A data area for executor entries, unless ptaskd knows none. */
	if (!__atomic_load_n(&ctx->ring_no_data, __ATOMIC_RELAXED))
		rs.flags = PTASKD_RING_DATA;
	err = lp_exchange(ur->fd, PTASKD_OP_RING_SETUP, &rs, sizeof(rs), NULL,
			  0, &rs, sizeof(rs), &got, &memfd, NULL);
	if (err == -EINVAL && rs.flags) {
		/* An older ptaskd: no data area, ever; a new lifeline. */
		__atomic_store_n(&ctx->ring_no_data, true, __ATOMIC_RELAXED);
		uring_free(&ur->ring);
		return uring_open(ctx, out);
	}
	if (err == -ENOTTY) {
		err = 2;	/* an older ptaskd: never again */
		goto err_free;
	}
	/* ptaskd could not make one now (-ENOMEM, -EMFILE): the socket. */
	if (err && err != -ENOTCONN && err != -EPROTO) {
		err = 1;
		goto err_free;
	}
	if (!err && (got != sizeof(rs) || memfd < 0))
		err = -EPROTO;
	if (err)
		goto err_free;
	/* 1 if it cannot be mapped: no room here, the socket this time. */
	err = lp_ring_map(&ur->ring, memfd, 0, rs.region_bytes,
			  rs.sq_entries, rs.cq_entries);
	close(memfd);
	if (err)
		goto err_free;
	if (rs.flags & PTASKD_RING_DATA)
		data_area(&ur->ring);
	*out = &ur->ring;
	return 0;

err_free:
	uring_free(&ur->ring);
	return err;
}

/* Did ptaskd hang up the lifeline? */
static bool ring_gone(struct lp_ring *lr)
{
	struct pollfd p = { .fd = to_uring(lr)->fd, .events = POLLRDHUP };

	return poll(&p, 1, 0) > 0 &&
	       (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* A full SQ: take failed releases off the CQ, then give ptaskd time. */
static int uring_make_room(struct ptask_ctx *ctx, struct lp_ring *lr)
{
	int err = lp_ring_reap(ctx, lr, 0, NULL);

	if (err < 0)
		return err;
	if (ring_gone(lr))
		return -ENOTCONN;
	usleep(FULL_SLEEP_US);
	return 0;
}

/* Wait for the completion of entry @id: spin, then sleep in slices. */
static int uring_wait(struct ptask_ctx *ctx, struct lp_ring *lr, uint64_t id,
		      unsigned int cmd, struct ptask_cqe *cqe)
{
	struct lp_spin *spin = &ctx->spin;
	unsigned int kind = pc_spin_kind(cmd);
	uint64_t start = 0, spin_ns = 0;
	int found, n;

	if (spin->ns) {
		start = pc_ring_now_ns();
		if (pc_spin_worth(&spin->hist, kind))
			spin_ns = spin->ns;
	}
	for (;;) {
		found = lp_ring_reap(ctx, lr, id, cqe);
		if (found)
			break;
		n = pc_ring_q_wait(&lr->r.cq, spin_ns, true, SLEEP_SLICE_NS);
		spin_ns = 0;
		if (n < 0) {
			found = n;
			break;
		}
		if (!n && ring_gone(lr)) {
			found = -ENOTCONN;
			break;
		}
	}
	if (start)
		pc_spin_learn(&spin->hist, kind, pc_ring_now_ns() - start,
			      spin->ns);
	return found < 0 ? found : 0;
}

static const struct lp_ring_ops uring_ops = {
	.open = uring_open,
	.free = uring_free,
	.make_room = uring_make_room,
	.wait = uring_wait,
};

int lp_ring_call(struct ptask_ctx *ctx, unsigned int cmd, void *arg,
		 struct lp_mem *mem)
{
	return lp_ring_client_call(ctx, &uring_ops, cmd, arg, mem);
}

int lp_ring_push_async(struct ptask_ctx *ctx, struct ptask_push *a)
{
	if (__atomic_load_n(&ctx->rings_off, __ATOMIC_RELAXED))
		return 1;
	return lp_ring_client_push_async(ctx, &uring_ops, a);
}

int lp_ring_async_wait(struct ptask_ctx *ctx)
{
	return lp_ring_client_async_wait(ctx, &uring_ops);
}

void lp_rings_close(struct ptask_ctx *ctx)
{
	lp_ring_client_close(ctx, &uring_ops);
}
