// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gpu_raw - the baseline that ptaskd's CUDA path is measured against: the
 * driver API called directly (loaded with dlopen by the common library's
 * shim, common/cuda_dl.h and cuda_dev.h), no ptaskd, no backend.
 *
 *   gpu_raw KERNELS.PTX [RUNS]     (tests/gpu/kernels.cu built to PTX)
 *
 * Prints, one "key=value" a line:
 *   machine, gpu, driver          where it ran
 *   raw_launch_sync_us            median of RUNS (default 5000) launches of
 *                                 the empty kernel, each followed by
 *                                 cuStreamSynchronize, after 200 warm-ups
 *   pinned_h2d_gbps               64 MiB cuMemcpyHtoD from cuMemAllocHost
 *                                 memory, median of 20
 *   pinned_d2h_gbps               the same, device to host
 *   registered_memfd_h2d_gbps     64 MiB from a memfd mapping pinned with
 *                                 cuMemHostRegister (ptaskd's arenas)
 *   pageable_h2d_gbps             64 MiB from malloc'd (touched) memory
 *   raw_b2b_threads_N_per_s       empty-kernel launches a second from N
 *                                 threads at once (N = 1, 2, 4) into the
 *                                 one primary context, each on its own
 *                                 stream, B2B_BATCH launches back to back
 *                                 then a synchronize, B2B_BATCHES times:
 *                                 what more than one launching thread a
 *                                 device (ptaskd's workers) could reach
 *   lone_<path>_us, lone_<path>_<call>_cpu_us
 *                                 one small invocation's GPU path, each way
 *                                 ptaskd could take it (load_inc reading a
 *                                 pinned word and writing another, as an
 *                                 input and output read and written in
 *                                 place): the median round from the launch
 *                                 call to the host seeing its completion,
 *                                 and the median time spent in each driver
 *                                 call.  Paths: launch_sync (launch +
 *                                 cuStreamSynchronize), launch_fence (launch
 *                                 + cuStreamWriteValue32 of a ticket, host
 *                                 polling it), launch_poll (the host polling
 *                                 the output itself), graph_fence (a
 *                                 one-kernel-node graph replayed, then the
 *                                 fence), graph_patch_fence (the same with
 *                                 the node's output patched every round),
 *                                 graph_sync, capture_fence (kernel and
 *                                 ticket write captured as one graph: a
 *                                 fixed value, reset by the host each round)
 *   chain<K>_<way>_us             a K-deep chain of load_inc kernel nodes
 *                                 as one CUDA graph, replayed: the median
 *                                 round from cuGraphLaunch to the
 *                                 synchronize's return, each way a
 *                                 segment's graph could be kept: dev (the
 *                                 links and both ends in device memory),
 *                                 host (the first input read from and the
 *                                 last output written to pinned host
 *                                 words, as a segment's ends in place),
 *                                 patch_last (host, the last node's output
 *                                 patched to another word every round:
 *                                 what a fresh output datablock costs),
 *                                 patch_ends (both ends patched every
 *                                 round), two_execs (host, two
 *                                 instantiations of the graph set up for
 *                                 two output words and replayed in turn:
 *                                 no patching), captured (dev's chain
 *                                 recorded by stream capture instead of
 *                                 built node by node), packed4 and
 *                                 packed16 (dev with its words 4 or 16
 *                                 bytes apart instead of 256)
 *   chain<K>_streams<N>_us        dev's chain captured and replayed, run
 *                                 first, after N other streams (0..3)
 *                                 launched a kernel in the context
 *                                 (gstreams: launched the chain's graph,
 *                                 with GPU_RAW_CHAIN_OTHER=graph; kernel,
 *                                 the default, or unset: a kernel; any
 *                                 other value is refused, exit 2)
 * GB/s are 10^9 bytes a second.  Exit 77 when there is no GPU.
 *
 * Built by tests/gpu/gpu.mk (build/gpu/gpu_raw); not a guest benchmark.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memfd_create */
#endif
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/cuda_dev.h"

#define COPY_BYTES	(64u << 20)
#define COPY_RUNS	20
#define WARMUP		200
#define B2B_BATCH	64
#define B2B_BATCHES	500

static struct pc_cuda_dev gpu;
static struct pc_cuda_api *const cu = &gpu.cu;

static int ok(CUresult r, const char *what)
{
	if (r == CUDA_SUCCESS)
		return 1;
	fprintf(stderr, "gpu_raw: %s: %s (%d)\n", what, pc_cuda_errname(cu, r),
		r);
	return 0;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0) {
		rewind(f);
		buf = calloc(1, (size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
	}
	fclose(f);
	return buf;
}

/* median GB/s of COPY_RUNS synchronous copies (h2d, or d2h) */
static double copy_gbps(CUdeviceptr d, void *host, int h2d)
{
	double t[COPY_RUNS], t0;
	CUresult r;
	int i;

	for (i = -2; i < COPY_RUNS; i++) {	/* two warm-ups */
		t0 = now_us();
		r = h2d ? cu->MemcpyHtoD(d, host, COPY_BYTES) :
			  cu->MemcpyDtoH(host, d, COPY_BYTES);
		if (!ok(r, h2d ? "cuMemcpyHtoD" : "cuMemcpyDtoH"))
			return -1;
		if (i >= 0)
			t[i] = now_us() - t0;
	}
	return COPY_BYTES / (median(t, COPY_RUNS) * 1e3);
}

static int bench_launch(const char *ptx, int runs)
{
	CUmodule mod;
	CUfunction fn;
	CUstream s;
	double *t, t0;
	int i;

	t = calloc((size_t)runs, sizeof(*t));
	if (!t || !ok(cu->ModuleLoadDataEx(&mod, ptx, 0, NULL, NULL), "cuModuleLoadDataEx") ||
	    !ok(cu->ModuleGetFunction(&fn, mod, "empty"), "cuModuleGetFunction") ||
	    !ok(cu->StreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate"))
		return -1;
	for (i = -WARMUP; i < runs; i++) {
		t0 = now_us();
		if (!ok(cu->LaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL),
			"cuLaunchKernel") ||
		    !ok(cu->StreamSynchronize(s), "cuStreamSynchronize"))
			return -1;
		if (i >= 0)
			t[i] = now_us() - t0;
	}
	printf("raw_launch_sync_us=%.2f\n", median(t, runs));
	free(t);
	cu->StreamDestroy(s);
	cu->ModuleUnload(mod);
	return 0;
}

/* One launching thread of bench_b2b_threads. */
struct b2b_thread {
	pthread_t tid;
	CUfunction fn;
	pthread_barrier_t *start;
	int failed;
};

static void *b2b_run(void *arg)
{
	struct b2b_thread *t = arg;
	CUstream s = NULL;
	int b, i;

	t->failed = !ok(cu->CtxSetCurrent(gpu.ctx), "cuCtxSetCurrent") ||
		    !ok(cu->StreamCreate(&s, CU_STREAM_NON_BLOCKING),
			"cuStreamCreate");
	pthread_barrier_wait(t->start);
	for (b = 0; !t->failed && b < B2B_BATCHES; b++) {
		for (i = 0; !t->failed && i < B2B_BATCH; i++)
			t->failed = !ok(cu->LaunchKernel(t->fn, 1, 1, 1, 1, 1, 1,
							 0, s, NULL, NULL),
					"cuLaunchKernel");
		if (!t->failed)
			t->failed = !ok(cu->StreamSynchronize(s),
					"cuStreamSynchronize");
	}
	pthread_barrier_wait(t->start);
	if (s)
		cu->StreamDestroy(s);
	return NULL;
}

/* raw_b2b_threads_N_per_s for N = 1, 2, 4 (see the top of the file). */
static int bench_b2b_threads(const char *ptx)
{
	struct b2b_thread t[4];
	pthread_barrier_t start;
	CUmodule mod;
	CUfunction fn;
	double t0 = 0, t1;
	int n, i, failed = 0;

	if (!ok(cu->ModuleLoadDataEx(&mod, ptx, 0, NULL, NULL), "cuModuleLoadDataEx") ||
	    !ok(cu->ModuleGetFunction(&fn, mod, "empty"), "cuModuleGetFunction"))
		return -1;
	for (n = 1; n <= 4 && !failed; n *= 2) {
		pthread_barrier_init(&start, NULL, (unsigned int)n + 1);
		for (i = 0; i < n; i++) {
			t[i] = (struct b2b_thread){ .fn = fn, .start = &start };
			if (pthread_create(&t[i].tid, NULL, b2b_run, &t[i])) {
				fprintf(stderr, "gpu_raw: pthread_create failed\n");
				return -1;
			}
		}
		pthread_barrier_wait(&start);
		t0 = now_us();
		pthread_barrier_wait(&start);
		t1 = now_us();
		for (i = 0; i < n; i++) {
			pthread_join(t[i].tid, NULL);
			failed |= t[i].failed;
		}
		pthread_barrier_destroy(&start);
		if (!failed)
			printf("raw_b2b_threads_%d_per_s=%.0f\n", n,
			       (double)n * B2B_BATCHES * B2B_BATCH * 1e6 /
			       (t1 - t0));
	}
	cu->ModuleUnload(mod);
	return failed ? -1 : 0;
}

static int bench_copies(void)
{
	void *pinned = NULL, *pageable = NULL, *mapped = MAP_FAILED;
	CUdeviceptr d = 0;
	int fd = -1, err = -1;

	if (!ok(cu->MemAlloc(&d, COPY_BYTES), "cuMemAlloc") ||
	    !ok(cu->MemAllocHost(&pinned, COPY_BYTES), "cuMemAllocHost"))
		goto out;
	memset(pinned, 0x5a, COPY_BYTES);
	printf("pinned_h2d_gbps=%.1f\n", copy_gbps(d, pinned, 1));
	printf("pinned_d2h_gbps=%.1f\n", copy_gbps(d, pinned, 0));

	fd = memfd_create("gpu_raw", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, COPY_BYTES) ||
	    (mapped = mmap(NULL, COPY_BYTES, PROT_READ | PROT_WRITE,
			   MAP_SHARED, fd, 0)) == MAP_FAILED) {
		fprintf(stderr, "gpu_raw: memfd: %s\n", strerror(errno));
		goto out;
	}
	memset(mapped, 0x5a, COPY_BYTES);
	if (!ok(cu->MemHostRegister(mapped, COPY_BYTES, CU_MEMHOSTREGISTER_PORTABLE),
		"cuMemHostRegister"))
		goto out;
	printf("registered_memfd_h2d_gbps=%.1f\n", copy_gbps(d, mapped, 1));
	ok(cu->MemHostUnregister(mapped), "cuMemHostUnregister");

	pageable = malloc(COPY_BYTES);
	if (!pageable)
		goto out;
	memset(pageable, 0x5a, COPY_BYTES);
	printf("pageable_h2d_gbps=%.1f\n", copy_gbps(d, pageable, 1));
	err = 0;
out:
	free(pageable);
	if (mapped != MAP_FAILED)
		munmap(mapped, COPY_BYTES);
	if (fd >= 0)
		close(fd);
	if (pinned)
		cu->MemFreeHost(pinned);
	if (d)
		cu->MemFree(d);
	return err;
}

/*
 * One small invocation's GPU path, each way ptaskd could take it: what
 * is left of a round when nothing but the driver is in it.  in, out and
 * the fence word are pinned host words the kernel reads and writes in
 * place (ptaskd's in-place inputs and outputs).
 */
enum lone_call { LC_PATCH, LC_LAUNCH, LC_FENCE, LC_WAIT, LC_N };
static const char *const lone_call_name[LC_N] = {
	"patch", "launch", "fence", "wait",
};

struct lone {
	CUfunction fn;
	CUstream s;
	volatile uint32_t *w;	/* [0] in, [1] [2] outs, [16] fence */
	CUdeviceptr dw;
	CUgraph graph;		/* kept: its nodes name what a patch changes */
	CUgraphExec exec;
	CUgraphNode node;
	int runs;
	double *t, *c[LC_N];
};

#define LONE_IN		0
#define LONE_OUT	1
#define LONE_FENCE	16

enum lone_path {
	LP_LAUNCH_SYNC, LP_LAUNCH_FENCE, LP_LAUNCH_POLL, LP_GRAPH_FENCE,
	LP_GRAPH_PATCH_FENCE, LP_GRAPH_SYNC, LP_CAPTURE_FENCE,
};

static void lone_params(struct lone *L, CUDA_KERNEL_NODE_PARAMS *p,
			void **args, CUdeviceptr *in, CUdeviceptr *out, int o)
{
	*in = L->dw + LONE_IN * 4;
	*out = L->dw + (LONE_OUT + o) * 4;
	args[0] = in;
	args[1] = out;
	memset(p, 0, sizeof(*p));
	p->func = L->fn;
	p->gridDimX = p->gridDimY = p->gridDimZ = 1;
	p->blockDimX = p->blockDimY = p->blockDimZ = 1;
	p->kernelParams = args;
}

static int lone_graph(struct lone *L)
{
	CUDA_KERNEL_NODE_PARAMS p;
	CUdeviceptr in, out;
	void *args[2];

	lone_params(L, &p, args, &in, &out, 0);
	if (!ok(cu->GraphCreate(&L->graph, 0), "cuGraphCreate") ||
	    !ok(cu->GraphAddKernelNode(&L->node, L->graph, NULL, 0, &p),
		"cuGraphAddKernelNode") ||
	    !ok(cu->GraphInstantiate(&L->exec, L->graph, 0), "cuGraphInstantiate"))
		return -1;
	return 0;
}

static int lone_capture(struct lone *L)
{
	CUdeviceptr in, out;
	void *args[2];
	CUDA_KERNEL_NODE_PARAMS p;

	lone_params(L, &p, args, &in, &out, 0);
	if (!ok(cu->StreamBeginCapture(L->s, 2 /* RELAXED */),
		"cuStreamBeginCapture") ||
	    !ok(cu->LaunchKernel(L->fn, 1, 1, 1, 1, 1, 1, 0, L->s, args, NULL),
		"cuLaunchKernel") ||
	    !ok(cu->StreamWriteValue32(L->s, L->dw + LONE_FENCE * 4, 1, 0),
		"cuStreamWriteValue32 (captured)") ||
	    !ok(cu->StreamEndCapture(L->s, &L->graph), "cuStreamEndCapture") ||
	    !ok(cu->GraphInstantiate(&L->exec, L->graph, 0), "cuGraphInstantiate"))
		return -1;
	return 0;
}

/* spin until *w == want; a second without it is an error, not a hang */
static int lone_spin(volatile uint32_t *w, uint32_t want)
{
	unsigned long n = 0;
	double t0 = 0;

	while (*w != want)
		if (++n % 4096 == 0) {
			if (!t0)
				t0 = now_us();
			else if (now_us() - t0 > 1e6)
				return -1;
		}
	return 0;
}

static inline double lone_mark(double *t0, double *slot)
{
	double t = now_us();

	*slot = t - *t0;
	*t0 = t;
	return t;
}

static int lone_round(struct lone *L, enum lone_path path, int i,
		      uint32_t v, double *c)
{
	CUDA_KERNEL_NODE_PARAMS p;
	CUdeviceptr in, out;
	void *args[2];
	int o = path == LP_GRAPH_PATCH_FENCE ? (i & 1) : 0;
	uint32_t ticket = (uint32_t)i + 100000u * (uint32_t)path + 2;
	int spun = 0;
	double t0;

	lone_params(L, &p, args, &in, &out, o);
	L->w[LONE_IN] = v;
	L->w[LONE_OUT + o] = 0;
	if (path == LP_CAPTURE_FENCE)
		L->w[LONE_FENCE] = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	t0 = now_us();
	c[LC_PATCH] = 0;
	if (path == LP_GRAPH_PATCH_FENCE) {
		if (!ok(cu->GraphExecKernelNodeSetParams(L->exec, L->node, &p),
			"cuGraphExecKernelNodeSetParams"))
			return -1;
		lone_mark(&t0, &c[LC_PATCH]);
	}
	if (path <= LP_LAUNCH_POLL) {
		if (!ok(cu->LaunchKernel(L->fn, 1, 1, 1, 1, 1, 1, 0, L->s, args,
					 NULL), "cuLaunchKernel"))
			return -1;
	} else if (!ok(cu->GraphLaunch(L->exec, L->s), "cuGraphLaunch")) {
		return -1;
	}
	lone_mark(&t0, &c[LC_LAUNCH]);
	c[LC_FENCE] = 0;
	if (path == LP_LAUNCH_FENCE || path == LP_GRAPH_FENCE ||
	    path == LP_GRAPH_PATCH_FENCE) {
		if (!ok(cu->StreamWriteValue32(L->s, L->dw + LONE_FENCE * 4,
					       ticket, 0),
			"cuStreamWriteValue32"))
			return -1;
		lone_mark(&t0, &c[LC_FENCE]);
	}
	switch (path) {
	case LP_LAUNCH_SYNC:
	case LP_GRAPH_SYNC:
		if (!ok(cu->StreamSynchronize(L->s), "cuStreamSynchronize"))
			return -1;
		break;
	case LP_LAUNCH_POLL:
		spun = lone_spin(&L->w[LONE_OUT], v + 1);
		break;
	case LP_CAPTURE_FENCE:
		spun = lone_spin(&L->w[LONE_FENCE], 1);
		break;
	default:
		spun = lone_spin(&L->w[LONE_FENCE], ticket);
	}
	if (spun) {
		fprintf(stderr, "gpu_raw: lone path %d round %d: no completion in 1 s\n",
			path, i);
		return -1;
	}
	lone_mark(&t0, &c[LC_WAIT]);
	if (L->w[LONE_OUT + o] != v + 1) {
		fprintf(stderr, "gpu_raw: lone path %d round %d: out %u, want %u\n",
			path, i, L->w[LONE_OUT + o], v + 1);
		return -1;
	}
	return 0;
}

static int lone_path_run(struct lone *L, enum lone_path path, const char *name)
{
	double c[LC_N];
	int i, k;

	if (path >= LP_GRAPH_FENCE && L->exec) {
		cu->GraphExecDestroy(L->exec);
		cu->GraphDestroy(L->graph);
		L->exec = NULL;
		L->graph = NULL;
	}
	if (path >= LP_GRAPH_FENCE && path != LP_CAPTURE_FENCE && lone_graph(L))
		return -1;
	if (path == LP_CAPTURE_FENCE && lone_capture(L)) {
		printf("lone_capture_fence_us=unsupported\n");
		return 0;
	}
	for (i = -WARMUP; i < L->runs; i++) {
		if (lone_round(L, path, i + WARMUP, (uint32_t)(i + WARMUP) * 7 + 3,
			       c))
			return -1;
		if (i < 0)
			continue;
		L->t[i] = c[LC_PATCH] + c[LC_LAUNCH] + c[LC_FENCE] + c[LC_WAIT];
		for (k = 0; k < LC_N; k++)
			L->c[k][i] = c[k];
	}
	printf("lone_%s_us=%.2f\n", name, median(L->t, L->runs));
	for (k = 0; k < LC_N; k++)
		if (median(L->c[k], L->runs) > 0)
			printf("lone_%s_%s_cpu_us=%.2f\n", name, lone_call_name[k],
			       median(L->c[k], L->runs));
	return 0;
}

static int bench_lone(const char *ptx, int runs)
{
	static const struct { enum lone_path p; const char *name; } paths[] = {
		{ LP_LAUNCH_SYNC, "launch_sync" },
		{ LP_LAUNCH_FENCE, "launch_fence" },
		{ LP_LAUNCH_POLL, "launch_poll" },
		{ LP_GRAPH_FENCE, "graph_fence" },
		{ LP_GRAPH_PATCH_FENCE, "graph_patch_fence" },
		{ LP_GRAPH_SYNC, "graph_sync" },
		{ LP_CAPTURE_FENCE, "capture_fence" },
		{ LP_LAUNCH_FENCE, "launch_fence_again" },
		{ LP_GRAPH_PATCH_FENCE, "graph_patch_fence_again" },
	};
	struct lone L = { .runs = runs };
	CUmodule mod;
	void *host = NULL;
	size_t i;
	int k, err = -1;

	if (!cu->GraphCreate || !cu->GraphAddKernelNode ||
	    !cu->GraphExecKernelNodeSetParams || !cu->StreamWriteValue32 ||
	    !cu->StreamBeginCapture) {
		printf("lone=unsupported\n");
		return 0;
	}
	L.t = calloc((size_t)runs, sizeof(double));
	for (k = 0; k < LC_N; k++)
		L.c[k] = calloc((size_t)runs, sizeof(double));
	if (!L.t || !L.c[LC_N - 1] ||
	    !ok(cu->ModuleLoadDataEx(&mod, ptx, 0, NULL, NULL), "cuModuleLoadDataEx") ||
	    !ok(cu->ModuleGetFunction(&L.fn, mod, "load_inc"), "cuModuleGetFunction") ||
	    !ok(cu->StreamCreate(&L.s, CU_STREAM_NON_BLOCKING), "cuStreamCreate") ||
	    !ok(cu->MemHostAlloc(&host, 4096, 0x01 | 0x02 /* PORTABLE | DEVICEMAP */),
		"cuMemHostAlloc") ||
	    !ok(cu->MemHostGetDevicePointer(&L.dw, host, 0),
		"cuMemHostGetDevicePointer"))
		goto out;
	L.w = host;
	memset(host, 0, 4096);
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (lone_path_run(&L, paths[i].p, paths[i].name))
			goto out;
	err = 0;
out:
	if (L.exec)
		cu->GraphExecDestroy(L.exec);
	if (L.graph)
		cu->GraphDestroy(L.graph);
	if (host)
		cu->MemFreeHost(host);
	for (k = 0; k < LC_N; k++)
		free(L.c[k]);
	free(L.t);
	return err;
}

/*
 * chain<K>_<way>_us (see the top of the file): whether a replayed
 * chain's cost beside the bare graph is its ends in host memory or the
 * patching of its ends between rounds.
 */
#define CHAIN_K		100
#define CHAIN_RUNS	2000
enum chain_way {
	CW_DEV, CW_HOST, CW_PATCH_LAST, CW_PATCH_ENDS, CW_TWO, CW_CAPTURED,
	CW_PACKED4, CW_PACKED16, CW_N
};
static const char *const chain_way_name[CW_N] = {
	"dev", "host", "patch_last", "patch_ends", "two_execs", "captured",
	"packed4", "packed16",
};

/* dev's words are 256 bytes apart (as a segment's links), packed's less */
static bool chain_ends_dev(enum chain_way way)
{
	return way == CW_DEV || way == CW_CAPTURED || way == CW_PACKED4 ||
	       way == CW_PACKED16;
}

static uint64_t chain_stride(enum chain_way way)
{
	return way == CW_PACKED4 ? 4 : way == CW_PACKED16 ? 16 : 256;
}

struct chain {
	CUfunction fn;
	CUstream s;
	volatile uint32_t *w;	/* pinned: [0] [1] inputs, [2] [3] outputs */
	CUdeviceptr hw;		/* its device address */
	CUdeviceptr d;		/* device words: the links, and dev's ends */
	CUgraph g;
	CUgraphExec x[2];
	CUgraph cg;		/* dev's chain captured from a stream */
	CUgraphExec cx;
	CUgraphNode node[CHAIN_K];
	double t[CHAIN_RUNS];
};

/* Node @i's parameters: its input and output word for @way, set @o. */
static void chain_params(const struct chain *c, enum chain_way way, int i,
			 int o, CUDA_KERNEL_NODE_PARAMS *p, CUdeviceptr io[2],
			 void **args)
{
	int ends_dev = chain_ends_dev(way);
	uint64_t st = chain_stride(way);

	io[0] = i ? c->d + (uint64_t)i * st :
		ends_dev ? c->d + (uint64_t)(CHAIN_K + 1 + o) * st :
		c->hw + (uint64_t)o * 4;
	io[1] = i < CHAIN_K - 1 ? c->d + (uint64_t)(i + 1) * st :
		ends_dev ? c->d + (uint64_t)(CHAIN_K + 3 + o) * st :
		c->hw + (uint64_t)(2 + o) * 4;
	args[0] = &io[0];
	args[1] = &io[1];
	memset(p, 0, sizeof(*p));
	p->func = c->fn;
	p->gridDimX = p->gridDimY = p->gridDimZ = 1;
	p->blockDimX = p->blockDimY = p->blockDimZ = 1;
	p->kernelParams = args;
}

/* Set node @i of exec @x to @way's words of set @o. */
static int chain_patch(struct chain *c, CUgraphExec x, enum chain_way way,
		       int i, int o)
{
	CUDA_KERNEL_NODE_PARAMS p;
	CUdeviceptr io[2];
	void *args[2];

	chain_params(c, way, i, o, &p, io, args);
	return ok(cu->GraphExecKernelNodeSetParams(x, c->node[i], &p),
		  "cuGraphExecKernelNodeSetParams") ? 0 : -1;
}

static int chain_way_run(struct chain *c, enum chain_way way)
{
	int i, o, ends_dev = chain_ends_dev(way);
	uint64_t st = chain_stride(way);
	CUgraphExec x;
	uint32_t v, got;
	double t0;

	/* captured: its own instantiation, made with dev's words */
	for (i = 0; way != CW_CAPTURED && i < CHAIN_K; i++)
		if (chain_patch(c, c->x[0], way, i, 0) ||
		    chain_patch(c, c->x[1], way, i, way == CW_TWO))
			return -1;
	for (i = -WARMUP; i < CHAIN_RUNS; i++) {
		o = way >= CW_PATCH_LAST ? (i & 1) : 0;
		v = (uint32_t)(i + WARMUP) * 13 + 5;
		if (ends_dev) {
			if (!ok(cu->MemcpyHtoD(c->d + (uint64_t)(CHAIN_K + 1) * st,
					       &v, 4), "cuMemcpyHtoD"))
				return -1;
		} else {
			/* patch_last keeps the first input: word 0 */
			c->w[way == CW_PATCH_LAST ? 0 : o] = v;
			c->w[2 + o] = 0;
		}
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		t0 = now_us();
		if ((way == CW_PATCH_LAST || way == CW_PATCH_ENDS) &&
		    chain_patch(c, c->x[0], way, CHAIN_K - 1, o))
			return -1;
		if (way == CW_PATCH_ENDS && chain_patch(c, c->x[0], way, 0, o))
			return -1;
		x = way == CW_CAPTURED ? c->cx : c->x[way == CW_TWO ? o : 0];
		if (!ok(cu->GraphLaunch(x, c->s), "cuGraphLaunch") ||
		    !ok(cu->StreamSynchronize(c->s), "cuStreamSynchronize"))
			return -1;
		if (i >= 0)
			c->t[i] = now_us() - t0;
		if (ends_dev) {
			if (!ok(cu->MemcpyDtoH(&got, c->d + (uint64_t)(CHAIN_K + 3) * st,
					       4), "cuMemcpyDtoH"))
				return -1;
		} else {
			got = c->w[2 + o];
		}
		if (got != v + CHAIN_K) {
			fprintf(stderr, "gpu_raw: chain %s round %d: out %u, want %u\n",
				chain_way_name[way], i, got, v + CHAIN_K);
			return -1;
		}
	}
	printf("chain%d_%s_us=%.2f\n", CHAIN_K, chain_way_name[way],
	       median(c->t, CHAIN_RUNS));
	return 0;
}

static int bench_chain(const char *ptx)
{
	static struct chain c;
	CUDA_KERNEL_NODE_PARAMS p;
	CUdeviceptr io[2];
	void *args[2], *host = NULL;
	CUmodule mod;
	int i, err = -1;

	if (!cu->GraphCreate || !cu->GraphAddKernelNode ||
	    !cu->GraphExecKernelNodeSetParams || !cu->StreamBeginCapture ||
	    !cu->StreamEndCapture) {
		printf("chain=unsupported\n");
		return 0;
	}
	if (!ok(cu->ModuleLoadDataEx(&mod, ptx, 0, NULL, NULL), "cuModuleLoadDataEx") ||
	    !ok(cu->ModuleGetFunction(&c.fn, mod, "load_inc"), "cuModuleGetFunction") ||
	    !ok(cu->StreamCreate(&c.s, CU_STREAM_NON_BLOCKING), "cuStreamCreate") ||
	    !ok(cu->MemHostAlloc(&host, 4096, 0x01 | 0x02 /* PORTABLE | DEVICEMAP */),
		"cuMemHostAlloc") ||
	    !ok(cu->MemHostGetDevicePointer(&c.hw, host, 0),
		"cuMemHostGetDevicePointer") ||
	    !ok(cu->MemAlloc(&c.d, (CHAIN_K + 8) * 256), "cuMemAlloc"))
		goto out;
	c.w = host;
	memset(host, 0, 4096);
	if (!ok(cu->GraphCreate(&c.g, 0), "cuGraphCreate"))
		goto out;
	for (i = 0; i < CHAIN_K; i++) {
		chain_params(&c, CW_HOST, i, 0, &p, io, args);
		if (!ok(cu->GraphAddKernelNode(&c.node[i], c.g,
					       i ? &c.node[i - 1] : NULL,
					       i ? 1 : 0, &p),
			"cuGraphAddKernelNode"))
			goto out;
	}
	if (!ok(cu->GraphInstantiate(&c.x[0], c.g, 0), "cuGraphInstantiate") ||
	    !ok(cu->GraphInstantiate(&c.x[1], c.g, 0), "cuGraphInstantiate"))
		goto out;
	/*
	 * The same chain (dev's words) recorded by stream capture, as
	 * fastpath's raw "kgraph" is, against node by node as the backend
	 * builds it (cuda_kernel.c): whether the way it is built shows on
	 * the GPU.
	 */
	if (!ok(cu->StreamBeginCapture(c.s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
		"cuStreamBeginCapture"))
		goto out;
	for (i = 0; i < CHAIN_K; i++) {
		chain_params(&c, CW_CAPTURED, i, 0, &p, io, args);
		if (!ok(cu->LaunchKernel(c.fn, 1, 1, 1, 1, 1, 1, 0, c.s, args,
					 NULL), "cuLaunchKernel (captured)"))
			break;
	}
	if (!ok(cu->StreamEndCapture(c.s, &c.cg), "cuStreamEndCapture") ||
	    i < CHAIN_K ||
	    !ok(cu->GraphInstantiate(&c.cx, c.cg, 0), "cuGraphInstantiate"))
		goto out;
	for (i = 0; i < CW_N; i++)
		if (chain_way_run(&c, (enum chain_way)i))
			goto out;
	/* the first way again: the order's effect */
	if (chain_way_run(&c, CW_HOST))
		goto out;
	err = 0;
out:
	for (i = 0; i < 2; i++)
		if (c.x[i])
			cu->GraphExecDestroy(c.x[i]);
	if (c.cx)
		cu->GraphExecDestroy(c.cx);
	if (c.cg)
		cu->GraphDestroy(c.cg);
	if (c.g)
		cu->GraphDestroy(c.g);
	if (c.d)
		cu->MemFree(c.d);
	if (host)
		cu->MemFreeHost(host);
	if (c.s)
		cu->StreamDestroy(c.s);
	return err;
}

/*
 * chain<K>_streams<N>_us: dev's chain, captured and replayed on one
 * stream, in a context where N other streams (N = 0..3) have launched
 * kernels before: measured on an H200 (2026-12-03), a context where a
 * third stream ever launched kernels replays the chain about 18 us
 * slower, for good (destroying the streams does not undo it; streams
 * that only copy or write memory words do not count).  So this runs
 * first, before any other part's streams touch the context; ptaskd's
 * lanes take the lowest idle one for that reason (prepare.c).
 */
static int bench_chain_streams(const char *ptx)
{
	static double t[CHAIN_RUNS];
	CUstream s = NULL, other[3] = { NULL, NULL, NULL };
	CUdeviceptr d = 0, io[2];
	CUgraphExec x = NULL;
	CUgraph g = NULL;
	CUfunction fn;
	CUmodule mod;
	uint32_t v = 11, got = 0;
	void *args[2] = { &io[0], &io[1] };
	const char *how = getenv("GPU_RAW_CHAIN_OTHER");
	bool graphs = how && !strcmp(how, "graph");
	int i, n, err = -1;
	double t0;

	if (!cu->StreamBeginCapture || !cu->StreamEndCapture ||
	    !cu->GraphInstantiate || !cu->GraphLaunch ||
	    !cu->GraphExecDestroy || !cu->GraphDestroy) {
		printf("chain_streams=unsupported\n");
		return 0;
	}
	if (!ok(cu->ModuleLoadDataEx(&mod, ptx, 0, NULL, NULL), "cuModuleLoadDataEx") ||
	    !ok(cu->ModuleGetFunction(&fn, mod, "load_inc"), "cuModuleGetFunction") ||
	    !ok(cu->StreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate") ||
	    !ok(cu->MemAlloc(&d, (CHAIN_K + 8) * 256), "cuMemAlloc") ||
	    !ok(cu->MemcpyHtoD(d, &v, 4), "cuMemcpyHtoD") ||
	    !ok(cu->StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
		"cuStreamBeginCapture"))
		goto out;
	for (i = 0; i < CHAIN_K; i++) {
		io[0] = d + (uint64_t)i * 256;
		io[1] = d + (uint64_t)(i + 1) * 256;
		if (!ok(cu->LaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, args, NULL),
			"cuLaunchKernel (captured)"))
			break;
	}
	if (!ok(cu->StreamEndCapture(s, &g), "cuStreamEndCapture") ||
	    i < CHAIN_K || !ok(cu->GraphInstantiate(&x, g, 0), "cuGraphInstantiate"))
		goto out;
	for (n = 0; n <= 3; n++) {
		if (n) {
			/*
			 * Another stream launches a kernel on its own words,
			 * or (GPU_RAW_CHAIN_OTHER=graph) the chain's graph
			 * itself, as ptaskd's lanes launch graphs.
			 */
			io[0] = io[1] = d + (uint64_t)(CHAIN_K + 4 + n) * 256;
			if (!ok(cu->StreamCreate(&other[n - 1], CU_STREAM_NON_BLOCKING),
				"cuStreamCreate") ||
			    !(graphs ? ok(cu->GraphLaunch(x, other[n - 1]), "cuGraphLaunch") :
			      ok(cu->LaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, other[n - 1],
						  args, NULL), "cuLaunchKernel")) ||
			    !ok(cu->StreamSynchronize(other[n - 1]), "cuStreamSynchronize"))
				goto out;
		}
		for (i = -WARMUP; i < CHAIN_RUNS; i++) {
			t0 = now_us();
			if (!ok(cu->GraphLaunch(x, s), "cuGraphLaunch") ||
			    !ok(cu->StreamSynchronize(s), "cuStreamSynchronize"))
				goto out;
			if (i >= 0)
				t[i] = now_us() - t0;
		}
		if (!ok(cu->MemcpyDtoH(&got, d + (uint64_t)CHAIN_K * 256, 4),
			"cuMemcpyDtoH"))
			goto out;
		if (got != v + CHAIN_K) {
			fprintf(stderr, "gpu_raw: chain_streams: out %u, want %u\n",
				got, v + CHAIN_K);
			goto out;
		}
		printf("chain%d_%s%d_us=%.2f\n", CHAIN_K,
		       graphs ? "gstreams" : "streams", n, median(t, CHAIN_RUNS));
	}
	err = 0;
out:
	for (n = 0; n < 3; n++)
		if (other[n])
			cu->StreamDestroy(other[n]);
	if (x)
		cu->GraphExecDestroy(x);
	if (g)
		cu->GraphDestroy(g);
	if (d)
		cu->MemFree(d);
	if (s)
		cu->StreamDestroy(s);
	return err;
}

int main(int argc, char **argv)
{
	char host[256] = "";
	int n = 0, ver = 0, runs = 5000;
	char *ptx;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s KERNELS.PTX [RUNS]\n", argv[0]);
		return 2;
	}
	if (argc == 3 && (runs = atoi(argv[2])) < 1)
		return 2;
	{
		const char *how = getenv("GPU_RAW_CHAIN_OTHER");

		if (how && strcmp(how, "graph") && strcmp(how, "kernel")) {
			fprintf(stderr, "gpu_raw: GPU_RAW_CHAIN_OTHER='%s': graph or kernel\n",
				how);
			return 2;
		}
	}
	ptx = slurp(argv[1]);
	if (!ptx) {
		fprintf(stderr, "gpu_raw: cannot read %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	if (pc_cuda_dev_open(&gpu, 0)) {
		printf("skipped: no GPU (%s)\n", gpu.why);
		return 77;
	}
	gethostname(host, sizeof(host) - 1);
	cu->DriverGetVersion(&ver);
	cu->DeviceGetCount(&n);
	printf("machine=%s\ngpu=%s\ndriver=%d.%d\ndevices=%d\n", host,
	       gpu.name, ver / 1000, ver % 1000 / 10, n);
	/* first: the context's history changes it (see the function) */
	if (bench_chain_streams(ptx) ||
	    bench_launch(ptx, runs) || bench_lone(ptx, runs) ||
	    bench_b2b_threads(ptx) || bench_chain(ptx) || bench_copies())
		return 1;
	pc_cuda_dev_close(&gpu);
	free(ptx);
	return 0;
}
