// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * impl_host.c - the host-based implementation: every stage on the CPU, a
 * thread per stage and camera, frames flowing through them as a pipeline:
 *
 *   source --> xform[k] --> filter[k] --> hidinput (this thread)
 *              k = 0..ncams-1, each on its own thread
 *
 * filter[k] needs only camera k's cloud (the stencil stays within one
 * camera's image), so the cameras never wait for each other before
 * hidinput.  Stages hand frames on by counters under run->lock (frames
 * done per stage and camera); buffers are per slot, as run.h explains.
 */
#include <errno.h>
#include <stdlib.h>

#include "run.h"

struct host_impl;

struct host_worker {
	struct host_impl *h;
	uint32_t cam;
	bool filter;		/* else xform */
	pthread_t thread;
	bool started;
};

struct host_impl {
	struct gesture_run run;
	struct gesture_filter_shape shape;
	size_t plane;		/* points per camera */
	uint16_t *depth_mem;
	struct gesture_point *clouds[GESTURE_SLOTS];	/* ncams planes */
	struct gesture_point *fused[GESTURE_SLOTS];	/* ncams planes */
	uint32_t xformed[GESTURE_CAMS_MAX];		/* under run.lock */
	uint32_t filtered[GESTURE_CAMS_MAX];		/* under run.lock */
	struct host_worker workers[2 * GESTURE_CAMS_MAX];
};

/* Wait until *@counter > @i; -ECANCELED when the run failed. */
static int wait_counter(struct gesture_run *run, const uint32_t *counter,
			uint32_t i)
{
	int err;

	pthread_mutex_lock(&run->lock);
	while (!run->stop && *counter <= i)
		pthread_cond_wait(&run->cond, &run->lock);
	err = *counter > i ? 0 : -ECANCELED;
	pthread_mutex_unlock(&run->lock);
	return err;
}

static void bump(struct gesture_run *run, uint32_t *counter, uint32_t to)
{
	pthread_mutex_lock(&run->lock);
	*counter = to;
	pthread_cond_broadcast(&run->cond);
	pthread_mutex_unlock(&run->lock);
}

static void *worker_main(void *arg)
{
	struct host_worker *w = arg;
	struct host_impl *h = w->h;
	struct gesture_run *run = &h->run;
	const struct gesture_cam *cam = &run->rig->cam[w->cam];
	uint32_t i;

	for (i = 0; i < run->cfg->frames; i++) {
		const uint32_t s = gesture_slot(i);
		struct gesture_point *cloud = h->clouds[s] + w->cam * h->plane;

		if (!w->filter) {
			if (gesture_run_wait(run, i))
				break;
			gesture_xform_rows(cam, run->depth[s][w->cam], cloud, 0,
					   cam->height);
			bump(run, &h->xformed[w->cam], i + 1);
			continue;
		}
		if (wait_counter(run, &h->xformed[w->cam], i))
			break;
		gesture_filter_rows(&h->shape, cloud,
				    h->fused[s] + w->cam * h->plane, 0,
				    h->shape.height);
		bump(run, &h->filtered[w->cam], i + 1);
	}
	return NULL;
}

static int host_alloc(struct host_impl *h)
{
	const struct gesture_rig *rig = h->run.rig;
	uint32_t s, k;

	h->plane = (size_t)rig->width * rig->height;
	h->depth_mem = malloc(GESTURE_SLOTS * rig->ncams * h->plane *
			      sizeof(uint16_t));
	if (!h->depth_mem)
		return -ENOMEM;
	for (s = 0; s < GESTURE_SLOTS; s++) {
		for (k = 0; k < rig->ncams; k++)
			h->run.depth[s][k] = h->depth_mem +
					     (s * rig->ncams + k) * h->plane;
		h->clouds[s] = malloc(rig->ncams * h->plane * sizeof(struct gesture_point));
		h->fused[s] = malloc(rig->ncams * h->plane * sizeof(struct gesture_point));
		if (!h->clouds[s] || !h->fused[s])
			return -ENOMEM;
	}
	gesture_filter_shape_init(&h->shape, rig);
	return 0;
}

static void host_free(struct host_impl *h)
{
	uint32_t s;

	for (s = 0; s < GESTURE_SLOTS; s++) {
		free(h->clouds[s]);
		free(h->fused[s]);
	}
	free(h->depth_mem);
}

/* hidinput, on the calling thread. */
static int host_hidinput(struct host_impl *h)
{
	struct gesture_run *run = &h->run;
	const size_t npoints = run->rig->ncams * h->plane;
	struct gesture_tracker tr;
	struct gesture_events ev;
	uint32_t i, k;
	int err = 0;

	gesture_tracker_init(&tr);
	for (i = 0; i < run->cfg->frames && !err; i++) {
		for (k = 0; k < run->rig->ncams && !err; k++)
			err = wait_counter(run, &h->filtered[k], i);
		if (err)
			break;
		gesture_tracker_step(&tr, i, h->fused[gesture_slot(i)], npoints, &ev);
		err = gesture_run_done(run, &ev, 0, false);
	}
	return err;
}

int gesture_impl_host(const struct gesture_cfg *cfg, struct gesture_result *r)
{
	struct host_impl *h;
	uint32_t n = 0, w;
	int err;

	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	err = gesture_run_init(&h->run, cfg);
	if (err)
		goto err_free;
	err = host_alloc(h);
	if (err)
		goto err_fini;
	err = gesture_run_start(&h->run);
	for (w = 0; w < 2 * h->run.rig->ncams && !err; w++) {
		struct host_worker *wk = &h->workers[w];

		wk->h = h;
		wk->cam = w % h->run.rig->ncams;
		wk->filter = w >= h->run.rig->ncams;
		err = -pthread_create(&wk->thread, NULL, worker_main, wk);
		wk->started = !err;
		n += !err;
	}
	if (!err)
		err = host_hidinput(h);
	if (err)
		gesture_run_fail(&h->run, err);
	for (w = 0; w < n; w++)
		pthread_join(h->workers[w].thread, NULL);
	err = gesture_run_finish(&h->run, r) ?: err;
err_fini:
	gesture_run_fini(&h->run);
	host_free(h);
err_free:
	free(h);
	return err;
}
