// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cuda_calib.c - inplace_max of ptaskd's CUDA backend (see cuda_priv.h
 * and backend.h, struct pd_device_info): measured at init from the
 * device's small-copy curve.
 *
 * DOC: inplace_max
 *
 * A kernel that reads its input from (or writes its output to) pinned
 * host memory in place (host_device_ptr) pays PCIe reads inside the
 * kernel, about a microsecond for the first line and little for each
 * next one of a few KiB; a copy pays a fixed cost of a few microseconds
 * (an h2d copy and a d2h copy are each ~2-3 us plus their bytes at PCIe
 * bandwidth) and its synchronisation.  So in place wins as long as the
 * copies cost about what the smallest ones do.  The rule, kept simple:
 * for each size of 4 B, 16 B, ..., 64 KiB (powers of 4), the median of
 * CALIB_REPS cuMemcpyHtoDAsync + cuStreamSynchronize and as many
 * cuMemcpyDtoHAsync + cuStreamSynchronize, summed (a datablock comes in
 * and goes out); inplace_max is the largest size before the first one
 * whose sum is over twice the 4-byte sum, capped at 64 KiB.  Larger blocks are
 * copied: a kernel reading them over PCIe would run at PCIe speed, many
 * times, with no overlap.
 *
 * Cost at start: 8 sizes x 2 directions x (CALIB_REPS + CALIB_WARM)
 * copies of ~5-10 us, under 10 ms per device, plus the device's primary
 * context, made here and not at the first client's arrival (it stays
 * retained until fini; logged separately).  Devices with the same name
 * share one measurement.  The result is logged at info level, the curve
 * at debug (-v).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/backend/cuda_priv.h"
#include "daemon/log.h"

#define CALIB_MAX_BYTES	(64u << 10)
#define CALIB_SIZES	8	/* 4 B .. 64 KiB, powers of 4 */
#define CALIB_REPS	50
#define CALIB_WARM	5

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median us of one copy of @n bytes each way + sync (@h2d: which way). */
static int copy_median(struct cuda_be *cb, CUstream st, CUdeviceptr d,
		       void *h, size_t n, bool h2d, double *med)
{
	double t[CALIB_REPS], t0;
	CUresult r;
	int i;

	for (i = -CALIB_WARM; i < CALIB_REPS; i++) {
		t0 = now_us();
		r = h2d ? cb->cu.MemcpyHtoDAsync(d, h, n, st) :
			  cb->cu.MemcpyDtoHAsync(h, d, n, st);
		if (r == CUDA_SUCCESS)
			r = cb->cu.StreamSynchronize(st);
		if (r != CUDA_SUCCESS)
			return pd_cuda_fail(cb, r, h2d ? "cuMemcpyHtoDAsync (calibration)" :
						       "cuMemcpyDtoHAsync (calibration)");
		if (i >= 0)
			t[i] = now_us() - t0;
	}
	qsort(t, CALIB_REPS, sizeof(t[0]), cmp_double);
	*med = t[CALIB_REPS / 2];
	return 0;
}

/* Measure the curve in the current context; set *@max. */
static int curve(struct cuda_be *cb, uint32_t dev, CUstream st, CUdeviceptr d,
		 void *h, uint64_t *max)
{
	double in[CALIB_SIZES], out[CALIB_SIZES], base = 0;
	bool over = false;
	size_t n;
	int i, err;

	*max = 0;
	for (i = 0, n = 4; i < CALIB_SIZES; i++, n *= 4) {
		err = copy_median(cb, st, d, h, n, true, &in[i]);
		if (!err)
			err = copy_median(cb, st, d, h, n, false, &out[i]);
		if (err)
			return err;
		if (!i)
			base = in[0] + out[0];
		/* up to the first size that costs over twice the smallest */
		if (!over && in[i] + out[i] <= 2 * base)
			*max = n;
		else
			over = true;
		pd_log_debug("cuda: device %u: copy curve: %zu B: h2d %.2f us, d2h %.2f us (median of %d, each with its sync)",
			     dev, n, in[i], out[i], CALIB_REPS);
	}
	return 0;
}

int pd_cuda_calibrate(struct pd_backend *be, uint32_t dev)
{
	struct cuda_be *cb = be->priv;
	struct pd_device_info *info = &be->info[dev];
	double t0 = now_us(), t_ctx;
	CUdeviceptr d = 0;
	CUstream st = NULL;
	struct cuda_ctx c;
	void *h = NULL;
	uint64_t max = 0;
	uint32_t j;
	CUresult r;
	int err;

	for (j = 0; j < dev; j++) {
		if (!strcmp(be->info[j].name, info->name)) {
			info->inplace_max = be->info[j].inplace_max;
			pd_log_info("cuda: device %u: inplace_max %llu bytes (as device %u, the same model)",
				    dev, (unsigned long long)info->inplace_max, j);
			return 0;
		}
	}
	err = pd_cuda_ctx_primary(cb, dev, &c);
	if (!err)
		err = pd_cuda_ctx_use(cb, &c);
	if (err)
		return err;
	t_ctx = now_us() - t0;
	r = cb->cu.StreamCreate(&st, CU_STREAM_NON_BLOCKING);
	if (r != CUDA_SUCCESS)
		return pd_cuda_fail(cb, r, "cuStreamCreate (calibration)");
	r = cb->cu.MemAlloc(&d, CALIB_MAX_BYTES);
	if (r != CUDA_SUCCESS) {
		err = pd_cuda_fail(cb, r, "cuMemAlloc (calibration)");
		goto out_stream;
	}
	r = cb->cu.MemHostAlloc(&h, CALIB_MAX_BYTES, CU_MEMHOSTALLOC_PORTABLE);
	if (r != CUDA_SUCCESS) {
		err = pd_cuda_fail(cb, r, "cuMemHostAlloc (calibration)");
		goto out_dev;
	}
	memset(h, 0x5a, CALIB_MAX_BYTES);
	err = curve(cb, dev, st, d, h, &max);
	if (!err) {
		info->inplace_max = max;
		pd_log_info("cuda: device %u: inplace_max %llu bytes (copy curve in %.1f ms; primary context %.1f ms)",
			    dev, (unsigned long long)max,
			    (now_us() - t0 - t_ctx) / 1e3, t_ctx / 1e3);
	}
	cb->cu.MemFreeHost(h);
out_dev:
	cb->cu.MemFree(d);
out_stream:
	cb->cu.StreamDestroy(st);
	return err;
}
