/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libptask.h - the C API of ptask: one function per PTask system call.
 *
 * A program opens a context (struct ptask_ctx), builds a graph of ptasks
 * joined by channels, runs it, pushes datablocks into its input channels
 * and pulls results from its output channels.  Every function returns 0
 * (or a non-negative count) on success and a negative errno on failure;
 * the errors are those uapi/ptask.h documents for the matching ioctl,
 * plus -ENOTCONN (the user-mode daemon went away) and -EPROTO (it spoke
 * a protocol this library does not understand).
 *
 * Two transports sit behind the same calls:
 *   kernel: the ioctls of ptask.ko on /dev/ptask;
 *   user:   the UNIX socket of ptaskd --mode user (datablocks are memfd
 *           shared memory; the daemon knows the caller from SO_PEERCRED).
 * ptask_ctx_open() picks kernel mode when /dev/ptask exists and an executor
 * is registered with it, else user mode.  PTASK_MODE=kernel|user forces
 * one; PTASK_SOCKET names the daemon's socket (default PTASK_SOCKET_DEFAULT).
 *
 * Threads: a context may be used by any number of threads at once; a call
 * that blocks (push, pull) blocks only its own thread.  Datablock objects
 * (struct ptask_db) belong to one thread at a time.
 *
 * CPU ptasks: ptask_cpu_ptask_open() registers a C function as a ptask's
 * body; a worker thread of the library runs it for every invocation (the
 * daemon never runs a program's host code).  The worker starts with the
 * first CPU ptask and stops in ptask_ctx_close().
 */
#ifndef LIBPTASK_H
#define LIBPTASK_H

#include <stddef.h>
#include <stdint.h>
#include "ptask.h"	/* the uapi: object kinds, flags, limits */
#include "ptaskd.h"	/* the daemon's socket: PTASKD_SOCKET_DEFAULT */

#ifdef __cplusplus
extern "C" {
#endif

#define LIBPTASK_VERSION_MAJOR	1
#define LIBPTASK_VERSION_MINOR	0

/* Where ptaskd --mode user listens unless --socket or PTASK_SOCKET says. */
#define PTASK_SOCKET_DEFAULT	PTASKD_SOCKET_DEFAULT

/* Timeouts of push and pull, relative, in ns. */
#define PTASK_FOREVER		(-1LL)	/* block until done */
#define PTASK_NOWAIT		0LL	/* -EAGAIN instead of blocking */

enum ptask_mode {
	PTASK_MODE_AUTO = 0,	/* PTASK_MODE, else kernel if usable, else user */
	PTASK_MODE_KERNEL = 1,
	PTASK_MODE_USER = 2,
};

struct ptask_ctx;
struct ptask_db;

/* --- contexts ------------------------------------------------------------ */

/**
 * ptask_ctx_open() - connect to ptask
 * @mode: PTASK_MODE_AUTO, _KERNEL or _USER
 * @socket_path: user mode's socket; NULL: $PTASK_SOCKET, else the default
 * @out: the new context
 *
 * Return: 0, -ENOENT (no /dev/ptask in kernel mode, no socket in user
 * mode), -ENODEV (auto: neither a registered executor nor a daemon),
 * -ECONNREFUSED, -EPROTO, -EINVAL (bad PTASK_MODE), -ENOMEM.
 */
int ptask_ctx_open(enum ptask_mode mode, const char *socket_path,
		   struct ptask_ctx **out);
/* Stops the CPU worker, releases every datablock and closes every graph. */
void ptask_ctx_close(struct ptask_ctx *ctx);
/* PTASK_MODE_KERNEL or PTASK_MODE_USER. */
enum ptask_mode ptask_ctx_mode(const struct ptask_ctx *ctx);
/* "kernel" or "user". */
const char *ptask_mode_name(enum ptask_mode mode);

/* --- building graphs ------------------------------------------------------- */

/**
 * ptask_graph_open() - create or open a graph
 * @name: "" (with PTASK_GRAPH_CREATE: an anonymous graph) or a name
 * @flags: PTASK_GRAPH_CREATE, PTASK_GRAPH_EXCL
 * @mode: permission bits when created (0..0777)
 * @graph: out: its handle
 */
int ptask_graph_open(struct ptask_ctx *ctx, const char *name, uint32_t flags,
		     uint32_t mode, uint32_t *graph);
int ptask_graph_run(struct ptask_ctx *ctx, uint32_t graph);
int ptask_graph_terminate(struct ptask_ctx *ctx, uint32_t graph);
int ptask_graph_close(struct ptask_ctx *ctx, uint32_t graph);

/**
 * ptask_template_open() - describe a datablock geometry
 * @kind: enum ptask_template_kind
 * @binding: enum ptask_binding
 * @stride: bytes per element (or per record)
 * @dims: elements in x, y, z (each >= 1)
 * @name: NULL or "" for none
 */
int ptask_template_open(struct ptask_ctx *ctx, uint32_t graph,
			const char *name, uint32_t kind, uint32_t binding,
			uint32_t stride, const uint32_t dims[3],
			uint32_t *tmpl);

/**
 * ptask_gpu_ptask_open() - add a GPU ptask
 * @code: PTX (NUL-terminated text) or cubin bytes
 * @code_len: bytes at @code (for PTX, including the NUL)
 * @entry: the kernel's entry name
 * @nports: ports it will have
 */
int ptask_gpu_ptask_open(struct ptask_ctx *ctx, uint32_t graph,
			 const char *name, const void *code, size_t code_len,
			 const char *entry, uint32_t nports, uint32_t *ptask);

/**
 * struct ptask_cpu_port - one port of a CPU invocation
 * @index: the port's number in its ptask
 * @kind: enum ptask_port_kind
 * @flags: PTASK_PORT_* of the port
 * @data: input: the datablock's bytes (read-only unless PTASK_PORT_INOUT);
 *	output: a fresh datablock of the port template's size, or NULL when
 *	the port has no template (call ptask_cpu_output() for one)
 * @bytes: bytes at @data
 * @records: input: its record count; output: set it for a record stream
 */
struct ptask_cpu_port {
	uint32_t index;
	uint32_t kind;
	uint32_t flags;
	void *data;
	uint64_t bytes;
	uint64_t records;
};

/**
 * struct ptask_cpu_call - what a CPU ptask body receives
 * @ptask: the ptask's handle
 * @invocation: the invocation's id
 * @nports: entries in @ports, in port order
 * @ports: every port
 */
struct ptask_cpu_call {
	uint32_t ptask;
	uint64_t invocation;
	uint32_t nports;
	struct ptask_cpu_port *ports;
};

/*
 * A CPU ptask's body.  Returns 0, or a negative errno that fails the
 * graph.  Runs on the library's worker thread.
 */
typedef int (*ptask_cpu_fn)(struct ptask_cpu_call *call, void *arg);

/**
 * ptask_cpu_ptask_open() - add a CPU ptask whose body is @fn(call, @arg)
 *
 * The ptask is opened with PTASK_PTASK_SELF: this context runs it.
 */
int ptask_cpu_ptask_open(struct ptask_ctx *ctx, uint32_t graph,
			 const char *name, uint32_t nports, ptask_cpu_fn fn,
			 void *arg, uint32_t *ptask);

/*
 * From inside a body: give output port @index (no template) a datablock
 * of @bytes; returns its memory through @data.
 */
int ptask_cpu_output(struct ptask_cpu_call *call, uint32_t index,
		     uint64_t bytes, void **data);

/**
 * ptask_port_open() - add a port to a ptask
 * @kind: enum ptask_port_kind
 * @flags: PTASK_PORT_RUNTIME, PTASK_PORT_INOUT
 * @tmpl: 0 (any) or a template of the graph
 * @param_index: formal parameter of the GPU code it binds to
 * @inout_peer: with PTASK_PORT_INOUT: the output port emitting the update
 * @port: out: its handle
 */
int ptask_port_open(struct ptask_ctx *ctx, uint32_t ptask, const char *name,
		    uint32_t kind, uint32_t flags, uint32_t tmpl,
		    uint32_t param_index, uint32_t inout_peer, uint32_t *port);

/**
 * ptask_channel_open() - join two ports, or make a graph input/output
 * @src: an output port, or 0 for a graph input
 * @dst: an input or sticky port, or 0 for a graph output
 * @capacity: datablocks it holds
 * @tmpl: 0 or a template of the graph
 */
int ptask_channel_open(struct ptask_ctx *ctx, uint32_t graph,
		       const char *name, uint32_t src, uint32_t dst,
		       uint32_t capacity, uint32_t tmpl, uint32_t *channel);

/* Find the template, ptask, port or channel @name (enum ptask_object_type). */
int ptask_lookup(struct ptask_ctx *ctx, uint32_t graph, uint32_t type,
		 const char *name, uint32_t *handle);

/* Static priority (PTASK_PRIO_SET_STATIC) and/or proxy nice (_PROXY). */
int ptask_set_priority(struct ptask_ctx *ctx, uint32_t ptask, uint32_t flags,
		       uint32_t static_prio, int32_t proxy_nice);
/* Launch geometry of a GPU ptask; all zero: inferred from the templates. */
int ptask_set_geometry(struct ptask_ctx *ctx, uint32_t ptask,
		       const uint32_t grid[3], const uint32_t block[3],
		       uint32_t shared_bytes);

/* --- datablocks -------------------------------------------------------------- */

/**
 * ptask_datablock_create() - a new datablock the caller holds
 * @tmpl: 0 and @bytes, or a template (then @bytes must be 0)
 * @records: its record count (a record stream's, else informative)
 * @out: the datablock, not yet mapped
 */
int ptask_datablock_create(struct ptask_ctx *ctx, uint32_t tmpl,
			   uint64_t bytes, uint64_t records,
			   struct ptask_db **out);
/* Map it (once; later calls return the same address). */
int ptask_datablock_map(struct ptask_ctx *ctx, struct ptask_db *db,
			void **data);
/* Unmap it, drop the caller's reference and free @db. */
int ptask_datablock_release(struct ptask_ctx *ctx, struct ptask_db *db);

uint32_t ptask_db_handle(const struct ptask_db *db);
uint64_t ptask_db_bytes(const struct ptask_db *db);
uint64_t ptask_db_records(const struct ptask_db *db);

/* --- moving data --------------------------------------------------------------- */

/**
 * ptask_push() - queue a datablock on a graph input channel
 * @timeout_ns: PTASK_FOREVER, PTASK_NOWAIT or a relative timeout
 *
 * The caller keeps its reference (release it when done).  With @records
 * >= 0 the datablock's record count is set to it first; -1 leaves it.
 */
int ptask_push(struct ptask_ctx *ctx, uint32_t channel, struct ptask_db *db,
	       int64_t records, int64_t timeout_ns);

/**
 * ptask_push_async() - queue a push without waiting for it
 * @records: as ptask_push()'s
 *
 * Returns once the push is queued (user mode with rings: in a ring of
 * the context's own; elsewhere it is made at once, synchronously).
 * Asynchronous pushes run in the order they were queued, each waiting
 * for room in its channel as ptask_push() with PTASK_FOREVER does; a
 * later ptask_push() or ptask_datablock_release() of the context runs
 * after them.  Write @db's bytes again only after the invocation that
 * reads them has run (its output pulled), as after ptask_push().
 *
 * A push that fails later (a bad handle, the graph stopped) is kept:
 * ptask_sync(), or else the next ptask_push_async(), returns its -errno
 * once (that push is then not queued), and ptask_ctx_close() prints one
 * line on stderr if nobody was told.  A pull waiting for the output of
 * a push that failed waits for its timeout.
 *
 * Return: 0, or -errno (-EINVAL: no @db; an earlier asynchronous push's
 * failure; the push's own when made synchronously).
 */
int ptask_push_async(struct ptask_ctx *ctx, uint32_t channel,
		     struct ptask_db *db, int64_t records);

/**
 * ptask_sync() - wait for every asynchronous push of the context
 *
 * Return: 0 when all of them succeeded; else the first failure not yet
 * returned (by this or by ptask_push_async()), or -ENOTCONN when ptaskd
 * went before they completed.
 */
int ptask_sync(struct ptask_ctx *ctx);

/**
 * ptask_pull() - take the oldest datablock from a graph output channel
 * @out: the datablock (the caller holds it; release it when done)
 */
int ptask_pull(struct ptask_ctx *ctx, uint32_t channel, int64_t timeout_ns,
	       struct ptask_db **out);

/* --- record-stream tunnels (uapi/ptask.h "Record-stream tunnels") ---------- */

/**
 * ptask_tunnel_open() - open one end of a tunnel (PTASK_CHANNEL_TUNNEL)
 * @src: 0 for the input end (clients push), or an output port
 * @dst: an input port for the input end, or 0 for the output end
 * @capacity: input end: pushes one batch holds at most; output end:
 *	batches back and not wholly pulled
 * @tmpl: 0 or a record-stream template
 * @bytes: input end: threshold in bytes (0: the calibrated default)
 * @records: input end: threshold in records (0: none)
 * @timeout_ns: input end: the longest a push waits for its batch (0:
 *	default)
 */
int ptask_tunnel_open(struct ptask_ctx *ctx, uint32_t graph,
		      const char *name, uint32_t src, uint32_t dst,
		      uint32_t capacity, uint32_t tmpl, uint64_t bytes,
		      uint32_t records, uint64_t timeout_ns,
		      uint32_t *channel);

/* New threshold and timeout for a tunnel's input end (0: default). */
int ptask_tunnel_set(struct ptask_ctx *ctx, uint32_t channel, uint64_t bytes,
		     uint32_t records, uint64_t timeout_ns);

/**
 * ptask_pull_slice() - pull the records that came from one push
 * @channel: a tunnel's output end
 * @pushed: the datablock the caller pushed on the input end (the ticket)
 * @out: a new datablock with that push's records of the output
 */
int ptask_pull_slice(struct ptask_ctx *ctx, uint32_t channel,
		     const struct ptask_db *pushed, int64_t timeout_ns,
		     struct ptask_db **out);

/*
 * push + pull of a buffer: copies @in_bytes from @in into a new datablock,
 * pushes it, pulls one result and copies up to @out_cap bytes of it to
 * @out.  Returns the result's size (which may exceed @out_cap) or -errno.
 */
long long ptask_push_pull_copy(struct ptask_ctx *ctx, uint32_t in_channel,
			       const void *in, size_t in_bytes,
			       uint32_t out_channel, void *out,
			       size_t out_cap);

#ifdef __cplusplus
}
#endif

#endif /* LIBPTASK_H */
