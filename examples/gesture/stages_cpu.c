// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * stages_cpu.c - xform and filter on the CPU, a band of rows at a time
 * (the host implementation splits a frame among threads by rows).  The
 * arithmetic is gesture_math.h's, the GPU kernels' and ptaskd's host
 * twins' own.
 */
#include "gesture.h"

void gesture_xform_rows(const struct gesture_cam *cam, const uint16_t *depth,
			struct gesture_point *cloud, int v0, int v1)
{
	int u, v;

	for (v = v0; v < v1; v++)
		for (u = 0; u < cam->width; u++)
			cloud[v * cam->width + u] =
				gesture_xform_pixel(cam, u, v,
						    depth[v * cam->width + u]);
}

void gesture_filter_rows(const struct gesture_filter_shape *shape,
			 const struct gesture_point *img,
			 struct gesture_point *out, int v0, int v1)
{
	const int w = shape->width, h = shape->height;
	int u, v;

	for (v = v0; v < v1; v++) {
		const bool edge_row = v == 0 || v == h - 1;

		for (u = 0; u < w; u++)
			out[v * w + u] = edge_row || u == 0 || u == w - 1 ?
				gesture_filter_pixel(img, w, h, u, v, shape->inv_sigma2) :
				gesture_filter_pixel_inner(img, w, u, v, shape->inv_sigma2);
	}
}

void gesture_filter_shape_init(struct gesture_filter_shape *s,
			       const struct gesture_rig *rig)
{
	s->width = (int32_t)rig->width;
	s->height = (int32_t)rig->height;
	s->ncams = (int32_t)rig->ncams;
	s->inv_sigma2 = 1.0f / (GESTURE_SIGMA_MM * GESTURE_SIGMA_MM);
}
