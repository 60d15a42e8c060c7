// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cpu.c - the host as the one "accelerator": device memory is
 * host memory, copies are memcpy, kernels are the ptasks' host twins
 * (twins.h), and the GPU time reported is the measured wall time of the
 * launches.  For machines without a GPU that still want a graph
 * of GPU ptasks computed (and for comparing results with cuda).
 *
 * Device memory has no budget but the host's: pd_device_info.memory is
 * the machine's physical memory, and an allocation fails only when
 * malloc does.  The engine's device_memory_limit still applies.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "uapi/ptask.h"
#include "daemon/backend/host.h"

/**
 * struct cpu_space - one space of the cpu backend
 * @mem: its allocations (first member)
 * @pending_gpu_ns: wall time of the launches since the last sync
 * @fence_issued: fences made (placeholder, replaced by branch pipe)
 * @fence_ns: device time not yet taken by a fence poll (placeholder)
 */
struct cpu_space {
	struct pd_hostspace mem;
	uint64_t pending_gpu_ns;
	_Atomic uint64_t fence_issued;
	_Atomic uint64_t fence_ns;
};

static int cpu_init(struct pd_backend *be, const char *config)
{
	struct pd_device_info *info = &be->info[0];
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (config && config[0])
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	strcpy(info->name, "cpu");
	info->kind = PTASK_ACCEL_CPU;
	info->memory = pages > 0 && page > 0 ?
		       (uint64_t)pages * (uint64_t)page : 0;
	info->cores = cpus > 0 ? (uint32_t)cpus : 1;
	info->lanes = 1;	/* placeholder, replaced by branch pipe */
	info->inplace_max = 0;
	be->ndev = 1;
	pd_backend_rank(be);
	be->priv = NULL;
	return 0;
}

static void cpu_fini(struct pd_backend *be)
{
	(void)be;
}

static int cpu_space_open(struct pd_backend *be, uint32_t dev,
			  uint64_t owner, void **space)
{
	struct cpu_space *s;
	int err;

	(void)owner;
	if (dev >= be->ndev)
		return -ENODEV;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = pd_hostspace_init(&s->mem);
	if (err) {
		free(s);
		return err;
	}
	*space = s;
	return 0;
}

static void cpu_space_close(struct pd_backend *be, void *space)
{
	struct cpu_space *s = space;

	(void)be;
	pd_hostspace_fini(&s->mem);
	free(s);
}

static int cpu_mem_alloc(struct pd_backend *be, void *space, size_t bytes,
			 uint64_t *dptr)
{
	struct cpu_space *s = space;

	(void)be;
	return pd_hostspace_alloc(&s->mem, bytes, dptr);
}

static void cpu_mem_free(struct pd_backend *be, void *space, uint64_t dptr)
{
	struct cpu_space *s = space;

	(void)be;
	pd_hostspace_free(&s->mem, dptr);
}

static int cpu_copy_h2d(struct pd_backend *be, void *space, uint32_t lane,
			uint64_t dst, const void *src, size_t bytes)
{
	struct cpu_space *s = space;

	if (lane != 0)
		return -EINVAL; /* placeholder: one lane */
	(void)be;
	if (!pd_hostspace_holds(&s->mem, dst, bytes))
		return -EFAULT;
	memcpy((void *)(uintptr_t)dst, src, bytes);
	return 0;
}

static int cpu_copy_d2h(struct pd_backend *be, void *space, uint32_t lane,
			void *dst, uint64_t src, size_t bytes)
{
	struct cpu_space *s = space;

	if (lane != 0)
		return -EINVAL; /* placeholder: one lane */
	(void)be;
	if (!pd_hostspace_holds(&s->mem, src, bytes))
		return -EFAULT;
	memcpy(dst, (const void *)(uintptr_t)src, bytes);
	return 0;
}

static int cpu_copy_d2d(struct pd_backend *be, void *dst_space,
			uint32_t dst_lane, uint64_t dst, void *src_space,
			uint32_t src_lane, uint64_t src, size_t bytes)
{
	struct cpu_space *ds = dst_space, *ss = src_space;

	if (dst_lane != 0 || src_lane != 0)
		return -EINVAL; /* placeholder: one lane */
	(void)be;
	if (!pd_hostspace_holds(&ds->mem, dst, bytes) ||
	    !pd_hostspace_holds(&ss->mem, src, bytes))
		return -EFAULT;
	memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
	return 0;
}

static uint64_t cpu_extent(void *ctx, const void *p)
{
	struct cpu_space *s = ctx;

	return pd_hostspace_extent(&s->mem, (uint64_t)(uintptr_t)p);
}

static int cpu_launch(struct pd_backend *be, void *space, uint32_t lane,
		      void *kernel, const struct pd_launch *launch)
{
	struct cpu_space *s = space;
	const struct ptask_twin *k = kernel;
	struct ptask_twin_call call;
	uint64_t start;
	int err;

	if (lane != 0)
		return -EINVAL; /* placeholder: one lane */
	(void)be;
	pd_twin_call_init(&call, launch, cpu_extent, s);
	start = pd_now_ns();
	err = k->run(&call);
	s->pending_gpu_ns += pd_now_ns() - start;
	return err;
}

static int cpu_sync(struct pd_backend *be, void *space, uint64_t *gpu_ns)
{
	struct cpu_space *s = space;

	(void)be;
	if (gpu_ns)
		*gpu_ns = s->pending_gpu_ns;
	s->pending_gpu_ns = 0;
	return 0;
}

/*
 * Placeholder, replaced by branch pipe: one lane, and every operation has
 * finished when it returns, so a fence passes as it is made; its device
 * time is what sync reports then, taken by the first poll that sees it.
 */
static int cpu_fence(struct pd_backend *be, void *space, uint32_t lane,
		     uint64_t *ticket)
{
	struct cpu_space *s = space;
	uint64_t ns = 0;
	int err;

	if (lane != 0)
		return -EINVAL;
	err = cpu_sync(be, space, &ns);
	if (err)
		return err;
	atomic_fetch_add(&s->fence_ns, ns);
	*ticket = atomic_fetch_add(&s->fence_issued, 1) + 1;
	return 0;
}

static int cpu_fence_poll(struct pd_backend *be, void *space, uint32_t lane,
			  uint64_t ticket, uint64_t *gpu_ns)
{
	struct cpu_space *s = space;

	(void)be;
	if (lane != 0 || !ticket || ticket > atomic_load(&s->fence_issued))
		return -EINVAL;
	ticket = atomic_exchange(&s->fence_ns, 0);
	if (gpu_ns)
		*gpu_ns = ticket;
	return 1;
}

static int cpu_lane_wait(struct pd_backend *be, void *space, uint32_t lane,
			 uint32_t from, uint64_t ticket)
{
	struct cpu_space *s = space;

	(void)be;
	if (lane != 0 || from != 0 || ticket > atomic_load(&s->fence_issued))
		return -EINVAL;
	return 0;
}

static int cpu_host_device_ptr(struct pd_backend *be, void *space,
			       void *host, size_t bytes, uint64_t *dptr)
{
	(void)be;
	(void)space;
	(void)bytes;
	*dptr = (uint64_t)(uintptr_t)host;
	return 0;
}

const struct pd_backend_ops pd_backend_cpu = {
	.name = "cpu",
	.init = cpu_init,
	.fini = cpu_fini,
	.space_open = cpu_space_open,
	.space_close = cpu_space_close,
	.mem_alloc = cpu_mem_alloc,
	.mem_free = cpu_mem_free,
	.copy_h2d = cpu_copy_h2d,
	.copy_d2h = cpu_copy_d2h,
	.copy_d2d = cpu_copy_d2d,
	.kernel_load = pd_twin_kernel_load,
	.kernel_unload = pd_twin_kernel_unload,
	.launch = cpu_launch,
	.sync = cpu_sync,
	/* placeholders, replaced by branch pipe */
	.fence = cpu_fence,
	.fence_poll = cpu_fence_poll,
	.fence_wait = cpu_fence_poll,
	.lane_wait = cpu_lane_wait,
	.host_device_ptr = cpu_host_device_ptr,
};
