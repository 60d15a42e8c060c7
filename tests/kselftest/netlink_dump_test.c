// SPDX-License-Identifier: GPL-2.0
/*
 * netlink_dump_test - the parts of the "ptask" generic netlink family that
 * netlink_test leaves out: the PTASK_CMD_GET_OBJECT dump (every object
 * exactly once with its type, handle, graph, name, owner and state; dumps
 * spanning several datagrams; -EPERM without CAP_NET_ADMIN), the "events"
 * multicast group (CREATED, GRAPH_RUN, GRAPH_TERMINATED, GRAPH_FAILED,
 * DESTROYED, EXECUTOR_UP/DOWN, each with its object type and handle), and
 * GET_INFO's counts nest against sysfs while an invocation is taken and a
 * released datablock is still mapped.
 *
 * Dumps and events use raw NETLINK_GENERIC sockets (lib.c's pt_nl_dump_*
 * and pt_nl_events_*); only the family and group ids come from the common
 * netlink client (common/genl.h, on libnl).
 * Events are multicast from inside the ioctl or netlink call that causes
 * them, so once that call returned its events are in the socket: a short
 * quiet period is enough to say "nothing more came".  The event tests
 * count every event of the group, so they expect nothing else to use
 * ptask.ko meanwhile (the guest runs one program at a time).
 *
 * Children are forked without threads running and report through their
 * exit code (PT_CHILD_OK, or PT_CHILD_FAIL + step; steps skip the value of
 * PT_CHILD_SKIP).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/netlink.h>

#include "pt_harness.h"

/* The builder's identity in the dump tests: not root, not nobody. */
#define DUMP_UID	4242
#define DUMP_MAX	8192
#define EV_MAX		64
#define EV_QUIET_MS	200

/* A step's exit code that never reads as PT_CHILD_SKIP. */
#define CHILD_STEP(n)	(PT_CHILD_FAIL + 10 + (n))

static struct pt_nl_obj objs[DUMP_MAX];

FIXTURE(nldump) {
	struct pt_env env;
	int fd;
};

FIXTURE_SETUP(nldump)
{
	PT_ENV_SETUP(&self->env);
	self->fd = pt_env_open(&self->env);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(nldump)
{
	EXPECT_EQ(0, pt_env_fini(&self->env));
}

/* How many dumped objects have handle @h; *@found is the last of them. */
static int find_obj(const struct pt_nl_obj *o, int n, __u32 h,
		    const struct pt_nl_obj **found)
{
	int i, k = 0;

	*found = NULL;
	for (i = 0; i < n; i++) {
		if (o[i].handle == h) {
			k++;
			*found = &o[i];
		}
	}
	return k;
}

/* Dumped objects whose PTASK_A_OBJ_GRAPH is @graph. */
static int count_in_graph(const struct pt_nl_obj *o, int n, __u32 graph)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		k += o[i].graph == graph;
	return k;
}

/* Dumped objects of @type. */
static __u64 count_type(const struct pt_nl_obj *o, int n, __u32 type)
{
	int i;
	__u64 k = 0;

	for (i = 0; i < n; i++)
		k += o[i].type == type;
	return k;
}

/* 0 if the handles rise strictly from message to message, else the index. */
static int first_unordered(const struct pt_nl_obj *o, int n)
{
	int i;

	for (i = 1; i < n; i++)
		if (o[i].handle <= o[i - 1].handle)
			return i;
	return 0;
}

/*
 * The object with handle @h is listed exactly once, with all seven
 * attributes and these values.
 */
#define ASSERT_OBJ(o, n, h, _type, _graph, _name, _state, _uid, _pid) do { \
	const struct pt_nl_obj *__o;					\
	__u32 __h = (h);						\
	ASSERT_EQ(1, find_obj(o, n, __h, &__o))				\
		TH_LOG("handle %u listed %d times", __h,		\
		       find_obj(o, n, __h, &__o));			\
	ASSERT_EQ(PT_NL_OBJ_ATTRS, __o->attrs & PT_NL_OBJ_ATTRS)	\
		TH_LOG("handle %u: attributes %#x", __h, __o->attrs);	\
	ASSERT_EQ((__u32)(_type), __o->type) TH_LOG("handle %u", __h);	\
	ASSERT_EQ((__u32)(_graph), __o->graph) TH_LOG("handle %u", __h); \
	ASSERT_STREQ((_name), __o->name) TH_LOG("handle %u", __h);	\
	ASSERT_EQ((__u32)(_state), __o->state) TH_LOG("handle %u", __h); \
	ASSERT_EQ((__u32)(_uid), __o->owner_uid) TH_LOG("handle %u", __h); \
	ASSERT_EQ((__u32)(_pid), __o->owner_pid) TH_LOG("handle %u", __h); \
} while (0)

/*
 * The graph of the dump tests, built by a child running as DUMP_UID
 * through the test's own fd (same open file description: the objects
 * stay with the test's client when the child exits):
 *
 *	"in" (cap 4, tmpl) -> p0 (GPU) -> "mid" (cap 2) -> p1 (CPU) -> "out"
 *
 * p0's ports use template "tmpl" (64-byte array).  Datablock A is pushed
 * first and sits in p0.in, B is pushed next and stays queued on "in", C is
 * only held; the client holds all three.
 */
struct dump_graph {
	char name[PTASK_NAME_MAX];
	pid_t builder;
	__u32 graph, tmpl;
	__u32 ptask[2];
	__u32 port[4];		/* p0.in, p0.out, p1.in, p1.out */
	__u32 chan[3];		/* in, mid, out */
	__u32 db[3];		/* A, B, C */
};

static const char *const port_names[4] = { "p0.in", "p0.out", "p1.in",
					   "p1.out" };
static const char *const chan_names[3] = { "in", "mid", "out" };

/* 0, or the number of the step that failed. */
static int build_dump_graph(int fd, struct dump_graph *g)
{
	int step = 0;

#define STEP(call) do { step++; if (call) return step; } while (0)
	STEP(pt_graph_open(fd, g->name, PTASK_GRAPH_CREATE | PTASK_GRAPH_EXCL,
			   0600, &g->graph));
	STEP(pt_template_open(fd, g->graph, PTASK_TEMPLATE_ARRAY,
			      PTASK_BIND_GLOBAL, 1, 64, 1, 1, "tmpl",
			      &g->tmpl));
	STEP(pt_ptask_open_gpu(fd, g->graph, 2, "p0", &g->ptask[0]));
	STEP(pt_ptask_open_cpu(fd, g->graph, 2, "p1", &g->ptask[1]));
	STEP(pt_port_open(fd, g->ptask[0], PTASK_PORT_INPUT, 0, g->tmpl, 0, 0,
			  port_names[0], &g->port[0], NULL));
	STEP(pt_port_open(fd, g->ptask[0], PTASK_PORT_OUTPUT, 0, g->tmpl, 1, 0,
			  port_names[1], &g->port[1], NULL));
	STEP(pt_port_open(fd, g->ptask[1], PTASK_PORT_INPUT, 0, 0, 0, 0,
			  port_names[2], &g->port[2], NULL));
	STEP(pt_port_open(fd, g->ptask[1], PTASK_PORT_OUTPUT, 0, 0, 1, 0,
			  port_names[3], &g->port[3], NULL));
	STEP(pt_channel_open(fd, g->graph, 0, g->port[0], 4, g->tmpl,
			     chan_names[0], &g->chan[0]));
	STEP(pt_channel_open(fd, g->graph, g->port[1], g->port[2], 2, 0,
			     chan_names[1], &g->chan[1]));
	STEP(pt_channel_open(fd, g->graph, g->port[3], 0, 2, 0,
			     chan_names[2], &g->chan[2]));
	STEP(pt_db_make(fd, 64, 1, &g->db[0]));
	STEP(pt_db_make(fd, 64, 2, &g->db[1]));
	STEP(pt_db_make(fd, 64, 3, &g->db[2]));
	STEP(pt_push(fd, g->chan[0], g->db[0], 0, 0, 0));
	STEP(pt_push(fd, g->chan[0], g->db[1], 0, 0, 0));
#undef STEP
	return 0;
}

/*
 * Forks the builder: it becomes DUMP_UID and builds @g (shared memory)
 * through @fd.  Returns its pid (also in g->builder) or -errno.
 */
static pid_t fork_builder(int fd, struct dump_graph *g, const char *tag)
{
	pid_t pid;
	int r;

	memset(g, 0, sizeof(*g));
	pt_name(g->name, tag);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (pt_become(DUMP_UID))
			_exit(CHILD_STEP(0));
		r = build_dump_graph(fd, g);
		_exit(r ? CHILD_STEP(r) : PT_CHILD_OK);
	}
	g->builder = pid;
	return pid;
}

static struct dump_graph *shared_graph(void)
{
	void *p = mmap(NULL, sizeof(struct dump_graph), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Every object of dump_graph @g is listed exactly once, and nothing else
 * claims its graph: the graph in state @gs named @gname, ptask states
 * @s0 and @s1, channel fills @in, @mid and @out, datablock reference counts
 * @ra, @rb and @rc (0: that datablock is gone).
 */
#define ASSERT_DUMP_GRAPH(g, n, gs, gname, s0, s1, in, mid, out, ra, rb, rc) \
do {									\
	__u32 __fill[3] = { (in), (mid), (out) };			\
	__u32 __refs[3] = { (ra), (rb), (rc) };				\
	const struct pt_nl_obj *__x;					\
	int __i;							\
									\
	ASSERT_OBJ(objs, n, (g)->graph, PTASK_OBJ_GRAPH, (g)->graph,	\
		   gname, gs, DUMP_UID, 0);				\
	ASSERT_OBJ(objs, n, (g)->tmpl, PTASK_OBJ_TEMPLATE, (g)->graph,	\
		   "tmpl", 0, DUMP_UID, 0);				\
	ASSERT_OBJ(objs, n, (g)->ptask[0], PTASK_OBJ_PTASK, (g)->graph, \
		   "p0", s0, DUMP_UID, (g)->builder);			\
	ASSERT_OBJ(objs, n, (g)->ptask[1], PTASK_OBJ_PTASK, (g)->graph, \
		   "p1", s1, DUMP_UID, (g)->builder);			\
	for (__i = 0; __i < 4; __i++)					\
		ASSERT_OBJ(objs, n, (g)->port[__i], PTASK_OBJ_PORT,	\
			   (g)->graph, port_names[__i], 0, DUMP_UID, 0); \
	for (__i = 0; __i < 3; __i++)					\
		ASSERT_OBJ(objs, n, (g)->chan[__i], PTASK_OBJ_CHANNEL,	\
			   (g)->graph, chan_names[__i], __fill[__i],	\
			   DUMP_UID, 0);				\
	for (__i = 0; __i < 3; __i++) {					\
		if (!__refs[__i]) {					\
			ASSERT_EQ(0, find_obj(objs, n, (g)->db[__i], &__x)) \
				TH_LOG("datablock %d still listed", __i); \
			continue;					\
		}							\
		ASSERT_OBJ(objs, n, (g)->db[__i], PTASK_OBJ_DATABLOCK, 0, \
			   "", __refs[__i], 0, 0);			\
	}								\
	/* graph, template, 2 ptasks, 4 ports, 3 channels */		\
	ASSERT_EQ(11, count_in_graph(objs, n, (g)->graph));		\
	ASSERT_EQ(0, first_unordered(objs, n));				\
} while (0)

/* Builds the graph as DUMP_UID into @g (a test body's local pointer). */
#define BUILD_DUMP_GRAPH(g, tag) do {					\
	pid_t __pid;							\
	g = shared_graph();						\
	ASSERT_NE(NULL, g);						\
	__pid = fork_builder(self->fd, g, tag);				\
	ASSERT_LT(0, __pid);						\
	pt_env_track_pid(&self->env, __pid);				\
	PT_WAIT_CHILD(&self->env, __pid, PT_WAIT_MS);			\
} while (0)

/* ------------------------------------------------------------------ */
/* PTASK_CMD_GET_OBJECT                                                */
/* ------------------------------------------------------------------ */

/*
 * A graph being built: state BUILDING, ptasks Waiting, "in" holds B (A
 * went on into p0.in), A and B referenced by the client and by the port
 * or channel, C by the client only.  Owners are the builder (uid and, for
 * ptasks, pid), not the test process that holds the fd.
 */
TEST_F(nldump, building_graph_listed_once)
{
	struct dump_graph *g;
	int n;

	PT_NEED_ROOT();
	BUILD_DUMP_GRAPH(g, "dump.build");
	ASSERT_PT(0, pt_nl_dump_objects(objs, DUMP_MAX, &n, NULL));
	ASSERT_DUMP_GRAPH(g, n, PTASK_GRAPH_BUILDING, g->name,
			  PTASK_STATE_WAITING, PTASK_STATE_WAITING,
			  1, 0, 0, 2, 2, 1);
	munmap(g, sizeof(*g));
}

/*
 * After GRAPH_RUN: state RUNNING, p0 Queued (no executor takes it), p1
 * Waiting; releasing A leaves the port's reference only.
 */
TEST_F(nldump, running_graph_states)
{
	struct dump_graph *g;
	int n;

	PT_NEED_ROOT();
	BUILD_DUMP_GRAPH(g, "dump.run");
	ASSERT_PT(0, pt_db_release(self->fd, g->db[0]));
	ASSERT_PT(0, pt_graph_run(self->fd, g->graph));
	ASSERT_PT(0, pt_nl_dump_objects(objs, DUMP_MAX, &n, NULL));
	ASSERT_DUMP_GRAPH(g, n, PTASK_GRAPH_RUNNING, g->name,
			  PTASK_STATE_QUEUED, PTASK_STATE_WAITING,
			  1, 0, 0, 1, 2, 1);
	munmap(g, sizeof(*g));
}

/*
 * An executor takes p0: Executing; A moved into the invocation (still one
 * reference), B refilled p0.in from "in".  Completing it with a new
 * datablock D: D goes down "mid" into p1.in (p1 Queued) and p0, fed by B,
 * is Queued again.
 */
TEST_F(nldump, ptask_states_follow_invocations)
{
	struct ptask_invocation inv;
	struct ptask_invocation_port ports[2];
	struct ptask_exec_output out;
	const struct pt_nl_obj *o;
	struct dump_graph *g;
	__u32 n_inv = 0, d;
	int n, xfd;

	PT_NEED_ROOT();
	BUILD_DUMP_GRAPH(g, "dump.exec");
	ASSERT_PT(0, pt_db_release(self->fd, g->db[0]));
	xfd = pt_env_open(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(0, pt_nl_register(xfd));
	ASSERT_PT(0, pt_graph_run(self->fd, g->graph));
	ASSERT_PT(0, pt_exec_take(xfd, PTASK_NONBLOCK, 0, &inv, 1, ports, 2,
				  &n_inv, NULL));
	ASSERT_EQ(1U, n_inv);
	ASSERT_EQ(g->ptask[0], inv.ptask);
	ASSERT_PT(0, pt_nl_dump_objects(objs, DUMP_MAX, &n, NULL));
	ASSERT_DUMP_GRAPH(g, n, PTASK_GRAPH_RUNNING, g->name,
			  PTASK_STATE_EXECUTING, PTASK_STATE_WAITING,
			  0, 0, 0, 1, 2, 1);

	ASSERT_PT(0, pt_db_make(xfd, 64, 9, &d));
	out.index = 1;
	out.datablock = d;
	ASSERT_PT(0, pt_exec_complete(xfd, inv.id, 0, 0, &out, 1));
	ASSERT_PT(0, pt_nl_dump_objects(objs, DUMP_MAX, &n, NULL));
	ASSERT_DUMP_GRAPH(g, n, PTASK_GRAPH_RUNNING, g->name,
			  PTASK_STATE_QUEUED, PTASK_STATE_QUEUED,
			  0, 0, 0, 0, 2, 1);
	/* D: its one reference is p1.in's. */
	ASSERT_OBJ(objs, n, d, PTASK_OBJ_DATABLOCK, 0, "", 1, 0, 0);
	/* A was freed at completion: the invocation held its last reference. */
	ASSERT_EQ(0, find_obj(objs, n, g->db[0], &o));
	munmap(g, sizeof(*g));
}

/*
 * GRAPH_TERMINATE: state TERMINATED, the name freed, ptasks Waiting,
 * channels flushed, the port's and channel's references dropped (the
 * client's stay).
 */
TEST_F(nldump, terminated_graph_states)
{
	struct dump_graph *g;
	int n;

	PT_NEED_ROOT();
	BUILD_DUMP_GRAPH(g, "dump.term");
	ASSERT_PT(0, pt_graph_run(self->fd, g->graph));
	ASSERT_PT(0, pt_graph_terminate(self->fd, g->graph));
	ASSERT_PT(0, pt_nl_dump_objects(objs, DUMP_MAX, &n, NULL));
	ASSERT_DUMP_GRAPH(g, n, PTASK_GRAPH_TERMINATED, "",
			  PTASK_STATE_WAITING, PTASK_STATE_WAITING,
			  0, 0, 0, 1, 1, 1);
	munmap(g, sizeof(*g));
}

/* Closing the graph removes all eleven of its objects from the dump. */
TEST_F(nldump, closed_graph_gone)
{
	struct dump_graph *g;
	int n;

	PT_NEED_ROOT();
	BUILD_DUMP_GRAPH(g, "dump.close");
	ASSERT_PT(0, pt_graph_close(self->fd, g->graph));
	ASSERT_PT(0, pt_nl_dump_objects(objs, DUMP_MAX, &n, NULL));
	ASSERT_EQ(0, count_in_graph(objs, n, g->graph));
	/* The client still holds A, B and C; nothing else does. */
	ASSERT_OBJ(objs, n, g->db[0], PTASK_OBJ_DATABLOCK, 0, "", 1, 0, 0);
	ASSERT_OBJ(objs, n, g->db[1], PTASK_OBJ_DATABLOCK, 0, "", 1, 0, 0);
	ASSERT_OBJ(objs, n, g->db[2], PTASK_OBJ_DATABLOCK, 0, "", 1, 0, 0);
	munmap(g, sizeof(*g));
}

/*
 * The dump's counts per type are sysfs's counts: every live template,
 * ptask, port, channel and datablock of the namespace is in the dump.
 */
TEST_F(nldump, counts_per_type_match_sysfs)
{
	static const struct {
		__u32 type;
		enum ptask_count count;
	} map[] = {
		{ PTASK_OBJ_GRAPH, PTASK_COUNT_GRAPHS },
		{ PTASK_OBJ_TEMPLATE, PTASK_COUNT_TEMPLATES },
		{ PTASK_OBJ_PTASK, PTASK_COUNT_PTASKS },
		{ PTASK_OBJ_PORT, PTASK_COUNT_PORTS },
		{ PTASK_OBJ_CHANNEL, PTASK_COUNT_CHANNELS },
		{ PTASK_OBJ_DATABLOCK, PTASK_COUNT_DATABLOCKS },
	};
	__u64 c[__PTASK_COUNT_MAX];
	struct dump_graph *g;
	unsigned int i;
	int n;

	PT_NEED_ROOT();
	BUILD_DUMP_GRAPH(g, "dump.counts");
	ASSERT_PT(0, pt_nl_dump_objects(objs, DUMP_MAX, &n, NULL));
	ASSERT_PT(0, pt_counts_read(c));
	for (i = 0; i < ARRAY_SIZE(map); i++)
		ASSERT_EQ(c[map[i].count], count_type(objs, n, map[i].type))
			TH_LOG("%s", pt_count_names[map[i].count]);
	/* Nothing of another type. */
	for (i = 0; i < (unsigned int)n; i++)
		ASSERT_TRUE(objs[i].type >= PTASK_OBJ_GRAPH &&
			    objs[i].type <= PTASK_OBJ_DATABLOCK);
	munmap(g, sizeof(*g));
}

#define MANY	300

/* Creates @n 1-byte datablocks held by @fd; 0 or -errno. */
static int make_many(int fd, __u32 *h, int n)
{
	int i, r;

	for (i = 0; i < n; i++) {
		r = pt_db_create(fd, 1, 0, 0, &h[i], NULL, NULL);
		if (r)
			return r;
	}
	return 0;
}

/*
 * 300 datablocks are more than the first datagram of a dump holds (the
 * kernel fills one NLMSG_GOODSIZE skb before the first recvmsg): the dump
 * resumes from its cursor and still lists each exactly once, in rising
 * handle order.
 */
TEST_F(nldump, dump_spans_datagrams)
{
	const struct pt_nl_obj *o;
	struct pt_nl_dump d;
	__u32 h[MANY];
	int i, n = 0, r, before, with_objects = 0;

	PT_NEED_ROOT();
	ASSERT_PT(0, make_many(self->fd, h, MANY));
	ASSERT_PT(0, pt_nl_dump_start(&d));
	do {
		before = n;
		r = pt_nl_dump_next(&d, objs, DUMP_MAX, &n);
		with_objects += n > before;
	} while (r == 1);
	pt_nl_dump_close(&d);
	ASSERT_PT(0, r);
	ASSERT_LE(n, DUMP_MAX);
	TH_LOG("%d objects in %d datagrams (%d with objects)", n, d.datagrams,
	       with_objects);
	ASSERT_LE(MANY, n);
	ASSERT_LE(2, with_objects);
	ASSERT_EQ(0, first_unordered(objs, n));
	for (i = 0; i < MANY; i++) {
		ASSERT_EQ(1, find_obj(objs, n, h[i], &o)) TH_LOG("#%d", i);
		ASSERT_EQ((__u32)PTASK_OBJ_DATABLOCK, o->type);
		ASSERT_EQ(PT_NL_OBJ_ATTRS, o->attrs & PT_NL_OBJ_ATTRS);
		ASSERT_EQ(0U, o->graph);
		ASSERT_EQ(1U, o->state);
		ASSERT_STREQ("", o->name);
	}
}

/*
 * Objects change between two datagrams of one dump: half of the first 300
 * datablocks are released and 700 more created (usually growing the
 * handle table).  Every datablock that lived throughout is listed exactly
 * once, a released one at most once, and handles still rise.
 */
TEST_F(nldump, resumed_dump_survives_changes)
{
	static __u32 h[MANY], more[700];
	const struct pt_nl_obj *o;
	struct pt_nl_dump d;
	int i, n = 0, r, first;

	PT_NEED_ROOT();
	ASSERT_PT(0, make_many(self->fd, h, MANY));
	ASSERT_PT(0, pt_nl_dump_start(&d));
	ASSERT_EQ(1, pt_nl_dump_next(&d, objs, DUMP_MAX, &n));
	first = n;
	ASSERT_LT(0, first);
	for (i = 1; i < MANY; i += 2)
		ASSERT_PT(0, pt_db_release(self->fd, h[i]));
	ASSERT_PT(0, make_many(self->fd, more, 700));
	do
		r = pt_nl_dump_next(&d, objs, DUMP_MAX, &n);
	while (r == 1);
	pt_nl_dump_close(&d);
	ASSERT_PT(0, r);
	ASSERT_LE(n, DUMP_MAX);
	TH_LOG("%d objects, %d in the first datagram, %d datagrams", n, first,
	       d.datagrams);
	ASSERT_LT(1, d.datagrams);
	ASSERT_EQ(0, first_unordered(objs, n));
	for (i = 0; i < MANY; i++) {
		int k = find_obj(objs, n, h[i], &o);

		if (i % 2 == 0) {
			ASSERT_EQ(1, k) TH_LOG("survivor #%d", i);
		} else {
			ASSERT_GE(1, k) TH_LOG("released #%d", i);
		}
	}
	for (i = 0; i < 700; i++)
		ASSERT_GE(1, find_obj(objs, n, more[i], &o))
			TH_LOG("new #%d", i);
}

/*
 * Without CAP_NET_ADMIN (GENL_ADMIN_PERM) the dump never starts: the
 * request's ack is an NLMSG_ERROR carrying -EPERM, and nothing is listed:
 * as another user, and as root with every capability dropped.  (A refusal
 * from inside the dump would come as the payload of an NLMSG_DONE, which
 * libnl and most clients take for a normal end.)
 */
static void child_dump_eperm(bool become_nobody)
{
	struct pt_nl_dump d;
	int n = 0, r;

	if (become_nobody ? pt_become(PT_NOBODY) : pt_drop_all_caps())
		_exit(CHILD_STEP(0));
	r = pt_nl_dump_start(&d);
	if (r)
		_exit(CHILD_STEP(1));
	do
		r = pt_nl_dump_next(&d, objs, DUMP_MAX, &n);
	while (r == 1);
	pt_nl_dump_close(&d);
	if (r != -EPERM)
		_exit(CHILD_STEP(2));
	if (d.end_type != NLMSG_ERROR)
		_exit(CHILD_STEP(3));
	_exit(n == 0 ? PT_CHILD_OK : CHILD_STEP(4));
}

TEST_F(nldump, dump_as_other_user_eperm)
{
	__u32 db;
	pid_t pid;

	PT_NEED_ROOT();
	/* Something to list. */
	ASSERT_PT(0, pt_db_create(self->fd, 1, 0, 0, &db, NULL, NULL));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		child_dump_eperm(true);
	pt_env_track_pid(&self->env, pid);
	PT_WAIT_CHILD(&self->env, pid, PT_WAIT_MS);
}

TEST_F(nldump, dump_without_caps_eperm)
{
	__u32 db;
	pid_t pid;

	PT_NEED_ROOT();
	ASSERT_PT(0, pt_db_create(self->fd, 1, 0, 0, &db, NULL, NULL));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		child_dump_eperm(false);
	pt_env_track_pid(&self->env, pid);
	PT_WAIT_CHILD(&self->env, pid, PT_WAIT_MS);
}

/* ------------------------------------------------------------------ */
/* the "events" multicast group                                        */
/* ------------------------------------------------------------------ */

#define EV_ATTRS	((1U << PTASK_A_EVENT) | (1U << PTASK_A_OBJ_TYPE) | \
			 (1U << PTASK_A_OBJ_HANDLE))

/* One PTASK_CMD_EVENT with all three attributes and these values. */
#define ASSERT_EVENT(e, _event, _type, _handle) do {			\
	ASSERT_EQ((__u8)PTASK_CMD_EVENT, (e).cmd);			\
	ASSERT_EQ(EV_ATTRS, (e).attrs & EV_ATTRS)			\
		TH_LOG("attributes %#x", (e).attrs);			\
	ASSERT_EQ((__u32)(_event), (e).event);				\
	ASSERT_EQ((__u32)(_type), (e).type);				\
	ASSERT_EQ((__u32)(_handle), (e).handle);			\
} while (0)

/* Drains @ev into the test's @evs, logging what came; the count. */
/*
 * The graph and executor events, in order: the CREATED and DESTROYED of
 * ptasks and of processes' GPU accounting come in between and are
 * dropped here (events_ptask_and_process checks them).
 */
static int drain_graph_events(struct pt_nl_events *ev, struct pt_nl_event *evs)
{
	int n = pt_nl_events_drain(ev, evs, EV_MAX, EV_QUIET_MS), i, kept = 0;

	for (i = 0; i < n && i < EV_MAX; i++)
		if (evs[i].type != PTASK_OBJ_PTASK &&
		    evs[i].type != PTASK_OBJ_PROCESS)
			evs[kept++] = evs[i];
	return n < 0 ? n : kept;
}

#define DRAIN(ev, evs) ({						\
	int __n = drain_graph_events(ev, evs);				\
	for (int __i = 0; __i < __n && __i < EV_MAX; __i++)		\
		TH_LOG("event %u type %u handle %u", (evs)[__i].event,	\
		       (evs)[__i].type, (evs)[__i].handle);		\
	__n;								\
})

/*
 * A named graph's life: CREATED at GRAPH_OPEN, GRAPH_RUN, then
 * GRAPH_TERMINATED; its templates, ptasks, ports, channels and datablocks
 * send nothing; closing one of two clients sends nothing; DESTROYED when
 * the last one closes its fd.
 */
TEST_F(nldump, events_graph_lifecycle)
{
	struct pt_nl_event evs[EV_MAX];
	struct pt_nl_events ev;
	struct pt_copy_spec spec = {
		.kind = PTASK_KIND_GPU, .n = 1, .mode = 0600,
	};
	struct pt_copy_graph g;
	char name[PTASK_NAME_MAX];
	int fd2, fd3, n;
	__u32 again, db;

	ASSERT_PT(0, pt_nl_events_open(&ev));
	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	fd3 = pt_env_open(&self->env);
	ASSERT_LE(0, fd3);
	spec.name = pt_name(name, "events");
	ASSERT_PT(0, pt_build_copy(fd2, &spec, &g));
	ASSERT_PT(0, pt_template_open(fd2, g.graph, PTASK_TEMPLATE_OPAQUE,
				      PTASK_BIND_GLOBAL, 1, 64, 1, 1, "t",
				      NULL));
	ASSERT_PT(0, pt_db_make(fd2, 64, 1, &db));
	ASSERT_PT(0, pt_push(fd2, g.in_chan[0], db, 0, 0, 0));
	ASSERT_PT(0, pt_graph_open(fd3, name, 0, 0, &again));
	ASSERT_EQ(g.graph, again);
	ASSERT_PT(0, pt_graph_run(fd2, g.graph));
	ASSERT_PT(0, pt_graph_terminate(fd2, g.graph));
	pt_env_close(&self->env, fd2);

	n = DRAIN(&ev, evs);
	ASSERT_EQ(3, n);
	ASSERT_EVENT(evs[0], PTASK_EVENT_CREATED, PTASK_OBJ_GRAPH, g.graph);
	ASSERT_EVENT(evs[1], PTASK_EVENT_GRAPH_RUN, PTASK_OBJ_GRAPH, g.graph);
	ASSERT_EVENT(evs[2], PTASK_EVENT_GRAPH_TERMINATED, PTASK_OBJ_GRAPH,
		     g.graph);

	pt_env_close(&self->env, fd3);
	n = DRAIN(&ev, evs);
	ASSERT_EQ(1, n);
	ASSERT_EVENT(evs[0], PTASK_EVENT_DESTROYED, PTASK_OBJ_GRAPH, g.graph);
	pt_nl_events_close(&ev);
}

/*
 * A graph freed while building (its only client closes its fd) is
 * terminated on the way: GRAPH_TERMINATED comes before DESTROYED.
 * Assumption: uapi/ptask.h does not say this; Documentation/uapi.md (8.3)
 * describes the code.
 */
TEST_F(nldump, events_unterminated_graph_freed)
{
	struct pt_nl_event evs[EV_MAX];
	struct pt_nl_events ev;
	__u32 graph;
	int fd2, n;

	ASSERT_PT(0, pt_nl_events_open(&ev));
	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	ASSERT_PT(0, pt_graph_open(fd2, "", PTASK_GRAPH_CREATE, 0600, &graph));
	pt_env_close(&self->env, fd2);
	n = DRAIN(&ev, evs);
	ASSERT_EQ(3, n);
	ASSERT_EVENT(evs[0], PTASK_EVENT_CREATED, PTASK_OBJ_GRAPH, graph);
	ASSERT_EVENT(evs[1], PTASK_EVENT_GRAPH_TERMINATED, PTASK_OBJ_GRAPH,
		     graph);
	ASSERT_EVENT(evs[2], PTASK_EVENT_DESTROYED, PTASK_OBJ_GRAPH, graph);
	pt_nl_events_close(&ev);
}

/* GRAPH_CLOSE by the last client frees the graph: DESTROYED, fd open. */
TEST_F(nldump, events_graph_close_destroys)
{
	struct pt_nl_event evs[EV_MAX];
	struct pt_nl_events ev;
	__u32 graph;
	int n;

	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600,
				   &graph));
	ASSERT_PT(0, pt_graph_terminate(self->fd, graph));
	ASSERT_PT(0, pt_nl_events_open(&ev));
	ASSERT_PT(0, pt_graph_close(self->fd, graph));
	n = DRAIN(&ev, evs);
	ASSERT_EQ(1, n);
	ASSERT_EVENT(evs[0], PTASK_EVENT_DESTROYED, PTASK_OBJ_GRAPH, graph);
	pt_nl_events_close(&ev);
}

/*
 * EXECUTOR_UP on register, none for a refused second register,
 * EXECUTOR_DOWN on unregister and on the close of a registered fd; all
 * with object type PTASK_OBJ_NONE and handle 0.
 */
TEST_F(nldump, events_executor_up_down)
{
	struct pt_nl_event evs[EV_MAX];
	struct pt_nl_events ev;
	int xfd, n;

	PT_NEED_ROOT();
	xfd = pt_env_open(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(0, pt_nl_events_open(&ev));
	ASSERT_PT(0, pt_nl_register(xfd));
	ASSERT_PT(-EALREADY, pt_nl_register(xfd));
	n = DRAIN(&ev, evs);
	ASSERT_EQ(1, n);
	ASSERT_EVENT(evs[0], PTASK_EVENT_EXECUTOR_UP, PTASK_OBJ_NONE, 0);

	ASSERT_PT(0, pt_nl_unregister(xfd));
	ASSERT_PT(-ENOENT, pt_nl_unregister(xfd));
	n = DRAIN(&ev, evs);
	ASSERT_EQ(1, n);
	ASSERT_EVENT(evs[0], PTASK_EVENT_EXECUTOR_DOWN, PTASK_OBJ_NONE, 0);

	ASSERT_PT(0, pt_nl_register(xfd));
	pt_env_close(&self->env, xfd);
	n = DRAIN(&ev, evs);
	ASSERT_EQ(2, n);
	ASSERT_EVENT(evs[0], PTASK_EVENT_EXECUTOR_UP, PTASK_OBJ_NONE, 0);
	ASSERT_EVENT(evs[1], PTASK_EVENT_EXECUTOR_DOWN, PTASK_OBJ_NONE, 0);
	pt_nl_events_close(&ev);
}

/* An invocation completed with a negative status: GRAPH_FAILED. */
TEST_F(nldump, events_graph_failed)
{
	struct ptask_invocation inv;
	struct ptask_invocation_port ports[2];
	struct pt_nl_event evs[EV_MAX];
	struct pt_nl_events ev;
	struct pt_copy_graph g;
	__u32 n_inv = 0;
	int xfd, n;

	PT_NEED_ROOT();
	xfd = pt_env_open(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(0, pt_nl_register(xfd));
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0, 0, 0));
	ASSERT_PT(0, pt_exec_take(xfd, PTASK_NONBLOCK, 0, &inv, 1, ports, 2,
				  &n_inv, NULL));
	ASSERT_EQ(1U, n_inv);
	ASSERT_PT(0, pt_nl_events_open(&ev));
	ASSERT_PT(0, pt_exec_complete(xfd, inv.id, -EIO, 0, NULL, 0));
	n = DRAIN(&ev, evs);
	ASSERT_EQ(1, n);
	ASSERT_EVENT(evs[0], PTASK_EVENT_GRAPH_FAILED, PTASK_OBJ_GRAPH,
		     g.graph);
	/* A failed graph is stopped: terminating it is -EIO, no event. */
	ASSERT_PT(-EIO, pt_graph_terminate(self->fd, g.graph));
	ASSERT_EQ(0, DRAIN(&ev, evs));
	pt_nl_events_close(&ev);
}

/*
 * An executor that goes away holding an invocation fails its graph:
 * GRAPH_FAILED, then EXECUTOR_DOWN.
 */
TEST_F(nldump, events_executor_lost_fails_graph)
{
	struct ptask_invocation inv;
	struct ptask_invocation_port ports[2];
	struct pt_nl_event evs[EV_MAX];
	struct pt_nl_events ev;
	struct pt_copy_graph g;
	__u32 n_inv = 0;
	int xfd, n;

	PT_NEED_ROOT();
	xfd = pt_env_open(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(0, pt_nl_register(xfd));
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0, 0, 0));
	ASSERT_PT(0, pt_exec_take(xfd, PTASK_NONBLOCK, 0, &inv, 1, ports, 2,
				  &n_inv, NULL));
	ASSERT_EQ(1U, n_inv);
	ASSERT_PT(0, pt_nl_events_open(&ev));
	ASSERT_PT(0, pt_nl_unregister(xfd));
	n = DRAIN(&ev, evs);
	ASSERT_EQ(2, n);
	ASSERT_EVENT(evs[0], PTASK_EVENT_GRAPH_FAILED, PTASK_OBJ_GRAPH,
		     g.graph);
	ASSERT_EVENT(evs[1], PTASK_EVENT_EXECUTOR_DOWN, PTASK_OBJ_NONE, 0);
	pt_nl_events_close(&ev);
}

/*
 * The group needs CAP_SYS_ADMIN: a listener running as nobody cannot
 * join it (it saw the CREATED of root's private graphs: issue 13, the
 * outside attack).  As root the same listener sees them.
 */
TEST_F(nldump, events_refuse_unprivileged_listener)
{
	struct pt_nl_events ev;
	pid_t pid;

	PT_NEED_ROOT();
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int r;

		if (pt_become(PT_NOBODY))
			_exit(CHILD_STEP(0));
		r = pt_nl_events_open(&ev);
		if (!r)
			pt_nl_events_close(&ev);
		_exit(r == -EPERM ? PT_CHILD_OK : CHILD_STEP(1));
	}
	pt_env_track_pid(&self->env, pid);
	PT_WAIT_CHILD(&self->env, pid, PT_WAIT_MS);
}

/* A root listener sees the CREATED of a graph another process makes. */
TEST_F(nldump, events_reach_root_listener)
{
	int ready[2], go[2];
	__u32 graph;
	pid_t pid;
	char c;

	PT_NEED_ROOT();
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct pt_nl_events ev;
		struct pt_nl_event e;
		__u32 want;

		close(ready[0]);
		close(go[1]);
		if (pt_nl_events_open(&ev))
			_exit(CHILD_STEP(1));
		if (write(ready[1], "r", 1) != 1)
			_exit(CHILD_STEP(2));
		if (read(go[0], &want, sizeof(want)) != sizeof(want))
			_exit(CHILD_STEP(3));
		do {
			if (pt_nl_events_next(&ev, &e, PT_WAIT_MS))
				_exit(CHILD_STEP(4));
		} while (e.event != PTASK_EVENT_CREATED || e.handle != want);
		_exit(e.type == PTASK_OBJ_GRAPH ? PT_CHILD_OK : CHILD_STEP(5));
	}
	pt_env_track_pid(&self->env, pid);
	close(ready[1]);
	close(go[0]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	ASSERT_PT(0, pt_graph_open(self->fd, "", PTASK_GRAPH_CREATE, 0600,
				   &graph));
	ASSERT_EQ((ssize_t)sizeof(graph), write(go[1], &graph, sizeof(graph)));
	close(ready[0]);
	close(go[1]);
	PT_WAIT_CHILD(&self->env, pid, PT_WAIT_MS);
}

/* ------------------------------------------------------------------ */
/* PTASK_CMD_GET_INFO                                                  */
/* ------------------------------------------------------------------ */

/*
 * GET_INFO's counts nest against sysfs in the two categories
 * netlink_test's check leaves at their baseline: an invocation taken and
 * not completed (invocations + 1), and a released datablock whose mapping
 * keeps its buffer (buffers count one more than datablocks did).
 */
TEST_F(nldump, get_info_counts_mid_invocation)
{
	struct ptask_invocation inv;
	struct ptask_invocation_port ports[2];
	const __u64 *base = self->env.base;
	__u64 c[__PTASK_COUNT_MAX], off;
	struct pc_genl_info info;
	struct pt_copy_graph g;
	__u32 n_inv = 0, db;
	int xfd, i;
	void *p;

	PT_NEED_ROOT();
	xfd = pt_env_open(&self->env);
	ASSERT_LE(0, xfd);
	ASSERT_PT(0, pt_nl_register(xfd));
	ASSERT_PT(0, pt_build_copy1(self->fd, true, &g));
	ASSERT_PT(0, pt_push_seed(self->fd, g.in_chan[0], 64, 1, 0, 0, 0));
	ASSERT_PT(0, pt_exec_take(xfd, PTASK_NONBLOCK, 0, &inv, 1, ports, 2,
				  &n_inv, NULL));
	ASSERT_EQ(1U, n_inv);
	ASSERT_PT(0, pt_db_create(self->fd, 4096, 0, 0, &db, &off, NULL));
	p = pt_env_map(&self->env, self->fd, off, 4096);
	ASSERT_NE(NULL, p);
	ASSERT_PT(0, pt_db_release(self->fd, db));

	ASSERT_PT(0, pc_genl_get_info(&info));
	ASSERT_PT(0, pt_counts_read(c));
	ASSERT_TRUE(info.has_counts);
	for (i = 0; i < __PTASK_COUNT_MAX; i++) {
		TH_LOG("count %s: netlink %llu sysfs %llu base %llu",
		       pt_count_names[i], (unsigned long long)info.counts[i],
		       (unsigned long long)c[i], (unsigned long long)base[i]);
		ASSERT_TRUE(info.has_count[i]);
		ASSERT_EQ(c[i], info.counts[i]);
	}
	ASSERT_EQ(base[PTASK_COUNT_INVOCATIONS] + 1,
		  info.counts[PTASK_COUNT_INVOCATIONS]);
	ASSERT_EQ(base[PTASK_COUNT_BUFFERS] - base[PTASK_COUNT_DATABLOCKS] + 1 +
		  info.counts[PTASK_COUNT_DATABLOCKS],
		  info.counts[PTASK_COUNT_BUFFERS]);
	ASSERT_EQ(self->env.base_executors + 1, (__u64)info.executors);
}

/*
 * A ptask's CREATED and DESTROYED, and its process's GPU accounting
 * (PTASK_OBJ_PROCESS, handle = pid) appearing with its first ptask and
 * going with its last.
 */
TEST_F(nldump, events_ptask_and_process)
{
	struct pt_nl_event evs[EV_MAX];
	struct pt_nl_events ev;
	struct pt_copy_graph g;
	int fd2, n, i, created = 0, destroyed = 0, proc_up = 0, proc_down = 0;

	ASSERT_PT(0, pt_nl_events_open(&ev));
	fd2 = pt_env_open(&self->env);
	ASSERT_LE(0, fd2);
	ASSERT_PT(0, pt_build_copy1(fd2, false, &g));
	pt_env_close(&self->env, fd2);
	n = pt_nl_events_drain(&ev, evs, EV_MAX, EV_QUIET_MS);
	ASSERT_LT(0, n);
	for (i = 0; i < n && i < EV_MAX; i++) {
		TH_LOG("event %u type %u handle %u", evs[i].event, evs[i].type,
		       evs[i].handle);
		if (evs[i].type == PTASK_OBJ_PTASK && evs[i].handle == g.ptask) {
			created += evs[i].event == PTASK_EVENT_CREATED;
			destroyed += evs[i].event == PTASK_EVENT_DESTROYED;
		}
		if (evs[i].type == PTASK_OBJ_PROCESS &&
		    evs[i].handle == (__u32)getpid()) {
			proc_up += evs[i].event == PTASK_EVENT_CREATED;
			proc_down += evs[i].event == PTASK_EVENT_DESTROYED;
		}
	}
	EXPECT_EQ(1, created);
	EXPECT_EQ(1, destroyed);
	EXPECT_EQ(1, proc_up);
	EXPECT_EQ(1, proc_down);
	pt_nl_events_close(&ev);
}

TEST_HARNESS_MAIN
