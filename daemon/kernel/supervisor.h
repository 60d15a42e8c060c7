/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * supervisor.h - ptaskd --mode kernel --executors uid: an executor
 * process per uid (supervisor.c).
 */
#ifndef PTASKD_SUPERVISOR_H
#define PTASKD_SUPERVISOR_H

#include <signal.h>

/*
 * Run until SIGTERM or SIGINT (taken from @set, blocked): every uid that
 * owns a ptask of ptask.ko gets a child running @argv (this ptaskd's
 * command line, --executors dropped) with --exec-uid UID added; a child
 * that dies is started again with back-off, one whose uid owned no ptask
 * for @idle_s seconds is stopped.  Returns 0, or -ENOMEM.
 */
int pd_supervise(int argc, char **argv, unsigned int idle_s,
		 const sigset_t *set);

#endif /* PTASKD_SUPERVISOR_H */
