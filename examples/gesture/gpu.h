/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * gpu.h - the xform and filter kernels on the CUDA driver API (through
 * common/cuda_dev.c: no CUDA toolkit needed to build), for the
 * implementations that do their own CUDA: handcode, modular, pipes, and
 * the gpucheck test.  Synchronous: each call returns when the GPU is done
 * (the default stream), as the paper's hand-written versions did.
 */
#ifndef EXAMPLES_GESTURE_GPU_H
#define EXAMPLES_GESTURE_GPU_H

#include "common/cuda_dev.h"
#include "gesture.h"

struct gesture_gpu {
	struct pc_cuda_dev dev;
	CUmodule mod;
	CUfunction xform, filter;
};

/* -ENODEV: no usable GPU (callers skip); -EIO: the PTX did not load. */
int gesture_gpu_open(struct gesture_gpu *g);
void gesture_gpu_close(struct gesture_gpu *g);
int gesture_gpu_alloc(struct gesture_gpu *g, size_t bytes, CUdeviceptr *p);
void gesture_gpu_free(struct gesture_gpu *g, CUdeviceptr p);
/* Pinned host memory (so copies run at full speed), or NULL. */
void *gesture_gpu_host_alloc(struct gesture_gpu *g, size_t bytes);
void gesture_gpu_host_free(struct gesture_gpu *g, void *p);
int gesture_gpu_h2d(struct gesture_gpu *g, CUdeviceptr dst, const void *src,
		    size_t bytes);
int gesture_gpu_d2h(struct gesture_gpu *g, void *dst, CUdeviceptr src,
		    size_t bytes);
/* One camera: @depth (w x h u16) to @cloud (w x h points). */
int gesture_gpu_xform(struct gesture_gpu *g, CUdeviceptr depth,
		      CUdeviceptr cloud, const struct gesture_cam *cam);
/* shape->ncams stacked clouds at @clouds to stacked @out. */
int gesture_gpu_filter(struct gesture_gpu *g, CUdeviceptr clouds,
		       CUdeviceptr out, const struct gesture_filter_shape *shape);
int gesture_gpu_sync(struct gesture_gpu *g);

#endif /* EXAMPLES_GESTURE_GPU_H */
