// SPDX-License-Identifier: GPL-2.0
/*
 * ptaskctl_vm_test - ptaskctl in kernel mode against ptask.ko, in the
 * test guest (the user-mode twin is tests/daemon/ptaskctl_test.sh):
 *
 *   ptaskctl --mode kernel ... --netlink--> ptask.ko <--ioctl-- ptaskctl_client
 *                                              ^                (graph vmctl,
 *                                              +-- ptaskd --mode kernel --backend sim
 *
 * sched read and set (checked against /sys/kernel/ptask/sched), bad
 * values refused with nothing applied, policy and sched agreeing, a user
 * that is not root refused; with a client running: show --json, prio on
 * its ptask (checked in sysfs) and its pid, top; after it exits nothing
 * is listed.  Each ptaskctl runs as a child (fork + exec of the static
 * /bin/ptaskctl; $PTASK_PTASKCTL overrides), its output captured.
 * Without /bin/ptaskctl, /bin/ptaskctl_client or /bin/ptaskd every test
 * skips.  The fixture puts the scheduler's settings back as it found them.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "pt_harness.h"

#define CTL_OUT		16384
#define MAX_ARGS	16

static const char *prog(const char *env, const char *dflt)
{
	const char *p = getenv(env);

	return p && *p ? p : dflt;
}

#define PTASKCTL	prog("PTASK_PTASKCTL", "/bin/ptaskctl")
#define CLIENT		prog("PTASK_PTASKCTL_CLIENT", "/bin/ptaskctl_client")
#define PTASKD		prog("PTASK_PTASKD", "/bin/ptaskd")

/* Reads @fd to its end into @out (NUL-terminated, cut at @len - 1). */
static void read_all(int fd, char *out, size_t len)
{
	size_t have = 0;
	ssize_t n;
	char skip[256];

	for (;;) {
		if (have + 1 < len)
			n = read(fd, out + have, len - 1 - have);
		else
			n = read(fd, skip, sizeof(skip));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (have + 1 < len)
			have += (size_t)n;
	}
	out[have] = '\0';
}

/*
 * Runs `ptaskctl --mode kernel ARGS...` (NULL-terminated) as @uid (0: as
 * we are); its stdout and stderr in @out.  The exit status, or -1.
 */
static int ctl(uid_t uid, char *out, ...)
{
	const char *argv[MAX_ARGS + 4] = { "ptaskctl", "--mode", "kernel" };
	int fds[2], status, i = 3;
	va_list ap;
	pid_t pid;

	va_start(ap, out);
	while (i < MAX_ARGS + 3 && (argv[i] = va_arg(ap, const char *)))
		i++;
	va_end(ap);
	argv[i] = NULL;
	if (pipe(fds))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		if (uid && pt_become(uid))
			_exit(126);
		execv(PTASKCTL, (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	read_all(fds[0], out, CTL_OUT);
	close(fds[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	if (WEXITSTATUS(status) > 2)
		printf("# ptaskctl: exit %d: %s\n", WEXITSTATUS(status), out);
	return WEXITSTATUS(status);
}

/* A sysfs file under /sys/kernel/ptask as one line, newline dropped. */
static int sysfs_str(const char *rel, char *buf, size_t len)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", PTASK_SYSFS_DIR, rel);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/*
 * sched/policy lists every policy with the one in use in brackets
 * ("default [fifo] priority ..."): that one.
 */
static int sysfs_policy(char *buf, size_t len)
{
	char line[256], *open, *close;
	int err;

	err = sysfs_str("sched/policy", line, sizeof(line));
	if (err)
		return err;
	open = strchr(line, '[');
	close = open ? strchr(open, ']') : NULL;
	if (!close || (size_t)(close - open) > len)
		return -EPROTO;
	*close = '\0';
	snprintf(buf, len, "%s", open + 1);
	return 0;
}

static __u64 sysfs_num(const char *rel)
{
	__u64 v = ~0ULL;

	return pt_sysfs_u64(rel, &v) ? ~0ULL : v;
}

/* --- ptaskd and the client --------------------------------------------------- */

static pid_t ptaskd_start(struct pt_env *env)
{
	const char *argv[] = { "ptaskd", "--mode", "kernel", "--backend", "sim",
			       NULL };
	__u64 before;
	pid_t pid;
	int fd;

	if (pt_executors_read(&before))
		return -ENODEV;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		fd = open("/tmp/ptaskctl_vm_ptaskd.log", O_WRONLY | O_CREAT | O_APPEND,
			  0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(PTASKD, (char *const *)argv);
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

/*
 * Starts `ptaskctl_client vmctl 3` in kernel mode and waits (up to 60 s:
 * software emulation) for its "ready" line: its pid, or -errno.
 */
static pid_t client_start(struct pt_env *env, __u32 *ptask)
{
	const char *argv[] = { "ptaskctl_client", "vmctl", "3", NULL };
	struct pollfd p = { .events = POLLIN };
	char line[256] = "";
	size_t have = 0;
	int fds[2], cpid;
	pid_t pid;
	ssize_t n;

	if (pipe(fds))
		return -errno;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		setenv("PTASK_MODE", "kernel", 1);
		execv(CLIENT, (char *const *)argv);
		_exit(127);
	}
	pt_env_track_pid(env, pid);
	close(fds[1]);
	p.fd = fds[0];
	while (!strchr(line, '\n') && have + 1 < sizeof(line) &&
	       poll(&p, 1, 60000) > 0) {
		n = read(fds[0], line + have, sizeof(line) - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		line[have] = '\0';
	}
	close(fds[0]);
	if (sscanf(line, "ready graph=%*u ptask=%u pid=%d", ptask, &cpid) != 2 ||
	    cpid != pid) {
		printf("# client said: '%s'\n", line);
		kill(pid, SIGKILL);
		pt_env_wait_pid(env, pid, PT_WAIT_MS);
		return -EPROTO;
	}
	return pid;
}

/* --- tests ------------------------------------------------------------------- */

FIXTURE(ctl) {
	struct pt_env env;
	char out[CTL_OUT];
	__u64 alpha, timer, window, budgets;
	char policy[32];
};

FIXTURE_SETUP(ctl)
{
	PT_ENV_SETUP(&self->env);
	if (geteuid() != 0)
		SKIP(pt_skip_exit(), "needs root: sets PTSched's settings");
	if (access(PTASKCTL, X_OK))
		SKIP(pt_skip_exit(), "no %s (make ptaskctl-static)", PTASKCTL);
	self->alpha = sysfs_num("sched/alpha_permille");
	self->timer = sysfs_num("sched/timer_us");
	self->window = sysfs_num("sched/window_ms");
	self->budgets = sysfs_num("sched/budgets");
	ASSERT_EQ(0, sysfs_policy(self->policy, sizeof(self->policy)));
}

FIXTURE_TEARDOWN(ctl)
{
	char a[24], t[24], w[24];

	snprintf(a, sizeof(a), "%llu", (unsigned long long)self->alpha);
	snprintf(t, sizeof(t), "%llu", (unsigned long long)self->timer);
	snprintf(w, sizeof(w), "%llu", (unsigned long long)self->window);
	EXPECT_EQ(0, ctl(0, self->out, "sched", "alpha", a, "timer", t,
			 "window", w, "policy", self->policy, "budgets",
			 self->budgets ? "on" : "off", NULL));
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

TEST_F(ctl, sched_reads_what_sysfs_says)
{
	char want[64];

	ASSERT_EQ(0, ctl(0, self->out, "sched", NULL));
	snprintf(want, sizeof(want), "alpha_permille: %llu\n",
		 (unsigned long long)self->alpha);
	EXPECT_NE(NULL, strstr(self->out, want));
	snprintf(want, sizeof(want), "policy: %s\n", self->policy);
	EXPECT_NE(NULL, strstr(self->out, want));
	EXPECT_NE(NULL, strstr(self->out, "accelerators: "));
	EXPECT_NE(NULL, strstr(self->out, "period_ns: "));
}

TEST_F(ctl, sched_sets_several_at_once)
{
	char policy[32];

	ASSERT_EQ(0, ctl(0, self->out, "sched", "alpha", "250", "policy", "fifo",
			 "window", "50", "budgets", "off", NULL));
	EXPECT_NE(NULL, strstr(self->out, "alpha_permille: 250\n"));
	EXPECT_NE(NULL, strstr(self->out, "budgets: off\n"));
	EXPECT_EQ(250ULL, sysfs_num("sched/alpha_permille"));
	EXPECT_EQ(50ULL, sysfs_num("sched/window_ms"));
	EXPECT_EQ(0ULL, sysfs_num("sched/budgets"));
	ASSERT_EQ(0, sysfs_policy(policy, sizeof(policy)));
	EXPECT_STREQ("fifo", policy);
}

TEST_F(ctl, sched_refuses_bad_values_and_applies_nothing)
{
	EXPECT_EQ(2, ctl(0, self->out, "sched", "alpha", "0", NULL));
	EXPECT_NE(NULL, strstr(self->out, "want permille, 1..1000"));
	EXPECT_EQ(2, ctl(0, self->out, "sched", "alpha", "300", "timer", "5", NULL));
	EXPECT_EQ(2, ctl(0, self->out, "sched", "window", "600001", NULL));
	EXPECT_EQ(2, ctl(0, self->out, "sched", "policy", "sideways", NULL));
	EXPECT_EQ(2, ctl(0, self->out, "sched", "budgets", "maybe", NULL));
	EXPECT_EQ(2, ctl(0, self->out, "sched", "alpha", NULL));
	EXPECT_EQ(self->alpha, sysfs_num("sched/alpha_permille"));
	EXPECT_EQ(self->timer, sysfs_num("sched/timer_us"));
}

TEST_F(ctl, policy_and_sched_set_the_same_thing)
{
	char policy[32];

	ASSERT_EQ(0, ctl(0, self->out, "policy", "priority", NULL));
	EXPECT_STREQ("policy: priority\n", self->out);
	ASSERT_EQ(0, sysfs_policy(policy, sizeof(policy)));
	EXPECT_STREQ("priority", policy);
	ASSERT_EQ(0, ctl(0, self->out, "sched", NULL));
	EXPECT_NE(NULL, strstr(self->out, "policy: priority\n"));
	ASSERT_EQ(0, ctl(0, self->out, "sched", "policy", "default", NULL));
	ASSERT_EQ(0, ctl(0, self->out, "policy", NULL));
	EXPECT_STREQ("policy: default\n", self->out);
}

TEST_F(ctl, not_root_may_read_but_not_set)
{
	EXPECT_EQ(0, ctl(PT_NOBODY, self->out, "sched", NULL));
	EXPECT_EQ(1, ctl(PT_NOBODY, self->out, "sched", "alpha", "100", NULL));
	EXPECT_NE(NULL, strstr(self->out, "needs CAP_NET_ADMIN"));
	EXPECT_EQ(1, ctl(PT_NOBODY, self->out, "show", NULL));
	EXPECT_EQ(1, ctl(PT_NOBODY, self->out, "prio", "ptask", "1", "1", NULL));
	EXPECT_EQ(self->alpha, sysfs_num("sched/alpha_permille"));
}

TEST_F(ctl, show_prio_top_with_a_client)
{
	char want[128], num[24], weight[24], rel[64];
	pid_t ptaskd, client;
	__u32 ptask;
	int st;

	if (access(PTASKD, X_OK) || access(CLIENT, X_OK))
		SKIP(return, "no %s or %s", PTASKD, CLIENT);
	ptaskd = ptaskd_start(&self->env);
	ASSERT_LT(0, ptaskd);
	client = client_start(&self->env, &ptask);
	ASSERT_LT(0, client);

	ASSERT_EQ(0, ctl(0, self->out, "--json", "show", NULL));
	EXPECT_NE(NULL, strstr(self->out, "\"name\":\"vmctl\",\"state\":\"running\""));
	snprintf(want, sizeof(want), "{\"handle\":%u,\"name\":\"add\",\"kind\":\"gpu\"",
		 ptask);
	EXPECT_NE(NULL, strstr(self->out, want));
	snprintf(want, sizeof(want), "\"owner_pid\":%d,", client);
	EXPECT_NE(NULL, strstr(self->out, want));
	EXPECT_NE(NULL, strstr(self->out, "\"invocations\":3,"));

	snprintf(num, sizeof(num), "%u", ptask);
	ASSERT_EQ(0, ctl(0, self->out, "prio", "ptask", num, "66", NULL));
	snprintf(rel, sizeof(rel), "ptasks/%u/priority", ptask);
	EXPECT_EQ(66ULL, sysfs_num(rel));
	EXPECT_EQ(2, ctl(0, self->out, "prio", "ptask", num, "100", NULL));
	EXPECT_EQ(1, ctl(0, self->out, "prio", "ptask", "999999", "1", NULL));
	EXPECT_NE(NULL, strstr(self->out, "no such ptask"));

	snprintf(num, sizeof(num), "%d", client);
	ASSERT_EQ(0, ctl(0, self->out, "prio", "pid", num, "3000", NULL));
	ASSERT_EQ(0, ctl(0, self->out, "--json", "top", "--once", "-d", "0.1", NULL));
	snprintf(weight, sizeof(weight), "%d", client);
	snprintf(want, sizeof(want), "{\"pid\":%s,\"uid\":0,\"nice\":0,\"weight\":3000,"
		 "\"weight_override\":3000,", weight);
	EXPECT_NE(NULL, strstr(self->out, want));
	ASSERT_EQ(0, ctl(0, self->out, "prio", "pid", num, "default", NULL));
	EXPECT_EQ(1, ctl(0, self->out, "prio", "pid", "1", "5", NULL));
	EXPECT_NE(NULL, strstr(self->out, "no GPU accounting"));

	ASSERT_EQ(0, ctl(0, self->out, "top", "-n", "2", "-d", "0.1", NULL));
	EXPECT_NE(NULL, strstr(strstr(self->out, "ptaskctl top:") + 1, "ptaskctl top:"));
	snprintf(want, sizeof(want), "\n%8d ", client);
	EXPECT_NE(NULL, strstr(self->out, want));

	ASSERT_EQ(0, kill(client, SIGTERM));
	st = pt_env_wait_pid(&self->env, client, PT_WAIT_MS);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ASSERT_EQ(0, ctl(0, self->out, "--json", "top", "--once", "-d", "0.1", NULL));
	EXPECT_NE(NULL, strstr(self->out, "\"processes\":[]"));
	ASSERT_EQ(0, ctl(0, self->out, "--json", "show", NULL));
	EXPECT_STREQ("{\"graphs\":[]}\n", self->out);
	ASSERT_EQ(0, kill(ptaskd, SIGTERM));
	st = pt_env_wait_pid(&self->env, ptaskd, PT_WAIT_MS);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

TEST_HARNESS_MAIN
