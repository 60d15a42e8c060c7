/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * gesture_ptx.S - embed examples/gesture/gesture_kernels.ptx in the program, so the
 * binary runs from any directory.  GESTURE_PTX_FILE is the path the build
 * passes (-DGESTURE_PTX_FILE='"..."'); the PTX is followed by a NUL because
 * the driver takes PTX as a C string.
 */
#ifndef GESTURE_PTX_FILE
#define GESTURE_PTX_FILE "examples/gesture/gesture_kernels.ptx"
#endif

	.section .rodata
	.balign 16
	.globl	gesture_ptx
	.type	gesture_ptx, @object
gesture_ptx:
	.incbin	GESTURE_PTX_FILE
	.byte	0
	.globl	gesture_ptx_end
gesture_ptx_end:
	.size	gesture_ptx, gesture_ptx_end - gesture_ptx

	.balign 8
	.globl	gesture_ptx_len
	.type	gesture_ptx_len, @object
gesture_ptx_len:
	.quad	gesture_ptx_end - gesture_ptx
	.size	gesture_ptx_len, 8

	/* no executable stack */
	.section .note.GNU-stack,"",@progbits
