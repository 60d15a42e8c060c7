// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * request.c - parse an ioctl-op request of the wire protocol the way the
 * module's ioctl path reads a user struct (kmod/dev.c): same table, same
 * size rules as copy_struct_from_user(), same checks, so both shells
 * refuse the same inputs with the same errors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/user/request.h"

/* copy_struct_from_user() on a buffer: bytes past @ksize must be zero. */
static int copy_struct(void *dst, size_t ksize, const void *src, size_t usize)
{
	const uint8_t *extra = (const uint8_t *)src + ksize;
	size_t i;

	memset(dst, 0, ksize);
	if (usize > ksize) {
		for (i = 0; i < usize - ksize; i++)
			if (extra[i])
				return -E2BIG;
		usize = ksize;
	}
	memcpy(dst, src, usize);
	return 0;
}

/* Extra bytes after the struct that the command needs. */
static int parse_extras(struct pd_request *req, const uint8_t *extra,
			size_t extra_len)
{
	union ptask_args *a = &req->arg;
	size_t need = 0;

	switch (req->cmd) {
	case PTASK_IOC_PTASK_OPEN:
		need = a->ptask_open.code_len;
		if (need)
			req->io.code = extra;
		break;
	case PTASK_IOC_EXEC_COMPLETE:
		need = (size_t)a->complete.n_outputs *
		       sizeof(struct ptask_exec_output);
		if (need)
			req->io.outputs = (const void *)extra;
		break;
	}
	/* The module would fault on a short buffer; here the bytes must be exact. */
	return extra_len == need ? 0 : -EINVAL;
}

int pd_request_parse(uint32_t op, const void *payload, size_t len,
		     struct pd_request *req)
{
	int err;

	err = pd_request_parse_struct(op, payload, len, req);
	if (err)
		return err;
	return parse_extras(req, (const uint8_t *)payload + req->usize,
			    len - req->usize);
}

int pd_request_parse_struct(uint32_t op, const void *payload, size_t len,
			    struct pd_request *req)
{
	uint32_t usize;
	int err;

	memset(req, 0, sizeof(*req));
	req->desc = ptask_core_args_desc(op);
	if (!req->desc)
		return -ENOTTY;
	req->cmd = req->desc->cmd;
	if (len < sizeof(usize))
		return -EINVAL;
	memcpy(&usize, payload, sizeof(usize));
	if (usize < req->desc->ver0)
		return -EINVAL;
	if (usize > 4096)	/* PAGE_SIZE in the module */
		return -E2BIG;
	if (usize > len)
		return -EINVAL;
	req->usize = usize;
	err = copy_struct(&req->arg, req->desc->ksize, payload, usize);
	if (err)
		return err;
	return ptask_core_args_check(req->cmd, &req->arg);
}

int pd_request_prepare(struct pd_request *req)
{
	union ptask_args *a = &req->arg;
	uint32_t n;

	switch (req->cmd) {
	case PTASK_IOC_EXEC_TAKE:
		n = pd_take_max_invocations(&a->take);
		req->take_inv = calloc(n ? n : 1, sizeof(*req->take_inv));
		n = pd_take_max_ports(&a->take);
		req->take_ports = calloc(n ? n : 1, sizeof(*req->take_ports));
		if (!req->take_inv || !req->take_ports)
			return -ENOMEM;
		req->io.invocations = req->take_inv;
		req->io.ports = req->take_ports;
		return 0;
	case PTASK_IOC_EXEC_PTASK_INFO:
		if (!a->info.code)
			return 0;
		n = a->info.code_len < PTASK_CODE_MAX_BYTES ?
		    a->info.code_len : PTASK_CODE_MAX_BYTES;
		req->code_out = malloc(n ? n : 1);
		if (!req->code_out)
			return -ENOMEM;
		req->io.code_out = req->code_out;
		req->io.code_out_len = n;
		return 0;
	case PTASK_IOC_EXEC_FORGOTTEN:
		n = a->forgotten.max_handles < PTASK_FORGOTTEN_MAX ?
		    a->forgotten.max_handles : PTASK_FORGOTTEN_MAX;
		req->forgotten = calloc(n, sizeof(*req->forgotten));
		if (!req->forgotten)
			return -ENOMEM;
		req->io.forgotten = req->forgotten;
		return 0;
	}
	return 0;
}

void pd_request_free(struct pd_request *req)
{
	free(req->take_inv);
	free(req->take_ports);
	free(req->code_out);
	free(req->forgotten);
	req->forgotten = NULL;
	req->take_inv = NULL;
	req->take_ports = NULL;
	req->code_out = NULL;
}

int pd_request_reply(const struct pd_request *req, int err, void **out,
		     size_t *out_len)
{
	const union ptask_args *a = &req->arg;
	size_t st = 0, inv = 0, ports = 0, code = 0, total;
	uint8_t *p;

	*out = NULL;
	*out_len = 0;
	if (err)
		return 0;
	if (req->desc->copy_out)
		st = req->usize < req->desc->ksize ? req->usize : req->desc->ksize;
	if (req->cmd == PTASK_IOC_EXEC_TAKE) {
		inv = (size_t)a->take.n_invocations * sizeof(*req->take_inv);
		ports = (size_t)a->take.n_ports * sizeof(*req->take_ports);
	} else if (req->cmd == PTASK_IOC_EXEC_PTASK_INFO && a->info.code) {
		code = a->info.code_len;
	} else if (req->cmd == PTASK_IOC_EXEC_FORGOTTEN) {
		/* after the struct, where a take's invocations would be */
		inv = (size_t)a->forgotten.n_handles * sizeof(*req->forgotten);
	}
	total = st + inv + ports + code;
	if (!total)
		return 0;
	p = malloc(total);
	if (!p)
		return -ENOMEM;
	memcpy(p, a, st);
	if (inv)
		memcpy(p + st, req->cmd == PTASK_IOC_EXEC_FORGOTTEN ?
		       (const void *)req->forgotten :
		       (const void *)req->take_inv, inv);
	if (ports)
		memcpy(p + st + inv, req->take_ports, ports);
	if (code)
		memcpy(p + st + inv + ports, req->code_out, code);
	*out = p;
	*out_len = total;
	return 0;
}
