/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ptask_core.h - the object model shared by ptask.ko and ptaskd.
 *
 * DOC: Overview
 *
 * One namespace (struct ptask_ns) holds every graph, template, ptask, port,
 * channel, datablock and queued invocation, each named by a u32 handle.
 * Clients (one per /dev/ptask fd, or per ptaskd connection) open graphs
 * and hold datablocks.  The state machine is PTask's: a ptask is Waiting
 * until every input port is Occupied, then Queued on the namespace's ready
 * list; an executor takes it (Executing: the inputs move into a struct
 * ptask_invocation and the input ports refill from their channels),
 * completes it (Completed: the outputs sit in the output ports) and the
 * outputs move on to every downstream channel once all of them have room;
 * when every output port is Unoccupied the ptask is Waiting again.
 *
 * Locking: one lock per namespace, owned by the shell (a mutex in the
 * kernel, a pthread mutex in ptaskd), protects every field of every object
 * below.  Every function named *_locked, and every function taking a
 * struct ptask_ns or an object, must be called with it held; they assert
 * it with ptask_os_assert_locked().  The core never sleeps and never
 * touches user memory: blocking calls return -EAGAIN and the shell sleeps
 * on the client until client->wake_seq changes.
 *
 * Lifetimes: a graph lives while a client has it open (graph->opens); its
 * templates, ptasks, ports and channels die with it.  Datablocks are
 * counted (db->refs): one per client hold, per channel slot, per port
 * occupant and per invocation input.  Invocations live on the ready list
 * (as their Queued ptask) or on the taking executor's list until
 * completed or until that executor goes away.
 */
#ifndef PTASK_CORE_H
#define PTASK_CORE_H

#include "ptask_os.h"
#include "list.h"

struct ptask_graph;
struct ptask_ptask;
struct ptask_port;
struct ptask_channel;
struct ptask_template;
struct ptask_datablock;
struct ptask_invocation_rec;
struct ptask_tunnel;

/**
 * struct ptask_obj - header of every object that has a handle
 * @handle: namespace-unique, never 0
 * @type: enum ptask_object_type
 * @hnext: next in the handle hash chain
 * @ns_node: in ns->objects, which is kept in handle order for listings
 */
struct ptask_obj {
	u32 handle;
	u32 type;
	struct ptask_obj *hnext;
	struct ptask_list ns_node;
};

/**
 * struct ptask_caller - who makes a call (filled by the shell per call)
 * @uid: effective uid
 * @gid: effective gid
 * @pid: the process, as a key unique on the host while it lives: the
 *	shell's choice, never a pid of the caller's own pid namespace
 *	(ptask.ko: the tgid in the initial pid namespace; ptaskd: the
 *	SO_PEERCRED pid, in ptaskd's namespace; 0 when not visible).  PTSched
 *	keys a process's record by it and the admin interfaces show it
 * @nice: the caller's nice value
 * @dac_override: may open any graph (CAP_DAC_OVERRIDE)
 * @sys_nice: may raise proxy priorities (CAP_SYS_NICE)
 * @in_group: is @gid one of the caller's groups (effective or
 *	supplementary)?  NULL: only @gid counts
 */
struct ptask_caller {
	u32 uid;
	u32 gid;
	s32 pid;
	s32 nice;
	bool dac_override;
	bool sys_nice;
	bool (*in_group)(const struct ptask_caller *who, u32 gid);
};

/**
 * struct ptask_proc - a process's GPU accounting (PTSched)
 * @node: in ns->sched.procs
 * @pid: the process, as struct ptask_caller's @pid (its key)
 * @uid: its uid when the record was made
 * @nice: its nice value as of its last call that created a ptask
 * @weight_override: 0, or the administrator's weight
 * @refs: its ptasks and its invocations not yet freed
 * @ptasks: its live ptasks
 * @running: its invocations taken and not completed
 * @queued: its GPU ptasks on the ready list (as of the last update)
 * @active: in P, the processes using a GPU (as of the last update)
 * @held: budget negative with work queued (as of the last update)
 * @budget_ns: B_p
 * @bmax_ns: B_max,p (as of the last update)
 * @gpu_ns: GPU time of all its invocations
 * @avg_ns: running average of one invocation's GPU time (0: none yet)
 * @invocations: GPU invocations completed
 * @held_ns: time spent held, up to @held_since_ns
 * @held_since_ns: when it was last held
 * @last_active_ns: when it last had GPU work queued, taken or completed
 *
 * Lives while a ptask or an invocation of it does: a process that exits
 * closes its graphs, and with them its accounting.
 */
struct ptask_proc {
	struct ptask_list node;
	s32 pid;
	u32 uid;
	s32 nice;
	u32 weight_override;
	u32 refs;
	u32 ptasks;
	u32 running;
	u32 queued;
	bool active;
	bool held;
	s64 budget_ns;
	s64 bmax_ns;
	u64 gpu_ns;
	u64 avg_ns;
	u64 invocations;
	u64 held_ns;
	u64 held_since_ns;
	u64 last_active_ns;
};

/**
 * struct ptask_sched - PTSched's state in a namespace
 * @params: the settings (the out fields as of the last update)
 * @procs: every struct ptask_proc, in pid order
 * @nprocs: entries in @procs
 * @last_refill_ns: the start of the current period
 * @timer_ns: when the shell's timer was last asked to fire (0: not armed)
 */
struct ptask_sched {
	struct ptask_sched_params params;
	struct ptask_list procs;
	u32 nprocs;
	u64 last_refill_ns;
	u64 timer_ns;
};

/**
 * struct ptask_tunnel_ns - tunnels' state in a namespace (tunnel.c)
 * @default_bytes: threshold for a tunnel whose own is 0 (0: the uapi's)
 * @default_timeout_ns: timeout likewise
 * @timer_ns: when the shell's tunnel timer was last asked to fire (0: not)
 */
struct ptask_tunnel_ns {
	u64 default_bytes;
	u64 default_timeout_ns;
	u64 timer_ns;
};

/**
 * struct ptask_ns - one namespace of objects
 * @htab: handle hash buckets (@hmask + 1 of them)
 * @hmask: bucket count - 1 (a power of two minus one)
 * @hcount: objects in @htab
 * @objects: every object in handle order (struct ptask_obj.ns_node)
 * @next_handle: next handle to try
 * @next_invocation: next invocation id
 * @graphs: every graph (struct ptask_graph.ns_node)
 * @clients: every client (struct ptask_client.ns_node)
 * @ready: Queued ptasks in FIFO order (struct ptask_ptask.ready_node)
 * @executors: registered executor clients
 * @counts: live objects per enum ptask_count (the shell keeps BUFFERS)
 * @sched: PTSched: budgets and per-process accounting
 * @next_client_id: the id the next client gets (fdinfo's drm-client-id)
 * @tunnel: record-stream tunnels' defaults and timer (tunnel.c)
 * @os: the shell's data
 */
struct ptask_ns {
	struct ptask_obj **htab;
	u32 hmask;
	u32 hcount;
	struct ptask_list objects;
	u32 next_handle;
	u64 next_invocation;
	struct ptask_list graphs;
	struct ptask_list clients;
	struct ptask_list ready;
	u32 executors;
	u64 counts[__PTASK_COUNT_MAX];
	struct ptask_sched sched;
	u64 next_client_id;
	struct ptask_tunnel_ns tunnel;
	struct ptask_list uid_usage;	/* struct ptask_uid_usage, uid order */
	u64 uid_limit_bytes;		/* 0: none (uid_usage.c) */
	u64 uid_refusals;		/* charges refused with -EDQUOT */
	u32 forgotten_queues;		/* executors with one (forgotten.c) */
	struct ptask_list forgotten_clients;	/* those, by forgotten_node */
	u32 uid_executors;		/* executors for one uid each */
	u32 pid_executors;		/* of those, for one process each */
	void *os;
};

/**
 * struct ptask_uid_usage - datablock memory charged to one uid
 *	(uid_usage.c)
 * @node: in ns->uid_usage, in uid order
 * @uid: the uid
 * @bytes: what its live datablocks are charged
 * @peak_bytes: the most @bytes was since the record was made
 * @datablocks: how many are charged (the record goes at 0)
 * @refusals: charges refused for the limit
 */
struct ptask_uid_usage {
	struct ptask_list node;
	u32 uid;
	u64 bytes;
	u64 peak_bytes;
	u64 datablocks;
	u64 refusals;
};

/**
 * struct ptask_uid_usage_info - what ptask_core_uid_usage() reports
 * @uid: the uid
 * @bytes: charged to its live datablocks
 * @datablocks: how many
 * @refusals: charges refused for the limit while it had a record
 * @limit_bytes: its limit (0: none; always 0 for uid 0)
 */
struct ptask_uid_usage_info {
	u32 uid;
	u64 bytes;
	u64 datablocks;
	u64 refusals;
	u64 limit_bytes;
};

/* A charge's unit: datablock memory is allocated in pages. */
#define PTASK_UID_CHARGE_UNIT	4096U

/**
 * struct ptask_client - one open /dev/ptask (or one ptaskd connection)
 * @ns: its namespace
 * @ns_node: in ns->clients
 * @opens: graphs it opened (struct ptask_open.client_node)
 * @holds: datablocks it holds (struct ptask_hold.node)
 * @taken: invocations it took (struct ptask_invocation_rec.node)
 * @self_ptasks: the PTASK_PTASK_SELF ptasks it created
 *	(struct ptask_ptask.self_node)
 * @self_ready: those of them Queued, FIFO (struct ptask_ptask.ready_node)
 * @executor: registered as an executor
 * @n_accels: devices in its inventory
 * @wake_seq: bumped whenever something it may wait or poll for changes
 * @waits_settle: its last pull that would block found its datablock
 *	completed ahead, the kernel writing it in flight (the shell may
 *	poll for it rather than sleep; the caller clears it)
 * @pull_ahead_of: set by the shell around a pull: the id of an
 *	invocation completed ahead whose fence the shell is about to see;
 *	a datablock it writes is pulled before its settle (0: never)
 * @pulled_ahead: that pull took such a datablock: the shell answers it
 *	only once that fence passed (the caller clears it)
 * @id: unique in the namespace, never reused (fdinfo's drm-client-id)
 * @created: the ptasks it created (struct ptask_ptask.creator_node)
 * @gpu_ns: GPU time of the invocations of ptasks it created
 * @invocations: those invocations
 * @uid: whose datablocks it makes (uid_usage.c); the shell sets it right
 *	after ptask_core_client_create(), before the client's first call
 * @exec_uid_only: an executor for one uid: it takes only invocations of
 *	ptasks @exec_uid owns (ptask_core_exec_set_uid())
 * @exec_uid: that uid
 * @exec_pid_only: ... and of one process's alone: those whose owner_pid
 *	is @exec_pid (ptask_core_exec_set_process())
 * @exec_pid: that process (the shell's pid key)
 * @forgotten: an executor's death-notice ring (forgotten.c), or NULL
 * @forgotten_head: its oldest entry
 * @forgotten_count: entries in it
 * @forgotten_lost: notices dropped since the last EXEC_FORGOTTEN
 * @os: the shell's data (its wait queue)
 */
struct ptask_client {
	struct ptask_ns *ns;
	struct ptask_list ns_node;
	struct ptask_list opens;
	struct ptask_list holds;
	struct ptask_list taken;
	struct ptask_list self_ptasks;
	struct ptask_list self_ready;
	bool executor;
	bool waits_settle;
	bool pulled_ahead;
	u64 pull_ahead_of;
	u32 n_accels;
	u64 wake_seq;
	u64 id;
	struct ptask_list created;
	u64 gpu_ns;
	u64 invocations;
	u32 uid;
	bool exec_uid_only;
	u32 exec_uid;
	bool exec_pid_only;
	s32 exec_pid;
	u32 *forgotten;
	struct ptask_list forgotten_node;	/* in ns->forgotten_clients */
	u32 forgotten_head;
	u32 forgotten_count;
	u32 forgotten_lost;
	void *os;
};

/**
 * struct ptask_open - a client's open of a graph
 * @graph: the graph
 * @client: the client
 * @graph_node: in graph->openers
 * @client_node: in client->opens
 */
struct ptask_open {
	struct ptask_graph *graph;
	struct ptask_client *client;
	struct ptask_list graph_node;
	struct ptask_list client_node;
};

/**
 * struct ptask_hold - references a client holds on one datablock
 * @db: the datablock
 * @client: the client
 * @count: references (each is one db->refs)
 * @node: in client->holds
 * @db_node: in db->holds, so finding a client's hold costs the number of
 *	clients holding that datablock, not the number it holds
 */
struct ptask_hold {
	struct ptask_datablock *db;
	struct ptask_client *client;
	u32 count;
	struct ptask_list node;
	struct ptask_list db_node;
};

struct ptask_graph {
	struct ptask_obj obj;
	struct ptask_ns *ns;
	struct ptask_list ns_node;
	char name[PTASK_NAME_MAX];	/* "" once terminated or anonymous */
	u32 uid, gid, mode;
	u32 state;			/* enum ptask_graph_state */
	u32 opens;			/* entries in @openers */
	struct ptask_list openers;	/* struct ptask_open.graph_node */
	struct ptask_list templates;	/* struct ptask_template.node */
	struct ptask_list ptasks;	/* struct ptask_ptask.node */
	struct ptask_list channels;	/* struct ptask_channel.node */
};

/**
 * struct ptask_geom - geometry a datablock must fit
 * @kind: enum ptask_template_kind
 * @stride: bytes per element or record
 * @dims: x, y, z
 */
struct ptask_geom {
	u32 kind;
	u32 stride;
	u32 dims[3];
};

struct ptask_template {
	struct ptask_obj obj;
	struct ptask_graph *graph;
	struct ptask_list node;
	struct ptask_geom geom;
	u32 binding;
	char name[PTASK_NAME_MAX];
};

struct ptask_ptask {
	struct ptask_obj obj;
	struct ptask_graph *graph;
	struct ptask_list node;		/* in graph->ptasks */
	struct ptask_list ready_node;	/* in a ready list while Queued */
	struct ptask_client *self;	/* PTASK_PTASK_SELF: its runner */
	struct ptask_list self_node;	/* in self->self_ptasks */
	u32 kind;			/* enum ptask_ptask_kind */
	u32 state;			/* enum ptask_ptask_state */
	u32 nports;
	u32 nopened;
	struct ptask_port *ports[PTASK_MAX_PORTS];
	u8 *code;
	u32 code_len;
	char entry[PTASK_NAME_MAX];
	char name[PTASK_NAME_MAX];
	u32 static_prio;
	s32 proxy_nice;
	s32 owner_pid;
	u32 owner_uid;
	u32 shared_bytes;
	u32 grid[3];
	u32 block[3];
	u64 queued_ns;
	u64 gpu_ns;			/* accelerator time of all invocations */
	u64 invocations;		/* completed invocations */
	u64 failures;			/* invocations completed failed */
	s32 last_error;			/* the last failure's status */
	u32 error_code;			/* ... and the accelerator's code */
	struct ptask_invocation_rec *running;	/* while Executing */
	struct ptask_invocation_rec *redo;	/* requeued: runs next */
	u64 requeued;			/* invocations requeued (REQUEUE) */
	struct ptask_list ahead;	/* completed ahead, not settled */
	struct ptask_proc *proc;	/* the owner's accounting (a ref) */
	struct ptask_client *creator;	/* NULL once that client closed */
	struct ptask_list creator_node;	/* in creator->created */
	u32 last_accel;			/* accelerator index + 1, 0: none */
	/*
	 * An executor read its info (EXEC_PTASK_INFO) and caches it, with
	 * a kernel loaded per context: its death is noticed (forgotten.c).
	 */
	bool executor_seen;
};

struct ptask_port {
	struct ptask_obj obj;
	struct ptask_ptask *ptask;
	u32 kind;			/* enum ptask_port_kind */
	u32 flags;			/* PTASK_PORT_* */
	u32 index;
	u32 param_index;
	struct ptask_port *inout_peer;
	struct ptask_template *tmpl;	/* NULL: any */
	struct ptask_datablock *occupant; /* NULL: Unoccupied */
	struct ptask_channel *in;	/* input/sticky: its channel */
	struct ptask_list outs;		/* output: struct ptask_channel.src_node */
	char name[PTASK_NAME_MAX];
};

struct ptask_channel {
	struct ptask_obj obj;
	struct ptask_graph *graph;
	struct ptask_list node;		/* in graph->channels */
	struct ptask_list src_node;	/* in src->outs */
	struct ptask_port *src;		/* NULL: graph input */
	struct ptask_port *dst;		/* NULL: graph output */
	struct ptask_template *tmpl;	/* NULL: any */
	u32 capacity;
	u32 head;
	u32 count;
	struct ptask_datablock **slots;	/* ring of @capacity */
	char name[PTASK_NAME_MAX];
	struct ptask_tunnel *tunnel;	/* PTASK_CHANNEL_TUNNEL: tunnel.c */
};

/*
 * Where a datablock's count stops (ptask_datablock_get): as refcount_t's
 * REFCOUNT_SATURATED, a quarter of the range below the top, so that no
 * sequence of gets and puts walks it back to 0.
 */
#define PTASK_REFS_SATURATED		0xc0000000U

struct ptask_datablock {
	struct ptask_obj obj;
	u32 refs;
	struct ptask_list holds;	/* struct ptask_hold.db_node */
	bool has_geom;
	struct ptask_geom geom;
	u64 bytes;
	u64 records;
	u32 generation;			/* bumped by create and every push */
	u32 charged_uid;		/* who pays for it (uid_usage.c) */
	u64 charged;			/* and how much */
	bool executor_seen;		/* its death is noticed (forgotten.c) */
	/*
	 * The id of the executor client that may hold its only current copy
	 * (an output it completed, an input it wrote in place: the host
	 * pages may be stale), 0 if none; a push by a client clears it.
	 * Where that executor goes, the graphs still holding it fail
	 * (invocation.c, ptask_exec_lost()).
	 */
	u64 device_of;
	struct ptask_buf *buf;
	/*
	 * Completed ahead into a graph output, or made by a take ahead: the
	 * invocation whose settle makes its bytes valid (pulls wait until
	 * then; takers see PTASK_INVP_PENDING), in its @written.
	 */
	struct ptask_invocation_rec *writer;
	struct ptask_list writer_node;
	/*
	 * A pull may be waiting for @writer's settle (the datablock went
	 * into a graph output): the settle wakes the graph's clients.  A
	 * chain's hop, which only takers read, wakes nobody.
	 */
	bool writer_pulled;
};

/**
 * struct ptask_invocation_rec - an invocation an executor took
 * @id: its id
 * @ptask: the ptask; NULL once its graph went away
 * @executor: the client that took it
 * @node: in executor->taken
 * @self: taken with PTASK_TAKE_SELF (the ptask's creator runs it)
 * @nports: entries in @inputs
 * @proc: the owner's accounting, charged at completion (a ref)
 * @inputs: per port index: the input datablock, or (PTASK_TAKE_AHEAD) the
 *	output datablock the core made; one reference each (the executor may
 *	map them), or NULL
 * @ahead: completed ahead (PTASK_EXEC_COMPLETE_AHEAD): its outputs moved
 *	on, its ptask may run again; it waits for the settle that brings
 *	its status and device time, and counts as running until then
 * @ahead_node: in @ptask's ahead list while @ahead (until orphaned)
 * @written: the datablocks it completed ahead into graph outputs, whose
 *	pulls wait for its settle (struct ptask_datablock.writer_node)
 */
struct ptask_invocation_rec {
	u64 id;
	struct ptask_ptask *ptask;
	struct ptask_client *executor;
	struct ptask_list node;
	bool self;
	bool ahead;
	struct ptask_list ahead_node;
	struct ptask_list written;
	struct ptask_proc *proc;
	/*
	 * A segment (PTASK_TAKE_FUSE): its last ptask, whose outputs the
	 * completion names, and how many ptasks it runs (@ptask first); the
	 * ones between are found again by ptask_fuse_link().  NULL and 1
	 * for a plain invocation.
	 */
	struct ptask_ptask *tail;
	u32 members;
	/* the datablocks of the later members' sticky ports (a reference each) */
	struct ptask_datablock **sticky;
	u32 nsticky;
	u32 nports;
	struct ptask_datablock *inputs[PTASK_MAX_PORTS];
};

/*
 * A datablock's mmap offset is its handle times PTASK_MMAP_UNIT: aligned
 * to every page size Linux uses, and 2^32 handles fit in 48 bits.
 */
#define PTASK_MMAP_SHIFT		16
#define PTASK_MMAP_UNIT			BIT_ULL(PTASK_MMAP_SHIFT)

/**
 * struct ptask_call_io - the parts of a call that are not in its struct
 * @code: ptask_open: the code bytes, already copied in by the shell
 * @outputs: exec_complete: the outputs array, already copied in
 * @invocations: exec_take: where the core writes invocations
 * @ports: exec_take: where the core writes port records
 * @code_out: exec_ptask_info: where the core copies the code
 * @code_out_len: bytes at @code_out
 */
struct ptask_call_io {
	const u8 *code;
	const struct ptask_exec_output *outputs;
	struct ptask_invocation *invocations;
	struct ptask_invocation_port *ports;
	u8 *code_out;
	u32 code_out_len;
	u32 *forgotten;		/* EXEC_FORGOTTEN's handles */
};

/**
 * struct ptask_obj_info - an object as listings show it
 * @type: enum ptask_object_type
 * @handle: its handle
 * @graph: its graph's handle (0 for a datablock)
 * @state: enum ptask_graph_state or ptask_ptask_state, datablock refs,
 *	channel fill; 0 otherwise
 * @owner_uid: the graph's owner (ptask: its creator)
 * @owner_pid: a ptask's creator
 * @name: its name ("" if none)
 * @kind: a ptask's enum ptask_ptask_kind
 * @prio: a ptask's static priority
 * @proxy_nice: a ptask's proxy priority
 * @accel: the accelerator a ptask last ran on (index + 1; 0: none yet)
 * @gpu_ns: a ptask's GPU time
 * @invocations: a ptask's completed invocations
 * @failures: of a ptask's invocations, those that failed
 * @last_error: the last failure's status (a negative errno; 0: none)
 * @error_code: its accelerator's code (struct ptask_exec_complete)
 */
struct ptask_obj_info {
	u32 type;
	u32 handle;
	u32 graph;
	u32 state;
	u32 owner_uid;
	s32 owner_pid;
	const char *name;
	u32 kind;
	u32 prio;
	s32 proxy_nice;
	u32 accel;
	u64 gpu_ns;
	u64 invocations;
	u64 failures;
	s32 last_error;
	u32 error_code;
};

/* forgotten.c */
int ptask_core_exec_forgotten_enable(struct ptask_client *c);
void ptask_forgotten_free(struct ptask_client *c);
void ptask_forgotten_note(struct ptask_ns *ns, u32 handle);
int ptask_core_exec_forgotten(struct ptask_client *c,
			      struct ptask_exec_forgotten *arg,
			      const struct ptask_call_io *io);

/* uid_usage.c */
u64 ptask_uid_charge_bytes(u64 bytes);
int ptask_uid_charge(struct ptask_ns *ns, u32 uid, u64 bytes);
void ptask_uid_uncharge(struct ptask_ns *ns, u32 uid, u64 bytes);
void ptask_core_uid_usage(struct ptask_ns *ns, u32 uid,
			  struct ptask_uid_usage_info *out);
bool ptask_core_uid_next(struct ptask_ns *ns, s64 after,
			 struct ptask_uid_usage_info *out);
void ptask_core_uid_limit_set(struct ptask_ns *ns, u64 bytes);

/* ns.c */
int ptask_core_ns_init(struct ptask_ns *ns, void *os);
void ptask_core_ns_destroy(struct ptask_ns *ns);
int ptask_ns_add(struct ptask_ns *ns, struct ptask_obj *obj, u32 type);
void ptask_ns_remove(struct ptask_ns *ns, struct ptask_obj *obj);
struct ptask_obj *ptask_core_ns_find(struct ptask_ns *ns, u32 handle, u32 type);
struct ptask_obj *ptask_core_ns_next(struct ptask_ns *ns, u64 *cursor);
u64 ptask_ns_invocation_id(struct ptask_ns *ns);

/* ptask_core_client_poll() bits; shells map them to EPOLLIN, EPOLLOUT, EPOLLERR */
#define PTASK_POLL_IN	BIT(0)
#define PTASK_POLL_OUT	BIT(1)
#define PTASK_POLL_ERR	BIT(2)
#define PTASK_POLL_PRI	BIT(3)	/* an executor's death notices wait */

/* client.c */
struct ptask_client *ptask_core_client_create(struct ptask_ns *ns, void *os);
void ptask_core_client_destroy(struct ptask_client *c);
void ptask_client_wake(struct ptask_client *c);
int ptask_client_hold(struct ptask_client *c, struct ptask_datablock *db);
struct ptask_hold *ptask_client_find_hold(struct ptask_client *c,
					  struct ptask_datablock *db);
void ptask_client_unhold(struct ptask_client *c, struct ptask_hold *h);
bool ptask_client_has_open(struct ptask_client *c, struct ptask_graph *g);
u32 ptask_core_client_poll(struct ptask_client *c);

/**
 * struct ptask_client_usage - what one client used, for fdinfo
 * @id: the client's id
 * @gpu_ns: GPU time of the invocations of the ptasks it created
 * @invocations: those invocations
 * @held_bytes: bytes of the datablocks it holds
 * @ptasks: ptasks it created that are alive
 */
struct ptask_client_usage {
	u64 id;
	u64 gpu_ns;
	u64 invocations;
	u64 held_bytes;
	u32 ptasks;
};

void ptask_core_client_usage(struct ptask_client *c, struct ptask_client_usage *u);

/* graph.c */
int ptask_core_graph_open(struct ptask_client *c, const struct ptask_caller *who,
			  struct ptask_graph_open *arg);
int ptask_core_graph_run(struct ptask_client *c, struct ptask_graph_ctl *arg);
int ptask_core_graph_terminate(struct ptask_client *c, struct ptask_graph_ctl *arg);
void ptask_graph_stop(struct ptask_graph *g, u32 state);
void ptask_core_graph_close(struct ptask_open *o);
int ptask_core_graph_close_handle(struct ptask_client *c, struct ptask_graph_ctl *arg);
void ptask_graph_free(struct ptask_graph *g);
void ptask_graph_wake(struct ptask_graph *g);
int ptask_core_graph_lookup(struct ptask_client *c, struct ptask_lookup *arg);
int ptask_graph_usable(struct ptask_client *c, struct ptask_graph *g);
struct ptask_obj *ptask_obj_get(struct ptask_client *c, u32 handle, u32 type,
				int *err);
void ptask_core_obj_describe(struct ptask_obj *o, struct ptask_obj_info *info);
struct ptask_graph *ptask_graph_get(struct ptask_client *c, u32 handle,
				    int *err);

/* template.c */
int ptask_core_template_open(struct ptask_client *c, struct ptask_template_open *arg);
void ptask_template_free(struct ptask_template *t);
bool ptask_geom_equal(const struct ptask_geom *a, const struct ptask_geom *b);
u64 ptask_geom_bytes(const struct ptask_geom *g);
bool ptask_datablock_records_ok(const struct ptask_datablock *db,
				u64 records);
bool ptask_datablock_fits(const struct ptask_datablock *db,
			  const struct ptask_template *t);

/* ptask.c */
int ptask_core_ptask_open(struct ptask_client *c, const struct ptask_caller *who,
			  struct ptask_ptask_open *arg, const u8 *code);
int ptask_core_ptask_set_priority(struct ptask_client *c,
				  const struct ptask_caller *who,
				  struct ptask_priority *arg);
int ptask_core_ptask_set_geometry(struct ptask_client *c, struct ptask_geometry *arg);
void ptask_ptask_try_queue(struct ptask_ptask *p);
bool ptask_ptask_inputs_ready(const struct ptask_ptask *p);
void ptask_ptask_try_finish(struct ptask_ptask *p);
void ptask_ptask_free(struct ptask_ptask *p);

/* port.c */
int ptask_core_port_open(struct ptask_client *c, struct ptask_port_open *arg);
void ptask_port_refill(struct ptask_port *port);
void ptask_port_drain(struct ptask_port *port);
bool ptask_port_accepts(const struct ptask_port *port,
			const struct ptask_datablock *db);
void ptask_port_free(struct ptask_port *port);

/* channel.c */
int ptask_core_channel_open(struct ptask_client *c, struct ptask_channel_open *arg);
int ptask_core_channel_push(struct ptask_client *c, struct ptask_push *arg);
int ptask_core_channel_pull(struct ptask_client *c, struct ptask_pull *arg);
bool ptask_channel_full(const struct ptask_channel *ch);
void ptask_channel_put(struct ptask_channel *ch, struct ptask_datablock *db);
struct ptask_datablock *ptask_channel_take(struct ptask_channel *ch);
void ptask_channel_room(struct ptask_channel *ch);
void ptask_channel_flush(struct ptask_channel *ch);
void ptask_channel_free(struct ptask_channel *ch);

/* tunnel.c: record-stream tunnels (PTASK_CHANNEL_TUNNEL) */
int ptask_tunnel_attach(struct ptask_channel *ch,
			const struct ptask_channel_open *arg);
int ptask_core_tunnel_set(struct ptask_client *c,
			  const struct ptask_channel_open *arg);
int ptask_tunnel_push(struct ptask_client *c, struct ptask_channel *ch,
		      struct ptask_datablock *db, u64 records);
int ptask_tunnel_pull(struct ptask_client *c, struct ptask_channel *ch,
		      struct ptask_pull *arg);
bool ptask_tunnel_full(const struct ptask_channel *ch);
bool ptask_tunnel_put(struct ptask_channel *ch, struct ptask_datablock *db);
void ptask_tunnel_flush(struct ptask_channel *ch);
void ptask_tunnel_close(struct ptask_channel *ch);
void ptask_tunnel_client_gone(struct ptask_client *c, struct ptask_graph *g);
void ptask_core_tunnel_tick(struct ptask_ns *ns);
void ptask_core_tunnel_calibrate(struct ptask_ns *ns, u64 copy_knee_bytes,
				 u64 copy_fixed_ns);

/* datablock.c */
int ptask_core_datablock_create(struct ptask_client *c,
				struct ptask_datablock_create *arg);
int ptask_core_datablock_release(struct ptask_client *c,
				 struct ptask_datablock_release *arg);
int ptask_invocation_output_of(struct ptask_client *c, u64 id,
			       struct ptask_ptask **p);
int ptask_datablock_alloc(struct ptask_client *c, u64 bytes,
			  struct ptask_datablock **out);
int ptask_datablock_alloc_output(struct ptask_client *c,
				 const struct ptask_ptask *p, u64 bytes,
				 struct ptask_datablock **out);
int ptask_datablock_alloc_in(struct ptask_client *c,
			     const struct ptask_ptask *p,
			     const struct ptask_graph *g, u64 bytes,
			     struct ptask_datablock **out);
void ptask_datablock_get(struct ptask_datablock *db);
void ptask_datablock_put(struct ptask_ns *ns, struct ptask_datablock *db);
u64 ptask_datablock_mmap_offset(const struct ptask_datablock *db);
u32 ptask_core_datablock_mmap_handle(u64 offset);
int ptask_core_datablock_map(struct ptask_client *c, u32 handle, u64 *bytes,
			     struct ptask_buf **buf);

/* invocation.c */
void ptask_core_exec_wake(struct ptask_ns *ns);
void ptask_exec_fail_taken(struct ptask_client *c, bool self_too);
int ptask_core_exec_register(struct ptask_client *c, u32 n_accels);
int ptask_core_exec_unregister(struct ptask_client *c);
int ptask_core_exec_set_uid(struct ptask_client *c, u32 uid);
int ptask_core_exec_set_process(struct ptask_client *c, u32 uid, s32 pid);
int ptask_core_exec_take(struct ptask_client *c, struct ptask_exec_take *arg,
			 const struct ptask_call_io *io);
int ptask_core_exec_complete(struct ptask_client *c,
			     struct ptask_exec_complete *arg,
			     const struct ptask_call_io *io);
int ptask_core_exec_ptask_info(struct ptask_client *c,
			       struct ptask_exec_ptask_info *arg,
			       const struct ptask_call_io *io);
void ptask_redo_free(struct ptask_ptask *p);
void ptask_invocation_orphan(struct ptask_ptask *p);
struct ptask_ptask *ptask_fuse_link(const struct ptask_ptask *p);
void ptask_invocation_orphan_ahead(struct ptask_ptask *p);

/* budget.c: PTSched, per-process GPU budgets */
u32 ptask_nice_weight(s32 nice);
void ptask_sched_init(struct ptask_ns *ns);
void ptask_sched_destroy(struct ptask_ns *ns);
struct ptask_proc *ptask_proc_get(struct ptask_ns *ns,
				  const struct ptask_caller *who);
void ptask_proc_put(struct ptask_ns *ns, struct ptask_proc *proc);
struct ptask_proc *ptask_core_proc_find(struct ptask_ns *ns, s32 pid);
struct ptask_proc *ptask_core_proc_next(struct ptask_ns *ns, s32 after_pid);
void ptask_core_proc_describe(const struct ptask_proc *proc,
			      struct ptask_proc_info *info);
int ptask_core_proc_set_weight(struct ptask_ns *ns, s32 pid, u32 weight);
bool ptask_sched_eligible(const struct ptask_ns *ns,
			  const struct ptask_ptask *p);
bool ptask_sched_any_eligible(struct ptask_ns *ns);
void ptask_core_sched_update(struct ptask_ns *ns);
void ptask_sched_taken(struct ptask_ns *ns, struct ptask_invocation_rec *inv);
void ptask_sched_untake(struct ptask_ns *ns,
			struct ptask_invocation_rec *inv);
void ptask_sched_charge(struct ptask_ns *ns, struct ptask_invocation_rec *inv,
			u64 gpu_ns);
void ptask_core_sched_tick(struct ptask_ns *ns);
void ptask_core_sched_get(struct ptask_ns *ns, struct ptask_sched_params *out);
int ptask_core_sched_set(struct ptask_ns *ns, u32 mask,
			 const struct ptask_sched_params *in);
int ptask_core_ptask_admin_priority(struct ptask_ns *ns, u32 handle, u32 prio);

/* args.c: the ioctl argument table and the checks done before any lookup */
struct ptask_arg_desc {
	unsigned int cmd;
	u32 ksize;
	u32 ver0;
	bool copy_out;
};

const struct ptask_arg_desc *ptask_core_args_desc(unsigned int cmd);
int ptask_core_args_check(unsigned int cmd, const void *arg);
bool ptask_core_args_blocking(unsigned int cmd, const void *arg, u64 *deadline);
int ptask_core_call(struct ptask_client *c, const struct ptask_caller *who,
		    unsigned int cmd, void *arg, const struct ptask_call_io *io);

/* Longest ioctl argument struct, for shells' stack buffers. */
union ptask_args {
	struct ptask_graph_open graph_open;
	struct ptask_template_open template_open;
	struct ptask_ptask_open ptask_open;
	struct ptask_port_open port_open;
	struct ptask_channel_open channel_open;
	struct ptask_lookup lookup;
	struct ptask_datablock_create db_create;
	struct ptask_datablock_release db_release;
	struct ptask_push push;
	struct ptask_pull pull;
	struct ptask_graph_ctl graph_ctl;
	struct ptask_priority priority;
	struct ptask_geometry geometry;
	struct ptask_exec_take take;
	struct ptask_exec_complete complete;
	struct ptask_exec_ptask_info info;
	struct ptask_exec_forgotten forgotten;
};

static inline void ptask_count_inc(struct ptask_ns *ns, unsigned int which)
{
	ns->counts[which]++;
}

static inline void ptask_count_dec(struct ptask_ns *ns, unsigned int which)
{
	PTASK_WARN_ON(ns->counts[which] == 0);
	ns->counts[which]--;
}

#endif /* PTASK_CORE_H */
