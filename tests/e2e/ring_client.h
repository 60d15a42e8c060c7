/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ring_client.h - a ring driven by hand (no libptask), for the tests of
 * what ptaskd does with a client that dies with entries queued or
 * scribbles on its ring: PTASKD_OP_RING_SETUP on a connection of its own
 * (uapi/ptaskd.h), then common/ring.c as libptask uses it.  Also one
 * ioctl op on the socket, to compare a ring's errors with the socket's.
 * Every int function returns 0 (or what it says) or -errno.
 */
#ifndef PTASK_TESTS_E2E_RING_CLIENT_H
#define PTASK_TESTS_E2E_RING_CLIENT_H

#include <stdbool.h>
#include <stdint.h>
#include "common/ring.h"

/**
 * struct e2e_ring - a hand-driven ring
 * @fd: its lifeline connection
 * @map: the region
 * @bytes: its size
 * @r: attached as the client
 * @flags: what RING_SETUP granted (PTASKD_RING_DATA)
 * @data: the data area past the ring (PTASKD_RING_DATA), or NULL
 * @data_bytes: its size
 */
struct e2e_ring {
	int fd;
	void *map;
	size_t bytes;
	struct pc_ring r;
	uint32_t flags;
	uint8_t *data;
	size_t data_bytes;
};

/* HELLO as a new client on @socket, then RING_SETUP (@sq_entries). */
int e2e_ring_open(const char *socket, uint32_t sq_entries,
		  struct e2e_ring *er);
/* The same, asking for @flags (PTASKD_RING_DATA: a data area). */
int e2e_ring_open_flags(const char *socket, uint32_t sq_entries,
			uint32_t flags, struct e2e_ring *er);
void e2e_ring_close(struct e2e_ring *er);
/* Queue @sqe (-ENOSPC: the SQ is full); rings the doorbell. */
int e2e_ring_submit(struct e2e_ring *er, const struct ptask_sqe *sqe);
/* The next completion within @ms: 0, -ETIMEDOUT, -EPROTO. */
int e2e_ring_reap(struct e2e_ring *er, struct ptask_cqe *cqe,
		  unsigned int ms);
/* Has ptaskd closed the lifeline within @ms? */
bool e2e_ring_hung_up(struct e2e_ring *er, unsigned int ms);
/*
 * The same call on a fresh socket connection (a new client): the reply's
 * err.  @arg is @len bytes of the call's struct.
 */
int e2e_socket_ioctl(const char *socket, uint32_t cmd, const void *arg,
		     size_t len);

#endif /* PTASK_TESTS_E2E_RING_CLIENT_H */
