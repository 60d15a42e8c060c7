// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * hash.c - the intrusive hash table (see hash.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "common/hash.h"

#define PC_HASH_MIN_BITS	4
#define PC_HASH_MAX_BITS	24
#define PC_HASH_LOAD		2	/* nodes a bucket before it grows */

/* 2^64 / phi: Knuth's multiplicative (Fibonacci) hashing. */
static size_t bucket_of(uint64_t key, unsigned int bits)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> (64 - bits));
}

int pc_hash_init(struct pc_hash *h, size_t min_buckets)
{
	unsigned int bits = PC_HASH_MIN_BITS;

	while (bits < PC_HASH_MAX_BITS && ((size_t)1 << bits) < min_buckets)
		bits++;
	h->buckets = calloc((size_t)1 << bits, sizeof(*h->buckets));
	if (!h->buckets)
		return -ENOMEM;
	h->bits = bits;
	h->count = 0;
	h->scan = 0;
	return 0;
}

void pc_hash_fini(struct pc_hash *h)
{
	free(h->buckets);
	h->buckets = NULL;
	h->bits = 0;
	h->count = 0;
	h->scan = 0;
}

/* Double the buckets; on failure the table stays as it is. */
static void grow(struct pc_hash *h)
{
	unsigned int bits = h->bits + 1;
	struct pc_hash_node **nb, *n;
	size_t i, b;

	nb = calloc((size_t)1 << bits, sizeof(*nb));
	if (!nb)
		return;
	for (i = 0; i < (size_t)1 << h->bits; i++) {
		while ((n = h->buckets[i])) {
			h->buckets[i] = n->next;
			b = bucket_of(n->key, bits);
			n->next = nb[b];
			nb[b] = n;
		}
	}
	free(h->buckets);
	h->buckets = nb;
	h->bits = bits;
	h->scan = 0;
}

void pc_hash_add(struct pc_hash *h, struct pc_hash_node *node, uint64_t key)
{
	size_t b;

	if (h->bits < PC_HASH_MAX_BITS &&
	    h->count >= PC_HASH_LOAD * ((size_t)1 << h->bits))
		grow(h);
	b = bucket_of(key, h->bits);
	node->key = key;
	node->next = h->buckets[b];
	h->buckets[b] = node;
	h->count++;
	if (b < h->scan)
		h->scan = b;
}

struct pc_hash_node *pc_hash_find(const struct pc_hash *h, uint64_t key)
{
	struct pc_hash_node *n;

	if (!h->count)
		return NULL;
	for (n = h->buckets[bucket_of(key, h->bits)]; n; n = n->next)
		if (n->key == key)
			return n;
	return NULL;
}

int pc_hash_del(struct pc_hash *h, struct pc_hash_node *node)
{
	struct pc_hash_node **pp;

	if (!h->count)
		return -ENOENT;
	pp = &h->buckets[bucket_of(node->key, h->bits)];
	while (*pp && *pp != node)
		pp = &(*pp)->next;
	if (!*pp)
		return -ENOENT;
	*pp = node->next;
	node->next = NULL;
	h->count--;
	return 0;
}

struct pc_hash_node *pc_hash_pop(struct pc_hash *h)
{
	struct pc_hash_node *n;

	if (!h->count)
		return NULL;
	while (!h->buckets[h->scan])
		h->scan++;
	n = h->buckets[h->scan];
	h->buckets[h->scan] = n->next;
	n->next = NULL;
	h->count--;
	return n;
}
