// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ns_timer.c - PTSched's timer in user mode: the core asks for a tick
 * at a time (ptask_os_sched_timer, under the namespace lock), and one
 * thread per namespace sleeps until then and calls ptask_core_sched_tick(),
 * as kmod/sched_timer.c does with an hrtimer and a work item.
 *
 * Locking: pd_ns.timer_at and timer_stop are under the namespace lock;
 * the thread sleeps on timer_cond with the lock released.
 */
#include <pthread.h>
#include <time.h>
#include "daemon/user/ns_user_priv.h"

void ptask_os_sched_timer(struct ptask_ns *core_ns, u64 when_ns)
{
	struct pd_ns *ns = core_ns->os;

	/* Shutting down (clients going after the timer thread): no timer. */
	if (ns->timer_stop)
		return;
	ns->timer_at = when_ns;
	pthread_cond_signal(&ns->timer_cond);
}

/**
 * ptask_os_tunnel_timer() - arm (or stop) the tunnels' timer
 * @core_ns: the namespace (its lock held)
 * @when_ns: CLOCK_MONOTONIC time of ptask_core_tunnel_tick(); 0: none
 *
 * The same thread as PTSched's waits for the earlier of the two.
 */
void ptask_os_tunnel_timer(struct ptask_ns *core_ns, u64 when_ns)
{
	struct pd_ns *ns = core_ns->os;

	if (ns->timer_stop)
		return;
	ns->tunnel_at = when_ns;
	pthread_cond_signal(&ns->timer_cond);
}

/* The earlier of the two deadlines, 0 when neither is set. */
static u64 next_deadline(const struct pd_ns *ns)
{
	if (!ns->timer_at || (ns->tunnel_at && ns->tunnel_at < ns->timer_at))
		return ns->tunnel_at;
	return ns->timer_at;
}

/*
 * PTSched's and the tunnels' timer: sleeps (on a CLOCK_MONOTONIC
 * condition variable, the namespace lock released) until the earlier
 * requested tick, then ticks.
 */
static void *timer_main(void *arg)
{
	struct pd_ns *ns = arg;

	pd_ns_lock(ns);
	while (!ns->timer_stop) {
		u64 now = ptask_os_now_ns();
		u64 at = next_deadline(ns);
		struct timespec ts;

		if (ns->timer_at && ns->timer_at <= now) {
			ns->timer_at = 0;
			ptask_core_sched_tick(&ns->core);
			continue;
		}
		if (ns->tunnel_at && ns->tunnel_at <= now) {
			ns->tunnel_at = 0;
			ptask_core_tunnel_tick(&ns->core);
			continue;
		}
		ns->locked = false;
		if (!at) {
			pthread_cond_wait(&ns->timer_cond, &ns->lock);
		} else {
			ts.tv_sec = (time_t)(at / 1000000000ull);
			ts.tv_nsec = (long)(at % 1000000000ull);
			pthread_cond_timedwait(&ns->timer_cond, &ns->lock, &ts);
		}
		ns->owner = pthread_self();
		ns->locked = true;
	}
	pd_ns_unlock(ns);
	return NULL;
}

/**
 * pd_ns_timer_start() - start PTSched's timer thread for @ns
 * @ns: the namespace being created (the lock not held)
 *
 * Return: 0 or pthread's -errno.
 */
int pd_ns_timer_start(struct pd_ns *ns)
{
	pthread_condattr_t attr;
	int err;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	err = -pthread_cond_init(&ns->timer_cond, &attr);
	pthread_condattr_destroy(&attr);
	if (err)
		return err;
	err = -pthread_create(&ns->timer, NULL, timer_main, ns);
	if (err)
		pthread_cond_destroy(&ns->timer_cond);
	else
		pthread_setname_np(ns->timer, "pd-timer");
	return err;
}

/**
 * pd_ns_timer_stop() - stop and join PTSched's timer thread
 * @ns: the namespace being destroyed (the lock not held)
 *
 * From now on ptask_os_sched_timer() arms nothing.
 */
void pd_ns_timer_stop(struct pd_ns *ns)
{
	pd_ns_lock(ns);
	ns->timer_stop = true;
	pthread_cond_signal(&ns->timer_cond);
	pd_ns_unlock(ns);
	pthread_join(ns->timer, NULL);
	pthread_cond_destroy(&ns->timer_cond);
}
