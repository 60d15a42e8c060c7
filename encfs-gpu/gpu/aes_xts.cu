// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * aes_xts.cu - XTS-AES (IEEE 1619) on the GPU, compiled to PTX
 * (nvcc -ptx -arch=sm_90; the generated aes_xts.ptx is committed and
 * embedded in encfs-gpu) and run as a ptask by ptaskd for encfs-gpu's gpu
 * backend (backend_gpu.c), or loaded with the CUDA driver API directly by
 * xts_gpu_test.c.  ptaskd's cpu and sim backends run its host twin,
 * encfs-gpu/gpu/twin.c, under the same entry names.
 *
 * Work: nunits data units back to back in `data`, unit u at u * unit_len,
 * every unit unit_len bytes (a multiple of 16) except the last, last_len
 * bytes (>= 16, any length); one 16-byte tweak per unit in `tweaks`.  In
 * place.
 *
 * The batch kernels (xts_batch_encrypt, xts_batch_decrypt) take instead a
 * ptask tunnel's batch (xts_params.h): the units of many requests, each
 * a record with its own tweak and length, up to 4 KiB, so concurrent FUSE
 * requests share one launch.  A record is one chunk (256 blocks at most),
 * done by one block exactly as a chunk of xts_encrypt is (xts_chunk).
 *
 * Design, after the published fast GPU AES work (T-table AES in shared
 * memory, one thread per 16-byte block):
 *  - One T-table (Te0, or Td0 to decrypt) in shared memory, replicated 32
 *    times: entry i of copy c sits at word 32 * i + c and lane c reads copy
 *    c, so every lookup of a warp hits 32 different banks, whatever the
 *    indices: no bank conflicts.  Te1..Te3 are byte rotations of Te0
 *    (funnel shifts), so one 32 KiB table serves all four.  The last
 *    round's S-box bytes come from the same table; the inverse S-box for
 *    decryption is packed 4 entries per word, replicated the same way
 *    (8 KiB).
 *  - The tables are computed by each block at start from GF(2^8)
 *    arithmetic, not loaded: nothing to transcribe, nothing in global
 *    memory.
 *  - The expanded key schedules (K1 encrypt, K1 decrypt, K2 encrypt) and
 *    the alpha powers come by value, as one struct xts_key_param
 *    (xts_params.h) marked __grid_constant__: the kernel reads them in
 *    place in the parameter space, where every thread reads the same
 *    round key at the same time and the constant cache broadcasts it.
 *    (They were __constant__ symbols filled with cuMemcpyHtoD; ptaskd
 *    passes parameters only, so they became one.)
 *  - A block of 256 threads takes a "chunk": 256 consecutive 16-byte
 *    blocks of one data unit.  Thread 0 encrypts the unit's tweak under K2
 *    once per chunk (and, for chunks past the first of a long unit,
 *    multiplies it by alpha^(256 * chunk) with a table of powers); every
 *    thread then gets its own T_j = E_K2(tweak) * alpha^j by shifting in
 *    GF(2^128) in steps of up to 56 bits, instead of j sequential
 *    doublings.
 *  - A unit ending in a partial block: the thread of the last full block
 *    does both steps of ciphertext stealing, as IEEE 1619 5.3.2 / 5.4.2.
 *  - Blocks loop over chunks (grid-stride), so the tables are built once
 *    per resident block, and a block with no chunk at all returns before
 *    building them: ptask launches a fixed grid whatever the request's
 *    size (ptask_set_geometry is per ptask, not per invocation).
 */
#include <stdint.h>

#include "xts_params.h"

#define XTS_THREADS	256

/* ---------------------------------------------------------------- GF(2^8) */

__device__ __forceinline__ uint32_t xt(uint32_t a)
{
	return ((a << 1) ^ ((a & 0x80) ? 0x1b : 0)) & 0xff;
}

__device__ uint32_t gmul8(uint32_t a, uint32_t b)
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

__device__ uint32_t sbox(uint32_t x)
{
	/* multiplicative inverse as x^254, then the affine map */
	uint32_t inv = 1, p = x;

	for (int e = 254; e; e >>= 1) {
		if (e & 1)
			inv = gmul8(inv, p);
		p = gmul8(p, p);
	}
	if (!x)
		inv = 0;
	uint32_t b = inv;
	uint32_t r = b ^ ((b << 1 | b >> 7) & 0xff) ^ ((b << 2 | b >> 6) & 0xff) ^
		     ((b << 3 | b >> 5) & 0xff) ^ ((b << 4 | b >> 4) & 0xff) ^ 0x63;
	return r & 0xff;
}

__device__ __forceinline__ uint32_t te0(uint32_t s)
{
	return xt(s) << 24 | s << 16 | s << 8 | (xt(s) ^ s);
}

__device__ __forceinline__ uint32_t td0(uint32_t s)
{
	return gmul8(s, 0x0e) << 24 | gmul8(s, 0x09) << 16 | gmul8(s, 0x0d) << 8 | gmul8(s, 0x0b);
}

__device__ __forceinline__ uint32_t ror(uint32_t x, int n)
{
	return __funnelshift_r(x, x, n);
}

/* ---------------------------------------------------------------- AES */

/* T(x): the lane's own copy of entry x (SH = 5: replicated; SH = 0: one copy) */
template <int SH>
__device__ __forceinline__ uint32_t tl(const uint32_t *t, uint32_t x, uint32_t lane)
{
	return t[(x << SH) | lane];
}

template <int SH>
__device__ void aes_encrypt(const uint32_t *te, uint32_t lane, const uint32_t *rk, int nr,
			    uint32_t &s0, uint32_t &s1, uint32_t &s2, uint32_t &s3)
{
	uint32_t t0, t1, t2, t3;

	s0 ^= rk[0];
	s1 ^= rk[1];
	s2 ^= rk[2];
	s3 ^= rk[3];
	for (int r = 1; r < nr; r++) {
		const uint32_t *k = rk + 4 * r;

		t0 = tl<SH>(te, s0 >> 24, lane) ^ ror(tl<SH>(te, (s1 >> 16) & 0xff, lane), 8) ^
		     ror(tl<SH>(te, (s2 >> 8) & 0xff, lane), 16) ^ ror(tl<SH>(te, s3 & 0xff, lane), 24) ^ k[0];
		t1 = tl<SH>(te, s1 >> 24, lane) ^ ror(tl<SH>(te, (s2 >> 16) & 0xff, lane), 8) ^
		     ror(tl<SH>(te, (s3 >> 8) & 0xff, lane), 16) ^ ror(tl<SH>(te, s0 & 0xff, lane), 24) ^ k[1];
		t2 = tl<SH>(te, s2 >> 24, lane) ^ ror(tl<SH>(te, (s3 >> 16) & 0xff, lane), 8) ^
		     ror(tl<SH>(te, (s0 >> 8) & 0xff, lane), 16) ^ ror(tl<SH>(te, s1 & 0xff, lane), 24) ^ k[2];
		t3 = tl<SH>(te, s3 >> 24, lane) ^ ror(tl<SH>(te, (s0 >> 16) & 0xff, lane), 8) ^
		     ror(tl<SH>(te, (s1 >> 8) & 0xff, lane), 16) ^ ror(tl<SH>(te, s2 & 0xff, lane), 24) ^ k[3];
		s0 = t0;
		s1 = t1;
		s2 = t2;
		s3 = t3;
	}
	/* last round: Te0 = (2s, s, s, 3s), so the S-box byte is in the middle */
	const uint32_t *k = rk + 4 * nr;
#define SB3(x) ((tl<SH>(te, (x), lane) << 8) & 0xff000000u)
#define SB2(x) (tl<SH>(te, (x), lane) & 0x00ff0000u)
#define SB1(x) (tl<SH>(te, (x), lane) & 0x0000ff00u)
#define SB0(x) ((tl<SH>(te, (x), lane) >> 8) & 0x000000ffu)
	t0 = SB3(s0 >> 24) ^ SB2((s1 >> 16) & 0xff) ^ SB1((s2 >> 8) & 0xff) ^ SB0(s3 & 0xff) ^ k[0];
	t1 = SB3(s1 >> 24) ^ SB2((s2 >> 16) & 0xff) ^ SB1((s3 >> 8) & 0xff) ^ SB0(s0 & 0xff) ^ k[1];
	t2 = SB3(s2 >> 24) ^ SB2((s3 >> 16) & 0xff) ^ SB1((s0 >> 8) & 0xff) ^ SB0(s1 & 0xff) ^ k[2];
	t3 = SB3(s3 >> 24) ^ SB2((s0 >> 16) & 0xff) ^ SB1((s1 >> 8) & 0xff) ^ SB0(s2 & 0xff) ^ k[3];
#undef SB3
#undef SB2
#undef SB1
#undef SB0
	s0 = t0;
	s1 = t1;
	s2 = t2;
	s3 = t3;
}

/* inverse S-box byte x from the packed, replicated table */
__device__ __forceinline__ uint32_t isb(const uint32_t *p, uint32_t x, uint32_t lane)
{
	return (p[((x >> 2) << 5) | lane] >> ((x & 3) * 8)) & 0xff;
}

__device__ void aes_decrypt(const uint32_t *td, const uint32_t *isp, uint32_t lane,
			    const uint32_t *rk, int nr, uint32_t &s0, uint32_t &s1, uint32_t &s2,
			    uint32_t &s3)
{
	uint32_t t0, t1, t2, t3;

	s0 ^= rk[0];
	s1 ^= rk[1];
	s2 ^= rk[2];
	s3 ^= rk[3];
	for (int r = 1; r < nr; r++) {
		const uint32_t *k = rk + 4 * r;

		t0 = tl<5>(td, s0 >> 24, lane) ^ ror(tl<5>(td, (s3 >> 16) & 0xff, lane), 8) ^
		     ror(tl<5>(td, (s2 >> 8) & 0xff, lane), 16) ^ ror(tl<5>(td, s1 & 0xff, lane), 24) ^ k[0];
		t1 = tl<5>(td, s1 >> 24, lane) ^ ror(tl<5>(td, (s0 >> 16) & 0xff, lane), 8) ^
		     ror(tl<5>(td, (s3 >> 8) & 0xff, lane), 16) ^ ror(tl<5>(td, s2 & 0xff, lane), 24) ^ k[1];
		t2 = tl<5>(td, s2 >> 24, lane) ^ ror(tl<5>(td, (s1 >> 16) & 0xff, lane), 8) ^
		     ror(tl<5>(td, (s0 >> 8) & 0xff, lane), 16) ^ ror(tl<5>(td, s3 & 0xff, lane), 24) ^ k[2];
		t3 = tl<5>(td, s3 >> 24, lane) ^ ror(tl<5>(td, (s2 >> 16) & 0xff, lane), 8) ^
		     ror(tl<5>(td, (s1 >> 8) & 0xff, lane), 16) ^ ror(tl<5>(td, s0 & 0xff, lane), 24) ^ k[3];
		s0 = t0;
		s1 = t1;
		s2 = t2;
		s3 = t3;
	}
	const uint32_t *k = rk + 4 * nr;

	t0 = isb(isp, s0 >> 24, lane) << 24 ^ isb(isp, (s3 >> 16) & 0xff, lane) << 16 ^
	     isb(isp, (s2 >> 8) & 0xff, lane) << 8 ^ isb(isp, s1 & 0xff, lane) ^ k[0];
	t1 = isb(isp, s1 >> 24, lane) << 24 ^ isb(isp, (s0 >> 16) & 0xff, lane) << 16 ^
	     isb(isp, (s3 >> 8) & 0xff, lane) << 8 ^ isb(isp, s2 & 0xff, lane) ^ k[1];
	t2 = isb(isp, s2 >> 24, lane) << 24 ^ isb(isp, (s1 >> 16) & 0xff, lane) << 16 ^
	     isb(isp, (s0 >> 8) & 0xff, lane) << 8 ^ isb(isp, s3 & 0xff, lane) ^ k[2];
	t3 = isb(isp, s3 >> 24, lane) << 24 ^ isb(isp, (s2 >> 16) & 0xff, lane) << 16 ^
	     isb(isp, (s1 >> 8) & 0xff, lane) << 8 ^ isb(isp, s0 & 0xff, lane) ^ k[3];
	s0 = t0;
	s1 = t1;
	s2 = t2;
	s3 = t3;
}

/* ---------------------------------------------------------------- GF(2^128) */

/* XTS convention: byte 0 least significant; (lo, hi) little-endian halves. */
struct gf128 {
	unsigned long long lo, hi;
};

/* v * alpha^k, 1 <= k <= 56: shift, then fold the k bits that fell off the
 * top back in through x^128 = x^7 + x^2 + x + 1. */
__device__ __forceinline__ gf128 mulx_k(gf128 v, int k)
{
	unsigned long long c = v.hi >> (64 - k);

	v.hi = v.hi << k | v.lo >> (64 - k);
	v.lo = (v.lo << k) ^ c ^ (c << 1) ^ (c << 2) ^ (c << 7);
	return v;
}

__device__ gf128 mulx(gf128 v, unsigned int j)
{
	while (j) {
		int k = j < 56 ? (int)j : 56;

		v = mulx_k(v, k);
		j -= (unsigned int)k;
	}
	return v;
}

/* general product, for chunks past the first of a long unit */
__device__ gf128 gfmul(gf128 a, gf128 b)
{
	gf128 r = { 0, 0 };

	for (int i = 0; i < 128; i++) {
		unsigned long long bit = i < 64 ? b.lo >> i : b.hi >> (i - 64);

		if (bit & 1) {
			r.lo ^= a.lo;
			r.hi ^= a.hi;
		}
		a = mulx_k(a, 1);
	}
	return r;
}

/* ---------------------------------------------------------------- helpers */

__device__ __forceinline__ uint32_t bswap(uint32_t x)
{
	return __byte_perm(x, 0, 0x0123);
}

__device__ __forceinline__ gf128 load_tw(const uint8_t *p)
{
	gf128 t = { 0, 0 };

	for (int i = 0; i < 8; i++) {
		t.lo |= (unsigned long long)p[i] << (8 * i);
		t.hi |= (unsigned long long)p[8 + i] << (8 * i);
	}
	return t;
}

/* AES words (big-endian) <-> 16 bytes as four little-endian words */
__device__ __forceinline__ void xor_tw(uint4 &v, gf128 t)
{
	v.x ^= (uint32_t)t.lo;
	v.y ^= (uint32_t)(t.lo >> 32);
	v.z ^= (uint32_t)t.hi;
	v.w ^= (uint32_t)(t.hi >> 32);
}

struct tables {
	const uint32_t *t;	/* Te0 or Td0, replicated */
	const uint32_t *isp;	/* packed inverse S-box (decrypt) */
	const uint32_t *te1;	/* one plain Te0 copy for thread 0's tweak (decrypt) */
	uint32_t lane;
	const xts_key_param *k;	/* the keys, in the parameter space */
};

template <bool ENC>
__device__ __forceinline__ void xex(const tables &tb, uint4 &v, gf128 t)
{
	xor_tw(v, t);
	uint32_t s0 = bswap(v.x), s1 = bswap(v.y), s2 = bswap(v.z), s3 = bswap(v.w);

	if (ENC)
		aes_encrypt<5>(tb.t, tb.lane, tb.k->rk_enc, tb.k->nr, s0, s1, s2, s3);
	else
		aes_decrypt(tb.t, tb.isp, tb.lane, tb.k->rk_dec, tb.k->nr, s0, s1, s2, s3);
	v.x = bswap(s0);
	v.y = bswap(s1);
	v.z = bswap(s2);
	v.w = bswap(s3);
	xor_tw(v, t);
}

/* E_K2(tweak) (thread 0 of the block) */
template <bool ENC>
__device__ gf128 tweak_base(const tables &tb, const uint8_t *tw, unsigned long long cw)
{
	gf128 t = load_tw(tw);
	uint32_t s0 = bswap((uint32_t)t.lo), s1 = bswap((uint32_t)(t.lo >> 32));
	uint32_t s2 = bswap((uint32_t)t.hi), s3 = bswap((uint32_t)(t.hi >> 32));

	if (ENC)
		aes_encrypt<5>(tb.t, 0, tb.k->rk_tweak, tb.k->nr, s0, s1, s2, s3);	/* lane 0's copy */
	else
		aes_encrypt<0>(tb.te1, 0, tb.k->rk_tweak, tb.k->nr, s0, s1, s2, s3);
	t.lo = (unsigned long long)bswap(s1) << 32 | bswap(s0);
	t.hi = (unsigned long long)bswap(s3) << 32 | bswap(s2);
	for (int b = 0; cw && b < XTS_POW_MAX; b++, cw >>= 1) {
		if (cw & 1) {
			gf128 p = { tb.k->pow[b][0], tb.k->pow[b][1] };

			t = gfmul(t, p);
		}
	}
	return t;
}

__device__ __forceinline__ unsigned long long chunks_of(unsigned int len)
{
	return (len / 16 + XTS_THREADS - 1) / XTS_THREADS;
}

/*
 * One chunk: blocks 256 cw .. 256 cw + 255 of the unit of @len bytes at
 * @unit, whose tweak is at @tw.  Every thread of the block calls it.
 */
template <bool ENC>
__device__ void xts_chunk(const tables &tb, uint8_t *unit, const uint8_t *tw,
			  unsigned int len, unsigned long long cw, gf128 *s_base)
{
	unsigned int t = threadIdx.x;
	unsigned int m = len / 16, s = len % 16;
	unsigned long long j = cw * XTS_THREADS + t;

	if (t == 0)
		*s_base = tweak_base<ENC>(tb, tw, cw);
	__syncthreads();
	gf128 base = *s_base;

	if (j < m && !(s && j == m - 1)) {
		uint4 v = *(uint4 *)(unit + 16 * j);

		xex<ENC>(tb, v, mulx(base, t));
		*(uint4 *)(unit + 16 * j) = v;
	} else if (s && j == m - 1) {
		/* ciphertext stealing over blocks m-1 (full) and m (s bytes) */
		gf128 ta = mulx(base, t), tb2 = mulx_k(ta, 1);
		union { uint4 v; uint8_t b[16]; } x, y;
		uint8_t *last = unit + 16 * (unsigned long long)m;

		x.v = *(uint4 *)(unit + 16 * j);
		/* encrypt: T_{m-1} first; decrypt: T_m first */
		xex<ENC>(tb, x.v, ENC ? ta : tb2);
		for (unsigned int i = 0; i < 16; i++)
			y.b[i] = i < s ? last[i] : x.b[i];
		xex<ENC>(tb, y.v, ENC ? tb2 : ta);
		for (unsigned int i = 0; i < s; i++)
			last[i] = x.b[i];
		*(uint4 *)(unit + 16 * j) = y.v;
	}
	__syncthreads();	/* s_base is rewritten by the next chunk */
}

template <bool ENC>
__device__ void xts_body(const tables &tb, uint8_t *data, const uint8_t *tweaks,
			 unsigned long long nunits, unsigned int unit_len, unsigned int last_len,
			 gf128 *s_base)
{
	unsigned long long cpu = nunits > 1 ? chunks_of(unit_len) : 0;
	unsigned long long total = (nunits - 1) * cpu + chunks_of(last_len);

	for (unsigned long long c = blockIdx.x; c < total; c += gridDim.x) {
		unsigned long long u, cw;

		if (c < (nunits - 1) * cpu) {
			u = c / cpu;
			cw = c % cpu;
		} else {
			u = nunits - 1;
			cw = c - (nunits - 1) * cpu;
		}
		unsigned int len = u + 1 == nunits ? last_len : unit_len;

		xts_chunk<ENC>(tb, data + u * unit_len, tweaks + 16 * u, len, cw, s_base);
	}
}

/*
 * A batch: record r (grid-stride over the records) is one chunk.  A
 * record whose length is out of range is left alone (uniform over the
 * block: the length is the block's record's).
 */
template <bool ENC>
__device__ void xts_batch_body(const tables &tb, uint8_t *batch, unsigned long long records,
			       gf128 *s_base)
{
	for (unsigned long long r = blockIdx.x; r < records; r += gridDim.x) {
		uint8_t *rec = batch + XTS_BATCH_HEAD_BYTES + r * XTS_REC_BYTES;
		const xts_rec_head *h = (const xts_rec_head *)rec;
		unsigned int len = h->len;

		if (len < 16 || len > XTS_REC_DATA)
			continue;
		xts_chunk<ENC>(tb, rec + XTS_REC_HEAD_BYTES, h->tweak, len, 0, s_base);
	}
}

/*
 * Does this block have work?  Not when the shape is one the kernel cannot
 * take (the backends never send one; refusing it here keeps a bad shape
 * from reading outside the unit), nor when the grid has more blocks than
 * the request has chunks.  Uniform over the block, so returning before
 * the first __syncthreads is safe.
 */
__device__ __forceinline__ bool block_has_work(const xts_shape_param &sh)
{
	if (!sh.nunits || sh.last_len < 16 || (sh.nunits > 1 && (sh.unit_len < 16 || sh.unit_len % 16)))
		return false;
	unsigned long long cpu = sh.nunits > 1 ? chunks_of(sh.unit_len) : 0;

	return blockIdx.x < (sh.nunits - 1) * cpu + chunks_of(sh.last_len);
}

/* per-block table setup; tmp is 512 bytes of scratch */
__device__ void build_sboxes(uint8_t *sb, uint8_t *isb_tmp)
{
	uint32_t t = threadIdx.x, s = sbox(t);

	sb[t] = (uint8_t)s;
	if (isb_tmp)
		isb_tmp[s] = (uint8_t)t;
	__syncthreads();
}

/* Te0 replicated 32 times, built by the block (see the top comment). */
__device__ void enc_tables(uint32_t *s_te, uint8_t *s_sb)
{
	uint32_t t = threadIdx.x;

	build_sboxes(s_sb, NULL);
	for (int k = 0; k < 32; k++) {
		uint32_t idx = t + 256 * k;

		s_te[idx] = te0(s_sb[idx >> 5]);
	}
	__syncthreads();
}

/* Td0 replicated, the packed inverse S-box and one plain Te0 (tweaks). */
__device__ void dec_tables(uint32_t *s_td, uint32_t *s_isp, uint32_t *s_te1, uint8_t *s_sb,
			   uint8_t *s_isb)
{
	uint32_t t = threadIdx.x;

	build_sboxes(s_sb, s_isb);
	s_te1[t] = te0(s_sb[t]);
	for (int k = 0; k < 32; k++) {
		uint32_t idx = t + 256 * k;

		s_td[idx] = td0(s_isb[idx >> 5]);
	}
	for (int k = 0; k < 8; k++) {
		uint32_t idx = t + 256 * k, e = (idx >> 5) * 4;

		s_isp[idx] = s_isb[e] | s_isb[e + 1] << 8 | s_isb[e + 2] << 16 |
			     (uint32_t)s_isb[e + 3] << 24;
	}
	__syncthreads();
}

/*
 * A batch's records, or 0 when this block has none (a grid larger than
 * the batch) or the head is not this kernel's (another stride).  Uniform
 * over the block.
 */
__device__ __forceinline__ unsigned long long batch_records(const uint8_t *batch)
{
	const xts_batch_head *h = (const xts_batch_head *)batch;

	if (h->stride != XTS_REC_BYTES || blockIdx.x >= h->records)
		return 0;
	return h->records;
}

extern "C" __global__ void __launch_bounds__(XTS_THREADS)
xts_encrypt(uint8_t *data, const uint8_t *tweaks, const __grid_constant__ xts_key_param keys,
	    const xts_shape_param shape)
{
	__shared__ uint32_t s_te[256 * 32];
	__shared__ uint8_t s_sb[256];
	__shared__ gf128 s_base;

	if (!block_has_work(shape))
		return;
	enc_tables(s_te, s_sb);
	tables tb = { s_te, NULL, NULL, threadIdx.x & 31, &keys };

	xts_body<true>(tb, data, tweaks, shape.nunits, shape.unit_len, shape.last_len, &s_base);
}

extern "C" __global__ void __launch_bounds__(XTS_THREADS)
xts_decrypt(uint8_t *data, const uint8_t *tweaks, const __grid_constant__ xts_key_param keys,
	    const xts_shape_param shape)
{
	__shared__ uint32_t s_td[256 * 32];
	__shared__ uint32_t s_isp[64 * 32];
	__shared__ uint32_t s_te1[256];
	__shared__ uint8_t s_sb[256], s_isb[256];
	__shared__ gf128 s_base;

	if (!block_has_work(shape))
		return;
	dec_tables(s_td, s_isp, s_te1, s_sb, s_isb);
	tables tb = { s_td, s_isp, s_te1, threadIdx.x & 31, &keys };

	xts_body<false>(tb, data, tweaks, shape.nunits, shape.unit_len, shape.last_len, &s_base);
}

extern "C" __global__ void __launch_bounds__(XTS_THREADS)
xts_batch_encrypt(uint8_t *batch, const __grid_constant__ xts_key_param keys)
{
	__shared__ uint32_t s_te[256 * 32];
	__shared__ uint8_t s_sb[256];
	__shared__ gf128 s_base;
	unsigned long long records = batch_records(batch);

	if (!records)
		return;
	enc_tables(s_te, s_sb);
	tables tb = { s_te, NULL, NULL, threadIdx.x & 31, &keys };

	xts_batch_body<true>(tb, batch, records, &s_base);
}

extern "C" __global__ void __launch_bounds__(XTS_THREADS)
xts_batch_decrypt(uint8_t *batch, const __grid_constant__ xts_key_param keys)
{
	__shared__ uint32_t s_td[256 * 32];
	__shared__ uint32_t s_isp[64 * 32];
	__shared__ uint32_t s_te1[256];
	__shared__ uint8_t s_sb[256], s_isb[256];
	__shared__ gf128 s_base;
	unsigned long long records = batch_records(batch);

	if (!records)
		return;
	dec_tables(s_td, s_isp, s_te1, s_sb, s_isb);
	tables tb = { s_td, s_isp, s_te1, threadIdx.x & 31, &keys };

	xts_batch_body<false>(tb, batch, records, &s_base);
}
