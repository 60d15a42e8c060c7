// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ns_admin.c - see ns_admin.h.
 *
 * The core keeps one PTSched policy (struct ptask_sched_params.policy)
 * and hands it to the engine with every take; PTASKD_OP_SET_POLICY, the
 * older op, sets that same field, so `ptaskctl policy` and `ptaskctl
 * sched policy` can never disagree.
 *
 * Listings hold the namespace lock while they fill one reply (at most
 * PTASKD_MSG_MAX bytes), as a netlink dump holds the module's lock for
 * one skb; between replies the cursor carries the place, so objects that
 * come and go in between are neither repeated nor lost if they lived
 * throughout.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/user/ns_admin.h"
#include "daemon/user/ns_user_priv.h"

/* Records start in a buffer this large and double up to PTASKD_MSG_MAX. */
#define LIST_FIRST_RECORDS	64

static const char *const policy_names[__PTASK_POLICY_MAX] = PTASK_POLICY_NAMES;

bool pd_admin_op(uint32_t op)
{
	return op == PTASKD_OP_SET_POLICY || op == PTASKD_OP_SCHED_GET ||
	       op == PTASKD_OP_SCHED_SET || op == PTASKD_OP_PROCS ||
	       op == PTASKD_OP_OBJECTS || op == PTASKD_OP_SET_PRIO;
}

static size_t request_size(uint32_t op)
{
	switch (op) {
	case PTASKD_OP_SET_POLICY:
		return sizeof(struct ptaskd_set_policy);
	case PTASKD_OP_SCHED_SET:
		return sizeof(struct ptaskd_sched_set);
	case PTASKD_OP_PROCS:
	case PTASKD_OP_OBJECTS:
		return sizeof(struct ptaskd_list);
	case PTASKD_OP_SET_PRIO:
		return sizeof(struct ptaskd_set_prio);
	default:	/* PTASKD_OP_SCHED_GET */
		return 0;
	}
}

static int check_set_prio(const struct ptaskd_set_prio *p)
{
	if (p->target == PTASKD_PRIO_PTASK)
		return p->pid ? -EINVAL : 0;
	if (p->target == PTASKD_PRIO_PID)
		return p->handle ? -EINVAL : 0;
	return -EINVAL;
}

int pd_admin_parse(uint32_t op, const void *payload, size_t len,
		   struct pd_admin_req *req)
{
	memset(req, 0, sizeof(*req));
	if (!pd_admin_op(op) || len != request_size(op))
		return -EINVAL;
	req->op = op;
	if (len)
		memcpy(&req->sched_set, payload, len);	/* any member: a union */
	switch (op) {
	case PTASKD_OP_SET_POLICY:
		req->policy.policy[sizeof(req->policy.policy) - 1] = '\0';
		return 0;
	case PTASKD_OP_SCHED_SET:
		return req->sched_set.reserved ? -EINVAL : 0;
	case PTASKD_OP_PROCS:
	case PTASKD_OP_OBJECTS:
		return req->list.flags || req->list.reserved ? -EINVAL : 0;
	case PTASKD_OP_SET_PRIO:
		return check_set_prio(&req->prio);
	default:
		return 0;
	}
}

static bool root_only(uint32_t op)
{
	return op != PTASKD_OP_SCHED_GET && op != PTASKD_OP_PROCS;
}

/* A reply of one struct, copied to the heap. */
static int reply_copy(const void *src, size_t len, void **out, size_t *out_len)
{
	*out = malloc(len);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, src, len);
	*out_len = len;
	return 0;
}

static int sched_get(struct ptask_ns *ns, void **out, size_t *out_len)
{
	struct ptask_sched_params p;

	ptask_core_sched_get(ns, &p);
	return reply_copy(&p, sizeof(p), out, out_len);
}

static int sched_set(struct ptask_ns *ns, uint32_t mask,
		     const struct ptask_sched_params *in, void **out,
		     size_t *out_len)
{
	int err;

	/* The core takes 0 as "nothing": the protocol calls it a mistake. */
	if (!mask)
		return -EINVAL;
	err = ptask_core_sched_set(ns, mask, in);
	return err ? err : sched_get(ns, out, out_len);
}

static int set_policy(struct ptask_ns *ns, const char *name)
{
	struct ptask_sched_params p = { };
	uint32_t i;

	for (i = 0; i < __PTASK_POLICY_MAX; i++) {
		if (!strcmp(name, policy_names[i])) {
			p.policy = i;
			return ptask_core_sched_set(ns, PTASK_SCHED_SET_POLICY, &p);
		}
	}
	return -EINVAL;
}

/* Room for one more record of @size in *@buf (@cap records), or false. */
static bool list_grow(void **buf, size_t *cap, size_t n, size_t size)
{
	size_t max = PTASKD_MSG_MAX / size, want;
	void *p;

	if (n < *cap)
		return true;
	if (n >= max)
		return false;
	want = *cap ? *cap * 2 : LIST_FIRST_RECORDS;
	if (want > max)
		want = max;
	p = realloc(*buf, want * size);
	if (!p)
		return false;
	*buf = p;
	*cap = want;
	return true;
}

static int list_procs(struct ptask_ns *ns, uint64_t cursor, void **out,
		      size_t *out_len)
{
	struct ptask_proc_info *recs = NULL;
	struct ptask_proc *proc;
	size_t n = 0, cap = 0;
	s32 after;

	*out = NULL;
	*out_len = 0;
	if (cursor > INT32_MAX)	/* past every pid: the end */
		return 0;
	after = (s32)cursor;
	ptask_core_sched_update(ns);	/* budgets and P as of now */
	while ((proc = ptask_core_proc_next(ns, after)) != NULL) {
		if (!list_grow((void **)&recs, &cap, n, sizeof(*recs))) {
			if (!n)
				return -ENOMEM;
			break;
		}
		ptask_core_proc_describe(proc, &recs[n++]);
		after = proc->pid;
	}
	*out = recs;
	*out_len = n * sizeof(*recs);
	return 0;
}

static void object_fill(struct ptask_obj *o, struct ptaskd_object *rec)
{
	struct ptask_obj_info info;

	ptask_core_obj_describe(o, &info);
	memset(rec, 0, sizeof(*rec));
	rec->type = info.type;
	rec->handle = info.handle;
	rec->graph = info.graph;
	rec->state = info.state;
	rec->owner_uid = info.owner_uid;
	rec->owner_pid = info.owner_pid;
	rec->kind = info.kind;
	rec->prio = info.prio;
	rec->proxy_nice = info.proxy_nice;
	rec->accel = info.accel;
	rec->gpu_ns = info.gpu_ns;
	rec->invocations = info.invocations;
	rec->failures = info.failures;
	rec->last_error = info.last_error;
	rec->error_code = info.error_code;
	strncpy(rec->name, info.name, sizeof(rec->name) - 1);
}

static int list_objects(struct ptask_ns *ns, u64 cursor, void **out,
			size_t *out_len)
{
	struct ptaskd_object *recs = NULL;
	struct ptask_obj *o;
	size_t n = 0, cap = 0;
	u64 before;

	for (;;) {
		before = cursor;
		o = ptask_core_ns_next(ns, &cursor);
		if (!o)
			break;
		if (!list_grow((void **)&recs, &cap, n, sizeof(*recs))) {
			cursor = before;
			if (!n)
				return -ENOMEM;
			break;
		}
		object_fill(o, &recs[n++]);
	}
	*out = recs;
	*out_len = n * sizeof(*recs);
	return 0;
}

static int set_prio(struct ptask_ns *ns, const struct ptaskd_set_prio *p)
{
	if (p->target == PTASKD_PRIO_PTASK)
		return ptask_core_ptask_admin_priority(ns, p->handle, p->value);
	return ptask_core_proc_set_weight(ns, p->pid, p->value);
}

int pd_admin_run_locked(struct ptask_ns *ns, const struct ptask_caller *who,
			const struct pd_admin_req *req, void **out,
			size_t *out_len)
{
	*out = NULL;
	*out_len = 0;
	if (root_only(req->op) && who->uid != 0)
		return -EPERM;
	switch (req->op) {
	case PTASKD_OP_SCHED_GET:
		return sched_get(ns, out, out_len);
	case PTASKD_OP_SCHED_SET:
		return sched_set(ns, req->sched_set.mask,
				 &req->sched_set.params, out, out_len);
	case PTASKD_OP_SET_POLICY:
		return set_policy(ns, req->policy.policy);
	case PTASKD_OP_PROCS:
		return list_procs(ns, req->list.cursor, out, out_len);
	case PTASKD_OP_OBJECTS:
		return list_objects(ns, req->list.cursor, out, out_len);
	case PTASKD_OP_SET_PRIO:
		return set_prio(ns, &req->prio);
	default:
		return -EINVAL;
	}
}

int pd_ns_admin(struct pd_ns *ns, const struct ptask_caller *who,
		const struct pd_admin_req *req, void **out, size_t *out_len)
{
	int err;

	pd_ns_lock(ns);
	err = pd_admin_run_locked(&ns->core, who, req, out, out_len);
	pd_ns_unlock(ns);
	return err;
}

uint32_t pd_ns_admin_policy(struct pd_ns *ns)
{
	uint32_t policy;

	pd_ns_lock(ns);
	policy = ns->core.sched.params.policy;
	pd_ns_unlock(ns);
	return policy;
}

void pd_ns_ptask_owners(struct pd_ns *ns,
			void (*seen)(void *arg, uint32_t uid, int32_t pid),
			void *arg)
{
	struct ptask_obj_info info;
	struct ptask_obj *o;
	u64 cursor = 0;

	pd_ns_lock(ns);
	while ((o = ptask_core_ns_next(&ns->core, &cursor)) != NULL) {
		if (o->type != PTASK_OBJ_PTASK)
			continue;
		ptask_core_obj_describe(o, &info);
		seen(arg, info.owner_uid, info.owner_pid);
	}
	pd_ns_unlock(ns);
}
