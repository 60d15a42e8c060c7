// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * twin.c - the host twin of gemm_kernels.cu's sgemm, built as the gemm
 * example's twin library (build/twins/gemm.so, uapi/ptask_twin.h) and
 * bound to the PTX the example embeds (gemm_ptx.S), so `gemm --mode
 * ptask` runs on ptaskd's cpu and sim backends too:
 *
 *   sgemm(const float *A, const float *B, float *C, int n)
 *	C = A x B, n x n, row-major; block ranges too (rows of C)
 */
#include <stdint.h>
#include "uapi/ptask_twin.h"
#include "examples/gemm/gemm.h"

static int sgemm_cost(const struct ptask_twin_call *call,
		      struct ptask_twin_cost *cost)
{
	uint64_t n, bytes;
	int err = ptask_twin_count(call, 3, 2, sizeof(float), &n, &bytes);

	if (err)
		return err;
	cost->flops = 2 * n * n * n;
	cost->bytes = 3 * bytes;
	return 0;
}

/*
 * Rows of C: all of them when @whole, else the share of blocks [@first,
 * @first + @count) (ptask_twin_block_span).  A row of C reads A's row
 * and all of B and is written by one range only, with the same
 * arithmetic either way: split or whole, the same bytes.
 *
 * i-k-j order: the inner loop walks B and C rows, so it streams.
 */
static int sgemm_rows(const struct ptask_twin_call *call, int whole,
		      uint64_t first, uint64_t count)
{
	uint64_t n, bytes, i, j, k, row0 = 0, row1;
	int err = ptask_twin_count(call, 3, 2, sizeof(float), &n, &bytes);
	const float *a, *b;
	float *c;

	if (err)
		return err;
	a = ptask_twin_buf(call, 0, bytes, &err);
	b = ptask_twin_buf(call, 1, bytes, &err);
	c = ptask_twin_buf(call, 2, bytes, &err);
	if (err)
		return err;
	row1 = n;
	if (!whole) {
		err = ptask_twin_block_span(call, first, count, n, &row0, &row1);
		if (err)
			return err;
	}
	for (i = row0; i < row1; i++) {
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

static int sgemm_run(const struct ptask_twin_call *call)
{
	return sgemm_rows(call, 1, 0, 0);
}

static int sgemm_blocks(const struct ptask_twin_call *call, uint64_t first,
			uint64_t count)
{
	return sgemm_rows(call, 0, first, count);
}

static const struct ptask_twin gemm_twins[] = {
	{ GEMM_ENTRY, gemm_ptx, gemm_ptx_end, sgemm_run, sgemm_cost },
};
static const ptask_twin_blocks_fn gemm_blocks[] = { sgemm_blocks };
PTASK_TWIN_LIBRARY_BLOCKS(gemm_twin_table, gemm_twins, gemm_blocks);
