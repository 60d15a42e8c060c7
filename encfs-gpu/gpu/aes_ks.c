// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * aes_ks.c - AES key expansion (encryption and equivalent inverse cipher
 * schedules) and the alpha-power table for aes_xts.cu (see aes_ks.h).
 * The S-box is computed from its definition (inverse in GF(2^8), then the
 * affine map), like the kernel's tables, so nothing is transcribed.
 */
#include <errno.h>
#include <string.h>

#include "aes_ks.h"

static uint32_t xt(uint32_t a)
{
	return ((a << 1) ^ ((a & 0x80) ? 0x1b : 0)) & 0xff;
}

static uint32_t gmul8(uint32_t a, uint32_t b)
{
	uint32_t r = 0;

	for (int i = 0; i < 8; i++) {
		if (b & 1)
			r ^= a;
		a = xt(a);
		b >>= 1;
	}
	return r;
}

static uint32_t sbox(uint32_t x)
{
	uint32_t inv = 1, p = x, b, r;

	for (int e = 254; e; e >>= 1) {
		if (e & 1)
			inv = gmul8(inv, p);
		p = gmul8(p, p);
	}
	b = x ? inv : 0;
	r = b ^ ((b << 1 | b >> 7) & 0xff) ^ ((b << 2 | b >> 6) & 0xff) ^
	    ((b << 3 | b >> 5) & 0xff) ^ ((b << 4 | b >> 4) & 0xff) ^ 0x63;
	return r & 0xff;
}

static uint32_t sub_word(uint32_t w)
{
	return sbox(w >> 24) << 24 | sbox((w >> 16) & 0xff) << 16 | sbox((w >> 8) & 0xff) << 8 |
	       sbox(w & 0xff);
}

/* FIPS-197 5.2; @nk = 4 or 8 words; returns the round count */
static int expand(const uint8_t *key, int nk, uint32_t *w)
{
	int nr = nk + 6, words = 4 * (nr + 1);
	uint32_t rcon = 1;

	for (int i = 0; i < nk; i++)
		w[i] = (uint32_t)key[4 * i] << 24 | (uint32_t)key[4 * i + 1] << 16 |
		       (uint32_t)key[4 * i + 2] << 8 | key[4 * i + 3];
	for (int i = nk; i < words; i++) {
		uint32_t t = w[i - 1];

		if (i % nk == 0) {
			t = sub_word(t << 8 | t >> 24) ^ rcon << 24;
			rcon = xt(rcon);
		} else if (nk > 6 && i % nk == 4) {
			t = sub_word(t);
		}
		w[i] = w[i - nk] ^ t;
	}
	return nr;
}

static uint32_t inv_mix_column(uint32_t w)
{
	uint32_t a0 = w >> 24, a1 = (w >> 16) & 0xff, a2 = (w >> 8) & 0xff, a3 = w & 0xff;

	return (gmul8(a0, 14) ^ gmul8(a1, 11) ^ gmul8(a2, 13) ^ gmul8(a3, 9)) << 24 |
	       (gmul8(a0, 9) ^ gmul8(a1, 14) ^ gmul8(a2, 11) ^ gmul8(a3, 13)) << 16 |
	       (gmul8(a0, 13) ^ gmul8(a1, 9) ^ gmul8(a2, 14) ^ gmul8(a3, 11)) << 8 |
	       (gmul8(a0, 11) ^ gmul8(a1, 13) ^ gmul8(a2, 9) ^ gmul8(a3, 14));
}

/* FIPS-197 5.3.5: round keys in reverse order, InvMixColumns on the inner ones */
static void inverse_schedule(const uint32_t *enc, int nr, uint32_t *dec)
{
	for (int r = 0; r <= nr; r++)
		for (int c = 0; c < 4; c++) {
			uint32_t w = enc[4 * (nr - r) + c];

			dec[4 * r + c] = r == 0 || r == nr ? w : inv_mix_column(w);
		}
}

/**
 * aes_ks_xts() - the three schedules for an XTS key K1 || K2
 * @key: 32 bytes (XTS-AES-128) or 64 bytes (XTS-AES-256)
 * @keylen: 32 or 64
 * @k: filled
 *
 * Return: 0 or -EINVAL.
 */
int aes_ks_xts(const uint8_t *key, size_t keylen, struct xts_gpu_keys *k)
{
	int nk;

	if (keylen != 32 && keylen != 64)
		return -EINVAL;
	memset(k, 0, sizeof(*k));
	nk = (int)(keylen / 2 / 4);
	k->nr = expand(key, nk, k->rk_enc);
	expand(key + keylen / 2, nk, k->rk_tweak);
	inverse_schedule(k->rk_enc, k->nr, k->rk_dec);
	return 0;
}

/* v * alpha in the XTS convention (little-endian halves) */
static void mulx(unsigned long long v[2])
{
	unsigned long long c = v[1] >> 63;

	v[1] = v[1] << 1 | v[0] >> 63;
	v[0] = v[0] << 1 ^ (c ? 0x87 : 0);
}

static void gfmul(const unsigned long long a_in[2], const unsigned long long b[2],
		  unsigned long long r[2])
{
	unsigned long long a[2] = { a_in[0], a_in[1] };

	r[0] = r[1] = 0;
	for (int i = 0; i < 128; i++) {
		if ((i < 64 ? b[0] >> i : b[1] >> (i - 64)) & 1) {
			r[0] ^= a[0];
			r[1] ^= a[1];
		}
		mulx(a);
	}
}

/* pow[b] = alpha^(256 * 2^b): pow[0] by 256 doublings of 1, then squaring */
void aes_ks_pow_table(unsigned long long pow[XTS_POW_MAX][2])
{
	unsigned long long v[2] = { 1, 0 };

	for (int i = 0; i < 256; i++)
		mulx(v);
	pow[0][0] = v[0];
	pow[0][1] = v[1];
	for (int b = 1; b < XTS_POW_MAX; b++)
		gfmul(pow[b - 1], pow[b - 1], pow[b]);
}

/**
 * aes_ks_param() - the kernel's by-value key parameter for K1 || K2
 * @key: 32 bytes (XTS-AES-128) or 64 bytes (XTS-AES-256)
 * @keylen: 32 or 64
 * @p: filled (xts_params.h); key material: wipe it when done
 *
 * Return: 0 or -EINVAL.
 */
int aes_ks_param(const uint8_t *key, size_t keylen, struct xts_key_param *p)
{
	struct xts_gpu_keys k;
	unsigned long long pow[XTS_POW_MAX][2];
	int ret = aes_ks_xts(key, keylen, &k);

	if (ret)
		return ret;
	memset(p, 0, sizeof(*p));
	memcpy(p->rk_enc, k.rk_enc, sizeof(p->rk_enc));
	memcpy(p->rk_dec, k.rk_dec, sizeof(p->rk_dec));
	memcpy(p->rk_tweak, k.rk_tweak, sizeof(p->rk_tweak));
	p->nr = k.nr;
	aes_ks_pow_table(pow);
	for (int b = 0; b < XTS_POW_MAX; b++) {
		p->pow[b][0] = pow[b][0];
		p->pow[b][1] = pow[b][1];
	}
	/* the stack copy is key material too; volatile so it is not elided */
	for (size_t i = 0; i < sizeof(k); i++)
		((volatile uint8_t *)&k)[i] = 0;
	return 0;
}
