// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gpucheck.c - `gesture gpucheck`: the GPU stages against the CPU
 * reference, on generated frames (the GPU test of tests/gpu; exit 77
 * without a GPU).
 *
 * For each frame: xform on both (every camera), the stacked filter
 * (gesture_filter, what handcode, modular and pipes run) and the filter
 * of each camera alone (gesture_filter with a one-camera shape, what the
 * ptask graph's filter per camera runs),
 * and hidinput over each result.  A point matches when both sides agree
 * on its validity and each coordinate is within GESTURE_GPU_TOL_MM; the
 * event streams must be equal.  TAP output, one line per check.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "main.h"
#include "run.h"

struct cmp {
	size_t validity;	/* points valid on one side only */
	double max_diff;	/* mm, over points valid on both */
};

static void compare(const struct gesture_point *a, const struct gesture_point *b,
		    size_t n, struct cmp *c)
{
	size_t i;

	for (i = 0; i < n; i++) {
		double d[3];
		int j;

		if ((a[i].w != 0.0f) != (b[i].w != 0.0f)) {
			c->validity++;
			continue;
		}
		if (a[i].w == 0.0f)
			continue;
		d[0] = a[i].x - b[i].x;
		d[1] = a[i].y - b[i].y;
		d[2] = a[i].z - b[i].z;
		for (j = 0; j < 3; j++) {
			double v = d[j] < 0 ? -d[j] : d[j];

			if (!(v <= c->max_diff))	/* NaN too */
				c->max_diff = v == v ? v : 1e30;
		}
	}
}

static int tap_n;
static int tap_fail;

static void report(const char *what, uint32_t frame, const struct cmp *c)
{
	const bool ok = !c->validity && c->max_diff <= GESTURE_GPU_TOL_MM;

	tap_fail += !ok;
	printf("%sok %d - %s frame %u: max |gpu - cpu| %.6f mm (tolerance %.3f), %zu validity mismatches\n",
	       ok ? "" : "not ", ++tap_n, what, frame, c->max_diff,
	       (double)GESTURE_GPU_TOL_MM, c->validity);
}

struct bufs {
	size_t plane, points;
	uint16_t *depth;
	struct gesture_point *cpu_cloud, *cpu_fused, *gpu_cloud, *gpu_fused;
	CUdeviceptr d_depth, d_cloud, d_fused;
};

static int bufs_alloc(struct gesture_gpu *g, const struct gesture_rig *rig,
		      struct bufs *b)
{
	const size_t pts = gesture_rig_frame_pixels(rig) * sizeof(struct gesture_point);
	int err;

	b->plane = (size_t)rig->width * rig->height;
	b->points = gesture_rig_frame_pixels(rig);
	b->depth = malloc(b->points * sizeof(uint16_t));
	b->cpu_cloud = malloc(pts);
	b->cpu_fused = malloc(pts);
	b->gpu_cloud = malloc(pts);
	b->gpu_fused = malloc(pts);
	if (!b->depth || !b->cpu_cloud || !b->cpu_fused || !b->gpu_cloud || !b->gpu_fused)
		return -ENOMEM;
	err = gesture_gpu_alloc(g, b->points * sizeof(uint16_t), &b->d_depth);
	err = err ?: gesture_gpu_alloc(g, pts, &b->d_cloud);
	return err ?: gesture_gpu_alloc(g, pts, &b->d_fused);
}

static void bufs_free(struct gesture_gpu *g, struct bufs *b)
{
	free(b->depth);
	free(b->cpu_cloud);
	free(b->cpu_fused);
	free(b->gpu_cloud);
	free(b->gpu_fused);
	gesture_gpu_free(g, b->d_depth);
	gesture_gpu_free(g, b->d_cloud);
	gesture_gpu_free(g, b->d_fused);
}

/*
 * gesture_filter over each camera's plane of d_cloud alone, a shape of
 * one camera, as the ptask graph's filter per camera runs it.
 */
static int filter_per_camera(struct gesture_gpu *g, const struct gesture_rig *rig,
			     const struct gesture_filter_shape *shape, struct bufs *b)
{
	const size_t bytes = b->plane * sizeof(struct gesture_point);
	struct gesture_filter_shape one = *shape;
	uint32_t k;
	int err = 0;

	one.ncams = 1;
	for (k = 0; k < rig->ncams && !err; k++)
		err = gesture_gpu_filter(g, b->d_cloud + k * bytes,
					 b->d_fused + k * bytes, &one);
	return err ?: gesture_gpu_sync(g);
}

/* One frame through both sides; TAP lines for each stage. */
static int check_frame(struct gesture_gpu *g, const struct gesture_rig *rig,
		       struct gesture_scene *scene, uint32_t frame,
		       const struct gesture_filter_shape *shape, struct bufs *b,
		       bool report_it)
{
	const size_t pts = b->points * sizeof(struct gesture_point);
	uint16_t *depth[GESTURE_CAMS_MAX];
	struct cmp c = { 0, 0.0 };
	uint32_t k;
	int err;

	for (k = 0; k < rig->ncams; k++)
		depth[k] = b->depth + k * b->plane;
	gesture_scene_render(scene, frame, depth);
	for (k = 0; k < rig->ncams; k++) {
		gesture_xform_rows(&rig->cam[k], depth[k], b->cpu_cloud + k * b->plane,
				   0, (int)rig->height);
		gesture_filter_rows(shape, b->cpu_cloud + k * b->plane,
				    b->cpu_fused + k * b->plane, 0, shape->height);
	}
	err = gesture_gpu_h2d(g, b->d_depth, b->depth, b->points * sizeof(uint16_t));
	for (k = 0; k < rig->ncams && !err; k++)
		err = gesture_gpu_xform(g, b->d_depth + k * b->plane * sizeof(uint16_t),
					b->d_cloud + k * b->plane * sizeof(struct gesture_point),
					&rig->cam[k]);
	err = err ?: gesture_gpu_d2h(g, b->gpu_cloud, b->d_cloud, pts);
	err = err ?: gesture_gpu_filter(g, b->d_cloud, b->d_fused, shape);
	err = err ?: gesture_gpu_d2h(g, b->gpu_fused, b->d_fused, pts);
	if (err)
		return err;
	compare(b->gpu_cloud, b->cpu_cloud, b->points, &c);
	if (report_it)
		report("xform", frame, &c);
	c = (struct cmp){ 0, 0.0 };
	compare(b->gpu_fused, b->cpu_fused, b->points, &c);
	if (report_it)
		report("filter (stacked)", frame, &c);
	/* poisoned first (3.4e38 mm everywhere): a pixel left unwritten shows */
	memset(b->gpu_fused, 0x7f, pts);
	err = gesture_gpu_h2d(g, b->d_fused, b->gpu_fused, pts);
	err = err ?: filter_per_camera(g, rig, shape, b);
	err = err ?: gesture_gpu_d2h(g, b->gpu_fused, b->d_fused, pts);
	if (err)
		return err;
	c = (struct cmp){ 0, 0.0 };
	compare(b->gpu_fused, b->cpu_fused, b->points, &c);
	if (report_it)
		report("filter (per camera)", frame, &c);
	return 0;
}

int gesture_cmd_gpucheck(int argc, char **argv)
{
	struct gesture_tracker t_cpu, t_gpu;
	struct gesture_events e_cpu, e_gpu;
	struct gesture_filter_shape shape;
	struct gesture_scene *scene = NULL;
	struct gesture_rig rig;
	struct gesture_gpu g;
	struct bufs b = { 0 };
	uint32_t frames = 60, i, differ = 0;
	int err;

	if (argc == 3 && !strcmp(argv[1], "--frames")) {
		if (gesture_parse_u32("--frames", argv[2], 1, 100000, &frames))
			return 2;
	} else if (argc != 1) {
		fprintf(stderr, "gesture gpucheck: usage: [--frames N]\n");
		return 2;
	}
	err = gesture_gpu_open(&g);
	if (err == -ENODEV) {
		printf("1..0 # SKIP no usable GPU (libcuda.so.1 or a device missing)\n");
		return 77;
	}
	if (err)
		return 1;
	printf("# %s\n", g.dev.name);
	gesture_rig_default(&rig, GESTURE_CAMS_DEFAULT);
	gesture_filter_shape_init(&shape, &rig);
	gesture_tracker_init(&t_cpu);
	gesture_tracker_init(&t_gpu);
	err = gesture_scene_open(&rig, 1, &scene);
	err = err ?: bufs_alloc(&g, &rig, &b);
	for (i = 0; i < frames && !err; i++) {
		/* every stage's numbers for a few frames; events for all */
		err = check_frame(&g, &rig, scene, i, &shape, &b,
				  i == 0 || i == 18 || i == 45 || i == frames - 1);
		if (err)
			break;
		gesture_tracker_step(&t_cpu, i, b.cpu_fused, b.points, &e_cpu);
		gesture_tracker_step(&t_gpu, i, b.gpu_fused, b.points, &e_gpu);
		if (memcmp(&e_cpu, &e_gpu, sizeof(e_cpu)))
			differ++;
	}
	if (!err) {
		tap_fail += differ != 0;
		printf("%sok %d - hidinput: the events of %u frames equal on GPU and CPU clouds (%u differ)\n",
		       differ ? "not " : "", ++tap_n, frames, differ);
		printf("1..%d\n", tap_n);
	} else {
		fprintf(stderr, "gesture gpucheck: %s\n", strerror(-err));
	}
	bufs_free(&g, &b);
	gesture_scene_close(scene);
	gesture_gpu_close(&g);
	return err || tap_fail ? 1 : 0;
}
