// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * layout.c - data-unit arithmetic (rules in layout.h).  Pure code, unit
 * tested exhaustively around every boundary in tests/encfs/unit_test.c.
 */
#include "layout.h"

/* Number of data units of a file of @size bytes. */
uint64_t eg_layout_nunits(uint64_t size)
{
	uint64_t n = size / EG_UNIT, r = size % EG_UNIT;

	if (size == 0)
		return 0;
	if (size < EG_BLOCK)
		return 1;
	if (r == 0)
		return n;
	return r >= EG_BLOCK ? n + 1 : n;
}

/* Length of unit @k of a file of @size bytes; 0 past the last unit. */
uint32_t eg_layout_unit_len(uint64_t size, uint64_t k)
{
	uint64_t n = eg_layout_nunits(size);

	if (k >= n)
		return 0;
	if (k + 1 < n)
		return EG_UNIT;
	return (uint32_t)(size - k * EG_UNIT);
}

/* The unit holding byte @off (< @size) of a file of @size bytes. */
uint64_t eg_layout_unit_of(uint64_t size, uint64_t off)
{
	uint64_t k = off / EG_UNIT, n = eg_layout_nunits(size);

	return k < n ? k : n - 1;
}
