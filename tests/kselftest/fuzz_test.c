// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_test - random sequences of every /dev/ptask ioctl from several
 * processes at once, half of them uid nobody without capabilities, with
 * SIGKILL at random moments (issue 13, item 5).
 *
 * Each worker keeps a pool of the handles its calls returned and fills
 * every field of each call's struct from a mix of values: 0, 1, handles
 * from the pool, boundaries (~0, 2^31, PTASK_* limits), random words,
 * sizes just under and over the published ones, pointers that are good,
 * NULL or bad.  Between calls it maps, scribbles on and unmaps
 * datablocks, closes and reopens its fds, forks children that die
 * mid-call, and (root) registers or unregisters as an executor and takes
 * and completes invocations.  Blocking calls get short deadlines, and a
 * call that blocks anyway is what the kills are for.
 *
 * The parent kills a random worker every few milliseconds and starts
 * another in its place.  Afterwards every sysfs object counter must be
 * back at its value before the run (pt_env_fini) and the VM harness
 * fails the run on any detector report (KASAN, lockdep, kmemleak, a
 * WARNING): so "the kernel survived" is the check, not any call's result.
 *
 * PT_FUZZ_OPS (calls per worker, default 300) and PT_FUZZ_SEED (default:
 * the clock; logged) make a run longer or repeatable:
 * PTASK_VM_ENV="PT_FUZZ_OPS=100000 PT_FUZZ_SEED=7" make check-vm-debug
 * T=fuzz.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "pt_harness.h"

#define FZ_WORKERS	6		/* at once; odd ones are nobody */
#define FZ_KILLS	12		/* workers killed during a run */
#define FZ_POOL		32
#define FZ_MAPS		4
/* mmap offsets name handles this way today (Documentation/uapi.md, 4) */
#define FZ_MMAP_SHIFT	16

/* What a handle in a pool names: calls mostly get the right kind. */
enum fz_kind { FK_GRAPH, FK_TMPL, FK_PTASK, FK_PORT, FK_CHAN, FK_DB, FK_N };

struct fz {
	__u64 rng;
	int fd[2];
	__u32 pool[FK_N][FZ_POOL];
	unsigned int npool[FK_N];
	__u64 ids[8];			/* invocation ids taken */
	struct { void *addr; size_t len; } maps[FZ_MAPS];
	bool root;
};

static __u64 fz_next(struct fz *f)
{
	__u64 x = f->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	f->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static __u32 below(struct fz *f, __u32 n)
{
	return n ? (__u32)(fz_next(f) % n) : 0;
}

static void pool_add(struct fz *f, enum fz_kind k, __u32 h)
{
	if (!h)
		return;
	f->pool[k][f->npool[k] % FZ_POOL] = h;
	f->npool[k]++;
}

/* A handle of kind @k, now and then of any kind (or none: 1). */
static __u32 pick(struct fz *f, enum fz_kind k)
{
	__u32 n;

	if (!below(f, 8))
		k = (enum fz_kind)below(f, FK_N);
	n = f->npool[k] < FZ_POOL ? f->npool[k] : FZ_POOL;
	return n ? f->pool[k][below(f, n)] : 1;
}

static __u32 pool_pick(struct fz *f)
{
	return pick(f, (enum fz_kind)below(f, FK_N));
}

/* A 32-bit field: mostly handles and small values, some edges. */
static __u32 v32(struct fz *f)
{
	static const __u32 edge[] = {
		0, 1, 2, 3, 7, 64, 255, 256, 1024, 1025, 4096, 65536,
		PTASK_MAX_PORTS, PTASK_MAX_PORTS + 1, 0x7fffffff, 0x80000000,
		0xfffffffe, 0xffffffff,
	};

	switch (below(f, 8)) {
	case 0:
	case 1:
	case 2:
		return pool_pick(f);
	case 3:
	case 4:
		return edge[below(f, sizeof(edge) / sizeof(edge[0]))];
	case 5:
		return below(f, 8);
	default:
		return (__u32)fz_next(f);
	}
}

static __u64 v64(struct fz *f)
{
	switch (below(f, 6)) {
	case 0:
		return 0;
	case 1:
		return below(f, 1 << 20);
	case 2:
		return ~0ULL;
	case 3:
		return PTASK_DATABLOCK_MAX_BYTES + below(f, 2);
	case 4:
		return (__u64)pool_pick(f) << FZ_MMAP_SHIFT;
	default:
		return fz_next(f);
	}
}

/* A deadline a few ms ahead, or (rarely) none or one long past. */
static __u64 deadline(struct fz *f)
{
	switch (below(f, 10)) {
	case 0:
		return 0;
	case 1:
		return 1;
	default:
		return pt_now_ns() + below(f, 3000000);
	}
}

static char buf_code[256] = ".version 7.0\n.target sm_50\n.entry k()\n{\nret;\n}\n";
static __u8 scratch[1 << 16];

/* A pointer for a user buffer: good, NULL or bad. */
static __u64 uptr(struct fz *f)
{
	switch (below(f, 8)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return ~0ULL & ~0xfffULL;
	default:
		return (uintptr_t)scratch;
	}
}

static const unsigned long cmds[] = {
	PTASK_IOC_GRAPH_OPEN, PTASK_IOC_TEMPLATE_OPEN, PTASK_IOC_PTASK_OPEN,
	PTASK_IOC_PORT_OPEN, PTASK_IOC_CHANNEL_OPEN, PTASK_IOC_LOOKUP,
	PTASK_IOC_DATABLOCK_CREATE, PTASK_IOC_DATABLOCK_RELEASE,
	PTASK_IOC_PUSH, PTASK_IOC_PULL, PTASK_IOC_GRAPH_RUN,
	PTASK_IOC_GRAPH_TERMINATE, PTASK_IOC_GRAPH_CLOSE,
	PTASK_IOC_PTASK_SET_PRIORITY, PTASK_IOC_PTASK_SET_GEOMETRY,
	PTASK_IOC_EXEC_TAKE, PTASK_IOC_EXEC_COMPLETE,
	PTASK_IOC_EXEC_PTASK_INFO, PTASK_IOC_EXEC_FORGOTTEN,
	PTASK_IOC_RING_SETUP, PTASK_IOC_RING_ENTER,
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

/* Calls that succeeded, per command, over every worker (shared memory). */
static unsigned long *succeeded;

/* Fills the struct of @cmd in @a (4096 bytes) and makes the call. */
static void one_call(struct fz *f, unsigned long cmd, __u8 *a)
{
	__u32 *w = (__u32 *)a, size = _IOC_SIZE(cmd), i;
	/* fd[0] makes the graphs; fd[1] may be an executor */
	bool exec_call = _IOC_NR(cmd) >= 0x40 && _IOC_NR(cmd) < 0x50;
	int fd = f->fd[exec_call ? below(f, 4) != 0 : below(f, 4) == 0], r;

	memset(a, 0, 4096);
	/* Now and then every word random-ish; then the steering fields. */
	for (i = 0; !below(f, 4) && i < size / 4; i++)
		w[i] = below(f, 3) ? 0 : v32(f);
	switch (cmd) {
	case PTASK_IOC_GRAPH_OPEN: {
		struct ptask_graph_open *g = (void *)a;

		g->flags = below(f, 4) ? PTASK_GRAPH_CREATE : v32(f);
		g->mode = below(f, 2) ? 0666 : v32(f) & 07777;
		snprintf(g->name, sizeof(g->name), below(f, 4) ? "fz%u" : "",
			 below(f, 4));
		break;
	}
	case PTASK_IOC_TEMPLATE_OPEN: {
		struct ptask_template_open *t = (void *)a;

		t->graph = pick(f, FK_GRAPH);
		t->stride = below(f, 3) ? 4 : v32(f);
		t->dims[0] = below(f, 3) ? 1 + below(f, 64) : v32(f);
		t->dims[1] = below(f, 3) ? 1 : v32(f);
		t->dims[2] = below(f, 3) ? 1 : v32(f);
		t->kind = below(f, 4);
		t->binding = below(f, 4);
		break;
	}
	case PTASK_IOC_PTASK_OPEN: {
		struct ptask_ptask_open *p = (void *)a;

		p->graph = pick(f, FK_GRAPH);
		p->kind = below(f, 3);
		p->nports = below(f, 3) ? 1 + below(f, 4) : v32(f);
		if (p->kind == PTASK_KIND_GPU || below(f, 4) == 0) {
			p->code = below(f, 6) ? (uintptr_t)buf_code : uptr(f);
			p->code_len = below(f, 6) ? strlen(buf_code) : v32(f);
			snprintf(p->entry, sizeof(p->entry), "k");
		}
		break;
	}
	case PTASK_IOC_PORT_OPEN: {
		struct ptask_port_open *p = (void *)a;

		p->ptask = pick(f, FK_PTASK);
		p->kind = below(f, 4);
		p->template = below(f, 2) ? 0 : pick(f, FK_TMPL);
		p->param_index = below(f, 4);
		p->flags = below(f, 4) ? 0 : v32(f);
		break;
	}
	case PTASK_IOC_CHANNEL_OPEN: {
		struct ptask_channel_open *c = (void *)a;

		c->graph = pick(f, FK_GRAPH);
		c->src = below(f, 2) ? 0 : pick(f, FK_PORT);
		c->dst = below(f, 2) ? 0 : pick(f, FK_PORT);
		c->capacity = below(f, 4) ? 1 + below(f, 4) : v32(f);
		c->flags = below(f, 6) ? 0 : v32(f);
		break;
	}
	case PTASK_IOC_DATABLOCK_CREATE: {
		struct ptask_datablock_create *d = (void *)a;

		d->flags = below(f, 8) ? 0 : v32(f);
		d->template = below(f, 3) ? 0 : pick(f, FK_TMPL);
		d->bytes = d->template ? 0 : below(f, 4) ? 1 + below(f, 65536) :
			   v64(f);
		d->records = below(f, 2) ? 0 : v64(f);
		d->invocation = d->flags ? f->ids[below(f, 8)] : 0;
		break;
	}
	case PTASK_IOC_PUSH: {
		struct ptask_push *p = (void *)a;

		p->channel = pick(f, FK_CHAN);
		p->datablock = pick(f, FK_DB);
		p->flags = below(f, 2) ? PTASK_NONBLOCK : v32(f) & 0xff;
		p->timeout_ns = deadline(f);
		break;
	}
	case PTASK_IOC_PULL: {
		struct ptask_pull *p = (void *)a;

		p->channel = pick(f, FK_CHAN);
		p->flags = below(f, 2) ? PTASK_NONBLOCK : v32(f) & 0xff;
		p->timeout_ns = deadline(f);
		break;
	}
	case PTASK_IOC_EXEC_TAKE: {
		struct ptask_exec_take *t = (void *)a;

		t->flags = below(f, 2) ? PTASK_NONBLOCK : v32(f) & 0x1f;
		t->max_invocations = below(f, 4) ? 1 + below(f, 4) : v32(f);
		t->max_ports = below(f, 4) ? 1 + below(f, 16) : v32(f);
		t->invocations = uptr(f);
		t->ports = below(f, 2) ? (uintptr_t)scratch + 8192 : uptr(f);
		t->timeout_ns = deadline(f);
		break;
	}
	case PTASK_IOC_EXEC_COMPLETE: {
		struct ptask_exec_complete *c = (void *)a;

		c->id = below(f, 3) ? f->ids[below(f, 8)] : v64(f);
		c->n_outputs = below(f, 6);
		c->outputs = uptr(f);
		c->status = below(f, 2) ? 0 : -(int)below(f, 4096);
		c->flags = below(f, 4) ? 0 : below(f, 4);
		break;
	}
	case PTASK_IOC_EXEC_FORGOTTEN: {
		struct ptask_exec_forgotten *x = (void *)a;

		x->max_handles = below(f, 4) ? 1 + below(f, 64) : v32(f);
		x->handles = uptr(f);
		break;
	}
	case PTASK_IOC_GRAPH_RUN:
	case PTASK_IOC_GRAPH_TERMINATE:
	case PTASK_IOC_GRAPH_CLOSE:
		((struct ptask_graph_ctl *)a)->graph = pick(f, FK_GRAPH);
		break;
	case PTASK_IOC_DATABLOCK_RELEASE:
		((struct ptask_datablock_release *)a)->handle = pick(f, FK_DB);
		break;
	case PTASK_IOC_PTASK_SET_PRIORITY:
		((struct ptask_priority *)a)->ptask = pick(f, FK_PTASK);
		((struct ptask_priority *)a)->flags = 1 + below(f, 3);
		break;
	case PTASK_IOC_PTASK_SET_GEOMETRY:
		((struct ptask_geometry *)a)->ptask = pick(f, FK_PTASK);
		break;
	case PTASK_IOC_LOOKUP: {
		struct ptask_lookup *l = (void *)a;

		l->graph = pick(f, FK_GRAPH);
		l->type = below(f, 6);
		snprintf(l->name, sizeof(l->name), "n%u", below(f, 3));
		break;
	}
	case PTASK_IOC_EXEC_PTASK_INFO: {
		struct ptask_exec_ptask_info *x = (void *)a;

		x->ptask = pick(f, FK_PTASK);
		x->code = below(f, 2) ? 0 : uptr(f);
		x->code_len = below(f, 2) ? sizeof(scratch) : v32(f);
		break;
	}
	case PTASK_IOC_RING_SETUP:
		break;
	}
	/* The size: mostly right, sometimes short, long or absurd. */
	switch (below(f, 12)) {
	case 0:
		w[0] = below(f, size);
		break;
	case 1:
		w[0] = size + 8 * below(f, 4);
		a[size + 3] = (__u8)below(f, 2);	/* non-zero tail: E2BIG */
		break;
	case 2:
		w[0] = v32(f);
		break;
	default:
		w[0] = size;
	}
	r = ioctl(fd, cmd, a);
	if (r < 0)
		return;
	for (i = 0; i < NCMDS; i++)
		if (cmds[i] == cmd)
			__atomic_add_fetch(&succeeded[i], 1, __ATOMIC_RELAXED);
	/* Learn the handles it made. */
	switch (cmd) {
	case PTASK_IOC_GRAPH_OPEN:
		pool_add(f, FK_GRAPH, ((struct ptask_graph_open *)a)->handle);
		break;
	case PTASK_IOC_TEMPLATE_OPEN:
		pool_add(f, FK_TMPL, ((struct ptask_template_open *)a)->handle);
		break;
	case PTASK_IOC_PTASK_OPEN:
		pool_add(f, FK_PTASK, ((struct ptask_ptask_open *)a)->handle);
		break;
	case PTASK_IOC_PORT_OPEN:
		pool_add(f, FK_PORT, ((struct ptask_port_open *)a)->handle);
		break;
	case PTASK_IOC_CHANNEL_OPEN:
		pool_add(f, FK_CHAN, ((struct ptask_channel_open *)a)->handle);
		break;
	case PTASK_IOC_DATABLOCK_CREATE:
		pool_add(f, FK_DB, ((struct ptask_datablock_create *)a)->handle);
		break;
	case PTASK_IOC_PULL:
		pool_add(f, FK_DB, ((struct ptask_pull *)a)->datablock);
		break;
	case PTASK_IOC_EXEC_TAKE: {
		struct ptask_exec_take *t = (void *)a;
		struct ptask_invocation *inv = (void *)scratch;

		for (i = 0; i < t->n_invocations && i < 8 &&
		     t->invocations == (uintptr_t)scratch; i++)
			f->ids[below(f, 8)] = inv[i].id;
		break;
	}
	}
}

/* mmap, scribble, maybe munmap; or munmap one. */
static void one_map(struct fz *f)
{
	unsigned int slot = below(f, FZ_MAPS);
	size_t len = below(f, 2) ? 4096 : 1 + below(f, 1 << 18);
	int prot = below(f, 8) ? PROT_READ | PROT_WRITE : (int)below(f, 8);
	void *p;

	if (f->maps[slot].addr) {
		munmap(f->maps[slot].addr, f->maps[slot].len);
		f->maps[slot].addr = NULL;
		return;
	}
	p = mmap(NULL, len, prot, below(f, 8) ? MAP_SHARED : MAP_PRIVATE,
		 f->fd[below(f, 2)], (off_t)((__u64)pick(f, FK_DB) <<
					     FZ_MMAP_SHIFT));
	if (p == MAP_FAILED)
		return;
	if (prot & PROT_WRITE)
		memset(p, (int)below(f, 256), len < 64 ? len : 64);
	if (below(f, 4) == 0)
		madvise(p, len, MADV_DONTNEED);
	f->maps[slot].addr = p;
	f->maps[slot].len = len;
}

/* A whole valid graph (copy, 1-3 ports, maybe running) into the pools. */
static void one_graph(struct fz *f)
{
	struct pt_copy_spec spec = {
		.kind = below(f, 4) ? PTASK_KIND_GPU : PTASK_KIND_CPU,
		.n = 1 + (int)below(f, 3), .in_cap = 1 + below(f, 3),
		.out_cap = 1 + below(f, 3), .sticky_mask = below(f, 4) ? 0 : 1,
		.run = below(f, 4) != 0,
	};
	struct pt_copy_graph g;
	__u32 db;
	int i;

	if (pt_build_copy(f->fd[0], &spec, &g))
		return;
	pool_add(f, FK_GRAPH, g.graph);
	pool_add(f, FK_PTASK, g.ptask);
	for (i = 0; i < g.n; i++) {
		pool_add(f, FK_PORT, g.in_port[i]);
		pool_add(f, FK_PORT, g.out_port[i]);
		pool_add(f, FK_CHAN, g.in_chan[i]);
		pool_add(f, FK_CHAN, g.out_chan[i]);
		/* work for the executors: a pushed datablock, kept in the pool */
		if (spec.run && !pt_db_make(f->fd[0], 64, below(f, 100), &db)) {
			pt_push(f->fd[0], g.in_chan[i], db, PTASK_NONBLOCK, 0, 0);
			pool_add(f, FK_DB, db);
		}
	}
}

static int open_fd(struct fz *f)
{
	return open(PT_DEV_PATH, O_RDWR | O_CLOEXEC |
		    (below(f, 2) ? O_NONBLOCK : 0));
}

static void __attribute__((noreturn)) worker(__u64 seed, bool nobody,
					     unsigned int ops)
{
	static __u8 arg[4096];
	struct fz f = { .rng = seed | 1, .root = !nobody };
	unsigned int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (nobody && (pt_become(PT_NOBODY) || pt_drop_all_caps()))
		_exit(PT_CHILD_FAIL);
	f.fd[0] = open_fd(&f);
	f.fd[1] = open_fd(&f);
	if (f.fd[0] < 0 || f.fd[1] < 0)
		_exit(PT_CHILD_SKIP);
	if (f.root && below(&f, 2))
		pt_nl_register(f.fd[1]);
	for (i = 0; i < ops; i++) {
		__u32 op = below(&f, 100);

		if (op < 75) {
			one_call(&f, cmds[below(&f, NCMDS)], arg);
		} else if (op < 80) {
			one_graph(&f);
		} else if (op < 90) {
			one_map(&f);
		} else if (op < 93) {
			int k = (int)below(&f, 2);

			close(f.fd[k]);
			f.fd[k] = open_fd(&f);
			if (f.fd[k] < 0)
				_exit(PT_CHILD_FAIL);
		} else if (op < 96) {
			if (f.root)
				pt_nl_register(f.fd[below(&f, 2)]);
		} else if (op < 98) {
			/* A child shares the fds and dies mid-sequence. */
			pid_t c = fork();

			if (c == 0) {
				unsigned int j;

				/* not inherited: dies with the worker too */
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				if (getppid() == 1)
					_exit(0);
				f.rng ^= 0x9e3779b97f4a7c15ULL;
				for (j = 0; j < 20; j++)
					one_call(&f, cmds[below(&f, NCMDS)],
						 arg);
				_exit(0);
			}
			if (c > 0) {
				if (below(&f, 2))
					kill(c, SIGKILL);
				waitpid(c, NULL, 0);
			}
		} else if (f.root) {
			pt_nl_unregister(f.fd[below(&f, 2)]);
		}
	}
	_exit(PT_CHILD_OK);
}

static unsigned long env_ul(const char *name, unsigned long dflt)
{
	const char *s = getenv(name);

	return s && *s ? strtoul(s, NULL, 0) : dflt;
}

FIXTURE(fuzz) {
	struct pt_env env;
};

FIXTURE_SETUP(fuzz)
{
	PT_ENV_SETUP(&self->env);
}

FIXTURE_TEARDOWN(fuzz)
{
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

TEST_F(fuzz, every_ioctl_from_many_processes_with_kills)
{
	unsigned int ops = (unsigned int)env_ul("PT_FUZZ_OPS", 300);
	__u64 seed = env_ul("PT_FUZZ_SEED", 0) ?: pt_now_ns();
	pid_t pids[FZ_WORKERS];
	unsigned int started = 0, kills = 0, ok = 0, skipped = 0, i;
	__u64 until;
	int st;

	PT_NEED_ROOT();
	succeeded = mmap(NULL, NCMDS * sizeof(*succeeded),
			 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			 -1, 0);
	ASSERT_NE(MAP_FAILED, succeeded);
	TH_LOG("seed %llu, %u calls a worker", (unsigned long long)seed, ops);
	for (i = 0; i < FZ_WORKERS; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i])
			worker(seed + started, i & 1, ops);
		started++;
	}
	/* Kill one every 5-25 ms and start another in its place. */
	while (kills < FZ_KILLS) {
		usleep(5000 + (useconds_t)((seed + kills) * 7919 % 20000));
		i = (unsigned int)((seed + kills) % FZ_WORKERS);
		kill(pids[i], SIGKILL);
		waitpid(pids[i], &st, 0);
		kills++;
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i])
			worker(seed + started, i & 1, ops);
		started++;
	}
	/* The last ones run to their end; one stuck in a call is killed. */
	until = pt_now_ns() + PT_WAIT_MS * 1000000ULL;
	for (i = 0; i < FZ_WORKERS; i++) {
		while (waitpid(pids[i], &st, WNOHANG) == 0) {
			if (pt_now_ns() > until) {
				kill(pids[i], SIGKILL);
				waitpid(pids[i], &st, 0);
				break;
			}
			usleep(10000);
		}
		if (WIFEXITED(st) && WEXITSTATUS(st) == PT_CHILD_OK)
			ok++;
		else if (WIFEXITED(st) && WEXITSTATUS(st) == PT_CHILD_SKIP)
			skipped++;
		else
			EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
				TH_LOG("worker %u: status 0x%x", i, st);
	}
	TH_LOG("%u workers started, %u killed, %u ran to the end, %u could not open",
	       started, kills, ok, skipped);
	EXPECT_EQ(0U, skipped);
	/* What got through the checks: the fuzzer reaches the calls. */
	for (i = 0; i < NCMDS; i++)
		TH_LOG("ioctl 0x%02lx: %lu succeeded", _IOC_NR(cmds[i]),
		       succeeded[i]);
	EXPECT_LT(0UL, succeeded[0]);		/* GRAPH_OPEN */
	EXPECT_LT(0UL, succeeded[6]);		/* DATABLOCK_CREATE */
	munmap(succeeded, NCMDS * sizeof(*succeeded));
}

TEST_HARNESS_MAIN
