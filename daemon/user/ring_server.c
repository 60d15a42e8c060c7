// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ring_server.c - see ring_server.h.
 *
 * The region is a memfd sealed against shrinking and growing (so the
 * client cannot make ptaskd's mapping fault by truncating it), mapped
 * once here; the client maps the fd it is passed.  Everything ptaskd
 * reads from it goes through common/ring.c, which masks every index and
 * checks every count, and every entry is copied out before it is looked
 * at.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/ring.h"
#include "common/spin.h"
#include "daemon/log.h"
#include "daemon/trace.h"
#include "daemon/user/ring_entry.h"
#include "daemon/user/ring_server.h"

/* A CQ that stays full: look at the lifeline this often (us). */
#define CQ_FULL_SLEEP_US	50
/*
 * Pushes in a row consumed before the ring's thread helps the engine
 * with what they made ready (help_later): one help for a batch.
 */
#define HELP_BATCH		64
/*
 * Fire-and-forget releases held back (hold_release): at most this many,
 * and with nothing else queued behind them for this long (ns), they run.
 */
#define HELD_MAX		16
#define HELD_GRACE_NS		(5ULL * 1000)
/*
 * Releases run in one call from the engine's wait at most: the job it
 * waits for may be another client's, whose completion waits meanwhile.
 */
#define IDLE_RELEASES_MAX	4
/*
 * How long the ring's thread, waiting for a fence, waits for the pull
 * that usually follows a push (DOC: pulls answered at the fence), at
 * most: never past the fence's due time either.
 */
#define PULL_WAIT_NS		(10ULL * 1000)

/**
 * struct pd_ring - one client ring
 * @host: what its connection lent it
 * @ring: the attached region
 * @map: ptaskd's mapping of the region
 * @bytes: its size
 * @complained: a malformed entry was logged already
 * @last_ns: when the last entry was done (spinning runs from there)
 * @last_kind: pc_spin_kind of that entry's call
 * @hist: after which kinds of call the next entry came late last time:
 *	no polling after those (common/spin.h)
 * @unhelped: pushes in a row run without helping after them (help_later)
 * @data: the ring's data area (PTASKD_RING_DATA), NULL without one
 * @data_bytes: its size
 * @held: fire-and-forget releases read but not run yet (hold_release),
 *	@nheld of them, in order
 * @nheld: see @held
 * @in_idle: run_held is running from the engine's wait (no recursion)
 * @ahead_sqe: a pull run ahead (DOC: pulls answered at the fence), its
 *	answer @ahead_cqe posted when the fence of invocation @ahead_of
 *	passes (ring_seen); @ahead_of 0: none waits
 * @ahead_cqe: see @ahead_sqe
 * @ahead_of: see @ahead_sqe
 * @ahead_failed: that fence failed: the datablock @ahead_handle the pull
 *	took is let go and the pull runs again, plainly (redo_ahead)
 * @ahead_handle: see @ahead_failed
 * @pulled_early: the last entry consumed was a pull run ahead (its kind
 *	is what the next entry's gap is learnt against)
 * @post_err: a post from the engine's wait failed (the CQ is broken or
 *	the client went): the ring ends at the next look
 * @push_cqe: a helped push's answer, posted once the help launched its
 *	job (post_push_cqe), @push_pending while not yet
 * @push_pending: see @push_cqe
 * @late_push: PTASKD_LATE_PUSH_ANSWER is set (run_entry)
 * @pull_past: a pull answered at once goes before the releases held in
 *	front of it (pull_past_held; off with PTASKD_NO_PULL_PAST_HELD)
 */
struct pd_ring {
	struct pd_ring_host host;
	struct pc_ring ring;
	void *map;
	size_t bytes;
	uint8_t *data;
	size_t data_bytes;
	bool complained;
	uint64_t last_ns;
	unsigned int last_kind;
	struct pc_spin_hist hist;
	unsigned int unhelped;
	struct ptask_sqe held[HELD_MAX];
	unsigned int nheld;
	bool in_idle;
	struct ptask_sqe ahead_sqe;
	struct ptask_cqe ahead_cqe;
	uint64_t ahead_of;
	bool ahead_failed;
	uint32_t ahead_handle;
	bool pulled_early;
	int post_err;
	struct ptask_cqe push_cqe;
	bool push_pending;
	bool late_push;
	bool pull_past;
};

/* Has the lifeline hung up, or carried something (not allowed)? */
static bool ring_gone(void *arg)
{
	struct pd_ring *r = arg;
	struct pollfd p = { .fd = r->host.fd, .events = POLLIN | POLLRDHUP };

	if (*r->host.stopping)
		return true;
	return poll(&p, 1, 0) > 0 &&
	       (p.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR));
}

static int parse_setup(const void *payload, size_t len, uint32_t *sq,
		       uint32_t *flags)
{
	struct ptaskd_ring_setup rs;

	if (len != sizeof(rs))
		return -EINVAL;
	memcpy(&rs, payload, sizeof(rs));
	if (rs.cq_entries || (rs.flags & ~PTASKD_RING_DATA) || rs.reserved ||
	    rs.region_bytes)
		return -EINVAL;
	*flags = rs.flags;
	*sq = rs.sq_entries ? rs.sq_entries : PTASKD_RING_SQ_DEFAULT;
	if (*sq > PTASK_RING_ENTRIES_MAX / PTASK_RING_CQ_FACTOR ||
	    (*sq & (*sq - 1)))
		return -EINVAL;
	return 0;
}

int pd_ring_create(const struct pd_ring_host *host, const void *payload,
		   size_t len, struct ptaskd_ring_setup *reply, int *fd,
		   struct pd_ring **out)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t bytes, ring_bytes;
	uint32_t sq, flags;
	struct pd_ring *r;
	int err;

	err = parse_setup(payload, len, &sq, &flags);
	if (err)
		return err;
	ring_bytes = pc_ring_bytes(sq, sq * PTASK_RING_CQ_FACTOR);
	ring_bytes = (ring_bytes + (size_t)page - 1) & ~((size_t)page - 1);
	bytes = ring_bytes +
		(flags & PTASKD_RING_DATA ? PTASKD_RING_DATA_BYTES : 0);
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->host = *host;
	r->bytes = bytes;
	r->late_push = getenv("PTASKD_LATE_PUSH_ANSWER") != NULL;
	r->pull_past = getenv("PTASKD_NO_PULL_PAST_HELD") == NULL;
	*fd = memfd_create("ptaskd-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (*fd < 0) {
		err = -errno;
		goto err_free;
	}
	if (ftruncate(*fd, (off_t)bytes) ||
	    fcntl(*fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		err = -errno;
		goto err_close;
	}
	r->map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (r->map == MAP_FAILED) {
		err = -errno;
		goto err_close;
	}
	err = pc_ring_init(r->map, bytes, sq, sq * PTASK_RING_CQ_FACTOR);
	if (!err)
		err = pc_ring_attach(&r->ring, r->map, bytes, PC_RING_SERVER);
	if (err)
		goto err_unmap;
	if (flags & PTASKD_RING_DATA) {
		r->data = (uint8_t *)r->map + ring_bytes;
		r->data_bytes = bytes - ring_bytes;
	}
	memset(reply, 0, sizeof(*reply));
	reply->flags = flags;
	reply->sq_entries = sq;
	reply->cq_entries = sq * PTASK_RING_CQ_FACTOR;
	reply->region_bytes = bytes;
	*out = r;
	return 0;

err_unmap:
	munmap(r->map, bytes);
err_close:
	close(*fd);
	*fd = -1;
err_free:
	free(r);
	return err;
}

void pd_ring_destroy(struct pd_ring *r)
{
	if (!r)
		return;
	munmap(r->map, r->bytes);
	free(r);
}

/* Log the first malformed entry of the ring (and only that one). */
static void complain_once(struct pd_ring *r, const struct ptask_sqe *sqe,
			  int err)
{
	if (r->complained)
		return;
	r->complained = true;
	pd_log_warn("pid %d: ring entry refused (cmd 0x%x, flags 0x%x, size %u): %s; "
		    "further ones of this ring are not logged",
		    r->host.who->pid, sqe->cmd, sqe->flags, sqe->arg.size,
		    strerror(-err));
}

/* Where a pulled or created datablock's bytes are, for the client. */
static void add_mem(struct pd_ring *r, const struct pd_request *req,
		    struct ptask_cqe *cqe)
{
	struct pd_map_info mi;
	uint32_t handle;

	if (req->cmd == PTASK_IOC_PULL)
		handle = req->arg.pull.datablock;
	else if (req->cmd == PTASK_IOC_DATABLOCK_CREATE)
		handle = req->arg.db_create.handle;
	else
		return;
	/* Released meanwhile by another of its threads: it maps by MAP. */
	if (r->host.exec ? pd_ns_exec_place(r->host.client, handle, &mi) :
	    pd_ns_map(r->host.client, handle, &mi))
		return;
	cqe->flags |= PTASK_CQE_MEM;
	cqe->arena = mi.arena;
	cqe->arena_bytes = mi.arena_bytes;
	cqe->arena_offset = mi.offset;
}

/*
 * A PTASK_SQE_DATA entry's parts in the data area: EXEC_COMPLETE's
 * outputs copied out into @outs (private: the client may rewrite the
 * area meanwhile), EXEC_TAKE's reply buffers made.  0, -EOPNOTSUPP (the
 * ring has no data area), -EFAULT (pd_ring_entry_data_check), -ENOMEM.
 */
static int data_in(struct pd_ring *r, struct pd_request *req,
		   struct ptask_exec_output *outs)
{
	const union ptask_args *a = &req->arg;
	int err;

	if (!r->data)
		return -EOPNOTSUPP;
	err = pd_ring_entry_data_check(req, r->data_bytes);
	if (err)
		return err;
	if (req->cmd == PTASK_IOC_EXEC_TAKE)
		return pd_request_prepare(req);
	memcpy(outs, r->data + a->complete.outputs,
	       (size_t)a->complete.n_outputs * sizeof(*outs));
	req->io.outputs = outs;
	return 0;
}

/*
 * EXEC_TAKE's reply into the data area: the invocations, the port
 * records, and where each port's datablock is (struct ptask_ring_mem,
 * max_ports records past the port records; arena 0 where ptaskd cannot
 * say: the client asks with PTASKD_OP_MAP then).
 */
static void data_out(struct pd_ring *r, const struct pd_request *req)
{
	const struct ptask_exec_take *t = &req->arg.take;
	uint8_t *mems = r->data + pd_take_mems_offset(t);
	uint32_t i;

	memcpy(r->data + t->invocations, req->take_inv,
	       (size_t)t->n_invocations * sizeof(*req->take_inv));
	memcpy(r->data + t->ports, req->take_ports,
	       (size_t)t->n_ports * sizeof(*req->take_ports));
	for (i = 0; i < t->n_ports; i++) {
		struct ptask_ring_mem m = { 0 };
		struct pd_map_info mi;

		if (req->take_ports[i].datablock &&
		    !pd_ns_map(r->host.client, req->take_ports[i].datablock,
			       &mi)) {
			m.arena = mi.arena;
			m.arena_bytes = mi.arena_bytes;
			m.offset = mi.offset;
		}
		memcpy(mems + (size_t)i * sizeof(m), &m, sizeof(m));
	}
}

/* Post @cqe, waiting while the CQ is full; -errno ends the ring. */
static int post(struct pd_ring *r, const struct ptask_cqe *cqe)
{
	struct pc_ring_q *cq = &r->ring.cq;
	int space;

	for (;;) {
		space = pc_ring_q_space(cq);
		if (space < 0) {
			pd_log_warn("pid %d: ring's completion head is garbage; ring closed",
				    r->host.who->pid);
			return space;
		}
		if (space)
			break;
		/* The client reaps while it waits; a dead one never will. */
		if (ring_gone(r))
			return -ECONNRESET;
		usleep(CQ_FULL_SLEEP_US);
	}
	memcpy(pc_ring_q_slot(cq), cqe, sizeof(*cqe));
	pc_ring_q_publish(cq, 1);
	return 0;
}

/*
 * After push @sqe, is another push already queued?  Then the ring's
 * thread runs that first instead of helping the engine (at most
 * HELP_BATCH pushes in a row), and helps once the run ends, with all of
 * it: a client that queues many pushes without waiting
 * (ptask_push_async) keeps them in its ptask's input, so the one take
 * after the run finds each invocation's next one queued
 * (PTASK_INV_BACKLOG), the core completes them ahead one after another,
 * and they run as batches (engine.c, "Batches"); helping after each
 * push would launch one job and wait for it before the next entry is
 * even read.  The executor is not woken meanwhile: a taker woken at the
 * first push took that invocation alone and handed it to the device's
 * worker, and the batches only formed behind it, after two wake-ups
 * (on an H200, 2026-11-27, P1b with 64 asynchronous pushes, five runs
 * each alternated: 117k-125k invocations/s without that wake-up,
 * 102k-111k with it).  A push that would block on a full channel wakes
 * the executor itself (ns_user.c, call_locked).  The next entry is
 * peeked at only as a hint; it is copied and checked again when it runs.
 */
static bool help_later(struct pd_ring *r, const struct ptask_sqe *sqe)
{
	struct ptask_sqe next;

	if (_IOC_NR(sqe->cmd) != _IOC_NR(PTASK_IOC_PUSH) ||
	    r->unhelped + 1 >= HELP_BATCH || pc_ring_q_ready(&r->ring.sq) <= 0)
		return false;
	pc_ring_q_peek(&r->ring.sq, &next);
	return _IOC_NR(next.cmd) == _IOC_NR(PTASK_IOC_PUSH);
}

/*
 * The answer of the push being helped, if not posted yet: from the
 * engine's first fence wait (ring_idle), or once the help returns.
 */
static void post_push_cqe(struct pd_ring *r)
{
	if (!r->push_pending)
		return;
	r->push_pending = false;
	if (!r->post_err)
		r->post_err = post(r, &r->push_cqe);
	pd_trace(PD_TR_CQE);
}

/*
 * One entry, start to end: 0, or -errno when the ring must end.
 *
 * With PTASKD_LATE_PUSH_ANSWER set (an experiment, off by default: not
 * measured on a GPU yet), a push that made work ready and is helped
 * with at once is answered only once the help launched that work
 * (post_push_cqe, from the engine's fence wait), not before the help:
 * the answer (0.4 us of an H200's ring thread, 2026-12-02) comes before
 * the take, the placement, the preparation and the launch of the
 * round's only job, and the client, which waits for it only to queue
 * its pull, has that pull waited for there anyway (DOC: pulls answered
 * at the fence).  The client then learns of its push later.
 */
static int run_entry(struct pd_ring *r, const struct ptask_sqe *sqe)
{
	struct pd_call_ctx ctx = {
		.cancel = ring_gone, .cancel_arg = r, .defer = r->host.defer,
	};
	struct ptask_exec_output outs[PTASK_MAX_PORTS];
	struct pd_request req;
	struct ptask_cqe cqe;
	int err, perr;

	err = pd_ring_entry_parse(sqe, &req);
	if (!err && (sqe->flags & PTASK_SQE_DATA))
		err = data_in(r, &req, outs);
	if (err)
		complain_once(r, sqe, err);
	else
		err = pd_ns_call(r->host.client, r->host.who, req.cmd, &req.arg,
				 &req.io, &ctx);
	if (!err && req.cmd == PTASK_IOC_EXEC_TAKE)
		data_out(r, &req);
	pd_trace(PD_TR_CALL);
	/* The lifeline went, or ptaskd stops: nobody to answer. */
	if (err == -EINTR && ring_gone(r)) {
		pd_request_free(&req);
		return -ECONNRESET;
	}
	pd_ring_entry_answer(sqe, &req, err, &cqe);
	if (!err)
		add_mem(r, &req, &cqe);
	pd_request_free(&req);
	if (r->late_push && !err &&
	    _IOC_NR(sqe->cmd) == _IOC_NR(PTASK_IOC_PUSH) &&
	    pd_ring_entry_posts(sqe, err) && r->host.defer->deferred &&
	    !help_later(r, sqe)) {
		r->push_cqe = cqe;
		r->push_pending = true;
		r->unhelped = 0;
		pd_wake_defer_take(r->host.defer);
		r->host.help(r->host.help_arg);
		post_push_cqe(r);
		return r->post_err;
	}
	perr = pd_ring_entry_posts(sqe, err) ? post(r, &cqe) : 0;
	pd_trace(PD_TR_CQE);
	/* what the push made ready waits in the defer for the run's end */
	if (!perr && help_later(r, sqe)) {
		r->unhelped++;
		return 0;
	}
	r->unhelped = 0;
	if (pd_wake_defer_take(r->host.defer))
		r->host.help(r->host.help_arg);
	return perr;
}

/*
 * DOC: releases held back
 *
 * A client that reuses its input writes, each round, the release of the
 * last round's output and then its push: the release ran first, 0.8 us
 * of the ring thread's on the round's path (a trace of P1 on an H200,
 * 2026-12-01), though its completion is posted only if it fails.  So a
 * fire-and-forget release (PTASK_SQE_NO_CQE_ON_SUCCESS) is held here
 * instead, and runs (run_held, in order):
 *   - while this thread waits for the fence of a job it runs as a
 *     helper (pd_wake_defer.idle, called by the engine with its lock
 *     dropped): beside the kernel, off the round's path; the releases
 *     queued at the head of the SQ meanwhile run there too.  At most
 *     IDLE_RELEASES_MAX a wait, and only while the CQ has room for their
 *     failures: the job waited for may be another client's (a helper
 *     takes whatever is ready), and neither a client that queues
 *     releases without end nor one that never reaps may hold up its
 *     completion;
 *   - before any entry but a push, and before a push of a datablock
 *     held for release, so that whatever may depend on a release (a
 *     pull waiting for memory, a create, a ptask's take) sees it done;
 *     but right after a pull that takes a datablock already settled in
 *     its channel, which depends on none of them (pull_past_held);
 *   - when HELD_MAX are held, when nothing else came for HELD_GRACE_NS
 *     (a client that released its last datablock and went on with
 *     other things), and when the ring ends.
 * A release that fails posts its error completion when it runs, which
 * libptask counts whenever it sees one (ctx->release_failed).
 */
/* Every ring's, for ptaskd's last line (pd_ring_stats). */
static _Atomic uint64_t releases_held, releases_beside, pulls_ahead,
	pulls_redone, pulls_past;

void pd_ring_stats(uint64_t *held, uint64_t *beside, uint64_t *ahead,
		   uint64_t *redone, uint64_t *past)
{
	*held = atomic_load_explicit(&releases_held, memory_order_relaxed);
	*beside = atomic_load_explicit(&releases_beside, memory_order_relaxed);
	*ahead = atomic_load_explicit(&pulls_ahead, memory_order_relaxed);
	*redone = atomic_load_explicit(&pulls_redone, memory_order_relaxed);
	*past = atomic_load_explicit(&pulls_past, memory_order_relaxed);
}

static bool is_held_release(const struct ptask_sqe *sqe)
{
	return sqe->cmd == PTASK_IOC_DATABLOCK_RELEASE &&
	       sqe->flags == PTASK_SQE_NO_CQE_ON_SUCCESS;
}

/* Run one held release: the ring goes on whatever it answers. */
static void run_release(struct pd_ring *r, const struct ptask_sqe *sqe)
{
	struct pd_call_ctx ctx = {
		.cancel = ring_gone, .cancel_arg = r, .defer = r->host.defer,
	};
	struct pd_request req;
	struct ptask_cqe cqe;
	int err;

	err = pd_ring_entry_parse(sqe, &req);
	if (err)
		complain_once(r, sqe, err);
	else
		err = pd_ns_call(r->host.client, r->host.who, req.cmd, &req.arg,
				 &req.io, &ctx);
	pd_ring_entry_answer(sqe, &req, err, &cqe);
	pd_request_free(&req);
	if (pd_ring_entry_posts(sqe, err))
		post(r, &cqe);
}

static void run_held(struct pd_ring *r)
{
	unsigned int i;

	for (i = 0; i < r->nheld; i++)
		run_release(r, &r->held[i]);
	r->nheld = 0;
}

/* May the engine's wait run one more release (its failure has room)? */
static bool idle_room(struct pd_ring *r, unsigned int done)
{
	return done < IDLE_RELEASES_MAX && pc_ring_q_space(&r->ring.cq) > 0;
}

/*
 * DOC: pulls answered at the fence
 *
 * A client that pushes and then pulls one invocation's output (P1)
 * queues the pull while this thread, as the invocation's helper, waits
 * for its fence.  The invocation was completed ahead, so its output
 * already sits in the graph's output channel, its writer unsettled; the
 * pull used to run after the fence passed and after the settle, 1.5-2
 * us of this thread's after the kernel's end (a trace on an H200,
 * 2026-12-02: the settle 0.7, the next entry 0.2, the pull 0.3, its
 * completion 0.4).  Now, while the engine waits (pd_wake_defer.idle with
 * the invocation's id), a pull at the SQ's head runs ahead, never
 * blocking (pd_ns_pull_ahead): if the channel's head is that
 * invocation's output, the pull takes it and its answer waits here,
 * posted the moment the fence passes (pd_wake_defer.seen), before the
 * settle; the bytes are in the client's pages then (the kernel wrote
 * them in place, or their copy was queued before the fence).  If the
 * fence fails, the datablock is let go and the pull runs again after
 * the settle (redo_ahead waits for it), plainly, and meets the graph's
 * failure as it would have.  The job waited for may be another
 * client's (a helper takes whatever is ready): this ring's pull then
 * runs all the same when that job's fence passes, a pull's time (and
 * its wait for the pull, never past the fence's due time) before that
 * job's settle.
 * A pull that would block on anything else stays queued, untouched;
 * one that succeeds or fails at once is answered at once.  Where the
 * ring's entries come soon after a push (its spin history), the thread
 * waits for the pull up to PULL_WAIT_NS, never past the fence's due
 * time.  A pull that came only later is run the same way when the
 * fence passed, and answered at once, still before the settle.  Only
 * with room in the CQ for the answer.  Fire-and-forget releases queued
 * before the pull are held (DOC: releases held back) and run later:
 * held releases go before any other entry so that what may depend on
 * them sees them done, and a pull that takes a datablock already in its
 * channel depends on none (one that would wait, say for memory, stays
 * queued behind them); a release's failure, if any, is then posted
 * after the pull's answer instead of before it.
 */
static void pull_ahead(struct pd_ring *r, uint64_t writer, uint64_t due_ns)
{
	struct pd_request req;
	struct ptask_sqe sqe;
	struct ptask_cqe cqe;
	bool ahead, waited = !due_ns;
	uint64_t now;
	int err;

	if (r->ahead_of || r->ahead_failed || r->post_err ||
	    pc_ring_q_space(&r->ring.cq) <= 0)
		return;
	/* fire-and-forget releases before it are held, as serve holds them */
	for (;;) {
		if (pc_ring_q_ready(&r->ring.sq) <= 0) {
			/*
			 * Not queued yet, where entries come soon after a
			 * push: wait for it a little, not past the fence's
			 * due time.
			 */
			now = pc_ring_now_ns();
			if (waited || now >= due_ns ||
			    !pc_spin_worth(&r->hist,
					   pc_spin_kind(PTASK_IOC_PUSH)))
				return;
			waited = true;
			if (pc_ring_q_wait(&r->ring.sq,
					   due_ns - now < PULL_WAIT_NS ?
					   due_ns - now : PULL_WAIT_NS,
					   true, 0) <= 0)
				return;
			continue;
		}
		pc_ring_q_peek(&r->ring.sq, &sqe);	/* a private copy */
		if (!is_held_release(&sqe) || r->nheld == HELD_MAX)
			break;
		pc_ring_q_consume(&r->ring.sq);
		r->held[r->nheld++] = sqe;
		atomic_fetch_add_explicit(&releases_held, 1,
					  memory_order_relaxed);
	}
	if (sqe.cmd != PTASK_IOC_PULL || sqe.flags & PTASK_SQE_DATA)
		return;
	/* a bad one is serve's to refuse, and to log */
	if (pd_ring_entry_parse(&sqe, &req))
		return;
	err = pd_ns_pull_ahead(r->host.client, r->host.who, &req.arg.pull,
			       &req.io, writer, &ahead, r->host.defer);
	if (err == -EAGAIN) {
		pd_request_free(&req);
		return;
	}
	pc_ring_q_consume(&r->ring.sq);
	r->pulled_early = true;
	pd_trace(PD_TR_SQE);
	pd_ring_entry_answer(&sqe, &req, err, &cqe);
	if (!err)
		add_mem(r, &req, &cqe);
	if (!err && ahead) {
		r->ahead_sqe = sqe;
		r->ahead_cqe = cqe;
		r->ahead_of = writer;
		r->ahead_handle = req.arg.pull.datablock;
		atomic_fetch_add_explicit(&pulls_ahead, 1,
					  memory_order_relaxed);
	} else if (pd_ring_entry_posts(&sqe, err) && !r->post_err) {
		r->post_err = post(r, &cqe);
	}
	pd_request_free(&req);
}

/*
 * The fence of invocation @writer passed (@err 0) or failed.  A pull
 * that came after the engine's idle call runs now, answered at once.
 */
static void ring_seen(void *arg, uint64_t writer, int err)
{
	struct pd_ring *r = arg;

	if (!err && !r->ahead_of)
		pull_ahead(r, writer, 0);
	if (!r->ahead_of || r->ahead_of != writer)
		return;
	r->ahead_of = 0;
	if (err) {
		r->ahead_failed = true;
		return;
	}
	if (pd_ring_entry_posts(&r->ahead_sqe, 0) && !r->post_err)
		r->post_err = post(r, &r->ahead_cqe);
	pd_trace(PD_TR_CQE);
}

/*
 * The fence a pull run ahead waited for failed: once its invocation's
 * settle failed the graph (another thread may make it: the completion
 * thread reaping the lane; until then the datablock still has its
 * writer), let its datablock go and run the pull again, plainly, so it
 * meets that failure, not the channel's next datablock.  0, or -errno
 * when the ring must end.
 */
static int redo_ahead(struct pd_ring *r)
{
	struct ptask_datablock_release rel = {
		.size = sizeof(rel), .handle = r->ahead_handle,
	};
	int err;

	if (pd_ns_wait_unwritten(r->host.client, r->ahead_handle, ring_gone,
				 r))
		return -ECONNRESET;
	r->ahead_failed = false;
	atomic_fetch_add_explicit(&pulls_redone, 1, memory_order_relaxed);
	err = pd_ns_call(r->host.client, r->host.who,
			 PTASK_IOC_DATABLOCK_RELEASE, &rel, NULL, NULL);
	if (err)
		pd_log_debug("pid %d: a pull's datablock %u, its fence failed: release: %d",
			     r->host.who->pid, rel.handle, err);
	return run_entry(r, &r->ahead_sqe);
}

/*
 * The engine waits for a job this ring's thread runs (pd_wake_defer
 * .idle): the held releases, then those queued at the SQ's head by now,
 * within IDLE_RELEASES_MAX and the CQ's room; the rest stay held.  Then,
 * for a lone invocation completed ahead (@writer), a pull run ahead
 * (DOC: pulls answered at the fence).
 */
static void ring_idle(void *arg, uint64_t writer, uint64_t due_ns)
{
	struct pd_ring *r = arg;
	struct ptask_sqe sqe;
	unsigned int done = 0, i;

	if (r->in_idle)
		return;
	r->in_idle = true;
	/* the helped push's job is launched: its client may go on */
	post_push_cqe(r);
	for (; done < r->nheld && idle_room(r, done); done++)
		run_release(r, &r->held[done]);
	atomic_fetch_add_explicit(&releases_beside, done, memory_order_relaxed);
	for (i = done; i < r->nheld; i++)
		r->held[i - done] = r->held[i];
	r->nheld -= done;
	while (!r->nheld && idle_room(r, done) &&
	       pc_ring_q_ready(&r->ring.sq) > 0) {
		pc_ring_q_peek(&r->ring.sq, &sqe);
		if (!is_held_release(&sqe))
			break;
		pc_ring_q_consume(&r->ring.sq);
		run_release(r, &sqe);
		atomic_fetch_add_explicit(&releases_beside, 1,
					  memory_order_relaxed);
		done++;
	}
	if (writer)
		pull_ahead(r, writer, due_ns);
	r->in_idle = false;
}

/*
 * A pull read with releases held in front of it (DOC: releases held
 * back): a client that pulls a batch of outputs in turn, releasing each
 * one after it read it (P1b's second half), writes the release of one
 * and then the pull of the next, whose datablock is already settled in
 * its channel; the release ran first, on the pull's path.  So the pull
 * is tried first, never blocking (pd_ns_pull_ahead, no invocation's
 * output taken before its settle): taken, it is answered at once and
 * true is returned, and the caller runs the releases behind its answer,
 * while the client reads the datablock.  A pull that would block or
 * fails, or finds no room in the CQ, is left untouched (false): the
 * releases run first and then the pull, as before, since what it waits
 * for may depend on them (memory for an output, say).  A held release
 * that fails then posts its completion after the pull's answer, not
 * before it, as with pulls answered at the fence.
 */
static bool pull_past_held(struct pd_ring *r, const struct ptask_sqe *sqe)
{
	struct pd_request req;
	struct ptask_cqe cqe;
	bool ahead;
	int err;

	if (!r->pull_past || sqe->cmd != PTASK_IOC_PULL ||
	    (sqe->flags & PTASK_SQE_DATA) || r->post_err ||
	    pc_ring_q_space(&r->ring.cq) <= 0)
		return false;
	/* a bad one is run_entry's to refuse, and to log */
	if (pd_ring_entry_parse(sqe, &req))
		return false;
	/* a tunnel's slices: their records' order is the tunnel's own */
	if (req.arg.pull.flags & PTASK_PULL_SLICE) {
		pd_request_free(&req);
		return false;
	}
	err = pd_ns_pull_ahead(r->host.client, r->host.who, &req.arg.pull,
			       &req.io, 0, &ahead, r->host.defer);
	if (err) {
		/* nothing taken: the pull runs again behind the releases */
		pd_request_free(&req);
		return false;
	}
	pd_trace(PD_TR_CALL);
	pd_ring_entry_answer(sqe, &req, 0, &cqe);
	add_mem(r, &req, &cqe);
	pd_request_free(&req);
	if (pd_ring_entry_posts(sqe, 0))
		r->post_err = post(r, &cqe);
	pd_trace(PD_TR_CQE);
	atomic_fetch_add_explicit(&pulls_past, 1, memory_order_relaxed);
	return true;
}

/* Must the held releases run before @sqe (DOC: releases held back)? */
static bool held_first(const struct pd_ring *r, const struct ptask_sqe *sqe)
{
	unsigned int i;

	if (!r->nheld)
		return false;
	if (_IOC_NR(sqe->cmd) != _IOC_NR(PTASK_IOC_PUSH))
		return true;
	for (i = 0; i < r->nheld; i++)
		if (r->held[i].arg.release.handle == sqe->arg.push.datablock)
			return true;
	return false;
}

/*
 * Wait for entries: poll for what is left of spin_ns since the last
 * entry (if no more than max_spinners threads poll), then sleep a slice.
 * Returns entries ready, 0 (none: look at the lifeline), or -EPROTO.
 */
static int wait_entries(struct pd_ring *r)
{
	struct pc_ring_q *sq = &r->ring.sq;
	uint64_t now = pc_ring_now_ns(), spin = 0;
	int n;

	if (r->host.spin_ns && now < r->last_ns + r->host.spin_ns &&
	    pc_spin_worth(&r->hist, r->last_kind))
		spin = r->last_ns + r->host.spin_ns - now;
	if (spin) {
		if (__atomic_add_fetch(r->host.spinners, 1, __ATOMIC_RELAXED) >
		    r->host.max_spinners)
			spin = 0;
		/* sched_yield: on a busy CPU, whoever else is ready first. */
		n = spin ? pc_ring_q_wait(sq, spin, true, 0) : 0;
		__atomic_sub_fetch(r->host.spinners, 1, __ATOMIC_RELAXED);
		if (n)
			return n;
	}
	return pc_ring_q_wait(sq, 0, false, PD_CANCEL_POLL_MS * 1000000ULL);
}

static void serve(struct pd_ring *r);

void pd_ring_serve(struct pd_ring *r)
{
	r->host.defer->idle = ring_idle;
	r->host.defer->seen = ring_seen;
	r->host.defer->idle_arg = r;
	serve(r);
	r->host.defer->idle = NULL;
	r->host.defer->seen = NULL;
	r->host.defer->idle_arg = NULL;
	/* a pull taken ahead of a fence that failed: not the client's */
	if (r->ahead_failed) {
		struct ptask_datablock_release rel = {
			.size = sizeof(rel), .handle = r->ahead_handle,
		};

		r->ahead_failed = false;
		pd_ns_call(r->host.client, r->host.who,
			   PTASK_IOC_DATABLOCK_RELEASE, &rel, NULL, NULL);
	}
	/* the client may live on through its other connections */
	if (!*r->host.stopping)
		run_held(r);
	/* What the last pushes made ready, if it was not helped with yet. */
	if (!*r->host.stopping && pd_wake_defer_take(r->host.defer))
		r->host.help(r->host.help_arg);
}

static void serve(struct pd_ring *r)
{
	struct pc_ring_q *sq = &r->ring.sq;
	struct ptask_sqe sqe;
	int n;

	r->last_ns = pc_ring_now_ns();
	while (!*r->host.stopping) {
		uint64_t gap = 0;

		if (r->post_err)
			return;
		/* its client waits for that pull's answer: before anything */
		if (r->ahead_failed && redo_ahead(r))
			return;
		n = pc_ring_q_ready(sq);
		/*
		 * Held releases wait a little for a push to go before them,
		 * spinning within the bound every poller keeps.
		 */
		if (!n && r->nheld) {
			if (__atomic_add_fetch(r->host.spinners, 1,
					       __ATOMIC_RELAXED) <=
			    r->host.max_spinners)
				n = pc_ring_q_wait(sq, HELD_GRACE_NS, true, 0);
			__atomic_sub_fetch(r->host.spinners, 1, __ATOMIC_RELAXED);
			if (!n)
				run_held(r);
		}
		if (!n) {
			pd_trace(PD_TR_WAIT);
			n = wait_entries(r);
			gap = pc_ring_now_ns() - r->last_ns;
		}
		if (n < 0) {
			pd_log_warn("pid %d: ring's submission tail is more than %u entries ahead; ring closed",
				    r->host.who->pid, sq->entries);
			return;
		}
		if (!n) {
			if (ring_gone(r))
				return;
			continue;
		}
		/* did the entry after this kind of call come late? */
		pc_spin_learn(&r->hist, r->last_kind, gap, r->host.spin_ns);
		pc_ring_q_peek(sq, &sqe);	/* a private copy */
		pc_ring_q_consume(sq);
		pd_trace(PD_TR_SQE);
		if (is_held_release(&sqe)) {
			if (r->nheld == HELD_MAX)
				run_held(r);
			r->held[r->nheld++] = sqe;
			atomic_fetch_add_explicit(&releases_held, 1,
						  memory_order_relaxed);
			continue;
		}
		if (held_first(r, &sqe)) {
			bool answered = pull_past_held(r, &sqe);

			run_held(r);	/* behind the pull's answer, or before it */
			if (answered) {
				r->unhelped = 0;	/* as run_entry's tail */
				if (pd_wake_defer_take(r->host.defer))
					r->host.help(r->host.help_arg);
				r->last_ns = pc_ring_now_ns();
				r->last_kind = pc_spin_kind(sqe.cmd);
				continue;
			}
		}
		r->pulled_early = false;
		if (run_entry(r, &sqe))
			return;
		r->last_ns = pc_ring_now_ns();
		/* a pull run ahead was the last entry: the gap is after it */
		r->last_kind = pc_spin_kind(r->pulled_early ? PTASK_IOC_PULL :
					    sqe.cmd);
	}
}
