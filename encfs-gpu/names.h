/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * names.h - deterministic name encryption with AES-256-SIV (RFC 5297,
 * OpenSSL 3 "AES-256-SIV").
 *
 * cname = base64url(SIV(name key, AD = [directory IV], pad16(name)))
 *
 * The directory IV is 16 random bytes kept in each backing directory
 * (encfs-gpu.diriv), so equal names in different directories encrypt
 * differently, while a name keeps its spelling as long as its directory
 * exists (lookups need no index).  Renaming a directory moves its IV with
 * it, so nothing below has to be re-encrypted.  SIV's tag authenticates
 * the name: a forged or corrupted backing name does not decrypt.
 *
 * Symlink targets use the same key with the single AD string
 * "encfs-gpu symlink" (17 bytes, so it can never equal a 16-byte IV).
 */
#ifndef ENCFS_GPU_NAMES_H
#define ENCFS_GPU_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "longname.h"
#include "name_codec.h"

#define EG_NAME_KEY_LEN		64
#define EG_SYMLINK_MAX		3039	/* longest target whose encryption fits PATH_MAX */
#define EG_CTARGET_MAX		4096

ssize_t eg_name_encrypt(const uint8_t key[EG_NAME_KEY_LEN], const uint8_t diriv[EG_DIRIV_LEN],
			const char *name, char *cname, size_t cnamesz);
ssize_t eg_name_decrypt(const uint8_t key[EG_NAME_KEY_LEN], const uint8_t diriv[EG_DIRIV_LEN],
			const char *cname, char *name, size_t namesz);
int eg_name_backing(const char *cname, char *bname, size_t bnamesz);
int eg_longname_verify(const char *hashed, const char *cname);
ssize_t eg_symlink_encrypt(const uint8_t key[EG_NAME_KEY_LEN], const char *target, char *out,
			   size_t outsz);
ssize_t eg_symlink_decrypt(const uint8_t key[EG_NAME_KEY_LEN], const char *ctarget, char *out,
			   size_t outsz);

#endif
