// SPDX-License-Identifier: GPL-2.0
/*
 * lifetime_test - objects die with the fds (and processes) that hold them,
 * whatever way those go: close, exit, SIGKILL while blocked, an executor
 * killed in the middle of an invocation.  Checked by the counters under
 * /sys/kernel/ptask/objects/.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

#include "pt_harness.h"

FIXTURE(lifetime) {
	struct pt_env env;
	int fd;
};

FIXTURE_SETUP(lifetime)
{
	PT_ENV_SETUP(&self->env);
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(lifetime)
{
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

static void add(__u64 *c, enum ptask_count which, __u64 n)
{
	c[which] += n;
}

/*
 * Exactly the objects made are counted, and closing the fd frees them.
 * Assumption: one objects/buffers per datablock.
 */
TEST_F(lifetime, close_frees_everything)
{
	struct pt_copy_spec s = { .kind = PTASK_KIND_GPU, .n = 2 };
	__u64 c0[__PTASK_COUNT_MAX], want[__PTASK_COUNT_MAX];
	struct pt_copy_graph g;
	__u32 t, h1, h2;
	__u64 off;
	void *m;
	int fd2;

	ASSERT_PT(0, pt_counts_read(c0));
	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	ASSERT_PT(0, pt_build_copy(fd2, &s, &g));
	ASSERT_PT(0, pt_template_open(fd2, g.graph, PTASK_TEMPLATE_ARRAY,
				      PTASK_BIND_GLOBAL, 8, 8, 1, 1, "", &t));
	/* One in a channel (not held), one held, one held and mapped. */
	ASSERT_PT(0, pt_push_seed(fd2, g.in_chan[0], 64, 1, 0, PTASK_NONBLOCK,
				  0));
	ASSERT_PT(0, pt_db_create(fd2, 0, t, 0, &h1, NULL, NULL));
	ASSERT_PT(0, pt_db_create(fd2, 8192, 0, 0, &h2, &off, NULL));
	m = pt_env_map(&self->env, fd2, off, 8192);
	ASSERT_NE(NULL, m);

	memcpy(want, c0, sizeof(want));
	add(want, PTASK_COUNT_CLIENTS, 1);
	add(want, PTASK_COUNT_GRAPHS, 1);
	add(want, PTASK_COUNT_TEMPLATES, 1);
	add(want, PTASK_COUNT_PTASKS, 1);
	add(want, PTASK_COUNT_PORTS, 4);
	add(want, PTASK_COUNT_CHANNELS, 4);
	add(want, PTASK_COUNT_DATABLOCKS, 3);
	add(want, PTASK_COUNT_BUFFERS, 3);
	ASSERT_EQ(0, pt_counts_wait_all(want, 0, "built"));

	pt_env_unmap(&self->env, m);
	pt_env_close(&self->env, fd2);
	ASSERT_EQ(0, pt_counts_wait_all(c0, PT_WAIT_MS, "closed"));
}

/*
 * A mapping keeps the datablock's memory until munmap, but not the
 * client: closing the fd closes its graphs and datablocks at once (the
 * mapping held the file, and with it the whole client, until munmap:
 * issue 13, the outside attack).
 */
TEST_F(lifetime, mapping_outlives_close)
{
	__u64 c0[__PTASK_COUNT_MAX], want[__PTASK_COUNT_MAX], off;
	__u32 h, seed, g;
	void *m;
	int fd2;

	ASSERT_PT(0, pt_counts_read(c0));
	fd2 = pt_open();
	ASSERT_LE(0, fd2);
	ASSERT_PT(0, pt_graph_open(fd2, "", PTASK_GRAPH_CREATE, 0600, &g));
	ASSERT_PT(0, pt_db_create(fd2, 4096, 0, 0, &h, &off, NULL));
	m = pt_map(fd2, off, 4096, PROT_READ | PROT_WRITE);
	if (!m)
		close(fd2);
	ASSERT_NE(NULL, m);
	pt_fill(m, 4096, 123);
	close(fd2);
	memcpy(want, c0, sizeof(want));
	add(want, PTASK_COUNT_BUFFERS, 1);	/* the mapping's pages */
	EXPECT_EQ(0, pt_counts_wait_all(want, PT_WAIT_MS, "closed, mapped"));
	EXPECT_PT(0, pt_check(m, 4096, &seed));
	EXPECT_EQ(123U, seed);
	pt_fill(m, 4096, 124);	/* still writable, no crash */
	munmap(m, 4096);
	ASSERT_EQ(0, pt_counts_wait_all(c0, PT_WAIT_MS, "unmapped"));
}

/* A graph lives while any client has it open. */
TEST_F(lifetime, graph_lives_while_another_client_has_it)
{
	char name[PTASK_NAME_MAX];
	struct pt_copy_spec s = {
		.name = pt_name(name, "lives"), .kind = PTASK_KIND_GPU, .n = 1,
	};
	__u64 c0[__PTASK_COUNT_MAX], c1[__PTASK_COUNT_MAX];
	struct pt_copy_graph g;
	__u32 gh, ch;
	int fd2, fd3;

	ASSERT_PT(0, pt_counts_read(c0));
	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	fd3 = pt_env_open(&self->env);
	ASSERT_LE(0, fd3);
	ASSERT_PT(0, pt_build_copy(fd2, &s, &g));
	ASSERT_PT(0, pt_graph_open(fd3, name, 0, 0, &gh));
	ASSERT_PT(0, pt_push_seed(fd2, g.in_chan[0], 64, 1, 0, PTASK_NONBLOCK,
				  0));
	pt_env_close(&self->env, fd2);
	pt_sleep_ms(20);
	ASSERT_PT(0, pt_counts_read(c1));
	ASSERT_EQ(c0[PTASK_COUNT_GRAPHS] + 1, c1[PTASK_COUNT_GRAPHS]);
	ASSERT_EQ(c0[PTASK_COUNT_PTASKS] + 1, c1[PTASK_COUNT_PTASKS]);
	ASSERT_EQ(c0[PTASK_COUNT_CHANNELS] + 2, c1[PTASK_COUNT_CHANNELS]);
	/* The datablock fd2 pushed is still in the graph. */
	ASSERT_EQ(c0[PTASK_COUNT_DATABLOCKS] + 1, c1[PTASK_COUNT_DATABLOCKS]);
	ASSERT_PT(0, pt_lookup(fd3, gh, PTASK_OBJ_CHANNEL, "in0", &ch));
	ASSERT_PT(0, pt_push_seed(fd3, ch, 64, 2, 0, PTASK_NONBLOCK, 0));
	pt_env_close(&self->env, fd3);
	ASSERT_EQ(0, pt_counts_wait_all(c0, PT_WAIT_MS, "all closed"));
	ASSERT_PT(-ENOENT, pt_graph_open(self->fd, name, 0, 0, NULL));
}

/* Terminate releases every datablock the graph holds at once. */
TEST_F(lifetime, terminate_releases_datablocks)
{
	struct pt_copy_spec s = { .kind = PTASK_KIND_GPU, .n = 2, .in_cap = 3 };
	__u64 c0[__PTASK_COUNT_MAX];
	struct pt_copy_graph g;
	int i;

	ASSERT_PT(0, pt_build_copy(self->fd, &s, &g));
	ASSERT_PT(0, pt_counts_read(c0));
	for (i = 0; i < 3; i++)
		ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[i & 1], 4096, i,
					  0, PTASK_NONBLOCK, 0));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_DATABLOCKS,
				   c0[PTASK_COUNT_DATABLOCKS] + 3, 0));
	ASSERT_PT(0, pt_graph_terminate(self->fd, g.graph));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_DATABLOCKS,
				   c0[PTASK_COUNT_DATABLOCKS], PT_WAIT_MS));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_BUFFERS,
				   c0[PTASK_COUNT_BUFFERS], PT_WAIT_MS));
	/* The graph object itself stays until closed. */
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_GRAPHS,
				   c0[PTASK_COUNT_GRAPHS], 0));
	ASSERT_PT(-ESHUTDOWN, pt_graph_run(self->fd, g.graph));
}

/* A process that exits without cleaning up leaves nothing behind. */
TEST_F(lifetime, exit_without_cleanup_leaves_nothing)
{
	__u64 c0[__PTASK_COUNT_MAX];
	pid_t pid;

	ASSERT_PT(0, pt_counts_read(c0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct pt_copy_spec s = { .kind = PTASK_KIND_CPU, .n = 3 };
		struct pt_copy_graph g;
		__u32 h;
		__u64 off;
		int fd = pt_open();

		if (fd < 0 || pt_build_copy(fd, &s, &g))
			_exit(PT_CHILD_FAIL);
		if (pt_push_seed(fd, g.in_chan[1], 64, 1, 0, PTASK_NONBLOCK, 0) ||
		    pt_db_create(fd, 100, 0, 0, &h, &off, NULL) ||
		    !pt_map(fd, off, 100, PROT_READ | PROT_WRITE))
			_exit(PT_CHILD_FAIL + 1);
		_exit(PT_CHILD_OK);
	}
	pt_env_track_pid(&self->env, pid);
	PT_WAIT_CHILD(&self->env, pid, PT_WAIT_MS);
	ASSERT_EQ(0, pt_counts_wait_all(c0, PT_WAIT_MS, "child exited"));
}

/*
 * Forks a child that builds a graph, fills its input channel, holds a
 * mapped datablock, tells the parent through @wfd and then blocks in a
 * push (@push) or in a pull from the empty output.
 */
static pid_t blocked_child(int pipefd[2], bool push)
{
	struct pt_copy_spec s = { .kind = PTASK_KIND_GPU, .n = 2, .in_cap = 2 };
	struct pt_copy_graph g;
	__u32 t, h;
	__u64 off;
	pid_t pid;
	void *m;
	int fd;

	pid = fork();
	if (pid)
		return pid;
	close(pipefd[0]);
	fd = pt_open();
	if (fd < 0 || pt_build_copy(fd, &s, &g) ||
	    pt_template_open(fd, g.graph, PTASK_TEMPLATE_OPAQUE,
			     PTASK_BIND_GLOBAL, 1, 64, 1, 1, "", &t))
		_exit(PT_CHILD_FAIL);
	if (pt_db_create(fd, 0, t, 0, &h, &off, NULL))
		_exit(PT_CHILD_FAIL + 1);
	m = pt_map(fd, off, 64, PROT_READ | PROT_WRITE);
	if (!m)
		_exit(PT_CHILD_FAIL + 2);
	pt_fill(m, 64, 5);
	if (pt_fill_channel(fd, g.in_chan[0], 64, 1, 10) <= 0 ||
	    pt_push(fd, g.in_chan[1], h, PTASK_NONBLOCK, 0, 0))
		_exit(PT_CHILD_FAIL + 3);
	if (write(pipefd[1], "b", 1) != 1)
		_exit(PT_CHILD_FAIL + 4);
	if (push)
		pt_push_seed(fd, g.in_chan[0], 64, 99, 0, 0, 0);
	else
		pt_pull(fd, g.out_chan[0], 0, 0, NULL);
	_exit(PT_CHILD_FAIL + 5);	/* never woken */
}

static int kill_blocked(struct __test_metadata *_metadata,
			struct pt_env *env, bool push)
{
	__u64 c0[__PTASK_COUNT_MAX], c1[__PTASK_COUNT_MAX];
	int pipefd[2], st;
	char c;
	pid_t pid;

	ASSERT_PT(0, pt_counts_read(c0));
	ASSERT_EQ(0, pipe(pipefd));
	pid = blocked_child(pipefd, push);
	ASSERT_LE(0, pid);
	pt_env_track_pid(env, pid);
	close(pipefd[1]);
	st = (int)read(pipefd[0], &c, 1);
	close(pipefd[0]);
	if (st != 1) {
		st = pt_env_wait_pid(env, pid, PT_WAIT_MS);
		TH_LOG("child failed before blocking: status %#x", st);
		ASSERT_TRUE(false);
	}
	/* Blocked in the ioctl, holding objects. */
	ASSERT_PT(0, pt_wait_sleeping(pid, pid, PT_WAIT_MS));
	pt_sleep_ms(30);
	ASSERT_PT(0, pt_wait_sleeping(pid, pid, 0));
	ASSERT_PT(0, pt_counts_read(c1));
	ASSERT_EQ(c0[PTASK_COUNT_CLIENTS] + 1, c1[PTASK_COUNT_CLIENTS]);
	ASSERT_EQ(c0[PTASK_COUNT_GRAPHS] + 1, c1[PTASK_COUNT_GRAPHS]);
	ASSERT_LT(c0[PTASK_COUNT_DATABLOCKS], c1[PTASK_COUNT_DATABLOCKS]);

	ASSERT_EQ(0, kill(pid, SIGKILL));
	st = pt_env_wait_pid(env, pid, PT_WAIT_MS);
	ASSERT_LE(0, st);
	ASSERT_TRUE(WIFSIGNALED(st));
	ASSERT_EQ(SIGKILL, WTERMSIG(st));
	ASSERT_EQ(0, pt_counts_wait_all(c0, PT_WAIT_MS, "after SIGKILL"));
	return 0;
}

TEST_F(lifetime, sigkill_mid_push_leaves_nothing)
{
	kill_blocked(_metadata, &self->env, true);
}

TEST_F(lifetime, sigkill_mid_pull_leaves_nothing)
{
	kill_blocked(_metadata, &self->env, false);
}

/*
 * An executor that dies holding an invocation fails its graph (-EIO for
 * the graph's callers) and leaves no invocation behind.
 */
TEST_F(lifetime, executor_killed_mid_invocation)
{
	struct pt_copy_graph g;
	__u64 c0[__PTASK_COUNT_MAX];
	int pipefd[2], st;
	char c;
	pid_t pid;

	PT_NEED_ROOT();
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_counts_read(c0));
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct ptask_invocation inv;
		struct ptask_invocation_port ports[2];
		__u32 n;
		int fd;

		close(pipefd[0]);
		fd = pt_open();
		if (fd < 0 || pt_nl_register(fd))
			_exit(PT_CHILD_FAIL);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(PT_CHILD_FAIL + 1);
		if (pt_exec_take(fd, 0, pt_wait_deadline(), &inv, 1, ports, 2,
				 &n, NULL) || n != 1)
			_exit(PT_CHILD_FAIL + 2);
		if (write(pipefd[1], "t", 1) != 1)
			_exit(PT_CHILD_FAIL + 3);
		pt_sleep_ms(10000);
		_exit(PT_CHILD_FAIL + 4);
	}
	pt_env_track_pid(&self->env, pid);
	close(pipefd[1]);
	st = (int)read(pipefd[0], &c, 1);
	if (st == 1) {
		EXPECT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0, 0,
					  pt_wait_deadline()));
		st = (int)read(pipefd[0], &c, 1);
	}
	close(pipefd[0]);
	if (st != 1) {
		st = pt_env_wait_pid(&self->env, pid, PT_WAIT_MS);
		TH_LOG("executor child failed: status %#x", st);
		ASSERT_TRUE(false);
	}
	ASSERT_EQ(0, kill(pid, SIGKILL));
	st = pt_env_wait_pid(&self->env, pid, PT_WAIT_MS);
	ASSERT_LE(0, st);
	ASSERT_PT(-EIO, pt_pull(self->fd, g.out_chan[0], 0,
				pt_wait_deadline(), NULL));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_INVOCATIONS,
				   c0[PTASK_COUNT_INVOCATIONS], PT_WAIT_MS));
	ASSERT_PT(0, pt_executors_wait(self->env.base_executors, PT_WAIT_MS));
}

TEST_HARNESS_MAIN
