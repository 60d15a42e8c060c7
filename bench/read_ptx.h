/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * read_ptx.h - read a PTX file whole, for the GPU benchmarks and test
 * clients that hand it to ptask_gpu_ptask_open() (one static function:
 * each includer is one small program).
 */
#ifndef PTASK_BENCH_READ_PTX_H
#define PTASK_BENCH_READ_PTX_H

#include <stdio.h>
#include <stdlib.h>

/*
 * The file at @path with a NUL after it (PTX is text; the driver wants
 * the terminator counted): the buffer (free() it) and *@len = its size
 * + 1, or NULL when it cannot be read or is empty.
 */
static inline char *read_ptx(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = calloc(1, (size_t)n + 1)) &&
	    fread(buf, 1, (size_t)n, f) == (size_t)n) {
		*len = (size_t)n + 1;
	} else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

#endif /* PTASK_BENCH_READ_PTX_H */
