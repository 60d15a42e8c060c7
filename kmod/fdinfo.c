// SPDX-License-Identifier: GPL-2.0
/*
 * fdinfo.c - /proc/<pid>/fdinfo/<fd> of a /dev/ptask fd, in the DRM
 * client usage stats format (Documentation/gpu/drm-usage-stats.rst), so
 * tools that parse DRM fdinfo (gputop, nvtop, igt) can read it:
 *
 *   drm-driver:          ptask
 *   drm-client-id:       unique per open, never reused
 *   drm-engine-gpu:      <ns> ns    GPU time of the invocations of the
 *                                   ptasks made through this fd
 *   drm-total-system:    <n> KiB    datablocks the fd holds
 *   drm-resident-system: <n> KiB    (the same: datablock pages are never
 *                                   swapped)
 *
 * and ptask's own keys, prefixed "ptask-": invocations, live ptasks, the
 * datablock memory charged to the opener's uid and its limit (0: none;
 * core/uid_usage.c), and the GPU budget of the process that opened the
 * fd (PTSched), while that
 * process lives (its record is keyed by its pid in the initial pid
 * namespace, which a later process may get once it exited).
 */
#include <linux/fs.h>
#include <linux/seq_file.h>
#include <linux/sched.h>
#include <linux/pid.h>
#include "ptask_kmod.h"

/**
 * ptask_show_fdinfo() - file_operations.show_fdinfo of /dev/ptask
 * @m: the fdinfo file
 * @file: the /dev/ptask file
 */
void ptask_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct ptask_file *pf = file->private_data;
	struct ptask_client_usage u;
	struct ptask_uid_usage_info uu;
	struct ptask_proc_info info = {};
	struct ptask_proc *proc = NULL;

	mutex_lock(&ptask_kernel.lock);
	ptask_core_client_usage(pf->client, &u);
	ptask_core_uid_usage(&ptask_kernel.ns, pf->client->uid, &uu);
	ptask_core_sched_update(&ptask_kernel.ns);
	/* Its pid, once it exited, may be another process's. */
	if (pid_has_task(pf->opener, PIDTYPE_TGID))
		proc = ptask_core_proc_find(&ptask_kernel.ns, pid_nr(pf->opener));
	if (proc)
		ptask_core_proc_describe(proc, &info);
	mutex_unlock(&ptask_kernel.lock);

	seq_puts(m, "drm-driver:\tptask\n");
	seq_printf(m, "drm-client-id:\t%llu\n", u.id);
	seq_printf(m, "drm-engine-gpu:\t%llu ns\n", u.gpu_ns);
	seq_printf(m, "drm-total-system:\t%llu KiB\n", u.held_bytes >> 10);
	seq_printf(m, "drm-resident-system:\t%llu KiB\n", u.held_bytes >> 10);
	seq_printf(m, "ptask-invocations:\t%llu\n", u.invocations);
	seq_printf(m, "ptask-ptasks:\t%u\n", u.ptasks);
	seq_printf(m, "ptask-uid-bytes:\t%llu\n", uu.bytes);
	seq_printf(m, "ptask-uid-limit-bytes:\t%llu\n", uu.limit_bytes);
	if (!proc)
		return;
	seq_printf(m, "ptask-budget-ns:\t%lld\n", info.budget_ns);
	seq_printf(m, "ptask-weight:\t%u\n", info.weight);
	seq_printf(m, "ptask-held:\t%u\n", info.held);
}
