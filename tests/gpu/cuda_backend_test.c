// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cuda_backend_test.c - ptaskd's CUDA backend (daemon/backend/cuda*.c) on
 * its own, with no daemon: the calls ptaskd makes, in the order it makes
 * them, and the error paths it relies on.
 *
 *   cuda_backend_test KERNELS.PTX      (tests/gpu/kernels.cu built to PTX)
 *
 * Output is TAP; the last line is "N passed, M failed".  Exit 0: all
 * passed; 1: a failure; 77: skipped, no GPU (init said -ENODEV).
 *
 *   init -> devices -> a space per device (owner 1) ---------------.
 *   64 MiB memfd, host_register -> h2d, d2h, compare byte for byte |
 *   kernel_load(vec_add) -> launch -> compare with the CPU, gpu_ns  |
 *   bad PTX -EINVAL, missing entry -ENOENT, bad params -EINVAL      |
 *   owner 2 on device 0: d2d between contexts; owner 0: primary ctx |
 *   owner 3 reads owner 1's pointer: an error, never the data  <----'
 *   (TODO: it reads the data today); owner 4 faults on its own
 *   owner 1 still works -> close everything -> fini
 *
 * Lanes and fences (backend.h, issue 12), per device in owner 1's space:
 * fences on every lane (a poll while a busy kernel runs says 0; each
 * fence passes, in order, with its device time, reported once; lanes
 * overlap; bad lanes and tickets refused), lane_wait (lane 1's kernel
 * reads what lane 0's busy kernel wrote; without the wait it runs
 * ahead), a thread polling while the owner queues 5000 fences;
 * host_device_ptr (a kernel doubles registered host memory in place, in
 * two contexts); the CPU cost of launch and fence; a faulting kernel in
 * owner 4's space makes its fences -EIO, not owner 1's; config strings
 * with "lanes=N"; the fence tests again with "fences=events" (the
 * fallback without stream memory operations) first.  inplace_max is checked to lie in 4 B..64 KiB; its
 * copy curve is in the log (-v level).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memfd_create */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "daemon/backend/backend.h"
#include "daemon/backend/cuda_priv.h"
#include "daemon/backend/held.h"
#include "daemon/fatal.h"
#include "daemon/log.h"

#define REGION_BYTES	(64u << 20)
#define HALF		(REGION_BYTES / 2)
#define VEC_N		(1u << 22)	/* floats per vector: 16 MiB */
#define TIMING_RUNS	2000

static int npass, nfail, ntodo;
/* the fence tests run with config "fences=events" (key lines say so) */
static bool event_mode;
/* A kernel faulted and CUDA broke for the whole process (measured: it does). */
static bool poisoned;

/*
 * The backend reports errors that poison the process's CUDA through
 * pd_fatal() (daemon/fatal.c in ptaskd: drain and exit 70 for a restart).
 * Here it is counted, so the test can check that a fault is reported
 * and go on to see what still works.
 */
static int fatal_calls;

void pd_fatal(const char *fmt, ...)
{
	va_list ap;

	fatal_calls++;
	printf("# pd_fatal: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}
static struct pd_backend be = { .ops = &pd_backend_cuda };

static void check(int ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * What must hold once CUDA works again after a fault; on a driver where a
 * sticky error poisons every context of the process (the H100 runs of
 * 2026-11-22), a known failure (TODO), documented in Documentation/ptaskd.md.
 */
static void check_after_fault(int ok, const char *what, int err)
{
	if (ok || !poisoned) {
		check(ok, "%s (%d)", what, err);
		return;
	}
	printf("not ok %d - %s (%d) # TODO a kernel's fault poisons every context "
	       "of the process\n", npass + nfail + ntodo + 1, what, err);
	ntodo++;
}
static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", npass + nfail + ntodo + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		npass++;
	else
		nfail++;
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

/* xorshift: fresh data every run, never zeros */
static uint64_t rng_state;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fill_random(void *p, size_t n)
{
	unsigned char *c = p;
	uint64_t v;

	for (; n >= 8; n -= 8, c += 8) {
		v = rng();
		memcpy(c, &v, 8);
	}
	for (v = rng(); n; n--, v >>= 8)
		*c++ = (unsigned char)v;
}

static void fill_floats(float *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		f[i] = (float)(rng() % 2000001) / 1000.0f - 1000.0f;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0) {
		rewind(f);
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf) {
			buf[n] = '\0';
			*len = (size_t)n + 1;	/* PTX goes with its NUL */
		}
	}
	fclose(f);
	return buf;
}

/* a vec_add launch of n elements on (a, b) -> c */
static void vec_launch(struct pd_launch *l, uint64_t *a, uint64_t *b,
		       uint64_t *c, uint32_t *n)
{
	memset(l, 0, sizeof(*l));
	l->grid[0] = (*n + 255) / 256;
	l->grid[1] = l->grid[2] = 1;
	l->block[0] = 256;
	l->block[1] = l->block[2] = 1;
	l->nparams = 4;
	l->params[0] = a;
	l->params[1] = b;
	l->params[2] = c;
	l->params[3] = n;
	l->param_bytes[0] = l->param_bytes[1] = l->param_bytes[2] = 8;
	l->param_bytes[3] = 4;
}

static void empty_launch(struct pd_launch *l)
{
	memset(l, 0, sizeof(*l));
	l->grid[0] = l->grid[1] = l->grid[2] = 1;
	l->block[0] = l->block[1] = l->block[2] = 1;
}

static void test_devices(void)
{
	double best = 0;
	uint32_t i;

	check(be.ndev >= 1, "init found %u device(s)", be.ndev);
	for (i = 0; i < be.ndev; i++) {
		const struct pd_device_info *d = &be.info[i];

		printf("# device %u: %s, %llu MiB, %u SMs, %u kHz core, %u kHz memory, strength %.3f\n",
		       i, d->name, (unsigned long long)(d->memory >> 20),
		       d->cores, d->core_khz, d->mem_khz, d->strength);
		check(d->name[0] && d->memory > 0 && d->cores > 1 &&
		      d->kind == 0 /* PTASK_ACCEL_CUDA */ && d->peer[i],
		      "device %u info filled", i);
		if (d->strength > best)
			best = d->strength;
	}
	check(best == 1.0, "strongest device has strength 1.0");
}

/* h2d from the registered region's first half, d2h to its second half */
static void test_roundtrip(void *sp, uint32_t dev, unsigned char *region)
{
	unsigned char *src, *back;
	size_t odd = (1u << 20) + 3;
	uint64_t d = 0, d2 = 0, ns = 1;
	int err;

	fill_random(region, HALF);
	memset(region + HALF, 0xa5, HALF);
	err = be.ops->mem_alloc(&be, sp, HALF, &d);
	check(!err, "dev %u: mem_alloc 32 MiB: %d", dev, err);
	if (err)
		return;
	err = be.ops->copy_h2d(&be, sp, 0, d, region, HALF);
	if (!err)
		err = be.ops->copy_d2h(&be, sp, 0, region + HALF, d, HALF);
	if (!err)
		err = be.ops->sync(&be, sp, &ns);
	check(!err && !memcmp(region, region + HALF, HALF),
	      "dev %u: pinned 32 MiB h2d/d2h round trip byte for byte (%d)",
	      dev, err);
	check(!err && ns == 0, "dev %u: gpu_ns is 0 with no launch (%llu)",
	      dev, (unsigned long long)ns);

	/* d2d within the space */
	err = be.ops->mem_alloc(&be, sp, HALF, &d2);
	if (!err) {
		memset(region + HALF, 0, HALF);
		err = be.ops->copy_d2d(&be, sp, 0, d2, sp, 0, d, HALF);
		if (!err)
			err = be.ops->copy_d2h(&be, sp, 0, region + HALF, d2, HALF);
		if (!err)
			err = be.ops->sync(&be, sp, NULL);
		be.ops->mem_free(&be, sp, d2);
	}
	check(!err && !memcmp(region, region + HALF, HALF),
	      "dev %u: d2d within a space (%d)", dev, err);

	/* pageable memory, an odd size, at an offset into the allocation */
	src = malloc(odd);
	back = malloc(odd);
	if (src && back) {
		fill_random(src, odd);
		memset(back, 0, odd);
		err = be.ops->copy_h2d(&be, sp, 0, d + 5, src, odd);
		if (!err)
			err = be.ops->copy_d2h(&be, sp, 0, back, d + 5, odd);
		if (!err)
			err = be.ops->sync(&be, sp, NULL);
		check(!err && !memcmp(src, back, odd),
		      "dev %u: pageable %zu-byte round trip (%d)", dev, odd, err);
	}
	free(src);
	free(back);
	be.ops->mem_free(&be, sp, d);
}

/*
 * vec_add in @sp on data from the registered region; compares with the
 * CPU.  Returns 0 when the result matched.
 */
static int run_vec_add(void *sp, void *kernel, unsigned char *region,
		       const char *what)
{
	float *a = (float *)region, *b = a + VEC_N, *c = b + VEC_N;
	uint64_t da = 0, db = 0, dc = 0, ns = 0;
	uint32_t n = VEC_N;
	struct pd_launch l;
	size_t bytes = (size_t)VEC_N * sizeof(float), bad = 0, i;
	int err;

	fill_floats(a, 2 * (size_t)VEC_N);
	memset(c, 0xff, bytes);		/* NaN: an unwritten output shows */
	err = be.ops->mem_alloc(&be, sp, bytes, &da);
	if (!err)
		err = be.ops->mem_alloc(&be, sp, bytes, &db);
	if (!err)
		err = be.ops->mem_alloc(&be, sp, bytes, &dc);
	if (!err)
		err = be.ops->copy_h2d(&be, sp, 0, da, a, bytes);
	if (!err)
		err = be.ops->copy_h2d(&be, sp, 0, db, b, bytes);
	vec_launch(&l, &da, &db, &dc, &n);
	if (!err)
		err = be.ops->launch(&be, sp, 0, kernel, &l);
	if (!err)
		err = be.ops->copy_d2h(&be, sp, 0, c, dc, bytes);
	if (!err)
		err = be.ops->sync(&be, sp, &ns);
	for (i = 0; !err && i < VEC_N; i++)
		bad += c[i] != a[i] + b[i];
	check(!err && !bad, "%s: vec_add of %u floats matches the CPU (%d, %zu wrong)",
	      what, VEC_N, err, bad);
	check(!err && ns > 0, "%s: gpu_ns > 0 (%llu)", what,
	      (unsigned long long)ns);
	if (dc)
		be.ops->mem_free(&be, sp, dc);
	if (db)
		be.ops->mem_free(&be, sp, db);
	if (da)
		be.ops->mem_free(&be, sp, da);
	return err || bad ? -1 : 0;
}

static void test_kernels(void *sp, uint32_t dev, const char *ptx,
			 size_t ptx_len, unsigned char *region)
{
	static const char bad_ptx[] = ".version 8.0\n.target sm_90\nthis is not ptx\n";
	void *k1 = NULL, *k2 = NULL, *k3 = NULL;
	uint64_t dummy = 0;
	uint32_t n = 1;
	struct pd_launch l;
	double t0, t1, t2;
	char what[32];
	int err;

	snprintf(what, sizeof(what), "dev %u", dev);
	t0 = now_us();
	err = be.ops->kernel_load(&be, sp, ptx, ptx_len, "vec_add", &k1);
	t1 = now_us();
	check(!err, "%s: kernel_load(vec_add) %d (%.0f us)", what, err, t1 - t0);
	if (err)
		return;
	t2 = now_us();
	err = be.ops->kernel_load(&be, sp, ptx, ptx_len, "vec_add", &k2);
	t2 = now_us() - t2;
	check(!err && (t2 < 50 || t2 < (t1 - t0) / 4),
	      "%s: the same code again comes from the module cache (%.1f us)",
	      what, t2);
	run_vec_add(sp, k1, region, what);

	/* without its NUL the PTX must still load (the backend adds one) */
	err = be.ops->kernel_load(&be, sp, ptx, strlen(ptx), "empty", &k3);
	check(!err, "%s: PTX without its NUL loads: %d", what, err);
	if (!err)
		be.ops->kernel_unload(&be, sp, k3);

	err = be.ops->kernel_load(&be, sp, bad_ptx, sizeof(bad_ptx), "vec_add", &k3);
	check(err == -EINVAL, "%s: bad PTX: -EINVAL (%d)", what, err);
	err = be.ops->kernel_load(&be, sp, ptx, ptx_len, "no_such_kernel", &k3);
	check(err == -ENOENT, "%s: missing entry: -ENOENT (%d)", what, err);

	vec_launch(&l, &dummy, &dummy, &dummy, &n);
	l.nparams = 3;
	err = be.ops->launch(&be, sp, 0, k2, &l);
	check(err == -EINVAL, "%s: launch with too few parameters: -EINVAL (%d)",
	      what, err);
	vec_launch(&l, &dummy, &dummy, &dummy, &n);
	l.param_bytes[3] = 8;
	err = be.ops->launch(&be, sp, 0, k2, &l);
	check(err == -EINVAL, "%s: launch with a wrong parameter size: -EINVAL (%d)",
	      what, err);
	vec_launch(&l, &dummy, &dummy, &dummy, &n);
	l.block[0] = 4096;
	err = be.ops->launch(&be, sp, 0, k2, &l);
	check(err == -EINVAL, "%s: launch of 4096 threads a block: -EINVAL (%d)",
	      what, err);
	err = be.ops->sync(&be, sp, NULL);
	check(!err, "%s: the space still syncs after refused launches (%d)",
	      what, err);

	be.ops->kernel_unload(&be, sp, k2);
	be.ops->kernel_unload(&be, sp, k1);
}

/* h2d in @from, d2d to @to, d2h from @to; no sync between them */
static void test_d2d(void *from, void *to, unsigned char *region,
		     const char *what)
{
	size_t bytes = 8u << 20;
	uint64_t df = 0, dt = 0;
	int err;

	fill_random(region, bytes);
	memset(region + HALF, 0, bytes);
	err = be.ops->mem_alloc(&be, from, bytes, &df);
	if (!err)
		err = be.ops->mem_alloc(&be, to, bytes, &dt);
	if (!err)
		err = be.ops->copy_h2d(&be, from, 0, df, region, bytes);
	if (!err)
		err = be.ops->copy_d2d(&be, to, 0, dt, from, 0, df, bytes);
	if (!err)
		err = be.ops->copy_d2h(&be, to, 0, region + HALF, dt, bytes);
	if (!err)
		err = be.ops->sync(&be, to, NULL);
	if (!err)
		err = be.ops->sync(&be, from, NULL);
	check(!err && !memcmp(region, region + HALF, bytes),
	      "%s: d2d of 8 MiB, ordered after both spaces (%d)", what, err);
	if (dt)
		be.ops->mem_free(&be, to, dt);
	if (df)
		be.ops->mem_free(&be, from, df);
}

/* the median launch + sync of the empty kernel, alternating spaces */
static double launch_sync_us(void **sp, void **k, int nsp)
{
	static double t[TIMING_RUNS];
	struct pd_launch l;
	int i, err = 0;
	double t0;

	empty_launch(&l);
	for (i = 0; i < 100 && !err; i++)	/* warm up */
		err = be.ops->launch(&be, sp[i % nsp], 0, k[i % nsp], &l) ?:
		      be.ops->sync(&be, sp[i % nsp], NULL);
	for (i = 0; i < TIMING_RUNS && !err; i++) {
		t0 = now_us();
		err = be.ops->launch(&be, sp[i % nsp], 0, k[i % nsp], &l) ?:
		      be.ops->sync(&be, sp[i % nsp], NULL);
		t[i] = now_us() - t0;
	}
	return err ? -1 : median(t, TIMING_RUNS);
}

static void test_timing(void *a, void *c, void *s, const char *ptx,
			size_t ptx_len)
{
	void *sp[3] = { a, c, s }, *k[3] = { NULL, NULL, NULL };
	double one, two, shared;
	int i, err = 0;

	for (i = 0; i < 3 && !err; i++)
		err = be.ops->kernel_load(&be, sp[i], ptx, ptx_len, "empty", &k[i]);
	check(!err, "empty kernel loaded in three spaces (%d)", err);
	if (err)
		goto out;
	one = launch_sync_us(sp, k, 1);
	two = launch_sync_us(sp, k, 2);
	shared = launch_sync_us(sp + 2, k + 2, 1);
	check(one > 0 && two > 0 && shared > 0, "empty launch + sync timed");
	printf("backend_launch_sync_us=%.2f\n", one);
	printf("backend_launch_sync_alternating_contexts_us=%.2f\n", two);
	printf("backend_launch_sync_primary_context_us=%.2f\n", shared);
out:
	for (i = 0; i < 3; i++)
		if (k[i])
			be.ops->kernel_unload(&be, sp[i], k[i]);
}

/*
 * In a fresh space of @owner, vec_add(@foreign, zeros) into a buffer of
 * its own, n floats.  Returns the launch's or sync's error (the read
 * faulted), or 0 with *@same = how many results equal @expect.
 */
static int foreign_read(uint64_t owner, uint64_t foreign, const float *expect,
			uint32_t n, const char *ptx, size_t ptx_len,
			float *scratch, size_t *same)
{
	size_t bytes = (size_t)n * sizeof(float), i;
	uint64_t db = 0, dc = 0;
	struct pd_launch l;
	void *b = NULL, *k = NULL;
	int err;

	*same = 0;
	err = be.ops->space_open(&be, 0, owner, &b);
	if (!err)
		err = be.ops->kernel_load(&be, b, ptx, ptx_len, "vec_add", &k);
	if (!err)
		err = be.ops->mem_alloc(&be, b, bytes, &db);
	if (!err)
		err = be.ops->mem_alloc(&be, b, bytes, &dc);
	memset(scratch, 0, bytes);
	if (!err)
		err = be.ops->copy_h2d(&be, b, 0, db, scratch, bytes);
	if (!err)
		err = be.ops->sync(&be, b, NULL);
	check(!err, "owner %llu: space, kernel and buffers (%d)",
	      (unsigned long long)owner, err);
	if (err)
		goto out;
	vec_launch(&l, &foreign, &db, &dc, &n);
	err = be.ops->launch(&be, b, 0, k, &l) ?: be.ops->sync(&be, b, NULL);
	if (!err) {
		err = be.ops->copy_d2h(&be, b, 0, scratch, dc, bytes) ?:
		      be.ops->sync(&be, b, NULL);
		for (i = 0; !err && i < n; i++)
			*same += scratch[i] == expect[i];
		err = 0;
	}
out:
	/* after a fault only closing is left to do in b; it must not hang */
	if (b) {
		if (k)
			be.ops->kernel_unload(&be, b, k);
		be.ops->space_close(&be, b);
	}
	return err;
}

/*
 * Owner 3's kernel reads owner 1's pointer: with one context per client
 * that should fault, never return the data.  Measured on an H100 (driver
 * 580.159.04, 2026-11-22) it returns the data: the contexts of one
 * process share the device's GPU address space.  Kept as a TODO test, so
 * the day it holds shows, and reported in full.  Then owner 4's kernel
 * reads an address nobody mapped: that faults, and owner 1 must go on
 * working (test after this one).
 */
static void test_isolation(void *a, const char *ptx, size_t ptx_len,
			   unsigned char *region)
{
	uint32_t n = 1u << 18;
	size_t bytes = (size_t)n * sizeof(float), same;
	float *fa = (float *)region, *scratch = fa + n;
	uint64_t da = 0;
	int err;

	fill_floats(fa, n);
	err = be.ops->mem_alloc(&be, a, bytes, &da);
	if (!err)
		err = be.ops->copy_h2d(&be, a, 0, da, fa, bytes) ?:
		      be.ops->sync(&be, a, NULL);
	check(!err, "isolation: owner 1's buffer (%d)", err);
	if (err)
		return;
	err = foreign_read(3, da, fa, n, ptx, ptx_len, scratch, &same);
	if (err) {
		check(1, "isolation: owner 3 reading owner 1's pointer faults (%d)",
		      err);
	} else {
		printf("not ok %d - isolation: owner 3 reading owner 1's pointer faults"
		       " # TODO contexts of one process share the GPU address space"
		       " (%zu of %u floats were owner 1's)\n",
		       npass + nfail + ntodo + 1, same, n);
		ntodo++;
	}
	be.ops->mem_free(&be, a, da);
}

/* --- lanes and fences (backend.h: fence, fence_poll, fence_wait, ...) --- */

#define BUSY_NS		(3ull * 1000 * 1000)	/* a kernel still running */
#define OVERLAP_NS	(20ull * 1000 * 1000)
#define POLLER_FENCES	5000

/* one thread, one block: the test kernels do their work in thread 0 */
static void one_launch(struct pd_launch *l, uint32_t nparams, void **params,
		       const uint32_t *bytes)
{
	uint32_t i;

	memset(l, 0, sizeof(*l));
	l->grid[0] = l->grid[1] = l->grid[2] = 1;
	l->block[0] = l->block[1] = l->block[2] = 1;
	l->nparams = nparams;
	for (i = 0; i < nparams; i++) {
		l->params[i] = params[i];
		l->param_bytes[i] = bytes[i];
	}
}

/* busy_store(p, v, ns) on @lane, timed unless @untimed */
static int busy_store_as(void *sp, uint32_t lane, void *k, uint64_t *p,
			 uint32_t *v, uint64_t *ns, bool untimed)
{
	static const uint32_t bytes[3] = { 8, 4, 8 };
	void *params[3] = { p, v, ns };
	struct pd_launch l;

	one_launch(&l, 3, params, bytes);
	l.untimed = untimed;
	return be.ops->launch(&be, sp, lane, k, &l);
}

static int busy_store(void *sp, uint32_t lane, void *k, uint64_t *p,
		      uint32_t *v, uint64_t *ns)
{
	return busy_store_as(sp, lane, k, p, v, ns, false);
}

static int load_kernels(void *sp, const char *ptx, size_t ptx_len,
			const char *const *names, void **k, int n)
{
	int i, err = 0;

	for (i = 0; i < n && !err; i++)
		err = be.ops->kernel_load(&be, sp, ptx, ptx_len, names[i], &k[i]);
	return err;
}

static void unload_kernels(void *sp, void **k, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (k[i])
			be.ops->kernel_unload(&be, sp, k[i]);
}

/* wait for @t with fence_wait; -errno, or the device time reported */
static int64_t wait_ns(void *sp, uint32_t lane, uint64_t t)
{
	uint64_t ns = UINT64_MAX;
	int r = be.ops->fence_wait(&be, sp, lane, t, &ns);

	return r == 1 ? (int64_t)ns : r < 0 ? r : -1000;
}

/*
 * Fences on every lane: in order within a lane, a poll before the kernel
 * ends says 0, each fence's device time reported once, lanes overlap,
 * bad arguments refused.
 */
static void test_fences(void *sp, uint32_t dev, const char *ptx,
			size_t ptx_len)
{
	static const char *const names[] = { "busy_store", "empty" };
	const struct pd_device_info *info = &be.info[dev];
	uint32_t nl = info->lanes, i, v = 7;
	uint64_t d = 0, t[PD_MAX_LANES], t2, ns = 0, busy = BUSY_NS;
	uint64_t overlap = OVERLAP_NS, dp;
	void *k[2] = { NULL, NULL };
	int64_t got[PD_MAX_LANES];
	int err, r1, r2, bad = 0, zero = 0, polls;
	double t0, wall;
	struct pd_launch l;

	printf("# dev %u: %u lanes, inplace_max %llu\n", dev, nl,
	       (unsigned long long)info->inplace_max);
	check(nl == 4, "dev %u: 4 lanes by default (%u)", dev, nl);
	check(info->inplace_max >= 4 && info->inplace_max <= (64u << 10),
	      "dev %u: inplace_max in 4 B..64 KiB (%llu)", dev,
	      (unsigned long long)info->inplace_max);
	if (!event_mode)
		printf("backend_inplace_max=%llu\n",
		       (unsigned long long)info->inplace_max);
	err = load_kernels(sp, ptx, ptx_len, names, k, 2);
	if (!err)
		err = be.ops->mem_alloc(&be, sp, 4096, &d);
	check(!err, "dev %u: busy_store and empty loaded, 4 KiB (%d)", dev, err);
	if (err)
		goto out;

	/* one busy kernel per lane, each fenced; polled at once: not yet */
	for (i = 0; i < nl && !err; i++) {
		dp = d + 64 * i;
		err = busy_store(sp, i, k[0], &dp, &v, &busy) ?:
		      be.ops->fence(&be, sp, i, &t[i]);
	}
	for (i = 0; i < nl && !err; i++)
		zero += be.ops->fence_poll(&be, sp, i, t[i], &ns) == 0;
	check(!err && zero == (int)nl,
	      "dev %u: a poll while the %llu ms kernel runs says 0 on every lane (%d of %u, %d)",
	      dev, BUSY_NS / 1000000, zero, nl, err);
	for (i = 0; i < nl && !err; i++)
		got[i] = wait_ns(sp, i, t[i]);
	for (i = 0; i < nl && !err; i++) {
		printf("# lane %u: fence %llu: device time %lld ns\n", i,
		       (unsigned long long)t[i], (long long)got[i]);
		bad += got[i] < (int64_t)(BUSY_NS * 9 / 10) ||
		       got[i] > (int64_t)(BUSY_NS * 10);
	}
	check(!err && !bad, "dev %u: fence_wait on every lane: passed, device time ~%llu ms each",
	      dev, BUSY_NS / 1000000);
	ns = 1;
	r1 = be.ops->fence_poll(&be, sp, 0, t[0], &ns);
	check(r1 == 1 && ns == 0,
	      "dev %u: a second poll of a passed fence: 1, device time 0 (reported once) (%d, %llu)",
	      dev, r1, (unsigned long long)ns);

	/* in order within a lane: two fences, the second never first */
	err = busy_store(sp, 1, k[0], &d, &v, &busy) ?:
	      be.ops->fence(&be, sp, 1, &t[0]) ?:
	      busy_store(sp, 1, k[0], &d, &v, &busy) ?:
	      be.ops->fence(&be, sp, 1, &t[1]);
	bad = 0;
	polls = 0;
	do {
		r2 = be.ops->fence_poll(&be, sp, 1, t[1], NULL);
		r1 = be.ops->fence_poll(&be, sp, 1, t[0], NULL);
		bad += r2 == 1 && r1 != 1;
		polls++;
	} while (!err && r2 == 0 && r1 >= 0);
	check(!err && t[1] > t[0] && r2 == 1 && !bad,
	      "dev %u: fences of one lane pass in order (%d polls, %d out of order, %d)",
	      dev, polls, bad, err);

	/* lanes overlap: nl kernels of 20 ms take about 20 ms, not nl x 20 */
	t0 = now_us();
	for (i = 0, err = 0; i < nl && !err; i++) {
		dp = d + 64 * i;
		err = busy_store(sp, i, k[0], &dp, &v, &overlap) ?:
		      be.ops->fence(&be, sp, i, &t[i]);
	}
	for (i = 0; i < nl && !err; i++)
		if ((got[i] = wait_ns(sp, i, t[i])) < 0)
			err = (int)got[i];
	wall = now_us() - t0;
	check(!err && (nl == 1 || wall < 1.6 * OVERLAP_NS / 1e3),
	      "dev %u: %u lanes of 20 ms kernels overlap (%.1f ms wall, %d)",
	      dev, nl, wall / 1e3, err);

	/*
	 * Untimed launches (pd_launch.untimed): estimated device time, one
	 * kernel about its length, overlapping lanes never more than the
	 * wall time together.
	 */
	err = busy_store_as(sp, 0, k[0], &d, &v, &busy, true) ?:
	      be.ops->fence(&be, sp, 0, &t[0]);
	got[0] = err ? err : wait_ns(sp, 0, t[0]);
	check(!err && got[0] >= (int64_t)(BUSY_NS * 9 / 10) &&
	      got[0] <= (int64_t)(BUSY_NS * 10),
	      "dev %u: an untimed %llu ms kernel's fence reports an estimate near it (%lld ns)",
	      dev, BUSY_NS / 1000000, (long long)got[0]);
	t0 = now_us();
	for (i = 0, err = 0; i < nl && !err; i++) {
		dp = d + 64 * i;
		err = busy_store_as(sp, i, k[0], &dp, &v, &busy, true) ?:
		      be.ops->fence(&be, sp, i, &t[i]);
	}
	ns = 0;
	for (i = 0; i < nl && !err; i++) {
		if ((got[i] = wait_ns(sp, i, t[i])) < 0)
			err = (int)got[i];
		else
			ns += (uint64_t)got[i];
	}
	wall = now_us() - t0;
	check(!err && ns >= BUSY_NS * 9 / 10 && ns <= (uint64_t)(wall * 1e3),
	      "dev %u: %u overlapping untimed kernels: estimates add up to no more than the wall time (%llu ns of %.0f, %d)",
	      dev, nl, (unsigned long long)ns, wall * 1e3, err);

	/* bad arguments */
	one_launch(&l, 0, NULL, NULL);
	check(be.ops->fence(&be, sp, nl, &t2) == -EINVAL,
	      "dev %u: fence on lane %u (of %u): -EINVAL", dev, nl, nl);
	check(be.ops->launch(&be, sp, nl, k[1], &l) == -EINVAL,
	      "dev %u: launch on lane %u: -EINVAL", dev, nl);
	check(be.ops->copy_h2d(&be, sp, nl, d, &v, 4) == -EINVAL,
	      "dev %u: copy_h2d on lane %u: -EINVAL", dev, nl);
	check(be.ops->fence_poll(&be, sp, nl, 1, NULL) == -EINVAL,
	      "dev %u: fence_poll on lane %u: -EINVAL", dev, nl);
	check(be.ops->fence_poll(&be, sp, 0, 0, NULL) == -EINVAL,
	      "dev %u: fence_poll of ticket 0: -EINVAL", dev);
	check(be.ops->fence_poll(&be, sp, 0, 1u << 30, NULL) == -EINVAL,
	      "dev %u: fence_poll of a ticket never made: -EINVAL", dev);
	check(be.ops->fence_wait(&be, sp, 0, 1u << 30, NULL) == -EINVAL,
	      "dev %u: fence_wait of a ticket never made: -EINVAL", dev);
	check(be.ops->lane_wait(&be, sp, 0, nl, 1) == -EINVAL,
	      "dev %u: lane_wait from lane %u: -EINVAL", dev, nl);
	check(be.ops->lane_wait(&be, sp, 0, 1, 1u << 30) == -EINVAL,
	      "dev %u: lane_wait for a ticket never made: -EINVAL", dev);
	err = be.ops->sync(&be, sp, NULL);
	check(!err, "dev %u: the space syncs after the refused calls (%d)", dev, err);
out:
	if (d)
		be.ops->mem_free(&be, sp, d);
	unload_kernels(sp, k, 2);
}

/*
 * lane_wait orders a lane after another's fence: a kernel on lane 1
 * reads what a busy kernel on lane 0 writes; without the wait it runs
 * ahead and reads the old value (so the test can fail).
 */
static void test_lane_wait(void *sp, uint32_t dev, const char *ptx,
			   size_t ptx_len)
{
	static const char *const names[] = { "busy_store", "load_inc" };
	static const uint32_t inc_bytes[2] = { 8, 8 };
	uint32_t zero = 0, v = 42, out[2] = { 0, 0 }, pass;
	uint64_t d = 0, q, t0, t1, busy = BUSY_NS;
	void *k[2] = { NULL, NULL }, *params[2];
	struct pd_launch l;
	int err;

	if (be.info[dev].lanes < 2)
		return;
	err = load_kernels(sp, ptx, ptx_len, names, k, 2) ?:
	      be.ops->mem_alloc(&be, sp, 4096, &d);
	check(!err, "dev %u: lane_wait: kernels and memory (%d)", dev, err);
	if (err)
		goto out;
	q = d + 256;
	params[0] = &d;
	params[1] = &q;
	one_launch(&l, 2, params, inc_bytes);
	for (pass = 0; pass < 2 && !err; pass++) {
		err = be.ops->copy_h2d(&be, sp, 0, d, &zero, 4) ?:
		      be.ops->sync(&be, sp, NULL) ?:
		      busy_store(sp, 0, k[0], &d, &v, &busy) ?:
		      be.ops->fence(&be, sp, 0, &t0);
		if (!err && pass == 1)
			err = be.ops->lane_wait(&be, sp, 1, 0, t0);
		err = err ?: be.ops->launch(&be, sp, 1, k[1], &l) ?:
		      be.ops->copy_d2h(&be, sp, 1, &out[pass], q, 4) ?:
		      be.ops->fence(&be, sp, 1, &t1);
		if (!err && wait_ns(sp, 1, t1) < 0)
			err = -EIO;
		if (!err && wait_ns(sp, 0, t0) < 0)
			err = -EIO;
	}
	check(!err && out[0] == 1,
	      "dev %u: without lane_wait lane 1 runs ahead of lane 0's kernel (read %u, %d)",
	      dev, out[0], err);
	check(!err && out[1] == 43,
	      "dev %u: lane_wait: lane 1's kernel reads what lane 0's wrote (%u, want 43; %d)",
	      dev, out[1], err);
	check(be.ops->lane_wait(&be, sp, 1, 1, t1) == 0,
	      "dev %u: lane_wait on its own lane: no-op", dev);
out:
	if (d)
		be.ops->mem_free(&be, sp, d);
	unload_kernels(sp, k, 2);
}

/*
 * Held launches (backend.h): a chain of load_inc hops on one lane, each
 * held with a deferred fence, flushed at the end.  A deferred fence is
 * not waited for (-EDEADLK) nor passed before the flush; the first round
 * runs one by one (a kernel is held only once a launch of its geometry
 * succeeded), then the shape is seen PD_SHAPE_BUILD_AFTER times and
 * replayed as a CUDA graph, also with other buffers (its nodes patched);
 * then two sets of buffers in turn replay an instantiation each, with
 * no patching (cuda_lone.c, "Variants").  Every round's result is
 * checked, so a replay that ran stale parameters fails.
 */
#define HELD_HOPS 8
static void test_held(void *sp, uint32_t dev, const char *ptx, size_t ptx_len)
{
	static const char *const names[] = { "load_inc" };
	static const uint32_t inc_bytes[2] = { 8, 8 };
	struct cuda_be *cb = be.priv;
	uint32_t round, i, in, out = 0, replays = 0, wrong = 0, lane = 0;
	uint64_t d = 0, src, dst, t[HELD_HOPS], base, patched = 0;
	int err, flushed, deadlk = 0, early = 0;
	void *k[1] = { NULL }, *params[2];
	struct pd_launch l;

	if (!be.ops->flush || !be.ops->fence_defer || event_mode)
		return;
	err = load_kernels(sp, ptx, ptx_len, names, k, 1) ?:
	      be.ops->mem_alloc(&be, sp, 1 << 16, &d);
	check(!err, "dev %u: held: kernel and memory (%d)", dev, err);
	if (err)
		goto out;
	for (round = 0; round < 12 && !err; round++) {
		/*
		 * rounds 4 and 5 use other buffers: the graph is patched (a
		 * second instantiation made); from round 6 the buffers of
		 * rounds 3 and 5 in turn, one instantiation each
		 */
		base = d + (round >= 6 ? (round % 2) * 4096 * 5 :
			    round >= 4 ? 4096 * round : 0);
		if (round == 6)
			patched = atomic_load(&cb->held_patched);
		in = 1000 * round;
		err = be.ops->copy_h2d(&be, sp, lane, base, &in, 4);
		for (i = 0; i < HELD_HOPS && !err; i++) {
			src = base + 256 * i;
			dst = base + 256 * (i + 1);
			params[0] = &src;
			params[1] = &dst;
			one_launch(&l, 2, params, inc_bytes);
			l.untimed = true;
			l.hold = true;
			err = be.ops->launch(&be, sp, lane, k[0], &l);
			if (!err && i + 1 < HELD_HOPS)
				err = be.ops->fence_defer(&be, sp, lane, &t[i]);
		}
		if (!err && round > 0) {
			deadlk += be.ops->fence_wait(&be, sp, lane, t[0], NULL) ==
				  -EDEADLK;
			early += be.ops->fence_poll(&be, sp, lane, t[HELD_HOPS - 2],
						    NULL) != 0;
		}
		flushed = err ? err : be.ops->flush(&be, sp, lane);
		if (flushed < 0)
			err = flushed;
		replays += flushed == 1;
		err = err ?: be.ops->fence(&be, sp, lane, &t[HELD_HOPS - 1]);
		if (!err && wait_ns(sp, lane, t[HELD_HOPS - 1]) < 0)
			err = -EIO;
		if (!err && wait_ns(sp, lane, t[0]) < 0)
			err = -EIO;
		err = err ?: be.ops->copy_d2h(&be, sp, lane, &out,
					      base + 256 * HELD_HOPS, 4) ?:
		      be.ops->sync(&be, sp, NULL);
		printf("# held round %u: flush %d, out %u (want %u)\n", round,
		       flushed, out, in + HELD_HOPS);
		wrong += out != in + HELD_HOPS;
	}
	check(!err && !wrong,
	      "dev %u: held: %u hops held and flushed, right result every round (%u wrong, %d)",
	      dev, HELD_HOPS, wrong, err);
	check(deadlk == 12 - 1 && !early,
	      "dev %u: held: a deferred fence is refused by fence_wait (-EDEADLK) and not passed before the flush (%d, %d)",
	      dev, deadlk, early);
	check(replays == 12 - 1 - PD_SHAPE_BUILD_AFTER,
	      "dev %u: held: replayed as a graph from the %u-th flush, patched for other buffers (%u replays)",
	      dev, PD_SHAPE_BUILD_AFTER + 2, replays);
	patched = atomic_load(&cb->held_patched) - patched;
	check(cb->variants < 2 || !patched,
	      "dev %u: held: two sets of buffers in turn replay an instantiation each, unpatched (%llu patched, %u variants)",
	      dev, (unsigned long long)patched, cb->variants);
out:
	if (d)
		be.ops->mem_free(&be, sp, d);
	unload_kernels(sp, k, 1);
}

/* launches replayed from one-node graphs so far (cuda_lone.c) */
static uint64_t lone_replays(void)
{
	return atomic_load(&((struct cuda_be *)be.priv)->lone_replays);
}

/* graphs @k has on the lanes of space @sp */
static uint32_t lone_graphs_of(void *sp, const void *k)
{
	struct cuda_space *s = sp;
	uint32_t i, j, n = 0;

	for (i = 0; i < s->nlanes; i++)
		for (j = 0; j < PD_CUDA_LONE; j++)
			n += s->lane[i].lone[j].kernel == k;
	return n;
}

/*
 * Launches that are not held replay a one-node graph from a kernel's
 * third launch in one geometry, patched for other buffers, each result
 * right; another geometry is launched plainly and does not evict it; a
 * kernel keeps up to cb->lone_variants graphs, set to two here whatever
 * the default, so that two buffers in turn need no patching (cuda_lone.c,
 * "DOC: variants"); a kernel's unload drops its graphs.
 */
static void test_lone(void *sp, uint32_t dev, const char *ptx, size_t ptx_len)
{
	static const char *const names[] = { "load_inc" };
	static const uint32_t inc_bytes[2] = { 8, 8 };
	uint32_t round, in, out, wrong = 0, lane = 1 % be.info[dev].lanes;
	uint64_t d = 0, src, dst, t, before, replayed = 0, wide = 0, patched = 0;
	void *k[1] = { NULL }, *params[2] = { &src, &dst };
	struct cuda_be *cb = be.priv;
	uint32_t variants = cb->lone_variants;
	struct pd_launch l;
	int err;

	if (!cb->lone_graphs) {
		printf("# lone graphs off (PTASKD_NO_LONE_GRAPH or no graphs)\n");
		return;
	}
	cb->lone_variants = 2;
	err = load_kernels(sp, ptx, ptx_len, names, k, 1) ?:
	      be.ops->mem_alloc(&be, sp, 1 << 16, &d);
	check(!err, "dev %u: lone: kernel and memory (%d)", dev, err);
	if (err)
		goto out;
	for (round = 0; round < 20 && !err; round++) {
		/*
		 * three buffers in turn (more than two variants): the node
		 * is patched most rounds; from round 10 two in turn, which
		 * two graphs hold once round 12 came
		 */
		src = d + 4096 * (round < 10 ? round % 3 : round % 2);
		if (round == 12)
			patched = atomic_load(&cb->lone_patched);
		dst = src + 256;
		in = 1000 * round + 7;
		out = 0;
		one_launch(&l, 2, params, inc_bytes);
		l.untimed = round % 2;	/* timed spans replay too */
		/* round 6: two blocks, another geometry, launched plainly */
		l.grid[0] = round == 6 ? 2 : 1;
		before = lone_replays();
		err = be.ops->copy_h2d(&be, sp, lane, src, &in, 4) ?:
		      be.ops->launch(&be, sp, lane, k[0], &l) ?:
		      be.ops->copy_d2h(&be, sp, lane, &out, dst, 4) ?:
		      be.ops->fence(&be, sp, lane, &t);
		if (!err && wait_ns(sp, lane, t) < 0)
			err = -EIO;
		replayed += lone_replays() - before;
		wide += round == 6 && lone_replays() != before;
		wrong += out != in + 1;
	}
	/* rounds 2-5 and 7-19: the wide one left the narrow graphs alone */
	check(!err && !wrong,
	      "dev %u: lone: 10 launches of one kernel, 3 buffers and 2 geometries: every result right (%u wrong, %d)",
	      dev, wrong, err);
	check(replayed == 17 && !wide && lone_graphs_of(sp, k[0]) == 2,
	      "dev %u: lone: replayed from the third launch in one geometry, patched, not for another (%llu replays, %llu wide, %u graphs, want 2)",
	      dev, (unsigned long long)replayed, (unsigned long long)wide,
	      lone_graphs_of(sp, k[0]));
	patched = atomic_load(&cb->lone_patched) - patched;
	check(!patched,
	      "dev %u: lone: two buffers in turn replay a graph each, unpatched (%llu patched)",
	      dev, (unsigned long long)patched);
out:
	cb->lone_variants = variants;
	if (d)
		be.ops->mem_free(&be, sp, d);
	if (k[0]) {
		void *gone = k[0];

		unload_kernels(sp, k, 1);
		check(!lone_graphs_of(sp, gone),
		      "dev %u: lone: a kernel's unload drops its graphs", dev);
	}
}

struct poller {
	void *sp;
	uint32_t lane;
	_Atomic uint64_t made;		/* tickets the owner made so far */
	_Atomic uint64_t want;		/* the last one */
	uint64_t ns;
	int err;
};

/* Another thread: waits for each ticket in turn while the owner queues. */
static void *poller_main(void *arg)
{
	struct poller *p = arg;
	uint64_t t = 1, ns;
	int r;

	while (t <= p->want) {
		if (t > atomic_load(&p->made))
			continue;
		ns = 0;
		r = t % 2 ? be.ops->fence_wait(&be, p->sp, p->lane, t, &ns) :
			    be.ops->fence_poll(&be, p->sp, p->lane, t, &ns);
		if (r < 0) {
			p->err = r;
			break;
		}
		if (r == 1) {
			p->ns += ns;
			t++;
		}
	}
	return NULL;
}

/*
 * fence_poll and fence_wait from another thread while the owner queues
 * launches and fences on the same lane (and another), past the ring's
 * size: no error, every fence passes, device time adds up.
 */
static void test_poller_thread(void *sp, uint32_t dev, const char *ptx,
			       size_t ptx_len)
{
	static const char *const names[] = { "empty" };
	struct poller p = { .sp = sp, .lane = be.info[dev].lanes - 1 };
	uint64_t t, first, sync_ns = 0, other;
	void *k[1] = { NULL };
	struct pd_launch l;
	pthread_t th;
	double t0;
	int i, err;

	err = load_kernels(sp, ptx, ptx_len, names, k, 1);
	if (!err)
		err = be.ops->sync(&be, sp, NULL);
	if (err) {
		check(0, "dev %u: poller: empty kernel (%d)", dev, err);
		return;
	}
	empty_launch(&l);
	/* the lane's next ticket: make one to learn it */
	err = be.ops->fence(&be, sp, p.lane, &first) ?:
	      be.ops->fence_wait(&be, sp, p.lane, first, NULL) == 1 ? 0 : -EIO;
	p.want = first + POLLER_FENCES;
	atomic_store(&p.made, first);
	if (!err)
		err = -pthread_create(&th, NULL, poller_main, &p);
	if (err) {
		check(0, "dev %u: poller thread (%d)", dev, err);
		goto out;
	}
	t0 = now_us();
	for (i = 0; i < POLLER_FENCES && !err; i++) {
		err = be.ops->launch(&be, sp, p.lane, k[0], &l) ?:
		      be.ops->fence(&be, sp, p.lane, &t) ?:
		      be.ops->launch(&be, sp, 0, k[0], &l) ?:
		      be.ops->fence(&be, sp, 0, &other);
		if (!err && t != atomic_load(&p.made) + 1)
			err = -ERANGE;
		atomic_store(&p.made, t);
	}
	if (err)
		p.want = atomic_load(&p.made);	/* let the poller end */
	pthread_join(th, NULL);
	t0 = now_us() - t0;
	err = err ?: be.ops->sync(&be, sp, &sync_ns);
	check(!err && !p.err && p.ns > 0,
	      "dev %u: %d fences polled by another thread while queued: all passed in order (%.0f us, device time %llu ns, %llu more at sync; %d, %d)",
	      dev, POLLER_FENCES, t0, (unsigned long long)p.ns,
	      (unsigned long long)sync_ns, err, p.err);
	printf("backend_launch_fence_pipelined%s_us=%.2f\n",
	       event_mode ? "_events" : "", t0 / POLLER_FENCES / 2);
out:
	unload_kernels(sp, k, 1);
}

/*
 * host_device_ptr: a kernel reads and writes registered host memory in
 * place, in two contexts; ranges outside host_register: -ENOENT.
 */
static void test_host_ptr(void *a, void *c, const char *ptx, size_t ptx_len,
			  unsigned char *region)
{
	static const char *const names[] = { "twice_plus_one" };
	static const uint32_t bytes[2] = { 8, 4 };
	uint32_t n = 1000, *p = (uint32_t *)(region + 4096 + 16), i, bad = 0;
	uint32_t *want = malloc(n * sizeof(*want));
	void *sps[2] = { a, c }, *k[1] = { NULL }, *params[2];
	char *heap = malloc(4096);
	uint64_t d = 0, t;
	struct pd_launch l;
	int s, err;

	if (!want || !heap) {
		check(0, "host_device_ptr: memory");
		goto out;
	}
	for (s = 0; s < 2; s++) {
		fill_random(p, n * sizeof(*p));
		for (i = 0; i < n; i++)
			want[i] = p[i] * 2 + 1;
		err = be.ops->host_device_ptr(&be, sps[s], p, n * sizeof(*p), &d) ?:
		      load_kernels(sps[s], ptx, ptx_len, names, k, 1);
		params[0] = &d;
		params[1] = &n;
		one_launch(&l, 2, params, bytes);
		l.grid[0] = (n + 255) / 256;
		l.block[0] = 256;
		err = err ?: be.ops->launch(&be, sps[s], 2 % be.info[0].lanes,
					    k[0], &l) ?:
		      be.ops->fence(&be, sps[s], 2 % be.info[0].lanes, &t);
		if (!err && wait_ns(sps[s], 2 % be.info[0].lanes, t) < 0)
			err = -EIO;
		for (i = 0, bad = 0; !err && i < n; i++)
			bad += p[i] != want[i];
		check(!err && !bad,
		      "host_device_ptr (%s): a kernel doubled %u words of host memory in place (%d, %u wrong, %#llx for %p)",
		      s ? "owner 2's context" : "owner 1's context", n, err, bad,
		      (unsigned long long)d, (void *)p);
		unload_kernels(sps[s], k, 1);
		k[0] = NULL;
	}
	check(be.ops->host_device_ptr(&be, a, heap, 4096, &d) == -ENOENT,
	      "host_device_ptr of unregistered memory: -ENOENT");
	check(be.ops->host_device_ptr(&be, a, region + REGION_BYTES - 8, 16, &d) == -ENOENT,
	      "host_device_ptr of a range past the registration's end: -ENOENT");
	check(be.ops->host_device_ptr(&be, a, region, 0, &d) == -EINVAL,
	      "host_device_ptr of 0 bytes: -EINVAL");
out:
	free(heap);
	free(want);
}

/* the CPU cost of the calls an invocation makes, and the round trip */
static void test_fence_timing(void *sp, const char *ptx, size_t ptx_len)
{
	static const char *const names[] = { "empty" };
	static double tl[TIMING_RUNS], tf[TIMING_RUNS], tw[TIMING_RUNS];
	void *k[1] = { NULL };
	struct pd_launch l;
	uint64_t t;
	double t0, t1, t2;
	int i, err;

	int untimed;

	err = load_kernels(sp, ptx, ptx_len, names, k, 1);
	empty_launch(&l);
	for (untimed = 0; untimed < 2; untimed++) {
		l.untimed = untimed;
		for (i = -100; i < TIMING_RUNS && !err; i++) {
			t0 = now_us();
			err = be.ops->launch(&be, sp, 0, k[0], &l);
			t1 = now_us();
			err = err ?: be.ops->fence(&be, sp, 0, &t);
			t2 = now_us();
			if (!err &&
			    be.ops->fence_wait(&be, sp, 0, t, NULL) != 1)
				err = -EIO;
			if (i >= 0) {
				tl[i] = t1 - t0;
				tf[i] = t2 - t1;
				tw[i] = now_us() - t0;
			}
		}
		check(!err, "launch (%s) + fence + fence_wait timed (%d)",
		      untimed ? "untimed" : "timed", err);
		if (err)
			break;
		printf("backend_launch%s_cpu_us=%.2f\n",
		       untimed ? "_untimed" : "", median(tl, TIMING_RUNS));
		printf("backend_fence%s_cpu_us=%.2f\n",
		       untimed ? "_untimed" : "", median(tf, TIMING_RUNS));
		printf("backend_launch%s_fence_wait_us=%.2f\n",
		       untimed ? "_untimed" : "", median(tw, TIMING_RUNS));
	}
	unload_kernels(sp, k, 1);
}

/*
 * A faulting kernel (vec_add writing to an address nobody mapped) in a
 * fresh space of owner 4: fence_wait and every later poll there say
 * -EIO; owner 1's space @a still reports its fence that passed before.
 */
static void test_fence_fault(void *a, const char *ptx, size_t ptx_len)
{
	static const char *const names[] = { "vec_add" };
	static const char *const enames[] = { "empty" };
	uint64_t bad_ptr = 0x1000, ta = 0, tf = 0, t2;
	uint32_t n = 1u << 20;
	void *b = NULL, *k[1] = { NULL }, *ka[1] = { NULL };
	struct pd_launch l;
	double t0;
	int err, r;

	err = load_kernels(a, ptx, ptx_len, enames, ka, 1);
	empty_launch(&l);
	err = err ?: be.ops->launch(&be, a, 0, ka[0], &l) ?:
	      be.ops->fence(&be, a, 0, &ta);
	r = err ? err : be.ops->fence_wait(&be, a, 0, ta, NULL);
	check(r == 1, "owner 1: a fence before the fault passes (%d)", r);
	err = be.ops->space_open(&be, 0, 4, &b) ?:
	      load_kernels(b, ptx, ptx_len, names, k, 1);
	check(!err, "owner 4: space and vec_add (%d)", err);
	if (err)
		goto out;
	vec_launch(&l, &bad_ptr, &bad_ptr, &bad_ptr, &n);
	err = be.ops->launch(&be, b, 0, k[0], &l) ?:
	      be.ops->fence(&be, b, 0, &tf);
	t0 = now_us();
	r = err ? err : be.ops->fence_wait(&be, b, 0, tf, NULL);
	check(r == -EIO, "owner 4: fence_wait behind a faulting kernel: -EIO (%d, after %.1f ms)",
	      r, (now_us() - t0) / 1e3);
	r = be.ops->fence_poll(&be, b, 0, tf, NULL);
	check(r == -EIO, "owner 4: a later poll: -EIO too (%d)", r);
	r = be.ops->fence_poll(&be, b, 1 % be.info[0].lanes, 1, NULL);
	check(r == -EIO, "owner 4: a poll on another lane of the space: -EIO (%d)", r);
	r = be.ops->fence(&be, b, 0, &t2);
	check(r == -EIO, "owner 4: queuing on the failed space: -EIO (%d)", r);
	r = be.ops->fence_poll(&be, a, 0, ta, NULL);
	check(r == 1, "owner 1 (another context): its passed fence still polls 1, not -EIO (%d)",
	      r);
	check(fatal_calls > 0,
	      "the fault is reported as fatal (pd_fatal called %d times)",
	      fatal_calls);
out:
	if (b) {
		unload_kernels(b, k, 1);
		be.ops->space_close(&be, b);
	}
	unload_kernels(a, ka, 1);
}

/*
 * The event fallback (config "fences=events"): the fence tests again on
 * device 0, with fences polled through cuEventQuery, before the main
 * run (after its fault the process's CUDA is broken).
 */
static void test_event_fences(const char *ptx, size_t ptx_len)
{
	void *sp = NULL;
	int err;

	err = be.ops->init(&be, "fences=events");
	if (err == -ENODEV)
		return;
	check(!err, "init(\"fences=events\"): %d", err);
	if (err)
		return;
	err = be.ops->space_open(&be, 0, 1, &sp);
	check(!err, "fences=events: space_open(dev 0, owner 1): %d", err);
	if (!err) {
		printf("# fences=events\n");
		event_mode = true;
		test_fences(sp, 0, ptx, ptx_len);
		test_lane_wait(sp, 0, ptx, ptx_len);
		test_poller_thread(sp, 0, ptx, ptx_len);
		event_mode = false;
		be.ops->space_close(&be, sp);
	}
	be.ops->fini(&be);
}

/* after fini, the "shared" config: an owner's space is the primary context */
static void test_shared_config(const char *ptx, size_t ptx_len,
			       unsigned char *region)
{
	void *sp = NULL, *k = NULL;
	int err;

	static const char *const bad[] = {
		"bogus", "lanes=0", "lanes=17", "lanes=2x", "lanes=", "shared,",
		",shared", "lanes=-1", "shared;lanes=2",
	};
	struct pd_launch l;
	uint64_t t;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = be.ops->init(&be, bad[i]);
		check(err == -EINVAL, "init(\"%s\"): -EINVAL (%d)", bad[i], err);
	}
	err = be.ops->init(&be, "shared,lanes=2");
	check(!err, "init(\"shared,lanes=2\"): %d", err);
	if (err)
		return;
	check(be.info[0].lanes == 2, "shared,lanes=2: 2 lanes (%u)",
	      be.info[0].lanes);
	err = be.ops->space_open(&be, 0, 7, &sp);
	if (!err)
		err = be.ops->kernel_load(&be, sp, ptx, ptx_len, "vec_add", &k);
	check_after_fault(!err, "shared config: space and kernel", err);
	if (!err)
		run_vec_add(sp, k, region, "shared config");
	if (!err) {
		empty_launch(&l);
		check(be.ops->fence(&be, sp, 2, &t) == -EINVAL,
		      "shared,lanes=2: fence on lane 2: -EINVAL");
	}
	if (k)
		be.ops->kernel_unload(&be, sp, k);
	if (sp)
		be.ops->space_close(&be, sp);
	be.ops->fini(&be);
}

int main(int argc, char **argv)
{
	void *sp[PD_MAX_DEVICES] = { NULL }, *c = NULL, *s = NULL, *k = NULL;
	unsigned char *region = MAP_FAILED;
	size_t ptx_len = 0;
	uint64_t d = 0;
	char *ptx;
	double t_init;
	uint32_t i;
	int err, fd = -1;

	if (argc != 2) {
		fprintf(stderr, "usage: %s KERNELS.PTX\n", argv[0]);
		return 2;
	}
	rng_state = (uint64_t)time(NULL) * 2654435761u | 1;
	ptx = slurp(argv[1], &ptx_len);
	if (!ptx) {
		fprintf(stderr, "cuda_backend_test: cannot read %s: %s\n",
			argv[1], strerror(errno));
		return 1;
	}
	pd_log_level = PD_LOG_DEBUG;	/* the copy curve of inplace_max */
	test_event_fences(ptx, ptx_len);
	t_init = now_us();
	err = be.ops->init(&be, "");
	t_init = now_us() - t_init;
	if (err == -ENODEV) {
		printf("1..0 # SKIP no GPU (init: -ENODEV)\n");
		printf("0 passed, 0 failed, 1 skipped\n");
		free(ptx);
		return 77;
	}
	check(!err, "init: %d (%.1f ms, copy curve and primary contexts included)",
	      err, t_init / 1e3);
	if (err)
		goto out_summary;
	printf("backend_init_ms=%.1f\n", t_init / 1e3);
	test_devices();

	fd = memfd_create("ptask-arena", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, REGION_BYTES) ||
	    (region = mmap(NULL, REGION_BYTES, PROT_READ | PROT_WRITE,
			   MAP_SHARED, fd, 0)) == MAP_FAILED) {
		check(0, "64 MiB memfd region: %s", strerror(errno));
		goto out_fini;
	}
	err = be.ops->host_register(&be, region, REGION_BYTES);
	check(!err, "host_register of a 64 MiB memfd mapping: %d", err);
	err = be.ops->host_register(&be, region, REGION_BYTES);
	check(err == -EEXIST, "host_register again: -EEXIST (%d)", err);

	for (i = 0; i < be.ndev; i++) {
		err = be.ops->space_open(&be, i, 1, &sp[i]);
		check(!err, "space_open(dev %u, owner 1): %d", i, err);
		if (err)
			goto out_close;
		test_roundtrip(sp[i], i, region);
		test_kernels(sp[i], i, ptx, ptx_len, region);
		test_fences(sp[i], i, ptx, ptx_len);
		test_lane_wait(sp[i], i, ptx, ptx_len);
		test_held(sp[i], i, ptx, ptx_len);
		test_lone(sp[i], i, ptx, ptx_len);
		test_poller_thread(sp[i], i, ptx, ptx_len);
	}

	err = be.ops->space_open(&be, 0, 2, &c);
	check(!err, "space_open(dev 0, owner 2): a second context (%d)", err);
	err = err ?: be.ops->space_open(&be, 0, 0, &s);
	check(!err, "space_open(dev 0, owner 0): the primary context (%d)", err);
	if (err)
		goto out_close;
	test_d2d(sp[0], c, region, "owner 1 -> owner 2, one device");
	test_d2d(c, sp[0], region, "owner 2 -> owner 1, one device");
	test_d2d(sp[0], s, region, "owner 1 -> primary context");
	for (i = 1; i < be.ndev; i++) {
		printf("# dev 0 -> dev %u: peer %d\n", i, be.info[0].peer[i]);
		test_d2d(sp[0], sp[i], region, "owner 1, dev 0 -> dev N");
		test_d2d(sp[i], sp[0], region, "owner 1, dev N -> dev 0");
	}
	err = be.ops->kernel_load(&be, s, ptx, ptx_len, "vec_add", &k);
	check(!err, "primary context: kernel_load (%d)", err);
	if (!err) {
		run_vec_add(s, k, region, "primary context");
		be.ops->kernel_unload(&be, s, k);
	}
	test_timing(sp[0], c, s, ptx, ptx_len);
	test_fence_timing(sp[0], ptx, ptx_len);
	test_host_ptr(sp[0], c, ptx, ptx_len, region);

	/* freeing owner 1's pointer through the shared space is refused */
	err = be.ops->mem_alloc(&be, sp[0], 4096, &d);
	if (!err) {
		be.ops->mem_free(&be, s, d);
		fill_random(region, 4096);
		err = be.ops->copy_h2d(&be, sp[0], 0, d, region, 4096) ?:
		      be.ops->copy_d2h(&be, sp[0], 0, region + HALF, d, 4096) ?:
		      be.ops->sync(&be, sp[0], NULL);
		be.ops->mem_free(&be, sp[0], d);
	}
	check(!err && !memcmp(region, region + HALF, 4096),
	      "mem_free through another space leaves the buffer alone (%d)", err);

	test_isolation(sp[0], ptx, ptx_len, region);
	test_fence_fault(sp[0], ptx, ptx_len);
	err = be.ops->kernel_load(&be, sp[0], ptx, ptx_len, "vec_add", &k);
	poisoned = err == -EIO;
	check_after_fault(!err, "owner 1 after owner 4's fault: kernel_load", err);
	if (!err) {
		run_vec_add(sp[0], k, region, "owner 1 after owner 4's fault");
		be.ops->kernel_unload(&be, sp[0], k);
	}

out_close:
	if (s)
		be.ops->space_close(&be, s);
	if (c)
		be.ops->space_close(&be, c);
	for (i = 0; i < be.ndev; i++)
		if (sp[i])
			be.ops->space_close(&be, sp[i]);
	if (region != MAP_FAILED)
		be.ops->host_unregister(&be, region);
out_fini:
	be.ops->fini(&be);
	if (region != MAP_FAILED) {
		test_shared_config(ptx, ptx_len, region);
		munmap(region, REGION_BYTES);
	}
	if (fd >= 0)
		close(fd);
out_summary:
	free(ptx);
	printf("1..%d\n%d passed, %d failed", npass + nfail + ntodo, npass, nfail);
	if (ntodo)
		printf(", %d known failures (TODO)", ntodo);
	printf("\n");
	return nfail ? 1 : 0;
}
