// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * daemon.c - start, stop and read the log of the end-to-end tests'
 * ptaskd; see daemon.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tests/kselftest/lib.h"
#include "daemon.h"

#ifndef E2E_PTASKD
#define E2E_PTASKD	"build/bin/ptaskd"
#endif

const char *e2e_ptaskd_path(void)
{
	const char *p = getenv("PTASK_PTASKD");

	return p && *p ? p : E2E_PTASKD;
}

int e2e_daemon_init(struct e2e_daemon *d, enum ptask_mode mode,
		    const char *backend, unsigned int wait_ms)
{
	memset(d, 0, sizeof(*d));
	d->mode = mode;
	d->backend = backend;
	d->wait_ms = wait_ms;
	snprintf(d->dir, sizeof(d->dir), "/tmp/ptaskd-e2e.XXXXXX");
	if (!mkdtemp(d->dir))
		return -errno;
	snprintf(d->socket, sizeof(d->socket), "%s/sock", d->dir);
	snprintf(d->log, sizeof(d->log), "%s/ptaskd.log", d->dir);
	return 0;
}

void e2e_daemon_fini(struct e2e_daemon *d)
{
	if (!d->dir[0])
		return;
	if (d->pid > 0)
		e2e_daemon_stop(d, SIGKILL);
	unlink(d->socket);
	unlink(d->log);
	rmdir(d->dir);
	d->dir[0] = 0;
}

int e2e_wait_pid(pid_t pid, unsigned int ms)
{
	__u64 deadline = pt_deadline_ms(ms);
	int status;
	pid_t r;

	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0)
			return -errno;
		if (pt_now_ns() > deadline)
			return -ETIMEDOUT;
		pt_sleep_ms(5);
	}
}

/* The child: the log on stdout and stderr, then exec. */
static void __attribute__((noreturn)) exec_daemon(const struct e2e_daemon *d,
						  const char *sim)
{
	const char *argv[16];
	int n = 0, fd, i;

	argv[n++] = "ptaskd";
	argv[n++] = "--mode";
	argv[n++] = ptask_mode_name(d->mode);
	argv[n++] = "--backend";
	argv[n++] = d->backend;
	if (d->mode == PTASK_MODE_USER) {
		argv[n++] = "--socket";
		argv[n++] = d->socket;
	}
	if (sim) {
		argv[n++] = "--sim-config";
		argv[n++] = sim;
	}
	for (i = 0; i < 4 && d->extra[i]; i++)
		argv[n++] = d->extra[i];
	argv[n] = NULL;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	execv(e2e_ptaskd_path(), (char *const *)argv);
	_exit(127);
}

/* Kernel mode: one more executor registered; user mode: it answers. */
static bool daemon_ready(struct e2e_daemon *d, __u64 executors)
{
	__u64 now;

	if (d->supervisor)
		return e2e_log_has(d, "supervisor: watching");
	if (d->mode == PTASK_MODE_KERNEL)
		return !pt_executors_read(&now) && now > executors;
	return !e2e_counts_read(d, d->base);
}

int e2e_daemon_start(struct e2e_daemon *d, const char *sim)
{
	__u64 executors = 0, deadline;

	if (d->mode == PTASK_MODE_KERNEL && pt_executors_read(&executors))
		return -ENODEV;
	fflush(stdout);
	fflush(stderr);
	d->pid = fork();
	if (d->pid < 0)
		return d->pid = 0, -errno;
	if (!d->pid)
		exec_daemon(d, sim);
	deadline = pt_deadline_ms(d->wait_ms);
	while (!daemon_ready(d, executors)) {
		if (waitpid(d->pid, NULL, WNOHANG) == d->pid) {
			d->pid = 0;
			return -ECHILD;
		}
		if (pt_now_ns() > deadline) {
			e2e_daemon_stop(d, SIGKILL);
			return -ETIMEDOUT;
		}
		pt_sleep_ms(10);
	}
	return e2e_counts_read(d, d->base);
}

int e2e_daemon_stop(struct e2e_daemon *d, int sig)
{
	pid_t pid = d->pid;

	if (pid <= 0)
		return -ESRCH;
	d->pid = 0;
	if (kill(pid, sig))
		return -errno;
	return e2e_wait_pid(pid, d->wait_ms);
}

int e2e_ctx_open(const struct e2e_daemon *d, struct ptask_ctx **ctx)
{
	return ptask_ctx_open(d->mode,
			      d->mode == PTASK_MODE_USER ? d->socket : NULL, ctx);
}

bool e2e_log_has(const struct e2e_daemon *d, const char *text)
{
	char line[512];
	bool found = false;
	FILE *f = fopen(d->log, "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, text) != NULL;
	if (f)
		fclose(f);
	return found;
}

void e2e_log_dump(const struct e2e_daemon *d)
{
	char line[512];
	FILE *f = fopen(d->log, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("# ptaskd: %s%s", line, strchr(line, '\n') ? "" : "\n");
	fclose(f);
	fflush(stdout);
}
