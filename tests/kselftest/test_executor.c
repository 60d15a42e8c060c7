// SPDX-License-Identifier: GPL-2.0
/*
 * test_executor - the ptask kselftests' stand-in for ptaskd.
 *
 * Opens /dev/ptask, registers that fd as an executor (generic netlink
 * PTASK_CMD_EXEC_REGISTER, one PTASK_ACCEL_TEST accelerator), then takes
 * invocations in batches of up to 16 and completes each one by copying:
 * the k-th input port (INPUT or STICKY, in port order) goes, through a new
 * datablock of the same size and record count, to the k-th output port.  A
 * ptask without outputs just completes.  Status 0; gpu_ns is the time the
 * copies took.
 *
 * Usage: test_executor [-v] [-p] [-n COUNT]
 *	-v	print every invocation to stderr
 *	-p	pass through: emit the k-th input datablock itself on the k-th
 *		output (no new datablock, no mapping, no copy), so that a
 *		benchmark sees the kernel's own cost
 *	-n	exit after COUNT completed invocations
 *
 * SIGTERM and SIGINT end it cleanly: the batch in hand is completed, then
 * the fd is closed (which unregisters it and releases everything it held).
 * Exit status: 0 on a clean exit, 1 on an error, 2 on a usage error.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int install_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a blocked EXEC_TAKE returns EINTR. */
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL))
		return -errno;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: test_executor [-v] [-p] [-n COUNT]\n");
}

/* -p: the k-th input goes out unchanged on the k-th output port. */
static int pass_one(int fd, const struct ptask_invocation *inv,
		    const struct ptask_invocation_port *ports)
{
	struct ptask_exec_output outs[PTASK_MAX_PORTS];
	__u32 in[PTASK_MAX_PORTS], i;
	int nin = 0, nout = 0;

	for (i = 0; i < inv->n_ports && i < PTASK_MAX_PORTS; i++) {
		const struct ptask_invocation_port *p = &ports[inv->first_port + i];

		if (p->kind != PTASK_PORT_OUTPUT)
			in[nin++] = p->datablock;
	}
	for (i = 0; i < inv->n_ports && i < PTASK_MAX_PORTS; i++) {
		const struct ptask_invocation_port *p = &ports[inv->first_port + i];

		if (p->kind != PTASK_PORT_OUTPUT)
			continue;
		if (nout >= nin)
			return -EINVAL;
		outs[nout].index = p->index;
		outs[nout].datablock = in[nout];
		nout++;
	}
	return pt_exec_complete(fd, inv->id, 0, 0, outs, (__u32)nout);
}

int main(int argc, char **argv)
{
	struct ptask_invocation *inv;
	struct ptask_invocation_port *ports;
	unsigned long done = 0, count = 0;
	__u32 n_inv, n_ports, i;
	int verbose = 0, pass = 0, fd, r, c, ret = 0;
	char *end;

	while ((c = getopt(argc, argv, "vpn:h")) != -1) {
		switch (c) {
		case 'v':
			verbose = 1;
			break;
		case 'p':
			pass = 1;
			break;
		case 'n':
			count = strtoul(optarg, &end, 0);
			if (*end || !count) {
				usage(stderr);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (install_handlers())
		return 1;
	inv = calloc(PT_EXEC_BATCH, sizeof(*inv));
	ports = calloc(PT_EXEC_PORTS, sizeof(*ports));
	if (!inv || !ports) {
		fprintf(stderr, "test_executor: out of memory\n");
		return 1;
	}
	fd = pt_open();
	if (fd < 0) {
		fprintf(stderr, "test_executor: open %s: %s\n", PT_DEV_PATH,
			strerror(-fd));
		return 1;
	}
	r = pt_nl_register(fd);
	if (r) {
		fprintf(stderr, "test_executor: PTASK_CMD_EXEC_REGISTER: %s\n",
			strerror(-r));
		close(fd);
		return 1;
	}
	if (verbose)
		fprintf(stderr, "test_executor: pid %d registered fd %d\n",
			getpid(), fd);

	while (!stop && (!count || done < count)) {
		/*
		 * A deadline closes the race of a signal arriving between
		 * the check of @stop and the ioctl going to sleep.
		 */
		r = pt_exec_take(fd, 0, pt_deadline_ms(100), inv,
				 PT_EXEC_BATCH, ports, PT_EXEC_PORTS, &n_inv,
				 &n_ports);
		if (r == -EINTR || r == -EAGAIN || r == -ETIMEDOUT)
			continue;
		if (r) {
			fprintf(stderr, "test_executor: EXEC_TAKE: %s\n",
				strerror(-r));
			ret = 1;
			break;
		}
		if (verbose)
			fprintf(stderr, "test_executor: took %u invocations (%u ports)\n",
				n_inv, n_ports);
		/* Complete the whole batch even when asked to stop. */
		for (i = 0; i < n_inv; i++) {
			r = pass ? pass_one(fd, &inv[i], ports) :
				   pt_exec_copy_one(fd, &inv[i], ports, 0,
						    verbose);
			if (r && r != -ECANCELED) {
				fprintf(stderr, "test_executor: invocation %llu: %s\n",
					(unsigned long long)inv[i].id,
					strerror(-r));
				ret = 1;
			}
			done++;
		}
	}
	if (verbose)
		fprintf(stderr, "test_executor: exiting after %lu invocations\n",
			done);
	close(fd);
	free(inv);
	free(ports);
	return ret;
}
