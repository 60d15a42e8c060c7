/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * soak.h - what a soak client (bench/soak_client.c) tells the driver
 * (bench/soak.py) while it runs: one struct soak_slot per client in a
 * shared file, written by the client alone with relaxed atomic stores,
 * read by the driver at its own pace.  The driver reads it with
 * Python's struct module ("<16Q" below): keep the two in step.
 */
#ifndef PTASK_BENCH_SOAK_H
#define PTASK_BENCH_SOAK_H

#include <stdint.h>

#define SOAK_MAX_SLOTS	1024

/* Where the client is (struct soak_slot.phase). */
enum soak_phase {
	SOAK_STARTING,
	SOAK_OPENING,
	SOAK_BUILDING,
	SOAK_PUSHING,
	SOAK_PULLING,
	SOAK_TERMINATING,
	SOAK_CLOSING,
	SOAK_DONE,
};

/**
 * struct soak_slot - one client's progress (128 bytes)
 * @pid: the client process
 * @index: its slot
 * @phase: enum soak_phase
 * @rounds: rounds whose result matched the reference
 * @graphs: graphs built and run
 * @contexts: contexts opened
 * @wrong: results that did not match
 * @errors: rounds or graphs that failed with an error
 * @abandoned: exits on purpose with everything open (0 or 1)
 * @last_ok_ns: CLOCK_MONOTONIC of its last right result (or its start)
 * @last_err: the last error, a negative errno
 */
struct soak_slot {
	uint64_t pid;
	uint64_t index;
	uint64_t phase;
	uint64_t rounds;
	uint64_t graphs;
	uint64_t contexts;
	uint64_t wrong;
	uint64_t errors;
	uint64_t abandoned;
	uint64_t last_ok_ns;
	int64_t last_err;
	uint64_t reserved[5];
};

_Static_assert(sizeof(struct soak_slot) == 128, "soak.py reads 16 u64");

#endif /* PTASK_BENCH_SOAK_H */
