/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * log.h - ptaskd's log: lines on stderr, "ptaskd: <level>: <text>".
 * In the foreground and under systemd alike (the journal takes stderr).
 */
#ifndef PTASKD_LOG_H
#define PTASKD_LOG_H

enum pd_log_level {
	PD_LOG_ERR = 0,
	PD_LOG_WARN = 1,
	PD_LOG_INFO = 2,
	PD_LOG_DEBUG = 3,
};

/* Lines above this level are dropped; -v raises it. */
extern int pd_log_level;

void pd_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pd_log_err(...)		pd_log(PD_LOG_ERR, __VA_ARGS__)
#define pd_log_warn(...)	pd_log(PD_LOG_WARN, __VA_ARGS__)
#define pd_log_info(...)	pd_log(PD_LOG_INFO, __VA_ARGS__)
#define pd_log_debug(...)	pd_log(PD_LOG_DEBUG, __VA_ARGS__)

#endif /* PTASKD_LOG_H */
