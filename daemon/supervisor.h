/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * supervisor.h - ptaskd --executors uid: an executor process per uid
 * (supervisor.c), in kernel mode and in user mode.
 */
#ifndef PTASKD_SUPERVISOR_H
#define PTASKD_SUPERVISOR_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Where a child finds the fd prepare() gave it (user mode's lifeline). */
#define PD_SUP_CHILD_FD		3
#define PD_SUP_CHILD_FD_STR	"3"

/**
 * struct pd_sup_ops - what the mode gives the supervisor
 * @what: what it watches, for the log ("ptask.ko")
 * @owners: call @seen(@seen_arg, uid, pid) for every live ptask's owner
 *	(its uid and its process's pid key); 0 or -errno (the tick is
 *	skipped)
 * @prepare: NULL, or before a child of @uid is started: *@child_fd
 *	goes to the child as PD_SUP_CHILD_FD (with --exec-fd), *@keep_fd
 *	to @spawned; -errno: no start now (back-off)
 * @spawned: the child @pid of @uid runs, with @keep_fd (taken); it
 *	serves process @served alone, or the whole uid when -1
 * @by_process: an executor per process (--executors process) rather
 *	than per uid
 * @kick_fd: an eventfd whose count makes the supervisor look at once
 *	(-1: none; it looks every PD_SUP_POLL_MS anyway)
 */
struct pd_sup_ops {
	const char *what;
	int (*owners)(void *arg,
		      void (*seen)(void *seen_arg, uint32_t uid, int32_t pid),
		      void *seen_arg);
	int (*prepare)(void *arg, uint32_t uid, int *keep_fd, int *child_fd);
	void (*spawned)(void *arg, uint32_t uid, int32_t served, pid_t pid,
			int keep_fd);
	int kick_fd;
	bool by_process;
};

/*
 * Run until SIGTERM or SIGINT (taken from @set, blocked): every uid that
 * owns a ptask gets a child running @argv (this ptaskd's command line,
 * --executors dropped) with --exec-uid UID added; a child that dies is
 * started again with back-off, one whose uid owned no ptask for @idle_s
 * seconds is stopped.  @arg is @ops's.  Returns 0, or -ENOMEM.
 */
int pd_supervise(int argc, char **argv, unsigned int idle_s,
		 const sigset_t *set, const struct pd_sup_ops *ops, void *arg);

#endif /* PTASKD_SUPERVISOR_H */
