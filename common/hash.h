/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * hash.h - the one user-space hash table of ptask: intrusive, chained,
 * keyed by an integer (a handle, a device pointer).
 *
 * DOC: Overview
 *
 * The caller embeds a struct pc_hash_node in its own struct and gets the
 * struct back with pc_hash_entry() (container_of).  Nodes are the
 * caller's memory: the table allocates only its bucket array, so adding
 * never fails (a table that cannot grow keeps longer chains) and removing
 * frees nothing.  Keys are 64-bit so that device pointers fit as well as
 * u32 handles; the table does not refuse a key that is already in it, so
 * a caller that wants one node per key looks first.
 *
 * Buckets: a power of two, picked from the key by Fibonacci hashing
 * (the key times 2^64 / phi, top bits), which spreads sequential handles
 * and aligned pointers alike.  The table doubles when it holds more than
 * two nodes a bucket.
 *
 * A table that is zeroed (never initialised, or finished) reads as empty:
 * pc_hash_find(), pc_hash_del() and pc_hash_pop() on it find nothing;
 * only pc_hash_add() needs pc_hash_init() first.
 *
 * Locking: none.  The table is plain data; callers that share one
 * between threads hold their own lock around every call (ptaskd's engine
 * lock, the kernel source's mapping lock, a CUDA space's owning thread).
 *
 * Users: ptaskd's engine (datablock records, ptask infos), its kernel-mode
 * source (mappings) and its CUDA backend (a space's allocations).
 */
#ifndef PTASK_COMMON_HASH_H
#define PTASK_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

/**
 * struct pc_hash_node - a table's hook in the caller's struct
 * @next: next node in the same bucket
 * @key: the key it was added with (read-only to the caller)
 */
struct pc_hash_node {
	struct pc_hash_node *next;
	uint64_t key;
};

/**
 * struct pc_hash - an intrusive hash table
 * @buckets: 1 << @bits chains
 * @bits: log2 of the bucket count
 * @count: nodes in the table
 * @scan: every bucket below it is empty (where pc_hash_pop() starts)
 */
struct pc_hash {
	struct pc_hash_node **buckets;
	unsigned int bits;
	size_t count;
	size_t scan;
};

/* The struct of type @type holding @node as its member @member. */
#define pc_hash_entry(node, type, member)				\
	((type *)((char *)(node) - offsetof(type, member)))

/* FNV-1a's offset basis: the first @hash of pc_fnv1a */
#define PC_FNV1A_INIT	0xcbf29ce484222325ULL

/* FNV-1a of @len bytes at @p, continuing @hash (PC_FNV1A_INIT to start). */
static inline uint64_t pc_fnv1a(const void *p, size_t len, uint64_t hash)
{
	const unsigned char *b = p;

	while (len--) {
		hash ^= *b++;
		hash *= 0x100000001b3ULL;
	}
	return hash;
}

/**
 * pc_hash_init() - an empty table
 * @h: the table
 * @min_buckets: buckets to start with (rounded up to a power of two,
 *	at least 16, at most 2^24)
 *
 * Return: 0 or -ENOMEM.
 */
int pc_hash_init(struct pc_hash *h, size_t min_buckets);

/**
 * pc_hash_fini() - free the buckets
 * @h: the table, initialised or zeroed
 *
 * Nodes still in the table are left alone (drain it with pc_hash_pop()
 * first when they must be freed).
 */
void pc_hash_fini(struct pc_hash *h);

/**
 * pc_hash_add() - add @node under @key
 * @h: the table
 * @node: a node in no table
 * @key: its key
 *
 * Never fails: when the table cannot grow, chains get longer.
 */
void pc_hash_add(struct pc_hash *h, struct pc_hash_node *node, uint64_t key);

/**
 * pc_hash_find() - the most recently added node of @key
 * @h: the table
 * @key: the key
 *
 * Return: the node, or NULL.
 */
struct pc_hash_node *pc_hash_find(const struct pc_hash *h, uint64_t key);

/**
 * pc_hash_del() - take @node out of @h
 * @h: the table
 * @node: a node in @h
 *
 * Return: 0, or -ENOENT when @node is not in @h (nothing changes).
 */
int pc_hash_del(struct pc_hash *h, struct pc_hash_node *node);

/**
 * pc_hash_pop() - take any one node out of @h
 * @h: the table
 *
 * For draining a table before pc_hash_fini().
 *
 * Return: the node, or NULL when @h is empty.
 */
struct pc_hash_node *pc_hash_pop(struct pc_hash *h);

/* Nodes in @h. */
static inline size_t pc_hash_count(const struct pc_hash *h)
{
	return h->count;
}

#endif /* PTASK_COMMON_HASH_H */
