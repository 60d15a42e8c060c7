// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * uid_core_test.c - datablock memory charged per uid, and the per-uid
 * limit (core/uid_usage.c): who pays, when the charge goes back, what
 * is refused with -EDQUOT and what never is; and which datablocks get
 * memory of their own (PTASK_BUF_OWN_MEMORY: other uids may see them).
 */
#include <errno.h>
#include "tests/unit/harness.h"

#define PAGE	PTASK_UID_CHARGE_UNIT

static struct ptask_uid_usage_info usage(u32 uid)
{
	struct ptask_uid_usage_info u;

	ptask_core_uid_usage(&h_ns, uid, &u);
	return u;
}

/* A client whose datablocks uid @uid pays for. */
static struct ptask_client *client_of(u32 uid)
{
	struct ptask_client *c = h_client();

	c->uid = uid;
	return c;
}

/* Charges are page-rounded, per uid, and go back when the datablock dies. */
static void test_charge_follows_the_datablock(void)
{
	struct ptask_client *a = client_of(1000), *b = client_of(1001);
	u32 d1, d2, d3;

	REQUIRE_OK(h_db(a, 1, &d1));
	REQUIRE_OK(h_db(a, PAGE + 1, &d2));
	REQUIRE_OK(h_db(b, 3 * PAGE, &d3));
	CHECK_EQ(usage(1000).bytes, 3 * PAGE);
	CHECK_EQ(usage(1000).datablocks, 2);
	CHECK_EQ(usage(1001).bytes, 3 * PAGE);
	CHECK_EQ(usage(1002).bytes, 0);
	REQUIRE_OK(h_release(a, d2));
	CHECK_EQ(usage(1000).bytes, PAGE);
	REQUIRE_OK(h_release(a, d1));
	REQUIRE_OK(h_release(b, d3));
	/* Nothing charged: the records are gone (ns destroy checks too). */
	CHECK(ptask_list_empty(&h_ns.uid_usage));
}

/* At the limit: -EDQUOT, nothing made, nothing leaked; room comes back. */
static void test_limit_refuses_with_edquot(void)
{
	struct ptask_client *a = client_of(1000), *b = client_of(1001);
	u64 datablocks = h_ns.counts[PTASK_COUNT_DATABLOCKS];
	long buffers = os_user_buffers;
	u32 d[3], other, spare;
	int i;

	ptask_core_uid_limit_set(&h_ns, 3 * PAGE);
	for (i = 0; i < 3; i++)
		REQUIRE_OK(h_db(a, PAGE, &d[i]));
	CHECK_ERR(h_db(a, 1, &spare), -EDQUOT);
	CHECK_ERR(h_db(a, 4 * PAGE, &spare), -EDQUOT);
	CHECK_ERR(h_db(a, PTASK_DATABLOCK_MAX_BYTES, &spare), -EDQUOT);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_DATABLOCKS], datablocks + 3);
	CHECK_EQ(os_user_buffers, buffers + 3);
	CHECK_EQ(usage(1000).refusals, 3);
	CHECK_EQ(h_ns.uid_refusals, 3);
	CHECK_EQ(usage(1000).limit_bytes, 3 * PAGE);
	/* Another uid has its own allowance. */
	REQUIRE_OK(h_db(b, 3 * PAGE, &other));
	REQUIRE_OK(h_release(a, d[1]));
	REQUIRE_OK(h_db(a, PAGE, &d[1]));
	/* A lower limit keeps what is held, refuses what comes. */
	ptask_core_uid_limit_set(&h_ns, PAGE);
	CHECK_EQ(usage(1000).bytes, 3 * PAGE);
	CHECK_ERR(h_db(a, 1, &spare), -EDQUOT);
	ptask_core_uid_limit_set(&h_ns, 0);
	REQUIRE_OK(h_db(a, 1, &spare));
	REQUIRE_OK(h_release(a, spare));
	for (i = 0; i < 3; i++)
		REQUIRE_OK(h_release(a, d[i]));
	REQUIRE_OK(h_release(b, other));
}

/* Root is charged (its usage shows) but never refused. */
static void test_root_is_never_refused(void)
{
	struct ptask_client *r = client_of(0);
	u32 d[4];
	int i;

	ptask_core_uid_limit_set(&h_ns, PAGE);
	for (i = 0; i < 4; i++)
		REQUIRE_OK(h_db(r, PAGE, &d[i]));
	CHECK_EQ(usage(0).bytes, 4 * PAGE);
	CHECK_EQ(usage(0).limit_bytes, 0);
	for (i = 0; i < 4; i++)
		REQUIRE_OK(h_release(r, d[i]));
}

/* A datablock a channel still holds stays charged to its maker. */
static void test_queued_datablock_stays_charged(void)
{
	struct ptask_client *a = client_of(1000);
	u32 g, p, in, ch, db;

	REQUIRE_OK(h_graph(a, "q", PTASK_GRAPH_CREATE, 0600, &g));
	REQUIRE_OK(h_ptask(a, g, 1, &p));
	REQUIRE_OK(h_port(a, p, PTASK_PORT_INPUT, 0, &in));
	REQUIRE_OK(h_chan(a, g, 0, in, 4, 0, &ch));
	REQUIRE_OK(h_run(a, g));
	ptask_core_uid_limit_set(&h_ns, 2 * PAGE);
	REQUIRE_OK(h_db(a, 2 * PAGE, &db));
	REQUIRE_OK(h_push(a, ch, db));
	REQUIRE_OK(h_release(a, db));
	CHECK_EQ(usage(1000).bytes, 2 * PAGE);
	CHECK_ERR(h_db(a, 1, &db), -EDQUOT);
	/* The graph's end drops the queued datablock, and with it the charge. */
	REQUIRE_OK(h_terminate(a, g));
	REQUIRE_OK(h_close(a, g));
	CHECK_EQ(usage(1000).bytes, 0);
}

/*
 * An executor's output for a taken invocation (CREATE_OUTPUT) is the
 * ptask owner's: charged to it and refused at its limit; without the
 * flag it is the executor's own.  Only a client that took the
 * invocation may name it.
 */
static void test_output_charged_to_the_owner(void)
{
	struct ptask_client *c = client_of(1000), *e = h_executor(),
			    *other = client_of(1001);
	struct ptask_datablock_create out = {
		.bytes = PAGE, .flags = PTASK_DATABLOCK_CREATE_OUTPUT,
	};
	struct ptask_exec_output outs[1];
	static struct h_take take;	/* big: not on the stack */
	struct h_take *t = &take;
	u32 g, p, in, o, ch_in, ch_out, db, mine;
	u64 id;

	REQUIRE_OK(h_graph(c, "o", PTASK_GRAPH_CREATE, 0600, &g));
	REQUIRE_OK(h_ptask(c, g, 2, &p));
	CHECK_EQ(h_ptask_obj(p)->owner_uid, 1000);
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, 0, &in));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_OUTPUT, 0, &o));
	REQUIRE_OK(h_chan(c, g, 0, in, 2, 0, &ch_in));
	REQUIRE_OK(h_chan(c, g, o, 0, 2, 0, &ch_out));
	REQUIRE_OK(h_run(c, g));
	REQUIRE_OK(h_db(c, 1, &db));
	REQUIRE_OK(h_push(c, ch_in, db));
	REQUIRE_OK(h_release(c, db));
	REQUIRE_OK(h_take(e, 1, 4, t));
	REQUIRE(t->n_inv == 1);
	id = t->inv[0].id;
	ptask_core_uid_limit_set(&h_ns, 2 * PAGE);

	/* Who may name it: not a client that took nothing, nor another id. */
	out.invocation = id;
	CHECK_ERR(h_call(other, NULL, PTASK_IOC_DATABLOCK_CREATE, &out, NULL),
		  -EPERM);
	out.invocation = id + 100;
	CHECK_ERR(h_call(e, NULL, PTASK_IOC_DATABLOCK_CREATE, &out, NULL),
		  -ENOENT);
	/* Over the owner's limit (1000 holds a page already): -EDQUOT. */
	out.invocation = id;
	out.bytes = 2 * PAGE;
	CHECK_ERR(h_call(e, NULL, PTASK_IOC_DATABLOCK_CREATE, &out, NULL),
		  -EDQUOT);
	CHECK_EQ(usage(0).bytes, 0);
	/* The executor's own datablock is root's, whatever the limit. */
	REQUIRE_OK(h_db(e, 4 * PAGE, &mine));
	CHECK_EQ(usage(0).bytes, 4 * PAGE);
	REQUIRE_OK(h_release(e, mine));
	out.bytes = PAGE;
	REQUIRE_OK(h_call(e, NULL, PTASK_IOC_DATABLOCK_CREATE, &out, NULL));
	CHECK_EQ(usage(1000).bytes, 2 * PAGE);
	CHECK_EQ(usage(0).bytes, 0);
	outs[0] = (struct ptask_exec_output){ 1, out.handle };
	/* Completing passes the executor's reference on. */
	REQUIRE_OK(h_complete(e, id, 0, outs, 1));
	/* The owner pulls it: still its charge until released. */
	REQUIRE_OK(h_pull(c, ch_out, &db));
	CHECK_EQ(usage(1000).bytes, PAGE);
	REQUIRE_OK(h_release(c, db));
	CHECK_EQ(usage(1000).bytes, 0);
}

/*
 * What flows in a graph other uids may open gets memory of its own
 * (PTASK_BUF_OWN_MEMORY): a datablock made with its template, an output
 * made for its ptask.  In a 0600 graph, and without a template, the
 * uid's memory.
 */
static void test_shared_graph_gets_own_memory(void)
{
	struct ptask_client *c = client_of(1000), *e = h_executor();
	struct ptask_datablock_create out = {
		.bytes = PAGE, .flags = PTASK_DATABLOCK_CREATE_OUTPUT,
	};
	static struct h_take take;
	u32 shared, private, ts, tp, p, in, o, ch_in, db;
	u64 bytes;

	REQUIRE_OK(h_graph(c, "shared", PTASK_GRAPH_CREATE, 0660, &shared));
	REQUIRE_OK(h_graph(c, "private", PTASK_GRAPH_CREATE, 0600, &private));
	REQUIRE_OK(h_tmpl(c, shared, PTASK_TEMPLATE_ARRAY, 4, 16, 1, 1, &ts));
	REQUIRE_OK(h_tmpl(c, private, PTASK_TEMPLATE_ARRAY, 4, 16, 1, 1, &tp));
	/* no in/out port takes it: the executor's outputs are what others see */
	REQUIRE_OK(h_db_tmpl(c, ts, 0, &db, &bytes));
	CHECK_EQ(os_user_buf_last_flags, 0);
	REQUIRE_OK(h_release(c, db));
	REQUIRE_OK(h_db_tmpl(c, tp, 0, &db, &bytes));
	CHECK_EQ(os_user_buf_last_flags, 0);
	REQUIRE_OK(h_release(c, db));
	REQUIRE_OK(h_db(c, 64, &db));
	CHECK_EQ(os_user_buf_last_flags, 0);
	/* an output the executor makes for the shared graph's ptask */
	REQUIRE_OK(h_ptask(c, shared, 2, &p));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, 0, &in));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_OUTPUT, 0, &o));
	REQUIRE_OK(h_chan(c, shared, 0, in, 2, 0, &ch_in));
	REQUIRE_OK(h_chan(c, shared, o, 0, 2, 0, NULL));
	REQUIRE_OK(h_run(c, shared));
	REQUIRE_OK(h_push(c, ch_in, db));
	REQUIRE_OK(h_release(c, db));
	REQUIRE_OK(h_take(e, 1, 4, &take));
	REQUIRE(take.n_inv == 1);
	out.invocation = take.inv[0].id;
	REQUIRE_OK(h_call(e, NULL, PTASK_IOC_DATABLOCK_CREATE, &out, NULL));
	CHECK_EQ(os_user_buf_last_flags, PTASK_BUF_OWN_MEMORY);
	/* an in/out port of the shared graph takes its template: own */
	{
		struct ptask_port_open po = {
			.ptask = p, .kind = PTASK_PORT_INPUT,
			.flags = PTASK_PORT_INOUT, .template = ts,
			.inout_peer = o,
		};
		u32 p2;

		REQUIRE_OK(h_graph(c, "shared2", PTASK_GRAPH_CREATE, 0604,
				   &shared));
		REQUIRE_OK(h_tmpl(c, shared, PTASK_TEMPLATE_ARRAY, 4, 16, 1, 1,
				  &ts));
		REQUIRE_OK(h_ptask(c, shared, 2, &p2));
		REQUIRE_OK(h_port(c, p2, PTASK_PORT_OUTPUT, ts, &o));
		po.ptask = p2;
		po.template = ts;
		po.inout_peer = o;
		REQUIRE_OK(h_call(c, NULL, PTASK_IOC_PORT_OPEN, &po, NULL));
		REQUIRE_OK(h_db_tmpl(c, ts, 0, &db, &bytes));
		CHECK_EQ(os_user_buf_last_flags, PTASK_BUF_OWN_MEMORY);
		REQUIRE_OK(h_release(c, db));
	}
	/* the executor's own datablock: not the graph's */
	REQUIRE_OK(h_db(e, 64, &db));
	CHECK_EQ(os_user_buf_last_flags, 0);
	REQUIRE_OK(h_release(e, db));
	REQUIRE_OK(h_release(e, out.handle));
}

static const struct h_test tests[] = {
	H_TEST(test_charge_follows_the_datablock),
	H_TEST(test_limit_refuses_with_edquot),
	H_TEST(test_root_is_never_refused),
	H_TEST(test_queued_datablock_stays_charged),
	H_TEST(test_output_charged_to_the_owner),
	H_TEST(test_shared_graph_gets_own_memory),
};

int main(int argc, char **argv)
{
	return h_main(tests, ARRAY_SIZE(tests), argc, argv);
}
