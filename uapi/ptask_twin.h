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
 *
 * Block ranges (ABI 2, optional): a GPU runs a launch's thread blocks
 * across its multiprocessors; ptaskd's cpu backend runs a large launch's
 * blocks across its idle cores the same way when the twin has a
 * block-range entry, given beside the table in an array of the same
 * length (NULL where a twin has none):
 *
 *	static const ptask_twin_blocks_fn my_blocks[] = {
 *		my_run_blocks,
 *	};
 *	PTASK_TWIN_LIBRARY_BLOCKS(my_twin_table, my_twins, my_blocks);
 *
 * The launch's blocks are numbered linearly, x fastest, then y, then z
 * (ptask_twin_blocks() of them).  ptaskd calls run_blocks(call, first,
 * count) for contiguous ranges that together cover every block exactly
 * once, possibly all at the same time on different threads and in any
 * order; the launch is done when every range is.  A twin that offers it
 * guarantees:
 *  - ranges covering every block, run in any order or at once, leave
 *    exactly the bytes run() leaves (the same arithmetic per output):
 *    ptaskd runs a launch whole or split as its cores are free;
 *  - blocks are independent: what one block writes no other block reads
 *    or writes (no grid-wide synchronisation, no accumulation across
 *    blocks), as in a CUDA kernel without a cooperative launch;
 *  - it checks its parameters in every call as run() does (each range
 *    sees the same parameters) and returns 0 or the errno run() would;
 *    an error in any range fails the launch (its outputs are then
 *    undefined, as after a faulting kernel).
 * How blocks map onto the problem is the twin's.  Since a twin computes
 * the whole problem whatever the geometry, the usual way is to give a
 * range its proportional share of the problem's rows,
 * ptask_twin_block_span(), which covers every row once whatever the
 * grid.  A twin whose work cannot be split so (a reduction over the
 * whole grid, a one-element kernel) has no entry and runs whole.
 *
 * Versions: ptaskd loads tables of ABI 2 (this header) and of ABI 1
 * (the same struct ptask_twin, a table without run_blocks): an ABI 1
 * library's twins run whole.  A source written for ABI 1 builds
 * unchanged against this header and is then ABI 2 without block ranges.
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

/*
 * Bumped when a struct below changes.  ptaskd loads tables of
 * PTASK_TWIN_ABI and of PTASK_TWIN_ABI_V1 and refuses others.
 */
#define PTASK_TWIN_ABI		2
#define PTASK_TWIN_ABI_V1	1	/* no ptask_twin_table.run_blocks */

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

/*
 * A twin's optional block-range entry (ABI 2): compute what blocks
 * [@first, @first + @count) of the launch compute, as "Block ranges"
 * above says.  ptaskd passes 1 <= @count and @first + @count <=
 * ptask_twin_blocks(@call).  0 or an errno as struct ptask_twin.run.
 */
typedef int (*ptask_twin_blocks_fn)(const struct ptask_twin_call *call,
				    uint64_t first, uint64_t count);

/**
 * struct ptask_twin_table - what a twin library exports
 * @abi: PTASK_TWIN_ABI (PTASK_TWIN_ABI_V1: the table ends before
 *	@run_blocks, which ptaskd then never reads)
 * @count: entries in @twins
 * @twins: the twins
 * @run_blocks: NULL (no twin runs block ranges), or @count entries:
 *	@run_blocks[i] the block-range entry of @twins[i], or NULL
 */
struct ptask_twin_table {
	uint32_t abi;
	uint32_t count;
	const struct ptask_twin *twins;
	const ptask_twin_blocks_fn *run_blocks;
};

/*
 * Define @name as the table of the twins in @array, and export it as
 * "ptask_twin_table" (a weak alias, so a test may link several twin
 * sources into one program).
 */
#define PTASK_TWIN_LIBRARY(name, array)					\
	PTASK_TWIN_LIBRARY_BLOCKS_(name, array, NULL)

/*
 * The same, with @blocks, an array of as many ptask_twin_blocks_fn as
 * @array has twins (NULL where a twin runs whole).
 */
#define PTASK_TWIN_LIBRARY_BLOCKS(name, array, blocks)			\
	_Static_assert(sizeof(blocks) / sizeof((blocks)[0]) ==		\
		       sizeof(array) / sizeof((array)[0]),		\
		       "one block-range entry (or NULL) per twin");	\
	PTASK_TWIN_LIBRARY_BLOCKS_(name, array, blocks)

#define PTASK_TWIN_LIBRARY_BLOCKS_(name, array, blocks)			\
	const struct ptask_twin_table name = {				\
		.abi = PTASK_TWIN_ABI,					\
		.count = sizeof(array) / sizeof((array)[0]),		\
		.twins = array,						\
		.run_blocks = blocks,					\
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

/*
 * Blocks in @call's grid (x * y * z), or 0 when a dimension is 0 or the
 * product overflows (ptaskd then never splits the launch).
 */
static inline uint64_t ptask_twin_blocks(const struct ptask_twin_call *call)
{
	uint64_t n = call->grid[0];

	if (__builtin_mul_overflow(n, (uint64_t)call->grid[1], &n) ||
	    __builtin_mul_overflow(n, (uint64_t)call->grid[2], &n))
		return 0;
	return n;
}

/*
 * The share of @units (rows, say) that blocks [@first, @first + @count)
 * of @call's grid compute: [*@lo, *@hi).  Each range of blocks takes a
 * proportional, contiguous share, so ranges covering every block cover
 * every unit exactly once, whatever the grid.  0, or -EINVAL when the
 * range is empty or outside the grid.
 */
/*
 * floor(@units * @b / @n) for @b <= @n: exact, and monotonic in @b, so
 * that ranges meeting at a block meet at a unit.
 */
static inline uint64_t ptask_twin_share_(uint64_t units, uint64_t b,
					 uint64_t n)
{
#ifdef __SIZEOF_INT128__
	__extension__ typedef unsigned __int128 ptask_twin_u128_;

	return (uint64_t)((ptask_twin_u128_)units * b / n);
#else
	uint64_t p;

	if (!__builtin_mul_overflow(units, b, &p))
		return p / n;
	return (units / n) * b + (uint64_t)((long double)(units % n) * b / n);
#endif
}

static inline int ptask_twin_block_span(const struct ptask_twin_call *call,
					uint64_t first, uint64_t count,
					uint64_t units, uint64_t *lo,
					uint64_t *hi)
{
	uint64_t n = ptask_twin_blocks(call);

	if (!n || !count || first >= n || count > n - first)
		return -EINVAL;
	*lo = ptask_twin_share_(units, first, n);
	*hi = ptask_twin_share_(units, first + count, n);
	return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* PTASK_TWIN_H */
