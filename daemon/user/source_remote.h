/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * source_remote.h - the engine's source in an executor process of
 * ptaskd --mode user --executors uid (uapi/ptaskd.h, "Executors per
 * uid"): invocations of one uid's ptasks come from the ptaskd that
 * started this process, over executor connections of its socket
 * protocol.
 *
 * Connections: the one inherited (the lifeline: HELLO, EXEC_REGISTER,
 * and EXEC_CONNECT for more), one for the taker, and a pool for the
 * other threads' calls (complete, ptask info, create, release, map),
 * grown with EXEC_CONNECT as threads call at once: one call at a time
 * per connection, as the protocol says.
 *
 * take        EXEC_TAKE on the taker's connection, in slices of at most
 *             RSRC_TAKE_SLICE_MS so interrupt (sticky, as the kernel
 *             source's) is seen within a slice.  Its reply says where
 *             each datablock is (struct ptaskd_exec_place): kept in a
 *             table by handle, so mapping an input costs no message.
 * db_map      the datablock's arena mapped here once (its fd comes with
 *             the first PTASKD_OP_MAP of one of its datablocks), and
 *             registered with the backend for DMA as ptaskd registers
 *             its own arenas; an own arena (PTASKD_MAP_OWN: one
 *             datablock another uid may be handed) is mapped for that
 *             use alone and unmapped when its last user lets go.  An
 *             arena nobody here maps any more is unmapped after
 *             RSRC_ARENA_IDLE_MS: ptaskd may have dropped it.
 * db_create   DATABLOCK_CREATE with the output flag; the reply's place
 *             maps it.
 * forgotten   when a take says death notices wait, EXEC_FORGOTTEN: the
 *             places of dead datablocks go, and the engine drops its
 *             device copies (the forget callback).
 *
 * ptaskd going away (a connection reset) stops this process: the
 * source raises SIGTERM, the engine drains, and every later call fails
 * with -ENOTCONN.
 *
 * Threads: every op from any thread; one mutex guards the pool, the
 * place table and the arenas.
 */
#ifndef PTASKD_SOURCE_REMOTE_H
#define PTASKD_SOURCE_REMOTE_H

#include <stdint.h>
#include "daemon/backend/backend.h"
#include "daemon/engine/engine.h"

/* The fd the supervisor hands an executor its lifeline on. */
#define PD_EXEC_FD		3

/*
 * HELLO and EXEC_REGISTER on lifeline @fd (taken: closed on failure)
 * with @be's devices.  *@uid gets the uid it executes for.  0 or -errno:
 * -EPERM (@fd is no executor connection), -ENOTCONN, those of the ops.
 */
int pd_remote_source_open(int fd, struct pd_backend *be, uint32_t *uid,
			  struct pd_source **out);
/* Close every connection (ptaskd fails what was taken), unmap all. */
void pd_remote_source_close(struct pd_source *src);
/* Who hears of each dead datablock (pd_engine_forget); NULL: nobody. */
void pd_remote_source_set_forget(struct pd_source *src,
				 void (*forget)(void *arg, uint32_t handle),
				 void *arg);

#endif /* PTASKD_SOURCE_REMOTE_H */
