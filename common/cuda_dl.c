// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cuda_dl.c - the CUDA driver API loaded at run time (see cuda_dl.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/cuda_dl.h"

/* Every entry point, with the member of struct pc_cuda_api it fills. */
static const struct {
	const char *sym;
	size_t off;
	int optional;
} syms[] = {
#define PC_CU(m, s, o) { s, offsetof(struct pc_cuda_api, m), o }
	PC_CU(Init, "cuInit", 0),
	PC_CU(DriverGetVersion, "cuDriverGetVersion", 0),
	PC_CU(GetErrorName, "cuGetErrorName", 0),
	PC_CU(GetErrorString, "cuGetErrorString", 0),
	PC_CU(DeviceGetCount, "cuDeviceGetCount", 0),
	PC_CU(DeviceGet, "cuDeviceGet", 0),
	PC_CU(DeviceGetName, "cuDeviceGetName", 0),
	PC_CU(DeviceGetAttribute, "cuDeviceGetAttribute", 0),
	PC_CU(DeviceTotalMem, "cuDeviceTotalMem_v2", 0),
	PC_CU(DeviceCanAccessPeer, "cuDeviceCanAccessPeer", 0),
	PC_CU(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 0),
	PC_CU(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", 0),
	PC_CU(CtxCreate_v4, "cuCtxCreate_v4", 1),
	PC_CU(CtxCreate_v2, "cuCtxCreate_v2", 1),
	PC_CU(CtxDestroy, "cuCtxDestroy_v2", 0),
	PC_CU(CtxSetCurrent, "cuCtxSetCurrent", 0),
	PC_CU(CtxGetCurrent, "cuCtxGetCurrent", 0),
	PC_CU(CtxPopCurrent, "cuCtxPopCurrent_v2", 0),
	PC_CU(CtxSynchronize, "cuCtxSynchronize", 0),
	PC_CU(CtxEnablePeerAccess, "cuCtxEnablePeerAccess", 0),
	PC_CU(StreamCreate, "cuStreamCreate", 0),
	PC_CU(StreamDestroy, "cuStreamDestroy_v2", 0),
	PC_CU(StreamSynchronize, "cuStreamSynchronize", 0),
	PC_CU(StreamWaitEvent, "cuStreamWaitEvent", 0),
	PC_CU(StreamQuery, "cuStreamQuery", 0),
	PC_CU(StreamWriteValue32, "cuStreamWriteValue32_v2", 1),
	PC_CU(StreamWaitValue32, "cuStreamWaitValue32_v2", 1),
	PC_CU(EventCreate, "cuEventCreate", 0),
	PC_CU(EventDestroy, "cuEventDestroy_v2", 0),
	PC_CU(EventRecord, "cuEventRecord", 0),
	PC_CU(EventSynchronize, "cuEventSynchronize", 0),
	PC_CU(EventQuery, "cuEventQuery", 0),
	PC_CU(MemAlloc, "cuMemAlloc_v2", 0),
	PC_CU(MemFree, "cuMemFree_v2", 0),
	PC_CU(MemAllocHost, "cuMemAllocHost_v2", 0),
	PC_CU(MemFreeHost, "cuMemFreeHost", 0),
	PC_CU(MemHostAlloc, "cuMemHostAlloc", 0),
	PC_CU(MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", 0),
	PC_CU(MemHostRegister, "cuMemHostRegister_v2", 0),
	PC_CU(MemHostUnregister, "cuMemHostUnregister", 0),
	PC_CU(MemcpyHtoD, "cuMemcpyHtoD_v2", 0),
	PC_CU(MemcpyDtoH, "cuMemcpyDtoH_v2", 0),
	PC_CU(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", 0),
	PC_CU(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", 0),
	PC_CU(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", 0),
	PC_CU(MemcpyPeerAsync, "cuMemcpyPeerAsync", 0),
	PC_CU(ModuleLoadDataEx, "cuModuleLoadDataEx", 0),
	PC_CU(ModuleUnload, "cuModuleUnload", 0),
	PC_CU(ModuleGetFunction, "cuModuleGetFunction", 0),
	PC_CU(FuncGetParamInfo, "cuFuncGetParamInfo", 1),
	PC_CU(LaunchKernel, "cuLaunchKernel", 0),
	PC_CU(StreamBeginCapture, "cuStreamBeginCapture_v2", 1),
	PC_CU(StreamEndCapture, "cuStreamEndCapture", 1),
	PC_CU(GraphInstantiate, "cuGraphInstantiateWithFlags", 1),
	PC_CU(GraphLaunch, "cuGraphLaunch", 1),
	PC_CU(GraphExecDestroy, "cuGraphExecDestroy", 1),
	PC_CU(GraphDestroy, "cuGraphDestroy", 1),
	PC_CU(GraphCreate, "cuGraphCreate", 1),
	PC_CU(GraphAddKernelNode, "cuGraphAddKernelNode_v2", 1),
	PC_CU(GraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams_v2", 1),
#undef PC_CU
};

int pc_cuda_load(struct pc_cuda_api *api, char *why, size_t whylen)
{
	void *lib, *p;
	size_t i;

	memset(api, 0, sizeof(*api));
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(why, whylen, "%s", dlerror());
		return -ENOENT;
	}
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		p = dlsym(lib, syms[i].sym);
		if (!p && !syms[i].optional) {
			snprintf(why, whylen, "libcuda.so.1 lacks %s",
				 syms[i].sym);
			return -ENOENT;
		}
		/* POSIX guarantees data and function pointers convert */
		memcpy((char *)api + syms[i].off, &p, sizeof(p));
	}
	/* CUDA 12.8 added cuEventElapsedTime_v2; the first one still works */
	p = dlsym(lib, "cuEventElapsedTime_v2");
	if (!p)
		p = dlsym(lib, "cuEventElapsedTime");
	if (!p || (!api->CtxCreate_v4 && !api->CtxCreate_v2)) {
		snprintf(why, whylen, "libcuda.so.1 lacks %s",
			 p ? "cuCtxCreate" : "cuEventElapsedTime");
		return -ENOENT;
	}
	memcpy(&api->EventElapsedTime, &p, sizeof(p));
	api->lib = lib;
	return 0;
}

const char *pc_cuda_errname(const struct pc_cuda_api *api, CUresult r)
{
	const char *name = NULL;

	if (api->GetErrorName && api->GetErrorName(r, &name) == CUDA_SUCCESS &&
	    name)
		return name;
	return "CUDA_ERROR_UNKNOWN";
}
