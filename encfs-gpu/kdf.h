/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * kdf.h - password and key derivation through OpenSSL 3's EVP_KDF:
 * "SCRYPT" turns the password into the key-encryption key, "HKDF"
 * (SHA-256) turns the master key into independent subkeys.
 */
#ifndef ENCFS_GPU_KDF_H
#define ENCFS_GPU_KDF_H

#include <stddef.h>
#include <stdint.h>

int eg_scrypt(const char *pw, size_t pwlen, const uint8_t *salt, size_t saltlen,
	      unsigned int logn, unsigned int r, unsigned int p, uint8_t *out, size_t outlen);
int eg_hkdf(const uint8_t *ikm, size_t ikmlen, const char *info, uint8_t *out, size_t outlen);

#endif
