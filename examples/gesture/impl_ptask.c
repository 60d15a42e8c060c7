// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * impl_ptask.c - the ptask implementation: the whole pipeline is one
 * graph, and this program only feeds the cameras in and pulls events out.
 *
 *   depth_0 --> [xform_0 (GPU)] --cloud_0--\
 *    cam_0 -/                               [filter (GPU)] --fused--> [hidinput (CPU)] --> events
 *   depth_1 --> [xform_1 (GPU)] --cloud_1--/     shape -/
 *    cam_1 -/
 *
 * xform_k runs gesture_xform with camera k's parameters on a sticky
 * by-value port; filter runs gesture_filter<K> over the K clouds (on the
 * GPU the clouds never come back to the host: no client reads them);
 * hidinput is a CPU ptask whose body is the tracker and the uinput/print
 * output, run by libptask's worker thread in this process.  On ptaskd's
 * cpu backend the GPU ptasks run ptaskd's host twins of the kernels
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
	uint32_t t_depth, t_cloud, t_fused, t_cam, t_shape, t_events;
	uint32_t ch_depth[GESTURE_CAMS_MAX], ch_cam[GESTURE_CAMS_MAX];
	uint32_t ch_shape, ch_events;
	struct ptask_db *depth[GESTURE_SLOTS][GESTURE_CAMS_MAX];
	struct ptask_db *cam[GESTURE_CAMS_MAX], *shape;
	struct gesture_tracker tracker;
	uint32_t hid_frame;	/* the next frame hidinput sees (worker thread) */
};

static int chk(int err, const char *what)
{
	if (err < 0)
		fprintf(stderr, "gesture: ptask: %s: %s\n", what, strerror(-err));
	return err;
}

/* hidinput's body: one fused cloud in, one frame's events out. */
static int hid_body(struct ptask_cpu_call *call, void *arg)
{
	struct ptask_impl *p = arg;
	const size_t points = gesture_rig_frame_pixels(p->run.rig);
	struct gesture_events *ev;

	if (call->nports != 2 || !call->ports[0].data || !call->ports[1].data ||
	    call->ports[0].bytes < points * sizeof(struct gesture_point) ||
	    call->ports[1].bytes < sizeof(*ev))
		return -EINVAL;
	ev = call->ports[1].data;
	gesture_tracker_step(&p->tracker, p->hid_frame++, call->ports[0].data,
			     points, ev);
	return gesture_hid_emit(&p->run.hid, ev);
}

static int xform_open(struct ptask_impl *p, uint32_t k, uint32_t *cloud_port)
{
	const struct gesture_rig *rig = p->run.rig;
	const uint32_t grid[3] = { (rig->width + GESTURE_BLOCK_X - 1) / GESTURE_BLOCK_X,
				   (rig->height + GESTURE_BLOCK_Y - 1) / GESTURE_BLOCK_Y, 1 };
	const uint32_t block[3] = { GESTURE_BLOCK_X, GESTURE_BLOCK_Y, 1 };
	uint32_t pt, in, cam;
	char name[32];
	int err;

	snprintf(name, sizeof(name), "xform_%u", k);
	err = chk(ptask_gpu_ptask_open(p->ctx, p->graph, name, gesture_ptx,
				       gesture_ptx_len, GESTURE_XFORM_ENTRY, 3, &pt),
		  "xform ptask");
	snprintf(name, sizeof(name), "xform_%u_depth", k);
	err = err ?: chk(ptask_port_open(p->ctx, pt, name, PTASK_PORT_INPUT, 0,
					 p->t_depth, 0, 0, &in), "xform depth port");
	snprintf(name, sizeof(name), "xform_%u_cloud", k);
	err = err ?: chk(ptask_port_open(p->ctx, pt, name, PTASK_PORT_OUTPUT, 0,
					 p->t_cloud, 1, 0, cloud_port), "xform cloud port");
	snprintf(name, sizeof(name), "xform_%u_cam", k);
	err = err ?: chk(ptask_port_open(p->ctx, pt, name, PTASK_PORT_STICKY, 0,
					 p->t_cam, 2, 0, &cam), "xform camera port");
	err = err ?: chk(ptask_set_geometry(p->ctx, pt, grid, block, 0), "xform geometry");
	snprintf(name, sizeof(name), "depth_%u", k);
	err = err ?: chk(ptask_channel_open(p->ctx, p->graph, name, 0, in, GESTURE_SLOTS,
					    p->t_depth, &p->ch_depth[k]), "depth channel");
	snprintf(name, sizeof(name), "cam_%u", k);
	return err ?: chk(ptask_channel_open(p->ctx, p->graph, name, 0, cam, 1,
					     p->t_cam, &p->ch_cam[k]), "camera channel");
}

static int templates_open(struct ptask_impl *p)
{
	const struct gesture_rig *rig = p->run.rig;
	const uint32_t plane[3] = { rig->width, rig->height, 1 };
	const uint32_t stack[3] = { rig->width, rig->height, rig->ncams };
	const uint32_t one[3] = { 1, 1, 1 };
	struct ptask_ctx *c = p->ctx;
	uint32_t g = p->graph;
	int err;

	err = chk(ptask_template_open(c, g, "depth", PTASK_TEMPLATE_ARRAY, PTASK_BIND_GLOBAL,
				      sizeof(uint16_t), plane, &p->t_depth), "template depth");
	err = err ?: chk(ptask_template_open(c, g, "cloud", PTASK_TEMPLATE_ARRAY, PTASK_BIND_GLOBAL,
					     sizeof(struct gesture_point), plane, &p->t_cloud),
			 "template cloud");
	err = err ?: chk(ptask_template_open(c, g, "fused", PTASK_TEMPLATE_ARRAY, PTASK_BIND_GLOBAL,
					     sizeof(struct gesture_point), stack, &p->t_fused),
			 "template fused");
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

/* filter over the xforms' clouds, hidinput after it, the two channels. */
static int tail_open(struct ptask_impl *p, const uint32_t *cloud_ports)
{
	const struct gesture_rig *rig = p->run.rig;
	const uint32_t n = rig->ncams;
	const uint32_t grid[3] = { (rig->width + GESTURE_BLOCK_X - 1) / GESTURE_BLOCK_X,
				   (rig->height + GESTURE_BLOCK_Y - 1) / GESTURE_BLOCK_Y, n };
	const uint32_t block[3] = { GESTURE_BLOCK_X, GESTURE_BLOCK_Y, 1 };
	/* one camera: its cloud is already the stack of one */
	const char *entry = n == 1 ? GESTURE_FILTER_ENTRY : gesture_filter_entry((int)n);
	uint32_t flt, in, out, shape, hid, hin, hout, ch, k;
	char name[32];
	int err;

	err = chk(ptask_gpu_ptask_open(p->ctx, p->graph, "filter", gesture_ptx,
				       gesture_ptx_len, entry, n + 2, &flt), "filter ptask");
	for (k = 0; k < n && !err; k++) {
		snprintf(name, sizeof(name), "filter_in_%u", k);
		err = chk(ptask_port_open(p->ctx, flt, name, PTASK_PORT_INPUT, 0,
					  p->t_cloud, k, 0, &in), "filter input port");
		snprintf(name, sizeof(name), "cloud_%u", k);
		err = err ?: chk(ptask_channel_open(p->ctx, p->graph, name, cloud_ports[k],
						    in, 2, p->t_cloud, &ch), "cloud channel");
	}
	err = err ?: chk(ptask_port_open(p->ctx, flt, "filter_out", PTASK_PORT_OUTPUT, 0,
					 p->t_fused, n, 0, &out), "filter output port");
	err = err ?: chk(ptask_port_open(p->ctx, flt, "filter_shape", PTASK_PORT_STICKY, 0,
					 p->t_shape, n + 1, 0, &shape), "filter shape port");
	err = err ?: chk(ptask_set_geometry(p->ctx, flt, grid, block, 0), "filter geometry");
	err = err ?: chk(ptask_channel_open(p->ctx, p->graph, "shape", 0, shape, 1,
					    p->t_shape, &p->ch_shape), "shape channel");
	err = err ?: chk(ptask_cpu_ptask_open(p->ctx, p->graph, "hidinput", 2, hid_body,
					      p, &hid), "hidinput ptask");
	err = err ?: chk(ptask_port_open(p->ctx, hid, "hid_in", PTASK_PORT_INPUT, 0,
					 p->t_fused, 0, 0, &hin), "hidinput input port");
	err = err ?: chk(ptask_port_open(p->ctx, hid, "hid_out", PTASK_PORT_OUTPUT, 0,
					 p->t_events, 1, 0, &hout), "hidinput output port");
	err = err ?: chk(ptask_channel_open(p->ctx, p->graph, "fused", out, hin, 2,
					    p->t_fused, &ch), "fused channel");
	return err ?: chk(ptask_channel_open(p->ctx, p->graph, "events", hout, 0,
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
	uint32_t cloud_ports[GESTURE_CAMS_MAX], k, s;
	void *map;
	int err;

	err = chk(ptask_graph_open(p->ctx, "", PTASK_GRAPH_CREATE, 0600, &p->graph),
		  "graph");
	err = err ?: templates_open(p);
	for (k = 0; k < rig->ncams && !err; k++)
		err = xform_open(p, k, &cloud_ports[k]);
	err = err ?: tail_open(p, cloud_ports);
	err = err ?: chk(ptask_graph_run(p->ctx, p->graph), "graph run");
	for (k = 0; k < rig->ncams && !err; k++) {
		err = db_make(p, p->t_cam, &rig->cam[k], sizeof(rig->cam[k]), &p->cam[k], NULL);
		err = err ?: push(p, p->ch_cam[k], p->cam[k]);
		for (s = 0; s < GESTURE_SLOTS && !err; s++) {
			err = db_make(p, p->t_depth, NULL, 0, &p->depth[s][k], &map);
			p->run.depth[s][k] = map;
		}
	}
	gesture_filter_shape_init(&shape, rig);
	err = err ?: db_make(p, p->t_shape, &shape, sizeof(shape), &p->shape, NULL);
	return err ?: push(p, p->ch_shape, p->shape);
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
	}
	if (p->shape)
		ptask_datablock_release(p->ctx, p->shape);
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
