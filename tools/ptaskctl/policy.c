// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * policy.c - `ptaskctl policy [NAME]`: print or (root) set the policy
 * executors order their invocations by (first-available, fifo,
 * priority, data-aware, or default: the executor's own --policy).
 *
 * It is PTSched's policy setting, the one `ptaskctl sched policy NAME`
 * sets too.  User mode: PTASKD_OP_SET_POLICY to set (kept for clients
 * older than PTASKD_OP_SCHED_SET; the daemon maps it onto the same
 * setting), PTASKD_OP_INFO to read the policy in force (the daemon's own
 * for "default").  Kernel mode: SET_SCHED and GET_SCHED; the module does
 * not know the executor's own policy, so "default" prints as it is.
 */
#include <errno.h>
#include <string.h>
#include "ptaskctl.h"

static const char *const policy_names[__PTASK_POLICY_MAX] = PTASK_POLICY_NAMES;

static int policy_index(const char *name)
{
	int i;

	for (i = 0; i < __PTASK_POLICY_MAX; i++)
		if (!strcmp(name, policy_names[i]))
			return i;
	return -EINVAL;
}

static int policy_kernel(const char *name)
{
	struct ptask_sched_params p = { };
	int ret;

	if (name) {
		p.policy = (uint32_t)policy_index(name);
		ret = ipc_sched_set(PTASK_SCHED_SET_POLICY, &p, &p);
	} else {
		ret = ipc_sched_get(&p);
	}
	if (ret) {
		ipc_report("policy", ret);
		return ret;
	}
	out_begin();
	out_str("policy", p.policy < __PTASK_POLICY_MAX ?
		policy_names[p.policy] : "?");
	out_end();
	return 0;
}

static int policy_user(const char *name)
{
	const char *path = ptaskctl_opts.socket;
	struct ptaskctl_user_info ui;
	int ret;

	if (name) {
		ret = ipc_user_set_policy(path, name);
		if (ret) {
			ipc_report("policy", ret == -ENOENT ? -ECONNREFUSED : ret);
			return ret;
		}
	}
	ret = ipc_user_info(path, &ui);
	if (ret) {
		ipc_report("policy", ret == -ENOENT ? -ECONNREFUSED : ret);
		return ret;
	}
	out_begin();
	out_str("policy", ui.info.policy);
	out_end();
	return 0;
}

static int policy_main(int argc, char *argv[])
{
	const char *name = argc == 2 ? argv[1] : NULL;

	if (argc > 2) {
		ptaskctl_err("policy: at most one argument, the policy's name");
		return PTASKCTL_USAGE;
	}
	if (name && policy_index(name) < 0) {
		ptaskctl_err("policy: %s: want default, first-available, fifo, "
			     "priority or data-aware", name);
		return PTASKCTL_USAGE;
	}
	return ipc_kernel_mode() ? policy_kernel(name) : policy_user(name);
}

PTASKCTL_COMMAND(policy, policy_main, "[NAME]",
		 "print, or (root) set, the executors' scheduling policy");
