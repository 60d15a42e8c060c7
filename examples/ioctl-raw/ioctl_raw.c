// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ioctl-raw - the gemm chain D = (A x B) x C as a two-ptask graph built
 * with raw ioctls on /dev/ptask, with nothing but uapi/ptask.h (no
 * libptask): what libptask's kernel transport does, written out.
 *
 *   A --> [ gemm1: sgemm(A, B -> T, n) ] --T--> [ gemm2: sgemm(T, C -> D, n) ] --> D
 *   B --/             n (sticky) -/           C -/             n (sticky) -/
 *
 * Ports are opened in the kernel's parameter order (0 and 1 the input
 * matrices, 2 the output, 3 n by value), so a port's index is its
 * param_index.  The intermediate T goes from gemm1's output port straight
 * to gemm2's input: no client pulls it, and the executor is told so
 * (PTASK_INVP_TO_CLIENT is clear on gemm1's output), so it may keep T on
 * the GPU.  The datablock holding n is pushed once into each sticky port
 * and stays there for every chain.
 *
 * Kernel mode only: ptask.ko must be loaded and an executor that runs GPU
 * ptasks (ptaskd in kernel mode) registered; without one there is nothing
 * to run the kernels, and the program says so and exits 77.  With
 * --executor PROG it starts PROG itself when none is registered (with
 * the arguments after "--"), waits for it to register and stops it
 * (SIGTERM) at the end: `make demo-vm` runs it so in the test guest with
 * ptaskd's sim backend, whose CPU twin of sgemm computes D.
 *
 * Usage: ioctl-raw [--n N] [--iters N] [--timeout S] [--no-check]
 *                  [--executor PROG [-- ARGS...]]
 * Exit: 0 D matched the CPU reference (or was pulled, with --no-check),
 * 1 error or mismatch, 2 usage, 77 no /dev/ptask or no executor.
 *
 * This is the one raw-ioctl example: Documentation/uapi.md walks through
 * it, `make demo-vm` runs it, `make install` installs it.
 */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64	/* mmap offsets reach 2^48 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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
#include "examples/gemm/gemm.h"

#define EXIT_SKIP	77
#define RTOL		1e-3	/* as gemm --check; see examples/gemm/gemm.c */
#define EXEC_WAIT_MS	60000	/* for a started executor to register */

static int fd = -1;

/* One ioctl; prints what failed.  Returns 0 or -errno. */
static int call(unsigned long cmd, void *arg, const char *what)
{
	int err;

	if (ioctl(fd, cmd, arg) == 0)
		return 0;
	err = -errno;
	fprintf(stderr, "ioctl-raw: %s: %s\n", what, strerror(-err));
	return err;
}

/* Timeouts are absolute CLOCK_MONOTONIC times in ns; 0: none. */
static __u64 deadline(double seconds)
{
	struct timespec ts;

	if (seconds <= 0)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec +
	       (__u64)(seconds * 1e9);
}

/* /sys/kernel/ptask/executors, or -1 when it cannot be read. */
static long executors(void)
{
	char buf[32];
	long n = -1;
	FILE *f = fopen(PTASK_SYSFS_DIR "/executors", "r");

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%ld", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

/*
 * Start @argv[0] (with @argv) as the executor and wait until ptask.ko
 * counts it: its pid, or -errno (-ECHILD: it exited first, -ETIMEDOUT).
 */
static pid_t executor_start(char **argv)
{
	pid_t pid;
	int i;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execv(argv[0], argv);
		fprintf(stderr, "ioctl-raw: exec %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	printf("ioctl-raw: started %s (pid %d) as the executor\n", argv[0],
	       (int)pid);
	for (i = 0; i < EXEC_WAIT_MS / 10; i++) {
		if (executors() > 0)
			return pid;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -ECHILD;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -ETIMEDOUT;
}

/* SIGTERM (ptaskd finishes what it took) and wait. */
static void executor_stop(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/**
 * struct graph - the handles of the gemm graph
 * @graph: the graph
 * @mat: template of an n x n float matrix (global memory)
 * @nt: template of n, one int32 passed by value
 * @ch_a, @ch_b, @ch_c: graph inputs
 * @ch_n: graph inputs of the two sticky n ports
 * @ch_d: the graph output
 */
struct graph {
	__u32 graph, mat, nt;
	__u32 ch_a, ch_b, ch_c, ch_n[2], ch_d;
};

static int template_open(struct graph *g, const char *name, __u32 binding,
			 __u32 x, __u32 y, __u32 *out)
{
	struct ptask_template_open t = {
		.size = sizeof(t), .graph = g->graph,
		.kind = PTASK_TEMPLATE_ARRAY, .binding = binding,
		.stride = 4, .dims = { x, y, 1 },
	};
	int err;

	snprintf(t.name, sizeof(t.name), "%s", name);
	err = call(PTASK_IOC_TEMPLATE_OPEN, &t, "TEMPLATE_OPEN");
	*out = err ? 0 : t.handle;
	return err;
}

static int port_open(__u32 ptask, const char *name, __u32 kind, __u32 tmpl,
		     __u32 param, __u32 *out)
{
	struct ptask_port_open p = {
		.size = sizeof(p), .ptask = ptask, .kind = kind,
		.template = tmpl, .param_index = param,
	};
	int err;

	snprintf(p.name, sizeof(p.name), "%s", name);
	err = call(PTASK_IOC_PORT_OPEN, &p, "PORT_OPEN");
	*out = err ? 0 : p.handle;
	return err;
}

static int channel_open(struct graph *g, const char *name, __u32 src,
			__u32 dst, __u32 tmpl, __u32 *out)
{
	struct ptask_channel_open c = {
		.size = sizeof(c), .graph = g->graph, .src = src, .dst = dst,
		.capacity = 2, .template = tmpl,
	};
	int err;

	snprintf(c.name, sizeof(c.name), "%s", name);
	err = call(PTASK_IOC_CHANNEL_OPEN, &c, "CHANNEL_OPEN");
	*out = err ? 0 : c.handle;
	return err;
}

/* The ports of one sgemm ptask, in parameter order. */
struct node {
	__u32 ptask, in0, in1, out, n;
};

static int node_open(struct graph *g, const char *name, int n,
		     struct node *nd)
{
	struct ptask_ptask_open p = {
		.size = sizeof(p), .graph = g->graph, .kind = PTASK_KIND_GPU,
		.nports = 4, .code = (__u64)(unsigned long)gemm_ptx,
		.code_len = (__u32)gemm_ptx_len,
	};
	struct ptask_geometry geo = {
		.size = sizeof(geo),
		.grid = { gemm_grid(n), gemm_grid(n), 1 },
		.block = { GEMM_TILE, GEMM_TILE, 1 },
	};
	char pn[PTASK_NAME_MAX];
	int err;

	snprintf(p.entry, sizeof(p.entry), "%s", GEMM_ENTRY);
	snprintf(p.name, sizeof(p.name), "%s", name);
	err = call(PTASK_IOC_PTASK_OPEN, &p, "PTASK_OPEN");
	if (err)
		return err;
	nd->ptask = geo.ptask = p.handle;
	snprintf(pn, sizeof(pn), "%s_a", name);
	err = port_open(p.handle, pn, PTASK_PORT_INPUT, g->mat, 0, &nd->in0);
	snprintf(pn, sizeof(pn), "%s_b", name);
	err = err ? err : port_open(p.handle, pn, PTASK_PORT_INPUT, g->mat, 1,
				    &nd->in1);
	snprintf(pn, sizeof(pn), "%s_c", name);
	err = err ? err : port_open(p.handle, pn, PTASK_PORT_OUTPUT, g->mat, 2,
				    &nd->out);
	snprintf(pn, sizeof(pn), "%s_n", name);
	err = err ? err : port_open(p.handle, pn, PTASK_PORT_STICKY, g->nt, 3,
				    &nd->n);
	return err ? err : call(PTASK_IOC_PTASK_SET_GEOMETRY, &geo,
				"PTASK_SET_GEOMETRY");
}

/* The whole graph, run.  On failure the caller closes the fd. */
static int build(struct graph *g, int n)
{
	struct ptask_graph_open go = {
		.size = sizeof(go), .flags = PTASK_GRAPH_CREATE, .mode = 0600,
		.name = "",		/* anonymous: nobody else can open it */
	};
	struct ptask_graph_ctl run = { .size = sizeof(run) };
	struct node n1, n2;
	__u32 ch_t;
	int err;

	err = call(PTASK_IOC_GRAPH_OPEN, &go, "GRAPH_OPEN");
	if (err)
		return err;
	g->graph = run.graph = go.handle;
	err = template_open(g, "matrix", PTASK_BIND_GLOBAL, n, n, &g->mat);
	err = err ? err : template_open(g, "n", PTASK_BIND_PARAM, 1, 1, &g->nt);
	err = err ? err : node_open(g, "gemm1", n, &n1);
	err = err ? err : node_open(g, "gemm2", n, &n2);
	err = err ? err : channel_open(g, "A", 0, n1.in0, g->mat, &g->ch_a);
	err = err ? err : channel_open(g, "B", 0, n1.in1, g->mat, &g->ch_b);
	err = err ? err : channel_open(g, "n1", 0, n1.n, g->nt, &g->ch_n[0]);
	err = err ? err : channel_open(g, "T", n1.out, n2.in0, g->mat, &ch_t);
	err = err ? err : channel_open(g, "C", 0, n2.in1, g->mat, &g->ch_c);
	err = err ? err : channel_open(g, "n2", 0, n2.n, g->nt, &g->ch_n[1]);
	err = err ? err : channel_open(g, "D", n2.out, 0, g->mat, &g->ch_d);
	return err ? err : call(PTASK_IOC_GRAPH_RUN, &run, "GRAPH_RUN");
}

/**
 * struct block - a datablock this client holds, mapped
 * @handle: its handle
 * @bytes: its size
 * @mem: the mapping (shared with the executor: no copies)
 */
struct block {
	__u32 handle;
	__u64 bytes;
	void *mem;
};

static void block_release(struct block *b)
{
	struct ptask_datablock_release rel = {
		.size = sizeof(rel), .handle = b->handle,
	};

	if (b->mem)
		munmap(b->mem, b->bytes);
	if (b->handle)
		call(PTASK_IOC_DATABLOCK_RELEASE, &rel, "DATABLOCK_RELEASE");
	memset(b, 0, sizeof(*b));
}

static int block_map(struct block *b, __u64 mmap_offset)
{
	b->mem = mmap(NULL, b->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      (off_t)mmap_offset);
	if (b->mem != MAP_FAILED)
		return 0;
	b->mem = NULL;
	perror("ioctl-raw: mmap");
	return -errno;
}

/* A datablock of template @tmpl filled with @bytes from @src. */
static int block_make(__u32 tmpl, __u64 records, const void *src,
		      size_t bytes, struct block *b)
{
	struct ptask_datablock_create dc = {
		.size = sizeof(dc), .template = tmpl, .records = records,
	};
	int err;

	err = call(PTASK_IOC_DATABLOCK_CREATE, &dc, "DATABLOCK_CREATE");
	if (err)
		return err;
	b->handle = dc.handle;
	b->bytes = dc.bytes;
	if (dc.bytes != bytes) {
		fprintf(stderr, "ioctl-raw: datablock of %llu bytes, want %zu\n",
			(unsigned long long)dc.bytes, bytes);
		block_release(b);
		return -EPROTO;
	}
	err = block_map(b, dc.mmap_offset);
	if (err) {
		block_release(b);
		return err;
	}
	memcpy(b->mem, src, bytes);
	return 0;
}

static int push(__u32 channel, const struct block *b, double timeout_s)
{
	struct ptask_push p = {
		.size = sizeof(p), .channel = channel, .datablock = b->handle,
		.timeout_ns = deadline(timeout_s),
	};

	return call(PTASK_IOC_PUSH, &p, "PUSH");
}

/* Pull one datablock from @channel into @b (held and mapped). */
static int pull(__u32 channel, double timeout_s, struct block *b)
{
	struct ptask_pull p = {
		.size = sizeof(p), .channel = channel,
		.timeout_ns = deadline(timeout_s),
	};
	int err;

	if (ioctl(fd, PTASK_IOC_PULL, &p)) {
		err = -errno;
		if (err == -ETIMEDOUT)
			fprintf(stderr, "ioctl-raw: no result within %g s: is the executor running GPU ptasks (ptaskd)?\n",
				timeout_s);
		else
			fprintf(stderr, "ioctl-raw: PULL: %s\n", strerror(-err));
		return err;
	}
	b->handle = p.datablock;
	b->bytes = p.bytes;
	err = block_map(b, p.mmap_offset);
	if (err)
		block_release(b);
	return err;
}

struct opts {
	int n;
	int iters;
	int check;
	double timeout_s;
	char **executor;	/* PROG and its arguments, NULL-ended; or NULL */
};

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "n", required_argument, NULL, 'n' },
		{ "iters", required_argument, NULL, 'i' },
		{ "timeout", required_argument, NULL, 't' },
		{ "no-check", no_argument, NULL, 'x' },
		{ "executor", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end = NULL, *prog = NULL;
	int c, i;

	*o = (struct opts){ .n = 256, .iters = 3, .check = 1, .timeout_s = 60 };
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			/* a matrix must fit one datablock (8192^2 floats) */
			o->n = (int)strtol(optarg, &end, 10);
			if (*end || o->n < 1 || o->n > 8192)
				goto bad;
			break;
		case 'i':
			o->iters = (int)strtol(optarg, &end, 10);
			if (*end || o->iters < 1 || o->iters > 100000)
				goto bad;
			break;
		case 't':
			o->timeout_s = strtod(optarg, &end);
			if (*end || !(o->timeout_s >= 0 && o->timeout_s < 1e6))
				goto bad;
			break;
		case 'x':
			o->check = 0;
			break;
		case 'e':
			prog = optarg;
			break;
		case 'h':
			printf("usage: ioctl-raw [--n N] [--iters N] [--timeout S] [--no-check]\n"
			       "                 [--executor PROG [-- ARGS...]]\n");
			exit(0);
		default:
			return -EINVAL;
		}
	}
	if (!prog)
		return optind == argc ? 0 : -EINVAL;
	/* PROG, then what followed "--" (getopt moved it to the end) */
	o->executor = calloc((size_t)(argc - optind + 2), sizeof(char *));
	if (!o->executor)
		return -ENOMEM;
	o->executor[0] = prog;
	for (i = optind; i < argc; i++)
		o->executor[i - optind + 1] = argv[i];
	return 0;
bad:
	fprintf(stderr, "ioctl-raw: bad value '%s'\n", optarg);
	return -EINVAL;
}

/* --iters chains; compares the last D with @ref (NULL: no check). */
static int chains(const struct opts *o, const struct graph *g,
		  struct block in[3], const float *ref)
{
	struct block d = { 0 };
	double t0, ms;
	int i, err = 0;

	for (i = 0; i < o->iters && !err; i++) {
		block_release(&d);
		t0 = gemm_now_ms();
		err = push(g->ch_a, &in[0], o->timeout_s);
		err = err ? err : push(g->ch_b, &in[1], o->timeout_s);
		err = err ? err : push(g->ch_c, &in[2], o->timeout_s);
		err = err ? err : pull(g->ch_d, o->timeout_s, &d);
		if (err)
			break;
		ms = gemm_now_ms() - t0;
		printf("chain %d: %.3f ms, %.1f GFLOP/s\n", i + 1, ms,
		       4.0 * o->n * o->n * o->n / (ms * 1e6));
		if (d.bytes != gemm_bytes(o->n)) {
			fprintf(stderr, "ioctl-raw: pulled %llu bytes, want %zu\n",
				(unsigned long long)d.bytes, gemm_bytes(o->n));
			err = -EPROTO;
		}
	}
	if (!err && ref) {
		double max_rel;
		size_t bad = gemm_compare(d.mem, ref, o->n, RTOL, &max_rel);

		printf("D %s the CPU reference (worst relative error %.3g, tolerance %g)\n",
		       bad ? "DOES NOT match" : "matches", max_rel, RTOL);
		if (bad)
			err = -EDOM;
	}
	block_release(&d);
	return err;
}

/* Inputs, reference, datablocks; then the chains. */
static int run(const struct opts *o, const struct graph *g)
{
	const size_t bytes = gemm_bytes(o->n);
	const __s32 n32 = o->n;
	float *m[3], *t = NULL, *ref = NULL;
	struct block in[3] = { { 0 } }, nb = { 0 };
	int i, err = -ENOMEM;

	for (i = 0; i < 3; i++) {
		m[i] = malloc(bytes);
		if (m[i])
			gemm_fill(m[i], o->n, 1000 * (i + 1) + o->n);
	}
	if (!m[0] || !m[1] || !m[2])
		goto out;
	if (o->check) {
		t = malloc(bytes);
		ref = malloc(bytes);
		if (!t || !ref)
			goto out;
		err = gemm_ref(m[0], m[1], t, o->n, 4);
		err = err ? err : gemm_ref(t, m[2], ref, o->n, 4);
		if (err)
			goto out;
	}
	for (i = 0; i < 3; i++) {
		err = block_make(g->mat, (__u64)o->n * o->n, m[i], bytes, &in[i]);
		if (err)
			goto out;
	}
	err = block_make(g->nt, 1, &n32, sizeof(n32), &nb);
	/* one datablock in both sticky ports: datablocks are shared */
	err = err ? err : push(g->ch_n[0], &nb, o->timeout_s);
	err = err ? err : push(g->ch_n[1], &nb, o->timeout_s);
	err = err ? err : chains(o, g, in, ref);
out:
	block_release(&nb);
	for (i = 0; i < 3; i++)
		block_release(&in[i]);
	free(ref);
	free(t);
	for (i = 0; i < 3; i++)
		free(m[i]);
	return err;
}

int main(int argc, char **argv)
{
	struct ptask_graph_ctl ctl = { .size = sizeof(ctl) };
	struct graph g = { 0 };
	pid_t exec_pid = 0;
	struct opts o;
	long nexec;
	int err;

	if (parse_args(argc, argv, &o))
		return 2;
	nexec = executors();
	if (nexec < 0) {
		printf("ioctl-raw: skipped: cannot read %s/executors (is ptask.ko loaded?)\n",
		       PTASK_SYSFS_DIR);
		return EXIT_SKIP;
	}
	if (nexec == 0 && o.executor) {
		exec_pid = executor_start(o.executor);
		if (exec_pid < 0) {
			fprintf(stderr, "ioctl-raw: executor %s did not register: %s\n",
				o.executor[0], strerror((int)-exec_pid));
			return 1;
		}
		nexec = executors();
	}
	free(o.executor);
	if (nexec == 0) {
		printf("ioctl-raw: skipped: no executor is registered with ptask.ko (start ptaskd)\n");
		return EXIT_SKIP;
	}
	/* O_RDWR: a MAP_SHARED mapping of an O_RDONLY fd fails */
	fd = open("/dev/" PTASK_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("ioctl-raw: open /dev/" PTASK_DEVICE_NAME);
		err = errno;
		if (exec_pid > 0)
			executor_stop(exec_pid);
		return err == ENOENT ? EXIT_SKIP : 1;
	}
	printf("ioctl-raw: D = (A x B) x C, n = %d, %d chains\n", o.n, o.iters);
	err = build(&g, o.n);
	err = err ? err : run(&o, &g);
	if (g.graph) {
		/* the last client to let go frees the graph and all in it */
		ctl.graph = g.graph;
		call(PTASK_IOC_GRAPH_CLOSE, &ctl, "GRAPH_CLOSE");
	}
	close(fd);
	if (exec_pid > 0)
		executor_stop(exec_pid);
	return err ? 1 : 0;
}
