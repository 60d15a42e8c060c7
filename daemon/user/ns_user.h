/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ns_user.h - user mode's shell of the core: the namespace ptaskd holds
 * itself when there is no ptask.ko (the third shell, next to kmod/ and
 * the unit tests' os_user.c).
 *
 * Locking: one pthread mutex per namespace (pd_ns.lock) is the core's
 * namespace lock.  Every core call goes through pd_ns_call(), which takes
 * it, and which sleeps on the calling client's condition variable (with
 * the lock dropped) while a blocking call says -EAGAIN, as the module's
 * ioctl path sleeps on its wait queue.
 *
 * Datablock memory lives in arenas: memfd files of PD_ARENA_BYTES (or one
 * datablock's size, rounded to pages, when larger) that the daemon maps
 * once, hands to clients as file descriptors, and registers once with the
 * backend for DMA (cuMemHostRegister), so no invocation pays for pinning.
 * Arenas are per owner uid: a datablock is carved from an arena of the
 * uid of the client that creates it (the engine's outputs: of the
 * ptask's owner), so an arena fd never reaches a client of another uid
 * unless that client is given a datablock in it.  An emptied arena is
 * kept as a spare for the same uid (arena.h).
 */
#ifndef PTASKD_NS_USER_H
#define PTASKD_NS_USER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "common/hash.h"
#include "common/spin.h"
#include "core/ptask_core.h"
#include "daemon/backend/backend.h"
#include "daemon/engine/engine.h"

#define PD_ARENA_BYTES		(64ULL << 20)

struct pd_ns;
struct pd_source;

/**
 * struct pd_client - one client of the user-mode namespace
 * @core: the core's client
 * @ns: its namespace
 * @cond: where its blocked calls sleep (signalled on every wake_seq bump)
 * @token: the token its connections attach with
 * @pid: the process (SO_PEERCRED) that opened it
 * @uid: its euid
 * @conns: connections (or in-process users) holding it
 * @alloc_uid: whose arena the datablocks it creates come from: @uid,
 *	except for the engine's own client, which sets it (under the
 *	namespace lock) to the invocation owner's before it creates an
 *	output
 * @alloc_zero: zero reused arena memory for them (false only for the
 *	engine's outputs, which the device writes whole)
 * @waits: which kinds of blocking call waited longer than the polling
 *	window last time: those sleep at once (common/spin.h)
 * @holds: an executor process's client: the memory of every datablock
 *	whose place it was told, by handle (ns_exec_hold.c)
 * @dying: of those, the ones whose death notice it read
 */
struct pd_client {
	struct ptask_client *core;
	struct pd_ns *ns;
	pthread_cond_t cond;
	uint64_t token;
	int32_t pid;
	uint32_t uid;
	uint32_t conns;
	uint32_t alloc_uid;
	bool alloc_zero;
	struct pc_spin_hist waits;
	struct pc_hash holds;
	struct pd_exec_hold *dying;
};

/* Create a namespace.  @be (may be NULL) gets host_register per arena. */
int pd_ns_create(struct pd_backend *be, struct pd_ns **out);
/* Stop the executor source, destroy every client and object. */
void pd_ns_destroy(struct pd_ns *ns);

/* A new client for process @who (its pid and uid name it). */
int pd_ns_client_open(struct pd_ns *ns, const struct ptask_caller *who,
		      struct pd_client **out);
/* Another connection of the same process joins client @token. */
int pd_ns_client_attach(struct pd_ns *ns, uint64_t token, int32_t pid,
			struct pd_client **out);
/* One holder lets go; the last frees the client and all it held. */
void pd_ns_client_put(struct pd_client *c);

/*
 * Asked about every PD_CANCEL_POLL_MS while a call sleeps: true makes the
 * call give up with -EINTR (the connection went away, the engine stops).
 */
typedef bool (*pd_cancel_fn)(void *arg);
#define PD_CANCEL_POLL_MS	100

/**
 * struct pd_call_ctx - how a call waits, and what it holds back
 * @cancel: asked about while the call sleeps (pd_cancel_fn); may be NULL
 * @cancel_arg: @cancel's argument
 * @defer: where executor wake-ups the call makes are held back (see
 *	struct pd_wake_defer); NULL: they are made at once
 */
struct pd_call_ctx {
	pd_cancel_fn cancel;
	void *cancel_arg;
	struct pd_wake_defer *defer;
};

/*
 * One call (cmd: a PTASK_IOC_* number) with its struct @arg, already
 * checked with ptask_core_args_check(), and further buffers @io, exactly as
 * the module's ioctl path makes it; blocking calls sleep until done,
 * their deadline, or @ctx->cancel says true.  @ctx may be NULL (no
 * cancel, no wake-up held back).  Returns 0 or -errno.
 */
int pd_ns_call(struct pd_client *c, const struct ptask_caller *who,
	       unsigned int cmd, void *arg, const struct ptask_call_io *io,
	       const struct pd_call_ctx *ctx);

/*
 * PULL @arg (checked with ptask_core_args_check()) once, never blocking
 * (-EAGAIN where pd_ns_call would wait), from the client's ring thread
 * while it waits for the fence of invocation @writer, completed ahead:
 * a datablock @writer writes is taken before @writer settles, and
 * *@ahead says so (its bytes are there once that fence passed, which
 * the caller waits for before it answers).  0 or -errno.
 */
int pd_ns_pull_ahead(struct pd_client *c, const struct ptask_caller *who,
		     struct ptask_pull *arg, const struct ptask_call_io *io,
		     uint64_t writer, bool *ahead, struct pd_wake_defer *defer);

/*
 * Wait until datablock @handle (one the client holds) has no writer left
 * to settle, or is gone: a pull taken ahead of a fence that failed is
 * run again only once that writer's settle failed the graph.  0, or
 * -EINTR when @cancel says so (asked between slices; may be NULL).
 */
int pd_ns_wait_unwritten(struct pd_client *c, uint32_t handle,
			 pd_cancel_fn cancel, void *cancel_arg);

/*
 * EXEC_COMPLETE @arg (checked with ptask_core_args_check(), no outputs:
 * a settle) for each of the @n invocations @ids in turn, in one hold of
 * the namespace's lock; @errs gets each one's 0 or -errno.  For a
 * batch's members, settled together (a lock round each cost the
 * completion thread 0.5 us an invocation, contended by the rings').
 */
void pd_ns_complete_many(struct pd_client *c, const struct ptask_caller *who,
			 struct ptask_exec_complete *arg, const uint64_t *ids,
			 uint32_t n, struct pd_wake_defer *defer, int *errs);

/*
 * A call that would block polls its client's wake_seq for up to @spin_ns
 * (the lock dropped, yielding the CPU between looks) before it sleeps on
 * the client's condition variable: the pull waiting for an invocation's
 * output is on its critical path, and a condition variable's wake-up
 * costs a futex wake-up there.  Not the executor's calls: a taker that
 * ran out of work would only burn a CPU.  0 (the default): sleep at
 * once; ptaskd sets it to --spin-us (pd_server_start).
 */
void pd_ns_set_call_spin(struct pd_ns *ns, uint64_t spin_ns);

/**
 * struct pd_map_info - where a datablock's bytes are
 * @arena: the arena's id
 * @arena_fd: its memfd (owned by the namespace: dup it to pass it on)
 * @arena_bytes: its size
 * @offset: the datablock's first byte in the arena (page aligned)
 * @bytes: the datablock's size
 * @addr: the daemon's own address of the datablock's first byte
 * @own: the arena is the datablock's alone (arena.h, "Own arenas")
 */
struct pd_map_info {
	uint64_t arena;
	int arena_fd;
	uint64_t arena_bytes;
	uint64_t offset;
	uint64_t bytes;
	void *addr;
	bool own;
};

/*
 * May @c map datablock @handle, and where is it?  -ENOENT if it holds
 * none of that handle, -EACCES if its place is an arena of another uid's
 * (which holds that uid's other datablocks too: arena.h).
 */
int pd_ns_map(struct pd_client *c, uint32_t handle, struct pd_map_info *mi);

/*
 * Executor processes (ptaskd --executors uid; ns_exec_hold.c says why):
 * pd_ns_map() for an executor connection's client, whose memory is then
 * kept (not reused for another datablock) until the executor has read
 * the datablock's death notice (pd_ns_exec_forgotten: the handles its
 * EXEC_FORGOTTEN returned) and taken again (pd_ns_exec_took, before each
 * of its EXEC_TAKEs).  The client's end lets go of all of it
 * (pd_ns_exec_holds_free_locked, from pd_ns_client_put).
 */
struct pd_exec_hold;
int pd_ns_exec_place(struct pd_client *c, uint32_t handle,
		     struct pd_map_info *mi);
void pd_ns_exec_forgotten(struct pd_client *c, const uint32_t *handles,
			  uint32_t n);
void pd_ns_exec_took(struct pd_client *c);
void pd_ns_exec_holds_free_locked(struct pd_client *c);

/*
 * The executor source of this namespace (engine.h): an in-process client
 * registered as the executor with @n_accels devices.  Datablocks the
 * engine creates come from arenas of the invocation owner's uid.
 */
int pd_ns_source_open(struct pd_ns *ns, uint32_t n_accels,
		      struct pd_source **out);
void pd_ns_source_close(struct pd_source *src);

/*
 * Make client @c (an executor process's, ptaskd --executors uid) the
 * executor of @uid's ptasks alone (ptask_core_exec_set_uid), or with
 * @pid >= 0 of those of process @pid of @uid alone (--executors process,
 * ptask_core_exec_set_process), with @n_accels devices.  0, -EALREADY
 * (it is an executor already), -ENOMEM.
 * It lasts as long as the client: its last connection's close
 * unregisters it, and what it held taken fails or is queued again.
 */
int pd_ns_exec_register(struct pd_client *c, uint32_t n_accels, uint32_t uid,
			int32_t pid);

/*
 * Told that datablock @handle died (its memory may outlive it a while in
 * mappings); called with the namespace lock held, so it must not call
 * back into the namespace.
 */
typedef void (*pd_forget_fn)(void *arg, uint32_t handle);

/**
 * pd_ns_set_forget() - who to tell when a datablock dies
 * @ns: the namespace
 * @forget: called for every datablock that dies from now on; NULL: nobody
 * @arg: @forget's first argument
 *
 * ptaskd wires this to the engine (pd_engine_forget), which then drops
 * the datablock's device copies at once rather than when the last
 * mapping of its memory goes.  Set it to NULL before what @arg names
 * goes away: once this returns, the old @forget is not called any more.
 */
void pd_ns_set_forget(struct pd_ns *ns, pd_forget_fn forget, void *arg);

/* Told that a client opened GPU ptask @ptask (see pd_ns_set_opened). */
typedef void (*pd_opened_fn)(void *arg, uint32_t ptask, int32_t owner_pid);

/**
 * pd_ns_set_opened() - who to tell when a client opens a GPU ptask
 * @ns: the namespace
 * @opened: called, under the namespace lock (so it must not call back
 *	into the namespace), for every GPU ptask a client opens from now
 *	on, with the opening process's pid (the invocations' owner_pid);
 *	NULL: nobody
 * @arg: @opened's first argument
 *
 * ptaskd wires this to the engine (pd_engine_prewarm), which then makes
 * the client's space and loads the ptask's kernel before its first
 * invocation needs them.  Set it to NULL before what @arg names goes
 * away: once this returns, the old @opened is not called any more.
 */
void pd_ns_set_opened(struct pd_ns *ns, pd_opened_fn opened, void *arg);

/*
 * Wake the executor for work whose wake-up a struct pd_wake_defer held
 * back (the namespace lock must not be held).
 */
void pd_ns_wake_executor(struct pd_ns *ns);

/* Counts of live objects (enum ptask_count), for ptaskctl and tests. */
void pd_ns_counts(struct pd_ns *ns, u64 counts[__PTASK_COUNT_MAX]);

/* PTSched's settings named by @mask (PTASK_SCHED_SET_*): 0 or -EINVAL. */
int pd_ns_sched_set(struct pd_ns *ns, uint32_t mask,
		    const struct ptask_sched_params *p);

/*
 * The most datablock memory a uid other than 0 may hold (0: no limit;
 * core/uid_usage.c), and what @uid holds now.
 */
void pd_ns_uid_limit_set(struct pd_ns *ns, uint64_t bytes);
void pd_ns_uid_usage(struct pd_ns *ns, uint32_t uid,
		     struct ptask_uid_usage_info *out);

#endif /* PTASKD_NS_USER_H */
