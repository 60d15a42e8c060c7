// SPDX-License-Identifier: GPL-2.0
/*
 * exec_test - the executor side: PTASK_IOC_EXEC_TAKE, _EXEC_COMPLETE and
 * _EXEC_PTASK_INFO, driven by hand from a second fd (self->xfd) that the
 * setup registers as an executor.  Needs root (CAP_SYS_ADMIN).
 *
 *	client fd: push -> [in0] -> copy -> [out0] -> pull
 *	executor xfd: EXEC_TAKE / EXEC_COMPLETE, step by step
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "pt_harness.h"

FIXTURE(exec) {
	struct pt_env env;
	int fd;		/* the client */
	int xfd;	/* the executor */
};

FIXTURE_SETUP(exec)
{
	PT_ENV_SETUP(&self->env);
	if (geteuid() != 0)
		SKIP(pt_skip_exit(), "needs root (CAP_SYS_ADMIN) to register an executor");
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
	self->xfd = pt_env_open(&self->env);
	ASSERT_LE(0, self->xfd);
	ASSERT_PT(0, pt_nl_register(self->xfd));
}

FIXTURE_TEARDOWN(exec)
{
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

struct taken {
	struct ptask_invocation inv[PT_EXEC_BATCH];
	struct ptask_invocation_port ports[PT_EXEC_PORTS];
	__u32 n_inv, n_ports;
};

/*
 * What the last successful EXEC_TAKE returned (static: too big for comfort
 * on a stack); a failed take leaves it alone.
 */
static struct taken tk, scratch;

static int take_n(int xfd, __u32 flags, unsigned int ms, __u32 max_ports)
{
	int r;

	memset(&scratch, 0, sizeof(scratch));
	r = pt_exec_take(xfd, flags, ms ? pt_deadline_ms(ms) : 0, scratch.inv,
			 PT_EXEC_BATCH, scratch.ports, max_ports,
			 &scratch.n_inv, &scratch.n_ports);
	if (!r)
		tk = scratch;
	return r;
}

static int take(int xfd, unsigned int ms)
{
	return take_n(xfd, 0, ms, PT_EXEC_PORTS);
}

static const struct ptask_invocation_port *
port_of(const struct ptask_invocation *inv, __u32 index)
{
	__u32 i;

	for (i = 0; i < inv->n_ports; i++)
		if (tk.ports[inv->first_port + i].index == index)
			return &tk.ports[inv->first_port + i];
	return NULL;
}

/* Completes @inv passing input port @in through to output port @out. */
static int pass_through(int xfd, const struct ptask_invocation *inv,
			__u32 in, __u32 out)
{
	const struct ptask_invocation_port *p = port_of(inv, in);
	struct ptask_exec_output o = { .index = out };

	if (!p)
		return -ENXIO;
	o.datablock = p->datablock;
	return pt_exec_complete(xfd, inv->id, 0, 1000, &o, 1);
}

/* The seed of the pattern in input port @index, as the executor maps it. */
static int input_seed(int xfd, const struct ptask_invocation *inv,
		      __u32 index, __u32 *seed)
{
	const struct ptask_invocation_port *p = port_of(inv, index);
	void *m;
	int r;

	if (!p)
		return -ENXIO;
	m = pt_map(xfd, p->mmap_offset, p->bytes, PROT_READ);
	if (!m)
		return -errno;
	r = pt_check(m, p->bytes, seed);
	munmap(m, p->bytes);
	return r;
}

TEST_F(exec, take_invocation_fields)
{
	const struct ptask_invocation_port *in, *out;
	const struct ptask_invocation *inv;
	struct pt_copy_graph g;
	__u64 t0;
	__u32 db, s;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_db_make(self->fd, 256, 11, &db));
	t0 = pt_now_ns();
	ASSERT_PT(0, pt_push(self->fd, g.in_chan[0], db,
			     PTASK_PUSH_SET_RECORDS, 3, pt_wait_deadline()));
	ASSERT_PT(0, take(self->xfd, PT_WAIT_MS));
	ASSERT_EQ(1U, tk.n_inv);
	ASSERT_EQ(2U, tk.n_ports);
	inv = &tk.inv[0];
	ASSERT_EQ(g.ptask, inv->ptask);
	ASSERT_EQ(g.graph, inv->graph);
	ASSERT_EQ((__u32)PTASK_KIND_GPU, inv->kind);
	ASSERT_EQ(getpid(), inv->owner_pid);
	ASSERT_EQ(geteuid(), inv->owner_uid);
	ASSERT_EQ((__u32)PTASK_PRIO_DEFAULT, inv->static_prio);
	ASSERT_EQ(getpriority(PRIO_PROCESS, 0), inv->proxy_nice);
	ASSERT_EQ(0U, inv->first_port);
	ASSERT_EQ(2U, inv->n_ports);
	ASSERT_LE(t0, inv->queued_ns);
	ASSERT_GE(pt_now_ns(), inv->queued_ns);

	in = port_of(inv, 0);
	ASSERT_NE(NULL, in);
	ASSERT_EQ(g.in_port[0], in->port);
	ASSERT_EQ((__u32)PTASK_PORT_INPUT, in->kind);
	ASSERT_EQ(db, in->datablock);	/* the pushed datablock itself */
	ASSERT_EQ(256ULL, in->bytes);
	ASSERT_EQ(3ULL, in->records);
	ASSERT_EQ(0U, in->template);
	ASSERT_EQ(0U, in->param_index);
	out = port_of(inv, 1);
	ASSERT_NE(NULL, out);
	ASSERT_EQ(g.out_port[0], out->port);
	ASSERT_EQ((__u32)PTASK_PORT_OUTPUT, out->kind);
	ASSERT_EQ(0U, out->datablock);
	ASSERT_EQ(0ULL, out->bytes);	/* no template */
	ASSERT_EQ(1U, out->param_index);

	/* The executor sees the producer's bytes. */
	ASSERT_PT(0, input_seed(self->xfd, inv, 0, &s));
	ASSERT_EQ(11U, s);
	ASSERT_PT(0, pt_db_release(self->fd, db));
	ASSERT_PT(0, pass_through(self->xfd, inv, 0, 1));
}

/*
 * One datablock of @bytes (pattern @seed) pushed into @g's input, taken
 * by @xfd and passed through, pulled into @pl: 0 or the first -errno.
 * The caller holds two references (its own and the pull's).
 */
static int through_once(int fd, int xfd, const struct pt_copy_graph *g,
			size_t bytes, __u32 seed, __u32 *db,
			struct ptask_pull *pl)
{
	int r = pt_db_make(fd, bytes, seed, db);

	r = r ?: pt_push(fd, g->in_chan[0], *db, 0, 0, pt_wait_deadline());
	r = r ?: take(xfd, PT_WAIT_MS);
	if (!r && tk.n_inv != 1)
		r = -ENOMSG;
	r = r ?: pass_through(xfd, &tk.inv[0], 0, 1);
	return r ?: pt_pull(fd, g->out_chan[0], 0, pt_wait_deadline(), pl);
}

/*
 * Pass-through: the output is the input datablock itself, so the puller
 * gets the pushed handle.  Assumption: references are counted per client,
 * so after create + pull the client holds two.
 */
TEST_F(exec, complete_pass_through)
{
	struct pt_copy_graph g;
	struct ptask_pull pl;
	__u32 db, s;
	void *p;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, through_once(self->fd, self->xfd, &g, 4096, 21, &db, &pl));
	ASSERT_EQ(db, pl.datablock);
	ASSERT_EQ(4096ULL, pl.bytes);
	p = pt_env_map(&self->env, self->fd, pl.mmap_offset, pl.bytes);
	ASSERT_NE(NULL, p);
	ASSERT_PT(0, pt_check(p, pl.bytes, &s));
	ASSERT_EQ(21U, s);
	ASSERT_PT(0, pt_db_release(self->fd, db));
	ASSERT_PT(0, pt_db_release(self->fd, db));
	ASSERT_PT(-ENOENT, pt_db_release(self->fd, db));
}

/*
 * Executors per uid: one registered for a uid takes that uid's
 * invocations alone, and no executor without a uid takes them while it
 * is registered; once it goes, they do again.
 */
TEST_F(exec, uid_executor_takes_its_uid_alone)
{
	struct pt_copy_graph g;
	struct ptask_pull pl;
	int nobody_x, my_x;
	__u32 db;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	nobody_x = pt_env_open(&self->env);
	ASSERT_LE(0, nobody_x);
	ASSERT_PT(0, pt_nl_register_uid(nobody_x, PT_NOBODY));
	ASSERT_PT(0, pt_db_make(self->fd, 4096, 5, &db));
	ASSERT_PT(0, pt_push(self->fd, g.in_chan[0], db, 0, 0,
			     pt_wait_deadline()));
	/* nobody's executor never takes root's */
	ASSERT_PT(-EAGAIN, take_n(nobody_x, PTASK_NONBLOCK, 0, PT_EXEC_PORTS));
	my_x = pt_env_open(&self->env);
	ASSERT_LE(0, my_x);
	ASSERT_PT(0, pt_nl_register_uid(my_x, geteuid()));
	ASSERT_PT(-EALREADY, pt_nl_register_uid(my_x, geteuid()));
	/* root's own executor now: the plain one leaves it */
	ASSERT_PT(-EAGAIN, take_n(self->xfd, PTASK_NONBLOCK, 0, PT_EXEC_PORTS));
	ASSERT_PT(0, take(my_x, PT_WAIT_MS));
	ASSERT_EQ(1U, tk.n_inv);
	ASSERT_EQ(geteuid(), tk.inv[0].owner_uid);
	ASSERT_PT(0, pass_through(my_x, &tk.inv[0], 0, 1));
	ASSERT_PT(0, pt_pull(self->fd, g.out_chan[0], 0, pt_wait_deadline(),
			     &pl));
	ASSERT_PT(0, pt_db_release(self->fd, pl.datablock));
	/* it goes: the plain executor takes root's again */
	pt_env_close(&self->env, my_x);
	ASSERT_PT(0, pt_push(self->fd, g.in_chan[0], db, 0, 0,
			     pt_wait_deadline()));
	ASSERT_PT(0, take(self->xfd, PT_WAIT_MS));
	ASSERT_EQ(1U, tk.n_inv);
	ASSERT_PT(0, pass_through(self->xfd, &tk.inv[0], 0, 1));
	ASSERT_PT(0, pt_pull(self->fd, g.out_chan[0], 0, pt_wait_deadline(),
			     &pl));
	ASSERT_PT(0, pt_db_release(self->fd, pl.datablock));
	ASSERT_PT(0, pt_db_release(self->fd, db));
	pt_env_close(&self->env, nobody_x);
}

/* A datablock the executor made: its reference passes to the port. */
TEST_F(exec, complete_new_datablock)
{
	struct ptask_exec_output o = { .index = 1 };
	struct pt_copy_graph g;
	__u64 off, rec, bytes;
	__u32 s;
	void *p;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, take(self->xfd, PT_WAIT_MS));
	ASSERT_EQ(1U, tk.n_inv);
	ASSERT_PT(0, pt_db_create(self->xfd, 512, 0, 9, &o.datablock, &off,
				  NULL));
	p = pt_env_map(&self->env, self->xfd, off, 512);
	ASSERT_NE(NULL, p);
	pt_fill(p, 512, 99);
	pt_env_unmap(&self->env, p);
	ASSERT_PT(0, pt_exec_complete(self->xfd, tk.inv[0].id, 0, 12345, &o,
				      1));
	ASSERT_PT(-ENOENT, pt_db_release(self->xfd, o.datablock));
	ASSERT_PT(0, pt_pull_seed(self->fd, g.out_chan[0], 0,
				  pt_wait_deadline(), &s, &bytes, &rec));
	ASSERT_EQ(99U, s);
	ASSERT_EQ(512ULL, bytes);
	ASSERT_EQ(9ULL, rec);
}

/*
 * Waiting -> Queued -> Executing -> Completed -> Waiting.  Taking an
 * invocation empties the input port, which refills from its channel at
 * once, but the ptask is not queued again until the invocation completed.
 */
TEST_F(exec, one_invocation_at_a_time)
{
	struct pt_copy_spec sp = { .kind = PTASK_KIND_GPU, .n = 1, .in_cap = 1,
				   .run = true };
	struct ptask_invocation_port ports[2];
	struct ptask_invocation inv;
	struct pt_copy_graph g;
	__u64 id1;
	__u32 s;

	ASSERT_PT(0, pt_build_copy(self->fd, &sp, &g));
	/* Executor not taking yet: 1 is Queued in the port, 2 waits. */
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0,
				  PTASK_NONBLOCK, 0));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 2, 0,
				  PTASK_NONBLOCK, 0));
	ASSERT_PT(-EAGAIN, pt_push_seed(self->fd, g.in_chan[0], 64, 3, 0,
					PTASK_NONBLOCK, 0));
	ASSERT_PT(0, take(self->xfd, PT_WAIT_MS));
	ASSERT_EQ(1U, tk.n_inv);
	id1 = tk.inv[0].id;
	ASSERT_PT(0, input_seed(self->xfd, &tk.inv[0], 0, &s));
	ASSERT_EQ(1U, s);
	/* 2 moved from the channel into the port: room for exactly one. */
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 3, 0,
				  PTASK_NONBLOCK, 0));
	ASSERT_PT(-EAGAIN, pt_push_seed(self->fd, g.in_chan[0], 64, 4, 0,
					PTASK_NONBLOCK, 0));
	/* Executing: not queued again although its input is Occupied. */
	ASSERT_PT(-EAGAIN, pt_exec_take(self->xfd, PTASK_NONBLOCK, 0, &inv, 1,
					ports, 2, NULL, NULL));
	ASSERT_PT(0, pass_through(self->xfd, &tk.inv[0], 0, 1));
	/* Completed, outputs gone: Waiting, and at once Queued again. */
	ASSERT_PT(0, take(self->xfd, PT_WAIT_MS));
	ASSERT_EQ(1U, tk.n_inv);
	ASSERT_NE(id1, tk.inv[0].id);
	ASSERT_PT(0, input_seed(self->xfd, &tk.inv[0], 0, &s));
	ASSERT_EQ(2U, s);
	ASSERT_PT(0, pass_through(self->xfd, &tk.inv[0], 0, 1));
	ASSERT_PT(0, pt_pull_seed(self->fd, g.out_chan[0], 0,
				  pt_wait_deadline(), &s, NULL, NULL));
	ASSERT_EQ(1U, s);
	ASSERT_PT(0, pt_pull_seed(self->fd, g.out_chan[0], 0,
				  pt_wait_deadline(), &s, NULL, NULL));
	ASSERT_EQ(2U, s);
}

/*
 * A sticky port hands the same datablock to every invocation.  Assumption:
 * a sticky input may be passed through to an output (it stays in its port
 * as well).
 */
TEST_F(exec, sticky_datablock_in_every_invocation)
{
	struct pt_copy_spec sp = { .kind = PTASK_KIND_GPU, .n = 2,
				   .sticky_mask = 1, .run = true };
	const struct ptask_invocation_port *p;
	struct ptask_exec_output o[2] = { { .index = 2 }, { .index = 3 } };
	struct pt_copy_graph g;
	__u32 sticky, i, s;

	ASSERT_PT(0, pt_build_copy(self->fd, &sp, &g));
	ASSERT_PT(0, pt_db_make(self->fd, 64, 500, &sticky));
	ASSERT_PT(0, pt_push(self->fd, g.in_chan[0], sticky, 0, 0,
			     pt_wait_deadline()));
	for (i = 0; i < 3; i++) {
		ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[1], 64, i, 0, 0,
					  pt_wait_deadline()));
		ASSERT_PT(0, take(self->xfd, PT_WAIT_MS));
		ASSERT_EQ(1U, tk.n_inv);
		p = port_of(&tk.inv[0], 0);
		ASSERT_NE(NULL, p);
		ASSERT_EQ((__u32)PTASK_PORT_STICKY, p->kind);
		ASSERT_EQ(sticky, p->datablock);
		o[0].datablock = p->datablock;
		p = port_of(&tk.inv[0], 1);
		ASSERT_NE(NULL, p);
		ASSERT_PT(0, input_seed(self->xfd, &tk.inv[0], 1, &s));
		ASSERT_EQ(i, s);
		o[1].datablock = p->datablock;
		ASSERT_PT(0, pt_exec_complete(self->xfd, tk.inv[0].id, 0, 1, o,
					      2));
		/* Only the sticky input is Occupied: nothing is queued. */
		ASSERT_PT(-EAGAIN, take_n(self->xfd, PTASK_NONBLOCK, 0,
					  PT_EXEC_PORTS));
	}
	ASSERT_PT(0, pt_db_release(self->fd, sticky));
}

TEST_F(exec, ports_described_in_invocation)
{
	const struct ptask_invocation_port *p;
	struct ptask_exec_output o[2] = { { .index = 2 }, { .index = 3 } };
	__u32 g, t, pt, in0, in1, out0, out1, c0, c1, d0;

	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600, &g));
	ASSERT_PT(0, pt_template_open(self->fd, g, PTASK_TEMPLATE_ARRAY,
				      PTASK_BIND_GLOBAL, 4, 8, 1, 1, "", &t));
	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, g, 4, "", &pt));
	ASSERT_PT(0, pt_port_open(self->fd, pt, PTASK_PORT_INPUT,
				  PTASK_PORT_RUNTIME, t, 5, 0, "", &in0, NULL));
	ASSERT_PT(0, pt_port_open(self->fd, pt, PTASK_PORT_STICKY, 0, 0, 1, 0,
				  "", &in1, NULL));
	ASSERT_PT(0, pt_port_open(self->fd, pt, PTASK_PORT_OUTPUT, 0, t, 2, 0,
				  "", &out0, NULL));
	ASSERT_PT(0, pt_port_open(self->fd, pt, PTASK_PORT_OUTPUT, 0, 0, 3, 0,
				  "", &out1, NULL));
	ASSERT_PT(0, pt_channel_open(self->fd, g, 0, in0, 2, t, "", &c0));
	ASSERT_PT(0, pt_channel_open(self->fd, g, 0, in1, 2, 0, "", &c1));
	ASSERT_PT(0, pt_channel_open(self->fd, g, out0, 0, 2, 0, "", NULL));
	ASSERT_PT(0, pt_channel_open(self->fd, g, out1, 0, 2, 0, "", NULL));
	ASSERT_PT(0, pt_graph_run(self->fd, g));
	ASSERT_PT(0, pt_db_create(self->fd, 0, t, 0, &d0, NULL, NULL));
	ASSERT_PT(0, pt_push(self->fd, c0, d0, 0, 0, pt_wait_deadline()));
	ASSERT_PT(0, pt_db_release(self->fd, d0));
	ASSERT_PT(0, pt_push_seed(self->fd, c1, 16, 1, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, take(self->xfd, PT_WAIT_MS));
	ASSERT_EQ(1U, tk.n_inv);
	ASSERT_EQ(4U, tk.inv[0].n_ports);

	p = port_of(&tk.inv[0], 0);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(in0, p->port);
	ASSERT_EQ((__u32)PTASK_PORT_INPUT, p->kind);
	ASSERT_EQ((__u32)PTASK_PORT_RUNTIME, p->flags);
	ASSERT_EQ(t, p->template);
	ASSERT_EQ(5U, p->param_index);
	ASSERT_EQ(d0, p->datablock);
	ASSERT_EQ(32ULL, p->bytes);
	o[0].datablock = p->datablock;
	p = port_of(&tk.inv[0], 1);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(in1, p->port);
	ASSERT_EQ((__u32)PTASK_PORT_STICKY, p->kind);
	ASSERT_EQ(16ULL, p->bytes);
	o[1].datablock = p->datablock;
	p = port_of(&tk.inv[0], 2);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(out0, p->port);
	ASSERT_EQ((__u32)PTASK_PORT_OUTPUT, p->kind);
	ASSERT_EQ(t, p->template);
	ASSERT_EQ(0U, p->datablock);
	ASSERT_EQ(32ULL, p->bytes);	/* the template's size */
	p = port_of(&tk.inv[0], 3);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(out1, p->port);
	ASSERT_EQ(0ULL, p->bytes);
	ASSERT_PT(0, pt_exec_complete(self->xfd, tk.inv[0].id, 0, 1, o, 2));
}

TEST_F(exec, priority_in_invocation)
{
	struct pt_copy_graph g;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_set_priority(self->fd, g.ptask, PTASK_PRIO_FLAGS_ALL,
				     77, 3));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, take(self->xfd, PT_WAIT_MS));
	ASSERT_EQ(1U, tk.n_inv);
	ASSERT_EQ(77U, tk.inv[0].static_prio);
	ASSERT_EQ(3, tk.inv[0].proxy_nice);
	ASSERT_PT(0, pass_through(self->xfd, &tk.inv[0], 0, 1));
}

TEST_F(exec, not_queued_before_run)
{
	struct pt_copy_graph g;

	ASSERT_PT(0, pt_build_copy1(self->fd, false, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(-EAGAIN, take_n(self->xfd, PTASK_NONBLOCK, 0, PT_EXEC_PORTS));
	ASSERT_PT(0, pt_graph_run(self->fd, g.graph));
	ASSERT_PT(0, take(self->xfd, PT_WAIT_MS));
	ASSERT_EQ(1U, tk.n_inv);
	ASSERT_EQ(g.ptask, tk.inv[0].ptask);
	ASSERT_PT(0, pass_through(self->xfd, &tk.inv[0], 0, 1));
}

TEST_F(exec, take_nonblock_eagain)
{
	ASSERT_PT(-EAGAIN, take_n(self->xfd, PTASK_NONBLOCK, 0, PT_EXEC_PORTS));
}

TEST_F(exec, take_timeout_etimedout)
{
	__u64 t0 = pt_now_ns(), dt;

	ASSERT_PT(-ETIMEDOUT, take(self->xfd, 150));
	dt = pt_now_ns() - t0;
	/* Not before its deadline; after it, only as late as a busy host is. */
	ASSERT_LE(140000000ULL, dt);
	ASSERT_GT(PT_WAIT_MS * 1000000ULL, dt);
}

TEST_F(exec, take_signal_eintr)
{
	struct pt_kicker k;
	int r;

	ASSERT_PT(0, pt_sig_noop(SIGUSR1));
	ASSERT_PT(0, pt_kick_after(&k, pthread_self(), SIGUSR1, 100));
	r = take(self->xfd, PT_WAIT_MS);
	pt_kick_join(&k);
	ASSERT_PT(-EINTR, r);
}

TEST_F(exec, take_ports_too_small_enospc)
{
	struct pollfd pf = { .fd = self->xfd, .events = POLLIN };
	struct pt_copy_graph g;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0, 0,
				  pt_wait_deadline()));
	/* Wait until it is queued, then ask with room for 1 of 2 ports. */
	ASSERT_EQ(1, poll(&pf, 1, PT_WAIT_MS));
	ASSERT_PT(-ENOSPC, take_n(self->xfd, 0, PT_WAIT_MS, 1));
	/* It stayed queued. */
	ASSERT_PT(0, take_n(self->xfd, 0, PT_WAIT_MS, 2));
	ASSERT_EQ(1U, tk.n_inv);
	ASSERT_EQ(2U, tk.n_ports);
	ASSERT_PT(0, pass_through(self->xfd, &tk.inv[0], 0, 1));
}

TEST_F(exec, take_zero_sizes_einval)
{
	struct ptask_invocation inv;
	struct ptask_invocation_port ports[4];

	ASSERT_PT(-EINVAL, pt_exec_take(self->xfd, PTASK_NONBLOCK, 0, &inv, 0,
					ports, 4, NULL, NULL));
	ASSERT_PT(-EINVAL, pt_exec_take(self->xfd, PTASK_NONBLOCK, 0, &inv, 1,
					ports, 0, NULL, NULL));
}

/*
 * Batches: three queued invocations of two ports each.  Room for 4 ports
 * takes two; the third stays queued for the next call.  Assumption: a
 * ptask is Queued by the push that fills its last input, before that push
 * returns.
 */
TEST_F(exec, take_batches)
{
	struct pt_copy_graph g[3];
	__u32 i, seen = 0;

	for (i = 0; i < 3; i++) {
		ASSERT_PT(0, pt_build_copy1(self->fd, true, &g[i]));
		ASSERT_PT(0, pt_push_seed(self->fd, g[i].in_chan[0], 64, i, 0,
					  0, pt_wait_deadline()));
	}
	ASSERT_PT(0, take_n(self->xfd, 0, PT_WAIT_MS, 4));
	ASSERT_EQ(2U, tk.n_inv);
	ASSERT_EQ(4U, tk.n_ports);
	ASSERT_EQ(0U, tk.inv[0].first_port);
	ASSERT_EQ(2U, tk.inv[0].n_ports);
	ASSERT_EQ(2U, tk.inv[1].first_port);
	ASSERT_EQ(2U, tk.inv[1].n_ports);
	for (i = 0; i < 2; i++) {
		seen |= 1U << (tk.inv[i].ptask == g[0].ptask ? 0 :
			       tk.inv[i].ptask == g[1].ptask ? 1 : 2);
		ASSERT_PT(0, pass_through(self->xfd, &tk.inv[i], 0, 1));
	}
	ASSERT_PT(0, take_n(self->xfd, PTASK_NONBLOCK, 0, PT_EXEC_PORTS));
	ASSERT_EQ(1U, tk.n_inv);
	seen |= 1U << (tk.inv[0].ptask == g[0].ptask ? 0 :
		       tk.inv[0].ptask == g[1].ptask ? 1 : 2);
	ASSERT_EQ(7U, seen);
	ASSERT_PT(0, pass_through(self->xfd, &tk.inv[0], 0, 1));
}

/*
 * Output list errors.  Assumption: a refused EXEC_COMPLETE changes
 * nothing, so the invocation can still be completed properly.
 */
TEST_F(exec, complete_bad_outputs_einval)
{
	struct pt_copy_spec sp = { .kind = PTASK_KIND_GPU, .n = 2, .run = true };
	struct ptask_exec_output o[2];
	struct pt_copy_graph g;
	__u32 a, b;
	__u64 id;

	ASSERT_PT(0, pt_build_copy(self->fd, &sp, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[1], 64, 2, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, take(self->xfd, PT_WAIT_MS));
	ASSERT_EQ(1U, tk.n_inv);
	id = tk.inv[0].id;
	a = port_of(&tk.inv[0], 0)->datablock;
	b = port_of(&tk.inv[0], 1)->datablock;

	/* Missing outputs: none, then one of two. */
	ASSERT_PT(-EINVAL, pt_exec_complete(self->xfd, id, 0, 1, NULL, 0));
	o[0] = (struct ptask_exec_output){ .index = 2, .datablock = a };
	ASSERT_PT(-EINVAL, pt_exec_complete(self->xfd, id, 0, 1, o, 1));
	/* Duplicate. */
	o[1] = (struct ptask_exec_output){ .index = 2, .datablock = b };
	ASSERT_PT(-EINVAL, pt_exec_complete(self->xfd, id, 0, 1, o, 2));
	/* No such port. */
	o[1].index = 4;
	ASSERT_PT(-EINVAL, pt_exec_complete(self->xfd, id, 0, 1, o, 2));
	/* An input port is not an output. */
	o[1].index = 0;
	ASSERT_PT(-EINVAL, pt_exec_complete(self->xfd, id, 0, 1, o, 2));
	/* Now right. */
	o[1].index = 3;
	ASSERT_PT(0, pt_exec_complete(self->xfd, id, 0, 1, o, 2));
}

TEST_F(exec, complete_unknown_invocation_enoent)
{
	struct pt_copy_graph g;
	__u64 id;

	ASSERT_PT(-ENOENT, pt_exec_complete(self->xfd, 0x7fffffffULL, 0, 1,
					    NULL, 0));
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, take(self->xfd, PT_WAIT_MS));
	ASSERT_EQ(1U, tk.n_inv);
	id = tk.inv[0].id;
	ASSERT_PT(-ENOENT, pt_exec_complete(self->xfd, id + 1000, 0, 1, NULL,
					    0));
	ASSERT_PT(0, pass_through(self->xfd, &tk.inv[0], 0, 1));
	/* Completed once: gone. */
	ASSERT_PT(-ENOENT, pass_through(self->xfd, &tk.inv[0], 0, 1));
}

TEST_F(exec, complete_unknown_datablock_enoent)
{
	struct ptask_exec_output o = { .index = 1 };
	struct pt_copy_graph g;
	__u32 mine;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, take(self->xfd, PT_WAIT_MS));
	ASSERT_EQ(1U, tk.n_inv);
	o.datablock = 0x7ffffff0;
	ASSERT_PT(-ENOENT, pt_exec_complete(self->xfd, tk.inv[0].id, 0, 1, &o,
					    1));
	/* Held by the client, not by the executor nor in the invocation. */
	ASSERT_PT(0, pt_db_make(self->fd, 64, 2, &mine));
	o.datablock = mine;
	ASSERT_PT(-ENOENT, pt_exec_complete(self->xfd, tk.inv[0].id, 0, 1, &o,
					    1));
	ASSERT_PT(0, pt_db_release(self->fd, mine));
	ASSERT_PT(0, pass_through(self->xfd, &tk.inv[0], 0, 1));
}

/* "no such invocation taken by this fd" */
TEST_F(exec, complete_by_other_executor_enoent)
{
	struct pt_copy_graph g;
	int xfd2;

	xfd2 = pt_env_open(&self->env);
	ASSERT_LE(0, xfd2);
	ASSERT_PT(0, pt_nl_register(xfd2));
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, take(self->xfd, PT_WAIT_MS));
	ASSERT_EQ(1U, tk.n_inv);
	ASSERT_PT(-ENOENT, pass_through(xfd2, &tk.inv[0], 0, 1));
	ASSERT_PT(0, pass_through(self->xfd, &tk.inv[0], 0, 1));
}

TEST_F(exec, complete_outputs_efault)
{
	struct pt_copy_graph g;
	void *bad;

	bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, bad);
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, take(self->xfd, PT_WAIT_MS));
	ASSERT_EQ(1U, tk.n_inv);
	ASSERT_PT(-EFAULT, pt_exec_complete(self->xfd, tk.inv[0].id, 0, 1, bad,
					    1));
	munmap(bad, 4096);
	ASSERT_PT(0, pass_through(self->xfd, &tk.inv[0], 0, 1));
}

struct puller {
	int fd;
	__u32 chan;
	pid_t tid;	/* atomic */
	int result;
};

static void *puller_main(void *arg)
{
	struct puller *p = arg;

	__atomic_store_n(&p->tid, pt_gettid(), __ATOMIC_SEQ_CST);
	p->result = pt_pull(p->fd, p->chan, 0, pt_wait_deadline(), NULL);
	return NULL;
}

/*
 * A non-zero status fails the graph: blocked callers wake with -EIO, later
 * ones get -EIO too.  Assumption: a failing completion needs no outputs.
 */
TEST_F(exec, complete_error_status_fails_graph)
{
	struct puller pl = { 0 };
	struct pt_copy_graph g;
	pthread_t t;
	pid_t tid;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, take(self->xfd, PT_WAIT_MS));
	ASSERT_EQ(1U, tk.n_inv);
	pl.fd = self->fd;
	pl.chan = g.out_chan[0];
	ASSERT_EQ(0, pthread_create(&t, NULL, puller_main, &pl));
	tid = pt_wait_tid(&pl.tid);
	EXPECT_NE(0, tid);
	EXPECT_PT(0, pt_wait_sleeping(getpid(), tid, PT_WAIT_MS));
	pt_sleep_ms(30);
	EXPECT_PT(0, pt_exec_complete(self->xfd, tk.inv[0].id, -ENOEXEC, 1,
				      NULL, 0));
	pthread_join(t, NULL);
	ASSERT_PT(-EIO, pl.result);
	ASSERT_PT(-EIO, pt_push_seed(self->fd, g.in_chan[0], 64, 2, 0,
				     PTASK_NONBLOCK, 0));
	ASSERT_PT(-EIO, pt_pull(self->fd, g.out_chan[0], PTASK_NONBLOCK, 0,
				NULL));
}

/* The graph went away under a taken invocation: its outputs are released. */
TEST_F(exec, complete_after_terminate_ecanceled)
{
	struct ptask_exec_output o = { .index = 1 };
	__u64 c[__PTASK_COUNT_MAX];
	struct pt_copy_graph g;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_counts_read(c));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, take(self->xfd, PT_WAIT_MS));
	ASSERT_EQ(1U, tk.n_inv);
	ASSERT_PT(0, pt_db_create(self->xfd, 64, 0, 0, &o.datablock, NULL,
				  NULL));
	ASSERT_PT(0, pt_graph_terminate(self->fd, g.graph));
	ASSERT_PT(-ECANCELED, pt_exec_complete(self->xfd, tk.inv[0].id, 0, 1,
					       &o, 1));
	ASSERT_PT(-ENOENT, pt_db_release(self->xfd, o.datablock));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_DATABLOCKS,
				   c[PTASK_COUNT_DATABLOCKS], PT_WAIT_MS));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_INVOCATIONS,
				   c[PTASK_COUNT_INVOCATIONS], PT_WAIT_MS));
}

static const __u8 code_bytes[300] = {
	0x7f, 'E', 'L', 'F', 0, 1, 2, 3, [100] = 0xaa, [299] = 0x55,
};

TEST_F(exec, ptask_info_code_readback)
{
	static const __u32 grid[3] = { 8, 4, 2 }, block[3] = { 64, 2, 1 };
	struct ptask_exec_ptask_info info;
	__u8 buf[400];
	__u32 g, p, len;

	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600, &g));
	ASSERT_PT(0, pt_ptask_open(self->fd, g, PTASK_KIND_GPU, 3, code_bytes,
				   sizeof(code_bytes), "vec_add", "", &p));
	ASSERT_PT(0, pt_set_geometry(self->fd, p, 128, grid, block));

	/* Ask the size. */
	len = 0;
	ASSERT_PT(0, pt_exec_ptask_info(self->xfd, p, NULL, &len, &info));
	ASSERT_EQ(sizeof(code_bytes), len);
	ASSERT_EQ((__u32)PTASK_KIND_GPU, info.kind);
	ASSERT_EQ(3U, info.nports);
	ASSERT_STREQ("vec_add", info.entry);
	ASSERT_EQ(128U, info.shared_bytes);
	ASSERT_EQ(0, memcmp(grid, info.grid, sizeof(grid)));
	ASSERT_EQ(0, memcmp(block, info.block, sizeof(block)));

	/* Exactly the size, then more than enough. */
	memset(buf, 0xee, sizeof(buf));
	len = sizeof(code_bytes);
	ASSERT_PT(0, pt_exec_ptask_info(self->xfd, p, buf, &len, NULL));
	ASSERT_EQ(sizeof(code_bytes), len);
	ASSERT_EQ(0, memcmp(code_bytes, buf, sizeof(code_bytes)));
	memset(buf, 0xee, sizeof(buf));
	len = sizeof(buf);
	ASSERT_PT(0, pt_exec_ptask_info(self->xfd, p, buf, &len, NULL));
	ASSERT_EQ(sizeof(code_bytes), len);
	ASSERT_EQ(0, memcmp(code_bytes, buf, sizeof(code_bytes)));
	ASSERT_EQ(0xee, buf[sizeof(code_bytes)]);
}

TEST_F(exec, ptask_info_small_buffer_enospc)
{
	__u8 buf[sizeof(code_bytes)];
	__u32 g, p, len;

	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600, &g));
	ASSERT_PT(0, pt_ptask_open(self->fd, g, PTASK_KIND_GPU, 1, code_bytes,
				   sizeof(code_bytes), "k", "", &p));
	len = sizeof(code_bytes) - 1;
	ASSERT_PT(-ENOSPC, pt_exec_ptask_info(self->xfd, p, buf, &len, NULL));
}

TEST_F(exec, ptask_info_cpu)
{
	struct ptask_exec_ptask_info info;
	__u32 g, p, len = 0;

	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600, &g));
	ASSERT_PT(0, pt_ptask_open_cpu(self->fd, g, 5, "", &p));
	ASSERT_PT(0, pt_exec_ptask_info(self->xfd, p, NULL, &len, &info));
	ASSERT_EQ((__u32)PTASK_KIND_CPU, info.kind);
	ASSERT_EQ(5U, info.nports);
	ASSERT_EQ(0U, len);
}

TEST_F(exec, ptask_info_bad_handle_enoent)
{
	struct pt_copy_graph g;
	__u32 len = 0;

	ASSERT_PT(-ENOENT, pt_exec_ptask_info(self->xfd, 0x7ffffff0, NULL,
					      &len, NULL));
	ASSERT_PT(0, pt_build_copy1(self->fd, false, &g));
	ASSERT_PT(-ENOENT, pt_exec_ptask_info(self->xfd, g.in_chan[0], NULL,
					      &len, NULL));
	ASSERT_PT(-ENOENT, pt_exec_ptask_info(self->xfd, g.graph, NULL, &len,
					      NULL));
}

TEST_F(exec, ptask_info_code_efault)
{
	__u32 g, p, len = sizeof(code_bytes);
	void *bad;

	bad = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, bad);
	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600, &g));
	ASSERT_PT(0, pt_ptask_open(self->fd, g, PTASK_KIND_GPU, 1, code_bytes,
				   sizeof(code_bytes), "k", "", &p));
	/* Read-only memory: the copy-out faults. */
	ASSERT_PT(-EFAULT, pt_exec_ptask_info(self->xfd, p, bad, &len, NULL));
	munmap(bad, 4096);
}

TEST_F(exec, executor_fd_pollin_when_queued)
{
	struct pollfd pf = { .fd = self->xfd, .events = POLLIN };
	struct pt_copy_graph g;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_EQ(0, poll(&pf, 1, 0));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0, 0,
				  pt_wait_deadline()));
	ASSERT_EQ(1, poll(&pf, 1, PT_WAIT_MS));
	ASSERT_TRUE(pf.revents & POLLIN);
	ASSERT_PT(0, take(self->xfd, 0));
	ASSERT_EQ(1U, tk.n_inv);
	pf.revents = 0;
	ASSERT_EQ(0, poll(&pf, 1, 0));
	ASSERT_PT(0, pass_through(self->xfd, &tk.inv[0], 0, 1));
}

/* Executors of several processes: the invocation goes to one of them. */
TEST_F(exec, executor_may_be_any_client)
{
	struct pt_copy_graph g;
	__u32 s;

	/* The client's own fd as a second executor; xfd stays idle. */
	ASSERT_PT(0, pt_nl_register(self->fd));
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 8, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, take(self->fd, PT_WAIT_MS));
	ASSERT_EQ(1U, tk.n_inv);
	ASSERT_PT(0, input_seed(self->fd, &tk.inv[0], 0, &s));
	ASSERT_EQ(8U, s);
	ASSERT_PT(0, pass_through(self->fd, &tk.inv[0], 0, 1));
	ASSERT_PT(0, pt_pull_seed(self->fd, g.out_chan[0], 0,
				  pt_wait_deadline(), &s, NULL, NULL));
	ASSERT_EQ(8U, s);
}

/* --- death notices (EXEC_FORGOTTEN) ------------------------------------ */

/* EXEC_FORGOTTEN: 0 or -errno; the counts through the pointers. */
static int forgotten(int fd, __u32 *handles, __u32 max, __u32 *n,
		     __u32 *pending, __u32 *lost)
{
	struct ptask_exec_forgotten f = {
		.size = sizeof(f), .max_handles = max,
		.handles = (uintptr_t)handles,
	};

	if (ioctl(fd, PTASK_IOC_EXEC_FORGOTTEN, &f))
		return -errno;
	if (n)
		*n = f.n_handles;
	if (pending)
		*pending = f.pending;
	if (lost)
		*lost = f.lost;
	return 0;
}

/*
 * A datablock the executor was handed dies (the puller's last release):
 * the executor's fd polls EPOLLPRI, and EXEC_FORGOTTEN names it once.
 */
TEST_F(exec, forgotten_names_a_dead_datablock)
{
	struct pollfd pf = { .fd = self->xfd, .events = POLLPRI };
	__u32 handles[8], n = 0, pending = 0, lost = 0;
	struct pt_copy_graph g;
	struct ptask_pull pl;
	__u32 db;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, through_once(self->fd, self->xfd, &g, 4096, 5, &db, &pl));
	ASSERT_PT(0, pt_db_release(self->fd, db));
	/* Still alive (the pull's reference): nothing to say yet. */
	ASSERT_EQ(0, poll(&pf, 1, 0));
	ASSERT_PT(0, forgotten(self->xfd, handles, 8, &n, &pending, &lost));
	ASSERT_EQ(0U, n);
	ASSERT_PT(0, pt_db_release(self->fd, db));
	ASSERT_EQ(1, poll(&pf, 1, PT_WAIT_MS));
	ASSERT_TRUE(pf.revents & POLLPRI);
	ASSERT_PT(0, forgotten(self->xfd, handles, 8, &n, &pending, &lost));
	ASSERT_EQ(1U, n);
	ASSERT_EQ(db, handles[0]);
	ASSERT_EQ(0U, pending);
	ASSERT_EQ(0U, lost);
	pf.revents = 0;
	ASSERT_EQ(0, poll(&pf, 1, 0));
	ASSERT_PT(0, forgotten(self->xfd, handles, 8, &n, &pending, &lost));
	ASSERT_EQ(0U, n);
}

/*
 * Only what an executor was handed is noticed, and EXEC_TAKE says how
 * many wait; a small buffer leaves the rest pending, in death order.
 */
TEST_F(exec, forgotten_counts_and_order)
{
	__u32 db[3], never, handles[2], n = 0, pending = 0, i;
	struct ptask_exec_take t = { .size = sizeof(t) };
	struct ptask_invocation inv[1];
	struct ptask_invocation_port ports[2];
	struct pt_copy_graph g;
	struct ptask_pull pl;
	__u64 off, bytes;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_db_create(self->fd, 64, 0, 0, &never, &off, &bytes));
	ASSERT_PT(0, pt_db_release(self->fd, never));	/* never handed */
	for (i = 0; i < 3; i++) {
		ASSERT_PT(0, through_once(self->fd, self->xfd, &g, 64, i,
					  &db[i], &pl));
		ASSERT_PT(0, pt_db_release(self->fd, db[i]));
		ASSERT_PT(0, pt_db_release(self->fd, pl.datablock));
	}
	t.flags = PTASK_NONBLOCK;
	t.max_invocations = 1;
	t.max_ports = 2;
	t.invocations = (uintptr_t)inv;
	t.ports = (uintptr_t)ports;
	t.forgotten = 77;		/* out only: overwritten */
	ASSERT_EQ(-1, ioctl(self->xfd, PTASK_IOC_EXEC_TAKE, &t));
	ASSERT_EQ(EAGAIN, errno);
	ASSERT_PT(0, forgotten(self->xfd, handles, 2, &n, &pending, NULL));
	ASSERT_EQ(2U, n);
	ASSERT_EQ(db[0], handles[0]);
	ASSERT_EQ(db[1], handles[1]);
	ASSERT_EQ(1U, pending);
	ASSERT_PT(0, forgotten(self->xfd, handles, 2, &n, &pending, NULL));
	ASSERT_EQ(1U, n);
	ASSERT_EQ(db[2], handles[0]);
	ASSERT_EQ(0U, pending);
}

TEST_F(exec, forgotten_bad_calls)
{
	struct ptask_exec_forgotten f = { .size = sizeof(f), .max_handles = 1 };
	__u32 h;

	f.handles = (uintptr_t)&h;
	/* Not an executor. */
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_EXEC_FORGOTTEN, &f));
	ASSERT_EQ(EPERM, errno);
	f.flags = 1;
	ASSERT_EQ(-1, ioctl(self->xfd, PTASK_IOC_EXEC_FORGOTTEN, &f));
	ASSERT_EQ(EINVAL, errno);
	f.flags = 0;
	f.max_handles = 0;
	ASSERT_EQ(-1, ioctl(self->xfd, PTASK_IOC_EXEC_FORGOTTEN, &f));
	ASSERT_EQ(EINVAL, errno);
}

TEST_HARNESS_MAIN
