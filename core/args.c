// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * args.c - the ioctl table: each call's argument size and the checks made
 * on its fields before any handle is looked up (flags, reserved fields,
 * ranges, names), then the dispatch to the object that does the work.
 *
 * Shells call, in this order: ptask_core_args_desc() (unknown command:
 * -ENOTTY), their copy_struct_from_user() (-EINVAL, -E2BIG, -EFAULT),
 * ptask_core_args_check() (-EINVAL), copies of any further user buffers
 * (-EFAULT), then ptask_core_call() under the namespace lock.  This is the
 * error order uapi/ptask.h documents.
 */
#include "ptask_core.h"

static const struct ptask_arg_desc descs[] = {
	{ PTASK_IOC_GRAPH_OPEN, sizeof(struct ptask_graph_open),
	  PTASK_GRAPH_OPEN_SIZE_VER0, true },
	{ PTASK_IOC_TEMPLATE_OPEN, sizeof(struct ptask_template_open),
	  PTASK_TEMPLATE_OPEN_SIZE_VER0, true },
	{ PTASK_IOC_PTASK_OPEN, sizeof(struct ptask_ptask_open),
	  PTASK_PTASK_OPEN_SIZE_VER0, true },
	{ PTASK_IOC_PORT_OPEN, sizeof(struct ptask_port_open),
	  PTASK_PORT_OPEN_SIZE_VER0, true },
	{ PTASK_IOC_CHANNEL_OPEN, sizeof(struct ptask_channel_open),
	  PTASK_CHANNEL_OPEN_SIZE_VER0, true },
	{ PTASK_IOC_LOOKUP, sizeof(struct ptask_lookup),
	  PTASK_LOOKUP_SIZE_VER0, true },
	{ PTASK_IOC_DATABLOCK_CREATE, sizeof(struct ptask_datablock_create),
	  PTASK_DATABLOCK_CREATE_SIZE_VER0, true },
	{ PTASK_IOC_DATABLOCK_RELEASE, sizeof(struct ptask_datablock_release),
	  PTASK_DATABLOCK_RELEASE_SIZE_VER0, false },
	{ PTASK_IOC_PUSH, sizeof(struct ptask_push),
	  PTASK_PUSH_SIZE_VER0, false },
	{ PTASK_IOC_PULL, sizeof(struct ptask_pull),
	  PTASK_PULL_SIZE_VER0, true },
	{ PTASK_IOC_GRAPH_RUN, sizeof(struct ptask_graph_ctl),
	  PTASK_GRAPH_CTL_SIZE_VER0, false },
	{ PTASK_IOC_GRAPH_TERMINATE, sizeof(struct ptask_graph_ctl),
	  PTASK_GRAPH_CTL_SIZE_VER0, false },
	{ PTASK_IOC_GRAPH_CLOSE, sizeof(struct ptask_graph_ctl),
	  PTASK_GRAPH_CTL_SIZE_VER0, false },
	{ PTASK_IOC_PTASK_SET_PRIORITY, sizeof(struct ptask_priority),
	  PTASK_PRIORITY_SIZE_VER0, false },
	{ PTASK_IOC_PTASK_SET_GEOMETRY, sizeof(struct ptask_geometry),
	  PTASK_GEOMETRY_SIZE_VER0, false },
	{ PTASK_IOC_EXEC_TAKE, sizeof(struct ptask_exec_take),
	  PTASK_EXEC_TAKE_SIZE_VER0, true },
	{ PTASK_IOC_EXEC_COMPLETE, sizeof(struct ptask_exec_complete),
	  PTASK_EXEC_COMPLETE_SIZE_VER0, false },
	{ PTASK_IOC_EXEC_PTASK_INFO, sizeof(struct ptask_exec_ptask_info),
	  PTASK_EXEC_PTASK_INFO_SIZE_VER0, true },
	{ PTASK_IOC_EXEC_FORGOTTEN, sizeof(struct ptask_exec_forgotten),
	  PTASK_EXEC_FORGOTTEN_SIZE_VER0, true },
};

/**
 * ptask_core_args_desc() - what the shell must copy for @cmd
 * @cmd: the ioctl command
 *
 * The size bits of @cmd are ignored: the struct's own @size field says
 * which version the caller speaks, so a binary built against an older or
 * newer header still finds its command.  Callers go on with the
 * descriptor's @cmd.
 *
 * Return: the descriptor, or NULL for an unknown command (-ENOTTY).
 */
const struct ptask_arg_desc *ptask_core_args_desc(unsigned int cmd)
{
	const unsigned int size_bits = _IOC_SIZEMASK << _IOC_SIZESHIFT;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(descs); i++)
		if ((descs[i].cmd & ~size_bits) == (cmd & ~size_bits))
			return &descs[i];
	return NULL;
}

static bool name_char_ok(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
	       ch == '-' || ch == '/';
}

/* NUL-terminated within PTASK_NAME_MAX, allowed characters only. */
static bool name_ok(const char *name, bool may_be_empty)
{
	size_t i;

	for (i = 0; i < PTASK_NAME_MAX; i++) {
		if (!name[i])
			return i > 0 || may_be_empty;
		if (!name_char_ok(name[i]))
			return false;
	}
	return false;
}

static int check_graph_open(const struct ptask_graph_open *a)
{
	if (a->flags & ~PTASK_GRAPH_FLAGS_ALL)
		return -EINVAL;
	if ((a->flags & PTASK_GRAPH_EXCL) && !(a->flags & PTASK_GRAPH_CREATE))
		return -EINVAL;
	if (a->mode > 0777 || !name_ok(a->name, true))
		return -EINVAL;
	if (!a->name[0] && !(a->flags & PTASK_GRAPH_CREATE))
		return -EINVAL;
	return 0;
}

static int check_template_open(const struct ptask_template_open *a)
{
	u64 bytes;

	if (a->flags || a->reserved)
		return -EINVAL;
	if (a->kind >= __PTASK_TEMPLATE_KIND_MAX ||
	    a->binding >= __PTASK_BIND_MAX || !a->stride ||
	    !a->dims[0] || !a->dims[1] || !a->dims[2])
		return -EINVAL;
	/* Each factor is < 2^32 and the bound < 2^29: divide, never wrap. */
	bytes = (u64)a->stride * a->dims[0];
	if (bytes > PTASK_DATABLOCK_MAX_BYTES ||
	    a->dims[1] > PTASK_DATABLOCK_MAX_BYTES / bytes)
		return -EINVAL;
	bytes *= a->dims[1];
	if (a->dims[2] > PTASK_DATABLOCK_MAX_BYTES / bytes)
		return -EINVAL;
	return name_ok(a->name, true) ? 0 : -EINVAL;
}

static int check_ptask_open(const struct ptask_ptask_open *a)
{
	if (a->flags & ~PTASK_PTASK_FLAGS_ALL || a->reserved ||
	    a->kind >= __PTASK_KIND_MAX)
		return -EINVAL;
	if ((a->flags & PTASK_PTASK_SELF) && a->kind != PTASK_KIND_CPU)
		return -EINVAL;
	if (!a->nports || a->nports > PTASK_MAX_PORTS)
		return -EINVAL;
	if (!name_ok(a->name, true) || !name_ok(a->entry, true))
		return -EINVAL;
	if (a->kind == PTASK_KIND_CPU)
		return a->code || a->code_len || a->entry[0] ? -EINVAL : 0;
	if (!a->code_len || a->code_len > PTASK_CODE_MAX_BYTES || !a->entry[0])
		return -EINVAL;
	return 0;
}

static int check_port_open(const struct ptask_port_open *a)
{
	if (a->flags & ~PTASK_PORT_FLAGS_ALL || a->reserved)
		return -EINVAL;
	if (a->kind >= __PTASK_PORT_KIND_MAX || a->param_index > 255)
		return -EINVAL;
	if (a->flags & PTASK_PORT_INOUT) {
		if (a->kind != PTASK_PORT_INPUT || !a->inout_peer)
			return -EINVAL;
	} else if (a->inout_peer) {
		return -EINVAL;
	}
	return name_ok(a->name, true) ? 0 : -EINVAL;
}

static int check_channel_open(const struct ptask_channel_open *a)
{
	if (a->flags & ~PTASK_CHANNEL_FLAGS_ALL || a->reserved)
		return -EINVAL;
	if (!a->flags &&
	    (a->tunnel_bytes || a->tunnel_records || a->tunnel_timeout_ns))
		return -EINVAL;
	if (a->tunnel_bytes > PTASK_DATABLOCK_MAX_BYTES ||
	    a->tunnel_timeout_ns > PTASK_TUNNEL_MAX_TIMEOUT_NS)
		return -EINVAL;
	/* New settings for an open tunnel: @handle names it, nothing else. */
	if (a->flags & PTASK_CHANNEL_TUNNEL_SET)
		return a->flags != PTASK_CHANNEL_TUNNEL_SET || !a->handle ||
		       a->graph || a->src || a->dst || a->capacity ||
		       a->template || a->name[0] ? -EINVAL : 0;
	if (!a->capacity || a->capacity > PTASK_CHANNEL_MAX_CAPACITY)
		return -EINVAL;
	if (!a->src && !a->dst)
		return -EINVAL;
	return name_ok(a->name, true) ? 0 : -EINVAL;
}

static int check_lookup(const struct ptask_lookup *a)
{
	if (a->flags || a->reserved)
		return -EINVAL;
	if (a->type != PTASK_OBJ_TEMPLATE && a->type != PTASK_OBJ_PTASK &&
	    a->type != PTASK_OBJ_PORT && a->type != PTASK_OBJ_CHANNEL)
		return -EINVAL;
	return name_ok(a->name, false) ? 0 : -EINVAL;
}

static int check_db_create(const struct ptask_datablock_create *a)
{
	if (a->flags & ~PTASK_DATABLOCK_CREATE_FLAGS_ALL)
		return -EINVAL;
	if (!(a->flags & PTASK_DATABLOCK_CREATE_OUTPUT) != !a->invocation)
		return -EINVAL;
	if (a->template)
		return a->bytes ? -EINVAL : 0;
	if (!a->bytes || a->bytes > PTASK_DATABLOCK_MAX_BYTES)
		return -EINVAL;
	return 0;
}

static int check_priority(const struct ptask_priority *a)
{
	if (!a->flags || a->flags & ~PTASK_PRIO_FLAGS_ALL || a->reserved)
		return -EINVAL;
	if (a->flags & PTASK_PRIO_SET_STATIC) {
		if (a->static_prio > PTASK_PRIO_MAX)
			return -EINVAL;
	} else if (a->static_prio) {
		return -EINVAL;
	}
	if (a->flags & PTASK_PRIO_SET_PROXY) {
		if (a->proxy_nice < PTASK_NICE_MIN ||
		    a->proxy_nice > PTASK_NICE_MAX)
			return -EINVAL;
	} else if (a->proxy_nice) {
		return -EINVAL;
	}
	return 0;
}

/*
 * EXEC_COMPLETE: AHEAD and SETTLE exclude each other; an ahead
 * completion succeeds (its failure comes with the settle), and a settle
 * carries no outputs (they moved on with the ahead completion).
 */
static int check_complete(const struct ptask_exec_complete *a)
{
	u32 ahead = a->flags & PTASK_EXEC_COMPLETE_AHEAD;
	u32 settle = a->flags & PTASK_EXEC_COMPLETE_SETTLE;

	if ((a->flags & ~PTASK_EXEC_COMPLETE_FLAGS_ALL) ||
	    a->n_outputs > PTASK_MAX_PORTS || a->accel > PTASK_MAX_ACCELS)
		return -EINVAL;
	if (a->status > 0 || a->status < -4095 ||
	    (a->error_code && !a->status))
		return -EINVAL;
	if ((ahead && settle) || (ahead && a->status) ||
	    (settle && a->n_outputs))
		return -EINVAL;
	/* a requeue says why (a failure) and carries nothing */
	if ((a->flags & PTASK_EXEC_COMPLETE_REQUEUE) &&
	    (ahead || settle || !a->status || a->n_outputs))
		return -EINVAL;
	return 0;
}

/*
 * A block of at most 1024 threads, 64 of them in z (CUDA's limits on
 * every card it supports).  Each side is bounded before the product is
 * taken: three u32 sides multiply past 2^64 (2^28 x 2^28 x 256 wrapped
 * to 0 and was accepted).
 */
static int check_geometry(const struct ptask_geometry *a)
{
	u32 zeros = 0, i;
	u64 threads = 1;

	if (a->flags || a->shared_bytes > BIT(20))
		return -EINVAL;
	for (i = 0; i < 3; i++) {
		zeros += !a->grid[i] + !a->block[i];
		if (a->block[i] > 1024)
			return -EINVAL;
		threads *= a->block[i];
	}
	if (zeros == 6)
		return 0;
	if (zeros || threads > 1024 || a->block[2] > 64 ||
	    a->grid[1] > 65535 || a->grid[2] > 65535)
		return -EINVAL;
	return 0;
}

/**
 * ptask_core_args_check() - the field checks made before any lookup
 * @cmd: a command ptask_core_args_desc() knows
 * @arg: its argument, copied in
 *
 * Return: 0, or -EINVAL (unknown flag, non-zero reserved field, value out
 * of range, bad name), -ENOTTY for an unknown command.
 */
int ptask_core_args_check(unsigned int cmd, const void *arg)
{
	const union ptask_args *a = arg;

	switch (cmd) {
	case PTASK_IOC_GRAPH_OPEN:
		return check_graph_open(&a->graph_open);
	case PTASK_IOC_TEMPLATE_OPEN:
		return check_template_open(&a->template_open);
	case PTASK_IOC_PTASK_OPEN:
		return check_ptask_open(&a->ptask_open);
	case PTASK_IOC_PORT_OPEN:
		return check_port_open(&a->port_open);
	case PTASK_IOC_CHANNEL_OPEN:
		return check_channel_open(&a->channel_open);
	case PTASK_IOC_LOOKUP:
		return check_lookup(&a->lookup);
	case PTASK_IOC_DATABLOCK_CREATE:
		return check_db_create(&a->db_create);
	case PTASK_IOC_DATABLOCK_RELEASE:
		return a->db_release.flags || a->db_release.reserved ?
		       -EINVAL : 0;
	case PTASK_IOC_PUSH:
		if (a->push.flags & ~PTASK_PUSH_FLAGS_ALL)
			return -EINVAL;
		return !(a->push.flags & PTASK_PUSH_SET_RECORDS) &&
		       a->push.records ? -EINVAL : 0;
	case PTASK_IOC_PULL:
		return a->pull.flags & ~PTASK_PULL_FLAGS_ALL ? -EINVAL : 0;
	case PTASK_IOC_GRAPH_RUN:
	case PTASK_IOC_GRAPH_TERMINATE:
	case PTASK_IOC_GRAPH_CLOSE:
		return a->graph_ctl.flags || a->graph_ctl.reserved ?
		       -EINVAL : 0;
	case PTASK_IOC_PTASK_SET_PRIORITY:
		return check_priority(&a->priority);
	case PTASK_IOC_PTASK_SET_GEOMETRY:
		return check_geometry(&a->geometry);
	case PTASK_IOC_EXEC_TAKE:
		if (a->take.flags & ~PTASK_TAKE_FLAGS_ALL)
			return -EINVAL;
		return !a->take.max_invocations || !a->take.max_ports ?
		       -EINVAL : 0;
	case PTASK_IOC_EXEC_COMPLETE:
		return check_complete(&a->complete);
	case PTASK_IOC_EXEC_PTASK_INFO:
		return a->info.flags || a->info.reserved ? -EINVAL : 0;
	case PTASK_IOC_EXEC_FORGOTTEN:
		return a->forgotten.flags || !a->forgotten.max_handles ?
		       -EINVAL : 0;
	default:
		return -ENOTTY;
	}
}

/**
 * ptask_core_args_blocking() - may a call sleep, and until when?
 * @cmd: the canonical command
 * @arg: its checked argument
 * @deadline: set to its absolute CLOCK_MONOTONIC deadline (0: none)
 *
 * Return: true for a push, pull or exec_take without PTASK_NONBLOCK (a
 * shell also honours its own non-blocking flag, such as O_NONBLOCK).
 */
bool ptask_core_args_blocking(unsigned int cmd, const void *arg, u64 *deadline)
{
	const union ptask_args *a = arg;
	u32 flags;

	switch (cmd) {
	case PTASK_IOC_PUSH:
		flags = a->push.flags;
		*deadline = a->push.timeout_ns;
		break;
	case PTASK_IOC_PULL:
		flags = a->pull.flags;
		*deadline = a->pull.timeout_ns;
		break;
	case PTASK_IOC_EXEC_TAKE:
		flags = a->take.flags;
		*deadline = a->take.timeout_ns;
		break;
	default:
		return false;
	}
	return !(flags & PTASK_NONBLOCK);
}

/**
 * ptask_core_call() - do a checked call
 * @c: the calling client
 * @who: the caller's credentials
 * @cmd: the command
 * @arg: its argument, passed ptask_core_args_check(); output fields are set
 * @io: the call's other buffers, copied in (or to copy out) by the shell
 *
 * Return: 0 or -errno; -EAGAIN from a blocking call means "sleep until
 * @c->wake_seq changes, then call again" unless the caller asked not to
 * block.
 */
int ptask_core_call(struct ptask_client *c, const struct ptask_caller *who,
		    unsigned int cmd, void *arg, const struct ptask_call_io *io)
{
	union ptask_args *a = arg;

	ptask_os_assert_locked(c->ns);
	switch (cmd) {
	case PTASK_IOC_GRAPH_OPEN:
		return ptask_core_graph_open(c, who, &a->graph_open);
	case PTASK_IOC_TEMPLATE_OPEN:
		return ptask_core_template_open(c, &a->template_open);
	case PTASK_IOC_PTASK_OPEN:
		return ptask_core_ptask_open(c, who, &a->ptask_open, io->code);
	case PTASK_IOC_PORT_OPEN:
		return ptask_core_port_open(c, &a->port_open);
	case PTASK_IOC_CHANNEL_OPEN:
		return ptask_core_channel_open(c, &a->channel_open);
	case PTASK_IOC_LOOKUP:
		return ptask_core_graph_lookup(c, &a->lookup);
	case PTASK_IOC_DATABLOCK_CREATE:
		return ptask_core_datablock_create(c, &a->db_create);
	case PTASK_IOC_DATABLOCK_RELEASE:
		return ptask_core_datablock_release(c, &a->db_release);
	case PTASK_IOC_PUSH:
		return ptask_core_channel_push(c, &a->push);
	case PTASK_IOC_PULL:
		return ptask_core_channel_pull(c, &a->pull);
	case PTASK_IOC_GRAPH_RUN:
		return ptask_core_graph_run(c, &a->graph_ctl);
	case PTASK_IOC_GRAPH_TERMINATE:
		return ptask_core_graph_terminate(c, &a->graph_ctl);
	case PTASK_IOC_GRAPH_CLOSE:
		return ptask_core_graph_close_handle(c, &a->graph_ctl);
	case PTASK_IOC_PTASK_SET_PRIORITY:
		return ptask_core_ptask_set_priority(c, who, &a->priority);
	case PTASK_IOC_PTASK_SET_GEOMETRY:
		return ptask_core_ptask_set_geometry(c, &a->geometry);
	case PTASK_IOC_EXEC_TAKE:
		return ptask_core_exec_take(c, &a->take, io);
	case PTASK_IOC_EXEC_COMPLETE:
		return ptask_core_exec_complete(c, &a->complete, io);
	case PTASK_IOC_EXEC_PTASK_INFO:
		return ptask_core_exec_ptask_info(c, &a->info, io);
	case PTASK_IOC_EXEC_FORGOTTEN:
		return ptask_core_exec_forgotten(c, &a->forgotten, io);
	default:
		return -ENOTTY;
	}
}
