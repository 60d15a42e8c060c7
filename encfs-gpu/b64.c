// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * b64.c - strict, canonical base64url without padding (see b64.h for why
 * this is not OpenSSL's codec).  Pure code: no allocation, no crypto, so
 * the name fuzzer can include it as it is.
 */
#include <errno.h>
#include <string.h>

#include "b64.h"

static const char alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static int val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

int eg_b64_valid_char(int c)
{
	return val(c) >= 0;
}

/**
 * eg_b64url_encode() - encode @n bytes of @in into @out
 * @in: bytes
 * @n: their count
 * @out: buffer for the text and its terminating NUL
 * @outsz: its size
 *
 * Return: the text length, or -ENOSPC when @out is too small.
 */
ssize_t eg_b64url_encode(const uint8_t *in, size_t n, char *out, size_t outsz)
{
	size_t len = eg_b64_enc_len(n), i, o = 0;

	if (outsz < len + 1)
		return -ENOSPC;
	for (i = 0; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		out[o++] = alphabet[v >> 18];
		out[o++] = alphabet[(v >> 12) & 63];
		out[o++] = alphabet[(v >> 6) & 63];
		out[o++] = alphabet[v & 63];
	}
	if (n - i == 1) {
		out[o++] = alphabet[in[i] >> 2];
		out[o++] = alphabet[(in[i] & 3) << 4];
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)in[i] << 8 | in[i + 1];

		out[o++] = alphabet[v >> 10];
		out[o++] = alphabet[(v >> 4) & 63];
		out[o++] = alphabet[(v & 15) << 2];
	}
	out[o] = '\0';
	return (ssize_t)o;
}

/**
 * eg_b64url_decode() - decode exactly @n characters of @in
 * @in: text, not necessarily NUL-terminated
 * @n: its length
 * @out: buffer for the bytes
 * @outsz: its size
 *
 * Return: the byte count; -EINVAL for a character outside the alphabet, a
 * length of 1 mod 4 or non-zero unused trailing bits (a second spelling of
 * the same bytes); -ENOSPC when @out is too small.
 */
ssize_t eg_b64url_decode(const char *in, size_t n, uint8_t *out, size_t outsz)
{
	size_t i, o = 0, rem = n % 4;
	size_t need = n / 4 * 3 + (rem ? rem - 1 : 0);
	int v[4];

	if (rem == 1)
		return -EINVAL;
	if (outsz < need)
		return -ENOSPC;
	for (i = 0; i + 4 <= n; i += 4) {
		for (int k = 0; k < 4; k++) {
			v[k] = val((unsigned char)in[i + k]);
			if (v[k] < 0)
				return -EINVAL;
		}
		out[o++] = (uint8_t)(v[0] << 2 | v[1] >> 4);
		out[o++] = (uint8_t)((v[1] & 15) << 4 | v[2] >> 2);
		out[o++] = (uint8_t)((v[2] & 3) << 6 | v[3]);
	}
	if (rem) {
		for (size_t k = 0; k < rem; k++) {
			v[k] = val((unsigned char)in[i + k]);
			if (v[k] < 0)
				return -EINVAL;
		}
		out[o++] = (uint8_t)(v[0] << 2 | v[1] >> 4);
		if (rem == 2) {
			if (v[1] & 15)
				return -EINVAL;
		} else {
			out[o++] = (uint8_t)((v[1] & 15) << 4 | v[2] >> 2);
			if (v[2] & 3)
				return -EINVAL;
		}
	}
	return (ssize_t)o;
}
