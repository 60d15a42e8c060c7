// SPDX-License-Identifier: GPL-2.0
/*
 * sched_test - PTSched in ptask.ko: /sys/kernel/ptask/sched (reads,
 * writes, every invalid value refused with nothing half-applied, EACCES
 * for non-root), a process held by a negative GPU budget and released by
 * the timer, the policy handed out by EXEC_TAKE, procs/<pid>/ and
 * ptasks/<handle>/ directories that come and go with their objects,
 * /proc/<pid>/fdinfo in the DRM usage-stats format, and the netlink
 * GET_SCHED / SET_SCHED / GET_PROC / SET_PRIO commands.
 *
 *	client fd:   push -> [in] -> GPU copy ptask -> [out] -> pull
 *	executor xfd: EXEC_TAKE / EXEC_COMPLETE by hand, reporting gpu_ns
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <netlink/attr.h>

#include "pt_harness.h"

#define SCHED_DIR	PTASK_SYSFS_DIR "/sched/"

/* Read a sysfs file into @buf (newline stripped): 0 or -errno. */
static int sysfs_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

/* Write @val to a sysfs file: 0 or -errno (from open or write). */
static int sysfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		r = -errno;
	close(fd);
	return r;
}

static long long sysfs_ll(const char *path)
{
	char buf[128];

	if (sysfs_read(path, buf, sizeof(buf)))
		return -999999;
	return strtoll(buf, NULL, 0);
}

static long long proc_file(pid_t pid, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), PTASK_SYSFS_DIR "/procs/%d/%s", pid, name);
	return sysfs_ll(path);
}

FIXTURE(sched) {
	struct pt_env env;
	int fd;		/* the client */
	int xfd;	/* the executor */
	char saved[5][64];
};

static const char *const tunables[5] = {
	"budgets", "alpha_permille", "policy", "timer_us", "window_ms",
};

FIXTURE_SETUP(sched)
{
	char path[128];
	int i;

	PT_ENV_SETUP(&self->env);
	if (geteuid() != 0)
		SKIP(pt_skip_exit(), "needs root (CAP_SYS_ADMIN)");
	for (i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), SCHED_DIR "%s", tunables[i]);
		ASSERT_EQ(0, sysfs_read(path, self->saved[i],
					sizeof(self->saved[i])));
	}
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
	self->xfd = pt_env_open(&self->env);
	ASSERT_LE(0, self->xfd);
	ASSERT_PT(0, pt_nl_register(self->xfd));
}

FIXTURE_TEARDOWN(sched)
{
	char path[128], *policy;
	int i;

	/* Settings back as found (policy: the bracketed name). */
	for (i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), SCHED_DIR "%s", tunables[i]);
		policy = strchr(self->saved[i], '[');
		if (policy) {
			policy++;
			policy[strcspn(policy, "]")] = '\0';
		}
		EXPECT_EQ(0, sysfs_write(path, policy ? policy :
					 self->saved[i]));
	}
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

TEST_F(sched, sysfs_defaults_and_writes)
{
	char buf[128];

	ASSERT_EQ(0, sysfs_read(SCHED_DIR "policy", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "first-available"));
	EXPECT_NE(NULL, strstr(buf, "data-aware"));
	ASSERT_EQ(0, sysfs_write(SCHED_DIR "policy", "fifo"));
	ASSERT_EQ(0, sysfs_read(SCHED_DIR "policy", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "[fifo]"));
	ASSERT_EQ(0, sysfs_write(SCHED_DIR "alpha_permille", "250"));
	EXPECT_EQ(250, sysfs_ll(SCHED_DIR "alpha_permille"));
	ASSERT_EQ(0, sysfs_write(SCHED_DIR "timer_us", "2000"));
	/* No invocation time known: T is the timer's period. */
	EXPECT_EQ(2000000, sysfs_ll(SCHED_DIR "period_ns"));
	ASSERT_EQ(0, sysfs_write(SCHED_DIR "window_ms", "1"));
	EXPECT_EQ(1, sysfs_ll(SCHED_DIR "window_ms"));
	ASSERT_EQ(0, sysfs_write(SCHED_DIR "budgets", "0"));
	EXPECT_EQ(0, sysfs_ll(SCHED_DIR "budgets"));
	EXPECT_LE(1, sysfs_ll(SCHED_DIR "n_accels"));
	EXPECT_LE(0, sysfs_ll(SCHED_DIR "active"));
	EXPECT_LE(0, sysfs_ll(SCHED_DIR "held"));
	EXPECT_LE(0, sysfs_ll(SCHED_DIR "total_weight"));
}

TEST_F(sched, sysfs_invalid_values)
{
	static const struct { const char *file, *val; } bad[] = {
		{ "budgets", "2" }, { "budgets", "-1" }, { "budgets", "on" },
		{ "alpha_permille", "0" }, { "alpha_permille", "1001" },
		{ "alpha_permille", "0.5" }, { "alpha_permille", "\n" },
		{ "timer_us", "9" }, { "timer_us", "1000001" },
		{ "timer_us", "99999999999999999999" },
		{ "window_ms", "0" }, { "window_ms", "600001" },
		{ "policy", "bogus" }, { "policy", "\n" }, { "policy", "fifo2" },
	};
	char path[128], before[64], after[64];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(path, sizeof(path), SCHED_DIR "%s", bad[i].file);
		ASSERT_EQ(0, sysfs_read(path, before, sizeof(before)));
		EXPECT_EQ(-EINVAL, sysfs_write(path, bad[i].val))
			TH_LOG("%s <- '%s'", bad[i].file, bad[i].val);
		ASSERT_EQ(0, sysfs_read(path, after, sizeof(after)));
		EXPECT_STREQ(before, after);
	}
	/* Read-only files refuse writes (permissions, even for root: EACCES
	 * or EIO from a file without a store). */
	EXPECT_NE(0, sysfs_write(SCHED_DIR "period_ns", "5"));
}

TEST_F(sched, sysfs_writes_need_root)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (pt_become(PT_NOBODY))
			_exit(PT_CHILD_FAIL);
		/* 0644: the open fails for anyone but root. */
		_exit(sysfs_write(SCHED_DIR "budgets", "0") == -EACCES &&
		      sysfs_write(SCHED_DIR "policy", "fifo") == -EACCES ?
		      PT_CHILD_OK : PT_CHILD_FAIL);
	}
	pt_env_track_pid(&self->env, pid);
	PT_WAIT_CHILD(&self->env, pid, PT_WAIT_MS);
}

/* Take one invocation (blocking up to @ms): 0 and its id, or -errno. */
static int take_one(int xfd, unsigned int ms, __u64 *id, __u32 *policy)
{
	struct ptask_invocation inv[4];
	struct ptask_invocation_port ports[4 * PTASK_MAX_PORTS];
	struct ptask_exec_take a = {
		.size = sizeof(a), .flags = ms ? 0 : PTASK_NONBLOCK,
		.max_invocations = 1, .max_ports = 4 * PTASK_MAX_PORTS,
		.invocations = (uintptr_t)inv, .ports = (uintptr_t)ports,
		.timeout_ns = ms ? pt_deadline_ms(ms) : 0,
	};
	int r = pt_ioctl(xfd, PTASK_IOC_EXEC_TAKE, &a);

	if (r)
		return r;
	*id = inv[0].id;
	if (policy)
		*policy = a.policy;
	return 0;
}

/* Complete @id with a new output datablock and @gpu_ns of GPU time. */
static int complete_one(int xfd, __u64 id, __u64 gpu_ns)
{
	struct ptask_exec_output out = { .index = 1 };
	__u64 off;
	int r = pt_db_create(xfd, 64, 0, 0, &out.datablock, &off, NULL);

	return r ? r : pt_exec_complete(xfd, id, 0, gpu_ns, &out, 1);
}

/*
 * A process whose GPU time ran far past its budget stays Queued (held)
 * until the timer refills it, and then a blocking take gets its work with
 * nothing else happening.  The debt is DEBT_NS of GPU time, so the hold
 * lasts seconds: a paused guest does not outlast it between two checks.
 * The window is the longest there is, so the process stays in P (leaving
 * P forgives a debt) however slowly the test moves on a busy host.
 */
#define DEBT_NS		2000000000ULL

TEST_F(sched, negative_budget_holds_until_replenished)
{
	struct ptask_pull out;
	struct pt_copy_graph g;
	__u64 id, t0, waited;
	__u32 policy = 99;
	pid_t me = getpid();
	char dir[128];

	ASSERT_EQ(0, sysfs_write(SCHED_DIR "budgets", "1"));
	ASSERT_EQ(0, sysfs_write(SCHED_DIR "policy", "data-aware"));
	ASSERT_EQ(0, sysfs_write(SCHED_DIR "window_ms", "600000"));
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	/* its last file, not the directory (see below: kobject_add) */
	snprintf(dir, sizeof(dir), PTASK_SYSFS_DIR "/procs/%d/held_ns", me);
	ASSERT_EQ(0, pt_path_wait(dir, true, PT_WAIT_MS));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0,
				  PTASK_NONBLOCK, 0));
	ASSERT_PT(0, take_one(self->xfd, 0, &id, &policy));
	EXPECT_EQ(PTASK_POLICY_DATA_AWARE, (int)policy);
	/* Far more GPU time than one period refills. */
	t0 = pt_now_ns();
	ASSERT_PT(0, complete_one(self->xfd, id, DEBT_NS));
	EXPECT_GT(0, proc_file(me, "budget_ns"));
	EXPECT_EQ((long long)DEBT_NS, proc_file(me, "gpu_ns"));
	ASSERT_PT(0, pt_pull(self->fd, g.out_chan[0], PTASK_NONBLOCK, 0, &out));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 2, 0,
				  PTASK_NONBLOCK, 0));
	/* Held: Queued, not taken. */
	EXPECT_PT(-EAGAIN, take_one(self->xfd, 0, &id, NULL));
	EXPECT_EQ(1, proc_file(me, "held"));
	EXPECT_EQ(1, sysfs_ll(SCHED_DIR "held"));
	/*
	 * The timer refills it: a blocking take gets it once the debt is
	 * paid, about DEBT_NS after the completion (t0 is before it, so a
	 * busy host can only make this longer), and PT_WAIT_MS more at most.
	 */
	ASSERT_PT(0, take_one(self->xfd, DEBT_NS / 1000000 + PT_WAIT_MS, &id,
			      NULL));
	waited = pt_now_ns() - t0;
	EXPECT_LE(DEBT_NS / 2, waited) TH_LOG("waited %llu ns", waited);
	EXPECT_EQ(0, proc_file(me, "held"));
	EXPECT_LT(0, proc_file(me, "held_ns"));
	ASSERT_PT(0, complete_one(self->xfd, id, 1000));
}

TEST_F(sched, process_exit_releases_its_accounting)
{
	int pipefd[2];
	char dir[128], c;
	pid_t pid;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct pt_copy_graph g;
		int fd = pt_open();

		close(pipefd[1]);
		if (fd < 0 || pt_build_copy1(fd, true, &g))
			_exit(PT_CHILD_FAIL);
		/* Wait for the parent to look, then exit without cleaning up. */
		if (read(pipefd[0], &c, 1) != 1)
			_exit(PT_CHILD_FAIL);
		_exit(PT_CHILD_OK);
	}
	close(pipefd[0]);
	pt_env_track_pid(&self->env, pid);
	/*
	 * Its last file (held_ns, kmod/sysfs_objs.c), not the directory:
	 * kobject_add makes the directory, then its default groups' files,
	 * and the debug kernel's guest once read "ptasks" in between.
	 */
	snprintf(dir, sizeof(dir), PTASK_SYSFS_DIR "/procs/%d/held_ns", pid);
	ASSERT_EQ(0, pt_path_wait(dir, true, PT_WAIT_MS));
	EXPECT_EQ(1, proc_file(pid, "ptasks"));
	EXPECT_EQ(0, proc_file(pid, "nice"));
	EXPECT_EQ(1024, proc_file(pid, "weight"));
	EXPECT_EQ(-ENOENT, sysfs_write(PTASK_SYSFS_DIR "/procs/0/weight", "5"));
	/* A weight override, then back to the nice value's. */
	snprintf(dir, sizeof(dir), PTASK_SYSFS_DIR "/procs/%d/weight", pid);
	EXPECT_EQ(0, sysfs_write(dir, "7"));
	EXPECT_EQ(7, proc_file(pid, "weight"));
	EXPECT_EQ(-EINVAL, sysfs_write(dir, "1000001"));
	EXPECT_EQ(-EINVAL, sysfs_write(dir, "heavy"));
	EXPECT_EQ(0, sysfs_write(dir, "0"));
	EXPECT_EQ(1024, proc_file(pid, "weight"));
	ASSERT_EQ(1, write(pipefd[1], "x", 1));
	close(pipefd[1]);
	PT_WAIT_CHILD(&self->env, pid, PT_WAIT_MS);
	snprintf(dir, sizeof(dir), PTASK_SYSFS_DIR "/procs/%d", pid);
	EXPECT_EQ(0, pt_path_wait(dir, false, PT_WAIT_MS));
}

TEST_F(sched, ptask_directory_priority)
{
	struct pt_copy_graph g;
	char dir[160], path[200], buf[64];

	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	snprintf(dir, sizeof(dir), PTASK_SYSFS_DIR "/ptasks/%u", g.ptask);
	/*
	 * Its last file (name, kmod/sysfs_objs.c), not the directory: the
	 * debug kernel's guest once read "priority" after kobject_add made
	 * the directory and before it made the files (-999999 here).
	 */
	snprintf(path, sizeof(path), "%s/name", dir);
	ASSERT_EQ(0, pt_path_wait(path, true, PT_WAIT_MS));
	snprintf(path, sizeof(path), "%s/priority", dir);
	EXPECT_EQ(PTASK_PRIO_DEFAULT, sysfs_ll(path));
	EXPECT_EQ(0, sysfs_write(path, "90"));
	EXPECT_EQ(90, sysfs_ll(path));
	EXPECT_EQ(-EINVAL, sysfs_write(path, "100"));
	EXPECT_EQ(-EINVAL, sysfs_write(path, "-1"));
	EXPECT_EQ(90, sysfs_ll(path));
	snprintf(path, sizeof(path), "%s/owner_pid", dir);
	EXPECT_EQ(getpid(), sysfs_ll(path));
	snprintf(path, sizeof(path), "%s/kind", dir);
	EXPECT_EQ(PTASK_KIND_GPU, sysfs_ll(path));
	snprintf(path, sizeof(path), "%s/state", dir);
	ASSERT_EQ(0, sysfs_read(path, buf, sizeof(buf)));
	EXPECT_STREQ("0", buf);
	ASSERT_PT(0, pt_graph_close(self->fd, g.graph));
	EXPECT_EQ(0, pt_path_wait(dir, false, PT_WAIT_MS));
}

/*
 * A ptask's files are root's: nobody reads neither the name nor the
 * owner of root's private ptask (world-readable, they told uid 1000
 * what GET_OBJECT keeps from it: issue 13, the outside attack).
 */
TEST_F(sched, ptask_directory_root_only)
{
	static const char *const files[] = {
		"name", "owner_uid", "owner_pid", "graph", "state", "priority",
	};
	struct pt_copy_graph g;
	char dir[160], path[200];
	pid_t pid;

	PT_NEED_ROOT();
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	snprintf(dir, sizeof(dir), PTASK_SYSFS_DIR "/ptasks/%u", g.ptask);
	snprintf(path, sizeof(path), "%s/name", dir);
	ASSERT_EQ(0, pt_path_wait(path, true, PT_WAIT_MS));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		unsigned int i;

		if (pt_become(PT_NOBODY))
			_exit(PT_CHILD_FAIL);
		for (i = 0; i < ARRAY_SIZE(files); i++) {
			char p[200];
			int fd;

			snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
			fd = open(p, O_RDONLY);
			if (fd >= 0 || errno != EACCES)
				_exit(PT_CHILD_FAIL + 1 + (int)i);
		}
		_exit(PT_CHILD_OK);
	}
	pt_env_track_pid(&self->env, pid);
	PT_WAIT_CHILD(&self->env, pid, PT_WAIT_MS);
	ASSERT_PT(0, pt_graph_close(self->fd, g.graph));
}

/* The value of "key:\t<value>" in fdinfo text, or -1. */
static long long fdinfo_value(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	if (!p || p[strlen(key)] != ':')
		return -1;
	return strtoll(p + strlen(key) + 1, NULL, 10);
}

static int fdinfo_read(int fd, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	return sysfs_read(path, buf, len);
}

TEST_F(sched, fdinfo_drm_usage_format)
{
	char text[2048], other[2048];
	struct pt_copy_graph g;
	__u64 id, off;
	__u32 h;

	ASSERT_EQ(0, sysfs_write(SCHED_DIR "budgets", "0"));
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 4096, 1, 0,
				  PTASK_NONBLOCK, 0));
	ASSERT_PT(0, take_one(self->xfd, 0, &id, NULL));
	ASSERT_PT(0, complete_one(self->xfd, id, 1234567));
	ASSERT_EQ(0, fdinfo_read(self->fd, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "drm-driver:\tptask\n")) TH_LOG("%s", text);
	EXPECT_EQ(1234567, fdinfo_value(text, "drm-engine-gpu"));
	EXPECT_NE(NULL, strstr(text, "drm-engine-gpu:\t1234567 ns\n"));
	EXPECT_NE(NULL, strstr(text, " KiB\n"));
	EXPECT_EQ(1, fdinfo_value(text, "ptask-invocations"));
	EXPECT_EQ(1, fdinfo_value(text, "ptask-ptasks"));
	EXPECT_LE(0, fdinfo_value(text, "ptask-weight"));
	/* Each open is its own client with its own id. */
	ASSERT_EQ(0, fdinfo_read(self->xfd, other, sizeof(other)));
	EXPECT_LT(0, fdinfo_value(text, "drm-client-id"));
	EXPECT_NE(fdinfo_value(text, "drm-client-id"),
		  fdinfo_value(other, "drm-client-id"));
	EXPECT_EQ(0, fdinfo_value(other, "drm-engine-gpu"));
	/* What the client holds shows as memory: 64 KiB made and kept. */
	ASSERT_PT(0, pt_db_create(self->fd, 65536, 0, 0, &h, &off, NULL));
	ASSERT_EQ(0, fdinfo_read(self->fd, text, sizeof(text)));
	EXPECT_LE(64, fdinfo_value(text, "drm-total-system"));
	EXPECT_LE(64, fdinfo_value(text, "drm-resident-system"));
}

/* --- generic netlink: GET_SCHED, SET_SCHED, GET_PROC, SET_PRIO ------- */

struct nl_kv {
	int attr;
	__u32 val;
};

/* What a reply (or each dump message) carried; the last one wins. */
struct nl_reply {
	int msgs;
	__u64 val[PTASK_A_MAX + 1];
	bool has[PTASK_A_MAX + 1];
	bool saw_pid;		/* a GET_PROC message for @want_pid */
	__s32 want_pid;
};

static int reply_parse(struct nlattr **tb, void *arg)
{
	struct nl_reply *r = arg;
	int i;

	r->msgs++;
	for (i = 1; i <= PTASK_A_MAX; i++) {
		if (!tb[i])
			continue;
		r->has[i] = true;
		r->val[i] = nla_len(tb[i]) == 8 ? nla_get_u64(tb[i]) :
			    nla_len(tb[i]) == 4 ? nla_get_u32(tb[i]) : 0;
	}
	if (tb[PTASK_A_PROC_PID] &&
	    (__s32)nla_get_u32(tb[PTASK_A_PROC_PID]) == r->want_pid)
		r->saw_pid = true;
	return 0;
}

/* The request's attributes: @n u32 values. */
struct nl_kvs {
	const struct nl_kv *kv;
	int n;
};

static int kvs_put(struct nl_msg *msg, const void *arg)
{
	const struct nl_kvs *a = arg;
	int i;

	for (i = 0; i < a->n; i++)
		if (nla_put_u32(msg, a->kv[i].attr, a->kv[i].val))
			return -EMSGSIZE;
	return 0;
}

/* Send @cmd with @n u32 attributes; 0 or the kernel's -errno. */
static int nl_cmd(int cmd, bool dump, const struct nl_kv *kv, int n,
		  struct nl_reply *r)
{
	struct nl_kvs kvs = { .kv = kv, .n = n };
	struct pc_genl_req req = {
		.cmd = (__u8)cmd, .dump = dump,
		.put = kvs_put, .put_arg = &kvs,
		.parse = reply_parse, .parse_arg = r,
	};

	return pc_genl_call(&req);
}

TEST_F(sched, netlink_sched_commands)
{
	struct nl_kv set_ok[] = {
		{ PTASK_A_SCHED_ALPHA, 300 }, { PTASK_A_SCHED_WINDOW_MS, 50 },
	};
	struct nl_kv set_bad[] = {
		{ PTASK_A_SCHED_ALPHA, 400 }, { PTASK_A_SCHED_TIMER_US, 1 },
	};
	struct nl_reply r;
	struct pt_copy_graph g;
	struct nl_kv kv[2];

	memset(&r, 0, sizeof(r));
	ASSERT_EQ(0, nl_cmd(PTASK_CMD_SET_SCHED, false, set_ok, 2, &r));
	memset(&r, 0, sizeof(r));
	ASSERT_EQ(0, nl_cmd(PTASK_CMD_GET_SCHED, false, NULL, 0, &r));
	EXPECT_EQ(300, (int)r.val[PTASK_A_SCHED_ALPHA]);
	EXPECT_EQ(50, (int)r.val[PTASK_A_SCHED_WINDOW_MS]);
	EXPECT_EQ(sysfs_ll(SCHED_DIR "budgets"),
		  (long long)r.val[PTASK_A_SCHED_BUDGETS]);
	EXPECT_TRUE(r.has[PTASK_A_SCHED_PERIOD_NS]);
	EXPECT_TRUE(r.has[PTASK_A_SCHED_TOTAL_WEIGHT]);
	/* A bad value with a good one: -EINVAL, nothing applied. */
	memset(&r, 0, sizeof(r));
	EXPECT_EQ(-EINVAL, nl_cmd(PTASK_CMD_SET_SCHED, false, set_bad, 2, &r));
	EXPECT_EQ(300, sysfs_ll(SCHED_DIR "alpha_permille"));
	memset(&r, 0, sizeof(r));
	EXPECT_EQ(-EINVAL, nl_cmd(PTASK_CMD_SET_SCHED, false, NULL, 0, &r));
	/* GET_PROC lists this process once it owns a ptask. */
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	memset(&r, 0, sizeof(r));
	r.want_pid = getpid();
	ASSERT_EQ(0, nl_cmd(PTASK_CMD_GET_PROC, true, NULL, 0, &r));
	EXPECT_TRUE(r.saw_pid);
	/* SET_PRIO: a ptask's priority, a process's weight. */
	kv[0] = (struct nl_kv){ PTASK_A_OBJ_HANDLE, g.ptask };
	kv[1] = (struct nl_kv){ PTASK_A_OBJ_PRIO, 7 };
	memset(&r, 0, sizeof(r));
	EXPECT_EQ(0, nl_cmd(PTASK_CMD_SET_PRIO, false, kv, 2, &r));
	kv[1].val = 100;
	memset(&r, 0, sizeof(r));
	EXPECT_EQ(-EINVAL, nl_cmd(PTASK_CMD_SET_PRIO, false, kv, 2, &r));
	kv[0] = (struct nl_kv){ PTASK_A_PROC_PID, (__u32)getpid() };
	kv[1] = (struct nl_kv){ PTASK_A_PROC_WEIGHT, 3 };
	memset(&r, 0, sizeof(r));
	EXPECT_EQ(0, nl_cmd(PTASK_CMD_SET_PRIO, false, kv, 2, &r));
	EXPECT_EQ(3, proc_file(getpid(), "weight"));
	kv[1].val = 0;
	memset(&r, 0, sizeof(r));
	EXPECT_EQ(0, nl_cmd(PTASK_CMD_SET_PRIO, false, kv, 2, &r));
	kv[0].val = 999999;
	memset(&r, 0, sizeof(r));
	EXPECT_EQ(-ESRCH, nl_cmd(PTASK_CMD_SET_PRIO, false, kv, 2, &r));
	memset(&r, 0, sizeof(r));
	EXPECT_EQ(-EINVAL, nl_cmd(PTASK_CMD_SET_PRIO, false, kv, 1, &r));
}

/*
 * Without CAP_NET_ADMIN: SET_SCHED and SET_PRIO are refused (-EPERM), and
 * so is the GET_OBJECT dump, whose refusal reaches libnl as the error it
 * is (GENL_ADMIN_PERM refuses before the dump starts; a refusal from
 * inside the dump came as an NLMSG_DONE that libnl reports as success).
 * GET_SCHED and the GET_PROC dump are for everyone.  Failed steps exit
 * PT_CHILD_FAIL + 10 and up, never PT_CHILD_SKIP.
 */
static int child_admin_eperm(__s32 pid)
{
	struct nl_kv sched = { PTASK_A_SCHED_BUDGETS, 0 };
	struct nl_kv prio[2] = {
		{ PTASK_A_PROC_PID, (__u32)pid }, { PTASK_A_PROC_WEIGHT, 3 },
	};
	struct nl_reply r;

	if (pt_drop_all_caps())
		return PT_CHILD_FAIL + 10;
	memset(&r, 0, sizeof(r));
	if (nl_cmd(PTASK_CMD_SET_SCHED, false, &sched, 1, &r) != -EPERM)
		return PT_CHILD_FAIL + 11;
	memset(&r, 0, sizeof(r));
	if (nl_cmd(PTASK_CMD_SET_PRIO, false, prio, 2, &r) != -EPERM)
		return PT_CHILD_FAIL + 12;
	memset(&r, 0, sizeof(r));
	if (nl_cmd(PTASK_CMD_GET_OBJECT, true, NULL, 0, &r) != -EPERM ||
	    r.msgs != 0)
		return PT_CHILD_FAIL + 13;
	memset(&r, 0, sizeof(r));
	if (nl_cmd(PTASK_CMD_GET_SCHED, false, NULL, 0, &r))
		return PT_CHILD_FAIL + 14;
	memset(&r, 0, sizeof(r));
	r.want_pid = pid;
	if (nl_cmd(PTASK_CMD_GET_PROC, true, NULL, 0, &r) || !r.saw_pid)
		return PT_CHILD_FAIL + 15;
	return PT_CHILD_OK;
}

TEST_F(sched, netlink_admin_needs_cap_net_admin)
{
	struct pt_copy_graph g;
	pid_t pid;

	/* A record for GET_PROC to list and SET_PRIO to aim at. */
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(child_admin_eperm(getppid()));
	pt_env_track_pid(&self->env, pid);
	PT_WAIT_CHILD(&self->env, pid, PT_WAIT_MS);
	EXPECT_EQ(1024, proc_file(getpid(), "weight"));
}

TEST_HARNESS_MAIN
