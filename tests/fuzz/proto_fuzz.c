// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * proto_fuzz.c - libFuzzer target for ptaskd's wire protocol parser
 * (daemon/user/request.c), with the core behind it as the daemon runs it.
 *
 * One input is a stream of messages as a client would send them after
 * HELLO:
 *
 *	u32 op		bit 31 clear: a PTASK_IOC_* chosen by op % 18, with
 *			op's other size bits; bits 31 and 30 set: an admin
 *			op (PTASKD_OP_SET_POLICY ... _SET_PRIO) chosen by
 *			op % 6; else op as is (unknown ops)
 *	u16 len		payload bytes that follow (cut at the input's end)
 *	u8  who		bit 0: the executor client; bit 1: root
 *	payload
 *
 * Each message is parsed with pd_request_parse(); a parsed one gets its
 * reply buffers (pd_request_prepare()), is run by ptask_core_call() on a fresh
 * namespace (blocking calls made non-blocking: the daemon would sleep)
 * and its reply is built (pd_request_reply()).  An admin op goes through
 * pd_admin_parse() and pd_admin_run_locked(), whose reply must be whole
 * records and fit a message.  The target must never
 * crash, trip a PTASK_WARN_ON, read past the message, or leak: at the end
 * every object and buffer must be gone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/ptask_core.h"
#include "tests/unit/os_user.h"
#include "daemon/user/request.c"
#include "daemon/user/ns_admin.c"

#define MAX_MESSAGES	256

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

static const uint32_t admin_ops[] = {
	PTASKD_OP_SET_POLICY, PTASKD_OP_SCHED_GET, PTASKD_OP_SCHED_SET,
	PTASKD_OP_PROCS, PTASKD_OP_OBJECTS, PTASKD_OP_SET_PRIO,
};

static struct ptask_ns ns;
static struct ptask_client *clients[2];

/*
 * ns_admin.c's pd_ns_admin() takes the daemon's namespace lock; here the
 * core runs on os_user.c, whose lock is os_user_locked, always held.
 */
void pd_ns_lock(struct pd_ns *pns)
{
	(void)pns;
	os_user_locked = 1;
}

void pd_ns_unlock(struct pd_ns *pns)
{
	(void)pns;
}

static void leak(const char *what, unsigned long long n)
{
	fprintf(stderr, "proto_fuzz: leaked %llu %s\n", n, what);
	abort();
}

static void make_nonblocking(struct pd_request *req)
{
	switch (req->cmd) {
	case PTASK_IOC_PUSH:
		req->arg.push.flags |= PTASK_NONBLOCK;
		break;
	case PTASK_IOC_PULL:
		req->arg.pull.flags |= PTASK_NONBLOCK;
		break;
	case PTASK_IOC_EXEC_TAKE:
		req->arg.take.flags |= PTASK_NONBLOCK;
		break;
	}
}

static void bad_reply(const char *why, uint32_t op, size_t len)
{
	fprintf(stderr, "proto_fuzz: admin op %u: %s (%zu bytes)\n", op, why, len);
	abort();
}

/* What a reply of @op may look like: whole records, at most a message. */
static void check_admin_reply(uint32_t op, int err, const void *out,
			      size_t len)
{
	size_t rec = op == PTASKD_OP_PROCS ? sizeof(struct ptask_proc_info) :
		     op == PTASKD_OP_OBJECTS ? sizeof(struct ptaskd_object) :
		     op == PTASKD_OP_SCHED_GET || op == PTASKD_OP_SCHED_SET ?
		     sizeof(struct ptask_sched_params) : 0;

	if (err && (out || len))
		bad_reply("a reply with an error", op, len);
	if (err)
		return;
	if (!rec ? len != 0 : len % rec || len > PTASKD_MSG_MAX)
		bad_reply("a reply of the wrong size", op, len);
	if ((op == PTASKD_OP_SCHED_GET || op == PTASKD_OP_SCHED_SET) && len != rec)
		bad_reply("no settings in the reply", op, len);
	if (!!out != !!len)
		bad_reply("a buffer that does not match its length", op, len);
}

static void one_admin(uint32_t op, const struct ptask_caller *who,
		      const uint8_t *payload, size_t len)
{
	struct pd_admin_req req;
	size_t out_len = 0;
	void *out = NULL;
	int err;

	op = admin_ops[op % ARRAY_SIZE(admin_ops)];
	if (!pd_admin_op(op))
		bad_reply("not an admin op", op, len);
	err = pd_admin_parse(op, payload, len, &req);
	if (!err)
		err = pd_admin_run_locked(&ns, who, &req, &out, &out_len);
	check_admin_reply(op, err, out, out_len);
	free(out);
}

static void one_message(uint32_t op, uint8_t who_bits, const uint8_t *payload,
			size_t len)
{
	struct ptask_caller who = {
		.uid = who_bits & 2 ? 0 : 1000,
		.gid = 1000,
		.pid = 4242,
		.dac_override = who_bits & 2,
	};
	struct pd_request req;
	void *out;
	size_t out_len;
	uint8_t *copy;
	int err;

	/* An exact-size copy, so ASan sees any read past the message. */
	copy = malloc(len ? len : 1);
	if (!copy)
		abort();
	memcpy(copy, payload, len);
	/* Before the rewrite below: an _IOWR ioctl has both bits set too. */
	if ((op & 0xc0000000u) == 0xc0000000u) {
		one_admin(op, &who, copy, len);
		free(copy);
		return;
	}
	if (!(op & 0x80000000u))
		op = (cmds[op % ARRAY_SIZE(cmds)] & ~(0x3fffu << 16)) |
		     (op & (0x3fffu << 16));
	err = pd_request_parse(op, copy, len, &req);
	if (!err)
		err = pd_request_prepare(&req);
	if (!err) {
		make_nonblocking(&req);
		err = ptask_core_call(clients[who_bits & 1], &who, req.cmd, &req.arg,
				      &req.io);
	}
	if (req.desc && !pd_request_reply(&req, err, &out, &out_len))
		free(out);
	pd_request_free(&req);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = PTASK_COUNT_NAMES;
	unsigned int i, n = 0;

	os_user_locked = 1;
	os_user_fail_alloc_after = -1;
	os_user_buf_limit = 64ULL << 20;
	if (ptask_core_ns_init(&ns, NULL))
		abort();
	clients[0] = ptask_core_client_create(&ns, NULL);
	clients[1] = ptask_core_client_create(&ns, NULL);
	if (!clients[0] || !clients[1] || ptask_core_exec_register(clients[1], 1))
		abort();
	while (size >= 7 && n++ < MAX_MESSAGES) {
		uint32_t op;
		uint16_t len;
		uint8_t who;

		memcpy(&op, data, 4);
		memcpy(&len, data + 4, 2);
		who = data[6];
		data += 7;
		size -= 7;
		if (len > size)
			len = (uint16_t)size;
		one_message(op, who, data, len);
		data += len;
		size -= len;
	}
	for (i = 0; i < 2; i++) {
		ptask_core_client_destroy(clients[i]);
		clients[i] = NULL;
	}
	for (i = 0; i < PTASK_COUNT_BUFFERS; i++)
		if (ns.counts[i])
			leak(names[i], ns.counts[i]);
	ptask_core_ns_destroy(&ns);
	if (os_user_buffers)
		leak("buffers", (unsigned long long)os_user_buffers);
	return 0;
}
