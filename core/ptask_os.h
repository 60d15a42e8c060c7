/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ptask_os.h - the small OS shim under the portable core.
 *
 * The core (the .c files in core/) includes this header and uapi/ptask.h and nothing
 * else.  Each shell supplies the functions declared at the bottom:
 * kmod/os_kernel.c for ptask.ko, the daemon's for ptaskd in user mode,
 * tests/unit/os_user.c for the unit tests and fuzz targets.
 *
 * The core never blocks, never sleeps and never touches user memory: the
 * shells copy arguments in and out and wait when the core says -EAGAIN.
 */
#ifndef PTASK_OS_H
#define PTASK_OS_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/stddef.h>
#include <linux/compiler.h>
#include <linux/bug.h>
#include <linux/bits.h>
#include <linux/math64.h>

#define PTASK_WARN_ON(cond)	WARN_ON(cond)
#else
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <string.h>
#include <errno.h>

#include <linux/types.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;

#define BIT(n)		(1UL << (n))
#define BIT_ULL(n)	(1ULL << (n))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define div64_u64(a, b)	((u64)(a) / (u64)(b))

#ifndef EBADSLT
#define EBADSLT 57
#endif

/* User space builds: report and carry on, as the kernel's WARN_ON does. */
#define PTASK_WARN_ON(cond)	ptask_os_warn(!!(cond), __FILE__, __LINE__, #cond)
int ptask_os_warn(int cond, const char *file, int line, const char *what);
#endif

#include "uapi/ptask.h"

struct ptask_ns;
struct ptask_client;
struct ptask_buf;

/*
 * Memory for core objects; zeroed.  May sleep, but never needs the caller
 * to drop the namespace lock (GFP_KERNEL under a mutex is fine).
 */
void *ptask_os_zalloc(size_t bytes);
void ptask_os_free(void *p);

/* CLOCK_MONOTONIC in ns. */
u64 ptask_os_now_ns(void);

/*
 * A reference count of @what reached PTASK_REFS_SATURATED: the object is
 * kept for good (a leak, never a use after free), as refcount_t does.
 * Said once: the kernel's WARN_ONCE, the daemon's log; the unit tests
 * count it.
 */
void ptask_os_saturated(const char *what);

/*
 * Datablock memory.  A buffer is reference-counted by the shell: the core
 * holds one reference per datablock; a shell adds its own for every
 * mapping, so memory outlives the datablock while it is mapped.  @c is
 * the client the datablock is made for (the user-mode shell draws its
 * memory from that client's uid's arena).  @flags: 0 or
 * PTASK_BUF_OWN_MEMORY.
 */
int ptask_os_buf_alloc(struct ptask_client *c, u64 bytes, u32 flags,
		       struct ptask_buf **out);
/*
 * The same for an output the core makes for executor @c from an
 * invocation of @owner_uid's ptask (PTASK_TAKE_AHEAD): the user-mode
 * shell draws it from @owner_uid's arena and does not zero it (the
 * device writes it before anyone else can read it).
 */
int ptask_os_buf_alloc_output(struct ptask_client *c, u32 owner_uid,
			      u64 bytes, u32 flags, struct ptask_buf **out);
/*
 * The datablock may be handed to clients of other uids (it belongs to a
 * graph whose mode lets them in): memory mapped with no other
 * datablock's bytes, never reused while anyone maps it.  The module's
 * pages are that for every datablock (a mapping is per datablock); the
 * user-mode shell gives it a memfd of its own instead of a place in its
 * uid's arena (daemon/user/arena.h, "Own arenas").
 */
#define PTASK_BUF_OWN_MEMORY	BIT(0)
void ptask_os_buf_get(struct ptask_buf *buf);
void ptask_os_buf_put(struct ptask_buf *buf);
/*
 * The buffer now backs datablock @handle (a shell may note it); @handle 0:
 * that datablock is gone, although mappings may keep the memory a while
 * (a shell drops what it keyed on the handle, such as device copies).
 */
void ptask_os_buf_bind(struct ptask_buf *buf, u32 handle);

/* A client's wake_seq changed: wake whoever sleeps or polls on it. */
void ptask_os_client_wake(struct ptask_client *client);

/* Broadcast an enum ptask_event (generic-netlink multicast in the kernel). */
void ptask_os_event(struct ptask_ns *ns, u32 event, u32 obj_type, u32 handle);

/*
 * PTSched needs a call to ptask_core_sched_tick() at CLOCK_MONOTONIC @when_ns
 * (a process held by its budget may become eligible then); 0: no timer is
 * needed any more.  Called with the namespace lock held; the shell calls
 * ptask_core_sched_tick() later, from a context that may take the lock.
 */
void ptask_os_sched_timer(struct ptask_ns *ns, u64 when_ns);

/*
 * Record-stream tunnels (core/tunnel.c) need a call to
 * ptask_core_tunnel_tick() at CLOCK_MONOTONIC @when_ns (a batch's timeout);
 * 0: none needed.  As ptask_os_sched_timer: called with the namespace lock
 * held, the tick made later from a context that may take it.
 */
void ptask_os_tunnel_timer(struct ptask_ns *ns, u64 when_ns);

/*
 * Copy @bytes from @src at @src_off to @dst at @dst_off (a tunnel gathers
 * pushes into a batch and splits its output); both ranges are inside the
 * buffers.  Called with the namespace lock held; must not fail.
 */
void ptask_os_buf_copy(struct ptask_buf *dst, u64 dst_off,
		       struct ptask_buf *src, u64 src_off, u64 bytes);
/* Likewise from core memory (a batch's struct ptask_tunnel_head). */
void ptask_os_buf_write(struct ptask_buf *dst, u64 dst_off, const void *src,
			u64 bytes);

/* Asserts the namespace lock is held (lockdep in the kernel). */
void ptask_os_assert_locked(struct ptask_ns *ns);

#endif /* PTASK_OS_H */
