// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * exec_core_test.c - the executor side of the core: a 3-ptask chain
 * driven by an executor loop, batches and max_ports, EXEC_COMPLETE errors,
 * failed invocations, terminate with work queued and in flight, executor
 * unregister and destruction mid-invocation, EXEC_PTASK_INFO.
 */
#include <stdlib.h>
#include <string.h>
#include "tests/unit/harness.h"

static u32 mkgraph(struct ptask_client *c, const char *name)
{
	u32 g = 0;

	CHECK_OK(h_graph(c, name, PTASK_GRAPH_CREATE, 0666, &g));
	return g;
}

static struct h_take *new_take(void)
{
	struct h_take *t = calloc(1, sizeof(*t));

	if (!t)
		abort();
	return t;
}

/* The stage number of each ptask of the chain, by handle. */
static u32 chain_ptask[3];

static u64 stage_of(u32 ptask)
{
	u32 i;

	for (i = 0; i < 3; i++)
		if (chain_ptask[i] == ptask)
			return i + 1;
	return 99;
}

/*
 * One round of a real executor: take a batch, map every input, make an
 * output datablock per output port, write f(input) into it, complete.
 * f(x) = x * 10 + stage.  Return: invocations completed, or an error.
 */
static int exec_round(struct ptask_client *e, u32 max_inv, u32 max_ports)
{
	struct h_take *t = new_take();
	u32 i, j, done = 0;
	int err = h_take(e, max_inv, max_ports, t);

	for (i = 0; !err && i < t->n_inv; i++) {
		const struct ptask_invocation *inv = &t->inv[i];
		struct ptask_exec_output outs[PTASK_MAX_PORTS];
		u64 x = 0;
		u32 n = 0;

		for (j = 0; j < inv->n_ports; j++) {
			const struct ptask_invocation_port *pr =
				&t->ports[inv->first_port + j];

			CHECK_EQ(pr->index, j);
			if (pr->kind == PTASK_PORT_OUTPUT) {
				CHECK_EQ(pr->datablock, 0);
				continue;
			}
			/* The executor may map the inputs it took. */
			err = h_read_tag(e, pr->datablock, &x);
			if (err)
				break;
			CHECK_EQ(pr->mmap_offset, (u64)pr->datablock <<
				 PTASK_MMAP_SHIFT);
		}
		for (j = 0; !err && j < inv->n_ports; j++) {
			const struct ptask_invocation_port *pr =
				&t->ports[inv->first_port + j];
			u32 db;

			if (pr->kind != PTASK_PORT_OUTPUT)
				continue;
			err = h_db(e, 8, &db);
			if (!err)
				err = h_write_tag(e, db, x * 10 +
						  stage_of(inv->ptask));
			outs[n].index = j;
			outs[n++].datablock = db;
		}
		if (!err)
			err = h_complete(e, inv->id, 0, outs, n);
		done += !err;
	}
	free(t);
	return err ? err : (int)done;
}

/*
 * graph input -> A -> B -> C -> graph output, each channel of @cap; CPU
 * ptasks an executor runs, or (@gpu) GPU ptasks.
 */
static void build_chain_of(struct ptask_client *c, u32 g, u32 cap, bool gpu,
			   u32 *ch_in, u32 *ch_out)
{
	static const char code[] = "// three stages\n";
	u32 i, in, out, prev_out = 0;

	for (i = 0; i < 3; i++) {
		if (gpu)
			CHECK_OK(h_gpu_ptask(c, NULL, g, 2, code, sizeof(code),
					     "k", &chain_ptask[i]));
		else
			CHECK_OK(h_ptask(c, g, 2, &chain_ptask[i]));
		CHECK_OK(h_port(c, chain_ptask[i], PTASK_PORT_INPUT, 0, &in));
		CHECK_OK(h_port(c, chain_ptask[i], PTASK_PORT_OUTPUT, 0,
				&out));
		CHECK_OK(h_chan(c, g, prev_out, in, cap, 0,
				prev_out ? NULL : ch_in));
		prev_out = out;
	}
	CHECK_OK(h_chan(c, g, prev_out, 0, cap, 0, ch_out));
}

static void build_chain(struct ptask_client *c, u32 g, u32 cap, u32 *ch_in,
			u32 *ch_out)
{
	build_chain_of(c, g, cap, false, ch_in, ch_out);
}

static void test_chain_executor_loop(void)
{
	enum { N = 50 };
	struct ptask_client *c = h_client(), *e = h_executor();
	u32 g = mkgraph(c, "chain"), ch_in, ch_out, db, pushed = 0, pulled = 0;
	u32 rounds = 0;
	u64 tag;

	build_chain(c, g, 2, &ch_in, &ch_out);
	REQUIRE_OK(h_run(c, g));
	while (pulled < N) {
		int err;

		REQUIRE(++rounds < 10000);
		while (pushed < N) {
			REQUIRE_OK(h_db(c, 8, &db));
			REQUIRE_OK(h_write_tag(c, db, pushed));
			err = h_push(c, ch_in, db);
			REQUIRE_OK(h_release(c, db));
			if (err == -EAGAIN)
				break;
			REQUIRE_OK(err);
			pushed++;
		}
		err = exec_round(e, 1 + rounds % 4, 2 + rounds % 7);
		REQUIRE(err > 0 || err == -EAGAIN || err == -ENOSPC);
		if (rounds % 3 == 0)
			continue;	/* let back-pressure build up */
		while ((err = h_pull(c, ch_out, &db)) == 0) {
			REQUIRE_OK(h_read_tag(c, db, &tag));
			CHECK_EQ(tag, ((u64)pulled * 10 + 1) * 100 + 23);
			REQUIRE_OK(h_release(c, db));
			pulled++;
		}
		CHECK_ERR(err, -EAGAIN);
	}
	CHECK_EQ(h_ptask_obj(chain_ptask[0])->invocations, N);
	CHECK_EQ(h_ptask_obj(chain_ptask[2])->invocations, N);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_DATABLOCKS], 0);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 0);
	CHECK_EQ(os_user_buffers, 0);
}

/* Back-pressure: C's output channel full holds C, then B, then A. */
static void test_chain_backpressure(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	u32 g = mkgraph(c, "bp"), ch_in, ch_out, db, i;
	int err;

	build_chain(c, g, 1, &ch_in, &ch_out);
	REQUIRE_OK(h_run(c, g));
	for (i = 0; i < 20; i++) {
		REQUIRE_OK(h_db(c, 8, &db));
		REQUIRE_OK(h_write_tag(c, db, i));
		err = h_push(c, ch_in, db);
		REQUIRE_OK(h_release(c, db));
		if (err == -EAGAIN)
			break;
		REQUIRE_OK(err);
		while (exec_round(e, 8, 64) > 0)
			;
	}
	/* Every stage is full and holds its output; nothing is queued. */
	CHECK_EQ(h_ready_len(), 0);
	CHECK_EQ(h_chan_obj(ch_out)->count, 1);
	CHECK_EQ(h_ptask_obj(chain_ptask[2])->state, PTASK_STATE_COMPLETED);
	CHECK_EQ(h_ptask_obj(chain_ptask[1])->state, PTASK_STATE_COMPLETED);
	CHECK_EQ(h_ptask_obj(chain_ptask[0])->state, PTASK_STATE_COMPLETED);
	CHECK(ptask_channel_full(h_chan_obj(ch_in)));
	/* Drain one at a time: everything comes out in order. */
	for (i = 0; ; i++) {
		u64 tag;

		while (exec_round(e, 8, 64) > 0)
			;
		err = h_pull(c, ch_out, &db);
		if (err == -EAGAIN)
			break;
		REQUIRE_OK(err);
		REQUIRE_OK(h_read_tag(c, db, &tag));
		CHECK_EQ(tag, ((u64)i * 10 + 1) * 100 + 23);
		REQUIRE_OK(h_release(c, db));
	}
	CHECK(i >= 8);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_DATABLOCKS], 0);
}

/* A ptask with @nin inputs and one output; each input fed by a channel. */
static u32 mkfan(struct ptask_client *c, u32 g, u32 nin, u32 *chans)
{
	u32 p = 0, i, port;

	CHECK_OK(h_ptask(c, g, nin + 1, &p));
	for (i = 0; i < nin; i++) {
		CHECK_OK(h_port(c, p, PTASK_PORT_INPUT, 0, &port));
		CHECK_OK(h_chan(c, g, 0, port, 4, 0, &chans[i]));
	}
	CHECK_OK(h_port(c, p, PTASK_PORT_OUTPUT, 0, &port));
	return p;
}

static void feed(struct ptask_client *c, const u32 *chans, u32 n)
{
	u32 i, db;

	for (i = 0; i < n; i++) {
		CHECK_OK(h_db(c, 8, &db));
		CHECK_OK(h_push(c, chans[i], db));
		CHECK_OK(h_release(c, db));
	}
}

static void test_batches_max_ports(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	u32 g = mkgraph(c, "batch"), p1, p2, p3, p4, c1[1], c2[2], c3[4],
	    c4[1];
	struct h_take *t = new_take();
	u64 id1;

	p1 = mkfan(c, g, 1, c1);	/* 2 ports */
	p2 = mkfan(c, g, 2, c2);	/* 3 ports */
	p3 = mkfan(c, g, 4, c3);	/* 5 ports */
	p4 = mkfan(c, g, 1, c4);	/* 2 ports */
	REQUIRE_OK(h_run(c, g));
	feed(c, c1, 1);
	feed(c, c2, 2);
	feed(c, c3, 4);
	feed(c, c4, 1);
	CHECK_EQ(h_ready_len(), 4);
	/* p1 fits in 4 port records, p2 would not: one invocation. */
	REQUIRE_OK(h_take(e, 8, 4, t));
	CHECK_EQ(t->n_inv, 1);
	CHECK_EQ(t->n_ports, 2);
	CHECK_EQ(t->inv[0].ptask, p1);
	CHECK_EQ(t->inv[0].first_port, 0);
	id1 = t->inv[0].id;
	/* p2 first and it does not fit at all: -ENOSPC, left queued. */
	CHECK_ERR(h_take(e, 8, 2, t), -ENOSPC);
	CHECK_EQ(h_ready_len(), 3);
	CHECK(h_ready_has(p2));
	CHECK_EQ(h_ptask_obj(p2)->state, PTASK_STATE_QUEUED);
	/* p2 and p3 need 8; max_invocations caps the batch at one. */
	REQUIRE_OK(h_take(e, 1, 100, t));
	CHECK_EQ(t->n_inv, 1);
	CHECK_EQ(t->inv[0].ptask, p2);
	CHECK_EQ(t->n_ports, 3);
	/* p3 (5) and p4 (2) in exactly 7 records. */
	REQUIRE_OK(h_take(e, 8, 7, t));
	CHECK_EQ(t->n_inv, 2);
	CHECK_EQ(t->n_ports, 7);
	CHECK_EQ(t->inv[0].ptask, p3);
	CHECK_EQ(t->inv[0].first_port, 0);
	CHECK_EQ(t->inv[0].n_ports, 5);
	CHECK_EQ(t->inv[1].ptask, p4);
	CHECK_EQ(t->inv[1].first_port, 5);
	CHECK_EQ(t->inv[1].n_ports, 2);
	CHECK_EQ(t->ports[5].kind, PTASK_PORT_INPUT);
	CHECK_EQ(t->ports[6].kind, PTASK_PORT_OUTPUT);
	CHECK(t->inv[0].id != t->inv[1].id);
	CHECK_ERR(h_take(e, 8, 7, t), -EAGAIN);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 4);
	/* p1 done (its output has no channel: dropped); it runs again. */
	{
		struct ptask_exec_output o = { .index = 1 };

		REQUIRE_OK(h_db(e, 8, &o.datablock));
		REQUIRE_OK(h_complete(e, id1, 0, &o, 1));
	}
	/* Oversized requests are capped, not refused. */
	feed(c, c1, 1);
	{
		struct ptask_exec_take a = {
			.flags = PTASK_NONBLOCK, .max_invocations = 1000000,
			.max_ports = 0xffffffffu,
		};
		struct ptask_call_io io = { .invocations = t->inv,
					    .ports = t->ports };

		CHECK_OK(h_call(e, NULL, PTASK_IOC_EXEC_TAKE, &a, &io));
		CHECK_EQ(a.n_invocations, 1);
	}
	free(t);
}

/* Port records describe the ports; invocation records the ptask. */
static void test_take_records(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	struct ptask_caller who = h_who(1234, 1234);
	u32 g = mkgraph(c, "rec"), t8, trec, p, in, st, out, ch1, ch2, d1, d2;
	struct ptask_port_open po = { .kind = PTASK_PORT_INPUT,
				      .flags = PTASK_PORT_RUNTIME,
				      .param_index = 7 };
	struct ptask_priority pr = { .flags = PTASK_PRIO_SET_STATIC,
				     .static_prio = 9 };
	static const u8 code[] = "ptx";
	struct h_take *t = new_take();

	who.pid = 77;
	who.nice = 3;
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_ARRAY, 4, 2, 1, 1, &t8));
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_RECORDS, 4, 10, 1, 1, &trec));
	REQUIRE_OK(h_gpu_ptask(c, &who, g, 3, code, sizeof(code), "main", &p));
	po.ptask = p;
	po.template = trec;
	REQUIRE_OK(h_call(c, NULL, PTASK_IOC_PORT_OPEN, &po, NULL));
	in = po.handle;
	CHECK_EQ(po.index, 0);
	REQUIRE_OK(h_port(c, p, PTASK_PORT_STICKY, 0, &st));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_OUTPUT, t8, &out));
	REQUIRE_OK(h_chan(c, g, 0, in, 1, 0, &ch1));
	REQUIRE_OK(h_chan(c, g, 0, st, 1, 0, &ch2));
	pr.ptask = p;
	REQUIRE_OK(h_call(c, NULL, PTASK_IOC_PTASK_SET_PRIORITY, &pr, NULL));
	REQUIRE_OK(h_db_tmpl(c, trec, 3, &d1, NULL));
	REQUIRE_OK(h_db(c, 100, &d2));
	REQUIRE_OK(h_push(c, ch1, d1));
	REQUIRE_OK(h_push(c, ch2, d2));
	REQUIRE_OK(h_run(c, g));
	REQUIRE_OK(h_take(e, 1, 3, t));
	CHECK_EQ(t->inv[0].kind, PTASK_KIND_GPU);
	CHECK_EQ(t->inv[0].owner_pid, 77);
	CHECK_EQ(t->inv[0].owner_uid, 1234);
	CHECK_EQ(t->inv[0].proxy_nice, 3);
	CHECK_EQ(t->inv[0].static_prio, 9);
	CHECK_EQ(t->inv[0].flags, 0);	/* nothing more queued */
	CHECK_EQ(t->ports[0].port, in);
	CHECK_EQ(t->ports[0].flags, PTASK_PORT_RUNTIME);
	CHECK_EQ(t->ports[0].param_index, 7);
	CHECK_EQ(t->ports[0].template, trec);
	CHECK_EQ(t->ports[0].datablock, d1);
	CHECK_EQ(t->ports[0].bytes, 12);
	CHECK_EQ(t->ports[0].records, 3);
	CHECK_EQ(t->ports[1].port, st);
	CHECK_EQ(t->ports[1].kind, PTASK_PORT_STICKY);
	CHECK_EQ(t->ports[1].datablock, d2);
	CHECK_EQ(t->ports[1].bytes, 100);
	CHECK_EQ(t->ports[2].port, out);
	CHECK_EQ(t->ports[2].index, 2);
	CHECK_EQ(t->ports[2].datablock, 0);
	CHECK_EQ(t->ports[2].template, t8);
	CHECK_EQ(t->ports[2].bytes, 8);		/* the template's size */
	CHECK_EQ(t->ports[2].mmap_offset, 0);
	/* A client that is no executor may not map them. */
	CHECK_ERR(h_write_tag(h_client(), d2, 1), -ENOENT);
	CHECK_OK(h_write_tag(e, d2, 1));
	free(t);
}

/*
 * EXEC_COMPLETE errors.  p: 0 input, 1 output (template t4), 2 output
 * (feeds a channel of template t4 into q's input of template t4b, equal).
 */
static void test_complete_errors(void)
{
	struct ptask_client *c = h_client(), *e = h_executor(),
			    *e2 = h_executor();
	u32 g = mkgraph(c, "cerr"), t4, t4b, t8, p, q, in, o1, o2, qin, ch,
	    din, d4, d8, d4x, dother;
	struct h_take *t = new_take(), *t2 = new_take();
	struct ptask_exec_output outs[3];
	u64 id;

	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_OPAQUE, 1, 4, 1, 1, &t4));
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_OPAQUE, 1, 4, 1, 1, &t4b));
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_OPAQUE, 1, 8, 1, 1, &t8));
	REQUIRE_OK(h_ptask(c, g, 3, &p));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, 0, &in));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_OUTPUT, t8, &o1));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_OUTPUT, 0, &o2));
	REQUIRE_OK(h_ptask(c, g, 1, &q));
	REQUIRE_OK(h_port(c, q, PTASK_PORT_INPUT, t4b, &qin));
	REQUIRE_OK(h_chan(c, g, 0, in, 2, 0, &ch));
	REQUIRE_OK(h_chan(c, g, o1, 0, 2, 0, NULL));
	REQUIRE_OK(h_chan(c, g, o2, qin, 2, t4, NULL));
	REQUIRE_OK(h_run(c, g));
	REQUIRE_OK(h_db(c, 16, &din));
	REQUIRE_OK(h_push(c, ch, din));
	REQUIRE_OK(h_release(c, din));
	REQUIRE_OK(h_take(e, 1, 8, t));
	id = t->inv[0].id;
	REQUIRE_OK(h_db(e, 4, &d4));
	REQUIRE_OK(h_db(e, 8, &d8));
	REQUIRE_OK(h_db(e, 4, &d4x));
	REQUIRE_OK(h_db(c, 4, &dother));	/* held by c, not e */

	/* Who: not an executor, another executor, an unknown id. */
	outs[0] = (struct ptask_exec_output){ 1, d8 };
	outs[1] = (struct ptask_exec_output){ 2, d4 };
	CHECK_ERR(h_complete(c, id, 0, outs, 2), -EPERM);
	CHECK_ERR(h_complete(e2, id, 0, outs, 2), -ENOENT);
	CHECK_ERR(h_complete(e, id + 100, 0, outs, 2), -ENOENT);
	/* Indices: out of range, an input port, duplicate, missing. */
	outs[0].index = 3;
	CHECK_ERR(h_complete(e, id, 0, outs, 2), -EINVAL);
	outs[0].index = 0;
	CHECK_ERR(h_complete(e, id, 0, outs, 2), -EINVAL);
	outs[0] = outs[1];		/* {2, d4} twice */
	CHECK_ERR(h_complete(e, id, 0, outs, 2), -EINVAL);
	outs[0] = (struct ptask_exec_output){ 1, d8 };
	CHECK_ERR(h_complete(e, id, 0, outs, 1), -EINVAL);
	CHECK_ERR(h_complete(e, id, 0, outs, 0), -EINVAL);
	/* Datablocks: unknown, held by someone else only. */
	outs[1].datablock = 0x7ffffff0;
	CHECK_ERR(h_complete(e, id, 0, outs, 2), -ENOENT);
	outs[1].datablock = dother;
	CHECK_ERR(h_complete(e, id, 0, outs, 2), -ENOENT);
	/* Templates: the port's own (t8 wants <= 8 bytes: din has 16). */
	outs[0].datablock = din;
	outs[1].datablock = d4;
	CHECK_ERR(h_complete(e, id, 0, outs, 2), -EPROTOTYPE);
	/* The channel's template (t4) downstream of o2. */
	outs[0].datablock = d8;
	outs[1].datablock = d8;
	CHECK_ERR(h_complete(e, id, 0, outs, 2), -EPROTOTYPE);
	/* The port behind the channel (t4b): same check, via q's port. */
	h_chan_obj(h_port_obj(qin)->in->obj.handle)->tmpl = NULL;
	CHECK_ERR(h_complete(e, id, 0, outs, 2), -EPROTOTYPE);
	/* Nothing was applied by any of these. */
	CHECK_EQ(h_ptask_obj(p)->state, PTASK_STATE_EXECUTING);
	CHECK_EQ(h_db_obj(d8)->refs, 1);
	CHECK_EQ(h_db_obj(d4)->refs, 1);
	CHECK_EQ(h_db_obj(din)->refs, 1);	/* the invocation's */
	CHECK(!h_port_obj(o1)->occupant && !h_port_obj(o2)->occupant);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 1);
	/* The good call: d8 on o1, d4 on o2. */
	outs[0].datablock = d8;
	outs[1].datablock = d4;
	CHECK_OK(h_complete(e, id, 0, outs, 2));
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 0);
	CHECK(!h_db_obj(din));			/* input released */
	CHECK_EQ(h_db_obj(d8)->refs, 1);	/* e's hold moved to a channel */
	CHECK(!ptask_client_find_hold(e, h_db_obj(d8)));
	CHECK(!ptask_client_find_hold(e, h_db_obj(d4)));
	CHECK_EQ(h_port_obj(qin)->occupant, h_db_obj(d4));
	/* Completing twice: the invocation is gone. */
	CHECK_ERR(h_complete(e, id, 0, outs, 2), -ENOENT);
	/* Executor-only calls from an ordinary client. */
	CHECK_ERR(h_take(c, 1, 8, t2), -EPERM);
	{
		struct ptask_exec_ptask_info info;

		CHECK_ERR(h_info(c, p, NULL, 0, &info), -EPERM);
	}
	REQUIRE_OK(h_release(e, d4x));
	free(t);
	free(t2);
}

/* One datablock on two outputs; an input passed through unheld. */
static void test_complete_shared_outputs(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	u32 g = mkgraph(c, "shared"), p, in, o1, o2, ch, c1, c2, din, d, x;
	struct h_take *t = new_take();
	struct ptask_exec_output outs[2] = { { 1, 0 }, { 2, 0 } };

	REQUIRE_OK(h_ptask(c, g, 3, &p));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, 0, &in));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_OUTPUT, 0, &o1));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_OUTPUT, 0, &o2));
	REQUIRE_OK(h_chan(c, g, 0, in, 4, 0, &ch));
	REQUIRE_OK(h_chan(c, g, o1, 0, 4, 0, &c1));
	REQUIRE_OK(h_chan(c, g, o2, 0, 4, 0, &c2));
	REQUIRE_OK(h_run(c, g));
	REQUIRE_OK(h_db(c, 8, &din));
	REQUIRE_OK(h_push(c, ch, din));
	REQUIRE_OK(h_push(c, ch, din));
	REQUIRE_OK(h_release(c, din));
	/* The executor's datablock on both ports: one hold, two copies. */
	REQUIRE_OK(h_take(e, 1, 8, t));
	REQUIRE_OK(h_db(e, 8, &d));
	outs[0].datablock = d;
	outs[1].datablock = d;
	REQUIRE_OK(h_complete(e, t->inv[0].id, 0, outs, 2));
	CHECK_EQ(h_db_obj(d)->refs, 2);
	CHECK(!ptask_client_find_hold(e, h_db_obj(d)));
	/* The input passed through on both, not held by the executor. */
	REQUIRE_OK(h_take(e, 1, 8, t));
	CHECK_EQ(t->ports[0].datablock, din);
	outs[0].datablock = din;
	outs[1].datablock = din;
	REQUIRE_OK(h_complete(e, t->inv[0].id, 0, outs, 2));
	CHECK_EQ(h_db_obj(din)->refs, 2);
	REQUIRE_OK(h_pull(c, c1, &x));
	CHECK_EQ(x, d);
	REQUIRE_OK(h_pull(c, c1, &x));
	CHECK_EQ(x, din);
	REQUIRE_OK(h_pull(c, c2, &x));
	CHECK_EQ(x, d);
	free(t);
}

/* A pipe in -> p -> out in graph @g; returns p. */
static u32 mkpipe(struct ptask_client *c, u32 g, u32 *ch_in, u32 *ch_out)
{
	u32 p = 0, in, out;

	CHECK_OK(h_ptask(c, g, 2, &p));
	CHECK_OK(h_port(c, p, PTASK_PORT_INPUT, 0, &in));
	CHECK_OK(h_port(c, p, PTASK_PORT_OUTPUT, 0, &out));
	CHECK_OK(h_chan(c, g, 0, in, 4, 0, ch_in));
	CHECK_OK(h_chan(c, g, out, 0, 4, 0, ch_out));
	return p;
}

static void push_new(struct ptask_client *c, u32 ch, u32 n)
{
	u32 db;

	while (n--) {
		CHECK_OK(h_db(c, 8, &db));
		CHECK_OK(h_push(c, ch, db));
		CHECK_OK(h_release(c, db));
	}
}

/* status < 0 fails the graph: its callers get -EIO; others go on. */
static void test_status_fails_graph(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	u32 g = mkgraph(c, "fail"), g2 = mkgraph(c, "ok"), in, out, in2, out2,
	    d, db;
	struct h_take *t = new_take();
	struct ptask_exec_output o = { .index = 1 };
	unsigned long wakes;

	mkpipe(c, g, &in, &out);
	mkpipe(c, g2, &in2, &out2);
	REQUIRE_OK(h_run(c, g));
	REQUIRE_OK(h_run(c, g2));
	push_new(c, in, 3);
	push_new(c, in2, 1);
	REQUIRE_OK(h_take(e, 1, 8, t));
	CHECK_EQ(t->inv[0].graph, g);
	REQUIRE_OK(h_db(e, 8, &d));
	o.datablock = d;
	/* Out-of-range status is an argument error. */
	CHECK_ERR(h_complete(e, t->inv[0].id, 1, &o, 1), -EINVAL);
	CHECK_ERR(h_complete(e, t->inv[0].id, -4096, &o, 1), -EINVAL);
	wakes = os_user_wakes;
	/* Outputs are not checked, only released: index 0 is an input. */
	o.index = 0;
	CHECK_OK(h_complete(e, t->inv[0].id, -EIO, &o, 1));
	CHECK(os_user_wakes > wakes);
	CHECK(!h_db_obj(d));			/* e's hold was released */
	CHECK_EQ(h_graph_obj(g)->state, PTASK_GRAPH_FAILED);
	CHECK_ERR(h_pull(c, out, &db), -EIO);
	CHECK_ERR(h_push(c, in, 0), -EIO);
	CHECK_ERR(h_run(c, g), -EIO);
	CHECK_ERR(h_terminate(c, g), -EIO);
	CHECK_ERR(h_tmpl(c, g, PTASK_TEMPLATE_OPAQUE, 1, 1, 1, 1, NULL), -EIO);
	CHECK(ptask_core_client_poll(c) & PTASK_POLL_ERR);
	CHECK_EQ(h_chan_obj(in)->count, 0);	/* queued inputs dropped */
	/* The other graph still works. */
	CHECK_EQ(h_passthrough(e, 8), 1);
	CHECK_OK(h_pull(c, out2, &db));
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 0);
	/* The failed graph can be closed; its name is free again. */
	CHECK_OK(h_close(c, g));
	CHECK_OK(h_graph(c, "fail", PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL,
			 0600, NULL));
	free(t);
}

/* Terminate with one invocation queued and one executing. */
static void test_terminate_inflight(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	u32 g = mkgraph(c, "tq"), in1, out1, in2, out2, p1, p2, d, din;
	struct h_take *t = new_take();
	struct ptask_exec_output o = { .index = 1 };
	u64 id;

	p1 = mkpipe(c, g, &in1, &out1);
	p2 = mkpipe(c, g, &in2, &out2);
	REQUIRE_OK(h_run(c, g));
	REQUIRE_OK(h_db(c, 8, &din));
	REQUIRE_OK(h_push(c, in1, din));
	REQUIRE_OK(h_push(c, in1, din));
	push_new(c, in2, 1);
	REQUIRE_OK(h_take(e, 1, 8, t));		/* p1 executing */
	id = t->inv[0].id;
	CHECK_EQ(t->inv[0].ptask, p1);
	CHECK(h_ready_has(p2));
	CHECK_EQ(h_db_obj(din)->refs, 3);	/* hold, invocation, port */
	REQUIRE_OK(h_terminate(c, g));
	CHECK_EQ(h_ready_len(), 0);
	CHECK_EQ(h_ptask_obj(p1)->state, PTASK_STATE_WAITING);
	CHECK_EQ(h_ptask_obj(p2)->state, PTASK_STATE_WAITING);
	CHECK(!h_ptask_obj(p1)->running);
	CHECK_EQ(h_db_obj(din)->refs, 1);	/* inputs released at once */
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 1);	/* orphan */
	CHECK_ERR(h_take(e, 8, 8, t), -EAGAIN);
	/* The executor finishes into nothing: -ECANCELED, outputs freed. */
	REQUIRE_OK(h_db(e, 8, &d));
	o.datablock = d;
	CHECK_ERR(h_complete(e, id, 0, &o, 1), -ECANCELED);
	CHECK(!h_db_obj(d));
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 0);
	CHECK_ERR(h_complete(e, id, 0, &o, 1), -ENOENT);
	/* The orphan's inputs are no longer mappable by the executor. */
	CHECK_ERR(h_read_tag(e, din, &id), -ENOENT);
	free(t);
}

/* The last close frees a graph with an invocation in flight. */
static void test_close_inflight(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	u32 g = mkgraph(c, "cq"), in, out, d;
	struct h_take *t = new_take();
	struct ptask_exec_output o = { .index = 1 };

	mkpipe(c, g, &in, &out);
	REQUIRE_OK(h_run(c, g));
	push_new(c, in, 2);
	REQUIRE_OK(h_take(e, 1, 8, t));
	REQUIRE_OK(h_close(c, g));
	CHECK_EQ(h_ns.counts[PTASK_COUNT_GRAPHS], 0);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_DATABLOCKS], 0);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 1);
	REQUIRE_OK(h_db(e, 8, &d));
	o.datablock = d;
	CHECK_ERR(h_complete(e, t->inv[0].id, 0, &o, 1), -ECANCELED);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_DATABLOCKS], 0);
	free(t);
}

static void test_unregister_midway(void)
{
	struct ptask_client *c = h_client(), *e = h_executor(),
			    *e2 = h_executor();
	u32 g = mkgraph(c, "un"), g2 = mkgraph(c, "un2"), in, out, in2, out2,
	    d, db;
	struct h_take *t = new_take();
	unsigned long wakes;

	mkpipe(c, g, &in, &out);
	mkpipe(c, g2, &in2, &out2);
	REQUIRE_OK(h_run(c, g));
	REQUIRE_OK(h_run(c, g2));
	push_new(c, in, 2);
	REQUIRE_OK(h_take(e, 8, 8, t));
	CHECK_EQ(t->n_inv, 1);
	REQUIRE_OK(h_db(e, 8, &d));		/* e's own hold survives */
	push_new(c, in2, 1);			/* queued, not taken */
	CHECK_EQ(h_ns.executors, 2);
	wakes = os_user_wakes;
	REQUIRE_OK(ptask_core_exec_unregister(e));
	CHECK(os_user_wakes > wakes);
	CHECK_EQ(h_ns.executors, 1);
	CHECK(!e->executor);
	CHECK_EQ(h_graph_obj(g)->state, PTASK_GRAPH_FAILED);
	CHECK_EQ(h_graph_obj(g2)->state, PTASK_GRAPH_RUNNING);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 0);
	CHECK_ERR(h_pull(c, out, &db), -EIO);
	CHECK_ERR(h_take(e, 8, 8, t), -EPERM);
	CHECK_ERR(h_complete(e, t->inv[0].id, 0, NULL, 0), -EPERM);
	CHECK_ERR(ptask_core_exec_unregister(e), -ENOENT);
	CHECK(h_db_obj(d) != NULL);
	/* The other executor takes the other graph's work. */
	CHECK_EQ(h_passthrough(e2, 8), 1);
	/* Re-registering works, and sees the queue. */
	REQUIRE_OK(ptask_core_exec_register(e, 2));
	CHECK_ERR(ptask_core_exec_register(e, 2), -EALREADY);
	CHECK_EQ(h_ns.executors, 2);
	push_new(c, in2, 1);
	CHECK_EQ(h_passthrough(e, 8), 1);
	free(t);
}

static void test_executor_destroyed_midway(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	u32 g = mkgraph(c, "dead"), in, out, db;
	struct h_take *t = new_take();

	mkpipe(c, g, &in, &out);
	REQUIRE_OK(h_run(c, g));
	push_new(c, in, 3);
	REQUIRE_OK(h_take(e, 8, 8, t));
	REQUIRE_OK(h_db(e, 8, NULL));
	ptask_core_client_destroy(e);
	CHECK_EQ(h_ns.executors, 0);
	CHECK_EQ(h_graph_obj(g)->state, PTASK_GRAPH_FAILED);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 0);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_DATABLOCKS], 0);
	CHECK_ERR(h_pull(c, out, &db), -EIO);
	/* Work queued with no executor waits for one. */
	{
		u32 g2 = mkgraph(c, "later"), in2, out2;

		mkpipe(c, g2, &in2, &out2);
		REQUIRE_OK(h_run(c, g2));
		push_new(c, in2, 1);
		CHECK_EQ(h_ready_len(), 1);
		e = h_executor();
		CHECK_EQ(ptask_core_client_poll(e), PTASK_POLL_IN);
		CHECK_EQ(h_passthrough(e, 8), 1);
		CHECK_OK(h_pull(c, out2, &db));
	}
	free(t);
}

/*
 * An executor goes while a datablock it completed sits inside a graph,
 * waiting for the next GPU ptask: its only current copy may have been in
 * the dead executor's device memory, so that graph fails (-EIO) instead
 * of the next executor reading stale host pages (found by chaos in the
 * test guest: pulls of zeros).  A graph whose result the executor had
 * already put in a graph output (written back for the pull), and one
 * holding only what its client pushed, go on.
 */
static void test_executor_gone_loses_device_copies(void)
{
	struct ptask_client *c = h_client(), *e = h_executor(),
			    *e2 = h_executor();
	u32 g = mkgraph(c, "mid"), g2 = mkgraph(c, "done"),
	    g3 = mkgraph(c, "pushed"), in, out, in2, out2, in3, out3, db;
	u64 tag;

	build_chain_of(c, g, 2, true, &in, &out);
	mkpipe(c, g2, &in2, &out2);
	mkpipe(c, g3, &in3, &out3);
	REQUIRE_OK(h_run(c, g));
	REQUIRE_OK(h_run(c, g2));
	REQUIRE_OK(h_run(c, g3));
	REQUIRE_OK(h_db(c, 8, &db));
	REQUIRE_OK(h_write_tag(c, db, 7));
	REQUIRE_OK(h_push(c, in, db));
	REQUIRE_OK(h_release(c, db));
	push_new(c, in2, 1);
	/* e runs A of the chain and the pipe: A's output waits for B */
	CHECK_EQ(h_passthrough(e, 8), 2);
	push_new(c, in3, 1);
	REQUIRE_OK(ptask_core_exec_unregister(e));
	CHECK_EQ(h_graph_obj(g)->state, PTASK_GRAPH_FAILED);
	CHECK_ERR(h_pull(c, out, &db), -EIO);
	CHECK_EQ(h_graph_obj(g2)->state, PTASK_GRAPH_RUNNING);
	CHECK_OK(h_pull(c, out2, &db));
	CHECK_OK(h_release(c, db));
	CHECK_EQ(h_graph_obj(g3)->state, PTASK_GRAPH_RUNNING);
	CHECK_EQ(h_passthrough(e2, 8), 1);
	CHECK_OK(h_pull(c, out3, &db));
	CHECK_OK(h_release(c, db));
	/* a datablock e2 completed is e2's: e's going did not touch it */
	push_new(c, in2, 1);
	CHECK_EQ(h_passthrough(e2, 8), 1);
	ptask_core_client_destroy(e);
	CHECK_EQ(h_graph_obj(g2)->state, PTASK_GRAPH_RUNNING);
	/* e2 goes too, with the pipe's result written back: still there */
	ptask_core_client_destroy(e2);
	CHECK_EQ(h_graph_obj(g2)->state, PTASK_GRAPH_RUNNING);
	CHECK_OK(h_pull(c, out2, &db));
	CHECK_OK(h_read_tag(c, db, &tag));
	CHECK_OK(h_release(c, db));
}

/*
 * Two executors: what one completed for a GPU ptask (current, maybe, in
 * its device memory alone) is taken by that one, never the other, which
 * would read stale host pages; what a host reader or a pull gets was
 * written back and goes to either.
 */
static void test_output_taken_where_it_is(void)
{
	struct ptask_client *c = h_client(), *e1 = h_executor(),
			    *e2 = h_executor();
	struct h_take *t = new_take();
	u32 g = mkgraph(c, "where"), g2 = mkgraph(c, "cpu"), in, out, in2,
	    out2, db;
	u32 i, n;

	build_chain_of(c, g, 2, true, &in, &out);
	build_chain(c, g2, 2, &in2, &out2);	/* CPU ptasks: host readers */
	REQUIRE_OK(h_run(c, g));
	REQUIRE_OK(h_run(c, g2));
	push_new(c, in, 1);
	CHECK_EQ(h_passthrough(e1, 1), 1);	/* A, by e1 */
	/* B reads what e1 made: e2 finds nothing to take */
	CHECK_ERR(h_take(e2, 8, 8, t), -EAGAIN);
	CHECK_EQ(h_passthrough(e1, 1), 1);	/* B */
	CHECK_ERR(h_take(e2, 8, 8, t), -EAGAIN);
	CHECK_EQ(h_passthrough(e1, 1), 1);	/* C, to the graph output */
	CHECK_OK(h_pull(c, out, &db));
	CHECK_OK(h_release(c, db));
	/* host readers: whoever is free takes the next stage */
	push_new(c, in2, 1);
	for (i = 0, n = 0; i < 3; i++)
		n += h_passthrough(i % 2 ? e2 : e1, 1) == 1;
	CHECK_EQ(n, 3);
	CHECK_OK(h_pull(c, out2, &db));
	CHECK_OK(h_release(c, db));
	free(t);
}

/* A GPU pipe in a 0666 graph of @who's (its ptask @who's): in, out. */
static u32 gpu_pipe_of(struct ptask_client *c, const struct ptask_caller *who,
		       const char *name, u32 *ch_in, u32 *ch_out, u32 *pt)
{
	static const char code[] = "// a pipe\n";
	u32 g = 0, in, out;

	CHECK_OK(h_graph_who(c, who, name, PTASK_GRAPH_CREATE, 0666, &g));
	CHECK_OK(h_gpu_ptask(c, who, g, 2, code, sizeof(code), "k", pt));
	CHECK_OK(h_port(c, *pt, PTASK_PORT_INPUT, 0, &in));
	CHECK_OK(h_port(c, *pt, PTASK_PORT_OUTPUT, 0, &out));
	CHECK_OK(h_chan(c, g, 0, in, 2, 0, ch_in));
	CHECK_OK(h_chan(c, g, out, 0, 2, 0, ch_out));
	return g;
}

/*
 * Executors per uid (ptask_core_exec_set_uid): one uid's executor takes
 * that uid's invocations alone, the others never do; when it goes, they
 * do again.  An edge from one uid's ptask to another's is written back
 * (a host reader: PTASK_INVP_TO_CLIENT), never taken ahead.
 */
static void test_executors_per_uid(void)
{
	static const char code[] = "// two uids\n";
	struct ptask_caller u1001 = h_who(1001, 1001);
	struct ptask_client *c = h_client(), *any = h_executor(),
			    *mine = h_executor();
	struct h_take *t = new_take();
	u32 g1, g2, g3, in1, out1, in2, out2, in3, out3, p1, p2, p3, db;
	u32 g4, p4a, p4b, a_in, a_out, b_in, b_out, in4, i;

	CHECK_ERR(ptask_core_exec_set_uid(c, 1000), -ENOENT);
	REQUIRE_OK(ptask_core_exec_set_uid(mine, 1000));
	CHECK_ERR(ptask_core_exec_set_uid(mine, 1000), -EALREADY);
	CHECK_EQ(h_ns.uid_executors, 1);
	g1 = gpu_pipe_of(c, &h_user, "u1000", &in1, &out1, &p1);
	g2 = gpu_pipe_of(c, &u1001, "u1001", &in2, &out2, &p2);
	g3 = gpu_pipe_of(c, &h_user, "u1000b", &in3, &out3, &p3);
	CHECK_EQ(h_ptask_obj(p1)->owner_uid, 1000);
	CHECK_EQ(h_ptask_obj(p2)->owner_uid, 1001);
	REQUIRE_OK(h_run(c, g1));
	REQUIRE_OK(h_run(c, g2));
	REQUIRE_OK(h_run(c, g3));
	push_new(c, in1, 1);
	push_new(c, in2, 1);
	/* 1000's executor: 1000's alone */
	REQUIRE_OK(h_take(mine, 8, 8, t));
	CHECK_EQ(t->n_inv, 1);
	CHECK_EQ(t->inv[0].ptask, p1);
	/* the other: 1001's, never 1000's */
	REQUIRE_OK(h_take(any, 8, 8, t));
	CHECK_EQ(t->n_inv, 1);
	CHECK_EQ(t->inv[0].ptask, p2);
	CHECK_ERR(ptask_core_exec_set_uid(any, 5), -EBUSY);
	push_new(c, in3, 1);
	CHECK_ERR(h_take(any, 8, 8, t), -EAGAIN);
	/* 1000's executor goes: what it took fails, the queued is any's */
	REQUIRE_OK(ptask_core_exec_unregister(mine));
	CHECK_EQ(h_ns.uid_executors, 0);
	CHECK_EQ(h_graph_obj(g1)->state, PTASK_GRAPH_FAILED);
	CHECK_ERR(h_pull(c, out1, &db), -EIO);
	REQUIRE_OK(h_take(any, 8, 8, t));
	CHECK_EQ(t->inv[0].ptask, p3);
	/*
	 * 1000's ptask a feeds 1001's GPU ptask b: with an executor per uid,
	 * a's output is for a host reader (another process reads it).
	 */
	REQUIRE_OK(ptask_core_exec_register(mine, 2));
	REQUIRE_OK(ptask_core_exec_set_uid(mine, 1000));
	REQUIRE_OK(h_graph(c, "cross", PTASK_GRAPH_CREATE, 0666, &g4));
	REQUIRE_OK(h_gpu_ptask(c, NULL, g4, 2, code, sizeof(code), "k", &p4a));
	REQUIRE_OK(h_gpu_ptask(c, &u1001, g4, 2, code, sizeof(code), "k",
			       &p4b));
	REQUIRE_OK(h_port(c, p4a, PTASK_PORT_INPUT, 0, &a_in));
	REQUIRE_OK(h_port(c, p4a, PTASK_PORT_OUTPUT, 0, &a_out));
	REQUIRE_OK(h_port(c, p4b, PTASK_PORT_INPUT, 0, &b_in));
	REQUIRE_OK(h_port(c, p4b, PTASK_PORT_OUTPUT, 0, &b_out));
	REQUIRE_OK(h_chan(c, g4, 0, a_in, 2, 0, &in4));
	REQUIRE_OK(h_chan(c, g4, a_out, b_in, 2, 0, NULL));
	REQUIRE_OK(h_chan(c, g4, b_out, 0, 2, 0, NULL));
	REQUIRE_OK(h_run(c, g4));
	push_new(c, in4, 1);
	REQUIRE_OK(h_take(mine, 8, 8, t));
	CHECK_EQ(t->n_inv, 1);
	CHECK_EQ(t->inv[0].ptask, p4a);
	for (i = 0; i < t->n_ports; i++)
		if (t->ports[i].kind == PTASK_PORT_OUTPUT)
			CHECK(t->ports[i].flags & PTASK_INVP_TO_CLIENT);
	free(t);
}

/*
 * Executors per process (ptask_core_exec_set_process): a process's own
 * executor takes that process's invocations alone; its uid's executor
 * takes the uid's other processes', never that one's; an executor of no
 * uid takes neither.  An edge between two processes' ptasks is written
 * back (another executor reads it).
 */
static void test_executors_per_process(void)
{
	static const char code[] = "// two processes\n";
	struct ptask_caller other = h_user;
	struct ptask_client *c = h_client(), *any = h_executor(),
			    *uid = h_executor(), *proc = h_executor();
	struct h_take *t = new_take();
	u32 g1, g2, g3, in1, out1, in2, out2, p1, p2, pa, pb, a_in, a_out;
	u32 b_in, b_out, in3, i;

	other.pid = h_user.pid + 1;
	REQUIRE_OK(ptask_core_exec_set_process(proc, 1000, h_user.pid));
	CHECK_ERR(ptask_core_exec_set_process(proc, 1000, h_user.pid),
		  -EALREADY);
	REQUIRE_OK(ptask_core_exec_set_uid(uid, 1000));
	CHECK_EQ(h_ns.uid_executors, 2);
	CHECK_EQ(h_ns.pid_executors, 1);
	g1 = gpu_pipe_of(c, &h_user, "mine", &in1, &out1, &p1);
	g2 = gpu_pipe_of(c, &other, "other", &in2, &out2, &p2);
	CHECK_EQ(h_ptask_obj(p2)->owner_pid, other.pid);
	REQUIRE_OK(h_run(c, g1));
	REQUIRE_OK(h_run(c, g2));
	push_new(c, in1, 1);
	push_new(c, in2, 1);
	CHECK_ERR(h_take(any, 8, 8, t), -EAGAIN);
	REQUIRE_OK(h_take(uid, 8, 8, t));
	CHECK_EQ(t->n_inv, 1);
	CHECK_EQ(t->inv[0].ptask, p2);
	REQUIRE_OK(h_take(proc, 8, 8, t));
	CHECK_EQ(t->n_inv, 1);
	CHECK_EQ(t->inv[0].ptask, p1);
	/* an edge from this process's ptask to the other's */
	REQUIRE_OK(h_graph(c, "across", PTASK_GRAPH_CREATE, 0666, &g3));
	REQUIRE_OK(h_gpu_ptask(c, NULL, g3, 2, code, sizeof(code), "k", &pa));
	REQUIRE_OK(h_gpu_ptask(c, &other, g3, 2, code, sizeof(code), "k",
			       &pb));
	REQUIRE_OK(h_port(c, pa, PTASK_PORT_INPUT, 0, &a_in));
	REQUIRE_OK(h_port(c, pa, PTASK_PORT_OUTPUT, 0, &a_out));
	REQUIRE_OK(h_port(c, pb, PTASK_PORT_INPUT, 0, &b_in));
	REQUIRE_OK(h_port(c, pb, PTASK_PORT_OUTPUT, 0, &b_out));
	REQUIRE_OK(h_chan(c, g3, 0, a_in, 2, 0, &in3));
	REQUIRE_OK(h_chan(c, g3, a_out, b_in, 2, 0, NULL));
	REQUIRE_OK(h_chan(c, g3, b_out, 0, 2, 0, NULL));
	REQUIRE_OK(h_run(c, g3));
	push_new(c, in3, 1);
	REQUIRE_OK(h_take(proc, 8, 8, t));
	CHECK_EQ(t->inv[0].ptask, pa);
	for (i = 0; i < t->n_ports; i++)
		if (t->ports[i].kind == PTASK_PORT_OUTPUT)
			CHECK(t->ports[i].flags & PTASK_INVP_TO_CLIENT);
	/* the process's executor goes: its queued work is its uid's again */
	REQUIRE_OK(ptask_core_exec_unregister(proc));
	CHECK_EQ(h_ns.pid_executors, 0);
	CHECK_EQ(h_ns.uid_executors, 1);
	free(t);
}

/* One PTASK_PTASK_SELF CPU ptask between a graph input and a graph output. */
static void mkself(struct ptask_client *c, u32 g, u32 *in, u32 *out)
{
	struct ptask_caller who = h_who(0, 0);
	struct ptask_ptask_open po = {
		.flags = PTASK_PTASK_SELF, .graph = g, .kind = PTASK_KIND_CPU,
		.nports = 2,
	};
	struct ptask_call_io io;
	u32 pin, pout;

	memset(&io, 0, sizeof(io));
	if (!CHECK_OK(h_call(c, &who, PTASK_IOC_PTASK_OPEN, &po, &io)))
		return;
	CHECK_OK(h_port(c, po.handle, PTASK_PORT_INPUT, 0, &pin));
	CHECK_OK(h_port(c, po.handle, PTASK_PORT_OUTPUT, 0, &pout));
	CHECK_OK(h_chan(c, g, 0, pin, 2, 0, in));
	CHECK_OK(h_chan(c, g, pout, 0, 2, 0, out));
}

static int take_self(struct ptask_client *c, struct h_take *t)
{
	struct ptask_caller who = h_who(0, 0);
	struct ptask_exec_take a = {
		.flags = PTASK_TAKE_SELF | PTASK_NONBLOCK,
		.max_invocations = 8, .max_ports = 16,
	};
	struct ptask_call_io io;
	int err;

	memset(&io, 0, sizeof(io));
	io.invocations = t->inv;
	io.ports = t->ports;
	err = h_call(c, &who, PTASK_IOC_EXEC_TAKE, &a, &io);

	t->n_inv = err ? 0 : a.n_invocations;
	t->n_ports = err ? 0 : a.n_ports;
	return err;
}

static void test_self_ptask(void)
{
	struct ptask_client *c = h_client(), *other = h_client();
	struct ptask_client *e = h_executor();
	u32 g = mkgraph(c, "self"), in, out, db, g2;
	struct h_take *t = new_take();
	struct ptask_exec_output o;

	mkself(c, g, &in, &out);
	REQUIRE_OK(h_run(c, g));
	REQUIRE_OK(h_graph(other, "self", 0, 0, &g2));
	push_new(c, in, 1);
	/* Queued for its creator only: not the executors, not another fd. */
	CHECK_EQ(h_ready_len(), 0);
	CHECK_ERR(h_take(e, 8, 8, t), -EAGAIN);
	CHECK_ERR(take_self(other, t), -EAGAIN);
	CHECK_EQ(ptask_core_client_poll(c) & PTASK_POLL_IN, PTASK_POLL_IN);
	REQUIRE_OK(take_self(c, t));
	CHECK_EQ(t->n_inv, 1);
	CHECK_EQ(t->inv[0].kind, PTASK_KIND_CPU);
	/* Pass the input through: the creator may emit what it took. */
	o.index = 1;
	o.datablock = t->ports[0].datablock;
	CHECK_ERR(h_complete(other, t->inv[0].id, 0, &o, 1), -EPERM);
	CHECK_OK(h_complete(c, t->inv[0].id, 0, &o, 1));
	CHECK_OK(h_pull(other, out, &db));
	CHECK_OK(h_release(other, db));
	/* The creator goes away: nobody can run the ptask, the graph fails. */
	push_new(other, in, 1);
	ptask_core_client_destroy(c);
	CHECK_EQ(h_graph_obj(g2)->state, PTASK_GRAPH_FAILED);
	CHECK_ERR(h_pull(other, out, &db), -EIO);
	free(t);
}

static void test_ptask_info(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	u32 g = mkgraph(c, "info"), gp, cp;
	u8 code[300], back[300];
	struct ptask_exec_ptask_info info;
	struct ptask_geometry geo = { .grid = { 3, 1, 1 },
				      .block = { 64, 2, 1 },
				      .shared_bytes = 99 };
	u32 i;

	for (i = 0; i < sizeof(code); i++)
		code[i] = (u8)(i * 7 + 1);
	REQUIRE_OK(h_gpu_ptask(c, NULL, g, 5, code, sizeof(code), "kern",
			       &gp));
	REQUIRE_OK(h_ptask(c, g, 2, &cp));
	geo.ptask = gp;
	REQUIRE_OK(h_call(c, NULL, PTASK_IOC_PTASK_SET_GEOMETRY, &geo, NULL));
	/* Size first. */
	REQUIRE_OK(h_info(e, gp, NULL, 0, &info));
	CHECK_EQ(info.code_len, sizeof(code));
	CHECK_EQ(info.kind, PTASK_KIND_GPU);
	CHECK_EQ(info.nports, 5);
	CHECK(!strcmp(info.entry, "kern"));
	CHECK_EQ(info.grid[0], 3);
	CHECK_EQ(info.block[0], 64);
	CHECK_EQ(info.block[1], 2);
	CHECK_EQ(info.shared_bytes, 99);
	/* Too small a buffer: -ENOSPC, nothing written. */
	memset(back, 0xee, sizeof(back));
	CHECK_ERR(h_info(e, gp, back, sizeof(code) - 1, &info), -ENOSPC);
	CHECK_EQ(back[0], 0xee);
	/* Exactly the size, then larger. */
	REQUIRE_OK(h_info(e, gp, back, sizeof(code), &info));
	CHECK(!memcmp(back, code, sizeof(code)));
	CHECK_EQ(info.code_len, sizeof(code));
	REQUIRE_OK(h_info(e, gp, back, sizeof(back), &info));
	/* A CPU ptask has no code. */
	REQUIRE_OK(h_info(e, cp, NULL, 0, &info));
	CHECK_EQ(info.kind, PTASK_KIND_CPU);
	CHECK_EQ(info.code_len, 0);
	CHECK_EQ(info.nports, 2);
	CHECK_EQ(info.entry[0], 0);
	REQUIRE_OK(h_info(e, cp, back, sizeof(back), &info));
	/* Errors. */
	CHECK_ERR(h_info(e, g, NULL, 0, &info), -ENOENT);
	CHECK_ERR(h_info(e, 0, NULL, 0, &info), -ENOENT);
	CHECK_ERR(h_info(c, gp, NULL, 0, &info), -EPERM);
	{
		struct ptask_exec_ptask_info bad = { .ptask = gp,
						     .reserved = 1 };

		CHECK_ERR(h_call(e, NULL, PTASK_IOC_EXEC_PTASK_INFO, &bad,
				 NULL), -EINVAL);
	}
	/* Still readable once the graph is terminated. */
	REQUIRE_OK(h_terminate(c, g));
	CHECK_OK(h_info(e, gp, back, sizeof(back), &info));
}

static const struct h_test tests[] = {
	H_TEST(test_chain_executor_loop),
	H_TEST(test_chain_backpressure),
	H_TEST(test_batches_max_ports),
	H_TEST(test_take_records),
	H_TEST(test_complete_errors),
	H_TEST(test_complete_shared_outputs),
	H_TEST(test_status_fails_graph),
	H_TEST(test_terminate_inflight),
	H_TEST(test_close_inflight),
	H_TEST(test_unregister_midway),
	H_TEST(test_executor_destroyed_midway),
	H_TEST(test_executor_gone_loses_device_copies),
	H_TEST(test_output_taken_where_it_is),
	H_TEST(test_executors_per_uid),
	H_TEST(test_executors_per_process),
	H_TEST(test_ptask_info),
	H_TEST(test_self_ptask),
};

int main(int argc, char **argv)
{
	return h_main(tests, ARRAY_SIZE(tests), argc, argv);
}
