/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * server.h - ptaskd's UNIX socket in user mode (libptask/proto.h).
 *
 * One thread accepts; one thread per connection reads a request, runs it
 * (sleeping in the namespace when the call blocks) and answers.  A
 * connection whose peer hangs up while its call sleeps gives up within
 * PD_CANCEL_POLL_MS; its client dies with its last connection, which frees
 * everything the client held, as closing /dev/ptask does.
 */
#ifndef PTASKD_SERVER_H
#define PTASKD_SERVER_H

#include <sys/types.h>
#include "libptask/proto.h"
#include "ns_user.h"

struct pd_server;

/**
 * pd_server_start() - listen on @path and serve @ns
 * @mode: the socket file's permission bits
 * @info: what PTASKD_OP_INFO answers (backend, devices, policy)
 *
 * A stale socket file (nobody listening) is replaced; a live one is
 * -EADDRINUSE.
 */
int pd_server_start(struct pd_ns *ns, const char *path, mode_t mode,
		    const struct ptaskd_info *info, struct pd_server **out);
/* Update what INFO says (the policy changed). */
void pd_server_set_info(struct pd_server *s, const struct ptaskd_info *info);
/* Stop accepting, hang up every connection, join the threads, unlink. */
void pd_server_stop(struct pd_server *s);

#endif /* PTASKD_SERVER_H */
