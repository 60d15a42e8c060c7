// SPDX-License-Identifier: GPL-2.0
/*
 * tunnel_test - record-stream tunnels in ptask.ko (uapi/ptask.h,
 * "Record-stream tunnels"): pushes of several clients gathered into one
 * batch at the threshold or at the timeout (the module's hrtimer), one
 * invocation for the batch, each pusher's records pulled back by ticket
 * (blocking until they are), a pusher killed mid-batch, and the refusals.
 * Needs root (CAP_SYS_ADMIN) to register the executor, driven by hand
 * from self->xfd:
 *
 *	clients: push =tunnel=> [plus1 (CPU)] =tunnel=> pull by slice
 *	executor xfd: EXEC_TAKE, adds 1 to every record byte, EXEC_COMPLETE
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "pt_harness.h"

#define STRIDE		64
#define CAP		64

FIXTURE(tunnel) {
	struct pt_env env;
	int fd;		/* a client */
	int fd2;	/* another client of the same graph */
	int xfd;	/* the executor */
	__u32 graph, tmpl, in, out;
};

static int tunnel_open(int fd, __u32 graph, __u32 src, __u32 dst, __u32 cap,
		       __u32 tmpl, __u64 bytes, __u32 records, __u64 timeout_ns,
		       __u32 *handle)
{
	struct ptask_channel_open a = {
		.size = sizeof(a), .flags = PTASK_CHANNEL_TUNNEL, .graph = graph,
		.src = src, .dst = dst, .capacity = cap, .template = tmpl,
		.tunnel_bytes = bytes, .tunnel_records = records,
		.tunnel_timeout_ns = timeout_ns,
	};
	int r = pt_ioctl(fd, PTASK_IOC_CHANNEL_OPEN, &a);

	if (!r && handle)
		*handle = a.handle;
	return r;
}

static int pull_slice(int fd, __u32 channel, __u32 ticket, __u32 flags,
		      __u64 timeout_ns, struct ptask_pull *out)
{
	struct ptask_pull a = {
		.size = sizeof(a), .flags = PTASK_PULL_SLICE | flags,
		.channel = channel, .datablock = ticket,
		.timeout_ns = timeout_ns,
	};
	int r = pt_ioctl(fd, PTASK_IOC_PULL, &a);

	if (!r && out)
		*out = a;
	return r;
}

/* The graph, named @name, with a records threshold and a timeout. */
static int build(struct _test_data_tunnel *s, const char *name, __u32 records,
		 __u64 timeout_ns)
{
	char nb[PTASK_NAME_MAX];
	__u32 p, pin, pout;
	int r;

	r = pt_graph_open(s->fd, pt_name(nb, name), PTASK_GRAPH_CREATE, 0600,
			  &s->graph);
	r = r ?: pt_template_open(s->fd, s->graph, PTASK_TEMPLATE_RECORDS,
				  PTASK_BIND_GLOBAL, STRIDE, CAP, 1, 1, "rec",
				  &s->tmpl);
	r = r ?: pt_ptask_open_cpu(s->fd, s->graph, 2, "plus1", &p);
	r = r ?: pt_port_open(s->fd, p, PTASK_PORT_INPUT, 0, s->tmpl, 0, 0,
			      "in", &pin, NULL);
	r = r ?: pt_port_open(s->fd, p, PTASK_PORT_OUTPUT, 0, 0, 1, 0, "out",
			      &pout, NULL);
	r = r ?: tunnel_open(s->fd, s->graph, 0, pin, 16, 0, 0, records,
			     timeout_ns, &s->in);
	r = r ?: tunnel_open(s->fd, s->graph, pout, 0, 4, s->tmpl, 0, 0, 0,
			     &s->out);
	r = r ?: pt_graph_run(s->fd, s->graph);
	if (!r) {
		__u32 g2;

		r = pt_graph_open(s->fd2, nb, 0, 0, &g2);
	}
	return r;
}

/* A datablock of @records records, byte k of record i = @seed + i + k. */
static int make_records(struct pt_env *env, int fd, __u32 records, __u8 seed,
			__u32 *handle)
{
	__u64 off;
	__u8 *m;
	int r = pt_db_create(fd, (__u64)CAP * STRIDE, 0, records, handle, &off,
			     NULL);

	if (r)
		return r;
	m = pt_env_map(env, fd, off, (size_t)CAP * STRIDE);
	if (!m)
		return -errno;
	for (__u32 i = 0; i < records; i++)
		for (__u32 k = 0; k < STRIDE; k++)
			m[i * STRIDE + k] = (__u8)(seed + i + k);
	pt_env_unmap(env, m);
	return 0;
}

/* Is the slice @p (pulled) @records records of mkrec(@seed) plus 1? */
static int check_slice(struct pt_env *env, int fd, const struct ptask_pull *p,
		       __u32 records, __u8 seed)
{
	__u8 *m;
	int r = 0;

	if (p->records != records || p->bytes != (__u64)records * STRIDE)
		return -EPROTO;
	m = pt_env_map(env, fd, p->mmap_offset, p->bytes);
	if (!m)
		return -errno;
	for (__u32 i = 0; i < records && !r; i++)
		for (__u32 k = 0; k < STRIDE; k++)
			if (m[i * STRIDE + k] != (__u8)(seed + i + k + 1))
				r = -EBADMSG;
	pt_env_unmap(env, m);
	return r;
}

static struct ptask_invocation inv[PT_EXEC_BATCH];
static struct ptask_invocation_port ports[PT_EXEC_PORTS];

/*
 * The executor: takes one invocation (waiting up to @ms), checks the
 * batch's head (@records, if not 0), and emits a new datablock with every
 * record byte + 1.
 */
static int run_one(struct pt_env *env, int xfd, unsigned int ms, __u64 records)
{
	const struct ptask_invocation_port *in = NULL;
	struct ptask_exec_output o = { 0 };
	struct ptask_tunnel_head head;
	__u32 n_inv, n_ports, db;
	__u8 *src, *dst;
	__u64 off;
	int r;

	r = pt_exec_take(xfd, 0, pt_deadline_ms(ms), inv, 1, ports,
			 PT_EXEC_PORTS, &n_inv, &n_ports);
	if (r)
		return r;
	for (__u32 i = 0; i < inv[0].n_ports; i++) {
		const struct ptask_invocation_port *p = &ports[inv[0].first_port + i];

		if (p->kind == PTASK_PORT_OUTPUT)
			o.index = p->index;
		else
			in = p;
	}
	if (!in || in->bytes < sizeof(head))
		return -EPROTO;
	src = pt_env_map(env, xfd, in->mmap_offset, in->bytes);
	if (!src)
		return -errno;
	memcpy(&head, src, sizeof(head));
	if ((records && head.records != records) || head.records != in->records ||
	    head.stride != STRIDE || head.reserved ||
	    in->bytes != sizeof(head) + head.records * STRIDE)
		return -EPROTO;
	r = pt_db_create(xfd, in->bytes, 0, in->records, &db, &off, NULL);
	if (r)
		return r;
	dst = pt_env_map(env, xfd, off, in->bytes);
	if (!dst)
		return -errno;
	memcpy(dst, src, sizeof(head));
	for (__u64 b = sizeof(head); b < in->bytes; b++)
		dst[b] = (__u8)(src[b] + 1);
	pt_env_unmap(env, dst);
	pt_env_unmap(env, src);
	o.datablock = db;
	return pt_exec_complete(xfd, inv[0].id, 0, 1000, &o, 1);
}

FIXTURE_SETUP(tunnel)
{
	PT_ENV_SETUP(&self->env);
	if (geteuid() != 0)
		SKIP(pt_skip_exit(), "needs root (CAP_SYS_ADMIN) to register an executor");
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
	self->fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd2);
	self->xfd = pt_env_open(&self->env);
	ASSERT_LE(0, self->xfd);
	ASSERT_PT(0, pt_nl_register(self->xfd));
}

FIXTURE_TEARDOWN(tunnel)
{
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

/* Two clients reach the records threshold: one invocation, split back. */
TEST_F(tunnel, threshold_batch_split_by_ticket)
{
	struct ptask_pull pa, pb, x;
	__u32 da, db;

	ASSERT_PT(0, build(self, "tun_thr", 4, 1000000000ULL));
	ASSERT_PT(0, make_records(&self->env, self->fd, 1, 10, &da));
	ASSERT_PT(0, make_records(&self->env, self->fd2, 3, 50, &db));
	ASSERT_PT(0, pt_push(self->fd, self->in, da, PTASK_PUSH_SET_RECORDS, 1, 0));
	/* Below the threshold: nothing to take, nothing to pull. */
	ASSERT_PT(-EAGAIN, pt_exec_take(self->xfd, PTASK_NONBLOCK, 0, inv, 1, ports,
					PT_EXEC_PORTS, NULL, NULL));
	ASSERT_PT(-EAGAIN, pull_slice(self->fd, self->out, da, PTASK_NONBLOCK, 0, &x));
	/* The same datablock twice before its slice is out: -EBUSY. */
	ASSERT_PT(-EBUSY, pt_push(self->fd, self->in, da, PTASK_PUSH_SET_RECORDS, 1, 0));
	ASSERT_PT(0, pt_push(self->fd2, self->in, db, PTASK_PUSH_SET_RECORDS, 3, 0));
	ASSERT_PT(0, run_one(&self->env, self->xfd, PT_WAIT_MS, 4));
	/* Out of order, each its own. */
	ASSERT_PT(0, pull_slice(self->fd2, self->out, db, 0, pt_deadline_ms(PT_WAIT_MS), &pb));
	EXPECT_PT(0, check_slice(&self->env, self->fd2, &pb, 3, 50));
	ASSERT_PT(0, pull_slice(self->fd, self->out, da, 0, pt_deadline_ms(PT_WAIT_MS), &pa));
	EXPECT_PT(0, check_slice(&self->env, self->fd, &pa, 1, 10));
	/* Pulled; another client's ticket; a plain pull. */
	EXPECT_PT(-ENOMSG, pull_slice(self->fd, self->out, da, PTASK_NONBLOCK, 0, &x));
	EXPECT_PT(-ENOMSG, pull_slice(self->fd, self->out, db, PTASK_NONBLOCK, 0, &x));
	EXPECT_PT(-EINVAL, pt_pull(self->fd, self->out, PTASK_NONBLOCK, 0, &x));
	EXPECT_PT(0, pt_db_release(self->fd, pa.datablock));
	EXPECT_PT(0, pt_db_release(self->fd2, pb.datablock));
	EXPECT_PT(0, pt_db_release(self->fd, da));
	EXPECT_PT(0, pt_db_release(self->fd2, db));
}

struct puller {
	int fd;
	__u32 channel, ticket;
	struct ptask_pull got;
	int r;
};

static void *pull_thread(void *arg)
{
	struct puller *p = arg;

	p->r = pull_slice(p->fd, p->channel, p->ticket, 0,
			  pt_deadline_ms(PT_WAIT_MS), &p->got);
	return NULL;
}

/*
 * Below the threshold, the module's timer closes the batch: the executor
 * gets it after the timeout, not before; a puller blocked in the meantime
 * wakes with its records.
 */
TEST_F(tunnel, timeout_batch_and_blocked_puller)
{
	struct puller pl = { .fd = self->fd };
	struct timespec t0, t1;
	pthread_t th;
	long long ms;
	__u32 d;

	ASSERT_PT(0, build(self, "tun_to", 1000, 30000000ULL));	/* 30 ms */
	ASSERT_PT(0, make_records(&self->env, self->fd, 2, 7, &d));
	pl.channel = self->out;
	pl.ticket = d;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_PT(0, pt_push(self->fd, self->in, d, PTASK_PUSH_SET_RECORDS, 2, 0));
	ASSERT_EQ(0, pthread_create(&th, NULL, pull_thread, &pl));
	ASSERT_PT(0, run_one(&self->env, self->xfd, PT_WAIT_MS, 2));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000LL + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	EXPECT_LE(29, ms);
	EXPECT_GT(5000, ms);
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_PT(0, pl.r);
	EXPECT_PT(0, check_slice(&self->env, self->fd, &pl.got, 2, 7));
	EXPECT_PT(0, pt_db_release(self->fd, pl.got.datablock));
	EXPECT_PT(0, pt_db_release(self->fd, d));
}

/* A pusher killed with its records gathered: the others' come back. */
TEST_F(tunnel, pusher_killed_mid_batch)
{
	struct ptask_pull p;
	int status;
	pid_t pid;
	__u32 d;

	ASSERT_PT(0, build(self, "tun_kill", 6, 1000000000ULL));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		__u32 dc;

		/* fd2 (a client of the graph) is this child's to push on */
		if (make_records(&self->env, self->fd2, 3, 90, &dc) ||
		    pt_push(self->fd2, self->in, dc, PTASK_PUSH_SET_RECORDS, 3, 0))
			_exit(1);
		raise(SIGKILL);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	/* fd2 is shared with the dead child: close it, the client goes. */
	pt_env_close(&self->env, self->fd2);
	self->fd2 = -1;
	ASSERT_PT(0, make_records(&self->env, self->fd, 3, 20, &d));
	ASSERT_PT(0, pt_push(self->fd, self->in, d, PTASK_PUSH_SET_RECORDS, 3, 0));
	ASSERT_PT(0, run_one(&self->env, self->xfd, PT_WAIT_MS, 6));
	ASSERT_PT(0, pull_slice(self->fd, self->out, d, 0, pt_deadline_ms(PT_WAIT_MS), &p));
	EXPECT_PT(0, check_slice(&self->env, self->fd, &p, 3, 20));
	EXPECT_PT(0, pt_db_release(self->fd, p.datablock));
	EXPECT_PT(0, pt_db_release(self->fd, d));
}

/* Every refusal, with its errno. */
TEST_F(tunnel, refusals)
{
	struct ptask_channel_open a;
	char nb[PTASK_NAME_MAX];
	__u32 g, tr, p, pin, pout, pin2, ch, x;

	ASSERT_PT(0, pt_graph_open(self->fd, pt_name(nb, "tun_bad"), PTASK_GRAPH_CREATE, 0600,
				   &g));
	ASSERT_PT(0, pt_template_open(self->fd, g, PTASK_TEMPLATE_RECORDS, PTASK_BIND_GLOBAL, 8,
				      8, 1, 1, "r", &tr));
	ASSERT_PT(0, pt_ptask_open_cpu(self->fd, g, 3, "p", &p));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_INPUT, 0, 0, 0, 0, "a", &pin, NULL));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_OUTPUT, 0, tr, 1, 0, "o", &pout,
				  NULL));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_INPUT, 0, tr, 2, 0, "b", &pin2, NULL));
	/* ranges */
	EXPECT_PT(-EINVAL, tunnel_open(self->fd, g, 0, pin2, 4, 0, PTASK_DATABLOCK_MAX_BYTES + 1,
				       0, 0, &x));
	EXPECT_PT(-EINVAL, tunnel_open(self->fd, g, 0, pin2, 4, 0, 0, 0,
				       PTASK_TUNNEL_MAX_TIMEOUT_NS + 1, &x));
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.graph = g;
	a.dst = pin2;
	a.capacity = 4;
	a.tunnel_bytes = 4096;		/* settings without the flag */
	EXPECT_PT(-EINVAL, pt_ioctl(self->fd, PTASK_IOC_CHANNEL_OPEN, &a));
	/* a VER0 caller gets no tunnel fields, and no tunnel by accident */
	a.size = PTASK_CHANNEL_OPEN_SIZE_VER0;
	a.tunnel_bytes = 0;
	a.flags = PTASK_CHANNEL_TUNNEL;
	a.dst = pin;
	EXPECT_PT(-EPROTOTYPE, pt_ioctl(self->fd, PTASK_IOC_CHANNEL_OPEN, &a));
	/* no record-stream template; settings on the output end */
	EXPECT_PT(-EPROTOTYPE, tunnel_open(self->fd, g, 0, pin, 4, 0, 0, 0, 0, &x));
	EXPECT_PT(-EINVAL, tunnel_open(self->fd, g, pout, 0, 4, 0, 4096, 0, 0, &x));
	ASSERT_PT(0, tunnel_open(self->fd, g, 0, pin2, 4, 0, 0, 0, 0, &ch));
	EXPECT_PT(-EBUSY, tunnel_open(self->fd, g, 0, pin, 4, tr, 0, 0, 0, &x));
	/* TUNNEL_SET: the input end only, and nothing but settings */
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = PTASK_CHANNEL_TUNNEL_SET;
	a.handle = ch;
	a.tunnel_records = 2;
	EXPECT_PT(0, pt_ioctl(self->fd, PTASK_IOC_CHANNEL_OPEN, &a));
	a.capacity = 1;
	EXPECT_PT(-EINVAL, pt_ioctl(self->fd, PTASK_IOC_CHANNEL_OPEN, &a));
	a.capacity = 0;
	a.handle = pout;		/* not a channel */
	EXPECT_PT(-ENOENT, pt_ioctl(self->fd, PTASK_IOC_CHANNEL_OPEN, &a));
	/* a slice pull of a channel that is no tunnel */
	ASSERT_PT(0, pt_channel_open(self->fd, g, pout, 0, 2, 0, "plain", &x));
	EXPECT_PT(-EINVAL, pull_slice(self->fd, x, 1, PTASK_NONBLOCK, 0, NULL));
	EXPECT_PT(0, pt_graph_close(self->fd, g));
}

TEST_HARNESS_MAIN
