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
 *     "filtered"        [ hid ]   (ptask 3: 1 input, 1 output)
 *     (graph output)       |
 *                       "events" (graph output)
 *
 * The executor is the kselftests' test executor (it completes each
 * invocation by copying input k to output k), started from
 * $PTASK_TEST_EXECUTOR: until ptaskd exists this is the whole run-time, so
 * the demo shows the kernel's part: channels, ports, sticky ports,
 * fan-out, the Waiting -> Queued -> Executing -> Completed cycle, shared
 * datablock pages, and cleanup (the object counts in /sys/kernel/ptask go
 * back to zero).
 *
 * Usage: demo_graph [FRAMES] (default 64; 4 KiB each)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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

static __u32 open_ptask(__u32 graph, __u32 nports, const char *name)
{
	struct ptask_ptask_open p = {
		.size = sizeof(p), .graph = graph, .kind = PTASK_KIND_CPU,
		.nports = nports,
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
	xform = open_ptask(d->graph, 2, "xform");
	filter = open_ptask(d->graph, 4, "filter");
	hid = open_ptask(d->graph, 2, "hid");
	x_in = open_port(xform, PTASK_PORT_INPUT, t.handle, "xform.in");
	x_out = open_port(xform, PTASK_PORT_OUTPUT, t.handle, "xform.out");
	f_in = open_port(filter, PTASK_PORT_INPUT, t.handle, "filter.in");
	f_par = open_port(filter, PTASK_PORT_STICKY, 0, "filter.params");
	f_out = open_port(filter, PTASK_PORT_OUTPUT, t.handle, "filter.out");
	f_ev = open_port(filter, PTASK_PORT_OUTPUT, 0, "filter.params_out");
	h_in = open_port(hid, PTASK_PORT_INPUT, t.handle, "hid.in");
	h_out = open_port(hid, PTASK_PORT_OUTPUT, t.handle, "hid.out");
	d->frames_in = open_channel(d->graph, 0, x_in, t.handle, "frames");
	d->params_in = open_channel(d->graph, 0, f_par, 0, "params");
	open_channel(d->graph, x_out, f_in, t.handle, "xformed");
	/* Fan-out: filter.out feeds the graph output and hid. */
	d->filtered_out = open_channel(d->graph, f_out, 0, t.handle, "filtered");
	open_channel(d->graph, f_out, h_in, t.handle, "to_hid");
	open_channel(d->graph, f_ev, 0, 0, "params_seen");
	d->events_out = open_channel(d->graph, h_out, 0, t.handle, "events");
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
		err = err ?: pull_check(d->events_out, i & 0xff);
		err = err ?: pull_check(seen, param);
		if (!err && (i + 1) % 16 == 0)
			printf("  %d/%d frames through 3 ptasks\n", i + 1, frames);
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
	pid_t exec_pid;
	int status, err;

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
	err = run(&d, frames);
out:
	close(fd);
	if (exec_pid > 0) {
		kill(exec_pid, SIGTERM);
		waitpid(exec_pid, &status, 0);
	}
	show_counts("after close:");
	printf("ptask demo: %s\n", err ? "FAILED" : "ok, every byte checked");
	return err ? 1 : 0;
}
