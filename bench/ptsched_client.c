// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ptsched_client - one process of PTSched's experiments (bench/ptsched.sh):
 * a closed loop of GPU invocations of ptask_busy (bench/kernels.cu; its
 * host twin on the sim backend) through libptask and ptaskd.
 *
 *   ptsched_client --kernel-us K [--gap-us G] --seconds S [--warmup-s W]
 *                  [--nice N] [--ptx FILE] [--label NAME]
 *   ptsched_client --kernel-us K [--gap-us G] --from T0 --until T1 ...
 *
 * Each round pushes a 4-byte input, waits for the result (in[0] + 1,
 * checked), then stays off the GPU for G microseconds (host work: a
 * latency-sensitive client such as a file system between requests; 0 for
 * a GPU-bound loop).  The nice value is set before connecting, so ptaskd
 * sees it (proxy priority, PTSched weight).  After W seconds of warm-up it
 * counts rounds for S seconds; with --from/--until (CLOCK_REALTIME
 * seconds, so several processes share one window) it counts the rounds
 * that end inside [T0, T1] and runs until T1: a round held back past the
 * window's start is not mistaken for the window starting late.  It prints
 * one line:
 *
 *   label=NAME nice=N kernel_us=K gap_us=G rounds=R seconds=S rate=R/S
 *   p50_ms=X p99_ms=Y
 *
 * (round latencies: push to result).  --ptx names the PTX of
 * bench/kernels.cu (default bench/kernels.ptx): on the sim and cpu
 * backends, ptaskd runs the twin bound to exactly that code
 * (build/twins/bench.so).
 * Exit status 0, or 1 with a message on any error.
 */
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "libptask.h"
#include "bench/read_ptx.h"

struct client_opts {
	double kernel_us, gap_us, seconds, warmup_s, from, until;
	int nice;
	bool set_nice;
	const char *ptx_path;
	const char *label;
};

struct busy_graph {
	uint32_t graph, in, out, param;
};

static double clock_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* CLOCK_REALTIME seconds @t as a CLOCK_MONOTONIC time. */
static double from_realtime(double t)
{
	return t - clock_s(CLOCK_REALTIME) + now_s();
}

static void sleep_s(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* in (u32) -> ptask_busy(in, out, ns) -> out (u32); ns on a sticky port. */
static int build(struct ptask_ctx *ctx, const char *code, size_t code_len,
		 struct busy_graph *g)
{
	const uint32_t one[3] = { 1, 1, 1 };
	uint32_t t_word, t_ns, p, pin, pout, pns;
	int err;

	err = ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600, &g->graph);
	err = err ?: ptask_template_open(ctx, g->graph, "word",
					 PTASK_TEMPLATE_ARRAY, PTASK_BIND_GLOBAL,
					 4, one, &t_word);
	err = err ?: ptask_template_open(ctx, g->graph, "ns",
					 PTASK_TEMPLATE_ARRAY, PTASK_BIND_PARAM,
					 8, one, &t_ns);
	err = err ?: ptask_gpu_ptask_open(ctx, g->graph, "busy", code,
					  code_len, "ptask_busy", 3, &p);
	err = err ?: ptask_port_open(ctx, p, "in", PTASK_PORT_INPUT, 0, t_word,
				     0, 0, &pin);
	err = err ?: ptask_port_open(ctx, p, "out", PTASK_PORT_OUTPUT, 0,
				     t_word, 1, 0, &pout);
	err = err ?: ptask_port_open(ctx, p, "ns", PTASK_PORT_STICKY, 0, t_ns,
				     2, 0, &pns);
	err = err ?: ptask_set_geometry(ctx, p, one, one, 0);
	err = err ?: ptask_channel_open(ctx, g->graph, "in", 0, pin, 2, 0,
					&g->in);
	err = err ?: ptask_channel_open(ctx, g->graph, "out", pout, 0, 2, 0,
					&g->out);
	err = err ?: ptask_channel_open(ctx, g->graph, "ns", 0, pns, 1, 0,
					&g->param);
	return err ?: ptask_graph_run(ctx, g->graph);
}

static int push_ns(struct ptask_ctx *ctx, const struct busy_graph *g,
		   uint64_t ns)
{
	struct ptask_db *db;
	uint64_t *p;
	int err = ptask_datablock_create(ctx, 0, sizeof(ns), 0, &db);

	if (err)
		return err;
	err = ptask_datablock_map(ctx, db, (void **)&p);
	if (!err) {
		*p = ns;
		err = ptask_push(ctx, g->param, db, -1, PTASK_FOREVER);
	}
	ptask_datablock_release(ctx, db);
	return err;
}

/* Rounds until @until; latencies (s) appended to @lat when counting. */
static int loop(struct ptask_ctx *ctx, const struct busy_graph *g,
		const struct client_opts *o, double until, double **lat,
		size_t *n, size_t *cap, bool count)
{
	struct ptask_db *in, *out;
	uint32_t *pin, *pout, seq = 0;
	int err = ptask_datablock_create(ctx, 0, 4, 0, &in);

	err = err ?: ptask_datablock_map(ctx, in, (void **)&pin);
	while (!err && now_s() < until) {
		double t0 = now_s();

		pin[0] = ++seq;
		err = ptask_push(ctx, g->in, in, -1, PTASK_FOREVER) ?:
		      ptask_pull(ctx, g->out, 120LL * 1000000000, &out);
		if (err)
			break;
		err = ptask_datablock_map(ctx, out, (void **)&pout);
		if (!err && pout[0] != seq + 1) {
			fprintf(stderr, "ptsched_client: %s: got %u, want %u\n",
				o->label, pout[0], seq + 1);
			err = -EBADMSG;
		}
		ptask_datablock_release(ctx, out);
		if (!err && count) {
			if (*n == *cap) {
				double *grown;

				*cap = *cap ? *cap * 2 : 1024;
				grown = realloc(*lat, *cap * sizeof(**lat));
				if (!grown)
					return -ENOMEM;
				*lat = grown;
			}
			(*lat)[(*n)++] = now_s() - t0;
		}
		sleep_s(o->gap_us / 1e6);
	}
	ptask_datablock_release(ctx, in);
	return err;
}

static int parse(int argc, char **argv, struct client_opts *o)
{
	static const struct option opts[] = {
		{ "kernel-us", required_argument, NULL, 'k' },
		{ "gap-us", required_argument, NULL, 'g' },
		{ "seconds", required_argument, NULL, 's' },
		{ "warmup-s", required_argument, NULL, 'w' },
		{ "nice", required_argument, NULL, 'n' },
		{ "ptx", required_argument, NULL, 'p' },
		{ "label", required_argument, NULL, 'l' },
		{ "from", required_argument, NULL, 'f' },
		{ "until", required_argument, NULL, 'u' },
		{ }
	};
	int ch;

	memset(o, 0, sizeof(*o));
	o->kernel_us = -1;
	o->warmup_s = 0.5;
	o->label = "client";
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'k': o->kernel_us = atof(optarg); break;
		case 'g': o->gap_us = atof(optarg); break;
		case 's': o->seconds = atof(optarg); break;
		case 'w': o->warmup_s = atof(optarg); break;
		case 'n': o->nice = atoi(optarg); o->set_nice = true; break;
		case 'p': o->ptx_path = optarg; break;
		case 'l': o->label = optarg; break;
		case 'f': o->from = atof(optarg); break;
		case 'u': o->until = atof(optarg); break;
		default: return -EINVAL;
		}
	}
	if (o->from || o->until) {
		if (o->until <= o->from || o->seconds)
			return -EINVAL;
		o->seconds = o->until - o->from;
	}
	if (optind != argc || o->kernel_us < 0 || o->kernel_us > 60e6 ||
	    o->gap_us < 0 || o->seconds <= 0 || o->warmup_s < 0 ||
	    o->nice < -20 || o->nice > 19)
		return -EINVAL;
	return 0;
}

int main(int argc, char **argv)
{
	struct client_opts o;
	struct ptask_ctx *ctx;
	struct busy_graph g;
	double *lat = NULL, t_start, span;
	size_t n = 0, cap = 0, code_len = 0;
	char *ptx;
	int err;

	if (parse(argc, argv, &o)) {
		fprintf(stderr, "usage: ptsched_client --kernel-us K [--gap-us G]\n"
			"       (--seconds S [--warmup-s W] | --from T0 --until T1)\n"
			"       [--nice -20..19] [--ptx FILE] [--label NAME]\n");
		return 2;
	}
	if (o.set_nice && setpriority(PRIO_PROCESS, 0, o.nice)) {
		fprintf(stderr, "ptsched_client: nice %d: %s\n", o.nice,
			strerror(errno));
		return 1;
	}
	ptx = read_ptx(o.ptx_path ?: "bench/kernels.ptx", &code_len);
	if (!ptx) {
		fprintf(stderr, "ptsched_client: cannot read %s\n",
			o.ptx_path ?: "bench/kernels.ptx");
		return 1;
	}
	err = ptask_ctx_open(PTASK_MODE_AUTO, NULL, &ctx);
	if (err) {
		fprintf(stderr, "ptsched_client: no ptask: %s\n", strerror(-err));
		return 1;
	}
	err = build(ctx, ptx, code_len, &g) ?:
	      push_ns(ctx, &g, (uint64_t)(o.kernel_us * 1e3));
	if (o.until) {
		/* Rounds ending before the window are warm-up. */
		err = err ?: loop(ctx, &g, &o, from_realtime(o.from), &lat, &n,
				  &cap, false);
		t_start = from_realtime(o.from);
		err = err ?: loop(ctx, &g, &o, from_realtime(o.until), &lat, &n,
				  &cap, true);
	} else {
		err = err ?: loop(ctx, &g, &o, now_s() + o.warmup_s, &lat, &n,
				  &cap, false);
		t_start = now_s();
		err = err ?: loop(ctx, &g, &o, t_start + o.seconds, &lat, &n,
				  &cap, true);
	}
	if (err) {
		fprintf(stderr, "ptsched_client: %s: %s\n", o.label,
			strerror(-err));
		return 1;
	}
	qsort(lat, n, sizeof(*lat), cmp_double);
	span = o.until ? o.seconds : now_s() - t_start;
	printf("label=%s nice=%d kernel_us=%.0f gap_us=%.0f rounds=%zu seconds=%.3f rate=%.2f p50_ms=%.3f p99_ms=%.3f\n",
	       o.label, o.nice, o.kernel_us, o.gap_us, n, span, (double)n / span,
	       n ? lat[n / 2] * 1e3 : 0, n ? lat[n * 99 / 100] * 1e3 : 0);
	ptask_ctx_close(ctx);
	free(lat);
	free(ptx);
	return 0;
}
