// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * output.c - one way for every subcommand to print results: "key: value"
 * lines (nested objects indented by two spaces, list elements introduced
 * by "-"), or with --json one JSON document on one line.  Not thread-safe;
 * ptaskctl prints from one thread.
 */
#include <inttypes.h>
#include <stdio.h>
#include "ptaskctl.h"

#define OUT_MAX_DEPTH 16

static unsigned int depth;		/* open objects and lists */
static bool need_comma[OUT_MAX_DEPTH];	/* JSON: a member came before */

static void json_string(const char *s)
{
	const unsigned char *p;

	putchar('"');
	for (p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

/* JSON: the comma and "key": of a member; text: the indentation and key. */
static void member(const char *key)
{
	if (ptaskctl_opts.json) {
		if (need_comma[depth])
			putchar(',');
		need_comma[depth] = true;
		if (key) {
			json_string(key);
			putchar(':');
		}
		return;
	}
	printf("%*s", 2 * (depth ? depth - 1 : 0), "");
	if (key)
		printf("%s:", key);
	else
		putchar('-');
}

static void open_scope(char json_char)
{
	if (ptaskctl_opts.json)
		putchar(json_char);
	if (depth + 1 < OUT_MAX_DEPTH)
		depth++;
	need_comma[depth] = false;
}

static void close_scope(char json_char)
{
	if (depth)
		depth--;
	if (ptaskctl_opts.json)
		putchar(json_char);
}

void out_begin(void)
{
	depth = 0;
	need_comma[0] = false;
	if (ptaskctl_opts.json)
		putchar('{');
	depth = 1;
	need_comma[1] = false;
}

void out_end(void)
{
	if (ptaskctl_opts.json)
		puts("}");
	depth = 0;
	fflush(stdout);
}

void out_str(const char *key, const char *val)
{
	member(key);
	if (ptaskctl_opts.json)
		json_string(val);
	else
		printf(" %s\n", val);
}

void out_u64(const char *key, uint64_t val)
{
	member(key);
	if (ptaskctl_opts.json)
		printf("%" PRIu64, val);
	else
		printf(" %" PRIu64 "\n", val);
}

void out_s64(const char *key, int64_t val)
{
	member(key);
	if (ptaskctl_opts.json)
		printf("%" PRId64, val);
	else
		printf(" %" PRId64 "\n", val);
}

void out_obj_begin(const char *key)
{
	member(key);
	if (!ptaskctl_opts.json)
		putchar('\n');
	open_scope('{');
}

void out_obj_end(void)
{
	close_scope('}');
}

void out_list_begin(const char *key)
{
	member(key);
	if (!ptaskctl_opts.json)
		putchar('\n');
	open_scope('[');
}

void out_list_end(void)
{
	close_scope(']');
}

void out_f64(const char *key, double val)
{
	member(key);
	if (ptaskctl_opts.json)
		printf("%.3f", val);
	else
		printf(" %.3f\n", val);
}

void out_null(const char *key)
{
	member(key);
	if (ptaskctl_opts.json)
		fputs("null", stdout);
	else
		fputs(" -\n", stdout);
}
