// SPDX-License-Identifier: GPL-2.0
/*
 * netlink.c - the "ptask" generic-netlink family: executor registration
 * with its accelerator inventory, info and object listing for admin
 * tools, and the events multicast group.  The contract is the
 * generic-netlink part of uapi/ptask.h.
 */
#include <linux/file.h>
#include <linux/capability.h>
#include <net/genetlink.h>
#include "ptask_kmod.h"
#include "compat.h"

static const struct nla_policy accel_policy[PTASK_ACCEL_A_MAX + 1] = {
	[PTASK_ACCEL_A_INDEX] = { .type = NLA_U32 },
	[PTASK_ACCEL_A_NAME] = { .type = NLA_NUL_STRING,
				 .len = PTASK_NAME_MAX - 1 },
	[PTASK_ACCEL_A_KIND] = NLA_POLICY_MAX(NLA_U32,
					      __PTASK_ACCEL_KIND_MAX - 1),
	[PTASK_ACCEL_A_MEMORY] = { .type = NLA_U64 },
	[PTASK_ACCEL_A_CORES] = { .type = NLA_U32 },
	[PTASK_ACCEL_A_CORE_KHZ] = { .type = NLA_U32 },
	[PTASK_ACCEL_A_MEM_KHZ] = { .type = NLA_U32 },
	[PTASK_ACCEL_A_PAD] = { .type = NLA_UNSPEC },
};

static const struct nla_policy ptask_policy[PTASK_A_MAX + 1] = {
	[PTASK_A_EXEC_FD] = { .type = NLA_U32 },
	[PTASK_A_ACCELS] = NLA_POLICY_NESTED_ARRAY(accel_policy),
	[PTASK_A_ACCEL] = NLA_POLICY_NESTED(accel_policy),
	[PTASK_A_ABI_VERSION] = { .type = NLA_U32 },
	[PTASK_A_EXECUTORS] = { .type = NLA_U32 },
	[PTASK_A_COUNTS] = { .type = NLA_NESTED },
	[PTASK_A_OBJ_TYPE] = NLA_POLICY_MAX(NLA_U32, __PTASK_OBJ_MAX - 1),
	[PTASK_A_OBJ_HANDLE] = { .type = NLA_U32 },
	[PTASK_A_OBJ_GRAPH] = { .type = NLA_U32 },
	[PTASK_A_OBJ_NAME] = { .type = NLA_NUL_STRING,
			       .len = PTASK_NAME_MAX - 1 },
	[PTASK_A_OBJ_STATE] = { .type = NLA_U32 },
	[PTASK_A_OBJ_OWNER_UID] = { .type = NLA_U32 },
	[PTASK_A_OBJ_OWNER_PID] = { .type = NLA_U32 },
	[PTASK_A_EVENT] = { .type = NLA_U32 },
	[PTASK_A_PAD] = { .type = NLA_UNSPEC },
	[PTASK_A_OBJ_KIND] = { .type = NLA_U32 },
	[PTASK_A_OBJ_PRIO] = { .type = NLA_U32 },
	[PTASK_A_OBJ_PROXY_NICE] = { .type = NLA_S32 },
	[PTASK_A_OBJ_ACCEL] = { .type = NLA_U32 },
	[PTASK_A_OBJ_GPU_NS] = { .type = NLA_U64 },
	[PTASK_A_OBJ_INVOCATIONS] = { .type = NLA_U64 },
	[PTASK_A_OBJ_FAILURES] = { .type = NLA_U64 },
	[PTASK_A_OBJ_LAST_ERROR] = { .type = NLA_S32 },
	[PTASK_A_OBJ_ERROR_CODE] = { .type = NLA_U32 },
	[PTASK_A_SCHED_BUDGETS] = { .type = NLA_U32 },
	[PTASK_A_SCHED_ALPHA] = { .type = NLA_U32 },
	[PTASK_A_SCHED_POLICY] = { .type = NLA_U32 },
	[PTASK_A_SCHED_TIMER_US] = { .type = NLA_U32 },
	[PTASK_A_SCHED_WINDOW_MS] = { .type = NLA_U32 },
	[PTASK_A_SCHED_PERIOD_NS] = { .type = NLA_U64 },
	[PTASK_A_SCHED_ACTIVE] = { .type = NLA_U32 },
	[PTASK_A_SCHED_HELD] = { .type = NLA_U32 },
	[PTASK_A_SCHED_N_ACCELS] = { .type = NLA_U32 },
	[PTASK_A_SCHED_TOTAL_WEIGHT] = { .type = NLA_U64 },
	[PTASK_A_PROC_PID] = { .type = NLA_S32 },
	[PTASK_A_PROC_UID] = { .type = NLA_U32 },
	[PTASK_A_PROC_NICE] = { .type = NLA_S32 },
	[PTASK_A_PROC_WEIGHT] = { .type = NLA_U32 },
	[PTASK_A_PROC_WEIGHT_OVERRIDE] = { .type = NLA_U32 },
	[PTASK_A_PROC_ACTIVE] = { .type = NLA_U32 },
	[PTASK_A_PROC_HELD] = { .type = NLA_U32 },
	[PTASK_A_PROC_QUEUED] = { .type = NLA_U32 },
	[PTASK_A_PROC_RUNNING] = { .type = NLA_U32 },
	[PTASK_A_PROC_PTASKS] = { .type = NLA_U32 },
	[PTASK_A_PROC_BUDGET_NS] = { .type = NLA_S64 },
	[PTASK_A_PROC_BMAX_NS] = { .type = NLA_S64 },
	[PTASK_A_PROC_GPU_NS] = { .type = NLA_U64 },
	[PTASK_A_PROC_AVG_NS] = { .type = NLA_U64 },
	[PTASK_A_PROC_INVOCATIONS] = { .type = NLA_U64 },
	[PTASK_A_PROC_HELD_NS] = { .type = NLA_U64 },
};

/*
 * Resolve PTASK_A_EXEC_FD in the sender's file table: doit runs in the
 * sending task's context, inside its sendmsg().
 */
static int exec_file(struct genl_info *info, struct fd *f)
{
	if (!info->attrs[PTASK_A_EXEC_FD]) {
		GENL_SET_ERR_MSG(info, "missing PTASK_A_EXEC_FD");
		return -EINVAL;
	}
	*f = fdget(nla_get_u32(info->attrs[PTASK_A_EXEC_FD]));
	if (!fd_file(*f))
		return -EBADF;
	if (fd_file(*f)->f_op != &ptask_fops) {
		fdput(*f);
		GENL_SET_ERR_MSG(info, "PTASK_A_EXEC_FD is not a /dev/ptask fd");
		return -EBADF;
	}
	return 0;
}

static int count_accels(struct genl_info *info)
{
	struct nlattr *accel;
	int rem, n = 0;

	if (!info->attrs[PTASK_A_ACCELS])
		return 0;
	nla_for_each_nested(accel, info->attrs[PTASK_A_ACCELS], rem)
		n++;
	if (n > PTASK_MAX_ACCELS) {
		GENL_SET_ERR_MSG(info, "too many accelerators");
		return -E2BIG;
	}
	return n;
}

/*
 * GENL_ADMIN_PERM has already asked for CAP_NET_ADMIN.  An executor sees
 * the code and the datablocks of every client of every uid, so it also
 * needs CAP_SYS_ADMIN, as before the flag (and as sysfs writes do).  A
 * doit's error always reaches the sender as the request's ack.
 */
static int cmd_exec_register(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *uid = info->attrs[PTASK_A_OBJ_OWNER_UID];
	struct ptask_file *pf;
	struct fd f;
	int n, err;

	if (!netlink_capable(skb, CAP_SYS_ADMIN)) {
		GENL_SET_ERR_MSG(info, "an executor needs CAP_SYS_ADMIN");
		return -EPERM;
	}
	n = count_accels(info);
	if (n < 0)
		return n;
	err = exec_file(info, &f);
	if (err)
		return err;
	pf = fd_file(f)->private_data;
	mutex_lock(&ptask_kernel.lock);
	err = ptask_core_exec_register(pf->client, n);
	/* Another process: it hears of datablock deaths by EXEC_FORGOTTEN. */
	if (!err) {
		err = ptask_core_exec_forgotten_enable(pf->client);
		/* one uid's executor (core/invocation.c, "Executors per uid") */
		if (!err && uid)
			err = ptask_core_exec_set_uid(pf->client,
						      nla_get_u32(uid));
		if (err)
			ptask_core_exec_unregister(pf->client);
	}
	mutex_unlock(&ptask_kernel.lock);
	fdput(f);
	return err;
}

static int cmd_exec_unregister(struct sk_buff *skb, struct genl_info *info)
{
	struct ptask_file *pf;
	struct fd f;
	int err;

	err = exec_file(info, &f);
	if (err)
		return err;
	pf = fd_file(f)->private_data;
	mutex_lock(&ptask_kernel.lock);
	err = ptask_core_exec_unregister(pf->client);
	mutex_unlock(&ptask_kernel.lock);
	fdput(f);
	return err;
}

static int put_counts(struct sk_buff *msg)
{
	struct nlattr *nest = nla_nest_start(msg, PTASK_A_COUNTS);
	int i;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < __PTASK_COUNT_MAX; i++) {
		u64 v = i == PTASK_COUNT_BUFFERS ?
			atomic64_read(&ptask_kernel.buffers) :
			ptask_kernel.ns.counts[i];

		if (nla_put_u64_64bit(msg, i + 1, v, PTASK_A_PAD))
			return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

static int cmd_get_info(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;
	int err = -EMSGSIZE;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &ptask_genl_family, 0,
				PTASK_CMD_GET_INFO);
	if (!hdr)
		goto err_free_msg;
	mutex_lock(&ptask_kernel.lock);
	if (nla_put_u32(msg, PTASK_A_ABI_VERSION, PTASK_ABI_VERSION) ||
	    nla_put_u32(msg, PTASK_A_EXECUTORS, ptask_kernel.ns.executors) ||
	    put_counts(msg)) {
		mutex_unlock(&ptask_kernel.lock);
		goto err_free_msg;
	}
	mutex_unlock(&ptask_kernel.lock);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free_msg:
	nlmsg_free(msg);
	return err;
}

static int put_object(struct sk_buff *skb, struct netlink_callback *cb,
		      const struct ptask_obj_info *o)
{
	void *hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				cb->nlh->nlmsg_seq, &ptask_genl_family,
				NLM_F_MULTI, PTASK_CMD_GET_OBJECT);

	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, PTASK_A_OBJ_TYPE, o->type) ||
	    nla_put_u32(skb, PTASK_A_OBJ_HANDLE, o->handle) ||
	    nla_put_u32(skb, PTASK_A_OBJ_GRAPH, o->graph) ||
	    nla_put_string(skb, PTASK_A_OBJ_NAME, o->name) ||
	    nla_put_u32(skb, PTASK_A_OBJ_STATE, o->state) ||
	    nla_put_u32(skb, PTASK_A_OBJ_OWNER_UID, o->owner_uid) ||
	    nla_put_u32(skb, PTASK_A_OBJ_OWNER_PID, o->owner_pid))
		goto err_cancel;
	if (o->type == PTASK_OBJ_PTASK &&
	    (nla_put_u32(skb, PTASK_A_OBJ_KIND, o->kind) ||
	     nla_put_u32(skb, PTASK_A_OBJ_PRIO, o->prio) ||
	     nla_put_s32(skb, PTASK_A_OBJ_PROXY_NICE, o->proxy_nice) ||
	     nla_put_u32(skb, PTASK_A_OBJ_ACCEL, o->accel) ||
	     nla_put_u64_64bit(skb, PTASK_A_OBJ_GPU_NS, o->gpu_ns,
			       PTASK_A_PAD) ||
	     nla_put_u64_64bit(skb, PTASK_A_OBJ_INVOCATIONS, o->invocations,
			       PTASK_A_PAD) ||
	     nla_put_u64_64bit(skb, PTASK_A_OBJ_FAILURES, o->failures,
			       PTASK_A_PAD) ||
	     nla_put_s32(skb, PTASK_A_OBJ_LAST_ERROR, o->last_error) ||
	     nla_put_u32(skb, PTASK_A_OBJ_ERROR_CODE, o->error_code)))
		goto err_cancel;
	genlmsg_end(skb, hdr);
	return 0;

err_cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* cb->args[0]: the handle to resume from (ptask_core_ns_next()'s cursor). */
static int dump_objects(struct sk_buff *skb, struct netlink_callback *cb)
{
	u64 cursor = cb->args[0], before;
	struct ptask_obj_info info;
	struct ptask_obj *o;

	mutex_lock(&ptask_kernel.lock);
	for (;;) {
		before = cursor;
		o = ptask_core_ns_next(&ptask_kernel.ns, &cursor);
		if (!o)
			break;
		ptask_core_obj_describe(o, &info);
		if (put_object(skb, cb, &info)) {
			cursor = before;
			break;
		}
	}
	mutex_unlock(&ptask_kernel.lock);
	cb->args[0] = cursor;
	return skb->len;
}

/**
 * ptask_netlink_event() - multicast an event to PTASK_GENL_MCGRP_EVENTS
 * @event: enum ptask_event
 * @obj_type: enum ptask_object_type
 * @handle: the object
 *
 * Context: process context; ptask_kernel.lock may be held.  Events are
 * best effort: with no listener, or no memory, nothing is sent.
 */
void ptask_netlink_event(u32 event, u32 obj_type, u32 handle)
{
	struct sk_buff *msg;
	void *hdr;

	if (!genl_has_listeners(&ptask_genl_family, &init_net, 0))
		return;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &ptask_genl_family, 0, PTASK_CMD_EVENT);
	if (!hdr ||
	    nla_put_u32(msg, PTASK_A_EVENT, event) ||
	    nla_put_u32(msg, PTASK_A_OBJ_TYPE, obj_type) ||
	    nla_put_u32(msg, PTASK_A_OBJ_HANDLE, handle)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&ptask_genl_family, msg, 0, 0, GFP_KERNEL);
}

/*
 * Permissions are flags, checked by the genetlink core before a doit runs
 * or a dump starts, so a refusal is the request's NLMSG_ERROR ack.  (A
 * dumpit that returns -EPERM itself only puts the error in the payload of
 * NLMSG_DONE, which libnl and other clients take for a normal end: the
 * refusal was lost.)
 *
 * GENL_ADMIN_PERM (CAP_NET_ADMIN in the initial user namespace) on every
 * op that changes host-wide state or lists every user's objects.  Not
 * GENL_UNS_ADMIN_PERM: the family is not netnsok (it lives in init_net
 * only), and the executors, budgets and priorities it sets are the host's,
 * not a network namespace's, so a namespace's own admin must not pass.
 * GET_INFO, GET_SCHED and GET_PROC are for everyone, as the 0444 sysfs
 * files that show the same.  EXEC_REGISTER also needs CAP_SYS_ADMIN
 * (cmd_exec_register()).
 *
 * resv_start_op stays 0 (a new family): every command has its header's
 * reserved bytes and flags checked and its attributes validated against
 * ptask_policy.
 */
static const struct genl_small_ops ptask_genl_ops[] = {
	{
		.cmd = PTASK_CMD_EXEC_REGISTER,
		.flags = GENL_ADMIN_PERM,
		.doit = cmd_exec_register,
	},
	{
		.cmd = PTASK_CMD_EXEC_UNREGISTER,
		.flags = GENL_ADMIN_PERM,
		.doit = cmd_exec_unregister,
	},
	{
		.cmd = PTASK_CMD_GET_INFO,
		.doit = cmd_get_info,
	},
	{
		.cmd = PTASK_CMD_GET_OBJECT,
		.flags = GENL_ADMIN_PERM,
		.dumpit = dump_objects,
	},
	{
		.cmd = PTASK_CMD_GET_SCHED,
		.doit = ptask_nl_get_sched,
	},
	{
		.cmd = PTASK_CMD_SET_SCHED,
		.flags = GENL_ADMIN_PERM,
		.doit = ptask_nl_set_sched,
	},
	{
		.cmd = PTASK_CMD_GET_PROC,
		.dumpit = ptask_nl_dump_procs,
	},
	{
		.cmd = PTASK_CMD_SET_PRIO,
		.flags = GENL_ADMIN_PERM,
		.doit = ptask_nl_set_prio,
	},
};

/*
 * Events name other users' objects (a private graph's CREATED, its
 * failure): joining the group needs CAP_SYS_ADMIN, as the family's other
 * admin calls do.  Open to anyone, an unprivileged listener learnt of
 * every uid's graphs (issue 13, the outside attack).  The flag is there
 * since 6.7 and in the 6.1 and 6.6 stable kernels that took the fix
 * adding it; where it is not, the group stays open and the module says
 * so at load.
 */
static const struct genl_multicast_group ptask_mcgrps[] = {
#ifdef GENL_MCAST_CAP_SYS_ADMIN
	{ .name = PTASK_GENL_MCGRP_EVENTS, .flags = GENL_MCAST_CAP_SYS_ADMIN },
#else
	{ .name = PTASK_GENL_MCGRP_EVENTS },
#endif
};

struct genl_family ptask_genl_family __ro_after_init = {
	.name = PTASK_GENL_NAME,
	.version = PTASK_GENL_VERSION,
	.maxattr = PTASK_A_MAX,
	.policy = ptask_policy,
	.module = THIS_MODULE,
	.small_ops = ptask_genl_ops,
	.n_small_ops = ARRAY_SIZE(ptask_genl_ops),
	.mcgrps = ptask_mcgrps,
	.n_mcgrps = ARRAY_SIZE(ptask_mcgrps),
};

int ptask_netlink_init(void)
{
#ifndef GENL_MCAST_CAP_SYS_ADMIN
	pr_warn("ptask: this kernel cannot restrict the events group: any user may listen\n");
#endif
	return genl_register_family(&ptask_genl_family);
}

void ptask_netlink_exit(void)
{
	genl_unregister_family(&ptask_genl_family);
}
