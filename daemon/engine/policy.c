// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * policy.c - names of the scheduling policies (PTask section 5.1), as
 * ptaskd's command line, ptaskctl and the tests spell them.
 */
#include <errno.h>
#include <string.h>
#include "daemon/engine/engine.h"

static const char *const pd_policy_names[__PD_POLICY_MAX] = {
	[PD_POLICY_FIRST_AVAILABLE] = "first-available",
	[PD_POLICY_FIFO] = "fifo",
	[PD_POLICY_PRIORITY] = "priority",
	[PD_POLICY_DATA_AWARE] = "data-aware",
};

/**
 * pd_policy_parse() - a policy's number from its name
 * @name: "first-available", "fifo", "priority" or "data-aware"
 *
 * Return: enum pd_policy, or -EINVAL for any other string (NULL too).
 */
int pd_policy_parse(const char *name)
{
	int i;

	if (!name)
		return -EINVAL;
	for (i = 0; i < __PD_POLICY_MAX; i++)
		if (!strcmp(name, pd_policy_names[i]))
			return i;
	return -EINVAL;
}

/**
 * pd_policy_name() - a policy's name
 * @policy: enum pd_policy
 *
 * Return: the name, or "?" for a number that names no policy (so a log
 * line never prints NULL).
 */
const char *pd_policy_name(int policy)
{
	if (policy < 0 || policy >= __PD_POLICY_MAX)
		return "?";
	return pd_policy_names[policy];
}
