// SPDX-License-Identifier: GPL-2.0
/*
 * abi_test - ABI points of uapi/ptask.h that the other programs do not
 * cover: PTASK_IOC_GRAPH_CLOSE, ioctl numbers matched without their size
 * bits, a running graph's frozen shape (-EBUSY), ptasks fed only by sticky
 * ports, EXEC_COMPLETE checking outputs against the templates downstream,
 * EXEC_UNREGISTER waking a blocked EXEC_TAKE, supplementary groups in the
 * mode check, and EXEC_PTASK_INFO's size query.
 *
 * Children are forked without threads running and use only system calls;
 * they report through their exit code (PT_CHILD_OK, PT_CHILD_SKIP, or
 * PT_CHILD_FAIL + step).
 */
#define _GNU_SOURCE
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>

#include "pt_harness.h"

FIXTURE(abi) {
	struct pt_env env;
	int fd;
};

FIXTURE_SETUP(abi)
{
	PT_ENV_SETUP(&self->env);
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(abi)
{
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

static __u64 count_now(enum ptask_count which)
{
	__u64 c[__PTASK_COUNT_MAX];

	if (pt_counts_read(c))
		return ~0ULL;
	return c[which];
}

/* A struct ptask_graph_ctl call with every field given. */
static int graph_ctl_raw(int fd, unsigned long cmd, __u32 size, __u32 flags,
			 __u32 graph, __u32 reserved)
{
	struct ptask_graph_ctl a = {
		.size = size, .flags = flags, .graph = graph,
		.reserved = reserved,
	};

	return pt_ioctl(fd, cmd, &a);
}

/* poll() @fd once without waiting; revents, or -errno. */
static int poll_now(int fd)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN | POLLOUT };
	int r = poll(&pf, 1, 0);

	if (r < 0)
		return -errno;
	return r ? pf.revents : 0;
}

/* ------------------------------------------------------------------ */
/* PTASK_IOC_GRAPH_CLOSE                                               */
/* ------------------------------------------------------------------ */

/*
 * A graph only this fd has open is freed by GRAPH_CLOSE, with everything
 * in it (a queued datablock included), while the fd stays open.
 */
TEST_F(abi, close_frees_graph)
{
	__u64 c0[__PTASK_COUNT_MAX];
	struct pt_copy_graph g;

	ASSERT_PT(0, pt_counts_read(c0));
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0,
				  PTASK_NONBLOCK, 0));
	ASSERT_EQ(c0[PTASK_COUNT_GRAPHS] + 1, count_now(PTASK_COUNT_GRAPHS));
	ASSERT_LT(c0[PTASK_COUNT_DATABLOCKS],
		  count_now(PTASK_COUNT_DATABLOCKS));

	ASSERT_PT(0, pt_graph_close(self->fd, g.graph));
	ASSERT_EQ(0, pt_counts_wait_all(c0, PT_WAIT_MS, "after GRAPH_CLOSE"));
	/* Its handles name nothing any more. */
	ASSERT_PT(-ENOENT, pt_graph_run(self->fd, g.graph));
	ASSERT_PT(-ENOENT, pt_push_seed(self->fd, g.in_chan[0], 64, 2, 0,
					PTASK_NONBLOCK, 0));
	ASSERT_PT(-ENOENT, pt_graph_close(self->fd, g.graph));
	/* The fd itself goes on working. */
	ASSERT_PT(0, pt_build_copy1(self->fd, false, &g));
}

/*
 * Another client that has the graph open keeps it alive: for it nothing
 * changes; the closing client loses access (-EACCES) but may open it again
 * by name and gets the same handle.
 */
TEST_F(abi, close_shared_graph_stays_for_other_fd)
{
	char name[PTASK_NAME_MAX];
	struct pt_copy_spec s = {
		.name = pt_name(name, "close2"), .kind = PTASK_KIND_GPU,
		.n = 1,
	};
	struct pt_copy_graph g;
	__u64 graphs0 = count_now(PTASK_COUNT_GRAPHS);
	__u32 g2 = 0, again = 0;
	int fd2;

	ASSERT_PT(0, pt_build_copy(self->fd, &s, &g));
	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	ASSERT_PT(0, pt_graph_open(fd2, name, 0, 0, &g2));
	ASSERT_EQ(g.graph, g2);

	ASSERT_PT(0, pt_graph_close(self->fd, g.graph));
	ASSERT_EQ(graphs0 + 1, count_now(PTASK_COUNT_GRAPHS));
	ASSERT_PT(-EACCES, pt_graph_run(self->fd, g.graph));
	ASSERT_PT(-EACCES, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0,
					PTASK_NONBLOCK, 0));
	/* The other client still uses it. */
	ASSERT_PT(0, pt_push_seed(fd2, g.in_chan[0], 64, 2, 0, PTASK_NONBLOCK,
				  0));
	ASSERT_PT(0, pt_graph_run(fd2, g.graph));
	/* Reopened by name: the same graph. */
	ASSERT_PT(0, pt_graph_open(self->fd, name, 0, 0, &again));
	ASSERT_EQ(g.graph, again);
	ASSERT_PT(0, pt_graph_close(self->fd, g.graph));
	/* The last client lets go: now it is freed. */
	ASSERT_PT(0, pt_graph_close(fd2, g.graph));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_GRAPHS, graphs0, PT_WAIT_MS));
	ASSERT_PT(-ENOENT, pt_graph_open(fd2, name, 0, 0, NULL));
}

/* "-ENOENT (the caller does not have it open)" */
TEST_F(abi, close_not_open_enoent)
{
	__u64 graphs0 = count_now(PTASK_COUNT_GRAPHS);
	struct pt_copy_graph g;
	__u32 other = 0;
	int fd2;

	/* A graph that exists, but only fd2 has it open. */
	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	ASSERT_PT(0, pt_graph_open(fd2, "", PTASK_GRAPH_CREATE, 0600, &other));
	ASSERT_PT(-ENOENT, pt_graph_close(self->fd, other));
	ASSERT_EQ(graphs0 + 1, count_now(PTASK_COUNT_GRAPHS));
	ASSERT_PT(0, pt_graph_run(fd2, other));
	/* No object at all, and an object that is not a graph. */
	ASSERT_PT(-ENOENT, pt_graph_close(self->fd, 0x7ffffff0));
	ASSERT_PT(0, pt_build_copy1(self->fd, false, &g));
	ASSERT_PT(-ENOENT, pt_graph_close(self->fd, g.in_chan[0]));
	ASSERT_PT(-ENOENT, pt_graph_close(self->fd, g.ptask));
	/* Closed once: not open any more. */
	ASSERT_PT(0, pt_graph_close(self->fd, g.graph));
	ASSERT_PT(-ENOENT, pt_graph_close(self->fd, g.graph));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_GRAPHS, graphs0 + 1,
				   PT_WAIT_MS));
}

/* Non-zero flags or reserved, or a short @size: -EINVAL, nothing closed. */
TEST_F(abi, close_bad_args_einval)
{
	__u64 graphs0 = count_now(PTASK_COUNT_GRAPHS);
	const __u32 sz = sizeof(struct ptask_graph_ctl);
	__u32 g = 0;

	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600, &g));
	ASSERT_PT(-EINVAL, graph_ctl_raw(self->fd, PTASK_IOC_GRAPH_CLOSE, sz,
					 1, g, 0));
	ASSERT_PT(-EINVAL, graph_ctl_raw(self->fd, PTASK_IOC_GRAPH_CLOSE, sz,
					 1U << 31, g, 0));
	ASSERT_PT(-EINVAL, graph_ctl_raw(self->fd, PTASK_IOC_GRAPH_CLOSE, sz,
					 0, g, 1));
	ASSERT_PT(-EINVAL, graph_ctl_raw(self->fd, PTASK_IOC_GRAPH_CLOSE, 8,
					 0, g, 0));
	/* -EINVAL comes before the handle check. */
	ASSERT_PT(-EINVAL, graph_ctl_raw(self->fd, PTASK_IOC_GRAPH_CLOSE, sz,
					 1, 0x7ffffff0, 0));
	ASSERT_EQ(graphs0 + 1, count_now(PTASK_COUNT_GRAPHS));
	ASSERT_PT(0, pt_graph_run(self->fd, g));
	ASSERT_PT(0, graph_ctl_raw(self->fd, PTASK_IOC_GRAPH_CLOSE, sz, 0, g,
				   0));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_GRAPHS, graphs0, PT_WAIT_MS));
}

/*
 * A terminated graph is closed like any other, and that is how a client
 * stops seeing EPOLLERR for it without closing its fd.  A second, healthy
 * graph on the same fd keeps reporting EPOLLOUT (its input has room).
 */
TEST_F(abi, close_terminated_clears_pollerr)
{
	__u64 graphs0 = count_now(PTASK_COUNT_GRAPHS);
	struct pt_copy_graph ok, bad;
	int ev;

	ASSERT_PT(0, pt_build_copy1(self->fd, false, &ok));
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &bad));
	ev = poll_now(self->fd);
	ASSERT_LE(0, ev);
	ASSERT_FALSE(ev & POLLERR);
	ASSERT_TRUE(ev & POLLOUT);

	ASSERT_PT(0, pt_graph_terminate(self->fd, bad.graph));
	ev = poll_now(self->fd);
	ASSERT_LE(0, ev);
	ASSERT_TRUE(ev & POLLERR);

	ASSERT_PT(0, pt_graph_close(self->fd, bad.graph));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_GRAPHS, graphs0 + 1,
				   PT_WAIT_MS));
	ev = poll_now(self->fd);
	ASSERT_LE(0, ev);
	ASSERT_FALSE(ev & POLLERR);
	ASSERT_TRUE(ev & POLLOUT);
	ASSERT_PT(-ENOENT, pt_graph_run(self->fd, bad.graph));

	/* With no graph open, nothing to report at all. */
	ASSERT_PT(0, pt_graph_close(self->fd, ok.graph));
	ASSERT_EQ(0, poll_now(self->fd));
}

/*
 * Closing a graph while the executor runs one of its invocations: the
 * completion is -ECANCELED and its outputs released; nothing stays behind.
 */
TEST_F(abi, close_with_invocation_in_flight)
{
	struct ptask_invocation_port ports[4];
	struct ptask_exec_output o = { .index = 1 };
	struct ptask_invocation inv;
	__u64 c0[__PTASK_COUNT_MAX];
	struct pt_copy_graph g;
	__u32 n = 0;
	int xfd;

	PT_NEED_ROOT();
	xfd = pt_env_open(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(0, pt_nl_register(xfd));
	ASSERT_PT(0, pt_counts_read(c0));
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, pt_exec_take(xfd, 0, pt_wait_deadline(), &inv, 1, ports,
				  4, &n, NULL));
	ASSERT_EQ(1U, n);
	ASSERT_PT(0, pt_db_create(xfd, 64, 0, 0, &o.datablock, NULL, NULL));

	ASSERT_PT(0, pt_graph_close(self->fd, g.graph));
	ASSERT_PT(-ECANCELED, pt_exec_complete(xfd, inv.id, 0, 1, &o, 1));
	ASSERT_PT(-ENOENT, pt_db_release(xfd, o.datablock));
	ASSERT_EQ(0, pt_counts_wait_all(c0, PT_WAIT_MS, "after GRAPH_CLOSE"));
}

/* ------------------------------------------------------------------ */
/* ioctl numbers: the size bits are not matched                        */
/* ------------------------------------------------------------------ */

/* GRAPH_OPEN's number with @size encoded in its size bits. */
#define GRAPH_OPEN_CMD(size) \
	_IOC(_IOC_READ | _IOC_WRITE, PTASK_IOC_MAGIC, 0x01, (size))
#define GRAPH_CLOSE_CMD(size) \
	_IOC(_IOC_WRITE, PTASK_IOC_MAGIC, 0x0f, (size))

/* A newer header's GRAPH_OPEN: 8 more bytes, in the command and in @size. */
struct graph_open_next {
	struct ptask_graph_open a;
	__u8 tail[8];
};

TEST_F(abi, ioc_size_bits_larger_zero_tail)
{
	__u64 graphs0 = count_now(PTASK_COUNT_GRAPHS);
	struct graph_open_next b;
	static const __u8 zero[8];
	unsigned long cmd = GRAPH_OPEN_CMD(sizeof(b));

	ASSERT_EQ(sizeof(struct ptask_graph_open) + 8, sizeof(b));
	ASSERT_NE(PTASK_IOC_GRAPH_OPEN, cmd);
	memset(&b, 0, sizeof(b));
	b.a.size = sizeof(b);
	b.a.flags = PTASK_GRAPH_CREATE;
	b.a.mode = 0600;
	ASSERT_PT(0, pt_ioctl(self->fd, cmd, &b));
	ASSERT_NE(0U, b.a.handle);
	ASSERT_EQ(0, memcmp(zero, b.tail, sizeof(zero)));
	ASSERT_EQ(graphs0 + 1, count_now(PTASK_COUNT_GRAPHS));
	ASSERT_PT(0, pt_graph_run(self->fd, b.a.handle));
}

TEST_F(abi, ioc_size_bits_larger_nonzero_tail_e2big)
{
	__u64 graphs0 = count_now(PTASK_COUNT_GRAPHS);
	struct graph_open_next b;
	unsigned long cmd = GRAPH_OPEN_CMD(sizeof(b));
	unsigned int i;

	for (i = 0; i < sizeof(b.tail); i += 7) {
		memset(&b, 0, sizeof(b));
		b.a.size = sizeof(b);
		b.a.flags = PTASK_GRAPH_CREATE;
		b.a.mode = 0600;
		b.tail[i] = 0x80;
		TH_LOG("tail byte %u", i);
		ASSERT_PT(-E2BIG, pt_ioctl(self->fd, cmd, &b));
		ASSERT_EQ(0U, b.a.handle);
	}
	ASSERT_EQ(graphs0, count_now(PTASK_COUNT_GRAPHS));
}

/*
 * An older (or sloppier) header's number: fewer bytes, or none, in the
 * size bits; @size says VER0 and is what counts.
 */
TEST_F(abi, ioc_size_bits_smaller)
{
	static const unsigned int sizes[] = {
		0, 4, 16, PTASK_GRAPH_OPEN_SIZE_VER0 - 8,
	};
	__u64 graphs0 = count_now(PTASK_COUNT_GRAPHS);
	struct ptask_graph_open a;
	unsigned int i;
	__u32 seen[4];

	for (i = 0; i < 4; i++) {
		memset(&a, 0, sizeof(a));
		a.size = PTASK_GRAPH_OPEN_SIZE_VER0;
		a.flags = PTASK_GRAPH_CREATE;
		a.mode = 0600;
		TH_LOG("size bits %u", sizes[i]);
		ASSERT_PT(0, pt_ioctl(self->fd, GRAPH_OPEN_CMD(sizes[i]), &a));
		ASSERT_NE(0U, a.handle);
		seen[i] = a.handle;
	}
	ASSERT_EQ(graphs0 + 4, count_now(PTASK_COUNT_GRAPHS));
	/* Another call the same way: GRAPH_CLOSE with no size bits. */
	for (i = 0; i < 4; i++) {
		struct ptask_graph_ctl c = {
			.size = sizeof(c), .graph = seen[i],
		};

		ASSERT_PT(0, pt_ioctl(self->fd, GRAPH_CLOSE_CMD(0), &c));
	}
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_GRAPHS, graphs0, PT_WAIT_MS));
}

/* Direction, type and number are still matched. */
TEST_F(abi, ioc_other_bits_matched_enotty)
{
	const unsigned int sz = sizeof(struct ptask_graph_open);
	const unsigned long cmds[] = {
		_IOC(_IOC_WRITE, PTASK_IOC_MAGIC, 0x01, sz),
		_IOC(_IOC_READ, PTASK_IOC_MAGIC, 0x01, sz),
		_IOC(_IOC_NONE, PTASK_IOC_MAGIC, 0x01, 0),
		_IOC(_IOC_READ | _IOC_WRITE, PTASK_IOC_MAGIC + 1, 0x01, sz),
		_IOC(_IOC_READ | _IOC_WRITE, PTASK_IOC_MAGIC, 0x3f, sz),
	};
	__u64 graphs0 = count_now(PTASK_COUNT_GRAPHS);
	struct ptask_graph_open a;
	unsigned int i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.flags = PTASK_GRAPH_CREATE;
		a.mode = 0600;
		TH_LOG("cmd %#lx", cmds[i]);
		ASSERT_PT(-ENOTTY, pt_ioctl(self->fd, cmds[i], &a));
	}
	ASSERT_EQ(graphs0, count_now(PTASK_COUNT_GRAPHS));
}

/* ------------------------------------------------------------------ */
/* A running graph's shape is fixed: -EBUSY                            */
/* ------------------------------------------------------------------ */

/*
 * in -> [p: in, out, (third port free)] -> out.  Before run each call
 * below succeeds once (the control); after run the same call is -EBUSY.
 */
struct shape {
	__u32 g, p, in, out, c_in, c_out;
};

static int build_shape(int fd, struct shape *s)
{
	int r;

	r = pt_graph_open(fd, "", PTASK_GRAPH_CREATE, 0600, &s->g);
	if (!r)
		r = pt_ptask_open_gpu(fd, s->g, 4, "", &s->p);
	if (!r)
		r = pt_port_open(fd, s->p, PTASK_PORT_INPUT, 0, 0, 0, 0, "",
				 &s->in, NULL);
	if (!r)
		r = pt_port_open(fd, s->p, PTASK_PORT_OUTPUT, 0, 0, 1, 0, "",
				 &s->out, NULL);
	if (!r)
		r = pt_channel_open(fd, s->g, 0, s->in, 2, 0, "", &s->c_in);
	if (!r)
		r = pt_channel_open(fd, s->g, s->out, 0, 2, 0, "", &s->c_out);
	return r;
}

TEST_F(abi, running_ptask_open_ebusy)
{
	struct shape s;
	__u64 n;

	ASSERT_PT(0, build_shape(self->fd, &s));
	ASSERT_PT(0, pt_ptask_open_cpu(self->fd, s.g, 1, "", NULL));
	ASSERT_PT(0, pt_graph_run(self->fd, s.g));
	n = count_now(PTASK_COUNT_PTASKS);
	ASSERT_PT(-EBUSY, pt_ptask_open_cpu(self->fd, s.g, 1, "", NULL));
	ASSERT_PT(-EBUSY, pt_ptask_open_gpu(self->fd, s.g, 2, "late", NULL));
	ASSERT_EQ(n, count_now(PTASK_COUNT_PTASKS));
	ASSERT_PT(-ENOENT, pt_lookup(self->fd, s.g, PTASK_OBJ_PTASK, "late",
				     NULL));
}

TEST_F(abi, running_port_open_ebusy)
{
	struct shape s;
	__u32 idx = 0;
	__u64 n;

	ASSERT_PT(0, build_shape(self->fd, &s));
	ASSERT_PT(0, pt_port_open(self->fd, s.p, PTASK_PORT_OUTPUT, 0, 0, 2, 0,
				  "", NULL, &idx));
	ASSERT_EQ(2U, idx);
	ASSERT_PT(0, pt_graph_run(self->fd, s.g));
	n = count_now(PTASK_COUNT_PORTS);
	/* One of the 4 ports is still free: not -ENOSPC but -EBUSY. */
	ASSERT_PT(-EBUSY, pt_port_open(self->fd, s.p, PTASK_PORT_OUTPUT, 0, 0,
				       3, 0, "", NULL, NULL));
	ASSERT_PT(-EBUSY, pt_port_open(self->fd, s.p, PTASK_PORT_INPUT, 0, 0,
				       3, 0, "", NULL, NULL));
	ASSERT_EQ(n, count_now(PTASK_COUNT_PORTS));
}

TEST_F(abi, running_channel_open_ebusy)
{
	struct shape s;
	__u64 n;

	ASSERT_PT(0, build_shape(self->fd, &s));
	/* Fan-out: an output port takes any number of channels. */
	ASSERT_PT(0, pt_channel_open(self->fd, s.g, s.out, 0, 2, 0, "", NULL));
	ASSERT_PT(0, pt_graph_run(self->fd, s.g));
	n = count_now(PTASK_COUNT_CHANNELS);
	ASSERT_PT(-EBUSY, pt_channel_open(self->fd, s.g, s.out, 0, 2, 0,
					  "late", NULL));
	ASSERT_EQ(n, count_now(PTASK_COUNT_CHANNELS));
	ASSERT_PT(-ENOENT, pt_lookup(self->fd, s.g, PTASK_OBJ_CHANNEL, "late",
				     NULL));
}

/* Templates are not part of the shape: still allowed, and usable. */
TEST_F(abi, running_template_open_allowed)
{
	struct shape s;
	__u32 t = 0, db = 0;
	__u64 bytes = 0;

	ASSERT_PT(0, build_shape(self->fd, &s));
	ASSERT_PT(0, pt_graph_run(self->fd, s.g));
	ASSERT_PT(0, pt_template_open(self->fd, s.g, PTASK_TEMPLATE_ARRAY,
				      PTASK_BIND_GLOBAL, 4, 16, 1, 1, "", &t));
	ASSERT_NE(0U, t);
	ASSERT_PT(0, pt_db_create(self->fd, 0, t, 0, &db, NULL, &bytes));
	ASSERT_EQ(64ULL, bytes);
	ASSERT_PT(0, pt_push(self->fd, s.c_in, db, PTASK_NONBLOCK, 0, 0));
	ASSERT_PT(0, pt_db_release(self->fd, db));
}

/* ------------------------------------------------------------------ */
/* A ptask fed only by sticky ports never fires                        */
/* ------------------------------------------------------------------ */

TEST_F(abi, sticky_only_ptask_never_fires)
{
	struct pt_copy_spec sp = { .kind = PTASK_KIND_GPU, .n = 2,
				   .sticky_mask = 3, .run = true };
	__u64 inv0 = count_now(PTASK_COUNT_INVOCATIONS);
	struct pt_copy_graph sticky, plain;
	struct pt_executor *ex;
	__u32 s = 0;

	PT_NEED_ROOT();
	ex = pt_env_executor(&self->env);
	ASSERT_NE(NULL, ex);
	ASSERT_PT(0, pt_build_copy(self->fd, &sp, &sticky));
	ASSERT_PT(0, pt_push_seed(self->fd, sticky.in_chan[0], 64, 1, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, pt_push_seed(self->fd, sticky.in_chan[1], 64, 2, 0, 0,
				  pt_wait_deadline()));
	pt_sleep_ms(200);
	ASSERT_EQ(0UL, __atomic_load_n(&ex->taken, __ATOMIC_SEQ_CST));
	ASSERT_EQ(0UL, pt_executor_completed(ex));
	ASSERT_EQ(inv0, count_now(PTASK_COUNT_INVOCATIONS));
	ASSERT_PT(-EAGAIN, pt_pull(self->fd, sticky.out_chan[0],
				   PTASK_NONBLOCK, 0, NULL));

	/* The control: a plain input fires at once, same executor. */
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &plain));
	ASSERT_PT(0, pt_push_seed(self->fd, plain.in_chan[0], 64, 7, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, pt_pull_seed(self->fd, plain.out_chan[0], 0,
				  pt_wait_deadline(), &s, NULL, NULL));
	ASSERT_EQ(7U, s);
	ASSERT_PT(0, pt_executor_wait(ex, 1, PT_WAIT_MS));
	ASSERT_EQ(1UL, __atomic_load_n(&ex->taken, __ATOMIC_SEQ_CST));
	ASSERT_EQ(0UL, __atomic_load_n(&ex->errors, __ATOMIC_SEQ_CST));
	/* Still nothing from the sticky-only one. */
	ASSERT_PT(-EAGAIN, pt_pull(self->fd, sticky.out_chan[0],
				   PTASK_NONBLOCK, 0, NULL));
}

/* ------------------------------------------------------------------ */
/* EXEC_COMPLETE checks outputs against the templates downstream       */
/* ------------------------------------------------------------------ */

static struct ptask_invocation tk_inv[4];
static struct ptask_invocation_port tk_ports[16];

/* Takes exactly one invocation into tk_inv[0] / tk_ports; 0 or -errno. */
static int take_one(int xfd)
{
	__u32 n = 0;
	int r;

	r = pt_exec_take(xfd, 0, pt_wait_deadline(), tk_inv, 1, tk_ports, 16,
			 &n, NULL);
	return r ? r : n == 1 ? 0 : -EPROTO;
}

static const struct ptask_invocation_port *tk_port(__u32 index)
{
	__u32 i;

	for (i = 0; i < tk_inv[0].n_ports; i++)
		if (tk_ports[tk_inv[0].first_port + i].index == index)
			return &tk_ports[tk_inv[0].first_port + i];
	return NULL;
}

/* An executor-made datablock of @bytes holding pattern @seed. */
static int exec_db(int xfd, __u64 bytes, __u32 seed, __u32 *db)
{
	__u64 off;
	void *m;
	int r;

	r = pt_db_create(xfd, bytes, 0, 0, db, &off, NULL);
	if (r)
		return r;
	m = pt_map(xfd, off, bytes, PROT_READ | PROT_WRITE);
	if (!m)
		return -errno;
	pt_fill(m, bytes, seed);
	munmap(m, bytes);
	return 0;
}

static int register_xfd(struct pt_env *env)
{
	int xfd = pt_env_open(env), r;

	if (xfd < 0)
		return xfd;
	r = pt_nl_register(xfd);
	return r ? r : xfd;
}

/*
 *	[in] -> p: in (no template), out (no template) -> [out: array T]
 *
 * T is 8 x 4 bytes.  The output port itself would take anything; the
 * channel it feeds does not.
 */
TEST_F(abi, complete_checks_channel_template)
{
	struct ptask_exec_output o = { .index = 1 };
	__u32 g, t, p, in, out, c_in, c_out, bad, good, s = 0;
	__u64 bytes = 0;
	int xfd;

	PT_NEED_ROOT();
	xfd = register_xfd(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600, &g));
	ASSERT_PT(0, pt_template_open(self->fd, g, PTASK_TEMPLATE_ARRAY,
				      PTASK_BIND_GLOBAL, 4, 8, 1, 1, "", &t));
	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, g, 2, "", &p));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_INPUT, 0, 0, 0, 0,
				  "", &in, NULL));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_OUTPUT, 0, 0, 1, 0,
				  "", &out, NULL));
	ASSERT_PT(0, pt_channel_open(self->fd, g, 0, in, 2, 0, "", &c_in));
	ASSERT_PT(0, pt_channel_open(self->fd, g, out, 0, 2, t, "", &c_out));
	ASSERT_PT(0, pt_graph_run(self->fd, g));
	ASSERT_PT(0, pt_push_seed(self->fd, c_in, 64, 3, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, take_one(xfd));
	ASSERT_NE(NULL, tk_port(0));
	ASSERT_NE(NULL, tk_port(1));
	ASSERT_EQ(0U, tk_port(1)->template);

	/* 64 bytes: a new datablock, then the input passed through. */
	ASSERT_PT(0, exec_db(xfd, 64, 4, &bad));
	o.datablock = bad;
	ASSERT_PT(-EPROTOTYPE, pt_exec_complete(xfd, tk_inv[0].id, 0, 1, &o,
						1));
	o.datablock = tk_port(0)->datablock;
	ASSERT_PT(-EPROTOTYPE, pt_exec_complete(xfd, tk_inv[0].id, 0, 1, &o,
						1));
	/* Refused: the executor still holds its datablock... */
	ASSERT_PT(0, pt_db_release(xfd, bad));
	ASSERT_PT(-EAGAIN, pt_pull(self->fd, c_out, PTASK_NONBLOCK, 0, NULL));
	/* ...and the invocation is still there to complete properly. */
	ASSERT_PT(0, exec_db(xfd, 32, 5, &good));
	o.datablock = good;
	ASSERT_PT(0, pt_exec_complete(xfd, tk_inv[0].id, 0, 1, &o, 1));
	ASSERT_PT(0, pt_pull_seed(self->fd, c_out, 0, pt_wait_deadline(), &s,
				  &bytes, NULL));
	ASSERT_EQ(5U, s);
	ASSERT_EQ(32ULL, bytes);
}

/*
 *	[in] -> p: in, out (no templates) -> q: in (array T)
 *
 * Neither the output port nor the channel has a template; the port behind
 * them has.
 */
TEST_F(abi, complete_checks_far_port_template)
{
	struct ptask_exec_output o = { .index = 1 };
	__u32 g, t, p, q, in, out, qin, c_in, bad, good, s = 0;
	int xfd, r;
	void *m;

	PT_NEED_ROOT();
	xfd = register_xfd(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600, &g));
	ASSERT_PT(0, pt_template_open(self->fd, g, PTASK_TEMPLATE_ARRAY,
				      PTASK_BIND_GLOBAL, 4, 8, 1, 1, "", &t));
	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, g, 2, "", &p));
	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, g, 1, "", &q));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_INPUT, 0, 0, 0, 0,
				  "", &in, NULL));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_OUTPUT, 0, 0, 1, 0,
				  "", &out, NULL));
	ASSERT_PT(0, pt_port_open(self->fd, q, PTASK_PORT_INPUT, 0, t, 0, 0,
				  "", &qin, NULL));
	ASSERT_PT(0, pt_channel_open(self->fd, g, 0, in, 2, 0, "", &c_in));
	ASSERT_PT(0, pt_channel_open(self->fd, g, out, qin, 2, 0, "", NULL));
	ASSERT_PT(0, pt_graph_run(self->fd, g));
	ASSERT_PT(0, pt_push_seed(self->fd, c_in, 64, 3, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, take_one(xfd));
	ASSERT_EQ(p, tk_inv[0].ptask);

	ASSERT_PT(0, exec_db(xfd, 16, 4, &bad));
	o.datablock = bad;
	ASSERT_PT(-EPROTOTYPE, pt_exec_complete(xfd, tk_inv[0].id, 0, 1, &o,
						1));
	ASSERT_PT(0, pt_db_release(xfd, bad));
	ASSERT_PT(0, exec_db(xfd, 32, 6, &good));
	o.datablock = good;
	ASSERT_PT(0, pt_exec_complete(xfd, tk_inv[0].id, 0, 1, &o, 1));
	/* It reached q: q's invocation carries it. */
	ASSERT_PT(0, take_one(xfd));
	ASSERT_EQ(q, tk_inv[0].ptask);
	ASSERT_NE(NULL, tk_port(0));
	ASSERT_EQ(good, tk_port(0)->datablock);
	ASSERT_EQ(32ULL, tk_port(0)->bytes);
	m = pt_map(xfd, tk_port(0)->mmap_offset, 32, PROT_READ);
	ASSERT_NE(NULL, m);
	r = pt_check(m, 32, &s);
	munmap(m, 32);
	ASSERT_PT(0, r);
	ASSERT_EQ(6U, s);
	ASSERT_PT(0, pt_exec_complete(xfd, tk_inv[0].id, 0, 1, NULL, 0));
}

/* ------------------------------------------------------------------ */
/* EXEC_UNREGISTER wakes a thread blocked in EXEC_TAKE                 */
/* ------------------------------------------------------------------ */

struct taker {
	int xfd;
	pid_t tid;		/* atomic */
	int done;		/* atomic */
	int result;
};

static void *taker_main(void *arg)
{
	struct ptask_invocation_port ports[4];
	struct ptask_invocation inv;
	struct taker *t = arg;

	__atomic_store_n(&t->tid, pt_gettid(), __ATOMIC_SEQ_CST);
	/* No deadline: only a wake-up (or a signal) ends this. */
	t->result = pt_exec_take(t->xfd, 0, 0, &inv, 1, ports, 4, NULL, NULL);
	__atomic_store_n(&t->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

TEST_F(abi, unregister_wakes_blocked_take)
{
	struct taker tk = { .xfd = -1 };
	__u64 deadline;
	pthread_t th;
	pid_t tid;
	int woke;

	PT_NEED_ROOT();
	ASSERT_PT(0, pt_sig_noop(SIGUSR1));
	tk.xfd = register_xfd(&self->env);
	ASSERT_LE(0, tk.xfd);
	ASSERT_EQ(0, pthread_create(&th, NULL, taker_main, &tk));
	tid = pt_wait_tid(&tk.tid);
	EXPECT_NE(0, tid);
	EXPECT_PT(0, pt_wait_sleeping(getpid(), tid, PT_WAIT_MS));
	pt_sleep_ms(50);
	EXPECT_EQ(0, __atomic_load_n(&tk.done, __ATOMIC_SEQ_CST));

	EXPECT_PT(0, pt_nl_unregister(tk.xfd));
	/* Only the wake-up ends the take: it has no deadline of its own. */
	deadline = pt_wait_deadline();
	while (!__atomic_load_n(&tk.done, __ATOMIC_SEQ_CST) &&
	       pt_now_ns() < deadline)
		pt_sleep_ms(2);
	woke = __atomic_load_n(&tk.done, __ATOMIC_SEQ_CST);
	/* Not woken: get the thread out with a signal before failing. */
	while (!__atomic_load_n(&tk.done, __ATOMIC_SEQ_CST)) {
		pthread_kill(th, SIGUSR1);
		pt_sleep_ms(10);
	}
	pthread_join(th, NULL);
	ASSERT_TRUE(woke);
	ASSERT_PT(-EPERM, tk.result);
	/* And the fd is no executor any more. */
	ASSERT_PT(-EPERM, pt_exec_take(tk.xfd, PTASK_NONBLOCK, 0, tk_inv, 1,
				       tk_ports, 16, NULL, NULL));
}

/* ------------------------------------------------------------------ */
/* GRAPH_CLOSE wakes a thread of the same fd blocked on the graph      */
/* ------------------------------------------------------------------ */

struct puller {
	int fd;
	__u32 channel;
	pid_t tid;		/* atomic */
	int done;		/* atomic */
	int result;
};

static void *puller_main(void *arg)
{
	struct puller *p = arg;
	struct ptask_pull out;

	__atomic_store_n(&p->tid, pt_gettid(), __ATOMIC_SEQ_CST);
	/* No deadline: only a wake-up (or a signal) ends this. */
	p->result = pt_pull(p->fd, p->channel, 0, 0, &out);
	__atomic_store_n(&p->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

TEST_F(abi, close_wakes_blocked_pull)
{
	struct pt_copy_graph g;
	struct puller pl = { .fd = self->fd };
	__u64 deadline;
	pthread_t th;
	pid_t tid;
	int woke;

	ASSERT_PT(0, pt_sig_noop(SIGUSR1));
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	pl.channel = g.out_chan[0];
	ASSERT_EQ(0, pthread_create(&th, NULL, puller_main, &pl));
	tid = pt_wait_tid(&pl.tid);
	EXPECT_NE(0, tid);
	EXPECT_PT(0, pt_wait_sleeping(getpid(), tid, PT_WAIT_MS));
	EXPECT_EQ(0, __atomic_load_n(&pl.done, __ATOMIC_SEQ_CST));

	EXPECT_PT(0, pt_graph_close(self->fd, g.graph));
	/* Only the wake-up ends the pull: it has no deadline of its own. */
	deadline = pt_wait_deadline();
	while (!__atomic_load_n(&pl.done, __ATOMIC_SEQ_CST) &&
	       pt_now_ns() < deadline)
		pt_sleep_ms(2);
	woke = __atomic_load_n(&pl.done, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&pl.done, __ATOMIC_SEQ_CST)) {
		pthread_kill(th, SIGUSR1);
		pt_sleep_ms(10);
	}
	pthread_join(th, NULL);
	ASSERT_TRUE(woke);
	/* Only this fd had the graph: it is gone, so its channel is too. */
	ASSERT_PT(-ENOENT, pl.result);
}

/* ------------------------------------------------------------------ */
/* Supplementary groups count for the group class                      */
/* ------------------------------------------------------------------ */

/*
 * Child: become uid/gid nobody with supplementary groups @groups (n of
 * them), then open graph @name; PT_CHILD_OK when the open gives @expect.
 * setresuid() away from root drops every capability (CAP_DAC_OVERRIDE
 * included); the capset makes sure.
 */
static pid_t open_with_groups(const char *name, const gid_t *groups, int n,
			      int expect)
{
	pid_t pid = fork();
	int fd, r;

	if (pid)
		return pid;
	if (setgroups(n, groups))
		_exit(PT_CHILD_FAIL + 1);
	if (setresgid(PT_NOBODY, PT_NOBODY, PT_NOBODY))
		_exit(PT_CHILD_FAIL + 2);
	if (setresuid(PT_NOBODY, PT_NOBODY, PT_NOBODY))
		_exit(PT_CHILD_FAIL + 3);
	if (pt_drop_all_caps())
		_exit(PT_CHILD_FAIL + 4);
	if (getegid() != PT_NOBODY || geteuid() != PT_NOBODY)
		_exit(PT_CHILD_FAIL + 5);
	fd = pt_open();
	if (fd < 0)
		_exit(PT_CHILD_SKIP);
	r = pt_graph_open(fd, name, 0, 0, NULL);
	_exit(r == expect ? PT_CHILD_OK : PT_CHILD_FAIL + 6);
}

/*
 * Root (egid 0) makes a graph with mode 0060: only its group may open it.
 * uid/gid nobody gets in through supplementary group 0, and without it is
 * refused (the control: the mode bits do matter).
 */
TEST_F(abi, supplementary_group_opens_graph)
{
	static const gid_t root_group[1] = { 0 };
	char name[PTASK_NAME_MAX];
	pid_t pid;

	PT_NEED_ROOT();
	if (getegid() != 0)
		SKIP(return, "needs egid 0");
	pt_name(name, "group");
	ASSERT_PT(0, pt_graph_open(self->fd, name,
				   PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL, 0060,
				   NULL));
	pid = open_with_groups(name, root_group, 1, 0);
	ASSERT_LE(0, pid);
	pt_env_track_pid(&self->env, pid);
	PT_WAIT_CHILD(&self->env, pid, PT_WAIT_MS);

	pid = open_with_groups(name, NULL, 0, -EACCES);
	ASSERT_LE(0, pid);
	pt_env_track_pid(&self->env, pid);
	PT_WAIT_CHILD(&self->env, pid, PT_WAIT_MS);
}

/* ------------------------------------------------------------------ */
/* EXEC_PTASK_INFO: ask the size first                                 */
/* ------------------------------------------------------------------ */

static const __u8 info_code[257] = {
	0x7f, 'E', 'L', 'F', [128] = 0x5a, [256] = 0xa5,
};

TEST_F(abi, ptask_info_size_query_then_enospc)
{
	struct ptask_exec_ptask_info a;
	__u8 buf[sizeof(info_code) + 16];
	__u32 g, p;
	int xfd;

	PT_NEED_ROOT();
	xfd = register_xfd(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600, &g));
	ASSERT_PT(0, pt_ptask_open(self->fd, g, PTASK_KIND_GPU, 7, info_code,
				   sizeof(info_code), "entry_7", "", &p));

	/* @code 0: the size, whatever @code_len says on the way in. */
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.ptask = p;
	a.code_len = 1;
	ASSERT_PT(0, pt_ioctl(xfd, PTASK_IOC_EXEC_PTASK_INFO, &a));
	ASSERT_EQ(sizeof(info_code), a.code_len);
	ASSERT_EQ((__u32)PTASK_KIND_GPU, a.kind);
	ASSERT_EQ(7U, a.nports);
	ASSERT_STREQ("entry_7", a.entry);

	/* One byte short: -ENOSPC, nothing written back or copied. */
	memset(buf, 0xee, sizeof(buf));
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.ptask = p;
	a.code = (__u64)(uintptr_t)buf;
	a.code_len = sizeof(info_code) - 1;
	ASSERT_PT(-ENOSPC, pt_ioctl(xfd, PTASK_IOC_EXEC_PTASK_INFO, &a));
	ASSERT_EQ(sizeof(info_code) - 1, a.code_len);
	ASSERT_EQ(0U, a.nports);
	ASSERT_EQ(0xee, buf[0]);

	/* The size it said: the code. */
	a.code_len = sizeof(info_code);
	ASSERT_PT(0, pt_ioctl(xfd, PTASK_IOC_EXEC_PTASK_INFO, &a));
	ASSERT_EQ(sizeof(info_code), a.code_len);
	ASSERT_EQ(0, memcmp(info_code, buf, sizeof(info_code)));
	ASSERT_EQ(0xee, buf[sizeof(info_code)]);
}

TEST_HARNESS_MAIN
