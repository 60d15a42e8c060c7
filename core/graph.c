// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * graph.c - graphs: creation and opening by name, run, terminate, close,
 * and the access rule every other object goes through.
 */
#include "ptask_core.h"

static struct ptask_graph *find_by_name(struct ptask_ns *ns, const char *name)
{
	struct ptask_list *pos;

	ptask_list_for_each(pos, &ns->graphs) {
		struct ptask_graph *g = ptask_list_entry(pos, struct ptask_graph,
							 ns_node);

		if (g->name[0] && !strcmp(g->name, name))
			return g;
	}
	return NULL;
}

/* The caller's class (owner, group, other) needs read and write. */
static bool may_open(const struct ptask_graph *g, const struct ptask_caller *who)
{
	u32 bits;

	if (who->dac_override)
		return true;
	if (who->uid == g->uid)
		bits = g->mode >> 6;
	else if (who->gid == g->gid || (who->in_group && who->in_group(who, g->gid)))
		bits = g->mode >> 3;
	else
		bits = g->mode;
	return (bits & 6) == 6;
}

static int add_open(struct ptask_client *c, struct ptask_graph *g)
{
	struct ptask_open *o = ptask_os_zalloc(sizeof(*o));

	if (!o)
		return -ENOMEM;
	o->graph = g;
	o->client = c;
	ptask_list_add_tail(&o->graph_node, &g->openers);
	ptask_list_add_tail(&o->client_node, &c->opens);
	g->opens++;
	return 0;
}

static struct ptask_graph *graph_create(struct ptask_ns *ns,
					const struct ptask_caller *who,
					const struct ptask_graph_open *arg)
{
	struct ptask_graph *g = ptask_os_zalloc(sizeof(*g));

	if (!g)
		return NULL;
	if (ptask_ns_add(ns, &g->obj, PTASK_OBJ_GRAPH)) {
		ptask_os_free(g);
		return NULL;
	}
	g->ns = ns;
	memcpy(g->name, arg->name, sizeof(g->name));
	g->uid = who->uid;
	g->gid = who->gid;
	g->mode = arg->mode;
	g->state = PTASK_GRAPH_BUILDING;
	ptask_list_init(&g->openers);
	ptask_list_init(&g->templates);
	ptask_list_init(&g->ptasks);
	ptask_list_init(&g->channels);
	ptask_list_add_tail(&g->ns_node, &ns->graphs);
	ptask_count_inc(ns, PTASK_COUNT_GRAPHS);
	ptask_os_event(ns, PTASK_EVENT_CREATED, PTASK_OBJ_GRAPH, g->obj.handle);
	return g;
}

/**
 * ptask_core_graph_open() - PTASK_IOC_GRAPH_OPEN
 * @c: the calling client
 * @who: the caller's credentials
 * @arg: the checked argument; @arg->handle is set on success
 *
 * Return: 0 or -errno as uapi/ptask.h lists.
 */
int ptask_core_graph_open(struct ptask_client *c, const struct ptask_caller *who,
			  struct ptask_graph_open *arg)
{
	struct ptask_ns *ns = c->ns;
	struct ptask_graph *g = NULL;
	int ret;

	ptask_os_assert_locked(ns);
	if (arg->name[0])
		g = find_by_name(ns, arg->name);
	if (g) {
		if ((arg->flags & PTASK_GRAPH_EXCL) &&
		    (arg->flags & PTASK_GRAPH_CREATE))
			return -EEXIST;
		/*
		 * A caller that asks to create means to own: a name another
		 * uid took first is never joined silently (uid 1000's 0666
		 * "svc" took in a service's CREATE 0600, its mode ignored).
		 * Opening without CREATE joins another's graph by its mode.
		 */
		if ((arg->flags & PTASK_GRAPH_CREATE) && g->uid != who->uid)
			return -EEXIST;
		if (!may_open(g, who))
			return -EACCES;
		if (!ptask_client_has_open(c, g)) {
			ret = add_open(c, g);
			if (ret)
				return ret;
		}
		arg->handle = g->obj.handle;
		return 0;
	}
	if (!(arg->flags & PTASK_GRAPH_CREATE))
		return -ENOENT;
	g = graph_create(ns, who, arg);
	if (!g)
		return -ENOMEM;
	ret = add_open(c, g);
	if (ret) {
		ptask_graph_free(g);
		return ret;
	}
	arg->handle = g->obj.handle;
	return 0;
}

/**
 * ptask_graph_wake() - wake every client that has @g open
 * @g: the graph whose channels or state changed
 */
void ptask_graph_wake(struct ptask_graph *g)
{
	struct ptask_list *pos;

	ptask_list_for_each(pos, &g->openers)
		ptask_client_wake(ptask_list_entry(pos, struct ptask_open,
						   graph_node)->client);
}

/**
 * ptask_graph_usable() - may calls still act on @g?
 * @c: the caller (unused: kept so every check reads the same)
 * @g: the graph
 *
 * Return: 0, -ESHUTDOWN once terminated, -EIO once failed.
 */
int ptask_graph_usable(struct ptask_client *c, struct ptask_graph *g)
{
	(void)c;
	if (g->state == PTASK_GRAPH_TERMINATED)
		return -ESHUTDOWN;
	if (g->state == PTASK_GRAPH_FAILED)
		return -EIO;
	return 0;
}

static struct ptask_graph *graph_of(struct ptask_obj *o)
{
	switch (o->type) {
	case PTASK_OBJ_GRAPH:
		return ptask_container_of(o, struct ptask_graph, obj);
	case PTASK_OBJ_TEMPLATE:
		return ptask_container_of(o, struct ptask_template, obj)->graph;
	case PTASK_OBJ_PTASK:
		return ptask_container_of(o, struct ptask_ptask, obj)->graph;
	case PTASK_OBJ_PORT:
		return ptask_container_of(o, struct ptask_port, obj)->ptask->graph;
	case PTASK_OBJ_CHANNEL:
		return ptask_container_of(o, struct ptask_channel, obj)->graph;
	default:
		return NULL;
	}
}

/**
 * ptask_core_obj_describe() - what a listing shows of @o
 * @o: any object
 * @info: filled in; @info->name points into the object
 */
void ptask_core_obj_describe(struct ptask_obj *o, struct ptask_obj_info *info)
{
	struct ptask_graph *g = graph_of(o);

	memset(info, 0, sizeof(*info));
	info->type = o->type;
	info->handle = o->handle;
	info->graph = g ? g->obj.handle : 0;
	info->owner_uid = g ? g->uid : 0;
	info->name = "";
	switch (o->type) {
	case PTASK_OBJ_GRAPH:
		info->state = g->state;
		info->name = g->name;
		break;
	case PTASK_OBJ_TEMPLATE:
		info->name = ptask_container_of(o, struct ptask_template,
						obj)->name;
		break;
	case PTASK_OBJ_PTASK: {
		struct ptask_ptask *p = ptask_container_of(o,
				struct ptask_ptask, obj);

		info->state = p->state;
		info->owner_uid = p->owner_uid;
		info->owner_pid = p->owner_pid;
		info->name = p->name;
		info->kind = p->kind;
		info->prio = p->static_prio;
		info->proxy_nice = p->proxy_nice;
		info->accel = p->last_accel;
		info->gpu_ns = p->gpu_ns;
		info->invocations = p->invocations;
		info->failures = p->failures;
		info->last_error = p->last_error;
		info->error_code = p->error_code;
		break;
	}
	case PTASK_OBJ_PORT:
		info->name = ptask_container_of(o, struct ptask_port, obj)->name;
		break;
	case PTASK_OBJ_CHANNEL: {
		struct ptask_channel *ch = ptask_container_of(o,
				struct ptask_channel, obj);

		info->state = ch->count;
		info->name = ch->name;
		break;
	}
	case PTASK_OBJ_DATABLOCK:
		info->state = ptask_container_of(o, struct ptask_datablock,
						 obj)->refs;
		break;
	}
}

/**
 * ptask_obj_get() - resolve a handle the way every call does
 * @c: the caller
 * @handle: the handle from the caller
 * @type: the type the call needs (not PTASK_OBJ_DATABLOCK)
 * @err: set to -ENOENT (no such object of @type), -EACCES (the caller has
 *	not opened its graph) or the graph's ptask_graph_usable() error
 *
 * Return: the object, or NULL with *@err set.
 */
struct ptask_obj *ptask_obj_get(struct ptask_client *c, u32 handle, u32 type,
				int *err)
{
	struct ptask_obj *o = ptask_core_ns_find(c->ns, handle, type);
	struct ptask_graph *g;

	if (!o) {
		*err = -ENOENT;
		return NULL;
	}
	g = graph_of(o);
	if (!g || !ptask_client_has_open(c, g)) {
		*err = -EACCES;
		return NULL;
	}
	*err = ptask_graph_usable(c, g);
	return *err ? NULL : o;
}

/**
 * ptask_graph_get() - resolve a graph handle the way every call does
 * @c: the caller
 * @handle: the graph's handle
 * @err: set as ptask_obj_get() sets it
 *
 * Return: the graph, or NULL with *@err set.
 */
struct ptask_graph *ptask_graph_get(struct ptask_client *c, u32 handle,
				    int *err)
{
	struct ptask_obj *o = ptask_obj_get(c, handle, PTASK_OBJ_GRAPH, err);

	return o ? ptask_container_of(o, struct ptask_graph, obj) : NULL;
}

/**
 * ptask_core_graph_run() - PTASK_IOC_GRAPH_RUN
 * @c: the caller
 * @arg: the checked argument
 *
 * Return: 0, -ENOENT, -EACCES, -ESHUTDOWN, -EIO or -EALREADY.
 */
int ptask_core_graph_run(struct ptask_client *c, struct ptask_graph_ctl *arg)
{
	struct ptask_list *pos;
	struct ptask_graph *g;
	int err;

	ptask_os_assert_locked(c->ns);
	g = ptask_graph_get(c, arg->graph, &err);
	if (!g)
		return err;
	if (g->state == PTASK_GRAPH_RUNNING)
		return -EALREADY;
	g->state = PTASK_GRAPH_RUNNING;
	ptask_list_for_each(pos, &g->ptasks)
		ptask_ptask_try_queue(ptask_list_entry(pos, struct ptask_ptask,
						       node));
	ptask_os_event(c->ns, PTASK_EVENT_GRAPH_RUN, PTASK_OBJ_GRAPH,
		       g->obj.handle);
	return 0;
}

/**
 * ptask_graph_stop() - end a graph's work: terminate or fail it
 * @g: the graph, not already stopped
 * @state: PTASK_GRAPH_TERMINATED or PTASK_GRAPH_FAILED
 *
 * Drops queued work, orphans invocations in flight (their executor
 * completes them into nothing), releases every datablock the graph holds,
 * frees the name and wakes every client that has the graph open.  The
 * objects stay, so their handles answer -ESHUTDOWN or -EIO until close.
 */
void ptask_graph_stop(struct ptask_graph *g, u32 state)
{
	struct ptask_list *pos;

	ptask_os_assert_locked(g->ns);
	g->state = state;
	g->name[0] = 0;
	ptask_list_for_each(pos, &g->ptasks) {
		struct ptask_ptask *p =
			ptask_list_entry(pos, struct ptask_ptask, node);
		u32 i;

		if (p->state == PTASK_STATE_QUEUED)
			ptask_list_del(&p->ready_node);
		if (p->running)
			ptask_invocation_orphan(p);
		ptask_invocation_orphan_ahead(p);
		ptask_redo_free(p);
		p->state = PTASK_STATE_WAITING;
		for (i = 0; i < p->nopened; i++) {
			struct ptask_port *port = p->ports[i];

			if (port->occupant) {
				ptask_datablock_put(g->ns, port->occupant);
				port->occupant = NULL;
			}
		}
	}
	ptask_list_for_each(pos, &g->channels)
		ptask_channel_flush(ptask_list_entry(pos, struct ptask_channel,
						     node));
	ptask_graph_wake(g);
	ptask_os_event(g->ns, state == PTASK_GRAPH_FAILED ?
		       PTASK_EVENT_GRAPH_FAILED : PTASK_EVENT_GRAPH_TERMINATED,
		       PTASK_OBJ_GRAPH, g->obj.handle);
}

/**
 * ptask_core_graph_terminate() - PTASK_IOC_GRAPH_TERMINATE
 * @c: the caller
 * @arg: the checked argument
 *
 * Return: 0, -ENOENT, -EACCES, -ESHUTDOWN or -EIO.
 */
int ptask_core_graph_terminate(struct ptask_client *c, struct ptask_graph_ctl *arg)
{
	struct ptask_graph *g;
	int err;

	ptask_os_assert_locked(c->ns);
	g = ptask_graph_get(c, arg->graph, &err);
	if (!g)
		return err;
	ptask_graph_stop(g, PTASK_GRAPH_TERMINATED);
	return 0;
}

/**
 * ptask_graph_free() - free a graph nobody has open, and all it holds
 * @g: the graph
 */
void ptask_graph_free(struct ptask_graph *g)
{
	struct ptask_ns *ns = g->ns;
	struct ptask_list *pos, *tmp;

	ptask_os_assert_locked(ns);
	PTASK_WARN_ON(g->opens != 0);
	if (g->state != PTASK_GRAPH_TERMINATED && g->state != PTASK_GRAPH_FAILED)
		ptask_graph_stop(g, PTASK_GRAPH_TERMINATED);
	/* Channels point at ports and ports at templates: free in that order. */
	ptask_list_for_each_safe(pos, tmp, &g->channels)
		ptask_channel_free(ptask_list_entry(pos, struct ptask_channel,
						    node));
	ptask_list_for_each_safe(pos, tmp, &g->ptasks)
		ptask_ptask_free(ptask_list_entry(pos, struct ptask_ptask,
						  node));
	ptask_list_for_each_safe(pos, tmp, &g->templates)
		ptask_template_free(ptask_list_entry(pos, struct ptask_template,
						     node));
	ptask_os_event(ns, PTASK_EVENT_DESTROYED, PTASK_OBJ_GRAPH,
		       g->obj.handle);
	ptask_ns_remove(ns, &g->obj);
	ptask_list_del(&g->ns_node);
	ptask_count_dec(ns, PTASK_COUNT_GRAPHS);
	ptask_os_free(g);
}

/**
 * ptask_core_graph_close() - a client lets go of a graph
 * @o: the client's open record; freed here, with the graph if it was the
 *	last open
 */
void ptask_core_graph_close(struct ptask_open *o)
{
	struct ptask_graph *g = o->graph;

	ptask_os_assert_locked(g->ns);
	ptask_list_del(&o->graph_node);
	ptask_list_del(&o->client_node);
	/* Its tunnel slices will not be pulled now: the batches let go. */
	if (!ptask_client_has_open(o->client, g))
		ptask_tunnel_client_gone(o->client, g);
	/* A thread of this client sleeping on the graph must look again. */
	ptask_client_wake(o->client);
	ptask_os_free(o);
	if (--g->opens == 0)
		ptask_graph_free(g);
}

/**
 * ptask_core_graph_close_handle() - PTASK_IOC_GRAPH_CLOSE
 * @c: the caller
 * @arg: the checked argument
 *
 * Works on a terminated or failed graph too: that is how a client lets go
 * of one (and stops seeing EPOLLERR for it) without closing its fd.
 *
 * Return: 0, or -ENOENT when @c does not have graph @arg->graph open.
 */
int ptask_core_graph_close_handle(struct ptask_client *c, struct ptask_graph_ctl *arg)
{
	struct ptask_list *pos;

	ptask_os_assert_locked(c->ns);
	ptask_list_for_each(pos, &c->opens) {
		struct ptask_open *o = ptask_list_entry(pos, struct ptask_open,
							client_node);

		if (o->graph->obj.handle == arg->graph) {
			ptask_core_graph_close(o);
			return 0;
		}
	}
	return -ENOENT;
}

static bool name_is(const char *have, const char *want)
{
	return have[0] && !strcmp(have, want);
}

static struct ptask_obj *find_in_graph(struct ptask_graph *g, u32 type,
				       const char *name)
{
	struct ptask_list *pos;
	u32 i;

	switch (type) {
	case PTASK_OBJ_TEMPLATE:
		ptask_list_for_each(pos, &g->templates) {
			struct ptask_template *t = ptask_list_entry(pos,
					struct ptask_template, node);
			if (name_is(t->name, name))
				return &t->obj;
		}
		break;
	case PTASK_OBJ_PTASK:
	case PTASK_OBJ_PORT:
		ptask_list_for_each(pos, &g->ptasks) {
			struct ptask_ptask *p = ptask_list_entry(pos,
					struct ptask_ptask, node);

			if (type == PTASK_OBJ_PTASK && name_is(p->name, name))
				return &p->obj;
			for (i = 0; type == PTASK_OBJ_PORT && i < p->nopened; i++)
				if (name_is(p->ports[i]->name, name))
					return &p->ports[i]->obj;
		}
		break;
	case PTASK_OBJ_CHANNEL:
		ptask_list_for_each(pos, &g->channels) {
			struct ptask_channel *ch = ptask_list_entry(pos,
					struct ptask_channel, node);
			if (name_is(ch->name, name))
				return &ch->obj;
		}
		break;
	}
	return NULL;
}

/**
 * ptask_core_graph_lookup() - PTASK_IOC_LOOKUP
 * @c: the caller
 * @arg: the checked argument; @arg->handle set on success
 *
 * Return: 0, -ENOENT (no graph, or nothing of that name), -EACCES,
 * -ESHUTDOWN or -EIO.
 */
int ptask_core_graph_lookup(struct ptask_client *c, struct ptask_lookup *arg)
{
	struct ptask_graph *g;
	struct ptask_obj *o;
	int err;

	ptask_os_assert_locked(c->ns);
	g = ptask_graph_get(c, arg->graph, &err);
	if (!g)
		return err;
	o = find_in_graph(g, arg->type, arg->name);
	if (!o)
		return -ENOENT;
	arg->handle = o->handle;
	return 0;
}
