// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * prio.c - (root) `ptaskctl prio ptask HANDLE PRIO`: a ptask's static
 * priority (PTASK_PRIO_MIN..PTASK_PRIO_MAX); `ptaskctl prio pid PID
 * WEIGHT|default`: a process's PTSched weight override
 * (1..PTASK_WEIGHT_MAX; "default" drops it, so its nice value's weight
 * counts again).  Kernel mode: SET_PRIO; user mode: PTASKD_OP_SET_PRIO.
 * Prints what was set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ptaskctl.h"

/* A decimal number in [min, max], nothing else. */
static bool parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

static int parse_args(char *argv[], struct ptaskd_set_prio *req)
{
	uint32_t id;

	if (!strcmp(argv[1], "ptask")) {
		req->target = PTASKD_PRIO_PTASK;
		if (!parse_u32(argv[2], 1, UINT32_MAX, &id)) {
			ptaskctl_err("prio: ptask '%s': want a ptask's handle "
				     "(see ptaskctl show)", argv[2]);
			return -EINVAL;
		}
		req->handle = id;
		if (!parse_u32(argv[3], PTASK_PRIO_MIN, PTASK_PRIO_MAX,
			       &req->value)) {
			ptaskctl_err("prio: priority '%s': want %d..%d", argv[3],
				     PTASK_PRIO_MIN, PTASK_PRIO_MAX);
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(argv[1], "pid")) {
		req->target = PTASKD_PRIO_PID;
		if (!parse_u32(argv[2], 1, INT32_MAX, &id)) {
			ptaskctl_err("prio: pid '%s': want a process id", argv[2]);
			return -EINVAL;
		}
		req->pid = (int32_t)id;
		if (!strcmp(argv[3], "default"))
			req->value = 0;
		else if (!parse_u32(argv[3], 1, PTASK_WEIGHT_MAX, &req->value)) {
			ptaskctl_err("prio: weight '%s': want 1..%d or default",
				     argv[3], PTASK_WEIGHT_MAX);
			return -EINVAL;
		}
		return 0;
	}
	ptaskctl_err("prio: '%s': want 'ptask HANDLE PRIO' or 'pid PID WEIGHT|default'",
		     argv[1]);
	return -EINVAL;
}

static int prio_main(int argc, char *argv[])
{
	struct ptaskd_set_prio req = { };
	char what[64];
	int ret;

	if (argc != 4) {
		ptaskctl_err("prio: want 'ptask HANDLE PRIO' or 'pid PID WEIGHT|default'");
		return PTASKCTL_USAGE;
	}
	if (parse_args(argv, &req))
		return PTASKCTL_USAGE;
	ret = ipc_set_prio(&req);
	if (ret) {
		snprintf(what, sizeof(what), "prio: %s %s", argv[1], argv[2]);
		if (ret == -ENOENT)
			ptaskctl_err("%s: no such ptask", what);
		else if (ret == -ESRCH)
			ptaskctl_err("%s: no GPU accounting for that process "
				     "(it owns no GPU ptask)", what);
		else
			ipc_report(what, ret);
		return ret;
	}
	out_begin();
	if (req.target == PTASKD_PRIO_PTASK) {
		out_u64("ptask", req.handle);
		out_u64("priority", req.value);
	} else {
		out_s64("pid", req.pid);
		if (req.value)
			out_u64("weight_override", req.value);
		else
			out_str("weight_override", "default");
	}
	out_end();
	return 0;
}

PTASKCTL_COMMAND(prio, prio_main, "ptask HANDLE PRIO | pid PID WEIGHT|default",
		 "(root) set a ptask's static priority or a process's weight");
