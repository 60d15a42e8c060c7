// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * table.c - `gesture table CSV`: the results of a set of runs (the rows
 * gesture run --csv appended) as the table a person reads, one line per
 * implementation and mode.  Memory is also shown as the increase over
 * handcode's run in the same mode (the paper's ws-delta; over host's when
 * handcode did not run: no GPU).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "main.h"
#include "run.h"

#define ROWS_MAX	64

static int parse_row(char *line, struct gesture_result *r)
{
	int n;

	memset(r, 0, sizeof(*r));
	n = sscanf(line, "%15[^,],%15[^,],%15[^,],%u,%u,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%u,%lf",
		   r->impl, r->mode, r->backend, &r->frames, &r->events,
		   &r->seconds, &r->fps, &r->mb_s, &r->lat_med_ms,
		   &r->lat_p99_ms, &r->cpu_user, &r->cpu_sys, &r->gpu_util,
		   &r->gpu_mem_mb, &r->threads, &r->rss_mb);
	return n == 16 ? 0 : -EINVAL;
}

static const struct gesture_result *find(const struct gesture_result *rows,
					 int n, const char *impl,
					 const char *mode)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(rows[i].impl, impl) && !strcmp(rows[i].mode, mode))
			return &rows[i];
	return NULL;
}

static void cell(double v, int width, int prec)
{
	if (v < 0)
		printf(" %*s", width, "-");
	else
		printf(" %*.*f", width, prec, v);
}

int gesture_cmd_table(int argc, char **argv)
{
	static struct gesture_result rows[ROWS_MAX];
	const char *base_name = "handcode";
	char line[512];
	int n = 0, lineno = 0, i;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "gesture table: usage: CSV\n");
		return 2;
	}
	f = fopen(argv[1], "re");
	if (!f) {
		fprintf(stderr, "gesture table: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (lineno == 1 && !strncmp(line, "impl,", 5))
			continue;
		if (n == ROWS_MAX || parse_row(line, &rows[n])) {
			fprintf(stderr, "gesture table: %s:%d: %s\n", argv[1], lineno,
				n == ROWS_MAX ? "too many rows" : "not a result row");
			fclose(f);
			return 1;
		}
		n++;
	}
	fclose(f);
	if (!n) {
		fprintf(stderr, "gesture table: %s: no rows\n", argv[1]);
		return 1;
	}
	if (!find(rows, n, "handcode", rows[0].mode))
		base_name = "host";
	printf("%-9s %-13s %-7s %7s %7s %8s %8s %6s %6s %5s %7s %7s %8s %8s\n",
	       "impl", "mode", "backend", "fps", "MB/s", "lat-med", "lat-p99",
	       "usr%", "sys%", "gpu%", "gpuMB", "threads", "memMB",
	       !strcmp(base_name, "host") ? "+MB-host" : "+MB-hand");
	for (i = 0; i < n; i++) {
		const struct gesture_result *r = &rows[i];
		const struct gesture_result *b = find(rows, n, base_name, r->mode);

		printf("%-9s %-13s %-7s", r->impl, r->mode, r->backend);
		cell(r->fps, 7, 1);
		cell(r->mb_s, 7, 1);
		printf(" %6.2fms %6.2fms", r->lat_med_ms, r->lat_p99_ms);
		cell(r->cpu_user, 6, 1);
		cell(r->cpu_sys, 6, 1);
		cell(r->gpu_util, 5, 0);
		cell(r->gpu_mem_mb, 7, 0);
		printf(" %7u", r->threads);
		cell(r->rss_mb, 8, 1);
		if (b)	/* the paper's ws-delta: footprint over the baseline's */
			printf(" %+8.1f\n", r->rss_mb - b->rss_mb);
		else
			printf(" %8s\n", "-");
	}
	printf("fps: frames / (last event - first capture); MB/s: camera data consumed;\n"
	       "lat: capture -> event, median and 99th percentile; usr%%/sys%%: CPU of\n"
	       "one core, all processes of the implementation (ptask: with ptaskd);\n"
	       "memMB: proportional set size at its largest; +MB-%s: memMB over %s's.\n",
	       !strcmp(base_name, "host") ? "host" : "hand", base_name);
	return 0;
}
