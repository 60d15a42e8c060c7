// SPDX-License-Identifier: GPL-2.0
/*
 * buf.c - datablock memory: an array of ordinary pages, reference-counted
 * so a mapping outlives the datablock, mapped with vm_insert_pages() so a
 * mapping can be pinned by get_user_pages() (what cuMemHostRegister needs
 * in the daemon).  No copy: producer, consumers and executor map the same
 * pages.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/highmem.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include "ptask_kmod.h"
#include "compat.h"

/**
 * ptask_os_buf_alloc() - zeroed pages for a datablock
 * @c: the client it is for (unused: one buffer pool for the module)
 * @bytes: the datablock's size, at most PTASK_DATABLOCK_MAX_BYTES
 * @flags: PTASK_BUF_OWN_MEMORY or 0, the same here: every buffer has
 *	pages of its own, mapped per datablock, and freed only once the last
 *	mapping goes
 * @out: set to the buffer, with one reference
 *
 * Context: any sleepable context; ptask_kernel.lock may be held.
 * Return: 0 or -ENOMEM.
 */
int ptask_os_buf_alloc(struct ptask_client *c, u64 bytes, u32 flags,
		       struct ptask_buf **out)
{
	unsigned long npages = DIV_ROUND_UP(bytes, PAGE_SIZE), i;
	struct ptask_buf *buf;

	buf = kvzalloc(struct_size(buf, pages, npages), GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < npages; i++) {
		buf->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!buf->pages[i])
			goto err_free_pages;
	}
	kref_init(&buf->ref);
	buf->bytes = bytes;
	buf->npages = npages;
	atomic64_inc(&ptask_kernel.buffers);
	*out = buf;
	return 0;

err_free_pages:
	while (i--)
		__free_page(buf->pages[i]);
	kvfree(buf);
	return -ENOMEM;
}

/**
 * ptask_os_buf_alloc_output() - pages for an output the core makes
 * @c: the executor it is for
 * @owner_uid: the owner of the ptask it is an output of (unused: one
 *	buffer pool for the module)
 * @bytes: the datablock's size, at most PTASK_DATABLOCK_MAX_BYTES
 * @flags: as ptask_os_buf_alloc()'s
 * @out: set to the buffer, with one reference
 *
 * Context: any sleepable context; ptask_kernel.lock may be held.
 * Return: 0 or -ENOMEM.
 */
int ptask_os_buf_alloc_output(struct ptask_client *c, u32 owner_uid,
			      u64 bytes, u32 flags, struct ptask_buf **out)
{
	return ptask_os_buf_alloc(c, bytes, flags, out);
}

/**
 * ptask_os_buf_copy() - copy bytes between two buffers (a tunnel's
 *	gather and split, core/tunnel.c)
 * @dst: the buffer written
 * @dst_off: first byte written
 * @src: the buffer read
 * @src_off: first byte read
 * @bytes: how many; both ranges lie inside their buffers
 *
 * Context: the namespace mutex held; does not sleep.
 */
void ptask_os_buf_copy(struct ptask_buf *dst, u64 dst_off,
		       struct ptask_buf *src, u64 src_off, u64 bytes)
{
	if (WARN_ON(dst_off > dst->bytes || bytes > dst->bytes - dst_off ||
		    src_off > src->bytes || bytes > src->bytes - src_off))
		return;
	while (bytes) {
		size_t so = offset_in_page(src_off), d_o = offset_in_page(dst_off);
		size_t n = min3((u64)(PAGE_SIZE - so), (u64)(PAGE_SIZE - d_o),
				bytes);
		void *s = kmap_local_page(src->pages[src_off >> PAGE_SHIFT]);
		void *d = kmap_local_page(dst->pages[dst_off >> PAGE_SHIFT]);

		memcpy(d + d_o, s + so, n);
		kunmap_local(d);
		kunmap_local(s);
		src_off += n;
		dst_off += n;
		bytes -= n;
	}
}

/**
 * ptask_os_buf_write() - copy bytes from the core into a buffer
 * @dst: the buffer written
 * @dst_off: first byte written
 * @src: the bytes
 * @bytes: how many; the range lies inside @dst
 *
 * Context: the namespace mutex held; does not sleep.
 */
void ptask_os_buf_write(struct ptask_buf *dst, u64 dst_off, const void *src,
			u64 bytes)
{
	if (WARN_ON(dst_off > dst->bytes || bytes > dst->bytes - dst_off))
		return;
	while (bytes) {
		size_t d_o = offset_in_page(dst_off);
		size_t n = min_t(u64, PAGE_SIZE - d_o, bytes);
		void *d = kmap_local_page(dst->pages[dst_off >> PAGE_SHIFT]);

		memcpy(d + d_o, src, n);
		kunmap_local(d);
		src += n;
		dst_off += n;
		bytes -= n;
	}
}

/**
 * ptask_os_buf_get() - one more reference (a new mapping)
 * @buf: the buffer
 */
void ptask_os_buf_get(struct ptask_buf *buf)
{
	kref_get(&buf->ref);
}

static void buf_release(struct kref *ref)
{
	struct ptask_buf *buf = container_of(ref, struct ptask_buf, ref);
	unsigned long i;

	for (i = 0; i < buf->npages; i++)
		__free_page(buf->pages[i]);
	kvfree(buf);
	atomic64_dec(&ptask_kernel.buffers);
}

/**
 * ptask_os_buf_put() - drop a reference; the pages go with the last
 * @buf: the buffer
 *
 * Context: any sleepable context, with or without ptask_kernel.lock.
 */
void ptask_os_buf_put(struct ptask_buf *buf)
{
	kref_put(&buf->ref, buf_release);
}

/**
 * ptask_os_buf_bind() - the buffer backs a datablock now
 * @buf: the buffer
 * @handle: the datablock's handle
 *
 * Nothing to note in the kernel: mappings find buffers by handle.
 */
void ptask_os_buf_bind(struct ptask_buf *buf, u32 handle)
{
}

/* A vma split or copied at fork: the new vma holds its own reference. */
static void buf_vm_open(struct vm_area_struct *vma)
{
	ptask_os_buf_get(vma->vm_private_data);
}

static void buf_vm_close(struct vm_area_struct *vma)
{
	ptask_os_buf_put(vma->vm_private_data);
}

/*
 * A page of the mapping asked for again: after MADV_DONTNEED (or
 * anything else that zaps the PTEs vm_insert_pages() made) the same
 * datablock page comes back, its bytes intact, instead of SIGBUS.
 */
static vm_fault_t buf_vm_fault(struct vm_fault *vmf)
{
	struct ptask_buf *buf = vmf->vma->vm_private_data;
	unsigned long i = vmf->pgoff - vmf->vma->vm_pgoff;

	if (i >= buf->npages)
		return VM_FAULT_SIGBUS;
	vmf->page = buf->pages[i];
	get_page(vmf->page);
	return 0;
}

static const struct vm_operations_struct buf_vm_ops = {
	.open = buf_vm_open,
	.close = buf_vm_close,
	.fault = buf_vm_fault,
};

/**
 * ptask_buf_mmap() - map @buf into @vma
 * @buf: the buffer; on success the vma owns the caller's reference
 * @vma: a shared mapping at most the buffer's size (in pages) long
 *
 * Datablocks hold data, never code: an executable mapping is refused,
 * and mprotect() may not make one later (VM_MAYEXEC cleared).
 *
 * Context: mmap_lock held for writing; ptask_kernel.lock not held.
 * Return: 0, -EINVAL (private or too long), -EPERM (PROT_EXEC), or
 * vm_insert_pages()'s error.
 */
int ptask_buf_mmap(struct ptask_buf *buf, struct vm_area_struct *vma)
{
	unsigned long npages = vma_pages(vma);
	int err;

	if (!(vma->vm_flags & VM_SHARED) || npages > buf->npages)
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	ptask_vm_flags_clear(vma, VM_MAYEXEC);
	ptask_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &buf_vm_ops;
	vma->vm_private_data = buf;
	err = vm_insert_pages(vma, vma->vm_start, buf->pages, &npages);
	if (err) {
		vma->vm_ops = NULL;
		vma->vm_private_data = NULL;
	}
	return err;
}
