/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * graphs.h - the graphs ptaskd_e2e.c runs through libptask, the same in
 * either transport:
 *
 *   chain:     push a, b -> [vec_add (GPU)] -> c -> [double (CPU ptask,
 *              run by this program's libptask worker)] -> pull 2 (a + b)
 *   gpu chain: push a, b -> [vec_add] -> c -> [vec_add (c + c)] -> pull:
 *              the same result from GPU stages only (c on the device side)
 *   gemm:      push A, B -> [sgemm (the gemm example's PTX)] -> pull C,
 *              checked against a reference
 *   busy:      push seq -> [ptask_busy (the benchmarks' PTX), ns long on
 *              the sim backend] -> pull seq + 1
 *
 * Every GPU ptask carries the code its twin (tests/twins, examples/gemm,
 * bench) is bound to, except where a test hands in other code.  Every
 * function returns 0 or -errno.
 */
#ifndef PTASK_TESTS_E2E_GRAPHS_H
#define PTASK_TESTS_E2E_GRAPHS_H

#include <stddef.h>
#include <stdint.h>
#include "libptask.h"

#define E2E_N		4096	/* floats per chain vector */
#define E2E_SEC		1000000000LL

struct e2e_chain {
	struct ptask_ctx *ctx;	/* the caller's */
	uint32_t graph, in_a, in_b, out;
	float mul;		/* out = mul x (a + b); 0: 2 */
};

/* The chain, running; @entry in @code (@code_len bytes) is the GPU kernel. */
int e2e_chain_build_code(struct e2e_chain *ch, const char *entry,
			 const char *code, size_t code_len);
/* The chain with the tests' code (tests/twins: vec_add has a twin). */
int e2e_chain_build(struct e2e_chain *ch, const char *entry);
/* The GPU-only chain, running: two vec_adds, the second of c and c. */
int e2e_gpu_chain_build(struct e2e_chain *ch);
/* The same with @hops vec_adds (2..8), each after the first doubling. */
int e2e_gpu_chain_hops_build(struct e2e_chain *ch, int hops);
/*
 * A line of @hops GPU ptasks (2..8), each feeding the next alone: a
 * vec_add, then vec_scales by 2 (alpha and n on sticky ports): what
 * ptaskd takes as one segment (PTASK_TAKE_FUSE).
 */
int e2e_gpu_line_build(struct e2e_chain *ch, int hops);
/* Round @k: pushes a = i + k, b = 2 i. */
int e2e_chain_push(struct e2e_chain *ch, int k);
/* The same with ptask_push_async, each datablock released once queued. */
int e2e_chain_push_async(struct e2e_chain *ch, int k);
/* Pulls round @k's result within @timeout_ns and checks every element. */
int e2e_chain_pull(struct e2e_chain *ch, int k, int64_t timeout_ns);
/*
 * The same, keeping the output: *@out the caller's to release (NULL when
 * the pull failed), even when a check failed.
 */
int e2e_chain_pull_kept(struct e2e_chain *ch, int k, int64_t timeout_ns,
			struct ptask_db **out);

/* Builds an sgemm graph, runs round @k (48 x 48), checks C, closes it. */
int e2e_gemm_once(struct ptask_ctx *ctx, int k);

struct e2e_busy {
	struct ptask_ctx *ctx;	/* the caller's */
	uint32_t graph, in, out;
};

/* The busy graph on @b->ctx, each kernel @ns long, running. */
int e2e_busy_build(struct e2e_busy *b, uint64_t ns);
/* One round: push @seq, pull, check seq + 1. */
int e2e_busy_round(struct e2e_busy *b, uint32_t seq);

/* The CPU ptask "double": out = 2 in (also the killed client's body). */
int e2e_double_body(struct ptask_cpu_call *call, void *arg);

#endif /* PTASK_TESTS_E2E_GRAPHS_H */
