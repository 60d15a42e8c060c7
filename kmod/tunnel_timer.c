// SPDX-License-Identifier: GPL-2.0
/*
 * tunnel_timer.c - the record-stream tunnels' timer in ptask.ko.
 *
 * The core asks for a tick (ptask_os_tunnel_timer()) while a tunnel
 * gathers a batch that must close by a deadline (core/tunnel.c).  As for
 * PTSched's timer (sched_timer.c), an hrtimer fires then and queues a
 * work item, which takes the namespace mutex and calls
 * ptask_core_tunnel_tick().
 */
#include <linux/hrtimer.h>
#include <linux/workqueue.h>
#include "ptask_kmod.h"
#include "compat.h"

static struct hrtimer tunnel_timer;
static struct work_struct tunnel_work;

static void tunnel_work_fn(struct work_struct *work)
{
	mutex_lock(&ptask_kernel.lock);
	ptask_core_tunnel_tick(&ptask_kernel.ns);
	mutex_unlock(&ptask_kernel.lock);
}

static enum hrtimer_restart tunnel_timer_fn(struct hrtimer *timer)
{
	schedule_work(&tunnel_work);
	return HRTIMER_NORESTART;
}

/**
 * ptask_os_tunnel_timer() - arm (or stop) the tunnels' timer
 * @ns: the namespace
 * @when_ns: ktime_get_ns() time of the tick; 0: none needed
 *
 * Context: the namespace mutex held.  Does not sleep.
 */
void ptask_os_tunnel_timer(struct ptask_ns *ns, u64 when_ns)
{
	ptask_os_assert_locked(ns);
	if (!when_ns) {
		hrtimer_try_to_cancel(&tunnel_timer);
		return;
	}
	hrtimer_start(&tunnel_timer, ns_to_ktime(when_ns), HRTIMER_MODE_ABS);
}

/**
 * ptask_tunnel_timer_init() - set up the timer (before the namespace)
 */
void ptask_tunnel_timer_init(void)
{
	INIT_WORK(&tunnel_work, tunnel_work_fn);
	ptask_hrtimer_setup(&tunnel_timer, tunnel_timer_fn, CLOCK_MONOTONIC,
			    HRTIMER_MODE_ABS);
}

/**
 * ptask_tunnel_timer_exit() - stop the timer and wait for its work
 *
 * Context: process context, the namespace mutex not held.
 */
void ptask_tunnel_timer_exit(void)
{
	cancel_work_sync(&tunnel_work);
	hrtimer_cancel(&tunnel_timer);
	cancel_work_sync(&tunnel_work);
}
