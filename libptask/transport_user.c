// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * transport_user.c - libptask's user mode: ptaskd's UNIX socket
 * (libptask/proto.h).
 *
 * A connection carries one call at a time, so the context keeps a pool:
 * a call takes an idle connection or opens one more, attached to the
 * context's client with its token; calls from several threads therefore
 * block independently, as ioctls on one /dev/ptask fd do.
 *
 * Datablock memory: MAP answers with the arena (a memfd) and the offset;
 * the arena is mapped whole, once, while any datablock in it is mapped
 * here, so mapping a datablock costs one round trip and no mmap.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "internal.h"
#include "proto.h"

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
	struct lp_arena *next;
};

static int write_full(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -ENOTCONN;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read @len bytes; the first read may carry one fd (*@fd, else -1). */
static int read_full(int fd, void *buf, size_t len, int *passed)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	uint8_t *p = buf;

	if (passed)
		*passed = -1;
	while (len) {
		struct iovec iov = { .iov_base = p, .iov_len = len };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
		struct cmsghdr *cm;
		ssize_t n;

		if (passed) {
			msg.msg_control = ctl.buf;
			msg.msg_controllen = sizeof(ctl.buf);
		}
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -ENOTCONN;
		for (cm = passed ? CMSG_FIRSTHDR(&msg) : NULL; cm;
		     cm = CMSG_NXTHDR(&msg, cm))
			if (cm->cmsg_level == SOL_SOCKET &&
			    cm->cmsg_type == SCM_RIGHTS)
				memcpy(passed, CMSG_DATA(cm), sizeof(int));
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * One exchange on @fd: send header + @a (@alen) + @b (@blen); read the
 * reply header and up to @cap bytes of payload into @out (more is an
 * error).  Returns the reply's err, or -ENOTCONN / -EPROTO; *@got is the
 * payload length.
 */
static int exchange(int fd, uint32_t op, const void *a, size_t alen,
		    const void *b, size_t blen, void *out, size_t cap,
		    size_t *got, int *passed)
{
	struct ptaskd_hdr h = {
		.magic = PTASKD_PROTO_MAGIC,
		.op = op,
		.len = (uint32_t)(alen + blen),
	};
	int err;

	if (alen + blen > PTASKD_MSG_MAX)
		return -E2BIG;
	err = write_full(fd, &h, sizeof(h));
	if (!err && alen)
		err = write_full(fd, a, alen);
	if (!err && blen)
		err = write_full(fd, b, blen);
	if (!err)
		err = read_full(fd, &h, sizeof(h), passed);
	if (err)
		return err;
	if (h.magic != PTASKD_PROTO_MAGIC || h.op != op || h.len > cap) {
		if (passed && *passed >= 0)
			close(*passed);
		return -EPROTO;
	}
	err = h.len ? read_full(fd, out, h.len, NULL) : 0;
	if (err)
		return err;
	*got = h.len;
	return h.err;
}

/* A new connection; HELLO with @token (0: a new client). */
static int conn_open(const char *path, uint64_t *token, struct lp_conn **out)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct ptaskd_hello h = {
		.version = PTASKD_PROTO_VERSION,
		.token = *token,
	};
	struct lp_conn *c;
	size_t got = 0;
	int err;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	strcpy(addr.sun_path, path);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		err = -errno;
		goto err_free;
	}
	if (connect(c->fd, (struct sockaddr *)&addr, sizeof(addr))) {
		err = -errno;
		goto err_close;
	}
	err = exchange(c->fd, PTASKD_OP_HELLO, &h, sizeof(h), NULL, 0, &h,
		       sizeof(h), &got, NULL);
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

static int u_call(struct ptask_ctx *ctx, unsigned int cmd, void *arg)
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
	err = exchange(c->fd, cmd, arg, size, extra, extra_len, buf, cap, &got,
		       NULL);
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
	err = exchange(c->fd, PTASKD_OP_MAP, &m, sizeof(m), NULL, 0, &m,
		       sizeof(m), &got, &fd);
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

static void u_unmap(struct ptask_ctx *ctx, void *addr, uint64_t bytes,
		    void *cookie)
{
	struct lp_arena *a = cookie, **pp;

	(void)addr;
	(void)bytes;
	pthread_mutex_lock(&ctx->lock);
	if (--a->refs) {
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
	.unmap = u_unmap,
	.close = u_close,
};

int lp_user_open(struct ptask_ctx *ctx, const char *socket_path)
{
	struct lp_conn *c;
	int err;

	ctx->socket_path = strdup(socket_path);
	if (!ctx->socket_path)
		return -ENOMEM;
	ctx->token = 0;
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
