// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fatal.c - see fatal.h.  SIGTERM is blocked in every thread and taken
 * by main's sigwait(), so kill(getpid()) reaches main however deep the
 * caller is, and the usual drain runs: no second shutdown path.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>
#include "daemon/fatal.h"
#include "daemon/log.h"

static atomic_bool fatal;

void pd_fatal(const char *fmt, ...)
{
	char why[512];
	va_list ap;

	if (atomic_exchange(&fatal, true))
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	pd_log_err("fatal: %s; stopping (exit status %d) for a restart", why,
		   PD_EXIT_FATAL);
	kill(getpid(), SIGTERM);
}

bool pd_fatal_happened(void)
{
	return atomic_load(&fatal);
}
