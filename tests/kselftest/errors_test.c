// SPDX-License-Identifier: GPL-2.0
/*
 * errors_test - the argument checks every ioctl makes, one test per error
 * path, in the order the header says the kernel checks them:
 *
 *   unknown command (-ENOTTY)
 *   @size and copy  (-EINVAL too small, -E2BIG non-zero tail, -EFAULT)
 *   reserved fields and flags (-EINVAL)
 *   value ranges (-EINVAL)
 *   handles (-ENOENT no such object of that type, -EACCES graph not opened)
 *   object state (-ESHUTDOWN, ...)
 *
 * The setup builds a stopped copy graph (pt_build_copy1) plus a template,
 * so every call has valid objects to point at; each test breaks exactly
 * one thing (or two, to check which one wins).
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "pt_harness.h"

FIXTURE(errors) {
	struct pt_env env;
	int fd;
	struct pt_copy_graph g;
	__u32 tmpl;
	__u32 db;	/* a datablock the client holds */
};

FIXTURE_SETUP(errors)
{
	PT_ENV_SETUP(&self->env);
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
	ASSERT_PT(0, pt_build_copy1(self->fd, false, &self->g));
	ASSERT_PT(0, pt_template_open(self->fd, self->g.graph,
				      PTASK_TEMPLATE_OPAQUE, PTASK_BIND_GLOBAL,
				      1, 64, 1, 1, "t", &self->tmpl));
	ASSERT_PT(0, pt_db_make(self->fd, 64, 1, &self->db));
}

FIXTURE_TEARDOWN(errors)
{
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

struct call {
	const char *name;
	unsigned long cmd;
	__u32 ver0;
};

#define CALL(c, s) { #c, PTASK_IOC_##c, PTASK_##s##_SIZE_VER0 }

/* The calls any client may make. */
static const struct call calls[] = {
	CALL(GRAPH_OPEN, GRAPH_OPEN),
	CALL(TEMPLATE_OPEN, TEMPLATE_OPEN),
	CALL(PTASK_OPEN, PTASK_OPEN),
	CALL(PORT_OPEN, PORT_OPEN),
	CALL(CHANNEL_OPEN, CHANNEL_OPEN),
	CALL(LOOKUP, LOOKUP),
	CALL(DATABLOCK_CREATE, DATABLOCK_CREATE),
	CALL(DATABLOCK_RELEASE, DATABLOCK_RELEASE),
	CALL(PUSH, PUSH),
	CALL(PULL, PULL),
	CALL(GRAPH_RUN, GRAPH_CTL),
	CALL(GRAPH_TERMINATE, GRAPH_CTL),
	CALL(PTASK_SET_PRIORITY, PRIORITY),
	CALL(PTASK_SET_GEOMETRY, GEOMETRY),
};

/* The executor's calls (on a registered fd). */
static const struct call exec_calls[] = {
	CALL(EXEC_TAKE, EXEC_TAKE),
	CALL(EXEC_COMPLETE, EXEC_COMPLETE),
	CALL(EXEC_PTASK_INFO, EXEC_PTASK_INFO),
	CALL(EXEC_FORGOTTEN, EXEC_FORGOTTEN),
};

#define NCALLS(a) (sizeof(a) / sizeof((a)[0]))

_Static_assert(sizeof(struct ptask_graph_open) == PTASK_GRAPH_OPEN_SIZE_VER0, "");
_Static_assert(sizeof(struct ptask_template_open) == PTASK_TEMPLATE_OPEN_SIZE_VER0, "");
_Static_assert(sizeof(struct ptask_ptask_open) == PTASK_PTASK_OPEN_SIZE_VER0, "");
_Static_assert(sizeof(struct ptask_port_open) == PTASK_PORT_OPEN_SIZE_VER0, "");
_Static_assert(sizeof(struct ptask_channel_open) == PTASK_CHANNEL_OPEN_SIZE_VER1, "");
_Static_assert(sizeof(struct ptask_lookup) == PTASK_LOOKUP_SIZE_VER0, "");
_Static_assert(sizeof(struct ptask_datablock_create) == PTASK_DATABLOCK_CREATE_SIZE_VER1, "");
_Static_assert(sizeof(struct ptask_datablock_release) == PTASK_DATABLOCK_RELEASE_SIZE_VER0, "");
_Static_assert(sizeof(struct ptask_exec_forgotten) == PTASK_EXEC_FORGOTTEN_SIZE_VER0, "");
_Static_assert(sizeof(struct ptask_push) == PTASK_PUSH_SIZE_VER0, "");
_Static_assert(sizeof(struct ptask_pull) == PTASK_PULL_SIZE_VER0, "");
_Static_assert(sizeof(struct ptask_graph_ctl) == PTASK_GRAPH_CTL_SIZE_VER0, "");
_Static_assert(sizeof(struct ptask_priority) == PTASK_PRIORITY_SIZE_VER0, "");
_Static_assert(sizeof(struct ptask_geometry) == PTASK_GEOMETRY_SIZE_VER0, "");
_Static_assert(sizeof(struct ptask_exec_take) == PTASK_EXEC_TAKE_SIZE_VER1, "");
_Static_assert(sizeof(struct ptask_exec_complete) == PTASK_EXEC_COMPLETE_SIZE_VER1, "");
_Static_assert(sizeof(struct ptask_exec_ptask_info) == PTASK_EXEC_PTASK_INFO_SIZE_VER0, "");

static void set_size(void *buf, __u32 size)
{
	memcpy(buf, &size, sizeof(size));
}

/* --- unknown command --- */

TEST_F(errors, unknown_command_enotty)
{
	struct ptask_graph_ctl a = { .size = sizeof(a) };

	ASSERT_EQ(-1, ioctl(self->fd, _IO(PTASK_IOC_MAGIC, 0x30), &a));
	ASSERT_EQ(ENOTTY, errno);
	ASSERT_EQ(-1, ioctl(self->fd, _IOWR(PTASK_IOC_MAGIC, 0x3f,
					    struct ptask_graph_ctl), &a));
	ASSERT_EQ(ENOTTY, errno);
	ASSERT_EQ(-1, ioctl(self->fd, _IOW(PTASK_IOC_MAGIC, 0x43,
					   struct ptask_graph_ctl), &a));
	ASSERT_EQ(ENOTTY, errno);
	ASSERT_EQ(-1, ioctl(self->fd, _IOW('T', 0x01, struct ptask_graph_ctl),
			    &a));
	ASSERT_EQ(ENOTTY, errno);
}

/* The command is checked before the argument is even read. */
TEST_F(errors, unknown_command_before_copy_enotty)
{
	ASSERT_EQ(-1, ioctl(self->fd, _IOWR(PTASK_IOC_MAGIC, 0x3f,
					    struct ptask_graph_ctl), NULL));
	ASSERT_EQ(ENOTTY, errno);
}

/* --- size and copy --- */

TEST_F(errors, size_too_small_einval)
{
	static const __u32 small[] = { 0, 4, 1 };	/* 1: ver0 - 1 */
	__u64 buf[64];
	unsigned int i, j;

	for (i = 0; i < NCALLS(calls); i++) {
		for (j = 0; j < 3; j++) {
			memset(buf, 0, sizeof(buf));
			__u32 sz = j == 2 ? calls[i].ver0 - 1 : small[j];

			set_size(buf, sz);
			TH_LOG("%s size %u", calls[i].name, sz);
			ASSERT_EQ(-1, ioctl(self->fd, calls[i].cmd, buf));
			ASSERT_EQ(EINVAL, errno);
		}
	}
}

TEST_F(errors, exec_size_too_small_einval)
{
	__u64 buf[64];
	unsigned int i;
	int xfd;

	PT_NEED_ROOT();
	xfd = pt_env_open(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(0, pt_nl_register(xfd));
	for (i = 0; i < NCALLS(exec_calls); i++) {
		memset(buf, 0, sizeof(buf));
		set_size(buf, exec_calls[i].ver0 - 1);
		TH_LOG("%s", exec_calls[i].name);
		ASSERT_EQ(-1, ioctl(xfd, exec_calls[i].cmd, buf));
		ASSERT_EQ(EINVAL, errno);
	}
}

TEST_F(errors, oversized_nonzero_tail_e2big)
{
	__u64 buf[64];
	unsigned int i;

	for (i = 0; i < NCALLS(calls); i++) {
		memset(buf, 0, sizeof(buf));
		set_size(buf, calls[i].ver0 + 64);
		((__u8 *)buf)[calls[i].ver0 + 40] = 1;
		TH_LOG("%s", calls[i].name);
		ASSERT_EQ(-1, ioctl(self->fd, calls[i].cmd, buf));
		ASSERT_EQ(E2BIG, errno);
	}
}

TEST_F(errors, exec_oversized_nonzero_tail_e2big)
{
	__u64 buf[64];
	unsigned int i;
	int xfd;

	PT_NEED_ROOT();
	xfd = pt_env_open(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(0, pt_nl_register(xfd));
	for (i = 0; i < NCALLS(exec_calls); i++) {
		/* Past every version this kernel knows (EXEC_TAKE and
		 * EXEC_COMPLETE grew a VER1), with a byte set at the end. */
		memset(buf, 0, sizeof(buf));
		set_size(buf, exec_calls[i].ver0 + 64);
		((__u8 *)buf)[exec_calls[i].ver0 + 63] = 0x80;
		TH_LOG("%s", exec_calls[i].name);
		ASSERT_EQ(-1, ioctl(xfd, exec_calls[i].cmd, buf));
		ASSERT_EQ(E2BIG, errno);
	}
}

/* A newer program's bigger struct with zero tail works on this kernel. */
TEST_F(errors, oversized_zero_tail_accepted)
{
	union {
		struct ptask_graph_open go;
		struct ptask_lookup lk;
		struct ptask_datablock_create dc;
		struct ptask_push ps;
		struct ptask_datablock_release rl;
		__u8 bytes[4096];
	} u;

	memset(&u, 0, sizeof(u));
	u.go.size = sizeof(u.go) + 32;
	u.go.flags = PTASK_GRAPH_CREATE;
	u.go.mode = 0600;
	ASSERT_EQ(0, ioctl(self->fd, PTASK_IOC_GRAPH_OPEN, &u));
	ASSERT_NE(0U, u.go.handle);

	/* A whole page of zeroes after the struct is still fine. */
	memset(&u, 0, sizeof(u));
	u.go.size = sizeof(u);
	u.go.flags = PTASK_GRAPH_CREATE;
	u.go.mode = 0600;
	ASSERT_EQ(0, ioctl(self->fd, PTASK_IOC_GRAPH_OPEN, &u));
	ASSERT_NE(0U, u.go.handle);

	memset(&u, 0, sizeof(u));
	u.lk.size = sizeof(u.lk) + 8;
	u.lk.graph = self->g.graph;
	u.lk.type = PTASK_OBJ_CHANNEL;
	strcpy(u.lk.name, "in0");
	ASSERT_EQ(0, ioctl(self->fd, PTASK_IOC_LOOKUP, &u));
	ASSERT_EQ(self->g.in_chan[0], u.lk.handle);

	memset(&u, 0, sizeof(u));
	u.dc.size = sizeof(u);
	u.dc.bytes = 64;
	ASSERT_EQ(0, ioctl(self->fd, PTASK_IOC_DATABLOCK_CREATE, &u));
	ASSERT_NE(0U, u.dc.handle);
	ASSERT_EQ(64ULL, u.dc.bytes);
	ASSERT_PT(0, pt_db_release(self->fd, u.dc.handle));

	memset(&u, 0, sizeof(u));
	u.ps.size = sizeof(u.ps) + 8;
	u.ps.flags = PTASK_NONBLOCK;
	u.ps.channel = self->g.in_chan[0];
	u.ps.datablock = self->db;
	ASSERT_EQ(0, ioctl(self->fd, PTASK_IOC_PUSH, &u));
}

TEST_F(errors, arg_null_efault)
{
	unsigned int i;

	for (i = 0; i < NCALLS(calls); i++) {
		TH_LOG("%s", calls[i].name);
		ASSERT_EQ(-1, ioctl(self->fd, calls[i].cmd, NULL));
		ASSERT_EQ(EFAULT, errno);
	}
}

TEST_F(errors, arg_unmapped_efault)
{
	unsigned int i;
	void *bad;

	bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, bad);
	for (i = 0; i < NCALLS(calls); i++) {
		TH_LOG("%s", calls[i].name);
		ASSERT_EQ(-1, ioctl(self->fd, calls[i].cmd, bad));
		ASSERT_EQ(EFAULT, errno);
	}
	munmap(bad, 4096);
}

/* @size is readable, the struct it announces runs into an unmapped page. */
TEST_F(errors, struct_crosses_unmapped_page_efault)
{
	size_t pg = (size_t)getpagesize();
	unsigned int i;
	__u8 *m;

	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_EQ(0, mprotect(m + pg, pg, PROT_NONE));
	for (i = 0; i < NCALLS(calls); i++) {
		__u8 *a = m + pg - 8;

		memset(a, 0, 8);
		set_size(a, calls[i].ver0);
		TH_LOG("%s", calls[i].name);
		ASSERT_EQ(-1, ioctl(self->fd, calls[i].cmd, a));
		ASSERT_EQ(EFAULT, errno);
	}
	munmap(m, 2 * pg);
}

TEST_F(errors, ptask_open_code_efault)
{
	void *bad;

	bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, bad);
	ASSERT_PT(-EFAULT, pt_ptask_open(self->fd, self->g.graph,
					 PTASK_KIND_GPU, 1, bad, 64, "k", "",
					 NULL));
	ASSERT_PT(-EFAULT, pt_ptask_open(self->fd, self->g.graph,
					 PTASK_KIND_GPU, 1, (void *)8, 64, "k",
					 "", NULL));
	munmap(bad, 4096);
}

/* --- reserved fields --- */

TEST_F(errors, reserved_nonzero_einval)
{
	struct ptask_template_open t = {
		.size = sizeof(t), .graph = self->g.graph,
		.kind = PTASK_TEMPLATE_OPAQUE, .stride = 1,
		.dims = { 8, 1, 1 }, .reserved = 1,
	};
	struct ptask_ptask_open p = {
		.size = sizeof(p), .graph = self->g.graph,
		.kind = PTASK_KIND_CPU, .nports = 1, .reserved = 1,
	};
	struct ptask_port_open po = {
		.size = sizeof(po), .ptask = self->g.ptask,
		.kind = PTASK_PORT_INPUT, .reserved = 1,
	};
	struct ptask_lookup l = {
		.size = sizeof(l), .graph = self->g.graph,
		.type = PTASK_OBJ_CHANNEL, .name = "in0", .reserved = 1,
	};
	struct ptask_datablock_release r = {
		.size = sizeof(r), .handle = self->db, .reserved = 1,
	};
	struct ptask_graph_ctl c = {
		.size = sizeof(c), .graph = self->g.graph, .reserved = 1,
	};
	struct ptask_priority pr = {
		.size = sizeof(pr), .flags = PTASK_PRIO_SET_STATIC,
		.ptask = self->g.ptask, .static_prio = 10, .reserved = 1,
	};

	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_TEMPLATE_OPEN, &t));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_PTASK_OPEN, &p));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_PORT_OPEN, &po));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_LOOKUP, &l));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_DATABLOCK_RELEASE, &r));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_GRAPH_RUN, &c));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_GRAPH_TERMINATE, &c));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_PTASK_SET_PRIORITY, &pr));
	ASSERT_EQ(EINVAL, errno);
	/* Nothing happened: the graph still runs once, the db is held. */
	ASSERT_PT(0, pt_graph_run(self->fd, self->g.graph));
	ASSERT_PT(0, pt_db_release(self->fd, self->db));
}

/* Reserved fields are checked before handles. */
TEST_F(errors, reserved_before_handle_einval)
{
	struct ptask_graph_ctl c = {
		.size = sizeof(c), .graph = 0x7ffffff0, .reserved = 1,
	};
	struct ptask_datablock_release r = {
		.size = sizeof(r), .handle = 0x7ffffff0, .reserved = 1,
	};

	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_GRAPH_RUN, &c));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_DATABLOCK_RELEASE, &r));
	ASSERT_EQ(EINVAL, errno);
}

/* --- flags --- */

TEST_F(errors, unknown_flags_einval)
{
	static const __u32 one[3] = { 1, 1, 1 };
	struct ptask_graph_ctl c = {
		.size = sizeof(c), .flags = 1, .graph = self->g.graph,
	};
	struct ptask_geometry ge = {
		.size = sizeof(ge), .flags = 1, .ptask = self->g.ptask,
	};
	struct ptask_template_open t = {
		.size = sizeof(t), .flags = 1, .graph = self->g.graph,
		.kind = PTASK_TEMPLATE_OPAQUE, .stride = 1, .dims = { 8, 1, 1 },
	};
	struct ptask_ptask_open p = {
		.size = sizeof(p), .flags = 1U << 1, .graph = self->g.graph,
		.kind = PTASK_KIND_CPU, .nports = 1,
	};
	struct ptask_channel_open ch = {
		/* bits 0 and 1 are the tunnel flags */
		.size = sizeof(ch), .flags = 1U << 7, .graph = self->g.graph,
		.src = self->g.out_port[0], .capacity = 1,
	};
	struct ptask_lookup l = {
		.size = sizeof(l), .flags = 1, .graph = self->g.graph,
		.type = PTASK_OBJ_CHANNEL, .name = "in0",
	};
	struct ptask_datablock_create dc = {
		.size = sizeof(dc), .flags = 1, .bytes = 64,
	};
	struct ptask_datablock_release r = {
		.size = sizeof(r), .flags = 1, .handle = self->db,
	};

	memcpy(ge.grid, one, sizeof(one));
	memcpy(ge.block, one, sizeof(one));
	ASSERT_PT(-EINVAL, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE |
					 (1U << 7), 0600, NULL));
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_TEMPLATE_OPEN, &t));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_PTASK_OPEN, &p));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_PT(-EINVAL, pt_port_open(self->fd, self->g.ptask,
					PTASK_PORT_INPUT, 1U << 5, 0, 0, 0, "",
					NULL, NULL));
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_CHANNEL_OPEN, &ch));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_LOOKUP, &l));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_DATABLOCK_CREATE, &dc));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_DATABLOCK_RELEASE, &r));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_PT(-EINVAL, pt_push(self->fd, self->g.in_chan[0], self->db,
				   PTASK_NONBLOCK | (1U << 2), 0, 0));
	ASSERT_PT(-EINVAL, pt_pull(self->fd, self->g.out_chan[0],
				   PTASK_NONBLOCK | (1U << 2), 0, NULL));
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_GRAPH_RUN, &c));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_GRAPH_TERMINATE, &c));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_PT(-EINVAL, pt_set_priority(self->fd, self->g.ptask,
					   PTASK_PRIO_SET_STATIC | (1U << 2),
					   10, 0));
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_PTASK_SET_GEOMETRY, &ge));
	ASSERT_EQ(EINVAL, errno);
	/* The graph was neither run nor terminated. */
	ASSERT_PT(0, pt_graph_run(self->fd, self->g.graph));
}

TEST_F(errors, exec_unknown_flags_einval)
{
	struct ptask_invocation inv;
	struct ptask_invocation_port ports[4];
	/* bits 0 and 1 are AHEAD and SETTLE: the first flag no call knows */
	struct ptask_exec_complete ec = {
		.size = sizeof(ec), .flags = 1U << 2, .id = 1,
	};
	struct ptask_exec_ptask_info in = {
		.size = sizeof(in), .flags = 1, .ptask = self->g.ptask,
	};
	int xfd;

	PT_NEED_ROOT();
	xfd = pt_env_open(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(0, pt_nl_register(xfd));
	/* bits 1 to 4 of a take are SELF, AHEAD, FUSE and OUTPUTS */
	ASSERT_PT(-EINVAL, pt_exec_take(xfd, PTASK_NONBLOCK | (1U << 5), 0,
					&inv, 1, ports, 4, NULL, NULL));
	ASSERT_EQ(-1, ioctl(xfd, PTASK_IOC_EXEC_COMPLETE, &ec));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(-1, ioctl(xfd, PTASK_IOC_EXEC_PTASK_INFO, &in));
	ASSERT_EQ(EINVAL, errno);
	in.flags = 0;
	in.reserved = 1;
	ASSERT_EQ(-1, ioctl(xfd, PTASK_IOC_EXEC_PTASK_INFO, &in));
	ASSERT_EQ(EINVAL, errno);
}

/* Flags before handles; a bigger size's non-zero tail before flags. */
TEST_F(errors, check_order_size_flags_handles)
{
	struct ptask_template_open t = {
		.size = sizeof(t), .flags = 1, .graph = 0x7ffffff0,
		.kind = PTASK_TEMPLATE_OPAQUE, .stride = 1, .dims = { 8, 1, 1 },
	};
	__u64 buf[16];
	struct ptask_push *ps = (struct ptask_push *)buf;

	ASSERT_PT(-EINVAL, pt_push(self->fd, 0x7ffffff0, 0x7ffffff1, 1U << 9,
				   0, 0));
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_TEMPLATE_OPEN, &t));
	ASSERT_EQ(EINVAL, errno);
	memset(buf, 0, sizeof(buf));
	ps->size = sizeof(*ps) + 8;
	ps->flags = 1U << 9;
	ps->channel = 0x7ffffff0;
	((__u8 *)buf)[sizeof(*ps) + 1] = 1;
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_PUSH, buf));
	ASSERT_EQ(E2BIG, errno);
}

/* --- value ranges before handles --- */

TEST_F(errors, range_before_handle_einval)
{
	ASSERT_PT(-EINVAL, pt_channel_open(self->fd, 0x7ffffff0, 0,
					   0x7ffffff1, 0, 0, "", NULL));
	ASSERT_PT(-EINVAL, pt_template_open(self->fd, 0x7ffffff0,
					    PTASK_TEMPLATE_ARRAY,
					    PTASK_BIND_GLOBAL, 0, 8, 1, 1, "",
					    NULL));
	ASSERT_PT(-EINVAL, pt_ptask_open_cpu(self->fd, 0x7ffffff0, 0, "",
					     NULL));
	ASSERT_PT(-EINVAL, pt_set_priority(self->fd, 0x7ffffff0,
					   PTASK_PRIO_SET_STATIC, 200, 0));
}

/* --- handles --- */

TEST_F(errors, bad_handle_enoent)
{
	static const __u32 one[3] = { 1, 1, 1 };
	const __u32 bad = 0x7ffffff0;
	__u32 h;

	ASSERT_PT(-ENOENT, pt_template_open(self->fd, bad,
					    PTASK_TEMPLATE_OPAQUE,
					    PTASK_BIND_GLOBAL, 1, 8, 1, 1, "",
					    NULL));
	ASSERT_PT(-ENOENT, pt_ptask_open_cpu(self->fd, bad, 1, "", NULL));
	ASSERT_PT(-ENOENT, pt_port_open(self->fd, bad, PTASK_PORT_INPUT, 0, 0,
					0, 0, "", NULL, NULL));
	ASSERT_PT(-ENOENT, pt_channel_open(self->fd, bad, self->g.out_port[0],
					   0, 1, 0, "", NULL));
	ASSERT_PT(-ENOENT, pt_channel_open(self->fd, self->g.graph, bad, 0, 1,
					   0, "", NULL));
	ASSERT_PT(-ENOENT, pt_channel_open(self->fd, self->g.graph,
					   self->g.out_port[0], 0, 1, bad, "",
					   NULL));
	ASSERT_PT(-ENOENT, pt_lookup(self->fd, bad, PTASK_OBJ_CHANNEL, "in0",
				     NULL));
	ASSERT_PT(-ENOENT, pt_db_create(self->fd, 0, bad, 0, NULL, NULL, NULL));
	ASSERT_PT(-ENOENT, pt_db_release(self->fd, bad));
	ASSERT_PT(-ENOENT, pt_push(self->fd, bad, self->db, PTASK_NONBLOCK, 0,
				   0));
	ASSERT_PT(-ENOENT, pt_push(self->fd, self->g.in_chan[0], bad,
				   PTASK_NONBLOCK, 0, 0));
	ASSERT_PT(-ENOENT, pt_pull(self->fd, bad, PTASK_NONBLOCK, 0, NULL));
	ASSERT_PT(-ENOENT, pt_graph_run(self->fd, bad));
	ASSERT_PT(-ENOENT, pt_graph_terminate(self->fd, bad));
	ASSERT_PT(-ENOENT, pt_set_priority(self->fd, bad,
					   PTASK_PRIO_SET_STATIC, 10, 0));
	ASSERT_PT(-ENOENT, pt_set_geometry(self->fd, bad, 0, one, one));
	/* Handle 0 is never an object. */
	ASSERT_PT(-ENOENT, pt_graph_run(self->fd, 0));
	ASSERT_PT(-ENOENT, pt_lookup(self->fd, self->g.graph, PTASK_OBJ_CHANNEL,
				     "nope", &h));
}

TEST_F(errors, wrong_type_handle_enoent)
{
	static const __u32 one[3] = { 1, 1, 1 };
	struct pt_copy_graph *g = &self->g;

	ASSERT_PT(-ENOENT, pt_template_open(self->fd, g->ptask,
					    PTASK_TEMPLATE_OPAQUE,
					    PTASK_BIND_GLOBAL, 1, 8, 1, 1, "",
					    NULL));
	ASSERT_PT(-ENOENT, pt_ptask_open_cpu(self->fd, self->tmpl, 1, "",
					     NULL));
	ASSERT_PT(-ENOENT, pt_port_open(self->fd, g->graph, PTASK_PORT_INPUT,
					0, 0, 0, 0, "", NULL, NULL));
	ASSERT_PT(-ENOENT, pt_port_open(self->fd, g->in_port[0],
					PTASK_PORT_INPUT, 0, 0, 0, 0, "", NULL,
					NULL));
	ASSERT_PT(-ENOENT, pt_channel_open(self->fd, g->graph, g->out_chan[0],
					   0, 1, 0, "", NULL));
	ASSERT_PT(-ENOENT, pt_channel_open(self->fd, g->graph, g->out_port[0],
					   0, 1, g->ptask, "", NULL));
	ASSERT_PT(-ENOENT, pt_lookup(self->fd, g->ptask, PTASK_OBJ_CHANNEL,
				     "in0", NULL));
	ASSERT_PT(-ENOENT, pt_db_create(self->fd, 0, g->ptask, 0, NULL, NULL,
					NULL));
	ASSERT_PT(-ENOENT, pt_db_release(self->fd, g->in_chan[0]));
	ASSERT_PT(-ENOENT, pt_push(self->fd, g->in_port[0], self->db,
				   PTASK_NONBLOCK, 0, 0));
	ASSERT_PT(-ENOENT, pt_push(self->fd, g->in_chan[0], self->tmpl,
				   PTASK_NONBLOCK, 0, 0));
	ASSERT_PT(-ENOENT, pt_pull(self->fd, g->ptask, PTASK_NONBLOCK, 0,
				   NULL));
	ASSERT_PT(-ENOENT, pt_graph_run(self->fd, g->in_chan[0]));
	ASSERT_PT(-ENOENT, pt_graph_terminate(self->fd, g->ptask));
	ASSERT_PT(-ENOENT, pt_set_priority(self->fd, g->in_port[0],
					   PTASK_PRIO_SET_STATIC, 10, 0));
	ASSERT_PT(-ENOENT, pt_set_geometry(self->fd, self->tmpl, 0, one, one));
	/* A datablock is no graph. */
	ASSERT_PT(-ENOENT, pt_graph_run(self->fd, self->db));
}

/* A client that has not opened the graph may not touch its objects. */
TEST_F(errors, graph_not_opened_eacces)
{
	static const __u32 one[3] = { 1, 1, 1 };
	struct pt_copy_graph *g = &self->g;
	__u32 mine;
	int fd2;

	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	ASSERT_PT(0, pt_db_make(fd2, 64, 5, &mine));
	ASSERT_PT(-EACCES, pt_push(fd2, g->in_chan[0], mine, PTASK_NONBLOCK, 0,
				   0));
	ASSERT_PT(-EACCES, pt_pull(fd2, g->out_chan[0], PTASK_NONBLOCK, 0,
				   NULL));
	ASSERT_PT(-EACCES, pt_template_open(fd2, g->graph,
					    PTASK_TEMPLATE_OPAQUE,
					    PTASK_BIND_GLOBAL, 1, 8, 1, 1, "",
					    NULL));
	ASSERT_PT(-EACCES, pt_ptask_open_cpu(fd2, g->graph, 1, "", NULL));
	ASSERT_PT(-EACCES, pt_channel_open(fd2, g->graph, g->out_port[0], 0, 1,
					   0, "", NULL));
	ASSERT_PT(-EACCES, pt_lookup(fd2, g->graph, PTASK_OBJ_CHANNEL, "in0",
				     NULL));
	ASSERT_PT(-EACCES, pt_db_create(fd2, 0, self->tmpl, 0, NULL, NULL,
					NULL));
	ASSERT_PT(-EACCES, pt_graph_run(fd2, g->graph));
	ASSERT_PT(-EACCES, pt_graph_terminate(fd2, g->graph));
	ASSERT_PT(-EACCES, pt_set_priority(fd2, g->ptask,
					   PTASK_PRIO_SET_STATIC, 10, 0));
	ASSERT_PT(-EACCES, pt_set_geometry(fd2, g->ptask, 0, one, one));
	/* Nothing happened: the owner can still run it. */
	ASSERT_PT(0, pt_graph_run(self->fd, g->graph));
	ASSERT_PT(0, pt_db_release(fd2, mine));
}

/* Access before state: a terminated graph still answers -EACCES. */
TEST_F(errors, access_before_state_eacces)
{
	int fd2;

	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	ASSERT_PT(0, pt_graph_terminate(self->fd, self->g.graph));
	ASSERT_PT(-EACCES, pt_graph_run(fd2, self->g.graph));
	ASSERT_PT(-ESHUTDOWN, pt_graph_run(self->fd, self->g.graph));
}

/*
 * "Output members are written back only on success."  Assumption: what an
 * output member holds on input is ignored.
 */
TEST_F(errors, outputs_untouched_on_failure)
{
	char name[PTASK_NAME_MAX];
	struct ptask_graph_open go = {
		.size = sizeof(go),
		.flags = PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL,
		.mode = 0600, .handle = 0xa5a5a5a5,
	};
	struct ptask_pull pl = {
		.size = sizeof(pl), .flags = PTASK_NONBLOCK,
		.channel = self->g.out_chan[0], .datablock = 0xa5a5a5a5,
		.mmap_offset = 0xa5a5a5a5ULL, .bytes = 7, .records = 9,
	};

	pt_name(name, "untouched");
	ASSERT_PT(0, pt_graph_open(self->fd, name, PTASK_GRAPH_CREATE, 0600,
				   NULL));
	strcpy(go.name, name);
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_GRAPH_OPEN, &go));
	ASSERT_EQ(EEXIST, errno);
	ASSERT_EQ(0xa5a5a5a5U, go.handle);
	ASSERT_PT(0, pt_graph_run(self->fd, self->g.graph));
	ASSERT_EQ(-1, ioctl(self->fd, PTASK_IOC_PULL, &pl));
	ASSERT_EQ(EAGAIN, errno);
	ASSERT_EQ(0xa5a5a5a5U, pl.datablock);
	ASSERT_EQ(0xa5a5a5a5ULL, pl.mmap_offset);
	ASSERT_EQ(7ULL, pl.bytes);
	ASSERT_EQ(9ULL, pl.records);
}

/* --- executor calls on a client that is not an executor --- */

TEST_F(errors, exec_take_not_executor_eperm)
{
	struct ptask_invocation inv;
	struct ptask_invocation_port ports[4];

	ASSERT_PT(-EPERM, pt_exec_take(self->fd, PTASK_NONBLOCK, 0, &inv, 1,
				       ports, 4, NULL, NULL));
}

TEST_F(errors, exec_complete_not_executor_eperm)
{
	ASSERT_PT(-EPERM, pt_exec_complete(self->fd, 1, 0, 0, NULL, 0));
}

TEST_F(errors, exec_ptask_info_not_executor_eperm)
{
	__u32 len = 0;

	ASSERT_PT(-EPERM, pt_exec_ptask_info(self->fd, self->g.ptask, NULL,
					     &len, NULL));
}

/*
 * A record count past a datablock's bytes: an untemplated channel took
 * 2^64 - 1 records on a 1-byte datablock (issue 13, the outside attack).
 */
TEST_F(errors, records_over_bytes_einval)
{
	__u32 one;

	ASSERT_PT(0, pt_db_make(self->fd, 1, 1, &one));
	ASSERT_PT(-EINVAL, pt_push(self->fd, self->g.in_chan[0], one,
				   PTASK_PUSH_SET_RECORDS, UINT64_MAX, 0));
	ASSERT_PT(-EINVAL, pt_push(self->fd, self->g.in_chan[0], self->db,
				   PTASK_PUSH_SET_RECORDS, 65, 0));
	ASSERT_PT(0, pt_push(self->fd, self->g.in_chan[0], self->db,
			     PTASK_PUSH_SET_RECORDS, 64, 0));
	ASSERT_PT(0, pt_db_release(self->fd, one));
}

TEST_HARNESS_MAIN
