// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * tunnel_bench.c - N concurrent requesters of 4 KiB XTS units through
 * encfs-gpu's gpu backend: batched by a ptask tunnel (one kernel launch
 * for many requests) against one invocation per request (the backend's
 * lanes), as FUSE request threads would drive it.
 *
 *   tunnel_bench [-m tunnel|lanes] [-t THREADS] [-n REQUESTS] [-u UNITS]
 *
 *   -m  tunnel: EG_GPU_TUNNEL=always; lanes: EG_GPU_TUNNEL=never (the
 *       backend's EG_GPU_LANES lanes, default 4, one invocation each)
 *   -t  requester threads (default 16)
 *   -n  requests per thread (default 2000)
 *   -u  4 KiB units per request (default 1)
 *
 * Each request encrypts its own bytes in place; one request in 64 is
 * checked against the cpu backend (OpenSSL), so a wrong answer fails the
 * run.  Prints one line: mode, threads, requests/s, MB/s, latency median
 * and p99 (us), and the CPU time of this process per request (us).  The
 * invocations ptaskd ran are what bench/tunnel-run.sh reads with ptaskctl.
 * Needs a ptaskd (PTASK_SOCKET, as any libptask program).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <openssl/rand.h>

#include "encfs-gpu/xts.h"

struct req_thread {
	struct eg_backend *be, *cpu;
	unsigned int id;
	int requests;
	size_t units;
	double *lat_us;		/* @requests latencies */
	int err;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *requester(void *arg)
{
	struct req_thread *t = arg;
	size_t bytes = t->units * 4096;
	uint8_t *a = malloc(bytes), *b = malloc(bytes), *tw = malloc(16 * t->units);

	if (!a || !b || !tw) {
		t->err = -ENOMEM;
		goto out;
	}
	for (int k = 0; k < t->requests && !t->err; k++) {
		struct eg_xts_req r = { .data = a, .tweaks = tw, .nunits = t->units,
					.unit_len = 4096, .last_len = 4096 };
		struct eg_xts_req rb = r;
		bool check = !(k % 64);
		double t0;

		for (size_t i = 0; i < bytes; i += 64)
			a[i] = (uint8_t)(t->id + k + i);
		memset(tw, 0, 16 * t->units);
		memcpy(tw, &k, sizeof(k));
		tw[8] = (uint8_t)t->id;
		if (check)
			memcpy(b, a, bytes);
		t0 = now_s();
		t->err = eg_backend_crypt(t->be, 1, &r);
		t->lat_us[k] = (now_s() - t0) * 1e6;
		if (!t->err && check) {
			rb.data = b;
			t->err = eg_backend_crypt(t->cpu, 1, &rb);
			if (!t->err && memcmp(a, b, bytes))
				t->err = -EBADMSG;
		}
	}
out:
	free(a);
	free(b);
	free(tw);
	return NULL;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

int main(int argc, char **argv)
{
	const char *mode = "tunnel", *why = NULL;
	int threads = 16, requests = 2000, units = 1, opt, err = 0;
	struct eg_backend *be = NULL, *cpu = NULL;
	struct req_thread *t;
	pthread_t *tid;
	double *lat, t0, wall, c0, cpu_used;
	uint8_t key[64];
	size_t total;

	while ((opt = getopt(argc, argv, "m:t:n:u:")) != -1) {
		switch (opt) {
		case 'm': mode = optarg; break;
		case 't': threads = atoi(optarg); break;
		case 'n': requests = atoi(optarg); break;
		case 'u': units = atoi(optarg); break;
		default: goto usage;
		}
	}
	if ((strcmp(mode, "tunnel") && strcmp(mode, "lanes")) || threads < 1 ||
	    threads > 1024 || requests < 1 || units < 1 || units > 1024)
		goto usage;
	setenv("EG_GPU_TUNNEL", strcmp(mode, "tunnel") ? "never" : "always", 1);
	RAND_bytes(key, sizeof(key));
	err = eg_backend_gpu_new(key, &be, &why);
	if (err) {
		fprintf(stderr, "tunnel_bench: gpu backend: %s\n", why ? why : strerror(-err));
		return 1;
	}
	err = eg_backend_cpu_new(key, &cpu);
	total = (size_t)threads * (size_t)requests;
	t = calloc((size_t)threads, sizeof(*t));
	tid = calloc((size_t)threads, sizeof(*tid));
	lat = calloc(total, sizeof(*lat));
	if (err || !t || !tid || !lat) {
		fprintf(stderr, "tunnel_bench: setup: %s\n", strerror(err ? -err : ENOMEM));
		return 1;
	}
	c0 = cpu_s();
	t0 = now_s();
	for (int i = 0; i < threads; i++) {
		t[i] = (struct req_thread){ .be = be, .cpu = cpu, .id = (unsigned int)i,
					    .requests = requests, .units = (size_t)units,
					    .lat_us = lat + (size_t)i * requests };
		if (pthread_create(&tid[i], NULL, requester, &t[i])) {
			fprintf(stderr, "tunnel_bench: pthread_create failed\n");
			return 1;
		}
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		if (t[i].err && !err)
			err = t[i].err;
	}
	wall = now_s() - t0;
	cpu_used = cpu_s() - c0;
	if (err) {
		fprintf(stderr, "tunnel_bench: a request failed: %s\n", strerror(-err));
		return 1;
	}
	qsort(lat, total, sizeof(*lat), cmp_double);
	/* the CPU of this process includes the 1-in-64 OpenSSL checks */
	printf("mode=%s threads=%d units=%d requests=%zu req_per_s=%.0f MB_per_s=%.1f "
	       "lat_med_us=%.1f lat_p99_us=%.1f client_cpu_us_per_req=%.1f\n", mode, threads,
	       units, total, total / wall, total * units * 4096.0 / wall / 1e6, lat[total / 2],
	       lat[total * 99 / 100], cpu_used / total * 1e6);
	eg_backend_destroy(be);
	eg_backend_destroy(cpu);
	free(t);
	free(tid);
	free(lat);
	return 0;

usage:
	fprintf(stderr, "usage: tunnel_bench [-m tunnel|lanes] [-t THREADS] [-n REQUESTS] "
			"[-u UNITS]\n");
	return 2;
}
