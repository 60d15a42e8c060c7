// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs_limits.c - /sys/kernel/ptask/limits/: what one uid may hold
 * (Documentation/ABI/testing/sysfs-kernel-ptask, core/uid_usage.c).
 *
 *   uid_bytes  (0644) the most datablock memory a uid other than 0 may
 *              have charged; a datablock past it is -EDQUOT.  0: no
 *              limit (the default).  Writing needs CAP_SYS_ADMIN.
 *   refusals   (0444) datablocks refused with -EDQUOT since load.
 *
 * What a uid holds shows in the fdinfo of its /dev/ptask fds
 * (ptask-uid-bytes, fdinfo.c).
 */
#include <linux/capability.h>
#include <linux/kobject.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include "ptask_kmod.h"

static struct kobject *limits_kobj;

static ssize_t uid_bytes_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	u64 bytes;

	mutex_lock(&ptask_kernel.lock);
	bytes = ptask_kernel.ns.uid_limit_bytes;
	mutex_unlock(&ptask_kernel.lock);
	return sysfs_emit(buf, "%llu\n", bytes);
}

static ssize_t uid_bytes_store(struct kobject *kobj,
			       struct kobj_attribute *attr,
			       const char *buf, size_t count)
{
	u64 bytes;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (kstrtou64(buf, 0, &bytes))
		return -EINVAL;
	mutex_lock(&ptask_kernel.lock);
	ptask_core_uid_limit_set(&ptask_kernel.ns, bytes);
	mutex_unlock(&ptask_kernel.lock);
	return count;
}

static ssize_t refusals_show(struct kobject *kobj,
			     struct kobj_attribute *attr, char *buf)
{
	u64 n;

	mutex_lock(&ptask_kernel.lock);
	n = ptask_kernel.ns.uid_refusals;
	mutex_unlock(&ptask_kernel.lock);
	return sysfs_emit(buf, "%llu\n", n);
}

static struct kobj_attribute uid_bytes_attr = __ATTR_RW(uid_bytes);
static struct kobj_attribute refusals_attr = __ATTR_RO(refusals);

static struct attribute *limits_attrs[] = {
	&uid_bytes_attr.attr,
	&refusals_attr.attr,
	NULL,
};

static const struct attribute_group limits_group = {
	.attrs = limits_attrs,
};

/**
 * ptask_sysfs_limits_init() - create /sys/kernel/ptask/limits
 * @parent: /sys/kernel/ptask
 *
 * Return: 0 or -ENOMEM / the sysfs error.
 */
int ptask_sysfs_limits_init(struct kobject *parent)
{
	int err;

	limits_kobj = kobject_create_and_add("limits", parent);
	if (!limits_kobj)
		return -ENOMEM;
	err = sysfs_create_group(limits_kobj, &limits_group);
	if (err) {
		kobject_put(limits_kobj);
		limits_kobj = NULL;
	}
	return err;
}

/**
 * ptask_sysfs_limits_exit() - remove /sys/kernel/ptask/limits
 */
void ptask_sysfs_limits_exit(void)
{
	kobject_put(limits_kobj);
}
