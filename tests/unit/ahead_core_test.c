// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ahead_core_test.c - completion ahead and settle (issue 12, chains
 * without the host; Documentation/core.md, "Completion ahead"): a chain
 * of three GPU ptasks whose first two hops are completed ahead, then
 * settled, the client's last hop too (pulled only once settled); what
 * the core refuses (an output a CPU ptask reads ahead, completing or
 * settling twice, settling what was not completed ahead); a failed
 * settle failing the graph; settles after the graph went away; an
 * executor leaving with invocations Settling; PTSched's charge.
 * Segments (PTASK_TAKE_FUSE): a chain taken as one invocation, what is
 * not fused, a busy member, failure and a graph gone.
 */
#include <stdlib.h>
#include <string.h>
#include "tests/unit/harness.h"
#include "tests/unit/os_user.h"

static const char code[] = "// ptx";

/*
 * The chain: graph input -> p0 -> p1 -> p2 -> graph output, GPU ptasks of
 * one input and one output each.
 */
struct chain {
	struct ptask_client *c;
	struct ptask_client *e;
	u32 g;
	u32 p[3];
	u32 in[3];
	u32 out[3];
	u32 cin;
	u32 cout;
	struct h_take *t;
};

/*
 * PTSched's budgets off in this test's namespace: these tests charge a
 * few ns a completion and read the real clock, so with budgets on a take
 * could find the process in debt until the next refill period (-EAGAIN:
 * seen once in a CI run here; with the clock frozen, three tests fail so
 * every time).  Budgets have tests of their own (budget_core_test);
 * charging goes on with them off.
 */
static void budgets_off(void)
{
	struct ptask_sched_params p = { .budgets = 0 };

	REQUIRE_OK(ptask_core_sched_set(&h_ns, PTASK_SCHED_SET_BUDGETS, &p));
}

/* The chain; with @tmpl every output port has an 8-byte template. */
static bool mkchain_as(struct chain *ch, const char *name, bool tmpl)
{
	u32 i, t8 = 0;

	memset(ch, 0, sizeof(*ch));
	budgets_off();
	ch->c = h_client();
	ch->e = h_executor();
	ch->t = calloc(1, sizeof(*ch->t));
	if (!ch->t)
		abort();
	if (!CHECK_OK(h_graph(ch->c, name, PTASK_GRAPH_CREATE, 0600, &ch->g)))
		return false;
	if (tmpl && !CHECK_OK(h_tmpl(ch->c, ch->g, PTASK_TEMPLATE_ARRAY, 4, 2,
				     1, 1, &t8)))
		return false;
	for (i = 0; i < 3; i++) {
		if (!CHECK_OK(h_gpu_ptask(ch->c, NULL, ch->g, 2, code,
					  sizeof(code), "k", &ch->p[i])) ||
		    !CHECK_OK(h_port(ch->c, ch->p[i], PTASK_PORT_INPUT, 0,
				     &ch->in[i])) ||
		    !CHECK_OK(h_port(ch->c, ch->p[i], PTASK_PORT_OUTPUT, t8,
				     &ch->out[i])))
			return false;
	}
	return CHECK_OK(h_chan(ch->c, ch->g, 0, ch->in[0], 4, 0, &ch->cin)) &&
	       CHECK_OK(h_chan(ch->c, ch->g, ch->out[0], ch->in[1], 4, 0,
			       NULL)) &&
	       CHECK_OK(h_chan(ch->c, ch->g, ch->out[1], ch->in[2], 4, 0,
			       NULL)) &&
	       CHECK_OK(h_chan(ch->c, ch->g, ch->out[2], 0, 4, 0,
			       &ch->cout)) &&
	       CHECK_OK(h_run(ch->c, ch->g));
}

static bool mkchain(struct chain *ch, const char *name)
{
	return mkchain_as(ch, name, false);
}

/*
 * In graph @g: a GPU ptask *@p, its input port *@pin fed by a new graph
 * input *@cin (room for 4), its output port *@pout with template
 * @out_tmpl (0: none), not yet connected.
 */
static bool gpu_stage(struct ptask_client *c, u32 g, u32 out_tmpl, u32 *p,
		      u32 *pin, u32 *pout, u32 *cin)
{
	return CHECK_OK(h_gpu_ptask(c, NULL, g, 2, code, sizeof(code), "k",
				    p)) &&
	       CHECK_OK(h_port(c, *p, PTASK_PORT_INPUT, 0, pin)) &&
	       CHECK_OK(h_port(c, *p, PTASK_PORT_OUTPUT, out_tmpl, pout)) &&
	       CHECK_OK(h_chan(c, g, 0, *pin, 4, 0, cin));
}

/* Push a fresh datablock of 8 bytes into the chain. */
static bool push_one(struct chain *ch)
{
	u32 d;

	return CHECK_OK(h_db(ch->c, 8, &d)) &&
	       CHECK_OK(h_push(ch->c, ch->cin, d)) &&
	       CHECK_OK(h_release(ch->c, d));
}

/* EXEC_COMPLETE with @flags. */
static int complete_flags(struct ptask_client *e, u64 id, u32 flags,
			  s32 status, const struct ptask_exec_output *outs,
			  u32 n, u64 gpu_ns)
{
	struct ptask_exec_complete a = {
		.flags = flags, .id = id, .status = status, .n_outputs = n,
		.gpu_ns = gpu_ns, .outputs = (u64)(uintptr_t)outs,
	};
	struct ptask_call_io io = { .outputs = outs };

	return h_call(e, NULL, PTASK_IOC_EXEC_COMPLETE, &a, &io);
}

/*
 * Take the one invocation queued (of ptask @p) and complete it with a
 * fresh output datablock, with @flags.  *@id gets its id.
 */
static int take_complete(struct chain *ch, u32 p, u32 flags, u64 gpu_ns,
			 u64 *id)
{
	struct ptask_exec_output out = { .index = 1 };
	int err;

	err = h_take(ch->e, 1, 8, ch->t);
	if (err)
		return err;
	if (!CHECK_EQ(ch->t->n_inv, 1) || !CHECK_EQ(ch->t->inv[0].ptask, p))
		return -EPROTO;
	*id = ch->t->inv[0].id;
	err = h_db(ch->e, 8, &out.datablock);
	if (err)
		return err;
	err = complete_flags(ch->e, *id, flags, 0, &out, 1, gpu_ns);
	if (err)
		h_release(ch->e, out.datablock);
	return err;
}

/*
 * Hops 0 and 1 completed ahead, hop 2 (the client's) plainly; settles
 * charge the device time; the Settling invocations count as running
 * until then.
 */
static void test_ahead_chain(void)
{
	struct ptask_exec_output out = { .index = 1 };
	struct chain ch;
	struct ptask_proc *proc;
	u64 id0, id1, id2;
	u32 db;

	if (!mkchain(&ch, "ahead"))
		goto out;
	proc = ptask_core_proc_find(&h_ns, h_user.pid);
	REQUIRE(proc);
	if (!push_one(&ch))
		goto out;
	if (!CHECK_OK(take_complete(&ch, ch.p[0], PTASK_EXEC_COMPLETE_AHEAD,
				    0, &id0)))
		goto out;
	/* Its outputs moved on: p1 is ready, p0 may run again. */
	CHECK(h_ready_has(ch.p[1]));
	CHECK_EQ(h_ptask_obj(ch.p[0])->state, PTASK_STATE_WAITING);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 1);	/* Settling */
	CHECK_EQ(proc->running, 1);
	CHECK_EQ(proc->invocations, 0);	/* charged by the settle */
	/* Completing it again, plainly or ahead: it is Settling. */
	CHECK_ERR(complete_flags(ch.e, id0, 0, 0, NULL, 0, 0), -EINVAL);
	CHECK_ERR(complete_flags(ch.e, id0, PTASK_EXEC_COMPLETE_AHEAD, 0,
				 NULL, 0, 0), -EINVAL);
	/* Its input stays mappable by the executor until the settle. */
	if (!CHECK_OK(h_take(ch.e, 1, 8, ch.t)) ||
	    !CHECK_EQ(ch.t->inv[0].ptask, ch.p[1]))
		goto out;
	/* Only GPU ptasks read its output: not the client's to wait for. */
	CHECK_EQ(ch.t->ports[1].flags & (PTASK_INVP_TO_CLIENT |
					 PTASK_INVP_PULLED_ONLY), 0);
	id1 = ch.t->inv[0].id;
	REQUIRE_OK(h_db(ch.e, 8, &out.datablock));
	if (!CHECK_OK(complete_flags(ch.e, id1, PTASK_EXEC_COMPLETE_AHEAD, 0,
				     &out, 1, 0)))
		goto out;
	CHECK_EQ(proc->running, 2);
	/*
	 * The last hop feeds the client: completed ahead too, but its
	 * output is pulled only once it settled (the bytes are there then).
	 */
	REQUIRE_OK(h_take(ch.e, 1, 8, ch.t));
	REQUIRE(ch.t->n_inv == 1 && ch.t->inv[0].ptask == ch.p[2]);
	CHECK_EQ(ch.t->ports[1].flags & (PTASK_INVP_TO_CLIENT |
					 PTASK_INVP_PULLED_ONLY),
		 PTASK_INVP_TO_CLIENT | PTASK_INVP_PULLED_ONLY);
	id2 = ch.t->inv[0].id;
	REQUIRE_OK(h_db(ch.e, 8, &out.datablock));
	/* A settle of an invocation not completed ahead. */
	CHECK_ERR(complete_flags(ch.e, id2, PTASK_EXEC_COMPLETE_SETTLE, 0,
				 NULL, 0, 0), -EINVAL);
	CHECK_OK(complete_flags(ch.e, id2, PTASK_EXEC_COMPLETE_AHEAD, 0,
				&out, 1, 0));
	CHECK_EQ(h_ptask_obj(ch.p[2])->state, PTASK_STATE_WAITING);
	CHECK_EQ(proc->running, 3);
	CHECK_ERR(h_pull(ch.c, ch.cout, &db), -EAGAIN);
	CHECK_OK(complete_flags(ch.e, id2, PTASK_EXEC_COMPLETE_SETTLE, 0,
				NULL, 0, 500));
	CHECK_EQ(proc->running, 2);
	CHECK_EQ(proc->gpu_ns, 500);
	CHECK_OK(h_pull(ch.c, ch.cout, &db));
	CHECK_OK(h_release(ch.c, db));
	/* The settles: device time charged, each once. */
	CHECK_OK(complete_flags(ch.e, id0, PTASK_EXEC_COMPLETE_SETTLE, 0,
				NULL, 0, 1000));
	CHECK_OK(complete_flags(ch.e, id1, PTASK_EXEC_COMPLETE_SETTLE, 0,
				NULL, 0, 2000));
	CHECK_EQ(proc->gpu_ns, 3500);
	CHECK_EQ(proc->invocations, 3);
	CHECK_EQ(proc->running, 0);
	CHECK_EQ(h_ptask_obj(ch.p[0])->gpu_ns, 1000);
	CHECK_EQ(h_ptask_obj(ch.p[1])->invocations, 1);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 0);
	CHECK_ERR(complete_flags(ch.e, id0, PTASK_EXEC_COMPLETE_SETTLE, 0,
				 NULL, 0, 1000), -ENOENT);
	CHECK_EQ(h_graph_obj(ch.g)->state, PTASK_GRAPH_RUNNING);
out:
	free(ch.t);
}

/* A settle with an error fails the graph: the client's pull gets -EIO. */
static void test_ahead_settle_fails_graph(void)
{
	struct ptask_exec_output out = { .index = 1 };
	struct chain ch;
	u64 id0, id1;
	u32 db;

	if (!mkchain(&ch, "fail") || !push_one(&ch) ||
	    !CHECK_OK(take_complete(&ch, ch.p[0], PTASK_EXEC_COMPLETE_AHEAD,
				    0, &id0)))
		goto out;
	/* The next hop is taken, behind it, before its fence passed. */
	REQUIRE_OK(h_take(ch.e, 1, 8, ch.t));
	id1 = ch.t->inv[0].id;
	CHECK_OK(complete_flags(ch.e, id0, PTASK_EXEC_COMPLETE_SETTLE, -EIO,
				NULL, 0, 700));
	CHECK_EQ(h_graph_obj(ch.g)->state, PTASK_GRAPH_FAILED);
	CHECK_EQ(ptask_core_proc_find(&h_ns, h_user.pid)->gpu_ns, 700);
	CHECK_ERR(h_pull(ch.c, ch.cout, &db), -EIO);
	/* The downstream invocation was orphaned: its completion cancels. */
	REQUIRE_OK(h_db(ch.e, 8, &out.datablock));
	CHECK_ERR(complete_flags(ch.e, id1, PTASK_EXEC_COMPLETE_AHEAD, 0,
				 &out, 1, 0), -ECANCELED);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 0);
out:
	free(ch.t);
}

/* Terminated, then closed, with an invocation Settling: it cancels. */
static void test_ahead_orphaned(void)
{
	struct chain ch;
	u64 id0;

	if (!mkchain(&ch, "orphan") || !push_one(&ch) ||
	    !CHECK_OK(take_complete(&ch, ch.p[0], PTASK_EXEC_COMPLETE_AHEAD,
				    0, &id0)))
		goto out;
	REQUIRE_OK(h_terminate(ch.c, ch.g));
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 1);
	CHECK(ptask_list_empty(&h_ptask_obj(ch.p[0])->ahead));
	REQUIRE_OK(h_close(ch.c, ch.g));
	/* Charged all the same: the device did the work. */
	CHECK_ERR(complete_flags(ch.e, id0, PTASK_EXEC_COMPLETE_SETTLE, 0,
				 NULL, 0, 900), -ECANCELED);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 0);
out:
	free(ch.t);
}

/* The executor goes away with an invocation Settling: the graph fails. */
static void test_ahead_executor_gone(void)
{
	struct chain ch;
	u64 id0;
	u32 db;

	if (!mkchain(&ch, "gone") || !push_one(&ch) ||
	    !CHECK_OK(take_complete(&ch, ch.p[0], PTASK_EXEC_COMPLETE_AHEAD,
				    0, &id0)))
		goto out;
	REQUIRE_OK(ptask_core_exec_unregister(ch.e));
	CHECK_EQ(h_graph_obj(ch.g)->state, PTASK_GRAPH_FAILED);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 0);
	CHECK_ERR(h_pull(ch.c, ch.cout, &db), -EIO);
	CHECK_ERR(complete_flags(ch.e, id0, PTASK_EXEC_COMPLETE_SETTLE, 0,
				 NULL, 0, 0), -EPERM);
out:
	free(ch.t);
}

/*
 * The same ptask runs again while its last invocation is Settling, and
 * both settle in either order.
 */
static void test_ahead_again_before_settle(void)
{
	struct chain ch;
	u64 a, b;

	if (!mkchain(&ch, "again") || !push_one(&ch) || !push_one(&ch) ||
	    !CHECK_OK(take_complete(&ch, ch.p[0], PTASK_EXEC_COMPLETE_AHEAD,
				    0, &a)))
		goto out;
	/* p0's second invocation and p1's first are both ready now. */
	CHECK(h_ready_has(ch.p[0]));
	CHECK(h_ready_has(ch.p[1]));
	if (!CHECK_OK(h_take(ch.e, 2, 8, ch.t)) || !CHECK_EQ(ch.t->n_inv, 2))
		goto out;
	{
		struct ptask_exec_output out = { .index = 1 };
		u32 i = ch.t->inv[0].ptask == ch.p[0] ? 0 : 1;

		CHECK_EQ(ch.t->inv[i].ptask, ch.p[0]);
		b = ch.t->inv[i].id;
		if (!CHECK_OK(h_db(ch.e, 8, &out.datablock)))
			goto out;
		CHECK_OK(complete_flags(ch.e, b, PTASK_EXEC_COMPLETE_AHEAD, 0,
					&out, 1, 0));
	}
	/* Two Settling, p1's taken and not completed. */
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 3);
	CHECK_OK(complete_flags(ch.e, b, PTASK_EXEC_COMPLETE_SETTLE, 0, NULL,
				0, 10));
	CHECK_OK(complete_flags(ch.e, a, PTASK_EXEC_COMPLETE_SETTLE, 0, NULL,
				0, 20));
	CHECK_EQ(h_ptask_obj(ch.p[0])->gpu_ns, 30);
	CHECK_EQ(h_ptask_obj(ch.p[0])->invocations, 2);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 1);
	/* Closing with p1's work taken and queued leaks nothing. */
	REQUIRE_OK(h_close(ch.c, ch.g));
out:
	free(ch.t);
}

/*
 * An output a CPU ptask reads is never completed ahead (the CPU ptask
 * would read it at once), nor is a datablock that pulls already wait
 * for in a graph output completed ahead a second time.
 */
static void test_ahead_refused_for_host_readers(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	struct ptask_exec_output out = { .index = 1 };
	struct h_take *t = calloc(1, sizeof(*t));
	u32 g, p, q, pin, pout, qin, qout, cin, d;

	budgets_off();
	REQUIRE(t);
	REQUIRE_OK(h_graph(c, "cpu", PTASK_GRAPH_CREATE, 0600, &g));
	REQUIRE(gpu_stage(c, g, 0, &p, &pin, &pout, &cin));
	REQUIRE_OK(h_ptask(c, g, 2, &q));
	REQUIRE_OK(h_port(c, q, PTASK_PORT_INPUT, 0, &qin));
	REQUIRE_OK(h_port(c, q, PTASK_PORT_OUTPUT, 0, &qout));
	REQUIRE_OK(h_chan(c, g, pout, qin, 4, 0, NULL));
	REQUIRE_OK(h_chan(c, g, qout, 0, 4, 0, NULL));
	REQUIRE_OK(h_run(c, g));
	REQUIRE_OK(h_db(c, 8, &d));
	REQUIRE_OK(h_push(c, cin, d));
	REQUIRE_OK(h_release(c, d));
	REQUIRE_OK(h_take(e, 1, 8, t));
	CHECK_EQ(t->ports[1].flags & (PTASK_INVP_TO_CLIENT |
				      PTASK_INVP_PULLED_ONLY),
		 PTASK_INVP_TO_CLIENT);
	REQUIRE_OK(h_db(e, 8, &out.datablock));
	CHECK_ERR(complete_flags(e, t->inv[0].id, PTASK_EXEC_COMPLETE_AHEAD, 0,
				 &out, 1, 0), -EINVAL);
	CHECK_EQ(h_ptask_obj(p)->state, PTASK_STATE_EXECUTING);
	CHECK_OK(complete_flags(e, t->inv[0].id, 0, 0, &out, 1, 0));
	REQUIRE_OK(h_close(c, g));
	free(t);
}

/*
 * PTASK_INV_BACKLOG says the ptask's next invocation waits only for
 * this one: set when its inputs already hold more, clear otherwise.
 */
static void test_backlog_flag(void)
{
	struct ptask_exec_output out = { .index = 1 };
	struct chain ch;
	u64 id;

	if (!mkchain(&ch, "backlog") || !push_one(&ch) || !push_one(&ch))
		goto out;
	REQUIRE_OK(h_take(ch.e, 1, 8, ch.t));
	CHECK_EQ(ch.t->inv[0].flags, PTASK_INV_BACKLOG);
	id = ch.t->inv[0].id;
	REQUIRE_OK(h_db(ch.e, 8, &out.datablock));
	CHECK_OK(complete_flags(ch.e, id, 0, 0, &out, 1, 0));
	/* p0's second (nothing behind it) and p1's first, both alone. */
	REQUIRE_OK(h_take(ch.e, 2, 8, ch.t));
	CHECK_EQ(ch.t->n_inv, 2);
	CHECK_EQ(ch.t->inv[0].flags, 0);
	CHECK_EQ(ch.t->inv[1].flags, 0);
	REQUIRE_OK(h_close(ch.c, ch.g));
out:
	free(ch.t);
}

/*
 * A datablock completed ahead into a graph output and never pulled: the
 * graph terminated and closed before the settle frees it (nothing
 * leaks, nothing points at it), and the settle cancels.
 */
static void test_ahead_pulled_dropped(void)
{
	struct chain ch;
	u64 id[3];
	u32 i;

	if (!mkchain(&ch, "dropped") || !push_one(&ch))
		goto out;
	for (i = 0; i < 3; i++)
		if (!CHECK_OK(take_complete(&ch, ch.p[i],
					    PTASK_EXEC_COMPLETE_AHEAD, 0,
					    &id[i])))
			goto out;
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 3);
	REQUIRE_OK(h_terminate(ch.c, ch.g));
	REQUIRE_OK(h_close(ch.c, ch.g));
	for (i = 0; i < 3; i++)
		CHECK_ERR(complete_flags(ch.e, id[i],
					 PTASK_EXEC_COMPLETE_SETTLE, 0, NULL,
					 0, 10), -ECANCELED);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 0);
out:
	free(ch.t);
}

/* EXEC_TAKE with @flags | PTASK_NONBLOCK and @max_ports. */
static int take_flags(struct ptask_client *e, u32 flags, u32 max_inv,
		      u32 max_ports, struct h_take *t)
{
	struct ptask_exec_take a = {
		.flags = PTASK_NONBLOCK | flags,
		.max_invocations = max_inv, .max_ports = max_ports,
	};
	struct ptask_call_io io = { .invocations = t->inv, .ports = t->ports };
	int err;

	t->n_inv = t->n_ports = 0;
	err = h_call(e, NULL, PTASK_IOC_EXEC_TAKE, &a, &io);
	if (!err) {
		t->n_inv = a.n_invocations;
		t->n_ports = a.n_ports;
	}
	return err;
}

/* EXEC_TAKE with PTASK_TAKE_AHEAD, NONBLOCK. */
static int take_ahead(struct ptask_client *e, u32 max_inv, struct h_take *t)
{
	return take_flags(e, PTASK_TAKE_AHEAD, max_inv, PTASK_TAKE_MAX_PORTS,
			  t);
}

/*
 * PTASK_TAKE_AHEAD: one take returns the whole chain, its GPU-only hops
 * completed ahead by the core with outputs it made (named in the port
 * records, mappable by the executor, each the next hop's input); the
 * last hop, whose output a client pulls with nothing queued behind it,
 * is the executor's to complete.  Settles end the others.
 */
static void test_take_ahead_chain(void)
{
	struct ptask_exec_output out = { .index = 1 };
	struct ptask_buf *buf;
	unsigned long wakes;
	struct chain ch;
	u64 bytes;
	u32 i, db;

	if (!mkchain_as(&ch, "takeahead", true) || !push_one(&ch))
		goto out;
	if (!CHECK_OK(take_ahead(ch.e, 8, ch.t)) || !CHECK_EQ(ch.t->n_inv, 3))
		goto out;
	for (i = 0; i < 3; i++)
		CHECK_EQ(ch.t->inv[i].ptask, ch.p[i]);
	CHECK_EQ(ch.t->inv[0].flags, PTASK_INV_AHEAD);
	CHECK_EQ(ch.t->inv[1].flags, PTASK_INV_AHEAD);
	CHECK_EQ(ch.t->inv[2].flags, 0);
	CHECK(ch.t->ports[1].datablock);
	CHECK_EQ(ch.t->ports[1].bytes, 8);
	/* Hop 0's output is hop 1's input, and so on. */
	CHECK_EQ(ch.t->ports[2].datablock, ch.t->ports[1].datablock);
	CHECK_EQ(ch.t->ports[4].datablock, ch.t->ports[3].datablock);
	CHECK_EQ(ch.t->ports[5].datablock, 0);
	/* The executor maps what it must write. */
	if (CHECK_OK(ptask_core_datablock_map(ch.e, ch.t->ports[1].datablock,
					      &bytes, &buf)))
		ptask_os_buf_put(buf);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 3);
	CHECK_ERR(h_pull(ch.c, ch.cout, &db), -EAGAIN);
	/* Completing one the core completed ahead is refused. */
	REQUIRE_OK(h_db(ch.e, 8, &out.datablock));
	CHECK_ERR(complete_flags(ch.e, ch.t->inv[0].id, 0, 0, &out, 1, 0),
		  -EINVAL);
	CHECK_OK(complete_flags(ch.e, ch.t->inv[2].id, 0, 0, &out, 1, 300));
	CHECK_OK(h_pull(ch.c, ch.cout, &db));
	CHECK_OK(h_release(ch.c, db));
	/* A hop's settle wakes nobody: only takers read what it wrote. */
	wakes = os_user_wakes;
	CHECK_OK(complete_flags(ch.e, ch.t->inv[0].id,
				PTASK_EXEC_COMPLETE_SETTLE, 0, NULL, 0, 100));
	CHECK_OK(complete_flags(ch.e, ch.t->inv[1].id,
				PTASK_EXEC_COMPLETE_SETTLE, 0, NULL, 0, 200));
	CHECK_EQ(os_user_wakes, wakes);
	CHECK_EQ(ptask_core_proc_find(&h_ns, h_user.pid)->gpu_ns, 600);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 0);
	REQUIRE_OK(h_close(ch.c, ch.g));
out:
	free(ch.t);
}

/*
 * Graph @name: one GPU ptask (its ports of an 8-byte array template when
 * @tmpl, else none) whose output channel *@cout a client pulls, run,
 * with three datablocks pushed into its input (and released).
 */
static bool stream_of_three(struct ptask_client *c, const char *name,
			    bool tmpl, u32 *g, u32 *cout)
{
	u32 p, pin, pout, cin, t8, d, i;

	if (!CHECK_OK(h_graph(c, name, PTASK_GRAPH_CREATE, 0600, g)) ||
	    !CHECK_OK(h_tmpl(c, *g, PTASK_TEMPLATE_ARRAY, 4, 2, 1, 1, &t8)) ||
	    !CHECK(gpu_stage(c, *g, tmpl ? t8 : 0, &p, &pin, &pout, &cin)) ||
	    !CHECK_OK(h_chan(c, *g, pout, 0, 4, 0, cout)) ||
	    !CHECK_OK(h_run(c, *g)))
		return false;
	for (i = 0; i < 3; i++)
		if (!CHECK_OK(h_db(c, 8, &d)) || !CHECK_OK(h_push(c, cin, d)) ||
		    !CHECK_OK(h_release(c, d)))
			return false;
	return true;
}

/*
 * A stream: three pushes into one GPU ptask whose output a client pulls;
 * one take returns the three invocations, the first two completed ahead
 * by the core (the next one was queued behind each), the last one the
 * executor's; each output is pulled only once its invocation settled,
 * in order.  Without a template nothing is taken ahead.
 */
static void test_take_ahead_stream(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	struct ptask_exec_output out = { .index = 1 };
	struct h_take *t = calloc(1, sizeof(*t));
	u32 g, cout, d, i, tmpl;
	unsigned long wakes;

	budgets_off();
	REQUIRE(t);
	for (tmpl = 0; tmpl < 2; tmpl++) {
		REQUIRE(stream_of_three(c, tmpl ? "stream" : "notmpl", tmpl,
					&g, &cout));
		REQUIRE_OK(take_ahead(e, 16, t));
		if (!tmpl) {
			CHECK_EQ(t->n_inv, 1);
			CHECK_EQ(t->inv[0].flags, PTASK_INV_BACKLOG);
			REQUIRE_OK(h_close(c, g));
			continue;
		}
		REQUIRE(t->n_inv == 3);
		CHECK_EQ(t->inv[0].flags, PTASK_INV_BACKLOG | PTASK_INV_AHEAD);
		CHECK_EQ(t->inv[1].flags, PTASK_INV_BACKLOG | PTASK_INV_AHEAD);
		CHECK_EQ(t->inv[2].flags, 0);
		/* Its kernel in flight: the shell may poll for it. */
		c->waits_settle = false;
		CHECK_ERR(h_pull(c, cout, &d), -EAGAIN);
		CHECK(c->waits_settle);
		/* Settled out of order: the pulls still go in order. */
		CHECK_OK(complete_flags(e, t->inv[1].id,
					PTASK_EXEC_COMPLETE_SETTLE, 0, NULL, 0,
					10));
		CHECK_ERR(h_pull(c, cout, &d), -EAGAIN);
		/* A pull may wait for what this settle makes valid: woken. */
		wakes = os_user_wakes;
		CHECK_OK(complete_flags(e, t->inv[0].id,
					PTASK_EXEC_COMPLETE_SETTLE, 0, NULL, 0,
					10));
		CHECK(os_user_wakes > wakes);
		for (i = 0; i < 2; i++) {
			CHECK_OK(h_pull(c, cout, &d));
			CHECK_EQ(d, t->ports[2 * i + 1].datablock);
			CHECK_OK(h_release(c, d));
		}
		/* Nothing there at all: no such hint. */
		c->waits_settle = false;
		CHECK_ERR(h_pull(c, cout, &d), -EAGAIN);
		CHECK(!c->waits_settle);
		REQUIRE_OK(h_db(e, 8, &out.datablock));
		CHECK_OK(complete_flags(e, t->inv[2].id, 0, 0, &out, 1, 10));
		CHECK_OK(h_pull(c, cout, &d));
		CHECK_OK(h_release(c, d));
		REQUIRE_OK(h_close(c, g));
	}
	free(t);
}

/*
 * The shell pulls ahead of a fence it sees itself (struct ptask_client
 * .pull_ahead_of: user mode's ring, ring_server.c): the head datablock
 * whose writer is that invocation is taken before the settle
 * (pulled_ahead says so), one written by any other is not (-EAGAIN, the
 * hint set); the one taken may be released before its writer settles,
 * which then settles as before, and a failed settle still fails the
 * graph for the next pull.
 */
static void test_pull_ahead_of_settle(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	struct h_take *t = calloc(1, sizeof(*t));
	u32 g, cout, d;

	budgets_off();
	REQUIRE(t);
	REQUIRE(stream_of_three(c, "early", true, &g, &cout));
	REQUIRE_OK(take_ahead(e, 16, t));
	REQUIRE(t->n_inv == 3);
	/* the head's writer is inv[0]: a pull ahead of inv[1] waits */
	c->pull_ahead_of = t->inv[1].id;
	c->waits_settle = false;
	CHECK_ERR(h_pull(c, cout, &d), -EAGAIN);
	CHECK(c->waits_settle);
	CHECK(!c->pulled_ahead);
	c->pull_ahead_of = t->inv[0].id;
	CHECK_OK(h_pull(c, cout, &d));
	CHECK(c->pulled_ahead);
	CHECK_EQ(d, t->ports[1].datablock);
	c->pull_ahead_of = 0;
	c->pulled_ahead = false;
	/* let go before its writer settled: the settle goes on as before */
	CHECK_OK(h_release(c, d));
	CHECK_OK(complete_flags(e, t->inv[0].id, PTASK_EXEC_COMPLETE_SETTLE,
				0, NULL, 0, 10));
	/* no longer the one the shell waits for: inv[1]'s output waits */
	c->pull_ahead_of = t->inv[0].id;
	CHECK_ERR(h_pull(c, cout, &d), -EAGAIN);
	c->pull_ahead_of = t->inv[1].id;
	CHECK_OK(h_pull(c, cout, &d));
	CHECK(c->pulled_ahead);
	CHECK_EQ(d, t->ports[3].datablock);
	c->pull_ahead_of = 0;
	c->pulled_ahead = false;
	/* its fence failed after all: the settle fails the graph */
	CHECK_OK(complete_flags(e, t->inv[1].id, PTASK_EXEC_COMPLETE_SETTLE,
				-EIO, NULL, 0, 10));
	CHECK_OK(h_release(c, d));
	CHECK_ERR(h_pull(c, cout, &d), -EIO);
	REQUIRE_OK(h_close(c, g));
	free(t);
}

/*
 * The graph goes with invocations the core completed ahead: they and
 * the datablocks it made are freed (nothing leaks: the teardown counts
 * buffers), and their settles cancel.
 */
static void test_take_ahead_graph_gone(void)
{
	struct chain ch;
	u32 i;

	if (!mkchain_as(&ch, "gone", true) || !push_one(&ch) || !push_one(&ch) ||
	    !CHECK_OK(take_ahead(ch.e, 4, ch.t)) || !CHECK_EQ(ch.t->n_inv, 4))
		goto out;
	REQUIRE_OK(h_terminate(ch.c, ch.g));
	REQUIRE_OK(h_close(ch.c, ch.g));
	for (i = 0; i < 4; i++)
		if (ch.t->inv[i].flags & PTASK_INV_AHEAD)
			CHECK_ERR(complete_flags(ch.e, ch.t->inv[i].id,
						 PTASK_EXEC_COMPLETE_SETTLE, 0,
						 NULL, 0, 10), -ECANCELED);
		else
			CHECK_ERR(h_complete(ch.e, ch.t->inv[i].id, 0, NULL, 0),
				  -ECANCELED);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 0);
out:
	free(ch.t);
}

static bool db_alive(u32 handle)
{
	return ptask_core_ns_find(&h_ns, handle, PTASK_OBJ_DATABLOCK) != NULL;
}

/*
 * PTASK_TAKE_OUTPUTS: the core makes each templated output's datablock
 * as it takes (PTASK_INVP_MADE, the template's size, held by the
 * invocation); the executor completes naming it and the next hop reads
 * it.  One the executor leaves (it completes with one of its own, or the
 * invocation fails) goes with the invocation: the harness finds no leak.
 */
static void test_take_outputs(void)
{
	struct ptask_exec_output out = { .index = 1 };
	struct chain ch;
	u32 made, own;

	if (!mkchain_as(&ch, "outputs", true) || !push_one(&ch))
		goto out;
	/* hop 0: completed with the output the core made */
	if (!CHECK_OK(take_flags(ch.e, PTASK_TAKE_OUTPUTS, 1, 8, ch.t)) ||
	    !CHECK_EQ(ch.t->n_inv, 1) || !CHECK_EQ(ch.t->inv[0].ptask, ch.p[0]))
		goto out;
	CHECK(!(ch.t->ports[0].flags & PTASK_INVP_MADE));
	CHECK(ch.t->ports[1].flags & PTASK_INVP_MADE);
	made = ch.t->ports[1].datablock;
	CHECK(made && db_alive(made));
	CHECK_EQ(ch.t->ports[1].bytes, 8);
	CHECK_EQ(ch.t->ports[1].mmap_offset, (u64)made << PTASK_MMAP_SHIFT);
	out.datablock = made;
	CHECK_OK(complete_flags(ch.e, ch.t->inv[0].id, 0, 0, &out, 1, 10));
	/* hop 1 reads it; completed with one of the executor's own */
	if (!CHECK_OK(take_flags(ch.e, PTASK_TAKE_OUTPUTS, 1, 8, ch.t)) ||
	    !CHECK_EQ(ch.t->inv[0].ptask, ch.p[1]))
		goto out;
	CHECK_EQ(ch.t->ports[0].datablock, made);
	made = ch.t->ports[1].datablock;
	CHECK(made && (ch.t->ports[1].flags & PTASK_INVP_MADE));
	if (!CHECK_OK(h_db(ch.e, 8, &own)))
		goto out;
	out.datablock = own;
	CHECK_OK(complete_flags(ch.e, ch.t->inv[0].id, 0, 0, &out, 1, 10));
	CHECK(!db_alive(made));
	/* hop 2 fails: its made output goes, the graph fails */
	if (!CHECK_OK(take_flags(ch.e, PTASK_TAKE_OUTPUTS, 1, 8, ch.t)) ||
	    !CHECK_EQ(ch.t->inv[0].ptask, ch.p[2]))
		goto out;
	CHECK_EQ(ch.t->ports[0].datablock, own);
	made = ch.t->ports[1].datablock;
	CHECK(made && db_alive(made));
	{
		/* with the accelerator's code: the ptask keeps it */
		struct ptask_exec_complete a = {
			.id = ch.t->inv[0].id, .status = -EIO,
			.error_code = 700,
		};
		struct ptask_call_io io = { .outputs = NULL };

		CHECK_OK(h_call(ch.e, NULL, PTASK_IOC_EXEC_COMPLETE, &a, &io));
	}
	CHECK(!db_alive(made));
	CHECK_EQ(h_graph_obj(ch.g)->state, PTASK_GRAPH_FAILED);
	CHECK_EQ(h_ptask_obj(ch.p[2])->failures, 1);
	CHECK_EQ(h_ptask_obj(ch.p[2])->last_error, -EIO);
	CHECK_EQ(h_ptask_obj(ch.p[2])->error_code, 700);
	CHECK_EQ(h_ptask_obj(ch.p[1])->failures, 0);
out:
	free(ch.t);
}

/* EXEC_COMPLETE with PTASK_EXEC_COMPLETE_REQUEUE and @status. */
static int requeue_inv(struct ptask_client *e, u64 id, s32 status)
{
	struct ptask_exec_complete a = {
		.flags = PTASK_EXEC_COMPLETE_REQUEUE, .id = id,
		.status = status, .error_code = 810,
	};
	struct ptask_call_io io = { .outputs = NULL };

	return h_call(e, NULL, PTASK_IOC_EXEC_COMPLETE, &a, &io);
}

/*
 * PTASK_EXEC_COMPLETE_REQUEUE: an invocation lost to a reset (MPS) runs
 * again as it was, before anything else of its ptask: the same input,
 * taken again (by another executor here), the graph still running, no
 * failure counted; completed, the chain goes on.  A requeue left pending
 * when the graph closes is freed with it (the harness finds no leak).
 */
static void test_requeue(void)
{
	struct ptask_client *e2;
	struct chain ch;
	u32 input;
	u64 id;

	if (!mkchain_as(&ch, "requeue", true) || !push_one(&ch))
		goto out;
	e2 = h_executor();
	if (!CHECK_OK(take_flags(ch.e, PTASK_TAKE_OUTPUTS, 1, 8, ch.t)) ||
	    !CHECK_EQ(ch.t->inv[0].ptask, ch.p[0]))
		goto out;
	input = ch.t->ports[0].datablock;
	id = ch.t->inv[0].id;
	CHECK_OK(requeue_inv(ch.e, id, -EIO));
	CHECK_EQ(h_graph_obj(ch.g)->state, PTASK_GRAPH_RUNNING);
	CHECK_EQ(h_ptask_obj(ch.p[0])->state, PTASK_STATE_QUEUED);
	CHECK_EQ(h_ptask_obj(ch.p[0])->requeued, 1);
	CHECK_EQ(h_ptask_obj(ch.p[0])->failures, 0);
	/* the old id is no one's now */
	CHECK_ERR(complete_flags(ch.e, id, 0, -EIO, NULL, 0, 0), -ENOENT);
	if (!CHECK_OK(take_flags(e2, PTASK_TAKE_OUTPUTS, 1, 8, ch.t)) ||
	    !CHECK_EQ(ch.t->inv[0].ptask, ch.p[0]))
		goto out;
	CHECK(ch.t->inv[0].id != id);
	CHECK_EQ(ch.t->ports[0].datablock, input);
	CHECK(ch.t->ports[1].flags & PTASK_INVP_MADE);
	{
		struct ptask_exec_output out = {
			.index = 1, .datablock = ch.t->ports[1].datablock,
		};

		CHECK_OK(complete_flags(e2, ch.t->inv[0].id, 0, 0, &out, 1,
					10));
	}
	/*
	 * Hop 1 reads what hop 0 left on e2's device alone (GPU ptasks
	 * read it): lost with a reset, so it cannot run again: failed.
	 */
	if (!CHECK_OK(take_flags(e2, 0, 1, 8, ch.t)) ||
	    !CHECK_EQ(ch.t->inv[0].ptask, ch.p[1]))
		goto out;
	CHECK_OK(requeue_inv(e2, ch.t->inv[0].id, -EIO));
	CHECK_EQ(h_graph_obj(ch.g)->state, PTASK_GRAPH_FAILED);
	CHECK_EQ(h_ptask_obj(ch.p[1])->failures, 1);
	CHECK_EQ(h_ptask_obj(ch.p[1])->error_code, 810);
	/* a requeue without a status is refused */
	CHECK_ERR(requeue_inv(e2, 1, 0), -EINVAL);
out:
	free(ch.t);
}

/* A requeued invocation nobody took again goes with its graph. */
static void test_requeue_pending_at_close(void)
{
	struct chain ch;

	if (!mkchain_as(&ch, "requeue-close", true) || !push_one(&ch))
		goto out;
	if (!CHECK_OK(take_flags(ch.e, PTASK_TAKE_OUTPUTS, 1, 8, ch.t)))
		goto out;
	CHECK_OK(requeue_inv(ch.e, ch.t->inv[0].id, -EIO));
	CHECK(h_ptask_obj(ch.p[0])->redo != NULL);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 1);
out:
	free(ch.t);
}

/* Without a template there is no size: the executor makes that output. */
static void test_take_outputs_untemplated(void)
{
	struct ptask_exec_output out = { .index = 1 };
	struct chain ch;

	if (!mkchain(&ch, "outputs-none") || !push_one(&ch))
		goto out;
	if (!CHECK_OK(take_flags(ch.e, PTASK_TAKE_OUTPUTS, 1, 8, ch.t)))
		goto out;
	CHECK(!(ch.t->ports[1].flags & PTASK_INVP_MADE));
	CHECK_EQ(ch.t->ports[1].datablock, 0);
	if (!CHECK_OK(h_db(ch.e, 8, &out.datablock)))
		goto out;
	CHECK_OK(complete_flags(ch.e, ch.t->inv[0].id, 0, 0, &out, 1, 10));
out:
	free(ch.t);
}

static struct ptask_ptask *ptask_of(u32 handle)
{
	struct ptask_obj *o = ptask_core_ns_find(&h_ns, handle,
						 PTASK_OBJ_PTASK);

	return o ? ptask_container_of(o, struct ptask_ptask, obj) : NULL;
}

/* Complete invocation @id with a fresh 8-byte datablock on port 1. */
static int complete_fresh(struct ptask_client *e, u64 id, u64 gpu_ns)
{
	struct ptask_exec_output out = { .index = 1 };
	int err;

	err = h_db(e, 8, &out.datablock);
	if (err)
		return err;
	err = complete_flags(e, id, 0, 0, &out, 1, gpu_ns);
	if (err)
		h_release(e, out.datablock);
	return err;
}

/*
 * PTASK_TAKE_FUSE: the 3-deep chain comes as one invocation, a segment
 * of its three ptasks: the records of each in turn (@member), the links'
 * ends PTASK_INVP_FUSED without datablock; every member Executing until
 * the completion, which names the last one's output and counts one
 * invocation and a third of the device time for each.  A second round
 * is a segment again.
 */
static void test_fuse_chain(void)
{
	struct ptask_exec_output out = { .index = 1 };
	struct chain ch;
	u32 i, round, db;

	if (!mkchain_as(&ch, "fuse", true))
		goto out;
	for (round = 0; round < 2; round++) {
		if (!push_one(&ch) ||
		    !CHECK_OK(take_flags(ch.e, PTASK_TAKE_FUSE |
					 PTASK_TAKE_AHEAD, 8,
					 PTASK_TAKE_MAX_PORTS, ch.t)) ||
		    !CHECK_EQ(ch.t->n_inv, 1) || !CHECK_EQ(ch.t->n_ports, 6))
			goto out;
		CHECK_EQ(ch.t->inv[0].ptask, ch.p[0]);
		CHECK_EQ(ch.t->inv[0].flags, PTASK_INV_SEGMENT);
		CHECK_EQ(ch.t->inv[0].n_ports, 6);
		for (i = 0; i < 6; i++) {
			const struct ptask_invocation_port *r = &ch.t->ports[i];

			CHECK_EQ(r->member, ch.p[i / 2]);
			CHECK_EQ(r->index, i % 2);
			CHECK_EQ(r->bytes, 8);
			CHECK_EQ(!!(r->flags & PTASK_INVP_FUSED),
				 i != 0 && i != 5);
			CHECK_EQ(!!r->datablock, i == 0);
		}
		CHECK(ch.t->ports[5].flags & PTASK_INVP_TO_CLIENT);
		for (i = 0; i < 3; i++)
			CHECK_EQ(ptask_of(ch.p[i])->state,
				 PTASK_STATE_EXECUTING);
		CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 1);
		CHECK_ERR(h_pull(ch.c, ch.cout, &db), -EAGAIN);
		/* Never ahead; the last ptask's output port only. */
		REQUIRE_OK(h_db(ch.e, 8, &out.datablock));
		CHECK_ERR(complete_flags(ch.e, ch.t->inv[0].id,
					 PTASK_EXEC_COMPLETE_AHEAD, 0, &out, 1,
					 0), -EINVAL);
		CHECK_ERR(complete_flags(ch.e, ch.t->inv[0].id,
					 PTASK_EXEC_COMPLETE_SETTLE, 0, NULL, 0,
					 0), -EINVAL);
		out.index = 0;
		CHECK_ERR(complete_flags(ch.e, ch.t->inv[0].id, 0, 0, &out, 1,
					 0), -EINVAL);
		out.index = 1;
		CHECK_OK(complete_flags(ch.e, ch.t->inv[0].id, 0, 0, &out, 1,
					300));
		CHECK_OK(h_pull(ch.c, ch.cout, &db));
		CHECK_EQ(db, out.datablock);
		CHECK_OK(h_release(ch.c, db));
		for (i = 0; i < 3; i++) {
			CHECK_EQ(ptask_of(ch.p[i])->state, PTASK_STATE_WAITING);
			CHECK_EQ(ptask_of(ch.p[i])->invocations, round + 1);
			CHECK_EQ(ptask_of(ch.p[i])->gpu_ns, 100 * (round + 1));
		}
		CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 0);
	}
	CHECK_EQ(ptask_core_proc_find(&h_ns, h_user.pid)->gpu_ns, 600);
	REQUIRE_OK(h_close(ch.c, ch.g));
out:
	free(ch.t);
}

/*
 * What is not fused: outputs without a template (no size), and a link
 * whose records do not fit: the segment stops before it, and the rest
 * runs on a real datablock once the segment completed.
 */
static void test_fuse_limits(void)
{
	struct chain ch;
	u32 db;

	if (!mkchain(&ch, "nofuse") || !push_one(&ch) ||
	    !CHECK_OK(take_flags(ch.e, PTASK_TAKE_FUSE, 8,
				 PTASK_TAKE_MAX_PORTS, ch.t)) ||
	    !CHECK_EQ(ch.t->n_inv, 1))
		goto out;
	CHECK_EQ(ch.t->inv[0].flags, 0);
	CHECK_EQ(ch.t->n_ports, 2);
	CHECK_EQ(ch.t->ports[0].member, 0);
	REQUIRE_OK(h_close(ch.c, ch.g));
	free(ch.t);

	if (!mkchain_as(&ch, "cut", true) || !push_one(&ch) ||
	    !CHECK_OK(take_flags(ch.e, PTASK_TAKE_FUSE, 8, 5, ch.t)) ||
	    !CHECK_EQ(ch.t->n_inv, 1))
		goto out;
	CHECK_EQ(ch.t->inv[0].flags, PTASK_INV_SEGMENT);
	CHECK_EQ(ch.t->n_ports, 4);
	CHECK_EQ(ch.t->ports[3].member, ch.p[1]);
	CHECK_EQ(ch.t->ports[3].flags & PTASK_INVP_FUSED, 0);
	CHECK_EQ(ptask_of(ch.p[2])->state, PTASK_STATE_WAITING);
	CHECK_OK(complete_fresh(ch.e, ch.t->inv[0].id, 10));
	/* p1's output went to p2 as a datablock: p2 runs alone. */
	if (!CHECK_OK(take_flags(ch.e, PTASK_TAKE_FUSE, 8,
				 PTASK_TAKE_MAX_PORTS, ch.t)) ||
	    !CHECK_EQ(ch.t->n_inv, 1))
		goto out;
	CHECK_EQ(ch.t->inv[0].ptask, ch.p[2]);
	CHECK_EQ(ch.t->inv[0].flags, 0);
	CHECK(ch.t->ports[0].datablock);
	CHECK_OK(complete_fresh(ch.e, ch.t->inv[0].id, 10));
	CHECK_OK(h_pull(ch.c, ch.cout, &db));
	CHECK_OK(h_release(ch.c, db));
	REQUIRE_OK(h_close(ch.c, ch.g));
out:
	free(ch.t);
}

/*
 * A member busy: hop 0 taken alone and completed, so hop 1 runs on a
 * datablock; the next push's hop 0 then finds hop 1 Executing and runs
 * alone, while hop 1 heads a segment with hop 2.  Everything arrives,
 * in order.
 */
static void test_fuse_member_busy(void)
{
	struct chain ch;
	u64 id0;
	u32 db, i;

	if (!mkchain_as(&ch, "busy", true) || !push_one(&ch) ||
	    !CHECK_OK(take_complete(&ch, ch.p[0], 0, 10, &id0)) ||
	    !push_one(&ch) ||
	    !CHECK_OK(take_flags(ch.e, PTASK_TAKE_FUSE, 8,
				 PTASK_TAKE_MAX_PORTS, ch.t)) ||
	    !CHECK_EQ(ch.t->n_inv, 2))
		goto out;
	CHECK_EQ(ch.t->inv[0].ptask, ch.p[1]);
	CHECK_EQ(ch.t->inv[0].flags, PTASK_INV_SEGMENT);
	CHECK_EQ(ch.t->inv[0].n_ports, 4);
	CHECK_EQ(ch.t->inv[1].ptask, ch.p[0]);
	CHECK_EQ(ch.t->inv[1].flags, 0);
	CHECK_EQ(ch.t->inv[1].n_ports, 2);
	CHECK_OK(complete_fresh(ch.e, ch.t->inv[1].id, 10));
	CHECK_OK(complete_fresh(ch.e, ch.t->inv[0].id, 10));
	/* hop 1 runs again on hop 0's second output: a segment again */
	if (!CHECK_OK(take_flags(ch.e, PTASK_TAKE_FUSE, 8,
				 PTASK_TAKE_MAX_PORTS, ch.t)) ||
	    !CHECK_EQ(ch.t->n_inv, 1))
		goto out;
	CHECK_EQ(ch.t->inv[0].ptask, ch.p[1]);
	CHECK_EQ(ch.t->inv[0].flags, PTASK_INV_SEGMENT);
	CHECK_OK(complete_fresh(ch.e, ch.t->inv[0].id, 10));
	for (i = 0; i < 2; i++) {
		CHECK_OK(h_pull(ch.c, ch.cout, &db));
		CHECK_OK(h_release(ch.c, db));
	}
	CHECK_ERR(h_pull(ch.c, ch.cout, &db), -EAGAIN);
	REQUIRE_OK(h_close(ch.c, ch.g));
out:
	free(ch.t);
}

/*
 * A segment that fails fails the graph; one whose graph went away
 * completes with -ECANCELED; its members are freed with the graph
 * (nothing leaks).
 */
static void test_fuse_fail_and_gone(void)
{
	struct chain ch;
	u32 db;

	if (!mkchain_as(&ch, "fusefail", true) || !push_one(&ch) ||
	    !CHECK_OK(take_flags(ch.e, PTASK_TAKE_FUSE, 8,
				 PTASK_TAKE_MAX_PORTS, ch.t)))
		goto out;
	CHECK_OK(complete_flags(ch.e, ch.t->inv[0].id, 0, -EIO, NULL, 0, 10));
	CHECK_ERR(h_pull(ch.c, ch.cout, &db), -EIO);
	REQUIRE_OK(h_close(ch.c, ch.g));
	free(ch.t);

	if (!mkchain_as(&ch, "fusegone", true) || !push_one(&ch) ||
	    !CHECK_OK(take_flags(ch.e, PTASK_TAKE_FUSE, 8,
				 PTASK_TAKE_MAX_PORTS, ch.t)))
		goto out;
	REQUIRE_OK(h_terminate(ch.c, ch.g));
	REQUIRE_OK(h_close(ch.c, ch.g));
	CHECK_ERR(complete_fresh(ch.e, ch.t->inv[0].id, 10), -ECANCELED);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 0);
out:
	free(ch.t);
}

/*
 * A later member with a sticky port: fused only once the sticky port is
 * occupied; its record names the sticky datablock, which the segment
 * holds while a push replaces it (the next round names the new one), and
 * which the executor may map; the graph gone with one held: nothing
 * leaks.
 */
static void test_fuse_sticky(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	struct h_take *t = calloc(1, sizeof(*t));
	u32 g, t8, p0, p1, in0, out0, in1, out1, st1, cin, cst, cout;
	u32 s1, s2 = 0, d, round;
	struct ptask_buf *buf;
	u64 bytes;

	budgets_off();
	REQUIRE(t);
	REQUIRE_OK(h_graph(c, "sticky", PTASK_GRAPH_CREATE, 0600, &g));
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_ARRAY, 4, 2, 1, 1, &t8));
	REQUIRE(gpu_stage(c, g, t8, &p0, &in0, &out0, &cin));
	REQUIRE_OK(h_gpu_ptask(c, NULL, g, 3, code, sizeof(code), "k", &p1));
	REQUIRE_OK(h_port(c, p1, PTASK_PORT_INPUT, 0, &in1));
	REQUIRE_OK(h_port(c, p1, PTASK_PORT_OUTPUT, t8, &out1));
	REQUIRE_OK(h_port(c, p1, PTASK_PORT_STICKY, 0, &st1));
	REQUIRE_OK(h_chan(c, g, out0, in1, 4, 0, NULL));
	REQUIRE_OK(h_chan(c, g, 0, st1, 1, 0, &cst));
	REQUIRE_OK(h_chan(c, g, out1, 0, 4, 0, &cout));
	REQUIRE_OK(h_run(c, g));
	/* no sticky datablock yet: p0 alone */
	REQUIRE_OK(h_db(c, 8, &d));
	REQUIRE_OK(h_push(c, cin, d));
	REQUIRE_OK(h_release(c, d));
	REQUIRE_OK(take_flags(e, PTASK_TAKE_FUSE, 8, PTASK_TAKE_MAX_PORTS, t));
	REQUIRE(t->n_inv == 1);
	CHECK_EQ(t->inv[0].flags, 0);
	CHECK_OK(complete_fresh(e, t->inv[0].id, 10));
	REQUIRE_OK(h_db(c, 8, &s1));
	REQUIRE_OK(h_push(c, cst, s1));
	REQUIRE_OK(take_flags(e, PTASK_TAKE_FUSE, 8, PTASK_TAKE_MAX_PORTS, t));
	REQUIRE(t->n_inv == 1);
	CHECK_EQ(t->inv[0].ptask, p1);
	CHECK_OK(complete_fresh(e, t->inv[0].id, 10));
	REQUIRE_OK(h_pull(c, cout, &d));
	REQUIRE_OK(h_release(c, d));
	for (round = 0; round < 2; round++) {
		REQUIRE_OK(h_db(c, 8, &d));
		REQUIRE_OK(h_push(c, cin, d));
		REQUIRE_OK(h_release(c, d));
		REQUIRE_OK(take_flags(e, PTASK_TAKE_FUSE, 8,
				      PTASK_TAKE_MAX_PORTS, t));
		REQUIRE(t->n_inv == 1);
		CHECK_EQ(t->inv[0].flags, PTASK_INV_SEGMENT);
		REQUIRE(t->n_ports == 5);
		CHECK_EQ(t->ports[4].member, p1);
		CHECK_EQ(t->ports[4].kind, PTASK_PORT_STICKY);
		CHECK_EQ(t->ports[4].flags & PTASK_INVP_FUSED, 0);
		CHECK_EQ(t->ports[3].flags & PTASK_INVP_FUSED, 0);
		CHECK(t->ports[2].flags & PTASK_INVP_FUSED);
		CHECK_EQ(t->ports[4].datablock, round ? s2 : s1);
		/* the executor reads it: it may map it */
		if (CHECK_OK(ptask_core_datablock_map(e, t->ports[4].datablock,
						      &bytes, &buf)))
			ptask_os_buf_put(buf);
		if (!round) {
			/* replaced while the segment runs: s1 stays its */
			REQUIRE_OK(h_release(c, s1));
			REQUIRE_OK(h_db(c, 8, &s2));
			REQUIRE_OK(h_push(c, cst, s2));
			REQUIRE_OK(h_release(c, s2));
			CHECK(ptask_core_ns_find(&h_ns, s1,
						 PTASK_OBJ_DATABLOCK));
		}
		CHECK_OK(complete_fresh(e, t->inv[0].id, 10));
		if (!round)
			CHECK(!ptask_core_ns_find(&h_ns, s1,
						  PTASK_OBJ_DATABLOCK));
		REQUIRE_OK(h_pull(c, cout, &d));
		REQUIRE_OK(h_release(c, d));
	}
	/* the graph goes while a segment holds s2: nothing leaks */
	REQUIRE_OK(h_db(c, 8, &d));
	REQUIRE_OK(h_push(c, cin, d));
	REQUIRE_OK(h_release(c, d));
	REQUIRE_OK(take_flags(e, PTASK_TAKE_FUSE, 8, PTASK_TAKE_MAX_PORTS, t));
	CHECK_EQ(t->inv[0].flags, PTASK_INV_SEGMENT);
	REQUIRE_OK(h_terminate(c, g));
	REQUIRE_OK(h_close(c, g));
	CHECK_ERR(complete_fresh(e, t->inv[0].id, 10), -ECANCELED);
	free(t);
}

static const struct h_test tests[] = {
	H_TEST(test_fuse_chain),
	H_TEST(test_fuse_sticky),
	H_TEST(test_fuse_limits),
	H_TEST(test_fuse_member_busy),
	H_TEST(test_fuse_fail_and_gone),
	H_TEST(test_ahead_chain),
	H_TEST(test_ahead_settle_fails_graph),
	H_TEST(test_ahead_orphaned),
	H_TEST(test_ahead_executor_gone),
	H_TEST(test_ahead_again_before_settle),
	H_TEST(test_ahead_refused_for_host_readers),
	H_TEST(test_backlog_flag),
	H_TEST(test_ahead_pulled_dropped),
	H_TEST(test_take_ahead_chain),
	H_TEST(test_take_ahead_stream),
	H_TEST(test_pull_ahead_of_settle),
	H_TEST(test_take_ahead_graph_gone),
	H_TEST(test_take_outputs),
	H_TEST(test_take_outputs_untemplated),
	H_TEST(test_requeue),
	H_TEST(test_requeue_pending_at_close),
};

int main(int argc, char **argv)
{
	return h_main(tests, ARRAY_SIZE(tests), argc, argv);
}
