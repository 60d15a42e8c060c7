/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * inodes.h - one lock and one eg_fstate per backing inode in use.
 *
 * Several handles (and truncate by path) may reach the same backing file,
 * through one name or through hard links.  Writes are read-modify-write
 * of whole data units, so they must not interleave: every handle of an
 * inode shares this entry, found by (st_dev, st_ino) of the backing file.
 */
#ifndef ENCFS_GPU_INODES_H
#define ENCFS_GPU_INODES_H

#include <pthread.h>
#include <sys/types.h>

#include "contents.h"

struct eg_inode {
	dev_t dev;
	ino_t ino;
	unsigned int refs;		/* under the table lock */
	pthread_rwlock_t lock;		/* shared: read; exclusive: write, truncate */
	pthread_mutex_t hdr_lock;	/* loading the header under a shared lock */
	struct eg_fstate st;
	struct eg_inode *next;
};

struct eg_inode *eg_inode_get(dev_t dev, ino_t ino);
void eg_inode_put(struct eg_inode *in);
unsigned int eg_inodes_in_use(void);

#endif
