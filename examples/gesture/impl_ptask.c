// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * impl_ptask.c - the ptask implementation: the whole pipeline is one
 * graph, and this program only feeds the cameras in and pulls events out.
 *
 *   depth_0 --> [xform_0 (GPU)] --cloud_0--> [filter_0 (GPU)] --filtered_0--\
 *    cam_0 -/                       shape_0 -/                              [hidinput (CPU)] --> events
 *   depth_1 --> [xform_1 (GPU)] --cloud_1--> [filter_1 (GPU)] --filtered_1--/
 *    cam_1 -/                       shape_1 -/
 *
 * xform_k runs gesture_xform with camera k's parameters on a sticky
 * by-value port; filter_k runs gesture_filter over camera k's cloud alone
 * (a shape of one camera, also sticky): the stencil never crosses from
 * one camera's image to another's, so the cameras' filters are
 * independent invocations that a device may run at once (the cpu
 * backend on two cores, a GPU on two streams), as the host
 * implementation runs a filter thread per camera.  On the GPU the
 * clouds never come back to the host (no client reads them).  hidinput
 * is a CPU ptask over the K filtered clouds (the fused cloud, one plane
 * per port), whose body is the tracker and the uinput/print output, run
 * by libptask's worker thread in this process.  On ptaskd's cpu backend
 * the GPU ptasks run ptaskd's host twins of the kernels
 * (examples/gesture/twin.c), which share gesture_math.h.
 *
 * The source writes each frame straight into mapped datablocks (one per
 * camera and slot) and pushes them; a slot is rewritten only after its
 * frame's events were pulled, when the graph is done with it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libptask/libptask.h"
#include "run.h"

#define WAIT_NS		(200 * 1000000LL)	/* re-check for a failed run */

struct ptask_impl {
	struct gesture_run run;
	struct ptask_ctx *ctx;
	uint32_t graph;
	uint32_t t_depth, t_cloud, t_cam, t_shape, t_events;
	uint32_t ch_depth[GESTURE_CAMS_MAX], ch_cam[GESTURE_CAMS_MAX];
	uint32_t ch_shape[GESTURE_CAMS_MAX], ch_events;
	struct ptask_db *depth[GESTURE_SLOTS][GESTURE_CAMS_MAX];
	struct ptask_db *cam[GESTURE_CAMS_MAX], *shape[GESTURE_CAMS_MAX];
	struct gesture_tracker tracker;
	uint32_t hid_frame;	/* the next frame hidinput sees (worker thread) */
};

static int chk(int err, const char *what)
{
	if (err < 0)
		fprintf(stderr, "gesture: ptask: %s: %s\n", what, strerror(-err));
	return err;
}

/* hidinput's body: the K filtered clouds in, one frame's events out. */
static int hid_body(struct ptask_cpu_call *call, void *arg)
{
	struct ptask_impl *p = arg;
	const uint32_t ncams = p->run.rig->ncams;
	const size_t plane = (size_t)p->run.rig->width * p->run.rig->height;
	const struct gesture_point *planes[GESTURE_CAMS_MAX];
	struct gesture_events *ev;
	uint32_t k;

	if (call->nports != ncams + 1)
		return -EINVAL;
	for (k = 0; k < ncams; k++) {
		if (!call->ports[k].data ||
		    call->ports[k].bytes < plane * sizeof(struct gesture_point))
			return -EINVAL;
		planes[k] = call->ports[k].data;
	}
	if (!call->ports[ncams].data || call->ports[ncams].bytes < sizeof(*ev))
		return -EINVAL;
	ev = call->ports[ncams].data;
	gesture_tracker_step_planes(&p->tracker, p->hid_frame++, planes, ncams,
				    plane, ev);
	return gesture_hid_emit(&p->run.hid, ev);
}

/* The GPU ptasks of camera @k: xform_k, filter_k, their channels. */
static int camera_open(struct ptask_impl *p, uint32_t k, uint32_t *filtered_port)
{
	const struct gesture_rig *rig = p->run.rig;
	const uint32_t grid[3] = { (rig->width + GESTURE_BLOCK_X - 1) / GESTURE_BLOCK_X,
				   (rig->height + GESTURE_BLOCK_Y - 1) / GESTURE_BLOCK_Y, 1 };
	const uint32_t block[3] = { GESTURE_BLOCK_X, GESTURE_BLOCK_Y, 1 };
	uint32_t xf, in, cloud, cam, flt, fin, shape, ch;
	char name[32];
	int err;

	snprintf(name, sizeof(name), "xform_%u", k);
	err = chk(ptask_gpu_ptask_open(p->ctx, p->graph, name, gesture_ptx,
				       gesture_ptx_len, GESTURE_XFORM_ENTRY, 3, &xf),
		  "xform ptask");
	snprintf(name, sizeof(name), "xform_%u_depth", k);
	err = err ?: chk(ptask_port_open(p->ctx, xf, name, PTASK_PORT_INPUT, 0,
					 p->t_depth, 0, 0, &in), "xform depth port");
	snprintf(name, sizeof(name), "xform_%u_cloud", k);
	err = err ?: chk(ptask_port_open(p->ctx, xf, name, PTASK_PORT_OUTPUT, 0,
					 p->t_cloud, 1, 0, &cloud), "xform cloud port");
	snprintf(name, sizeof(name), "xform_%u_cam", k);
	err = err ?: chk(ptask_port_open(p->ctx, xf, name, PTASK_PORT_STICKY, 0,
					 p->t_cam, 2, 0, &cam), "xform camera port");
	err = err ?: chk(ptask_set_geometry(p->ctx, xf, grid, block, 0), "xform geometry");
	snprintf(name, sizeof(name), "depth_%u", k);
	err = err ?: chk(ptask_channel_open(p->ctx, p->graph, name, 0, in, GESTURE_SLOTS,
					    p->t_depth, &p->ch_depth[k]), "depth channel");
	snprintf(name, sizeof(name), "cam_%u", k);
	err = err ?: chk(ptask_channel_open(p->ctx, p->graph, name, 0, cam, 1,
					    p->t_cam, &p->ch_cam[k]), "camera channel");

	/* the filter of this camera alone: gesture_filter, a one-camera shape */
	snprintf(name, sizeof(name), "filter_%u", k);
	err = err ?: chk(ptask_gpu_ptask_open(p->ctx, p->graph, name, gesture_ptx,
					      gesture_ptx_len, GESTURE_FILTER_ENTRY, 3,
					      &flt), "filter ptask");
	snprintf(name, sizeof(name), "filter_%u_in", k);
	err = err ?: chk(ptask_port_open(p->ctx, flt, name, PTASK_PORT_INPUT, 0,
					 p->t_cloud, 0, 0, &fin), "filter input port");
	snprintf(name, sizeof(name), "filter_%u_out", k);
	err = err ?: chk(ptask_port_open(p->ctx, flt, name, PTASK_PORT_OUTPUT, 0,
					 p->t_cloud, 1, 0, filtered_port),
			 "filter output port");
	snprintf(name, sizeof(name), "filter_%u_shape", k);
	err = err ?: chk(ptask_port_open(p->ctx, flt, name, PTASK_PORT_STICKY, 0,
					 p->t_shape, 2, 0, &shape), "filter shape port");
	err = err ?: chk(ptask_set_geometry(p->ctx, flt, grid, block, 0), "filter geometry");
	snprintf(name, sizeof(name), "cloud_%u", k);
	err = err ?: chk(ptask_channel_open(p->ctx, p->graph, name, cloud, fin, 2,
					    p->t_cloud, &ch), "cloud channel");
	snprintf(name, sizeof(name), "shape_%u", k);
	return err ?: chk(ptask_channel_open(p->ctx, p->graph, name, 0, shape, 1,
					     p->t_shape, &p->ch_shape[k]), "shape channel");
}

static int templates_open(struct ptask_impl *p)
{
	const struct gesture_rig *rig = p->run.rig;
	const uint32_t plane[3] = { rig->width, rig->height, 1 };
	const uint32_t one[3] = { 1, 1, 1 };
	struct ptask_ctx *c = p->ctx;
	uint32_t g = p->graph;
	int err;

	err = chk(ptask_template_open(c, g, "depth", PTASK_TEMPLATE_ARRAY, PTASK_BIND_GLOBAL,
				      sizeof(uint16_t), plane, &p->t_depth), "template depth");
	err = err ?: chk(ptask_template_open(c, g, "cloud", PTASK_TEMPLATE_ARRAY, PTASK_BIND_GLOBAL,
					     sizeof(struct gesture_point), plane, &p->t_cloud),
			 "template cloud");
	err = err ?: chk(ptask_template_open(c, g, "cam", PTASK_TEMPLATE_ARRAY, PTASK_BIND_PARAM,
					     sizeof(struct gesture_cam), one, &p->t_cam),
			 "template cam");
	err = err ?: chk(ptask_template_open(c, g, "shape", PTASK_TEMPLATE_ARRAY, PTASK_BIND_PARAM,
					     sizeof(struct gesture_filter_shape), one, &p->t_shape),
			 "template shape");
	return err ?: chk(ptask_template_open(c, g, "events", PTASK_TEMPLATE_ARRAY,
					      PTASK_BIND_GLOBAL, sizeof(struct gesture_events),
					      one, &p->t_events), "template events");
}

/* hidinput over the filters' clouds, and its channels. */
static int hidinput_open(struct ptask_impl *p, const uint32_t *filtered_ports)
{
	const uint32_t n = p->run.rig->ncams;
	uint32_t hid, in, out, ch, k;
	char name[32];
	int err;

	err = chk(ptask_cpu_ptask_open(p->ctx, p->graph, "hidinput", n + 1, hid_body,
				       p, &hid), "hidinput ptask");
	for (k = 0; k < n && !err; k++) {
		snprintf(name, sizeof(name), "hid_in_%u", k);
		err = chk(ptask_port_open(p->ctx, hid, name, PTASK_PORT_INPUT, 0,
					  p->t_cloud, k, 0, &in), "hidinput input port");
		snprintf(name, sizeof(name), "filtered_%u", k);
		err = err ?: chk(ptask_channel_open(p->ctx, p->graph, name,
						    filtered_ports[k], in, 2,
						    p->t_cloud, &ch), "filtered channel");
	}
	err = err ?: chk(ptask_port_open(p->ctx, hid, "hid_out", PTASK_PORT_OUTPUT, 0,
					 p->t_events, n, 0, &out), "hidinput output port");
	return err ?: chk(ptask_channel_open(p->ctx, p->graph, "events", out, 0,
					     GESTURE_SLOTS, p->t_events, &p->ch_events),
			  "events channel");
}

/* A datablock of template @tmpl holding @bytes of @src, mapped at *@map. */
static int db_make(struct ptask_impl *p, uint32_t tmpl, const void *src,
		   size_t bytes, struct ptask_db **out, void **map)
{
	void *m;
	int err;

	err = chk(ptask_datablock_create(p->ctx, tmpl, 0, 1, out), "datablock");
	if (err)
		return err;
	err = chk(ptask_datablock_map(p->ctx, *out, &m), "datablock map");
	if (err) {
		ptask_datablock_release(p->ctx, *out);
		*out = NULL;
		return err;
	}
	if (src)
		memcpy(m, src, bytes);
	if (map)
		*map = m;
	return 0;
}

/* Push, waking now and then to notice a run that failed elsewhere. */
static int push(struct ptask_impl *p, uint32_t ch, struct ptask_db *db)
{
	int err;

	do {
		err = ptask_push(p->ctx, ch, db, -1, WAIT_NS);
	} while ((err == -ETIMEDOUT || err == -EAGAIN) && !p->run.stop);
	return chk(err, "push");
}

static int graph_open(struct ptask_impl *p)
{
	const struct gesture_rig *rig = p->run.rig;
	struct gesture_filter_shape shape;
	uint32_t filtered_ports[GESTURE_CAMS_MAX], k, s;
	void *map;
	int err;

	err = chk(ptask_graph_open(p->ctx, "", PTASK_GRAPH_CREATE, 0600, &p->graph),
		  "graph");
	err = err ?: templates_open(p);
	for (k = 0; k < rig->ncams && !err; k++)
		err = camera_open(p, k, &filtered_ports[k]);
	err = err ?: hidinput_open(p, filtered_ports);
	err = err ?: chk(ptask_graph_run(p->ctx, p->graph), "graph run");
	/* each filter sees one camera's plane: a shape of one camera */
	gesture_filter_shape_init(&shape, rig);
	shape.ncams = 1;
	for (k = 0; k < rig->ncams && !err; k++) {
		err = db_make(p, p->t_cam, &rig->cam[k], sizeof(rig->cam[k]), &p->cam[k], NULL);
		err = err ?: push(p, p->ch_cam[k], p->cam[k]);
		err = err ?: db_make(p, p->t_shape, &shape, sizeof(shape), &p->shape[k], NULL);
		err = err ?: push(p, p->ch_shape[k], p->shape[k]);
		for (s = 0; s < GESTURE_SLOTS && !err; s++) {
			err = db_make(p, p->t_depth, NULL, 0, &p->depth[s][k], &map);
			p->run.depth[s][k] = map;
		}
	}
	return err;
}

static void graph_close(struct ptask_impl *p)
{
	uint32_t k, s;

	for (k = 0; k < GESTURE_CAMS_MAX; k++) {
		for (s = 0; s < GESTURE_SLOTS; s++)
			if (p->depth[s][k])
				ptask_datablock_release(p->ctx, p->depth[s][k]);
		if (p->cam[k])
			ptask_datablock_release(p->ctx, p->cam[k]);
		if (p->shape[k])
			ptask_datablock_release(p->ctx, p->shape[k]);
	}
	if (p->graph) {
		ptask_graph_terminate(p->ctx, p->graph);
		ptask_graph_close(p->ctx, p->graph);
	}
}

/* On the source thread: slot i%S holds frame i; into the graph with it. */
static int filled(struct gesture_run *run, uint32_t i)
{
	struct ptask_impl *p = run->impl;
	uint32_t k;
	int err = 0;

	for (k = 0; k < run->rig->ncams && !err; k++)
		err = push(p, p->ch_depth[k], p->depth[gesture_slot(i)][k]);
	return err;
}

/* The only host code of the pipeline itself: pull each frame's events. */
static int pull_loop(struct ptask_impl *p)
{
	struct gesture_events ev;
	struct ptask_db *db;
	uint32_t i;
	void *m;
	int err = 0;

	for (i = 0; i < p->run.cfg->frames && !err; i++) {
		do {
			err = ptask_pull(p->ctx, p->ch_events, WAIT_NS, &db);
		} while ((err == -ETIMEDOUT || err == -EAGAIN) && !p->run.stop);
		if (chk(err, "pull events"))
			break;
		err = chk(ptask_datablock_map(p->ctx, db, &m), "map events");
		if (!err && ptask_db_bytes(db) < sizeof(ev))
			err = -EPROTO;
		if (!err)
			memcpy(&ev, m, sizeof(ev));
		ptask_datablock_release(p->ctx, db);
		if (!err && ev.frame != i) {
			fprintf(stderr, "gesture: ptask: events of frame %u, expected %u\n",
				ev.frame, i);
			err = -EPROTO;
		}
		err = err ?: gesture_run_done(&p->run, &ev, 0, true);
	}
	return err;
}

int gesture_impl_ptask(const struct gesture_cfg *cfg, struct gesture_result *r)
{
	struct ptask_impl *p;
	int err;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	err = gesture_run_init(&p->run, cfg);
	if (err)
		goto err_free;
	p->run.impl = p;
	p->run.filled = filled;
	gesture_tracker_init(&p->tracker);
	err = ptask_ctx_open(cfg->socket ? PTASK_MODE_USER : PTASK_MODE_AUTO,
			     cfg->socket, &p->ctx);
	if (err) {
		fprintf(stderr, "gesture: ptask: no ptaskd to talk to (%s%s): %s\n",
			cfg->socket ? "socket " : "the default socket or /dev/ptask",
			cfg->socket ? cfg->socket : "", strerror(-err));
		err = -ENOTCONN;	/* not -ENODEV: that would read as "no GPU, skip" */
		goto err_fini;
	}
	/* ptaskd's work is this implementation's: count its CPU and memory */
	if (cfg->daemon_pid > 0)
		gesture_stats_track(p->run.stats, cfg->daemon_pid);
	err = graph_open(p);
	err = err ?: gesture_run_start(&p->run);
	err = err ?: pull_loop(p);
	if (err)
		gesture_run_fail(&p->run, err);
	/* joins the source (its pushes give up within WAIT_NS of a failure) */
	err = gesture_run_finish(&p->run, r) ?: err;
	graph_close(p);
	ptask_ctx_close(p->ctx);
err_fini:
	gesture_run_fini(&p->run);
err_free:
	free(p);
	return err;
}
