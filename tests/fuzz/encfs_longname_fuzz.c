// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * encfs_longname_fuzz.c - libFuzzer target for the encfs-gpu long-name
 * sidecar parser and hashed-name checks (encfs-gpu/longname.c and what it
 * needs; the sources are included, they are pure C).  Checks that an
 * accepted sidecar formats back to the same bytes.
 */
#include <stdint.h>
#include <string.h>

#include "encfs-gpu/b64.c"
#include "encfs-gpu/longname.c"
#include "encfs-gpu/name_codec.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char cname[EG_CNAME_MAX + 1], again[EG_SIDECAR_MAX], name[EG_SIDECAR_MAX + 1];
	char side[EG_SIDECAR_LEN + 1];
	ssize_t n, m;

	n = eg_longname_parse((const char *)data, size, cname, sizeof(cname));
	if (n >= 0) {
		m = eg_longname_format(cname, again, sizeof(again));
		if (m != (ssize_t)size || memcmp(again, data, size))
			__builtin_trap();
	}
	/* the same bytes as a directory entry name */
	if (size < sizeof(name)) {
		memcpy(name, data, size);
		name[size] = '\0';
		if (eg_longname_is_hashed(name) &&
		    (eg_longname_sidecar_name(name, side, sizeof(side)) || !eg_longname_is_sidecar(side)))
			__builtin_trap();
		if (eg_longname_is_hashed(name) && eg_longname_is_sidecar(name))
			__builtin_trap();
	}
	return 0;
}
