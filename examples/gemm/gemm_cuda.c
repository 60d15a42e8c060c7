// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gemm_cuda.c - the two baselines of the gemm example, straight on the
 * CUDA driver API (loaded at run time by common/cuda_dl.c):
 *
 *   modular    gemm(gemm(A, B), C), where gemm() is a reusable routine
 *              that copies its two inputs to the GPU, multiplies and
 *              copies the product back: T travels GPU -> host -> GPU;
 *   handcoded  A, B, C in; two launches; D out: T never leaves the GPU.
 *
 * Both are generous to themselves in the same ways, so that the ratios
 * measure the data movement alone: device buffers and the module are
 * set up once per size (untimed), and the host buffers are page-locked
 * (cuMemAllocHost), as ptaskd's datablock arenas are, unless --pageable
 * asks for plain malloc memory.  Each chain ends with a synchronous copy
 * of D, so its time covers the whole computation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cuda_dev.h"
#include "gemm.h"

struct gemm_cuda {
	struct pc_cuda_dev *dev;
	int n;
	int pageable;
	CUmodule mod;
	CUfunction fn;
	/* host: inputs, the modular way's T, the result */
	float *ha, *hb, *hc, *ht, *hd;
	/* device: two inputs and the product, reused by both ways */
	CUdeviceptr dx, dy, dz, dw;
};

static int cuchk(struct gemm_cuda *g, CUresult r, const char *what)
{
	if (r == CUDA_SUCCESS)
		return 0;
	fprintf(stderr, "gemm: cuda: %s: %s\n", what,
		pc_cuda_errname(&g->dev->cu, r));
	return -EIO;
}

static float *host_alloc(struct gemm_cuda *g, size_t bytes)
{
	void *p = NULL;

	if (g->pageable)
		return malloc(bytes);
	if (cuchk(g, g->dev->cu.MemAllocHost(&p, bytes), "cuMemAllocHost"))
		return NULL;
	return p;
}

static void host_free(struct gemm_cuda *g, float *p)
{
	if (!p)
		return;
	if (g->pageable)
		free(p);
	else
		g->dev->cu.MemFreeHost(p);
}

/* One launch of sgemm: z = x * y. */
static int launch(struct gemm_cuda *g, CUdeviceptr x, CUdeviceptr y,
		  CUdeviceptr z)
{
	int n = g->n;
	void *params[] = { &x, &y, &z, &n };
	unsigned int grid = gemm_grid(n);

	return cuchk(g, g->dev->cu.LaunchKernel(g->fn, grid, grid, 1, GEMM_TILE,
					    GEMM_TILE, 1, 0, NULL, params,
					    NULL), "cuLaunchKernel");
}

void gemm_cuda_close(struct gemm_cuda *g)
{
	struct pc_cuda_api *cu = &g->dev->cu;

	if (g->dw)
		cu->MemFree(g->dw);
	if (g->dz)
		cu->MemFree(g->dz);
	if (g->dy)
		cu->MemFree(g->dy);
	if (g->dx)
		cu->MemFree(g->dx);
	host_free(g, g->hd);
	host_free(g, g->ht);
	host_free(g, g->hc);
	host_free(g, g->hb);
	host_free(g, g->ha);
	if (g->mod)
		cu->ModuleUnload(g->mod);
	free(g);
}

int gemm_cuda_open(struct pc_cuda_dev *dev, const struct gemm_inputs *in,
		   int pageable, struct gemm_cuda **out)
{
	const size_t bytes = gemm_bytes(in->n);
	struct gemm_cuda *g;
	int err;

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->dev = dev;
	g->n = in->n;
	g->pageable = pageable;
	/*
	 * Every member starts zeroed, so one unwinding path
	 * (gemm_cuda_close) frees exactly what was made.
	 */
	err = pc_cuda_dev_load(dev, gemm_ptx, GEMM_ENTRY, "gemm: cuda",
			       &g->mod, &g->fn);
	if (err) {
		g->mod = NULL;
		goto err_close;
	}
	err = -ENOMEM;
	g->ha = host_alloc(g, bytes);
	g->hb = g->ha ? host_alloc(g, bytes) : NULL;
	g->hc = g->hb ? host_alloc(g, bytes) : NULL;
	g->ht = g->hc ? host_alloc(g, bytes) : NULL;
	g->hd = g->ht ? host_alloc(g, bytes) : NULL;
	if (!g->hd)
		goto err_close;
	memcpy(g->ha, in->a, bytes);
	memcpy(g->hb, in->b, bytes);
	memcpy(g->hc, in->c, bytes);
	err = cuchk(g, dev->cu.MemAlloc(&g->dx, bytes), "cuMemAlloc");
	err = err ? err : cuchk(g, dev->cu.MemAlloc(&g->dy, bytes), "cuMemAlloc");
	err = err ? err : cuchk(g, dev->cu.MemAlloc(&g->dz, bytes), "cuMemAlloc");
	err = err ? err : cuchk(g, dev->cu.MemAlloc(&g->dw, bytes), "cuMemAlloc");
	if (err)
		goto err_close;
	*out = g;
	return 0;

err_close:
	gemm_cuda_close(g);
	return err;
}

/* The reusable routine of the modular way: hz = hx * hy, host to host. */
static int gemm_host(struct gemm_cuda *g, const float *hx, const float *hy,
		     float *hz)
{
	const size_t bytes = gemm_bytes(g->n);
	struct pc_cuda_api *cu = &g->dev->cu;
	int err;

	err = cuchk(g, cu->MemcpyHtoD(g->dx, hx, bytes), "cuMemcpyHtoD");
	err = err ? err : cuchk(g, cu->MemcpyHtoD(g->dy, hy, bytes),
				"cuMemcpyHtoD");
	err = err ? err : launch(g, g->dx, g->dy, g->dz);
	/* synchronous: returns when the kernel and the copy are done */
	return err ? err : cuchk(g, cu->MemcpyDtoH(hz, g->dz, bytes),
				 "cuMemcpyDtoH");
}

int gemm_cuda_modular(struct gemm_cuda *g)
{
	int err = gemm_host(g, g->ha, g->hb, g->ht);

	return err ? err : gemm_host(g, g->ht, g->hc, g->hd);
}

int gemm_cuda_handcoded(struct gemm_cuda *g)
{
	const size_t bytes = gemm_bytes(g->n);
	struct pc_cuda_api *cu = &g->dev->cu;
	int err;

	err = cuchk(g, cu->MemcpyHtoD(g->dx, g->ha, bytes), "cuMemcpyHtoD");
	err = err ? err : cuchk(g, cu->MemcpyHtoD(g->dy, g->hb, bytes),
				"cuMemcpyHtoD");
	err = err ? err : cuchk(g, cu->MemcpyHtoD(g->dw, g->hc, bytes),
				"cuMemcpyHtoD");
	err = err ? err : launch(g, g->dx, g->dy, g->dz);
	/* T = dz stays on the device; D overwrites dx (A is consumed) */
	err = err ? err : launch(g, g->dz, g->dw, g->dx);
	return err ? err : cuchk(g, cu->MemcpyDtoH(g->hd, g->dx, bytes),
				 "cuMemcpyDtoH");
}

const float *gemm_cuda_result(struct gemm_cuda *g)
{
	return g->hd;
}
