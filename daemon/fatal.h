/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * fatal.h - an error that leaves ptaskd unable to go on (a sticky CUDA
 * error poisons every context of the process): ptaskd drains, exits with
 * PD_EXIT_FATAL, and systemd (Restart=on-failure) starts a fresh one.
 */
#ifndef PTASKD_FATAL_H
#define PTASKD_FATAL_H

#include <stdbool.h>

/* ptaskd's exit status after pd_fatal() (sysexits.h's EX_SOFTWARE). */
#define PD_EXIT_FATAL	70

/*
 * Log @fmt as an error (the first call only) and ask main to stop: it
 * receives SIGTERM, drains (what is left fails fast) and exits
 * PD_EXIT_FATAL.  Any thread; async-signal-safe it is not.
 */
void pd_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * ... when the accelerator was reset under this process by someone
 * else's fault (NVIDIA MPS resets every client when one faults): the same
 * stop, but exit status PD_EXIT_COLLATERAL (sysexits.h's EX_TEMPFAIL),
 * which the supervisor (--executors uid) restarts at once, without the
 * back-off a faulting executor earns.
 */
#define PD_EXIT_COLLATERAL	75
void pd_fatal_collateral(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Has pd_fatal() been called? */
bool pd_fatal_happened(void);
/* The exit status it asks for (PD_EXIT_FATAL or PD_EXIT_COLLATERAL). */
int pd_fatal_status(void);

#endif /* PTASKD_FATAL_H */
