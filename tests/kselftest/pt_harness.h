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

#include <sys/wait.h>

#include "lib.h"

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
