// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gesture_kernels.cu - the GPU code of the gesture pipeline: the xform and
 * filter stages, one thread per pixel, on the arithmetic of
 * gesture_math.h (shared with the CPU stages and ptaskd's host twins).
 *
 *   gesture_xform(const u16 *depth, gesture_point *cloud, gesture_cam cam)
 *	one camera's depth image to its cloud in screen coordinates
 *   gesture_filter(const gesture_point *clouds, gesture_point *out,
 *		    gesture_filter_shape shape)
 *	the bilateral filter over shape.ncams clouds stacked in one buffer
 *	(handcode, modular, pipes: the xforms write into one buffer; the
 *	ptask graph: one camera's cloud, a filter ptask per camera)
 *
 * Launch: blocks of 32 x 8 threads, grid ceil(width / 32) x
 * ceil(height / 8) x ncams (z: the camera; 1 for xform).
 *
 * Build (gesture.mk): nvcc -ptx -arch=sm_90 -O3 --fmad=false; no
 * contraction, so each value is computed with the CPU's operations.
 */
#include "gesture_math.h"

extern "C" __global__ void gesture_xform(const unsigned short *__restrict__ depth,
					 gesture_point *__restrict__ cloud,
					 gesture_cam cam)
{
	const int u = blockIdx.x * blockDim.x + threadIdx.x;
	const int v = blockIdx.y * blockDim.y + threadIdx.y;

	if (u >= cam.width || v >= cam.height)
		return;
	cloud[v * cam.width + u] = gesture_xform_pixel(&cam, u, v,
							depth[v * cam.width + u]);
}

/* Camera blockIdx.z's pixel of this thread, from @img into @out. */
static __device__ __forceinline__ void filter_one(const gesture_point *img,
						  gesture_point *out,
						  const gesture_filter_shape &s)
{
	const int u = blockIdx.x * blockDim.x + threadIdx.x;
	const int v = blockIdx.y * blockDim.y + threadIdx.y;
	const long plane = (long)s.width * s.height;

	if (u >= s.width || v >= s.height)
		return;
	out[blockIdx.z * plane + v * s.width + u] =
		gesture_filter_pixel(img, s.width, s.height, u, v,
				     s.inv_sigma2);
}

extern "C" __global__ void gesture_filter(const gesture_point *__restrict__ clouds,
					  gesture_point *__restrict__ out,
					  gesture_filter_shape shape)
{
	if ((int)blockIdx.z >= shape.ncams)
		return;
	filter_one(clouds + (long)blockIdx.z * shape.width * shape.height,
		   out, shape);
}
