/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ns_user_priv.h - the insides of the user-mode namespace, shared by
 * its files (ns_user.c, ns_buf.c, ns_timer.c), the executor source
 * (source_user.c) and the administration (ns_admin.c) only.
 */
#ifndef PTASKD_NS_USER_PRIV_H
#define PTASKD_NS_USER_PRIV_H

#include "daemon/user/arena.h"
#include "daemon/user/ns_user.h"

/**
 * struct ptask_buf - datablock memory in user mode
 * @ns: the namespace
 * @arena: the arena it is carved from
 * @offset: where in the arena
 * @bytes: the datablock's size
 * @refs: the core's reference plus the engine's mappings
 * @handle: the datablock it backs (0 before ptask_os_buf_bind)
 */
struct ptask_buf {
	struct pd_ns *ns;
	struct pd_arena *arena;
	uint64_t offset;
	uint64_t bytes;
	uint32_t refs;
	uint32_t handle;
};

/**
 * struct pd_ns - the namespace
 * @core: the core's namespace
 * @lock: the namespace lock
 * @owner: the thread holding @lock, valid while @locked
 * @locked: is @lock held
 * @arenas: datablock memory
 * @clients: every pd_client (for attach by token)
 * @nclients: entries in @clients
 * @forget: told when datablocks die (pd_ns_set_forget; may be NULL)
 * @forget_arg: @forget's argument
 * @opened: told when a client opens a GPU ptask (pd_ns_set_opened; may
 *	be NULL)
 * @opened_arg: @opened's argument
 * @wake_defer: where executor wake-ups go while the call holding @lock
 *	holds them back (struct pd_wake_defer), else NULL.  Written by
 *	the lock holder only, and never left set while @lock is free:
 *	pd_ns_unlock clears it, and a call that sleeps clears it for its
 *	sleep, so another thread's wake-ups are never held back for it
 * @timer: PTSched's timer thread (ptask_core_sched_tick() at @timer_at)
 * @timer_cond: wakes @timer when @timer_at or @timer_stop change
 * @timer_at: CLOCK_MONOTONIC ns of the next tick, 0: none
 * @tunnel_at: likewise for ptask_core_tunnel_tick() (the same thread)
 * @timer_stop: @timer must return
 * @call_spin_ns: how long a blocked call polls its client's wake_seq
 *	before it sleeps on the condition variable (pd_ns_set_call_spin)
 */
struct pd_ns {
	struct ptask_ns core;
	pthread_mutex_t lock;
	pthread_t owner;
	bool locked;
	struct pd_arenas arenas;
	struct pd_client **clients;
	uint32_t nclients;
	pd_forget_fn forget;
	void *forget_arg;
	pd_opened_fn opened;
	void *opened_arg;
	struct pd_wake_defer *wake_defer;
	pthread_t timer;
	pthread_cond_t timer_cond;
	uint64_t timer_at;
	uint64_t tunnel_at;
	bool timer_stop;
	uint64_t call_spin_ns;
};

void pd_ns_lock(struct pd_ns *ns);
/*
 * pd_ns_lock for calls made on behalf of @defer's owner: the executor
 * wake-ups they make until pd_ns_unlock are held back in @defer (NULL:
 * as pd_ns_lock).
 */
void pd_ns_lock_deferring(struct pd_ns *ns, struct pd_wake_defer *defer);
void pd_ns_unlock(struct pd_ns *ns);
/* ns_timer.c */
int pd_ns_timer_start(struct pd_ns *ns);
void pd_ns_timer_stop(struct pd_ns *ns);

/* ns_buf.c: pd_ns_map with the lock held; *@buf (if not NULL) keeps a
 * reference. */
int pd_ns_map_locked(struct pd_client *c, uint32_t handle,
		     struct pd_map_info *mi, struct ptask_buf **buf);

#endif /* PTASKD_NS_USER_PRIV_H */
