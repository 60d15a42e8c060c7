// SPDX-License-Identifier: GPL-2.0
/*
 * self_test - CPU ptasks run by their creator (PTASK_PTASK_SELF and
 * EXEC_TAKE with PTASK_TAKE_SELF): the privileged executor never sees
 * them, only the creating fd takes them, and its death fails the graph.
 *
 *   push -> [in] SELF cpu ptask "twice" [out] -> pull
 *
 * The creator runs the body itself: each output byte is twice the input.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "pt_harness.h"

#define BYTES 64

struct self_graph {
	__u32 graph, ptask, in, out;
};

static int open_self_ptask(int fd, __u32 graph, __u32 kind, __u32 *handle)
{
	struct ptask_ptask_open p = {
		.size = sizeof(p), .flags = PTASK_PTASK_SELF, .graph = graph,
		.kind = kind, .nports = 2, .name = "twice",
	};

	if (kind == PTASK_KIND_GPU) {
		p.code = (__u64)(uintptr_t)pt_dummy_code;
		p.code_len = pt_dummy_code_len;
		strcpy(p.entry, "twice");
	}
	if (ioctl(fd, PTASK_IOC_PTASK_OPEN, &p))
		return -errno;
	*handle = p.handle;
	return 0;
}

static int build(int fd, const char *name, struct self_graph *g)
{
	__u32 pin, pout;
	int r;

	r = pt_graph_open(fd, name, PTASK_GRAPH_CREATE, 0600, &g->graph);
	r = r ?: open_self_ptask(fd, g->graph, PTASK_KIND_CPU, &g->ptask);
	r = r ?: pt_port_open(fd, g->ptask, PTASK_PORT_INPUT, 0, 0, 0, 0, "",
			      &pin, NULL);
	r = r ?: pt_port_open(fd, g->ptask, PTASK_PORT_OUTPUT, 0, 0, 0, 0, "",
			      &pout, NULL);
	r = r ?: pt_channel_open(fd, g->graph, 0, pin, 2, 0, "in", &g->in);
	r = r ?: pt_channel_open(fd, g->graph, pout, 0, 2, 0, "out", &g->out);
	return r ?: pt_graph_run(fd, g->graph);
}

/* The creator's worker: take one invocation, double its bytes, complete. */
static int run_one(struct pt_env *env, int fd)
{
	struct ptask_invocation inv;
	struct ptask_invocation_port ports[2];
	struct ptask_exec_output out;
	unsigned char *src, *dst;
	__u32 n_inv = 0, n_ports = 0, i;
	__u64 off;
	int r;

	r = pt_exec_take(fd, PTASK_TAKE_SELF, pt_wait_deadline(), &inv, 1,
			 ports, 2, &n_inv, &n_ports);
	if (r)
		return r;
	if (n_inv != 1 || n_ports != 2 || inv.kind != PTASK_KIND_CPU ||
	    ports[0].kind != PTASK_PORT_INPUT || ports[0].bytes != BYTES)
		return -EPROTO;
	r = pt_db_create(fd, BYTES, 0, 0, &out.datablock, &off, NULL);
	if (r)
		return r;
	src = pt_env_map(env, fd, ports[0].mmap_offset, BYTES);
	dst = pt_env_map(env, fd, off, BYTES);
	if (!src || !dst)
		return -ENOMEM;
	for (i = 0; i < BYTES; i++)
		dst[i] = (unsigned char)(2 * src[i]);
	out.index = ports[1].index;
	return pt_exec_complete(fd, inv.id, 0, 0, &out, 1);
}

static int push_bytes(struct pt_env *env, int fd, __u32 channel, int base)
{
	unsigned char *p;
	__u64 off;
	__u32 db;
	int r, i;

	r = pt_db_create(fd, BYTES, 0, 0, &db, &off, NULL);
	if (r)
		return r;
	p = pt_env_map(env, fd, off, BYTES);
	if (!p)
		return -ENOMEM;
	for (i = 0; i < BYTES; i++)
		p[i] = (unsigned char)(base + i);
	r = pt_push(fd, channel, db, 0, 0, 0);
	pt_db_release(fd, db);
	return r;
}

static int pull_doubled(struct pt_env *env, int fd, __u32 channel, int base)
{
	struct ptask_pull out;
	unsigned char *p;
	int r, i;

	r = pt_pull(fd, channel, 0, pt_wait_deadline(), &out);
	if (r)
		return r;
	p = pt_env_map(env, fd, out.mmap_offset, BYTES);
	for (i = 0; p && i < BYTES; i++)
		if (p[i] != (unsigned char)(2 * (base + i)))
			r = -EILSEQ;
	pt_db_release(fd, out.datablock);
	return p ? r : -ENOMEM;
}

FIXTURE(self) {
	struct pt_env env;
	int fd;
};

FIXTURE_SETUP(self)
{
	PT_ENV_SETUP(&self->env);
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(self)
{
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

/* The creator runs it; a registered executor never takes it. */
TEST_F(self, creator_runs_its_cpu_ptask)
{
	struct pt_executor *ex;
	struct self_graph g;
	int k;

	PT_NEED_ROOT();
	ex = pt_env_executor(&self->env);
	ASSERT_NE(NULL, ex);
	ASSERT_PT(0, build(self->fd, "", &g));
	for (k = 0; k < 5; k++) {
		ASSERT_PT(0, push_bytes(&self->env, self->fd, g.in, 10 * k));
		ASSERT_PT(0, run_one(&self->env, self->fd));
		ASSERT_PT(0, pull_doubled(&self->env, self->fd, g.out, 10 * k));
	}
	ASSERT_EQ(0UL, __atomic_load_n(&ex->taken, __ATOMIC_SEQ_CST));
}

TEST_F(self, self_gpu_ptask_einval)
{
	__u32 graph, p;

	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600,
				   &graph));
	ASSERT_PT(-EINVAL, open_self_ptask(self->fd, graph, PTASK_KIND_GPU,
					   &p));
}

/* Only the creating fd sees the invocation: not another fd of the graph. */
TEST_F(self, other_fd_cannot_take)
{
	struct ptask_invocation inv;
	struct ptask_invocation_port ports[2];
	char name[PTASK_NAME_MAX];
	struct self_graph g;
	__u32 graph2;
	int fd2;

	pt_name(name, "self");
	ASSERT_PT(0, build(self->fd, name, &g));
	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	ASSERT_PT(0, pt_graph_open(fd2, name, 0, 0, &graph2));
	ASSERT_PT(0, push_bytes(&self->env, fd2, g.in, 1));
	ASSERT_PT(-EAGAIN, pt_exec_take(fd2, PTASK_TAKE_SELF | PTASK_NONBLOCK,
					0, &inv, 1, ports, 2, NULL, NULL));
	/* Without PTASK_TAKE_SELF a non-executor is refused, as before. */
	ASSERT_PT(-EPERM, pt_exec_take(self->fd, PTASK_NONBLOCK, 0, &inv, 1,
				       ports, 2, NULL, NULL));
	ASSERT_PT(0, run_one(&self->env, self->fd));
	ASSERT_PT(0, pull_doubled(&self->env, fd2, g.out, 1));
}

/* poll() tells the creator that work is queued for it. */
TEST_F(self, poll_shows_queued_work)
{
	struct pollfd pfd = { .fd = self->fd, .events = POLLIN };
	struct self_graph g;

	ASSERT_PT(0, build(self->fd, "", &g));
	ASSERT_EQ(0, poll(&pfd, 1, 0));
	ASSERT_PT(0, push_bytes(&self->env, self->fd, g.in, 3));
	ASSERT_EQ(1, poll(&pfd, 1, PT_WAIT_MS));
	ASSERT_TRUE(pfd.revents & POLLIN);
	ASSERT_PT(0, run_one(&self->env, self->fd));
	ASSERT_PT(0, pull_doubled(&self->env, self->fd, g.out, 3));
}

/* When the creator goes away nobody can run its ptask: the graph fails. */
TEST_F(self, creator_close_fails_graph)
{
	char name[PTASK_NAME_MAX];
	struct ptask_pull out;
	struct self_graph g;
	__u32 graph2;
	int fd1, fd2;

	pt_name(name, "selfgone");
	fd1 = pt_open();
	ASSERT_LE(0, fd1);
	ASSERT_PT(0, build(fd1, name, &g));
	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	ASSERT_PT(0, pt_graph_open(fd2, name, 0, 0, &graph2));
	ASSERT_PT(0, push_bytes(&self->env, fd2, g.in, 5));
	close(fd1);
	ASSERT_PT(-EIO, pt_pull(fd2, g.out, 0, pt_wait_deadline(), &out));
}

/* A taken but uncompleted invocation dies with its creator, failing it. */
TEST_F(self, creator_close_mid_invocation_fails_graph)
{
	struct ptask_invocation inv;
	struct ptask_invocation_port ports[2];
	char name[PTASK_NAME_MAX];
	struct ptask_pull out;
	struct self_graph g;
	__u32 graph2;
	int fd1, fd2;

	pt_name(name, "selfmid");
	fd1 = pt_open();
	ASSERT_LE(0, fd1);
	ASSERT_PT(0, build(fd1, name, &g));
	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	ASSERT_PT(0, pt_graph_open(fd2, name, 0, 0, &graph2));
	ASSERT_PT(0, push_bytes(&self->env, fd2, g.in, 7));
	ASSERT_PT(0, pt_exec_take(fd1, PTASK_TAKE_SELF, pt_wait_deadline(),
				  &inv, 1, ports, 2, NULL, NULL));
	close(fd1);
	ASSERT_PT(-EIO, pt_pull(fd2, g.out, 0, pt_wait_deadline(), &out));
}

TEST_HARNESS_MAIN
