// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * hidinput.c - the last stage: find the hand in the fused cloud, track
 * it, and turn its motion into pointer events.
 *
 * The hand is the cluster nearest the screen: the nearest valid point in
 * the interaction volume (|x| <= 300, |y| <= 220, 100 <= z <= 700 mm; the
 * head and the wall are further), then every point within 60 mm behind it
 * and 90 mm of it sideways; fewer than 30 such points is no hand (noise).
 * Its centroid, rounded to whole mm, is the hand's position: the
 * pointer is its x and y on a 480 x 270 mm screen of 1920 x 1080 pixels.
 *
 * Events:  ENTER when a hand appears; MOVE when the pointer moved 8 px
 * (2 mm) or more from the last position sent; DOWN when the hand comes
 * 35 mm nearer the screen than where it hovered (a push), UP when it is
 * back within 15 mm; LEAVE (after UP when pressed) when it is gone.  The
 * hover distance follows the hand slowly (1/8 a frame) while it is not
 * pushing, so a hand drifting nearer does not click.
 */
#include <stdlib.h>
#include <string.h>

#include "gesture.h"

#define VOL_X_MM	300.0f
#define VOL_Y_MM	220.0f
#define VOL_ZMIN_MM	100.0f
#define VOL_ZMAX_MM	700.0f
#define SLAB_MM		60.0f
#define RADIUS_MM	90.0f
#define MIN_POINTS	30
#define MOVE_PX		8
#define PUSH_MM		35
#define RELEASE_MM	15
#define HOVER_MM	10

/* z first: nearly every point is the wall or the head, further away */
static bool in_volume(const struct gesture_point *p)
{
	return p->z <= VOL_ZMAX_MM && p->z >= VOL_ZMIN_MM && p->w != 0.0f &&
	       p->x >= -VOL_X_MM && p->x <= VOL_X_MM &&
	       p->y >= -VOL_Y_MM && p->y <= VOL_Y_MM;
}

/* Rounded to the nearest whole number, halves away from zero. */
static int32_t round_mm(double v)
{
	return (int32_t)(v < 0.0 ? v - 0.5 : v + 0.5);
}

static int32_t clamp(int32_t v, int32_t lo, int32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static bool in_cluster(const struct gesture_point *p,
		       const struct gesture_point *near)
{
	const float dx = p->x - near->x, dy = p->y - near->y;

	return p->z <= near->z + SLAB_MM && dx * dx + dy * dy <= RADIUS_MM * RADIUS_MM;
}

/* Point @i of the planes stacked in order. */
static const struct gesture_point *point_at(const struct gesture_point *const *planes,
					    size_t plane, size_t i)
{
	return &planes[i / plane][i % plane];
}

/*
 * The hand's cluster: its size and centroid (mm); 0 points when none.
 * The cloud is @nplanes planes of @plane points, taken as if stacked in
 * order (point i is point i % plane of plane i / plane).  The first pass
 * finds the nearest point and remembers where the points in the volume
 * are (a few thousand of 600,000), so the second looks at those only:
 * half of hidinput's time, with the same points summed in the same
 * order (the whole cloud again if there were more than @t->near holds).
 */
static uint32_t find_hand(struct gesture_tracker *t,
			  const struct gesture_point *const *planes,
			  uint32_t nplanes, size_t plane, int32_t pos[3])
{
	const size_t n = nplanes * plane;
	const struct gesture_point *near = NULL;
	double sx = 0.0, sy = 0.0, sz = 0.0;
	uint32_t count = 0, k;
	size_t i, j, nnear = 0;
	bool overflow = false;

	for (k = 0; k < nplanes; k++) {
		const struct gesture_point *c = planes[k];

		for (j = 0; j < plane; j++) {
			if (!in_volume(&c[j]))
				continue;
			if (!near || c[j].z < near->z)
				near = &c[j];
			if (nnear < GESTURE_NEAR_MAX)
				t->near[nnear++] = (uint32_t)(k * plane + j);
			else
				overflow = true;
		}
	}
	if (!near)
		return 0;
	for (i = 0; i < (overflow ? n : nnear); i++) {
		const struct gesture_point *p =
			point_at(planes, plane, overflow ? i : t->near[i]);

		if (!in_volume(p) || !in_cluster(p, near))
			continue;
		sx += p->x;
		sy += p->y;
		sz += p->z;
		count++;
	}
	if (count < MIN_POINTS)
		return 0;
	pos[0] = round_mm(sx / count);
	pos[1] = round_mm(sy / count);
	pos[2] = round_mm(sz / count);
	return count;
}

void gesture_tracker_init(struct gesture_tracker *t)
{
	memset(t, 0, sizeof(*t));
}

static void add(struct gesture_events *out, uint32_t type, int32_t x,
		int32_t y, int32_t z)
{
	if (out->n < GESTURE_EVENTS_MAX)
		out->ev[out->n++] = (struct gesture_event){ type, x, y, z };
}

void gesture_tracker_step(struct gesture_tracker *t, uint32_t frame,
			  const struct gesture_point *cloud, size_t npoints,
			  struct gesture_events *out)
{
	gesture_tracker_step_planes(t, frame, &cloud, 1, npoints, out);
}

void gesture_tracker_step_planes(struct gesture_tracker *t, uint32_t frame,
				 const struct gesture_point *const *planes,
				 uint32_t nplanes, size_t plane,
				 struct gesture_events *out)
{
	int32_t pos[3], px, py;

	memset(out, 0, sizeof(*out));
	out->frame = frame;
	out->points = plane ? find_hand(t, planes, nplanes, plane, pos) : 0;
	if (!out->points) {
		if (t->pressed)
			add(out, GESTURE_EV_UP, t->last_x, t->last_y, 0);
		if (t->present)
			add(out, GESTURE_EV_LEAVE, t->last_x, t->last_y, 0);
		t->present = t->pressed = false;
		return;
	}
	px = clamp((pos[0] + GESTURE_SCREEN_W_PX / GESTURE_SCREEN_PX_PER_MM / 2) *
		   GESTURE_SCREEN_PX_PER_MM, 0, GESTURE_SCREEN_W_PX - 1);
	py = clamp((GESTURE_SCREEN_H_PX / GESTURE_SCREEN_PX_PER_MM / 2 - pos[1]) *
		   GESTURE_SCREEN_PX_PER_MM, 0, GESTURE_SCREEN_H_PX - 1);
	if (!t->present) {
		t->present = true;
		t->pressed = false;
		t->baseline_z = pos[2];
		t->last_x = px;
		t->last_y = py;
		add(out, GESTURE_EV_ENTER, px, py, pos[2]);
		return;
	}
	if (abs(px - t->last_x) >= MOVE_PX || abs(py - t->last_y) >= MOVE_PX) {
		t->last_x = px;
		t->last_y = py;
		add(out, GESTURE_EV_MOVE, px, py, pos[2]);
	}
	if (!t->pressed && pos[2] <= t->baseline_z - PUSH_MM) {
		t->pressed = true;
		add(out, GESTURE_EV_DOWN, t->last_x, t->last_y, pos[2]);
	} else if (t->pressed && pos[2] >= t->baseline_z - RELEASE_MM) {
		t->pressed = false;
		add(out, GESTURE_EV_UP, t->last_x, t->last_y, pos[2]);
	}
	if (!t->pressed && pos[2] >= t->baseline_z - HOVER_MM)
		t->baseline_z = (7 * t->baseline_z + pos[2]) / 8;
}

const char *gesture_event_name(uint32_t type)
{
	switch (type) {
	case GESTURE_EV_ENTER: return "enter";
	case GESTURE_EV_MOVE: return "move";
	case GESTURE_EV_DOWN: return "down";
	case GESTURE_EV_UP: return "up";
	case GESTURE_EV_LEAVE: return "leave";
	}
	return "?";
}

void gesture_events_write(FILE *f, const struct gesture_events *e)
{
	uint32_t i;

	for (i = 0; i < e->n && i < GESTURE_EVENTS_MAX; i++)
		fprintf(f, "%u %s %d %d %d\n", e->frame,
			gesture_event_name(e->ev[i].type), e->ev[i].x,
			e->ev[i].y, e->ev[i].z_mm);
}
