// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * xts_gpu_test.c - checks the CUDA XTS-AES kernel (aes_xts.cu, as PTX)
 * through the CUDA driver API, loaded with dlopen("libcuda.so.1") by the
 * common library's shim (common/cuda_dev.h): no CUDA toolkit or
 * libcudart needed to build or run it.
 *
 *   xts_gpu_test [PTX]      (default: aes_xts.ptx next to this program)
 *
 * Checks, in TAP:
 *  1. IEEE 1619 vectors 10..14 (XTS-AES-256) and 15..18 (XTS-AES-128,
 *     ciphertext stealing), encrypt and decrypt;
 *  2. NIST CAVP XTSGenAES256, both tweak formats (whole-byte units);
 *  3. byte-identical output to OpenSSL's EVP aes-256-xts, both ways, on
 *     random data of random lengths from 16 bytes to 4 MiB: as one data
 *     unit (long units: chunk tweaks through the alpha-power table), and
 *     cut into 4 KiB units the way encfs-gpu does (odd last unit);
 *  4. the batch kernels (xts_batch_encrypt, xts_batch_decrypt: a ptask
 *     tunnel's batch of records, each its own unit, tweak and length, as
 *     encfs-gpu's gpu backend sends them): the IEEE vectors one record
 *     each, random batches of random lengths against OpenSSL both ways,
 *     records of a bad length and a head of another stride left alone;
 *  5. throughput, for information (not a pass/fail).
 * Exit 0: all passed; 1: a failure; 77: skipped, no GPU (no libcuda.so.1,
 * no device, or the driver cannot start).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "common/cuda_dev.h"
#include "aes_ks.h"
#include "xts_vectors.h"

/* the driver API, loaded at run time: no cuda.h (common/cuda_dev.h) */
static struct pc_cuda_dev gpu;
static struct pc_cuda_api *const cu = &gpu.cu;

#define MAX_BYTES	(4u << 20)
#define MAX_UNITS	(MAX_BYTES / 16)
#define MAX_RECORDS	1024
#define BATCH_BYTES	(XTS_BATCH_HEAD_BYTES + (size_t)MAX_RECORDS * XTS_REC_BYTES)

static struct {
	CUmodule mod;
	CUfunction enc, dec, benc, bdec;
	CUdeviceptr d_data, d_tweaks, d_batch;
	struct xts_key_param keys;	/* the kernel's by-value key parameter */
	int sms;
} g;

static int tap_n, tap_bad;

static void tap(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tap(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	tap_bad += !ok;
}

static int cuok(CUresult r, const char *what)
{
	const char *s = NULL;

	if (!r)
		return 1;
	if (cu->GetErrorString)
		cu->GetErrorString(r, &s);
	fprintf(stderr, "xts_gpu_test: %s: CUDA error %d (%s)\n", what, r, s ? s : "?");
	return 0;
}

static void skip(const char *why)
{
	printf("1..0 # SKIP no GPU: %s\n", why);
	printf("skipped: no GPU (%s)\n", why);
	exit(77);
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = '\0';
	fclose(f);
	return buf;
}

static int setup(const char *ptx_path)
{
	char *ptx;
	int err;

	err = pc_cuda_dev_open(&gpu, 0);
	if (err == -ENOENT || err == -ENODEV)
		skip(gpu.why);
	if (err) {
		fprintf(stderr, "xts_gpu_test: %s\n", gpu.why);
		return -1;
	}
	ptx = read_file(ptx_path);
	if (!ptx) {
		fprintf(stderr, "xts_gpu_test: cannot read %s: %s\n", ptx_path, strerror(errno));
		return -1;
	}
	cu->DeviceGetAttribute(&g.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, gpu.dev);
	printf("# device 0: %s, %d SMs\n", gpu.name, g.sms);
	err = pc_cuda_dev_load(&gpu, ptx, "xts_encrypt", "xts_gpu_test", &g.mod, &g.enc);
	free(ptx);
	if (err)
		return -1;
	if (!cuok(cu->ModuleGetFunction(&g.dec, g.mod, "xts_decrypt"), "xts_decrypt") ||
	    !cuok(cu->MemAlloc(&g.d_data, MAX_BYTES + 64), "cuMemAlloc") ||
	    !cuok(cu->MemAlloc(&g.d_tweaks, 16 * (size_t)MAX_UNITS), "cuMemAlloc") ||
	    !cuok(cu->ModuleGetFunction(&g.benc, g.mod, "xts_batch_encrypt"),
		  "xts_batch_encrypt") ||
	    !cuok(cu->ModuleGetFunction(&g.bdec, g.mod, "xts_batch_decrypt"),
		  "xts_batch_decrypt") ||
	    !cuok(cu->MemAlloc(&g.d_batch, BATCH_BYTES), "cuMemAlloc"))
		return -1;
	return 0;
}

/* the key schedules travel by value with every launch, as under ptaskd */
static int set_key(const uint8_t *key, size_t keylen)
{
	return aes_ks_param(key, keylen, &g.keys) ? -1 : 0;
}

static unsigned long long chunks_of(unsigned int len)
{
	return (len / 16 + 255) / 256;
}

/* launch on the data already on the device */
static int launch(int enc, unsigned long long nunits, unsigned int unit_len, unsigned int last_len)
{
	unsigned long long total = (nunits - 1) * (nunits > 1 ? chunks_of(unit_len) : 0) +
				   chunks_of(last_len);
	unsigned long long cap = (unsigned long long)g.sms * 8;
	unsigned int grid = (unsigned int)(total < cap ? total : cap);
	struct xts_shape_param shape = {
		.nunits = nunits, .unit_len = unit_len, .last_len = last_len,
	};
	void *args[] = { &g.d_data, &g.d_tweaks, &g.keys, &shape };

	if (!cuok(cu->LaunchKernel(enc ? g.enc : g.dec, grid ? grid : 1, 1, 1, 256, 1, 1, 0, NULL,
				  args, NULL), "cuLaunchKernel"))
		return -1;
	return cuok(cu->CtxSynchronize(), "kernel") ? 0 : -1;
}

/* XTS on the GPU: units of @unit_len, the last of @last_len, in place */
static int gpu_xts(int enc, uint8_t *data, const uint8_t *tweaks, unsigned long long nunits,
		   unsigned int unit_len, unsigned int last_len)
{
	size_t bytes = (nunits - 1) * unit_len + last_len;

	if (!cuok(cu->MemcpyHtoD(g.d_data, data, bytes), "upload") ||
	    !cuok(cu->MemcpyHtoD(g.d_tweaks, tweaks, 16 * nunits), "upload tweaks") ||
	    launch(enc, nunits, unit_len, last_len) ||
	    !cuok(cu->MemcpyDtoH(data, g.d_data, bytes), "download"))
		return -1;
	return 0;
}

static int vector(const struct xv_vector *v)
{
	uint8_t buf[XV_MAX_DATA];

	if (set_key(v->key, v->keylen))
		return 0;
	memcpy(buf, v->pt, v->len);
	if (gpu_xts(1, buf, v->tweak, 1, (unsigned int)v->len, (unsigned int)v->len) ||
	    memcmp(buf, v->ct, v->len))
		return 0;
	if (gpu_xts(0, buf, v->tweak, 1, (unsigned int)v->len, (unsigned int)v->len) ||
	    memcmp(buf, v->pt, v->len))
		return 0;
	return 1;
}

static void cavp(const char *file)
{
	struct xv_vector *vs;
	size_t n, skipped, bad = 0;
	char path[512];

	/* XTS_CAVP_DIR: a copy of the files, for a GPU machine without the package */
	snprintf(path, sizeof(path), "%s/%s", getenv("XTS_CAVP_DIR") ?: XV_CAVP_DIR, file);
	if (xv_cavp(path, &vs, &n, &skipped)) {
		printf("ok %d - CAVP %s # SKIP python3-cryptography-vectors not installed\n", ++tap_n,
		       file);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (!vector(&vs[i]) && bad++ < 5)
			printf("# CAVP %s %s differs\n", file, vs[i].name);
	tap(!bad && n, "CAVP %s: %zu vectors, %zu wrong (%zu skipped: not whole bytes)", file, n,
	    bad, skipped);
	free(vs);
}

/* OpenSSL's answer, unit by unit */
static int ossl_xts(int enc, const uint8_t *key, uint8_t *data, const uint8_t *tweaks,
		    size_t nunits, size_t unit_len, size_t last_len)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int outl, ret = 0;

	if (EVP_CipherInit_ex2(ctx, EVP_aes_256_xts(), key, NULL, enc, NULL) != 1)
		ret = -1;
	for (size_t u = 0; !ret && u < nunits; u++) {
		size_t len = u + 1 == nunits ? last_len : unit_len;

		if (EVP_CipherInit_ex2(ctx, NULL, NULL, tweaks + 16 * u, enc, NULL) != 1 ||
		    EVP_CipherUpdate(ctx, data, &outl, data, (int)len) != 1)
			ret = -1;
		data += len;
	}
	EVP_CIPHER_CTX_free(ctx);
	return ret;
}

static size_t rand_len(void)
{
	uint32_t r[2];

	/* log-uniform over 16 B .. 4 MiB, so small and large both get covered */
	RAND_bytes((uint8_t *)r, sizeof(r));
	size_t bits = 4 + r[0] % 19;	/* 2^4 .. 2^22 */
	size_t len = ((size_t)1 << bits) + r[1] % ((size_t)1 << bits);

	return len < 16 ? 16 : len > MAX_BYTES ? MAX_BYTES : len;
}

static void random_vs_openssl(int per_4k, int iters)
{
	uint8_t key[64], *a = malloc(MAX_BYTES), *b = malloc(MAX_BYTES), *tw = malloc(16 * 1025);
	int bad = 0;
	size_t maxlen = 0;

	RAND_bytes(key, sizeof(key));
	if (set_key(key, sizeof(key))) {
		tap(0, "set key");
		return;
	}
	for (int it = 0; it < iters; it++) {
		size_t len = rand_len(), nunits = 1, unit = len, last = len;

		if (per_4k) {
			/* encfs-gpu's layout: 4 KiB units, 1..15 extra bytes join the last */
			nunits = len / 4096 + (len % 4096 >= 16);
			if (nunits == 0)
				nunits = 1;
			unit = 4096;
			last = len - (nunits - 1) * 4096;
		}
		if (len > maxlen)
			maxlen = len;
		RAND_bytes(a, (int)len);
		RAND_bytes(tw, (int)(16 * nunits));
		memcpy(b, a, len);
		if (gpu_xts(1, a, tw, nunits, (unsigned int)unit, (unsigned int)last) ||
		    ossl_xts(1, key, b, tw, nunits, unit, last) || memcmp(a, b, len)) {
			if (bad++ < 5)
				printf("# encrypt differs: %zu bytes, %zu units\n", len, nunits);
			continue;
		}
		if (gpu_xts(0, a, tw, nunits, (unsigned int)unit, (unsigned int)last) ||
		    ossl_xts(0, key, b, tw, nunits, unit, last) || memcmp(a, b, len)) {
			if (bad++ < 5)
				printf("# decrypt differs: %zu bytes, %zu units\n", len, nunits);
		}
	}
	tap(!bad, "GPU == OpenSSL, %d random lengths 16 B..4 MiB (longest %zu) as %s, both ways",
	    iters, maxlen, per_4k ? "4 KiB units" : "one data unit");
	free(a);
	free(b);
	free(tw);
}

/* A batch of @records records on the GPU, in place; the grid as encfs-gpu's. */
static int gpu_batch(int enc, uint8_t *batch, size_t records)
{
	size_t bytes = XTS_BATCH_HEAD_BYTES + records * XTS_REC_BYTES;
	void *args[] = { &g.d_batch, &g.keys };
	unsigned int grid = (unsigned int)g.sms * 8;

	if (!cuok(cu->MemcpyHtoD(g.d_batch, batch, bytes), "upload batch") ||
	    !cuok(cu->LaunchKernel(enc ? g.benc : g.bdec, grid, 1, 1, 256, 1, 1, 0, NULL, args,
				   NULL), "cuLaunchKernel (batch)") ||
	    !cuok(cu->CtxSynchronize(), "batch kernel") ||
	    !cuok(cu->MemcpyDtoH(batch, g.d_batch, bytes), "download batch"))
		return -1;
	return 0;
}

static uint8_t *rec_at(uint8_t *batch, size_t r)
{
	return batch + XTS_BATCH_HEAD_BYTES + r * XTS_REC_BYTES;
}

static void batch_head(uint8_t *batch, size_t records, uint32_t stride)
{
	struct xts_batch_head h = { .records = records, .stride = stride };

	memcpy(batch, &h, sizeof(h));
}

static void rec_set(uint8_t *batch, size_t r, const uint8_t *tweak, uint32_t len,
		    const uint8_t *data)
{
	struct xts_rec_head h = { .len = len };

	memcpy(h.tweak, tweak, 16);
	memcpy(rec_at(batch, r), &h, sizeof(h));
	if (data)
		memcpy(rec_at(batch, r) + XTS_REC_HEAD_BYTES, data, len);
}

/* The IEEE vectors of at most 4 KiB, one record each, both ways. */
static void batch_vectors(const struct xv_vector *vs, size_t n)
{
	uint8_t *batch = calloc(1, XTS_BATCH_HEAD_BYTES + XTS_REC_BYTES);
	size_t bad = 0, done = 0;

	for (size_t i = 0; batch && i < n; i++) {
		const struct xv_vector *v = &vs[i];
		uint8_t *d = rec_at(batch, 0) + XTS_REC_HEAD_BYTES;

		if (v->len > XTS_REC_DATA || v->len < 16 || set_key(v->key, v->keylen))
			continue;
		batch_head(batch, 1, XTS_REC_BYTES);
		rec_set(batch, 0, v->tweak, (uint32_t)v->len, v->pt);
		done++;
		if (gpu_batch(1, batch, 1) || memcmp(d, v->ct, v->len) ||
		    gpu_batch(0, batch, 1) || memcmp(d, v->pt, v->len)) {
			if (bad++ < 5)
				printf("# batch: %s differs\n", v->name);
		}
	}
	tap(batch && done && !bad, "batch kernels: %zu IEEE vectors as one record each, %zu wrong",
	    done, bad);
	free(batch);
}

/*
 * Random batches (1 .. MAX_RECORDS records of 16 .. 4096 bytes) against
 * OpenSSL unit by unit, both ways; a record of length 0, one of 4097 and
 * the bytes past each record's length must come back untouched.
 */
static void batch_vs_openssl(int iters)
{
	uint8_t key[64], *a = malloc(BATCH_BYTES), *b = malloc(BATCH_BYTES);
	int bad = 0;

	RAND_bytes(key, sizeof(key));
	if (!a || !b || set_key(key, sizeof(key))) {
		tap(0, "batch: setup");
		goto out;
	}
	for (int it = 0; it < iters; it++) {
		uint32_t r32;
		size_t records;

		RAND_bytes((uint8_t *)&r32, sizeof(r32));
		records = 1 + r32 % (it < iters / 2 ? 64 : MAX_RECORDS);
		RAND_bytes(a, (int)(XTS_BATCH_HEAD_BYTES + records * XTS_REC_BYTES));
		batch_head(a, records, XTS_REC_BYTES);
		for (size_t r = 0; r < records; r++) {
			uint8_t tw[16];
			uint32_t len;

			RAND_bytes(tw, sizeof(tw));
			RAND_bytes((uint8_t *)&len, sizeof(len));
			len = 16 + len % (XTS_REC_DATA - 15);
			if (r == records / 2 && records > 2)
				len = 0;		/* left alone */
			if (r == records / 3 && records > 3)
				len = XTS_REC_DATA + 1;	/* likewise */
			rec_set(a, r, tw, len, NULL);
		}
		memcpy(b, a, XTS_BATCH_HEAD_BYTES + records * XTS_REC_BYTES);
		for (int enc = 1; enc >= 0; enc--) {
			for (size_t r = 0; r < records; r++) {
				struct xts_rec_head h;

				memcpy(&h, rec_at(b, r), sizeof(h));
				if (h.len >= 16 && h.len <= XTS_REC_DATA &&
				    ossl_xts(enc, key, rec_at(b, r) + XTS_REC_HEAD_BYTES, h.tweak,
					     1, h.len, h.len))
					bad++;
			}
			if (gpu_batch(enc, a, records) ||
			    memcmp(a, b, XTS_BATCH_HEAD_BYTES + records * XTS_REC_BYTES)) {
				if (bad++ < 5)
					printf("# batch %s differs: %zu records\n",
					       enc ? "encrypt" : "decrypt", records);
				break;
			}
		}
	}
	tap(!bad, "batch kernels == OpenSSL, %d random batches of up to %d records, both ways",
	    iters, MAX_RECORDS);
	/* A head of another stride: the kernel leaves the batch alone. */
	batch_head(a, 4, XTS_REC_BYTES + 16);
	memcpy(b, a, XTS_BATCH_HEAD_BYTES + 4 * XTS_REC_BYTES);
	tap(!gpu_batch(1, a, 4) && !memcmp(a, b, XTS_BATCH_HEAD_BYTES + 4 * XTS_REC_BYTES),
	    "batch kernel: a head of another stride is left alone");
out:
	free(a);
	free(b);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void throughput(void)
{
	static const unsigned int sizes[] = { 4096, 65536, 1u << 20, 4u << 20 };
	uint8_t key[64], *buf = malloc(MAX_BYTES), *tw = malloc(16 * 1024);

	RAND_bytes(key, sizeof(key));
	RAND_bytes(buf, MAX_BYTES);
	RAND_bytes(tw, 16 * 1024);
	set_key(key, sizeof(key));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned int n = sizes[i] / 4096;
		double t0, kern, full, cpu;
		int reps = 20;

		gpu_xts(1, buf, tw, n, 4096, 4096);	/* warm */
		t0 = now();
		for (int r = 0; r < reps; r++)
			launch(1, n, 4096, 4096);
		kern = (now() - t0) / reps;
		t0 = now();
		for (int r = 0; r < reps; r++)
			gpu_xts(1, buf, tw, n, 4096, 4096);
		full = (now() - t0) / reps;
		t0 = now();
		for (int r = 0; r < reps; r++)
			ossl_xts(1, key, buf, tw, n, 4096, 4096);
		cpu = (now() - t0) / reps;
		printf("# %7u bytes: kernel %8.1f us (%6.2f GB/s), with copies %8.1f us, "
		       "OpenSSL 1 core %8.1f us (%5.2f GB/s)\n", sizes[i], kern * 1e6,
		       sizes[i] / kern / 1e9, full * 1e6, cpu * 1e6, sizes[i] / cpu / 1e9);
	}
	/* The batch kernel on n records of 4 KiB, copies included. */
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i] / 4096, bytes = XTS_BATCH_HEAD_BYTES + n * XTS_REC_BYTES;
		uint8_t *batch = calloc(1, bytes);
		double t0, full;
		int reps = 20;

		if (!batch)
			break;
		batch_head(batch, n, XTS_REC_BYTES);
		for (size_t r = 0; r < n; r++)
			rec_set(batch, r, tw + 16 * r, XTS_REC_DATA, NULL);
		gpu_batch(1, batch, n);
		t0 = now();
		for (int r = 0; r < reps; r++)
			gpu_batch(1, batch, n);
		full = (now() - t0) / reps;
		printf("# %7u bytes as %zu batch records: with copies %8.1f us\n", sizes[i], n,
		       full * 1e6);
		free(batch);
	}
	free(buf);
	free(tw);
}

int main(int argc, char **argv)
{
	char def[PATH_MAX], self[PATH_MAX];
	struct xv_vector ieee[16];
	size_t n;

	if (argc > 1) {
		snprintf(def, sizeof(def), "%s", argv[1]);
	} else {
		snprintf(self, sizeof(self), "%s", argv[0]);
		snprintf(def, sizeof(def), "%s/aes_xts.ptx", dirname(self));
	}
	if (setup(def)) {
		tap(0, "CUDA setup and PTX load");
		printf("1..%d\n", tap_n);
		return 1;
	}
	n = xv_ieee(ieee, 16);
	for (size_t i = 0; i < n; i++)
		tap(vector(&ieee[i]), "GPU: %s", ieee[i].name);
	cavp("tweak-128hexstr/XTSGenAES256.rsp");
	cavp("tweak-dataunitseqno/XTSGenAES256.rsp");
	random_vs_openssl(0, 60);
	random_vs_openssl(1, 60);
	batch_vectors(ieee, n);
	batch_vs_openssl(40);
	throughput();
	cu->MemFree(g.d_data);
	cu->MemFree(g.d_tweaks);
	cu->MemFree(g.d_batch);
	cu->ModuleUnload(g.mod);
	pc_cuda_dev_close(&gpu);
	printf("1..%d\n", tap_n);
	printf("%d passed, %d failed\n", tap_n - tap_bad, tap_bad);
	return tap_bad ? 1 : 0;
}
