/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * netlink.h - ptaskd's side of the "ptask" generic-netlink family
 * (uapi/ptask.h): registering a /dev/ptask fd as an executor with the
 * accelerator inventory of a backend, and unregistering it.  The client
 * itself (sockets, acks, PTASK_CMD_GET_INFO, resolving the family) is
 * common/genl.h's.
 *
 * Every call opens its own netlink socket, sends one request and waits
 * for its ack, then closes the socket: registration happens once per
 * daemon start, so a long-lived socket would buy nothing and would need
 * a lock.  The calls are therefore safe from any thread.
 *
 * Errors: the kernel's own error from the ack (-EPERM, -EINVAL, -EBADF,
 * -EALREADY, -E2BIG, -ENOENT: see uapi/ptask.h), -ENOENT as well when the
 * family is not registered (ptask.ko is not loaded), -EMSGSIZE when the
 * request does not fit a message, and the other errors of
 * pc_genl_call().
 */
#ifndef PTASKD_NETLINK_H
#define PTASKD_NETLINK_H

#include "uapi/ptask.h"
#include "daemon/backend/backend.h"

/*
 * PTASK_CMD_EXEC_REGISTER of @exec_fd (a /dev/ptask fd of this process)
 * with one PTASK_A_ACCEL per device of @be (index, name, kind, memory,
 * cores, core and memory clocks), and with @uid >= 0 as that uid's
 * executor (PTASK_A_OBJ_OWNER_UID).  Needs CAP_NET_ADMIN (an admin
 * command) and CAP_SYS_ADMIN.
 */
int pd_nl_exec_register(int exec_fd, const struct pd_backend *be,
			int64_t uid);

/* PTASK_CMD_EXEC_UNREGISTER of @exec_fd. */
int pd_nl_exec_unregister(int exec_fd);

/*
 * @seen(@seen_arg, uid, pid) for the owner of every ptask of the module
 * (PTASK_CMD_GET_OBJECT, a dump: the admin tool's view; needs
 * CAP_SYS_ADMIN): the supervisor's owners op (daemon/supervisor.h).
 * @arg is unused.
 */
int pd_nl_ptask_owners(void *arg,
		       void (*seen)(void *seen_arg, uint32_t uid, int32_t pid),
		       void *seen_arg);

#endif /* PTASKD_NETLINK_H */
