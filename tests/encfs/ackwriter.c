// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ackwriter.c - the writer of the "unmount under load" test.
 *
 *   ackwriter write FILE ACKLOG     append records to FILE, fdatasync each,
 *                                   then note it in ACKLOG (on another fs);
 *                                   runs until a write or sync fails
 *   ackwriter verify FILE ACKLOG    every record ACKLOG names must be in
 *                                   FILE, intact
 *
 * A record is a 40-byte header "rec <n> <len>" and a pattern derived from
 * n; lengths vary (1 .. 9000 bytes) so records straddle data units.  A
 * record is acknowledged only after fdatasync() returned 0, so verify
 * failing means a write the filesystem promised was durable got lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t rec_len(unsigned long n)
{
	return 40 + (n * 2654435761u) % 9000;
}

static void make_rec(unsigned long n, unsigned char *buf, size_t len)
{
	memset(buf, 0, 40);
	snprintf((char *)buf, 40, "rec %lu %zu", n, len);
	for (size_t i = 40; i < len; i++)
		buf[i] = (unsigned char)(n * 31 + i);
}

static int do_write(const char *file, const char *acklog)
{
	unsigned char buf[9100];
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	FILE *ack = fopen(acklog, "w");
	off_t off = 0;

	if (fd < 0 || !ack) {
		perror("ackwriter");
		return 1;
	}
	for (unsigned long n = 0;; n++) {
		size_t len = rec_len(n);

		make_rec(n, buf, len);
		if (pwrite(fd, buf, len, off) != (ssize_t)len || fdatasync(fd))
			break;	/* the filesystem went away: expected */
		fprintf(ack, "%lu %lld %zu\n", n, (long long)off, len);
		fflush(ack);
		fdatasync(fileno(ack));
		off += (off_t)len;
	}
	fclose(ack);
	close(fd);
	return 0;
}

static int do_verify(const char *file, const char *acklog)
{
	unsigned char want[9100], got[9100];
	FILE *ack = fopen(acklog, "r");
	int fd = open(file, O_RDONLY);
	unsigned long n, count = 0, bad = 0;
	long long off;
	size_t len;

	if (fd < 0 || !ack) {
		perror("ackwriter verify");
		return 1;
	}
	while (fscanf(ack, "%lu %lld %zu", &n, &off, &len) == 3) {
		make_rec(n, want, len);
		if (pread(fd, got, len, off) != (ssize_t)len || memcmp(got, want, len)) {
			if (bad++ < 5)
				fprintf(stderr, "ackwriter: record %lu (%zu bytes at %lld) lost\n", n, len,
					off);
		}
		count++;
	}
	printf("ackwriter: %lu acknowledged records, %lu lost\n", count, bad);
	return bad || !count;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "write"))
		return do_write(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "verify"))
		return do_verify(argv[2], argv[3]);
	fprintf(stderr, "usage: ackwriter write|verify FILE ACKLOG\n");
	return 2;
}
