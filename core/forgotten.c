// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * forgotten.c - datablock and ptask death notices for executors
 * (PTASK_IOC_EXEC_FORGOTTEN).
 *
 * DOC: Death notices
 *
 * An executor keeps device copies of the datablocks it ran on, keyed by
 * handle.  When such a datablock dies, the copies are garbage: in user
 * mode ptaskd hears it at once through the namespace's forget notifier,
 * in the same process.  An executor of the kernel module is another
 * process, so each one that asked (ptask_core_exec_forgotten_enable(),
 * the module's registration) gets a queue of the handles of the
 * datablocks that died among those an executor was ever handed
 * (ptask_datablock.executor_seen: an input or output of an invocation
 * taken, or one an executor made), and reads it with EXEC_FORGOTTEN.
 *
 * The queue is a ring of PTASK_FORGOTTEN_MAX handles allocated at
 * registration, so a notice never allocates (a datablock dies on paths
 * that cannot fail).  Past that, notices are dropped and counted: the
 * executor's copies then stay until evicted, which is what happened
 * before there were notices, so a slow executor costs memory, never a
 * wrong result.  The first notice into an empty queue wakes the
 * executor (poll: EPOLLPRI); later ones do not, so a burst of deaths is
 * one wake-up.  All under the namespace lock.
 *
 * Ptasks die too, and an executor caches what it read of one (its info
 * and code, and a kernel loaded in each context that ran it): the
 * handles of dead ptasks an executor read (ptask_ptask.executor_seen,
 * set by EXEC_PTASK_INFO) go into the same queue; handles of datablocks
 * and ptasks never collide while both live, and an executor forgets
 * whatever it has under the handle.  Without it, every ptask a client
 * ever opened stayed cached: the soak benchmark's ptaskd grew by 120 MiB
 * and slowed by 4% a minute over 10 minutes (2026-12-07), as its
 * per-context kernel lists grew.  In user mode the same notice goes to
 * the namespace's forget notifier (ptask_os_event, PTASK_EVENT_DESTROYED).
 */
#include "ptask_core.h"

/**
 * ptask_core_exec_forgotten_enable() - give executor @c a notice queue
 * @c: a registered executor
 *
 * Return: 0, -ENOENT (not an executor), -EALREADY, or -ENOMEM.
 */
int ptask_core_exec_forgotten_enable(struct ptask_client *c)
{
	ptask_os_assert_locked(c->ns);
	if (!c->executor)
		return -ENOENT;
	if (c->forgotten)
		return -EALREADY;
	c->forgotten = ptask_os_zalloc(sizeof(*c->forgotten) *
				       PTASK_FORGOTTEN_MAX);
	if (!c->forgotten)
		return -ENOMEM;
	c->forgotten_head = 0;
	c->forgotten_count = 0;
	c->forgotten_lost = 0;
	c->ns->forgotten_queues++;
	ptask_list_add_tail(&c->forgotten_node, &c->ns->forgotten_clients);
	return 0;
}

/**
 * ptask_forgotten_free() - @c stops being an executor: drop its queue
 * @c: the client
 */
void ptask_forgotten_free(struct ptask_client *c)
{
	if (!c->forgotten)
		return;
	c->ns->forgotten_queues--;
	ptask_list_del(&c->forgotten_node);
	ptask_os_free(c->forgotten);
	c->forgotten = NULL;
	c->forgotten_count = 0;
}

/**
 * ptask_forgotten_note() - datablock or ptask @handle died: tell the
 *	executors
 * @ns: the namespace
 * @handle: its handle (no longer findable)
 */
void ptask_forgotten_note(struct ptask_ns *ns, u32 handle)
{
	struct ptask_list *pos;

	ptask_os_assert_locked(ns);
	/* No queue (user mode, or no executor yet): nothing to walk. */
	if (!ns->forgotten_queues)
		return;
	/* the executors with a queue alone, not every client */
	ptask_list_for_each(pos, &ns->forgotten_clients) {
		struct ptask_client *c = ptask_list_entry(pos,
				struct ptask_client, forgotten_node);

		if (c->forgotten_count == PTASK_FORGOTTEN_MAX) {
			c->forgotten_lost++;
			continue;
		}
		c->forgotten[(c->forgotten_head + c->forgotten_count) %
			     PTASK_FORGOTTEN_MAX] = handle;
		if (!c->forgotten_count++)
			ptask_client_wake(c);
	}
}

/**
 * ptask_core_exec_forgotten() - PTASK_IOC_EXEC_FORGOTTEN
 * @c: the caller
 * @arg: the checked argument; @arg->n_handles, @lost, @pending set
 * @io: io->forgotten: room for @arg->max_handles (capped at
 *	PTASK_FORGOTTEN_MAX) handles, copied out by the shell
 *
 * The notices handed out leave the queue here: a shell whose copy out
 * fails loses them (the executor's copies stay until evicted).
 *
 * Return: 0 or -EPERM (not an executor).
 */
int ptask_core_exec_forgotten(struct ptask_client *c,
			      struct ptask_exec_forgotten *arg,
			      const struct ptask_call_io *io)
{
	u32 max = arg->max_handles, n = 0;

	ptask_os_assert_locked(c->ns);
	if (!c->executor)
		return -EPERM;
	if (max > PTASK_FORGOTTEN_MAX)
		max = PTASK_FORGOTTEN_MAX;
	while (c->forgotten && n < max && c->forgotten_count) {
		io->forgotten[n++] = c->forgotten[c->forgotten_head];
		c->forgotten_head = (c->forgotten_head + 1) %
				    PTASK_FORGOTTEN_MAX;
		c->forgotten_count--;
	}
	arg->n_handles = n;
	arg->lost = c->forgotten_lost;
	c->forgotten_lost = 0;
	arg->pending = c->forgotten_count;
	return 0;
}
