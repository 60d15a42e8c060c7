// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ring_entry.c - see ring_entry.h.
 */
#include <errno.h>
#include <string.h>
#include "daemon/user/ring_entry.h"

/* The ioctls a ring carries. */
static bool ring_cmd(unsigned int cmd)
{
	switch (cmd) {
	case PTASK_IOC_PUSH:
	case PTASK_IOC_PULL:
	case PTASK_IOC_DATABLOCK_CREATE:
	case PTASK_IOC_DATABLOCK_RELEASE:
		return true;
	}
	return false;
}

int pd_ring_entry_parse(const struct ptask_sqe *sqe, struct pd_request *req)
{
	const struct ptask_arg_desc *desc = ptask_core_args_desc(sqe->cmd);
	uint32_t usize = sqe->arg.size;

	memset(req, 0, sizeof(*req));
	if (!desc)
		return -ENOTTY;
	if (!ring_cmd(desc->cmd))
		return -EOPNOTSUPP;
	if (sqe->flags & ~PTASK_SQE_FLAGS_ALL)
		return -EINVAL;
	/* The bytes past the entry are not the call's. */
	if (usize > sizeof(sqe->arg))
		return -EINVAL;
	/* Exactly the socket's check: the struct, and no extras. */
	return pd_request_parse(sqe->cmd, &sqe->arg, usize, req);
}

void pd_ring_entry_answer(const struct ptask_sqe *sqe,
			  const struct pd_request *req, int err,
			  struct ptask_cqe *cqe)
{
	size_t st;

	memset(cqe, 0, sizeof(*cqe));
	cqe->user_data = sqe->user_data;
	cqe->res = err;
	if (err || !req->desc || !req->desc->copy_out)
		return;
	st = req->usize < req->desc->ksize ? req->usize : req->desc->ksize;
	if (st > sizeof(cqe->arg))
		st = sizeof(cqe->arg);
	memcpy(&cqe->arg, &req->arg, st);
}
