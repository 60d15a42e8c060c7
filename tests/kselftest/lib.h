/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lib.h - helpers shared by the ptask kselftests and the test executor.
 *
 * Every function returns 0 (or a non-negative value) on success and
 * -errno on failure; errno is never the interface.  Nothing here uses the
 * kselftest harness except the PT_ENV_SETUP() macro, which expands in the
 * test file.
 *
 * A test fixture embeds a struct pt_env: pt_env_init() records the
 * /sys/kernel/ptask/objects counters, the test opens fds, maps datablocks,
 * starts executors and forks children through it, and pt_env_fini() undoes
 * all of that and checks that every counter is back to its baseline (this
 * is how leaks are caught).
 */
#ifndef PTASK_KSELFTEST_LIB_H
#define PTASK_KSELFTEST_LIB_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

#include "uapi/ptask.h"
#include "common/genl.h"

/*
 * The deadline, in ms, for a state a test waits for that is normally there
 * at once: a blocked call woken, a thread asleep in its call, a child
 * exited, a count back at its base, an executor's turn, a sysfs directory
 * made by a work item.  Generous: the guest is emulated and its host may be
 * busy, which makes a test slower, never wrong.  Waits end as soon as the
 * state holds; a call that a test needs to time out has its own short
 * deadline.  (kselftest_harness.h gives each test 30 s in all.)
 */
#define PT_WAIT_MS	20000

#define PT_DEV_PATH		"/dev/" PTASK_DEVICE_NAME
#define PT_EXECUTOR_ENV		"PTASK_TEST_EXECUTOR"
#define PT_EXECUTOR_DEFAULT	"/bin/test_executor"
#define PT_NOBODY		65534

/* Exit codes of forked test children. */
#define PT_CHILD_OK		0
#define PT_CHILD_FAIL		1
#define PT_CHILD_SKIP		4

/* Batch sizes of the executors. */
#define PT_EXEC_BATCH		16
#define PT_EXEC_PORTS		(PT_EXEC_BATCH * PTASK_MAX_PORTS)

/* A graph name unique to this process: "kst.<pid>.<tag>". */
const char *pt_name(char buf[PTASK_NAME_MAX], const char *tag);

/* --- time --- */
__u64 pt_now_ns(void);
__u64 pt_deadline_ms(unsigned int ms);
void pt_sleep_ms(unsigned int ms);

/* --- raw ioctls --- */
int pt_open(void);
int pt_open_flags(int flags);
int pt_ioctl(int fd, unsigned long cmd, void *arg);

int pt_graph_open(int fd, const char *name, __u32 flags, __u32 mode,
		  __u32 *handle);
int pt_template_open(int fd, __u32 graph, __u32 kind, __u32 binding,
		     __u32 stride, __u32 x, __u32 y, __u32 z, const char *name,
		     __u32 *handle);
int pt_ptask_open(int fd, __u32 graph, __u32 kind, __u32 nports,
		  const void *code, __u32 code_len, const char *entry,
		  const char *name, __u32 *handle);
/* A GPU ptask with pt_dummy_code and entry "copy". */
int pt_ptask_open_gpu(int fd, __u32 graph, __u32 nports, const char *name,
		      __u32 *handle);
int pt_ptask_open_cpu(int fd, __u32 graph, __u32 nports, const char *name,
		      __u32 *handle);
int pt_port_open(int fd, __u32 ptask, __u32 kind, __u32 flags, __u32 tmpl,
		 __u32 param_index, __u32 inout_peer, const char *name,
		 __u32 *handle, __u32 *index);
int pt_channel_open(int fd, __u32 graph, __u32 src, __u32 dst,
		    __u32 capacity, __u32 tmpl, const char *name,
		    __u32 *handle);
int pt_lookup(int fd, __u32 graph, __u32 type, const char *name,
	      __u32 *handle);
int pt_db_create(int fd, __u64 bytes, __u32 tmpl, __u64 records,
		 __u32 *handle, __u64 *mmap_offset, __u64 *out_bytes);
int pt_db_release(int fd, __u32 handle);
int pt_push(int fd, __u32 channel, __u32 datablock, __u32 flags,
	    __u64 records, __u64 timeout_ns);
int pt_pull(int fd, __u32 channel, __u32 flags, __u64 timeout_ns,
	    struct ptask_pull *out);
int pt_graph_run(int fd, __u32 graph);
int pt_graph_terminate(int fd, __u32 graph);
int pt_graph_close(int fd, __u32 graph);
int pt_set_priority(int fd, __u32 ptask, __u32 flags, __u32 static_prio,
		    __s32 proxy_nice);
int pt_set_geometry(int fd, __u32 ptask, __u32 shared_bytes,
		    const __u32 grid[3], const __u32 block[3]);
int pt_exec_take(int fd, __u32 flags, __u64 timeout_ns,
		 struct ptask_invocation *inv, __u32 max_inv,
		 struct ptask_invocation_port *ports, __u32 max_ports,
		 __u32 *n_inv, __u32 *n_ports);
int pt_exec_complete(int fd, __u64 id, __s32 status, __u64 gpu_ns,
		     const struct ptask_exec_output *outputs, __u32 n_outputs);
/* @info may be NULL; @code may be NULL (asks the size). */
int pt_exec_ptask_info(int fd, __u32 ptask, void *code, __u32 *code_len,
		       struct ptask_exec_ptask_info *info);

extern const char pt_dummy_code[];
extern const __u32 pt_dummy_code_len;

/* --- datablock contents --- */
/* mmap(MAP_SHARED); NULL (errno set) on failure. */
void *pt_map(int fd, __u64 offset, size_t len, int prot);
/* Writes a pattern derived from @seed; the first 4 bytes hold @seed. */
void pt_fill(void *p, size_t len, __u32 seed);
/* 0 and *seed if @p holds a pattern, -EBADMSG otherwise. */
int pt_check(const void *p, size_t len, __u32 *seed);
/* Creates a datablock of @bytes (>= 8) holding pattern @seed; caller holds it. */
int pt_db_make(int fd, size_t bytes, __u32 seed, __u32 *handle);
/* Makes a datablock, pushes it (SET_RECORDS @records) and releases it. */
int pt_push_seed(int fd, __u32 channel, size_t bytes, __u32 seed,
		 __u64 records, __u32 flags, __u64 timeout_ns);
/* Pulls, checks the pattern, returns its seed, releases it. */
int pt_pull_seed(int fd, __u32 channel, __u32 flags, __u64 timeout_ns,
		 __u32 *seed, __u64 *bytes, __u64 *records);
/*
 * Pushes with PTASK_NONBLOCK until -EAGAIN; returns how many went in (or
 * -errno).  Stops after @max.
 */
int pt_fill_channel(int fd, __u32 channel, size_t bytes, __u32 seed0,
		    int max);

/* --- sysfs --- */
extern const char *const pt_count_names[__PTASK_COUNT_MAX];
int pt_sysfs_u64(const char *rel, __u64 *val);
/*
 * pt_sysfs_u64, waiting up to @ms while the file is not there yet (a
 * process's or ptask's directory follows its creation from a workqueue).
 */
int pt_sysfs_u64_wait(const char *rel, __u64 *val, unsigned int ms);
/* Waits up to @ms until @path exists (@want) or not: 0 or -ETIMEDOUT. */
int pt_path_wait(const char *path, bool want, unsigned int ms);
int pt_counts_read(__u64 counts[__PTASK_COUNT_MAX]);
int pt_executors_read(__u64 *val);
/* Waits until counter @which equals @want; 0, or -ETIMEDOUT. */
int pt_count_wait(enum ptask_count which, __u64 want, unsigned int ms);
int pt_executors_wait(__u64 want, unsigned int ms);
/*
 * Waits until every counter equals @want; 0, or the number of counters
 * that differ after @ms (printed to stderr with @who).
 */
int pt_counts_wait_all(const __u64 want[__PTASK_COUNT_MAX], unsigned int ms,
		       const char *who);
/*
 * Waits until the graph is quiescent: no live invocation for a few
 * consecutive reads (see pt_env's users); 0 or -ETIMEDOUT.
 */
int pt_wait_quiescent(__u64 base_invocations, unsigned int ms);

/* --- /proc --- */
/* The state letter of /proc/<pid>/task/<tid>/stat, or 0. */
char pt_task_state(pid_t pid, pid_t tid);
/* Waits until the task sleeps ('S' or 'D'); 0 or -ETIMEDOUT. */
int pt_wait_sleeping(pid_t pid, pid_t tid, unsigned int ms);
pid_t pt_gettid(void);

/*
 * --- generic netlink ---
 * Requests go through the common client (common/genl.h: pc_genl_call(),
 * pc_genl_get_info(), pc_genl_resolve()); dumps and events below read
 * raw NETLINK_GENERIC sockets, one datagram at a time.
 */

/* PTASK_CMD_EXEC_REGISTER of @exec_fd with one test accelerator. */
int pt_nl_register(int exec_fd);
/* @exec_fd < 0: no PTASK_A_EXEC_FD; @n_accels accelerator nests. */
int pt_nl_register_ex(int exec_fd, int n_accels);
/* The same as uid @uid's executor alone (PTASK_A_OBJ_OWNER_UID). */
int pt_nl_register_uid(int exec_fd, unsigned int uid);
int pt_nl_unregister(int exec_fd);

/* One PTASK_CMD_GET_OBJECT dump message. */
struct pt_nl_obj {
	__u32 type;
	__u32 handle;
	__u32 graph;
	__u32 state;
	__u32 owner_uid;
	__u32 owner_pid;
	char name[PTASK_NAME_MAX];
	__u32 attrs;		/* bit a set for each PTASK_A_* a present */
};

/* Every PTASK_A_OBJ_* attribute a dump message carries. */
#define PT_NL_OBJ_ATTRS	((1U << PTASK_A_OBJ_TYPE) |			\
			 (1U << PTASK_A_OBJ_HANDLE) |			\
			 (1U << PTASK_A_OBJ_GRAPH) |			\
			 (1U << PTASK_A_OBJ_NAME) |			\
			 (1U << PTASK_A_OBJ_STATE) |			\
			 (1U << PTASK_A_OBJ_OWNER_UID) |		\
			 (1U << PTASK_A_OBJ_OWNER_PID))

/*
 * A PTASK_CMD_GET_OBJECT dump over a raw NETLINK_GENERIC socket, read one
 * datagram at a time (so a test can act between two parts of a dump).
 */
struct pt_nl_dump {
	int sock;
	int family;
	__u32 seq;
	int datagrams;		/* datagrams read so far */
	bool done;
	int end_type;		/* NLMSG_DONE or NLMSG_ERROR, once done */
};

/* Opens a socket and sends the dump request; 0 or -errno. */
int pt_nl_dump_start(struct pt_nl_dump *d);
/*
 * Reads one datagram and appends its objects to @objs (room for @max;
 * *@n counts every object read, also those past @max).  Returns 1 when
 * more datagrams follow, 0 after NLMSG_DONE, or -errno: the error an
 * NLMSG_DONE or NLMSG_ERROR carried, -ETIMEDOUT (nothing within 5 s),
 * -EMSGSIZE (a truncated datagram), -EBADMSG (a malformed message).
 */
int pt_nl_dump_next(struct pt_nl_dump *d, struct pt_nl_obj *objs, int max,
		    int *n);
void pt_nl_dump_close(struct pt_nl_dump *d);
/*
 * A whole dump: 0 or -errno as above (-ENOSPC when more than @max objects
 * came; *@n still counts them all).  @datagrams may be NULL.
 */
int pt_nl_dump_objects(struct pt_nl_obj *objs, int max, int *n,
		       int *datagrams);

/* One message of the "events" multicast group. */
struct pt_nl_event {
	__u8 cmd;		/* genlmsghdr.cmd: PTASK_CMD_EVENT */
	__u32 event;		/* enum ptask_event */
	__u32 type;		/* enum ptask_object_type */
	__u32 handle;
	__u32 attrs;		/* bit a set for each PTASK_A_* a present */
};

/* A raw NETLINK_GENERIC socket that joined the "events" group. */
struct pt_nl_events {
	int sock;
	int family;
	int group;
	int len, off;		/* unread part of @buf */
	char buf[8192];
};

/* Resolves the family and the group, joins it: 0 or -errno. */
int pt_nl_events_open(struct pt_nl_events *ev);
/* The next event within @ms: 0, -ETIMEDOUT, -ENOBUFS (events lost), -errno. */
int pt_nl_events_next(struct pt_nl_events *ev, struct pt_nl_event *out,
		      unsigned int ms);
/*
 * Reads events until none comes for @quiet_ms: how many (stored up to
 * @max in @out), or -errno.
 */
int pt_nl_events_drain(struct pt_nl_events *ev, struct pt_nl_event *out,
		       int max, unsigned int quiet_ms);
void pt_nl_events_close(struct pt_nl_events *ev);

/* --- capabilities and identities (for forked children) --- */
int pt_drop_all_caps(void);
/* Keeps only the capabilities of @mask (bit n: capability n); 0 or -errno. */
int pt_keep_caps(__u64 mask);
/* setgroups/setgid/setuid to @uid; 0 or -errno. */
int pt_become(uid_t uid);

/* --- the copy executor --- */
/*
 * Completes @inv by copying its k-th input (INPUT or STICKY, in port
 * order) into a new datablock of the same size and records, emitted on its
 * k-th output port.  Extra outputs get a zeroed datablock of the port's
 * size (8 bytes if unknown).  With @status non-zero, completes with that
 * status and no outputs.  Returns 0 or -errno (of the failing call).
 */
int pt_exec_copy_one(int fd, const struct ptask_invocation *inv,
		     const struct ptask_invocation_port *ports, __s32 status,
		     int verbose);

/*
 * An in-process executor: a thread with its own registered /dev/ptask fd,
 * completing every invocation with pt_exec_copy_one().
 */
struct pt_executor {
	int fd;
	bool running;
	int stop;			/* atomic */
	pthread_t thread;
	__s32 status;			/* status to complete with (0: copy) */
	unsigned long taken;		/* atomic */
	unsigned long completed;	/* atomic */
	unsigned long canceled;		/* atomic: -ECANCELED completions */
	unsigned long errors;		/* atomic: anything else */
	int last_error;
	__u64 last_owner_pid;		/* owner_pid of the last invocation */
};

int pt_executor_start(struct pt_executor *ex);
void pt_executor_stop(struct pt_executor *ex);
unsigned long pt_executor_completed(struct pt_executor *ex);
/* Waits until @n invocations completed; 0 or -ETIMEDOUT. */
int pt_executor_wait(struct pt_executor *ex, unsigned long n,
		     unsigned int ms);

/* --- common graph shapes --- */
#define PT_COPY_MAX	8

struct pt_copy_spec {
	const char *name;	/* NULL or "": anonymous */
	__u32 mode;		/* for a named graph */
	__u32 kind;		/* PTASK_KIND_GPU or _CPU */
	int n;			/* inputs = outputs = n */
	__u32 in_cap;		/* 0: 4 */
	__u32 out_cap;		/* 0: 4 */
	__u32 sticky_mask;	/* input i is sticky if bit i */
	bool run;
};

/*
 * A "copy" graph: one ptask with inputs 0..n-1 (ports 0..n-1) and outputs
 * 0..n-1 (ports n..2n-1); graph input channel "in<i>" feeds input i, output
 * i feeds graph output channel "out<i>".  The ptask is named "copy".
 */
struct pt_copy_graph {
	__u32 graph;
	__u32 ptask;
	int n;
	__u32 in_port[PT_COPY_MAX];
	__u32 out_port[PT_COPY_MAX];
	__u32 in_chan[PT_COPY_MAX];
	__u32 out_chan[PT_COPY_MAX];
};

int pt_build_copy(int fd, const struct pt_copy_spec *spec,
		  struct pt_copy_graph *g);
/* One input, one output, GPU, capacities 4, anonymous. */
int pt_build_copy1(int fd, bool run, struct pt_copy_graph *g);

/*
 * A chain of @n one-in one-out ptasks: chan[0] is the graph input, chan[n]
 * the graph output, chan[i] joins ptask i-1 to ptask i.
 */
#define PT_CHAIN_MAX	8
struct pt_chain {
	__u32 graph;
	int n;
	__u32 ptask[PT_CHAIN_MAX];
	__u32 in_port[PT_CHAIN_MAX];
	__u32 out_port[PT_CHAIN_MAX];
	__u32 chan[PT_CHAIN_MAX + 1];
};

int pt_build_chain(int fd, const char *name, int n, __u32 kind, __u32 cap,
		   struct pt_chain *c);

/* --- per-test environment --- */
#define PT_ENV_FDS	16
#define PT_ENV_MAPS	64
#define PT_ENV_PIDS	8
#define PT_ENV_EXECS	2

struct pt_env {
	__u64 base[__PTASK_COUNT_MAX];
	__u64 base_executors;
	int fds[PT_ENV_FDS];
	int nfds;
	struct {
		void *addr;
		size_t len;
	} maps[PT_ENV_MAPS];
	int nmaps;
	pid_t pids[PT_ENV_PIDS];
	int npids;
	struct pt_executor execs[PT_ENV_EXECS];
	int nexecs;
};

/* -ENODEV when /dev/ptask or /sys/kernel/ptask is missing. */
int pt_env_init(struct pt_env *e);
/* Opens /dev/ptask (tracked): the fd or -errno. */
int pt_env_open(struct pt_env *e);
int pt_env_open_flags(struct pt_env *e, int flags);
void pt_env_close(struct pt_env *e, int fd);
/* Maps (tracked) MAP_SHARED read/write; NULL on failure (errno set). */
void *pt_env_map(struct pt_env *e, int fd, __u64 offset, size_t len);
void pt_env_unmap(struct pt_env *e, void *addr);
void pt_env_track_pid(struct pt_env *e, pid_t pid);
/* Reaps a tracked child; returns its wait status or -errno. */
int pt_env_wait_pid(struct pt_env *e, pid_t pid, unsigned int ms);
/* Starts an in-process executor (tracked); NULL on failure. */
struct pt_executor *pt_env_executor(struct pt_env *e);
/* The test executor's path (PTASK_TEST_EXECUTOR or /bin/test_executor). */
const char *pt_executor_path(void);
/*
 * Forks and execs the test executor with @argv_extra (NULL-terminated, may
 * be NULL) and waits until it registered: its pid, or -errno (-ENOENT: the
 * program does not exist).
 */
pid_t pt_env_spawn_executor(struct pt_env *e, const char *const *argv_extra);
/*
 * Stops executors, kills and reaps children, unmaps, closes; then waits
 * (up to 2 s) until every counter is back at its baseline.  Returns the
 * number of counters that are not (each printed to stderr).
 */
int pt_env_fini(struct pt_env *e);

/* A SKIP from a fixture setup: the 6.1 harness would run the test body. */
void pt_skip_exit(void) __attribute__((noreturn));

#define PT_ENV_SETUP(env) do {						\
	int __pt_r = pt_env_init(env);					\
	if (__pt_r == -ENODEV)						\
		SKIP(pt_skip_exit(), "ptask module not loaded (" PT_DEV_PATH \
		     " or " PTASK_SYSFS_DIR " missing)");		\
	ASSERT_EQ(0, __pt_r);						\
} while (0)

#define PT_NEED_ROOT() do {						\
	if (geteuid() != 0)						\
		SKIP(return, "needs root (CAP_SYS_ADMIN)");		\
} while (0)

/* Expected value first, then errno: ASSERT_PT(-EINVAL, pt_push(...)). */
#define ASSERT_PT(expected, call) ASSERT_EQ((int)(expected), (int)(call))
#define EXPECT_PT(expected, call) EXPECT_EQ((int)(expected), (int)(call))

/*
 * A thread that sends @sig to @target every @ms until pt_kick_join() (for
 * EINTR tests: install a handler with pt_sig_noop() first).
 */
struct pt_kicker {
	pthread_t thread;
	pthread_t target;
	int sig;
	unsigned int ms;
	int stop;	/* atomic */
};
int pt_kick_after(struct pt_kicker *k, pthread_t target, int sig,
		  unsigned int ms);
void pt_kick_join(struct pt_kicker *k);
/* Installs a no-op handler for @sig without SA_RESTART. */
int pt_sig_noop(int sig);

#endif /* PTASK_KSELFTEST_LIB_H */
