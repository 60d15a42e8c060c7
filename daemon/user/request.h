/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * request.h - one request of the wire protocol (uapi/ptaskd.h), parsed
 * and executed.  Parsing is side-effect free and total: every byte string
 * gives either a request ready for the core or a negative errno, which is
 * what the protocol fuzz target checks.
 */
#ifndef PTASKD_REQUEST_H
#define PTASKD_REQUEST_H

#include <stddef.h>
#include <stdint.h>
#include "core/ptask_core.h"
#include "uapi/ptaskd.h"
#include "daemon/user/ns_user.h"

/**
 * struct pd_request - a parsed ioctl-op request and its reply parts
 * @desc: the command's table entry
 * @cmd: the canonical command number
 * @usize: the struct's size as the client sent it
 * @arg: the struct, zero-extended
 * @io: buffers beyond the struct (pointing into the message or into
 *	@take_inv/@take_ports/@code_out)
 * @take_inv: EXEC_TAKE's invocations, allocated by pd_request_prepare
 * @take_ports: EXEC_TAKE's port records
 * @code_out: EXEC_PTASK_INFO's code buffer
 */
struct pd_request {
	const struct ptask_arg_desc *desc;
	unsigned int cmd;
	uint32_t usize;
	union ptask_args arg;
	struct ptask_call_io io;
	struct ptask_invocation *take_inv;
	struct ptask_invocation_port *take_ports;
	uint8_t *code_out;
	uint32_t *forgotten;
};

/*
 * Parse the payload of an ioctl op @op.  @req->io may point into
 * @payload, which must outlive the request.  Returns 0, -ENOTTY (no such
 * command), -EINVAL (short or inconsistent), -E2BIG (struct too large or
 * non-zero bytes past what the daemon knows), or the struct check's error.
 */
int pd_request_parse(uint32_t op, const void *payload, size_t len,
		     struct pd_request *req);
/*
 * The same for the struct alone (@len may run past it; what follows is
 * not looked at): the extras come from elsewhere (a ring's data area).
 */
int pd_request_parse_struct(uint32_t op, const void *payload, size_t len,
			    struct pd_request *req);
/*
 * EXEC_TAKE's limits as the core caps them: the most invocations and
 * port records one reply holds, whatever the caller asked for.
 */
static inline uint32_t pd_take_max_invocations(const struct ptask_exec_take *t)
{
	return t->max_invocations < PTASK_TAKE_MAX_INVOCATIONS ?
	       t->max_invocations : PTASK_TAKE_MAX_INVOCATIONS;
}

static inline uint32_t pd_take_max_ports(const struct ptask_exec_take *t)
{
	return t->max_ports < PTASK_TAKE_MAX_PORTS ? t->max_ports :
	       PTASK_TAKE_MAX_PORTS;
}

/*
 * In a ring's data area (PTASK_SQE_DATA), where a take's struct
 * ptask_ring_mem records start: right after room for its port records.
 */
static inline uint64_t pd_take_mems_offset(const struct ptask_exec_take *t)
{
	return t->ports + (uint64_t)pd_take_max_ports(t) *
			  sizeof(struct ptask_invocation_port);
}

/* Allocate the reply buffers EXEC_TAKE and EXEC_PTASK_INFO need. */
int pd_request_prepare(struct pd_request *req);
void pd_request_free(struct pd_request *req);
/*
 * The reply payload of a request the core answered with @err: the
 * struct (when the command copies out) and its extras.  *@out is
 * malloc'd (NULL with *@out_len 0 when there is nothing to send).
 */
int pd_request_reply(const struct pd_request *req, int err, void **out,
		     size_t *out_len);

#endif /* PTASKD_REQUEST_H */
