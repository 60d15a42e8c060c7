// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * graph_core_test.c - the core's handle table and graphs: handles (many
 * objects, table growth, wrap-around, wrong-type lookups), graph open and
 * create (EXCL, permissions by class, CAP_DAC_OVERRIDE, supplementary
 * groups), anonymous graphs, lookup by name, GRAPH_CLOSE, terminate, run
 * and the frozen shape, and client destruction.
 */
#include <stdlib.h>
#include <string.h>
#include "tests/unit/harness.h"

/* A graph owned by h_user with mode 0600, created by @c. */
static u32 mkgraph(struct ptask_client *c, const char *name)
{
	u32 g = 0;

	CHECK_OK(h_graph(c, name, PTASK_GRAPH_CREATE, 0600, &g));
	return g;
}

static void test_handles_many(void)
{
	enum { N = 1000 };
	struct ptask_client *c = h_client();
	u32 g = mkgraph(c, "many"), *h = calloc(N, sizeof(*h));
	u64 cursor = 0;
	u32 i, seen = 0, last = 0;
	struct ptask_obj *o;

	REQUIRE(h);
	for (i = 0; i < N; i++) {
		if (!CHECK_OK(h_tmpl(c, g, PTASK_TEMPLATE_OPAQUE, 1, 8, 1, 1,
				     &h[i])))
			break;
		CHECK(h[i] != 0);
		CHECK(h[i] != g);
		if (i)
			CHECK(h[i] != h[i - 1]);
	}
	CHECK_EQ(h_ns.counts[PTASK_COUNT_TEMPLATES], N);
	CHECK_EQ(h_ns.hcount, N + 1);
	/* The table grew past its 64 buckets, and every handle is found. */
	CHECK(h_ns.hmask + 1 > 64);
	CHECK(h_ns.hcount <= (h_ns.hmask + 1) * 2);
	for (i = 0; i < N; i++) {
		o = ptask_core_ns_find(&h_ns, h[i], PTASK_OBJ_TEMPLATE);
		CHECK(o && o->handle == h[i]);
		/* The same handle with another type names nothing. */
		CHECK(!ptask_core_ns_find(&h_ns, h[i], PTASK_OBJ_GRAPH));
		CHECK(!ptask_core_ns_find(&h_ns, h[i], PTASK_OBJ_CHANNEL));
	}
	/* ptask_core_ns_next walks every object once, in handle order. */
	while ((o = ptask_core_ns_next(&h_ns, &cursor))) {
		CHECK(o->handle > last);
		last = o->handle;
		seen++;
	}
	CHECK_EQ(seen, N + 1);
	free(h);
}

static void test_handle_zero_and_missing(void)
{
	struct ptask_client *c = h_client();
	u32 g = mkgraph(c, "z"), t;

	CHECK(!ptask_core_ns_find(&h_ns, 0, PTASK_OBJ_GRAPH));
	CHECK_ERR(h_tmpl(c, 0, PTASK_TEMPLATE_OPAQUE, 1, 1, 1, 1, &t), -ENOENT);
	CHECK_ERR(h_tmpl(c, 0x7fffffff, PTASK_TEMPLATE_OPAQUE, 1, 1, 1, 1, &t),
		  -ENOENT);
	CHECK_ERR(h_ptask(c, 12345, 1, &t), -ENOENT);
	CHECK_ERR(h_run(c, 999), -ENOENT);
	CHECK_ERR(h_terminate(c, 0), -ENOENT);
	CHECK_ERR(h_close(c, 0), -ENOENT);
	CHECK_ERR(h_release(c, g), -ENOENT);	/* a graph is no datablock */
}

/* Every call that names an object refuses a handle of another type. */
static void test_wrong_type_lookups(void)
{
	struct ptask_client *c = h_client();
	u32 g = mkgraph(c, "types"), t, p, in, out, ch, chout, db;
	struct ptask_priority pr = { .flags = PTASK_PRIO_SET_STATIC,
				     .static_prio = 1 };

	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_OPAQUE, 1, 16, 1, 1, &t));
	REQUIRE_OK(h_ptask(c, g, 2, &p));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, 0, &in));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_OUTPUT, 0, &out));
	REQUIRE_OK(h_chan(c, g, 0, in, 2, 0, &ch));
	REQUIRE_OK(h_chan(c, g, out, 0, 2, 0, &chout));
	REQUIRE_OK(h_db(c, 16, &db));

	/* graph expected */
	CHECK_ERR(h_tmpl(c, t, PTASK_TEMPLATE_OPAQUE, 1, 1, 1, 1, NULL), -ENOENT);
	CHECK_ERR(h_ptask(c, p, 1, NULL), -ENOENT);
	CHECK_ERR(h_chan(c, ch, 0, in, 1, 0, NULL), -ENOENT);
	CHECK_ERR(h_run(c, db), -ENOENT);
	CHECK_ERR(h_terminate(c, in), -ENOENT);
	CHECK_ERR(h_close(c, t), -ENOENT);
	CHECK_ERR(h_lookup(c, p, PTASK_OBJ_PORT, "x", NULL), -ENOENT);
	/* ptask expected */
	CHECK_ERR(h_port(c, g, PTASK_PORT_INPUT, 0, NULL), -ENOENT);
	CHECK_ERR(h_port(c, in, PTASK_PORT_INPUT, 0, NULL), -ENOENT);
	pr.ptask = in;
	CHECK_ERR(h_call(c, NULL, PTASK_IOC_PTASK_SET_PRIORITY, &pr, NULL),
		  -ENOENT);
	/* template expected */
	CHECK_ERR(h_port(c, p, PTASK_PORT_INPUT, g, NULL), -ENOENT);
	CHECK_ERR(h_db_tmpl(c, p, 0, NULL, NULL), -ENOENT);
	CHECK_ERR(h_chan(c, g, out, 0, 1, db, NULL), -ENOENT);
	/* port expected */
	CHECK_ERR(h_chan(c, g, p, 0, 1, 0, NULL), -ENOENT);
	CHECK_ERR(h_chan(c, g, 0, t, 1, 0, NULL), -ENOENT);
	/* channel expected */
	CHECK_ERR(h_push(c, in, db), -ENOENT);
	CHECK_ERR(h_pull(c, out, NULL), -ENOENT);
	/* datablock expected */
	CHECK_ERR(h_push(c, ch, t), -ENOENT);
	CHECK_ERR(h_release(c, ch), -ENOENT);
	/* wrong direction: -EINVAL, after the lookups */
	CHECK_ERR(h_push(c, chout, db), -EINVAL);
	CHECK_ERR(h_pull(c, ch, NULL), -EINVAL);
	CHECK_ERR(h_chan(c, g, in, 0, 1, 0, NULL), -EINVAL);
	CHECK_ERR(h_chan(c, g, 0, out, 1, 0, NULL), -EINVAL);
	CHECK_OK(h_release(c, db));
}

/* The handle counter wraps, skips 0 and skips handles still in use. */
static void test_handle_wrap(void)
{
	struct ptask_client *c = h_client();
	u32 g = mkgraph(c, "wrap"), t1, t2, t3, t4;

	h_ns.next_handle = 0xfffffffeu;
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_OPAQUE, 1, 1, 1, 1, &t1));
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_OPAQUE, 1, 1, 1, 1, &t2));
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_OPAQUE, 1, 1, 1, 1, &t3));
	CHECK_EQ(t1, 0xfffffffeu);
	CHECK_EQ(t2, 0xffffffffu);
	CHECK(t3 != 0);
	CHECK(t3 != g);		/* g is handle 1 and still alive */
	CHECK_EQ(t3, g + 1);
	/* Wrap again onto t1's handle: skipped while t1 lives. */
	h_ns.next_handle = t1;
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_OPAQUE, 1, 1, 1, 1, &t4));
	CHECK(t4 != t1 && t4 != t2 && t4 != 0 && t4 != g && t4 != t3);
}

static void test_graph_create_open(void)
{
	struct ptask_client *a = h_client(), *b = h_client();
	u32 g, g2, g3;

	CHECK_ERR(h_graph(a, "gx", 0, 0, &g), -ENOENT);
	REQUIRE_OK(h_graph(a, "gx", PTASK_GRAPH_CREATE, 0600, &g));
	CHECK(g != 0);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_GRAPHS], 1);
	/* CREATE on an existing graph opens it. */
	CHECK_OK(h_graph(b, "gx", PTASK_GRAPH_CREATE, 0, &g2));
	CHECK_EQ(g2, g);
	/* EXCL: -EEXIST, also for a client that has it open already. */
	CHECK_ERR(h_graph(b, "gx", PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL, 0600,
			  &g3), -EEXIST);
	CHECK_ERR(h_graph(a, "gx", PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL, 0600,
			  &g3), -EEXIST);
	/* Opening twice from one client: the same handle, one open. */
	CHECK_OK(h_graph(a, "gx", 0, 0, &g3));
	CHECK_EQ(g3, g);
	CHECK_EQ(h_graph_obj(g)->opens, 2);
	CHECK_EQ(h_graph_obj(g)->uid, 1000);
	CHECK_EQ(h_graph_obj(g)->gid, 1000);
	CHECK_EQ(h_graph_obj(g)->mode, 0600);
	CHECK_EQ(h_graph_obj(g)->state, PTASK_GRAPH_BUILDING);
	/* Names are case-sensitive and exact. */
	CHECK_ERR(h_graph(a, "GX", 0, 0, NULL), -ENOENT);
	CHECK_ERR(h_graph(a, "gx/", 0, 0, NULL), -ENOENT);
	/* Another name: another graph. */
	CHECK_OK(h_graph(a, "a/b.c-d_e", PTASK_GRAPH_CREATE, 0, &g3));
	CHECK(g3 != g);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_GRAPHS], 2);
}

static bool in_group_1000(const struct ptask_caller *who, u32 gid)
{
	(void)who;
	return gid == 1000;
}

static bool in_no_group(const struct ptask_caller *who, u32 gid)
{
	(void)who;
	(void)gid;
	return false;
}

/* Open "perm" (mode @mode, owned by 1000:1000) as @who: the result. */
static int open_as(u32 mode, struct ptask_caller who)
{
	struct ptask_client *owner = h_client(), *c = h_client();
	u32 g;
	int err;

	if (h_graph(owner, "perm", PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL, mode,
		    &g))
		return -9999;
	err = h_graph_who(c, &who, "perm", 0, 0, NULL);
	ptask_core_client_destroy(c);
	ptask_core_client_destroy(owner);
	return err;
}

static void test_graph_permissions(void)
{
	struct ptask_caller owner = h_who(1000, 1000);
	struct ptask_caller grp = h_who(2000, 1000);
	struct ptask_caller other = h_who(2000, 2000);
	struct ptask_caller suppl = h_who(2000, 2000);
	struct ptask_caller nosuppl = h_who(2000, 2000);
	struct ptask_caller admin = h_who(3000, 3000);

	suppl.in_group = in_group_1000;
	nosuppl.in_group = in_no_group;
	admin.dac_override = true;

	CHECK_OK(open_as(0600, owner));
	CHECK_ERR(open_as(0400, owner), -EACCES);	/* read only */
	CHECK_ERR(open_as(0200, owner), -EACCES);	/* write only */
	CHECK_ERR(open_as(0066, owner), -EACCES);	/* owner class rules */
	CHECK_ERR(open_as(0600, grp), -EACCES);
	CHECK_OK(open_as(0060, grp));
	CHECK_ERR(open_as(0040, grp), -EACCES);
	CHECK_ERR(open_as(0606, grp), -EACCES);		/* group class rules */
	CHECK_ERR(open_as(0660, other), -EACCES);
	CHECK_OK(open_as(0006, other));
	CHECK_ERR(open_as(0004, other), -EACCES);
	CHECK_ERR(open_as(0002, other), -EACCES);
	/* Supplementary groups count through the in_group callback. */
	CHECK_OK(open_as(0060, suppl));
	CHECK_ERR(open_as(0006, suppl), -EACCES);
	CHECK_ERR(open_as(0060, nosuppl), -EACCES);
	CHECK_OK(open_as(0006, nosuppl));
	/* CAP_DAC_OVERRIDE passes any mode. */
	CHECK_OK(open_as(0000, admin));
	CHECK_OK(open_as(0000, (struct ptask_caller){ .uid = 0, .gid = 0,
						      .dac_override = true }));
	/* Without it, uid 0 is just another class. */
	CHECK_ERR(open_as(0600, h_who(0, 0)), -EACCES);
	/*
	 * CREATE on an existing graph of another owner is -EEXIST, whatever
	 * its mode: a squatter's 0666 graph is never joined by a CREATE
	 * that meant to own (issue 13, the outside attack); its owner's
	 * CREATE opens it, its mode unchanged.
	 */
	{
		struct ptask_client *o = h_client(), *c = h_client();
		u32 g2;

		CHECK_OK(h_graph(o, "p2", PTASK_GRAPH_CREATE, 0600, &g2));
		CHECK_ERR(h_graph_who(c, &other, "p2", PTASK_GRAPH_CREATE,
				      0666, NULL), -EEXIST);
		CHECK_OK(h_graph_who(c, &owner, "p2", PTASK_GRAPH_CREATE,
				     0666, NULL));
		CHECK_EQ(h_graph_obj(g2)->mode, 0600);
	}
	{
		struct ptask_client *sq = h_client(), *svc = h_client();
		struct ptask_caller admin0 = { .uid = 0, .gid = 0,
					       .dac_override = true };

		CHECK_OK(h_graph_who(sq, &other, "svc", PTASK_GRAPH_CREATE,
				     0666, NULL));
		CHECK_ERR(h_graph_who(svc, &owner, "svc", PTASK_GRAPH_CREATE,
				      0600, NULL), -EEXIST);
		CHECK_ERR(h_graph_who(svc, &admin0, "svc", PTASK_GRAPH_CREATE,
				      0600, NULL), -EEXIST);
		/* joining on purpose still works, by the graph's mode */
		CHECK_OK(h_graph_who(svc, &owner, "svc", 0, 0, NULL));
	}
	/* A graph created by another user is owned by that user. */
	{
		struct ptask_client *o = h_client(), *c = h_client();
		u32 g;

		CHECK_OK(h_graph_who(o, &other, "p3", PTASK_GRAPH_CREATE, 0600,
				     &g));
		CHECK_EQ(h_graph_obj(g)->uid, 2000);
		CHECK_ERR(h_graph_who(c, &owner, "p3", 0, 0, NULL), -EACCES);
		CHECK_OK(h_graph_who(c, &other, "p3", 0, 0, NULL));
	}
}

static void test_anonymous_graphs(void)
{
	struct ptask_client *a = h_client(), *b = h_client();
	u32 g1, g2, g3;

	REQUIRE_OK(h_graph(a, "", PTASK_GRAPH_CREATE, 0666, &g1));
	REQUIRE_OK(h_graph(a, "", PTASK_GRAPH_CREATE, 0666, &g2));
	CHECK(g1 != g2);
	CHECK_EQ(h_graph_obj(g1)->name[0], 0);
	/* EXCL has nothing to collide with. */
	CHECK_OK(h_graph(b, "", PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL, 0, &g3));
	CHECK(g3 != g1 && g3 != g2);
	/* Nobody can open one by name: "" without CREATE is -EINVAL. */
	CHECK_ERR(h_graph(b, "", 0, 0, NULL), -EINVAL);
	/* And a handle alone gives no access. */
	CHECK_ERR(h_tmpl(b, g1, PTASK_TEMPLATE_OPAQUE, 1, 1, 1, 1, NULL),
		  -EACCES);
	CHECK_ERR(h_run(b, g1), -EACCES);
	CHECK_ERR(h_close(b, g1), -ENOENT);
	CHECK_OK(h_tmpl(a, g1, PTASK_TEMPLATE_OPAQUE, 1, 1, 1, 1, NULL));
	CHECK_EQ(h_ns.counts[PTASK_COUNT_GRAPHS], 3);
	CHECK_OK(h_close(a, g1));
	CHECK_EQ(h_ns.counts[PTASK_COUNT_GRAPHS], 2);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_TEMPLATES], 0);
}

static void test_lookup(void)
{
	struct ptask_client *a = h_client(), *b = h_client(), *x = h_client();
	u32 g, t, p, in, out, ch, r, gb;
	struct ptask_lookup bad = { .type = PTASK_OBJ_TEMPLATE };

	REQUIRE_OK(h_graph(a, "shared", PTASK_GRAPH_CREATE, 0666, &g));
	REQUIRE_OK(h_tmpl_named(a, g, PTASK_TEMPLATE_ARRAY, 4, 4, 1, 1, "t",
				&t));
	REQUIRE_OK(h_ptask_named(a, g, 2, "p", &p));
	REQUIRE_OK(h_port_named(a, p, PTASK_PORT_INPUT, t, "in", &in));
	REQUIRE_OK(h_port_named(a, p, PTASK_PORT_OUTPUT, 0, "out", &out));
	REQUIRE_OK(h_chan_named(a, g, 0, in, 4, t, "feed", &ch));
	/* An unnamed object is found by no name. */
	REQUIRE_OK(h_chan(a, g, out, 0, 4, 0, NULL));

	REQUIRE_OK(h_graph(b, "shared", 0, 0, &gb));
	CHECK_EQ(gb, g);
	CHECK_OK(h_lookup(b, g, PTASK_OBJ_TEMPLATE, "t", &r));
	CHECK_EQ(r, t);
	CHECK_OK(h_lookup(b, g, PTASK_OBJ_PTASK, "p", &r));
	CHECK_EQ(r, p);
	CHECK_OK(h_lookup(b, g, PTASK_OBJ_PORT, "in", &r));
	CHECK_EQ(r, in);
	CHECK_OK(h_lookup(b, g, PTASK_OBJ_PORT, "out", &r));
	CHECK_EQ(r, out);
	CHECK_OK(h_lookup(b, g, PTASK_OBJ_CHANNEL, "feed", &r));
	CHECK_EQ(r, ch);
	/* Names are per type. */
	CHECK_ERR(h_lookup(b, g, PTASK_OBJ_CHANNEL, "t", &r), -ENOENT);
	CHECK_ERR(h_lookup(b, g, PTASK_OBJ_PTASK, "in", &r), -ENOENT);
	CHECK_ERR(h_lookup(b, g, PTASK_OBJ_TEMPLATE, "nope", &r), -ENOENT);
	/* Argument checks: empty name, graph or datablock type. */
	CHECK_ERR(h_lookup(b, g, PTASK_OBJ_TEMPLATE, "", &r), -EINVAL);
	CHECK_ERR(h_lookup(b, g, PTASK_OBJ_GRAPH, "t", &r), -EINVAL);
	CHECK_ERR(h_lookup(b, g, PTASK_OBJ_DATABLOCK, "t", &r), -EINVAL);
	/* A client that did not open the graph: -EACCES; no graph: -ENOENT. */
	CHECK_ERR(h_lookup(x, g, PTASK_OBJ_TEMPLATE, "t", &r), -EACCES);
	CHECK_ERR(h_lookup(x, t, PTASK_OBJ_TEMPLATE, "t", &r), -ENOENT);
	bad.graph = g;
	strcpy(bad.name, "t");
	bad.reserved = 1;
	CHECK_ERR(h_call(b, NULL, PTASK_IOC_LOOKUP, &bad, NULL), -EINVAL);
	/* Terminated: -ESHUTDOWN. */
	CHECK_OK(h_terminate(a, g));
	CHECK_ERR(h_lookup(b, g, PTASK_OBJ_TEMPLATE, "t", &r), -ESHUTDOWN);
}

static void test_graph_close(void)
{
	struct ptask_client *a = h_client(), *b = h_client();
	u32 g, g2, p, in, ch, db;

	REQUIRE_OK(h_graph(a, "cl", PTASK_GRAPH_CREATE, 0666, &g));
	REQUIRE_OK(h_graph(b, "cl", 0, 0, &g2));
	REQUIRE_OK(h_ptask(a, g, 1, &p));
	REQUIRE_OK(h_port(a, p, PTASK_PORT_INPUT, 0, &in));
	REQUIRE_OK(h_chan(a, g, 0, in, 4, 0, &ch));
	REQUIRE_OK(h_db(a, 8, &db));
	REQUIRE_OK(h_push(a, ch, db));
	REQUIRE_OK(h_push(a, ch, db));
	CHECK_EQ(h_db_obj(db)->refs, 3);	/* hold, port, channel slot */

	CHECK_OK(h_close(a, g));
	/* b still has it: everything stays; a lost access. */
	CHECK_EQ(h_ns.counts[PTASK_COUNT_GRAPHS], 1);
	CHECK_EQ(h_graph_obj(g)->opens, 1);
	CHECK_ERR(h_push(a, ch, db), -EACCES);
	CHECK_ERR(h_close(a, g), -ENOENT);
	CHECK_ERR(h_push(b, ch, db), -ENOENT);	/* b holds no db */
	/* a may open it again by name (a new open). */
	CHECK_OK(h_graph(a, "cl", 0, 0, &g2));
	CHECK_EQ(g2, g);
	CHECK_OK(h_close(a, g));
	/* The last close frees the graph and what it held, not the hold. */
	CHECK_OK(h_close(b, g));
	CHECK_EQ(h_ns.counts[PTASK_COUNT_GRAPHS], 0);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_PTASKS], 0);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_PORTS], 0);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_CHANNELS], 0);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_DATABLOCKS], 1);
	CHECK_EQ(h_db_obj(db)->refs, 1);
	CHECK(!h_graph_obj(g));
	CHECK_ERR(h_close(b, g), -ENOENT);
	CHECK_ERR(h_run(b, g), -ENOENT);
	/* The name is free again. */
	CHECK_OK(h_graph(b, "cl", PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL, 0,
			 &g2));
	CHECK(g2 != g);
	/* GRAPH_CLOSE argument checks. */
	{
		struct ptask_graph_ctl ctl = { .graph = g2, .flags = 1 };

		CHECK_ERR(h_call(b, NULL, PTASK_IOC_GRAPH_CLOSE, &ctl, NULL),
			  -EINVAL);
		ctl.flags = 0;
		ctl.reserved = 7;
		CHECK_ERR(h_call(b, NULL, PTASK_IOC_GRAPH_CLOSE, &ctl, NULL),
			  -EINVAL);
	}
}

static void test_terminate(void)
{
	struct ptask_client *a = h_client(), *b = h_client();
	u32 g, g2, t, p, in, out, ch, chout, db, db2;
	unsigned long wakes;

	REQUIRE_OK(h_graph(a, "term", PTASK_GRAPH_CREATE, 0666, &g));
	REQUIRE_OK(h_graph(b, "term", 0, 0, NULL));
	REQUIRE_OK(h_tmpl(a, g, PTASK_TEMPLATE_OPAQUE, 1, 64, 1, 1, &t));
	REQUIRE_OK(h_ptask(a, g, 2, &p));
	REQUIRE_OK(h_port(a, p, PTASK_PORT_INPUT, 0, &in));
	REQUIRE_OK(h_port(a, p, PTASK_PORT_OUTPUT, 0, &out));
	REQUIRE_OK(h_chan(a, g, 0, in, 4, 0, &ch));
	REQUIRE_OK(h_chan(a, g, out, 0, 4, 0, &chout));
	REQUIRE_OK(h_db(a, 8, &db));
	REQUIRE_OK(h_push(a, ch, db));
	REQUIRE_OK(h_push(a, ch, db));
	REQUIRE_OK(h_run(a, g));
	CHECK(h_ready_has(p));
	CHECK_EQ(h_db_obj(db)->refs, 3);

	wakes = os_user_wakes;
	CHECK_OK(h_terminate(b, g));
	CHECK(os_user_wakes >= wakes + 2);	/* both openers woken */
	CHECK_EQ(h_graph_obj(g)->state, PTASK_GRAPH_TERMINATED);
	CHECK_EQ(h_ready_len(), 0);
	CHECK_EQ(h_ptask_obj(p)->state, PTASK_STATE_WAITING);
	CHECK(!h_port_obj(in)->occupant);
	CHECK_EQ(h_chan_obj(ch)->count, 0);
	CHECK_EQ(h_db_obj(db)->refs, 1);	/* only a's hold is left */
	CHECK(ptask_core_client_poll(a) & PTASK_POLL_ERR);

	/* Every call naming the graph or its objects: -ESHUTDOWN. */
	CHECK_ERR(h_terminate(a, g), -ESHUTDOWN);
	CHECK_ERR(h_run(a, g), -ESHUTDOWN);
	CHECK_ERR(h_tmpl(a, g, PTASK_TEMPLATE_OPAQUE, 1, 1, 1, 1, NULL),
		  -ESHUTDOWN);
	CHECK_ERR(h_ptask(a, g, 1, NULL), -ESHUTDOWN);
	CHECK_ERR(h_port(a, p, PTASK_PORT_INPUT, 0, NULL), -ESHUTDOWN);
	CHECK_ERR(h_chan(a, g, 0, in, 1, 0, NULL), -ESHUTDOWN);
	CHECK_ERR(h_push(a, ch, db), -ESHUTDOWN);
	CHECK_ERR(h_pull(a, chout, NULL), -ESHUTDOWN);
	CHECK_ERR(h_db_tmpl(a, t, 0, NULL, NULL), -ESHUTDOWN);
	CHECK_ERR(h_lookup(a, g, PTASK_OBJ_PTASK, "x", NULL), -ESHUTDOWN);
	{
		struct ptask_priority pr = { .ptask = p,
			.flags = PTASK_PRIO_SET_STATIC, .static_prio = 3 };

		CHECK_ERR(h_call(a, NULL, PTASK_IOC_PTASK_SET_PRIORITY, &pr,
				 NULL), -ESHUTDOWN);
	}
	/* Datablocks are not the graph's: the hold still works. */
	CHECK_OK(h_db(a, 8, &db2));
	CHECK_OK(h_write_tag(a, db, 7));

	/* The name is free: a new graph of that name, a new handle. */
	CHECK_OK(h_graph(b, "term", PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL,
			 0666, &g2));
	CHECK(g2 != g);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_GRAPHS], 2);
	/* The old objects live until the last close. */
	CHECK(h_graph_obj(g) != NULL);
	CHECK_OK(h_close(a, g));
	CHECK(h_graph_obj(g) != NULL);
	CHECK_OK(h_close(b, g));
	CHECK(!h_graph_obj(g));
	CHECK(!h_port_obj(in));
	CHECK_EQ(h_ns.counts[PTASK_COUNT_GRAPHS], 1);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_CHANNELS], 0);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_TEMPLATES], 0);
	CHECK(!(ptask_core_client_poll(a) & PTASK_POLL_ERR));
}

static void test_client_destroy_frees_all(void)
{
	struct ptask_client *a = h_client(), *b = h_client();
	u32 g, gs, p, in, out, ch, chout, db, i;

	REQUIRE_OK(h_graph(a, "own", PTASK_GRAPH_CREATE, 0600, &g));
	REQUIRE_OK(h_graph(a, "shared", PTASK_GRAPH_CREATE, 0666, &gs));
	REQUIRE_OK(h_graph(b, "shared", 0, 0, NULL));
	REQUIRE_OK(h_graph(a, "", PTASK_GRAPH_CREATE, 0, NULL));
	REQUIRE_OK(h_ptask(a, g, 2, &p));
	REQUIRE_OK(h_port(a, p, PTASK_PORT_INPUT, 0, &in));
	REQUIRE_OK(h_port(a, p, PTASK_PORT_OUTPUT, 0, &out));
	REQUIRE_OK(h_chan(a, g, 0, in, 8, 0, &ch));
	REQUIRE_OK(h_chan(a, g, out, 0, 8, 0, &chout));
	REQUIRE_OK(h_run(a, g));
	for (i = 0; i < 5; i++) {
		REQUIRE_OK(h_db(a, 16, &db));
		REQUIRE_OK(h_push(a, ch, db));
		if (i & 1)
			REQUIRE_OK(h_release(a, db));
	}
	/* A datablock held three times. */
	REQUIRE_OK(h_db(a, 16, &db));
	h_db_obj(db)->refs += 2;
	REQUIRE_OK(ptask_client_hold(a, h_db_obj(db)));
	REQUIRE_OK(ptask_client_hold(a, h_db_obj(db)));
	CHECK_EQ(h_ns.counts[PTASK_COUNT_GRAPHS], 3);

	ptask_core_client_destroy(a);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_CLIENTS], 1);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_GRAPHS], 1);	/* "shared" */
	CHECK_EQ(h_ns.counts[PTASK_COUNT_PTASKS], 0);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_PORTS], 0);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_CHANNELS], 0);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_DATABLOCKS], 0);
	CHECK_EQ(os_user_buffers, 0);
	CHECK_EQ(h_ready_len(), 0);
	CHECK_EQ(h_graph_obj(gs)->opens, 1);
	CHECK_EQ(h_graph_obj(gs)->state, PTASK_GRAPH_BUILDING);
	ptask_core_client_destroy(b);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_GRAPHS], 0);
	CHECK_EQ(h_ns.hcount, 0);
}

/* A client destroyed while a mapping is live: the buffer outlives it. */
static void test_mapping_outlives_datablock(void)
{
	struct ptask_client *a = h_client();
	struct ptask_buf *buf;
	u64 bytes = 0;
	u32 db;

	REQUIRE_OK(h_db(a, 100, &db));
	REQUIRE_OK(ptask_core_datablock_map(a, db, &bytes, &buf));
	CHECK_EQ(bytes, 100);
	memset(os_user_buf_data(buf), 0xab, 100);
	ptask_core_client_destroy(a);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_DATABLOCKS], 0);
	CHECK_EQ(os_user_buffers, 1);
	CHECK_EQ(((unsigned char *)os_user_buf_data(buf))[99], 0xab);
	ptask_os_buf_put(buf);
	CHECK_EQ(os_user_buffers, 0);
	/* A client that holds nothing cannot map; offsets round-trip. */
	a = h_client();
	REQUIRE_OK(h_db(a, 1, &db));
	CHECK_ERR(ptask_core_datablock_map(h_client(), db, &bytes, &buf), -ENOENT);
	CHECK_EQ(ptask_core_datablock_mmap_handle(
			ptask_datablock_mmap_offset(h_db_obj(db))), db);
	CHECK_EQ(ptask_core_datablock_mmap_handle(
			ptask_datablock_mmap_offset(h_db_obj(db)) + 1), 0);
	CHECK_EQ(ptask_core_datablock_mmap_handle(1ULL << 50), 0);
}

/* Once running, the shape is fixed; pushes before run are kept. */
static void test_run_freezes_shape(void)
{
	struct ptask_client *a = h_client();
	u32 g, t, p, p2, in, out, ch, db;

	REQUIRE_OK(h_graph(a, "run", PTASK_GRAPH_CREATE, 0600, &g));
	REQUIRE_OK(h_tmpl(a, g, PTASK_TEMPLATE_OPAQUE, 1, 8, 1, 1, &t));
	REQUIRE_OK(h_ptask(a, g, 3, &p));
	REQUIRE_OK(h_port(a, p, PTASK_PORT_INPUT, 0, &in));
	REQUIRE_OK(h_port(a, p, PTASK_PORT_OUTPUT, 0, &out));
	REQUIRE_OK(h_chan(a, g, 0, in, 2, 0, &ch));
	REQUIRE_OK(h_db(a, 8, &db));
	CHECK_OK(h_push(a, ch, db));
	CHECK_EQ(h_ready_len(), 0);		/* not running yet */
	CHECK(h_port_obj(in)->occupant != NULL);
	CHECK_OK(h_run(a, g));
	CHECK_EQ(h_graph_obj(g)->state, PTASK_GRAPH_RUNNING);
	CHECK_ERR(h_run(a, g), -EALREADY);
	/* p has a port not yet opened: it never fires. */
	CHECK_EQ(h_ready_len(), 0);
	CHECK_ERR(h_ptask(a, g, 1, &p2), -EBUSY);
	CHECK_ERR(h_port(a, p, PTASK_PORT_OUTPUT, 0, NULL), -EBUSY);
	CHECK_ERR(h_chan(a, g, out, 0, 1, 0, NULL), -EBUSY);
	/* Argument and lookup errors come before -EBUSY. */
	CHECK_ERR(h_port(a, p, PTASK_PORT_OUTPUT, 999999, NULL), -ENOENT);
	CHECK_ERR(h_chan(a, g, in, 0, 1, 0, NULL), -EINVAL);
	/* Templates and datablocks may still be made. */
	CHECK_OK(h_tmpl(a, g, PTASK_TEMPLATE_OPAQUE, 1, 8, 1, 1, NULL));
	CHECK_OK(h_db_tmpl(a, t, 0, NULL, NULL));
	CHECK_EQ(h_ns.counts[PTASK_COUNT_PTASKS], 1);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_PORTS], 2);
}

/* Objects of a graph the client did not open: -EACCES, for each type. */
static void test_access_rule(void)
{
	struct ptask_client *a = h_client(), *x = h_client();
	u32 g, t, p, in, out, ch, chout, db, dbx;
	struct ptask_priority pr = { .flags = PTASK_PRIO_SET_STATIC };
	struct ptask_geometry geo = { 0 };

	REQUIRE_OK(h_graph(a, "acc", PTASK_GRAPH_CREATE, 0600, &g));
	REQUIRE_OK(h_tmpl(a, g, PTASK_TEMPLATE_OPAQUE, 1, 8, 1, 1, &t));
	REQUIRE_OK(h_ptask(a, g, 2, &p));
	REQUIRE_OK(h_port(a, p, PTASK_PORT_INPUT, 0, &in));
	REQUIRE_OK(h_port(a, p, PTASK_PORT_OUTPUT, 0, &out));
	REQUIRE_OK(h_chan(a, g, 0, in, 2, 0, &ch));
	REQUIRE_OK(h_chan(a, g, out, 0, 2, 0, &chout));
	REQUIRE_OK(h_db(a, 8, &db));
	REQUIRE_OK(h_db(x, 8, &dbx));

	CHECK_ERR(h_tmpl(x, g, PTASK_TEMPLATE_OPAQUE, 1, 1, 1, 1, NULL),
		  -EACCES);
	CHECK_ERR(h_ptask(x, g, 1, NULL), -EACCES);
	CHECK_ERR(h_port(x, p, PTASK_PORT_INPUT, 0, NULL), -EACCES);
	CHECK_ERR(h_chan(x, g, 0, in, 1, 0, NULL), -EACCES);
	CHECK_ERR(h_push(x, ch, dbx), -EACCES);
	CHECK_ERR(h_pull(x, chout, NULL), -EACCES);
	CHECK_ERR(h_db_tmpl(x, t, 0, NULL, NULL), -EACCES);
	CHECK_ERR(h_run(x, g), -EACCES);
	CHECK_ERR(h_terminate(x, g), -EACCES);
	pr.ptask = p;
	CHECK_ERR(h_call(x, NULL, PTASK_IOC_PTASK_SET_PRIORITY, &pr, NULL),
		  -EACCES);
	geo.ptask = p;
	CHECK_ERR(h_call(x, NULL, PTASK_IOC_PTASK_SET_GEOMETRY, &geo, NULL),
		  -EACCES);
	/* Datablocks: only the holder. */
	CHECK_ERR(h_release(x, db), -ENOENT);
	CHECK_ERR(h_push(a, ch, dbx), -ENOENT);
	/* Another graph's port in a's graph: -EACCES before -EINVAL. */
	{
		u32 g2, p2, in2;

		REQUIRE_OK(h_graph(x, "acc2", PTASK_GRAPH_CREATE, 0600, &g2));
		REQUIRE_OK(h_ptask(x, g2, 1, &p2));
		REQUIRE_OK(h_port(x, p2, PTASK_PORT_INPUT, 0, &in2));
		CHECK_ERR(h_chan(a, g, out, in2, 1, 0, NULL), -EACCES);
		/* Both open: a port or template of another graph: -EINVAL. */
		REQUIRE_OK(h_graph(a, "acc2", 0, 0, NULL));
		CHECK_ERR(h_chan(a, g, out, in2, 1, 0, NULL), -EINVAL);
		CHECK_ERR(h_chan(a, g2, 0, in2, 1, t, NULL), -EINVAL);
		CHECK_ERR(h_port(a, p2, PTASK_PORT_INPUT, t, NULL), -EINVAL);
	}
}

static void test_priority_and_geometry(void)
{
	struct ptask_client *a = h_client();
	struct ptask_caller nice5 = h_user, nice5cap = h_user;
	u32 g, p, gp;
	static const u8 code[] = { 1, 2, 3 };
	struct ptask_priority pr = { 0 };
	struct ptask_geometry geo = { .grid = { 4, 2, 1 },
				      .block = { 32, 8, 1 },
				      .shared_bytes = 512 };

	nice5.nice = 5;
	nice5cap.nice = 5;
	nice5cap.sys_nice = true;
	REQUIRE_OK(h_graph(a, "prio", PTASK_GRAPH_CREATE, 0600, &g));
	REQUIRE_OK(h_ptask(a, g, 1, &p));
	CHECK_EQ(h_ptask_obj(p)->static_prio, PTASK_PRIO_DEFAULT);
	CHECK_EQ(h_ptask_obj(p)->proxy_nice, 0);
	CHECK_EQ(h_ptask_obj(p)->owner_pid, 4242);
	CHECK_EQ(h_ptask_obj(p)->owner_uid, 1000);
	REQUIRE_OK(h_gpu_ptask(a, &nice5, g, 1, code, sizeof(code), "k", &gp));
	CHECK_EQ(h_ptask_obj(gp)->proxy_nice, 5);

	pr.ptask = p;
	pr.flags = PTASK_PRIO_SET_STATIC;
	pr.static_prio = PTASK_PRIO_MAX;
	CHECK_OK(h_call(a, NULL, PTASK_IOC_PTASK_SET_PRIORITY, &pr, NULL));
	CHECK_EQ(h_ptask_obj(p)->static_prio, PTASK_PRIO_MAX);
	/* Lowering the proxy priority (higher nice) is always allowed. */
	pr.flags = PTASK_PRIO_SET_PROXY;
	pr.static_prio = 0;
	pr.proxy_nice = 10;
	CHECK_OK(h_call(a, &nice5, PTASK_IOC_PTASK_SET_PRIORITY, &pr, NULL));
	CHECK_EQ(h_ptask_obj(p)->proxy_nice, 10);
	CHECK_EQ(h_ptask_obj(p)->static_prio, PTASK_PRIO_MAX);
	/* Raising it above the caller's own nice needs CAP_SYS_NICE. */
	pr.proxy_nice = 4;
	CHECK_ERR(h_call(a, &nice5, PTASK_IOC_PTASK_SET_PRIORITY, &pr, NULL),
		  -EPERM);
	CHECK_EQ(h_ptask_obj(p)->proxy_nice, 10);
	pr.proxy_nice = 5;
	CHECK_OK(h_call(a, &nice5, PTASK_IOC_PTASK_SET_PRIORITY, &pr, NULL));
	pr.proxy_nice = -20;
	CHECK_OK(h_call(a, &nice5cap, PTASK_IOC_PTASK_SET_PRIORITY, &pr,
			NULL));
	CHECK_EQ(h_ptask_obj(p)->proxy_nice, -20);
	/* Both at once; -EPERM changes neither. */
	pr.flags = PTASK_PRIO_FLAGS_ALL;
	pr.static_prio = 7;
	pr.proxy_nice = -1;
	CHECK_ERR(h_call(a, &nice5, PTASK_IOC_PTASK_SET_PRIORITY, &pr, NULL),
		  -EPERM);
	CHECK_EQ(h_ptask_obj(p)->static_prio, PTASK_PRIO_MAX);

	/* Geometry: GPU ptasks only. */
	geo.ptask = p;
	CHECK_ERR(h_call(a, NULL, PTASK_IOC_PTASK_SET_GEOMETRY, &geo, NULL),
		  -EINVAL);
	geo.ptask = gp;
	CHECK_OK(h_call(a, NULL, PTASK_IOC_PTASK_SET_GEOMETRY, &geo, NULL));
	CHECK_EQ(h_ptask_obj(gp)->grid[0], 4);
	CHECK_EQ(h_ptask_obj(gp)->block[1], 8);
	CHECK_EQ(h_ptask_obj(gp)->shared_bytes, 512);
	memset(geo.grid, 0, sizeof(geo.grid));
	memset(geo.block, 0, sizeof(geo.block));
	CHECK_OK(h_call(a, NULL, PTASK_IOC_PTASK_SET_GEOMETRY, &geo, NULL));
	CHECK_EQ(h_ptask_obj(gp)->grid[0], 0);
}

static void test_poll_and_describe(void)
{
	struct ptask_client *a = h_client(), *e = h_executor();
	u32 g, p, in, out, ch, chout, db;
	struct ptask_obj_info info;
	struct h_take *t = calloc(1, sizeof(*t));
	struct ptask_exec_output o;

	REQUIRE(t);
	REQUIRE_OK(h_graph(a, "poll", PTASK_GRAPH_CREATE, 0600, &g));
	REQUIRE_OK(h_ptask_named(a, g, 2, "pp", &p));
	REQUIRE_OK(h_port(a, p, PTASK_PORT_INPUT, 0, &in));
	REQUIRE_OK(h_port(a, p, PTASK_PORT_OUTPUT, 0, &out));
	REQUIRE_OK(h_chan(a, g, 0, in, 1, 0, &ch));
	REQUIRE_OK(h_chan_named(a, g, out, 0, 1, 0, "res", &chout));
	CHECK_EQ(ptask_core_client_poll(a), PTASK_POLL_OUT);
	CHECK_EQ(ptask_core_client_poll(e), 0);
	REQUIRE_OK(h_db(a, 8, &db));
	REQUIRE_OK(h_push(a, ch, db));	/* into the port */
	REQUIRE_OK(h_push(a, ch, db));	/* fills the channel */
	CHECK_EQ(ptask_core_client_poll(a), 0);
	REQUIRE_OK(h_run(a, g));
	CHECK_EQ(ptask_core_client_poll(e), PTASK_POLL_IN);

	ptask_core_obj_describe(&h_ptask_obj(p)->obj, &info);
	CHECK_EQ(info.type, PTASK_OBJ_PTASK);
	CHECK_EQ(info.graph, g);
	CHECK_EQ(info.state, PTASK_STATE_QUEUED);
	CHECK_EQ(info.owner_pid, 4242);
	CHECK(!strcmp(info.name, "pp"));
	ptask_core_obj_describe(&h_graph_obj(g)->obj, &info);
	CHECK_EQ(info.state, PTASK_GRAPH_RUNNING);
	CHECK_EQ(info.owner_uid, 1000);
	CHECK(!strcmp(info.name, "poll"));
	ptask_core_obj_describe(&h_db_obj(db)->obj, &info);
	CHECK_EQ(info.graph, 0);
	CHECK_EQ(info.state, 3);		/* hold, port, slot */

	REQUIRE_OK(h_take(e, 1, 8, t));
	CHECK_EQ(ptask_core_client_poll(e), 0);
	CHECK_EQ(ptask_core_client_poll(a), PTASK_POLL_OUT);	/* refilled */
	o.index = 1;
	o.datablock = t->ports[0].datablock;
	REQUIRE_OK(h_complete(e, t->inv[0].id, 0, &o, 1));
	CHECK(ptask_core_client_poll(a) & PTASK_POLL_IN);
	ptask_core_obj_describe(&h_chan_obj(chout)->obj, &info);
	CHECK_EQ(info.state, 1);
	CHECK(!strcmp(info.name, "res"));
	CHECK_OK(h_terminate(a, g));
	CHECK_EQ(ptask_core_client_poll(a), PTASK_POLL_ERR);
	free(t);
}

/* Walk the whole namespace: handles into @out (up to @max); the count. */
static u32 walk(u32 *out, u32 max)
{
	struct ptask_obj *o;
	u64 cursor = 0;
	u32 n = 0;

	while ((o = ptask_core_ns_next(&h_ns, &cursor))) {
		if (n < max)
			out[n] = o->handle;
		n++;
	}
	return n;
}

/* ptask_core_ns_next: handle order, also after the counter wraps; resumed
 * listings neither repeat nor skip what lived throughout. */
static void test_ns_next_listing(void)
{
	struct ptask_client *c = h_client();
	u32 g = mkgraph(c, "list"), h[8], seen[32], n, i, db[6];
	struct ptask_obj *o;
	u64 cursor;

	for (i = 0; i < 6; i++)
		REQUIRE_OK(h_db(c, 8, &db[i]));
	/* Resume after the object before the cursor went away. */
	cursor = 0;
	o = ptask_core_ns_next(&h_ns, &cursor);
	REQUIRE(o && o->handle == g);
	o = ptask_core_ns_next(&h_ns, &cursor);
	REQUIRE(o && o->handle == db[0]);
	CHECK_OK(h_release(c, db[0]));		/* the one before the cursor */
	CHECK_OK(h_release(c, db[1]));		/* the next one, too */
	o = ptask_core_ns_next(&h_ns, &cursor);
	CHECK(o && o->handle == db[2]);
	CHECK_OK(h_release(c, db[4]));
	o = ptask_core_ns_next(&h_ns, &cursor);
	CHECK(o && o->handle == db[3]);
	o = ptask_core_ns_next(&h_ns, &cursor);
	CHECK(o && o->handle == db[5]);
	CHECK(!ptask_core_ns_next(&h_ns, &cursor));
	CHECK(!ptask_core_ns_next(&h_ns, &cursor));	/* stays at the end */
	/* Cursors past the last handle name nothing. */
	cursor = 1ULL << 32;
	CHECK(!ptask_core_ns_next(&h_ns, &cursor));
	cursor = ~0ULL;
	CHECK(!ptask_core_ns_next(&h_ns, &cursor));
	/* Wrap the counter: new objects at the top, then at the bottom. */
	h_ns.next_handle = 0xfffffffeu;
	for (i = 0; i < 4; i++)
		REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_OPAQUE, 1, 1, 1, 1,
				  &h[i]));
	CHECK_EQ(h[0], 0xfffffffeu);
	CHECK_EQ(h[1], 0xffffffffu);
	CHECK(h[2] < h[0] && h[3] < h[0]);
	n = walk(seen, ARRAY_SIZE(seen));
	CHECK_EQ(n, h_ns.hcount);
	for (i = 1; i < n && i < ARRAY_SIZE(seen); i++)
		CHECK(seen[i] > seen[i - 1]);
	CHECK_EQ(seen[n - 1], 0xffffffffu);
	CHECK_EQ(seen[0], g);
	/* The top handle is found by a cursor just below it. */
	cursor = 0xffffffffu;
	o = ptask_core_ns_next(&h_ns, &cursor);
	CHECK(o && o->handle == 0xffffffffu);
	CHECK_EQ(cursor, 1ULL << 32);
	CHECK(!ptask_core_ns_next(&h_ns, &cursor));
	/* Removed objects leave the listing. */
	CHECK_OK(h_close(c, g));
	n = walk(seen, ARRAY_SIZE(seen));
	CHECK_EQ(n, 3);				/* db[2], db[3], db[5] */
	CHECK_EQ(n, h_ns.hcount);
}

static const struct h_test tests[] = {
	H_TEST(test_handles_many),
	H_TEST(test_handle_zero_and_missing),
	H_TEST(test_wrong_type_lookups),
	H_TEST(test_handle_wrap),
	H_TEST(test_ns_next_listing),
	H_TEST(test_graph_create_open),
	H_TEST(test_graph_permissions),
	H_TEST(test_anonymous_graphs),
	H_TEST(test_lookup),
	H_TEST(test_graph_close),
	H_TEST(test_terminate),
	H_TEST(test_client_destroy_frees_all),
	H_TEST(test_mapping_outlives_datablock),
	H_TEST(test_run_freezes_shape),
	H_TEST(test_access_rule),
	H_TEST(test_priority_and_geometry),
	H_TEST(test_poll_and_describe),
};

int main(int argc, char **argv)
{
	return h_main(tests, ARRAY_SIZE(tests), argc, argv);
}
