// SPDX-License-Identifier: GPL-2.0
/*
 * os_kernel.c - the core's OS shim in the kernel (see core/ptask_os.h).
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/timekeeping.h>
#include <linux/lockdep.h>
#include "ptask_kmod.h"

void *ptask_os_zalloc(size_t bytes)
{
	return kvzalloc(bytes, GFP_KERNEL_ACCOUNT);
}

void ptask_os_free(void *p)
{
	kvfree(p);
}

u64 ptask_os_now_ns(void)
{
	return ktime_get_ns();
}

void ptask_os_saturated(const char *what)
{
	WARN_ONCE(1, "ptask: %s reference count saturated; leaking it\n",
		  what);
}

void ptask_os_client_wake(struct ptask_client *client)
{
	struct ptask_file *pf = client->os;

	wake_up_interruptible_all(&pf->wq);
}

void ptask_os_event(struct ptask_ns *ns, u32 event, u32 obj_type, u32 handle)
{
	ptask_netlink_event(event, obj_type, handle);
	ptask_sysfs_objs_event(event, obj_type, handle);
}

/*
 * lockdep proves the holder where it is built in; mutex_is_locked() still
 * catches a call made with nobody holding the lock on kernels without it.
 */
void ptask_os_assert_locked(struct ptask_ns *ns)
{
	lockdep_assert_held(&ptask_kernel.lock);
	WARN_ON_ONCE(!mutex_is_locked(&ptask_kernel.lock));
}
