// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ring_layout.c - see ring_layout.h.  The module cannot link common/, so
 * the layout it writes and the one ptaskd writes and every client checks
 * are this one file, compiled into both.
 */
#include "ring_layout.h"

static u64 align_up(u64 x)
{
	return (x + PTASK_RING_ALIGN - 1) & ~(u64)(PTASK_RING_ALIGN - 1);
}

/**
 * ptask_ring_entries_ok() - may a queue have this many slots?
 * @entries: a slot count
 *
 * Return: true for a power of two from 1 to PTASK_RING_ENTRIES_MAX.
 */
bool ptask_ring_entries_ok(u32 entries)
{
	return entries && entries <= PTASK_RING_ENTRIES_MAX &&
	       !(entries & (entries - 1));
}

/**
 * ptask_ring_layout() - lay out the header of a region
 * @sq_entries: SQ slots
 * @cq_entries: CQ slots
 * @h: the header to fill (zeroed first; on failure left zeroed)
 *
 * The header first, then the SQ's and the CQ's indices, the SQ's slots
 * and the CQ's slots, each part on a PTASK_RING_ALIGN boundary.
 *
 * Return: the region's bytes (@h->region_bytes), or 0 if a count is not
 * ptask_ring_entries_ok().
 */
u64 ptask_ring_layout(u32 sq_entries, u32 cq_entries,
		      struct ptask_ring_hdr *h)
{
	u64 off = align_up(sizeof(*h));

	memset(h, 0, sizeof(*h));
	if (!ptask_ring_entries_ok(sq_entries) ||
	    !ptask_ring_entries_ok(cq_entries))
		return 0;
	h->magic = PTASK_RING_MAGIC;
	h->version = PTASK_RING_VERSION;
	h->sq_entries = sq_entries;
	h->cq_entries = cq_entries;
	h->sqe_size = sizeof(struct ptask_sqe);
	h->cqe_size = sizeof(struct ptask_cqe);
	h->sq_off = off;
	off += sizeof(struct ptask_ring_queue);
	h->cq_off = off;
	off += sizeof(struct ptask_ring_queue);
	h->sqes_off = off;
	off = align_up(off + (u64)sq_entries * h->sqe_size);
	h->cqes_off = off;
	off = align_up(off + (u64)cq_entries * h->cqe_size);
	h->region_bytes = off;
	return off;
}

/* Is [@off, @off + @len) inside @bytes, past the header and aligned? */
static bool part_ok(u64 off, u64 len, u64 bytes)
{
	return !(off % PTASK_RING_ALIGN) && off >= PTASK_RING_ALIGN &&
	       off <= bytes && len <= bytes - off;
}

/* Do [a, a + alen) and [b, b + blen) overlap? */
static bool overlap(u64 a, u64 alen, u64 b, u64 blen)
{
	return a < b + blen && b < a + alen;
}

/**
 * ptask_ring_hdr_check() - does a header keep every rule of the layout?
 * @h: a copy of the header (never the shared one: the other side may
 *	change it between two looks)
 * @bytes: how much of the region is mapped
 *
 * Any layout that keeps the rules is accepted, not only the one
 * ptask_ring_layout() writes: magic and version, entry counts and sizes,
 * a region no larger than the mapping, every part aligned, inside it,
 * past the header and apart from the others.
 *
 * Return: 0, or -EINVAL when a rule is broken.
 */
int ptask_ring_hdr_check(const struct ptask_ring_hdr *h, u64 bytes)
{
	u64 qlen = sizeof(struct ptask_ring_queue);
	u64 sqes, cqes;

	if (h->magic != PTASK_RING_MAGIC || h->version != PTASK_RING_VERSION)
		return -EINVAL;
	if (!ptask_ring_entries_ok(h->sq_entries) ||
	    !ptask_ring_entries_ok(h->cq_entries) ||
	    h->sqe_size != sizeof(struct ptask_sqe) ||
	    h->cqe_size != sizeof(struct ptask_cqe))
		return -EINVAL;
	if (h->region_bytes > bytes)
		return -EINVAL;
	sqes = (u64)h->sq_entries * h->sqe_size;
	cqes = (u64)h->cq_entries * h->cqe_size;
	if (!part_ok(h->sq_off, qlen, h->region_bytes) ||
	    !part_ok(h->cq_off, qlen, h->region_bytes) ||
	    !part_ok(h->sqes_off, sqes, h->region_bytes) ||
	    !part_ok(h->cqes_off, cqes, h->region_bytes))
		return -EINVAL;
	if (overlap(h->sq_off, qlen, h->cq_off, qlen) ||
	    overlap(h->sq_off, qlen, h->sqes_off, sqes) ||
	    overlap(h->sq_off, qlen, h->cqes_off, cqes) ||
	    overlap(h->cq_off, qlen, h->sqes_off, sqes) ||
	    overlap(h->cq_off, qlen, h->cqes_off, cqes) ||
	    overlap(h->sqes_off, sqes, h->cqes_off, cqes))
		return -EINVAL;
	return 0;
}
