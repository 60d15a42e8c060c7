// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * prewarm.c - a GPU ptask made ready before its first invocation.
 *
 * With per-client isolation a client's first invocation used to open
 * the client's space (a CUDA context: about 70 ms on an H200) and load
 * the ptask's module, so the first frames of the gesture demo waited
 * 70 ms and more, and its real-time p99 latency was 74 ms against
 * handcode's 4 ms, which makes its context while it sets up.  Now the
 * namespace tells the engine when a client opens a GPU ptask
 * (pd_ns_set_opened, user mode), and a device's worker makes the
 * client's space and loads the kernel between jobs, while the client
 * is still building its graph: the set-up pays, as a hand-written
 * program's does.
 *
 * Which device: the one where the client has a space (or a request
 * queued), else the one with the fewest spaces (placement has not
 * happened yet; a client that runs on another device still pays its
 * first use there, as before).  One device only, since a space costs
 * device memory (a context: hundreds of MB).  A space made ahead and
 * never used is closed like any idle one (space_idle_ms).  Requests
 * beyond PD_PREWARM_MAX queued are dropped (a cold start, no error);
 * any failure is only logged (-vv): the first invocation meets it again
 * and reports it.  The info fetched here is not cached (the client sets
 * the ptask's geometry after opening it): the first job fetches its own
 * and finds the module loaded (the backend keeps a space's modules by
 * code), so what it saves is the context and the module's JIT, not the
 * function lookup.  Kernel mode: ptask.ko tells ptaskd of no ptask
 * opened, so nothing is made ahead there.
 *
 * Locking: e->prewarm and e->nprewarm under e->lock.  The worker drops
 * the lock while it opens the space and loads the kernel, holding the
 * device as when it tidies (dev->tidying: no helper claims it).
 */
#include <errno.h>
#include <string.h>
#include "daemon/backend/host.h"
#include "daemon/engine/engine_priv.h"

/*
 * Where @owner's ptasks are made ready: the device a request of the
 * same owner is queued for, else one where it has a space, else the
 * device with the fewest spaces (the first of equals).
 */
static uint32_t device_for_locked(struct pd_engine *e, uint64_t owner)
{
	uint32_t d, i, best = 0, best_n = UINT32_MAX;

	pd_assert_locked(e);
	for (i = 0; i < e->nprewarm; i++)
		if (e->prewarm[i].owner == owner)
			return e->prewarm[i].dev;
	for (d = 0; d < e->ndev; d++) {
		struct ptask_list *pos;
		uint32_t n = 0;

		ptask_list_for_each(pos, &e->dev[d].spaces) {
			const struct pd_space *s = ptask_list_entry(pos,
					struct pd_space, node);

			if (s->owner == owner)
				return d;
			n++;
		}
		if (n < best_n) {
			best_n = n;
			best = d;
		}
	}
	return best;
}

void pd_engine_prewarm(struct pd_engine *e, uint32_t ptask,
		       int32_t owner_pid)
{
	struct pd_prewarm *pw;
	uint64_t owner;
	uint32_t i, dev;

	pd_engine_lock(e);
	if (e->stopping || !e->ndev)
		goto out;
	for (i = 0; i < e->nprewarm; i++)
		if (e->prewarm[i].ptask == ptask)
			goto out;
	if (e->nprewarm == PD_PREWARM_MAX) {
		pd_log_debug("engine: ptask %u not made ready ahead: %u queued",
			     ptask, PD_PREWARM_MAX);
		goto out;
	}
	/* the same key as pd_sched_owner gives the ptask's jobs */
	owner = e->cfg.shared_isolation ? 0 : (uint64_t)(uint32_t)owner_pid;
	dev = device_for_locked(e, owner);
	pw = &e->prewarm[e->nprewarm++];
	pw->ptask = ptask;
	pw->owner = owner;
	pw->dev = dev;
	pthread_cond_signal(&e->dev[pw->dev].cond);
out:
	pd_engine_unlock(e);
}

/**
 * pd_prewarm_one_locked() - make one ptask queued for @dev ready
 * @dev: the device, on its worker, which has no job to submit
 *
 * Opens the space of the ptask's owner (or the shared one) and loads
 * the ptask's kernel in it, as the first job would (pd_job_run).
 * Locked on entry and exit; dropped meanwhile.
 *
 * Return: false when nothing was queued for @dev.
 */
bool pd_prewarm_one_locked(struct pd_device *dev)
{
	struct pd_engine *e = dev->e;
	struct pd_ptask_info *info = NULL;
	struct pd_space *space = NULL;
	struct pd_prewarm pw;
	void *kernel = NULL;
	uint64_t owner;
	uint32_t i;
	int err;

	pd_assert_locked(e);
	for (i = 0; i < e->nprewarm; i++)
		if (e->prewarm[i].dev == dev->index)
			break;
	if (i == e->nprewarm)
		return false;
	pw = e->prewarm[i];
	memmove(&e->prewarm[i], &e->prewarm[i + 1],
		(e->nprewarm - i - 1) * sizeof(pw));
	e->nprewarm--;
	owner = pw.owner;
	dev->self = pthread_self();
	dev->tidying = true;
	pd_engine_unlock(e);
	/* not cached: the client may set the geometry after this fetch */
	err = pd_info_fetch_private(e, pw.ptask, &info);
	if (!err && info->kind != PTASK_KIND_GPU)
		err = -EINVAL;
	if (!err)
		err = pd_space_get(dev, owner, &space);
	if (!err)
		err = pd_space_kernel_get(dev, space, info, &kernel);
	pd_engine_lock(e);
	dev->tidying = false;
	if (info)
		pd_info_put_locked(e, info);
	if (err)
		pd_log_debug("engine: %s: ptask %u not made ready ahead: %d",
			     e->be->info[dev->index].name, pw.ptask, err);
	else
		e->stats.prewarmed++;
	/* a job placed meanwhile waited for the device */
	return true;
}
