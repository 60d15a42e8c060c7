// SPDX-License-Identifier: GPL-2.0
/*
 * race_test - GRAPH_TERMINATE under traffic, over and over: pushers, a
 * puller and the copy executor all busy on a graph that one thread
 * terminates at a random moment.  Every blocked call must come back (the
 * pushers and puller with -ESHUTDOWN or a result), within PT_WAIT_MS,
 * and every object must go.
 *
 * Issue 13 saw one run of such a race (2 vCPUs, a busy host) hang for
 * over 13 minutes with no output and no stacks.  So a round whose
 * threads do not come back is not just a failure: the kernel stacks of
 * every thread of this process (/proc/self/task/N/stack) and of the
 * system's blocked tasks (sysrq 'w', into the kernel log the VM harness
 * keeps) are printed first.  PT_RACE_ROUNDS (default 40) sets how many
 * rounds, for a longer hunt on two virtual CPUs (tests/vm/README.md):
 * PTASK_VM_SMP=2 PTASK_VM_ENV=PT_RACE_ROUNDS=5000 make check-vm-debug
 * T=race.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pt_harness.h"

#define RACE_PUSHERS	2

FIXTURE(race) {
	struct pt_env env;
	int fd;
};

FIXTURE_SETUP(race)
{
	PT_ENV_SETUP(&self->env);
	if (geteuid() != 0)
		SKIP(pt_skip_exit(), "needs root (CAP_SYS_ADMIN) to register an executor");
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(race)
{
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

struct traffic {
	int fd;
	__u32 chan;
	int result;		/* the call that ended the loop */
	unsigned long done;	/* calls that succeeded */
	int finished;		/* atomic */
};

static void *push_loop(void *arg)
{
	struct traffic *t = arg;
	__u32 seed = 1;

	do
		t->result = pt_push_seed(t->fd, t->chan, 256, seed++, 0, 0,
					 pt_wait_deadline());
	while (!t->result && ++t->done);
	__atomic_store_n(&t->finished, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void *pull_loop(void *arg)
{
	struct traffic *t = arg;

	do
		t->result = pt_pull_seed(t->fd, t->chan, 0, pt_wait_deadline(),
					 NULL, NULL, NULL);
	while (!t->result && ++t->done);
	__atomic_store_n(&t->finished, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Every thread's kernel stack, then sysrq 'w' (blocked tasks) to dmesg. */
static void dump_stacks(void)
{
	char path[300], line[256];
	struct dirent *de;
	DIR *d = opendir("/proc/self/task");
	int fd;

	while (d && (de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/wchan",
			 de->d_name);
		f = fopen(path, "re");
		if (f && fgets(line, sizeof(line), f))
			printf("# thread %s waits in %s\n", de->d_name, line);
		if (f)
			fclose(f);
		snprintf(path, sizeof(path), "/proc/self/task/%s/stack",
			 de->d_name);
		f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f))
			printf("#   %s", line);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	fd = open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "w", 1) != 1)
			printf("# sysrq w: %s\n", strerror(errno));
		close(fd);
	}
	fflush(stdout);
}

/* Waits for @t->finished up to @deadline (CLOCK_MONOTONIC ns). */
static bool finished_by(struct traffic *t, __u64 deadline)
{
	while (!__atomic_load_n(&t->finished, __ATOMIC_SEQ_CST)) {
		if (pt_now_ns() > deadline)
			return false;
		usleep(1000);
	}
	return true;
}

static unsigned int rounds(void)
{
	const char *s = getenv("PT_RACE_ROUNDS");
	unsigned long n = s ? strtoul(s, NULL, 10) : 0;

	return n ? (unsigned int)n : 40;
}

/*
 * The harness's own limit only backs up the per-round deadline (a long
 * hunt runs for many minutes); a hang fails within PT_WAIT_MS.
 */
TEST_F_TIMEOUT(race, terminate_under_traffic, 3000)
{
	struct pt_copy_spec s = {
		.kind = PTASK_KIND_GPU, .n = 1, .in_cap = 2, .out_cap = 2,
		.run = true,
	};
	struct traffic push[RACE_PUSHERS], pull;
	pthread_t tpush[RACE_PUSHERS], tpull;
	unsigned int r, n = rounds(), i;
	unsigned long moved = 0;
	__u64 seed = (__u64)pt_now_ns() | 1;
	struct pt_copy_graph g;
	bool all = true;

	TH_LOG("%u rounds, seed %llu", n, (unsigned long long)seed);
	ASSERT_NE(NULL, pt_env_executor(&self->env));
	for (r = 0; r < n && all; r++) {
		__u64 deadline;

		ASSERT_PT(0, pt_build_copy(self->fd, &s, &g));
		memset(push, 0, sizeof(push));
		memset(&pull, 0, sizeof(pull));
		for (i = 0; i < RACE_PUSHERS; i++) {
			push[i].fd = self->fd;
			push[i].chan = g.in_chan[0];
			ASSERT_EQ(0, pthread_create(&tpush[i], NULL, push_loop,
						    &push[i]));
		}
		pull.fd = self->fd;
		pull.chan = g.out_chan[0];
		ASSERT_EQ(0, pthread_create(&tpull, NULL, pull_loop, &pull));
		/* 0-4 ms of traffic (xorshift: the seed is logged). */
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		usleep((useconds_t)(seed % 4000));
		ASSERT_PT(0, pt_graph_terminate(self->fd, g.graph));
		deadline = pt_now_ns() + PT_WAIT_MS * 1000000ULL;
		for (i = 0; i < RACE_PUSHERS; i++)
			all &= finished_by(&push[i], deadline);
		all &= finished_by(&pull, deadline);
		if (!all) {
			printf("# round %u: a call did not come back within %d ms after GRAPH_TERMINATE\n",
			       r, PT_WAIT_MS);
			dump_stacks();
			break;
		}
		for (i = 0; i < RACE_PUSHERS; i++) {
			pthread_join(tpush[i], NULL);
			EXPECT_PT(-ESHUTDOWN, push[i].result);
			moved += push[i].done;
		}
		pthread_join(tpull, NULL);
		EXPECT_PT(-ESHUTDOWN, pull.result);
		ASSERT_PT(0, pt_graph_close(self->fd, g.graph));
		if (r && !(r % 250))
			TH_LOG("%u rounds, %lu datablocks pushed", r, moved);
	}
	ASSERT_TRUE(all);
	TH_LOG("%u rounds, %lu datablocks pushed", r, moved);
}

TEST_HARNESS_MAIN
