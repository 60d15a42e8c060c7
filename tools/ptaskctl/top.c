// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * top.c - `ptaskctl top [-d SECONDS] [-n COUNT] [--once]`: every process
 * with GPU accounting and its share of the accelerators over the last
 * interval, its budget, weight, nice value and whether it is held,
 * refreshed every -d SECONDS (default 1) until interrupted, or COUNT
 * times (--once: one).  On a terminal the screen is redrawn; otherwise
 * tables follow one another; with --json one JSON document per refresh,
 * one per line, for scripts.
 *
 * The share is the GPU time a process gained during the interval over
 * the interval times the accelerators: 1.0 is every accelerator busy
 * with its work throughout.  A process that appeared during the interval
 * counts all its GPU time.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ptaskctl.h"

#define TOP_MAX_DELAY_S	3600.0

static const char *const policy_names[__PTASK_POLICY_MAX] = PTASK_POLICY_NAMES;

struct sample {
	struct ptask_proc_info *procs;
	size_t n;
	uint64_t at_ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int take_sample(struct sample *s)
{
	s->at_ns = now_ns();
	return ipc_procs(&s->procs, &s->n);
}

/* GPU time @p gained since @prev (all of it if @prev lacks it). */
static uint64_t gained_ns(const struct sample *prev,
			  const struct ptask_proc_info *p)
{
	size_t i;

	for (i = 0; i < prev->n; i++)
		if (prev->procs[i].pid == p->pid)
			return p->gpu_ns >= prev->procs[i].gpu_ns ?
			       p->gpu_ns - prev->procs[i].gpu_ns : 0;
	return p->gpu_ns;
}

static double share(const struct sample *prev, const struct sample *cur,
		    const struct ptask_sched_params *sp,
		    const struct ptask_proc_info *p)
{
	uint64_t dt = cur->at_ns - prev->at_ns;
	uint32_t accels = sp->n_accels ? sp->n_accels : 1;

	return dt ? (double)gained_ns(prev, p) / ((double)dt * accels) : 0.0;
}

static void print_json(const struct sample *prev, const struct sample *cur,
		       const struct ptask_sched_params *sp)
{
	const struct ptask_proc_info *p;
	size_t i;

	out_begin();
	out_u64("interval_ms", (cur->at_ns - prev->at_ns) / 1000000);
	out_str("budgets", sp->budgets ? "on" : "off");
	out_str("policy", sp->policy < __PTASK_POLICY_MAX ?
		policy_names[sp->policy] : "?");
	out_u64("period_ns", sp->period_ns);
	out_u64("accelerators", sp->n_accels);
	out_u64("active", sp->active);
	out_u64("held", sp->held);
	out_list_begin("processes");
	for (i = 0; i < cur->n; i++) {
		p = &cur->procs[i];
		out_obj_begin(NULL);
		out_s64("pid", p->pid);
		out_u64("uid", p->uid);
		out_s64("nice", p->nice);
		out_u64("weight", p->weight);
		out_u64("weight_override", p->weight_override);
		out_f64("gpu_share", share(prev, cur, sp, p));
		out_s64("budget_ns", p->budget_ns);
		out_s64("bmax_ns", p->bmax_ns);
		out_u64("active", p->active);
		out_u64("held", p->held);
		out_u64("queued", p->queued);
		out_u64("running", p->running);
		out_u64("ptasks", p->ptasks);
		out_u64("gpu_ns", p->gpu_ns);
		out_u64("invocations", p->invocations);
		out_u64("held_ns", p->held_ns);
		out_obj_end();
	}
	out_list_end();
	out_end();
}

static void print_table(const struct sample *prev, const struct sample *cur,
			const struct ptask_sched_params *sp, bool redraw)
{
	const struct ptask_proc_info *p;
	size_t i;

	if (redraw)
		fputs("\033[H\033[2J", stdout);
	printf("ptaskctl top: %.1f s, budgets %s, policy %s, period %.3f ms, "
	       "%u active, %u held, %u accelerator(s)\n",
	       (double)(cur->at_ns - prev->at_ns) / 1e9,
	       sp->budgets ? "on" : "off",
	       sp->policy < __PTASK_POLICY_MAX ? policy_names[sp->policy] : "?",
	       (double)sp->period_ns / 1e6, sp->active, sp->held, sp->n_accels);
	printf("%8s %6s %4s %7s %6s %11s %11s %6s %4s %4s %12s %11s\n",
	       "PID", "UID", "NICE", "WEIGHT", "GPU%", "BUDGET_MS", "BMAX_MS",
	       "QUEUED", "RUN", "HELD", "GPU_MS", "INVOCATIONS");
	for (i = 0; i < cur->n; i++) {
		p = &cur->procs[i];
		printf("%8d %6u %4d %6u%s %6.1f %11.3f %11.3f %6u %4u %4s %12.3f %11"
		       PRIu64 "\n", p->pid, p->uid, p->nice, p->weight,
		       p->weight_override ? "*" : " ",
		       100.0 * share(prev, cur, sp, p),
		       (double)p->budget_ns / 1e6, (double)p->bmax_ns / 1e6,
		       p->queued, p->running, p->held ? "yes" : "no",
		       (double)p->gpu_ns / 1e6, (uint64_t)p->invocations);
	}
	if (!cur->n)
		printf("(no process has GPU accounting)\n");
	fflush(stdout);
}

static void sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s,
			       .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* -d, -n, --once; prints why an option is wrong. */
static int parse_options(int argc, char *argv[], double *delay, long *count)
{
	static const struct option longopts[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "once", no_argument, NULL, '1' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	opterr = 0;	/* our own messages */
	while ((c = getopt_long(argc, argv, "+d:n:", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			errno = 0;
			*delay = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(*delay) ||
			    *delay <= 0 || *delay > TOP_MAX_DELAY_S) {
				ptaskctl_err("top: -d %s: want seconds, above 0 and "
					     "at most %.0f", optarg, TOP_MAX_DELAY_S);
				return -EINVAL;
			}
			break;
		case 'n':
			errno = 0;
			*count = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || *count < 1) {
				ptaskctl_err("top: -n %s: want a count of refreshes, "
					     "1 or more", optarg);
				return -EINVAL;
			}
			break;
		case '1':
			*count = 1;
			break;
		default:
			ptaskctl_err("top: unknown option '%s' (-d SECONDS, "
				     "-n COUNT, --once)", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		ptaskctl_err("top: unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static int top_main(int argc, char *argv[])
{
	struct sample prev = { }, cur = { };
	struct ptask_sched_params sp;
	bool redraw = !ptaskctl_opts.json && isatty(STDOUT_FILENO);
	double delay = 1.0;
	long count = -1, i;	/* -1: until interrupted */
	int ret;

	if (parse_options(argc, argv, &delay, &count))
		return PTASKCTL_USAGE;
	ret = take_sample(&prev);
	for (i = 0; !ret && (count < 0 || i < count); i++) {
		sleep_s(delay);
		ret = take_sample(&cur);
		if (!ret)
			ret = ipc_sched_get(&sp);
		if (ret)
			break;
		if (ptaskctl_opts.json)
			print_json(&prev, &cur, &sp);
		else
			print_table(&prev, &cur, &sp, redraw);
		free(prev.procs);
		prev = cur;
		cur.procs = NULL;
	}
	free(prev.procs);
	free(cur.procs);
	if (ret)
		ipc_report("top", ret);
	return ret;
}

PTASKCTL_COMMAND(top, top_main, "[-d SECONDS] [-n COUNT] [--once]",
		 "live GPU share, budget and weight per process, refreshing");
