// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fastpath - the fast-path benchmark of issue 12: what a libptask caller
 * pays for small GPU invocations against the same work done by hand, side
 * by side in one run (fastpath.h has the map of the files).
 *
 *   P1    one small invocation: push a 4-byte datablock -> GPU ptask
 *         (out[0] = in[0] + 1) -> pull -> map -> check -> release, the
 *         clock around all of it; input reused or made fresh each round.
 *         Baselines: raw launch + synchronize; raw 4 B copy in + launch +
 *         4 B copy out + synchronize (pinned).  Ratios: ptask / raw time.
 *   P1b   --inflight (64) invocations in flight: push them all then pull
 *         them all; and a pusher and a puller thread.  Baselines: raw
 *         launches back to back (one synchronize per batch); the raw copy
 *         in + launch + copy out pipeline over --streams streams.
 *         Ratios: ptask / raw throughput.
 *   P1c   N client processes (--procs), each with its own context and
 *         graph, doing P1 rounds for --seconds: aggregate rate, and CPU
 *         per invocation (the clients' getrusage + ptaskd's /proc stat);
 *         baseline: N processes doing raw launch + synchronize (under
 *         MPS when --mps says the caller started it), and N threads of
 *         one process doing it on a stream each in its one context.
 *   P11   chains of k ptasks (--chain), 4 B and --big-bytes (k <=
 *         --big-max-k): time per round, per extra hop, per ptask.
 *         Baselines: copy in + k launches + copy out on one stream, one
 *         synchronize; the same captured as a CUDA graph and replayed.
 *   idle  a connected, idle client and ptaskd over --idle-seconds: CPU
 *         in percent of a core (the goal: under 1% each).
 *
 * With --baseline socket (no GPU: ptaskd's cpu backend runs the kernels'
 * host twins) the baseline is a UNIX-socket ping-pong between two
 * processes instead.
 *
 * Output: one line per measurement on stdout, "PART key=value ...",
 * then a table; progress on stderr.  Needs a running ptaskd (PTASK_MODE,
 * PTASK_SOCKET as for any client) unless --sides raw.  Exit 0 when every
 * part ran and every result matched, 1 on a failure, 2 on bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libptask.h"
#include "bench/fastpath.h"
#include "bench/read_ptx.h"

#define DEFAULT_PTX	"build/gpu/bench_kernels.ptx"
#define TABLE_BYTES	65536

static char table[TABLE_BYTES];
static size_t table_len;
static char common[512];	/* the words every result line carries */

/* Append a line to the readable table printed at the end. */
static void __attribute__((format(printf, 1, 2))) tab(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (table_len >= sizeof(table))
		return;
	va_start(ap, fmt);
	n = vsnprintf(table + table_len, sizeof(table) - table_len, fmt, ap);
	va_end(ap);
	if (n > 0)
		table_len += (size_t)n;
	if (table_len > sizeof(table) - 1)
		table_len = sizeof(table) - 1;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: fastpath [options]\n"
"  --parts LIST       p1,p1b,p1c,p11,idle or all (default all)\n"
"  --sides LIST       ptask,raw (default both)\n"
"  --baseline KIND    cuda (raw driver API, default), socket (UNIX-socket\n"
"                     ping-pong: no GPU), none\n"
"  --ptx FILE         the kernels' PTX (default " DEFAULT_PTX ")\n"
"  --rounds N         timed rounds of P1 and P11 (default 5000, >= 100)\n"
"  --warmup N         untimed rounds first (default 500)\n"
"  --batches N        timed batches of P1b (default 1000, >= 10)\n"
"  --inflight N       invocations in flight in P1b (default 64)\n"
"  --p1b LIST         P1b's ptask variants: batch,async,threads (default all)\n"
"  --streams N        streams of P1b's raw pipeline (default 4, 1..16)\n"
"  --seconds S        each P1c window (default 2)\n"
"  --idle-seconds S   the idle window (default 2)\n"
"  --procs LIST       P1c's process counts (default 1,2,4,8,16; each 1..%d)\n"
"  --chain LIST       P11's chain lengths (default 1,2,3,10,100; each 1..1000)\n"
"  --big-bytes N      P11's large datablock (default 4194304; multiple of 4)\n"
"  --big-max-k N      longest chain run at --big-bytes (default 10)\n"
"  --ptaskd-pid PID   ptaskd's pid, for its CPU time (default: the process\n"
"                     listening on the socket, from /proc)\n"
"  --tag WORDS        appended to every result line (e.g. \"iso=client\")\n"
"  --mps              the caller started NVIDIA MPS: label P1c's raw runs\n"
"  --uids N           P1c's processes as N uids (root only; default 1): member\n"
"                     i keeps this uid when i %% N is 0, else becomes uid\n"
"                     65535 - i %% N (65534 nobody, 65533, ...)\n"
"  --seed N           first input value's seed (default 12345)\n"
"  --quick            rounds 1000, warmup 100, batches 100, seconds 0.5,\n"
"                     idle-seconds 1 (later options override)\n",
		FP_MAX_PROCS);
}

static int bad(const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "fastpath: %s '%s': %s\n", opt, val, why);
	return -EINVAL;
}

/* A whole decimal number in [@lo, @hi]. */
static int parse_ll(const char *opt, const char *s, long long lo, long long hi,
		    long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return bad(opt, s, "not a number");
	if (*out < lo || *out > hi) {
		fprintf(stderr, "fastpath: %s '%s': not in %lld..%lld\n", opt, s, lo, hi);
		return -EINVAL;
	}
	return 0;
}

static int parse_int(const char *opt, const char *s, int lo, int hi, int *out)
{
	long long v;
	int err = parse_ll(opt, s, lo, hi, &v);

	if (!err)
		*out = (int)v;
	return err;
}

static int parse_secs(const char *opt, const char *s, double lo, double hi,
		      double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end)
		return bad(opt, s, "not a number of seconds");
	if (!(*out >= lo && *out <= hi)) {
		fprintf(stderr, "fastpath: %s '%s': not in %g..%g s\n", opt, s, lo, hi);
		return -EINVAL;
	}
	return 0;
}

/* "1,2,4": up to FP_MAX_LIST numbers in [@lo, @hi]. */
static int parse_list(const char *opt, const char *s, int lo, int hi,
		      int *v, int *n)
{
	char buf[256], *tok, *save = NULL;
	int err;

	if (strlen(s) >= sizeof(buf) || !*s)
		return bad(opt, s, "empty or too long");
	strcpy(buf, s);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n >= FP_MAX_LIST)
			return bad(opt, s, "too many entries");
		err = parse_int(opt, tok, lo, hi, &v[(*n)++]);
		if (err)
			return err;
	}
	return *n ? 0 : bad(opt, s, "no entries");
}

/* "p1,p11" against @names (bits 1 << index); "all" is every one. */
static int parse_names(const char *opt, const char *s, const char *const *names,
		       int count, unsigned int *bits)
{
	char buf[256], *tok, *save = NULL;
	int i;

	if (strlen(s) >= sizeof(buf) || !*s)
		return bad(opt, s, "empty or too long");
	strcpy(buf, s);
	*bits = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			*bits |= (1u << count) - 1;
			continue;
		}
		for (i = 0; i < count && strcmp(tok, names[i]); i++)
			;
		if (i == count)
			return bad(opt, tok, "unknown name");
		*bits |= 1u << i;
	}
	return *bits ? 0 : bad(opt, s, "nothing named");
}

enum {
	OPT_PARTS = 256, OPT_SIDES, OPT_BASELINE, OPT_PTX, OPT_ROUNDS,
	OPT_WARMUP, OPT_BATCHES, OPT_INFLIGHT, OPT_STREAMS, OPT_SECONDS,
	OPT_IDLE, OPT_PROCS, OPT_CHAIN, OPT_BIG, OPT_BIGK, OPT_PID, OPT_TAG,
	OPT_MPS, OPT_SEED, OPT_QUICK, OPT_P1B, OPT_UIDS, OPT_HELP,
};

static const struct option long_opts[] = {
	{ "parts", required_argument, NULL, OPT_PARTS },
	{ "sides", required_argument, NULL, OPT_SIDES },
	{ "baseline", required_argument, NULL, OPT_BASELINE },
	{ "ptx", required_argument, NULL, OPT_PTX },
	{ "rounds", required_argument, NULL, OPT_ROUNDS },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "batches", required_argument, NULL, OPT_BATCHES },
	{ "inflight", required_argument, NULL, OPT_INFLIGHT },
	{ "streams", required_argument, NULL, OPT_STREAMS },
	{ "seconds", required_argument, NULL, OPT_SECONDS },
	{ "idle-seconds", required_argument, NULL, OPT_IDLE },
	{ "procs", required_argument, NULL, OPT_PROCS },
	{ "chain", required_argument, NULL, OPT_CHAIN },
	{ "big-bytes", required_argument, NULL, OPT_BIG },
	{ "big-max-k", required_argument, NULL, OPT_BIGK },
	{ "ptaskd-pid", required_argument, NULL, OPT_PID },
	{ "tag", required_argument, NULL, OPT_TAG },
	{ "mps", no_argument, NULL, OPT_MPS },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "quick", no_argument, NULL, OPT_QUICK },
	{ "p1b", required_argument, NULL, OPT_P1B },
	{ "uids", required_argument, NULL, OPT_UIDS },
	{ "help", no_argument, NULL, OPT_HELP },
	{ }
};

static const char *const part_names[] = { "p1", "p1b", "p1c", "p11", "idle" };
static const char *const side_names[] = { "ptask", "raw" };
static const char *const base_names[] = { "cuda", "socket", "none" };
static const char *const p1b_names[] = { "batch", "async", "threads" };

static int parse_one(int ch, const char *arg, struct fp_opts *o,
		     const char **ptx_path)
{
	unsigned int bits;
	char opt[32];
	long long v;
	int err = 0;

	snprintf(opt, sizeof(opt), "--%s", long_opts[ch - OPT_PARTS].name);
	switch (ch) {
	case OPT_PARTS: return parse_names(opt, arg, part_names, 5, &o->parts);
	case OPT_SIDES: return parse_names(opt, arg, side_names, 2, &o->sides);
	case OPT_P1B: return parse_names(opt, arg, p1b_names, 3, &o->p1b);
	case OPT_BASELINE:
		err = parse_names(opt, arg, base_names, 3, &bits);
		if (!err && (bits & (bits - 1)))
			return bad(opt, arg, "name one");
		o->baseline = bits == 1 ? FP_BASE_CUDA : bits == 2 ? FP_BASE_SOCKET :
			      FP_BASE_NONE;
		return err;
	case OPT_PTX: *ptx_path = arg; return 0;
	case OPT_ROUNDS: return parse_int(opt, arg, 100, 10000000, &o->rounds);
	case OPT_WARMUP: return parse_int(opt, arg, 0, 10000000, &o->warmup);
	case OPT_BATCHES: return parse_int(opt, arg, 10, 1000000, &o->batches);
	case OPT_INFLIGHT: return parse_int(opt, arg, 1, FP_INFLIGHT_MAX, &o->inflight);
	case OPT_STREAMS: return parse_int(opt, arg, 1, 16, &o->streams);
	case OPT_SECONDS: return parse_secs(opt, arg, 0.1, 600, &o->seconds);
	case OPT_IDLE: return parse_secs(opt, arg, 0.5, 600, &o->idle_seconds);
	case OPT_PROCS: return parse_list(opt, arg, 1, FP_MAX_PROCS, o->procs, &o->nprocs);
	case OPT_CHAIN: return parse_list(opt, arg, 1, 1000, o->chain, &o->nchain);
	case OPT_BIG:
		err = parse_ll(opt, arg, 4, 1LL << 30, &v);
		if (!err && v % 4)
			return bad(opt, arg, "not a multiple of 4");
		o->big_bytes = (uint64_t)v;
		return err;
	case OPT_BIGK: return parse_int(opt, arg, 0, 1000, &o->big_max_k);
	case OPT_PID:
		err = parse_ll(opt, arg, 1, 1 << 30, &v);
		o->ptaskd_pid = (pid_t)v;
		return err;
	case OPT_TAG:
		if (strlen(arg) > 200 || strchr(arg, '\n'))
			return bad(opt, arg, "longer than 200 characters or several lines");
		o->tag = arg;
		return 0;
	case OPT_MPS: o->mps = 1; return 0;
	case OPT_UIDS:
		err = parse_int(opt, arg, 1, FP_MAX_UIDS, &o->uids);
		if (!err && o->uids > 1 && geteuid())
			return bad(opt, arg, "more than one uid needs root");
		return err;
	case OPT_SEED:
		err = parse_ll(opt, arg, 0, 0xffffffffLL, &v);
		o->seed = (uint32_t)v;
		return err;
	case OPT_QUICK:
		o->rounds = 1000;
		o->warmup = 100;
		o->batches = 100;
		o->seconds = 0.5;
		o->idle_seconds = 1;
		return 0;
	}
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct fp_opts *o,
		      const char **ptx_path)
{
	static const int procs[] = { 1, 2, 4, 8, 16 }, chain[] = { 1, 2, 3, 10, 100 };
	int ch, err;

	*o = (struct fp_opts){
		.parts = FP_P1 | FP_P1B | FP_P1C | FP_P11 | FP_IDLE,
		.sides = FP_SIDE_PTASK | FP_SIDE_RAW, .baseline = FP_BASE_CUDA,
		.p1b = FP_P1B_BATCH | FP_P1B_ASYNC | FP_P1B_THREADS,
		.rounds = 5000, .warmup = 500, .batches = 1000, .inflight = 64,
		.streams = 4, .seconds = 2, .idle_seconds = 2, .nprocs = 5,
		.uids = 1,
		.nchain = 5, .big_bytes = 4u << 20, .big_max_k = 10, .tag = "",
		.seed = 12345,
	};
	memcpy(o->procs, procs, sizeof(procs));
	memcpy(o->chain, chain, sizeof(chain));
	*ptx_path = DEFAULT_PTX;
	while ((ch = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		if (ch == 'h' || ch == OPT_HELP) {
			usage(stdout);
			exit(0);
		}
		if (ch < OPT_PARTS || ch >= OPT_HELP)
			return -EINVAL;	/* getopt said why */
		err = parse_one(ch, optarg, o, ptx_path);
		if (err)
			return err;
	}
	if (optind < argc)
		return bad("argument", argv[optind], "unexpected");
	if (o->baseline == FP_BASE_NONE)
		o->sides &= ~(unsigned int)FP_SIDE_RAW;
	if (!o->sides)
		return bad("--sides", "raw", "with --baseline none, nothing to measure");
	return 0;
}

/* --- output -------------------------------------------------------------------- */

/* @v with @prec decimals, or "-" when NAN (not measured). */
static const char *num(double v, int prec)
{
	static char bufs[16][32];
	static int next;
	char *b = bufs[next++ % 16];

	if (isnan(v))
		return "-";
	snprintf(b, sizeof(bufs[0]), "%.*f", prec, v);
	return b;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* " NAME_med_us=.. NAME_p99_us=.." of @s */
static void put_times(const char *name, const struct fp_series *s)
{
	printf(" %s_med_us=%.2f %s_p99_us=%.2f", name, s->st.med, name, s->st.p99);
}

static void tab_times(const char *what, const struct fp_series *s)
{
	tab("  %-40s %10.2f %10.2f\n", what, s->st.med, s->st.p99);
}

static const char *const p1_bases[] = { "launch", "copy", "pingpong" };

static void report_p1(const struct fp_results *r)
{
	static const char *const variants[] = { "reuse", "fresh" };
	const struct fp_series *p, *b;
	int v, i;

	tab("\nP1: one small invocation, push -> ptask -> pull -> map -> check -> release (us)\n");
	tab("  %-40s %10s %10s\n", "", "median", "p99");
	for (i = 0; i < 3; i++)
		if ((b = fp_results_get(r, "raw.p1.%s", p1_bases[i])))
			tab_times(i == 0 ? "raw launch + sync" : i == 1 ?
				  "raw 4 B in + launch + 4 B out + sync" :
				  "UNIX-socket ping-pong", b);
	for (v = 0; v < 2; v++) {
		p = fp_results_get(r, "ptask.p1.%s", variants[v]);
		if (!p)
			continue;
		printf("P1 variant=%s %s rounds=%d", variants[v], common, p->st.n);
		put_times("ptask", p);
		tab_times(v ? "ptask, fresh input each round" : "ptask, input reused", p);
		for (i = 0; i < 3; i++) {
			b = fp_results_get(r, "raw.p1.%s", p1_bases[i]);
			if (!b)
				continue;
			put_times(p1_bases[i], b);
			printf(" ratio_%s_med=%.2f ratio_%s_p99=%.2f", p1_bases[i],
			       ratio(p->st.med, b->st.med), p1_bases[i],
			       ratio(p->st.p99, b->st.p99));
			tab("    / %-36s %9.2fx %9.2fx\n", p1_bases[i],
			    ratio(p->st.med, b->st.med), ratio(p->st.p99, b->st.p99));
		}
		printf("\n");
	}
	if (!fp_results_get(r, "ptask.p1.reuse"))
		for (i = 0; i < 3; i++)
			if ((b = fp_results_get(r, "raw.p1.%s", p1_bases[i]))) {
				printf("P1 variant=raw %s rounds=%d", common, b->st.n);
				put_times(p1_bases[i], b);
				printf("\n");
			}
}

static void report_p1b(const struct fp_results *r, const struct fp_opts *o)
{
	static const char *const variants[] = { "batch", "async", "threads" };
	static const char *const labels[] = {
		"ptask, push all then pull all",
		"ptask, push_async all then pull all",
		"ptask, pusher + puller threads",
	};
	static const char *const bases[] = { "b2b", "pipe", "pingpong" };
	const struct fp_series *p, *b;
	int v, i;

	tab("\nP1b: %d invocations in flight (invocations/s; ratio = ptask / baseline)\n",
	    o->inflight);
	for (i = 0; i < 3; i++)
		if ((b = fp_results_get(r, "raw.p1b.%s", bases[i])))
			tab("  %-40s %10.0f/s\n", i == 0 ? "raw launches back to back" :
			    i == 1 ? "raw copy in + launch + copy out, pipelined" :
			    "UNIX-socket ping-pong, pipelined", b->per_s);
	for (v = 0; v < 3; v++) {
		p = fp_results_get(r, "ptask.p1b.%s", variants[v]);
		if (!p)
			continue;
		printf("P1B variant=%s %s inflight=%d invocations=%lld ptask_per_s=%.0f",
		       variants[v], common, o->inflight, p->count, p->per_s);
		if (p->st.n)
			printf(" ptask_batch_med_us=%.1f ptask_batch_p99_us=%.1f",
			       p->st.med, p->st.p99);
		/* a batch's first output: what a cold pipeline costs */
		b = fp_results_get(r, "ptask.p1b.%s.first", variants[v]);
		if (b && b->st.n)
			printf(" ptask_first_med_us=%.1f ptask_first_p99_us=%.1f",
			       b->st.med, b->st.p99);
		tab("  %-40s %10.0f/s\n", labels[v], p->per_s);
		for (i = 0; i < 3; i++) {
			b = fp_results_get(r, "raw.p1b.%s", bases[i]);
			if (!b)
				continue;
			printf(" %s_per_s=%.0f ratio_%s=%.3f", bases[i], b->per_s, bases[i],
			       ratio(p->per_s, b->per_s));
			tab("    / %-36s %9.3fx\n", bases[i], ratio(p->per_s, b->per_s));
		}
		printf("\n");
	}
	if (!fp_results_get(r, "ptask.p1b.batch"))
		for (i = 0; i < 3; i++)
			if ((b = fp_results_get(r, "raw.p1b.%s", bases[i])))
				printf("P1B variant=raw %s inflight=%d %s_per_s=%.0f\n",
				       common, o->inflight, bases[i], b->per_s);
}

/* (t(k) - t(1)) / (k - 1) of series "<prefix>.k<k>.b<bytes><suffix>", or NAN */
static double hop_us(const struct fp_results *r, const char *prefix, int k,
		     uint64_t bytes, const char *suffix)
{
	const struct fp_series *a, *b;

	if (k < 2)
		return NAN;
	a = fp_results_get(r, "%s.k1.b%llu%s", prefix, (unsigned long long)bytes, suffix);
	b = fp_results_get(r, "%s.k%d.b%llu%s", prefix, k, (unsigned long long)bytes, suffix);
	return a && b ? (b->st.med - a->st.med) / (k - 1) : NAN;
}

static void put_opt(const char *key, double v)
{
	if (!isnan(v))
		printf(" %s=%.3f", key, v);
	else
		printf(" %s=na", key);
}

/* " NAME_med_us NAME_p99_us NAME_hop_us NAME_per_node_us" of raw series @name */
static void put_raw_chain(const struct fp_results *r, const char *name, int k,
			  uint64_t bytes, const struct fp_series *p, double ph)
{
	unsigned long long b = (unsigned long long)bytes;
	const struct fp_series *s;
	char suffix[16], key[32];
	double h;

	s = fp_results_get(r, "raw.p11.k%d.b%llu.%s", k, b, name);
	if (!s)
		return;
	snprintf(suffix, sizeof(suffix), ".%s", name);
	h = hop_us(r, "raw.p11", k, bytes, suffix);
	put_times(name, s);
	snprintf(key, sizeof(key), "%s_hop_us", name);
	put_opt(key, h);
	printf(" %s_per_node_us=%.3f", name, s->st.med / k);
	if (p)
		printf(" ratio_%s_med=%.2f", name, ratio(p->st.med, s->st.med));
	if (!isnan(ph) && h > 0)
		printf(" ratio_hop_%s=%.2f", name, ph / h);
}

/* The median of raw series @name, its hop, or NAN. */
static double raw_med(const struct fp_results *r, const char *name, int k,
		      uint64_t bytes)
{
	const struct fp_series *s = fp_results_get(r, "raw.p11.k%d.b%llu.%s", k,
						   (unsigned long long)bytes, name);

	return s ? s->st.med : NAN;
}

static void report_p11_one(const struct fp_results *r, int k, uint64_t bytes)
{
	static const char *const bases[] = { "stream", "graph", "launch", "kgraph" };
	unsigned long long b = (unsigned long long)bytes;
	const struct fp_series *p, *pp;
	double ph = hop_us(r, "ptask.p11", k, bytes, "");
	int i;

	p = fp_results_get(r, "ptask.p11.k%d.b%llu", k, b);
	pp = fp_results_get(r, "raw.p1.pingpong");
	if (!p && !fp_results_get(r, "raw.p11.k%d.b%llu.stream", k, b))
		return;
	printf("P11 k=%d bytes=%llu %s rounds=%d", k, b, common,
	       p ? p->st.n : (int)fp_results_get(r, "raw.p11.k%d.b%llu.stream", k, b)->count);
	if (p) {
		put_times("ptask", p);
		put_opt("ptask_hop_us", ph);
		printf(" ptask_per_ptask_us=%.3f", p->st.med / k);
	}
	for (i = 0; i < 4; i++)
		put_raw_chain(r, bases[i], k, bytes, p, ph);
	if (pp) {
		put_times("pingpong", pp);
		if (p)
			printf(" ratio_pingpong_med=%.2f", ratio(p->st.med, pp->st.med));
	}
	printf("\n");
	tab("  %4d %9llu %9s %9s %8s %8s %9s %8s %8s %8s %8s\n", k, b,
	    num(p ? p->st.med : NAN, 1), num(p ? p->st.p99 : NAN, 1), num(ph, 2),
	    num(p ? p->st.med / k : NAN, 3), num(raw_med(r, "stream", k, bytes), 1),
	    num(hop_us(r, "raw.p11", k, bytes, ".stream"), 2),
	    num(hop_us(r, "raw.p11", k, bytes, ".graph"), 2),
	    num(hop_us(r, "raw.p11", k, bytes, ".launch"), 2),
	    num(raw_med(r, "kgraph", k, bytes) / k, 3));
}

static void report_p11(const struct fp_results *r, const struct fp_opts *o)
{
	const uint64_t sizes[2] = { 4, o->big_bytes };
	int i, b;

	tab("\nP11: chains of k ptasks, us per round; hop: per extra ptask or node (-: not run)\n");
	tab("  %4s %9s %9s %9s %8s %8s %9s %8s %8s %8s %8s\n", "k", "bytes", "ptask",
	    "p99", "hop", "/ptask", "stream", "hop", "graph", "launch", "kgraph");
	tab("  %4s %9s %9s %9s %8s %8s %9s %8s %8s %8s %8s\n", "", "", "", "", "", "",
	    "+copies", "", "hop", "hop", "/node");
	for (b = 0; b < 2; b++)
		for (i = 0; i < o->nchain; i++)
			if (!b || o->chain[i] <= o->big_max_k)
				report_p11_one(r, o->chain[i], sizes[b]);
}

static void report_p1c(int n, const struct fp_gang_result *p,
		       const struct fp_gang_result *raw,
		       const struct fp_gang_result *thr, const struct fp_opts *o)
{
	double pc = NAN, pd = NAN, rc = NAN, tc = NAN;

	printf("P1C procs=%d uids=%d %s seconds=%g", n, o->uids, common,
	       o->seconds);
	if (p) {
		pc = p->count ? p->client_cpu_us / (double)p->count : NAN;
		pd = p->count && p->daemon_cpu_us >= 0 ?
		     p->daemon_cpu_us / (double)p->count : NAN;
		printf(" ptask_per_s=%.0f ptask_invocations=%lld", p->per_s, p->count);
		put_opt("ptask_client_cpu_us_per_inv", pc);
		put_opt("ptask_daemon_cpu_us_per_inv", pd);
		put_opt("ptask_cpu_us_per_inv", pc + pd);
	}
	if (raw) {
		rc = raw->count ? raw->client_cpu_us / (double)raw->count : NAN;
		printf(" raw_per_s=%.0f raw_invocations=%lld mps=%s", raw->per_s,
		       raw->count, o->mps ? "on" : "off");
		put_opt("raw_cpu_us_per_inv", rc);
	}
	if (thr) {
		tc = thr->count ? thr->client_cpu_us / (double)thr->count : NAN;
		printf(" raw_threads_per_s=%.0f raw_threads_invocations=%lld",
		       thr->per_s, thr->count);
		put_opt("raw_threads_cpu_us_per_inv", tc);
	}
	if (p && raw) {
		printf(" ratio_rate=%.3f", ratio(p->per_s, raw->per_s));
		put_opt("ratio_cpu", rc > 0 ? (pc + pd) / rc : NAN);
	}
	if (p && thr)
		printf(" ratio_rate_threads=%.3f", ratio(p->per_s, thr->per_s));
	printf("\n");
	tab("  %5d %12s %10s %10s %12s %10s %12s %10s %8s\n", n,
	    num(p ? p->per_s : NAN, 0), num(pc, 2), num(pd, 2),
	    num(raw ? raw->per_s : NAN, 0), num(rc, 2),
	    num(thr ? thr->per_s : NAN, 0), num(tc, 2), o->mps ? "on" : "off");
}

static void report_idle(const struct fp_results *r)
{
	const struct fp_series *c = fp_results_get(r, "idle.client");
	const struct fp_series *d = fp_results_get(r, "idle.daemon");
	double cp, dp;

	if (!c || !d)
		return;
	cp = 100.0 * c->cpu_us / (double)c->count;
	dp = d->cpu_us >= 0 ? 100.0 * d->cpu_us / (double)d->count : NAN;
	printf("IDLE %s seconds=%.2f client_cpu_pct=%.3f", common, (double)c->count / 1e6, cp);
	put_opt("daemon_cpu_pct", dp);
	printf(" ok=%s\n", isnan(dp) ? "unknown" : cp < 1 && dp < 1 ? "yes" : "no");
	tab("\nidle (%.1f s): client %.3f%% of a core, ptaskd %s%%\n",
	    (double)c->count / 1e6, cp, isnan(dp) ? "(unknown)" : num(dp, 3));
}

/* --- the parts ---------------------------------------------------------------- */

static int want_ptask(const struct fp_opts *o)
{
	return o->sides & FP_SIDE_PTASK;
}

static int want_raw(const struct fp_opts *o)
{
	return o->sides & FP_SIDE_RAW;
}

static int part_p1(const struct fp_opts *o, struct fp_results *r)
{
	int err = 0;

	fprintf(stderr, "fastpath: P1 (%d rounds each)\n", o->rounds);
	if (want_raw(o))
		err = fp_child_run(o->baseline == FP_BASE_CUDA ? fp_cuda_p1 : fp_sock_p1,
				   o, r);
	if (!err && want_ptask(o))
		err = fp_ptask_p1(o, r);
	if (!err)
		report_p1(r);
	return err;
}

static int part_p1b(const struct fp_opts *o, struct fp_results *r)
{
	int err = 0;

	fprintf(stderr, "fastpath: P1b (%d batches of %d)\n", o->batches, o->inflight);
	if (want_raw(o))
		err = fp_child_run(o->baseline == FP_BASE_CUDA ? fp_cuda_p1b : fp_sock_p1b,
				   o, r);
	if (!err && want_ptask(o))
		err = fp_ptask_p1b(o, r);
	if (!err)
		report_p1b(r, o);
	return err;
}

static int part_p11(const struct fp_opts *o, struct fp_results *r)
{
	int err = 0;

	fprintf(stderr, "fastpath: P11 (%d rounds per chain)\n", o->rounds);
	if (want_raw(o))
		err = fp_child_run(o->baseline == FP_BASE_CUDA ? fp_cuda_p11 : fp_sock_p1,
				   o, r);
	if (!err && want_ptask(o))
		err = fp_ptask_p11(o, r);
	if (!err)
		report_p11(r, o);
	return err;
}

/*
 * P1c: for each count N, N ptask client processes, N raw processes (each
 * its own context: time-sliced, or MPS's clients), and with the cuda
 * baseline N raw threads of one process in its one context (what one
 * executor process could reach: ptaskd's shared isolation, issue 13's
 * executor per uid).
 */
static int part_p1c(const struct fp_opts *o)
{
	struct fp_gang_result p, raw, thr;
	bool threads = want_raw(o) && o->baseline == FP_BASE_CUDA;
	struct fp_opts ot = *o;
	int i, err = 0;

	tab("\nP1c: N processes, P1 rounds for %g s each (rate: invocations/s; cpu: us per invocation)\n",
	    o->seconds);
	tab("  %5s %12s %10s %10s %12s %10s %12s %10s %8s\n", "procs", "ptask rate",
	    "client cpu", "ptaskd cpu", "raw rate", "raw cpu", "1 proc thr", "thr cpu",
	    "mps");
	for (i = 0; !err && i < o->nprocs; i++) {
		fprintf(stderr, "fastpath: P1c %d process(es), %g s\n", o->procs[i], o->seconds);
		if (want_ptask(o))
			err = fp_gang_run(o->procs[i], fp_ptask_p1c_member, o, &p);
		if (!err && want_raw(o))
			err = fp_gang_run(o->procs[i], o->baseline == FP_BASE_CUDA ?
					  fp_cuda_p1c_member : fp_sock_p1c_member, o, &raw);
		if (!err && threads) {
			fprintf(stderr, "fastpath: P1c %d raw thread(s) of one process, %g s\n",
				o->procs[i], o->seconds);
			ot.threads = o->procs[i];
			err = fp_gang_run(1, fp_cuda_p1c_threads, &ot, &thr);
		}
		if (!err)
			report_p1c(o->procs[i], want_ptask(o) ? &p : NULL,
				   want_raw(o) ? &raw : NULL, threads ? &thr : NULL, o);
	}
	return err;
}

static int part_idle(const struct fp_opts *o, struct fp_results *r)
{
	int err;

	if (!want_ptask(o))
		return 0;
	fprintf(stderr, "fastpath: idle check, %g s\n", o->idle_seconds);
	err = fp_ptask_idle(o, r);
	if (!err)
		report_idle(r);
	return err;
}

static int run_parts(const struct fp_opts *o)
{
	struct fp_results *r = calloc(1, sizeof(*r));
	int err = 0;

	if (!r)
		return -ENOMEM;
	if (o->parts & FP_P1)
		err = part_p1(o, r);
	if (!err && (o->parts & FP_P1B)) {
		r->n = 0;
		err = part_p1b(o, r);
	}
	if (!err && (o->parts & FP_P11)) {
		r->n = 0;
		err = part_p11(o, r);
	}
	if (!err && (o->parts & FP_P1C))
		err = part_p1c(o);
	if (!err && (o->parts & FP_IDLE)) {
		r->n = 0;
		err = part_idle(o, r);
	}
	free(r);
	return err;
}

/* ptaskd's pid: --ptaskd-pid, else the owner of the client's socket. */
static void find_daemon(struct fp_opts *o, const char *mode)
{
	const char *sock = getenv("PTASK_SOCKET");

	if (o->ptaskd_pid || strcmp(mode, "user"))
		return;
	o->ptaskd_pid = fp_find_socket_owner(sock && *sock ? sock : PTASK_SOCKET_DEFAULT);
	if (!o->ptaskd_pid)
		fprintf(stderr, "fastpath: ptaskd's pid not found (--ptaskd-pid): its CPU time is not counted\n");
}

int main(int argc, char **argv)
{
	const char *ptx_path, *transport = getenv("PTASK_TRANSPORT");
	char mode[32] = "none";
	struct fp_opts o;
	int err;

	if (parse_args(argc, argv, &o, &ptx_path)) {
		usage(stderr);
		return 2;
	}
	o.ptx = read_ptx(ptx_path, &o.ptx_len);
	if (!o.ptx) {
		fprintf(stderr, "fastpath: cannot read the PTX %s\n", ptx_path);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (want_ptask(&o)) {
		err = fp_ptask_mode(mode, sizeof(mode));
		if (err) {
			fprintf(stderr, "fastpath: no ptask to measure (is ptaskd running? PTASK_SOCKET?)\n");
			return 1;
		}
		find_daemon(&o, mode);
	}
	snprintf(common, sizeof(common), "mode=%s transport=%s baseline=%s%s%s", mode,
		 transport && *transport ? transport : "default", base_names[o.baseline],
		 *o.tag ? " " : "", o.tag);
	printf("# fastpath %s rounds=%d warmup=%d batches=%d inflight=%d seconds=%g ptaskd_pid=%d\n",
	       common, o.rounds, o.warmup, o.batches, o.inflight, o.seconds,
	       (int)o.ptaskd_pid);
	err = run_parts(&o);
	printf("\n# fastpath: %s%s", common, table);
	free(o.ptx);
	if (err) {
		fprintf(stderr, "fastpath: failed: %s\n", strerror(-err));
		printf("# fastpath: FAILED (%s)\n", strerror(-err));
		return 1;
	}
	return 0;
}
