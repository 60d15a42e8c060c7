// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kernels.cu - kernels for the CUDA backend test and the raw launch
 * benchmark, built to PTX (nvcc -ptx -arch=sm_90) and loaded at run time.
 * extern "C" keeps the entry names unmangled: the backend finds kernels
 * by name.
 */

/* c[i] = a[i] + b[i] for i < n */
extern "C" __global__ void vec_add(const float *a, const float *b, float *c,
				   unsigned int n)
{
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

/* nothing: what a launch costs by itself */
extern "C" __global__ void empty(void)
{
}
