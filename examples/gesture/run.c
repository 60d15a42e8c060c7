// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * run.c - the driver of one in-process run (see run.h): the source thread
 * that fills the slots, the wait for a frame, the completion that frees a
 * slot, counts latency and writes the event stream.
 *
 * Locking: run->lock guards produced, done, error, stop and capture_ns;
 * the slots' buffers need none (a slot is written by the source only
 * while no stage holds its frame: produced - done < GESTURE_SLOTS).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

int gesture_run_init(struct gesture_run *run, const struct gesture_cfg *cfg)
{
	int err;

	memset(run, 0, sizeof(*run));
	run->cfg = cfg;
	pthread_mutex_init(&run->lock, NULL);
	pthread_cond_init(&run->cond, NULL);
	err = gesture_source_open(cfg, &run->src);
	if (err)
		goto err_destroy;
	run->rig = gesture_source_rig(run->src);
	err = gesture_stats_open(cfg, run->rig, &run->stats);
	if (err)
		goto err_source;
	err = gesture_hid_open(&run->hid, cfg->hid, cfg->hid_log);
	if (err)
		goto err_stats;
	if (cfg->events_path) {
		run->events = fopen(cfg->events_path, "we");
		if (!run->events) {
			err = -errno;
			fprintf(stderr, "gesture: %s: %s\n", cfg->events_path,
				strerror(-err));
			goto err_hid;
		}
	}
	return 0;

err_hid:
	gesture_hid_close(&run->hid);
err_stats:
	gesture_stats_close(run->stats);
err_source:
	gesture_source_close(run->src);
err_destroy:
	pthread_cond_destroy(&run->cond);
	pthread_mutex_destroy(&run->lock);
	return err;
}

void gesture_run_fini(struct gesture_run *run)
{
	if (run->source_started) {
		gesture_run_fail(run, -ECANCELED);
		pthread_join(run->source, NULL);
		run->source_started = false;
	}
	if (run->events)
		fclose(run->events);
	gesture_hid_close(&run->hid);
	gesture_stats_close(run->stats);
	gesture_source_close(run->src);
	pthread_cond_destroy(&run->cond);
	pthread_mutex_destroy(&run->lock);
}

void gesture_run_fail(struct gesture_run *run, int err)
{
	pthread_mutex_lock(&run->lock);
	if (!run->error)
		run->error = err;
	run->stop = true;
	pthread_cond_broadcast(&run->cond);
	pthread_mutex_unlock(&run->lock);
}

static void *source_main(void *arg)
{
	struct gesture_run *run = arg;
	uint32_t i;
	int err = 0;

	for (i = 0; i < run->cfg->frames && !err; i++) {
		const uint32_t slot = gesture_slot(i);
		uint64_t capture;

		pthread_mutex_lock(&run->lock);
		while (!run->stop && i - run->done >= GESTURE_SLOTS)
			pthread_cond_wait(&run->cond, &run->lock);
		err = run->stop ? -ECANCELED : 0;
		pthread_mutex_unlock(&run->lock);
		if (err)
			break;
		err = gesture_source_frame(run->src, i, run->depth[slot], &capture);
		if (!err && run->filled)
			err = run->filled(run, i);
		if (err)
			break;
		pthread_mutex_lock(&run->lock);
		run->capture_ns[slot] = capture;
		run->produced = i + 1;
		pthread_cond_broadcast(&run->cond);
		pthread_mutex_unlock(&run->lock);
	}
	if (err && err != -ECANCELED)
		gesture_run_fail(run, err);
	return NULL;
}

int gesture_run_start(struct gesture_run *run)
{
	int err;

	err = gesture_stats_begin(run->stats);
	if (err)
		return err;
	gesture_source_start(run->src, gesture_now_ns());
	err = -pthread_create(&run->source, NULL, source_main, run);
	run->source_started = !err;
	return err;
}

int gesture_run_wait(struct gesture_run *run, uint32_t i)
{
	int err;

	pthread_mutex_lock(&run->lock);
	while (!run->stop && run->produced <= i)
		pthread_cond_wait(&run->cond, &run->lock);
	err = run->produced > i ? 0 : run->error ? run->error : -ECANCELED;
	pthread_mutex_unlock(&run->lock);
	return err;
}

int gesture_run_done(struct gesture_run *run, const struct gesture_events *e,
		     uint64_t capture_ns, bool emitted)
{
	const uint64_t now = gesture_now_ns();
	int err = 0;

	if (!emitted)
		err = gesture_hid_emit(&run->hid, e);
	if (run->events)
		gesture_events_write(run->events, e);
	pthread_mutex_lock(&run->lock);
	if (!capture_ns)
		capture_ns = run->capture_ns[gesture_slot(e->frame)];
	run->done = e->frame + 1;
	run->nevents += e->n;
	pthread_cond_broadcast(&run->cond);
	pthread_mutex_unlock(&run->lock);
	gesture_stats_frame(run->stats, e->frame, capture_ns, now);
	if (err)
		gesture_run_fail(run, err);
	return err;
}

int gesture_run_finish(struct gesture_run *run, struct gesture_result *r)
{
	int err;

	if (run->source_started) {
		pthread_join(run->source, NULL);
		run->source_started = false;
	}
	gesture_stats_end(run->stats, r);
	r->events = run->nevents;
	pthread_mutex_lock(&run->lock);
	err = run->error;
	pthread_mutex_unlock(&run->lock);
	if (!err && r->frames != run->cfg->frames)
		err = -EPIPE;
	if (!err && run->events && fflush(run->events))
		err = -errno;
	if (!err && run->cfg->csv_path)
		err = gesture_result_append_csv(run->cfg->csv_path, r);
	return err;
}
