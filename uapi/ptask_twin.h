/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ptask_twin.h - host twins: the CPU stand-in of a GPU kernel, which
 * ptaskd's cpu and sim backends run where there is no GPU.
 *
 * A twin belongs to the application that ships the GPU kernel: it is
 * built as a shared object (a *twin library*) and installed in ptaskd's
 * twin directory ($(LIBDIR)/ptask/twins, or ptaskd --host-kernels DIR),
 * which ptaskd reads at start.  ptaskd runs as root, so it loads a twin
 * library only from a directory, and only a file, owned by root (or by
 * ptaskd's own user) that group and others cannot write; anything else
 * is refused with the reason logged.
 *
 * A twin is bound to the exact code it stands for: its entry name AND the
 * code bytes (PTX or cubin, exactly as the client passes them to
 * ptask_gpu_ptask_open(), terminating NUL included).  A ptask whose entry
 * has no twin for those bytes fails on the cpu and sim backends (its
 * first run completes with -EIO, and ptaskd logs why), however its
 * kernel is named: a client's own "sgemm" never runs somebody else's.
 *
 * Calling convention: the parameters exactly as cuLaunchKernel takes
 * them.  A device-pointer parameter is a pointer to a u64 holding a host
 * address (sim and cpu device memory is host memory); a by-value
 * parameter is a pointer to its bytes.  A twin computes the whole problem
 * in one call, whatever the launch geometry, and never trusts a size
 * from its parameters further than the buffers it was given: it runs
 * inside the privileged daemon on a client's data.  The helpers below
 * check each parameter's size and each buffer's extent.
 *
 * A twin library defines one table with PTASK_TWIN_LIBRARY():
 *
 *	static const struct ptask_twin my_twins[] = {
 *		{ "my_kernel", my_ptx, my_ptx + sizeof(my_ptx),
 *		  my_run, my_cost },
 *	};
 *	PTASK_TWIN_LIBRARY(my_twin_table, my_twins);
 *
 * and is linked with -shared; ptaskd finds the table as the symbol
 * "ptask_twin_table".  The same source can also be linked into a test
 * program, which then uses my_twin_table by its own name.
 */
#ifndef PTASK_TWIN_H
#define PTASK_TWIN_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a struct below changes; ptaskd refuses other versions. */
#define PTASK_TWIN_ABI		1

/**
 * struct ptask_twin_call - one launch as a twin sees it
 * @grid: the launch's grid, as the client gave it
 * @block: the launch's block size
 * @nparams: number of kernel parameters
 * @param_bytes: size of each parameter (8 for a device pointer)
 * @params: pointer to each parameter's bytes
 * @extent: bytes from host address @p to the end of the device buffer
 *	holding it, 0 when @p is in none
 * @ctx: the backend's argument for @extent
 */
struct ptask_twin_call {
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t nparams;
	const uint32_t *param_bytes;
	void *const *params;
	uint64_t (*extent)(void *ctx, const void *p);
	void *ctx;
};

/**
 * struct ptask_twin_cost - the work of one launch, from which the sim
 * backend models its duration on a simulated device
 * @flops: arithmetic operations
 * @bytes: bytes of device memory read and written
 */
struct ptask_twin_cost {
	uint64_t flops;
	uint64_t bytes;
};

/**
 * struct ptask_twin - the host twin of one GPU kernel
 * @entry: the kernel's entry name (a CUDA kernel's extern "C" name)
 * @code: the code it stands for, [@code, @code_end) byte for byte as
 *	clients send it (an end, not a length, so that a table can name
 *	code a .incbin embedded: both are link-time constants)
 * @code_end: the end of the code
 * @run: compute; 0, -EINVAL (parameters do not match the signature) or
 *	-EFAULT (a buffer is smaller than the parameters say)
 * @cost: the work @run would do with these parameters; 0 or -EINVAL
 */
struct ptask_twin {
	const char *entry;
	const char *code;
	const char *code_end;
	int (*run)(const struct ptask_twin_call *call);
	int (*cost)(const struct ptask_twin_call *call,
		    struct ptask_twin_cost *cost);
};

/**
 * struct ptask_twin_table - what a twin library exports
 * @abi: PTASK_TWIN_ABI
 * @count: entries in @twins
 * @twins: the twins
 */
struct ptask_twin_table {
	uint32_t abi;
	uint32_t count;
	const struct ptask_twin *twins;
};

/*
 * Define @name as the table of the array @twins, and export it as
 * "ptask_twin_table" (a weak alias, so a test may link several twin
 * sources into one program).
 */
#define PTASK_TWIN_LIBRARY(name, twins)					\
	const struct ptask_twin_table name = {				\
		PTASK_TWIN_ABI, sizeof(twins) / sizeof((twins)[0]), twins \
	};								\
	extern const struct ptask_twin_table ptask_twin_table		\
		__attribute__((weak, alias(#name), visibility("default")))

/*
 * Parameter @i as a host pointer to at least @bytes of device memory.
 * -EINVAL: not an 8-byte pointer parameter; -EFAULT: NULL, or the buffer
 * is smaller.  Sets *@err only on failure, so a twin reads all its
 * parameters and checks once.
 */
static inline void *ptask_twin_buf(const struct ptask_twin_call *call,
				   uint32_t i, uint64_t bytes, int *err)
{
	uint64_t addr;
	void *p;

	if (i >= call->nparams || call->param_bytes[i] != sizeof(addr)) {
		*err = -EINVAL;
		return NULL;
	}
	memcpy(&addr, call->params[i], sizeof(addr));
	p = (void *)(uintptr_t)addr;
	if (!p || call->extent(call->ctx, p) < bytes) {
		*err = -EFAULT;
		return NULL;
	}
	return p;
}

/* By-value parameter @i of exactly @bytes bytes, copied to @out. */
static inline int ptask_twin_val(const struct ptask_twin_call *call,
				 uint32_t i, void *out, uint32_t bytes)
{
	if (i >= call->nparams || call->param_bytes[i] != bytes)
		return -EINVAL;
	memcpy(out, call->params[i], bytes);
	return 0;
}

/* A 4-byte by-value int parameter (*@err = -EINVAL otherwise). */
static inline int32_t ptask_twin_i32(const struct ptask_twin_call *call,
				     uint32_t i, int *err)
{
	int32_t v = 0;
	int e = ptask_twin_val(call, i, &v, sizeof(v));

	if (e)
		*err = e;
	return v;
}

/* A 4-byte by-value float parameter (*@err = -EINVAL otherwise). */
static inline float ptask_twin_f32(const struct ptask_twin_call *call,
				   uint32_t i, int *err)
{
	float v = 0;
	int e = ptask_twin_val(call, i, &v, sizeof(v));

	if (e)
		*err = e;
	return v;
}

/*
 * A count parameter @i: non-negative, and @elem_bytes * n^@power fits in
 * 64 bits; *@n the count, *@bytes the product.  0 or -EINVAL.
 */
static inline int ptask_twin_count(const struct ptask_twin_call *call,
				   uint32_t i, unsigned int power,
				   uint64_t elem_bytes, uint64_t *n,
				   uint64_t *bytes)
{
	int err = 0;
	int32_t v = ptask_twin_i32(call, i, &err);
	uint64_t b = elem_bytes;
	unsigned int k;

	if (err)
		return err;
	if (v < 0)
		return -EINVAL;
	for (k = 0; k < power; k++)
		if (__builtin_mul_overflow(b, (uint64_t)v, &b))
			return -EINVAL;
	*n = (uint64_t)v;
	*bytes = b;
	return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* PTASK_TWIN_H */
