// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * roundtrip - push -> pull of a 4 KiB datablock through a one-ptask graph
 * executed by the test executor (a second process), against a pipe round
 * trip of 4 KiB through a second process that copies it back.  All run in
 * the same guest in the same run; the ratios are what count (the guest is
 * software-emulated, so absolute times are not a machine's).
 *
 * Two executor modes: "copy" (the executor maps the input, creates,
 * maps and fills a new output datablock: the work a real executor does
 * for a CPU ptask) and "pass" (test_executor -p emits the input datablock
 * itself: what is left is the kernel's dispatch, two process wake-ups and
 * four ioctls).
 *
 * Usage: roundtrip [ITERATIONS] (default 2000, after 100 warm-up rounds)
 * Output: one line per method with median and 99th percentile, then
 * "ratio ptask-copy/pipe ..." and "ratio ptask-pass/pipe ...".
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

#define BYTES	4096
#define WARMUP	100

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

struct stats {
	double median_us, p99_us;
};

static struct stats summarize(__u64 *ns, int n)
{
	struct stats s;

	qsort(ns, n, sizeof(*ns), cmp_u64);
	s.median_us = ns[n / 2] / 1e3;
	s.p99_us = ns[(n * 99) / 100] / 1e3;
	return s;
}

static int ioc(int fd, unsigned long cmd, void *arg, const char *what)
{
	if (ioctl(fd, cmd, arg) == 0)
		return 0;
	fprintf(stderr, "roundtrip: %s: %s\n", what, strerror(errno));
	return -1;
}

/* graph: input channel -> [copy ptask] -> output channel; returns handles. */
static int build_graph(int fd, __u32 *in, __u32 *out, __u32 *graph)
{
	struct ptask_graph_open g = {
		.size = sizeof(g), .flags = PTASK_GRAPH_CREATE, .mode = 0600,
	};
	struct ptask_ptask_open p = {
		.size = sizeof(p), .kind = PTASK_KIND_CPU, .nports = 2,
	};
	struct ptask_port_open pi = { .size = sizeof(pi), .kind = PTASK_PORT_INPUT };
	struct ptask_port_open po = { .size = sizeof(po), .kind = PTASK_PORT_OUTPUT };
	struct ptask_channel_open ci = { .size = sizeof(ci), .capacity = 1 };
	struct ptask_channel_open co = { .size = sizeof(co), .capacity = 1 };
	struct ptask_graph_ctl run = { .size = sizeof(run) };

	if (ioc(fd, PTASK_IOC_GRAPH_OPEN, &g, "graph"))
		return -1;
	p.graph = ci.graph = co.graph = run.graph = *graph = g.handle;
	if (ioc(fd, PTASK_IOC_PTASK_OPEN, &p, "ptask"))
		return -1;
	pi.ptask = po.ptask = p.handle;
	if (ioc(fd, PTASK_IOC_PORT_OPEN, &pi, "port") ||
	    ioc(fd, PTASK_IOC_PORT_OPEN, &po, "port"))
		return -1;
	ci.dst = pi.handle;
	co.src = po.handle;
	if (ioc(fd, PTASK_IOC_CHANNEL_OPEN, &ci, "channel") ||
	    ioc(fd, PTASK_IOC_CHANNEL_OPEN, &co, "channel") ||
	    ioc(fd, PTASK_IOC_GRAPH_RUN, &run, "run"))
		return -1;
	*in = ci.handle;
	*out = co.handle;
	return 0;
}

static int ptask_rounds(__u64 *ns, int n, const char *exec_flag)
{
	const char *exe = getenv("PTASK_TEST_EXECUTOR");
	struct ptask_datablock_create db = { .size = sizeof(db), .bytes = BYTES };
	struct ptask_datablock_release rel = { .size = sizeof(rel) };
	struct ptask_push push = { .size = sizeof(push) };
	struct ptask_pull pull = { .size = sizeof(pull) };
	__u32 in, out, graph;
	int fd, i, err = -1, status;
	unsigned char *p;
	pid_t pid;

	fd = open("/dev/ptask", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("roundtrip: /dev/ptask");
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		exe = exe ? exe : "/bin/test_executor";
		execl(exe, exe, exec_flag, (char *)NULL);
		_exit(127);
	}
	if (build_graph(fd, &in, &out, &graph) ||
	    ioc(fd, PTASK_IOC_DATABLOCK_CREATE, &db, "datablock"))
		goto out;
	p = mmap(NULL, BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 db.mmap_offset);
	if (p == MAP_FAILED)
		goto out;
	memset(p, 0x5a, BYTES);
	push.channel = in;
	push.datablock = db.handle;
	pull.channel = out;
	for (i = -WARMUP; i < n; i++) {
		__u64 t0 = now_ns();

		pull.timeout_ns = t0 + 10ull * 1000000000ull;
		if (ioc(fd, PTASK_IOC_PUSH, &push, "push") ||
		    ioc(fd, PTASK_IOC_PULL, &pull, "pull"))
			goto out_unmap;
		rel.handle = pull.datablock;
		if (ioc(fd, PTASK_IOC_DATABLOCK_RELEASE, &rel, "release"))
			goto out_unmap;
		if (i >= 0)
			ns[i] = now_ns() - t0;
	}
	err = 0;
out_unmap:
	munmap(p, BYTES);
out:
	close(fd);
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	return err;
}

static int full_io(ssize_t (*op)(int, void *, size_t), int fd, void *buf)
{
	size_t done = 0;

	while (done < BYTES) {
		ssize_t r = op(fd, (char *)buf + done, BYTES - done);

		if (r <= 0)
			return -1;
		done += r;
	}
	return 0;
}

static ssize_t write_op(int fd, void *buf, size_t len)
{
	return write(fd, buf, len);
}

static int pipe_rounds(__u64 *ns, int n)
{
	static unsigned char buf[BYTES], echo[BYTES];
	int to_child[2], to_parent[2], i, status;
	pid_t pid;

	if (pipe(to_child) || pipe(to_parent))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		/* The executor's part: read, copy to a fresh buffer, send. */
		while (!full_io(read, to_child[0], buf)) {
			memcpy(echo, buf, BYTES);
			if (full_io(write_op, to_parent[1], echo))
				break;
		}
		_exit(0);
	}
	close(to_child[0]);
	close(to_parent[1]);
	memset(buf, 0x5a, BYTES);
	for (i = -WARMUP; i < n; i++) {
		__u64 t0 = now_ns();

		if (full_io(write_op, to_child[1], buf) ||
		    full_io(read, to_parent[0], echo))
			return -1;
		if (i >= 0)
			ns[i] = now_ns() - t0;
	}
	close(to_child[1]);
	close(to_parent[0]);
	waitpid(pid, &status, 0);
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	struct stats sc, sp, sq;
	__u64 *ns;

	if (n < 100) {
		fprintf(stderr, "usage: roundtrip [ITERATIONS >= 100]\n");
		return 2;
	}
	ns = calloc(n, sizeof(*ns));
	if (!ns)
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("roundtrip: %d rounds of %d bytes each way, %d warm-up\n", n,
	       BYTES, WARMUP);
	if (ptask_rounds(ns, n, (char *)NULL))
		return 1;
	sc = summarize(ns, n);
	printf("ptask push->pull, copying executor:   median %7.1f us  p99 %7.1f us\n",
	       sc.median_us, sc.p99_us);
	if (ptask_rounds(ns, n, "-p"))
		return 1;
	sp = summarize(ns, n);
	printf("ptask push->pull, pass-through exec.: median %7.1f us  p99 %7.1f us\n",
	       sp.median_us, sp.p99_us);
	if (pipe_rounds(ns, n))
		return 1;
	sq = summarize(ns, n);
	printf("pipe write->read, echo process:       median %7.1f us  p99 %7.1f us\n",
	       sq.median_us, sq.p99_us);
	printf("ratio ptask-copy/pipe median=%.2f p99=%.2f\n",
	       sc.median_us / sq.median_us, sc.p99_us / sq.p99_us);
	printf("ratio ptask-pass/pipe median=%.2f p99=%.2f\n",
	       sp.median_us / sq.median_us, sp.p99_us / sq.p99_us);
	free(ns);
	return 0;
}
