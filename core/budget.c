// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * budget.c - PTSched: per-process GPU budgets (PTask section 5.3).
 *
 * DOC: PTSched
 *
 * A GPU kernel cannot be preempted, so fairness is enforced at invocation
 * boundaries with a token bucket per process: each process p that owns a
 * GPU ptask has a budget B_p, reduced by the GPU time t of each of its
 * invocations (the executor measures it with device events and reports it
 * at completion) and replenished once per period T.  While budgets are on
 * and B_p < 0, p's GPU ptasks stay Queued: exec_take skips them.
 *
 * The paper sets B_max,p = n_p / sum(n_i) * sum(t_i) and q = T =
 * alpha * min(t_i) over the set P of processes using a GPU.  Read
 * literally, every process regains the same q per T whatever its weight,
 * which gives busy processes equal shares.  Here the refill is weighted:
 * p regains q_p = T * n_accels * w_p / sum(w_i) per period, so the refills
 * of P add up to the accelerators' capacity and a backlogged process gets
 * a share of GPU time proportional to its weight; the cap B_max,p (at
 * least q_p) stops an idle process from hoarding.  The scheme does not
 * conserve work: a low-weight process in debt waits even when the GPU is
 * idle, so it cannot use a high-weight client's short gaps to start a
 * long kernel in front of it.  P holds the processes with GPU work Queued
 * or Executing, or with some within the last window_ms, so such gaps do
 * not drop the high-weight client from P.  A process leaving P is forgiven
 * its debt (it competed with nobody for it any more).
 *
 * Weights are the CFS weights of nice values (kernel/sched/core.c's
 * sched_prio_to_weight), so GPU shares follow the CPU's.  Everything here
 * is integer arithmetic on ns; all functions need the namespace lock.
 */
#include "ptask_core.h"

/* CFS's weight of each nice level, -20 .. 19 (nice 0: 1024). */
static const u32 nice_weight[40] = {
	88761, 71755, 56483, 46273, 36291,
	29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906,
	3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423,
	335, 272, 215, 172, 137,
	110, 87, 70, 56, 45,
	36, 29, 23, 18, 15,
};

/**
 * ptask_nice_weight() - the CFS weight of a nice value
 * @nice: -20..19; values outside are clamped
 *
 * Return: the weight (nice 0: 1024; each step about 1.25x).
 */
u32 ptask_nice_weight(s32 nice)
{
	if (nice < -20)
		nice = -20;
	if (nice > 19)
		nice = 19;
	return nice_weight[nice + 20];
}

static u32 proc_weight(const struct ptask_proc *proc)
{
	return proc->weight_override ? proc->weight_override :
	       ptask_nice_weight(proc->nice);
}

/**
 * ptask_sched_init() - PTSched's defaults: budgets on
 * @ns: the namespace being set up
 */
void ptask_sched_init(struct ptask_ns *ns)
{
	struct ptask_sched *s = &ns->sched;

	memset(s, 0, sizeof(*s));
	ptask_list_init(&s->procs);
	s->params.budgets = 1;
	s->params.alpha_permille = PTASK_SCHED_ALPHA_DEFAULT;
	s->params.policy = PTASK_POLICY_DEFAULT;
	s->params.timer_us = PTASK_SCHED_TIMER_DEFAULT_US;
	s->params.window_ms = PTASK_SCHED_WINDOW_DEFAULT_MS;
	s->params.n_accels = 1;
	s->params.period_ns = (u64)PTASK_SCHED_TIMER_DEFAULT_US * 1000;
}

/**
 * ptask_sched_destroy() - the namespace is going away
 * @ns: the namespace; every ptask and invocation is gone
 *
 * The shell stops its own timer before this (nothing is held any more).
 */
void ptask_sched_destroy(struct ptask_ns *ns)
{
	PTASK_WARN_ON(!ptask_list_empty(&ns->sched.procs));
	ns->sched.timer_ns = 0;
}

/**
 * ptask_core_proc_find() - a process's accounting
 * @ns: the namespace
 * @pid: the process
 *
 * Return: the record, or NULL when @pid owns no ptask.
 */
struct ptask_proc *ptask_core_proc_find(struct ptask_ns *ns, s32 pid)
{
	struct ptask_list *pos;

	ptask_os_assert_locked(ns);
	ptask_list_for_each(pos, &ns->sched.procs) {
		struct ptask_proc *proc = ptask_list_entry(pos,
				struct ptask_proc, node);

		if (proc->pid == pid)
			return proc;
		if (proc->pid > pid)
			break;
	}
	return NULL;
}

/**
 * ptask_core_proc_next() - iterate the records in pid order
 * @ns: the namespace
 * @after_pid: the last pid seen (start with a value below every pid,
 *	such as -2147483647 - 1)
 *
 * Return: the record with the smallest pid above @after_pid, or NULL.
 */
struct ptask_proc *ptask_core_proc_next(struct ptask_ns *ns, s32 after_pid)
{
	struct ptask_list *pos;

	ptask_os_assert_locked(ns);
	ptask_list_for_each(pos, &ns->sched.procs) {
		struct ptask_proc *proc = ptask_list_entry(pos,
				struct ptask_proc, node);

		if (proc->pid > after_pid)
			return proc;
	}
	return NULL;
}

/**
 * ptask_proc_get() - the caller's accounting, made on its first ptask
 * @ns: the namespace
 * @who: the caller; its nice value is noted
 *
 * Return: the record with one more reference, or NULL on -ENOMEM.
 */
struct ptask_proc *ptask_proc_get(struct ptask_ns *ns,
				  const struct ptask_caller *who)
{
	struct ptask_proc *proc = ptask_core_proc_find(ns, who->pid);
	struct ptask_list *pos;

	if (!proc) {
		proc = ptask_os_zalloc(sizeof(*proc));
		if (!proc)
			return NULL;
		proc->pid = who->pid;
		proc->uid = who->uid;
		/* Keep the list in pid order: listings and lookups use it. */
		ptask_list_for_each(pos, &ns->sched.procs)
			if (ptask_list_entry(pos, struct ptask_proc,
					     node)->pid > who->pid)
				break;
		ptask_list_add_tail(&proc->node, pos);
		ns->sched.nprocs++;
		ptask_os_event(ns, PTASK_EVENT_CREATED, PTASK_OBJ_PROCESS,
			       (u32)who->pid);
	}
	proc->nice = who->nice;
	proc->refs++;
	/* A new process, or a new nice value: the shares change. */
	ptask_core_sched_update(ns);
	return proc;
}

/**
 * ptask_proc_put() - drop a reference; the last one frees the record
 * @ns: the namespace
 * @proc: the record
 */
void ptask_proc_put(struct ptask_ns *ns, struct ptask_proc *proc)
{
	ptask_os_assert_locked(ns);
	if (PTASK_WARN_ON(!proc->refs))
		return;
	if (--proc->refs)
		return;
	ptask_list_del(&proc->node);
	ns->sched.nprocs--;
	ptask_os_event(ns, PTASK_EVENT_DESTROYED, PTASK_OBJ_PROCESS,
		       (u32)proc->pid);
	ptask_os_free(proc);
	/* One process fewer in P: the others' shares grow. */
	ptask_core_sched_update(ns);
}

/* Accelerators of the registered executors: the capacity refills add to. */
static u32 count_accels(struct ptask_ns *ns)
{
	struct ptask_list *pos;
	u32 n = 0;

	ptask_list_for_each(pos, &ns->clients) {
		struct ptask_client *c = ptask_list_entry(pos,
				struct ptask_client, ns_node);

		if (c->executor)
			n += c->n_accels;
	}
	/* The arithmetic's bounds below assume at most this many. */
	if (n > PTASK_MAX_ACCELS)
		n = PTASK_MAX_ACCELS;
	return n ? n : 1;
}

/* Longest invocation average and period taken into account: keeps the
 * products below 2^63 (10 s * 64 accelerators * PTASK_WEIGHT_MAX).
 */
#define AVG_CAP_NS	10000000000ULL
#define SUM_CAP_NS	1000000000000ULL

static void count_queued(struct ptask_ns *ns)
{
	struct ptask_list *pos;

	ptask_list_for_each(pos, &ns->sched.procs)
		ptask_list_entry(pos, struct ptask_proc, node)->queued = 0;
	ptask_list_for_each(pos, &ns->ready) {
		struct ptask_ptask *p = ptask_list_entry(pos,
				struct ptask_ptask, ready_node);

		if (p->kind == PTASK_KIND_GPU && p->proc)
			p->proc->queued++;
	}
}

/* Mark @proc in P or not; returns whether it is. */
static bool note_active(struct ptask_proc *proc, u64 now, u64 window)
{
	proc->active = proc->queued || proc->running ||
		       (proc->last_active_ns &&
			now - proc->last_active_ns < window);
	if (!proc->active) {
		/* Out of P: nobody competes for its debt any more. */
		if (proc->budget_ns < 0)
			proc->budget_ns = 0;
		proc->bmax_ns = 0;
	}
	return proc->active;
}

/* Add @k periods' refill of @q to @proc's budget, capped at its B_max. */
static void refill(struct ptask_proc *proc, u64 k, u64 q)
{
	s64 room = proc->bmax_ns - proc->budget_ns;

	if (room <= 0)
		proc->budget_ns = proc->bmax_ns;
	else if (k && q && k > div64_u64((u64)room, q))
		proc->budget_ns = proc->bmax_ns;
	else
		proc->budget_ns += (s64)(k * q);
}

static void note_held(struct ptask_sched *s, struct ptask_proc *proc,
		      u64 now, bool *freed)
{
	bool held = s->params.budgets && proc->active &&
		    proc->budget_ns < 0 && proc->queued;

	if (held && !proc->held)
		proc->held_since_ns = now;
	if (!held && proc->held) {
		proc->held_ns += now - proc->held_since_ns;
		*freed |= proc->queued > 0;
	}
	proc->held = held;
}

/* When will held @proc, refilled @q per period, be back at zero? */
static u64 eligible_at(const struct ptask_sched *s,
		       const struct ptask_proc *proc, u64 q)
{
	u64 periods;

	if (!q)
		return 0;
	periods = div64_u64((u64)-proc->budget_ns + q - 1, q);
	if (periods > (1ULL << 20))
		periods = 1ULL << 20;
	return s->last_refill_ns + periods * s->params.period_ns;
}

static void arm_timer(struct ptask_ns *ns, u64 now, u64 when)
{
	struct ptask_sched *s = &ns->sched;
	u64 floor = now + (u64)s->params.timer_us * 1000;

	if (when && when < floor)
		when = floor;
	if (when == s->timer_ns)
		return;
	s->timer_ns = when;
	ptask_os_sched_timer(ns, when);
}

/* P's weight, the sum and minimum of its averages, its size. */
struct p_totals {
	u64 weight;
	u64 sum_ns;
	u64 shortest_ns;
	u32 active;
};

static void total_p(struct ptask_ns *ns, u64 now, struct p_totals *t)
{
	u64 window = (u64)ns->sched.params.window_ms * 1000000;
	struct ptask_list *pos;

	memset(t, 0, sizeof(*t));
	ptask_list_for_each(pos, &ns->sched.procs) {
		struct ptask_proc *proc = ptask_list_entry(pos,
				struct ptask_proc, node);
		u64 avg = proc->avg_ns < AVG_CAP_NS ? proc->avg_ns : AVG_CAP_NS;

		if (!note_active(proc, now, window))
			continue;
		t->active++;
		t->weight += proc_weight(proc);
		if (!avg)
			continue;
		t->sum_ns += avg;
		if (!t->shortest_ns || avg < t->shortest_ns)
			t->shortest_ns = avg;
	}
	if (t->sum_ns > SUM_CAP_NS)
		t->sum_ns = SUM_CAP_NS;
}

/**
 * ptask_core_sched_update() - recompute P, T, the refills and who is held
 * @ns: the namespace
 *
 * Called on every take, completion, process arrival and exit, setting
 * change and timer tick.  Wakes the executors when a held process with
 * work becomes eligible, and asks the shell for a timer while one is held.
 */
void ptask_core_sched_update(struct ptask_ns *ns)
{
	struct ptask_sched *s = &ns->sched;
	u64 now = ptask_os_now_ns(), window, period, k, wake_at = 0;
	u32 accels = count_accels(ns), held = 0;
	struct ptask_list *pos;
	struct p_totals tot;
	bool freed = false;

	ptask_os_assert_locked(ns);
	window = (u64)s->params.window_ms * 1000000;
	count_queued(ns);
	total_p(ns, now, &tot);
	period = div64_u64(tot.shortest_ns * s->params.alpha_permille, 1000);
	if (period < (u64)s->params.timer_us * 1000)
		period = (u64)s->params.timer_us * 1000;
	if (!s->last_refill_ns || now < s->last_refill_ns)
		s->last_refill_ns = now;
	k = div64_u64(now - s->last_refill_ns, period);
	s->last_refill_ns = k > (1ULL << 20) ? now :
			    s->last_refill_ns + k * period;
	s->params.period_ns = period;
	s->params.n_accels = accels;
	s->params.active = tot.active;
	s->params.total_weight = tot.weight;
	ptask_list_for_each(pos, &s->procs) {
		struct ptask_proc *proc = ptask_list_entry(pos,
				struct ptask_proc, node);
		u64 w = proc_weight(proc), q = 0, at;

		if (proc->active) {
			/* At least 1 ns: a tiny share, never none (no dead ticks). */
			q = div64_u64(period * accels * w, tot.weight) ?: 1;
			proc->bmax_ns = (s64)div64_u64(w * tot.sum_ns,
						       tot.weight);
			if (proc->bmax_ns < (s64)q)
				proc->bmax_ns = (s64)q;
			refill(proc, k, q);
		}
		note_held(s, proc, now, &freed);
		if (!proc->held)
			continue;
		held++;
		at = eligible_at(s, proc, q);
		if (at && (!wake_at || at < wake_at))
			wake_at = at;
	}
	/* A process leaving P changes everyone's share: look again then. */
	ptask_list_for_each(pos, &s->procs) {
		struct ptask_proc *proc = ptask_list_entry(pos,
				struct ptask_proc, node);
		u64 at = proc->last_active_ns + window;

		if (held && proc->active && !proc->queued && !proc->running &&
		    (!wake_at || at < wake_at))
			wake_at = at;
	}
	s->params.held = held;
	arm_timer(ns, now, held ? (wake_at ? wake_at : now) : 0);
	if (freed)
		ptask_core_exec_wake(ns);
}

/**
 * ptask_core_sched_tick() - the shell's timer fired
 * @ns: the namespace
 */
void ptask_core_sched_tick(struct ptask_ns *ns)
{
	ptask_os_assert_locked(ns);
	ns->sched.timer_ns = 0;
	ptask_core_sched_update(ns);
}

/**
 * ptask_sched_eligible() - may an executor take @p now?
 * @ns: the namespace
 * @p: a Queued ptask on the namespace's ready list
 *
 * Return: false for a GPU ptask whose owner's budget is negative while
 * budgets are on; true otherwise.
 */
bool ptask_sched_eligible(const struct ptask_ns *ns,
			  const struct ptask_ptask *p)
{
	return !ns->sched.params.budgets || p->kind != PTASK_KIND_GPU ||
	       !p->proc || p->proc->budget_ns >= 0;
}

/**
 * ptask_sched_any_eligible() - is there a Queued ptask an executor may take?
 * @ns: the namespace
 *
 * Return: true when the ready list holds a ptask ptask_sched_eligible()
 * lets through (what poll's readability of an executor means).
 */
bool ptask_sched_any_eligible(struct ptask_ns *ns)
{
	struct ptask_list *pos;

	ptask_os_assert_locked(ns);
	ptask_list_for_each(pos, &ns->ready) {
		struct ptask_ptask *p = ptask_list_entry(pos,
				struct ptask_ptask, ready_node);

		if (ptask_sched_eligible(ns, p))
			return true;
	}
	return false;
}

/**
 * ptask_sched_taken() - @inv was taken: its process has work running
 * @ns: the namespace
 * @inv: the new invocation, its ptask set
 */
void ptask_sched_taken(struct ptask_ns *ns, struct ptask_invocation_rec *inv)
{
	struct ptask_proc *proc = inv->ptask->proc;

	ptask_os_assert_locked(ns);
	if (inv->ptask->kind != PTASK_KIND_GPU || !proc)
		return;
	proc->refs++;
	proc->running++;
	proc->last_active_ns = ptask_os_now_ns();
	inv->proc = proc;
}

/**
 * ptask_sched_untake() - @inv is being freed
 * @ns: the namespace
 * @inv: the invocation
 */
void ptask_sched_untake(struct ptask_ns *ns, struct ptask_invocation_rec *inv)
{
	struct ptask_proc *proc = inv->proc;

	if (!proc)
		return;
	inv->proc = NULL;
	PTASK_WARN_ON(!proc->running);
	proc->running--;
	ptask_proc_put(ns, proc);
}

/**
 * ptask_sched_charge() - the executor reported @inv's GPU time
 * @ns: the namespace
 * @inv: the invocation (its ptask may be gone)
 * @gpu_ns: the GPU time, whatever the outcome: failed work used it too
 */
void ptask_sched_charge(struct ptask_ns *ns, struct ptask_invocation_rec *inv,
			u64 gpu_ns)
{
	struct ptask_proc *proc = inv->proc;
	struct ptask_client *creator = inv->ptask ? inv->ptask->creator : NULL;

	ptask_os_assert_locked(ns);
	if (creator) {
		creator->gpu_ns += gpu_ns;
		creator->invocations++;
	}
	if (!proc)
		return;
	if (gpu_ns > AVG_CAP_NS * 100)
		gpu_ns = AVG_CAP_NS * 100;
	proc->budget_ns -= (s64)gpu_ns;
	proc->gpu_ns += gpu_ns;
	proc->invocations++;
	/* Running average over about the last eight invocations. */
	proc->avg_ns = proc->avg_ns ? div64_u64(proc->avg_ns * 7 + gpu_ns, 8) :
		       gpu_ns;
	if (!proc->avg_ns)
		proc->avg_ns = 1;
	proc->last_active_ns = ptask_os_now_ns();
}

/**
 * ptask_core_sched_get() - the settings and the state as of now
 * @ns: the namespace
 * @out: filled
 */
void ptask_core_sched_get(struct ptask_ns *ns, struct ptask_sched_params *out)
{
	ptask_os_assert_locked(ns);
	ptask_core_sched_update(ns);
	*out = ns->sched.params;
}

static int check_params(u32 mask, const struct ptask_sched_params *in)
{
	if (mask & ~PTASK_SCHED_SET_ALL)
		return -EINVAL;
	if ((mask & PTASK_SCHED_SET_BUDGETS) && in->budgets > 1)
		return -EINVAL;
	if ((mask & PTASK_SCHED_SET_ALPHA) &&
	    (in->alpha_permille < PTASK_SCHED_ALPHA_MIN ||
	     in->alpha_permille > PTASK_SCHED_ALPHA_MAX))
		return -EINVAL;
	if ((mask & PTASK_SCHED_SET_POLICY) && in->policy >= __PTASK_POLICY_MAX)
		return -EINVAL;
	if ((mask & PTASK_SCHED_SET_TIMER) &&
	    (in->timer_us < PTASK_SCHED_TIMER_MIN_US ||
	     in->timer_us > PTASK_SCHED_TIMER_MAX_US))
		return -EINVAL;
	if ((mask & PTASK_SCHED_SET_WINDOW) &&
	    (in->window_ms < PTASK_SCHED_WINDOW_MIN_MS ||
	     in->window_ms > PTASK_SCHED_WINDOW_MAX_MS))
		return -EINVAL;
	return 0;
}

/**
 * ptask_core_sched_set() - change settings, all or nothing
 * @ns: the namespace
 * @mask: PTASK_SCHED_SET_* naming the fields of @in to apply
 * @in: the new values (out fields ignored)
 *
 * Every named value is checked before any is applied.  Turning budgets
 * off releases every held process at once.
 *
 * Return: 0, or -EINVAL (an unknown @mask bit or a value out of range).
 */
int ptask_core_sched_set(struct ptask_ns *ns, u32 mask,
			 const struct ptask_sched_params *in)
{
	struct ptask_sched_params *p = &ns->sched.params;
	int err;

	ptask_os_assert_locked(ns);
	err = check_params(mask, in);
	if (err)
		return err;
	if (mask & PTASK_SCHED_SET_BUDGETS)
		p->budgets = in->budgets;
	if (mask & PTASK_SCHED_SET_ALPHA)
		p->alpha_permille = in->alpha_permille;
	if (mask & PTASK_SCHED_SET_POLICY)
		p->policy = in->policy;
	if (mask & PTASK_SCHED_SET_TIMER)
		p->timer_us = in->timer_us;
	if (mask & PTASK_SCHED_SET_WINDOW)
		p->window_ms = in->window_ms;
	ptask_core_sched_update(ns);
	/* Executors learn a new policy with their next take. */
	if (mask & PTASK_SCHED_SET_POLICY)
		ptask_core_exec_wake(ns);
	return 0;
}

/**
 * ptask_core_proc_set_weight() - override (or restore) a process's weight
 * @ns: the namespace
 * @pid: the process
 * @weight: 1..PTASK_WEIGHT_MAX, or 0 to use its nice value's again
 *
 * Return: 0, -EINVAL (out of range) or -ESRCH (no accounting for @pid).
 */
int ptask_core_proc_set_weight(struct ptask_ns *ns, s32 pid, u32 weight)
{
	struct ptask_proc *proc;

	ptask_os_assert_locked(ns);
	if (weight > PTASK_WEIGHT_MAX)
		return -EINVAL;
	proc = ptask_core_proc_find(ns, pid);
	if (!proc)
		return -ESRCH;
	proc->weight_override = weight;
	ptask_core_sched_update(ns);
	return 0;
}

/**
 * ptask_core_proc_describe() - a record as the admin interfaces show it
 * @proc: the record
 * @info: filled
 */
void ptask_core_proc_describe(const struct ptask_proc *proc,
			      struct ptask_proc_info *info)
{
	memset(info, 0, sizeof(*info));
	info->pid = proc->pid;
	info->uid = proc->uid;
	info->nice = proc->nice;
	info->weight = proc_weight(proc);
	info->weight_override = proc->weight_override;
	info->active = proc->active;
	info->held = proc->held;
	info->queued = proc->queued;
	info->running = proc->running;
	info->ptasks = proc->ptasks;
	info->budget_ns = proc->budget_ns;
	info->bmax_ns = proc->bmax_ns;
	info->gpu_ns = proc->gpu_ns;
	info->avg_ns = proc->avg_ns;
	info->invocations = proc->invocations;
	info->held_ns = proc->held_ns;
	if (proc->held)
		info->held_ns += ptask_os_now_ns() - proc->held_since_ns;
}
