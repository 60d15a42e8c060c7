// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ns_user.c - user mode's shell of the core (see ns_user.h): the
 * namespace's life, its lock, clients, the call path and executor
 * wake-ups, and the OS shim functions of core/ptask_os.h that go with
 * them.  Datablock memory is in ns_buf.c, PTSched's timer thread in
 * ns_timer.c (as kmod/ has buf.c and sched_timer.c beside dev.c), the
 * executor source of this namespace in source_user.c.
 *
 * Locking: pd_ns.lock is the core's namespace lock.  It also protects the
 * arenas, the client list, the forget notifier, pd_ns.wake_defer and
 * every struct ptask_buf.  pd_ns.owner names the thread holding it, so
 * ptask_os_assert_locked() can check.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include "daemon/user/arena.h"
#include "daemon/log.h"
#include "daemon/mutex.h"
#include "daemon/user/ns_user_priv.h"

/* Does this thread hold @ns's lock?  (Cheap: for the hot path too.) */
static void assert_locked(struct pd_ns *ns)
{
	if (!ns->locked || !pthread_equal(ns->owner, pthread_self())) {
		pd_log_err("core called without the namespace lock");
		abort();
	}
}

void ptask_os_saturated(const char *what)
{
	static atomic_bool said;

	if (!atomic_exchange(&said, true))
		pd_log_err("core: a %s reference count saturated: it is kept for good",
			   what);
}

int ptask_os_warn(int cond, const char *file, int line, const char *what)
{
	if (cond)
		pd_log_err("core: PTASK_WARN_ON(%s) at %s:%d", what, file, line);
	return cond;
}

void *ptask_os_zalloc(size_t bytes)
{
	return calloc(1, bytes ? bytes : 1);
}

void ptask_os_free(void *p)
{
	free(p);
}

u64 ptask_os_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

/*
 * The core calls this under the namespace lock, so ns->wake_defer is the
 * lock holder's: an executor wake-up its call makes is held back there
 * (struct pd_wake_defer) rather than made.
 */
void ptask_os_client_wake(struct ptask_client *core)
{
	struct pd_client *c = core->os;
	struct pd_ns *ns;

	if (!c)
		return;
	ns = c->ns;
	assert_locked(ns);
	/* core->wake_seq moved anyway: a taker asleep sees it within
	 * PD_CANCEL_POLL_MS even if the wake-up were never made up for. */
	if (core->executor && ns->wake_defer) {
		ns->wake_defer->deferred = true;
		return;
	}
	pthread_cond_broadcast(&c->cond);
}

/*
 * Make the executor wake-ups the lock holder's call held back, now, and
 * keep holding back those it makes later.
 */
static void exec_wake_now_locked(struct pd_ns *ns)
{
	struct pd_wake_defer *defer = ns->wake_defer;

	assert_locked(ns);
	ns->wake_defer = NULL;
	ptask_core_exec_wake(&ns->core);
	ns->wake_defer = defer;
	if (defer)
		defer->deferred = false;
}

void pd_ns_wake_executor(struct pd_ns *ns)
{
	pd_ns_lock(ns);
	exec_wake_now_locked(ns);
	pd_ns_unlock(ns);
}

int pd_ns_exec_register(struct pd_client *c, uint32_t n_accels, uint32_t uid,
			int32_t pid)
{
	int err;

	pd_ns_lock(c->ns);
	err = ptask_core_exec_register(c->core, n_accels);
	if (!err) {
		err = pid >= 0 ?
		      ptask_core_exec_set_process(c->core, uid, pid) :
		      ptask_core_exec_set_uid(c->core, uid);
		if (err)
			ptask_core_exec_unregister(c->core);
	}
	/* its outputs are written whole by the device, as the engine's */
	if (!err)
		c->alloc_zero = false;
	pd_ns_unlock(c->ns);
	return err;
}

void ptask_os_event(struct ptask_ns *core_ns, u32 event, u32 obj_type,
		    u32 handle)
{
	struct pd_ns *ns = core_ns->os;

	pd_log_debug("event %u on object %u (type %u)", event, handle, obj_type);
	/*
	 * A ptask died: the engine drops its cached info and, lazily, its
	 * loaded kernels (core/forgotten.c: what kernel mode's executors
	 * read from their notice queue).
	 */
	if (event == PTASK_EVENT_DESTROYED && obj_type == PTASK_OBJ_PTASK &&
	    ns->forget)
		ns->forget(ns->forget_arg, handle);
}

void ptask_os_assert_locked(struct ptask_ns *core_ns)
{
	assert_locked(core_ns->os);
}

void pd_ns_lock(struct pd_ns *ns)
{
	pthread_mutex_lock(&ns->lock);
	ns->owner = pthread_self();
	ns->locked = true;
}

void pd_ns_lock_deferring(struct pd_ns *ns, struct pd_wake_defer *defer)
{
	pd_ns_lock(ns);
	ns->wake_defer = defer;
}

void pd_ns_unlock(struct pd_ns *ns)
{
	ns->wake_defer = NULL;
	ns->locked = false;
	pthread_mutex_unlock(&ns->lock);
}

/*
 * Wait on @c's condition variable, the lock held; false at @deadline.
 * No wake-up is held back for the sleeping call (pd_ns.wake_defer
 * cleared): other threads take the lock meanwhile.
 */
static bool wait_slice(struct pd_client *c, u64 deadline)
{
	struct pd_ns *ns = c->ns;
	struct pd_wake_defer *defer = ns->wake_defer;
	u64 now = ptask_os_now_ns();
	u64 until = now + PD_CANCEL_POLL_MS * 1000000ull;
	struct timespec ts;

	if (deadline && deadline <= now)
		return false;
	if (deadline && deadline < until)
		until = deadline;
	ts.tv_sec = (time_t)(until / 1000000000ull);
	ts.tv_nsec = (long)(until % 1000000000ull);
	ns->wake_defer = NULL;
	ns->locked = false;
	pthread_cond_timedwait(&c->cond, &ns->lock, &ts);
	ns->owner = pthread_self();
	ns->locked = true;
	ns->wake_defer = defer;
	return true;
}

/*
 * Record-stream tunnels' defaults (core/tunnel.c) from the devices' copy
 * curve: each device's inplace_max is where its copy stops costing less
 * than its fixed cost (cuda: measured at init; sim: modelled), the knee
 * ptask_core_tunnel_calibrate() wants; the smallest of them, so a batch
 * amortizes the copy on every device.  A backend without copies (cpu:
 * UINT64_MAX) or without a measurement (0) leaves the uapi's defaults.
 * ptaskd's --inplace-max does not change it: it is the engine's.
 */
static void tunnel_calibrate(struct pd_ns *ns, const struct pd_backend *be)
{
	uint64_t knee = 0;

	for (uint32_t d = 0; d < be->ndev; d++) {
		uint64_t m = be->info[d].inplace_max;

		if (m && m != UINT64_MAX && (!knee || m < knee))
			knee = m;
	}
	pd_ns_lock(ns);
	ptask_core_tunnel_calibrate(&ns->core, knee, 0);
	if (knee)
		pd_log_info("tunnels: default threshold %llu bytes (copy knee %llu), timeout %llu us",
			    (unsigned long long)ns->core.tunnel.default_bytes,
			    (unsigned long long)knee,
			    (unsigned long long)ns->core.tunnel.default_timeout_ns / 1000);
	pd_ns_unlock(ns);
}

int pd_ns_create(struct pd_backend *be, struct pd_ns **out)
{
	struct pd_ns *ns;
	int err;

	ns = calloc(1, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	err = ptask_core_ns_init(&ns->core, ns);
	if (err)
		goto err_free;
	err = pd_mutex_init_adaptive(&ns->lock);
	if (err)
		goto err_ns;
	err = pd_ns_timer_start(ns);
	if (err)
		goto err_mutex;
	pd_arenas_init(&ns->arenas, be, PD_ARENA_BYTES);
	/* No backend (executors per uid): the uapi's tunnel defaults. */
	if (be)
		tunnel_calibrate(ns, be);
	*out = ns;
	return 0;

err_mutex:
	pthread_mutex_destroy(&ns->lock);
err_ns:
	ptask_core_ns_destroy(&ns->core);
err_free:
	free(ns);
	return err;
}

void pd_ns_destroy(struct pd_ns *ns)
{
	pd_ns_timer_stop(ns);
	pd_ns_lock(ns);
	while (ns->nclients) {
		struct pd_client *c = ns->clients[ns->nclients - 1];

		c->conns = 1;
		pd_ns_unlock(ns);
		pd_ns_client_put(c);
		pd_ns_lock(ns);
	}
	ptask_core_ns_destroy(&ns->core);
	pd_arenas_fini(&ns->arenas);
	pd_ns_unlock(ns);
	pthread_mutex_destroy(&ns->lock);
	free(ns->clients);
	free(ns);
}

static int clients_add(struct pd_ns *ns, struct pd_client *c)
{
	struct pd_client **grown;

	grown = realloc(ns->clients, (ns->nclients + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	ns->clients = grown;
	ns->clients[ns->nclients++] = c;
	return 0;
}

static void clients_remove(struct pd_ns *ns, struct pd_client *c)
{
	uint32_t i;

	for (i = 0; i < ns->nclients; i++) {
		if (ns->clients[i] == c) {
			ns->clients[i] = ns->clients[--ns->nclients];
			return;
		}
	}
}

int pd_ns_client_open(struct pd_ns *ns, const struct ptask_caller *who,
		      struct pd_client **out)
{
	pthread_condattr_t attr;
	struct pd_client *c;
	int err;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	err = -pthread_cond_init(&c->cond, &attr);
	pthread_condattr_destroy(&attr);
	if (err)
		goto err_free;
	while (!c->token)	/* unguessable: attaching needs it (and the pid) */
		if (getrandom(&c->token, sizeof(c->token), 0) != sizeof(c->token)) {
			err = -errno;
			goto err_cond;
		}
	c->ns = ns;
	c->pid = who->pid;
	c->uid = who->uid;
	c->alloc_uid = who->uid;
	c->alloc_zero = true;
	c->conns = 1;
	pd_ns_lock(ns);
	c->core = ptask_core_client_create(&ns->core, c);
	if (c->core)
		c->core->uid = who->uid;	/* who pays for its datablocks */
	err = c->core ? clients_add(ns, c) : -ENOMEM;
	if (err && c->core)
		ptask_core_client_destroy(c->core);
	pd_ns_unlock(ns);
	if (err)
		goto err_cond;
	*out = c;
	return 0;

err_cond:
	pthread_cond_destroy(&c->cond);
err_free:
	free(c);
	return err;
}

int pd_ns_client_attach(struct pd_ns *ns, uint64_t token, int32_t pid,
			struct pd_client **out)
{
	int err = -ENOENT;
	uint32_t i;

	pd_ns_lock(ns);
	for (i = 0; i < ns->nclients; i++) {
		struct pd_client *c = ns->clients[i];

		if (c->token != token)
			continue;
		if (c->pid != pid) {
			err = -EPERM;
			break;
		}
		c->conns++;
		*out = c;
		err = 0;
		break;
	}
	pd_ns_unlock(ns);
	return err;
}

void pd_ns_client_put(struct pd_client *c)
{
	struct pd_ns *ns = c->ns;

	pd_ns_lock(ns);
	if (--c->conns) {
		pd_ns_unlock(ns);
		return;
	}
	clients_remove(ns, c);
	ptask_core_client_destroy(c->core);
	pd_ns_exec_holds_free_locked(c);
	pd_ns_unlock(ns);
	pthread_cond_destroy(&c->cond);
	free(c);
}

void pd_ns_set_call_spin(struct pd_ns *ns, uint64_t spin_ns)
{
	pd_ns_lock(ns);
	ns->call_spin_ns = spin_ns;
	pd_ns_unlock(ns);
}

/*
 * Poll @c's wake_seq for a change from @seq for up to call_spin_ns, the
 * lock dropped (as wait_slice drops it).  wake_seq is written under the
 * lock; an atomic load of it is all this needs to see it move.
 */
static bool spin_for_wake(struct pd_client *c, u64 seq)
{
	struct pd_ns *ns = c->ns;
	struct pd_wake_defer *defer = ns->wake_defer;
	u64 deadline = ptask_os_now_ns() + ns->call_spin_ns;
	bool moved;

	ns->wake_defer = NULL;
	ns->locked = false;
	pthread_mutex_unlock(&ns->lock);
	do {
		sched_yield();
		moved = __atomic_load_n(&c->core->wake_seq, __ATOMIC_RELAXED) != seq;
	} while (!moved && ptask_os_now_ns() < deadline);
	pthread_mutex_lock(&ns->lock);
	ns->owner = pthread_self();
	ns->locked = true;
	ns->wake_defer = defer;
	return moved;
}

/*
 * pd_ns_call, the lock held: sleeps (wait_slice) while it would block.
 * It polls first (spin_for_wake) unless this kind of call waited longer
 * than the window last time (c->waits: a pull that waits for a frame of
 * a 30 fps pipeline burnt the whole window every time).
 */
static int call_locked(struct pd_client *c, const struct ptask_caller *who,
		       unsigned int cmd, void *arg,
		       const struct ptask_call_io *io, pd_cancel_fn cancel,
		       void *cancel_arg)
{
	u64 deadline = 0, seq, blocked = 0;
	bool may_block = ptask_core_args_blocking(cmd, arg, &deadline);
	unsigned int kind = pc_spin_kind(cmd);
	int err;

	for (;;) {
		c->core->waits_settle = false;
		err = ptask_core_call(c->core, who, cmd, arg, io);
		if (err != -EAGAIN || !may_block)
			break;
		if (!blocked)
			blocked = ptask_os_now_ns();
		/* Not while this thread sleeps: nobody would take the work. */
		if (c->ns->wake_defer && c->ns->wake_defer->deferred)
			exec_wake_now_locked(c->ns);
		seq = c->core->wake_seq;
		/*
		 * Not the executor's take: its sleep is off the critical path.
		 * A pull whose datablock's kernel is in flight polls whatever
		 * the last wait of its kind was: it will not wait a frame's
		 * time but a kernel's (P1b's 64 pulls behind their batches
		 * each slept and were woken by a futex, on an H200).
		 */
		if (c->ns->call_spin_ns && !c->core->executor &&
		    (c->core->waits_settle || pc_spin_worth(&c->waits, kind)) &&
		    spin_for_wake(c, seq))
			continue;
		while (c->core->wake_seq == seq) {
			if (!wait_slice(c, deadline)) {
				err = -ETIMEDOUT;
				goto out;
			}
			if (c->core->wake_seq == seq && cancel &&
			    cancel(cancel_arg)) {
				err = -EINTR;
				goto out;
			}
		}
	}
out:
	if (blocked && c->ns->call_spin_ns)
		pc_spin_learn(&c->waits, kind, ptask_os_now_ns() - blocked,
			      c->ns->call_spin_ns);
	return err;
}

int pd_ns_call(struct pd_client *c, const struct ptask_caller *who,
	       unsigned int cmd, void *arg, const struct ptask_call_io *io,
	       const struct pd_call_ctx *ctx)
{
	int err;

	pd_ns_lock_deferring(c->ns, ctx ? ctx->defer : NULL);
	err = call_locked(c, who, cmd, arg, io, ctx ? ctx->cancel : NULL,
			  ctx ? ctx->cancel_arg : NULL);
	/*
	 * A geometry set: the engine's cached info of the ptask (its grid
	 * and block) is dropped, its next job fetches it again.
	 */
	if (!err && c->ns->forget &&
	    _IOC_NR(cmd) == _IOC_NR(PTASK_IOC_PTASK_SET_GEOMETRY))
		c->ns->forget(c->ns->forget_arg,
			      ((const struct ptask_geometry *)arg)->ptask);
	/* A GPU ptask opened: its first invocation should find it ready. */
	if (!err && c->ns->opened &&
	    _IOC_NR(cmd) == _IOC_NR(PTASK_IOC_PTASK_OPEN)) {
		const struct ptask_ptask_open *po = arg;

		if (po->kind == PTASK_KIND_GPU)
			c->ns->opened(c->ns->opened_arg, po->handle, who->pid);
	}
	pd_ns_unlock(c->ns);
	return err;
}

int pd_ns_pull_ahead(struct pd_client *c, const struct ptask_caller *who,
		     struct ptask_pull *arg, const struct ptask_call_io *io,
		     uint64_t writer, bool *ahead, struct pd_wake_defer *defer)
{
	int err;

	pd_ns_lock_deferring(c->ns, defer);
	c->core->pull_ahead_of = writer;
	c->core->pulled_ahead = false;
	err = ptask_core_call(c->core, who, PTASK_IOC_PULL, arg, io);
	*ahead = !err && c->core->pulled_ahead;
	c->core->pull_ahead_of = 0;
	c->core->pulled_ahead = false;
	c->core->waits_settle = false;
	pd_ns_unlock(c->ns);
	return err;
}

int pd_ns_wait_unwritten(struct pd_client *c, uint32_t handle,
			 pd_cancel_fn cancel, void *cancel_arg)
{
	struct ptask_datablock *db;
	struct ptask_obj *o;
	int err = 0;

	pd_ns_lock(c->ns);
	for (;;) {
		o = ptask_core_ns_find(&c->ns->core, handle,
				       PTASK_OBJ_DATABLOCK);
		db = o ? ptask_container_of(o, struct ptask_datablock, obj) :
			 NULL;
		if (!db || !db->writer)
			break;
		/* a settle wakes the graph's clients; else the next slice */
		wait_slice(c, 0);
		if (cancel && cancel(cancel_arg)) {
			err = -EINTR;
			break;
		}
	}
	pd_ns_unlock(c->ns);
	return err;
}

void pd_ns_complete_many(struct pd_client *c, const struct ptask_caller *who,
			 struct ptask_exec_complete *arg, const uint64_t *ids,
			 uint32_t n, struct pd_wake_defer *defer, int *errs)
{
	struct ptask_call_io io = { 0 };
	uint32_t i;

	pd_ns_lock_deferring(c->ns, defer);
	for (i = 0; i < n; i++) {
		arg->id = ids[i];
		errs[i] = call_locked(c, who, PTASK_IOC_EXEC_COMPLETE, arg,
				      &io, NULL, NULL);
	}
	pd_ns_unlock(c->ns);
}

void pd_ns_counts(struct pd_ns *ns, u64 counts[__PTASK_COUNT_MAX])
{
	pd_ns_lock(ns);
	memcpy(counts, ns->core.counts, sizeof(ns->core.counts));
	pd_ns_unlock(ns);
}

int pd_ns_sched_set(struct pd_ns *ns, uint32_t mask,
		    const struct ptask_sched_params *p)
{
	int err;

	pd_ns_lock(ns);
	err = ptask_core_sched_set(&ns->core, mask, p);
	pd_ns_unlock(ns);
	return err;
}

void pd_ns_uid_limit_set(struct pd_ns *ns, uint64_t bytes)
{
	pd_ns_lock(ns);
	ptask_core_uid_limit_set(&ns->core, bytes);
	pd_ns_unlock(ns);
}

void pd_ns_uid_usage(struct pd_ns *ns, uint32_t uid,
		     struct ptask_uid_usage_info *out)
{
	pd_ns_lock(ns);
	ptask_core_uid_usage(&ns->core, uid, out);
	pd_ns_unlock(ns);
}
