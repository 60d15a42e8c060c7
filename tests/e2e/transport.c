// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * transport.c - what an end-to-end test reads of the namespace, from
 * wherever the daemon's mode keeps it: /sys/kernel/ptask in kernel mode
 * (the kselftest library's readers), ptaskd's socket in user mode (one
 * fresh connection per read, framed by common/msg.c as libptask's are).
 * See daemon.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "common/msg.h"
#include "tests/kselftest/lib.h"
#include "uapi/ptaskd.h"
#include "daemon.h"

/* One request on a fresh connection past HELLO: the reply's length. */
int e2e_user_call(const struct e2e_daemon *d, uint32_t op, const void *req,
		     size_t req_len, void *rep, size_t rep_len)
{
	struct ptaskd_hello hello = { .version = PTASKD_PROTO_VERSION };
	struct iovec out = { .iov_base = &hello, .iov_len = sizeof(hello) };
	struct iovec in = { .iov_base = &hello, .iov_len = sizeof(hello) };
	int fd, err;

	fd = pc_msg_connect(d->socket, 5000);
	if (fd < 0)
		return fd;
	err = pc_msg_call(fd, PTASKD_OP_HELLO, &out, &in);
	if (!err && in.iov_len != sizeof(hello))
		err = -EPROTO;
	if (!err) {
		out = (struct iovec){ .iov_base = (void *)req, .iov_len = req_len };
		in = (struct iovec){ .iov_base = rep, .iov_len = rep_len };
		err = pc_msg_call(fd, op, &out, &in);
	}
	close(fd);
	return err ?: (int)in.iov_len;
}

int e2e_counts_read(const struct e2e_daemon *d, __u64 c[__PTASK_COUNT_MAX])
{
	struct ptaskd_info info;
	int n, i;

	if (d->mode == PTASK_MODE_KERNEL)
		return pt_counts_read(c);
	n = e2e_user_call(d, PTASKD_OP_INFO, NULL, 0, &info, sizeof(info));
	if (n < 0)
		return n;
	if (n != (int)sizeof(info))
		return -EPROTO;
	for (i = 0; i < __PTASK_COUNT_MAX; i++)
		c[i] = info.counts[i];
	return 0;
}

/* Is count @i compared?  User mode: not clients (the reader is one). */
static bool compared(const struct e2e_daemon *d, int i)
{
	return d->mode == PTASK_MODE_KERNEL || i != PTASK_COUNT_CLIENTS;
}

/* How many compared counts differ; -1 unread. */
static int counts_differ(const struct e2e_daemon *d,
			 const __u64 want[__PTASK_COUNT_MAX],
			 __u64 c[__PTASK_COUNT_MAX])
{
	int i, bad = 0;

	if (e2e_counts_read(d, c))
		return -1;
	for (i = 0; i < __PTASK_COUNT_MAX; i++)
		bad += compared(d, i) && c[i] != want[i];
	return bad;
}

int e2e_counts_wait(const struct e2e_daemon *d,
		    const __u64 want[__PTASK_COUNT_MAX], unsigned int ms,
		    const char *who)
{
	__u64 deadline = pt_deadline_ms(ms), c[__PTASK_COUNT_MAX] = { 0 };
	int bad, i;

	while ((bad = counts_differ(d, want, c)) && pt_now_ns() < deadline)
		pt_sleep_ms(10);
	if (bad < 0) {
		printf("# %s: the counts cannot be read\n", who);
		return __PTASK_COUNT_MAX;
	}
	for (i = 0; i < __PTASK_COUNT_MAX; i++)
		if (compared(d, i) && c[i] != want[i])
			printf("# %s: %s is %llu, expected %llu\n", who,
			       pt_count_names[i], (unsigned long long)c[i],
			       (unsigned long long)want[i]);
	return bad;
}

int e2e_count_wait(const struct e2e_daemon *d, enum ptask_count which,
		   __u64 want, unsigned int ms)
{
	__u64 deadline = pt_deadline_ms(ms), c[__PTASK_COUNT_MAX];

	for (;;) {
		if (!e2e_counts_read(d, c) && c[which] == want)
			return 0;
		if (pt_now_ns() > deadline)
			return -ETIMEDOUT;
		pt_sleep_ms(5);
	}
}

int e2e_sched_read(const struct e2e_daemon *d, __u32 *budgets,
		   __u32 *window_ms)
{
	struct ptask_sched_params p;
	__u64 b, w;
	int n;

	if (d->mode == PTASK_MODE_KERNEL) {
		n = pt_sysfs_u64("sched/budgets", &b) ?:
		    pt_sysfs_u64("sched/window_ms", &w);
		if (!n) {
			*budgets = (__u32)b;
			*window_ms = (__u32)w;
		}
		return n;
	}
	n = e2e_user_call(d, PTASKD_OP_SCHED_GET, NULL, 0, &p, sizeof(p));
	if (n < 0)
		return n;
	if (n != (int)sizeof(p))
		return -EPROTO;
	*budgets = p.budgets;
	*window_ms = p.window_ms;
	return 0;
}

/* Writes @val to /sys/kernel/ptask/@rel. */
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

int e2e_sched_accels(const struct e2e_daemon *d, __u32 *n_accels)
{
	struct ptask_sched_params p;
	__u64 n64;
	int n;

	if (d->mode == PTASK_MODE_KERNEL) {
		n = pt_sysfs_u64("sched/n_accels", &n64);
		if (!n)
			*n_accels = (__u32)n64;
		return n;
	}
	n = e2e_user_call(d, PTASKD_OP_SCHED_GET, NULL, 0, &p, sizeof(p));
	if (n < 0)
		return n;
	if (n != (int)sizeof(p))
		return -EPROTO;
	*n_accels = p.n_accels;
	return 0;
}

int e2e_sched_set_window(const struct e2e_daemon *d, __u32 window_ms)
{
	struct ptaskd_sched_set req = {
		.mask = PTASK_SCHED_SET_WINDOW,
		.params.window_ms = window_ms,
	};
	struct ptask_sched_params after;
	int n;

	if (d->mode == PTASK_MODE_KERNEL)
		return sysfs_put("sched/window_ms", window_ms);
	n = e2e_user_call(d, PTASKD_OP_SCHED_SET, &req, sizeof(req), &after,
		      sizeof(after));
	if (n < 0)
		return n;
	return n == (int)sizeof(after) && after.window_ms == window_ms ?
	       0 : -EPROTO;
}

int e2e_proc_read(const struct e2e_daemon *d, pid_t pid, struct e2e_proc *p)
{
	struct ptaskd_list req = { .cursor = (__u64)pid - 1 };
	struct ptask_proc_info rec;
	char rel[64];
	__u64 held, weight;
	int n;

	if (d->mode == PTASK_MODE_KERNEL) {
		snprintf(rel, sizeof(rel), "procs/%d/invocations", pid);
		n = pt_sysfs_u64(rel, &p->invocations);
		snprintf(rel, sizeof(rel), "procs/%d/held", pid);
		n = n ?: pt_sysfs_u64(rel, &held);
		snprintf(rel, sizeof(rel), "procs/%d/avg_ns", pid);
		n = n ?: pt_sysfs_u64(rel, &p->avg_ns);
		snprintf(rel, sizeof(rel), "procs/%d/weight", pid);
		n = n ?: pt_sysfs_u64(rel, &weight);
		if (!n) {
			p->held = (__u32)held;
			p->weight = (__u32)weight;
		}
		return n == -ENOENT ? -ESRCH : n;
	}
	/* The first record past pid - 1 is @pid's, if it has one. */
	n = e2e_user_call(d, PTASKD_OP_PROCS, &req, sizeof(req), &rec, sizeof(rec));
	if (n < 0)
		return n;
	if (n < (int)sizeof(rec) || rec.pid != pid)
		return -ESRCH;
	p->invocations = rec.invocations;
	p->avg_ns = rec.avg_ns;
	p->held = rec.held;
	p->weight = rec.weight;
	return 0;
}
