// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * contents.c - per-file header, tweaks, and plaintext read / write /
 * truncate over a backing file (design in contents.h, unit layout in
 * layout.h, header in file_header.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "contents.h"
#include "layout.h"

void eg_contents_init(struct eg_contents *c, const struct eg_keys *k, struct eg_backend *be)
{
	c->be = be;
	memcpy(c->tweak_key, k->tweak, sizeof(c->tweak_key));
	memcpy(c->header_key, k->header, sizeof(c->header_key));
}

void eg_contents_fini(struct eg_contents *c)
{
	eg_wipe(c, sizeof(*c));
}

/* HMAC-SHA-256 over the first 32 header bytes, cut to 16. */
int eg_header_tag(const struct eg_contents *c, const uint8_t hdr[EG_HDR_USED], uint8_t tag[16])
{
	uint8_t md[32];
	unsigned int len = 0;

	if (!HMAC(EVP_sha256(), c->header_key, sizeof(c->header_key), hdr, EG_HDR_TAGGED, md,
		  &len) || len != 32)
		return -EIO;
	memcpy(tag, md, 16);
	return 0;
}

/* AES-256-ECB under the tweak key over @n blocks, in place. */
static int tweak_ecb(const struct eg_contents *c, uint8_t *blocks, size_t n)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int outl, ret = -EIO;

	if (!ctx)
		return -ENOMEM;
	if (EVP_EncryptInit_ex2(ctx, EVP_aes_256_ecb(), c->tweak_key, NULL, NULL) == 1 &&
	    EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 &&
	    EVP_EncryptUpdate(ctx, blocks, &outl, blocks, (int)(n * 16)) == 1 &&
	    (size_t)outl == n * 16)
		ret = 0;
	EVP_CIPHER_CTX_free(ctx);
	return ret;
}

/**
 * eg_tweaks() - the tweaks of units k0 .. k0 + n - 1 of a file
 * @c: contents keys
 * @base: AES_Kt(file id)
 * @k0: first unit index
 * @n: unit count
 * @out: n * 16 bytes
 *
 * Return: 0 or a negative errno.
 */
int eg_tweaks(const struct eg_contents *c, const uint8_t base[16], uint64_t k0, size_t n,
	      uint8_t *out)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t k = k0 + i;
		uint8_t *t = out + 16 * i;

		memcpy(t, base, 16);
		for (int b = 0; b < 8; b++)
			t[b] ^= (uint8_t)(k >> (8 * b));
	}
	return tweak_ecb(c, out, n);
}

/**
 * eg_file_size() - plaintext size of an open backing file
 * @fd: backing file
 * @size: plaintext size
 * @bsize: backing size (may be NULL)
 *
 * Return: 0, -errno from fstat, or -EIO for a backing file that has some
 * bytes but not a whole header (truncated: its contents are lost).
 */
int eg_file_size(int fd, uint64_t *size, uint64_t *bsize)
{
	struct stat sb;

	if (fstat(fd, &sb))
		return -errno;
	if (bsize)
		*bsize = (uint64_t)sb.st_size;
	if (sb.st_size > 0 && sb.st_size < EG_HDR_SIZE)
		return -EIO;
	*size = sb.st_size ? (uint64_t)sb.st_size - EG_HDR_SIZE : 0;
	return 0;
}

static int pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	uint8_t *p = buf;

	while (n) {
		ssize_t r = pread(fd, p, n, (off_t)off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;	/* the file shrank under us */
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static int pwrite_full(int fd, const void *buf, size_t n, uint64_t off)
{
	const uint8_t *p = buf;

	while (n) {
		ssize_t r = pwrite(fd, p, n, (off_t)off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static int fstate_set(const struct eg_contents *c, struct eg_fstate *st,
		      const uint8_t fid[EG_FILE_ID_LEN])
{
	memcpy(st->fid, fid, EG_FILE_ID_LEN);
	memcpy(st->base, fid, 16);
	if (tweak_ecb(c, st->base, 1))
		return -EIO;
	st->have_hdr = 1;
	return 0;
}

/**
 * eg_file_load_header() - read, check and cache the header of @fd
 * @c: contents keys
 * @fd: backing file, at least EG_HDR_SIZE bytes
 * @st: the inode's state; filled
 *
 * Return: 0, or -EIO for a header that is malformed or whose tag does not
 * verify (compared in constant time): never garbage data.
 */
int eg_file_load_header(const struct eg_contents *c, int fd, struct eg_fstate *st)
{
	uint8_t buf[EG_HDR_USED], tag[16];
	struct eg_file_header h;
	int ret;

	if (st->have_hdr)
		return 0;
	ret = pread_full(fd, buf, sizeof(buf), 0);
	if (ret)
		return ret == -EIO ? -EIO : ret;
	if (eg_header_unpack(buf, sizeof(buf), &h) || eg_header_tag(c, buf, tag) ||
	    CRYPTO_memcmp(tag, h.tag, sizeof(tag)))
		return -EIO;
	return fstate_set(c, st, h.file_id);
}

/* Write a fresh header (new random file id) as the whole first 4 KiB. */
static int header_create(const struct eg_contents *c, int fd, struct eg_fstate *st)
{
	struct eg_file_header h;
	uint8_t *buf;
	int ret;

	memset(&h, 0, sizeof(h));
	if (RAND_bytes(h.file_id, sizeof(h.file_id)) != 1)
		return -EIO;
	buf = calloc(1, EG_HDR_SIZE);
	if (!buf)
		return -ENOMEM;
	eg_header_pack(&h, buf);
	ret = eg_header_tag(c, buf, buf + EG_HDR_OFF_TAG);
	if (!ret)
		ret = pwrite_full(fd, buf, EG_HDR_SIZE, 0);
	free(buf);
	if (!ret)
		ret = fstate_set(c, st, h.file_id);
	return ret;
}

static int is_zero(const uint8_t *p, size_t n)
{
	while (n && ((uintptr_t)p & 7)) {
		if (*p++)
			return 0;
		n--;
	}
	for (; n >= 8; p += 8, n -= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		if (v)
			return 0;
	}
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

/* encrypt or decrypt units k0 .. k0 + n - 1 of the file, back to back in @data */
static int units_crypt(const struct eg_contents *c, const struct eg_fstate *st, int enc,
		       uint8_t *data, uint64_t k0, size_t n, size_t last_len)
{
	struct eg_xts_req r = {
		.data = data, .nunits = n, .unit_len = EG_UNIT, .last_len = last_len,
	};
	uint8_t stack[16 * 64], *tweaks = n <= 64 ? stack : malloc(16 * n);
	int ret;

	if (!tweaks)
		return -ENOMEM;
	ret = eg_tweaks(c, st->base, k0, n, tweaks);
	r.tweaks = tweaks;
	if (!ret)
		ret = eg_backend_crypt(c->be, enc, &r);
	if (tweaks != stack)
		free(tweaks);
	return ret;
}

/* Plaintext [a, b) (0 <= a < b <= size) of a file of @size bytes. */
static int read_range(const struct eg_contents *c, int fd, const struct eg_fstate *st,
		      uint64_t size, uint64_t a, uint64_t b, uint8_t *out)
{
	uint64_t k0, k1, ustart, len, k, run;
	uint8_t *tmp;
	int ret;

	if (eg_layout_tiny(size)) {
		uint8_t u[2 * EG_BLOCK];
		static const uint8_t zero[EG_BLOCK];

		ret = pread_full(fd, u, EG_BLOCK, EG_HDR_OFF_STEAL);
		if (!ret)
			ret = pread_full(fd, u + EG_BLOCK, size, EG_HDR_SIZE);
		if (ret)
			return ret;
		if (!is_zero(u, EG_BLOCK + size)) {
			ret = units_crypt(c, st, 0, u, 0, 1, EG_BLOCK + size);
			if (ret)
				return ret;
			/* the stolen-from block is a known zero block: a free check */
			if (memcmp(u, zero, EG_BLOCK))
				return -EIO;
		}
		memcpy(out, u + EG_BLOCK + a, b - a);
		return 0;
	}
	k0 = eg_layout_unit_of(size, a);
	k1 = eg_layout_unit_of(size, b - 1);
	ustart = eg_layout_unit_start(k0);
	len = eg_layout_unit_end(size, k1) - ustart;
	tmp = malloc(len);
	if (!tmp)
		return -ENOMEM;
	ret = pread_full(fd, tmp, len, EG_HDR_SIZE + ustart);
	if (ret)
		goto out;
	/* decrypt runs of units that are not holes, each in one backend call */
	for (k = k0; k <= k1; k += run ? run : 1) {
		uint8_t *p = tmp + (k - k0) * EG_UNIT;

		run = 0;
		while (k + run <= k1) {
			uint8_t *q = tmp + (k + run - k0) * EG_UNIT;

			if (is_zero(q, eg_layout_unit_len(size, k + run)))
				break;
			run++;
		}
		if (!run)
			continue;	/* a hole: zeros are the plaintext */
		ret = units_crypt(c, st, 0, p, k, run, eg_layout_unit_len(size, k + run - 1));
		if (ret)
			goto out;
	}
	memcpy(out, tmp + (a - ustart), b - a);
out:
	OPENSSL_cleanse(tmp, len);
	free(tmp);
	return ret;
}

/* Encrypt plaintext [lo, hi) (whole units of a file of @size) and write it. */
static int write_region(const struct eg_contents *c, int fd, const struct eg_fstate *st,
			uint64_t size, uint64_t lo, uint64_t hi, uint8_t *plain)
{
	uint64_t k0, k1;
	int ret;

	if (eg_layout_tiny(size)) {
		uint8_t u[2 * EG_BLOCK];

		memset(u, 0, EG_BLOCK);
		memcpy(u + EG_BLOCK, plain, size);
		ret = units_crypt(c, st, 1, u, 0, 1, EG_BLOCK + size);
		if (!ret)
			ret = pwrite_full(fd, u + EG_BLOCK, size, EG_HDR_SIZE);
		if (!ret)
			ret = pwrite_full(fd, u, EG_BLOCK, EG_HDR_OFF_STEAL);
		return ret;
	}
	k0 = eg_layout_unit_of(size, lo);
	k1 = eg_layout_unit_of(size, hi - 1);
	ret = units_crypt(c, st, 1, plain, k0, k1 - k0 + 1, eg_layout_unit_len(size, k1));
	if (!ret)
		ret = pwrite_full(fd, plain, hi - lo, EG_HDR_SIZE + lo);
	return ret;
}

/*
 * Re-encrypt [lo, hi) for the new size @nsize: old plaintext up to the
 * old size @osize, zeros after it, and @buf (@n bytes at @off) on top.
 * @trunc: when non-zero, the backing file is cut to that size between
 * reading the old plaintext and writing the new ciphertext.
 */
static int rewrite(const struct eg_contents *c, int fd, const struct eg_fstate *st,
		   uint64_t osize, uint64_t nsize, uint64_t lo, uint64_t hi, const uint8_t *buf,
		   size_t n, uint64_t off, uint64_t trunc)
{
	/* a write that covers [lo, hi) whole (FUSE's aligned 1 MiB writes)
	 * needs neither the old plaintext nor zeros under it */
	int covered = n && off <= lo && off + n >= hi;
	uint8_t *plain = covered ? malloc(hi - lo) : calloc(1, hi - lo);
	int ret = 0;

	if (!plain)
		return -ENOMEM;
	if (lo < osize && !covered)
		ret = read_range(c, fd, st, osize, lo, hi < osize ? hi : osize, plain);
	if (ret)
		goto out;
	if (n) {
		uint64_t a = off > lo ? off : lo, b = off + n < hi ? off + n : hi;

		if (a < b)
			memcpy(plain + (a - lo), buf + (a - off), b - a);
	}
	/* shrinking cuts first, so the write lands in a file of the new size;
	 * growing sets the new size only after the old tail is re-encrypted for
	 * it, so a failed write never leaves a longer file whose old tail is
	 * still in the old layout */
	if (trunc && nsize < osize && ftruncate(fd, (off_t)trunc)) {
		ret = -errno;
		goto out;
	}
	ret = write_region(c, fd, st, nsize, lo, hi, plain);
	if (!ret && trunc && nsize > osize && ftruncate(fd, (off_t)trunc))
		ret = -errno;
out:
	OPENSSL_cleanse(plain, hi - lo);
	free(plain);
	return ret;
}

/*
 * What a growing write changes outside the new data: the ciphertext of the
 * old last unit (re-encrypted for the new size) and, for a tiny file, the
 * steal slot.  Saved so that a failed write can put them and the old size
 * back instead of leaving a longer file.
 */
struct old_tail {
	uint64_t off;			/* backing offset of buf */
	size_t len;
	uint8_t *buf;
	uint8_t steal[EG_BLOCK];
};

static int tail_save(int fd, uint64_t osize, struct old_tail *t)
{
	int ret = 0;

	t->off = EG_HDR_SIZE + (osize ? eg_layout_unit_start(eg_layout_nunits(osize) - 1) : 0);
	t->len = EG_HDR_SIZE + osize - t->off;
	t->buf = malloc(t->len ? t->len : 1);
	if (!t->buf)
		return -ENOMEM;
	if (t->len)
		ret = pread_full(fd, t->buf, t->len, t->off);
	if (!ret && eg_layout_tiny(osize))
		ret = pread_full(fd, t->steal, EG_BLOCK, EG_HDR_OFF_STEAL);
	if (ret) {
		free(t->buf);
		t->buf = NULL;
	}
	return ret;
}

/* Best effort: the caller reports the write's own error either way. */
static void tail_restore(int fd, uint64_t osize, struct old_tail *t)
{
	if (t->len && pwrite_full(fd, t->buf, t->len, t->off))
		fprintf(stderr, "encfs-gpu: could not restore a file's tail after a failed write\n");
	if (eg_layout_tiny(osize))
		(void)!pwrite_full(fd, t->steal, EG_BLOCK, EG_HDR_OFF_STEAL);
	/* the size goes back even if the tail did not: no phantom growth */
	(void)!ftruncate(fd, (off_t)(EG_HDR_SIZE + osize));
}

/* Leaving the tiny layout: the steal slot becomes meaningless, clear it. */
static int clear_steal(int fd)
{
	static const uint8_t zero[EG_BLOCK];

	return pwrite_full(fd, zero, EG_BLOCK, EG_HDR_OFF_STEAL);
}

/*
 * The range a change of size from @osize to @nsize (> @osize > 0) must
 * re-encrypt: from the old last unit to the end of the new unit holding
 * the old last byte.  Returns 0 when the old last unit keeps its length.
 */
static int grow_range(uint64_t osize, uint64_t nsize, uint64_t *lo, uint64_t *hi)
{
	uint64_t last = eg_layout_nunits(osize) - 1;

	if (!eg_layout_tiny(osize) && eg_layout_unit_len(osize, last) ==
	    eg_layout_unit_len(nsize, last))
		return 0;
	*lo = eg_layout_unit_start(last);
	*hi = eg_layout_unit_end(nsize, eg_layout_unit_of(nsize, osize - 1));
	return 1;
}

/* Header present and loaded, or created for an empty backing file. */
static int header_ready(const struct eg_contents *c, int fd, struct eg_fstate *st,
			uint64_t bsize)
{
	if (bsize == 0) {
		st->have_hdr = 0;
		return header_create(c, fd, st);
	}
	return eg_file_load_header(c, fd, st);
}

/**
 * eg_file_read() - read plaintext
 * @c: contents keys
 * @fd: backing file
 * @st: its inode state (header loaded unless the file is empty)
 * @buf: destination
 * @size: bytes wanted
 * @off: plaintext offset
 *
 * Return: bytes read (short at EOF), or a negative errno; -EIO for a
 * damaged header.
 */
ssize_t eg_file_read(const struct eg_contents *c, int fd, struct eg_fstate *st, void *buf,
		     size_t size, uint64_t off)
{
	uint64_t fsize, end;
	int ret = eg_file_size(fd, &fsize, NULL);

	if (ret)
		return ret;
	if (off >= fsize || !size)
		return 0;
	if (!st->have_hdr)
		return -EIO;	/* the caller loads it; reaching here means it failed */
	end = off + size < fsize ? off + size : fsize;
	ret = read_range(c, fd, st, fsize, off, end, buf);
	return ret ? ret : (ssize_t)(end - off);
}

/**
 * eg_file_write() - write plaintext, extending the file as needed
 * @c: contents keys
 * @fd: backing file, open read-write
 * @st: its inode state
 * @buf: data
 * @size: its length
 * @off: plaintext offset (may be past EOF: the gap reads as zeros)
 *
 * Return: @size, or a negative errno.
 */
ssize_t eg_file_write(const struct eg_contents *c, int fd, struct eg_fstate *st,
		      const void *buf, size_t size, uint64_t off)
{
	uint64_t osize = 0, bsize = 0, nsize, end = off + size, blo, bhi, alo = 0, ahi = 0;
	int ret, grow;

	struct old_tail old = { 0 };

	if (!size)
		return 0;
	/* as truncate: the backing file is EG_HDR_SIZE longer, and refusing
	 * here is what keeps the old-tail rewrite from growing the file */
	if (end < off || end > (uint64_t)INT64_MAX - EG_HDR_SIZE)
		return -EFBIG;
	ret = eg_file_size(fd, &osize, &bsize);
	if (!ret)
		ret = header_ready(c, fd, st, bsize);
	if (ret)
		return ret;
	nsize = end > osize ? end : osize;
	if (nsize > osize) {
		ret = tail_save(fd, osize, &old);
		if (ret)
			return ret;
	}
	blo = eg_layout_unit_start(eg_layout_unit_of(nsize, off));
	bhi = eg_layout_unit_end(nsize, eg_layout_unit_of(nsize, end - 1));
	grow = nsize > osize && osize > 0 && grow_range(osize, nsize, &alo, &ahi);
	if (grow && ahi >= blo) {
		/* the old tail and the written units touch: one region */
		blo = alo < blo ? alo : blo;
		grow = 0;
	} else if (grow) {
		ret = rewrite(c, fd, st, osize, nsize, alo, ahi, NULL, 0, 0, 0);
		if (ret)
			goto err_restore;
	}
	ret = rewrite(c, fd, st, osize, nsize, blo, bhi, buf, size, off, 0);
	if (!ret && eg_layout_tiny(osize) && !eg_layout_tiny(nsize))
		ret = clear_steal(fd);
	if (ret)
		goto err_restore;
	free(old.buf);
	return (ssize_t)size;
err_restore:
	if (old.buf)
		tail_restore(fd, osize, &old);
	free(old.buf);
	return ret;
}

/**
 * eg_file_truncate() - set the plaintext size
 * @c: contents keys
 * @fd: backing file, open read-write
 * @st: its inode state
 * @nsize: new size; growing leaves a hole that reads as zeros
 *
 * Truncating to zero drops the header, so the file's next life gets a new
 * file id and fresh tweaks.
 *
 * Return: 0 or a negative errno.
 */
int eg_file_truncate(const struct eg_contents *c, int fd, struct eg_fstate *st, uint64_t nsize)
{
	uint64_t osize = 0, bsize = 0, lo = 0, hi = 0, last;
	int ret;

	if (nsize == 0) {
		st->have_hdr = 0;
		return ftruncate(fd, 0) ? -errno : 0;
	}
	if (nsize > (uint64_t)INT64_MAX - EG_HDR_SIZE)
		return -EFBIG;
	ret = eg_file_size(fd, &osize, &bsize);
	if (ret || nsize == osize)
		return ret;
	ret = header_ready(c, fd, st, bsize);
	if (ret)
		return ret;
	if (osize == 0)	/* all of it a hole */
		return ftruncate(fd, (off_t)(EG_HDR_SIZE + nsize)) ? -errno : 0;
	if (nsize > osize) {
		struct old_tail old;

		ret = tail_save(fd, osize, &old);
		if (ret)
			return ret;
		/* rewrite() writes the re-encrypted tail, then sets the size */
		if (grow_range(osize, nsize, &lo, &hi))
			ret = rewrite(c, fd, st, osize, nsize, lo, hi, NULL, 0, 0, EG_HDR_SIZE + nsize);
		else if (ftruncate(fd, (off_t)(EG_HDR_SIZE + nsize)))
			ret = -errno;
		if (!ret && eg_layout_tiny(osize) && !eg_layout_tiny(nsize))
			ret = clear_steal(fd);
		if (ret)
			tail_restore(fd, osize, &old);
		free(old.buf);
		return ret;
	}
	/* shrinking: the new last unit is re-encrypted unless it keeps its length */
	last = eg_layout_nunits(nsize) - 1;
	lo = eg_layout_unit_start(last);
	if (eg_layout_tiny(nsize) || eg_layout_unit_len(osize, last) != eg_layout_unit_len(nsize, last))
		return rewrite(c, fd, st, osize, nsize, lo, nsize, NULL, 0, 0, EG_HDR_SIZE + nsize);
	return ftruncate(fd, (off_t)(EG_HDR_SIZE + nsize)) ? -errno : 0;
}
