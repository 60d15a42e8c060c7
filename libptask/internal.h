/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * internal.h - libptask's insides: the context, its two transports and
 * the CPU worker.
 *
 * Every public call builds the uapi struct of its ioctl, with real
 * pointers in it (code, outputs, invocations, ports), and hands it to
 * the transport: kernel mode passes it to ioctl() unchanged; user mode
 * sends the struct and the buffers those pointers name to ptaskd and
 * copies the answer back through the same pointers.  So both modes take
 * exactly the same structs, and a call behaves the same in both.
 */
#ifndef LIBPTASK_INTERNAL_H
#define LIBPTASK_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/spin.h"
#include "libptask.h"

struct lp_conn;
struct lp_arena;
struct lp_ring;
struct lp_cpu_body;

#define LP_SPIN_US_DEFAULT	50	/* PTASK_SPIN_US when unset */
/*
 * With rings, an arena of at most this size stays mapped once mapped,
 * for the context's life (ptaskd's ordinary arenas are 64 MiB; larger
 * ones hold one datablock each and are unmapped with its last mapping).
 */
#define LP_ARENA_KEEP_BYTES	(64ULL << 20)

/**
 * struct lp_spin - user mode: polling for an answer before sleeping
 * @ns: how long (0: never; PTASK_SPIN_US, or LP_SPIN_US_DEFAULT)
 * @hist: which kinds of call had their last answer later than @ns: the
 *	next such call sleeps at once (a pull that waits for a long kernel
 *	does not spin every time; common/spin.h)
 */
struct lp_spin {
	uint64_t ns;
	struct pc_spin_hist hist;
};

/**
 * struct lp_mem - user mode: where a datablock's bytes are, as a ring's
 *	completion said (PTASK_CQE_MEM)
 * @known: the fields below are valid
 * @arena: the arena's id
 * @arena_bytes: its size
 * @offset: the datablock's first byte in it
 */
struct lp_mem {
	bool known;
	uint64_t arena;
	uint64_t arena_bytes;
	uint64_t offset;
};

/**
 * struct lp_transport - one of the two ways to reach ptask
 * @call: an ioctl-shaped call (cmd, struct)
 * @map: map datablock @handle: *@addr and a @cookie for unmap
 * @map_at: map a datablock whose @mem is known without asking anyone:
 *	-ENOENT when its arena is not mapped here yet (then @map); may be
 *	NULL
 * @unmap: undo map and map_at
 * @close: free the transport's state
 * @push_async: queue a push without waiting for it (ptask_push_async): 0,
 *	-errno, or 1: not now (the push is made synchronously); may be NULL
 * @async_wait: wait for every push @push_async queued: 0 or -errno (their
 *	own failures are counted in the context, not returned); may be NULL
 */
struct lp_transport {
	int (*call)(struct ptask_ctx *ctx, unsigned int cmd, void *arg,
		    struct lp_mem *mem);
	int (*map)(struct ptask_ctx *ctx, uint32_t handle,
		   uint64_t mmap_offset, uint64_t bytes, void **addr,
		   void **cookie);
	int (*map_at)(struct ptask_ctx *ctx, const struct lp_mem *mem,
		      uint64_t bytes, void **addr, void **cookie);
	void (*unmap)(struct ptask_ctx *ctx, void *addr, uint64_t bytes,
		      void *cookie);
	void (*close)(struct ptask_ctx *ctx);
	int (*push_async)(struct ptask_ctx *ctx, struct ptask_push *a);
	int (*async_wait)(struct ptask_ctx *ctx);
};

/**
 * struct ptask_ctx - a program's connection to ptask
 * @mode: PTASK_MODE_KERNEL or PTASK_MODE_USER
 * @t: its transport
 * @fd: kernel mode: the /dev/ptask fd
 * @socket_path: user mode: the daemon's socket
 * @token: user mode: the client token HELLO gave
 * @spin: user mode: polling for answers
 * @lock: protects @idle, @rings, @arenas and @bodies
 * @idle: user mode: connections not in a call
 * @rings: rings not in a call (ring_client.c): ptaskd's in user mode
 *	(transport_ring.c), ptask.ko's in kernel mode (transport_kring.c)
 * @rings_off: calls go by the socket in user mode
 *	(PTASK_TRANSPORT=socket, or a ptaskd without rings), by their
 *	ioctls in kernel mode (PTASK_TRANSPORT=ioctl, or a module without
 *	rings)
 * @ring_no_data: user mode: ptaskd lays out no data area after a ring
 *	(older than PTASKD_RING_DATA): executor calls go by the socket
 * @ring_pending: kernel mode: releases queued in idle rings, not
 *	entered yet (atomic; a hint)
 * @release_failed: fire-and-forget releases that failed
 *	(atomic; reported on stderr by ptask_ctx_close)
 * @release_err: the first such failure's errno
 * @async_lock: serialises asynchronous pushes (ptask_push_async) and the
 *	waits for them; protects @async_ring, @async_sent and @async_reported
 * @async_ring: user mode with rings: the ring they go through (not in
 *	@rings; NULL until the first), in submission order
 * @async_sent: asynchronous pushes queued
 * @async_done: their completions seen (atomic)
 * @async_failed: how many of them failed (atomic)
 * @async_err: the first failure not yet returned by ptask_sync() or
 *	ptask_push_async() (atomic; 0: none)
 * @async_handles: the datablock of asynchronous push n at
 *	[n % LP_ASYNC_HANDLES] (atomics; written before @async_sent moves):
 *	which releases must go behind them
 * @arenas: user mode: arenas mapped here
 * @bodies: CPU ptask bodies by ptask handle
 * @worker: the CPU worker thread
 * @worker_running: it was started
 * @stopping: ptask_ctx_close() is under way
 */
struct ptask_ctx {
	enum ptask_mode mode;
	const struct lp_transport *t;
	int fd;
	char *socket_path;
	uint64_t token;
	struct lp_spin spin;
	pthread_mutex_t lock;
	struct lp_conn *idle;
	struct lp_ring *rings;
	bool rings_off;
	bool ring_no_data;
	uint32_t ring_pending;
	uint64_t release_failed;
	int release_err;
	pthread_mutex_t async_lock;
	struct lp_ring *async_ring;
	uint64_t async_sent;
	uint64_t async_done;
	uint64_t async_failed;
	int async_err;
	uint32_t *async_handles;
	struct lp_arena *arenas;
	struct lp_cpu_body *bodies;
	pthread_t worker;
	bool worker_running;
	volatile bool stopping;
};

/**
 * struct ptask_db - a datablock this program holds
 * @handle: its handle
 * @bytes: its size
 * @records: its record count
 * @mmap_offset: kernel mode's mmap offset
 * @data: mapped address, or NULL
 * @cookie: the transport's note for unmap
 * @mem: user mode: where its bytes are, if a ring said
 */
struct ptask_db {
	uint32_t handle;
	uint64_t bytes;
	uint64_t records;
	uint64_t mmap_offset;
	void *data;
	void *cookie;
	struct lp_mem mem;
};

extern const struct lp_transport lp_kernel_transport;
extern const struct lp_transport lp_user_transport;

int lp_kernel_open(struct ptask_ctx *ctx);
/* Is ptask.ko loaded with an executor registered? */
bool lp_kernel_usable(void);
int lp_user_open(struct ptask_ctx *ctx, const char *socket_path);

/* The transport call, for the other files of the library. */
int lp_call(struct ptask_ctx *ctx, unsigned int cmd, void *arg);
/* The same, and where a pulled or created datablock's bytes are. */
int lp_call_mem(struct ptask_ctx *ctx, unsigned int cmd, void *arg,
		struct lp_mem *mem);

/* User mode's socket (transport_user.c), for the rings. */
int lp_conn_open(const char *path, uint64_t *token, int *fd);
int lp_exchange(int fd, uint32_t op, const void *a, size_t alen,
		const void *b, size_t blen, void *out, size_t cap,
		size_t *got, int *passed, struct lp_spin *spin);

/* Is @cmd one a ring carries (ring_client.c)? */
bool lp_ring_cmd(unsigned int cmd);
/* Is it one a ring carries through its data area (user mode's rings)? */
bool lp_ring_data_cmd(unsigned int cmd);

/*
 * User mode's rings (transport_ring.c): push, pull, datablock create and
 * release through a ring of the context's pool: 0 or -errno as the
 * ioctl, or 1: no ring for this call (ptaskd offers none, or could not
 * make one now, or the struct does not fit an entry): use the socket.
 */
int lp_ring_call(struct ptask_ctx *ctx, unsigned int cmd, void *arg,
		 struct lp_mem *mem);
/* Close every ring of the pool (ptask_ctx_close). */
void lp_rings_close(struct ptask_ctx *ctx);
/*
 * User mode's asynchronous push (ptask_push_async): 0 once queued in the
 * context's asynchronous ring, -errno, or 1: no ring (push synchronously).
 */
int lp_ring_push_async(struct ptask_ctx *ctx, struct ptask_push *a);
/* Wait until every asynchronous push queued has completed: 0 or -errno. */
int lp_ring_async_wait(struct ptask_ctx *ctx);

/*
 * Kernel mode's rings (transport_kring.c): push, pull, datablock create
 * and release through a ring of the context's pool: 0 or -errno as the
 * ioctl (a release: 0, fire and forget), or 1: no ring for this call
 * (the module offers none or could not make one now, or the struct does
 * not fit an entry): use the ioctl.
 */
int lp_kring_call(struct ptask_ctx *ctx, unsigned int cmd, void *arg);
/* Enter the releases idle rings hold (before a call by ioctl). */
void lp_krings_flush(struct ptask_ctx *ctx);
/* Flush, then unmap every ring of the pool (ptask_ctx_close). */
void lp_krings_close(struct ptask_ctx *ctx);

/* Absolute CLOCK_MONOTONIC deadline for a relative timeout (0: none). */
uint64_t lp_deadline(int64_t timeout_ns);

/* CPU worker (cpu_worker.c). */
int lp_cpu_register(struct ptask_ctx *ctx, uint32_t ptask, ptask_cpu_fn fn,
		    void *arg);
void lp_cpu_stop(struct ptask_ctx *ctx);

#endif /* LIBPTASK_INTERNAL_H */
