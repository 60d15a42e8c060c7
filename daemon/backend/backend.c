// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * backend.c - finding a backend by name, and what the backends share:
 * strength ranking, host "device memory" bookkeeping for sim and cpu,
 * and monotonic-clock helpers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "daemon/backend/host.h"
#include "daemon/backend/twins.h"
#include "daemon/log.h"

/*
 * Weak: a program that links the engine without backend/cuda*.c (the
 * engine's tests; a build for machines without NVIDIA's driver) still
 * links, and finds no "cuda" backend.
 */
extern const struct pd_backend_ops pd_backend_cuda __attribute__((weak));

const struct pd_backend_ops *pd_backend_find(const char *name)
{
	const struct pd_backend_ops *all[] = {
		&pd_backend_cuda, &pd_backend_sim, &pd_backend_cpu,
	};
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i] && !strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

void pd_backend_rank(struct pd_backend *be)
{
	double raw[PD_MAX_DEVICES], best = 0.0;
	uint32_t i;

	for (i = 0; i < be->ndev && i < PD_MAX_DEVICES; i++) {
		const struct pd_device_info *d = &be->info[i];

		raw[i] = (double)d->cores * d->core_khz * d->mem_khz;
		if (raw[i] > best)
			best = raw[i];
	}
	for (i = 0; i < be->ndev && i < PD_MAX_DEVICES; i++)
		be->info[i].strength = best <= 0.0 ? 1.0 :
				       raw[i] > 0.0 ? raw[i] / best : 1e-6;
}

uint64_t pd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t pd_debug_now_ns(void)
{
	return pd_log_level >= PD_LOG_DEBUG ? pd_now_ns() : 0;
}

void pd_sleep_until(uint64_t deadline_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_ns / 1000000000ULL),
		.tv_nsec = (long)(deadline_ns % 1000000000ULL),
	};

	if (pd_now_ns() >= deadline_ns)
		return;
	/* EINTR: go on sleeping until the deadline really passed. */
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

int pd_hostspace_init(struct pd_hostspace *hs)
{
	memset(hs, 0, sizeof(*hs));
	return -pthread_mutex_init(&hs->lock, NULL);
}

uint64_t pd_hostspace_fini(struct pd_hostspace *hs)
{
	uint64_t bytes = hs->used;
	size_t i;

	for (i = 0; i < hs->n && !hs->borrowed; i++)
		free((void *)(uintptr_t)hs->blocks[i].addr);
	free(hs->blocks);
	pthread_mutex_destroy(&hs->lock);
	memset(hs, 0, sizeof(*hs));
	return bytes;
}

/* Index of the first block with addr > @addr (binary search).  Locked. */
static size_t upper_bound(const struct pd_hostspace *hs, uint64_t addr)
{
	size_t lo = 0, hi = hs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (hs->blocks[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int pd_hostspace_track(struct pd_hostspace *hs, uint64_t addr,
		       uint64_t bytes)
{
	size_t at;

	pthread_mutex_lock(&hs->lock);
	at = upper_bound(hs, addr);
	if (at > 0 && hs->blocks[at - 1].addr == addr) {
		pthread_mutex_unlock(&hs->lock);
		return -EEXIST;
	}
	if (hs->n == hs->cap) {
		size_t cap = hs->cap ? 2 * hs->cap : 64;
		struct pd_hostblock *nb = realloc(hs->blocks,
						  cap * sizeof(*nb));

		if (!nb) {
			pthread_mutex_unlock(&hs->lock);
			return -ENOMEM;
		}
		hs->blocks = nb;
		hs->cap = cap;
	}
	memmove(&hs->blocks[at + 1], &hs->blocks[at],
		(hs->n - at) * sizeof(hs->blocks[0]));
	hs->blocks[at].addr = addr;
	hs->blocks[at].bytes = bytes;
	hs->n++;
	hs->used += bytes;
	pthread_mutex_unlock(&hs->lock);
	return 0;
}

int pd_hostspace_alloc(struct pd_hostspace *hs, size_t bytes,
		       uint64_t *dptr)
{
	size_t rounded = (bytes + PD_HOSTMEM_ALIGN - 1) &
			 ~(size_t)(PD_HOSTMEM_ALIGN - 1);
	void *p;
	int err;

	if (!bytes || rounded < bytes)
		return -EINVAL;
	p = aligned_alloc(PD_HOSTMEM_ALIGN, rounded);
	if (!p)
		return -ENOMEM;
	err = pd_hostspace_track(hs, (uint64_t)(uintptr_t)p, bytes);
	if (err) {
		free(p);
		return err;
	}
	*dptr = (uint64_t)(uintptr_t)p;
	return 0;
}

uint64_t pd_hostspace_free(struct pd_hostspace *hs, uint64_t dptr)
{
	uint64_t bytes = 0;
	size_t at;

	pthread_mutex_lock(&hs->lock);
	at = upper_bound(hs, dptr);
	if (at > 0 && hs->blocks[at - 1].addr == dptr) {
		bytes = hs->blocks[at - 1].bytes;
		memmove(&hs->blocks[at - 1], &hs->blocks[at],
			(hs->n - at) * sizeof(hs->blocks[0]));
		hs->n--;
		hs->used -= bytes;
	}
	pthread_mutex_unlock(&hs->lock);
	if (bytes && !hs->borrowed)
		free((void *)(uintptr_t)dptr);
	return bytes;
}

void pd_hostspace_untrack(struct pd_hostspace *hs, uint64_t addr)
{
	pd_hostspace_free(hs, addr);
}

int pd_hostreg_register(struct pd_backend *be, void *p, size_t bytes)
{
	struct pd_hostreg *reg = be->priv;

	if (!p || !bytes)
		return -EINVAL;
	return pd_hostspace_track(&reg->ranges, (uint64_t)(uintptr_t)p,
				  bytes);
}

void pd_hostreg_unregister(struct pd_backend *be, void *p)
{
	struct pd_hostreg *reg = be->priv;

	pd_hostspace_untrack(&reg->ranges, (uint64_t)(uintptr_t)p);
}

int pd_hostreg_device_ptr(struct pd_backend *be, void *space, void *host,
			  size_t bytes, uint64_t *dptr)
{
	struct pd_hostreg *reg = be->priv;

	(void)space;
	if (!host || !bytes)
		return -EINVAL;
	if (!pd_hostspace_holds(&reg->ranges, (uint64_t)(uintptr_t)host,
				bytes))
		return -ENOENT;
	*dptr = (uint64_t)(uintptr_t)host;
	return 0;
}

uint64_t pd_hostreg_extent(struct pd_backend *be, uint64_t addr)
{
	struct pd_hostreg *reg = be->priv;

	return pd_hostspace_extent(&reg->ranges, addr);
}

uint64_t pd_hostspace_extent(struct pd_hostspace *hs, uint64_t addr)
{
	uint64_t extent = 0;
	size_t at;

	pthread_mutex_lock(&hs->lock);
	at = upper_bound(hs, addr);
	if (at > 0) {
		const struct pd_hostblock *b = &hs->blocks[at - 1];

		if (addr - b->addr < b->bytes)
			extent = b->bytes - (addr - b->addr);
	}
	pthread_mutex_unlock(&hs->lock);
	return extent;
}

bool pd_hostspace_holds(struct pd_hostspace *hs, uint64_t addr,
			uint64_t bytes)
{
	return bytes && pd_hostspace_extent(hs, addr) >= bytes;
}

int pd_twin_kernel_load(struct pd_backend *be, void *space, const void *code,
			size_t code_len, const char *entry, void **kernel)
{
	const struct ptask_twin *twin;
	int err;

	(void)be;
	(void)space;
	err = pd_twin_find(entry, code, code_len, &twin);
	if (err)
		return err;
	*kernel = (void *)twin;
	return 0;
}

void pd_twin_kernel_unload(struct pd_backend *be, void *space, void *kernel)
{
	(void)be;
	(void)space;
	(void)kernel;
}

void pd_twin_call_init(struct ptask_twin_call *call,
		       const struct pd_launch *launch,
		       uint64_t (*extent)(void *ctx, const void *p), void *ctx)
{
	memset(call, 0, sizeof(*call));
	memcpy(call->grid, launch->grid, sizeof(call->grid));
	memcpy(call->block, launch->block, sizeof(call->block));
	call->nparams = launch->nparams;
	call->param_bytes = launch->param_bytes;
	call->params = launch->params;
	call->extent = extent;
	call->ctx = ctx;
}

static uint64_t error_seq;
static uint32_t error_code;

void pd_backend_note_error(uint32_t code)
{
	__atomic_store_n(&error_code, code, __ATOMIC_RELAXED);
	__atomic_add_fetch(&error_seq, 1, __ATOMIC_RELEASE);
}

uint64_t pd_backend_error_seq(void)
{
	return __atomic_load_n(&error_seq, __ATOMIC_ACQUIRE);
}

uint32_t pd_backend_error_code(void)
{
	return __atomic_load_n(&error_code, __ATOMIC_RELAXED);
}

bool pd_backend_collateral(uint32_t code)
{
	/* CUDA_ERROR_MPS_CONNECTION_FAILED .. _SERVER_NOT_READY, _CLIENT_TERMINATED */
	return (code >= 805 && code <= 807) || code == 810;
}
