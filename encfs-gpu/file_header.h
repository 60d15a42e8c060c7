/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * file_header.h - the header at the start of every non-empty backing file.
 *
 * The header takes the first EG_HDR_SIZE (4096) bytes, so plaintext offset
 * x lives at backing offset 4096 + x and every 4 KiB data unit of
 * ciphertext sits on a 4 KiB boundary of the backing file.  Only the first
 * 64 bytes are used (the rest is written as zeros):
 *
 *   0   8  magic "ENCFSGPU"
 *   8   2  format version, little endian (1)
 *  10   2  header size in bytes, little endian (4096)
 *  12   4  flags, little endian (0; any other value is refused)
 *  16  16  file id: 128 random bits, the input of every tweak of the file
 *  32  16  steal slot: first ciphertext block of a file shorter than 16
 *          bytes (see layout.h), zero otherwise
 *  48  16  tag: HMAC-SHA-256(header key, bytes 0..31), first 16 bytes
 *
 * An empty file is an empty backing file: the header appears with the
 * first byte, and a file truncated to zero loses it (the next write draws a
 * new file id).
 */
#ifndef ENCFS_GPU_FILE_HEADER_H
#define ENCFS_GPU_FILE_HEADER_H

#include <stddef.h>
#include <stdint.h>

#define EG_HDR_SIZE		4096
#define EG_HDR_USED		64
#define EG_HDR_MAGIC		"ENCFSGPU"
#define EG_HDR_VERSION		1
#define EG_HDR_TAGGED		32	/* bytes covered by the tag */
#define EG_HDR_OFF_FID		16
#define EG_HDR_OFF_STEAL	32
#define EG_HDR_OFF_TAG		48
#define EG_FILE_ID_LEN		16

struct eg_file_header {
	uint8_t file_id[EG_FILE_ID_LEN];
	uint8_t steal[16];
	uint8_t tag[16];
};

void eg_header_pack(const struct eg_file_header *h, uint8_t out[EG_HDR_USED]);
int eg_header_unpack(const uint8_t *buf, size_t n, struct eg_file_header *h);

#endif
