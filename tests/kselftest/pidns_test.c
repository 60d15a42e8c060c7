// SPDX-License-Identifier: GPL-2.0
/*
 * pidns_test - PTSched keys a process by its pid in the initial pid
 * namespace: two processes that are both pid 1 of their own pid
 * namespaces (two containers' init) get two accounting records, two
 * budgets, two /sys/kernel/ptask/procs/<pid>/ directories named by their
 * pids in the initial namespace, and each fd's fdinfo shows its own
 * process's record.
 *
 *	test (initial pid namespace, root)
 *	 |- middle 0: unshare(CLONE_NEWPID), fork
 *	 |   `- client 0: pid 1 in namespace A; /dev/ptask, a running copy
 *	 |                graph, one datablock pushed
 *	 `- middle 1: unshare(CLONE_NEWPID), fork
 *	     `- client 1: pid 1 in namespace B; /dev/ptask, a copy graph
 *	 the test: an executor fd takes client 0's invocation and charges it
 *	 GPU time; reads sysfs procs/, ptasks/ and /proc/<pid>/fdinfo/
 *
 * A middle process reports its child's pid as fork() returned it (its
 * pid in the initial namespace); a client reports what it sees
 * (getpid() == 1), then waits for the test to let it go.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/wait.h>

#include "pt_harness.h"

#define CLIENTS		2
#define GPU_NS		5000000ULL	/* charged to client 0 */
#define WEIGHT_0	"7"		/* client 0's weight override */
#define WEIGHT_DEFAULT	1024		/* nice 0 */

/* What a client sends once its objects exist (err: 0 or -errno). */
struct client_report {
	int err;
	int step;
	pid_t ns_pid;
	int fd;
	__u32 ptask;
	__u32 in_chan;
};

/* What a middle process sends: its child's pid, or why there is none. */
struct middle_report {
	int err;
	pid_t child;
};

/* One container's pipes; [0] read end, [1] write end. */
struct container {
	pid_t middle;
	int client_pipe[2];	/* client -> test */
	int middle_pipe[2];	/* middle -> test */
	int go_pipe[2];		/* test -> client: a byte (or EOF) ends it */
	struct client_report client;
	pid_t global_pid;
};

FIXTURE(pidns) {
	struct pt_env env;
	struct container c[CLIENTS];
	int n;
};

FIXTURE_SETUP(pidns)
{
	PT_ENV_SETUP(&self->env);
	self->n = 0;
}

FIXTURE_TEARDOWN(pidns)
{
	int i;

	/* Let every client go (EOF also does), then reap the middles. */
	for (i = 0; i < self->n; i++) {
		close(self->c[i].go_pipe[1]);
		close(self->c[i].client_pipe[0]);
		close(self->c[i].middle_pipe[0]);
	}
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

static int write_all(int fd, const void *p, size_t len)
{
	return write(fd, p, len) == (ssize_t)len ? 0 : -EIO;
}

/* A read of exactly @len bytes within 10 s: 0, -EPIPE (EOF) or -errno. */
static int read_report(int fd, void *p, size_t len)
{
	struct timeval tv = { .tv_sec = 10 };
	fd_set set;
	ssize_t n;

	FD_ZERO(&set);
	FD_SET(fd, &set);
	if (select(fd + 1, &set, NULL, NULL, &tv) != 1)
		return -ETIMEDOUT;
	n = read(fd, p, len);
	if (n < 0)
		return -errno;
	return n == (ssize_t)len ? 0 : -EPIPE;
}

/* The client: pid 1 of a new namespace.  Only system calls and lib.c. */
static void __attribute__((noreturn)) run_client(struct container *c,
						 bool push)
{
	struct client_report r = { .ns_pid = getpid() };
	struct pt_copy_graph g;
	char byte;

	memset(&g, 0, sizeof(g));
	alarm(30);	/* never outlive a test that lost track of us */
	r.fd = pt_open();
	r.err = r.fd < 0 ? r.fd : 0;
	r.step = 1;
	if (!r.err) {
		r.err = pt_build_copy1(r.fd, true, &g);
		r.step = 2;
	}
	if (!r.err && push) {
		r.err = pt_push_seed(r.fd, g.in_chan[0], 64, 1, 0,
				     PTASK_NONBLOCK, 0);
		r.step = 3;
	}
	r.ptask = g.ptask;
	r.in_chan = g.in_chan[0];
	if (write_all(c->client_pipe[1], &r, sizeof(r)))
		_exit(PT_CHILD_FAIL);
	/* Hold the objects until the test is done looking. */
	if (read(c->go_pipe[0], &byte, 1) < 0)
		_exit(PT_CHILD_FAIL);
	_exit(r.err ? PT_CHILD_FAIL : PT_CHILD_OK);
}

/* The middle: a new pid namespace for its children, one child in it. */
static void __attribute__((noreturn)) run_middle(struct container *c,
						 bool push)
{
	struct middle_report r = { 0 };
	int st;

	if (unshare(CLONE_NEWPID)) {
		r.err = -errno;
		write_all(c->middle_pipe[1], &r, sizeof(r));
		_exit(PT_CHILD_SKIP);
	}
	r.child = fork();
	if (r.child < 0) {
		r.err = -errno;
		write_all(c->middle_pipe[1], &r, sizeof(r));
		_exit(PT_CHILD_FAIL);
	}
	if (r.child == 0)
		run_client(c, push);
	if (write_all(c->middle_pipe[1], &r, sizeof(r)))
		_exit(PT_CHILD_FAIL);
	if (waitpid(r.child, &st, 0) != r.child || !WIFEXITED(st))
		_exit(PT_CHILD_FAIL);
	_exit(WEXITSTATUS(st));
}

/* Pipes and a middle process for container @i; 0 or -errno. */
static int start_container(FIXTURE_DATA(pidns) *self, int i, bool push)
{
	struct container *c = &self->c[i];
	int j;

	if (pipe2(c->client_pipe, O_CLOEXEC) || pipe2(c->middle_pipe, O_CLOEXEC))
		return -errno;
	if (pipe2(c->go_pipe, O_CLOEXEC))
		return -errno;
	self->n = i + 1;
	fflush(stdout);
	fflush(stderr);
	c->middle = fork();
	if (c->middle < 0)
		return -errno;
	if (c->middle == 0) {
		/*
		 * Only this container's write ends and go read end: a
		 * client must see EOF on go once the test closes it.
		 */
		for (j = 0; j < i; j++) {
			close(self->c[j].client_pipe[0]);
			close(self->c[j].middle_pipe[0]);
			close(self->c[j].go_pipe[1]);
		}
		close(c->client_pipe[0]);
		close(c->middle_pipe[0]);
		close(c->go_pipe[1]);
		run_middle(c, push);
	}
	pt_env_track_pid(&self->env, c->middle);
	close(c->client_pipe[1]);
	close(c->middle_pipe[1]);
	close(c->go_pipe[0]);
	return 0;
}

static long long read_ll(const char *path)
{
	char buf[128];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1000000 - errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -1000000 - errno;
	buf[n] = '\0';
	return strtoll(buf, NULL, 0);
}

static long long proc_file(pid_t pid, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), PTASK_SYSFS_DIR "/procs/%d/%s", pid, name);
	return read_ll(path);
}

/* Does @path exist? */
static bool path_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static bool proc_dir_exists(pid_t pid)
{
	char path[128];

	snprintf(path, sizeof(path), PTASK_SYSFS_DIR "/procs/%d", pid);
	return path_exists(path);
}

/*
 * Waits until procs/<pid>/ exists with its files (@want) or is gone.
 * Present: its last file (held_ns, kmod/sysfs_objs.c), not the
 * directory, which kobject_add makes before the files.
 */
static int proc_dir_wait(pid_t pid, bool want)
{
	char path[128];

	snprintf(path, sizeof(path), PTASK_SYSFS_DIR "/procs/%d%s", pid,
		 want ? "/held_ns" : "");
	return pt_path_wait(path, want, 2000);
}

/* "key:\t<n>" of /proc/<pid>/fdinfo/<fd>, or a value below -1000000. */
static long long fdinfo_value(pid_t pid, int fd, const char *key)
{
	char path[64], text[2048], *p;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -1000000 - errno;
	n = read(f, text, sizeof(text) - 1);
	close(f);
	if (n < 0)
		return -1000000 - errno;
	text[n] = '\0';
	p = strstr(text, key);
	if (!p || p[strlen(key)] != ':')
		return -2000000;
	return strtoll(p + strlen(key) + 1, NULL, 10);
}

/* Starts both containers and reads their reports (SKIP without pid ns). */
#define START_CONTAINERS() do {						\
	int __i;							\
	struct middle_report __m;					\
									\
	for (__i = 0; __i < CLIENTS; __i++) {				\
		ASSERT_EQ(0, start_container(self, __i, __i == 0));	\
		ASSERT_EQ(0, read_report(self->c[__i].middle_pipe[0],	\
					 &__m, sizeof(__m)));		\
		if (__m.err == -EINVAL || __m.err == -EPERM)		\
			SKIP(return, "unshare(CLONE_NEWPID): %s",	\
			     strerror(-__m.err));			\
		ASSERT_EQ(0, __m.err);					\
		self->c[__i].global_pid = __m.child;			\
		ASSERT_EQ(0, read_report(self->c[__i].client_pipe[0],	\
					 &self->c[__i].client,		\
					 sizeof(self->c[__i].client)));	\
		ASSERT_EQ(0, self->c[__i].client.err)			\
			TH_LOG("client %d, step %d", __i,		\
			       self->c[__i].client.step);		\
	}								\
} while (0)

/* Lets the clients go and checks that every level exited cleanly. */
#define STOP_CONTAINERS() do {						\
	int __i;							\
									\
	for (__i = 0; __i < CLIENTS; __i++)				\
		ASSERT_EQ(1, write(self->c[__i].go_pipe[1], "x", 1));	\
	for (__i = 0; __i < CLIENTS; __i++)				\
		PT_WAIT_CHILD(&self->env, self->c[__i].middle, 5000);	\
} while (0)

TEST_F(pidns, two_namespace_inits_get_two_records)
{
	struct container *a = &self->c[0], *b = &self->c[1];
	char path[160];

	PT_NEED_ROOT();
	START_CONTAINERS();
	/* Both are pid 1 where they run, two processes on the host. */
	EXPECT_EQ(1, a->client.ns_pid);
	EXPECT_EQ(1, b->client.ns_pid);
	ASSERT_LT(1, a->global_pid);
	ASSERT_LT(1, b->global_pid);
	ASSERT_NE(a->global_pid, b->global_pid);
	/* The admin sees each under its initial-namespace pid, once. */
	ASSERT_EQ(0, proc_dir_wait(a->global_pid, true));
	ASSERT_EQ(0, proc_dir_wait(b->global_pid, true));
	EXPECT_EQ(1, proc_file(a->global_pid, "ptasks"));
	EXPECT_EQ(1, proc_file(b->global_pid, "ptasks"));
	/* Nothing under the pid they share (the guest's init has no ptask). */
	EXPECT_FALSE(proc_dir_exists(1));
	/* each ptask's last file first (name), as for the procs */
	snprintf(path, sizeof(path), PTASK_SYSFS_DIR "/ptasks/%u/name",
		 a->client.ptask);
	EXPECT_EQ(0, pt_path_wait(path, true, 2000));
	snprintf(path, sizeof(path), PTASK_SYSFS_DIR "/ptasks/%u/owner_pid",
		 a->client.ptask);
	EXPECT_EQ(a->global_pid, read_ll(path));
	snprintf(path, sizeof(path), PTASK_SYSFS_DIR "/ptasks/%u/name",
		 b->client.ptask);
	EXPECT_EQ(0, pt_path_wait(path, true, 2000));
	snprintf(path, sizeof(path), PTASK_SYSFS_DIR "/ptasks/%u/owner_pid",
		 b->client.ptask);
	EXPECT_EQ(b->global_pid, read_ll(path));
	STOP_CONTAINERS();
	EXPECT_EQ(0, proc_dir_wait(a->global_pid, false));
	EXPECT_EQ(0, proc_dir_wait(b->global_pid, false));
}

TEST_F(pidns, gpu_time_and_weight_stay_with_their_process)
{
	struct container *a = &self->c[0], *b = &self->c[1];
	struct ptask_invocation inv;
	struct ptask_invocation_port ports[2 * PTASK_MAX_PORTS];
	struct ptask_exec_output out = { .index = 1 };
	char path[160];
	__u32 n_inv = 0;
	__u64 off;
	int xfd;

	PT_NEED_ROOT();
	xfd = pt_env_open(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(0, pt_nl_register(xfd));
	START_CONTAINERS();
	ASSERT_EQ(0, proc_dir_wait(a->global_pid, true));
	ASSERT_EQ(0, proc_dir_wait(b->global_pid, true));
	/* The executor sees the owner by its initial-namespace pid. */
	ASSERT_PT(0, pt_exec_take(xfd, 0, pt_deadline_ms(5000), &inv, 1, ports,
				  2 * PTASK_MAX_PORTS, &n_inv, NULL));
	ASSERT_EQ(1U, n_inv);
	EXPECT_EQ(a->client.ptask, inv.ptask);
	EXPECT_EQ(a->global_pid, inv.owner_pid);
	ASSERT_PT(0, pt_db_create(xfd, 64, 0, 0, &out.datablock, &off, NULL));
	ASSERT_PT(0, pt_exec_complete(xfd, inv.id, 0, GPU_NS, &out, 1));
	/* Charged to A's budget alone. */
	EXPECT_EQ((long long)GPU_NS, proc_file(a->global_pid, "gpu_ns"));
	EXPECT_EQ(1, proc_file(a->global_pid, "invocations"));
	EXPECT_EQ(0, proc_file(b->global_pid, "gpu_ns"));
	EXPECT_EQ(0, proc_file(b->global_pid, "invocations"));
	/* A weight set on A's record is not B's. */
	snprintf(path, sizeof(path), PTASK_SYSFS_DIR "/procs/%d/weight",
		 a->global_pid);
	{
		int f = open(path, O_WRONLY | O_CLOEXEC);

		ASSERT_LE(0, f);
		ASSERT_EQ((ssize_t)strlen(WEIGHT_0),
			  write(f, WEIGHT_0, strlen(WEIGHT_0)));
		close(f);
	}
	EXPECT_EQ(atoi(WEIGHT_0), proc_file(a->global_pid, "weight"));
	EXPECT_EQ(WEIGHT_DEFAULT, proc_file(b->global_pid, "weight"));
	/* Each fd's fdinfo shows its own process's record. */
	EXPECT_EQ(atoi(WEIGHT_0),
		  fdinfo_value(a->global_pid, a->client.fd, "ptask-weight"));
	EXPECT_EQ(WEIGHT_DEFAULT,
		  fdinfo_value(b->global_pid, b->client.fd, "ptask-weight"));
	EXPECT_EQ((long long)GPU_NS, fdinfo_value(a->global_pid, a->client.fd,
						  "drm-engine-gpu"));
	EXPECT_EQ(0, fdinfo_value(b->global_pid, b->client.fd,
				  "drm-engine-gpu"));
	STOP_CONTAINERS();
}

TEST_HARNESS_MAIN
