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
#include "libptask.h"

struct lp_conn;
struct lp_arena;
struct lp_cpu_body;

#define LP_SPIN_US_DEFAULT	50	/* PTASK_SPIN_US when unset */

/**
 * struct lp_spin - user mode: polling for an answer before sleeping
 * @ns: how long (0: never; PTASK_SPIN_US, or LP_SPIN_US_DEFAULT)
 * @slow: a bit per kind of call whose last answer took longer than @ns:
 *	the next such call sleeps at once (a pull that waits for a long
 *	kernel does not spin every time).  Updated without a lock: a lost
 *	update costs one spin more or less.
 */
struct lp_spin {
	uint64_t ns;
	uint64_t slow[2];
};

/**
 * struct lp_transport - one of the two ways to reach ptask
 * @call: an ioctl-shaped call (cmd, struct)
 * @map: map datablock @handle: *@addr and a @cookie for unmap
 * @unmap: undo map
 * @close: free the transport's state
 */
struct lp_transport {
	int (*call)(struct ptask_ctx *ctx, unsigned int cmd, void *arg);
	int (*map)(struct ptask_ctx *ctx, uint32_t handle,
		   uint64_t mmap_offset, uint64_t bytes, void **addr,
		   void **cookie);
	void (*unmap)(struct ptask_ctx *ctx, void *addr, uint64_t bytes,
		      void *cookie);
	void (*close)(struct ptask_ctx *ctx);
};

/**
 * struct ptask_ctx - a program's connection to ptask
 * @mode: PTASK_MODE_KERNEL or PTASK_MODE_USER
 * @t: its transport
 * @fd: kernel mode: the /dev/ptask fd
 * @socket_path: user mode: the daemon's socket
 * @token: user mode: the client token HELLO gave
 * @spin: user mode: polling for answers
 * @lock: protects @idle, @arenas and @bodies
 * @idle: user mode: connections not in a call
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
 */
struct ptask_db {
	uint32_t handle;
	uint64_t bytes;
	uint64_t records;
	uint64_t mmap_offset;
	void *data;
	void *cookie;
};

extern const struct lp_transport lp_kernel_transport;
extern const struct lp_transport lp_user_transport;

int lp_kernel_open(struct ptask_ctx *ctx);
/* Is ptask.ko loaded with an executor registered? */
bool lp_kernel_usable(void);
int lp_user_open(struct ptask_ctx *ctx, const char *socket_path);

/* The transport call, for the other files of the library. */
int lp_call(struct ptask_ctx *ctx, unsigned int cmd, void *arg);

/* Absolute CLOCK_MONOTONIC deadline for a relative timeout (0: none). */
uint64_t lp_deadline(int64_t timeout_ns);

/* CPU worker (cpu_worker.c). */
int lp_cpu_register(struct ptask_ctx *ctx, uint32_t ptask, ptask_cpu_fn fn,
		    void *arg);
void lp_cpu_stop(struct ptask_ctx *ctx);

#endif /* LIBPTASK_INTERNAL_H */
