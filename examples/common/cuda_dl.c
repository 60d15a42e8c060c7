// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cuda_dl.c - load the CUDA driver API at run time (see cuda_dl.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cuda_dl.h"

/* Every entry point, with the member of struct cuda_dl it fills. */
static const struct {
	const char *sym;
	size_t off;
} syms[] = {
#define S(member, name) { name, offsetof(struct cuda_dl, member) }
	S(Init, "cuInit"),
	S(DeviceGetCount, "cuDeviceGetCount"),
	S(DeviceGet, "cuDeviceGet"),
	S(DeviceGetName, "cuDeviceGetName"),
	S(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
	S(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
	S(CtxSetCurrent, "cuCtxSetCurrent"),
	S(CtxSynchronize, "cuCtxSynchronize"),
	S(ModuleLoadDataEx, "cuModuleLoadDataEx"),
	S(ModuleUnload, "cuModuleUnload"),
	S(ModuleGetFunction, "cuModuleGetFunction"),
	S(MemAlloc, "cuMemAlloc_v2"),
	S(MemFree, "cuMemFree_v2"),
	S(MemAllocHost, "cuMemAllocHost_v2"),
	S(MemFreeHost, "cuMemFreeHost"),
	S(MemcpyHtoD, "cuMemcpyHtoD_v2"),
	S(MemcpyDtoH, "cuMemcpyDtoH_v2"),
	S(LaunchKernel, "cuLaunchKernel"),
	S(GetErrorName, "cuGetErrorName"),
#undef S
};

int cuda_dl_open(struct cuda_dl *cu, int ordinal)
{
	int count = 0, err;
	size_t i;

	memset(cu, 0, sizeof(*cu));
	cu->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!cu->lib)
		return -ENOENT;
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *p = dlsym(cu->lib, syms[i].sym);

		if (!p) {
			err = -ENOENT;
			goto err_close;
		}
		/* POSIX guarantees data and function pointers convert */
		memcpy((char *)cu + syms[i].off, &p, sizeof(p));
	}
	/* A driver without a usable GPU fails cuInit (NO_DEVICE and kin). */
	err = -ENODEV;
	if (cu->Init(0) != CUDA_SUCCESS ||
	    cu->DeviceGetCount(&count) != CUDA_SUCCESS || ordinal >= count ||
	    cu->DeviceGet(&cu->dev, ordinal) != CUDA_SUCCESS)
		goto err_close;
	if (cu->DeviceGetName(cu->name, sizeof(cu->name), cu->dev) !=
	    CUDA_SUCCESS)
		snprintf(cu->name, sizeof(cu->name), "device %d", ordinal);
	if (cu->DevicePrimaryCtxRetain(&cu->ctx, cu->dev) != CUDA_SUCCESS)
		goto err_close;
	if (cu->CtxSetCurrent(cu->ctx) != CUDA_SUCCESS)
		goto err_release;
	return 0;

err_release:
	cu->DevicePrimaryCtxRelease(cu->dev);
err_close:
	dlclose(cu->lib);
	cu->lib = NULL;
	return err;
}

void cuda_dl_close(struct cuda_dl *cu)
{
	if (!cu->lib)
		return;
	cu->CtxSetCurrent(NULL);
	cu->DevicePrimaryCtxRelease(cu->dev);
	dlclose(cu->lib);
	cu->lib = NULL;
}

const char *cuda_dl_errname(const struct cuda_dl *cu, CUresult err)
{
	const char *name = NULL;

	if (cu->GetErrorName && cu->GetErrorName(err, &name) == CUDA_SUCCESS &&
	    name)
		return name;
	return "CUDA_ERROR_UNKNOWN";
}

int cuda_dl_load(struct cuda_dl *cu, const char *ptx, const char *entry,
		 const char *who, CUmodule *mod, CUfunction *fn)
{
	char log[4096] = "";
	int opts[] = { CU_JIT_ERROR_LOG_BUFFER,
		       CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *vals[] = { log, (void *)(size_t)sizeof(log) };
	CUresult r;

	r = cu->ModuleLoadDataEx(mod, ptx, 2, opts, vals);
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "%s: cuModuleLoadDataEx: %s%s%s\n", who,
			cuda_dl_errname(cu, r), log[0] ? "\n" : "", log);
		return -EIO;
	}
	r = cu->ModuleGetFunction(fn, *mod, entry);
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "%s: cuModuleGetFunction(%s): %s\n", who, entry,
			cuda_dl_errname(cu, r));
		cu->ModuleUnload(*mod);
		return -EIO;
	}
	return 0;
}
