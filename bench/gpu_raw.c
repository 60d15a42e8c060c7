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
 * GB/s are 10^9 bytes a second.  Exit 77 when there is no GPU.
 *
 * Built by tests/gpu/gpu.mk (build/gpu/gpu_raw); not a guest benchmark.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memfd_create */
#endif
#include <errno.h>
#include <pthread.h>
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
	if (bench_launch(ptx, runs) || bench_b2b_threads(ptx) || bench_copies())
		return 1;
	pc_cuda_dev_close(&gpu);
	free(ptx);
	return 0;
}
