/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * config.h - the config file CIPHERDIR/encfs-gpu.conf.
 *
 * A text file with exactly one spelling (the parser re-formats what it
 * read and refuses any difference), nine lines:
 *
 *   encfs-gpu config 1
 *   kdf scrypt logn=16 r=8 p=1
 *   salt <32 bytes hex>
 *   contents aes-256-xts unit=4096 header=4096
 *   names aes-256-siv pad=16 longname=255
 *   wrap aes-256-gcm
 *   nonce <12 bytes hex>
 *   key <32 bytes hex>          the master key, encrypted
 *   tag <16 bytes hex>          the GCM tag
 *
 * The first six lines ("the parameters") are the GCM additional data, so
 * changing any of them (a cheaper scrypt cost, another salt, another
 * format) makes the unwrap fail exactly as a wrong password does.  Only
 * this exact format is accepted; the "contents" and "names" lines are
 * there to be authenticated, so a future format change cannot be spliced
 * into an old volume.
 */
#ifndef ENCFS_GPU_CONFIG_H
#define ENCFS_GPU_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define EG_CONFIG_VERSION	1
#define EG_CONFIG_MAX		1024	/* the file is ~400 bytes */
#define EG_SALT_LEN		32
#define EG_NONCE_LEN		12
#define EG_MASTER_LEN		32
#define EG_GCM_TAG_LEN		16

/* scrypt bounds: the low end exists for tests (init warns below
 * EG_SCRYPT_LOGN_WARN), the high end keeps a tampered config from asking
 * for more than 128 * r * (N + p), about 8 GiB, and p sequential passes */
#define EG_SCRYPT_LOGN_MIN	10
#define EG_SCRYPT_LOGN_WARN	15
#define EG_SCRYPT_LOGN_MAX	22
#define EG_SCRYPT_LOGN_DEFAULT	16
#define EG_SCRYPT_R_MAX		16
#define EG_SCRYPT_P_MAX		4

struct eg_config {
	unsigned int logn, r, p;
	uint8_t salt[EG_SALT_LEN];
	uint8_t nonce[EG_NONCE_LEN];
	uint8_t wrapped[EG_MASTER_LEN];
	uint8_t tag[EG_GCM_TAG_LEN];
};

ssize_t eg_config_format_params(const struct eg_config *c, char *out, size_t outsz);
ssize_t eg_config_format(const struct eg_config *c, char *out, size_t outsz);
int eg_config_parse(const char *buf, size_t n, struct eg_config *c, const char **why);

#endif
