// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ipc_admin.c - PTSched's administration for the subcommands, the same
 * calls in both modes: kernel mode sends GET_SCHED, SET_SCHED, GET_PROC,
 * GET_OBJECT and SET_PRIO over generic netlink (uapi/ptask.h), user mode
 * their twins PTASKD_OP_SCHED_GET ... PTASKD_OP_SET_PRIO to ptaskd
 * (uapi/ptaskd.h).  Both give the subcommands the same structs
 * (struct ptaskd_object stands for an object in either mode).  Every
 * function returns 0 or -errno.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netlink/genl/genl.h>
#include "ptaskctl.h"

bool ipc_kernel_mode(void)
{
	static int cached = -1;

	if (ptaskctl_opts.mode == PTASKCTL_MODE_KERNEL)
		return true;
	if (ptaskctl_opts.mode == PTASKCTL_MODE_USER)
		return false;
	if (cached < 0)
		cached = !ipc_kernel_probe();
	return cached;
}

void ipc_report(const char *what, int err)
{
	const char *hint = "";

	if (err == -ENOPKG) {
		ptaskctl_err("%s: no \"ptask\" netlink family (is ptask.ko loaded?)",
			     what);
		return;
	}
	if (err == -EPERM || err == -EACCES)
		hint = ipc_kernel_mode() ? " (needs CAP_NET_ADMIN)" : " (root only)";
	else if (err == -ECONNREFUSED)
		hint = " (is ptaskd running?)";
	ptaskctl_err("%s: %s%s", what, strerror(-err), hint);
}

/* Growing arrays of records, for listings. */
struct rec_list {
	void *recs;
	size_t n, cap, size;
};

static void *rec_add(struct rec_list *l)
{
	void *p;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;

		p = realloc(l->recs, cap * l->size);
		if (!p)
			return NULL;
		l->recs = p;
		l->cap = cap;
	}
	p = (char *)l->recs + l->n++ * l->size;
	memset(p, 0, l->size);
	return p;
}

/* --- kernel mode --------------------------------------------------------------- */

static uint32_t get_u32(struct nlattr **tb, int attr)
{
	return tb[attr] ? nla_get_u32(tb[attr]) : 0;
}

static uint64_t get_u64(struct nlattr **tb, int attr)
{
	return tb[attr] ? nla_get_u64(tb[attr]) : 0;
}

static int parse_sched(struct nlattr **tb, void *arg)
{
	struct ptask_sched_params *p = arg;

	p->budgets = get_u32(tb, PTASK_A_SCHED_BUDGETS);
	p->alpha_permille = get_u32(tb, PTASK_A_SCHED_ALPHA);
	p->policy = get_u32(tb, PTASK_A_SCHED_POLICY);
	p->timer_us = get_u32(tb, PTASK_A_SCHED_TIMER_US);
	p->window_ms = get_u32(tb, PTASK_A_SCHED_WINDOW_MS);
	p->period_ns = get_u64(tb, PTASK_A_SCHED_PERIOD_NS);
	p->active = get_u32(tb, PTASK_A_SCHED_ACTIVE);
	p->held = get_u32(tb, PTASK_A_SCHED_HELD);
	p->n_accels = get_u32(tb, PTASK_A_SCHED_N_ACCELS);
	p->total_weight = get_u64(tb, PTASK_A_SCHED_TOTAL_WEIGHT);
	return 0;
}

struct sched_set_args {
	uint32_t mask;
	const struct ptask_sched_params *in;
};

static int put_sched(struct nl_msg *msg, const void *arg)
{
	const struct sched_set_args *a = arg;
	const struct ptask_sched_params *in = a->in;

	if (((a->mask & PTASK_SCHED_SET_BUDGETS) &&
	     nla_put_u32(msg, PTASK_A_SCHED_BUDGETS, in->budgets)) ||
	    ((a->mask & PTASK_SCHED_SET_ALPHA) &&
	     nla_put_u32(msg, PTASK_A_SCHED_ALPHA, in->alpha_permille)) ||
	    ((a->mask & PTASK_SCHED_SET_POLICY) &&
	     nla_put_u32(msg, PTASK_A_SCHED_POLICY, in->policy)) ||
	    ((a->mask & PTASK_SCHED_SET_TIMER) &&
	     nla_put_u32(msg, PTASK_A_SCHED_TIMER_US, in->timer_us)) ||
	    ((a->mask & PTASK_SCHED_SET_WINDOW) &&
	     nla_put_u32(msg, PTASK_A_SCHED_WINDOW_MS, in->window_ms)))
		return -EMSGSIZE;
	return 0;
}

static int parse_proc(struct nlattr **tb, void *arg)
{
	struct ptask_proc_info *p = rec_add(arg);

	if (!p)
		return -ENOMEM;
	p->pid = (int32_t)get_u32(tb, PTASK_A_PROC_PID);
	p->uid = get_u32(tb, PTASK_A_PROC_UID);
	p->nice = (int32_t)get_u32(tb, PTASK_A_PROC_NICE);
	p->weight = get_u32(tb, PTASK_A_PROC_WEIGHT);
	p->weight_override = get_u32(tb, PTASK_A_PROC_WEIGHT_OVERRIDE);
	p->active = get_u32(tb, PTASK_A_PROC_ACTIVE);
	p->held = get_u32(tb, PTASK_A_PROC_HELD);
	p->queued = get_u32(tb, PTASK_A_PROC_QUEUED);
	p->running = get_u32(tb, PTASK_A_PROC_RUNNING);
	p->ptasks = get_u32(tb, PTASK_A_PROC_PTASKS);
	p->budget_ns = (int64_t)get_u64(tb, PTASK_A_PROC_BUDGET_NS);
	p->bmax_ns = (int64_t)get_u64(tb, PTASK_A_PROC_BMAX_NS);
	p->gpu_ns = get_u64(tb, PTASK_A_PROC_GPU_NS);
	p->avg_ns = get_u64(tb, PTASK_A_PROC_AVG_NS);
	p->invocations = get_u64(tb, PTASK_A_PROC_INVOCATIONS);
	p->held_ns = get_u64(tb, PTASK_A_PROC_HELD_NS);
	return 0;
}

static int parse_object(struct nlattr **tb, void *arg)
{
	struct ptaskd_object *o = rec_add(arg);

	if (!o)
		return -ENOMEM;
	o->type = get_u32(tb, PTASK_A_OBJ_TYPE);
	o->handle = get_u32(tb, PTASK_A_OBJ_HANDLE);
	o->graph = get_u32(tb, PTASK_A_OBJ_GRAPH);
	o->state = get_u32(tb, PTASK_A_OBJ_STATE);
	o->owner_uid = get_u32(tb, PTASK_A_OBJ_OWNER_UID);
	o->owner_pid = (int32_t)get_u32(tb, PTASK_A_OBJ_OWNER_PID);
	o->kind = get_u32(tb, PTASK_A_OBJ_KIND);
	o->prio = get_u32(tb, PTASK_A_OBJ_PRIO);
	o->proxy_nice = (int32_t)get_u32(tb, PTASK_A_OBJ_PROXY_NICE);
	o->accel = get_u32(tb, PTASK_A_OBJ_ACCEL);
	o->gpu_ns = get_u64(tb, PTASK_A_OBJ_GPU_NS);
	o->invocations = get_u64(tb, PTASK_A_OBJ_INVOCATIONS);
	o->failures = get_u64(tb, PTASK_A_OBJ_FAILURES);
	o->last_error = (int32_t)get_u32(tb, PTASK_A_OBJ_LAST_ERROR);
	o->error_code = get_u32(tb, PTASK_A_OBJ_ERROR_CODE);
	if (tb[PTASK_A_OBJ_NAME])
		nla_strlcpy(o->name, tb[PTASK_A_OBJ_NAME], sizeof(o->name));
	return 0;
}

static int put_prio(struct nl_msg *msg, const void *arg)
{
	const struct ptaskd_set_prio *r = arg;

	if (r->target == PTASKD_PRIO_PTASK)
		return nla_put_u32(msg, PTASK_A_OBJ_HANDLE, r->handle) ||
		       nla_put_u32(msg, PTASK_A_OBJ_PRIO, r->value) ?
		       -EMSGSIZE : 0;
	return nla_put_s32(msg, PTASK_A_PROC_PID, r->pid) ||
	       nla_put_u32(msg, PTASK_A_PROC_WEIGHT, r->value) ? -EMSGSIZE : 0;
}

/* --- user mode ----------------------------------------------------------------- */

/* A connection past HELLO; a missing socket reads as "nobody listens". */
static int user_open(void)
{
	int fd = ipc_user_open(ptaskctl_opts.socket, NULL);

	return fd == -ENOENT ? -ECONNREFUSED : fd;
}

/* One fixed-size request and reply on a fresh connection. */
static int user_call(uint32_t op, const void *req, uint32_t req_len,
		     void *rep, uint32_t rep_len)
{
	int fd, ret;

	fd = user_open();
	if (fd < 0)
		return fd;
	ret = ipc_user_call(fd, op, req, req_len, rep, rep_len, rep_len);
	close(fd);
	return ret;
}

/*
 * A listing: requests from @cursor 0 until an empty reply; @next gives
 * the cursor after a reply from its last record.
 */
static int user_list(uint32_t op, struct rec_list *l,
		     uint64_t (*next)(const void *last))
{
	struct ptaskd_list req = { .cursor = 0 };
	uint64_t cursor;
	uint32_t len, i;
	void *rep;
	int fd, ret;

	fd = user_open();
	if (fd < 0)
		return fd;
	for (;;) {
		ret = ipc_user_call_alloc(fd, op, &req, sizeof(req), &rep, &len);
		if (ret || !len)
			break;
		if (len % l->size) {
			ret = -EPROTO;
			free(rep);
			break;
		}
		for (i = 0; i < len / l->size && !ret; i++) {
			void *r = rec_add(l);

			if (r)
				memcpy(r, (char *)rep + i * l->size, l->size);
			else
				ret = -ENOMEM;
		}
		cursor = next((char *)rep + len - l->size);
		free(rep);
		if (ret)
			break;
		/* A daemon that does not move on would keep us here forever. */
		if (cursor <= req.cursor) {
			ret = -EPROTO;
			break;
		}
		req.cursor = cursor;
	}
	close(fd);
	return ret;
}

static uint64_t next_pid(const void *last)
{
	return (uint64_t)((const struct ptask_proc_info *)last)->pid;
}

static uint64_t next_handle(const void *last)
{
	return (uint64_t)((const struct ptaskd_object *)last)->handle + 1;
}

/* --- both ---------------------------------------------------------------------- */

/* pc_genl_call()'s "no family" is -ENOENT; commands use it for "no such". */
static int nl_call(uint8_t cmd, bool dump, pc_genl_put_fn put,
		   const void *put_arg, pc_genl_parse_fn parse, void *arg)
{
	struct pc_genl_req req = {
		.cmd = cmd, .dump = dump,
		.put = put, .put_arg = put_arg,
		.parse = parse, .parse_arg = arg,
	};
	int ret = ipc_kernel_probe();

	if (ret)
		return ret == -ENOENT ? -ENOPKG : ret;
	return pc_genl_call(&req);
}

int ipc_sched_get(struct ptask_sched_params *p)
{
	memset(p, 0, sizeof(*p));
	if (ipc_kernel_mode())
		return nl_call(PTASK_CMD_GET_SCHED, false, NULL, NULL,
			       parse_sched, p);
	return user_call(PTASKD_OP_SCHED_GET, NULL, 0, p, sizeof(*p));
}

int ipc_sched_set(uint32_t mask, const struct ptask_sched_params *in,
		  struct ptask_sched_params *after)
{
	struct sched_set_args a = { .mask = mask, .in = in };
	struct ptaskd_sched_set req = { .mask = mask, .params = *in };
	struct ptask_sched_params ignored;
	int ret;

	if (!after)
		after = &ignored;
	if (!ipc_kernel_mode())
		return user_call(PTASKD_OP_SCHED_SET, &req, sizeof(req), after,
				 sizeof(*after));
	ret = nl_call(PTASK_CMD_SET_SCHED, false, put_sched, &a, NULL, NULL);
	return ret ? ret : ipc_sched_get(after);
}

int ipc_procs(struct ptask_proc_info **recs, size_t *n)
{
	struct rec_list l = { .size = sizeof(**recs) };
	int ret;

	if (ipc_kernel_mode())
		ret = nl_call(PTASK_CMD_GET_PROC, true, NULL, NULL, parse_proc, &l);
	else
		ret = user_list(PTASKD_OP_PROCS, &l, next_pid);
	if (ret) {
		free(l.recs);
		return ret;
	}
	*recs = l.recs;
	*n = l.n;
	return 0;
}

int ipc_objects(struct ptaskd_object **recs, size_t *n)
{
	struct rec_list l = { .size = sizeof(**recs) };
	int ret;

	if (ipc_kernel_mode())
		ret = nl_call(PTASK_CMD_GET_OBJECT, true, NULL, NULL,
			      parse_object, &l);
	else
		ret = user_list(PTASKD_OP_OBJECTS, &l, next_handle);
	if (ret) {
		free(l.recs);
		return ret;
	}
	*recs = l.recs;
	*n = l.n;
	return 0;
}

int ipc_set_prio(const struct ptaskd_set_prio *req)
{
	if (ipc_kernel_mode())
		return nl_call(PTASK_CMD_SET_PRIO, false, put_prio, req, NULL,
			       NULL);
	return user_call(PTASKD_OP_SET_PRIO, req, sizeof(*req), NULL, 0);
}
