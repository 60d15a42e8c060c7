/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * name_codec.h - the crypto-free half of name encryption: padding, the
 * shape of an encrypted name, validation of a decrypted one, and the
 * reserved backing names.  names.c adds AES-SIV on top.
 *
 * An encrypted name is base64url(tag[16] || SIV-ciphertext), the
 * ciphertext being the plaintext name padded to a multiple of 16 bytes
 * (PKCS#7 style, 1..16 pad bytes) so the backing name does not give away
 * the exact name length.
 */
#ifndef ENCFS_GPU_NAME_CODEC_H
#define ENCFS_GPU_NAME_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define EG_NAME_MAX		255	/* plaintext and backing name limit */
#define EG_NAME_BLOCK		16
#define EG_SIV_TAG		16
/* the largest decoded encrypted name: tag + a padded 255-byte name */
#define EG_CNAME_BYTES_MAX	(EG_SIV_TAG + EG_NAME_MAX + 1)
/* its base64url length */
#define EG_CNAME_MAX		((EG_CNAME_BYTES_MAX * 4 + 2) / 3)

/* Backing names that never hold an encrypted name.  Base64url has no '.',
 * so a name with a '.' cannot collide with any encrypted name. */
#define EG_CONF_NAME		"encfs-gpu.conf"
#define EG_DIRIV_NAME		"encfs-gpu.diriv"
#define EG_DIRIV_LEN		16

size_t eg_name_padded_len(size_t n);
ssize_t eg_name_pad(const char *name, size_t n, uint8_t *out, size_t outsz);
ssize_t eg_name_unpad(const uint8_t *buf, size_t n);
int eg_name_valid(const char *name, size_t n);
ssize_t eg_cname_decode(const char *cname, size_t n, uint8_t *out, size_t outsz);
int eg_cname_is_plain_encrypted(const char *cname);

#endif
