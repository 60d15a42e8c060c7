// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * soak_client - one client process of the soak benchmark (bench/soak.py,
 * issue 13 item 5): builds graphs of random shapes, runs random numbers
 * of rounds through each, checks every result against a CPU reference,
 * closes the graph (and now and then its context) and starts again,
 * until SIGUSR1 or SIGTERM asks it to stop.
 *
 *   soak_client --slots FILE --slot I --seed S [--socket PATH]
 *               [--abandon-permille P] [--terminate-permille T]
 *
 * A graph is a head (vec_scale of one graph input, or vec_add of two)
 * and 0 to 4 stages, each one of: vec_scale by 0.5, 2 or 3; vec_add of
 * the previous output with itself (one output port feeding two
 * channels); a CPU ptask doubling it (PTASK_PTASK_SELF, run by this
 * process's worker); a diamond (two vec_scales of the previous output,
 * joined by vec_add).  Vectors of 256 to 16384 floats, channels of 1 to
 * 4, rounds pushed up to the channels' capacity ahead of their pulls,
 * synchronously or with ptask_push_async.  Every value stays an exact
 * float (small integers times halves and small integers), so a result
 * must equal its reference bit for bit.  The kernels are the tests' (
 * tests/twins/twin.c): ptaskd runs their host twins on the cpu and sim
 * backends.
 *
 * T per mille of graphs are terminated with rounds in flight (their
 * pulls must then say so: -ESHUTDOWN), and P per mille end the process
 * at once with everything open (the driver starts another in the slot):
 * ptaskd's cleanup runs under load too.
 *
 * Progress goes to slot I of FILE (struct soak_slot, bench/soak.h),
 * which the driver reads while it runs.  Exit status: 0 stopped as
 * asked, 3 abandoned on purpose, 1 with a message on a setup error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "libptask.h"
#include "tests/twins/test_code.h"
#include "bench/soak.h"

#define MAX_STAGES	4
#define PULL_TIMEOUT_NS	(60LL * 1000 * 1000 * 1000)

enum stage_kind { ST_SCALE, ST_TWICE, ST_CPU, ST_DIAMOND, __ST_MAX };

struct soak_graph {
	uint32_t graph, in_a, in_b, out;	/* in_b: 0 with one input */
	uint32_t vec, n_tmpl, f_tmpl;
	uint32_t n;				/* floats per datablock */
	uint32_t capacity;
	double mult;				/* out = mult * head */
	unsigned int names;
	char shape[160];			/* for a wrong result's message */
};

static void describe(struct soak_graph *g, const char *fmt, double v)
{
	size_t len = strlen(g->shape);

	snprintf(g->shape + len, sizeof(g->shape) - len, fmt, v);
}

static volatile sig_atomic_t stop_asked;
static struct soak_slot *slot;
static uint64_t rng;

static void on_stop(int sig)
{
	(void)sig;
	stop_asked = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: reproducible from --seed. */
static uint32_t rnd(uint32_t below)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 2685821657736338717ULL) >> 33) % below;
}

static void phase(uint64_t p)
{
	__atomic_store_n(&slot->phase, p, __ATOMIC_RELAXED);
}

static void bump(uint64_t *counter)
{
	__atomic_add_fetch(counter, 1, __ATOMIC_RELAXED);
}

/* The CPU stage: out = 2 in. */
static int twice_body(struct ptask_cpu_call *call, void *arg)
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

static int push_param(struct ptask_ctx *ctx, uint32_t tmpl, uint32_t ch,
		      const void *v, size_t bytes)
{
	struct ptask_db *db;
	void *p;
	int err = ptask_datablock_create(ctx, tmpl, 0, 1, &db);

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

/* A unique name in the graph for a new object. */
static const char *name(struct soak_graph *g, const char *what)
{
	static char buf[32];

	snprintf(buf, sizeof(buf), "%s%u", what, g->names++);
	return buf;
}

/* Sticky parameter @param_index of @pt, fed @v once. */
static int sticky(struct ptask_ctx *ctx, struct soak_graph *g, uint32_t pt,
		  uint32_t tmpl, uint32_t param_index, const void *v)
{
	uint32_t port, ch;
	int err;

	err = ptask_port_open(ctx, pt, name(g, "p"), PTASK_PORT_STICKY, 0,
			      tmpl, param_index, 0, &port);
	err = err ?: ptask_channel_open(ctx, g->graph, name(g, "s"), 0, port,
					1, 0, &ch);
	return err ?: push_param(ctx, tmpl, ch, v, 4);
}

/* Channel from @src (0: a new graph input, its handle in *@in) to @dst. */
static int connect_to(struct ptask_ctx *ctx, struct soak_graph *g, uint32_t src,
		      uint32_t dst, uint32_t *in)
{
	return ptask_channel_open(ctx, g->graph, name(g, "c"), src, dst,
				  g->capacity, 0, src ? NULL : in);
}

/* vec_scale(x, y, alpha, n) fed from @src; its output port in *@out. */
static int scale(struct ptask_ctx *ctx, struct soak_graph *g, uint32_t src,
		 float alpha, uint32_t *in, uint32_t *out)
{
	int32_t n = (int32_t)g->n;
	uint32_t pt, x;
	int err;

	err = ptask_gpu_ptask_open(ctx, g->graph, name(g, "scale"),
				   ptask_test_code, sizeof(ptask_test_code),
				   "vec_scale", 4, &pt);
	err = err ?: ptask_port_open(ctx, pt, "x", PTASK_PORT_INPUT, 0, g->vec,
				     0, 0, &x);
	err = err ?: ptask_port_open(ctx, pt, "y", PTASK_PORT_OUTPUT, 0,
				     g->vec, 1, 0, out);
	err = err ?: sticky(ctx, g, pt, g->f_tmpl, 2, &alpha);
	err = err ?: sticky(ctx, g, pt, g->n_tmpl, 3, &n);
	return err ?: connect_to(ctx, g, src, x, in);
}

/* vec_add(a, b, c, n) of @src_a and @src_b; its output in *@out. */
static int add(struct ptask_ctx *ctx, struct soak_graph *g, uint32_t src_a,
	       uint32_t src_b, uint32_t *in_a, uint32_t *in_b, uint32_t *out)
{
	int32_t n = (int32_t)g->n;
	uint32_t pt, a, b;
	int err;

	err = ptask_gpu_ptask_open(ctx, g->graph, name(g, "add"),
				   ptask_test_code, sizeof(ptask_test_code),
				   "vec_add", 4, &pt);
	err = err ?: ptask_port_open(ctx, pt, "a", PTASK_PORT_INPUT, 0, g->vec,
				     0, 0, &a);
	err = err ?: ptask_port_open(ctx, pt, "b", PTASK_PORT_INPUT, 0, g->vec,
				     1, 0, &b);
	err = err ?: ptask_port_open(ctx, pt, "c", PTASK_PORT_OUTPUT, 0,
				     g->vec, 2, 0, out);
	err = err ?: sticky(ctx, g, pt, g->n_tmpl, 3, &n);
	err = err ?: connect_to(ctx, g, src_a, a, in_a);
	return err ?: connect_to(ctx, g, src_b, b, in_b);
}

static int cpu_twice(struct ptask_ctx *ctx, struct soak_graph *g,
		     uint32_t src, uint32_t *out)
{
	uint32_t pt, in;
	int err;

	err = ptask_cpu_ptask_open(ctx, g->graph, name(g, "cpu"), 2,
				   twice_body, NULL, &pt);
	err = err ?: ptask_port_open(ctx, pt, "in", PTASK_PORT_INPUT, 0,
				     g->vec, 0, 0, &in);
	err = err ?: ptask_port_open(ctx, pt, "out", PTASK_PORT_OUTPUT, 0,
				     g->vec, 1, 0, out);
	return err ?: connect_to(ctx, g, src, in, NULL);
}

static const float alphas[] = { 0.5f, 2.0f, 3.0f };
static const float diamond_alphas[] = { 0.5f, 1.0f, 2.0f };
static const uint32_t sizes[] = { 256, 1024, 4096, 16384 };

/* A new graph of random shape, running. */
static int build(struct ptask_ctx *ctx, struct soak_graph *g)
{
	const uint32_t one[3] = { 1, 1, 1 };
	uint32_t dims[3] = { 0, 1, 1 }, prev = 0, next, s, stages;
	int err;

	memset(g, 0, sizeof(*g));
	g->n = sizes[rnd(4)];
	g->capacity = 1 + rnd(4);
	dims[0] = g->n;
	err = ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600, &g->graph);
	err = err ?: ptask_template_open(ctx, g->graph, "vec",
					 PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_GLOBAL, sizeof(float),
					 dims, &g->vec);
	err = err ?: ptask_template_open(ctx, g->graph, "n",
					 PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_PARAM, sizeof(int32_t),
					 one, &g->n_tmpl);
	err = err ?: ptask_template_open(ctx, g->graph, "f",
					 PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_PARAM, sizeof(float), one,
					 &g->f_tmpl);
	if (err)
		return err;
	if (rnd(2)) {
		float alpha = alphas[rnd(3)];

		err = scale(ctx, g, 0, alpha, &g->in_a, &prev);
		g->mult = alpha;
		describe(g, "scale(%g)", alpha);
	} else {
		err = add(ctx, g, 0, 0, &g->in_a, &g->in_b, &prev);
		g->mult = 1;
		describe(g, "add%.0s", 0);
	}
	stages = rnd(MAX_STAGES + 1);
	for (s = 0; !err && s < stages; s++) {
		switch (rnd(__ST_MAX)) {
		case ST_SCALE: {
			float alpha = alphas[rnd(3)];

			err = scale(ctx, g, prev, alpha, NULL, &next);
			g->mult *= alpha;
			describe(g, " scale(%g)", alpha);
			break;
		}
		case ST_TWICE:
			err = add(ctx, g, prev, prev, NULL, NULL, &next);
			g->mult *= 2;
			describe(g, " twice%.0s", 0);
			break;
		case ST_CPU:
			err = cpu_twice(ctx, g, prev, &next);
			g->mult *= 2;
			describe(g, " cpu%.0s", 0);
			break;
		default: {
			float a1 = diamond_alphas[rnd(3)];
			float a2 = diamond_alphas[rnd(3)];
			uint32_t l, r;

			err = scale(ctx, g, prev, a1, NULL, &l);
			err = err ?: scale(ctx, g, prev, a2, NULL, &r);
			err = err ?: add(ctx, g, l, r, NULL, NULL, &next);
			g->mult *= (double)a1 + a2;
			describe(g, " diamond(%g", a1);
			describe(g, ",%g)", a2);
			break;
		}
		}
		prev = next;
	}
	err = err ?: ptask_channel_open(ctx, g->graph, "out", prev, 0,
					g->capacity, 0, &g->out);
	return err ?: ptask_graph_run(ctx, g->graph);
}

/* The head's inputs for round @k: small integers. */
static float head_a(uint32_t i, uint64_t k)
{
	return (float)((i + k) % 1024);
}

static float head_b(uint32_t i, uint64_t k)
{
	return (float)((2 * i + 3 * k) % 512);
}

static float expected(const struct soak_graph *g, uint32_t i, uint64_t k)
{
	double head = head_a(i, k) + (g->in_b ? head_b(i, k) : 0);

	return (float)(g->mult * head);
}

static int push_one(struct ptask_ctx *ctx, const struct soak_graph *g,
		    uint32_t ch, uint64_t k, bool second, bool async)
{
	struct ptask_db *db;
	float *p;
	uint32_t i;
	int err;

	err = ptask_datablock_create(ctx, g->vec, 0, 0, &db);
	if (err)
		return err;
	err = ptask_datablock_map(ctx, db, (void **)&p);
	for (i = 0; !err && i < g->n; i++)
		p[i] = second ? head_b(i, k) : head_a(i, k);
	if (!err)
		err = async ? ptask_push_async(ctx, ch, db, -1) :
			      ptask_push(ctx, ch, db, -1, PTASK_FOREVER);
	ptask_datablock_release(ctx, db);
	return err;
}

static int push_round(struct ptask_ctx *ctx, const struct soak_graph *g,
		      uint64_t k, bool async)
{
	phase(SOAK_PUSHING);
	return push_one(ctx, g, g->in_a, k, false, async) ?:
	       (g->in_b ? push_one(ctx, g, g->in_b, k, true, async) : 0);
}

/* Pull round @k's result; -EBADMSG if it is not its reference. */
static int pull_round(struct ptask_ctx *ctx, const struct soak_graph *g,
		      uint64_t k)
{
	struct ptask_db *db;
	const float *p;
	uint32_t i;
	int err;

	phase(SOAK_PULLING);
	err = ptask_pull(ctx, g->out, PULL_TIMEOUT_NS, &db);
	if (err)
		return err;
	err = ptask_db_bytes(db) == g->n * sizeof(float) ?
	      ptask_datablock_map(ctx, db, (void **)&p) : -EMSGSIZE;
	for (i = 0; !err && i < g->n; i++)
		if (p[i] != expected(g, i, k)) {
			fprintf(stderr,
				"soak_client %u: round %llu: element %u is %g, expected %g (%s, n %u, capacity %u)\n",
				(unsigned int)slot->index, (unsigned long long)k, i, p[i],
				expected(g, i, k), g->shape, g->n, g->capacity);
			err = -EBADMSG;
		}
	ptask_datablock_release(ctx, db);
	return err;
}

/*
 * Run a random number of rounds through @g, up to its capacity ahead.
 * 0, a clear end (the graph terminated on purpose), or -errno.
 */
static int run_graph(struct ptask_ctx *ctx, const struct soak_graph *g,
		     uint32_t terminate_permille)
{
	uint64_t rounds = 1 + rnd(200), pushed = 0, pulled = 0;
	uint32_t ahead = 1 + rnd(g->capacity);
	bool async = rnd(2), terminate = rnd(1000) < terminate_permille;
	uint64_t terminate_at = rnd((uint32_t)rounds);
	int err = 0;

	while (!err && pulled < rounds && !stop_asked) {
		while (!err && pushed < rounds && pushed - pulled < ahead)
			err = push_round(ctx, g, pushed++, async);
		if (!err && async)
			err = ptask_sync(ctx);
		if (!err && terminate && pulled == terminate_at) {
			phase(SOAK_TERMINATING);
			err = ptask_graph_terminate(ctx, g->graph);
			if (err)
				return err;
			err = ptask_pull(ctx, g->out, PULL_TIMEOUT_NS,
					 &(struct ptask_db *){ NULL });
			return err == -ESHUTDOWN ? 1 : err ? err : -EPROTO;
		}
		if (err)
			break;
		err = pull_round(ctx, g, pulled++);
		if (!err) {
			bump(&slot->rounds);
			__atomic_store_n(&slot->last_ok_ns, now_ns(),
					 __ATOMIC_RELAXED);
		}
	}
	if (async && !err)
		err = ptask_sync(ctx);
	return err;
}

static struct soak_slot *map_slot(const char *path, uint32_t index)
{
	size_t bytes = (size_t)(index + 1) * sizeof(struct soak_slot);
	void *m;
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return m == MAP_FAILED ? NULL : (struct soak_slot *)m + index;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "slots", required_argument, NULL, 'f' },
		{ "slot", required_argument, NULL, 'i' },
		{ "seed", required_argument, NULL, 's' },
		{ "socket", required_argument, NULL, 'S' },
		{ "abandon-permille", required_argument, NULL, 'a' },
		{ "terminate-permille", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	const char *slots = NULL, *socket = NULL;
	uint32_t index = 0, abandon = 0, terminate = 20;
	struct ptask_ctx *ctx = NULL;
	struct soak_graph g;
	int ch, err;

	rng = 88172645463325252ULL;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'f': slots = optarg; break;
		case 'i': index = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 's': rng ^= strtoull(optarg, NULL, 0) * 0x9e3779b97f4a7c15ULL; break;
		case 'S': socket = optarg; break;
		case 'a': abandon = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 't': terminate = (uint32_t)strtoul(optarg, NULL, 0); break;
		default: goto usage;
		}
	}
	if (!slots || optind != argc || index >= SOAK_MAX_SLOTS ||
	    abandon > 1000 || terminate > 1000)
		goto usage;
	slot = map_slot(slots, index);
	if (!slot) {
		fprintf(stderr, "soak_client: cannot map slot %u of %s: %s\n",
			index, slots, strerror(errno));
		return 1;
	}
	if (!rng)
		rng = 1;
	signal(SIGUSR1, on_stop);
	signal(SIGTERM, on_stop);
	slot->index = index;
	__atomic_store_n(&slot->pid, (uint64_t)getpid(), __ATOMIC_RELAXED);
	__atomic_store_n(&slot->last_ok_ns, now_ns(), __ATOMIC_RELAXED);
	while (!stop_asked) {
		if (!ctx) {
			phase(SOAK_OPENING);
			err = ptask_ctx_open(PTASK_MODE_USER, socket, &ctx);
			if (err) {
				fprintf(stderr, "soak_client %u: no ptaskd: %s\n",
					index, strerror(-err));
				return 1;
			}
			bump(&slot->contexts);
		}
		phase(SOAK_BUILDING);
		err = build(ctx, &g);
		if (!err) {
			bump(&slot->graphs);
			err = run_graph(ctx, &g, terminate);
		}
		if (err < 0) {
			if (err == -EBADMSG)
				bump(&slot->wrong);
			else
				bump(&slot->errors);
			__atomic_store_n(&slot->last_err, (int64_t)err,
					 __ATOMIC_RELAXED);
			fprintf(stderr, "soak_client %u: %s\n", index,
				strerror(-err));
		}
		if (!stop_asked && rnd(1000) < abandon) {
			bump(&slot->abandoned);
			_exit(3);	/* with the graph and context open */
		}
		phase(SOAK_CLOSING);
		ptask_graph_close(ctx, g.graph);
		/* a context now and then, and always after an error */
		if (err < 0 || !rnd(10)) {
			ptask_ctx_close(ctx);
			ctx = NULL;
		}
	}
	if (ctx)
		ptask_ctx_close(ctx);
	phase(SOAK_DONE);
	return 0;

usage:
	fprintf(stderr,
		"usage: soak_client --slots FILE --slot I --seed S [--socket PATH]\n"
		"                   [--abandon-permille 0..1000] [--terminate-permille 0..1000]\n");
	return 2;
}
