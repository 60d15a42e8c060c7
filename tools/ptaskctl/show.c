// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * show.c - (root) `ptaskctl show`: every graph and its ptasks, with
 * state, owner, static priority, proxy nice value, the accelerator each
 * last ran on, GPU time, invocations and failed ones (with the last
 * failure's errno and the accelerator's own code: ptaskd's cuda backend
 * gives the CUresult, named here).  A table, or with --json
 * {"graphs": [{..., "ptasks": [...]}]}.
 *
 * Kernel mode: the GET_OBJECT dump; user mode: PTASKD_OP_OBJECTS.  Both
 * list every object in handle order; graphs come before their ptasks, so
 * one pass per graph over the list finds them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ptaskctl.h"

/*
 * The CUresults a failed kernel gives (common/cuda_dl.h has them all;
 * ptaskctl loads no libcuda to name the rest: they show as a number).
 */
static const char *cuda_error_name(uint32_t code)
{
	static const struct { uint32_t code; const char *name; } names[] = {
		{ 2, "CUDA_ERROR_OUT_OF_MEMORY" },
		{ 700, "CUDA_ERROR_ILLEGAL_ADDRESS" },
		{ 701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES" },
		{ 702, "CUDA_ERROR_LAUNCH_TIMEOUT" },
		{ 714, "CUDA_ERROR_HARDWARE_STACK_ERROR" },
		{ 715, "CUDA_ERROR_ILLEGAL_INSTRUCTION" },
		{ 716, "CUDA_ERROR_MISALIGNED_ADDRESS" },
		{ 717, "CUDA_ERROR_INVALID_ADDRESS_SPACE" },
		{ 718, "CUDA_ERROR_INVALID_PC" },
		{ 719, "CUDA_ERROR_LAUNCH_FAILED" },
		{ 805, "CUDA_ERROR_MPS_CONNECTION_FAILED" },
		{ 806, "CUDA_ERROR_MPS_RPC_FAILURE" },
		{ 807, "CUDA_ERROR_MPS_SERVER_NOT_READY" },
		{ 810, "CUDA_ERROR_MPS_CLIENT_TERMINATED" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].code == code)
			return names[i].name;
	return NULL;
}

static const char *graph_state(uint32_t s)
{
	static const char *const names[] = { "building", "running",
					     "terminated", "failed" };

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static const char *ptask_state(uint32_t s)
{
	static const char *const names[] = { "waiting", "queued",
					     "executing", "completed" };

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static const char *ptask_kind(uint32_t k)
{
	return k == PTASK_KIND_GPU ? "gpu" : k == PTASK_KIND_CPU ? "cpu" : "?";
}

static void ptask_json(const struct ptaskd_object *o)
{
	out_obj_begin(NULL);
	out_u64("handle", o->handle);
	out_str("name", o->name);
	out_str("kind", ptask_kind(o->kind));
	out_str("state", ptask_state(o->state));
	out_u64("owner_uid", o->owner_uid);
	out_s64("owner_pid", o->owner_pid);
	out_u64("priority", o->prio);
	out_s64("proxy_nice", o->proxy_nice);
	if (o->accel)
		out_u64("accelerator", o->accel - 1);
	else
		out_null("accelerator");
	out_u64("gpu_ns", o->gpu_ns);
	out_u64("invocations", o->invocations);
	out_u64("failures", o->failures);
	out_s64("last_error", o->last_error);
	out_u64("error_code", o->error_code);
	out_obj_end();
}

static void show_json(const struct ptaskd_object *objs, size_t n)
{
	size_t g, i;

	out_begin();
	out_list_begin("graphs");
	for (g = 0; g < n; g++) {
		if (objs[g].type != PTASK_OBJ_GRAPH)
			continue;
		out_obj_begin(NULL);
		out_u64("handle", objs[g].handle);
		out_str("name", objs[g].name);
		out_str("state", graph_state(objs[g].state));
		out_u64("owner_uid", objs[g].owner_uid);
		out_list_begin("ptasks");
		for (i = 0; i < n; i++)
			if (objs[i].type == PTASK_OBJ_PTASK &&
			    objs[i].graph == objs[g].handle)
				ptask_json(&objs[i]);
		out_list_end();
		out_obj_end();
	}
	out_list_end();
	out_end();
}

static void ptask_row(const struct ptaskd_object *o)
{
	char accel[16];

	if (o->accel)
		snprintf(accel, sizeof(accel), "%u", o->accel - 1);
	else
		snprintf(accel, sizeof(accel), "-");
	printf("  %-7u %-16s %-4s %-10s %6u %8d %5u %5d %5s %12.3f %12" PRIu64
	       " %7" PRIu64 "\n",
	       o->handle, *o->name ? o->name : "-", ptask_kind(o->kind),
	       ptask_state(o->state), o->owner_uid, o->owner_pid, o->prio,
	       o->proxy_nice, accel, (double)o->gpu_ns / 1e6,
	       (uint64_t)o->invocations, (uint64_t)o->failures);
	if (!o->failures || !o->last_error)
		return;
	printf("          last failure: %s", strerror(-o->last_error));
	if (o->error_code && cuda_error_name(o->error_code))
		printf(", %s (%u)", cuda_error_name(o->error_code),
		       o->error_code);
	else if (o->error_code)
		printf(", accelerator code %u", o->error_code);
	printf("\n");
}

static void show_text(const struct ptaskd_object *objs, size_t n)
{
	size_t g, i, graphs = 0;

	for (g = 0; g < n; g++) {
		if (objs[g].type != PTASK_OBJ_GRAPH)
			continue;
		printf("%sgraph %u %s: %s, owner uid %u\n", graphs++ ? "\n" : "",
		       objs[g].handle, *objs[g].name ? objs[g].name : "(unnamed)",
		       graph_state(objs[g].state), objs[g].owner_uid);
		printf("  %-7s %-16s %-4s %-10s %6s %8s %5s %5s %5s %12s %12s %7s\n",
		       "PTASK", "NAME", "KIND", "STATE", "UID", "PID", "PRIO",
		       "NICE", "ACCEL", "GPU_MS", "INVOCATIONS", "FAILED");
		for (i = 0; i < n; i++)
			if (objs[i].type == PTASK_OBJ_PTASK &&
			    objs[i].graph == objs[g].handle)
				ptask_row(&objs[i]);
	}
	if (!graphs)
		printf("no graphs\n");
	fflush(stdout);
}

static int show_main(int argc, char *argv[])
{
	struct ptaskd_object *objs;
	size_t n, i;
	int ret;

	(void)argv;
	if (argc > 1) {
		ptaskctl_err("show: takes no arguments");
		return PTASKCTL_USAGE;
	}
	ret = ipc_objects(&objs, &n);
	if (ret) {
		ipc_report("show", ret);
		return ret;
	}
	/* The names came from the daemon or the module: make sure they end. */
	for (i = 0; i < n; i++)
		objs[i].name[sizeof(objs[i].name) - 1] = '\0';
	if (ptaskctl_opts.json)
		show_json(objs, n);
	else
		show_text(objs, n);
	free(objs);
	return 0;
}

PTASKCTL_COMMAND(show, show_main, "",
		 "(root) the graphs and their ptasks: state, owner, priority, GPU time");
