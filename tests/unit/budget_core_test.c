// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * budget_core_test.c - PTSched in the core (core/budget.c): CFS weights,
 * accounting records living and dying with their ptasks, a process held by
 * a negative budget and released by the timer, budgets off, settings
 * validated all or nothing, weight overrides, the executor policy handed
 * out with takes, and two simulations on a fake clock: four backlogged
 * processes at four nice levels (shares proportional to weight, Jain's
 * index >= 0.95) and the paper's inversion (a nice -20 client of 1 ms
 * kernels against nice +19 hogs of 19 ms ones).
 */
#include <stdlib.h>
#include <string.h>
#include "tests/unit/harness.h"

static const char code[] = "ptx";

/* One process's pipeline: in -> GPU ptask -> out, and who it runs as. */
struct proc_graph {
	struct ptask_client *c;
	struct ptask_caller who;
	u32 graph, ptask, in, out;
	u64 gpu_ns;		/* what each of its invocations costs */
	u64 done;		/* its completed invocations */
};

static bool mkproc(struct proc_graph *pg, s32 pid, s32 nice, u64 gpu_ns)
{
	u32 pin, pout;

	memset(pg, 0, sizeof(*pg));
	pg->c = h_client();
	pg->who = h_user;
	pg->who.pid = pid;
	pg->who.nice = nice;
	pg->gpu_ns = gpu_ns;
	return !h_graph_who(pg->c, &pg->who, NULL, PTASK_GRAPH_CREATE, 0600,
			    &pg->graph) &&
	       !h_gpu_ptask(pg->c, &pg->who, pg->graph, 2, code, sizeof(code),
			    "k", &pg->ptask) &&
	       !h_port(pg->c, pg->ptask, PTASK_PORT_INPUT, 0, &pin) &&
	       !h_port(pg->c, pg->ptask, PTASK_PORT_OUTPUT, 0, &pout) &&
	       !h_chan(pg->c, pg->graph, 0, pin, 64, 0, &pg->in) &&
	       !h_chan(pg->c, pg->graph, pout, 0, 64, 0, &pg->out) &&
	       !h_run(pg->c, pg->graph);
}

/* Queue one invocation's input. */
static int feed(struct proc_graph *pg)
{
	u32 db;
	int err = h_db(pg->c, 8, &db);

	if (err)
		return err;
	err = h_push(pg->c, pg->in, db);
	h_release(pg->c, db);
	return err;
}

/* Drain the outputs, so the output channel never fills. */
static void drain(struct proc_graph *pg)
{
	u32 db;

	while (!h_pull(pg->c, pg->out, &db)) {
		h_release(pg->c, db);
		pg->done++;
	}
}

/* Complete @inv with a fresh output datablock and @gpu_ns of GPU time. */
static int finish(struct ptask_client *e, const struct ptask_invocation *inv,
		  u64 gpu_ns)
{
	struct ptask_exec_output out = { .index = 1 };
	int err = h_db(e, 8, &out.datablock);

	return err ? err : h_complete_ns(e, inv->id, 0, &out, 1, gpu_ns);
}

static struct proc_graph *owner(struct proc_graph *pg, int n, u32 ptask)
{
	int i;

	for (i = 0; i < n; i++)
		if (pg[i].ptask == ptask)
			return &pg[i];
	return NULL;
}

static void test_weights(void)
{
	CHECK_EQ(ptask_nice_weight(0), 1024);
	CHECK_EQ(ptask_nice_weight(-20), 88761);
	CHECK_EQ(ptask_nice_weight(19), 15);
	CHECK_EQ(ptask_nice_weight(5), 335);
	CHECK_EQ(ptask_nice_weight(-100), 88761);
	CHECK_EQ(ptask_nice_weight(100), 15);
}

static void test_record_lifetime(void)
{
	struct proc_graph a;
	struct ptask_proc_info info;
	struct ptask_proc *proc;
	u32 p2;

	REQUIRE(mkproc(&a, 77, 3, 0));
	proc = ptask_core_proc_find(&h_ns, 77);
	REQUIRE(proc);
	CHECK_EQ(h_ns.sched.nprocs, 1);
	REQUIRE_OK(h_terminate(a.c, a.graph));
	REQUIRE_OK(h_graph_who(a.c, &a.who, NULL, PTASK_GRAPH_CREATE, 0600,
			       &a.graph));
	REQUIRE_OK(h_gpu_ptask(a.c, &a.who, a.graph, 1, code, sizeof(code),
			       "k", &p2));
	CHECK(ptask_core_proc_find(&h_ns, 77) == proc);	/* one record per pid */
	ptask_core_proc_describe(proc, &info);
	CHECK_EQ(info.ptasks, 2);
	CHECK_EQ(info.nice, 3);
	CHECK_EQ(info.weight, ptask_nice_weight(3));
	CHECK(ptask_core_proc_next(&h_ns, -2147483647 - 1) == proc);
	CHECK(!ptask_core_proc_next(&h_ns, 77));
	/* The process exits: its fd closes, its graphs and records go. */
	ptask_core_client_destroy(a.c);
	CHECK(!ptask_core_proc_find(&h_ns, 77));
	CHECK_EQ(h_ns.sched.nprocs, 0);
}

/* A process held by its debt waits; the timer's tick lets it go. */
static void test_held_then_released(void)
{
	struct ptask_client *e = h_executor();
	struct h_take *t = calloc(1, sizeof(*t));
	struct proc_graph a, b;
	struct ptask_proc *pa;

	REQUIRE(t);
	os_user_clock_ns = 1000000000ULL;
	REQUIRE(mkproc(&a, 10, 0, 0) && mkproc(&b, 11, 0, 0));
	pa = ptask_core_proc_find(&h_ns, 10);
	REQUIRE_OK(feed(&a));
	REQUIRE_OK(h_take(e, 1, 8, t));
	REQUIRE_OK(finish(e, &t->inv[0], 10000000));	/* 10 ms */
	CHECK(pa->budget_ns < 0);
	CHECK_EQ(pa->gpu_ns, 10000000);
	CHECK_EQ(os_user_timer_ns, 0);		/* nothing queued: no timer */
	REQUIRE_OK(feed(&a));
	REQUIRE_OK(feed(&b));
	/* A is in debt: only B's work is eligible, A's stays Queued. */
	REQUIRE_OK(h_take(e, 4, 8, t));
	CHECK_EQ(t->n_inv, 1);
	CHECK_EQ(t->inv[0].ptask, b.ptask);
	CHECK_EQ(h_ptask_obj(a.ptask)->state, PTASK_STATE_QUEUED);
	CHECK(pa->held);
	CHECK_EQ(h_ns.sched.params.held, 1);
	/* Held work does not make the executor readable (no busy poll). */
	CHECK(!(ptask_core_client_poll(e) & PTASK_POLL_IN));
	CHECK(os_user_timer_ns > os_user_clock_ns);
	REQUIRE_OK(finish(e, &t->inv[0], 1000000));
	CHECK_ERR(h_take(e, 4, 8, t), -EAGAIN);
	/* Time passes to the timer; its tick refills A and wakes executors. */
	os_user_clock_ns = os_user_timer_ns;
	ptask_core_sched_tick(&h_ns);
	CHECK(pa->budget_ns >= 0);
	CHECK(!pa->held);
	REQUIRE_OK(h_take(e, 4, 8, t));
	CHECK_EQ(t->inv[0].ptask, a.ptask);
	REQUIRE_OK(finish(e, &t->inv[0], 1000));
	CHECK(pa->held_ns > 0);
	drain(&a);
	drain(&b);
	CHECK_EQ(a.done, 2);
	CHECK_EQ(b.done, 1);
	os_user_clock_ns = 0;
	free(t);
}

/*
 * A process whose last completion left it in debt with nothing queued
 * queues again: the timer must start then, or an executor that only
 * polls (kernel-mode ptaskd) would wait forever.
 */
static void test_debt_then_queue_arms_the_timer(void)
{
	struct ptask_client *e = h_executor();
	struct h_take *t = calloc(1, sizeof(*t));
	struct proc_graph a;

	REQUIRE(t);
	os_user_clock_ns = 2000000000ULL;
	REQUIRE(mkproc(&a, 40, 0, 0));
	REQUIRE_OK(feed(&a));
	REQUIRE_OK(h_take(e, 1, 8, t));
	REQUIRE_OK(finish(e, &t->inv[0], 10000000));
	drain(&a);
	CHECK(ptask_core_proc_find(&h_ns, 40)->budget_ns < 0);
	CHECK_EQ(os_user_timer_ns, 0);		/* nothing queued yet */
	REQUIRE_OK(feed(&a));
	CHECK(os_user_timer_ns > os_user_clock_ns);
	CHECK(!(ptask_core_client_poll(e) & PTASK_POLL_IN));
	os_user_clock_ns = os_user_timer_ns;
	ptask_core_sched_tick(&h_ns);
	CHECK(ptask_core_client_poll(e) & PTASK_POLL_IN);
	REQUIRE_OK(h_take(e, 1, 8, t));
	REQUIRE_OK(finish(e, &t->inv[0], 1000));
	os_user_clock_ns = 0;
	free(t);
}

/*
 * Weights a million to one: the small process's refill per period rounds
 * to 0 ns; it still gets 1 ns a period (a tiny share, not none) and the
 * timer is set for when that pays its debt, not every timer_us.
 */
static void test_tiny_share_is_not_zero(void)
{
	struct ptask_client *e = h_executor();
	struct h_take *t = calloc(1, sizeof(*t));
	struct proc_graph a, b;
	s64 before;

	REQUIRE(t);
	os_user_clock_ns = 3000000000ULL;
	REQUIRE(mkproc(&a, 50, 0, 0) && mkproc(&b, 51, 0, 0));
	REQUIRE_OK(ptask_core_proc_set_weight(&h_ns, 50, 1));
	REQUIRE_OK(ptask_core_proc_set_weight(&h_ns, 51, PTASK_WEIGHT_MAX));
	REQUIRE_OK(feed(&a));
	REQUIRE_OK(h_take(e, 1, 8, t));
	REQUIRE_OK(finish(e, &t->inv[0], 1000000));
	drain(&a);
	REQUIRE_OK(feed(&a));
	REQUIRE_OK(feed(&b));
	REQUIRE_OK(h_take(e, 1, 8, t));		/* B's: A is held */
	CHECK_EQ(t->inv[0].ptask, b.ptask);
	before = ptask_core_proc_find(&h_ns, 50)->budget_ns;
	CHECK(before < 0);
	/* Not a tick every timer_us: far away, when 1 ns a period pays. */
	CHECK(os_user_timer_ns > os_user_clock_ns + 1000000000ULL);
	os_user_clock_ns += 1000000000ULL;	/* a second: 10^4 periods */
	ptask_core_sched_tick(&h_ns);
	CHECK(ptask_core_proc_find(&h_ns, 50)->budget_ns > before);
	REQUIRE_OK(finish(e, &t->inv[0], 1000));
	os_user_clock_ns = 0;
	free(t);
}

static void test_budgets_off(void)
{
	struct ptask_client *e = h_executor();
	struct h_take *t = calloc(1, sizeof(*t));
	struct ptask_sched_params p = { .budgets = 0 };
	struct proc_graph a;

	REQUIRE(t);
	os_user_clock_ns = 5000000000ULL;
	REQUIRE(mkproc(&a, 20, 0, 0));
	REQUIRE_OK(feed(&a));
	REQUIRE_OK(h_take(e, 1, 8, t));
	REQUIRE_OK(finish(e, &t->inv[0], 50000000));
	drain(&a);
	REQUIRE_OK(feed(&a));
	CHECK_ERR(h_take(e, 1, 8, t), -EAGAIN);		/* held */
	REQUIRE_OK(ptask_core_sched_set(&h_ns, PTASK_SCHED_SET_BUDGETS, &p));
	CHECK_EQ(os_user_timer_ns, 0);			/* timer dropped */
	REQUIRE_OK(h_take(e, 1, 8, t));			/* released at once */
	REQUIRE_OK(finish(e, &t->inv[0], 50000000));
	/* Still accounted with budgets off. */
	CHECK_EQ(ptask_core_proc_find(&h_ns, 20)->gpu_ns, 100000000);
	os_user_clock_ns = 0;
	free(t);
}

static void test_settings(void)
{
	struct ptask_sched_params p, now;

	ptask_core_sched_get(&h_ns, &now);
	CHECK_EQ(now.budgets, 1);
	CHECK_EQ(now.alpha_permille, PTASK_SCHED_ALPHA_DEFAULT);
	CHECK_EQ(now.timer_us, PTASK_SCHED_TIMER_DEFAULT_US);
	CHECK_EQ(now.window_ms, PTASK_SCHED_WINDOW_DEFAULT_MS);
	CHECK_EQ(now.policy, PTASK_POLICY_DEFAULT);
	CHECK_EQ(now.n_accels, 1);
	p = now;
	p.budgets = 2;
	CHECK_ERR(ptask_core_sched_set(&h_ns, PTASK_SCHED_SET_BUDGETS, &p), -EINVAL);
	p = now;
	p.alpha_permille = 0;
	CHECK_ERR(ptask_core_sched_set(&h_ns, PTASK_SCHED_SET_ALPHA, &p), -EINVAL);
	p.alpha_permille = 1001;
	CHECK_ERR(ptask_core_sched_set(&h_ns, PTASK_SCHED_SET_ALPHA, &p), -EINVAL);
	p = now;
	p.policy = __PTASK_POLICY_MAX;
	CHECK_ERR(ptask_core_sched_set(&h_ns, PTASK_SCHED_SET_POLICY, &p), -EINVAL);
	p = now;
	p.timer_us = 9;
	CHECK_ERR(ptask_core_sched_set(&h_ns, PTASK_SCHED_SET_TIMER, &p), -EINVAL);
	p.timer_us = 1000001;
	CHECK_ERR(ptask_core_sched_set(&h_ns, PTASK_SCHED_SET_TIMER, &p), -EINVAL);
	p = now;
	p.window_ms = 0;
	CHECK_ERR(ptask_core_sched_set(&h_ns, PTASK_SCHED_SET_WINDOW, &p), -EINVAL);
	p.window_ms = 600001;
	CHECK_ERR(ptask_core_sched_set(&h_ns, PTASK_SCHED_SET_WINDOW, &p), -EINVAL);
	CHECK_ERR(ptask_core_sched_set(&h_ns, 1U << 5, &now), -EINVAL);
	/* A good alpha with a bad timer: nothing applied. */
	p = now;
	p.alpha_permille = 250;
	p.timer_us = 5;
	CHECK_ERR(ptask_core_sched_set(&h_ns, PTASK_SCHED_SET_ALPHA |
				       PTASK_SCHED_SET_TIMER, &p), -EINVAL);
	CHECK_EQ(h_ns.sched.params.alpha_permille, PTASK_SCHED_ALPHA_DEFAULT);
	p.timer_us = 1000;
	CHECK_OK(ptask_core_sched_set(&h_ns, PTASK_SCHED_SET_ALPHA |
				      PTASK_SCHED_SET_TIMER, &p));
	CHECK_EQ(h_ns.sched.params.alpha_permille, 250);
	CHECK_EQ(h_ns.sched.params.timer_us, 1000);
	CHECK_EQ(h_ns.sched.params.period_ns, 1000000);	/* no t_i yet */
}

static void test_policy_and_priority(void)
{
	struct ptask_client *e = h_executor();
	struct h_take *t = calloc(1, sizeof(*t));
	struct ptask_sched_params p = { .policy = PTASK_POLICY_DATA_AWARE };
	struct proc_graph a;

	REQUIRE(t);
	REQUIRE(mkproc(&a, 30, 0, 0));
	REQUIRE_OK(ptask_core_sched_set(&h_ns, PTASK_SCHED_SET_POLICY, &p));
	REQUIRE_OK(feed(&a));
	REQUIRE_OK(h_take(e, 1, 8, t));
	CHECK_EQ(t->policy, PTASK_POLICY_DATA_AWARE);
	CHECK_ERR(ptask_core_ptask_admin_priority(&h_ns, a.ptask, 100), -EINVAL);
	CHECK_ERR(ptask_core_ptask_admin_priority(&h_ns, a.graph, 5), -ENOENT);
	CHECK_OK(ptask_core_ptask_admin_priority(&h_ns, a.ptask, 99));
	CHECK_EQ(h_ptask_obj(a.ptask)->static_prio, 99);
	CHECK_ERR(ptask_core_proc_set_weight(&h_ns, 31, 10), -ESRCH);
	CHECK_ERR(ptask_core_proc_set_weight(&h_ns, 30, PTASK_WEIGHT_MAX + 1),
		  -EINVAL);
	CHECK_OK(ptask_core_proc_set_weight(&h_ns, 30, 7));
	CHECK_EQ(ptask_core_proc_find(&h_ns, 30)->weight_override, 7);
	REQUIRE_OK(finish(e, &t->inv[0], 1000));
	CHECK_EQ(h_ptask_obj(a.ptask)->gpu_ns, 1000);
	CHECK_EQ(a.c->gpu_ns, 1000);		/* fdinfo's per-client time */
	free(t);
}

/*
 * A one-GPU machine on the fake clock: the executor takes one invocation
 * at a time in FIFO order among the eligible, runs it for its process's
 * kernel time, completes it.  A process with @gap_ns >= 0 is a closed loop
 * (next input @gap_ns after its result); the others stay backlogged.
 */
struct sim {
	struct proc_graph pg[4];
	s64 gap_ns[4];
	u64 next_feed[4];
	bool waiting[4];	/* closed loop: an input is in the graph */
	int n;
	u64 busy_ns;
};

static bool sim_run(struct sim *s, struct ptask_client *e, u64 until)
{
	struct h_take *t = calloc(1, sizeof(*t));
	int i;

	if (!t)
		return false;
	while (os_user_clock_ns < until) {
		u64 next = 0;

		for (i = 0; i < s->n; i++)
			if (s->gap_ns[i] >= 0 && !s->waiting[i] &&
			    s->next_feed[i] <= os_user_clock_ns) {
				if (feed(&s->pg[i]))
					goto fail;
				s->waiting[i] = true;
			}
		if (!h_take(e, 1, 8, t)) {
			struct proc_graph *pg = owner(s->pg, s->n,
						      t->inv[0].ptask);

			if (!pg)
				goto fail;
			i = (int)(pg - s->pg);
			os_user_clock_ns += pg->gpu_ns;
			s->busy_ns += pg->gpu_ns;
			if (finish(e, &t->inv[0], pg->gpu_ns))
				goto fail;
			drain(pg);
			if (s->gap_ns[i] < 0 && feed(pg))
				goto fail;
			s->waiting[i] = false;
			s->next_feed[i] = os_user_clock_ns + (u64)s->gap_ns[i];
			continue;
		}
		/* Idle: on to the next feed or the budget timer. */
		for (i = 0; i < s->n; i++)
			if (s->gap_ns[i] >= 0 && !s->waiting[i] &&
			    (!next || s->next_feed[i] < next))
				next = s->next_feed[i];
		if (os_user_timer_ns && (!next || os_user_timer_ns < next))
			next = os_user_timer_ns;
		if (!next || next <= os_user_clock_ns)
			goto fail;
		os_user_clock_ns = next;
		if (next == os_user_timer_ns)
			ptask_core_sched_tick(&h_ns);
	}
	free(t);
	return true;
fail:
	free(t);
	return false;
}

static void sim_add(struct sim *s, s32 nice, u64 gpu_ns, s64 gap_ns)
{
	int i = s->n++;

	if (!mkproc(&s->pg[i], 100 + i, nice, gpu_ns))
		abort();
	s->gap_ns[i] = gap_ns;
	if (gap_ns < 0 && (feed(&s->pg[i]) || feed(&s->pg[i])))
		abort();
}

/* PTask Figure 13: four backlogged processes at four nice levels. */
static void test_shares_follow_weight(void)
{
	static const s32 nice[4] = { 0, 5, 10, 15 };
	struct ptask_client *e = h_executor();
	struct sim *s = calloc(1, sizeof(*s));
	u64 start[4], total = 0, wsum = 0;
	double x[4], sx = 0, sxx = 0, jain;
	int i;

	REQUIRE(s);
	os_user_clock_ns = 1000000000ULL;
	for (i = 0; i < 4; i++)
		sim_add(s, nice[i], 1000000, -1);
	REQUIRE(sim_run(s, e, os_user_clock_ns + 1000000000ULL)); /* warm */
	for (i = 0; i < 4; i++)
		start[i] = ptask_core_proc_find(&h_ns, 100 + i)->gpu_ns;
	s->busy_ns = 0;
	REQUIRE(sim_run(s, e, os_user_clock_ns + 20000000000ULL));
	CHECK(s->busy_ns > 20000000000ULL * 9 / 10);	/* GPU kept busy */
	for (i = 0; i < 4; i++) {
		start[i] = ptask_core_proc_find(&h_ns, 100 + i)->gpu_ns - start[i];
		total += start[i];
		wsum += ptask_nice_weight(nice[i]);
	}
	for (i = 0; i < 4; i++) {
		double share = (double)start[i] / (double)total;
		double want = (double)ptask_nice_weight(nice[i]) / (double)wsum;

		x[i] = share / want;
		sx += x[i];
		sxx += x[i] * x[i];
		h_diag("nice %d: share %.4f, weight share %.4f", nice[i],
		       share, want);
	}
	jain = sx * sx / (4 * sxx);
	h_diag("jain=%.4f", jain);
	CHECK(jain >= 0.95);
	os_user_clock_ns = 0;
	free(s);
}

/* PTask Table 3: a nice -20 client of 1 ms kernels against nice +19 hogs. */
static double fg_rate(int hogs, bool budgets)
{
	struct ptask_sched_params p = { .budgets = budgets };
	struct ptask_client *e = h_executor();
	struct sim *s = calloc(1, sizeof(*s));
	u64 done0, span = 10000000000ULL;
	double rate;
	int i;

	if (!s)
		abort();
	os_user_clock_ns = 1000000000ULL;
	if (ptask_core_sched_set(&h_ns, PTASK_SCHED_SET_BUDGETS, &p))
		abort();
	sim_add(s, -20, 1000000, 100000);
	for (i = 0; i < hogs; i++)
		sim_add(s, 19, 19000000, -1);
	if (!sim_run(s, e, os_user_clock_ns + 1000000000ULL))
		abort();
	done0 = s->pg[0].done;
	if (!sim_run(s, e, os_user_clock_ns + span))
		abort();
	rate = (double)(s->pg[0].done - done0) / ((double)span / 1e9);
	for (i = 0; i < s->n; i++)
		ptask_core_client_destroy(s->pg[i].c);
	ptask_core_client_destroy(e);
	os_user_clock_ns = 0;
	free(s);
	return rate;
}

static void test_no_inversion(void)
{
	double alone = fg_rate(0, true), off1 = fg_rate(1, false),
	       off2 = fg_rate(2, false), on1 = fg_rate(1, true),
	       on2 = fg_rate(2, true);

	h_diag("foreground/s: alone %.0f; budgets off: %.0f, %.0f; on: %.0f, %.0f",
	       alone, off1, off2, on1, on2);
	CHECK(alone > 850);			/* 1 ms + 0.1 ms gap */
	CHECK(off1 < alone / 10);		/* the inversion shows */
	CHECK(off2 < off1);
	CHECK(on1 >= alone * 0.9);
	CHECK(on2 >= alone * 0.9);
}

int main(int argc, char **argv)
{
	static const struct h_test tests[] = {
		H_TEST(test_weights),
		H_TEST(test_record_lifetime),
		H_TEST(test_held_then_released),
		H_TEST(test_debt_then_queue_arms_the_timer),
		H_TEST(test_tiny_share_is_not_zero),
		H_TEST(test_budgets_off),
		H_TEST(test_settings),
		H_TEST(test_policy_and_priority),
		H_TEST(test_shares_follow_weight),
		H_TEST(test_no_inversion),
	};

	return h_main(tests, ARRAY_SIZE(tests), argc, argv);
}
