// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * graphs.c - the end-to-end tests' graphs; see graphs.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "tests/twins/test_code.h"
#include "graphs.h"

#define GEMM_N		48	/* sgemm matrices are GEMM_N x GEMM_N */

/* The gemm example's and the benchmarks' PTX (gemm_ptx.S, kernels_ptx.S). */
extern const char gemm_ptx[], gemm_ptx_end[], bench_ptx[], bench_ptx_end[];

int e2e_double_body(struct ptask_cpu_call *call, void *arg)
{
	const float *in = call->ports[0].data;
	float *out = call->ports[1].data;
	uint64_t i;

	(void)arg;
	if (!in || !out || call->ports[0].bytes != call->ports[1].bytes)
		return -EINVAL;
	for (i = 0; i < call->ports[0].bytes / sizeof(float); i++)
		out[i] = 2.0f * in[i];
	return 0;
}

/* Pushes @bytes of @v by value on sticky channel @ch (a PARAM template). */
static int push_param(struct ptask_ctx *ctx, uint32_t tmpl, uint32_t ch,
		      const void *v, size_t bytes)
{
	struct ptask_db *db;
	void *p;
	int err;

	err = ptask_datablock_create(ctx, tmpl, 0, 1, &db);
	if (err)
		return err;
	err = ptask_datablock_map(ctx, db, &p);
	if (!err) {
		memcpy(p, v, bytes);
		err = ptask_push(ctx, ch, db, -1, PTASK_FOREVER);
	}
	ptask_datablock_release(ctx, db);
	return err;
}

static int push_int(struct ptask_ctx *ctx, uint32_t tmpl, uint32_t ch,
		    int32_t v)
{
	return push_param(ctx, tmpl, ch, &v, sizeof(v));
}

int e2e_chain_build_code(struct e2e_chain *ch, const char *entry,
			 const char *code, size_t code_len)
{
	const uint32_t vec_dims[3] = { E2E_N, 1, 1 }, one[3] = { 1, 1, 1 };
	uint32_t vec, n_tmpl, add, dbl, pa, pb, pc, pn, din, dout, n_ch;
	struct ptask_ctx *ctx = ch->ctx;
	int err;

	ch->mul = 2.0f;
	err = ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600, &ch->graph);
	err = err ?: ptask_template_open(ctx, ch->graph, "vec", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_GLOBAL, sizeof(float), vec_dims, &vec);
	err = err ?: ptask_template_open(ctx, ch->graph, "n", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_PARAM, sizeof(int32_t), one, &n_tmpl);
	err = err ?: ptask_gpu_ptask_open(ctx, ch->graph, "add", code, code_len,
					  entry, 4, &add);
	err = err ?: ptask_port_open(ctx, add, "a", PTASK_PORT_INPUT, 0, vec, 0, 0, &pa);
	err = err ?: ptask_port_open(ctx, add, "b", PTASK_PORT_INPUT, 0, vec, 1, 0, &pb);
	err = err ?: ptask_port_open(ctx, add, "c", PTASK_PORT_OUTPUT, 0, vec, 2, 0, &pc);
	err = err ?: ptask_port_open(ctx, add, "n", PTASK_PORT_STICKY, 0, n_tmpl, 3, 0, &pn);
	err = err ?: ptask_cpu_ptask_open(ctx, ch->graph, "double", 2,
					  e2e_double_body, NULL, &dbl);
	err = err ?: ptask_port_open(ctx, dbl, "in", PTASK_PORT_INPUT, 0, vec, 0, 0, &din);
	err = err ?: ptask_port_open(ctx, dbl, "out", PTASK_PORT_OUTPUT, 0, vec, 1, 0, &dout);
	err = err ?: ptask_channel_open(ctx, ch->graph, "a", 0, pa, 4, 0, &ch->in_a);
	err = err ?: ptask_channel_open(ctx, ch->graph, "b", 0, pb, 4, 0, &ch->in_b);
	err = err ?: ptask_channel_open(ctx, ch->graph, "n", 0, pn, 1, 0, &n_ch);
	err = err ?: ptask_channel_open(ctx, ch->graph, "c", pc, din, 4, 0, NULL);
	err = err ?: ptask_channel_open(ctx, ch->graph, "out", dout, 0, 4, 0, &ch->out);
	err = err ?: push_int(ctx, n_tmpl, n_ch, E2E_N);
	return err ?: ptask_graph_run(ctx, ch->graph);
}

int e2e_chain_build(struct e2e_chain *ch, const char *entry)
{
	return e2e_chain_build_code(ch, entry, ptask_test_code,
				    sizeof(ptask_test_code));
}

/*
 * A new graph for @ch with the GPU chains' templates: "vec" (E2E_N
 * floats, global) in *@vec, "n" (an int32 parameter) in *@n_tmpl.
 */
static int vec_graph_open(struct e2e_chain *ch, uint32_t *vec, uint32_t *n_tmpl)
{
	const uint32_t vec_dims[3] = { E2E_N, 1, 1 }, one[3] = { 1, 1, 1 };
	struct ptask_ctx *ctx = ch->ctx;
	int err;

	err = ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600, &ch->graph);
	err = err ?: ptask_template_open(ctx, ch->graph, "vec", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_GLOBAL, sizeof(float), vec_dims, vec);
	return err ?: ptask_template_open(ctx, ch->graph, "n", PTASK_TEMPLATE_ARRAY,
					  PTASK_BIND_PARAM, sizeof(int32_t), one, n_tmpl);
}

/* Hop @h's sticky "n" (parameter 3 of ptask @pt), fed E2E_N once. */
static int sticky_n(struct e2e_chain *ch, uint32_t pt, uint32_t n_tmpl, int h)
{
	uint32_t pn, c;
	char name[16];
	int err;

	err = ptask_port_open(ch->ctx, pt, "n", PTASK_PORT_STICKY, 0, n_tmpl, 3, 0, &pn);
	snprintf(name, sizeof(name), "n%d", h);
	err = err ?: ptask_channel_open(ch->ctx, ch->graph, name, 0, pn, 1, 0, &c);
	return err ?: push_int(ch->ctx, n_tmpl, c, E2E_N);
}

int e2e_gpu_chain_hops_build(struct e2e_chain *ch, int hops)
{
	const char *code = ptask_test_code;
	const size_t len = sizeof(ptask_test_code);
	uint32_t vec, n_tmpl, pt, pa, pb, pout, prev_out = 0;
	struct ptask_ctx *ctx = ch->ctx;
	char name[16];
	int err, h;

	if (hops < 1 || hops > 8)
		return -EINVAL;
	err = vec_graph_open(ch, &vec, &n_tmpl);
	/* hop 0: c = a + b; each next hop: its input twice, so x 2 */
	for (h = 0; !err && h < hops; h++) {
		snprintf(name, sizeof(name), "add%d", h);
		err = ptask_gpu_ptask_open(ctx, ch->graph, name, code, len,
					   "vec_add", 4, &pt);
		err = err ?: ptask_port_open(ctx, pt, "a", PTASK_PORT_INPUT, 0, vec, 0, 0, &pa);
		err = err ?: ptask_port_open(ctx, pt, "b", PTASK_PORT_INPUT, 0, vec, 1, 0, &pb);
		err = err ?: ptask_port_open(ctx, pt, "c", PTASK_PORT_OUTPUT, 0, vec, 2, 0, &pout);
		err = err ?: sticky_n(ch, pt, n_tmpl, h);
		if (!err && !h) {
			err = ptask_channel_open(ctx, ch->graph, "a", 0, pa, 4, 0, &ch->in_a);
			err = err ?: ptask_channel_open(ctx, ch->graph, "b", 0, pb, 4, 0, &ch->in_b);
		} else if (!err) {
			snprintf(name, sizeof(name), "to%da", h);
			err = ptask_channel_open(ctx, ch->graph, name, prev_out, pa, 4, 0, NULL);
			snprintf(name, sizeof(name), "to%db", h);
			err = err ?: ptask_channel_open(ctx, ch->graph, name, prev_out, pb, 4, 0, NULL);
		}
		prev_out = pout;
	}
	err = err ?: ptask_channel_open(ctx, ch->graph, "out", prev_out, 0, 4, 0, &ch->out);
	ch->mul = (float)(1 << (hops - 1));
	return err ?: ptask_graph_run(ctx, ch->graph);
}

int e2e_gpu_line_build(struct e2e_chain *ch, int hops)
{
	const char *code = ptask_test_code;
	const size_t len = sizeof(ptask_test_code);
	const uint32_t one[3] = { 1, 1, 1 };
	uint32_t vec, n_tmpl, f_tmpl, pt, px, pb, pout, pf, c, prev = 0;
	const float alpha = 2.0f;
	struct ptask_ctx *ctx = ch->ctx;
	char name[16];
	int err, h;

	if (hops < 2 || hops > 8)
		return -EINVAL;
	err = vec_graph_open(ch, &vec, &n_tmpl);
	err = err ?: ptask_template_open(ctx, ch->graph, "f", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_PARAM, sizeof(float), one, &f_tmpl);
	/* hop 0: c = a + b; each next hop: y = 2 x, alpha and n sticky */
	for (h = 0; !err && h < hops; h++) {
		snprintf(name, sizeof(name), "hop%d", h);
		err = ptask_gpu_ptask_open(ctx, ch->graph, name, code, len,
					   h ? "vec_scale" : "vec_add", 4, &pt);
		err = err ?: ptask_port_open(ctx, pt, "x", PTASK_PORT_INPUT, 0, vec, 0, 0, &px);
		if (!h) {
			err = err ?: ptask_port_open(ctx, pt, "b", PTASK_PORT_INPUT, 0, vec, 1, 0, &pb);
			err = err ?: ptask_port_open(ctx, pt, "y", PTASK_PORT_OUTPUT, 0, vec, 2, 0, &pout);
		} else {
			err = err ?: ptask_port_open(ctx, pt, "y", PTASK_PORT_OUTPUT, 0, vec, 1, 0, &pout);
			err = err ?: ptask_port_open(ctx, pt, "alpha", PTASK_PORT_STICKY, 0, f_tmpl, 2, 0, &pf);
			snprintf(name, sizeof(name), "alpha%d", h);
			err = err ?: ptask_channel_open(ctx, ch->graph, name, 0, pf, 1, 0, &c);
			err = err ?: push_param(ctx, f_tmpl, c, &alpha, sizeof(alpha));
		}
		err = err ?: sticky_n(ch, pt, n_tmpl, h);
		if (!err && !h) {
			err = ptask_channel_open(ctx, ch->graph, "a", 0, px, 4, 0, &ch->in_a);
			err = err ?: ptask_channel_open(ctx, ch->graph, "b", 0, pb, 4, 0, &ch->in_b);
		} else if (!err) {
			snprintf(name, sizeof(name), "to%d", h);
			err = ptask_channel_open(ctx, ch->graph, name, prev, px, 4, 0, NULL);
		}
		prev = pout;
	}
	err = err ?: ptask_channel_open(ctx, ch->graph, "out", prev, 0, 4, 0, &ch->out);
	ch->mul = (float)(1 << (hops - 1));
	return err ?: ptask_graph_run(ctx, ch->graph);
}

int e2e_gpu_chain_build(struct e2e_chain *ch)
{
	return e2e_gpu_chain_hops_build(ch, 2);
}

/* Makes a datablock of @n floats, @f(i, k) each, pushes it, releases it. */
/* A new datablock of f(i, k), pushed (@async: queued) and released. */
static int push_vec(struct ptask_ctx *ctx, uint32_t ch, int k,
		    float (*f)(int i, int k), int n, bool async)
{
	struct ptask_db *db;
	float *p;
	int err, i;

	err = ptask_datablock_create(ctx, 0, n * sizeof(float), 0, &db);
	if (err)
		return err;
	err = ptask_datablock_map(ctx, db, (void **)&p);
	for (i = 0; !err && i < n; i++)
		p[i] = f(i, k);
	if (!err)
		err = async ? ptask_push_async(ctx, ch, db, -1) :
			      ptask_push(ctx, ch, db, -1, PTASK_FOREVER);
	ptask_datablock_release(ctx, db);
	return err;
}

static float vec_a(int i, int k)
{
	return (float)(i + k);
}

static float vec_b(int i, int k)
{
	(void)k;
	return (float)(2 * i);
}

int e2e_chain_push(struct e2e_chain *ch, int k)
{
	return push_vec(ch->ctx, ch->in_a, k, vec_a, E2E_N, false) ?:
	       push_vec(ch->ctx, ch->in_b, k, vec_b, E2E_N, false);
}

int e2e_chain_push_async(struct e2e_chain *ch, int k)
{
	return push_vec(ch->ctx, ch->in_a, k, vec_a, E2E_N, true) ?:
	       push_vec(ch->ctx, ch->in_b, k, vec_b, E2E_N, true);
}

int e2e_chain_pull_kept(struct e2e_chain *ch, int k, int64_t timeout_ns,
			struct ptask_db **out)
{
	const float mul = ch->mul ? ch->mul : 2.0f;
	struct ptask_db *db;
	float *p;
	int err, i;

	*out = NULL;
	err = ptask_pull(ch->ctx, ch->out, timeout_ns, &db);
	if (err)
		return err;
	err = ptask_db_bytes(db) == E2E_N * sizeof(float) ?
	      ptask_datablock_map(ch->ctx, db, (void **)&p) : -EMSGSIZE;
	for (i = 0; !err && i < E2E_N; i++)
		if (p[i] != mul * (float)(3 * i + k)) {
			printf("# round %d: element %d is %g, expected %g\n",
			       k, i, p[i], mul * (float)(3 * i + k));
			err = -EBADMSG;
		}
	*out = db;
	return err;
}

int e2e_chain_pull(struct e2e_chain *ch, int k, int64_t timeout_ns)
{
	struct ptask_db *db;
	int err;

	err = e2e_chain_pull_kept(ch, k, timeout_ns, &db);
	if (db)
		ptask_datablock_release(ch->ctx, db);
	return err;
}

static float mat_a(int i, int k)
{
	return (float)((i * 7 + k) % 13) - 6.0f;
}

static float mat_b(int i, int k)
{
	return (float)((i * 5 + 3 * k) % 11) - 5.0f;
}

/* C against its reference: small integers, exact in float in any order. */
static int gemm_check(const float *c, int k)
{
	int i, j, l, err = 0;
	float want;

	for (i = 0; !err && i < GEMM_N; i++)
		for (j = 0; !err && j < GEMM_N; j++) {
			want = 0;
			for (l = 0; l < GEMM_N; l++)
				want += mat_a(i * GEMM_N + l, k) *
					mat_b(l * GEMM_N + j, k);
			if (c[i * GEMM_N + j] != want) {
				printf("# C[%d][%d] is %g, expected %g\n", i, j,
				       c[i * GEMM_N + j], want);
				err = -EBADMSG;
			}
		}
	return err;
}

int e2e_gemm_once(struct ptask_ctx *ctx, int k)
{
	const uint32_t dims[3] = { GEMM_N * GEMM_N, 1, 1 }, one[3] = { 1, 1, 1 };
	uint32_t g, mat, n_tmpl, mm, pa, pb, pc, pn, ca, cb, cn, cc;
	struct ptask_db *db;
	const float *c;
	int err;

	err = ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600, &g);
	err = err ?: ptask_template_open(ctx, g, "mat", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_GLOBAL, sizeof(float), dims, &mat);
	err = err ?: ptask_template_open(ctx, g, "n", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_PARAM, sizeof(int32_t), one, &n_tmpl);
	err = err ?: ptask_gpu_ptask_open(ctx, g, "mm", gemm_ptx,
					  (size_t)(gemm_ptx_end - gemm_ptx), "sgemm",
					  4, &mm);
	err = err ?: ptask_port_open(ctx, mm, "A", PTASK_PORT_INPUT, 0, mat, 0, 0, &pa);
	err = err ?: ptask_port_open(ctx, mm, "B", PTASK_PORT_INPUT, 0, mat, 1, 0, &pb);
	err = err ?: ptask_port_open(ctx, mm, "C", PTASK_PORT_OUTPUT, 0, mat, 2, 0, &pc);
	err = err ?: ptask_port_open(ctx, mm, "n", PTASK_PORT_STICKY, 0, n_tmpl, 3, 0, &pn);
	err = err ?: ptask_channel_open(ctx, g, "A", 0, pa, 2, 0, &ca);
	err = err ?: ptask_channel_open(ctx, g, "B", 0, pb, 2, 0, &cb);
	err = err ?: ptask_channel_open(ctx, g, "n", 0, pn, 1, 0, &cn);
	err = err ?: ptask_channel_open(ctx, g, "C", pc, 0, 2, 0, &cc);
	err = err ?: push_int(ctx, n_tmpl, cn, GEMM_N);
	err = err ?: ptask_graph_run(ctx, g);
	err = err ?: push_vec(ctx, ca, k, mat_a, GEMM_N * GEMM_N, false);
	err = err ?: push_vec(ctx, cb, k, mat_b, GEMM_N * GEMM_N, false);
	err = err ?: ptask_pull(ctx, cc, 30 * E2E_SEC, &db);
	if (err)
		return err;
	err = ptask_datablock_map(ctx, db, (void **)&c) ?: gemm_check(c, k);
	ptask_datablock_release(ctx, db);
	return err ?: ptask_graph_close(ctx, g);
}

int e2e_busy_build(struct e2e_busy *b, uint64_t ns)
{
	const uint32_t one[3] = { 1, 1, 1 };
	uint32_t tw, tn, p, pin, pout, pns, ns_ch;
	struct ptask_ctx *ctx = b->ctx;
	int err;

	err = ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600, &b->graph);
	err = err ?: ptask_template_open(ctx, b->graph, "w", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_GLOBAL, 4, one, &tw);
	err = err ?: ptask_template_open(ctx, b->graph, "ns", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_PARAM, 8, one, &tn);
	err = err ?: ptask_gpu_ptask_open(ctx, b->graph, "busy", bench_ptx,
					  (size_t)(bench_ptx_end - bench_ptx),
					  "ptask_busy", 3, &p);
	err = err ?: ptask_port_open(ctx, p, "in", PTASK_PORT_INPUT, 0, tw, 0, 0, &pin);
	err = err ?: ptask_port_open(ctx, p, "out", PTASK_PORT_OUTPUT, 0, tw, 1, 0, &pout);
	err = err ?: ptask_port_open(ctx, p, "ns", PTASK_PORT_STICKY, 0, tn, 2, 0, &pns);
	err = err ?: ptask_channel_open(ctx, b->graph, "in", 0, pin, 2, 0, &b->in);
	err = err ?: ptask_channel_open(ctx, b->graph, "out", pout, 0, 2, 0, &b->out);
	err = err ?: ptask_channel_open(ctx, b->graph, "ns", 0, pns, 1, 0, &ns_ch);
	err = err ?: ptask_graph_run(ctx, b->graph);
	return err ?: push_param(ctx, tn, ns_ch, &ns, sizeof(ns));
}

int e2e_busy_round(struct e2e_busy *b, uint32_t seq)
{
	struct ptask_db *in, *out;
	uint32_t *pi, *po;
	int err = ptask_datablock_create(b->ctx, 0, 4, 0, &in);

	if (err)
		return err;
	err = ptask_datablock_map(b->ctx, in, (void **)&pi);
	if (!err) {
		pi[0] = seq;
		err = ptask_push(b->ctx, b->in, in, -1, PTASK_FOREVER);
	}
	ptask_datablock_release(b->ctx, in);
	err = err ?: ptask_pull(b->ctx, b->out, 60 * E2E_SEC, &out);
	if (err)
		return err;
	err = ptask_datablock_map(b->ctx, out, (void **)&po);
	if (!err && po[0] != seq + 1)
		err = -EBADMSG;
	ptask_datablock_release(b->ctx, out);
	return err;
}
