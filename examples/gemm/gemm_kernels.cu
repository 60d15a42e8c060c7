// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gemm_kernels.cu - the GPU code of the gemm example: C = A x B for n x n
 * row-major float matrices, one thread per element of C.
 *
 * Launch: block GEMM_TILE x GEMM_TILE threads, grid ceil(n / GEMM_TILE) in
 * x and y (x: columns, y: rows).  Each block walks the k dimension one
 * tile at a time, staging a tile of A and a tile of B in shared memory so
 * that every element is read from global memory once per block rather
 * than once per thread.  Threads outside the matrix (n not a multiple of
 * the tile) still load zeros and take part in the barriers, so any n works.
 *
 * Parameters (what the ptask ports bind to): 0 A, 1 B (global), 2 C
 * (output), 3 n (by value).  The ptaskd sim and cpu backends run a host
 * function registered under the same entry name with the same parameters.
 *
 * Build: nvcc -ptx -arch=sm_90 -O3 gemm_kernels.cu -o gemm_kernels.ptx
 */
#define GEMM_TILE 32	/* keep equal to GEMM_TILE in gemm.c and ioctl_raw.c */

extern "C" __global__ void sgemm(const float *__restrict__ A,
				 const float *__restrict__ B,
				 float *__restrict__ C, int n)
{
	/*
	 * A warp is one row ty of the block: it reads as[ty][k] (one word,
	 * broadcast) and bs[k][0..31] (32 banks), so neither tile needs
	 * padding against bank conflicts.
	 */
	__shared__ float as[GEMM_TILE][GEMM_TILE];
	__shared__ float bs[GEMM_TILE][GEMM_TILE];
	const int tx = threadIdx.x, ty = threadIdx.y;
	const int row = blockIdx.y * GEMM_TILE + ty;
	const int col = blockIdx.x * GEMM_TILE + tx;
	float acc = 0.0f;

	for (int k0 = 0; k0 < n; k0 += GEMM_TILE) {
		const int ak = k0 + tx, bk = k0 + ty;

		/* 64-bit index: n * n passes 2^31 from n = 46341 */
		as[ty][tx] = (row < n && ak < n) ?
			A[(size_t)row * n + ak] : 0.0f;
		bs[ty][tx] = (bk < n && col < n) ?
			B[(size_t)bk * n + col] : 0.0f;
		__syncthreads();
#pragma unroll
		for (int k = 0; k < GEMM_TILE; k++)
			acc += as[ty][k] * bs[k][tx];
		/* the next iteration overwrites the tiles others may still read */
		__syncthreads();
	}
	if (row < n && col < n)
		C[(size_t)row * n + col] = acc;
}
