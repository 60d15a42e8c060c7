// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * source_remote.c - the executor process's source: ptaskd's namespace
 * over executor connections.  The design (connections, places, arenas)
 * is at the top of source_remote.h.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "common/hash.h"
#include "common/msg.h"
#include "common/ring.h"
#include "daemon/log.h"
#include "daemon/user/request.h"
#include "daemon/user/source_remote.h"

/* A take sleeps in ptaskd at most this long before it looks at interrupt. */
#define RSRC_TAKE_SLICE_MS	100
/* An arena mapped here and used by nobody this long is unmapped. */
#define RSRC_ARENA_IDLE_MS	1000
/* Places kept for datablocks nobody here maps (oldest out first). */
#define RSRC_SPARE_PLACES	4096
#define RSRC_HASH		256
#define NS_PER_MS		1000000ULL
/*
 * A ring call's answer is polled for this long before the thread sleeps
 * on the CQ: ptaskd's ring thread answers a create or a complete in
 * microseconds, and a futex wake-up costs more than that.
 */
#define RSRC_RING_SPIN_NS	(30ULL * 1000)
#define RSRC_RING_SLEEP_NS	(100ULL * 1000 * 1000)
/* user_data of fire-and-forget releases: only their failures complete */
#define RSRC_RELEASE_TAG	(1ULL << 63)

/*
 * struct rarena - an arena of ptaskd's, mapped here
 * @id: ptaskd's id of it
 * @base, @bytes: the mapping
 * @own: one datablock's alone (PTASKD_MAP_OWN): unmapped once unused
 * @registered: given to the backend's host_register
 * @users: datablock mappings in it now
 * @idle_ns: when @users went 0
 * @node: in rsrc.arenas by @id
 * @next: the list of every arena (rsrc.arena_list)
 */
struct rarena {
	uint64_t id;
	void *base;
	uint64_t bytes;
	bool own;
	bool registered;
	uint32_t users;
	uint64_t idle_ns;
	struct pc_hash_node node;
	struct rarena *next;
};

/*
 * struct rdb - what is known of one datablock
 * @handle: its handle
 * @place: where it is (a take's or create's reply, or a MAP)
 * @arena: while @refs: the arena mapping it is read through
 * @refs: db_map/db_create users that did not db_unmap yet
 * @node: in rsrc.dbs by @handle
 * @prev, @next: the spare list (oldest first) while @refs is 0
 */
struct rdb {
	uint32_t handle;
	struct ptaskd_exec_place place;
	struct rarena *arena;
	uint32_t refs;
	struct pc_hash_node node;
	struct rdb *prev, *next;
};

/*
 * struct rconn - an executor connection of the pool
 * @fd: the socket (for a ring: its lifeline, which carries nothing)
 * @map, @bytes: a ring's region (NULL: a plain connection)
 * @ring: the attached ring
 * @data, @data_bytes: its data area (EXEC_COMPLETE's outputs)
 * @next_id: the last user_data given
 */
struct rconn {
	int fd;
	void *map;
	size_t bytes;
	struct pc_ring ring;
	uint8_t *data;
	size_t data_bytes;
	uint64_t next_id;
	struct rconn *next;
};

/*
 * struct rsrc - the source
 * @life: the lifeline (register, connect), under @life_lock
 * @taker: the taker's connection (one taker: PD_SOURCE_ONE_TAKER)
 * @pool: idle connections for everyone else, under @lock
 * @rings: idle rings (create, complete, release), under @lock
 * @rings_off: ptaskd gave no ring once: those calls go by @pool
 * @token: the executor client's (HELLO)
 * @lock: protects @pool, @dbs, @spare, @n_spare, @arenas, @arena_list
 * @take_buf: the taker's reply buffer (@take_cap bytes)
 * @gone: ptaskd hung up (every call fails with -ENOTCONN)
 * @interrupted: interrupt was called (sticky)
 */
struct rsrc {
	struct pd_source src;
	struct pd_backend *be;
	int life;
	pthread_mutex_t life_lock;
	int taker;
	struct rconn *pool;
	struct rconn *rings;
	bool rings_off;
	uint64_t token;
	pthread_mutex_t lock;
	struct pc_hash dbs;
	struct rdb spare;
	uint32_t n_spare;
	struct pc_hash arenas;
	struct rarena *arena_list;
	uint8_t *take_buf;
	size_t take_cap;
	bool gone;
	bool interrupted;
	void (*forget)(void *arg, uint32_t handle);
	void *forget_arg;
	uint64_t taken, maps, arena_maps, conns, ring_calls, release_failed;
};

static struct rsrc *to_rs(struct pd_source *s)
{
	return (struct rsrc *)s;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ptaskd hung up: stop this process (once), fail every later call. */
static int hung_up(struct rsrc *rs, int err)
{
	if (err != -ENOTCONN && err != -ECONNRESET && err != -EPIPE &&
	    err != -EPROTO)
		return err;
	if (!__atomic_exchange_n(&rs->gone, true, __ATOMIC_ACQ_REL)) {
		pd_log_warn("ptaskd hung up (%s): this executor stops",
			    strerror(-err));
		kill(getpid(), SIGTERM);
	}
	return -ENOTCONN;
}

/*
 * One call on @fd: @n pieces of request, the reply's payload into @rep
 * (@cap bytes; *@rep_len its whole length), an fd with it into *@fd_out
 * (NULL: none taken).  The daemon's -errno or the socket's.
 */
static int call(struct rsrc *rs, int fd, uint32_t op, const struct iovec *req,
		unsigned int n, void *rep, size_t cap, size_t *rep_len,
		int *fd_out)
{
	struct ptaskd_hdr h = { .magic = PTASKD_PROTO_MAGIC, .op = op };
	unsigned int i;
	int err;

	if (__atomic_load_n(&rs->gone, __ATOMIC_ACQUIRE))
		return -ENOTCONN;
	for (i = 0; i < n; i++)
		h.len += (uint32_t)req[i].iov_len;
	err = pc_msg_send(fd, &h, req, n, -1);
	if (!err)
		err = pc_msg_recv(fd, &h, rep, cap, fd_out, 0);
	if (err)
		return hung_up(rs, err);
	err = pc_msg_reply_err(&h, op);
	if (rep_len)
		*rep_len = h.len;
	if (!err && h.len > cap)
		err = -EPROTO;	/* more than this call's reply can be */
	if (err && fd_out && *fd_out >= 0) {
		close(*fd_out);
		*fd_out = -1;
	}
	return err;
}

static int hello(struct rsrc *rs, int fd, uint64_t *token)
{
	struct ptaskd_hello h = {
		.version = PTASKD_PROTO_VERSION, .token = *token,
	};
	struct iovec iov = { &h, sizeof(h) };
	int err;

	err = call(rs, fd, PTASKD_OP_HELLO, &iov, 1, &h, sizeof(h), NULL,
		   NULL);
	if (!err)
		*token = h.token;
	return err;
}

/* A new connection of the executor's client (EXEC_CONNECT, HELLO). */
static int connect_more(struct rsrc *rs, int *out)
{
	uint64_t token = rs->token;
	int fd = -1, err;

	pthread_mutex_lock(&rs->life_lock);
	err = call(rs, rs->life, PTASKD_OP_EXEC_CONNECT, NULL, 0, NULL, 0,
		   NULL, &fd);
	pthread_mutex_unlock(&rs->life_lock);
	if (!err && fd < 0)
		err = -EPROTO;
	if (!err)
		err = hello(rs, fd, &token);
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	__atomic_add_fetch(&rs->conns, 1, __ATOMIC_RELAXED);
	*out = fd;
	return 0;
}

static int conn_get(struct rsrc *rs, struct rconn **out)
{
	struct rconn *c;
	int err;

	pthread_mutex_lock(&rs->lock);
	c = rs->pool;
	if (c)
		rs->pool = c->next;
	pthread_mutex_unlock(&rs->lock);
	if (c) {
		*out = c;
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	err = connect_more(rs, &c->fd);
	if (err) {
		free(c);
		return err;
	}
	*out = c;
	return 0;
}

/* Back to the pool; one that failed on the socket is dropped. */
static void conn_put(struct rsrc *rs, struct rconn *c, int err)
{
	if (err == -ENOTCONN || err == -ETIMEDOUT || err == -EPROTO ||
	    err == -ENOMEM) {
		close(c->fd);
		free(c);
		return;
	}
	pthread_mutex_lock(&rs->lock);
	c->next = rs->pool;
	rs->pool = c;
	pthread_mutex_unlock(&rs->lock);
}

/* call() on a pooled connection. */
static int pool_call(struct rsrc *rs, uint32_t op, const struct iovec *req,
		     unsigned int n, void *rep, size_t cap, size_t *rep_len,
		     int *fd_out)
{
	struct rconn *c;
	int err;

	err = conn_get(rs, &c);
	if (err)
		return err;
	err = call(rs, c->fd, op, req, n, rep, cap, rep_len, fd_out);
	conn_put(rs, c, err);
	return err;
}

/* --- rings: create, complete and release without a message ----------- */

static void ring_free(struct rconn *c)
{
	if (c->map)
		munmap(c->map, c->bytes);
	close(c->fd);
	free(c);
}

/*
 * A new executor connection made a ring (PTASKD_OP_RING_SETUP with a data
 * area): 0, 1 (ptaskd makes none: the socket from now on), or -errno.
 */
static int ring_open(struct rsrc *rs, struct rconn **out)
{
	struct ptaskd_ring_setup set = { .flags = PTASKD_RING_DATA };
	struct iovec iov = { &set, sizeof(set) };
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), off;
	struct rconn *c;
	size_t len;
	int memfd = -1, err;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	err = connect_more(rs, &c->fd);
	if (err) {
		free(c);
		return err;
	}
	err = call(rs, c->fd, PTASKD_OP_RING_SETUP, &iov, 1, &set, sizeof(set),
		   &len, &memfd);
	if (err == -ENOTTY || err == -EINVAL) {
		ring_free(c);
		return 1;
	}
	if (!err && (len != sizeof(set) || memfd < 0 ||
		     !(set.flags & PTASKD_RING_DATA)))
		err = -EPROTO;
	if (err)
		goto err_free;
	c->bytes = (size_t)set.region_bytes;
	c->map = mmap(NULL, c->bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		      memfd, 0);
	close(memfd);
	memfd = -1;
	if (c->map == MAP_FAILED) {
		c->map = NULL;
		err = -errno;
		goto err_free;
	}
	err = pc_ring_attach(&c->ring, c->map, c->bytes, PC_RING_CLIENT);
	if (err)
		goto err_free;
	off = (c->ring.ring_bytes + page - 1) & ~(page - 1);
	if (off >= c->bytes) {
		err = -EPROTO;
		goto err_free;
	}
	c->data = (uint8_t *)c->map + off;
	c->data_bytes = c->bytes - off;
	*out = c;
	return 0;

err_free:
	if (memfd >= 0)
		close(memfd);
	ring_free(c);
	return err;
}

/* An idle ring or a new one; 1: none (the caller goes by the socket). */
static int ring_get(struct rsrc *rs, struct rconn **out)
{
	int err;

	if (__atomic_load_n(&rs->rings_off, __ATOMIC_RELAXED))
		return 1;
	pthread_mutex_lock(&rs->lock);
	*out = rs->rings;
	if (*out)
		rs->rings = (*out)->next;
	pthread_mutex_unlock(&rs->lock);
	if (*out)
		return 0;
	err = ring_open(rs, out);
	if (err == 1) {
		pd_log_info("ptaskd gives executors no ring: their calls go by the socket");
		__atomic_store_n(&rs->rings_off, true, __ATOMIC_RELAXED);
	}
	return err;
}

static void ring_put(struct rsrc *rs, struct rconn *c, bool broken)
{
	if (broken) {
		ring_free(c);
		return;
	}
	pthread_mutex_lock(&rs->lock);
	c->next = rs->rings;
	rs->rings = c;
	pthread_mutex_unlock(&rs->lock);
}

/* Did ptaskd hang up a ring's lifeline? */
static bool ring_gone(const struct rconn *c)
{
	struct pollfd p = { .fd = c->fd, .events = POLLRDHUP };

	return poll(&p, 1, 0) > 0 &&
	       (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/*
 * Completions up to the one of entry @id (0: none waited for) into
 * *@cqe: 1 found, 0 not yet, -EPROTO.  A failed release says so in the
 * log (nothing waits for it).
 */
static int ring_reap(struct rsrc *rs, struct rconn *c, uint64_t id,
		     struct ptask_cqe *cqe)
{
	struct ptask_cqe e;
	int n, found = 0;

	n = pc_ring_q_ready(&c->ring.cq);
	if (n < 0)
		return n;
	while (n--) {
		pc_ring_q_peek(&c->ring.cq, &e);
		pc_ring_q_consume(&c->ring.cq);
		if (e.user_data & RSRC_RELEASE_TAG) {
			if (!__atomic_fetch_add(&rs->release_failed, 1,
						__ATOMIC_RELAXED))
				pd_log_warn("a release by ring failed: %s",
					    strerror(-e.res));
			continue;
		}
		if (!id || e.user_data != id)
			return -EPROTO;
		*cqe = e;
		found = 1;
	}
	return found;
}

/* Queue @sqe, waiting while the SQ is full. */
static int ring_queue(struct rsrc *rs, struct rconn *c,
		      const struct ptask_sqe *sqe)
{
	int space, err;

	for (;;) {
		space = pc_ring_q_space(&c->ring.sq);
		if (space < 0)
			return space;
		if (space)
			break;
		err = ring_reap(rs, c, 0, NULL);
		if (err < 0)
			return err;
		if (ring_gone(c))
			return -ENOTCONN;
		usleep(20);
	}
	memcpy(pc_ring_q_slot(&c->ring.sq), sqe, sizeof(*sqe));
	pc_ring_q_publish(&c->ring.sq, 1);
	return 0;
}

/*
 * @sqe through a ring and its completion into *@cqe (NULL with a
 * release: fire and forget).  0 (the call's own result is cqe->res),
 * 1 (no ring: go by the socket), or -errno of the ring itself.
 */
static int ring_call(struct rsrc *rs, struct ptask_sqe *sqe,
		     const void *data, size_t data_len, struct ptask_cqe *cqe)
{
	struct rconn *c;
	int err, n;

	if (__atomic_load_n(&rs->gone, __ATOMIC_ACQUIRE))
		return -ENOTCONN;
	err = ring_get(rs, &c);
	if (err)
		return err;
	if (data_len > c->data_bytes) {
		ring_put(rs, c, false);
		return 1;
	}
	if (data_len)
		memcpy(c->data, data, data_len);
	if (!cqe) {
		sqe->user_data = RSRC_RELEASE_TAG;
		sqe->flags |= PTASK_SQE_NO_CQE_ON_SUCCESS;
	} else {
		c->next_id = (c->next_id + 1) & ~RSRC_RELEASE_TAG;
		if (!c->next_id)
			c->next_id = 1;
		sqe->user_data = c->next_id;
	}
	err = ring_queue(rs, c, sqe);
	while (!err && cqe) {
		err = ring_reap(rs, c, sqe->user_data, cqe);
		if (err) {
			err = err < 0 ? err : 0;
			break;
		}
		n = pc_ring_q_wait(&c->ring.cq, RSRC_RING_SPIN_NS, true,
				   RSRC_RING_SLEEP_NS);
		if (n < 0)
			err = n;
		else if (!n && ring_gone(c))
			err = -ENOTCONN;
	}
	__atomic_add_fetch(&rs->ring_calls, 1, __ATOMIC_RELAXED);
	ring_put(rs, c, err != 0);
	return err ? hung_up(rs, err == -EPROTO ? -ENOTCONN : err) : 0;
}

/* --- places and arenas (all _locked: rs->lock held) ------------------- */

static struct rdb *db_find_locked(struct rsrc *rs, uint32_t handle)
{
	struct pc_hash_node *n = pc_hash_find(&rs->dbs, handle);

	return n ? pc_hash_entry(n, struct rdb, node) : NULL;
}

static void spare_del_locked(struct rsrc *rs, struct rdb *d)
{
	d->prev->next = d->next;
	d->next->prev = d->prev;
	d->prev = d->next = NULL;
	rs->n_spare--;
}

static void db_drop_locked(struct rsrc *rs, struct rdb *d)
{
	if (d->prev)
		spare_del_locked(rs, d);
	pc_hash_del(&rs->dbs, &d->node);
	free(d);
}

static void spare_add_locked(struct rsrc *rs, struct rdb *d)
{
	d->prev = rs->spare.prev;
	d->next = &rs->spare;
	rs->spare.prev->next = d;
	rs->spare.prev = d;
	if (++rs->n_spare > RSRC_SPARE_PLACES)
		db_drop_locked(rs, rs->spare.next);
}

/* Remember where @handle is (a later one wins: the newest reply). */
static void place_set_locked(struct rsrc *rs, uint32_t handle,
			     const struct ptaskd_exec_place *p)
{
	struct rdb *d = db_find_locked(rs, handle);

	if (!handle || !p->arena)
		return;
	if (!d) {
		d = calloc(1, sizeof(*d));
		if (!d)
			return;	/* it maps by MAP then */
		d->handle = handle;
		pc_hash_add(&rs->dbs, &d->node, handle);
		d->place = *p;
		spare_add_locked(rs, d);
		return;
	}
	/* One in use keeps its place: a handle names one datablock. */
	if (!d->refs)
		d->place = *p;
}

static struct rarena *arena_find_locked(struct rsrc *rs, uint64_t id)
{
	struct pc_hash_node *n = pc_hash_find(&rs->arenas, id);

	return n ? pc_hash_entry(n, struct rarena, node) : NULL;
}

/* Unmap @a (unused, out of the table and the list already). */
static void arena_free(struct rsrc *rs, struct rarena *a)
{
	if (a->registered)
		rs->be->ops->host_unregister(rs->be, a->base);
	munmap(a->base, a->bytes);
	free(a);
}

static void arena_unlink_locked(struct rsrc *rs, struct rarena *a)
{
	struct rarena **pp;

	pc_hash_del(&rs->arenas, &a->node);
	for (pp = &rs->arena_list; *pp; pp = &(*pp)->next)
		if (*pp == a) {
			*pp = a->next;
			break;
		}
}

/* Arenas unused for RSRC_ARENA_IDLE_MS, unlinked onto *@victims. */
static void arenas_trim_locked(struct rsrc *rs, bool all,
			       struct rarena **victims)
{
	uint64_t now = now_ns();
	struct rarena *a, *next;

	for (a = rs->arena_list; a; a = next) {
		next = a->next;
		if (a->users || (!all && now - a->idle_ns <
				 RSRC_ARENA_IDLE_MS * NS_PER_MS))
			continue;
		arena_unlink_locked(rs, a);
		a->next = *victims;
		*victims = a;
	}
}

static void arenas_free(struct rsrc *rs, struct rarena *victims)
{
	struct rarena *a;

	while ((a = victims)) {
		victims = a->next;
		arena_free(rs, a);
	}
}

/* Let go of one use of @d's arena; an own arena goes with its last. */
static void db_unuse_locked(struct rsrc *rs, struct rdb *d,
			    struct rarena **victims)
{
	struct rarena *a = d->arena;

	d->arena = NULL;
	spare_add_locked(rs, d);
	if (--a->users)
		return;
	a->idle_ns = now_ns();
	if (a->own) {
		arena_unlink_locked(rs, a);
		a->next = *victims;
		*victims = a;
	}
}

/* Map arena @p names from @fd (taken), unless another thread did. */
static int arena_map(struct rsrc *rs, const struct ptaskd_exec_place *p,
		     int fd)
{
	struct rarena *a, *had;
	void *base;
	int err = 0;

	base = mmap(NULL, p->arena_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		    fd, 0);
	close(fd);
	if (base == MAP_FAILED)
		return -errno;
	a = calloc(1, sizeof(*a));
	if (!a) {
		munmap(base, p->arena_bytes);
		return -ENOMEM;
	}
	a->id = p->arena;
	a->base = base;
	a->bytes = p->arena_bytes;
	a->own = p->flags & PTASKD_MAP_OWN;
	a->idle_ns = now_ns();
	/* As ptaskd registers its arenas: own ones never (arena.h). */
	if (!a->own && rs->be->ops->host_register &&
	    !rs->be->ops->host_register(rs->be, base, p->arena_bytes))
		a->registered = true;
	__atomic_add_fetch(&rs->arena_maps, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&rs->lock);
	had = arena_find_locked(rs, p->arena);
	if (!had) {
		pc_hash_add(&rs->arenas, &a->node, a->id);
		a->next = rs->arena_list;
		rs->arena_list = a;
		a = NULL;
	}
	pthread_mutex_unlock(&rs->lock);
	if (a)
		arena_free(rs, a);
	return err;
}

/* PTASKD_OP_MAP: @handle's place, and its arena mapped if it was not. */
static int map_by_message(struct rsrc *rs, uint32_t handle)
{
	struct ptaskd_map m = { .handle = handle };
	struct ptaskd_exec_place p = { };
	struct iovec iov = { &m, sizeof(m) };
	bool mapped;
	int fd = -1, err;

	err = pool_call(rs, PTASKD_OP_MAP, &iov, 1, &m, sizeof(m), NULL, &fd);
	__atomic_add_fetch(&rs->maps, 1, __ATOMIC_RELAXED);
	if (err)
		return err;
	p.arena = m.arena;
	p.arena_bytes = m.arena_bytes;
	p.offset = m.offset;
	p.flags = m.flags & PTASKD_MAP_OWN;
	if (!p.arena || p.offset + m.bytes > p.arena_bytes) {
		if (fd >= 0)
			close(fd);
		return -EPROTO;
	}
	pthread_mutex_lock(&rs->lock);
	place_set_locked(rs, handle, &p);
	mapped = arena_find_locked(rs, p.arena) != NULL;
	pthread_mutex_unlock(&rs->lock);
	if (fd < 0)
		return mapped ? 0 : -EPROTO;
	if (mapped) {
		close(fd);
		return 0;
	}
	return arena_map(rs, &p, fd);
}

/*
 * A use of @handle's bytes, if its place and arena are known here: 1
 * (*@data set), 0 (not known: map by message), -EINVAL (too short).
 */
static int use_known(struct rsrc *rs, uint32_t handle, uint64_t bytes,
		     void **data)
{
	struct rarena *a;
	struct rdb *d;
	int r = 0;

	pthread_mutex_lock(&rs->lock);
	d = db_find_locked(rs, handle);
	a = d ? (d->arena ? d->arena :
		 arena_find_locked(rs, d->place.arena)) : NULL;
	if (a && d->place.offset + bytes > a->bytes) {
		r = -EINVAL;
	} else if (a) {
		if (!d->refs++) {
			spare_del_locked(rs, d);
			d->arena = a;
			a->users++;
		}
		*data = (uint8_t *)a->base + d->place.offset;
		r = 1;
	}
	pthread_mutex_unlock(&rs->lock);
	return r;
}

/* --- the source's ops --------------------------------------------------- */

static int rs_db_map(struct pd_source *s, uint32_t handle,
		     uint64_t mmap_offset, uint64_t bytes, void **data)
{
	struct rsrc *rs = to_rs(s);
	int r;

	(void)mmap_offset;	/* a handle's, in user mode: places say more */
	if (!handle || !bytes)
		return -EINVAL;
	r = use_known(rs, handle, bytes, data);
	if (r)
		return r < 0 ? r : 0;
	r = map_by_message(rs, handle);
	if (r)
		return r;
	r = use_known(rs, handle, bytes, data);
	return r < 0 ? r : r ? 0 : -ENOENT;
}

static void unmap_one(struct rsrc *rs, uint32_t handle,
		      struct rarena **victims)
{
	struct rdb *d = db_find_locked(rs, handle);

	if (!d || !d->refs)	/* not ours (an engine bug) */
		return;
	if (!--d->refs)
		db_unuse_locked(rs, d, victims);
}

static void rs_db_unmap(struct pd_source *s, uint32_t handle, void *data,
			uint64_t bytes)
{
	struct rsrc *rs = to_rs(s);
	struct rarena *victims = NULL;

	(void)data;
	(void)bytes;
	pthread_mutex_lock(&rs->lock);
	unmap_one(rs, handle, &victims);
	pthread_mutex_unlock(&rs->lock);
	arenas_free(rs, victims);
}

static void rs_db_unmap_many(struct pd_source *s, uint32_t n,
			     const uint32_t *handles)
{
	struct rsrc *rs = to_rs(s);
	struct rarena *victims = NULL;
	uint32_t i;

	pthread_mutex_lock(&rs->lock);
	for (i = 0; i < n; i++)
		unmap_one(rs, handles[i], &victims);
	pthread_mutex_unlock(&rs->lock);
	arenas_free(rs, victims);
}

static int rs_db_release(struct pd_source *s, uint32_t handle,
			 struct pd_wake_defer *defer)
{
	struct rsrc *rs = to_rs(s);
	struct ptask_datablock_release rel = {
		.size = sizeof(rel), .handle = handle,
	};
	struct iovec iov = { &rel, sizeof(rel) };
	struct ptask_sqe sqe = { .cmd = PTASK_IOC_DATABLOCK_RELEASE };
	struct rdb *d;
	int err;

	(void)defer;	/* no helpers here: it is always NULL */
	memcpy(&sqe.arg, &rel, sizeof(rel));
	/* fire and forget by ring; a failure is logged when it comes */
	err = ring_call(rs, &sqe, NULL, 0, NULL);
	if (err == 1)
		err = pool_call(rs, PTASK_IOC_DATABLOCK_RELEASE, &iov, 1, &rel,
				sizeof(rel), NULL, NULL);
	/* Nobody meets it again: its place goes unless it is in use. */
	pthread_mutex_lock(&rs->lock);
	d = db_find_locked(rs, handle);
	if (d && !d->refs)
		db_drop_locked(rs, d);
	pthread_mutex_unlock(&rs->lock);
	return err;
}

static int rs_db_create(struct pd_source *s, const struct ptask_invocation *inv,
			uint64_t bytes, uint32_t *handle, void **data,
			struct pd_wake_defer *defer)
{
	struct rsrc *rs = to_rs(s);
	struct {
		struct ptask_datablock_create c;
		struct ptaskd_exec_place p;
	} rep;
	struct ptask_datablock_create c = {
		.size = sizeof(c),
		.bytes = bytes,
		/* its owner pays (core/uid_usage.c), not this process */
		.flags = inv ? PTASK_DATABLOCK_CREATE_OUTPUT : 0,
		.invocation = inv ? inv->id : 0,
	};
	struct iovec iov = { &c, sizeof(c) };
	struct ptask_sqe sqe = { .cmd = PTASK_IOC_DATABLOCK_CREATE };
	struct ptask_cqe cqe;
	size_t len = 0;
	int err;

	memcpy(&sqe.arg, &c, sizeof(c));
	err = ring_call(rs, &sqe, NULL, 0, &cqe);
	if (!err) {
		/* the completion says where it is (PTASK_CQE_MEM) */
		err = cqe.res;
		memcpy(&rep.c, &cqe.arg, sizeof(rep.c));
		memset(&rep.p, 0, sizeof(rep.p));
		if (cqe.flags & PTASK_CQE_MEM) {
			rep.p.arena = cqe.arena;
			rep.p.arena_bytes = cqe.arena_bytes;
			rep.p.offset = cqe.arena_offset;
		}
		len = err ? 0 : sizeof(rep);
	} else if (err == 1) {
		err = pool_call(rs, PTASK_IOC_DATABLOCK_CREATE, &iov, 1, &rep,
				sizeof(rep), &len, NULL);
	}
	if (err)
		return err;
	if (len != sizeof(rep))
		err = -EPROTO;
	if (!err) {
		pthread_mutex_lock(&rs->lock);
		place_set_locked(rs, rep.c.handle, &rep.p);
		pthread_mutex_unlock(&rs->lock);
		err = rs_db_map(s, rep.c.handle, 0, bytes, data);
	}
	if (err) {
		if (len >= sizeof(rep.c))
			rs_db_release(s, rep.c.handle, defer);
		return err;
	}
	*handle = rep.c.handle;
	return 0;
}

/* EXEC_FORGOTTEN until none wait: places go, the engine forgets. */
static void drain_forgotten(struct rsrc *rs)
{
	struct {
		struct ptask_exec_forgotten f;
		uint32_t handles[256];
	} rep;
	struct ptask_exec_forgotten f = {
		.size = sizeof(f), .max_handles = 256,
	};
	struct iovec iov = { &f, sizeof(f) };
	void (*forget)(void *, uint32_t);
	struct rdb *d;
	size_t len;
	void *arg;
	uint32_t i;

	do {
		if (call(rs, rs->taker, PTASK_IOC_EXEC_FORGOTTEN, &iov, 1, &rep,
			 sizeof(rep), &len, NULL) ||
		    len < sizeof(rep.f) ||
		    len != sizeof(rep.f) + rep.f.n_handles * sizeof(uint32_t))
			return;
		pthread_mutex_lock(&rs->lock);
		forget = rs->forget;
		arg = rs->forget_arg;
		for (i = 0; i < rep.f.n_handles; i++) {
			d = db_find_locked(rs, rep.handles[i]);
			if (d && !d->refs)
				db_drop_locked(rs, d);
		}
		pthread_mutex_unlock(&rs->lock);
		for (i = 0; forget && i < rep.f.n_handles; i++)
			forget(arg, rep.handles[i]);
	} while (rep.f.pending);
}

static int take_buf_fit(struct rsrc *rs, const struct ptask_exec_take *arg)
{
	size_t need = sizeof(*arg) +
		(size_t)pd_take_max_invocations(arg) *
			sizeof(struct ptask_invocation) +
		(size_t)pd_take_max_ports(arg) *
			(sizeof(struct ptask_invocation_port) +
			 sizeof(struct ptaskd_exec_place));
	uint8_t *p;

	if (need <= rs->take_cap)
		return 0;
	p = realloc(rs->take_buf, need);
	if (!p)
		return -ENOMEM;
	rs->take_buf = p;
	rs->take_cap = need;
	return 0;
}

/* One EXEC_TAKE until @deadline; the reply unpacked. */
static int take_once(struct rsrc *rs, struct ptask_exec_take *arg,
		     struct ptask_invocation *inv,
		     struct ptask_invocation_port *ports, uint64_t deadline)
{
	struct ptask_exec_take t = *arg, *r;
	struct iovec iov = { &t, sizeof(t) };
	const struct ptaskd_exec_place *places;
	size_t len, ninv, nports;
	uint32_t i;
	int err;

	t.size = sizeof(t);
	t.timeout_ns = deadline;
	t.invocations = t.ports = 0;
	err = take_buf_fit(rs, arg);
	if (!err)
		err = call(rs, rs->taker, PTASK_IOC_EXEC_TAKE, &iov, 1,
			   rs->take_buf, rs->take_cap, &len, NULL);
	if (err) {
		if (err == -EAGAIN || err == -ETIMEDOUT)
			drain_forgotten(rs);
		return err;
	}
	r = (struct ptask_exec_take *)rs->take_buf;
	if (len < sizeof(*r))
		return -EPROTO;
	ninv = r->n_invocations;
	nports = r->n_ports;
	if (ninv > arg->max_invocations || nports > arg->max_ports ||
	    len != sizeof(*r) + ninv * sizeof(*inv) +
		   nports * (sizeof(*ports) + sizeof(*places)))
		return -EPROTO;
	memcpy(inv, rs->take_buf + sizeof(*r), ninv * sizeof(*inv));
	memcpy(ports, rs->take_buf + sizeof(*r) + ninv * sizeof(*inv),
	       nports * sizeof(*ports));
	places = (const void *)(rs->take_buf + sizeof(*r) +
				ninv * sizeof(*inv) +
				nports * sizeof(*ports));
	pthread_mutex_lock(&rs->lock);
	for (i = 0; i < nports; i++)
		place_set_locked(rs, ports[i].datablock, &places[i]);
	pthread_mutex_unlock(&rs->lock);
	arg->n_invocations = r->n_invocations;
	arg->n_ports = r->n_ports;
	arg->policy = r->policy;
	arg->forgotten = r->forgotten;
	__atomic_add_fetch(&rs->taken, ninv, __ATOMIC_RELAXED);
	if (r->forgotten)
		drain_forgotten(rs);
	return 0;
}

static bool interrupted(struct rsrc *rs)
{
	return __atomic_load_n(&rs->interrupted, __ATOMIC_ACQUIRE);
}

static int rs_take(struct pd_source *s, struct ptask_exec_take *arg,
		   struct ptask_invocation *inv,
		   struct ptask_invocation_port *ports,
		   struct pd_wake_defer *defer)
{
	struct rsrc *rs = to_rs(s);
	uint64_t deadline = arg->timeout_ns, slice;
	struct rarena *victims = NULL;
	int err;

	(void)defer;
	for (;;) {
		if (interrupted(rs))
			return -EINTR;
		slice = 0;
		if (!(arg->flags & PTASK_NONBLOCK)) {
			slice = now_ns() + RSRC_TAKE_SLICE_MS * NS_PER_MS;
			if (deadline && deadline < slice)
				slice = deadline;
		}
		err = take_once(rs, arg, inv, ports, slice);
		if (err != -ETIMEDOUT || (deadline && now_ns() >= deadline))
			break;
		/* A slice with nothing to take: drop long-unused arenas. */
		pthread_mutex_lock(&rs->lock);
		arenas_trim_locked(rs, false, &victims);
		pthread_mutex_unlock(&rs->lock);
		arenas_free(rs, victims);
		victims = NULL;
	}
	return err;
}

static int rs_complete(struct pd_source *s, struct ptask_exec_complete *arg,
		       const struct ptask_exec_output *outs,
		       struct pd_wake_defer *defer)
{
	struct rsrc *rs = to_rs(s);
	struct ptask_exec_complete c = *arg;
	struct iovec iov[2] = {
		{ &c, sizeof(c) },
		{ (void *)outs, (size_t)arg->n_outputs * sizeof(*outs) },
	};

	struct ptask_sqe sqe = {
		.cmd = PTASK_IOC_EXEC_COMPLETE, .flags = PTASK_SQE_DATA,
	};
	struct ptask_cqe cqe;
	int err;

	(void)defer;
	c.size = sizeof(c);
	c.outputs = 0;	/* the data area's start, by ring */
	memcpy(&sqe.arg, &c, sizeof(c));
	err = ring_call(rs, &sqe, outs, iov[1].iov_len, &cqe);
	if (!err)
		return cqe.res;
	if (err != 1)
		return err;
	return pool_call(rs, PTASK_IOC_EXEC_COMPLETE, iov,
			 arg->n_outputs ? 2 : 1, &c, sizeof(c), NULL, NULL);
}

static int rs_ptask_info(struct pd_source *s,
			 struct ptask_exec_ptask_info *arg, void *code)
{
	struct rsrc *rs = to_rs(s);
	struct ptask_exec_ptask_info a = *arg;
	struct iovec iov = { &a, sizeof(a) };
	size_t cap = sizeof(a) + (code ? arg->code_len : 0), len;
	uint8_t *rep;
	int err;

	a.size = sizeof(a);
	a.code = code ? 1 : 0;	/* any non-zero: "send the code" */
	if (!code)
		a.code_len = 0;
	rep = malloc(cap);
	if (!rep)
		return -ENOMEM;
	err = pool_call(rs, PTASK_IOC_EXEC_PTASK_INFO, &iov, 1, rep, cap, &len,
			NULL);
	if (!err && len < sizeof(a))
		err = -EPROTO;
	if (!err) {
		memcpy(&a, rep, sizeof(a));
		if (code && len != sizeof(a) + a.code_len)
			err = -EPROTO;
		else if (code)
			memcpy(code, rep + sizeof(a), a.code_len);
	}
	free(rep);
	if (err)
		return err;
	a.code = (uintptr_t)code;
	*arg = a;
	return 0;
}

static void rs_interrupt(struct pd_source *s)
{
	__atomic_store_n(&to_rs(s)->interrupted, true, __ATOMIC_RELEASE);
}

static const struct pd_source_ops remote_source_ops = {
	.take = rs_take,
	.complete = rs_complete,
	.ptask_info = rs_ptask_info,
	.db_map = rs_db_map,
	.db_unmap = rs_db_unmap,
	.db_unmap_many = rs_db_unmap_many,
	.db_create = rs_db_create,
	.db_release = rs_db_release,
	.interrupt = rs_interrupt,
	/*
	 * No PD_SOURCE_AHEAD: an engine-made completion ahead costs a
	 * message, and its settle another, where the plain completion is
	 * one (P1 on the cpu backend: 155 -> 113 us a round, dev VM).
	 */
	.caps = PD_SOURCE_TAKE_AHEAD | PD_SOURCE_ONE_TAKER |
		PD_SOURCE_FUSE | PD_SOURCE_OUTPUTS,
};

/* --- life cycle --------------------------------------------------------- */

int pd_remote_source_open(int fd, struct pd_backend *be, uint32_t *uid,
			  struct pd_source **out)
{
	struct ptaskd_exec_register reg = { .n_accels = be->ndev };
	struct iovec iov = { &reg, sizeof(reg) };
	struct rsrc *rs;
	int err;

	rs = calloc(1, sizeof(*rs));
	if (!rs) {
		close(fd);
		return -ENOMEM;
	}
	rs->src.ops = &remote_source_ops;
	rs->be = be;
	rs->life = fd;
	rs->taker = -1;
	rs->spare.next = rs->spare.prev = &rs->spare;
	pthread_mutex_init(&rs->lock, NULL);
	pthread_mutex_init(&rs->life_lock, NULL);
	err = pc_hash_init(&rs->dbs, RSRC_HASH);
	if (!err)
		err = pc_hash_init(&rs->arenas, 16);
	if (!err)
		err = hello(rs, fd, &rs->token);
	if (!err)
		err = call(rs, fd, PTASKD_OP_EXEC_REGISTER, &iov, 1, &reg,
			   sizeof(reg), NULL, NULL);
	if (!err)
		err = connect_more(rs, &rs->taker);
	if (err) {
		rs->gone = true;	/* nothing to stop yet */
		pd_remote_source_close(&rs->src);
		return err;
	}
	*uid = reg.uid;
	*out = &rs->src;
	return 0;
}

void pd_remote_source_close(struct pd_source *src)
{
	struct rsrc *rs = to_rs(src);
	struct rarena *victims = NULL;
	struct pc_hash_node *n;
	struct rconn *c;

	if (!src)
		return;
	pd_log_info("remote source: %llu invocations taken, %llu calls by ring, %llu maps by message, %llu arena mappings, %llu connections, %llu releases failed",
		    (unsigned long long)rs->taken,
		    (unsigned long long)rs->ring_calls,
		    (unsigned long long)rs->maps,
		    (unsigned long long)rs->arena_maps,
		    (unsigned long long)rs->conns,
		    (unsigned long long)rs->release_failed);
	/* The lifeline last: ptaskd fails what was taken when all close. */
	while ((c = rs->pool)) {
		rs->pool = c->next;
		close(c->fd);
		free(c);
	}
	while ((c = rs->rings)) {
		rs->rings = c->next;
		ring_free(c);
	}
	if (rs->taker >= 0)
		close(rs->taker);
	close(rs->life);
	pthread_mutex_lock(&rs->lock);
	while ((n = pc_hash_pop(&rs->dbs)))
		free(pc_hash_entry(n, struct rdb, node));
	rs->spare.next = rs->spare.prev = &rs->spare;
	rs->n_spare = 0;
	for (victims = rs->arena_list; victims; victims = victims->next)
		victims->users = 0;
	victims = NULL;
	arenas_trim_locked(rs, true, &victims);
	pthread_mutex_unlock(&rs->lock);
	arenas_free(rs, victims);
	pc_hash_fini(&rs->dbs);
	pc_hash_fini(&rs->arenas);
	pthread_mutex_destroy(&rs->lock);
	pthread_mutex_destroy(&rs->life_lock);
	free(rs->take_buf);
	free(rs);
}

void pd_remote_source_set_forget(struct pd_source *src,
				 void (*forget)(void *arg, uint32_t handle),
				 void *arg)
{
	struct rsrc *rs = to_rs(src);

	pthread_mutex_lock(&rs->lock);
	rs->forget = forget;
	rs->forget_arg = arg;
	pthread_mutex_unlock(&rs->lock);
}
