// SPDX-License-Identifier: GPL-2.0
/*
 * channel_test - PTASK_IOC_CHANNEL_OPEN, _PUSH and _PULL: bounded FIFOs,
 * blocking, non-blocking, timeouts, signals, termination, poll().
 *
 * Shape used by most tests (pt_build_copy1): one GPU ptask "copy",
 *
 *	push -> [in0] -> (input 0) copy (output 1) -> [out0] -> pull
 *
 * Without an executor nothing moves from in0 to out0, which makes full and
 * empty channels deterministic.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>

#include "pt_harness.h"

FIXTURE(channel) {
	struct pt_env env;
	int fd;
};

FIXTURE_SETUP(channel)
{
	PT_ENV_SETUP(&self->env);
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(channel)
{
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

/* A graph with one ptask: input port *in, output port *out. */
static int one_ptask(int fd, __u32 *graph, __u32 *in, __u32 *out)
{
	__u32 p;
	int r;

	r = pt_graph_open(fd, "", PTASK_GRAPH_CREATE, 0600, graph);
	if (!r)
		r = pt_ptask_open_gpu(fd, *graph, 2, "", &p);
	if (!r)
		r = pt_port_open(fd, p, PTASK_PORT_INPUT, 0, 0, 0, 0, "", in,
				 NULL);
	if (!r)
		r = pt_port_open(fd, p, PTASK_PORT_OUTPUT, 0, 0, 1, 0, "", out,
				 NULL);
	return r;
}

TEST_F(channel, open_graph_input_and_output)
{
	__u64 c0[__PTASK_COUNT_MAX], c1[__PTASK_COUNT_MAX];
	__u32 g, in, out, ci = 0, co = 0;

	ASSERT_PT(0, one_ptask(self->fd, &g, &in, &out));
	ASSERT_PT(0, pt_counts_read(c0));
	ASSERT_PT(0, pt_channel_open(self->fd, g, 0, in, 1, 0, "i", &ci));
	ASSERT_PT(0, pt_channel_open(self->fd, g, out, 0,
				     PTASK_CHANNEL_MAX_CAPACITY, 0, "o", &co));
	ASSERT_PT(0, pt_counts_read(c1));
	ASSERT_NE(0U, ci);
	ASSERT_NE(0U, co);
	ASSERT_NE(ci, co);
	ASSERT_EQ(c0[PTASK_COUNT_CHANNELS] + 2, c1[PTASK_COUNT_CHANNELS]);
}

TEST_F(channel, open_port_to_port)
{
	__u64 c0[__PTASK_COUNT_MAX], c1[__PTASK_COUNT_MAX];
	struct pt_chain c;

	ASSERT_PT(0, pt_counts_read(c0));
	ASSERT_PT(0, pt_build_chain(self->fd, "", 3, PTASK_KIND_GPU, 2, &c));
	ASSERT_PT(0, pt_counts_read(c1));
	ASSERT_EQ(c0[PTASK_COUNT_CHANNELS] + 4, c1[PTASK_COUNT_CHANNELS]);
	ASSERT_EQ(c0[PTASK_COUNT_PTASKS] + 3, c1[PTASK_COUNT_PTASKS]);
	ASSERT_EQ(c0[PTASK_COUNT_PORTS] + 6, c1[PTASK_COUNT_PORTS]);
}

TEST_F(channel, fan_out_allowed)
{
	__u32 g, in, out, i;

	ASSERT_PT(0, one_ptask(self->fd, &g, &in, &out));
	ASSERT_PT(0, pt_channel_open(self->fd, g, 0, in, 1, 0, "", NULL));
	for (i = 0; i < 3; i++)
		ASSERT_PT(0, pt_channel_open(self->fd, g, out, 0, 1, 0, "",
					     NULL));
}

TEST_F(channel, capacity_zero_einval)
{
	__u32 g, in, out;

	ASSERT_PT(0, one_ptask(self->fd, &g, &in, &out));
	ASSERT_PT(-EINVAL, pt_channel_open(self->fd, g, 0, in, 0, 0, "", NULL));
}

TEST_F(channel, capacity_over_max_einval)
{
	__u32 g, in, out;

	ASSERT_PT(0, one_ptask(self->fd, &g, &in, &out));
	ASSERT_PT(-EINVAL, pt_channel_open(self->fd, g, 0, in,
					   PTASK_CHANNEL_MAX_CAPACITY + 1, 0,
					   "", NULL));
}

TEST_F(channel, both_ends_zero_einval)
{
	__u32 g, in, out;

	ASSERT_PT(0, one_ptask(self->fd, &g, &in, &out));
	ASSERT_PT(-EINVAL, pt_channel_open(self->fd, g, 0, 0, 1, 0, "", NULL));
}

TEST_F(channel, src_not_output_port_einval)
{
	__u32 g, in, out;

	ASSERT_PT(0, one_ptask(self->fd, &g, &in, &out));
	ASSERT_PT(-EINVAL, pt_channel_open(self->fd, g, in, 0, 1, 0, "", NULL));
}

TEST_F(channel, dst_not_input_port_einval)
{
	__u32 g, in, out;

	ASSERT_PT(0, one_ptask(self->fd, &g, &in, &out));
	ASSERT_PT(-EINVAL, pt_channel_open(self->fd, g, 0, out, 1, 0, "",
					   NULL));
}

TEST_F(channel, ports_of_different_graphs_einval)
{
	__u32 ga, ina, outa, gb, inb, outb;

	ASSERT_PT(0, one_ptask(self->fd, &ga, &ina, &outa));
	ASSERT_PT(0, one_ptask(self->fd, &gb, &inb, &outb));
	ASSERT_PT(-EINVAL, pt_channel_open(self->fd, ga, outa, inb, 1, 0, "",
					   NULL));
	ASSERT_PT(-EINVAL, pt_channel_open(self->fd, ga, 0, inb, 1, 0, "",
					   NULL));
	ASSERT_PT(-EINVAL, pt_channel_open(self->fd, gb, outa, 0, 1, 0, "",
					   NULL));
}

TEST_F(channel, second_channel_into_input_ebusy)
{
	struct pt_copy_spec s = {
		.kind = PTASK_KIND_GPU, .n = 2, .sticky_mask = 2,
	};
	struct pt_copy_graph g;

	ASSERT_PT(0, pt_build_copy(self->fd, &s, &g));
	/* in_port[0] is an input, in_port[1] a sticky port. */
	ASSERT_PT(-EBUSY, pt_channel_open(self->fd, g.graph, 0, g.in_port[0],
					  1, 0, "", NULL));
	ASSERT_PT(-EBUSY, pt_channel_open(self->fd, g.graph, g.out_port[0],
					  g.in_port[0], 1, 0, "", NULL));
	ASSERT_PT(-EBUSY, pt_channel_open(self->fd, g.graph, 0, g.in_port[1],
					  1, 0, "", NULL));
}

TEST_F(channel, template_mismatch_on_open_eprototype)
{
	__u32 g, p, t1, t2, t3, in, out;

	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600, &g));
	ASSERT_PT(0, pt_template_open(self->fd, g, PTASK_TEMPLATE_ARRAY,
				      PTASK_BIND_GLOBAL, 4, 16, 1, 1, "", &t1));
	ASSERT_PT(0, pt_template_open(self->fd, g, PTASK_TEMPLATE_ARRAY,
				      PTASK_BIND_GLOBAL, 8, 16, 1, 1, "", &t2));
	/* Compatible with t1: same kind, stride, dims; other binding. */
	ASSERT_PT(0, pt_template_open(self->fd, g, PTASK_TEMPLATE_ARRAY,
				      PTASK_BIND_CONSTANT, 4, 16, 1, 1, "",
				      &t3));
	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, g, 2, "", &p));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_INPUT, 0, t1, 0, 0,
				  "", &in, NULL));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_OUTPUT, 0, t1, 1, 0,
				  "", &out, NULL));
	ASSERT_PT(-EPROTOTYPE, pt_channel_open(self->fd, g, 0, in, 1, t2, "",
					       NULL));
	ASSERT_PT(-EPROTOTYPE, pt_channel_open(self->fd, g, out, 0, 1, t2, "",
					       NULL));
	ASSERT_PT(0, pt_channel_open(self->fd, g, 0, in, 1, t3, "", NULL));
	ASSERT_PT(0, pt_channel_open(self->fd, g, out, 0, 1, t1, "", NULL));
}

TEST_F(channel, template_mismatch_on_push_eprototype)
{
	__u32 g, p, t1, t2, t3, in, out, ch, d1, d2, d3;

	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600, &g));
	ASSERT_PT(0, pt_template_open(self->fd, g, PTASK_TEMPLATE_ARRAY,
				      PTASK_BIND_GLOBAL, 4, 16, 1, 1, "", &t1));
	ASSERT_PT(0, pt_template_open(self->fd, g, PTASK_TEMPLATE_ARRAY,
				      PTASK_BIND_GLOBAL, 8, 16, 1, 1, "", &t2));
	ASSERT_PT(0, pt_template_open(self->fd, g, PTASK_TEMPLATE_ARRAY,
				      PTASK_BIND_GLOBAL, 4, 16, 1, 1, "", &t3));
	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, g, 2, "", &p));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_INPUT, 0, 0, 0, 0,
				  "", &in, NULL));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_OUTPUT, 0, 0, 1, 0,
				  "", &out, NULL));
	ASSERT_PT(0, pt_channel_open(self->fd, g, 0, in, 4, t1, "", &ch));
	ASSERT_PT(0, pt_db_create(self->fd, 0, t1, 0, &d1, NULL, NULL));
	ASSERT_PT(0, pt_db_create(self->fd, 0, t2, 0, &d2, NULL, NULL));
	ASSERT_PT(0, pt_db_create(self->fd, 0, t3, 0, &d3, NULL, NULL));
	ASSERT_PT(-EPROTOTYPE, pt_push(self->fd, ch, d2, PTASK_NONBLOCK, 0, 0));
	ASSERT_PT(0, pt_push(self->fd, ch, d1, PTASK_NONBLOCK, 0, 0));
	ASSERT_PT(0, pt_push(self->fd, ch, d3, PTASK_NONBLOCK, 0, 0));
	ASSERT_PT(0, pt_db_release(self->fd, d1));
	ASSERT_PT(0, pt_db_release(self->fd, d2));
	ASSERT_PT(0, pt_db_release(self->fd, d3));
}

TEST_F(channel, push_into_graph_output_einval)
{
	struct pt_copy_graph g;
	__u32 db;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_db_make(self->fd, 64, 1, &db));
	ASSERT_PT(-EINVAL, pt_push(self->fd, g.out_chan[0], db,
				   PTASK_NONBLOCK, 0, 0));
	ASSERT_PT(0, pt_db_release(self->fd, db));
}

TEST_F(channel, pull_from_graph_input_einval)
{
	struct pt_copy_graph g;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0,
				  PTASK_NONBLOCK, 0));
	ASSERT_PT(-EINVAL, pt_pull(self->fd, g.in_chan[0], PTASK_NONBLOCK, 0,
				   NULL));
}

/* A channel between two ptasks is neither a graph input nor output. */
TEST_F(channel, push_pull_inner_channel_einval)
{
	struct pt_chain c;
	__u32 db;

	ASSERT_PT(0, pt_build_chain(self->fd, "", 2, PTASK_KIND_GPU, 2, &c));
	ASSERT_PT(0, pt_db_make(self->fd, 64, 1, &db));
	ASSERT_PT(-EINVAL, pt_push(self->fd, c.chan[1], db, PTASK_NONBLOCK, 0,
				   0));
	ASSERT_PT(-EINVAL, pt_pull(self->fd, c.chan[1], PTASK_NONBLOCK, 0,
				   NULL));
	ASSERT_PT(0, pt_db_release(self->fd, db));
}

TEST_F(channel, pushes_before_run_accepted)
{
	struct pt_copy_graph g;

	ASSERT_PT(0, pt_build_copy1(self->fd, false, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0,
				  PTASK_NONBLOCK, 0));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 2, 0,
				  PTASK_NONBLOCK, 0));
}

/*
 * Assumption (header: "an input port pulls from its channel when
 * Unoccupied", also before the graph runs): a graph-input channel of
 * capacity C feeding an idle input port accepts C + 1 datablocks, one of
 * which moved into the port.
 */
TEST_F(channel, capacity_honoured)
{
	struct pt_copy_spec s = { .kind = PTASK_KIND_GPU, .n = 1, .in_cap = 3 };
	struct pt_copy_graph g;

	ASSERT_PT(0, pt_build_copy(self->fd, &s, &g));
	ASSERT_EQ(4, pt_fill_channel(self->fd, g.in_chan[0], 64, 1, 10));
}

TEST_F(channel, push_full_nonblock_eagain)
{
	struct pt_copy_spec s = { .kind = PTASK_KIND_GPU, .n = 1, .in_cap = 1 };
	struct pt_copy_graph g;
	__u32 db;
	int n;

	ASSERT_PT(0, pt_build_copy(self->fd, &s, &g));
	n = pt_fill_channel(self->fd, g.in_chan[0], 64, 1, 10);
	ASSERT_LT(0, n);
	ASSERT_GT(10, n);
	ASSERT_PT(0, pt_db_make(self->fd, 64, 99, &db));
	ASSERT_PT(-EAGAIN, pt_push(self->fd, g.in_chan[0], db, PTASK_NONBLOCK,
				   0, 0));
	/* Assumption: a deadline does not override PTASK_NONBLOCK. */
	ASSERT_PT(-EAGAIN, pt_push(self->fd, g.in_chan[0], db, PTASK_NONBLOCK,
				   0, pt_wait_deadline()));
	ASSERT_PT(0, pt_db_release(self->fd, db));
}

TEST_F(channel, push_full_o_nonblock_eagain)
{
	struct pt_copy_spec s = { .kind = PTASK_KIND_GPU, .n = 1, .in_cap = 1 };
	struct pt_copy_graph g;
	int fd, i, r = 0;

	fd = pt_env_open_flags(&self->env, O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_PT(0, pt_build_copy(fd, &s, &g));
	/* Plain pushes (no PTASK_NONBLOCK) on an O_NONBLOCK fd. */
	for (i = 0; i < 10; i++) {
		r = pt_push_seed(fd, g.in_chan[0], 64, i, 0, 0, 0);
		if (r)
			break;
	}
	ASSERT_PT(-EAGAIN, r);
	ASSERT_LT(0, i);
}

TEST_F(channel, pull_empty_nonblock_eagain)
{
	struct pt_copy_graph g;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(-EAGAIN, pt_pull(self->fd, g.out_chan[0], PTASK_NONBLOCK, 0,
				   NULL));
}

TEST_F(channel, pull_empty_o_nonblock_eagain)
{
	struct pt_copy_graph g;
	int fl;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	fl = fcntl(self->fd, F_GETFL);
	ASSERT_LE(0, fl);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, fl | O_NONBLOCK));
	ASSERT_PT(-EAGAIN, pt_pull(self->fd, g.out_chan[0], 0, 0, NULL));
}

TEST_F(channel, push_timeout_etimedout)
{
	struct pt_copy_spec s = { .kind = PTASK_KIND_GPU, .n = 1, .in_cap = 1 };
	struct pt_copy_graph g;
	__u64 t0, dt;
	__u32 db;

	ASSERT_PT(0, pt_build_copy(self->fd, &s, &g));
	ASSERT_LT(0, pt_fill_channel(self->fd, g.in_chan[0], 64, 1, 10));
	ASSERT_PT(0, pt_db_make(self->fd, 64, 99, &db));
	t0 = pt_now_ns();
	ASSERT_PT(-ETIMEDOUT, pt_push(self->fd, g.in_chan[0], db, 0, 0,
				      t0 + 150000000ULL));
	dt = pt_now_ns() - t0;
	TH_LOG("push timed out after %llu us", (unsigned long long)dt / 1000);
	/* Not before its deadline; after it, only as late as a busy host is. */
	ASSERT_LE(140000000ULL, dt);
	ASSERT_GT(PT_WAIT_MS * 1000000ULL, dt);
	ASSERT_PT(0, pt_db_release(self->fd, db));
}

TEST_F(channel, pull_timeout_etimedout)
{
	struct pt_copy_graph g;
	__u64 t0, dt;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	t0 = pt_now_ns();
	ASSERT_PT(-ETIMEDOUT, pt_pull(self->fd, g.out_chan[0], 0,
				      t0 + 150000000ULL, NULL));
	dt = pt_now_ns() - t0;
	TH_LOG("pull timed out after %llu us", (unsigned long long)dt / 1000);
	/* Not before its deadline; after it, only as late as a busy host is. */
	ASSERT_LE(140000000ULL, dt);
	ASSERT_GT(PT_WAIT_MS * 1000000ULL, dt);
}

TEST_F(channel, push_signal_eintr)
{
	struct pt_copy_spec s = { .kind = PTASK_KIND_GPU, .n = 1, .in_cap = 1 };
	struct pt_copy_graph g;
	struct pt_kicker k;
	__u32 db;
	int r;

	ASSERT_PT(0, pt_sig_noop(SIGUSR1));
	ASSERT_PT(0, pt_build_copy(self->fd, &s, &g));
	ASSERT_LT(0, pt_fill_channel(self->fd, g.in_chan[0], 64, 1, 10));
	ASSERT_PT(0, pt_db_make(self->fd, 64, 99, &db));
	ASSERT_PT(0, pt_kick_after(&k, pthread_self(), SIGUSR1, 100));
	/* The deadline only keeps a broken kernel from hanging the test. */
	r = pt_push(self->fd, g.in_chan[0], db, 0, 0, pt_wait_deadline());
	pt_kick_join(&k);
	ASSERT_PT(-EINTR, r);
	ASSERT_PT(0, pt_db_release(self->fd, db));
}

TEST_F(channel, pull_signal_eintr)
{
	struct pt_copy_graph g;
	struct pt_kicker k;
	int r;

	ASSERT_PT(0, pt_sig_noop(SIGUSR1));
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_kick_after(&k, pthread_self(), SIGUSR1, 100));
	r = pt_pull(self->fd, g.out_chan[0], 0, pt_wait_deadline(), NULL);
	pt_kick_join(&k);
	ASSERT_PT(-EINTR, r);
}

struct blocked_call {
	int fd;
	__u32 chan;
	bool push;
	pid_t tid;		/* atomic */
	int result;
};

static void *blocked_main(void *arg)
{
	struct blocked_call *b = arg;

	__atomic_store_n(&b->tid, pt_gettid(), __ATOMIC_SEQ_CST);
	if (b->push)
		b->result = pt_push_seed(b->fd, b->chan, 64, 1000, 0, 0,
					 pt_wait_deadline());
	else
		b->result = pt_pull_seed(b->fd, b->chan, 0,
					 pt_wait_deadline(), NULL, NULL,
					 NULL);
	return NULL;
}

static int wait_tid(struct blocked_call *b)
{
	pid_t tid = pt_wait_tid(&b->tid);

	return tid ? pt_wait_sleeping(getpid(), tid, PT_WAIT_MS) : -ETIMEDOUT;
}

TEST_F(channel, terminate_wakes_blocked_pusher_and_puller)
{
	struct pt_copy_spec s = { .kind = PTASK_KIND_GPU, .n = 1, .in_cap = 1 };
	struct blocked_call pusher = { .push = true }, puller = { 0 };
	struct pt_copy_graph g;
	pthread_t tpush, tpull;

	ASSERT_PT(0, pt_build_copy(self->fd, &s, &g));
	ASSERT_PT(0, pt_graph_run(self->fd, g.graph));
	ASSERT_LT(0, pt_fill_channel(self->fd, g.in_chan[0], 64, 1, 10));
	pusher.fd = puller.fd = self->fd;
	pusher.chan = g.in_chan[0];
	puller.chan = g.out_chan[0];
	ASSERT_EQ(0, pthread_create(&tpush, NULL, blocked_main, &pusher));
	if (pthread_create(&tpull, NULL, blocked_main, &puller)) {
		pthread_join(tpush, NULL);
		ASSERT_TRUE(false);
	}
	EXPECT_PT(0, wait_tid(&pusher));
	EXPECT_PT(0, wait_tid(&puller));
	pt_sleep_ms(50);
	EXPECT_PT(0, pt_graph_terminate(self->fd, g.graph));
	pthread_join(tpush, NULL);
	pthread_join(tpull, NULL);
	/* Woken by terminate: their deadline would give -ETIMEDOUT. */
	ASSERT_PT(-ESHUTDOWN, pusher.result);
	ASSERT_PT(-ESHUTDOWN, puller.result);
}

/*
 * A producer blocked on a full channel wakes when a consumer in another
 * process pulls.
 *
 *	parent: push -> [in0 cap 1] -> copy (in-process executor)
 *	                                 -> [out0 cap 1] -> child: pull
 */
TEST_F(channel, blocked_producer_wakes_on_consumer_pull)
{
	char name[PTASK_NAME_MAX];
	struct pt_copy_spec s = {
		.name = pt_name(name, "prodcons"), .kind = PTASK_KIND_GPU,
		.n = 1, .in_cap = 1, .out_cap = 1, .run = true,
	};
	__u64 c[__PTASK_COUNT_MAX], t0, dt;
	struct pt_copy_graph g;
	__u32 seed = 1, got, i;
	pid_t pid;
	int r;

	PT_NEED_ROOT();
	ASSERT_NE(NULL, pt_env_executor(&self->env));
	ASSERT_PT(0, pt_build_copy(self->fd, &s, &g));
	ASSERT_PT(0, pt_counts_read(c));
	/* Fill the whole pipeline, letting the executor settle each time. */
	for (;;) {
		r = pt_push_seed(self->fd, g.in_chan[0], 64, seed, 0,
				 PTASK_NONBLOCK, 0);
		if (r == -EAGAIN) {
			ASSERT_PT(0, pt_wait_quiescent(
					c[PTASK_COUNT_INVOCATIONS],
					PT_WAIT_MS));
			r = pt_push_seed(self->fd, g.in_chan[0], 64, seed, 0,
					 PTASK_NONBLOCK, 0);
			if (r == -EAGAIN)
				break;
		}
		ASSERT_PT(0, r);
		ASSERT_GT(20U, ++seed);
	}
	TH_LOG("pipeline holds %u datablocks", seed - 1);
	ASSERT_LT(1U, seed);

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		__u32 gh, ch, sd = 0;
		int fd = pt_open();

		if (fd < 0 || pt_graph_open(fd, name, 0, 0, &gh) ||
		    pt_lookup(fd, gh, PTASK_OBJ_CHANNEL, "out0", &ch))
			_exit(PT_CHILD_FAIL);
		/* Pull only once the producer sleeps in its push. */
		if (pt_wait_sleeping(getppid(), getppid(), PT_WAIT_MS))
			_exit(PT_CHILD_FAIL + 3);
		if (pt_pull_seed(fd, ch, 0, pt_wait_deadline(), &sd, NULL,
				 NULL))
			_exit(PT_CHILD_FAIL + 1);
		_exit(sd == 1 ? PT_CHILD_OK : PT_CHILD_FAIL + 2);
	}
	pt_env_track_pid(&self->env, pid);
	t0 = pt_now_ns();
	r = pt_push_seed(self->fd, g.in_chan[0], 64, seed, 0, 0,
			 pt_wait_deadline());
	dt = pt_now_ns() - t0;
	TH_LOG("producer blocked for %llu us", (unsigned long long)dt / 1000);
	ASSERT_PT(0, r);
	/* The child pulled after it saw this thread asleep in the push. */
	PT_WAIT_CHILD(&self->env, pid, PT_WAIT_MS);
	/* The rest comes out in order. */
	for (i = 2; i <= seed; i++) {
		ASSERT_PT(0, pt_pull_seed(self->fd, g.out_chan[0], 0,
					  pt_wait_deadline(), &got, NULL,
					  NULL));
		ASSERT_EQ(i, got);
	}
}

TEST_F(channel, fifo_order)
{
	struct pt_copy_spec s = {
		.kind = PTASK_KIND_GPU, .n = 1, .in_cap = 8, .out_cap = 8,
		.run = true,
	};
	struct pt_copy_graph g;
	__u32 i, got;

	PT_NEED_ROOT();
	ASSERT_NE(NULL, pt_env_executor(&self->env));
	ASSERT_PT(0, pt_build_copy(self->fd, &s, &g));
	for (i = 0; i < 6; i++)
		ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 96, 100 + i,
					  0, 0, pt_wait_deadline()));
	for (i = 0; i < 6; i++) {
		ASSERT_PT(0, pt_pull_seed(self->fd, g.out_chan[0], 0,
					  pt_wait_deadline(), &got, NULL,
					  NULL));
		ASSERT_EQ(100 + i, got);
	}
}

static short poll_fd(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };

	if (poll(&p, 1, ms) < 0)
		return -1;
	return p.revents;
}

TEST_F(channel, poll_pollout_room)
{
	struct pt_copy_spec s = { .kind = PTASK_KIND_GPU, .n = 1, .in_cap = 2 };
	struct pt_copy_graph g;
	short ev;

	ASSERT_PT(0, pt_build_copy(self->fd, &s, &g));
	ev = poll_fd(self->fd, POLLIN | POLLOUT, 0);
	ASSERT_LE(0, ev);
	ASSERT_TRUE(ev & POLLOUT);
	ASSERT_FALSE(ev & POLLIN);
	ASSERT_LT(0, pt_fill_channel(self->fd, g.in_chan[0], 64, 1, 10));
	ev = poll_fd(self->fd, POLLIN | POLLOUT, 0);
	ASSERT_LE(0, ev);
	ASSERT_FALSE(ev & POLLOUT);
}

TEST_F(channel, poll_pollin_data)
{
	struct pt_copy_graph g;
	short ev;

	PT_NEED_ROOT();
	ASSERT_NE(NULL, pt_env_executor(&self->env));
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ev = poll_fd(self->fd, POLLIN, 0);
	ASSERT_LE(0, ev);
	ASSERT_FALSE(ev & POLLIN);
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 7, 0, 0,
				  pt_wait_deadline()));
	ev = poll_fd(self->fd, POLLIN, PT_WAIT_MS);
	ASSERT_LE(0, ev);
	ASSERT_TRUE(ev & POLLIN);
	ASSERT_PT(0, pt_pull_seed(self->fd, g.out_chan[0], PTASK_NONBLOCK, 0,
				  NULL, NULL, NULL));
	ev = poll_fd(self->fd, POLLIN, 0);
	ASSERT_LE(0, ev);
	ASSERT_FALSE(ev & POLLIN);
}

TEST_F(channel, poll_pollerr_after_terminate)
{
	struct pt_copy_graph g;
	short ev;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ev = poll_fd(self->fd, POLLIN, 0);
	ASSERT_LE(0, ev);
	ASSERT_FALSE(ev & POLLERR);
	ASSERT_PT(0, pt_graph_terminate(self->fd, g.graph));
	ev = poll_fd(self->fd, POLLIN, 0);
	ASSERT_LE(0, ev);
	ASSERT_TRUE(ev & POLLERR);
}

TEST_HARNESS_MAIN
