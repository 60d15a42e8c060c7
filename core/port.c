// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * port.c - ports: an input port pulls from its channel while Unoccupied
 * (a sticky one also whenever a newer datablock arrives, replacing the one
 * it keeps), and an output port pushes to all its channels at once when
 * every one of them has room.
 */
#include "ptask_core.h"

static int port_template(struct ptask_client *c, struct ptask_ptask *p,
			 u32 handle, struct ptask_template **out)
{
	struct ptask_obj *o;
	int err;

	*out = NULL;
	if (!handle)
		return 0;
	o = ptask_obj_get(c, handle, PTASK_OBJ_TEMPLATE, &err);
	if (!o)
		return err;
	*out = ptask_container_of(o, struct ptask_template, obj);
	return (*out)->graph == p->graph ? 0 : -EINVAL;
}

static int port_peer(struct ptask_client *c, struct ptask_ptask *p,
		     const struct ptask_port_open *arg, struct ptask_port **out)
{
	struct ptask_port *peer;
	struct ptask_obj *o;
	int err;

	*out = NULL;
	if (!(arg->flags & PTASK_PORT_INOUT))
		return 0;
	o = ptask_obj_get(c, arg->inout_peer, PTASK_OBJ_PORT, &err);
	if (!o)
		return err;
	peer = ptask_container_of(o, struct ptask_port, obj);
	if (peer->ptask != p || peer->kind != PTASK_PORT_OUTPUT)
		return -EINVAL;
	*out = peer;
	return 0;
}

/**
 * ptask_core_port_open() - PTASK_IOC_PORT_OPEN
 * @c: the caller
 * @arg: the checked argument; @arg->handle and @arg->index set on success
 *
 * Return: 0, -ENOENT, -EACCES, -ESHUTDOWN, -EIO, -EINVAL (template of
 * another graph, bad in/out peer), -EBUSY (graph running), -ENOSPC (all
 * ports opened) or -ENOMEM.
 */
int ptask_core_port_open(struct ptask_client *c, struct ptask_port_open *arg)
{
	struct ptask_template *tmpl;
	struct ptask_port *port, *peer;
	struct ptask_ptask *p;
	struct ptask_obj *o;
	int err;

	ptask_os_assert_locked(c->ns);
	o = ptask_obj_get(c, arg->ptask, PTASK_OBJ_PTASK, &err);
	if (!o)
		return err;
	p = ptask_container_of(o, struct ptask_ptask, obj);
	err = port_template(c, p, arg->template, &tmpl);
	if (err)
		return err;
	err = port_peer(c, p, arg, &peer);
	if (err)
		return err;
	if (p->graph->state == PTASK_GRAPH_RUNNING)
		return -EBUSY;
	if (p->nopened == p->nports)
		return -ENOSPC;
	port = ptask_os_zalloc(sizeof(*port));
	if (!port)
		return -ENOMEM;
	err = ptask_ns_add(c->ns, &port->obj, PTASK_OBJ_PORT);
	if (err) {
		ptask_os_free(port);
		return err;
	}
	port->ptask = p;
	port->kind = arg->kind;
	port->flags = arg->flags;
	port->index = p->nopened;
	port->param_index = arg->param_index;
	port->inout_peer = peer;
	port->tmpl = tmpl;
	ptask_list_init(&port->outs);
	memcpy(port->name, arg->name, sizeof(port->name));
	p->ports[p->nopened++] = port;
	ptask_count_inc(c->ns, PTASK_COUNT_PORTS);
	arg->handle = port->obj.handle;
	arg->index = port->index;
	return 0;
}

/**
 * ptask_port_refill() - an input port takes what its channel offers
 * @port: an input or sticky port
 *
 * An Unoccupied input takes the oldest datablock; a sticky port takes
 * every newer one, keeping the newest.  Taking makes room in the channel,
 * which may let the upstream output port drain into it again; the room is
 * announced only once this port's state is settled, so that re-entry sees
 * it served and the recursion stays shallow.
 */
void ptask_port_refill(struct ptask_port *port)
{
	struct ptask_channel *in = port->in;
	bool took = false;

	ptask_os_assert_locked(port->ptask->graph->ns);
	if (!in || port->kind == PTASK_PORT_OUTPUT)
		return;
	while (in->count && (!port->occupant ||
			     port->kind == PTASK_PORT_STICKY)) {
		struct ptask_datablock *db = ptask_channel_take(in);

		if (port->occupant)
			ptask_datablock_put(in->graph->ns, port->occupant);
		port->occupant = db;
		took = true;
	}
	if (took)
		ptask_channel_room(in);
	ptask_ptask_try_queue(port->ptask);
}

/**
 * ptask_port_drain() - an output port pushes its datablock downstream
 * @port: an output port
 *
 * Only when every channel of the port has room (fan-out is all or
 * nothing), so a slow consumer holds the port, and with it the ptask, in
 * Completed.  A port with no channel drops its datablock.
 */
void ptask_port_drain(struct ptask_port *port)
{
	struct ptask_ns *ns = port->ptask->graph->ns;
	struct ptask_datablock *db = port->occupant;
	struct ptask_list *pos;

	ptask_os_assert_locked(ns);
	if (!db)
		return;
	ptask_list_for_each(pos, &port->outs) {
		struct ptask_channel *ch = ptask_list_entry(pos,
				struct ptask_channel, src_node);

		if (ptask_channel_full(ch))
			return;
	}
	/* Unoccupied before the puts: they may re-enter this function. */
	port->occupant = NULL;
	ptask_list_for_each(pos, &port->outs) {
		ptask_datablock_get(db);
		ptask_channel_put(ptask_list_entry(pos, struct ptask_channel,
						   src_node), db);
	}
	ptask_datablock_put(ns, db);
	ptask_ptask_try_finish(port->ptask);
}

/**
 * ptask_port_accepts() - may output @port emit @db?
 * @port: an output port
 * @db: the datablock
 *
 * Return: true when @db fits the port's template, and every channel of the
 * port and the port at its far end.
 */
bool ptask_port_accepts(const struct ptask_port *port,
			const struct ptask_datablock *db)
{
	struct ptask_list *pos;

	if (!ptask_datablock_fits(db, port->tmpl))
		return false;
	ptask_list_for_each(pos, &port->outs) {
		struct ptask_channel *ch = ptask_list_entry(pos,
				struct ptask_channel, src_node);

		if (!ptask_datablock_fits(db, ch->tmpl) ||
		    (ch->dst && !ptask_datablock_fits(db, ch->dst->tmpl)))
			return false;
	}
	return true;
}

/**
 * ptask_port_free() - free a port with its ptask
 * @port: the port; its channels are already freed
 */
void ptask_port_free(struct ptask_port *port)
{
	struct ptask_ns *ns = port->ptask->graph->ns;

	PTASK_WARN_ON(port->in || !ptask_list_empty(&port->outs));
	if (port->occupant)
		ptask_datablock_put(ns, port->occupant);
	ptask_ns_remove(ns, &port->obj);
	ptask_count_dec(ns, PTASK_COUNT_PORTS);
	ptask_os_free(port);
}
