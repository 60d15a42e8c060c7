/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat.h - the kernel APIs ptask.ko uses that changed after 6.1.
 *
 * ptask.ko is written for 6.1 (Debian 12's kernel, the one the tests boot)
 * and builds from 6.1 up to the current stable release.  Each wrapper
 * below names the version that changed the API and the upstream commit's
 * subject; the rest of the module calls the wrapper, never the version
 * check.  A wrapper carries a ptask_ prefix (or, for a macro, is defined
 * only when the kernel lacks it) so a distribution kernel that backports
 * the new API to an older version still builds.
 *
 * How it was checked (Documentation/testing.md, "Kernel versions", has
 * the whole list of the APIs the module uses):
 *  - 6.1.192 (Debian 12's 6.1.0-56-amd64): built, and its kselftests run
 *    in the QEMU guest;
 *  - 6.12.95 (bookworm-backports): built (`make check-kernels`);
 *  - 7.2.13 (Debian sid): every object compiled against its headers and
 *    its exports checked (`make check-kernels`; its own objtool needs a
 *    newer glibc than Debian 12's, so no link);
 *  - the commits named below: read in upstream source text, as merged or
 *    as posted, with the headers after them.
 *
 * Kernel APIs that changed after 6.1 but that ptask.ko does not use, so
 * nothing here: class_create() (6.4: it lost its module argument; the
 * module is a misc device), from_timer() -> timer_container_of() (6.16)
 * and del_timer() -> timer_delete() (6.2/6.15; only an hrtimer here),
 * strlcpy() (removed in 6.8; strscpy() throughout), MODULE_IMPORT_NS()
 * (a string literal from 6.13; no namespaced symbol imported),
 * get_user_pages() (its vmas argument went in 6.5; no page is pinned by
 * the module), no_llseek (removed in 6.12; nonseekable_open() and no
 * .llseek), genl_info_dump() (2023, with the split ops; the dumps set no
 * extack message), genl pre_doit/post_doit taking struct
 * genl_split_ops (6.2; the family has none).  The genetlink family keeps
 * resv_start_op at 0, as new families must (6.1: "genetlink: start to
 * validate reserved header bytes"), and uses genl_small_ops, which every
 * version since 5.10 has.
 *
 * Locking: none of its own; each wrapper has its kernel function's rules.
 */
#ifndef PTASK_COMPAT_H
#define PTASK_COMPAT_H

#include <linux/version.h>
#include <linux/file.h>
#include <linux/hrtimer.h>
#include <linux/mm.h>

/*
 * struct fd: 6.12 reached it through fd_file() only ("introduce fd_file(),
 * convert all accesses to fd.file", then "struct fd: representation
 * change": a single tagged word, no .file member).  fd_file() is a macro
 * wherever it exists, so its absence is the test, not the version: a
 * kernel with the accessor backported needs nothing from here.
 */
#ifndef fd_file
#define fd_file(f)	((f).file)
#endif

/**
 * ptask_vm_flags_set() - set flags on a vma being mapped
 * @vma: the vma, from f_op->mmap
 * @flags: VM_* flags to add
 *
 * 6.3, "mm: introduce vma->vm_flags wrapper functions": vma->vm_flags is
 * const and vm_flags_set() the only writer (it asserts mmap_lock, and from
 * the per-vma locks of 6.4 on also write-locks the vma).  Before, the
 * field was written directly; the 6.1 branch keeps the lockdep half of
 * the assertion.  Not mmap_assert_write_locked(): with CONFIG_DEBUG_VM
 * its VM_BUG_ON_MM() calls dump_mm(), which 6.1 does not export, so the
 * module would not load on the debug kernel of make check-vm.
 *
 * Context: mmap_lock held for writing (f_op->mmap).
 */
static inline void ptask_vm_flags_set(struct vm_area_struct *vma,
				      vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, flags);
#else
	lockdep_assert_held_write(&vma->vm_mm->mmap_lock);
	vma->vm_flags |= flags;
#endif
}

/**
 * ptask_vm_flags_clear() - clear flags on a vma being mapped
 * @vma: the vma, from f_op->mmap
 * @flags: VM_* flags to take away
 *
 * As ptask_vm_flags_set(), the other way.
 *
 * Context: mmap_lock held for writing (f_op->mmap).
 */
static inline void ptask_vm_flags_clear(struct vm_area_struct *vma,
					vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_clear(vma, flags);
#else
	lockdep_assert_held_write(&vma->vm_mm->mmap_lock);
	vma->vm_flags &= ~flags;
#endif
}

/**
 * ptask_hrtimer_setup() - initialise an hrtimer and its callback
 * @timer: the timer
 * @function: its callback
 * @clock_id: the clock (CLOCK_MONOTONIC here)
 * @mode: HRTIMER_MODE_*
 *
 * 6.13, "hrtimers: Introduce hrtimer_setup() to replace hrtimer_init()";
 * the 6.15 merge window then made the callback private ("hrtimers: Make
 * callback function pointer private": writing ->function no longer
 * builds) and removed hrtimer_init() ("hrtimers: Delete hrtimer_init()").
 * Before 6.13 there is only hrtimer_init() and the callback is set by
 * hand.
 */
static inline void
ptask_hrtimer_setup(struct hrtimer *timer,
		    enum hrtimer_restart (*function)(struct hrtimer *),
		    clockid_t clock_id, enum hrtimer_mode mode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
	hrtimer_setup(timer, function, clock_id, mode);
#else
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
#endif
}

#endif /* PTASK_COMPAT_H */
