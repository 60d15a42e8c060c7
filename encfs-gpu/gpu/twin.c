// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * twin.c - host twins of encfs-gpu's XTS-AES kernels (aes_xts.cu), so
 * that encfs-gpu's gpu backend runs unchanged on ptaskd's cpu and sim
 * backends: CI exercises the whole path (libptask, the daemon's engine,
 * the parameter layout) without a GPU.  Built as encfs-gpu's twin
 * library (build/twins/encfs-gpu.so, uapi/ptask_twin.h), bound to the
 * PTX encfs-gpu embeds (aes_xts_ptx.S): ptaskd loads it, and it brings
 * its own libcrypto, which ptaskd does not link.
 *
 *   xts_encrypt(uint8_t *data, const uint8_t *tweaks,
 *               struct xts_key_param keys, struct xts_shape_param shape)
 *   xts_decrypt(same)
 *   xts_batch_encrypt(uint8_t *batch, struct xts_key_param keys)
 *   xts_batch_decrypt(same)
 *
 * The batch twins take a tunnel's batch (xts_params.h): a head, then
 * records of XTS_REC_BYTES, each one unit with its own tweak and length;
 * a record of a length out of range, or a head of another stride, is
 * left alone as the kernel leaves it.
 *
 * Parameters exactly as the CUDA kernels take them (the structs are
 * encfs-gpu/gpu/xts_params.h, shared with the kernel and the client):
 * data and tweaks are device pointers; keys and shape arrive by value
 * (PTASK_BIND_PARAM datablocks).  Work: shape.nunits data units back to
 * back in data, unit u at u * unit_len, every unit unit_len bytes except
 * the last (last_len, >= 16, ciphertext stealing when it ends mid-block),
 * unit u's tweak the 16 bytes at tweaks + 16 u, encrypted under K2 as
 * IEEE 1619 says (OpenSSL's XTS IV is exactly that).  In place.
 *
 * The cipher is OpenSSL's EVP AES-XTS, one EVP_CipherUpdate per unit (as
 * encfs-gpu's cpu backend does).  Its key comes from the kernel's
 * parameter itself: an AES key schedule begins with the key (FIPS-197
 * 5.2), so K1 is rk_enc[0 .. Nk-1] and K2 rk_tweak[0 .. Nk-1], as
 * big-endian words.  rk_dec and pow are functions of those and are not
 * read; a client that sent inconsistent ones would get different results
 * from the GPU, which reads them.
 *
 * Differences from the GPU kernel, both for shapes encfs-gpu never sends:
 * units over 16 MiB (IEEE 1619's cap of 2^20 blocks) and malformed shapes
 * are -EINVAL here (the kernel leaves the data alone for the latter);
 * K1 == K2 is -EINVAL (OpenSSL refuses it, as FIPS 140 requires).
 */
#include <errno.h>
#include <string.h>

#include <openssl/evp.h>

#include "uapi/ptask_twin.h"
#include "encfs-gpu/gpu/xts_params.h"

/* XTS-AES-256's 14 rounds: about 20 table lookups and XORs per byte */
#define XTS_OPS_PER_BYTE	20
#define XTS_UNIT_MAX		(16u << 20)

/* By-value parameter @i of exactly @bytes bytes, or NULL (*@err set). */
static const void *param_val(const struct ptask_twin_call *call, uint32_t i,
			     uint32_t bytes, int *err)
{
	if (i >= call->nparams || call->param_bytes[i] != bytes) {
		*err = -EINVAL;
		return NULL;
	}
	return call->params[i];
}

/* The shape, checked, and the bytes of data it covers. */
static int xts_shape(const struct ptask_twin_call *call, struct xts_shape_param *sh,
		     uint64_t *bytes)
{
	const void *p;
	int err = 0;

	p = param_val(call, 3, sizeof(*sh), &err);
	if (err)
		return err;
	memcpy(sh, p, sizeof(*sh));
	*bytes = 0;
	if (!sh->nunits)
		return 0;
	if (sh->last_len < 16 || sh->last_len > XTS_UNIT_MAX ||
	    (sh->nunits > 1 && (sh->unit_len < 16 || sh->unit_len % 16 ||
				sh->unit_len > XTS_UNIT_MAX)))
		return -EINVAL;
	if (__builtin_mul_overflow(sh->nunits - 1, (uint64_t)sh->unit_len, bytes) ||
	    __builtin_add_overflow(*bytes, (uint64_t)sh->last_len, bytes) ||
	    sh->nunits > UINT64_MAX / 16)
		return -EINVAL;
	return 0;
}

/* K1 || K2 from the schedules; the key length in bytes, or -EINVAL. */
static int xts_key(const struct xts_key_param *k, uint8_t key[64])
{
	int nk = k->nr == 14 ? 8 : k->nr == 10 ? 4 : 0;

	if (!nk)
		return -EINVAL;
	for (int i = 0; i < nk; i++)
		for (int b = 0; b < 4; b++) {
			key[4 * i + b] = (uint8_t)(k->rk_enc[i] >> (24 - 8 * b));
			key[4 * nk + 4 * i + b] = (uint8_t)(k->rk_tweak[i] >> (24 - 8 * b));
		}
	return 8 * nk;
}

static int xts_run(const struct ptask_twin_call *call, int enc)
{
	struct xts_shape_param sh;
	const struct xts_key_param *k;
	const uint8_t *tweaks;
	EVP_CIPHER_CTX *ctx;
	uint8_t key[64], *data;
	uint64_t bytes;
	int err = xts_shape(call, &sh, &bytes), keylen, outl;

	if (err)
		return err;
	k = param_val(call, 2, sizeof(*k), &err);
	data = ptask_twin_buf(call, 0, bytes, &err);
	tweaks = ptask_twin_buf(call, 1, 16 * sh.nunits, &err);
	if (err)
		return err;
	if (!sh.nunits)
		return 0;
	keylen = xts_key(k, key);
	if (keylen < 0)
		return keylen;
	ctx = EVP_CIPHER_CTX_new();
	if (!ctx) {
		err = -ENOMEM;
		goto out_wipe;
	}
	if (EVP_CipherInit_ex2(ctx, keylen == 64 ? EVP_aes_256_xts() : EVP_aes_128_xts(),
			       key, NULL, enc, NULL) != 1) {
		err = -EINVAL;		/* K1 == K2 */
		goto out_free;
	}
	for (uint64_t u = 0; u < sh.nunits; u++) {
		int len = (int)(u + 1 == sh.nunits ? sh.last_len : sh.unit_len);
		uint8_t *p = data + u * sh.unit_len;

		if (EVP_CipherInit_ex2(ctx, NULL, NULL, tweaks + 16 * u, enc, NULL) != 1 ||
		    EVP_CipherUpdate(ctx, p, &outl, p, len) != 1 || outl != len) {
			err = -EIO;
			break;
		}
	}
out_free:
	EVP_CIPHER_CTX_free(ctx);
out_wipe:
	OPENSSL_cleanse(key, sizeof(key));
	return err;
}

/* A cipher context for K1 || K2 of @k; NULL and *@err set on failure. */
static EVP_CIPHER_CTX *xts_ctx(const struct xts_key_param *k, int enc, int *err)
{
	EVP_CIPHER_CTX *ctx;
	uint8_t key[64];
	int keylen = xts_key(k, key);

	if (keylen < 0) {
		*err = keylen;
		return NULL;
	}
	ctx = EVP_CIPHER_CTX_new();
	if (!ctx)
		*err = -ENOMEM;
	else if (EVP_CipherInit_ex2(ctx, keylen == 64 ? EVP_aes_256_xts() : EVP_aes_128_xts(),
				    key, NULL, enc, NULL) != 1) {
		EVP_CIPHER_CTX_free(ctx);
		ctx = NULL;
		*err = -EINVAL;		/* K1 == K2 */
	}
	OPENSSL_cleanse(key, sizeof(key));
	return ctx;
}

/* The batch's head and its records, checked against the buffer. */
static uint8_t *xts_batch(const struct ptask_twin_call *call, uint64_t *records, int *err)
{
	struct xts_batch_head h;
	uint8_t *batch = ptask_twin_buf(call, 0, sizeof(h), err);

	if (*err)
		return NULL;
	memcpy(&h, batch, sizeof(h));
	*records = h.stride == XTS_REC_BYTES ? h.records : 0;
	if (*records > (UINT64_MAX - sizeof(h)) / XTS_REC_BYTES)
		*err = -EINVAL;
	else
		batch = ptask_twin_buf(call, 0, sizeof(h) + *records * XTS_REC_BYTES, err);
	return *err ? NULL : batch;
}

static int xts_batch_run(const struct ptask_twin_call *call, int enc)
{
	const struct xts_key_param *k;
	EVP_CIPHER_CTX *ctx;
	uint64_t records = 0;
	int err = 0, outl;
	uint8_t *batch = xts_batch(call, &records, &err);

	k = param_val(call, 1, sizeof(*k), &err);
	if (err)
		return err;
	if (!records)
		return 0;
	ctx = xts_ctx(k, enc, &err);
	if (!ctx)
		return err;
	for (uint64_t r = 0; r < records && !err; r++) {
		uint8_t *rec = batch + XTS_BATCH_HEAD_BYTES + r * XTS_REC_BYTES;
		uint8_t *p = rec + XTS_REC_HEAD_BYTES;
		struct xts_rec_head h;

		memcpy(&h, rec, sizeof(h));
		if (h.len < 16 || h.len > XTS_REC_DATA)
			continue;
		if (EVP_CipherInit_ex2(ctx, NULL, NULL, h.tweak, enc, NULL) != 1 ||
		    EVP_CipherUpdate(ctx, p, &outl, p, (int)h.len) != 1 || outl != (int)h.len)
			err = -EIO;
	}
	EVP_CIPHER_CTX_free(ctx);
	return err;
}

static int xts_batch_encrypt_run(const struct ptask_twin_call *call)
{
	return xts_batch_run(call, 1);
}

static int xts_batch_decrypt_run(const struct ptask_twin_call *call)
{
	return xts_batch_run(call, 0);
}

static int xts_batch_cost(const struct ptask_twin_call *call, struct ptask_twin_cost *cost)
{
	uint64_t records = 0;
	int err = 0;

	xts_batch(call, &records, &err);
	if (err)
		return err;
	cost->flops = XTS_OPS_PER_BYTE * XTS_REC_DATA * records;
	cost->bytes = 2 * XTS_REC_BYTES * records;
	return 0;
}

static int xts_encrypt_run(const struct ptask_twin_call *call)
{
	return xts_run(call, 1);
}

static int xts_decrypt_run(const struct ptask_twin_call *call)
{
	return xts_run(call, 0);
}

static int xts_cost(const struct ptask_twin_call *call, struct ptask_twin_cost *cost)
{
	struct xts_shape_param sh;
	uint64_t bytes;
	int err = xts_shape(call, &sh, &bytes);

	if (err)
		return err;
	if (bytes > UINT64_MAX / XTS_OPS_PER_BYTE)
		return -EINVAL;
	cost->flops = XTS_OPS_PER_BYTE * bytes;
	cost->bytes = 2 * bytes + 16 * sh.nunits;
	return 0;
}

/* The PTX encfs-gpu hands ptaskd (aes_xts_ptx.S), NUL included. */
extern const char eg_xts_ptx[], eg_xts_ptx_end[];

static const struct ptask_twin xts_twins[] = {
	{ "xts_encrypt", eg_xts_ptx, eg_xts_ptx_end, xts_encrypt_run, xts_cost },
	{ "xts_decrypt", eg_xts_ptx, eg_xts_ptx_end, xts_decrypt_run, xts_cost },
	{ "xts_batch_encrypt", eg_xts_ptx, eg_xts_ptx_end, xts_batch_encrypt_run,
	  xts_batch_cost },
	{ "xts_batch_decrypt", eg_xts_ptx, eg_xts_ptx_end, xts_batch_decrypt_run,
	  xts_batch_cost },
};
PTASK_TWIN_LIBRARY(encfs_xts_twin_table, xts_twins);
