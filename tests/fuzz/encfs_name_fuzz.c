// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * encfs_name_fuzz.c - libFuzzer target for encrypted-name decoding in
 * encfs-gpu: a backing directory entry name goes through the checks
 * readdir makes before and after AES-SIV (base64url decoding, the shape
 * of tag || ciphertext, unpadding, plaintext-name validation).  The
 * sources are included (pure C); the AES-SIV step itself is OpenSSL's, and
 * its output is modelled by the decoded bytes.  Checks canonical decoding:
 * what decodes re-encodes to the same name.
 */
#include <stdint.h>
#include <string.h>

#include "encfs-gpu/b64.c"
#include "encfs-gpu/name_codec.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[EG_CNAME_MAX + 16], again[EG_CNAME_MAX + 16];
	uint8_t ct[EG_CNAME_BYTES_MAX];
	ssize_t n, len;

	if (size >= sizeof(name))
		return 0;
	memcpy(name, data, size);
	name[size] = '\0';
	if (!eg_cname_is_plain_encrypted(name))
		return 0;
	n = eg_cname_decode(name, strlen(name), ct, sizeof(ct));
	if (n < 0)
		return 0;
	if (n < EG_SIV_TAG + EG_NAME_BLOCK || (n - EG_SIV_TAG) % EG_NAME_BLOCK)
		__builtin_trap();
	if (eg_b64url_encode(ct, (size_t)n, again, sizeof(again)) != (ssize_t)strlen(name) ||
	    strcmp(again, name))
		__builtin_trap();	/* two spellings of one name */
	/* what follows the tag, as if it were the decrypted plaintext */
	len = eg_name_unpad(ct + EG_SIV_TAG, (size_t)n - EG_SIV_TAG);
	if (len >= 0) {
		if ((size_t)len >= (size_t)n - EG_SIV_TAG)
			__builtin_trap();
		(void)eg_name_valid((const char *)ct + EG_SIV_TAG, (size_t)len);
	}
	return 0;
}
