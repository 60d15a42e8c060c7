// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ptaskd_twins.c - the twins of the guest's ptaskd.  The test guest has
 * no dynamic loader (busybox and static programs only), so its ptaskd
 * cannot dlopen twin libraries: this file, linked into that static
 * build alone (daemon/Makefile.inc, $(PD_B)/vm/ptaskd), adds the tests',
 * the gemm example's and the benchmarks' twin tables at start.
 */
#include <stdio.h>
#include "daemon/backend/twins.h"

extern const struct ptask_twin_table test_twin_table, gemm_twin_table,
	bench_twin_table;

__attribute__((constructor)) static void vm_twins_add(void)
{
	if (pd_twins_add(&test_twin_table, "tests/twins") ||
	    pd_twins_add(&gemm_twin_table, "examples/gemm") ||
	    pd_twins_add(&bench_twin_table, "bench"))
		fprintf(stderr, "ptaskd: the guest's twins could not be added\n");
}
