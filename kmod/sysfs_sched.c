// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs_sched.c - /sys/kernel/ptask/sched/: PTSched's settings and state
 * (Documentation/ABI/testing/sysfs-kernel-ptask).
 *
 * Each writable file holds one setting of struct ptask_sched_params; a
 * write needs CAP_SYS_ADMIN (-EPERM), is parsed (-EINVAL) and goes to
 * ptask_core_sched_set(), which checks the range (-EINVAL) before applying
 * anything.  Reads take the namespace mutex and bring the state up to
 * date first.
 */
#include <linux/capability.h>
#include <linux/kobject.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include "ptask_kmod.h"

static const char *const policy_names[__PTASK_POLICY_MAX] = PTASK_POLICY_NAMES;

static struct kobject *sched_kobj;

static void sched_read(struct ptask_sched_params *p)
{
	mutex_lock(&ptask_kernel.lock);
	ptask_core_sched_get(&ptask_kernel.ns, p);
	mutex_unlock(&ptask_kernel.lock);
}

static ssize_t sched_write(u32 mask, const struct ptask_sched_params *p,
			   size_t count)
{
	int err;

	mutex_lock(&ptask_kernel.lock);
	err = ptask_core_sched_set(&ptask_kernel.ns, mask, p);
	mutex_unlock(&ptask_kernel.lock);
	return err ? err : count;
}

/* The files, in this order; sched_show() and sched_store() switch on it. */
enum sched_file {
	SF_BUDGETS, SF_ALPHA, SF_POLICY, SF_TIMER, SF_WINDOW, SF_PERIOD,
	SF_ACTIVE, SF_HELD, SF_N_ACCELS, SF_TOTAL_WEIGHT, __SF_MAX,
};

static ssize_t sched_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf);
static ssize_t sched_store(struct kobject *kobj, struct kobj_attribute *attr,
			   const char *buf, size_t count);

static struct kobj_attribute sched_files[__SF_MAX] = {
	[SF_BUDGETS] = __ATTR(budgets, 0644, sched_show, sched_store),
	[SF_ALPHA] = __ATTR(alpha_permille, 0644, sched_show, sched_store),
	[SF_POLICY] = __ATTR(policy, 0644, sched_show, sched_store),
	[SF_TIMER] = __ATTR(timer_us, 0644, sched_show, sched_store),
	[SF_WINDOW] = __ATTR(window_ms, 0644, sched_show, sched_store),
	[SF_PERIOD] = __ATTR(period_ns, 0444, sched_show, NULL),
	[SF_ACTIVE] = __ATTR(active, 0444, sched_show, NULL),
	[SF_HELD] = __ATTR(held, 0444, sched_show, NULL),
	[SF_N_ACCELS] = __ATTR(n_accels, 0444, sched_show, NULL),
	[SF_TOTAL_WEIGHT] = __ATTR(total_weight, 0444, sched_show, NULL),
};

/* "default [fifo] ...": every policy, the current one in brackets. */
static ssize_t policy_show(u32 policy, char *buf)
{
	int i, len = 0;

	for (i = 0; i < __PTASK_POLICY_MAX; i++)
		len += sysfs_emit_at(buf, len, i == policy ? "%s[%s]" : "%s%s",
				     i ? " " : "", policy_names[i]);
	return len + sysfs_emit_at(buf, len, "\n");
}

static ssize_t sched_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	struct ptask_sched_params p;

	sched_read(&p);
	switch (attr - sched_files) {
	case SF_BUDGETS:
		return sysfs_emit(buf, "%u\n", p.budgets);
	case SF_ALPHA:
		return sysfs_emit(buf, "%u\n", p.alpha_permille);
	case SF_POLICY:
		return policy_show(p.policy, buf);
	case SF_TIMER:
		return sysfs_emit(buf, "%u\n", p.timer_us);
	case SF_WINDOW:
		return sysfs_emit(buf, "%u\n", p.window_ms);
	case SF_PERIOD:
		return sysfs_emit(buf, "%llu\n", p.period_ns);
	case SF_ACTIVE:
		return sysfs_emit(buf, "%u\n", p.active);
	case SF_HELD:
		return sysfs_emit(buf, "%u\n", p.held);
	case SF_N_ACCELS:
		return sysfs_emit(buf, "%u\n", p.n_accels);
	case SF_TOTAL_WEIGHT:
		return sysfs_emit(buf, "%llu\n", p.total_weight);
	}
	return -EINVAL;
}

static ssize_t sched_store(struct kobject *kobj, struct kobj_attribute *attr,
			   const char *buf, size_t count)
{
	struct ptask_sched_params p = {};
	u32 mask, *field;
	int i;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	switch (attr - sched_files) {
	case SF_POLICY:
		i = sysfs_match_string(policy_names, buf);
		if (i < 0)
			return -EINVAL;
		p.policy = i;
		return sched_write(PTASK_SCHED_SET_POLICY, &p, count);
	case SF_BUDGETS:
		mask = PTASK_SCHED_SET_BUDGETS;
		field = &p.budgets;
		break;
	case SF_ALPHA:
		mask = PTASK_SCHED_SET_ALPHA;
		field = &p.alpha_permille;
		break;
	case SF_TIMER:
		mask = PTASK_SCHED_SET_TIMER;
		field = &p.timer_us;
		break;
	case SF_WINDOW:
		mask = PTASK_SCHED_SET_WINDOW;
		field = &p.window_ms;
		break;
	default:
		return -EINVAL;
	}
	if (kstrtou32(buf, 0, field))
		return -EINVAL;
	return sched_write(mask, &p, count);
}

static struct attribute *sched_attrs[] = {
	&sched_files[SF_BUDGETS].attr,
	&sched_files[SF_ALPHA].attr,
	&sched_files[SF_POLICY].attr,
	&sched_files[SF_TIMER].attr,
	&sched_files[SF_WINDOW].attr,
	&sched_files[SF_PERIOD].attr,
	&sched_files[SF_ACTIVE].attr,
	&sched_files[SF_HELD].attr,
	&sched_files[SF_N_ACCELS].attr,
	&sched_files[SF_TOTAL_WEIGHT].attr,
	NULL,
};

static const struct attribute_group sched_group = {
	.attrs = sched_attrs,
};

/**
 * ptask_sysfs_sched_init() - create /sys/kernel/ptask/sched
 * @parent: /sys/kernel/ptask
 *
 * Return: 0 or -ENOMEM / the sysfs error.
 */
int ptask_sysfs_sched_init(struct kobject *parent)
{
	int err;

	sched_kobj = kobject_create_and_add("sched", parent);
	if (!sched_kobj)
		return -ENOMEM;
	err = sysfs_create_group(sched_kobj, &sched_group);
	if (err) {
		kobject_put(sched_kobj);
		sched_kobj = NULL;
	}
	return err;
}

/**
 * ptask_sysfs_sched_exit() - remove /sys/kernel/ptask/sched
 */
void ptask_sysfs_sched_exit(void)
{
	kobject_put(sched_kobj);
}
