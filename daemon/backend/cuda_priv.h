/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * cuda_priv.h - what the files of ptaskd's CUDA backend share.
 *
 * The backend (struct pd_backend_ops pd_backend_cuda, backend.h) is
 * split by what it manages:
 *
 *   cuda.c         the driver and its devices: loading, probing, errors,
 *                  init and fini, the ops table
 *   cuda_space.c   contexts and spaces: the current-context cache,
 *                  primary and own contexts, space open and close
 *   cuda_mem.c     memory: a space's allocations, pinned host memory,
 *                  copies within and between spaces
 *   cuda_kernel.c  code: the module cache, kernels, launches and their
 *                  device time (timing events)
 *
 * The driver is reached only through common/cuda_dl.h (libcuda.so.1,
 * loaded at run time).  Functions here that take a space are called by
 * the space's owning thread (backend.h), unless they say otherwise.
 */
#ifndef PTASKD_CUDA_PRIV_H
#define PTASKD_CUDA_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/cuda_dl.h"
#include "common/hash.h"
#include "daemon/backend/backend.h"

#define PD_CUDA_MAX_PAIRS	256	/* timed launches between two syncs */
#define PD_CUDA_FENCE_RING	1024	/* fences remembered (cuda_fence.c) */
#define PD_CUDA_MODULE_CACHE	32	/* modules kept loaded per space */
#define PD_CUDA_MAX_PEERS	(2 * PD_MAX_DEVICES)

/**
 * struct cuda_ctx - a context and its id
 * @ctx: the context
 * @id: a counter never reused (the driver may hand out a destroyed
 *	context's address again), what the current-context cache holds
 */
struct cuda_ctx {
	CUcontext ctx;
	uint64_t id;
};

/**
 * struct cuda_be - the backend's state (pd_backend.priv)
 * @cu: driver entry points, read-only after init
 * @ndev: devices used
 * @dev: CUdevice of each index
 * @shared: config "shared": every space uses the primary context
 * @lock: protects @primary (host_register may come from any thread)
 * @primary: each device's primary context once retained, else ctx NULL
 * @info: be->info, for peer checks in copy_d2d
 */
struct cuda_be {
	struct pc_cuda_api cu;
	uint32_t ndev;
	CUdevice dev[PD_MAX_DEVICES];
	bool shared;
	pthread_mutex_t lock;
	struct cuda_ctx primary[PD_MAX_DEVICES];
	const struct pd_device_info *info;
};

/**
 * struct cuda_module - a module loaded in a space, found again by its
 * code's bytes
 * @next: next in the space's cache
 * @hash: FNV-1a of @code
 * @len: @code's length
 * @code: @len bytes and a NUL
 * @mod: the module
 * @refs: kernels handed out
 */
struct cuda_module {
	struct cuda_module *next;
	uint64_t hash;
	size_t len;
	char *code;
	CUmodule mod;
	unsigned int refs;
};

/**
 * struct cuda_kernel - a kernel handed to the engine
 * @module: its module
 * @fn: the function
 * @checked: @nparams and @param_bytes are known
 * @nparams: parameters it takes
 * @param_bytes: their sizes
 */
struct cuda_kernel {
	struct cuda_module *module;
	CUfunction fn;
	bool checked;
	uint32_t nparams;
	uint32_t param_bytes[PD_MAX_PARAMS];
};

/* Two events around one launch, for its device time. */
struct cuda_pair {
	CUevent start;
	CUevent end;
};

/**
 * struct cuda_space - one device seen through one context
 * @cb: the backend
 * @dev: the device's index
 * @owner: the client it is for (0: none)
 * @primary: it uses the device's primary context (else one of its own)
 * @c: its context
 * @stream: its non-blocking stream
 * @xlock: protects @xev
 * @xev: orders copies between spaces
 * @pairs: timing events, @npairs created
 * @npairs: events created
 * @nused: pairs recorded since the last sync
 * @modules: the module cache, @nmodules long
 * @nmodules: modules loaded
 * @allocs: its device allocations (struct cuda_alloc), by pointer
 * @peers: ids of the contexts it can access, @npeers of them
 * @npeers: entries in @peers
 * @fence_last: the last fence's ticket (0: none yet), under @xlock
 *	(fence_poll comes from any thread)
 * @fence_ns: device time of each fence by ticket % PD_CUDA_FENCE_RING,
 *	UINT64_MAX once reported
 *
 * Everything but @xlock, @xev and the fence fields is used by the space's owning thread
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
	CUevent xev;
	struct cuda_pair pairs[PD_CUDA_MAX_PAIRS];
	uint32_t npairs;
	uint32_t nused;
	struct cuda_module *modules;
	uint32_t nmodules;
	struct pc_hash allocs;
	uint64_t peers[PD_CUDA_MAX_PEERS];
	uint32_t npeers;
	uint64_t fence_last;
	uint64_t fence_ns[PD_CUDA_FENCE_RING];
};

/* --- cuda.c ----------------------------------------------------------- */

/*
 * Log failed driver call @what and map @r: -ENOMEM or -EIO.  An error
 * that poisons the process's CUDA ends ptaskd (pd_fatal).
 */
int pd_cuda_fail(struct cuda_be *cb, CUresult r, const char *what);

/* --- cuda_space.c ----------------------------------------------------- */

/* Make @c current on this thread unless it already is: 0 or -errno. */
int pd_cuda_ctx_use(struct cuda_be *cb, const struct cuda_ctx *c);
/* Device @dev's primary context, retained on first use (any thread). */
int pd_cuda_ctx_primary(struct cuda_be *cb, uint32_t dev,
			struct cuda_ctx *out);
/* Context @id is gone: this thread's cache must not name it any more. */
void pd_cuda_ctx_forget(uint64_t id);

int pd_cuda_space_open(struct pd_backend *be, uint32_t dev, uint64_t owner,
		       void **space);
void pd_cuda_space_close(struct pd_backend *be, void *space);

/* --- cuda_mem.c ------------------------------------------------------- */

int pd_cuda_mem_alloc(struct pd_backend *be, void *space, size_t bytes,
		      uint64_t *dptr);
void pd_cuda_mem_free(struct pd_backend *be, void *space, uint64_t dptr);
/*
 * Forget @s's allocations; with @free_memory (its context current), free
 * them on the device too.
 */
void pd_cuda_mem_release(struct cuda_be *cb, struct cuda_space *s,
			 bool free_memory);
int pd_cuda_host_register(struct pd_backend *be, void *p, size_t bytes);
void pd_cuda_host_unregister(struct pd_backend *be, void *p);
int pd_cuda_copy_h2d(struct pd_backend *be, void *space, uint32_t lane,
		     uint64_t dst,
		     const void *src, size_t bytes);
int pd_cuda_copy_d2h(struct pd_backend *be, void *space, uint32_t lane,
		     void *dst,
		     uint64_t src, size_t bytes);
int pd_cuda_copy_d2d(struct pd_backend *be, void *dst_space,
		     uint32_t dst_lane, uint64_t dst, void *src_space,
		     uint32_t src_lane, uint64_t src, size_t bytes);

/* --- cuda_kernel.c ---------------------------------------------------- */

/* Unload @s's modules and destroy its timing events (context current). */
void pd_cuda_code_release(struct cuda_be *cb, struct cuda_space *s);
int pd_cuda_kernel_load(struct pd_backend *be, void *space, const void *code,
			size_t code_len, const char *entry, void **kernel);
void pd_cuda_kernel_unload(struct pd_backend *be, void *space, void *kernel);
int pd_cuda_launch(struct pd_backend *be, void *space, uint32_t lane,
		   void *kernel,
		   const struct pd_launch *l);
int pd_cuda_sync(struct pd_backend *be, void *space, uint64_t *gpu_ns);

/* --- cuda_fence.c ----------------------------------------------------- */

int pd_cuda_fence(struct pd_backend *be, void *space, uint32_t lane,
		  uint64_t *ticket);
int pd_cuda_fence_poll(struct pd_backend *be, void *space, uint32_t lane,
		       uint64_t ticket, uint64_t *gpu_ns);
int pd_cuda_lane_wait(struct pd_backend *be, void *space, uint32_t lane,
		      uint32_t from, uint64_t ticket);
int pd_cuda_host_device_ptr(struct pd_backend *be, void *space, void *host,
			    size_t bytes, uint64_t *dptr);

#endif /* PTASKD_CUDA_PRIV_H */
