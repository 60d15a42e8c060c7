// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * longname.c - hashed names and their sidecars (format in longname.h).
 * Pure code: sidecars are read from the backing directory, so the parser
 * takes hostile input and is fuzzed (tests/fuzz/encfs_longname_fuzz.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "b64.h"
#include "longname.h"
#include "name_codec.h"

/**
 * eg_longname_from_digest() - the backing name for a hashed long name
 * @digest: SHA-256 of the encrypted name
 * @out: destination
 * @outsz: its size (EG_LONGNAME_LEN + 1 at least)
 *
 * Return: 0 or -ENOSPC.
 */
int eg_longname_from_digest(const uint8_t digest[32], char *out, size_t outsz)
{
	size_t pre = sizeof(EG_LONGNAME_PREFIX) - 1;

	if (outsz < EG_LONGNAME_LEN + 1)
		return -ENOSPC;
	memcpy(out, EG_LONGNAME_PREFIX, pre);
	if (eg_b64url_encode(digest, 32, out + pre, outsz - pre) < 0)
		return -ENOSPC;
	return 0;
}

static int hash_part_ok(const char *p)
{
	for (size_t i = 0; i < EG_LONGNAME_HASH_CHARS; i++)
		if (!eg_b64_valid_char((unsigned char)p[i]))
			return 0;
	return 1;
}

/* Is @name exactly prefix + 43 base64url characters? */
int eg_longname_is_hashed(const char *name)
{
	size_t pre = sizeof(EG_LONGNAME_PREFIX) - 1;

	return strlen(name) == EG_LONGNAME_LEN && !strncmp(name, EG_LONGNAME_PREFIX, pre) &&
	       hash_part_ok(name + pre);
}

/* Is @name exactly a hashed name + ".name"? */
int eg_longname_is_sidecar(const char *name)
{
	size_t pre = sizeof(EG_LONGNAME_PREFIX) - 1;

	return strlen(name) == EG_SIDECAR_LEN && !strncmp(name, EG_LONGNAME_PREFIX, pre) &&
	       hash_part_ok(name + pre) && !strcmp(name + EG_LONGNAME_LEN, EG_LONGNAME_SUFFIX);
}

/* The sidecar name of the hashed name @hashed. */
int eg_longname_sidecar_name(const char *hashed, char *out, size_t outsz)
{
	if (!eg_longname_is_hashed(hashed))
		return -EINVAL;
	if ((size_t)snprintf(out, outsz, "%s%s", hashed, EG_LONGNAME_SUFFIX) >= outsz)
		return -ENOSPC;
	return 0;
}

/**
 * eg_longname_format() - sidecar content for the encrypted name @cname
 * @cname: base64url encrypted name
 * @out: destination
 * @outsz: its size
 *
 * Return: the content length, -EINVAL for a name that is not base64url or
 * is too long, -ENOSPC.
 */
ssize_t eg_longname_format(const char *cname, char *out, size_t outsz)
{
	size_t n = strlen(cname);
	int len;

	if (!n || n > EG_CNAME_MAX || !eg_cname_is_plain_encrypted(cname))
		return -EINVAL;
	len = snprintf(out, outsz, "%s%s\n", EG_LONGNAME_MAGIC, cname);
	if (len < 0 || (size_t)len >= outsz)
		return -ENOSPC;
	return len;
}

/**
 * eg_longname_parse() - extract the encrypted name from sidecar content
 * @buf: the sidecar's bytes, not NUL-terminated
 * @n: their count
 * @cname: destination for the NUL-terminated encrypted name
 * @cnamesz: its size
 *
 * Return: the name length, or -EINVAL unless @buf is exactly the magic
 * line, 1..EG_CNAME_MAX base64url characters and one newline; -ENOSPC.
 */
ssize_t eg_longname_parse(const char *buf, size_t n, char *cname, size_t cnamesz)
{
	size_t magic = sizeof(EG_LONGNAME_MAGIC) - 1, len;

	if (n < magic + 2 || n > EG_SIDECAR_MAX || memcmp(buf, EG_LONGNAME_MAGIC, magic))
		return -EINVAL;
	if (buf[n - 1] != '\n')
		return -EINVAL;
	len = n - magic - 1;
	if (len > EG_CNAME_MAX)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (!eg_b64_valid_char((unsigned char)buf[magic + i]))
			return -EINVAL;
	if (cnamesz < len + 1)
		return -ENOSPC;
	memcpy(cname, buf + magic, len);
	cname[len] = '\0';
	return (ssize_t)len;
}
