// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * cpu_worker.c - CPU ptasks run in the program that made them.
 *
 * ptask_cpu_ptask_open() opens the ptask with PTASK_PTASK_SELF, so its
 * invocations queue on this program's own client and never reach the
 * privileged daemon.  One worker thread per context takes them with
 * EXEC_TAKE | PTASK_TAKE_SELF (waking every WORKER_POLL_MS to see whether
 * the context closes), maps the inputs, gives every output port with a
 * template a fresh datablock, runs the body and completes the invocation
 * with the outputs.  A body's error fails its graph.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

#define WORKER_POLL_MS		200
#define WORKER_BATCH		16
#define WORKER_PORTS		PTASK_TAKE_MAX_PORTS

struct lp_cpu_body {
	uint32_t ptask;
	ptask_cpu_fn fn;
	void *arg;
	struct lp_cpu_body *next;
};

/* One invocation being run: the public call and what backs its ports. */
struct cpu_run {
	struct ptask_cpu_call call;
	struct ptask_ctx *ctx;
	struct ptask_cpu_port ports[PTASK_MAX_PORTS];
	struct ptask_db dbs[PTASK_MAX_PORTS];	/* handle 0: none */
	bool created[PTASK_MAX_PORTS];
};

static struct lp_cpu_body *find_body(struct ptask_ctx *ctx, uint32_t ptask)
{
	struct lp_cpu_body *b;

	pthread_mutex_lock(&ctx->lock);
	for (b = ctx->bodies; b && b->ptask != ptask; b = b->next)
		;
	pthread_mutex_unlock(&ctx->lock);
	return b;
}

/*
 * Map datablock @db (an input, or an output just made) where the ring's
 * completion said its bytes are (@mem, user mode's rings: nothing
 * asked), else by asking the transport.
 */
static int map_db(struct ptask_ctx *ctx, struct ptask_db *db,
		     const struct lp_mem *mem)
{
	int err = -ENOENT;

	if (mem && mem->known && ctx->t->map_at)
		err = ctx->t->map_at(ctx, mem, db->bytes, &db->data,
				     &db->cookie);
	if (err == -ENOENT)
		err = ctx->t->map(ctx, db->handle, db->mmap_offset, db->bytes,
				  &db->data, &db->cookie);
	return err;
}

/* A new datablock of @bytes for output slot @i, mapped. */
static int create_output(struct cpu_run *r, uint32_t i, uint64_t bytes)
{
	struct ptask_datablock_create a = { .size = sizeof(a), .bytes = bytes };
	struct ptask_db *db = &r->dbs[i];
	struct lp_mem mem;
	int err;

	err = lp_call_mem(r->ctx, PTASK_IOC_DATABLOCK_CREATE, &a, &mem);
	if (err)
		return err;
	db->handle = a.handle;
	db->bytes = a.bytes;
	db->mmap_offset = a.mmap_offset;
	r->created[i] = true;
	/* where the ring's completion said it is: no map call */
	err = map_db(r->ctx, db, &mem);
	if (err)
		return err;
	r->ports[i].data = db->data;
	r->ports[i].bytes = db->bytes;
	return 0;
}

int ptask_cpu_output(struct ptask_cpu_call *call, uint32_t index,
		     uint64_t bytes, void **data)
{
	struct cpu_run *r = (struct cpu_run *)((char *)call -
					       offsetof(struct cpu_run, call));
	int err;

	if (!call || index >= call->nports ||
	    call->ports[index].kind != PTASK_PORT_OUTPUT || r->dbs[index].handle)
		return -EINVAL;
	err = create_output(r, index, bytes);
	if (!err)
		*data = r->ports[index].data;
	return err;
}

/* Does an in/out input emit its datablock on output @index? */
static bool is_peer(const struct ptask_invocation *inv,
		    const struct ptask_invocation_port *ports, uint32_t index)
{
	uint32_t j;

	for (j = 0; j < inv->n_ports; j++)
		if (ports[inv->first_port + j].peer == index)
			return true;
	return false;
}

/* Inputs mapped, outputs made; the slots are in port index order. */
static int prepare(struct cpu_run *r, const struct ptask_invocation *inv,
		   const struct ptask_invocation_port *ports,
		   const struct lp_mem *mems)
{
	uint32_t i;
	int err;

	for (i = 0; i < inv->n_ports; i++) {
		const struct ptask_invocation_port *p = &ports[inv->first_port + i];
		struct ptask_cpu_port *cp = &r->ports[i];

		if (p->index != i)	/* the module lists ports in order */
			return -EPROTO;
		cp->index = p->index;
		cp->kind = p->kind;
		cp->flags = p->flags;
		cp->records = p->records;
		if (p->kind == PTASK_PORT_OUTPUT) {
			/* No template: the body asks; an in/out's peer: none. */
			if (!p->bytes || is_peer(inv, ports, i))
				continue;
			err = create_output(r, i, p->bytes);
		} else {
			struct ptask_db *db = &r->dbs[i];

			db->handle = p->datablock;
			db->bytes = p->bytes;
			db->mmap_offset = p->mmap_offset;
			err = map_db(r->ctx, db, mems ?
					&mems[inv->first_port + i] : NULL);
			cp->data = db->data;
			cp->bytes = p->bytes;
		}
		if (err)
			return err;
	}
	return 0;
}

/* The outputs to emit: a fresh datablock, or an in/out input's own. */
static int collect_outputs(struct cpu_run *r, const struct ptask_invocation *inv,
			   const struct ptask_invocation_port *ports,
			   struct ptask_exec_output *outs, uint32_t *n)
{
	uint32_t i, j;

	*n = 0;
	for (i = 0; i < inv->n_ports; i++) {
		uint32_t handle = r->dbs[i].handle;

		if (ports[inv->first_port + i].kind != PTASK_PORT_OUTPUT)
			continue;
		for (j = 0; j < inv->n_ports; j++)
			if (ports[inv->first_port + j].peer == i)
				handle = r->dbs[j].handle;
		if (!handle)
			return -ENODATA;	/* the body made no datablock */
		outs[*n].index = i;
		outs[*n].datablock = handle;
		(*n)++;
	}
	return 0;
}

static void unmap_all(struct cpu_run *r, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (r->dbs[i].data)
			r->ctx->t->unmap(r->ctx, r->dbs[i].data, r->dbs[i].bytes,
					 r->dbs[i].cookie);
}

static void run_one(struct ptask_ctx *ctx, const struct ptask_invocation *inv,
		    const struct ptask_invocation_port *ports,
		    const struct lp_mem *mems)
{
	struct ptask_exec_output outs[PTASK_MAX_PORTS];
	struct ptask_exec_complete done = {
		.size = sizeof(done), .id = inv->id,
	};
	struct lp_cpu_body *body = find_body(ctx, inv->ptask);
	struct cpu_run *r;
	uint32_t i, n = 0;
	int status, err;

	r = calloc(1, sizeof(*r));
	if (!r) {
		done.status = -ENOMEM;
		lp_call(ctx, PTASK_IOC_EXEC_COMPLETE, &done);
		return;
	}
	r->ctx = ctx;
	r->call.ptask = inv->ptask;
	r->call.invocation = inv->id;
	r->call.nports = inv->n_ports;
	r->call.ports = r->ports;
	status = !body ? -ENOENT : inv->n_ports > PTASK_MAX_PORTS ? -EPROTO :
		 prepare(r, inv, ports, mems);
	if (!status)
		status = body->fn(&r->call, body->arg);
	if (status > 0)
		status = -EINVAL;
	if (!status)
		status = collect_outputs(r, inv, ports, outs, &n);
	done.status = status;
	done.n_outputs = status ? 0 : n;
	done.outputs = (uintptr_t)outs;
	unmap_all(r, inv->n_ports);
	err = lp_call(ctx, PTASK_IOC_EXEC_COMPLETE, &done);
	/* Passed on with the completion; ours to drop only if it failed. */
	for (i = 0; i < inv->n_ports; i++) {
		struct ptask_datablock_release rel = {
			.size = sizeof(rel), .handle = r->dbs[i].handle,
		};

		if (r->created[i] && (status || err))
			lp_call(ctx, PTASK_IOC_DATABLOCK_RELEASE, &rel);
	}
	free(r);
}

static void *worker(void *arg)
{
	struct ptask_ctx *ctx = arg;
	struct ptask_invocation inv[WORKER_BATCH];
	struct ptask_invocation_port *ports;
	struct lp_mem *mems;
	uint32_t i;
	int err;

	ports = calloc(WORKER_PORTS, sizeof(*ports));
	mems = calloc(WORKER_PORTS, sizeof(*mems));
	if (!ports || !mems) {
		free(ports);
		free(mems);
		return NULL;
	}
	while (!ctx->stopping) {
		struct ptask_exec_take take = {
			.size = sizeof(take),
			.flags = PTASK_TAKE_SELF,
			.max_invocations = WORKER_BATCH,
			.max_ports = WORKER_PORTS,
			.invocations = (uintptr_t)inv,
			.ports = (uintptr_t)ports,
			.timeout_ns = lp_deadline(WORKER_POLL_MS * 1000000LL),
		};

		/* mems are all unknown here: a take by the socket fills none */
		err = lp_call_mem(ctx, PTASK_IOC_EXEC_TAKE, &take, mems);
		if (err == -ETIMEDOUT || err == -EINTR || err == -EAGAIN)
			continue;
		if (err)
			break;	/* the daemon or the fd went away */
		for (i = 0; i < take.n_invocations; i++)
			run_one(ctx, &inv[i], ports, mems);
		/* only what this take wrote, not the whole array every time */
		memset(mems, 0, (size_t)take.n_ports * sizeof(*mems));
	}
	free(ports);
	free(mems);
	return NULL;
}

int lp_cpu_register(struct ptask_ctx *ctx, uint32_t ptask, ptask_cpu_fn fn,
		    void *arg)
{
	struct lp_cpu_body *b;
	int err = 0;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->ptask = ptask;
	b->fn = fn;
	b->arg = arg;
	pthread_mutex_lock(&ctx->lock);
	b->next = ctx->bodies;
	ctx->bodies = b;
	if (!ctx->worker_running) {
		err = -pthread_create(&ctx->worker, NULL, worker, ctx);
		ctx->worker_running = !err;
	}
	pthread_mutex_unlock(&ctx->lock);
	return err;
}

void lp_cpu_stop(struct ptask_ctx *ctx)
{
	struct lp_cpu_body *b;

	if (ctx->worker_running)
		pthread_join(ctx->worker, NULL);
	ctx->worker_running = false;
	while ((b = ctx->bodies)) {
		ctx->bodies = b->next;
		free(b);
	}
}
