// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * calls.c - one function per PTask system call: fill the uapi struct,
 * hand it to the transport, return what came back.
 */
#include <errno.h>
#include <string.h>
#include "internal.h"

/* Copy @name into a PTASK_NAME_MAX field; -EINVAL when it does not fit. */
static int set_name(char dst[PTASK_NAME_MAX], const char *name)
{
	size_t len = name ? strlen(name) : 0;

	if (len >= PTASK_NAME_MAX)
		return -EINVAL;
	memcpy(dst, name ? name : "", len + 1);
	return 0;
}

static int call(struct ptask_ctx *ctx, unsigned int cmd, void *arg)
{
	if (!ctx)
		return -EINVAL;
	return ctx->t->call(ctx, cmd, arg, NULL);
}

int ptask_graph_open(struct ptask_ctx *ctx, const char *name, uint32_t flags,
		     uint32_t mode, uint32_t *graph)
{
	struct ptask_graph_open a = {
		.size = sizeof(a), .flags = flags, .mode = mode,
	};
	int err = set_name(a.name, name);

	if (!err)
		err = call(ctx, PTASK_IOC_GRAPH_OPEN, &a);
	if (!err)
		*graph = a.handle;
	return err;
}

static int graph_ctl(struct ptask_ctx *ctx, unsigned int cmd, uint32_t graph)
{
	struct ptask_graph_ctl a = { .size = sizeof(a), .graph = graph };

	return call(ctx, cmd, &a);
}

int ptask_graph_run(struct ptask_ctx *ctx, uint32_t graph)
{
	return graph_ctl(ctx, PTASK_IOC_GRAPH_RUN, graph);
}

int ptask_graph_terminate(struct ptask_ctx *ctx, uint32_t graph)
{
	return graph_ctl(ctx, PTASK_IOC_GRAPH_TERMINATE, graph);
}

int ptask_graph_close(struct ptask_ctx *ctx, uint32_t graph)
{
	return graph_ctl(ctx, PTASK_IOC_GRAPH_CLOSE, graph);
}

int ptask_template_open(struct ptask_ctx *ctx, uint32_t graph,
			const char *name, uint32_t kind, uint32_t binding,
			uint32_t stride, const uint32_t dims[3],
			uint32_t *tmpl)
{
	struct ptask_template_open a = {
		.size = sizeof(a), .graph = graph, .kind = kind,
		.binding = binding, .stride = stride,
	};
	int err = set_name(a.name, name);

	if (!dims)
		return -EINVAL;
	memcpy(a.dims, dims, sizeof(a.dims));
	if (!err)
		err = call(ctx, PTASK_IOC_TEMPLATE_OPEN, &a);
	if (!err)
		*tmpl = a.handle;
	return err;
}

static int ptask_open(struct ptask_ctx *ctx, struct ptask_ptask_open *a,
		      const char *name, uint32_t *ptask)
{
	int err = set_name(a->name, name);

	if (!err)
		err = call(ctx, PTASK_IOC_PTASK_OPEN, a);
	if (!err)
		*ptask = a->handle;
	return err;
}

int ptask_gpu_ptask_open(struct ptask_ctx *ctx, uint32_t graph,
			 const char *name, const void *code, size_t code_len,
			 const char *entry, uint32_t nports, uint32_t *ptask)
{
	struct ptask_ptask_open a = {
		.size = sizeof(a), .graph = graph, .kind = PTASK_KIND_GPU,
		.nports = nports, .code = (uintptr_t)code,
	};

	if (code_len > PTASK_CODE_MAX_BYTES)
		return -EINVAL;
	a.code_len = (uint32_t)code_len;
	if (set_name(a.entry, entry))
		return -EINVAL;
	return ptask_open(ctx, &a, name, ptask);
}

int ptask_cpu_ptask_open(struct ptask_ctx *ctx, uint32_t graph,
			 const char *name, uint32_t nports, ptask_cpu_fn fn,
			 void *arg, uint32_t *ptask)
{
	struct ptask_ptask_open a = {
		.size = sizeof(a), .flags = PTASK_PTASK_SELF, .graph = graph,
		.kind = PTASK_KIND_CPU, .nports = nports,
	};
	int err;

	if (!fn)
		return -EINVAL;
	err = ptask_open(ctx, &a, name, ptask);
	if (err)
		return err;
	/* The ptask exists now; a body that cannot be registered fails it. */
	err = lp_cpu_register(ctx, *ptask, fn, arg);
	if (err)
		graph_ctl(ctx, PTASK_IOC_GRAPH_TERMINATE, graph);
	return err;
}

int ptask_port_open(struct ptask_ctx *ctx, uint32_t ptask, const char *name,
		    uint32_t kind, uint32_t flags, uint32_t tmpl,
		    uint32_t param_index, uint32_t inout_peer, uint32_t *port)
{
	struct ptask_port_open a = {
		.size = sizeof(a), .flags = flags, .ptask = ptask, .kind = kind,
		.template = tmpl, .param_index = param_index,
		.inout_peer = inout_peer,
	};
	int err = set_name(a.name, name);

	if (!err)
		err = call(ctx, PTASK_IOC_PORT_OPEN, &a);
	if (!err && port)
		*port = a.handle;
	return err;
}

int ptask_channel_open(struct ptask_ctx *ctx, uint32_t graph,
		       const char *name, uint32_t src, uint32_t dst,
		       uint32_t capacity, uint32_t tmpl, uint32_t *channel)
{
	struct ptask_channel_open a = {
		.size = sizeof(a), .graph = graph, .src = src, .dst = dst,
		.capacity = capacity, .template = tmpl,
	};
	int err = set_name(a.name, name);

	if (!err)
		err = call(ctx, PTASK_IOC_CHANNEL_OPEN, &a);
	if (!err && channel)
		*channel = a.handle;
	return err;
}

int ptask_tunnel_open(struct ptask_ctx *ctx, uint32_t graph,
		      const char *name, uint32_t src, uint32_t dst,
		      uint32_t capacity, uint32_t tmpl, uint64_t bytes,
		      uint32_t records, uint64_t timeout_ns,
		      uint32_t *channel)
{
	struct ptask_channel_open a = {
		.size = sizeof(a), .flags = PTASK_CHANNEL_TUNNEL,
		.graph = graph, .src = src, .dst = dst, .capacity = capacity,
		.template = tmpl, .tunnel_bytes = bytes,
		.tunnel_records = records, .tunnel_timeout_ns = timeout_ns,
	};
	int err = set_name(a.name, name);

	if (!err)
		err = call(ctx, PTASK_IOC_CHANNEL_OPEN, &a);
	if (!err && channel)
		*channel = a.handle;
	return err;
}

int ptask_tunnel_set(struct ptask_ctx *ctx, uint32_t channel, uint64_t bytes,
		     uint32_t records, uint64_t timeout_ns)
{
	struct ptask_channel_open a = {
		.size = sizeof(a), .flags = PTASK_CHANNEL_TUNNEL_SET,
		.handle = channel, .tunnel_bytes = bytes,
		.tunnel_records = records, .tunnel_timeout_ns = timeout_ns,
	};

	return call(ctx, PTASK_IOC_CHANNEL_OPEN, &a);
}

int ptask_lookup(struct ptask_ctx *ctx, uint32_t graph, uint32_t type,
		 const char *name, uint32_t *handle)
{
	struct ptask_lookup a = {
		.size = sizeof(a), .graph = graph, .type = type,
	};
	int err = set_name(a.name, name);

	if (!err)
		err = call(ctx, PTASK_IOC_LOOKUP, &a);
	if (!err)
		*handle = a.handle;
	return err;
}

int ptask_set_priority(struct ptask_ctx *ctx, uint32_t ptask, uint32_t flags,
		       uint32_t static_prio, int32_t proxy_nice)
{
	struct ptask_priority a = {
		.size = sizeof(a), .flags = flags, .ptask = ptask,
		.static_prio = static_prio, .proxy_nice = proxy_nice,
	};

	return call(ctx, PTASK_IOC_PTASK_SET_PRIORITY, &a);
}

int ptask_set_geometry(struct ptask_ctx *ctx, uint32_t ptask,
		       const uint32_t grid[3], const uint32_t block[3],
		       uint32_t shared_bytes)
{
	struct ptask_geometry a = {
		.size = sizeof(a), .ptask = ptask, .shared_bytes = shared_bytes,
	};

	if (!grid || !block)
		return -EINVAL;
	memcpy(a.grid, grid, sizeof(a.grid));
	memcpy(a.block, block, sizeof(a.block));
	return call(ctx, PTASK_IOC_PTASK_SET_GEOMETRY, &a);
}

int lp_call(struct ptask_ctx *ctx, unsigned int cmd, void *arg)
{
	return call(ctx, cmd, arg);
}

int lp_call_mem(struct ptask_ctx *ctx, unsigned int cmd, void *arg,
		struct lp_mem *mem)
{
	mem->known = false;
	if (!ctx)
		return -EINVAL;
	return ctx->t->call(ctx, cmd, arg, mem);
}
