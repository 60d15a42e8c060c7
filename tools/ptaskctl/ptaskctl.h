/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ptaskctl.h - what the subcommands of ptaskctl share.
 *
 * A subcommand is one file that defines a function and registers it with
 * PTASKCTL_COMMAND(); nothing else is edited to add one.  The macro puts a
 * pointer to its struct ptaskctl_cmd in the "ptaskctl_cmds" section, whose
 * bounds the linker provides (__start_/__stop_ptaskctl_cmds); ptaskctl.c
 * walks them to dispatch and to print help, sorted by name.
 *
 * A subcommand receives argv starting at its own name (argv[0]), after the
 * global options (struct ptaskctl_opts) were taken off, returns 0, a
 * negative errno (exit status 1) or PTASKCTL_USAGE (bad arguments: exit
 * status 2), and prints its own error messages with ptaskctl_err().
 * It prints results only through the out_*() helpers, which write either
 * "key: value" lines or one JSON document (--json), so every subcommand
 * gets --json for free.
 *
 * Talking to ptask (ipc.c): kernel mode asks ptask.ko over generic netlink
 * (uapi/ptask.h), user mode asks ptaskd on its UNIX socket
 * (uapi/ptaskd.h); the common library (common/genl.h, common/msg.h)
 * carries both.
 */
#ifndef PTASKCTL_H
#define PTASKCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "uapi/ptask.h"
#include "uapi/ptaskd.h"
#include "libptask/libptask.h"	/* PTASK_SOCKET_DEFAULT */
#include "common/genl.h"	/* struct pc_genl_info, struct pc_genl_req */

#define PTASKCTL_USAGE	2	/* a subcommand's "bad arguments" */

struct ptaskctl_cmd {
	const char *name;
	int (*fn)(int argc, char *argv[]);
	const char *usage;	/* arguments after the name, "" for none */
	const char *help;	/* one line */
};

#define PTASKCTL_COMMAND(id, func, usage_, help_)				\
	static const struct ptaskctl_cmd ptaskctl_cmd_##id = {			\
		.name = #id, .fn = func, .usage = usage_, .help = help_,	\
	};									\
	static const struct ptaskctl_cmd *const ptaskctl_cmd_ptr_##id		\
	__attribute__((used, section("ptaskctl_cmds"),				\
		       aligned(sizeof(void *)))) = &ptaskctl_cmd_##id

/* The registered subcommands, sorted by name; *n gets their count. */
const struct ptaskctl_cmd *const *ptaskctl_commands(unsigned int *n);

enum ptaskctl_mode {
	PTASKCTL_MODE_AUTO,	/* kernel if the netlink family exists, else user */
	PTASKCTL_MODE_KERNEL,
	PTASKCTL_MODE_USER,
};

/**
 * struct ptaskctl_opts - the global options, parsed before the subcommand
 * @json: --json
 * @mode: --mode, else $PTASK_MODE, else auto
 * @socket: --socket, else $PTASK_SOCKET, else PTASK_SOCKET_DEFAULT
 */
struct ptaskctl_opts {
	bool json;
	enum ptaskctl_mode mode;
	const char *socket;
};

extern struct ptaskctl_opts ptaskctl_opts;
extern const char *ptaskctl_prog;	/* "ptaskctl" */

/* "ptaskctl: <fmt>\n" on stderr. */
void ptaskctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --- ipc.c: the ways in -------------------------------------------------------- */

/* The daemon's answer to PTASKD_OP_INFO, and the pid HELLO reported. */
struct ptaskctl_user_info {
	int32_t pid;
	struct ptaskd_info info;
};

/* 0 when the "ptask" generic-netlink family is registered, else -errno. */
int ipc_kernel_probe(void);
/* PTASK_CMD_GET_INFO: 0, -ENOENT (no module), -errno of the kernel. */
int ipc_kernel_info(struct pc_genl_info *info);

/* A connection to ptaskd at @path past HELLO: the fd, or -errno. */
int ipc_user_open(const char *path, int32_t *daemon_pid);
/*
 * One request (@op, @req_len bytes of @req) and its reply: at least
 * @rep_min payload bytes, up to @rep_max copied to @rep (the rest zeroed:
 * an older daemon, or skipped: a newer one).  0, -EPROTO or the daemon's
 * -errno.
 */
int ipc_user_call(int fd, uint32_t op, const void *req, uint32_t req_len,
		  void *rep, uint32_t rep_min, uint32_t rep_max);
/* The same with a reply of any length: *@rep malloc'd (NULL if empty). */
int ipc_user_call_alloc(int fd, uint32_t op, const void *req,
			uint32_t req_len, void **rep, uint32_t *rep_len);
/* HELLO then PTASKD_OP_INFO on @path: 0 or -errno (-EPROTO: bad reply). */
int ipc_user_info(const char *path, struct ptaskctl_user_info *info);
/* PTASKD_OP_SET_POLICY on @path (root only): 0 or -errno. */
int ipc_user_set_policy(const char *path, const char *policy);

/* --- ipc_admin.c: PTSched's administration, in either mode ------------------- */

/* --mode kernel, or auto with ptask.ko's netlink family registered. */
bool ipc_kernel_mode(void);
/* GET_SCHED / PTASKD_OP_SCHED_GET. */
int ipc_sched_get(struct ptask_sched_params *p);
/* SET_SCHED / PTASKD_OP_SCHED_SET, all or nothing; @after may be NULL. */
int ipc_sched_set(uint32_t mask, const struct ptask_sched_params *in,
		  struct ptask_sched_params *after);
/* Every process with GPU accounting, in pid order; *@recs malloc'd. */
int ipc_procs(struct ptask_proc_info **recs, size_t *n);
/* Every object (root only), in handle order; *@recs malloc'd. */
int ipc_objects(struct ptaskd_object **recs, size_t *n);
/* SET_PRIO / PTASKD_OP_SET_PRIO (root only). */
int ipc_set_prio(const struct ptaskd_set_prio *req);
/*
 * Print "ptaskctl: @what: <reason>" for -errno @err of the calls above,
 * with a hint where one helps (not root, no daemon, no module).
 */
void ipc_report(const char *what, int err);

/* --- output.c: "key: value" lines or JSON ------------------------------------ */

void out_begin(void);		/* the document; call once */
void out_end(void);		/* ends it (and the JSON line) */
void out_str(const char *key, const char *val);
void out_u64(const char *key, uint64_t val);
void out_s64(const char *key, int64_t val);
void out_f64(const char *key, double val);	/* 3 decimals */
void out_null(const char *key);	/* JSON null; text "-" */
void out_obj_begin(const char *key);	/* key NULL: an element of a list */
void out_obj_end(void);
void out_list_begin(const char *key);
void out_list_end(void);

#endif /* PTASKCTL_H */
