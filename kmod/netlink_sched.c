// SPDX-License-Identifier: GPL-2.0
/*
 * netlink_sched.c - PTSched over generic netlink: GET_SCHED, SET_SCHED,
 * GET_PROC (dump) and SET_PRIO (uapi/ptask.h has the contract).  The
 * same settings as /sys/kernel/ptask/sched and procs/, for ptaskctl.
 *
 * SET_SCHED and SET_PRIO carry GENL_ADMIN_PERM (netlink.c's op table): the
 * genetlink core refuses a sender without CAP_NET_ADMIN before they run.
 */
#include <net/genetlink.h>
#include "ptask_kmod.h"

static int put_sched(struct sk_buff *msg, const struct ptask_sched_params *p)
{
	if (nla_put_u32(msg, PTASK_A_SCHED_BUDGETS, p->budgets) ||
	    nla_put_u32(msg, PTASK_A_SCHED_ALPHA, p->alpha_permille) ||
	    nla_put_u32(msg, PTASK_A_SCHED_POLICY, p->policy) ||
	    nla_put_u32(msg, PTASK_A_SCHED_TIMER_US, p->timer_us) ||
	    nla_put_u32(msg, PTASK_A_SCHED_WINDOW_MS, p->window_ms) ||
	    nla_put_u64_64bit(msg, PTASK_A_SCHED_PERIOD_NS, p->period_ns,
			      PTASK_A_PAD) ||
	    nla_put_u32(msg, PTASK_A_SCHED_ACTIVE, p->active) ||
	    nla_put_u32(msg, PTASK_A_SCHED_HELD, p->held) ||
	    nla_put_u32(msg, PTASK_A_SCHED_N_ACCELS, p->n_accels) ||
	    nla_put_u64_64bit(msg, PTASK_A_SCHED_TOTAL_WEIGHT,
			      p->total_weight, PTASK_A_PAD))
		return -EMSGSIZE;
	return 0;
}

int ptask_nl_get_sched(struct sk_buff *skb, struct genl_info *info)
{
	struct ptask_sched_params p;
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &ptask_genl_family, 0,
				PTASK_CMD_GET_SCHED);
	if (!hdr)
		goto err_free_msg;
	mutex_lock(&ptask_kernel.lock);
	ptask_core_sched_get(&ptask_kernel.ns, &p);
	mutex_unlock(&ptask_kernel.lock);
	if (put_sched(msg, &p))
		goto err_free_msg;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free_msg:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/* One settable attribute: its field and PTASK_SCHED_SET_* bit. */
static void take_u32(struct genl_info *info, int attr, u32 bit, u32 *field,
		     u32 *mask)
{
	if (!info->attrs[attr])
		return;
	*field = nla_get_u32(info->attrs[attr]);
	*mask |= bit;
}

int ptask_nl_set_sched(struct sk_buff *skb, struct genl_info *info)
{
	struct ptask_sched_params p = {};
	u32 mask = 0;
	int err;

	take_u32(info, PTASK_A_SCHED_BUDGETS, PTASK_SCHED_SET_BUDGETS,
		 &p.budgets, &mask);
	take_u32(info, PTASK_A_SCHED_ALPHA, PTASK_SCHED_SET_ALPHA,
		 &p.alpha_permille, &mask);
	take_u32(info, PTASK_A_SCHED_POLICY, PTASK_SCHED_SET_POLICY,
		 &p.policy, &mask);
	take_u32(info, PTASK_A_SCHED_TIMER_US, PTASK_SCHED_SET_TIMER,
		 &p.timer_us, &mask);
	take_u32(info, PTASK_A_SCHED_WINDOW_MS, PTASK_SCHED_SET_WINDOW,
		 &p.window_ms, &mask);
	if (!mask) {
		GENL_SET_ERR_MSG(info, "no PTASK_A_SCHED_* setting given");
		return -EINVAL;
	}
	mutex_lock(&ptask_kernel.lock);
	err = ptask_core_sched_set(&ptask_kernel.ns, mask, &p);
	mutex_unlock(&ptask_kernel.lock);
	if (err)
		GENL_SET_ERR_MSG(info, "a PTASK_A_SCHED_* value is out of range");
	return err;
}

static int put_proc(struct sk_buff *skb, struct netlink_callback *cb,
		    const struct ptask_proc_info *p)
{
	void *hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				cb->nlh->nlmsg_seq, &ptask_genl_family,
				NLM_F_MULTI, PTASK_CMD_GET_PROC);

	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_s32(skb, PTASK_A_PROC_PID, p->pid) ||
	    nla_put_u32(skb, PTASK_A_PROC_UID, p->uid) ||
	    nla_put_s32(skb, PTASK_A_PROC_NICE, p->nice) ||
	    nla_put_u32(skb, PTASK_A_PROC_WEIGHT, p->weight) ||
	    nla_put_u32(skb, PTASK_A_PROC_WEIGHT_OVERRIDE, p->weight_override) ||
	    nla_put_u32(skb, PTASK_A_PROC_ACTIVE, p->active) ||
	    nla_put_u32(skb, PTASK_A_PROC_HELD, p->held) ||
	    nla_put_u32(skb, PTASK_A_PROC_QUEUED, p->queued) ||
	    nla_put_u32(skb, PTASK_A_PROC_RUNNING, p->running) ||
	    nla_put_u32(skb, PTASK_A_PROC_PTASKS, p->ptasks) ||
	    nla_put_s64(skb, PTASK_A_PROC_BUDGET_NS, p->budget_ns, PTASK_A_PAD) ||
	    nla_put_s64(skb, PTASK_A_PROC_BMAX_NS, p->bmax_ns, PTASK_A_PAD) ||
	    nla_put_u64_64bit(skb, PTASK_A_PROC_GPU_NS, p->gpu_ns,
			      PTASK_A_PAD) ||
	    nla_put_u64_64bit(skb, PTASK_A_PROC_AVG_NS, p->avg_ns,
			      PTASK_A_PAD) ||
	    nla_put_u64_64bit(skb, PTASK_A_PROC_INVOCATIONS, p->invocations,
			      PTASK_A_PAD) ||
	    nla_put_u64_64bit(skb, PTASK_A_PROC_HELD_NS, p->held_ns,
			      PTASK_A_PAD)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* cb->args[0]: 0 at the start, then 1 + the last pid sent (as u32). */
int ptask_nl_dump_procs(struct sk_buff *skb, struct netlink_callback *cb)
{
	s32 after = cb->args[0] ? (s32)(u32)(cb->args[0] - 1) : S32_MIN;
	struct ptask_proc_info info;
	struct ptask_proc *proc;

	mutex_lock(&ptask_kernel.lock);
	ptask_core_sched_update(&ptask_kernel.ns);
	for (;;) {
		proc = ptask_core_proc_next(&ptask_kernel.ns, after);
		if (!proc)
			break;
		ptask_core_proc_describe(proc, &info);
		if (put_proc(skb, cb, &info))
			break;
		after = proc->pid;
		cb->args[0] = (u64)(u32)after + 1;
	}
	mutex_unlock(&ptask_kernel.lock);
	return skb->len;
}

int ptask_nl_set_prio(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	bool by_ptask = a[PTASK_A_OBJ_HANDLE] && a[PTASK_A_OBJ_PRIO];
	bool by_pid = a[PTASK_A_PROC_PID] && a[PTASK_A_PROC_WEIGHT];
	int err;

	if (by_ptask == by_pid) {
		GENL_SET_ERR_MSG(info,
				 "give OBJ_HANDLE + OBJ_PRIO or PROC_PID + PROC_WEIGHT");
		return -EINVAL;
	}
	if (by_ptask) {
		u32 handle = nla_get_u32(a[PTASK_A_OBJ_HANDLE]);
		u32 prio = nla_get_u32(a[PTASK_A_OBJ_PRIO]);

		mutex_lock(&ptask_kernel.lock);
		err = ptask_core_ptask_admin_priority(&ptask_kernel.ns, handle, prio);
		mutex_unlock(&ptask_kernel.lock);
	} else {
		s32 pid = nla_get_s32(a[PTASK_A_PROC_PID]);
		u32 weight = nla_get_u32(a[PTASK_A_PROC_WEIGHT]);

		mutex_lock(&ptask_kernel.lock);
		err = ptask_core_proc_set_weight(&ptask_kernel.ns, pid, weight);
		mutex_unlock(&ptask_kernel.lock);
	}
	return err;
}
