// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * host_kernels.c - the registry of host kernels and the built-in ones.
 *
 * Built in (CUDA signatures; every pointer is global memory, every int
 * and float a by-value parameter):
 *
 *   ptask_empty(const unsigned *in, unsigned *out)  out[0] = in[0] + 1
 *   ptask_copy(char *dst, const char *src, int n)   n bytes
 *   sgemm(const float *A, const float *B, float *C, int n)
 *	C = A x B, n x n, row-major (examples/gemm's kernel)
 *   vec_add(const float *a, const float *b, float *c, int n)
 *   vec_scale(const float *x, float *y, float alpha, int n)  y = alpha x
 *   gesture_xform, gesture_filter, gesture_filter2/3/4
 *	examples/gesture's stages (host_kernels_gesture.c)
 *
 * Locking: pd_host_kernels_lock guards the table of registered kernels
 * (built-ins are const and need none, but one lookup path is simpler).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include "daemon/backend/host_kernels.h"

#define PD_HOST_KERNELS_MAX	64

void *pd_param_buf(const struct pd_host_call *call, uint32_t i,
		   uint64_t bytes, int *err)
{
	const struct pd_launch *l = call->launch;
	uint64_t addr;
	void *p;

	if (i >= l->nparams || l->param_bytes[i] != sizeof(uint64_t)) {
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

int32_t pd_param_i32(const struct pd_host_call *call, uint32_t i, int *err)
{
	const struct pd_launch *l = call->launch;
	int32_t v;

	if (i >= l->nparams || l->param_bytes[i] != sizeof(v)) {
		*err = -EINVAL;
		return 0;
	}
	memcpy(&v, call->params[i], sizeof(v));
	return v;
}

float pd_param_f32(const struct pd_host_call *call, uint32_t i, int *err)
{
	const struct pd_launch *l = call->launch;
	float v;

	if (i >= l->nparams || l->param_bytes[i] != sizeof(v)) {
		*err = -EINVAL;
		return 0;
	}
	memcpy(&v, call->params[i], sizeof(v));
	return v;
}

/* A count parameter: non-negative, and @elem_bytes * n^@power fits. */
static int count_param(const struct pd_host_call *call, uint32_t i,
		       unsigned int power, uint64_t elem_bytes, uint64_t *n,
		       uint64_t *bytes)
{
	int err = 0;
	int32_t v = pd_param_i32(call, i, &err);
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
 * bench/kernels.cu's ptask_empty, the least a ptask with an output can
 * do: the dispatch benchmark (bench/ptask_gpu.c) checks out[0] = in[0] + 1,
 * so the same benchmark measures the software path on cpu and sim.
 */
static int empty_run(const struct pd_host_call *call)
{
	const uint32_t *in;
	uint32_t *out;
	int err = 0;

	in = pd_param_buf(call, 0, sizeof(*in), &err);
	out = pd_param_buf(call, 1, sizeof(*out), &err);
	if (err)
		return err;
	out[0] = in[0] + 1;
	return 0;
}

static int empty_cost(const struct pd_host_call *call,
		      struct pd_kernel_cost *cost)
{
	(void)call;
	cost->flops = 1;
	cost->bytes = 2 * sizeof(uint32_t);
	return 0;
}

static int copy_cost(const struct pd_host_call *call,
		     struct pd_kernel_cost *cost)
{
	uint64_t n, bytes;
	int err = count_param(call, 2, 1, 1, &n, &bytes);

	if (err)
		return err;
	cost->flops = 0;
	cost->bytes = 2 * bytes;
	return 0;
}

static int copy_run(const struct pd_host_call *call)
{
	uint64_t n, bytes;
	int err = count_param(call, 2, 1, 1, &n, &bytes);
	void *dst, *src;

	if (err)
		return err;
	dst = pd_param_buf(call, 0, bytes, &err);
	src = pd_param_buf(call, 1, bytes, &err);
	if (err)
		return err;
	memmove(dst, src, bytes);
	return 0;
}

static int sgemm_cost(const struct pd_host_call *call,
		      struct pd_kernel_cost *cost)
{
	uint64_t n, bytes;
	int err = count_param(call, 3, 2, sizeof(float), &n, &bytes);

	if (err)
		return err;
	cost->flops = 2 * n * n * n;
	cost->bytes = 3 * bytes;
	return 0;
}

/* i-k-j order: the inner loop walks B and C rows, so it streams. */
static int sgemm_run(const struct pd_host_call *call)
{
	uint64_t n, bytes, i, j, k;
	int err = count_param(call, 3, 2, sizeof(float), &n, &bytes);
	const float *a, *b;
	float *c;

	if (err)
		return err;
	a = pd_param_buf(call, 0, bytes, &err);
	b = pd_param_buf(call, 1, bytes, &err);
	c = pd_param_buf(call, 2, bytes, &err);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		float *crow = c + i * n;

		for (j = 0; j < n; j++)
			crow[j] = 0.0f;
		for (k = 0; k < n; k++) {
			const float aik = a[i * n + k];
			const float *brow = b + k * n;

			for (j = 0; j < n; j++)
				crow[j] += aik * brow[j];
		}
	}
	return 0;
}

static int vec_add_cost(const struct pd_host_call *call,
			struct pd_kernel_cost *cost)
{
	uint64_t n, bytes;
	int err = count_param(call, 3, 1, sizeof(float), &n, &bytes);

	if (err)
		return err;
	cost->flops = n;
	cost->bytes = 3 * bytes;
	return 0;
}

static int vec_add_run(const struct pd_host_call *call)
{
	uint64_t n, bytes, i;
	int err = count_param(call, 3, 1, sizeof(float), &n, &bytes);
	const float *a, *b;
	float *c;

	if (err)
		return err;
	a = pd_param_buf(call, 0, bytes, &err);
	b = pd_param_buf(call, 1, bytes, &err);
	c = pd_param_buf(call, 2, bytes, &err);
	if (err)
		return err;
	for (i = 0; i < n; i++)
		c[i] = a[i] + b[i];
	return 0;
}

static int vec_scale_cost(const struct pd_host_call *call,
			  struct pd_kernel_cost *cost)
{
	uint64_t n, bytes;
	int err = count_param(call, 3, 1, sizeof(float), &n, &bytes);

	if (err)
		return err;
	cost->flops = n;
	cost->bytes = 2 * bytes;
	return 0;
}

static int vec_scale_run(const struct pd_host_call *call)
{
	uint64_t n, bytes, i;
	int err = count_param(call, 3, 1, sizeof(float), &n, &bytes);
	const float *x;
	float alpha, *y;

	if (err)
		return err;
	alpha = pd_param_f32(call, 2, &err);
	x = pd_param_buf(call, 0, bytes, &err);
	y = pd_param_buf(call, 1, bytes, &err);
	if (err)
		return err;
	for (i = 0; i < n; i++)
		y[i] = alpha * x[i];
	return 0;
}

static const struct pd_host_kernel pd_builtin_kernels[] = {
	{ "ptask_empty", empty_run, empty_cost },
	{ "ptask_copy", copy_run, copy_cost },
	{ "sgemm", sgemm_run, sgemm_cost },
	{ "vec_add", vec_add_run, vec_add_cost },
	{ "vec_scale", vec_scale_run, vec_scale_cost },
	{ "xts_encrypt", pd_xts_encrypt_run, pd_xts_cost },	/* host_kernels_xts.c */
	{ "xts_decrypt", pd_xts_decrypt_run, pd_xts_cost },
	{ "gesture_xform", pd_gesture_xform_run, pd_gesture_xform_cost },	/* host_kernels_gesture.c */
	{ "gesture_filter", pd_gesture_filter_run, pd_gesture_filter_cost },
	{ "gesture_filter2", pd_gesture_filter2_run, pd_gesture_filter2_cost },
	{ "gesture_filter3", pd_gesture_filter3_run, pd_gesture_filter3_cost },
	{ "gesture_filter4", pd_gesture_filter4_run, pd_gesture_filter4_cost },
};

static pthread_mutex_t pd_host_kernels_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct pd_host_kernel *pd_host_kernels[PD_HOST_KERNELS_MAX];
static unsigned int pd_host_kernels_n;	/* under pd_host_kernels_lock */

static const struct pd_host_kernel *find_locked(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(pd_builtin_kernels) /
		    sizeof(pd_builtin_kernels[0]); i++)
		if (!strcmp(pd_builtin_kernels[i].name, name))
			return &pd_builtin_kernels[i];
	for (i = 0; i < pd_host_kernels_n; i++)
		if (!strcmp(pd_host_kernels[i]->name, name))
			return pd_host_kernels[i];
	return NULL;
}

const struct pd_host_kernel *pd_host_kernel_find(const char *name)
{
	const struct pd_host_kernel *k;

	pthread_mutex_lock(&pd_host_kernels_lock);
	k = find_locked(name);
	pthread_mutex_unlock(&pd_host_kernels_lock);
	return k;
}

int pd_host_kernel_register(const struct pd_host_kernel *k)
{
	int err = 0;

	if (!k || !k->name || !k->name[0] || !k->run || !k->cost)
		return -EINVAL;
	pthread_mutex_lock(&pd_host_kernels_lock);
	if (find_locked(k->name))
		err = -EEXIST;
	else if (pd_host_kernels_n == PD_HOST_KERNELS_MAX)
		err = -ENOSPC;
	else
		pd_host_kernels[pd_host_kernels_n++] = k;
	pthread_mutex_unlock(&pd_host_kernels_lock);
	return err;
}
