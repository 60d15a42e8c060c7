// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * engine.c - the engine's life (start, stop), the taker thread, the
 * ptask-info cache and the housekeeping thread.  engine_priv.h says how
 * the parts fit and what the lock covers.
 *
 * The taker takes invocations in batches (PTASK_TAKE_MAX_INVOCATIONS) and
 * turns each into a job: its ptask's info comes from the cache (one
 * EXEC_PTASK_INFO for the code size and one for the code, the first time
 * a ptask is seen; the geometry is read then and kept, so a
 * PTASK_IOC_PTASK_SET_GEOMETRY after a ptask first ran is not seen).
 * Only GPU ptasks have anything to run here: CPU ptasks run in their
 * clients (PTASK_PTASK_SELF); a CPU invocation that reaches the executor
 * has no code and no entry, so it is completed with -EOPNOTSUPP (which
 * fails its graph) and logged.  The taker stops taking while
 * PD_QUEUE_MAX jobs wait for placement, so invocations wait in the
 * namespace, where they stay visible to listings and budgets.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "daemon/backend/host.h"
#include "daemon/engine/engine_priv.h"
#include "daemon/mutex.h"

void pd_engine_assert_failed(const char *file, int line, const char *what)
{
	pd_log_err("engine: %s:%d: assertion failed: %s", file, line, what);
	abort();
}

/*
 * A condition variable on CLOCK_MONOTONIC (the clock of every deadline
 * here).  glibc's pthread_cond_init and its attribute calls cannot fail
 * for these arguments: asserted rather than unwound.
 */
static void cond_init(pthread_cond_t *cond)
{
	pthread_condattr_t attr;
	int err;

	err = pthread_condattr_init(&attr);
	if (!err)
		err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(cond, &attr);
	PD_ASSERT(!err);
	pthread_condattr_destroy(&attr);
}

void pd_engine_timedwait(struct pd_engine *e, pthread_cond_t *cond,
			 uint64_t deadline_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_ns / 1000000000ULL),
		.tv_nsec = (long)(deadline_ns % 1000000000ULL),
	};

	pd_assert_locked(e);
	e->locked = false;
	pthread_cond_timedwait(cond, &e->lock, &ts);
	e->lock_owner = pthread_self();
	e->locked = true;
}

static void info_free(struct pd_ptask_info *info)
{
	free(info->code);
	free(info);
}

void pd_info_put_locked(struct pd_engine *e, struct pd_ptask_info *info)
{
	pd_assert_locked(e);
	PD_ASSERT(info->refs > 0);
	if (!--info->refs) {
		PD_ASSERT(info->dead);
		info_free(info);
	}
}

/* Read ptask @handle's info and code from the source (no lock held). */
static int info_fetch(struct pd_engine *e, uint32_t handle,
		      struct pd_ptask_info **out)
{
	struct ptask_exec_ptask_info arg = {
		.size = sizeof(arg), .ptask = handle,
	};
	struct pd_ptask_info *info;
	int err;

	err = e->src->ops->ptask_info(e->src, &arg, NULL);
	if (err)
		return err;
	info = calloc(1, sizeof(*info));
	if (!info)
		return -ENOMEM;
	if (arg.code_len) {
		info->code = malloc(arg.code_len);
		if (!info->code) {
			err = -ENOMEM;
			goto err_free;
		}
		err = e->src->ops->ptask_info(e->src, &arg, info->code);
		if (err)
			goto err_free;
	}
	info->handle = handle;
	info->kind = arg.kind;
	info->nports = arg.nports;
	info->code_len = arg.code_len;
	info->shared_bytes = arg.shared_bytes;
	memcpy(info->grid, arg.grid, sizeof(info->grid));
	memcpy(info->block, arg.block, sizeof(info->block));
	memcpy(info->entry, arg.entry, sizeof(info->entry));
	info->entry[sizeof(info->entry) - 1] = '\0';
	info->refs = 1;			/* the cache's */
	*out = info;
	return 0;

err_free:
	info_free(info);
	return err;
}

static struct pd_ptask_info *info_find_locked(struct pd_engine *e,
					      uint32_t handle)
{
	struct pc_hash_node *n;

	pd_assert_locked(e);
	n = pc_hash_find(&e->infos, handle);
	return n ? pc_hash_entry(n, struct pd_ptask_info, hnode) : NULL;
}

/**
 * pd_info_fetch_private() - ptask @handle's info as it is now, uncached
 * @e: the engine
 * @handle: the ptask
 * @out: the info, with the caller's reference, already marked dead
 *
 * For prewarm.c, which fetches a ptask's info as soon as the client
 * opened it, before the client set its geometry: cached, that info
 * would give the ptask's jobs a stale geometry (nothing tells the cache
 * of a geometry set before the info was in it).  Marked dead, it is
 * freed with its last reference, and a kernel loaded for it is unloaded
 * at the next pd_space_kernel_get of its space.  No lock held.
 */
int pd_info_fetch_private(struct pd_engine *e, uint32_t handle,
			  struct pd_ptask_info **out)
{
	int err = info_fetch(e, handle, out);

	if (!err)
		(*out)->dead = true;
	return err;
}

/*
 * The info of ptask @handle with a reference for the caller.  The taker
 * and helpers fill the cache: when two fetched the same ptask at once,
 * the first one cached wins and the other copy is dropped.
 */
int pd_info_get(struct pd_engine *e, uint32_t handle,
		struct pd_ptask_info **out)
{
	struct pd_ptask_info *info, *cached;
	int err;

	pd_engine_lock(e);
	info = info_find_locked(e, handle);
	if (info) {
		info->refs++;
		pd_engine_unlock(e);
		*out = info;
		return 0;
	}
	pd_engine_unlock(e);
	err = info_fetch(e, handle, &info);
	if (err)
		return err;
	pd_engine_lock(e);
	cached = info_find_locked(e, handle);
	if (cached) {
		info_free(info);
		info = cached;
	} else {
		pc_hash_add(&e->infos, &info->hnode, handle);
	}
	info->refs++;
	pd_engine_unlock(e);
	*out = info;
	return 0;
}

static void job_free_now_locked(struct pd_engine *e, struct pd_job *job)
{
	uint32_t m;

	/* members[0].info is @info's reference */
	for (m = 1; m < job->nmembers; m++)
		if (job->members[m].info)
			pd_info_put_locked(e, job->members[m].info);
	if (job->info)
		pd_info_put_locked(e, job->info);
	free(job);
}

/*
 * The ptasks of a segment's records (PTASK_INV_SEGMENT): how many runs of
 * one @member there are, 0 if a run is empty or a link's two ends are
 * not where they belong (the last port records of one member and the
 * first of the next are not one FUSED output and one FUSED input).
 */
static uint32_t segment_members(const struct ptask_invocation_port *ports,
				uint32_t n)
{
	uint32_t i, m = 0, fused_out = 0, fused_in = 0;

	for (i = 0; i < n; i++) {
		bool fused = ports[i].flags & PTASK_INVP_FUSED;

		if (!ports[i].member)
			return 0;
		if (!i || ports[i].member != ports[i - 1].member)
			m++;
		if (fused && pd_port_is_input(&ports[i]))
			fused_in++;
		else if (fused)
			fused_out++;
	}
	return m > 1 && fused_in == m - 1 && fused_out == m - 1 ? m : 0;
}

/*
 * Fill @job->members from its records: one for a plain job; a batch's
 * (filled by job_make: each has its ptask's info); for a segment each
 * member's range and info (its kind checked).  Return: 0 or -errno (the
 * job fails).
 */
static int members_make(struct pd_engine *e, struct pd_job *job)
{
	uint32_t i, m = 0;
	int err;

	job->members[0].info = job->info;
	if (job->batch) {
		pd_engine_lock(e);
		for (m = 1; m < job->nmembers; m++) {
			job->members[m].info = job->info;
			job->info->refs++;
		}
		pd_engine_unlock(e);
		return 0;
	}
	job->members[0].nports = job->inv.n_ports;
	if (job->nmembers == 1)
		return 0;
	for (i = 1; i < job->inv.n_ports; i++) {
		if (job->ports[i].member == job->ports[i - 1].member)
			continue;
		job->members[m].nports = i - job->members[m].first;
		job->members[++m].first = i;
	}
	job->members[m].nports = job->inv.n_ports - job->members[m].first;
	/* the cached ones in one lock round (a 100-deep segment: 100) */
	pd_engine_lock(e);
	for (m = 1; m < job->nmembers; m++) {
		struct pd_member *mb = &job->members[m];

		mb->info = info_find_locked(e, job->ports[mb->first].member);
		if (mb->info)
			mb->info->refs++;
	}
	pd_engine_unlock(e);
	for (m = 1; m < job->nmembers; m++) {
		struct pd_member *mb = &job->members[m];

		if (!mb->info) {
			err = pd_info_get(e, job->ports[mb->first].member,
					  &mb->info);
			if (err)
				return err;
		}
		if (mb->info->kind != PTASK_KIND_GPU)
			return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * @job is done with (settled): it lets go of its upstream jobs, which
 * go once settled and unreferenced, and goes itself unless jobs
 * downstream still hold it (the last of them frees it).
 */
void pd_job_free_locked(struct pd_engine *e, struct pd_job *job)
{
	uint32_t i;

	pd_assert_locked(e);
	job->settled = true;
	for (i = 0; i < job->inv.n_ports; i++) {
		struct pd_job *u = job->jp[i].upstream;

		if (!u)
			continue;
		job->jp[i].upstream = NULL;
		pd_job_put_locked(e, u);
	}
	/* Failed while queued: it never was placed behind it. */
	if (job->after) {
		pd_job_put_locked(e, job->after);
		job->after = NULL;
	}
	if (!job->refs)
		job_free_now_locked(e, job);
}

void pd_job_put_locked(struct pd_engine *e, struct pd_job *job)
{
	pd_assert_locked(e);
	PD_ASSERT(job->refs);
	if (!--job->refs && job->settled)
		job_free_now_locked(e, job);
}

/**
 * pd_job_fail() - complete @job with error @status (fails its graph)
 * @e: the engine
 * @job: a job no device holds any more; freed here
 * @status: a negative errno
 * @defer: the helper's held-back wake-ups (pd_engine_help), or NULL
 *
 * Called without e->lock.  -ECANCELED from the source means the graph
 * went away first: nothing to report.
 */
void pd_job_fail(struct pd_engine *e, struct pd_job *job, int status,
		 struct pd_wake_defer *defer)
{
	struct ptask_exec_complete arg = {
		.size = sizeof(arg), .status = status,
	};
	uint32_t m, runs = pd_job_runs(job);
	int err;

	/* The core completed it ahead already: it is owed a settle. */
	if (job->inv.flags & PTASK_INV_AHEAD)
		arg.flags = PTASK_EXEC_COMPLETE_SETTLE;
	/* Counted first: whoever sees the completion sees it counted. */
	pd_engine_lock(e);
	e->stats.invocations += runs;
	e->stats.failed += runs;
	pd_engine_unlock(e);
	/* a batch's members each (the job's id is its first one's) */
	for (m = 0; m < runs; m++) {
		arg.id = job->batch ? job->members[m].id : job->inv.id;
		err = e->src->ops->complete(e->src, &arg, NULL, defer);
		if (err && err != -ECANCELED)
			pd_log_err("engine: failing invocation %llu of ptask %u: %d",
				   (unsigned long long)arg.id, job->inv.ptask,
				   err);
	}
	pd_engine_lock(e);
	pd_job_free_locked(e, job);
	pd_engine_unlock(e);
}

/*
 * Complete the @n invocations at @invs with @status at once (no job
 * could be made for them).  No lock held.
 */
static void invs_fail(struct pd_engine *e, const struct ptask_invocation *invs,
		      uint32_t n, int status, struct pd_wake_defer *defer)
{
	uint32_t k;

	for (k = 0; k < n; k++) {
		struct ptask_exec_complete fail = {
			.size = sizeof(fail), .id = invs[k].id,
			.status = status,
			.flags = invs[k].flags & PTASK_INV_AHEAD ?
				 PTASK_EXEC_COMPLETE_SETTLE : 0,
		};

		e->src->ops->complete(e->src, &fail, NULL, defer);
	}
}

/*
 * A job for the @n invocations at @invs (one, or a batch: @n of one
 * ptask, batchable), their port records in @ports (the take's), queued;
 * or, when they cannot run here, completed with an error at once (for
 * the helper whose @defer it is, or NULL).  No lock held.
 */
static void job_make(struct pd_engine *e, const struct ptask_invocation *invs,
		     uint32_t n, const struct ptask_invocation_port *ports,
		     struct pd_wake_defer *defer)
{
	const struct ptask_invocation *inv = &invs[0];
	size_t nports = 0, i;
	uint32_t members = n > 1 ? n :
			   inv->flags & PTASK_INV_SEGMENT ?
			   segment_members(&ports[inv->first_port],
					   inv->n_ports) : 1;
	struct pd_job *job;
	uint32_t k;
	int err;

	for (k = 0; k < n; k++)
		nports += invs[k].n_ports;
	job = calloc(1, sizeof(*job) + nports * sizeof(*job->ports) +
		     nports * sizeof(*job->jp) +
		     (members ? members : 1) * sizeof(*job->members));
	if (!job) {
		pd_log_err("engine: out of memory for invocation %llu",
			   (unsigned long long)inv->id);
		invs_fail(e, invs, n, -ENOMEM, defer);
		return;
	}
	job->inv = *inv;
	job->inv.n_ports = (uint32_t)nports;
	job->ports = (struct ptask_invocation_port *)(job + 1);
	job->jp = (struct pd_jport *)(job->ports + nports);
	job->members = (struct pd_member *)(job->jp + nports);
	job->nmembers = members ? members : 1;
	job->batch = n > 1;
	for (k = 0, i = 0; k < n; i += invs[k].n_ports, k++) {
		memcpy(&job->ports[i], &ports[invs[k].first_port],
		       invs[k].n_ports * sizeof(*ports));
		job->members[k].first = (uint32_t)i;
		job->members[k].nports = invs[k].n_ports;
		job->members[k].id = invs[k].id;
	}
	job->queued_ns = inv->queued_ns ? inv->queued_ns : pd_now_ns();
	job->dev = -1;
	/* The core completed it ahead (PTASK_TAKE_AHEAD): settled, never
	 * completed; its outputs are the core's datablocks. */
	job->ahead = job->taken_ahead = inv->flags & PTASK_INV_AHEAD;
	for (i = 0; i < nports; i++)
		if (pd_port_is_input(&job->ports[i]) &&
		    (job->ports[i].flags & PTASK_INVP_PENDING))
			job->pending_in = true;
	err = pd_info_get(e, inv->ptask, &job->info);
	if (err) {
		pd_log_err("engine: ptask %u: no info: %d", inv->ptask, err);
		pd_job_fail(e, job, err, defer);
		return;
	}
	if (inv->kind != PTASK_KIND_GPU || job->info->kind != PTASK_KIND_GPU) {
		pd_log_err("engine: ptask %u is a CPU ptask: it runs in its client (PTASK_PTASK_SELF), not in ptaskd",
			   inv->ptask);
		pd_job_fail(e, job, -EOPNOTSUPP, defer);
		return;
	}
	if (!members) {
		pd_log_err("engine: invocation %llu: a segment's port records do not make a run of ptasks",
			   (unsigned long long)inv->id);
		pd_job_fail(e, job, -EIO, defer);
		return;
	}
	err = members_make(e, job);
	if (err) {
		pd_log_err("engine: invocation %llu: a segment's member: %s",
			   (unsigned long long)inv->id,
			   err == -EOPNOTSUPP ? "not a GPU ptask" :
			   strerror(-err));
		pd_job_fail(e, job, err, defer);
		return;
	}
	pd_engine_lock(e);
	pd_sched_enqueue_locked(e, job);
	pd_engine_unlock(e);
}

bool pd_engine_take_refused(struct pd_engine *e, uint32_t flags)
{
	/* the newest flag first: a module that refuses one refuses it */
	if (flags & PTASK_TAKE_OUTPUTS) {
		pd_engine_lock(e);
		if (!e->no_outputs)
			pd_log_info("engine: the source refuses PTASK_TAKE_OUTPUTS: outputs are created one by one");
		e->no_outputs = true;
		pd_engine_unlock(e);
		return true;
	}
	if (flags & PTASK_TAKE_FUSE) {
		pd_engine_lock(e);
		if (!e->cfg.no_fuse)
			pd_log_info("engine: the source refuses PTASK_TAKE_FUSE: chains are taken ptask by ptask");
		e->cfg.no_fuse = true;
		pd_engine_unlock(e);
		return true;
	}
	if (flags & PTASK_TAKE_AHEAD) {
		pd_engine_take_ahead_refused(e);
		return true;
	}
	return false;
}

void pd_engine_take_ahead_refused(struct pd_engine *e)
{
	pd_engine_lock(e);
	if (!e->cfg.no_take_ahead)
		pd_log_info("engine: the source refuses PTASK_TAKE_AHEAD: chains are taken hop by hop");
	e->cfg.no_take_ahead = true;
	pd_engine_unlock(e);
}

/* Log the 1st, 2nd, 4th, 8th... failure, so a broken source is heard once. */
static void take_failed(struct pd_engine *e, int err)
{
	uint64_t n = ++e->take_errors;

	if (!(n & (n - 1)))
		pd_log_err("engine: take failed (%llu times): %s",
			   (unsigned long long)n, strerror(-err));
	pd_sleep_until(pd_now_ns() + 100ULL * 1000 * 1000);
}

/*
 * The administrator's policy (sysfs, netlink or ptaskctl sched) comes with
 * every take: enum ptask_policy, DEFAULT meaning ptaskd's own.
 */
static void apply_admin_policy(struct pd_engine *e, uint32_t admin)
{
	int want;

	pd_engine_lock(e);
	want = admin == PTASK_POLICY_DEFAULT || admin >= __PTASK_POLICY_MAX ?
	       e->own_policy : (int)admin - 1;
	if (want != e->cfg.policy) {
		pd_log_info("engine: policy %s -> %s (administrator)",
			    pd_policy_name(e->cfg.policy), pd_policy_name(want));
		e->cfg.policy = want;
	}
	pd_engine_unlock(e);
}

/* Are @inv's port records where it says, within the take's? */
static bool records_fit(const struct ptask_exec_take *take,
			const struct ptask_invocation *inv)
{
	return (inv->n_ports <= PTASK_MAX_PORTS ||
		(inv->flags & PTASK_INV_SEGMENT)) &&
	       inv->first_port <= take->n_ports &&
	       inv->n_ports <= take->n_ports - inv->first_port;
}

/*
 * DOC: Batches
 *
 * A stream of invocations of one GPU ptask (P1b: 64 pushes in flight)
 * comes from one take, which the core completed ahead one after another
 * (PTASK_TAKE_AHEAD: each made the next ready).  As one job each, every
 * invocation was placed, prepared, launched, fenced and settled on its
 * own: on an H200 (2026-11-27, perf at 8 kHz) the device's worker spent
 * about 17 us of CPU an invocation, of which the take, the placement,
 * the fence and the lock rounds around them were a third.  Consecutive
 * invocations of one take that the core completed ahead, of one ptask,
 * none a segment, with no in/out port and no input another invocation
 * completed ahead still writes (PTASK_INVP_PENDING: a chain's hop, which
 * the segments and the upstream links order), make one job instead, at
 * most PD_BATCH_MAX: its members' host mappings made in one call to the
 * source (prepare.c, map_batch), their launches held and flushed
 * together, so that batches of one size replay as one CUDA graph, then
 * one fence; each member is settled by its own id with its share of the
 * device time, and the ptask's averages learn a member's share
 * (pd_job_runs).  PTASKD_NO_BATCH=1 makes a job of each again.
 */
static bool batchable(const struct ptask_invocation *inv,
		      const struct ptask_invocation_port *ports)
{
	const struct ptask_invocation_port *p = &ports[inv->first_port];
	uint32_t i;

	if (!(inv->flags & PTASK_INV_AHEAD) ||
	    (inv->flags & PTASK_INV_SEGMENT) || inv->kind != PTASK_KIND_GPU)
		return false;
	for (i = 0; i < inv->n_ports; i++)
		if (p[i].member || (pd_port_is_input(&p[i]) &&
				    (p[i].flags & (PTASK_INVP_PENDING |
						   PTASK_PORT_INOUT))))
			return false;
	return true;
}

/**
 * pd_jobs_make() - jobs for the invocations one take returned
 * @e: the engine
 * @take: the take, as the source filled it in
 * @invs: its invocations
 * @ports: their port records
 * @defer: the helper's held-back wake-ups (pd_engine_help), NULL on the
 *	taker
 *
 * Applies the administrator's policy the take carried, checks that each
 * invocation's port records are where it says, and queues a job for it
 * (an invocation that cannot run here is completed with an error).
 * Placement is the caller's.  No lock held.
 */
void pd_jobs_make(struct pd_engine *e, const struct ptask_exec_take *take,
		  const struct ptask_invocation *invs,
		  const struct ptask_invocation_port *ports,
		  struct pd_wake_defer *defer)
{
	uint32_t i, j;

	apply_admin_policy(e, take->policy);
	for (i = 0; i < take->n_invocations; i = j) {
		const struct ptask_invocation *inv = &invs[i];

		j = i + 1;
		if (!records_fit(take, inv)) {
			pd_log_err("engine: invocation %llu: bad port records",
				   (unsigned long long)inv->id);
			/* one the core completed ahead is owed a settle */
			invs_fail(e, inv, 1, -EIO, defer);
			continue;
		}
		/* the ptask's next invocations, taken ahead behind it */
		if (!e->cfg.no_batch && batchable(inv, ports))
			while (j < take->n_invocations && j - i < PD_BATCH_MAX &&
			       invs[j].ptask == inv->ptask &&
			       invs[j].n_ports == inv->n_ports &&
			       records_fit(take, &invs[j]) &&
			       batchable(&invs[j], ports))
				j++;
		job_make(e, inv, j - i, ports, defer);
	}
}

static void *taker_main(void *arg)
{
	struct pd_engine *e = arg;
	struct ptask_invocation *invs;
	struct ptask_invocation_port *ports;

	invs = calloc(PTASK_TAKE_MAX_INVOCATIONS, sizeof(*invs));
	ports = calloc(PTASK_TAKE_MAX_PORTS, sizeof(*ports));
	if (!invs || !ports) {
		pd_log_err("engine: out of memory: taking nothing");
		goto out;
	}
	for (;;) {
		/*
		 * Not ahead where other threads take too: its take blocks,
		 * and while a take ahead is on its way to the queue, jobs
		 * reading what it carries wait (sched.c); the threads that
		 * take without blocking take ahead then (help.c).  Alone (the
		 * source's PD_SOURCE_ONE_TAKER), it may.
		 */
		struct ptask_exec_take take = {
			.size = sizeof(take),
			.flags = (e->src->ops->caps & PD_SOURCE_ONE_TAKER ?
				  pd_engine_take_flags(e) : 0) |
				 pd_engine_fuse_flag(e),
			.max_invocations = PTASK_TAKE_MAX_INVOCATIONS,
			.max_ports = PTASK_TAKE_MAX_PORTS,
		};
		bool stop;
		int err;

		pd_engine_lock(e);
		while (!e->stopping && e->nqueued >= PD_QUEUE_MAX)
			pd_engine_wait(e, &e->taker_cond);
		stop = e->stopping;
		pd_engine_unlock(e);
		if (stop)
			break;
		/*
		 * A bounded sleep: an interrupt lost to a race costs at most
		 * this much at stop.
		 */
		take.timeout_ns = pd_now_ns() + PD_TAKE_SLICE_NS;
		err = e->src->ops->take(e->src, &take, invs, ports, NULL);
		if (err == -ETIMEDOUT || err == -EINTR || err == -EAGAIN)
			continue;
		/* A module that predates a flag: without it, then. */
		if (err == -EINVAL && pd_engine_take_refused(e, take.flags))
			continue;
		if (err) {
			take_failed(e, err);
			continue;
		}
		pd_jobs_make(e, &take, invs, ports, NULL);
		pd_engine_lock(e);
		pd_sched_dispatch_locked(e);
		pd_engine_unlock(e);
	}
out:
	free(invs);
	free(ports);
	return NULL;
}

/*
 * The housekeeper: re-runs placement while data-aware holds jobs back
 * (their effective priority grows as they wait), and hands back
 * mappings queued by pd_engine_forget.
 */
static void *housekeeper_main(void *arg)
{
	struct pd_engine *e = arg;

	pd_engine_lock(e);
	while (!e->exiting) {
		uint64_t wait = e->held ? PD_HOLD_POLL_NS : PD_TAKE_SLICE_NS;

		/* Mappings to give back: within PD_UNMAP_DELAY_NS. */
		if (e->unmaps && wait > PD_UNMAP_DELAY_NS)
			wait = PD_UNMAP_DELAY_NS;
		e->hk_due_ns = pd_now_ns() + wait;
		pd_engine_timedwait(e, &e->hk_cond, e->hk_due_ns);
		if (e->held)
			pd_sched_dispatch_locked(e);
		/* Woken early for small ones: a while longer, for more. */
		if (e->unmaps && (pd_now_ns() >= e->hk_due_ns ||
				  e->unmap_bytes >= PD_UNMAP_BYTES_NOW)) {
			pd_engine_unlock(e);
			pd_views_flush_unmaps(e);
			pd_engine_lock(e);
		}
	}
	pd_engine_unlock(e);
	return NULL;
}

/* Tell every thread to return, and join those that started. */
static void threads_join(struct pd_engine *e, bool taker, bool housekeeper)
{
	uint32_t d;

	pd_engine_lock(e);
	e->stopping = true;
	e->exiting = true;
	pthread_cond_broadcast(&e->taker_cond);
	pthread_cond_broadcast(&e->hk_cond);
	pthread_cond_broadcast(&e->completer_cond);
	for (d = 0; d < e->ndev; d++)
		pthread_cond_broadcast(&e->dev[d].cond);
	pd_engine_unlock(e);
	if (taker) {
		e->src->ops->interrupt(e->src);
		pthread_join(e->taker, NULL);
	}
	for (d = 0; d < e->ndev; d++)
		if (e->dev[d].started)
			pthread_join(e->dev[d].thread, NULL);
	if (housekeeper)
		pthread_join(e->housekeeper, NULL);
	if (e->completer_started)
		pthread_join(e->completer, NULL);
}

/* Free what start made (threads joined, views dropped by the workers). */
static void engine_free(struct pd_engine *e)
{
	struct pc_hash_node *n;
	uint32_t d;

	pd_engine_lock(e);
	pd_views_free_all_locked(e);
	while ((n = pc_hash_pop(&e->infos))) {
		struct pd_ptask_info *info =
			pc_hash_entry(n, struct pd_ptask_info, hnode);

		info->dead = true;
		pd_info_put_locked(e, info);
	}
	pd_engine_unlock(e);
	pd_views_flush_unmaps(e);
	for (d = 0; d < e->ndev; d++)
		pthread_cond_destroy(&e->dev[d].cond);
	pthread_cond_destroy(&e->taker_cond);
	pthread_cond_destroy(&e->completer_cond);
	pthread_cond_destroy(&e->idle_cond);
	pthread_cond_destroy(&e->hk_cond);
	pthread_mutex_destroy(&e->lock);
	pthread_mutex_destroy(&e->forget_lock);
	free(e->forget_q);
	pc_hash_fini(&e->infos);
	pc_hash_fini(&e->recs);
	free(e);
}

/**
 * pd_engine_start() - start the taker, the housekeeper, the completion
 * thread and a worker per device
 * @src: the source (kept; must outlive the engine)
 * @be: an initialised backend (kept; must outlive the engine)
 * @cfg: the configuration (copied); migrate_threshold 0 means the
 *	default (sched.c)
 * @out: the engine
 *
 * Return: 0, -EINVAL (unknown policy, negative threshold, more than
 * PD_INFLIGHT_MAX in flight), -ENODEV (no device), -ENOMEM, or
 * pthread's -errno.
 */
int pd_engine_start(struct pd_source *src, struct pd_backend *be,
		    const struct pd_engine_config *cfg,
		    struct pd_engine **out)
{
	struct pd_engine *e;
	bool housekeeper = false;
	uint32_t d;
	int err;

	if (cfg->policy < 0 || cfg->policy >= __PD_POLICY_MAX ||
	    cfg->migrate_threshold < 0.0 ||
	    cfg->max_inflight > PD_INFLIGHT_MAX)
		return -EINVAL;
	if (!be->ndev || be->ndev > PD_MAX_DEVICES)
		return -ENODEV;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->src = src;
	e->be = be;
	e->cfg = *cfg;
	e->own_policy = cfg->policy;
	e->few_cores = sysconf(_SC_NPROCESSORS_ONLN) <= PD_FEW_CORES;
	/* Chains as before issue 12, to measure both in one run (P11). */
	if (getenv("PTASKD_NO_AHEAD"))
		e->cfg.no_ahead = true;
	if (getenv("PTASKD_NO_LONE_AHEAD"))
		e->cfg.no_lone_ahead = true;
	if (getenv("PTASKD_NO_HOLD"))
		e->cfg.no_hold = true;
	if (getenv("PTASKD_NO_TAKE_AHEAD"))
		e->cfg.no_take_ahead = true;
	if (getenv("PTASKD_NO_FUSE"))
		e->cfg.no_fuse = true;
	if (getenv("PTASKD_NO_BATCH"))
		e->cfg.no_batch = true;
	if (getenv("PTASKD_TIME_CONTENDED"))
		e->cfg.time_contended = true;
	if (getenv("PTASKD_NO_TURN_WAIT"))
		e->cfg.no_turn_wait = true;
	e->ndev = be->ndev;
	e->max_inflight = cfg->max_inflight ? cfg->max_inflight :
					      PD_INFLIGHT_DEFAULT;
	ptask_list_init(&e->queue);
	err = pc_hash_init(&e->recs, PD_REC_BUCKETS);
	if (err)
		goto err_free;
	err = pc_hash_init(&e->infos, PD_INFO_BUCKETS);
	if (err)
		goto err_fini_recs;
	err = pd_mutex_init_adaptive(&e->lock);
	if (err)
		goto err_fini_infos;
	err = -pthread_mutex_init(&e->forget_lock, NULL);
	if (err) {
		pthread_mutex_destroy(&e->lock);
		goto err_fini_infos;
	}
	cond_init(&e->hk_cond);
	cond_init(&e->idle_cond);
	cond_init(&e->taker_cond);
	cond_init(&e->completer_cond);
	for (d = 0; d < e->ndev; d++) {
		struct pd_device *dev = &e->dev[d];
		uint64_t memory = be->info[d].memory ? be->info[d].memory :
						       UINT64_MAX;

		dev->e = e;
		dev->index = d;
		ptask_list_init(&dev->spaces);
		ptask_list_init(&dev->lru);
		cond_init(&dev->cond);
		dev->limit = cfg->device_memory_limit &&
			     cfg->device_memory_limit < memory ?
			     cfg->device_memory_limit : memory;
		dev->inplace_max = cfg->inplace_set ? cfg->inplace_max :
				   be->info[d].inplace_max;
		if (!be->ops->host_device_ptr)
			dev->inplace_max = 0;
	}
	err = -pthread_create(&e->completer, NULL, pd_completer_main, e);
	if (err)
		goto err_threads;
	e->completer_started = true;
	/* Names for top -H and /proc/<pid>/task/<tid>/comm (15 chars). */
	pthread_setname_np(e->completer, "pd-complete");
	for (d = 0; d < e->ndev; d++) {
		char name[16];

		err = -pthread_create(&e->dev[d].thread, NULL, pd_worker_main,
				      &e->dev[d]);
		if (err)
			goto err_threads;
		e->dev[d].started = true;
		snprintf(name, sizeof(name), "pd-dev%u", d % 100u);
		pthread_setname_np(e->dev[d].thread, name);
	}
	err = -pthread_create(&e->housekeeper, NULL, housekeeper_main, e);
	if (err)
		goto err_threads;
	housekeeper = true;
	pthread_setname_np(e->housekeeper, "pd-house");
	err = -pthread_create(&e->taker, NULL, taker_main, e);
	if (err)
		goto err_threads;
	pthread_setname_np(e->taker, "pd-taker");
	pd_log_info("engine: %u device(s), policy %s, %s isolation, %u jobs in flight per device on %u lane(s), in place up to %llu bytes%s%s%s%s%s",
		    e->ndev, pd_policy_name(cfg->policy),
		    cfg->shared_isolation ? "shared" : "per-client",
		    e->max_inflight, be->info[0].lanes ? be->info[0].lanes : 1,
		    (unsigned long long)e->dev[0].inplace_max,
		    e->cfg.no_ahead ? ", chains not completed ahead" : "",
		    pd_engine_may_hold(e) ? ", chains' launches held" : "",
		    pd_engine_take_flags(e) ? ", chains taken ahead" : "",
		    pd_engine_fuse_flag(e) ? ", segments fused" : "",
		    e->cfg.no_batch ? ", no batches" : "");
	*out = e;
	return 0;

err_threads:
	threads_join(e, false, housekeeper);
	engine_free(e);
	return err;
err_fini_infos:
	pc_hash_fini(&e->infos);
err_fini_recs:
	pc_hash_fini(&e->recs);
err_free:
	free(e);
	return err;
}

/*
 * The jobs each lane index ran, all spaces together, where any did: a
 * lane past 0 gets work only while the lower ones have some in flight
 * (prepare.c, "Lanes"), so this says how parallel the work was.
 * Locked.
 */
static void log_lanes_locked(struct pd_engine *e)
{
	char buf[PD_MAX_LANES * 24] = "";
	size_t len = 0;
	uint32_t l;

	pd_assert_locked(e);
	for (l = 0; l < PD_MAX_LANES && len < sizeof(buf); l++) {
		int n;

		if (!e->stats.per_lane[l])
			continue;
		n = snprintf(buf + len, sizeof(buf) - len, "%s%u: %llu",
			     len ? ", " : "", l,
			     (unsigned long long)e->stats.per_lane[l]);
		if (n < 0)
			break;
		len += (size_t)n;
	}
	if (len)
		pd_log_info("engine: jobs per lane: %s", buf);
}

/**
 * pd_engine_stop() - finish everything taken, then stop
 * @e: the engine
 *
 * The taker stops first; every job it made still runs (placement holds
 * nothing back any more) and completes, those in flight included (the
 * completion thread completes them); then the workers write back what
 * only their devices hold, free their spaces and return.  The source must
 * not call pd_engine_forget any more once this returns.
 */
void pd_engine_stop(struct pd_engine *e)
{
	uint32_t d;
	bool busy;

	pd_engine_lock(e);
	e->stopping = true;
	pthread_cond_broadcast(&e->taker_cond);
	pd_engine_unlock(e);
	e->src->ops->interrupt(e->src);
	pthread_join(e->taker, NULL);
	pd_engine_lock(e);
	e->draining = true;
	for (;;) {
		pd_sched_dispatch_locked(e);
		busy = e->nqueued > 0 || e->ninflight > 0;
		for (d = 0; d < e->ndev; d++)
			busy |= e->dev[d].job != NULL;
		if (!busy)
			break;
		pd_engine_wait(e, &e->idle_cond);
	}
	pd_log_info("engine: stopped: %llu invocations, %llu completed ahead, %llu failed; %llu launches held, %llu flushes, %llu replayed; %llu taken ahead; %llu segments of %llu ptasks; %llu batches of %llu invocations; %llu launches under contention, %llu of them sampled out of timing; %llu waits for a device's turn, %llu claimed after",
		    (unsigned long long)e->stats.invocations,
		    (unsigned long long)e->stats.ahead,
		    (unsigned long long)e->stats.failed,
		    (unsigned long long)e->stats.held,
		    (unsigned long long)e->stats.flushes,
		    (unsigned long long)e->stats.replays,
		    (unsigned long long)e->stats.taken_ahead,
		    (unsigned long long)e->stats.segments,
		    (unsigned long long)e->stats.fused,
		    (unsigned long long)e->stats.batches,
		    (unsigned long long)e->stats.batched,
		    (unsigned long long)e->stats.contended,
		    (unsigned long long)e->stats.contended_untimed,
		    (unsigned long long)e->stats.turn_waits,
		    (unsigned long long)e->stats.turn_claims);
	log_lanes_locked(e);
	pd_engine_unlock(e);
	threads_join(e, false, true);
	engine_free(e);
}

int pd_engine_set_policy(struct pd_engine *e, int policy)
{
	if (policy < 0 || policy >= __PD_POLICY_MAX)
		return -EINVAL;
	pd_engine_lock(e);
	if (e->cfg.policy != policy)
		pd_log_info("engine: policy %s -> %s",
			    pd_policy_name(e->cfg.policy),
			    pd_policy_name(policy));
	e->cfg.policy = policy;
	e->own_policy = policy;
	pd_sched_dispatch_locked(e);
	pd_engine_unlock(e);
	return 0;
}

void pd_engine_get_stats(struct pd_engine *e, struct pd_engine_stats *st)
{
	pd_engine_lock(e);
	*st = e->stats;
	st->queued = e->nqueued;
	st->infos = e->infos.count;
	pd_engine_unlock(e);
}
