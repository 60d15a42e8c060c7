// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ipc.c - how ptaskctl reaches ptask: the generic-netlink family of
 * ptask.ko (kernel mode, uapi/ptask.h) and the UNIX stream socket of
 * ptaskd (user mode, uapi/ptaskd.h), both through the common library
 * (common/genl.h, common/msg.h).  Every function returns 0 or -errno.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/genl.h"
#include "common/msg.h"
#include "ptaskctl.h"

#define IPC_TIMEOUT_MS	5000	/* a daemon that does not answer in time */

/* --- kernel: generic netlink ------------------------------------------------ */

int ipc_kernel_probe(void)
{
	return pc_genl_resolve(NULL, NULL);
}

int ipc_kernel_info(struct pc_genl_info *info)
{
	return pc_genl_get_info(info);
}

/* --- user: ptaskd's socket ---------------------------------------------------- */

int ipc_user_call(int fd, uint32_t op, const void *req, uint32_t req_len,
		  void *rep, uint32_t rep_min, uint32_t rep_max)
{
	struct iovec out = { .iov_base = (void *)req, .iov_len = req_len };
	struct iovec in = { .iov_base = rep, .iov_len = rep_max };
	int ret;

	/* (@rep may be @req: HELLO answers in the struct it was asked in) */
	ret = pc_msg_call(fd, op, &out, &in);
	if (!ret && in.iov_len < rep_min)
		ret = -EPROTO;
	if (!ret && in.iov_len < rep_max)
		memset((char *)rep + in.iov_len, 0, rep_max - in.iov_len);
	return ret;
}

int ipc_user_call_alloc(int fd, uint32_t op, const void *req,
			uint32_t req_len, void **rep, uint32_t *rep_len)
{
	struct ptaskd_hdr h = {
		.magic = PTASKD_PROTO_MAGIC, .op = op, .len = req_len,
	};
	struct iovec out = { .iov_base = (void *)req, .iov_len = req_len };
	int ret;

	*rep = NULL;
	*rep_len = 0;
	ret = pc_msg_send(fd, &h, &out, 1, -1);
	if (!ret)
		ret = pc_msg_recv_alloc(fd, &h, rep, NULL);
	if (!ret)
		ret = pc_msg_reply_err(&h, op);
	if (ret) {
		free(*rep);
		*rep = NULL;
		return ret;
	}
	*rep_len = h.len;
	return 0;
}

int ipc_user_open(const char *path, int32_t *daemon_pid)
{
	struct ptaskd_hello hello = { .version = PTASKD_PROTO_VERSION };
	int fd, ret;

	fd = pc_msg_connect(path, IPC_TIMEOUT_MS);
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
