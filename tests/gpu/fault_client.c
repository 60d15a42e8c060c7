// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fault_client - a client whose GPU ptask faults: ptask_empty(in, out)
 * (bench/kernels.cu) with @in bound by value (PTASK_BIND_PARAM) to an
 * address nothing mapped, so the kernel's read of in[0] is an illegal
 * address, a sticky CUDA error.  tests/gpu/ptaskd_fatal.sh runs it
 * against ptaskd --backend cuda and checks what follows.
 *
 *   fault_client PTX     exit 0 when the pull fails (-EIO, or the daemon
 *                        gone: -ENOTCONN / -ECONNRESET / -EPIPE), 1 when
 *                        a result comes back (no fault?), 2 on set-up errors
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libptask.h"
#include "bench/read_ptx.h"

int main(int argc, char **argv)
{
	const uint32_t one[3] = { 1, 1, 1 };
	uint32_t g, t_ptr, t_out, p, pin, pout, in, out;
	struct ptask_ctx *ctx;
	struct ptask_db *db, *res;
	uint64_t *bogus;
	size_t ptx_len;
	char *ptx;
	int err;

	if (argc != 2 || !(ptx = read_ptx(argv[1], &ptx_len))) {
		fprintf(stderr, "usage: fault_client PTX (bench/kernels.cu's)\n");
		return 2;
	}
	err = ptask_ctx_open(PTASK_MODE_AUTO, NULL, &ctx);
	err = err ?: ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600, &g);
	err = err ?: ptask_template_open(ctx, g, "ptr", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_PARAM, 8, one, &t_ptr);
	err = err ?: ptask_template_open(ctx, g, "out", PTASK_TEMPLATE_ARRAY,
					 PTASK_BIND_GLOBAL, 4, one, &t_out);
	err = err ?: ptask_gpu_ptask_open(ctx, g, "fault", ptx, ptx_len,
					  "ptask_empty", 2, &p);
	err = err ?: ptask_port_open(ctx, p, "in", PTASK_PORT_INPUT, 0, t_ptr,
				     0, 0, &pin);
	err = err ?: ptask_port_open(ctx, p, "out", PTASK_PORT_OUTPUT, 0, t_out,
				     1, 0, &pout);
	err = err ?: ptask_set_geometry(ctx, p, one, one, 0);
	err = err ?: ptask_channel_open(ctx, g, "in", 0, pin, 1, 0, &in);
	err = err ?: ptask_channel_open(ctx, g, "out", pout, 0, 1, 0, &out);
	err = err ?: ptask_graph_run(ctx, g);
	err = err ?: ptask_datablock_create(ctx, t_ptr, 0, 1, &db);
	err = err ?: ptask_datablock_map(ctx, db, (void **)&bogus);
	if (err) {
		fprintf(stderr, "fault_client: set-up: %s\n", strerror(-err));
		return 2;
	}
	*bogus = 0x1000;	/* below every mapping the driver makes */
	err = ptask_push(ctx, in, db, -1, PTASK_FOREVER) ?:
	      ptask_pull(ctx, out, 30LL * 1000000000, &res);
	printf("fault_client: pull: %s\n", err ? strerror(-err) : "a result");
	return err == -EIO || err == -ENOTCONN || err == -ECONNRESET ||
	       err == -EPIPE ? 0 : 1;
}
