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
	return pd_ring_entry_data_cmd(cmd);
}

bool pd_ring_entry_data_cmd(unsigned int cmd)
{
	return cmd == PTASK_IOC_EXEC_TAKE || cmd == PTASK_IOC_EXEC_COMPLETE;
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
	/* Executor entries only through a data area, which nothing else uses. */
	if (pd_ring_entry_data_cmd(desc->cmd) && !(sqe->flags & PTASK_SQE_DATA))
		return -EOPNOTSUPP;
	if ((sqe->flags & ~PTASK_SQE_FLAGS_ALL) ||
	    (!pd_ring_entry_data_cmd(desc->cmd) &&
	     (sqe->flags & PTASK_SQE_DATA)))
		return -EINVAL;
	/* The bytes past the entry are not the call's. */
	if (usize > sizeof(sqe->arg))
		return -EINVAL;
	/* Its pointer fields name the data area: the ring server's to read. */
	if (sqe->flags & PTASK_SQE_DATA)
		return pd_request_parse_struct(sqe->cmd, &sqe->arg, usize, req);
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

/* Is [@off, @off + @len) inside @bytes?  (No sum that can wrap.) */
static bool part_ok(uint64_t off, uint64_t len, uint64_t bytes)
{
	return off <= bytes && len <= bytes - off;
}

int pd_ring_entry_data_check(const struct pd_request *req, uint64_t data_bytes)
{
	const union ptask_args *a = &req->arg;
	uint64_t inv, ports;

	if (req->cmd == PTASK_IOC_EXEC_COMPLETE)
		return part_ok(a->complete.outputs,
			       (uint64_t)a->complete.n_outputs *
			       sizeof(struct ptask_exec_output),
			       data_bytes) ? 0 : -EFAULT;
	if (req->cmd != PTASK_IOC_EXEC_TAKE)
		return -EINVAL;
	inv = pd_take_max_invocations(&a->take);
	ports = pd_take_max_ports(&a->take);
	if (!part_ok(a->take.invocations,
		     inv * sizeof(struct ptask_invocation), data_bytes) ||
	    !part_ok(a->take.ports,
		     ports * (sizeof(struct ptask_invocation_port) +
			      sizeof(struct ptask_ring_mem)), data_bytes))
		return -EFAULT;
	return 0;
}
