// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fastpath_stats.c - clocks, input values, medians and p99, and the named
 * results that the fast-path benchmark's parts and children hand back
 * (fastpath.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/fastpath.h"

uint64_t fp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The next input value (xorshift32): never zero, different every round,
 * so an output never written, or written from a stale input, fails its
 * check.
 */
uint32_t fp_next_value(uint32_t *state)
{
	uint32_t x = *state ? *state : 0x9e3779b9u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/**
 * fp_stats_of() - median, p99 and mean of @n samples
 * @us: the samples, in us (sorted in place)
 * @n: how many (>= 1)
 * @st: out
 *
 * Return: 0, or -EINVAL for an empty sample.
 */
int fp_stats_of(double *us, int n, struct fp_stats *st)
{
	double sum = 0;
	int i;

	if (n < 1)
		return -EINVAL;
	qsort(us, (size_t)n, sizeof(*us), cmp_double);
	for (i = 0; i < n; i++)
		sum += us[i];
	st->n = n;
	st->med = us[n / 2];
	st->p99 = us[(int)((long long)n * 99 / 100)];
	st->mean = sum / n;
	return 0;
}

/**
 * fp_results_add() - a new, zeroed entry named by @fmt
 * @r: the results
 * @fmt: printf format of its key
 *
 * Return: the entry, or NULL when @r is full (the caller's error: the
 * table is sized for every part's keys).
 */
struct fp_series *fp_results_add(struct fp_results *r, const char *fmt, ...)
{
	struct fp_series *s;
	va_list ap;

	if (r->n >= FP_MAX_SERIES) {
		fprintf(stderr, "fastpath: more than %d results\n", FP_MAX_SERIES);
		return NULL;
	}
	s = &r->s[r->n++];
	memset(s, 0, sizeof(*s));
	va_start(ap, fmt);
	vsnprintf(s->key, sizeof(s->key), fmt, ap);
	va_end(ap);
	return s;
}

/* The entry named by @fmt, or NULL. */
const struct fp_series *fp_results_get(const struct fp_results *r,
				       const char *fmt, ...)
{
	char key[sizeof(r->s[0].key)];
	va_list ap;
	int i;

	va_start(ap, fmt);
	vsnprintf(key, sizeof(key), fmt, ap);
	va_end(ap);
	for (i = 0; i < r->n; i++)
		if (!strcmp(r->s[i].key, key))
			return &r->s[i];
	return NULL;
}
