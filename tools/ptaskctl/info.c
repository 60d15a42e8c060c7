// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * info.c - `ptaskctl info`: which ptask answers, and its state.
 *
 * Kernel mode: PTASK_CMD_GET_INFO (ABI version, executors, object counts).
 * User mode: HELLO and PTASKD_OP_INFO on the daemon's socket (its pid,
 * protocol, backend, policy, accelerators, object counts and the engine's
 * counters).  Auto: kernel mode when the "ptask" generic-netlink family
 * is registered, else user mode.
 */
#include <errno.h>
#include <string.h>
#include "ptaskctl.h"

static const char *const count_names[__PTASK_COUNT_MAX] = PTASK_COUNT_NAMES;

/* Live objects, per enum ptask_count; @has NULL: all of them. */
static void out_counts(const __u64 *counts, const bool *has)
{
	int i;

	out_obj_begin("objects");
	for (i = 0; i < __PTASK_COUNT_MAX; i++)
		if (!has || has[i])
			out_u64(count_names[i], counts[i]);
	out_obj_end();
}

/* The engine's counters, and invocations per accelerator. */
static void user_stats(const struct ptaskd_info *in)
{
	uint32_t i, ndev = in->ndev;

	out_obj_begin("engine");
	out_u64("invocations", in->invocations);
	out_u64("failed", in->failed);
	out_u64("migrations", in->migrations);
	out_u64("evictions", in->evictions);
	out_u64("bytes_h2d", in->bytes_h2d);
	out_u64("bytes_d2h", in->bytes_d2h);
	out_u64("bytes_d2d", in->bytes_d2d);
	out_u64("gpu_ns", in->gpu_ns);
	out_obj_end();
	if (ndev > PTASKD_INFO_DEVICES)
		ndev = PTASKD_INFO_DEVICES;
	out_list_begin("per_device_invocations");
	for (i = 0; i < ndev; i++)
		out_u64(NULL, in->per_device[i]);
	out_list_end();
}

static int info_kernel(void)
{
	struct pc_genl_info ki;
	int ret;

	ret = ipc_kernel_info(&ki);
	if (ret) {
		ptaskctl_err("info: kernel: %s", ret == -ENOENT ?
			     "no \"ptask\" netlink family (is ptask.ko loaded?)" :
			     strerror(-ret));
		return ret;
	}
	out_begin();
	out_str("mode", "kernel");
	if (ki.has_abi)
		out_u64("abi_version", ki.abi);
	if (ki.has_executors)
		out_u64("executors", ki.executors);
	if (ki.has_counts)
		out_counts(ki.counts, ki.has_count);
	out_end();
	return 0;
}

static int info_user(void)
{
	const char *path = ptaskctl_opts.socket;
	struct ptaskctl_user_info ui;
	int ret;

	ret = ipc_user_info(path, &ui);
	if (ret) {
		ptaskctl_err("info: %s: %s%s", path, strerror(-ret),
			     ret == -ENOENT || ret == -ECONNREFUSED ?
			     " (is ptaskd running?)" : "");
		return ret;
	}
	out_begin();
	out_str("mode", "user");
	out_str("socket", path);
	out_s64("daemon_pid", ui.pid);
	out_u64("protocol", ui.info.version);
	out_str("backend", ui.info.backend);
	out_str("policy", ui.info.policy);
	out_u64("accelerators", ui.info.ndev);
	out_counts(ui.info.counts, NULL);
	user_stats(&ui.info);
	out_end();
	return 0;
}

static int info_main(int argc, char *argv[])
{
	(void)argv;
	if (argc > 1) {
		ptaskctl_err("info: takes no arguments");
		return PTASKCTL_USAGE;
	}
	switch (ptaskctl_opts.mode) {
	case PTASKCTL_MODE_KERNEL:
		return info_kernel();
	case PTASKCTL_MODE_USER:
		return info_user();
	default:
		return ipc_kernel_probe() ? info_user() : info_kernel();
	}
}

PTASKCTL_COMMAND(info, info_main, "",
		 "the mode in use, the daemon or module's state and object counts");
