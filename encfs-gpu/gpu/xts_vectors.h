/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * xts_vectors.h - XTS-AES known answers shared by the cpu vector test
 * (tests/encfs/vectors_test.c) and the gpu test (xts_gpu_test.c):
 *  - IEEE Std 1619-2007 Annex B: vectors 10..14 (XTS-AES-256, 512-byte
 *    data units) and, for ciphertext stealing, vectors 15..18 (XTS-AES-128,
 *    17..20 bytes: the standard has no AES-256 stealing vectors);
 *  - NIST CAVP XTSGenAES256 (both tweak formats), read from the files of
 *    Debian's python3-cryptography-vectors; units whose length is not a
 *    whole number of bytes are skipped, as the CAVP files mark them.
 */
#ifndef ENCFS_GPU_XTS_VECTORS_H
#define ENCFS_GPU_XTS_VECTORS_H

#include <stddef.h>
#include <stdint.h>

#define XV_CAVP_DIR \
	"/usr/lib/python3/dist-packages/cryptography_vectors/ciphers/AES/XTS"
#define XV_MAX_DATA 512

struct xv_vector {
	char name[48];
	size_t keylen;			/* 32 (AES-128) or 64 (AES-256), K1 || K2 */
	uint8_t key[64];
	uint8_t tweak[16];
	size_t len;
	uint8_t pt[XV_MAX_DATA];
	uint8_t ct[XV_MAX_DATA];
	int decrypt;			/* from a [DECRYPT] section */
};

size_t xv_ieee(struct xv_vector *out, size_t max);
int xv_cavp(const char *path, struct xv_vector **out, size_t *n, size_t *skipped);
int xv_unhex(const char *s, uint8_t *out, size_t max, size_t *len);

#endif
