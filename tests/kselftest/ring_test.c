// SPDX-License-Identifier: GPL-2.0
/*
 * ring_test - kernel-mode rings: PTASK_IOC_RING_SETUP, mmap of a ring's
 * region and PTASK_IOC_RING_ENTER (uapi/ptask.h, "Submission and
 * completion rings" and "Kernel-mode rings").
 *
 * The client side is common/ring.c, the code libptask and ptaskd use in
 * user mode, so pc_ring_attach() also checks the module's layout against
 * every rule of the uapi.  Every fixture's teardown checks the object
 * counters, ring regions included (they count as buffers): a ring that
 * outlived its fd fails the test.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "pt_harness.h"
#include "common/ring.h"

/**
 * struct kr - one ring as the test's client sees it
 * @fd: its /dev/ptask fd
 * @setup: what RING_SETUP answered
 * @map: the region
 * @r: attached with common/ring.c
 */
struct kr {
	int fd;
	struct ptask_ring_setup setup;
	void *map;
	struct pc_ring r;
};

static int kr_setup(int fd, __u32 sq, struct ptask_ring_setup *out)
{
	struct ptask_ring_setup a = { .size = sizeof(a), .sq_entries = sq };
	int err = pt_ioctl(fd, PTASK_IOC_RING_SETUP, &a);

	if (!err && out)
		*out = a;
	return err;
}

/*
 * Set up, map and attach a ring of @sq entries; 0 or -errno.  The mapping
 * is tracked by @e, or (@e NULL, for threads) the caller's to unmap.
 */
static int kr_open(struct pt_env *e, int fd, __u32 sq, struct kr *k)
{
	int err;

	memset(k, 0, sizeof(*k));
	k->fd = fd;
	err = kr_setup(fd, sq, &k->setup);
	if (err)
		return err;
	if (e) {
		k->map = pt_env_map(e, fd, k->setup.mmap_offset,
				    k->setup.region_bytes);
	} else {
		k->map = mmap(NULL, k->setup.region_bytes,
			      PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			      k->setup.mmap_offset);
		if (k->map == MAP_FAILED)
			k->map = NULL;
	}
	if (!k->map)
		return -errno;
	return pc_ring_attach(&k->r, k->map, k->setup.region_bytes,
			      PC_RING_CLIENT);
}

static int kr_enter_ex(int fd, __u32 ring, __u32 to_submit,
		       __u32 min_complete, __u64 timeout_ns)
{
	struct ptask_ring_enter e = {
		.size = sizeof(e), .ring = ring, .to_submit = to_submit,
		.min_complete = min_complete, .timeout_ns = timeout_ns,
	};
	int ret = ioctl(fd, PTASK_IOC_RING_ENTER, &e);

	return ret < 0 ? -errno : ret;
}

/* Consume everything queued, blocking as the ioctls do. */
static int kr_enter(struct kr *k)
{
	return kr_enter_ex(k->fd, k->setup.ring, k->setup.sq_entries,
			   ~0U, 0);
}

/* Queue one entry: @arg is the call's struct, @size bytes of it. */
static int kr_queue(struct kr *k, __u32 cmd, __u32 flags, __u64 user_data,
		    const void *arg, size_t size)
{
	struct ptask_sqe *sqe;
	int space = pc_ring_q_space(&k->r.sq);

	if (space <= 0)
		return space ? space : -ENOSPC;
	sqe = pc_ring_q_slot(&k->r.sq);
	memset(sqe, 0, sizeof(*sqe));
	sqe->cmd = cmd;
	sqe->flags = flags;
	sqe->user_data = user_data;
	memcpy(&sqe->arg, arg, size);
	pc_ring_q_publish(&k->r.sq, 1);
	return 0;
}

/* The next completion: 1 (in @cqe), 0 (none) or -EPROTO. */
static int kr_reap(struct kr *k, struct ptask_cqe *cqe)
{
	int n = pc_ring_q_ready(&k->r.cq);

	if (n <= 0)
		return n;
	pc_ring_q_peek(&k->r.cq, cqe);
	pc_ring_q_consume(&k->r.cq);
	return 1;
}

/*
 * One call through the ring, waited for, behind whatever is queued
 * (fire-and-forget releases that succeed): its res, or -1000 + -errno.
 */
static int kr_call(struct kr *k, __u32 cmd, void *arg, size_t size)
{
	__u32 queued = k->r.sq.local -
		       __atomic_load_n(&k->r.sq.q->head, __ATOMIC_ACQUIRE);
	struct ptask_cqe cqe;
	int n;

	if (kr_queue(k, cmd, 0, 42, arg, size))
		return -1000;
	n = kr_enter(k);
	if (n != (int)queued + 1)
		return -1000 + (n < 0 ? n : -EBADMSG);
	if (kr_reap(k, &cqe) != 1 || cqe.user_data != 42)
		return -1000 - EBADMSG;
	if (!cqe.res)
		memcpy(arg, &cqe.arg, size);
	return cqe.res;
}

static int kr_create(struct kr *k, __u64 bytes, __u32 *h, __u64 *off)
{
	struct ptask_datablock_create a = { .size = sizeof(a), .bytes = bytes };
	int err = kr_call(k, PTASK_IOC_DATABLOCK_CREATE, &a, sizeof(a));

	if (!err) {
		*h = a.handle;
		if (off)
			*off = a.mmap_offset;
	}
	return err;
}

FIXTURE(ring) {
	struct pt_env env;
	int fd;
	__u32 graph;
	__u64 c0[__PTASK_COUNT_MAX];
};

FIXTURE_SETUP(ring)
{
	PT_ENV_SETUP(&self->env);
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600,
				   &self->graph));
	ASSERT_PT(0, pt_counts_read(self->c0));
}

FIXTURE_TEARDOWN(ring)
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

TEST_F(ring, setup_sizes)
{
	struct ptask_ring_setup a;
	__u32 sq;

	ASSERT_PT(0, kr_setup(self->fd, 0, &a));
	ASSERT_EQ((__u32)PTASK_RING_SQ_DEFAULT, a.sq_entries);
	ASSERT_EQ(a.sq_entries * PTASK_RING_CQ_FACTOR, a.cq_entries);
	ASSERT_EQ(1U, a.ring);
	ASSERT_EQ(PTASK_RING_MMAP_BASE, a.mmap_offset);
	ASSERT_EQ(0ULL, a.region_bytes % (__u64)getpagesize());
	ASSERT_LE(pc_ring_bytes(a.sq_entries, a.cq_entries), a.region_bytes);
	ASSERT_EQ(self->c0[PTASK_COUNT_BUFFERS] + 1,
		  count_now(PTASK_COUNT_BUFFERS));
	for (sq = 1; sq <= PTASK_RING_ENTRIES_MAX / PTASK_RING_CQ_FACTOR;
	     sq <<= 1) {
		ASSERT_PT(0, kr_setup(self->fd, sq, &a));
		ASSERT_EQ(sq, a.sq_entries);
		ASSERT_EQ((pc_ring_bytes(sq, sq * PTASK_RING_CQ_FACTOR) +
			   getpagesize() - 1) & ~(size_t)(getpagesize() - 1),
			  a.region_bytes);
	}
	ASSERT_PT(-EINVAL, kr_setup(self->fd, 3, NULL));
	ASSERT_PT(-EINVAL, kr_setup(self->fd, 96, NULL));
	ASSERT_PT(-EINVAL, kr_setup(self->fd, PTASK_RING_ENTRIES_MAX, NULL));
	ASSERT_PT(-EINVAL, kr_setup(self->fd, 1U << 31, NULL));
}

TEST_F(ring, setup_fields)
{
	struct ptask_ring_setup a = { .size = sizeof(a) };
	char big[2 * 4096] = { 0 };

	a.flags = 1;
	ASSERT_PT(-EINVAL, pt_ioctl(self->fd, PTASK_IOC_RING_SETUP, &a));
	a.flags = 0;
	a.reserved = 1;
	ASSERT_PT(-EINVAL, pt_ioctl(self->fd, PTASK_IOC_RING_SETUP, &a));
	a.reserved = 0;
	a.cq_entries = 128;
	ASSERT_PT(-EINVAL, pt_ioctl(self->fd, PTASK_IOC_RING_SETUP, &a));
	a.cq_entries = 0;
	a.ring = 1;
	ASSERT_PT(-EINVAL, pt_ioctl(self->fd, PTASK_IOC_RING_SETUP, &a));
	a.ring = 0;
	a.size = PTASK_RING_SETUP_SIZE_VER0 - 1;
	ASSERT_PT(-EINVAL, pt_ioctl(self->fd, PTASK_IOC_RING_SETUP, &a));
	/* A larger struct with non-zero bytes past what the module knows. */
	memcpy(big, &a, sizeof(a));
	((struct ptask_ring_setup *)big)->size = sizeof(a) + 8;
	big[sizeof(a) + 3] = 1;
	ASSERT_PT(-E2BIG, pt_ioctl(self->fd, PTASK_IOC_RING_SETUP, big));
	((struct ptask_ring_setup *)big)->size = sizeof(big);
	ASSERT_PT(-E2BIG, pt_ioctl(self->fd, PTASK_IOC_RING_SETUP, big));
	ASSERT_PT(-EFAULT, pt_ioctl(self->fd, PTASK_IOC_RING_SETUP, NULL));
	/* Zeroes past the struct are fine, and nothing was made before. */
	big[sizeof(a) + 3] = 0;
	((struct ptask_ring_setup *)big)->size = sizeof(a) + 8;
	ASSERT_PT(0, pt_ioctl(self->fd, PTASK_IOC_RING_SETUP, big));
	ASSERT_EQ(1U, ((struct ptask_ring_setup *)big)->ring);
}

TEST_F(ring, per_fd_limit_and_close_frees)
{
	int fd2 = pt_env_open(&self->env), i;

	ASSERT_LE(0, fd2);
	for (i = 0; i < PTASK_RING_MAX_PER_FD; i++) {
		ASSERT_PT(0, kr_setup(fd2, 1, NULL));
	}
	ASSERT_PT(-ENOSPC, kr_setup(fd2, 1, NULL));
	/* Another fd has its own. */
	ASSERT_PT(0, kr_setup(self->fd, 1, NULL));
	ASSERT_EQ(self->c0[PTASK_COUNT_BUFFERS] + PTASK_RING_MAX_PER_FD + 1,
		  count_now(PTASK_COUNT_BUFFERS));
	pt_env_close(&self->env, fd2);
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_BUFFERS,
				   self->c0[PTASK_COUNT_BUFFERS] + 1,
				   PT_WAIT_MS));
}

TEST_F(ring, mmap_region)
{
	struct ptask_ring_hdr h;
	struct kr k, k2;
	size_t len;
	void *p;

	ASSERT_PT(0, kr_open(&self->env, self->fd, 8, &k));
	memcpy(&h, k.map, sizeof(h));
	ASSERT_EQ(PTASK_RING_MAGIC, h.magic);
	ASSERT_EQ((__u32)PTASK_RING_VERSION, h.version);
	ASSERT_EQ(8U, h.sq_entries);
	ASSERT_EQ(16U, h.cq_entries);
	ASSERT_EQ(0, pc_ring_q_ready(&k.r.cq));
	ASSERT_EQ(8, pc_ring_q_space(&k.r.sq));
	ASSERT_PT(0, kr_open(&self->env, self->fd, 1, &k2));
	ASSERT_EQ(PTASK_RING_MMAP_BASE + PTASK_RING_MMAP_STRIDE,
		  k2.setup.mmap_offset);
	len = k.setup.region_bytes;
	/* Private, too long, between rings, no such ring. */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd,
		 k.setup.mmap_offset);
	ASSERT_EQ(MAP_FAILED, p);
	ASSERT_EQ(EINVAL, errno);
	p = mmap(NULL, len + getpagesize(), PROT_READ | PROT_WRITE,
		 MAP_SHARED, self->fd, k.setup.mmap_offset);
	ASSERT_EQ(MAP_FAILED, p);
	ASSERT_EQ(EINVAL, errno);
	p = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, k.setup.mmap_offset + getpagesize());
	ASSERT_EQ(MAP_FAILED, p);
	ASSERT_EQ(ENOENT, errno);
	p = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, PTASK_RING_MMAP_BASE + 5 * PTASK_RING_MMAP_STRIDE);
	ASSERT_EQ(MAP_FAILED, p);
	ASSERT_EQ(ENOENT, errno);
	p = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->fd, PTASK_RING_MMAP_BASE +
		 (__u64)PTASK_RING_MAX_PER_FD * PTASK_RING_MMAP_STRIDE);
	ASSERT_EQ(MAP_FAILED, p);
	ASSERT_EQ(ENOENT, errno);
	/* Another fd's ring is not this fd's. */
	p = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE, MAP_SHARED,
		 pt_env_open(&self->env), k.setup.mmap_offset);
	ASSERT_EQ(MAP_FAILED, p);
	ASSERT_EQ(ENOENT, errno);
	/* A mapping outlives the fd (and counts while it does). */
	pt_env_close(&self->env, self->fd);
	memcpy(&h, k.map, sizeof(h));
	ASSERT_EQ(PTASK_RING_MAGIC, h.magic);
	ASSERT_EQ(self->c0[PTASK_COUNT_BUFFERS] + 2,
		  count_now(PTASK_COUNT_BUFFERS));
}

TEST_F(ring, enter_errors_and_empty)
{
	struct ptask_ring_enter e = { .size = sizeof(e) };
	struct kr k;

	ASSERT_PT(0, kr_open(&self->env, self->fd, 4, &k));
	/* Empty: nothing consumed. */
	ASSERT_PT(0, kr_enter_ex(self->fd, k.setup.ring, 4, 4, 0));
	ASSERT_PT(0, kr_enter_ex(self->fd, k.setup.ring, 0, 0, 0));
	ASSERT_PT(-EINVAL, kr_enter_ex(self->fd, k.setup.ring, 5, 0, 0));
	ASSERT_PT(-ENOENT, kr_enter_ex(self->fd, 2, 1, 0, 0));
	ASSERT_PT(-ENOENT, kr_enter_ex(self->fd, 0, 1, 0, 0));
	e.ring = k.setup.ring;
	e.flags = 1;
	ASSERT_PT(-EINVAL, pt_ioctl(self->fd, PTASK_IOC_RING_ENTER, &e));
	e.flags = 0;
	e.reserved = 1;
	ASSERT_PT(-EINVAL, pt_ioctl(self->fd, PTASK_IOC_RING_ENTER, &e));
	e.reserved = 0;
	e.size = PTASK_RING_ENTER_SIZE_VER0 - 4;
	ASSERT_PT(-EINVAL, pt_ioctl(self->fd, PTASK_IOC_RING_ENTER, &e));
	ASSERT_PT(-EFAULT, pt_ioctl(self->fd, PTASK_IOC_RING_ENTER, NULL));
	/* A ring of another fd is not this fd's. */
	ASSERT_PT(-ENOENT, kr_enter_ex(pt_env_open(&self->env), k.setup.ring,
				       1, 0, 0));
}

TEST_F(ring, batch_push_pull_release)
{
	struct ptask_push push = { .size = sizeof(push) };
	struct ptask_pull pull = { .size = sizeof(pull) };
	struct ptask_datablock_release rel = { .size = sizeof(rel) };
	struct pt_copy_graph g;
	struct ptask_cqe cqe;
	__u32 h, h2, seed;
	__u64 off;
	struct kr k;
	void *p;

	ASSERT_NE(NULL, pt_env_executor(&self->env));
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, kr_open(&self->env, self->fd, 8, &k));
	ASSERT_PT(0, kr_create(&k, 4096, &h, &off));
	p = pt_env_map(&self->env, self->fd, off, 4096);
	ASSERT_NE(NULL, p);
	pt_fill(p, 4096, 7);
	ASSERT_PT(0, pt_db_make(self->fd, 64, 1, &h2));
	/* release (fire and forget), push, pull, release: one ENTER. */
	rel.handle = h2;
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_DATABLOCK_RELEASE,
			      PTASK_SQE_NO_CQE_ON_SUCCESS, 1, &rel,
			      sizeof(rel)));
	push.channel = g.in_chan[0];
	push.datablock = h;
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_PUSH, 0, 2, &push,
			      sizeof(push)));
	pull.channel = g.out_chan[0];
	pull.timeout_ns = pt_wait_deadline();
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_PULL, 0, 3, &pull,
			      sizeof(pull)));
	rel.handle = h;
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_DATABLOCK_RELEASE,
			      PTASK_SQE_NO_CQE_ON_SUCCESS, 4, &rel,
			      sizeof(rel)));
	ASSERT_PT(4, kr_enter(&k));
	ASSERT_EQ(1, kr_reap(&k, &cqe));
	ASSERT_EQ(2ULL, cqe.user_data);
	ASSERT_PT(0, cqe.res);
	ASSERT_EQ(1, kr_reap(&k, &cqe));
	ASSERT_EQ(3ULL, cqe.user_data);
	ASSERT_PT(0, cqe.res);
	ASSERT_EQ(0, kr_reap(&k, &cqe));	/* releases: no CQE */
	ASSERT_NE(0U, cqe.arg.pull.datablock);
	ASSERT_EQ(4096ULL, cqe.arg.pull.bytes);
	p = pt_env_map(&self->env, self->fd, cqe.arg.pull.mmap_offset,
		       4096);
	ASSERT_NE(NULL, p);
	seed = 7;
	ASSERT_PT(0, pt_check(p, 4096, &seed));
	/* A failing fire-and-forget release does complete. */
	rel.handle = cqe.arg.pull.datablock;
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_DATABLOCK_RELEASE,
			      PTASK_SQE_NO_CQE_ON_SUCCESS, 5, &rel,
			      sizeof(rel)));
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_DATABLOCK_RELEASE,
			      PTASK_SQE_NO_CQE_ON_SUCCESS, 6, &rel,
			      sizeof(rel)));
	ASSERT_PT(2, kr_enter(&k));
	ASSERT_EQ(1, kr_reap(&k, &cqe));
	ASSERT_EQ(6ULL, cqe.user_data);
	ASSERT_PT(-ENOENT, cqe.res);
	ASSERT_EQ(0, kr_reap(&k, &cqe));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_DATABLOCKS,
				   self->c0[PTASK_COUNT_DATABLOCKS],
				   PT_WAIT_MS));
}

/*
 * Each bad struct, once by its ioctl and once as a ring entry: the same
 * errno.  @size bytes of @arg travel (an entry takes at most 48).
 */
static int both_ways(struct kr *k, __u32 cmd, const void *arg, size_t size,
		     int *by_ioctl)
{
	unsigned char buf[64] = { 0 };

	memcpy(buf, arg, size);
	*by_ioctl = pt_ioctl(k->fd, cmd, buf);
	memcpy(buf, arg, size);
	return kr_call(k, cmd, buf, size);
}

#define SAME_ERRNO(want, cmd, arg, size) do {				\
	int __io, __ring = both_ways(&k, cmd, arg, size, &__io);	\
	EXPECT_PT(want, __io);						\
	EXPECT_PT(want, __ring);					\
} while (0)

TEST_F(ring, bad_entries_complete_with_ioctl_errno)
{
	struct ptask_push push = { .size = sizeof(push) };
	struct ptask_pull pull = { .size = sizeof(pull) };
	struct ptask_datablock_create cr = { .size = sizeof(cr) };
	struct ptask_datablock_release rel = { .size = sizeof(rel) };
	unsigned char raw[48] = { 0 };
	struct pt_copy_graph g;
	struct ptask_cqe cqe;
	__u32 h;
	struct kr k;

	ASSERT_PT(0, pt_build_copy1(self->fd, false, &g));
	ASSERT_PT(0, kr_open(&self->env, self->fd, 4, &k));
	ASSERT_PT(0, pt_db_make(self->fd, 64, 1, &h));

	/* Sizes: below the first version; non-zero bytes past the struct. */
	push.size = PTASK_PUSH_SIZE_VER0 - 1;
	SAME_ERRNO(-EINVAL, PTASK_IOC_PUSH, &push, sizeof(push));
	memcpy(raw, &push, sizeof(push));
	((struct ptask_push *)raw)->size = 40;
	raw[36] = 1;
	SAME_ERRNO(-E2BIG, PTASK_IOC_PUSH, raw, 40);
	raw[36] = 0;
	((struct ptask_push *)raw)->channel = g.in_chan[0];
	((struct ptask_push *)raw)->datablock = h;
	((struct ptask_push *)raw)->flags = PTASK_NONBLOCK;
	SAME_ERRNO(0, PTASK_IOC_PUSH, raw, 40);	/* zeroes past it: fine */
	push.size = sizeof(push);
	/* Flags, reserved fields, ranges. */
	push.flags = 1U << 7;
	SAME_ERRNO(-EINVAL, PTASK_IOC_PUSH, &push, sizeof(push));
	pull.flags = 1U << 5;
	SAME_ERRNO(-EINVAL, PTASK_IOC_PULL, &pull, sizeof(pull));
	pull.flags = 0;
	cr.bytes = 0;
	SAME_ERRNO(-EINVAL, PTASK_IOC_DATABLOCK_CREATE, &cr, sizeof(cr));
	cr.bytes = PTASK_DATABLOCK_MAX_BYTES + 1;
	SAME_ERRNO(-EINVAL, PTASK_IOC_DATABLOCK_CREATE, &cr, sizeof(cr));
	cr.bytes = 8;
	cr.flags = 2;
	SAME_ERRNO(-EINVAL, PTASK_IOC_DATABLOCK_CREATE, &cr, sizeof(cr));
	rel.reserved = 1;
	SAME_ERRNO(-EINVAL, PTASK_IOC_DATABLOCK_RELEASE, &rel, sizeof(rel));
	rel.reserved = 0;
	/* Handles. */
	rel.handle = 0xfffff0;
	SAME_ERRNO(-ENOENT, PTASK_IOC_DATABLOCK_RELEASE, &rel, sizeof(rel));
	push.flags = PTASK_NONBLOCK;
	push.channel = 0xfffff0;
	SAME_ERRNO(-ENOENT, PTASK_IOC_PUSH, &push, sizeof(push));
	push.channel = g.in_chan[0];
	push.datablock = 0xfffff0;
	SAME_ERRNO(-ENOENT, PTASK_IOC_PUSH, &push, sizeof(push));
	pull.channel = 0xfffff0;
	SAME_ERRNO(-ENOENT, PTASK_IOC_PULL, &pull, sizeof(pull));
	/* Relations and state: a pull from an input, a push to an output. */
	pull.channel = g.in_chan[0];
	SAME_ERRNO(-EINVAL, PTASK_IOC_PULL, &pull, sizeof(pull));
	push.channel = g.out_chan[0];
	push.datablock = h;
	SAME_ERRNO(-EINVAL, PTASK_IOC_PUSH, &push, sizeof(push));
	pull.channel = g.out_chan[0];
	pull.flags = PTASK_NONBLOCK;
	SAME_ERRNO(-EAGAIN, PTASK_IOC_PULL, &pull, sizeof(pull));
	pull.flags = 0;
	pull.timeout_ns = pt_deadline_ms(20);
	SAME_ERRNO(-ETIMEDOUT, PTASK_IOC_PULL, &pull, sizeof(pull));
	pull.timeout_ns = 0;

	/* What only an entry can get wrong. */
	ASSERT_PT(0, kr_queue(&k, 0xdeadbeef, 0, 7, &rel, sizeof(rel)));
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_GRAPH_RUN, 0, 8, &rel,
			      sizeof(rel)));
	rel.handle = h;
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_DATABLOCK_RELEASE, 1U << 4, 9,
			      &rel, sizeof(rel)));
	memset(raw, 0, sizeof(raw));
	((struct ptask_push *)raw)->size = 49;
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_PUSH, 0, 10, raw, sizeof(raw)));
	ASSERT_PT(4, kr_enter(&k));
	ASSERT_EQ(1, kr_reap(&k, &cqe));
	ASSERT_EQ(7ULL, cqe.user_data);
	ASSERT_PT(-ENOTTY, cqe.res);
	ASSERT_EQ(1, kr_reap(&k, &cqe));
	ASSERT_PT(-EOPNOTSUPP, cqe.res);
	ASSERT_EQ(1, kr_reap(&k, &cqe));
	ASSERT_PT(-EINVAL, cqe.res);
	ASSERT_EQ(1, kr_reap(&k, &cqe));
	ASSERT_EQ(10ULL, cqe.user_data);
	ASSERT_PT(-EINVAL, cqe.res);
	/* User mode's data-area flag: the module reads user pointers. */
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_DATABLOCK_RELEASE, PTASK_SQE_DATA,
			      11, &rel, sizeof(rel)));
	ASSERT_PT(1, kr_enter(&k));
	ASSERT_EQ(1, kr_reap(&k, &cqe));
	ASSERT_EQ(11ULL, cqe.user_data);
	ASSERT_PT(-EINVAL, cqe.res);
	/* The size bits of an entry's command are ignored, as the ioctl's. */
	rel.handle = h;
	ASSERT_PT(0, kr_call(&k, _IOW(PTASK_IOC_MAGIC, 0x08, char),
			     &rel, sizeof(rel)));
}

TEST_F(ring, full_cq_stops_enter)
{
	struct ptask_cqe cqe;
	struct ptask_datablock_create cr = { .size = sizeof(cr), .bytes = 8 };
	struct kr k;
	int i;

	ASSERT_PT(0, kr_open(&self->env, self->fd, 1, &k));
	ASSERT_EQ(2U, k.setup.cq_entries);
	/* Full SQ: the client sees no room. */
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_DATABLOCK_CREATE, 0, 1, &cr,
			      sizeof(cr)));
	ASSERT_PT(-ENOSPC, kr_queue(&k, PTASK_IOC_DATABLOCK_CREATE, 0, 9, &cr,
				    sizeof(cr)));
	ASSERT_PT(1, kr_enter(&k));
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_DATABLOCK_CREATE, 0, 2, &cr,
			      sizeof(cr)));
	ASSERT_PT(1, kr_enter(&k));
	/* CQ full: nothing consumed, the entry stays queued. */
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_DATABLOCK_CREATE, 0, 3, &cr,
			      sizeof(cr)));
	ASSERT_PT(0, kr_enter(&k));
	ASSERT_PT(0, kr_enter(&k));
	ASSERT_EQ(0, pc_ring_q_space(&k.r.sq));
	for (i = 1; i <= 2; i++) {
		ASSERT_EQ(1, kr_reap(&k, &cqe));
		ASSERT_EQ((__u64)i, cqe.user_data);
		ASSERT_PT(0, cqe.res);
		ASSERT_PT(0, pt_db_release(self->fd, cqe.arg.create.handle));
	}
	ASSERT_PT(1, kr_enter(&k));
	ASSERT_EQ(1, kr_reap(&k, &cqe));
	ASSERT_EQ(3ULL, cqe.user_data);
	ASSERT_PT(0, pt_db_release(self->fd, cqe.arg.create.handle));
}

TEST_F(ring, wrap_around)
{
	struct ptask_datablock_release rel = { .size = sizeof(rel) };
	struct ptask_datablock_create cr = { .size = sizeof(cr) };
	struct ptask_cqe cqe;
	struct kr k;
	__u32 h = 0;
	int i;

	/* 2 SQ slots, 4 CQ slots: the indices go round many times. */
	ASSERT_PT(0, kr_open(&self->env, self->fd, 2, &k));
	for (i = 0; i < 1000; i++) {
		if (h) {
			rel.handle = h;
			ASSERT_PT(0, kr_queue(&k, PTASK_IOC_DATABLOCK_RELEASE,
					      PTASK_SQE_NO_CQE_ON_SUCCESS, 0,
					      &rel, sizeof(rel)));
		}
		cr.bytes = 16 + i;
		ASSERT_PT(0, kr_queue(&k, PTASK_IOC_DATABLOCK_CREATE, 0, i + 1,
				      &cr, sizeof(cr)));
		ASSERT_PT(h ? 2 : 1, kr_enter(&k));
		ASSERT_EQ(1, kr_reap(&k, &cqe));
		ASSERT_EQ((__u64)i + 1, cqe.user_data);
		ASSERT_PT(0, cqe.res);
		ASSERT_EQ(16ULL + i, cqe.arg.create.bytes);
		h = cqe.arg.create.handle;
		ASSERT_EQ(0, kr_reap(&k, &cqe));
	}
	ASSERT_PT(0, pt_db_release(self->fd, h));
	ASSERT_EQ(1999U, __atomic_load_n(&k.r.sq.q->head, __ATOMIC_ACQUIRE));
	ASSERT_EQ(1000U, __atomic_load_n(&k.r.cq.q->tail, __ATOMIC_ACQUIRE));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_DATABLOCKS,
				   self->c0[PTASK_COUNT_DATABLOCKS],
				   PT_WAIT_MS));
}

TEST_F(ring, blocking_min_complete_and_timeout)
{
	struct ptask_pull pull = { .size = sizeof(pull) };
	struct ptask_datablock_create cr = { .size = sizeof(cr), .bytes = 8 };
	struct pt_copy_graph g;
	struct ptask_cqe cqe;
	__u64 t0;
	struct kr k;

	ASSERT_PT(0, pt_build_copy1(self->fd, false, &g));
	ASSERT_PT(0, kr_open(&self->env, self->fd, 4, &k));
	pull.channel = g.out_chan[0];
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_DATABLOCK_CREATE, 0, 1, &cr,
			      sizeof(cr)));
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_PULL, 0, 2, &pull, sizeof(pull)));
	/* min_complete 1: the create posts, the pull would block: stop. */
	ASSERT_PT(1, kr_enter_ex(self->fd, k.setup.ring, 2, 1, 0));
	ASSERT_EQ(1U, __atomic_load_n(&k.r.sq.q->head, __ATOMIC_ACQUIRE));
	ASSERT_EQ(1, kr_reap(&k, &cqe));
	ASSERT_PT(0, pt_db_release(self->fd, cqe.arg.create.handle));
	/* min_complete 0: never blocks, nothing consumed. */
	ASSERT_PT(0, kr_enter_ex(self->fd, k.setup.ring, 1, 0, 0));
	/* ENTER's deadline: -ETIMEDOUT, the pull still queued. */
	t0 = pt_now_ns();
	ASSERT_PT(-ETIMEDOUT, kr_enter_ex(self->fd, k.setup.ring, 1, 1,
					  pt_deadline_ms(50)));
	ASSERT_LE(t0 + 40000000ULL, pt_now_ns());
	ASSERT_EQ(0, kr_reap(&k, &cqe));
	/* The entry's own deadline: it completes with -ETIMEDOUT. */
	pull.timeout_ns = pt_deadline_ms(20);
	{
		struct ptask_sqe *sqe = (struct ptask_sqe *)
			(k.r.sq.slots + (__atomic_load_n(&k.r.sq.q->head,
				__ATOMIC_ACQUIRE) & (k.r.sq.entries - 1)) *
			 k.r.sq.size);

		sqe->arg.pull.timeout_ns = pull.timeout_ns;
	}
	ASSERT_PT(1, kr_enter_ex(self->fd, k.setup.ring, 1, 1,
				 pt_deadline_ms(PT_WAIT_MS)));
	ASSERT_EQ(1, kr_reap(&k, &cqe));
	ASSERT_EQ(2ULL, cqe.user_data);
	ASSERT_PT(-ETIMEDOUT, cqe.res);
}

static void on_alarm(int sig)
{
	(void)sig;
}

TEST_F(ring, signal_leaves_entry_queued)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct ptask_pull pull = { .size = sizeof(pull) };
	struct pt_copy_graph g;
	struct kr k;

	ASSERT_PT(0, pt_build_copy1(self->fd, false, &g));
	ASSERT_PT(0, kr_open(&self->env, self->fd, 4, &k));
	pull.channel = g.out_chan[0];
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_PULL, 0, 1, &pull, sizeof(pull)));
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));	/* no SA_RESTART */
	alarm(1);
	ASSERT_PT(-EINTR, kr_enter(&k));
	ASSERT_EQ(0U, __atomic_load_n(&k.r.sq.q->head, __ATOMIC_ACQUIRE));
	signal(SIGALRM, SIG_DFL);
}

TEST_F(ring, scribbled_ring)
{
	struct ptask_datablock_create cr = { .size = sizeof(cr), .bytes = 8 };
	struct ptask_cqe cqe;
	struct kr k;
	__u32 tail, head, h, i, seed = 12345;

	ASSERT_PT(0, kr_open(&self->env, self->fd, 4, &k));
	/* The header is never read again: garbage there changes nothing. */
	memset(k.map, 0xa5, sizeof(struct ptask_ring_hdr));
	ASSERT_PT(0, kr_create(&k, 8, &h, NULL));
	ASSERT_PT(0, pt_db_release(self->fd, h));
	/* An SQ tail far ahead: -EPROTO, until it makes sense again. */
	tail = __atomic_load_n(&k.r.sq.q->tail, __ATOMIC_ACQUIRE);
	__atomic_store_n(&k.r.sq.q->tail, tail + 5, __ATOMIC_RELEASE);
	ASSERT_PT(-EPROTO, kr_enter(&k));
	__atomic_store_n(&k.r.sq.q->tail, tail - 1, __ATOMIC_RELEASE);
	ASSERT_PT(-EPROTO, kr_enter(&k));
	__atomic_store_n(&k.r.sq.q->tail, tail, __ATOMIC_RELEASE);
	ASSERT_PT(0, kr_enter(&k));
	/* The module's SQ head is its own: scribbling the shared one... */
	__atomic_store_n(&k.r.sq.q->head, 777, __ATOMIC_RELEASE);
	ASSERT_PT(0, kr_enter(&k));
	/* A CQ head ahead of the tail, or too far behind it: -EPROTO. */
	head = __atomic_load_n(&k.r.cq.q->head, __ATOMIC_ACQUIRE);
	__atomic_store_n(&k.r.cq.q->head, head + 3, __ATOMIC_RELEASE);
	k.r.sq.q->head = tail;
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_DATABLOCK_CREATE, 0, 1, &cr,
			      sizeof(cr)));
	ASSERT_PT(-EPROTO, kr_enter(&k));
	__atomic_store_n(&k.r.cq.q->head, head - 100, __ATOMIC_RELEASE);
	ASSERT_PT(-EPROTO, kr_enter(&k));
	__atomic_store_n(&k.r.cq.q->head, head, __ATOMIC_RELEASE);
	ASSERT_PT(1, kr_enter(&k));
	ASSERT_EQ(1, kr_reap(&k, &cqe));
	ASSERT_PT(0, cqe.res);
	ASSERT_PT(0, pt_db_release(self->fd, cqe.arg.create.handle));
	/* Random entries: each completes with some errno, nothing breaks. */
	for (i = 0; i < 400; i++) {
		struct ptask_sqe *sqe;
		unsigned char *b;
		size_t j;

		ASSERT_LT(0, pc_ring_q_space(&k.r.sq));
		sqe = pc_ring_q_slot(&k.r.sq);
		b = (unsigned char *)sqe;
		for (j = 0; j < sizeof(*sqe); j++) {
			seed = seed * 1103515245U + 12345U;
			b[j] = (unsigned char)(seed >> 16);
		}
		/* Half of them name a real call, with a small size. */
		if (i & 1) {
			static const __u32 cmds[] = {
				PTASK_IOC_PUSH, PTASK_IOC_PULL,
				PTASK_IOC_DATABLOCK_CREATE,
				PTASK_IOC_DATABLOCK_RELEASE,
			};

			sqe->cmd = cmds[(seed >> 8) & 3];
			sqe->flags &= PTASK_SQE_FLAGS_ALL;
			sqe->arg.size = 16 + ((seed >> 4) & 31);
			if (sqe->cmd == PTASK_IOC_PUSH ||
			    sqe->cmd == PTASK_IOC_PULL)
				sqe->arg.push.flags |= PTASK_NONBLOCK;
		}
		pc_ring_q_publish(&k.r.sq, 1);
		ASSERT_PT(1, kr_enter(&k));
		while (kr_reap(&k, &cqe) == 1)
			;
	}
	/* Whatever those made goes with the fd (teardown checks). */
}

/* A child that dies with entries queued and one blocked in ENTER. */
TEST_F(ring, process_dies_with_entries_queued)
{
	pid_t pid;
	int st;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct ptask_datablock_create cr = {
			.size = sizeof(cr), .bytes = 1 << 16,
		};
		struct ptask_pull pull = { .size = sizeof(pull) };
		struct pt_copy_graph g;
		struct pt_env env;
		struct kr k, k2;
		int fd, i;

		if (pt_env_init(&env))
			_exit(PT_CHILD_FAIL);
		fd = pt_env_open(&env);
		if (fd < 0 || pt_build_copy1(fd, false, &g) ||
		    kr_open(&env, fd, 8, &k) || kr_open(&env, fd, 8, &k2))
			_exit(PT_CHILD_FAIL + 1);
		/* Datablocks made through the ring, never released... */
		for (i = 0; i < 4; i++)
			kr_queue(&k, PTASK_IOC_DATABLOCK_CREATE, 0, i, &cr,
				 sizeof(cr));
		if (kr_enter(&k) != 4)
			_exit(PT_CHILD_FAIL + 2);
		/* ... completions and entries left queued ... */
		for (i = 0; i < 4; i++)
			kr_queue(&k, PTASK_IOC_DATABLOCK_CREATE, 0, i, &cr,
				 sizeof(cr));
		/* ... and a pull blocked in ENTER on another ring. */
		pull.channel = g.out_chan[0];
		kr_queue(&k2, PTASK_IOC_PULL, 0, 1, &pull, sizeof(pull));
		kr_enter(&k2);
		_exit(PT_CHILD_FAIL + 3);
	}
	pt_env_track_pid(&self->env, pid);
	ASSERT_PT(0, pt_wait_sleeping(pid, pid, PT_WAIT_MS));
	ASSERT_LT(self->c0[PTASK_COUNT_BUFFERS] + 4,
		  count_now(PTASK_COUNT_BUFFERS));
	kill(pid, SIGKILL);
	st = pt_env_wait_pid(&self->env, pid, PT_WAIT_MS);
	ASSERT_TRUE(WIFSIGNALED(st));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_BUFFERS,
				   self->c0[PTASK_COUNT_BUFFERS], PT_WAIT_MS));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_DATABLOCKS,
				   self->c0[PTASK_COUNT_DATABLOCKS],
				   PT_WAIT_MS));
}

struct thread_arg {
	int fd;
	__u32 in, out;
	int rounds;
	int err;
};

/* One thread, one ring: push, pull and release through it. */
static void *ring_thread(void *p)
{
	struct thread_arg *a = p;
	struct ptask_push push = { .size = sizeof(push), .channel = a->in };
	struct ptask_pull pull = { .size = sizeof(pull), .channel = a->out };
	struct ptask_datablock_release rel = { .size = sizeof(rel) };
	struct ptask_cqe cqe;
	struct kr k;
	__u32 h;
	int i, n;

	a->err = kr_open(NULL, a->fd, 4, &k);
	for (i = 0; !a->err && i < a->rounds; i++) {
		a->err = kr_create(&k, 64, &h, NULL);
		if (a->err)
			break;
		push.datablock = h;
		rel.handle = h;
		pull.timeout_ns = pt_wait_deadline();
		kr_queue(&k, PTASK_IOC_PUSH, 0, 1, &push, sizeof(push));
		kr_queue(&k, PTASK_IOC_DATABLOCK_RELEASE,
			 PTASK_SQE_NO_CQE_ON_SUCCESS, 2, &rel, sizeof(rel));
		kr_queue(&k, PTASK_IOC_PULL, 0, 3, &pull, sizeof(pull));
		n = kr_enter(&k);
		if (n != 3) {
			a->err = n < 0 ? n : -EBADMSG;
			break;
		}
		if (kr_reap(&k, &cqe) != 1 || cqe.user_data != 1 || cqe.res ||
		    kr_reap(&k, &cqe) != 1 || cqe.user_data != 3 || cqe.res) {
			a->err = cqe.res ? cqe.res : -EBADMSG;
			break;
		}
		rel.handle = cqe.arg.pull.datablock;
		kr_queue(&k, PTASK_IOC_DATABLOCK_RELEASE,
			 PTASK_SQE_NO_CQE_ON_SUCCESS, 4, &rel, sizeof(rel));
	}
	if (!a->err && kr_enter(&k) != 1)
		a->err = -EBADMSG;
	if (k.map)
		munmap(k.map, k.setup.region_bytes);
	return NULL;
}

TEST_F(ring, threads_each_with_a_ring)
{
	struct pt_copy_spec spec = {
		.kind = PTASK_KIND_GPU, .n = 4, .in_cap = 2, .out_cap = 2,
		.run = true,
	};
	struct thread_arg args[4];
	pthread_t th[4];
	struct pt_copy_graph g;
	int i;

	ASSERT_NE(NULL, pt_env_executor(&self->env));
	ASSERT_PT(0, pt_build_copy(self->fd, &spec, &g));
	for (i = 0; i < 4; i++) {
		args[i] = (struct thread_arg){
			.fd = self->fd, .rounds = 100,
		};
		/* Each thread its own input and output: its own order. */
		args[i].in = g.in_chan[i];
		args[i].out = g.out_chan[i];
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, pthread_create(&th[i], NULL, ring_thread,
					    &args[i]));
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 4; i++) {
		EXPECT_PT(0, args[i].err);
	}
}

/* An executor's take entry: the struct at its first version (48 bytes). */
static void take_entry(struct ptask_exec_take *t, __u32 flags,
		       struct ptask_invocation *inv, __u32 max_inv,
		       struct ptask_invocation_port *ports, __u32 max_ports)
{
	memset(t, 0, sizeof(*t));
	t->size = PTASK_EXEC_TAKE_SIZE_VER0;
	t->flags = flags;
	t->max_invocations = max_inv;
	t->max_ports = max_ports;
	t->invocations = (uintptr_t)inv;
	t->ports = (uintptr_t)ports;
}

/*
 * A registered executor that takes through its ring and completes every
 * invocation (pass-through) with the next take, in one ENTER each.
 */
TEST_F(ring, executor_takes_and_completes_through_a_ring)
{
	static struct ptask_invocation inv[PT_EXEC_BATCH];
	static struct ptask_invocation_port ports[PT_EXEC_PORTS];
	struct ptask_exec_output outs[PT_EXEC_BATCH];
	struct ptask_exec_complete done;
	struct ptask_exec_take t;
	struct ptask_pull pl;
	struct pt_copy_graph g;
	struct ptask_cqe cqe;
	__u32 db[3], i, n, got = 0, s;
	int xfd, io;
	struct kr k, kc;
	void *p;

	PT_NEED_ROOT();
	xfd = pt_env_open(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(0, pt_nl_register(xfd));
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, kr_open(&self->env, xfd, 8, &k));
	for (i = 0; i < 3; i++) {
		ASSERT_PT(0, pt_db_make(self->fd, 4096, 30 + i, &db[i]));
		ASSERT_PT(0, pt_push(self->fd, g.in_chan[0], db[i], 0, 0,
				     pt_wait_deadline()));
	}
	/* A take of the struct's later version does not fit an entry. */
	take_entry(&t, 0, inv, PT_EXEC_BATCH, ports, PT_EXEC_PORTS);
	t.size = sizeof(t);
	ASSERT_PT(-EINVAL, kr_call(&k, PTASK_IOC_EXEC_TAKE, &t,
				   PTASK_EXEC_TAKE_SIZE_VER0));
	take_entry(&t, 0, inv, PT_EXEC_BATCH, ports, PT_EXEC_PORTS);
	t.timeout_ns = pt_wait_deadline();
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_EXEC_TAKE, 0, 100, &t,
			      PTASK_EXEC_TAKE_SIZE_VER0));
	while (got < 3) {
		ASSERT_PT(1, kr_enter_ex(xfd, k.setup.ring, 8, ~0U, 0) > 0);
		ASSERT_EQ(1, kr_reap(&k, &cqe));
		ASSERT_EQ(100ULL, cqe.user_data);
		ASSERT_PT(0, cqe.res);
		memcpy(&t, &cqe.arg, PTASK_EXEC_TAKE_SIZE_VER0);
		ASSERT_LE(1U, t.n_invocations);
		/* Completions, fire and forget, then the next take. */
		for (n = 0; n < t.n_invocations; n++, got++) {
			ASSERT_EQ(2U, inv[n].n_ports);
			outs[n].index = 1;
			outs[n].datablock = ports[inv[n].first_port].datablock;
			memset(&done, 0, sizeof(done));
			done.size = sizeof(done);
			done.id = inv[n].id;
			done.n_outputs = 1;
			done.outputs = (uintptr_t)&outs[n];
			ASSERT_PT(0, kr_queue(&k, PTASK_IOC_EXEC_COMPLETE,
					      PTASK_SQE_NO_CQE_ON_SUCCESS,
					      200 + n, &done, sizeof(done)));
		}
		if (got < 3) {
			take_entry(&t, 0, inv, PT_EXEC_BATCH, ports,
				   PT_EXEC_PORTS);
			t.timeout_ns = pt_wait_deadline();
			ASSERT_PT(0, kr_queue(&k, PTASK_IOC_EXEC_TAKE, 0, 100,
					      &t, PTASK_EXEC_TAKE_SIZE_VER0));
		}
	}
	ASSERT_LT(0, kr_enter_ex(xfd, k.setup.ring, 8, ~0U, 0));
	ASSERT_EQ(0, kr_reap(&k, &cqe));	/* every completion worked */
	for (i = 0; i < 3; i++) {
		ASSERT_PT(0, pt_pull(self->fd, g.out_chan[0], 0,
				     pt_wait_deadline(), &pl));
		ASSERT_EQ(db[i], pl.datablock);
		p = pt_env_map(&self->env, self->fd, pl.mmap_offset, pl.bytes);
		ASSERT_NE(NULL, p);
		ASSERT_PT(0, pt_check(p, pl.bytes, &s));
		ASSERT_EQ(30 + i, s);
		ASSERT_PT(0, pt_db_release(self->fd, db[i]));
		ASSERT_PT(0, pt_db_release(self->fd, db[i]));
	}

	/* Bad executor entries complete with the ioctl's errno. */
	memset(&done, 0, sizeof(done));
	done.size = sizeof(done);
	done.id = 0xdead;
	io = pt_ioctl(xfd, PTASK_IOC_EXEC_COMPLETE, &done);
	ASSERT_PT(-ENOENT, io);
	ASSERT_PT(io, kr_call(&k, PTASK_IOC_EXEC_COMPLETE, &done,
			      sizeof(done)));
	done.n_outputs = 1;
	done.outputs = 8;	/* unmapped */
	io = pt_ioctl(xfd, PTASK_IOC_EXEC_COMPLETE, &done);
	ASSERT_PT(-EFAULT, io);
	ASSERT_PT(io, kr_call(&k, PTASK_IOC_EXEC_COMPLETE, &done,
			      sizeof(done)));
	done.error_code = 1;	/* with status 0 */
	io = pt_ioctl(xfd, PTASK_IOC_EXEC_COMPLETE, &done);
	ASSERT_PT(-EINVAL, io);
	ASSERT_PT(io, kr_call(&k, PTASK_IOC_EXEC_COMPLETE, &done,
			      sizeof(done)));
	take_entry(&t, PTASK_NONBLOCK, inv, PT_EXEC_BATCH, ports,
		   PT_EXEC_PORTS);
	ASSERT_PT(-EAGAIN, kr_call(&k, PTASK_IOC_EXEC_TAKE, &t,
				   PTASK_EXEC_TAKE_SIZE_VER0));
	take_entry(&t, 0, inv, 0, ports, PT_EXEC_PORTS);
	ASSERT_PT(-EINVAL, kr_call(&k, PTASK_IOC_EXEC_TAKE, &t,
				   PTASK_EXEC_TAKE_SIZE_VER0));
	/* A take that would block stops ENTER at its deadline... */
	take_entry(&t, 0, inv, PT_EXEC_BATCH, ports, PT_EXEC_PORTS);
	ASSERT_PT(0, kr_queue(&k, PTASK_IOC_EXEC_TAKE, 0, 300, &t,
			      PTASK_EXEC_TAKE_SIZE_VER0));
	ASSERT_PT(-ETIMEDOUT, kr_enter_ex(xfd, k.setup.ring, 1, 1,
					  pt_deadline_ms(30)));
	/* ... and an fd that is no executor gets the ioctl's -EPERM. */
	io = pt_exec_take(self->fd, PTASK_NONBLOCK, 0, inv, 1, ports, 4,
			  &n, &n);
	ASSERT_PT(-EPERM, io);
	ASSERT_PT(0, kr_open(&self->env, self->fd, 2, &kc));
	take_entry(&t, PTASK_NONBLOCK, inv, 1, ports, 4);
	ASSERT_PT(io, kr_call(&kc, PTASK_IOC_EXEC_TAKE, &t,
			      PTASK_EXEC_TAKE_SIZE_VER0));
}

TEST_HARNESS_MAIN
