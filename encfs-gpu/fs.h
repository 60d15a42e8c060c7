/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * fs.h - the mounted filesystem: its keys, backend, backing directory and
 * the translation of plaintext paths to backing paths.
 *
 * Every backing access is *at() relative to rootfd, the cipher directory
 * opened at mount, with a relative path built component by component:
 * each plaintext component is encrypted with the IV of the backing
 * directory it sits in (names.h) and, when too long, replaced by its
 * hashed name (longname.h).
 */
#ifndef ENCFS_GPU_FS_H
#define ENCFS_GPU_FS_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "contents.h"
#include "keys.h"
#include "names.h"
#include "xts.h"

#define EG_DIRIV_CACHE	256

struct eg_diriv_slot {
	char *cdir;
	uint8_t iv[EG_DIRIV_LEN];
};

/* a plaintext directory path, its backing path and its IV */
struct eg_pdir_slot {
	char *pdir;
	char *cdir;
	uint8_t iv[EG_DIRIV_LEN];
};

struct eg_fs {
	int rootfd;
	char *cipherdir;		/* absolute, for the xattr calls */
	struct eg_keys keys;
	struct eg_contents contents;
	struct eg_backend *be;
	int verbose;
	int as_root;			/* hand new objects to the caller */
	pthread_mutex_t cache_lock;
	unsigned long cache_gen;	/* eg_diriv_forget() calls; under cache_lock */
	struct eg_diriv_slot cache[EG_DIRIV_CACHE];
	struct eg_pdir_slot pcache[EG_DIRIV_CACHE];
};

/* a sidecar is written under its name plus this, then renamed */
#define EG_SIDECAR_TMP_SUFFIX	".tmp"

/* a resolved path */
struct eg_cpath {
	char path[PATH_MAX];		/* backing path of the entry, "." for the root */
	char dir[PATH_MAX];		/* backing path of its directory */
	char bname[EG_NAME_MAX + 1];	/* its backing name ("" for the root) */
	char cname[EG_CNAME_MAX + 1];	/* its full encrypted name */
	int is_long;			/* bname is hashed, a sidecar holds cname */
	int is_root;
};

int eg_fs_init(struct eg_fs *fs, const char *cipherdir, const struct eg_keys *keys,
	       struct eg_backend *be);
void eg_fs_fini(struct eg_fs *fs);
int eg_diriv_get(struct eg_fs *fs, const char *cdir, uint8_t iv[EG_DIRIV_LEN]);
int eg_diriv_create(int dirfd, const char *cdir);
void eg_diriv_forget(struct eg_fs *fs);
int eg_path_resolve(struct eg_fs *fs, const char *path, struct eg_cpath *cp);
int eg_sidecar_write(struct eg_fs *fs, const struct eg_cpath *cp);
void eg_sidecar_remove(struct eg_fs *fs, const struct eg_cpath *cp);
int eg_open_regular(int dirfd, const char *path, off_t size);
int eg_sidecar_read(int dirfd, const char *hashed, char *cname, size_t cnamesz);

extern const struct fuse_operations eg_fuse_ops;

#endif
