/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * proto.h - the wire protocol between libptask and ptaskd --mode user.
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
 *
 * Messages over PTASKD_MSG_MAX, and headers with a bad magic, are
 * refused: the daemon closes the connection.  A
 * reply's @err is 0 or a negative errno; its payload is the call's struct
 * as the module would copy it out (the caller's size), then the extras.
 * File descriptors (memfd arenas) come with PTASKD_OP_MAP replies as
 * SCM_RIGHTS.  Arenas belong to one uid; holding an arena's fd gives
 * access to every datablock in it (see daemon/ns_user.h).  Every connection starts with PTASKD_OP_HELLO.
 *
 * One connection serves one call at a time; a program that calls from
 * several threads opens more connections and attaches them to its first
 * one's client with the token HELLO returned (same process only: the
 * daemon compares SO_PEERCRED pids), so they share graphs and datablocks
 * like the threads of one /dev/ptask fd.  The client lives until its last
 * connection closes.
 */
#ifndef PTASK_PROTO_H
#define PTASK_PROTO_H

#include <linux/types.h>
#include "uapi/ptask.h"

/* The socket unless --socket or PTASK_SOCKET say (PTASK_SOCKET_DEFAULT). */
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
};

/**
 * struct ptaskd_set_policy - request of PTASKD_OP_SET_POLICY (reply: empty)
 * @policy: "first-available", "fifo", "priority" or "data-aware"
 *
 * Only root (uid 0 by SO_PEERCRED) may change the policy (-EPERM);
 * an unknown name is -EINVAL.  Takes effect for the next placement.
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
 *	every answer; a client that has it already closes the new one)
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

#endif /* PTASK_PROTO_H */
