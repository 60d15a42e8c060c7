// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * name_codec.c - padding, encrypted-name shape and plaintext-name checks.
 * Pure code so tests/fuzz/encfs_name_fuzz.c can include it directly: all
 * of it runs on names read from the backing directory, which an attacker
 * may have written.
 */
#include <errno.h>
#include <string.h>

#include "b64.h"
#include "name_codec.h"

/* 1..16 pad bytes, always at least one, so unpadding is unambiguous. */
size_t eg_name_padded_len(size_t n)
{
	return n + (EG_NAME_BLOCK - n % EG_NAME_BLOCK);
}

/**
 * eg_name_pad() - pad @name to a whole number of 16-byte blocks
 * @name: plaintext name
 * @n: its length
 * @out: destination
 * @outsz: its size
 *
 * Return: the padded length, or -ENOSPC.
 */
ssize_t eg_name_pad(const char *name, size_t n, uint8_t *out, size_t outsz)
{
	size_t len = eg_name_padded_len(n);
	uint8_t pad = (uint8_t)(len - n);

	if (outsz < len)
		return -ENOSPC;
	memcpy(out, name, n);
	memset(out + n, pad, pad);
	return (ssize_t)len;
}

/**
 * eg_name_unpad() - check and strip the padding of a decrypted name
 * @buf: padded plaintext
 * @n: its length
 *
 * Return: the unpadded length, or -EINVAL for a length that is not a
 * positive multiple of 16 or padding bytes that do not all agree.
 */
ssize_t eg_name_unpad(const uint8_t *buf, size_t n)
{
	uint8_t pad;

	if (n == 0 || n % EG_NAME_BLOCK)
		return -EINVAL;
	pad = buf[n - 1];
	if (pad == 0 || pad > EG_NAME_BLOCK)
		return -EINVAL;
	for (size_t i = n - pad; i < n; i++)
		if (buf[i] != pad)
			return -EINVAL;
	return (ssize_t)(n - pad);
}

/**
 * eg_name_valid() - may @name be a directory entry?
 * @name: candidate, possibly not NUL-terminated
 * @n: its length
 *
 * Return: 1 if it is 1..255 bytes with no '/' or NUL and is not "." or
 * "..", else 0.  Decrypted names are checked with this so a forged entry
 * can never smuggle a path separator into the plaintext view.
 */
int eg_name_valid(const char *name, size_t n)
{
	if (n == 0 || n > EG_NAME_MAX)
		return 0;
	if (memchr(name, '/', n) || memchr(name, '\0', n))
		return 0;
	if ((n == 1 && name[0] == '.') || (n == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	return 1;
}

/**
 * eg_cname_decode() - base64url-decode an encrypted name and check its shape
 * @cname: backing name (text)
 * @n: its length
 * @out: destination for tag || ciphertext
 * @outsz: its size
 *
 * Return: the decoded length (a tag plus at least one 16-byte block, in
 * whole blocks), or -EINVAL when it cannot be an encrypted name.
 */
ssize_t eg_cname_decode(const char *cname, size_t n, uint8_t *out, size_t outsz)
{
	ssize_t len;

	if (n > EG_CNAME_MAX + 8)
		return -EINVAL;
	len = eg_b64url_decode(cname, n, out, outsz);
	if (len < 0)
		return -EINVAL;
	if ((size_t)len < EG_SIV_TAG + EG_NAME_BLOCK || (size_t)len > EG_CNAME_BYTES_MAX ||
	    ((size_t)len - EG_SIV_TAG) % EG_NAME_BLOCK)
		return -EINVAL;
	return len;
}

/* Is @cname spelled like an encrypted name (only base64url characters)?
 * Everything else in a backing directory is ours (config, diriv, long-name
 * files) or foreign, and is not listed. */
int eg_cname_is_plain_encrypted(const char *cname)
{
	if (!*cname)
		return 0;
	for (const char *p = cname; *p; p++)
		if (!eg_b64_valid_char((unsigned char)*p))
			return 0;
	return 1;
}
