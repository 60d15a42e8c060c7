// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * template.c - datablock geometry: templates, and what fits what.
 */
#include "ptask_core.h"

/**
 * ptask_geom_bytes() - bytes a datablock of geometry @g holds
 * @g: the geometry
 *
 * Return: stride * x * y * z (the args check keeps it under
 * PTASK_DATABLOCK_MAX_BYTES, so no overflow).
 */
u64 ptask_geom_bytes(const struct ptask_geom *g)
{
	return (u64)g->stride * g->dims[0] * g->dims[1] * g->dims[2];
}

/**
 * ptask_geom_equal() - are two geometries compatible?
 * @a: one
 * @b: the other
 *
 * Return: true when kind, stride and dims are equal.
 */
bool ptask_geom_equal(const struct ptask_geom *a, const struct ptask_geom *b)
{
	return a->kind == b->kind && a->stride == b->stride &&
	       a->dims[0] == b->dims[0] && a->dims[1] == b->dims[1] &&
	       a->dims[2] == b->dims[2];
}

/**
 * ptask_datablock_fits() - may @db travel where template @t is expected?
 * @db: the datablock
 * @t: the template, or NULL for "anything"
 *
 * An array takes a datablock made from a compatible template or, for one
 * made by size, exactly the template's bytes.  A record stream takes a
 * datablock whose records fit in it at the template's stride.  Opaque
 * bytes take anything up to the template's size.
 *
 * Return: true if it fits.
 */
bool ptask_datablock_fits(const struct ptask_datablock *db,
			  const struct ptask_template *t)
{
	const struct ptask_geom *g;

	if (!t)
		return true;
	g = &t->geom;
	switch (g->kind) {
	case PTASK_TEMPLATE_ARRAY:
		if (db->has_geom)
			return ptask_geom_equal(&db->geom, g);
		return db->bytes == ptask_geom_bytes(g);
	case PTASK_TEMPLATE_RECORDS:
		if (db->has_geom && (db->geom.kind != g->kind ||
				     db->geom.stride != g->stride))
			return false;
		return db->records <= db->bytes / g->stride &&
		       db->records <= ptask_geom_bytes(g) / g->stride;
	default:
		return db->bytes <= ptask_geom_bytes(g);
	}
}

/**
 * ptask_core_template_open() - PTASK_IOC_TEMPLATE_OPEN
 * @c: the caller
 * @arg: the checked argument; @arg->handle set on success
 *
 * Return: 0, -ENOENT, -EACCES, -ESHUTDOWN, -EIO or -ENOMEM.
 */
int ptask_core_template_open(struct ptask_client *c, struct ptask_template_open *arg)
{
	struct ptask_template *t;
	struct ptask_graph *g;
	int err;

	ptask_os_assert_locked(c->ns);
	g = ptask_graph_get(c, arg->graph, &err);
	if (!g)
		return err;
	t = ptask_os_zalloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	err = ptask_ns_add(c->ns, &t->obj, PTASK_OBJ_TEMPLATE);
	if (err) {
		ptask_os_free(t);
		return err;
	}
	t->graph = g;
	t->geom.kind = arg->kind;
	t->geom.stride = arg->stride;
	memcpy(t->geom.dims, arg->dims, sizeof(t->geom.dims));
	t->binding = arg->binding;
	memcpy(t->name, arg->name, sizeof(t->name));
	ptask_list_add_tail(&t->node, &g->templates);
	ptask_count_inc(c->ns, PTASK_COUNT_TEMPLATES);
	arg->handle = t->obj.handle;
	return 0;
}

/**
 * ptask_template_free() - free a template with its graph
 * @t: the template; no port or channel of a live graph points at it
 */
void ptask_template_free(struct ptask_template *t)
{
	struct ptask_ns *ns = t->graph->ns;

	ptask_ns_remove(ns, &t->obj);
	ptask_list_del(&t->node);
	ptask_count_dec(ns, PTASK_COUNT_TEMPLATES);
	ptask_os_free(t);
}
