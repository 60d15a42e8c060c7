// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * xts_vectors.c - the IEEE 1619 vectors as data, and a reader for NIST
 * CAVP .rsp files (see xts_vectors.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xts_vectors.h"

/* IEEE 1619-2007 vectors 10..14 share keys and plaintext (00..ff twice) */
static const char ieee256_key[] =
	"2718281828459045235360287471352662497757247093699959574966967627"
	"3141592653589793238462643383279502884197169399375105820974944592";

static const struct {
	const char *name, *tweak, *ct;
} ieee256[] = {
	{ "IEEE 1619 vector 10", "ff000000000000000000000000000000",
	  "1c3b3a102f770386e4836c99e370cf9bea00803f5e482357a4ae12d414a3e63b"
	  "5d31e276f8fe4a8d66b317f9ac683f44680a86ac35adfc3345befecb4bb188fd"
	  "5776926c49a3095eb108fd1098baec70aaa66999a72a82f27d848b21d4a741b0"
	  "c5cd4d5fff9dac89aeba122961d03a757123e9870f8acf1000020887891429ca"
	  "2a3e7a7d7df7b10355165c8b9a6d0a7de8b062c4500dc4cd120c0f7418dae3d0"
	  "b5781c34803fa75421c790dfe1de1834f280d7667b327f6c8cd7557e12ac3a0f"
	  "93ec05c52e0493ef31a12d3d9260f79a289d6a379bc70c50841473d1a8cc81ec"
	  "583e9645e07b8d9670655ba5bbcfecc6dc3966380ad8fecb17b6ba02469a020a"
	  "84e18e8f84252070c13e9f1f289be54fbc481457778f616015e1327a02b140f1"
	  "505eb309326d68378f8374595c849d84f4c333ec4423885143cb47bd71c5edae"
	  "9be69a2ffeceb1bec9de244fbe15992b11b77c040f12bd8f6a975a44a0f90c29"
	  "a9abc3d4d893927284c58754cce294529f8614dcd2aba991925fedc4ae74ffac"
	  "6e333b93eb4aff0479da9a410e4450e0dd7ae4c6e2910900575da401fc07059f"
	  "645e8b7e9bfdef33943054ff84011493c27b3429eaedb4ed5376441a77ed4385"
	  "1ad77f16f541dfd269d50d6a5f14fb0aab1cbb4c1550be97f7ab4066193c4caa"
	  "773dad38014bd2092fa755c824bb5e54c4f36ffda9fcea70b9c6e693e148c151" },
	{ "IEEE 1619 vector 11", "ffff0000000000000000000000000000",
	  "77a31251618a15e6b92d1d66dffe7b50b50bad552305ba0217a610688eff7e11"
	  "e1d0225438e093242d6db274fde801d4cae06f2092c728b2478559df58e837c2"
	  "469ee4a4fa794e4bbc7f39bc026e3cb72c33b0888f25b4acf56a2a9804f1ce6d"
	  "3d6e1dc6ca181d4b546179d55544aa7760c40d06741539c7e3cd9d2f6650b201"
	  "3fd0eeb8c2b8e3d8d240ccae2d4c98320a7442e1c8d75a42d6e6cfa4c2eca179"
	  "8d158c7aecdf82490f24bb9b38e108bcda12c3faf9a21141c3613b58367f922a"
	  "aa26cd22f23d708dae699ad7cb40a8ad0b6e2784973dcb605684c08b8d6998c6"
	  "9aac049921871ebb65301a4619ca80ecb485a31d744223ce8ddc2394828d6a80"
	  "470c092f5ba413c3378fa6054255c6f9df4495862bbb3287681f931b687c888a"
	  "bf844dfc8fc28331e579928cd12bd2390ae123cf03818d14dedde5c0c24c8ab0"
	  "18bfca75ca096f2d531f3d1619e785f1ada437cab92e980558b3dce1474afb75"
	  "bfedbf8ff54cb2618e0244c9ac0d3c66fb51598cd2db11f9be39791abe447c63"
	  "094f7c453b7ff87cb5bb36b7c79efb0872d17058b83b15ab0866ad8a58656c5a"
	  "7e20dbdf308b2461d97c0ec0024a2715055249cf3b478ddd4740de654f75ca68"
	  "6e0d7345c69ed50cdc2a8b332b1f8824108ac937eb050585608ee734097fc090"
	  "54fbff89eeaeea791f4a7ab1f9868294a4f9e27b42af8100cb9d59cef9645803" },
	{ "IEEE 1619 vector 12", "ffffff00000000000000000000000000",
	  "e387aaa58ba483afa7e8eb469778317ecf4cf573aa9d4eac23f2cdf914e4e200"
	  "a8b490e42ee646802dc6ee2b471b278195d60918ececb44bf79966f83faba049"
	  "9298ebc699c0c8634715a320bb4f075d622e74c8c932004f25b41e361025b5a8"
	  "7815391f6108fc4afa6a05d9303c6ba68a128a55705d415985832fdeaae6c8e1"
	  "9110e84d1b1f199a2692119edc96132658f09da7c623efcec712537a3d94c0bf"
	  "5d7e352ec94ae5797fdb377dc1551150721adf15bd26a8efc2fcaad56881fa9e"
	  "62462c28f30ae1ceaca93c345cf243b73f542e2074a705bd2643bb9f7cc79bb6"
	  "e7091ea6e232df0f9ad0d6cf502327876d82207abf2115cdacf6d5a48f6c1879"
	  "a65b115f0f8b3cb3c59d15dd8c769bc014795a1837f3901b5845eb491adfefe0"
	  "97b1fa30a12fc1f65ba22905031539971a10f2f36c321bb51331cdefb39e3964"
	  "c7ef079994f5b69b2edd83a71ef549971ee93f44eac3938fcdd61d01fa71799d"
	  "a3a8091c4c48aa9ed263ff0749df95d44fef6a0bb578ec69456aa5408ae32c7a"
	  "f08ad7ba8921287e3bbee31b767be06a0e705c864a769137df28292283ea81a2"
	  "480241b44d9921cdbec1bc28dc1fda114bd8e5217ac9d8ebafa720e9da4f9ace"
	  "231cc949e5b96fe76ffc21063fddc83a6b8679c00d35e09576a875305bed5f36"
	  "ed242c8900dd1fa965bc950dfce09b132263a1eef52dd6888c309f5a7d712826" },
	{ "IEEE 1619 vector 13", "ffffffff000000000000000000000000",
	  "bf53d2dade78e822a4d949a9bc6766b01b06a8ef70d26748c6a7fc36d80ae4c5"
	  "520f7c4ab0ac8544424fa405162fef5a6b7f229498063618d39f0003cb5fb8d1"
	  "c86b643497da1ff945c8d3bedeca4f479702a7a735f043ddb1d6aaade3c4a0ac"
	  "7ca7f3fa5279bef56f82cd7a2f38672e824814e10700300a055e1630b8f1cb0e"
	  "919f5e942010a416e2bf48cb46993d3cb6a51c19bacf864785a00bc2ecff15d3"
	  "50875b246ed53e68be6f55bd7e05cfc2b2ed6432198a6444b6d8c247fab941f5"
	  "69768b5c429366f1d3f00f0345b96123d56204c01c63b22ce78baf116e525ed9"
	  "0fdea39fa469494d3866c31e05f295ff21fea8d4e6e13d67e47ce722e9698a1c"
	  "1048d68ebcde76b86fcf976eab8aa9790268b7068e017a8b9b749409514f1053"
	  "027fd16c3786ea1bac5f15cb79711ee2abe82f5cf8b13ae73030ef5b9e4457e7"
	  "5d1304f988d62dd6fc4b94ed38ba831da4b7634971b6cd8ec325d9c61c00f1df"
	  "73627ed3745a5e8489f3a95c69639c32cd6e1d537a85f75cc844726e8a72fc00"
	  "77ad22000f1d5078f6b866318c668f1ad03d5a5fced5219f2eabbd0aa5c0f460"
	  "d183f04404a0d6f469558e81fab24a167905ab4c7878502ad3e38fdbe62a4155"
	  "6cec37325759533ce8f25f367c87bb5578d667ae93f9e2fd99bcbc5f2fbba88c"
	  "f6516139420fcff3b7361d86322c4bd84c82f335abb152c4a93411373aaa8220" },
	{ "IEEE 1619 vector 14", "ffffffffff0000000000000000000000",
	  "64497e5a831e4a932c09be3e5393376daa599548b816031d224bbf50a818ed23"
	  "50eae7e96087c8a0db51ad290bd00c1ac1620857635bf246c176ab463be30b80"
	  "8da548081ac847b158e1264be25bb0910bbc92647108089415d45fab1b3d2604"
	  "e8a8eff1ae4020cfa39936b66827b23f371b92200be90251e6d73c5f86de5fd4"
	  "a950781933d79a28272b782a2ec313efdfcc0628f43d744c2dc2ff3dcb66999b"
	  "50c7ca895b0c64791eeaa5f29499fb1c026f84ce5b5c72ba1083cddb5ce45434"
	  "631665c333b60b11593fb253c5179a2c8db813782a004856a1653011e93fb6d8"
	  "76c18366dd8683f53412c0c180f9c848592d593f8609ca736317d356e13e2bff"
	  "3a9f59cd9aeb19cd482593d8c46128bb32423b37a9adfb482b99453fbe25a41b"
	  "f6feb4aa0bef5ed24bf73c762978025482c13115e4015aac992e5613a3b5c2f6"
	  "85b84795cb6e9b2656d8c88157e52c42f978d8634c43d06fea928f2822e465aa"
	  "6576e9bf419384506cc3ce3c54ac1a6f67dc66f3b30191e698380bc999b05abc"
	  "e19dc0c6dcc2dd001ec535ba18deb2df1a101023108318c75dc98611a09dc48a"
	  "0acdec676fabdf222f07e026f059b672b56e5cbc8e1d21bbd867dd9272120546"
	  "81d70ea737134cdfce93b6f82ae22423274e58a0821cc5502e2d0ab4585e94de"
	  "6975be5e0b4efce51cd3e70c25a1fbbbd609d273ad5b0d59631c531f6a0a57b9" },
};

/* vectors 15..18: XTS-AES-128, ciphertext stealing */
static const char ieee128_key[] =
	"fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0bfbebdbcbbbab9b8b7b6b5b4b3b2b1b0";
static const char ieee128_tweak[] = "9a785634120000000000000000000000";

static const struct {
	const char *name, *pt, *ct;
} ieee128[] = {
	{ "IEEE 1619 vector 15 (17 B)", "000102030405060708090a0b0c0d0e0f10",
	  "6c1625db4671522d3d7599601de7ca09ed" },
	{ "IEEE 1619 vector 16 (18 B)", "000102030405060708090a0b0c0d0e0f1011",
	  "d069444b7a7e0cab09e24447d24deb1fedbf" },
	{ "IEEE 1619 vector 17 (19 B)", "000102030405060708090a0b0c0d0e0f101112",
	  "e5df1351c0544ba1350b3363cd8ef4beedbf9d" },
	{ "IEEE 1619 vector 18 (20 B)", "000102030405060708090a0b0c0d0e0f10111213",
	  "9d84c813f719aa2c7be3f66171c7c5c2edbf9dac" },
};

/**
 * xv_unhex() - decode hex text
 * @s: text (ends at NUL or whitespace)
 * @out: destination
 * @max: its size
 * @len: decoded length
 *
 * Return: 0 or -EINVAL.
 */
int xv_unhex(const char *s, uint8_t *out, size_t max, size_t *len)
{
	size_t n = 0;

	while (isxdigit((unsigned char)s[0]) && isxdigit((unsigned char)s[1])) {
		unsigned int v;

		if (n == max || sscanf(s, "%2x", &v) != 1)
			return -EINVAL;
		out[n++] = (uint8_t)v;
		s += 2;
	}
	if (*s && !isspace((unsigned char)*s))
		return -EINVAL;
	*len = n;
	return 0;
}

/* The IEEE vectors into @out; returns how many (9 when @max allows). */
size_t xv_ieee(struct xv_vector *out, size_t max)
{
	size_t n = 0, len;

	for (size_t i = 0; i < sizeof(ieee256) / sizeof(ieee256[0]) && n < max; i++, n++) {
		struct xv_vector *v = &out[n];

		memset(v, 0, sizeof(*v));
		snprintf(v->name, sizeof(v->name), "%s", ieee256[i].name);
		xv_unhex(ieee256_key, v->key, sizeof(v->key), &v->keylen);
		xv_unhex(ieee256[i].tweak, v->tweak, 16, &len);
		xv_unhex(ieee256[i].ct, v->ct, XV_MAX_DATA, &v->len);
		for (size_t b = 0; b < v->len; b++)
			v->pt[b] = (uint8_t)b;
	}
	for (size_t i = 0; i < sizeof(ieee128) / sizeof(ieee128[0]) && n < max; i++, n++) {
		struct xv_vector *v = &out[n];

		memset(v, 0, sizeof(*v));
		snprintf(v->name, sizeof(v->name), "%s", ieee128[i].name);
		xv_unhex(ieee128_key, v->key, sizeof(v->key), &v->keylen);
		xv_unhex(ieee128_tweak, v->tweak, 16, &len);
		xv_unhex(ieee128[i].pt, v->pt, XV_MAX_DATA, &v->len);
		xv_unhex(ieee128[i].ct, v->ct, XV_MAX_DATA, &len);
	}
	return n;
}

/* "KEY = VALUE" with the value's start in *val; 0 if @line is not one. */
static int kv(char *line, const char *key, char **val)
{
	size_t k = strlen(key);

	if (strncmp(line, key, k) || strncmp(line + k, " = ", 3))
		return 0;
	*val = line + k + 3;
	return 1;
}

/* Keep @cur (a complete vector of @bits bits) unless it is not whole bytes. */
static int keep(struct xv_vector **vs, size_t *n, size_t *cap, const struct xv_vector *cur,
		size_t bits, size_t *skipped)
{
	if (bits % 8 || bits / 8 != cur->len) {
		(*skipped)++;
		return 0;
	}
	if (*n == *cap) {
		struct xv_vector *nv;

		*cap = *cap ? 2 * *cap : 256;
		nv = realloc(*vs, *cap * sizeof(**vs));
		if (!nv)
			return -ENOMEM;
		*vs = nv;
	}
	(*vs)[(*n)++] = *cur;
	return 0;
}

/**
 * xv_cavp() - read the vectors of a CAVP XTSGen .rsp file
 * @path: the file
 * @out: a malloc'ed array of vectors (caller frees)
 * @n: their count
 * @skipped: vectors left out because DataUnitLen is not a whole number of
 *	     bytes
 *
 * Return: 0, -errno when the file cannot be read, -EINVAL when a line
 * does not parse.
 */
int xv_cavp(const char *path, struct xv_vector **out, size_t *n, size_t *skipped)
{
	FILE *f = fopen(path, "r");
	struct xv_vector *vs = NULL, cur;
	size_t cap = 0, bits = 0, len;
	char line[4096], *val;
	int decrypt = 0, have = 0, ret = 0;

	*n = *skipped = 0;
	if (!f)
		return -errno;
	memset(&cur, 0, sizeof(cur));
	while (!ret && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\r\n")] = '\0';
		if (!strcmp(line, "[ENCRYPT]") || !strcmp(line, "[DECRYPT]")) {
			decrypt = line[1] == 'D';
		} else if (kv(line, "COUNT", &val)) {
			memset(&cur, 0, sizeof(cur));
			snprintf(cur.name, sizeof(cur.name), "%s %s", decrypt ? "dec" : "enc", val);
			cur.decrypt = decrypt;
			have = 1;
		} else if (kv(line, "DataUnitLen", &val)) {
			bits = strtoul(val, NULL, 10);
		} else if (kv(line, "Key", &val)) {
			ret = xv_unhex(val, cur.key, sizeof(cur.key), &cur.keylen);
		} else if (kv(line, "i", &val)) {
			ret = xv_unhex(val, cur.tweak, 16, &len);
		} else if (kv(line, "DataUnitSeqNumber", &val)) {
			unsigned long long seq = strtoull(val, NULL, 10);

			for (int b = 0; b < 8; b++)
				cur.tweak[b] = (uint8_t)(seq >> (8 * b));
		} else if (kv(line, "PT", &val)) {
			ret = xv_unhex(val, cur.pt, XV_MAX_DATA, &cur.len);
		} else if (kv(line, "CT", &val)) {
			ret = xv_unhex(val, cur.ct, XV_MAX_DATA, &len);
		} else if (!line[0] && have && cur.len) {
			ret = keep(&vs, n, &cap, &cur, bits, skipped);
			have = 0;
		}
	}
	if (!ret && have && cur.len)
		ret = keep(&vs, n, &cap, &cur, bits, skipped);
	fclose(f);
	if (ret) {
		free(vs);
		*n = 0;
		return ret;
	}
	*out = vs;
	return 0;
}
