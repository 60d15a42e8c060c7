// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * host_kernels_busy.c - the host twin of ptask_busy (bench/kernels.cu),
 * the kernel PTSched's experiments use as GPU load:
 *
 *   ptask_busy(const unsigned *in, unsigned *out, unsigned long long ns)
 *	out[0] = in[0] + 1, after keeping the device busy for @ns
 *
 * On a GPU the kernel spins on %globaltimer for @ns.  Here the result is
 * computed at once and the cost function asks the sim backend for @ns of
 * modelled time: 48 flops per ns, which is what the default simulated
 * device does (16 cores x 1.5 GHz x 2 flops per cycle), so on it the
 * launch takes launch_ns + @ns.  (The cpu backend has no modelled time:
 * there the kernel is instant.)
 *
 * It is registered at start-up rather than in host_kernels.c's table so
 * the benchmark's kernel stays next to what it models.
 */
#include <errno.h>
#include <string.h>
#include "daemon/backend/host_kernels.h"

#define BUSY_FLOPS_PER_NS	48
#define BUSY_MAX_NS		(60ULL * 1000000000ULL)	/* a minute */

static int busy_ns(const struct pd_host_call *call, uint64_t *ns)
{
	const struct pd_launch *l = call->launch;

	if (l->nparams != 3 || l->param_bytes[2] != sizeof(*ns))
		return -EINVAL;
	memcpy(ns, call->params[2], sizeof(*ns));
	return *ns > BUSY_MAX_NS ? -EINVAL : 0;
}

static int busy_run(const struct pd_host_call *call)
{
	const uint32_t *in;
	uint32_t *out;
	uint64_t ns;
	int err = busy_ns(call, &ns);

	in = pd_param_buf(call, 0, sizeof(*in), &err);
	out = pd_param_buf(call, 1, sizeof(*out), &err);
	if (err)
		return err;
	out[0] = in[0] + 1;
	return 0;
}

static int busy_cost(const struct pd_host_call *call,
		     struct pd_kernel_cost *cost)
{
	uint64_t ns;
	int err = busy_ns(call, &ns);

	if (err)
		return err;
	cost->flops = ns * BUSY_FLOPS_PER_NS;
	cost->bytes = 2 * sizeof(uint32_t);
	return 0;
}

static const struct pd_host_kernel busy_kernel = {
	.name = "ptask_busy", .run = busy_run, .cost = busy_cost,
};

__attribute__((constructor)) static void busy_register(void)
{
	pd_host_kernel_register(&busy_kernel);
}
