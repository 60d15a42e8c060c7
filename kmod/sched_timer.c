// SPDX-License-Identifier: GPL-2.0
/*
 * sched_timer.c - PTSched's timer in ptask.ko.
 *
 * The core asks for a tick (ptask_os_sched_timer()) while a process held
 * by its GPU budget has work queued.  An hrtimer fires at that time and
 * queues a work item, which takes the namespace mutex (a mutex cannot be
 * taken in the hrtimer's softirq) and calls ptask_core_sched_tick(): a process
 * back at a non-negative budget is released and the executors woken.
 */
#include <linux/hrtimer.h>
#include <linux/workqueue.h>
#include "ptask_kmod.h"
#include "compat.h"

static struct hrtimer sched_timer;
static struct work_struct sched_work;

static void sched_work_fn(struct work_struct *work)
{
	mutex_lock(&ptask_kernel.lock);
	ptask_core_sched_tick(&ptask_kernel.ns);
	mutex_unlock(&ptask_kernel.lock);
}

static enum hrtimer_restart sched_timer_fn(struct hrtimer *timer)
{
	schedule_work(&sched_work);
	return HRTIMER_NORESTART;
}

/**
 * ptask_os_sched_timer() - arm (or stop) PTSched's timer
 * @ns: the namespace
 * @when_ns: ktime_get_ns() time of the tick; 0: none needed
 *
 * Context: the namespace mutex held.  Does not sleep: a callback already
 * running is not waited for (its tick is harmless).
 */
void ptask_os_sched_timer(struct ptask_ns *ns, u64 when_ns)
{
	ptask_os_assert_locked(ns);
	if (!when_ns) {
		hrtimer_try_to_cancel(&sched_timer);
		return;
	}
	hrtimer_start(&sched_timer, ns_to_ktime(when_ns), HRTIMER_MODE_ABS);
}

/**
 * ptask_sched_timer_init() - set up the timer (before the namespace)
 */
void ptask_sched_timer_init(void)
{
	INIT_WORK(&sched_work, sched_work_fn);
	ptask_hrtimer_setup(&sched_timer, sched_timer_fn, CLOCK_MONOTONIC,
			    HRTIMER_MODE_ABS);
}

/**
 * ptask_sched_timer_exit() - stop the timer and wait for its work
 *
 * Context: process context, the namespace mutex not held (the work item
 * takes it).
 */
void ptask_sched_timer_exit(void)
{
	/* The work item re-arms the timer: work, timer, then work again. */
	cancel_work_sync(&sched_work);
	hrtimer_cancel(&sched_timer);
	cancel_work_sync(&sched_work);
}
