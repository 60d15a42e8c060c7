// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * twin.c - host twins of the gesture pipeline's kernels
 * (gesture_kernels.cu), so the demo's ptask graph runs on ptaskd's cpu
 * and sim backends, in CI and on machines without a GPU.  Built as the
 * demo's twin library (build/twins/gesture.so, uapi/ptask_twin.h), bound
 * to the PTX the demo embeds (gesture_ptx.S).
 *
 *   gesture_xform(const u16 *depth, struct gesture_point *cloud,
 *		   struct gesture_cam cam)
 *   gesture_filter(const struct gesture_point *clouds,
 *		    struct gesture_point *out, struct gesture_filter_shape shape)
 *
 * The per-pixel code is examples/gesture/gesture_math.h itself, the one
 * the kernels and the example's CPU stages compile, so the cpu backend's
 * clouds are bit-identical to the host implementation's (the golden
 * event-stream test depends on it).  Contraction is off for this file,
 * as for the example (-ffp-contract=off) and the kernels (--fmad=false):
 * a fused multiply-add would round differently.
 *
 * Parameters are checked as every host kernel checks them: the structs'
 * sizes, the shape's ranges, and each buffer against the allocation it is
 * in (ptask_twin_buf), because the sizes come from the client.
 *
 * Block ranges (ptask_twin.h): every twin here also runs a range of its
 * launch's blocks, so ptaskd's cpu backend spreads one camera's filter
 * over its idle cores as a GPU spreads it over its SMs.  A range computes
 * its proportional share of the image rows (ptask_twin_block_span; the
 * filter's rows are those of every camera, one after the other), each
 * pixel by the same gesture_math.h call as the whole run: the bytes are
 * the same however the launch is split.  Pixels are independent (the
 * filter reads the input clouds, writes only its own output pixel).
 * Inside the image the filter takes gesture_filter_pixel_inner, as the
 * host implementation's rows do (stages_cpu.c): the same taps in the same
 * order without bounds checks, the same bits, and about twice as fast.
 */
#pragma GCC optimize("fp-contract=off")

#include <errno.h>
#include <string.h>

#include "uapi/ptask_twin.h"
#include "examples/gesture/gesture.h"
#include "examples/gesture/gesture_math.h"

#define GESTURE_SIDE_MAX	16384
#define GESTURE_NCAMS_MAX	4
#define XFORM_FLOPS		24	/* per pixel: 2 divisions, a 3x4 transform */
#define FILTER_FLOPS		(9 * 14)	/* per pixel: 9 taps */

static int side_ok(int32_t v)
{
	return v >= 1 && v <= GESTURE_SIDE_MAX;
}

static int xform_cam(const struct ptask_twin_call *call, struct gesture_cam *cam)
{
	int err = ptask_twin_val(call, 2, cam, sizeof(*cam));

	if (err)
		return err;
	return side_ok(cam->width) && side_ok(cam->height) ? 0 : -EINVAL;
}

/* Every row of the image when @whole, else blocks [@first, +@count)'s. */
static int xform_rows(const struct ptask_twin_call *call, int whole,
		      uint64_t first, uint64_t count)
{
	struct gesture_cam cam;
	const uint16_t *depth;
	struct gesture_point *cloud;
	uint64_t n, row0 = 0, row1;
	int err, u, v;

	err = xform_cam(call, &cam);
	if (err)
		return err;
	n = (uint64_t)cam.width * (uint64_t)cam.height;
	depth = ptask_twin_buf(call, 0, n * sizeof(*depth), &err);
	cloud = ptask_twin_buf(call, 1, n * sizeof(*cloud), &err);
	if (err)
		return err;
	row1 = (uint64_t)cam.height;
	if (!whole) {
		err = ptask_twin_block_span(call, first, count, row1, &row0, &row1);
		if (err)
			return err;
	}
	for (v = (int)row0; v < (int)row1; v++)
		for (u = 0; u < cam.width; u++)
			cloud[v * cam.width + u] =
				gesture_xform_pixel(&cam, u, v, depth[v * cam.width + u]);
	return 0;
}

static int gesture_xform_run(const struct ptask_twin_call *call)
{
	return xform_rows(call, 1, 0, 0);
}

static int gesture_xform_blocks(const struct ptask_twin_call *call,
				uint64_t first, uint64_t count)
{
	return xform_rows(call, 0, first, count);
}

static int gesture_xform_cost(const struct ptask_twin_call *call,
			      struct ptask_twin_cost *cost)
{
	struct gesture_cam cam;
	uint64_t n;
	int err = xform_cam(call, &cam);

	if (err)
		return err;
	n = (uint64_t)cam.width * (uint64_t)cam.height;
	cost->flops = XFORM_FLOPS * n;
	cost->bytes = n * (sizeof(uint16_t) + sizeof(struct gesture_point));
	return 0;
}

/* The shape (parameter 2): ncams stacked planes of width x height. */
static int filter_shape(const struct ptask_twin_call *call,
			struct gesture_filter_shape *s)
{
	int err = ptask_twin_val(call, 2, s, sizeof(*s));

	if (err)
		return err;
	if (!side_ok(s->width) || !side_ok(s->height) || s->ncams < 1 ||
	    s->ncams > GESTURE_NCAMS_MAX || !(s->inv_sigma2 >= 0.0f))
		return -EINVAL;
	return 0;
}

/*
 * Every camera's rows one after the other; all of them when @whole,
 * else the share of blocks [@first, @first + @count).
 */
static int filter_rows(const struct ptask_twin_call *call, int whole,
		       uint64_t first, uint64_t count)
{
	const struct gesture_point *in;
	struct gesture_filter_shape s;
	struct gesture_point *out;
	uint64_t plane, row0 = 0, row1, r;
	int err, k, u, v;

	err = filter_shape(call, &s);
	if (err)
		return err;
	plane = (uint64_t)s.width * (uint64_t)s.height;
	in = ptask_twin_buf(call, 0, (uint64_t)s.ncams * plane * sizeof(*in), &err);
	out = ptask_twin_buf(call, 1, (uint64_t)s.ncams * plane * sizeof(*out), &err);
	if (err)
		return err;
	row1 = (uint64_t)s.ncams * (uint64_t)s.height;
	if (!whole) {
		err = ptask_twin_block_span(call, first, count, row1, &row0, &row1);
		if (err)
			return err;
	}
	for (r = row0; r < row1; r++) {
		const struct gesture_point *img;
		struct gesture_point *o;

		k = (int)(r / (uint64_t)s.height);
		v = (int)(r % (uint64_t)s.height);
		img = in + k * plane;
		o = out + k * plane;
		if (v == 0 || v == s.height - 1 || s.width < 3) {
			for (u = 0; u < s.width; u++)
				o[v * s.width + u] = gesture_filter_pixel(img, s.width, s.height,
									  u, v, s.inv_sigma2);
			continue;
		}
		/* inside: no bounds checks, the same taps in the same order */
		o[v * s.width] = gesture_filter_pixel(img, s.width, s.height, 0, v,
						      s.inv_sigma2);
		for (u = 1; u < s.width - 1; u++)
			o[v * s.width + u] = gesture_filter_pixel_inner(img, s.width, u, v,
									s.inv_sigma2);
		u = s.width - 1;
		o[v * s.width + u] = gesture_filter_pixel(img, s.width, s.height, u, v,
							  s.inv_sigma2);
	}
	return 0;
}

static int gesture_filter_run(const struct ptask_twin_call *call)
{
	return filter_rows(call, 1, 0, 0);
}

static int gesture_filter_blocks(const struct ptask_twin_call *call,
				 uint64_t first, uint64_t count)
{
	return filter_rows(call, 0, first, count);
}

static int gesture_filter_cost(const struct ptask_twin_call *call,
			       struct ptask_twin_cost *cost)
{
	struct gesture_filter_shape s;
	uint64_t n;
	int err = filter_shape(call, &s);

	if (err)
		return err;
	n = (uint64_t)s.width * (uint64_t)s.height * (uint64_t)s.ncams;
	cost->flops = FILTER_FLOPS * n;
	cost->bytes = n * 10 * sizeof(struct gesture_point);	/* 9 taps + out */
	return 0;
}

static const struct ptask_twin gesture_twins[] = {
	{ "gesture_xform", gesture_ptx, gesture_ptx_end,
	  gesture_xform_run, gesture_xform_cost },
	{ "gesture_filter", gesture_ptx, gesture_ptx_end,
	  gesture_filter_run, gesture_filter_cost },
};
/* Block ranges of each, in gesture_twins' order. */
static const ptask_twin_blocks_fn gesture_blocks[] = {
	gesture_xform_blocks,
	gesture_filter_blocks,
};
PTASK_TWIN_LIBRARY_BLOCKS(gesture_twin_table, gesture_twins, gesture_blocks);
