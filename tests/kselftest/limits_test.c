// SPDX-License-Identifier: GPL-2.0
/*
 * limits_test - /sys/kernel/ptask/limits/: the per-uid datablock limit
 * (-EDQUOT past it, root never refused), who may set it, and what the
 * fdinfo of a uid's fd says it holds.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "pt_harness.h"

#define LIMITS_DIR	PTASK_SYSFS_DIR "/limits/"
#define PAGE_BYTES	4096ULL

FIXTURE(limits) {
	struct pt_env env;
	int fd;
	__u64 saved;
	bool restore;
};

static int limit_write(__u64 bytes)
{
	char buf[32];
	int fd = open(LIMITS_DIR "uid_bytes", O_WRONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)bytes);
	if (write(fd, buf, strlen(buf)) < 0)
		r = -errno;
	close(fd);
	return r;
}

FIXTURE_SETUP(limits)
{
	PT_ENV_SETUP(&self->env);
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, pt_sysfs_u64("limits/uid_bytes", &self->saved));
	self->restore = true;
}

FIXTURE_TEARDOWN(limits)
{
	if (self->restore && geteuid() == 0)
		EXPECT_EQ(0, limit_write(self->saved));
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

/* The value of fdinfo key @key of our fd @fd, or -1. */
static long long fdinfo_value(int fd, const char *key)
{
	char path[64], line[256];
	long long v = -1;
	size_t n = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = strtoll(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

/*
 * Child as uid nobody (no capabilities): 2 pages fit the limit of 2
 * pages, a third byte is -EDQUOT and changes nothing; fdinfo says what
 * the uid holds; released, the room is back.
 */
static int __attribute__((noreturn)) nobody_fills_its_share(void)
{
	__u32 h[3];
	__u64 off, bytes;
	int fd;

	if (setresgid(PT_NOBODY, PT_NOBODY, PT_NOBODY) ||
	    setresuid(PT_NOBODY, PT_NOBODY, PT_NOBODY) || pt_drop_all_caps())
		_exit(PT_CHILD_FAIL + 1);
	fd = pt_open();
	if (fd < 0)
		_exit(PT_CHILD_SKIP);
	if (pt_db_create(fd, PAGE_BYTES, 0, 0, &h[0], &off, &bytes) ||
	    pt_db_create(fd, 1, 0, 0, &h[1], &off, &bytes))
		_exit(PT_CHILD_FAIL + 2);
	if (pt_db_create(fd, 1, 0, 0, &h[2], &off, &bytes) != -EDQUOT)
		_exit(PT_CHILD_FAIL + 3);
	if (fdinfo_value(fd, "ptask-uid-bytes") != 2 * PAGE_BYTES ||
	    fdinfo_value(fd, "ptask-uid-limit-bytes") != 2 * PAGE_BYTES)
		_exit(PT_CHILD_FAIL + 4);
	/* Not root: the limit is not its to change. */
	if (limit_write(0) != -EACCES)
		_exit(PT_CHILD_FAIL + 5);
	if (pt_db_release(fd, h[0]) ||
	    pt_db_create(fd, PAGE_BYTES, 0, 0, &h[0], &off, &bytes))
		_exit(PT_CHILD_FAIL + 6);
	close(fd);
	_exit(PT_CHILD_OK);
}

TEST_F(limits, uid_past_its_limit_gets_edquot)
{
	__u64 refusals0, refusals, c0[__PTASK_COUNT_MAX];
	pid_t pid;

	PT_NEED_ROOT();
	ASSERT_EQ(0, pt_counts_read(c0));
	ASSERT_EQ(0, pt_sysfs_u64("limits/refusals", &refusals0));
	ASSERT_EQ(0, limit_write(2 * PAGE_BYTES));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		nobody_fills_its_share();
	pt_env_track_pid(&self->env, pid);
	PT_WAIT_CHILD(&self->env, pid, PT_WAIT_MS);
	ASSERT_EQ(0, pt_sysfs_u64("limits/refusals", &refusals));
	EXPECT_EQ(refusals0 + 1, refusals);
	/* The child's fd closed: its datablocks, and their charge, went. */
	EXPECT_EQ(0, pt_counts_wait_all(c0, PT_WAIT_MS, "limits"));
}

TEST_F(limits, root_is_charged_but_never_refused)
{
	__u32 h[4];
	__u64 off, bytes;
	int i;

	PT_NEED_ROOT();
	ASSERT_EQ(0, limit_write(PAGE_BYTES));
	for (i = 0; i < 4; i++)
		ASSERT_PT(0, pt_db_create(self->fd, PAGE_BYTES, 0, 0, &h[i],
					  &off, &bytes));
	EXPECT_EQ(4 * PAGE_BYTES,
		  (__u64)fdinfo_value(self->fd, "ptask-uid-bytes"));
	EXPECT_EQ(0, fdinfo_value(self->fd, "ptask-uid-limit-bytes"));
	for (i = 0; i < 4; i++)
		ASSERT_PT(0, pt_db_release(self->fd, h[i]));
	EXPECT_EQ(0, fdinfo_value(self->fd, "ptask-uid-bytes"));
}

TEST_F(limits, bad_writes_einval)
{
	__u64 now;
	int fd;

	PT_NEED_ROOT();
	fd = open(LIMITS_DIR "uid_bytes", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, write(fd, "lots", 4));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, write(fd, "-1", 2));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
	ASSERT_EQ(0, pt_sysfs_u64("limits/uid_bytes", &now));
	EXPECT_EQ(self->saved, now);
	ASSERT_EQ(0, limit_write(0x10000));
	ASSERT_EQ(0, pt_sysfs_u64("limits/uid_bytes", &now));
	EXPECT_EQ(0x10000ULL, now);
}

TEST_HARNESS_MAIN
