// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * unit_test.c - unit tests of the encfs-gpu modules, without FUSE, built
 * with ASan and UBSan by tests/encfs/run.sh.  TAP output (tap.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "encfs-gpu/b64.h"
#include "encfs-gpu/config.h"
#include "encfs-gpu/contents.h"
#include "encfs-gpu/file_header.h"
#include "encfs-gpu/inodes.h"
#include "encfs-gpu/kdf.h"
#include "encfs-gpu/keys.h"
#include "encfs-gpu/layout.h"
#include "encfs-gpu/longname.h"
#include "encfs-gpu/name_codec.h"
#include "encfs-gpu/names.h"
#include "encfs-gpu/xts.h"
#include "tap.h"

static uint32_t rnd(void)
{
	uint32_t r;

	RAND_bytes((uint8_t *)&r, sizeof(r));
	return r;
}

static int unhex(const char *s, uint8_t *out)
{
	size_t n = strlen(s) / 2;

	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return (int)n;
}

/* ---------------------------------------------------------------- b64 */

static void test_b64(void)
{
	uint8_t in[100], out[100];
	char txt[200];
	int bad = 0;

	for (size_t n = 0; n < sizeof(in); n++) {
		ssize_t t, d;

		RAND_bytes(in, (int)n);
		t = eg_b64url_encode(in, n, txt, sizeof(txt));
		d = eg_b64url_decode(txt, (size_t)t, out, sizeof(out));
		if (t != (ssize_t)eg_b64_enc_len(n) || d != (ssize_t)n || memcmp(in, out, n) ||
		    strchr(txt, '=') || strchr(txt, '+') || strchr(txt, '/'))
			bad++;
	}
	tap_ok(!bad, "base64url round trip, 0..99 bytes, url alphabet, no padding");
	tap_ok(eg_b64url_decode("QQ", 2, out, sizeof(out)) == 1 && out[0] == 'A' &&
	       eg_b64url_decode("QR", 2, out, sizeof(out)) == -EINVAL &&
	       eg_b64url_decode("QUI", 3, out, sizeof(out)) == 2 &&
	       eg_b64url_decode("QUJ", 3, out, sizeof(out)) == -EINVAL,
	       "base64url refuses non-zero trailing bits (one spelling per byte string)");
	tap_ok(eg_b64url_decode("QUJD=", 5, out, sizeof(out)) == -EINVAL &&
	       eg_b64url_decode("QU+D", 4, out, sizeof(out)) == -EINVAL &&
	       eg_b64url_decode("QU D", 4, out, sizeof(out)) == -EINVAL &&
	       eg_b64url_decode("QUJDR", 5, out, sizeof(out)) == -EINVAL,
	       "base64url refuses padding, '+', spaces, length 1 mod 4");
	tap_ok(eg_b64url_encode(in, 3, txt, 4) == -ENOSPC &&
	       eg_b64url_decode("QUJD", 4, out, 2) == -ENOSPC, "base64url buffer limits");
}

/* ---------------------------------------------------------------- names */

static void test_name_codec(void)
{
	uint8_t buf[300];
	int bad = 0;

	for (size_t n = 0; n <= 255; n++) {
		char name[256];
		ssize_t p;

		memset(name, 'a', n);
		p = eg_name_pad(name, n, buf, sizeof(buf));
		if (p <= (ssize_t)n || p % 16 || p - (ssize_t)n > 16 || eg_name_unpad(buf, (size_t)p) != (ssize_t)n)
			bad++;
	}
	tap_ok(!bad, "name padding: 1..16 bytes to a multiple of 16, and back");
	memcpy(buf, "abc\x0d\x0d\x0d\x0d\x0d\x0d\x0d\x0d\x0d\x0d\x0d\x0c\x0d", 16);
	tap_ok(eg_name_unpad(buf, 16) == -EINVAL && eg_name_unpad(buf, 15) == -EINVAL &&
	       eg_name_unpad(buf, 0) == -EINVAL, "name unpadding refuses bad padding and lengths");
	buf[15] = 0;
	tap_ok(eg_name_unpad(buf, 16) == -EINVAL, "name unpadding refuses a zero pad byte");
	tap_ok(eg_name_valid("a", 1) && !eg_name_valid(".", 1) && !eg_name_valid("..", 2) &&
	       eg_name_valid("...", 3) && !eg_name_valid("a/b", 3) && !eg_name_valid("a\0b", 3) &&
	       !eg_name_valid("", 0), "valid entry names: no '/', NUL, '.', '..', empty");
	tap_ok(eg_cname_is_plain_encrypted("abc-_09") && !eg_cname_is_plain_encrypted(EG_DIRIV_NAME) &&
	       !eg_cname_is_plain_encrypted(EG_CONF_NAME) && !eg_cname_is_plain_encrypted(""),
	       "reserved names can never be encrypted names");
}

static void test_names(void)
{
	uint8_t key[64], iv1[16], iv2[16];
	char c1[EG_CNAME_MAX + 1], c2[EG_CNAME_MAX + 1], out[EG_NAME_MAX + 1];
	char b1[EG_NAME_MAX + 1];
	int bad = 0, longs = 0;

	RAND_bytes(key, sizeof(key));
	RAND_bytes(iv1, sizeof(iv1));
	RAND_bytes(iv2, sizeof(iv2));
	for (int n = 1; n <= 255; n++) {
		char name[256];

		for (int i = 0; i < n; i++)
			name[i] = (char)(1 + rnd() % 255);
		name[n] = '\0';
		for (char *p = name; *p; p++)
			if (*p == '/')
				*p = '_';
		if (!eg_name_valid(name, (size_t)n))
			continue;
		if (eg_name_encrypt(key, iv1, name, c1, sizeof(c1)) < 0 ||
		    eg_name_decrypt(key, iv1, c1, out, sizeof(out)) != n || strcmp(name, out)) {
			bad++;
			continue;
		}
		if (eg_name_encrypt(key, iv1, name, c2, sizeof(c2)) < 0 || strcmp(c1, c2))
			bad++;	/* deterministic */
		if (eg_name_encrypt(key, iv2, name, c2, sizeof(c2)) < 0 || !strcmp(c1, c2))
			bad++;	/* the directory IV matters */
		if (eg_name_decrypt(key, iv2, c1, out, sizeof(out)) != -EBADMSG)
			bad++;	/* and is authenticated */
		if (eg_name_backing(c1, b1, sizeof(b1)) == 1) {
			longs++;
			if (!eg_longname_is_hashed(b1) || eg_longname_verify(b1, c1))
				bad++;
		} else if (strcmp(b1, c1) || strlen(b1) > 255) {
			bad++;
		}
	}
	tap_ok(!bad, "names 1..255 bytes: round trip, deterministic, per-directory, authenticated");
	tap_ok(longs > 0 && longs < 255, "long encrypted names get hashed names (%d of 255)", longs);
	eg_name_encrypt(key, iv1, "hello", c1, sizeof(c1));
	c1[3] ^= 1;
	tap_ok(eg_name_decrypt(key, iv1, c1, out, sizeof(out)) == -EBADMSG,
	       "a modified encrypted name does not decrypt");
	tap_ok(eg_name_encrypt(key, iv1, "a/b", c1, sizeof(c1)) == -EINVAL &&
	       eg_name_encrypt(key, iv1, "..", c1, sizeof(c1)) == -EINVAL,
	       "'/' and '..' are never encrypted");
	{
		char t[EG_SYMLINK_MAX + 2], ct[EG_CTARGET_MAX + 1], back[EG_SYMLINK_MAX + 2];
		ssize_t n;

		memset(t, 'x', EG_SYMLINK_MAX);
		t[EG_SYMLINK_MAX] = '\0';
		n = eg_symlink_encrypt(key, t, ct, sizeof(ct));
		tap_ok(n > 0 && n < 4096 && eg_symlink_decrypt(key, ct, back, sizeof(back)) ==
		       EG_SYMLINK_MAX && !strcmp(t, back), "symlink target of %d bytes fits PATH_MAX",
		       EG_SYMLINK_MAX);
		t[EG_SYMLINK_MAX] = 'x';
		t[EG_SYMLINK_MAX + 1] = '\0';
		tap_ok(eg_symlink_encrypt(key, t, ct, sizeof(ct)) == -ENAMETOOLONG,
		       "longer symlink targets: ENAMETOOLONG");
		eg_symlink_encrypt(key, "../x", ct, sizeof(ct));
		tap_ok(eg_symlink_decrypt(key, ct, back, sizeof(back)) == 4 && !strcmp(back, "../x") &&
		       eg_name_decrypt(key, iv1, ct, out, sizeof(out)) == -EBADMSG,
		       "symlink targets round trip and are not valid names (domain separation)");
	}
}

static void test_longname(void)
{
	uint8_t dig[32];
	char h[EG_LONGNAME_LEN + 1], sc[EG_SIDECAR_LEN + 1], buf[EG_SIDECAR_MAX], cname[EG_CNAME_MAX + 1];
	char longc[301];
	ssize_t n;

	RAND_bytes(dig, sizeof(dig));
	tap_ok(!eg_longname_from_digest(dig, h, sizeof(h)) && eg_longname_is_hashed(h) &&
	       !eg_longname_is_sidecar(h) && !eg_longname_sidecar_name(h, sc, sizeof(sc)) &&
	       eg_longname_is_sidecar(sc) && !eg_longname_is_hashed(sc) && strlen(h) <= 255,
	       "hashed name and sidecar name");
	memset(longc, 'A', 300);
	longc[300] = '\0';
	n = eg_longname_format(longc, buf, sizeof(buf));
	tap_ok(n > 0 && eg_longname_parse(buf, (size_t)n, cname, sizeof(cname)) == 300 &&
	       !strcmp(cname, longc), "sidecar format and parse");
	tap_ok(eg_longname_parse(buf, (size_t)n - 1, cname, sizeof(cname)) == -EINVAL,
	       "a sidecar without its final newline is refused");
	buf[30] = '.';
	tap_ok(eg_longname_parse(buf, (size_t)n, cname, sizeof(cname)) == -EINVAL,
	       "a sidecar with a non-base64url byte is refused");
	tap_ok(eg_longname_format("a.b", buf, sizeof(buf)) == -EINVAL, "only base64url names get sidecars");
}

/* ---------------------------------------------------------------- header, config */

static void test_header(void)
{
	struct eg_file_header h = { 0 }, g;
	uint8_t buf[EG_HDR_USED];

	RAND_bytes(h.file_id, 16);
	RAND_bytes(h.steal, 16);
	RAND_bytes(h.tag, 16);
	eg_header_pack(&h, buf);
	tap_ok(!eg_header_unpack(buf, sizeof(buf), &g) && !memcmp(&h, &g, sizeof(h)),
	       "file header pack/unpack");
	tap_ok(eg_header_unpack(buf, 63, &g) == -EBADMSG, "short header refused");
	buf[0] ^= 1;
	tap_ok(eg_header_unpack(buf, sizeof(buf), &g) == -EBADMSG, "bad magic refused");
	buf[0] ^= 1;
	buf[8] = 2;
	tap_ok(eg_header_unpack(buf, sizeof(buf), &g) == -EBADMSG, "unknown version refused");
	buf[8] = 1;
	buf[13] = 1;
	tap_ok(eg_header_unpack(buf, sizeof(buf), &g) == -EBADMSG, "unknown flags refused");
	buf[13] = 0;
	memset(buf + 16, 0, 16);
	tap_ok(eg_header_unpack(buf, sizeof(buf), &g) == -EBADMSG, "zero file id refused");
}

static void test_config_and_keys(void)
{
	struct eg_config c, d;
	uint8_t m[32], m2[32];
	char text[EG_CONFIG_MAX];
	const char *why;
	ssize_t n;
	int bad_trunc = 0, accepted_flips = 0, wrong_unlocks = 0, flips = 0;
	struct eg_keys k;

	tap_ok(!eg_keys_create("pw", 2, 10, &c, m), "master key created and wrapped (scrypt 2^10)");
	n = eg_config_format(&c, text, sizeof(text));
	tap_ok(n > 0 && !eg_config_parse(text, (size_t)n, &d, &why) && !memcmp(&c, &d, sizeof(c)),
	       "config format/parse round trip");
	tap_ok(!eg_keys_unlock(&d, "pw", 2, m2) && !memcmp(m, m2, 32), "right password unwraps");
	tap_ok(eg_keys_unlock(&d, "pW", 2, m2) == -EKEYREJECTED, "wrong password: -EKEYREJECTED");
	for (ssize_t i = 0; i < n; i++)
		if (!eg_config_parse(text, (size_t)i, &d, &why))
			bad_trunc++;
	tap_ok(!bad_trunc, "every truncation of the config is refused by the parser");
	/* every single-character change: refused by the parser, or by the GCM tag */
	for (ssize_t i = 0; i < n; i++) {
		char t2[EG_CONFIG_MAX];
		static const char subst[] = "0a9f1 \nx";

		for (const char *s = subst; *s; s++) {
			if (text[i] == *s)
				continue;
			memcpy(t2, text, (size_t)n);
			t2[i] = *s;
			flips++;
			if (eg_config_parse(t2, (size_t)n, &d, &why))
				continue;
			accepted_flips++;
			if (eg_keys_unlock(&d, "pw", 2, m2) != -EKEYREJECTED)
				wrong_unlocks++;
		}
	}
	tap_ok(!wrong_unlocks, "all %d one-character edits of the config are refused (%d parse, "
	       "then fail the tag)", flips, accepted_flips);
	tap_ok(!eg_keys_derive(m, &k) && memcmp(k.xts, k.xts + 32, 32) && memcmp(k.xts, k.name, 32) &&
	       memcmp(k.tweak, k.header, 32), "HKDF subkeys are distinct");
	{
		struct eg_config e = c;

		e.logn = 40;
		n = eg_config_format(&e, text, sizeof(text));
		tap_ok(n > 0 && eg_config_parse(text, (size_t)n, &d, &why) == -EINVAL,
		       "an absurd scrypt cost is refused before deriving: %s", why);
	}
	{
		/* the bounds: logn <= 22, r <= 16, p <= 4, each alone */
		static const unsigned int bad[][3] = { { 23, 8, 1 }, { 16, 17, 1 }, { 16, 8, 5 } };
		struct eg_config e = c;
		int refused = 0, at_max;

		for (size_t i = 0; i < 3; i++) {
			e.logn = bad[i][0];
			e.r = bad[i][1];
			e.p = bad[i][2];
			n = eg_config_format(&e, text, sizeof(text));
			refused += n > 0 && eg_config_parse(text, (size_t)n, &d, &why) == -EINVAL;
		}
		e.logn = 22;
		e.r = 16;
		e.p = 4;
		n = eg_config_format(&e, text, sizeof(text));
		at_max = n > 0 && !eg_config_parse(text, (size_t)n, &d, &why);
		tap_ok(refused == 3 && at_max, "scrypt logn 23, r 17, p 5 refused, 22/16/4 parsed");
	}
	eg_wipe(&k, sizeof(k));
}

static void test_kdf(void)
{
	uint8_t out[64], want[64], ikm[22];

	/* RFC 7914 section 12, third vector */
	unhex("fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109"
	      "279d9830dac727afb94a83ee6d8360cbdfa2cc0640", want);
	tap_ok(!eg_scrypt("password", 8, (const uint8_t *)"NaCl", 4, 10, 8, 16, out, 64) &&
	       !memcmp(out, want, 64), "scrypt: RFC 7914 vector (N=1024, r=8, p=16)");
	/* RFC 5869 A.3: SHA-256, no salt, no info */
	memset(ikm, 0x0b, sizeof(ikm));
	unhex("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8",
	      want);
	tap_ok(!eg_hkdf(ikm, sizeof(ikm), "", out, 42) && !memcmp(out, want, 42),
	       "HKDF-SHA-256: RFC 5869 test case 3");
}

/* ---------------------------------------------------------------- layout */

static void test_layout(void)
{
	int bad = 0;

	for (uint64_t s = 0; s < 3 * EG_UNIT + 40; s++) {
		uint64_t n = eg_layout_nunits(s), end = 0;

		for (uint64_t k = 0; k < n; k++) {
			uint32_t len = eg_layout_unit_len(s, k);

			if (eg_layout_unit_start(k) != end || len == 0 || len > EG_UNIT + 15 ||
			    (len < 16 && !eg_layout_tiny(s)) || (k + 1 < n && len != EG_UNIT))
				bad++;
			end += len;
		}
		if (end != s || eg_layout_unit_len(s, n) != 0)
			bad++;
		for (uint64_t off = 0; off < s; off += 7) {
			uint64_t k = eg_layout_unit_of(s, off);

			if (off < eg_layout_unit_start(k) || off >= eg_layout_unit_end(s, k))
				bad++;
		}
	}
	tap_ok(!bad, "layout: units tile [0, size), each >= 16 bytes (but tiny files), at 4 KiB "
	       "boundaries, last <= 4111 bytes");
}

/* ---------------------------------------------------------------- contents */

struct ctx {
	struct eg_keys keys;
	struct eg_backend *be;
	struct eg_contents c;
};

static int ctx_init(struct ctx *x)
{
	uint8_t m[32];

	RAND_bytes(m, sizeof(m));
	if (eg_keys_derive(m, &x->keys) || eg_backend_cpu_new(x->keys.xts, &x->be))
		return -1;
	eg_contents_init(&x->c, &x->keys, x->be);
	return 0;
}

static void ctx_fini(struct ctx *x)
{
	eg_contents_fini(&x->c);
	eg_backend_destroy(x->be);
}

static int tmpfile_fd(char *path)
{
	strcpy(path, "/tmp/encfs-unit-XXXXXX");
	return mkstemp(path);
}

static int check_file(const struct ctx *x, int fd, struct eg_fstate *st, const uint8_t *model,
		      size_t size)
{
	uint8_t *buf = malloc(size + 100);
	uint64_t s;
	ssize_t n;
	int ok;

	ok = !eg_file_size(fd, &s, NULL) && s == size;
	n = eg_file_read(&x->c, fd, st, buf, size + 100, 0);
	ok = ok && n == (ssize_t)size && !memcmp(buf, model, size);
	free(buf);
	return ok;
}

static void test_contents_model(void)
{
	enum { MAXSZ = 40000, OPS = 3000 };
	struct ctx x;
	struct eg_fstate st = { 0 };
	uint8_t *model = calloc(1, MAXSZ * 2), *buf = malloc(MAXSZ);
	size_t size = 0;
	char path[64];
	int fd, bad = 0, op;

	if (ctx_init(&x)) {
		tap_ok(0, "contents setup");
		return;
	}
	fd = tmpfile_fd(path);
	for (op = 0; op < OPS && !bad; op++) {
		uint32_t r = rnd();
		/* sizes around the interesting boundaries: 0..15, 4096 +- 16, ... */
		uint64_t off = (r & 1) ? rnd() % MAXSZ : (rnd() % 9) * 4096 + rnd() % 33 - 16;
		size_t len = (r & 2) ? rnd() % 20 : rnd() % 9000;

		if (off > MAXSZ)
			off = rnd() % 16;
		if (off + len > MAXSZ)
			len = MAXSZ - off;
		switch (r % 5) {
		case 0: case 1:	/* write */
			RAND_bytes(buf, (int)len);
			if (getenv("UT_TRACE"))
				tap_diag("write %zu @ %llu (size %zu)", len, (unsigned long long)off, size);
			if (eg_file_write(&x.c, fd, &st, buf, len, off) != (ssize_t)len) {
				bad = 1;
				break;
			}
			memcpy(model + off, buf, len);
			if (len && off + len > size)	/* an empty write extends nothing */
				size = off + len;
			break;
		case 2:	/* truncate */
			if (getenv("UT_TRACE"))
				tap_diag("truncate %llu (size %zu)", (unsigned long long)off, size);
			if (eg_file_truncate(&x.c, fd, &st, off)) {
				bad = 2;
				break;
			}
			if (off > size)
				memset(model + size, 0, off - size);
			else
				memset(model + off, 0, size - off);
			size = off;
			break;
		case 3: {	/* read at random */
			ssize_t want = off >= size ? 0 : (ssize_t)(len < size - off ? len : size - off);

			if (eg_file_read(&x.c, fd, &st, buf, len, off) != want ||
			    memcmp(buf, model + off, (size_t)want))
				bad = 3;
			break;
		}
		default:	/* whole-file check, with a cold header cache */
			st.have_hdr = 0;
			if (size && eg_file_load_header(&x.c, fd, &st))
				bad = 4;
			else if (!check_file(&x, fd, &st, model, size))
				bad = 5;
		}
	}
	if (bad)
		tap_diag("op %d failed (kind %d), size %zu", op, bad, size);
	tap_ok(!bad, "contents: %d random writes/truncates/reads vs an in-memory model (%s)", op,
	       bad ? "failed" : "all equal");
	close(fd);
	unlink(path);
	free(model);
	free(buf);
	ctx_fini(&x);
}

/*
 * A write that fails leaves the file as it was: one ending past what the
 * backing file can hold is refused before anything is written, and one
 * that fails part-way (here: past RLIMIT_FSIZE, after the old tail was
 * re-encrypted for the new size) puts the old tail and size back.
 */
static void test_contents_failed_write(void)
{
	struct ctx x;
	struct eg_fstate st = { 0 };
	uint8_t model[100], buf[16] = { 1 };
	struct rlimit old, lim;
	ssize_t n1, n2;
	char path[64];
	int fd, t;

	if (ctx_init(&x)) {
		tap_ok(0, "contents: failed-write setup");
		return;
	}
	fd = tmpfile_fd(path);
	RAND_bytes(model, sizeof(model));
	eg_file_write(&x.c, fd, &st, model, sizeof(model), 0);
	n1 = eg_file_write(&x.c, fd, &st, buf, 1, (uint64_t)INT64_MAX - 100);
	tap_ok(n1 == -EFBIG && check_file(&x, fd, &st, model, sizeof(model)),
	       "contents: a write ending near INT64_MAX is refused up front (%zd), file unchanged",
	       n1);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = 1 << 20;
	setrlimit(RLIMIT_FSIZE, &lim);
	n2 = eg_file_write(&x.c, fd, &st, buf, sizeof(buf), 2 << 20);
	t = eg_file_truncate(&x.c, fd, &st, 2 << 20);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, SIG_DFL);
	st.have_hdr = 0;
	tap_ok(n2 == -EFBIG && t == -EFBIG && !eg_file_load_header(&x.c, fd, &st) &&
	       check_file(&x, fd, &st, model, sizeof(model)),
	       "contents: a growing write (%zd) or truncate (%d) that fails keeps the old size "
	       "and contents", n2, t);
	close(fd);
	unlink(path);
	ctx_fini(&x);
}

static void test_contents_format(void)
{
	struct ctx x;
	struct eg_fstate st = { 0 }, st2 = { 0 };
	uint8_t buf[70000], back[70000], fid[16], hdr[EG_HDR_USED];
	char path[64];
	struct stat sb;
	int fd;

	if (ctx_init(&x))
		return;
	fd = tmpfile_fd(path);
	/* an empty file is an empty backing file */
	tap_ok(!fstat(fd, &sb) && sb.st_size == 0, "empty file: empty backing file");
	/* 1:1 sizes, header 4096 */
	memset(buf, 'P', sizeof(buf));
	eg_file_write(&x.c, fd, &st, buf, 5, 0);
	fstat(fd, &sb);
	tap_ok(sb.st_size == EG_HDR_SIZE + 5, "a 5-byte file: 4096 + 5 backing bytes (tiny layout)");
	tap_ok(eg_file_read(&x.c, fd, &st, back, 100, 0) == 5 && !memcmp(back, buf, 5),
	       "tiny file reads back");
	pread(fd, hdr, sizeof(hdr), 0);
	tap_ok(memcmp(hdr + EG_HDR_OFF_STEAL, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16) != 0,
	       "tiny file: the first ciphertext block is in the steal slot");
	eg_file_write(&x.c, fd, &st, buf, sizeof(buf), 0);
	fstat(fd, &sb);
	tap_ok(sb.st_size == EG_HDR_SIZE + (off_t)sizeof(buf), "ciphertext size == plaintext size + 4096");
	pread(fd, hdr, sizeof(hdr), 0);
	tap_ok(!memcmp(hdr + EG_HDR_OFF_STEAL, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16),
	       "steal slot cleared once the file is 16 bytes or more");
	{
		/* no 16-byte plaintext block appears in the ciphertext, and
		 * equal plaintext units encrypt differently */
		uint8_t *ct = malloc(sizeof(buf));
		int found = 0;

		pread(fd, ct, sizeof(buf), EG_HDR_SIZE);
		for (size_t i = 0; i + 16 <= sizeof(buf); i++)
			if (!memcmp(ct + i, buf, 16))
				found++;
		tap_ok(!found && memcmp(ct, ct + 4096, 4096) && memcmp(ct, ct + 16, 16),
		       "ciphertext holds no plaintext run; equal units and blocks differ");
		free(ct);
	}
	memcpy(fid, st.fid, 16);
	eg_file_truncate(&x.c, fd, &st, 0);
	fstat(fd, &sb);
	tap_ok(sb.st_size == 0 && !st.have_hdr, "truncate to 0 drops the header");
	eg_file_write(&x.c, fd, &st, buf, 100, 0);
	tap_ok(st.have_hdr && memcmp(fid, st.fid, 16), "the next write draws a new file id");
	/* sparse write: the gap stays a hole and reads as zeros */
	eg_file_write(&x.c, fd, &st, buf, 10, 1 << 20);
	{
		uint8_t z[4096], c4[4096];
		int ok = eg_file_read(&x.c, fd, &st, back, 4096, 512 * 1024) == 4096;

		memset(z, 0, sizeof(z));
		pread(fd, c4, sizeof(c4), EG_HDR_SIZE + 512 * 1024);
		tap_ok(ok && !memcmp(back, z, 4096) && !memcmp(c4, z, 4096),
		       "sparse write: the gap is a hole in the backing file and reads as zeros");
	}
	/* a damaged header: EIO, never garbage */
	pread(fd, hdr, sizeof(hdr), 0);
	hdr[EG_HDR_OFF_FID] ^= 1;
	pwrite(fd, hdr, sizeof(hdr), 0);
	tap_ok(eg_file_load_header(&x.c, fd, &st2) == -EIO, "a modified file id fails the header tag: EIO");
	hdr[EG_HDR_OFF_FID] ^= 1;
	pwrite(fd, hdr, sizeof(hdr), 0);
	tap_ok(!eg_file_load_header(&x.c, fd, &st2) && !memcmp(st2.fid, st.fid, 16), "restored header loads");
	ftruncate(fd, 100);
	{
		uint64_t s;

		tap_ok(eg_file_size(fd, &s, NULL) == -EIO, "a backing file shorter than the header: EIO");
	}
	{
		/* another volume's key: the header tag fails */
		struct ctx y;
		struct eg_fstate st3 = { 0 };

		eg_file_truncate(&x.c, fd, &st, 0);
		eg_file_write(&x.c, fd, &st, buf, 5000, 0);
		ctx_init(&y);
		tap_ok(eg_file_load_header(&y.c, fd, &st3) == -EIO,
		       "a file from another volume (other key) is refused: EIO");
		ctx_fini(&y);
	}
	close(fd);
	unlink(path);
	ctx_fini(&x);
}

static void test_tweaks(void)
{
	struct ctx x;
	uint8_t base1[16], base2[16], t[16 * 64], t2[16 * 64];
	int bad = 0;

	if (ctx_init(&x))
		return;
	RAND_bytes(base1, 16);
	memcpy(base2, base1, 16);
	base2[0] ^= 1;
	eg_tweaks(&x.c, base1, 0, 64, t);
	for (int i = 0; i < 64; i++)
		for (int j = i + 1; j < 64; j++)
			if (!memcmp(t + 16 * i, t + 16 * j, 16))
				bad++;
	eg_tweaks(&x.c, base2, 1, 63, t2);
	/* the structure "base XOR k" does not carry over: (base1, 1) != (base1 ^ 1, 0) */
	if (!memcmp(t + 16, t2 + 0, 16) || !memcmp(t, t2 + 16, 16))
		bad++;
	for (int i = 0; i < 64; i++)
		if (!memcmp(t + 16 * i, base1, 16))
			bad++;
	tap_ok(!bad, "tweaks: distinct per unit and per file, not base XOR index");
	ctx_fini(&x);
}

/* ---------------------------------------------------------------- backends */

struct fake {
	struct eg_backend be;
	struct eg_backend *real;
	double fixed_us, ns_per_byte;
	int calls, fail;
};

static void spin_us(double us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3 < us);
}

static int fake_crypt(struct eg_backend *be, int enc, const struct eg_xts_req *r)
{
	struct fake *f = (struct fake *)be;

	f->calls++;
	spin_us(f->fixed_us + f->ns_per_byte * (double)eg_xts_req_bytes(r) / 1000);
	if (f->fail)
		return -EIO;
	return eg_backend_crypt(f->real, enc, r);
}

static void fake_destroy(struct eg_backend *be)
{
	struct fake *f = (struct fake *)be;

	eg_backend_destroy(f->real);
}

static const struct eg_backend_ops fake_ops = {
	.name = "fake", .crypt = fake_crypt, .destroy = fake_destroy,
};

static void test_backends(void)
{
	uint8_t key[64], buf[8192], ref[8192], tw[32];
	struct fake cpu = { .be.ops = &fake_ops, .ns_per_byte = 4 };
	struct fake gpu = { .be.ops = &fake_ops, .fixed_us = 500, .ns_per_byte = 0.2 };
	struct eg_backend *a;
	struct eg_xts_req r = { .data = buf, .tweaks = tw, .nunits = 2, .unit_len = 4096,
				.last_len = 4096 };
	const char *why;
	size_t x;

	RAND_bytes(key, sizeof(key));
	RAND_bytes(tw, sizeof(tw));
	tap_ok(eg_backend_open("gpu", key, 0, &a, &why) == -ENODEV && why,
	       "gpu backend unavailable without ptaskd: %s", why);
	tap_ok(!eg_backend_open("auto", key, 0, &a, &why) && !strcmp(a->ops->name, "cpu"),
	       "auto without a gpu is the cpu backend");
	eg_backend_destroy(a);
	tap_ok(eg_backend_open("tpu", key, 0, &a, &why) == -EINVAL, "unknown backend refused");
	{
		struct eg_xts_req bad = r;

		bad.unit_len = 4008;
		tap_ok(eg_xts_req_check(&bad) == -EINVAL, "units that are not whole blocks are refused");
		bad = r;
		bad.last_len = 15;
		tap_ok(eg_xts_req_check(&bad) == -EINVAL, "a last unit under 16 bytes is refused");
	}
	/* auto with two fakes: cpu 4 ns/B, gpu 500 us + 0.2 ns/B: the gpu wins from 256 KiB */
	eg_backend_cpu_new(key, &cpu.real);
	eg_backend_cpu_new(key, &gpu.real);
	if (eg_backend_auto_new(&cpu.be, &gpu.be, &a)) {
		tap_ok(0, "auto backend");
		return;
	}
	x = eg_backend_auto_crossover(a);
	tap_ok(x == 256 * 1024, "auto measured the crossover: %zu bytes (expected 256 KiB)", x);
	cpu.calls = gpu.calls = 0;
	RAND_bytes(buf, sizeof(buf));
	memcpy(ref, buf, sizeof(buf));
	eg_backend_crypt(a, 1, &r);
	tap_ok(cpu.calls == 1 && gpu.calls == 0, "a small request goes to the cpu");
	{
		static uint8_t big[1 << 20], tws[16 * 256];
		struct eg_xts_req rb = { .data = big, .tweaks = tws, .nunits = 256, .unit_len = 4096,
					 .last_len = 4096 };

		eg_backend_crypt(a, 1, &rb);
		tap_ok(gpu.calls == 1, "a 1 MiB request goes to the gpu");
		gpu.fail = 1;
		tap_ok(!eg_backend_crypt(a, 0, &rb) && gpu.calls == 2 && cpu.calls == 2,
		       "a failing gpu falls back to the cpu");
		gpu.fail = 0;
	}
	eg_backend_crypt(a, 0, &r);
	tap_ok(!memcmp(buf, ref, sizeof(buf)), "auto round trip");
	eg_backend_destroy(a);
}

static void test_inodes(void)
{
	struct eg_inode *a = eg_inode_get(1, 2), *b = eg_inode_get(1, 2), *c = eg_inode_get(1, 3);

	tap_ok(a && a == b && a != c && eg_inodes_in_use() == 2, "one inode entry per (dev, ino)");
	eg_inode_put(a);
	eg_inode_put(b);
	eg_inode_put(c);
	tap_ok(eg_inodes_in_use() == 0, "entries freed with their last reference");
}

int main(void)
{
	test_b64();
	test_name_codec();
	test_names();
	test_longname();
	test_header();
	test_config_and_keys();
	test_kdf();
	test_layout();
	test_contents_model();
	test_contents_format();
	test_contents_failed_write();
	test_tweaks();
	test_backends();
	test_inodes();
	return tap_done();
}
