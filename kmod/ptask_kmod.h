/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ptask_kmod.h - what the files of ptask.ko share.
 *
 * Locking: ptask_kernel.lock (a mutex) protects the namespace and every
 * core object; it is the core's "namespace lock".  Lock order: the
 * genetlink mutex, then mmap_lock, then ptask_kernel.lock.  Nothing is
 * copied to or from user space with ptask_kernel.lock held (a fault would
 * take mmap_lock inside it).
 */
#ifndef PTASK_KMOD_H
#define PTASK_KMOD_H

#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/kobject.h>
#include <linux/xarray.h>
#include "core/ptask_core.h"

/**
 * struct ptask_kernel - the module's one namespace
 * @lock: the namespace lock (see the top of this file)
 * @ns: every object; protected by @lock
 * @buffers: live datablock buffers, mapped or not (atomic: buffers are
 *	freed from munmap without @lock)
 */
struct ptask_kernel {
	struct mutex lock;	/* the namespace lock */
	struct ptask_ns ns;
	atomic64_t buffers;
};

extern struct ptask_kernel ptask_kernel;

/**
 * struct ptask_file - private data of one open /dev/ptask
 * @client: the core's client; protected by ptask_kernel.lock
 * @wq: woken whenever @client->wake_seq changes
 * @opener: the thread group that opened it, whose budget fdinfo shows (a
 *	reference: the process itself, not a number another namespace or a
 *	later process may also have); set at open, constant
 * @rings: its rings (kmod/ring.c) by id; the xarray's own lock
 */
struct ptask_file {
	struct ptask_client *client;
	wait_queue_head_t wq;
	struct pid *opener;
	struct xarray rings;
};

/**
 * struct ptask_buf - the pages of one datablock
 * @ref: one for the datablock, one per mapping (vma)
 * @bytes: the datablock's size
 * @npages: entries in @pages
 * @pages: order-0 pages, mapped with vm_insert_pages() so that
 *	get_user_pages() (and cuMemHostRegister) can pin a mapping
 */
struct ptask_buf {
	struct kref ref;
	u64 bytes;
	unsigned long npages;
	struct page *pages[];
};

extern const struct file_operations ptask_fops;

struct seq_file;
void ptask_show_fdinfo(struct seq_file *m, struct file *file);

int ptask_buf_mmap(struct ptask_buf *buf, struct vm_area_struct *vma);

/**
 * struct ptask_entry_ctl - how a ring entry may block (kmod/ring.c)
 * @may_block: RING_ENTER lets it block (fewer than min_complete posted)
 * @deadline: RING_ENTER's own deadline, 0 for none
 * @stopped: out: the entry was not run to its end (it would block and
 *	may not, ENTER's deadline passed, or a signal came): it stays
 *	queued
 */
struct ptask_entry_ctl {
	bool may_block;
	u64 deadline;
	bool stopped;
};

int ptask_dev_entry_call(struct file *file, unsigned int cmd,
			 const void *karg, u32 usize,
			 struct ptask_entry_ctl *ctl, void *out);

bool ptask_ring_ioctl_cmd(unsigned int cmd);
long ptask_ring_ioctl(struct file *file, unsigned int cmd,
		      unsigned long uarg);
bool ptask_ring_mmap_offset(u64 offset);
int ptask_ring_mmap(struct ptask_file *pf, struct vm_area_struct *vma);
void ptask_rings_init(struct ptask_file *pf);
void ptask_rings_release(struct ptask_file *pf);

struct genl_family;
struct genl_info;
struct netlink_callback;
struct sk_buff;
extern struct genl_family ptask_genl_family;
int ptask_nl_get_sched(struct sk_buff *skb, struct genl_info *info);
int ptask_nl_set_sched(struct sk_buff *skb, struct genl_info *info);
int ptask_nl_dump_procs(struct sk_buff *skb, struct netlink_callback *cb);
int ptask_nl_set_prio(struct sk_buff *skb, struct genl_info *info);

int ptask_netlink_init(void);
void ptask_netlink_exit(void);
void ptask_netlink_event(u32 event, u32 obj_type, u32 handle);

int ptask_sysfs_init(void);
void ptask_sysfs_exit(void);

int ptask_sysfs_sched_init(struct kobject *parent);
void ptask_sysfs_sched_exit(void);
int ptask_sysfs_objs_init(struct kobject *parent);
void ptask_sysfs_objs_exit(void);
void ptask_sysfs_objs_event(u32 event, u32 type, u32 key);
int ptask_sysfs_limits_init(struct kobject *parent);
void ptask_sysfs_limits_exit(void);

void ptask_sched_timer_init(void);
void ptask_sched_timer_exit(void);
void ptask_tunnel_timer_init(void);
void ptask_tunnel_timer_exit(void);

#endif /* PTASK_KMOD_H */
