/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * gemm_ptx.S - embed examples/gemm/gemm_kernels.ptx in the program, so the
 * binary runs from any directory.  GEMM_PTX_FILE is the path the build
 * passes (-DGEMM_PTX_FILE='"..."'); the PTX is followed by a NUL because
 * the driver takes PTX as a C string.
 */
#ifndef GEMM_PTX_FILE
#define GEMM_PTX_FILE "examples/gemm/gemm_kernels.ptx"
#endif

	.section .rodata
	.balign 16
	.globl	gemm_ptx
	.type	gemm_ptx, @object
gemm_ptx:
	.incbin	GEMM_PTX_FILE
	.byte	0
	.globl	gemm_ptx_end
gemm_ptx_end:
	.size	gemm_ptx, gemm_ptx_end - gemm_ptx

	.balign 8
	.globl	gemm_ptx_len
	.type	gemm_ptx_len, @object
gemm_ptx_len:
	.quad	gemm_ptx_end - gemm_ptx
	.size	gemm_ptx_len, 8

	/* no executable stack */
	.section .note.GNU-stack,"",@progbits
