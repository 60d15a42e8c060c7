// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * backend_auto.c - "auto": two backends and a size threshold.
 *
 * Handing a request to the GPU costs a fixed latency (submit, copy in,
 * launch, copy out) that a 4 KiB request never earns back, while a 1 MiB
 * FUSE write or read-ahead keeps every SM busy.  So at mount we time both
 * backends on requests of 4 KiB .. 4 MiB made of 4 KiB units, and take as
 * crossover the smallest size from which the GPU is faster at that size
 * and every larger one measured.  Each request then goes to the cpu below
 * the crossover and to the gpu from it on; a gpu failure falls back to
 * the cpu for that request, so a lost GPU slows the mount but never fails
 * I/O.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "xts.h"

#define AUTO_MIN_SIZE	4096u
#define AUTO_MAX_SIZE	(4u << 20)
#define AUTO_REPS	3

struct auto_backend {
	struct eg_backend be;
	struct eg_backend *cpu, *gpu;
	size_t crossover;	/* SIZE_MAX: the gpu never won */
	int gpu_failed_said;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Best of AUTO_REPS encryptions of @r by @be, in seconds; < 0 on error. */
static double time_backend(struct eg_backend *be, const struct eg_xts_req *r)
{
	double best = -1;

	/* one untimed call first: the gpu pays its lazy setup there */
	if (eg_backend_crypt(be, 1, r))
		return -1;
	for (int i = 0; i < AUTO_REPS; i++) {
		double t0 = now(), dt;

		if (eg_backend_crypt(be, 1, r))
			return -1;
		dt = now() - t0;
		if (best < 0 || dt < best)
			best = dt;
	}
	return best;
}

static size_t measure(struct eg_backend *cpu, struct eg_backend *gpu)
{
	size_t crossover = SIZE_MAX;
	uint8_t *buf, *tweaks;
	size_t nunits = AUTO_MAX_SIZE / 4096;

	buf = malloc(AUTO_MAX_SIZE);
	tweaks = malloc(nunits * EG_TWEAK_LEN);
	if (!buf || !tweaks)
		goto out;
	if (RAND_bytes(buf, AUTO_MAX_SIZE) != 1 || RAND_bytes(tweaks, (int)(nunits * 16)) != 1)
		goto out;
	/* from the largest size down: the first size where the cpu wins ends it */
	for (size_t size = AUTO_MAX_SIZE; size >= AUTO_MIN_SIZE; size /= 4) {
		struct eg_xts_req r = {
			.data = buf, .tweaks = tweaks, .nunits = size / 4096,
			.unit_len = 4096, .last_len = 4096,
		};
		double tc = time_backend(cpu, &r), tg = time_backend(gpu, &r);

		if (tc < 0 || tg < 0 || tg >= tc)
			break;
		crossover = size;
	}
out:
	free(buf);
	free(tweaks);
	return crossover;
}

static int auto_crypt(struct eg_backend *be, int enc, const struct eg_xts_req *r)
{
	struct auto_backend *ab = (struct auto_backend *)be;
	int ret;

	if (eg_xts_req_bytes(r) < ab->crossover)
		return eg_backend_crypt(ab->cpu, enc, r);
	ret = eg_backend_crypt(ab->gpu, enc, r);
	if (ret != -EINVAL && ret) {
		/* the data is unchanged when a backend fails; redo it on the cpu */
		if (!__atomic_exchange_n(&ab->gpu_failed_said, 1, __ATOMIC_RELAXED))
			fprintf(stderr, "encfs-gpu: gpu backend failed (%d); using the cpu\n", ret);
		ret = eg_backend_crypt(ab->cpu, enc, r);
	}
	return ret;
}

static void auto_detach(struct eg_backend *be)
{
	struct auto_backend *ab = (struct auto_backend *)be;

	eg_backend_detach(ab->gpu);
	eg_backend_detach(ab->cpu);
}

static void auto_destroy(struct eg_backend *be)
{
	struct auto_backend *ab = (struct auto_backend *)be;

	eg_backend_destroy(ab->gpu);
	eg_backend_destroy(ab->cpu);
	free(ab);
}

static const struct eg_backend_ops auto_ops = {
	.name = "auto",
	.crypt = auto_crypt,
	.detach = auto_detach,
	.destroy = auto_destroy,
};

/**
 * eg_backend_auto_new() - combine @cpu and @gpu behind a measured crossover
 * @cpu: backend for small requests (owned by the result from now on)
 * @gpu: backend for large requests (owned too)
 * @out: the combined backend
 *
 * Return: 0 or -ENOMEM (then the caller still owns both).
 */
int eg_backend_auto_new(struct eg_backend *cpu, struct eg_backend *gpu, struct eg_backend **out)
{
	struct auto_backend *ab = calloc(1, sizeof(*ab));

	if (!ab)
		return -ENOMEM;
	ab->be.ops = &auto_ops;
	ab->cpu = cpu;
	ab->gpu = gpu;
	ab->crossover = measure(cpu, gpu);
	*out = &ab->be;
	return 0;
}

/* The measured crossover in bytes (SIZE_MAX: always the cpu). */
size_t eg_backend_auto_crossover(const struct eg_backend *be)
{
	if (be->ops != &auto_ops)
		return SIZE_MAX;
	return ((const struct auto_backend *)be)->crossover;
}
