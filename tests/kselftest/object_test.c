// SPDX-License-Identifier: GPL-2.0
/*
 * object_test - templates, ptasks, ports, lookup, priorities, geometry:
 * PTASK_IOC_TEMPLATE_OPEN, _PTASK_OPEN, _PORT_OPEN, _LOOKUP,
 * _PTASK_SET_PRIORITY and _PTASK_SET_GEOMETRY.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "pt_harness.h"

FIXTURE(object) {
	struct pt_env env;
	int fd;
	__u32 graph;
	__u64 c0[__PTASK_COUNT_MAX];	/* counters after setup */
};

FIXTURE_SETUP(object)
{
	PT_ENV_SETUP(&self->env);
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600,
				   &self->graph));
	ASSERT_PT(0, pt_counts_read(self->c0));
}

FIXTURE_TEARDOWN(object)
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

/* --- templates --- */

TEST_F(object, template_open_array)
{
	__u32 t = 0;

	ASSERT_PT(0, pt_template_open(self->fd, self->graph,
				      PTASK_TEMPLATE_ARRAY, PTASK_BIND_GLOBAL,
				      4, 16, 8, 2, "mat", &t));
	ASSERT_NE(0U, t);
	ASSERT_NE(self->graph, t);
	ASSERT_EQ(self->c0[PTASK_COUNT_TEMPLATES] + 1,
		  count_now(PTASK_COUNT_TEMPLATES));
}

TEST_F(object, template_open_every_kind_and_binding)
{
	__u32 kind, bind, t, n = 0;
	char name[16];

	for (kind = 0; kind < __PTASK_TEMPLATE_KIND_MAX; kind++) {
		for (bind = 0; bind < __PTASK_BIND_MAX; bind++) {
			snprintf(name, sizeof(name), "t%u.%u", kind, bind);
			TH_LOG("kind %u binding %u", kind, bind);
			ASSERT_PT(0, pt_template_open(self->fd, self->graph,
						      kind, bind, 8, 4, 1, 1,
						      name, &t));
			n++;
		}
	}
	ASSERT_EQ(self->c0[PTASK_COUNT_TEMPLATES] + n,
		  count_now(PTASK_COUNT_TEMPLATES));
}

TEST_F(object, template_stride_zero_einval)
{
	ASSERT_PT(-EINVAL, pt_template_open(self->fd, self->graph,
					    PTASK_TEMPLATE_ARRAY,
					    PTASK_BIND_GLOBAL, 0, 4, 1, 1, "",
					    NULL));
}

TEST_F(object, template_dim_zero_einval)
{
	ASSERT_PT(-EINVAL, pt_template_open(self->fd, self->graph,
					    PTASK_TEMPLATE_ARRAY,
					    PTASK_BIND_GLOBAL, 4, 0, 1, 1, "",
					    NULL));
	ASSERT_PT(-EINVAL, pt_template_open(self->fd, self->graph,
					    PTASK_TEMPLATE_ARRAY,
					    PTASK_BIND_GLOBAL, 4, 1, 0, 1, "",
					    NULL));
	ASSERT_PT(-EINVAL, pt_template_open(self->fd, self->graph,
					    PTASK_TEMPLATE_ARRAY,
					    PTASK_BIND_GLOBAL, 4, 1, 1, 0, "",
					    NULL));
}

TEST_F(object, template_too_big_einval)
{
	/* 1 MiB * 512 = 512 MiB > PTASK_DATABLOCK_MAX_BYTES. */
	ASSERT_PT(-EINVAL, pt_template_open(self->fd, self->graph,
					    PTASK_TEMPLATE_ARRAY,
					    PTASK_BIND_GLOBAL, 1U << 20, 512,
					    1, 1, "", NULL));
	/* Overflowing 32 bits must not wrap to a small size. */
	ASSERT_PT(-EINVAL, pt_template_open(self->fd, self->graph,
					    PTASK_TEMPLATE_ARRAY,
					    PTASK_BIND_GLOBAL, 1U << 16,
					    1U << 16, 1, 1, "", NULL));
	/* Exactly the maximum is fine. */
	ASSERT_PT(0, pt_template_open(self->fd, self->graph,
				      PTASK_TEMPLATE_ARRAY, PTASK_BIND_GLOBAL,
				      1U << 20, 256, 1, 1, "", NULL));
}

TEST_F(object, template_bad_kind_einval)
{
	ASSERT_PT(-EINVAL, pt_template_open(self->fd, self->graph,
					    __PTASK_TEMPLATE_KIND_MAX,
					    PTASK_BIND_GLOBAL, 4, 4, 1, 1, "",
					    NULL));
}

TEST_F(object, template_bad_binding_einval)
{
	ASSERT_PT(-EINVAL, pt_template_open(self->fd, self->graph,
					    PTASK_TEMPLATE_ARRAY,
					    __PTASK_BIND_MAX, 4, 4, 1, 1, "",
					    NULL));
}

/* --- ptasks --- */

TEST_F(object, ptask_open_gpu)
{
	__u32 p = 0;

	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, self->graph, 2, "k", &p));
	ASSERT_NE(0U, p);
	ASSERT_EQ(self->c0[PTASK_COUNT_PTASKS] + 1,
		  count_now(PTASK_COUNT_PTASKS));
}

TEST_F(object, ptask_open_cpu)
{
	__u32 p = 0;

	ASSERT_PT(0, pt_ptask_open_cpu(self->fd, self->graph, 1, "f", &p));
	ASSERT_NE(0U, p);
	ASSERT_EQ(self->c0[PTASK_COUNT_PTASKS] + 1,
		  count_now(PTASK_COUNT_PTASKS));
}

TEST_F(object, ptask_nports_range_einval)
{
	ASSERT_PT(-EINVAL, pt_ptask_open_gpu(self->fd, self->graph, 0, "",
					     NULL));
	ASSERT_PT(-EINVAL, pt_ptask_open_gpu(self->fd, self->graph,
					     PTASK_MAX_PORTS + 1, "", NULL));
	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, self->graph, PTASK_MAX_PORTS,
				       "", NULL));
}

TEST_F(object, ptask_gpu_without_code_einval)
{
	ASSERT_PT(-EINVAL, pt_ptask_open(self->fd, self->graph, PTASK_KIND_GPU,
					 1, NULL, 0, "copy", "", NULL));
}

TEST_F(object, ptask_gpu_without_entry_einval)
{
	ASSERT_PT(-EINVAL, pt_ptask_open(self->fd, self->graph, PTASK_KIND_GPU,
					 1, pt_dummy_code, pt_dummy_code_len,
					 "", "", NULL));
}

TEST_F(object, ptask_cpu_with_code_einval)
{
	ASSERT_PT(-EINVAL, pt_ptask_open(self->fd, self->graph, PTASK_KIND_CPU,
					 1, pt_dummy_code, pt_dummy_code_len,
					 "", "", NULL));
}

TEST_F(object, ptask_bad_kind_einval)
{
	ASSERT_PT(-EINVAL, pt_ptask_open(self->fd, self->graph,
					 __PTASK_KIND_MAX, 1, NULL, 0, "", "",
					 NULL));
}

TEST_F(object, ptask_code_too_big_einval)
{
	size_t len = PTASK_CODE_MAX_BYTES + 1;
	void *code;
	int r;

	/* Readable but never touched unless the kernel copies it. */
	code = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, code);
	r = pt_ptask_open(self->fd, self->graph, PTASK_KIND_GPU, 1, code,
			  (__u32)len, "copy", "", NULL);
	munmap(code, len);
	ASSERT_PT(-EINVAL, r);
}

/* --- ports --- */

TEST_F(object, port_open_every_kind_and_flag)
{
	__u32 p, t, h[6], idx[6], i;

	ASSERT_PT(0, pt_template_open(self->fd, self->graph,
				      PTASK_TEMPLATE_ARRAY, PTASK_BIND_GLOBAL,
				      4, 64, 1, 1, "", &t));
	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, self->graph, 6, "", &p));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_INPUT, 0, t, 0, 0,
				  "a", &h[0], &idx[0]));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_STICKY, 0, 0, 1, 0,
				  "b", &h[1], &idx[1]));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_INPUT,
				  PTASK_PORT_RUNTIME, 0, 2, 0, "n", &h[2],
				  &idx[2]));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_OUTPUT, 0, t, 3, 0,
				  "c", &h[3], &idx[3]));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_OUTPUT, 0, 0, 4, 0,
				  "io.out", &h[4], &idx[4]));
	/* An in/out input names the output port that emits its datablock. */
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_INPUT,
				  PTASK_PORT_INOUT, 0, 5, h[4], "io.in", &h[5],
				  &idx[5]));
	for (i = 0; i < 6; i++) {
		ASSERT_EQ(i, idx[i]);	/* numbered in opening order */
		ASSERT_NE(0U, h[i]);
		if (i)
			ASSERT_NE(h[i - 1], h[i]);
	}
	ASSERT_EQ(self->c0[PTASK_COUNT_PORTS] + 6,
		  count_now(PTASK_COUNT_PORTS));
}

TEST_F(object, port_open_all_opened_enospc)
{
	__u32 p;

	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, self->graph, 2, "", &p));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_INPUT, 0, 0, 0, 0,
				  "", NULL, NULL));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_OUTPUT, 0, 0, 1, 0,
				  "", NULL, NULL));
	ASSERT_PT(-ENOSPC, pt_port_open(self->fd, p, PTASK_PORT_OUTPUT, 0, 0,
					2, 0, "", NULL, NULL));
}

TEST_F(object, port_bad_kind_einval)
{
	__u32 p;

	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, self->graph, 2, "", &p));
	ASSERT_PT(-EINVAL, pt_port_open(self->fd, p, __PTASK_PORT_KIND_MAX, 0,
					0, 0, 0, "", NULL, NULL));
}

TEST_F(object, port_unknown_flag_einval)
{
	__u32 p;

	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, self->graph, 2, "", &p));
	ASSERT_PT(-EINVAL, pt_port_open(self->fd, p, PTASK_PORT_INPUT,
					1U << 2, 0, 0, 0, "", NULL, NULL));
}

/* A template handle that is a ptask is "no template of that type". */
TEST_F(object, port_template_not_a_template_enoent)
{
	__u32 p;

	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, self->graph, 2, "", &p));
	ASSERT_PT(-ENOENT, pt_port_open(self->fd, p, PTASK_PORT_INPUT, 0, p,
					0, 0, "", NULL, NULL));
}

/* --- lookup --- */

TEST_F(object, lookup_every_type)
{
	struct pt_copy_graph g;
	__u32 t, h;

	ASSERT_PT(0, pt_build_copy1(self->fd, false, &g));
	ASSERT_PT(0, pt_template_open(self->fd, g.graph, PTASK_TEMPLATE_OPAQUE,
				      PTASK_BIND_GLOBAL, 1, 100, 1, 1, "tmpl",
				      &t));
	ASSERT_PT(0, pt_lookup(self->fd, g.graph, PTASK_OBJ_TEMPLATE, "tmpl",
			       &h));
	ASSERT_EQ(t, h);
	ASSERT_PT(0, pt_lookup(self->fd, g.graph, PTASK_OBJ_PTASK, "copy", &h));
	ASSERT_EQ(g.ptask, h);
	ASSERT_PT(0, pt_lookup(self->fd, g.graph, PTASK_OBJ_CHANNEL, "in0",
			       &h));
	ASSERT_EQ(g.in_chan[0], h);
	ASSERT_PT(0, pt_lookup(self->fd, g.graph, PTASK_OBJ_CHANNEL, "out0",
			       &h));
	ASSERT_EQ(g.out_chan[0], h);
}

TEST_F(object, lookup_port)
{
	__u32 p, port, h;

	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, self->graph, 1, "", &p));
	ASSERT_PT(0, pt_port_open(self->fd, p, PTASK_PORT_INPUT, 0, 0, 0, 0,
				  "the.port", &port, NULL));
	ASSERT_PT(0, pt_lookup(self->fd, self->graph, PTASK_OBJ_PORT,
			       "the.port", &h));
	ASSERT_EQ(port, h);
}

/* Names are per type: a channel's name does not find a ptask. */
TEST_F(object, lookup_missing_enoent)
{
	struct pt_copy_graph g;

	ASSERT_PT(0, pt_build_copy1(self->fd, false, &g));
	ASSERT_PT(-ENOENT, pt_lookup(self->fd, g.graph, PTASK_OBJ_CHANNEL,
				     "nope", NULL));
	ASSERT_PT(-ENOENT, pt_lookup(self->fd, g.graph, PTASK_OBJ_PTASK,
				     "in0", NULL));
	/* Objects of another graph are not found. */
	ASSERT_PT(-ENOENT, pt_lookup(self->fd, self->graph, PTASK_OBJ_PTASK,
				     "copy", NULL));
}

TEST_F(object, lookup_bad_type_einval)
{
	ASSERT_PT(-EINVAL, pt_lookup(self->fd, self->graph, PTASK_OBJ_NONE,
				     "x", NULL));
	ASSERT_PT(-EINVAL, pt_lookup(self->fd, self->graph, PTASK_OBJ_GRAPH,
				     "x", NULL));
	ASSERT_PT(-EINVAL, pt_lookup(self->fd, self->graph,
				     PTASK_OBJ_DATABLOCK, "x", NULL));
	ASSERT_PT(-EINVAL, pt_lookup(self->fd, self->graph, __PTASK_OBJ_MAX,
				     "x", NULL));
}

/* --- priority --- */

TEST_F(object, priority_static)
{
	__u32 p;

	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, self->graph, 1, "", &p));
	ASSERT_PT(0, pt_set_priority(self->fd, p, PTASK_PRIO_SET_STATIC,
				     PTASK_PRIO_MIN, 0));
	ASSERT_PT(0, pt_set_priority(self->fd, p, PTASK_PRIO_SET_STATIC,
				     PTASK_PRIO_MAX, 0));
	ASSERT_PT(-EINVAL, pt_set_priority(self->fd, p, PTASK_PRIO_SET_STATIC,
					   PTASK_PRIO_MAX + 1, 0));
}

TEST_F(object, priority_proxy)
{
	__u32 p;

	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, self->graph, 1, "", &p));
	/* Lowering is always allowed. */
	ASSERT_PT(0, pt_set_priority(self->fd, p, PTASK_PRIO_SET_PROXY, 0,
				     PTASK_NICE_MAX));
	ASSERT_PT(-EINVAL, pt_set_priority(self->fd, p, PTASK_PRIO_SET_PROXY,
					   0, PTASK_NICE_MIN - 1));
	ASSERT_PT(-EINVAL, pt_set_priority(self->fd, p, PTASK_PRIO_SET_PROXY,
					   0, PTASK_NICE_MAX + 1));
	/* Both at once. */
	ASSERT_PT(0, pt_set_priority(self->fd, p, PTASK_PRIO_FLAGS_ALL, 70,
				     PTASK_NICE_MAX));
	/* Raising above our own nice needs CAP_SYS_NICE, which root has. */
	if (geteuid() == 0)
		ASSERT_PT(0, pt_set_priority(self->fd, p, PTASK_PRIO_SET_PROXY,
					     0, PTASK_NICE_MIN));
}

TEST_F(object, priority_no_flag_einval)
{
	__u32 p;

	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, self->graph, 1, "", &p));
	ASSERT_PT(-EINVAL, pt_set_priority(self->fd, p, 0, 10, 0));
	ASSERT_PT(-EINVAL, pt_set_priority(self->fd, p, 1U << 2, 10, 0));
}

/* A process without CAP_SYS_NICE cannot raise a proxy above its own nice. */
TEST_F(object, priority_proxy_raise_eperm)
{
	pid_t pid;

	PT_NEED_ROOT();
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		__u32 g, p;
		int fd, r;

		if (pt_become(PT_NOBODY))
			_exit(PT_CHILD_FAIL);
		fd = pt_open();
		if (fd < 0)
			_exit(PT_CHILD_SKIP);
		if (setpriority(PRIO_PROCESS, 0, 5))
			_exit(PT_CHILD_FAIL);
		if (pt_graph_open(fd, "", PTASK_GRAPH_CREATE, 0600, &g) ||
		    pt_ptask_open_gpu(fd, g, 1, "", &p))
			_exit(PT_CHILD_FAIL);
		/* nice 10 is below our priority: fine. */
		if (pt_set_priority(fd, p, PTASK_PRIO_SET_PROXY, 0, 10))
			_exit(PT_CHILD_FAIL + 1);
		/* nice 5, our own: fine. */
		if (pt_set_priority(fd, p, PTASK_PRIO_SET_PROXY, 0, 5))
			_exit(PT_CHILD_FAIL + 2);
		r = pt_set_priority(fd, p, PTASK_PRIO_SET_PROXY, 0, 0);
		_exit(r == -EPERM ? PT_CHILD_OK : PT_CHILD_FAIL + 3);
	}
	pt_env_track_pid(&self->env, pid);
	PT_WAIT_CHILD(&self->env, pid, PT_WAIT_MS);
}

/* --- geometry --- */

TEST_F(object, geometry_gpu)
{
	static const __u32 grid[3] = { 8, 4, 1 }, block[3] = { 32, 32, 1 };
	static const __u32 zero[3] = { 0, 0, 0 };
	__u32 p;

	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, self->graph, 1, "", &p));
	ASSERT_PT(0, pt_set_geometry(self->fd, p, 4096, grid, block));
	/* All zero: inferred from the templates. */
	ASSERT_PT(0, pt_set_geometry(self->fd, p, 0, zero, zero));
}

TEST_F(object, geometry_partly_zero_einval)
{
	static const __u32 one[3] = { 1, 1, 1 }, zero[3] = { 0, 0, 0 };
	static const __u32 holey[3] = { 4, 0, 1 };
	__u32 p;

	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, self->graph, 1, "", &p));
	ASSERT_PT(-EINVAL, pt_set_geometry(self->fd, p, 0, one, zero));
	ASSERT_PT(-EINVAL, pt_set_geometry(self->fd, p, 0, zero, one));
	ASSERT_PT(-EINVAL, pt_set_geometry(self->fd, p, 0, holey, one));
	ASSERT_PT(-EINVAL, pt_set_geometry(self->fd, p, 0, one, holey));
}

TEST_F(object, geometry_block_over_1024_einval)
{
	static const __u32 grid[3] = { 1, 1, 1 };
	static const __u32 big[3] = { 32, 32, 2 }, max[3] = { 16, 16, 4 };
	__u32 p;

	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, self->graph, 1, "", &p));
	ASSERT_PT(-EINVAL, pt_set_geometry(self->fd, p, 0, grid, big));
	ASSERT_PT(0, pt_set_geometry(self->fd, p, 0, grid, max));
}

/* 2^28 x 2^28 x 256 threads: the product wraps a u64 to 0. */
TEST_F(object, geometry_block_product_wrap_einval)
{
	static const __u32 grid[3] = { 1, 1, 1 };
	static const __u32 wrap[3] = { 1U << 28, 1U << 28, 256 };
	static const __u32 deep[3] = { 1, 1, 65 }, z64[3] = { 1, 16, 64 };
	__u32 p;

	ASSERT_PT(0, pt_ptask_open_gpu(self->fd, self->graph, 1, "", &p));
	ASSERT_PT(-EINVAL, pt_set_geometry(self->fd, p, 0, grid, wrap));
	ASSERT_PT(-EINVAL, pt_set_geometry(self->fd, p, 0, grid, deep));
	ASSERT_PT(0, pt_set_geometry(self->fd, p, 0, grid, z64));
}

TEST_F(object, geometry_cpu_ptask_einval)
{
	static const __u32 one[3] = { 1, 1, 1 };
	__u32 p;

	ASSERT_PT(0, pt_ptask_open_cpu(self->fd, self->graph, 1, "", &p));
	ASSERT_PT(-EINVAL, pt_set_geometry(self->fd, p, 0, one, one));
}

TEST_HARNESS_MAIN
