// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * log.c - see log.h.  One fprintf per line, so lines from several
 * threads never interleave within a line (stdio locks the stream).
 */
#include <stdarg.h>
#include <stdio.h>
#include "daemon/log.h"

int pd_log_level = PD_LOG_INFO;

static const char *const level_names[] = {
	[PD_LOG_ERR] = "error",
	[PD_LOG_WARN] = "warning",
	[PD_LOG_INFO] = "info",
	[PD_LOG_DEBUG] = "debug",
};

void pd_log(int level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (level > pd_log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "ptaskd: %s: %s\n", level_names[level], line);
}
