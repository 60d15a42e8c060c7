/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * b64.h - strict, canonical base64url (RFC 4648 section 5, no padding).
 *
 * Encrypted names are stored as base64url text.  Each byte string must have
 * exactly one spelling, or two backing names could decode to the same
 * plaintext name, so the decoder refuses padding, whitespace, characters
 * outside the alphabet, a length of 1 mod 4 and non-zero trailing bits.
 * OpenSSL's EVP_EncodeBlock/EVP_DecodeBlock use the '+' '/' alphabet with
 * padding and a lenient decoder, hence this small codec.
 */
#ifndef ENCFS_GPU_B64_H
#define ENCFS_GPU_B64_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Characters needed for @n bytes (no padding, no NUL). */
static inline size_t eg_b64_enc_len(size_t n)
{
	return n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
}

/* Upper bound on bytes decoded from @n characters. */
static inline size_t eg_b64_dec_max(size_t n)
{
	return n / 4 * 3 + 2;
}

int eg_b64_valid_char(int c);
ssize_t eg_b64url_encode(const uint8_t *in, size_t n, char *out, size_t outsz);
ssize_t eg_b64url_decode(const char *in, size_t n, uint8_t *out, size_t outsz);

#endif
