/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * twins.h - the host twins ptaskd's cpu and sim backends run
 * (uapi/ptask_twin.h): loading twin libraries from a directory, and
 * finding the twin of a ptask's exact code.
 *
 * ptaskd holds no application's twins: encfs-gpu, the gesture demo, the
 * gemm example, bench/ and the tests each build their own library
 * (build/twins/<name>.so, installed in $(LIBDIR)/ptask/twins).
 *
 * Locking: one mutex guards the table of twins; twins are added at start
 * (and by tests) and never removed while ptaskd runs, so a twin a
 * backend found stays valid until pd_twins_unload_all().
 */
#ifndef PTASKD_TWINS_H
#define PTASKD_TWINS_H

#include <stdbool.h>
#include <stddef.h>
#include "uapi/ptask_twin.h"

/*
 * Load every "*.so" in @dir, in name order.  @dir and each file must be
 * owned by root or by ptaskd's effective uid and not writable by group
 * or others, and each file a regular file (not a symlink); a file that
 * fails these checks or exports no valid "ptask_twin_table" is refused
 * with the reason logged, and the others still load.  A missing @dir is
 * 0 unless @required (ptaskd --host-kernels named it).  0, or -errno
 * when @dir itself is missing (and @required) or refused.
 */
int pd_twins_load_dir(const char *dir, bool required);

/*
 * Add the twins of @table, linked into the program (tests; a static
 * ptaskd, which cannot dlopen).  @origin names it in the log.  A table
 * of PTASK_TWIN_ABI or PTASK_TWIN_ABI_V1 (its twins run whole).  -EINVAL
 * for a table with another ABI or an incomplete twin, -EEXIST when
 * a twin for the same entry and code is there already, -ENOSPC when
 * the table is full.
 */
int pd_twins_add(const struct ptask_twin_table *table, const char *origin);

/*
 * The twin of kernel @entry in exactly @code (@code_len bytes), or
 * -ENOENT, with the reason logged (no twin of that name at all, or
 * twins of that name but for other code).  Any thread.
 */
int pd_twin_find(const char *entry, const void *code, size_t code_len,
		 const struct ptask_twin **twin);

/*
 * The block-range entry of @twin (one pd_twin_find gave), or NULL when
 * it has none (its library is ABI 1, or its table gives none for it):
 * then it runs whole.  Any thread.
 */
ptask_twin_blocks_fn pd_twin_run_blocks(const struct ptask_twin *twin);

/* Forget every twin and close the libraries (at exit). */
void pd_twins_unload_all(void);

#endif /* PTASKD_TWINS_H */
