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
static atomic_int fatal_status = PD_EXIT_FATAL;

static void stop(int status, const char *fmt, va_list ap)
{
	char why[512];

	if (atomic_exchange(&fatal, true))
		return;
	atomic_store(&fatal_status, status);
	vsnprintf(why, sizeof(why), fmt, ap);
	pd_log_err("fatal: %s; stopping (exit status %d) for a restart", why,
		   status);
	kill(getpid(), SIGTERM);
}

void pd_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	stop(PD_EXIT_FATAL, fmt, ap);
	va_end(ap);
}

void pd_fatal_collateral(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	stop(PD_EXIT_COLLATERAL, fmt, ap);
	va_end(ap);
}

int pd_fatal_status(void)
{
	return atomic_load(&fatal_status);
}

bool pd_fatal_happened(void)
{
	return atomic_load(&fatal);
}
