// SPDX-License-Identifier: GPL-2.0
/*
 * netlink_test - the "ptask" generic netlink family: executor registration
 * (PTASK_CMD_EXEC_REGISTER / _EXEC_UNREGISTER: CAP_NET_ADMIN through
 * GENL_ADMIN_PERM, CAP_SYS_ADMIN as well to register) and
 * PTASK_CMD_GET_INFO, against /sys/kernel/ptask/{abi_version,executors,
 * objects/}.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <linux/capability.h>

#include "pt_harness.h"

FIXTURE(netlink) {
	struct pt_env env;
	int fd;
};

FIXTURE_SETUP(netlink)
{
	PT_ENV_SETUP(&self->env);
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(netlink)
{
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

static __u64 executors_now(void)
{
	__u64 v;

	return pt_executors_read(&v) ? ~0ULL : v;
}

TEST_F(netlink, sysfs_abi_version)
{
	__u64 v = 0;

	ASSERT_PT(0, pt_sysfs_u64("abi_version", &v));
	ASSERT_EQ((__u64)PTASK_ABI_VERSION, v);
}

TEST_F(netlink, get_info_abi_and_counts)
{
	__u64 c[__PTASK_COUNT_MAX];
	struct pc_genl_info info;
	struct pt_copy_graph g;
	__u32 db;
	int i;

	/* Something to count in every category but invocations. */
	ASSERT_PT(0, pt_build_copy1(self->fd, false, &g));
	ASSERT_PT(0, pt_template_open(self->fd, g.graph, PTASK_TEMPLATE_OPAQUE,
				      PTASK_BIND_GLOBAL, 1, 64, 1, 1, "", NULL));
	ASSERT_PT(0, pt_db_make(self->fd, 64, 1, &db));

	ASSERT_PT(0, pc_genl_get_info(&info));
	ASSERT_PT(0, pt_counts_read(c));
	ASSERT_TRUE(info.has_abi);
	ASSERT_EQ((__u32)PTASK_ABI_VERSION, info.abi);
	ASSERT_TRUE(info.has_executors);
	ASSERT_EQ(executors_now(), (__u64)info.executors);
	ASSERT_TRUE(info.has_counts);
	for (i = 0; i < __PTASK_COUNT_MAX; i++) {
		TH_LOG("count %s: netlink %llu sysfs %llu", pt_count_names[i],
		       (unsigned long long)info.counts[i],
		       (unsigned long long)c[i]);
		ASSERT_TRUE(info.has_count[i]);
		ASSERT_EQ(c[i], info.counts[i]);
	}
	ASSERT_LT(0ULL, info.counts[PTASK_COUNT_DATABLOCKS]);
	ASSERT_LT(0ULL, info.counts[PTASK_COUNT_PORTS]);
	ASSERT_PT(0, pt_db_release(self->fd, db));
}

/* GET_INFO needs no privilege. */
TEST_F(netlink, get_info_unprivileged)
{
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct pc_genl_info info;

		if (geteuid() == 0 && pt_drop_all_caps())
			_exit(PT_CHILD_FAIL);
		if (pc_genl_get_info(&info))
			_exit(PT_CHILD_FAIL + 1);
		_exit(info.abi == PTASK_ABI_VERSION ? PT_CHILD_OK
						    : PT_CHILD_FAIL + 2);
	}
	pt_env_track_pid(&self->env, pid);
	PT_WAIT_CHILD(&self->env, pid, PT_WAIT_MS);
}

TEST_F(netlink, register_counted_and_close_unregisters)
{
	struct pc_genl_info info;
	__u64 before = executors_now();
	int xfd;

	PT_NEED_ROOT();
	xfd = pt_env_open(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(0, pt_nl_register(xfd));
	ASSERT_EQ(before + 1, executors_now());
	ASSERT_PT(0, pc_genl_get_info(&info));
	ASSERT_EQ(before + 1, (__u64)info.executors);
	pt_env_close(&self->env, xfd);
	ASSERT_PT(0, pt_executors_wait(before, PT_WAIT_MS));
}

TEST_F(netlink, register_without_accels)
{
	__u64 before = executors_now();
	int xfd;

	PT_NEED_ROOT();
	xfd = pt_env_open(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(0, pt_nl_register_ex(xfd, 0));
	ASSERT_EQ(before + 1, executors_now());
}

TEST_F(netlink, register_twice_ealready)
{
	int xfd;

	PT_NEED_ROOT();
	xfd = pt_env_open(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(0, pt_nl_register(xfd));
	ASSERT_PT(-EALREADY, pt_nl_register(xfd));
}

TEST_F(netlink, register_not_ptask_fd_ebadf)
{
	int nfd;

	PT_NEED_ROOT();
	nfd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, nfd);
	ASSERT_PT(-EBADF, pt_nl_register(nfd));
	close(nfd);
	/* Not an open fd at all. */
	ASSERT_PT(-EBADF, pt_nl_register(nfd));
	ASSERT_PT(-EBADF, pt_nl_register(1000000));
}

TEST_F(netlink, register_missing_fd_einval)
{
	PT_NEED_ROOT();
	ASSERT_PT(-EINVAL, pt_nl_register_ex(-1, 1));
}

TEST_F(netlink, register_too_many_accels_e2big)
{
	__u64 before = executors_now();
	int xfd;

	PT_NEED_ROOT();
	xfd = pt_env_open(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(-E2BIG, pt_nl_register_ex(xfd, PTASK_MAX_ACCELS + 1));
	ASSERT_EQ(before, executors_now());
	ASSERT_PT(0, pt_nl_register_ex(xfd, PTASK_MAX_ACCELS));
}

/*
 * Without CAP_NET_ADMIN the genetlink core refuses (GENL_ADMIN_PERM) before
 * the handler runs; the netlink ack carries -EPERM.  Two ways to lose it:
 * drop every capability as root, or become another user.
 */
TEST_F(netlink, register_without_cap_eperm)
{
	__u64 before = executors_now();
	pid_t pid;

	PT_NEED_ROOT();
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = pt_open();

		if (fd < 0)
			_exit(PT_CHILD_FAIL);
		if (pt_drop_all_caps())
			_exit(PT_CHILD_FAIL + 1);
		_exit(pt_nl_register(fd) == -EPERM ? PT_CHILD_OK
						   : PT_CHILD_FAIL + 2);
	}
	pt_env_track_pid(&self->env, pid);
	PT_WAIT_CHILD(&self->env, pid, PT_WAIT_MS);
	ASSERT_EQ(before, executors_now());
}

TEST_F(netlink, register_as_other_user_eperm)
{
	pid_t pid;

	PT_NEED_ROOT();
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* Opened as root, so the fd is valid whoever uses it. */
		int fd = pt_open();

		if (fd < 0)
			_exit(PT_CHILD_FAIL);
		if (pt_become(PT_NOBODY))
			_exit(PT_CHILD_FAIL + 1);
		_exit(pt_nl_register(fd) == -EPERM ? PT_CHILD_OK
						   : PT_CHILD_FAIL + 2);
	}
	pt_env_track_pid(&self->env, pid);
	PT_WAIT_CHILD(&self->env, pid, PT_WAIT_MS);
}

/*
 * A child that keeps only the capabilities of @caps, then registers and
 * unregisters @fd (a /dev/ptask fd that is no executor): both results
 * must match, else the exit code (PT_CHILD_FAIL + 11.., never
 * PT_CHILD_SKIP) names the step.
 */
static void child_register_with_caps(int fd, __u64 caps, int want_register,
				     int want_unregister)
{
	if (pt_keep_caps(caps))
		_exit(PT_CHILD_FAIL + 11);
	if (pt_nl_register(fd) != want_register)
		_exit(PT_CHILD_FAIL + 12);
	if (pt_nl_unregister(fd) != want_unregister)
		_exit(PT_CHILD_FAIL + 13);
	_exit(PT_CHILD_OK);
}

/*
 * CAP_NET_ADMIN passes GENL_ADMIN_PERM: enough to unregister (-ENOENT: the
 * fd is no executor), but an executor sees every user's data and needs
 * CAP_SYS_ADMIN as well.
 */
TEST_F(netlink, register_needs_cap_sys_admin_too)
{
	__u64 before = executors_now();
	pid_t pid;

	PT_NEED_ROOT();
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		child_register_with_caps(self->fd, 1ULL << CAP_NET_ADMIN,
					 -EPERM, -ENOENT);
	pt_env_track_pid(&self->env, pid);
	PT_WAIT_CHILD(&self->env, pid, 5000);
	ASSERT_EQ(before, executors_now());
}

/* CAP_SYS_ADMIN alone does not pass GENL_ADMIN_PERM. */
TEST_F(netlink, admin_commands_need_cap_net_admin)
{
	__u64 before = executors_now();
	pid_t pid;

	PT_NEED_ROOT();
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		child_register_with_caps(self->fd, 1ULL << CAP_SYS_ADMIN,
					 -EPERM, -EPERM);
	pt_env_track_pid(&self->env, pid);
	PT_WAIT_CHILD(&self->env, pid, 5000);
	ASSERT_EQ(before, executors_now());
}

/*
 * The permission flag is checked before the attributes: a request with
 * no PTASK_A_EXEC_FD (-EINVAL for root, register_missing_fd_einval) is
 * -EPERM without CAP_NET_ADMIN.
 */
TEST_F(netlink, permission_checked_before_attributes)
{
	pid_t pid;

	PT_NEED_ROOT();
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (pt_drop_all_caps())
			_exit(PT_CHILD_FAIL + 1);
		_exit(pt_nl_register_ex(-1, 1) == -EPERM ? PT_CHILD_OK
							 : PT_CHILD_FAIL + 2);
	}
	pt_env_track_pid(&self->env, pid);
	PT_WAIT_CHILD(&self->env, pid, 5000);
}

TEST_F(netlink, unregister_drops_role)
{
	struct ptask_invocation inv;
	struct ptask_invocation_port ports[2];
	__u64 before = executors_now();
	int xfd;

	PT_NEED_ROOT();
	xfd = pt_env_open(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(0, pt_nl_register(xfd));
	ASSERT_PT(-EAGAIN, pt_exec_take(xfd, PTASK_NONBLOCK, 0, &inv, 1, ports,
					2, NULL, NULL));
	ASSERT_PT(0, pt_nl_unregister(xfd));
	ASSERT_EQ(before, executors_now());
	ASSERT_PT(-EPERM, pt_exec_take(xfd, PTASK_NONBLOCK, 0, &inv, 1, ports,
				       2, NULL, NULL));
	/* And it may register again. */
	ASSERT_PT(0, pt_nl_register(xfd));
}

TEST_HARNESS_MAIN
