// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cuda.c - ptaskd's CUDA backend: the driver API, loaded at run time
 * (common/cuda_dl.h), behind struct pd_backend_ops (backend.h).  This
 * file holds the driver and its devices (init, probing, errors) and the
 * ops table; cuda_priv.h says where the rest lives.
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
 * Each space has its own non-blocking streams, its lanes (cuda_fence.c;
 * PD_CUDA_LANES of them unless the config says "lanes=N"), so work queued
 * on two lanes or two spaces overlaps where the hardware lets it
 * (contexts time-slice; the streams of one context run concurrently).
 *
 * DOC: config
 *
 * The backend's option string is a comma-separated list of "shared"
 * (every space in the device's primary context), "lanes=N" (1 to
 * PD_MAX_LANES streams per space) and "fences=events" (fences polled
 * through events even where stream memory operations work: the fallback,
 * for tests and comparisons): "", "shared", "shared,lanes=2", "lanes=8".
 * Anything else is -EINVAL.
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
#include "daemon/backend/cuda_priv.h"
#include "daemon/fatal.h"
#include "daemon/log.h"

/*
 * Errors after which the driver refuses all further work of the process
 * ("to continue using CUDA, the process must be terminated and
 * relaunched"); measured on an H100: one client's faulting kernel broke
 * every other context of ptaskd (Documentation/ptaskd.md, Isolation).
 */
bool pd_cuda_sticky(CUresult r)
{
	return r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_TIMEOUT ||
	       (r >= CUDA_ERROR_HARDWARE_STACK_ERROR &&
		r <= CUDA_ERROR_LAUNCH_FAILED);
}

/**
 * pd_cuda_fail() - log a failed driver call and map its error
 * @cb: the backend
 * @r: what the driver returned
 * @what: the call
 *
 * Calling context: any thread.  An error that poisons every context of
 * the process (pd_cuda_sticky()) ends ptaskd through pd_fatal().
 *
 * Return: -ENOMEM (out of device memory) or -EIO.
 */
int pd_cuda_fail(struct cuda_be *cb, CUresult r, const char *what)
{
	const char *name = NULL;

	if (cb->cu.GetErrorName(r, &name) != CUDA_SUCCESS || !name)
		name = "unknown";
	fprintf(stderr, "ptaskd: cuda: %s: %s (%d)\n", what, name, r);
	pd_backend_note_error((uint32_t)r);
	if (pd_backend_collateral((uint32_t)r))
		pd_fatal_collateral("cuda: %s: %s (%d): the GPU was reset under this process (MPS: another client faulted)",
				    what, name, r);
	else if (pd_cuda_sticky(r))
		pd_fatal("cuda: %s: %s (%d) poisons every CUDA context of this process",
			 what, name, r);
	return r == CUDA_ERROR_OUT_OF_MEMORY ? -ENOMEM : -EIO;
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
		return pd_cuda_fail(cb, r, "cuDeviceGet");
	r = cb->cu.DeviceGetName(info->name, sizeof(info->name), cb->dev[i]);
	if (r != CUDA_SUCCESS)
		return pd_cuda_fail(cb, r, "cuDeviceGetName");
	info->name[sizeof(info->name) - 1] = '\0';
	r = cb->cu.DeviceTotalMem(&bytes, cb->dev[i]);
	if (r != CUDA_SUCCESS)
		return pd_cuda_fail(cb, r, "cuDeviceTotalMem");
	r = cb->cu.DeviceGetAttribute(&sms,
			CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cb->dev[i]);
	if (r == CUDA_SUCCESS)
		r = cb->cu.DeviceGetAttribute(&khz,
				CU_DEVICE_ATTRIBUTE_CLOCK_RATE, cb->dev[i]);
	if (r == CUDA_SUCCESS)
		r = cb->cu.DeviceGetAttribute(&mem_khz,
				CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, cb->dev[i]);
	if (r != CUDA_SUCCESS)
		return pd_cuda_fail(cb, r, "cuDeviceGetAttribute");
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
				return pd_cuda_fail(cb, r, "cuDeviceCanAccessPeer");
			be->info[i].peer[j] = can != 0;
		}
	}
	return 0;
}

/* Parse @config (DOC: config) into @cb: 0 or -EINVAL. */
static int config_parse(struct cuda_be *cb, const char *config)
{
	const char *p = config ? config : "", *end;
	unsigned long n;
	size_t len;
	char *stop;

	cb->lanes = PD_CUDA_LANES;
	while (*p) {
		end = strchr(p, ',');
		len = end ? (size_t)(end - p) : strlen(p);
		if (len == 6 && !strncmp(p, "shared", 6)) {
			cb->shared = true;
		} else if (len == 13 && !strncmp(p, "fences=events", 13)) {
			cb->event_fences = true;
		} else if (len > 6 && !strncmp(p, "lanes=", 6) &&
			   p[6] >= '0' && p[6] <= '9') {
			n = strtoul(p + 6, &stop, 10);
			if (stop != p + len || n < 1 || n > PD_MAX_LANES) {
				pd_log_err("cuda: config: lanes must be 1..%d: \"%.*s\"",
					   PD_MAX_LANES, (int)len, p);
				return -EINVAL;
			}
			cb->lanes = (uint32_t)n;
		} else {
			pd_log_err("cuda: config: unknown option \"%.*s\" (\"shared\", \"lanes=N\", \"fences=events\")",
				   (int)len, p);
			return -EINVAL;
		}
		p += len;
		if (*p == ',' && *++p == '\0') {
			pd_log_err("cuda: config: trailing comma");
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * @name=N (1..PD_CUDA_VARIANTS_MAX) in the environment, else @dflt:
 * PTASKD_GRAPH_VARIANTS, instantiations per held shape, and
 * PTASKD_LONE_VARIANTS, one-node graphs per kernel, geometry and lane
 * (cuda_lone.c, "DOC: variants"); 1 patches a single one every time its
 * values change, as before variants.  0, or -EINVAL with a message.
 */
static int graph_variants(const char *name, uint32_t dflt, uint32_t *variants)
{
	const char *v = getenv(name);
	unsigned long n;
	char *end;

	*variants = dflt;
	if (!v)
		return 0;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || *end || n < 1 || n > PD_CUDA_VARIANTS_MAX) {
		pd_log_err("cuda: %s must be 1..%d, not \"%s\"", name,
			   PD_CUDA_VARIANTS_MAX, v);
		return -EINVAL;
	}
	*variants = (uint32_t)n;
	pd_log_info("cuda: %s=%u", name, *variants);
	return 0;
}

/*
 * Can device @i's fences be stream memory operations?  The 64-bit
 * attribute is 1 on the H100 and H200 while the old _V1 one reads 0
 * (issue 12), so either will do; and the driver must export the _v2
 * write.  Logged once per device.
 */
static void memops_probe(struct cuda_be *cb, uint32_t i)
{
	int v1 = 0, v64 = 0;
	bool ok;

	cb->cu.DeviceGetAttribute(&v1, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1,
				  cb->dev[i]);
	cb->cu.DeviceGetAttribute(&v64, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS,
				  cb->dev[i]);
	ok = (v1 || v64) && cb->cu.StreamWriteValue32 && !cb->event_fences;
	atomic_store(&cb->memops[i], ok);
	if (cb->event_fences)
		pd_log_info("cuda: device %u: fences are events polled with cuEventQuery (config fences=events; stream memory operations: v1 %d, 64-bit %d)",
			    i, v1, v64);
	else if (ok)
		pd_log_info("cuda: device %u: fences are cuStreamWriteValue32 into pinned words (stream memory operations: v1 %d, 64-bit %d)",
			    i, v1, v64);
	else
		pd_log_info("cuda: device %u: fences are events polled with cuEventQuery (no stream memory operations: v1 %d, 64-bit %d, cuStreamWriteValue32_v2 %s)",
			    i, v1, v64, cb->cu.StreamWriteValue32 ? "exported" : "missing");
}

static int cuda_init(struct pd_backend *be, const char *config)
{
	struct cuda_be *cb;
	char why[256];
	double best = 0;
	int n = 0, err;
	uint32_t i;
	CUresult r;

	cb = calloc(1, sizeof(*cb));
	if (!cb)
		return -ENOMEM;
	err = config_parse(cb, config);
	err = err ?: graph_variants("PTASKD_GRAPH_VARIANTS", PD_CUDA_VARIANTS,
				    &cb->variants);
	err = err ?: graph_variants("PTASKD_LONE_VARIANTS",
				    PD_CUDA_LONE_VARIANTS, &cb->lone_variants);
	if (err)
		goto err_free_cb;
	err = pc_cuda_load(&cb->cu, why, sizeof(why));
	if (err) {
		fprintf(stderr, "ptaskd: cuda: no driver: %s\n", why);
		err = -ENODEV;
		goto err_free_cb;
	}
	r = cb->cu.Init(0);
	if (r == CUDA_SUCCESS)
		r = cb->cu.DeviceGetCount(&n);
	if (r != CUDA_SUCCESS || n <= 0) {
		/* no device, no kernel driver, or a driver too old: no GPU */
		if (r != CUDA_SUCCESS)
			pd_cuda_fail(cb, r, "cuInit");
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
	be->untimed_estimated = true;
	for (i = 0; i < cb->ndev; i++) {
		err = device_probe(cb, i, &be->info[i]);
		if (err)
			goto err_clear;
		if (be->info[i].strength > best)
			best = be->info[i].strength;
		be->info[i].lanes = cb->lanes;
		memops_probe(cb, i);
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
	cb->lone_graphs = pd_cuda_graphs_usable(cb) &&
			  !getenv("PTASKD_NO_LONE_GRAPH");
	pd_log_info("cuda: launches that are not held %s",
		    cb->lone_graphs ? "replay one-node graphs" :
		    "are cuLaunchKernel (PTASKD_NO_LONE_GRAPH, or no graphs)");
	be->priv = cb;
	for (i = 0; i < cb->ndev; i++) {
		/* a device that cannot be measured still runs, copying */
		if (pd_cuda_calibrate(be, i)) {
			be->info[i].inplace_max = 0;
			pd_log_warn("cuda: device %u: copy curve not measured: inplace_max 0 (always copy)",
				    i);
		}
	}
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
	if (cb->lone_graphs)
		pd_log_info("cuda: %llu launches replayed from one-node graphs (%llu patched first; %llu graphs built, up to %u per kernel and lane)",
			    (unsigned long long)atomic_load(&cb->lone_replays),
			    (unsigned long long)atomic_load(&cb->lone_patched),
			    (unsigned long long)atomic_load(&cb->lone_built),
			    cb->lone_variants);
	if (atomic_load(&cb->held_execs))
		pd_log_info("cuda: %llu held sequences replayed as graphs (%llu patched first, %llu nodes; %llu instantiations, up to %u per shape)",
			    (unsigned long long)atomic_load(&cb->held_replays),
			    (unsigned long long)atomic_load(&cb->held_patched),
			    (unsigned long long)atomic_load(&cb->held_nodes_patched),
			    (unsigned long long)atomic_load(&cb->held_execs),
			    cb->variants);
	for (i = 0; i < cb->ndev; i++) {
		if (!cb->primary[i].ctx)
			continue;
		pd_cuda_ctx_forget(cb->primary[i].id);
		r = cb->cu.DevicePrimaryCtxRelease(cb->dev[i]);
		if (r != CUDA_SUCCESS)
			pd_cuda_fail(cb, r, "cuDevicePrimaryCtxRelease");
	}
	pthread_mutex_destroy(&cb->lock);
	free(cb);
	be->priv = NULL;
	be->ndev = 0;
}

const struct pd_backend_ops pd_backend_cuda = {
	.name = "cuda",
	.init = cuda_init,
	.fini = cuda_fini,
	.space_open = pd_cuda_space_open,
	.space_close = pd_cuda_space_close,
	.host_register = pd_cuda_host_register,
	.host_unregister = pd_cuda_host_unregister,
	.mem_alloc = pd_cuda_mem_alloc,
	.mem_free = pd_cuda_mem_free,
	.copy_h2d = pd_cuda_copy_h2d,
	.copy_d2h = pd_cuda_copy_d2h,
	.copy_d2d = pd_cuda_copy_d2d,
	.kernel_load = pd_cuda_kernel_load,
	.kernel_unload = pd_cuda_kernel_unload,
	.launch = pd_cuda_launch,
	.sync = pd_cuda_sync,
	.fence = pd_cuda_fence,
	.fence_poll = pd_cuda_fence_poll,
	.fence_wait = pd_cuda_fence_wait,
	.lane_wait = pd_cuda_lane_wait,
	.fence_defer = pd_cuda_fence_defer,
	.flush = pd_cuda_flush,
	.host_device_ptr = pd_cuda_host_device_ptr,
};
