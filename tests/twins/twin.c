// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * twin.c - the tests' twin library (build/twins/tests.so,
 * uapi/ptask_twin.h): host twins of the small kernels the daemon's
 * tests run on the cpu and sim backends, bound to the tests' own code
 * (test_code.h), never to an application's:
 *
 *   ptask_copy(char *dst, const char *src, int n)   n bytes
 *   vec_add(const float *a, const float *b, float *c, int n)
 *   vec_scale(const float *x, float *y, float alpha, int n)  y = alpha x
 *
 * A test that needs sgemm uses the gemm example's twin and PTX.
 */
#include <stdint.h>
#include <string.h>
#include "uapi/ptask_twin.h"
#include "tests/twins/test_code.h"

static int copy_cost(const struct ptask_twin_call *call,
		     struct ptask_twin_cost *cost)
{
	uint64_t n, bytes;
	int err = ptask_twin_count(call, 2, 1, 1, &n, &bytes);

	if (err)
		return err;
	cost->flops = 0;
	cost->bytes = 2 * bytes;
	return 0;
}

static int copy_run(const struct ptask_twin_call *call)
{
	uint64_t n, bytes;
	int err = ptask_twin_count(call, 2, 1, 1, &n, &bytes);
	void *dst, *src;

	if (err)
		return err;
	dst = ptask_twin_buf(call, 0, bytes, &err);
	src = ptask_twin_buf(call, 1, bytes, &err);
	if (err)
		return err;
	memmove(dst, src, bytes);
	return 0;
}

static int vec_add_cost(const struct ptask_twin_call *call,
			struct ptask_twin_cost *cost)
{
	uint64_t n, bytes;
	int err = ptask_twin_count(call, 3, 1, sizeof(float), &n, &bytes);

	if (err)
		return err;
	cost->flops = n;
	cost->bytes = 3 * bytes;
	return 0;
}

static int vec_add_run(const struct ptask_twin_call *call)
{
	uint64_t n, bytes, i;
	int err = ptask_twin_count(call, 3, 1, sizeof(float), &n, &bytes);
	const float *a, *b;
	float *c;

	if (err)
		return err;
	a = ptask_twin_buf(call, 0, bytes, &err);
	b = ptask_twin_buf(call, 1, bytes, &err);
	c = ptask_twin_buf(call, 2, bytes, &err);
	if (err)
		return err;
	for (i = 0; i < n; i++)
		c[i] = a[i] + b[i];
	return 0;
}

static int vec_scale_cost(const struct ptask_twin_call *call,
			  struct ptask_twin_cost *cost)
{
	uint64_t n, bytes;
	int err = ptask_twin_count(call, 3, 1, sizeof(float), &n, &bytes);

	if (err)
		return err;
	cost->flops = n;
	cost->bytes = 2 * bytes;
	return 0;
}

static int vec_scale_run(const struct ptask_twin_call *call)
{
	uint64_t n, bytes, i;
	int err = ptask_twin_count(call, 3, 1, sizeof(float), &n, &bytes);
	const float *x;
	float alpha, *y;

	if (err)
		return err;
	alpha = ptask_twin_f32(call, 2, &err);
	x = ptask_twin_buf(call, 0, bytes, &err);
	y = ptask_twin_buf(call, 1, bytes, &err);
	if (err)
		return err;
	for (i = 0; i < n; i++)
		y[i] = alpha * x[i];
	return 0;
}

static const struct ptask_twin test_twins[] = {
	{ "ptask_copy", ptask_test_code, ptask_test_code + sizeof(ptask_test_code),
	  copy_run, copy_cost },
	{ "vec_add", ptask_test_code, ptask_test_code + sizeof(ptask_test_code),
	  vec_add_run, vec_add_cost },
	{ "vec_scale", ptask_test_code, ptask_test_code + sizeof(ptask_test_code),
	  vec_scale_run, vec_scale_cost },
};
PTASK_TWIN_LIBRARY(test_twin_table, test_twins);
