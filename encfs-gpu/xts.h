/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * xts.h - the cipher backend interface: AES-256-XTS over N data units.
 *
 * A request is N data units laid back to back in one buffer, each with its
 * own 128-bit tweak (the XTS "data unit sequence number" of IEEE 1619,
 * given as the 16 bytes that are encrypted under the second key).  Every
 * unit but the last has unit_len bytes, a multiple of 16; the last one has
 * last_len >= 16 bytes and may end in a partial block, which the backend
 * handles by ciphertext stealing as IEEE 1619 says.  Work is in place.
 *
 * Backends:
 *   cpu   OpenSSL EVP "AES-256-XTS" (AES-NI where the CPU has it)
 *   gpu   the CUDA kernel gpu/aes_xts.cu submitted as a ptask through
 *         libptask (backend_gpu.c; needs ptaskd, whose cpu and sim
 *         backends run a host twin of the kernel)
 *   auto  both, measured at mount: requests below the measured crossover
 *         size go to the cpu, larger ones to the gpu (backend_auto.c)
 *
 * crypt() may be called from many threads at once.
 */
#ifndef ENCFS_GPU_XTS_H
#define ENCFS_GPU_XTS_H

#include <stddef.h>
#include <stdint.h>

#define EG_XTS_KEY_LEN	64	/* K1 (data) || K2 (tweak) */
#define EG_TWEAK_LEN	16

struct eg_xts_req {
	uint8_t *data;
	const uint8_t *tweaks;	/* nunits * 16 bytes */
	size_t nunits;
	size_t unit_len;	/* every unit but the last; multiple of 16 */
	size_t last_len;	/* the last unit, >= 16 */
};

struct eg_backend;

struct eg_backend_ops {
	const char *name;
	/* encrypt (enc = 1) or decrypt (enc = 0) in place; 0 or -errno */
	int (*crypt)(struct eg_backend *be, int enc, const struct eg_xts_req *req);
	void (*destroy)(struct eg_backend *be);
	/* optional: drop what must not cross a fork() (the gpu backend's
	 * connection to ptaskd); the next crypt() makes it again */
	void (*detach)(struct eg_backend *be);
};

struct eg_backend {
	const struct eg_backend_ops *ops;
};

static inline size_t eg_xts_req_bytes(const struct eg_xts_req *r)
{
	return r->nunits ? (r->nunits - 1) * r->unit_len + r->last_len : 0;
}

int eg_xts_req_check(const struct eg_xts_req *r);
int eg_backend_cpu_new(const uint8_t key[EG_XTS_KEY_LEN], struct eg_backend **out);
int eg_backend_gpu_new(const uint8_t key[EG_XTS_KEY_LEN], struct eg_backend **out,
		       const char **why);
int eg_backend_auto_new(struct eg_backend *cpu, struct eg_backend *gpu, struct eg_backend **out);
size_t eg_backend_auto_crossover(const struct eg_backend *be);
int eg_backend_open(const char *kind, const uint8_t key[EG_XTS_KEY_LEN], int verbose,
		    struct eg_backend **out, const char **why);

static inline int eg_backend_crypt(struct eg_backend *be, int enc, const struct eg_xts_req *r)
{
	return be->ops->crypt(be, enc, r);
}

/* Before FUSE daemonizes: see eg_backend_ops.detach. */
static inline void eg_backend_detach(struct eg_backend *be)
{
	if (be->ops->detach)
		be->ops->detach(be);
}

static inline void eg_backend_destroy(struct eg_backend *be)
{
	if (be)
		be->ops->destroy(be);
}

#endif
