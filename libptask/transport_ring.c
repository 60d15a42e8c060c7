// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * transport_ring.c - libptask's user mode through shared-memory rings
 * (uapi/ptask.h, "Submission and completion rings"; ptaskd's side is
 * daemon/user/ring_server.c): push, pull, datablock create and release
 * without a socket message per call.
 *
 * A pool of rings, like the pool of connections: a call takes an idle
 * ring or sets up one more (PTASKD_OP_RING_SETUP on a new connection of
 * the context's client, which stays open as the ring's lifeline), so a
 * ring carries one waiting call at a time and a pull that blocks never
 * holds up another thread's push.  A ptaskd that does not know the op
 * (-ENOTTY) turns rings off for the context: the socket carries
 * everything, as with PTASK_TRANSPORT=socket.
 *
 * Waiting for a completion: poll the CQ for PTASK_SPIN_US (adaptive per
 * kind of call, struct lp_spin, as the socket path), then set the
 * sleeper flag and FUTEX_WAIT on the CQ's tail in slices of
 * SLEEP_SLICE_NS, looking at the lifeline between slices (a ptaskd that
 * dies is -ENOTCONN, as on the socket).
 *
 * Releases are fire and forget: submitted with
 * PTASK_SQE_NO_CQE_ON_SUCCESS and not waited for.  A release ptaskd
 * refuses completes with a CQE tagged RELEASE_TAG, which whoever next
 * reaps that ring counts (ctx->release_failed; ptask_ctx_close says so
 * on stderr).  A ring in the pool has no waiting call, so every CQE it
 * holds is such a failure; reaping them while waiting for SQ room keeps
 * ptaskd from waiting on a full CQ while the client waits on a full SQ.
 *
 * Locking: ctx->lock protects the pool (ctx->rings) and ctx->rings_off;
 * a ring taken from the pool is its caller's alone.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "common/ring.h"
#include "internal.h"
#include "uapi/ptaskd.h"

#define RELEASE_TAG		(1ULL << 63)
#define SLEEP_SLICE_NS		(100ULL * 1000 * 1000)
#define FULL_SLEEP_US		20

/**
 * struct lp_ring - one ring of the pool
 * @fd: the lifeline connection
 * @map: the region's mapping
 * @bytes: its size
 * @r: the attached ring
 * @next_id: user_data of the next waited-for entry
 * @next: next idle ring
 */
struct lp_ring {
	int fd;
	void *map;
	size_t bytes;
	struct pc_ring r;
	uint64_t next_id;
	struct lp_ring *next;
};

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

static void ring_free(struct lp_ring *lr)
{
	if (lr->map)
		munmap(lr->map, lr->bytes);
	close(lr->fd);
	free(lr);
}

/*
 * A new ring; 1 if none can be had now (the call goes by the socket), 2
 * if ptaskd has none to offer at all.
 */
static int ring_open(struct ptask_ctx *ctx, struct lp_ring **out)
{
	struct ptaskd_ring_setup rs = { .sq_entries = 0 };
	struct lp_ring *lr;
	uint64_t token;
	size_t got = 0;
	int err, memfd = -1;

	lr = calloc(1, sizeof(*lr));
	if (!lr)
		return -ENOMEM;
	pthread_mutex_lock(&ctx->lock);
	token = ctx->token;
	pthread_mutex_unlock(&ctx->lock);
	err = lp_conn_open(ctx->socket_path, &token, &lr->fd);
	if (err) {
		free(lr);
		/* The daemon that knew this client is gone. */
		return err == -ECONNREFUSED || err == -ENOENT ? -ENOTCONN : err;
	}
	err = lp_exchange(lr->fd, PTASKD_OP_RING_SETUP, &rs, sizeof(rs), NULL,
			  0, &rs, sizeof(rs), &got, &memfd, NULL);
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
	lr->bytes = (size_t)rs.region_bytes;
	lr->map = mmap(NULL, lr->bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		       memfd, 0);
	close(memfd);
	if (lr->map == MAP_FAILED) {
		lr->map = NULL;
		err = 1;	/* no room here: the socket, this time */
		goto err_free;
	}
	err = pc_ring_attach(&lr->r, lr->map, lr->bytes, PC_RING_CLIENT);
	if (!err && (lr->r.sq.entries != rs.sq_entries ||
		     lr->r.cq.entries != rs.cq_entries))
		err = -EPROTO;
	if (err)
		goto err_free;
	*out = lr;
	return 0;

err_free:
	ring_free(lr);
	return err;
}

/* An idle ring, or a new one; 1: none to be had (the socket, then). */
static int ring_get(struct ptask_ctx *ctx, struct lp_ring **out)
{
	int err;

	pthread_mutex_lock(&ctx->lock);
	*out = ctx->rings;
	if (*out)
		ctx->rings = (*out)->next;
	pthread_mutex_unlock(&ctx->lock);
	if (*out)
		return 0;
	err = ring_open(ctx, out);
	if (err == 2) {
		__atomic_store_n(&ctx->rings_off, true, __ATOMIC_RELAXED);
		err = 1;
	}
	return err;
}

/* Back to the pool, or freed when it broke (@err -ENOTCONN/-EPROTO). */
static void ring_put(struct ptask_ctx *ctx, struct lp_ring *lr, int err)
{
	if (err == -ENOTCONN || err == -EPROTO) {
		ring_free(lr);
		return;
	}
	pthread_mutex_lock(&ctx->lock);
	lr->next = ctx->rings;
	ctx->rings = lr;
	pthread_mutex_unlock(&ctx->lock);
}

/* Did ptaskd hang up the lifeline? */
static bool ring_gone(struct lp_ring *lr)
{
	struct pollfd p = { .fd = lr->fd, .events = POLLRDHUP };

	return poll(&p, 1, 0) > 0 &&
	       (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
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
static int reap(struct ptask_ctx *ctx, struct lp_ring *lr, uint64_t id,
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

/* Queue @sqe, waiting (and reaping) while the SQ is full. */
static int submit(struct ptask_ctx *ctx, struct lp_ring *lr,
		  const struct ptask_sqe *sqe)
{
	int space, err;

	for (;;) {
		space = pc_ring_q_space(&lr->r.sq);
		if (space < 0)
			return space;
		if (space)
			break;
		err = reap(ctx, lr, 0, NULL);
		if (err < 0)
			return err;
		if (ring_gone(lr))
			return -ENOTCONN;
		usleep(FULL_SLEEP_US);
	}
	memcpy(pc_ring_q_slot(&lr->r.sq), sqe, sizeof(*sqe));
	pc_ring_q_publish(&lr->r.sq, 1);
	return 0;
}

static uint64_t now_ns(void)
{
	return pc_ring_now_ns();
}

/* Wait for the completion of entry @id: spin, then sleep in slices. */
static int wait_cqe(struct ptask_ctx *ctx, struct lp_ring *lr, uint64_t id,
		    unsigned int cmd, struct ptask_cqe *cqe)
{
	struct lp_spin *spin = &ctx->spin;
	uint64_t bit = 1ULL << (_IOC_NR(cmd) & 63), start = 0, spin_ns = 0;
	uint64_t *slow = &spin->slow[0];
	int found, n;

	if (spin->ns) {
		start = now_ns();
		if (!(__atomic_load_n(slow, __ATOMIC_RELAXED) & bit))
			spin_ns = spin->ns;
	}
	for (;;) {
		found = reap(ctx, lr, id, cqe);
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
	if (start) {
		if (now_ns() - start > spin->ns)
			__atomic_or_fetch(slow, bit, __ATOMIC_RELAXED);
		else
			__atomic_and_fetch(slow, ~bit, __ATOMIC_RELAXED);
	}
	return found < 0 ? found : 0;
}

int lp_ring_call(struct ptask_ctx *ctx, unsigned int cmd, void *arg,
		 struct lp_mem *mem)
{
	struct ptask_sqe sqe = { .cmd = cmd };
	struct ptask_cqe cqe;
	struct lp_ring *lr;
	uint32_t size;
	int err;

	memcpy(&size, arg, sizeof(size));
	/* What the ring's entry has no room for: the socket then. */
	if (size > sizeof(sqe.arg))
		return 1;
	err = ring_get(ctx, &lr);
	if (err)
		return err;
	memcpy(&sqe.arg, arg, size);
	if (_IOC_NR(cmd) == _IOC_NR(PTASK_IOC_DATABLOCK_RELEASE)) {
		sqe.user_data = RELEASE_TAG;
		sqe.flags = PTASK_SQE_NO_CQE_ON_SUCCESS;
		err = submit(ctx, lr, &sqe);
		ring_put(ctx, lr, err);
		return err;
	}
	/* Never RELEASE_TAG, never 0. */
	lr->next_id = (lr->next_id + 1) & ~RELEASE_TAG;
	if (!lr->next_id)
		lr->next_id = 1;
	sqe.user_data = lr->next_id;
	err = submit(ctx, lr, &sqe);
	if (!err)
		err = wait_cqe(ctx, lr, sqe.user_data, cmd, &cqe);
	ring_put(ctx, lr, err);
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

void lp_rings_close(struct ptask_ctx *ctx)
{
	struct lp_ring *lr;

	while ((lr = ctx->rings)) {
		ctx->rings = lr->next;
		/* Releases still queued go with the client, as all it held. */
		reap(ctx, lr, 0, NULL);
		ring_free(lr);
	}
}
