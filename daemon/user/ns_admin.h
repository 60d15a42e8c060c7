/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ns_admin.h - PTSched's administration in user mode: the namespace side
 * of PTASKD_OP_SCHED_GET, _SCHED_SET, _PROCS, _OBJECTS, _SET_PRIO and
 * _SET_POLICY (uapi/ptaskd.h), the twin of kmod/netlink_sched.c.
 *
 * Three steps, so the parser and the core side can be fuzzed without a
 * daemon (tests/fuzz/proto_fuzz.c): pd_admin_parse() checks a request's
 * shape and nothing else; pd_admin_run_locked() checks the caller and
 * the values and calls the core, under the namespace lock; pd_ns_admin()
 * takes that lock around it.  server.c only moves bytes.
 */
#ifndef PTASKD_NS_ADMIN_H
#define PTASKD_NS_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/ptask_core.h"
#include "uapi/ptaskd.h"

struct pd_ns;

/**
 * struct pd_admin_req - a request pd_admin_parse() accepted
 * @op: the PTASKD_OP_* it is
 * @sched_set: PTASKD_OP_SCHED_SET
 * @list: PTASKD_OP_PROCS, PTASKD_OP_OBJECTS
 * @prio: PTASKD_OP_SET_PRIO
 * @policy: PTASKD_OP_SET_POLICY (the name, NUL-terminated)
 */
struct pd_admin_req {
	uint32_t op;
	union {
		struct ptaskd_sched_set sched_set;
		struct ptaskd_list list;
		struct ptaskd_set_prio prio;
		struct ptaskd_set_policy policy;
	};
};

/* Is @op one of the ops above (else server.c handles it)? */
bool pd_admin_op(uint32_t op);

/*
 * Check @len bytes at @payload as @op's request: its size, reserved
 * fields, flags and target, not its values.  0 or -EINVAL.
 */
int pd_admin_parse(uint32_t op, const void *payload, size_t len,
		   struct pd_admin_req *req);

/*
 * Run @req for @who under the namespace lock: -EPERM for ops that need
 * root, then the core.  On 0, *@out (malloc'd, the caller frees it; NULL
 * when *@out_len is 0) is the reply's payload.
 */
int pd_admin_run_locked(struct ptask_ns *ns, const struct ptask_caller *who,
			const struct pd_admin_req *req, void **out,
			size_t *out_len);

/* pd_admin_run_locked() with @ns's lock taken. */
int pd_ns_admin(struct pd_ns *ns, const struct ptask_caller *who,
		const struct pd_admin_req *req, void **out, size_t *out_len);

/*
 * The policy executors are told to use (enum ptask_policy;
 * PTASK_POLICY_DEFAULT: ptaskd's own --policy), for PTASKD_OP_INFO.
 */
uint32_t pd_ns_admin_policy(struct pd_ns *ns);

/*
 * @seen(@arg, uid, pid) for every live ptask's owner (its uid and its
 * creator's pid key; once per ptask), under the namespace lock (@seen
 * must not call into the namespace): the executors' supervisor asks who
 * needs one (ptaskd --executors uid|process).
 */
void pd_ns_ptask_owners(struct pd_ns *ns,
			void (*seen)(void *arg, uint32_t uid, int32_t pid),
			void *arg);

#endif /* PTASKD_NS_ADMIN_H */
