// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * xts.c - the backend interface (xts.h), the backend registry and the cpu
 * backend: OpenSSL's EVP AES-256-XTS, one EVP call per data unit.
 *
 * OpenSSL treats each EVP_CipherUpdate() on an XTS context as one whole
 * data unit with the context's IV as tweak, including ciphertext stealing,
 * so a request is a loop of "set IV, update".  Keyed contexts are pooled:
 * setting the key costs two key expansions, setting the IV costs nothing,
 * and FUSE calls in from many threads.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "keys.h"
#include "xts.h"

/**
 * eg_xts_req_check() - is @r a request every backend can take?
 * @r: request
 *
 * Return: 0 or -EINVAL.
 */
int eg_xts_req_check(const struct eg_xts_req *r)
{
	if (!r->nunits)
		return 0;
	if (r->last_len < 16 || (r->nunits > 1 && (r->unit_len < 16 || r->unit_len % 16)))
		return -EINVAL;
	/* IEEE 1619 caps a data unit at 2^20 blocks */
	if (r->last_len > (16u << 20) || r->unit_len > (16u << 20))
		return -EINVAL;
	return 0;
}

/* keyed contexts kept for reuse: one per concurrent caller (FUSE runs 16
 * workers by default), never more, however many a burst created */
#define POOL_MAX 64

struct cpu_ctx {
	EVP_CIPHER_CTX *enc, *dec;
	struct cpu_ctx *next;
};

struct cpu_backend {
	struct eg_backend be;
	uint8_t key[EG_XTS_KEY_LEN];
	pthread_mutex_t lock;
	struct cpu_ctx *free;	/* pooled, keyed contexts */
	unsigned int nfree;	/* how many, at most POOL_MAX */
};

static void cpu_ctx_free(struct cpu_ctx *c)
{
	EVP_CIPHER_CTX_free(c->enc);
	EVP_CIPHER_CTX_free(c->dec);
	free(c);
}

static struct cpu_ctx *cpu_ctx_new(const uint8_t *key)
{
	struct cpu_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->enc = EVP_CIPHER_CTX_new();
	c->dec = EVP_CIPHER_CTX_new();
	if (!c->enc || !c->dec)
		goto err_free;
	if (EVP_CipherInit_ex2(c->enc, EVP_aes_256_xts(), key, NULL, 1, NULL) != 1 ||
	    EVP_CipherInit_ex2(c->dec, EVP_aes_256_xts(), key, NULL, 0, NULL) != 1)
		goto err_free;
	return c;
err_free:
	cpu_ctx_free(c);
	return NULL;
}

static struct cpu_ctx *cpu_get(struct cpu_backend *cb)
{
	struct cpu_ctx *c;

	pthread_mutex_lock(&cb->lock);
	c = cb->free;
	if (c) {
		cb->free = c->next;
		cb->nfree--;
	}
	pthread_mutex_unlock(&cb->lock);
	return c ? c : cpu_ctx_new(cb->key);
}

static void cpu_put(struct cpu_backend *cb, struct cpu_ctx *c)
{
	pthread_mutex_lock(&cb->lock);
	if (cb->nfree < POOL_MAX) {
		c->next = cb->free;
		cb->free = c;
		cb->nfree++;
		c = NULL;
	}
	pthread_mutex_unlock(&cb->lock);
	if (c)
		cpu_ctx_free(c);
}

static int cpu_crypt(struct eg_backend *be, int enc, const struct eg_xts_req *r)
{
	struct cpu_backend *cb = (struct cpu_backend *)be;
	struct cpu_ctx *c;
	EVP_CIPHER_CTX *ctx;
	uint8_t *p = r->data;
	int ret = eg_xts_req_check(r), outl;

	if (ret || !r->nunits)
		return ret;
	c = cpu_get(cb);
	if (!c)
		return -ENOMEM;
	ctx = enc ? c->enc : c->dec;
	for (size_t u = 0; u < r->nunits; u++) {
		size_t len = u + 1 == r->nunits ? r->last_len : r->unit_len;

		if (EVP_CipherInit_ex2(ctx, NULL, NULL, r->tweaks + u * EG_TWEAK_LEN, enc, NULL) != 1 ||
		    EVP_CipherUpdate(ctx, p, &outl, p, (int)len) != 1 || (size_t)outl != len) {
			ret = -EIO;
			break;
		}
		p += len;
	}
	cpu_put(cb, c);
	return ret;
}

static void cpu_destroy(struct eg_backend *be)
{
	struct cpu_backend *cb = (struct cpu_backend *)be;

	while (cb->free) {
		struct cpu_ctx *c = cb->free;

		cb->free = c->next;
		cpu_ctx_free(c);
	}
	pthread_mutex_destroy(&cb->lock);
	eg_wipe(cb->key, sizeof(cb->key));
	free(cb);
}

static const struct eg_backend_ops cpu_ops = {
	.name = "cpu",
	.crypt = cpu_crypt,
	.destroy = cpu_destroy,
};

/**
 * eg_backend_cpu_new() - the OpenSSL backend
 * @key: K1 || K2
 * @out: the backend
 *
 * Return: 0, -ENOMEM, or -EIO when OpenSSL refuses the key (it refuses
 * K1 == K2, as FIPS 140 requires).
 */
int eg_backend_cpu_new(const uint8_t key[EG_XTS_KEY_LEN], struct eg_backend **out)
{
	struct cpu_backend *cb = calloc(1, sizeof(*cb));
	struct cpu_ctx *c;

	if (!cb)
		return -ENOMEM;
	cb->be.ops = &cpu_ops;
	memcpy(cb->key, key, EG_XTS_KEY_LEN);
	pthread_mutex_init(&cb->lock, NULL);
	/* key it once now, so a bad key fails here and not on first I/O */
	c = cpu_ctx_new(key);
	if (!c) {
		cpu_destroy(&cb->be);
		return -EIO;
	}
	cpu_put(cb, c);
	*out = &cb->be;
	return 0;
}

/**
 * eg_backend_open() - the backend named @kind
 * @kind: "cpu", "gpu" or "auto"
 * @key: K1 || K2
 * @verbose: say on stderr what auto measured and chose
 * @out: the backend
 * @why: set to a reason when it fails
 *
 * "auto" never fails for want of a GPU: without one it is the cpu backend.
 *
 * Return: 0, -EINVAL for an unknown kind, -ENODEV when "gpu" is asked for
 * and cannot be had, another negative errno.
 */
int eg_backend_open(const char *kind, const uint8_t key[EG_XTS_KEY_LEN], int verbose,
		    struct eg_backend **out, const char **why)
{
	struct eg_backend *cpu = NULL, *gpu = NULL;
	int ret;

	*why = NULL;
	if (!strcmp(kind, "cpu"))
		return eg_backend_cpu_new(key, out);
	if (!strcmp(kind, "gpu"))
		return eg_backend_gpu_new(key, out, why);
	if (strcmp(kind, "auto")) {
		*why = "unknown backend (use gpu, cpu or auto)";
		return -EINVAL;
	}
	ret = eg_backend_cpu_new(key, &cpu);
	if (ret)
		return ret;
	if (eg_backend_gpu_new(key, &gpu, why)) {
		if (verbose)
			fprintf(stderr, "encfs-gpu: backend auto: no GPU (%s); using cpu\n",
				*why ? *why : "unavailable");
		*why = NULL;
		*out = cpu;
		return 0;
	}
	ret = eg_backend_auto_new(cpu, gpu, out);
	if (ret) {
		eg_backend_destroy(gpu);
		eg_backend_destroy(cpu);
		return ret;
	}
	if (verbose && eg_backend_auto_crossover(*out) == SIZE_MAX)
		fprintf(stderr, "encfs-gpu: backend auto: the gpu (ptaskd) was slower than the cpu at every size measured; every request goes to the cpu\n");
	else if (verbose)
		fprintf(stderr, "encfs-gpu: backend auto: cpu below %zu bytes, gpu from there\n",
			eg_backend_auto_crossover(*out));
	return 0;
}
