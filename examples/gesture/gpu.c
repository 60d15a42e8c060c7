// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gpu.c - see gpu.h.  Every failure prints the driver's error name.
 */
#include <errno.h>

#include "gpu.h"

/* Logs a failed driver call; 0 or -EIO. */
static int ck(struct gesture_gpu *g, CUresult r, const char *what)
{
	if (r == CUDA_SUCCESS)
		return 0;
	fprintf(stderr, "gesture: %s: %s\n", what,
		pc_cuda_errname(&g->dev.cu, r));
	return -EIO;
}

int gesture_gpu_open(struct gesture_gpu *g)
{
	int err;

	err = pc_cuda_dev_open(&g->dev, 0);
	if (err)
		return -ENODEV;
	err = pc_cuda_dev_load(&g->dev, gesture_ptx, GESTURE_XFORM_ENTRY,
			       "gesture", &g->mod, &g->xform);
	if (err)
		goto err_close;
	err = ck(g, g->dev.cu.ModuleGetFunction(&g->filter, g->mod,
						GESTURE_FILTER_ENTRY),
		 "cuModuleGetFunction(" GESTURE_FILTER_ENTRY ")");
	if (err)
		goto err_unload;
	return 0;

err_unload:
	g->dev.cu.ModuleUnload(g->mod);
err_close:
	pc_cuda_dev_close(&g->dev);
	return err;
}

void gesture_gpu_close(struct gesture_gpu *g)
{
	g->dev.cu.ModuleUnload(g->mod);
	pc_cuda_dev_close(&g->dev);
}

int gesture_gpu_alloc(struct gesture_gpu *g, size_t bytes, CUdeviceptr *p)
{
	return ck(g, g->dev.cu.MemAlloc(p, bytes), "cuMemAlloc");
}

void gesture_gpu_free(struct gesture_gpu *g, CUdeviceptr p)
{
	if (p)
		g->dev.cu.MemFree(p);
}

void *gesture_gpu_host_alloc(struct gesture_gpu *g, size_t bytes)
{
	void *p = NULL;

	return ck(g, g->dev.cu.MemAllocHost(&p, bytes), "cuMemAllocHost") ? NULL : p;
}

void gesture_gpu_host_free(struct gesture_gpu *g, void *p)
{
	if (p)
		g->dev.cu.MemFreeHost(p);
}

int gesture_gpu_h2d(struct gesture_gpu *g, CUdeviceptr dst, const void *src,
		    size_t bytes)
{
	return ck(g, g->dev.cu.MemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
}

int gesture_gpu_d2h(struct gesture_gpu *g, void *dst, CUdeviceptr src,
		    size_t bytes)
{
	return ck(g, g->dev.cu.MemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
}

static unsigned int blocks(int n, int per)
{
	return (unsigned int)((n + per - 1) / per);
}

int gesture_gpu_xform(struct gesture_gpu *g, CUdeviceptr depth,
		      CUdeviceptr cloud, const struct gesture_cam *cam)
{
	struct pc_cuda_api *cu = &g->dev.cu;
	struct gesture_cam c = *cam;
	void *params[] = { &depth, &cloud, &c };

	return ck(g, cu->LaunchKernel(g->xform, blocks(c.width, GESTURE_BLOCK_X),
				      blocks(c.height, GESTURE_BLOCK_Y), 1,
				      GESTURE_BLOCK_X, GESTURE_BLOCK_Y, 1, 0,
				      NULL, params, NULL),
		  "cuLaunchKernel(" GESTURE_XFORM_ENTRY ")");
}

int gesture_gpu_filter(struct gesture_gpu *g, CUdeviceptr clouds,
		       CUdeviceptr out, const struct gesture_filter_shape *shape)
{
	struct pc_cuda_api *cu = &g->dev.cu;
	struct gesture_filter_shape s = *shape;
	void *params[] = { &clouds, &out, &s };

	return ck(g, cu->LaunchKernel(g->filter, blocks(s.width, GESTURE_BLOCK_X),
				      blocks(s.height, GESTURE_BLOCK_Y),
				      (unsigned int)s.ncams, GESTURE_BLOCK_X,
				      GESTURE_BLOCK_Y, 1, 0, NULL, params, NULL),
		  "cuLaunchKernel(" GESTURE_FILTER_ENTRY ")");
}

int gesture_gpu_sync(struct gesture_gpu *g)
{
	return ck(g, g->dev.cu.CtxSynchronize(), "cuCtxSynchronize");
}
