// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ptask.c - ptasks: creation, priorities, geometry and the
 * Waiting -> Queued and Completed -> Waiting transitions.
 */
#include "ptask_core.h"

static struct ptask_ptask *ptask_get(struct ptask_client *c, u32 handle,
				     int *err)
{
	struct ptask_obj *o = ptask_obj_get(c, handle, PTASK_OBJ_PTASK, err);

	return o ? ptask_container_of(o, struct ptask_ptask, obj) : NULL;
}

/**
 * ptask_core_ptask_open() - PTASK_IOC_PTASK_OPEN
 * @c: the caller
 * @who: the caller's credentials (owner and initial proxy priority)
 * @arg: the checked argument; @arg->handle set on success
 * @code: @arg->code_len bytes of GPU code, copied in by the shell
 *
 * Return: 0, -ENOENT, -EACCES, -ESHUTDOWN, -EIO or -ENOMEM.
 */
int ptask_core_ptask_open(struct ptask_client *c, const struct ptask_caller *who,
			  struct ptask_ptask_open *arg, const u8 *code)
{
	struct ptask_ptask *p;
	struct ptask_graph *g;
	int err;

	ptask_os_assert_locked(c->ns);
	g = ptask_graph_get(c, arg->graph, &err);
	if (!g)
		return err;
	if (g->state == PTASK_GRAPH_RUNNING)
		return -EBUSY;
	p = ptask_os_zalloc(sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->proc = ptask_proc_get(c->ns, who);
	if (!p->proc) {
		err = -ENOMEM;
		goto err_free_ptask;
	}
	if (arg->code_len) {
		p->code = ptask_os_zalloc(arg->code_len);
		if (!p->code) {
			err = -ENOMEM;
			goto err_put_proc;
		}
		memcpy(p->code, code, arg->code_len);
		p->code_len = arg->code_len;
	}
	err = ptask_ns_add(c->ns, &p->obj, PTASK_OBJ_PTASK);
	if (err)
		goto err_free_code;
	p->graph = g;
	p->kind = arg->kind;
	p->state = PTASK_STATE_WAITING;
	p->nports = arg->nports;
	memcpy(p->entry, arg->entry, sizeof(p->entry));
	memcpy(p->name, arg->name, sizeof(p->name));
	p->static_prio = PTASK_PRIO_DEFAULT;
	p->proxy_nice = who->nice;
	p->owner_pid = who->pid;
	p->owner_uid = who->uid;
	ptask_list_init(&p->ready_node);
	ptask_list_init(&p->self_node);
	ptask_list_init(&p->ahead);
	p->proc->ptasks++;
	p->creator = c;
	ptask_list_add_tail(&p->creator_node, &c->created);
	if (arg->flags & PTASK_PTASK_SELF) {
		p->self = c;
		ptask_list_add_tail(&p->self_node, &c->self_ptasks);
	}
	ptask_list_add_tail(&p->node, &g->ptasks);
	ptask_count_inc(c->ns, PTASK_COUNT_PTASKS);
	ptask_os_event(c->ns, PTASK_EVENT_CREATED, PTASK_OBJ_PTASK,
		       p->obj.handle);
	arg->handle = p->obj.handle;
	return 0;

err_free_code:
	ptask_os_free(p->code);
err_put_proc:
	ptask_proc_put(c->ns, p->proc);
err_free_ptask:
	ptask_os_free(p);
	return err;
}

/**
 * ptask_core_ptask_set_priority() - PTASK_IOC_PTASK_SET_PRIORITY
 * @c: the caller
 * @who: the caller's credentials
 * @arg: the checked argument
 *
 * Return: 0, -ENOENT, -EACCES, -ESHUTDOWN, -EIO, or -EPERM when the proxy
 * priority would be raised above the caller's own without CAP_SYS_NICE.
 */
int ptask_core_ptask_set_priority(struct ptask_client *c,
				  const struct ptask_caller *who,
				  struct ptask_priority *arg)
{
	struct ptask_ptask *p;
	int err;

	ptask_os_assert_locked(c->ns);
	p = ptask_get(c, arg->ptask, &err);
	if (!p)
		return err;
	if ((arg->flags & PTASK_PRIO_SET_PROXY) &&
	    arg->proxy_nice < who->nice && !who->sys_nice)
		return -EPERM;
	if (arg->flags & PTASK_PRIO_SET_STATIC)
		p->static_prio = arg->static_prio;
	if (arg->flags & PTASK_PRIO_SET_PROXY)
		p->proxy_nice = arg->proxy_nice;
	return 0;
}

/**
 * ptask_core_ptask_admin_priority() - the administrator sets a static priority
 * @ns: the namespace
 * @handle: the ptask
 * @prio: PTASK_PRIO_MIN..PTASK_PRIO_MAX
 *
 * For sysfs and netlink, whose callers are checked for CAP_SYS_ADMIN by
 * the shell: no graph needs to be open.
 *
 * Return: 0, -EINVAL (out of range) or -ENOENT (no such ptask).
 */
int ptask_core_ptask_admin_priority(struct ptask_ns *ns, u32 handle, u32 prio)
{
	struct ptask_obj *o;

	ptask_os_assert_locked(ns);
	if (prio > PTASK_PRIO_MAX)
		return -EINVAL;
	o = ptask_core_ns_find(ns, handle, PTASK_OBJ_PTASK);
	if (!o)
		return -ENOENT;
	ptask_container_of(o, struct ptask_ptask, obj)->static_prio = prio;
	return 0;
}

/**
 * ptask_core_ptask_set_geometry() - PTASK_IOC_PTASK_SET_GEOMETRY
 * @c: the caller
 * @arg: the checked argument
 *
 * Return: 0, -ENOENT, -EACCES, -ESHUTDOWN, -EIO, or -EINVAL for a CPU
 * ptask.
 */
int ptask_core_ptask_set_geometry(struct ptask_client *c, struct ptask_geometry *arg)
{
	struct ptask_ptask *p;
	int err;

	ptask_os_assert_locked(c->ns);
	p = ptask_get(c, arg->ptask, &err);
	if (!p)
		return err;
	if (p->kind != PTASK_KIND_GPU)
		return -EINVAL;
	memcpy(p->grid, arg->grid, sizeof(p->grid));
	memcpy(p->block, arg->block, sizeof(p->block));
	p->shared_bytes = arg->shared_bytes;
	return 0;
}

/*
 * Every input and sticky port Occupied, and at least one plain input: a
 * sticky port keeps its datablock, so sticky ports alone would fire the
 * ptask again and again on the same data.
 */
bool ptask_ptask_inputs_ready(const struct ptask_ptask *p)
{
	u32 i, plain = 0;

	if (p->nopened != p->nports)
		return false;
	for (i = 0; i < p->nports; i++) {
		if (p->ports[i]->kind == PTASK_PORT_OUTPUT)
			continue;
		if (!p->ports[i]->occupant)
			return false;
		plain += p->ports[i]->kind == PTASK_PORT_INPUT;
	}
	return plain > 0;
}

/**
 * ptask_ptask_try_queue() - Waiting -> Queued when every input is Occupied
 * @p: the ptask
 *
 * A ptask with no plain input port is never queued: nothing says when to
 * run it.
 */
void ptask_ptask_try_queue(struct ptask_ptask *p)
{
	struct ptask_ns *ns = p->graph->ns;

	ptask_os_assert_locked(ns);
	if (p->graph->state != PTASK_GRAPH_RUNNING ||
	    p->state != PTASK_STATE_WAITING || !ptask_ptask_inputs_ready(p))
		return;
	p->state = PTASK_STATE_QUEUED;
	p->queued_ns = ptask_os_now_ns();
	if (p->self) {
		ptask_list_add_tail(&p->ready_node, &p->self->self_ready);
		ptask_client_wake(p->self);
	} else {
		ptask_list_add_tail(&p->ready_node, &ns->ready);
		if (p->kind == PTASK_KIND_GPU) {
			p->proc->last_active_ns = p->queued_ns;
			/*
			 * Held from now on: the timer must run for it, or an
			 * executor that polls (and so never takes) would never
			 * see the refill.
			 */
			if (p->proc->budget_ns < 0)
				ptask_core_sched_update(ns);
		}
		ptask_core_exec_wake(ns);
	}
}

/**
 * ptask_ptask_try_finish() - Completed -> Waiting once all outputs moved on
 * @p: the ptask
 */
void ptask_ptask_try_finish(struct ptask_ptask *p)
{
	u32 i;

	ptask_os_assert_locked(p->graph->ns);
	if (p->state != PTASK_STATE_COMPLETED)
		return;
	for (i = 0; i < p->nports; i++)
		if (p->ports[i]->kind == PTASK_PORT_OUTPUT &&
		    p->ports[i]->occupant)
			return;
	p->state = PTASK_STATE_WAITING;
	ptask_ptask_try_queue(p);
}

/**
 * ptask_ptask_free() - free a ptask and its ports with its graph
 * @p: the ptask; its graph is stopped, so it is neither Queued nor running
 */
void ptask_ptask_free(struct ptask_ptask *p)
{
	struct ptask_ns *ns = p->graph->ns;
	u32 i;

	PTASK_WARN_ON(p->running);
	PTASK_WARN_ON(p->redo);
	PTASK_WARN_ON(!ptask_list_empty(&p->ahead));
	PTASK_WARN_ON(p->state == PTASK_STATE_QUEUED);
	for (i = 0; i < p->nopened; i++)
		ptask_port_free(p->ports[i]);
	ptask_ns_remove(ns, &p->obj);
	ptask_list_del(&p->node);
	ptask_list_del(&p->self_node);
	ptask_list_del(&p->creator_node);
	ptask_count_dec(ns, PTASK_COUNT_PTASKS);
	/* the executors drop its cached info and loaded kernels */
	if (p->executor_seen)
		ptask_forgotten_note(ns, p->obj.handle);
	ptask_os_event(ns, PTASK_EVENT_DESTROYED, PTASK_OBJ_PTASK,
		       p->obj.handle);
	p->proc->ptasks--;
	ptask_proc_put(ns, p->proc);
	ptask_os_free(p->code);
	ptask_os_free(p);
}
