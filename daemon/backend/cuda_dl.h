/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cuda_dl.h - the slice of the CUDA driver API that ptaskd uses, loaded
 * at run time from libcuda.so.1.
 *
 * ptaskd must build on machines with no CUDA toolkit and start on
 * machines with no GPU, so it neither includes cuda.h nor links against
 * libcuda: the types, constants and prototypes it needs are restated here
 * (values copied from CUDA 13.0's cuda.h; the driver ABI keeps them
 * stable) and pd_cuda_dl_load() fills a table of function pointers with
 * dlsym.  Where cuda.h #defines a name to a versioned symbol
 * (cuMemAlloc -> cuMemAlloc_v2, cuCtxCreate -> cuCtxCreate_v4, ...) the
 * versioned symbol is what is looked up, because the unversioned export
 * keeps the oldest ABI for old binaries (cuMemAlloc_v1 took 32-bit sizes).
 *
 * The plain (not _ptsz/_ptds) entry points are used: every queued call
 * names an explicit non-blocking stream, so the legacy default stream's
 * semantics never come into play.
 *
 * Also used by tests/gpu/cuda_backend_test.c and bench/gpu_raw.c.
 */
#ifndef PTASKD_CUDA_DL_H
#define PTASKD_CUDA_DL_H

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* types (cuda.h: CUresult, CUdevice_v1, CUdeviceptr_v2, handles) */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUctxCreateParams_st CUctxCreateParams;	/* only ever NULL */
typedef int CUjit_option;

/* CUresult values */
#define CUDA_SUCCESS				0
#define CUDA_ERROR_INVALID_VALUE		1
#define CUDA_ERROR_OUT_OF_MEMORY		2
#define CUDA_ERROR_NOT_INITIALIZED		3
#define CUDA_ERROR_NO_DEVICE			100
#define CUDA_ERROR_INVALID_DEVICE		101
#define CUDA_ERROR_INVALID_IMAGE		200
#define CUDA_ERROR_INVALID_CONTEXT		201
#define CUDA_ERROR_NO_BINARY_FOR_GPU		209
#define CUDA_ERROR_INVALID_PTX			218
#define CUDA_ERROR_UNSUPPORTED_PTX_VERSION	222
#define CUDA_ERROR_INVALID_SOURCE		300
#define CUDA_ERROR_INVALID_HANDLE		400
#define CUDA_ERROR_NOT_FOUND			500
#define CUDA_ERROR_NOT_READY			600
#define CUDA_ERROR_ILLEGAL_ADDRESS		700
#define CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES	701
#define CUDA_ERROR_LAUNCH_TIMEOUT		702
#define CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED	704
#define CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED 712
#define CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED	713
/* 714..719: hardware stack, illegal instruction, misaligned address,
 * invalid address space, invalid PC, launch failed: all sticky */
#define CUDA_ERROR_HARDWARE_STACK_ERROR		714
#define CUDA_ERROR_LAUNCH_FAILED		719

/* flags and attributes */
#define CU_CTX_SCHED_AUTO			0x00
#define CU_STREAM_NON_BLOCKING			0x1
#define CU_EVENT_DEFAULT			0x0
#define CU_EVENT_DISABLE_TIMING			0x2
#define CU_MEMHOSTREGISTER_PORTABLE		0x01
#define CU_DEVICE_ATTRIBUTE_CLOCK_RATE		13
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE	36
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CU_JIT_ERROR_LOG_BUFFER			5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES	6

/**
 * struct pd_cuda_api - the driver entry points, as function pointers
 *
 * Every member is set by pd_cuda_dl_load() except those marked optional,
 * which stay NULL when the driver is too old to export them.
 */
struct pd_cuda_api {
	void *lib;
	CUresult (*Init)(unsigned int flags);
	CUresult (*DriverGetVersion)(int *version);
	CUresult (*GetErrorName)(CUresult r, const char **s);
	CUresult (*DeviceGetCount)(int *n);
	CUresult (*DeviceGet)(CUdevice *d, int ordinal);
	CUresult (*DeviceGetName)(char *name, int len, CUdevice d);
	CUresult (*DeviceGetAttribute)(int *v, int attr, CUdevice d);
	CUresult (*DeviceTotalMem)(size_t *bytes, CUdevice d);
	CUresult (*DeviceCanAccessPeer)(int *can, CUdevice d, CUdevice peer);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *c, CUdevice d);
	CUresult (*DevicePrimaryCtxRelease)(CUdevice d);
	/* optional: CUDA >= 12.5 (cuCtxCreate_v4); else CtxCreate_v2 */
	CUresult (*CtxCreate_v4)(CUcontext *c, CUctxCreateParams *p,
				 unsigned int flags, CUdevice d);
	/* optional: dropped from CUDA 13's header, still exported */
	CUresult (*CtxCreate_v2)(CUcontext *c, unsigned int flags, CUdevice d);
	CUresult (*CtxDestroy)(CUcontext c);
	CUresult (*CtxSetCurrent)(CUcontext c);
	CUresult (*CtxGetCurrent)(CUcontext *c);
	CUresult (*CtxPopCurrent)(CUcontext *c);
	CUresult (*CtxSynchronize)(void);
	CUresult (*CtxEnablePeerAccess)(CUcontext peer, unsigned int flags);
	CUresult (*StreamCreate)(CUstream *s, unsigned int flags);
	CUresult (*StreamDestroy)(CUstream s);
	CUresult (*StreamSynchronize)(CUstream s);
	CUresult (*StreamWaitEvent)(CUstream s, CUevent e, unsigned int flags);
	CUresult (*EventCreate)(CUevent *e, unsigned int flags);
	CUresult (*EventDestroy)(CUevent e);
	CUresult (*EventRecord)(CUevent e, CUstream s);
	CUresult (*EventSynchronize)(CUevent e);
	CUresult (*EventElapsedTime)(float *ms, CUevent start, CUevent end);
	CUresult (*MemAlloc)(CUdeviceptr *p, size_t bytes);
	CUresult (*MemFree)(CUdeviceptr p);
	CUresult (*MemAllocHost)(void **p, size_t bytes);
	CUresult (*MemFreeHost)(void *p);
	CUresult (*MemHostRegister)(void *p, size_t bytes, unsigned int flags);
	CUresult (*MemHostUnregister)(void *p);
	CUresult (*MemcpyHtoD)(CUdeviceptr dst, const void *src, size_t n);
	CUresult (*MemcpyDtoH)(void *dst, CUdeviceptr src, size_t n);
	CUresult (*MemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t n,
				    CUstream s);
	CUresult (*MemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t n,
				    CUstream s);
	CUresult (*MemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t n,
				    CUstream s);
	CUresult (*MemcpyPeerAsync)(CUdeviceptr dst, CUcontext dst_ctx,
				    CUdeviceptr src, CUcontext src_ctx,
				    size_t n, CUstream s);
	CUresult (*ModuleLoadDataEx)(CUmodule *m, const void *image,
				     unsigned int nopt, CUjit_option *opt,
				     void **optval);
	CUresult (*ModuleUnload)(CUmodule m);
	CUresult (*ModuleGetFunction)(CUfunction *f, CUmodule m,
				      const char *name);
	/* optional: CUDA >= 12.4; launches are not checked without it */
	CUresult (*FuncGetParamInfo)(CUfunction f, size_t index,
				     size_t *offset, size_t *size);
	CUresult (*LaunchKernel)(CUfunction f, unsigned int gx,
				 unsigned int gy, unsigned int gz,
				 unsigned int bx, unsigned int by,
				 unsigned int bz, unsigned int shared_bytes,
				 CUstream s, void **params, void **extra);
};

/*
 * Open libcuda.so.1 and fill @api.  Returns 0, or -ENODEV with the reason
 * in @why (no library, or a required entry point missing).  The library
 * is never closed: the driver keeps threads of its own that would run
 * unmapped code after a dlclose.
 */
static inline int pd_cuda_dl_load(struct pd_cuda_api *api, char *why,
				  size_t whylen)
{
	static const struct {
		const char *sym;
		size_t off;
		int optional;
	} tab[] = {
#define PD_CU(m, s, o) { s, offsetof(struct pd_cuda_api, m), o }
		PD_CU(Init, "cuInit", 0),
		PD_CU(DriverGetVersion, "cuDriverGetVersion", 0),
		PD_CU(GetErrorName, "cuGetErrorName", 0),
		PD_CU(DeviceGetCount, "cuDeviceGetCount", 0),
		PD_CU(DeviceGet, "cuDeviceGet", 0),
		PD_CU(DeviceGetName, "cuDeviceGetName", 0),
		PD_CU(DeviceGetAttribute, "cuDeviceGetAttribute", 0),
		PD_CU(DeviceTotalMem, "cuDeviceTotalMem_v2", 0),
		PD_CU(DeviceCanAccessPeer, "cuDeviceCanAccessPeer", 0),
		PD_CU(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 0),
		PD_CU(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", 0),
		PD_CU(CtxCreate_v4, "cuCtxCreate_v4", 1),
		PD_CU(CtxCreate_v2, "cuCtxCreate_v2", 1),
		PD_CU(CtxDestroy, "cuCtxDestroy_v2", 0),
		PD_CU(CtxSetCurrent, "cuCtxSetCurrent", 0),
		PD_CU(CtxGetCurrent, "cuCtxGetCurrent", 0),
		PD_CU(CtxPopCurrent, "cuCtxPopCurrent_v2", 0),
		PD_CU(CtxSynchronize, "cuCtxSynchronize", 0),
		PD_CU(CtxEnablePeerAccess, "cuCtxEnablePeerAccess", 0),
		PD_CU(StreamCreate, "cuStreamCreate", 0),
		PD_CU(StreamDestroy, "cuStreamDestroy_v2", 0),
		PD_CU(StreamSynchronize, "cuStreamSynchronize", 0),
		PD_CU(StreamWaitEvent, "cuStreamWaitEvent", 0),
		PD_CU(EventCreate, "cuEventCreate", 0),
		PD_CU(EventDestroy, "cuEventDestroy_v2", 0),
		PD_CU(EventRecord, "cuEventRecord", 0),
		PD_CU(EventSynchronize, "cuEventSynchronize", 0),
		PD_CU(MemAlloc, "cuMemAlloc_v2", 0),
		PD_CU(MemFree, "cuMemFree_v2", 0),
		PD_CU(MemAllocHost, "cuMemAllocHost_v2", 0),
		PD_CU(MemFreeHost, "cuMemFreeHost", 0),
		PD_CU(MemHostRegister, "cuMemHostRegister_v2", 0),
		PD_CU(MemHostUnregister, "cuMemHostUnregister", 0),
		PD_CU(MemcpyHtoD, "cuMemcpyHtoD_v2", 0),
		PD_CU(MemcpyDtoH, "cuMemcpyDtoH_v2", 0),
		PD_CU(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", 0),
		PD_CU(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", 0),
		PD_CU(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", 0),
		PD_CU(MemcpyPeerAsync, "cuMemcpyPeerAsync", 0),
		PD_CU(ModuleLoadDataEx, "cuModuleLoadDataEx", 0),
		PD_CU(ModuleUnload, "cuModuleUnload", 0),
		PD_CU(ModuleGetFunction, "cuModuleGetFunction", 0),
		PD_CU(FuncGetParamInfo, "cuFuncGetParamInfo", 1),
		PD_CU(LaunchKernel, "cuLaunchKernel", 0),
#undef PD_CU
	};
	void *lib, *p;
	size_t i;

	memset(api, 0, sizeof(*api));
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(why, whylen, "%s", dlerror());
		return -ENODEV;
	}
	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		p = dlsym(lib, tab[i].sym);
		if (!p && !tab[i].optional) {
			snprintf(why, whylen, "libcuda.so.1 lacks %s",
				 tab[i].sym);
			return -ENODEV;
		}
		memcpy((char *)api + tab[i].off, &p, sizeof(p));
	}
	/* CUDA 12.8 added cuEventElapsedTime_v2; the first one still works */
	p = dlsym(lib, "cuEventElapsedTime_v2");
	if (!p)
		p = dlsym(lib, "cuEventElapsedTime");
	if (!p || (!api->CtxCreate_v4 && !api->CtxCreate_v2)) {
		snprintf(why, whylen, "libcuda.so.1 lacks %s",
			 p ? "cuCtxCreate" : "cuEventElapsedTime");
		return -ENODEV;
	}
	memcpy(&api->EventElapsedTime, &p, sizeof(p));
	api->lib = lib;
	return 0;
}

#endif /* PTASKD_CUDA_DL_H */
