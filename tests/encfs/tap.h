/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * tap.h - minimal TAP output for the encfs-gpu test programs:
 * "ok N - name" / "not ok N - name", "# SKIP" for skips, "1..N" at the
 * end; the exit status is 1 when anything failed.  tests/encfs/run.sh
 * counts these lines.
 */
#ifndef ENCFS_TAP_H
#define ENCFS_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_n, tap_failed;

static inline void tap_vres(int ok, const char *skip, const char *fmt, va_list ap)
{
	printf("%sok %d - ", ok ? "" : "not ", ++tap_n);
	vprintf(fmt, ap);
	if (skip)
		printf(" # SKIP %s", skip);
	printf("\n");
	fflush(stdout);
	if (!ok)
		tap_failed++;
}

__attribute__((format(printf, 2, 3)))
static inline int tap_ok(int ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vres(ok, NULL, fmt, ap);
	va_end(ap);
	return ok;
}

__attribute__((format(printf, 2, 3)))
static inline void tap_skip(const char *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vres(1, why, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 1, 2)))
static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
