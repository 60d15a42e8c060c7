// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * twin.c - the host twins of the benchmarks' kernels (bench/kernels.cu),
 * built as bench's twin library (build/twins/bench.so,
 * uapi/ptask_twin.h) and bound to their PTX (kernels_ptx.S), so the
 * benchmarks run on ptaskd's cpu and sim backends too:
 *
 *   ptask_empty(const unsigned *in, unsigned *out)   out[0] = in[0] + 1
 *	the least a ptask with an output can do (bench/ptask_gpu.c)
 *   ptask_busy(const unsigned *in, unsigned *out, unsigned long long ns)
 *	out[0] = in[0] + 1, after keeping the device busy for @ns: the
 *	GPU load of PTSched's experiments (bench/ptsched.sh)
 *
 * ptask_busy's result is computed at once and its cost function asks
 * the sim backend for @ns of modelled time: 48 flops per ns, which is
 * what the default simulated device does (16 cores x 1.5 GHz x 2 flops
 * per cycle), so on it the launch takes launch_ns + @ns.  (The cpu
 * backend has no modelled time: there the kernel is instant.)
 */
#include <errno.h>
#include <string.h>
#include "uapi/ptask_twin.h"

#define BUSY_FLOPS_PER_NS	48
#define BUSY_MAX_NS		(60ULL * 1000000000ULL)	/* a minute */

static int busy_ns(const struct ptask_twin_call *call, uint64_t *ns)
{
	int err = call->nparams == 3 ? ptask_twin_val(call, 2, ns, sizeof(*ns)) :
				       -EINVAL;

	return err ?: *ns > BUSY_MAX_NS ? -EINVAL : 0;
}

static int empty_run(const struct ptask_twin_call *call)
{
	const uint32_t *in;
	uint32_t *out;
	int err = 0;

	in = ptask_twin_buf(call, 0, sizeof(*in), &err);
	out = ptask_twin_buf(call, 1, sizeof(*out), &err);
	if (err)
		return err;
	out[0] = in[0] + 1;
	return 0;
}

static int empty_cost(const struct ptask_twin_call *call,
		      struct ptask_twin_cost *cost)
{
	(void)call;
	cost->flops = 1;
	cost->bytes = 2 * sizeof(uint32_t);
	return 0;
}

static int busy_run(const struct ptask_twin_call *call)
{
	const uint32_t *in;
	uint32_t *out;
	uint64_t ns;
	int err = busy_ns(call, &ns);

	in = ptask_twin_buf(call, 0, sizeof(*in), &err);
	out = ptask_twin_buf(call, 1, sizeof(*out), &err);
	if (err)
		return err;
	out[0] = in[0] + 1;
	return 0;
}

static int busy_cost(const struct ptask_twin_call *call,
		     struct ptask_twin_cost *cost)
{
	uint64_t ns;
	int err = busy_ns(call, &ns);

	if (err)
		return err;
	cost->flops = ns * BUSY_FLOPS_PER_NS;
	cost->bytes = 2 * sizeof(uint32_t);
	return 0;
}

extern const char bench_ptx[], bench_ptx_end[];

static const struct ptask_twin bench_twins[] = {
	{ "ptask_empty", bench_ptx, bench_ptx_end, empty_run, empty_cost },
	{ "ptask_busy", bench_ptx, bench_ptx_end, busy_run, busy_cost },
};
PTASK_TWIN_LIBRARY(bench_twin_table, bench_twins);
