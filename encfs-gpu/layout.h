/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * layout.h - how a plaintext file of size S is cut into XTS data units.
 *
 * Unit k always starts at plaintext offset 4096 * k (backing offset
 * 4096 + 4096 * k).  Its length depends on S, because XTS needs at least
 * 16 bytes per data unit and handles a partial last block by ciphertext
 * stealing, never by a stream mode:
 *
 *   S == 0            no unit (and no header)
 *   0 < S < 16        one "tiny" unit: the 16 + S bytes  zero[16] || data
 *                     are encrypted with ciphertext stealing; the first
 *                     ciphertext block goes to the header's steal slot,
 *                     the other S bytes to the data area
 *   S % 4096 == 0     S / 4096 full units
 *   S % 4096 >= 16    full units, then one unit of S % 4096 bytes
 *   S % 4096 in 1..15 full units, the last one stretched to 4096 + S % 4096
 *
 * So the ciphertext is exactly as long as the plaintext, and only the last
 * one or two units depend on S: a write that moves EOF re-encrypts them.
 */
#ifndef ENCFS_GPU_LAYOUT_H
#define ENCFS_GPU_LAYOUT_H

#include <stdint.h>

#define EG_UNIT		4096u
#define EG_BLOCK	16u

uint64_t eg_layout_nunits(uint64_t size);
uint32_t eg_layout_unit_len(uint64_t size, uint64_t k);
uint64_t eg_layout_unit_of(uint64_t size, uint64_t off);

static inline int eg_layout_tiny(uint64_t size)
{
	return size > 0 && size < EG_BLOCK;
}

static inline uint64_t eg_layout_unit_start(uint64_t k)
{
	return k * EG_UNIT;
}

static inline uint64_t eg_layout_unit_end(uint64_t size, uint64_t k)
{
	return k * EG_UNIT + eg_layout_unit_len(size, k);
}

#endif
