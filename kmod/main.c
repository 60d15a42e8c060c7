// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - ptask.ko: module init and exit only.
 *
 * DOC: ptask.ko
 *
 * The PTask system calls as ioctls on /dev/ptask (dev.c), datablock memory
 * shared by mmap (buf.c), the "ptask" generic-netlink family for the
 * executor and admin tools (netlink.c) and /sys/kernel/ptask (sysfs.c),
 * around the portable object model in core/.
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include "ptask_kmod.h"

struct ptask_kernel ptask_kernel;

static struct miscdevice ptask_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = PTASK_DEVICE_NAME,
	.fops = &ptask_fops,
	.mode = 0666,
};

static int __init ptask_init(void)
{
	int err;

	mutex_init(&ptask_kernel.lock);
	atomic64_set(&ptask_kernel.buffers, 0);
	ptask_sched_timer_init();
	ptask_tunnel_timer_init();
	mutex_lock(&ptask_kernel.lock);
	err = ptask_core_ns_init(&ptask_kernel.ns, &ptask_kernel);
	mutex_unlock(&ptask_kernel.lock);
	if (err)
		return err;
	err = ptask_sysfs_init();
	if (err)
		goto err_destroy_ns;
	err = ptask_netlink_init();
	if (err)
		goto err_sysfs_exit;
	err = misc_register(&ptask_miscdev);
	if (err)
		goto err_netlink_exit;
	pr_info("ptask: ABI %d, /dev/%s ready\n", PTASK_ABI_VERSION,
		PTASK_DEVICE_NAME);
	return 0;

err_netlink_exit:
	ptask_netlink_exit();
err_sysfs_exit:
	ptask_sysfs_exit();
err_destroy_ns:
	ptask_sched_timer_exit();
	ptask_tunnel_timer_exit();
	mutex_lock(&ptask_kernel.lock);
	ptask_core_ns_destroy(&ptask_kernel.ns);
	mutex_unlock(&ptask_kernel.lock);
	return err;
}

static void __exit ptask_exit(void)
{
	int i;

	misc_deregister(&ptask_miscdev);
	ptask_netlink_exit();
	ptask_sysfs_exit();
	ptask_sched_timer_exit();
	ptask_tunnel_timer_exit();
	mutex_lock(&ptask_kernel.lock);
	for (i = 0; i < __PTASK_COUNT_MAX; i++)
		WARN(ptask_kernel.ns.counts[i], "ptask: %llu objects of kind %d leaked\n",
		     ptask_kernel.ns.counts[i], i);
	ptask_core_ns_destroy(&ptask_kernel.ns);
	mutex_unlock(&ptask_kernel.lock);
	WARN(atomic64_read(&ptask_kernel.buffers),
	     "ptask: %lld datablock buffers leaked\n",
	     atomic64_read(&ptask_kernel.buffers));
}

module_init(ptask_init);
module_exit(ptask_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("PTask: dataflow graphs of GPU and CPU tasks as OS objects");
MODULE_AUTHOR("the ptask developers");
