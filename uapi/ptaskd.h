/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ptaskd.h - the wire protocol between libptask and ptaskd --mode user.
 *
 * A SOCK_STREAM UNIX socket (a stream, not SEQPACKET, because code and
 * results can be larger than a socket buffer).  Every message is a
 * header, then exactly @len bytes of payload.  A request's @op is either a PTASK_IOC_* command of
 * uapi/ptask.h (the payload is that call's struct exactly as the ioctl
 * takes it, size field first, so the daemon parses it with the same
 * ptask_args_desc()/ptask_args_check() the module uses) or a PTASKD_OP_*
 * below.  Pointers inside the uapi structs are ignored: the buffers they
 * would point at travel after the struct instead:
 *
 *   PTASK_IOC_PTASK_OPEN      request: code_len bytes of code
 *   PTASK_IOC_EXEC_COMPLETE   request: n_outputs struct ptask_exec_output
 *   PTASK_IOC_EXEC_TAKE       reply: n_invocations struct ptask_invocation,
 *                             then n_ports struct ptask_invocation_port
 *   PTASK_IOC_EXEC_PTASK_INFO reply (code != 0): code_len bytes of code
 *   PTASK_IOC_EXEC_FORGOTTEN  reply: n_handles __u32 handles
 *
 * Messages over PTASKD_MSG_MAX, and headers with a bad magic, are
 * refused: the daemon closes the connection.  A
 * reply's @err is 0 or a negative errno; its payload is the call's struct
 * as the module would copy it out (the caller's size), then the extras.
 * File descriptors (memfd arenas) come with PTASKD_OP_MAP replies as
 * SCM_RIGHTS.  Arenas belong to one uid; holding an arena's fd gives
 * access to every datablock in it (see daemon/user/ns_user.h).  Every connection starts with PTASKD_OP_HELLO.
 *
 * One connection serves one call at a time; a program that calls from
 * several threads opens more connections and attaches them to its first
 * one's client with the token HELLO returned (same process only: the
 * daemon compares SO_PEERCRED pids), so they share graphs and datablocks
 * like the threads of one /dev/ptask fd.  The client lives until its last
 * connection closes.
 *
 * Rings: PTASKD_OP_RING_SETUP (below) makes a connection the lifeline of
 * a shared-memory ring that carries push, pull, datablock create and
 * release without a message per call (uapi/ptask.h, "Submission and
 * completion rings").
 */
#ifndef PTASKD_UAPI_H
#define PTASKD_UAPI_H

#include <linux/types.h>
#include "ptask.h"

/*
 * The socket unless ptaskd --socket or $PTASK_SOCKET say: the one default
 * of ptaskd, libptask (PTASK_SOCKET_DEFAULT), ptaskctl and encfs-gpu.
 */
#define PTASKD_SOCKET_DEFAULT	"/run/ptask/ptaskd.sock"

#define PTASKD_PROTO_MAGIC	0x444b5450U	/* "PTKD" */
#define PTASKD_PROTO_VERSION	1
/* The largest message: a PTASK_OPEN with the largest code. */
#define PTASKD_MSG_MAX		(PTASK_CODE_MAX_BYTES + 4096)

struct ptaskd_hdr {
	__u32 magic;
	__u32 op;	/* request: the op; reply: the op it answers */
	__s32 err;	/* reply: 0 or -errno; request: 0 */
	__u32 len;	/* payload bytes after the header */
};

/* Ops that are not ioctls (the ioctl numbers never have these values). */
enum ptaskd_op {
	PTASKD_OP_HELLO = 1,
	PTASKD_OP_MAP = 2,
	PTASKD_OP_INFO = 3,
	PTASKD_OP_SET_POLICY = 4,
	PTASKD_OP_SCHED_GET = 5,
	PTASKD_OP_SCHED_SET = 6,
	PTASKD_OP_PROCS = 7,
	PTASKD_OP_OBJECTS = 8,
	PTASKD_OP_SET_PRIO = 9,
	PTASKD_OP_RING_SETUP = 10,
	PTASKD_OP_EXEC_REGISTER = 11,
	PTASKD_OP_EXEC_CONNECT = 12,
};

/**
 * struct ptaskd_set_policy - request of PTASKD_OP_SET_POLICY (reply: empty)
 * @policy: "first-available", "fifo", "priority", "data-aware", or
 *	"default" (ptaskd's --policy again)
 *
 * Only root (uid 0 by SO_PEERCRED) may change the policy (-EPERM);
 * an unknown name is -EINVAL.  The same setting as PTASKD_OP_SCHED_SET's
 * policy (PTSched's, handed to the engine with its next take): kept for
 * clients older than PTASKD_OP_SCHED_SET.
 */
struct ptaskd_set_policy {
	char policy[32];
};

/**
 * struct ptaskd_hello - first request of every connection, and its reply
 * @version: PTASKD_PROTO_VERSION (the daemon refuses others: -EPROTO)
 * @flags: 0
 * @token: request: 0 for a new client, else the token of the client to
 *	attach to; reply: the client's token
 * @pid: reply: the daemon's pid
 * @reserved: 0
 */
struct ptaskd_hello {
	__u32 version;
	__u32 flags;
	__u64 token;
	__s32 pid;
	__u32 reserved;
};

/**
 * struct ptaskd_map - map a datablock (request and reply)
 * @handle: the datablock: one the client holds, or an input of an
 *	invocation it took
 * @flags: request: 0; reply: PTASKD_MAP_FD (the arena's fd comes with
 *	every answer; a client that has it already closes the new one),
 *	and PTASKD_MAP_OWN when the arena holds this datablock alone (one
 *	that clients of other uids may be handed: see Documentation/
 *	ptaskd.md, "Datablock memory"): it is never reused, so a client
 *	unmaps it once it maps none of it, rather than keeping it
 * @arena: reply: the arena (memfd) holding it
 * @arena_bytes: reply: the arena's size
 * @offset: reply: where the datablock starts in the arena (page aligned)
 * @bytes: reply: the datablock's size
 */
struct ptaskd_map {
	__u32 handle;
	__u32 flags;
	__u64 arena;
	__u64 arena_bytes;
	__u64 offset;
	__u64 bytes;
};
#define PTASKD_MAP_FD		(1U << 0)
#define PTASKD_MAP_OWN		(1U << 1)

/**
 * struct ptaskd_ring_setup - PTASKD_OP_RING_SETUP (request and reply)
 * @sq_entries: request: SQ slots wanted, a power of two up to
 *	PTASK_RING_ENTRIES_MAX, or 0 for ptaskd's default; reply: granted
 * @cq_entries: reply: CQ slots (PTASK_RING_CQ_FACTOR * @sq_entries);
 *	request: 0
 * @flags: request: 0 or PTASKD_RING_DATA; reply: what was granted
 * @reserved: 0
 * @region_bytes: reply: the region's size, to mmap whole
 *
 * PTASKD_RING_DATA asks for a data area after the ring: the region then
 * holds the ring as struct ptask_ring_hdr lays it out, and from the
 * first page boundary at or after the header's @region_bytes to the
 * reply's @region_bytes (PTASKD_RING_DATA_BYTES here) the ring's data
 * area, where executor entries (PTASK_SQE_DATA, uapi/ptask.h) keep what
 * their pointer fields would point to.  A ptaskd older than the flag
 * answers -EINVAL: ask again without it.
 *
 * Turns the connection into a ring's lifeline (uapi/ptask.h, "Submission
 * and completion rings"): the reply carries the region's memfd
 * (SCM_RIGHTS, sealed against shrinking and growing), already laid out;
 * from then on the connection carries no more messages (anything sent
 * on it closes the ring), and closing it closes the ring, as does a
 * ring the client broke (a garbage tail).  The ring's calls are the
 * connection's client's (the token of its HELLO), with the identity
 * SO_PEERCRED gave at connect, as every call on the socket.  Errors:
 * -EINVAL (a field out of range or non-zero), -ENOMEM, -EMFILE.  An
 * older ptaskd answers -ENOTTY (no such op): the client keeps to the
 * socket.
 */
struct ptaskd_ring_setup {
	__u32 sq_entries;
	__u32 cq_entries;
	__u32 flags;
	__u32 reserved;
	__u64 region_bytes;
};
#define PTASKD_RING_SQ_DEFAULT	64
#define PTASKD_RING_DATA	(1U << 0)
#define PTASKD_RING_DATA_BYTES	(128U << 10)

#define PTASKD_INFO_DEVICES	16

/**
 * struct ptaskd_info - reply of PTASKD_OP_INFO (request: empty)
 * @version: PTASKD_PROTO_VERSION
 * @ndev: accelerators the daemon runs ptasks on
 * @backend: "cuda", "sim" or "cpu"
 * @policy: the scheduling policy's name
 * @counts: live objects, per enum ptask_count (as /sys/kernel/ptask/objects)
 * @invocations: GPU invocations the engine completed
 * @failed: of which failed
 * @migrations: run away from the device holding most of their inputs
 * @bytes_h2d: bytes copied host to device
 * @bytes_d2h: bytes copied device to host
 * @bytes_d2d: bytes copied between devices or contexts
 * @evictions: device copies evicted under memory pressure
 * @gpu_ns: device time of all invocations
 * @per_device: invocations per device
 */
struct ptaskd_info {
	__u32 version;
	__u32 ndev;
	char backend[16];
	char policy[32];
	__u64 counts[__PTASK_COUNT_MAX];
	__u64 invocations;
	__u64 failed;
	__u64 migrations;
	__u64 bytes_h2d;
	__u64 bytes_d2h;
	__u64 bytes_d2d;
	__u64 evictions;
	__u64 gpu_ns;
	__u64 per_device[PTASKD_INFO_DEVICES];
};

/*
 * PTSched's administration (uapi/ptask.h, "PTSched"), the user-mode twin
 * of the netlink commands GET_SCHED, SET_SCHED, GET_PROC, GET_OBJECT and
 * SET_PRIO.  Errors in the order the daemon checks them: a payload of
 * the wrong size or a non-zero reserved field is -EINVAL; then, for the
 * ops marked root only, a peer whose SO_PEERCRED uid is not 0 is -EPERM;
 * then the values (-EINVAL, -ENOENT, -ESRCH as the core says).  Nothing
 * is applied when an error is returned.
 *
 * PTASKD_OP_SCHED_GET (request: empty)
 *	Reply: struct ptask_sched_params, settings and state as of now.
 *
 * PTASKD_OP_SCHED_SET (root only; request: struct ptaskd_sched_set)
 *	Applies the fields @mask names, all or nothing (-EINVAL: @mask is 0
 *	or has unknown bits, or a value is out of range).  Reply: struct
 *	ptask_sched_params after the change.
 *
 * PTASKD_OP_PROCS (request: struct ptaskd_list)
 *	Reply: struct ptask_proc_info records of the processes with GPU
 *	accounting whose pid is above @cursor, in pid order, as many as fit
 *	in PTASKD_MSG_MAX; the next request's @cursor is the last pid
 *	received.  An empty reply ends the listing.  Start with @cursor 0.
 *
 * PTASKD_OP_OBJECTS (root only; request: struct ptaskd_list)
 *	Reply: struct ptaskd_object records of the objects whose handle is
 *	at least @cursor, in handle order, as many as fit; the next
 *	request's @cursor is the last handle received plus one.  An empty
 *	reply ends the listing.  Start with @cursor 0.
 *
 * PTASKD_OP_SET_PRIO (root only; request: struct ptaskd_set_prio)
 *	Reply: empty.
 */

/**
 * struct ptaskd_sched_set - request of PTASKD_OP_SCHED_SET
 * @mask: PTASK_SCHED_SET_* naming the fields of @params to apply
 * @reserved: 0
 * @params: the new values (its out fields are ignored)
 */
struct ptaskd_sched_set {
	__u32 mask;
	__u32 reserved;
	struct ptask_sched_params params;
};

/**
 * struct ptaskd_list - request of PTASKD_OP_PROCS and PTASKD_OP_OBJECTS
 * @cursor: where the listing resumes (see each op); 0 to start
 * @flags: 0
 * @reserved: 0
 */
struct ptaskd_list {
	__u64 cursor;
	__u32 flags;
	__u32 reserved;
};

/**
 * struct ptaskd_object - one object of a PTASKD_OP_OBJECTS reply
 * @type: enum ptask_object_type
 * @handle: its handle
 * @graph: its graph's handle (0 for a datablock)
 * @state: enum ptask_graph_state or ptask_ptask_state; a datablock's
 *	references; a channel's fill; 0 otherwise
 * @owner_uid: its graph's owner (a ptask: its creator)
 * @owner_pid: a ptask's creator, else 0
 * @kind: a ptask's enum ptask_ptask_kind
 * @prio: a ptask's static priority
 * @proxy_nice: a ptask's proxy priority (its creator's nice value)
 * @accel: the accelerator a ptask last ran on, index + 1 (0: none yet)
 * @gpu_ns: a ptask's GPU time
 * @invocations: a ptask's completed invocations
 * @name: its name, NUL-terminated ("" if none)
 * @failures: a ptask's invocations that failed
 * @last_error: the last failure's status (a negative errno; 0: none)
 * @error_code: its accelerator's code (struct ptask_exec_complete)
 * @reserved: 0
 *
 * The fields of PTASK_CMD_GET_OBJECT's PTASK_A_OBJ_* attributes.
 */
struct ptaskd_object {
	__u32 type;
	__u32 handle;
	__u32 graph;
	__u32 state;
	__u32 owner_uid;
	__s32 owner_pid;
	__u32 kind;
	__u32 prio;
	__s32 proxy_nice;
	__u32 accel;
	__u64 gpu_ns;
	__u64 invocations;
	char name[PTASK_NAME_MAX];
	__u64 failures;
	__s32 last_error;
	__u32 error_code;
};

/**
 * struct ptaskd_set_prio - request of PTASKD_OP_SET_PRIO
 * @target: PTASKD_PRIO_PTASK or PTASKD_PRIO_PID
 * @handle: PTASKD_PRIO_PTASK: the ptask; else 0
 * @pid: PTASKD_PRIO_PID: the process; else 0
 * @value: PTASKD_PRIO_PTASK: the static priority (0..99, as
 *	PTASK_IOC_PTASK_SET_PRIORITY takes); PTASKD_PRIO_PID: the weight
 *	override, 1..PTASK_WEIGHT_MAX, or 0 to go back to the weight of the
 *	process's nice value
 *
 * Errors: -EINVAL (unknown @target, the other id not 0, @value out of
 * range), -EPERM, -ENOENT (no such ptask), -ESRCH (no accounting for
 * @pid: it owns no GPU ptask).
 */
struct ptaskd_set_prio {
	__u32 target;
	__u32 handle;
	__s32 pid;
	__u32 value;
};
#define PTASKD_PRIO_PTASK	1
#define PTASKD_PRIO_PID		2

/*
 * Executors per uid (ptaskd --mode user --executors uid)
 * ======================================================
 *
 * ptaskd keeps the namespace and starts, for every uid that owns a
 * ptask, an executor process of its own (ptaskd again, with --exec-fd),
 * which runs as that uid and holds that uid's CUDA context alone.  Its
 * first connection is one end of a socketpair ptaskd made: an *executor
 * connection*, whose identity is the one ptaskd gave it (the uid it
 * serves, the child's pid), not SO_PEERCRED.  Only executor connections
 * take the two ops below; anyone else gets -EPERM.  They start with
 * PTASKD_OP_HELLO as every connection does.
 *
 * PTASKD_OP_EXEC_REGISTER (request and reply: struct ptaskd_exec_register)
 *	Makes the connection's client the executor of its uid: it takes
 *	invocations of that uid's ptasks alone (uapi/ptask.h, EXEC_REGISTER
 *	with PTASK_A_OBJ_OWNER_UID), or with --executors process those of
 *	one process of that uid (the reply's @pid).  -EALREADY a second
 *	time.
 *
 * PTASKD_OP_EXEC_CONNECT (request: empty; reply: empty, with an fd)
 *	Another executor connection of the same identity (SCM_RIGHTS); its
 *	HELLO attaches to the executor's client with its token.  An
 *	executor calls from several threads (a take waits while another
 *	thread completes), one call at a time per connection.
 *
 * On executor connections two replies carry more, so the executor maps
 * without a PTASKD_OP_MAP per datablock:
 *
 *   PTASK_IOC_EXEC_TAKE         after the ports: n_ports struct
 *                               ptaskd_exec_place, one per port record
 *   PTASK_IOC_DATABLOCK_CREATE  after the struct: one struct
 *                               ptaskd_exec_place
 *
 * A place names the arena as PTASKD_OP_MAP's reply does; @arena 0 means
 * "no place" (no datablock, or one released meanwhile): map it with
 * PTASKD_OP_MAP, which also brings an arena's fd the first time.
 */

/**
 * struct ptaskd_exec_register - PTASKD_OP_EXEC_REGISTER
 * @n_accels: request: the devices the executor runs ptasks on
 * @flags: 0
 * @uid: reply: the uid whose ptasks it takes; request: 0
 * @pid: reply: with --executors process, the process whose ptasks alone
 *	it takes, else -1; request: 0
 */
struct ptaskd_exec_register {
	__u32 n_accels;
	__u32 flags;
	__u32 uid;
	__s32 pid;
};

/**
 * struct ptaskd_exec_place - where a datablock of an executor's reply is
 * @arena: the arena (0: no place given)
 * @arena_bytes: its size
 * @offset: the datablock's first byte in it
 * @flags: PTASKD_MAP_OWN as in struct ptaskd_map
 * @reserved: 0
 */
struct ptaskd_exec_place {
	__u64 arena;
	__u64 arena_bytes;
	__u64 offset;
	__u32 flags;
	__u32 reserved;
};

#endif /* PTASKD_UAPI_H */
