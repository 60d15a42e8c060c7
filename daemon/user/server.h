/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * server.h - ptaskd's UNIX socket in user mode (uapi/ptaskd.h).
 *
 * One thread accepts; one thread per connection reads a request, runs it
 * (sleeping in the namespace when the call blocks) and answers.  A
 * connection whose peer hangs up while its call sleeps gives up within
 * PD_CANCEL_POLL_MS; its client dies with its last connection, which frees
 * everything the client held, as closing /dev/ptask does.
 *
 * Spinning: a connection thread that has answered polls its socket for
 * up to spin_us before it sleeps in recv, and a client's libptask does
 * the same for the answer (PTASK_SPIN_US), because a sleeping thread's
 * wake-up costs several microseconds each way, which is most of a small
 * invocation's round trip.  Bounded, and adaptive: a connection whose
 * client took longer than spin_us for its last call sleeps at once next
 * time, and at most half the CPUs spin at a time.
 */
#ifndef PTASKD_SERVER_H
#define PTASKD_SERVER_H

#include <sys/types.h>
#include "uapi/ptaskd.h"
#include "daemon/user/ns_user.h"

struct pd_engine;

struct pd_server;

/**
 * pd_server_start() - listen on @path and serve @ns
 * @engine: the engine running @ns's invocations (its executor source):
 *	connection threads help it (pd_engine_help) and INFO reports its
 *	counters; it must outlive the server.  NULL: the executors are
 *	other processes (pd_server_adopt), and INFO reports no engine
 *	counters
 * @mode: the socket file's permission bits
 * @spin_us: how long a connection polls for the next call (0: never)
 * @info: what PTASKD_OP_INFO answers (backend, devices, policy)
 *
 * A stale socket file (nobody listening) is replaced; a live one is
 * -EADDRINUSE.
 */
#define PD_SERVER_SPIN_US	50	/* ptaskd's default --spin-us */

int pd_server_start(struct pd_ns *ns, struct pd_engine *engine,
		    const char *path, mode_t mode, uint32_t spin_us,
		    const struct ptaskd_info *info, struct pd_server **out);
/**
 * pd_server_adopt() - serve an executor process's connection
 * @s: the server
 * @fd: ptaskd's end of a socketpair whose other end the executor has
 *	(taken: closed on failure)
 * @who: the identity its calls have: the uid it executes for, the
 *	executor's pid (attaching its other connections checks it)
 * @served: the process it executes for alone (--executors process), or
 *	-1: the whole uid
 *
 * The connection may PTASKD_OP_EXEC_REGISTER and PTASKD_OP_EXEC_CONNECT
 * (uapi/ptaskd.h, "Executors per uid"), after its HELLO.  It has root's
 * rights when @who's uid is 0 only.  0, -ENOMEM, -EAGAIN (no thread),
 * -ESHUTDOWN (the server stops).
 */
int pd_server_adopt(struct pd_server *s, int fd,
		    const struct ptask_caller *who, int32_t served);
/* Update what INFO says (the policy changed). */
void pd_server_set_info(struct pd_server *s, const struct ptaskd_info *info);
/* Stop accepting, hang up every connection, join the threads, unlink. */
void pd_server_stop(struct pd_server *s);

#endif /* PTASKD_SERVER_H */
