// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * genl.c - the "ptask" generic-netlink client (see genl.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "common/genl.h"

/* One request in flight: what its callbacks learned. */
struct genl_state {
	const struct pc_genl_req *req;
	int err;
	bool done;
};

static void note_err(struct genl_state *st, int err)
{
	if (err && !st->err)
		st->err = err;
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct genl_state *st = arg;

	(void)nla;
	note_err(st, e->error);	/* already a negative errno (or 0) */
	st->done = true;
	return NL_STOP;
}

/*
 * The ACK of a do, or the DONE that ends a dump.  A dump that failed on
 * its way says so in the DONE message's payload, an int, not in an error
 * message (a dump refused for want of CAP_NET_ADMIN is an error message:
 * the genetlink core refuses it before it starts).
 */
static int on_done(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct genl_state *st = arg;
	int err;

	if (h->nlmsg_type == NLMSG_DONE &&
	    h->nlmsg_len >= NLMSG_LENGTH(sizeof(int))) {
		memcpy(&err, nlmsg_data(h), sizeof(err));
		if (err < 0)
			note_err(st, err);
	}
	st->done = true;
	return NL_STOP;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[PTASK_A_MAX + 1];
	struct genl_state *st = arg;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, PTASK_A_MAX, NULL) < 0) {
		note_err(st, -EBADMSG);
		return NL_SKIP;
	}
	if (st->req->parse)
		note_err(st, st->req->parse(tb, st->req->parse_arg));
	return NL_OK;
}

/* A connected socket: 0, -ENOMEM or -EIO. */
static int sock_open(struct nl_sock **out)
{
	struct nl_sock *sk = nl_socket_alloc();

	if (!sk)
		return -ENOMEM;
	if (genl_connect(sk) < 0) {
		nl_socket_free(sk);
		return -EIO;
	}
	*out = sk;
	return 0;
}

/* The ids of the family (and of its events group when @group). */
static int resolve(struct nl_sock *sk, int *family, int *group)
{
	int fam, grp;

	fam = genl_ctrl_resolve(sk, PTASK_GENL_NAME);
	if (fam < 0)
		return -ENOENT;
	if (group) {
		grp = genl_ctrl_resolve_grp(sk, PTASK_GENL_NAME,
					    PTASK_GENL_MCGRP_EVENTS);
		if (grp < 0)
			return -ENOENT;
		*group = grp;
	}
	if (family)
		*family = fam;
	return 0;
}

int pc_genl_resolve(int *family, int *events_group)
{
	struct nl_sock *sk;
	int err;

	err = sock_open(&sk);
	if (err)
		return err;
	err = resolve(sk, family, events_group);
	nl_socket_free(sk);
	return err;
}

/* @req as a message to @family. */
static int build(const struct pc_genl_req *req, int family,
		 struct nl_msg **out)
{
	struct nl_msg *msg = nlmsg_alloc();
	int err = -EMSGSIZE;

	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0,
			 NLM_F_ACK | (req->dump ? NLM_F_DUMP : 0), req->cmd,
			 PTASK_GENL_VERSION))
		goto err_free_msg;
	if (req->put) {
		err = req->put(msg, req->put_arg);
		if (err)
			goto err_free_msg;
	}
	*out = msg;
	return 0;

err_free_msg:
	nlmsg_free(msg);
	return err < 0 ? err : -EMSGSIZE;
}

/* Read replies until the ack or DONE. */
static int receive(struct nl_sock *sk, struct genl_state *st)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int r = 0;

	if (!cb)
		return -ENOMEM;
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, st);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_done, st);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_done, st);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, st);
	/* nl_recvmsgs() fails after on_error said NL_STOP: trust @st. */
	while (!st->done) {
		r = nl_recvmsgs(sk, cb);
		if (r < 0 && !st->done)
			break;
	}
	nl_cb_put(cb);
	if (st->done)
		return st->err;
	if (r == -NLE_AGAIN)
		return -ETIMEDOUT;
	return st->err ? st->err : -EIO;
}

int pc_genl_call(const struct pc_genl_req *req)
{
	unsigned int ms = req->timeout_ms ? req->timeout_ms : PC_GENL_TIMEOUT_MS;
	struct timeval tv = {
		.tv_sec = ms / 1000,
		.tv_usec = (suseconds_t)(ms % 1000) * 1000,
	};
	struct genl_state st = { .req = req };
	struct nl_sock *sk;
	struct nl_msg *msg;
	int family, err;

	err = sock_open(&sk);
	if (err)
		return err;
	err = resolve(sk, &family, NULL);
	if (err)
		goto err_free_sock;
	err = build(req, family, &msg);
	if (err)
		goto err_free_sock;
	err = -EIO;
	if (setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, SO_RCVTIMEO, &tv,
		       sizeof(tv)) ||
	    nl_send_auto(sk, msg) < 0)
		goto err_free_msg;
	err = receive(sk, &st);
err_free_msg:
	nlmsg_free(msg);
err_free_sock:
	nl_socket_free(sk);
	return err;
}

static int parse_info(struct nlattr **tb, void *arg)
{
	struct pc_genl_info *info = arg;
	struct nlattr *a;
	int rem, t;

	if (tb[PTASK_A_ABI_VERSION]) {
		info->has_abi = true;
		info->abi = nla_get_u32(tb[PTASK_A_ABI_VERSION]);
	}
	if (tb[PTASK_A_EXECUTORS]) {
		info->has_executors = true;
		info->executors = nla_get_u32(tb[PTASK_A_EXECUTORS]);
	}
	if (!tb[PTASK_A_COUNTS])
		return 0;
	info->has_counts = true;
	nla_for_each_nested(a, tb[PTASK_A_COUNTS], rem) {
		t = nla_type(a);
		if (t < 1 || t > __PTASK_COUNT_MAX ||
		    nla_len(a) != (int)sizeof(uint64_t))
			continue;
		info->counts[t - 1] = nla_get_u64(a);
		info->has_count[t - 1] = true;
	}
	return 0;
}

int pc_genl_get_info(struct pc_genl_info *info)
{
	struct pc_genl_req req = {
		.cmd = PTASK_CMD_GET_INFO,
		.parse = parse_info,
		.parse_arg = info,
	};

	memset(info, 0, sizeof(*info));
	return pc_genl_call(&req);
}
