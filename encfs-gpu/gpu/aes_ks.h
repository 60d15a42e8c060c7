/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * aes_ks.h - host-side setup for the kernel in aes_xts.cu: the AES key
 * schedules in the layout its T-table code uses (FIPS-197 words as
 * big-endian uint32, the decryption schedule in equivalent-inverse-cipher
 * form), and the GF(2^128) powers it needs for long data units.
 *
 * OpenSSL does not export its key schedule in a fixed layout (on x86-64
 * the assembler and AES-NI versions each have their own), so this is
 * written from FIPS-197 sections 5.2 and 5.3.5.
 */
#ifndef ENCFS_GPU_AES_KS_H
#define ENCFS_GPU_AES_KS_H

#include <stddef.h>
#include <stdint.h>

#include "xts_params.h"

#define AES_KS_WORDS	XTS_KS_WORDS

struct xts_gpu_keys {
	uint32_t rk_enc[AES_KS_WORDS];
	uint32_t rk_dec[AES_KS_WORDS];
	uint32_t rk_tweak[AES_KS_WORDS];
	int nr;
};

int aes_ks_xts(const uint8_t *key, size_t keylen, struct xts_gpu_keys *k);
void aes_ks_pow_table(unsigned long long pow[XTS_POW_MAX][2]);
int aes_ks_param(const uint8_t *key, size_t keylen, struct xts_key_param *p);

#endif
