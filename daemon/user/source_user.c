// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * source_user.c - the engine's source in user mode: an in-process client
 * of the daemon's own namespace, registered as the executor, making the
 * same calls the module's executor fd makes, without a system call.
 *
 * Mappings: db_map takes a reference on the datablock's buffer so its
 * memory outlives the datablock while the engine uses it (as an mmap
 * does in the kernel); db_unmap drops it.  They are kept in a small table
 * by handle.  Locking: the table is under the namespace lock.
 *
 * A helper's calls (pd_engine_help) come with its struct pd_wake_defer,
 * which goes with the namespace call, so the executor wake-ups they make
 * are held back for the helper; the taker's and workers' come with NULL.
 * engine.h is included for the source interface it defines, the contract
 * between the engine and this file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/engine/engine.h"
#include "daemon/log.h"
#include "daemon/user/ns_user_priv.h"

struct mapping {
	uint32_t handle;
	struct ptask_buf *buf;
};

struct user_source {
	struct pd_source src;
	struct pd_ns *ns;
	struct pd_client *client;
	struct ptask_caller who;
	volatile bool stopping;
	struct mapping *maps;
	uint32_t nmaps;
	uint32_t capmaps;
};

static struct user_source *to_us(struct pd_source *s)
{
	return (struct user_source *)s;
}

static bool source_cancelled(void *arg)
{
	return ((struct user_source *)arg)->stopping;
}

static int us_take(struct pd_source *s, struct ptask_exec_take *arg,
		   struct ptask_invocation *inv,
		   struct ptask_invocation_port *ports,
		   struct pd_wake_defer *defer)
{
	struct user_source *us = to_us(s);
	struct ptask_call_io io = { .invocations = inv, .ports = ports };
	struct pd_call_ctx ctx = {
		.cancel = source_cancelled, .cancel_arg = us, .defer = defer,
	};
	int err;

	arg->size = sizeof(*arg);
	err = ptask_core_args_check(PTASK_IOC_EXEC_TAKE, arg);
	if (err)
		return err;
	return pd_ns_call(us->client, &us->who, PTASK_IOC_EXEC_TAKE, arg, &io,
			  &ctx);
}

static int us_complete(struct pd_source *s, struct ptask_exec_complete *arg,
		       const struct ptask_exec_output *outs,
		       struct pd_wake_defer *defer)
{
	struct user_source *us = to_us(s);
	struct ptask_call_io io = { .outputs = outs };
	struct pd_call_ctx ctx = { .defer = defer };
	int err;

	arg->size = sizeof(*arg);
	err = ptask_core_args_check(PTASK_IOC_EXEC_COMPLETE, arg);
	if (err)
		return err;
	return pd_ns_call(us->client, &us->who, PTASK_IOC_EXEC_COMPLETE, arg,
			  &io, &ctx);
}

static void us_settle_many(struct pd_source *s,
			   struct ptask_exec_complete *arg, const uint64_t *ids,
			   uint32_t n, int *errs, struct pd_wake_defer *defer)
{
	struct user_source *us = to_us(s);
	uint32_t i;
	int err;

	arg->size = sizeof(*arg);
	err = ptask_core_args_check(PTASK_IOC_EXEC_COMPLETE, arg);
	if (err) {
		for (i = 0; i < n; i++)
			errs[i] = err;
		return;
	}
	pd_ns_complete_many(us->client, &us->who, arg, ids, n, defer, errs);
}

static int us_ptask_info(struct pd_source *s,
			 struct ptask_exec_ptask_info *arg, void *code)
{
	struct user_source *us = to_us(s);
	struct ptask_call_io io = {
		.code_out = code,
		.code_out_len = code ? arg->code_len : 0,
	};
	int err;

	arg->size = sizeof(*arg);
	arg->code = (uintptr_t)code;
	err = ptask_core_args_check(PTASK_IOC_EXEC_PTASK_INFO, arg);
	if (err)
		return err;
	return pd_ns_call(us->client, &us->who, PTASK_IOC_EXEC_PTASK_INFO, arg,
			  &io, NULL);
}

static int maps_add(struct user_source *us, uint32_t handle,
		    struct ptask_buf *buf)
{
	struct mapping *grown;

	if (us->nmaps == us->capmaps) {
		uint32_t cap = us->capmaps ? 2 * us->capmaps : 64;

		grown = realloc(us->maps, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		us->maps = grown;
		us->capmaps = cap;
	}
	us->maps[us->nmaps].handle = handle;
	us->maps[us->nmaps].buf = buf;
	us->nmaps++;
	return 0;
}

static int us_db_map(struct pd_source *s, uint32_t handle,
		     uint64_t mmap_offset, uint64_t bytes, void **data)
{
	struct user_source *us = to_us(s);
	struct pd_map_info mi;
	struct ptask_buf *buf;
	int err;

	(void)mmap_offset;
	pd_ns_lock(us->ns);
	err = pd_ns_map_locked(us->client, handle, &mi, &buf);
	if (!err) {
		err = mi.bytes < bytes ? -EINVAL : maps_add(us, handle, buf);
		if (err)
			ptask_os_buf_put(buf);
	}
	pd_ns_unlock(us->ns);
	if (err)
		return err;
	*data = mi.addr;
	return 0;
}

static void us_db_map_many(struct pd_source *s, uint32_t n,
			   const struct pd_map_req *reqs, void **data)
{
	struct user_source *us = to_us(s);
	struct pd_map_info mi;
	struct ptask_buf *buf;
	uint32_t k;

	pd_ns_lock(us->ns);
	for (k = 0; k < n; k++) {
		data[k] = NULL;
		if (pd_ns_map_locked(us->client, reqs[k].handle, &mi, &buf))
			continue;
		if (mi.bytes < reqs[k].bytes ||
		    maps_add(us, reqs[k].handle, buf)) {
			ptask_os_buf_put(buf);
			continue;
		}
		data[k] = mi.addr;
	}
	pd_ns_unlock(us->ns);
}

/* Drop one mapping of @handle.  Under the namespace lock. */
static void unmap_locked(struct user_source *us, uint32_t handle)
{
	uint32_t i;

	for (i = us->nmaps; i-- > 0;) {
		if (us->maps[i].handle != handle)
			continue;
		ptask_os_buf_put(us->maps[i].buf);
		us->maps[i] = us->maps[--us->nmaps];
		break;
	}
}

static void us_db_unmap(struct pd_source *s, uint32_t handle, void *data,
			uint64_t bytes)
{
	struct user_source *us = to_us(s);

	(void)data;
	(void)bytes;
	pd_ns_lock(us->ns);
	unmap_locked(us, handle);
	pd_ns_unlock(us->ns);
}

/*
 * A job's mappings in one lock round: a batch of 16 members let go of 32
 * one round each (perf on an H200, 2026-12-02: 0.34 us an invocation of
 * the completion thread in P1b).
 */
static void us_db_unmap_many(struct pd_source *s, uint32_t n,
			     const uint32_t *handles)
{
	struct user_source *us = to_us(s);
	uint32_t k;

	pd_ns_lock(us->ns);
	for (k = 0; k < n; k++)
		unmap_locked(us, handles[k]);
	pd_ns_unlock(us->ns);
}

static int us_db_create(struct pd_source *s, const struct ptask_invocation *inv,
			uint64_t bytes, uint32_t *handle, void **data,
			struct pd_wake_defer *defer)
{
	struct user_source *us = to_us(s);
	struct ptask_datablock_create arg = {
		.size = sizeof(arg),
		.bytes = bytes,
		/* its owner pays (core/uid_usage.c) */
		.flags = inv ? PTASK_DATABLOCK_CREATE_OUTPUT : 0,
		.invocation = inv ? inv->id : 0,
	};
	struct ptask_datablock_release rel = {
		.size = sizeof(rel),
	};
	struct ptask_call_io io = { };
	struct pd_map_info mi;
	struct ptask_buf *buf;
	int err;

	err = ptask_core_args_check(PTASK_IOC_DATABLOCK_CREATE, &arg);
	if (err)
		return err;
	pd_ns_lock_deferring(us->ns, defer);
	/* The owner's arena; the device writes every byte before a client
	 * can see them, so no zeroing. */
	us->client->alloc_uid = inv ? inv->owner_uid : 0;
	us->client->alloc_zero = false;
	err = ptask_core_call(us->client->core, &us->who,
			      PTASK_IOC_DATABLOCK_CREATE, &arg, &io);
	if (err)
		goto out_unlock;
	err = pd_ns_map_locked(us->client, arg.handle, &mi, &buf);
	if (!err) {
		err = maps_add(us, arg.handle, buf);
		if (err)
			ptask_os_buf_put(buf);
	}
	if (err) {
		rel.handle = arg.handle;
		ptask_core_call(us->client->core, &us->who,
				PTASK_IOC_DATABLOCK_RELEASE, &rel, &io);
		goto out_unlock;
	}
	*handle = arg.handle;
	*data = mi.addr;
out_unlock:
	pd_ns_unlock(us->ns);
	return err;
}

static int us_db_release(struct pd_source *s, uint32_t handle,
			 struct pd_wake_defer *defer)
{
	struct user_source *us = to_us(s);
	struct ptask_datablock_release rel = {
		.size = sizeof(rel),
		.handle = handle,
	};
	struct pd_call_ctx ctx = { .defer = defer };

	return pd_ns_call(us->client, &us->who, PTASK_IOC_DATABLOCK_RELEASE,
			  &rel, NULL, &ctx);
}

static void us_interrupt(struct pd_source *s)
{
	struct user_source *us = to_us(s);

	us->stopping = true;
	pthread_cond_broadcast(&us->client->cond);
}

/* Wake-ups an engine thread held back and did not make up for. */
static void us_wake(struct pd_source *s)
{
	pd_ns_wake_executor(to_us(s)->ns);
}

static const struct pd_source_ops user_source_ops = {
	.take = us_take,
	.complete = us_complete,
	.settle_many = us_settle_many,
	.ptask_info = us_ptask_info,
	.db_map = us_db_map,
	.db_map_many = us_db_map_many,
	.db_unmap = us_db_unmap,
	.db_unmap_many = us_db_unmap_many,
	.db_create = us_db_create,
	.db_release = us_db_release,
	.interrupt = us_interrupt,
	.wake = us_wake,
	.caps = PD_SOURCE_AHEAD | PD_SOURCE_TAKE_AHEAD | PD_SOURCE_FUSE,
};

int pd_ns_source_open(struct pd_ns *ns, uint32_t n_accels,
		      struct pd_source **out)
{
	struct user_source *us;
	int err;

	us = calloc(1, sizeof(*us));
	if (!us)
		return -ENOMEM;
	us->src.ops = &user_source_ops;
	us->ns = ns;
	us->who.pid = 0;
	us->who.dac_override = true;
	us->who.sys_nice = true;
	err = pd_ns_client_open(ns, &us->who, &us->client);
	if (err)
		goto err_free;
	pd_ns_lock(ns);
	err = ptask_core_exec_register(us->client->core, n_accels);
	pd_ns_unlock(ns);
	if (err)
		goto err_put;
	*out = &us->src;
	return 0;

err_put:
	pd_ns_client_put(us->client);
err_free:
	free(us);
	return err;
}

void pd_ns_source_close(struct pd_source *s)
{
	struct user_source *us = to_us(s);
	uint32_t i;

	pd_ns_lock(us->ns);
	for (i = 0; i < us->nmaps; i++)
		ptask_os_buf_put(us->maps[i].buf);
	us->nmaps = 0;
	ptask_core_exec_unregister(us->client->core);
	pd_ns_unlock(us->ns);
	pd_ns_client_put(us->client);
	free(us->maps);
	free(us);
}
