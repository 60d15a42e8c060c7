// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * backend_gpu.c - the gpu backend: AES-256-XTS as a ptask.
 *
 * The kernel is gpu/aes_xts.cu, compiled to PTX (make encfs-gpu-gputest
 * builds it and gpu/xts_gpu_test.c, which checks it against the IEEE 1619
 * and CAVP vectors and against OpenSSL through the CUDA driver API
 * directly).  In the filesystem it will run as a ptask submitted through
 * libptask, so ptaskd owns the device and schedules it among other users:
 *
 *   template  "encfs-gpu/aes-256-xts-{enc,dec}": the PTX, entry points
 *             xts_encrypt / xts_decrypt, 256 threads per block
 *   ports     in:  data datablock (nunits units back to back)
 *                  tweak datablock (16 bytes per unit)
 *             in:  key datablock, sticky (the expanded key schedules the
 *                  kernel keeps in constant memory; aes_ks.c builds them)
 *             out: data datablock, the same bytes transformed
 *   scalars   nunits, unit_len, last_len
 *
 * crypt() will push the request's two datablocks and pull the result,
 * batching concurrent FUSE requests into one datablock when they arrive
 * together.  Until ptaskd and libptask exist this backend reports itself
 * unavailable, which makes --backend gpu fail at mount with that reason
 * and --backend auto use the cpu.
 */
#include <errno.h>

#include "xts.h"

/**
 * eg_backend_gpu_new() - the ptask backend
 * @key: K1 || K2
 * @out: the backend
 * @why: set to the reason it is unavailable
 *
 * Return: -ENODEV for now (see above).
 */
int eg_backend_gpu_new(const uint8_t key[EG_XTS_KEY_LEN], struct eg_backend **out,
		       const char **why)
{
	(void)key;
	*out = NULL;
	*why = "the gpu backend runs through ptaskd/libptask, which this build does not have yet";
	return -ENODEV;
}
