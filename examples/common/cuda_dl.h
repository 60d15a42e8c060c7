/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cuda_dl.h - the few CUDA driver API calls the examples use, loaded at
 * run time with dlopen("libcuda.so.1").
 *
 * Why not cuda.h: the examples must build on machines without the CUDA
 * toolkit (CI, the test VM) and run there with the GPU ways skipped.  The
 * driver's ABI is stable, so the prototypes below (from the driver API
 * reference, with the _v2 symbol names the 64-bit ABI exports) are all a
 * program needs.  Only the primary context is used: it exists on every
 * driver version and needs no creation flags.
 *
 * Usage:
 *	struct cuda_dl cu;
 *	if (cuda_dl_open(&cu, 0) == 0) {
 *		cu.MemAlloc(&p, bytes) ...;
 *		cuda_dl_close(&cu);
 *	}
 */
#ifndef EXAMPLES_CUDA_DL_H
#define EXAMPLES_CUDA_DL_H

#include <stddef.h>

typedef int CUresult;			/* CUDA_SUCCESS is 0 */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;

#define CUDA_SUCCESS			0
/* CUjit_option values for cuModuleLoadDataEx */
#define CU_JIT_ERROR_LOG_BUFFER		5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6

/**
 * struct cuda_dl - libcuda, its entry points and one device's context
 * @lib: the dlopen handle
 * @dev: the device opened
 * @ctx: its primary context (current on the opening thread)
 * @name: the device's name
 * (the rest: the driver API functions, named without their "cu" prefix)
 */
struct cuda_dl {
	void *lib;
	CUdevice dev;
	CUcontext ctx;
	char name[128];

	CUresult (*Init)(unsigned int flags);
	CUresult (*DeviceGetCount)(int *count);
	CUresult (*DeviceGet)(CUdevice *dev, int ordinal);
	CUresult (*DeviceGetName)(char *name, int len, CUdevice dev);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
	CUresult (*DevicePrimaryCtxRelease)(CUdevice dev);
	CUresult (*CtxSetCurrent)(CUcontext ctx);
	CUresult (*CtxSynchronize)(void);
	CUresult (*ModuleLoadDataEx)(CUmodule *mod, const void *image,
				     unsigned int nopts, int *opts,
				     void **values);
	CUresult (*ModuleUnload)(CUmodule mod);
	CUresult (*ModuleGetFunction)(CUfunction *fn, CUmodule mod,
				      const char *name);
	CUresult (*MemAlloc)(CUdeviceptr *dptr, size_t bytes);
	CUresult (*MemFree)(CUdeviceptr dptr);
	CUresult (*MemAllocHost)(void **p, size_t bytes);
	CUresult (*MemFreeHost)(void *p);
	CUresult (*MemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
	CUresult (*MemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
	CUresult (*LaunchKernel)(CUfunction fn, unsigned int gx,
				 unsigned int gy, unsigned int gz,
				 unsigned int bx, unsigned int by,
				 unsigned int bz, unsigned int shared_bytes,
				 CUstream stream, void **params, void **extra);
	CUresult (*GetErrorName)(CUresult err, const char **name);
};

/*
 * Load libcuda.so.1, initialise the driver and make device @ordinal's
 * primary context current on this thread.
 * Return: 0; -ENOENT (no libcuda.so.1 or a symbol missing), -ENODEV (no
 * such device, or cuInit failed: no GPU or no working driver).  Prints
 * nothing: the caller decides how loudly to skip.
 */
int cuda_dl_open(struct cuda_dl *cu, int ordinal);
/* Release the primary context and unload the library. */
void cuda_dl_close(struct cuda_dl *cu);
/* "CUDA_ERROR_OUT_OF_MEMORY" and so on (never NULL). */
const char *cuda_dl_errname(const struct cuda_dl *cu, CUresult err);
/*
 * Load PTX (NUL-terminated) and find @entry.  On a JIT error the driver's
 * log is printed to stderr prefixed by @who.  Return: 0 or -EIO.
 */
int cuda_dl_load(struct cuda_dl *cu, const char *ptx, const char *entry,
		 const char *who, CUmodule *mod, CUfunction *fn);

#endif /* EXAMPLES_CUDA_DL_H */
