// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * impl_handcode.c - the hand-coded implementation: one process, one
 * thread driving CUDA, written to avoid every copy it can:
 *
 *   the source writes each frame straight into pinned host memory;
 *   one H2D copy of all cameras' depths into one device buffer;
 *   the xform kernels write into one stacked device cloud, which the
 *   filter reads where it is (no copy between the stages);
 *   one D2H copy of the filtered cloud into pinned memory, which
 *   hidinput reads in place.
 *
 * GPU only: without a GPU it returns -ENODEV (the caller skips it).
 */
#include <errno.h>
#include <stdlib.h>

#include "gpu.h"
#include "run.h"

struct handcode {
	struct gesture_run run;
	struct gesture_gpu gpu;
	struct gesture_filter_shape shape;
	size_t plane;
	uint16_t *h_depth;		/* pinned, GESTURE_SLOTS frames */
	struct gesture_point *h_fused;	/* pinned */
	CUdeviceptr d_depth, d_clouds, d_fused;
};

static int handcode_alloc(struct handcode *h)
{
	const struct gesture_rig *rig = h->run.rig;
	const size_t frame = rig->ncams * h->plane;
	uint32_t s, k;
	int err;

	h->h_depth = gesture_gpu_host_alloc(&h->gpu, GESTURE_SLOTS * frame * sizeof(uint16_t));
	h->h_fused = gesture_gpu_host_alloc(&h->gpu, frame * sizeof(struct gesture_point));
	if (!h->h_depth || !h->h_fused)
		return -ENOMEM;
	for (s = 0; s < GESTURE_SLOTS; s++)
		for (k = 0; k < rig->ncams; k++)
			h->run.depth[s][k] = h->h_depth + s * frame + k * h->plane;
	err = gesture_gpu_alloc(&h->gpu, frame * sizeof(uint16_t), &h->d_depth);
	err = err ? err : gesture_gpu_alloc(&h->gpu, frame * sizeof(struct gesture_point),
					    &h->d_clouds);
	return err ? err : gesture_gpu_alloc(&h->gpu, frame * sizeof(struct gesture_point),
					     &h->d_fused);
}

static void handcode_free(struct handcode *h)
{
	gesture_gpu_free(&h->gpu, h->d_depth);
	gesture_gpu_free(&h->gpu, h->d_clouds);
	gesture_gpu_free(&h->gpu, h->d_fused);
	gesture_gpu_host_free(&h->gpu, h->h_depth);
	gesture_gpu_host_free(&h->gpu, h->h_fused);
}

/* One frame, slot @s: depths in, two stages on the device, cloud out. */
static int handcode_frame(struct handcode *h, uint32_t s)
{
	const struct gesture_rig *rig = h->run.rig;
	const size_t frame = rig->ncams * h->plane;
	const size_t pt = sizeof(struct gesture_point);
	uint32_t k;
	int err;

	/* a slot's cameras are adjacent: one copy for all of them */
	err = gesture_gpu_h2d(&h->gpu, h->d_depth, h->run.depth[s][0],
			      frame * sizeof(uint16_t));
	for (k = 0; k < rig->ncams && !err; k++)
		err = gesture_gpu_xform(&h->gpu, h->d_depth + k * h->plane * sizeof(uint16_t),
					h->d_clouds + k * h->plane * pt, &rig->cam[k]);
	err = err ? err : gesture_gpu_filter(&h->gpu, h->d_clouds, h->d_fused, &h->shape);
	return err ? err : gesture_gpu_d2h(&h->gpu, h->h_fused, h->d_fused, frame * pt);
}

static int handcode_loop(struct handcode *h)
{
	struct gesture_run *run = &h->run;
	struct gesture_tracker tr;
	struct gesture_events ev;
	uint32_t i;
	int err = 0;

	gesture_tracker_init(&tr);
	for (i = 0; i < run->cfg->frames && !err; i++) {
		err = gesture_run_wait(run, i);
		err = err ? err : handcode_frame(h, gesture_slot(i));
		if (err)
			break;
		gesture_tracker_step(&tr, i, h->h_fused, run->rig->ncams * h->plane, &ev);
		err = gesture_run_done(run, &ev, 0, false);
	}
	return err;
}

int gesture_impl_handcode(const struct gesture_cfg *cfg, struct gesture_result *r)
{
	struct handcode *h;
	int err;

	if (cfg->cpu)
		return -ENODEV;	/* it is CUDA or nothing */
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	err = gesture_run_init(&h->run, cfg);	/* first: it notes the GPU's memory */
	if (err)
		goto err_free;
	err = gesture_gpu_open(&h->gpu);
	if (err)
		goto err_fini;
	h->plane = (size_t)h->run.rig->width * h->run.rig->height;
	gesture_filter_shape_init(&h->shape, h->run.rig);
	err = handcode_alloc(h);
	err = err ? err : gesture_run_start(&h->run);
	err = err ? err : handcode_loop(h);
	if (err)
		gesture_run_fail(&h->run, err);
	err = gesture_run_finish(&h->run, r) ?: err;
	handcode_free(h);	/* the source, which wrote into it, has stopped */
	gesture_gpu_close(&h->gpu);
err_fini:
	gesture_run_fini(&h->run);
err_free:
	free(h);
	return err;
}
