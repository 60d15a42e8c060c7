// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * lone_test.c - the cuda backend's one-node graphs (daemon/backend/
 * cuda_lone.c) against a driver table of counting stand-ins, so the
 * policy runs in `make check-daemon` on a machine without a GPU (the real
 * driver is tests/gpu/cuda_backend_test's test_lone, on the GPU machine):
 *
 *   - up to PD_CUDA_LONE kernels in turn on a lane replay, one
 *     instantiation each;
 *   - more kernels in turn than slots: the ones without a graph are
 *     launched plainly, no graph is evicted for them (a build on every
 *     launch, found in review);
 *   - a patch only where the parameter values changed;
 *   - a graph that fails to launch is dropped and the lane builds none
 *     for PD_CUDA_LONE_BACKOFF launches, then builds again;
 *   - a graph unused for PD_CUDA_LONE_IDLE launches gives its slot to a
 *     kernel launched twice in a row;
 *   - dropping a kernel's graphs leaves the others;
 *   - with two variants (PTASKD_LONE_VARIANTS=2), two sets of values in
 *     turn replay a graph each, unpatched; three in turn are patched.
 *
 * TAP, "N passed, M failed" through tests/daemon/run.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/backend/cuda_priv.h"

static int npass, nfail;
static int n_inst, n_setp, n_launch, n_destroy, fail_launches;

static void check(int ok, const char *what)
{
	printf("%sok %d - %s\n", ok ? "" : "not ", npass + nfail + 1, what);
	if (ok)
		npass++;
	else
		nfail++;
}

/* the driver's graph calls, counted; graphs are small allocations */
static CUresult f_create(CUgraph *g, unsigned int flags)
{
	(void)flags;
	*g = malloc(1);
	return CUDA_SUCCESS;
}

static CUresult f_add(CUgraphNode *n, CUgraph g, const CUgraphNode *deps,
		      size_t ndeps, const CUDA_KERNEL_NODE_PARAMS *p)
{
	(void)g;
	(void)deps;
	(void)ndeps;
	(void)p;
	/* a node is the graph's: it goes with it */
	*n = (CUgraphNode)&n_inst;
	return CUDA_SUCCESS;
}

static CUresult f_inst(CUgraphExec *x, CUgraph g, unsigned long long flags)
{
	(void)g;
	(void)flags;
	n_inst++;
	*x = malloc(1);
	return CUDA_SUCCESS;
}

static CUresult f_setp(CUgraphExec x, CUgraphNode n,
		       const CUDA_KERNEL_NODE_PARAMS *p)
{
	(void)x;
	(void)n;
	(void)p;
	n_setp++;
	return CUDA_SUCCESS;
}

static CUresult f_launch(CUgraphExec x, CUstream s)
{
	(void)x;
	(void)s;
	if (fail_launches) {
		fail_launches--;
		return CUDA_ERROR_INVALID_VALUE;
	}
	n_launch++;
	return CUDA_SUCCESS;
}

static CUresult f_xdes(CUgraphExec x)
{
	free(x);
	n_destroy++;
	return CUDA_SUCCESS;
}

static CUresult f_gdes(CUgraph g)
{
	free(g);
	return CUDA_SUCCESS;
}

/* cuda.c's, which the backend's other files would bring */
int pd_cuda_fail(struct cuda_be *cb, CUresult r, const char *what)
{
	(void)cb;
	(void)r;
	(void)what;
	return -5;
}

int pd_cuda_queue_fail(struct cuda_be *cb, struct cuda_space *s, CUresult r,
		       const char *what)
{
	(void)s;
	return pd_cuda_fail(cb, r, what);
}

static struct cuda_be cb;
static struct cuda_space space;
static struct cuda_kernel k[8];
static uint64_t vals[8][2];

/*
 * What pd_cuda_launch does around cuLaunchKernel for kernel @i (its
 * parameters vals[@i]), in @grid blocks: 1 replayed, 0 plain.
 */
static int launch(int i, uint32_t grid)
{
	struct cuda_lane *ln = &space.lane[0];
	struct pd_launch l;
	bool again;

	memset(&l, 0, sizeof(l));
	l.grid[0] = grid;
	l.grid[1] = l.grid[2] = 1;
	l.block[0] = l.block[1] = l.block[2] = 1;
	l.nparams = 2;
	l.params[0] = &vals[i][0];
	l.params[1] = &vals[i][1];
	l.param_bytes[0] = l.param_bytes[1] = 8;
	if (pd_cuda_lone_launch(&cb, &space, ln, &k[i], &l) == 1) {
		k[i].grid[0] = grid;
		return 1;
	}
	again = k[i].proven && k[i].grid[0] == grid;
	k[i].proven = true;
	k[i].grid[0] = grid;
	pd_cuda_lone_learn(&cb, ln, &k[i], &l, again);
	return 0;
}

/* @rounds of kernels 0..@nk-1 in turn: how many launches replayed */
static int rounds(int nk, int rounds)
{
	int r, i, replays = 0;

	for (r = 0; r < rounds; r++)
		for (i = 0; i < nk; i++)
			replays += launch(i, 1);
	return replays;
}

static void reset(void)
{
	pd_cuda_lone_drop(&cb, &space, NULL);
	memset(space.lane, 0, sizeof(space.lane[0]));
	memset(k, 0, sizeof(k));
	n_inst = n_setp = n_launch = 0;
}

int main(void)
{
	char what[160];
	int nk, replays, i, r;

	cb.cu.GraphCreate = f_create;
	cb.cu.GraphAddKernelNode = f_add;
	cb.cu.GraphInstantiate = f_inst;
	cb.cu.GraphExecKernelNodeSetParams = f_setp;
	cb.cu.GraphLaunch = f_launch;
	cb.cu.GraphExecDestroy = f_xdes;
	cb.cu.GraphDestroy = f_gdes;
	check(pd_cuda_graphs_usable(&cb), "the stand-ins make graphs usable");
	cb.lone_graphs = true;
	cb.lone_variants = 1;
	space.nlanes = 1;

	for (nk = 1; nk <= 7; nk += 3) {
		reset();
		replays = rounds(nk, 100);
		i = nk < PD_CUDA_LONE ? nk : PD_CUDA_LONE;
		snprintf(what, sizeof(what),
			 "%d kernels in turn, 100 rounds: %d replays (want %d), %d instantiations (want %d)",
			 nk, replays, 98 * i, n_inst, i);
		check(replays == 98 * i && n_inst == i, what);
	}

	/* the same values: no patch; new values each launch: a patch each */
	reset();
	rounds(1, 10);
	check(n_setp == 0, "unchanged parameters replay without a patch");
	for (r = 0; r < 10; r++) {
		vals[0][1] = 1000 + (uint64_t)r;
		launch(0, 1);
	}
	check(n_setp == 10, "changed parameters are patched once each launch");

	/* a failed launch: dropped, none built during the backoff, then one */
	reset();
	rounds(1, 3);
	fail_launches = 1;
	r = launch(0, 1);
	snprintf(what, sizeof(what),
		 "a graph that fails to launch is dropped, the launch goes plain (%d replayed, %u slots used)",
		 r, !!space.lane[0].lone[0].kernel);
	check(r == 0 && !space.lane[0].lone[0].kernel, what);
	i = n_inst;
	replays = 0;
	for (r = 0; r < PD_CUDA_LONE_BACKOFF - 2; r++)
		replays += launch(0, 1);
	snprintf(what, sizeof(what),
		 "no graph built during the backoff (%d instantiations, %d replays)",
		 n_inst - i, replays);
	check(n_inst == i && !replays, what);
	replays = 0;
	for (r = 0; r < 4; r++)
		replays += launch(0, 1);
	check(n_inst == i + 1 && replays >= 2,
	      "after the backoff the lane builds and replays again");

	/* an idle graph gives its slot up; a busy one does not */
	reset();
	rounds(PD_CUDA_LONE, 3);
	replays = 0;
	for (r = 0; r < PD_CUDA_LONE_IDLE + 4; r++)
		replays += launch(PD_CUDA_LONE, 1) + launch(1, 1);
	snprintf(what, sizeof(what),
		 "kernel %d takes the slot of one idle for %d launches (%d instantiations, want %d)",
		 PD_CUDA_LONE, PD_CUDA_LONE_IDLE, n_inst, PD_CUDA_LONE + 1);
	check(n_inst == PD_CUDA_LONE + 1 &&
	      replays > 2 * PD_CUDA_LONE_IDLE - 2, what);

	/* a kernel's drop leaves the others' graphs */
	reset();
	rounds(3, 3);
	pd_cuda_lone_drop(&cb, &space, &k[1]);
	for (i = 0, r = 0; i < PD_CUDA_LONE; i++)
		r += space.lane[0].lone[i].kernel != NULL;
	check(r == 2 && launch(0, 1) == 1 && launch(1, 1) == 0,
	      "dropping one kernel's graphs leaves the others'");

	/* two variants: values taking turns between two sets, then three */
	reset();
	cb.lone_variants = 2;
	replays = 0;
	for (r = 0; r < 20; r++) {
		vals[0][1] = 2000 + (uint64_t)(r % 2);
		replays += launch(0, 1);
	}
	snprintf(what, sizeof(what),
		 "two variants, two values in turn: %d replays (want 18), %d instantiations (want 2), %d patches (want 0)",
		 replays, n_inst, n_setp);
	check(replays == 18 && n_inst == 2 && n_setp == 0, what);
	i = n_setp;
	for (r = 0; r < 9; r++) {
		vals[0][1] = 3000 + (uint64_t)(r % 3);
		launch(0, 1);
	}
	snprintf(what, sizeof(what),
		 "two variants, three values in turn: a patch each launch (%d, want 9), still 2 instantiations (%d)",
		 n_setp - i, n_inst);
	check(n_setp - i == 9 && n_inst == 2, what);
	cb.lone_variants = 1;

	reset();
	check(n_destroy > 0, "every graph destroyed on the way");

	printf("1..%d\n%d passed, %d failed, 0 skipped\n", npass + nfail, npass,
	       nfail);
	return nfail ? 1 : 0;
}
