// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * raw_ioctl - the smallest complete use of /dev/ptask through raw ioctls
 * (the worked example of Documentation/uapi.md).
 *
 *	graph input "in" -> [ ptask "copy" (CPU): in -> out ] -> graph output "out"
 *
 * Creates an anonymous graph with one CPU ptask of two ports, joins them
 * to a graph-input and a graph-output channel, runs the graph, pushes one
 * 4 KiB datablock, pulls the result and closes the graph.
 *
 * The kernel only moves datablocks: an executor (ptaskd, or the kselftests'
 * test_executor, which copies each input to the matching output) runs the
 * ptask.  Without one the invocation stays queued, so the pull gives up
 * after 5 seconds with a message.
 *
 * Build: gcc -Wall -Wextra -Werror -I. examples/raw_ioctl.c -o raw_ioctl
 * Exit status: 0 output pulled, 1 error, 2 no output within 5 s.
 */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64	/* mmap offsets reach 2^48 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "uapi/ptask.h"

#define BLOCK_BYTES	4096
#define PULL_TIMEOUT_S	5

static int fd = -1;
static long n_executors;

/* One ioctl; prints what failed.  Returns 0 or -errno. */
static int call(unsigned long cmd, void *arg, const char *what)
{
	if (ioctl(fd, cmd, arg) == 0)
		return 0;
	fprintf(stderr, "raw_ioctl: %s: %s\n", what, strerror(errno));
	return -errno;
}

/* Timeouts are absolute CLOCK_MONOTONIC times in ns. */
static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* /sys/kernel/ptask/executors, or -1 when it cannot be read. */
static long executors(void)
{
	char buf[32];
	long n = -1;
	FILE *f = fopen(PTASK_SYSFS_DIR "/executors", "r");

	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f) && sscanf(buf, "%ld", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

static __u32 open_port(__u32 ptask, __u32 kind, __u32 tmpl)
{
	struct ptask_port_open p = {
		.size = sizeof(p), .ptask = ptask, .kind = kind,
		.template = tmpl,
	};

	return call(PTASK_IOC_PORT_OPEN, &p, "PORT_OPEN") ? 0 : p.handle;
}

static __u32 open_channel(__u32 graph, __u32 src, __u32 dst, __u32 tmpl,
			  const char *name)
{
	struct ptask_channel_open c = {
		.size = sizeof(c), .graph = graph, .src = src, .dst = dst,
		.capacity = 4, .template = tmpl,
	};

	snprintf(c.name, sizeof(c.name), "%s", name);
	return call(PTASK_IOC_CHANNEL_OPEN, &c, "CHANNEL_OPEN") ? 0 : c.handle;
}

/* Builds the graph; returns 0 and the two channels, or -1. */
static int build(__u32 *graph, __u32 *in, __u32 *out)
{
	struct ptask_graph_open g = {
		.size = sizeof(g), .flags = PTASK_GRAPH_CREATE, .mode = 0600,
		.name = "",		/* anonymous: nobody else can open it */
	};
	struct ptask_template_open t = {
		.size = sizeof(t), .kind = PTASK_TEMPLATE_ARRAY,
		.binding = PTASK_BIND_GLOBAL, .stride = 1,
		.dims = { BLOCK_BYTES, 1, 1 },
	};
	struct ptask_ptask_open p = {
		.size = sizeof(p), .kind = PTASK_KIND_CPU, .nports = 2,
		.name = "copy",
	};
	__u32 port_in, port_out;

	if (call(PTASK_IOC_GRAPH_OPEN, &g, "GRAPH_OPEN"))
		return -1;
	*graph = t.graph = p.graph = g.handle;
	if (call(PTASK_IOC_TEMPLATE_OPEN, &t, "TEMPLATE_OPEN") ||
	    call(PTASK_IOC_PTASK_OPEN, &p, "PTASK_OPEN"))
		return -1;
	port_in = open_port(p.handle, PTASK_PORT_INPUT, t.handle);
	port_out = open_port(p.handle, PTASK_PORT_OUTPUT, t.handle);
	if (!port_in || !port_out)
		return -1;
	*in = open_channel(g.handle, 0, port_in, t.handle, "in");
	*out = open_channel(g.handle, port_out, 0, t.handle, "out");
	return *in && *out ? 0 : -1;
}

/* Creates a datablock, fills it through a mapping, pushes it. */
static int push_one(__u32 channel)
{
	struct ptask_datablock_create db = {
		.size = sizeof(db), .bytes = BLOCK_BYTES,
	};
	struct ptask_datablock_release rel = { .size = sizeof(rel) };
	struct ptask_push push = { .size = sizeof(push), .channel = channel };
	char *mem;
	int err;

	if (call(PTASK_IOC_DATABLOCK_CREATE, &db, "DATABLOCK_CREATE"))
		return -1;
	mem = mmap(NULL, db.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   (off_t)db.mmap_offset);
	if (mem == MAP_FAILED) {
		perror("raw_ioctl: mmap");
		err = -1;
	} else {
		snprintf(mem, db.bytes, "hello, ptask");
		munmap(mem, db.bytes);
		push.datablock = db.handle;
		err = call(PTASK_IOC_PUSH, &push, "PUSH");
	}
	/* The channel has its own reference now; drop ours. */
	rel.handle = db.handle;
	call(PTASK_IOC_DATABLOCK_RELEASE, &rel, "DATABLOCK_RELEASE");
	return err;
}

/* Pulls one datablock, waiting at most PULL_TIMEOUT_S; 0, 1 or 2. */
static int pull_one(__u32 channel)
{
	struct ptask_pull pull = {
		.size = sizeof(pull), .channel = channel,
		.timeout_ns = now_ns() + PULL_TIMEOUT_S * 1000000000ull,
	};
	struct ptask_datablock_release rel = { .size = sizeof(rel) };
	const char *mem;

	if (ioctl(fd, PTASK_IOC_PULL, &pull)) {
		if (errno == ETIMEDOUT) {
			fprintf(stderr, "raw_ioctl: no output within %d s: %s\n",
				PULL_TIMEOUT_S, n_executors ?
				"the executor did not complete the ptask" :
				"no executor is registered (start ptaskd or test_executor)");
			return 2;
		}
		fprintf(stderr, "raw_ioctl: PULL: %s\n", strerror(errno));
		return 1;
	}
	printf("pulled datablock %u: %llu bytes, %llu records\n",
	       pull.datablock, (unsigned long long)pull.bytes,
	       (unsigned long long)pull.records);
	mem = mmap(NULL, pull.bytes, PROT_READ, MAP_SHARED, fd,
		   (off_t)pull.mmap_offset);
	if (mem != MAP_FAILED) {
		printf("it starts with \"%.32s\"\n", mem);
		munmap((void *)mem, pull.bytes);
	}
	rel.handle = pull.datablock;
	call(PTASK_IOC_DATABLOCK_RELEASE, &rel, "DATABLOCK_RELEASE");
	return mem == MAP_FAILED ? 1 : 0;
}

int main(void)
{
	struct ptask_graph_ctl ctl = { .size = sizeof(ctl) };
	__u32 graph, in, out;
	int ret = 1;

	n_executors = executors();
	if (n_executors < 0) {
		fprintf(stderr, "raw_ioctl: cannot read %s/executors: is ptask.ko loaded?\n",
			PTASK_SYSFS_DIR);
		return 1;
	}
	if (n_executors == 0)
		printf("no executor is registered: the pull will time out after %d s\n",
		       PULL_TIMEOUT_S);
	/* O_RDWR: a MAP_SHARED mapping of an O_RDONLY fd fails. */
	fd = open("/dev/" PTASK_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("raw_ioctl: open /dev/" PTASK_DEVICE_NAME);
		return 1;
	}
	if (build(&graph, &in, &out))
		goto out;
	ctl.graph = graph;
	if (call(PTASK_IOC_GRAPH_RUN, &ctl, "GRAPH_RUN") || push_one(in))
		goto out;
	ret = pull_one(out);
	/*
	 * Let go of the graph: the last client to close it frees it and
	 * everything in it.  Closing the fd (below) would do the same.
	 */
	if (call(PTASK_IOC_GRAPH_CLOSE, &ctl, "GRAPH_CLOSE") && !ret)
		ret = 1;
out:
	close(fd);
	return ret;
}
