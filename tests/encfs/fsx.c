// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fsx.c - a file system exerciser in the manner of fsx (Apple's fsx, as
 * carried by xfstests and LTP), written here because Debian ships no fsx,
 * pjdfstest or xfstests package and the test machines have no network.
 *
 *   fsx [-N ops] [-S seed] [-l maxlen] [-o maxoplen] [-m goodfile] FILE
 *
 * Like fsx: random reads, writes, mapped reads, mapped writes, truncates,
 * fsyncs and close/reopen of one file at random offsets and sizes; every
 * read (and the size after every operation) is checked against an
 * in-memory image of what the file must hold, and the last operations are
 * printed on a mismatch.  Unlike the original, the image can be kept in a
 * "good file" (-m) between runs: a run that finds it first checks FILE
 * against it in full, so a remount between runs is checked too.
 * Exit 0: no mismatch; 1: mismatch or error; 2: usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { OP_READ, OP_WRITE, OP_MAPREAD, OP_MAPWRITE, OP_TRUNCATE, OP_FSYNC, OP_REOPEN, OP_N };
static const char *const op_names[] = { "read", "write", "mapread", "mapwrite", "truncate",
					"fsync", "reopen" };

#define LOG_LEN 32

static struct {
	int op;
	unsigned long long off, len, size_before;
} oplog[LOG_LEN];
static unsigned long long opno;

static const char *fname;
static int fd = -1;
static uint8_t *good, *tmp;
static size_t good_size, maxlen = 1 << 20, maxoplen = 65536;
static uint64_t state;

static uint64_t rnd(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

static void logop(int op, unsigned long long off, unsigned long long len)
{
	oplog[opno % LOG_LEN].op = op;
	oplog[opno % LOG_LEN].off = off;
	oplog[opno % LOG_LEN].len = len;
	oplog[opno % LOG_LEN].size_before = good_size;
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;
	unsigned long long first = opno >= LOG_LEN ? opno - LOG_LEN + 1 : 0;

	va_start(ap, fmt);
	fprintf(stderr, "fsx: %s: op %llu: ", fname, opno);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nfsx: last operations:\n");
	va_end(ap);
	for (unsigned long long i = first; i <= opno; i++)
		fprintf(stderr, "  %6llu %-8s off %8llu len %7llu (size was %llu)\n", i,
			op_names[oplog[i % LOG_LEN].op], oplog[i % LOG_LEN].off,
			oplog[i % LOG_LEN].len, oplog[i % LOG_LEN].size_before);
	exit(1);
}

static void check_bytes(const uint8_t *got, unsigned long long off, size_t len, const char *how)
{
	if (!memcmp(got, good + off, len))
		return;
	for (size_t i = 0; i < len; i++)
		if (got[i] != good[off + i])
			fail("%s: byte %llu is 0x%02x, expected 0x%02x", how, off + i, got[i],
			     good[off + i]);
}

static void check_size(void)
{
	struct stat st;

	if (fstat(fd, &st))
		fail("fstat: %s", strerror(errno));
	if ((size_t)st.st_size != good_size)
		fail("size is %lld, expected %zu", (long long)st.st_size, good_size);
}

static void do_read(unsigned long long off, size_t len)
{
	ssize_t n;
	size_t want;

	logop(OP_READ, off, len);
	want = off >= good_size ? 0 : (good_size - off < len ? good_size - off : len);
	n = pread(fd, tmp, len, (off_t)off);
	if (n < 0)
		fail("read: %s", strerror(errno));
	if ((size_t)n != want)
		fail("read returned %zd, expected %zu", n, want);
	check_bytes(tmp, off, want, "read");
}

static void do_write(unsigned long long off, size_t len)
{
	ssize_t n;

	logop(OP_WRITE, off, len);
	for (size_t i = 0; i < len; i++)
		tmp[i] = (uint8_t)(opno + i);	/* fsx's recognisable pattern */
	n = pwrite(fd, tmp, len, (off_t)off);
	if (n != (ssize_t)len)
		fail("write returned %zd: %s", n, n < 0 ? strerror(errno) : "short");
	memcpy(good + off, tmp, len);
	if (len && off + len > good_size)
		good_size = off + len;
}

static void do_truncate(size_t size)
{
	logop(OP_TRUNCATE, size, 0);
	if (ftruncate(fd, (off_t)size))
		fail("ftruncate: %s", strerror(errno));
	/* the image past EOF is kept zero: a later extension reads zeros there */
	if (size < good_size)
		memset(good + size, 0, good_size - size);
	good_size = size;
}

static void do_mapread(unsigned long long off, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned long long pgoff;
	uint8_t *p;

	if (off >= good_size) {
		do_read(off, len);
		return;
	}
	if (off + len > good_size)
		len = good_size - off;
	logop(OP_MAPREAD, off, len);
	if (!len)
		return;
	pgoff = off & ~(unsigned long long)(pg - 1);
	p = mmap(NULL, len + (off - pgoff), PROT_READ, MAP_SHARED, fd, (off_t)pgoff);
	if (p == MAP_FAILED)
		fail("mmap read: %s", strerror(errno));
	check_bytes(p + (off - pgoff), off, len, "mapread");
	munmap(p, len + (off - pgoff));
}

static void do_mapwrite(unsigned long long off, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned long long pgoff;
	uint8_t *p;

	if (!len)
		return;
	logop(OP_MAPWRITE, off, len);
	if (off + len > good_size) {
		/* as fsx does: grow the file first, a mapping cannot */
		if (ftruncate(fd, (off_t)(off + len)))
			fail("ftruncate for mapwrite: %s", strerror(errno));
		good_size = off + len;
	}
	pgoff = off & ~(unsigned long long)(pg - 1);
	p = mmap(NULL, len + (off - pgoff), PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)pgoff);
	if (p == MAP_FAILED)
		fail("mmap write: %s", strerror(errno));
	for (size_t i = 0; i < len; i++)
		good[off + i] = p[off - pgoff + i] = (uint8_t)(opno * 7 + i);
	if (msync(p, len + (off - pgoff), MS_SYNC))
		fail("msync: %s", strerror(errno));
	munmap(p, len + (off - pgoff));
}

static void reopen(void)
{
	logop(OP_REOPEN, 0, 0);
	if (fd >= 0 && close(fd))
		fail("close: %s", strerror(errno));
	fd = open(fname, O_RDWR);
	if (fd < 0)
		fail("open: %s", strerror(errno));
}

static void full_check(const char *when)
{
	ssize_t n;

	check_size();
	n = pread(fd, tmp, good_size, 0);
	if (n != (ssize_t)good_size)
		fail("%s: whole-file read returned %zd", when, n);
	check_bytes(tmp, 0, good_size, when);
}

static void load_good(const char *path)
{
	int g = open(path, O_RDONLY);
	struct stat st;

	if (g < 0) {
		if (errno != ENOENT)
			fail("%s: %s", path, strerror(errno));
		return;
	}
	fstat(g, &st);
	if ((size_t)st.st_size > maxlen || read(g, good, (size_t)st.st_size) != st.st_size)
		fail("%s: cannot load", path);
	good_size = (size_t)st.st_size;
	close(g);
}

static void save_good(const char *path)
{
	char t[4096];
	int g;

	snprintf(t, sizeof(t), "%s.tmp", path);
	g = open(t, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (g < 0 || write(g, good, good_size) != (ssize_t)good_size || fsync(g) || close(g) ||
	    rename(t, path))
		fail("%s: cannot save", path);
}

int main(int argc, char **argv)
{
	unsigned long long ops = 10000, seed = 1, counts[OP_N] = { 0 };
	const char *goodfile = NULL;
	int c;

	while ((c = getopt(argc, argv, "N:S:l:o:m:")) != -1) {
		switch (c) {
		case 'N': ops = strtoull(optarg, NULL, 0); break;
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		case 'l': maxlen = strtoull(optarg, NULL, 0); break;
		case 'o': maxoplen = strtoull(optarg, NULL, 0); break;
		case 'm': goodfile = optarg; break;
		default:
			fprintf(stderr, "usage: fsx [-N ops] [-S seed] [-l maxlen] [-o maxoplen] "
				"[-m goodfile] FILE\n");
			return 2;
		}
	}
	if (optind + 1 != argc || maxoplen > maxlen || !maxlen)
		return 2;
	fname = argv[optind];
	state = seed * 0x9E3779B97F4A7C15ull + 0x1234567;
	good = calloc(1, maxlen + 1);
	tmp = malloc(maxlen + 1);
	if (goodfile)
		load_good(goodfile);
	fd = open(fname, O_RDWR | O_CREAT | (good_size || goodfile ? 0 : O_TRUNC), 0644);
	if (fd < 0)
		fail("open: %s", strerror(errno));
	if (goodfile && !good_size && ftruncate(fd, 0))
		fail("ftruncate: %s", strerror(errno));
	full_check("initial check");
	for (opno = 1; opno <= ops; opno++) {
		uint64_t r = rnd();
		int op = (int)(r % 100);
		/* offsets are often near unit boundaries, as encfs-gpu cares about those */
		unsigned long long off = (r >> 8) & 1 ? rnd() % maxlen :
			((rnd() % (maxlen / 4096 + 1)) * 4096 + rnd() % 48 - 24) % maxlen;
		size_t len = (r >> 9) & 1 ? rnd() % 40 : rnd() % (maxoplen + 1);

		if (off + len > maxlen)
			len = maxlen - off;
		op = op < 25 ? OP_READ : op < 57 ? OP_WRITE : op < 67 ? OP_MAPREAD :
		     op < 77 ? OP_MAPWRITE : op < 92 ? OP_TRUNCATE : op < 96 ? OP_FSYNC : OP_REOPEN;
		counts[op]++;
		switch (op) {
		case OP_READ: do_read(off, len); break;
		case OP_WRITE: do_write(off, len); break;
		case OP_MAPREAD: do_mapread(off, len); break;
		case OP_MAPWRITE: do_mapwrite(off, len); break;
		case OP_TRUNCATE: do_truncate(rnd() % 4 ? off : rnd() % 64); break;
		case OP_FSYNC:
			logop(OP_FSYNC, 0, 0);
			if (fsync(fd))
				fail("fsync: %s", strerror(errno));
			break;
		default: reopen();
		}
		check_size();
	}
	opno--;
	full_check("final check");
	if (fsync(fd) || close(fd))
		fail("close: %s", strerror(errno));
	if (goodfile)
		save_good(goodfile);
	printf("fsx: %s: %llu ops OK (read %llu, write %llu, mapread %llu, mapwrite %llu, "
	       "truncate %llu, fsync %llu, reopen %llu), final size %zu\n", fname, ops,
	       counts[OP_READ], counts[OP_WRITE], counts[OP_MAPREAD], counts[OP_MAPWRITE],
	       counts[OP_TRUNCATE], counts[OP_FSYNC], counts[OP_REOPEN], good_size);
	return 0;
}
