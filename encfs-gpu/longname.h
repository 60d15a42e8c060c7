/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * longname.h - names too long for the backing filesystem.
 *
 * An encrypted name longer than 255 characters is stored under
 *   encfs-gpu.longname.<base64url(SHA-256(encrypted name))>
 * with a sidecar file next to it,
 *   encfs-gpu.longname.<same hash>.name
 * whose content is
 *   "encfs-gpu-longname 1\n" <encrypted name> "\n"
 * The hash binds the sidecar to its entry: names.c recomputes it and refuses
 * a sidecar that does not match.  Hashing lives in names.c; this file is
 * the pure formatting and parsing, included by the long-name fuzzer.
 */
#ifndef ENCFS_GPU_LONGNAME_H
#define ENCFS_GPU_LONGNAME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define EG_LONGNAME_PREFIX	"encfs-gpu.longname."
#define EG_LONGNAME_SUFFIX	".name"
#define EG_LONGNAME_MAGIC	"encfs-gpu-longname 1\n"
#define EG_LONGNAME_HASH_CHARS	43	/* base64url of 32 bytes */
#define EG_LONGNAME_LEN		(sizeof(EG_LONGNAME_PREFIX) - 1 + EG_LONGNAME_HASH_CHARS)
#define EG_SIDECAR_LEN		(EG_LONGNAME_LEN + sizeof(EG_LONGNAME_SUFFIX) - 1)
/* a sidecar never needs to be larger than this */
#define EG_SIDECAR_MAX		1024

int eg_longname_from_digest(const uint8_t digest[32], char *out, size_t outsz);
int eg_longname_is_hashed(const char *name);
int eg_longname_is_sidecar(const char *name);
int eg_longname_sidecar_name(const char *hashed, char *out, size_t outsz);
ssize_t eg_longname_format(const char *cname, char *out, size_t outsz);
ssize_t eg_longname_parse(const char *buf, size_t n, char *cname, size_t cnamesz);

#endif
