// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * args_core_test.c - the argument table and the checks made before any
 * lookup: every -EINVAL rule of ptask_core_args_check() (one assertion each,
 * starting from a valid struct and breaking one field), -ENOTTY, the
 * command matching of ptask_core_args_desc(); then allocation-failure injection
 * over a whole build-and-run sequence.
 */
#include <stdlib.h>
#include <string.h>
#include "tests/unit/harness.h"

/*
 * RULE(base, cmd, stmt, want): copy @base into a zeroed union, let @stmt
 * change it through `a` (a pointer of @base's type), check the result of
 * ptask_core_args_check() is @want.
 */
#define RULE(base, cmd, stmt, want) do {				\
	union ptask_args u_;						\
	__typeof__(base) *a = (void *)&u_;				\
									\
	memset(&u_, 0, sizeof(u_));					\
	memcpy(&u_, &(base), sizeof(base));				\
	stmt;								\
	(void)a;							\
	h_check_err(ptask_core_args_check(cmd, &u_), (want), __FILE__,	\
		    __LINE__, #stmt);					\
} while (0)
#define BAD(base, cmd, stmt)	RULE(base, cmd, stmt, -EINVAL)
#define GOOD(base, cmd, stmt)	RULE(base, cmd, stmt, 0)

static void fill_name(char *name, char ch, size_t n)
{
	memset(name, 0, PTASK_NAME_MAX);
	memset(name, ch, n);
}

static void test_desc_and_enotty(void)
{
	static const unsigned int cmds[] = {
		PTASK_IOC_GRAPH_OPEN, PTASK_IOC_TEMPLATE_OPEN,
		PTASK_IOC_PTASK_OPEN, PTASK_IOC_PORT_OPEN,
		PTASK_IOC_CHANNEL_OPEN, PTASK_IOC_LOOKUP,
		PTASK_IOC_DATABLOCK_CREATE, PTASK_IOC_DATABLOCK_RELEASE,
		PTASK_IOC_PUSH, PTASK_IOC_PULL, PTASK_IOC_GRAPH_RUN,
		PTASK_IOC_GRAPH_TERMINATE, PTASK_IOC_GRAPH_CLOSE,
		PTASK_IOC_PTASK_SET_PRIORITY, PTASK_IOC_PTASK_SET_GEOMETRY,
		PTASK_IOC_EXEC_TAKE, PTASK_IOC_EXEC_COMPLETE,
		PTASK_IOC_EXEC_PTASK_INFO, PTASK_IOC_EXEC_FORGOTTEN,
	};
	const unsigned int sizebits = _IOC_SIZEMASK << _IOC_SIZESHIFT;
	struct ptask_client *c = h_client();
	union ptask_args u;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		const struct ptask_arg_desc *d = ptask_core_args_desc(cmds[i]);

		if (!CHECK(d != NULL))
			continue;
		CHECK_EQ(d->cmd, cmds[i]);
		CHECK_EQ(d->ksize, _IOC_SIZE(cmds[i]));
		CHECK(d->ver0 <= d->ksize);
		CHECK(d->ver0 >= 16);
		CHECK_EQ(d->copy_out, (_IOC_DIR(cmds[i]) & _IOC_READ) != 0);
		/* Size bits ignored: older and newer struct sizes match. */
		CHECK(ptask_core_args_desc((cmds[i] & ~sizebits) |
					   (8u << _IOC_SIZESHIFT)) == d);
		CHECK(ptask_core_args_desc(cmds[i] & ~sizebits) == d);
		CHECK(ptask_core_args_desc(cmds[i] | sizebits) == d);
		/* Direction, type and number still count. */
		CHECK(!ptask_core_args_desc(cmds[i] ^ (1u << _IOC_DIRSHIFT)) ||
		      ptask_core_args_desc(cmds[i] ^ (1u << _IOC_DIRSHIFT)) != d);
		CHECK(!ptask_core_args_desc(cmds[i] ^ (1u << _IOC_TYPESHIFT)));
	}
	/* The published VER0 sizes. */
	CHECK_EQ(ptask_core_args_desc(PTASK_IOC_GRAPH_OPEN)->ver0,
		 PTASK_GRAPH_OPEN_SIZE_VER0);
	CHECK_EQ(ptask_core_args_desc(PTASK_IOC_EXEC_PTASK_INFO)->ver0,
		 PTASK_EXEC_PTASK_INFO_SIZE_VER0);
	CHECK_EQ(sizeof(union ptask_args), sizeof(struct ptask_ptask_open));
	/* Unknown commands. */
	CHECK(!ptask_core_args_desc(0));
	CHECK(!ptask_core_args_desc(_IOWR(PTASK_IOC_MAGIC, 0x10, u32)));
	CHECK(!ptask_core_args_desc(_IOWR(PTASK_IOC_MAGIC, 0x44, u32)));
	CHECK(!ptask_core_args_desc(_IOWR('x', 0x01, struct ptask_graph_open)));
	CHECK(!ptask_core_args_desc(_IO(PTASK_IOC_MAGIC, 0x01)));
	memset(&u, 0, sizeof(u));
	CHECK_ERR(ptask_core_args_check(0, &u), -ENOTTY);
	CHECK_ERR(ptask_core_args_check(_IOWR(PTASK_IOC_MAGIC, 0x10, u32), &u),
		  -ENOTTY);
	CHECK_ERR(ptask_core_call(c, &h_user, _IOWR(PTASK_IOC_MAGIC, 0x10, u32),
				  &u, NULL), -ENOTTY);
	CHECK_ERR(h_call(c, NULL, 0xdeadbeef, &u, NULL), -ENOTTY);
	/* h_call with other size bits reaches the same call. */
	{
		struct ptask_graph_open go = { .flags = PTASK_GRAPH_CREATE,
					       .mode = 0600 };

		strcpy(go.name, "sizebits");
		CHECK_OK(h_call(c, NULL, (PTASK_IOC_GRAPH_OPEN & ~sizebits) |
				(80u << _IOC_SIZESHIFT), &go, NULL));
		CHECK(go.handle != 0);
	}
}

static void test_graph_open_rules(void)
{
	struct ptask_graph_open v = { .flags = PTASK_GRAPH_CREATE,
				      .mode = 0777, .name = "ok-name_1.2/x" };
	const unsigned int C = PTASK_IOC_GRAPH_OPEN;

	GOOD(v, C, (void)0);
	GOOD(v, C, a->flags = PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL);
	GOOD(v, C, a->flags = 0);
	GOOD(v, C, a->name[0] = 0);		/* anonymous, with CREATE */
	GOOD(v, C, fill_name(a->name, 'a', PTASK_NAME_MAX - 1));
	BAD(v, C, a->flags |= 1u << 2);
	BAD(v, C, a->flags |= 1u << 31);
	BAD(v, C, a->flags = PTASK_GRAPH_EXCL);
	BAD(v, C, a->mode = 01000);
	BAD(v, C, a->mode = 0xffffffffu);
	BAD(v, C, fill_name(a->name, 'a', PTASK_NAME_MAX));
	BAD(v, C, a->name[2] = ' ');
	BAD(v, C, a->name[0] = ':');
	BAD(v, C, a->name[1] = '\xff');
	BAD(v, C, a->name[3] = '\n');
	BAD(v, C, (a->name[0] = 0, a->flags = 0));
}

static void test_template_open_rules(void)
{
	struct ptask_template_open v = {
		.kind = PTASK_TEMPLATE_RECORDS, .binding = PTASK_BIND_PARAM,
		.stride = 4, .dims = { 2, 3, 4 }, .name = "",
	};
	const unsigned int C = PTASK_IOC_TEMPLATE_OPEN;
	const u32 max = (u32)PTASK_DATABLOCK_MAX_BYTES;

	GOOD(v, C, (void)0);
	GOOD(v, C, strcpy(a->name, "t"));
	GOOD(v, C, (a->stride = max, a->dims[0] = 1, a->dims[1] = 1,
		    a->dims[2] = 1));
	GOOD(v, C, (a->stride = 1, a->dims[0] = 1, a->dims[1] = 1,
		    a->dims[2] = max));
	BAD(v, C, a->flags = 1);
	BAD(v, C, a->reserved = 1);
	BAD(v, C, a->reserved = 1ULL << 63);
	BAD(v, C, a->kind = __PTASK_TEMPLATE_KIND_MAX);
	BAD(v, C, a->binding = __PTASK_BIND_MAX);
	BAD(v, C, a->stride = 0);
	BAD(v, C, a->dims[0] = 0);
	BAD(v, C, a->dims[1] = 0);
	BAD(v, C, a->dims[2] = 0);
	BAD(v, C, (a->stride = max, a->dims[0] = 2));
	BAD(v, C, (a->stride = 0xffffffffu, a->dims[0] = 0xffffffffu));
	BAD(v, C, (a->stride = 1, a->dims[0] = 1, a->dims[1] = max + 1));
	BAD(v, C, (a->stride = 65536, a->dims[0] = 65536,
		   a->dims[1] = 65536));
	BAD(v, C, (a->stride = 1, a->dims[0] = 2, a->dims[1] = 1,
		   a->dims[2] = max / 2 + 1));
	BAD(v, C, (a->stride = 1 << 16, a->dims[0] = 1 << 8, a->dims[1] = 1,
		   a->dims[2] = 1 << 16));
	BAD(v, C, fill_name(a->name, 'n', PTASK_NAME_MAX));
	BAD(v, C, strcpy(a->name, "a b"));
}

static void test_ptask_open_rules(void)
{
	struct ptask_ptask_open cpu = { .kind = PTASK_KIND_CPU, .nports = 2 };
	struct ptask_ptask_open gpu = {
		.kind = PTASK_KIND_GPU, .nports = PTASK_MAX_PORTS,
		.code = 0x1000, .code_len = 10, .entry = "main",
	};
	const unsigned int C = PTASK_IOC_PTASK_OPEN;

	GOOD(cpu, C, (void)0);
	GOOD(cpu, C, strcpy(a->name, "p.1"));
	GOOD(gpu, C, (void)0);
	GOOD(gpu, C, a->code_len = PTASK_CODE_MAX_BYTES);
	GOOD(cpu, C, a->flags = PTASK_PTASK_SELF);
	BAD(gpu, C, a->flags = PTASK_PTASK_SELF);
	BAD(cpu, C, a->flags = 1u << 1);
	BAD(cpu, C, a->reserved = 1);
	BAD(cpu, C, a->kind = __PTASK_KIND_MAX);
	BAD(cpu, C, a->nports = 0);
	BAD(cpu, C, a->nports = PTASK_MAX_PORTS + 1);
	BAD(cpu, C, fill_name(a->name, 'x', PTASK_NAME_MAX));
	BAD(cpu, C, strcpy(a->name, "bad*name"));
	BAD(cpu, C, a->code = 0x1000);
	BAD(cpu, C, a->code_len = 1);
	BAD(cpu, C, strcpy(a->entry, "main"));
	BAD(gpu, C, a->code_len = 0);
	BAD(gpu, C, a->code_len = PTASK_CODE_MAX_BYTES + 1);
	BAD(gpu, C, a->entry[0] = 0);
	BAD(gpu, C, strcpy(a->entry, "ma in"));
	BAD(gpu, C, fill_name(a->entry, 'e', PTASK_NAME_MAX));
}

static void test_port_open_rules(void)
{
	struct ptask_port_open v = { .kind = PTASK_PORT_OUTPUT,
				     .param_index = 255 };
	struct ptask_port_open io = { .kind = PTASK_PORT_INPUT,
				      .flags = PTASK_PORT_INOUT |
					       PTASK_PORT_RUNTIME,
				      .inout_peer = 5 };
	const unsigned int C = PTASK_IOC_PORT_OPEN;

	GOOD(v, C, (void)0);
	GOOD(v, C, a->kind = PTASK_PORT_STICKY);
	GOOD(v, C, a->flags = PTASK_PORT_RUNTIME);
	GOOD(io, C, (void)0);
	BAD(v, C, a->flags = 1u << 2);
	BAD(v, C, a->reserved = 1);
	BAD(v, C, a->kind = __PTASK_PORT_KIND_MAX);
	BAD(v, C, a->param_index = 256);
	BAD(v, C, fill_name(a->name, 'p', PTASK_NAME_MAX));
	BAD(v, C, strcpy(a->name, "p%"));
	BAD(io, C, a->kind = PTASK_PORT_OUTPUT);
	BAD(io, C, a->kind = PTASK_PORT_STICKY);
	BAD(io, C, a->inout_peer = 0);
	BAD(io, C, a->flags = PTASK_PORT_RUNTIME);	/* peer without INOUT */
}

static void test_channel_open_rules(void)
{
	struct ptask_channel_open v = { .src = 3, .dst = 0, .capacity = 1 };
	const unsigned int C = PTASK_IOC_CHANNEL_OPEN;

	GOOD(v, C, (void)0);
	GOOD(v, C, (a->src = 0, a->dst = 4));
	GOOD(v, C, a->capacity = PTASK_CHANNEL_MAX_CAPACITY);
	BAD(v, C, a->flags = 1u << 2);
	/* Tunnels: settings only with the flag, within their limits. */
	GOOD(v, C, (a->flags = PTASK_CHANNEL_TUNNEL, a->tunnel_bytes = 4096,
		    a->tunnel_records = 3, a->tunnel_timeout_ns = 1000));
	GOOD(v, C, (a->flags = PTASK_CHANNEL_TUNNEL,
		    a->tunnel_bytes = PTASK_DATABLOCK_MAX_BYTES,
		    a->tunnel_timeout_ns = PTASK_TUNNEL_MAX_TIMEOUT_NS));
	BAD(v, C, a->tunnel_bytes = 4096);
	BAD(v, C, a->tunnel_records = 1);
	BAD(v, C, a->tunnel_timeout_ns = 1);
	BAD(v, C, (a->flags = PTASK_CHANNEL_TUNNEL,
		   a->tunnel_bytes = PTASK_DATABLOCK_MAX_BYTES + 1));
	BAD(v, C, (a->flags = PTASK_CHANNEL_TUNNEL,
		   a->tunnel_timeout_ns = PTASK_TUNNEL_MAX_TIMEOUT_NS + 1));
	BAD(v, C, (a->flags = PTASK_CHANNEL_TUNNEL, a->reserved = 1));
	/* TUNNEL_SET: the handle and the settings, nothing else. */
	BAD(v, C, (a->flags = PTASK_CHANNEL_TUNNEL_SET, a->handle = 9));
	GOOD(v, C, (a->flags = PTASK_CHANNEL_TUNNEL_SET, a->handle = 9,
		    a->src = 0, a->capacity = 0, a->tunnel_bytes = 1));
	BAD(v, C, (a->flags = PTASK_CHANNEL_TUNNEL_SET, a->src = 0,
		   a->capacity = 0));
	BAD(v, C, (a->flags = PTASK_CHANNEL_FLAGS_ALL, a->handle = 9,
		   a->src = 0, a->capacity = 0));
	BAD(v, C, a->capacity = 0);
	BAD(v, C, a->capacity = PTASK_CHANNEL_MAX_CAPACITY + 1);
	BAD(v, C, a->src = 0);
	BAD(v, C, fill_name(a->name, 'c', PTASK_NAME_MAX));
	BAD(v, C, strcpy(a->name, "c\x01"));
}

static void test_lookup_rules(void)
{
	struct ptask_lookup v = { .type = PTASK_OBJ_CHANNEL, .name = "n" };
	const unsigned int C = PTASK_IOC_LOOKUP;

	GOOD(v, C, (void)0);
	GOOD(v, C, a->type = PTASK_OBJ_TEMPLATE);
	GOOD(v, C, a->type = PTASK_OBJ_PTASK);
	GOOD(v, C, a->type = PTASK_OBJ_PORT);
	BAD(v, C, a->flags = 1);
	BAD(v, C, a->reserved = 1);
	BAD(v, C, a->type = PTASK_OBJ_NONE);
	BAD(v, C, a->type = PTASK_OBJ_GRAPH);
	BAD(v, C, a->type = PTASK_OBJ_DATABLOCK);
	BAD(v, C, a->type = __PTASK_OBJ_MAX);
	BAD(v, C, a->name[0] = 0);
	BAD(v, C, fill_name(a->name, 'l', PTASK_NAME_MAX));
	BAD(v, C, strcpy(a->name, "a,b"));
}

static void test_datablock_rules(void)
{
	struct ptask_datablock_create v = { .bytes = 1 };
	struct ptask_datablock_release r = { .handle = 9 };
	const unsigned int C = PTASK_IOC_DATABLOCK_CREATE;
	const unsigned int R = PTASK_IOC_DATABLOCK_RELEASE;

	GOOD(v, C, (void)0);
	GOOD(v, C, a->bytes = PTASK_DATABLOCK_MAX_BYTES);
	GOOD(v, C, (a->template = 4, a->bytes = 0, a->records = 7));
	GOOD(v, C, a->records = ~0ULL);		/* informative */
	BAD(v, C, a->flags = 1);		/* OUTPUT without an id */
	BAD(v, C, a->flags = 2);
	BAD(v, C, a->invocation = 7);		/* an id without OUTPUT */
	GOOD(v, C, (a->flags = PTASK_DATABLOCK_CREATE_OUTPUT,
		    a->invocation = 7));
	BAD(v, C, a->template = 4);		/* bytes given with template */
	BAD(v, C, a->bytes = 0);
	BAD(v, C, a->bytes = PTASK_DATABLOCK_MAX_BYTES + 1);
	BAD(v, C, a->bytes = ~0ULL);
	GOOD(r, R, (void)0);
	GOOD(r, R, a->handle = 0);
	BAD(r, R, a->flags = 1);
	BAD(r, R, a->reserved = 1);
}

static void test_push_pull_rules(void)
{
	struct ptask_push p = { .flags = PTASK_NONBLOCK, .channel = 1,
				.datablock = 2, .timeout_ns = 5 };
	struct ptask_pull q = { .flags = PTASK_NONBLOCK, .channel = 1 };
	const unsigned int P = PTASK_IOC_PUSH, Q = PTASK_IOC_PULL;

	GOOD(p, P, (void)0);
	GOOD(p, P, a->flags = 0);
	GOOD(p, P, (a->flags = PTASK_PUSH_SET_RECORDS, a->records = 3));
	GOOD(p, P, (a->flags = PTASK_PUSH_FLAGS_ALL, a->records = 0));
	BAD(p, P, a->flags |= 1u << 2);
	BAD(p, P, a->records = 3);		/* records without the flag */
	GOOD(q, Q, (void)0);
	GOOD(q, Q, (a->flags = 0, a->datablock = 7, a->bytes = 1));
	GOOD(q, Q, (a->flags = PTASK_PULL_SLICE, a->datablock = 7));
	BAD(q, Q, a->flags |= 1u << 2);
	BAD(q, Q, a->flags = 1u << 31);
}

static void test_graph_ctl_rules(void)
{
	struct ptask_graph_ctl v = { .graph = 1 };
	static const unsigned int cmds[] = { PTASK_IOC_GRAPH_RUN,
		PTASK_IOC_GRAPH_TERMINATE, PTASK_IOC_GRAPH_CLOSE };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		GOOD(v, cmds[i], (void)0);
		GOOD(v, cmds[i], a->graph = 0);
		BAD(v, cmds[i], a->flags = 1);
		BAD(v, cmds[i], a->reserved = 1);
	}
}

static void test_priority_rules(void)
{
	struct ptask_priority v = { .flags = PTASK_PRIO_FLAGS_ALL,
				    .static_prio = PTASK_PRIO_MAX,
				    .proxy_nice = PTASK_NICE_MIN };
	const unsigned int C = PTASK_IOC_PTASK_SET_PRIORITY;

	GOOD(v, C, (void)0);
	GOOD(v, C, (a->static_prio = PTASK_PRIO_MIN,
		    a->proxy_nice = PTASK_NICE_MAX));
	GOOD(v, C, (a->flags = PTASK_PRIO_SET_STATIC, a->proxy_nice = 0));
	GOOD(v, C, (a->flags = PTASK_PRIO_SET_PROXY, a->static_prio = 0));
	BAD(v, C, a->flags = 0);
	BAD(v, C, a->flags |= 1u << 2);
	BAD(v, C, a->reserved = 1);
	BAD(v, C, a->static_prio = PTASK_PRIO_MAX + 1);
	BAD(v, C, a->proxy_nice = PTASK_NICE_MIN - 1);
	BAD(v, C, a->proxy_nice = PTASK_NICE_MAX + 1);
	BAD(v, C, a->flags = PTASK_PRIO_SET_PROXY);	/* static given */
	BAD(v, C, (a->flags = PTASK_PRIO_SET_STATIC));	/* proxy given */
}

static void test_geometry_rules(void)
{
	struct ptask_geometry v = { .grid = { 65536, 65535, 65535 },
				    .block = { 32, 32, 1 },
				    .shared_bytes = 1u << 20 };
	const unsigned int C = PTASK_IOC_PTASK_SET_GEOMETRY;

	GOOD(v, C, (void)0);
	GOOD(v, C, (memset(a->grid, 0, 12), memset(a->block, 0, 12)));
	GOOD(v, C, (a->block[0] = 1024, a->block[1] = 1));
	GOOD(v, C, a->grid[0] = 0xffffffffu);
	BAD(v, C, a->flags = 1);
	BAD(v, C, a->shared_bytes = (1u << 20) + 1);
	BAD(v, C, a->grid[0] = 0);
	BAD(v, C, a->grid[2] = 0);
	BAD(v, C, a->block[1] = 0);
	BAD(v, C, (memset(a->grid, 0, 12)));		/* partly zero */
	BAD(v, C, a->block[2] = 2);			/* 2048 threads */
	BAD(v, C, (a->block[0] = 1025, a->block[1] = 1));
	BAD(v, C, (a->block[0] = 65536, a->block[1] = 65536,
		   a->block[2] = 65536));		/* no wrap */
	BAD(v, C, (a->block[0] = 1u << 28, a->block[1] = 1u << 28,
		   a->block[2] = 256));		/* 2^64 wraps to 0 */
	BAD(v, C, (a->block[0] = 1, a->block[1] = 1,
		   a->block[2] = 65));			/* z: at most 64 */
	GOOD(v, C, (a->block[0] = 1, a->block[1] = 16,
		    a->block[2] = 64));
	BAD(v, C, a->grid[1] = 65536);
	BAD(v, C, a->grid[2] = 65536);
}

static void test_exec_rules(void)
{
	struct ptask_exec_take t = { .max_invocations = 1, .max_ports = 1 };
	struct ptask_exec_complete c = { .id = 1, .n_outputs = 64,
					 .status = -4095 };
	struct ptask_exec_ptask_info i = { .ptask = 1, .code = 1 };
	struct ptask_exec_forgotten f = { .max_handles = 1 };
	const unsigned int F = PTASK_IOC_EXEC_FORGOTTEN;
	const unsigned int T = PTASK_IOC_EXEC_TAKE;
	const unsigned int C = PTASK_IOC_EXEC_COMPLETE;
	const unsigned int I = PTASK_IOC_EXEC_PTASK_INFO;

	GOOD(t, T, (void)0);
	GOOD(t, T, (a->flags = PTASK_NONBLOCK, a->max_ports = ~0u,
		    a->max_invocations = ~0u));
	GOOD(t, T, a->flags = PTASK_TAKE_SELF | PTASK_NONBLOCK);
	GOOD(t, T, a->flags = PTASK_TAKE_AHEAD | PTASK_NONBLOCK);
	GOOD(t, T, a->flags = PTASK_TAKE_FUSE | PTASK_TAKE_AHEAD);
	GOOD(t, T, a->flags = PTASK_TAKE_OUTPUTS | PTASK_TAKE_FUSE);
	BAD(t, T, a->flags = 1u << 5);
	BAD(t, T, a->max_invocations = 0);
	BAD(t, T, a->max_ports = 0);
	GOOD(c, C, (void)0);
	GOOD(c, C, (a->status = 0, a->n_outputs = 0));
	BAD(c, C, a->flags = 1u << 2);
	/* Ahead: succeeds (its failure comes with the settle). */
	GOOD(c, C, (a->flags = PTASK_EXEC_COMPLETE_AHEAD, a->status = 0));
	BAD(c, C, a->flags = PTASK_EXEC_COMPLETE_AHEAD);	/* -4095 */
	BAD(c, C, (a->flags = PTASK_EXEC_COMPLETE_AHEAD, a->status = -5));
	/* Settle: no outputs. */
	GOOD(c, C, (a->flags = PTASK_EXEC_COMPLETE_SETTLE, a->n_outputs = 0));
	GOOD(c, C, (a->flags = PTASK_EXEC_COMPLETE_SETTLE, a->n_outputs = 0,
		    a->status = 0));
	BAD(c, C, a->flags = PTASK_EXEC_COMPLETE_SETTLE);	/* 64 outputs */
	BAD(c, C, (a->flags = PTASK_EXEC_COMPLETE_SETTLE, a->n_outputs = 1));
	/* Not both. */
	BAD(c, C, (a->flags = PTASK_EXEC_COMPLETE_FLAGS_ALL, a->status = 0,
		   a->n_outputs = 0));
	BAD(c, C, a->n_outputs = PTASK_MAX_PORTS + 1);
	BAD(c, C, a->status = 1);
	BAD(c, C, a->status = -4096);
	BAD(c, C, a->status = -2147483647 - 1);
	/* a requeue: a failure's status, nothing else */
	GOOD(c, C, (a->flags = PTASK_EXEC_COMPLETE_REQUEUE, a->status = -5,
		    a->n_outputs = 0));
	BAD(c, C, (a->flags = PTASK_EXEC_COMPLETE_REQUEUE, a->status = 0,
		   a->n_outputs = 0));
	BAD(c, C, (a->flags = PTASK_EXEC_COMPLETE_REQUEUE, a->status = -5,
		   a->n_outputs = 1));
	BAD(c, C, (a->flags = PTASK_EXEC_COMPLETE_REQUEUE |
			      PTASK_EXEC_COMPLETE_SETTLE, a->status = -5,
		   a->n_outputs = 0));
	/* an accelerator's error code goes with a failure only */
	GOOD(c, C, (a->flags = 0, a->status = -5, a->n_outputs = 0,
		    a->error_code = 700));
	BAD(c, C, (a->flags = 0, a->status = 0, a->n_outputs = 0,
		   a->error_code = 700));
	GOOD(i, I, (void)0);
	GOOD(i, I, (a->kind = 9, a->nports = 9));	/* outputs: ignored */
	BAD(i, I, a->flags = 1);
	BAD(i, I, a->reserved = 1);
	GOOD(f, F, (void)0);
	GOOD(f, F, (a->max_handles = ~0u, a->n_handles = 9, a->lost = 9,
		    a->pending = 9));			/* outputs: ignored */
	BAD(f, F, a->flags = 1);
	BAD(f, F, a->max_handles = 0);
}

/* Rejected arguments never reach the core: nothing is created. */
static void test_rejected_calls_change_nothing(void)
{
	struct ptask_client *c = h_client();
	u32 g;

	CHECK_ERR(h_graph(c, "a b", PTASK_GRAPH_CREATE, 0600, &g), -EINVAL);
	CHECK_ERR(h_graph(c, "x", PTASK_GRAPH_CREATE, 01000, &g), -EINVAL);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_GRAPHS], 0);
	REQUIRE_OK(h_graph(c, "x", PTASK_GRAPH_CREATE, 0600, &g));
	CHECK_ERR(h_tmpl(c, g, PTASK_TEMPLATE_ARRAY, 0, 1, 1, 1, NULL),
		  -EINVAL);
	CHECK_ERR(h_ptask(c, g, 0, NULL), -EINVAL);
	CHECK_ERR(h_db(c, 0, NULL), -EINVAL);
	CHECK_ERR(h_chan(c, g, 0, 0, 1, 0, NULL), -EINVAL);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_TEMPLATES], 0);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_PTASKS], 0);
	CHECK_EQ(h_ns.counts[PTASK_COUNT_DATABLOCKS], 0);
	CHECK_EQ(h_ns.hcount, 1);
	/* Argument errors come before handle errors. */
	CHECK_ERR(h_tmpl(c, 0, PTASK_TEMPLATE_ARRAY, 0, 1, 1, 1, NULL),
		  -EINVAL);
	CHECK_ERR(h_chan(c, 999, 0, 0, 1, 0, NULL), -EINVAL);
}

/* ------------------------------------------------------------------ */
/* Allocation-failure injection over a whole build-and-run sequence.   */

enum { AF_NONE, AF_RETRY, AF_STOP };

struct af {
	int mode;
	unsigned int nomem;	/* -ENOMEM results seen */
	u32 nout;
	u64 out[64];		/* tags pulled, in order */
};

/*
 * STEP(call, want): @call must give @want, or -ENOMEM.  On -ENOMEM:
 * AF_STOP ends the scenario; AF_RETRY makes the call again (the injector
 * fails once), which must then succeed as if the failure never happened.
 */
#define STEP(call, want) do {						\
	int e_ = (call);						\
									\
	if (e_ == -ENOMEM && f->mode != AF_NONE) {			\
		f->nomem++;						\
		if (f->mode == AF_STOP)					\
			return -ENOMEM;					\
		e_ = (call);						\
	}								\
	if (!h_check_err(e_, (want), __FILE__, __LINE__, #call))	\
		return -EINVAL;						\
} while (0)

/* TRY(var, call): like STEP, but leaves the check of @var to the caller. */
#define TRY(var, call) do {						\
	(var) = (call);							\
	if ((var) == -ENOMEM && f->mode != AF_NONE) {			\
		f->nomem++;						\
		if (f->mode == AF_STOP)					\
			return -ENOMEM;					\
		(var) = (call);						\
	}								\
} while (0)

static int af_client(struct af *f, struct ptask_client **c)
{
	*c = ptask_core_client_create(&h_ns, NULL);
	if (!*c && f->mode != AF_NONE) {
		f->nomem++;
		if (f->mode == AF_STOP)
			return -ENOMEM;
		*c = ptask_core_client_create(&h_ns, NULL);
	}
	return CHECK(*c != NULL) ? 0 : -EINVAL;
}

/* The executor's part of one round: complete everything it can take. */
static int af_exec(struct af *f, struct ptask_client *e, u32 p1,
		   struct h_take *t)
{
	u32 i;
	int err;

	TRY(err, h_take(e, 2, 16, t));
	if (err == -EAGAIN)
		return 0;
	if (!CHECK_OK(err))
		return -EINVAL;
	for (i = 0; i < t->n_inv; i++) {
		const struct ptask_invocation *inv = &t->inv[i];
		const struct ptask_invocation_port *ports =
			&t->ports[inv->first_port];
		struct ptask_exec_output o;
		u64 x, s;

		STEP(h_read_tag(e, ports[0].datablock, &x), 0);
		if (inv->ptask == p1) {
			STEP(h_read_tag(e, ports[1].datablock, &s), 0);
			if (!CHECK_EQ(s, 1000))
				return -EINVAL;
		}
		o.index = inv->n_ports - 1;
		STEP(h_db(e, 8, &o.datablock), 0);
		STEP(h_write_tag(e, o.datablock, x * 10 +
				 (inv->ptask == p1 ? 1 : 2)), 0);
		STEP(h_complete(e, inv->id, 0, &o, 1), 0);
	}
	return 0;
}

/* Build a two-ptask graph with fan-out and a sticky port, run it. */
static int af_scenario(struct af *f, struct h_take *t)
{
	enum { N = 6 };
	struct ptask_client *a, *b, *e;
	static const u8 code[16] = { 0xc0, 0xde };
	struct ptask_priority pr = { .flags = PTASK_PRIO_SET_STATIC,
				     .static_prio = 60 };
	struct ptask_geometry geo = { .grid = { 1, 1, 1 },
				      .block = { 1, 1, 1 } };
	struct ptask_exec_ptask_info info;
	u8 back[16];
	u32 g, gb, T, p1, p2, in1, st1, out1, in2, out2, feed, stick, tap,
	    res, r, db, pushed = 0, round, i;
	int err;

	if (af_client(f, &a) || af_client(f, &b) || af_client(f, &e))
		return -ENOMEM;
	STEP(ptask_core_exec_register(e, 1), 0);
	STEP(h_graph(a, "af", PTASK_GRAPH_CREATE, 0666, &g), 0);
	STEP(h_graph(b, "af", 0, 0, &gb), 0);
	STEP(h_tmpl_named(a, g, PTASK_TEMPLATE_ARRAY, 8, 1, 1, 1, "T", &T), 0);
	STEP(h_gpu_ptask(a, NULL, g, 3, code, sizeof(code), "k1", &p1), 0);
	STEP(h_port_named(a, p1, PTASK_PORT_INPUT, T, "in", &in1), 0);
	STEP(h_port(a, p1, PTASK_PORT_STICKY, 0, &st1), 0);
	STEP(h_port(a, p1, PTASK_PORT_OUTPUT, T, &out1), 0);
	STEP(h_ptask_named(a, g, 2, "p2", &p2), 0);
	STEP(h_port(a, p2, PTASK_PORT_INPUT, 0, &in2), 0);
	STEP(h_port(a, p2, PTASK_PORT_OUTPUT, 0, &out2), 0);
	STEP(h_chan_named(a, g, 0, in1, 2, T, "feed", &feed), 0);
	STEP(h_chan(a, g, 0, st1, 1, 0, &stick), 0);
	STEP(h_chan(a, g, out1, in2, 1, 0, NULL), 0);
	STEP(h_chan_named(a, g, out1, 0, 8, 0, "tap", &tap), 0);
	STEP(h_chan_named(a, g, out2, 0, 8, 0, "res", &res), 0);
	STEP(h_lookup(b, gb, PTASK_OBJ_CHANNEL, "feed", &r), 0);
	STEP(h_lookup(b, gb, PTASK_OBJ_PORT, "in", &r), 0);
	pr.ptask = p1;
	STEP(h_call(a, NULL, PTASK_IOC_PTASK_SET_PRIORITY, &pr, NULL), 0);
	geo.ptask = p1;
	STEP(h_call(a, NULL, PTASK_IOC_PTASK_SET_GEOMETRY, &geo, NULL), 0);
	STEP(h_run(a, g), 0);
	STEP(h_db(b, 8, &db), 0);
	STEP(h_write_tag(b, db, 1000), 0);
	STEP(h_push(b, stick, db), 0);
	STEP(h_release(b, db), 0);
	for (round = 0; round < 100 && f->nout < 2 * N; round++) {
		while (pushed < N) {
			STEP(h_db_tmpl(b, T, 0, &db, NULL), 0);
			STEP(h_write_tag(b, db, pushed), 0);
			err = h_push(b, feed, db);
			STEP(h_release(b, db), 0);
			if (err == -EAGAIN)
				break;
			STEP(err, 0);
			pushed++;
		}
		err = af_exec(f, e, p1, t);
		if (err)
			return err;
		for (i = 0; i < 2; i++) {
			for (;;) {
				TRY(err, h_pull(b, i ? res : tap, &db));
				if (err == -EAGAIN)
					break;
				if (!CHECK_OK(err))
					return -EINVAL;
				STEP(h_read_tag(b, db, &f->out[f->nout++]), 0);
				STEP(h_release(b, db), 0);
			}
		}
	}
	STEP(h_info(e, p1, back, sizeof(back), &info), 0);
	if (!CHECK(!memcmp(back, code, sizeof(code))))
		return -EINVAL;
	STEP(h_terminate(b, gb), 0);
	STEP(h_pull(b, res, &db), -ESHUTDOWN);
	STEP(h_close(a, g), 0);
	ptask_core_client_destroy(e);
	ptask_core_client_destroy(a);
	return 0;
}

/* Every tap tag is i*10+1 and every res tag (i*10+1)*10+2, in order. */
static bool af_results_ok(const struct af *f)
{
	u64 ntap = 0, nres = 0;
	u32 i;

	for (i = 0; i < f->nout; i++) {
		if (f->out[i] % 10 == 1) {
			if (!CHECK_EQ(f->out[i], ntap * 10 + 1))
				return false;
			ntap++;
		} else if (!CHECK_EQ(f->out[i], (nres * 10 + 1) * 10 + 2)) {
			return false;
		} else {
			nres++;
		}
	}
	return CHECK_EQ(ntap, 6) && CHECK_EQ(nres, 6);
}

/* One run with the (n+1)th allocation failing; false on a problem. */
static unsigned int af_surfaced;	/* runs where -ENOMEM came back */

static bool af_run(int mode, int n, bool *done)
{
	struct h_take *t = calloc(1, sizeof(*t));
	struct af f = { .mode = mode };
	long buffers = os_user_buffers;
	unsigned long failures = os_user_alloc_failures;
	bool ok = true;
	int err;

	if (!t)
		abort();
	os_user_fail_alloc_after = n;
	os_user_fail_alloc_once = mode == AF_RETRY;
	err = ptask_core_ns_init(&h_ns, NULL);
	if (err == -ENOMEM && mode == AF_RETRY)
		err = ptask_core_ns_init(&h_ns, NULL);
	if (err) {
		ok = CHECK_ERR(err, -ENOMEM) && mode == AF_STOP;
		goto out;
	}
	err = af_scenario(&f, t);
	af_surfaced += f.nomem > 0;
	/* One failure injected, so at most one -ENOMEM seen. */
	if (mode == AF_RETRY && !CHECK(f.nomem <= 1))
		ok = false;
	if (mode == AF_STOP)
		ok = err == 0 || err == -ENOMEM;
	else
		ok = CHECK_OK(err) && af_results_ok(&f);
	os_user_fail_alloc_after = -1;
	if (h_teardown_check(&h_ns, buffers))
		ok = false;
out:
	os_user_fail_alloc_after = -1;
	os_user_fail_alloc_once = 0;
	/* No failure injected at n: the whole sequence fits in n allocs. */
	*done = os_user_alloc_failures == failures;
	if (!ok)
		h_diag("alloc failure injection: mode %s, n = %d: err %s",
		       mode == AF_RETRY ? "retry" : "stop", n, h_errname(err));
	free(t);
	return ok;
}

static void af_loop(int mode)
{
	unsigned long allocs0;
	bool done = false;
	int n, bad = 0;

	/* h_main's namespace: replaced by one per run. */
	h_teardown_check(&h_ns, os_user_buffers);
	allocs0 = os_user_allocs;
	CHECK(af_run(AF_NONE, -1, &done));
	h_diag("the sequence makes %lu allocations",
	       os_user_allocs - allocs0);
	done = false;
	af_surfaced = 0;
	for (n = 0; n < 5000 && !done; n++)
		bad += !af_run(mode, n, &done);
	CHECK(done);
	CHECK_EQ(bad, 0);
	h_diag("%d runs with one allocation failing, %u returned -ENOMEM",
	       n, af_surfaced);
	REQUIRE_OK(ptask_core_ns_init(&h_ns, NULL));
}

/* The (n+1)th allocation fails and so does every later one. */
static void test_alloc_failure_stop(void)
{
	af_loop(AF_STOP);
}

/* Only the (n+1)th fails; the call that saw it is made again and must
 * then behave as if nothing happened: -ENOMEM left no trace. */
static void test_alloc_failure_retry(void)
{
	af_loop(AF_RETRY);
}

static const struct h_test tests[] = {
	H_TEST(test_desc_and_enotty),
	H_TEST(test_graph_open_rules),
	H_TEST(test_template_open_rules),
	H_TEST(test_ptask_open_rules),
	H_TEST(test_port_open_rules),
	H_TEST(test_channel_open_rules),
	H_TEST(test_lookup_rules),
	H_TEST(test_datablock_rules),
	H_TEST(test_push_pull_rules),
	H_TEST(test_graph_ctl_rules),
	H_TEST(test_priority_rules),
	H_TEST(test_geometry_rules),
	H_TEST(test_exec_rules),
	H_TEST(test_rejected_calls_change_nothing),
	H_TEST(test_alloc_failure_stop),
	H_TEST(test_alloc_failure_retry),
};

int main(int argc, char **argv)
{
	return h_main(tests, ARRAY_SIZE(tests), argc, argv);
}
