/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * xts_params.h - the by-value parameters of the kernels in aes_xts.cu,
 * shared by everything that must lay them out byte for byte the same:
 * the kernel (nvcc), the host code that fills them (aes_ks.c, the gpu
 * backend, xts_gpu_test.c) and the kernels' host twin (twin.c), which
 * ptaskd's cpu and sim backends run.  C and CUDA; fixed-width types, no implicit padding (checked
 * below), so gcc and nvcc agree on every offset.
 *
 * The kernels' signatures (aes_xts.cu):
 *
 *   xts_encrypt(uint8_t *data, const uint8_t *tweaks,
 *               const struct xts_key_param keys, struct xts_shape_param shape)
 *   xts_decrypt(same)
 *   xts_batch_encrypt(uint8_t *batch, const struct xts_key_param keys)
 *   xts_batch_decrypt(same)
 *
 * The batch kernels take a ptask tunnel's batch (uapi/ptask.h,
 * "Record-stream tunnels"): a struct xts_batch_head (the tunnel's struct
 * ptask_tunnel_head, laid out again here so that nvcc needs no kernel
 * header), then head.records records of XTS_REC_BYTES, each a struct
 * xts_rec_head (the unit's tweak and length) and XTS_REC_DATA bytes of
 * data: one data unit of up to 4 KiB per record, from whichever request
 * pushed it.
 *
 * Both structs are passed by value because ptaskd passes a datablock whose
 * template binds PTASK_BIND_PARAM as the parameter's bytes (4 KiB at most,
 * CUDA's parameter space), and it has no way to fill a named __constant__
 * symbol.  The kernel reads the round keys straight from the parameter
 * space (a __grid_constant__), which the constant cache serves exactly as
 * it served the __constant__ arrays this replaced.
 */
#ifndef ENCFS_GPU_XTS_PARAMS_H
#define ENCFS_GPU_XTS_PARAMS_H

#include <stdint.h>

#define XTS_KS_WORDS	60	/* AES-256: 15 round keys of 4 words */
#define XTS_POW_MAX	24	/* alpha^(256 * 2^b), b < 24: units up to 2^32 blocks */

/**
 * struct xts_key_param - the key material of one XTS key K1 || K2
 * @rk_enc: K1's encryption schedule, FIPS-197 words as big-endian uint32
 * @rk_dec: K1's equivalent-inverse-cipher schedule (FIPS-197 5.3.5)
 * @rk_tweak: K2's encryption schedule
 * @nr: rounds, 14 (XTS-AES-256) or 10 (XTS-AES-128)
 * @reserved: 0
 * @pow: alpha^(256 * 2^b) in GF(2^128) as (low, high) little-endian
 *	halves, for units longer than one chunk of 256 blocks
 *
 * A schedule begins with its key (FIPS-197 5.2), so rk_enc[0 .. Nk-1]
 * and rk_tweak[0 .. Nk-1] are K1 and K2 themselves: the host
 * implementation takes its OpenSSL key from there.
 */
struct xts_key_param {
	uint32_t rk_enc[XTS_KS_WORDS];
	uint32_t rk_dec[XTS_KS_WORDS];
	uint32_t rk_tweak[XTS_KS_WORDS];
	int32_t nr;
	uint32_t reserved;
	uint64_t pow[XTS_POW_MAX][2];
};

/**
 * struct xts_shape_param - one request's shape
 * @nunits: data units back to back in data (0: nothing to do)
 * @unit_len: bytes of every unit but the last; a multiple of 16
 * @last_len: bytes of the last unit, >= 16 (any length: ciphertext
 *	stealing past the last whole block)
 *
 * data holds (nunits - 1) * unit_len + last_len bytes (it may be larger:
 * the rest is left alone), tweaks 16 * nunits.
 */
struct xts_shape_param {
	uint64_t nunits;
	uint32_t unit_len;
	uint32_t last_len;
};

/**
 * struct xts_batch_head - the head of a tunnel's batch (struct
 *	ptask_tunnel_head, uapi/ptask.h)
 * @records: records that follow
 * @stride: bytes per record: XTS_REC_BYTES, else the kernel does nothing
 * @reserved: 0
 */
struct xts_batch_head {
	uint64_t records;
	uint32_t stride;
	uint32_t reserved;
};

/**
 * struct xts_rec_head - one data unit's record in a batch, before its data
 * @tweak: the unit's tweak (IEEE 1619's data unit sequence number)
 * @len: the unit's bytes, 16 .. XTS_REC_DATA (ciphertext stealing past the
 *	last whole block); a record of another length is left alone
 * @reserved: 0
 */
struct xts_rec_head {
	uint8_t tweak[16];
	uint32_t len;
	uint32_t reserved[3];
};

#define XTS_KEY_PARAM_BYTES	1112
#define XTS_SHAPE_PARAM_BYTES	16
#define XTS_BATCH_HEAD_BYTES	16
#define XTS_REC_HEAD_BYTES	32
#define XTS_REC_DATA		4096
#define XTS_REC_BYTES		(XTS_REC_HEAD_BYTES + XTS_REC_DATA)

#ifdef __cplusplus
static_assert(sizeof(struct xts_key_param) == XTS_KEY_PARAM_BYTES, "key param layout");
static_assert(sizeof(struct xts_shape_param) == XTS_SHAPE_PARAM_BYTES, "shape param layout");
static_assert(sizeof(struct xts_batch_head) == XTS_BATCH_HEAD_BYTES, "batch head layout");
static_assert(sizeof(struct xts_rec_head) == XTS_REC_HEAD_BYTES, "record head layout");
#else
_Static_assert(sizeof(struct xts_key_param) == XTS_KEY_PARAM_BYTES, "key param layout");
_Static_assert(sizeof(struct xts_shape_param) == XTS_SHAPE_PARAM_BYTES, "shape param layout");
_Static_assert(sizeof(struct xts_batch_head) == XTS_BATCH_HEAD_BYTES, "batch head layout");
_Static_assert(sizeof(struct xts_rec_head) == XTS_REC_HEAD_BYTES, "record head layout");
#endif

#endif
