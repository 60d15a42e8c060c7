// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * tunnel.c - record-stream tunnels: HiWayLib's batched copy (ASPLOS '19,
 * section 3.1) as a pair of channels around one ptask.
 *
 * The input end gathers the pushes of many clients (a FUSE request
 * thread each, say) and, once a size threshold or a timeout passes,
 * copies them back to back into one datablock, the batch: one invocation
 * for all of them.  The output end takes the ptask's output for that
 * batch and hands each pusher back the records that came from its push,
 * keyed by a ticket: the handle of the datablock it pushed.  uapi/ptask.h
 * ("Record-stream tunnels") is the contract.
 *
 * Objects: one struct ptask_tunnel per ptask that has a tunnel end,
 * shared by both ends (each channel points to it; it is freed with the
 * second end).  @pend holds the pushes of the batch being gathered, each
 * with a reference to its datablock; @batches the batches flushed, in the
 * order they entered the input port, which is the order the ptask emits
 * their outputs (a ptask runs one invocation at a time and its outputs
 * leave in order), so an output is matched to the oldest batch without
 * one.
 *
 * Time: a gathering batch has a deadline (its first push plus the
 * timeout); the namespace asks the shell for one timer at the earliest
 * deadline of all tunnels (ptask_os_tunnel_timer), and the shell's tick
 * flushes what is due.  A flush that cannot go now (the input channel's
 * slots full, or no memory) is retried by the next push or one timeout
 * later.
 *
 * Locking: everything here is under the namespace lock, asserted at each
 * entry point.  The copies (ptask_os_buf_copy) are made under it, so a
 * batch costs the lock one memcpy of its bytes.
 */
#include "ptask_core.h"

/**
 * struct ptask_tunnel_push - one push gathered, or one slice of a batch
 * @db: gathering: the pushed datablock (a reference); NULL in a batch
 * @client: gathering: the pusher (cleared by ptask_tunnel_client_gone)
 * @client_id: the pusher's id (ids are never reused)
 * @ticket: the handle of the datablock pushed
 * @first: in a batch: its first record
 * @records: its records
 * @done: in a batch: pulled, or its pusher is gone
 */
struct ptask_tunnel_push {
	struct ptask_datablock *db;
	struct ptask_client *client;
	u64 client_id;
	u32 ticket;
	bool done;
	u64 first;
	u64 records;
};

/**
 * struct ptask_tunnel_batch - a batch flushed into the input port
 * @node: in tunnel->batches, oldest first
 * @out: the ptask's output for it (a reference), NULL until it came back
 * @records: records in the batch
 * @left: slices not yet done
 * @n: entries in @slices
 * @slices: one per push
 */
struct ptask_tunnel_batch {
	struct ptask_list node;
	struct ptask_datablock *out;
	u64 records;
	u32 left;
	u32 n;
	struct ptask_tunnel_push slices[];
};

/**
 * struct ptask_tunnel - the state both ends of one ptask's tunnel share
 * @ns: the namespace
 * @ptask: the ptask between the ends
 * @in: the input end (NULL until opened, or once freed)
 * @out: the output end (likewise)
 * @set_bytes: the input end's threshold in bytes (0: the default)
 * @set_records: its threshold in records (0: none)
 * @set_timeout_ns: its timeout (0: the default)
 * @pend: the gathering batch's pushes (@in's capacity of them)
 * @npend: entries in @pend
 * @pend_records: records in @pend
 * @deadline_ns: when the gathering batch must flush (0: empty)
 * @batches: struct ptask_tunnel_batch.node, flushed, oldest first
 * @nback: batches whose output came back, with slices left
 */
struct ptask_tunnel {
	struct ptask_ns *ns;
	struct ptask_ptask *ptask;
	struct ptask_channel *in;
	struct ptask_channel *out;
	u64 set_bytes;
	u64 set_records;
	u64 set_timeout_ns;
	struct ptask_tunnel_push *pend;
	u32 npend;
	u64 pend_records;
	u64 deadline_ns;
	struct ptask_list batches;
	u32 nback;
};

/*
 * The template a tunnel end's records are measured by: the channel's or
 * its port's; NULL when neither is a record stream.
 */
static const struct ptask_template *end_template(const struct ptask_channel *ch,
						 const struct ptask_port *port)
{
	const struct ptask_template *t = ch->tmpl ? ch->tmpl : port->tmpl;

	return t && t->geom.kind == PTASK_TEMPLATE_RECORDS ? t : NULL;
}

static u64 in_stride(const struct ptask_tunnel *t)
{
	return end_template(t->in, t->in->dst)->geom.stride;
}

/* The most records one batch may hold: the input template's capacity. */
static u64 in_max_records(const struct ptask_tunnel *t)
{
	const struct ptask_template *tm = end_template(t->in, t->in->dst);

	return ptask_geom_bytes(&tm->geom) / tm->geom.stride;
}

static u64 threshold_bytes(const struct ptask_tunnel *t)
{
	if (t->set_bytes)
		return t->set_bytes;
	if (t->ns->tunnel.default_bytes)
		return t->ns->tunnel.default_bytes;
	return PTASK_TUNNEL_DEFAULT_BYTES;
}

static u64 timeout_ns(const struct ptask_tunnel *t)
{
	if (t->set_timeout_ns)
		return t->set_timeout_ns;
	if (t->ns->tunnel.default_timeout_ns)
		return t->ns->tunnel.default_timeout_ns;
	return PTASK_TUNNEL_DEFAULT_TIMEOUT_NS;
}

static int settings_check(const struct ptask_channel_open *arg)
{
	if (arg->reserved)
		return -EINVAL;
	if (arg->tunnel_bytes > PTASK_DATABLOCK_MAX_BYTES ||
	    arg->tunnel_timeout_ns > PTASK_TUNNEL_MAX_TIMEOUT_NS)
		return -EINVAL;
	return 0;
}

/* Ask the shell for a tick at the earliest deadline of every tunnel. */
static void tunnel_rearm(struct ptask_ns *ns)
{
	struct ptask_list *gpos, *cpos;
	u64 when = 0;

	ptask_list_for_each(gpos, &ns->graphs) {
		struct ptask_graph *g = ptask_list_entry(gpos,
				struct ptask_graph, ns_node);

		ptask_list_for_each(cpos, &g->channels) {
			struct ptask_channel *ch = ptask_list_entry(cpos,
					struct ptask_channel, node);
			struct ptask_tunnel *t = ch->tunnel;

			if (!t || t->in != ch || !t->deadline_ns)
				continue;
			if (!when || t->deadline_ns < when)
				when = t->deadline_ns;
		}
	}
	if (when == ns->tunnel.timer_ns)
		return;
	ns->tunnel.timer_ns = when;
	ptask_os_tunnel_timer(ns, when);
}

static void batch_free(struct ptask_tunnel *t, struct ptask_tunnel_batch *b)
{
	ptask_list_del(&b->node);
	if (b->out) {
		t->nback--;
		ptask_datablock_put(t->ns, b->out);
	}
	ptask_os_free(b);
}

/* Drop the gathering pushes (their datablocks' references). */
static void pend_drop(struct ptask_tunnel *t)
{
	while (t->npend) {
		struct ptask_tunnel_push *p = &t->pend[--t->npend];

		ptask_datablock_put(t->ns, p->db);
		p->db = NULL;
	}
	t->pend_records = 0;
	t->deadline_ns = 0;
}

/*
 * Close the gathering batch: copy its pushes into one new datablock and
 * queue it on the input channel.  -EAGAIN: the channel has no room;
 * -ENOMEM, or -EDQUOT (the batch is charged to its first pusher's uid).
 * Either way the pushes stay gathered for a later try.
 */
static int tunnel_flush(struct ptask_tunnel *t)
{
	struct ptask_channel *ch = t->in;
	u64 stride = in_stride(t), at = 0;
	struct ptask_tunnel_batch *b;
	struct ptask_client *owner = NULL;
	struct ptask_tunnel_head head;
	struct ptask_datablock *db;
	int err;
	u32 i;

	if (!t->npend)
		return 0;
	if (ptask_channel_full(ch))
		return -EAGAIN;
	for (i = 0; i < t->npend && !owner; i++)
		owner = t->pend[i].client;
	/* Every pusher is gone: nobody waits for this batch. */
	if (!owner) {
		pend_drop(t);
		return 0;
	}
	b = ptask_os_zalloc(sizeof(*b) + sizeof(b->slices[0]) * t->npend);
	if (!b)
		return -ENOMEM;
	err = ptask_datablock_alloc(owner, PTASK_TUNNEL_HEAD_BYTES +
				    t->pend_records * stride, &db);
	if (err) {
		ptask_os_free(b);
		return err;
	}
	db->records = t->pend_records;
	head.records = t->pend_records;
	head.stride = (u32)stride;
	head.reserved = 0;
	ptask_os_buf_write(db->buf, 0, &head, sizeof(head));
	for (i = 0; i < t->npend; i++) {
		struct ptask_tunnel_push *p = &t->pend[i];
		struct ptask_tunnel_push *s = &b->slices[i];
		u64 bytes = p->records * stride;

		ptask_os_buf_copy(db->buf, PTASK_TUNNEL_HEAD_BYTES + at * stride,
				  p->db->buf, 0, bytes);
		s->client_id = p->client_id;
		s->ticket = p->ticket;
		s->first = at;
		s->records = p->records;
		s->done = !p->client;
		if (!s->done)
			b->left++;
		at += p->records;
	}
	b->n = t->npend;
	b->records = t->pend_records;
	ptask_list_add_tail(&b->node, &t->batches);
	pend_drop(t);
	ptask_channel_put(ch, db);
	return 0;
}

static struct ptask_tunnel *tunnel_of_ptask(struct ptask_graph *g,
					    struct ptask_ptask *p)
{
	struct ptask_list *pos;

	ptask_list_for_each(pos, &g->channels) {
		struct ptask_channel *ch = ptask_list_entry(pos,
				struct ptask_channel, node);

		if (ch->tunnel && ch->tunnel->ptask == p)
			return ch->tunnel;
	}
	return NULL;
}

/**
 * ptask_tunnel_attach() - make @ch, being opened, an end of a tunnel
 * @ch: the new channel (its ends, template and capacity set; not yet in
 *	its graph's list)
 * @arg: the checked argument (PTASK_CHANNEL_TUNNEL)
 *
 * Return: 0; -EINVAL (an end that is not a client's, or settings on the
 * output end or out of range); -EPROTOTYPE (no record-stream template);
 * -EBUSY (the ptask has that end already); -ENOMEM.
 */
int ptask_tunnel_attach(struct ptask_channel *ch,
			const struct ptask_channel_open *arg)
{
	bool input = !ch->src;
	struct ptask_port *port = input ? ch->dst : ch->src;
	struct ptask_tunnel *t;
	int err;

	ptask_os_assert_locked(ch->graph->ns);
	if (!ch->src == !ch->dst)
		return -EINVAL;
	err = settings_check(arg);
	if (err)
		return err;
	if (!input && (arg->tunnel_bytes || arg->tunnel_records ||
		       arg->tunnel_timeout_ns))
		return -EINVAL;
	if (!end_template(ch, port))
		return -EPROTOTYPE;
	t = tunnel_of_ptask(ch->graph, port->ptask);
	if (t && (input ? t->in : t->out))
		return -EBUSY;
	if (!t) {
		t = ptask_os_zalloc(sizeof(*t));
		if (!t)
			return -ENOMEM;
		t->ns = ch->graph->ns;
		t->ptask = port->ptask;
		ptask_list_init(&t->batches);
	}
	if (input) {
		t->pend = ptask_os_zalloc(sizeof(*t->pend) * ch->capacity);
		if (!t->pend) {
			if (!t->out)
				ptask_os_free(t);
			return -ENOMEM;
		}
		t->set_bytes = arg->tunnel_bytes;
		t->set_records = arg->tunnel_records;
		t->set_timeout_ns = arg->tunnel_timeout_ns;
		t->in = ch;
	} else {
		t->out = ch;
	}
	ch->tunnel = t;
	return 0;
}

/**
 * ptask_core_tunnel_set() - PTASK_IOC_CHANNEL_OPEN with
 *	PTASK_CHANNEL_TUNNEL_SET: new settings for an open input end
 * @c: the caller
 * @arg: the checked argument; @arg->handle names the channel
 *
 * Return: 0, -ENOENT, -EACCES, -ESHUTDOWN, -EIO, -EINVAL (not a tunnel's
 * input end, settings out of range).
 */
int ptask_core_tunnel_set(struct ptask_client *c,
			  const struct ptask_channel_open *arg)
{
	struct ptask_channel *ch;
	struct ptask_obj *o;
	int err;

	ptask_os_assert_locked(c->ns);
	o = ptask_obj_get(c, arg->handle, PTASK_OBJ_CHANNEL, &err);
	if (!o)
		return err;
	ch = ptask_container_of(o, struct ptask_channel, obj);
	if (!ch->tunnel || ch->tunnel->in != ch)
		return -EINVAL;
	err = settings_check(arg);
	if (err)
		return err;
	ch->tunnel->set_bytes = arg->tunnel_bytes;
	ch->tunnel->set_records = arg->tunnel_records;
	ch->tunnel->set_timeout_ns = arg->tunnel_timeout_ns;
	return 0;
}

/* Is @ticket of client @id gathering or in a batch not yet pulled? */
static struct ptask_tunnel_push *find_slice(struct ptask_tunnel *t, u64 id,
					    u32 ticket,
					    struct ptask_tunnel_batch **batch)
{
	struct ptask_list *pos;
	u32 i;

	*batch = NULL;
	for (i = 0; i < t->npend; i++)
		if (t->pend[i].client_id == id && t->pend[i].ticket == ticket)
			return &t->pend[i];
	ptask_list_for_each(pos, &t->batches) {
		struct ptask_tunnel_batch *b = ptask_list_entry(pos,
				struct ptask_tunnel_batch, node);

		for (i = 0; i < b->n; i++) {
			struct ptask_tunnel_push *s = &b->slices[i];

			if (!s->done && s->client_id == id &&
			    s->ticket == ticket) {
				*batch = b;
				return s;
			}
		}
	}
	return NULL;
}

static bool threshold_reached(const struct ptask_tunnel *t)
{
	if (t->set_records && t->pend_records >= t->set_records)
		return true;
	return t->pend_records * in_stride(t) >= threshold_bytes(t);
}

/**
 * ptask_tunnel_push() - PTASK_IOC_PUSH on a tunnel's input end
 * @c: the pusher (it holds @db)
 * @ch: the input end
 * @db: the datablock; it fits the channel (checked by the caller)
 * @records: its record count for this push
 *
 * Return: 0 (gathered, and perhaps flushed); -EINVAL (no records);
 * -EBUSY (@db is in a push of this tunnel whose slice was not pulled); -EAGAIN (the gathering batch
 * is full and cannot flush now: the shell sleeps and retries); -ENOMEM.
 */
int ptask_tunnel_push(struct ptask_client *c, struct ptask_channel *ch,
		      struct ptask_datablock *db, u64 records)
{
	struct ptask_tunnel *t = ch->tunnel;
	struct ptask_tunnel_batch *b;
	struct ptask_tunnel_push *p;
	int err;

	ptask_os_assert_locked(c->ns);
	/* No records, no slice: nothing would come back to pull. */
	if (!records)
		return -EINVAL;
	if (find_slice(t, c->id, db->obj.handle, &b))
		return -EBUSY;
	if (t->npend == ch->capacity ||
	    t->pend_records + records > in_max_records(t)) {
		err = tunnel_flush(t);
		if (err)
			return err;
	}
	p = &t->pend[t->npend++];
	p->db = db;
	p->client = c;
	p->client_id = c->id;
	p->ticket = db->obj.handle;
	p->records = records;
	p->done = false;
	db->records = records;
	db->generation++;
	ptask_datablock_get(db);
	t->pend_records += records;
	if (t->npend == 1)
		t->deadline_ns = ptask_os_now_ns() + timeout_ns(t);
	/* Flushing is best effort here: the timer retries what fails. */
	if (threshold_reached(t))
		tunnel_flush(t);
	tunnel_rearm(c->ns);
	return 0;
}

/* Slice @s of batch @b (back on output end @ch) is out; the last frees it. */
static void slice_done(struct ptask_tunnel *t, struct ptask_channel *ch,
		       struct ptask_tunnel_batch *b, struct ptask_tunnel_push *s)
{
	s->done = true;
	if (!--b->left) {
		batch_free(t, b);
		ptask_channel_room(ch);
	}
}

/**
 * ptask_tunnel_pull() - PTASK_IOC_PULL with PTASK_PULL_SLICE
 * @c: the caller (the pusher)
 * @ch: the output end
 * @arg: the checked argument; @arg->datablock is the ticket; the slice's
 *	handle, offset, size and records are set on success
 *
 * Return: 0; -ENOMSG (no push of that ticket by @c awaits here); -EAGAIN
 * (its batch has not come back); -EPROTO (the ptask's output for it does
 * not have the batch's records: said once, the slice is then gone);
 * -EDQUOT (the slice stays for a later pull); -ENOMEM.
 */
int ptask_tunnel_pull(struct ptask_client *c, struct ptask_channel *ch,
		      struct ptask_pull *arg)
{
	struct ptask_tunnel *t = ch->tunnel;
	struct ptask_tunnel_batch *b;
	struct ptask_tunnel_push *s;
	struct ptask_datablock *db;
	u64 stride;
	int err;

	ptask_os_assert_locked(c->ns);
	s = find_slice(t, c->id, arg->datablock, &b);
	if (!s)
		return -ENOMSG;
	if (!b || !b->out)
		return -EAGAIN;
	stride = 0;
	/*
	 * 0 records: an output made by size (an executor's), taken to hold
	 * the batch's records if its size says so.
	 */
	if ((b->out->records == b->records || !b->out->records) &&
	    b->records &&
	    b->out->bytes >= PTASK_TUNNEL_HEAD_BYTES &&
	    !((b->out->bytes - PTASK_TUNNEL_HEAD_BYTES) % b->records))
		stride = (b->out->bytes - PTASK_TUNNEL_HEAD_BYTES) / b->records;
	/*
	 * An output the batch cannot be split from: each puller hears it
	 * once, and the slice is done.
	 */
	if (!stride) {
		slice_done(t, ch, b, s);
		return -EPROTO;
	}
	/* The puller's slice: its uid pays (-EDQUOT: it may pull later). */
	err = ptask_datablock_alloc(c, s->records * stride, &db);
	if (err)
		return err;
	ptask_os_buf_copy(db->buf, 0, b->out->buf,
			  PTASK_TUNNEL_HEAD_BYTES + s->first * stride,
			  s->records * stride);
	db->records = s->records;
	/* The hold takes over the allocation's reference. */
	err = ptask_client_hold(c, db);
	if (err) {
		ptask_datablock_put(c->ns, db);
		return err;
	}
	arg->datablock = db->obj.handle;
	arg->mmap_offset = ptask_datablock_mmap_offset(db);
	arg->bytes = db->bytes;
	arg->records = db->records;
	slice_done(t, ch, b, s);
	return 0;
}

/**
 * ptask_tunnel_full() - has the output end @ch no room for a batch?
 * @ch: a tunnel end
 *
 * Return: for the output end, whether @capacity batches came back with
 * slices left; for the input end, whether its slots are full.
 */
bool ptask_tunnel_full(const struct ptask_channel *ch)
{
	if (ch->tunnel->out == ch)
		return ch->tunnel->nback >= ch->capacity;
	return ch->count == ch->capacity;
}

/**
 * ptask_tunnel_put() - a datablock enters tunnel end @ch
 * @ch: a tunnel end, not full
 * @db: for the output end: the output for the oldest batch without one
 *	(a reference)
 *
 * Return: true when taken (the output end), false for the input end,
 * whose slots take its batches as any channel's do.
 */
bool ptask_tunnel_put(struct ptask_channel *ch, struct ptask_datablock *db)
{
	struct ptask_tunnel *t = ch->tunnel;
	struct ptask_list *pos;

	ptask_os_assert_locked(t->ns);
	if (t->out != ch)
		return false;
	ptask_list_for_each(pos, &t->batches) {
		struct ptask_tunnel_batch *b = ptask_list_entry(pos,
				struct ptask_tunnel_batch, node);

		if (b->out)
			continue;
		b->out = db;
		t->nback++;
		if (!b->left)
			batch_free(t, b);
		ptask_graph_wake(ch->graph);
		return true;
	}
	/* No input end, or an output with no batch: nobody can pull it. */
	ptask_datablock_put(t->ns, db);
	return true;
}

/**
 * ptask_tunnel_flush() - drop everything a tunnel end holds
 * @ch: a tunnel end whose graph stops
 */
void ptask_tunnel_flush(struct ptask_channel *ch)
{
	struct ptask_tunnel *t = ch->tunnel;
	struct ptask_list *pos, *tmp;

	ptask_os_assert_locked(t->ns);
	pend_drop(t);
	ptask_list_for_each_safe(pos, tmp, &t->batches)
		batch_free(t, ptask_list_entry(pos, struct ptask_tunnel_batch,
					       node));
	tunnel_rearm(t->ns);
}

/**
 * ptask_tunnel_close() - @ch is freed: detach it, free the tunnel with
 *	its last end
 * @ch: a tunnel end
 */
void ptask_tunnel_close(struct ptask_channel *ch)
{
	struct ptask_tunnel *t = ch->tunnel;

	ptask_tunnel_flush(ch);
	if (t->in == ch) {
		ptask_os_free(t->pend);
		t->pend = NULL;
		t->in = NULL;
	} else {
		t->out = NULL;
	}
	ch->tunnel = NULL;
	if (!t->in && !t->out)
		ptask_os_free(t);
}

/**
 * ptask_tunnel_client_gone() - @c closes graph @g (or dies)
 * @c: the client
 * @g: a graph it had open
 *
 * Its gathered pushes stay in their batch (the others' records are
 * batched with them, and the copy is cheap), but nobody will pull their
 * slices: they are done, and a batch with no slice left goes.
 */
void ptask_tunnel_client_gone(struct ptask_client *c, struct ptask_graph *g)
{
	struct ptask_list *pos, *bpos, *btmp;
	u32 i;

	ptask_os_assert_locked(c->ns);
	ptask_list_for_each(pos, &g->channels) {
		struct ptask_channel *ch = ptask_list_entry(pos,
				struct ptask_channel, node);
		struct ptask_tunnel *t = ch->tunnel;

		if (!t || t->in != ch)
			continue;
		for (i = 0; i < t->npend; i++)
			if (t->pend[i].client == c)
				t->pend[i].client = NULL;
		ptask_list_for_each_safe(bpos, btmp, &t->batches) {
			struct ptask_tunnel_batch *b = ptask_list_entry(bpos,
					struct ptask_tunnel_batch, node);

			for (i = 0; i < b->n; i++) {
				if (b->slices[i].done ||
				    b->slices[i].client_id != c->id)
					continue;
				b->slices[i].done = true;
				b->left--;
			}
			if (!b->left && b->out) {
				batch_free(t, b);
				if (t->out)
					ptask_channel_room(t->out);
			}
		}
	}
}

/**
 * ptask_core_tunnel_tick() - the shell's tunnel timer fired
 * @ns: the namespace
 *
 * Flushes every gathering batch whose deadline passed; one that cannot
 * flush now is tried again one timeout later.
 */
void ptask_core_tunnel_tick(struct ptask_ns *ns)
{
	struct ptask_list *gpos, *cpos;
	u64 now = ptask_os_now_ns();

	ptask_os_assert_locked(ns);
	ns->tunnel.timer_ns = 0;
	ptask_list_for_each(gpos, &ns->graphs) {
		struct ptask_graph *g = ptask_list_entry(gpos,
				struct ptask_graph, ns_node);

		ptask_list_for_each(cpos, &g->channels) {
			struct ptask_channel *ch = ptask_list_entry(cpos,
					struct ptask_channel, node);
			struct ptask_tunnel *t = ch->tunnel;

			if (!t || t->in != ch || !t->deadline_ns ||
			    t->deadline_ns > now)
				continue;
			if (tunnel_flush(t))
				t->deadline_ns = now + timeout_ns(t);
		}
	}
	tunnel_rearm(ns);
}

/**
 * ptask_core_tunnel_calibrate() - defaults from the executor's copy curve
 * @ns: the namespace
 * @copy_knee_bytes: the size whose host-to-device transfer time equals a
 *	copy's fixed cost (the cuda backend's and the sim's inplace_max: the
 *	knee of the copy curve); 0 keeps the uapi defaults
 * @copy_fixed_ns: a copy's fixed cost (latency); 0: not known
 *
 * A batch of 8 knees spends at most 1/9 of its copy time on the fixed
 * cost, which is where batching stops paying; the timeout is 8 fixed
 * costs (so waiting never costs more than what batching saves), at least
 * 20 us and at most the uapi default when the latency is not known.
 */
void ptask_core_tunnel_calibrate(struct ptask_ns *ns, u64 copy_knee_bytes,
				 u64 copy_fixed_ns)
{
	u64 bytes = copy_knee_bytes * 8;

	ptask_os_assert_locked(ns);
	if (!copy_knee_bytes) {
		ns->tunnel.default_bytes = 0;
		ns->tunnel.default_timeout_ns = 0;
		return;
	}
	if (bytes < 64 * 1024)
		bytes = 64 * 1024;
	if (bytes > 16ULL << 20)
		bytes = 16ULL << 20;
	ns->tunnel.default_bytes = bytes;
	ns->tunnel.default_timeout_ns = PTASK_TUNNEL_DEFAULT_TIMEOUT_NS;
	if (copy_fixed_ns) {
		u64 to = copy_fixed_ns * 8;

		if (to < 20 * 1000)
			to = 20 * 1000;
		if (to < ns->tunnel.default_timeout_ns)
			ns->tunnel.default_timeout_ns = to;
	}
}
