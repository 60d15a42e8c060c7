// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * file_header.c - pack and parse the per-file header (layout in
 * file_header.h).  The tag is checked by the caller (contents.c), which
 * has the key; this parser only refuses what is malformed, and is fuzzed
 * by tests/fuzz/encfs_header_fuzz.c.
 */
#include <errno.h>
#include <string.h>

#include "file_header.h"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void eg_header_pack(const struct eg_file_header *h, uint8_t out[EG_HDR_USED])
{
	memset(out, 0, EG_HDR_USED);
	memcpy(out, EG_HDR_MAGIC, 8);
	put16(out + 8, EG_HDR_VERSION);
	put16(out + 10, EG_HDR_SIZE);
	/* flags (12..15) stay 0 */
	memcpy(out + EG_HDR_OFF_FID, h->file_id, EG_FILE_ID_LEN);
	memcpy(out + EG_HDR_OFF_STEAL, h->steal, 16);
	memcpy(out + EG_HDR_OFF_TAG, h->tag, 16);
}

/**
 * eg_header_unpack() - parse the first bytes of a backing file
 * @buf: bytes read from offset 0
 * @n: their count
 * @h: filled on success
 *
 * Return: 0; -EBADMSG for a short buffer, wrong magic, an unknown version,
 * size or flags.  A zero file id is refused too: it is what a header that
 * was zeroed (a hole, a crashed write) would carry.
 */
int eg_header_unpack(const uint8_t *buf, size_t n, struct eg_file_header *h)
{
	static const uint8_t zero[EG_FILE_ID_LEN];

	if (n < EG_HDR_USED)
		return -EBADMSG;
	if (memcmp(buf, EG_HDR_MAGIC, 8))
		return -EBADMSG;
	if (get16(buf + 8) != EG_HDR_VERSION || get16(buf + 10) != EG_HDR_SIZE)
		return -EBADMSG;
	if (get32(buf + 12) != 0)
		return -EBADMSG;
	if (!memcmp(buf + EG_HDR_OFF_FID, zero, EG_FILE_ID_LEN))
		return -EBADMSG;
	memcpy(h->file_id, buf + EG_HDR_OFF_FID, EG_FILE_ID_LEN);
	memcpy(h->steal, buf + EG_HDR_OFF_STEAL, 16);
	memcpy(h->tag, buf + EG_HDR_OFF_TAG, 16);
	return 0;
}
