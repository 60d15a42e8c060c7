// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * sched.c - `ptaskctl sched [SETTING VALUE]...`: print PTSched's settings
 * and state, or (root) change several settings at once:
 *
 *   budgets on|off  alpha PERMILLE  policy NAME  timer US  window MS
 *
 * (each may also be written --budgets, --alpha ...).  Every value is
 * checked here against uapi/ptask.h's ranges before anything is sent, and
 * the daemon or module checks them all again before applying any, so a
 * refused command changes nothing.  Kernel mode: GET_SCHED / SET_SCHED;
 * user mode: PTASKD_OP_SCHED_GET / PTASKD_OP_SCHED_SET.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "ptaskctl.h"

static const char *const policy_names[__PTASK_POLICY_MAX] = PTASK_POLICY_NAMES;

/* A decimal number in [min, max], nothing else; -EINVAL if not. */
static int parse_range(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int parse_policy(const char *s, uint32_t *out)
{
	uint32_t i;

	for (i = 0; i < __PTASK_POLICY_MAX; i++) {
		if (!strcmp(s, policy_names[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_budgets(const char *s, uint32_t *out)
{
	if (!strcmp(s, "on"))
		*out = 1;
	else if (!strcmp(s, "off"))
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

/* One "SETTING VALUE" pair into @p and @mask; prints why it is wrong. */
static int parse_setting(const char *key, const char *val,
			 struct ptask_sched_params *p, uint32_t *mask)
{
	uint32_t bit;
	int err;

	if (!strncmp(key, "--", 2))
		key += 2;
	if (!strcmp(key, "budgets")) {
		bit = PTASK_SCHED_SET_BUDGETS;
		err = parse_budgets(val, &p->budgets);
	} else if (!strcmp(key, "alpha")) {
		bit = PTASK_SCHED_SET_ALPHA;
		err = parse_range(val, PTASK_SCHED_ALPHA_MIN,
				  PTASK_SCHED_ALPHA_MAX, &p->alpha_permille);
	} else if (!strcmp(key, "policy")) {
		bit = PTASK_SCHED_SET_POLICY;
		err = parse_policy(val, &p->policy);
	} else if (!strcmp(key, "timer")) {
		bit = PTASK_SCHED_SET_TIMER;
		err = parse_range(val, PTASK_SCHED_TIMER_MIN_US,
				  PTASK_SCHED_TIMER_MAX_US, &p->timer_us);
	} else if (!strcmp(key, "window")) {
		bit = PTASK_SCHED_SET_WINDOW;
		err = parse_range(val, PTASK_SCHED_WINDOW_MIN_MS,
				  PTASK_SCHED_WINDOW_MAX_MS, &p->window_ms);
	} else {
		ptaskctl_err("sched: unknown setting '%s' (budgets, alpha, "
			     "policy, timer, window)", key);
		return -EINVAL;
	}
	if (*mask & bit) {
		ptaskctl_err("sched: %s given twice", key);
		return -EINVAL;
	}
	*mask |= bit;
	if (!err)
		return 0;
	if (bit == PTASK_SCHED_SET_BUDGETS)
		ptaskctl_err("sched: budgets %s: want on or off", val);
	else if (bit == PTASK_SCHED_SET_POLICY)
		ptaskctl_err("sched: policy %s: want default, first-available, "
			     "fifo, priority or data-aware", val);
	else if (bit == PTASK_SCHED_SET_ALPHA)
		ptaskctl_err("sched: alpha %s: want permille, %u..%u", val,
			     PTASK_SCHED_ALPHA_MIN, PTASK_SCHED_ALPHA_MAX);
	else if (bit == PTASK_SCHED_SET_TIMER)
		ptaskctl_err("sched: timer %s: want microseconds, %u..%u", val,
			     PTASK_SCHED_TIMER_MIN_US, PTASK_SCHED_TIMER_MAX_US);
	else
		ptaskctl_err("sched: window %s: want milliseconds, %u..%u", val,
			     PTASK_SCHED_WINDOW_MIN_MS, PTASK_SCHED_WINDOW_MAX_MS);
	return -EINVAL;
}

static void print_sched(const struct ptask_sched_params *p)
{
	out_begin();
	out_str("budgets", p->budgets ? "on" : "off");
	out_u64("alpha_permille", p->alpha_permille);
	out_str("policy", p->policy < __PTASK_POLICY_MAX ?
		policy_names[p->policy] : "?");
	out_u64("timer_us", p->timer_us);
	out_u64("window_ms", p->window_ms);
	out_u64("period_ns", p->period_ns);
	out_u64("active", p->active);
	out_u64("held", p->held);
	out_u64("accelerators", p->n_accels);
	out_u64("total_weight", p->total_weight);
	out_end();
}

static int sched_main(int argc, char *argv[])
{
	struct ptask_sched_params p = { };
	uint32_t mask = 0;
	int i, ret;

	if (argc % 2 == 0) {
		ptaskctl_err("sched: settings come in pairs: SETTING VALUE "
			     "('%s' has no value)", argv[argc - 1]);
		return PTASKCTL_USAGE;
	}
	for (i = 1; i < argc; i += 2)
		if (parse_setting(argv[i], argv[i + 1], &p, &mask))
			return PTASKCTL_USAGE;
	ret = mask ? ipc_sched_set(mask, &p, &p) : ipc_sched_get(&p);
	if (ret) {
		ipc_report(mask ? "sched: setting" : "sched", ret);
		return ret;
	}
	print_sched(&p);
	return 0;
}

PTASKCTL_COMMAND(sched, sched_main,
		 "[budgets on|off] [alpha PERMILLE] [policy NAME] [timer US] [window MS]",
		 "print PTSched's settings and state, or (root) set several at once");
