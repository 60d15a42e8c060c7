/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * kernels_ptx.S - embed the benchmarks' PTX (bench/kernels.ptx, from
 * kernels.cu) in their twin library and in the VM's end-to-end test,
 * followed by a NUL as read_ptx() hands it to ptask_gpu_ptask_open():
 * the twin is bound to exactly those bytes.
 */
#ifndef BENCH_PTX_FILE
#define BENCH_PTX_FILE "bench/kernels.ptx"
#endif

	.section .rodata
	.balign 16
	.globl	bench_ptx
	.type	bench_ptx, @object
bench_ptx:
	.incbin	BENCH_PTX_FILE
	.byte	0
	.globl	bench_ptx_end
bench_ptx_end:
	.size	bench_ptx, bench_ptx_end - bench_ptx

	/* no executable stack */
	.section .note.GNU-stack,"",@progbits
