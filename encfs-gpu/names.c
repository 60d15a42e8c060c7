// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * names.c - AES-SIV name and symlink-target encryption, long-name hashing
 * (scheme in names.h, long names in longname.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "b64.h"
#include "names.h"

#define SYMLINK_AD	"encfs-gpu symlink"
#define SIV_BUF_MAX	(EG_SIV_TAG + EG_SYMLINK_MAX + 1 + EG_NAME_BLOCK)

static EVP_CIPHER *siv;
static pthread_once_t siv_once = PTHREAD_ONCE_INIT;

/* Fetching is a locked table lookup; do it once.  Freed at exit. */
static void siv_free(void)
{
	EVP_CIPHER_free(siv);
}

/*
 * Keying SIV costs far more than encrypting a name: the provider fetches
 * its CTR cipher and CMAC, expands two AES keys and MACs the zero block.
 * Every FUSE call encrypts each component of its path, and profiling an
 * extraction of a kernel tree showed keying at about 35% of the daemon's
 * CPU.  So each thread keeps one keyed context per direction, and a call
 * works on a copy of it (EVP_CIPHER_CTX_copy: the provider duplicates the
 * keyed state; no fetch, no key schedule).  The template itself is never
 * used, so every call starts from the same state a fresh keying gives.
 */
struct siv_keyed {
	uint8_t key[EG_NAME_KEY_LEN];
	EVP_CIPHER_CTX *tmpl[2];	/* [enc], keyed with @key, or NULL */
};

static pthread_key_t siv_tls;
static int siv_tls_ok;

/* At a thread's exit: its templates hold key material. */
static void siv_keyed_free(void *p)
{
	struct siv_keyed *k = p;

	EVP_CIPHER_CTX_free(k->tmpl[0]);
	EVP_CIPHER_CTX_free(k->tmpl[1]);
	OPENSSL_cleanse(k, sizeof(*k));
	free(k);
}

static void siv_fetch(void)
{
	siv = EVP_CIPHER_fetch(NULL, "AES-256-SIV", NULL);
	if (siv)
		atexit(siv_free);
	siv_tls_ok = !pthread_key_create(&siv_tls, siv_keyed_free);
}

/* This thread's context keyed with @key for @enc, or NULL (key afresh). */
static const EVP_CIPHER_CTX *siv_template(const uint8_t key[EG_NAME_KEY_LEN], int enc)
{
	struct siv_keyed *k;
	EVP_CIPHER_CTX *c;

	if (!siv_tls_ok)
		return NULL;
	k = pthread_getspecific(siv_tls);
	if (!k) {
		k = calloc(1, sizeof(*k));
		if (!k)
			return NULL;
		if (pthread_setspecific(siv_tls, k)) {
			free(k);
			return NULL;
		}
	}
	if (CRYPTO_memcmp(k->key, key, EG_NAME_KEY_LEN)) {
		EVP_CIPHER_CTX_free(k->tmpl[0]);
		EVP_CIPHER_CTX_free(k->tmpl[1]);
		k->tmpl[0] = k->tmpl[1] = NULL;
		memcpy(k->key, key, EG_NAME_KEY_LEN);
	}
	if (!k->tmpl[enc]) {
		c = EVP_CIPHER_CTX_new();
		if (!c)
			return NULL;
		if (EVP_CipherInit_ex2(c, siv, key, NULL, enc, NULL) != 1) {
			EVP_CIPHER_CTX_free(c);
			return NULL;
		}
		k->tmpl[enc] = c;
	}
	return k->tmpl[enc];
}

/*
 * SIV over @in (@n bytes) with one AD string.  Encrypting writes tag ||
 * ciphertext to @out (n + 16 bytes); decrypting takes tag || ciphertext
 * in @in and writes n - 16 bytes.  Returns the output length, -EBADMSG
 * when the tag does not verify.
 */
static ssize_t siv_crypt(const uint8_t key[EG_NAME_KEY_LEN], int enc, const uint8_t *ad,
			 size_t adlen, const uint8_t *in, size_t n, uint8_t *out)
{
	const EVP_CIPHER_CTX *tmpl;
	EVP_CIPHER_CTX *ctx;
	ssize_t ret = -EIO;
	int outl, fl;

	pthread_once(&siv_once, siv_fetch);
	if (!siv)
		return -ENOSYS;
	if (!enc && n < EG_SIV_TAG)
		return -EBADMSG;
	ctx = EVP_CIPHER_CTX_new();
	if (!ctx)
		return -ENOMEM;
	tmpl = siv_template(key, enc);
	if (tmpl ? EVP_CIPHER_CTX_copy(ctx, tmpl) != 1 :
		   EVP_CipherInit_ex2(ctx, siv, key, NULL, enc, NULL) != 1)
		goto err_ctx;
	if (!enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, EG_SIV_TAG, (void *)in) != 1)
		goto err_ctx;
	if (EVP_CipherUpdate(ctx, NULL, &outl, ad, (int)adlen) != 1)
		goto err_ctx;
	if (enc) {
		if (EVP_CipherUpdate(ctx, out + EG_SIV_TAG, &outl, in, (int)n) != 1 ||
		    EVP_CipherFinal_ex(ctx, out + EG_SIV_TAG + outl, &fl) != 1 ||
		    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, EG_SIV_TAG, out) != 1)
			goto err_ctx;
		ret = (ssize_t)n + EG_SIV_TAG;
	} else {
		/* OpenSSL checks the tag in update and reports it in final */
		if (EVP_CipherUpdate(ctx, out, &outl, in + EG_SIV_TAG, (int)(n - EG_SIV_TAG)) != 1 ||
		    EVP_CipherFinal_ex(ctx, out + outl, &fl) != 1) {
			OPENSSL_cleanse(out, n - EG_SIV_TAG);
			ret = -EBADMSG;
			goto err_ctx;
		}
		ret = (ssize_t)(n - EG_SIV_TAG);
	}
err_ctx:
	EVP_CIPHER_CTX_free(ctx);
	return ret;
}

/**
 * eg_name_encrypt() - encrypt one directory entry name
 * @key: name key
 * @diriv: IV of the directory holding the entry
 * @name: plaintext name (NUL-terminated)
 * @cname: destination for the base64url text (may be longer than 255:
 *	   eg_name_backing() decides how it is stored)
 * @cnamesz: its size (EG_CNAME_MAX + 1 is always enough)
 *
 * Return: the length of @cname, -EINVAL for a name that may not be an
 * entry, -ENAMETOOLONG, -ENOSPC, or another negative errno.
 */
ssize_t eg_name_encrypt(const uint8_t key[EG_NAME_KEY_LEN], const uint8_t diriv[EG_DIRIV_LEN],
			const char *name, char *cname, size_t cnamesz)
{
	uint8_t padded[EG_NAME_MAX + EG_NAME_BLOCK], ct[EG_CNAME_BYTES_MAX];
	size_t n = strlen(name);
	ssize_t plen, clen;

	if (n > EG_NAME_MAX)
		return -ENAMETOOLONG;
	if (!eg_name_valid(name, n))
		return -EINVAL;
	plen = eg_name_pad(name, n, padded, sizeof(padded));
	if (plen < 0)
		return plen;
	clen = siv_crypt(key, 1, diriv, EG_DIRIV_LEN, padded, (size_t)plen, ct);
	if (clen < 0)
		return clen;
	return eg_b64url_encode(ct, (size_t)clen, cname, cnamesz);
}

/**
 * eg_name_decrypt() - decrypt one backing entry name
 * @key: name key
 * @diriv: IV of the directory holding the entry
 * @cname: the base64url encrypted name (the full one for long names)
 * @name: destination for the plaintext name and its NUL
 * @namesz: its size (EG_NAME_MAX + 1 is always enough)
 *
 * Return: the name length, or -EBADMSG for anything that is not a valid
 * encrypted name of this directory: bad base64url, a shape no encryption
 * produces, a tag that fails, bad padding, or a plaintext that is not a
 * valid entry name ('/', NUL, "." or "..").
 */
ssize_t eg_name_decrypt(const uint8_t key[EG_NAME_KEY_LEN], const uint8_t diriv[EG_DIRIV_LEN],
			const char *cname, char *name, size_t namesz)
{
	uint8_t ct[EG_CNAME_BYTES_MAX], pt[EG_CNAME_BYTES_MAX];
	ssize_t clen, plen, len;

	clen = eg_cname_decode(cname, strlen(cname), ct, sizeof(ct));
	if (clen < 0)
		return -EBADMSG;
	plen = siv_crypt(key, 0, diriv, EG_DIRIV_LEN, ct, (size_t)clen, pt);
	if (plen < 0)
		return -EBADMSG;
	len = eg_name_unpad(pt, (size_t)plen);
	if (len < 0 || !eg_name_valid((const char *)pt, (size_t)len) || (size_t)len + 1 > namesz) {
		OPENSSL_cleanse(pt, sizeof(pt));
		return -EBADMSG;
	}
	memcpy(name, pt, (size_t)len);
	name[len] = '\0';
	OPENSSL_cleanse(pt, sizeof(pt));
	return len;
}

/**
 * eg_name_backing() - the name an encrypted name is stored under
 * @cname: base64url encrypted name
 * @bname: destination (EG_NAME_MAX + 1 bytes)
 * @bnamesz: its size
 *
 * Return: 0 when @cname fits and is stored as is, 1 when it is too long
 * and @bname is its hashed long name (the caller keeps a sidecar), or a
 * negative errno.
 */
int eg_name_backing(const char *cname, char *bname, size_t bnamesz)
{
	size_t n = strlen(cname);
	uint8_t digest[32];

	if (n <= EG_NAME_MAX) {
		if (n + 1 > bnamesz)
			return -ENOSPC;
		memcpy(bname, cname, n + 1);
		return 0;
	}
	if (EVP_Digest(cname, n, digest, NULL, EVP_sha256(), NULL) != 1)
		return -EIO;
	return eg_longname_from_digest(digest, bname, bnamesz) ?: 1;
}

/**
 * eg_longname_verify() - is @hashed the hashed name of @cname?
 * @hashed: a backing name that eg_longname_is_hashed() accepted
 * @cname: the encrypted name its sidecar holds
 *
 * Return: 0, or -EBADMSG when the sidecar belongs to another entry.
 */
int eg_longname_verify(const char *hashed, const char *cname)
{
	char expect[EG_LONGNAME_LEN + 1];

	if (strlen(cname) <= EG_NAME_MAX)
		return -EBADMSG;	/* a short name is never hashed */
	if (eg_name_backing(cname, expect, sizeof(expect)) != 1)
		return -EBADMSG;
	return strcmp(expect, hashed) ? -EBADMSG : 0;
}

/**
 * eg_symlink_encrypt() - encrypt a symlink target
 * @key: name key
 * @target: plaintext target
 * @out: destination for the base64url text
 * @outsz: its size (EG_CTARGET_MAX)
 *
 * Return: the text length, -ENAMETOOLONG past EG_SYMLINK_MAX bytes.
 */
ssize_t eg_symlink_encrypt(const uint8_t key[EG_NAME_KEY_LEN], const char *target, char *out,
			   size_t outsz)
{
	uint8_t *padded, *ct;
	size_t n = strlen(target);
	ssize_t plen, clen, ret;

	if (n == 0)
		return -ENOENT;
	if (n > EG_SYMLINK_MAX)
		return -ENAMETOOLONG;
	padded = malloc(2 * SIV_BUF_MAX);
	if (!padded)
		return -ENOMEM;
	ct = padded + SIV_BUF_MAX;
	plen = eg_name_pad(target, n, padded, SIV_BUF_MAX);
	ret = plen;
	if (plen < 0)
		goto out;
	clen = siv_crypt(key, 1, (const uint8_t *)SYMLINK_AD, strlen(SYMLINK_AD), padded,
			 (size_t)plen, ct);
	ret = clen < 0 ? clen : eg_b64url_encode(ct, (size_t)clen, out, outsz);
out:
	OPENSSL_cleanse(padded, SIV_BUF_MAX);
	free(padded);
	return ret;
}

/**
 * eg_symlink_decrypt() - decrypt a symlink target read from the backing
 * @key: name key
 * @ctarget: base64url text
 * @out: destination for the target and its NUL
 * @outsz: its size
 *
 * Return: the target length, -EBADMSG when it does not decrypt.
 */
ssize_t eg_symlink_decrypt(const uint8_t key[EG_NAME_KEY_LEN], const char *ctarget, char *out,
			   size_t outsz)
{
	uint8_t *ct, *pt;
	size_t n = strlen(ctarget);
	ssize_t clen, plen, len, ret = -EBADMSG;

	if (n > EG_CTARGET_MAX)
		return -EBADMSG;
	ct = malloc(2 * SIV_BUF_MAX);
	if (!ct)
		return -ENOMEM;
	pt = ct + SIV_BUF_MAX;
	clen = eg_b64url_decode(ctarget, n, ct, SIV_BUF_MAX);
	if (clen < EG_SIV_TAG + EG_NAME_BLOCK || (clen - EG_SIV_TAG) % EG_NAME_BLOCK)
		goto out;
	plen = siv_crypt(key, 0, (const uint8_t *)SYMLINK_AD, strlen(SYMLINK_AD), ct,
			 (size_t)clen, pt);
	if (plen < 0)
		goto out;
	len = eg_name_unpad(pt, (size_t)plen);
	if (len <= 0 || memchr(pt, '\0', (size_t)len) || (size_t)len + 1 > outsz)
		goto out;
	memcpy(out, pt, (size_t)len);
	out[len] = '\0';
	ret = len;
out:
	OPENSSL_cleanse(ct, 2 * SIV_BUF_MAX);
	free(ct);
	return ret;
}
