/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * genl.h - the one generic-netlink client of the "ptask" family
 * (uapi/ptask.h), on libnl-genl-3.
 *
 * DOC: Overview
 *
 * ptaskd registers its executor with it (daemon/kernel/netlink.c),
 * ptaskctl reads and sets PTSched's state with it (tools/ptaskctl), and
 * the kselftests drive the family with it (tests/kselftest/lib.c).  The
 * kselftests that check the family's datagrams one by one (dumps split
 * over datagrams, multicast events) read raw NETLINK_GENERIC sockets of
 * their own: only the family and group ids come from here.
 *
 * Every request opens a socket, resolves the family, sends one message
 * and reads until its ack (a do) or NLMSG_DONE (a dump), then closes the
 * socket.  So calls share nothing and may come from any thread; a caller
 * that makes a request once a second or less pays nothing for it.
 *
 * Errors: the kernel's own -errno (from the ack's error, or from the
 * int an NLMSG_DONE carries when a dump fails on its way), -ENOENT when
 * the family is not registered (ptask.ko is not loaded), -EMSGSIZE when
 * a request does not fit a message, -EBADMSG when a reply cannot be
 * parsed, -ETIMEDOUT when no reply datagram comes within the timeout,
 * -ENOMEM, and -EIO when libnl itself fails (no netlink socket).
 */
#ifndef PTASK_COMMON_GENL_H
#define PTASK_COMMON_GENL_H

#include <stdbool.h>
#include <stdint.h>
#include "uapi/ptask.h"

struct nl_msg;
struct nlattr;

/* How long a request waits for each reply datagram, unless it says. */
#define PC_GENL_TIMEOUT_MS	10000

/* Adds a request's attributes to @msg: 0 or -EMSGSIZE. */
typedef int (*pc_genl_put_fn)(struct nl_msg *msg, const void *arg);

/*
 * Reads one reply message, @tb its attributes by type (PTASK_A_MAX + 1
 * entries, NULL where absent): 0 or -errno (the request's result unless
 * an earlier error came first; later messages are still read).
 */
typedef int (*pc_genl_parse_fn)(struct nlattr **tb, void *arg);

/**
 * struct pc_genl_req - one request of the "ptask" family
 * @cmd: PTASK_CMD_*
 * @dump: a dump (NLM_F_DUMP): every reply message until NLMSG_DONE
 * @put: adds the request's attributes, or NULL
 * @put_arg: @put's argument
 * @parse: sees every reply message, or NULL
 * @parse_arg: @parse's argument
 * @timeout_ms: the longest wait for each reply datagram; 0:
 *	PC_GENL_TIMEOUT_MS
 */
struct pc_genl_req {
	uint8_t cmd;
	bool dump;
	pc_genl_put_fn put;
	const void *put_arg;
	pc_genl_parse_fn parse;
	void *parse_arg;
	unsigned int timeout_ms;
};

/**
 * pc_genl_resolve() - the family's ids
 * @family: the family id, or NULL
 * @events_group: the id of its PTASK_GENL_MCGRP_EVENTS multicast group,
 *	or NULL (not resolved)
 *
 * Return: 0, -ENOENT (no such family or group), -ENOMEM or -EIO.
 */
int pc_genl_resolve(int *family, int *events_group);

/**
 * pc_genl_call() - send @req and read its replies
 * @req: the request
 *
 * Return: 0 or -errno (see the top of the file).
 */
int pc_genl_call(const struct pc_genl_req *req);

/**
 * struct pc_genl_info - the reply of PTASK_CMD_GET_INFO
 * @has_abi: PTASK_A_ABI_VERSION came
 * @has_executors: PTASK_A_EXECUTORS came
 * @has_counts: PTASK_A_COUNTS came
 * @abi: PTASK_A_ABI_VERSION
 * @executors: registered executors
 * @has_count: which of @counts came
 * @counts: live objects, one per enum ptask_count (0 where none came)
 */
struct pc_genl_info {
	bool has_abi, has_executors, has_counts;
	uint32_t abi;
	uint32_t executors;
	bool has_count[__PTASK_COUNT_MAX];
	__u64 counts[__PTASK_COUNT_MAX];	/* as struct ptaskd_info's */
};

/**
 * pc_genl_get_info() - PTASK_CMD_GET_INFO
 * @info: the reply (zeroed first)
 *
 * Return: 0 or -errno as pc_genl_call().
 */
int pc_genl_get_info(struct pc_genl_info *info);

#endif /* PTASK_COMMON_GENL_H */
