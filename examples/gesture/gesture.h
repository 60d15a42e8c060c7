/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * gesture.h - what the parts of the gesture pipeline share.
 *
 * The PTask paper's gestural interface (SOSP 2011, section 2 and Table 2)
 * on recorded depth cameras:
 *
 *   catusb --> xform (one per camera) --> filter --> hidinput --> events
 *   K depth     each camera's pixels       bilateral   nearest cluster,
 *   images      to screen points           3 x 3 over  tracking, moves
 *   640x480x16                             the fused   and clicks
 *                                          cloud
 *
 * The fused cloud is the K camera clouds stacked (K x H x W points): the
 * filter's stencil stays within one camera's image, and hidinput sees
 * every camera's points of the hand at once.
 *
 * Five implementations share the stage code (stages_cpu.c, hidinput.c,
 * gesture_math.h and its kernels): host (CPU threads), handcode (one
 * process, CUDA, no needless copy), pipes (four processes joined by
 * pipes), modular (a function per stage, copying in and out), ptask (one
 * graph through libptask).  gesture_run.c drives any of them over one
 * catusb source and measures it.
 */
#ifndef EXAMPLES_GESTURE_H
#define EXAMPLES_GESTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gesture_math.h"

#define GESTURE_WIDTH		640
#define GESTURE_HEIGHT		480
#define GESTURE_FPS		30
#define GESTURE_CAMS_MIN	1	/* a recording; the generator makes 2+ */
#define GESTURE_CAMS_MAX	4
#define GESTURE_CAMS_DEFAULT	2
#define GESTURE_SIGMA_MM	12.0f	/* the filter's range sigma */

/* Kernel entry names (gesture_kernels.cu; ptaskd's host twins). */
#define GESTURE_XFORM_ENTRY	"gesture_xform"
#define GESTURE_FILTER_ENTRY	"gesture_filter"	/* stacked input */
#define GESTURE_BLOCK_X		32
#define GESTURE_BLOCK_Y		8

/* The PTX of gesture_kernels.cu, NUL-terminated (gesture_ptx.S). */
extern const char gesture_ptx[], gesture_ptx_end[];
extern const unsigned long gesture_ptx_len;

/* --- events: what hidinput emits ---------------------------------------- */

enum gesture_event_type {
	GESTURE_EV_ENTER = 1,	/* a hand came into the interaction volume */
	GESTURE_EV_MOVE = 2,	/* the pointer moved */
	GESTURE_EV_DOWN = 3,	/* a push: button pressed */
	GESTURE_EV_UP = 4,	/* the push ended: button released */
	GESTURE_EV_LEAVE = 5,	/* the hand left */
};

#define GESTURE_EVENTS_MAX	4	/* per frame */

/* @x, @y: the pointer in screen pixels (GESTURE_SCREEN_*_PX). */
struct gesture_event {
	uint32_t type;
	int32_t x, y;
	int32_t z_mm;	/* the hand's distance from the screen */
};

/**
 * struct gesture_events - hidinput's output for one frame
 * @frame: the frame's number
 * @n: events in @ev
 * @points: points in the hand's cluster (0: no hand)
 */
struct gesture_events {
	uint32_t frame;
	uint32_t n;
	uint32_t points;
	uint32_t reserved;
	struct gesture_event ev[GESTURE_EVENTS_MAX];
};

/* The screen the pointer lives on: its size and how mm map to pixels. */
#define GESTURE_SCREEN_W_PX	1920
#define GESTURE_SCREEN_H_PX	1080
#define GESTURE_SCREEN_PX_PER_MM 4	/* 480 x 270 mm */

const char *gesture_event_name(uint32_t type);
/* "frame type x y z" lines: the event stream the golden test compares. */
void gesture_events_write(FILE *f, const struct gesture_events *e);

/* --- the camera rig and the scene (scene.c) --------------------------------- */

/**
 * struct gesture_rig - the cameras of a recording
 * @ncams: cameras
 * @width, @height: every camera's image
 * @fps: frames per second
 * @cam: each camera's intrinsics and extrinsics
 */
struct gesture_rig {
	uint32_t ncams, width, height, fps;
	struct gesture_cam cam[GESTURE_CAMS_MAX];
};

/* @ncams cameras along the screen's top edge, looking at the user. */
void gesture_rig_default(struct gesture_rig *rig, uint32_t ncams);
size_t gesture_rig_frame_pixels(const struct gesture_rig *rig); /* all cams */

struct gesture_scene;
/*
 * The generator: a hand moving, pushing (clicking) and leaving, a head
 * and a wall behind it, sensor noise and dropouts; deterministic in
 * @seed and the frame number.  Return: 0, -ENOMEM.
 */
int gesture_scene_open(const struct gesture_rig *rig, uint64_t seed,
		       struct gesture_scene **out);
/* Frame @frame's depth images, camera k at @depth[k] (width x height). */
void gesture_scene_render(struct gesture_scene *s, uint32_t frame,
			  uint16_t *const depth[]);
void gesture_scene_close(struct gesture_scene *s);

/* --- recordings (recording.c) -------------------------------------------- */

/* Write all @n bytes of @p to @fd (retrying short writes and EINTR):
 * 0 or -errno.  Recordings and the pipes implementation use it. */
int gesture_write_all(int fd, const void *p, size_t n);

struct gesture_rec;
/*
 * Write @nframes frames of the generator to @path.  Return: 0 or -errno
 * (an error message printed).
 */
int gesture_rec_write(const char *path, const struct gesture_rig *rig,
		      uint64_t seed, uint32_t nframes);
/*
 * Open a recording and check its header.  Every error prints
 * "<path>: <what is wrong>" and returns -EINVAL (corrupt or truncated),
 * -ENOENT or another -errno from open/read.
 */
int gesture_rec_open(const char *path, struct gesture_rec **out);
const struct gesture_rig *gesture_rec_rig(const struct gesture_rec *r);
uint32_t gesture_rec_frames(const struct gesture_rec *r);
/*
 * Read frame @frame (< frames) into @depth[k].  A frame whose record is
 * cut short, whose header is wrong or whose checksum fails is -EINVAL
 * with a message naming the frame.  Any thread, one at a time.
 */
int gesture_rec_read(struct gesture_rec *r, uint32_t frame,
		     uint16_t *const depth[]);
void gesture_rec_close(struct gesture_rec *r);

/* CRC-32 (IEEE 802.3, the one zlib and PNG use) of @len bytes. */
uint32_t gesture_crc32(uint32_t crc, const void *data, size_t len);


/* --- the CPU stages (stages_cpu.c): rows [v0, v1) of one camera --------- */

void gesture_xform_rows(const struct gesture_cam *cam, const uint16_t *depth,
			struct gesture_point *cloud, int v0, int v1);
/* @img: one camera's cloud; @out: that camera's plane of the output. */
void gesture_filter_rows(const struct gesture_filter_shape *shape,
			 const struct gesture_point *img,
			 struct gesture_point *out, int v0, int v1);
void gesture_filter_shape_init(struct gesture_filter_shape *s,
			       const struct gesture_rig *rig);

/* --- hidinput (hidinput.c) ------------------------------------------------- */

/*
 * The tracker: which points are the hand, and what its motion means.
 * Decisions are taken on whole millimetres (the cluster's centroid,
 * rounded), so clouds that differ in their last bits give the same events.
 */
#define GESTURE_NEAR_MAX	32768
struct gesture_tracker {
	bool present, pressed;
	int32_t last_x, last_y;		/* the last pointer position sent */
	int32_t baseline_z;		/* the hovering hand's distance */
	/* scratch: the points in the interaction volume, in cloud order */
	uint32_t near[GESTURE_NEAR_MAX];
};

void gesture_tracker_init(struct gesture_tracker *t);
/* One frame's fused cloud (@npoints points, stacked) to its events. */
void gesture_tracker_step(struct gesture_tracker *t, uint32_t frame,
			  const struct gesture_point *cloud, size_t npoints,
			  struct gesture_events *out);
/*
 * The same over the fused cloud's @nplanes planes (1..GESTURE_CAMS_MAX)
 * of @plane points each, in separate buffers (the ptask graph filters
 * each camera on its own): the events of the planes stacked in order.
 */
void gesture_tracker_step_planes(struct gesture_tracker *t, uint32_t frame,
				 const struct gesture_point *const *planes,
				 uint32_t nplanes, size_t plane,
				 struct gesture_events *out);

enum gesture_hid_mode {
	GESTURE_HID_AUTO = 0,	/* uinput when /dev/uinput opens, else print */
	GESTURE_HID_UINPUT,
	GESTURE_HID_PRINT,
	GESTURE_HID_NONE,
};

/* Where events go: a uinput pointer device, or lines on a stream. */
struct gesture_hid {
	enum gesture_hid_mode mode;	/* what was opened: UINPUT, PRINT or NONE */
	int fd;
	FILE *out;
};

/* Return: 0, or -errno when UINPUT was asked for and cannot be had. */
int gesture_hid_open(struct gesture_hid *h, enum gesture_hid_mode mode,
		     FILE *print_to);
int gesture_hid_emit(struct gesture_hid *h, const struct gesture_events *e);
void gesture_hid_close(struct gesture_hid *h);
int gesture_hid_mode_parse(const char *s, enum gesture_hid_mode *m);

#endif /* EXAMPLES_GESTURE_H */
