/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cuda_dev.h - one CUDA device's primary context, for programs that need
 * no more (the examples, the GPU benchmarks' baseline, the GPU tests), on
 * the shim of cuda_dl.h.  ptaskd's cuda backend manages contexts of its
 * own and does not use this.
 *
 * Usage:
 *	struct pc_cuda_dev d;
 *	if (pc_cuda_dev_open(&d, 0) == 0) {
 *		d.cu.MemAlloc(&p, bytes) ...;
 *		pc_cuda_dev_close(&d);
 *	}
 *
 * Locking: none; the context is made current on the opening thread only.
 */
#ifndef PTASK_COMMON_CUDA_DEV_H
#define PTASK_COMMON_CUDA_DEV_H

#include "common/cuda_dl.h"

/**
 * struct pc_cuda_dev - libcuda and one device's primary context
 * @cu: the driver's entry points
 * @dev: the device
 * @ctx: its primary context (current on the opening thread)
 * @name: the device's name
 * @why: why pc_cuda_dev_open() failed, for the caller's message
 * @open: @ctx is retained (pc_cuda_dev_close() releases it)
 */
struct pc_cuda_dev {
	struct pc_cuda_api cu;
	CUdevice dev;
	CUcontext ctx;
	char name[128];
	char why[256];
	int open;
};

/**
 * pc_cuda_dev_open() - load libcuda.so.1, initialise the driver and make
 * device @ordinal's primary context current on this thread
 * @d: the device
 * @ordinal: which device
 *
 * Prints nothing: the caller decides how loudly to skip (@d->why says
 * what failed).
 *
 * Return: 0; -ENOENT (no libcuda.so.1, or an entry point missing);
 * -ENODEV (no such device, or cuInit failed: no GPU or no working
 * driver); -EIO (the device's primary context could not be made
 * current).
 */
int pc_cuda_dev_open(struct pc_cuda_dev *d, int ordinal);

/**
 * pc_cuda_dev_close() - release the primary context
 * @d: a device opened, or one whose open failed (nothing to do)
 *
 * The library stays loaded (see pc_cuda_load()).
 */
void pc_cuda_dev_close(struct pc_cuda_dev *d);

/**
 * pc_cuda_dev_load() - load a module and find one of its kernels
 * @d: an open device
 * @image: PTX (NUL-terminated) or a cubin
 * @entry: the kernel's name
 * @who: prefix of the messages printed to stderr on failure (the JIT's
 *	log included)
 * @mod: the module loaded
 * @fn: the kernel
 *
 * Return: 0 or -EIO.
 */
int pc_cuda_dev_load(struct pc_cuda_dev *d, const void *image,
		     const char *entry, const char *who, CUmodule *mod,
		     CUfunction *fn);

#endif /* PTASK_COMMON_CUDA_DEV_H */
