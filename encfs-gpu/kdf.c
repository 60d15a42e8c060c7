// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kdf.c - scrypt and HKDF through EVP_KDF.
 */
#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include "kdf.h"

static int derive(const char *alg, OSSL_PARAM *params, uint8_t *out, size_t outlen)
{
	EVP_KDF *kdf;
	EVP_KDF_CTX *ctx;
	int ret = -EIO;

	kdf = EVP_KDF_fetch(NULL, alg, NULL);
	if (!kdf)
		return -ENOSYS;
	ctx = EVP_KDF_CTX_new(kdf);
	if (!ctx) {
		ret = -ENOMEM;
		goto err_kdf;
	}
	if (EVP_KDF_derive(ctx, out, outlen, params) == 1)
		ret = 0;
	EVP_KDF_CTX_free(ctx);
err_kdf:
	EVP_KDF_free(kdf);
	return ret;
}

/**
 * eg_scrypt() - scrypt(@pw, @salt, N = 2^@logn, @r, @p)
 * @pw: password bytes
 * @pwlen: their count
 * @salt: salt
 * @saltlen: its length
 * @logn: log2 of the cost N
 * @r: block size
 * @p: parallelism
 * @out: derived key
 * @outlen: its length
 *
 * The memory limit is set from the parameters: OpenSSL needs
 * 128 * r * (N + 2) for V and 128 * r * p for B, plus 1 MiB of slack; its
 * default of about 1 GiB would refuse the upper costs the config allows,
 * and the old (p + 1) * 128 * r * N allowed far more than is used.
 *
 * Return: 0, -ENOSYS without scrypt, -EIO when OpenSSL refuses.
 */
int eg_scrypt(const char *pw, size_t pwlen, const uint8_t *salt, size_t saltlen,
	      unsigned int logn, unsigned int r, unsigned int p, uint8_t *out, size_t outlen)
{
	uint64_t n = (uint64_t)1 << logn;
	uint32_t r32 = r, p32 = p;
	uint64_t maxmem = 128ull * r * (n + 2 + p) + (1u << 20);
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_PASSWORD, (void *)pw, pwlen),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, saltlen),
		OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_N, &n),
		OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_R, &r32),
		OSSL_PARAM_construct_uint32(OSSL_KDF_PARAM_SCRYPT_P, &p32),
		OSSL_PARAM_construct_uint64(OSSL_KDF_PARAM_SCRYPT_MAXMEM, &maxmem),
		OSSL_PARAM_construct_end(),
	};

	return derive("SCRYPT", params, out, outlen);
}

/**
 * eg_hkdf() - HKDF-SHA-256(@ikm, no salt, @info)
 * @ikm: input key material (the master key)
 * @ikmlen: its length
 * @info: a label naming the subkey's single purpose
 * @out: derived key
 * @outlen: its length
 *
 * Return: 0 or a negative errno.
 */
int eg_hkdf(const uint8_t *ikm, size_t ikmlen, const char *info, uint8_t *out, size_t outlen)
{
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, "SHA256", 0),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm, ikmlen),
		OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, strlen(info)),
		OSSL_PARAM_construct_end(),
	};

	return derive("HKDF", params, out, outlen);
}
