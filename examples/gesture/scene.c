// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * scene.c - the generator behind catusb: what depth cameras along the
 * top of a screen would see of a user's hand.
 *
 * The scene, in screen coordinates (mm; z towards the user):
 *   a wall at z = 1500, a head (sphere r 110) at (0, 80, 900), and a hand
 *   (sphere r 45) about 380 mm from the screen that sweeps left and right
 *   (period 150 frames) and up and down, pushes towards the screen twice
 *   in every 150 frames (frames 12-25 and 80-93 of the cycle: a click
 *   each) and is pulled back to the body for frames 40-51 (it leaves the
 *   interaction volume and comes back).
 * The sensor: depth along the camera's axis in whole mm; noise growing
 * with the square of the depth (about 1.4 mm at 0.4 m, 6.5 at 1.5 m, as
 * structured-light sensors do); 1% of pixels dropped at random (0); a
 * 96 x 72 block dropped now and then (every 45th frame of a camera);
 * nothing beyond 4 m.  The hand's pixels are sensed afresh every frame;
 * the static background's noise and dropouts come from one of
 * BG_VARIANTS images sensed ahead (a hash of the frame picks it).
 *
 * Everything is a function of the seed and the frame number, and uses
 * only IEEE basic operations (its own sine, no libm), so a recording made
 * on one machine is the same on another whatever its libm.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gesture.h"

#define WALL_Z		1500.0
#define HEAD_X		0.0
#define HEAD_Y		80.0
#define HEAD_Z		900.0
#define HEAD_R		110.0
#define HAND_R		45.0
#define HAND_Z		380.0
#define HAND_AWAY_Z	1100.0
#define PUSH_MM		90.0
#define CYCLE		150
#define MAX_DEPTH_MM	4000.0
#define DROP_BLOCK_W	96
#define DROP_BLOCK_H	72
#define PI		3.14159265358979323846
/*
 * Sensed backgrounds made ahead, per camera: a frame starts as a copy of
 * one (picked by a hash of the frame) and only the hand's box is sensed
 * afresh.  Sensing every pixel of every frame cost about 10 ms a frame,
 * which capped unconstrained runs at 100 fps, below what the GPU
 * pipelines do; a copy costs a tenth of a millisecond.
 */
#define BG_VARIANTS	8

struct gesture_scene {
	struct gesture_rig rig;
	uint64_t seed;
	float *bg[GESTURE_CAMS_MAX];	/* wall and head, per pixel, mm */
	uint16_t *sensed[GESTURE_CAMS_MAX];	/* BG_VARIANTS sensed images of bg */
};

/* sin(x) from basic operations: reduce to [-pi, pi], then a Taylor
 * series to x^15 (error under 1e-9 there). */
static double det_sin(double x)
{
	double x2, term, sum;
	int k;

	x -= 2.0 * PI * (double)(long)(x / (2.0 * PI));
	if (x > PI)
		x -= 2.0 * PI;
	else if (x < -PI)
		x += 2.0 * PI;
	x2 = x * x;
	term = x;
	sum = x;
	for (k = 1; k <= 7; k++) {
		term = -term * x2 / (double)((2 * k) * (2 * k + 1));
		sum += term;
	}
	return sum;
}

/*
 * sqrt from basic operations: a start from the exponent bits, then
 * Newton's steps, which from the first one on approach from above, until
 * they stop decreasing.
 */
static double det_sqrt(double v)
{
	uint64_t bits;
	double r;
	int i;

	if (v <= 0.0)
		return 0.0;
	memcpy(&bits, &v, sizeof(bits));
	bits = (bits >> 1) + (0x3ff0000000000000ull >> 1);
	memcpy(&r, &bits, sizeof(r));
	r = 0.5 * (r + v / r);
	for (i = 0; i < 8; i++) {
		double n = 0.5 * (r + v / r);

		if (n >= r)
			break;
		r = n;
	}
	return r;
}

static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void gesture_rig_default(struct gesture_rig *rig, uint32_t ncams)
{
	const double target[3] = { 0.0, -20.0, 500.0 };
	uint32_t k;

	memset(rig, 0, sizeof(*rig));
	rig->ncams = ncams;
	rig->width = GESTURE_WIDTH;
	rig->height = GESTURE_HEIGHT;
	rig->fps = GESTURE_FPS;
	for (k = 0; k < ncams; k++) {
		struct gesture_cam *c = &rig->cam[k];
		double pos[3] = { ncams > 1 ? -260.0 + 520.0 * k / (ncams - 1) : 0.0,
				  150.0, 20.0 };
		double f[3], r[3], d[3], n;
		int i;

		for (i = 0; i < 3; i++)
			f[i] = target[i] - pos[i];
		n = det_sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
		for (i = 0; i < 3; i++)
			f[i] /= n;
		/* right = f x up (up = +y); down = f x right */
		r[0] = -f[2];
		r[1] = 0.0;
		r[2] = f[0];
		n = det_sqrt(r[0] * r[0] + r[2] * r[2]);
		r[0] /= n;
		r[2] /= n;
		d[0] = f[1] * r[2] - f[2] * r[1];
		d[1] = f[2] * r[0] - f[0] * r[2];
		d[2] = f[0] * r[1] - f[1] * r[0];
		c->fx = c->fy = 525.0f;
		c->cx = 319.5f;
		c->cy = 239.5f;
		for (i = 0; i < 3; i++) {
			c->r[i * 3 + 0] = (float)r[i];
			c->r[i * 3 + 1] = (float)d[i];
			c->r[i * 3 + 2] = (float)f[i];
			c->t[i] = (float)pos[i];
		}
		c->width = GESTURE_WIDTH;
		c->height = GESTURE_HEIGHT;
		c->zmin_mm = 200.0f;
		c->zmax_mm = 3500.0f;
	}
}

size_t gesture_rig_frame_pixels(const struct gesture_rig *rig)
{
	return (size_t)rig->ncams * rig->width * rig->height;
}

/* The ray of pixel (u, v): origin the camera's centre, direction with a
 * camera-z of 1, so the distance along it is the depth the camera reads. */
static void pixel_ray(const struct gesture_cam *c, double u, double v,
		      double dir[3])
{
	const double xn = (u - c->cx) / c->fx, yn = (v - c->cy) / c->fy;
	int i;

	for (i = 0; i < 3; i++)
		dir[i] = c->r[i * 3] * xn + c->r[i * 3 + 1] * yn + c->r[i * 3 + 2];
}

/* Depth where the ray first meets the sphere, or @none. */
static double ray_sphere(const struct gesture_cam *c, const double dir[3],
			 const double ctr[3], double rad, double none)
{
	double oc[3], a = 0, b = 0, cc = 0, disc, t;
	int i;

	for (i = 0; i < 3; i++) {
		oc[i] = c->t[i] - ctr[i];
		a += dir[i] * dir[i];
		b += 2.0 * oc[i] * dir[i];
		cc += oc[i] * oc[i];
	}
	cc -= rad * rad;
	disc = b * b - 4.0 * a * cc;
	if (disc < 0.0)
		return none;
	t = (-b - det_sqrt(disc)) / (2.0 * a);
	return t > 0.0 && t < none ? t : none;
}

/* The hand's centre in frame @frame (see the top of the file). */
static void hand_at(uint32_t frame, double ctr[3])
{
	const uint32_t p = frame % CYCLE;
	double dip = 0.0;

	ctr[0] = 150.0 * det_sin(2.0 * PI * frame / CYCLE);
	ctr[1] = 60.0 * det_sin(2.0 * PI * frame / 97.0) - 10.0;
	ctr[2] = HAND_Z;
	if ((p >= 12 && p < 26) || (p >= 80 && p < 94)) {
		const uint32_t q = p - (p < 26 ? 12 : 80);	/* 0..13 */

		dip = PUSH_MM * (q < 7 ? q / 7.0 : (14 - q) / 7.0);
	}
	ctr[2] -= dip;
	if (p >= 40 && p < 52)
		ctr[2] = HAND_AWAY_Z;
}

/* Wall and head: the same in every frame. */
static void render_background(const struct gesture_cam *c, float *bg)
{
	const double head[3] = { HEAD_X, HEAD_Y, HEAD_Z };
	int u, v;

	for (v = 0; v < c->height; v++) {
		for (u = 0; u < c->width; u++) {
			double dir[3], d = MAX_DEPTH_MM * 2.0;

			pixel_ray(c, u, v, dir);
			if (dir[2] > 0.0)
				d = (WALL_Z - c->t[2]) / dir[2];
			d = ray_sphere(c, dir, head, HEAD_R, d);
			bg[v * c->width + u] = (float)d;
		}
	}
}

static void sense_background(struct gesture_scene *s, uint32_t k);

int gesture_scene_open(const struct gesture_rig *rig, uint64_t seed,
		       struct gesture_scene **out)
{
	const size_t plane = (size_t)rig->width * rig->height;
	struct gesture_scene *s;
	uint32_t k;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->rig = *rig;
	s->seed = seed;
	for (k = 0; k < rig->ncams; k++) {
		s->bg[k] = malloc(plane * sizeof(float));
		if (!s->bg[k]) {
			gesture_scene_close(s);
			return -ENOMEM;
		}
		render_background(&rig->cam[k], s->bg[k]);
		s->sensed[k] = malloc(BG_VARIANTS * plane * sizeof(uint16_t));
		if (!s->sensed[k]) {
			gesture_scene_close(s);
			return -ENOMEM;
		}
		sense_background(s, k);
	}
	*out = s;
	return 0;
}

void gesture_scene_close(struct gesture_scene *s)
{
	uint32_t k;

	if (!s)
		return;
	for (k = 0; k < GESTURE_CAMS_MAX; k++) {
		free(s->bg[k]);
		free(s->sensed[k]);
	}
	free(s);
}

/*
 * The hand's bounding box in camera @c's image: its centre projected,
 * plus its radius there and a margin.  Empty (x0 > x1) when it is behind.
 */
static void hand_box(const struct gesture_cam *c, const double ctr[3],
		     int box[4])
{
	double p[3], u, v, rad;
	int i;

	for (i = 0; i < 3; i++)	/* camera coordinates: R^T (ctr - t) */
		p[i] = c->r[0 + i] * (ctr[0] - c->t[0]) +
		       c->r[3 + i] * (ctr[1] - c->t[1]) +
		       c->r[6 + i] * (ctr[2] - c->t[2]);
	box[0] = box[1] = 1;
	box[2] = box[3] = 0;
	if (p[2] <= HAND_R)
		return;
	u = c->fx * p[0] / p[2] + c->cx;
	v = c->fy * p[1] / p[2] + c->cy;
	rad = c->fx * HAND_R / (p[2] - HAND_R) + 2.0;
	box[0] = (int)(u - rad) < 0 ? 0 : (int)(u - rad);
	box[1] = (int)(v - rad) < 0 ? 0 : (int)(v - rad);
	box[2] = (int)(u + rad) >= c->width ? c->width - 1 : (int)(u + rad);
	box[3] = (int)(v + rad) >= c->height ? c->height - 1 : (int)(v + rad);
}

/* The sensor's reading of true depth @d at pixel @idx (noise, drops). */
static uint16_t sense(double d, uint64_t h)
{
	const double n1 = (double)(h & 0xfffff) / 1048576.0;
	const double n2 = (double)((h >> 20) & 0xfffff) / 1048576.0;
	const double drop = (double)(h >> 40) / 16777216.0;
	const double sigma = 1.0 + d * d * 2.45e-6;
	double mm;

	if (drop < 0.01 || d >= MAX_DEPTH_MM)
		return 0;
	/* n1 + n2 - 1 is triangular on (-1, 1), sigma 1/sqrt(6) */
	mm = d + (n1 + n2 - 1.0) * sigma * 2.449489742783178 + 0.5;
	return mm < 1.0 ? 1 : mm > 65535.0 ? 65535 : (uint16_t)mm;
}

/* Camera @k's sensed backgrounds: noise and dropouts, BG_VARIANTS ways. */
static void sense_background(struct gesture_scene *s, uint32_t k)
{
	const size_t plane = (size_t)s->rig.width * s->rig.height;
	uint32_t n;
	size_t i;

	for (n = 0; n < BG_VARIANTS; n++) {
		const uint64_t seed = mix64(s->seed ^ mix64(((uint64_t)n << 40) | k));
		uint16_t *img = s->sensed[k] + n * plane;

		for (i = 0; i < plane; i++)
			img[i] = sense(s->bg[k][i], mix64(seed + i));
	}
}

static void render_cam(struct gesture_scene *s, uint32_t k, uint32_t frame,
		       const double hand[3], uint16_t *depth)
{
	const struct gesture_cam *c = &s->rig.cam[k];
	const size_t plane = (size_t)c->width * c->height;
	const uint64_t fk = mix64(s->seed ^ mix64(((uint64_t)frame << 8) | k));
	const float *bg = s->bg[k];
	int box[4], u, v;

	memcpy(depth, s->sensed[k] + (fk >> 61) % BG_VARIANTS * plane,
	       plane * sizeof(*depth));
	hand_box(c, hand, box);
	for (v = box[1]; v <= box[3]; v++) {
		for (u = box[0]; u <= box[2]; u++) {
			const size_t i = (size_t)v * c->width + u;
			double dir[3], d;

			pixel_ray(c, u, v, dir);
			d = ray_sphere(c, dir, hand, HAND_R, bg[i]);
			depth[i] = sense(d, mix64(fk + i));
		}
	}
	if ((frame * 7 + k * 13) % 45 == 0) {	/* a block dropout */
		const int bx = (int)(fk % (uint64_t)(c->width - DROP_BLOCK_W));
		const int by = (int)((fk >> 32) % (uint64_t)(c->height - DROP_BLOCK_H));

		for (v = by; v < by + DROP_BLOCK_H; v++)
			memset(depth + (size_t)v * c->width + bx, 0,
			       DROP_BLOCK_W * sizeof(*depth));
	}
}

void gesture_scene_render(struct gesture_scene *s, uint32_t frame,
			  uint16_t *const depth[])
{
	double hand[3];
	uint32_t k;

	hand_at(frame, hand);
	for (k = 0; k < s->rig.ncams; k++)
		render_cam(s, k, frame, hand, depth[k]);
}
