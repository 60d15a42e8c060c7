// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * demo_graph - a small ptask graph run end to end through raw ioctls.
 *
 *            graph input "frames"
 *                  |
 *              [ xform ]      (ptask 1: 1 input, 1 output)
 *                  |
 *              [ filter ]     (ptask 2: input + sticky "params", 2 outputs)
 *               /      \
 *     "filtered"        [ hid ]   (ptask 3: a CPU ptask this program runs)
 *     (graph output)       |
 *                       "events" (graph output: one 16-byte event a frame)
 *
 * xform and filter go to the executor: the kselftests' test executor (it
 * completes each invocation by copying input k to output k), started from
 * $PTASK_TEST_EXECUTOR; until ptaskd exists it stands in for the GPU
 * run-time.  hid is opened with PTASK_PTASK_SELF, so its invocations come
 * back to this process, where a worker thread takes them (EXEC_TAKE with
 * PTASK_TAKE_SELF) and turns each frame into an event: the privileged
 * executor never runs the program's own code.  The demo shows the kernel's
 * part: channels, ports, sticky ports, fan-out, the Waiting -> Queued ->
 * Executing -> Completed cycle, shared datablock pages, and cleanup (the
 * object counts in /sys/kernel/ptask go back to zero).
 *
 * Usage: demo_graph [FRAMES] (default 64; 4 KiB each)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uapi/ptask.h"

#define FRAME_BYTES 4096

static int fd = -1;

static int call(unsigned long cmd, void *arg, const char *what)
{
	if (ioctl(fd, cmd, arg) == 0)
		return 0;
	fprintf(stderr, "demo_graph: %s: %s\n", what, strerror(errno));
	return -errno;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static __u32 open_ptask(__u32 graph, __u32 nports, __u32 flags,
			const char *name)
{
	struct ptask_ptask_open p = {
		.size = sizeof(p), .flags = flags, .graph = graph,
		.kind = PTASK_KIND_CPU, .nports = nports,
	};

	snprintf(p.name, sizeof(p.name), "%s", name);
	return call(PTASK_IOC_PTASK_OPEN, &p, name) ? 0 : p.handle;
}

static __u32 open_port(__u32 ptask, __u32 kind, __u32 tmpl, const char *name)
{
	struct ptask_port_open p = {
		.size = sizeof(p), .ptask = ptask, .kind = kind,
		.template = tmpl,
	};

	snprintf(p.name, sizeof(p.name), "%s", name);
	return call(PTASK_IOC_PORT_OPEN, &p, name) ? 0 : p.handle;
}

static __u32 open_channel(__u32 graph, __u32 src, __u32 dst, __u32 tmpl,
			  const char *name)
{
	struct ptask_channel_open c = {
		.size = sizeof(c), .graph = graph, .src = src, .dst = dst,
		.capacity = 4, .template = tmpl,
	};

	snprintf(c.name, sizeof(c.name), "%s", name);
	return call(PTASK_IOC_CHANNEL_OPEN, &c, name) ? 0 : c.handle;
}

/* A datablock of @bytes filled with @fill, pushed into @channel. */
static int push_block(__u32 channel, __u64 bytes, int fill)
{
	struct ptask_datablock_create db = { .size = sizeof(db), .bytes = bytes };
	struct ptask_datablock_release rel = { .size = sizeof(rel) };
	struct ptask_push push = { .size = sizeof(push), .channel = channel };
	void *p;
	int err;

	err = call(PTASK_IOC_DATABLOCK_CREATE, &db, "datablock create");
	if (err)
		return err;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 db.mmap_offset);
	if (p == MAP_FAILED) {
		err = -errno;
		perror("demo_graph: mmap");
	} else {
		memset(p, fill, bytes);
		munmap(p, bytes);
		push.datablock = db.handle;
		err = call(PTASK_IOC_PUSH, &push, "push");
	}
	rel.handle = db.handle;
	call(PTASK_IOC_DATABLOCK_RELEASE, &rel, "release");
	return err;
}

/* Pull one datablock and check every byte is @want. */
static int pull_check(__u32 channel, int want)
{
	struct ptask_pull pull = {
		.size = sizeof(pull), .channel = channel,
		.timeout_ns = now_ns() + 10ull * 1000000000ull,
	};
	struct ptask_datablock_release rel = { .size = sizeof(rel) };
	unsigned char *p;
	__u64 i;
	int err;

	err = call(PTASK_IOC_PULL, &pull, "pull");
	if (err)
		return err;
	p = mmap(NULL, pull.bytes, PROT_READ, MAP_SHARED, fd, pull.mmap_offset);
	if (p == MAP_FAILED) {
		err = -errno;
	} else {
		for (i = 0; i < pull.bytes && !err; i++)
			if (p[i] != (unsigned char)want)
				err = -EILSEQ;
		munmap(p, pull.bytes);
	}
	rel.handle = pull.datablock;
	call(PTASK_IOC_DATABLOCK_RELEASE, &rel, "release");
	if (err)
		fprintf(stderr, "demo_graph: wrong data (%s)\n", strerror(-err));
	return err;
}

/* hid's output: what the pointer driver would get for one frame. */
struct hid_event {
	__u32 level;		/* the frame's first byte */
	__u32 sum;		/* sum of its bytes */
	__u64 bytes;		/* its size */
};

static volatile int hid_stop;

/* hid's body, run here: one frame in, one event out. */
static int hid_run(const struct ptask_invocation *inv,
		   const struct ptask_invocation_port *ports)
{
	const struct ptask_invocation_port *in = &ports[inv->first_port];
	const struct ptask_invocation_port *out = &ports[inv->first_port + 1];
	struct ptask_datablock_create db = {
		.size = sizeof(db), .bytes = sizeof(struct hid_event),
	};
	struct ptask_exec_complete done = {
		.size = sizeof(done), .id = inv->id, .n_outputs = 1,
	};
	struct ptask_exec_output output = { .index = out->index };
	struct hid_event *ev;
	unsigned char *frame;
	__u64 t0 = now_ns(), i;
	int err;

	if (call(PTASK_IOC_DATABLOCK_CREATE, &db, "hid: datablock create"))
		return -1;
	frame = mmap(NULL, in->bytes, PROT_READ, MAP_SHARED, fd,
		     in->mmap_offset);
	ev = mmap(NULL, sizeof(*ev), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		  db.mmap_offset);
	if (frame == MAP_FAILED || ev == MAP_FAILED) {
		perror("demo_graph: hid: mmap");
		return -1;
	}
	ev->level = frame[0];
	ev->sum = 0;
	for (i = 0; i < in->bytes; i++)
		ev->sum += frame[i];
	ev->bytes = in->bytes;
	munmap(frame, in->bytes);
	munmap(ev, sizeof(*ev));
	output.datablock = db.handle;
	done.outputs = (__u64)(uintptr_t)&output;
	done.gpu_ns = now_ns() - t0;
	err = call(PTASK_IOC_EXEC_COMPLETE, &done, "hid: complete");
	return err;
}

/* The worker thread: takes this program's own (PTASK_PTASK_SELF) work. */
static void *hid_worker(void *unused)
{
	struct ptask_invocation inv[4];
	struct ptask_invocation_port ports[8];
	__u32 i;

	(void)unused;
	while (!hid_stop) {
		struct ptask_exec_take take = {
			.size = sizeof(take), .flags = PTASK_TAKE_SELF,
			.max_invocations = 4, .max_ports = 8,
			.invocations = (__u64)(uintptr_t)inv,
			.ports = (__u64)(uintptr_t)ports,
			.timeout_ns = now_ns() + 100000000ull,
		};

		if (ioctl(fd, PTASK_IOC_EXEC_TAKE, &take)) {
			if (errno == ETIMEDOUT || errno == EINTR)
				continue;
			if (errno != ESHUTDOWN && errno != EIO)
				perror("demo_graph: hid: take");
			break;
		}
		for (i = 0; i < take.n_invocations; i++)
			if (hid_run(&inv[i], ports))
				return NULL;
	}
	return NULL;
}

/* Pull one event and check it describes a frame of bytes @want. */
static int pull_event(__u32 channel, int want)
{
	struct ptask_pull pull = {
		.size = sizeof(pull), .channel = channel,
		.timeout_ns = now_ns() + 10ull * 1000000000ull,
	};
	struct ptask_datablock_release rel = { .size = sizeof(rel) };
	struct hid_event *ev;
	int err;

	err = call(PTASK_IOC_PULL, &pull, "pull event");
	if (err)
		return err;
	ev = mmap(NULL, sizeof(*ev), PROT_READ, MAP_SHARED, fd,
		  pull.mmap_offset);
	if (ev == MAP_FAILED) {
		err = -errno;
	} else {
		if (ev->level != (__u32)want || ev->bytes != FRAME_BYTES ||
		    ev->sum != (__u32)want * FRAME_BYTES)
			err = -EILSEQ;
		munmap(ev, sizeof(*ev));
	}
	rel.handle = pull.datablock;
	call(PTASK_IOC_DATABLOCK_RELEASE, &rel, "release");
	if (err)
		fprintf(stderr, "demo_graph: wrong event (%s)\n", strerror(-err));
	return err;
}

static pid_t start_executor(void)
{
	const char *path = getenv("PTASK_TEST_EXECUTOR");
	pid_t pid;

	if (!path)
		path = "/bin/test_executor";
	pid = fork();
	if (pid == 0) {
		execl(path, path, (char *)NULL);
		perror("demo_graph: exec test_executor");
		_exit(127);
	}
	return pid;
}

static void show_counts(const char *when)
{
	static const char *const names[] = PTASK_COUNT_NAMES;
	char path[128], buf[32];
	int i;

	printf("  %-22s", when);
	for (i = 0; i < __PTASK_COUNT_MAX; i++) {
		FILE *f;

		snprintf(path, sizeof(path), PTASK_SYSFS_DIR "/objects/%s",
			 names[i]);
		f = fopen(path, "r");
		if (!f || !fgets(buf, sizeof(buf), f))
			snprintf(buf, sizeof(buf), "?\n");
		if (f)
			fclose(f);
		buf[strcspn(buf, "\n")] = 0;
		printf(" %s=%s", names[i], buf);
	}
	printf("\n");
}

struct demo {
	__u32 graph, frames_in, params_in, filtered_out, events_out;
};

static int build(struct demo *d)
{
	struct ptask_graph_open g = {
		.size = sizeof(g), .flags = PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL,
		.mode = 0600, .name = "demo",
	};
	struct ptask_template_open t = {
		.size = sizeof(t), .kind = PTASK_TEMPLATE_ARRAY, .stride = 1,
		.dims = { FRAME_BYTES, 1, 1 }, .name = "frame",
	};
	__u32 xform, filter, hid, x_in, x_out, f_in, f_par, f_out, f_ev;
	__u32 h_in, h_out;

	if (call(PTASK_IOC_GRAPH_OPEN, &g, "graph open"))
		return -1;
	d->graph = t.graph = g.handle;
	if (call(PTASK_IOC_TEMPLATE_OPEN, &t, "template open"))
		return -1;
	xform = open_ptask(d->graph, 2, 0, "xform");
	filter = open_ptask(d->graph, 4, 0, "filter");
	hid = open_ptask(d->graph, 2, PTASK_PTASK_SELF, "hid");
	x_in = open_port(xform, PTASK_PORT_INPUT, t.handle, "xform.in");
	x_out = open_port(xform, PTASK_PORT_OUTPUT, t.handle, "xform.out");
	f_in = open_port(filter, PTASK_PORT_INPUT, t.handle, "filter.in");
	f_par = open_port(filter, PTASK_PORT_STICKY, 0, "filter.params");
	f_out = open_port(filter, PTASK_PORT_OUTPUT, t.handle, "filter.out");
	f_ev = open_port(filter, PTASK_PORT_OUTPUT, 0, "filter.params_out");
	h_in = open_port(hid, PTASK_PORT_INPUT, t.handle, "hid.in");
	h_out = open_port(hid, PTASK_PORT_OUTPUT, 0, "hid.out");
	d->frames_in = open_channel(d->graph, 0, x_in, t.handle, "frames");
	d->params_in = open_channel(d->graph, 0, f_par, 0, "params");
	open_channel(d->graph, x_out, f_in, t.handle, "xformed");
	/* Fan-out: filter.out feeds the graph output and hid. */
	d->filtered_out = open_channel(d->graph, f_out, 0, t.handle, "filtered");
	open_channel(d->graph, f_out, h_in, t.handle, "to_hid");
	open_channel(d->graph, f_ev, 0, 0, "params_seen");
	d->events_out = open_channel(d->graph, h_out, 0, 0, "events");
	return d->events_out && d->filtered_out && d->frames_in &&
	       d->params_in ? 0 : -1;
}

/* The params_seen output shows which sticky value each frame saw. */
static __u32 params_seen_channel(__u32 graph)
{
	struct ptask_lookup l = {
		.size = sizeof(l), .graph = graph, .type = PTASK_OBJ_CHANNEL,
		.name = "params_seen",
	};

	return call(PTASK_IOC_LOOKUP, &l, "lookup") ? 0 : l.handle;
}

static int run(struct demo *d, int frames)
{
	struct ptask_graph_ctl ctl = { .size = sizeof(ctl), .graph = d->graph };
	__u32 seen = params_seen_channel(d->graph);
	__u64 t0, t1;
	int i, err = 0;

	if (call(PTASK_IOC_GRAPH_RUN, &ctl, "run") || !seen)
		return -1;
	t0 = now_ns();
	for (i = 0; i < frames && !err; i++) {
		int param = i < frames / 2 ? 0x50 : 0x51;

		/* A new sticky value halfway: frames before it keep the old. */
		if (i == 0 || i == frames / 2)
			err = push_block(d->params_in, 64, param);
		err = err ?: push_block(d->frames_in, FRAME_BYTES, i & 0xff);
		err = err ?: pull_check(d->filtered_out, i & 0xff);
		err = err ?: pull_event(d->events_out, i & 0xff);
		err = err ?: pull_check(seen, param);
		if (!err && (i + 1) % 16 == 0)
			printf("  %d/%d frames through 3 ptasks (hid run here)\n",
			       i + 1, frames);
	}
	t1 = now_ns();
	if (!err)
		printf("  %d frames of %d bytes in %.1f ms: %.0f us per frame "
		       "end to end (software-emulated guest)\n", frames,
		       FRAME_BYTES, (t1 - t0) / 1e6, (t1 - t0) / 1e3 / frames);
	call(PTASK_IOC_GRAPH_TERMINATE, &ctl, "terminate");
	return err;
}

int main(int argc, char **argv)
{
	int frames = argc > 1 ? atoi(argv[1]) : 64;
	struct demo d;
	pthread_t worker;
	pid_t exec_pid;
	int status, err, have_worker = 0;

	if (frames < 2) {
		fprintf(stderr, "usage: demo_graph [FRAMES >= 2]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ptask demo: a 3-ptask graph (xform -> filter -> hid, sticky "
	       "params, fan-out) through /dev/ptask\n");
	show_counts("before:");
	fd = open("/dev/ptask", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("demo_graph: /dev/ptask (is ptask.ko loaded?)");
		return 1;
	}
	exec_pid = start_executor();
	if (exec_pid < 0 || build(&d)) {
		err = -1;
		goto out;
	}
	show_counts("graph built:");
	have_worker = !pthread_create(&worker, NULL, hid_worker, NULL);
	err = have_worker ? run(&d, frames) : -1;
out:
	hid_stop = 1;
	if (have_worker)
		pthread_join(worker, NULL);
	close(fd);
	if (exec_pid > 0) {
		kill(exec_pid, SIGTERM);
		waitpid(exec_pid, &status, 0);
	}
	show_counts("after close:");
	printf("ptask demo: %s\n", err ? "FAILED" : "ok, every byte checked");
	return err ? 1 : 0;
}
