// SPDX-License-Identifier: GPL-2.0
/*
 * ptaskd_e2e - ptaskd --mode kernel --backend sim end to end in the test
 * guest, through libptask's kernel transport (PTASK_MODE_KERNEL):
 *
 *   push a, b -> [vec_add (GPU ptask, run by ptaskd on a sim device)] -> c
 *             -> [double (CPU ptask, run in this program)] -> pull
 *   push A, B -> [sgemm (GPU)] -> pull C
 *
 * then robustness: ptaskd killed (SIGKILL) while it runs an invocation
 * (a sleeping pull of the client wakes with -EIO, not a hang; the module
 * is left consistent and nothing leaks), started again for a fresh
 * graph; work queued while no daemon runs is done by the next one; and
 * SIGTERM drains (the invocation in hand completes, exit status 0);
 * PTSched holds a nice +19 hog's GPU work while a nice -20 client works
 * and lets it go once that client is quiet.
 *
 * ptaskd is $PTASK_PTASKD or /bin/ptaskd; without it every test skips.
 * Each test's fixture records the counts in /sys/kernel/ptask/objects first and
 * checks at teardown that every count is back (pt_env_fini).  ptaskd's
 * log goes to a file that is printed as "# " lines after each test.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "pt_harness.h"
#include "libptask.h"
#include "tests/twins/test_code.h"

#define PTASKD_ENV	"PTASK_PTASKD"
#define PTASKD_DEFAULT	"/bin/ptaskd"
#define N		4096	/* floats per vector */
#define GEMM_N		48	/* sgemm matrices are GEMM_N x GEMM_N */
#define SEC		1000000000LL
/* A sim device whose every launch sleeps 3 s: work is in flight a while. */
#define SLOW_SIM	"launch_ns=3000000000"

/*
 * The code each GPU ptask carries is the one its twin (linked into the
 * guest's ptaskd) is bound to: the tests' own, the gemm example's PTX,
 * the benchmarks' PTX.
 */
#define ptx ptask_test_code
extern const char gemm_ptx[], gemm_ptx_end[], bench_ptx[], bench_ptx_end[];

static const char *ptaskd_path(void)
{
	const char *p = getenv(PTASKD_ENV);

	return p && *p ? p : PTASKD_DEFAULT;
}

/*
 * Starts ptaskd --mode kernel --backend sim (with --sim-config @sim when
 * non-NULL), its log in @log, and waits until it registered; its pid or
 * -errno.
 */
static pid_t ptaskd_start(struct pt_env *env, const char *sim, const char *log)
{
	const char *argv[] = { "ptaskd", "--mode", "kernel", "--backend", "sim",
			       sim ? "--sim-config" : NULL, sim, NULL };
	__u64 before;
	pid_t pid;
	int fd;

	if (pt_executors_read(&before))
		return -ENODEV;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(ptaskd_path(), (char *const *)argv);
		_exit(127);
	}
	pt_env_track_pid(env, pid);
	if (pt_executors_wait(before + 1, PT_WAIT_MS)) {
		kill(pid, SIGKILL);
		pt_env_wait_pid(env, pid, PT_WAIT_MS);
		return -ETIMEDOUT;
	}
	return pid;
}

/* Sends @sig and reaps; the wait status, or -errno. */
static int ptaskd_stop(struct pt_env *env, pid_t pid, int sig)
{
	if (kill(pid, sig))
		return -errno;
	return pt_env_wait_pid(env, pid, PT_WAIT_MS);
}

static void dump_log(const char *log)
{
	char line[512];
	FILE *f = fopen(log, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("# ptaskd: %s", line);
	fclose(f);
	unlink(log);
}

/* --- the graphs ------------------------------------------------------------ */

struct chain {
	struct ptask_ctx *ctx;
	uint32_t graph, in_a, in_b, out;
};

static int double_body(struct ptask_cpu_call *call, void *arg)
{
	const float *in = call->ports[0].data;
	float *out = call->ports[1].data;
	uint64_t i;

	(void)arg;
	if (!in || !out || call->ports[0].bytes != call->ports[1].bytes)
		return -EINVAL;
	for (i = 0; i < call->ports[0].bytes / sizeof(float); i++)
		out[i] = 2.0f * in[i];
	return 0;
}

/* Pushes one int32 @v on sticky channel @ch (a PARAM template @tmpl). */
static int push_param(struct ptask_ctx *ctx, uint32_t tmpl, uint32_t ch,
		      int32_t v)
{
	struct ptask_db *db;
	int32_t *p;
	int err;

	err = ptask_datablock_create(ctx, tmpl, 0, 1, &db);
	if (err)
		return err;
	err = ptask_datablock_map(ctx, db, (void **)&p);
	if (!err) {
		*p = v;
		err = ptask_push(ctx, ch, db, -1, PTASK_FOREVER);
	}
	ptask_datablock_release(ctx, db);
	return err;
}

/* The vec_add -> double chain of the header comment, running. */
static int build_chain(struct chain *ch, const char *entry)
{
	const uint32_t vec_dims[3] = { N, 1, 1 }, one[3] = { 1, 1, 1 };
	uint32_t vec, n_tmpl, add, dbl, pa, pb, pc, pn, din, dout, n_ch;
	struct ptask_ctx *ctx = ch->ctx;
	int err;

	err = ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600, &ch->graph);
	err = err ?: ptask_template_open(ctx, ch->graph, "vec", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_GLOBAL, sizeof(float), vec_dims, &vec);
	err = err ?: ptask_template_open(ctx, ch->graph, "n", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_PARAM, sizeof(int32_t), one, &n_tmpl);
	err = err ?: ptask_gpu_ptask_open(ctx, ch->graph, "add", ptx, sizeof(ptx),
					  entry, 4, &add);
	err = err ?: ptask_port_open(ctx, add, "a", PTASK_PORT_INPUT, 0, vec, 0, 0, &pa);
	err = err ?: ptask_port_open(ctx, add, "b", PTASK_PORT_INPUT, 0, vec, 1, 0, &pb);
	err = err ?: ptask_port_open(ctx, add, "c", PTASK_PORT_OUTPUT, 0, vec, 2, 0, &pc);
	err = err ?: ptask_port_open(ctx, add, "n", PTASK_PORT_STICKY, 0, n_tmpl, 3, 0, &pn);
	err = err ?: ptask_cpu_ptask_open(ctx, ch->graph, "double", 2, double_body,
					  NULL, &dbl);
	err = err ?: ptask_port_open(ctx, dbl, "in", PTASK_PORT_INPUT, 0, vec, 0, 0, &din);
	err = err ?: ptask_port_open(ctx, dbl, "out", PTASK_PORT_OUTPUT, 0, vec, 1, 0, &dout);
	err = err ?: ptask_channel_open(ctx, ch->graph, "a", 0, pa, 4, 0, &ch->in_a);
	err = err ?: ptask_channel_open(ctx, ch->graph, "b", 0, pb, 4, 0, &ch->in_b);
	err = err ?: ptask_channel_open(ctx, ch->graph, "n", 0, pn, 1, 0, &n_ch);
	err = err ?: ptask_channel_open(ctx, ch->graph, "c", pc, din, 4, 0, NULL);
	err = err ?: ptask_channel_open(ctx, ch->graph, "out", dout, 0, 4, 0, &ch->out);
	err = err ?: push_param(ctx, n_tmpl, n_ch, N);
	return err ?: ptask_graph_run(ctx, ch->graph);
}

/* Makes a datablock of @n floats, @f(i, k) each, pushes it, releases it. */
static int push_vec(struct ptask_ctx *ctx, uint32_t ch, int k,
		    float (*f)(int i, int k), int n)
{
	struct ptask_db *db;
	float *p;
	int err, i;

	err = ptask_datablock_create(ctx, 0, n * sizeof(float), 0, &db);
	if (err)
		return err;
	err = ptask_datablock_map(ctx, db, (void **)&p);
	for (i = 0; !err && i < n; i++)
		p[i] = f(i, k);
	err = err ?: ptask_push(ctx, ch, db, -1, PTASK_FOREVER);
	ptask_datablock_release(ctx, db);
	return err;
}

static float vec_a(int i, int k)
{
	return (float)(i + k);
}

static float vec_b(int i, int k)
{
	(void)k;
	return (float)(2 * i);
}

/* Round @k: a = i + k, b = 2 i; the result must be 2 (a + b). */
static int push_round(struct chain *ch, int k)
{
	return push_vec(ch->ctx, ch->in_a, k, vec_a, N) ?:
	       push_vec(ch->ctx, ch->in_b, k, vec_b, N);
}

static int pull_round(struct chain *ch, int k, int64_t timeout_ns)
{
	struct ptask_db *db;
	float *p;
	int err, i;

	err = ptask_pull(ch->ctx, ch->out, timeout_ns, &db);
	if (err)
		return err;
	err = ptask_db_bytes(db) == N * sizeof(float) ?
	      ptask_datablock_map(ch->ctx, db, (void **)&p) : -EMSGSIZE;
	for (i = 0; !err && i < N; i++)
		if (p[i] != 2.0f * (float)(3 * i + k)) {
			printf("# round %d: element %d is %g, expected %g\n",
			       k, i, p[i], 2.0f * (float)(3 * i + k));
			err = -EBADMSG;
		}
	ptask_datablock_release(ch->ctx, db);
	return err;
}

static float mat_a(int i, int k)
{
	return (float)((i * 7 + k) % 13) - 6.0f;
}

static float mat_b(int i, int k)
{
	return (float)((i * 5 + 3 * k) % 11) - 5.0f;
}

/* A, B -> sgemm -> C, one round; C is checked against a reference. */
static int gemm_once(struct ptask_ctx *ctx, int k)
{
	const uint32_t dims[3] = { GEMM_N * GEMM_N, 1, 1 }, one[3] = { 1, 1, 1 };
	uint32_t g, mat, n_tmpl, mm, pa, pb, pc, pn, ca, cb, cn, cc;
	struct ptask_db *db;
	const float *c;
	int err, i, j, l;
	float want;

	err = ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600, &g);
	err = err ?: ptask_template_open(ctx, g, "mat", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_GLOBAL, sizeof(float), dims, &mat);
	err = err ?: ptask_template_open(ctx, g, "n", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_PARAM, sizeof(int32_t), one, &n_tmpl);
	err = err ?: ptask_gpu_ptask_open(ctx, g, "mm", gemm_ptx,
					  (size_t)(gemm_ptx_end - gemm_ptx), "sgemm",
					  4, &mm);
	err = err ?: ptask_port_open(ctx, mm, "A", PTASK_PORT_INPUT, 0, mat, 0, 0, &pa);
	err = err ?: ptask_port_open(ctx, mm, "B", PTASK_PORT_INPUT, 0, mat, 1, 0, &pb);
	err = err ?: ptask_port_open(ctx, mm, "C", PTASK_PORT_OUTPUT, 0, mat, 2, 0, &pc);
	err = err ?: ptask_port_open(ctx, mm, "n", PTASK_PORT_STICKY, 0, n_tmpl, 3, 0, &pn);
	err = err ?: ptask_channel_open(ctx, g, "A", 0, pa, 2, 0, &ca);
	err = err ?: ptask_channel_open(ctx, g, "B", 0, pb, 2, 0, &cb);
	err = err ?: ptask_channel_open(ctx, g, "n", 0, pn, 1, 0, &cn);
	err = err ?: ptask_channel_open(ctx, g, "C", pc, 0, 2, 0, &cc);
	err = err ?: push_param(ctx, n_tmpl, cn, GEMM_N);
	err = err ?: ptask_graph_run(ctx, g);
	err = err ?: push_vec(ctx, ca, k, mat_a, GEMM_N * GEMM_N);
	err = err ?: push_vec(ctx, cb, k, mat_b, GEMM_N * GEMM_N);
	err = err ?: ptask_pull(ctx, cc, 30 * SEC, &db);
	if (err)
		return err;
	err = ptask_datablock_map(ctx, db, (void **)&c);
	for (i = 0; !err && i < GEMM_N; i++)
		for (j = 0; !err && j < GEMM_N; j++) {
			want = 0;
			for (l = 0; l < GEMM_N; l++)
				want += mat_a(i * GEMM_N + l, k) *
					mat_b(l * GEMM_N + j, k);
			/* Small integers: exact in float whatever the order. */
			if (c[i * GEMM_N + j] != want) {
				printf("# C[%d][%d] is %g, expected %g\n", i, j,
				       c[i * GEMM_N + j], want);
				err = -EBADMSG;
			}
		}
	ptask_datablock_release(ctx, db);
	return err ?: ptask_graph_close(ctx, g);
}

/* --- tests ----------------------------------------------------------------- */

FIXTURE(e2e) {
	struct pt_env env;
	char log[64];
	pid_t pid;		/* ptaskd, or 0 */
	struct chain ch;	/* ch.ctx: the client's context, or NULL */
	__u64 window;		/* sched/window_ms to restore, or 0 */
};

/* Writes @val to /sys/kernel/ptask/@rel: 0 or -errno. */
static int sysfs_put(const char *rel, __u64 val)
{
	char path[128], buf[32];
	int fd, n, r = 0;

	snprintf(path, sizeof(path), PTASK_SYSFS_DIR "/%s", rel);
	n = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)val);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, (size_t)n) != n)
		r = -errno;
	close(fd);
	return r;
}

FIXTURE_SETUP(e2e)
{
	PT_ENV_SETUP(&self->env);
	if (geteuid() != 0)
		SKIP(pt_skip_exit(), "needs root: ptaskd registers an executor");
	if (access(ptaskd_path(), X_OK))
		SKIP(pt_skip_exit(), "no %s (set %s)", ptaskd_path(), PTASKD_ENV);
	snprintf(self->log, sizeof(self->log), "/tmp/ptaskd.%d.log", getpid());
	self->pid = 0;
	self->ch.ctx = NULL;
	self->window = 0;
}

FIXTURE_TEARDOWN(e2e)
{
	if (self->ch.ctx)
		ptask_ctx_close(self->ch.ctx);
	if (self->pid > 0)
		EXPECT_EQ(0, ptaskd_stop(&self->env, self->pid, SIGTERM));
	dump_log(self->log);
	if (self->window)
		EXPECT_EQ(0, sysfs_put("sched/window_ms", self->window));
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

/* Starts ptaskd (@sim: NULL or a sim configuration) into self->pid. */
#define START(sim) do {							\
	self->pid = ptaskd_start(&self->env, sim, self->log);		\
	ASSERT_LT(0, self->pid);					\
} while (0)

#define OPEN_CTX() do {							\
	ASSERT_PT(0, ptask_ctx_open(PTASK_MODE_KERNEL, NULL, &self->ch.ctx)); \
	ASSERT_EQ((int)PTASK_MODE_KERNEL, (int)ptask_ctx_mode(self->ch.ctx));	\
} while (0)

TEST_F(e2e, vec_add_then_cpu_double)
{
	__u64 want[__PTASK_COUNT_MAX];
	int k;

	START(NULL);
	OPEN_CTX();
	ASSERT_PT(0, build_chain(&self->ch, "vec_add"));
	for (k = 0; k < 16; k++) {
		ASSERT_PT(0, push_round(&self->ch, k));
		ASSERT_PT(0, pull_round(&self->ch, k, 30 * SEC));
	}
	/* Four in flight at once. */
	for (k = 0; k < 4; k++)
		ASSERT_PT(0, push_round(&self->ch, 100 + k));
	for (k = 0; k < 4; k++)
		ASSERT_PT(0, pull_round(&self->ch, 100 + k, 30 * SEC));
	/*
	 * The client gone, the running daemon holds nothing of it: no
	 * datablock, and no datablock pages mapped (only its own fd).
	 */
	ptask_ctx_close(self->ch.ctx);
	self->ch.ctx = NULL;
	memcpy(want, self->env.base, sizeof(want));
	want[PTASK_COUNT_CLIENTS]++;
	ASSERT_EQ(0, pt_counts_wait_all(want, PT_WAIT_MS, "daemon idle"));
	ASSERT_EQ(0, ptaskd_stop(&self->env, self->pid, SIGTERM));
	self->pid = 0;
}

TEST_F(e2e, sgemm)
{
	int k;

	START(NULL);
	OPEN_CTX();
	for (k = 0; k < 3; k++)
		ASSERT_PT(0, gemm_once(self->ch.ctx, k));
}

struct puller {
	struct chain *ch;
	int r;
	__u64 returned_ns;
};

static void *pull_thread(void *arg)
{
	struct puller *p = arg;

	p->r = pull_round(p->ch, 0, 60 * SEC);
	p->returned_ns = pt_now_ns();
	return NULL;
}

TEST_F(e2e, killed_daemon_fails_work_in_flight)
{
	struct puller p = { .ch = &self->ch, .r = 1 };
	__u64 t0;
	pthread_t th;
	int st;

	START(SLOW_SIM);
	OPEN_CTX();
	ASSERT_PT(0, build_chain(&self->ch, "vec_add"));
	ASSERT_EQ(0, pthread_create(&th, NULL, pull_thread, &p));
	ASSERT_PT(0, push_round(&self->ch, 0));
	/* ptaskd took the invocation and sleeps in the simulated launch. */
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_INVOCATIONS,
				   self->env.base[PTASK_COUNT_INVOCATIONS] + 1,
				   PT_WAIT_MS));
	t0 = pt_now_ns();
	st = ptaskd_stop(&self->env, self->pid, SIGKILL);
	self->pid = 0;
	ASSERT_TRUE(WIFSIGNALED(st));
	ASSERT_EQ(0, pthread_join(th, NULL));
	/*
	 * A clear error, not a hang: -EIO, well before the pull's own 60 s
	 * (which would end it with -ETIMEDOUT).
	 */
	ASSERT_PT(-EIO, p.r);
	ASSERT_GT(PT_WAIT_MS * 1000000ULL, p.returned_ns - t0);
	ASSERT_PT(0, pt_executors_wait(self->env.base_executors, PT_WAIT_MS));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_INVOCATIONS,
				   self->env.base[PTASK_COUNT_INVOCATIONS],
				   PT_WAIT_MS));
	/* The failed graph goes with its client: nothing leaked. */
	ptask_ctx_close(self->ch.ctx);
	self->ch.ctx = NULL;
	ASSERT_EQ(0, pt_counts_wait_all(self->env.base, PT_WAIT_MS,
					"after the kill"));

	/* A new daemon serves a fresh graph. */
	START(NULL);
	OPEN_CTX();
	ASSERT_PT(0, build_chain(&self->ch, "vec_add"));
	ASSERT_PT(0, push_round(&self->ch, 1));
	ASSERT_PT(0, pull_round(&self->ch, 1, 30 * SEC));
}

TEST_F(e2e, queued_work_waits_for_the_next_daemon)
{
	START(NULL);
	ASSERT_TRUE(WIFSIGNALED(ptaskd_stop(&self->env, self->pid, SIGKILL)));
	self->pid = 0;
	ASSERT_PT(0, pt_executors_wait(self->env.base_executors, PT_WAIT_MS));
	/* No executor: the invocation stays queued, nobody fails. */
	OPEN_CTX();
	ASSERT_PT(0, build_chain(&self->ch, "vec_add"));
	ASSERT_PT(0, push_round(&self->ch, 5));
	ASSERT_PT(-ETIMEDOUT, pull_round(&self->ch, 5, SEC / 2));
	START(NULL);
	ASSERT_PT(0, pull_round(&self->ch, 5, 30 * SEC));
}

TEST_F(e2e, sigterm_drains_what_was_taken)
{
	struct puller p = { .ch = &self->ch, .r = 1 };
	pthread_t th;
	int st;

	START(SLOW_SIM);
	OPEN_CTX();
	ASSERT_PT(0, build_chain(&self->ch, "vec_add"));
	ASSERT_EQ(0, pthread_create(&th, NULL, pull_thread, &p));
	ASSERT_PT(0, push_round(&self->ch, 0));
	ASSERT_PT(0, pt_count_wait(PTASK_COUNT_INVOCATIONS,
				   self->env.base[PTASK_COUNT_INVOCATIONS] + 1,
				   PT_WAIT_MS));
	st = ptaskd_stop(&self->env, self->pid, SIGTERM);
	self->pid = 0;
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(0, WEXITSTATUS(st));
	ASSERT_EQ(0, pthread_join(th, NULL));
	/* The invocation in hand completed; the CPU stage ran here. */
	ASSERT_PT(0, p.r);
}

TEST_F(e2e, unknown_kernel_fails_the_graph)
{
	int err;

	START(NULL);
	OPEN_CTX();
	ASSERT_PT(0, build_chain(&self->ch, "no_such_kernel"));
	err = push_round(&self->ch, 0);
	ASSERT_TRUE(!err || err == -EIO);
	ASSERT_PT(-EIO, pull_round(&self->ch, 0, 30 * SEC));
}

/* --- PTSched with the sim executor ------------------------------------------ */

struct busy {
	struct ptask_ctx *ctx;
	uint32_t graph, in, out, ns;
};

/* in -> ptask_busy(in, out, ns) -> out, with @ns pushed on a sticky port. */
static int busy_build(struct busy *b, uint64_t ns)
{
	const uint32_t one[3] = { 1, 1, 1 };
	uint32_t tw, tn, p, pin, pout, pns;
	struct ptask_db *db;
	uint64_t *v;
	int err;

	err = ptask_ctx_open(PTASK_MODE_KERNEL, NULL, &b->ctx);
	err = err ?: ptask_graph_open(b->ctx, "", PTASK_GRAPH_CREATE, 0600,
				      &b->graph);
	err = err ?: ptask_template_open(b->ctx, b->graph, "w",
					 PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_GLOBAL, 4, one, &tw);
	err = err ?: ptask_template_open(b->ctx, b->graph, "ns",
					 PTASK_TEMPLATE_ARRAY, PTASK_BIND_PARAM,
					 8, one, &tn);
	err = err ?: ptask_gpu_ptask_open(b->ctx, b->graph, "busy", bench_ptx,
					  (size_t)(bench_ptx_end - bench_ptx),
					  "ptask_busy", 3, &p);
	err = err ?: ptask_port_open(b->ctx, p, "in", PTASK_PORT_INPUT, 0, tw,
				     0, 0, &pin);
	err = err ?: ptask_port_open(b->ctx, p, "out", PTASK_PORT_OUTPUT, 0, tw,
				     1, 0, &pout);
	err = err ?: ptask_port_open(b->ctx, p, "ns", PTASK_PORT_STICKY, 0, tn,
				     2, 0, &pns);
	err = err ?: ptask_channel_open(b->ctx, b->graph, "in", 0, pin, 2, 0,
					&b->in);
	err = err ?: ptask_channel_open(b->ctx, b->graph, "out", pout, 0, 2, 0,
					&b->out);
	err = err ?: ptask_channel_open(b->ctx, b->graph, "ns", 0, pns, 1, 0,
					&b->ns);
	err = err ?: ptask_graph_run(b->ctx, b->graph);
	err = err ?: ptask_datablock_create(b->ctx, tn, 0, 1, &db);
	if (err)
		return err;
	err = ptask_datablock_map(b->ctx, db, (void **)&v);
	if (!err) {
		*v = ns;
		err = ptask_push(b->ctx, b->ns, db, -1, PTASK_FOREVER);
	}
	ptask_datablock_release(b->ctx, db);
	return err;
}

/* One round: push, wait for the result, check it. */
static int busy_round(struct busy *b, uint32_t seq)
{
	struct ptask_db *in, *out;
	uint32_t *pi, *po;
	int err = ptask_datablock_create(b->ctx, 0, 4, 0, &in);

	err = err ?: ptask_datablock_map(b->ctx, in, (void **)&pi);
	if (err)
		return err;
	pi[0] = seq;
	err = ptask_push(b->ctx, b->in, in, -1, PTASK_FOREVER) ?:
	      ptask_pull(b->ctx, b->out, 60 * SEC, &out);
	ptask_datablock_release(b->ctx, in);
	if (err)
		return err;
	err = ptask_datablock_map(b->ctx, out, (void **)&po);
	if (!err && po[0] != seq + 1)
		err = -EBADMSG;
	ptask_datablock_release(b->ctx, out);
	return err;
}

static long long proc_sysfs(pid_t pid, const char *name)
{
	char rel[64];
	__u64 v;

	snprintf(rel, sizeof(rel), "procs/%d/%s", pid, name);
	return pt_sysfs_u64(rel, &v) ? -1 : (long long)v;
}

/*
 * A nice +19 process looping 50 ms kernels and a nice -20 one doing 1 ms
 * kernels, both run by ptaskd on one sim device with budgets on: while
 * the foreground works the hog is held (procs/<pid>/held) and completes
 * at most the kernel it had in flight and one more; once the foreground
 * is quiet past the window, the hog runs again.  (Latencies are not
 * checked: the guest is emulated, and its timing is not the point.)
 * The window is 1 s here, not 100 ms: a pause of the emulated guest
 * between two foreground rounds must not count as the foreground going
 * quiet.
 */
TEST_F(e2e, budgets_hold_a_low_priority_hog)
{
	long long hog_start, hog_before, hog_after;
	__u64 budgets, window, t0;
	struct busy fg;
	uint32_t seq;
	pid_t hog;

	ASSERT_EQ(0, pt_sysfs_u64("sched/budgets", &budgets));
	ASSERT_EQ(1ULL, budgets);
	ASSERT_EQ(0, pt_sysfs_u64("sched/window_ms", &window));
	self->window = window;	/* the teardown puts it back */
	ASSERT_EQ(0, sysfs_put("sched/window_ms", 1000));
	START("devices=1");
	hog = fork();
	ASSERT_LE(0, hog);
	if (hog == 0) {
		struct busy b;

		if (setpriority(PRIO_PROCESS, 0, 19) || busy_build(&b, 50000000))
			_exit(PT_CHILD_FAIL);
		for (seq = 1;; seq++)
			if (busy_round(&b, seq))
				_exit(PT_CHILD_FAIL);
	}
	pt_env_track_pid(&self->env, hog);
	ASSERT_EQ(0, setpriority(PRIO_PROCESS, 0, -20));
	ASSERT_PT(0, busy_build(&fg, 1000000));
	/* The hog runs alone until it has a record and some history. */
	for (t0 = pt_now_ns(); proc_sysfs(hog, "invocations") < 2 &&
	     pt_now_ns() - t0 < PT_WAIT_MS * 1000000ULL;)
		pt_sleep_ms(10);
	ASSERT_LE(2, proc_sysfs(hog, "invocations"));
	ASSERT_PT(0, busy_round(&fg, 1));	/* our first round: set-up */
	hog_start = proc_sysfs(hog, "invocations");
	for (seq = 2; seq <= 200; seq++)
		ASSERT_PT(0, busy_round(&fg, seq));
	EXPECT_EQ(1, proc_sysfs(hog, "held"));
	hog_before = proc_sysfs(hog, "invocations");
	EXPECT_GE(hog_start + 2, hog_before)
		TH_LOG("the hog ran %lld kernels during 199 foreground rounds",
		       hog_before - hog_start);
	ptask_ctx_close(fg.ctx);
	/*
	 * Quiet past the window (1 s): the hog runs again, three kernels of
	 * 50 ms soon after; a busy host may take longer: PT_WAIT_MS.
	 */
	for (t0 = pt_now_ns();
	     proc_sysfs(hog, "invocations") <= hog_before + 2 &&
	     pt_now_ns() - t0 < PT_WAIT_MS * 1000000ULL;)
		pt_sleep_ms(10);
	hog_after = proc_sysfs(hog, "invocations");
	EXPECT_LT(hog_before + 2, hog_after)
		TH_LOG("hog invocations %lld -> %lld", hog_before, hog_after);
	EXPECT_EQ(0, proc_sysfs(hog, "held"));
	setpriority(PRIO_PROCESS, 0, 0);
	kill(hog, SIGKILL);
	EXPECT_LE(0, pt_env_wait_pid(&self->env, hog, PT_WAIT_MS));
}

TEST_HARNESS_MAIN
