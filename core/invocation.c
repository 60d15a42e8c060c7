// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * invocation.c - the executor side: registration, taking Queued ptasks in
 * batches (Queued -> Executing), and completing them (-> Completed).
 */
#include "ptask_core.h"

/**
 * ptask_core_exec_wake() - wake every executor: work was queued
 * @ns: the namespace
 */
void ptask_core_exec_wake(struct ptask_ns *ns)
{
	struct ptask_list *pos;

	ptask_list_for_each(pos, &ns->clients) {
		struct ptask_client *c = ptask_list_entry(pos,
				struct ptask_client, ns_node);

		if (c->executor)
			ptask_client_wake(c);
	}
}

/**
 * ptask_core_exec_register() - make @c an executor
 * @c: the client
 * @n_accels: devices in its inventory
 *
 * Return: 0, or -EALREADY.
 */
int ptask_core_exec_register(struct ptask_client *c, u32 n_accels)
{
	ptask_os_assert_locked(c->ns);
	if (c->executor)
		return -EALREADY;
	c->executor = true;
	c->n_accels = n_accels;
	c->ns->executors++;
	ptask_os_event(c->ns, PTASK_EVENT_EXECUTOR_UP, PTASK_OBJ_NONE, 0);
	/* Work may have been queued before any executor existed. */
	if (!ptask_list_empty(&c->ns->ready))
		ptask_client_wake(c);
	return 0;
}

/*
 * @inv's outputs completed ahead into graph outputs are valid now (it
 * settled), or will never be (it goes without a settle: its graph has
 * stopped or its executor went, and the pulls fail anyway): pulls may
 * take them.  Returns whether a pull may be waiting for any (a chain's
 * hop taken ahead is read by takers alone: its settle need wake nobody).
 */
static bool release_written(struct ptask_invocation_rec *inv)
{
	bool any = false;

	while (!ptask_list_empty(&inv->written)) {
		struct ptask_datablock *db = ptask_list_first(&inv->written,
				struct ptask_datablock, writer_node);

		ptask_list_del(&db->writer_node);
		db->writer = NULL;
		any |= db->writer_pulled;
		db->writer_pulled = false;
	}
	return any;
}

/* Let go of a segment's later members' sticky datablocks. */
static void sticky_put(struct ptask_ns *ns, struct ptask_invocation_rec *inv)
{
	u32 i;

	for (i = 0; i < inv->nsticky; i++)
		ptask_datablock_put(ns, inv->sticky[i]);
	ptask_os_free(inv->sticky);
	inv->sticky = NULL;
	inv->nsticky = 0;
}

static void invocation_free(struct ptask_ns *ns,
			    struct ptask_invocation_rec *inv)
{
	u32 i;

	release_written(inv);
	sticky_put(ns, inv);

	for (i = 0; i < inv->nports; i++)
		if (inv->inputs[i])
			ptask_datablock_put(ns, inv->inputs[i]);
	ptask_list_del(&inv->node);
	ptask_list_del(&inv->ahead_node);
	ptask_sched_untake(ns, inv);
	ptask_count_dec(ns, PTASK_COUNT_INVOCATIONS);
	ptask_os_free(inv);
}

/**
 * ptask_invocation_orphan() - detach @p's running invocation from it
 * @p: an Executing ptask whose graph is stopping
 *
 * The invocation stays on its executor's list, with no ptask and no
 * inputs, until the executor completes it (-ECANCELED) or goes away.
 */
void ptask_invocation_orphan(struct ptask_ptask *p)
{
	struct ptask_invocation_rec *inv = p->running;
	u32 i;

	for (i = 0; i < inv->nports; i++) {
		if (inv->inputs[i])
			ptask_datablock_put(p->graph->ns, inv->inputs[i]);
		inv->inputs[i] = NULL;
	}
	sticky_put(p->graph->ns, inv);
	inv->ptask = NULL;
	inv->tail = NULL;
	p->running = NULL;
}

/**
 * ptask_invocation_orphan_ahead() - detach @p's Settling invocations
 * @p: a ptask whose graph is stopping
 *
 * Like ptask_invocation_orphan for the invocations completed ahead and
 * not yet settled: they stay on their executor's list, with no ptask and
 * no inputs, until it settles them (-ECANCELED) or goes away.
 */
void ptask_invocation_orphan_ahead(struct ptask_ptask *p)
{
	struct ptask_list *pos, *tmp;
	u32 i;

	ptask_list_for_each_safe(pos, tmp, &p->ahead) {
		struct ptask_invocation_rec *inv = ptask_list_entry(pos,
				struct ptask_invocation_rec, ahead_node);

		for (i = 0; i < inv->nports; i++) {
			if (inv->inputs[i])
				ptask_datablock_put(p->graph->ns,
						    inv->inputs[i]);
			inv->inputs[i] = NULL;
		}
		inv->ptask = NULL;
		ptask_list_del(&inv->ahead_node);
	}
}

/**
 * ptask_exec_fail_taken() - fail the invocations @c took and still holds
 * @c: the client
 * @self_too: also those of its own PTASK_PTASK_SELF ptasks
 *
 * Their graphs fail: the clients get -EIO rather than waiting for a result
 * that will not come.
 */
void ptask_exec_fail_taken(struct ptask_client *c, bool self_too)
{
	struct ptask_list *pos, *tmp;

	ptask_os_assert_locked(c->ns);
	ptask_list_for_each_safe(pos, tmp, &c->taken) {
		struct ptask_invocation_rec *inv = ptask_list_entry(pos,
				struct ptask_invocation_rec, node);

		if (inv->self && !self_too)
			continue;
		if (inv->ptask)
			ptask_graph_stop(inv->ptask->graph, PTASK_GRAPH_FAILED);
		invocation_free(c->ns, inv);
	}
}

/* Does a datablock only @executor may hold current sit at @db? */
static bool lost_with(const struct ptask_datablock *db, u64 executor)
{
	return db && db->device_of == executor;
}

/* Does running graph @g hold a datablock lost with @executor? */
static bool graph_loses(const struct ptask_graph *g, u64 executor)
{
	struct ptask_list *pos;
	u32 i;

	ptask_list_for_each(pos, &g->ptasks) {
		const struct ptask_ptask *p =
			ptask_list_entry(pos, struct ptask_ptask, node);

		for (i = 0; i < p->nopened; i++)
			if (lost_with(p->ports[i]->occupant, executor))
				return true;
		/* taken by another executor, which reads the host pages */
		for (i = 0; p->running && i < p->running->nports; i++)
			if (lost_with(p->running->inputs[i], executor))
				return true;
	}
	ptask_list_for_each(pos, &g->channels) {
		const struct ptask_channel *ch =
			ptask_list_entry(pos, struct ptask_channel, node);

		/* a graph output's datablocks were written back for the pull */
		if (!ch->dst || ch->tunnel)
			continue;
		for (i = 0; i < ch->count; i++)
			if (lost_with(ch->slots[(ch->head + i) % ch->capacity],
				      executor))
				return true;
	}
	return false;
}

/*
 * Executor @c goes (unregistered, or its fd closed): what it completed
 * into a graph may have been current only in its device memory (an
 * intermediate headed for another GPU ptask is not copied back), and is
 * gone with it.  Every running graph that still holds such a datablock
 * fails (-EIO), rather than the next executor computing from stale host
 * pages and the client pulling a wrong result.  Conservative: a
 * datablock the executor had written back meanwhile is counted lost too.
 * Walks every graph of the namespace, but only when an executor goes.
 */
static void ptask_exec_lost(struct ptask_client *c)
{
	struct ptask_list *pos, *tmp;

	ptask_os_assert_locked(c->ns);
	ptask_list_for_each_safe(pos, tmp, &c->ns->graphs) {
		struct ptask_graph *g =
			ptask_list_entry(pos, struct ptask_graph, ns_node);

		if (g->state == PTASK_GRAPH_RUNNING && graph_loses(g, c->id))
			ptask_graph_stop(g, PTASK_GRAPH_FAILED);
	}
}

/**
 * ptask_core_exec_unregister() - @c stops being an executor (or is closing)
 * @c: an executor
 *
 * Work it took and did not complete fails its graphs: the clients get
 * -EIO rather than waiting for a result that will not come.  So do the
 * running graphs that hold a datablock only it may have had current
 * (ptask_exec_lost()).
 *
 * Return: 0, or -ENOENT when @c is not an executor.
 */
int ptask_core_exec_unregister(struct ptask_client *c)
{
	ptask_os_assert_locked(c->ns);
	if (!c->executor)
		return -ENOENT;
	ptask_exec_fail_taken(c, false);
	ptask_exec_lost(c);
	c->executor = false;
	if (c->exec_pid_only) {
		c->exec_pid_only = false;
		c->ns->pid_executors--;
	}
	if (c->exec_uid_only) {
		c->exec_uid_only = false;
		c->ns->uid_executors--;
		/* that uid's queued work is any other executor's now */
		ptask_core_exec_wake(c->ns);
	}
	ptask_forgotten_free(c);
	c->ns->executors--;
	/* A thread of this client blocked in EXEC_TAKE must see -EPERM now. */
	ptask_client_wake(c);
	ptask_os_event(c->ns, PTASK_EVENT_EXECUTOR_DOWN, PTASK_OBJ_NONE, 0);
	return 0;
}

/**
 * ptask_core_exec_set_uid() - make executor @c the executor of one uid
 * @c: a registered executor that has taken nothing yet
 * @uid: the uid whose ptasks' invocations it alone takes
 *
 * DOC: Executors per uid
 *
 * The uid is the isolation domain (DESIGN.md, "Tenants and isolation"):
 * an executor process that runs one uid's kernels, in its own contexts,
 * maps that uid's datablocks alone.  Once one is registered for a uid,
 * that uid's invocations go to it (or to one of them), never to another
 * executor; an executor without a uid takes the invocations of the uids
 * that have none.  What one uid's ptask emits for another uid's GPU
 * ptask is then read from host memory by another process, so the core
 * asks for it to be written back (feeds(): a host reader), and never
 * completes it ahead or fuses across the two.
 *
 * Return: 0, -ENOENT (not an executor), -EALREADY (it has a uid), or
 * -EBUSY (it holds invocations already).
 */
int ptask_core_exec_set_uid(struct ptask_client *c, u32 uid)
{
	ptask_os_assert_locked(c->ns);
	if (!c->executor)
		return -ENOENT;
	if (c->exec_uid_only)
		return -EALREADY;
	if (!ptask_list_empty(&c->taken))
		return -EBUSY;
	c->exec_uid_only = true;
	c->exec_uid = uid;
	c->ns->uid_executors++;
	return 0;
}

/**
 * ptask_core_exec_set_process() - make executor @c the executor of one
 *	process
 * @c: a registered executor that has taken nothing yet
 * @uid: the process's uid
 * @pid: its pid key (struct ptask_caller.pid; a ptask's owner_pid)
 *
 * ptask_core_exec_set_uid() narrowed to the ptasks that process created
 * (ptaskd --executors process): the rules are the uid's, with (uid, pid)
 * for the uid, so another process's ptask, even of the same uid, is
 * another executor's, and what crosses between them goes through host
 * memory.  An executor of the process's uid alone is not asked for that
 * process's work while this one is registered.
 *
 * Return: as ptask_core_exec_set_uid().
 */
int ptask_core_exec_set_process(struct ptask_client *c, u32 uid, s32 pid)
{
	int err = ptask_core_exec_set_uid(c, uid);

	if (err)
		return err;
	c->exec_pid_only = true;
	c->exec_pid = pid;
	c->ns->pid_executors++;
	return 0;
}

/* Who reads what an output port emits (feeds()). */
#define FEEDS_PULL	BIT(0)	/* a client, from a graph output */
#define FEEDS_HOST_NOW	BIT(1)	/* a CPU ptask, a tunnel's batch */
#define FEEDS_GPU	BIT(2)	/* a GPU ptask */

/*
 * Who reads what output @port emits.  A pull can wait for a datablock
 * completed ahead to settle; a CPU ptask and a tunnel's output end
 * (which gathers its records into the batch at once) cannot.
 */
static u32 feeds(const struct ptask_port *port)
{
	const struct ptask_list *pos;
	u32 who = 0;

	ptask_list_for_each(pos, &port->outs) {
		const struct ptask_channel *ch = ptask_list_entry(pos,
				struct ptask_channel, src_node);

		/*
		 * Another uid's ptask, with executors per uid: its executor is
		 * another process, which reads the host pages.
		 */
		if (ch->tunnel || (ch->dst && ch->dst->ptask->kind == PTASK_KIND_CPU) ||
		    (ch->dst && port->ptask->graph->ns->uid_executors &&
		     ch->dst->ptask->owner_uid != port->ptask->owner_uid) ||
		    (ch->dst && port->ptask->graph->ns->pid_executors &&
		     ch->dst->ptask->owner_pid != port->ptask->owner_pid))
			who |= FEEDS_HOST_NOW;
		else if (!ch->dst)
			who |= FEEDS_PULL;
		else
			who |= FEEDS_GPU;
	}
	return who;
}

/*
 * Executor @c completed @inv with outputs @dbs (per port index of @last,
 * the ptask whose outputs the completion names): those GPU ptasks alone
 * read, and the inputs it wrote in place whose update GPU ptasks alone
 * read, may be current only on its device (a client's or host code's
 * reads were written back for them).  A datablock marked so is lost
 * with the executor (ptask_exec_lost()) and is read by no other
 * executor (held_elsewhere()).
 */
static void mark_device_held(struct ptask_client *c,
			     const struct ptask_invocation_rec *inv,
			     const struct ptask_ptask *last,
			     struct ptask_datablock *const *dbs)
{
	const struct ptask_ptask *p = inv->ptask;
	u32 i;

	if (!c->executor || inv->self)
		return;
	for (i = 0; i < last->nports; i++)
		if (dbs[i] && feeds(last->ports[i]) == FEEDS_GPU)
			dbs[i]->device_of = c->id;
	for (i = 0; i < p->nports && i < inv->nports; i++) {
		const struct ptask_port *port = p->ports[i];

		if (inv->inputs[i] && (port->flags & PTASK_PORT_INOUT) &&
		    port->inout_peer && feeds(port->inout_peer) == FEEDS_GPU)
			inv->inputs[i]->device_of = c->id;
	}
}

/* Does executor @e, of one uid (or process), take @p's invocations? */
static bool domain_of(const struct ptask_client *e,
		      const struct ptask_ptask *p)
{
	return e->exec_uid_only && e->exec_uid == p->owner_uid &&
	       (!e->exec_pid_only || e->exec_pid == p->owner_pid);
}

/*
 * Is an executor for @p's uid or process alone registered?  One of the
 * process's own comes first: an executor of the uid alone does not take
 * what that one serves.
 */
static bool has_own_executor(const struct ptask_ns *ns,
			     const struct ptask_ptask *p, bool by_process)
{
	const struct ptask_list *pos;

	ptask_list_for_each(pos, &ns->clients) {
		const struct ptask_client *e = ptask_list_entry(pos,
				struct ptask_client, ns_node);

		if (e->executor && domain_of(e, p) &&
		    (!by_process || e->exec_pid_only))
			return true;
	}
	return false;
}

/*
 * May executor @c take @p's invocations?  An executor of one uid takes
 * that uid's alone; any other takes those of the uids no executor of
 * their own serves (ptask_core_exec_set_uid()).
 */
static bool serves(const struct ptask_client *c, const struct ptask_ptask *p)
{
	if (c->exec_pid_only)
		return domain_of(c, p);
	if (c->exec_uid_only)
		return domain_of(c, p) && (!c->ns->pid_executors ||
					   !has_own_executor(c->ns, p, true));
	return !c->ns->uid_executors || !has_own_executor(c->ns, p, false);
}

/*
 * Does ready ptask @p read a datablock only another executor may hold
 * current (its output, headed here: ptaskd copies back only what a
 * client or host code reads)?  Then @c leaves it to that executor, which
 * reads it from its own device memory; @c would read stale host pages.
 */
static bool held_elsewhere(const struct ptask_client *c,
			   const struct ptask_ptask *p)
{
	u32 i;

	for (i = 0; i < p->nports; i++) {
		const struct ptask_datablock *db = p->ports[i]->occupant;

		if (p->ports[i]->kind != PTASK_PORT_OUTPUT && db &&
		    db->device_of && db->device_of != c->id)
			return true;
	}
	return false;
}

static void fill_port(struct ptask_invocation_port *rec,
		      const struct ptask_port *port,
		      struct ptask_datablock *db)
{
	memset(rec, 0, sizeof(*rec));
	rec->port = port->obj.handle;
	rec->index = port->index;
	rec->kind = port->kind;
	rec->flags = port->flags;
	rec->template = port->tmpl ? port->tmpl->obj.handle : 0;
	rec->param_index = port->param_index;
	rec->peer = port->inout_peer ? port->inout_peer->index :
		    PTASK_INVP_NO_PEER;
	if (db) {
		/* Made by a take ahead whose invocation has not settled. */
		if (db->writer && port->kind != PTASK_PORT_OUTPUT)
			rec->flags |= PTASK_INVP_PENDING;
		rec->datablock = db->obj.handle;
		rec->generation = db->generation;
		rec->mmap_offset = ptask_datablock_mmap_offset(db);
		rec->bytes = db->bytes;
		rec->records = db->records;
		db->executor_seen = true;	/* its death is noticed */
	} else if (port->tmpl) {
		rec->bytes = ptask_geom_bytes(&port->tmpl->geom);
	}
	if (port->kind == PTASK_PORT_OUTPUT) {
		u32 who = feeds(port);

		if (who & (FEEDS_PULL | FEEDS_HOST_NOW))
			rec->flags |= PTASK_INVP_TO_CLIENT;
		if (who == FEEDS_PULL)
			rec->flags |= PTASK_INVP_PULLED_ONLY;
	}
	if (port->tmpl)
		rec->flags |= port->tmpl->binding << PTASK_INVP_BIND_SHIFT;
}

static void fill_invocation(struct ptask_invocation *rec,
			    const struct ptask_invocation_rec *inv,
			    u32 first_port)
{
	const struct ptask_ptask *p = inv->ptask;

	memset(rec, 0, sizeof(*rec));
	rec->id = inv->id;
	rec->ptask = p->obj.handle;
	rec->graph = p->graph->obj.handle;
	rec->kind = p->kind;
	rec->owner_pid = p->owner_pid;
	rec->owner_uid = p->owner_uid;
	rec->static_prio = p->static_prio;
	rec->proxy_nice = p->proxy_nice;
	rec->first_port = first_port;
	rec->n_ports = p->nports;
	rec->queued_ns = p->queued_ns;
}

static void move_outputs(struct ptask_invocation_rec *inv,
			 struct ptask_datablock *const *dbs, bool ahead);

/*
 * PTASK_TAKE_AHEAD: may the core complete @p's invocation just taken
 * ahead itself?  A GPU ptask without in/out ports whose every output has
 * a template (the core makes its datablock) and is read by GPU ptasks
 * alone (a chain's hop: the executor orders their reads behind its
 * work), or by pulls alone (they wait for the settle) while @backlog:
 * the ptask's next invocation waits for this one.  A ptask without
 * outputs likewise only with @backlog.
 */
static bool can_take_ahead(const struct ptask_ptask *p, bool backlog)
{
	u32 i, outputs = 0;

	if (p->kind != PTASK_KIND_GPU)
		return false;
	for (i = 0; i < p->nports; i++) {
		const struct ptask_port *port = p->ports[i];
		u32 who;

		if (port->flags & PTASK_PORT_INOUT)
			return false;
		if (port->kind != PTASK_PORT_OUTPUT)
			continue;
		outputs++;
		if (!port->tmpl || port->inout_peer)
			return false;
		who = feeds(port);
		if (who != FEEDS_GPU && !(who == FEEDS_PULL && backlog))
			return false;
	}
	return outputs || backlog;
}

/*
 * Complete @inv ahead with output datablocks the core makes, named in
 * its port records @recs (PTASK_INV_AHEAD).  The invocation keeps one
 * reference to each (in @inv->inputs, at the output's index: the
 * executor may map it) until its settle.  Returns 0, or -ENOMEM or
 * -EDQUOT (the owner's uid is at its limit) with nothing changed (the
 * executor completes @inv itself then, and meets the same limit).
 */
static int take_ahead(struct ptask_client *c, struct ptask_invocation_rec *inv,
		      struct ptask_invocation_port *recs)
{
	struct ptask_datablock *dbs[PTASK_MAX_PORTS] = { NULL };
	struct ptask_ptask *p = inv->ptask;
	int err = 0;
	u32 i;

	for (i = 0; i < p->nports; i++) {
		struct ptask_port *port = p->ports[i];
		u64 bytes;

		if (port->kind != PTASK_PORT_OUTPUT)
			continue;
		bytes = ptask_geom_bytes(&port->tmpl->geom);
		err = ptask_datablock_alloc_output(c, p, bytes, &dbs[i]);
		if (!err && !ptask_port_accepts(port, dbs[i]))
			err = -ENOMEM;
		if (err)
			goto err_put;
	}
	for (i = 0; i < p->nports; i++) {
		if (!dbs[i])
			continue;
		recs[i].datablock = dbs[i]->obj.handle;
		dbs[i]->executor_seen = true;
		recs[i].generation = dbs[i]->generation;
		recs[i].mmap_offset = ptask_datablock_mmap_offset(dbs[i]);
		recs[i].bytes = dbs[i]->bytes;
		recs[i].records = dbs[i]->records;
		/* The allocation's reference: the invocation's now. */
		inv->inputs[i] = dbs[i];
	}
	move_outputs(inv, dbs, true);
	/*
	 * Outputs GPU ptasks read wait for the settle too: their takers
	 * learn it (PTASK_INVP_PENDING), since the executor may meet them in
	 * another take than this one's.
	 */
	for (i = 0; i < p->nports; i++) {
		if (!dbs[i])
			continue;
		/* the executor writes it on its device (mark_device_held) */
		if (feeds(p->ports[i]) == FEEDS_GPU)
			dbs[i]->device_of = c->id;
		if (dbs[i]->writer)
			continue;
		dbs[i]->writer = inv;
		ptask_list_add_tail(&dbs[i]->writer_node, &inv->written);
	}
	return 0;

err_put:
	for (i = 0; i < p->nports; i++)
		if (dbs[i])
			ptask_datablock_put(c->ns, dbs[i]);
	return err;
}

/*
 * PTASK_TAKE_OUTPUTS: make the datablocks of @inv's outputs that have a
 * template and are no in/out port's peer, named in its port records
 * @recs (PTASK_INVP_MADE) and held by the invocation (in @inv->inputs at
 * the output's index, as take_ahead's: EXEC_COMPLETE accepts them, and
 * they go with the invocation if the executor names none).  One that
 * cannot be made (-ENOMEM, -EDQUOT) is left to the executor, which meets
 * the same error.
 */
static void make_outputs(struct ptask_client *c,
			 struct ptask_invocation_rec *inv,
			 struct ptask_invocation_port *recs)
{
	struct ptask_ptask *p = inv->ptask;
	struct ptask_datablock *db;
	u64 bytes;
	u32 i;

	if (p->kind != PTASK_KIND_GPU)
		return;
	for (i = 0; i < p->nports; i++) {
		struct ptask_port *port = p->ports[i];

		if (port->kind != PTASK_PORT_OUTPUT || !port->tmpl ||
		    port->inout_peer || inv->inputs[i])
			continue;
		bytes = ptask_geom_bytes(&port->tmpl->geom);
		if (ptask_datablock_alloc_output(c, p, bytes, &db))
			continue;
		if (!ptask_port_accepts(port, db)) {
			ptask_datablock_put(c->ns, db);
			continue;
		}
		recs[i].datablock = db->obj.handle;
		db->executor_seen = true;
		recs[i].generation = db->generation;
		recs[i].mmap_offset = ptask_datablock_mmap_offset(db);
		recs[i].bytes = db->bytes;
		recs[i].records = db->records;
		recs[i].flags |= PTASK_INVP_MADE;
		/* The allocation's reference: the invocation's now. */
		inv->inputs[i] = db;
	}
}

/*
 * PTASK_TAKE_FUSE: may @port be one end of a segment's link?  Not in/out
 * or run-time (the executor needs the bytes on the host), and not
 * passed by value (likewise).
 */
static bool link_end_ok(const struct ptask_port *port)
{
	return !(port->flags & (PTASK_PORT_INOUT | PTASK_PORT_RUNTIME)) &&
	       !port->inout_peer &&
	       (!port->tmpl || port->tmpl->binding == PTASK_BIND_GLOBAL);
}

/* @p's one output port's one channel; NULL if it has other outputs. */
static struct ptask_channel *only_link(const struct ptask_ptask *p)
{
	const struct ptask_port *out = NULL;
	u32 i;

	for (i = 0; i < p->nports; i++) {
		if (p->ports[i]->kind != PTASK_PORT_OUTPUT)
			continue;
		if (out)
			return NULL;
		out = p->ports[i];
	}
	if (!out || ptask_list_empty(&out->outs) ||
	    out->outs.next->next != &out->outs)
		return NULL;
	return ptask_list_entry(out->outs.next, struct ptask_channel,
				src_node);
}

/**
 * ptask_fuse_link() - the ptask @p's one output feeds, through one channel
 * @p: a ptask
 *
 * The shape alone (a running graph's is fixed): how a segment's members
 * are found again from its first one at its completion.
 *
 * Return: that ptask, or NULL.
 */
struct ptask_ptask *ptask_fuse_link(const struct ptask_ptask *p)
{
	struct ptask_channel *ch = only_link(p);

	return ch && ch->dst ? ch->dst->ptask : NULL;
}

/*
 * PTASK_TAKE_FUSE: the ptask a segment may go on to after @p, or NULL.
 * The link: @p's one output port, with a template (the intermediate's
 * size), has one channel, empty and without a tunnel, to the one
 * plain input of @q (link_end_ok at both ends); @q's other non-output
 * ports are sticky and occupied; @q is a GPU ptask of @p's process, idle
 * (Waiting, nothing in flight or Settling), not PTASK_PTASK_SELF, without
 * in/out ports.  @q can then run only on what @p emits there (with the
 * sticky datablocks it holds), so running it right behind @p, with the
 * intermediate kept by the executor, is what the graph would do.
 */
static struct ptask_ptask *fuse_next(const struct ptask_ptask *p)
{
	struct ptask_channel *ch = only_link(p);
	struct ptask_ptask *q;
	u32 i;

	if (!ch || ch->tunnel || !ch->dst || ch->count || !ch->src->tmpl ||
	    ch->src->occupant || ch->dst->kind != PTASK_PORT_INPUT ||
	    ch->dst->occupant || !link_end_ok(ch->src) ||
	    !link_end_ok(ch->dst))
		return NULL;
	q = ch->dst->ptask;
	if (q->kind != PTASK_KIND_GPU || q->self || q->proc != p->proc ||
	    q->state != PTASK_STATE_WAITING || q->running ||
	    !ptask_list_empty(&q->ahead) || q->nopened != q->nports)
		return NULL;
	for (i = 0; i < q->nports; i++) {
		const struct ptask_port *port = q->ports[i];

		if ((port->flags & PTASK_PORT_INOUT) ||
		    (port->kind == PTASK_PORT_INPUT && port != ch->dst) ||
		    (port->kind == PTASK_PORT_STICKY && !port->occupant))
			return NULL;
	}
	return q;
}

/* @q's sticky ports. */
static u32 sticky_ports(const struct ptask_ptask *q)
{
	u32 i, n = 0;

	for (i = 0; i < q->nports; i++)
		n += q->ports[i]->kind == PTASK_PORT_STICKY;
	return n;
}

/* Has @p an in/out port (its output is its input's bytes)? */
static bool has_inout(const struct ptask_ptask *p)
{
	u32 i;

	for (i = 0; i < p->nports; i++)
		if (p->ports[i]->flags & PTASK_PORT_INOUT)
			return true;
	return false;
}

/*
 * PTASK_TAKE_FUSE: make @inv, just started, a segment of @p and the
 * ptasks fuse_next finds after it, as far as their records fit in
 * @room port records; they become Executing.  Returns the port records
 * it needs (@p's alone when it is no segment).
 */
static u32 fuse(struct ptask_invocation_rec *inv, u32 room)
{
	struct ptask_ptask *p = inv->ptask, *q = p, *r;
	u32 nports = q->nports, nsticky = 0, m, i;

	if (q->kind != PTASK_KIND_GPU || has_inout(q))
		return nports;
	while ((r = fuse_next(q)) && nports + r->nports <= room) {
		r->state = PTASK_STATE_EXECUTING;
		nports += r->nports;
		nsticky += sticky_ports(r);
		inv->members++;
		inv->tail = r;
		q = r;
	}
	if (!nsticky)
		return nports;
	/*
	 * The members' sticky datablocks stay the invocation's while it
	 * runs, as the first one's do (start()): a push may replace them.
	 */
	inv->sticky = ptask_os_zalloc(nsticky * sizeof(*inv->sticky));
	for (q = ptask_fuse_link(p), m = 1; m < inv->members;
	     q = ptask_fuse_link(q), m++) {
		if (!inv->sticky) {
			q->state = PTASK_STATE_WAITING;	/* no segment after all */
			continue;
		}
		for (i = 0; i < q->nports; i++) {
			struct ptask_datablock *db = q->ports[i]->occupant;

			if (q->ports[i]->kind != PTASK_PORT_STICKY)
				continue;
			ptask_datablock_get(db);
			inv->sticky[inv->nsticky++] = db;
		}
	}
	if (inv->sticky)
		return nports;
	inv->members = 1;
	inv->tail = NULL;
	return p->nports;
}

/*
 * The port records of segment @inv from @recs on: each member's ports in
 * turn, @member set; the two ends of each link PTASK_INVP_FUSED, without
 * a datablock, of the link's size; a later member's sticky ports with
 * the datablock the invocation holds (@inv->sticky, in the same order).
 */
static void fill_segment_ports(struct ptask_invocation_port *recs,
			       const struct ptask_invocation_rec *inv)
{
	const struct ptask_ptask *q = inv->ptask;
	u64 link_bytes = 0;
	u32 m, i, n = 0;

	for (m = 0; m < inv->members; m++, q = ptask_fuse_link(q)) {
		for (i = 0; i < q->nports; i++, n++) {
			const struct ptask_port *port = q->ports[i];
			bool out = port->kind == PTASK_PORT_OUTPUT;

			fill_port(&recs[n], port, !m ? inv->inputs[i] :
				  port->kind == PTASK_PORT_STICKY ?
				  port->occupant : NULL);
			recs[n].member = q->obj.handle;
			if (out && q != inv->tail) {
				recs[n].flags |= PTASK_INVP_FUSED;
				link_bytes = recs[n].bytes;
			} else if (m && port->kind == PTASK_PORT_INPUT) {
				recs[n].flags |= PTASK_INVP_FUSED;
				recs[n].bytes = link_bytes;
			}
		}
	}
}

/* Queued -> Executing: move the inputs of @p into a new invocation. */
static struct ptask_invocation_rec *start(struct ptask_client *c,
					  struct ptask_ptask *p)
{
	struct ptask_invocation_rec *inv = p->redo;
	u32 i;

	/* Requeued (PTASK_EXEC_COMPLETE_REQUEUE): it runs again as it was. */
	if (inv) {
		p->redo = NULL;
		inv->id = ptask_ns_invocation_id(c->ns);
		inv->executor = c;
		inv->self = p->self == c;
		ptask_list_add_tail(&inv->node, &c->taken);
		ptask_list_del(&p->ready_node);
		p->state = PTASK_STATE_EXECUTING;
		p->running = inv;
		ptask_sched_taken(c->ns, inv);
		return inv;
	}
	inv = ptask_os_zalloc(sizeof(*inv));
	if (!inv)
		return NULL;
	inv->id = ptask_ns_invocation_id(c->ns);
	inv->ptask = p;
	inv->executor = c;
	inv->self = p->self == c;
	inv->members = 1;
	inv->nports = p->nports;
	ptask_list_init(&inv->ahead_node);
	ptask_list_init(&inv->written);
	ptask_list_add_tail(&inv->node, &c->taken);
	ptask_list_del(&p->ready_node);
	p->state = PTASK_STATE_EXECUTING;
	p->running = inv;
	for (i = 0; i < p->nports; i++) {
		struct ptask_port *port = p->ports[i];

		if (port->kind == PTASK_PORT_OUTPUT)
			continue;
		inv->inputs[i] = port->occupant;
		if (port->kind == PTASK_PORT_STICKY)
			ptask_datablock_get(port->occupant);
		else
			port->occupant = NULL;
	}
	ptask_count_inc(c->ns, PTASK_COUNT_INVOCATIONS);
	ptask_sched_taken(c->ns, inv);
	return inv;
}

/**
 * ptask_core_exec_take() - PTASK_IOC_EXEC_TAKE
 * @c: the caller
 * @arg: the checked argument; @arg->n_invocations and @arg->n_ports set
 * @io: @io->invocations and @io->ports, room for the capped maxima
 *
 * Queued ptasks are taken in FIFO order, skipping those whose process is
 * held by its GPU budget (PTSched); @arg->policy says how the executor
 * should order what it took.
 *
 * Return: 0, -EPERM (not an executor, and no PTASK_TAKE_SELF), -ENOSPC
 * (the first queued invocation has more ports than @arg->max_ports),
 * -ENOMEM, or -EAGAIN when nothing eligible is queued (the shell sleeps
 * and retries).
 */
int ptask_core_exec_take(struct ptask_client *c, struct ptask_exec_take *arg,
			 const struct ptask_call_io *io)
{
	u32 max_inv = arg->max_invocations, max_ports = arg->max_ports;
	u32 n_inv = 0, n_ports = 0, seg_ports, i;
	struct ptask_list *ready = &c->ns->ready, *skipped;
	bool self = arg->flags & PTASK_TAKE_SELF, backlog;

	ptask_os_assert_locked(c->ns);
	if (self)
		ready = &c->self_ready;
	else if (!c->executor)
		return -EPERM;
	if (max_inv > PTASK_TAKE_MAX_INVOCATIONS)
		max_inv = PTASK_TAKE_MAX_INVOCATIONS;
	if (max_ports > PTASK_TAKE_MAX_PORTS)
		max_ports = PTASK_TAKE_MAX_PORTS;
	arg->policy = c->ns->sched.params.policy;
	arg->forgotten = c->forgotten_count;
	if (!self)
		ptask_core_sched_update(c->ns);
	/*
	 * Walk from the head past ineligible ptasks (@skipped: the last one,
	 * or the list head).  Taking a ptask refills its inputs, which may
	 * queue others at the tail: they are seen in this same walk.
	 */
	skipped = ready;
	while (n_inv < max_inv && skipped->next != ready) {
		struct ptask_ptask *p = ptask_list_entry(skipped->next,
				struct ptask_ptask, ready_node);
		struct ptask_invocation_rec *inv;

		if (!self && (!ptask_sched_eligible(c->ns, p) ||
			      !serves(c, p) || held_elsewhere(c, p))) {
			skipped = skipped->next;
			continue;
		}
		if (n_ports + p->nports > max_ports) {
			if (!n_inv)
				return -ENOSPC;
			break;
		}
		inv = start(c, p);
		if (!inv) {
			if (!n_inv)
				return -ENOMEM;
			break;
		}
		fill_invocation(&io->invocations[n_inv++], inv, n_ports);
		seg_ports = (arg->flags & PTASK_TAKE_FUSE) && !self ?
			    fuse(inv, max_ports - n_ports) : p->nports;
		if (inv->tail) {
			io->invocations[n_inv - 1].flags |= PTASK_INV_SEGMENT;
			io->invocations[n_inv - 1].n_ports = seg_ports;
			fill_segment_ports(&io->ports[n_ports], inv);
			n_ports += seg_ports;
		} else {
			for (i = 0; i < p->nports; i++)
				fill_port(&io->ports[n_ports++], p->ports[i],
					  inv->inputs[i]);
		}
		/* Records written: now the freed input ports may refill. */
		for (i = 0; i < p->nports; i++)
			if (p->ports[i]->kind == PTASK_PORT_INPUT)
				ptask_port_refill(p->ports[i]);
		/* Its next invocation waits only for this one to complete. */
		backlog = ptask_ptask_inputs_ready(p);
		if (backlog)
			io->invocations[n_inv - 1].flags |= PTASK_INV_BACKLOG;
		/*
		 * What this makes ready (the next hop, the ptask's own next
		 * invocation) is queued at the tail: this walk takes it too.
		 */
		if ((arg->flags & PTASK_TAKE_AHEAD) && !inv->tail &&
		    can_take_ahead(p, backlog) &&
		    !take_ahead(c, inv, &io->ports[n_ports - p->nports])) {
			io->invocations[n_inv - 1].flags |= PTASK_INV_AHEAD;
			ptask_ptask_try_finish(p);
		} else if ((arg->flags & PTASK_TAKE_OUTPUTS) && !inv->tail &&
			   !self) {
			make_outputs(c, inv, &io->ports[n_ports - p->nports]);
		}
	}
	if (!n_inv)
		return -EAGAIN;
	arg->n_invocations = n_inv;
	arg->n_ports = n_ports;
	return 0;
}

static struct ptask_invocation_rec *find_taken(struct ptask_client *c, u64 id)
{
	struct ptask_list *pos;

	ptask_list_for_each(pos, &c->taken) {
		struct ptask_invocation_rec *inv = ptask_list_entry(pos,
				struct ptask_invocation_rec, node);

		if (inv->id == id)
			return inv;
	}
	return NULL;
}

/**
 * ptask_invocation_output_of() - the ptask whose output @c makes for
 *	taken invocation @id (PTASK_DATABLOCK_CREATE_OUTPUT)
 * @c: the caller
 * @id: the invocation
 * @p: set to its ptask, or NULL when its graph went away (the output
 *	is then @c's own, and dropped with the invocation)
 *
 * Return: 0, -EPERM (@c took no such invocation and is no executor), or
 * -ENOENT (an executor that did not take @id).
 */
int ptask_invocation_output_of(struct ptask_client *c, u64 id,
			       struct ptask_ptask **p)
{
	struct ptask_invocation_rec *inv = find_taken(c, id);

	ptask_os_assert_locked(c->ns);
	if (!inv)
		return c->executor ? -ENOENT : -EPERM;
	*p = inv->ptask;
	return 0;
}

/* Drop the executor's hold on each distinct output it handed over. */
static void hand_over(struct ptask_client *c,
		      const struct ptask_exec_output *outs, u32 n)
{
	u32 i, j;

	for (i = 0; i < n; i++) {
		struct ptask_obj *o = ptask_core_ns_find(c->ns, outs[i].datablock,
							 PTASK_OBJ_DATABLOCK);
		struct ptask_hold *h;
		bool seen = false;

		for (j = 0; j < i; j++)
			seen |= outs[j].datablock == outs[i].datablock;
		if (!o || seen)
			continue;
		h = ptask_client_find_hold(c, ptask_container_of(o, struct
							ptask_datablock, obj));
		if (h)
			ptask_client_unhold(c, h);
	}
}

static bool is_input(const struct ptask_invocation_rec *inv,
		     const struct ptask_datablock *db)
{
	u32 i;

	for (i = 0; i < inv->nports; i++)
		if (inv->inputs[i] == db)
			return true;
	return false;
}

/*
 * Check every output before anything changes (nothing half-applied), in
 * passes so the error does not depend on the order of the array: the port
 * indices (-EINVAL), then the datablocks (-ENOENT), then the templates
 * (-EPROTOTYPE).
 */
static int check_outputs(struct ptask_client *c,
			 const struct ptask_invocation_rec *inv,
			 const struct ptask_exec_output *outs, u32 n,
			 struct ptask_datablock **dbs)
{
	/* a segment emits its last ptask's outputs */
	const struct ptask_ptask *p = inv->tail ? inv->tail : inv->ptask;
	u32 i, outputs = 0;
	u64 seen = 0;

	for (i = 0; i < p->nports; i++)
		outputs += p->ports[i]->kind == PTASK_PORT_OUTPUT;
	for (i = 0; i < n; i++) {
		u32 idx = outs[i].index;

		if (idx >= p->nports ||
		    p->ports[idx]->kind != PTASK_PORT_OUTPUT ||
		    (seen & BIT_ULL(idx)))
			return -EINVAL;
		seen |= BIT_ULL(idx);
	}
	if (n != outputs)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		struct ptask_obj *o = ptask_core_ns_find(c->ns, outs[i].datablock,
							 PTASK_OBJ_DATABLOCK);
		u32 idx = outs[i].index;

		if (!o)
			return -ENOENT;
		dbs[idx] = ptask_container_of(o, struct ptask_datablock, obj);
		if (!ptask_client_find_hold(c, dbs[idx]) &&
		    !is_input(inv, dbs[idx]))
			return -ENOENT;
	}
	for (i = 0; i < n; i++)
		if (!ptask_port_accepts(p->ports[outs[i].index],
					dbs[outs[i].index]))
			return -EPROTOTYPE;
	return 0;
}

/*
 * Does host code read what some output of @p emits as soon as it is
 * there (a CPU ptask, a tunnel): never completed ahead then.
 */
static bool feeds_host_now(const struct ptask_ptask *p)
{
	u32 i;

	for (i = 0; i < p->nports; i++)
		if (p->ports[i]->kind == PTASK_PORT_OUTPUT &&
		    (feeds(p->ports[i]) & FEEDS_HOST_NOW))
			return true;
	return false;
}

/*
 * An ahead completion's outputs that clients pull wait for its settle:
 * each may wait for one writer at a time (-EINVAL: already waiting for
 * another, so bytes written in place by two invocations ahead).
 */
static int check_written(const struct ptask_ptask *p,
			 struct ptask_datablock *const *dbs)
{
	u32 i;

	for (i = 0; i < p->nports; i++)
		if (dbs[i] && dbs[i]->writer &&
		    (feeds(p->ports[i]) & FEEDS_PULL))
			return -EINVAL;
	return 0;
}

/* Make @inv the writer of its outputs that clients pull (check_written). */
static void mark_written(struct ptask_invocation_rec *inv,
			 struct ptask_datablock *const *dbs)
{
	const struct ptask_ptask *p = inv->ptask;
	u32 i;

	for (i = 0; i < p->nports; i++) {
		struct ptask_datablock *db = dbs[i];

		if (!db || db->writer || !(feeds(p->ports[i]) & FEEDS_PULL))
			continue;
		db->writer = inv;
		db->writer_pulled = true;
		ptask_list_add_tail(&db->writer_node, &inv->written);
	}
}

/*
 * PTASK_EXEC_COMPLETE_SETTLE of @inv, completed ahead: charge its device
 * time; a failure fails its graph.  Then it is no longer taken.
 */
/* A failed invocation of @p: counted, and why, for the admin tools. */
static void note_failure(struct ptask_ptask *p,
			 const struct ptask_exec_complete *arg)
{
	p->failures++;
	p->last_error = arg->status;
	p->error_code = arg->error_code;
}

static int settle(struct ptask_client *c, struct ptask_invocation_rec *inv,
		  const struct ptask_exec_complete *arg)
{
	struct ptask_ptask *p = inv->ptask;

	if (!inv->ahead)
		return -EINVAL;
	ptask_sched_charge(c->ns, inv, arg->gpu_ns);
	if (p) {
		p->gpu_ns += arg->gpu_ns;
		if (arg->accel)
			p->last_accel = arg->accel;
		/* Orphans @inv (and the graph's other Settling ones). */
		if (arg->status < 0) {
			note_failure(p, arg);
			ptask_graph_stop(p->graph, PTASK_GRAPH_FAILED);
		}
		/* Its outputs in graph outputs may be pulled now. */
		else if (release_written(inv))
			ptask_graph_wake(p->graph);
	}
	invocation_free(c->ns, inv);
	ptask_core_sched_update(c->ns);
	return p ? 0 : -ECANCELED;
}

/*
 * Executing -> Completed: @dbs (per port index, one reference taken for
 * each output port) become the occupants of @inv's output ports and
 * drain downstream.  @ahead: @inv stays taken, Settling, and the pulls
 * of its outputs in graph outputs wait for its settle; else it is freed.
 * The caller then lets the ptask go on (ptask_ptask_try_finish: the
 * drains may not have emptied every port yet).
 */
static void move_outputs(struct ptask_invocation_rec *inv,
			 struct ptask_datablock *const *dbs, bool ahead)
{
	struct ptask_ptask *p = inv->ptask;
	u32 i;

	for (i = 0; i < p->nports; i++) {
		if (!dbs[i])
			continue;
		ptask_datablock_get(dbs[i]);
		p->ports[i]->occupant = dbs[i];
	}
	/* Before they move on: a pull must not take them before the settle. */
	if (ahead)
		mark_written(inv, dbs);
	p->invocations++;
	p->running = NULL;
	p->state = PTASK_STATE_COMPLETED;
	if (ahead) {
		/* Settling: still running for PTSched, until the settle. */
		inv->ahead = true;
		ptask_list_add_tail(&inv->ahead_node, &p->ahead);
	} else {
		invocation_free(p->graph->ns, inv);
	}
	for (i = 0; i < p->nports; i++)
		if (p->ports[i]->kind == PTASK_PORT_OUTPUT)
			ptask_port_drain(p->ports[i]);
}

/*
 * Segment @inv completed (plainly): every member counts an invocation,
 * an equal share of @gpu_ns and @accel; @dbs (per port index of its
 * last ptask, one reference taken for each) move on from there as
 * move_outputs would; @inv is freed.  The caller lets the first ptask
 * go on (ptask_ptask_try_finish).
 */
static void segment_done(struct ptask_invocation_rec *inv,
			 struct ptask_datablock *const *dbs, u64 gpu_ns,
			 u32 accel)
{
	struct ptask_ptask *p = inv->ptask, *tail = inv->tail, *q = p;
	u64 share = gpu_ns / inv->members;
	u32 i;

	for (;;) {
		q->invocations++;
		q->gpu_ns += share;
		if (accel)
			q->last_accel = accel;
		if (q == tail)
			break;
		if (q != p)
			q->state = PTASK_STATE_WAITING;
		q = ptask_fuse_link(q);
		/* a running graph's shape does not change */
		if (PTASK_WARN_ON(!q))
			return;
	}
	for (i = 0; i < tail->nports; i++) {
		if (!dbs[i])
			continue;
		ptask_datablock_get(dbs[i]);
		tail->ports[i]->occupant = dbs[i];
	}
	tail->state = PTASK_STATE_COMPLETED;
	p->running = NULL;
	p->state = PTASK_STATE_COMPLETED;
	invocation_free(p->graph->ns, inv);
	for (i = 0; i < tail->nports; i++)
		if (tail->ports[i]->kind == PTASK_PORT_OUTPUT)
			ptask_port_drain(tail->ports[i]);
	ptask_ptask_try_finish(tail);
}

/**
 * ptask_core_exec_complete() - PTASK_IOC_EXEC_COMPLETE
 * @c: the caller
 * @arg: the checked argument
 * @io: @io->outputs, @arg->n_outputs entries copied in by the shell
 *
 * Plain: Executing -> Completed, the invocation freed.  With
 * PTASK_EXEC_COMPLETE_AHEAD: the ptask goes on the same way (its outputs
 * move on), but the invocation stays taken, Settling (@inv->ahead),
 * until PTASK_EXEC_COMPLETE_SETTLE gives its status and device time
 * (settle()).  Documentation/core.md, "Completion ahead".
 *
 * An output completed ahead into a graph output is pulled only once the
 * invocation settled (a pull meanwhile is -EAGAIN: it waits).
 *
 * Return: 0, -EPERM, -ENOENT, -EINVAL (also: AHEAD where an output feeds
 * a CPU ptask or a tunnel, or is a datablock pulls already wait for the
 * settle of another; AHEAD or a plain completion of a Settling
 * invocation, SETTLE of one that is not), -EPROTOTYPE, or -ECANCELED
 * when the invocation's graph went away (its outputs are released all
 * the same).
 */
/*
 * PTASK_EXEC_COMPLETE_REQUEUE: may @inv run again as it was taken?  Not
 * when it wrote an input in place, was a segment or completed ahead, or
 * reads a datablock current only on its executor's device (lost with
 * it: ptask_exec_lost()).
 */
static bool can_requeue(const struct ptask_client *c,
			const struct ptask_invocation_rec *inv)
{
	const struct ptask_ptask *p = inv->ptask;
	u32 i;

	if (!p || inv->tail || inv->ahead || inv->self)
		return false;
	for (i = 0; i < p->nports; i++) {
		const struct ptask_port *port = p->ports[i];

		if (port->kind == PTASK_PORT_OUTPUT)
			continue;
		if (port->flags & PTASK_PORT_INOUT)
			return false;
		if (inv->inputs[i] && inv->inputs[i]->device_of == c->id)
			return false;
	}
	return true;
}

/*
 * Give @inv back to its ptask, Queued again at the ready list's tail, to
 * be taken (by any executor that serves it) before the ptask's next
 * invocation: start() takes it as it is.  Outputs the core made for it
 * (PTASK_TAKE_OUTPUTS) go; the next take makes new ones.
 */
static void requeue(struct ptask_client *c, struct ptask_invocation_rec *inv)
{
	struct ptask_ptask *p = inv->ptask;
	u32 i;

	for (i = 0; i < p->nports; i++)
		if (p->ports[i]->kind == PTASK_PORT_OUTPUT && inv->inputs[i]) {
			ptask_datablock_put(c->ns, inv->inputs[i]);
			inv->inputs[i] = NULL;
		}
	ptask_list_del(&inv->node);
	ptask_list_init(&inv->node);
	ptask_sched_untake(c->ns, inv);
	inv->executor = NULL;
	p->running = NULL;
	p->redo = inv;
	p->requeued++;
	p->state = PTASK_STATE_QUEUED;
	p->queued_ns = ptask_os_now_ns();
	ptask_list_add_tail(&p->ready_node, &c->ns->ready);
	ptask_core_exec_wake(c->ns);
}

/**
 * ptask_redo_free() - drop @p's requeued invocation (its graph stops)
 * @p: the ptask
 */
void ptask_redo_free(struct ptask_ptask *p)
{
	struct ptask_invocation_rec *inv = p->redo;

	if (!inv)
		return;
	p->redo = NULL;
	invocation_free(p->graph->ns, inv);
}

int ptask_core_exec_complete(struct ptask_client *c,
			     struct ptask_exec_complete *arg,
			     const struct ptask_call_io *io)
{
	struct ptask_datablock *dbs[PTASK_MAX_PORTS] = { NULL };
	bool ahead = arg->flags & PTASK_EXEC_COMPLETE_AHEAD;
	struct ptask_invocation_rec *inv;
	struct ptask_ptask *p;
	int err;

	ptask_os_assert_locked(c->ns);
	inv = find_taken(c, arg->id);
	if (!inv)
		return c->executor ? -ENOENT : -EPERM;
	if (arg->flags & PTASK_EXEC_COMPLETE_SETTLE)
		return settle(c, inv, arg);
	if (inv->ahead || (ahead && inv->tail))
		return -EINVAL;
	p = inv->ptask;
	if ((arg->flags & PTASK_EXEC_COMPLETE_REQUEUE) && can_requeue(c, inv)) {
		/* Lost work used the GPU all the same. */
		ptask_sched_charge(c->ns, inv, arg->gpu_ns);
		requeue(c, inv);
		ptask_core_sched_update(c->ns);
		return 0;
	}
	/* Host code would read bytes the device has not written yet. */
	if (ahead && p && feeds_host_now(p))
		return -EINVAL;
	if (!p || arg->status < 0) {
		/* Failed or cancelled work used the GPU all the same. */
		ptask_sched_charge(c->ns, inv, arg->gpu_ns);
		hand_over(c, io->outputs, arg->n_outputs);
		if (p && arg->status < 0)
			note_failure(p, arg);
		if (p)
			ptask_graph_stop(p->graph, PTASK_GRAPH_FAILED);
		invocation_free(c->ns, inv);
		ptask_core_sched_update(c->ns);
		return p ? 0 : -ECANCELED;
	}
	err = check_outputs(c, inv, io->outputs, arg->n_outputs, dbs);
	if (!err && ahead)
		err = check_written(p, dbs);
	if (err)
		return err;
	/* Ahead: charged once, by the settle, with its real device time. */
	if (!ahead)
		ptask_sched_charge(c->ns, inv, arg->gpu_ns);
	mark_device_held(c, inv, inv->tail ?: p, dbs);
	if (inv->tail) {
		segment_done(inv, dbs, arg->gpu_ns, arg->accel);
		hand_over(c, io->outputs, arg->n_outputs);
		ptask_ptask_try_finish(p);
		ptask_core_sched_update(c->ns);
		return 0;
	}
	if (arg->accel)
		p->last_accel = arg->accel;
	p->gpu_ns += arg->gpu_ns;
	move_outputs(inv, dbs, ahead);
	/* The output ports hold them now: the executor's holds go. */
	hand_over(c, io->outputs, arg->n_outputs);
	ptask_ptask_try_finish(p);
	ptask_core_sched_update(c->ns);
	return 0;
}

/**
 * ptask_core_exec_ptask_info() - PTASK_IOC_EXEC_PTASK_INFO
 * @c: the caller
 * @arg: the checked argument; filled on success
 * @io: @io->code_out with @io->code_out_len bytes for the code
 *
 * Return: 0, -EPERM, -ENOENT, or -ENOSPC when @arg->code is set but
 * @arg->code_len is smaller than the code.
 */
int ptask_core_exec_ptask_info(struct ptask_client *c,
			       struct ptask_exec_ptask_info *arg,
			       const struct ptask_call_io *io)
{
	struct ptask_ptask *p;
	struct ptask_obj *o;

	ptask_os_assert_locked(c->ns);
	if (!c->executor)
		return -EPERM;
	o = ptask_core_ns_find(c->ns, arg->ptask, PTASK_OBJ_PTASK);
	if (!o)
		return -ENOENT;
	p = ptask_container_of(o, struct ptask_ptask, obj);
	p->executor_seen = true;	/* its death is noticed */
	if (arg->code) {
		if (arg->code_len < p->code_len ||
		    io->code_out_len < p->code_len)
			return -ENOSPC;
		/* A CPU ptask has no code: p->code is NULL (memcpy's UB). */
		if (p->code_len)
			memcpy(io->code_out, p->code, p->code_len);
	}
	arg->kind = p->kind;
	arg->nports = p->nports;
	arg->code_len = p->code_len;
	arg->shared_bytes = p->shared_bytes;
	memcpy(arg->grid, p->grid, sizeof(arg->grid));
	memcpy(arg->block, p->block, sizeof(arg->block));
	memcpy(arg->entry, p->entry, sizeof(arg->entry));
	return 0;
}
