// SPDX-License-Identifier: GPL-2.0
/*
 * source_kernel_test - ptaskd's kernel-mode source (daemon/kernel/source_kernel.c)
 * and netlink registration (daemon/kernel/netlink.c) against ptask.ko, with no
 * engine: the test takes and completes by hand through struct
 * pd_source_ops, as the engine will.  Runs in the test guest (root).
 *
 *	client fd: push -> [in] -> copy (GPU) -> [out] -> pull
 *	source:    pd_kernel_source_open (registered fd), ops->take/complete
 *
 * Built from this file, daemon/kernel/source_kernel.c, daemon/kernel/netlink.c and the
 * kselftest library (tests/kselftest/lib.c), statically.
 */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "pt_harness.h"
#include "daemon/kernel/source_kernel.h"
#include "daemon/kernel/netlink.h"

static struct ptask_invocation inv[PT_EXEC_BATCH];
static struct ptask_invocation_port ports[PT_EXEC_PORTS];

/* A backend with two simulated devices and no operations: only its info. */
static void fake_backend(struct pd_backend *be)
{
	uint32_t i;

	memset(be, 0, sizeof(*be));
	be->ndev = 2;
	for (i = 0; i < be->ndev; i++) {
		/* Every byte used, no NUL: netlink.c must cut it to 63. */
		memset(be->info[i].name, 'a' + i, sizeof(be->info[i].name));
		be->info[i].kind = PTASK_ACCEL_SIM;
		be->info[i].memory = 1ULL << 30;
		be->info[i].cores = 80;
		be->info[i].core_khz = 1400000;
		be->info[i].mem_khz = 877000;
		be->info[i].strength = 1.0;
	}
}

FIXTURE(src) {
	struct pt_env env;
	struct pd_backend be;
	struct pd_source *s;
	int fd;		/* the client */
};

FIXTURE_SETUP(src)
{
	PT_ENV_SETUP(&self->env);
	if (geteuid() != 0)
		SKIP(pt_skip_exit(), "needs root (CAP_SYS_ADMIN) to register an executor");
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
	fake_backend(&self->be);
	ASSERT_PT(0, pd_kernel_source_open(&self->be, -1, &self->s));
}

FIXTURE_TEARDOWN(src)
{
	if (self->s)
		pd_kernel_source_close(self->s);
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

/* ops->take of everything queued, waiting up to @ms. */
static int take(struct pd_source *s, unsigned int ms, __u32 *n_inv)
{
	struct ptask_exec_take t = {
		.max_invocations = PT_EXEC_BATCH,
		.max_ports = PT_EXEC_PORTS,
		.timeout_ns = ms ? pt_deadline_ms(ms) : 0,
	};
	int r;

	r = s->ops->take(s, &t, inv, ports, NULL);
	if (!r)
		*n_inv = t.n_invocations;
	return r;
}

static const struct ptask_invocation_port *
port_kind(const struct ptask_invocation *iv, __u32 kind)
{
	__u32 i;

	for (i = 0; i < iv->n_ports; i++)
		if (ports[iv->first_port + i].kind == kind)
			return &ports[iv->first_port + i];
	return NULL;
}

/* Completes one-in one-out @iv by passing its input through. */
static int pass(struct pd_source *s, const struct ptask_invocation *iv)
{
	const struct ptask_invocation_port *in = port_kind(iv, PTASK_PORT_INPUT);
	const struct ptask_invocation_port *out = port_kind(iv, PTASK_PORT_OUTPUT);
	struct ptask_exec_complete c = { .id = iv->id, .n_outputs = 1,
					 .gpu_ns = 1000 };
	struct ptask_exec_output o;

	if (!in || !out)
		return -ENXIO;
	o.index = out->index;
	o.datablock = in->datablock;
	return s->ops->complete(s, &c, &o, NULL);
}

/*
 * Completes one-in one-out @iv as the engine does: map the input, create
 * the output, copy, complete, unmap both.
 */
static int copy(struct pd_source *s, const struct ptask_invocation *iv)
{
	const struct ptask_invocation_port *in = port_kind(iv, PTASK_PORT_INPUT);
	const struct ptask_invocation_port *out = port_kind(iv, PTASK_PORT_OUTPUT);
	struct ptask_exec_complete c = { .id = iv->id, .n_outputs = 1 };
	struct ptask_exec_output o;
	void *src, *dst;
	__u32 db;
	int r;

	if (!in || !out)
		return -ENXIO;
	r = s->ops->db_map(s, in->datablock, in->mmap_offset, in->bytes, &src);
	if (r)
		return r;
	r = s->ops->db_create(s, iv, in->bytes, &db, &dst, NULL);
	if (r)
		goto out_unmap_src;
	memcpy(dst, src, in->bytes);
	o.index = out->index;
	o.datablock = db;
	r = s->ops->complete(s, &c, &o, NULL);
	if (r)
		s->ops->db_release(s, db, NULL);
	s->ops->db_unmap(s, db, dst, in->bytes);
out_unmap_src:
	s->ops->db_unmap(s, in->datablock, src, in->bytes);
	return r;
}

TEST_F(src, registers_with_inventory)
{
	struct pc_genl_info info;
	__u64 n;

	ASSERT_TRUE(pd_kernel_available());
	ASSERT_PT(0, pt_executors_read(&n));
	ASSERT_EQ(self->env.base_executors + 1, n);
	ASSERT_PT(0, pc_genl_get_info(&info));
	ASSERT_EQ((__u32)PTASK_ABI_VERSION, info.abi);
	ASSERT_EQ(n, info.executors);
	ASSERT_LE(0, pd_kernel_source_fd(self->s));
	/* A second registration of the same fd is refused. */
	ASSERT_PT(-EALREADY, pd_nl_exec_register(pd_kernel_source_fd(self->s),
						 &self->be, -1));
	pd_kernel_source_close(self->s);
	self->s = NULL;
	ASSERT_PT(0, pt_executors_wait(self->env.base_executors, PT_WAIT_MS));
}

TEST_F(src, pass_through)
{
	struct pt_copy_graph g;
	__u32 n, seed, i, j;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	for (i = 0; i < 3; i++)
		ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 4096, 100 + i,
					  0, 0, 0));
	for (i = 0; i < 3; i += n) {
		ASSERT_PT(0, take(self->s, 2000, &n));
		ASSERT_LE(1U, n);
		for (j = 0; j < n; j++)
			ASSERT_PT(0, pass(self->s, &inv[j]));
	}
	for (i = 0; i < 3; i++) {
		ASSERT_PT(0, pt_pull_seed(self->fd, g.out_chan[0], 0,
					  pt_wait_deadline(), &seed, NULL, NULL));
		ASSERT_EQ(100U + i, seed);
	}
}

TEST_F(src, copy_through_mappings)
{
	struct pd_kernel_stats st;
	struct pt_chain c;
	__u32 n, seed, i, done = 0;

	/* Two stages: stage 1's input is the datablock stage 0 made. */
	ASSERT_PT(0, pt_build_chain(self->fd, NULL, 2, PTASK_KIND_GPU, 4, &c));
	ASSERT_PT(0, pt_graph_run(self->fd, c.graph));
	ASSERT_PT(0, pt_push_seed(self->fd, c.chan[0], 3 * 4096 + 5, 7, 0, 0, 0));
	while (done < 2) {
		ASSERT_PT(0, take(self->s, 2000, &n));
		for (i = 0; i < n; i++, done++)
			ASSERT_PT(0, copy(self->s, &inv[i]));
	}
	ASSERT_PT(0, pt_pull_seed(self->fd, c.chan[2], 0, pt_wait_deadline(),
				  &seed, NULL, NULL));
	ASSERT_EQ(7U, seed);
	pd_kernel_source_stats(self->s, &st);
	EXPECT_EQ(2U, st.taken);
	EXPECT_EQ(2U, st.completed);
	EXPECT_EQ(2U, st.creates);
	/* The pushed input and two outputs mapped; stage 1's input a hit. */
	EXPECT_EQ(3U, st.maps);
	EXPECT_EQ(1U, st.hits);
	EXPECT_EQ(st.mapped, st.idle);
	/*
	 * All three died (the pull released the last): a take that finds
	 * nothing reads the module's death notices, and their mappings go.
	 */
	ASSERT_PT(-ETIMEDOUT, take(self->s, 100, &n));
	pd_kernel_source_stats(self->s, &st);
	EXPECT_EQ(3U, st.forgotten);
	EXPECT_EQ(0U, st.forgotten_lost);
	EXPECT_EQ(0U, st.mapped);
	EXPECT_EQ(3U, st.unmaps);
}

TEST_F(src, idle_source_drops_its_mappings)
{
	struct pd_kernel_stats st;
	struct pt_copy_graph g;
	__u32 n;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 8192, 3, 0, 0, 0));
	ASSERT_PT(0, take(self->s, 2000, &n));
	ASSERT_EQ(1U, n);
	ASSERT_PT(0, copy(self->s, &inv[0]));
	pd_kernel_source_stats(self->s, &st);
	ASSERT_EQ(2U, st.idle);
	/* Nothing queued: the take times out and empties the cache. */
	ASSERT_PT(-ETIMEDOUT, take(self->s, 200, &n));
	pd_kernel_source_stats(self->s, &st);
	ASSERT_EQ(0U, st.mapped);
	ASSERT_EQ(st.maps, st.unmaps);
	ASSERT_PT(0, pt_pull_seed(self->fd, g.out_chan[0], 0,
				  pt_wait_deadline(), NULL, NULL, NULL));
}

TEST_F(src, take_deadline_and_nonblock)
{
	struct ptask_exec_take t = {
		.flags = PTASK_NONBLOCK,
		.max_invocations = PT_EXEC_BATCH,
		.max_ports = PT_EXEC_PORTS,
	};
	__u64 t0;
	__u32 n;

	ASSERT_PT(-EAGAIN, self->s->ops->take(self->s, &t, inv, ports, NULL));
	t0 = pt_now_ns();
	ASSERT_PT(-ETIMEDOUT, take(self->s, 150, &n));
	/* Not before its deadline; after it, only as late as a busy host is. */
	ASSERT_LE(150000000ULL, pt_now_ns() - t0);
	ASSERT_GT(PT_WAIT_MS * 1000000ULL, pt_now_ns() - t0);
}

struct blocked_take {
	struct pd_source *s;
	pid_t tid;		/* atomic */
	int done;		/* atomic */
	int r;
};

static void *taker(void *arg)
{
	struct blocked_take *b = arg;
	__u32 n;

	__atomic_store_n(&b->tid, pt_gettid(), __ATOMIC_SEQ_CST);
	b->r = take(b->s, 0, &n);	/* no deadline */
	__atomic_store_n(&b->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * interrupt wakes a take that has no deadline, without a signal: only the
 * wake-up can end it, so it ending at all (within PT_WAIT_MS) is the check.
 */
TEST_F(src, interrupt_wakes_a_blocked_take)
{
	struct blocked_take b = { .s = self->s, .r = 1 };
	struct pt_copy_graph g;
	__u64 deadline;
	pthread_t th;
	pid_t tid;
	__u32 n;

	ASSERT_EQ(0, pthread_create(&th, NULL, taker, &b));
	tid = pt_wait_tid(&b.tid);
	EXPECT_NE(0, tid);
	EXPECT_PT(0, pt_wait_sleeping(getpid(), tid, PT_WAIT_MS));
	pt_sleep_ms(200);
	ASSERT_EQ(0, __atomic_load_n(&b.done, __ATOMIC_SEQ_CST));
	self->s->ops->interrupt(self->s);
	deadline = pt_wait_deadline();
	while (!__atomic_load_n(&b.done, __ATOMIC_SEQ_CST) &&
	       pt_now_ns() < deadline)
		pt_sleep_ms(2);
	/* Not woken: failing here ends the test's process, and the thread. */
	ASSERT_EQ(1, __atomic_load_n(&b.done, __ATOMIC_SEQ_CST));
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_PT(-EINTR, b.r);
	/* Sticky, even with work queued. */
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0, 0, 0));
	ASSERT_PT(-EINTR, take(self->s, 100, &n));
}

TEST_F(src, ptask_info_and_code)
{
	struct ptask_exec_ptask_info pi = { .ptask = 0 };
	struct pt_copy_graph g;
	char code[4096];

	ASSERT_PT(0, pt_build_copy1(self->fd, false, &g));
	pi.ptask = g.ptask;
	ASSERT_PT(0, self->s->ops->ptask_info(self->s, &pi, NULL));
	ASSERT_EQ((__u32)PTASK_KIND_GPU, pi.kind);
	ASSERT_EQ(2U, pi.nports);
	ASSERT_STREQ("copy", pi.entry);
	ASSERT_EQ(pt_dummy_code_len, pi.code_len);
	ASSERT_GE(sizeof(code), pi.code_len);
	ASSERT_PT(0, self->s->ops->ptask_info(self->s, &pi, code));
	ASSERT_EQ(0, memcmp(code, pt_dummy_code, pt_dummy_code_len));
	pi.ptask = 0x7fffffff;
	ASSERT_PT(-ENOENT, self->s->ops->ptask_info(self->s, &pi, NULL));
}

TEST_F(src, create_and_release)
{
	struct pd_kernel_stats st;
	__u64 base, now;
	__u32 h;
	void *p;

	ASSERT_PT(0, pt_sysfs_u64("objects/datablocks", &base));
	ASSERT_PT(0, self->s->ops->db_create(self->s, NULL, 10000, &h, &p, NULL));
	memset(p, 0xa5, 10000);
	ASSERT_PT(0, pt_sysfs_u64("objects/datablocks", &now));
	ASSERT_EQ(base + 1, now);
	/* Released while mapped: the mapping goes with the last unmap. */
	ASSERT_PT(0, self->s->ops->db_release(self->s, h, NULL));
	ASSERT_PT(0, pt_sysfs_u64("objects/datablocks", &now));
	ASSERT_EQ(base, now);
	pd_kernel_source_stats(self->s, &st);
	ASSERT_EQ(1U, st.mapped);
	self->s->ops->db_unmap(self->s, h, p, 10000);
	pd_kernel_source_stats(self->s, &st);
	ASSERT_EQ(0U, st.mapped);
	ASSERT_EQ(1U, st.unmaps);
	ASSERT_PT(-ENOENT, self->s->ops->db_release(self->s, h, NULL));
	/* Released when idle: unmapped at once. */
	ASSERT_PT(0, self->s->ops->db_create(self->s, NULL, 64, &h, &p, NULL));
	self->s->ops->db_unmap(self->s, h, p, 64);
	pd_kernel_source_stats(self->s, &st);
	ASSERT_EQ(1U, st.idle);
	ASSERT_PT(0, self->s->ops->db_release(self->s, h, NULL));
	pd_kernel_source_stats(self->s, &st);
	ASSERT_EQ(0U, st.mapped);
}

TEST_F(src, close_fails_what_was_taken)
{
	struct pt_copy_graph g;
	struct ptask_pull pl;
	__u32 n;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 4096, 9, 0, 0, 0));
	ASSERT_PT(0, take(self->s, 2000, &n));
	ASSERT_EQ(1U, n);
	pd_kernel_source_close(self->s);
	self->s = NULL;
	ASSERT_PT(-EIO, pt_pull(self->fd, g.out_chan[0], 0, pt_wait_deadline(),
				&pl));
}

/* Two takers and completers on one source at once, as the engine runs. */
struct worker {
	struct pd_source *s;
	int done;
	int err;
};

/* Maps the input of @iv (to touch the cache), then passes it through. */
static int work_one(struct pd_source *s, const struct ptask_invocation *iv,
		    const struct ptask_invocation_port *pp)
{
	const struct ptask_invocation_port *in = &pp[iv->first_port];
	struct ptask_exec_complete c = { .id = iv->id, .n_outputs = 1 };
	struct ptask_exec_output o = {
		.index = pp[iv->first_port + 1].index,
		.datablock = in->datablock,
	};
	__u32 seed;
	void *p;
	int r;

	r = s->ops->db_map(s, in->datablock, in->mmap_offset, in->bytes, &p);
	if (r)
		return r;
	r = pt_check(p, in->bytes, &seed);
	s->ops->db_unmap(s, in->datablock, p, in->bytes);
	if (r)
		return r;
	return s->ops->complete(s, &c, &o, NULL);
}

static void *work(void *arg)
{
	struct ptask_invocation my_inv[4];
	struct ptask_invocation_port my_ports[4 * 2];
	struct worker *w = arg;
	struct ptask_exec_take t;
	__u32 i;
	int r;

	for (;;) {
		memset(&t, 0, sizeof(t));
		t.max_invocations = 4;
		t.max_ports = 8;
		r = w->s->ops->take(w->s, &t, my_inv, my_ports, NULL);
		if (r == -EINTR)
			return NULL;
		for (i = 0; !r && i < t.n_invocations; i++) {
			r = work_one(w->s, &my_inv[i], my_ports);
			if (!r)
				__atomic_add_fetch(&w->done, 1, __ATOMIC_SEQ_CST);
		}
		if (r) {
			w->err = r;
			return NULL;
		}
	}
}

TEST_F(src, two_workers)
{
	struct worker w[2] = { { .s = self->s }, { .s = self->s } };
	struct pd_kernel_stats st;
	struct pt_copy_graph g;
	pthread_t th[2];
	__u32 seed, i;
	int k;

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	for (k = 0; k < 2; k++)
		ASSERT_EQ(0, pthread_create(&th[k], NULL, work, &w[k]));
	for (i = 0; i < 200; i++) {
		ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 4096 * (1 + i % 3),
					  i, 0, 0, pt_wait_deadline()));
		if (i >= 2) {
			ASSERT_PT(0, pt_pull_seed(self->fd, g.out_chan[0], 0,
						  pt_wait_deadline(), &seed,
						  NULL, NULL));
			ASSERT_EQ(i - 2, seed);
		}
	}
	for (i = 198; i < 200; i++) {
		ASSERT_PT(0, pt_pull_seed(self->fd, g.out_chan[0], 0,
					  pt_wait_deadline(), &seed, NULL, NULL));
		ASSERT_EQ(i, seed);
	}
	self->s->ops->interrupt(self->s);
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, pthread_join(th[k], NULL));
		ASSERT_PT(0, w[k].err);
	}
	ASSERT_EQ(200, w[0].done + w[1].done);
	pd_kernel_source_stats(self->s, &st);
	ASSERT_EQ(200U, st.taken);
	ASSERT_EQ(200U, st.completed);
	ASSERT_EQ(200U, st.maps + st.hits);
}

TEST_HARNESS_MAIN
