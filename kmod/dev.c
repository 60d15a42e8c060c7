// SPDX-License-Identifier: GPL-2.0
/*
 * dev.c - /dev/ptask: open, release, the ioctls, mmap and poll.
 *
 * Every ioctl goes the same way (the error order of uapi/ptask.h):
 * look the command up, copy its struct in with copy_struct_from_user(),
 * check its fields, copy in any further user buffer, then call the core
 * under ptask_kernel.lock.  A call that would block drops the lock and
 * sleeps on the client's wait queue until the core bumps the client's
 * wake_seq, a signal arrives or the absolute deadline passes.  Results are
 * copied out after the lock is dropped.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/pid.h>
#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/hrtimer.h>
#include <linux/string.h>
#include "ptask_kmod.h"

static int ptask_open(struct inode *inode, struct file *file)
{
	struct ptask_file *pf = kzalloc(sizeof(*pf), GFP_KERNEL_ACCOUNT);

	if (!pf)
		return -ENOMEM;
	init_waitqueue_head(&pf->wq);
	ptask_rings_init(pf);
	pf->opener = get_task_pid(current, PIDTYPE_TGID);
	mutex_lock(&ptask_kernel.lock);
	pf->client = ptask_core_client_create(&ptask_kernel.ns, pf);
	/* The opener's uid pays for the fd's datablocks, as who->uid. */
	if (pf->client)
		pf->client->uid = __kuid_val(current_euid());
	mutex_unlock(&ptask_kernel.lock);
	if (!pf->client)
		goto err_put_opener;
	file->private_data = pf;
	return nonseekable_open(inode, file);

err_put_opener:
	put_pid(pf->opener);
	kfree(pf);
	return -ENOMEM;
}

/* The last close of the fd, or the death of its last holder. */
static int ptask_release(struct inode *inode, struct file *file)
{
	struct ptask_file *pf = file->private_data;

	mutex_lock(&ptask_kernel.lock);
	ptask_core_client_destroy(pf->client);
	mutex_unlock(&ptask_kernel.lock);
	ptask_rings_release(pf);
	put_pid(pf->opener);
	kfree(pf);
	return 0;
}

/*
 * process_key() - the pid PTSched keys a process's record by
 * @task: any thread of the process
 *
 * The thread-group id in the initial pid namespace: unique on the host
 * while the process lives, whichever pid namespace it runs in (two
 * containers' pid 1 are two processes with two budgets), and the number
 * an administrator sees in /sys/kernel/ptask/procs/.  Never
 * task_tgid_vnr(), the pid in the caller's own namespace.
 *
 * Return: the pid, 0 for a task already past exit_notify().
 */
static s32 process_key(struct task_struct *task)
{
	return task_tgid_nr(task);
}

static bool caller_in_group(const struct ptask_caller *who, u32 gid)
{
	return in_group_p(KGIDT_INIT(gid));
}

static void fill_caller(struct ptask_caller *who)
{
	who->uid = __kuid_val(current_euid());
	who->gid = __kgid_val(current_egid());
	who->pid = process_key(current);
	who->nice = task_nice(current);
	who->dac_override = ns_capable_noaudit(&init_user_ns, CAP_DAC_OVERRIDE);
	who->sys_nice = ns_capable_noaudit(&init_user_ns, CAP_SYS_NICE);
	who->in_group = caller_in_group;
}

/**
 * struct ptask_ioctl_ctx - one ioctl in flight
 * @desc: the command's table entry
 * @uarg: the user's struct
 * @usize: its size as the user gave it
 * @arg: the kernel copy
 * @io: further buffers, kernel copies
 * @code: PTASK_OPEN's code, or EXEC_PTASK_INFO's output buffer
 * @outputs: EXEC_COMPLETE's outputs
 * @kout: a ring entry's: where the struct is copied out (not @uarg)
 * @ctl: a ring entry's: how it may block; NULL for an ioctl
 */
struct ptask_ioctl_ctx {
	const struct ptask_arg_desc *desc;
	void __user *uarg;
	u32 usize;
	union ptask_args arg;
	struct ptask_call_io io;
	u8 *code;
	struct ptask_exec_output *outputs;
	void *kout;
	struct ptask_entry_ctl *ctl;
};

static int copy_arg_in(struct ptask_ioctl_ctx *x, unsigned int cmd,
		       unsigned long uarg)
{
	x->desc = ptask_core_args_desc(cmd);
	if (!x->desc)
		return -ENOTTY;
	x->uarg = (void __user *)uarg;
	if (get_user(x->usize, (u32 __user *)x->uarg))
		return -EFAULT;
	if (x->usize < x->desc->ver0)
		return -EINVAL;
	if (x->usize > PAGE_SIZE)
		return -E2BIG;
	return copy_struct_from_user(&x->arg, x->desc->ksize, x->uarg,
				     x->usize);
}

/* Copies in (or allocates) the buffers beyond the struct itself. */
static int prepare_io(struct ptask_ioctl_ctx *x, unsigned int cmd)
{
	union ptask_args *a = &x->arg;
	u32 n;

	switch (cmd) {
	case PTASK_IOC_PTASK_OPEN:
		if (!a->ptask_open.code_len)
			return 0;
		x->code = vmemdup_user(u64_to_user_ptr(a->ptask_open.code),
				       a->ptask_open.code_len);
		if (IS_ERR(x->code))
			return PTR_ERR(x->code);
		x->io.code = x->code;
		return 0;
	case PTASK_IOC_EXEC_COMPLETE:
		n = a->complete.n_outputs;
		if (!n)
			return 0;
		x->outputs = memdup_user(u64_to_user_ptr(a->complete.outputs),
					 array_size(n, sizeof(*x->outputs)));
		if (IS_ERR(x->outputs))
			return PTR_ERR(x->outputs);
		x->io.outputs = x->outputs;
		return 0;
	case PTASK_IOC_EXEC_TAKE:
		n = min_t(u32, a->take.max_invocations,
			  PTASK_TAKE_MAX_INVOCATIONS);
		x->io.invocations = kvcalloc(n, sizeof(*x->io.invocations),
					     GFP_KERNEL);
		n = min_t(u32, a->take.max_ports, PTASK_TAKE_MAX_PORTS);
		x->io.ports = kvcalloc(n, sizeof(*x->io.ports), GFP_KERNEL);
		return x->io.invocations && x->io.ports ? 0 : -ENOMEM;
	case PTASK_IOC_EXEC_PTASK_INFO:
		if (!a->info.code)
			return 0;
		n = min_t(u32, a->info.code_len, PTASK_CODE_MAX_BYTES);
		x->code = kvmalloc(max_t(u32, n, 1), GFP_KERNEL);
		if (!x->code)
			return -ENOMEM;
		x->io.code_out = x->code;
		x->io.code_out_len = n;
		return 0;
	case PTASK_IOC_EXEC_FORGOTTEN:
		n = min_t(u32, a->forgotten.max_handles, PTASK_FORGOTTEN_MAX);
		x->io.forgotten = kvcalloc(n, sizeof(*x->io.forgotten),
					   GFP_KERNEL);
		return x->io.forgotten ? 0 : -ENOMEM;
	}
	return 0;
}

static void release_io(struct ptask_ioctl_ctx *x)
{
	if (!IS_ERR_OR_NULL(x->code))
		kvfree(x->code);
	if (!IS_ERR_OR_NULL(x->outputs))
		kfree(x->outputs);
	kvfree(x->io.invocations);
	kvfree(x->io.ports);
	kvfree(x->io.forgotten);
}

/* For a blocking call: may it sleep, and until when (0: no deadline)? */
static bool blocking_call(unsigned int cmd, const union ptask_args *a,
			  struct file *file, u64 *deadline)
{
	return ptask_core_args_blocking(cmd, a, deadline) &&
	       !(file->f_flags & O_NONBLOCK);
}

/*
 * Sleep until the client's wake_seq moves past @seq.
 * Return: 0 to try again, -ETIMEDOUT, or -ERESTARTSYS on a signal (the
 * absolute deadline makes the restart exact).
 */
static int wait_for_change(struct ptask_file *pf, u64 seq, u64 deadline)
{
	long ret;

	if (!deadline)
		return wait_event_interruptible(pf->wq,
				READ_ONCE(pf->client->wake_seq) != seq);
	if (ktime_get_ns() >= deadline)
		return -ETIMEDOUT;
	ret = wait_event_interruptible_hrtimeout(pf->wq,
						 READ_ONCE(pf->client->wake_seq) != seq,
						 ns_to_ktime(deadline - ktime_get_ns()));
	return ret == -ETIME ? -ETIMEDOUT : ret;
}

/*
 * A ring entry that would block: may it, and until when?  Return: 0 to
 * wait until *@wait_until (the earlier of its own and ENTER's deadline),
 * or -EAGAIN when ENTER lets it not (it stays queued).
 */
static int entry_may_wait(struct ptask_entry_ctl *ctl, u64 deadline,
			  u64 *wait_until)
{
	*wait_until = deadline;
	if (!ctl)
		return 0;
	if (!ctl->may_block) {
		ctl->stopped = true;
		return -EAGAIN;
	}
	if (ctl->deadline && (!deadline || ctl->deadline < deadline))
		*wait_until = ctl->deadline;
	return 0;
}

static int call_core(struct file *file, unsigned int cmd,
		     struct ptask_ioctl_ctx *x)
{
	struct ptask_file *pf = file->private_data;
	struct ptask_caller who;
	u64 deadline = 0, wait_until, seq;
	bool may_block;
	int err;

	fill_caller(&who);
	may_block = blocking_call(cmd, &x->arg, file, &deadline);
	for (;;) {
		mutex_lock(&ptask_kernel.lock);
		err = ptask_core_call(pf->client, &who, cmd, &x->arg, &x->io);
		seq = pf->client->wake_seq;
		mutex_unlock(&ptask_kernel.lock);
		if (err != -EAGAIN || !may_block)
			return err;
		err = entry_may_wait(x->ctl, deadline, &wait_until);
		if (!err)
			err = wait_for_change(pf, seq, wait_until);
		/* ENTER's deadline or a signal: the entry is not done. */
		if (err && x->ctl && (err != -ETIMEDOUT || wait_until != deadline))
			x->ctl->stopped = true;
		if (err)
			return err;
	}
}

/* Taken invocations the executor never learnt about: fail them. */
static void untake(struct ptask_file *pf, struct ptask_ioctl_ctx *x)
{
	struct ptask_call_io none = { };
	u32 i;

	mutex_lock(&ptask_kernel.lock);
	for (i = 0; i < x->arg.take.n_invocations; i++) {
		struct ptask_exec_complete done = {
			.size = sizeof(done),
			.id = x->io.invocations[i].id,
			.status = -EFAULT,
		};

		ptask_core_exec_complete(pf->client, &done, &none);
	}
	mutex_unlock(&ptask_kernel.lock);
}

static int copy_results_out(struct file *file, unsigned int cmd,
			    struct ptask_ioctl_ctx *x)
{
	union ptask_args *a = &x->arg;
	int err = 0;

	if (cmd == PTASK_IOC_EXEC_TAKE) {
		if (copy_to_user(u64_to_user_ptr(a->take.invocations),
				 x->io.invocations,
				 array_size(a->take.n_invocations,
					    sizeof(*x->io.invocations))) ||
		    copy_to_user(u64_to_user_ptr(a->take.ports), x->io.ports,
				 array_size(a->take.n_ports,
					    sizeof(*x->io.ports))))
			err = -EFAULT;
	} else if (cmd == PTASK_IOC_EXEC_PTASK_INFO && a->info.code) {
		if (copy_to_user(u64_to_user_ptr(a->info.code), x->code,
				 a->info.code_len))
			err = -EFAULT;
	} else if (cmd == PTASK_IOC_EXEC_FORGOTTEN) {
		/* The notices left the queue: lost on a bad pointer. */
		if (copy_to_user(u64_to_user_ptr(a->forgotten.handles),
				 x->io.forgotten,
				 array_size(a->forgotten.n_handles,
					    sizeof(*x->io.forgotten))))
			err = -EFAULT;
	}
	if (!err && x->desc->copy_out && x->kout)
		memcpy(x->kout, &x->arg, min_t(u32, x->usize, x->desc->ksize));
	else if (!err && x->desc->copy_out &&
		 copy_to_user(x->uarg, &x->arg,
			      min_t(u32, x->usize, x->desc->ksize)))
		err = -EFAULT;
	if (err && cmd == PTASK_IOC_EXEC_TAKE)
		untake(file->private_data, x);
	return err;
}

/* From the struct's checks to its results: an ioctl's or a ring entry's. */
static int run_call(struct file *file, struct ptask_ioctl_ctx *x)
{
	unsigned int cmd = x->desc->cmd;
	int err;

	err = ptask_core_args_check(cmd, &x->arg);
	if (err)
		return err;
	err = prepare_io(x, cmd);
	if (err)
		goto out_release_io;
	err = call_core(file, cmd, x);
	if (!err)
		err = copy_results_out(file, cmd, x);
out_release_io:
	release_io(x);
	return err;
}

static long ptask_ioctl(struct file *file, unsigned int cmd,
			unsigned long uarg)
{
	struct ptask_ioctl_ctx *x;
	int err;

	if (ptask_ring_ioctl_cmd(cmd))
		return ptask_ring_ioctl(file, cmd, uarg);
	/* union ptask_args is too large for the kernel stack budget. */
	x = kzalloc(sizeof(*x), GFP_KERNEL);
	if (!x)
		return -ENOMEM;
	err = copy_arg_in(x, cmd, uarg);
	if (!err)
		err = run_call(file, x);
	kfree(x);
	return err;
}

/**
 * ptask_dev_entry_call() - a ring entry's call, the ioctl's way
 * @file: the /dev/ptask file the ring belongs to
 * @cmd: the entry's command (a known one, checked by the caller)
 * @karg: the entry's struct, a private copy
 * @usize: its @size field; at most what @karg holds
 * @ctl: how it may block (and whether it was left undone)
 * @out: where the struct is copied out, as the ioctl copies it to the user
 *
 * The struct is taken as copy_struct_from_user() takes the ioctl's
 * (-EINVAL below the first version, -E2BIG for non-zero bytes past what
 * this module knows), then goes through run_call() as the ioctl does.
 *
 * Context: process context; no lock held.
 * Return: what the ioctl would return.
 */
int ptask_dev_entry_call(struct file *file, unsigned int cmd,
			 const void *karg, u32 usize,
			 struct ptask_entry_ctl *ctl, void *out)
{
	struct ptask_ioctl_ctx *x;
	int err;

	x = kzalloc(sizeof(*x), GFP_KERNEL);
	if (!x)
		return -ENOMEM;
	x->desc = ptask_core_args_desc(cmd);
	x->usize = usize;
	x->kout = out;
	x->ctl = ctl;
	if (!x->desc) {
		err = -ENOTTY;
	} else if (usize < x->desc->ver0) {
		err = -EINVAL;
	} else if (usize > x->desc->ksize &&
		   memchr_inv((const u8 *)karg + x->desc->ksize, 0,
			      usize - x->desc->ksize)) {
		err = -E2BIG;
	} else {
		memcpy(&x->arg, karg, min_t(u32, usize, x->desc->ksize));
		err = run_call(file, x);
	}
	kfree(x);
	return err;
}

/* What a mapping holds instead of the /dev/ptask file: the module. */
static const struct file_operations ptask_mapping_fops = {
	.owner = THIS_MODULE,
};

/*
 * A mapping of datablock or ring pages holds its pages (a buffer
 * reference), never the client: the vma gets a file of its own, so
 * close() of the last fd closes the client, its graphs and datablocks
 * as the uapi says, though a mapping (a forked child's, say) lives on
 * until munmap.  Mapped through /dev/ptask's file itself, the vma kept
 * that file, and with it the whole client, open.  The anonymous file
 * keeps the module loaded while the vma's operations may still run.
 */
static int mapping_detach(struct vm_area_struct *vma)
{
	struct file *f = anon_inode_getfile("[ptask-mapping]",
					    &ptask_mapping_fops, NULL, O_RDWR);

	if (IS_ERR(f))
		return PTR_ERR(f);
	vma_set_file(vma, f);
	fput(f);
	return 0;
}

static int ptask_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct ptask_file *pf = file->private_data;
	struct ptask_buf *buf;
	u64 bytes;
	u32 handle;
	int err;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	err = mapping_detach(vma);
	if (err)
		return err;
	if (ptask_ring_mmap_offset((u64)vma->vm_pgoff << PAGE_SHIFT))
		return ptask_ring_mmap(pf, vma);
	handle = ptask_core_datablock_mmap_handle((u64)vma->vm_pgoff << PAGE_SHIFT);
	mutex_lock(&ptask_kernel.lock);
	err = ptask_core_datablock_map(pf->client, handle, &bytes, &buf);
	mutex_unlock(&ptask_kernel.lock);
	if (err)
		return err;
	err = ptask_buf_mmap(buf, vma);
	if (err)
		ptask_os_buf_put(buf);
	return err;
}

static __poll_t ptask_poll(struct file *file, poll_table *wait)
{
	struct ptask_file *pf = file->private_data;
	__poll_t events = 0;
	u32 mask;

	poll_wait(file, &pf->wq, wait);
	mutex_lock(&ptask_kernel.lock);
	mask = ptask_core_client_poll(pf->client);
	mutex_unlock(&ptask_kernel.lock);
	if (mask & PTASK_POLL_IN)
		events |= EPOLLIN | EPOLLRDNORM;
	if (mask & PTASK_POLL_OUT)
		events |= EPOLLOUT | EPOLLWRNORM;
	if (mask & PTASK_POLL_ERR)
		events |= EPOLLERR;
	if (mask & PTASK_POLL_PRI)
		events |= EPOLLPRI;
	return events;
}

const struct file_operations ptask_fops = {
	.owner = THIS_MODULE,
	.open = ptask_open,
	.release = ptask_release,
	.unlocked_ioctl = ptask_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = ptask_mmap,
	.poll = ptask_poll,
	.show_fdinfo = ptask_show_fdinfo,
};
