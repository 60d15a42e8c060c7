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

/* Has pd_fatal() been called? */
bool pd_fatal_happened(void);

#endif /* PTASKD_FATAL_H */
