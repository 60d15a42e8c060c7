// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * channel.c - channels: bounded FIFOs of datablocks between an output
 * port (or a pushing client) and an input port (or a pulling client).
 *
 * Moving a datablock has two halves: the FIFO operation itself and the
 * notification of whoever waits on the other end (the downstream port
 * refills, the upstream port drains, sleeping clients wake).  The halves
 * are separate functions so a caller finishes its own state change before
 * the notification can re-enter it.
 */
#include "ptask_core.h"

/**
 * ptask_channel_full() - has @ch reached its capacity?
 * @ch: the channel
 *
 * Return: true if a put would overflow it.
 */
bool ptask_channel_full(const struct ptask_channel *ch)
{
	if (ch->tunnel)
		return ptask_tunnel_full(ch);
	return ch->count == ch->capacity;
}

/**
 * ptask_channel_put() - append @db and tell the consumer
 * @ch: a channel with room
 * @db: the datablock; the caller passes one reference to the channel
 */
void ptask_channel_put(struct ptask_channel *ch, struct ptask_datablock *db)
{
	ptask_os_assert_locked(ch->graph->ns);
	if (PTASK_WARN_ON(ptask_channel_full(ch))) {
		ptask_datablock_put(ch->graph->ns, db);
		return;
	}
	/* A tunnel's output end takes it by batch, not in its slots. */
	if (ch->tunnel && ptask_tunnel_put(ch, db))
		return;
	ch->slots[(ch->head + ch->count) % ch->capacity] = db;
	ch->count++;
	if (ch->dst)
		ptask_port_refill(ch->dst);
	else
		ptask_graph_wake(ch->graph);
}

/**
 * ptask_channel_take() - remove the oldest datablock, without notifying
 * @ch: a non-empty channel
 *
 * The caller calls ptask_channel_room() once its own state is settled.
 *
 * Return: the datablock, with the channel's reference passed to the caller.
 */
struct ptask_datablock *ptask_channel_take(struct ptask_channel *ch)
{
	struct ptask_datablock *db = ch->slots[ch->head];

	ptask_os_assert_locked(ch->graph->ns);
	ch->slots[ch->head] = NULL;
	ch->head = (ch->head + 1) % ch->capacity;
	ch->count--;
	return db;
}

/**
 * ptask_channel_room() - tell the producer of @ch that it has room
 * @ch: the channel
 */
void ptask_channel_room(struct ptask_channel *ch)
{
	ptask_os_assert_locked(ch->graph->ns);
	if (ch->src)
		ptask_port_drain(ch->src);
	else
		ptask_graph_wake(ch->graph);
}

/**
 * ptask_channel_flush() - drop every datablock queued on @ch
 * @ch: the channel
 */
void ptask_channel_flush(struct ptask_channel *ch)
{
	if (ch->tunnel)
		ptask_tunnel_flush(ch);
	while (ch->count)
		ptask_datablock_put(ch->graph->ns, ptask_channel_take(ch));
}

static int channel_port(struct ptask_client *c, struct ptask_graph *g,
			u32 handle, bool output, struct ptask_port **out)
{
	struct ptask_port *port;
	struct ptask_obj *o;
	bool is_output;
	int err;

	*out = NULL;
	if (!handle)
		return 0;
	o = ptask_obj_get(c, handle, PTASK_OBJ_PORT, &err);
	if (!o)
		return err;
	port = ptask_container_of(o, struct ptask_port, obj);
	is_output = port->kind == PTASK_PORT_OUTPUT;
	if (port->ptask->graph != g || is_output != output)
		return -EINVAL;
	*out = port;
	return 0;
}

static bool templates_agree(const struct ptask_template *a,
			    const struct ptask_template *b)
{
	return !a || !b || ptask_geom_equal(&a->geom, &b->geom);
}

struct channel_ends {
	struct ptask_graph *graph;
	struct ptask_port *src;
	struct ptask_port *dst;
	struct ptask_template *tmpl;
};

static int channel_resolve(struct ptask_client *c,
			   const struct ptask_channel_open *arg,
			   struct channel_ends *e)
{
	struct ptask_obj *o;
	int err;

	e->graph = ptask_graph_get(c, arg->graph, &err);
	if (!e->graph)
		return err;
	err = channel_port(c, e->graph, arg->src, true, &e->src);
	if (err)
		return err;
	err = channel_port(c, e->graph, arg->dst, false, &e->dst);
	if (err)
		return err;
	e->tmpl = NULL;
	if (arg->template) {
		o = ptask_obj_get(c, arg->template, PTASK_OBJ_TEMPLATE, &err);
		if (!o)
			return err;
		e->tmpl = ptask_container_of(o, struct ptask_template, obj);
		if (e->tmpl->graph != e->graph)
			return -EINVAL;
	}
	if (!templates_agree(e->tmpl, e->src ? e->src->tmpl : NULL) ||
	    !templates_agree(e->tmpl, e->dst ? e->dst->tmpl : NULL) ||
	    !templates_agree(e->src ? e->src->tmpl : NULL,
			     e->dst ? e->dst->tmpl : NULL))
		return -EPROTOTYPE;
	if (e->graph->state == PTASK_GRAPH_RUNNING || (e->dst && e->dst->in))
		return -EBUSY;
	return 0;
}

/**
 * ptask_core_channel_open() - PTASK_IOC_CHANNEL_OPEN
 * @c: the caller
 * @arg: the checked argument; @arg->handle set on success
 *
 * Return: 0, -ENOENT, -EACCES, -ESHUTDOWN, -EIO, -EINVAL (an end of the
 * wrong direction or graph), -EPROTOTYPE (templates disagree), -EBUSY
 * (the input port has its channel) or -ENOMEM; with PTASK_CHANNEL_TUNNEL
 * also what ptask_tunnel_attach() returns, with PTASK_CHANNEL_TUNNEL_SET what
 * ptask_core_tunnel_set() does.
 */
int ptask_core_channel_open(struct ptask_client *c, struct ptask_channel_open *arg)
{
	struct channel_ends e;
	struct ptask_channel *ch;
	int err;

	ptask_os_assert_locked(c->ns);
	if (arg->flags & PTASK_CHANNEL_TUNNEL_SET)
		return ptask_core_tunnel_set(c, arg);
	memset(&e, 0, sizeof(e));
	err = channel_resolve(c, arg, &e);
	if (err)
		return err;
	ch = ptask_os_zalloc(sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	ch->slots = ptask_os_zalloc(sizeof(*ch->slots) * arg->capacity);
	if (!ch->slots) {
		err = -ENOMEM;
		goto err_free_channel;
	}
	err = ptask_ns_add(c->ns, &ch->obj, PTASK_OBJ_CHANNEL);
	if (err)
		goto err_free_slots;
	ch->graph = e.graph;
	ch->src = e.src;
	ch->dst = e.dst;
	ch->tmpl = e.tmpl;
	ch->capacity = arg->capacity;
	if (arg->flags & PTASK_CHANNEL_TUNNEL) {
		err = ptask_tunnel_attach(ch, arg);
		if (err)
			goto err_remove;
	}
	memcpy(ch->name, arg->name, sizeof(ch->name));
	ptask_list_add_tail(&ch->node, &e.graph->channels);
	ptask_list_init(&ch->src_node);
	if (e.src)
		ptask_list_add_tail(&ch->src_node, &e.src->outs);
	if (e.dst)
		e.dst->in = ch;
	ptask_count_inc(c->ns, PTASK_COUNT_CHANNELS);
	arg->handle = ch->obj.handle;
	return 0;

err_remove:
	ptask_ns_remove(c->ns, &ch->obj);
err_free_slots:
	ptask_os_free(ch->slots);
err_free_channel:
	ptask_os_free(ch);
	return err;
}

static struct ptask_channel *channel_get(struct ptask_client *c, u32 handle,
					 int *err)
{
	struct ptask_obj *o = ptask_obj_get(c, handle, PTASK_OBJ_CHANNEL, err);

	return o ? ptask_container_of(o, struct ptask_channel, obj) : NULL;
}

/* Would @db, with @records records, fit @ch and the port behind it? */
static bool push_fits(const struct ptask_channel *ch,
		      const struct ptask_datablock *db, u64 records)
{
	struct ptask_datablock probe = *db;

	probe.records = records;
	return ptask_datablock_fits(&probe, ch->tmpl) &&
	       (!ch->dst || ptask_datablock_fits(&probe, ch->dst->tmpl));
}

/**
 * ptask_core_channel_push() - PTASK_IOC_PUSH
 * @c: the caller
 * @arg: the checked argument
 *
 * Return: 0, -ENOENT (no such channel, or a datablock the caller does not
 * hold), -EACCES, -ESHUTDOWN, -EIO, -EINVAL (not a graph input, or a
 * record count the datablock's bytes cannot hold),
 * -EPROTOTYPE, or -EAGAIN when full (the shell sleeps and retries).
 */
int ptask_core_channel_push(struct ptask_client *c, struct ptask_push *arg)
{
	struct ptask_datablock *db;
	struct ptask_channel *ch;
	struct ptask_obj *o;
	u64 records;
	int err;

	ptask_os_assert_locked(c->ns);
	ch = channel_get(c, arg->channel, &err);
	if (!ch)
		return err;
	if (ch->src)
		return -EINVAL;
	o = ptask_core_ns_find(c->ns, arg->datablock, PTASK_OBJ_DATABLOCK);
	db = o ? ptask_container_of(o, struct ptask_datablock, obj) : NULL;
	if (!db || !ptask_client_find_hold(c, db))
		return -ENOENT;
	records = arg->flags & PTASK_PUSH_SET_RECORDS ? arg->records :
							db->records;
	if (!ptask_datablock_records_ok(db, records))
		return -EINVAL;
	if (!push_fits(ch, db, records))
		return -EPROTOTYPE;
	if (ch->tunnel)
		return ptask_tunnel_push(c, ch, db, records);
	if (ptask_channel_full(ch))
		return -EAGAIN;
	db->records = records;
	db->generation++;
	db->device_of = 0;	/* the pusher's bytes, in its pages */
	ptask_datablock_get(db);
	ptask_channel_put(ch, db);
	return 0;
}

/**
 * ptask_core_channel_pull() - PTASK_IOC_PULL
 * @c: the caller
 * @arg: the checked argument; the datablock's handle, mmap offset, size
 *	and record count set on success
 *
 * Return: 0, -ENOENT, -EACCES, -ESHUTDOWN, -EIO, -EINVAL (not a graph
 * output), -ENOMEM, or -EAGAIN when empty (the shell sleeps and retries).
 */
int ptask_core_channel_pull(struct ptask_client *c, struct ptask_pull *arg)
{
	struct ptask_datablock *db;
	struct ptask_channel *ch;
	int err;

	ptask_os_assert_locked(c->ns);
	ch = channel_get(c, arg->channel, &err);
	if (!ch)
		return err;
	if (ch->dst)
		return -EINVAL;
	/* A tunnel's output is pulled by slice, and only by slice. */
	if (!ch->tunnel != !(arg->flags & PTASK_PULL_SLICE))
		return -EINVAL;
	if (ch->tunnel)
		return ptask_tunnel_pull(c, ch, arg);
	if (!ch->count)
		return -EAGAIN;
	db = ch->slots[ch->head];
	/*
	 * Completed ahead: its bytes are there once its writer settles, or
	 * once its fence passed where the shell sees that fence itself.
	 */
	if (db->writer && (!c->pull_ahead_of ||
			   db->writer->id != c->pull_ahead_of)) {
		c->waits_settle = true;
		return -EAGAIN;
	}
	/* The hold takes over the channel slot's reference. */
	err = ptask_client_hold(c, db);
	if (err)
		return err;
	c->pulled_ahead = !!db->writer;
	ptask_channel_take(ch);
	arg->datablock = db->obj.handle;
	arg->mmap_offset = ptask_datablock_mmap_offset(db);
	arg->bytes = db->bytes;
	arg->records = db->records;
	ptask_channel_room(ch);
	return 0;
}

/**
 * ptask_channel_free() - free a channel with its graph
 * @ch: the channel; its graph is stopped, so it is empty
 */
void ptask_channel_free(struct ptask_channel *ch)
{
	struct ptask_ns *ns = ch->graph->ns;

	ptask_channel_flush(ch);
	if (ch->tunnel)
		ptask_tunnel_close(ch);
	if (ch->dst)
		ch->dst->in = NULL;
	ptask_list_del(&ch->src_node);
	ptask_list_del(&ch->node);
	ptask_ns_remove(ns, &ch->obj);
	ptask_count_dec(ns, PTASK_COUNT_CHANNELS);
	ptask_os_free(ch->slots);
	ptask_os_free(ch);
}
