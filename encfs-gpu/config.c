// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * config.c - format and parse the config file (format in config.h).
 * Pure code, fuzzed by tests/fuzz/encfs_config_fuzz.c: the file sits in
 * the cipher directory, where an attacker may have replaced it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config.h"

static void hex(char *out, const uint8_t *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

static int unhex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* @s must be exactly 2n lowercase hex digits. */
static int unhex(const char *s, size_t len, uint8_t *b, size_t n)
{
	if (len != 2 * n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		int hi = unhex_digit((unsigned char)s[2 * i]);
		int lo = unhex_digit((unsigned char)s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		b[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/**
 * eg_config_format_params() - the parameter lines (the GCM additional data)
 * @c: config
 * @out: destination
 * @outsz: its size
 *
 * Return: the text length, or -ENOSPC.
 */
ssize_t eg_config_format_params(const struct eg_config *c, char *out, size_t outsz)
{
	char salt[2 * EG_SALT_LEN + 1];
	int len;

	hex(salt, c->salt, EG_SALT_LEN);
	len = snprintf(out, outsz,
		       "encfs-gpu config %d\n"
		       "kdf scrypt logn=%u r=%u p=%u\n"
		       "salt %s\n"
		       "contents aes-256-xts unit=4096 header=4096\n"
		       "names aes-256-siv pad=16 longname=255\n"
		       "wrap aes-256-gcm\n",
		       EG_CONFIG_VERSION, c->logn, c->r, c->p, salt);
	if (len < 0 || (size_t)len >= outsz)
		return -ENOSPC;
	return len;
}

/* The whole file: the parameters, then the wrapped key. */
ssize_t eg_config_format(const struct eg_config *c, char *out, size_t outsz)
{
	char nonce[2 * EG_NONCE_LEN + 1], key[2 * EG_MASTER_LEN + 1], tag[2 * EG_GCM_TAG_LEN + 1];
	ssize_t plen = eg_config_format_params(c, out, outsz);
	int len;

	if (plen < 0)
		return plen;
	hex(nonce, c->nonce, EG_NONCE_LEN);
	hex(key, c->wrapped, EG_MASTER_LEN);
	hex(tag, c->tag, EG_GCM_TAG_LEN);
	len = snprintf(out + plen, outsz - (size_t)plen, "nonce %s\nkey %s\ntag %s\n", nonce,
		       key, tag);
	if (len < 0 || (size_t)len >= outsz - (size_t)plen)
		return -ENOSPC;
	return plen + len;
}

/* Next line of [*pos, end) without its '\n'; -EINVAL at the end or when the
 * line is not terminated (a truncated file). */
static int next_line(const char *buf, size_t n, size_t *pos, const char **line, size_t *len)
{
	const char *nl;

	if (*pos >= n)
		return -EINVAL;
	nl = memchr(buf + *pos, '\n', n - *pos);
	if (!nl)
		return -EINVAL;
	*line = buf + *pos;
	*len = (size_t)(nl - *line);
	*pos += *len + 1;
	return 0;
}

/* "KEY VALUE": the hex value of a line that must start with @key. */
static int hex_line(const char *buf, size_t n, size_t *pos, const char *key, uint8_t *b,
		    size_t blen)
{
	size_t klen = strlen(key), len;
	const char *line;

	if (next_line(buf, n, pos, &line, &len))
		return -EINVAL;
	if (len < klen + 1 || memcmp(line, key, klen) || line[klen] != ' ')
		return -EINVAL;
	return unhex(line + klen + 1, len - klen - 1, b, blen);
}

/* A decimal of at most 2 digits, no sign, no leading zero. */
static int small_uint(const char *s, size_t len, unsigned int *v)
{
	if (len == 0 || len > 2 || (len == 2 && s[0] == '0'))
		return -EINVAL;
	*v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		*v = *v * 10 + (unsigned int)(s[i] - '0');
	}
	return 0;
}

/* "kdf scrypt logn=N r=N p=N" */
static int kdf_line(const char *line, size_t len, struct eg_config *c)
{
	static const char *const keys[] = { "logn=", "r=", "p=" };
	unsigned int *vals[] = { &c->logn, &c->r, &c->p };
	const char *p = line, *end = line + len;

	if (len < 11 || memcmp(p, "kdf scrypt ", 11))
		return -EINVAL;
	p += 11;
	for (int i = 0; i < 3; i++) {
		size_t klen = strlen(keys[i]);
		const char *sp;

		if ((size_t)(end - p) < klen || memcmp(p, keys[i], klen))
			return -EINVAL;
		p += klen;
		sp = i < 2 ? memchr(p, ' ', (size_t)(end - p)) : end;
		if (!sp || small_uint(p, (size_t)(sp - p), vals[i]))
			return -EINVAL;
		p = sp + (i < 2);
	}
	return 0;
}

/**
 * eg_config_parse() - parse a config file
 * @buf: its bytes
 * @n: their count
 * @c: filled on success
 * @why: set to a human-readable reason on failure
 *
 * Return: 0, or -EINVAL for anything but the exact format of config.h
 * with scrypt parameters in bounds.  A truncated file always fails here,
 * before any key derivation.
 */
int eg_config_parse(const char *buf, size_t n, struct eg_config *c, const char **why)
{
	char canon[EG_CONFIG_MAX];
	const char *line;
	size_t pos = 0, len;
	ssize_t clen;

	*why = "malformed";
	memset(c, 0, sizeof(*c));
	if (n == 0 || n > EG_CONFIG_MAX) {
		*why = n ? "too large" : "empty";
		return -EINVAL;
	}
	if (next_line(buf, n, &pos, &line, &len) || len != 18 ||
	    memcmp(line, "encfs-gpu config ", 17)) {
		*why = "not an encfs-gpu config file";
		return -EINVAL;
	}
	if (line[17] != '0' + EG_CONFIG_VERSION) {
		*why = "unsupported config version";
		return -EINVAL;
	}
	if (next_line(buf, n, &pos, &line, &len) || kdf_line(line, len, c))
		goto truncated;
	if (c->logn < EG_SCRYPT_LOGN_MIN || c->logn > EG_SCRYPT_LOGN_MAX || c->r < 1 ||
	    c->r > EG_SCRYPT_R_MAX || c->p < 1 || c->p > EG_SCRYPT_P_MAX) {
		*why = "scrypt parameters out of range";
		return -EINVAL;
	}
	if (hex_line(buf, n, &pos, "salt", c->salt, EG_SALT_LEN))
		goto truncated;
	/* the three fixed lines are checked by the canonical comparison */
	for (int i = 0; i < 3; i++)
		if (next_line(buf, n, &pos, &line, &len))
			goto truncated;
	if (hex_line(buf, n, &pos, "nonce", c->nonce, EG_NONCE_LEN) ||
	    hex_line(buf, n, &pos, "key", c->wrapped, EG_MASTER_LEN) ||
	    hex_line(buf, n, &pos, "tag", c->tag, EG_GCM_TAG_LEN))
		goto truncated;
	clen = eg_config_format(c, canon, sizeof(canon));
	if (clen < 0 || (size_t)clen != n || memcmp(canon, buf, n)) {
		*why = (size_t)clen > n ? "truncated" : "not in the canonical format";
		return -EINVAL;
	}
	return 0;
truncated:
	*why = "truncated or malformed";
	return -EINVAL;
}
