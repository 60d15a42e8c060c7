// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * forgotten_core_test.c - datablock and ptask death notices for executors
 * (core/forgotten.c, PTASK_IOC_EXEC_FORGOTTEN): which deaths are noticed,
 * the order, the bound and what is lost past it, the poll bit, and that
 * the queue goes with the executor.
 */
#include <errno.h>
#include "tests/unit/harness.h"

static u32 got[PTASK_FORGOTTEN_MAX];

/* EXEC_FORGOTTEN by @e for up to @max handles (into got[]). */
static int read_notices(struct ptask_client *e, u32 max,
			struct ptask_exec_forgotten *out)
{
	struct ptask_call_io io = { .forgotten = got };

	*out = (struct ptask_exec_forgotten){ .max_handles = max };
	return h_call(e, NULL, PTASK_IOC_EXEC_FORGOTTEN, out, &io);
}

/* One datablock through a pass-through ptask; returns it, dead. */
static u32 one_through(struct ptask_client *c, struct ptask_client *e,
		       u32 ch_in, u32 ch_out)
{
	u32 db, pulled;

	if (h_db(c, 8, &db) || h_push(c, ch_in, db) || h_release(c, db) ||
	    h_passthrough(e, 1) != 1 || h_pull(c, ch_out, &pulled) ||
	    h_release(c, pulled))
		return 0;
	return db;
}

static void copy_graph(struct ptask_client *c, u32 *ch_in, u32 *ch_out)
{
	u32 g, p, in, out;

	CHECK_OK(h_graph(c, "f", PTASK_GRAPH_CREATE, 0600, &g));
	CHECK_OK(h_ptask(c, g, 2, &p));
	CHECK_OK(h_port(c, p, PTASK_PORT_INPUT, 0, &in));
	CHECK_OK(h_port(c, p, PTASK_PORT_OUTPUT, 0, &out));
	CHECK_OK(h_chan(c, g, 0, in, 4, 0, ch_in));
	CHECK_OK(h_chan(c, g, out, 0, 4, 0, ch_out));
	CHECK_OK(h_run(c, g));
}

static void test_notice_of_a_handed_datablock(void)
{
	struct ptask_client *c = h_client(), *e = h_executor(),
			    *quiet = h_executor();
	struct ptask_exec_forgotten f;
	u32 ch_in, ch_out, db, never;

	REQUIRE_OK(ptask_core_exec_forgotten_enable(e));
	CHECK_ERR(ptask_core_exec_forgotten_enable(e), -EALREADY);
	CHECK_ERR(ptask_core_exec_forgotten_enable(c), -ENOENT);
	copy_graph(c, &ch_in, &ch_out);
	/* Never handed to an executor: its death is nobody's business. */
	REQUIRE_OK(h_db(c, 8, &never));
	REQUIRE_OK(h_release(c, never));
	CHECK_EQ(ptask_core_client_poll(e) & PTASK_POLL_PRI, 0);
	db = one_through(c, e, ch_in, ch_out);
	REQUIRE(db);
	CHECK(ptask_core_client_poll(e) & PTASK_POLL_PRI);
	REQUIRE_OK(read_notices(e, 8, &f));
	CHECK_EQ(f.n_handles, 1);
	CHECK_EQ(got[0], db);
	CHECK_EQ(f.pending, 0);
	CHECK_EQ(f.lost, 0);
	CHECK_EQ(ptask_core_client_poll(e) & PTASK_POLL_PRI, 0);
	/* An executor that did not ask has no queue, and reads nothing. */
	REQUIRE_OK(read_notices(quiet, 8, &f));
	CHECK_EQ(f.n_handles, 0);
	/* Not an executor. */
	CHECK_ERR(read_notices(c, 8, &f), -EPERM);
}

/* In death order; a small read leaves the rest; past the bound: lost. */
static void test_order_bound_and_loss(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	struct ptask_exec_forgotten f;
	u32 ch_in, ch_out, first = 0, last = 0, i;

	REQUIRE_OK(ptask_core_exec_forgotten_enable(e));
	copy_graph(c, &ch_in, &ch_out);
	for (i = 0; i < PTASK_FORGOTTEN_MAX + 3; i++) {
		last = one_through(c, e, ch_in, ch_out);
		REQUIRE(last);
		if (!i)
			first = last;
	}
	REQUIRE_OK(read_notices(e, 1, &f));
	CHECK_EQ(f.n_handles, 1);
	CHECK_EQ(got[0], first);
	CHECK_EQ(f.lost, 3);
	CHECK_EQ(f.pending, PTASK_FORGOTTEN_MAX - 1);
	REQUIRE_OK(read_notices(e, ~0u, &f));
	CHECK_EQ(f.n_handles, PTASK_FORGOTTEN_MAX - 1);
	CHECK(got[f.n_handles - 1] != last);	/* the last three were lost */
	CHECK_EQ(f.lost, 0);
	CHECK_EQ(f.pending, 0);
	/* Room again: the next death is noticed. */
	last = one_through(c, e, ch_in, ch_out);
	REQUIRE_OK(read_notices(e, 4, &f));
	CHECK_EQ(f.n_handles, 1);
	CHECK_EQ(got[0], last);
}

/* The queue goes with the registration, and with the client (ASan). */
static void test_queue_goes_with_the_executor(void)
{
	struct ptask_client *c = h_client(), *e = h_executor(),
			    *e2 = h_executor();
	struct ptask_exec_forgotten f;
	u32 ch_in, ch_out;

	REQUIRE_OK(ptask_core_exec_forgotten_enable(e));
	REQUIRE_OK(ptask_core_exec_forgotten_enable(e2));
	copy_graph(c, &ch_in, &ch_out);
	REQUIRE(one_through(c, e, ch_in, ch_out));
	REQUIRE_OK(ptask_core_exec_unregister(e));
	CHECK(!e->forgotten);
	CHECK_ERR(read_notices(e, 8, &f), -EPERM);
	/* e2 heard it too; it is destroyed with its queue full of it. */
	CHECK_EQ(e2->forgotten_count, 1);
	ptask_core_client_destroy(e2);
}

/*
 * A ptask whose info an executor read dies with its graph: its handle
 * is noticed (the executor caches its info and kernels); one no executor
 * read is not.
 */
static void test_notice_of_a_ptask_read(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	struct ptask_exec_ptask_info info;
	struct ptask_exec_forgotten f;
	u32 g, read_one, unread;

	REQUIRE_OK(ptask_core_exec_forgotten_enable(e));
	REQUIRE_OK(h_graph(c, "p", PTASK_GRAPH_CREATE, 0600, &g));
	REQUIRE_OK(h_ptask(c, g, 1, &read_one));
	REQUIRE_OK(h_ptask(c, g, 1, &unread));
	REQUIRE_OK(h_info(e, read_one, NULL, 0, &info));
	CHECK_EQ(ptask_core_client_poll(e) & PTASK_POLL_PRI, 0);
	REQUIRE_OK(h_close(c, g));
	CHECK(ptask_core_client_poll(e) & PTASK_POLL_PRI);
	REQUIRE_OK(read_notices(e, 8, &f));
	CHECK_EQ(f.n_handles, 1);
	CHECK_EQ(got[0], read_one);
}

static const struct h_test tests[] = {
	H_TEST(test_notice_of_a_handed_datablock),
	H_TEST(test_order_bound_and_loss),
	H_TEST(test_queue_goes_with_the_executor),
	H_TEST(test_notice_of_a_ptask_read),
};

int main(int argc, char **argv)
{
	return h_main(tests, ARRAY_SIZE(tests), argc, argv);
}
