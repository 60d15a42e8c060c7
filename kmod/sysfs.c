// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs.c - /sys/kernel/ptask: the ABI version, the executors and live
 * object counts (Documentation/ABI/testing/sysfs-kernel-ptask).  Tests
 * read the counts to prove nothing leaks.
 */
#include <linux/kobject.h>
#include <linux/sysfs.h>
#include "ptask_kmod.h"

static struct kobject *ptask_kobj;
static struct kobject *objects_kobj;

static ssize_t abi_version_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", PTASK_ABI_VERSION);
}

static ssize_t executors_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	u32 n;

	mutex_lock(&ptask_kernel.lock);
	n = ptask_kernel.ns.executors;
	mutex_unlock(&ptask_kernel.lock);
	return sysfs_emit(buf, "%u\n", n);
}

static struct kobj_attribute abi_version_attr = __ATTR_RO(abi_version);
static struct kobj_attribute executors_attr = __ATTR_RO(executors);

static struct attribute *ptask_attrs[] = {
	&abi_version_attr.attr,
	&executors_attr.attr,
	NULL,
};

static const struct attribute_group ptask_group = {
	.attrs = ptask_attrs,
};

static const char *const count_names[__PTASK_COUNT_MAX] = PTASK_COUNT_NAMES;

/* One attribute per enum ptask_count; the index is its place in the array. */
static struct kobj_attribute count_attrs[__PTASK_COUNT_MAX];
static struct attribute *count_attr_ptrs[__PTASK_COUNT_MAX + 1];

static ssize_t count_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	int i = attr - count_attrs;
	u64 v;

	if (i == PTASK_COUNT_BUFFERS)
		return sysfs_emit(buf, "%lld\n",
				  atomic64_read(&ptask_kernel.buffers));
	mutex_lock(&ptask_kernel.lock);
	v = ptask_kernel.ns.counts[i];
	mutex_unlock(&ptask_kernel.lock);
	return sysfs_emit(buf, "%llu\n", v);
}

static const struct attribute_group count_group = {
	.attrs = count_attr_ptrs,
};

int ptask_sysfs_init(void)
{
	int i, err;

	for (i = 0; i < __PTASK_COUNT_MAX; i++) {
		sysfs_attr_init(&count_attrs[i].attr);
		count_attrs[i].attr.name = count_names[i];
		count_attrs[i].attr.mode = 0444;
		count_attrs[i].show = count_show;
		count_attr_ptrs[i] = &count_attrs[i].attr;
	}
	ptask_kobj = kobject_create_and_add("ptask", kernel_kobj);
	if (!ptask_kobj)
		return -ENOMEM;
	err = sysfs_create_group(ptask_kobj, &ptask_group);
	if (err)
		goto err_put_ptask;
	objects_kobj = kobject_create_and_add("objects", ptask_kobj);
	if (!objects_kobj) {
		err = -ENOMEM;
		goto err_put_ptask;
	}
	err = sysfs_create_group(objects_kobj, &count_group);
	if (err)
		goto err_put_objects;
	err = ptask_sysfs_sched_init(ptask_kobj);
	if (err)
		goto err_put_objects;
	err = ptask_sysfs_objs_init(ptask_kobj);
	if (err)
		goto err_sched_exit;
	err = ptask_sysfs_limits_init(ptask_kobj);
	if (err)
		goto err_objs_exit;
	return 0;

err_objs_exit:
	ptask_sysfs_objs_exit();
err_sched_exit:
	ptask_sysfs_sched_exit();
err_put_objects:
	kobject_put(objects_kobj);
err_put_ptask:
	kobject_put(ptask_kobj);
	return err;
}

void ptask_sysfs_exit(void)
{
	ptask_sysfs_limits_exit();
	ptask_sysfs_objs_exit();
	ptask_sysfs_sched_exit();
	kobject_put(objects_kobj);
	kobject_put(ptask_kobj);
}
