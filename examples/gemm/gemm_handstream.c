// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gemm_handstream.c - the gemm chain as an expert would hand-code a
 * stream of them on the CUDA driver API: the "handstream" way.
 *
 * Not the paper's baseline (that is gemm_cuda.c's handcoded way:
 * synchronous copies and launches on one stream); this one shows what
 * the same overlap as the pipelined ptask way is worth when written by
 * hand.  Each of --depth slots has its own stream, its own device buffers
 * and its own page-locked A (x 2^slot, as gemm_ptask.c's slots, so that
 * every D can be checked against the reference scaled for its slot); B
 * and C are shared, read-only, page-locked.  A chain on slot s enqueues,
 * all asynchronously on stream s:
 *
 *   A, B, C host -> device;  T = A x B;  D = T x C;  D device -> host
 *
 * and the caller (gemm.c's pipeline) waits for chain i with a
 * cuStreamSynchronize on its stream before it enqueues chain i + depth on
 * the same slot, so up to depth chains overlap: one chain's copies run
 * while another's kernels do.
 *
 * D lands in one of 2 x depth page-locked host buffers, chain i in
 * buffer i mod (2 x depth): the caller may still be reading (checking)
 * chain i's D while chain i + depth's is copied back.  gemm.c waits for
 * its checker before it reuses a buffer.
 *
 * Like the other CUDA ways: set up per size untimed; the calls come from
 * the thread whose context is current (pc_cuda_dev_open's).  --pageable
 * does not apply: asynchronous copies from pageable memory are not
 * asynchronous.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cuda_dev.h"
#include "gemm.h"

/* cuStreamCreate's flag: no implicit ordering with the legacy stream. */
#define HS_STREAM_NON_BLOCKING	0x1

/**
 * struct hs_slot - what one chain in flight uses
 * @stream: its stream
 * @ha: page-locked A x 2^slot
 * @dx, @dy, @dz, @dw: A then D, B, T, C on the device (as handcoded's)
 */
struct hs_slot {
	CUstream stream;
	float *ha;
	CUdeviceptr dx, dy, dz, dw;
};

/**
 * struct gemm_hs - one size's handstream state
 * @depth: slots (streams), so chains in flight
 * @hb, @hc: page-locked B and C, shared by every slot
 * @hd: 2 x @depth page-locked result buffers, chain i's in i mod 2 depth
 */
struct gemm_hs {
	struct pc_cuda_dev *dev;
	int n;
	int depth;
	CUmodule mod;
	CUfunction fn;
	float *hb, *hc;
	float *hd[2 * GEMM_MAX_DEPTH];
	struct hs_slot slot[GEMM_MAX_DEPTH];
};

static int cuchk(struct gemm_hs *g, CUresult r, const char *what)
{
	if (r == CUDA_SUCCESS)
		return 0;
	fprintf(stderr, "gemm: handstream: %s: %s\n", what,
		pc_cuda_errname(&g->dev->cu, r));
	return -EIO;
}

static float *host_alloc(struct gemm_hs *g, size_t bytes)
{
	void *p = NULL;

	if (cuchk(g, g->dev->cu.MemAllocHost(&p, bytes), "cuMemAllocHost"))
		return NULL;
	return p;
}

void gemm_hs_close(struct gemm_hs *g)
{
	struct pc_cuda_api *cu = &g->dev->cu;
	int s;

	/* nothing may still run on what is freed (a failed chain's work) */
	cu->CtxSynchronize();
	for (s = 0; s < g->depth; s++) {
		struct hs_slot *sl = &g->slot[s];

		if (sl->dw)
			cu->MemFree(sl->dw);
		if (sl->dz)
			cu->MemFree(sl->dz);
		if (sl->dy)
			cu->MemFree(sl->dy);
		if (sl->dx)
			cu->MemFree(sl->dx);
		if (sl->ha)
			cu->MemFreeHost(sl->ha);
		if (sl->stream)
			cu->StreamDestroy(sl->stream);
	}
	for (s = 0; s < 2 * g->depth; s++)
		if (g->hd[s])
			cu->MemFreeHost(g->hd[s]);
	if (g->hc)
		cu->MemFreeHost(g->hc);
	if (g->hb)
		cu->MemFreeHost(g->hb);
	if (g->mod)
		cu->ModuleUnload(g->mod);
	free(g);
}

/* Slot @s's stream, device buffers and scaled A. */
static int slot_open(struct gemm_hs *g, const struct gemm_inputs *in, int s)
{
	const size_t bytes = gemm_bytes(in->n);
	const size_t count = (size_t)in->n * (size_t)in->n;
	const float scale = gemm_slot_scale(s);
	struct pc_cuda_api *cu = &g->dev->cu;
	struct hs_slot *sl = &g->slot[s];
	size_t i;
	int err;

	err = cuchk(g, cu->StreamCreate(&sl->stream, HS_STREAM_NON_BLOCKING),
		    "cuStreamCreate");
	if (err)
		return err;
	sl->ha = host_alloc(g, bytes);
	if (!sl->ha)
		return -ENOMEM;
	/* a power of two: exact */
	for (i = 0; i < count; i++)
		sl->ha[i] = in->a[i] * scale;
	err = cuchk(g, cu->MemAlloc(&sl->dx, bytes), "cuMemAlloc");
	err = err ? err : cuchk(g, cu->MemAlloc(&sl->dy, bytes), "cuMemAlloc");
	err = err ? err : cuchk(g, cu->MemAlloc(&sl->dz, bytes), "cuMemAlloc");
	return err ? err : cuchk(g, cu->MemAlloc(&sl->dw, bytes), "cuMemAlloc");
}

int gemm_hs_open(struct pc_cuda_dev *dev, const struct gemm_inputs *in,
		 int depth, struct gemm_hs **out)
{
	const size_t bytes = gemm_bytes(in->n);
	struct gemm_hs *g;
	int s, err;

	if (depth < 1 || depth > GEMM_MAX_DEPTH) {
		fprintf(stderr, "gemm: handstream: depth %d, want 1..%d\n",
			depth, GEMM_MAX_DEPTH);
		return -EINVAL;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->dev = dev;
	g->n = in->n;
	g->depth = depth;
	/*
	 * Every member starts zeroed, so one unwinding path
	 * (gemm_hs_close) frees exactly what was made.
	 */
	err = pc_cuda_dev_load(dev, gemm_ptx, GEMM_ENTRY, "gemm: handstream",
			       &g->mod, &g->fn);
	if (err) {
		g->mod = NULL;
		goto err_close;
	}
	err = -ENOMEM;
	g->hb = host_alloc(g, bytes);
	g->hc = g->hb ? host_alloc(g, bytes) : NULL;
	if (!g->hc)
		goto err_close;
	memcpy(g->hb, in->b, bytes);
	memcpy(g->hc, in->c, bytes);
	for (s = 0; s < 2 * depth; s++) {
		g->hd[s] = host_alloc(g, bytes);
		if (!g->hd[s])
			goto err_close;
	}
	for (s = 0; s < depth; s++) {
		err = slot_open(g, in, s);
		if (err)
			goto err_close;
	}
	*out = g;
	return 0;

err_close:
	gemm_hs_close(g);
	return err;
}

/* One launch of sgemm on @stream: z = x * y. */
static int launch(struct gemm_hs *g, CUstream stream, CUdeviceptr x,
		  CUdeviceptr y, CUdeviceptr z)
{
	int n = g->n;
	void *params[] = { &x, &y, &z, &n };
	unsigned int grid = gemm_grid(n);

	return cuchk(g, g->dev->cu.LaunchKernel(g->fn, grid, grid, 1, GEMM_TILE,
					    GEMM_TILE, 1, 0, stream, params,
					    NULL), "cuLaunchKernel");
}

int gemm_hs_enqueue(struct gemm_hs *g, int chain)
{
	const size_t bytes = gemm_bytes(g->n);
	struct pc_cuda_api *cu = &g->dev->cu;
	struct hs_slot *sl;
	float *hd;
	int err;

	if (chain < 0) {
		fprintf(stderr, "gemm: handstream: chain %d\n", chain);
		return -EINVAL;
	}
	sl = &g->slot[chain % g->depth];
	hd = g->hd[chain % (2 * g->depth)];
	err = cuchk(g, cu->MemcpyHtoDAsync(sl->dx, sl->ha, bytes, sl->stream),
		    "cuMemcpyHtoDAsync");
	err = err ? err : cuchk(g, cu->MemcpyHtoDAsync(sl->dy, g->hb, bytes,
						       sl->stream),
				"cuMemcpyHtoDAsync");
	err = err ? err : cuchk(g, cu->MemcpyHtoDAsync(sl->dw, g->hc, bytes,
						       sl->stream),
				"cuMemcpyHtoDAsync");
	err = err ? err : launch(g, sl->stream, sl->dx, sl->dy, sl->dz);
	/* T = dz stays on the device; D overwrites dx (A is consumed) */
	err = err ? err : launch(g, sl->stream, sl->dz, sl->dw, sl->dx);
	return err ? err : cuchk(g, cu->MemcpyDtoHAsync(hd, sl->dx, bytes,
							sl->stream),
				 "cuMemcpyDtoHAsync");
}

int gemm_hs_wait(struct gemm_hs *g, int chain, const float **data)
{
	int err;

	if (chain < 0) {
		fprintf(stderr, "gemm: handstream: chain %d\n", chain);
		return -EINVAL;
	}
	err = cuchk(g, g->dev->cu.StreamSynchronize(
			       g->slot[chain % g->depth].stream),
		    "cuStreamSynchronize");
	if (err)
		return err;
	*data = g->hd[chain % (2 * g->depth)];
	return 0;
}

int gemm_hs_depth(const struct gemm_hs *g)
{
	return g->depth;
}
