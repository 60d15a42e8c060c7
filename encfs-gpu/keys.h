/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * keys.h - the master key and what is derived from it.
 *
 *   KEK     = scrypt(password, salt, N, r, p)                 32 bytes
 *   wrapped = AES-256-GCM(KEK, nonce, AAD = config parameters, master)
 *   xts     = HKDF(master, "encfs-gpu v1 contents aes-256-xts")  64 bytes
 *   tweak   = HKDF(master, "encfs-gpu v1 contents tweak")        32 bytes
 *   name    = HKDF(master, "encfs-gpu v1 names aes-256-siv")     64 bytes
 *   header  = HKDF(master, "encfs-gpu v1 header hmac")           32 bytes
 *
 * Every key has one purpose (the EncFS audit's first finding was one key
 * for both encryption and MACs).
 */
#ifndef ENCFS_GPU_KEYS_H
#define ENCFS_GPU_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

struct eg_keys {
	uint8_t xts[64];
	uint8_t tweak[32];
	uint8_t name[64];
	uint8_t header[32];
};

int eg_keys_create(const char *pw, size_t pwlen, unsigned int logn, struct eg_config *cfg,
		   uint8_t master[EG_MASTER_LEN]);
int eg_keys_unlock(const struct eg_config *cfg, const char *pw, size_t pwlen,
		   uint8_t master[EG_MASTER_LEN]);
int eg_keys_rewrap(struct eg_config *cfg, const uint8_t master[EG_MASTER_LEN], const char *pw,
		   size_t pwlen, unsigned int logn);
int eg_keys_derive(const uint8_t master[EG_MASTER_LEN], struct eg_keys *k);
void eg_wipe(void *p, size_t n);

#endif
