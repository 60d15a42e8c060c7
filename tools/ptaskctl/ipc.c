// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ipc.c - how ptaskctl reaches ptask: the generic-netlink family of
 * ptask.ko (kernel mode, uapi/ptask.h) and the UNIX stream socket of
 * ptaskd (user mode, uapi/ptaskd.h: a header, then exactly @len
 * bytes).  Every function returns 0 or -errno.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include "ptaskctl.h"

#define IPC_TIMEOUT_S	5	/* a daemon that does not answer in time */

/* --- kernel: generic netlink ------------------------------------------------ */

struct nl_req {
	ipc_nl_parse_fn parse;
	void *arg;
	int err;
	bool done;
};

static int nl_error_cb(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nl_req *req = arg;

	(void)nla;
	req->err = e->error;
	req->done = true;
	return NL_STOP;
}

/*
 * The ACK of a do, or the DONE that ends a dump.  A dump that failed on
 * its way says so in the DONE message's payload, an int, not in an error
 * message (a dump refused for want of CAP_NET_ADMIN is an error message:
 * the genetlink core refuses it before it starts).
 */
static int nl_done_cb(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct nl_req *req = arg;
	int err;

	if (h->nlmsg_type == NLMSG_DONE &&
	    h->nlmsg_len >= NLMSG_LENGTH(sizeof(int))) {
		memcpy(&err, nlmsg_data(h), sizeof(err));
		if (err < 0 && !req->err)
			req->err = err;
	}
	req->done = true;
	return NL_STOP;
}

static int nl_valid_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[PTASK_A_MAX + 1];
	struct nl_req *req = arg;
	int err;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, PTASK_A_MAX, NULL) < 0) {
		req->err = -EBADMSG;
		return NL_SKIP;
	}
	if (!req->parse)
		return NL_OK;
	err = req->parse(tb, req->arg);
	if (err && !req->err)
		req->err = err;
	return NL_OK;
}

static void parse_counts(struct ptaskctl_kernel_info *info, struct nlattr *nest)
{
	struct nlattr *a;
	int rem, t;

	info->has_counts = true;
	nla_for_each_nested(a, nest, rem) {
		t = nla_type(a);
		if (t < 1 || t > __PTASK_COUNT_MAX || nla_len(a) != 8)
			continue;
		info->counts[t - 1] = nla_get_u64(a);
		info->has_count[t - 1] = true;
	}
}

static int parse_info(struct nlattr **tb, void *arg)
{
	struct ptaskctl_kernel_info *info = arg;

	if (tb[PTASK_A_ABI_VERSION]) {
		info->has_abi = true;
		info->abi_version = nla_get_u32(tb[PTASK_A_ABI_VERSION]);
	}
	if (tb[PTASK_A_EXECUTORS]) {
		info->has_executors = true;
		info->executors = nla_get_u32(tb[PTASK_A_EXECUTORS]);
	}
	if (tb[PTASK_A_COUNTS])
		parse_counts(info, tb[PTASK_A_COUNTS]);
	return 0;
}

/* A connected generic-netlink socket and the family's id, or -errno. */
static int nl_open(struct nl_sock **skp, int *family)
{
	struct nl_sock *sk = nl_socket_alloc();
	int fam;

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
	*skp = sk;
	*family = fam;
	return 0;
}

int ipc_kernel_probe(void)
{
	struct nl_sock *sk;
	int fam, ret;

	ret = nl_open(&sk, &fam);
	if (!ret)
		nl_socket_free(sk);
	return ret;
}

int ipc_nl_call(uint8_t cmd, bool dump, ipc_nl_put_fn put, const void *put_arg,
		ipc_nl_parse_fn parse, void *arg)
{
	struct nl_req req = { .parse = parse, .arg = arg };
	struct nl_msg *msg = NULL;
	struct nl_cb *cb = NULL;
	struct nl_sock *sk;
	int fam, ret;

	ret = nl_open(&sk, &fam);
	if (ret)
		return ret;
	msg = nlmsg_alloc();
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!msg || !cb) {
		ret = -ENOMEM;
		goto out;
	}
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, fam, 0,
			 NLM_F_ACK | (dump ? NLM_F_DUMP : 0), cmd,
			 PTASK_GENL_VERSION) ||
	    (put && put(msg, put_arg))) {
		ret = -EMSGSIZE;
		goto out;
	}
	nl_cb_err(cb, NL_CB_CUSTOM, nl_error_cb, &req);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, nl_done_cb, &req);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, nl_done_cb, &req);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, nl_valid_cb, &req);
	if (nl_send_auto(sk, msg) < 0) {
		ret = -EIO;
		goto out;
	}
	while (!req.done) {
		if (nl_recvmsgs(sk, cb) < 0 && !req.done) {
			ret = req.err ? req.err : -EIO;
			goto out;
		}
	}
	ret = req.err;
out:
	if (cb)
		nl_cb_put(cb);
	if (msg)
		nlmsg_free(msg);
	nl_socket_free(sk);
	return ret;
}

int ipc_kernel_info(struct ptaskctl_kernel_info *info)
{
	memset(info, 0, sizeof(*info));
	return ipc_nl_call(PTASK_CMD_GET_INFO, false, NULL, NULL, parse_info,
			   info);
}

/* --- user: ptaskd's socket ---------------------------------------------------- */

static int user_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = IPC_TIMEOUT_S };
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/* Exactly @len bytes, or -errno (-ENOTCONN: the daemon hung up). */
static int read_full(int fd, void *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = recv(fd, buf, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (n == 0)
			return -ENOTCONN;
		buf = (char *)buf + n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EPIPE ? -ENOTCONN : -errno;
		buf = (const char *)buf + n;
		len -= (size_t)n;
	}
	return 0;
}

/* Send one request: the header, then @req_len bytes of @req. */
static int user_send(int fd, uint32_t op, const void *req, uint32_t req_len)
{
	struct ptaskd_hdr h = { .magic = PTASKD_PROTO_MAGIC, .op = op,
				.len = req_len };
	int ret;

	ret = write_full(fd, &h, sizeof(h));
	if (!ret && req_len)
		ret = write_full(fd, req, req_len);
	return ret;
}

/* The reply's header: its payload's length, or -errno (the daemon's). */
static int user_reply_header(int fd, uint32_t op, uint32_t *len)
{
	struct ptaskd_hdr h;
	int ret;

	ret = read_full(fd, &h, sizeof(h));
	if (ret)
		return ret;
	if (h.magic != PTASKD_PROTO_MAGIC || h.op != op || h.len > PTASKD_MSG_MAX)
		return -EPROTO;
	if (h.err)
		return h.err < 0 && h.err >= -4095 ? h.err : -EPROTO;
	*len = h.len;
	return 0;
}

int ipc_user_call(int fd, uint32_t op, const void *req, uint32_t req_len,
		  void *rep, uint32_t rep_min, uint32_t rep_max)
{
	unsigned char skip[256];
	uint32_t len, n;
	int ret;

	ret = user_send(fd, op, req, req_len);
	if (!ret)
		ret = user_reply_header(fd, op, &len);
	if (ret)
		return ret;
	if (len < rep_min)
		return -EPROTO;
	n = len < rep_max ? len : rep_max;
	if (rep_max)
		memset(rep, 0, rep_max);
	ret = read_full(fd, rep, n);
	for (len -= n; !ret && len; len -= n) {
		n = len < sizeof(skip) ? len : sizeof(skip);
		ret = read_full(fd, skip, n);
	}
	return ret;
}

int ipc_user_call_alloc(int fd, uint32_t op, const void *req,
			uint32_t req_len, void **rep, uint32_t *rep_len)
{
	uint32_t len;
	int ret;

	*rep = NULL;
	*rep_len = 0;
	ret = user_send(fd, op, req, req_len);
	if (!ret)
		ret = user_reply_header(fd, op, &len);
	if (ret || !len)
		return ret;
	*rep = malloc(len);
	if (!*rep)
		return -ENOMEM;
	ret = read_full(fd, *rep, len);
	if (ret) {
		free(*rep);
		*rep = NULL;
		return ret;
	}
	*rep_len = len;
	return 0;
}

int ipc_user_open(const char *path, int32_t *daemon_pid)
{
	struct ptaskd_hello hello = { .version = PTASKD_PROTO_VERSION };
	int fd, ret;

	fd = user_connect(path);
	if (fd < 0)
		return fd;
	ret = ipc_user_call(fd, PTASKD_OP_HELLO, &hello, sizeof(hello),
			    &hello, sizeof(hello), sizeof(hello));
	if (ret) {
		close(fd);
		return ret;
	}
	if (daemon_pid)
		*daemon_pid = hello.pid;
	return fd;
}

int ipc_user_info(const char *path, struct ptaskctl_user_info *info)
{
	int fd, ret;

	memset(info, 0, sizeof(*info));
	fd = ipc_user_open(path, &info->pid);
	if (fd < 0)
		return fd;
	ret = ipc_user_call(fd, PTASKD_OP_INFO, NULL, 0, &info->info,
			    sizeof(info->info), sizeof(info->info));
	/* The daemon's strings: make sure they end. */
	info->info.backend[sizeof(info->info.backend) - 1] = '\0';
	info->info.policy[sizeof(info->info.policy) - 1] = '\0';
	close(fd);
	return ret;
}

int ipc_user_set_policy(const char *path, const char *policy)
{
	struct ptaskd_set_policy req = { };
	int fd, ret;

	if (strlen(policy) >= sizeof(req.policy))
		return -EINVAL;
	strcpy(req.policy, policy);
	fd = ipc_user_open(path, NULL);
	if (fd < 0)
		return fd;
	ret = ipc_user_call(fd, PTASKD_OP_SET_POLICY, &req, sizeof(req),
			    NULL, 0, 0);
	close(fd);
	return ret;
}
