/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* os_user.h - knobs of the user-space OS shim for tests (see os_user.c). */
#ifndef PTASK_OS_USER_H
#define PTASK_OS_USER_H

#include "core/ptask_core.h"

extern long os_user_buffers;		/* live buffers */
extern u32 os_user_buf_last_flags;	/* the last allocation's flags */
extern int os_user_locked;		/* 0: any core call aborts */
extern unsigned long os_user_wakes;	/* ptask_os_client_wake() calls */
extern unsigned long os_user_events;	/* ptask_os_event() calls */
extern unsigned long os_user_saturations;	/* ptask_os_saturated() calls */
extern int os_user_fail_alloc_after;	/* -1 never; n: the (n+1)th fails */
extern int os_user_fail_alloc_once;	/* 1: only that one fails, then -1 */
extern unsigned long os_user_allocs;	/* allocation attempts (objects+bufs) */
extern unsigned long os_user_alloc_failures; /* failures injected so far */
extern unsigned long long os_user_buf_bytes;	/* bytes in live buffers */
extern unsigned long long os_user_buf_limit;	/* 0: none; else buffers
						 * past it get -ENOMEM */

extern u64 os_user_clock_ns;		/* 0: CLOCK_MONOTONIC; else the time */
extern u64 os_user_timer_ns;		/* last ptask_os_sched_timer() value */
extern unsigned long os_user_timer_calls;
extern u64 os_user_tunnel_timer_ns;	/* last ptask_os_tunnel_timer() value */

void *os_user_buf_data(struct ptask_buf *buf);

#endif
