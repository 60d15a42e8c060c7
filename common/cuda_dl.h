/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cuda_dl.h - the slice of the CUDA driver API that ptask uses, loaded at
 * run time from libcuda.so.1: the one CUDA shim of ptaskd's cuda backend,
 * the examples, the GPU tests and benchmarks.
 *
 * DOC: Overview
 *
 * ptask must build on machines with no CUDA toolkit and start on
 * machines with no GPU, so nothing includes cuda.h or links against
 * libcuda: the types, constants and prototypes used are restated here
 * (values copied from CUDA 13.0's cuda.h; the driver ABI keeps them
 * stable) and pc_cuda_load() fills a table of function pointers with
 * dlsym.  Where cuda.h #defines a name to a versioned symbol
 * (cuMemAlloc -> cuMemAlloc_v2, cuCtxCreate -> cuCtxCreate_v4, ...) the
 * versioned symbol is what is looked up, because the unversioned export
 * keeps the oldest ABI for old binaries (cuMemAlloc_v1 took 32-bit sizes).
 *
 * The plain (not _ptsz/_ptds) entry points are used: every queued call
 * names an explicit non-blocking stream, so the legacy default stream's
 * semantics never come into play.
 *
 * Programs that use one device's primary context and nothing more (the
 * examples, the benchmarks' baseline, the GPU tests) open it with
 * cuda_dev.h on top of this.
 *
 * Locking: none needed; the table is read-only once loaded.
 */
#ifndef PTASK_COMMON_CUDA_DL_H
#define PTASK_COMMON_CUDA_DL_H

#include <stddef.h>

/* types (cuda.h: CUresult, CUdevice_v1, CUdeviceptr_v2, handles) */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUkern_st *CUkernel;
typedef struct CUctxCreateParams_st CUctxCreateParams;	/* only ever NULL */
typedef int CUjit_option;

/* cuda.h's CUDA_KERNEL_NODE_PARAMS_v2 (what the _v2 graph calls take) */
typedef struct {
	CUfunction func;
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	void **kernelParams;
	void **extra;
	CUkernel kern;
	CUcontext ctx;
} CUDA_KERNEL_NODE_PARAMS;

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
#define CUDA_ERROR_NOT_PERMITTED		800
#define CUDA_ERROR_NOT_SUPPORTED		801

/* flags and attributes */
#define CU_CTX_SCHED_AUTO			0x00
#define CU_STREAM_NON_BLOCKING			0x1
#define CU_EVENT_DEFAULT			0x0
#define CU_EVENT_DISABLE_TIMING			0x2
#define CU_MEMHOSTREGISTER_PORTABLE		0x01
#define CU_STREAM_CAPTURE_MODE_THREAD_LOCAL	1
#define CU_MEMHOSTREGISTER_DEVICEMAP		0x02
#define CU_MEMHOSTALLOC_PORTABLE		0x01
#define CU_MEMHOSTALLOC_DEVICEMAP		0x02
#define CU_STREAM_WRITE_VALUE_DEFAULT		0x0
#define CU_STREAM_WAIT_VALUE_GEQ		0x0	/* (int32_t)(*addr - v) >= 0 */
#define CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY	19
#define CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 92
#define CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS 122
#define CU_DEVICE_ATTRIBUTE_CLOCK_RATE		13
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE	36
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CU_JIT_ERROR_LOG_BUFFER			5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES	6

/**
 * struct pc_cuda_api - the driver entry points, as function pointers
 *
 * Every member is set by pc_cuda_load() except those marked optional,
 * which stay NULL when the driver is too old to export them.
 */
struct pc_cuda_api {
	void *lib;
	CUresult (*Init)(unsigned int flags);
	CUresult (*DriverGetVersion)(int *version);
	CUresult (*GetErrorName)(CUresult r, const char **s);
	CUresult (*GetErrorString)(CUresult r, const char **s);
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
	CUresult (*StreamQuery)(CUstream s);
	/* optional: CUDA >= 11.7 (_v2, the stream memory operations) */
	CUresult (*StreamWriteValue32)(CUstream s, CUdeviceptr addr,
				       unsigned int value, unsigned int flags);
	/* optional, as StreamWriteValue32 */
	CUresult (*StreamWaitValue32)(CUstream s, CUdeviceptr addr,
				      unsigned int value, unsigned int flags);
	CUresult (*EventCreate)(CUevent *e, unsigned int flags);
	CUresult (*EventDestroy)(CUevent e);
	CUresult (*EventRecord)(CUevent e, CUstream s);
	CUresult (*EventSynchronize)(CUevent e);
	CUresult (*EventQuery)(CUevent e);
	CUresult (*EventElapsedTime)(float *ms, CUevent start, CUevent end);
	CUresult (*MemAlloc)(CUdeviceptr *p, size_t bytes);
	CUresult (*MemFree)(CUdeviceptr p);
	CUresult (*MemAllocHost)(void **p, size_t bytes);
	CUresult (*MemFreeHost)(void *p);
	CUresult (*MemHostAlloc)(void **p, size_t bytes, unsigned int flags);
	CUresult (*MemHostGetDevicePointer)(CUdeviceptr *d, void *p,
					    unsigned int flags);
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
	/* optional: stream capture and CUDA graphs (CUDA >= 10; the GPU
	 * benchmarks' baselines: bench/fastpath_cuda.c) */
	CUresult (*StreamBeginCapture)(CUstream s, int mode);
	CUresult (*StreamEndCapture)(CUstream s, CUgraph *g);
	CUresult (*GraphInstantiate)(CUgraphExec *e, CUgraph g,
				     unsigned long long flags);
	CUresult (*GraphLaunch)(CUgraphExec e, CUstream s);
	CUresult (*GraphExecDestroy)(CUgraphExec e);
	CUresult (*GraphDestroy)(CUgraph g);
	/* optional: graphs built node by node (ptaskd's held launches) */
	CUresult (*GraphCreate)(CUgraph *g, unsigned int flags);
	CUresult (*GraphAddKernelNode)(CUgraphNode *n, CUgraph g,
				       const CUgraphNode *deps, size_t ndeps,
				       const CUDA_KERNEL_NODE_PARAMS *p);
	CUresult (*GraphExecKernelNodeSetParams)(CUgraphExec e, CUgraphNode n,
						 const CUDA_KERNEL_NODE_PARAMS *p);
};

/**
 * pc_cuda_load() - open libcuda.so.1 and fill @api
 * @api: the table
 * @why: the reason when it fails (dlerror(), or the entry point missing)
 * @whylen: bytes at @why
 *
 * The library is never closed: the driver keeps threads of its own that
 * would run unmapped code after a dlclose.  Loading twice is harmless
 * (dlopen counts).  The driver is not initialised (cuInit is the
 * caller's).
 *
 * Return: 0, or -ENOENT (no library, or a required entry point missing).
 */
int pc_cuda_load(struct pc_cuda_api *api, char *why, size_t whylen);

/**
 * pc_cuda_errname() - the name of driver error @r
 * @api: a loaded table
 * @r: a CUresult
 *
 * Return: "CUDA_ERROR_OUT_OF_MEMORY" and so on, never NULL.
 */
const char *pc_cuda_errname(const struct pc_cuda_api *api, CUresult r);

#endif /* PTASK_COMMON_CUDA_DL_H */
