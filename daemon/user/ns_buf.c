// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ns_buf.c - datablock memory in user mode: the core's buffers (struct
 * ptask_buf, core/ptask_os.h) carved from memfd arenas of the owner's
 * uid (arena.h), where a datablock's bytes are for whoever may map it
 * (pd_ns_map), and the notice that a datablock died (pd_ns_set_forget),
 * as kmod/buf.c is the module's datablock pages.
 *
 * Locking: every struct ptask_buf, the arenas and the forget notifier
 * are under the namespace lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/user/arena.h"
#include "daemon/user/ns_user_priv.h"

int ptask_os_buf_alloc(struct ptask_client *core, u64 bytes, u32 flags,
		       struct ptask_buf **out)
{
	struct pd_ns *ns = core->ns->os;
	struct pd_client *c = core->os;
	struct ptask_buf *b;
	uint64_t used = 0;
	int err;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	if (flags & PTASK_BUF_OWN_MEMORY) {
		/* other uids may be handed it: an arena of its own */
		b->offset = 0;
		err = pd_arenas_alloc_own(&ns->arenas, c->alloc_uid, bytes,
					  &b->arena);
	} else {
		err = pd_arenas_alloc(&ns->arenas, c->alloc_uid, bytes,
				      &b->arena, &b->offset, &used);
	}
	if (err) {
		free(b);
		return err;
	}
	b->ns = ns;
	b->bytes = bytes;
	b->refs = 1;
	/*
	 * A client's new datablock is zero-filled: the ABI says so
	 * (ptask_core_datablock_create(3)), the module's pages are, and a program
	 * must behave the same in both modes.  Reused arena memory therefore
	 * is zeroed, even though arenas are per uid and it could only show
	 * the uid bytes of its own (or bytes a client given a datablock of
	 * this uid wrote, who can read the whole arena anyway): the reason
	 * is the contract, not secrecy.  Bytes never handed out since the
	 * memfd was made are zero already and are not touched (a fresh
	 * 64 MiB datablock costs no 64 MiB memset).  The engine's outputs
	 * (the executor's client: alloc_zero false) are written by the device
	 * before a client can read them.
	 */
	if (c->alloc_zero && used)
		memset(b->arena->base + b->offset, 0,
		       used < bytes ? used : bytes);
	ns->core.counts[PTASK_COUNT_BUFFERS]++;
	*out = b;
	return 0;
}

int ptask_os_buf_alloc_output(struct ptask_client *core, u32 owner_uid,
			      u64 bytes, u32 flags, struct ptask_buf **out)
{
	struct pd_client *c = core->os;
	uint32_t uid = c->alloc_uid;
	bool zero = c->alloc_zero;
	int err;

	c->alloc_uid = owner_uid;
	c->alloc_zero = false;
	err = ptask_os_buf_alloc(core, bytes, flags, out);
	c->alloc_uid = uid;
	c->alloc_zero = zero;
	return err;
}

void ptask_os_buf_get(struct ptask_buf *buf)
{
	buf->refs++;
}

void ptask_os_buf_put(struct ptask_buf *buf)
{
	struct pd_ns *ns = buf->ns;

	if (--buf->refs)
		return;
	if (buf->handle && ns->forget)
		ns->forget(ns->forget_arg, buf->handle);
	pd_arenas_free(&ns->arenas, buf->arena, buf->offset, buf->bytes);
	ns->core.counts[PTASK_COUNT_BUFFERS]--;
	free(buf);
}

/*
 * A tunnel's gather and split (core/tunnel.c): both buffers are in the
 * arenas ptaskd maps, so this is one memcpy.
 */
void ptask_os_buf_copy(struct ptask_buf *dst, u64 dst_off,
		       struct ptask_buf *src, u64 src_off, u64 bytes)
{
	if (PTASK_WARN_ON(dst_off > dst->bytes || bytes > dst->bytes - dst_off ||
			  src_off > src->bytes || bytes > src->bytes - src_off))
		return;
	memmove(dst->arena->base + dst->offset + dst_off,
		src->arena->base + src->offset + src_off, bytes);
}

void ptask_os_buf_write(struct ptask_buf *dst, u64 dst_off, const void *src,
			u64 bytes)
{
	if (PTASK_WARN_ON(dst_off > dst->bytes || bytes > dst->bytes - dst_off))
		return;
	memcpy(dst->arena->base + dst->offset + dst_off, src, bytes);
}

void ptask_os_buf_bind(struct ptask_buf *buf, u32 handle)
{
	struct pd_ns *ns = buf->ns;
	u32 gone = buf->handle;

	buf->handle = handle;
	/*
	 * The datablock died: its device copies go now, not when the last
	 * mapping (the engine's own host view among them) lets go of the
	 * memory.  Waiting for that kept a dead frame's buffer per frame
	 * for seconds (the gesture demo's fused clouds: gigabytes).
	 */
	if (!handle && gone && ns->forget)
		ns->forget(ns->forget_arg, gone);
}

int pd_ns_map_locked(struct pd_client *c, uint32_t handle,
		     struct pd_map_info *mi, struct ptask_buf **bufp)
{
	struct ptask_buf *buf;
	u64 bytes;
	int err;

	err = ptask_core_datablock_map(c->core, handle, &bytes, &buf);
	if (err)
		return err;
	/*
	 * A uid's arena holds that uid's other datablocks too: never for a
	 * client of another uid (root, and the executor, see everything).
	 * What other uids are handed has an own arena (arena.h); this is
	 * what is left, such as an in/out datablock made outside a shared
	 * graph and emitted to another uid's pull.
	 */
	if (!buf->arena->own && buf->arena->uid != c->uid && c->uid &&
	    !c->core->executor) {
		ptask_os_buf_put(buf);
		return -EACCES;
	}
	mi->own = buf->arena->own;
	mi->arena = buf->arena->id;
	mi->arena_fd = buf->arena->fd;
	mi->arena_bytes = buf->arena->bytes;
	mi->offset = buf->offset;
	mi->bytes = bytes;
	mi->addr = buf->arena->base + buf->offset;
	if (bufp)
		*bufp = buf;	/* the caller keeps the mapping's reference */
	else
		ptask_os_buf_put(buf);
	return 0;
}

int pd_ns_map(struct pd_client *c, uint32_t handle, struct pd_map_info *mi)
{
	int err;

	pd_ns_lock(c->ns);
	err = pd_ns_map_locked(c, handle, mi, NULL);
	pd_ns_unlock(c->ns);
	return err;
}

void pd_ns_set_forget(struct pd_ns *ns, pd_forget_fn forget, void *arg)
{
	pd_ns_lock(ns);
	ns->forget = forget;
	ns->forget_arg = arg;
	pd_ns_unlock(ns);
}

void pd_ns_set_opened(struct pd_ns *ns, pd_opened_fn opened, void *arg)
{
	pd_ns_lock(ns);
	ns->opened = opened;
	ns->opened_arg = arg;
	pd_ns_unlock(ns);
}
