// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * netlink.c - executor registration over the "ptask" generic-netlink
 * family, through the common client (common/genl.h).  See netlink.h.
 */
#include <errno.h>
#include <string.h>

#include <netlink/attr.h>

#include "common/genl.h"
#include "daemon/kernel/netlink.h"

/* What put_register() adds: the executor's fd and, if any, its devices. */
struct exec_args {
	int exec_fd;
	const struct pd_backend *be;
	int64_t uid;		/* one uid's executor, or -1 */
};

/* One PTASK_A_ACCEL nest for device @i of @be. */
static int put_accel(struct nl_msg *msg, const struct pd_backend *be,
		     uint32_t i)
{
	const struct pd_device_info *d = &be->info[i];
	char name[PTASK_NAME_MAX];
	struct nlattr *accel;
	size_t len;

	/*
	 * The kernel takes at most PTASK_NAME_MAX - 1 characters; a backend
	 * may fill all of d->name without a NUL.
	 */
	len = strnlen(d->name, sizeof(d->name));
	if (len > sizeof(name) - 1)
		len = sizeof(name) - 1;
	memcpy(name, d->name, len);
	name[len] = '\0';
	accel = nla_nest_start(msg, PTASK_A_ACCEL | NLA_F_NESTED);
	if (!accel ||
	    nla_put_u32(msg, PTASK_ACCEL_A_INDEX, i) ||
	    nla_put_string(msg, PTASK_ACCEL_A_NAME, name) ||
	    nla_put_u32(msg, PTASK_ACCEL_A_KIND, d->kind) ||
	    nla_put_u64(msg, PTASK_ACCEL_A_MEMORY, d->memory) ||
	    nla_put_u32(msg, PTASK_ACCEL_A_CORES, d->cores) ||
	    nla_put_u32(msg, PTASK_ACCEL_A_CORE_KHZ, d->core_khz) ||
	    nla_put_u32(msg, PTASK_ACCEL_A_MEM_KHZ, d->mem_khz))
		return -EMSGSIZE;
	nla_nest_end(msg, accel);
	return 0;
}

static int put_accels(struct nl_msg *msg, const struct pd_backend *be)
{
	struct nlattr *accels;
	uint32_t i;
	int r;

	if (be->ndev > PD_MAX_DEVICES)
		return -EINVAL;
	/* Strict validation in the kernel wants NLA_F_NESTED on nests. */
	accels = nla_nest_start(msg, PTASK_A_ACCELS | NLA_F_NESTED);
	if (!accels)
		return -EMSGSIZE;
	for (i = 0; i < be->ndev; i++) {
		r = put_accel(msg, be, i);
		if (r)
			return r;
	}
	nla_nest_end(msg, accels);
	return 0;
}

static int put_exec(struct nl_msg *msg, const void *arg)
{
	const struct exec_args *a = arg;

	if (nla_put_u32(msg, PTASK_A_EXEC_FD, (uint32_t)a->exec_fd) ||
	    (a->uid >= 0 &&
	     nla_put_u32(msg, PTASK_A_OBJ_OWNER_UID, (uint32_t)a->uid)))
		return -EMSGSIZE;
	return a->be ? put_accels(msg, a->be) : 0;
}

int pd_nl_exec_register(int exec_fd, const struct pd_backend *be,
			int64_t uid)
{
	struct exec_args a = { .exec_fd = exec_fd, .be = be, .uid = uid };
	struct pc_genl_req req = {
		.cmd = PTASK_CMD_EXEC_REGISTER,
		.put = put_exec,
		.put_arg = &a,
	};

	if (exec_fd < 0 || !be)
		return -EINVAL;
	return pc_genl_call(&req);
}

int pd_nl_exec_unregister(int exec_fd)
{
	struct exec_args a = { .exec_fd = exec_fd, .uid = -1 };
	struct pc_genl_req req = {
		.cmd = PTASK_CMD_EXEC_UNREGISTER,
		.put = put_exec,
		.put_arg = &a,
	};

	if (exec_fd < 0)
		return -EINVAL;
	return pc_genl_call(&req);
}

struct owners_walk {
	void (*seen)(void *seen_arg, uint32_t uid, int32_t pid);
	void *seen_arg;
};

/* One GET_OBJECT reply: a ptask's owner is seen now. */
static int parse_owner(struct nlattr **tb, void *arg)
{
	struct owners_walk *w = arg;

	if (tb[PTASK_A_OBJ_TYPE] && tb[PTASK_A_OBJ_OWNER_UID] &&
	    nla_get_u32(tb[PTASK_A_OBJ_TYPE]) == PTASK_OBJ_PTASK)
		w->seen(w->seen_arg, nla_get_u32(tb[PTASK_A_OBJ_OWNER_UID]),
			tb[PTASK_A_OBJ_OWNER_PID] ?
			(int32_t)nla_get_u32(tb[PTASK_A_OBJ_OWNER_PID]) : -1);
	return 0;
}

int pd_nl_ptask_owners(void *arg,
		       void (*seen)(void *seen_arg, uint32_t uid, int32_t pid),
		       void *seen_arg)
{
	struct owners_walk w = { .seen = seen, .seen_arg = seen_arg };
	struct pc_genl_req req = {
		.cmd = PTASK_CMD_GET_OBJECT, .dump = true,
		.parse = parse_owner, .parse_arg = &w,
	};

	(void)arg;
	return pc_genl_call(&req);
}
