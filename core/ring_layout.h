/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ring_layout.h - the layout of a ring region (uapi/ptask.h, "Submission
 * and completion rings", "Layout") and its rules, once for both sides
 * that lay regions out: ptask.ko (kmod/ring.c) and ptaskd, libptask and
 * the tests (common/ring.c, which also attaches with the checks).
 *
 * Pure functions of their arguments: no lock, no allocation, no memory
 * but what they are handed.
 */
#ifndef PTASK_RING_LAYOUT_H
#define PTASK_RING_LAYOUT_H

#include "ptask_os.h"

bool ptask_ring_entries_ok(u32 entries);
u64 ptask_ring_layout(u32 sq_entries, u32 cq_entries,
		      struct ptask_ring_hdr *h);
int ptask_ring_hdr_check(const struct ptask_ring_hdr *h, u64 bytes);

#endif /* PTASK_RING_LAYOUT_H */
