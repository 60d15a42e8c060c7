// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gemm - D = (A x B) x C several ways, timed and compared (PTask, SOSP
 * 2011, section 3.2: the cost of composing a modular GPU routine).
 *
 *   ptask      a two-ptask graph through libptask (gemm_ptask.c): the
 *              intermediate stays with the executor; one chain at a time
 *              (push A, B, C; pull D; map it);
 *   ptask_pipe the same graph driven as a streaming client drives it: up
 *              to --depth chains in flight, chain i + depth pushed as
 *              soon as chain i's D is pulled, so the executor copies the
 *              next chains' inputs in while earlier chains compute;
 *   modular    gemm(gemm(A, B), C) on the CUDA driver API, copying in and
 *              out around every multiply (gemm_cuda.c);
 *   handcoded  the CUDA driver API with the intermediate kept on the GPU;
 *              synchronous copies and launches on one stream, what the
 *              paper compared against;
 *   handstream (only when --ways names it) handcoded as an expert would
 *              stream it: --depth chains overlapped on as many CUDA
 *              streams (gemm_handstream.c); the ratios of the table stay
 *              against handcoded, the paper's baseline.
 *
 * For each size every way runs an untimed warm-up (module load, JIT,
 * first-touch allocations: one chain, or twice --depth chains pipelined) and
 * then --iters timed chains.  A chain is 2 multiplies of 2 n^3 flops.
 * What "ms per chain" is differs, and the table's header says so:
 *   latency     (ptask, modular, handcoded) the median of the --iters
 *               chains, each timed from its first call to its D on the
 *               host;
 *   throughput  (ptask_pipe, handstream) the wall time from the first
 *               push to the last D pulled and mapped (handstream: its
 *               stream synchronized), divided by --iters: what a stream
 *               of chains costs each, pipeline fill and drain included.
 *
 * The pipelined ways with --check: every D goes to a checker thread that
 * compares it with the reference (scaled for its slot: gemm_ptask.c)
 * while the main thread goes on; the main thread releases the D's the
 * checker is done with (handstream: reuses their host buffers).  Without
 * --check each D is released once mapped.
 *
 * ptask is reached through ptask_ctx_open(PTASK_MODE_AUTO, NULL): kernel
 * mode when /dev/ptask has an executor, else ptaskd --mode user at
 * $PTASK_SOCKET; PTASK_MODE=kernel|user forces one.  The CUDA ways load
 * libcuda.so.1 themselves and are skipped, saying so, without a GPU.
 *
 * --check compares every chain's D, the warm-up's too, with a CPU
 * reference (gemm_ref.c): the one-at-a-time ways' between chains, off
 * their clocks; the pipelined ways' as said above.  The
 * inputs are uniform in [0, 1), so there is no cancellation and every
 * element must lie within --rtol (default 1e-3) of the reference,
 * relatively.  Why 1e-3: the rounding error of a float sum of n positive
 * terms is at most about n * 2^-24 relative (2.4e-4 at n = 4096), twice
 * over for the two products; typical errors are near sqrt(n) * 2^-24
 * (4e-6), and any indexing or synchronisation bug gives errors of order 1.
 *
 * Exit status: 0 every requested way ran at every size (and matched with
 * --check); 1 an error or a mismatch; 2 bad usage; 77 no error, but a
 * requested way was skipped (no GPU, no ptask executor or daemon).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cuda_dev.h"
#include "libptask/libptask.h"
#include "gemm.h"

#define MAX_SIZES	32
/* PTASK_DATABLOCK_MAX_BYTES holds 8192^2 floats */
#define MAX_N		8192
#define MAX_ITERS	100000
#define EXIT_SKIP	77

#define DEFAULT_DEPTH	3

enum way {
	WAY_PTASK, WAY_PTASK_PIPE, WAY_MODULAR, WAY_HANDCODED, WAY_HANDSTREAM,
	NWAYS
};
static const char *const way_name[NWAYS] = {
	"ptask", "ptask_pipe", "modular", "handcoded", "handstream",
};

/* Through libptask (else the CUDA driver API). */
static int way_is_ptask(enum way w)
{
	return w == WAY_PTASK || w == WAY_PTASK_PIPE;
}

/* --depth chains in flight, timed as throughput (pipe_run). */
static int way_is_pipe(enum way w)
{
	return w == WAY_PTASK_PIPE || w == WAY_HANDSTREAM;
}

struct opts {
	int sizes[MAX_SIZES];
	int nsizes;
	int iters;
	int depth;			/* the pipelined ways' chains in flight */
	int check;
	int pageable;
	int quiet;
	unsigned int ways;		/* bit per enum way */
	enum way order[NWAYS];		/* as --ways lists them */
	int nways;
	double rtol;
	double timeout_s;
	const char *csv;
};

/**
 * struct row - one line of the table
 * @status: 1 ran, 0 skipped, -errno failed
 * @ms: median ms per chain (latency), or for the pipelined ways the wall
 *	time divided by the chains (throughput); @ms_min: fastest chain
 *	(pipelined: the same as @ms, there is one timed run)
 * @in_flight: chains in flight at most (1 but for the pipelined ways)
 * @match: 1 yes, 0 no, -1 not checked
 * @max_rel: largest relative error against the reference
 */
struct row {
	int n;
	enum way way;
	int status;
	double ms, ms_min;
	int in_flight;
	int match;
	double max_rel;
};

/* What the ways need and whether they can run. */
struct env {
	struct ptask_ctx *ctx;
	int ctx_err;			/* why ptask cannot run */
	struct pc_cuda_dev cu;
	int cu_err;			/* why the CUDA ways cannot run */
	int threads;			/* for the CPU reference */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: gemm [options]\n"
"  D = (A x B) x C for n x n float matrices, several ways, timed.\n"
"  --sizes N,N,...   matrix edges (default 256,512,1024,2048,4096 with a\n"
"                    GPU, 64,128 without)\n"
"  --iters N         timed chains per size and way, after one warm-up\n"
"                    (default 10)\n"
"  --ways W,W,...    of ptask, ptask_pipe, modular, handcoded, handstream\n"
"                    (default all but handstream)\n"
"  --depth N         ptask_pipe, handstream: chains in flight, 1..%d\n"
"                    (default %d)\n"
"  --check           compare every result with a CPU reference; exit 0\n"
"                    only if all match\n"
"  --rtol X          relative tolerance per element for --check (1e-3)\n"
"  --csv FILE        also write the table as CSV\n"
"  --pageable        the CUDA ways copy from malloc memory instead of\n"
"                    page-locked memory\n"
"  --timeout S       give up on a ptask push or pull after S seconds\n"
"                    (default 0: wait forever)\n"
"  -q, --quiet       no progress lines on stderr\n"
"environment: PTASK_MODE=kernel|user, PTASK_SOCKET=path (see libptask.h)\n"
"exit: 0 all ran (and matched), 1 error or mismatch, 2 usage,\n"
"      77 a requested way was skipped\n", GEMM_MAX_DEPTH, DEFAULT_DEPTH);
}

/* Parse "a,b,c" of positive ints into @out; returns the count or -1. */
static int parse_sizes(const char *s, int *out, int max)
{
	int count = 0;

	while (*s) {
		char *end;
		long v = strtol(s, &end, 10);

		/* a matrix must fit one datablock */
		if (end == s || v < 1 || v > MAX_N || count == max)
			return -1;
		out[count++] = (int)v;
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		s = end;
	}
	return count ? count : -1;
}

static int parse_ways(const char *s, struct opts *o)
{
	char buf[128], *tok, *save;
	int w;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	o->ways = 0;
	o->nways = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (w = 0; w < NWAYS; w++)
			if (!strcmp(tok, way_name[w]))
				break;
		if (w == NWAYS)
			return -1;
		if (o->ways & (1U << w))
			continue;
		o->ways |= 1U << w;
		o->order[o->nways++] = w;
	}
	return o->nways ? 0 : -1;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "sizes", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'i' },
		{ "ways", required_argument, NULL, 'w' },
		{ "depth", required_argument, NULL, 'd' },
		{ "check", no_argument, NULL, 'c' },
		{ "rtol", required_argument, NULL, 'r' },
		{ "csv", required_argument, NULL, 'o' },
		{ "pageable", no_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	*o = (struct opts){ .iters = 10, .depth = DEFAULT_DEPTH, .rtol = 1e-3 };
	parse_ways("ptask,ptask_pipe,modular,handcoded", o);
	while ((c = getopt_long(argc, argv, "hq", lopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->nsizes = parse_sizes(optarg, o->sizes, MAX_SIZES);
			if (o->nsizes < 0)
				goto bad;
			break;
		case 'i':
			o->iters = (int)strtol(optarg, &end, 10);
			if (*end || o->iters < 1 || o->iters > MAX_ITERS)
				goto bad;
			break;
		case 'w':
			if (parse_ways(optarg, o))
				goto bad;
			break;
		case 'd':
			o->depth = (int)strtol(optarg, &end, 10);
			if (*end || o->depth < 1 || o->depth > GEMM_MAX_DEPTH)
				goto bad;
			break;
		case 'c':
			o->check = 1;
			break;
		case 'r':
			o->rtol = strtod(optarg, &end);
			if (*end || !(o->rtol > 0 && o->rtol < 1))
				goto bad;
			break;
		case 'o':
			o->csv = optarg;
			break;
		case 'p':
			o->pageable = 1;
			break;
		case 't':
			o->timeout_s = strtod(optarg, &end);
			if (*end || !(o->timeout_s >= 0 && o->timeout_s < 1e6))
				goto bad;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			goto bad_usage;
		}
	}
	if (optind != argc)
		goto bad_usage;
	return 0;

bad:
	fprintf(stderr, "gemm: bad value '%s'\n", optarg);
bad_usage:
	usage(stderr);
	return -EINVAL;
}

static const struct opts *g_opts;

/* A progress line on stderr (the table goes to stdout). */
__attribute__((format(printf, 1, 2)))
static void progress(const char *fmt, ...)
{
	va_list ap;

	if (g_opts->quiet)
		return;
	va_start(ap, fmt);
	fputs("gemm: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts @ms in place. */
static double median(double *ms, int count)
{
	qsort(ms, count, sizeof(*ms), cmp_double);
	return count % 2 ? ms[count / 2] :
			   (ms[count / 2 - 1] + ms[count / 2]) / 2;
}

/* --- one way at one size ---------------------------------------------- */

static int way_open(struct env *e, enum way w, const struct gemm_inputs *in,
		    void **h)
{
	int64_t timeout_ns = g_opts->timeout_s > 0 ?
		(int64_t)(g_opts->timeout_s * 1e9) : PTASK_FOREVER;

	if (way_is_ptask(w))
		return gemm_ptask_open(e->ctx, in,
				       w == WAY_PTASK_PIPE ? g_opts->depth : 1,
				       timeout_ns, (struct gemm_ptask **)h);
	if (w == WAY_HANDSTREAM)
		return gemm_hs_open(&e->cu, in, g_opts->depth,
				    (struct gemm_hs **)h);
	return gemm_cuda_open(&e->cu, in, g_opts->pageable,
			      (struct gemm_cuda **)h);
}

static int way_chain(enum way w, void *h)
{
	switch (w) {
	case WAY_PTASK:
		return gemm_ptask_chain(h);
	case WAY_MODULAR:
		return gemm_cuda_modular(h);
	default:
		return gemm_cuda_handcoded(h);
	}
}

static const float *way_result(enum way w, void *h)
{
	return way_is_ptask(w) ? gemm_ptask_result(h) : gemm_cuda_result(h);
}

static void way_close(enum way w, void *h)
{
	if (way_is_ptask(w))
		gemm_ptask_close(h);
	else if (w == WAY_HANDSTREAM)
		gemm_hs_close(h);
	else
		gemm_cuda_close(h);
}

/*
 * With --check: the D of chain @chain (-1: the warm-up) of a one-at-a-time
 * way, compared between chains, off the clock; keeps the worst error in
 * r->max_rel.  Returns whether it matched.
 */
static int check_chain(enum way w, void *h, const struct gemm_inputs *in,
		       const float *ref, int chain, struct row *r)
{
	double rel;
	size_t bad = gemm_compare(way_result(w, h), ref, in->n, g_opts->rtol,
				  &rel);

	if (rel > r->max_rel)
		r->max_rel = rel;
	if (bad)
		fprintf(stderr,
			"gemm: n=%d %s: chain %d: %zu of %zu elements off by more than %g (worst %.3g)\n",
			in->n, way_name[w], chain, bad,
			(size_t)in->n * (size_t)in->n, g_opts->rtol, rel);
	return !bad;
}

/*
 * Warm-up, then --iters timed chains; fills @r.  @ref: the reference D,
 * or NULL without --check; with it every chain's D is checked after its
 * clock stopped.  Returns 0 or -errno (also in r->status).
 */
static int run_way(struct env *e, enum way w, const struct gemm_inputs *in,
		   const float *ref, struct row *r)
{
	const int iters = g_opts->iters;
	double *ms, last_note, t0;
	int i, err, match = 1;
	void *h;

	ms = calloc(iters, sizeof(*ms));
	if (!ms)
		return r->status = -ENOMEM;
	err = way_open(e, w, in, &h);
	if (err)
		goto err_free;
	progress("n=%d %s: warm-up", in->n, way_name[w]);
	err = way_chain(w, h);
	if (err)
		goto err_close;
	if (ref)
		match &= check_chain(w, h, in, ref, -1, r);
	last_note = gemm_now_ms();
	for (i = 0; i < iters; i++) {
		t0 = gemm_now_ms();
		err = way_chain(w, h);
		if (err)
			goto err_close;
		ms[i] = gemm_now_ms() - t0;
		if (ref)
			match &= check_chain(w, h, in, ref, i, r);
		/* long runs say where they are every few seconds */
		if (ms[i] + t0 - last_note > 3000 && i + 1 < iters) {
			progress("n=%d %s: %d/%d chains", in->n, way_name[w],
				 i + 1, iters);
			last_note = gemm_now_ms();
		}
	}
	r->ms = median(ms, iters);
	r->ms_min = ms[0];
	if (ref)
		r->match = match;
	r->status = 1;
	way_close(w, h);
	free(ms);
	return 0;

err_close:
	way_close(w, h);
err_free:
	free(ms);
	fprintf(stderr, "gemm: n=%d %s: failed: %s\n", in->n, way_name[w],
		strerror(-err));
	return r->status = err;
}

/* --- ptask_pipe, handstream: chains in flight, checked as they come ------ */

/**
 * struct pipe_check - the D's of one pipelined run and their checker thread
 * @lock: guards @data's published entries, @pulled, @checked, @stop and
 *	the results below; the checker compares outside it
 * @more: signalled when @pulled grows or @stop is set (the checker waits)
 * @done: signalled when @checked grows (the main thread waits: at the
 *	end, and handstream before it reuses a host buffer)
 * @way: whose D's (for messages)
 * @ref: the reference D of slot 0; @n, @depth: size and slots
 * @data: chain i's D (mapped), set by the main thread before @pulled
 *	passes i; read by the checker only below @pulled
 * @pulled: chains handed to the checker; @checked: chains it compared
 * @stop: no more chains will come
 * @bad_chains: chains with an element off (each reported on stderr)
 * @max_rel: worst relative error of all chains
 *
 * Locking: the main thread writes @data[i] then @pulled under @lock; the
 * checker reads @pulled under @lock and @data[k] (k < @pulled) after it.
 */
struct pipe_check {
	pthread_mutex_t lock;
	pthread_cond_t more, done;
	enum way way;
	const float *ref;
	int n, depth;
	const float **data;
	int pulled, checked;
	int stop;
	int bad_chains;
	double max_rel;
};

static void *pipe_checker(void *arg)
{
	struct pipe_check *pc = arg;
	double rel;
	size_t bad;
	int k;

	pthread_mutex_lock(&pc->lock);
	for (;;) {
		while (pc->checked == pc->pulled && !pc->stop)
			pthread_cond_wait(&pc->more, &pc->lock);
		if (pc->checked == pc->pulled)
			break;
		k = pc->checked;
		pthread_mutex_unlock(&pc->lock);
		/* chain k ran on slot k % depth: its A was scaled for it */
		bad = gemm_compare_scaled(pc->data[k], pc->ref,
					  gemm_slot_scale(k % pc->depth), pc->n,
					  g_opts->rtol, &rel);
		pthread_mutex_lock(&pc->lock);
		if (bad) {
			pc->bad_chains++;
			fprintf(stderr,
				"gemm: n=%d %s: chain %d (slot %d): %zu of %zu elements off by more than %g (worst %.3g)\n",
				pc->n, way_name[pc->way], k, k % pc->depth, bad,
				(size_t)pc->n * (size_t)pc->n, g_opts->rtol, rel);
		}
		if (rel > pc->max_rel)
			pc->max_rel = rel;
		pc->checked++;
		pthread_cond_signal(&pc->done);
	}
	pthread_mutex_unlock(&pc->lock);
	return NULL;
}

/* Hand chain @i's D to the checker; returns how many it has compared. */
static int pipe_hand_over(struct pipe_check *pc, int i, const float *data)
{
	int checked;

	pthread_mutex_lock(&pc->lock);
	pc->data[i] = data;
	pc->pulled = i + 1;
	checked = pc->checked;
	pthread_cond_signal(&pc->more);
	pthread_mutex_unlock(&pc->lock);
	return checked;
}

/* Wait until the checker compared chains 0 .. @upto - 1. */
static void pipe_wait_checked(struct pipe_check *pc, int upto)
{
	pthread_mutex_lock(&pc->lock);
	while (pc->checked < upto)
		pthread_cond_wait(&pc->done, &pc->lock);
	pthread_mutex_unlock(&pc->lock);
}

/* No more chains: wait until the checker compared every one handed over. */
static void pipe_check_finish(struct pipe_check *pc)
{
	pthread_mutex_lock(&pc->lock);
	pc->stop = 1;
	pthread_cond_signal(&pc->more);
	while (pc->checked < pc->pulled)
		pthread_cond_wait(&pc->done, &pc->lock);
	pthread_mutex_unlock(&pc->lock);
}

/* Chains in flight at most: the slots of @h (a pipelined way's). */
static int pipe_depth(enum way w, void *h)
{
	return w == WAY_PTASK_PIPE ? gemm_ptask_depth(h) : gemm_hs_depth(h);
}

/*
 * Start chain @chain on its slot, @chain mod depth, whose previous chain
 * was pulled.  Handstream's D goes to host buffer @chain mod 2 depth, whose
 * previous D (chain - 2 depth) the checker must have finished with.
 */
static int pipe_push(enum way w, void *h, struct pipe_check *pc, int chain)
{
	const int depth = pipe_depth(w, h);

	if (w == WAY_PTASK_PIPE)
		return gemm_ptask_push(h, chain % depth);
	if (pc->ref && chain >= 2 * depth)
		pipe_wait_checked(pc, chain - 2 * depth + 1);
	return gemm_hs_enqueue(h, chain);
}

/*
 * @count chains through @h (a pipelined way's) with up to its depth in
 * flight: push chains 0 .. depth-1, then for each chain i pull its D
 * (ptask_pipe: the oldest, the channel keeps the order of the pushes;
 * handstream: its stream synchronized) and push chain i + depth on the
 * slot chain i freed.  With @ref every D is checked (pipe_check).  *@ms:
 * wall time from the first push to the last D pulled and mapped.
 * *@bad_chains and *@max_rel: as pipe_check's (0 and 0 without @ref).
 * Returns 0 or -errno.
 */
static int pipe_run(enum way w, void *h, int n, int count, const float *ref,
		    double *ms, int *bad_chains, double *max_rel)
{
	const int depth = pipe_depth(w, h);
	struct pipe_check pc = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.more = PTHREAD_COND_INITIALIZER,
		.done = PTHREAD_COND_INITIALIZER,
		.way = w, .ref = ref, .n = n, .depth = depth,
	};
	struct ptask_db **dbs;
	const float *data;
	pthread_t checker;
	int i, released = 0, checked = 0, err = 0;
	double t0, last_note;

	dbs = calloc(count, sizeof(*dbs));
	pc.data = calloc(count, sizeof(*pc.data));
	if (!dbs || !pc.data) {
		err = -ENOMEM;
		goto out_free;
	}
	if (ref) {
		err = -pthread_create(&checker, NULL, pipe_checker, &pc);
		if (err) {
			fprintf(stderr, "gemm: checker thread: %s\n",
				strerror(-err));
			goto out_free;
		}
	}
	t0 = last_note = gemm_now_ms();
	for (i = 0; i < depth && i < count && !err; i++)
		err = pipe_push(w, h, &pc, i);
	for (i = 0; i < count && !err; i++) {
		if (w == WAY_PTASK_PIPE)
			err = gemm_ptask_pull(h, &dbs[i], &data);
		else
			err = gemm_hs_wait(h, i, &data);
		if (err)
			break;
		if (ref) {
			checked = pipe_hand_over(&pc, i, data);
		} else if (dbs[i]) {
			/* consumed: nothing reads it */
			gemm_ptask_release(h, dbs[i]);
			dbs[i] = NULL;
		}
		/* the D's the checker is done with, on this thread's clock */
		for (; released < checked; released++) {
			if (dbs[released])
				gemm_ptask_release(h, dbs[released]);
			dbs[released] = NULL;
		}
		/* chain i is done with its slot: chain i + depth takes it */
		if (i + depth < count)
			err = pipe_push(w, h, &pc, i + depth);
		if (gemm_now_ms() - last_note > 3000 && i + 1 < count) {
			progress("n=%d %s: %d/%d chains", n, way_name[w], i + 1,
				 count);
			last_note = gemm_now_ms();
		}
	}
	*ms = gemm_now_ms() - t0;
	if (ref) {
		pipe_check_finish(&pc);
		pthread_join(checker, NULL);
	}
	*bad_chains = pc.bad_chains;
	*max_rel = pc.max_rel;
out_free:
	/*
	 * After a failure the graph is terminated at close: pushes queued
	 * for chains never pulled are dropped there.
	 */
	for (i = 0; dbs && i < count; i++)
		if (dbs[i])
			gemm_ptask_release(h, dbs[i]);
	free(pc.data);
	free(dbs);
	return err;
}

/*
 * A pipelined way (@w): a warm-up of twice --depth chains pipelined, then
 * --iters chains pipelined and timed as one run; fills @r (r->ms: the
 * wall time / --iters).  @ref: the reference D, or NULL without --check;
 * with it, every chain's D is checked, the warm-up's too.
 *
 * Twice --depth: only once a chain is pushed while --depth others are in
 * flight does the pipeline hold its largest set of buffers, and making
 * them is setup, not the steady state the run measures (for ptask: host
 * arenas for the 64 MiB datablocks at n = 4096, 45 ms each to register on
 * an H200; with this warm-up all 14 were made before the timed run,
 * ptaskd -vv, 2026-11-27).
 */
static int run_pipe(struct env *e, enum way w, const struct gemm_inputs *in,
		    const float *ref, struct row *r)
{
	const int iters = g_opts->iters;
	double ms, rel, worst = 0;
	int bad, bad_total = 0, err;
	void *h;

	err = way_open(e, w, in, &h);
	if (err)
		goto err_out;
	progress("n=%d %s: warm-up, %d chains in flight", in->n, way_name[w],
		 g_opts->depth);
	err = pipe_run(w, h, in->n, 2 * g_opts->depth, ref, &ms, &bad, &rel);
	if (err)
		goto err_close;
	bad_total += bad;
	worst = rel;
	err = pipe_run(w, h, in->n, iters, ref, &ms, &bad, &rel);
	if (err)
		goto err_close;
	bad_total += bad;
	worst = rel > worst ? rel : worst;
	r->ms = r->ms_min = ms / iters;
	if (ref) {
		r->match = bad_total == 0;
		r->max_rel = worst;
	}
	r->status = 1;
	way_close(w, h);
	return 0;

err_close:
	way_close(w, h);
err_out:
	fprintf(stderr, "gemm: n=%d %s: failed: %s\n", in->n, way_name[w],
		strerror(-err));
	return r->status = err;
}

/* --- one size ----------------------------------------------------------- */

/* D = (A x B) x C on the CPU into @d; @t is scratch. */
static int reference(const struct env *e, const struct gemm_inputs *in,
		     float *t, float *d)
{
	double t0 = gemm_now_ms();
	int err;

	progress("n=%d: CPU reference on %d threads", in->n, e->threads);
	err = gemm_ref(in->a, in->b, t, in->n, e->threads);
	err = err ? err : gemm_ref(t, in->c, d, in->n, e->threads);
	if (err)
		fprintf(stderr, "gemm: reference: %s\n", strerror(-err));
	else
		progress("n=%d: CPU reference took %.1f s", in->n,
			 (gemm_now_ms() - t0) / 1e3);
	return err;
}

static const char *match_str(const struct row *r)
{
	return r->match < 0 ? "-" : r->match ? "yes" : "no";
}

static void print_header(void)
{
	printf("%6s  %-10s %12s %-10s %9s %10s %13s  %s\n", "size", "way",
	       "ms/chain", "timing", "in flight", "GFLOP/s", "vs handcoded",
	       "match");
}

/* How r->ms was measured: "latency" (median) or "throughput" (wall/chains). */
static const char *timing_str(const struct row *r)
{
	return way_is_pipe(r->way) ? "throughput" : "latency";
}

/* Table rows (and CSV lines) of one size; @rows has g_opts->nways. */
static void print_rows(const struct row *rows, FILE *csv)
{
	const struct row *hand = NULL;
	int i;

	for (i = 0; i < g_opts->nways; i++)
		if (rows[i].way == WAY_HANDCODED && rows[i].status == 1)
			hand = &rows[i];
	for (i = 0; i < g_opts->nways; i++) {
		const struct row *r = &rows[i];
		double n = r->n, gflops, ratio;
		char rs[32] = "-";

		if (r->status == 0)
			continue;
		if (r->status < 0) {
			printf("%6d  %-10s error: %s\n", r->n, way_name[r->way],
			       strerror(-r->status));
			if (csv)
				fprintf(csv, "%d,%s,,,,,error,,%d,%s,%d\n",
					r->n, way_name[r->way], g_opts->iters,
					timing_str(r), r->in_flight);
			continue;
		}
		gflops = 4 * n * n * n / (r->ms * 1e6);
		ratio = hand ? r->ms / hand->ms : NAN;
		if (hand)
			snprintf(rs, sizeof(rs), "%.3f", ratio);
		printf("%6d  %-10s %12.3f %-10s %9d %10.1f %13s  %s\n", r->n,
		       way_name[r->way], r->ms, timing_str(r), r->in_flight,
		       gflops, rs, match_str(r));
		if (csv) {
			fprintf(csv, "%d,%s,%.6f,%.6f,%.3f,", r->n,
				way_name[r->way], r->ms, r->ms_min, gflops);
			if (hand)
				fprintf(csv, "%.6f", ratio);
			fprintf(csv, ",%s,", match_str(r));
			if (r->match >= 0)
				fprintf(csv, "%.3g", r->max_rel);
			fprintf(csv, ",%d,%s,%d\n", g_opts->iters,
				timing_str(r), r->in_flight);
		}
	}
	fflush(stdout);
	if (csv)
		fflush(csv);
}

/*
 * Every requested way at size @n; fills @rows (g_opts->nways entries).
 * Returns 0, or -errno when the inputs or the reference could not be made.
 */
static int run_size(struct env *e, int n, struct row *rows)
{
	const size_t bytes = gemm_bytes(n);
	float *a, *b, *c, *t = NULL, *d = NULL;
	struct gemm_inputs in = { .n = n };
	int i, any = 0, err = -ENOMEM;

	a = malloc(bytes);
	b = malloc(bytes);
	c = malloc(bytes);
	if (!a || !b || !c)
		goto out_free;
	gemm_fill(a, n, 1000 + n);
	gemm_fill(b, n, 2000 + n);
	gemm_fill(c, n, 3000 + n);
	in.a = a;
	in.b = b;
	in.c = c;
	for (i = 0; i < g_opts->nways; i++)
		any |= way_is_ptask(g_opts->order[i]) ? !e->ctx_err :
							!e->cu_err;
	/* nothing to compare when every way is skipped */
	if (g_opts->check && any) {
		t = malloc(bytes);
		d = malloc(bytes);
		if (!t || !d)
			goto out_free;
		err = reference(e, &in, t, d);
		if (err)
			goto out_free;
	}
	for (i = 0; i < g_opts->nways; i++) {
		enum way w = g_opts->order[i];
		int avail = way_is_ptask(w) ? !e->ctx_err : !e->cu_err;

		rows[i] = (struct row){
			.n = n, .way = w, .match = -1,
			.in_flight = way_is_pipe(w) ? g_opts->depth : 1,
		};
		if (!avail)
			continue;
		if (way_is_pipe(w))
			run_pipe(e, w, &in, d, &rows[i]);
		else
			run_way(e, w, &in, d, &rows[i]);
	}
	err = 0;
out_free:
	if (err)
		fprintf(stderr, "gemm: n=%d: %s\n", n, strerror(-err));
	free(d);
	free(t);
	free(c);
	free(b);
	free(a);
	return err;
}

/* --- setup and main ------------------------------------------------------ */

static void env_open(struct env *e, struct opts *o)
{
	static const int gpu_sizes[] = { 256, 512, 1024, 2048, 4096 };
	static const int cpu_sizes[] = { 64, 128 };
	const int *def;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int i, want_cu = o->ways & (1U << WAY_MODULAR | 1U << WAY_HANDCODED |
				    1U << WAY_HANDSTREAM);

	e->threads = cpus > 0 ? (int)cpus : 1;
	e->cu_err = -ENODEV;
	/* also probed, and closed again, to pick the default sizes */
	if (want_cu || !o->nsizes)
		e->cu_err = pc_cuda_dev_open(&e->cu, 0);
	if (!o->nsizes) {
		def = e->cu_err ? cpu_sizes : gpu_sizes;
		o->nsizes = e->cu_err ? 2 : 5;
		for (i = 0; i < o->nsizes; i++)
			o->sizes[i] = def[i];
	}
	if (e->cu_err == 0 && !want_cu) {
		pc_cuda_dev_close(&e->cu);
		e->cu_err = -ENODEV;
	}
	if (want_cu && e->cu_err)
		printf("# CUDA ways (modular, handcoded, handstream): skipped: %s\n",
		       e->cu_err == -ENOENT ? "no libcuda.so.1" :
					      "no usable CUDA GPU");
	else if (want_cu)
		printf("# cuda: %s (%s host buffers)\n", e->cu.name,
		       o->pageable ? "pageable" : "page-locked");

	e->ctx_err = -ENODEV;
	if (o->ways & (1U << WAY_PTASK | 1U << WAY_PTASK_PIPE)) {
		e->ctx_err = ptask_ctx_open(PTASK_MODE_AUTO, NULL, &e->ctx);
		if (e->ctx_err)
			printf("# ptask: skipped: ptask_ctx_open: %s (start ptaskd --mode user and set PTASK_SOCKET, or load ptask.ko with an executor)\n",
			       strerror(-e->ctx_err));
		else
			printf("# ptask: %s mode\n",
			       ptask_mode_name(ptask_ctx_mode(e->ctx)));
	}
}

static void env_close(struct env *e)
{
	if (!e->ctx_err)
		ptask_ctx_close(e->ctx);
	if (!e->cu_err)
		pc_cuda_dev_close(&e->cu);
}

int main(int argc, char **argv)
{
	struct row rows[NWAYS];
	struct opts o;
	struct env e = { 0 };
	FILE *csv = NULL;
	int s, i, failed = 0, skipped = 0;

	if (parse_args(argc, argv, &o))
		return 2;
	g_opts = &o;
	if (o.csv) {
		csv = fopen(o.csv, "w");
		if (!csv) {
			fprintf(stderr, "gemm: %s: %s\n", o.csv, strerror(errno));
			return 1;
		}
		/* timing and in_flight came last, after the columns of old */
		fprintf(csv, "size,way,ms_median,ms_min,gflops,ratio_vs_handcoded,match,max_rel_err,iters,timing,in_flight\n");
	}
	env_open(&e, &o);
	printf("# D = (A x B) x C, n x n float; %d timed chains per point after a warm-up\n",
	       o.iters);
	printf("# ms/chain: latency = median of the chains timed one at a time (ptask, modular, handcoded);\n"
	       "#   throughput = wall time of all %d chains / %d, up to 'in flight' at once (ptask_pipe, handstream)\n",
	       o.iters, o.iters);
	if (o.check)
		printf("# check: |D - ref| <= %g * |ref| per element, inputs in [0,1)\n",
		       o.rtol);
	print_header();
	for (s = 0; s < o.nsizes; s++) {
		if (run_size(&e, o.sizes[s], rows)) {
			failed = 1;
			continue;
		}
		for (i = 0; i < o.nways; i++) {
			failed |= rows[i].status < 0 || rows[i].match == 0;
			skipped |= rows[i].status == 0;
		}
		print_rows(rows, csv);
	}
	env_close(&e);
	if (csv && fclose(csv)) {
		fprintf(stderr, "gemm: %s: %s\n", o.csv, strerror(errno));
		failed = 1;
	}
	return failed ? 1 : skipped ? EXIT_SKIP : 0;
}
