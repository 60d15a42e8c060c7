// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ring.c - see ring.h; the rules are uapi/ptask.h's ("Submission and
 * completion rings").  The layout and the header's checks are the core's
 * (core/ring_layout.c), shared with ptask.ko.
 *
 * Atomics: the indices and flags are shared with a process that may be
 * anything, so every access to them is an __atomic builtin with the
 * ordering the uapi writes down; slots are copied with memcpy between
 * the acquire of tail and the release of head (consumer), or before the
 * release of tail (producer).
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "common/ring.h"
#include "core/ring_layout.h"

_Static_assert(sizeof(struct ptask_sqe) == 64, "an SQE is 64 bytes");
_Static_assert(sizeof(struct ptask_cqe) == 96, "a CQE is 96 bytes");
_Static_assert(sizeof(struct ptask_ring_hdr) <= PTASK_RING_ALIGN,
	       "the header fits its cache line");
_Static_assert(sizeof(struct ptask_ring_queue) == 3 * PTASK_RING_ALIGN,
	       "head, tail and flags on a cache line each");

uint64_t pc_ring_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

size_t pc_ring_bytes(uint32_t sq_entries, uint32_t cq_entries)
{
	struct ptask_ring_hdr h;

	return (size_t)ptask_ring_layout(sq_entries, cq_entries, &h);
}

int pc_ring_init(void *base, size_t bytes, uint32_t sq_entries,
		 uint32_t cq_entries)
{
	struct ptask_ring_hdr h;

	if (!ptask_ring_layout(sq_entries, cq_entries, &h) ||
	    bytes < h.region_bytes)
		return -EINVAL;
	memset(base, 0, (size_t)h.region_bytes);
	memcpy(base, &h, sizeof(h));
	return 0;
}

static void q_attach(struct pc_ring_q *q, unsigned char *base, uint64_t qoff,
		     uint64_t slots_off, uint32_t entries, uint32_t size,
		     bool producer)
{
	q->q = (struct ptask_ring_queue *)(base + qoff);
	q->slots = base + slots_off;
	q->entries = entries;
	q->size = size;
	q->local = producer ? __atomic_load_n(&q->q->tail, __ATOMIC_ACQUIRE) :
			      __atomic_load_n(&q->q->head, __ATOMIC_ACQUIRE);
}

/* Queued entries by the shared indices; -EPROTO if more than fit. */
static int q_check(struct pc_ring_q *q)
{
	uint32_t head = __atomic_load_n(&q->q->head, __ATOMIC_ACQUIRE);
	uint32_t tail = __atomic_load_n(&q->q->tail, __ATOMIC_ACQUIRE);

	return tail - head > q->entries ? -EPROTO : 0;
}

int pc_ring_attach(struct pc_ring *r, void *base, size_t bytes,
		   enum pc_ring_side side)
{
	struct ptask_ring_hdr h;
	bool client = side == PC_RING_CLIENT;
	int err;

	if (!base || bytes < sizeof(h))
		return -EINVAL;
	memcpy(&h, base, sizeof(h));	/* read once */
	err = ptask_ring_hdr_check(&h, bytes);
	if (err)
		return err;
	memset(r, 0, sizeof(*r));
	r->base = base;
	r->bytes = bytes;
	r->ring_bytes = h.region_bytes;
	q_attach(&r->sq, base, h.sq_off, h.sqes_off, h.sq_entries, h.sqe_size,
		 client);
	q_attach(&r->cq, base, h.cq_off, h.cqes_off, h.cq_entries, h.cqe_size,
		 !client);
	err = q_check(&r->sq);
	if (!err)
		err = q_check(&r->cq);
	return err;
}

int pc_ring_q_space(struct pc_ring_q *q)
{
	uint32_t head = __atomic_load_n(&q->q->head, __ATOMIC_ACQUIRE);
	uint32_t used = q->local - head;

	if (used > q->entries)
		return -EPROTO;
	return (int)(q->entries - used);
}

void *pc_ring_q_slot(struct pc_ring_q *q)
{
	return q->slots + (size_t)(q->local & (q->entries - 1)) * q->size;
}

static long futex(uint32_t *word, int op, uint32_t val,
		  const struct timespec *ts)
{
	return syscall(SYS_futex, word, op, val, ts, NULL, 0);
}

void pc_ring_q_publish(struct pc_ring_q *q, uint32_t n)
{
	q->local += n;
	__atomic_store_n(&q->q->tail, q->local, __ATOMIC_RELEASE);
	/* Pairs with the consumer's fence after it sets SLEEPING. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&q->q->flags, __ATOMIC_RELAXED) &
	    PTASK_RING_SLEEPING)
		futex(&q->q->tail, FUTEX_WAKE, INT_MAX, NULL);
}

int pc_ring_q_ready(struct pc_ring_q *q)
{
	uint32_t tail = __atomic_load_n(&q->q->tail, __ATOMIC_ACQUIRE);
	uint32_t ready = tail - q->local;

	if (ready > q->entries)
		return -EPROTO;
	return (int)ready;
}

void pc_ring_q_peek(struct pc_ring_q *q, void *out)
{
	memcpy(out, q->slots + (size_t)(q->local & (q->entries - 1)) * q->size,
	       q->size);
}

void pc_ring_q_consume(struct pc_ring_q *q)
{
	q->local++;
	__atomic_store_n(&q->q->head, q->local, __ATOMIC_RELEASE);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

int pc_ring_q_wait(struct pc_ring_q *q, uint64_t spin_ns, bool yield,
		   uint64_t sleep_ns)
{
	struct timespec ts;
	uint64_t deadline;
	int n = pc_ring_q_ready(q);

	if (n)
		return n;
	if (spin_ns) {
		deadline = pc_ring_now_ns() + spin_ns;
		do {
			if (yield)
				sched_yield();
			else
				cpu_relax();
			n = pc_ring_q_ready(q);
			if (n)
				return n;
		} while (pc_ring_now_ns() < deadline);
	}
	if (!sleep_ns)
		return 0;
	__atomic_fetch_or(&q->q->flags, PTASK_RING_SLEEPING, __ATOMIC_SEQ_CST);
	/* Pairs with the producer's fence after it stores tail. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	deadline = pc_ring_now_ns() + sleep_ns;
	/*
	 * A wake-up may be spurious (a producer's late FUTEX_WAKE for
	 * entries taken already): sleep again until the deadline.
	 */
	while (!(n = pc_ring_q_ready(q))) {
		uint64_t now = pc_ring_now_ns();

		if (now >= deadline)
			break;
		ts.tv_sec = (time_t)((deadline - now) / 1000000000ULL);
		ts.tv_nsec = (long)((deadline - now) % 1000000000ULL);
		/* Returns at once (EAGAIN) if tail moved since we looked. */
		futex(&q->q->tail, FUTEX_WAIT, q->local, &ts);
	}
	__atomic_fetch_and(&q->q->flags, ~PTASK_RING_SLEEPING,
			   __ATOMIC_RELAXED);
	return n;
}
