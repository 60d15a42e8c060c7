// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ns.c - the namespace: handles and their hash table.
 *
 * Handles are u32, never 0, allocated from a counter that skips handles
 * still in use after it wraps, so a stale handle names nothing for a long
 * time (2^32 allocations) rather than someone else's object.
 */
#include "ptask_core.h"

#define PTASK_HTAB_MIN	64

static u32 hash_handle(u32 handle)
{
	return handle * 0x9e3779b1u;
}

static struct ptask_obj **htab_alloc(u32 buckets)
{
	return ptask_os_zalloc(sizeof(struct ptask_obj *) * buckets);
}

/**
 * ptask_core_ns_init() - set up an empty namespace
 * @ns: the namespace (zeroed or not)
 * @os: the shell's data, kept in @ns->os
 *
 * Return: 0 or -ENOMEM.
 */
int ptask_core_ns_init(struct ptask_ns *ns, void *os)
{
	memset(ns, 0, sizeof(*ns));
	ns->htab = htab_alloc(PTASK_HTAB_MIN);
	if (!ns->htab)
		return -ENOMEM;
	ns->hmask = PTASK_HTAB_MIN - 1;
	ptask_list_init(&ns->objects);
	ns->next_handle = 1;
	ns->next_invocation = 1;
	ptask_list_init(&ns->graphs);
	ptask_list_init(&ns->clients);
	ptask_list_init(&ns->forgotten_clients);
	ptask_list_init(&ns->ready);
	ptask_sched_init(ns);
	ptask_list_init(&ns->uid_usage);
	ns->next_client_id = 1;
	ns->os = os;
	return 0;
}

/**
 * ptask_core_ns_destroy() - free an empty namespace
 * @ns: the namespace; every client must have been destroyed
 */
void ptask_core_ns_destroy(struct ptask_ns *ns)
{
	PTASK_WARN_ON(!ptask_list_empty(&ns->clients));
	PTASK_WARN_ON(ns->hcount != 0);
	/* every datablock died, and with it its charge */
	PTASK_WARN_ON(!ptask_list_empty(&ns->uid_usage));
	PTASK_WARN_ON(ns->forgotten_queues);	/* went with the executors */
	ptask_sched_destroy(ns);
	ptask_os_free(ns->htab);
	ns->htab = NULL;
}

/* Doubles the table; on allocation failure keeps the old one (still works). */
static void htab_grow(struct ptask_ns *ns)
{
	u32 nbuckets = (ns->hmask + 1) * 2;
	struct ptask_obj **nt = htab_alloc(nbuckets);
	u32 i;

	if (!nt)
		return;
	for (i = 0; i <= ns->hmask; i++) {
		struct ptask_obj *o = ns->htab[i], *next;

		for (; o; o = next) {
			u32 b = hash_handle(o->handle) & (nbuckets - 1);

			next = o->hnext;
			o->hnext = nt[b];
			nt[b] = o;
		}
	}
	ptask_os_free(ns->htab);
	ns->htab = nt;
	ns->hmask = nbuckets - 1;
}

static struct ptask_obj *find_any(struct ptask_ns *ns, u32 handle)
{
	struct ptask_obj *o = ns->htab[hash_handle(handle) & ns->hmask];

	while (o && o->handle != handle)
		o = o->hnext;
	return o;
}

/*
 * Keep ns->objects in handle order.  Handles mostly grow, so the walk back
 * from the tail stops at once; only after the counter wraps does an insert
 * walk further.
 */
static void objects_insert(struct ptask_ns *ns, struct ptask_obj *obj)
{
	struct ptask_list *pos = ns->objects.prev;

	while (pos != &ns->objects &&
	       ptask_list_entry(pos, struct ptask_obj, ns_node)->handle >
	       obj->handle)
		pos = pos->prev;
	/* Insert after @pos: @pos is the head or a smaller handle. */
	ptask_list_add_tail(&obj->ns_node, pos->next);
}

/**
 * ptask_ns_add() - give @obj a fresh handle and make it findable
 * @ns: the namespace
 * @obj: the object's header
 * @type: enum ptask_object_type
 *
 * Return: 0, or -ENOSPC when every handle is in use.
 */
int ptask_ns_add(struct ptask_ns *ns, struct ptask_obj *obj, u32 type)
{
	u32 tries = 0, b;

	ptask_os_assert_locked(ns);
	if (ns->hcount >= 0xfffffff0u)
		return -ENOSPC;
	while (ns->next_handle == 0 || find_any(ns, ns->next_handle)) {
		ns->next_handle++;
		if (++tries == 0)
			return -ENOSPC;
	}
	obj->handle = ns->next_handle++;
	obj->type = type;
	objects_insert(ns, obj);
	if (ns->hcount + 1 > (ns->hmask + 1) * 2)
		htab_grow(ns);
	b = hash_handle(obj->handle) & ns->hmask;
	obj->hnext = ns->htab[b];
	ns->htab[b] = obj;
	ns->hcount++;
	return 0;
}

/**
 * ptask_ns_remove() - make @obj unfindable; its handle may be reused later
 * @ns: the namespace
 * @obj: an object ptask_ns_add() added
 */
void ptask_ns_remove(struct ptask_ns *ns, struct ptask_obj *obj)
{
	struct ptask_obj **pp = &ns->htab[hash_handle(obj->handle) & ns->hmask];

	ptask_os_assert_locked(ns);
	while (*pp && *pp != obj)
		pp = &(*pp)->hnext;
	if (PTASK_WARN_ON(!*pp))
		return;
	*pp = obj->hnext;
	obj->hnext = NULL;
	ptask_list_del(&obj->ns_node);
	ns->hcount--;
}

/**
 * ptask_core_ns_find() - look a handle up
 * @ns: the namespace
 * @handle: the handle
 * @type: the type it must have
 *
 * Return: the object, or NULL when no object of @type has @handle.
 */
struct ptask_obj *ptask_core_ns_find(struct ptask_ns *ns, u32 handle, u32 type)
{
	struct ptask_obj *o;

	ptask_os_assert_locked(ns);
	if (handle == 0)
		return NULL;
	o = find_any(ns, handle);
	return o && o->type == type ? o : NULL;
}

/**
 * ptask_core_ns_next() - walk every object, for listings
 * @ns: the namespace
 * @cursor: 0 to start; advanced past the object returned
 *
 * The walk is in handle order, so a listing resumed later neither repeats
 * nor skips an object that lived throughout.  Resuming costs O(1) when the
 * object before the cursor still lives (the usual case), else one walk.
 *
 * Return: the object with the smallest handle >= *@cursor, or NULL.
 */
struct ptask_obj *ptask_core_ns_next(struct ptask_ns *ns, u64 *cursor)
{
	struct ptask_list *pos = ns->objects.next;
	struct ptask_obj *prev;

	ptask_os_assert_locked(ns);
	if (*cursor > 0xffffffffULL)
		return NULL;
	prev = *cursor > 1 ? find_any(ns, (u32)(*cursor - 1)) : NULL;
	if (prev)
		pos = prev->ns_node.next;
	for (; pos != &ns->objects; pos = pos->next) {
		struct ptask_obj *o = ptask_list_entry(pos, struct ptask_obj,
						       ns_node);

		if (o->handle >= *cursor) {
			*cursor = (u64)o->handle + 1;
			return o;
		}
	}
	return NULL;
}

/**
 * ptask_ns_invocation_id() - a fresh invocation id
 * @ns: the namespace
 *
 * Return: an id never returned before in this namespace.
 */
u64 ptask_ns_invocation_id(struct ptask_ns *ns)
{
	return ns->next_invocation++;
}
