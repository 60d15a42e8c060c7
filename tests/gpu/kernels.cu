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

/*
 * Spins for @ns nanoseconds (one thread on the global timer), then
 * *@p = @v: a kernel still running when a fence behind it is polled.
 */
extern "C" __global__ void busy_store(unsigned int *p, unsigned int v,
				      unsigned long long ns)
{
	unsigned long long start, now;

	if (threadIdx.x != 0 || blockIdx.x != 0)
		return;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
	do {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
	} while (now - start < ns);
	*(volatile unsigned int *)p = v;
}

/* *@dst = *@src + 1: what a kernel on another lane sees */
extern "C" __global__ void load_inc(const unsigned int *src, unsigned int *dst)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		*dst = *(const volatile unsigned int *)src + 1;
}

/* p[i] = p[i] * 2 + 1 for i < n: reads and writes @p in place */
extern "C" __global__ void twice_plus_one(unsigned int *p, unsigned int n)
{
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = p[i] * 2 + 1;
}
