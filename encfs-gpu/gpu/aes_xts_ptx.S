/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * aes_xts_ptx.S - embed encfs-gpu/gpu/aes_xts.ptx in encfs-gpu, so the gpu
 * backend hands ptaskd its kernel from any directory and needs no CUDA
 * toolkit at build time.  EG_PTX_FILE is the path the build passes
 * (-DEG_PTX_FILE='"..."'); the PTX is followed by a NUL because the
 * driver takes PTX as a C string (the NUL is counted in eg_xts_ptx_len).
 */
#ifndef EG_PTX_FILE
#define EG_PTX_FILE "encfs-gpu/gpu/aes_xts.ptx"
#endif

	.section .rodata
	.balign 16
	.globl	eg_xts_ptx
	.type	eg_xts_ptx, @object
eg_xts_ptx:
	.incbin	EG_PTX_FILE
	.byte	0
	.globl	eg_xts_ptx_end
eg_xts_ptx_end:
	.size	eg_xts_ptx, eg_xts_ptx_end - eg_xts_ptx

	.balign 8
	.globl	eg_xts_ptx_len
	.type	eg_xts_ptx_len, @object
eg_xts_ptx_len:
	.quad	eg_xts_ptx_end - eg_xts_ptx
	.size	eg_xts_ptx_len, 8

	/* no executable stack */
	.section .note.GNU-stack,"",@progbits
