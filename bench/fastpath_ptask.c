// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fastpath_ptask.c - the ptask side of the fast-path benchmark
 * (fastpath.h), written only against libptask.h, as a new user would
 * write it: a context, a graph of GPU ptasks running ptask_empty
 * (out[0] = in[0] + 1, bench/kernels.cu) joined by channels, and rounds
 * of push -> pull -> map -> read and check -> release, the clock around
 * all of it.
 *
 *   P1    one chain of one ptask, one invocation at a time: "reuse" (the
 *         input datablock made and mapped once, written each round) and
 *         "fresh" (made, mapped, written, pushed and released each round)
 *   P1b   @inflight invocations in flight: "batch" (push them all, then
 *         pull them all; one sample per batch) and "threads" (a pusher
 *         and a puller thread, at most @inflight apart)
 *   P11   chains of k ptasks, intermediates never pulled (they stay on
 *         the device), 4 bytes and @big_bytes
 *   P1c   one gang member: its own context and graph, P1 reuse rounds
 *         until the gang's deadline
 *   idle  a connected client with a graph, idle: its CPU and ptaskd's
 *
 * Every output is checked against in[0] + k computed here before its
 * round counts; a mismatch ends the run with -EBADMSG.
 *
 * Locking: P1b's threads share struct p1b_pair under its mutex (slot
 * states, the first error); each datablock object stays with one thread
 * (inputs with the pusher, outputs with the puller), as libptask.h asks.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "libptask.h"
#include "bench/fastpath.h"

#define P1C_WARMUP	200
#define IDLE_WARMUP	200
#define IDLE_SETTLE_MS	500

/**
 * struct chain - a linear graph: input -> k ptasks -> output
 * @graph: the graph
 * @in: its input channel
 * @out: its output channel
 * @k: ptasks in the chain (each adds one)
 * @bytes: size of every datablock along it
 */
struct chain {
	uint32_t graph, in, out;
	int k;
	uint64_t bytes;
};

static int say(int err, const char *what)
{
	if (err < 0)
		fprintf(stderr, "fastpath: ptask: %s: %s\n", what, strerror(-err));
	return err;
}

static int open_ctx(struct ptask_ctx **ctx)
{
	return say(ptask_ctx_open(PTASK_MODE_AUTO, NULL, ctx), "ptask_ctx_open");
}

/* The mode a context opened now gets ("user", "kernel") into @buf. */
int fp_ptask_mode(char *buf, size_t len)
{
	struct ptask_ctx *ctx;
	int err = open_ctx(&ctx);

	if (err)
		return err;
	snprintf(buf, len, "%s", ptask_mode_name(ptask_ctx_mode(ctx)));
	ptask_ctx_close(ctx);
	return 0;
}

/* One ptask of the chain: ptask_empty, input and output of template @t. */
static int add_ptask(struct ptask_ctx *ctx, const struct fp_opts *o,
		     uint32_t graph, int i, uint32_t t, uint32_t *pin,
		     uint32_t *pout)
{
	const uint32_t one[3] = { 1, 1, 1 };
	char name[32];
	uint32_t p;
	int err;

	snprintf(name, sizeof(name), "add%d", i);
	err = ptask_gpu_ptask_open(ctx, graph, name, o->ptx, o->ptx_len,
				   "ptask_empty", 2, &p);
	err = err ?: ptask_port_open(ctx, p, "in", PTASK_PORT_INPUT, 0, t, 0, 0, pin);
	err = err ?: ptask_port_open(ctx, p, "out", PTASK_PORT_OUTPUT, 0, t, 1, 0, pout);
	err = err ?: ptask_set_geometry(ctx, p, one, one, 0);
	return say(err, "a chain's ptask");
}

/**
 * chain_build() - input -> @k ptasks -> output, running
 * @ctx: the context
 * @o: the options (the PTX)
 * @k: ptasks (>= 1)
 * @bytes: datablock size (a multiple of 4)
 * @capacity: every channel's
 * @c: out: the chain
 *
 * Return: 0 or -errno.
 */
static int chain_build(struct ptask_ctx *ctx, const struct fp_opts *o, int k,
		       uint64_t bytes, uint32_t capacity, struct chain *c)
{
	const uint32_t dims[3] = { (uint32_t)(bytes / 4), 1, 1 };
	uint32_t t, pin, pout, prev_out = 0, ch;
	char name[32];
	int i, err;

	c->k = k;
	c->bytes = bytes;
	err = say(ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600, &c->graph),
		  "ptask_graph_open");
	if (err)
		return err;
	err = ptask_template_open(ctx, c->graph, "blk", PTASK_TEMPLATE_ARRAY,
				  PTASK_BIND_GLOBAL, 4, dims, &t);
	for (i = 0; !err && i < k; i++) {
		err = add_ptask(ctx, o, c->graph, i, t, &pin, &pout);
		if (err)
			break;
		snprintf(name, sizeof(name), "c%d", i);
		err = i ? ptask_channel_open(ctx, c->graph, name, prev_out, pin,
					     capacity, 0, &ch) :
			  ptask_channel_open(ctx, c->graph, "in", 0, pin,
					     capacity, 0, &c->in);
		prev_out = pout;
	}
	err = err ?: ptask_channel_open(ctx, c->graph, "out", prev_out, 0,
					capacity, 0, &c->out);
	err = err ?: ptask_graph_run(ctx, c->graph);
	if (err) {
		say(err, "building the chain");
		ptask_graph_close(ctx, c->graph);
	}
	return err;
}

/* Pull one output of @c, check word 0 against @want, release it. */
static int pull_check(struct ptask_ctx *ctx, const struct chain *c,
		      uint32_t want)
{
	struct ptask_db *out;
	uint32_t *p;
	int err;

	err = ptask_pull(ctx, c->out, FP_PULL_TIMEOUT_NS, &out);
	if (err)
		return say(err, "ptask_pull");
	err = ptask_datablock_map(ctx, out, (void **)&p);
	if (!err && p[0] != want) {
		fprintf(stderr, "fastpath: ptask: chain of %d: got %u, want %u\n",
			c->k, p[0], want);
		err = -EBADMSG;
	}
	ptask_datablock_release(ctx, out);
	return say(err, "the output");
}

/* One round with the input datablock @in (mapped at @pin) reused. */
static int round_reuse(struct ptask_ctx *ctx, const struct chain *c,
		       struct ptask_db *in, uint32_t *pin, uint32_t v)
{
	pin[0] = v;
	return say(ptask_push(ctx, c->in, in, -1, FP_PULL_TIMEOUT_NS), "ptask_push") ?:
	       pull_check(ctx, c, v + (uint32_t)c->k);
}

/* One round with a new input datablock, released once pushed. */
static int round_fresh(struct ptask_ctx *ctx, const struct chain *c,
		       uint32_t v)
{
	struct ptask_db *in;
	uint32_t *pin;
	int err;

	err = ptask_datablock_create(ctx, 0, c->bytes, 0, &in);
	if (err)
		return say(err, "ptask_datablock_create");
	err = ptask_datablock_map(ctx, in, (void **)&pin);
	if (!err) {
		pin[0] = v;
		err = ptask_push(ctx, c->in, in, -1, FP_PULL_TIMEOUT_NS);
	}
	ptask_datablock_release(ctx, in);
	return say(err, "the fresh input") ?: pull_check(ctx, c, v + (uint32_t)c->k);
}

static int new_input(struct ptask_ctx *ctx, uint64_t bytes,
		     struct ptask_db **in, uint32_t **pin)
{
	int err = ptask_datablock_create(ctx, 0, bytes, 0, in);

	if (err) {
		*in = NULL;
		return say(err, "ptask_datablock_create");
	}
	err = ptask_datablock_map(ctx, *in, (void **)pin);
	if (err) {
		ptask_datablock_release(ctx, *in);
		*in = NULL;
	}
	return say(err, "ptask_datablock_map");
}

/*
 * @o->warmup untimed rounds, then @n timed ones of @c (reused input when
 * @fresh is 0) into series @key.
 */
static int timed_rounds(struct ptask_ctx *ctx, const struct fp_opts *o,
			const struct chain *c, int fresh, int n,
			struct fp_results *r, const char *key)
{
	struct ptask_db *in = NULL;
	uint32_t *pin = NULL, seed = o->seed;
	struct fp_series *s;
	double *us;
	int i, err;

	us = calloc((size_t)n, sizeof(*us));
	if (!us)
		return -ENOMEM;
	err = fresh ? 0 : new_input(ctx, c->bytes, &in, &pin);
	for (i = -o->warmup; !err && i < n; i++) {
		uint32_t v = fp_next_value(&seed);
		uint64_t t0 = fp_now_ns();

		err = fresh ? round_fresh(ctx, c, v) : round_reuse(ctx, c, in, pin, v);
		if (!err && i >= 0)
			us[i] = (double)(fp_now_ns() - t0) / 1e3;
	}
	if (in)
		ptask_datablock_release(ctx, in);
	s = err ? NULL : fp_results_add(r, "%s", key);
	if (!err && !s)
		err = -ENOSPC;
	if (!err)
		err = fp_stats_of(us, n, &s->st);
	if (!err)
		s->count = n;
	free(us);
	return err;
}

/**
 * fp_ptask_p1() - P1: "ptask.p1.reuse" and "ptask.p1.fresh"
 * @o: the options
 * @r: the results
 *
 * Return: 0 or -errno.
 */
int fp_ptask_p1(const struct fp_opts *o, struct fp_results *r)
{
	struct ptask_ctx *ctx;
	struct chain c;
	int err;

	err = open_ctx(&ctx);
	if (err)
		return err;
	err = chain_build(ctx, o, 1, 4, 2, &c);
	if (!err) {
		err = timed_rounds(ctx, o, &c, 0, o->rounds, r, "ptask.p1.reuse") ?:
		      timed_rounds(ctx, o, &c, 1, o->rounds, r, "ptask.p1.fresh");
		ptask_graph_close(ctx, c.graph);
	}
	ptask_ctx_close(ctx);
	return err;
}

/* --- P1b ---------------------------------------------------------------------- */

/**
 * struct p1b_pair - P1b's pusher and puller threads
 * @ctx: the context (shared: libptask allows any number of threads)
 * @c: the chain
 * @in: the input datablocks, one per slot (the pusher's)
 * @pin: their mappings
 * @slots: @in's entries, the most in flight
 * @total: invocations to push and pull
 * @mask: input values are seq ^ @mask (seq: the invocation's number)
 * @lock: protects @busy, @seq and @err
 * @freed: signalled when a slot is freed or @err set
 * @busy: slot i's input is in flight
 * @seq: the invocation slot i carries
 * @err: the first error, which stops both threads
 */
struct p1b_pair {
	struct ptask_ctx *ctx;
	const struct chain *c;
	struct ptask_db **in;
	uint32_t **pin;
	int slots;
	long long total;
	uint32_t mask;
	pthread_mutex_t lock;
	pthread_cond_t freed;
	unsigned char *busy;
	long long *seq;
	int err;
};

static void pair_fail(struct p1b_pair *pp, int err)
{
	pthread_mutex_lock(&pp->lock);
	if (!pp->err)
		pp->err = err;
	pthread_cond_broadcast(&pp->freed);
	pthread_mutex_unlock(&pp->lock);
}

static void *pusher(void *arg)
{
	struct p1b_pair *pp = arg;
	long long seq;
	int slot, err = 0;

	for (seq = 0; seq < pp->total && !err; seq++) {
		slot = (int)(seq % pp->slots);
		pthread_mutex_lock(&pp->lock);
		while (pp->busy[slot] && !pp->err)
			pthread_cond_wait(&pp->freed, &pp->lock);
		err = pp->err;
		pp->busy[slot] = 1;
		pp->seq[slot] = seq;
		pthread_mutex_unlock(&pp->lock);
		if (err)
			break;
		pp->pin[slot][0] = (uint32_t)seq ^ pp->mask;
		err = say(ptask_push(pp->ctx, pp->c->in, pp->in[slot], -1,
				     FP_PULL_TIMEOUT_NS), "ptask_push");
		if (err)
			pair_fail(pp, err);
	}
	return NULL;
}

/* Take one output: its value names its invocation, whose slot it frees. */
static int take_one(struct p1b_pair *pp)
{
	struct ptask_db *out;
	long long seq;
	uint32_t *p;
	int err, slot;

	err = say(ptask_pull(pp->ctx, pp->c->out, FP_PULL_TIMEOUT_NS, &out),
		  "ptask_pull");
	if (err)
		return err;
	err = say(ptask_datablock_map(pp->ctx, out, (void **)&p), "ptask_datablock_map");
	seq = err ? 0 : (long long)((p[0] - 1u) ^ pp->mask);
	slot = (int)(seq % pp->slots);
	pthread_mutex_lock(&pp->lock);
	if (!err && (seq >= pp->total || !pp->busy[slot] || pp->seq[slot] != seq)) {
		fprintf(stderr, "fastpath: ptask: P1b output %u matches no input in flight\n",
			p[0]);
		err = -EBADMSG;
	} else if (!err) {
		pp->busy[slot] = 0;
		pthread_cond_signal(&pp->freed);
	}
	pthread_mutex_unlock(&pp->lock);
	ptask_datablock_release(pp->ctx, out);
	return err;
}

static void *puller(void *arg)
{
	struct p1b_pair *pp = arg;
	long long i;
	int err = 0;

	for (i = 0; i < pp->total && !err; i++) {
		err = take_one(pp);
		if (err)
			pair_fail(pp, err);
	}
	return NULL;
}

/* The threads variant: @total invocations, the rate into "ptask.p1b.threads". */
static int p1b_threads(struct ptask_ctx *ctx, const struct fp_opts *o,
		       const struct chain *c, struct ptask_db **in,
		       uint32_t **pin, struct fp_results *r)
{
	struct p1b_pair pp = {
		.ctx = ctx, .c = c, .in = in, .pin = pin, .slots = o->inflight,
		.total = (long long)o->batches * o->inflight,
		.mask = fp_next_value(&(uint32_t){ o->seed ^ 0x5bd1e995u }) & 0x7fffffffu,
	};
	pthread_t tpush, tpull;
	struct fp_series *s;
	uint64_t t0, t1;
	int err;

	pp.busy = calloc((size_t)pp.slots, 1);
	pp.seq = calloc((size_t)pp.slots, sizeof(*pp.seq));
	if (!pp.busy || !pp.seq) {
		err = -ENOMEM;
		goto out;
	}
	pthread_mutex_init(&pp.lock, NULL);
	pthread_cond_init(&pp.freed, NULL);
	t0 = fp_now_ns();
	err = -pthread_create(&tpull, NULL, puller, &pp);
	if (err)
		goto out;
	err = -pthread_create(&tpush, NULL, pusher, &pp);
	if (err) {
		pair_fail(&pp, err);
	} else {
		pthread_join(tpush, NULL);
	}
	pthread_join(tpull, NULL);
	t1 = fp_now_ns();
	err = err ?: pp.err;
	s = err ? NULL : fp_results_add(r, "ptask.p1b.threads");
	if (s) {
		s->count = pp.total;
		s->per_s = (double)pp.total * 1e9 / (double)(t1 - t0);
	} else if (!err) {
		err = -ENOSPC;
	}
out:
	free(pp.busy);
	free(pp.seq);
	return err;
}

/*
 * One batch: push @n inputs (queued without waiting with @async:
 * ptask_push_async), pull @n outputs, each matched to its input.  The
 * first output's latency (from the first push to its pull returning)
 * into *@first_us.
 */
static int p1b_batch(struct ptask_ctx *ctx, const struct chain *c, int n,
		     bool async, struct ptask_db **in, uint32_t **pin,
		     uint32_t *want, unsigned char *seen, uint32_t *seed,
		     double *first_us)
{
	uint64_t t0 = fp_now_ns();
	struct ptask_db *out;
	int i, j, err = 0;
	uint32_t *p;

	if (n < 1)
		return -EINVAL;
	for (i = 0; i < n && !err; i++) {
		want[i] = fp_next_value(seed);
		pin[i][0] = want[i] - 1;
		if (async)
			err = say(ptask_push_async(ctx, c->in, in[i], -1),
				  "ptask_push_async");
		else
			err = say(ptask_push(ctx, c->in, in[i], -1, FP_PULL_TIMEOUT_NS),
				  "ptask_push");
	}
	memset(seen, 0, (size_t)n);
	for (i = 0; i < n && !err; i++) {
		err = say(ptask_pull(ctx, c->out, FP_PULL_TIMEOUT_NS, &out), "ptask_pull");
		if (err)
			break;
		if (!i)
			*first_us = (double)(fp_now_ns() - t0) / 1e3;
		err = say(ptask_datablock_map(ctx, out, (void **)&p), "ptask_datablock_map");
		/* in order is the likely case; else any input not yet matched */
		j = i;
		if (!err && (want[j] != p[0] || seen[j]))
			for (j = 0; j < n && (seen[j] || want[j] != p[0]); j++)
				;
		if (!err && j == n) {
			fprintf(stderr, "fastpath: ptask: P1b output %u matches no input\n", p[0]);
			err = -EBADMSG;
		} else if (!err) {
			seen[j] = 1;
		}
		ptask_datablock_release(ctx, out);
	}
	/* All ran (their outputs came): this only says whether one failed. */
	if (async && !err)
		err = say(ptask_sync(ctx), "ptask_sync");
	return err;
}

/* P1b's batch variants: "ptask.p1b.batch", or "ptask.p1b.async" with @async. */
static int p1b_batches(struct ptask_ctx *ctx, const struct fp_opts *o,
		       const struct chain *c, bool async, struct ptask_db **in,
		       uint32_t **pin, struct fp_results *r)
{
	int n = o->inflight, warm = o->warmup / n + 2, i, err = 0;
	unsigned char *seen = calloc((size_t)n, 1);
	uint32_t *want = calloc((size_t)n, sizeof(*want)), seed = o->seed;
	double *us = calloc((size_t)o->batches, sizeof(*us));
	double *first = calloc((size_t)o->batches, sizeof(*first)), f = 0;
	const char *key = async ? "ptask.p1b.async" : "ptask.p1b.batch";
	uint64_t t0, total = 0;
	struct fp_series *s, *sf;

	if (!seen || !want || !us || !first)
		err = -ENOMEM;
	for (i = -warm; !err && i < o->batches; i++) {
		t0 = fp_now_ns();
		err = p1b_batch(ctx, c, n, async, in, pin, want, seen, &seed,
				&f);
		if (!err && i >= 0) {
			us[i] = (double)(fp_now_ns() - t0) / 1e3;
			total += fp_now_ns() - t0;
			first[i] = f;
		}
	}
	s = err ? NULL : fp_results_add(r, key);
	sf = s ? fp_results_add(r, "%s.first", key) : NULL;
	if (!err && (!s || !sf))
		err = -ENOSPC;
	if (!err) {
		s->count = (long long)o->batches * n;
		s->per_s = (double)s->count * 1e9 / (double)total;
		err = fp_stats_of(us, o->batches, &s->st);
	}
	if (!err)
		err = fp_stats_of(first, o->batches, &sf->st);
	free(seen);
	free(want);
	free(us);
	free(first);
	return err;
}

/**
 * fp_ptask_p1b() - P1b: "ptask.p1b.batch", "ptask.p1b.async" and
 * "ptask.p1b.threads"
 * @o: the options
 * @r: the results
 *
 * Return: 0 or -errno.
 */
int fp_ptask_p1b(const struct fp_opts *o, struct fp_results *r)
{
	int n = o->inflight, made = 0, err;
	struct ptask_db **in = calloc((size_t)n, sizeof(*in));
	uint32_t **pin = calloc((size_t)n, sizeof(*pin));
	struct ptask_ctx *ctx = NULL;
	struct chain c;

	err = in && pin ? open_ctx(&ctx) : -ENOMEM;
	if (err)
		goto out_free;
	err = chain_build(ctx, o, 1, 4, (uint32_t)n, &c);
	if (err)
		goto out_close;
	for (made = 0; !err && made < n; made++)
		err = new_input(ctx, 4, &in[made], &pin[made]);
	if (err)
		made--;
	if (!err && (o->p1b & FP_P1B_BATCH))
		err = p1b_batches(ctx, o, &c, false, in, pin, r);
	if (!err && (o->p1b & FP_P1B_ASYNC))
		err = p1b_batches(ctx, o, &c, true, in, pin, r);
	if (!err && (o->p1b & FP_P1B_THREADS))
		err = p1b_threads(ctx, o, &c, in, pin, r);
	while (made-- > 0)
		ptask_datablock_release(ctx, in[made]);
	ptask_graph_close(ctx, c.graph);
out_close:
	ptask_ctx_close(ctx);
out_free:
	free(in);
	free(pin);
	return err;
}

/* --- P11 --------------------------------------------------------------------- */

/**
 * fp_ptask_p11() - P11: "ptask.p11.k<k>.b<bytes>" for every chain length,
 * at 4 bytes and (k <= @o->big_max_k) at @o->big_bytes
 * @o: the options
 * @r: the results
 *
 * Return: 0 or -errno.
 */
int fp_ptask_p11(const struct fp_opts *o, struct fp_results *r)
{
	const uint64_t sizes[2] = { 4, o->big_bytes };
	struct ptask_ctx *ctx = NULL;
	struct chain c;
	char key[48];
	int i, b, err;

	err = open_ctx(&ctx);
	for (b = 0; !err && b < 2; b++) {
		for (i = 0; !err && i < o->nchain; i++) {
			if (b && o->chain[i] > o->big_max_k)
				continue;
			fprintf(stderr, "fastpath: P11 ptask k=%d bytes=%llu\n",
				o->chain[i], (unsigned long long)sizes[b]);
			err = chain_build(ctx, o, o->chain[i], sizes[b], 2, &c);
			if (err)
				break;
			snprintf(key, sizeof(key), "ptask.p11.k%d.b%llu", o->chain[i],
				 (unsigned long long)sizes[b]);
			err = timed_rounds(ctx, o, &c, 0, o->rounds, r, key);
			ptask_graph_close(ctx, c.graph);
		}
	}
	if (ctx)
		ptask_ctx_close(ctx);
	return err;
}

/* --- P1c and idle -------------------------------------------------------------- */

/**
 * fp_ptask_p1c_member() - one P1c process: P1 reuse rounds until the
 * gang's deadline, each checked
 * @g: the gang
 * @idx: this member
 * @o: the options
 *
 * Return: 0 or -errno.
 */
int fp_ptask_p1c_member(struct fp_gang *g, int idx, const struct fp_opts *o)
{
	uint32_t *pin, seed = o->seed + (uint32_t)idx * 7919u;
	struct ptask_ctx *ctx;
	struct ptask_db *in;
	long long count = 0;
	double cpu0;
	struct chain c;
	int i, err;

	err = open_ctx(&ctx);
	if (err)
		return err;
	err = chain_build(ctx, o, 1, 4, 2, &c);
	if (err)
		goto out_close;
	err = new_input(ctx, 4, &in, &pin);
	for (i = 0; !err && i < P1C_WARMUP; i++)
		err = round_reuse(ctx, &c, in, pin, fp_next_value(&seed));
	if (!err) {
		fp_gang_wait_start(g, idx, &cpu0);
		while (!err && (int64_t)fp_now_ns() < g->deadline_ns) {
			err = round_reuse(ctx, &c, in, pin, fp_next_value(&seed));
			count++;
		}
		if (!err)
			fp_gang_finish(g, idx, count, cpu0, 0);
	}
	if (in)
		ptask_datablock_release(ctx, in);
	ptask_graph_close(ctx, c.graph);
out_close:
	ptask_ctx_close(ctx);
	return err;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/**
 * fp_ptask_idle() - the idle check: "idle.client" and "idle.daemon"
 * @o: the options (@o->idle_seconds, @o->ptaskd_pid)
 * @r: the results: count = the window in us, cpu_us = CPU used in it
 *	(the daemon's -1 when its pid is unknown)
 *
 * A client connects, builds a graph and runs a few rounds (so everything
 * a working client starts is started), waits for any bounded spinning to
 * end, then both sides are left idle for the window.
 *
 * Return: 0 or -errno.
 */
int fp_ptask_idle(const struct fp_opts *o, struct fp_results *r)
{
	uint64_t d0 = 0, d1 = 0, t0, t1;
	struct fp_series *sc, *sd;
	uint32_t *pin, seed = o->seed;
	struct ptask_ctx *ctx;
	struct ptask_db *in;
	int i, derr = -ESRCH, err;
	double c0, c1;
	struct chain c;

	err = open_ctx(&ctx);
	if (err)
		return err;
	err = chain_build(ctx, o, 1, 4, 2, &c);
	if (err)
		goto out_close;
	err = new_input(ctx, 4, &in, &pin);
	for (i = 0; !err && i < IDLE_WARMUP; i++)
		err = round_reuse(ctx, &c, in, pin, fp_next_value(&seed));
	if (!err) {
		sleep_s(IDLE_SETTLE_MS / 1e3);
		if (o->ptaskd_pid > 0)
			derr = fp_proc_cpu_ns(o->ptaskd_pid, 1, &d0);
		c0 = fp_self_cpu_us();
		t0 = fp_now_ns();
		sleep_s(o->idle_seconds);
		t1 = fp_now_ns();
		c1 = fp_self_cpu_us();
		if (!derr)
			derr = fp_proc_cpu_ns(o->ptaskd_pid, 1, &d1);
		sc = fp_results_add(r, "idle.client");
		sd = fp_results_add(r, "idle.daemon");
		if (sc && sd) {
			sc->count = sd->count = (long long)((t1 - t0) / 1000);
			sc->cpu_us = c1 - c0;
			sd->cpu_us = derr ? -1 : (double)(d1 - d0) / 1e3;
		} else {
			err = -ENOSPC;
		}
		/* and the client still works after its idle time */
		err = err ?: round_reuse(ctx, &c, in, pin, fp_next_value(&seed));
	}
	if (in)
		ptask_datablock_release(ctx, in);
	ptask_graph_close(ctx, c.graph);
out_close:
	ptask_ctx_close(ctx);
	return err;
}
