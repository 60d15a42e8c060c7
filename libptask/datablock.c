// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * datablock.c - datablocks a program holds: create, map, release, and
 * moving them with push and pull.
 *
 * User mode with rings: create and pull learn where the bytes are
 * (struct lp_mem), so map costs nothing once the arena is mapped here,
 * and release is fire and forget (transport_ring.c): it returns 0 at
 * once, and a release ptaskd refuses is counted in the context.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

uint32_t ptask_db_handle(const struct ptask_db *db)
{
	return db->handle;
}

uint64_t ptask_db_bytes(const struct ptask_db *db)
{
	return db->bytes;
}

uint64_t ptask_db_records(const struct ptask_db *db)
{
	return db->records;
}

int ptask_datablock_create(struct ptask_ctx *ctx, uint32_t tmpl,
			   uint64_t bytes, uint64_t records,
			   struct ptask_db **out)
{
	struct ptask_datablock_create a = {
		.size = sizeof(a), .template = tmpl, .bytes = bytes,
		.records = records,
	};
	struct ptask_db *db;
	int err;

	db = calloc(1, sizeof(*db));
	if (!db)
		return -ENOMEM;
	err = lp_call_mem(ctx, PTASK_IOC_DATABLOCK_CREATE, &a, &db->mem);
	if (err) {
		free(db);
		return err;
	}
	db->handle = a.handle;
	db->bytes = a.bytes;
	db->records = a.records;
	db->mmap_offset = a.mmap_offset;
	*out = db;
	return 0;
}

int ptask_datablock_map(struct ptask_ctx *ctx, struct ptask_db *db,
			void **data)
{
	int err;

	if (!db)
		return -EINVAL;
	if (!db->data) {
		/* User mode with rings: no round trip once the arena is here. */
		err = -ENOENT;
		if (db->mem.known && ctx->t->map_at)
			err = ctx->t->map_at(ctx, &db->mem, db->bytes, &db->data,
					     &db->cookie);
		if (err == -ENOENT)
			err = ctx->t->map(ctx, db->handle, db->mmap_offset,
					  db->bytes, &db->data, &db->cookie);
		if (err)
			return err;
	}
	*data = db->data;
	return 0;
}

int ptask_datablock_release(struct ptask_ctx *ctx, struct ptask_db *db)
{
	struct ptask_datablock_release a = { .size = sizeof(a) };
	int err;

	if (!db)
		return 0;
	if (db->data)
		ctx->t->unmap(ctx, db->data, db->bytes, db->cookie);
	a.handle = db->handle;
	err = lp_call(ctx, PTASK_IOC_DATABLOCK_RELEASE, &a);
	free(db);
	return err;
}

static void push_args(struct ptask_push *a, uint32_t channel,
		      const struct ptask_db *db, int64_t records,
		      int64_t timeout_ns)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->channel = channel;
	a->datablock = db->handle;
	if (records >= 0) {
		a->flags |= PTASK_PUSH_SET_RECORDS;
		a->records = (uint64_t)records;
	}
	if (timeout_ns == PTASK_NOWAIT)
		a->flags |= PTASK_NONBLOCK;
	else
		a->timeout_ns = lp_deadline(timeout_ns);
}

int ptask_push(struct ptask_ctx *ctx, uint32_t channel, struct ptask_db *db,
	       int64_t records, int64_t timeout_ns)
{
	struct ptask_push a;
	int err;

	if (!db)
		return -EINVAL;
	push_args(&a, channel, db, records, timeout_ns);
	err = lp_call(ctx, PTASK_IOC_PUSH, &a);
	if (!err && records >= 0)
		db->records = (uint64_t)records;
	return err;
}

/*
 * Where the transport cannot queue a push (kernel mode, the socket, no
 * ring to be had) it is made synchronously, which keeps every promise
 * of an asynchronous one: its own error comes back at once instead of
 * later.
 */
int ptask_push_async(struct ptask_ctx *ctx, uint32_t channel,
		     struct ptask_db *db, int64_t records)
{
	struct ptask_push a;
	int err = 1;

	if (!ctx || !db)
		return -EINVAL;
	push_args(&a, channel, db, records, PTASK_FOREVER);
	if (ctx->t->push_async)
		err = ctx->t->push_async(ctx, &a);
	if (err == 1)
		err = lp_call(ctx, PTASK_IOC_PUSH, &a);
	if (!err && records >= 0)
		db->records = (uint64_t)records;
	return err;
}

int ptask_sync(struct ptask_ctx *ctx)
{
	int err = 0;

	if (!ctx)
		return -EINVAL;
	if (ctx->t->async_wait)
		err = ctx->t->async_wait(ctx);
	/* Its own failure (ptaskd went) before theirs. */
	if (!err)
		err = __atomic_exchange_n(&ctx->async_err, 0, __ATOMIC_RELAXED);
	return err;
}

int ptask_pull(struct ptask_ctx *ctx, uint32_t channel, int64_t timeout_ns,
	       struct ptask_db **out)
{
	struct ptask_pull a = { .size = sizeof(a), .channel = channel };
	struct ptask_db *db;
	int err;

	db = calloc(1, sizeof(*db));
	if (!db)
		return -ENOMEM;
	if (timeout_ns == PTASK_NOWAIT)
		a.flags |= PTASK_NONBLOCK;
	else
		a.timeout_ns = lp_deadline(timeout_ns);
	err = lp_call_mem(ctx, PTASK_IOC_PULL, &a, &db->mem);
	if (err) {
		free(db);
		return err;
	}
	db->handle = a.datablock;
	db->bytes = a.bytes;
	db->records = a.records;
	db->mmap_offset = a.mmap_offset;
	*out = db;
	return 0;
}

int ptask_pull_slice(struct ptask_ctx *ctx, uint32_t channel,
		     const struct ptask_db *pushed, int64_t timeout_ns,
		     struct ptask_db **out)
{
	struct ptask_pull a = {
		.size = sizeof(a), .flags = PTASK_PULL_SLICE,
		.channel = channel,
	};
	struct ptask_db *db;
	int err;

	if (!pushed)
		return -EINVAL;
	a.datablock = pushed->handle;
	db = calloc(1, sizeof(*db));
	if (!db)
		return -ENOMEM;
	if (timeout_ns == PTASK_NOWAIT)
		a.flags |= PTASK_NONBLOCK;
	else
		a.timeout_ns = lp_deadline(timeout_ns);
	err = lp_call_mem(ctx, PTASK_IOC_PULL, &a, &db->mem);
	if (err) {
		free(db);
		return err;
	}
	db->handle = a.datablock;
	db->bytes = a.bytes;
	db->records = a.records;
	db->mmap_offset = a.mmap_offset;
	*out = db;
	return 0;
}

long long ptask_push_pull_copy(struct ptask_ctx *ctx, uint32_t in_channel,
			       const void *in, size_t in_bytes,
			       uint32_t out_channel, void *out,
			       size_t out_cap)
{
	struct ptask_db *db, *res;
	long long got;
	void *p;
	int err;

	err = ptask_datablock_create(ctx, 0, in_bytes, 0, &db);
	if (err)
		return err;
	err = ptask_datablock_map(ctx, db, &p);
	if (!err) {
		memcpy(p, in, in_bytes);
		err = ptask_push(ctx, in_channel, db, -1, PTASK_FOREVER);
	}
	ptask_datablock_release(ctx, db);
	if (err)
		return err;
	err = ptask_pull(ctx, out_channel, PTASK_FOREVER, &res);
	if (err)
		return err;
	got = (long long)res->bytes;
	err = ptask_datablock_map(ctx, res, &p);
	if (!err)
		memcpy(out, p, res->bytes < out_cap ? res->bytes : out_cap);
	ptask_datablock_release(ctx, res);
	return err ? err : got;
}
