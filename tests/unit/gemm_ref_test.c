// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gemm_ref_test.c - the gemm example's checking arithmetic
 * (examples/gemm/gemm_ref.c), compiled into this test under ASan and
 * UBSan: gemm_compare_scaled, which decides whether every chain of every
 * way matched (a compare that passed everything would hide any bug the
 * GPU runs have), against hand-made errors of each kind; the slots'
 * scales; and the CPU reference against a plain triple loop.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/harness.h"
#include "examples/gemm/gemm_ref.c"

/* An n x n matrix of gemm_fill(seed) and a copy of it. */
static bool two_filled(int n, uint64_t seed, float **want, float **got)
{
	const size_t bytes = (size_t)n * (size_t)n * sizeof(float);

	*want = malloc(bytes);
	*got = malloc(bytes);
	if (!*want || !*got) {
		free(*want);
		free(*got);
		return false;
	}
	gemm_fill(*want, n, seed);
	memcpy(*got, *want, bytes);
	return true;
}

static void test_compare_equal_and_off(void)
{
	/* 65 x 65 = 4225: more than one of the compare's blocks, not whole */
	const int n = 65;
	float *want, *got;
	double rel = -1;

	REQUIRE(two_filled(n, 7, &want, &got));
	CHECK_EQ(gemm_compare(got, want, n, 1e-3, &rel), 0);
	CHECK(rel == 0);

	/* inside the tolerance: matches, but the error is reported */
	want[100] = 0.5f;
	got[100] = 0.5f * (1 + 5e-4f);
	CHECK_EQ(gemm_compare(got, want, n, 1e-3, &rel), 0);
	CHECK(rel > 4.9e-4 && rel < 5.1e-4);

	/* outside it, in the first block, and in the last, partial one */
	got[100] = 0.5f * (1 + 2e-3f);
	got[n * n - 1] = want[n * n - 1] * 1.5f + 1;
	CHECK_EQ(gemm_compare(got, want, n, 1e-3, &rel), 2);
	CHECK(rel > 1);
	/* the tolerance decides: 0.999 takes the first, not the second */
	CHECK_EQ(gemm_compare(got, want, n, 0.999, &rel), 1);
	got[n * n - 1] = want[n * n - 1] * 1.5f;
	CHECK_EQ(gemm_compare(got, want, n, 0.6, &rel), 0);
	CHECK(rel > 0.49 && rel < 0.51);
	free(got);
	free(want);
}

static void test_compare_nan_inf_zero(void)
{
	const int n = 3;
	float want[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	float got[9];
	double rel = -1;

	memcpy(got, want, sizeof(got));
	got[4] = NAN;
	CHECK_EQ(gemm_compare(got, want, n, 1e-3, &rel), 1);
	CHECK(isinf(rel));
	got[4] = -NAN;
	CHECK_EQ(gemm_compare(got, want, n, 1e-3, &rel), 1);
	CHECK(isinf(rel));
	got[4] = INFINITY;
	CHECK_EQ(gemm_compare(got, want, n, 1e-3, &rel), 1);
	CHECK(isinf(rel));
	/* a negative result where a positive one belongs */
	got[4] = -5;
	CHECK_EQ(gemm_compare(got, want, n, 1e-3, &rel), 1);
	CHECK(rel > 1.99 && rel < 2.01);

	/* 0 against 0 is exact; anything against 0 is infinitely off */
	memcpy(got, want, sizeof(got));
	want[0] = got[0] = 0;
	CHECK_EQ(gemm_compare(got, want, n, 1e-3, &rel), 0);
	CHECK(rel == 0);
	got[0] = 1e-30f;
	CHECK_EQ(gemm_compare(got, want, n, 1e-3, &rel), 1);
	CHECK(rel > 1e6);
}

static void test_compare_scaled_slots(void)
{
	const int n = 40;
	const size_t count = (size_t)n * n;
	float *want, *got;
	double rel = -1;
	size_t i;
	int s;

	CHECK(gemm_slot_scale(0) == 1.0f);
	CHECK(gemm_slot_scale(1) == 2.0f);
	CHECK(gemm_slot_scale(GEMM_MAX_DEPTH - 1) ==
	      (float)(1u << (GEMM_MAX_DEPTH - 1)));

	REQUIRE(two_filled(n, 11, &want, &got));
	for (i = 0; i < count; i++)
		got[i] = want[i] * gemm_slot_scale(3);
	/* the slot's own scale matches exactly */
	CHECK_EQ(gemm_compare_scaled(got, want, gemm_slot_scale(3), n, 1e-3,
				     &rel), 0);
	CHECK(rel == 0);
	/*
	 * Every other slot's D fails everywhere, but where want is 0
	 * (gemm_fill may make one: 0 in any slot is 0).
	 */
	for (s = 0; s < GEMM_MAX_DEPTH; s++) {
		size_t zeros = 0;

		if (s == 3)
			continue;
		for (i = 0; i < count; i++)
			zeros += want[i] == 0;
		CHECK_EQ(gemm_compare_scaled(got, want, gemm_slot_scale(s), n,
					     1e-3, &rel), count - zeros);
	}
	free(got);
	free(want);
}

/* The reference, blocked and threaded, against the plain loop. */
static void test_reference(void)
{
	const int n = 150;	/* over IB and KB, not a multiple of either */
	const size_t count = (size_t)n * n;
	float *a = malloc(count * sizeof(float));
	float *b = malloc(count * sizeof(float));
	float *c = malloc(count * sizeof(float));
	float *plain = malloc(count * sizeof(float));
	double rel;
	size_t bad;
	int i, j, k, threads;

	if (!CHECK(a && b && c && plain))
		goto out;
	gemm_fill(a, n, 1);
	gemm_fill(b, n, 2);
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			float sum = 0;

			for (k = 0; k < n; k++)
				sum += a[i * n + k] * b[k * n + j];
			plain[i * n + j] = sum;
		}
	for (threads = 1; threads <= 4; threads += 3) {
		CHECK_OK(gemm_ref(a, b, c, n, threads));
		CHECK_EQ(gemm_compare(c, plain, n, 1e-5, &rel), 0);
	}
	/*
	 * One wrong input element moves row 5 of the product by row 7 of B:
	 * past the tolerance wherever B's element is over 1e-3 of the sum
	 * (about n / 4): in most of that row, and no more than the row.
	 */
	a[5 * n + 7] += 1;
	CHECK_OK(gemm_ref(a, b, c, n, 2));
	bad = gemm_compare(c, plain, n, 1e-3, &rel);
	CHECK(bad >= (size_t)n / 2 && bad <= (size_t)n);
out:
	free(plain);
	free(c);
	free(b);
	free(a);
}

int main(int argc, char **argv)
{
	static const struct h_test tests[] = {
		H_TEST(test_compare_equal_and_off),
		H_TEST(test_compare_nan_inf_zero),
		H_TEST(test_compare_scaled_slots),
		H_TEST(test_reference),
	};

	return h_main(tests, ARRAY_SIZE(tests), argc, argv);
}
