// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gemm_ref.c - the gemm example's inputs, CPU reference and comparison.
 *
 * The reference is cache-blocked so that n = 4096 (2 x 137 GFLOP for a
 * chain) takes seconds, not minutes: a block of rows of C is updated from
 * a KB x JB panel of B that stays in L2.  Blocking changes only the order
 * in which elements are visited, never the order of one element's sum:
 * every C[i][j] still adds A[i][k] * B[k][j] for k = 0, 1, ... n-1, the
 * order the GPU kernel uses, so the two differ only by rounding (FMA on
 * the GPU), far inside the tolerance.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gemm.h"

#define IB	16	/* rows of C per block */
#define KB	128	/* rows of B per panel */
#define JB	512	/* columns per panel: KB x JB x 4 = 256 KiB */

double gemm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* splitmix64: fast, and the same matrices on every machine for a seed. */
static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void gemm_fill(float *m, int n, uint64_t seed)
{
	size_t i, count = (size_t)n * (size_t)n;

	for (i = 0; i < count; i++)
		/* 24 random bits: exactly representable in a float */
		m[i] = (float)(splitmix(&seed) >> 40) * (1.0f / 16777216.0f);
}

struct ref_job {
	const float *a, *b;
	float *c;
	int n, row0, row1;
};

static void *ref_rows(void *arg)
{
	const struct ref_job *j = arg;
	const int n = j->n;
	int i0, k0, j0, i, k, jj;

	for (i = j->row0; i < j->row1; i++)
		memset(j->c + (size_t)i * n, 0, (size_t)n * sizeof(float));
	for (i0 = j->row0; i0 < j->row1; i0 += IB) {
		int i1 = i0 + IB < j->row1 ? i0 + IB : j->row1;

		for (k0 = 0; k0 < n; k0 += KB) {
			int k1 = k0 + KB < n ? k0 + KB : n;

			for (j0 = 0; j0 < n; j0 += JB) {
				int j1 = j0 + JB < n ? j0 + JB : n;

				for (i = i0; i < i1; i++) {
					float *restrict crow = j->c + (size_t)i * n;

					for (k = k0; k < k1; k++) {
						const float aik = j->a[(size_t)i * n + k];
						const float *restrict brow =
							j->b + (size_t)k * n;

						/* vectorized at -O3 */
						for (jj = j0; jj < j1; jj++)
							crow[jj] += aik * brow[jj];
					}
				}
			}
		}
	}
	return NULL;
}

int gemm_ref(const float *a, const float *b, float *c, int n, int threads)
{
	pthread_t tid[256];
	struct ref_job job[256];
	int t, started = 0, err = 0, per;

	if (threads < 1)
		threads = 1;
	if (threads > 256)
		threads = 256;
	if (threads > n)
		threads = n;
	per = (n + threads - 1) / threads;
	for (t = 0; t < threads; t++) {
		job[t] = (struct ref_job){
			.a = a, .b = b, .c = c, .n = n,
			.row0 = t * per,
			.row1 = (t + 1) * per < n ? (t + 1) * per : n,
		};
		if (job[t].row0 >= job[t].row1)
			break;
		/* the last slice runs on this thread: one fewer create */
		if (t == threads - 1)
			break;
		err = -pthread_create(&tid[t], NULL, ref_rows, &job[t]);
		if (err)
			break;
		started++;
	}
	if (!err && t < threads && job[t].row0 < job[t].row1)
		ref_rows(&job[t]);
	for (t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	return err;
}

/*
 * Elements per block of gemm_compare_scaled: its counter is an int, and a
 * block is short enough to stay in L1 while its flags are summed.
 */
#define CMP_BLOCK	4096

/*
 * Written to vectorize (at -O3, gemm_ref.o): branch-free, in float, and
 * the largest relative error kept as the largest bit pattern (for floats
 * of one sign, the order of their bits as integers is their order, and
 * an integer maximum vectorizes where a float one would need
 * -ffast-math).  The pipelined ways check every chain's D while the next
 * ones run, so this must keep up with a chain: about 4x faster than a
 * division per element in double.  Float arithmetic changes the
 * comparison only by rounding, 1e-7 relative, far inside any tolerance.
 */
size_t gemm_compare_scaled(const float *got, const float *want, float scale,
			   int n, double rtol, double *max_rel)
{
	const size_t count = (size_t)n * (size_t)n;
	const float tol = (float)rtol;
	size_t i0, bad = 0;
	uint32_t worst_bits = 0;
	float worst;

	for (i0 = 0; i0 < count; i0 += CMP_BLOCK) {
		const size_t i1 = i0 + CMP_BLOCK < count ? i0 + CMP_BLOCK : count;
		int block_bad = 0;
		size_t i;

		for (i = i0; i < i1; i++) {
			const float w = fabsf(want[i] * scale);
			/* |x| >= 0, or a NaN whose sign bit fabsf cleared */
			const float d = fabsf(got[i] - want[i] * scale);
			/* an exact 0 against 0 is 0 off, not 0 / 0 */
			const float rel = d / (w > 0 ? w : FLT_MIN);
			uint32_t bits;

			/* written so that a NaN (every comparison false) is bad */
			block_bad += !(d <= tol * w);
			memcpy(&bits, &rel, sizeof(bits));
			worst_bits = bits > worst_bits ? bits : worst_bits;
		}
		bad += (size_t)block_bad;
	}
	memcpy(&worst, &worst_bits, sizeof(worst));
	/* a NaN is infinitely off */
	*max_rel = isnan(worst) ? INFINITY : worst;
	return bad;
}

size_t gemm_compare(const float *got, const float *want, int n, double rtol,
		    double *max_rel)
{
	return gemm_compare_scaled(got, want, 1.0f, n, rtol, max_rel);
}
