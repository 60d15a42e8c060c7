// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * flow_core_test.c - datablocks moving through a graph: templates and
 * ptask_datablock_fits (array, records, opaque), template compatibility of
 * channels (-EPROTOTYPE), push mismatches, capacity and -EAGAIN, FIFO
 * order, sticky ports, fan-out (all or nothing, back-pressure), the ptask
 * state machine and datablock reference counts.
 */
#include <stdlib.h>
#include <string.h>
#include "tests/unit/harness.h"

static struct ptask_template *tobj(u32 h)
{
	struct ptask_obj *o = ptask_core_ns_find(&h_ns, h, PTASK_OBJ_TEMPLATE);

	return o ? ptask_container_of(o, struct ptask_template, obj) : NULL;
}

static bool fits(u32 db, u32 tmpl)
{
	return ptask_datablock_fits(h_db_obj(db), tmpl ? tobj(tmpl) : NULL);
}

static u32 mkgraph(struct ptask_client *c)
{
	u32 g = 0;

	CHECK_OK(h_graph(c, "flow", PTASK_GRAPH_CREATE, 0600, &g));
	return g;
}

static void test_fits_array(void)
{
	struct ptask_client *c = h_client();
	u32 g = mkgraph(c), t, tsame, tflat, trec, d_t, d_same, d_flat, d32,
	    d31, d33, d_rec;
	u64 bytes;

	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_ARRAY, 4, 4, 2, 1, &t));
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_ARRAY, 4, 4, 2, 1, &tsame));
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_ARRAY, 4, 8, 1, 1, &tflat));
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_RECORDS, 4, 8, 1, 1, &trec));
	REQUIRE_OK(h_db_tmpl(c, t, 0, &d_t, &bytes));
	CHECK_EQ(bytes, 32);
	CHECK_EQ(h_db_obj(d_t)->bytes, 32);
	CHECK(h_db_obj(d_t)->has_geom);
	REQUIRE_OK(h_db_tmpl(c, tsame, 0, &d_same, NULL));
	REQUIRE_OK(h_db_tmpl(c, tflat, 0, &d_flat, &bytes));
	CHECK_EQ(bytes, 32);
	REQUIRE_OK(h_db_tmpl(c, trec, 8, &d_rec, &bytes));
	CHECK_EQ(bytes, 32);
	REQUIRE_OK(h_db(c, 32, &d32));
	REQUIRE_OK(h_db(c, 31, &d31));
	REQUIRE_OK(h_db(c, 33, &d33));
	CHECK(!h_db_obj(d32)->has_geom);

	CHECK(fits(d_t, 0));
	CHECK(fits(d_t, t));
	CHECK(fits(d_t, tsame));	/* compatible template */
	CHECK(fits(d_same, t));
	CHECK(!fits(d_flat, t));	/* same bytes, other dims */
	CHECK(!fits(d_t, tflat));
	CHECK(!fits(d_rec, t));		/* same bytes, other kind */
	CHECK(fits(d32, t));		/* by size: exactly the bytes */
	CHECK(fits(d32, tflat));
	CHECK(!fits(d31, t));
	CHECK(!fits(d33, t));
}

static void test_fits_records(void)
{
	struct ptask_client *c = h_client();
	u32 g = mkgraph(c), t, t16, tarr, d5, d10, dbig, d80, darr, d16, x;
	u64 bytes;

	/* Up to 10 records of 8 bytes. */
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_RECORDS, 8, 10, 1, 1, &t));
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_RECORDS, 16, 5, 1, 1, &t16));
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_ARRAY, 8, 10, 1, 1, &tarr));
	CHECK_ERR(h_db_tmpl(c, t, 0, &x, NULL), -EINVAL);
	CHECK_ERR(h_db_tmpl(c, t, 11, &x, NULL), -EINVAL);
	REQUIRE_OK(h_db_tmpl(c, t, 5, &d5, &bytes));
	CHECK_EQ(bytes, 40);
	CHECK_EQ(h_db_obj(d5)->records, 5);
	REQUIRE_OK(h_db_tmpl(c, t, 10, &d10, &bytes));
	CHECK_EQ(bytes, 80);
	REQUIRE_OK(h_db_tmpl(c, t16, 5, &d16, &bytes));
	CHECK_EQ(bytes, 80);
	REQUIRE_OK(h_db_tmpl(c, tarr, 3, &darr, &bytes));
	CHECK_EQ(bytes, 80);		/* an array ignores records */
	REQUIRE_OK(h_db(c, 80, &d80));
	REQUIRE_OK(h_db(c, 800, &dbig));

	CHECK(fits(d5, t));
	CHECK(fits(d10, t));
	CHECK(!fits(d16, t));		/* other stride */
	CHECK(!fits(darr, t));		/* other kind */
	h_db_obj(d80)->records = 10;
	CHECK(fits(d80, t));
	h_db_obj(d80)->records = 11;	/* more than its own bytes hold */
	CHECK(!fits(d80, t));
	h_db_obj(dbig)->records = 10;
	CHECK(fits(dbig, t));
	h_db_obj(dbig)->records = 11;	/* more than the template holds */
	CHECK(!fits(dbig, t));
	h_db_obj(dbig)->records = 0;
	CHECK(fits(dbig, t));
	/* A smaller record count of a template datablock still fits. */
	h_db_obj(d10)->records = 2;
	CHECK(fits(d10, t));
	/* Records of a datablock made with a records template: at most
	 * its own bytes / stride. */
	h_db_obj(d5)->records = 6;
	CHECK(!fits(d5, t));
}

static void test_fits_opaque(void)
{
	struct ptask_client *c = h_client();
	u32 g = mkgraph(c), t, tarr, d1, d64, d65, darr;

	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_OPAQUE, 1, 64, 1, 1, &t));
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_ARRAY, 8, 8, 1, 1, &tarr));
	REQUIRE_OK(h_db(c, 1, &d1));
	REQUIRE_OK(h_db(c, 64, &d64));
	REQUIRE_OK(h_db(c, 65, &d65));
	REQUIRE_OK(h_db_tmpl(c, tarr, 0, &darr, NULL));
	CHECK(fits(d1, t));
	CHECK(fits(d64, t));
	CHECK(!fits(d65, t));
	CHECK(fits(darr, t));		/* opaque looks at bytes only */
	/* An opaque template's datablock has that size. */
	{
		u64 bytes;

		CHECK_OK(h_db_tmpl(c, t, 0, NULL, &bytes));
		CHECK_EQ(bytes, 64);
	}
	CHECK(ptask_geom_bytes(&tobj(tarr)->geom) == 64);
	CHECK(ptask_geom_equal(&tobj(tarr)->geom, &tobj(tarr)->geom));
	CHECK(!ptask_geom_equal(&tobj(t)->geom, &tobj(tarr)->geom));
}

static void test_channel_template_compat(void)
{
	struct ptask_client *c = h_client();
	u32 g = mkgraph(c), ta, ta2, tb, tc, p, in_a, in_b, in_any, out_a,
	    out_any, p2, in2, in3, in4, in5;
	struct ptask_template_open bind = {
		.graph = 0, .kind = PTASK_TEMPLATE_ARRAY,
		.binding = PTASK_BIND_CONSTANT, .stride = 4, .dims = { 4, 1, 1 },
	};

	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_ARRAY, 4, 4, 1, 1, &ta));
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_ARRAY, 4, 4, 1, 1, &ta2));
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_ARRAY, 4, 2, 2, 1, &tb));
	bind.graph = g;
	REQUIRE_OK(h_call(c, NULL, PTASK_IOC_TEMPLATE_OPEN, &bind, NULL));
	tc = bind.handle;		/* ta with another binding */
	REQUIRE_OK(h_ptask(c, g, 5, &p));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, ta, &in_a));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, tb, &in_b));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, 0, &in_any));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_OUTPUT, ta, &out_a));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_OUTPUT, 0, &out_any));
	REQUIRE_OK(h_ptask(c, g, 4, &p2));
	REQUIRE_OK(h_port(c, p2, PTASK_PORT_INPUT, tb, &in2));
	REQUIRE_OK(h_port(c, p2, PTASK_PORT_STICKY, ta2, &in3));
	REQUIRE_OK(h_port(c, p2, PTASK_PORT_INPUT, 0, &in4));
	REQUIRE_OK(h_port(c, p2, PTASK_PORT_INPUT, tc, &in5));

	/* Port vs port. */
	CHECK_ERR(h_chan(c, g, out_a, in2, 1, 0, NULL), -EPROTOTYPE);
	/* Channel vs either end. */
	CHECK_ERR(h_chan(c, g, 0, in_a, 1, tb, NULL), -EPROTOTYPE);
	CHECK_ERR(h_chan(c, g, out_a, 0, 1, tb, NULL), -EPROTOTYPE);
	CHECK_ERR(h_chan(c, g, out_any, in2, 1, ta, NULL), -EPROTOTYPE);
	CHECK_ERR(h_chan(c, g, out_a, in4, 1, tb, NULL), -EPROTOTYPE);
	/* A failed open leaves the port free. */
	CHECK(!h_port_obj(in2)->in);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_CHANNELS], 0);
	/* Compatible: equal geometry, another template, another binding. */
	CHECK_OK(h_chan(c, g, out_a, in3, 1, ta, NULL));	/* ta ~ ta2 */
	CHECK_OK(h_chan(c, g, out_a, in5, 1, ta2, NULL));	/* binding */
	CHECK_OK(h_chan(c, g, 0, in_b, 1, tb, NULL));
	CHECK_OK(h_chan(c, g, out_any, in2, 1, 0, NULL));	/* any */
	CHECK_OK(h_chan(c, g, 0, in_any, 1, tb, NULL));
	CHECK_OK(h_chan(c, g, out_a, in4, 1, 0, NULL));
	/* -EINVAL (directions) comes before -EPROTOTYPE; -EBUSY after. */
	CHECK_ERR(h_chan(c, g, in_a, 0, 1, tb, NULL), -EINVAL);
	CHECK_ERR(h_chan(c, g, 0, in2, 1, ta, NULL), -EPROTOTYPE);
	CHECK_ERR(h_chan(c, g, 0, in2, 1, tb, NULL), -EBUSY);
	/* An output port takes any number of channels. */
	CHECK_OK(h_chan(c, g, out_a, 0, 1, 0, NULL));
	CHECK_OK(h_chan(c, g, out_a, 0, 1, ta2, NULL));
	CHECK_OK(h_chan(c, g, 0, in_a, 1, 0, NULL));
	CHECK_ERR(h_chan(c, g, 0, in_a, 1, 0, NULL), -EBUSY);
}

static void test_push_mismatch(void)
{
	struct ptask_client *c = h_client();
	u32 g = mkgraph(c), ta, tr, p, in_a, in_any, in_r, ch_port, ch_chan,
	    ch_rec, d_ok, d_bad, d_rec;

	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_ARRAY, 4, 4, 1, 1, &ta));
	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_RECORDS, 4, 4, 1, 1, &tr));
	REQUIRE_OK(h_ptask(c, g, 3, &p));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, ta, &in_a));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, 0, &in_any));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, tr, &in_r));
	REQUIRE_OK(h_chan(c, g, 0, in_a, 2, 0, &ch_port));	/* port's */
	REQUIRE_OK(h_chan(c, g, 0, in_any, 2, ta, &ch_chan));	/* channel's */
	REQUIRE_OK(h_chan(c, g, 0, in_r, 2, 0, &ch_rec));
	REQUIRE_OK(h_db(c, 16, &d_ok));
	REQUIRE_OK(h_db(c, 17, &d_bad));
	REQUIRE_OK(h_db(c, 16, &d_rec));

	CHECK_ERR(h_push(c, ch_port, d_bad), -EPROTOTYPE);
	CHECK_ERR(h_push(c, ch_chan, d_bad), -EPROTOTYPE);
	CHECK_EQ(h_db_obj(d_bad)->refs, 1);
	CHECK_OK(h_push(c, ch_port, d_ok));
	CHECK_OK(h_push(c, ch_chan, d_ok));
	CHECK_EQ(h_db_obj(d_ok)->refs, 3);
	/* SET_RECORDS: checked with the new count, applied on success only. */
	CHECK_ERR(h_push_records(c, ch_rec, d_rec, 5), -EPROTOTYPE);
	CHECK_EQ(h_db_obj(d_rec)->records, 0);
	CHECK_OK(h_push_records(c, ch_rec, d_rec, 4));
	CHECK_EQ(h_db_obj(d_rec)->records, 4);
	CHECK_OK(h_push(c, ch_rec, d_rec));		/* keeps 4 */
	CHECK_EQ(h_db_obj(d_rec)->records, 4);
	/* The channel is full now: the fit is checked before -EAGAIN. */
	CHECK_OK(h_push(c, ch_rec, d_rec));
	CHECK_ERR(h_push_records(c, ch_rec, d_rec, 9), -EPROTOTYPE);
	CHECK_ERR(h_push_records(c, ch_rec, d_rec, 1), -EAGAIN);
	CHECK_EQ(h_db_obj(d_rec)->records, 4);		/* not applied */
}

/*
 * A record count is at most the datablock's bytes (its stride's worth,
 * made from a record stream's template): an untemplated channel took
 * 2^64 - 1 records on a 1-byte datablock, which every taker and puller
 * then believed.
 */
static void test_records_bounded_by_bytes(void)
{
	struct ptask_client *c = h_client();
	u32 g = mkgraph(c), tr, p, in_any, in_r, ch_any, ch_r, d1, d16, drec;
	struct ptask_datablock_create big = { .bytes = 8, .records = 9 };

	REQUIRE_OK(h_tmpl(c, g, PTASK_TEMPLATE_RECORDS, 4, 4, 1, 1, &tr));
	REQUIRE_OK(h_ptask(c, g, 2, &p));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, 0, &in_any));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, tr, &in_r));
	REQUIRE_OK(h_chan(c, g, 0, in_any, 4, 0, &ch_any));
	REQUIRE_OK(h_chan(c, g, 0, in_r, 4, 0, &ch_r));
	REQUIRE_OK(h_db(c, 1, &d1));
	REQUIRE_OK(h_db(c, 16, &d16));
	REQUIRE_OK(h_db_tmpl(c, tr, 2, &drec, NULL));	/* 8 bytes */

	CHECK_ERR(h_push_records(c, ch_any, d1, UINT64_MAX), -EINVAL);
	CHECK_ERR(h_push_records(c, ch_any, d1, 2), -EINVAL);
	CHECK_EQ(h_db_obj(d1)->records, 0);		/* not applied */
	CHECK_EQ(h_db_obj(d1)->refs, 1);
	CHECK_OK(h_push_records(c, ch_any, d1, 1));
	CHECK_OK(h_push_records(c, ch_any, d16, 16));
	/* made from the template: 4 bytes a record, 8 bytes */
	CHECK_ERR(h_push_records(c, ch_any, drec, 3), -EINVAL);
	CHECK_OK(h_push_records(c, ch_any, drec, 2));
	CHECK_ERR(h_push_records(c, ch_r, d16, 17), -EINVAL);
	CHECK_OK(h_push_records(c, ch_r, d16, 4));
	/* DATABLOCK_CREATE likewise, before anything is allocated */
	CHECK_ERR(h_call(c, NULL, PTASK_IOC_DATABLOCK_CREATE, &big, NULL),
		  -EINVAL);
	big.records = 8;
	CHECK_OK(h_call(c, NULL, PTASK_IOC_DATABLOCK_CREATE, &big, NULL));
}

/* Capacity: the port takes one, the channel holds @capacity more. */
static void test_capacity_and_eagain(void)
{
	struct ptask_client *c = h_client();
	u32 g = mkgraph(c), p, in, ch, db[6], i;

	REQUIRE_OK(h_ptask(c, g, 1, &p));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, 0, &in));
	REQUIRE_OK(h_chan(c, g, 0, in, 3, 0, &ch));
	for (i = 0; i < 6; i++)
		REQUIRE_OK(h_db(c, 8, &db[i]));
	for (i = 0; i < 4; i++)
		CHECK_OK(h_push(c, ch, db[i]));
	CHECK_EQ(h_port_obj(in)->occupant, h_db_obj(db[0]));
	CHECK_EQ(h_chan_obj(ch)->count, 3);
	CHECK(ptask_channel_full(h_chan_obj(ch)));
	CHECK_ERR(h_push(c, ch, db[4]), -EAGAIN);
	CHECK_ERR(h_push(c, ch, db[4]), -EAGAIN);
	CHECK_EQ(h_db_obj(db[4])->refs, 1);
	CHECK_EQ(h_chan_obj(ch)->count, 3);
	/* A blocking push (no NONBLOCK) is -EAGAIN from the core too. */
	{
		struct ptask_push a = { .channel = ch, .datablock = db[5] };

		CHECK_ERR(h_call(c, NULL, PTASK_IOC_PUSH, &a, NULL), -EAGAIN);
	}
	/* Order in the ring is the push order. */
	for (i = 0; i < 3; i++) {
		struct ptask_channel *o = h_chan_obj(ch);

		CHECK_EQ(o->slots[(o->head + i) % o->capacity],
			 h_db_obj(db[i + 1]));
	}
}

/* in -> [pipe] -> out; returns the ptask, fills the channel handles. */
static u32 mkpipe(struct ptask_client *c, u32 g, u32 cap_in, u32 cap_out,
		  u32 *ch_in, u32 *ch_out)
{
	u32 p = 0, in, out;

	CHECK_OK(h_ptask(c, g, 2, &p));
	CHECK_OK(h_port(c, p, PTASK_PORT_INPUT, 0, &in));
	CHECK_OK(h_port(c, p, PTASK_PORT_OUTPUT, 0, &out));
	CHECK_OK(h_chan(c, g, 0, in, cap_in, 0, ch_in));
	CHECK_OK(h_chan(c, g, out, 0, cap_out, 0, ch_out));
	return p;
}

static void test_fifo_order(void)
{
	enum { N = 40 };
	struct ptask_client *c = h_client(), *e = h_executor();
	u32 g = mkgraph(c), ch_in, ch_out, db, i, pushed = 0, pulled = 0;
	u32 rounds = 0;
	u64 tag;

	mkpipe(c, g, 5, 7, &ch_in, &ch_out);
	REQUIRE_OK(h_run(c, g));
	/* Push, run the executor and pull in uneven steps. */
	while (pulled < N) {
		int err;

		REQUIRE(++rounds < 1000);

		while (pushed < N) {
			REQUIRE_OK(h_db(c, 8, &db));
			REQUIRE_OK(h_write_tag(c, db, 1000 + pushed));
			err = h_push(c, ch_in, db);
			REQUIRE_OK(h_release(c, db));
			if (err == -EAGAIN)
				break;
			REQUIRE_OK(err);
			pushed++;
		}
		err = h_passthrough(e, 1 + pulled % 3);
		REQUIRE(err > 0 || err == -EAGAIN);
		for (i = 0; i < 1 + pushed % 4; i++) {
			err = h_pull(c, ch_out, &db);
			if (err == -EAGAIN)
				break;
			REQUIRE_OK(err);
			REQUIRE_OK(h_read_tag(c, db, &tag));
			CHECK_EQ(tag, 1000 + pulled);
			REQUIRE_OK(h_release(c, db));
			pulled++;
		}
	}
	CHECK_EQ(h_ns.counts[PTASK_COUNT_DATABLOCKS], 0);
	CHECK_ERR(h_pull(c, ch_out, &db), -EAGAIN);
	CHECK_ERR(h_passthrough(e, 4), -EAGAIN);
	CHECK_EQ(h_ptask_obj(h_chan_obj(ch_in)->dst->ptask->obj.handle)
		 ->invocations, N);
}

/*
 * Sticky port: kept across invocations; the newest arrival replaces it.
 * p has ports 0 sticky, 1 input, 2 output.
 */
static void test_sticky(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	u32 g = mkgraph(c), p, s, in, out, ch_s, ch_in, ch_out, s1, s2, s3,
	    i1, i2, i3, x;
	struct h_take *t = calloc(1, sizeof(*t));
	struct ptask_exec_output o = { .index = 2 };

	REQUIRE(t);
	REQUIRE_OK(h_ptask(c, g, 3, &p));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_STICKY, 0, &s));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, 0, &in));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_OUTPUT, 0, &out));
	REQUIRE_OK(h_chan(c, g, 0, s, 4, 0, &ch_s));
	REQUIRE_OK(h_chan(c, g, 0, in, 4, 0, &ch_in));
	REQUIRE_OK(h_chan(c, g, out, 0, 8, 0, &ch_out));
	REQUIRE_OK(h_run(c, g));
	REQUIRE_OK(h_db(c, 8, &s1));
	REQUIRE_OK(h_db(c, 8, &s2));
	REQUIRE_OK(h_db(c, 8, &s3));
	REQUIRE_OK(h_db(c, 8, &i1));
	REQUIRE_OK(h_db(c, 8, &i2));
	REQUIRE_OK(h_db(c, 8, &i3));

	/* Sticky alone does not fire. */
	REQUIRE_OK(h_push(c, ch_s, s1));
	CHECK_EQ(h_ready_len(), 0);
	CHECK_EQ(h_port_obj(s)->occupant, h_db_obj(s1));
	REQUIRE_OK(h_push(c, ch_in, i1));
	REQUIRE_OK(h_push(c, ch_in, i2));
	CHECK(h_ready_has(p));
	/* First invocation: s1 and i1. */
	REQUIRE_OK(h_take(e, 1, 8, t));
	CHECK_EQ(t->ports[0].datablock, s1);
	CHECK_EQ(t->ports[0].kind, PTASK_PORT_STICKY);
	CHECK_EQ(t->ports[1].datablock, i1);
	CHECK_EQ(t->ports[2].datablock, 0);
	/* The port keeps s1; the invocation has its own reference. */
	CHECK_EQ(h_port_obj(s)->occupant, h_db_obj(s1));
	CHECK_EQ(h_db_obj(s1)->refs, 3);
	CHECK_EQ(h_port_obj(in)->occupant, h_db_obj(i2));	/* refilled */
	/* Newer sticky data arrives while it executes: newest wins. */
	REQUIRE_OK(h_push(c, ch_s, s2));
	REQUIRE_OK(h_push(c, ch_s, s3));
	CHECK_EQ(h_port_obj(s)->occupant, h_db_obj(s3));
	CHECK_EQ(h_chan_obj(ch_s)->count, 0);
	CHECK_EQ(h_db_obj(s2)->refs, 1);		/* replaced, dropped */
	CHECK_EQ(h_db_obj(s1)->refs, 2);		/* hold + invocation */
	o.datablock = s1;	/* pass the old sticky input through */
	REQUIRE_OK(h_complete(e, t->inv[0].id, 0, &o, 1));
	CHECK_EQ(h_db_obj(s1)->refs, 2);		/* hold + ch_out */
	/* Second invocation: s3 (kept) and i2. */
	REQUIRE_OK(h_take(e, 1, 8, t));
	CHECK_EQ(t->ports[0].datablock, s3);
	CHECK_EQ(t->ports[1].datablock, i2);
	o.datablock = i2;
	REQUIRE_OK(h_complete(e, t->inv[0].id, 0, &o, 1));
	/* No plain input left: nothing queued although sticky is full. */
	CHECK_EQ(h_ready_len(), 0);
	CHECK_EQ(h_ptask_obj(p)->state, PTASK_STATE_WAITING);
	CHECK_EQ(h_port_obj(s)->occupant, h_db_obj(s3));
	/* Third: s3 again. */
	REQUIRE_OK(h_push(c, ch_in, i3));
	REQUIRE_OK(h_take(e, 1, 8, t));
	CHECK_EQ(t->ports[0].datablock, s3);
	CHECK_EQ(t->ports[1].datablock, i3);
	o.datablock = s3;
	REQUIRE_OK(h_complete(e, t->inv[0].id, 0, &o, 1));
	REQUIRE_OK(h_pull(c, ch_out, &x));
	CHECK_EQ(x, s1);
	REQUIRE_OK(h_pull(c, ch_out, &x));
	CHECK_EQ(x, i2);
	REQUIRE_OK(h_pull(c, ch_out, &x));
	CHECK_EQ(x, s3);
	CHECK_EQ(h_db_obj(s3)->refs, 3);	/* 2 holds (create, pull) + port */
	free(t);
}

static void test_sticky_only_never_fires(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	u32 g = mkgraph(c), p, s1, s2, out, c1, c2, db, q, qo;

	REQUIRE_OK(h_ptask(c, g, 3, &p));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_STICKY, 0, &s1));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_STICKY, 0, &s2));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_OUTPUT, 0, &out));
	REQUIRE_OK(h_chan(c, g, 0, s1, 2, 0, &c1));
	REQUIRE_OK(h_chan(c, g, 0, s2, 2, 0, &c2));
	REQUIRE_OK(h_chan(c, g, out, 0, 2, 0, NULL));
	/* A ptask with only an output never fires either. */
	REQUIRE_OK(h_ptask(c, g, 1, &q));
	REQUIRE_OK(h_port(c, q, PTASK_PORT_OUTPUT, 0, &qo));
	REQUIRE_OK(h_db(c, 8, &db));
	REQUIRE_OK(h_push(c, c1, db));
	REQUIRE_OK(h_push(c, c2, db));
	REQUIRE_OK(h_run(c, g));
	CHECK_EQ(h_ready_len(), 0);
	REQUIRE_OK(h_push(c, c1, db));
	REQUIRE_OK(h_push(c, c2, db));
	CHECK_EQ(h_ready_len(), 0);
	CHECK_ERR(h_passthrough(e, 4), -EAGAIN);
	CHECK_EQ(h_ptask_obj(p)->state, PTASK_STATE_WAITING);
	CHECK_EQ(h_ptask_obj(q)->state, PTASK_STATE_WAITING);
	CHECK_EQ(h_db_obj(db)->refs, 3);	/* hold + two sticky ports */
}

/*
 * Fan-out: output port of p feeds A (cap 1), B (cap 3) and C (cap 1).
 * All or nothing: while A or C is full the output stays in the port and
 * p stays Completed; it moves on to all three once both drained.
 */
static void test_fanout_all_or_nothing(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	u32 g = mkgraph(c), p, in, out, ch_in, A, B, C, d[4], i, x;
	struct ptask_port *op;

	REQUIRE_OK(h_ptask(c, g, 2, &p));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, 0, &in));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_OUTPUT, 0, &out));
	REQUIRE_OK(h_chan(c, g, 0, in, 4, 0, &ch_in));
	REQUIRE_OK(h_chan(c, g, out, 0, 1, 0, &A));
	REQUIRE_OK(h_chan(c, g, out, 0, 3, 0, &B));
	REQUIRE_OK(h_chan(c, g, out, 0, 1, 0, &C));
	op = h_port_obj(out);
	REQUIRE_OK(h_run(c, g));
	for (i = 0; i < 4; i++) {
		REQUIRE_OK(h_db(c, 8, &d[i]));
		REQUIRE_OK(h_push(c, ch_in, d[i]));
		REQUIRE_OK(h_release(c, d[i]));
	}
	/* d0 goes everywhere: one reference per channel. */
	CHECK_EQ(h_passthrough(e, 1), 1);
	CHECK_EQ(h_db_obj(d[0])->refs, 3);
	CHECK_EQ(h_chan_obj(A)->count, 1);
	CHECK_EQ(h_chan_obj(B)->count, 1);
	CHECK_EQ(h_chan_obj(C)->count, 1);
	CHECK(!op->occupant);
	CHECK(h_ready_has(p));		/* Waiting again, and d1 is there */
	/* d1: A and C are full, so it stays in the port; B gets nothing. */
	CHECK_EQ(h_passthrough(e, 1), 1);
	CHECK_EQ(op->occupant, h_db_obj(d[1]));
	CHECK_EQ(h_db_obj(d[1])->refs, 1);
	CHECK_EQ(h_chan_obj(B)->count, 1);
	CHECK_EQ(h_ptask_obj(p)->state, PTASK_STATE_COMPLETED);
	CHECK_EQ(h_ready_len(), 0);
	CHECK_ERR(h_passthrough(e, 1), -EAGAIN);
	/* Draining A alone is not enough. */
	REQUIRE_OK(h_pull(c, A, &x));
	CHECK_EQ(x, d[0]);
	CHECK_EQ(op->occupant, h_db_obj(d[1]));
	CHECK_EQ(h_chan_obj(A)->count, 0);
	CHECK_EQ(h_ptask_obj(p)->state, PTASK_STATE_COMPLETED);
	/* Draining C too releases it to all three, and p runs again. */
	REQUIRE_OK(h_pull(c, C, &x));
	CHECK_EQ(x, d[0]);
	CHECK(!op->occupant);
	CHECK_EQ(h_chan_obj(A)->count, 1);
	CHECK_EQ(h_chan_obj(B)->count, 2);
	CHECK_EQ(h_chan_obj(C)->count, 1);
	CHECK_EQ(h_db_obj(d[1])->refs, 3);
	CHECK_EQ(h_db_obj(d[0])->refs, 3);	/* c's hold (2 pulls) + B */
	CHECK_EQ(h_ptask_obj(p)->state, PTASK_STATE_QUEUED);
	/* B keeps FIFO order. */
	REQUIRE_OK(h_pull(c, B, &x));
	CHECK_EQ(x, d[0]);
	REQUIRE_OK(h_pull(c, B, &x));
	CHECK_EQ(x, d[1]);
	CHECK_ERR(h_pull(c, B, &x), -EAGAIN);
	/* Terminate with an output held in the port: released. */
	CHECK_EQ(h_passthrough(e, 1), 1);
	CHECK_EQ(op->occupant, h_db_obj(d[2]));
	REQUIRE_OK(h_terminate(c, g));
	CHECK(!op->occupant);
	CHECK(!h_db_obj(d[2]));
	CHECK(!h_db_obj(d[3]));
}

/* Waiting -> Queued -> Executing -> Completed -> Waiting, as p->state. */
static void test_state_machine(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	u32 g = mkgraph(c), ch_in, ch_out, p, db, x;
	struct h_take *t = calloc(1, sizeof(*t));
	struct ptask_exec_output o = { .index = 1 };
	struct ptask_ptask *po;

	REQUIRE(t);
	p = mkpipe(c, g, 1, 1, &ch_in, &ch_out);
	po = h_ptask_obj(p);
	CHECK_EQ(po->state, PTASK_STATE_WAITING);
	REQUIRE_OK(h_db(c, 8, &db));
	REQUIRE_OK(h_push(c, ch_in, db));
	CHECK_EQ(po->state, PTASK_STATE_WAITING);	/* not running */
	REQUIRE_OK(h_run(c, g));
	CHECK_EQ(po->state, PTASK_STATE_QUEUED);
	CHECK(po->queued_ns != 0);
	REQUIRE_OK(h_take(e, 4, 16, t));
	CHECK_EQ(t->n_inv, 1);
	CHECK_EQ(t->inv[0].ptask, p);
	CHECK_EQ(t->inv[0].graph, g);
	CHECK_EQ(t->inv[0].n_ports, 2);
	CHECK_EQ(t->inv[0].queued_ns, po->queued_ns);
	CHECK_EQ(po->state, PTASK_STATE_EXECUTING);
	CHECK(po->running != NULL);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 1);
	/* Fill the output channel so that the output is held. */
	REQUIRE_OK(h_push(c, ch_in, db));	/* next input */
	o.datablock = db;
	REQUIRE_OK(h_complete(e, t->inv[0].id, 0, &o, 1));
	CHECK_EQ(h_ns.counts[PTASK_COUNT_INVOCATIONS], 0);
	CHECK_EQ(po->state, PTASK_STATE_QUEUED);	/* output went out */
	REQUIRE_OK(h_take(e, 4, 16, t));
	CHECK_EQ(po->state, PTASK_STATE_EXECUTING);
	REQUIRE_OK(h_complete(e, t->inv[0].id, 0, &o, 1));
	CHECK_EQ(po->state, PTASK_STATE_COMPLETED);	/* ch_out is full */
	CHECK(!po->running);
	CHECK_EQ(po->invocations, 2);
	REQUIRE_OK(h_pull(c, ch_out, &x));
	CHECK_EQ(po->state, PTASK_STATE_WAITING);	/* no input left */
	CHECK_EQ(h_chan_obj(ch_out)->count, 1);
	free(t);
}

/* A datablock in several channels, ports and holds at once. */
/*
 * The outside attack of issue 13: push -> pass-through -> pull, never
 * released, added a reference a cycle.  A client's hold on one
 * datablock stops at PTASK_HOLD_MAX: the pull past it is -EMFILE and
 * the datablock stays in the channel for a pull after a release.
 */
static void test_hold_bounded(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	u32 g, ch_in, ch_out, db, x = 0;
	struct ptask_hold *h;

	REQUIRE_OK(h_graph(c, "hb", PTASK_GRAPH_CREATE, 0600, &g));
	mkpipe(c, g, 4, 4, &ch_in, &ch_out);
	REQUIRE_OK(h_db(c, 8, &db));
	REQUIRE_OK(h_run(c, g));
	h = ptask_client_find_hold(c, h_db_obj(db));
	REQUIRE(h);
	/* as if PTASK_HOLD_MAX - 1 earlier cycles had been pulled */
	h->count = PTASK_HOLD_MAX - 1;
	h_db_obj(db)->refs += PTASK_HOLD_MAX - 2;
	REQUIRE_OK(h_push(c, ch_in, db));
	CHECK_EQ(h_passthrough(e, 2), 1);
	CHECK_OK(h_pull(c, ch_out, &x));
	CHECK_EQ(x, db);
	CHECK_EQ(h->count, PTASK_HOLD_MAX);
	REQUIRE_OK(h_push(c, ch_in, db));
	CHECK_EQ(h_passthrough(e, 2), 1);
	CHECK_ERR(h_pull(c, ch_out, &x), -EMFILE);
	CHECK_EQ(h->count, PTASK_HOLD_MAX);
	/* nothing lost: a release, and the same pull succeeds */
	REQUIRE_OK(h_release(c, db));
	CHECK_OK(h_pull(c, ch_out, &x));
	CHECK_EQ(x, db);
	/* back to one hold, so the client's end frees it */
	h->count = 1;
	h_db_obj(db)->refs = 1;
	ptask_core_client_destroy(c);
	CHECK(!h_db_obj(db));
	CHECK_EQ(os_user_buffers, 0);
}

/*
 * A datablock's count saturates instead of wrapping (refcount_t's
 * semantics): past PTASK_REFS_SATURATED it stays, said once, and puts
 * leave it there: the datablock is kept, never freed while referenced.
 */
static void test_refs_saturate(void)
{
	struct ptask_client *c = h_client();
	struct ptask_datablock *d;
	unsigned long said = os_user_saturations;
	u32 db;

	REQUIRE_OK(h_db(c, 8, &db));
	d = h_db_obj(db);
	d->refs = PTASK_REFS_SATURATED - 2;
	ptask_datablock_get(d);
	CHECK_EQ(d->refs, PTASK_REFS_SATURATED - 1);
	CHECK_EQ(os_user_saturations, said);
	ptask_datablock_get(d);
	CHECK_EQ(d->refs, PTASK_REFS_SATURATED);
	CHECK_EQ(os_user_saturations, said + 1);
	ptask_datablock_get(d);
	CHECK_EQ(d->refs, PTASK_REFS_SATURATED);
	CHECK_EQ(os_user_saturations, said + 1);	/* said once */
	ptask_datablock_put(c->ns, d);
	ptask_datablock_put(c->ns, d);
	CHECK_EQ(d->refs, PTASK_REFS_SATURATED);
	CHECK(h_db_obj(db) == d);
	d->refs = 1;			/* so the test frees it */
	ptask_core_client_destroy(c);
	CHECK(!h_db_obj(db));
	CHECK_EQ(os_user_buffers, 0);
}

static void test_refcounts(void)
{
	struct ptask_client *c = h_client(), *c2 = h_client(),
			    *e = h_executor();
	u32 g, ch_in, ch_out, p, out2, db, x;

	REQUIRE_OK(h_graph(c, "rc", PTASK_GRAPH_CREATE, 0666, &g));
	REQUIRE_OK(h_graph(c2, "rc", 0, 0, NULL));
	p = mkpipe(c, g, 4, 4, &ch_in, &ch_out);
	(void)p;
	REQUIRE_OK(h_db(c, 8, &db));
	CHECK_EQ(h_db_obj(db)->refs, 1);
	REQUIRE_OK(h_push(c, ch_in, db));	/* port */
	REQUIRE_OK(h_push(c, ch_in, db));	/* slot */
	REQUIRE_OK(h_push(c, ch_in, db));	/* slot */
	CHECK_EQ(h_db_obj(db)->refs, 4);
	REQUIRE_OK(h_run(c, g));
	/* One invocation per take: p is Executing until completed. */
	CHECK_EQ(h_passthrough(e, 2), 1);
	CHECK_EQ(h_passthrough(e, 2), 1);
	/* 1 hold + 1 port + 2 in ch_out */
	CHECK_EQ(h_db_obj(db)->refs, 4);
	REQUIRE_OK(h_pull(c2, ch_out, &out2));
	CHECK_EQ(out2, db);
	REQUIRE_OK(h_pull(c2, ch_out, &x));
	CHECK_EQ(h_db_obj(db)->refs, 4);	/* 3 holds + port */
	CHECK_EQ(ptask_client_find_hold(c2, h_db_obj(db))->count, 2);
	REQUIRE_OK(h_release(c, db));
	CHECK_EQ(h_db_obj(db)->refs, 3);
	CHECK_ERR(h_release(c, db), -ENOENT);	/* c holds it no more */
	CHECK_EQ(h_passthrough(e, 2), 1);
	REQUIRE_OK(h_release(c2, db));
	REQUIRE_OK(h_release(c2, db));
	CHECK_EQ(h_db_obj(db)->refs, 1);	/* in ch_out */
	CHECK_ERR(h_release(c2, db), -ENOENT);
	ptask_core_client_destroy(c2);
	ptask_core_client_destroy(c);		/* frees the graph */
	CHECK(!h_db_obj(db));
	CHECK_EQ(os_user_buffers, 0);
}

/* An output port with no channel drops its datablock. */
static void test_output_without_channel(void)
{
	struct ptask_client *c = h_client(), *e = h_executor();
	u32 g = mkgraph(c), p, in, out, ch, db;

	REQUIRE_OK(h_ptask(c, g, 2, &p));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_INPUT, 0, &in));
	REQUIRE_OK(h_port(c, p, PTASK_PORT_OUTPUT, 0, &out));
	REQUIRE_OK(h_chan(c, g, 0, in, 2, 0, &ch));
	REQUIRE_OK(h_run(c, g));
	REQUIRE_OK(h_db(c, 8, &db));
	REQUIRE_OK(h_push(c, ch, db));
	REQUIRE_OK(h_release(c, db));
	CHECK_EQ(h_passthrough(e, 1), 1);
	CHECK(!h_db_obj(db));
	CHECK_EQ(h_ptask_obj(p)->state, PTASK_STATE_WAITING);
}

static const struct h_test tests[] = {
	H_TEST(test_fits_array),
	H_TEST(test_fits_records),
	H_TEST(test_fits_opaque),
	H_TEST(test_channel_template_compat),
	H_TEST(test_push_mismatch),
	H_TEST(test_records_bounded_by_bytes),
	H_TEST(test_capacity_and_eagain),
	H_TEST(test_fifo_order),
	H_TEST(test_sticky),
	H_TEST(test_sticky_only_never_fires),
	H_TEST(test_fanout_all_or_nothing),
	H_TEST(test_state_machine),
	H_TEST(test_refcounts),
	H_TEST(test_hold_bounded),
	H_TEST(test_refs_saturate),
	H_TEST(test_output_without_channel),
};

int main(int argc, char **argv)
{
	return h_main(tests, ARRAY_SIZE(tests), argc, argv);
}
