// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * client.c - one open of /dev/ptask (or one ptaskd connection): the graphs
 * it opened, the datablocks it holds, the invocations it took.
 */
#include "ptask_core.h"

/**
 * ptask_core_client_create() - a new client with nothing open
 * @ns: the namespace
 * @os: the shell's data (its wait queue)
 *
 * Return: the client, or NULL on -ENOMEM.
 */
struct ptask_client *ptask_core_client_create(struct ptask_ns *ns, void *os)
{
	struct ptask_client *c;

	ptask_os_assert_locked(ns);
	c = ptask_os_zalloc(sizeof(*c));
	if (!c)
		return NULL;
	c->ns = ns;
	c->os = os;
	ptask_list_init(&c->opens);
	ptask_list_init(&c->holds);
	ptask_list_init(&c->taken);
	ptask_list_init(&c->forgotten_node);
	ptask_list_init(&c->self_ptasks);
	ptask_list_init(&c->self_ready);
	ptask_list_init(&c->created);
	c->id = ns->next_client_id++;
	ptask_list_add_tail(&c->ns_node, &ns->clients);
	ptask_count_inc(ns, PTASK_COUNT_CLIENTS);
	return c;
}

/**
 * ptask_core_client_destroy() - the client's fd closed or its process died
 * @c: the client
 *
 * Fails the invocations it took as an executor, closes its graphs (freeing
 * those nobody else has open) and drops every datablock it holds.
 */
void ptask_core_client_destroy(struct ptask_client *c)
{
	struct ptask_ns *ns = c->ns;
	struct ptask_list *pos, *tmp;

	ptask_os_assert_locked(ns);
	if (c->executor)
		ptask_core_exec_unregister(c);
	ptask_exec_fail_taken(c, true);
	/* Nobody else can run its PTASK_PTASK_SELF ptasks: their graphs fail. */
	ptask_list_for_each_safe(pos, tmp, &c->self_ptasks) {
		struct ptask_ptask *p = ptask_list_entry(pos,
				struct ptask_ptask, self_node);

		if (p->graph->state == PTASK_GRAPH_BUILDING ||
		    p->graph->state == PTASK_GRAPH_RUNNING)
			ptask_graph_stop(p->graph, PTASK_GRAPH_FAILED);
		ptask_list_del(&p->self_node);
		p->self = NULL;
	}
	/* Ptasks it made may outlive it in a graph someone else has open. */
	ptask_list_for_each_safe(pos, tmp, &c->created) {
		struct ptask_ptask *p = ptask_list_entry(pos,
				struct ptask_ptask, creator_node);

		ptask_list_del(&p->creator_node);
		p->creator = NULL;
	}
	ptask_list_for_each_safe(pos, tmp, &c->opens)
		ptask_core_graph_close(ptask_list_entry(pos, struct ptask_open,
							client_node));
	ptask_list_for_each_safe(pos, tmp, &c->holds) {
		struct ptask_hold *h = ptask_list_entry(pos, struct ptask_hold,
							node);

		while (h->count > 1) {
			h->count--;
			ptask_datablock_put(ns, h->db);
		}
		ptask_client_unhold(c, h);
	}
	ptask_list_del(&c->ns_node);
	ptask_count_dec(ns, PTASK_COUNT_CLIENTS);
	ptask_os_free(c);
}

/**
 * ptask_client_wake() - tell @c's sleepers and pollers to look again
 * @c: the client
 */
void ptask_client_wake(struct ptask_client *c)
{
	c->wake_seq++;
	ptask_os_client_wake(c);
}

/**
 * ptask_client_find_hold() - the client's hold on @db
 * @c: the client
 * @db: the datablock
 *
 * Return: the hold, or NULL if @c holds no reference to @db.
 */
struct ptask_hold *ptask_client_find_hold(struct ptask_client *c,
					  struct ptask_datablock *db)
{
	struct ptask_list *pos;

	ptask_list_for_each(pos, &db->holds) {
		struct ptask_hold *h = ptask_list_entry(pos, struct ptask_hold,
							db_node);
		if (h->client == c)
			return h;
	}
	return NULL;
}

/**
 * ptask_client_hold() - record that @c holds one more reference to @db
 * @c: the client
 * @db: the datablock; the caller passes one reference to the hold
 *
 * At most PTASK_HOLD_MAX references of one client to one datablock:
 * what one client can pin is bounded, and with it the datablock's count
 * (ptask_datablock_get saturates beyond anything clients can reach).
 *
 * Return: 0, -EMFILE (the client holds PTASK_HOLD_MAX already) or
 * -ENOMEM; on error the reference stays with the caller.
 */
int ptask_client_hold(struct ptask_client *c, struct ptask_datablock *db)
{
	struct ptask_hold *h = ptask_client_find_hold(c, db);

	if (h && h->count >= PTASK_HOLD_MAX)
		return -EMFILE;
	if (!h) {
		h = ptask_os_zalloc(sizeof(*h));
		if (!h)
			return -ENOMEM;
		h->db = db;
		h->client = c;
		ptask_list_add_tail(&h->node, &c->holds);
		ptask_list_add_tail(&h->db_node, &db->holds);
	}
	h->count++;
	return 0;
}

/**
 * ptask_client_unhold() - drop one reference of a hold
 * @c: the client
 * @h: one of its holds; freed when its count reaches 0
 */
void ptask_client_unhold(struct ptask_client *c, struct ptask_hold *h)
{
	struct ptask_datablock *db = h->db;

	if (--h->count == 0) {
		ptask_list_del(&h->node);
		ptask_list_del(&h->db_node);
		ptask_os_free(h);
	}
	ptask_datablock_put(c->ns, db);
}

/**
 * ptask_client_has_open() - has @c opened @g?
 * @c: the client
 * @g: the graph
 *
 * Return: true if so.
 */
bool ptask_client_has_open(struct ptask_client *c, struct ptask_graph *g)
{
	struct ptask_list *pos;

	ptask_list_for_each(pos, &c->opens)
		if (ptask_list_entry(pos, struct ptask_open,
				     client_node)->graph == g)
			return true;
	return false;
}

/* Readiness of one graph's channels for a client. */
static u32 graph_poll(struct ptask_graph *g)
{
	struct ptask_list *pos;
	u32 mask = 0;

	if (g->state == PTASK_GRAPH_TERMINATED || g->state == PTASK_GRAPH_FAILED)
		return PTASK_POLL_ERR;
	ptask_list_for_each(pos, &g->channels) {
		struct ptask_channel *ch =
			ptask_list_entry(pos, struct ptask_channel, node);

		if (!ch->dst && ch->count)
			mask |= PTASK_POLL_IN;
		if (!ch->src && !ptask_channel_full(ch))
			mask |= PTASK_POLL_OUT;
	}
	return mask;
}

/**
 * ptask_core_client_poll() - what @c could do now without blocking
 * @c: the client
 *
 * Return: PTASK_POLL_IN when a graph output channel of one of its graphs
 * holds a datablock, one of its PTASK_PTASK_SELF ptasks is Queued, or
 * (for an executor) an invocation is queued for executors,
 * PTASK_POLL_OUT when a graph input channel has room, PTASK_POLL_ERR when
 * one of its graphs was terminated or failed.
 */
u32 ptask_core_client_poll(struct ptask_client *c)
{
	struct ptask_list *pos;
	u32 mask = 0;

	ptask_os_assert_locked(c->ns);
	/* Not for work held by a GPU budget: a take would find nothing. */
	if ((c->executor && ptask_sched_any_eligible(c->ns)) ||
	    !ptask_list_empty(&c->self_ready))
		mask |= PTASK_POLL_IN;
	if (c->forgotten_count)
		mask |= PTASK_POLL_PRI;
	ptask_list_for_each(pos, &c->opens)
		mask |= graph_poll(ptask_list_entry(pos, struct ptask_open,
						    client_node)->graph);
	return mask;
}

/**
 * ptask_core_client_usage() - @c's accounting (fdinfo's DRM usage keys)
 * @c: the client
 * @u: filled
 */
void ptask_core_client_usage(struct ptask_client *c, struct ptask_client_usage *u)
{
	struct ptask_list *pos;

	ptask_os_assert_locked(c->ns);
	memset(u, 0, sizeof(*u));
	u->id = c->id;
	u->gpu_ns = c->gpu_ns;
	u->invocations = c->invocations;
	ptask_list_for_each(pos, &c->holds)
		u->held_bytes += ptask_list_entry(pos, struct ptask_hold,
						  node)->db->bytes;
	ptask_list_for_each(pos, &c->created)
		u->ptasks++;
}
