// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * args_fuzz.c - libFuzzer target for the core's call path.
 *
 * One input is a sequence of calls made the way a shell makes them:
 * ptask_core_args_desc(), ptask_core_args_check(), then ptask_core_call() on a fresh
 * namespace with two clients (client 1 a registered executor).  Each call
 * record is
 *
 *	u8 op		which call (see do_record())
 *	u8 mode		bit 0: client 1; bit 1: make names valid; bit 2: keep
 *			big sizes; bits 3-4: the caller; bit 5: CAP_SYS_NICE;
 *			bit 6: leave handles unfolded; bit 7: other size bits
 *	struct bytes	the argument (zero-filled when the input runs out)
 *	extra bytes	EXEC_COMPLETE: n_outputs (index, datablock) pairs (clean
 *			mode keeps its AHEAD and SETTLE flags, made valid)
 *
 * Besides the calls, an op may close a client, map a datablock, walk the
 * objects, or let time pass and tick the tunnels' timer (do_record()).
 *
 * Handle fields are folded into 0..next_handle (every live handle, 0 and
 * one never given out) unless mode bit 6 says not to, so most calls name
 * real objects.  Sizes are folded small unless mode bit 2 says not to, and
 * datablock memory is capped (os_user_buf_limit) so big ones fail cleanly.
 * A first byte >= 0xf0 turns on allocation-failure injection.
 *
 * The target must never crash, trip a PTASK_WARN_ON (os_user.c aborts),
 * or leak: at the end of every input both clients are destroyed and every
 * object count, every handle and every buffer must be gone.
 *
 * ARGS_FUZZ_TRACE=1 in the environment prints every call and its result
 * (to check what a seed input reaches).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/ptask_core.h"
#include "tests/unit/os_user.h"

#define MAX_RECORDS	512
#define CODE_BUF	(PTASK_CODE_MAX_BYTES + 64)

struct reader {
	const u8 *p;
	size_t n;
};

static u8 rd8(struct reader *r)
{
	if (!r->n)
		return 0;
	r->n--;
	return *r->p++;
}

static void rdbytes(struct reader *r, void *dst, size_t len)
{
	size_t k = len < r->n ? len : r->n;

	memcpy(dst, r->p, k);
	memset((u8 *)dst + k, 0, len - k);
	r->p += k;
	r->n -= k;
}

static const unsigned int cmds[] = {
	PTASK_IOC_GRAPH_OPEN, PTASK_IOC_TEMPLATE_OPEN, PTASK_IOC_PTASK_OPEN,
	PTASK_IOC_PORT_OPEN, PTASK_IOC_CHANNEL_OPEN, PTASK_IOC_LOOKUP,
	PTASK_IOC_DATABLOCK_CREATE, PTASK_IOC_DATABLOCK_RELEASE,
	PTASK_IOC_PUSH, PTASK_IOC_PULL, PTASK_IOC_GRAPH_RUN,
	PTASK_IOC_GRAPH_TERMINATE, PTASK_IOC_GRAPH_CLOSE,
	PTASK_IOC_PTASK_SET_PRIORITY, PTASK_IOC_PTASK_SET_GEOMETRY,
	PTASK_IOC_EXEC_TAKE, PTASK_IOC_EXEC_COMPLETE,
	PTASK_IOC_EXEC_PTASK_INFO, PTASK_IOC_EXEC_FORGOTTEN,
};
#define NCMDS	ARRAY_SIZE(cmds)

static struct ptask_ns ns;
static bool trace;			/* $ARGS_FUZZ_TRACE: print each call */
static struct ptask_client *clients[2];
static u8 code_in[CODE_BUF];
static u8 code_out[CODE_BUF];
static u32 forgotten_out[PTASK_FORGOTTEN_MAX];
static struct ptask_invocation invs[PTASK_TAKE_MAX_INVOCATIONS];
static struct ptask_invocation_port ports[PTASK_TAKE_MAX_PORTS];
static struct ptask_exec_output outs[PTASK_MAX_PORTS + 8];

static bool in_group_1000(const struct ptask_caller *who, u32 gid)
{
	(void)who;
	return gid == 1000;
}

static struct ptask_caller caller(u8 mode)
{
	struct ptask_caller who = { .uid = 1000, .gid = 1000, .pid = 42 };

	switch ((mode >> 3) & 3) {
	case 1:
		who.uid = 2000;
		who.gid = 2000;
		who.in_group = in_group_1000;
		break;
	case 2:
		who.uid = 3000;
		who.gid = 3000;
		who.nice = 10;
		break;
	case 3:
		who.uid = 0;
		who.gid = 0;
		who.dac_override = true;
		who.nice = -5;
		break;
	}
	who.sys_nice = mode & 0x20;
	return who;
}

static u32 fold(u32 raw)
{
	return raw % (ns.next_handle + 1);
}

static u64 fold_id(u64 raw)
{
	return raw % (ns.next_invocation + 1);
}

/* Letters and digits, NUL-terminated after a short length. */
static void fix_name(char *name)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyz0123456789._-/";
	size_t len = (u8)name[0] % 6, i;

	for (i = 0; i < len; i++)
		name[i] = ok[(u8)name[i + 1] % (sizeof(ok) - 1)];
	memset(name + len, 0, PTASK_NAME_MAX - len);
}

static u32 rd32(struct reader *r)
{
	u32 v;

	rdbytes(r, &v, sizeof(v));
	return v;
}

/*
 * Bring the argument into range: handles folded onto live ones, sizes
 * small, and (mode bit 1) names valid and must-be-zero fields zero, so
 * that most calls get past ptask_core_args_check() into the core.
 */
static void fixup(unsigned int cmd, union ptask_args *a, u8 mode)
{
	bool f = !(mode & 0x40), clean = mode & 2, small = !(mode & 4);
	u32 i;

	switch (cmd) {
	case PTASK_IOC_GRAPH_OPEN:
		if (clean) {
			fix_name(a->graph_open.name);
			a->graph_open.mode &= 0777;
			a->graph_open.flags &= PTASK_GRAPH_FLAGS_ALL;
		}
		break;
	case PTASK_IOC_TEMPLATE_OPEN:
		if (f)
			a->template_open.graph = fold(a->template_open.graph);
		if (small) {
			a->template_open.stride %= 64;
			for (i = 0; i < 3; i++)
				a->template_open.dims[i] %= 9;
		}
		if (clean) {
			fix_name(a->template_open.name);
			a->template_open.flags = 0;
			a->template_open.reserved = 0;
			a->template_open.kind %= __PTASK_TEMPLATE_KIND_MAX;
			a->template_open.binding %= __PTASK_BIND_MAX;
		}
		break;
	case PTASK_IOC_PTASK_OPEN:
		if (f)
			a->ptask_open.graph = fold(a->ptask_open.graph);
		if (small)
			a->ptask_open.code_len %= 2048;
		if (clean) {
			fix_name(a->ptask_open.name);
			fix_name(a->ptask_open.entry);
			a->ptask_open.flags = 0;
			a->ptask_open.reserved = 0;
			a->ptask_open.kind %= __PTASK_KIND_MAX;
			a->ptask_open.nports %= 9;
			if (a->ptask_open.kind == PTASK_KIND_CPU) {
				a->ptask_open.code = 0;
				a->ptask_open.code_len = 0;
				a->ptask_open.entry[0] = 0;
			}
		}
		break;
	case PTASK_IOC_PORT_OPEN:
		if (f) {
			a->port_open.ptask = fold(a->port_open.ptask);
			a->port_open.template = fold(a->port_open.template);
			a->port_open.inout_peer = fold(a->port_open.inout_peer);
		}
		if (clean) {
			fix_name(a->port_open.name);
			a->port_open.reserved = 0;
			a->port_open.flags &= PTASK_PORT_FLAGS_ALL;
			a->port_open.kind %= __PTASK_PORT_KIND_MAX;
			a->port_open.param_index &= 0xff;
			if (!(a->port_open.flags & PTASK_PORT_INOUT))
				a->port_open.inout_peer = 0;
		}
		break;
	case PTASK_IOC_CHANNEL_OPEN:
		if (f) {
			a->channel_open.graph = fold(a->channel_open.graph);
			a->channel_open.src = fold(a->channel_open.src);
			a->channel_open.dst = fold(a->channel_open.dst);
			a->channel_open.template =
				fold(a->channel_open.template);
			a->channel_open.handle = fold(a->channel_open.handle);
		}
		if (small) {
			a->channel_open.capacity %= 9;
			/* Tunnels: thresholds of a few 8-byte records, timeouts
			 * of a few ticks (case 6 of do_record advances them). */
			a->channel_open.tunnel_bytes %= 129;
			a->channel_open.tunnel_records %= 9;
			a->channel_open.tunnel_timeout_ns %= 4000;
		}
		if (clean) {
			fix_name(a->channel_open.name);
			a->channel_open.flags &= PTASK_CHANNEL_FLAGS_ALL;
			a->channel_open.reserved = 0;
		}
		break;
	case PTASK_IOC_LOOKUP:
		if (f)
			a->lookup.graph = fold(a->lookup.graph);
		if (clean) {
			fix_name(a->lookup.name);
			a->lookup.flags = 0;
			a->lookup.reserved = 0;
			a->lookup.type %= __PTASK_OBJ_MAX;
		}
		break;
	case PTASK_IOC_DATABLOCK_CREATE:
		if (f)
			a->db_create.template = fold(a->db_create.template);
		if (small) {
			a->db_create.bytes %= 4097;
			a->db_create.records %= 65;
		}
		if (clean)
			a->db_create.flags = 0;
		break;
	case PTASK_IOC_DATABLOCK_RELEASE:
		if (f)
			a->db_release.handle = fold(a->db_release.handle);
		if (clean) {
			a->db_release.flags = 0;
			a->db_release.reserved = 0;
		}
		break;
	case PTASK_IOC_PUSH:
		if (f) {
			a->push.channel = fold(a->push.channel);
			a->push.datablock = fold(a->push.datablock);
		}
		if (small)
			a->push.records %= 65;
		if (clean)
			a->push.flags &= PTASK_PUSH_FLAGS_ALL;
		break;
	case PTASK_IOC_PULL:
		if (f) {
			a->pull.channel = fold(a->pull.channel);
			/* PTASK_PULL_SLICE: the ticket is a datablock's handle. */
			a->pull.datablock = fold(a->pull.datablock);
		}
		if (clean)
			a->pull.flags &= PTASK_PULL_FLAGS_ALL;
		break;
	case PTASK_IOC_GRAPH_RUN:
	case PTASK_IOC_GRAPH_TERMINATE:
	case PTASK_IOC_GRAPH_CLOSE:
		if (f)
			a->graph_ctl.graph = fold(a->graph_ctl.graph);
		if (clean) {
			a->graph_ctl.flags = 0;
			a->graph_ctl.reserved = 0;
		}
		break;
	case PTASK_IOC_PTASK_SET_PRIORITY:
		if (f)
			a->priority.ptask = fold(a->priority.ptask);
		break;
	case PTASK_IOC_PTASK_SET_GEOMETRY:
		if (f)
			a->geometry.ptask = fold(a->geometry.ptask);
		break;
	case PTASK_IOC_EXEC_TAKE:
		if (clean)
			a->take.flags &= PTASK_NONBLOCK;
		break;
	case PTASK_IOC_EXEC_COMPLETE:
		if (f)
			a->complete.id = fold_id(a->complete.id);
		if (small)
			a->complete.n_outputs %= 9;
		if (clean) {
			/* Plain, ahead or settle, each as the core wants it. */
			a->complete.flags &= PTASK_EXEC_COMPLETE_FLAGS_ALL;
			if (a->complete.flags == PTASK_EXEC_COMPLETE_FLAGS_ALL)
				a->complete.flags = 0;
			if (a->complete.status > 0 ||
			    (a->complete.flags & PTASK_EXEC_COMPLETE_AHEAD))
				a->complete.status = 0;
			if (a->complete.flags & PTASK_EXEC_COMPLETE_SETTLE)
				a->complete.n_outputs = 0;
		}
		break;
	case PTASK_IOC_EXEC_PTASK_INFO:
		if (f)
			a->info.ptask = fold(a->info.ptask);
		if (small)
			a->info.code_len %= 4096;
		if (clean) {
			a->info.flags = 0;
			a->info.reserved = 0;
		}
		break;
	}
}

/* One call through the shell's path. */
static void do_call(struct reader *r, unsigned int cmd, u8 mode)
{
	const struct ptask_arg_desc *d = ptask_core_args_desc(cmd);
	struct ptask_client *c = clients[mode & 1];
	struct ptask_caller who = caller(mode);
	struct ptask_call_io io;
	union ptask_args u;
	u32 i;
	int err;

	if (!d)
		return;			/* -ENOTTY */
	memset(&u, 0, sizeof(u));
	rdbytes(r, &u, d->ksize);
	*(u32 *)&u = d->ksize;
	fixup(d->cmd, &u, mode);
	if (ptask_core_args_check(d->cmd, &u) || !c)
		return;
	memset(&io, 0, sizeof(io));
	switch (d->cmd) {
	case PTASK_IOC_PTASK_OPEN:
		io.code = code_in;	/* code_len <= PTASK_CODE_MAX_BYTES */
		break;
	case PTASK_IOC_EXEC_TAKE:
		io.invocations = invs;
		io.ports = ports;
		break;
	case PTASK_IOC_EXEC_COMPLETE:
		for (i = 0; i < u.complete.n_outputs; i++) {
			rdbytes(r, &outs[i], sizeof(outs[i]));
			if (!(mode & 0x40)) {
				outs[i].index %= 8;
				outs[i].datablock = fold(outs[i].datablock);
			}
		}
		io.outputs = outs;
		break;
	case PTASK_IOC_EXEC_PTASK_INFO:
		io.code_out = code_out;
		io.code_out_len = u.info.code_len < CODE_BUF ?
				  u.info.code_len : CODE_BUF;
		break;
	case PTASK_IOC_EXEC_FORGOTTEN:
		io.forgotten = forgotten_out;	/* PTASK_FORGOTTEN_MAX */
		break;
	}
	err = ptask_core_call(c, &who, d->cmd, &u, &io);
	if (trace)
		fprintf(stderr, "args_fuzz: client %d cmd 0x%02x: %d\n",
			mode & 1, _IOC_NR(d->cmd), err);
}

#define MAX_MAPS	4
static struct ptask_buf *maps[MAX_MAPS];

/* A mapping of a datablock, kept for a while: it outlives the datablock. */
static void do_map(struct reader *r, u8 mode)
{
	struct ptask_client *c = clients[mode & 1];
	u32 slot = mode % MAX_MAPS, handle = rd32(r);
	struct ptask_buf *buf;
	u64 bytes;

	if (!(mode & 0x40))
		handle = fold(handle);
	if (maps[slot]) {
		ptask_os_buf_put(maps[slot]);
		maps[slot] = NULL;
	}
	if (!c || ptask_core_datablock_map(c, handle, &bytes, &buf))
		return;
	((u8 *)os_user_buf_data(buf))[bytes - 1] ^= 0x5a;
	if (mode & 0x80)
		ptask_os_buf_put(buf);
	else
		maps[slot] = buf;
}

/* Listings and readiness: walk every object. */
static void do_walk(u8 mode)
{
	struct ptask_obj_info info;
	struct ptask_obj *o;
	u64 cursor = 0;
	u32 n = 0, prev = 0;

	if (clients[mode & 1])
		(void)ptask_core_client_poll(clients[mode & 1]);
	while ((o = ptask_core_ns_next(&ns, &cursor))) {
		ptask_core_obj_describe(o, &info);
		if (info.handle != o->handle || !info.name ||
		    (n++ && o->handle <= prev))
			abort();
		prev = o->handle;
		if (o->type == PTASK_OBJ_DATABLOCK &&
		    ptask_core_datablock_mmap_handle(ptask_datablock_mmap_offset(
			ptask_container_of(o, struct ptask_datablock, obj))) !=
		    o->handle)
			abort();
	}
	if (n != ns.hcount)
		abort();
}

static void do_record(struct reader *r)
{
	const unsigned int sizebits = _IOC_SIZEMASK << _IOC_SIZESHIFT;
	u8 op = rd8(r), mode = rd8(r), sel = op % (NCMDS + 7);
	struct ptask_client **c = &clients[mode & 1];

	if (sel < NCMDS) {
		do_call(r, cmds[sel], mode);
		return;
	}
	switch (sel - NCMDS) {
	case 0:		/* any command number */
		do_call(r, rd32(r), mode);
		break;
	case 1:		/* a known command with other size bits */
		do_call(r, (cmds[op % NCMDS] & ~sizebits) |
			((u32)rd8(r) << _IOC_SIZESHIFT), mode);
		break;
	case 2:		/* executor role */
		if (!*c)
			break;
		if ((*c)->executor)
			ptask_core_exec_unregister(*c);
		else if (!ptask_core_exec_register(*c, mode) && (mode & 0x20))
			ptask_core_exec_forgotten_enable(*c);	/* kernel's */
		break;
	case 3:		/* the fd closes; another opens */
		if (*c)
			ptask_core_client_destroy(*c);
		*c = ptask_core_client_create(&ns, NULL);
		break;
	case 4:
		do_map(r, mode);
		break;
	case 5:
		do_walk(mode);
		break;
	case 6:		/* time passes (0..255 us); the tunnels' timer */
		if (!os_user_clock_ns)
			os_user_clock_ns = ptask_os_now_ns();
		os_user_clock_ns += 1000ull * mode + 1;
		ptask_core_tunnel_tick(&ns);
		break;
	}
}

static void leak(const char *what, unsigned long long n)
{
	fprintf(stderr, "args_fuzz: leak after teardown: %llu %s\n", n, what);
	abort();
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);
int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	static const char *const names[] = PTASK_COUNT_NAMES;
	struct reader r = { data, size };
	unsigned int i, records = 0;

	if (!code_in[1]) {
		for (i = 0; i < CODE_BUF; i += 4096)
			code_in[i + 1] = (u8)(i >> 12) | 1;
		trace = getenv("ARGS_FUZZ_TRACE") != NULL;
	}
	os_user_locked = 1;
	os_user_clock_ns = 0;	/* real time until an op lets time pass */
	os_user_fail_alloc_after = -1;
	os_user_fail_alloc_once = 0;
	os_user_buf_limit = 64ULL << 20;
	if (ptask_core_ns_init(&ns, NULL))
		abort();
	clients[0] = ptask_core_client_create(&ns, NULL);
	clients[1] = ptask_core_client_create(&ns, NULL);
	if (!clients[0] || !clients[1] ||
	    ptask_core_exec_register(clients[1], 1) ||
	    ptask_core_exec_forgotten_enable(clients[1]))
		abort();
	/* A first byte >= 0xf0: allocations fail after the next byte's
	 * count (only that one if the first byte is odd). */
	if (size && data[0] >= 0xf0) {
		rd8(&r);
		os_user_fail_alloc_after = rd8(&r);
		os_user_fail_alloc_once = data[0] & 1;
	}
	while (r.n && records++ < MAX_RECORDS)
		do_record(&r);

	os_user_fail_alloc_after = -1;
	os_user_fail_alloc_once = 0;
	for (i = 0; i < MAX_MAPS; i++) {
		if (maps[i])
			ptask_os_buf_put(maps[i]);
		maps[i] = NULL;
	}
	for (i = 0; i < 2; i++) {
		if (clients[i])
			ptask_core_client_destroy(clients[i]);
		clients[i] = NULL;
	}
	for (i = 0; i < PTASK_COUNT_BUFFERS; i++)
		if (ns.counts[i])
			leak(names[i], ns.counts[i]);
	if (ns.hcount)
		leak("handles", ns.hcount);
	if (ns.executors)
		leak("executors", ns.executors);
	if (!ptask_list_empty(&ns.graphs) || !ptask_list_empty(&ns.ready))
		leak("graphs or ready entries", 1);
	ptask_core_ns_destroy(&ns);
	if (os_user_buffers)
		leak("buffers", (unsigned long long)os_user_buffers);
	if (os_user_buf_bytes)
		leak("buffer bytes", os_user_buf_bytes);
	return 0;
}
