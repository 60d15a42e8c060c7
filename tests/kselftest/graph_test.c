// SPDX-License-Identifier: GPL-2.0
/*
 * graph_test - PTASK_IOC_GRAPH_OPEN, _GRAPH_RUN and _GRAPH_TERMINATE.
 *
 * Every test runs with a fresh /dev/ptask fd; the teardown closes every fd
 * the test opened and checks that /sys/kernel/ptask/objects/ is back where
 * it was before the test.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/ioctl.h>

#include "pt_harness.h"

FIXTURE(graph) {
	struct pt_env env;
	int fd;
};

FIXTURE_SETUP(graph)
{
	PT_ENV_SETUP(&self->env);
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(graph)
{
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

static __u64 graphs_now(void)
{
	__u64 c[__PTASK_COUNT_MAX];

	if (pt_counts_read(c))
		return ~0ULL;
	return c[PTASK_COUNT_GRAPHS];
}

TEST_F(graph, create_anonymous)
{
	__u64 before = graphs_now();
	__u32 g = 0;

	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600, &g));
	ASSERT_NE(0U, g);
	ASSERT_EQ(before + 1, graphs_now());
}

/* An anonymous graph can never be opened again, so each create is new. */
TEST_F(graph, anonymous_graphs_are_distinct)
{
	__u64 before = graphs_now();
	__u32 g1 = 0, g2 = 0;

	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600, &g1));
	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600, &g2));
	ASSERT_NE(g1, g2);
	ASSERT_EQ(before + 2, graphs_now());
}

/*
 * Assumption: a graph has one handle ("unique in the whole namespace"), so
 * a second client opening it by name gets the creator's handle.
 */
TEST_F(graph, open_existing_by_name)
{
	char name[PTASK_NAME_MAX];
	__u64 before = graphs_now();
	__u32 g1 = 0, g2 = 0;
	int fd2;

	pt_name(name, "open");
	ASSERT_PT(0, pt_graph_open(self->fd, name,
				   PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL, 0600,
				   &g1));
	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	ASSERT_PT(0, pt_graph_open(fd2, name, 0, 0, &g2));
	ASSERT_EQ(g1, g2);
	ASSERT_EQ(before + 1, graphs_now());
}

TEST_F(graph, create_without_excl_opens_existing)
{
	char name[PTASK_NAME_MAX];
	__u64 before = graphs_now();
	__u32 g1 = 0, g2 = 0;
	int fd2;

	pt_name(name, "noexcl");
	ASSERT_PT(0, pt_graph_open(self->fd, name, PTASK_GRAPH_CREATE, 0600,
				   &g1));
	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	ASSERT_PT(0, pt_graph_open(fd2, name, PTASK_GRAPH_CREATE, 0600, &g2));
	ASSERT_EQ(g1, g2);
	ASSERT_EQ(before + 1, graphs_now());
}

TEST_F(graph, open_twice_same_client_same_handle)
{
	char name[PTASK_NAME_MAX];
	__u32 g1 = 0, g2 = 0, g3 = 0;

	pt_name(name, "twice");
	ASSERT_PT(0, pt_graph_open(self->fd, name, PTASK_GRAPH_CREATE, 0600,
				   &g1));
	ASSERT_PT(0, pt_graph_open(self->fd, name, 0, 0, &g2));
	ASSERT_PT(0, pt_graph_open(self->fd, name, PTASK_GRAPH_CREATE, 0600,
				   &g3));
	ASSERT_EQ(g1, g2);
	ASSERT_EQ(g1, g3);
}

TEST_F(graph, excl_existing_eexist)
{
	char name[PTASK_NAME_MAX];
	__u64 before = graphs_now();
	__u32 g = 0;

	pt_name(name, "excl");
	ASSERT_PT(0, pt_graph_open(self->fd, name,
				   PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL, 0600,
				   &g));
	ASSERT_PT(-EEXIST, pt_graph_open(self->fd, name,
					 PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL,
					 0600, NULL));
	ASSERT_EQ(before + 1, graphs_now());
}

TEST_F(graph, missing_without_create_enoent)
{
	char name[PTASK_NAME_MAX];

	pt_name(name, "missing");
	ASSERT_PT(-ENOENT, pt_graph_open(self->fd, name, 0, 0, NULL));
}

TEST_F(graph, name_not_terminated_einval)
{
	struct ptask_graph_open a = {
		.size = sizeof(a), .flags = PTASK_GRAPH_CREATE, .mode = 0600,
	};

	memset(a.name, 'a', sizeof(a.name));
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_GRAPH_OPEN, &a));
	ASSERT_EQ(EINVAL, errno);
}

TEST_F(graph, name_bad_characters_einval)
{
	static const char *const bad[] = {
		"with space", "star*", "new\nline", "colon:", "dollar$",
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		TH_LOG("name \"%s\"", bad[i]);
		ASSERT_PT(-EINVAL, pt_graph_open(self->fd, bad[i],
						 PTASK_GRAPH_CREATE, 0600,
						 NULL));
	}
}

TEST_F(graph, name_allowed_characters)
{
	char name[PTASK_NAME_MAX];
	__u32 g = 0;

	snprintf(name, sizeof(name), "kst.%d/Az09._-", (int)getpid());
	ASSERT_PT(0, pt_graph_open(self->fd, name, PTASK_GRAPH_CREATE, 0600,
				   &g));
	ASSERT_NE(0U, g);
}

TEST_F(graph, mode_over_0777_einval)
{
	char name[PTASK_NAME_MAX];

	pt_name(name, "mode");
	ASSERT_PT(-EINVAL, pt_graph_open(self->fd, name, PTASK_GRAPH_CREATE,
					 01000, NULL));
	ASSERT_PT(-EINVAL, pt_graph_open(self->fd, name, PTASK_GRAPH_CREATE,
					 04600, NULL));
	ASSERT_PT(0, pt_graph_open(self->fd, name, PTASK_GRAPH_CREATE, 0777,
				   NULL));
}

TEST_F(graph, unknown_flag_einval)
{
	ASSERT_PT(-EINVAL, pt_graph_open(self->fd, "",
					 PTASK_GRAPH_CREATE | (1U << 2), 0600,
					 NULL));
	ASSERT_PT(-EINVAL, pt_graph_open(self->fd, "",
					 PTASK_GRAPH_CREATE | (1U << 31), 0600,
					 NULL));
}

TEST_F(graph, run_twice_ealready)
{
	struct pt_copy_graph g;

	ASSERT_PT(0, pt_build_copy1(self->fd, false, &g));
	ASSERT_PT(0, pt_graph_run(self->fd, g.graph));
	ASSERT_PT(-EALREADY, pt_graph_run(self->fd, g.graph));
}

TEST_F(graph, terminate_then_calls_eshutdown)
{
	struct pt_copy_graph g;
	__u32 db;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_db_make(self->fd, 64, 1, &db));
	ASSERT_PT(0, pt_graph_terminate(self->fd, g.graph));

	ASSERT_PT(-ESHUTDOWN, pt_graph_terminate(self->fd, g.graph));
	ASSERT_PT(-ESHUTDOWN, pt_graph_run(self->fd, g.graph));
	ASSERT_PT(-ESHUTDOWN, pt_template_open(self->fd, g.graph,
					       PTASK_TEMPLATE_OPAQUE,
					       PTASK_BIND_GLOBAL, 1, 64, 1, 1,
					       "", NULL));
	ASSERT_PT(-ESHUTDOWN, pt_ptask_open_cpu(self->fd, g.graph, 1, "",
						NULL));
	ASSERT_PT(-ESHUTDOWN, pt_channel_open(self->fd, g.graph,
					      g.out_port[0], 0, 1, 0, "",
					      NULL));
	ASSERT_PT(-ESHUTDOWN, pt_push(self->fd, g.in_chan[0], db,
				      PTASK_NONBLOCK, 0, 0));
	ASSERT_PT(-ESHUTDOWN, pt_pull(self->fd, g.out_chan[0],
				      PTASK_NONBLOCK, 0, NULL));
	ASSERT_PT(-ESHUTDOWN, pt_set_priority(self->fd, g.ptask,
					      PTASK_PRIO_SET_STATIC, 10, 0));
	/* The caller's own datablock is not the graph's: it stays held. */
	ASSERT_PT(0, pt_db_release(self->fd, db));
}

/* Terminate stops the graph for every client, not just the caller. */
TEST_F(graph, terminate_seen_by_other_client)
{
	char name[PTASK_NAME_MAX];
	struct pt_copy_spec s = {
		.name = pt_name(name, "term2"), .kind = PTASK_KIND_GPU, .n = 1,
	};
	struct pt_copy_graph g;
	__u32 g2;
	int fd2;

	ASSERT_PT(0, pt_build_copy(self->fd, &s, &g));
	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	ASSERT_PT(0, pt_graph_open(fd2, name, 0, 0, &g2));
	ASSERT_PT(0, pt_graph_terminate(fd2, g2));
	ASSERT_PT(-ESHUTDOWN, pt_graph_run(self->fd, g.graph));
	ASSERT_PT(-ESHUTDOWN, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0,
					   PTASK_NONBLOCK, 0));
}

/* "...and its name is freed": a new graph may take the name at once. */
TEST_F(graph, terminate_frees_name)
{
	char name[PTASK_NAME_MAX];
	__u32 g1 = 0, g2 = 0;
	int fd2;

	pt_name(name, "reuse");
	ASSERT_PT(0, pt_graph_open(self->fd, name,
				   PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL, 0600,
				   &g1));
	ASSERT_PT(0, pt_graph_terminate(self->fd, g1));
	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	ASSERT_PT(0, pt_graph_open(fd2, name,
				   PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL, 0600,
				   &g2));
	ASSERT_NE(g1, g2);
	/* The old handle stays valid (and shut down) until closed. */
	ASSERT_PT(-ESHUTDOWN, pt_graph_run(self->fd, g1));
	ASSERT_PT(0, pt_graph_run(fd2, g2));
}

TEST_F(graph, last_close_frees_name)
{
	char name[PTASK_NAME_MAX];
	__u64 before = graphs_now();
	int fd2;

	pt_name(name, "lastclose");
	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	ASSERT_PT(0, pt_graph_open(fd2, name, PTASK_GRAPH_CREATE, 0600, NULL));
	ASSERT_EQ(before + 1, graphs_now());
	pt_env_close(&self->env, fd2);
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_GRAPHS, before, PT_WAIT_MS));
	ASSERT_PT(-ENOENT, pt_graph_open(self->fd, name, 0, 0, NULL));
}

/* Ports cannot be added once the graph runs. */
TEST_F(graph, port_open_while_running_ebusy)
{
	__u32 g, p, in, out;

	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600, &g));
	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, g, 3, "", &p));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_INPUT, 0, 0, 0, 0,
				  "", &in, NULL));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_OUTPUT, 0, 0, 1, 0,
				  "", &out, NULL));
	ASSERT_PT(0, pt_graph_run(self->fd, g));
	ASSERT_PT(-EBUSY, pt_port_open(self->fd, p, PTASK_PORT_OUTPUT, 0, 0,
				       2, 0, "", NULL, NULL));
}

TEST_HARNESS_MAIN
