// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * impl_pipes.c - the pipes implementation: four processes joined by POSIX
 * pipes, as a shell pipeline `catusb | xform | filter | hidinput` would
 * be, each doing its own CUDA (or, with --cpu, its own CPU stage):
 *
 *   catusb --depths--> xform --clouds--> filter --fused--> hidinput --events--> this process
 *
 * Every record on a pipe is a struct pipe_rec header (frame, capture
 * time: CLOCK_MONOTONIC is the same clock in every process) and its
 * payload.  So each stage copies its input from the kernel, to the GPU,
 * back, and into the kernel again: what PTask's Table 2 charges pipes.
 *
 * Start-up: each child sets itself up (its CUDA context, its buffers),
 * says so on the ready pipe, and the parent opens the measured window and
 * tells catusb to go (with the start time).  At the end each child waits
 * (pause) until the parent has taken its last sample of them, then is
 * sent SIGTERM: their CPU time and memory count, their exit does not.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu.h"
#include "run.h"

#define PIPE_BYTES	(1 << 20)
#define NCHILD		4

struct pipe_rec {
	uint32_t frame, bytes;
	uint64_t capture_ns;
};

struct pipes {
	struct gesture_run run;
	int fd[NCHILD][2];	/* [0]: catusb -> xform ... [3]: hid -> parent */
	int ready[2], go[2];
	pid_t pid[NCHILD];
	size_t plane;
};

static int read_full(int fd, void *p, size_t n)
{
	char *c = p;

	while (n) {
		ssize_t r = read(fd, c, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return c == (char *)p ? 1 : -EPIPE;	/* 1: clean EOF */
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

static int send_rec(int fd, uint32_t frame, uint64_t capture, const void *p,
		    size_t bytes)
{
	struct pipe_rec h = { frame, (uint32_t)bytes, capture };
	int err = gesture_write_all(fd, &h, sizeof(h));

	return err ?: gesture_write_all(fd, p, bytes);
}

/* Next record into @p (exactly @bytes); 1 at the end of the stream. */
static int recv_rec(int fd, struct pipe_rec *h, void *p, size_t bytes)
{
	int err = read_full(fd, h, sizeof(*h));

	if (err)
		return err;
	if (h->bytes != bytes)
		return -EPROTO;
	err = read_full(fd, p, bytes);
	return err == 1 ? -EPIPE : err;
}

/* Keep only the child's two ends of the pipeline (and ready, go). */
static void close_others(struct pipes *p, int in, int out)
{
	int i;

	for (i = 0; i < NCHILD; i++) {
		if (p->fd[i][0] != in)
			close(p->fd[i][0]);
		if (p->fd[i][1] != out)
			close(p->fd[i][1]);
	}
}

/* Set up: say so, and let go of the pipe (its EOF tells the parent that
 * every child has either said so or died). */
static void ready(struct pipes *p)
{
	char c = 1;

	if (gesture_write_all(p->ready[1], &c, 1))
		_exit(1);
	close(p->ready[1]);
}

static void child_end(int err, const char *who)
{
	if (err < 0)
		fprintf(stderr, "gesture: pipes: %s: %s\n", who, strerror(-err));
	/* hidinput's printed events: SIGTERM would leave them in the buffer */
	fflush(NULL);
	if (err >= 0)
		pause();	/* until the parent's SIGTERM */
	_exit(err < 0 ? 1 : 0);
}

/* One stage process's state: its own buffers and its own GPU context. */
struct stage {
	struct pipes *p;
	const char *name;
	size_t in_bytes, out_bytes;
	void *in, *out;
	bool gpu_open;
	struct gesture_gpu gpu;
	CUdeviceptr d_in, d_out;
	struct gesture_filter_shape shape;
	struct gesture_tracker tracker;
	int (*work)(struct stage *s, uint32_t frame);
};

static int xform_work(struct stage *s, uint32_t frame)
{
	const struct gesture_rig *rig = s->p->run.rig;
	const size_t plane = s->p->plane;
	uint32_t k;
	int err;

	(void)frame;
	if (!s->gpu_open) {
		for (k = 0; k < rig->ncams; k++)
			gesture_xform_rows(&rig->cam[k], (uint16_t *)s->in + k * plane,
					   (struct gesture_point *)s->out + k * plane,
					   0, (int)rig->height);
		return 0;
	}
	err = gesture_gpu_h2d(&s->gpu, s->d_in, s->in, s->in_bytes);
	for (k = 0; k < rig->ncams && !err; k++)
		err = gesture_gpu_xform(&s->gpu, s->d_in + k * plane * sizeof(uint16_t),
					s->d_out + k * plane * sizeof(struct gesture_point),
					&rig->cam[k]);
	return err ?: gesture_gpu_d2h(&s->gpu, s->out, s->d_out, s->out_bytes);
}

static int filter_work(struct stage *s, uint32_t frame)
{
	const size_t plane = s->p->plane;
	int32_t k;
	int err;

	(void)frame;
	if (!s->gpu_open) {
		for (k = 0; k < s->shape.ncams; k++)
			gesture_filter_rows(&s->shape, (struct gesture_point *)s->in + k * plane,
					    (struct gesture_point *)s->out + k * plane,
					    0, s->shape.height);
		return 0;
	}
	err = gesture_gpu_h2d(&s->gpu, s->d_in, s->in, s->in_bytes);
	err = err ?: gesture_gpu_filter(&s->gpu, s->d_in, s->d_out, &s->shape);
	return err ?: gesture_gpu_d2h(&s->gpu, s->out, s->d_out, s->out_bytes);
}

static int hid_work(struct stage *s, uint32_t frame)
{
	gesture_tracker_step(&s->tracker, frame, s->in,
			     s->in_bytes / sizeof(struct gesture_point), s->out);
	return gesture_hid_emit(&s->p->run.hid, s->out);
}

static int stage_setup(struct stage *s, bool gpu)
{
	int err = 0;

	if (gpu) {
		err = gesture_gpu_open(&s->gpu);
		if (err)
			return err;
		s->gpu_open = true;
		s->in = gesture_gpu_host_alloc(&s->gpu, s->in_bytes);
		s->out = gesture_gpu_host_alloc(&s->gpu, s->out_bytes);
		err = gesture_gpu_alloc(&s->gpu, s->in_bytes, &s->d_in);
		err = err ?: gesture_gpu_alloc(&s->gpu, s->out_bytes, &s->d_out);
	} else {
		s->in = malloc(s->in_bytes);
		s->out = malloc(s->out_bytes);
	}
	return err ?: s->in && s->out ? 0 : -ENOMEM;
}

/* A stage process: set up, say ready, then records in -> work -> out. */
static void stage_main(struct stage *s, int in, int out, bool gpu)
{
	struct pipe_rec h;
	int err;

	err = stage_setup(s, gpu);
	if (err)
		child_end(err, s->name);
	ready(s->p);
	for (;;) {
		err = recv_rec(in, &h, s->in, s->in_bytes);
		if (err)
			break;
		err = s->work(s, h.frame);
		err = err ?: send_rec(out, h.frame, h.capture_ns, s->out, s->out_bytes);
		if (err)
			break;
	}
	close(out);
	child_end(err == 1 ? 0 : err, s->name);
}

static void catusb_main(struct pipes *p, int out)
{
	const struct gesture_rig *rig = p->run.rig;
	const size_t bytes = gesture_rig_frame_pixels(rig) * sizeof(uint16_t);
	uint16_t *buf, *depth[GESTURE_CAMS_MAX];
	uint64_t start, capture;
	uint32_t i, k;
	int err;

	buf = malloc(bytes);
	if (!buf)
		child_end(-ENOMEM, "catusb");
	for (k = 0; k < rig->ncams; k++)
		depth[k] = buf + k * p->plane;
	ready(p);
	err = read_full(p->go[0], &start, sizeof(start));
	if (err)
		child_end(err < 0 ? err : 0, "catusb");	/* the parent gave up */
	gesture_source_start(p->run.src, start);
	for (i = 0; i < p->run.cfg->frames && !err; i++) {
		err = gesture_source_frame(p->run.src, i, depth, &capture);
		err = err ?: send_rec(out, i, capture, buf, bytes);
	}
	close(out);
	child_end(err, "catusb");
}

static int pipes_open(struct pipes *p)
{
	int i;

	for (i = 0; i < NCHILD; i++)
		p->fd[i][0] = p->fd[i][1] = -1;
	p->ready[0] = p->ready[1] = p->go[0] = p->go[1] = -1;
	for (i = 0; i < NCHILD; i++) {
		if (pipe2(p->fd[i], O_CLOEXEC))
			return -errno;
		/* bigger pipes, fewer context switches; the default is fine too */
		fcntl(p->fd[i][1], F_SETPIPE_SZ, PIPE_BYTES);
	}
	if (pipe2(p->ready, O_CLOEXEC) || pipe2(p->go, O_CLOEXEC))
		return -errno;
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void pipes_close(struct pipes *p)
{
	int i;

	for (i = 0; i < NCHILD; i++) {
		close_fd(&p->fd[i][0]);
		close_fd(&p->fd[i][1]);
	}
	close_fd(&p->ready[0]);
	close_fd(&p->ready[1]);
	close_fd(&p->go[0]);
	close_fd(&p->go[1]);
}

static void child(struct pipes *p, int n)
{
	const struct gesture_rig *rig = p->run.rig;
	const size_t depth = gesture_rig_frame_pixels(rig) * sizeof(uint16_t);
	const size_t cloud = gesture_rig_frame_pixels(rig) * sizeof(struct gesture_point);
	const bool gpu = !p->run.cfg->cpu;
	struct stage s = { .p = p };

	prctl(PR_SET_PDEATHSIG, SIGTERM);	/* never outlive the parent */
	close_others(p, n ? p->fd[n - 1][0] : -1, p->fd[n][1]);
	close(p->ready[0]);
	close(p->go[1]);
	switch (n) {
	case 0:
		catusb_main(p, p->fd[0][1]);
		break;
	case 1:
		s = (struct stage){ p, "xform", depth, cloud, .work = xform_work };
		break;
	case 2:
		s = (struct stage){ p, "filter", cloud, cloud, .work = filter_work };
		gesture_filter_shape_init(&s.shape, rig);
		break;
	default:
		s = (struct stage){ p, "hidinput", cloud, sizeof(struct gesture_events),
				    .work = hid_work };
		gesture_tracker_init(&s.tracker);
		stage_main(&s, p->fd[n - 1][0], p->fd[n][1], false);
	}
	stage_main(&s, p->fd[n - 1][0], p->fd[n][1], gpu);
}

/* Fork the four stages; wait until each is set up. */
static int spawn(struct pipes *p)
{
	char c;
	int n, err;

	fflush(NULL);
	for (n = 0; n < NCHILD; n++) {
		p->pid[n] = fork();
		if (p->pid[n] < 0)
			return -errno;
		if (p->pid[n] == 0)
			child(p, n);
		gesture_stats_track(p->run.stats, p->pid[n]);
	}
	/* the parent keeps the events' read end and ready/go */
	for (n = 0; n < NCHILD - 1; n++) {
		close_fd(&p->fd[n][0]);
		close_fd(&p->fd[n][1]);
	}
	close_fd(&p->fd[NCHILD - 1][1]);
	close_fd(&p->ready[1]);
	close_fd(&p->go[0]);
	for (n = 0; n < NCHILD; n++) {
		err = read_full(p->ready[0], &c, 1);
		if (err) {
			fprintf(stderr, "gesture: pipes: a stage failed to start\n");
			return err < 0 ? err : -ECHILD;
		}
	}
	return 0;
}

static int parent_loop(struct pipes *p)
{
	struct gesture_events ev;
	struct pipe_rec h;
	uint64_t start;
	uint32_t i;
	int err;

	err = gesture_stats_begin(p->run.stats);
	if (err)
		return err;
	start = gesture_now_ns();
	err = gesture_write_all(p->go[1], &start, sizeof(start));
	for (i = 0; i < p->run.cfg->frames && !err; i++) {
		err = recv_rec(p->fd[NCHILD - 1][0], &h, &ev, sizeof(ev));
		if (err == 1 || (!err && h.frame != i)) {
			fprintf(stderr, "gesture: pipes: the pipeline ended at frame %u\n", i);
			err = -EPIPE;
		}
		err = err ?: gesture_run_done(&p->run, &ev, h.capture_ns, true);
	}
	return err;
}

static int reap(struct pipes *p)
{
	int n, status, err = 0;

	for (n = 0; n < NCHILD; n++) {
		if (p->pid[n] <= 0)
			continue;
		kill(p->pid[n], SIGTERM);
		if (waitpid(p->pid[n], &status, 0) < 0)
			continue;
		/* SIGTERM in pause() is the way every stage should end */
		if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) &&
		    !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
			err = -ECHILD;
	}
	return err;
}

int gesture_impl_pipes(const struct gesture_cfg *cfg, struct gesture_result *r)
{
	struct pipes *p;
	int err, rerr;

	if (!cfg->cpu) {	/* the children do their own CUDA: is there any? */
		struct gesture_gpu probe;
		pid_t pid = fork();
		int status;

		if (pid < 0)
			return -errno;
		if (pid == 0) {
			if (gesture_gpu_open(&probe))
				_exit(3);
			gesture_gpu_close(&probe);
			_exit(0);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			return -ENODEV;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	err = gesture_run_init(&p->run, cfg);
	if (err)
		goto err_free;
	p->plane = (size_t)p->run.rig->width * p->run.rig->height;
	err = pipes_open(p);
	err = err ?: spawn(p);
	err = err ?: parent_loop(p);
	if (err)
		gesture_run_fail(&p->run, err);
	err = gesture_run_finish(&p->run, r) ?: err;
	pipes_close(p);
	rerr = reap(p);		/* a stage that failed: its error came first */
	err = err ?: rerr;
	gesture_run_fini(&p->run);
err_free:
	free(p);
	return err;
}
