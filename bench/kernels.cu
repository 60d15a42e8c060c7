// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kernels.cu - the GPU code of the ptask benchmarks (bench/ptask_gpu.c),
 * built to bench/kernels.ptx (nvcc -ptx -arch=sm_90; committed, so builds
 * without nvcc work, and bench/twin.c is bound to it).
 */

/* Writes one word: the least a ptask with an output can do. */
extern "C" __global__ void ptask_empty(const unsigned int *in,
				       unsigned int *out)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		out[0] = in[0] + 1;
}

/*
 * Keeps the GPU busy for @ns nanoseconds (one thread spinning on the
 * global timer), then writes in[0] + 1: PTSched's experiments
 * (bench/ptsched.sh) use it as the short and the long GPU work.
 */
extern "C" __global__ void ptask_busy(const unsigned int *in,
				      unsigned int *out,
				      unsigned long long ns)
{
	unsigned long long start, now;

	if (threadIdx.x != 0 || blockIdx.x != 0)
		return;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
	do {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
	} while (now - start < ns);
	out[0] = in[0] + 1;
}
