// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * impl_modular.c - the modular implementation: one thread calls a
 * function per stage, and each function is self-contained, as a library
 * of reusable stages would be: it copies its input in, computes, and
 * copies its output back out to the caller's host buffer.
 *
 *   for each frame:  for each camera: xform(depth_k) -> cloud_k (host)
 *                    filter(clouds) -> fused (host)
 *                    hidinput(fused)
 *
 * On the GPU "in" and "out" are cuMemcpyHtoD and cuMemcpyDtoH around the
 * kernel, so every cloud crosses the bus twice more than it needs to
 * (the cost PTask's Table 2 charges modular).  With --cpu the same
 * structure runs the CPU stages, the copies being memcpy to and from the
 * stage's own buffers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "run.h"

struct modular {
	struct gesture_run run;
	struct gesture_filter_shape shape;
	size_t plane;
	bool gpu_open;
	struct gesture_gpu gpu;
	CUdeviceptr d_depth, d_cloud, d_in, d_out;	/* each stage's own */
	uint16_t *c_depth;				/* --cpu: the same */
	struct gesture_point *c_cloud, *c_in, *c_out;
	uint16_t *depth_mem;
	struct gesture_point *clouds, *fused;		/* the caller's */
};

static int xform_stage(struct modular *m, uint32_t k, const uint16_t *depth,
		       struct gesture_point *cloud)
{
	const struct gesture_cam *cam = &m->run.rig->cam[k];
	const size_t in = m->plane * sizeof(uint16_t);
	const size_t out = m->plane * sizeof(struct gesture_point);
	int err;

	if (!m->gpu_open) {
		memcpy(m->c_depth, depth, in);
		gesture_xform_rows(cam, m->c_depth, m->c_cloud, 0, cam->height);
		memcpy(cloud, m->c_cloud, out);
		return 0;
	}
	err = gesture_gpu_h2d(&m->gpu, m->d_depth, depth, in);
	err = err ? err : gesture_gpu_xform(&m->gpu, m->d_depth, m->d_cloud, cam);
	return err ? err : gesture_gpu_d2h(&m->gpu, cloud, m->d_cloud, out);
}

static int filter_stage(struct modular *m, const struct gesture_point *clouds,
			struct gesture_point *fused)
{
	const size_t bytes = m->run.rig->ncams * m->plane * sizeof(*clouds);
	uint32_t k;
	int err;

	if (!m->gpu_open) {
		memcpy(m->c_in, clouds, bytes);
		for (k = 0; k < m->run.rig->ncams; k++)
			gesture_filter_rows(&m->shape, m->c_in + k * m->plane,
					    m->c_out + k * m->plane, 0,
					    m->shape.height);
		memcpy(fused, m->c_out, bytes);
		return 0;
	}
	err = gesture_gpu_h2d(&m->gpu, m->d_in, clouds, bytes);
	err = err ? err : gesture_gpu_filter(&m->gpu, m->d_in, m->d_out, &m->shape);
	return err ? err : gesture_gpu_d2h(&m->gpu, fused, m->d_out, bytes);
}

static int modular_alloc(struct modular *m)
{
	const struct gesture_rig *rig = m->run.rig;
	const size_t pts = rig->ncams * m->plane * sizeof(struct gesture_point);
	const size_t one = m->plane * sizeof(struct gesture_point);
	uint32_t s, k;
	int err = 0;

	m->depth_mem = malloc(GESTURE_SLOTS * rig->ncams * m->plane * sizeof(uint16_t));
	m->clouds = malloc(pts);
	m->fused = malloc(pts);
	if (!m->depth_mem || !m->clouds || !m->fused)
		return -ENOMEM;
	for (s = 0; s < GESTURE_SLOTS; s++)
		for (k = 0; k < rig->ncams; k++)
			m->run.depth[s][k] = m->depth_mem + (s * rig->ncams + k) * m->plane;
	if (!m->gpu_open) {
		m->c_depth = malloc(m->plane * sizeof(uint16_t));
		m->c_cloud = malloc(one);
		m->c_in = malloc(pts);
		m->c_out = malloc(pts);
		return m->c_depth && m->c_cloud && m->c_in && m->c_out ? 0 : -ENOMEM;
	}
	err = gesture_gpu_alloc(&m->gpu, m->plane * sizeof(uint16_t), &m->d_depth);
	err = err ? err : gesture_gpu_alloc(&m->gpu, one, &m->d_cloud);
	err = err ? err : gesture_gpu_alloc(&m->gpu, pts, &m->d_in);
	return err ? err : gesture_gpu_alloc(&m->gpu, pts, &m->d_out);
}

static void modular_free(struct modular *m)
{
	if (m->gpu_open) {
		gesture_gpu_free(&m->gpu, m->d_depth);
		gesture_gpu_free(&m->gpu, m->d_cloud);
		gesture_gpu_free(&m->gpu, m->d_in);
		gesture_gpu_free(&m->gpu, m->d_out);
		gesture_gpu_close(&m->gpu);
	}
	free(m->c_depth);
	free(m->c_cloud);
	free(m->c_in);
	free(m->c_out);
	free(m->depth_mem);
	free(m->clouds);
	free(m->fused);
}

static int modular_loop(struct modular *m)
{
	struct gesture_run *run = &m->run;
	struct gesture_tracker tr;
	struct gesture_events ev;
	uint32_t i, k;
	int err = 0;

	gesture_tracker_init(&tr);
	for (i = 0; i < run->cfg->frames && !err; i++) {
		err = gesture_run_wait(run, i);
		for (k = 0; k < run->rig->ncams && !err; k++)
			err = xform_stage(m, k, run->depth[gesture_slot(i)][k],
					  m->clouds + k * m->plane);
		err = err ? err : filter_stage(m, m->clouds, m->fused);
		if (err)
			break;
		gesture_tracker_step(&tr, i, m->fused, run->rig->ncams * m->plane, &ev);
		err = gesture_run_done(run, &ev, 0, false);
	}
	return err;
}

int gesture_impl_modular(const struct gesture_cfg *cfg, struct gesture_result *r)
{
	struct modular *m;
	int err;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	err = gesture_run_init(&m->run, cfg);	/* first: it notes the GPU's memory */
	if (err)
		goto err_free;
	if (!cfg->cpu) {
		err = gesture_gpu_open(&m->gpu);
		if (err)
			goto err_fini;
		m->gpu_open = true;
	}
	m->plane = (size_t)m->run.rig->width * m->run.rig->height;
	gesture_filter_shape_init(&m->shape, m->run.rig);
	err = modular_alloc(m);
	err = err ? err : gesture_run_start(&m->run);
	err = err ? err : modular_loop(m);
	if (err)
		gesture_run_fail(&m->run, err);
	err = gesture_run_finish(&m->run, r) ?: err;
err_fini:
	gesture_run_fini(&m->run);
	modular_free(m);
err_free:
	free(m);
	return err;
}
