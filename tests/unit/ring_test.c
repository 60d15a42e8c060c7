// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ring_test.c - the rings of common/ring.c (uapi/ptask.h, "Submission
 * and completion rings"), compiled into this test under ASan and UBSan:
 * layout, empty and full queues, wrap-around of the slots and of the u32
 * indices, many threads submitting while another consumes (with the
 * futex doorbell: the consumer sleeps), the doorbell rung only when the
 * consumer sleeps, and regions or indices the other side scribbled on:
 * refused at attach, or contained (-EPROTO, every slot inside the region).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/unit/harness.h"
#include "common/ring.c"

/* A fresh region of @sq/@cq entries, attached by both sides. */
struct both {
	void *base;
	size_t bytes;
	struct pc_ring client;
	struct pc_ring server;
};

static int both_make(struct both *b, uint32_t sq, uint32_t cq)
{
	int err;

	b->bytes = pc_ring_bytes(sq, cq);
	if (!b->bytes)
		return -EINVAL;
	b->base = mmap(NULL, b->bytes, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (b->base == MAP_FAILED)
		return -errno;
	err = pc_ring_init(b->base, b->bytes, sq, cq);
	if (!err)
		err = pc_ring_attach(&b->client, b->base, b->bytes, PC_RING_CLIENT);
	if (!err)
		err = pc_ring_attach(&b->server, b->base, b->bytes, PC_RING_SERVER);
	return err;
}

static void both_free(struct both *b)
{
	munmap(b->base, b->bytes);
}

static struct ptask_ring_hdr *hdr(struct both *b)
{
	return b->base;
}

static void submit(struct pc_ring_q *q, uint64_t v)
{
	struct ptask_sqe *e = pc_ring_q_slot(q);

	memset(e, 0, sizeof(*e));
	e->user_data = v;
	e->cmd = PTASK_IOC_PUSH;
	pc_ring_q_publish(q, 1);
}

static uint64_t take(struct pc_ring_q *q)
{
	struct ptask_sqe e;

	pc_ring_q_peek(q, &e);
	pc_ring_q_consume(q);
	return e.user_data;
}

static void test_layout_and_bad_counts(void)
{
	struct both b;
	struct ptask_ring_hdr *h;

	CHECK_EQ(sizeof(struct ptask_sqe), 64);
	CHECK_EQ(sizeof(struct ptask_cqe), 96);
	CHECK_EQ(pc_ring_bytes(0, 8), 0);
	CHECK_EQ(pc_ring_bytes(3, 8), 0);
	CHECK_EQ(pc_ring_bytes(8, PTASK_RING_ENTRIES_MAX * 2), 0);
	CHECK(pc_ring_bytes(PTASK_RING_ENTRIES_MAX, PTASK_RING_ENTRIES_MAX) > 0);
	CHECK_ERR(pc_ring_init(NULL, 0, 8, 16), -EINVAL);
	REQUIRE_OK(both_make(&b, 8, 16));
	h = hdr(&b);
	CHECK_EQ(h->magic, PTASK_RING_MAGIC);
	CHECK_EQ(h->version, PTASK_RING_VERSION);
	CHECK_EQ(h->sq_off % 64, 0);
	CHECK_EQ(h->cq_off % 64, 0);
	CHECK_EQ(h->sqes_off % 64, 0);
	CHECK_EQ(h->cqes_off % 64, 0);
	CHECK(h->cqes_off + 16 * sizeof(struct ptask_cqe) <= h->region_bytes);
	CHECK_EQ(b.client.sq.entries, 8);
	CHECK_EQ(b.client.cq.entries, 16);
	/* A mapping shorter than the region says. */
	CHECK_ERR(pc_ring_attach(&b.client, b.base, b.bytes - 1, PC_RING_CLIENT),
		  -EINVAL);
	CHECK_ERR(pc_ring_attach(&b.client, b.base, 8, PC_RING_CLIENT), -EINVAL);
	both_free(&b);
}

static void test_empty_and_full(void)
{
	struct both b;
	uint64_t i;

	REQUIRE_OK(both_make(&b, 4, 8));
	CHECK_EQ(pc_ring_q_ready(&b.server.sq), 0);
	CHECK_EQ(pc_ring_q_space(&b.client.sq), 4);
	/* Empty: no wait sleeps past its bound. */
	CHECK_EQ(pc_ring_q_wait(&b.server.sq, 1000, false, 1000000), 0);
	for (i = 0; i < 4; i++)
		submit(&b.client.sq, i + 1);
	CHECK_EQ(pc_ring_q_space(&b.client.sq), 0);
	CHECK_EQ(pc_ring_q_ready(&b.server.sq), 4);
	CHECK_EQ(take(&b.server.sq), 1);
	CHECK_EQ(pc_ring_q_space(&b.client.sq), 1);
	CHECK_EQ(pc_ring_q_wait(&b.server.sq, 0, false, 0), 3);
	for (i = 2; i <= 4; i++)
		CHECK_EQ(take(&b.server.sq), i);
	CHECK_EQ(pc_ring_q_ready(&b.server.sq), 0);
	CHECK_EQ(pc_ring_q_space(&b.client.sq), 4);
	both_free(&b);
}

/* Slots wrap every 4 entries; the u32 indices wrap past 2^32. */
static void test_wrap_around(void)
{
	struct both b;
	struct ptask_ring_queue *q;
	uint64_t i, want = 0, next = 0;

	REQUIRE_OK(both_make(&b, 4, 8));
	q = (struct ptask_ring_queue *)((char *)b.base + hdr(&b)->sq_off);
	/* Start both sides just below the u32 wrap. */
	q->head = q->tail = UINT32_MAX - 5;
	REQUIRE_OK(pc_ring_attach(&b.client, b.base, b.bytes, PC_RING_CLIENT));
	REQUIRE_OK(pc_ring_attach(&b.server, b.base, b.bytes, PC_RING_SERVER));
	for (i = 0; i < 1000; i++) {
		while (pc_ring_q_space(&b.client.sq) > 0 && next < want + 3)
			submit(&b.client.sq, ++next);
		CHECK(pc_ring_q_ready(&b.server.sq) > 0);
		CHECK_EQ(take(&b.server.sq), ++want);
		if (h_failed())
			break;
	}
	CHECK(q->tail < 1000);	/* it wrapped */
	both_free(&b);
}

#define PRODUCERS	4
#define PER_PRODUCER	20000

static bool stop;	/* the consumer gave up: producers stop too */

struct mt {
	struct both b;
	pthread_mutex_t lock;	/* the client side's producers, serialized */
	uint32_t id;
};

static void *producer(void *arg)
{
	struct mt *m = arg;
	uint32_t id = __atomic_fetch_add(&m->id, 1, __ATOMIC_RELAXED);
	uint64_t i;

	for (i = 0; i < PER_PRODUCER && !__atomic_load_n(&stop, __ATOMIC_RELAXED); i++) {
		pthread_mutex_lock(&m->lock);
		while (pc_ring_q_space(&m->b.client.sq) == 0) {
			if (__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
				pthread_mutex_unlock(&m->lock);
				return NULL;
			}
			pthread_mutex_unlock(&m->lock);
			sched_yield();
			pthread_mutex_lock(&m->lock);
		}
		submit(&m->b.client.sq, ((uint64_t)id << 32) | i);
		pthread_mutex_unlock(&m->lock);
	}
	return NULL;
}

/* Many threads submit; one consumer sleeps on the doorbell when idle. */
static void test_many_threads_submitting(void)
{
	struct mt m = { .lock = PTHREAD_MUTEX_INITIALIZER };
	uint64_t seen[PRODUCERS] = { 0 }, got = 0;
	pthread_t t[PRODUCERS];
	int i, n;

	REQUIRE_OK(both_make(&m.b, 8, 16));
	for (i = 0; i < PRODUCERS; i++)
		REQUIRE(!pthread_create(&t[i], NULL, producer, &m));
	while (got < (uint64_t)PRODUCERS * PER_PRODUCER) {
		/* No spin: every wait that finds nothing sleeps on the futex. */
		n = pc_ring_q_wait(&m.b.server.sq, 0, false, 2000000000ULL);
		if (!CHECK(n > 0)) {
			h_diag("wait: %d after %llu", n, (unsigned long long)got);
			/* Let the producers finish, or the joins hang. */
			__atomic_store_n(&stop, true, __ATOMIC_RELAXED);
			break;
		}
		while (n--) {
			uint64_t v = take(&m.b.server.sq);
			uint32_t id = (uint32_t)(v >> 32);

			if (!CHECK(id < PRODUCERS) ||
			    !CHECK_EQ(v & 0xffffffffu, seen[id]))	/* in order */
				goto out;
			seen[id]++;
			got++;
		}
	}
out:
	__atomic_store_n(&stop, true, __ATOMIC_RELAXED);
	for (i = 0; i < PRODUCERS; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(got, (uint64_t)PRODUCERS * PER_PRODUCER);
	CHECK_EQ(m.b.server.sq.q->flags & PTASK_RING_SLEEPING, 0);
	both_free(&m.b);
}

struct sleeper {
	struct both *b;
	int n;
};

static void *sleep_for_one(void *arg)
{
	struct sleeper *s = arg;

	s->n = pc_ring_q_wait(&s->b->server.sq, 0, false, 5000000000ULL);
	return NULL;
}

/* The doorbell wakes a sleeper at once, and the flag says who sleeps. */
static void test_doorbell(void)
{
	struct sleeper s = { .n = -1 };
	struct both b;
	uint64_t t0;
	pthread_t t;
	int i;

	REQUIRE_OK(both_make(&b, 4, 8));
	s.b = &b;
	REQUIRE(!pthread_create(&t, NULL, sleep_for_one, &s));
	for (i = 0; i < 5000 && !(__atomic_load_n(&b.server.sq.q->flags,
						   __ATOMIC_SEQ_CST) &
				  PTASK_RING_SLEEPING); i++)
		usleep(1000);
	CHECK(b.server.sq.q->flags & PTASK_RING_SLEEPING);
	usleep(20000);	/* into FUTEX_WAIT, most likely */
	t0 = pc_ring_now_ns();
	submit(&b.client.sq, 7);
	pthread_join(t, NULL);
	CHECK_EQ(s.n, 1);
	/* Woken, not timed out: far below the 5 s bound. */
	CHECK(pc_ring_now_ns() - t0 < 1000000000ULL);
	CHECK_EQ(b.server.sq.q->flags & PTASK_RING_SLEEPING, 0);
	both_free(&b);
}

/* Every header field a scribbler may break is refused at attach. */
static void test_scribbled_header_refused(void)
{
	struct both b;
	struct ptask_ring_hdr good, *h;
	struct pc_ring r;
	unsigned int k;

	REQUIRE_OK(both_make(&b, 8, 16));
	h = hdr(&b);
	good = *h;
	for (k = 0; k < 16; k++) {
		*h = good;
		switch (k) {
		case 0: h->magic ^= 1; break;
		case 1: h->version = PTASK_RING_VERSION + 1; break;
		case 2: h->sq_entries = 6; break;
		case 3: h->cq_entries = 0; break;
		case 4: h->sqe_size = 32; break;
		case 5: h->cqe_size = 128; break;
		case 6: h->region_bytes = b.bytes + 4096; break;
		case 7: h->sq_off = 0; break;			/* over the header */
		case 8: h->cq_off = good.sq_off; break;		/* overlap */
		case 9: h->sqes_off = good.sqes_off + 8; break;	/* unaligned */
		case 10: h->cqes_off = good.region_bytes; break;	/* outside */
		case 11: h->cqes_off = UINT64_MAX - 63; break;	/* overflow */
		case 12: h->sq_entries = PTASK_RING_ENTRIES_MAX * 2; break;
		case 13: h->sqes_off = good.cqes_off; break;
		case 14: h->sq_entries = 1U << 31; break;
		case 15: h->region_bytes = 0; break;
		}
		if (!CHECK_ERR(pc_ring_attach(&r, b.base, b.bytes,
					      PC_RING_SERVER), -EINVAL))
			h_diag("case %u accepted", k);
	}
	*h = good;
	CHECK_OK(pc_ring_attach(&r, b.base, b.bytes, PC_RING_SERVER));
	both_free(&b);
}

/* Garbage indices: -EPROTO, never a slot outside the region. */
static void test_scribbled_indices_contained(void)
{
	struct both b;
	struct ptask_ring_queue *sq, *cq;
	struct pc_ring r;
	uint32_t i;

	REQUIRE_OK(both_make(&b, 8, 16));
	sq = b.server.sq.q;
	cq = b.server.cq.q;
	/* SQ tail far ahead of the consumer's own head. */
	sq->tail = 1000;
	CHECK_ERR(pc_ring_q_ready(&b.server.sq), -EPROTO);
	CHECK_ERR(pc_ring_q_wait(&b.server.sq, 1000, false, 1000), -EPROTO);
	CHECK_ERR(pc_ring_attach(&r, b.base, b.bytes, PC_RING_SERVER), -EPROTO);
	/* Tail behind the consumer's head: looks like 2^32 - 1 entries. */
	sq->tail = (uint32_t)-1;
	CHECK_ERR(pc_ring_q_ready(&b.server.sq), -EPROTO);
	/* Just full is fine: exactly @entries queued. */
	sq->tail = 8;
	CHECK_EQ(pc_ring_q_ready(&b.server.sq), 8);
	/* A scribbled shared head does not move the consumer's own. */
	sq->head = 5;
	CHECK_EQ(pc_ring_q_ready(&b.server.sq), 8);
	for (i = 0; i < 8; i++) {
		unsigned char *slot = b.server.sq.slots +
			(size_t)(b.server.sq.local & (b.server.sq.entries - 1)) *
			b.server.sq.size;

		CHECK(slot >= (unsigned char *)b.base &&
		      slot + b.server.sq.size <= (unsigned char *)b.base + b.bytes);
		take(&b.server.sq);
	}
	/* CQ head claiming completions never posted: the producer sees it. */
	cq->head = 100;
	CHECK_ERR(pc_ring_q_space(&b.server.cq), -EPROTO);
	cq->head = 0;
	CHECK_EQ(pc_ring_q_space(&b.server.cq), 16);
	both_free(&b);
}

int main(int argc, char **argv)
{
	static const struct h_test tests[] = {
		H_TEST(test_layout_and_bad_counts),
		H_TEST(test_empty_and_full),
		H_TEST(test_wrap_around),
		H_TEST(test_many_threads_submitting),
		H_TEST(test_doorbell),
		H_TEST(test_scribbled_header_refused),
		H_TEST(test_scribbled_indices_contained),
	};

	return h_main(tests, ARRAY_SIZE(tests), argc, argv);
}
