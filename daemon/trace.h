/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * trace.h - where an invocation's time goes inside ptaskd, for the
 * people who make it faster (PTASKD_TRACE=1; Documentation/ptaskd.md
 * "Tracing the fast path").
 *
 * Each thread marks the points it passes on the hot path (pd_trace());
 * the time from a thread's previous mark to this one is counted against
 * the pair (previous point, this point) in a histogram of 100 ns steps.
 * At exit ptaskd logs every pair seen: count, mean, median, p90, p99.
 * One thread that serves a client's ring and helps its jobs through
 * (help.c) thus shows its whole round as a chain of pairs; a pair
 * "wait -> sqe" is the time the ring thread waited for its client.
 *
 * Off (the default), a mark is one test of a global flag.  On, a mark
 * reads the clock and makes three relaxed atomic adds: about 30-60 ns,
 * which is why it is not on by default.
 */
#ifndef PTASKD_TRACE_H
#define PTASKD_TRACE_H

#include <stdbool.h>

/* The points (keep pd_trace_names in trace.c in step). */
enum pd_trace_point {
	PD_TR_NONE = 0,		/* a thread's first mark: no pair counted */
	PD_TR_WAIT,		/* ring thread: about to wait for entries */
	PD_TR_SQE,		/* ring thread: an entry taken */
	PD_TR_CALL,		/* ring thread: its call returned */
	PD_TR_CQE,		/* ring thread: its completion posted */
	PD_TR_TAKEN,		/* helper/worker: took work, jobs made */
	PD_TR_PLACED,		/* helper/worker: placement done */
	PD_TR_PREPARED,		/* job: space, kernel, views and launch ready */
	PD_TR_LAUNCHED,		/* job: the backend's launch returned */
	PD_TR_FENCED,		/* job: its fence queued */
	PD_TR_QUEUED,		/* job: joined its lane (ahead: settled ahead) */
	PD_TR_FENCE_SEEN,	/* its fence seen passed */
	PD_TR_FINISHED,		/* job completed (EXEC_COMPLETE done) */
	PD_TR_HELPED,		/* helper: done helping */
	PD_TR_NPOINTS
};

extern bool pd_trace_on;

void pd_trace_mark(enum pd_trace_point p);

/* Mark point @p on this thread (nothing unless PTASKD_TRACE is set). */
static inline void pd_trace(enum pd_trace_point p)
{
	if (__builtin_expect(pd_trace_on, 0))
		pd_trace_mark(p);
}

/* Read PTASKD_TRACE; 0 or -ENOMEM. */
int pd_trace_init(void);

/* Log the pairs seen (info level) and free the tables. */
void pd_trace_report(void);

#endif /* PTASKD_TRACE_H */
