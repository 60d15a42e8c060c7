// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * tunnel_core_test.c - record-stream tunnels (core/tunnel.c): a batch
 * closes at the threshold (bytes, records, pushes, template capacity) or
 * at the timeout; each pusher pulls back exactly its records, in any
 * order; a pusher that dies mid-batch costs the others nothing; bad
 * settings and bad uses are refused with their errors.
 *
 * The graph: clients push records of STRIDE bytes into the tunnel's input
 * end -> [map] -> the output end; the "executor" here adds 1 to every
 * byte of the batch in place and passes it through, so a slice that came
 * back shows both where it came from and that the ptask ran on it.
 */
#include <stdlib.h>
#include <string.h>
#include "tests/unit/harness.h"

#define STRIDE		16
#define CAP_RECORDS	64

struct tun {
	u32 g, tmpl, p, in_port, out_port, ch_in, ch_out;
};

static int tunnel_open(struct ptask_client *c, u32 g, u32 src, u32 dst,
		       u32 capacity, u32 tmpl, u64 bytes, u32 records,
		       u64 timeout_ns, u32 *handle)
{
	struct ptask_channel_open a = {
		.flags = PTASK_CHANNEL_TUNNEL, .graph = g, .src = src,
		.dst = dst, .capacity = capacity, .template = tmpl,
		.tunnel_bytes = bytes, .tunnel_records = records,
		.tunnel_timeout_ns = timeout_ns,
	};
	int err = h_call(c, NULL, PTASK_IOC_CHANNEL_OPEN, &a, NULL);

	if (!err && handle)
		*handle = a.handle;
	return err;
}

static int tunnel_set(struct ptask_client *c, u32 ch, u64 bytes,
		      u32 records, u64 timeout_ns)
{
	struct ptask_channel_open a = {
		.flags = PTASK_CHANNEL_TUNNEL_SET, .handle = ch,
		.tunnel_bytes = bytes, .tunnel_records = records,
		.tunnel_timeout_ns = timeout_ns,
	};

	return h_call(c, NULL, PTASK_IOC_CHANNEL_OPEN, &a, NULL);
}

/* A tunnel with threshold @bytes / @records, @pushes pushes a batch. */
static void mktun(struct ptask_client *c, struct tun *t, u32 pushes,
		  u64 bytes, u32 records, u64 timeout_ns)
{
	memset(t, 0, sizeof(*t));
	CHECK_OK(h_graph(c, "tunnel", PTASK_GRAPH_CREATE, 0666, &t->g));
	CHECK_OK(h_tmpl(c, t->g, PTASK_TEMPLATE_RECORDS, STRIDE, CAP_RECORDS,
			1, 1, &t->tmpl));
	CHECK_OK(h_ptask(c, t->g, 2, &t->p));
	CHECK_OK(h_port(c, t->p, PTASK_PORT_INPUT, t->tmpl, &t->in_port));
	CHECK_OK(h_port(c, t->p, PTASK_PORT_OUTPUT, t->tmpl, &t->out_port));
	CHECK_OK(tunnel_open(c, t->g, 0, t->in_port, pushes, 0, bytes,
			     records, timeout_ns, &t->ch_in));
	CHECK_OK(tunnel_open(c, t->g, t->out_port, 0, 4, 0, 0, 0, 0,
			     &t->ch_out));
}

static unsigned char *bytes_of(u32 db)
{
	return os_user_buf_data(h_db_obj(db)->buf);
}

/* A datablock of @records records, byte k of record r = @seed + r + k. */
static u32 mkrec(struct ptask_client *c, u32 records, u8 seed)
{
	u32 db = 0, r, k;

	CHECK_OK(h_db(c, (u64)CAP_RECORDS * STRIDE, &db));
	for (r = 0; r < records; r++)
		for (k = 0; k < STRIDE; k++)
			bytes_of(db)[r * STRIDE + k] = (u8)(seed + r + k);
	return db;
}

/* Is @db a slice of @records records made from mkrec(@seed), plus 1? */
static bool is_slice(u32 db, u32 records, u8 seed)
{
	u32 r, k;

	if (h_db_obj(db)->records != records ||
	    h_db_obj(db)->bytes != (u64)records * STRIDE)
		return false;
	for (r = 0; r < records; r++)
		for (k = 0; k < STRIDE; k++)
			if (bytes_of(db)[r * STRIDE + k] != (u8)(seed + r + k + 1))
				return false;
	return true;
}

/* The executor: +1 on every byte of each batch, in place, passed on. */
static int run_map(struct ptask_client *e, u32 max_inv)
{
	struct h_take *t = calloc(1, sizeof(*t));
	u32 i, j, done = 0;
	int err;

	if (!t)
		abort();
	err = h_take(e, max_inv, PTASK_TAKE_MAX_PORTS, t);
	for (i = 0; !err && i < t->n_inv; i++) {
		const struct ptask_invocation *inv = &t->inv[i];
		struct ptask_exec_output out = { 0 };
		u32 in = 0;
		u64 b;

		for (j = 0; j < inv->n_ports; j++) {
			const struct ptask_invocation_port *pr =
				&t->ports[inv->first_port + j];

			if (pr->kind == PTASK_PORT_OUTPUT)
				out.index = pr->index;
			else
				in = pr->datablock;
		}
		for (b = 0; b < h_db_obj(in)->bytes; b++)
			bytes_of(in)[b]++;
		out.datablock = in;
		err = h_complete(e, inv->id, 0, &out, 1);
		done += !err;
	}
	free(t);
	return err ? err : (int)done;
}

static int pull_slice(struct ptask_client *c, u32 ch, u32 ticket, u32 *db)
{
	struct ptask_pull a = {
		.flags = PTASK_NONBLOCK | PTASK_PULL_SLICE, .channel = ch,
		.datablock = ticket,
	};
	int err = h_call(c, NULL, PTASK_IOC_PULL, &a, NULL);

	if (!err)
		*db = a.datablock;
	return err;
}

/* Two clients' pushes reach the byte threshold: one batch, split back. */
static void test_threshold_flush(void)
{
	struct ptask_client *a = h_client(), *b = h_client(), *e = h_executor();
	struct tun t;
	u32 da, db, sa, sb, gb;
	struct ptask_datablock *batch;

	mktun(a, &t, 8, 4 * STRIDE, 0, 1000000);
	REQUIRE(!h_failed());
	REQUIRE_OK(h_graph(b, "tunnel", 0, 0, &gb));
	REQUIRE_OK(h_run(a, t.g));
	da = mkrec(a, 1, 10);
	db = mkrec(b, 3, 50);
	CHECK_OK(h_push_records(a, t.ch_in, da, 1));
	/* Below the threshold: nothing reached the port. */
	CHECK(!h_port_obj(t.in_port)->occupant);
	CHECK_ERR(pull_slice(a, t.ch_out, da, &sa), -EAGAIN);
	CHECK_OK(h_push_records(b, t.ch_in, db, 3));
	batch = h_port_obj(t.in_port)->occupant;
	REQUIRE(batch);
	CHECK_EQ(batch->records, 4);
	CHECK_EQ(batch->bytes, PTASK_TUNNEL_HEAD_BYTES + 4 * STRIDE);
	/* The head, then the pushes back to back, in push order. */
	{
		struct ptask_tunnel_head *head = os_user_buf_data(batch->buf);
		u8 *rec = (u8 *)os_user_buf_data(batch->buf) +
			  PTASK_TUNNEL_HEAD_BYTES;

		CHECK_EQ(head->records, 4);
		CHECK_EQ(head->stride, STRIDE);
		CHECK_EQ(head->reserved, 0);
		CHECK_EQ(rec[0], 10);
		CHECK_EQ(rec[STRIDE], 50);
		CHECK_EQ(rec[3 * STRIDE], 52);
		CHECK_EQ(rec[3 * STRIDE + 1], 53);
	}
	/* Writing the pushed datablock now changes nothing: copied. */
	bytes_of(db)[0] = 0xee;
	CHECK_ERR(pull_slice(b, t.ch_out, db, &sb), -EAGAIN);
	CHECK_EQ(run_map(e, 4), 1);
	/* In any order: b first. */
	REQUIRE_OK(pull_slice(b, t.ch_out, db, &sb));
	bytes_of(db)[0] = 50;
	CHECK(is_slice(sb, 3, 50));
	REQUIRE_OK(pull_slice(a, t.ch_out, da, &sa));
	CHECK(is_slice(sa, 1, 10));
	/* Pulled already; not a push of this client; not a ticket at all. */
	CHECK_ERR(pull_slice(a, t.ch_out, da, &sa), -ENOMSG);
	CHECK_ERR(pull_slice(a, t.ch_out, db, &sa), -ENOMSG);
	CHECK_ERR(pull_slice(a, t.ch_out, 0xfffff, &sa), -ENOMSG);
	/* The batch is gone once every slice is out. */
	CHECK_EQ(h_ns.counts[PTASK_COUNT_DATABLOCKS], 4);
}

/* The records threshold, the pushes per batch and the template's
 * capacity close a batch too. */
static void test_other_thresholds(void)
{
	struct ptask_client *c = h_client();
	struct tun t;
	u32 d[4], i;

	mktun(c, &t, 2, PTASK_DATABLOCK_MAX_BYTES, 5, 1000000);
	REQUIRE(!h_failed());
	for (i = 0; i < 4; i++)
		d[i] = mkrec(c, 40, (u8)i);
	/* Records: 2 + 3 reach 5. */
	CHECK_OK(h_push_records(c, t.ch_in, d[0], 2));
	CHECK(!h_port_obj(t.in_port)->occupant);
	CHECK_OK(h_push_records(c, t.ch_in, d[1], 3));
	REQUIRE(h_port_obj(t.in_port)->occupant);
	CHECK_EQ(h_port_obj(t.in_port)->occupant->records, 5);
	/* Capacity 2 pushes: the third push closes the first two. */
	REQUIRE_OK(tunnel_set(c, t.ch_in, PTASK_DATABLOCK_MAX_BYTES, 0, 0));
	CHECK_OK(h_push_records(c, t.ch_in, d[2], 1));
	CHECK_OK(h_push_records(c, t.ch_in, d[3], 1));
	CHECK_EQ(h_chan_obj(t.ch_in)->count, 0);
	/* No records: -EINVAL. */
	CHECK_ERR(h_push_records(c, t.ch_in, mkrec(c, 1, 1), 0), -EINVAL);
	/* The same datablock twice before its slice is pulled: -EBUSY. */
	CHECK_ERR(h_push_records(c, t.ch_in, d[3], 1), -EBUSY);
	CHECK_ERR(h_push_records(c, t.ch_in, d[0], 1), -EBUSY);
	{
		u32 e = mkrec(c, 40, 9);

		CHECK_OK(h_push_records(c, t.ch_in, e, 1));
		CHECK_EQ(h_chan_obj(t.ch_in)->count, 1);
		CHECK_EQ(h_chan_obj(t.ch_in)->slots[h_chan_obj(t.ch_in)->head]
			 ->records, 2);
		/* The template holds 64 records: 1 + 64 cannot batch. */
		CHECK_ERR(h_push_records(c, t.ch_in, mkrec(c, 64, 1), 65),
			  -EPROTOTYPE);
	}
	/* 1 + 40 records, 2 pushes: full; the next push closes it. */
	CHECK_OK(h_push_records(c, t.ch_in, mkrec(c, 40, 3), 40));
	CHECK_EQ(h_chan_obj(t.ch_in)->count, 1);
	CHECK_OK(h_push_records(c, t.ch_in, mkrec(c, 40, 4), 1));
	CHECK_EQ(h_chan_obj(t.ch_in)->count, 2);
	CHECK_OK(h_push_records(c, t.ch_in, mkrec(c, 40, 5), 1));
	/* The channel's 2 slots are full (the graph does not run): a push
	 * that needs a flush waits, and the timer retries later. */
	CHECK_ERR(h_push_records(c, t.ch_in, mkrec(c, 40, 6), 1), -EAGAIN);
	os_user_clock_ns = ptask_os_now_ns() + 2000000;
	ptask_core_tunnel_tick(&h_ns);
	CHECK_EQ(h_ns.tunnel.timer_ns,
		 os_user_clock_ns + PTASK_TUNNEL_DEFAULT_TIMEOUT_NS);
	os_user_clock_ns = 0;
}

/* The timer: a batch below the threshold closes at its deadline. */
static void test_timeout_flush(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	struct tun t;
	u32 d, s;

	os_user_clock_ns = 1000000000;
	mktun(c, &t, 8, 1 << 20, 0, 50000);
	REQUIRE(!h_failed());
	REQUIRE_OK(h_run(c, t.g));
	d = mkrec(c, 2, 7);
	CHECK_EQ(os_user_tunnel_timer_ns, 0);
	CHECK_OK(h_push_records(c, t.ch_in, d, 2));
	CHECK_EQ(os_user_tunnel_timer_ns, 1000000000 + 50000);
	/* An early tick does nothing. */
	os_user_clock_ns += 49999;
	ptask_core_tunnel_tick(&h_ns);
	CHECK(!h_port_obj(t.in_port)->occupant);
	CHECK_EQ(os_user_tunnel_timer_ns, 1000000000 + 50000);
	os_user_clock_ns += 1;
	ptask_core_tunnel_tick(&h_ns);
	REQUIRE(h_port_obj(t.in_port)->occupant);
	CHECK_EQ(h_ns.tunnel.timer_ns, 0);		/* nothing gathers */
	CHECK_EQ(run_map(e, 1), 1);
	REQUIRE_OK(pull_slice(c, t.ch_out, d, &s));
	CHECK(is_slice(s, 2, 7));
	/* The default timeout, calibrated: 8 fixed costs, at least 20 us. */
	ptask_core_tunnel_calibrate(&h_ns, 64 << 10, 10000);
	CHECK_EQ(h_ns.tunnel.default_bytes, 512 << 10);
	CHECK_EQ(h_ns.tunnel.default_timeout_ns, 80000);
	REQUIRE_OK(tunnel_set(c, t.ch_in, 0, 0, 0));
	CHECK_OK(h_push_records(c, t.ch_in, mkrec(c, 1, 1), 1));
	CHECK_EQ(os_user_tunnel_timer_ns, os_user_clock_ns + 80000);
	ptask_core_tunnel_calibrate(&h_ns, 0, 0);
	CHECK_EQ(h_ns.tunnel.default_bytes, 0);
	os_user_clock_ns = 0;
}

/* Many pushes of three clients over many batches, pulled in a scrambled
 * order: every slice is its pusher's records. */
static void test_slices_in_order(void)
{
	enum { N = 60 };
	struct ptask_client *cl[3] = { h_client(), h_client(), h_client() };
	struct ptask_client *e = h_executor();
	struct tun t;
	u32 d[N], s, i, g, left = N, rounds = 0;
	bool pulled[N] = { false };
	u64 seed = 42, clock = ptask_os_now_ns();

	mktun(cl[0], &t, 6, 10 * STRIDE, 0, 1000000);
	REQUIRE(!h_failed());
	REQUIRE_OK(h_graph(cl[1], "tunnel", 0, 0, &g));
	REQUIRE_OK(h_graph(cl[2], "tunnel", 0, 0, &g));
	REQUIRE_OK(h_run(cl[0], t.g));
	for (i = 0; i < N; i++) {
		struct ptask_client *c = cl[i % 3];
		int err;

		d[i] = mkrec(c, 1 + i % 4, (u8)(i * 3));
		while ((err = h_push_records(c, t.ch_in, d[i], 1 + i % 4)) ==
		       -EAGAIN)
			REQUIRE(run_map(e, 1) == 1);
		REQUIRE_OK(err);
	}
	os_user_clock_ns = ptask_os_now_ns() + 2000000;
	ptask_core_tunnel_tick(&h_ns);
	os_user_clock_ns = 0;
	while (left) {
		int err;

		i = h_rand_below(&seed, N);
		if (pulled[i])
			continue;
		err = pull_slice(cl[i % 3], t.ch_out, d[i], &s);
		/* Not back yet: run a batch, or close the gathering one. */
		if (err == -EAGAIN) {
			REQUIRE(++rounds < 10000);
			err = run_map(e, 2);
			REQUIRE(err > 0 || err == -EAGAIN);
			clock += 10000000;
			os_user_clock_ns = clock;
			ptask_core_tunnel_tick(&h_ns);
			os_user_clock_ns = 0;
			continue;
		}
		REQUIRE_OK(err);
		CHECK(is_slice(s, 1 + i % 4, (u8)(i * 3)));
		REQUIRE_OK(h_release(cl[i % 3], s));
		pulled[i] = true;
		left--;
	}
	CHECK_ERR(run_map(e, 1), -EAGAIN);
}

/* A pusher that dies with its records gathered, or in flight. */
static void test_pusher_dies(void)
{
	struct ptask_client *a = h_client(), *b = h_client(), *e = h_executor();
	struct ptask_client *c = h_client();
	struct tun t;
	u32 da, db, dc, s, g;

	mktun(a, &t, 8, 6 * STRIDE, 0, 1000000);
	REQUIRE(!h_failed());
	REQUIRE_OK(h_graph(b, "tunnel", 0, 0, &g));
	REQUIRE_OK(h_graph(c, "tunnel", 0, 0, &g));
	REQUIRE_OK(h_run(a, t.g));
	/* c dies while gathered: its records still batch, nobody pulls. */
	dc = mkrec(c, 2, 90);
	CHECK_OK(h_push_records(c, t.ch_in, dc, 2));
	ptask_core_client_destroy(c);
	da = mkrec(a, 2, 20);
	db = mkrec(b, 2, 40);
	CHECK_OK(h_push_records(a, t.ch_in, da, 2));
	CHECK_OK(h_push_records(b, t.ch_in, db, 2));
	REQUIRE(h_port_obj(t.in_port)->occupant);
	CHECK_EQ(h_port_obj(t.in_port)->occupant->records, 6);
	/* b dies with its batch in flight. */
	ptask_core_client_destroy(b);
	CHECK_EQ(run_map(e, 1), 1);
	REQUIRE_OK(pull_slice(a, t.ch_out, da, &s));
	CHECK(is_slice(s, 2, 20));
	REQUIRE_OK(h_release(a, s));
	/* Nothing but a's datablock, the template's graph objects remain. */
	CHECK_EQ(h_ns.counts[PTASK_COUNT_DATABLOCKS], 1);
	/* Every pusher of a gathering batch gone: it is dropped. */
	c = h_client();
	REQUIRE_OK(h_graph(c, "tunnel", 0, 0, &g));
	dc = mkrec(c, 1, 1);
	CHECK_OK(h_push_records(c, t.ch_in, dc, 1));
	ptask_core_client_destroy(c);
	os_user_clock_ns = ptask_os_now_ns() + 2000000;
	ptask_core_tunnel_tick(&h_ns);
	os_user_clock_ns = 0;
	CHECK(!h_port_obj(t.in_port)->occupant);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_DATABLOCKS], 1);
}

/* Terminate with pushes gathered and batches out: nothing leaks. */
static void test_terminate(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	struct tun t;
	u32 s, d0, d1;

	mktun(c, &t, 8, 2 * STRIDE, 0, 1000000);
	REQUIRE(!h_failed());
	REQUIRE_OK(h_run(c, t.g));
	d0 = mkrec(c, 2, 1);
	d1 = mkrec(c, 1, 1);
	CHECK_OK(h_push_records(c, t.ch_in, d0, 2));
	CHECK_EQ(run_map(e, 1), 1);
	CHECK_OK(h_push_records(c, t.ch_in, d1, 1));
	CHECK(os_user_tunnel_timer_ns);
	REQUIRE_OK(h_terminate(c, t.g));
	CHECK_EQ(os_user_tunnel_timer_ns, 0);
	CHECK_ERR(pull_slice(c, t.ch_out, d0, &s), -ESHUTDOWN);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_DATABLOCKS], 2);
}

/* Bad settings and bad uses: each its error. */
static void test_refused(void)
{
	struct ptask_client *c = h_client(), *other = h_client();
	u32 g, tr, ta, p, in, out, in2, out2, p2, pin, ch, x, d, s;
	struct ptask_channel_open a;
	struct tun t;

	REQUIRE_OK(h_graph(c, "bad", PTASK_GRAPH_CREATE, 0600, &g));
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_RECORDS, 8, 8, 1, 1, &tr));
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_ARRAY, 8, 8, 1, 1, &ta));
	REQUIRE_OK(h_ptask(c, g, 4, &p));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, 0, &in));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_OUTPUT, tr, &out));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, tr, &in2));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_OUTPUT, tr, &out2));
	REQUIRE_OK(h_ptask(c, g, 1, &p2));
	REQUIRE_OK(h_port(c, p2, PTASK_PORT_INPUT, tr, &pin));
	/* Ranges (the argument check): threshold, timeout, reserved. */
	CHECK_ERR(tunnel_open(c, g, 0, in2, 4, 0,
			      PTASK_DATABLOCK_MAX_BYTES + 1, 0, 0, &x),
		  -EINVAL);
	CHECK_ERR(tunnel_open(c, g, 0, in2, 4, 0, 0, 0,
			      PTASK_TUNNEL_MAX_TIMEOUT_NS + 1, &x), -EINVAL);
	memset(&a, 0, sizeof(a));
	a.flags = PTASK_CHANNEL_TUNNEL;
	a.graph = g;
	a.dst = in2;
	a.capacity = 4;
	a.reserved = 1;
	CHECK_ERR(h_call(c, NULL, PTASK_IOC_CHANNEL_OPEN, &a, NULL), -EINVAL);
	a.reserved = 0;
	a.flags = 1U << 7;
	CHECK_ERR(h_call(c, NULL, PTASK_IOC_CHANNEL_OPEN, &a, NULL), -EINVAL);
	/* Settings on a plain channel. */
	a.flags = 0;
	a.tunnel_bytes = 4096;
	CHECK_ERR(h_call(c, NULL, PTASK_IOC_CHANNEL_OPEN, &a, NULL), -EINVAL);
	/* No record-stream template on the channel or its port. */
	CHECK_ERR(tunnel_open(c, g, 0, in, 4, 0, 0, 0, 0, &x), -EPROTOTYPE);
	CHECK_ERR(tunnel_open(c, g, 0, in, 4, ta, 0, 0, 0, &x), -EPROTOTYPE);
	/* Port to port: not a client's end. */
	CHECK_ERR(tunnel_open(c, g, out, pin, 4, 0, 0, 0, 0, &x), -EINVAL);
	/* Settings on the output end. */
	CHECK_ERR(tunnel_open(c, g, out, 0, 4, 0, 4096, 0, 0, &x), -EINVAL);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_CHANNELS], 0);
	/* One end of each kind per ptask. */
	CHECK_OK(tunnel_open(c, g, 0, in2, 4, 0, 0, 0, 0, &ch));
	CHECK_OK(tunnel_open(c, g, out, 0, 4, 0, 0, 0, 0, &x));
	CHECK_ERR(tunnel_open(c, g, out2, 0, 4, 0, 0, 0, 0, &x), -EBUSY);
	CHECK_ERR(tunnel_open(c, g, 0, in, 4, tr, 0, 0, 0, &x), -EBUSY);
	/* A plain pull on the output end; a slice pull elsewhere. */
	CHECK_ERR(h_pull(c, x, &d), -EINVAL);
	CHECK_OK(h_chan(c, g, out2, 0, 4, 0, &s));
	CHECK_ERR(pull_slice(c, s, 1, &d), -EINVAL);
	/* TUNNEL_SET: on the input end only, nothing but the settings. */
	CHECK_ERR(tunnel_set(c, x, 4096, 0, 0), -EINVAL);
	CHECK_ERR(tunnel_set(c, s, 4096, 0, 0), -EINVAL);
	CHECK_ERR(tunnel_set(c, 0, 4096, 0, 0), -EINVAL);
	CHECK_ERR(tunnel_set(c, 0xffff, 4096, 0, 0), -ENOENT);
	CHECK_ERR(tunnel_set(other, ch, 4096, 0, 0), -EACCES);
	CHECK_ERR(tunnel_set(c, ch, 0, 0, PTASK_TUNNEL_MAX_TIMEOUT_NS + 1),
		  -EINVAL);
	memset(&a, 0, sizeof(a));
	a.flags = PTASK_CHANNEL_TUNNEL_SET | PTASK_CHANNEL_TUNNEL;
	a.handle = ch;
	CHECK_ERR(h_call(c, NULL, PTASK_IOC_CHANNEL_OPEN, &a, NULL), -EINVAL);
	a.flags = PTASK_CHANNEL_TUNNEL_SET;
	a.capacity = 1;
	CHECK_ERR(h_call(c, NULL, PTASK_IOC_CHANNEL_OPEN, &a, NULL), -EINVAL);
	CHECK_OK(tunnel_set(c, ch, 4096, 3, 1000));

	/* An output with another record count than its batch: -EPROTO. */
	{
		struct ptask_client *e = h_executor();
		struct ptask_exec_output o = { 0 };
		struct h_take *tk = calloc(1, sizeof(*tk));
		u32 j, outdb;

		REQUIRE(tk);
		mktun(c, &t, 4, STRIDE, 0, 1000000);
		REQUIRE_OK(h_run(c, t.g));
		d = mkrec(c, 1, 5);
		CHECK_OK(h_push_records(c, t.ch_in, d, 1));
		CHECK_OK(h_take(e, 1, PTASK_TAKE_MAX_PORTS, tk));
		CHECK_EQ(tk->n_inv, 1);
		for (j = 0; j < tk->inv[0].n_ports; j++)
			if (tk->ports[j].kind == PTASK_PORT_OUTPUT)
				o.index = tk->ports[j].index;
		CHECK_OK(h_db(e, PTASK_TUNNEL_HEAD_BYTES + 2 * STRIDE, &outdb));
		h_db_obj(outdb)->records = 2;
		o.datablock = outdb;
		CHECK_OK(h_complete(e, tk->inv[0].id, 0, &o, 1));
		CHECK_ERR(pull_slice(c, t.ch_out, d, &s), -EPROTO);
		CHECK_ERR(pull_slice(c, t.ch_out, d, &s), -ENOMSG);
		/* Records 0 (made by size): the batch's, if the size agrees. */
		d = mkrec(c, 1, 6);
		CHECK_OK(h_push_records(c, t.ch_in, d, 1));
		CHECK_OK(h_take(e, 1, PTASK_TAKE_MAX_PORTS, tk));
		REQUIRE(tk->n_inv == 1);
		CHECK_OK(h_db(e, PTASK_TUNNEL_HEAD_BYTES + 2 * STRIDE, &outdb));
		o.datablock = outdb;
		CHECK_OK(h_complete(e, tk->inv[0].id, 0, &o, 1));
		CHECK_OK(pull_slice(c, t.ch_out, d, &s));
		CHECK_EQ(h_db_obj(s)->bytes, 2 * STRIDE);
		CHECK_EQ(h_db_obj(s)->records, 1);
		/* The same records but no room for the head: -EPROTO too. */
		d = mkrec(c, 1, 6);
		CHECK_OK(h_push_records(c, t.ch_in, d, 1));
		CHECK_OK(h_take(e, 1, PTASK_TAKE_MAX_PORTS, tk));
		REQUIRE(tk->n_inv == 1);
		CHECK_OK(h_db(e, STRIDE, &outdb));
		h_db_obj(outdb)->records = 1;
		o.datablock = outdb;
		CHECK_OK(h_complete(e, tk->inv[0].id, 0, &o, 1));
		CHECK_ERR(pull_slice(c, t.ch_out, d, &s), -EPROTO);
		free(tk);
	}
}

static const struct h_test tests[] = {
	H_TEST(test_threshold_flush),
	H_TEST(test_other_thresholds),
	H_TEST(test_timeout_flush),
	H_TEST(test_slices_in_order),
	H_TEST(test_pusher_dies),
	H_TEST(test_terminate),
	H_TEST(test_refused),
};

int main(int argc, char **argv)
{
	return h_main(tests, ARRAY_SIZE(tests), argc, argv);
}
