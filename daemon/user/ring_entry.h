/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ring_entry.h - one ring entry (uapi/ptask.h, "Submission and completion
 * rings") checked and answered the way the socket's ioctl ops are
 * (request.c): the entry's struct goes through pd_request_parse(), that
 * is the module's table and ptask_core_args_check(), so a ring refuses
 * exactly what the ioctl refuses, with the same errno.  Side-effect free
 * and total over any 64 bytes, which the ring fuzz target checks.
 *
 * Locking: none; it works on a private copy of the entry.
 */
#ifndef PTASKD_RING_ENTRY_H
#define PTASKD_RING_ENTRY_H

#include <stdbool.h>
#include "daemon/user/request.h"

/*
 * Check @sqe (a copy out of the shared ring) and parse its struct into
 * @req.  Returns 0, or the errno its completion carries: -ENOTTY (no such
 * ioctl), -EOPNOTSUPP (an ioctl rings do not carry, or an executor entry
 * without PTASK_SQE_DATA), -EINVAL (unknown PTASK_SQE_* flags,
 * PTASK_SQE_DATA on another entry, a struct size beyond the entry), or
 * pd_request_parse()'s error.  A PTASK_SQE_DATA entry's struct alone is
 * parsed: what its pointer fields name in the data area is the ring
 * server's to copy (and check) into @req->io.
 */
int pd_ring_entry_parse(const struct ptask_sqe *sqe, struct pd_request *req);

/* Is @cmd (canonical) an executor entry, carried with PTASK_SQE_DATA only? */
bool pd_ring_entry_data_cmd(unsigned int cmd);

/*
 * The completion of @sqe answered with @err (@req as parse left it; its
 * struct is copied out only when @err is 0).  The PTASK_CQE_MEM fields
 * are left 0.
 */
void pd_ring_entry_answer(const struct ptask_sqe *sqe,
			  const struct pd_request *req, int err,
			  struct ptask_cqe *cqe);

/*
 * A PTASK_SQE_DATA entry parsed into @req: do the parts its pointer
 * fields name lie inside a data area of @data_bytes?  EXEC_COMPLETE's
 * @n_outputs records at @outputs; EXEC_TAKE's room for its (capped)
 * @max_invocations at @invocations and @max_ports port records and their
 * struct ptask_ring_mem at @ports.  0, -EFAULT (a part outside), -EINVAL
 * (another command).  Side-effect free.
 */
int pd_ring_entry_data_check(const struct pd_request *req,
			     uint64_t data_bytes);

/* Does @sqe answered with @err get a completion entry? */
static inline bool pd_ring_entry_posts(const struct ptask_sqe *sqe, int err)
{
	return err || !(sqe->flags & PTASK_SQE_NO_CQE_ON_SUCCESS);
}

#endif /* PTASKD_RING_ENTRY_H */
