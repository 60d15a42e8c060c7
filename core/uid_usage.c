// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * uid_usage.c - datablock memory per uid, and its limit.
 *
 * DOC: Per-uid datablock memory
 *
 * Every datablock is charged, while it lives, to one uid: the uid of the
 * client that made it, or for an output an executor makes for an
 * invocation (PTASK_DATABLOCK_CREATE_OUTPUT, PTASK_TAKE_AHEAD) the uid
 * that owns the invocation's ptask, so a ptask whose outputs pile up in
 * channels spends its owner's allowance, not the executor's.  The charge
 * is the size rounded up to PTASK_UID_CHARGE_UNIT (a page: what the
 * memory costs), taken before the memory is allocated and given back
 * when the datablock dies.
 *
 * With a limit set (ns->uid_limit_bytes, 0: none), a charge that would
 * take a uid past it fails with -EDQUOT, the error a disk quota gives:
 * the uid has used its share, the machine is not out of memory.  Uid 0
 * is charged (its usage shows) but never refused, as root may use the
 * blocks a filesystem reserves: ptaskd and root's services must not be
 * starved by the tenants they serve.
 *
 * Memory a mapping keeps after its datablock died is no longer charged
 * here (the mapping holds pages the kernel charged to the allocating
 * task's memory cgroup, __GFP_ACCOUNT, and each mapping counts against
 * its process's vm.max_map_count).
 *
 * Records live in a list in uid order, one per uid with a charge, freed
 * when its charge returns to zero: a handful of uids per machine.  All
 * of it is under the namespace lock.
 */
#include "ptask_core.h"

static struct ptask_uid_usage *usage_find(struct ptask_ns *ns, u32 uid)
{
	struct ptask_list *pos;

	ptask_list_for_each(pos, &ns->uid_usage) {
		struct ptask_uid_usage *u = ptask_list_entry(pos,
				struct ptask_uid_usage, node);

		if (u->uid == uid)
			return u;
		if (u->uid > uid)
			break;
	}
	return NULL;
}

/**
 * ptask_uid_charge_bytes() - what a datablock of @bytes is charged
 * @bytes: its size (1..PTASK_DATABLOCK_MAX_BYTES)
 *
 * Return: @bytes rounded up to PTASK_UID_CHARGE_UNIT.
 */
u64 ptask_uid_charge_bytes(u64 bytes)
{
	return (bytes + PTASK_UID_CHARGE_UNIT - 1) &
	       ~(u64)(PTASK_UID_CHARGE_UNIT - 1);
}

/**
 * ptask_uid_charge() - charge @bytes to @uid
 * @ns: the namespace
 * @uid: who pays
 * @bytes: the charge (ptask_uid_charge_bytes())
 *
 * Return: 0, -EDQUOT (@uid would pass the limit) or -ENOMEM.
 */
int ptask_uid_charge(struct ptask_ns *ns, u32 uid, u64 bytes)
{
	struct ptask_uid_usage *u = usage_find(ns, uid);
	struct ptask_list *pos;
	u64 used = u ? u->bytes : 0;

	ptask_os_assert_locked(ns);
	if (uid && ns->uid_limit_bytes &&
	    (bytes > ns->uid_limit_bytes ||
	     used > ns->uid_limit_bytes - bytes)) {
		ns->uid_refusals++;
		if (u)
			u->refusals++;
		return -EDQUOT;
	}
	if (!u) {
		u = ptask_os_zalloc(sizeof(*u));
		if (!u)
			return -ENOMEM;
		u->uid = uid;
		ptask_list_for_each(pos, &ns->uid_usage)
			if (ptask_list_entry(pos, struct ptask_uid_usage,
					     node)->uid > uid)
				break;
		ptask_list_add_tail(&u->node, pos);
	}
	u->bytes += bytes;
	u->datablocks++;
	if (u->bytes > u->peak_bytes)
		u->peak_bytes = u->bytes;
	return 0;
}

/**
 * ptask_uid_uncharge() - give back a charge ptask_uid_charge() took
 * @ns: the namespace
 * @uid: who paid
 * @bytes: what it paid
 */
void ptask_uid_uncharge(struct ptask_ns *ns, u32 uid, u64 bytes)
{
	struct ptask_uid_usage *u = usage_find(ns, uid);

	ptask_os_assert_locked(ns);
	if (PTASK_WARN_ON(!u || u->bytes < bytes || !u->datablocks))
		return;
	u->bytes -= bytes;
	u->datablocks--;
	if (u->datablocks)
		return;
	PTASK_WARN_ON(u->bytes);
	ptask_list_del(&u->node);
	ptask_os_free(u);
}

/**
 * ptask_core_uid_usage() - what @uid's live datablocks are charged
 * @ns: the namespace
 * @uid: the uid
 * @out: filled (zeros for a uid with nothing charged)
 */
void ptask_core_uid_usage(struct ptask_ns *ns, u32 uid,
			  struct ptask_uid_usage_info *out)
{
	const struct ptask_uid_usage *u = usage_find(ns, uid);

	ptask_os_assert_locked(ns);
	out->uid = uid;
	out->bytes = u ? u->bytes : 0;
	out->datablocks = u ? u->datablocks : 0;
	out->refusals = u ? u->refusals : 0;
	out->limit_bytes = uid ? ns->uid_limit_bytes : 0;
}

/**
 * ptask_core_uid_next() - iterate the uids with a charge, in uid order
 * @ns: the namespace
 * @after: the last uid seen, or -1 to start
 * @out: filled when one is found
 *
 * Return: true when a uid above @after has a charge.
 */
bool ptask_core_uid_next(struct ptask_ns *ns, s64 after,
			 struct ptask_uid_usage_info *out)
{
	struct ptask_list *pos;

	ptask_os_assert_locked(ns);
	ptask_list_for_each(pos, &ns->uid_usage) {
		struct ptask_uid_usage *u = ptask_list_entry(pos,
				struct ptask_uid_usage, node);

		if ((s64)u->uid > after) {
			ptask_core_uid_usage(ns, u->uid, out);
			return true;
		}
	}
	return false;
}

/**
 * ptask_core_uid_limit_set() - set the per-uid limit
 * @ns: the namespace
 * @bytes: the most a uid other than 0 may have charged; 0: no limit
 *
 * A uid already past a new, lower limit keeps what it has; its next
 * charge is refused.
 */
void ptask_core_uid_limit_set(struct ptask_ns *ns, u64 bytes)
{
	ptask_os_assert_locked(ns);
	ns->uid_limit_bytes = bytes;
}
