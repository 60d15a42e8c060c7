// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * vectors_test.c - XTS-AES known answers on a backend.
 *
 *   vectors_test          the cpu backend (OpenSSL)
 *   vectors_test gpu      the gpu backend: the kernel as a ptask through
 *                         the ptaskd at $PTASK_SOCKET (tests/encfs/run.sh
 *                         starts one with --backend cpu, which runs the
 *                         kernel's host twin; on a GPU machine, --backend
 *                         cuda runs the kernel itself)
 *
 *  1. IEEE 1619 vectors 10..14 (XTS-AES-256) through the backend, both ways.
 *  2. NIST CAVP XTSGenAES256, both tweak formats, through the backend
 *     (python3-cryptography-vectors; skipped when it is not installed).
 *  3. A reference XTS written here from the standard (AES-ECB single
 *     blocks, GF(2^128) doubling, ciphertext stealing) checked against the
 *     IEEE stealing vectors 15..18, then the backend checked against it on
 *     random multi-unit requests with odd last units: the standard has no
 *     XTS-AES-256 stealing vectors, this covers that path.
 *  4. (gpu) one request larger than the backend's datablock cache, and
 *     many threads' concurrent requests, each checked against the cpu
 *     backend (OpenSSL) on its own bytes: with EG_GPU_TUNNEL at auto
 *     (the default) and at always, they are batched through the tunnel,
 *     several requests to a kernel launch, and split back by ticket.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "encfs-gpu/gpu/xts_vectors.h"
#include "encfs-gpu/xts.h"
#include "tap.h"

/* the backend under test: "cpu" or "gpu" */
static const char *kind = "cpu";

static int backend_new(const uint8_t *key, struct eg_backend **be)
{
	const char *why = NULL;
	int ret;

	if (strcmp(kind, "gpu"))
		return eg_backend_cpu_new(key, be);
	ret = eg_backend_gpu_new(key, be, &why);
	if (ret && why)
		tap_diag("gpu backend: %s", why);
	return ret;
}

static void aes_block(const uint8_t *key, size_t keylen, int enc, const uint8_t in[16],
		      uint8_t out[16])
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	const EVP_CIPHER *c = keylen == 16 ? EVP_aes_128_ecb() : EVP_aes_256_ecb();
	int outl;

	EVP_CipherInit_ex2(ctx, c, key, NULL, enc, NULL);
	EVP_CIPHER_CTX_set_padding(ctx, 0);
	EVP_CipherUpdate(ctx, out, &outl, in, 16);
	EVP_CIPHER_CTX_free(ctx);
}

static void gf_double(uint8_t t[16])
{
	int carry = t[15] >> 7;

	for (int i = 15; i > 0; i--)
		t[i] = (uint8_t)(t[i] << 1 | t[i - 1] >> 7);
	t[0] = (uint8_t)(t[0] << 1);
	if (carry)
		t[0] ^= 0x87;
}

static void xex(const uint8_t *k1, size_t half, int enc, const uint8_t t[16], const uint8_t *in,
		uint8_t *out)
{
	uint8_t x[16];

	for (int i = 0; i < 16; i++)
		x[i] = in[i] ^ t[i];
	aes_block(k1, half, enc, x, x);
	for (int i = 0; i < 16; i++)
		out[i] = x[i] ^ t[i];
}

/* IEEE 1619 section 5.3 / 5.4, literally; @len >= 16, in place. */
static void ref_xts(const uint8_t *key, size_t keylen, const uint8_t tweak[16], uint8_t *d,
		    size_t len, int enc)
{
	size_t half = keylen / 2, m = len / 16, s = len % 16, last = s ? m - 1 : m;
	uint8_t t[16], tn[16], cc[16], pp[16];

	aes_block(key + half, half, 1, tweak, t);
	for (size_t j = 0; j < last; j++) {
		xex(key, half, enc, t, d + 16 * j, d + 16 * j);
		gf_double(t);
	}
	if (!s)
		return;
	memcpy(tn, t, 16);
	gf_double(tn);
	/* the last full block uses T_{m-1} encrypting, T_m decrypting */
	xex(key, half, enc, enc ? t : tn, d + 16 * (m - 1), cc);
	memcpy(pp, d + 16 * m, s);
	memcpy(pp + s, cc + s, 16 - s);
	memcpy(d + 16 * m, cc, s);
	xex(key, half, enc, enc ? tn : t, pp, d + 16 * (m - 1));
}

static int backend_vector(struct eg_backend *be, const struct xv_vector *v)
{
	uint8_t buf[XV_MAX_DATA];
	struct eg_xts_req r = { .data = buf, .tweaks = v->tweak, .nunits = 1,
				.unit_len = v->len, .last_len = v->len };
	int ok = 1;

	memcpy(buf, v->pt, v->len);
	ok &= !eg_backend_crypt(be, 1, &r) && !memcmp(buf, v->ct, v->len);
	memcpy(buf, v->ct, v->len);
	ok &= !eg_backend_crypt(be, 0, &r) && !memcmp(buf, v->pt, v->len);
	return ok;
}

static void cavp(const char *file)
{
	char path[512];
	struct xv_vector *vs;
	size_t n, skipped, bad = 0;
	int ret;

	/* XTS_CAVP_DIR: a copy of the files, as xts_gpu_test takes it */
	snprintf(path, sizeof(path), "%s/%s", getenv("XTS_CAVP_DIR") ?: XV_CAVP_DIR, file);
	ret = xv_cavp(path, &vs, &n, &skipped);
	if (ret == -ENOENT) {
		tap_skip("python3-cryptography-vectors not installed", "CAVP %s", file);
		return;
	}
	if (!tap_ok(!ret && n > 0, "CAVP %s parses", file))
		return;
	for (size_t i = 0; i < n; i++) {
		struct eg_backend *be;

		if (vs[i].keylen != 64 || backend_new(vs[i].key, &be)) {
			bad++;
			continue;
		}
		if (!backend_vector(be, &vs[i])) {
			if (bad++ < 5)
				tap_diag("CAVP %s %s differs", file, vs[i].name);
		}
		eg_backend_destroy(be);
	}
	tap_ok(!bad, "CAVP %s: %zu vectors, %zu wrong (%zu skipped: data unit not whole bytes)",
	       file, n, bad, skipped);
	free(vs);
}

static void random_requests(void)
{
	uint8_t key[64], *buf, *ref, *tweaks;
	struct eg_backend *be;
	int bad = 0, iters = 300;

	RAND_bytes(key, sizeof(key));
	if (!tap_ok(!backend_new(key, &be), "%s backend with a random key", kind))
		return;
	buf = malloc(1 << 20);
	ref = malloc(1 << 20);
	tweaks = malloc(16 * 256);
	for (int it = 0; it < iters; it++) {
		uint32_t rnd[3];
		struct eg_xts_req r;
		size_t off = 0;

		RAND_bytes((uint8_t *)rnd, sizeof(rnd));
		r.unit_len = 16 * (1 + rnd[0] % 256);		/* 16 .. 4096 */
		r.nunits = 1 + rnd[1] % 16;
		r.last_len = 16 + rnd[2] % (r.unit_len + 16);	/* may end mid-block */
		r.data = buf;
		r.tweaks = tweaks;
		RAND_bytes(tweaks, (int)(16 * r.nunits));
		RAND_bytes(buf, (int)eg_xts_req_bytes(&r));
		memcpy(ref, buf, eg_xts_req_bytes(&r));
		for (size_t u = 0; u < r.nunits; u++) {
			size_t len = u + 1 == r.nunits ? r.last_len : r.unit_len;

			ref_xts(key, 64, tweaks + 16 * u, ref + off, len, 1);
			off += len;
		}
		if (eg_backend_crypt(be, 1, &r) || memcmp(buf, ref, off)) {
			bad++;
			continue;
		}
		/* and back */
		off = 0;
		for (size_t u = 0; u < r.nunits; u++) {
			size_t len = u + 1 == r.nunits ? r.last_len : r.unit_len;

			ref_xts(key, 64, tweaks + 16 * u, ref + off, len, 0);
			off += len;
		}
		if (eg_backend_crypt(be, 0, &r) || memcmp(buf, ref, off))
			bad++;
	}
	tap_ok(!bad, "%s backend == reference XTS on %d random requests (%d wrong)", kind, iters,
	       bad);
	free(buf);
	free(ref);
	free(tweaks);
	eg_backend_destroy(be);
}

/*
 * One request larger than the gpu backend's datablock cache (4 MiB): 1300
 * units of 4096 bytes and a last one of 1000, against the cpu backend.
 */
static void big_request(void)
{
	const size_t nunits = 1301, bytes = 1300 * 4096 + 1000;
	uint8_t key[64], *a = malloc(bytes), *b = malloc(bytes), *tw = malloc(16 * nunits);
	struct eg_xts_req ra = { .data = a, .tweaks = tw, .nunits = nunits, .unit_len = 4096,
				 .last_len = 1000 };
	struct eg_xts_req rb = ra;
	struct eg_backend *be = NULL, *cpu = NULL;
	int ok;

	rb.data = b;
	RAND_bytes(key, sizeof(key));
	RAND_bytes(a, (int)bytes);
	RAND_bytes(tw, (int)(16 * nunits));
	memcpy(b, a, bytes);
	ok = !backend_new(key, &be) && !eg_backend_cpu_new(key, &cpu) &&
	     !eg_backend_crypt(be, 1, &ra) && !eg_backend_crypt(cpu, 1, &rb) &&
	     !memcmp(a, b, bytes) && !eg_backend_crypt(be, 0, &ra) &&
	     !eg_backend_crypt(cpu, 0, &rb) && !memcmp(a, b, bytes);
	tap_ok(ok, "%s backend == cpu backend on one request of %zu bytes, both ways", kind,
	       bytes);
	eg_backend_destroy(be);
	eg_backend_destroy(cpu);
	free(a);
	free(b);
	free(tw);
}

#define CONC_THREADS	16
#define CONC_ROUNDS	40
#define CONC_MAX_UNITS	9

struct conc {
	struct eg_backend *be, *cpu;
	unsigned int id;
	int bad;		/* requests whose bytes were not their own */
	int failed;		/* requests that returned an error */
};

/*
 * A thread of FUSE requests: each its own data (the thread and round in
 * every byte pattern), 1..9 units of 4 KiB with an odd last one now and
 * then, its own tweaks; encrypted by the backend under test and by the
 * cpu backend, compared, then decrypted back to the original.
 */
static void *conc_thread(void *arg)
{
	struct conc *c = arg;
	size_t cap = CONC_MAX_UNITS * 4096;
	uint8_t *a = malloc(cap), *b = malloc(cap), *orig = malloc(cap);
	uint8_t tw[16 * CONC_MAX_UNITS];

	for (int round = 0; a && b && orig && round < CONC_ROUNDS; round++) {
		uint32_t r;
		struct eg_xts_req ra = { .data = a, .tweaks = tw, .unit_len = 4096 };
		struct eg_xts_req rb;
		size_t bytes;

		RAND_bytes((uint8_t *)&r, sizeof(r));
		ra.nunits = 1 + r % CONC_MAX_UNITS;
		ra.last_len = (r >> 8) % 3 ? 4096 : 16 + (r >> 12) % 4080;
		bytes = eg_xts_req_bytes(&ra);
		for (size_t i = 0; i < bytes; i++)
			orig[i] = (uint8_t)(c->id * 131 + round * 17 + i * 7 + (i >> 12));
		RAND_bytes(tw, (int)(16 * ra.nunits));
		memcpy(a, orig, bytes);
		memcpy(b, orig, bytes);
		rb = ra;
		rb.data = b;
		if (eg_backend_crypt(c->be, 1, &ra) || eg_backend_crypt(c->cpu, 1, &rb)) {
			c->failed++;
			continue;
		}
		if (memcmp(a, b, bytes))
			c->bad++;
		if (eg_backend_crypt(c->be, 0, &ra)) {
			c->failed++;
			continue;
		}
		if (memcmp(a, orig, bytes))
			c->bad++;
	}
	free(a);
	free(b);
	free(orig);
	return NULL;
}

/* CONC_THREADS threads of CONC_ROUNDS requests each at once. */
static void concurrent_requests(const char *tunnel)
{
	struct conc c[CONC_THREADS];
	pthread_t th[CONC_THREADS];
	struct eg_backend *be = NULL, *cpu = NULL;
	uint8_t key[64];
	int bad = 0, failed = 0, ok;

	setenv("EG_GPU_TUNNEL", tunnel, 1);
	RAND_bytes(key, sizeof(key));
	ok = !backend_new(key, &be) && !eg_backend_cpu_new(key, &cpu);
	for (unsigned int i = 0; ok && i < CONC_THREADS; i++) {
		c[i] = (struct conc){ .be = be, .cpu = cpu, .id = i };
		if (pthread_create(&th[i], NULL, conc_thread, &c[i])) {
			ok = 0;
			while (i--)
				pthread_join(th[i], NULL);
			break;
		}
	}
	for (unsigned int i = 0; ok && i < CONC_THREADS; i++) {
		pthread_join(th[i], NULL);
		bad += c[i].bad;
		failed += c[i].failed;
	}
	tap_ok(ok && !bad && !failed,
	       "%s backend (EG_GPU_TUNNEL=%s): %d threads x %d concurrent requests, each its own "
	       "bytes back == cpu backend, both ways (%d wrong, %d failed)", kind, tunnel,
	       CONC_THREADS, CONC_ROUNDS, bad, failed);
	eg_backend_destroy(be);
	eg_backend_destroy(cpu);
	unsetenv("EG_GPU_TUNNEL");
}

int main(int argc, char **argv)
{
	struct xv_vector ieee[16];
	size_t n = xv_ieee(ieee, 16);

	if (argc > 1)
		kind = argv[1];
	if (strcmp(kind, "cpu") && strcmp(kind, "gpu")) {
		fprintf(stderr, "usage: vectors_test [cpu|gpu]\n");
		return 2;
	}

	for (size_t i = 0; i < n; i++) {
		struct xv_vector *v = &ieee[i];
		uint8_t buf[XV_MAX_DATA];
		struct eg_backend *be;
		int ok;

		/* the reference, on every vector (it is what checks the backend's stealing) */
		memcpy(buf, v->pt, v->len);
		ref_xts(v->key, v->keylen, v->tweak, buf, v->len, 1);
		ok = !memcmp(buf, v->ct, v->len);
		ref_xts(v->key, v->keylen, v->tweak, buf, v->len, 0);
		tap_ok(ok && !memcmp(buf, v->pt, v->len), "reference XTS: %s", v->name);
		if (v->keylen != 64)
			continue;
		ok = !backend_new(v->key, &be);
		tap_ok(ok && backend_vector(be, v), "%s backend: %s", kind, v->name);
		if (ok)
			eg_backend_destroy(be);
	}
	cavp("tweak-128hexstr/XTSGenAES256.rsp");
	cavp("tweak-dataunitseqno/XTSGenAES256.rsp");
	random_requests();
	if (!strcmp(kind, "gpu")) {
		big_request();
		concurrent_requests("auto");
		concurrent_requests("always");
		concurrent_requests("never");
	}
	return tap_done();
}
