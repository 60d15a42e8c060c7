/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * run.h - one measured run of one implementation: the catusb source, the
 * frame ring the in-process implementations share, the measurements, and
 * the implementations' entry points.
 *
 *   source thread                     implementation             driver
 *   catusb: pace, fill slot i%S  -->  stages on frame i   -->  gesture_run_done(i):
 *   (waits while S frames are         (threads, CUDA, a        latency, event
 *    in flight)                        graph, processes)        stream, hid
 *
 * S (GESTURE_SLOTS) frames may be in flight: a slot's buffers are reused
 * only after its frame's events are done, so no stage needs locks on
 * them.  The pipes implementation runs catusb in a process of its own and
 * reports to the same gesture_run_done().
 */
#ifndef EXAMPLES_GESTURE_RUN_H
#define EXAMPLES_GESTURE_RUN_H

#include <pthread.h>
#include <sys/types.h>

#include "gesture.h"

#define GESTURE_SLOTS		3
#define GESTURE_PIDS_MAX	8

enum gesture_mode {
	GESTURE_REALTIME = 0,	/* frames paced at the cameras' rate */
	GESTURE_UNCONSTRAINED,	/* as fast as the pipeline takes them */
};

/**
 * struct gesture_cfg - what to run (main.c fills it from the command line)
 * @impl: host, handcode, pipes, modular or ptask
 * @mode: realtime or unconstrained
 * @frames: frames to run
 * @ncams, @seed: the generator's, when @recording is NULL
 * @recording: a recording file to replay (looped if shorter than @frames)
 * @events_path: write the event stream here (NULL: nowhere)
 * @csv_path: append the result row here (NULL: nowhere)
 * @hid: where hidinput sends events; @hid_log: PRINT's stream
 * @cpu: run the stages on the CPU (no GPU)
 * @socket: ptaskd's socket (ptask; NULL: libptask's default)
 * @daemon_pid: ptaskd's pid, to count its CPU and memory in the ptask
 *	implementation's (0: unknown)
 * @progress: report progress on stderr
 */
struct gesture_cfg {
	const char *impl;
	enum gesture_mode mode;
	uint32_t frames, ncams;
	uint64_t seed;
	const char *recording, *events_path, *csv_path;
	enum gesture_hid_mode hid;
	FILE *hid_log;
	bool cpu;
	const char *socket;
	pid_t daemon_pid;
	bool progress;
};

/* --- catusb: frames from the generator or a recording (catusb.c) ------- */
struct gesture_source;
int gesture_source_open(const struct gesture_cfg *cfg,
			struct gesture_source **out);
const struct gesture_rig *gesture_source_rig(const struct gesture_source *s);
/* Start the clock: frame i is due at start + i / fps in realtime mode. */
void gesture_source_start(struct gesture_source *s, uint64_t start_ns);
/*
 * Frame @i into @depth[k]: waits until it is due (realtime), then fills.
 * *@capture_ns: when the frame was captured (due, or now if late).
 */
int gesture_source_frame(struct gesture_source *s, uint32_t i,
			 uint16_t *const depth[], uint64_t *capture_ns);
void gesture_source_close(struct gesture_source *s);

uint64_t gesture_now_ns(void);	/* CLOCK_MONOTONIC */

/* --- measurements (stats.c) ------------------------------------------------ */

/**
 * struct gesture_result - one row of the table
 * (fps: frames / (last event - first capture); mb_s: camera bytes per
 * second; latencies capture -> event; cpu_*: percent of one CPU, summed
 * over the tracked processes (this one, its children, ptaskd); gpu_util:
 * mean of the samples, -1 when unknown; gpu_mem_mb: device memory used
 * above what was used before the implementation's set-up; threads and
 * rss_mb: the largest
 * sum seen (rss: proportional set size, so shared pages count once))
 */
struct gesture_result {
	char impl[16], mode[16], backend[16];
	uint32_t frames, events;
	double seconds, fps, mb_s, lat_med_ms, lat_p99_ms;
	double cpu_user, cpu_sys, gpu_util, gpu_mem_mb, rss_mb;
	uint32_t threads;
};

struct gesture_stats;
int gesture_stats_open(const struct gesture_cfg *cfg,
		       const struct gesture_rig *rig,
		       struct gesture_stats **out);
/* Count @pid's CPU, threads and memory too (children, ptaskd). */
void gesture_stats_track(struct gesture_stats *st, pid_t pid);
/* The measured window opens (samplers start). */
int gesture_stats_begin(struct gesture_stats *st);
void gesture_stats_frame(struct gesture_stats *st, uint32_t frame,
			 uint64_t capture_ns, uint64_t done_ns);
/* Close the window and fill @r. */
void gesture_stats_end(struct gesture_stats *st, struct gesture_result *r);
void gesture_stats_close(struct gesture_stats *st);
int gesture_result_append_csv(const char *path, const struct gesture_result *r);

/* --- the run: ring, source thread, completion (run.c) --------------------- */

/**
 * struct gesture_run - shared by the driver and an implementation
 * @cfg: the configuration
 * @rig: the cameras
 * @src: catusb
 * @depth: each slot's camera buffers, set by the implementation before
 *	gesture_run_start() (host memory it can write: malloc, pinned,
 *	mapped datablocks)
 * @filled: optional, called on the source thread after slot i%S holds
 *	frame i (ptask pushes it into the graph there)
 * @hid: hidinput's output
 */
struct gesture_run {
	const struct gesture_cfg *cfg;
	const struct gesture_rig *rig;
	struct gesture_source *src;
	struct gesture_stats *stats;
	uint16_t *depth[GESTURE_SLOTS][GESTURE_CAMS_MAX];
	int (*filled)(struct gesture_run *run, uint32_t frame);
	void *impl;
	struct gesture_hid hid;
	FILE *events;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint32_t produced, done;	/* under @lock */
	uint32_t nevents;		/* under @lock */
	int error;			/* under @lock: the first failure */
	bool stop;
	pthread_t source;
	bool source_started;
	uint64_t capture_ns[GESTURE_SLOTS];
};

int gesture_run_init(struct gesture_run *run, const struct gesture_cfg *cfg);
void gesture_run_fini(struct gesture_run *run);
/* Open the measured window and start the source thread. */
int gesture_run_start(struct gesture_run *run);
/* Block until frame @i is in its slot; -errno if the run failed. */
int gesture_run_wait(struct gesture_run *run, uint32_t i);
/*
 * Frame @e->frame is through: its events go to hidinput's output (unless
 * @emitted: the stage did it itself) and to the event stream, its latency
 * is counted (@capture_ns: when it was captured; 0: the slot's source
 * time), its slot freed.  Frames complete in order.
 */
int gesture_run_done(struct gesture_run *run, const struct gesture_events *e,
		     uint64_t capture_ns, bool emitted);
/* Fail the run (the first error wins); wakes every waiter. */
void gesture_run_fail(struct gesture_run *run, int err);
/* Join the source, close the window; fills @r. */
int gesture_run_finish(struct gesture_run *run, struct gesture_result *r);
static inline uint32_t gesture_slot(uint32_t frame)
{
	return frame % GESTURE_SLOTS;
}

/* --- the implementations (impl_*.c) --------------------------------------- */
/* Each runs cfg->frames frames; 0, -ENODEV (cannot run here) or -errno. */
int gesture_impl_host(const struct gesture_cfg *cfg, struct gesture_result *r);
int gesture_impl_modular(const struct gesture_cfg *cfg, struct gesture_result *r);
int gesture_impl_handcode(const struct gesture_cfg *cfg, struct gesture_result *r);
int gesture_impl_pipes(const struct gesture_cfg *cfg, struct gesture_result *r);
int gesture_impl_ptask(const struct gesture_cfg *cfg, struct gesture_result *r);

#endif /* EXAMPLES_GESTURE_RUN_H */
