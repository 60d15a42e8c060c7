// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fastpath_cuda.c - the fast-path benchmark's raw CUDA baselines
 * (fastpath.h): the same kernel as the ptask side (ptask_empty,
 * out[0] = in[0] + 1, from the same PTX), driven by hand through the
 * driver API (common/cuda_dev.h on the dlopen shim), in a forked child
 * of the benchmark (fastpath_proc.c).
 *
 *   raw.p1.launch     cuLaunchKernel + cuStreamSynchronize, buffers on
 *                     the device (the floor of any GPU invocation)
 *   raw.p1.copy       4 B copy in + launch + 4 B copy out + synchronize,
 *                     pinned host words (like for like with a ptask round)
 *   raw.p1b.b2b       @inflight launches back to back, one synchronize
 *   raw.p1b.pipe      @inflight x (copy in + launch + copy out) spread
 *                     over @streams streams, one synchronize per batch
 *   raw.p11.k<k>.b<bytes>.stream  copy in, k dependent launches, copy
 *                     out, one synchronize
 *   raw.p11.k<k>.b<bytes>.graph   the same captured once as a CUDA
 *                     graph (cuStreamBeginCapture .. cuGraphInstantiate)
 *                     and replayed each round
 *   raw.p11.k<k>.b4.launch, .kgraph   k launches + one synchronize, and
 *                     a graph of k kernel nodes replayed, on buffers that
 *                     stay on the device (no copies)
 *   P1c member        launch + synchronize until the gang's deadline
 *   P1c threads       N threads of one process doing the same, each on
 *                     its own stream in the one context: the most one
 *                     executor process (one context, as ptaskd's shared
 *                     isolation and issue 13's executor per uid have)
 *                     could reach, beside N processes under MPS
 *
 * Every result is checked like the ptask side's: pinned outputs each
 * round, device-resident ones (launch, b2b) after the timed rounds, the
 * output poisoned first so a kernel that never ran fails.
 *
 * Locking: none; one thread, but for fp_cuda_p1c_threads's, which share
 * nothing but the gang's start and their one struct raw (read only).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cuda_dev.h"
#include "bench/fastpath.h"

#define RAW_MAX_STREAMS	16
#define P1C_WARMUP	200

/**
 * struct raw - one process's device, the kernel and its streams
 * @d: the device (its primary context current on this thread)
 * @cu: @d's entry points
 * @mod: the PTX module
 * @fn: ptask_empty
 * @s: streams (non-blocking)
 * @ns: entries in @s
 */
struct raw {
	struct pc_cuda_dev d;
	struct pc_cuda_api *cu;
	CUmodule mod;
	CUfunction fn;
	CUstream s[RAW_MAX_STREAMS];
	int ns;
};

/* @r == CUDA_SUCCESS, or say what failed and return -EIO. */
static int ok(struct raw *rw, CUresult r, const char *what)
{
	if (r == CUDA_SUCCESS)
		return 0;
	fprintf(stderr, "fastpath: cuda: %s: %s (%d)\n", what,
		pc_cuda_errname(rw->cu, r), r);
	return -EIO;
}

static void raw_close(struct raw *rw)
{
	while (rw->ns > 0)
		rw->cu->StreamDestroy(rw->s[--rw->ns]);
	if (rw->mod)
		rw->cu->ModuleUnload(rw->mod);
	pc_cuda_dev_close(&rw->d);
}

/* Open device 0, load the kernel, make @streams streams. */
static int raw_open(struct raw *rw, const struct fp_opts *o, int streams)
{
	int err;

	memset(rw, 0, sizeof(*rw));
	rw->cu = &rw->d.cu;
	if (streams < 1 || streams > RAW_MAX_STREAMS)
		return -EINVAL;
	err = pc_cuda_dev_open(&rw->d, 0);
	if (err) {
		fprintf(stderr, "fastpath: cuda: %s\n", rw->d.why);
		return err;
	}
	err = pc_cuda_dev_load(&rw->d, o->ptx, "ptask_empty", "fastpath", &rw->mod,
			       &rw->fn);
	if (err)
		rw->mod = NULL;	/* pc_cuda_dev_load() unloaded it */
	for (; !err && rw->ns < streams; rw->ns++)
		err = ok(rw, rw->cu->StreamCreate(&rw->s[rw->ns], CU_STREAM_NON_BLOCKING),
			 "cuStreamCreate");
	if (err) {
		if (rw->ns > 0)
			rw->ns--;	/* the failed one was not made */
		raw_close(rw);
	}
	return err;
}

/* Queue ptask_empty(@in, @out) on @s. */
static int launch(struct raw *rw, CUdeviceptr in, CUdeviceptr out, CUstream s)
{
	void *params[2] = { &in, &out };

	return ok(rw, rw->cu->LaunchKernel(rw->fn, 1, 1, 1, 1, 1, 1, 0, s, params, NULL),
		  "cuLaunchKernel");
}

static int check(const char *what, uint32_t got, uint32_t want)
{
	if (got == want)
		return 0;
	fprintf(stderr, "fastpath: cuda: %s: got %u, want %u\n", what, got, want);
	return -EBADMSG;
}

/* Store @n samples of @us under @key. */
static int put(struct fp_results *r, const char *key, double *us, int n,
	       double per_s)
{
	struct fp_series *s = fp_results_add(r, "%s", key);

	if (!s)
		return -ENOSPC;
	s->count = n;
	s->per_s = per_s;
	return fp_stats_of(us, n, &s->st);
}

/* --- P1 ---------------------------------------------------------------------- */

static int p1_launch(struct raw *rw, const struct fp_opts *o, CUdeviceptr d,
		     double *us)
{
	uint32_t seed = o->seed, v = fp_next_value(&seed), w[2] = { v, ~(v + 1) };
	uint64_t t0;
	int i, err;

	err = ok(rw, rw->cu->MemcpyHtoD(d, w, sizeof(w)), "cuMemcpyHtoD");
	for (i = -o->warmup; !err && i < o->rounds; i++) {
		t0 = fp_now_ns();
		err = launch(rw, d, d + 4, rw->s[0]) ?:
		      ok(rw, rw->cu->StreamSynchronize(rw->s[0]), "cuStreamSynchronize");
		if (i >= 0)
			us[i] = (double)(fp_now_ns() - t0) / 1e3;
	}
	err = err ?: ok(rw, rw->cu->MemcpyDtoH(w, d, sizeof(w)), "cuMemcpyDtoH");
	return err ?: check("P1 launch", w[1], v + 1);
}

static int p1_copy(struct raw *rw, const struct fp_opts *o, CUdeviceptr d,
		   uint32_t *h, double *us)
{
	uint32_t seed = o->seed, v;
	CUstream s = rw->s[0];
	uint64_t t0;
	int i, err = 0;

	for (i = -o->warmup; !err && i < o->rounds; i++) {
		v = fp_next_value(&seed);
		h[1] = ~(v + 1);
		t0 = fp_now_ns();
		h[0] = v;
		err = ok(rw, rw->cu->MemcpyHtoDAsync(d, &h[0], 4, s), "cuMemcpyHtoDAsync") ?:
		      launch(rw, d, d + 4, s) ?:
		      ok(rw, rw->cu->MemcpyDtoHAsync(&h[1], d + 4, 4, s), "cuMemcpyDtoHAsync") ?:
		      ok(rw, rw->cu->StreamSynchronize(s), "cuStreamSynchronize") ?:
		      check("P1 copy", h[1], v + 1);
		if (i >= 0)
			us[i] = (double)(fp_now_ns() - t0) / 1e3;
	}
	return err;
}

/**
 * fp_cuda_p1() - P1's baselines: "raw.p1.launch", "raw.p1.copy"
 * @o: the options
 * @r: the results
 *
 * Also prints the device's name and the driver's version ("# gpu=").
 *
 * Return: 0 or -errno.
 */
int fp_cuda_p1(const struct fp_opts *o, struct fp_results *r)
{
	double *us = calloc((size_t)o->rounds, sizeof(*us));
	CUdeviceptr d = 0;
	uint32_t *h = NULL;
	struct raw rw;
	int ver = 0, err;

	if (!us)
		return -ENOMEM;
	err = raw_open(&rw, o, 1);
	if (err)
		goto out_free;
	rw.cu->DriverGetVersion(&ver);
	printf("# gpu=\"%s\" cuda_driver=%d.%d\n", rw.d.name, ver / 1000, ver % 1000 / 10);
	err = ok(&rw, rw.cu->MemAlloc(&d, 8), "cuMemAlloc") ?:
	      ok(&rw, rw.cu->MemAllocHost((void **)&h, 8), "cuMemAllocHost");
	err = err ?: p1_launch(&rw, o, d, us);
	err = err ?: put(r, "raw.p1.launch", us, o->rounds, 0);
	err = err ?: p1_copy(&rw, o, d, h, us);
	err = err ?: put(r, "raw.p1.copy", us, o->rounds, 0);
	if (h)
		rw.cu->MemFreeHost(h);
	if (d)
		rw.cu->MemFree(d);
	raw_close(&rw);
out_free:
	free(us);
	return err;
}

/* --- P1b --------------------------------------------------------------------- */

/*
 * Back-to-back: @n launches on one stream, one synchronize, per batch.
 * Inputs d[0..n), outputs d[n..2n); checked once at the end.
 */
static int p1b_b2b(struct raw *rw, const struct fp_opts *o, CUdeviceptr d,
		   uint32_t *h, double *us, double *per_s)
{
	int n = o->inflight, warm = o->warmup / n + 2, i, j, err = 0;
	uint32_t seed = o->seed;
	uint64_t t0, total = 0;

	for (j = 0; j < n; j++) {
		h[j] = fp_next_value(&seed);
		h[n + j] = ~(h[j] + 1);
	}
	err = ok(rw, rw->cu->MemcpyHtoD(d, h, 8u * (size_t)n), "cuMemcpyHtoD");
	for (i = -warm; !err && i < o->batches; i++) {
		t0 = fp_now_ns();
		for (j = 0; !err && j < n; j++)
			err = launch(rw, d + 4u * j, d + 4u * (n + j), rw->s[0]);
		err = err ?: ok(rw, rw->cu->StreamSynchronize(rw->s[0]),
				"cuStreamSynchronize");
		if (i >= 0) {
			us[i] = (double)(fp_now_ns() - t0) / 1e3;
			total += fp_now_ns() - t0;
		}
	}
	err = err ?: ok(rw, rw->cu->MemcpyDtoH(h + n, d + 4u * n, 4u * (size_t)n),
			"cuMemcpyDtoH");
	for (j = 0; !err && j < n; j++)
		err = check("P1b back-to-back", h[n + j], h[j] + 1);
	*per_s = (double)o->batches * n * 1e9 / (double)total;
	return err;
}

/* One pipelined batch: @n x (copy in, launch, copy out) over the streams. */
static int pipe_batch(struct raw *rw, CUdeviceptr d, uint32_t *h, int n,
		      uint32_t *seed)
{
	int j, err = 0;

	for (j = 0; j < n; j++) {
		h[j] = fp_next_value(seed);
		h[n + j] = ~(h[j] + 1);
	}
	for (j = 0; !err && j < n; j++) {
		CUstream s = rw->s[j % rw->ns];

		err = ok(rw, rw->cu->MemcpyHtoDAsync(d + 4u * j, &h[j], 4, s),
			 "cuMemcpyHtoDAsync") ?:
		      launch(rw, d + 4u * j, d + 4u * (n + j), s) ?:
		      ok(rw, rw->cu->MemcpyDtoHAsync(&h[n + j], d + 4u * (n + j), 4, s),
			 "cuMemcpyDtoHAsync");
	}
	err = err ?: ok(rw, rw->cu->CtxSynchronize(), "cuCtxSynchronize");
	for (j = 0; !err && j < n; j++)
		err = check("P1b pipeline", h[n + j], h[j] + 1);
	return err;
}

static int p1b_pipe(struct raw *rw, const struct fp_opts *o, CUdeviceptr d,
		    uint32_t *h, double *us, double *per_s)
{
	int n = o->inflight, warm = o->warmup / n + 2, i, err = 0;
	uint32_t seed = o->seed;
	uint64_t t0, total = 0;

	for (i = -warm; !err && i < o->batches; i++) {
		t0 = fp_now_ns();
		err = pipe_batch(rw, d, h, n, &seed);
		if (i >= 0) {
			us[i] = (double)(fp_now_ns() - t0) / 1e3;
			total += fp_now_ns() - t0;
		}
	}
	*per_s = (double)o->batches * n * 1e9 / (double)total;
	return err;
}

/**
 * fp_cuda_p1b() - P1b's baselines: "raw.p1b.b2b", "raw.p1b.pipe"
 * @o: the options
 * @r: the results
 *
 * Return: 0 or -errno.
 */
int fp_cuda_p1b(const struct fp_opts *o, struct fp_results *r)
{
	double *us = calloc((size_t)o->batches, sizeof(*us)), per_s = 0;
	size_t bytes = 8u * (size_t)o->inflight;
	CUdeviceptr d = 0;
	uint32_t *h = NULL;
	struct raw rw;
	int err;

	if (!us)
		return -ENOMEM;
	err = raw_open(&rw, o, o->streams);
	if (err)
		goto out_free;
	err = ok(&rw, rw.cu->MemAlloc(&d, bytes), "cuMemAlloc") ?:
	      ok(&rw, rw.cu->MemAllocHost((void **)&h, bytes), "cuMemAllocHost");
	err = err ?: p1b_b2b(&rw, o, d, h, us, &per_s);
	err = err ?: put(r, "raw.p1b.b2b", us, o->batches, per_s);
	err = err ?: p1b_pipe(&rw, o, d, h, us, &per_s);
	err = err ?: put(r, "raw.p1b.pipe", us, o->batches, per_s);
	if (h)
		rw.cu->MemFreeHost(h);
	if (d)
		rw.cu->MemFree(d);
	raw_close(&rw);
out_free:
	free(us);
	return err;
}

/* --- P11 --------------------------------------------------------------------- */

/**
 * struct chain_bufs - a raw chain's memory
 * @d: k + 1 device buffers of @bytes, back to back: hop i reads buffer i
 *	and writes buffer i + 1
 * @hin: the pinned input
 * @hout: the pinned output
 * @k: hops
 * @bytes: each buffer's size
 * @copies: each round copies the input in and the output out (like for
 *	like with a ptask round); 0: k launches on device-resident buffers
 *	only, checked after the timed rounds
 */
struct chain_bufs {
	CUdeviceptr d;
	uint32_t *hin, *hout;
	int k;
	uint64_t bytes;
	int copies;
};

/* Queue one round of the chain on @s: [copy in,] k launches[, copy out]. */
static int chain_enqueue(struct raw *rw, const struct chain_bufs *cb, CUstream s)
{
	CUdeviceptr last = cb->d + cb->bytes * (uint64_t)cb->k;
	int i, err = 0;

	if (cb->copies)
		err = ok(rw, rw->cu->MemcpyHtoDAsync(cb->d, cb->hin, cb->bytes, s),
			 "cuMemcpyHtoDAsync");
	for (i = 0; !err && i < cb->k; i++)
		err = launch(rw, cb->d + cb->bytes * (uint64_t)i,
			     cb->d + cb->bytes * (uint64_t)(i + 1), s);
	if (!err && cb->copies)
		err = ok(rw, rw->cu->MemcpyDtoHAsync(cb->hout, last, cb->bytes, s),
			 "cuMemcpyDtoHAsync");
	return err;
}

/*
 * Device-resident chains: one input value for all rounds, the last
 * buffer poisoned first (@done 0), then read back and checked (@done 1).
 */
static int resident_check(struct raw *rw, const struct chain_bufs *cb,
			  uint32_t v, int done)
{
	CUdeviceptr last = cb->d + cb->bytes * (uint64_t)cb->k;
	uint32_t w = ~(v + (uint32_t)cb->k);

	if (!done)
		return ok(rw, rw->cu->MemcpyHtoD(cb->d, &v, 4), "cuMemcpyHtoD") ?:
		       ok(rw, rw->cu->MemcpyHtoD(last, &w, 4), "cuMemcpyHtoD");
	return ok(rw, rw->cu->MemcpyDtoH(&w, last, 4), "cuMemcpyDtoH") ?:
	       check("P11 resident chain", w, v + (uint32_t)cb->k);
}

/* Timed rounds of the chain: enqueued each round, or @exec replayed. */
static int chain_rounds(struct raw *rw, const struct fp_opts *o,
			const struct chain_bufs *cb, CUgraphExec exec,
			double *us)
{
	uint32_t seed = o->seed, v = fp_next_value(&seed);
	CUstream s = rw->s[0];
	uint64_t t0;
	int i, err;

	err = cb->copies ? 0 : resident_check(rw, cb, v, 0);
	for (i = -o->warmup; !err && i < o->rounds; i++) {
		if (cb->copies) {
			v = fp_next_value(&seed);
			cb->hout[0] = ~(v + (uint32_t)cb->k);
		}
		t0 = fp_now_ns();
		if (cb->copies)
			cb->hin[0] = v;
		err = exec ? ok(rw, rw->cu->GraphLaunch(exec, s), "cuGraphLaunch") :
			     chain_enqueue(rw, cb, s);
		err = err ?: ok(rw, rw->cu->StreamSynchronize(s), "cuStreamSynchronize");
		if (!err && cb->copies)
			err = check("P11 chain", cb->hout[0], v + (uint32_t)cb->k);
		if (i >= 0)
			us[i] = (double)(fp_now_ns() - t0) / 1e3;
	}
	return err ?: cb->copies ? 0 : resident_check(rw, cb, v, 1);
}

/* The chain captured as a CUDA graph and replayed. */
static int chain_graph(struct raw *rw, const struct fp_opts *o,
		       const struct chain_bufs *cb, double *us)
{
	struct pc_cuda_api *cu = rw->cu;
	CUgraphExec exec = NULL;
	CUgraph g = NULL;
	int err;

	err = ok(rw, cu->StreamBeginCapture(rw->s[0], CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
		 "cuStreamBeginCapture");
	if (err)
		return err;
	err = chain_enqueue(rw, cb, rw->s[0]);
	/* end the capture even when enqueueing failed */
	err = ok(rw, cu->StreamEndCapture(rw->s[0], &g), "cuStreamEndCapture") ?: err;
	err = err ?: ok(rw, cu->GraphInstantiate(&exec, g, 0), "cuGraphInstantiate");
	err = err ?: chain_rounds(rw, o, cb, exec, us);
	if (exec)
		cu->GraphExecDestroy(exec);
	if (g)
		cu->GraphDestroy(g);
	return err;
}

/* The chain enqueued each round, then (with stream capture) replayed. */
static int p11_pair(struct raw *rw, const struct fp_opts *o,
		    const struct chain_bufs *cb, double *us,
		    struct fp_results *r, const char *enq, const char *replay)
{
	struct pc_cuda_api *cu = rw->cu;
	char key[48];
	int err;

	err = chain_rounds(rw, o, cb, NULL, us);
	snprintf(key, sizeof(key), "raw.p11.k%d.b%llu.%s", cb->k,
		 (unsigned long long)cb->bytes, enq);
	err = err ?: put(r, key, us, o->rounds, 0);
	if (err || !cu->StreamBeginCapture || !cu->StreamEndCapture ||
	    !cu->GraphInstantiate || !cu->GraphLaunch)
		return err;
	err = chain_graph(rw, o, cb, us);
	snprintf(key, sizeof(key), "raw.p11.k%d.b%llu.%s", cb->k,
		 (unsigned long long)cb->bytes, replay);
	return err ?: put(r, key, us, o->rounds, 0);
}

/*
 * One chain: "stream" and "graph" (copies in and out each round); at
 * 4 bytes also "launch" and "kgraph" (k launches, or a graph of k kernel
 * nodes, on device-resident buffers: no copies).
 */
static int p11_one(struct raw *rw, const struct fp_opts *o, int k,
		   uint64_t bytes, double *us, struct fp_results *r)
{
	struct chain_bufs cb = { .k = k, .bytes = bytes, .copies = 1 };
	struct pc_cuda_api *cu = rw->cu;
	int err;

	err = ok(rw, cu->MemAlloc(&cb.d, bytes * (uint64_t)(k + 1)), "cuMemAlloc") ?:
	      ok(rw, cu->MemAllocHost((void **)&cb.hin, bytes), "cuMemAllocHost") ?:
	      ok(rw, cu->MemAllocHost((void **)&cb.hout, bytes), "cuMemAllocHost");
	if (!err) {
		memset(cb.hin, 0x5a, bytes);
		err = p11_pair(rw, o, &cb, us, r, "stream", "graph");
	}
	if (!err && bytes == 4) {
		cb.copies = 0;
		err = p11_pair(rw, o, &cb, us, r, "launch", "kgraph");
	}
	if (cb.hout)
		cu->MemFreeHost(cb.hout);
	if (cb.hin)
		cu->MemFreeHost(cb.hin);
	if (cb.d)
		cu->MemFree(cb.d);
	return err;
}

/**
 * fp_cuda_p11() - P11's baselines: "raw.p11.k<k>.b<bytes>.stream" and
 * ".graph" (when the driver has stream capture) for every chain the
 * ptask side runs, and ".launch", ".kgraph" at 4 bytes
 * @o: the options
 * @r: the results
 *
 * Return: 0 or -errno.
 */
int fp_cuda_p11(const struct fp_opts *o, struct fp_results *r)
{
	const uint64_t sizes[2] = { 4, o->big_bytes };
	double *us = calloc((size_t)o->rounds, sizeof(*us));
	struct raw rw;
	int i, b, err;

	if (!us)
		return -ENOMEM;
	err = raw_open(&rw, o, 1);
	if (!err && !rw.cu->StreamBeginCapture)
		fprintf(stderr, "fastpath: cuda: no stream capture in this driver: no graph baseline\n");
	for (b = 0; !err && b < 2; b++)
		for (i = 0; !err && i < o->nchain; i++)
			if (!b || o->chain[i] <= o->big_max_k)
				err = p11_one(&rw, o, o->chain[i], sizes[b], us, r);
	if (rw.cu && rw.d.open)
		raw_close(&rw);
	free(us);
	return err;
}

/* --- P1c ---------------------------------------------------------------------- */

/**
 * fp_cuda_p1c_member() - one raw P1c process: launch + synchronize until
 * the gang's deadline (its own context: time-sliced with the others, or
 * through MPS when the caller started it)
 * @g: the gang
 * @idx: this member
 * @o: the options
 *
 * Return: 0 or -errno.
 */
int fp_cuda_p1c_member(struct fp_gang *g, int idx, const struct fp_opts *o)
{
	uint32_t seed = o->seed + (uint32_t)idx, v = fp_next_value(&seed);
	uint32_t w[2] = { v, ~(v + 1) };
	long long count = 0;
	CUdeviceptr d = 0;
	struct raw rw;
	double cpu0;
	int i, err;

	err = raw_open(&rw, o, 1);
	if (err)
		return err;
	err = ok(&rw, rw.cu->MemAlloc(&d, 8), "cuMemAlloc") ?:
	      ok(&rw, rw.cu->MemcpyHtoD(d, w, sizeof(w)), "cuMemcpyHtoD");
	for (i = 0; !err && i < P1C_WARMUP; i++)
		err = launch(&rw, d, d + 4, rw.s[0]) ?:
		      ok(&rw, rw.cu->StreamSynchronize(rw.s[0]), "cuStreamSynchronize");
	if (!err) {
		fp_gang_wait_start(g, idx, &cpu0);
		while (!err && (int64_t)fp_now_ns() < g->deadline_ns) {
			err = launch(&rw, d, d + 4, rw.s[0]) ?:
			      ok(&rw, rw.cu->StreamSynchronize(rw.s[0]),
				 "cuStreamSynchronize");
			count++;
		}
		if (!err)
			fp_gang_finish(g, idx, count, cpu0, 0);
	}
	err = err ?: ok(&rw, rw.cu->MemcpyDtoH(w, d, sizeof(w)), "cuMemcpyDtoH");
	err = err ?: check("P1c launch", w[1], v + 1);
	if (d)
		rw.cu->MemFree(d);
	raw_close(&rw);
	return err;
}

/**
 * struct p1c_thread - one thread of fp_cuda_p1c_threads
 * @rw: the process's device and kernel (read only here)
 * @g: the gang (its deadline)
 * @idx: which thread (its input value's seed)
 * @o: the options
 * @ready: every thread set up: the process's member waits at it, then
 *	fp_gang_wait_start()
 * @go: the gang's start passed on to the threads
 * @count: launch + synchronize rounds in the window
 * @err: 0 or -errno
 */
struct p1c_thread {
	struct raw *rw;
	struct fp_gang *g;
	int idx;
	const struct fp_opts *o;
	pthread_barrier_t *ready;
	pthread_barrier_t *go;
	long long count;
	int err;
};

static void *p1c_thread_main(void *arg)
{
	struct p1c_thread *t = arg;
	struct raw *rw = t->rw;
	uint32_t seed = t->o->seed + (uint32_t)t->idx, v = fp_next_value(&seed);
	uint32_t w[2] = { v, ~(v + 1) };
	CUdeviceptr d = 0;
	CUstream s = NULL;
	int i, err;

	err = ok(rw, rw->cu->CtxSetCurrent(rw->d.ctx), "cuCtxSetCurrent") ?:
	      ok(rw, rw->cu->StreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate") ?:
	      ok(rw, rw->cu->MemAlloc(&d, 8), "cuMemAlloc") ?:
	      ok(rw, rw->cu->MemcpyHtoD(d, w, sizeof(w)), "cuMemcpyHtoD");
	for (i = 0; !err && i < P1C_WARMUP; i++)
		err = launch(rw, d, d + 4, s) ?:
		      ok(rw, rw->cu->StreamSynchronize(s), "cuStreamSynchronize");
	/* a thread that failed still meets the others at both barriers */
	pthread_barrier_wait(t->ready);
	pthread_barrier_wait(t->go);
	while (!err && (int64_t)fp_now_ns() < t->g->deadline_ns) {
		err = launch(rw, d, d + 4, s) ?:
		      ok(rw, rw->cu->StreamSynchronize(s), "cuStreamSynchronize");
		t->count++;
	}
	if (!err && t->count) {
		err = ok(rw, rw->cu->MemcpyDtoH(w, d, sizeof(w)), "cuMemcpyDtoH") ?:
		      check("P1c threads launch", w[1], v + 1);
	}
	if (d)
		rw->cu->MemFree(d);
	if (s)
		rw->cu->StreamDestroy(s);
	t->err = err;
	return NULL;
}

/**
 * fp_cuda_p1c_threads() - raw P1c in one process: @o->threads threads,
 * each doing launch + synchronize on its own stream in the process's one
 * context until the gang's deadline (run as a gang of one member)
 * @g: the gang
 * @idx: this member (0)
 * @o: the options, @o->threads set (1..FP_MAX_PROCS)
 *
 * The count is all the threads', the CPU time the process's.
 * Return: 0 or -errno.
 */
int fp_cuda_p1c_threads(struct fp_gang *g, int idx, const struct fp_opts *o)
{
	struct p1c_thread t[FP_MAX_PROCS];
	pthread_barrier_t ready, go;
	pthread_t tid[FP_MAX_PROCS];
	int i, n = 0, err, terr = 0;
	long long count = 0;
	struct raw rw;
	double cpu0;

	if (o->threads < 1 || o->threads > FP_MAX_PROCS)
		return -EINVAL;
	err = raw_open(&rw, o, 1);
	if (err)
		return err;
	if (pthread_barrier_init(&ready, NULL, (unsigned int)o->threads + 1)) {
		raw_close(&rw);
		return -ENOMEM;
	}
	if (pthread_barrier_init(&go, NULL, (unsigned int)o->threads + 1)) {
		pthread_barrier_destroy(&ready);
		raw_close(&rw);
		return -ENOMEM;
	}
	for (; n < o->threads; n++) {
		t[n] = (struct p1c_thread){ .rw = &rw, .g = g, .idx = idx * FP_MAX_PROCS + n,
					    .o = o, .ready = &ready, .go = &go };
		err = -pthread_create(&tid[n], NULL, p1c_thread_main, &t[n]);
		if (err)
			break;
	}
	if (err) {
		/*
		 * The threads made wait at a barrier that counts o->threads
		 * + 1 and will never pass: no tear-down; the gang's child
		 * _exits as soon as this returns, and they with it.
		 */
		fprintf(stderr, "fastpath: P1c threads: thread %d: %s\n", n, strerror(-err));
		return err;
	}
	pthread_barrier_wait(&ready);
	fp_gang_wait_start(g, idx, &cpu0);
	pthread_barrier_wait(&go);
	for (i = 0; i < n; i++) {
		pthread_join(tid[i], NULL);
		count += t[i].count;
		terr = terr ?: t[i].err;
	}
	if (!terr)
		fp_gang_finish(g, idx, count, cpu0, 0);
	pthread_barrier_destroy(&go);
	pthread_barrier_destroy(&ready);
	raw_close(&rw);
	return terr;
}
