/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * gesture_math.h - the per-pixel arithmetic of the xform and filter stages,
 * compiled three times: by nvcc into gesture_kernels.ptx, by gcc into the
 * examples' CPU stages (stages_cpu.c), and by gcc into ptaskd's host twins
 * of the kernels (examples/gesture/twin.c).
 *
 * Why one source: the CPU paths (host-based, modular and pipes on the CPU,
 * ptask on ptaskd's cpu backend) must give bit-identical clouds so that
 * their event streams equal the golden file, and the GPU kernels should
 * differ as little as possible.  The code uses only +, -, *, / and
 * comparisons (IEEE correctly rounded on both sides), no library calls
 * (expf and friends differ in the last bits between glibc and CUDA), and
 * is built without contraction (gcc -ffp-contract=off, nvcc --fmad=false),
 * so a GPU kernel computes every value with the same operations in the
 * same order as the CPU.  The GPU test (tests/gpu, gesture gpucheck) still
 * allows GESTURE_GPU_TOL_MM per coordinate, and hidinput's decisions work
 * on whole millimetres, so a last-bit difference cannot change an event.
 *
 * Only fixed-width types and floats; no libc.
 */
#ifndef EXAMPLES_GESTURE_MATH_H
#define EXAMPLES_GESTURE_MATH_H

#ifdef __CUDACC__
#define GESTURE_HD __host__ __device__ __forceinline__
typedef unsigned short gesture_u16;
typedef int gesture_i32;
#else
#include <stdint.h>
#define GESTURE_HD static inline
typedef uint16_t gesture_u16;
typedef int32_t gesture_i32;
#endif

/* What a GPU coordinate may differ from the CPU's, in mm (gpucheck). */
#define GESTURE_GPU_TOL_MM	0.01f

/**
 * struct gesture_cam - one depth camera: the xform kernel's by-value
 * parameter (PTASK_BIND_PARAM), so 4-byte fields only and no padding
 * @fx, @fy: focal lengths in pixels
 * @cx, @cy: principal point in pixels
 * @r: camera-to-screen rotation, row-major; camera axes as OpenCV's
 *	(x right, y down, z forward)
 * @t: the camera's centre in screen coordinates, mm
 * @width, @height: the depth image's size
 * @zmin_mm, @zmax_mm: depths outside [zmin, zmax] are not trusted
 *
 * Screen coordinates: mm, origin the screen's centre, x right, y up, z
 * out of the screen towards the user.
 */
struct gesture_cam {
	float fx, fy, cx, cy;
	float r[9];
	float t[3];
	gesture_i32 width, height;
	float zmin_mm, zmax_mm;
};

/* One point of a cloud: screen mm, w = 1 when valid, 0 when not. */
struct gesture_point {
	float x, y, z, w;
};

/**
 * struct gesture_filter_shape - the filter kernel's by-value parameter
 * @width, @height: each camera's image
 * @ncams: clouds stacked in the input and output (1..GESTURE_CAMS_MAX)
 * @inv_sigma2: 1 / sigma^2 of the range weight, sigma in mm
 */
struct gesture_filter_shape {
	gesture_i32 width, height, ncams;
	float inv_sigma2;
};

/* Depth pixel @d at (@u, @v) of camera @c as a point on the screen. */
GESTURE_HD struct gesture_point gesture_xform_pixel(const struct gesture_cam *c,
						   int u, int v, gesture_u16 d)
{
	struct gesture_point p = { 0.0f, 0.0f, 0.0f, 0.0f };
	float z, xc, yc;

	if (d == 0 || (float)d < c->zmin_mm || (float)d > c->zmax_mm)
		return p;
	z = (float)d;
	xc = ((float)u - c->cx) * z / c->fx;
	yc = ((float)v - c->cy) * z / c->fy;
	p.x = c->r[0] * xc + c->r[1] * yc + c->r[2] * z + c->t[0];
	p.y = c->r[3] * xc + c->r[4] * yc + c->r[5] * z + c->t[1];
	p.z = c->r[6] * xc + c->r[7] * yc + c->r[8] * z + c->t[2];
	p.w = 1.0f;
	return p;
}

/*
 * One neighbour @q's share in the filter at centre @c, spatial weight @ws,
 * added to @acc (x, y, z and weight sums): the arithmetic every version
 * of the filter shares, so they cannot differ.
 */
GESTURE_HD void gesture_filter_tap(const struct gesture_point *c,
				   const struct gesture_point *q, float ws,
				   float inv_sigma2, float acc[4])
{
	float dz, wt;

	if (q->w == 0.0f)
		return;
	dz = q->z - c->z;
	wt = ws / (1.0f + dz * dz * inv_sigma2);
	acc[0] = acc[0] + wt * q->x;
	acc[1] = acc[1] + wt * q->y;
	acc[2] = acc[2] + wt * q->z;
	acc[3] = acc[3] + wt;
}

GESTURE_HD struct gesture_point gesture_filter_result(const float acc[4])
{
	struct gesture_point o;

	o.x = acc[0] / acc[3];
	o.y = acc[1] / acc[3];
	o.z = acc[2] / acc[3];
	o.w = 1.0f;
	return o;
}

/*
 * The bilateral filter at pixel (@u, @v) of one camera's cloud @img
 * (@w x @h): a 3 x 3 stencil, spatial weights 1, 1/2, 1/4 (centre, edge,
 * corner: exact in binary), range weight 1 / (1 + dz^2 / sigma^2) on the
 * neighbour's distance from the screen (a Cauchy kernel: like a Gaussian
 * near 0, without exp).  Invalid pixels stay invalid and add nothing.
 * Neighbours are taken row by row, left to right.
 */
GESTURE_HD struct gesture_point gesture_filter_pixel(const struct gesture_point *img,
						    int w, int h, int u, int v,
						    float inv_sigma2)
{
	const struct gesture_point c = img[v * w + u];
	struct gesture_point o = { 0.0f, 0.0f, 0.0f, 0.0f };
	float acc[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
	int dx, dy;

	if (c.w == 0.0f)
		return o;
	for (dy = -1; dy <= 1; dy++) {
		for (dx = -1; dx <= 1; dx++) {
			const int x = u + dx, y = v + dy;

			if (x < 0 || x >= w || y < 0 || y >= h)
				continue;
			gesture_filter_tap(&c, &img[y * w + x],
					   (dx == 0 ? 1.0f : 0.5f) * (dy == 0 ? 1.0f : 0.5f),
					   inv_sigma2, acc);
		}
	}
	return gesture_filter_result(acc);
}

/*
 * The same for a pixel with all eight neighbours inside the image (the
 * CPU's inner loop: no bounds checks, the taps in the same order, so the
 * same result to the bit).
 */
GESTURE_HD struct gesture_point gesture_filter_pixel_inner(const struct gesture_point *img,
							  int w, int u, int v,
							  float inv_sigma2)
{
	const struct gesture_point *r0 = img + (v - 1) * w + u;
	const struct gesture_point *r1 = r0 + w, *r2 = r1 + w;
	const struct gesture_point c = *r1;
	struct gesture_point o = { 0.0f, 0.0f, 0.0f, 0.0f };
	float acc[4] = { 0.0f, 0.0f, 0.0f, 0.0f };

	if (c.w == 0.0f)
		return o;
	gesture_filter_tap(&c, r0 - 1, 0.25f, inv_sigma2, acc);
	gesture_filter_tap(&c, r0, 0.5f, inv_sigma2, acc);
	gesture_filter_tap(&c, r0 + 1, 0.25f, inv_sigma2, acc);
	gesture_filter_tap(&c, r1 - 1, 0.5f, inv_sigma2, acc);
	gesture_filter_tap(&c, r1, 1.0f, inv_sigma2, acc);
	gesture_filter_tap(&c, r1 + 1, 0.5f, inv_sigma2, acc);
	gesture_filter_tap(&c, r2 - 1, 0.25f, inv_sigma2, acc);
	gesture_filter_tap(&c, r2, 0.5f, inv_sigma2, acc);
	gesture_filter_tap(&c, r2 + 1, 0.25f, inv_sigma2, acc);
	return gesture_filter_result(acc);
}

#endif /* EXAMPLES_GESTURE_MATH_H */
