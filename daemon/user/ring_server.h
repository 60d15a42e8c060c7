/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ring_server.h - ptaskd's side of a client's ring (PTASKD_OP_RING_SETUP,
 * uapi/ptaskd.h; the layout is uapi/ptask.h's "Submission and completion
 * rings").
 *
 * A connection that asks for a ring becomes its lifeline, and the
 * connection's thread becomes the ring's: it takes entries in order,
 * checks each as the socket's ioctl ops are checked (ring_entry.h), runs
 * it through pd_ns_call() (a blocking call blocks this ring only), posts
 * its completion, then helps the engine as the socket path does.  With
 * nothing queued it spins for spin_ns (with the socket path's bound on
 * how many threads spin), then sleeps on the SQ's tail in slices of
 * PD_CANCEL_POLL_MS, looking at the lifeline between slices.  The ring
 * ends when the lifeline hangs up (or carries anything), when ptaskd
 * stops, or when the client breaks the ring (an SQ tail more than the
 * ring's size ahead, a CQ head that claims completions never posted):
 * the region is unmapped, the connection closes, and the client's
 * objects go with its last connection as ever.
 *
 * Malformed entries complete with their errno; the first one of a ring
 * is logged (once per ring, so a scribbling client cannot flood the
 * log).
 *
 * Locking: a ring belongs to its thread; the namespace's lock is taken
 * by pd_ns_call() and pd_ns_map() only.
 */
#ifndef PTASKD_RING_SERVER_H
#define PTASKD_RING_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "daemon/user/ns_user.h"
#include "uapi/ptaskd.h"

/**
 * struct pd_ring_host - what the connection lends its ring
 * @fd: the connection's socket: the lifeline
 * @who: its caller identity (SO_PEERCRED at connect)
 * @client: its namespace client
 * @defer: its held-back executor wake-ups
 * @help: help the engine after an answer (server.c's help_engine)
 * @help_arg: @help's argument
 * @stopping: ptaskd stops
 * @spin_ns: how long to poll the SQ after the last entry
 * @spinners: threads polling now (shared with the socket's threads)
 * @max_spinners: most threads polling at once
 * @exec: an executor connection's ring: the places it is told hold the
 *	memory (pd_ns_exec_place)
 */
struct pd_ring_host {
	int fd;
	const struct ptask_caller *who;
	struct pd_client *client;
	struct pd_wake_defer *defer;
	void (*help)(void *arg);
	void *help_arg;
	const volatile bool *stopping;
	uint64_t spin_ns;
	uint32_t *spinners;
	uint32_t max_spinners;
	bool exec;
};

struct pd_ring;

/*
 * Make a ring for PTASKD_OP_RING_SETUP's request @payload (@len bytes):
 * *@reply is the answer and *@fd the region's memfd to pass with it
 * (the caller closes it once sent).  -EINVAL for a bad request, else
 * -errno of memfd/mmap.
 */
int pd_ring_create(const struct pd_ring_host *host, const void *payload,
		   size_t len, struct ptaskd_ring_setup *reply, int *fd,
		   struct pd_ring **out);
/* Serve the ring until it ends (see above). */
void pd_ring_serve(struct pd_ring *r);
/* Unmap and free it. */
void pd_ring_destroy(struct pd_ring *r);
/*
 * Fire-and-forget releases every ring held back so far, how many of
 * them ran while their thread waited for a fence (ring_server.c,
 * "releases held back"), the pulls run ahead of their fence
 * (ring_server.c, "pulls answered at the fence") and of those, the ones
 * run again because that fence failed, and the pulls answered before
 * the releases held in front of them (pull_past_held); any thread.
 */
void pd_ring_stats(uint64_t *held, uint64_t *beside, uint64_t *ahead,
		   uint64_t *redone, uint64_t *past);

#endif /* PTASKD_RING_SERVER_H */
