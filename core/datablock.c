// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * datablock.c - datablocks: reference-counted memory that flows through
 * channels, shared by mapping (never copied) between the producer, the
 * consumers and the executor.
 */
#include "ptask_core.h"

/**
 * ptask_datablock_alloc() - a new datablock with one reference
 * @c: the client it is made for (its shell picks the memory; its uid
 *	pays for it)
 * @bytes: its size (1..PTASK_DATABLOCK_MAX_BYTES)
 * @out: set to the datablock
 *
 * Return: 0, -EDQUOT (@c's uid is at its limit, uid_usage.c) or -ENOMEM.
 */
int ptask_datablock_alloc(struct ptask_client *c, u64 bytes,
			  struct ptask_datablock **out)
{
	return ptask_datablock_alloc_in(c, NULL, NULL, bytes, out);
}

/*
 * May clients of uids other than its owner's open @g?  Then its outputs
 * may be handed to them, and get memory of their own
 * (PTASK_BUF_OWN_MEMORY).  A 0600 graph is its owner's (and root's).
 */
static bool graph_shared(const struct ptask_graph *g)
{
	return g && (g->mode & 0077);
}

/*
 * Could a datablock of template @t reach a client other than its maker
 * unchanged?  Only through an in/out port of a shared graph (its output
 * peer emits the same datablock); every other output is a datablock the
 * executor makes, with memory of its own in a shared graph.  So a
 * client's datablock gets memory of its own only then: three own memfds
 * a round instead of one cost a small round trip 12x rather than a
 * fraction of that (bench/shared_cost.c, Documentation/ptaskd.md).
 */
static bool template_inout_shared(const struct ptask_template *t)
{
	struct ptask_list *pos;
	u32 i;

	if (!t || !graph_shared(t->graph))
		return false;
	ptask_list_for_each(pos, &t->graph->ptasks) {
		const struct ptask_ptask *p =
			ptask_list_entry(pos, struct ptask_ptask, node);

		for (i = 0; i < p->nopened; i++)
			if ((p->ports[i]->flags & PTASK_PORT_INOUT) &&
			    (!p->ports[i]->tmpl || p->ports[i]->tmpl == t))
				return true;
	}
	return false;
}

/**
 * ptask_datablock_alloc_output() - a new datablock with one reference, for
 *	an output of an invocation of @p (PTASK_TAKE_AHEAD,
 *	PTASK_DATABLOCK_CREATE_OUTPUT)
 * @c: the executor it is made for
 * @p: the ptask it is an output of (its owner's memory, its owner pays),
 *	or NULL: a datablock @c asked for (ptask_datablock_alloc())
 * @bytes: its size (1..PTASK_DATABLOCK_MAX_BYTES)
 * @out: set to the datablock
 *
 * Return: 0, -EDQUOT (the paying uid is at its limit) or -ENOMEM.
 */
int ptask_datablock_alloc_output(struct ptask_client *c,
				 const struct ptask_ptask *p, u64 bytes,
				 struct ptask_datablock **out)
{
	return ptask_datablock_alloc_in(c, p, p ? p->graph : NULL, bytes, out);
}

/**
 * ptask_datablock_alloc_in() - ptask_datablock_alloc_output(), in graph @g
 * @c: as ptask_datablock_alloc_output()'s
 * @p: as ptask_datablock_alloc_output()'s
 * @g: the graph whose other uids may be handed it (an output's ptask's,
 *	or a template's that an in/out port of it takes), or NULL: when
 *	other uids may open it, the datablock gets memory of its own
 *	(PTASK_BUF_OWN_MEMORY)
 * @bytes: as ptask_datablock_alloc_output()'s
 * @out: as ptask_datablock_alloc_output()'s
 *
 * Return: as ptask_datablock_alloc_output()'s.
 */
int ptask_datablock_alloc_in(struct ptask_client *c,
			     const struct ptask_ptask *p,
			     const struct ptask_graph *g, u64 bytes,
			     struct ptask_datablock **out)
{
	u32 flags = graph_shared(g) ? PTASK_BUF_OWN_MEMORY : 0;
	struct ptask_ns *ns = c->ns;
	u32 uid = p ? p->owner_uid : c->uid;
	u64 charge = ptask_uid_charge_bytes(bytes);
	struct ptask_datablock *db;
	int err;

	ptask_os_assert_locked(ns);
	/* First: a uid at its limit costs nothing, not even the struct. */
	err = ptask_uid_charge(ns, uid, charge);
	if (err)
		return err;
	err = -ENOMEM;
	db = ptask_os_zalloc(sizeof(*db));
	if (!db)
		goto err_uncharge;
	err = p ? ptask_os_buf_alloc_output(c, p->owner_uid, bytes, flags,
					    &db->buf) :
		  ptask_os_buf_alloc(c, bytes, flags, &db->buf);
	if (err)
		goto err_free_db;
	err = ptask_ns_add(ns, &db->obj, PTASK_OBJ_DATABLOCK);
	if (err)
		goto err_put_buf;
	ptask_os_buf_bind(db->buf, db->obj.handle);
	db->refs = 1;
	db->bytes = bytes;
	db->charged_uid = uid;
	db->charged = charge;
	ptask_list_init(&db->holds);
	ptask_list_init(&db->writer_node);
	ptask_count_inc(ns, PTASK_COUNT_DATABLOCKS);
	*out = db;
	return 0;

err_put_buf:
	ptask_os_buf_put(db->buf);
err_free_db:
	ptask_os_free(db);
err_uncharge:
	ptask_uid_uncharge(ns, uid, charge);
	return err;
}

/**
 * ptask_datablock_get() - take one more reference
 * @db: the datablock
 *
 * Saturating, as refcount_t is (the count is the namespace lock's, so a
 * plain u32 under it gives the same semantics in every shell): at
 * PTASK_REFS_SATURATED it stays there and the datablock is never freed.
 * A u32 that wrapped freed a datablock still referenced (issue 13: an
 * unprivileged client's push -> pass-through -> pull cycles, never
 * released, then a use after free in ptask_port_drain).
 */
void ptask_datablock_get(struct ptask_datablock *db)
{
	PTASK_WARN_ON(db->refs == 0);
	if (db->refs >= PTASK_REFS_SATURATED - 1) {
		if (db->refs != PTASK_REFS_SATURATED)
			ptask_os_saturated("datablock");
		db->refs = PTASK_REFS_SATURATED;
		return;
	}
	db->refs++;
}

/**
 * ptask_datablock_put() - drop a reference; free on the last
 * @ns: the namespace
 * @db: the datablock
 *
 * Its memory lives on while a shell still maps it (the buffer has its own
 * count).
 */
void ptask_datablock_put(struct ptask_ns *ns, struct ptask_datablock *db)
{
	ptask_os_assert_locked(ns);
	/* saturated: kept for good (ptask_datablock_get) */
	if (PTASK_WARN_ON(db->refs == 0) ||
	    db->refs == PTASK_REFS_SATURATED || --db->refs)
		return;
	if (db->executor_seen)
		ptask_forgotten_note(ns, db->obj.handle);
	ptask_ns_remove(ns, &db->obj);
	/* Dropped unpulled (its graph stopped) before its writer settled. */
	ptask_list_del(&db->writer_node);
	/* Gone now, even while a mapping keeps the memory: tell the shell. */
	ptask_os_buf_bind(db->buf, 0);
	ptask_os_buf_put(db->buf);
	ptask_uid_uncharge(ns, db->charged_uid, db->charged);
	ptask_count_dec(ns, PTASK_COUNT_DATABLOCKS);
	ptask_os_free(db);
}

/**
 * ptask_datablock_mmap_offset() - where a client mmaps @db
 * @db: the datablock
 *
 * Return: its handle times PTASK_MMAP_UNIT.
 */
u64 ptask_datablock_mmap_offset(const struct ptask_datablock *db)
{
	return (u64)db->obj.handle << PTASK_MMAP_SHIFT;
}

/**
 * ptask_core_datablock_mmap_handle() - the handle an mmap offset names
 * @offset: the byte offset passed to mmap
 *
 * Return: the handle, or 0 (no datablock) for an offset that is not one
 * ptask_datablock_mmap_offset() returns.
 */
u32 ptask_core_datablock_mmap_handle(u64 offset)
{
	if (offset & (PTASK_MMAP_UNIT - 1) || (offset >> PTASK_MMAP_SHIFT) >> 32)
		return 0;
	return (u32)(offset >> PTASK_MMAP_SHIFT);
}

/**
 * ptask_datablock_records_ok() - may @db say it holds @records records?
 * @db: the datablock
 * @records: the count
 *
 * A record is at least one byte, or a stride when @db was made from a
 * record stream's template: a larger count would be a lie every reader
 * (executors, pullers, a tunnel's batching) takes on trust; an
 * untemplated 1-byte datablock took 2^64 - 1.
 *
 * Return: true if the count fits in @db's bytes.
 */
bool ptask_datablock_records_ok(const struct ptask_datablock *db, u64 records)
{
	u64 unit = db->has_geom && db->geom.kind == PTASK_TEMPLATE_RECORDS ?
		   db->geom.stride : 1;

	return records <= db->bytes / unit;
}

/* Size and records of a datablock made from @t; -EINVAL if they don't fit. */
static int template_size(const struct ptask_template *t, u64 records,
			 u64 *bytes)
{
	u64 capacity = ptask_geom_bytes(&t->geom);

	if (t->geom.kind != PTASK_TEMPLATE_RECORDS) {
		*bytes = capacity;
		return 0;
	}
	if (records == 0 || records > capacity / t->geom.stride)
		return -EINVAL;
	*bytes = records * t->geom.stride;
	return 0;
}

/**
 * ptask_core_datablock_create() - PTASK_IOC_DATABLOCK_CREATE
 * @c: the caller; it holds the new datablock's one reference
 * @arg: the checked argument; @arg->handle, @arg->bytes and
 *	@arg->mmap_offset set on success
 *
 * Return: 0, -EPERM, -ENOENT, -EACCES, -ESHUTDOWN, -EIO, -EINVAL
 * (records that do not fit the template, or more records than bytes),
 * -EDQUOT or -ENOMEM.
 */
int ptask_core_datablock_create(struct ptask_client *c,
				struct ptask_datablock_create *arg)
{
	struct ptask_template *t = NULL;
	struct ptask_ptask *output_of = NULL;
	struct ptask_datablock *db;
	u64 bytes = arg->bytes;
	int err;

	ptask_os_assert_locked(c->ns);
	/* The caller's role first (uapi: -EPERM before handles). */
	if (arg->flags & PTASK_DATABLOCK_CREATE_OUTPUT) {
		err = ptask_invocation_output_of(c, arg->invocation,
						 &output_of);
		if (err)
			return err;
	}
	if (arg->template) {
		struct ptask_obj *o = ptask_obj_get(c, arg->template,
						    PTASK_OBJ_TEMPLATE, &err);
		if (!o)
			return err;
		t = ptask_container_of(o, struct ptask_template, obj);
		err = template_size(t, arg->records, &bytes);
		if (err)
			return err;
	}
	/* a record stream's count was checked by template_size */
	if (arg->records > bytes)
		return -EINVAL;
	err = ptask_datablock_alloc_in(c, output_of,
				       output_of ? output_of->graph :
				       template_inout_shared(t) ? t->graph :
				       NULL, bytes, &db);
	if (err)
		return err;
	if (t) {
		db->has_geom = true;
		db->geom = t->geom;
	}
	db->records = arg->records;
	db->generation++;
	db->executor_seen = c->executor;	/* its death is noticed */
	err = ptask_client_hold(c, db);
	if (err) {
		ptask_datablock_put(c->ns, db);
		return err;
	}
	arg->handle = db->obj.handle;
	arg->bytes = bytes;
	arg->mmap_offset = ptask_datablock_mmap_offset(db);
	return 0;
}

/**
 * ptask_core_datablock_release() - PTASK_IOC_DATABLOCK_RELEASE
 * @c: the caller
 * @arg: the checked argument
 *
 * Return: 0, or -ENOENT when the caller holds no reference to it.
 */
int ptask_core_datablock_release(struct ptask_client *c,
				 struct ptask_datablock_release *arg)
{
	struct ptask_datablock *db;
	struct ptask_obj *o;
	struct ptask_hold *h;

	ptask_os_assert_locked(c->ns);
	o = ptask_core_ns_find(c->ns, arg->handle, PTASK_OBJ_DATABLOCK);
	if (!o)
		return -ENOENT;
	db = ptask_container_of(o, struct ptask_datablock, obj);
	h = ptask_client_find_hold(c, db);
	if (!h)
		return -ENOENT;
	ptask_client_unhold(c, h);
	return 0;
}

/*
 * Is @db an input of an invocation executor @c took (a segment's later
 * members' sticky datablocks included)?
 */
static bool taken_input(struct ptask_client *c, struct ptask_datablock *db)
{
	struct ptask_list *pos;
	u32 i;

	ptask_list_for_each(pos, &c->taken) {
		struct ptask_invocation_rec *inv = ptask_list_entry(pos,
				struct ptask_invocation_rec, node);

		for (i = 0; i < inv->nports; i++)
			if (inv->inputs[i] == db)
				return true;
		for (i = 0; i < inv->nsticky; i++)
			if (inv->sticky[i] == db)
				return true;
	}
	return false;
}

/**
 * ptask_core_datablock_map() - may @c map datablock @handle, and what is it?
 * @c: the caller of mmap
 * @handle: the datablock
 * @bytes: set to its size
 * @buf: set to its memory, with a reference for the mapping
 *
 * Return: 0, or -ENOENT when @c neither holds it nor took an invocation it
 * is an input of.
 */
int ptask_core_datablock_map(struct ptask_client *c, u32 handle, u64 *bytes,
			     struct ptask_buf **buf)
{
	struct ptask_datablock *db;
	struct ptask_obj *o;

	ptask_os_assert_locked(c->ns);
	o = ptask_core_ns_find(c->ns, handle, PTASK_OBJ_DATABLOCK);
	if (!o)
		return -ENOENT;
	db = ptask_container_of(o, struct ptask_datablock, obj);
	if (!ptask_client_find_hold(c, db) && !taken_input(c, db))
		return -ENOENT;
	ptask_os_buf_get(db->buf);
	*buf = db->buf;
	*bytes = db->bytes;
	return 0;
}
