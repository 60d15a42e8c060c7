/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mutex.h - the mutex of ptaskd's busiest locks (the engine's e->lock,
 * the namespace's lock): held for well under a microsecond at a time,
 * taken by several threads per invocation (a client's ring thread, a
 * device's worker, the completion thread, which takes the engine's each
 * time it polls the fences due).
 *
 * Adaptive (PTHREAD_MUTEX_ADAPTIVE_NP): a thread that finds it taken
 * spins a little (glibc's glibc.pthread.mutex_spin_count tunable, 100
 * tries by default) before it sleeps on the futex.  With a plain mutex
 * the loser of a race sleeps at once, and on these VMs waking a sleeper
 * costs 12-14 us: profiled on an H200 (2026-11-27, gemm's pipelined
 * chains at n = 256, perf at 8 kHz), a device's worker spent 16% of its
 * CPU in pthread_mutex_lock, most of it entering and leaving the futex
 * call, about 6 us an invocation, besides the wake-ups it waited for.
 * Ownership is checked by the callers' own assertions (e->locked,
 * ns->locked with their owner), not by an error-checking mutex.
 */
#ifndef PTASKD_MUTEX_H
#define PTASKD_MUTEX_H

#include <pthread.h>

/* Initialise @m as the adaptive mutex above.  Returns 0 or -errno. */
static inline int pd_mutex_init_adaptive(pthread_mutex_t *m)
{
	pthread_mutexattr_t attr;
	int err;

	err = pthread_mutexattr_init(&attr);
	if (err)
		return -err;
	err = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
	if (!err)
		err = pthread_mutex_init(m, &attr);
	pthread_mutexattr_destroy(&attr);
	return -err;
}

#endif /* PTASKD_MUTEX_H */
