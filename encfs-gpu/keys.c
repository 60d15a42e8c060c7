// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * keys.c - create, wrap, unwrap the master key; derive the subkeys
 * (scheme in keys.h).
 */
#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "kdf.h"
#include "keys.h"

void eg_wipe(void *p, size_t n)
{
	OPENSSL_cleanse(p, n);
}

static int kek_derive(const struct eg_config *cfg, const char *pw, size_t pwlen, uint8_t kek[32])
{
	return eg_scrypt(pw, pwlen, cfg->salt, EG_SALT_LEN, cfg->logn, cfg->r, cfg->p, kek, 32);
}

/*
 * AES-256-GCM over the 32-byte master key with the config's parameter
 * lines as additional data.  @enc: 1 wraps master into cfg->wrapped and
 * cfg->tag, 0 unwraps and checks the tag.
 */
static int gcm(struct eg_config *cfg, const uint8_t kek[32], uint8_t master[EG_MASTER_LEN],
	       int enc)
{
	char aad[EG_CONFIG_MAX];
	ssize_t aadlen = eg_config_format_params(cfg, aad, sizeof(aad));
	EVP_CIPHER_CTX *ctx;
	int outl, ret = -EIO;
	uint8_t tmp[EG_MASTER_LEN + 16];

	if (aadlen < 0)
		return (int)aadlen;
	ctx = EVP_CIPHER_CTX_new();
	if (!ctx)
		return -ENOMEM;
	if (EVP_CipherInit_ex2(ctx, EVP_aes_256_gcm(), NULL, NULL, enc, NULL) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, EG_NONCE_LEN, NULL) != 1 ||
	    EVP_CipherInit_ex2(ctx, NULL, kek, cfg->nonce, enc, NULL) != 1)
		goto err_ctx;
	if (!enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, EG_GCM_TAG_LEN, cfg->tag) != 1)
		goto err_ctx;
	if (EVP_CipherUpdate(ctx, NULL, &outl, (const uint8_t *)aad, (int)aadlen) != 1)
		goto err_ctx;
	if (EVP_CipherUpdate(ctx, tmp, &outl, enc ? master : cfg->wrapped, EG_MASTER_LEN) != 1 ||
	    outl != EG_MASTER_LEN)
		goto err_ctx;
	if (EVP_CipherFinal_ex(ctx, tmp + outl, &outl) != 1) {
		/* the tag did not verify: wrong password or edited config */
		ret = enc ? -EIO : -EKEYREJECTED;
		goto err_ctx;
	}
	if (enc) {
		if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, EG_GCM_TAG_LEN, cfg->tag) != 1)
			goto err_ctx;
		memcpy(cfg->wrapped, tmp, EG_MASTER_LEN);
	} else {
		memcpy(master, tmp, EG_MASTER_LEN);
	}
	ret = 0;
err_ctx:
	eg_wipe(tmp, sizeof(tmp));
	EVP_CIPHER_CTX_free(ctx);
	return ret;
}

/**
 * eg_keys_rewrap() - wrap @master under a new password, salt and nonce
 * @cfg: config to update (everything but the format)
 * @master: the master key
 * @pw: new password
 * @pwlen: its length
 * @logn: scrypt cost (log2 N)
 *
 * Return: 0 or a negative errno.
 */
int eg_keys_rewrap(struct eg_config *cfg, const uint8_t master[EG_MASTER_LEN], const char *pw,
		   size_t pwlen, unsigned int logn)
{
	uint8_t kek[32], m[EG_MASTER_LEN];
	int ret;

	cfg->logn = logn;
	cfg->r = 8;
	cfg->p = 1;
	if (RAND_bytes(cfg->salt, EG_SALT_LEN) != 1 || RAND_bytes(cfg->nonce, EG_NONCE_LEN) != 1)
		return -EIO;
	ret = kek_derive(cfg, pw, pwlen, kek);
	if (ret)
		goto out;
	memcpy(m, master, EG_MASTER_LEN);
	ret = gcm(cfg, kek, m, 1);
out:
	eg_wipe(kek, sizeof(kek));
	eg_wipe(m, sizeof(m));
	return ret;
}

/**
 * eg_keys_create() - draw a master key and fill a new config wrapping it
 * @pw: password
 * @pwlen: its length
 * @logn: scrypt cost (log2 N)
 * @cfg: filled
 * @master: the new master key
 *
 * Return: 0 or a negative errno.
 */
int eg_keys_create(const char *pw, size_t pwlen, unsigned int logn, struct eg_config *cfg,
		   uint8_t master[EG_MASTER_LEN])
{
	memset(cfg, 0, sizeof(*cfg));
	if (RAND_priv_bytes(master, EG_MASTER_LEN) != 1)
		return -EIO;
	return eg_keys_rewrap(cfg, master, pw, pwlen, logn);
}

/**
 * eg_keys_unlock() - recover the master key
 * @cfg: parsed config
 * @pw: password
 * @pwlen: its length
 * @master: the master key on success
 *
 * Return: 0; -EKEYREJECTED when the tag fails (wrong password, or any
 * authenticated byte of the config changed); another negative errno.
 */
int eg_keys_unlock(const struct eg_config *cfg, const char *pw, size_t pwlen,
		   uint8_t master[EG_MASTER_LEN])
{
	struct eg_config c = *cfg;
	uint8_t kek[32];
	int ret;

	ret = kek_derive(&c, pw, pwlen, kek);
	if (!ret)
		ret = gcm(&c, kek, master, 0);
	eg_wipe(kek, sizeof(kek));
	return ret;
}

/**
 * eg_keys_derive() - the subkeys of @master
 * @master: master key
 * @k: filled
 *
 * Return: 0 or a negative errno.
 */
int eg_keys_derive(const uint8_t master[EG_MASTER_LEN], struct eg_keys *k)
{
	int ret;

	ret = eg_hkdf(master, EG_MASTER_LEN, "encfs-gpu v1 contents aes-256-xts", k->xts,
		      sizeof(k->xts));
	if (!ret)
		ret = eg_hkdf(master, EG_MASTER_LEN, "encfs-gpu v1 contents tweak", k->tweak,
			      sizeof(k->tweak));
	if (!ret)
		ret = eg_hkdf(master, EG_MASTER_LEN, "encfs-gpu v1 names aes-256-siv", k->name,
			      sizeof(k->name));
	if (!ret)
		ret = eg_hkdf(master, EG_MASTER_LEN, "encfs-gpu v1 header hmac", k->header,
			      sizeof(k->header));
	if (ret)
		eg_wipe(k, sizeof(*k));
	return ret;
}
