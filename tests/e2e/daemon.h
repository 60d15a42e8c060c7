/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * daemon.h - the ptaskd an end-to-end test runs, in either mode, and
 * what the test reads through the transport it serves.
 *
 *   kernel mode: ptaskd --mode kernel registers with ptask.ko as its
 *                executor; the namespace is the module's, so it outlives
 *                the daemon; counts, PTSched's settings and a process's
 *                accounting come from /sys/kernel/ptask.
 *   user mode:   ptaskd --mode user --socket <private dir>/sock holds the
 *                namespace itself; counts come from PTASKD_OP_INFO,
 *                PTSched from PTASKD_OP_SCHED_GET/_SET and PTASKD_OP_PROCS.
 *
 * The daemon is $PTASK_PTASKD, else E2E_PTASKD (the build's: build/bin/
 * ptaskd on the host, /bin/ptaskd in the guest).  Its stdout and stderr
 * are appended to <private dir>/ptaskd.log.  It gets SIGKILL when the
 * test process dies (PR_SET_PDEATHSIG), so no daemon outlives its test.
 * Every int function returns 0 (or what it says) or -errno.
 */
#ifndef PTASK_TESTS_E2E_DAEMON_H
#define PTASK_TESTS_E2E_DAEMON_H

#include <stdbool.h>
#include <sys/types.h>
#include "libptask.h"

struct e2e_daemon {
	enum ptask_mode mode;		/* PTASK_MODE_KERNEL or _USER */
	const char *backend;		/* "cpu" or "sim" */
	char dir[64];			/* private: the socket, the log */
	char socket[96];		/* user mode's socket */
	char log[96];
	unsigned int wait_ms;		/* deadline of a state to come */
	pid_t pid;			/* the running daemon, or 0 */
	const char *extra[4];		/* more options for the next start */
	bool supervisor;		/* --executors uid: registers no executor */
	__u64 base[__PTASK_COUNT_MAX];	/* the counts once it was ready */
};

/* The daemon's path: $PTASK_PTASKD or the build's. */
const char *e2e_ptaskd_path(void);
/*
 * Makes the private directory; nothing runs yet.  @wait_ms: how long the
 * functions below wait for a state that comes in its own time (the
 * daemon ready, a child reaped; the tests pass PT_WAIT_MS).
 */
int e2e_daemon_init(struct e2e_daemon *d, enum ptask_mode mode,
		    const char *backend, unsigned int wait_ms);
/* Kills a daemon still running, removes the directory. */
void e2e_daemon_fini(struct e2e_daemon *d);
/*
 * Starts ptaskd (--sim-config @sim when non-NULL), waits (wait_ms) until
 * it serves: registered (kernel mode) or answering on its socket (user
 * mode), then reads d->base.  -ETIMEDOUT, -ECHILD (it exited).
 */
int e2e_daemon_start(struct e2e_daemon *d, const char *sim);
/* Sends @sig and reaps (wait_ms): the wait status, or -errno. */
int e2e_daemon_stop(struct e2e_daemon *d, int sig);
/* A context in the daemon's mode (user mode: on its socket). */
int e2e_ctx_open(const struct e2e_daemon *d, struct ptask_ctx **ctx);
/* Does the daemon's log hold @text? */
bool e2e_log_has(const struct e2e_daemon *d, const char *text);
/* Prints the log as "# ptaskd: " lines. */
void e2e_log_dump(const struct e2e_daemon *d);
/* Reaps child @pid within @ms: its wait status, -ETIMEDOUT or -errno. */
int e2e_wait_pid(pid_t pid, unsigned int ms);

/* --- through the transport (transport.c) --- */

/*
 * User mode: one request @op (@req_len bytes) on a fresh connection past
 * its HELLO; the reply's payload into @rep.  Its length, or the -errno
 * the daemon answered (or the socket's).
 */
int e2e_user_call(const struct e2e_daemon *d, uint32_t op, const void *req,
		  size_t req_len, void *rep, size_t rep_len);

/* Live object counts, per enum ptask_count. */
int e2e_counts_read(const struct e2e_daemon *d, __u64 c[__PTASK_COUNT_MAX]);
/*
 * Waits up to @ms until the counts equal @want (user mode: all but
 * clients, as the reading connection is one); 0, or the number that
 * differ, printed with @who.
 */
int e2e_counts_wait(const struct e2e_daemon *d,
		    const __u64 want[__PTASK_COUNT_MAX], unsigned int ms,
		    const char *who);
/* Waits up to @ms until count @which equals @want: 0 or -ETIMEDOUT. */
int e2e_count_wait(const struct e2e_daemon *d, enum ptask_count which,
		   __u64 want, unsigned int ms);
/* PTSched's budgets switch and window. */
int e2e_sched_read(const struct e2e_daemon *d, __u32 *budgets,
		   __u32 *window_ms);
int e2e_sched_set_window(const struct e2e_daemon *d, __u32 window_ms);

/* One process's accounting (struct ptask_proc_info's fields we need). */
struct e2e_proc {
	__u64 invocations;
	__u64 avg_ns;		/* its average charge */
	__u32 held;
	__u32 weight;
};

/* The accelerators PTSched's refills add up to (sched/n_accels). */
int e2e_sched_accels(const struct e2e_daemon *d, __u32 *n_accels);

/* -ESRCH: the scheduler has no record of @pid. */
int e2e_proc_read(const struct e2e_daemon *d, pid_t pid, struct e2e_proc *p);

#endif /* PTASK_TESTS_E2E_DAEMON_H */
