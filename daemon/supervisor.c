// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * supervisor.c - ptaskd --executors uid: an executor process per uid,
 * started on demand, restarted when it dies, stopped when idle (issue
 * 13, item 1; DESIGN.md "Tenants and isolation").  Both modes.
 *
 * The supervisor runs no ptask itself.  Every PD_SUP_POLL_MS, and at
 * once when the mode's kick fd is readable (user mode: a ptask was
 * opened), it asks who owns ptasks (struct pd_sup_ops.owners: kernel
 * mode lists the module's ptasks with PTASK_CMD_GET_OBJECT, user mode
 * walks its own namespace) and keeps, for every uid that owns one, a
 * child running this same program with the same options plus --exec-uid
 * UID (and in user mode --exec-fd, with one end of a socketpair whose
 * other end ptaskd serves as an executor connection: @spawned), which
 * becomes that uid's executor (core/invocation.c, "Executors per uid"):
 * that uid's kernels, CUDA contexts and datablock mappings live in that
 * process alone.  A uid's first invocation waits for its executor to
 * start (a poll and a start: under a second on a GPU machine, tens of
 * seconds in the test guest's emulation).
 *
 * A child that exits while its uid still owns ptasks is started again,
 * after 1 s, doubling to PD_SUP_BACKOFF_MAX_MS while it keeps dying
 * within PD_SUP_HEALTHY_MS of its start (a uid whose kernels keep
 * faulting costs a start every 30 s, not a loop).  PTASKD_SUP_BACKOFF_MS
 * sets the first wait (the cap stays 30 times it): the chaos test kills
 * executors in a row.  A uid that has owned
 * no ptask for --executor-idle-s seconds has its child stopped
 * (SIGTERM: it drains).  SIGTERM or SIGINT to the supervisor stops every
 * child and waits for it.  The children die with the supervisor
 * (PR_SET_PDEATHSIG).
 *
 * Single-threaded; nothing here is shared (the ops' own state is
 * theirs to guard).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "daemon/fatal.h"
#include "daemon/supervisor.h"
#include "daemon/log.h"

#define PD_SUP_POLL_MS		250
#define PD_SUP_BACKOFF_MS	1000
#define PD_SUP_BACKOFF_MAX_MS	30000
#define PD_SUP_HEALTHY_MS	60000
#define PD_SUP_MAX_UIDS		1024
#define PD_SUP_STOP_MS		35000	/* a child's drain: ptaskd.service's 30 s */

/**
 * struct sup_uid - one uid's executor
 * @uid: the uid
 * @served: with --executors process, the process it executes for
 * @name: how the log names it
 * @pid: its running child, or 0
 * @started_ms: when it was started
 * @seen_ms: when the uid last owned a ptask
 * @backoff_ms: the wait before the next start after a death
 * @next_start_ms: no start before then
 * @starts: children started for it
 * @stopping: asked to stop (idle): its exit is no death
 */
struct sup_uid {
	uint32_t uid;
	int32_t served;		/* --executors process: that pid; else -1 */
	char name[40];		/* "uid U" or "uid U process P", for the log */
	pid_t pid;
	uint64_t started_ms;
	uint64_t seen_ms;
	uint64_t backoff_ms;
	uint64_t next_start_ms;
	unsigned int starts;
	bool stopping;
};

struct sup {
	struct sup_uid uids[PD_SUP_MAX_UIDS];
	uint64_t backoff_ms, backoff_max_ms;
	unsigned int n;
	char **argv;		/* the children's: ours, --exec-uid N added */
	int argc;
	char uid_arg[16];
	uint64_t idle_ms;
	const struct pd_sup_ops *ops;
	void *arg;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct sup_uid *find(struct sup *s, uint32_t uid, int32_t served,
			    bool add)
{
	struct sup_uid *u;
	unsigned int i;

	if (!s->ops->by_process)
		served = -1;
	for (i = 0; i < s->n; i++)
		if (s->uids[i].uid == uid && s->uids[i].served == served)
			return &s->uids[i];
	if (!add || s->n == PD_SUP_MAX_UIDS)
		return NULL;
	u = &s->uids[s->n++];
	memset(u, 0, sizeof(*u));
	u->uid = uid;
	u->served = served;
	u->backoff_ms = s->backoff_ms;
	if (served < 0)
		snprintf(u->name, sizeof(u->name), "uid %u", uid);
	else
		snprintf(u->name, sizeof(u->name), "uid %u process %d", uid,
			 (int)served);
	return u;
}

/* The mode's owners(): a ptask of @uid's (process @pid's) is alive now. */
static void seen(void *arg, uint32_t uid, int32_t pid)
{
	struct sup *s = arg;
	struct sup_uid *u = find(s, uid, pid, true);

	if (u)
		u->seen_ms = now_ms();
	else
		pd_log_warn("supervisor: more than %u executors: uid %u (process %d) has none",
			    PD_SUP_MAX_UIDS, uid, (int)pid);
}

/*
 * --executors process: forget the processes that are gone (no child, no
 * ptask for --executor-idle-s), or the table fills with dead pids.
 */
static void forget_gone(struct sup *s, uint64_t now)
{
	unsigned int i = 0;

	while (s->ops->by_process && i < s->n) {
		struct sup_uid *u = &s->uids[i];

		if (u->pid || now - u->seen_ms < s->idle_ms) {
			i++;
			continue;
		}
		*u = s->uids[--s->n];
	}
}

static void start(struct sup *s, struct sup_uid *u)
{
	int child_fd = -1, keep_fd = -1;
	pid_t pid;

	snprintf(s->uid_arg, sizeof(s->uid_arg), "%u", u->uid);
	if (s->ops->prepare &&
	    s->ops->prepare(s->arg, u->uid, &keep_fd, &child_fd)) {
		u->next_start_ms = now_ms() + u->backoff_ms;
		return;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		pd_log_err("supervisor: fork for %s: %s", u->name,
			   strerror(errno));
		if (child_fd >= 0) {
			close(child_fd);
			close(keep_fd);
		}
		u->next_start_ms = now_ms() + u->backoff_ms;
		return;
	}
	if (!pid) {
		sigset_t none;

		/* async-signal-safe calls only: ptaskd has threads */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (child_fd == PD_SUP_CHILD_FD)
			fcntl(child_fd, F_SETFD, 0);	/* keep it past exec */
		else if (child_fd >= 0 && dup2(child_fd, PD_SUP_CHILD_FD) < 0)
			_exit(127);
		/* nothing of ptaskd's but the lifeline reaches the child */
		syscall(SYS_close_range, child_fd >= 0 ? PD_SUP_CHILD_FD + 1 :
			3, ~0U, 0);
		execv("/proc/self/exe", s->argv);
		_exit(127);
	}
	if (child_fd >= 0) {
		close(child_fd);
		s->ops->spawned(s->arg, u->uid, u->served, pid, keep_fd);
	}
	u->pid = pid;
	u->started_ms = now_ms();
	u->starts++;
	pd_log_info("supervisor: executor for %s started (pid %d)%s",
		    u->name, (int)pid, u->starts > 1 ? ", again" : "");
}

/* Reap children; plan the restart of those whose uid still has ptasks. */
static void reap(struct sup *s)
{
	unsigned int i;
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (i = 0; i < s->n; i++) {
			struct sup_uid *u = &s->uids[i];
			uint64_t ran;

			if (u->pid != pid)
				continue;
			u->pid = 0;
			ran = now_ms() - u->started_ms;
			if (u->stopping) {
				u->stopping = false;
				pd_log_info("supervisor: executor for %s (pid %d) stopped",
					    u->name, (int)pid);
				continue;
			}
			/* reset under it by another's fault: no fault of its own */
			if (WIFEXITED(status) &&
			    WEXITSTATUS(status) == PD_EXIT_COLLATERAL) {
				pd_log_warn("supervisor: executor for %s (pid %d) was reset under it (status %d): started again at once",
					    u->name, (int)pid, PD_EXIT_COLLATERAL);
				u->next_start_ms = now_ms();
				continue;
			}
			if (ran >= PD_SUP_HEALTHY_MS)
				u->backoff_ms = s->backoff_ms;
			if (WIFEXITED(status))
				pd_log_warn("supervisor: executor for %s (pid %d) exited with status %d after %llu ms; again in %llu ms if it has work",
					    u->name, (int)pid,
					    WEXITSTATUS(status),
					    (unsigned long long)ran,
					    (unsigned long long)u->backoff_ms);
			else
				pd_log_warn("supervisor: executor for %s (pid %d) killed by signal %d after %llu ms; again in %llu ms if it has work",
					    u->name, (int)pid, WTERMSIG(status),
					    (unsigned long long)ran,
					    (unsigned long long)u->backoff_ms);
			u->next_start_ms = now_ms() + u->backoff_ms;
			u->backoff_ms *= 2;
			if (u->backoff_ms > s->backoff_max_ms)
				u->backoff_ms = s->backoff_max_ms;
		}
	}
}

static void tick(struct sup *s)
{
	uint64_t now;
	unsigned int i;
	int err;

	reap(s);
	err = s->ops->owners(s->arg, seen, s);
	if (err) {
		pd_log_warn("supervisor: listing the owners of ptasks: %s",
			    strerror(-err));
		return;
	}
	now = now_ms();
	for (i = 0; i < s->n; i++) {
		struct sup_uid *u = &s->uids[i];
		bool busy = now - u->seen_ms < PD_SUP_POLL_MS * 4;

		if (!u->pid && busy && now >= u->next_start_ms)
			start(s, u);
		else if (u->pid && !u->stopping &&
			 now - u->seen_ms >= s->idle_ms) {
			pd_log_info("supervisor: %s owns no ptask for %llu s: its executor (pid %d) stops",
				    u->name,
				    (unsigned long long)s->idle_ms / 1000,
				    (int)u->pid);
			kill(u->pid, SIGTERM);
			u->stopping = true;
			u->backoff_ms = s->backoff_ms;
			u->seen_ms = 0;
		}
	}
	forget_gone(s, now);
}

static void stop_all(struct sup *s)
{
	uint64_t deadline = now_ms() + PD_SUP_STOP_MS;
	unsigned int i, left;

	for (i = 0; i < s->n; i++)
		if (s->uids[i].pid)
			kill(s->uids[i].pid, SIGTERM);
	do {
		reap(s);
		for (i = 0, left = 0; i < s->n; i++)
			left += s->uids[i].pid != 0;
		if (left)
			usleep(20000);
	} while (left && now_ms() < deadline);
	for (i = 0; i < s->n; i++)
		if (s->uids[i].pid) {
			pd_log_warn("supervisor: executor for %s (pid %d) did not stop: killed",
				    s->uids[i].name, (int)s->uids[i].pid);
			kill(s->uids[i].pid, SIGKILL);
			waitpid(s->uids[i].pid, NULL, 0);
		}
}

/* SIGTERM or SIGINT came (the others of @sigfd's set are dropped). */
static bool stop_asked(int sigfd)
{
	struct signalfd_siginfo si;

	while (read(sigfd, &si, sizeof(si)) == sizeof(si))
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
			pd_log_info("supervisor: %s: stopping the executors",
				    strsignal((int)si.ssi_signo));
			return true;
		}
	return false;
}

int pd_supervise(int argc, char **argv, unsigned int idle_s,
		 const sigset_t *set, const struct pd_sup_ops *ops, void *arg)
{
	struct pollfd pfd[2];
	struct sup *s;
	int i, n = 0, sigfd;
	uint64_t kicks;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ops = ops;
	s->arg = arg;
	/* ours minus --executors X, plus --exec-uid N [--exec-fd M] */
	s->argv = calloc((size_t)argc + 5, sizeof(*s->argv));
	sigfd = signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (!s->argv || sigfd < 0) {
		if (sigfd >= 0)
			close(sigfd);
		free(s->argv);
		free(s);
		return -ENOMEM;
	}
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--executors") && i + 1 < argc) {
			i++;
			continue;
		}
		if (!strncmp(argv[i], "--executors=", 12))
			continue;
		s->argv[n++] = argv[i];
	}
	s->argv[n++] = "--exec-uid";
	s->argv[n++] = s->uid_arg;
	if (ops->prepare) {
		s->argv[n++] = "--exec-fd";
		s->argv[n++] = PD_SUP_CHILD_FD_STR;
	}
	s->argv[n] = NULL;
	s->argc = n;
	s->idle_ms = (uint64_t)idle_s * 1000;
	s->backoff_ms = PD_SUP_BACKOFF_MS;
	s->backoff_max_ms = PD_SUP_BACKOFF_MAX_MS;
	if (getenv("PTASKD_SUP_BACKOFF_MS")) {
		unsigned long ms = strtoul(getenv("PTASKD_SUP_BACKOFF_MS"),
					   NULL, 10);

		if (ms >= 1 && ms <= PD_SUP_BACKOFF_MS) {
			s->backoff_ms = ms;
			s->backoff_max_ms = 30 * ms;
		}
	}
	pd_log_info("supervisor: watching %s: an executor per %s, stopped after %u s idle",
		    ops->what, ops->by_process ? "process" : "uid", idle_s);
	pfd[0].fd = sigfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = ops->kick_fd;	/* -1: poll() skips it */
	pfd[1].events = POLLIN;
	for (;;) {
		tick(s);
		if (poll(pfd, 2, PD_SUP_POLL_MS) < 0 && errno != EINTR)
			break;
		if ((pfd[0].revents & POLLIN) && stop_asked(sigfd))
			break;
		if ((pfd[1].revents & POLLIN) &&
		    read(ops->kick_fd, &kicks, sizeof(kicks)) < 0) {
			/* an eventfd: read only to empty it */
		}
	}
	stop_all(s);
	close(sigfd);
	free(s->argv);
	free(s);
	return 0;
}
