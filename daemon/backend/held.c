// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * held.c - held launches and the shapes of flushed sequences (held.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "daemon/backend/held.h"

int pd_held_add(struct pd_held_lane *h, void *kernel,
		const struct pd_launch *l)
{
	struct pd_held_launch *e;
	size_t len = 0, off = 0;
	uint32_t i;

	if (l->nparams > PD_MAX_PARAMS)
		return -EINVAL;
	if (h->n >= PD_HELD_MAX)
		return -ENOSPC;
	if (h->n == h->cap) {
		uint32_t cap = h->cap ? 2 * h->cap : 16;
		struct pd_held_launch *v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + h->cap, 0, (cap - h->cap) * sizeof(*v));
		h->v = v;
		h->cap = cap;
	}
	e = &h->v[h->n];
	for (i = 0; i < l->nparams; i++)
		len += l->param_bytes[i];
	if (len > e->vals_cap) {
		unsigned char *vals = realloc(e->vals, len);

		if (!vals)
			return -ENOMEM;
		e->vals = vals;
		e->vals_cap = len;
	}
	e->kernel = kernel;
	/*
	 * The parts in use: the whole struct is PD_MAX_PARAMS pointers and
	 * sizes (800 bytes), 15% of a worker's time with a 100-deep segment.
	 */
	memcpy(e->l.grid, l->grid, sizeof(l->grid));
	memcpy(e->l.block, l->block, sizeof(l->block));
	e->l.shared_bytes = l->shared_bytes;
	e->l.nparams = l->nparams;
	e->l.untimed = l->untimed;
	e->l.hold = l->hold;
	memcpy(e->l.param_bytes, l->param_bytes,
	       l->nparams * sizeof(l->param_bytes[0]));
	for (i = 0; i < l->nparams; i++) {
		memcpy(e->vals + off, l->params[i], l->param_bytes[i]);
		e->l.params[i] = e->vals + off;
		off += l->param_bytes[i];
	}
	e->vals_len = len;
	h->n++;
	return 0;
}

void pd_held_clear(struct pd_held_lane *h)
{
	h->n = 0;
	h->first_deferred = 0;
	h->last_deferred = 0;
}

void pd_held_free(struct pd_held_lane *h)
{
	uint32_t i;

	for (i = 0; i < h->cap; i++)
		free(h->v[i].vals);
	free(h->v);
	memset(h, 0, sizeof(*h));
}

bool pd_held_uses(const struct pd_held_lane *h, const void *kernel)
{
	uint32_t i;

	for (i = 0; i < h->n; i++)
		if (h->v[i].kernel == kernel)
			return true;
	return false;
}

/* What a shape compares of one launch, hashed (FNV-1a, common/hash.h). */
/* Mix one 64-bit word into @hash (FNV-1a's step, a word at a time). */
static inline uint64_t mix(uint64_t hash, uint64_t word)
{
	return (hash ^ word) * 0x100000001b3ULL;
}

/*
 * A word at a time: byte by byte (FNV-1a), hashing a 100-deep segment's
 * launches at every flush took 12% of a device worker's time on an H200.
 * A collision only costs launch_same's comparison.
 */
static uint64_t launch_hash(uint64_t hash, const void *kernel,
			    const struct pd_launch *l)
{
	uint32_t i;

	hash = mix(hash, (uintptr_t)kernel);
	hash = mix(hash, (uint64_t)l->grid[0] << 32 | l->grid[1]);
	hash = mix(hash, (uint64_t)l->grid[2] << 32 | l->block[0]);
	hash = mix(hash, (uint64_t)l->block[1] << 32 | l->block[2]);
	hash = mix(hash, (uint64_t)l->shared_bytes << 32 | l->nparams);
	for (i = 0; i < l->nparams; i++)
		hash = mix(hash, l->param_bytes[i]);
	return hash ^ (hash >> 29);
}

static bool launch_same(const void *ka, const struct pd_launch *a,
			const void *kb, const struct pd_launch *b)
{
	return ka == kb && !memcmp(a->grid, b->grid, sizeof(a->grid)) &&
	       !memcmp(a->block, b->block, sizeof(a->block)) &&
	       a->shared_bytes == b->shared_bytes &&
	       a->nparams == b->nparams &&
	       !memcmp(a->param_bytes, b->param_bytes,
		       a->nparams * sizeof(a->param_bytes[0]));
}

static void shape_forget(struct pd_shapes *c, struct pd_shape *s)
{
	if (s->unit && c->free_unit)
		c->free_unit(c->ctx, s);
	free(s->kernels);
	free(s->geo);
	memset(s, 0, sizeof(*s));
}

struct pd_shape *pd_shapes_see(struct pd_shapes *c,
			       const struct pd_held_lane *h)
{
	uint64_t hash = PC_FNV1A_INIT;
	struct pd_shape *s, *victim = NULL;
	uint32_t i, j;

	for (i = 0; i < h->n; i++)
		hash = launch_hash(hash, h->v[i].kernel, &h->v[i].l);
	c->clock++;
	for (i = 0; i < PD_SHAPES; i++) {
		s = &c->s[i];
		if (s->n == h->n && s->hash == hash) {
			for (j = 0; j < h->n; j++)
				if (!launch_same(s->kernels[j], &s->geo[j],
						 h->v[j].kernel, &h->v[j].l))
					break;
			if (j == h->n) {
				s->seen++;
				s->used = c->clock;
				return s;
			}
		}
		if (!victim || !s->n || (victim->n && s->used < victim->used))
			victim = s;
	}
	shape_forget(c, victim);
	victim->kernels = calloc(h->n, sizeof(*victim->kernels));
	victim->geo = calloc(h->n, sizeof(*victim->geo));
	if (!victim->kernels || !victim->geo) {
		shape_forget(c, victim);
		return NULL;
	}
	for (i = 0; i < h->n; i++) {
		victim->kernels[i] = h->v[i].kernel;
		victim->geo[i] = h->v[i].l;
		memset(victim->geo[i].params, 0, sizeof(victim->geo[i].params));
	}
	victim->n = h->n;
	victim->hash = hash;
	victim->seen = 1;
	victim->used = c->clock;
	return victim;
}

void pd_shapes_drop_kernel(struct pd_shapes *c, const void *kernel)
{
	uint32_t i, j;

	for (i = 0; i < PD_SHAPES; i++)
		for (j = 0; j < c->s[i].n; j++)
			if (c->s[i].kernels[j] == kernel) {
				shape_forget(c, &c->s[i]);
				break;
			}
}

void pd_shapes_free(struct pd_shapes *c)
{
	uint32_t i;

	for (i = 0; i < PD_SHAPES; i++)
		if (c->s[i].n)
			shape_forget(c, &c->s[i]);
}
