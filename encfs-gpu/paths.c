// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * paths.c - plaintext path to backing path, directory IVs and their
 * cache, long-name sidecars (see fs.h).
 *
 * A directory's IV never changes while the directory exists, but the
 * backing path it is cached under does when a directory is renamed or
 * removed, so every rename and rmdir empties the cache.  The same holds
 * for the second cache, plaintext directory path -> backing path and IV,
 * which spares eg_path_resolve() encrypting every component of the path
 * of every FUSE call (only the last one is encrypted on a hit).  Each
 * emptying bumps a generation, and a result computed before one is not
 * put in either cache, so a lookup racing a rename cannot store what the
 * rename made stale.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "fs.h"

int eg_fs_init(struct eg_fs *fs, const char *cipherdir, const struct eg_keys *keys,
	       struct eg_backend *be)
{
	memset(fs, 0, sizeof(*fs));
	fs->cipherdir = realpath(cipherdir, NULL);
	if (!fs->cipherdir)
		return -errno;
	fs->rootfd = open(fs->cipherdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fs->rootfd < 0) {
		int ret = -errno;

		free(fs->cipherdir);
		return ret;
	}
	fs->keys = *keys;
	fs->be = be;
	eg_contents_init(&fs->contents, keys, be);
	pthread_mutex_init(&fs->cache_lock, NULL);
	return 0;
}

void eg_fs_fini(struct eg_fs *fs)
{
	eg_diriv_forget(fs);
	pthread_mutex_destroy(&fs->cache_lock);
	eg_contents_fini(&fs->contents);
	eg_wipe(&fs->keys, sizeof(fs->keys));
	close(fs->rootfd);
	free(fs->cipherdir);
}

static unsigned int slot_of(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h % EG_DIRIV_CACHE;
}

/**
 * eg_open_regular() - open one of our own small files (IV, sidecar) to read
 * @dirfd: directory @path is relative to
 * @path: the file
 * @size: the size it must have, or -1 for any
 *
 * Anyone with write access to the backing directory can put a FIFO or a
 * device where we expect a file: O_NONBLOCK keeps the open (and a FIFO's
 * read) from blocking a FUSE worker forever, and the type check refuses
 * it before any read.
 *
 * Return: an fd, -EIO when it is not a regular file of @size bytes, -errno.
 */
int eg_open_regular(int dirfd, const char *path, off_t size)
{
	struct stat st;
	int fd, ret;

	fd = openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto err_close;
	}
	if (!S_ISREG(st.st_mode) || (size >= 0 && st.st_size != size)) {
		ret = -EIO;
		goto err_close;
	}
	return fd;
err_close:
	close(fd);
	return ret;
}

/* Read the 16-byte IV file of backing directory @cdir. */
static int diriv_read(int rootfd, const char *cdir, uint8_t iv[EG_DIRIV_LEN])
{
	char p[PATH_MAX];
	ssize_t n;
	int fd, ret = 0;

	if ((size_t)snprintf(p, sizeof(p), "%s/%s", cdir, EG_DIRIV_NAME) >= sizeof(p))
		return -ENAMETOOLONG;
	fd = eg_open_regular(rootfd, p, EG_DIRIV_LEN);
	if (fd < 0)
		return fd == -ENOENT ? -EIO : fd;	/* a directory without IV is damaged */
	n = pread(fd, iv, EG_DIRIV_LEN, 0);
	if (n != EG_DIRIV_LEN)
		ret = n < 0 ? -errno : -EIO;
	close(fd);
	return ret;
}

/**
 * eg_diriv_get() - the IV of backing directory @cdir, cached
 * @fs: filesystem
 * @cdir: backing path relative to the root ("." for the root)
 * @iv: filled
 *
 * Return: 0, -EIO when the directory has no valid IV file, -errno.
 */
int eg_diriv_get(struct eg_fs *fs, const char *cdir, uint8_t iv[EG_DIRIV_LEN])
{
	struct eg_diriv_slot *s = &fs->cache[slot_of(cdir)];
	unsigned long gen;
	char *copy;
	int ret;

	pthread_mutex_lock(&fs->cache_lock);
	if (s->cdir && !strcmp(s->cdir, cdir)) {
		memcpy(iv, s->iv, EG_DIRIV_LEN);
		pthread_mutex_unlock(&fs->cache_lock);
		return 0;
	}
	gen = fs->cache_gen;
	pthread_mutex_unlock(&fs->cache_lock);
	ret = diriv_read(fs->rootfd, cdir, iv);
	if (ret)
		return ret;
	copy = strdup(cdir);
	if (!copy)
		return 0;	/* uncached is fine */
	pthread_mutex_lock(&fs->cache_lock);
	if (gen == fs->cache_gen) {
		free(s->cdir);
		s->cdir = copy;
		memcpy(s->iv, iv, EG_DIRIV_LEN);
		copy = NULL;
	}
	pthread_mutex_unlock(&fs->cache_lock);
	free(copy);
	return 0;
}

void eg_diriv_forget(struct eg_fs *fs)
{
	pthread_mutex_lock(&fs->cache_lock);
	fs->cache_gen++;
	for (int i = 0; i < EG_DIRIV_CACHE; i++) {
		free(fs->cache[i].cdir);
		fs->cache[i].cdir = NULL;
		free(fs->pcache[i].pdir);
		free(fs->pcache[i].cdir);
		fs->pcache[i].pdir = fs->pcache[i].cdir = NULL;
	}
	pthread_mutex_unlock(&fs->cache_lock);
}

/* The cached backing path and IV of plaintext directory @pdir (@len bytes,
 * not NUL-terminated) into @cdir and @iv; 0 on a hit, and @gen is the
 * generation to store a miss's result under. */
static int pdir_get(struct eg_fs *fs, const char *pdir, size_t len, char cdir[PATH_MAX],
		    uint8_t iv[EG_DIRIV_LEN], unsigned long *gen)
{
	char key[PATH_MAX];
	struct eg_pdir_slot *s;
	int ret = -ENOENT;

	memcpy(key, pdir, len);
	key[len] = '\0';
	s = &fs->pcache[slot_of(key)];
	pthread_mutex_lock(&fs->cache_lock);
	*gen = fs->cache_gen;
	if (s->pdir && !strcmp(s->pdir, key)) {
		strcpy(cdir, s->cdir);
		memcpy(iv, s->iv, EG_DIRIV_LEN);
		ret = 0;
	}
	pthread_mutex_unlock(&fs->cache_lock);
	return ret;
}

/* Remember plaintext directory @pdir (@len bytes) as @cdir with @iv, unless
 * the caches were emptied since generation @gen. */
static void pdir_put(struct eg_fs *fs, const char *pdir, size_t len, const char *cdir,
		     const uint8_t iv[EG_DIRIV_LEN], unsigned long gen)
{
	char *p = strndup(pdir, len), *c = strdup(cdir);
	struct eg_pdir_slot *s;

	if (!p || !c)
		goto out;	/* uncached is fine */
	s = &fs->pcache[slot_of(p)];
	pthread_mutex_lock(&fs->cache_lock);
	if (gen == fs->cache_gen) {
		free(s->pdir);
		free(s->cdir);
		s->pdir = p;
		s->cdir = c;
		memcpy(s->iv, iv, EG_DIRIV_LEN);
		p = c = NULL;
	}
	pthread_mutex_unlock(&fs->cache_lock);
out:
	free(p);
	free(c);
}

/**
 * eg_diriv_create() - give the new backing directory @cdir its IV file
 * @dirfd: directory @cdir is relative to
 * @cdir: the directory
 *
 * Return: 0 or -errno.
 */
int eg_diriv_create(int dirfd, const char *cdir)
{
	uint8_t iv[EG_DIRIV_LEN];
	char p[PATH_MAX];
	int fd, ret = 0;

	if ((size_t)snprintf(p, sizeof(p), "%s/%s", cdir, EG_DIRIV_NAME) >= sizeof(p))
		return -ENAMETOOLONG;
	if (RAND_bytes(iv, sizeof(iv)) != 1)
		return -EIO;
	fd = openat(dirfd, p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd < 0)
		return -errno;
	if (write(fd, iv, sizeof(iv)) != (ssize_t)sizeof(iv))
		ret = -EIO;
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	if (ret)
		unlinkat(dirfd, p, 0);
	return ret;
}

static int append(char *dst, const char *dir, const char *name)
{
	int n = strcmp(dir, ".") ? snprintf(dst, PATH_MAX, "%s/%s", dir, name) :
				   snprintf(dst, PATH_MAX, "%s", name);

	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* Encrypt component @name (@len bytes) of backing directory cp->dir, whose
 * IV is @iv, into cp's other fields. */
static int resolve_one(struct eg_fs *fs, struct eg_cpath *cp, const char *name, size_t len,
		       const uint8_t iv[EG_DIRIV_LEN])
{
	char comp[EG_NAME_MAX + 1];
	int ret;

	if (len > EG_NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(comp, name, len);
	comp[len] = '\0';
	ret = (int)eg_name_encrypt(fs->keys.name, iv, comp, cp->cname, sizeof(cp->cname));
	if (ret < 0)
		return ret;
	ret = eg_name_backing(cp->cname, cp->bname, sizeof(cp->bname));
	if (ret < 0)
		return ret;
	cp->is_long = ret;
	ret = append(cp->path, cp->dir, cp->bname);
	if (ret)
		return ret;
	cp->is_root = 0;
	return 0;
}

/**
 * eg_path_resolve() - translate a plaintext path
 * @fs: filesystem
 * @path: absolute plaintext path from FUSE
 * @cp: filled
 *
 * A path as FUSE sends it ("/a/b/c": no "//", no trailing "/") whose parent
 * is in the directory cache costs one name encryption; otherwise every
 * component is encrypted, and the parent is cached.
 *
 * Return: 0; -ENAMETOOLONG for a component over 255 bytes or a backing
 * path over PATH_MAX; -EIO for a damaged directory on the way; -errno.
 */
int eg_path_resolve(struct eg_fs *fs, const char *path, struct eg_cpath *cp)
{
	const char *p = path, *end, *last = strrchr(path, '/');
	uint8_t iv[EG_DIRIV_LEN];
	unsigned long gen = 0;
	size_t plen = 0;
	int ret, cacheable;

	strcpy(cp->path, ".");
	strcpy(cp->dir, ".");
	cp->bname[0] = cp->cname[0] = '\0';
	cp->is_long = 0;
	cp->is_root = 1;
	cacheable = path[0] == '/' && last && last > path && last[1] && !strstr(path, "//");
	if (cacheable) {
		plen = (size_t)(last - path);
		if (!pdir_get(fs, path, plen, cp->dir, iv, &gen))
			return resolve_one(fs, cp, last + 1, strlen(last + 1), iv);
	}
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = strchrnul(p, '/');
		strcpy(cp->dir, cp->path);
		ret = eg_diriv_get(fs, cp->dir, iv);
		if (ret)
			return ret;
		ret = resolve_one(fs, cp, p, (size_t)(end - p), iv);
		if (ret)
			return ret;
		p = end;
	}
	/* iv is cp->dir's: the parent's */
	if (cacheable)
		pdir_put(fs, path, plen, cp->dir, iv, gen);
	return 0;
}

static int sidecar_path(const struct eg_cpath *cp, char *out)
{
	char name[EG_SIDECAR_LEN + 1];

	if (eg_longname_sidecar_name(cp->bname, name, sizeof(name)))
		return -EINVAL;
	return append(out, cp->dir, name);
}

/**
 * eg_sidecar_write() - store the full encrypted name of a long entry
 * @fs: filesystem
 * @cp: the entry (nothing to do unless cp->is_long)
 *
 * Written before the entry is created, so a crash leaves at worst an
 * orphan sidecar, never an entry that cannot be named.
 *
 * Return: 0 or -errno.
 */
int eg_sidecar_write(struct eg_fs *fs, const struct eg_cpath *cp)
{
	char p[PATH_MAX], tmp[PATH_MAX], buf[EG_SIDECAR_MAX], cur[EG_CNAME_MAX + 1];
	ssize_t len;
	int dfd, fd, ret;

	if (!cp->is_long)
		return 0;
	ret = sidecar_path(cp, p);
	if (ret)
		return ret;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s%s", p, EG_SIDECAR_TMP_SUFFIX) >= sizeof(tmp))
		return -ENAMETOOLONG;
	len = eg_longname_format(cp->cname, buf, sizeof(buf));
	if (len < 0)
		return (int)len;
	/* an existing long name (open O_CREAT, a mkdir that meets EEXIST)
	 * already has the right sidecar: rewriting it would only open a
	 * window in which the entry cannot be named */
	dfd = openat(fs->rootfd, cp->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	ret = eg_sidecar_read(dfd, cp->bname, cur, sizeof(cur));
	close(dfd);
	if (!ret && !strcmp(cur, cp->cname))
		return 0;
	/* otherwise a whole new file, synced, renamed into place: a crash
	 * leaves the old sidecar or the new one, never a torn one (debris
	 * under the temp name is hidden, and rmdir clears it) */
	unlinkat(fs->rootfd, tmp, 0);
	fd = openat(fs->rootfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd < 0)
		return -errno;
	ret = 0;
	if (write(fd, buf, (size_t)len) != len)
		ret = -EIO;
	else if (fsync(fd))
		ret = -errno;
	close(fd);
	if (!ret && renameat(fs->rootfd, tmp, fs->rootfd, p))
		ret = -errno;
	if (ret)
		goto err_unlink;
	return 0;
err_unlink:
	unlinkat(fs->rootfd, tmp, 0);
	return ret;
}

void eg_sidecar_remove(struct eg_fs *fs, const struct eg_cpath *cp)
{
	char p[PATH_MAX];

	if (cp->is_long && !sidecar_path(cp, p))
		unlinkat(fs->rootfd, p, 0);
}

/**
 * eg_sidecar_read() - the encrypted name of hashed entry @hashed
 * @dirfd: its backing directory
 * @hashed: the hashed backing name
 * @cname: destination
 * @cnamesz: its size
 *
 * Return: 0, or -EBADMSG when the sidecar is missing, malformed or
 * belongs to another name.
 */
int eg_sidecar_read(int dirfd, const char *hashed, char *cname, size_t cnamesz)
{
	char name[EG_SIDECAR_LEN + 1], buf[EG_SIDECAR_MAX + 1];
	ssize_t n;
	int fd;

	if (eg_longname_sidecar_name(hashed, name, sizeof(name)))
		return -EBADMSG;
	fd = eg_open_regular(dirfd, name, -1);
	if (fd < 0)
		return -EBADMSG;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0 || n > EG_SIDECAR_MAX)
		return -EBADMSG;
	if (eg_longname_parse(buf, (size_t)n, cname, cnamesz) < 0)
		return -EBADMSG;
	return eg_longname_verify(hashed, cname);
}
