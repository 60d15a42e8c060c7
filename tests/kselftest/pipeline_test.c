// SPDX-License-Identifier: GPL-2.0
/*
 * pipeline_test - graphs that run: sticky ports, fan-out, chains of
 * ptasks, streams of datablocks, through the in-process copy executor
 * (pt_env_executor) or the test executor process (PTASK_TEST_EXECUTOR,
 * default /bin/test_executor).  Needs root to register executors.
 *
 * The copy executor emits, on output k, a new datablock holding a copy of
 * input k, so what a graph output receives shows what the ptask saw.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

#include "pt_harness.h"

FIXTURE(pipeline) {
	struct pt_env env;
	int fd;
};

FIXTURE_SETUP(pipeline)
{
	PT_ENV_SETUP(&self->env);
	if (geteuid() != 0)
		SKIP(pt_skip_exit(), "needs root (CAP_SYS_ADMIN) to register an executor");
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(pipeline)
{
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

static int pull_seed(int fd, __u32 chan, __u32 *seed)
{
	return pt_pull_seed(fd, chan, 0, pt_wait_deadline(), seed, NULL,
			    NULL);
}

/*
 * Sticky input 0 keeps its datablock across invocations until a new one
 * arrives; input 1 is consumed every time.
 *
 *	[in0] -> sticky 0 \          / output 2 -> [out0]
 *	                   copy ----<
 *	[in1] -> input 1  /          \ output 3 -> [out1]
 */
TEST_F(pipeline, sticky_port_reuses_datablock)
{
	struct pt_copy_spec s = {
		.kind = PTASK_KIND_GPU, .n = 2, .sticky_mask = 1, .run = true,
	};
	static const struct { __u32 sticky, normal; } steps[] = {
		{ 100, 1 }, { 0, 2 }, { 0, 3 }, { 200, 4 }, { 0, 5 }, { 0, 6 },
	};
	__u32 last_sticky = 0, seed, i;
	struct pt_copy_graph g;
	struct pt_executor *ex;

	ex = pt_env_executor(&self->env);
	ASSERT_NE(NULL, ex);
	ASSERT_PT(0, pt_build_copy(self->fd, &s, &g));
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (steps[i].sticky) {
			ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64,
						  steps[i].sticky, 0, 0,
						  pt_wait_deadline()));
			last_sticky = steps[i].sticky;
		}
		ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[1], 64,
					  steps[i].normal, 0, 0,
					  pt_wait_deadline()));
		ASSERT_PT(0, pull_seed(self->fd, g.out_chan[0], &seed));
		TH_LOG("invocation %u saw sticky %u", i, seed);
		ASSERT_EQ(last_sticky, seed);
		ASSERT_PT(0, pull_seed(self->fd, g.out_chan[1], &seed));
		ASSERT_EQ(steps[i].normal, seed);
	}
	ASSERT_PT(0, pt_executor_wait(ex, 6, PT_WAIT_MS));
	ASSERT_EQ(6UL, pt_executor_completed(ex));
	ASSERT_EQ(0UL, ex->errors);
}

/* A sticky port with nothing pushed yet keeps the ptask waiting. */
TEST_F(pipeline, sticky_port_needs_a_first_datablock)
{
	struct pt_copy_spec s = {
		.kind = PTASK_KIND_GPU, .n = 2, .sticky_mask = 1, .run = true,
	};
	struct pt_copy_graph g;
	__u32 seed;

	ASSERT_NE(NULL, pt_env_executor(&self->env));
	ASSERT_PT(0, pt_build_copy(self->fd, &s, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[1], 64, 1, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(-ETIMEDOUT, pt_pull(self->fd, g.out_chan[1], 0,
				      pt_deadline_ms(100), NULL));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 50, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, pull_seed(self->fd, g.out_chan[1], &seed));
	ASSERT_EQ(1U, seed);
	ASSERT_PT(0, pull_seed(self->fd, g.out_chan[0], &seed));
	ASSERT_EQ(50U, seed);
}

/* A ptask with inputs only: the executor completes it with no outputs. */
TEST_F(pipeline, sink_ptask_completes)
{
	__u64 c0[__PTASK_COUNT_MAX];
	struct pt_executor *ex;
	__u32 g, p, in, ch, i;

	ex = pt_env_executor(&self->env);
	ASSERT_NE(NULL, ex);
	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600, &g));
	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, g, 1, "sink", &p));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_INPUT, 0, 0, 0, 0,
				  "", &in, NULL));
	ASSERT_PT(0, pt_channel_open(self->fd, g, 0, in, 2, 0, "", &ch));
	ASSERT_PT(0, pt_graph_run(self->fd, g));
	ASSERT_PT(0, pt_counts_read(c0));
	for (i = 0; i < 5; i++)
		ASSERT_PT(0, pt_push_seed(self->fd, ch, 256, i, 0, 0,
					  pt_wait_deadline()));
	ASSERT_PT(0, pt_executor_wait(ex, 5, PT_WAIT_MS));
	ASSERT_EQ(0UL, ex->errors);
	/* Consumed and dropped: nothing of them is left. */
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_DATABLOCKS,
				   c0[PTASK_COUNT_DATABLOCKS], PT_WAIT_MS));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_INVOCATIONS,
				   c0[PTASK_COUNT_INVOCATIONS], PT_WAIT_MS));
}

/* One output port, @n graph-output channels of capacity @cap. */
static int fan_out_graph(int fd, int n, __u32 cap, __u32 *in_chan,
			 __u32 *out_chan)
{
	__u32 g, p, in, out;
	int i, r;

	r = pt_graph_open(fd, "", PTASK_GRAPH_CREATE, 0600, &g);
	if (!r)
		r = pt_ptask_open_gpu(fd, g, 2, "fan", &p);
	if (!r)
		r = pt_port_open(fd, p, PTASK_PORT_INPUT, 0, 0, 0, 0, "", &in,
				 NULL);
	if (!r)
		r = pt_port_open(fd, p, PTASK_PORT_OUTPUT, 0, 0, 1, 0, "", &out,
				 NULL);
	if (!r)
		r = pt_channel_open(fd, g, 0, in, 4, 0, "", in_chan);
	for (i = 0; !r && i < n; i++)
		r = pt_channel_open(fd, g, out, 0, cap, 0, "", &out_chan[i]);
	if (!r)
		r = pt_graph_run(fd, g);
	return r;
}

/*
 * Fan-out: every channel of the output port gets the same datablock.
 * Assumption: each pull gives the puller one more (counted) reference.
 */
TEST_F(pipeline, fan_out_same_datablock)
{
	struct ptask_pull pl[3];
	__u32 in, out[3], seed, k;
	int i;

	ASSERT_NE(NULL, pt_env_executor(&self->env));
	ASSERT_PT(0, fan_out_graph(self->fd, 3, 2, &in, out));
	for (k = 0; k < 2; k++)
		ASSERT_PT(0, pt_push_seed(self->fd, in, 2048, 40 + k, 0, 0,
					  pt_wait_deadline()));
	for (k = 0; k < 2; k++) {
		for (i = 0; i < 3; i++) {
			void *m;
			int r;

			ASSERT_PT(0, pt_pull(self->fd, out[i], 0,
					     pt_wait_deadline(), &pl[i]));
			m = pt_map(self->fd, pl[i].mmap_offset, pl[i].bytes,
				   PROT_READ);
			ASSERT_NE(NULL, m);
			r = pt_check(m, pl[i].bytes, &seed);
			munmap(m, pl[i].bytes);
			ASSERT_PT(0, r);
			ASSERT_EQ(40 + k, seed);
		}
		ASSERT_EQ(pl[0].datablock, pl[1].datablock);
		ASSERT_EQ(pl[0].datablock, pl[2].datablock);
		ASSERT_EQ(pl[0].mmap_offset, pl[2].mmap_offset);
		for (i = 0; i < 3; i++)
			ASSERT_PT(0, pt_db_release(self->fd, pl[i].datablock));
		ASSERT_PT(-ENOENT, pt_db_release(self->fd, pl[0].datablock));
	}
}

/*
 * An output port pushes only when every channel it feeds has room: while
 * one fan-out channel is full, the output stays in its port and the other
 * channels get nothing.
 */
TEST_F(pipeline, fan_out_waits_for_every_channel)
{
	struct pt_executor *ex;
	__u32 in, out[3], seed;

	ex = pt_env_executor(&self->env);
	ASSERT_NE(NULL, ex);
	ASSERT_PT(0, fan_out_graph(self->fd, 3, 1, &in, out));
	/* O1 lands in all three channels; empty two of them. */
	ASSERT_PT(0, pt_push_seed(self->fd, in, 64, 1, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, pull_seed(self->fd, out[0], &seed));
	ASSERT_EQ(1U, seed);
	ASSERT_PT(0, pull_seed(self->fd, out[1], &seed));
	ASSERT_EQ(1U, seed);
	/* O2 is made, but out[2] still holds O1. */
	ASSERT_PT(0, pt_push_seed(self->fd, in, 64, 2, 0, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, pt_executor_wait(ex, 2, PT_WAIT_MS));
	pt_sleep_ms(20);
	ASSERT_PT(-EAGAIN, pt_pull(self->fd, out[0], PTASK_NONBLOCK, 0, NULL));
	ASSERT_PT(-EAGAIN, pt_pull(self->fd, out[1], PTASK_NONBLOCK, 0, NULL));
	/* Room in out[2]: O2 goes out everywhere. */
	ASSERT_PT(0, pull_seed(self->fd, out[2], &seed));
	ASSERT_EQ(1U, seed);
	ASSERT_PT(0, pull_seed(self->fd, out[0], &seed));
	ASSERT_EQ(2U, seed);
	ASSERT_PT(0, pull_seed(self->fd, out[1], &seed));
	ASSERT_EQ(2U, seed);
	ASSERT_PT(0, pull_seed(self->fd, out[2], &seed));
	ASSERT_EQ(2U, seed);
	ASSERT_EQ(0UL, ex->errors);
}

/* Pushes @n seeds through chain @c, pulling with a window of @w. */
static int stream(int fd, const struct pt_chain *c, __u32 n, __u32 w,
		  size_t bytes, __u32 base)
{
	__u64 rec, got_bytes;
	__u32 i, seed;
	int r;

	for (i = 0; i < n + w; i++) {
		if (i < n) {
			r = pt_push_seed(fd, c->chan[0], bytes, base + i, i, 0,
					 pt_wait_deadline());
			if (r)
				return r;
		}
		if (i >= w) {
			r = pt_pull_seed(fd, c->chan[c->n], 0,
					 pt_wait_deadline(), &seed,
					 &got_bytes, &rec);
			if (r)
				return r;
			if (seed != base + i - w || rec != i - w ||
			    got_bytes != bytes)
				return -EBADMSG;
		}
	}
	return 0;
}

/* A 3-ptask chain through the test executor process, 150 datablocks. */
TEST_F_TIMEOUT(pipeline, chain_through_test_executor_process, 120)
{
	struct pt_chain c;
	pid_t pid;

	pid = pt_env_spawn_executor(&self->env, NULL);
	if (pid == -ENOENT)
		SKIP(return, "no test executor at %s (set %s)",
		     pt_executor_path(), PT_EXECUTOR_ENV);
	ASSERT_LT(0, pid);
	ASSERT_PT(0, pt_build_chain(self->fd, "", 3, PTASK_KIND_GPU, 4, &c));
	ASSERT_PT(0, pt_graph_run(self->fd, c.graph));
	ASSERT_PT(0, stream(self->fd, &c, 150, 4, 1024, 5000));
}

/* CPU ptasks run by an executor thread of the owning process. */
TEST_F_TIMEOUT(pipeline, cpu_chain_in_process, 120)
{
	struct pt_executor *ex;
	struct pt_chain c;

	ex = pt_env_executor(&self->env);
	ASSERT_NE(NULL, ex);
	ASSERT_PT(0, pt_build_chain(self->fd, "", 3, PTASK_KIND_CPU, 2, &c));
	ASSERT_PT(0, pt_graph_run(self->fd, c.graph));
	ASSERT_PT(0, stream(self->fd, &c, 100, 3, 256, 9000));
	/* The last EXEC_COMPLETE may return after the pull it fed. */
	ASSERT_PT(0, pt_executor_wait(ex, 300, PT_WAIT_MS));
	ASSERT_EQ(300UL, pt_executor_completed(ex));
	ASSERT_EQ(0UL, ex->errors);
	ASSERT_EQ((__u64)getpid(), ex->last_owner_pid);
}

/* Several graphs share one executor; each stream stays in order. */
TEST_F_TIMEOUT(pipeline, interleaved_graphs, 120)
{
	struct pt_chain c[3];
	__u32 i, k, seed;

	ASSERT_NE(NULL, pt_env_executor(&self->env));
	for (k = 0; k < 3; k++) {
		ASSERT_PT(0, pt_build_chain(self->fd, "", 1 + k, PTASK_KIND_GPU,
					    8, &c[k]));
		ASSERT_PT(0, pt_graph_run(self->fd, c[k].graph));
	}
	for (i = 0; i < 6; i++)
		for (k = 0; k < 3; k++)
			ASSERT_PT(0, pt_push_seed(self->fd, c[k].chan[0], 128,
						  1000 * k + i, 0, 0,
						  pt_wait_deadline()));
	for (k = 0; k < 3; k++) {
		for (i = 0; i < 6; i++) {
			ASSERT_PT(0, pull_seed(self->fd, c[k].chan[c[k].n],
					       &seed));
			ASSERT_EQ(1000 * k + i, seed);
		}
	}
}

/* test_executor -n COUNT exits by itself, cleanly, after COUNT. */
TEST_F(pipeline, test_executor_count_exit)
{
	static const char *const args[] = { "-n", "3", NULL };
	struct pt_copy_graph g;
	__u32 i, seed;
	pid_t pid;
	int st;

	pid = pt_env_spawn_executor(&self->env, args);
	if (pid == -ENOENT)
		SKIP(return, "no test executor at %s (set %s)",
		     pt_executor_path(), PT_EXECUTOR_ENV);
	ASSERT_LT(0, pid);
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	for (i = 0; i < 3; i++) {
		ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, i, 0, 0,
					  pt_wait_deadline()));
		ASSERT_PT(0, pull_seed(self->fd, g.out_chan[0], &seed));
		ASSERT_EQ(i, seed);
	}
	st = pt_env_wait_pid(&self->env, pid, PT_WAIT_MS);
	ASSERT_LE(0, st);
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(0, WEXITSTATUS(st));
	ASSERT_PT(0, pt_executors_wait(self->env.base_executors, PT_WAIT_MS));
}

TEST_F(pipeline, test_executor_sigterm_clean)
{
	pid_t pid;
	int st;

	pid = pt_env_spawn_executor(&self->env, NULL);
	if (pid == -ENOENT)
		SKIP(return, "no test executor at %s (set %s)",
		     pt_executor_path(), PT_EXECUTOR_ENV);
	ASSERT_LT(0, pid);
	ASSERT_EQ(0, kill(pid, SIGTERM));
	st = pt_env_wait_pid(&self->env, pid, PT_WAIT_MS);
	ASSERT_LE(0, st);
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(0, WEXITSTATUS(st));
	ASSERT_PT(0, pt_executors_wait(self->env.base_executors, PT_WAIT_MS));
}

TEST_HARNESS_MAIN
