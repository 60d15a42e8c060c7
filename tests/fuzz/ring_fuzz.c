// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ring_fuzz.c - libFuzzer target for ring entries (uapi/ptask.h,
 * "Submission and completion rings"): ptaskd's entry checker
 * (daemon/user/ring_entry.c, over request.c's parser) with the core behind
 * it as the ring thread runs it, and common/ring.c's reader on a region
 * the other side scribbled on.
 *
 * The input's first byte picks the mode:
 *
 *   even: a stream of entries, each one control byte and 64 bytes of
 *	struct ptask_sqe as a client would write them.  Control bit 0:
 *	the command becomes one of the six a ring carries (keeping the
 *	entry's size bits), bit 1: the struct's size field becomes its
 *	real size, bit 2: handles are cut to 1..8 (so they name live
 *	datablocks now and then), bit 3: PTASK_SQE_DATA is set (executor
 *	entries whose pointer fields are offsets into a data area of
 *	PTASKD_RING_DATA_BYTES, checked by pd_ring_entry_data_check(); a
 *	take's buffers then made, a completion's outputs read from a
 *	zeroed area).  Each entry is checked, run by ptask_core_call()
 *	(blocking calls made non-blocking) and answered;
 *	the completion must carry the entry's user_data, a result of 0 or
 *	-errno, and no struct unless it succeeded.
 *   odd: the rest is a region image (any bytes, any length): attached
 *	as the server, and every entry the indices claim is consumed.
 *	Attach must refuse what breaks the layout, and no slot may lie
 *	outside the region (the image is an exact-size heap copy, so ASan
 *	sees a read past it).
 *
 * Never a crash, a PTASK_WARN_ON, a read outside a buffer or a leak.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/ptask_core.h"
#include "tests/unit/os_user.h"
#include "common/ring.c"
#include "daemon/user/request.c"
#include "daemon/user/ring_entry.c"

#define MAX_ENTRIES	256

static const unsigned int ring_cmds[] = {
	PTASK_IOC_PUSH, PTASK_IOC_PULL, PTASK_IOC_DATABLOCK_CREATE,
	PTASK_IOC_DATABLOCK_RELEASE, PTASK_IOC_EXEC_TAKE,
	PTASK_IOC_EXEC_COMPLETE,
};

static const uint32_t ring_sizes[] = {
	sizeof(struct ptask_push), sizeof(struct ptask_pull),
	sizeof(struct ptask_datablock_create),
	sizeof(struct ptask_datablock_release), PTASK_EXEC_TAKE_SIZE_VER0,
	sizeof(struct ptask_exec_complete),
};

static struct ptask_ns ns;
static struct ptask_client *client;

static void fail(const char *why)
{
	fprintf(stderr, "ring_fuzz: %s\n", why);
	abort();
}

static void shape(struct ptask_sqe *sqe, uint8_t ctl)
{
	unsigned int k = sqe->cmd % ARRAY_SIZE(ring_cmds);

	if (ctl & 1)
		sqe->cmd = (ring_cmds[k] & ~(0x3fffu << 16)) |
			   (sqe->cmd & (0x3fffu << 16));
	if (ctl & 2)
		sqe->arg.size = ring_sizes[k];
	if (ctl & 4) {
		sqe->arg.push.datablock = sqe->arg.push.datablock % 8 + 1;
		sqe->arg.release.handle = sqe->arg.release.handle % 8 + 1;
		sqe->arg.create.bytes %= 1 << 16;
	}
	if (ctl & 8)
		sqe->flags |= PTASK_SQE_DATA;
}

static void one_entry(const struct ptask_sqe *in)
{
	static const uint8_t zero[sizeof(union ptask_ring_arg)];
	struct ptask_caller who = { .uid = 1000, .gid = 1000, .pid = 4242 };
	struct pd_request req;
	struct ptask_cqe cqe;
	int err;

	err = pd_ring_entry_parse(in, &req);
	if (!err && (in->flags & PTASK_SQE_DATA)) {
		static const struct ptask_exec_output outs[PTASK_MAX_PORTS];

		err = pd_ring_entry_data_check(&req, PTASKD_RING_DATA_BYTES);
		if (!err && req.cmd == PTASK_IOC_EXEC_TAKE) {
			req.arg.take.flags |= PTASK_NONBLOCK;
			err = pd_request_prepare(&req);
		} else if (!err) {
			req.io.outputs = outs;
		}
	} else if (!err && pd_ring_entry_data_cmd(req.cmd)) {
		fail("an executor entry parsed without PTASK_SQE_DATA");
	}
	if (!err) {
		if (req.cmd == PTASK_IOC_PUSH)
			req.arg.push.flags |= PTASK_NONBLOCK;
		else if (req.cmd == PTASK_IOC_PULL)
			req.arg.pull.flags |= PTASK_NONBLOCK;
		err = ptask_core_call(client, &who, req.cmd, &req.arg, &req.io);
	}
	pd_ring_entry_answer(in, &req, err, &cqe);
	pd_request_free(&req);
	if (cqe.user_data != in->user_data)
		fail("completion with another entry's user_data");
	if (cqe.res > 0 || cqe.res < -4095)
		fail("completion result not 0 or -errno");
	if (cqe.res && memcmp(&cqe.arg, zero, sizeof(zero)))
		fail("a failed entry's completion carries a struct");
	if (cqe.flags || cqe.arena || cqe.reserved)
		fail("completion fields the checker must leave 0");
	if (!pd_ring_entry_posts(in, cqe.res) && cqe.res)
		fail("a failure that posts no completion");
}

static void entries(const uint8_t *data, size_t size)
{
	static const char *const names[] = PTASK_COUNT_NAMES;
	unsigned int i, n = 0;

	os_user_locked = 1;
	os_user_fail_alloc_after = -1;
	os_user_buf_limit = 64ULL << 20;
	if (ptask_core_ns_init(&ns, NULL))
		abort();
	client = ptask_core_client_create(&ns, NULL);
	if (!client)
		abort();
	while (size >= 1 + sizeof(struct ptask_sqe) && n++ < MAX_ENTRIES) {
		struct ptask_sqe sqe;

		memcpy(&sqe, data + 1, sizeof(sqe));
		shape(&sqe, data[0]);
		one_entry(&sqe);
		data += 1 + sizeof(sqe);
		size -= 1 + sizeof(sqe);
	}
	ptask_core_client_destroy(client);
	client = NULL;
	for (i = 0; i < PTASK_COUNT_BUFFERS; i++)
		if (ns.counts[i]) {
			fprintf(stderr, "ring_fuzz: leaked %llu %s\n",
				(unsigned long long)ns.counts[i], names[i]);
			abort();
		}
	ptask_core_ns_destroy(&ns);
	if (os_user_buffers)
		fail("leaked buffers");
}

static void region(const uint8_t *data, size_t size)
{
	unsigned char *img = malloc(size ? size : 1);
	struct ptask_sqe sqe;
	struct pc_ring r;
	int n, err;

	if (!img)
		abort();
	memcpy(img, data, size);
	err = pc_ring_attach(&r, img, size, PC_RING_SERVER);
	if (err && err != -EINVAL && err != -EPROTO)
		fail("attach: an error it must not give");
	if (!err) {
		n = pc_ring_q_ready(&r.sq);
		if (n > (int)r.sq.entries)
			fail("more ready than the queue holds");
		while (n-- > 0) {
			unsigned char *slot = pc_ring_q_slot(&r.sq);

			(void)slot;
			pc_ring_q_peek(&r.sq, &sqe);	/* ASan: inside img */
			pc_ring_q_consume(&r.sq);
		}
		n = pc_ring_q_space(&r.cq);
		if (n > (int)r.cq.entries)
			fail("more room than the queue has");
	}
	free(img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] & 1)
		region(data + 1, size - 1);
	else
		entries(data + 1, size - 1);
	return 0;
}
