// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs_objs.c - one sysfs directory per process with GPU accounting
 * (/sys/kernel/ptask/procs/<pid>/) and per ptask
 * (/sys/kernel/ptask/ptasks/<handle>/).
 *
 * The core announces records and ptasks as they come and go
 * (ptask_os_event(), the namespace mutex held).  Making or removing a
 * kobject may sleep on sysfs readers, and a reader takes the namespace
 * mutex, so the directories are made and removed later, in order, by an
 * ordered workqueue that holds no lock.  A directory holds only its key:
 * every read or write looks the object up again under the mutex and gets
 * -ENODEV once it is gone, so no pointer into the core outlives it.
 *
 * Locking: @dirs and the dir structs are touched only by the workqueue
 * (and by exit, after the queue is drained).
 */
#include <linux/capability.h>
#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/workqueue.h>
#include "ptask_kmod.h"

/**
 * struct obj_dir - one directory
 * @kobj: its kobject (name: the pid or the handle)
 * @type: PTASK_OBJ_PROCESS or PTASK_OBJ_PTASK
 * @key: the pid or the handle
 * @node: in @dirs
 */
struct obj_dir {
	struct kobject kobj;
	u32 type;
	u32 key;
	struct list_head node;
};

/**
 * struct obj_op - a directory to make or remove
 * @work: on @objs_wq
 * @add: make (true) or remove
 * @type: as struct obj_dir
 * @key: as struct obj_dir
 */
struct obj_op {
	struct work_struct work;
	bool add;
	u32 type;
	u32 key;
};

static struct workqueue_struct *objs_wq;
static struct kobject *procs_kobj, *ptasks_kobj;
static LIST_HEAD(dirs);

static u32 dir_key(struct kobject *kobj)
{
	return container_of(kobj, struct obj_dir, kobj)->key;
}

/* --- procs/<pid>/ ----------------------------------------------------- */

static int proc_read(struct kobject *kobj, struct ptask_proc_info *info)
{
	struct ptask_proc *proc;
	int err = 0;

	mutex_lock(&ptask_kernel.lock);
	ptask_core_sched_update(&ptask_kernel.ns);
	proc = ptask_core_proc_find(&ptask_kernel.ns, (s32)dir_key(kobj));
	if (proc)
		ptask_core_proc_describe(proc, info);
	else
		err = -ENODEV;
	mutex_unlock(&ptask_kernel.lock);
	return err;
}

/* The read-only files of procs/<pid>/, in this order. */
enum proc_file {
	PF_NICE, PF_UID, PF_ACTIVE, PF_HELD, PF_QUEUED, PF_RUNNING, PF_PTASKS,
	PF_BUDGET, PF_BMAX, PF_GPU, PF_AVG, PF_INVOCATIONS, PF_HELD_NS,
	__PF_MAX,
};

static ssize_t proc_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf);

static struct kobj_attribute proc_files[__PF_MAX] = {
	[PF_NICE] = __ATTR(nice, 0444, proc_show, NULL),
	[PF_UID] = __ATTR(uid, 0444, proc_show, NULL),
	[PF_ACTIVE] = __ATTR(active, 0444, proc_show, NULL),
	[PF_HELD] = __ATTR(held, 0444, proc_show, NULL),
	[PF_QUEUED] = __ATTR(queued, 0444, proc_show, NULL),
	[PF_RUNNING] = __ATTR(running, 0444, proc_show, NULL),
	[PF_PTASKS] = __ATTR(ptasks, 0444, proc_show, NULL),
	[PF_BUDGET] = __ATTR(budget_ns, 0444, proc_show, NULL),
	[PF_BMAX] = __ATTR(bmax_ns, 0444, proc_show, NULL),
	[PF_GPU] = __ATTR(gpu_ns, 0444, proc_show, NULL),
	[PF_AVG] = __ATTR(avg_ns, 0444, proc_show, NULL),
	[PF_INVOCATIONS] = __ATTR(invocations, 0444, proc_show, NULL),
	[PF_HELD_NS] = __ATTR(held_ns, 0444, proc_show, NULL),
};

static ssize_t proc_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	struct ptask_proc_info i;
	int err = proc_read(kobj, &i);

	if (err)
		return err;
	switch (attr - proc_files) {
	case PF_NICE:
		return sysfs_emit(buf, "%d\n", i.nice);
	case PF_UID:
		return sysfs_emit(buf, "%u\n", i.uid);
	case PF_ACTIVE:
		return sysfs_emit(buf, "%u\n", i.active);
	case PF_HELD:
		return sysfs_emit(buf, "%u\n", i.held);
	case PF_QUEUED:
		return sysfs_emit(buf, "%u\n", i.queued);
	case PF_RUNNING:
		return sysfs_emit(buf, "%u\n", i.running);
	case PF_PTASKS:
		return sysfs_emit(buf, "%u\n", i.ptasks);
	case PF_BUDGET:
		return sysfs_emit(buf, "%lld\n", i.budget_ns);
	case PF_BMAX:
		return sysfs_emit(buf, "%lld\n", i.bmax_ns);
	case PF_GPU:
		return sysfs_emit(buf, "%llu\n", i.gpu_ns);
	case PF_AVG:
		return sysfs_emit(buf, "%llu\n", i.avg_ns);
	case PF_INVOCATIONS:
		return sysfs_emit(buf, "%llu\n", i.invocations);
	case PF_HELD_NS:
		return sysfs_emit(buf, "%llu\n", i.held_ns);
	}
	return -EINVAL;
}

/* weight: the weight in use; writing 1..PTASK_WEIGHT_MAX overrides it,
 * 0 goes back to the nice value's.
 */
static ssize_t proc_weight_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	struct ptask_proc_info info;
	int err = proc_read(kobj, &info);

	return err ? err : sysfs_emit(buf, "%u\n", info.weight);
}

static ssize_t proc_weight_store(struct kobject *kobj,
				 struct kobj_attribute *attr,
				 const char *buf, size_t count)
{
	u32 weight;
	int err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (kstrtou32(buf, 0, &weight))
		return -EINVAL;
	mutex_lock(&ptask_kernel.lock);
	err = ptask_core_proc_set_weight(&ptask_kernel.ns, (s32)dir_key(kobj),
					 weight);
	mutex_unlock(&ptask_kernel.lock);
	if (err == -ESRCH)
		err = -ENODEV;
	return err ? err : count;
}

static struct kobj_attribute proc_weight_attr =
	__ATTR(weight, 0644, proc_weight_show, proc_weight_store);

static struct attribute *proc_attrs[] = {
	&proc_weight_attr.attr,
	&proc_files[PF_NICE].attr, &proc_files[PF_UID].attr,
	&proc_files[PF_ACTIVE].attr, &proc_files[PF_HELD].attr,
	&proc_files[PF_QUEUED].attr, &proc_files[PF_RUNNING].attr,
	&proc_files[PF_PTASKS].attr, &proc_files[PF_BUDGET].attr,
	&proc_files[PF_BMAX].attr, &proc_files[PF_GPU].attr,
	&proc_files[PF_AVG].attr, &proc_files[PF_INVOCATIONS].attr,
	&proc_files[PF_HELD_NS].attr,
	NULL,
};
ATTRIBUTE_GROUPS(proc);

/* --- ptasks/<handle>/ ------------------------------------------------- */

/**
 * struct ptask_view - what a ptask directory shows, copied under the mutex
 */
struct ptask_view {
	u32 priority;
	s32 proxy_nice;
	s32 owner_pid;
	u32 owner_uid;
	u32 state;
	u32 kind;
	u32 graph;
	u32 accel;
	u64 gpu_ns;
	u64 invocations;
	char name[PTASK_NAME_MAX];
};

static int ptask_read(struct kobject *kobj, struct ptask_view *v)
{
	struct ptask_obj *o;
	struct ptask_ptask *p;
	int err = 0;

	mutex_lock(&ptask_kernel.lock);
	o = ptask_core_ns_find(&ptask_kernel.ns, dir_key(kobj), PTASK_OBJ_PTASK);
	if (o) {
		p = container_of(o, struct ptask_ptask, obj);
		v->priority = p->static_prio;
		v->proxy_nice = p->proxy_nice;
		v->owner_pid = p->owner_pid;
		v->owner_uid = p->owner_uid;
		v->state = p->state;
		v->kind = p->kind;
		v->graph = p->graph->obj.handle;
		v->accel = p->last_accel;
		v->gpu_ns = p->gpu_ns;
		v->invocations = p->invocations;
		strscpy(v->name, p->name, sizeof(v->name));
	} else {
		err = -ENODEV;
	}
	mutex_unlock(&ptask_kernel.lock);
	return err;
}

/*
 * The read-only files of ptasks/<handle>/, in this order.  Root's only
 * (0400, priority 0600): a ptask's name, owner and graph are another
 * user's business, as PTASK_IOC_GET_OBJECT (CAP_SYS_ADMIN) keeps them;
 * world-readable, uid 1000 read the name of root's private ptask (issue
 * 13, the outside attack).  procs/<pid>/ stays world-readable, like
 * /proc/<pid>/stat.
 */
enum ptask_dir_file {
	TF_PROXY_NICE, TF_OWNER_PID, TF_OWNER_UID, TF_STATE, TF_KIND, TF_GRAPH,
	TF_ACCEL, TF_GPU, TF_INVOCATIONS, TF_NAME, __TF_MAX,
};

static ssize_t ptask_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf);

static struct kobj_attribute ptask_files[__TF_MAX] = {
	[TF_PROXY_NICE] = __ATTR(proxy_nice, 0400, ptask_show, NULL),
	[TF_OWNER_PID] = __ATTR(owner_pid, 0400, ptask_show, NULL),
	[TF_OWNER_UID] = __ATTR(owner_uid, 0400, ptask_show, NULL),
	[TF_STATE] = __ATTR(state, 0400, ptask_show, NULL),
	[TF_KIND] = __ATTR(kind, 0400, ptask_show, NULL),
	[TF_GRAPH] = __ATTR(graph, 0400, ptask_show, NULL),
	[TF_ACCEL] = __ATTR(accel, 0400, ptask_show, NULL),
	[TF_GPU] = __ATTR(gpu_ns, 0400, ptask_show, NULL),
	[TF_INVOCATIONS] = __ATTR(invocations, 0400, ptask_show, NULL),
	[TF_NAME] = __ATTR(name, 0400, ptask_show, NULL),
};

static ssize_t ptask_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	struct ptask_view v;
	int err = ptask_read(kobj, &v);

	if (err)
		return err;
	switch (attr - ptask_files) {
	case TF_PROXY_NICE:
		return sysfs_emit(buf, "%d\n", v.proxy_nice);
	case TF_OWNER_PID:
		return sysfs_emit(buf, "%d\n", v.owner_pid);
	case TF_OWNER_UID:
		return sysfs_emit(buf, "%u\n", v.owner_uid);
	case TF_STATE:
		return sysfs_emit(buf, "%u\n", v.state);
	case TF_KIND:
		return sysfs_emit(buf, "%u\n", v.kind);
	case TF_GRAPH:
		return sysfs_emit(buf, "%u\n", v.graph);
	case TF_ACCEL:
		return sysfs_emit(buf, "%u\n", v.accel);
	case TF_GPU:
		return sysfs_emit(buf, "%llu\n", v.gpu_ns);
	case TF_INVOCATIONS:
		return sysfs_emit(buf, "%llu\n", v.invocations);
	case TF_NAME:
		return sysfs_emit(buf, "%s\n", v.name);
	}
	return -EINVAL;
}

/* priority: the static priority, PTASK_PRIO_MIN..PTASK_PRIO_MAX. */
static ssize_t ptask_priority_show(struct kobject *kobj,
				   struct kobj_attribute *attr, char *buf)
{
	struct ptask_view v;
	int err = ptask_read(kobj, &v);

	return err ? err : sysfs_emit(buf, "%u\n", v.priority);
}

static ssize_t ptask_priority_store(struct kobject *kobj,
				    struct kobj_attribute *attr,
				    const char *buf, size_t count)
{
	u32 prio;
	int err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (kstrtou32(buf, 0, &prio))
		return -EINVAL;
	mutex_lock(&ptask_kernel.lock);
	err = ptask_core_ptask_admin_priority(&ptask_kernel.ns, dir_key(kobj),
					      prio);
	mutex_unlock(&ptask_kernel.lock);
	if (err == -ENOENT)
		err = -ENODEV;
	return err ? err : count;
}

static struct kobj_attribute ptask_priority_attr =
	__ATTR(priority, 0600, ptask_priority_show, ptask_priority_store);

static struct attribute *ptask_attrs[] = {
	&ptask_priority_attr.attr,
	&ptask_files[TF_PROXY_NICE].attr, &ptask_files[TF_OWNER_PID].attr,
	&ptask_files[TF_OWNER_UID].attr, &ptask_files[TF_STATE].attr,
	&ptask_files[TF_KIND].attr, &ptask_files[TF_GRAPH].attr,
	&ptask_files[TF_ACCEL].attr, &ptask_files[TF_GPU].attr,
	&ptask_files[TF_INVOCATIONS].attr, &ptask_files[TF_NAME].attr,
	NULL,
};
ATTRIBUTE_GROUPS(ptask);

/* --- the directories -------------------------------------------------- */

static void dir_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct obj_dir, kobj));
}

static const struct kobj_type proc_ktype = {
	.release = dir_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = proc_groups,
};

static const struct kobj_type ptask_ktype = {
	.release = dir_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = ptask_groups,
};

static void dir_add(u32 type, u32 key)
{
	bool proc = type == PTASK_OBJ_PROCESS;
	struct obj_dir *d = kzalloc(sizeof(*d), GFP_KERNEL);
	int err;

	if (!d)
		return;
	d->type = type;
	d->key = key;
	if (proc)
		err = kobject_init_and_add(&d->kobj, &proc_ktype, procs_kobj,
					   "%d", (s32)key);
	else
		err = kobject_init_and_add(&d->kobj, &ptask_ktype,
					   ptasks_kobj, "%u", key);
	if (err) {
		pr_warn_ratelimited("ptask: no sysfs directory for %s %u: %d\n",
				    proc ? "process" : "ptask", key, err);
		kobject_put(&d->kobj);
		return;
	}
	list_add_tail(&d->node, &dirs);
}

static void dir_remove(u32 type, u32 key)
{
	struct obj_dir *d;

	list_for_each_entry(d, &dirs, node) {
		if (d->type != type || d->key != key)
			continue;
		list_del(&d->node);
		kobject_put(&d->kobj);
		return;
	}
}

static void obj_op_fn(struct work_struct *work)
{
	struct obj_op *op = container_of(work, struct obj_op, work);

	if (op->add)
		dir_add(op->type, op->key);
	else
		dir_remove(op->type, op->key);
	kfree(op);
}

/**
 * ptask_sysfs_objs_event() - a process record or a ptask came or went
 * @event: PTASK_EVENT_CREATED or PTASK_EVENT_DESTROYED (others ignored)
 * @type: PTASK_OBJ_PROCESS or PTASK_OBJ_PTASK (others ignored)
 * @key: the pid or the handle
 *
 * Context: the namespace mutex held; may sleep (GFP_KERNEL).  The
 * directory follows shortly, from the workqueue.
 */
void ptask_sysfs_objs_event(u32 event, u32 type, u32 key)
{
	struct obj_op *op;

	if ((type != PTASK_OBJ_PROCESS && type != PTASK_OBJ_PTASK) ||
	    (event != PTASK_EVENT_CREATED && event != PTASK_EVENT_DESTROYED) ||
	    !objs_wq)
		return;
	op = kmalloc(sizeof(*op), GFP_KERNEL);
	if (!op)
		return;
	INIT_WORK(&op->work, obj_op_fn);
	op->add = event == PTASK_EVENT_CREATED;
	op->type = type;
	op->key = key;
	queue_work(objs_wq, &op->work);
}

/**
 * ptask_sysfs_objs_init() - create procs/ and ptasks/ and the workqueue
 * @parent: /sys/kernel/ptask
 *
 * Return: 0 or -ENOMEM.
 */
int ptask_sysfs_objs_init(struct kobject *parent)
{
	objs_wq = alloc_ordered_workqueue("ptask_sysfs", 0);
	if (!objs_wq)
		return -ENOMEM;
	procs_kobj = kobject_create_and_add("procs", parent);
	if (!procs_kobj)
		goto err_destroy_wq;
	ptasks_kobj = kobject_create_and_add("ptasks", parent);
	if (!ptasks_kobj)
		goto err_put_procs;
	return 0;

err_put_procs:
	kobject_put(procs_kobj);
err_destroy_wq:
	destroy_workqueue(objs_wq);
	objs_wq = NULL;
	return -ENOMEM;
}

/**
 * ptask_sysfs_objs_exit() - drain the queue, remove every directory
 *
 * Context: no client is left (the module is going), so nothing queues.
 */
void ptask_sysfs_objs_exit(void)
{
	struct obj_dir *d, *tmp;

	destroy_workqueue(objs_wq);
	objs_wq = NULL;
	list_for_each_entry_safe(d, tmp, &dirs, node) {
		list_del(&d->node);
		kobject_put(&d->kobj);
	}
	kobject_put(ptasks_kobj);
	kobject_put(procs_kobj);
}
