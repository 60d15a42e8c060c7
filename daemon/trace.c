// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * trace.c - see trace.h.
 *
 * Locking: none.  The tables are allocated before any thread marks
 * (pd_trace_init, from main) and freed after every thread but main has
 * stopped (pd_trace_report); marks update them with relaxed atomics, so
 * a report read while threads still mark could be off by the marks in
 * flight, which is why it is made only at exit.  Each thread's previous
 * point and time are its own (thread-local).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/backend/host.h"
#include "daemon/log.h"
#include "daemon/trace.h"

#define TRACE_STEP_NS	100ULL		/* histogram resolution */
#define TRACE_BUCKETS	2000U		/* up to 200 us; then overflow */

/**
 * struct trace_pair - the times from one point to the next on a thread
 * @count: how many
 * @sum_ns: their sum
 * @hist: @hist[i] counts times in [i, i + 1) * TRACE_STEP_NS; the last
 *	bucket takes everything longer
 */
struct trace_pair {
	uint64_t count;
	uint64_t sum_ns;
	uint32_t hist[TRACE_BUCKETS + 1];
};

static const char *const pd_trace_names[PD_TR_NPOINTS] = {
	[PD_TR_NONE] = "start",
	[PD_TR_WAIT] = "wait",
	[PD_TR_SQE] = "sqe",
	[PD_TR_CALL] = "call",
	[PD_TR_CQE] = "cqe",
	[PD_TR_TAKEN] = "taken",
	[PD_TR_PLACED] = "placed",
	[PD_TR_PREPARED] = "prepared",
	[PD_TR_LAUNCHED] = "launched",
	[PD_TR_FENCED] = "fenced",
	[PD_TR_QUEUED] = "queued",
	[PD_TR_FENCE_SEEN] = "fence-seen",
	[PD_TR_FINISHED] = "finished",
	[PD_TR_HELPED] = "helped",
};

bool pd_trace_on;
static struct trace_pair *pairs;	/* [from][to], PD_TR_NPOINTS^2 */
static __thread enum pd_trace_point last_point;
static __thread uint64_t last_ns;

int pd_trace_init(void)
{
	const char *env = getenv("PTASKD_TRACE");

	if (!env || !*env || !strcmp(env, "0"))
		return 0;
	pairs = calloc((size_t)PD_TR_NPOINTS * PD_TR_NPOINTS, sizeof(*pairs));
	if (!pairs)
		return -ENOMEM;
	pd_trace_on = true;
	pd_log_info("trace: on (PTASKD_TRACE); the table is logged at exit");
	return 0;
}

void pd_trace_mark(enum pd_trace_point p)
{
	uint64_t now = pd_now_ns(), d, b;
	struct trace_pair *tp;

	if (last_point != PD_TR_NONE) {
		tp = &pairs[last_point * PD_TR_NPOINTS + p];
		d = now - last_ns;
		b = d / TRACE_STEP_NS;
		if (b > TRACE_BUCKETS)
			b = TRACE_BUCKETS;
		__atomic_add_fetch(&tp->count, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&tp->sum_ns, d, __ATOMIC_RELAXED);
		__atomic_add_fetch(&tp->hist[b], 1, __ATOMIC_RELAXED);
	}
	last_point = p;
	last_ns = now;
}

/* The time below which @q of @tp's samples fall (bucket's upper edge). */
static double quantile_us(const struct trace_pair *tp, double q)
{
	uint64_t want = (uint64_t)(q * (double)tp->count), seen = 0;
	uint32_t i;

	for (i = 0; i <= TRACE_BUCKETS; i++) {
		seen += tp->hist[i];
		if (seen > want)
			return (double)((i + 1) * TRACE_STEP_NS) / 1000.0;
	}
	return (double)((TRACE_BUCKETS + 1) * TRACE_STEP_NS) / 1000.0;
}

void pd_trace_report(void)
{
	uint32_t from, to;

	if (!pairs)
		return;
	pd_log_info("trace: from -> to: count, mean us, median, p90, p99 (100 ns steps; %u us: longer)",
		    (unsigned int)(TRACE_BUCKETS * TRACE_STEP_NS / 1000));
	for (from = 0; from < PD_TR_NPOINTS; from++)
		for (to = 0; to < PD_TR_NPOINTS; to++) {
			const struct trace_pair *tp =
				&pairs[from * PD_TR_NPOINTS + to];

			if (!tp->count)
				continue;
			pd_log_info("trace: %10s -> %-10s %9llu %8.2f %8.1f %8.1f %8.1f",
				    pd_trace_names[from], pd_trace_names[to],
				    (unsigned long long)tp->count,
				    (double)tp->sum_ns / 1000.0 /
				    (double)tp->count,
				    quantile_us(tp, 0.5), quantile_us(tp, 0.9),
				    quantile_us(tp, 0.99));
		}
	free(pairs);
	pairs = NULL;
	pd_trace_on = false;
}
