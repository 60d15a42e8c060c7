// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * netlink.c - executor registration and info over the "ptask"
 * generic-netlink family, with libnl-genl-3.  See netlink.h.
 */
#include <errno.h>
#include <string.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "daemon/kernel/netlink.h"

/* One request in flight: what its callbacks learned. */
struct nl_req {
	bool done;
	int err;
	struct pd_nl_info *info;
};

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nl_req *req = arg;

	(void)nla;
	req->err = e->error;	/* already a negative errno (or 0) */
	req->done = true;
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct nl_req *req = arg;

	(void)msg;
	req->done = true;
	return NL_STOP;
}

/* A reply of PTASK_CMD_GET_INFO (the only command that has one here). */
static int on_valid(struct nl_msg *msg, void *arg)
{
	struct nl_req *req = arg;
	struct nlattr *tb[PTASK_A_MAX + 1], *a;
	int rem, t;

	if (!req->info)
		return NL_OK;
	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, PTASK_A_MAX, NULL) < 0) {
		req->err = -EIO;
		return NL_OK;
	}
	if (tb[PTASK_A_ABI_VERSION])
		req->info->abi = nla_get_u32(tb[PTASK_A_ABI_VERSION]);
	if (tb[PTASK_A_EXECUTORS])
		req->info->executors = nla_get_u32(tb[PTASK_A_EXECUTORS]);
	if (tb[PTASK_A_COUNTS]) {
		nla_for_each_nested(a, tb[PTASK_A_COUNTS], rem) {
			t = nla_type(a);
			if (t >= 1 && t <= __PTASK_COUNT_MAX &&
			    nla_len(a) == (int)sizeof(uint64_t))
				req->info->counts[t - 1] = nla_get_u64(a);
		}
	}
	return NL_OK;
}

/* A connected generic-netlink socket and the family's id. */
static int nl_open(struct nl_sock **out, int *family)
{
	struct nl_sock *sk;
	int fam;

	sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	if (genl_connect(sk) < 0) {
		nl_socket_free(sk);
		return -EIO;
	}
	fam = genl_ctrl_resolve(sk, PTASK_GENL_NAME);
	if (fam < 0) {
		nl_socket_free(sk);
		return -ENOENT;
	}
	*out = sk;
	*family = fam;
	return 0;
}

int pd_nl_resolve(void)
{
	struct nl_sock *sk;
	int fam, r;

	r = nl_open(&sk, &fam);
	if (r)
		return r;
	nl_socket_free(sk);
	return fam;
}

/* One PTASK_A_ACCEL nest for device @i of @be. */
static int put_accel(struct nl_msg *msg, const struct pd_backend *be,
		     uint32_t i)
{
	const struct pd_device_info *d = &be->info[i];
	char name[PTASK_NAME_MAX];
	struct nlattr *accel;
	size_t len;

	/*
	 * The kernel takes at most PTASK_NAME_MAX - 1 characters; a backend
	 * may fill all of d->name without a NUL.
	 */
	len = strnlen(d->name, sizeof(d->name));
	if (len > sizeof(name) - 1)
		len = sizeof(name) - 1;
	memcpy(name, d->name, len);
	name[len] = '\0';
	accel = nla_nest_start(msg, PTASK_A_ACCEL | NLA_F_NESTED);
	if (!accel ||
	    nla_put_u32(msg, PTASK_ACCEL_A_INDEX, i) ||
	    nla_put_string(msg, PTASK_ACCEL_A_NAME, name) ||
	    nla_put_u32(msg, PTASK_ACCEL_A_KIND, d->kind) ||
	    nla_put_u64(msg, PTASK_ACCEL_A_MEMORY, d->memory) ||
	    nla_put_u32(msg, PTASK_ACCEL_A_CORES, d->cores) ||
	    nla_put_u32(msg, PTASK_ACCEL_A_CORE_KHZ, d->core_khz) ||
	    nla_put_u32(msg, PTASK_ACCEL_A_MEM_KHZ, d->mem_khz))
		return -EMSGSIZE;
	nla_nest_end(msg, accel);
	return 0;
}

static int put_accels(struct nl_msg *msg, const struct pd_backend *be)
{
	struct nlattr *accels;
	uint32_t i;
	int r;

	if (be->ndev > PD_MAX_DEVICES)
		return -EINVAL;
	/* Strict validation in the kernel wants NLA_F_NESTED on nests. */
	accels = nla_nest_start(msg, PTASK_A_ACCELS | NLA_F_NESTED);
	if (!accels)
		return -EMSGSIZE;
	for (i = 0; i < be->ndev; i++) {
		r = put_accel(msg, be, i);
		if (r)
			return r;
	}
	nla_nest_end(msg, accels);
	return 0;
}

/*
 * Sends @cmd (with PTASK_A_EXEC_FD when @exec_fd >= 0, the inventory of
 * @be when non-NULL) and returns the error of its ack.
 */
static int nl_do(uint8_t cmd, int exec_fd, const struct pd_backend *be,
		 struct pd_nl_info *info)
{
	struct nl_req req = { .info = info };
	struct nl_msg *msg;
	struct nl_cb *cb;
	struct nl_sock *sk;
	int fam, r;

	r = nl_open(&sk, &fam);
	if (r)
		return r;
	r = -ENOMEM;
	msg = nlmsg_alloc();
	if (!msg)
		goto err_free_sock;
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb)
		goto err_free_msg;
	r = -EMSGSIZE;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, fam, 0, 0, cmd,
			 PTASK_GENL_VERSION))
		goto err_put_cb;
	if (exec_fd >= 0 && nla_put_u32(msg, PTASK_A_EXEC_FD, (uint32_t)exec_fd))
		goto err_put_cb;
	if (be) {
		r = put_accels(msg, be);
		if (r)
			goto err_put_cb;
	}
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, &req);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &req);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, &req);
	r = -EIO;
	if (nl_send_auto(sk, msg) < 0)
		goto err_put_cb;
	/* nl_recvmsgs() fails after on_error said NL_STOP: trust req. */
	while (!req.done)
		if (nl_recvmsgs(sk, cb) < 0 && !req.done)
			goto err_put_cb;
	r = req.err;
err_put_cb:
	nl_cb_put(cb);
err_free_msg:
	nlmsg_free(msg);
err_free_sock:
	nl_socket_free(sk);
	return r;
}

int pd_nl_exec_register(int exec_fd, const struct pd_backend *be)
{
	if (exec_fd < 0 || !be)
		return -EINVAL;
	return nl_do(PTASK_CMD_EXEC_REGISTER, exec_fd, be, NULL);
}

int pd_nl_exec_unregister(int exec_fd)
{
	if (exec_fd < 0)
		return -EINVAL;
	return nl_do(PTASK_CMD_EXEC_UNREGISTER, exec_fd, NULL, NULL);
}

int pd_nl_get_info(struct pd_nl_info *info)
{
	memset(info, 0, sizeof(*info));
	return nl_do(PTASK_CMD_GET_INFO, -1, NULL, info);
}
