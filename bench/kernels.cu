// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kernels.cu - the GPU code of the ptask benchmarks (bench/ptask_gpu.c),
 * built to PTX by `make bench-gpu` (nvcc -ptx -arch=sm_90).
 */

/* Writes one word: the least a ptask with an output can do. */
extern "C" __global__ void ptask_empty(const unsigned int *in,
				       unsigned int *out)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		out[0] = in[0] + 1;
}
