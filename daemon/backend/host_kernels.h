/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * host_kernels.h - host implementations of GPU kernels, by entry name.
 *
 * The sim and cpu backends cannot run PTX; they run the host function
 * registered under the ptask's entry name instead, with the parameters
 * laid out exactly as cuLaunchKernel takes them (struct pd_launch): a
 * device-pointer parameter is a pointer to a u64 holding a host address
 * (sim and cpu device memory is host memory), a by-value parameter a
 * pointer to its bytes.  So one graph runs unchanged on cuda, sim and
 * cpu, and the sim backend can check a multi-GPU schedule's results
 * against a CPU reference.
 *
 * A host kernel computes the whole problem in one call, whatever the
 * launch geometry (a CUDA kernel's blocks and threads are a way to split
 * the same problem); it checks its parameter count and sizes and returns
 * -EINVAL when they do not match its signature.
 *
 * Each kernel also has a cost function: the work a launch does, in
 * floating-point operations and bytes of device memory touched, from
 * which the sim backend models the launch's duration on a simulated
 * device of a given strength.
 */
#ifndef PTASKD_HOST_KERNELS_H
#define PTASKD_HOST_KERNELS_H

#include <stdint.h>
#include "daemon/backend/backend.h"

/**
 * struct pd_kernel_cost - the work of one launch
 * @flops: arithmetic operations
 * @bytes: bytes of device memory read and written
 */
struct pd_kernel_cost {
	uint64_t flops;
	uint64_t bytes;
};

/**
 * struct pd_host_call - one launch as a host kernel sees it
 * @launch: geometry and parameters, as the engine built them
 * @params: @launch's parameter pointers (launch->params)
 * @extent: bytes from host address @p to the end of the device
 *	allocation holding it, 0 when @p is in none: a host kernel runs
 *	inside the privileged daemon, so it never trusts a client's size
 *	parameter further than the buffers it was given
 * @ctx: the backend's argument for @extent
 */
struct pd_host_call {
	const struct pd_launch *launch;
	void *const *params;
	uint64_t (*extent)(void *ctx, const void *p);
	void *ctx;
};

/**
 * struct pd_host_kernel - one host implementation
 * @name: the entry name it stands for (a CUDA kernel's extern "C" name)
 * @run: compute; 0 or -errno (-EINVAL: parameters do not match, -EFAULT:
 *	a buffer is smaller than the sizes the parameters give)
 * @cost: the work @run would do with these parameters; 0 or -EINVAL
 */
struct pd_host_kernel {
	const char *name;
	int (*run)(const struct pd_host_call *call);
	int (*cost)(const struct pd_host_call *call,
		    struct pd_kernel_cost *cost);
};

/* The kernel registered as @name, or NULL.  Any thread. */
const struct pd_host_kernel *pd_host_kernel_find(const char *name);

/*
 * Register one more host kernel (tests; a program embedding ptaskd).
 * @k must live until the process ends.  -EEXIST when the name is taken,
 * -ENOSPC when the table is full, -EINVAL for a kernel without a name or
 * a function.  Any thread.
 */
int pd_host_kernel_register(const struct pd_host_kernel *k);

/*
 * Parameter helpers for host kernels.  pd_param_buf: parameter @i as a
 * host pointer to at least @bytes of device memory (-EINVAL: not an
 * 8-byte pointer parameter; -EFAULT: NULL, or the allocation is
 * smaller).  pd_param_i32/f32: a 4-byte by-value parameter (-EINVAL
 * otherwise).  Each sets *@err only on failure, so a kernel checks once
 * after reading all its parameters.
 */
void *pd_param_buf(const struct pd_host_call *call, uint32_t i,
		   uint64_t bytes, int *err);
int32_t pd_param_i32(const struct pd_host_call *call, uint32_t i, int *err);
float pd_param_f32(const struct pd_host_call *call, uint32_t i, int *err);

/* encfs-gpu's xts_encrypt and xts_decrypt (host_kernels_xts.c). */
int pd_xts_encrypt_run(const struct pd_host_call *call);
int pd_xts_decrypt_run(const struct pd_host_call *call);
int pd_xts_cost(const struct pd_host_call *call, struct pd_kernel_cost *cost);

/* examples/gesture's xform and filters (host_kernels_gesture.c). */
int pd_gesture_xform_run(const struct pd_host_call *call);
int pd_gesture_xform_cost(const struct pd_host_call *call, struct pd_kernel_cost *cost);
int pd_gesture_filter_run(const struct pd_host_call *call);
int pd_gesture_filter2_run(const struct pd_host_call *call);
int pd_gesture_filter3_run(const struct pd_host_call *call);
int pd_gesture_filter4_run(const struct pd_host_call *call);
int pd_gesture_filter_cost(const struct pd_host_call *call, struct pd_kernel_cost *cost);
int pd_gesture_filter2_cost(const struct pd_host_call *call, struct pd_kernel_cost *cost);
int pd_gesture_filter3_cost(const struct pd_host_call *call, struct pd_kernel_cost *cost);
int pd_gesture_filter4_cost(const struct pd_host_call *call, struct pd_kernel_cost *cost);

#endif /* PTASKD_HOST_KERNELS_H */
