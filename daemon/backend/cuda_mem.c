// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cuda_mem.c - memory of ptaskd's CUDA backend (see cuda_priv.h): a
 * space's device allocations, pinned host memory, and copies within a
 * space and between spaces.
 *
 * Host memory given to host_register is pinned and mapped for the device
 * (CU_MEMHOSTREGISTER_DEVICEMAP | PORTABLE: pinned in every context and
 * mapped in the one GPU address space all contexts of the process share),
 * so that host_device_ptr can hand a kernel its device address and the
 * kernel read and write it in place over PCIe.  The backend keeps the
 * registered ranges (cuda_be.regs, under cuda_be.lock) to check that a
 * range asked for lies inside one.
 *
 * A space keeps the set of its allocations (struct cuda_alloc in
 * @s->allocs, common/hash.h, keyed by the device pointer; only the
 * space's thread touches it): mem_free of a pointer the space does not
 * own is refused (in a shared context it could be another client's),
 * and closing a space frees what is left.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "daemon/backend/cuda_priv.h"
#include "daemon/log.h"

/* One allocation of a space: its node's key is the device pointer. */
struct cuda_alloc {
	struct pc_hash_node node;
};

int pd_cuda_mem_alloc(struct pd_backend *be, void *space, size_t bytes,
		      uint64_t *dptr)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	struct cuda_alloc *a;
	CUdeviceptr p;
	CUresult r;
	int err;

	if (!bytes)
		return -EINVAL;
	err = pd_cuda_ctx_use(cb, &s->c);
	if (err)
		return err;
	a = malloc(sizeof(*a));
	if (!a)
		return -ENOMEM;
	r = cb->cu.MemAlloc(&p, bytes);
	if (r != CUDA_SUCCESS) {
		free(a);
		return pd_cuda_fail(cb, r, "cuMemAlloc");
	}
	pc_hash_add(&s->allocs, &a->node, p);
	*dptr = p;
	return 0;
}

void pd_cuda_mem_free(struct pd_backend *be, void *space, uint64_t dptr)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	struct pc_hash_node *n = pc_hash_find(&s->allocs, dptr);
	CUresult r;

	if (!n) {
		fprintf(stderr, "ptaskd: cuda: mem_free of %#llx: not allocated in this space\n",
			(unsigned long long)dptr);
		return;
	}
	pc_hash_del(&s->allocs, n);
	free(pc_hash_entry(n, struct cuda_alloc, node));
	if (pd_cuda_ctx_use(cb, &s->c))
		return;
	r = cb->cu.MemFree(dptr);
	if (r != CUDA_SUCCESS)
		pd_cuda_fail(cb, r, "cuMemFree");
}

void pd_cuda_mem_release(struct cuda_be *cb, struct cuda_space *s,
			 bool free_memory)
{
	struct pc_hash_node *n;
	CUresult r;

	while ((n = pc_hash_pop(&s->allocs))) {
		if (free_memory) {
			r = cb->cu.MemFree(n->key);
			if (r != CUDA_SUCCESS)
				pd_cuda_fail(cb, r, "cuMemFree");
		}
		free(pc_hash_entry(n, struct cuda_alloc, node));
	}
}

/* The registration holding [@p, @p + @bytes), or NULL (cb->lock held). */
static struct cuda_hostreg *hostreg_find(struct cuda_be *cb, uintptr_t p,
					 size_t bytes)
{
	uint32_t i;

	for (i = 0; i < cb->nregs; i++) {
		struct cuda_hostreg *g = &cb->regs[i];

		if (p >= g->base && bytes <= g->bytes &&
		    p - g->base <= g->bytes - bytes)
			return g;
	}
	return NULL;
}

/*
 * Pin and map host memory once per arena.  The registration needs some
 * current context (device 0's primary one); PORTABLE makes the pages
 * count as pinned in every context, per-client ones made later included,
 * and DEVICEMAP maps them for kernels (host_device_ptr).  A device that
 * cannot map host memory gets them pinned only.  The device address is
 * asked for once, here: with unified addressing (every 64-bit Linux
 * system) the pointer cuMemHostGetDevicePointer gives "will be suitable
 * for use on all devices" (cuda.h), in every context, so host_device_ptr
 * needs no driver call.
 */
int pd_cuda_host_register(struct pd_backend *be, void *p, size_t bytes)
{
	struct cuda_be *cb = be->priv;
	struct cuda_hostreg *g;
	bool mapped = true;
	struct cuda_ctx c;
	CUdeviceptr d = 0;
	CUresult r;
	int err;

	if (!p || !bytes)
		return -EINVAL;
	err = pd_cuda_ctx_primary(cb, 0, &c);
	if (!err)
		err = pd_cuda_ctx_use(cb, &c);
	if (err)
		return err;
	pthread_mutex_lock(&cb->lock);
	if (cb->nregs == PD_CUDA_MAX_HOSTREGS) {
		pthread_mutex_unlock(&cb->lock);
		pd_log_err("cuda: host_register: %d ranges registered already",
			   PD_CUDA_MAX_HOSTREGS);
		return -ENOSPC;
	}
	r = cb->cu.MemHostRegister(p, bytes, CU_MEMHOSTREGISTER_PORTABLE |
					     CU_MEMHOSTREGISTER_DEVICEMAP);
	if (r == CUDA_ERROR_NOT_SUPPORTED) {
		mapped = false;
		r = cb->cu.MemHostRegister(p, bytes, CU_MEMHOSTREGISTER_PORTABLE);
	}
	if (r == CUDA_SUCCESS && mapped &&
	    cb->cu.MemHostGetDevicePointer(&d, p, 0) != CUDA_SUCCESS) {
		pd_log_warn("cuda: host_register: no device address for %p: kernels cannot use it in place",
			    p);
		mapped = false;
	}
	if (r == CUDA_SUCCESS) {
		g = &cb->regs[cb->nregs++];
		g->base = (uintptr_t)p;
		g->bytes = bytes;
		g->mapped = mapped;
		g->dbase = d;
	}
	pthread_mutex_unlock(&cb->lock);
	if (r == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) {
		pd_cuda_fail(cb, r, "cuMemHostRegister");
		return -EEXIST;
	}
	if (r != CUDA_SUCCESS)
		return pd_cuda_fail(cb, r, "cuMemHostRegister");
	return 0;
}

void pd_cuda_host_unregister(struct pd_backend *be, void *p)
{
	struct cuda_be *cb = be->priv;
	struct cuda_ctx c;
	CUresult r;
	uint32_t i;

	pthread_mutex_lock(&cb->lock);
	for (i = 0; i < cb->nregs; i++) {
		if (cb->regs[i].base == (uintptr_t)p) {
			cb->regs[i] = cb->regs[--cb->nregs];
			break;
		}
	}
	pthread_mutex_unlock(&cb->lock);
	if (pd_cuda_ctx_primary(cb, 0, &c) || pd_cuda_ctx_use(cb, &c))
		return;
	r = cb->cu.MemHostUnregister(p);
	if (r != CUDA_SUCCESS)
		pd_cuda_fail(cb, r, "cuMemHostUnregister");
}

/*
 * The device address of registered host memory: the registration's
 * device base (valid in every context, see pd_cuda_host_register) plus
 * the offset.  Any thread; no driver call.
 */
int pd_cuda_host_device_ptr(struct pd_backend *be, void *space, void *host,
			    size_t bytes, uint64_t *dptr)
{
	struct cuda_be *cb = be->priv;
	struct cuda_hostreg *g;
	uintptr_t p = (uintptr_t)host;
	int err = 0;

	if (!space || !host || !bytes || !dptr)
		return -EINVAL;
	pthread_mutex_lock(&cb->lock);
	g = hostreg_find(cb, p, bytes);
	if (!g)
		err = -ENOENT;
	else if (!g->mapped)
		err = -EOPNOTSUPP;
	else
		*dptr = g->dbase + (p - g->base);
	pthread_mutex_unlock(&cb->lock);
	return err;
}

int pd_cuda_copy_h2d(struct pd_backend *be, void *space, uint32_t lane,
		     uint64_t dst, const void *src, size_t bytes)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	struct cuda_lane *l;
	CUresult r;
	int err;

	err = pd_cuda_lane_get(s, lane, &l);
	if (err || !bytes)
		return err;
	err = pd_cuda_lane_flush(cb, s, l);
	if (err >= 0)
		err = pd_cuda_ctx_use(cb, &s->c);
	if (err)
		return err;
	r = cb->cu.MemcpyHtoDAsync(dst, src, bytes, l->stream);
	if (r != CUDA_SUCCESS)
		return pd_cuda_queue_fail(cb, s, r, "cuMemcpyHtoDAsync");
	return 0;
}

int pd_cuda_copy_d2h(struct pd_backend *be, void *space, uint32_t lane,
		     void *dst, uint64_t src, size_t bytes)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	struct cuda_lane *l;
	CUresult r;
	int err;

	err = pd_cuda_lane_get(s, lane, &l);
	if (err || !bytes)
		return err;
	err = pd_cuda_lane_flush(cb, s, l);
	if (err >= 0)
		err = pd_cuda_ctx_use(cb, &s->c);
	if (err)
		return err;
	r = cb->cu.MemcpyDtoHAsync(dst, src, bytes, l->stream);
	if (r != CUDA_SUCCESS)
		return pd_cuda_queue_fail(cb, s, r, "cuMemcpyDtoHAsync");
	return 0;
}

/*
 * Make lane @tl of @to wait for everything queued so far on lane @fl of
 * @from.  @from may belong to another thread: its xlock keeps two copies
 * from re-recording its event between one's record and wait.
 */
static int stream_order(struct cuda_be *cb, struct cuda_space *from,
			struct cuda_lane *fl, struct cuda_space *to,
			struct cuda_lane *tl)
{
	CUresult r;
	int err;

	pthread_mutex_lock(&from->xlock);
	err = pd_cuda_ctx_use(cb, &from->c);
	if (err)
		goto out_unlock;
	r = cb->cu.EventRecord(from->xev, fl->stream);
	if (r != CUDA_SUCCESS) {
		err = pd_cuda_fail(cb, r, "cuEventRecord");
		goto out_unlock;
	}
	err = pd_cuda_ctx_use(cb, &to->c);
	if (err)
		goto out_unlock;
	/* a wait may name an event of another context or device */
	r = cb->cu.StreamWaitEvent(tl->stream, from->xev, 0);
	if (r != CUDA_SUCCESS)
		err = pd_cuda_fail(cb, r, "cuStreamWaitEvent");
out_unlock:
	pthread_mutex_unlock(&from->xlock);
	return err;
}

/*
 * Let @dst's context map @src's memory, so peer copies go device to
 * device rather than through host memory.  Only between spaces of one
 * owner (or shared ones): mapping another client's memory into a context
 * would let that context's kernels read it.  Failure is not an error:
 * the copy is then staged by the driver.
 */
static void peer_enable(struct cuda_be *cb, struct cuda_space *dst,
			struct cuda_space *src)
{
	CUresult r;
	uint32_t i;

	if (dst->dev == src->dev || dst->owner != src->owner ||
	    dst->primary != src->primary || !cb->info[dst->dev].peer[src->dev])
		return;
	for (i = 0; i < dst->npeers; i++)
		if (dst->peers[i] == src->c.id)
			return;
	if (dst->npeers == PD_CUDA_MAX_PEERS)
		return;
	r = cb->cu.CtxEnablePeerAccess(src->c.ctx, 0);
	if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
		pd_cuda_fail(cb, r, "cuCtxEnablePeerAccess (copies staged)");
		return;
	}
	dst->peers[dst->npeers++] = src->c.id;
}

int pd_cuda_copy_d2d(struct pd_backend *be, void *dst_space,
		     uint32_t dst_lane, uint64_t dst, void *src_space,
		     uint32_t src_lane, uint64_t src, size_t bytes)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *d = dst_space, *s = src_space;
	struct cuda_lane *dl, *sl;
	CUresult r;
	int err;

	err = pd_cuda_lane_get(d, dst_lane, &dl);
	if (!err)
		err = pd_cuda_lane_get(s, src_lane, &sl);
	if (err || !bytes)
		return err;
	/* held launches go first (the source's: same device, same thread) */
	err = pd_cuda_lane_flush(cb, s, sl);
	if (err >= 0)
		err = pd_cuda_lane_flush(cb, d, dl);
	if (err < 0)
		return err;
	if (d == s && dl == sl) {
		err = pd_cuda_ctx_use(cb, &d->c);
		if (err)
			return err;
		r = cb->cu.MemcpyDtoDAsync(dst, src, bytes, dl->stream);
		return r == CUDA_SUCCESS ? 0 : pd_cuda_fail(cb, r, "cuMemcpyDtoDAsync");
	}
	err = stream_order(cb, s, sl, d, dl);
	if (err)
		return err;
	/* stream_order left @d's context current */
	if (d->c.id == s->c.id) {
		r = cb->cu.MemcpyDtoDAsync(dst, src, bytes, dl->stream);
		if (r != CUDA_SUCCESS)
			return pd_cuda_fail(cb, r, "cuMemcpyDtoDAsync");
	} else {
		peer_enable(cb, d, s);
		r = cb->cu.MemcpyPeerAsync(dst, d->c.ctx, src, s->c.ctx, bytes,
					   dl->stream);
		if (r != CUDA_SUCCESS)
			return pd_cuda_fail(cb, r, "cuMemcpyPeerAsync");
	}
	/* what @s queues next on its lane (a write, a free) waits for the read */
	return stream_order(cb, d, dl, s, sl);
}
