// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * sockfuzz.c - the user-mode equivalent of the in-guest ioctl fuzzer
 * (tests/kselftest/fuzz_test.c): one client process speaking ptaskd's
 * wire protocol (uapi/ptaskd.h) badly on purpose.
 *
 * It says HELLO (or not, or twice, or attaches to a token it made up),
 * then sends messages whose op is an ioctl, an admin op or a random word,
 * whose payload is the op's struct with random and boundary fields and
 * handles from what replies returned, or random bytes of a random
 * length, with a header that lies about the length now and then; it
 * stops mid-message, opens more connections and hangs some up.  Every
 * reply is read (or the connection is found closed, which is the answer
 * to garbage).  The parent (ptaskd_e2e.c) runs several at once and
 * kills some; what is checked is that ptaskd lives, still serves, and
 * that every object it held for them goes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include "common/msg.h"
#include "sockfuzz.h"
#include "uapi/ptaskd.h"

struct sf {
	__u64 rng;
	__u32 handles[32];
	unsigned int nhandles;
	__u64 token;
};

static __u64 sf_next(struct sf *f)
{
	__u64 x = f->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	f->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static __u32 below(struct sf *f, __u32 n)
{
	return n ? (__u32)(sf_next(f) % n) : 0;
}

static __u32 handle(struct sf *f)
{
	__u32 n = f->nhandles < 32 ? f->nhandles : 32;

	return n && below(f, 4) ? f->handles[below(f, n)] : below(f, 64);
}

static __u32 word(struct sf *f)
{
	static const __u32 edge[] = {
		0, 1, 2, 7, 64, 4096, 65536, 0x7fffffff, 0x80000000,
		0xffffffff,
	};

	switch (below(f, 6)) {
	case 0:
	case 1:
		return handle(f);
	case 2:
		return edge[below(f, sizeof(edge) / sizeof(edge[0]))];
	case 3:
		return (__u32)sf_next(f);
	default:
		return 0;
	}
}

static const __u32 ops[] = {
	PTASK_IOC_GRAPH_OPEN, PTASK_IOC_TEMPLATE_OPEN, PTASK_IOC_PTASK_OPEN,
	PTASK_IOC_PORT_OPEN, PTASK_IOC_CHANNEL_OPEN, PTASK_IOC_LOOKUP,
	PTASK_IOC_DATABLOCK_CREATE, PTASK_IOC_DATABLOCK_RELEASE,
	PTASK_IOC_PUSH, PTASK_IOC_PULL, PTASK_IOC_GRAPH_RUN,
	PTASK_IOC_GRAPH_TERMINATE, PTASK_IOC_GRAPH_CLOSE,
	PTASK_IOC_PTASK_SET_PRIORITY, PTASK_IOC_PTASK_SET_GEOMETRY,
	PTASK_IOC_EXEC_TAKE, PTASK_IOC_EXEC_COMPLETE,
	PTASK_IOC_EXEC_PTASK_INFO, PTASK_IOC_EXEC_FORGOTTEN,
	PTASKD_OP_HELLO, PTASKD_OP_MAP, PTASKD_OP_INFO, PTASKD_OP_SET_POLICY,
	PTASKD_OP_SCHED_GET, PTASKD_OP_SCHED_SET, PTASKD_OP_PROCS,
	PTASKD_OP_OBJECTS, PTASKD_OP_SET_PRIO, PTASKD_OP_RING_SETUP,
	PTASKD_OP_EXEC_REGISTER, PTASKD_OP_EXEC_CONNECT,
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))

/* HELLO as a new client (@token 0) or attached to @token; *@got: ours. */
static int hello(int fd, __u64 token, __u64 *got)
{
	struct ptaskd_hello h = { .version = PTASKD_PROTO_VERSION,
				  .token = token };
	struct iovec out = { .iov_base = &h, .iov_len = sizeof(h) };
	struct iovec in = { .iov_base = &h, .iov_len = sizeof(h) };
	int err = pc_msg_call(fd, PTASKD_OP_HELLO, &out, &in);

	if (!err)
		*got = h.token;
	return err;
}

/* One message; its reply read.  -errno when the connection is gone. */
static int one_message(struct sf *f, int fd)
{
	static __u8 payload[8192], reply[65536];
	struct ptaskd_hdr hdr = { .magic = PTASKD_PROTO_MAGIC };
	__u32 *w = (__u32 *)payload, len, i, op;
	struct iovec iov;
	void *rep = NULL;
	int err;

	op = below(f, 16) ? ops[below(f, NOPS)] : (__u32)sf_next(f);
	len = _IOC_TYPE(op) == PTASK_IOC_MAGIC ? _IOC_SIZE(op) : 64;
	if (!below(f, 8) || len > sizeof(payload))
		len = below(f, sizeof(payload));
	memset(payload, 0, len);
	for (i = 0; i < len / 4; i++)
		w[i] = below(f, 3) ? 0 : word(f);
	if (len >= 4 && below(f, 4))
		w[0] = _IOC_TYPE(op) == PTASK_IOC_MAGIC ? _IOC_SIZE(op) : len;
	/* Blocking calls: mostly NONBLOCK, else a short deadline field. */
	if ((op == PTASK_IOC_PUSH || op == PTASK_IOC_PULL ||
	     op == PTASK_IOC_EXEC_TAKE) && len >= 8 && below(f, 4))
		w[1] |= PTASK_NONBLOCK;
	if (op == PTASK_IOC_GRAPH_OPEN && len >= 24) {
		struct ptask_graph_open *g = (void *)payload;

		g->flags = below(f, 4) ? PTASK_GRAPH_CREATE : word(f);
		g->mode = 0600;
		memcpy(g->name, "sf", 3);
	}
	hdr.op = op;
	hdr.len = len;
	if (!below(f, 64))
		hdr.len = len + 1 + below(f, 64);	/* lies: more follows */
	if (!below(f, 128))
		hdr.magic = (__u32)sf_next(f);
	iov.iov_base = payload;
	iov.iov_len = len;
	if (hdr.len != len) {
		/* Send the header and what there is by hand, then hang up. */
		(void)!write(fd, &hdr, sizeof(hdr));
		(void)!write(fd, payload, len);
		return -ECONNRESET;
	}
	err = pc_msg_send(fd, &hdr, &iov, 1, -1);
	if (err)
		return err;
	err = pc_msg_recv_alloc(fd, &hdr, &rep, NULL);
	if (err)
		return err;
	/* A handle-shaped word of a successful reply feeds the pool. */
	if (!hdr.err && rep && hdr.len >= 16 && f->nhandles < 1000) {
		memcpy(reply, rep, hdr.len < sizeof(reply) ? hdr.len : 16);
		for (i = 2; i < 4; i++)
			if (((__u32 *)reply)[i] && ((__u32 *)reply)[i] < 1u << 24)
				f->handles[f->nhandles++ % 32] =
					((__u32 *)reply)[i];
	}
	free(rep);
	return 0;
}

int e2e_sock_fuzz(const char *socket_path, __u64 seed, unsigned int n)
{
	struct sf f = { .rng = seed | 1 };
	int fd[3] = { -1, -1, -1 }, err;
	unsigned int i, k;

	for (i = 0; i < n; i++) {
		k = below(&f, 3);
		if (fd[k] < 0) {
			fd[k] = pc_msg_connect(socket_path, 2000);
			if (fd[k] < 0)
				return fd[k];
			/*
			 * HELLO: a new client, an attach to our first one,
			 * one to a made-up token, or none at all.
			 */
			if (below(&f, 8)) {
				__u64 want = !below(&f, 8) ? sf_next(&f) :
					     below(&f, 2) ? f.token : 0, got;

				err = hello(fd[k], want, &got);
				if (!err && !f.token)
					f.token = got;
			}
		}
		if (!below(&f, 32)) {
			close(fd[k]);		/* hang up mid-conversation */
			fd[k] = -1;
			continue;
		}
		if (one_message(&f, fd[k])) {
			close(fd[k]);
			fd[k] = -1;
		}
	}
	for (k = 0; k < 3; k++)
		if (fd[k] >= 0)
			close(fd[k]);
	return 0;
}
