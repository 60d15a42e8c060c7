// SPDX-License-Identifier: GPL-2.0
/*
 * datablock_test - PTASK_IOC_DATABLOCK_CREATE, _DATABLOCK_RELEASE and
 * mmap() of datablocks.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>

#include "pt_harness.h"

FIXTURE(datablock) {
	struct pt_env env;
	int fd;
	__u32 graph;
	__u64 c0[__PTASK_COUNT_MAX];
};

FIXTURE_SETUP(datablock)
{
	PT_ENV_SETUP(&self->env);
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600,
				   &self->graph));
	ASSERT_PT(0, pt_counts_read(self->c0));
}

FIXTURE_TEARDOWN(datablock)
{
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

static __u64 count_now(enum ptask_count which)
{
	__u64 c[__PTASK_COUNT_MAX];

	if (pt_counts_read(c))
		return ~0ULL;
	return c[which];
}

TEST_F(datablock, create_by_size)
{
	__u64 off = ~0ULL, bytes = 0;
	__u32 h = 0;

	ASSERT_PT(0, pt_db_create(self->fd, 1000, 0, 0, &h, &off, &bytes));
	ASSERT_NE(0U, h);
	ASSERT_EQ(1000ULL, bytes);
	ASSERT_EQ(0ULL, off % (__u64)getpagesize());
	ASSERT_EQ(self->c0[PTASK_COUNT_DATABLOCKS] + 1,
		  count_now(PTASK_COUNT_DATABLOCKS));
	ASSERT_EQ(self->c0[PTASK_COUNT_BUFFERS] + 1,
		  count_now(PTASK_COUNT_BUFFERS));
	ASSERT_PT(0, pt_db_release(self->fd, h));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_DATABLOCKS,
				   self->c0[PTASK_COUNT_DATABLOCKS],
				   PT_WAIT_MS));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_BUFFERS,
				   self->c0[PTASK_COUNT_BUFFERS], PT_WAIT_MS));
}

TEST_F(datablock, create_by_array_template)
{
	__u64 bytes = 0;
	__u32 t, h;

	ASSERT_PT(0, pt_template_open(self->fd, self->graph,
				      PTASK_TEMPLATE_ARRAY, PTASK_BIND_GLOBAL,
				      4, 16, 8, 2, "", &t));
	ASSERT_PT(0, pt_db_create(self->fd, 0, t, 0, &h, NULL, &bytes));
	ASSERT_EQ(4ULL * 16 * 8 * 2, bytes);
	ASSERT_PT(0, pt_db_release(self->fd, h));
}

TEST_F(datablock, create_by_records_template)
{
	__u64 bytes = 0;
	__u32 t, h;

	ASSERT_PT(0, pt_template_open(self->fd, self->graph,
				      PTASK_TEMPLATE_RECORDS, PTASK_BIND_GLOBAL,
				      12, 100, 1, 1, "", &t));
	ASSERT_PT(0, pt_db_create(self->fd, 0, t, 10, &h, NULL, &bytes));
	ASSERT_EQ(120ULL, bytes);
	ASSERT_PT(0, pt_db_release(self->fd, h));
}

TEST_F(datablock, create_by_opaque_template)
{
	__u64 bytes = 0;
	__u32 t, h;

	ASSERT_PT(0, pt_template_open(self->fd, self->graph,
				      PTASK_TEMPLATE_OPAQUE, PTASK_BIND_PARAM,
				      1, 300, 1, 1, "", &t));
	ASSERT_PT(0, pt_db_create(self->fd, 0, t, 0, &h, NULL, &bytes));
	ASSERT_EQ(300ULL, bytes);
	ASSERT_PT(0, pt_db_release(self->fd, h));
}

TEST_F(datablock, handles_unique)
{
	__u32 h[16];
	int i, j;

	for (i = 0; i < 16; i++) {
		ASSERT_PT(0, pt_db_create(self->fd, 64, 0, 0, &h[i], NULL,
					  NULL));
		ASSERT_NE(0U, h[i]);
		ASSERT_NE(self->graph, h[i]);
		for (j = 0; j < i; j++)
			ASSERT_NE(h[j], h[i]);
	}
	ASSERT_EQ(self->c0[PTASK_COUNT_DATABLOCKS] + 16,
		  count_now(PTASK_COUNT_DATABLOCKS));
	for (i = 0; i < 16; i++)
		ASSERT_PT(0, pt_db_release(self->fd, h[i]));
}

TEST_F(datablock, mmap_read_write_shared)
{
	size_t len = 3 * (size_t)getpagesize();
	__u8 *a, *b, *c;
	__u64 off;
	__u32 h, seed;

	ASSERT_PT(0, pt_db_create(self->fd, len, 0, 0, &h, &off, NULL));
	a = pt_env_map(&self->env, self->fd, off, len);
	ASSERT_NE(NULL, a);
	b = pt_env_map(&self->env, self->fd, off, len);
	ASSERT_NE(NULL, b);
	/* Assumption: a fresh datablock reads as zeroes. */
	ASSERT_EQ(0, a[0] | a[len - 1]);
	pt_fill(a, len, 4242);
	ASSERT_PT(0, pt_check(b, len, &seed));
	ASSERT_EQ(4242U, seed);
	b[len - 1] ^= 0xff;
	ASSERT_EQ(a[len - 1], b[len - 1]);
	b[len - 1] ^= 0xff;
	pt_env_unmap(&self->env, a);
	pt_env_unmap(&self->env, b);
	c = pt_env_map(&self->env, self->fd, off, len);
	ASSERT_NE(NULL, c);
	ASSERT_PT(0, pt_check(c, len, &seed));
	ASSERT_EQ(4242U, seed);
	pt_env_unmap(&self->env, c);
	ASSERT_PT(0, pt_db_release(self->fd, h));
}

TEST_F(datablock, distinct_datablocks_distinct_memory)
{
	__u64 o1, o2;
	__u32 h1, h2, s;
	void *p1, *p2;

	ASSERT_PT(0, pt_db_create(self->fd, 4096, 0, 0, &h1, &o1, NULL));
	ASSERT_PT(0, pt_db_create(self->fd, 4096, 0, 0, &h2, &o2, NULL));
	ASSERT_NE(o1, o2);
	p1 = pt_env_map(&self->env, self->fd, o1, 4096);
	ASSERT_NE(NULL, p1);
	p2 = pt_env_map(&self->env, self->fd, o2, 4096);
	ASSERT_NE(NULL, p2);
	pt_fill(p1, 4096, 1);
	pt_fill(p2, 4096, 2);
	ASSERT_PT(0, pt_check(p1, 4096, &s));
	ASSERT_EQ(1U, s);
	ASSERT_PT(0, pt_check(p2, 4096, &s));
	ASSERT_EQ(2U, s);
	ASSERT_PT(0, pt_db_release(self->fd, h1));
	ASSERT_PT(0, pt_db_release(self->fd, h2));
}

TEST_F(datablock, create_zero_bytes_einval)
{
	/* "neither of bytes and template" */
	ASSERT_PT(-EINVAL, pt_db_create(self->fd, 0, 0, 0, NULL, NULL, NULL));
}

TEST_F(datablock, create_too_big_einval)
{
	ASSERT_PT(-EINVAL, pt_db_create(self->fd, PTASK_DATABLOCK_MAX_BYTES + 1,
					0, 0, NULL, NULL, NULL));
	ASSERT_PT(-EINVAL, pt_db_create(self->fd, ~0ULL, 0, 0, NULL, NULL,
					NULL));
}

TEST_F(datablock, create_bytes_and_template_einval)
{
	__u32 t;

	ASSERT_PT(0, pt_template_open(self->fd, self->graph,
				      PTASK_TEMPLATE_OPAQUE, PTASK_BIND_GLOBAL,
				      1, 64, 1, 1, "", &t));
	ASSERT_PT(-EINVAL, pt_db_create(self->fd, 64, t, 0, NULL, NULL, NULL));
}

TEST_F(datablock, create_bad_template_enoent)
{
	ASSERT_PT(-ENOENT, pt_db_create(self->fd, 0, 0x7ffffff0, 0, NULL, NULL,
					NULL));
	/* A graph handle is not a template. */
	ASSERT_PT(-ENOENT, pt_db_create(self->fd, 0, self->graph, 0, NULL,
					NULL, NULL));
}

TEST_F(datablock, create_template_of_unopened_graph_eacces)
{
	__u32 g2, t;
	int fd2;

	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	ASSERT_PT(0, pt_graph_open(fd2, "", PTASK_GRAPH_CREATE, 0600, &g2));
	ASSERT_PT(0, pt_template_open(fd2, g2, PTASK_TEMPLATE_OPAQUE,
				      PTASK_BIND_GLOBAL, 1, 64, 1, 1, "", &t));
	ASSERT_PT(-EACCES, pt_db_create(self->fd, 0, t, 0, NULL, NULL, NULL));
	ASSERT_PT(0, pt_db_create(fd2, 0, t, 0, NULL, NULL, NULL));
}

TEST_F(datablock, release_twice_enoent)
{
	__u32 h;

	ASSERT_PT(0, pt_db_create(self->fd, 64, 0, 0, &h, NULL, NULL));
	ASSERT_PT(0, pt_db_release(self->fd, h));
	ASSERT_PT(-ENOENT, pt_db_release(self->fd, h));
}

TEST_F(datablock, release_not_held_enoent)
{
	__u32 h;
	int fd2;

	ASSERT_PT(-ENOENT, pt_db_release(self->fd, 0x7ffffff0));
	/* Another client's datablock: we hold no reference to it. */
	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	ASSERT_PT(0, pt_db_create(fd2, 64, 0, 0, &h, NULL, NULL));
	ASSERT_PT(-ENOENT, pt_db_release(self->fd, h));
	/* Not a datablock at all. */
	ASSERT_PT(-ENOENT, pt_db_release(self->fd, self->graph));
	ASSERT_PT(0, pt_db_release(fd2, h));
}

TEST_F(datablock, mmap_private_einval)
{
	__u64 off;
	void *p;
	__u32 h;

	ASSERT_PT(0, pt_db_create(self->fd, 4096, 0, 0, &h, &off, NULL));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd,
		 (off_t)off);
	if (p != MAP_FAILED)
		munmap(p, 4096);
	ASSERT_EQ(MAP_FAILED, p);
	ASSERT_EQ(EINVAL, errno);
	ASSERT_PT(0, pt_db_release(self->fd, h));
}

TEST_F(datablock, mmap_past_end_einval)
{
	size_t pg = (size_t)getpagesize();
	__u64 off;
	void *p;
	__u32 h;

	ASSERT_PT(0, pt_db_create(self->fd, pg, 0, 0, &h, &off, NULL));
	p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 (off_t)off);
	if (p != MAP_FAILED)
		munmap(p, 2 * pg);
	ASSERT_EQ(MAP_FAILED, p);
	ASSERT_EQ(EINVAL, errno);
	/* The exact size maps. */
	p = pt_env_map(&self->env, self->fd, off, pg);
	ASSERT_NE(NULL, p);
	ASSERT_PT(0, pt_db_release(self->fd, h));
}

/*
 * Assumption: mmap(NULL, bytes, ...) works for a size that is not a page
 * multiple (the header's own example maps @bytes).
 */
TEST_F(datablock, mmap_small_datablock)
{
	__u64 off;
	__u8 *p;
	__u32 h, s;

	ASSERT_PT(0, pt_db_create(self->fd, 100, 0, 0, &h, &off, NULL));
	p = pt_env_map(&self->env, self->fd, off, 100);
	ASSERT_NE(NULL, p);
	pt_fill(p, 100, 77);
	ASSERT_PT(0, pt_check(p, 100, &s));
	ASSERT_EQ(77U, s);
	ASSERT_PT(0, pt_db_release(self->fd, h));
}

TEST_F(datablock, mmap_released_datablock_fails)
{
	__u64 off;
	void *p;
	__u32 h;

	ASSERT_PT(0, pt_db_create(self->fd, 4096, 0, 0, &h, &off, NULL));
	ASSERT_PT(0, pt_db_release(self->fd, h));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 (off_t)off);
	if (p != MAP_FAILED)
		munmap(p, 4096);
	ASSERT_EQ(MAP_FAILED, p);
}

/* Datablocks hold data, not code (issue 13, the outside attack). */
TEST_F(datablock, mmap_exec_eperm)
{
	__u64 off;
	void *p;
	__u32 h;

	ASSERT_PT(0, pt_db_create(self->fd, 4096, 0, 0, &h, &off, NULL));
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, self->fd,
		 (off_t)off);
	if (p != MAP_FAILED)
		munmap(p, 4096);
	ASSERT_EQ(MAP_FAILED, p);
	ASSERT_EQ(EPERM, errno);
	p = pt_env_map(&self->env, self->fd, off, 4096);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(-1, mprotect(p, 4096, PROT_READ | PROT_WRITE | PROT_EXEC));
	ASSERT_EQ(EACCES, errno);
	ASSERT_EQ(0, mprotect(p, 4096, PROT_READ));
	ASSERT_PT(0, pt_db_release(self->fd, h));
}

/*
 * MADV_DONTNEED drops the mapping's page table entries; the next access
 * finds the datablock's own pages again, bytes intact (it raised SIGBUS:
 * issue 13, the outside attack).
 */
TEST_F(datablock, mmap_madv_dontneed_keeps_bytes)
{
	__u64 off;
	__u32 h, s;
	void *p;

	ASSERT_PT(0, pt_db_create(self->fd, 8192, 0, 0, &h, &off, NULL));
	p = pt_env_map(&self->env, self->fd, off, 8192);
	ASSERT_NE(NULL, p);
	pt_fill(p, 8192, 4242);
	ASSERT_EQ(0, madvise(p, 8192, MADV_DONTNEED));
	ASSERT_PT(0, pt_check(p, 8192, &s));
	ASSERT_EQ(4242U, s);
	pt_fill(p, 8192, 4343);		/* written through again */
	ASSERT_EQ(0, madvise(p, 4096, MADV_DONTNEED));
	ASSERT_PT(0, pt_check(p, 8192, &s));
	ASSERT_EQ(4343U, s);
	ASSERT_PT(0, pt_db_release(self->fd, h));
}

/*
 * "Mappings stay valid until munmap": after the release the datablock
 * object is gone but its memory (a "buffer") lives while mapped.
 * Assumption: objects/buffers counts one buffer per datablock.
 */
TEST_F(datablock, mapping_outlives_release)
{
	__u64 off;
	__u32 h, s;
	void *p;

	ASSERT_PT(0, pt_db_create(self->fd, 8192, 0, 0, &h, &off, NULL));
	p = pt_env_map(&self->env, self->fd, off, 8192);
	ASSERT_NE(NULL, p);
	pt_fill(p, 8192, 31337);
	ASSERT_PT(0, pt_db_release(self->fd, h));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_DATABLOCKS,
				   self->c0[PTASK_COUNT_DATABLOCKS],
				   PT_WAIT_MS));
	ASSERT_EQ(self->c0[PTASK_COUNT_BUFFERS] + 1,
		  count_now(PTASK_COUNT_BUFFERS));
	ASSERT_PT(0, pt_check(p, 8192, &s));
	ASSERT_EQ(31337U, s);
	pt_env_unmap(&self->env, p);
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_BUFFERS,
				   self->c0[PTASK_COUNT_BUFFERS], PT_WAIT_MS));
}

/*
 * Records travel with the datablock: set at create, overridden by
 * PTASK_PUSH_SET_RECORDS, seen by the executor and (copied by it) by the
 * puller.
 */
TEST_F(datablock, records_travel_and_set_records)
{
	struct pt_copy_graph g;
	__u64 rec, bytes;
	__u32 h, s;

	PT_NEED_ROOT();
	ASSERT_NE(NULL, pt_env_executor(&self->env));
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 200, 5, 3, 0,
				  pt_wait_deadline()));
	ASSERT_PT(0, pt_pull_seed(self->fd, g.out_chan[0], 0,
				  pt_wait_deadline(), &s, &bytes, &rec));
	ASSERT_EQ(5U, s);
	ASSERT_EQ(200ULL, bytes);
	ASSERT_EQ(3ULL, rec);

	ASSERT_PT(0, pt_db_make(self->fd, 200, 6, &h));
	ASSERT_PT(0, pt_push(self->fd, g.in_chan[0], h, PTASK_PUSH_SET_RECORDS,
			     7, pt_wait_deadline()));
	ASSERT_PT(0, pt_db_release(self->fd, h));
	ASSERT_PT(0, pt_pull_seed(self->fd, g.out_chan[0], 0,
				  pt_wait_deadline(), &s, &bytes, &rec));
	ASSERT_EQ(6U, s);
	ASSERT_EQ(7ULL, rec);
}

TEST_HARNESS_MAIN
