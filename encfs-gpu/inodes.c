// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * inodes.c - the table of backing inodes in use (see inodes.h): a small
 * hash of reference-counted entries under one mutex, which is only held
 * to find, add or drop an entry, never across I/O.
 */
#include <stdlib.h>

#include <openssl/crypto.h>

#include "inodes.h"

#define BUCKETS 256

static struct eg_inode *table[BUCKETS];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int in_use;

static unsigned int bucket(dev_t dev, ino_t ino)
{
	return (unsigned int)((ino * 0x9E3779B97F4A7C15ull) ^ dev) % BUCKETS;
}

/**
 * eg_inode_get() - the entry for a backing inode, created on first use
 * @dev: st_dev of the backing file
 * @ino: st_ino of the backing file
 *
 * Return: a referenced entry, or NULL when out of memory.
 */
struct eg_inode *eg_inode_get(dev_t dev, ino_t ino)
{
	unsigned int b = bucket(dev, ino);
	struct eg_inode *in;

	pthread_mutex_lock(&table_lock);
	for (in = table[b]; in; in = in->next)
		if (in->dev == dev && in->ino == ino)
			break;
	if (!in) {
		in = calloc(1, sizeof(*in));
		if (!in)
			goto out;
		in->dev = dev;
		in->ino = ino;
		pthread_rwlock_init(&in->lock, NULL);
		pthread_mutex_init(&in->hdr_lock, NULL);
		in->next = table[b];
		table[b] = in;
		in_use++;
	}
	in->refs++;
out:
	pthread_mutex_unlock(&table_lock);
	return in;
}

/* Drop a reference; the last one frees the entry (and wipes its state). */
void eg_inode_put(struct eg_inode *in)
{
	unsigned int b = bucket(in->dev, in->ino);
	struct eg_inode **pp;

	pthread_mutex_lock(&table_lock);
	if (--in->refs) {
		pthread_mutex_unlock(&table_lock);
		return;
	}
	for (pp = &table[b]; *pp != in; pp = &(*pp)->next)
		;
	*pp = in->next;
	in_use--;
	pthread_mutex_unlock(&table_lock);
	pthread_rwlock_destroy(&in->lock);
	pthread_mutex_destroy(&in->hdr_lock);
	OPENSSL_cleanse(&in->st, sizeof(in->st));
	free(in);
}

unsigned int eg_inodes_in_use(void)
{
	unsigned int n;

	pthread_mutex_lock(&table_lock);
	n = in_use;
	pthread_mutex_unlock(&table_lock);
	return n;
}
