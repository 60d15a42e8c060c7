// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * policy.c - `ptaskctl policy [NAME]`: print or set the daemon's
 * scheduling policy (first-available, fifo, priority, data-aware).
 *
 * User mode: PTASKD_OP_INFO to read, PTASKD_OP_SET_POLICY to set (root).
 * Kernel mode: the policy is ptaskd's --policy; changing it while it runs
 * comes with /sys/kernel/ptask (the PTSched issue), so setting is refused.
 */
#include <errno.h>
#include <string.h>
#include "ptaskctl.h"

static int policy_main(int argc, char *argv[])
{
	const char *path = ptaskctl_opts.socket;
	struct ptaskctl_user_info ui;
	int ret;

	if (argc > 2) {
		ptaskctl_err("policy: at most one argument, the policy's name");
		return PTASKCTL_USAGE;
	}
	if (ptaskctl_opts.mode == PTASKCTL_MODE_KERNEL ||
	    (ptaskctl_opts.mode == PTASKCTL_MODE_AUTO && !ipc_kernel_probe())) {
		ptaskctl_err("policy: kernel mode: the policy is ptaskd's --policy "
			     "(run-time changes come with /sys/kernel/ptask)");
		return 1;
	}
	if (argc == 2) {
		ret = ipc_user_set_policy(path, argv[1]);
		if (ret) {
			ptaskctl_err("policy: %s: %s%s", argv[1], strerror(-ret),
				     ret == -EPERM ? " (root only)" :
				     ret == -EINVAL ? " (first-available, fifo, "
				     "priority or data-aware)" : "");
			return 1;
		}
	}
	ret = ipc_user_info(path, &ui);
	if (ret) {
		ptaskctl_err("policy: %s: %s", path, strerror(-ret));
		return 1;
	}
	out_begin();
	out_str("policy", ui.info.policy);
	out_end();
	return 0;
}

PTASKCTL_COMMAND(policy, policy_main, "[NAME]",
		 "print, or (root) set, the daemon's scheduling policy");
