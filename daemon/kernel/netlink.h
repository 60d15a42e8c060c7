/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * netlink.h - ptaskd's side of the "ptask" generic-netlink family
 * (uapi/ptask.h): registering a /dev/ptask fd as an executor with the
 * accelerator inventory of a backend, unregistering it, and reading
 * PTASK_CMD_GET_INFO.
 *
 * Every call opens its own netlink socket (libnl-genl-3), resolves the
 * family, sends one request and waits for its ack, then closes the
 * socket: registration happens once per daemon start, so a long-lived
 * socket would buy nothing and would need a lock.  The calls are
 * therefore safe from any thread.
 *
 * Errors: the kernel's own error from the ack (-EPERM, -EINVAL, -EBADF,
 * -EALREADY, -E2BIG, -ENOENT: see uapi/ptask.h), -ENOENT as well when the
 * family is not registered (ptask.ko is not loaded), -EMSGSIZE when the
 * request does not fit a message, -ENOMEM, and -EIO when libnl itself
 * fails (no netlink socket, a malformed reply).
 */
#ifndef PTASKD_NETLINK_H
#define PTASKD_NETLINK_H

#include <stdbool.h>
#include <stdint.h>
#include "uapi/ptask.h"
#include "daemon/backend/backend.h"

/**
 * struct pd_nl_info - the reply of PTASK_CMD_GET_INFO
 * @abi: PTASK_A_ABI_VERSION
 * @executors: registered executors
 * @counts: live objects, one per enum ptask_count (0 for those the
 *	reply did not carry)
 */
struct pd_nl_info {
	uint32_t abi;
	uint32_t executors;
	uint64_t counts[__PTASK_COUNT_MAX];
};

/* The family's id (> 0), or -ENOENT when ptask.ko is not loaded. */
int pd_nl_resolve(void);

/*
 * PTASK_CMD_EXEC_REGISTER of @exec_fd (a /dev/ptask fd of this process)
 * with one PTASK_A_ACCEL per device of @be (index, name, kind, memory,
 * cores, core and memory clocks).  Needs CAP_SYS_ADMIN.
 */
int pd_nl_exec_register(int exec_fd, const struct pd_backend *be);

/* PTASK_CMD_EXEC_UNREGISTER of @exec_fd. */
int pd_nl_exec_unregister(int exec_fd);

/* PTASK_CMD_GET_INFO. */
int pd_nl_get_info(struct pd_nl_info *info);

#endif /* PTASKD_NETLINK_H */
