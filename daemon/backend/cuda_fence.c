// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cuda_fence.c - lanes and fences (backend.h) for cuda, the simplest
 * correct way: one lane (the space's stream), and a fence that
 * synchronizes the stream at once and remembers the device time of the
 * launches it covers, so that a poll or a wait only reads what the fence
 * recorded.  No in-place access (host_device_ptr: -EOPNOTSUPP).
 *
 * This keeps the engine's pipelining correct on a GPU while costing a
 * synchronize per fence, as before; streams per lane and fences written
 * by the device (cuStreamWriteValue32) replace it.
 *
 * Locking: the fence ring is under the space's xlock, since fence_poll
 * and fence_wait come from any thread while the owner queues.
 */
#include <errno.h>
#include <stdint.h>
#include "daemon/backend/cuda_priv.h"

int pd_cuda_fence(struct pd_backend *be, void *space, uint32_t lane,
		  uint64_t *ticket)
{
	struct cuda_space *s = space;
	uint64_t ns = 0;
	int err;

	if (lane)
		return -EINVAL;
	err = pd_cuda_sync(be, space, &ns);
	if (err)
		return err;
	pthread_mutex_lock(&s->xlock);
	*ticket = ++s->fence_last;
	s->fence_ns[*ticket % PD_CUDA_FENCE_RING] = ns;
	pthread_mutex_unlock(&s->xlock);
	return 0;
}

/* Every fence passed when it was made (it synchronized). */
int pd_cuda_fence_poll(struct pd_backend *be, void *space, uint32_t lane,
		       uint64_t ticket, uint64_t *gpu_ns)
{
	struct cuda_space *s = space;
	uint64_t *slot, ns = 0;
	int ret = 1;

	(void)be;
	if (lane)
		return -EINVAL;
	pthread_mutex_lock(&s->xlock);
	if (!ticket || ticket > s->fence_last) {
		ret = -EINVAL;		/* never issued */
	} else if (s->fence_last - ticket < PD_CUDA_FENCE_RING) {
		slot = &s->fence_ns[ticket % PD_CUDA_FENCE_RING];
		if (*slot != UINT64_MAX)
			ns = *slot;
		*slot = UINT64_MAX;	/* reported once */
	}
	pthread_mutex_unlock(&s->xlock);
	if (ret == 1 && gpu_ns)
		*gpu_ns = ns;
	return ret;
}

int pd_cuda_lane_wait(struct pd_backend *be, void *space, uint32_t lane,
		      uint32_t from, uint64_t ticket)
{
	(void)be;
	(void)space;
	(void)ticket;
	return lane || from ? -EINVAL : 0;
}

int pd_cuda_host_device_ptr(struct pd_backend *be, void *space, void *host,
			    size_t bytes, uint64_t *dptr)
{
	(void)be;
	(void)space;
	(void)host;
	(void)bytes;
	(void)dptr;
	return -EOPNOTSUPP;
}
