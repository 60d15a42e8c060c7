// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cuda_fence.c - lanes and fences of ptaskd's CUDA backend (see
 * cuda_priv.h and backend.h): each space has cuda_be.lanes non-blocking
 * streams ("lanes"); a fence marks the end of what was queued on a lane,
 * and any thread learns cheaply whether it passed.
 *
 * DOC: fences
 *
 * A fence of ticket t queues cuStreamWriteValue32(t's low 32 bits) into
 * the lane's word, a u32 in a pinned host page of the space
 * (cuMemHostAlloc, DEVICEMAP | PORTABLE), and nothing else (see below
 * for the slot's "done" event).  The write's default flags put a memory barrier before it, so
 * once a poller's acquire load sees the word reach t, everything the
 * lane did before (a kernel's in-place writes to host memory, a d2h
 * copy) is visible too.  The comparison is wrap-safe:
 * (int32_t)(word - t) >= 0.  The poll's fast path is that one load: no
 * driver call, no lock.  Measured on an H100 and an H200 (issue 12),
 * completion through such a write polled by ptaskd added about 1.5 us,
 * cuStreamSynchronize about 2 us, and cuLaunchHostFunc 37-40 us.
 *
 * Without stream memory operations (the device reports neither
 * CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 nor
 * ..._CAN_USE_64_BIT_STREAM_MEM_OPS, or a write says
 * CUDA_ERROR_NOT_SUPPORTED) the done event is what a poll asks
 * (cuEventQuery, under the lane's lock).  Which one a device uses is
 * logged once.
 *
 * With stream memory operations the done event is not recorded: a
 * lane_wait on another lane's fence queues cuStreamWaitValue32 on that
 * lane's word (CU_STREAM_WAIT_VALUE_GEQ, the same wrap-safe comparison),
 * so a fence is one driver call.  The cuEventRecord it spares cost about
 * 1 us of CPU on the submission path of every invocation (an H200,
 * 2026-12-01: ptaskd's trace put 2.0 us from launch to fence queued,
 * gpu_raw 0.9-1.2 for the write alone).  Without them, or where the
 * driver lacks cuStreamWaitValue32_v2, every mark records the done
 * event (@evented), which the polls and lane_wait use instead.  Events
 * come from the lane's ring of slots, made on first use and reused: no
 * create per fence.
 *
 * DOC: device time per fence
 *
 * PTSched charges each invocation's device time, so each fence carries
 * the time of the launches queued on its lane since the previous fence.
 * Chosen: one pair of timing events per fence span, not per launch, and
 * no estimate.  The span's start event is recorded before its first
 * launch and its end event after each launch (re-recorded: the last one
 * counts), so a span of n launches costs n + 1 cuEventRecord calls (about
 * 1 us of CPU each, issue 12's measurement) and one cuEventElapsedTime,
 * paid by the first poll that sees the fence pass; a fence with no
 * launch costs none of them.  The engine queues one launch per fence, so
 * that is 2 records per invocation, as the per-launch pairs of before.
 * What the span counts beyond its launches: copies and lane_waits queued
 * between two of its launches (never those before the first launch or
 * after the last).
 * The alternative, an estimate from when the poller saw consecutive
 * fences pass, costs no driver call but is wrong whenever lanes overlap
 * (each lane's span then includes the others' work) or the poller is
 * late (the span includes the polling delay), and PTSched's fairness
 * rests on these numbers, so the events stay where fairness needs
 * them.  Where it does not (the engine says so with pd_launch.untimed:
 * no other process used the device lately), a span is estimated: from
 * its first launch's submission, or the last fence of the space seen to
 * pass if later, to its own fence's time being taken (so the estimates
 * of overlapping lanes never add up to more than the wall time).  The
 * two cuEventRecord calls an invocation saves (start and end) cost
 * about 1 us each on the submission path of a small invocation
 * (tests/gpu: backend_launch_cpu_us against
 * backend_launch_untimed_cpu_us).
 *
 * Each fence's time is reported once: the slot's @taken, under the
 * lane's lock, says it was.  A slot is reused PD_CUDA_FENCE_RING fences
 * later; if nobody took its time by then, the time goes to the lane's
 * @orphan_ns, which the next report (poll, wait or sync) adds to its own.
 * If its fence has not even passed, the owner waits for it first: a lane
 * holds at most PD_CUDA_FENCE_RING fences in flight.
 *
 * DOC: faults
 *
 * A kernel that faults never lets its lane's word advance.  fence_poll
 * asks the driver (cuStreamQuery) only when the word has not moved for
 * PD_CUDA_STALL_NS of polling, never on the fast path; an error there
 * (or from cuEventQuery, cuStreamSynchronize) marks the space failed:
 * every later poll, wait and queuing call on it returns -EIO, and the
 * driver's error name is logged once.  (A sticky CUDA error also goes to
 * pd_fatal, cuda.c: it breaks every context of the process.)
 *
 * DOC: waiting
 *
 * fence_wait spins on fence_poll for at most PD_FENCE_SPIN_NS (a
 * completion that close costs less to spin for than to sleep through:
 * waking a sleeper costs 12-14 us, p99 80-400 us, on these VMs), then
 * sleeps with nanosleep, 5 us at first, doubling up to 200 us.  Why
 * nanosleep and not a futex or a blocking event: nothing on the host
 * learns of the GPU's word write to wake a futex (a host function per
 * fence, the only GPU-driven wake-up, costs 37-40 us), and
 * cuEventSynchronize would spin or yield in the driver under
 * CU_CTX_SCHED_AUTO.  The backoff keeps a long wait at under ~5k
 * wake-ups a second (a few percent of a core at worst) while a wait that
 * ends soon after the spin is late by at most a few sleeps.
 *
 * DOC: deferred fences and flushes
 *
 * fence_defer makes a ticket without queuing its mark: the slot is
 * claimed and marked @deferred, and the lane holds it with its held
 * launches (held.h, cuda_kernel.c).  A flush queues the held launches,
 * then one cuStreamWriteValue32 of the last deferred ticket (and its
 * done event where events are recorded); the word reaching that ticket
 * passes every deferred one before it (the comparison is by order), and
 * their slots name it as their @cover, whose mark polls and lane_wait
 * then look at.  Holding needs the
 * word: without stream memory operations a launch is never held and
 * fence_defer is a plain fence.  At most PD_CUDA_FENCE_RING / 2 tickets
 * are deferred at once on a lane (the lane is flushed first), so a slot
 * is never claimed again while its deferred fence waits for a flush.
 *
 * Locking: a lane's lock guards its slots' @ticket and @taken and the
 * reading of their timing events, for pollers on any thread; its
 * atomics (@issued, @passed, @orphan_ns, the stall watch) need none.
 * Everything else of a lane belongs to the space's owning thread.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/backend/cuda_priv.h"
#include "daemon/log.h"

#define WAIT_SLEEP_MIN_NS	(5ULL * 1000)
#define WAIT_SLEEP_MAX_NS	(200ULL * 1000)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Raise @a to @v unless it is higher already. */
static void atomic_max_u64(_Atomic uint64_t *a, uint64_t v)
{
	uint64_t cur = atomic_load_explicit(a, memory_order_relaxed);

	while (cur < v &&
	       !atomic_compare_exchange_weak_explicit(a, &cur, v,
						      memory_order_relaxed,
						      memory_order_relaxed))
		;
}

/**
 * pd_cuda_space_fail() - a lane of @s failed
 * @cb: the backend
 * @s: the space
 * @r: what the driver said
 * @what: the call that said it
 *
 * Calling context: any thread.  Logs the driver's error once per space
 * (through pd_cuda_fail, which also calls pd_fatal for a sticky error)
 * and makes @s fail from now on.
 *
 * Return: -EIO.
 */
int pd_cuda_space_fail(struct cuda_be *cb, struct cuda_space *s, CUresult r,
		       const char *what)
{
	if (!atomic_exchange(&s->fail_logged, true))
		pd_cuda_fail(cb, r, what);
	atomic_store(&s->failed, -EIO);
	return -EIO;
}

int pd_cuda_queue_fail(struct cuda_be *cb, struct cuda_space *s, CUresult r,
		       const char *what)
{
	if (pd_cuda_sticky(r))
		return pd_cuda_space_fail(cb, s, r, what);
	return pd_cuda_fail(cb, r, what);
}

int pd_cuda_lane_get(struct cuda_space *s, uint32_t lane,
		     struct cuda_lane **out)
{
	int failed;

	if (lane >= s->nlanes)
		return -EINVAL;
	failed = atomic_load_explicit(&s->failed, memory_order_relaxed);
	if (failed)
		return failed;
	*out = &s->lane[lane];
	atomic_store_explicit(&(*out)->dirty, true, memory_order_relaxed);
	return 0;
}

static int event_make(struct cuda_be *cb, CUevent *e, unsigned int flags)
{
	CUresult r;

	if (*e)
		return 0;
	r = cb->cu.EventCreate(e, flags);
	if (r != CUDA_SUCCESS) {
		*e = NULL;
		return pd_cuda_fail(cb, r, "cuEventCreate");
	}
	return 0;
}

/* Has ticket @t of @l passed, by the word alone? */
static bool word_passed(const struct cuda_lane *l, uint64_t t)
{
	uint32_t w = __atomic_load_n(l->word, __ATOMIC_ACQUIRE);

	return (int32_t)(w - (uint32_t)t) >= 0;
}

/*
 * The device time of slot @f if it still holds ticket @t and nobody took
 * it, plus the lane's orphans.  Any thread; takes @l's lock.
 */
static int time_take(struct cuda_be *cb, struct cuda_space *s,
		     struct cuda_lane *l, uint64_t t, uint64_t *ns)
{
	struct cuda_fence *f = &l->ring[t % PD_CUDA_FENCE_RING];
	float ms = 0;
	CUresult r = CUDA_SUCCESS;
	int err = 0;

	*ns = 0;
	pthread_mutex_lock(&l->lock);
	if (f->ticket == t && !f->taken) {
		uint64_t now = now_ns(), from;

		f->taken = true;
		from = atomic_load(&s->last_seen_ns);
		if (from < f->submit_ns || f->batch_n > 1)
			from = f->submit_ns;
		if (f->estimated && now > from)
			ms = (float)((double)(now - from) / 1e6 /
				     (f->batch_n > 1 ? f->batch_n : 1));
		atomic_max_u64(&s->last_seen_ns, now);
		if (f->timed) {
			err = pd_cuda_ctx_use(cb, &s->c);
			if (!err) {
				r = cb->cu.EventElapsedTime(&ms, f->start, f->end);
				/* the word can be seen a hair before the event */
				if (r == CUDA_ERROR_NOT_READY &&
				    cb->cu.EventSynchronize(f->end) == CUDA_SUCCESS)
					r = cb->cu.EventElapsedTime(&ms, f->start,
								    f->end);
			}
		}
	}
	pthread_mutex_unlock(&l->lock);
	if (err)
		return err;
	if (r != CUDA_SUCCESS)
		return pd_cuda_space_fail(cb, s, r, "cuEventElapsedTime");
	*ns = (uint64_t)((double)ms * 1e6) +
	      atomic_exchange(&l->orphan_ns, 0);
	return 0;
}

/*
 * Not passed yet: has the lane stalled for PD_CUDA_STALL_NS?  Then ask
 * the driver whether it failed.  0, or -EIO.
 */
static int stall_check(struct cuda_be *cb, struct cuda_space *s,
		       struct cuda_lane *l)
{
	uint64_t now = now_ns(), seen = atomic_load(&l->seen_ns);
	uint32_t w = l->word ? __atomic_load_n(l->word, __ATOMIC_ACQUIRE) : 0;
	CUresult r;
	int err;

	if (!seen || w != atomic_load(&l->seen_word)) {
		atomic_store(&l->seen_word, w);
		atomic_store(&l->seen_ns, now);
		return 0;
	}
	if (now - seen < PD_CUDA_STALL_NS)
		return 0;
	/* one poller per interval asks; the others go on */
	if (!atomic_compare_exchange_strong(&l->seen_ns, &seen, now))
		return 0;
	err = pd_cuda_ctx_use(cb, &s->c);
	if (err)
		return err;
	r = cb->cu.StreamQuery(l->stream);
	if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY)
		return 0;
	return pd_cuda_space_fail(cb, s, r, "cuStreamQuery (fence)");
}

/*
 * Has ticket @t (issued) of @l passed?  1, 0, or -errno.  Without
 * stream memory operations, queries the slot's done event (its cover's,
 * for a deferred fence), or the word for a fence marked by it alone.
 */
static int lane_passed(struct cuda_be *cb, struct cuda_space *s,
		       struct cuda_lane *l, uint64_t t)
{
	struct cuda_fence *f;
	CUresult r = CUDA_SUCCESS;
	int ret, err;

	if (t <= atomic_load_explicit(&l->passed, memory_order_acquire))
		return 1;
	if (atomic_load_explicit(&s->memops, memory_order_relaxed) &&
	    word_passed(l, t)) {
		ret = 1;
	} else if (atomic_load_explicit(&s->memops, memory_order_relaxed)) {
		ret = 0;
	} else {
		uint64_t u = t;

		f = &l->ring[t % PD_CUDA_FENCE_RING];
		pthread_mutex_lock(&l->lock);
		/* a deferred fence passes with the mark that covered it */
		if (f->ticket == t && !f->evented && f->cover && f->cover != t) {
			u = f->cover;
			f = &l->ring[u % PD_CUDA_FENCE_RING];
		}
		if (f->ticket != u) {
			ret = 1;	/* reused: it passed first */
		} else if (!f->evented) {
			/* marked by the word before the writes stopped working */
			ret = word_passed(l, u);
		} else {
			err = pd_cuda_ctx_use(cb, &s->c);
			if (err) {
				pthread_mutex_unlock(&l->lock);
				return err;
			}
			r = cb->cu.EventQuery(f->done);
			ret = r == CUDA_SUCCESS;
		}
		pthread_mutex_unlock(&l->lock);
		if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY)
			return pd_cuda_space_fail(cb, s, r, "cuEventQuery (fence)");
	}
	if (ret)
		atomic_max_u64(&l->passed, t);
	else
		ret = stall_check(cb, s, l);
	return ret;
}

/* Wait for ticket @t of @l, reporting nothing (the owner, reusing). */
static int lane_wait_passed(struct cuda_be *cb, struct cuda_space *s,
			    struct cuda_lane *l, uint64_t t)
{
	uint64_t sleep_ns = WAIT_SLEEP_MIN_NS, start = now_ns();
	struct timespec ts;
	int ret;

	while (!(ret = lane_passed(cb, s, l, t))) {
		if (now_ns() - start < PD_FENCE_SPIN_NS) {
			cpu_relax();
			continue;
		}
		ts.tv_sec = 0;
		ts.tv_nsec = (long)sleep_ns;
		nanosleep(&ts, NULL);
		if (sleep_ns < WAIT_SLEEP_MAX_NS)
			sleep_ns *= 2;
	}
	return ret < 0 ? ret : 0;
}

/*
 * The slot of ticket @t (the next one of @l), claimed for it: an older
 * fence still there must have passed (waits if not) and its untaken time
 * becomes an orphan.  Owner thread.
 */
static int slot_claim(struct cuda_be *cb, struct cuda_space *s,
		      struct cuda_lane *l, uint64_t t, struct cuda_fence **out)
{
	struct cuda_fence *f = &l->ring[t % PD_CUDA_FENCE_RING];
	uint64_t old = f->ticket, ns = 0;
	int err;

	if (old == t) {
		*out = f;
		return 0;
	}
	if (old && !f->taken) {
		err = lane_wait_passed(cb, s, l, old);
		if (!err)
			err = time_take(cb, s, l, old, &ns);
		if (err)
			return err;
		atomic_fetch_add(&l->orphan_ns, ns);
	}
	err = event_make(cb, &f->done, CU_EVENT_DISABLE_TIMING);
	if (err)
		return err;
	pthread_mutex_lock(&l->lock);
	f->ticket = t;
	f->taken = false;
	f->timed = false;
	f->estimated = false;
	f->submit_ns = 0;
	f->deferred = false;
	f->cover = 0;
	f->batch_n = 0;
	f->evented = false;
	pthread_mutex_unlock(&l->lock);
	*out = f;
	return 0;
}

int pd_cuda_span_before(struct cuda_be *cb, struct cuda_space *s,
			struct cuda_lane *l, bool untimed)
{
	struct cuda_fence *f;
	CUresult r;
	int err;

	if (l->span_open)
		return 0;
	err = slot_claim(cb, s, l, l->made + 1, &f);
	if (!err && untimed) {
		/* read by pollers only once the fence is issued */
		f->estimated = true;
		f->submit_ns = now_ns();
		l->span_open = true;
		return 0;
	}
	if (!err)
		err = event_make(cb, &f->start, CU_EVENT_DEFAULT);
	if (!err)
		err = event_make(cb, &f->end, CU_EVENT_DEFAULT);
	if (err)
		return err;
	r = cb->cu.EventRecord(f->start, l->stream);
	if (r != CUDA_SUCCESS)
		return pd_cuda_fail(cb, r, "cuEventRecord");
	l->span_open = true;
	return 0;
}

int pd_cuda_span_after(struct cuda_be *cb, struct cuda_lane *l)
{
	struct cuda_fence *f = &l->ring[(l->made + 1) % PD_CUDA_FENCE_RING];
	CUresult r;

	if (f->estimated)
		return 0;
	r = cb->cu.EventRecord(f->end, l->stream);
	if (r != CUDA_SUCCESS)
		return pd_cuda_fail(cb, r, "cuEventRecord");
	/* timed from the first launch whose end is recorded */
	f->timed = true;
	return 0;
}

/*
 * Queue the mark of ticket @t on @l: the word's write, and the done
 * event only where the word cannot serve polls and lane_wait.
 */
static int mark_queue(struct cuda_be *cb, struct cuda_space *s,
		      struct cuda_lane *l, uint64_t t)
{
	struct cuda_fence *f = &l->ring[t % PD_CUDA_FENCE_RING];
	CUresult r;

	if (atomic_load_explicit(&s->memops, memory_order_relaxed)) {
		r = cb->cu.StreamWriteValue32(l->stream, l->word_dev,
					      (unsigned int)t,
					      CU_STREAM_WRITE_VALUE_DEFAULT);
		if (r == CUDA_ERROR_NOT_SUPPORTED) {
			/* the done event below serves every poll from now */
			atomic_store(&s->memops, false);
			if (atomic_exchange(&cb->memops[s->dev], false))
				pd_log_warn("cuda: device %u: cuStreamWriteValue32: CUDA_ERROR_NOT_SUPPORTED; fences are events (cuEventQuery) from now on",
					    s->dev);
		} else if (r != CUDA_SUCCESS) {
			return pd_cuda_queue_fail(cb, s, r, "cuStreamWriteValue32");
		}
	}
	/* the word alone serves polls and lane_wait (cuStreamWaitValue32) */
	if (atomic_load_explicit(&s->memops, memory_order_relaxed) &&
	    cb->cu.StreamWaitValue32)
		return 0;
	r = cb->cu.EventRecord(f->done, l->stream);
	if (r != CUDA_SUCCESS)
		return pd_cuda_queue_fail(cb, s, r, "cuEventRecord");
	pthread_mutex_lock(&l->lock);
	f->evented = true;
	pthread_mutex_unlock(&l->lock);
	return 0;
}

/* The deferred fences @l holds passed with ticket @t's mark. */
static void deferred_cover(struct cuda_lane *l, uint64_t t)
{
	struct pd_held_lane *h = &l->held;
	uint64_t u;

	if (!h->first_deferred)
		return;
	pthread_mutex_lock(&l->lock);
	for (u = h->first_deferred; u <= h->last_deferred; u++) {
		struct cuda_fence *f = &l->ring[u % PD_CUDA_FENCE_RING];

		if (f->ticket == u && f->deferred) {
			f->deferred = false;
			f->cover = t;
		}
	}
	pthread_mutex_unlock(&l->lock);
}

int pd_cuda_lane_flush(struct cuda_be *cb, struct cuda_space *s,
		       struct cuda_lane *l)
{
	struct pd_held_lane *h = &l->held;
	int ret, err;

	if (!h->n && !h->first_deferred)
		return 0;
	err = pd_cuda_ctx_use(cb, &s->c);
	if (err)
		return err;
	ret = pd_cuda_held_queue(cb, s, l);
	if (ret >= 0 && h->last_deferred) {
		err = mark_queue(cb, s, l, h->last_deferred);
		if (err)
			ret = err;
	}
	/* after a failure the space failed: every poll fails from now */
	deferred_cover(l, h->last_deferred);
	pd_held_clear(h);
	return ret;
}

int pd_cuda_flush_all(struct cuda_be *cb, struct cuda_space *s)
{
	uint32_t i;
	int err = 0, e;

	for (i = 0; i < s->nlanes; i++) {
		e = pd_cuda_lane_flush(cb, s, &s->lane[i]);
		if (e < 0 && !err)
			err = e;
	}
	return err;
}

int pd_cuda_flush(struct pd_backend *be, void *space, uint32_t lane)
{
	struct cuda_space *s = space;

	if (lane >= s->nlanes)
		return -EINVAL;
	return pd_cuda_lane_flush(be->priv, s, &s->lane[lane]);
}

/* A fence on @lane: its mark queued now, or @deferred (fence_defer). */
static int fence_make(struct pd_backend *be, struct cuda_space *s,
		      uint32_t lane, bool deferred, uint64_t *ticket)
{
	struct cuda_be *cb = be->priv;
	struct cuda_fence *f;
	struct cuda_lane *l;
	uint64_t t;
	int err;

	if (!ticket)
		return -EINVAL;
	err = pd_cuda_lane_get(s, lane, &l);
	if (!err)
		err = pd_cuda_ctx_use(cb, &s->c);
	if (err)
		return err;
	/* a mark is only deferred where a poll reads the word */
	if (!atomic_load_explicit(&s->memops, memory_order_relaxed))
		deferred = false;
	if (deferred && l->held.first_deferred &&
	    l->made + 1 - l->held.first_deferred >= PD_CUDA_FENCE_RING / 2) {
		err = pd_cuda_lane_flush(cb, s, l);
		if (err < 0)
			return err;
	}
	/* what the lane holds goes before a mark queued now */
	if (!deferred) {
		err = pd_cuda_held_queue(cb, s, l);
		if (err < 0) {
			deferred_cover(l, l->held.last_deferred);
			pd_held_clear(&l->held);
			return err;
		}
	}
	t = l->made + 1;
	err = slot_claim(cb, s, l, t, &f);
	if (!err && !deferred)
		err = mark_queue(cb, s, l, t);
	if (err)
		return err;
	if (deferred) {
		pthread_mutex_lock(&l->lock);
		f->deferred = true;
		pthread_mutex_unlock(&l->lock);
		if (!l->held.first_deferred)
			l->held.first_deferred = t;
		l->held.last_deferred = t;
	} else {
		deferred_cover(l, t);
		pd_held_clear(&l->held);
	}
	l->made = t;
	l->span_open = false;
	/* the stall watch starts at the first poll that waits on it */
	atomic_store(&l->seen_ns, 0);
	atomic_store_explicit(&l->issued, t, memory_order_release);
	*ticket = t;
	return 0;
}

int pd_cuda_fence(struct pd_backend *be, void *space, uint32_t lane,
		  uint64_t *ticket)
{
	return fence_make(be, space, lane, false, ticket);
}

int pd_cuda_fence_defer(struct pd_backend *be, void *space, uint32_t lane,
			uint64_t *ticket)
{
	return fence_make(be, space, lane, true, ticket);
}

/* Check a poll's arguments: the lane, or -errno. */
static int poll_args(struct cuda_space *s, uint32_t lane, uint64_t ticket,
		     struct cuda_lane **out)
{
	int failed;

	if (lane >= s->nlanes)
		return -EINVAL;
	failed = atomic_load_explicit(&s->failed, memory_order_relaxed);
	if (failed)
		return failed;
	*out = &s->lane[lane];
	if (!ticket ||
	    ticket > atomic_load_explicit(&(*out)->issued, memory_order_acquire))
		return -EINVAL;
	return 0;
}

int pd_cuda_fence_poll(struct pd_backend *be, void *space, uint32_t lane,
		       uint64_t ticket, uint64_t *gpu_ns)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	struct cuda_lane *l;
	uint64_t ns;
	int ret;

	ret = poll_args(s, lane, ticket, &l);
	if (ret)
		return ret;
	ret = lane_passed(cb, s, l, ticket);
	if (ret <= 0)
		return ret;
	ret = time_take(cb, s, l, ticket, &ns);
	if (ret)
		return ret;
	if (gpu_ns)
		*gpu_ns = ns;
	return 1;
}

int pd_cuda_fence_wait(struct pd_backend *be, void *space, uint32_t lane,
		       uint64_t ticket, uint64_t *gpu_ns)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	struct cuda_lane *l;
	uint64_t ns;
	int ret;

	ret = poll_args(s, lane, ticket, &l);
	if (!ret) {
		const struct cuda_fence *f = &l->ring[ticket % PD_CUDA_FENCE_RING];

		/* nobody may wait for a mark not queued: it would never come */
		pthread_mutex_lock(&l->lock);
		if (f->ticket == ticket && f->deferred)
			ret = -EDEADLK;
		pthread_mutex_unlock(&l->lock);
	}
	if (!ret)
		ret = lane_wait_passed(cb, s, l, ticket);
	if (!ret)
		ret = time_take(cb, s, l, ticket, &ns);
	if (ret)
		return ret;
	if (gpu_ns)
		*gpu_ns = ns;
	return 1;
}

int pd_cuda_lane_wait(struct pd_backend *be, void *space, uint32_t lane,
		      uint32_t from, uint64_t ticket)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	struct cuda_lane *l, *fl;
	struct cuda_fence *f;
	CUresult r;
	int err;

	if (from >= s->nlanes)
		return -EINVAL;
	err = pd_cuda_lane_get(s, lane, &l);
	if (err)
		return err;
	fl = &s->lane[from];
	if (!ticket || ticket > fl->made)
		return -EINVAL;
	/* same lane: in order already */
	if (from == lane)
		return 0;
	/* held work of either lane is queued first, in its order */
	err = pd_cuda_lane_flush(cb, s, fl);
	if (err >= 0)
		err = pd_cuda_lane_flush(cb, s, l);
	if (err < 0)
		return err;
	f = &fl->ring[ticket % PD_CUDA_FENCE_RING];
	/* a deferred fence passes with the one whose mark covered it */
	if (f->ticket == ticket && f->cover && f->cover != ticket) {
		ticket = f->cover;
		f = &fl->ring[ticket % PD_CUDA_FENCE_RING];
	}
	/* passed or reused: nothing to wait for */
	if (ticket <= atomic_load(&fl->passed) || f->ticket != ticket)
		return 0;
	/*
	 * The word may say so before any poll did.  A wait on an event that
	 * completed costs the stream nothing; a cuStreamWaitValue32 always
	 * makes the GPU read the host's word first (a 3-deep chain's round,
	 * whose pooled intermediates a lane_wait orders behind the last
	 * round's readers, took 20 us instead of 16 on an H200 without this).
	 * A fence marked by the word alone is looked at there even once the
	 * writes stopped working (then only the host can wait for it).
	 */
	if ((!f->evented ||
	     atomic_load_explicit(&s->memops, memory_order_relaxed)) &&
	    word_passed(fl, ticket)) {
		atomic_max_u64(&fl->passed, ticket);
		return 0;
	}
	err = pd_cuda_ctx_use(cb, &s->c);
	if (err)
		return err;
	if (f->evented) {
		r = cb->cu.StreamWaitEvent(l->stream, f->done, 0);
		if (r != CUDA_SUCCESS)
			return pd_cuda_queue_fail(cb, s, r, "cuStreamWaitEvent");
		return 0;
	}
	if (!atomic_load_explicit(&s->memops, memory_order_relaxed))
		return lane_wait_passed(cb, s, fl, ticket);
	r = cb->cu.StreamWaitValue32(l->stream, fl->word_dev,
				     (unsigned int)ticket,
				     CU_STREAM_WAIT_VALUE_GEQ);
	if (r != CUDA_SUCCESS)
		return pd_cuda_queue_fail(cb, s, r, "cuStreamWaitValue32");
	return 0;
}

/*
 * The device time not reported yet on @l, which is idle: its last
 * PD_CUDA_FENCE_RING fences' untaken times, the open span, the orphans.
 */
static int lane_collect(struct cuda_be *cb, struct cuda_space *s,
			struct cuda_lane *l, uint64_t *sum)
{
	struct cuda_fence *f = &l->ring[(l->made + 1) % PD_CUDA_FENCE_RING];
	uint64_t t, first, ns;
	float ms = 0;
	CUresult r = CUDA_SUCCESS;
	int err;

	atomic_max_u64(&l->passed, l->made);
	first = l->made > PD_CUDA_FENCE_RING ? l->made - PD_CUDA_FENCE_RING + 1 : 1;
	if (first <= l->collected)
		first = l->collected + 1;
	l->collected = l->made;
	for (t = first; t <= l->made; t++) {
		err = time_take(cb, s, l, t, &ns);
		if (err)
			return err;
		*sum += ns;
	}
	if (l->span_open) {
		pthread_mutex_lock(&l->lock);
		if (f->timed)
			r = cb->cu.EventElapsedTime(&ms, f->start, f->end);
		else if (f->estimated && now_ns() > f->submit_ns)
			ms = (float)((double)(now_ns() - f->submit_ns) / 1e6);
		f->timed = false;
		f->estimated = false;
		pthread_mutex_unlock(&l->lock);
		l->span_open = false;
		if (r != CUDA_SUCCESS)
			return pd_cuda_space_fail(cb, s, r, "cuEventElapsedTime");
		*sum += (uint64_t)((double)ms * 1e6);
	}
	*sum += atomic_exchange(&l->orphan_ns, 0);
	return 0;
}

int pd_cuda_sync(struct pd_backend *be, void *space, uint64_t *gpu_ns)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	uint64_t sum = 0;
	struct cuda_lane *l;
	uint32_t i;
	CUresult r;
	int err;

	err = atomic_load(&s->failed);
	if (!err)
		err = pd_cuda_flush_all(cb, s);
	if (!err)
		err = pd_cuda_ctx_use(cb, &s->c);
	if (err)
		return err;
	for (i = 0; i < s->nlanes; i++) {
		l = &s->lane[i];
		if (!atomic_exchange_explicit(&l->dirty, false,
					      memory_order_relaxed))
			continue;
		r = cb->cu.StreamSynchronize(l->stream);
		if (r != CUDA_SUCCESS)
			return pd_cuda_space_fail(cb, s, r, "cuStreamSynchronize");
		err = lane_collect(cb, s, l, &sum);
		if (err)
			return err;
	}
	if (gpu_ns)
		*gpu_ns = sum;
	return 0;
}

int pd_cuda_lanes_open(struct cuda_be *cb, struct cuda_space *s)
{
	void *page = NULL;
	CUdeviceptr d = 0;
	CUresult r;
	uint32_t i;
	int err;

	atomic_store(&s->memops, atomic_load(&cb->memops[s->dev]));
	if (atomic_load(&s->memops)) {
		r = cb->cu.MemHostAlloc(&page, PD_CUDA_WORDS_BYTES,
					CU_MEMHOSTALLOC_DEVICEMAP |
					CU_MEMHOSTALLOC_PORTABLE);
		if (r != CUDA_SUCCESS)
			return pd_cuda_fail(cb, r, "cuMemHostAlloc (fence words)");
		memset(page, 0, PD_CUDA_WORDS_BYTES);
		s->words = page;
		r = cb->cu.MemHostGetDevicePointer(&d, page, 0);
		if (r != CUDA_SUCCESS)
			return pd_cuda_fail(cb, r, "cuMemHostGetDevicePointer (fence words)");
	}
	/* @nlanes counts the lanes made, so close undoes exactly those */
	for (i = 0; i < cb->lanes; i++) {
		struct cuda_lane *l = &s->lane[i];

		err = pthread_mutex_init(&l->lock, NULL);
		if (err)
			return -err;
		r = cb->cu.StreamCreate(&l->stream, CU_STREAM_NON_BLOCKING);
		if (r != CUDA_SUCCESS) {
			pthread_mutex_destroy(&l->lock);
			l->stream = NULL;
			return pd_cuda_fail(cb, r, "cuStreamCreate");
		}
		if (s->words) {
			l->word = s->words + i * PD_CUDA_WORD_STRIDE / sizeof(uint32_t);
			l->word_dev = d + i * PD_CUDA_WORD_STRIDE;
		}
		s->nlanes = i + 1;
	}
	return 0;
}

void pd_cuda_lanes_close(struct cuda_be *cb, struct cuda_space *s)
{
	struct cuda_fence *f;
	struct cuda_lane *l;
	uint32_t i, j;
	CUresult r;

	for (i = 0; i < s->nlanes; i++) {
		l = &s->lane[i];
		for (j = 0; j < PD_CUDA_FENCE_RING; j++) {
			f = &l->ring[j];
			if (f->start)
				cb->cu.EventDestroy(f->start);
			if (f->end)
				cb->cu.EventDestroy(f->end);
			if (f->done)
				cb->cu.EventDestroy(f->done);
		}
		r = cb->cu.StreamDestroy(l->stream);
		if (r != CUDA_SUCCESS)
			pd_cuda_fail(cb, r, "cuStreamDestroy");
		pthread_mutex_destroy(&l->lock);
		pd_held_free(&l->held);
	}
	s->nlanes = 0;
	if (s->words) {
		r = cb->cu.MemFreeHost(s->words);
		if (r != CUDA_SUCCESS)
			pd_cuda_fail(cb, r, "cuMemFreeHost (fence words)");
		s->words = NULL;
	}
}
