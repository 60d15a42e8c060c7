// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fastpath_proc.c - the fast-path benchmark's processes (fastpath.h):
 *
 *   fp_child_run()   run one baseline in a forked child and take back its
 *                    named results through shared memory.  The parent
 *                    never initialises CUDA (a process that has cannot
 *                    use it in a forked child), so every raw measurement
 *                    is a child's, and the ptask side runs in a process
 *                    with no CUDA context of its own, as a real client.
 *   fp_gang_run()    N processes set up, start together on one release,
 *                    work until a common deadline, report their counts
 *                    and CPU time, then tear down after the parent read
 *                    ptaskd's CPU time (so set-up and tear-down never
 *                    count).  The release is a pipe whose write end the
 *                    parent closes: every reader wakes at once.
 *   CPU time         getrusage() of the calling process (all its threads);
 *                    of another process and its descendants, from /proc
 *                    (stat: clock ticks, exited threads included; or
 *                    the threads' schedstat: ns, live threads only).
 *   socket owner     the pid of the process listening on a UNIX socket
 *                    path (/proc/net/unix, then /proc/<pid>/fd), to find
 *                    ptaskd when its pid was not given.
 *
 * Locking: the gang's counters are only ever touched with __atomic
 * builtins (ready, done) or written by one child each (count, cpu_us,
 * err; read by the parent after done says so, acquire/release).
 */
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/fastpath.h"

#define GANG_SETUP_S	120	/* the slowest member's set-up (16 CUDA contexts) */

static void *shared_alloc(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* waitpid() for @pid: 0 when it exited 0, else -ECHILD (said why). */
static int reap(pid_t pid, const char *what)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		fprintf(stderr, "fastpath: %s exited with status %d\n", what,
			WEXITSTATUS(status));
	else
		fprintf(stderr, "fastpath: %s killed by signal %d\n", what,
			WTERMSIG(status));
	return -ECHILD;
}

/**
 * fp_child_run() - @fn(@o, results) in a forked child
 * @fn: the measurement
 * @o: the options
 * @out: the child's named results are appended here
 *
 * Return: 0, or -errno (the child failed: it said why on stderr).
 */
int fp_child_run(fp_child_fn fn, const struct fp_opts *o,
		 struct fp_results *out)
{
	struct fp_results *r = shared_alloc(sizeof(*r));
	pid_t pid;
	int err, i;

	if (!r)
		return -ENOMEM;
	fflush(NULL);	/* nothing buffered is printed twice */
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto out_unmap;
	}
	if (pid == 0) {
		err = fn(o, r);
		fflush(NULL);
		_exit(err ? 1 : 0);
	}
	err = reap(pid, "baseline child");
	for (i = 0; !err && i < r->n; i++) {
		struct fp_series *s = fp_results_add(out, "%s", r->s[i].key);

		if (!s)
			err = -ENOSPC;
		else
			*s = r->s[i];
	}
out_unmap:
	munmap(r, sizeof(*r));
	return err;
}

/* The calling process's CPU time (user + system, all threads), in us. */
double fp_self_cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

/*
 * /proc/@pid/stat: the parent, the process's own CPU time (utime + stime,
 * every thread's, exited ones too) and its waited-for children's (cutime
 * + cstime), in ns; the resolution is a clock tick (10 ms at 100 Hz).
 * Return 0, -errno of the open, or -EPROTO for a line not understood.
 */
static int read_stat(pid_t pid, pid_t *ppid, uint64_t *self_ns,
		     uint64_t *children_ns)
{
	unsigned long long utime, stime, cutime, cstime;
	char path[64], line[1024], *p;
	uint64_t tick;
	FILE *f;
	int n, pp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	/* comm may hold spaces and parentheses: the fields follow the last ')' */
	p = p ? strrchr(line, ')') : NULL;
	if (!p)
		return -EPROTO;
	/* state ppid pgrp session tty tpgid flags minflt cminflt majflt
	 * cmajflt utime stime cutime cstime */
	n = sscanf(p + 1, " %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
		   &pp, &utime, &stime, &cutime, &cstime);
	if (n != 5)
		return -EPROTO;
	tick = 1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK);
	*ppid = (pid_t)pp;
	*self_ns = (utime + stime) * tick;
	*children_ns = (cutime + cstime) * tick;
	return 0;
}

/* The sum of /proc/@pid/task/<tid>/schedstat's first fields (ns on a CPU). */
static int sched_ns(pid_t pid, uint64_t *ns)
{
	char path[300];
	struct dirent *de;
	uint64_t sum = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		unsigned long long run;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat",
			 (int)pid, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;	/* the thread exited meanwhile */
		if (fscanf(f, "%llu", &run) == 1)
			sum += run;
		fclose(f);
	}
	closedir(d);
	*ns = sum;
	return 0;
}

/* Whether @pid descends from @root (its parent chain reaches it). */
static int descends(pid_t pid, pid_t root)
{
	uint64_t a, b;
	pid_t pp;
	int depth;

	for (depth = 0; depth < 64 && pid > 1; depth++) {
		if (read_stat(pid, &pp, &a, &b))
			return 0;
		if (pp == root)
			return 1;
		pid = pp;
	}
	return 0;
}

/* One process's share: its threads' time (precise or in ticks) + reaped children's. */
static int one_cpu_ns(pid_t pid, int precise, uint64_t *ns)
{
	uint64_t self, children, fine;
	pid_t pp;
	int err = read_stat(pid, &pp, &self, &children);

	if (!err && precise && !sched_ns(pid, &fine))
		self = fine;
	*ns = err ? 0 : self + children;
	return err;
}

/**
 * fp_proc_cpu_ns() - CPU time of @pid and every process descending from it
 * @pid: a process (ptaskd, which may run executors as child processes)
 * @precise: take each process's own time from its live threads'
 *	schedstat (ns, but blind to threads that exited: for windows in
 *	which none do, the idle check); else from /proc stat (clock ticks,
 *	exited threads included: P1c)
 * @ns: out: the sum, each process's waited-for children's time included
 *	(so one reaped inside the window still counts)
 *
 * Return: 0, or -errno for @pid itself (descendants that vanish are
 * skipped).
 */
int fp_proc_cpu_ns(pid_t pid, int precise, uint64_t *ns)
{
	struct dirent *de;
	uint64_t one;
	pid_t other;
	DIR *d;
	int err;

	err = one_cpu_ns(pid, precise, ns);
	if (err || !(d = opendir("/proc")))
		return err;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		other = (pid_t)atoi(de->d_name);
		if (other != pid && descends(other, pid) &&
		    !one_cpu_ns(other, precise, &one))
			*ns += one;
	}
	closedir(d);
	return 0;
}

/* The inode of the listening UNIX socket bound to @path, or 0. */
static unsigned long listening_inode(const char *path)
{
	unsigned long inode = 0, flags, ino;
	char line[4096], name[4096];
	FILE *f = fopen("/proc/net/unix", "r");

	if (!f)
		return 0;
	while (!inode && fgets(line, sizeof(line), f)) {
		/* Num RefCount Protocol Flags Type St Inode Path */
		if (sscanf(line, "%*s %*s %*s %lx %*s %*s %lu %4095s", &flags,
			   &ino, name) == 3 &&
		    (flags & 0x10000) /* __SO_ACCEPTCON: listening */ &&
		    !strcmp(name, path))
			inode = ino;
	}
	fclose(f);
	return inode;
}

/* Whether process @pid holds an fd on socket @inode. */
static int holds_socket(const char *pid, unsigned long inode)
{
	char path[300], link[64], want[64];
	struct dirent *de;
	int found = 0;
	ssize_t n;
	DIR *d;

	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%s/fd/%s", pid, de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = 0;
			found = !strcmp(link, want);
		}
	}
	closedir(d);
	return found;
}

/**
 * fp_find_socket_owner() - the process listening on UNIX socket @path
 * @path: the socket's path as bound (absolute, as ptaskd binds it)
 *
 * Return: its pid, or 0 when none is found (or its fds are not ours to
 * read).
 */
pid_t fp_find_socket_owner(const char *path)
{
	unsigned long inode = listening_inode(path);
	struct dirent *de;
	pid_t pid = 0;
	DIR *d;

	if (!inode || !(d = opendir("/proc")))
		return 0;
	while (!pid && (de = readdir(d)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9' &&
		    holds_socket(de->d_name, inode))
			pid = (pid_t)atoi(de->d_name);
	closedir(d);
	return pid;
}

/* --- gangs ------------------------------------------------------------------ */

static int start_pipe[2] = { -1, -1 }, exit_pipe[2] = { -1, -1 };

/* Block until the parent closes the write end of @fds (read returns 0). */
static void wait_release(int fds[2])
{
	char c;

	while (read(fds[0], &c, 1) < 0 && errno == EINTR)
		;
}

/**
 * fp_gang_wait_start() - a member is set up: wait for the common start
 * @g: the gang
 * @idx: the member
 * @cpu_us0: out: the member's CPU time at the start
 *
 * Return: 0.
 */
int fp_gang_wait_start(struct fp_gang *g, int idx, double *cpu_us0)
{
	(void)idx;
	__atomic_add_fetch(&g->ready, 1, __ATOMIC_RELEASE);
	wait_release(start_pipe);
	*cpu_us0 = fp_self_cpu_us();
	return 0;
}

/**
 * fp_gang_finish() - a member's window ended: report, wait for the parent
 * @g: the gang
 * @idx: the member
 * @count: its operations in the window
 * @cpu_us0: its CPU time at the start (fp_gang_wait_start())
 * @peer_cpu_us: CPU time of a helper process of its own in the window
 *	(the socket baseline's echo process), counted as the member's
 *
 * Returns once the parent has read ptaskd's CPU time: tear-down after it
 * is not counted.
 */
void fp_gang_finish(struct fp_gang *g, int idx, long long count,
		    double cpu_us0, double peer_cpu_us)
{
	g->count[idx] = count;
	g->cpu_us[idx] = fp_self_cpu_us() - cpu_us0 + peer_cpu_us;
	__atomic_add_fetch(&g->done, 1, __ATOMIC_RELEASE);
	wait_release(exit_pipe);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Wait until *@counter reaches @n, giving up when any child died (its
 * pid zeroed in @pids) or @limit_s passed.  Return 0 or -ETIMEDOUT /
 * -ECHILD.
 */
static int wait_count(int *counter, int n, pid_t *pids, int limit_s)
{
	uint64_t end = fp_now_ns() + (uint64_t)limit_s * 1000000000ull;
	int i, status;

	while (__atomic_load_n(counter, __ATOMIC_ACQUIRE) < n) {
		if (fp_now_ns() > end)
			return -ETIMEDOUT;
		for (i = 0; i < n; i++)
			if (pids[i] > 0 && waitpid(pids[i], &status, WNOHANG) == pids[i]) {
				fprintf(stderr, "fastpath: gang member %d ended early (status %d)\n",
					i, status);
				pids[i] = 0;
				return -ECHILD;
			}
		sleep_ms(1);
	}
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * Member @idx's uid under --uids: the caller's for idx % uids == 0,
 * else 65535 - idx % uids.  -errno when it cannot change.
 */
static int member_uid(const struct fp_opts *o, int idx)
{
	uid_t uid;

	if (o->uids <= 1 || !(idx % o->uids))
		return 0;
	uid = (uid_t)(65535 - idx % o->uids);
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid)) {
		fprintf(stderr, "fastpath: gang member %d: uid %u: %s\n", idx,
			(unsigned int)uid, strerror(errno));
		return -errno;
	}
	return 0;
}

/* Fork @n members running @fn; their pids in @pids (0 where fork failed). */
static int spawn(int n, fp_gang_fn fn, const struct fp_opts *o,
		 struct fp_gang *g, pid_t *pids)
{
	int i, err;

	fflush(NULL);
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			pids[i] = 0;
			return -errno;
		}
		if (pids[i] == 0) {
			close_fd(&start_pipe[1]);
			close_fd(&exit_pipe[1]);
			err = member_uid(o, i) ?: fn(g, i, o);
			if (err) {
				/* unblock the parent: it sees err[] */
				g->err[i] = err;
				__atomic_add_fetch(&g->ready, 1, __ATOMIC_RELEASE);
				__atomic_add_fetch(&g->done, 1, __ATOMIC_RELEASE);
			}
			fflush(NULL);
			_exit(err ? 1 : 0);
		}
	}
	return 0;
}

/* ptaskd's CPU time in us, or -1 when its pid is unknown or unreadable. */
static double daemon_cpu_us(pid_t pid)
{
	uint64_t ns;

	return pid > 0 && !fp_proc_cpu_ns(pid, 0, &ns) ? (double)ns / 1e3 : -1;
}

/**
 * fp_gang_run() - @n processes running @fn over one window
 * @n: members (1..FP_MAX_PROCS)
 * @fn: each member's body
 * @o: the options (@o->seconds: the window; @o->ptaskd_pid: whose CPU
 *	time to add)
 * @res: out: what the window measured
 *
 * Return: 0, or -errno (a member failed: it said why).
 */
int fp_gang_run(int n, fp_gang_fn fn, const struct fp_opts *o,
		struct fp_gang_result *res)
{
	pid_t pids[FP_MAX_PROCS] = { 0 };
	struct fp_gang *g;
	double d0, d1;
	int i, err, rerr;

	if (n < 1 || n > FP_MAX_PROCS)
		return -EINVAL;
	g = shared_alloc(sizeof(*g));
	if (!g)
		return -ENOMEM;
	if (pipe(start_pipe) || pipe(exit_pipe)) {
		err = -errno;
		goto out;
	}
	err = spawn(n, fn, o, g, pids);
	close_fd(&start_pipe[0]);
	close_fd(&exit_pipe[0]);
	err = err ?: wait_count(&g->ready, n, pids, GANG_SETUP_S);
	d0 = daemon_cpu_us(o->ptaskd_pid);
	g->deadline_ns = (int64_t)(fp_now_ns() + (uint64_t)(o->seconds * 1e9));
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	close_fd(&start_pipe[1]);	/* go */
	err = err ?: wait_count(&g->done, n, pids, (int)o->seconds + GANG_SETUP_S);
	d1 = daemon_cpu_us(o->ptaskd_pid);
	close_fd(&exit_pipe[1]);
	memset(res, 0, sizeof(*res));
	for (i = 0; i < n; i++) {
		if (pids[i] > 0) {
			if (err)
				kill(pids[i], SIGTERM);
			rerr = reap(pids[i], "gang member");
			err = err ?: rerr;
		}
		err = err ?: g->err[i];
		res->count += g->count[i];
		res->client_cpu_us += g->cpu_us[i];
	}
	res->per_s = (double)res->count / o->seconds;
	res->daemon_cpu_us = d0 >= 0 && d1 >= 0 ? d1 - d0 : -1;
out:
	close_fd(&start_pipe[0]);
	close_fd(&start_pipe[1]);
	close_fd(&exit_pipe[0]);
	close_fd(&exit_pipe[1]);
	munmap(g, sizeof(*g));
	return err;
}
