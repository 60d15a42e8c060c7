// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cuda_space.c - contexts and spaces of ptaskd's CUDA backend (see
 * cuda_priv.h and, for what a context of its own gives, cuda.c).
 *
 * DOC: threads and the current context
 *
 * A device worker thread runs the operations of many spaces.  CUDA keeps
 * the current context per thread, so every operation makes its space's
 * context current, and a thread-local cache skips the driver call when it
 * already is.  The cache holds a context *id* (a counter never reused),
 * not the CUcontext pointer, because the driver may hand out the address
 * of a destroyed context again.  It assumes nothing else on ptaskd's
 * threads changes the current context behind the backend's back.  The
 * cache is this file's alone: the rest of the backend goes through
 * pd_cuda_ctx_use() and pd_cuda_ctx_forget().
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "daemon/backend/cuda_priv.h"

static atomic_uint_fast64_t next_ctx_id = 1;
/*
 * The id of the context current on this thread, or 0: a cache of the
 * driver's own per-thread state (cuCtxSetCurrent binds a context to the
 * calling thread), so thread-local like it, and pd_cuda_ctx_use() skips a
 * driver call when the context is current already.  Ids, not pointers: a
 * context freed and another allocated at its address must not match.
 * It passes nothing between files.
 */
static __thread uint64_t cur_ctx_id;

/* Make @c current on this thread unless it already is. */
int pd_cuda_ctx_use(struct cuda_be *cb, const struct cuda_ctx *c)
{
	CUresult r;

	if (cur_ctx_id == c->id)
		return 0;
	r = cb->cu.CtxSetCurrent(c->ctx);
	if (r != CUDA_SUCCESS) {
		cur_ctx_id = 0;
		return pd_cuda_fail(cb, r, "cuCtxSetCurrent");
	}
	cur_ctx_id = c->id;
	return 0;
}

/* Device @dev's primary context, retained on first use. */
int pd_cuda_ctx_primary(struct cuda_be *cb, uint32_t dev, struct cuda_ctx *out)
{
	CUresult r;
	int err = 0;

	pthread_mutex_lock(&cb->lock);
	if (!cb->primary[dev].ctx) {
		r = cb->cu.DevicePrimaryCtxRetain(&cb->primary[dev].ctx,
						  cb->dev[dev]);
		if (r != CUDA_SUCCESS) {
			cb->primary[dev].ctx = NULL;
			err = pd_cuda_fail(cb, r, "cuDevicePrimaryCtxRetain");
			goto out_unlock;
		}
		cb->primary[dev].id = atomic_fetch_add(&next_ctx_id, 1);
	}
	*out = cb->primary[dev];
out_unlock:
	pthread_mutex_unlock(&cb->lock);
	return err;
}

/* Context @id is gone: this thread's cache must not name it any more. */
void pd_cuda_ctx_forget(uint64_t id)
{
	if (cur_ctx_id == id)
		cur_ctx_id = 0;
}

/*
 * A new context on @dev.  cuCtxCreate pushes it on this thread's context
 * stack; it is popped again at once so that creating many spaces does not
 * grow the stack, and whatever was current (and cached) stays current.
 */
static int ctx_create(struct cuda_be *cb, uint32_t dev, struct cuda_ctx *out)
{
	CUcontext popped;
	CUresult r;

	if (cb->cu.CtxCreate_v4)
		r = cb->cu.CtxCreate_v4(&out->ctx, NULL, CU_CTX_SCHED_AUTO,
					cb->dev[dev]);
	else
		r = cb->cu.CtxCreate_v2(&out->ctx, CU_CTX_SCHED_AUTO,
					cb->dev[dev]);
	if (r != CUDA_SUCCESS)
		return pd_cuda_fail(cb, r, "cuCtxCreate");
	r = cb->cu.CtxPopCurrent(&popped);
	if (r != CUDA_SUCCESS) {
		/* the new context stays current; forget what was cached */
		cur_ctx_id = 0;
		pd_cuda_fail(cb, r, "cuCtxPopCurrent");
	}
	out->id = atomic_fetch_add(&next_ctx_id, 1);
	return 0;
}

static void ctx_destroy(struct cuda_be *cb, struct cuda_ctx *c)
{
	CUresult r;

	/*
	 * Destroying pops the context from this thread if current; other
	 * threads that cached its id never see that id again.
	 */
	pd_cuda_ctx_forget(c->id);
	r = cb->cu.CtxDestroy(c->ctx);
	if (r != CUDA_SUCCESS)
		pd_cuda_fail(cb, r, "cuCtxDestroy");
	c->ctx = NULL;
}

/* Free what a space holds in its context; the context is current. */
static void space_release(struct cuda_be *cb, struct cuda_space *s)
{
	CUresult r;

	/* graphs name the functions of the modules about to go */
	pd_shapes_free(&s->shapes);
	pd_cuda_lone_drop(cb, s, NULL);
	pd_cuda_code_release(cb, s);
	/* an own context frees its memory as it goes; a shared one does not */
	pd_cuda_mem_release(cb, s, s->primary);
	if (s->xev) {
		r = cb->cu.EventDestroy(s->xev);
		if (r != CUDA_SUCCESS)
			pd_cuda_fail(cb, r, "cuEventDestroy");
	}
	pd_cuda_lanes_close(cb, s);
}

int pd_cuda_space_open(struct pd_backend *be, uint32_t dev, uint64_t owner,
		       void **space)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s;
	CUresult r;
	int err;

	if (dev >= cb->ndev)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cb = cb;
	s->dev = dev;
	s->owner = owner;
	s->primary = cb->shared || owner == 0;
	s->shapes.free_unit = pd_cuda_graph_free;
	s->shapes.ctx = cb;
	err = pc_hash_init(&s->allocs, 64);
	if (err)
		goto err_free_space;
	err = pthread_mutex_init(&s->xlock, NULL);
	if (err) {
		err = -err;
		goto err_fini_allocs;
	}
	if (s->primary)
		err = pd_cuda_ctx_primary(cb, dev, &s->c);
	else
		err = ctx_create(cb, dev, &s->c);
	if (err)
		goto err_destroy_lock;
	err = pd_cuda_ctx_use(cb, &s->c);
	if (err)
		goto err_destroy_ctx;
	err = pd_cuda_lanes_open(cb, s);
	if (err)
		goto err_release;
	r = cb->cu.EventCreate(&s->xev, CU_EVENT_DISABLE_TIMING);
	if (r != CUDA_SUCCESS) {
		s->xev = NULL;
		err = pd_cuda_fail(cb, r, "cuEventCreate");
		goto err_release;
	}
	*space = s;
	return 0;

err_release:
	space_release(cb, s);
err_destroy_ctx:
	if (!s->primary)
		ctx_destroy(cb, &s->c);
err_destroy_lock:
	pthread_mutex_destroy(&s->xlock);
err_fini_allocs:
	pc_hash_fini(&s->allocs);
err_free_space:
	free(s);
	return err;
}

void pd_cuda_space_close(struct pd_backend *be, void *space)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	uint32_t i;
	CUresult r;

	if (!s)
		return;
	if (pd_cuda_ctx_use(cb, &s->c) == 0) {
		pd_cuda_flush_all(cb, s);
		/* nothing may still run on memory about to be freed */
		for (i = 0; i < s->nlanes; i++) {
			r = cb->cu.StreamSynchronize(s->lane[i].stream);
			if (r != CUDA_SUCCESS && !atomic_load(&s->failed))
				pd_cuda_fail(cb, r, "cuStreamSynchronize (close)");
		}
		space_release(cb, s);
	}
	if (!s->primary)
		ctx_destroy(cb, &s->c);
	pthread_mutex_destroy(&s->xlock);
	pd_cuda_mem_release(cb, s, false);
	pc_hash_fini(&s->allocs);
	free(s);
}
