// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * source_kernel.c - the kernel-mode source: EXEC_TAKE / EXEC_COMPLETE on
 * a registered /dev/ptask fd, datablocks mmapped from ptask.ko.  The
 * design (how take sleeps, how interrupt wakes it, the mapping cache) is
 * at the top of source_kernel.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* ppoll */
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "common/genl.h"
#include "common/hash.h"
#include "daemon/kernel/source_kernel.h"
#include "daemon/kernel/netlink.h"
#include "daemon/log.h"

#define KSRC_HASH		256	/* buckets the mapping table starts with */
/*
 * After poll says the fd is readable, a blocking take waits at most this
 * long: readiness that does not lead to a take (another taker won the
 * race) then costs a bounded sleep instead of a busy loop, and bounds
 * the latency of interrupt in that corner.
 */
#define KSRC_TAKE_SLICE_NS	(100ULL * 1000 * 1000)
#define NS_PER_MS		1000000ULL

/*
 * struct kmap - one mapping of one datablock
 * @handle: the datablock
 * @refs: db_map/db_create users that did not db_unmap yet; 0: idle
 * @doomed: the engine released the datablock: unmap when idle
 * @offset: its mmap offset (a hit must match it)
 * @len: the mapped length
 * @addr: the mapping
 * @idle_ns: when it went idle (CLOCK_MONOTONIC)
 * @node: its place in the mapping table, keyed by @handle
 * @vnext: next on a list of victims (see evict_locked())
 * @prev, @next: the idle list (oldest first) while @refs is 0
 */
struct kmap {
	uint32_t handle;
	uint32_t refs;
	bool doomed;
	uint64_t offset;
	uint64_t len;
	void *addr;
	uint64_t idle_ns;
	struct pc_hash_node node;
	struct kmap *vnext;
	struct kmap *prev, *next;
};

/*
 * struct ksrc - the source
 * @src: what the engine sees (first member)
 * @fd: the registered /dev/ptask fd
 * @efd: eventfd written by interrupt
 * @interrupted: interrupt was called (sticky)
 * @lock: protects @hash, @idle, @n_idle, @idle_bytes, @n_mapped
 * @hash: every mapping, by handle
 * @idle: sentinel of the idle list (idle.next: the oldest)
 * @n_idle, @idle_bytes: size of the idle list
 * @n_mapped: mappings alive
 * @st: counters (atomics; @st.mapped and @st.idle filled on read)
 */
struct ksrc {
	struct pd_source src;
	int fd;
	int efd;
	bool interrupted;
	pthread_mutex_t lock;
	struct pc_hash hash;
	struct kmap idle;
	uint32_t n_idle;
	uint64_t idle_bytes;
	uint64_t n_mapped;
	struct pd_kernel_stats st;
	void (*forget)(void *arg, uint32_t handle);
	void *forget_arg;
};

static struct ksrc *to_ksrc(struct pd_source *s)
{
	return (struct ksrc *)s;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void count(uint64_t *c, uint64_t n)
{
	__atomic_add_fetch(c, n, __ATOMIC_RELAXED);
}

/* --- the mapping table (all _locked: k->lock held) -------------------- */

static struct kmap *find_locked(struct ksrc *k, uint32_t handle)
{
	struct pc_hash_node *n = pc_hash_find(&k->hash, handle);

	return n ? pc_hash_entry(n, struct kmap, node) : NULL;
}

static void hash_locked(struct ksrc *k, struct kmap *m)
{
	pc_hash_add(&k->hash, &m->node, m->handle);
	k->n_mapped++;
}

static void unhash_locked(struct ksrc *k, struct kmap *m)
{
	if (!pc_hash_del(&k->hash, &m->node))
		k->n_mapped--;
}

static void idle_add_locked(struct ksrc *k, struct kmap *m)
{
	m->idle_ns = now_ns();
	m->prev = k->idle.prev;
	m->next = &k->idle;
	k->idle.prev->next = m;
	k->idle.prev = m;
	k->n_idle++;
	k->idle_bytes += m->len;
}

static void idle_del_locked(struct ksrc *k, struct kmap *m)
{
	m->prev->next = m->next;
	m->next->prev = m->prev;
	m->prev = m->next = NULL;
	k->n_idle--;
	k->idle_bytes -= m->len;
}

/*
 * Moves @m out of the table onto @victims (chained by vnext), to be
 * unmapped by unmap_victims() once the lock is dropped: munmap() takes
 * the process's mmap lock, which other threads' db_map need as well.
 */
static void evict_locked(struct ksrc *k, struct kmap *m, struct kmap **victims)
{
	if (!m->refs)
		idle_del_locked(k, m);
	unhash_locked(k, m);
	m->vnext = *victims;
	*victims = m;
}

/*
 * Drops idle mappings: all of them with @all, else the oldest while the
 * idle list is over its limits, and any idle for longer than
 * PD_KSRC_IDLE_AGE_MS.
 */
static void trim_locked(struct ksrc *k, bool all, struct kmap **victims)
{
	uint64_t old = now_ns() - PD_KSRC_IDLE_AGE_MS * NS_PER_MS;
	struct kmap *m;

	while ((m = k->idle.next) != &k->idle) {
		if (!all && k->n_idle <= PD_KSRC_IDLE_MAX &&
		    k->idle_bytes <= PD_KSRC_IDLE_BYTES && m->idle_ns > old)
			break;
		evict_locked(k, m, victims);
	}
}

static void unmap_victims(struct ksrc *k, struct kmap *victims)
{
	struct kmap *m;

	while ((m = victims)) {
		victims = m->vnext;
		munmap(m->addr, m->len);
		count(&k->st.unmaps, 1);
		free(m);
	}
}

static void flush_idle(struct ksrc *k)
{
	struct kmap *victims = NULL;

	pthread_mutex_lock(&k->lock);
	trim_locked(k, true, &victims);
	pthread_mutex_unlock(&k->lock);
	unmap_victims(k, victims);
}

static bool have_idle(struct ksrc *k)
{
	bool r;

	pthread_mutex_lock(&k->lock);
	r = k->n_idle > 0;
	pthread_mutex_unlock(&k->lock);
	return r;
}

/* --- datablocks --------------------------------------------------------- */

/*
 * Maps @len bytes at @offset as a new in-use mapping of @handle, unless
 * another thread mapped it meanwhile (then that one is shared and ours
 * undone).  A stale mapping of the same handle (another offset: the
 * handle wrapped) is evicted when idle; in use it is -EINVAL, as the
 * module never gives one handle to two live datablocks.
 */
static int map_insert(struct ksrc *k, uint32_t handle, uint64_t offset,
		      uint64_t len, void **data)
{
	struct kmap *m, *old, *victims = NULL;
	bool lost = false;
	void *addr;
	int r = 0;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, k->fd,
		    (off_t)offset);
	if (addr == MAP_FAILED) {
		r = -errno;
		free(m);
		return r;
	}
	count(&k->st.maps, 1);
	m->handle = handle;
	m->refs = 1;
	m->offset = offset;
	m->len = len;
	m->addr = addr;

	pthread_mutex_lock(&k->lock);
	old = find_locked(k, handle);
	if (old && old->offset == offset && old->len >= len) {
		if (!old->refs++)
			idle_del_locked(k, old);
		*data = old->addr;
		lost = true;
	} else if (old && old->refs) {
		r = -EINVAL;
		lost = true;
	} else {
		if (old)
			evict_locked(k, old, &victims);
		hash_locked(k, m);
		*data = addr;
	}
	pthread_mutex_unlock(&k->lock);
	if (lost) {
		m->vnext = victims;
		victims = m;
	}
	unmap_victims(k, victims);
	return r;
}

static int ksrc_db_map(struct pd_source *s, uint32_t handle,
		       uint64_t mmap_offset, uint64_t bytes, void **data)
{
	struct ksrc *k = to_ksrc(s);
	struct kmap *m;

	if (!handle || !bytes)
		return -EINVAL;
	pthread_mutex_lock(&k->lock);
	m = find_locked(k, handle);
	if (m && m->offset == mmap_offset && m->len >= bytes) {
		if (!m->refs++)
			idle_del_locked(k, m);
		*data = m->addr;
		pthread_mutex_unlock(&k->lock);
		count(&k->st.hits, 1);
		return 0;
	}
	pthread_mutex_unlock(&k->lock);
	return map_insert(k, handle, mmap_offset, bytes, data);
}

static void ksrc_db_unmap(struct pd_source *s, uint32_t handle, void *data,
			  uint64_t bytes)
{
	struct ksrc *k = to_ksrc(s);
	struct kmap *m, *victims = NULL;

	(void)bytes;
	pthread_mutex_lock(&k->lock);
	m = find_locked(k, handle);
	if (!m || m->addr != data || !m->refs) {
		/* Not ours (an engine bug): leave the table alone. */
		pthread_mutex_unlock(&k->lock);
		return;
	}
	if (!--m->refs) {
		if (m->doomed || m->len > PD_KSRC_IDLE_BYTES) {
			unhash_locked(k, m);
			m->vnext = victims;
			victims = m;
		} else {
			idle_add_locked(k, m);
		}
		trim_locked(k, false, &victims);
	}
	pthread_mutex_unlock(&k->lock);
	unmap_victims(k, victims);
}

/*
 * @defer (here and in the take, complete and release ops): the kernel
 * mode has no helpers (pd_engine_help), so it is always NULL.
 */
static int ksrc_db_create(struct pd_source *s, const struct ptask_invocation *inv,
			  uint64_t bytes, uint32_t *handle, void **data,
			  struct pd_wake_defer *defer)
{
	struct ksrc *k = to_ksrc(s);
	struct ptask_datablock_create c = {
		.size = sizeof(c),
		.bytes = bytes,
		/* its owner pays (the module's per-uid limit), not ptaskd */
		.flags = inv ? PTASK_DATABLOCK_CREATE_OUTPUT : 0,
		.invocation = inv ? inv->id : 0,
	};
	struct ptask_datablock_release rel = { .size = sizeof(rel) };
	int r;

	(void)defer;
	if (ioctl(k->fd, PTASK_IOC_DATABLOCK_CREATE, &c))
		return -errno;
	count(&k->st.creates, 1);
	r = map_insert(k, c.handle, c.mmap_offset, c.bytes, data);
	if (r) {
		rel.handle = c.handle;
		ioctl(k->fd, PTASK_IOC_DATABLOCK_RELEASE, &rel);
		count(&k->st.releases, 1);
		return r;
	}
	*handle = c.handle;
	return 0;
}

static int ksrc_db_release(struct pd_source *s, uint32_t handle,
			   struct pd_wake_defer *defer)
{
	struct ksrc *k = to_ksrc(s);
	struct ptask_datablock_release rel = {
		.size = sizeof(rel),
		.handle = handle,
	};
	struct kmap *m, *victims = NULL;
	int r = 0;

	(void)defer;
	if (ioctl(k->fd, PTASK_IOC_DATABLOCK_RELEASE, &rel))
		r = -errno;
	else
		count(&k->st.releases, 1);
	/* Nobody will meet this datablock again: no point caching it. */
	pthread_mutex_lock(&k->lock);
	m = find_locked(k, handle);
	if (m) {
		if (m->refs)
			m->doomed = true;
		else
			evict_locked(k, m, &victims);
	}
	pthread_mutex_unlock(&k->lock);
	unmap_victims(k, victims);
	return r;
}

/* --- invocations -------------------------------------------------------- */

static bool interrupted(struct ksrc *k)
{
	return __atomic_load_n(&k->interrupted, __ATOMIC_ACQUIRE);
}

/*
 * The module's death notices (EXEC_FORGOTTEN): each dead datablock's
 * mapping goes (an idle one at once, one in use when its user lets go)
 * and the engine drops its device copies (pd_engine_forget), as user
 * mode's forget notifier does.  Until the forget callback is set, the
 * mappings still go.
 */
static void drain_forgotten(struct ksrc *k)
{
	uint32_t handles[256];
	struct ptask_exec_forgotten f = {
		.size = sizeof(f), .max_handles = 256,
		.handles = (uintptr_t)handles,
	};
	struct kmap *m, *victims = NULL;
	void (*forget)(void *, uint32_t);
	void *arg;
	uint32_t i;

	do {
		if (ioctl(k->fd, PTASK_IOC_EXEC_FORGOTTEN, &f))
			return;
		count(&k->st.forgotten, f.n_handles);
		count(&k->st.forgotten_lost, f.lost);
		pthread_mutex_lock(&k->lock);
		forget = k->forget;
		arg = k->forget_arg;
		for (i = 0; i < f.n_handles; i++) {
			m = find_locked(k, handles[i]);
			if (m && m->refs)
				m->doomed = true;
			else if (m)
				evict_locked(k, m, &victims);
		}
		pthread_mutex_unlock(&k->lock);
		unmap_victims(k, victims);
		victims = NULL;
		for (i = 0; forget && i < f.n_handles; i++)
			forget(arg, handles[i]);
	} while (f.pending);
}

/* One EXEC_TAKE with @flags and @deadline instead of the caller's. */
static int take_once(struct ksrc *k, struct ptask_exec_take *arg,
		     uint32_t flags, uint64_t deadline)
{
	struct ptask_exec_take t = *arg;

	t.size = sizeof(t);
	t.flags = flags;
	t.timeout_ns = deadline;
	if (ioctl(k->fd, PTASK_IOC_EXEC_TAKE, &t)) {
		int err = -errno;

		/* Nothing queued, but datablocks died: their copies go. */
		if (err == -EAGAIN || err == -ETIMEDOUT)
			drain_forgotten(k);
		return err;
	}
	arg->n_invocations = t.n_invocations;
	arg->n_ports = t.n_ports;
	count(&k->st.taken, t.n_invocations);
	if (t.forgotten)
		drain_forgotten(k);
	return 0;
}

/*
 * Sleeps until the fd or the eventfd is readable, or @wait_ns (UINT64_MAX:
 * forever) passes.  Returns the fd's revents (0 on a timeout or a
 * signal); the eventfd needs no answer, as interrupted() says it all.
 */
static int wait_ready(struct ksrc *k, uint64_t wait_ns)
{
	struct pollfd pfd[2] = {
		/* EPOLLPRI: death notices wait (drain_forgotten) */
		{ .fd = k->fd, .events = POLLIN | POLLPRI },
		{ .fd = k->efd, .events = POLLIN },
	};
	struct timespec ts, *tsp = NULL;
	int n;

	if (wait_ns != UINT64_MAX) {
		ts.tv_sec = (time_t)(wait_ns / 1000000000ULL);
		ts.tv_nsec = (long)(wait_ns % 1000000000ULL);
		tsp = &ts;
	}
	n = ppoll(pfd, 2, tsp, NULL);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	return n ? pfd[0].revents : 0;
}

/*
 * EXEC_TAKE (source_kernel.h says how it sleeps).  Loop invariant: the
 * last non-blocking take found nothing queued.
 */
static int ksrc_take(struct pd_source *s, struct ptask_exec_take *arg,
		     struct ptask_invocation *inv,
		     struct ptask_invocation_port *ports,
		     struct pd_wake_defer *defer)
{
	struct ksrc *k = to_ksrc(s);
	uint64_t deadline = arg->timeout_ns, now, wait, slice;
	uint32_t flags = arg->flags & ~PTASK_NONBLOCK;
	bool flushed = false, flush;
	int r;

	(void)defer;
	arg->invocations = (uintptr_t)inv;
	arg->ports = (uintptr_t)ports;
	for (;;) {
		if (interrupted(k))
			return -EINTR;
		r = take_once(k, arg, flags | PTASK_NONBLOCK, 0);
		if (r != -EAGAIN || (arg->flags & PTASK_NONBLOCK))
			return r;
		now = now_ns();
		if (deadline && now >= deadline)
			return -ETIMEDOUT;
		wait = deadline ? deadline - now : UINT64_MAX;
		/* Idle: keep no datablock pages alive past a short pause. */
		flush = !flushed && have_idle(k);
		if (flush && wait > PD_KSRC_IDLE_FLUSH_MS * NS_PER_MS)
			wait = PD_KSRC_IDLE_FLUSH_MS * NS_PER_MS;
		r = wait_ready(k, wait);
		if (r < 0)
			return r;
		if (r & POLLPRI) {
			drain_forgotten(k);
			if (!(r & POLLIN))
				continue;
		}
		if (!r) {
			if (flush) {
				flush_idle(k);
				flushed = true;
			}
			continue;
		}
		if (interrupted(k))
			return -EINTR;
		slice = now_ns() + KSRC_TAKE_SLICE_NS;
		if (deadline && deadline < slice)
			slice = deadline;
		r = take_once(k, arg, flags, slice);
		if (r != -ETIMEDOUT && r != -EINTR && r != -EAGAIN)
			return r;
	}
}

static int ksrc_complete(struct pd_source *s, struct ptask_exec_complete *arg,
			 const struct ptask_exec_output *outs,
			 struct pd_wake_defer *defer)
{
	struct ksrc *k = to_ksrc(s);

	(void)defer;
	arg->size = sizeof(*arg);
	arg->outputs = (uintptr_t)outs;
	if (ioctl(k->fd, PTASK_IOC_EXEC_COMPLETE, arg))
		return -errno;
	count(&k->st.completed, 1);
	return 0;
}

static int ksrc_ptask_info(struct pd_source *s,
			   struct ptask_exec_ptask_info *arg, void *code)
{
	struct ksrc *k = to_ksrc(s);

	arg->size = sizeof(*arg);
	arg->code = (uintptr_t)code;
	if (!code)
		arg->code_len = 0;
	return ioctl(k->fd, PTASK_IOC_EXEC_PTASK_INFO, arg) ? -errno : 0;
}

static void ksrc_interrupt(struct pd_source *s)
{
	struct ksrc *k = to_ksrc(s);
	uint64_t one = 1;

	__atomic_store_n(&k->interrupted, true, __ATOMIC_RELEASE);
	/* Never blocks: EFD_NONBLOCK, and one write keeps it readable. */
	if (write(k->efd, &one, sizeof(one)) < 0) {
		/* -EAGAIN: the counter is full, so it is readable already. */
	}
}

static const struct pd_source_ops ksrc_ops = {
	.take = ksrc_take,
	.complete = ksrc_complete,
	.ptask_info = ksrc_ptask_info,
	.db_map = ksrc_db_map,
	.db_unmap = ksrc_db_unmap,
	.db_create = ksrc_db_create,
	.db_release = ksrc_db_release,
	.interrupt = ksrc_interrupt,
	/* PD_SOURCE_OUTPUTS: no DATABLOCK_CREATE ioctl per output */
	.caps = PD_SOURCE_AHEAD | PD_SOURCE_TAKE_AHEAD | PD_SOURCE_ONE_TAKER |
		PD_SOURCE_FUSE | PD_SOURCE_OUTPUTS,
};

/* --- life cycle --------------------------------------------------------- */

int pd_kernel_source_open(struct pd_backend *be, int64_t exec_uid,
			  struct pd_source **out)
{
	struct ksrc *k;
	int r;

	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	k->src.ops = &ksrc_ops;
	k->idle.next = k->idle.prev = &k->idle;
	r = pc_hash_init(&k->hash, KSRC_HASH);
	if (r)
		goto err_free;
	r = -pthread_mutex_init(&k->lock, NULL);
	if (r)
		goto err_fini_hash;
	k->fd = open(PD_KSRC_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (k->fd < 0) {
		r = -errno;
		goto err_destroy_lock;
	}
	k->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (k->efd < 0) {
		r = -errno;
		goto err_close_fd;
	}
	r = pd_nl_exec_register(k->fd, be, exec_uid);
	if (r)
		goto err_close_efd;
	*out = &k->src;
	return 0;

err_close_efd:
	close(k->efd);
err_close_fd:
	close(k->fd);
err_destroy_lock:
	pthread_mutex_destroy(&k->lock);
err_fini_hash:
	pc_hash_fini(&k->hash);
err_free:
	free(k);
	return r;
}

void pd_kernel_source_close(struct pd_source *src)
{
	struct ksrc *k = to_ksrc(src);
	struct kmap *victims = NULL, *m;
	struct pc_hash_node *n;

	if (!src)
		return;
	/*
	 * Unregistering first fails whatever is still taken (-EIO to its
	 * graphs) before the fd goes; closing it would do the same, but a
	 * child that inherited the fd would keep the executor alive.
	 */
	pd_nl_exec_unregister(k->fd);
	pd_log_info("kernel source: %llu death notices read, %llu lost",
		    (unsigned long long)k->st.forgotten,
		    (unsigned long long)k->st.forgotten_lost);
	pthread_mutex_lock(&k->lock);
	while ((n = pc_hash_pop(&k->hash))) {
		m = pc_hash_entry(n, struct kmap, node);
		k->n_mapped--;
		/* In use or not: nobody uses the source any more. */
		if (!m->refs)
			idle_del_locked(k, m);
		m->refs = 0;
		m->vnext = victims;
		victims = m;
	}
	pthread_mutex_unlock(&k->lock);
	unmap_victims(k, victims);
	close(k->efd);
	close(k->fd);
	pthread_mutex_destroy(&k->lock);
	pc_hash_fini(&k->hash);
	free(k);
}

bool pd_kernel_available(void)
{
	struct stat st;

	if (stat(PD_KSRC_DEV_PATH, &st) || !S_ISCHR(st.st_mode))
		return false;
	return pc_genl_resolve(NULL, NULL) == 0;
}

void pd_kernel_source_set_forget(struct pd_source *src,
				 void (*forget)(void *arg, uint32_t handle),
				 void *arg)
{
	struct ksrc *k = to_ksrc(src);

	pthread_mutex_lock(&k->lock);
	k->forget = forget;
	k->forget_arg = arg;
	pthread_mutex_unlock(&k->lock);
}

int pd_kernel_source_fd(struct pd_source *src)
{
	return to_ksrc(src)->fd;
}

void pd_kernel_source_stats(struct pd_source *src, struct pd_kernel_stats *st)
{
	struct ksrc *k = to_ksrc(src);

	st->taken = __atomic_load_n(&k->st.taken, __ATOMIC_RELAXED);
	st->completed = __atomic_load_n(&k->st.completed, __ATOMIC_RELAXED);
	st->maps = __atomic_load_n(&k->st.maps, __ATOMIC_RELAXED);
	st->hits = __atomic_load_n(&k->st.hits, __ATOMIC_RELAXED);
	st->unmaps = __atomic_load_n(&k->st.unmaps, __ATOMIC_RELAXED);
	st->creates = __atomic_load_n(&k->st.creates, __ATOMIC_RELAXED);
	st->releases = __atomic_load_n(&k->st.releases, __ATOMIC_RELAXED);
	st->forgotten = __atomic_load_n(&k->st.forgotten, __ATOMIC_RELAXED);
	st->forgotten_lost = __atomic_load_n(&k->st.forgotten_lost,
					     __ATOMIC_RELAXED);
	pthread_mutex_lock(&k->lock);
	st->mapped = k->n_mapped;
	st->idle = k->n_idle;
	pthread_mutex_unlock(&k->lock);
}
