// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cuda_dev.c - one device's primary context (see cuda_dev.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/cuda_dev.h"

int pc_cuda_dev_open(struct pc_cuda_dev *d, int ordinal)
{
	struct pc_cuda_api *cu = &d->cu;
	int count = 0;

	memset(d, 0, sizeof(*d));
	if (pc_cuda_load(cu, d->why, sizeof(d->why)))
		return -ENOENT;
	/* A driver without a usable GPU fails cuInit (NO_DEVICE and kin). */
	if (cu->Init(0) != CUDA_SUCCESS) {
		snprintf(d->why, sizeof(d->why),
			 "cuInit failed (no device or no driver)");
		return -ENODEV;
	}
	if (cu->DeviceGetCount(&count) != CUDA_SUCCESS || ordinal < 0 ||
	    ordinal >= count || cu->DeviceGet(&d->dev, ordinal) != CUDA_SUCCESS) {
		snprintf(d->why, sizeof(d->why), "no CUDA device %d", ordinal);
		return -ENODEV;
	}
	if (cu->DeviceGetName(d->name, sizeof(d->name), d->dev) != CUDA_SUCCESS)
		snprintf(d->name, sizeof(d->name), "device %d", ordinal);
	d->name[sizeof(d->name) - 1] = '\0';
	if (cu->DevicePrimaryCtxRetain(&d->ctx, d->dev) != CUDA_SUCCESS) {
		snprintf(d->why, sizeof(d->why), "cuDevicePrimaryCtxRetain failed");
		return -EIO;
	}
	if (cu->CtxSetCurrent(d->ctx) != CUDA_SUCCESS) {
		snprintf(d->why, sizeof(d->why), "cuCtxSetCurrent failed");
		cu->DevicePrimaryCtxRelease(d->dev);
		return -EIO;
	}
	d->open = 1;
	return 0;
}

void pc_cuda_dev_close(struct pc_cuda_dev *d)
{
	if (!d->open)
		return;
	d->cu.CtxSetCurrent(NULL);
	d->cu.DevicePrimaryCtxRelease(d->dev);
	d->open = 0;
}

int pc_cuda_dev_load(struct pc_cuda_dev *d, const void *image,
		     const char *entry, const char *who, CUmodule *mod,
		     CUfunction *fn)
{
	char log[4096] = "";
	CUjit_option opts[] = { CU_JIT_ERROR_LOG_BUFFER,
				CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *vals[] = { log, (void *)(uintptr_t)sizeof(log) };
	CUresult r;

	r = d->cu.ModuleLoadDataEx(mod, image, 2, opts, vals);
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "%s: cuModuleLoadDataEx: %s%s%.*s\n", who,
			pc_cuda_errname(&d->cu, r), log[0] ? "\n" : "",
			(int)sizeof(log), log);
		return -EIO;
	}
	r = d->cu.ModuleGetFunction(fn, *mod, entry);
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "%s: cuModuleGetFunction(%s): %s\n", who, entry,
			pc_cuda_errname(&d->cu, r));
		d->cu.ModuleUnload(*mod);
		return -EIO;
	}
	return 0;
}
