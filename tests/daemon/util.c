// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * util.c - see util.h.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "common/msg.h"
#include "uapi/ptaskd.h"
#include "util.h"

static int n_pass, n_fail, n_skip;

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int td_start(struct td_daemon *d, const char *const *args)
{
	const char *argv[32];
	int n = 0, i;

	memset(d, 0, sizeof(*d));
	strcpy(d->dir, "/tmp/ptaskd-test.XXXXXX");
	if (!mkdtemp(d->dir))
		return -errno;
	snprintf(d->socket, sizeof(d->socket), "%s/sock", d->dir);
	snprintf(d->log, sizeof(d->log), "%s/ptaskd.log", d->dir);
	argv[n++] = getenv("PTASKD") ?: "build/bin/ptaskd";
	argv[n++] = "--mode";
	argv[n++] = "user";
	argv[n++] = "--socket";
	argv[n++] = d->socket;
	for (i = 0; args && args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	d->pid = fork();
	if (d->pid < 0)
		return -errno;
	if (!d->pid) {
		if (!freopen(d->log, "w", stderr))
			_exit(127);
		execv(argv[0], (char *const *)argv);
		perror(argv[0]);
		_exit(127);
	}
	setenv("PTASK_SOCKET", d->socket, 1);
	setenv("PTASK_MODE", "user", 1);
	for (i = 0; i < 500; i++) {	/* up to 5 s */
		uint64_t counts[__PTASK_COUNT_MAX];

		if (!td_counts(d, counts))
			return 0;
		if (waitpid(d->pid, NULL, WNOHANG) == d->pid) {
			d->pid = 0;
			return -ECHILD;
		}
		sleep_ms(10);
	}
	return -ETIMEDOUT;
}

int td_stop(struct td_daemon *d)
{
	int status;

	if (d->pid <= 0)
		return -1;
	kill(d->pid, SIGTERM);
	if (waitpid(d->pid, &status, 0) != d->pid)
		return -1;
	d->pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void td_kill(struct td_daemon *d)
{
	if (d->pid <= 0)
		return;
	kill(d->pid, SIGKILL);
	waitpid(d->pid, NULL, 0);
	d->pid = 0;
}

int td_counts(const struct td_daemon *d, uint64_t counts[__PTASK_COUNT_MAX])
{
	struct ptaskd_hello hello = { .version = PTASKD_PROTO_VERSION };
	struct ptaskd_info info;
	struct iovec req = { .iov_base = &hello, .iov_len = sizeof(hello) };
	struct iovec rep = { .iov_base = &hello, .iov_len = sizeof(hello) };
	int fd, err, i;

	fd = pc_msg_connect(d->socket, 5000);
	if (fd < 0)
		return fd;
	err = pc_msg_call(fd, PTASKD_OP_HELLO, &req, &rep);
	if (!err && rep.iov_len != sizeof(hello))
		err = -EPROTO;
	if (err)
		goto out;
	rep = (struct iovec){ .iov_base = &info, .iov_len = sizeof(info) };
	err = pc_msg_call(fd, PTASKD_OP_INFO, NULL, &rep);
	if (!err && rep.iov_len != sizeof(info))
		err = -EPROTO;
	if (err)
		goto out;
	for (i = 0; i < __PTASK_COUNT_MAX; i++)
		counts[i] = info.counts[i];
out:
	close(fd);
	return err;
}

bool td_counts_settle(const struct td_daemon *d, const uint64_t *base, int ms)
{
	uint64_t now[__PTASK_COUNT_MAX];
	int i, t;

	for (t = 0; t <= ms; t += 20) {
		bool same = !td_counts(d, now);

		for (i = PTASK_COUNT_GRAPHS; same && i < __PTASK_COUNT_MAX; i++)
			same = now[i] == base[i];
		if (same)
			return true;
		sleep_ms(20);
	}
	for (i = 0; i < __PTASK_COUNT_MAX; i++)
		fprintf(stderr, "  count %d: %llu, expected %llu\n", i,
			(unsigned long long)now[i], (unsigned long long)base[i]);
	return false;
}

void td_result(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", n_pass + n_fail + n_skip + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		n_pass++;
	else
		n_fail++;
}

void td_skip(const char *fmt, ...)
{
	va_list ap;

	printf("ok %d - # SKIP ", n_pass + n_fail + n_skip + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	n_skip++;
}

int td_summary(void)
{
	printf("1..%d\n", n_pass + n_fail + n_skip);
	printf("%d passed, %d failed, %d skipped\n", n_pass, n_fail, n_skip);
	return n_fail ? 1 : 0;
}
