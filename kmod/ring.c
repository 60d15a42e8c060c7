// SPDX-License-Identifier: GPL-2.0
/*
 * ring.c - kernel-mode submission and completion rings: PTASK_IOC_RING_SETUP
 * and PTASK_IOC_RING_ENTER, and mmap of a ring's region (uapi/ptask.h,
 * "Submission and completion rings" and "Kernel-mode rings").
 *
 * A ring is a region of ordinary pages (a struct ptask_buf, as a
 * datablock's, so a mapping outlives the ring and the pages count in
 * objects/buffers), laid out by the core (core/ring_layout.c) as user
 * mode's ptaskd lays its memfd out, mapped by the client with mmap of /dev/ptask and by the module
 * with vmap().  ENTER runs each entry through the ioctl's own path
 * (ptask_dev_entry_call() in dev.c): no call is implemented twice.
 *
 * The region is the client's to scribble on.  The module reads the
 * header never (it keeps the layout in struct ptask_ring), keeps its own
 * copies of the indices it writes, reads the other side's index once
 * per look and checks it, finds slots by masking, and copies each entry
 * out before it looks at it.
 *
 * Locking: ptask_file.rings (an xarray, its own lock) maps ids to rings;
 * a ring lives as long as its fd, so ENTER and mmap (which hold the file)
 * use it without a reference.  ptask_ring.lock serializes ENTERs on one
 * ring (one consumer of the SQ, one producer of the CQ).  Lock order:
 * ptask_ring.lock, then mmap_lock (an executor's entry copies from and to
 * user memory), then ptask_kernel.lock.  mmap takes no ring lock.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>
#include <linux/build_bug.h>
#include "ptask_kmod.h"
#include "core/ring_layout.h"

static_assert(sizeof(struct ptask_sqe) == 64);
static_assert(sizeof(struct ptask_cqe) == 96);
static_assert(sizeof(struct ptask_ring_hdr) <= PTASK_RING_ALIGN);
static_assert(sizeof(struct ptask_ring_queue) == 3 * PTASK_RING_ALIGN);
static_assert(PTASK_RING_MAX_PER_FD * PTASK_RING_MMAP_STRIDE <=
	      PTASK_RING_MMAP_BASE);

/**
 * struct ptask_ring - one ring of an fd
 * @lock: one ENTER at a time
 * @buf: the region's pages (the ring's reference)
 * @kaddr: the module's mapping of them
 * @sq: the SQ's indices, in the region
 * @cq: the CQ's indices, in the region
 * @sqes: the SQ's slots, in the region
 * @cqes: the CQ's slots, in the region
 * @sq_entries: SQ slots (a power of two)
 * @cq_entries: CQ slots (a power of two)
 * @sq_head: the module's SQ head (the shared one is only stored to)
 * @cq_tail: the module's CQ tail (likewise)
 */
struct ptask_ring {
	struct mutex lock;	/* serializes ENTER */
	struct ptask_buf *buf;
	void *kaddr;
	struct ptask_ring_queue *sq;
	struct ptask_ring_queue *cq;
	struct ptask_sqe *sqes;
	struct ptask_cqe *cqes;
	u32 sq_entries;
	u32 cq_entries;
	u32 sq_head;
	u32 cq_tail;
};

static const unsigned int size_bits = _IOC_SIZEMASK << _IOC_SIZESHIFT;

static bool is_cmd(unsigned int cmd, unsigned int want)
{
	return (cmd & ~size_bits) == (want & ~size_bits);
}

/**
 * ptask_ring_ioctl_cmd() - is @cmd RING_SETUP or RING_ENTER?
 * @cmd: an ioctl command; its size bits are ignored, as for every call
 *
 * Return: true if ptask_ring_ioctl() handles it.
 */
bool ptask_ring_ioctl_cmd(unsigned int cmd)
{
	return is_cmd(cmd, PTASK_IOC_RING_SETUP) ||
	       is_cmd(cmd, PTASK_IOC_RING_ENTER);
}

/**
 * ptask_ring_mmap_offset() - is @offset in the rings' range of offsets?
 * @offset: an mmap offset in bytes
 *
 * Return: true if ptask_ring_mmap() maps it.
 */
bool ptask_ring_mmap_offset(u64 offset)
{
	return offset >= PTASK_RING_MMAP_BASE;
}

static void ring_free(struct ptask_ring *r)
{
	vunmap(r->kaddr);
	ptask_os_buf_put(r->buf);
	mutex_destroy(&r->lock);
	kfree(r);
}

/* A ring of @sq_entries SQ slots, laid out and mapped here. */
static int ring_alloc(u32 sq_entries, struct ptask_ring **out)
{
	u32 cq_entries = sq_entries * PTASK_RING_CQ_FACTOR;
	struct ptask_ring_hdr h;
	struct ptask_ring *r;
	u8 *base;
	int err;

	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return -ENOMEM;
	mutex_init(&r->lock);
	/* The core's layout (core/ring_layout.c), as ptaskd's rings. */
	err = ptask_os_buf_alloc(NULL,
				 ptask_ring_layout(sq_entries, cq_entries, &h),
				 0, &r->buf);
	if (err)
		goto err_free;
	r->kaddr = vmap(r->buf->pages, r->buf->npages, VM_MAP, PAGE_KERNEL);
	if (!r->kaddr) {
		err = -ENOMEM;
		goto err_put;
	}
	base = r->kaddr;
	memcpy(base, &h, sizeof(h));	/* the pages are zeroed: empty queues */
	r->sq = (struct ptask_ring_queue *)(base + h.sq_off);
	r->cq = (struct ptask_ring_queue *)(base + h.cq_off);
	r->sqes = (struct ptask_sqe *)(base + h.sqes_off);
	r->cqes = (struct ptask_cqe *)(base + h.cqes_off);
	r->sq_entries = sq_entries;
	r->cq_entries = cq_entries;
	*out = r;
	return 0;

err_put:
	ptask_os_buf_put(r->buf);
err_free:
	mutex_destroy(&r->lock);
	kfree(r);
	return err;
}

/* Copy the struct of a RING_* ioctl in, with the rules of every call. */
static int copy_in(void *karg, size_t ksize, u32 ver0, unsigned long uarg,
		   u32 *usize)
{
	void __user *u = (void __user *)uarg;

	if (get_user(*usize, (u32 __user *)u))
		return -EFAULT;
	if (*usize < ver0)
		return -EINVAL;
	if (*usize > PAGE_SIZE)
		return -E2BIG;
	return copy_struct_from_user(karg, ksize, u, *usize);
}

static int ring_setup(struct file *file, unsigned long uarg)
{
	struct ptask_file *pf = file->private_data;
	struct ptask_ring_setup a;
	struct ptask_ring *r;
	u32 usize, id, sq;
	int err;

	err = copy_in(&a, sizeof(a), PTASK_RING_SETUP_SIZE_VER0, uarg, &usize);
	if (err)
		return err;
	sq = a.sq_entries ? a.sq_entries : PTASK_RING_SQ_DEFAULT;
	if (a.flags || a.reserved || a.cq_entries || a.ring ||
	    sq > PTASK_RING_ENTRIES_MAX / PTASK_RING_CQ_FACTOR ||
	    !ptask_ring_entries_ok(sq))
		return -EINVAL;
	err = ring_alloc(sq, &r);
	if (err)
		return err;
	err = xa_alloc(&pf->rings, &id, r,
		       XA_LIMIT(1, PTASK_RING_MAX_PER_FD), GFP_KERNEL_ACCOUNT);
	if (err) {
		ring_free(r);
		return err == -EBUSY ? -ENOSPC : err;
	}
	a.sq_entries = r->sq_entries;
	a.cq_entries = r->cq_entries;
	a.ring = id;
	a.region_bytes = (u64)r->buf->npages << PAGE_SHIFT;
	a.mmap_offset = PTASK_RING_MMAP_BASE +
			(u64)(id - 1) * PTASK_RING_MMAP_STRIDE;
	/*
	 * The ring lives with the fd whether or not the caller learns its
	 * id (as a datablock whose handle cannot be copied out does).
	 */
	if (copy_to_user((void __user *)uarg, &a, min_t(u32, usize, sizeof(a))))
		return -EFAULT;
	return 0;
}

/* May the CQ take one more completion?  1, 0 (full) or -EPROTO. */
static int cq_room(struct ptask_ring *r)
{
	/* Acquire: the client read the slots it frees before it said so. */
	u32 used = r->cq_tail - smp_load_acquire(&r->cq->head);

	if (used > r->cq_entries)
		return -EPROTO;
	return used < r->cq_entries;
}

static void cq_post(struct ptask_ring *r, const struct ptask_cqe *cqe)
{
	memcpy(&r->cqes[r->cq_tail & (r->cq_entries - 1)], cqe, sizeof(*cqe));
	r->cq_tail++;
	/* Release: the slot is written before the client sees the tail. */
	smp_store_release(&r->cq->tail, r->cq_tail);
}

/*
 * The calls a ring carries (uapi/ptask.h, "Entries"), and in kernel mode
 * the executor's take and complete: their pointer fields are user
 * pointers the ioctl's path copies from and to, as for the ioctl.
 */
static bool ring_call(unsigned int cmd)
{
	return cmd == PTASK_IOC_PUSH || cmd == PTASK_IOC_PULL ||
	       cmd == PTASK_IOC_DATABLOCK_CREATE ||
	       cmd == PTASK_IOC_DATABLOCK_RELEASE ||
	       cmd == PTASK_IOC_EXEC_TAKE || cmd == PTASK_IOC_EXEC_COMPLETE;
}

/* Run @sqe (a private copy); its completion in @cqe.  Returns its res. */
static int run_entry(struct file *file, const struct ptask_sqe *sqe,
		     struct ptask_entry_ctl *ctl, struct ptask_cqe *cqe)
{
	const struct ptask_arg_desc *desc = ptask_core_args_desc(sqe->cmd);
	int err;

	memset(cqe, 0, sizeof(*cqe));
	cqe->user_data = sqe->user_data;
	if (!desc)
		err = -ENOTTY;
	else if (!ring_call(desc->cmd))
		err = -EOPNOTSUPP;
	/* PTASK_SQE_DATA is user mode's: the module reads user pointers */
	else if (sqe->flags & ~(PTASK_SQE_FLAGS_ALL & ~PTASK_SQE_DATA))
		err = -EINVAL;
	else if (sqe->arg.size > sizeof(sqe->arg))	/* not the call's bytes */
		err = -EINVAL;
	else
		err = ptask_dev_entry_call(file, desc->cmd, &sqe->arg,
					   sqe->arg.size, ctl, &cqe->arg);
	cqe->res = err;
	if (err)	/* the ioctl copies nothing out when it fails */
		memset(&cqe->arg, 0, sizeof(cqe->arg));
	return err;
}

/*
 * Consume up to @e->to_submit entries.  Return: the count, or -errno
 * when none was consumed and the reason is an error (see the uapi).
 */
static long ring_run(struct file *file, struct ptask_ring *r,
		     const struct ptask_ring_enter *e)
{
	struct ptask_entry_ctl ctl = { .deadline = e->timeout_ns };
	u32 ready, done = 0, posted = 0;
	struct ptask_sqe sqe;
	struct ptask_cqe cqe;
	long ret = 0;
	int room, err;

	/* Acquire: the client wrote the entries before it moved the tail. */
	ready = smp_load_acquire(&r->sq->tail) - r->sq_head;
	if (ready > r->sq_entries)
		return -EPROTO;
	while (done < min(ready, e->to_submit)) {
		room = cq_room(r);
		if (room <= 0) {
			ret = room;	/* -EPROTO, or 0: full */
			break;
		}
		memcpy(&sqe, &r->sqes[r->sq_head & (r->sq_entries - 1)],
		       sizeof(sqe));
		ctl.may_block = posted < e->min_complete;
		ctl.stopped = false;
		err = run_entry(file, &sqe, &ctl, &cqe);
		if (ctl.stopped) {
			/* Would block and may not: nothing to report. */
			ret = err == -EAGAIN ? 0 : err;
			break;
		}
		r->sq_head++;
		/* Release: the entry was copied out before its slot is free. */
		smp_store_release(&r->sq->head, r->sq_head);
		done++;
		if (err || !(sqe.flags & PTASK_SQE_NO_CQE_ON_SUCCESS)) {
			cq_post(r, &cqe);
			posted++;
		}
		if (fatal_signal_pending(current))
			break;
	}
	return done ? done : ret;
}

static long ring_enter(struct file *file, unsigned long uarg)
{
	struct ptask_file *pf = file->private_data;
	struct ptask_ring_enter e;
	struct ptask_ring *r;
	u32 usize;
	long ret;
	int err;

	err = copy_in(&e, sizeof(e), PTASK_RING_ENTER_SIZE_VER0, uarg, &usize);
	if (err)
		return err;
	if (e.flags || e.reserved)
		return -EINVAL;
	r = xa_load(&pf->rings, e.ring);
	if (!r)
		return -ENOENT;
	if (e.to_submit > r->sq_entries)
		return -EINVAL;
	if (mutex_lock_interruptible(&r->lock))
		return -ERESTARTSYS;
	ret = ring_run(file, r, &e);
	mutex_unlock(&r->lock);
	return ret;
}

/**
 * ptask_ring_ioctl() - PTASK_IOC_RING_SETUP and PTASK_IOC_RING_ENTER
 * @file: the /dev/ptask file
 * @cmd: one of the two (ptask_ring_ioctl_cmd())
 * @uarg: the user's struct
 *
 * Context: process context; no lock held.
 * Return: SETUP: 0 or -errno; ENTER: entries consumed or -errno.
 */
long ptask_ring_ioctl(struct file *file, unsigned int cmd, unsigned long uarg)
{
	if (is_cmd(cmd, PTASK_IOC_RING_SETUP))
		return ring_setup(file, uarg);
	return ring_enter(file, uarg);
}

/**
 * ptask_ring_mmap() - map a ring's region
 * @pf: the file's private data
 * @vma: a shared mapping at an offset ptask_ring_mmap_offset() accepts
 *
 * Context: mmap_lock held for writing; no other lock.
 * Return: 0, -ENOENT (no ring of this fd there), -EINVAL (private, or
 * longer than the region), or vm_insert_pages()'s error.
 */
int ptask_ring_mmap(struct ptask_file *pf, struct vm_area_struct *vma)
{
	u64 rel = ((u64)vma->vm_pgoff << PAGE_SHIFT) - PTASK_RING_MMAP_BASE;
	struct ptask_ring *r;
	int err;

	if (rel % PTASK_RING_MMAP_STRIDE ||
	    rel / PTASK_RING_MMAP_STRIDE >= PTASK_RING_MAX_PER_FD)
		return -ENOENT;
	r = xa_load(&pf->rings, (unsigned long)(rel / PTASK_RING_MMAP_STRIDE) + 1);
	if (!r)
		return -ENOENT;
	ptask_os_buf_get(r->buf);
	err = ptask_buf_mmap(r->buf, vma);
	if (err)
		ptask_os_buf_put(r->buf);
	return err;
}

/**
 * ptask_rings_init() - an fd starts with no ring
 * @pf: the file's private data
 */
void ptask_rings_init(struct ptask_file *pf)
{
	xa_init_flags(&pf->rings, XA_FLAGS_ALLOC1 | XA_FLAGS_ACCOUNT);
}

/**
 * ptask_rings_release() - free every ring of a closing fd
 * @pf: the file's private data
 *
 * Whatever their queues hold goes with them: entries not consumed were
 * never run, and what completed ones gave the client (datablock
 * references) the core frees with the client.  Mappings keep their pages.
 *
 * Context: the file's release; nothing else uses @pf.
 */
void ptask_rings_release(struct ptask_file *pf)
{
	struct ptask_ring *r;
	unsigned long id;

	xa_for_each(&pf->rings, id, r)
		ring_free(r);
	xa_destroy(&pf->rings);
}
