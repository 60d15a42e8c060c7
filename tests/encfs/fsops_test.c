// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fsops_test.c - every file operation on an encfs-gpu mount, compared
 * with the same operation on a plain directory.
 *
 *   fsops_test MOUNT PLAIN      run the cases under both, compare (TAP)
 *   fsops_test tree DIR         print a canonical dump of DIR (names,
 *                               types, modes, owners, sizes, link counts,
 *                               symlink targets, xattrs, content hashes)
 *
 * Each case runs in its own subdirectory of each root and writes a log of
 * everything observable (return values, errno names, stat fields,
 * contents, listings); a case passes when both logs are equal.  What may
 * rightly differ (inode numbers, block counts, times not set explicitly,
 * statfs figures) is not logged.  Data comes from a seeded generator, so
 * both sides see the same bytes.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "tap.h"

/* ---------------------------------------------------------------- log */

static char *lg;
static size_t lg_len, lg_cap;

__attribute__((format(printf, 1, 2)))
static void rec(const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(lg + lg_len, lg_cap - lg_len, fmt, ap);
		va_end(ap);
		if (lg_len + (size_t)n + 2 < lg_cap)
			break;
		lg_cap = lg_cap * 2 + (size_t)n + 4096;
		lg = realloc(lg, lg_cap);
	}
	lg_len += (size_t)n;
	lg[lg_len++] = '\n';
	lg[lg_len] = '\0';
}

/* a syscall's result: value, or -1 and the errno name */
static long R(const char *what, long ret)
{
	if (ret < 0)
		rec("%s = -1 %s", what, strerrorname_np(errno) ?: "?");
	else
		rec("%s = %ld", what, ret);
	return ret;
}

static uint64_t fnv(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 1469598103934665603ull;

	while (n--)
		h = (h ^ *b++) * 1099511628211ull;
	return h;
}

static uint64_t rng_state;

static void seed(uint64_t s)
{
	rng_state = s * 0x9E3779B97F4A7C15ull + 1;
}

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

static void rec_stat(const char *what, const char *path, int follow)
{
	struct stat st;

	if ((follow ? stat(path, &st) : lstat(path, &st)) < 0) {
		rec("stat %s = -1 %s", what, strerrorname_np(errno));
		return;
	}
	rec("stat %s: mode %o nlink %lu uid %u gid %u size %lld", what, st.st_mode,
	    (unsigned long)st.st_nlink, st.st_uid, st.st_gid,
	    S_ISDIR(st.st_mode) ? -1LL : (long long)st.st_size);
}

static void rec_content(const char *what, const char *path)
{
	int fd = open(path, O_RDONLY);
	uint8_t *buf;
	struct stat st;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st)) {
		rec("content %s: open -1 %s", what, strerrorname_np(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	buf = malloc((size_t)st.st_size + 1);
	n = pread(fd, buf, (size_t)st.st_size + 1, 0);
	rec("content %s: size %lld read %zd hash %016llx", what, (long long)st.st_size, n,
	    (unsigned long long)fnv(buf, n > 0 ? (size_t)n : 0));
	free(buf);
	close(fd);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void rec_listing(const char *what, const char *dir)
{
	DIR *d = opendir(dir);
	char *names[4096];
	int n = 0;
	struct dirent *de;

	if (!d) {
		rec("list %s = -1 %s", what, strerrorname_np(errno));
		return;
	}
	while ((de = readdir(d)) && n < 4096)
		names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), cmp_str);
	rec("list %s: %d entries", what, n);
	for (int i = 0; i < n; i++) {
		rec("  %s", names[i]);
		free(names[i]);
	}
}

static int write_file(const char *path, size_t size, uint64_t s)
{
	uint8_t *buf = malloc(size + 1);
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
	ssize_t n;

	seed(s);
	fill(buf, size);
	if (fd < 0) {
		free(buf);
		return -1;
	}
	n = write(fd, buf, size);
	close(fd);
	free(buf);
	return n == (ssize_t)size ? 0 : -1;
}

/* ---------------------------------------------------------------- cases */

static void c_create(void)
{
	int fd = (int)R("open excl", open("f", O_CREAT | O_EXCL | O_RDWR, 0640));
	char buf[16] = "";

	R("write", write(fd, "hello", 5));
	R("pread", pread(fd, buf, sizeof(buf), 0));
	rec("data %.5s", buf);
	R("pread past eof", pread(fd, buf, sizeof(buf), 100));
	R("close", close(fd));
	rec_stat("f", "f", 0);
	R("open excl again", open("f", O_CREAT | O_EXCL | O_RDWR, 0640));
	R("open missing", open("nope", O_RDONLY));
	fd = (int)R("creat", open("g", O_CREAT | O_WRONLY, 0600));
	R("read on O_WRONLY", read(fd, buf, 1));
	close(fd);
	rec_stat("g", "g", 0);
}

static void c_sizes(void)
{
	static const size_t sizes[] = { 0, 1, 5, 15, 16, 17, 31, 32, 33, 4095, 4096, 4097, 4100,
					4111, 4112, 4113, 8191, 8192, 8193, 8207, 8208, 65536,
					100000, 1048576, 1048577, 3 << 20 };
	char name[32];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		snprintf(name, sizeof(name), "s%zu", sizes[i]);
		R(name, write_file(name, sizes[i], i));
		rec_content(name, name);
	}
	rec_listing(".", ".");
}

static void c_sparse(void)
{
	int fd = open("sp", O_CREAT | O_RDWR, 0644);

	R("pwrite at 1M", pwrite(fd, "0123456789", 10, 1 << 20));
	R("pwrite at 5000", pwrite(fd, "abc", 3, 5000));
	R("pwrite at 3", pwrite(fd, "z", 1, 3));
	close(fd);
	rec_content("sp", "sp");
	fd = open("tail", O_CREAT | O_RDWR, 0644);
	R("write 100", write(fd, "0123456789012345678901234567890123456789012345678901234567890123"
			   "456789012345678901234567890123456789", 100));
	R("pwrite past eof", pwrite(fd, "x", 1, 9000));
	R("pwrite 4099", pwrite(fd, "yy", 2, 4099));
	close(fd);
	rec_content("tail", "tail");
	fd = open("tiny", O_CREAT | O_RDWR, 0644);
	R("pwrite at 7", pwrite(fd, "q", 1, 7));
	close(fd);
	rec_content("tiny", "tiny");
}

static void c_truncate(void)
{
	static const off_t steps[] = { 10000, 5, 0, 17, 4096, 4100, 8200, 15, 4111, 1 << 20, 3,
				       100000, 4095, 0, 64 };
	int fd;

	R("write", write_file("t", 12345, 7));
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		char w[32];

		snprintf(w, sizeof(w), "truncate %lld", (long long)steps[i]);
		R(w, truncate("t", steps[i]));
		rec_content(w, "t");
	}
	fd = open("t", O_RDWR);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		char w[32];

		snprintf(w, sizeof(w), "ftruncate %lld", (long long)steps[i]);
		R(w, ftruncate(fd, steps[i]));
		R("pwrite", pwrite(fd, "ab", 2, steps[i] / 2));
		rec_content(w, "t");
	}
	R("ftruncate -1", ftruncate(fd, -1));
	close(fd);
	R("truncate dir", truncate(".", 0));
	R("truncate missing", truncate("none", 0));
}

static void c_append_trunc(void)
{
	int fd;

	R("write", write_file("a", 5000, 3));
	fd = open("a", O_WRONLY | O_APPEND);
	R("append", write(fd, "APPENDED", 8));
	R("append again", write(fd, "!", 1));
	close(fd);
	rec_content("a", "a");
	fd = open("a", O_RDWR | O_TRUNC);
	rec_stat("after O_TRUNC", "a", 0);
	R("write", write(fd, "new", 3));
	close(fd);
	rec_content("a", "a");
}

static void c_rename(void)
{
	int fd;

	mkdir("d1", 0755);
	mkdir("d2", 0755);
	write_file("d1/x", 6000, 1);
	write_file("d2/y", 300, 2);
	R("rename same dir", rename("d1/x", "d1/x2"));
	R("rename across", rename("d1/x2", "d2/x"));
	R("rename over existing", rename("d2/x", "d2/y"));
	rec_content("d2/y", "d2/y");
	rec_listing("d1", "d1");
	rec_listing("d2", "d2");
	mkdir("d1/sub", 0700);
	write_file("d1/sub/deep", 10, 3);
	R("rename dir", rename("d1", "d3"));
	rec_content("d3/sub/deep", "d3/sub/deep");
	R("rename dir into dir", rename("d3", "d2/d3"));
	rec_content("d2/d3/sub/deep", "d2/d3/sub/deep");
	mkdir("empty", 0755);
	write_file("empty-probe", 1, 1);
	R("rename empty dir onto itself", rename("empty", "empty"));
	R("rename file into the dir after that", rename("empty-probe", "empty/probe"));
	rec_listing("empty", "empty");
	R("unlink probe", unlink("empty/probe"));
	R("rename dir over empty dir", rename("d2/d3", "empty"));
	rec_content("empty/sub/deep", "empty/sub/deep");
	mkdir("full", 0755);
	write_file("full/f", 1, 4);
	R("rename dir over non-empty dir", rename("empty", "full"));
	R("rename dir into itself", rename("full", "full/inside"));
	R("rename file over dir", rename("d2/y", "full"));
	R("rename dir over file", rename("full", "d2/y"));
	R("rename missing", rename("nothing", "x"));
	write_file("p", 5, 5);
	write_file("q", 7, 6);
	R("noreplace", renameat2(AT_FDCWD, "p", AT_FDCWD, "q", RENAME_NOREPLACE));
	R("exchange", renameat2(AT_FDCWD, "p", AT_FDCWD, "q", RENAME_EXCHANGE));
	rec_content("p", "p");
	rec_content("q", "q");
	R("link", link("p", "p2"));
	R("rename onto own link", rename("p", "p2"));
	rec_listing(".", ".");
	/* an open file renamed keeps working */
	fd = open("q", O_RDWR);
	R("rename open", rename("q", "q3"));
	R("write after rename", pwrite(fd, "after", 5, 0));
	close(fd);
	rec_content("q3", "q3");
}

static void c_unlink_rmdir(void)
{
	char buf[8] = "";
	int fd;

	write_file("u", 9000, 8);
	R("unlink", unlink("u"));
	R("unlink again", unlink("u"));
	rec_stat("u", "u", 0);
	write_file("open", 5000, 9);
	fd = open("open", O_RDWR);
	R("unlink open file", unlink("open"));
	R("read unlinked", pread(fd, buf, 4, 4090));
	R("write unlinked", pwrite(fd, "zz", 2, 6000));
	R("ftruncate unlinked", ftruncate(fd, 100));
	{
		struct stat st;

		/* nlink is not compared: high-level FUSE keeps an unlinked open
		 * file as .fuse_hidden* (nlink 1) until its last close */
		R("fstat unlinked", fstat(fd, &st));
		rec("size %lld", (long long)st.st_size);
	}
	close(fd);
	R("mkdir", mkdir("dd", 0755));
	R("mkdir again", mkdir("dd", 0755));
	R("mkdir nested", mkdir("dd/e", 0711));
	R("mkdir in missing", mkdir("nope/e", 0755));
	rec_stat("dd/e", "dd/e", 0);
	R("rmdir non-empty", rmdir("dd"));
	R("rmdir nested", rmdir("dd/e"));
	R("rmdir", rmdir("dd"));
	write_file("file", 1, 1);
	R("rmdir file", rmdir("file"));
	R("unlink dir", unlink("."));
	mkdir("dd2", 0755);
	R("unlink a dir", unlink("dd2"));
	rec_listing(".", ".");
}

static void c_readdir(void)
{
	char name[300];
	int n = 0;

	/* names with every kind of byte a name may hold, and long ones */
	for (int i = 0; i < 60; i++) {
		size_t len = 1 + rnd() % (i < 40 ? 30 : 255);

		for (size_t k = 0; k < len; k++) {
			uint8_t c = (uint8_t)(1 + rnd() % 255);

			name[k] = (char)(c == '/' ? '_' : c);
		}
		name[len] = '\0';
		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		if (write_file(name, rnd() % 100, (uint64_t)i) == 0)
			n++;
	}
	rec("created %d", n);
	mkdir("a dir with spaces", 0755);
	write_file("ünïcödé ✓", 3, 1);
	write_file(".hidden", 3, 1);
	write_file("encfs-gpu.conf", 3, 1);
	write_file("encfs-gpu.diriv", 3, 1);
	rec_listing(".", ".");
	rec_content("encfs-gpu.diriv", "encfs-gpu.diriv");
}

static void c_symlink(void)
{
	char buf[4200], target[3100];
	ssize_t n;

	R("symlink rel", symlink("target", "l1"));
	R("symlink abs", symlink("/etc/hostname", "l2"));
	R("symlink dangling", symlink("../../nowhere/at/all", "l3"));
	memset(target, 't', 3000);
	target[3000] = '\0';
	R("symlink 3000-byte target", symlink(target, "l4"));
	R("symlink exists", symlink("x", "l1"));
	for (int i = 1; i <= 4; i++) {
		char l[8];

		snprintf(l, sizeof(l), "l%d", i);
		n = readlink(l, buf, sizeof(buf));
		rec("readlink %s = %zd %016llx", l, n, (unsigned long long)fnv(buf, n > 0 ? (size_t)n : 0));
		rec_stat(l, l, 0);
	}
	write_file("target", 77, 5);
	rec_content("via link", "l1");
	rec_stat("follow", "l1", 1);
	mkdir("dir", 0755);
	write_file("dir/in", 5, 6);
	R("symlink to dir", symlink("dir", "ldir"));
	rec_content("through dir link", "ldir/in");
	R("unlink link", unlink("l1"));
	rec_stat("target still", "target", 0);
	n = readlink("target", buf, sizeof(buf));
	rec("readlink on file = %zd %s", n, n < 0 ? strerrorname_np(errno) : "");
}

static void c_link(void)
{
	int fd;

	write_file("h1", 5000, 11);
	R("link", link("h1", "h2"));
	R("link exists", link("h1", "h2"));
	R("link missing", link("none", "h3"));
	rec_stat("h1", "h1", 0);
	rec_stat("h2", "h2", 0);
	fd = open("h2", O_RDWR);
	R("write via h2", pwrite(fd, "LINKED", 6, 4093));
	close(fd);
	rec_content("h1 after write via h2", "h1");
	mkdir("sub", 0755);
	R("link across dirs", link("h1", "sub/h3"));
	rec_stat("h1", "h1", 0);
	R("unlink h1", unlink("h1"));
	rec_stat("h2", "h2", 0);
	rec_content("sub/h3", "sub/h3");
	R("truncate h2", truncate("h2", 10));
	rec_content("sub/h3 after truncate via h2", "sub/h3");
	R("link a dir", link("sub", "sub2"));
}

static void c_attrs(void)
{
	struct timespec ts[2] = { { 1000000000, 123456789 }, { 1200000000, 987654321 } };
	struct stat st;
	int fd;

	write_file("m", 10, 1);
	static const mode_t modes[] = { 0, 0400, 0644, 0755, 01777, 04755, 02755, 07777, 0600 };

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		char w[32];

		snprintf(w, sizeof(w), "chmod %o", modes[i]);
		R(w, chmod("m", modes[i]));
		rec_stat(w, "m", 0);
	}
	R("chown", chown("m", 1234, 5678));
	rec_stat("chown", "m", 0);
	R("chown -1", chown("m", (uid_t)-1, 42));
	rec_stat("chown gid", "m", 0);
	symlink("m", "lm");
	R("lchown", lchown("lm", 77, 88));
	rec_stat("lchown link", "lm", 0);
	rec_stat("lchown target", "m", 0);
	R("utimensat", utimensat(AT_FDCWD, "m", ts, 0));
	stat("m", &st);
	rec("times %lld.%09ld %lld.%09ld", (long long)st.st_atim.tv_sec, st.st_atim.tv_nsec,
	    (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1].tv_sec = 1300000000;
	R("utimensat omit", utimensat(AT_FDCWD, "m", ts, 0));
	stat("m", &st);
	rec("times %lld.%09ld %lld.%09ld", (long long)st.st_atim.tv_sec, st.st_atim.tv_nsec,
	    (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	R("lutimes", utimensat(AT_FDCWD, "lm", ts, AT_SYMLINK_NOFOLLOW));
	lstat("lm", &st);
	rec("link mtime %lld", (long long)st.st_mtim.tv_sec);
	chmod("m", 0644);
	fd = open("m", O_RDWR);
	R("fchmod", fchmod(fd, 0640));
	R("futimens", futimens(fd, ts));
	R("fsync", fsync(fd));
	R("fdatasync", fdatasync(fd));
	close(fd);
	rec_stat("after fchmod", "m", 0);
	mkdir("dm", 0700);
	R("chmod dir", chmod("dm", 0751));
	rec_stat("dir", "dm", 0);
	{
		struct statvfs sv;

		R("statvfs", statvfs(".", &sv));
		rec("statvfs bsize>0 %d namemax>=255 %d", sv.f_bsize > 0, sv.f_namemax >= 255);
	}
	R("mkfifo", mkfifo("fifo", 0644));
	rec_stat("fifo", "fifo", 0);
	R("mknod reg", mknod("reg", S_IFREG | 0600, 0));
	rec_stat("reg", "reg", 0);
}

static void c_xattr(void)
{
	char buf[256];
	ssize_t n;

	write_file("x", 10, 1);
	R("setxattr", setxattr("x", "user.one", "1", 1, 0));
	R("setxattr 2", setxattr("x", "user.two", "second value", 12, 0));
	R("setxattr create existing", setxattr("x", "user.one", "1", 1, XATTR_CREATE));
	R("setxattr replace missing", setxattr("x", "user.three", "3", 1, XATTR_REPLACE));
	n = getxattr("x", "user.two", buf, sizeof(buf));
	rec("getxattr = %zd %.*s", n, n > 0 ? (int)n : 0, buf);
	R("getxattr size", getxattr("x", "user.two", NULL, 0));
	R("getxattr small buffer", getxattr("x", "user.two", buf, 2));
	R("getxattr missing", getxattr("x", "user.nope", buf, sizeof(buf)));
	n = listxattr("x", buf, sizeof(buf));
	{
		/* order is the backing fs's; sort the names */
		char *names[16];
		int k = 0;

		for (ssize_t i = 0; i < n && k < 16; i += (ssize_t)strlen(buf + i) + 1)
			names[k++] = buf + i;
		qsort(names, (size_t)k, sizeof(names[0]), cmp_str);
		rec("listxattr %zd:", n);
		for (int i = 0; i < k; i++)
			rec("  %s", names[i]);
	}
	R("removexattr", removexattr("x", "user.one"));
	R("removexattr again", removexattr("x", "user.one"));
	mkdir("xd", 0755);
	R("setxattr dir", setxattr("xd", "user.d", "dir", 3, 0));
	n = getxattr("xd", "user.d", buf, sizeof(buf));
	rec("getxattr dir = %zd", n);
}

static void c_longnames(void)
{
	char n1[256], n2[256], d[256], p[600];

	memset(n1, 'a', 255);
	n1[255] = '\0';
	memset(n2, 'b', 255);
	n2[255] = '\0';
	memset(d, 'D', 200);
	d[200] = '\0';
	R("create 255", write_file(n1, 5000, 3));
	rec_stat("255", n1, 0);
	rec_content("255", n1);
	R("rename 255 -> 255", rename(n1, n2));
	rec_stat("old", n1, 0);
	R("link back", link(n2, n1));
	rec_stat("n2", n2, 0);
	R("mkdir 200", mkdir(d, 0755));
	snprintf(p, sizeof(p), "%s/%s", d, n1);
	R("file in long dir", write_file(p, 100, 4));
	rec_content("in long dir", p);
	rec_listing(".", ".");
	rec_listing("long dir", d);
	R("rmdir non-empty long", rmdir(d));
	R("unlink in long", unlink(p));
	R("rmdir long", rmdir(d));
	R("unlink 255", unlink(n2));
	R("symlink 255", symlink("t", n2));
	{
		char big[300];

		memset(big, 'c', 256);
		big[256] = '\0';
		R("create 256", open(big, O_CREAT | O_WRONLY, 0644));
		R("mkdir 256", mkdir(big, 0755));
	}
	rec_listing(". after", ".");
}

static void c_mmap(void)
{
	int fd = open("mm", O_CREAT | O_RDWR, 0644);
	uint8_t *p;

	R("ftruncate", ftruncate(fd, 3 * 4096 + 100));
	p = mmap(NULL, 3 * 4096 + 100, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		rec("mmap failed %s", strerrorname_np(errno));
		close(fd);
		return;
	}
	memcpy(p + 10, "mapped write", 12);
	memcpy(p + 4096 * 3 + 90, "tail", 4);
	R("msync", msync(p, 3 * 4096 + 100, MS_SYNC));
	munmap(p, 3 * 4096 + 100);
	close(fd);
	rec_content("mm", "mm");
	fd = open("mm", O_RDONLY);
	p = mmap(NULL, 3 * 4096 + 100, PROT_READ, MAP_SHARED, fd, 0);
	rec("mapped read %.12s %.4s", p + 10, p + 4096 * 3 + 90);
	munmap(p, 3 * 4096 + 100);
	close(fd);
}

struct wjob {
	int fd, id;
};

static void *writer(void *arg)
{
	struct wjob *j = arg;
	uint8_t buf[5000];

	/* interleaved, overlapping-unit writes: each thread owns every other 5000 bytes */
	for (int i = 0; i < 100; i++) {
		memset(buf, 'A' + j->id + (i % 20), sizeof(buf));
		pwrite(j->fd, buf, sizeof(buf), (off_t)(2 * i + j->id) * 5000);
	}
	return NULL;
}

static void c_concurrent(void)
{
	int fd = open("cw", O_CREAT | O_RDWR, 0644);
	pthread_t t[2];
	struct wjob j[2] = { { fd, 0 }, { fd, 1 } };

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, writer, &j[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	close(fd);
	rec_content("cw", "cw");
}

/* a setgid directory hands its group and S_ISGID down to new subdirs */
static void c_setgid(void)
{
	R("mkdir g", mkdir("g", 0755));
	R("chmod g 2775", chmod("g", 02775));
	R("mkdir g/sub", mkdir("g/sub", 0750));
	rec_stat("g/sub", "g/sub", 0);
	R("mkdir g/sub/deeper", mkdir("g/sub/deeper", 0700));
	rec_stat("g/sub/deeper", "g/sub/deeper", 0);
	write_file("g/f", 10, 3);
	rec_stat("g/f", "g/f", 0);
}

/*
 * O_APPEND through two names of one file: the kernel keeps a size per
 * name (libfuse gives each path its own node), so only the filesystem can
 * put every append at the real end.
 */
static void c_append_links(void)
{
	int a, b;

	write_file("one", 5000, 4);
	R("link", link("one", "two"));
	a = (int)R("open one O_APPEND", open("one", O_WRONLY | O_APPEND));
	b = (int)R("open two O_APPEND", open("two", O_WRONLY | O_APPEND));
	for (int i = 0; i < 6; i++) {
		char w[32], d[200];

		memset(d, 'a' + i, sizeof(d));
		snprintf(w, sizeof(w), "append %d", i);
		R(w, write(i & 1 ? b : a, d, 10 + 30 * (size_t)i));
	}
	close(a);
	close(b);
	rec_content("one", "one");
	rec_stat("two", "two", 0);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "create, open, read, write", c_create },
	{ "file sizes around every unit boundary", c_sizes },
	{ "sparse writes and writes past EOF", c_sparse },
	{ "truncate up and down, by path and by fd", c_truncate },
	{ "O_APPEND and O_TRUNC", c_append_trunc },
	{ "rename (same dir, across, over files and dirs, flags)", c_rename },
	{ "unlink and rmdir", c_unlink_rmdir },
	{ "readdir with arbitrary and reserved-looking names", c_readdir },
	{ "symlink and readlink", c_symlink },
	{ "hard links", c_link },
	{ "chmod, chown, utimens, fsync, statfs, mknod", c_attrs },
	{ "mkdir in a setgid directory", c_setgid },
	{ "O_APPEND through two hard-link names", c_append_links },
	{ "xattrs", c_xattr },
	{ "255-byte names", c_longnames },
	{ "mmap read and write", c_mmap },
	{ "concurrent writers on one file", c_concurrent },
};

static char *run_case(const char *root, size_t i)
{
	char dir[4096];
	int cwd = open(".", O_RDONLY);

	lg_len = 0;
	if (!lg) {
		lg_cap = 65536;
		lg = malloc(lg_cap);
	}
	lg[0] = '\0';
	snprintf(dir, sizeof(dir), "%s/case%02zu", root, i);
	if (mkdir(dir, 0755) || chdir(dir)) {
		rec("cannot enter %s: %s", dir, strerror(errno));
	} else {
		seed(i + 1);
		cases[i].fn();
	}
	fchdir(cwd);
	close(cwd);
	return strdup(lg);
}

static const char *nth_line(const char *s, int n)
{
	while (n-- > 0 && (s = strchr(s, '\n')))
		s++;
	return s ? s : "";
}

static void first_diff(const char *a, const char *b)
{
	int line = 0;

	for (const char *p = a, *q = b; *p && *p == *q; p++, q++)
		if (*p == '\n')
			line++;
	a = nth_line(a, line);
	b = nth_line(b, line);
	tap_diag("first difference at line %d:", line + 1);
	tap_diag("  mount: %.*s", (int)strcspn(a, "\n"), a);
	tap_diag("  plain: %.*s", (int)strcspn(b, "\n"), b);
}

static size_t lines(const char *s)
{
	size_t n = 0;

	while ((s = strchr(s, '\n'))) {
		n++;
		s++;
	}
	return n;
}

/* ---------------------------------------------------------------- tree dump */

static void dump(const char *path, const char *rel)
{
	struct stat st;
	char buf[8192];

	if (lstat(path, &st)) {
		printf("%s: lstat %s\n", rel, strerror(errno));
		return;
	}
	printf("%s: mode %o uid %u gid %u nlink %lu", rel, st.st_mode, st.st_uid, st.st_gid,
	       S_ISDIR(st.st_mode) ? 0ul : (unsigned long)st.st_nlink);
	if (S_ISREG(st.st_mode)) {
		int fd = open(path, O_RDONLY);
		uint64_t h = 1469598103934665603ull;
		ssize_t n;
		long long total = 0;

		while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0) {
			for (ssize_t i = 0; i < n; i++)
				h = (h ^ (uint8_t)buf[i]) * 1099511628211ull;
			total += n;
		}
		if (fd >= 0)
			close(fd);
		printf(" size %lld read %lld hash %016llx", (long long)st.st_size, total,
		       (unsigned long long)h);
	} else if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlink(path, buf, sizeof(buf) - 1);

		printf(" size %lld -> %.*s", (long long)st.st_size, n > 0 ? (int)n : 0, buf);
	}
	{
		char names[4096];
		ssize_t n = llistxattr(path, names, sizeof(names));
		char *v[64];
		int k = 0;

		for (ssize_t i = 0; i < n && k < 64; i += (ssize_t)strlen(names + i) + 1)
			v[k++] = names + i;
		qsort(v, (size_t)k, sizeof(v[0]), cmp_str);
		for (int i = 0; i < k; i++) {
			ssize_t m = lgetxattr(path, v[i], buf, sizeof(buf));

			printf(" xattr %s=%016llx", v[i], (unsigned long long)fnv(buf, m > 0 ? (size_t)m : 0));
		}
	}
	printf("\n");
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		char *names[8192];
		int n = 0;
		struct dirent *de;

		while (d && (de = readdir(d)) && n < 8192)
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				names[n++] = strdup(de->d_name);
		if (d)
			closedir(d);
		qsort(names, (size_t)n, sizeof(names[0]), cmp_str);
		for (int i = 0; i < n; i++) {
			char p[8192], r[8192];

			snprintf(p, sizeof(p), "%s/%s", path, names[i]);
			snprintf(r, sizeof(r), "%s/%s", rel, names[i]);
			dump(p, r);
			free(names[i]);
		}
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "tree")) {
		dump(argv[2], ".");
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: fsops_test MOUNT PLAIN | fsops_test tree DIR\n");
		return 2;
	}
	umask(022);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *m = run_case(argv[1], i), *p = run_case(argv[2], i);
		int same = !strcmp(m, p);

		if (!same)
			first_diff(m, p);
		if (getenv("FSOPS_VERBOSE"))
			printf("%s", m);
		tap_ok(same, "%s (%zu observations)", cases[i].name, lines(m));
		free(m);
		free(p);
	}
	return tap_done();
}
