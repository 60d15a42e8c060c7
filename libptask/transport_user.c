// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * transport_user.c - libptask's user mode: ptaskd's UNIX socket
 * (uapi/ptaskd.h).  Push, pull, datablock create and release go through
 * rings instead when ptaskd offers them (transport_ring.c), unless
 * PTASK_TRANSPORT=socket.
 *
 * A connection carries one call at a time, so the context keeps a pool:
 * a call takes an idle connection or opens one more, attached to the
 * context's client with its token; calls from several threads therefore
 * block independently, as ioctls on one /dev/ptask fd do.
 *
 * Datablock memory: MAP answers with the arena (a memfd) and the offset;
 * the arena is mapped whole, once, while any datablock in it is mapped
 * here, so mapping a datablock costs one round trip and no mmap.  With
 * rings, an ordinary arena stays mapped for the context's life, and a
 * datablock whose completion said where it is (struct lp_mem) maps with
 * no round trip at all (u_map_at).
 *
 * Waiting for an answer: the socket is polled for up to PTASK_SPIN_US
 * (default LP_SPIN_US_DEFAULT) before the thread sleeps in recvmsg, as
 * cuStreamSynchronize spins before it yields: waking a sleeping thread
 * costs several microseconds, which is a large part of a small
 * invocation's round trip.  Kinds of call whose last answer took longer
 * sleep at once (struct lp_spin); PTASK_SPIN_US=0, or a single CPU,
 * turns polling off.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "common/msg.h"
#include "internal.h"
#include "uapi/ptaskd.h"

struct lp_conn {
	int fd;
	struct lp_conn *next;
};

struct lp_arena {
	uint64_t id;
	int fd;
	uint64_t bytes;
	unsigned char *base;
	uint32_t refs;
	bool own;		/* PTASKD_MAP_OWN: unmapped with its last use */
	struct lp_arena *next;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * One exchange on @fd (common/msg.h frames it): send header + @a (@alen)
 * + @b (@blen), in one sendmsg as a rule, so the request wakes the daemon
 * once; read the reply header and up to @cap bytes of payload into @out
 * (more is an error), usually with one recvmsg, since a connection
 * carries one call at a time and nothing follows the reply.  The reply
 * may carry one fd (*@passed, else -1).  Returns the reply's err, or
 * -ENOTCONN / -EPROTO; *@got is the payload length.  @spin (may be NULL:
 * no polling) says how to wait.
 */
int lp_exchange(int fd, uint32_t op, const void *a, size_t alen,
		const void *b, size_t blen, void *out, size_t cap,
		size_t *got, int *passed, struct lp_spin *spin)
{
	struct ptaskd_hdr h = {
		.magic = PTASKD_PROTO_MAGIC,
		.op = op,
		.len = (uint32_t)(alen + blen),
	};
	struct iovec iov[2] = {
		{ .iov_base = (void *)a, .iov_len = alen },
		{ .iov_base = (void *)b, .iov_len = blen },
	};
	unsigned int kind = pc_spin_kind(op);
	uint64_t start = 0, deadline = 0;
	int err;

	if (passed)
		*passed = -1;
	if (alen + blen > PTASKD_MSG_MAX)
		return -E2BIG;
	if (spin && spin->ns) {
		start = now_ns();
		if (pc_spin_worth(&spin->hist, kind))
			deadline = start + spin->ns;
	}
	err = pc_msg_send(fd, &h, iov, 2, -1);
	if (!err)
		err = pc_msg_recv(fd, &h, out, cap, passed, deadline);
	if (start)
		pc_spin_learn(&spin->hist, kind, now_ns() - start, spin->ns);
	/* anything but a bad reply leaves the connection unusable */
	if (err && err != -EPROTO)
		err = -ENOTCONN;
	if (!err && (h.op != op || h.len > cap))
		err = -EPROTO;
	if (err) {
		if (passed && *passed >= 0)
			close(*passed);
		return err;
	}
	*got = h.len;
	return h.err;
}

/* A new connection; HELLO with @token (0: a new client). */
static int conn_open(const char *path, uint64_t *token, struct lp_conn **out)
{
	struct ptaskd_hello h = {
		.version = PTASKD_PROTO_VERSION,
		.token = *token,
	};
	struct lp_conn *c;
	size_t got = 0;
	int err;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = pc_msg_connect(path, 0);
	if (c->fd < 0) {
		err = c->fd;
		goto err_free;
	}
	err = lp_exchange(c->fd, PTASKD_OP_HELLO, &h, sizeof(h), NULL, 0, &h,
			  sizeof(h), &got, NULL, NULL);
	if (!err && got != sizeof(h))
		err = -EPROTO;
	if (err)
		goto err_close;
	*token = h.token;
	*out = c;
	return 0;

err_close:
	close(c->fd);
err_free:
	free(c);
	return err;
}

int lp_conn_open(const char *path, uint64_t *token, int *fd)
{
	struct lp_conn *c;
	int err = conn_open(path, token, &c);

	if (err)
		return err;
	*fd = c->fd;
	free(c);
	return 0;
}

static int conn_get(struct ptask_ctx *ctx, struct lp_conn **out)
{
	uint64_t token;
	int err;

	pthread_mutex_lock(&ctx->lock);
	*out = ctx->idle;
	if (*out)
		ctx->idle = (*out)->next;
	token = ctx->token;
	pthread_mutex_unlock(&ctx->lock);
	if (*out)
		return 0;
	err = conn_open(ctx->socket_path, &token, out);
	/* The daemon that knew this client is gone. */
	if (err == -ECONNREFUSED || err == -ENOENT)
		err = -ENOTCONN;
	return err;
}

/* Back to the pool, or closed when it broke (@err -ENOTCONN/-EPROTO). */
static void conn_put(struct ptask_ctx *ctx, struct lp_conn *c, int err)
{
	if (err == -ENOTCONN || err == -EPROTO) {
		close(c->fd);
		free(c);
		return;
	}
	pthread_mutex_lock(&ctx->lock);
	c->next = ctx->idle;
	ctx->idle = c;
	pthread_mutex_unlock(&ctx->lock);
}

/* Bytes of results beyond the struct that @cmd's reply may carry. */
static size_t reply_extras(unsigned int cmd, const void *arg)
{
	const struct ptask_exec_take *take = arg;
	const struct ptask_exec_ptask_info *info = arg;

	switch (_IOC_NR(cmd)) {
	case _IOC_NR(PTASK_IOC_EXEC_TAKE):
		return (size_t)take->max_invocations *
		       sizeof(struct ptask_invocation) +
		       (size_t)take->max_ports *
		       sizeof(struct ptask_invocation_port);
	case _IOC_NR(PTASK_IOC_EXEC_PTASK_INFO):
		return info->code ? info->code_len : 0;
	}
	return 0;
}

/* Copy the extras of a reply to where the struct's pointers say. */
static int scatter_extras(unsigned int cmd, void *arg, const uint8_t *p,
			  size_t len)
{
	struct ptask_exec_take *take = arg;
	struct ptask_exec_ptask_info *info = arg;
	size_t inv, ports;

	switch (_IOC_NR(cmd)) {
	case _IOC_NR(PTASK_IOC_EXEC_TAKE):
		inv = (size_t)take->n_invocations * sizeof(struct ptask_invocation);
		ports = (size_t)take->n_ports * sizeof(struct ptask_invocation_port);
		if (inv + ports != len)
			return -EPROTO;
		memcpy((void *)(uintptr_t)take->invocations, p, inv);
		memcpy((void *)(uintptr_t)take->ports, p + inv, ports);
		return 0;
	case _IOC_NR(PTASK_IOC_EXEC_PTASK_INFO):
		if (len > info->code_len || (len && !info->code))
			return -EPROTO;
		if (len)
			memcpy((void *)(uintptr_t)info->code, p, len);
		return 0;
	}
	return len ? -EPROTO : 0;
}

static int u_call(struct ptask_ctx *ctx, unsigned int cmd, void *arg,
		  struct lp_mem *mem)
{
	const union {
		struct ptask_ptask_open open;
		struct ptask_exec_complete complete;
	} *a = arg;
	uint32_t size;
	const void *extra = NULL;
	size_t extra_len = 0, cap, got = 0, st;
	uint8_t small[4096], *buf = small;
	struct lp_conn *c;
	int err;

	if ((lp_ring_cmd(cmd) ||
	     (lp_ring_data_cmd(cmd) &&
	      !__atomic_load_n(&ctx->ring_no_data, __ATOMIC_RELAXED))) &&
	    !__atomic_load_n(&ctx->rings_off, __ATOMIC_RELAXED)) {
		err = lp_ring_call(ctx, cmd, arg, mem);
		if (err <= 0)
			return err;
		/* 1: no ring for this call; the socket then */
	}
	memcpy(&size, arg, sizeof(size));
	if (size > sizeof(small))
		return -E2BIG;
	if (_IOC_NR(cmd) == _IOC_NR(PTASK_IOC_PTASK_OPEN)) {
		extra = (const void *)(uintptr_t)a->open.code;
		extra_len = a->open.code_len;
	} else if (_IOC_NR(cmd) == _IOC_NR(PTASK_IOC_EXEC_COMPLETE)) {
		extra = (const void *)(uintptr_t)a->complete.outputs;
		extra_len = (size_t)a->complete.n_outputs *
			    sizeof(struct ptask_exec_output);
	}
	if (extra_len && !extra)
		return -EFAULT;
	cap = size + reply_extras(cmd, arg);
	if (cap > sizeof(small)) {
		buf = malloc(cap);
		if (!buf)
			return -ENOMEM;
	}
	err = conn_get(ctx, &c);
	if (err)
		goto out_free;
	err = lp_exchange(c->fd, cmd, arg, size, extra, extra_len, buf, cap,
			  &got, NULL, &ctx->spin);
	conn_put(ctx, c, err);
	if (err || !got)
		goto out_free;
	st = got < size ? got : size;
	memcpy(arg, buf, st);
	err = scatter_extras(cmd, arg, buf + st, got - st);
out_free:
	if (buf != small)
		free(buf);
	return err;
}

static struct lp_arena *arena_find(struct ptask_ctx *ctx, uint64_t id)
{
	struct lp_arena *a;

	for (a = ctx->arenas; a; a = a->next)
		if (a->id == id)
			return a;
	return NULL;
}

/* Note a mapping in arena @m->arena, mapping the arena on first use. */
static int arena_use(struct ptask_ctx *ctx, const struct ptaskd_map *m,
		     int fd, struct lp_arena **out)
{
	struct lp_arena *a;
	int err = 0;

	pthread_mutex_lock(&ctx->lock);
	a = arena_find(ctx, m->arena);
	if (a) {
		a->refs++;
		goto out_unlock;
	}
	err = fd < 0 ? -EPROTO : -ENOMEM;
	a = fd < 0 ? NULL : calloc(1, sizeof(*a));
	if (!a)
		goto out_unlock;
	a->base = mmap(NULL, m->arena_bytes, PROT_READ | PROT_WRITE,
		       MAP_SHARED, fd, 0);
	if (a->base == MAP_FAILED) {
		err = -errno;
		free(a);
		a = NULL;
		goto out_unlock;
	}
	a->id = m->arena;
	a->fd = fd;
	fd = -1;
	a->bytes = m->arena_bytes;
	a->own = m->flags & PTASKD_MAP_OWN;
	a->refs = 1;
	a->next = ctx->arenas;
	ctx->arenas = a;
	err = 0;
out_unlock:
	pthread_mutex_unlock(&ctx->lock);
	if (fd >= 0)	/* we had it already */
		close(fd);
	*out = a;
	return err;
}

static int u_map(struct ptask_ctx *ctx, uint32_t handle, uint64_t mmap_offset,
		 uint64_t bytes, void **addr, void **cookie)
{
	struct ptaskd_map m = { .handle = handle };
	struct lp_arena *a;
	struct lp_conn *c;
	size_t got = 0;
	int fd = -1, err;

	(void)mmap_offset;
	err = conn_get(ctx, &c);
	if (err)
		return err;
	err = lp_exchange(c->fd, PTASKD_OP_MAP, &m, sizeof(m), NULL, 0, &m,
			  sizeof(m), &got, &fd, &ctx->spin);
	conn_put(ctx, c, err);
	if (!err && (got != sizeof(m) || m.offset + m.bytes > m.arena_bytes ||
		     m.bytes < bytes))
		err = -EPROTO;
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	err = arena_use(ctx, &m, fd, &a);
	if (err)
		return err;
	*addr = a->base + m.offset;
	*cookie = a;
	return 0;
}

/*
 * A datablock whose arena a ring's completion named (@mem): its address,
 * if that arena is mapped here already; -ENOENT if not (u_map asks).
 */
static int u_map_at(struct ptask_ctx *ctx, const struct lp_mem *mem,
		    uint64_t bytes, void **addr, void **cookie)
{
	struct lp_arena *a;

	pthread_mutex_lock(&ctx->lock);
	a = arena_find(ctx, mem->arena);
	if (a && (mem->offset > a->bytes || bytes > a->bytes - mem->offset))
		a = NULL;	/* not what the daemon said before: ask */
	if (a)
		a->refs++;
	pthread_mutex_unlock(&ctx->lock);
	if (!a)
		return -ENOENT;
	*addr = a->base + mem->offset;
	*cookie = a;
	return 0;
}

static void u_unmap(struct ptask_ctx *ctx, void *addr, uint64_t bytes,
		    void *cookie)
{
	struct lp_arena *a = cookie, **pp;

	(void)addr;
	(void)bytes;
	pthread_mutex_lock(&ctx->lock);
	/*
	 * With rings, ordinary arenas stay mapped for the context's life;
	 * an own arena is one datablock's, never reused.
	 */
	if (--a->refs || (!ctx->rings_off && !a->own &&
			  a->bytes <= LP_ARENA_KEEP_BYTES)) {
		pthread_mutex_unlock(&ctx->lock);
		return;
	}
	for (pp = &ctx->arenas; *pp; pp = &(*pp)->next) {
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	munmap(a->base, a->bytes);
	close(a->fd);
	free(a);
}

static void u_close(struct ptask_ctx *ctx)
{
	struct lp_conn *c;
	struct lp_arena *a;

	lp_rings_close(ctx);
	/* What a program sees of calls it did not wait for. */
	if (ctx->async_err)
		fprintf(stderr, "libptask: %llu asynchronous push(es) failed in ptaskd (first: %s); ptask_sync() says so\n",
			(unsigned long long)ctx->async_failed,
			strerror(-ctx->async_err));
	if (ctx->release_failed)
		fprintf(stderr, "libptask: %llu datablock release(s) failed in ptaskd (first: %s)\n",
			(unsigned long long)ctx->release_failed,
			strerror(-ctx->release_err));

	while ((c = ctx->idle)) {
		ctx->idle = c->next;
		close(c->fd);
		free(c);
	}
	while ((a = ctx->arenas)) {
		ctx->arenas = a->next;
		munmap(a->base, a->bytes);
		close(a->fd);
		free(a);
	}
	free(ctx->socket_path);
}

const struct lp_transport lp_user_transport = {
	.call = u_call,
	.map = u_map,
	.map_at = u_map_at,
	.unmap = u_unmap,
	.close = u_close,
	.push_async = lp_ring_push_async,
	.async_wait = lp_ring_async_wait,
};

/* PTASK_SPIN_US: microseconds, 0..1000000; anything else the default. */
static uint64_t spin_from_env(void)
{
	const char *env = getenv("PTASK_SPIN_US");
	unsigned long us = LP_SPIN_US_DEFAULT;
	char *end;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return 0;
	if (env && *env) {
		errno = 0;
		us = strtoul(env, &end, 10);
		if (*end || errno || us > 1000000)
			us = LP_SPIN_US_DEFAULT;
	}
	return (uint64_t)us * 1000;
}

/* PTASK_TRANSPORT: "ring" (or unset, or empty) or "socket". */
static int transport_from_env(bool *rings_off)
{
	const char *env = getenv("PTASK_TRANSPORT");

	*rings_off = false;
	if (!env || !*env || !strcmp(env, "ring"))
		return 0;
	if (strcmp(env, "socket"))
		return -EINVAL;
	*rings_off = true;
	return 0;
}

int lp_user_open(struct ptask_ctx *ctx, const char *socket_path)
{
	struct lp_conn *c;
	int err;

	err = transport_from_env(&ctx->rings_off);
	if (err)
		return err;
	ctx->socket_path = strdup(socket_path);
	if (!ctx->socket_path)
		return -ENOMEM;
	ctx->token = 0;
	ctx->spin.ns = spin_from_env();
	err = conn_open(socket_path, &ctx->token, &c);
	if (err) {
		free(ctx->socket_path);
		ctx->socket_path = NULL;
		return err;
	}
	ctx->idle = c;
	ctx->t = &lp_user_transport;
	ctx->mode = PTASK_MODE_USER;
	return 0;
}
