// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * os_user.c - the OS shim for running the core in a plain user-space test
 * process (unit tests and fuzz targets).
 *
 * Buffers are malloc'd and counted, so a test can prove nothing leaked;
 * the "lock" is a flag the test sets around its calls, so a core function
 * reached without it aborts the test; warnings abort too, because a
 * PTASK_WARN_ON in the core is a bug the tests must catch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "os_user.h"

struct ptask_buf {
	unsigned int refs;
	u64 bytes;
	unsigned char data[];
};

long os_user_buffers;
int os_user_locked = 1;
unsigned long os_user_wakes;
unsigned long os_user_events;
int os_user_fail_alloc_after = -1;
int os_user_fail_alloc_once;
unsigned long os_user_allocs;
unsigned long os_user_alloc_failures;
unsigned long long os_user_buf_bytes;
unsigned long long os_user_buf_limit;

unsigned long os_user_saturations;

void ptask_os_saturated(const char *what)
{
	(void)what;
	os_user_saturations++;
}

int ptask_os_warn(int cond, const char *file, int line, const char *what)
{
	if (cond) {
		fprintf(stderr, "PTASK_WARN_ON(%s) at %s:%d\n", what, file, line);
		abort();
	}
	return cond;
}

static int alloc_should_fail(void)
{
	os_user_allocs++;
	if (os_user_fail_alloc_after < 0)
		return 0;
	if (os_user_fail_alloc_after == 0) {
		os_user_alloc_failures++;
		if (os_user_fail_alloc_once)
			os_user_fail_alloc_after = -1;
		return 1;
	}
	os_user_fail_alloc_after--;
	return 0;
}

void *ptask_os_zalloc(size_t bytes)
{
	if (alloc_should_fail())
		return NULL;
	return calloc(1, bytes ? bytes : 1);
}

void ptask_os_free(void *p)
{
	free(p);
}

u64 os_user_clock_ns;
u64 os_user_timer_ns;
unsigned long os_user_timer_calls;

void ptask_os_sched_timer(struct ptask_ns *ns, u64 when_ns)
{
	(void)ns;
	os_user_timer_ns = when_ns;
	os_user_timer_calls++;
}

u64 ptask_os_now_ns(void)
{
	struct timespec ts;

	if (os_user_clock_ns)
		return os_user_clock_ns;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

/* Records the flags of the last allocation, for the tests. */
u32 os_user_buf_last_flags;

int ptask_os_buf_alloc(struct ptask_client *c, u64 bytes, u32 flags,
		       struct ptask_buf **out)
{
	struct ptask_buf *b;

	(void)c;
	os_user_buf_last_flags = flags;
	if (alloc_should_fail())
		return -ENOMEM;
	if (os_user_buf_limit && bytes > os_user_buf_limit - os_user_buf_bytes)
		return -ENOMEM;
	b = calloc(1, sizeof(*b) + bytes);
	if (!b)
		return -ENOMEM;
	b->refs = 1;
	b->bytes = bytes;
	os_user_buffers++;
	os_user_buf_bytes += bytes;
	*out = b;
	return 0;
}

/* The tests' shell has one pool: an output's owner changes nothing. */
int ptask_os_buf_alloc_output(struct ptask_client *c, u32 owner_uid,
			      u64 bytes, u32 flags, struct ptask_buf **out)
{
	(void)owner_uid;
	return ptask_os_buf_alloc(c, bytes, flags, out);
}

void ptask_os_buf_get(struct ptask_buf *buf)
{
	buf->refs++;
}

void ptask_os_buf_put(struct ptask_buf *buf)
{
	if (--buf->refs == 0) {
		os_user_buffers--;
		os_user_buf_bytes -= buf->bytes;
		free(buf);
	}
}

void ptask_os_buf_bind(struct ptask_buf *buf, u32 handle)
{
	(void)buf;
	(void)handle;
}

u64 os_user_tunnel_timer_ns;

void ptask_os_tunnel_timer(struct ptask_ns *ns, u64 when_ns)
{
	(void)ns;
	os_user_tunnel_timer_ns = when_ns;
}

void ptask_os_buf_copy(struct ptask_buf *dst, u64 dst_off,
		       struct ptask_buf *src, u64 src_off, u64 bytes)
{
	if (PTASK_WARN_ON(dst_off > dst->bytes || bytes > dst->bytes - dst_off ||
			  src_off > src->bytes || bytes > src->bytes - src_off))
		return;
	memmove(dst->data + dst_off, src->data + src_off, bytes);
}

void ptask_os_buf_write(struct ptask_buf *dst, u64 dst_off, const void *src,
			u64 bytes)
{
	if (PTASK_WARN_ON(dst_off > dst->bytes || bytes > dst->bytes - dst_off))
		return;
	memcpy(dst->data + dst_off, src, bytes);
}

void *os_user_buf_data(struct ptask_buf *buf)
{
	return buf->data;
}

void ptask_os_client_wake(struct ptask_client *client)
{
	(void)client;
	os_user_wakes++;
}

void ptask_os_event(struct ptask_ns *ns, u32 event, u32 obj_type, u32 handle)
{
	(void)ns;
	(void)event;
	(void)obj_type;
	(void)handle;
	os_user_events++;
}

void ptask_os_assert_locked(struct ptask_ns *ns)
{
	(void)ns;
	if (!os_user_locked) {
		fprintf(stderr, "core called without the namespace lock\n");
		abort();
	}
}
