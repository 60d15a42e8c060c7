/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ring.h - the submission and completion rings of uapi/ptask.h
 * ("Submission and completion rings"), for both sides: laying a region
 * out, attaching to one with every check a mapped region needs (the
 * layout and the header's rules are the core's, core/ring_layout.c,
 * which ptask.ko lays its rings out with too), and one queue's producer
 * and consumer operations with their atomics and doorbell.
 *
 * A side attaches with pc_ring_attach(), which reads the header once,
 * checks it and keeps what it needs in the struct pc_ring (never reading
 * the header again), so a region the other side scribbles on later can
 * make indices wrong but never send a reader outside the region: slots
 * are found by masking, and counts from the other side are checked
 * against the queue's size (-EPROTO: the ring is broken).
 *
 * Locking: none inside.  A queue has one producer and one consumer at a
 * time; a side with several threads serializes them itself (libptask
 * gives a ring to one thread at a time; the tests use a mutex).
 */
#ifndef PTASK_COMMON_RING_H
#define PTASK_COMMON_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "uapi/ptask.h"

/**
 * struct pc_ring_q - one queue as one side sees it
 * @q: the shared indices
 * @slots: the shared slots
 * @entries: slot count (a power of two)
 * @size: bytes per slot
 * @local: this side's own copy of the index it writes (a producer's
 *	tail, a consumer's head); the shared one is only ever stored to
 */
struct pc_ring_q {
	struct ptask_ring_queue *q;
	unsigned char *slots;
	uint32_t entries;
	uint32_t size;
	uint32_t local;
};

/**
 * struct pc_ring - an attached ring region
 * @base: the mapping
 * @bytes: its size
 * @sq: submission queue
 * @cq: completion queue
 */
struct pc_ring {
	void *base;
	size_t bytes;
	uint64_t ring_bytes;	/* the header's region_bytes: the ring's part */
	struct pc_ring_q sq;
	struct pc_ring_q cq;
};

enum pc_ring_side {
	PC_RING_CLIENT,		/* produces the SQ, consumes the CQ */
	PC_RING_SERVER,		/* consumes the SQ, produces the CQ */
};

/* Bytes of a region of @sq_entries and @cq_entries; 0 if they are bad. */
size_t pc_ring_bytes(uint32_t sq_entries, uint32_t cq_entries);
/* Lay a zeroed region of pc_ring_bytes() out: header, empty queues. */
int pc_ring_init(void *base, size_t bytes, uint32_t sq_entries,
		 uint32_t cq_entries);
/*
 * Check the region at @base (@bytes mapped) and attach as @side: -EINVAL
 * when the header breaks a rule of uapi/ptask.h, -EPROTO when the
 * indices already say more is queued than fits.
 */
int pc_ring_attach(struct pc_ring *r, void *base, size_t bytes,
		   enum pc_ring_side side);

/* Producer: free slots (0: full), or -EPROTO (the head is garbage). */
int pc_ring_q_space(struct pc_ring_q *q);
/* Producer: the next slot to fill (check pc_ring_q_space() first). */
void *pc_ring_q_slot(struct pc_ring_q *q);
/*
 * Producer: publish the slots filled since the last publish (store-release
 * of tail) and ring the doorbell if the consumer sleeps.  @n slots.
 */
void pc_ring_q_publish(struct pc_ring_q *q, uint32_t n);

/* Consumer: entries ready (0: empty), or -EPROTO (tail too far ahead). */
int pc_ring_q_ready(struct pc_ring_q *q);
/* Consumer: copy the next entry to @out (check pc_ring_q_ready() first). */
void pc_ring_q_peek(struct pc_ring_q *q, void *out);
/* Consumer: done with the next entry (store-release of head). */
void pc_ring_q_consume(struct pc_ring_q *q);

/*
 * Consumer: wait until an entry is ready: spin up to @spin_ns (calling
 * sched_yield() between looks when @yield), then set PTASK_RING_SLEEPING
 * and FUTEX_WAIT on the tail for up to @sleep_ns (0: no sleep).
 * Returns the entries ready, 0 when none came in time, or -EPROTO.
 */
int pc_ring_q_wait(struct pc_ring_q *q, uint64_t spin_ns, bool yield,
		   uint64_t sleep_ns);

/* CLOCK_MONOTONIC in ns. */
uint64_t pc_ring_now_ns(void);

#endif /* PTASK_COMMON_RING_H */
