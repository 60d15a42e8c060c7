// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ns_exec_hold.c - the memory an executor process may still write (see
 * ns_user.h, pd_ns_exec_place()).
 *
 * Why: an executor in another process (ptaskd --executors uid) learns of
 * a datablock's death from its notice queue (EXEC_FORGOTTEN), read at
 * its next take, not at the moment of death as the in-process engine's
 * forget notifier does.  Meanwhile its engine may still write the dead
 * datablock's device copy back to host pages (write-behind after 1 s,
 * eviction, a space closing): pages ptaskd would already have handed to
 * another datablock of the same uid.  Found by the debug guest:
 * executors_per_process, another process's round read its neighbour's
 * stale write-behind (2026-12-08).  So every datablock whose place an
 * executor is told keeps a reference to its buffer (its memory) until
 * the executor has read its death notice and taken again: it processes
 * the notices on its taking thread before its next take.
 *
 * Locking: the namespace lock (every function takes it).
 */
#include <stdlib.h>
#include "daemon/user/ns_user_priv.h"

/*
 * struct pd_exec_hold - one datablock's memory an executor may write
 * @node: in pd_client.holds by handle
 * @buf: the reference that keeps the memory
 * @dying: its death notice was read: let go at the executor's next take
 * @next: the dying list
 */
struct pd_exec_hold {
	struct pc_hash_node node;
	struct ptask_buf *buf;
	bool dying;
	struct pd_exec_hold *next;
};

static struct pd_exec_hold *find_locked(struct pd_client *c, uint32_t handle)
{
	struct pc_hash_node *n = pc_hash_find(&c->holds, handle);

	return n ? pc_hash_entry(n, struct pd_exec_hold, node) : NULL;
}

int pd_ns_exec_place(struct pd_client *c, uint32_t handle,
		     struct pd_map_info *mi)
{
	struct pd_exec_hold *h;
	struct ptask_buf *buf;
	int err;

	pd_ns_lock(c->ns);
	err = pd_ns_map_locked(c, handle, mi, &buf);
	if (err)
		goto out;
	h = find_locked(c, handle);
	if (h && !h->dying) {
		ptask_os_buf_put(buf);	/* held already */
		goto out;
	}
	if (!c->holds.buckets) {
		err = pc_hash_init(&c->holds, 256);
		if (err) {
			ptask_os_buf_put(buf);
			goto out;
		}
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		ptask_os_buf_put(buf);
		err = -ENOMEM;
		goto out;
	}
	h->buf = buf;
	pc_hash_add(&c->holds, &h->node, handle);
out:
	pd_ns_unlock(c->ns);
	return err;
}

void pd_ns_exec_forgotten(struct pd_client *c, const uint32_t *handles,
			  uint32_t n)
{
	struct pd_exec_hold *h;
	uint32_t i;

	pd_ns_lock(c->ns);
	for (i = 0; i < n; i++) {
		h = find_locked(c, handles[i]);
		if (!h || h->dying)
			continue;
		pc_hash_del(&c->holds, &h->node);
		h->dying = true;
		h->next = c->dying;
		c->dying = h;
	}
	pd_ns_unlock(c->ns);
}

/* Let go of the dying holds; the namespace lock held. */
static void release_dying_locked(struct pd_client *c)
{
	struct pd_exec_hold *h;

	while ((h = c->dying)) {
		c->dying = h->next;
		ptask_os_buf_put(h->buf);
		free(h);
	}
}

void pd_ns_exec_took(struct pd_client *c)
{
	if (!__atomic_load_n(&c->dying, __ATOMIC_RELAXED))
		return;
	pd_ns_lock(c->ns);
	release_dying_locked(c);
	pd_ns_unlock(c->ns);
}

void pd_ns_exec_holds_free_locked(struct pd_client *c)
{
	struct pc_hash_node *n;

	release_dying_locked(c);
	while ((n = pc_hash_pop(&c->holds))) {
		struct pd_exec_hold *h = pc_hash_entry(n, struct pd_exec_hold,
						       node);

		ptask_os_buf_put(h->buf);
		free(h);
	}
	pc_hash_fini(&c->holds);
}
