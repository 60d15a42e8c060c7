// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * sched.c - placing jobs on devices (PTask, section 5.1).
 *
 * Placement runs under e->lock whenever something that matters changes:
 * jobs arrive (taker), a device submitted a job or completed some (its
 * worker, the completion thread), the policy
 * changes, and every PD_HOLD_POLL_NS while data-aware holds a job back
 * (its wait keeps raising its effective priority).  It walks the queue in
 * the policy's order and gives each job an *available* device until none
 * is: one with no job waiting to be submitted and fewer than
 * max_inflight jobs in flight (engine_priv.h, "Pipelining").  Among the
 * available devices an idle one (nothing in flight) comes first, then
 * the least loaded (fewest in flight), then as the policy says:
 *
 *   first-available  arrival order; the lowest number (PTask's manager
 *                    threads racing for devices, without the threads)
 *   fifo             arrival order; the strongest
 *   priority         highest effective priority first; the strongest
 *   data-aware       as priority, but a job whose inputs are current in
 *                    some device's memory prefers the devices holding
 *                    the most of its input bytes; when none of those is
 *                    available it stays queued (the policy is not
 *                    work-conserving) unless its effective priority is
 *                    above the migration threshold, and then takes the
 *                    best available device.  Its wait raises its
 *                    effective priority, so it runs in the end.
 *
 * A device hands out one job at a time (the next is placed once it was
 * submitted), so priorities still order the jobs a busy device takes.
 *
 * Every device is fit for every GPU ptask (all kinds run PTX through
 * their backend or a host kernel), so fitness does not prune.  Strength
 * ties go to the lower device number.  A job counts as a migration when
 * it runs on a device holding fewer of its input bytes than another one
 * does, under every policy, so the policies can be compared.
 *
 * Effective priority (PTask's figure 9, its weights our own):
 *
 *   eff = static_prio                                (0..99, default 50)
 *       + 10 x wait / max(average wait, 1 ms)        (starvation: grows
 *                                                     without bound)
 *       + 10 x clamp((avg run - own avg run) / avg run, -1, 1)
 *                                                    (short ptasks first)
 *       - proxy_nice                                 (the client's OS
 *                                                     priority, -19..20)
 *
 * "average wait" and "own avg run" are the ptask's moving averages (1/8
 * weight to the newest), "avg run" the average over every ptask.  A job
 * waiting as long as usual gets +10; the default migration threshold, 90,
 * is passed by a default-priority job that has waited four times its
 * usual wait.
 */
#include <stdlib.h>
#include "daemon/backend/host.h"
#include "daemon/engine/engine_priv.h"

#define PD_WAIT_FLOOR_NS	1000000.0
#define PD_W_WAIT		10.0
#define PD_W_RUN		10.0
#define PD_W_PROXY		1.0
#define PD_MIGRATE_DEFAULT	90.0
#define PD_EMA_WEIGHT		0.125

static double ema(double avg, double sample, bool first)
{
	return first ? sample : avg + PD_EMA_WEIGHT * (sample - avg);
}

uint64_t pd_sched_owner(const struct pd_engine *e, const struct pd_job *job)
{
	return e->cfg.shared_isolation ? 0 :
	       (uint64_t)(uint32_t)job->inv.owner_pid;
}

static double effective_prio(const struct pd_engine *e,
			     const struct pd_job *job, uint64_t now_ns)
{
	const struct pd_ptask_info *info = job->info;
	double wait = now_ns > job->queued_ns ?
		      (double)(now_ns - job->queued_ns) : 0.0;
	double ref = info->avg_wait_ns > e->avg_wait_ns ? info->avg_wait_ns :
		     e->avg_wait_ns;
	double eff;

	if (ref < PD_WAIT_FLOOR_NS)
		ref = PD_WAIT_FLOOR_NS;
	eff = job->inv.static_prio + PD_W_WAIT * wait / ref;

	if (info->runs && e->avg_run_ns > 0.0) {
		double r = (e->avg_run_ns - info->avg_run_ns) / e->avg_run_ns;

		eff += PD_W_RUN * (r > 1.0 ? 1.0 : r < -1.0 ? -1.0 : r);
	}
	return eff - PD_W_PROXY * job->inv.proxy_nice;
}

/*
 * The queued job, taken ahead, whose output @job reads (an input of it
 * PTASK_INVP_PENDING):
 * the latest such, looked for from the queue's tail (a chain's hop is
 * usually right behind the one it reads), or NULL.
 */
static struct pd_job *producer_locked(struct pd_engine *e,
				      const struct pd_job *job)
{
	struct ptask_list *pos;
	uint32_t i, j;

	for (pos = e->queue.prev; pos != &e->queue; pos = pos->prev) {
		struct pd_job *q = ptask_list_entry(pos, struct pd_job, node);

		if (!q->taken_ahead)
			continue;
		for (i = 0; i < job->inv.n_ports; i++) {
			const struct ptask_invocation_port *in = &job->ports[i];

			if (!pd_port_is_input(in) || !in->datablock)
				continue;
			for (j = 0; j < q->inv.n_ports; j++)
				if (q->ports[j].kind == PTASK_PORT_OUTPUT &&
				    q->ports[j].datablock == in->datablock)
					return q;
		}
	}
	return NULL;
}

/*
 * May @job be placed as far as what it reads goes?  An input written by
 * a job taken ahead that has not run (PTASK_INVP_PENDING) is read only
 * once that job is placed (one device then runs them in that order).
 * Every such producer, not the first found alone: a join (a vec_add of
 * two hops taken ahead) reads two, and placed behind one of them only it
 * read the other's output before that was written (the soak benchmark
 * found it: wrong results from diamonds, 2026-12-07).  So the producer
 * found in the queue is remembered (pd_job.after), and once it is
 * placed the queue is looked at again.  None left there: all are
 * placed, unless a take is still on its way to the queue with one
 * (e->taking): wait for that take.
 */
static bool after_placed_locked(struct pd_engine *e, struct pd_job *job)
{
	if (!job->pending_in)
		return true;
	if (job->after && job->after->dev < 0)
		return false;
	if (job->after_known && !job->after)
		return true;
	if (job->after) {
		pd_job_put_locked(e, job->after);
		job->after = NULL;
	}
	job->after = producer_locked(e, job);
	if (job->after) {
		job->after->refs++;
		return false;
	}
	if (e->taking) {
		e->taking_waits = true;
		return false;
	}
	job->after_known = true;
	return true;
}

void pd_sched_enqueue_locked(struct pd_engine *e, struct pd_job *job)
{
	pd_assert_locked(e);
	job->seq = e->next_seq++;
	ptask_list_add_tail(&job->node, &e->queue);
	e->nqueued++;
}

/* A device's time on a job is over: learn from it. */
void pd_sched_ran_locked(struct pd_engine *e, struct pd_job *job,
			 uint64_t run_ns)
{
	struct pd_ptask_info *info = job->info;

	pd_assert_locked(e);
	info->avg_run_ns = ema(info->avg_run_ns, (double)run_ns, !info->runs);
	info->runs++;
	e->avg_run_ns = ema(e->avg_run_ns, (double)run_ns,
			    e->avg_run_ns == 0.0);
}

/* Highest effective priority first; arrival order among equals. */
static int by_priority(const void *a, const void *b)
{
	const struct pd_job *x = *(struct pd_job *const *)a;
	const struct pd_job *y = *(struct pd_job *const *)b;

	if (x->eff != y->eff)
		return x->eff > y->eff ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The best available device in @mask (bit per device), or -1: idle
 * first, then the least loaded, then (@by_strength) the strongest, then
 * the lowest number.
 */
static int best_available(const struct pd_engine *e, uint32_t mask,
			  bool by_strength)
{
	int best = -1;
	uint32_t d;

	for (d = 0; d < e->ndev; d++) {
		const struct pd_device *dev = &e->dev[d], *b;

		if (!(mask & (1U << d)) || !pd_dev_available(dev))
			continue;
		if (best < 0) {
			best = (int)d;
			continue;
		}
		b = &e->dev[best];
		if (dev->ninflight != b->ninflight) {
			if (dev->ninflight < b->ninflight)
				best = (int)d;
			continue;
		}
		if (by_strength &&
		    e->be->info[d].strength > e->be->info[best].strength)
			best = (int)d;
	}
	return best;
}

/*
 * Input bytes of @job current in its space on each device (@bytes) and
 * the devices holding the most of them (returned as a mask; 0 when no
 * device holds any).
 */
static uint32_t preferred_devices(struct pd_engine *e, struct pd_job *job,
				  uint64_t bytes[PD_MAX_DEVICES])
{
	uint64_t owner = pd_sched_owner(e, job), best = 0;
	uint32_t d, i, mask = 0;

	for (d = 0; d < e->ndev; d++)
		bytes[d] = 0;
	for (i = 0; i < job->inv.n_ports; i++) {
		const struct ptask_invocation_port *p = &job->ports[i];
		struct pd_dbrec *rec;

		if (p->kind == PTASK_PORT_OUTPUT || !p->datablock ||
		    (p->flags & PTASK_PORT_RUNTIME) || pd_port_by_value(p))
			continue;
		rec = pd_rec_find_locked(e, p->datablock);
		/* Views about to be dropped for a newer generation count not. */
		if (!rec || (rec->gen_known ?
			     rec->generation != p->generation : rec->exposed))
			continue;
		for (d = 0; d < e->ndev; d++)
			bytes[d] += pd_rec_bytes_on_locked(e, rec, d, owner);
	}
	for (d = 0; d < e->ndev; d++)
		if (bytes[d] > best)
			best = bytes[d];
	for (d = 0; best && d < e->ndev; d++)
		if (bytes[d] == best)
			mask |= 1U << d;
	return mask;
}

static double migrate_threshold(const struct pd_engine *e)
{
	return e->cfg.migrate_threshold > 0.0 ? e->cfg.migrate_threshold :
						PD_MIGRATE_DEFAULT;
}

/*
 * Give @job device @d: off the queue, to the worker; or, when @claim,
 * to the calling helper (the worker is not woken).
 */
static void place_locked(struct pd_engine *e, struct pd_job *job, int d,
			 uint64_t now_ns, bool migrates, bool claim)
{
	struct pd_ptask_info *info = job->info;
	double wait = now_ns > job->queued_ns ?
		      (double)(now_ns - job->queued_ns) : 0.0;

	ptask_list_del(&job->node);
	if (e->nqueued-- == PD_QUEUE_MAX)
		pthread_cond_signal(&e->taker_cond);
	/* Placed after what it reads: one device runs them in that order. */
	if (job->after) {
		pd_job_put_locked(e, job->after);
		job->after = NULL;
	}
	info->avg_wait_ns = ema(info->avg_wait_ns, wait,
				info->avg_wait_ns == 0.0);
	e->avg_wait_ns = ema(e->avg_wait_ns, wait, e->avg_wait_ns == 0.0);
	if (migrates)
		e->stats.migrations++;
	job->dev = d;
	e->dev[d].job = job;
	if (claim) {
		e->dev[d].claimed = true;
		e->dev[d].self = pthread_self();
	} else {
		pthread_cond_signal(&e->dev[d].cond);
	}
}

/*
 * Place queued jobs on available devices.  Sets e->held to the number of jobs
 * data-aware kept back for a busy device, and wakes the housekeeper to
 * come back then.  With @claim, the first job placed on a device a
 * helper may hold is claimed for the caller: its device, else -1.
 */
static int dispatch_locked(struct pd_engine *e, bool claim)
{
	struct pd_job *order[PD_QUEUE_MAX + PTASK_TAKE_MAX_INVOCATIONS];
	uint32_t all = (e->ndev >= 32 ? ~0U : (1U << e->ndev) - 1);
	uint64_t now = pd_now_ns(), bytes[PD_MAX_DEVICES];
	int policy = e->cfg.policy;
	uint32_t n = 0, i, held = 0;
	struct ptask_list *pos;
	int claimed = -1;

	pd_assert_locked(e);
	/* Nothing to hold for: the next available device calls again. */
	e->held = 0;
	if (best_available(e, all, false) < 0 || ptask_list_empty(&e->queue))
		return -1;
	ptask_list_for_each(pos, &e->queue) {
		struct pd_job *job = ptask_list_entry(pos, struct pd_job,
						      node);

		if (n == sizeof(order) / sizeof(order[0]))
			break;
		/*
		 * Not placeable yet: left out before the sort, which a chain
		 * taken ahead (one placeable hop, the rest behind it) would
		 * otherwise pay for every hop.
		 */
		if (!after_placed_locked(e, job))
			continue;
		if (policy == PD_POLICY_PRIORITY ||
		    policy == PD_POLICY_DATA_AWARE)
			job->eff = effective_prio(e, job, now);
		order[n++] = job;
	}
	if (policy == PD_POLICY_PRIORITY || policy == PD_POLICY_DATA_AWARE)
		qsort(order, n, sizeof(order[0]), by_priority);
	for (i = 0; i < n; i++) {
		struct pd_job *job = order[i];
		uint32_t pref = preferred_devices(e, job, bytes);
		int d = -1;

		if (best_available(e, all, false) < 0)
			break;
		/* Behind a job placed in this pass: the next pass places it. */
		if (job->after && job->after->dev < 0)
			continue;
		switch (policy) {
		case PD_POLICY_FIRST_AVAILABLE:
			d = best_available(e, all, false);
			break;
		case PD_POLICY_DATA_AWARE:
			if (pref) {
				d = best_available(e, pref, true);
				if (d < 0 && !e->draining &&
				    job->eff <= migrate_threshold(e)) {
					held++;
					continue;
				}
			}
			if (d < 0)
				d = best_available(e, all, true);
			break;
		default:
			d = best_available(e, all, true);
			break;
		}
		if (pref && !(pref & (1U << d)))
			pd_log_debug("engine: ptask %u migrates to %s: eff %.1f, %llu input bytes there, %llu on its preferred device",
				     job->inv.ptask, e->be->info[d].name,
				     job->eff, (unsigned long long)bytes[d],
				     (unsigned long long)bytes[__builtin_ctz(pref)]);
		if (claim && claimed < 0 &&
		    pd_help_can_claim_locked(&e->dev[d], job)) {
			claimed = d;
			place_locked(e, job, d, now,
				     pref && !(pref & (1U << d)), true);
			continue;
		}
		place_locked(e, job, d, now,
			     pref && !(pref & (1U << d)), false);
	}
	e->held = held;
	if (held)
		pthread_cond_signal(&e->hk_cond);
	return claimed;
}

/**
 * pd_sched_dispatch_locked() - place queued jobs on available devices
 * @e: the engine
 *
 * Sets e->held to the number of jobs data-aware kept back for a busy
 * device, and wakes the housekeeper to come back then.
 */
void pd_sched_dispatch_locked(struct pd_engine *e)
{
	dispatch_locked(e, false);
}

int pd_sched_dispatch_claim_locked(struct pd_engine *e)
{
	return dispatch_locked(e, true);
}
