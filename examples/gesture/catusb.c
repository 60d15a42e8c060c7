// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * catusb.c - the cameras: frames from the generator (scene.c) or from a
 * recording (recording.c), paced at the rig's frame rate in realtime mode
 * and handed out as fast as asked for in unconstrained mode.
 *
 * A recording shorter than the run is replayed from its start again.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "run.h"

struct gesture_source {
	struct gesture_rig rig;
	struct gesture_scene *scene;	/* or: */
	struct gesture_rec *rec;
	enum gesture_mode mode;
	uint64_t start_ns, period_ns;
};

uint64_t gesture_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int gesture_source_open(const struct gesture_cfg *cfg,
			struct gesture_source **out)
{
	struct gesture_source *s;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->mode = cfg->mode;
	if (cfg->recording) {
		err = gesture_rec_open(cfg->recording, &s->rec);
		if (err)
			goto err_free;
		s->rig = *gesture_rec_rig(s->rec);
	} else {
		gesture_rig_default(&s->rig, cfg->ncams);
		err = gesture_scene_open(&s->rig, cfg->seed, &s->scene);
		if (err)
			goto err_free;
	}
	s->period_ns = 1000000000ull / s->rig.fps;
	*out = s;
	return 0;

err_free:
	free(s);
	return err;
}

const struct gesture_rig *gesture_source_rig(const struct gesture_source *s)
{
	return &s->rig;
}

void gesture_source_start(struct gesture_source *s, uint64_t start_ns)
{
	s->start_ns = start_ns;
}

static void sleep_until(uint64_t t_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(t_ns / 1000000000ull),
		.tv_nsec = (long)(t_ns % 1000000000ull),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int gesture_source_frame(struct gesture_source *s, uint32_t i,
			 uint16_t *const depth[], uint64_t *capture_ns)
{
	uint64_t now = gesture_now_ns();

	if (s->mode == GESTURE_REALTIME) {
		const uint64_t due = s->start_ns + (uint64_t)i * s->period_ns;

		if (now < due) {
			sleep_until(due);
			now = due;
		}
	}
	*capture_ns = now;
	if (s->rec)
		return gesture_rec_read(s->rec, i % gesture_rec_frames(s->rec),
					depth);
	gesture_scene_render(s->scene, i, depth);
	return 0;
}

void gesture_source_close(struct gesture_source *s)
{
	if (!s)
		return;
	gesture_scene_close(s->scene);
	gesture_rec_close(s->rec);
	free(s);
}
