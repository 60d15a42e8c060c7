/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pt_harness.h - kselftest_harness.h (copied unchanged from Linux 6.1) with
 * the one -Wextra warning it raises silenced, then the ptask test helpers.
 * Include this, not kselftest_harness.h, from the *_test.c files.
 */
#ifndef PTASK_KSELFTEST_PT_HARNESS_H
#define PTASK_KSELFTEST_PT_HARNESS_H

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

/*
 * Each test's limit in all: the harness's 30 s are seconds of wall time, and
 * the guest is emulated on a host that may be busy.  A hang still fails
 * (and the guest's /init limits each program to its PROG_TIMEOUT).
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	120

#include <sys/wait.h>

#include "lib.h"

/* PT_WAIT_MS, the deadline for states a test waits for: lib.h. */

/* The absolute deadline (CLOCK_MONOTONIC ns) PT_WAIT_MS from now. */
static inline __u64 pt_wait_deadline(void)
{
	return pt_deadline_ms(PT_WAIT_MS);
}

/*
 * Waits (PT_WAIT_MS at most) until a thread started by the test stored its
 * tid in *@tidp: the tid, or 0.
 */
static inline pid_t pt_wait_tid(const pid_t *tidp)
{
	__u64 deadline = pt_wait_deadline();
	pid_t tid;

	while (!(tid = __atomic_load_n(tidp, __ATOMIC_SEQ_CST)) &&
	       pt_now_ns() < deadline)
		pt_sleep_ms(5);
	return tid;
}

/*
 * Reaps forked child @pid (tracked in @env) and asserts it exited with
 * PT_CHILD_OK; PT_CHILD_SKIP skips the test (the child could not open
 * /dev/ptask as another user); any other code names the failed step.
 */
#define PT_WAIT_CHILD(env, pid, ms) do {				\
	int __st = pt_env_wait_pid(env, pid, ms);			\
	ASSERT_LE(0, __st);						\
	ASSERT_TRUE(WIFEXITED(__st));					\
	if (WEXITSTATUS(__st) == PT_CHILD_SKIP)				\
		SKIP(return, "uid %d cannot open %s", PT_NOBODY,	\
		     PT_DEV_PATH);					\
	ASSERT_EQ(PT_CHILD_OK, WEXITSTATUS(__st));			\
} while (0)

#endif /* PTASK_KSELFTEST_PT_HARNESS_H */
