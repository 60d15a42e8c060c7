// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * server.c - see server.h.
 *
 * Identity: SO_PEERCRED gives the peer's pid, uid and gid when it
 * connects; its supplementary groups come from /proc/<pid>/status and
 * its nice value from getpriority(), read at HELLO.  Root (uid 0) gets
 * the two capabilities the core asks about, as CAP_DAC_OVERRIDE and
 * CAP_SYS_NICE usually go with it.
 *
 * Rings: a connection that asks for one (PTASKD_OP_RING_SETUP) is handed
 * to ring_server.c, its thread with it, for the rest of its life.
 *
 * Executor connections (pd_server_adopt; uapi/ptaskd.h, "Executors per
 * uid"): one end of a socketpair ptaskd gave an executor process it
 * started; the identity is the one the supervisor gave, not SO_PEERCRED
 * (a socketpair's peer credentials are ptaskd's own).  With no engine in
 * this process (pd_server_start's @engine NULL) nothing is helped with:
 * what a call made ready wakes the executors at once.
 *
 * Locking: pd_server.lock protects the connection list and count (and
 * the INFO answer); a connection's own fields belong to its thread.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "common/msg.h"
#include "common/spin.h"
#include "daemon/engine/engine.h"
#include "daemon/log.h"
#include "daemon/user/ns_admin.h"
#include "daemon/user/request.h"
#include "daemon/user/ring_server.h"
#include "daemon/user/server.h"

#define MAX_GROUPS	256
/* Requests up to this size (push, pull, map: tens of bytes) need no malloc. */
#define RBUF_BYTES	4096

/*
 * @rbuf holds what was received and not yet read: @rpos to @rlen.  A
 * request usually arrives whole (libptask sends it with one sendmsg), so
 * one recv reads it, header and payload.
 */
struct pd_conn {
	struct ptask_caller who;	/* first: in_group() finds the conn */
	struct pd_server *server;
	int fd;
	bool exec_conn;			/* pd_server_adopt's: @who is given */
	int32_t served;			/* ... serving that process alone; -1 */
	struct pd_client *client;
	uint32_t groups[MAX_GROUPS];
	uint32_t ngroups;
	struct pd_conn *next;
	uint64_t answered_ns;
	struct pd_wake_defer defer;	/* its calls' held-back wake-ups */
	struct pc_spin_hist hist;	/* by the kind answered last */
	unsigned int answered_kind;	/* pc_spin_kind of that call */
	size_t rpos;
	size_t rlen;
	uint8_t rbuf[RBUF_BYTES];
};

struct pd_server {
	struct pd_ns *ns;
	struct pd_engine *engine;
	int lfd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_t acceptor;
	pthread_mutex_t lock;
	pthread_cond_t idle;
	struct pd_conn *conns;
	uint32_t nconns;
	volatile bool stopping;
	struct ptaskd_info info;
	uint64_t spin_ns;
	uint32_t max_spinners;
	uint32_t spinners;		/* atomic */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static bool conn_in_group(const struct ptask_caller *who, u32 gid)
{
	const struct pd_conn *c = (const struct pd_conn *)who;
	uint32_t i;

	if (who->gid == gid)
		return true;
	for (i = 0; i < c->ngroups; i++)
		if (c->groups[i] == gid)
			return true;
	return false;
}

/* Supplementary groups of the peer, from /proc/<pid>/status. */
static void read_groups(struct pd_conn *c)
{
	char path[64], line[4096];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", c->who.pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 7, *end;

		if (strncmp(line, "Groups:", 7))
			continue;
		while (c->ngroups < MAX_GROUPS) {
			unsigned long g = strtoul(p, &end, 10);

			if (end == p)
				break;
			c->groups[c->ngroups++] = (uint32_t)g;
			p = end;
		}
		break;
	}
	fclose(f);
}

static int fill_caller(struct pd_conn *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int nice;

	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		return -errno;
	c->who.uid = cred.uid;
	c->who.gid = cred.gid;
	c->who.pid = cred.pid;
	errno = 0;
	nice = getpriority(PRIO_PROCESS, (id_t)cred.pid);
	c->who.nice = errno ? 0 : nice;
	c->who.dac_override = cred.uid == 0;
	c->who.sys_nice = cred.uid == 0;
	c->who.in_group = conn_in_group;
	read_groups(c);
	return 0;
}

/* Did the peer hang up (asked while its call sleeps)? */
static bool conn_gone(void *arg)
{
	struct pd_conn *c = arg;
	struct pollfd p = { .fd = c->fd, .events = POLLRDHUP };

	if (c->server->stopping)
		return true;
	return poll(&p, 1, 0) > 0 &&
	       (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/*
 * Receive into @c->rbuf.  With @spin (waiting for the next call, see
 * server.h), poll for it until spin_ns after the last answer first, if
 * no more than max_spinners threads are polling already.
 */
static ssize_t conn_recv(struct pd_conn *c, bool spin)
{
	struct pd_server *s = c->server;
	void *p = c->rbuf + c->rlen;
	size_t room = sizeof(c->rbuf) - c->rlen;
	uint64_t deadline = c->answered_ns + s->spin_ns;
	ssize_t n = -1;
	bool polled = false;

	if (!spin || !s->spin_ns || !pc_spin_worth(&c->hist, c->answered_kind))
		return recv(c->fd, p, room, 0);
	if (__atomic_add_fetch(&s->spinners, 1, __ATOMIC_RELAXED) <=
	    s->max_spinners) {
		polled = true;
		do {
			n = recv(c->fd, p, room, MSG_DONTWAIT);
			if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
				break;
			/*
			 * On a busy CPU, let whoever else is ready run first
			 * (without this, polling made a round trip 124 us
			 * instead of 13 on a 2-CPU machine with other work).
			 */
			sched_yield();
		} while (now_ns() < deadline && !s->stopping);
	}
	__atomic_sub_fetch(&s->spinners, 1, __ATOMIC_RELAXED);
	if (polled && (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)))
		return n;
	return recv(c->fd, p, room, 0);
}

/*
 * Have at least @need (<= RBUF_BYTES) bytes in @c->rbuf from @c->rpos;
 * @spin: they are the next call (conn_recv).
 */
static int rbuf_fill(struct pd_conn *c, size_t need, bool spin)
{
	if (c->rlen - c->rpos >= need)
		return 0;
	memmove(c->rbuf, c->rbuf + c->rpos, c->rlen - c->rpos);
	c->rlen -= c->rpos;
	c->rpos = 0;
	while (c->rlen < need) {
		ssize_t n = conn_recv(c, spin);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -ECONNRESET;
		c->rlen += (size_t)n;
	}
	return 0;
}

/* Read @len bytes into @buf: what is buffered first, then the socket. */
static int read_full(struct pd_conn *c, void *buf, size_t len)
{
	size_t have = c->rlen - c->rpos;
	uint8_t *p = buf;

	if (have > len)
		have = len;
	memcpy(p, c->rbuf + c->rpos, have);
	c->rpos += have;
	p += have;
	len -= have;
	while (len) {
		ssize_t n = recv(c->fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Send a reply: header, payload, and (optionally) one fd with it. */
static int send_reply(struct pd_conn *c, uint32_t op, int err,
		      const void *payload, size_t len, int pass_fd)
{
	struct ptaskd_hdr h = {
		.magic = PTASKD_PROTO_MAGIC,
		.op = op,
		.err = err,
		.len = (uint32_t)len,
	};
	struct iovec iov = { .iov_base = (void *)payload, .iov_len = len };

	return pc_msg_send(c->fd, &h, &iov, 1, pass_fd);
}

/*
 * The call just answered made ptasks ready (a push, a CPU ptask's
 * completion...): this thread takes them itself and runs the short ones
 * (pd_engine_help), while its client reads the answer and sends its next
 * call (typically the pull that waits for the result).  The taker was not
 * woken for them (c->defer held the wake-up back); it is when work may be
 * left over.
 */
static void help_engine(struct pd_conn *c)
{
	bool left_over = c->server->stopping || !c->server->engine ||
			 pd_engine_help(c->server->engine, &c->defer,
					pd_wake_defer_take);

	/* Taken either way: the next call starts with nothing held back. */
	if (pd_wake_defer_take(&c->defer) || left_over)
		pd_ns_wake_executor(c->server->ns);
}

/* help_engine for a ring (struct pd_ring_host.help). */
static void help_engine_cb(void *arg)
{
	help_engine(arg);
}

/*
 * PTASKD_OP_RING_SETUP: the connection becomes the ring's lifeline and
 * this thread the ring's (ring_server.h) until it ends, which ends the
 * connection too (-ECONNRESET: nothing to log).  A refused setup is
 * answered and the connection goes on as before.
 */
static int handle_ring_setup(struct pd_conn *c, const void *payload,
			     size_t len)
{
	struct pd_ring_host host = {
		.fd = c->fd, .who = &c->who, .client = c->client,
		.defer = &c->defer, .help = help_engine_cb, .help_arg = c,
		.stopping = &c->server->stopping,
		.spin_ns = c->server->spin_ns,
		.spinners = &c->server->spinners,
		.max_spinners = c->server->max_spinners,
		.exec = c->exec_conn,
	};
	struct ptaskd_ring_setup rs;
	struct pd_ring *r;
	int fd = -1, err;

	err = pd_ring_create(&host, payload, len, &rs, &fd, &r);
	if (err)
		return send_reply(c, PTASKD_OP_RING_SETUP, err, NULL, 0, -1);
	err = send_reply(c, PTASKD_OP_RING_SETUP, 0, &rs, sizeof(rs), fd);
	close(fd);
	if (!err) {
		pthread_setname_np(pthread_self(), "pd-ring");
		pd_ring_serve(r);
	}
	pd_ring_destroy(r);
	return err ? err : -ECONNRESET;
}

static void place_of(struct pd_conn *c, uint32_t handle,
		     struct ptaskd_exec_place *p)
{
	struct pd_map_info mi;

	memset(p, 0, sizeof(*p));
	/* held until the executor read its death notice (ns_exec_hold.c) */
	if (!handle || pd_ns_exec_place(c->client, handle, &mi))
		return;
	p->arena = mi.arena;
	p->arena_bytes = mi.arena_bytes;
	p->offset = mi.offset;
	p->flags = mi.own ? PTASKD_MAP_OWN : 0;
}

/*
 * An executor connection's take and create replies say where their
 * datablocks are (uapi/ptaskd.h, "Executors per uid"): one
 * struct ptaskd_exec_place per port record, or one for the datablock
 * made, after the rest of the reply.  -ENOMEM.
 */
static int add_places(struct pd_conn *c, const struct pd_request *req,
		      void **out, size_t *out_len)
{
	struct ptaskd_exec_place *places;
	uint32_t i, n;
	uint8_t *grown;

	if (req->cmd == PTASK_IOC_EXEC_TAKE)
		n = req->arg.take.n_ports;
	else if (req->cmd == PTASK_IOC_DATABLOCK_CREATE)
		n = 1;
	else
		return 0;
	grown = realloc(*out, *out_len + (size_t)n * sizeof(*places));
	if (!grown)
		return -ENOMEM;
	places = (struct ptaskd_exec_place *)(grown + *out_len);
	if (req->cmd == PTASK_IOC_DATABLOCK_CREATE)
		place_of(c, req->arg.db_create.handle, places);
	for (i = 0; req->cmd == PTASK_IOC_EXEC_TAKE && i < n; i++)
		place_of(c, req->take_ports[i].datablock, &places[i]);
	*out = grown;
	*out_len += (size_t)n * sizeof(*places);
	return 0;
}

static int handle_ioctl(struct pd_conn *c, uint32_t op, const void *payload,
			size_t len)
{
	struct pd_call_ctx ctx = {
		.cancel = conn_gone, .cancel_arg = c, .defer = &c->defer,
	};
	struct pd_request req;
	void *out = NULL;
	size_t out_len = 0;
	int err;

	err = pd_request_parse(op, payload, len, &req);
	if (!err)
		err = pd_request_prepare(&req);
	/* an executor's take: the notices it read before are processed */
	if (!err && c->exec_conn && req.cmd == PTASK_IOC_EXEC_TAKE)
		pd_ns_exec_took(c->client);
	if (!err)
		err = pd_ns_call(c->client, &c->who, req.cmd, &req.arg, &req.io,
				 &ctx);
	if (!err && c->exec_conn && req.cmd == PTASK_IOC_EXEC_FORGOTTEN)
		pd_ns_exec_forgotten(c->client, req.forgotten,
				     req.arg.forgotten.n_handles);
	/* Shutting down: hang up (the client sees -ENOTCONN), no answer. */
	if (err == -EINTR && c->server->stopping) {
		pd_request_free(&req);
		err = -ESHUTDOWN;
		goto out_help;
	}
	if (pd_request_reply(&req, err, &out, &out_len))
		err = -ENOMEM;
	if (!err && c->exec_conn && add_places(c, &req, &out, &out_len))
		err = -ENOMEM;
	pd_request_free(&req);
	err = send_reply(c, op, err, out, out_len, -1);
	free(out);
out_help:
	if (pd_wake_defer_take(&c->defer))
		help_engine(c);
	return err;
}

static int handle_map(struct pd_conn *c, const void *payload, size_t len)
{
	struct ptaskd_map m;
	struct pd_map_info mi;
	int err;

	if (len != sizeof(m))
		return send_reply(c, PTASKD_OP_MAP, -EINVAL, NULL, 0, -1);
	memcpy(&m, payload, sizeof(m));
	err = m.flags ? -EINVAL :
	      c->exec_conn ? pd_ns_exec_place(c->client, m.handle, &mi) :
	      pd_ns_map(c->client, m.handle, &mi);
	if (err)
		return send_reply(c, PTASKD_OP_MAP, err, NULL, 0, -1);
	/*
	 * The fd comes with every answer (SCM_RIGHTS dups it; the namespace
	 * keeps its own): a client that unmapped an arena and closed its fd
	 * can map it again without the daemon tracking what it kept.
	 */
	m.flags = PTASKD_MAP_FD | (mi.own ? PTASKD_MAP_OWN : 0);
	m.arena = mi.arena;
	m.arena_bytes = mi.arena_bytes;
	m.offset = mi.offset;
	m.bytes = mi.bytes;
	return send_reply(c, PTASKD_OP_MAP, 0, &m, sizeof(m), mi.arena_fd);
}

/* PTASKD_OP_EXEC_REGISTER: the executor of the connection's uid. */
static int handle_exec_register(struct pd_conn *c, const void *payload,
				size_t len)
{
	struct ptaskd_exec_register r;
	int err;

	if (len != sizeof(r))
		return send_reply(c, PTASKD_OP_EXEC_REGISTER, -EINVAL, NULL, 0,
				  -1);
	memcpy(&r, payload, sizeof(r));
	if (!c->exec_conn)
		err = -EPERM;
	else if (r.flags || r.uid || r.pid || !r.n_accels ||
		 r.n_accels > PD_MAX_DEVICES)
		err = -EINVAL;
	else
		err = pd_ns_exec_register(c->client, r.n_accels, c->who.uid,
					  c->served);
	if (err)
		return send_reply(c, PTASKD_OP_EXEC_REGISTER, err, NULL, 0, -1);
	pthread_mutex_lock(&c->server->lock);
	if (c->server->info.ndev < r.n_accels)
		c->server->info.ndev = r.n_accels;
	pthread_mutex_unlock(&c->server->lock);
	if (c->served >= 0)
		pd_log_info("executor for uid %u process %d (pid %d) registered with %u device(s)",
			    c->who.uid, (int)c->served, c->who.pid,
			    r.n_accels);
	else
		pd_log_info("executor for uid %u (pid %d) registered with %u device(s)",
			    c->who.uid, c->who.pid, r.n_accels);
	r.uid = c->who.uid;
	r.pid = c->served;
	return send_reply(c, PTASKD_OP_EXEC_REGISTER, 0, &r, sizeof(r), -1);
}

/* PTASKD_OP_EXEC_CONNECT: one more executor connection, as an fd. */
static int handle_exec_connect(struct pd_conn *c, size_t len)
{
	int sv[2], err;

	if (len)
		return send_reply(c, PTASKD_OP_EXEC_CONNECT, -EINVAL, NULL, 0,
				  -1);
	if (!c->exec_conn)
		return send_reply(c, PTASKD_OP_EXEC_CONNECT, -EPERM, NULL, 0,
				  -1);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return send_reply(c, PTASKD_OP_EXEC_CONNECT, -errno, NULL, 0,
				  -1);
	err = pd_server_adopt(c->server, sv[0], &c->who, c->served);
	if (err) {
		close(sv[1]);
		return send_reply(c, PTASKD_OP_EXEC_CONNECT, err, NULL, 0, -1);
	}
	err = send_reply(c, PTASKD_OP_EXEC_CONNECT, 0, NULL, 0, sv[1]);
	close(sv[1]);
	return err;
}

static int handle_info(struct pd_conn *c)
{
	static const char *const policy_names[] = PTASK_POLICY_NAMES;
	struct pd_engine_stats st;
	struct ptaskd_info info;
	uint32_t i, policy;

	pthread_mutex_lock(&c->server->lock);
	info = c->server->info;
	pthread_mutex_unlock(&c->server->lock);
	/* The policy in force: PTSched's, unless it says "ptaskd's own". */
	policy = pd_ns_admin_policy(c->server->ns);
	if (policy != PTASK_POLICY_DEFAULT && policy < __PTASK_POLICY_MAX)
		snprintf(info.policy, sizeof(info.policy), "%s",
			 policy_names[policy]);
	pd_ns_counts(c->server->ns, info.counts);
	/* Executors per uid: their engines' counters are their own. */
	if (!c->server->engine)
		return send_reply(c, PTASKD_OP_INFO, 0, &info, sizeof(info),
				  -1);
	pd_engine_get_stats(c->server->engine, &st);
	info.invocations = st.invocations;
	info.failed = st.failed;
	info.migrations = st.migrations;
	info.bytes_h2d = st.bytes_h2d;
	info.bytes_d2h = st.bytes_d2h;
	info.bytes_d2d = st.bytes_d2d;
	info.evictions = st.evictions;
	info.gpu_ns = st.gpu_ns;
	for (i = 0; i < PTASKD_INFO_DEVICES && i < PD_MAX_DEVICES; i++)
		info.per_device[i] = st.per_device[i];
	return send_reply(c, PTASKD_OP_INFO, 0, &info, sizeof(info), -1);
}

/* What an administrator changed, for the log (who did it, and when). */
static void log_admin(const struct pd_conn *c, const struct pd_admin_req *req)
{
	switch (req->op) {
	case PTASKD_OP_SET_POLICY:
		pd_log_info("pid %d set the policy to %s", c->who.pid,
			    req->policy.policy);
		break;
	case PTASKD_OP_SCHED_SET:
		pd_log_info("pid %d changed PTSched's settings (mask 0x%x)",
			    c->who.pid, req->sched_set.mask);
		break;
	case PTASKD_OP_SET_PRIO:
		pd_log_info("pid %d set %s %d's %s to %u", c->who.pid,
			    req->prio.target == PTASKD_PRIO_PTASK ? "ptask" : "pid",
			    req->prio.target == PTASKD_PRIO_PTASK ?
			    (int)req->prio.handle : req->prio.pid,
			    req->prio.target == PTASKD_PRIO_PTASK ? "priority" :
			    "weight", req->prio.value);
		break;
	}
}

/* PTSched's administration (ns_admin.h): parse, run, answer. */
static int handle_admin(struct pd_conn *c, uint32_t op, const void *payload,
			size_t len)
{
	struct pd_admin_req req;
	size_t out_len = 0;
	void *out = NULL;
	int err;

	err = pd_admin_parse(op, payload, len, &req);
	if (!err)
		err = pd_ns_admin(c->server->ns, &c->who, &req, &out, &out_len);
	if (!err)
		log_admin(c, &req);
	err = send_reply(c, op, err, out, out_len, -1);
	free(out);
	return err;
}

/* The first message: a new client, or one more connection of one. */
static int handle_hello(struct pd_conn *c, const void *payload, size_t len)
{
	struct ptaskd_hello h;
	int err;

	if (len != sizeof(h))
		return -EINVAL;
	memcpy(&h, payload, sizeof(h));
	if (h.version != PTASKD_PROTO_VERSION || h.flags || h.reserved)
		err = -EPROTO;
	else if (h.token)
		err = pd_ns_client_attach(c->server->ns, h.token, c->who.pid,
					  &c->client);
	else
		err = pd_ns_client_open(c->server->ns, &c->who, &c->client);
	if (!err) {
		h.token = c->client->token;
		h.pid = getpid();
	}
	send_reply(c, PTASKD_OP_HELLO, err, err ? NULL : &h,
		   err ? 0 : sizeof(h), -1);
	return err;
}

/*
 * Read one message.  *@payload is in @c->rbuf, valid until the next read,
 * or malloc'd when larger (then *@owned: the caller frees it).  -errno
 * ends the connection.
 */
static int read_message(struct pd_conn *c, struct ptaskd_hdr *h,
			void **payload, bool *owned)
{
	bool spin;
	int err;

	*payload = NULL;
	*owned = false;
	spin = c->rlen == c->rpos;
	err = rbuf_fill(c, sizeof(*h), spin);
	if (err)
		return err;
	/* Spin after this kind of call next time only if this one came soon. */
	if (spin && c->server->spin_ns)
		pc_spin_learn(&c->hist, c->answered_kind,
			      now_ns() - c->answered_ns, c->server->spin_ns);
	memcpy(h, c->rbuf + c->rpos, sizeof(*h));
	c->rpos += sizeof(*h);
	if (h->magic != PTASKD_PROTO_MAGIC || h->err || h->len > PTASKD_MSG_MAX)
		return -EPROTO;
	if (h->len <= RBUF_BYTES) {
		err = rbuf_fill(c, h->len, false);
		if (err)
			return err;
		*payload = c->rbuf + c->rpos;
		c->rpos += h->len;
		return 0;
	}
	*payload = malloc(h->len);
	if (!*payload)
		return -ENOMEM;
	*owned = true;
	return read_full(c, *payload, h->len);
}

static void serve(struct pd_conn *c)
{
	struct ptaskd_hdr h;
	void *payload = NULL;
	bool owned = false;
	int err;

	err = c->exec_conn ? 0 : fill_caller(c);
	if (!err)
		err = read_message(c, &h, &payload, &owned);
	if (!err)
		err = h.op == PTASKD_OP_HELLO ?
		      handle_hello(c, payload, h.len) : -EPROTO;
	if (owned)
		free(payload);
	if (err) {
		if (err != -ECONNRESET)
			pd_log_info("connection from pid %d refused: %s",
				    c->who.pid, strerror(-err));
		return;
	}
	c->answered_ns = now_ns();
	while (!c->server->stopping) {
		err = read_message(c, &h, &payload, &owned);
		if (err) {
			if (err != -ECONNRESET)
				pd_log_info("pid %d: connection closed: %s",
					    c->who.pid, strerror(-err));
			if (owned)
				free(payload);
			return;
		}
		if (h.op == PTASKD_OP_MAP)
			err = handle_map(c, payload, h.len);
		else if (h.op == PTASKD_OP_RING_SETUP)
			err = handle_ring_setup(c, payload, h.len);
		else if (h.op == PTASKD_OP_INFO)
			err = handle_info(c);
		else if (h.op == PTASKD_OP_EXEC_REGISTER)
			err = handle_exec_register(c, payload, h.len);
		else if (h.op == PTASKD_OP_EXEC_CONNECT)
			err = handle_exec_connect(c, h.len);
		else if (pd_admin_op(h.op))
			err = handle_admin(c, h.op, payload, h.len);
		else
			err = handle_ioctl(c, h.op, payload, h.len);
		if (owned)
			free(payload);
		if (err)
			return;
		c->answered_ns = now_ns();
		c->answered_kind = pc_spin_kind(h.op);
	}
}

static void conns_remove(struct pd_server *s, struct pd_conn *c)
{
	struct pd_conn **pp;

	pthread_mutex_lock(&s->lock);
	for (pp = &s->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	if (!--s->nconns)
		pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
}

static void *conn_thread(void *arg)
{
	struct pd_conn *c = arg;

	/* Detached: named by itself (top -H; a ring's thread is renamed). */
	pthread_setname_np(pthread_self(), "pd-conn");
	serve(c);
	if (c->client)
		pd_ns_client_put(c->client);
	conns_remove(c->server, c);
	close(c->fd);
	free(c);
	return NULL;
}

/*
 * A thread for connection @fd; @who: the identity pd_server_adopt gives
 * (NULL: SO_PEERCRED's, read by serve()).  -ENOMEM or -EAGAIN, @fd then
 * closed.
 */
static int start_conn(struct pd_server *s, int fd,
		      const struct ptask_caller *who, int32_t served)
{
	pthread_attr_t attr;
	struct pd_conn *c;
	pthread_t t;
	int err = 0;

	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->fd = fd;
	c->server = s;
	c->served = served;
	if (who) {
		c->who = *who;
		c->exec_conn = true;
	}
	pthread_mutex_lock(&s->lock);
	c->next = s->conns;
	s->conns = c;
	s->nconns++;
	pthread_mutex_unlock(&s->lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* Room for short jobs too (pd_engine_help): backend calls. */
	pthread_attr_setstacksize(&attr, 1 << 20);
	if (pthread_create(&t, &attr, conn_thread, c)) {
		pd_log_warn("no thread for a new connection");
		conns_remove(s, c);
		close(fd);
		free(c);
		err = -EAGAIN;
	}
	pthread_attr_destroy(&attr);
	return err;
}

int pd_server_adopt(struct pd_server *s, int fd,
		    const struct ptask_caller *who, int32_t served)
{
	struct ptask_caller w = *who;

	if (s->stopping) {
		close(fd);
		return -ESHUTDOWN;
	}
	/* An executor's: root's rights are root's executor's alone. */
	w.dac_override = w.uid == 0;
	w.sys_nice = w.uid == 0;
	return start_conn(s, fd, &w, served);
}

static void *accept_thread(void *arg)
{
	struct pd_server *s = arg;

	while (!s->stopping) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (!s->stopping)
				pd_log_err("accept: %s", strerror(errno));
			break;
		}
		start_conn(s, fd, NULL, -1);
	}
	return NULL;
}

/* Is someone listening on @path?  Removes a stale socket file. */
static int claim_path(const struct sockaddr_un *addr)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (!connect(fd, (const struct sockaddr *)addr, sizeof(*addr)))
		err = -EADDRINUSE;
	else if (errno == ECONNREFUSED)
		unlink(addr->sun_path);
	close(fd);
	return err;
}

int pd_server_start(struct pd_ns *ns, struct pd_engine *engine,
		    const char *path, mode_t mode, uint32_t spin_us,
		    const struct ptaskd_info *info, struct pd_server **out)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct pd_server *s;
	int err;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	strcpy(addr.sun_path, path);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ns = ns;
	s->engine = engine;
	s->info = *info;
	/* One CPU: a poller would only keep its client off it. */
	s->spin_ns = cpus >= 2 ? (uint64_t)spin_us * 1000 : 0;
	s->max_spinners = cpus >= 2 ? (uint32_t)(cpus / 2) : 0;
	pd_ns_set_call_spin(ns, s->spin_ns);
	strcpy(s->path, path);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->idle, NULL);
	err = claim_path(&addr);
	if (err)
		goto err_free;
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->lfd < 0) {
		err = -errno;
		goto err_free;
	}
	if (bind(s->lfd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    chmod(path, mode) || listen(s->lfd, 128)) {
		err = -errno;
		goto err_close;
	}
	err = -pthread_create(&s->acceptor, NULL, accept_thread, s);
	if (err)
		goto err_unlink;
	pthread_setname_np(s->acceptor, "pd-accept");
	*out = s;
	return 0;

err_unlink:
	unlink(path);
err_close:
	close(s->lfd);
err_free:
	pthread_cond_destroy(&s->idle);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return err;
}

void pd_server_set_info(struct pd_server *s, const struct ptaskd_info *info)
{
	pthread_mutex_lock(&s->lock);
	s->info = *info;
	pthread_mutex_unlock(&s->lock);
}

void pd_server_stop(struct pd_server *s)
{
	uint64_t held, beside, ahead, redone, past;
	struct pd_conn *c;

	s->stopping = true;
	shutdown(s->lfd, SHUT_RDWR);	/* wakes accept() */
	pthread_join(s->acceptor, NULL);
	pthread_mutex_lock(&s->lock);
	for (c = s->conns; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	while (s->nconns)
		pthread_cond_wait(&s->idle, &s->lock);
	pthread_mutex_unlock(&s->lock);
	close(s->lfd);
	unlink(s->path);
	pd_ring_stats(&held, &beside, &ahead, &redone, &past);
	pd_log_info("rings: %llu releases held back, %llu of them run beside a kernel; %llu pulls answered at their fence, %llu run again after it failed; %llu pulls answered before the releases held in front of them",
		    (unsigned long long)held, (unsigned long long)beside,
		    (unsigned long long)(ahead - redone),
		    (unsigned long long)redone, (unsigned long long)past);
	pthread_cond_destroy(&s->idle);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
