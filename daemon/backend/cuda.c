// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cuda.c - ptaskd's CUDA backend: the driver API, loaded at run
 * time (cuda_dl.h), behind struct pd_backend_ops (backend.h).
 *
 * DOC: contexts and isolation
 *
 * A space with an owner gets a context of its own (cuCtxCreate); a space
 * without one (owner 0, or every space with the "shared" config) uses
 * the device's primary context, retained on first use.
 *
 * What a context of its own does NOT give, measured on an H100 (driver
 * 580.159.04, CUDA 13.0, 2026-11-22, tests/gpu/cuda_backend_test.c): the
 * contexts of one process share the device's GPU address space, so a
 * kernel in client B's context that is handed a pointer of client A's
 * reads A's data; no fault.  Per-client contexts therefore do not keep
 * clients' memory apart inside one ptaskd process; that needs a process
 * per client (or MPS clients).  What they cost, same run: a launch + sync
 * alternating between two contexts took 145 us, against 12 us in one.
 * What they give: their own modules, streams and allocations, freed
 * together when the client goes.
 *
 * Each space has its own non-blocking stream, so work queued on two
 * spaces overlaps where the hardware lets it (contexts time-slice; the
 * streams of one context run concurrently).
 *
 * DOC: threads and the current context
 *
 * A device worker thread runs the operations of many spaces.  CUDA keeps
 * the current context per thread, so every operation makes its space's
 * context current, and a thread-local cache skips the driver call when it
 * already is.  The cache holds a context *id* (a counter never reused),
 * not the CUcontext pointer, because the driver may hand out the address
 * of a destroyed context again.  It assumes nothing else on ptaskd's
 * threads changes the current context behind the backend's back.
 *
 * DOC: device time
 *
 * Each launch is bracketed by a pair of timing events from a per-space
 * pool; sync sums the pairs' elapsed times.  Past PD_CUDA_MAX_PAIRS
 * launches between two syncs the last pair widens to cover the rest (its
 * end event is recorded again after each launch), so the pool stays
 * bounded; the sum then includes whatever ran between those launches.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uapi/ptask.h"
#include "daemon/backend/backend.h"
#include "daemon/backend/cuda_dl.h"
#include "daemon/fatal.h"

#define PD_CUDA_MAX_PAIRS	256	/* timed launches between two syncs */
#define PD_CUDA_MODULE_CACHE	32	/* modules kept loaded per space */
#define PD_CUDA_MAX_PEERS	(2 * PD_MAX_DEVICES)

struct cuda_ctx {
	CUcontext ctx;
	uint64_t id;
};

/**
 * struct cuda_be - the backend's state (pd_backend.priv)
 * @cu: driver entry points, read-only after init
 * @dev: CUdevice of each index
 * @shared: config "shared": every space uses the primary context
 * @lock: protects @primary (host_register may come from any thread)
 * @primary: each device's primary context once retained, else ctx NULL
 * @info: be->info, for peer checks in copy_d2d
 */
struct cuda_be {
	struct pd_cuda_api cu;
	uint32_t ndev;
	CUdevice dev[PD_MAX_DEVICES];
	bool shared;
	pthread_mutex_t lock;
	struct cuda_ctx primary[PD_MAX_DEVICES];
	const struct pd_device_info *info;
};

/* a module loaded in a space, found again by its code's bytes */
struct cuda_module {
	struct cuda_module *next;
	uint64_t hash;
	size_t len;
	char *code;		/* @len bytes and a NUL */
	CUmodule mod;
	unsigned int refs;	/* kernels handed out */
};

struct cuda_kernel {
	struct cuda_module *module;
	CUfunction fn;
	bool checked;		/* @nparams and @param_bytes are known */
	uint32_t nparams;
	uint32_t param_bytes[PD_MAX_PARAMS];
};

struct cuda_pair {
	CUevent start;
	CUevent end;
};

/**
 * struct cuda_space - one device seen through one context
 *
 * Everything but @xlock and @xev is used by the space's owning thread
 * alone (backend.h); copy_d2d, run by the thread of the other space,
 * takes @xlock around @xev and queues waits on @stream (thread-safe in
 * the driver).
 */
struct cuda_space {
	struct cuda_be *cb;
	uint32_t dev;
	uint64_t owner;
	bool primary;
	struct cuda_ctx c;
	CUstream stream;
	pthread_mutex_t xlock;
	CUevent xev;			/* orders copies between spaces */
	struct cuda_pair pairs[PD_CUDA_MAX_PAIRS];
	uint32_t npairs;		/* events created */
	uint32_t nused;			/* pairs recorded since the last sync */
	struct cuda_module *modules;
	uint32_t nmodules;
	uint64_t *allocs;		/* open addressing; 0 free, 1 deleted */
	size_t alloc_cap, alloc_used, alloc_count;
	uint64_t peers[PD_CUDA_MAX_PEERS];	/* ctx ids we can access */
	uint32_t npeers;
};

static atomic_uint_fast64_t next_ctx_id = 1;
/*
 * The id of the context current on this thread, or 0: a cache of the
 * driver's own per-thread state (cuCtxSetCurrent binds a context to the
 * calling thread), so thread-local like it, and ctx_use() skips a driver
 * call when the context is current already.  Ids, not pointers: a
 * context freed and another allocated at its address must not match.
 * It passes nothing between files.
 */
static __thread uint64_t cur_ctx_id;

/*
 * Errors after which the driver refuses all further work of the process
 * ("to continue using CUDA, the process must be terminated and
 * relaunched"); measured on an H100: one client's faulting kernel broke
 * every other context of ptaskd (Documentation/ptaskd.md, Isolation).
 */
static bool cu_sticky(CUresult r)
{
	return r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_TIMEOUT ||
	       (r >= CUDA_ERROR_HARDWARE_STACK_ERROR &&
		r <= CUDA_ERROR_LAUNCH_FAILED);
}

/* Log a failed driver call and map it: -ENOMEM or -EIO. */
static int cu_fail(struct cuda_be *cb, CUresult r, const char *what)
{
	const char *name = NULL;

	if (cb->cu.GetErrorName(r, &name) != CUDA_SUCCESS || !name)
		name = "unknown";
	fprintf(stderr, "ptaskd: cuda: %s: %s (%d)\n", what, name, r);
	if (cu_sticky(r))
		pd_fatal("cuda: %s: %s (%d) poisons every CUDA context of this process",
			 what, name, r);
	return r == CUDA_ERROR_OUT_OF_MEMORY ? -ENOMEM : -EIO;
}

/* Make @c current on this thread unless it already is. */
static int ctx_use(struct cuda_be *cb, const struct cuda_ctx *c)
{
	CUresult r;

	if (cur_ctx_id == c->id)
		return 0;
	r = cb->cu.CtxSetCurrent(c->ctx);
	if (r != CUDA_SUCCESS) {
		cur_ctx_id = 0;
		return cu_fail(cb, r, "cuCtxSetCurrent");
	}
	cur_ctx_id = c->id;
	return 0;
}

/* Device @dev's primary context, retained on first use. */
static int primary_get(struct cuda_be *cb, uint32_t dev, struct cuda_ctx *out)
{
	CUresult r;
	int err = 0;

	pthread_mutex_lock(&cb->lock);
	if (!cb->primary[dev].ctx) {
		r = cb->cu.DevicePrimaryCtxRetain(&cb->primary[dev].ctx,
						  cb->dev[dev]);
		if (r != CUDA_SUCCESS) {
			cb->primary[dev].ctx = NULL;
			err = cu_fail(cb, r, "cuDevicePrimaryCtxRetain");
			goto out_unlock;
		}
		cb->primary[dev].id = atomic_fetch_add(&next_ctx_id, 1);
	}
	*out = cb->primary[dev];
out_unlock:
	pthread_mutex_unlock(&cb->lock);
	return err;
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
		return cu_fail(cb, r, "cuCtxCreate");
	r = cb->cu.CtxPopCurrent(&popped);
	if (r != CUDA_SUCCESS) {
		/* the new context stays current; forget what was cached */
		cur_ctx_id = 0;
		cu_fail(cb, r, "cuCtxPopCurrent");
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
	if (cur_ctx_id == c->id)
		cur_ctx_id = 0;
	r = cb->cu.CtxDestroy(c->ctx);
	if (r != CUDA_SUCCESS)
		cu_fail(cb, r, "cuCtxDestroy");
	c->ctx = NULL;
}

/* Fill @info for device @i; its strength is normalised later. */
static int device_probe(struct cuda_be *cb, uint32_t i,
			struct pd_device_info *info)
{
	int sms = 0, khz = 0, mem_khz = 0;
	size_t bytes = 0;
	CUresult r;

	r = cb->cu.DeviceGet(&cb->dev[i], (int)i);
	if (r != CUDA_SUCCESS)
		return cu_fail(cb, r, "cuDeviceGet");
	r = cb->cu.DeviceGetName(info->name, sizeof(info->name), cb->dev[i]);
	if (r != CUDA_SUCCESS)
		return cu_fail(cb, r, "cuDeviceGetName");
	info->name[sizeof(info->name) - 1] = '\0';
	r = cb->cu.DeviceTotalMem(&bytes, cb->dev[i]);
	if (r != CUDA_SUCCESS)
		return cu_fail(cb, r, "cuDeviceTotalMem");
	r = cb->cu.DeviceGetAttribute(&sms,
			CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cb->dev[i]);
	if (r == CUDA_SUCCESS)
		r = cb->cu.DeviceGetAttribute(&khz,
				CU_DEVICE_ATTRIBUTE_CLOCK_RATE, cb->dev[i]);
	if (r == CUDA_SUCCESS)
		r = cb->cu.DeviceGetAttribute(&mem_khz,
				CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, cb->dev[i]);
	if (r != CUDA_SUCCESS)
		return cu_fail(cb, r, "cuDeviceGetAttribute");
	info->kind = PTASK_ACCEL_CUDA;
	info->memory = bytes;
	/* a zero would zero the strength product: count it as 1 */
	info->cores = sms > 0 ? (uint32_t)sms : 1;
	info->core_khz = khz > 0 ? (uint32_t)khz : 1;
	info->mem_khz = mem_khz > 0 ? (uint32_t)mem_khz : 1;
	info->strength = (double)info->cores * info->core_khz * info->mem_khz;
	return 0;
}

static int peers_probe(struct cuda_be *cb, struct pd_backend *be)
{
	uint32_t i, j;
	int can;
	CUresult r;

	for (i = 0; i < be->ndev; i++) {
		for (j = 0; j < be->ndev; j++) {
			if (i == j) {
				be->info[i].peer[j] = true;
				continue;
			}
			can = 0;
			r = cb->cu.DeviceCanAccessPeer(&can, cb->dev[i],
						       cb->dev[j]);
			if (r != CUDA_SUCCESS)
				return cu_fail(cb, r, "cuDeviceCanAccessPeer");
			be->info[i].peer[j] = can != 0;
		}
	}
	return 0;
}

static int cuda_init(struct pd_backend *be, const char *config)
{
	struct cuda_be *cb;
	char why[256];
	double best = 0;
	int n = 0, err;
	uint32_t i;
	CUresult r;

	if (config && *config && strcmp(config, "shared"))
		return -EINVAL;
	cb = calloc(1, sizeof(*cb));
	if (!cb)
		return -ENOMEM;
	cb->shared = config && !strcmp(config, "shared");
	err = pd_cuda_dl_load(&cb->cu, why, sizeof(why));
	if (err) {
		fprintf(stderr, "ptaskd: cuda: no driver: %s\n", why);
		goto err_free_cb;
	}
	r = cb->cu.Init(0);
	if (r == CUDA_SUCCESS)
		r = cb->cu.DeviceGetCount(&n);
	if (r != CUDA_SUCCESS || n <= 0) {
		/* no device, no kernel driver, or a driver too old: no GPU */
		if (r != CUDA_SUCCESS)
			cu_fail(cb, r, "cuInit");
		else
			fprintf(stderr, "ptaskd: cuda: no device\n");
		err = -ENODEV;
		goto err_free_cb;
	}
	if (n > PD_MAX_DEVICES) {
		fprintf(stderr, "ptaskd: cuda: using %d of %d devices\n",
			PD_MAX_DEVICES, n);
		n = PD_MAX_DEVICES;
	}
	memset(be->info, 0, sizeof(be->info));
	be->ndev = cb->ndev = (uint32_t)n;
	for (i = 0; i < cb->ndev; i++) {
		err = device_probe(cb, i, &be->info[i]);
		if (err)
			goto err_clear;
		if (be->info[i].strength > best)
			best = be->info[i].strength;
	}
	for (i = 0; i < cb->ndev; i++)
		be->info[i].strength /= best;
	err = peers_probe(cb, be);
	if (err)
		goto err_clear;
	err = pthread_mutex_init(&cb->lock, NULL);
	if (err) {
		err = -err;
		goto err_clear;
	}
	cb->info = be->info;
	be->priv = cb;
	return 0;

err_clear:
	be->ndev = 0;
	memset(be->info, 0, sizeof(be->info));
err_free_cb:
	free(cb);
	return err;
}

static void cuda_fini(struct pd_backend *be)
{
	struct cuda_be *cb = be->priv;
	CUresult r;
	uint32_t i;

	if (!cb)
		return;
	for (i = 0; i < cb->ndev; i++) {
		if (!cb->primary[i].ctx)
			continue;
		if (cur_ctx_id == cb->primary[i].id)
			cur_ctx_id = 0;
		r = cb->cu.DevicePrimaryCtxRelease(cb->dev[i]);
		if (r != CUDA_SUCCESS)
			cu_fail(cb, r, "cuDevicePrimaryCtxRelease");
	}
	pthread_mutex_destroy(&cb->lock);
	free(cb);
	be->priv = NULL;
	be->ndev = 0;
}

/*
 * The set of a space's allocations: mem_free of a pointer the space does
 * not own is refused (in a shared context it could be another client's),
 * and space_close frees what is left.  Open addressing on the pointer;
 * device pointers are 256-byte aligned, so 0 and 1 are free markers.
 */
#define ALLOC_FREE	0
#define ALLOC_DELETED	1

static size_t alloc_slot(uint64_t p, size_t cap)
{
	p ^= p >> 33;
	p *= 0xff51afd7ed558ccdULL;
	p ^= p >> 33;
	return (size_t)p & (cap - 1);
}

static int alloc_grow(struct cuda_space *s)
{
	size_t cap = s->alloc_cap ? s->alloc_cap * 2 : 64, i, j;
	uint64_t *t;

	/* a table mostly of deleted slots is rebuilt at the same size */
	if (s->alloc_count * 4 < s->alloc_cap)
		cap = s->alloc_cap;
	t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (i = 0; i < s->alloc_cap; i++) {
		if (s->allocs[i] <= ALLOC_DELETED)
			continue;
		for (j = alloc_slot(s->allocs[i], cap); t[j];
		     j = (j + 1) & (cap - 1))
			;
		t[j] = s->allocs[i];
	}
	free(s->allocs);
	s->allocs = t;
	s->alloc_cap = cap;
	s->alloc_used = s->alloc_count;
	return 0;
}

static int alloc_add(struct cuda_space *s, uint64_t p)
{
	size_t j;
	int err;

	if ((s->alloc_used + 1) * 2 > s->alloc_cap) {
		err = alloc_grow(s);
		if (err)
			return err;
	}
	for (j = alloc_slot(p, s->alloc_cap); s->allocs[j] > ALLOC_DELETED;
	     j = (j + 1) & (s->alloc_cap - 1))
		;
	if (s->allocs[j] == ALLOC_FREE)
		s->alloc_used++;
	s->allocs[j] = p;
	s->alloc_count++;
	return 0;
}

static bool alloc_del(struct cuda_space *s, uint64_t p)
{
	size_t j;

	if (!s->alloc_cap || p <= ALLOC_DELETED)
		return false;
	for (j = alloc_slot(p, s->alloc_cap); s->allocs[j] != ALLOC_FREE;
	     j = (j + 1) & (s->alloc_cap - 1)) {
		if (s->allocs[j] == p) {
			s->allocs[j] = ALLOC_DELETED;
			s->alloc_count--;
			return true;
		}
	}
	return false;
}

static void module_free(struct cuda_be *cb, struct cuda_module *m)
{
	CUresult r = cb->cu.ModuleUnload(m->mod);

	if (r != CUDA_SUCCESS)
		cu_fail(cb, r, "cuModuleUnload");
	free(m->code);
	free(m);
}

/* Free what a space holds in its context; the context is current. */
static void space_release(struct cuda_be *cb, struct cuda_space *s)
{
	struct cuda_module *m;
	CUresult r;
	uint32_t i;

	while ((m = s->modules)) {
		s->modules = m->next;
		module_free(cb, m);
	}
	/* an own context frees its memory as it goes; a shared one does not */
	for (i = 0; s->primary && i < s->alloc_cap; i++) {
		if (s->allocs[i] <= ALLOC_DELETED)
			continue;
		r = cb->cu.MemFree(s->allocs[i]);
		if (r != CUDA_SUCCESS)
			cu_fail(cb, r, "cuMemFree");
	}
	for (i = 0; i < s->npairs; i++) {
		cb->cu.EventDestroy(s->pairs[i].start);
		cb->cu.EventDestroy(s->pairs[i].end);
	}
	if (s->xev) {
		r = cb->cu.EventDestroy(s->xev);
		if (r != CUDA_SUCCESS)
			cu_fail(cb, r, "cuEventDestroy");
	}
	if (s->stream) {
		r = cb->cu.StreamDestroy(s->stream);
		if (r != CUDA_SUCCESS)
			cu_fail(cb, r, "cuStreamDestroy");
	}
}

static int cuda_space_open(struct pd_backend *be, uint32_t dev,
			   uint64_t owner, void **space)
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
	err = pthread_mutex_init(&s->xlock, NULL);
	if (err) {
		err = -err;
		goto err_free_space;
	}
	if (s->primary)
		err = primary_get(cb, dev, &s->c);
	else
		err = ctx_create(cb, dev, &s->c);
	if (err)
		goto err_destroy_lock;
	err = ctx_use(cb, &s->c);
	if (err)
		goto err_destroy_ctx;
	r = cb->cu.StreamCreate(&s->stream, CU_STREAM_NON_BLOCKING);
	if (r != CUDA_SUCCESS) {
		s->stream = NULL;
		err = cu_fail(cb, r, "cuStreamCreate");
		goto err_destroy_ctx;
	}
	r = cb->cu.EventCreate(&s->xev, CU_EVENT_DISABLE_TIMING);
	if (r != CUDA_SUCCESS) {
		s->xev = NULL;
		err = cu_fail(cb, r, "cuEventCreate");
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
err_free_space:
	free(s);
	return err;
}

static void cuda_space_close(struct pd_backend *be, void *space)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	CUresult r;

	if (!s)
		return;
	if (ctx_use(cb, &s->c) == 0) {
		/* nothing may still run on memory about to be freed */
		r = cb->cu.StreamSynchronize(s->stream);
		if (r != CUDA_SUCCESS)
			cu_fail(cb, r, "cuStreamSynchronize (close)");
		space_release(cb, s);
	}
	if (!s->primary)
		ctx_destroy(cb, &s->c);
	pthread_mutex_destroy(&s->xlock);
	free(s->allocs);
	free(s);
}

static int cuda_mem_alloc(struct pd_backend *be, void *space, size_t bytes,
			  uint64_t *dptr)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	CUdeviceptr p;
	CUresult r;
	int err;

	if (!bytes)
		return -EINVAL;
	err = ctx_use(cb, &s->c);
	if (err)
		return err;
	r = cb->cu.MemAlloc(&p, bytes);
	if (r != CUDA_SUCCESS)
		return cu_fail(cb, r, "cuMemAlloc");
	err = alloc_add(s, p);
	if (err) {
		cb->cu.MemFree(p);
		return err;
	}
	*dptr = p;
	return 0;
}

static void cuda_mem_free(struct pd_backend *be, void *space, uint64_t dptr)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	CUresult r;

	if (!alloc_del(s, dptr)) {
		fprintf(stderr, "ptaskd: cuda: mem_free of %#llx: not allocated in this space\n",
			(unsigned long long)dptr);
		return;
	}
	if (ctx_use(cb, &s->c))
		return;
	r = cb->cu.MemFree(dptr);
	if (r != CUDA_SUCCESS)
		cu_fail(cb, r, "cuMemFree");
}

/*
 * Pin host memory once per arena.  The registration needs some current
 * context (device 0's primary one); PORTABLE makes the pages count as
 * pinned in every context, per-client ones made later included.
 */
static int cuda_host_register(struct pd_backend *be, void *p, size_t bytes)
{
	struct cuda_be *cb = be->priv;
	struct cuda_ctx c;
	CUresult r;
	int err;

	err = primary_get(cb, 0, &c);
	if (!err)
		err = ctx_use(cb, &c);
	if (err)
		return err;
	r = cb->cu.MemHostRegister(p, bytes, CU_MEMHOSTREGISTER_PORTABLE);
	if (r == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) {
		cu_fail(cb, r, "cuMemHostRegister");
		return -EEXIST;
	}
	if (r != CUDA_SUCCESS)
		return cu_fail(cb, r, "cuMemHostRegister");
	return 0;
}

static void cuda_host_unregister(struct pd_backend *be, void *p)
{
	struct cuda_be *cb = be->priv;
	struct cuda_ctx c;
	CUresult r;

	if (primary_get(cb, 0, &c) || ctx_use(cb, &c))
		return;
	r = cb->cu.MemHostUnregister(p);
	if (r != CUDA_SUCCESS)
		cu_fail(cb, r, "cuMemHostUnregister");
}

static int cuda_copy_h2d(struct pd_backend *be, void *space, uint64_t dst,
			 const void *src, size_t bytes)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	CUresult r;
	int err;

	if (!bytes)
		return 0;
	err = ctx_use(cb, &s->c);
	if (err)
		return err;
	r = cb->cu.MemcpyHtoDAsync(dst, src, bytes, s->stream);
	if (r != CUDA_SUCCESS)
		return cu_fail(cb, r, "cuMemcpyHtoDAsync");
	return 0;
}

static int cuda_copy_d2h(struct pd_backend *be, void *space, void *dst,
			 uint64_t src, size_t bytes)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	CUresult r;
	int err;

	if (!bytes)
		return 0;
	err = ctx_use(cb, &s->c);
	if (err)
		return err;
	r = cb->cu.MemcpyDtoHAsync(dst, src, bytes, s->stream);
	if (r != CUDA_SUCCESS)
		return cu_fail(cb, r, "cuMemcpyDtoHAsync");
	return 0;
}

/*
 * Make @to's stream wait for everything queued so far on @from's.  @from
 * may belong to another thread: its xlock keeps two copies from
 * re-recording its event between one's record and wait.
 */
static int stream_order(struct cuda_be *cb, struct cuda_space *from,
			struct cuda_space *to)
{
	CUresult r;
	int err;

	pthread_mutex_lock(&from->xlock);
	err = ctx_use(cb, &from->c);
	if (err)
		goto out_unlock;
	r = cb->cu.EventRecord(from->xev, from->stream);
	if (r != CUDA_SUCCESS) {
		err = cu_fail(cb, r, "cuEventRecord");
		goto out_unlock;
	}
	err = ctx_use(cb, &to->c);
	if (err)
		goto out_unlock;
	/* a wait may name an event of another context or device */
	r = cb->cu.StreamWaitEvent(to->stream, from->xev, 0);
	if (r != CUDA_SUCCESS)
		err = cu_fail(cb, r, "cuStreamWaitEvent");
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
		cu_fail(cb, r, "cuCtxEnablePeerAccess (copies staged)");
		return;
	}
	dst->peers[dst->npeers++] = src->c.id;
}

static int cuda_copy_d2d(struct pd_backend *be, void *dst_space, uint64_t dst,
			 void *src_space, uint64_t src, size_t bytes)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *d = dst_space, *s = src_space;
	CUresult r;
	int err;

	if (!bytes)
		return 0;
	if (d == s) {
		err = ctx_use(cb, &d->c);
		if (err)
			return err;
		r = cb->cu.MemcpyDtoDAsync(dst, src, bytes, d->stream);
		return r == CUDA_SUCCESS ? 0 : cu_fail(cb, r, "cuMemcpyDtoDAsync");
	}
	err = stream_order(cb, s, d);
	if (err)
		return err;
	/* stream_order left @d's context current */
	if (d->c.id == s->c.id) {
		r = cb->cu.MemcpyDtoDAsync(dst, src, bytes, d->stream);
		if (r != CUDA_SUCCESS)
			return cu_fail(cb, r, "cuMemcpyDtoDAsync");
	} else {
		peer_enable(cb, d, s);
		r = cb->cu.MemcpyPeerAsync(dst, d->c.ctx, src, s->c.ctx, bytes,
					   d->stream);
		if (r != CUDA_SUCCESS)
			return cu_fail(cb, r, "cuMemcpyPeerAsync");
	}
	/* what @s queues next (a write, a free) must wait for the read */
	return stream_order(cb, d, s);
}

/* FNV-1a: finds a module again; memcmp of the code makes it exact */
static uint64_t code_hash(const void *code, size_t len)
{
	const unsigned char *p = code;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int module_load(struct cuda_be *cb, struct cuda_space *s,
		       const void *code, size_t len, struct cuda_module **out)
{
	char log[4096] = "";
	CUjit_option opt[2] = { CU_JIT_ERROR_LOG_BUFFER,
				CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *val[2] = { log, (void *)(uintptr_t)sizeof(log) };
	uint64_t h = code_hash(code, len);
	struct cuda_module *m;
	CUresult r;
	int err;

	for (m = s->modules; m; m = m->next) {
		if (m->hash == h && m->len == len && !memcmp(m->code, code, len)) {
			*out = m;
			return 0;
		}
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	/* PTX must end in a NUL; a cubin or fatbin ignores the extra byte */
	m->code = malloc(len + 1);
	if (!m->code) {
		err = -ENOMEM;
		goto err_free_module;
	}
	memcpy(m->code, code, len);
	m->code[len] = '\0';
	m->len = len;
	m->hash = h;
	r = cb->cu.ModuleLoadDataEx(&m->mod, m->code, 2, opt, val);
	if (r != CUDA_SUCCESS) {
		err = cu_fail(cb, r, "cuModuleLoadDataEx");
		if (log[0])
			fprintf(stderr, "ptaskd: cuda: %.*s\n",
				(int)sizeof(log), log);
		switch (r) {
		case CUDA_ERROR_INVALID_PTX:
		case CUDA_ERROR_INVALID_IMAGE:
		case CUDA_ERROR_INVALID_SOURCE:
		case CUDA_ERROR_INVALID_VALUE:
		case CUDA_ERROR_NO_BINARY_FOR_GPU:
		case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
			err = -EINVAL;
			break;
		}
		goto err_free_code;
	}
	m->next = s->modules;
	s->modules = m;
	s->nmodules++;
	*out = m;
	return 0;

err_free_code:
	free(m->code);
err_free_module:
	free(m);
	return err;
}

/* Drop @m if no kernel uses it and the space caches too many. */
static void module_put(struct cuda_be *cb, struct cuda_space *s,
		       struct cuda_module *m)
{
	struct cuda_module **pp;

	if (m->refs || s->nmodules <= PD_CUDA_MODULE_CACHE)
		return;
	for (pp = &s->modules; *pp != m; pp = &(*pp)->next)
		;
	*pp = m->next;
	s->nmodules--;
	module_free(cb, m);
}

/*
 * Learn @k's parameter count and sizes, so that launch can refuse a
 * parameter list that does not match: cuLaunchKernel reads as many
 * values as the kernel takes, from wherever params[] points.
 */
static int kernel_params(struct cuda_be *cb, struct cuda_kernel *k)
{
	size_t off, size;
	uint32_t i;
	CUresult r;

	if (!cb->cu.FuncGetParamInfo)
		return 0;	/* driver < 12.4: launches go unchecked */
	for (i = 0;; i++) {
		r = cb->cu.FuncGetParamInfo(k->fn, i, &off, &size);
		if (r == CUDA_ERROR_INVALID_VALUE)
			break;	/* past the last parameter */
		if (r != CUDA_SUCCESS) {
			/* the kernel still runs; its launches go unchecked */
			cu_fail(cb, r, "cuFuncGetParamInfo");
			return 0;
		}
		if (i == PD_MAX_PARAMS) {
			fprintf(stderr, "ptaskd: cuda: kernel takes over %d parameters\n",
				PD_MAX_PARAMS);
			return -EINVAL;
		}
		k->param_bytes[i] = (uint32_t)size;
	}
	k->nparams = i;
	k->checked = true;
	return 0;
}

static int cuda_kernel_load(struct pd_backend *be, void *space,
			    const void *code, size_t code_len,
			    const char *entry, void **kernel)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	struct cuda_kernel *k;
	CUresult r;
	int err;

	if (!code || !code_len || !entry || !*entry)
		return -EINVAL;
	err = ctx_use(cb, &s->c);
	if (err)
		return err;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	err = module_load(cb, s, code, code_len, &k->module);
	if (err)
		goto err_free_kernel;
	k->module->refs++;
	r = cb->cu.ModuleGetFunction(&k->fn, k->module->mod, entry);
	if (r != CUDA_SUCCESS) {
		err = cu_fail(cb, r, "cuModuleGetFunction");
		if (r == CUDA_ERROR_NOT_FOUND)
			err = -ENOENT;
		goto err_put_module;
	}
	err = kernel_params(cb, k);
	if (err)
		goto err_put_module;
	*kernel = k;
	return 0;

err_put_module:
	k->module->refs--;
	module_put(cb, s, k->module);
err_free_kernel:
	free(k);
	return err;
}

static void cuda_kernel_unload(struct pd_backend *be, void *space,
			       void *kernel)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	struct cuda_kernel *k = kernel;

	if (!k)
		return;
	k->module->refs--;
	/* cuModuleUnload acts in the current context */
	if (ctx_use(cb, &s->c) == 0)
		module_put(cb, s, k->module);
	free(k);
}

static int launch_check(const struct cuda_kernel *k, const struct pd_launch *l)
{
	uint32_t i;

	if (l->nparams > PD_MAX_PARAMS)
		return -EINVAL;
	for (i = 0; i < 3; i++)
		if (!l->grid[i] || !l->block[i])
			return -EINVAL;
	for (i = 0; i < l->nparams; i++)
		if (!l->params[i])
			return -EINVAL;
	if (!k->checked)
		return 0;
	if (l->nparams != k->nparams) {
		fprintf(stderr, "ptaskd: cuda: launch with %u parameters, kernel takes %u\n",
			l->nparams, k->nparams);
		return -EINVAL;
	}
	for (i = 0; i < l->nparams; i++) {
		if (l->param_bytes[i] != k->param_bytes[i]) {
			fprintf(stderr, "ptaskd: cuda: parameter %u is %u bytes, kernel takes %u\n",
				i, l->param_bytes[i], k->param_bytes[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/* The next timing pair, its events made on first use. */
static int pair_get(struct cuda_be *cb, struct cuda_space *s,
		    struct cuda_pair **out)
{
	struct cuda_pair *p = &s->pairs[s->nused];
	CUresult r;

	if (s->nused == s->npairs) {
		r = cb->cu.EventCreate(&p->start, CU_EVENT_DEFAULT);
		if (r != CUDA_SUCCESS)
			return cu_fail(cb, r, "cuEventCreate");
		r = cb->cu.EventCreate(&p->end, CU_EVENT_DEFAULT);
		if (r != CUDA_SUCCESS) {
			cb->cu.EventDestroy(p->start);
			return cu_fail(cb, r, "cuEventCreate");
		}
		s->npairs++;
	}
	*out = p;
	return 0;
}

static int cuda_launch(struct pd_backend *be, void *space, void *kernel,
		       const struct pd_launch *l)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	struct cuda_kernel *k = kernel;
	struct cuda_pair *p = NULL;
	bool widen = s->nused == PD_CUDA_MAX_PAIRS;
	CUresult r;
	int err;

	err = launch_check(k, l);
	if (err)
		return err;
	err = ctx_use(cb, &s->c);
	if (err)
		return err;
	if (widen) {
		p = &s->pairs[PD_CUDA_MAX_PAIRS - 1];
	} else {
		err = pair_get(cb, s, &p);
		if (err)
			return err;
		r = cb->cu.EventRecord(p->start, s->stream);
		if (r != CUDA_SUCCESS)
			return cu_fail(cb, r, "cuEventRecord");
	}
	r = cb->cu.LaunchKernel(k->fn, l->grid[0], l->grid[1], l->grid[2],
				l->block[0], l->block[1], l->block[2],
				l->shared_bytes, s->stream,
				(void **)l->params, NULL);
	if (r != CUDA_SUCCESS) {
		err = cu_fail(cb, r, "cuLaunchKernel");
		/* a geometry or shared size the kernel cannot run with */
		if (r == CUDA_ERROR_INVALID_VALUE ||
		    r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
			return -EINVAL;
		return err;
	}
	r = cb->cu.EventRecord(p->end, s->stream);
	if (r != CUDA_SUCCESS)
		return cu_fail(cb, r, "cuEventRecord");
	if (!widen)
		s->nused++;
	return 0;
}

static int cuda_sync(struct pd_backend *be, void *space, uint64_t *gpu_ns)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	double ms_sum = 0;
	uint32_t i, n = s->nused;
	float ms;
	CUresult r;
	int err;

	s->nused = 0;
	err = ctx_use(cb, &s->c);
	if (err)
		return err;
	r = cb->cu.StreamSynchronize(s->stream);
	if (r != CUDA_SUCCESS)
		return cu_fail(cb, r, "cuStreamSynchronize");
	for (i = 0; i < n; i++) {
		r = cb->cu.EventElapsedTime(&ms, s->pairs[i].start,
					    s->pairs[i].end);
		if (r != CUDA_SUCCESS)
			return cu_fail(cb, r, "cuEventElapsedTime");
		ms_sum += ms;
	}
	if (gpu_ns)
		*gpu_ns = (uint64_t)(ms_sum * 1e6);
	return 0;
}

const struct pd_backend_ops pd_backend_cuda = {
	.name = "cuda",
	.init = cuda_init,
	.fini = cuda_fini,
	.space_open = cuda_space_open,
	.space_close = cuda_space_close,
	.host_register = cuda_host_register,
	.host_unregister = cuda_host_unregister,
	.mem_alloc = cuda_mem_alloc,
	.mem_free = cuda_mem_free,
	.copy_h2d = cuda_copy_h2d,
	.copy_d2h = cuda_copy_d2h,
	.copy_d2d = cuda_copy_d2d,
	.kernel_load = cuda_kernel_load,
	.kernel_unload = cuda_kernel_unload,
	.launch = cuda_launch,
	.sync = cuda_sync,
};
