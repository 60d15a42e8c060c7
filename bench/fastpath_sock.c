// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fastpath_sock.c - the fast-path benchmark's baseline without a GPU
 * (fastpath.h): a UNIX-socket ping-pong between two processes, the floor
 * of any IPC round trip, measured in the same run as ptaskd's cpu
 * backend.  An echo process reads 4-byte words from its end of a
 * socketpair and answers each with word + 1 (the ptask_empty kernel's
 * arithmetic); both sides block in read(), so each round pays two
 * wake-ups, as a round trip through a daemon that sleeps does.
 *
 *   raw.p1.pingpong    write one word, read the answer, check
 *   raw.p1b.pingpong   @inflight words written, then @inflight answers
 *                      read, per batch
 *   P1c member         ping-pong with an echo of its own until the
 *                      gang's deadline; the echo's CPU counts as the
 *                      member's
 *
 * Locking: none; each process has one thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/fastpath.h"

#define P1C_WARMUP	200

/**
 * struct echo - the other end of the ping-pong
 * @fd: our end of the socketpair
 * @pid: the echo process
 */
struct echo {
	int fd;
	pid_t pid;
};

/* All of @len bytes through @fd (read when @rd): 0, or -errno / -EPIPE. */
static int full_io(int fd, void *buf, size_t len, int rd)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = rd ? read(fd, (char *)buf + done, len - done) :
			 write(fd, (const char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		done += (size_t)n;
	}
	return 0;
}

/* The echo's loop: each word read is answered with word + 1. */
static void echo_serve(int fd)
{
	uint32_t w;

	while (!full_io(fd, &w, sizeof(w), 1)) {
		w += 1;
		if (full_io(fd, &w, sizeof(w), 0))
			break;
	}
	_exit(0);
}

static int echo_start(struct echo *e)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	fflush(NULL);
	e->pid = fork();
	if (e->pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -errno;
	}
	if (e->pid == 0) {
		close(sv[0]);
		echo_serve(sv[1]);
	}
	close(sv[1]);
	e->fd = sv[0];
	return 0;
}

/* Close our end (the echo sees EOF and exits) and reap it. */
static int echo_stop(struct echo *e)
{
	int status;

	close(e->fd);
	while (waitpid(e->pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -ECHILD;
}

/* One round: @v out, @v + 1 back. */
static int ping(struct echo *e, uint32_t v)
{
	uint32_t w = v;
	int err;

	err = full_io(e->fd, &w, sizeof(w), 0) ?: full_io(e->fd, &w, sizeof(w), 1);
	if (!err && w != v + 1) {
		fprintf(stderr, "fastpath: socket: got %u, want %u\n", w, v + 1);
		err = -EBADMSG;
	}
	return err;
}

static int put(struct fp_results *r, const char *key, double *us, int n,
	       double per_s)
{
	struct fp_series *s = fp_results_add(r, "%s", key);

	if (!s)
		return -ENOSPC;
	s->count = n;
	s->per_s = per_s;
	return fp_stats_of(us, n, &s->st);
}

/**
 * fp_sock_p1() - P1's baseline without a GPU: "raw.p1.pingpong"
 * @o: the options
 * @r: the results
 *
 * Return: 0 or -errno.
 */
int fp_sock_p1(const struct fp_opts *o, struct fp_results *r)
{
	double *us = calloc((size_t)o->rounds, sizeof(*us));
	uint32_t seed = o->seed;
	struct echo e;
	uint64_t t0;
	int i, err;

	if (!us)
		return -ENOMEM;
	err = echo_start(&e);
	if (err)
		goto out_free;
	for (i = -o->warmup; !err && i < o->rounds; i++) {
		uint32_t v = fp_next_value(&seed);

		t0 = fp_now_ns();
		err = ping(&e, v);
		if (i >= 0)
			us[i] = (double)(fp_now_ns() - t0) / 1e3;
	}
	err = echo_stop(&e) ?: err;
	err = err ?: put(r, "raw.p1.pingpong", us, o->rounds, 0);
out_free:
	free(us);
	return err;
}

/* One batch: @n words written, then @n answers read and checked. */
static int ping_batch(struct echo *e, uint32_t *want, uint32_t *got, int n,
		      uint32_t *seed)
{
	int j, err = 0;

	for (j = 0; !err && j < n; j++) {
		uint32_t w = fp_next_value(seed);

		want[j] = w + 1;
		err = full_io(e->fd, &w, sizeof(w), 0);
	}
	err = err ?: full_io(e->fd, got, sizeof(*got) * (size_t)n, 1);
	for (j = 0; !err && j < n; j++)
		if (got[j] != want[j]) {
			fprintf(stderr, "fastpath: socket: word %d: got %u, want %u\n",
				j, got[j], want[j]);
			err = -EBADMSG;
		}
	return err;
}

/**
 * fp_sock_p1b() - P1b's baseline without a GPU: "raw.p1b.pingpong"
 * @o: the options
 * @r: the results
 *
 * Return: 0 or -errno.
 */
int fp_sock_p1b(const struct fp_opts *o, struct fp_results *r)
{
	int n = o->inflight, warm = o->warmup / n + 2, i, err;
	double *us = calloc((size_t)o->batches, sizeof(*us));
	uint32_t *want = calloc((size_t)n, sizeof(*want));
	uint32_t *got = calloc((size_t)n, sizeof(*got));
	uint32_t seed = o->seed;
	uint64_t t0, total = 0;
	struct echo e;

	err = us && want && got ? echo_start(&e) : -ENOMEM;
	if (err)
		goto out_free;
	for (i = -warm; !err && i < o->batches; i++) {
		t0 = fp_now_ns();
		err = ping_batch(&e, want, got, n, &seed);
		if (i >= 0) {
			us[i] = (double)(fp_now_ns() - t0) / 1e3;
			total += fp_now_ns() - t0;
		}
	}
	err = echo_stop(&e) ?: err;
	err = err ?: put(r, "raw.p1b.pingpong", us, o->batches,
			 (double)o->batches * n * 1e9 / (double)total);
out_free:
	free(us);
	free(want);
	free(got);
	return err;
}

/* The echo's CPU time in us (0 when unreadable: said so). */
static double echo_cpu_us(const struct echo *e)
{
	uint64_t ns;

	if (fp_proc_cpu_ns(e->pid, 1, &ns)) {
		fprintf(stderr, "fastpath: socket: cannot read the echo's CPU time\n");
		return 0;
	}
	return (double)ns / 1e3;
}

/**
 * fp_sock_p1c_member() - one P1c process without a GPU: ping-pong with
 * its own echo until the gang's deadline
 * @g: the gang
 * @idx: this member
 * @o: the options
 *
 * Return: 0 or -errno.
 */
int fp_sock_p1c_member(struct fp_gang *g, int idx, const struct fp_opts *o)
{
	uint32_t seed = o->seed + (uint32_t)idx;
	long long count = 0;
	double cpu0, e0;
	struct echo e;
	int i, err;

	err = echo_start(&e);
	if (err)
		return err;
	for (i = 0; !err && i < P1C_WARMUP; i++)
		err = ping(&e, fp_next_value(&seed));
	if (!err) {
		fp_gang_wait_start(g, idx, &cpu0);
		e0 = echo_cpu_us(&e);
		while (!err && (int64_t)fp_now_ns() < g->deadline_ns) {
			err = ping(&e, fp_next_value(&seed));
			count++;
		}
		if (!err)
			fp_gang_finish(g, idx, count, cpu0, echo_cpu_us(&e) - e0);
	}
	return echo_stop(&e) ?: err;
}
