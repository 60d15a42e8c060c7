// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * encfs_header_fuzz.c - libFuzzer target for the encfs-gpu per-file
 * header parser (encfs-gpu/file_header.c; its source is included, it is
 * pure C).  Checks that what it accepts packs back to the same bytes.
 */
#include <stdint.h>
#include <string.h>

#include "encfs-gpu/file_header.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct eg_file_header h;
	uint8_t again[EG_HDR_USED];

	if (eg_header_unpack(data, size, &h))
		return 0;
	eg_header_pack(&h, again);
	if (memcmp(again, data, EG_HDR_USED))
		__builtin_trap();
	return 0;
}
