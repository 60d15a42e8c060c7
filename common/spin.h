/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * spin.h - poll or sleep, learnt per kind of call.  A thread that waits
 * for something another side does (an answer, a completion, the next
 * entry of a ring) polls for a while first, because waking a sleeper
 * costs 12-14 us on these VMs (p99 80-400 us), more than the wait itself
 * in a tight loop.  But a wait that is always long (a pull that waits for
 * a 3 ms frame, the next entry of a client that runs at 30 frames a
 * second) only burns the polling window every time: profiled on an H200
 * (2026-11-27, the gesture pipeline in real time), 38% of ptaskd's CPU
 * was such polling.  So each kind of call keeps one bit: its last wait
 * was longer than the window.  While it is set, the next wait of that
 * kind sleeps at once; any wait of that kind that ends within the window
 * (a sleeper woken at once included) clears it again, so a kind whose
 * waits turn short polls again after one slow wake-up.
 *
 * Kinds: 0..127, pc_spin_kind() of an ioctl number or a ptaskd protocol
 * op.  No lock: a lost update costs one window more or less.
 */
#ifndef PTASK_COMMON_SPIN_H
#define PTASK_COMMON_SPIN_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/ioctl.h>

/**
 * struct pc_spin_hist - which kinds of wait were long the last time
 * @slow: a bit per kind (pc_spin_kind)
 */
struct pc_spin_hist {
	uint64_t slow[2];
};

/*
 * The kind of @op: an ioctl number by its _IOC_NR (0..63), a ptaskd
 * protocol op (PTASKD_OP_*, below 0x100) as 64 + its low 6 bits.
 */
static inline unsigned int pc_spin_kind(unsigned int op)
{
	return op > 0xff ? _IOC_NR(op) & 63 : 64 + (op & 63);
}

/* Poll before sleeping for a wait of @kind? */
static inline bool pc_spin_worth(const struct pc_spin_hist *h,
				 unsigned int kind)
{
	uint64_t bit = 1ULL << (kind & 63);

	return !(__atomic_load_n(&h->slow[(kind >> 6) & 1], __ATOMIC_RELAXED) &
		 bit);
}

/* A wait of @kind took @waited_ns, against a window of @window_ns. */
static inline void pc_spin_learn(struct pc_spin_hist *h, unsigned int kind,
				 uint64_t waited_ns, uint64_t window_ns)
{
	uint64_t bit = 1ULL << (kind & 63), *w = &h->slow[(kind >> 6) & 1];
	bool slow = waited_ns > window_ns;

	/* a ring thread learns after every entry: no write when unchanged */
	if (!!(__atomic_load_n(w, __ATOMIC_RELAXED) & bit) == slow)
		return;
	if (slow)
		__atomic_or_fetch(w, bit, __ATOMIC_RELAXED);
	else
		__atomic_and_fetch(w, ~bit, __ATOMIC_RELAXED);
}

#endif /* PTASK_COMMON_SPIN_H */
