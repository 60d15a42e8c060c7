/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * util.h - for the end-to-end tests of ptaskd: start and stop a daemon
 * on a private socket, TAP-style results, and a direct line to the
 * daemon's protocol for what libptask does not expose (its counts),
 * framed by the common library (common/msg.h) as libptask's are.
 */
#ifndef PTASK_TESTS_DAEMON_UTIL_H
#define PTASK_TESTS_DAEMON_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "uapi/ptask.h"

struct td_daemon {
	pid_t pid;
	char dir[64];
	char socket[128];
	char log[128];
};

/*
 * Start build/bin/ptaskd --mode user --socket <tmp> plus @args (NULL-
 * terminated) and wait until it answers.  Sets PTASK_SOCKET and
 * PTASK_MODE=user for libptask.  Returns 0 or -errno.
 */
int td_start(struct td_daemon *d, const char *const *args);
/* SIGTERM and wait; returns the exit status (or -1 if it was killed). */
int td_stop(struct td_daemon *d);
/* SIGKILL and reap. */
void td_kill(struct td_daemon *d);
/* The daemon's live object counts (enum ptask_count). */
int td_counts(const struct td_daemon *d, uint64_t counts[__PTASK_COUNT_MAX]);
/* Wait up to @ms for every count but clients to fall to @base's. */
bool td_counts_settle(const struct td_daemon *d, const uint64_t *base, int ms);

/* Results: "ok N - name" / "not ok N - name", then the summary line. */
void td_result(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void td_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "N passed, M failed, K skipped"; returns the exit status. */
int td_summary(void);

#define TD_CHECK(cond, ...) do {					\
	if (!(cond)) {							\
		fprintf(stderr, "  %s:%d: check failed: %s\n",		\
			__FILE__, __LINE__, #cond);			\
		fprintf(stderr, "  " __VA_ARGS__);			\
		fprintf(stderr, "\n");					\
		return false;						\
	}								\
} while (0)

#endif /* PTASK_TESTS_DAEMON_UTIL_H */
