/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * contents.h - file contents: header, tweaks, and read / write / truncate
 * of a backing file in plaintext terms.
 *
 * Tweaks.  Data unit k of the file with id F gets the 128-bit XTS tweak
 *
 *   T(F, k) = AES-256_Kt( AES-256_Kt(F) XOR le128(k) )
 *
 * with Kt the tweak key: a two-block CBC-MAC of (F, k) under a key used
 * for nothing else, which is a PRF on these fixed-length inputs.  So every
 * (file, unit) pair gets an independent-looking tweak (two collide with
 * probability 2^-128), the tweak is never "file IV XOR block number" (the
 * EncFS audit's 2.3), and hard links, renames and copies of the backing
 * file keep decrypting because F lives in the file.  T is then encrypted
 * under K2 and multiplied by alpha^j for block j inside the unit, as IEEE
 * 1619 does with its data unit sequence number.
 *
 * Holes.  A data unit whose ciphertext is all zero bytes reads as zeros:
 * that is what a sparse write or truncate-up leaves in the backing file.
 * Real ciphertext is all zeros with probability 2^-(8 * unit length).
 *
 * The caller serialises: read under a shared lock of the backing inode,
 * write and truncate under an exclusive one, with the eg_fstate of that
 * inode (shared by every open handle of it).
 */
#ifndef ENCFS_GPU_CONTENTS_H
#define ENCFS_GPU_CONTENTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "file_header.h"
#include "keys.h"
#include "xts.h"

struct eg_contents {
	struct eg_backend *be;
	uint8_t tweak_key[32];
	uint8_t header_key[32];
};

/* per backing inode */
struct eg_fstate {
	int have_hdr;
	uint8_t fid[EG_FILE_ID_LEN];
	uint8_t base[16];	/* AES_Kt(fid) */
};

void eg_contents_init(struct eg_contents *c, const struct eg_keys *k, struct eg_backend *be);
void eg_contents_fini(struct eg_contents *c);
int eg_header_tag(const struct eg_contents *c, const uint8_t hdr[EG_HDR_USED], uint8_t tag[16]);
int eg_tweaks(const struct eg_contents *c, const uint8_t base[16], uint64_t k0, size_t n,
	      uint8_t *out);
int eg_file_size(int fd, uint64_t *size, uint64_t *bsize);
int eg_file_load_header(const struct eg_contents *c, int fd, struct eg_fstate *st);
ssize_t eg_file_read(const struct eg_contents *c, int fd, struct eg_fstate *st, void *buf,
		     size_t size, uint64_t off);
ssize_t eg_file_write(const struct eg_contents *c, int fd, struct eg_fstate *st,
		      const void *buf, size_t size, uint64_t off);
int eg_file_truncate(const struct eg_contents *c, int fd, struct eg_fstate *st, uint64_t size);

#endif
