// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * encfs_config_fuzz.c - libFuzzer target for the encfs-gpu config parser
 * (encfs-gpu/config.c), which reads a file an attacker may have replaced.
 * Includes the parser's source: it is pure C with no library, so this
 * builds with nothing but the sanitizers (as scripts/run-unit.sh and
 * tests/encfs/run.sh build it).  Beyond crashes it checks the parser's
 * promise: whatever it accepts is exactly the canonical formatting.
 */
#include <stdint.h>
#include <string.h>

#include "encfs-gpu/config.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char canon[EG_CONFIG_MAX];
	struct eg_config c;
	const char *why = NULL;
	ssize_t n;

	if (eg_config_parse((const char *)data, size, &c, &why)) {
		if (!why)
			__builtin_trap();
		return 0;
	}
	n = eg_config_format(&c, canon, sizeof(canon));
	if (n < 0 || (size_t)n != size || memcmp(canon, data, size))
		__builtin_trap();	/* accepted a second spelling */
	if (c.logn < EG_SCRYPT_LOGN_MIN || c.logn > EG_SCRYPT_LOGN_MAX || !c.r || !c.p)
		__builtin_trap();	/* let through a cost the KDF must not see */
	return 0;
}
