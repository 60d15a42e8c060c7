// SPDX-License-Identifier: GPL-2.0
/*
 * ahead_test - chains without the host (issue 12): EXEC_COMPLETE with
 * PTASK_EXEC_COMPLETE_AHEAD and _SETTLE through ptask.ko, driven by hand
 * from a second fd (self->xfd) that the setup registers as an executor.
 * Needs root (CAP_SYS_ADMIN).
 *
 *	client fd: push -> [stage0] -> [stage1] -> pull (GPU ptasks)
 *	executor xfd: stage0 completed ahead, stage1 taken and completed
 *	before stage0 is settled
 *
 * and PTASK_TAKE_FUSE: a 3-deep chain taken as one invocation.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>

#include "pt_harness.h"

FIXTURE(ahead) {
	struct pt_env env;
	int fd;		/* the client */
	int xfd;	/* the executor */
	struct pt_chain ch;
};

FIXTURE_SETUP(ahead)
{
	PT_ENV_SETUP(&self->env);
	if (geteuid() != 0)
		SKIP(pt_skip_exit(), "needs root (CAP_SYS_ADMIN) to register an executor");
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
	self->xfd = pt_env_open(&self->env);
	ASSERT_LE(0, self->xfd);
	ASSERT_PT(0, pt_nl_register(self->xfd));
	ASSERT_PT(0, pt_build_chain(self->fd, NULL, 2, PTASK_KIND_GPU, 4,
				    &self->ch));
	ASSERT_PT(0, pt_graph_run(self->fd, self->ch.graph));
}

FIXTURE_TEARDOWN(ahead)
{
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

static struct ptask_invocation inv[PT_EXEC_BATCH];
static struct ptask_invocation_port ports[PT_EXEC_PORTS];

/* Takes one invocation: its id, its ptask, its input's datablock. */
static int take_one(int xfd, __u64 *id, __u32 *ptask, __u32 *input)
{
	__u32 n_inv = 0, n_ports = 0, i;
	int r;

	r = pt_exec_take(xfd, 0, pt_wait_deadline(), inv, 1, ports,
			 PT_EXEC_PORTS, &n_inv, &n_ports);
	if (r)
		return r;
	if (n_inv != 1)
		return -EPROTO;
	*id = inv[0].id;
	*ptask = inv[0].ptask;
	for (i = 0; i < n_ports; i++)
		if (ports[i].kind == PTASK_PORT_INPUT)
			*input = ports[i].datablock;
	return 0;
}

/* EXEC_COMPLETE with @flags and at most one output. */
static int complete(int xfd, __u64 id, __u32 flags, __s32 status,
		    __u64 gpu_ns, __u32 out_db)
{
	struct ptask_exec_output o = { .index = 1, .datablock = out_db };
	struct ptask_exec_complete a = {
		.size = sizeof(a), .flags = flags, .id = id, .status = status,
		.gpu_ns = gpu_ns, .n_outputs = out_db ? 1 : 0,
		.outputs = out_db ? (uintptr_t)&o : 0,
	};

	return pt_ioctl(xfd, PTASK_IOC_EXEC_COMPLETE, &a);
}

/*
 * This process's GPU time as PTSched charged it.  Its sysfs directory
 * follows the process record from a workqueue: on the debug kernel the
 * first read came before it (-ENOENT), so the read waits for it a while.
 */
static int my_gpu_ns(__u64 *v)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "procs/%d/gpu_ns", getpid());
	return pt_sysfs_u64_wait(rel, v, 2000);
}

/*
 * stage0 completed ahead moves its output on at once: stage1 is taken
 * before stage0 is settled; stage1 (the client's) completed ahead too is
 * pulled only once settled; the settles charge the GPU time; the pull
 * gets stage0's bytes.
 */
TEST_F(ahead, ahead_then_settle)
{
	__u64 id0, id1, gpu0, gpu1;
	__u32 pt0, pt1, in0, in1, d0, seed, s;
	__u64 off, bytes, rec;
	void *p;

	ASSERT_PT(0, my_gpu_ns(&gpu0));
	ASSERT_PT(0, pt_push_seed(self->fd, self->ch.chan[0], 256, 5, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, take_one(self->xfd, &id0, &pt0, &in0));
	ASSERT_EQ(self->ch.ptask[0], pt0);
	ASSERT_PT(0, pt_db_create(self->xfd, 256, 0, 1, &d0, &off, NULL));
	p = pt_env_map(&self->env, self->xfd, off, 256);
	ASSERT_NE(NULL, p);
	pt_fill(p, 256, 77);
	pt_env_unmap(&self->env, p);
	/* Bad flag combinations never reach the invocation. */
	ASSERT_PT(-EINVAL, complete(self->xfd, id0, PTASK_EXEC_COMPLETE_FLAGS_ALL,
				    0, 0, 0));
	ASSERT_PT(-EINVAL, complete(self->xfd, id0, PTASK_EXEC_COMPLETE_AHEAD,
				    -EIO, 0, d0));
	ASSERT_PT(-EINVAL, complete(self->xfd, id0, PTASK_EXEC_COMPLETE_SETTLE,
				    0, 0, 0));	/* not completed ahead */
	ASSERT_PT(0, complete(self->xfd, id0, PTASK_EXEC_COMPLETE_AHEAD, 0, 0,
			      d0));
	/* Settling: no second completion; its input is still mappable. */
	ASSERT_PT(-EINVAL, complete(self->xfd, id0, 0, 0, 0, d0));
	/* The next hop, before stage0 settled. */
	ASSERT_PT(0, take_one(self->xfd, &id1, &pt1, &in1));
	ASSERT_EQ(self->ch.ptask[1], pt1);
	ASSERT_EQ(d0, in1);
	/*
	 * stage1 feeds the client: completed ahead too, but its output is
	 * pulled only once it settled.
	 */
	ASSERT_PT(0, complete(self->xfd, id1, PTASK_EXEC_COMPLETE_AHEAD, 0, 0,
			      in1));
	ASSERT_PT(-EAGAIN, pt_pull_seed(self->fd, self->ch.chan[2],
					PTASK_NONBLOCK, 0, &s, &bytes, &rec));
	ASSERT_PT(0, complete(self->xfd, id1, PTASK_EXEC_COMPLETE_SETTLE, 0,
			      300, 0));
	ASSERT_PT(0, complete(self->xfd, id0, PTASK_EXEC_COMPLETE_SETTLE, 0,
			      4000, 0));
	ASSERT_PT(-ENOENT, complete(self->xfd, id0,
				    PTASK_EXEC_COMPLETE_SETTLE, 0, 4000, 0));
	ASSERT_PT(0, my_gpu_ns(&gpu1));
	ASSERT_EQ(gpu0 + 4300, gpu1);
	ASSERT_PT(0, pt_pull_seed(self->fd, self->ch.chan[2], 0,
				  pt_wait_deadline(), &s, &bytes, &rec));
	seed = s;
	ASSERT_EQ(77U, seed);
	ASSERT_EQ(256ULL, bytes);
}

/* A failed settle fails the graph: the pull gets -EIO, not bytes. */
TEST_F(ahead, failed_settle_fails_graph)
{
	struct ptask_pull pl;
	__u64 id0, id1, off;
	__u32 pt, in, d0;

	ASSERT_PT(0, pt_push_seed(self->fd, self->ch.chan[0], 64, 1, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, take_one(self->xfd, &id0, &pt, &in));
	ASSERT_PT(0, pt_db_create(self->xfd, 64, 0, 1, &d0, &off, NULL));
	ASSERT_PT(0, complete(self->xfd, id0, PTASK_EXEC_COMPLETE_AHEAD, 0, 0,
			      d0));
	ASSERT_PT(0, take_one(self->xfd, &id1, &pt, &in));
	ASSERT_PT(0, complete(self->xfd, id0, PTASK_EXEC_COMPLETE_SETTLE, -EIO,
			      100, 0));
	ASSERT_PT(-EIO, pt_pull(self->fd, self->ch.chan[2], PTASK_NONBLOCK, 0,
				&pl));
	/* The downstream invocation was orphaned with the graph. */
	ASSERT_PT(-ECANCELED, complete(self->xfd, id1, 0, 0, 0, in));
}

/* The executor goes with an invocation Settling: its graph fails. */
TEST_F(ahead, executor_leaves_settling)
{
	struct ptask_pull pl;
	__u64 id0, off;
	__u32 pt, in, d0;

	ASSERT_PT(0, pt_push_seed(self->fd, self->ch.chan[0], 64, 1, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, take_one(self->xfd, &id0, &pt, &in));
	ASSERT_PT(0, pt_db_create(self->xfd, 64, 0, 1, &d0, &off, NULL));
	ASSERT_PT(0, complete(self->xfd, id0, PTASK_EXEC_COMPLETE_AHEAD, 0, 0,
			      d0));
	ASSERT_PT(0, pt_nl_unregister(self->xfd));
	ASSERT_PT(-EIO, pt_pull(self->fd, self->ch.chan[2], 0,
				pt_wait_deadline(), &pl));
}

/*
 * A running graph of @n GPU ptasks in a line (at most 4), each with one
 * input and one output of a 256-byte template: ptasks in @p, channels
 * in @c (in, the @n - 1 links, out).  0 or the first call's -errno.
 */
static int line_open(int fd, __u32 n, __u32 *g, __u32 *p, __u32 *c)
{
	__u32 t, in[4], out[4], i;
	char name[8];
	int err;

	if (n < 1 || n > 4)
		return -EINVAL;
	err = pt_graph_open(fd, NULL, PTASK_GRAPH_CREATE, 0600, g);
	err = err ?: pt_template_open(fd, *g, PTASK_TEMPLATE_OPAQUE,
				      PTASK_BIND_GLOBAL, 1, 256, 1, 1, "", &t);
	for (i = 0; !err && i < n; i++) {
		err = pt_ptask_open_gpu(fd, *g, 2, NULL, &p[i]);
		err = err ?: pt_port_open(fd, p[i], PTASK_PORT_INPUT, 0, 0, 0,
					  0, NULL, &in[i], NULL);
		err = err ?: pt_port_open(fd, p[i], PTASK_PORT_OUTPUT, 0, t, 1,
					  0, NULL, &out[i], NULL);
	}
	err = err ?: pt_channel_open(fd, *g, 0, in[0], 4, 0, "in", &c[0]);
	for (i = 1; !err && i < n; i++) {
		snprintf(name, sizeof(name), "l%u", i);
		err = pt_channel_open(fd, *g, out[i - 1], in[i], 4, 0, name,
				      &c[i]);
	}
	err = err ?: pt_channel_open(fd, *g, out[n - 1], 0, 4, 0, "out",
				     &c[n]);
	return err ?: pt_graph_run(fd, *g);
}

/*
 * PTASK_TAKE_AHEAD through the module: a two-stage chain whose output
 * ports have a 256-byte template.  One take returns both stages: stage0
 * completed ahead by the core, its output datablock named in its port
 * record and mappable by the executor (it writes it), and marked
 * PTASK_INVP_PENDING as stage1's input; stage1 (the client's, nothing
 * queued behind it) left to the executor.  A plain completion of stage0
 * is refused; after its settle and stage1's completion the pull gets
 * the bytes written through the executor's mapping.
 */
TEST_F(ahead, take_ahead_chain)
{
	__u32 g, p[2], c[3], n_inv = 0, n_ports = 0;
	__u32 d, seed, s;
	__u64 bytes, rec;
	void *map;

	ASSERT_PT(0, line_open(self->fd, 2, &g, p, c));
	ASSERT_PT(0, pt_push_seed(self->fd, c[0], 256, 3, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, pt_exec_take(self->xfd, PTASK_TAKE_AHEAD,
				  pt_wait_deadline(), inv, PT_EXEC_BATCH, ports,
				  PT_EXEC_PORTS, &n_inv, &n_ports));
	ASSERT_EQ(2U, n_inv);
	ASSERT_EQ(p[0], inv[0].ptask);
	ASSERT_EQ(PTASK_INV_AHEAD, inv[0].flags);
	ASSERT_EQ(p[1], inv[1].ptask);
	ASSERT_EQ(0U, inv[1].flags);
	d = ports[1].datablock;
	ASSERT_NE(0U, d);
	ASSERT_EQ(256ULL, ports[1].bytes);
	ASSERT_EQ(d, ports[2].datablock);
	ASSERT_EQ(PTASK_INVP_PENDING,
		  ports[2].flags & PTASK_INVP_PENDING);
	/* The executor writes stage0's output (here: stage1's result). */
	map = pt_env_map(&self->env, self->xfd, ports[1].mmap_offset, 256);
	ASSERT_NE(NULL, map);
	pt_fill(map, 256, 91);
	pt_env_unmap(&self->env, map);
	ASSERT_PT(-EINVAL, complete(self->xfd, inv[0].id, 0, 0, 0, 0));
	ASSERT_PT(0, complete(self->xfd, inv[0].id, PTASK_EXEC_COMPLETE_SETTLE,
			      0, 100, 0));
	ASSERT_PT(0, complete(self->xfd, inv[1].id, 0, 0, 100, d));
	ASSERT_PT(0, pt_pull_seed(self->fd, c[2], 0, pt_wait_deadline(), &s,
				  &bytes, &rec));
	seed = s;
	ASSERT_EQ(91U, seed);
	ASSERT_PT(0, pt_graph_close(self->fd, g));
}

/*
 * PTASK_TAKE_FUSE through ptask.ko: a 3-deep chain of GPU ptasks with
 * templates on their outputs comes as one invocation (a segment): the
 * records of each ptask in turn with @member set, the two links' ends
 * PTASK_INVP_FUSED without datablock; completing it ahead is refused;
 * the plain completion names the last ptask's output port; the pull
 * gets the executor's bytes, twice.  Without the flag, the same chain comes ptask by
 * ptask.
 */
TEST_F(ahead, fused_segment)
{
	__u32 g, p[3], c[4], n_inv = 0, n_ports = 0, i;
	__u32 d, s, round;
	__u64 bytes, rec;

	ASSERT_PT(0, line_open(self->fd, 3, &g, p, c));
	for (round = 0; round < 2; round++) {
		ASSERT_PT(0, pt_push_seed(self->fd, c[0], 256, 3, 0, 0,
					  pt_wait_deadline()));
		ASSERT_PT(0, pt_exec_take(self->xfd, PTASK_TAKE_FUSE |
					  PTASK_TAKE_AHEAD,
					  pt_wait_deadline(), inv,
					  PT_EXEC_BATCH, ports, PT_EXEC_PORTS,
					  &n_inv, &n_ports));
		ASSERT_EQ(1U, n_inv);
		ASSERT_EQ(p[0], inv[0].ptask);
		ASSERT_EQ(PTASK_INV_SEGMENT, inv[0].flags);
		ASSERT_EQ(6U, inv[0].n_ports);
		ASSERT_EQ(6U, n_ports);
		for (i = 0; i < 6; i++) {
			ASSERT_EQ(p[i / 2], ports[i].member);
			ASSERT_EQ(i % 2, ports[i].index);
			ASSERT_EQ(256ULL, ports[i].bytes);
			ASSERT_EQ(i != 0 && i != 5,
				  !!(ports[i].flags & PTASK_INVP_FUSED));
			ASSERT_EQ(i == 0, ports[i].datablock != 0);
		}
		ASSERT_PT(0, pt_db_make(self->xfd, 256, 40 + round, &d));
		ASSERT_PT(-EINVAL, complete(self->xfd, inv[0].id,
					    PTASK_EXEC_COMPLETE_AHEAD, 0, 0,
					    d));
		ASSERT_PT(0, complete(self->xfd, inv[0].id, 0, 0, 300, d));
		ASSERT_PT(0, pt_pull_seed(self->fd, c[3], 0,
					  pt_wait_deadline(), &s, &bytes,
					  &rec));
		ASSERT_EQ(40U + round, s);
	}
	/* Without the flag: ptask by ptask. */
	ASSERT_PT(0, pt_push_seed(self->fd, c[0], 256, 3, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, pt_exec_take(self->xfd, 0, pt_wait_deadline(), inv,
				  PT_EXEC_BATCH, ports, PT_EXEC_PORTS, &n_inv,
				  &n_ports));
	ASSERT_EQ(1U, n_inv);
	ASSERT_EQ(0U, inv[0].flags);
	ASSERT_EQ(2U, n_ports);
	ASSERT_EQ(0U, ports[0].member);
	ASSERT_PT(0, pt_graph_close(self->fd, g));
}

TEST_HARNESS_MAIN
