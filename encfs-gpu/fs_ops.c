// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fs_ops.c - the FUSE operations (high-level libfuse 3 API, paths).
 *
 * Each operation resolves its plaintext path (fs.h) and does the same
 * operation on the backing entry.  What is not a pass-through:
 *  - regular file data: contents.c, under the per-inode lock (inodes.h);
 *  - sizes: backing size minus the 4 KiB header; symlinks: the length of
 *    the decrypted target;
 *  - names of new entries: a sidecar first when the name is long, then
 *    the entry; the sidecar goes when the last name using it does;
 *  - new directories get their IV file before anyone can see them;
 *  - running as root (the usual FUSE setup with allow_other), new objects
 *    are handed to the calling user, as a local filesystem would.
 * Errors are -errno as FUSE wants them; damaged ciphertext is -EIO.
 */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 35
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fs.h"
#include "inodes.h"
#include "layout.h"
#include "longname.h"

struct eg_fh {
	int fd;
	int append;			/* O_APPEND: write at the real end */
	struct eg_inode *in;
	struct eg_fh *prev, *next;	/* every open handle, for destroy */
};

/* Handles still open when the session ends (a SIGTERM under load) get no
 * release from libfuse; destroy closes them. */
static struct eg_fh *open_fhs;
static pthread_mutex_t open_fhs_lock = PTHREAD_MUTEX_INITIALIZER;

static void fh_track(struct eg_fh *fh)
{
	pthread_mutex_lock(&open_fhs_lock);
	fh->prev = NULL;
	fh->next = open_fhs;
	if (open_fhs)
		open_fhs->prev = fh;
	open_fhs = fh;
	pthread_mutex_unlock(&open_fhs_lock);
}

static void fh_free(struct eg_fh *fh)
{
	pthread_mutex_lock(&open_fhs_lock);
	if (fh->prev)
		fh->prev->next = fh->next;
	else
		open_fhs = fh->next;
	if (fh->next)
		fh->next->prev = fh->prev;
	pthread_mutex_unlock(&open_fhs_lock);
	close(fh->fd);
	eg_inode_put(fh->in);
	free(fh);
}

struct eg_dh {
	DIR *d;
	uint8_t iv[EG_DIRIV_LEN];
};

static struct eg_fs *FS(void)
{
	return fuse_get_context()->private_data;
}

static struct eg_fh *FH(struct fuse_file_info *fi)
{
	return (struct eg_fh *)(uintptr_t)fi->fh;
}

/* Resolve @path, heap-allocated: struct eg_cpath is ~8.5 KiB. */
static int resolve(const char *path, struct eg_cpath **out)
{
	struct eg_cpath *cp = malloc(sizeof(*cp));
	int ret;

	if (!cp)
		return -ENOMEM;
	ret = eg_path_resolve(FS(), path, cp);
	if (ret) {
		free(cp);
		return ret;
	}
	*out = cp;
	return 0;
}

/* Hand a new backing object to the caller (only meaningful as root). */
static void set_owner(struct eg_fs *fs, const struct eg_cpath *cp)
{
	struct fuse_context *ctx = fuse_get_context();
	gid_t gid = ctx->gid;
	struct stat dir;

	if (!fs->as_root)
		return;
	/* a setgid directory decides the group, as the backing fs did */
	if (!fstatat(fs->rootfd, cp->dir, &dir, 0) && (dir.st_mode & S_ISGID))
		gid = (gid_t)-1;
	fchownat(fs->rootfd, cp->path, ctx->uid, gid, AT_SYMLINK_NOFOLLOW);
}

static void fix_size(struct eg_fs *fs, const char *cpath, struct stat *st)
{
	if (S_ISREG(st->st_mode)) {
		st->st_size = st->st_size >= EG_HDR_SIZE ? st->st_size - EG_HDR_SIZE : 0;
	} else if (S_ISLNK(st->st_mode) && cpath) {
		char ct[EG_CTARGET_MAX + 1], pt[EG_SYMLINK_MAX + 2];
		ssize_t n = readlinkat(fs->rootfd, cpath, ct, sizeof(ct) - 1);

		if (n > 0) {
			ct[n] = '\0';
			n = eg_symlink_decrypt(fs->keys.name, ct, pt, sizeof(pt));
			if (n > 0)
				st->st_size = n;
		}
	}
}

static int eg_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct eg_fs *fs = FS();
	struct eg_cpath *cp;
	int ret;

	if (fi) {
		if (fstat(FH(fi)->fd, st))
			return -errno;
		fix_size(fs, NULL, st);
		return 0;
	}
	ret = resolve(path, &cp);
	if (ret)
		return ret;
	if (fstatat(fs->rootfd, cp->path, st, AT_SYMLINK_NOFOLLOW))
		ret = -errno;
	else
		fix_size(fs, cp->path, st);
	free(cp);
	return ret;
}

static int eg_readlink(const char *path, char *buf, size_t size)
{
	struct eg_fs *fs = FS();
	char ct[EG_CTARGET_MAX + 1], pt[EG_SYMLINK_MAX + 2];
	struct eg_cpath *cp;
	ssize_t n;
	int ret;

	ret = resolve(path, &cp);
	if (ret)
		return ret;
	n = readlinkat(fs->rootfd, cp->path, ct, sizeof(ct) - 1);
	free(cp);
	if (n < 0)
		return -errno;
	ct[n] = '\0';
	n = eg_symlink_decrypt(fs->keys.name, ct, pt, sizeof(pt));
	if (n < 0)
		return -EIO;
	if (size) {
		size_t len = (size_t)n < size - 1 ? (size_t)n : size - 1;

		memcpy(buf, pt, len);
		buf[len] = '\0';
	}
	return 0;
}

static int eg_mknod(const char *path, mode_t mode, dev_t rdev)
{
	struct eg_fs *fs = FS();
	struct eg_cpath *cp;
	int ret, fd;

	ret = resolve(path, &cp);
	if (ret)
		return ret;
	ret = eg_sidecar_write(fs, cp);
	if (ret)
		goto out;
	if (S_ISREG(mode)) {
		fd = openat(fs->rootfd, cp->path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode);
		if (fd < 0)
			ret = -errno;
		else
			close(fd);
	} else if (mknodat(fs->rootfd, cp->path, mode, rdev)) {
		ret = -errno;
	}
	if (ret) {
		if (ret != -EEXIST)
			eg_sidecar_remove(fs, cp);
		goto out;
	}
	set_owner(fs, cp);
out:
	free(cp);
	return ret;
}

static int eg_mkdir(const char *path, mode_t mode)
{
	struct eg_fs *fs = FS();
	struct eg_cpath *cp;
	struct stat st;
	int ret;

	ret = resolve(path, &cp);
	if (ret)
		return ret;
	ret = eg_sidecar_write(fs, cp);
	if (ret)
		goto out;
	/* owner-writable until the IV file is in, then the asked-for mode */
	if (mkdirat(fs->rootfd, cp->path, 0700)) {
		ret = -errno;
		if (ret != -EEXIST)
			eg_sidecar_remove(fs, cp);
		goto out;
	}
	ret = eg_diriv_create(fs->rootfd, cp->path);
	if (ret)
		goto err_rmdir;
	/* the kernel leaves S_ISGID out of @mode: a setgid parent gave it to
	 * the backing dir, and chmod must not take it away again */
	if (fstatat(fs->rootfd, cp->path, &st, AT_SYMLINK_NOFOLLOW)) {
		ret = -errno;
		goto err_diriv;
	}
	if (fchmodat(fs->rootfd, cp->path, (mode & 07777) | (st.st_mode & S_ISGID), 0)) {
		ret = -errno;
		goto err_diriv;
	}
	set_owner(fs, cp);
	goto out;
err_diriv:
	{
		char p[PATH_MAX];

		if ((size_t)snprintf(p, sizeof(p), "%s/%s", cp->path, EG_DIRIV_NAME) < sizeof(p))
			unlinkat(fs->rootfd, p, 0);
	}
err_rmdir:
	unlinkat(fs->rootfd, cp->path, AT_REMOVEDIR);
	eg_sidecar_remove(fs, cp);
out:
	free(cp);
	return ret;
}

/* Does a backing name exist?  Decides whether a long name's sidecar stays. */
static int exists(struct eg_fs *fs, const char *cpath)
{
	struct stat st;

	return !fstatat(fs->rootfd, cpath, &st, AT_SYMLINK_NOFOLLOW);
}

static int is_dir(struct eg_fs *fs, const char *cpath)
{
	struct stat st;

	return !fstatat(fs->rootfd, cpath, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode);
}

static int eg_unlink(const char *path)
{
	struct eg_fs *fs = FS();
	struct eg_cpath *cp;
	int ret;

	ret = resolve(path, &cp);
	if (ret)
		return ret;
	if (unlinkat(fs->rootfd, cp->path, 0))
		ret = -errno;
	else
		eg_sidecar_remove(fs, cp);
	free(cp);
	return ret;
}

/*
 * A backing directory that holds nothing but its IV file is empty to the
 * user.  Removing it, or renaming a directory over it, takes the IV file
 * out first and puts it back when the operation then fails, or the names
 * inside would be lost.
 */
struct iv_saved {
	int had;
	uint8_t iv[EG_DIRIV_LEN];
};

/* a sidecar, or one left half-written under its temporary name */
static int is_sidecar(const char *name)
{
	char s[EG_SIDECAR_LEN + 1];

	if (eg_longname_is_sidecar(name))
		return 1;
	if (strlen(name) != EG_SIDECAR_LEN + sizeof(EG_SIDECAR_TMP_SUFFIX) - 1 ||
	    strcmp(name + EG_SIDECAR_LEN, EG_SIDECAR_TMP_SUFFIX))
		return 0;
	memcpy(s, name, EG_SIDECAR_LEN);
	s[EG_SIDECAR_LEN] = '\0';
	return eg_longname_is_sidecar(s);
}

/* 0: empty but for the IV (now removed, saved in @sv); -ENOTEMPTY; -errno */
static int dir_take_iv(struct eg_fs *fs, const char *cpath, struct iv_saved *sv)
{
	struct dirent *de;
	int fd, ivfd, ret = 0;
	DIR *d;

	sv->had = 0;
	fd = openat(fs->rootfd, cpath, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	/* sidecars do not count: with no other entry, no hashed entry is left
	 * to own them, so they are orphans (a crash between writing one and
	 * creating its entry) that would otherwise block rmdir forever */
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, EG_DIRIV_NAME) || is_sidecar(de->d_name))
			continue;
		ret = -ENOTEMPTY;
		break;
	}
	if (!ret) {
		rewinddir(d);
		while (!ret && (de = readdir(d)))
			if (is_sidecar(de->d_name) && unlinkat(fd, de->d_name, 0) &&
			    errno != ENOENT)
				ret = -errno;
	}
	if (!ret) {
		ivfd = eg_open_regular(fd, EG_DIRIV_NAME, EG_DIRIV_LEN);
		if (ivfd >= 0) {
			sv->had = read(ivfd, sv->iv, sizeof(sv->iv)) == (ssize_t)sizeof(sv->iv);
			close(ivfd);
		}
		/* a damaged IV (not a 16-byte file) is not worth saving, but it
		 * must go too or the directory can never be removed */
		if ((ivfd >= 0 || ivfd == -EIO) && unlinkat(fd, EG_DIRIV_NAME, 0))
			ret = -errno;
	}
	closedir(d);
	return ret;
}

static void dir_put_iv(struct eg_fs *fs, const char *cpath, const struct iv_saved *sv)
{
	char p[PATH_MAX];
	int fd;

	if (!sv->had || (size_t)snprintf(p, sizeof(p), "%s/%s", cpath, EG_DIRIV_NAME) >= sizeof(p))
		return;
	fd = openat(fs->rootfd, p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd < 0)
		return;
	if (write(fd, sv->iv, sizeof(sv->iv)) != (ssize_t)sizeof(sv->iv))
		fprintf(stderr, "encfs-gpu: could not restore %s\n", p);
	close(fd);
}

static int eg_rmdir(const char *path)
{
	struct eg_fs *fs = FS();
	struct iv_saved sv;
	struct eg_cpath *cp;
	int ret;

	ret = resolve(path, &cp);
	if (ret)
		return ret;
	ret = dir_take_iv(fs, cp->path, &sv);
	if (!ret && unlinkat(fs->rootfd, cp->path, AT_REMOVEDIR)) {
		ret = -errno;
		dir_put_iv(fs, cp->path, &sv);
	}
	if (!ret) {
		eg_sidecar_remove(fs, cp);
		eg_diriv_forget(fs);
	}
	free(cp);
	return ret;
}

static int eg_symlink(const char *target, const char *path)
{
	struct eg_fs *fs = FS();
	char ct[EG_CTARGET_MAX + 1];
	struct eg_cpath *cp;
	ssize_t n;
	int ret;

	n = eg_symlink_encrypt(fs->keys.name, target, ct, sizeof(ct));
	if (n < 0)
		return (int)n;
	ret = resolve(path, &cp);
	if (ret)
		return ret;
	ret = eg_sidecar_write(fs, cp);
	if (ret)
		goto out;
	if (symlinkat(ct, fs->rootfd, cp->path)) {
		ret = -errno;
		if (ret != -EEXIST)
			eg_sidecar_remove(fs, cp);
		goto out;
	}
	set_owner(fs, cp);
out:
	free(cp);
	return ret;
}

static int eg_rename(const char *from, const char *to, unsigned int flags)
{
	struct eg_fs *fs = FS();
	struct iv_saved sv = { 0 };
	struct eg_cpath *f, *t;
	int ret, had_to;

	ret = resolve(from, &f);
	if (ret)
		return ret;
	ret = resolve(to, &t);
	if (ret)
		goto out_f;
	had_to = exists(fs, t->path);
	if (had_to && !(flags & (RENAME_NOREPLACE | RENAME_EXCHANGE)) && strcmp(f->path, t->path) &&
	    is_dir(fs, f->path) && is_dir(fs, t->path)) {
		/* replacing an empty directory: it holds an IV file */
		ret = dir_take_iv(fs, t->path, &sv);
		if (ret)
			goto out;
	}
	ret = eg_sidecar_write(fs, t);
	if (ret)
		goto err_iv;
	if (renameat2(fs->rootfd, f->path, fs->rootfd, t->path, flags)) {
		ret = -errno;
		if (!had_to && !exists(fs, t->path))
			eg_sidecar_remove(fs, t);
		goto err_iv;
	}
	/* the old name may survive: rename onto another link of the same inode */
	if (!exists(fs, f->path))
		eg_sidecar_remove(fs, f);
	eg_diriv_forget(fs);
	goto out;
err_iv:
	dir_put_iv(fs, t->path, &sv);
out:
	free(t);
out_f:
	free(f);
	return ret;
}

static int eg_link(const char *from, const char *to)
{
	struct eg_fs *fs = FS();
	struct eg_cpath *f, *t;
	int ret;

	ret = resolve(from, &f);
	if (ret)
		return ret;
	ret = resolve(to, &t);
	if (ret)
		goto out_f;
	ret = eg_sidecar_write(fs, t);
	if (ret)
		goto out;
	if (linkat(fs->rootfd, f->path, fs->rootfd, t->path, 0)) {
		ret = -errno;
		if (ret != -EEXIST)
			eg_sidecar_remove(fs, t);
	}
out:
	free(t);
out_f:
	free(f);
	return ret;
}

static int eg_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	struct eg_fs *fs = FS();
	struct eg_cpath *cp;
	int ret;

	if (fi)
		return fchmod(FH(fi)->fd, mode) ? -errno : 0;
	ret = resolve(path, &cp);
	if (ret)
		return ret;
	if (fchmodat(fs->rootfd, cp->path, mode, 0))
		ret = -errno;
	free(cp);
	return ret;
}

static int eg_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	struct eg_fs *fs = FS();
	struct eg_cpath *cp;
	int ret;

	if (fi)
		return fchown(FH(fi)->fd, uid, gid) ? -errno : 0;
	ret = resolve(path, &cp);
	if (ret)
		return ret;
	if (fchownat(fs->rootfd, cp->path, uid, gid, AT_SYMLINK_NOFOLLOW))
		ret = -errno;
	free(cp);
	return ret;
}

/* Truncate an open backing file under its inode's exclusive lock. */
static int truncate_fd(struct eg_fs *fs, int fd, struct eg_inode *in, off_t size)
{
	int ret;

	if (size < 0)
		return -EINVAL;
	pthread_rwlock_wrlock(&in->lock);
	ret = eg_file_truncate(&fs->contents, fd, &in->st, (uint64_t)size);
	pthread_rwlock_unlock(&in->lock);
	return ret;
}

static int inode_of(int fd, struct eg_inode **in)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	*in = eg_inode_get(st.st_dev, st.st_ino);
	return *in ? 0 : -ENOMEM;
}

static int eg_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct eg_fs *fs = FS();
	struct eg_inode *in;
	struct eg_cpath *cp;
	int ret, fd;

	if (fi)
		return truncate_fd(fs, FH(fi)->fd, FH(fi)->in, size);
	ret = resolve(path, &cp);
	if (ret)
		return ret;
	fd = openat(fs->rootfd, cp->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	free(cp);
	if (fd < 0)
		return -errno;
	ret = inode_of(fd, &in);
	if (!ret) {
		ret = truncate_fd(fs, fd, in, size);
		eg_inode_put(in);
	}
	close(fd);
	return ret;
}

/* Make sure an open file's header is loaded (or absent: empty file). */
static int header_check(struct eg_fs *fs, struct eg_fh *fh)
{
	uint64_t size, bsize;
	int ret;

	pthread_mutex_lock(&fh->in->hdr_lock);
	ret = eg_file_size(fh->fd, &size, &bsize);
	if (!ret && bsize > 0)
		ret = eg_file_load_header(&fs->contents, fh->fd, &fh->in->st);
	pthread_mutex_unlock(&fh->in->hdr_lock);
	return ret;
}

/* Open flags for the backing file: data is read-modify-written in whole
 * units, so writers need read access too, and offsets are always ours
 * (no O_APPEND); O_TRUNC is done by us, keeping the header rules. */
static int backing_flags(int flags)
{
	int keep = O_SYNC | O_DSYNC | O_NOATIME;

	return ((flags & O_ACCMODE) == O_RDONLY && !(flags & O_TRUNC) ? O_RDONLY : O_RDWR) |
	       (flags & keep) | O_NOFOLLOW | O_CLOEXEC;
}

static int open_common(struct eg_fs *fs, int fd, struct fuse_file_info *fi)
{
	struct eg_fh *fh = calloc(1, sizeof(*fh));
	int ret;

	if (!fh) {
		close(fd);
		return -ENOMEM;
	}
	fh->fd = fd;
	fh->append = !!(fi->flags & O_APPEND);
	ret = inode_of(fd, &fh->in);
	if (ret)
		goto err_fh;
	if (fi->flags & O_TRUNC)
		ret = truncate_fd(fs, fd, fh->in, 0);
	else
		ret = header_check(fs, fh);
	if (ret)
		goto err_inode;
	fi->fh = (uintptr_t)fh;
	fh_track(fh);
	return 0;
err_inode:
	eg_inode_put(fh->in);
err_fh:
	close(fd);
	free(fh);
	return ret;
}

static int eg_open(const char *path, struct fuse_file_info *fi)
{
	struct eg_fs *fs = FS();
	struct eg_cpath *cp;
	int ret, fd;

	ret = resolve(path, &cp);
	if (ret)
		return ret;
	fd = openat(fs->rootfd, cp->path, backing_flags(fi->flags));
	free(cp);
	if (fd < 0)
		return -errno;
	return open_common(fs, fd, fi);
}

static int eg_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	struct eg_fs *fs = FS();
	struct eg_cpath *cp;
	int ret, fd, existed;

	ret = resolve(path, &cp);
	if (ret)
		return ret;
	existed = exists(fs, cp->path);
	ret = eg_sidecar_write(fs, cp);
	if (ret)
		goto out;
	fd = openat(fs->rootfd, cp->path, backing_flags(fi->flags | O_RDWR) | O_CREAT |
		    (fi->flags & O_EXCL), mode);
	if (fd < 0) {
		ret = -errno;
		if (!existed)
			eg_sidecar_remove(fs, cp);
		goto out;
	}
	if (!existed)
		set_owner(fs, cp);
	ret = open_common(fs, fd, fi);
out:
	free(cp);
	return ret;
}

static int eg_read(const char *path, char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	struct eg_fs *fs = FS();
	struct eg_fh *fh = FH(fi);
	ssize_t n;

	(void)path;
	if (off < 0)
		return -EINVAL;
	pthread_rwlock_rdlock(&fh->in->lock);
	n = header_check(fs, fh);
	if (!n)
		n = eg_file_read(&fs->contents, fh->fd, &fh->in->st, buf, size, (uint64_t)off);
	pthread_rwlock_unlock(&fh->in->lock);
	return (int)n;
}

static int eg_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct eg_fs *fs = FS();
	struct eg_fh *fh = FH(fi);
	ssize_t n;

	(void)path;
	if (off < 0)
		return -EINVAL;
	pthread_rwlock_wrlock(&fh->in->lock);
	if (fh->append && !fi->writepage) {
		uint64_t end;

		/* the kernel's offset is its cached size for this name, stale
		 * when another hard-link name (another libfuse node) appended;
		 * the backing size, read under the inode's write lock, is not.
		 * Not for page-cache writeback (mmap), which may borrow this
		 * handle but means its own offset. */
		n = eg_file_size(fh->fd, &end, NULL);
		if (n)
			goto out;
		off = (off_t)end;
	}
	n = eg_file_write(&fs->contents, fh->fd, &fh->in->st, buf, size, (uint64_t)off);
out:
	pthread_rwlock_unlock(&fh->in->lock);
	return (int)n;
}

static int eg_statfs(const char *path, struct statvfs *sv)
{
	(void)path;
	if (fstatvfs(FS()->rootfd, sv))
		return -errno;
	/* long names are hashed, so any name a local fs takes fits */
	sv->f_namemax = EG_NAME_MAX;
	return 0;
}

static int eg_release(const char *path, struct fuse_file_info *fi)
{
	struct eg_fh *fh = FH(fi);

	(void)path;
	fh_free(fh);
	return 0;
}

static int eg_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	if (datasync ? fdatasync(FH(fi)->fd) : fsync(FH(fi)->fd))
		return -errno;
	return 0;
}

/* xattrs pass through, names and values in the clear (see the docs);
 * the l*xattr calls need a full path, not a dirfd-relative one. */
static int xattr_path(const char *path, char *out)
{
	struct eg_cpath *cp;
	int ret = resolve(path, &cp);

	if (ret)
		return ret;
	if ((size_t)snprintf(out, PATH_MAX, "%s/%s", FS()->cipherdir, cp->path) >= PATH_MAX)
		ret = -ENAMETOOLONG;
	free(cp);
	return ret;
}

static int eg_setxattr(const char *path, const char *name, const char *value, size_t size,
		       int flags)
{
	char p[PATH_MAX];
	int ret = xattr_path(path, p);

	if (ret)
		return ret;
	return lsetxattr(p, name, value, size, flags) ? -errno : 0;
}

static int eg_getxattr(const char *path, const char *name, char *value, size_t size)
{
	char p[PATH_MAX];
	ssize_t n;
	int ret = xattr_path(path, p);

	if (ret)
		return ret;
	n = lgetxattr(p, name, value, size);
	return n < 0 ? -errno : (int)n;
}

static int eg_listxattr(const char *path, char *list, size_t size)
{
	char p[PATH_MAX];
	ssize_t n;
	int ret = xattr_path(path, p);

	if (ret)
		return ret;
	n = llistxattr(p, list, size);
	return n < 0 ? -errno : (int)n;
}

static int eg_removexattr(const char *path, const char *name)
{
	char p[PATH_MAX];
	int ret = xattr_path(path, p);

	if (ret)
		return ret;
	return lremovexattr(p, name) ? -errno : 0;
}

static int eg_opendir(const char *path, struct fuse_file_info *fi)
{
	struct eg_fs *fs = FS();
	struct eg_cpath *cp;
	struct eg_dh *dh;
	int ret, fd;

	ret = resolve(path, &cp);
	if (ret)
		return ret;
	dh = calloc(1, sizeof(*dh));
	if (!dh) {
		ret = -ENOMEM;
		goto out;
	}
	ret = eg_diriv_get(fs, cp->path, dh->iv);
	if (ret)
		goto err_dh;
	fd = openat(fs->rootfd, cp->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto err_dh;
	}
	dh->d = fdopendir(fd);
	if (!dh->d) {
		ret = -errno;
		close(fd);
		goto err_dh;
	}
	fi->fh = (uintptr_t)dh;
	goto out;
err_dh:
	free(dh);
out:
	free(cp);
	return ret;
}

static int eg_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct eg_fs *fs = FS();
	struct eg_dh *dh = (struct eg_dh *)(uintptr_t)fi->fh;
	char cname[EG_CNAME_MAX + 1], name[EG_NAME_MAX + 1];
	struct dirent *de;

	(void)path;
	(void)off;
	(void)flags;
	/* the whole listing in one call (offsets 0), so start over each time */
	rewinddir(dh->d);
	for (;;) {
		struct stat st;
		const char *show;

		/* readdir() reports an error only through errno, and skipping an
		 * entry (a missing sidecar's failed openat) leaves errno set, so
		 * clear it right before each call and judge readdir alone */
		errno = 0;
		de = readdir(dh->d);
		if (!de)
			return -errno;
		st = (struct stat){ .st_ino = de->d_ino, .st_mode = (mode_t)DTTOIF(de->d_type) };
		show = de->d_name;

		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			const char *enc = de->d_name;

			if (eg_longname_is_hashed(de->d_name)) {
				if (eg_sidecar_read(dirfd(dh->d), de->d_name, cname, sizeof(cname)))
					continue;
				enc = cname;
			} else if (!eg_cname_is_plain_encrypted(de->d_name)) {
				continue;	/* ours (IV, sidecars, config) or foreign */
			}
			if (eg_name_decrypt(fs->keys.name, dh->iv, enc, name, sizeof(name)) < 0) {
				if (fs->verbose)
					fprintf(stderr, "encfs-gpu: skipping undecryptable entry %s\n",
						de->d_name);
				continue;
			}
			show = name;
		}
		if (filler(buf, show, &st, 0, 0))
			return -ENOMEM;
	}
}

static int eg_releasedir(const char *path, struct fuse_file_info *fi)
{
	struct eg_dh *dh = (struct eg_dh *)(uintptr_t)fi->fh;

	(void)path;
	closedir(dh->d);
	free(dh);
	return 0;
}

static int eg_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
	struct eg_dh *dh = (struct eg_dh *)(uintptr_t)fi->fh;

	(void)path;
	if (datasync ? fdatasync(dirfd(dh->d)) : fsync(dirfd(dh->d)))
		return -errno;
	return 0;
}

static void *eg_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* inode numbers of the backing fs: hard links look like hard links */
	cfg->use_ino = 1;
	/* no hard_remove: an unlinked open file must stay reachable by path,
	 * because the kernel's GETATTR for fstat() carries no file handle and
	 * libfuse answers ESTALE for a removed node.  libfuse renames such a
	 * file to .fuse_hidden* until its last close, as most FUSE fs do. */
	/* FUSE's large requests are what the gpu backend batches on */
	conn->max_write = 1u << 20;
	conn->max_readahead = 1u << 20;
	return fuse_get_context()->private_data;
}

static void eg_destroy(void *private_data)
{
	(void)private_data;
	while (open_fhs)
		fh_free(open_fhs);
}

static int eg_access(const char *path, int mask)
{
	struct eg_cpath *cp;
	int ret = resolve(path, &cp);

	if (ret)
		return ret;
	if (faccessat(FS()->rootfd, cp->path, mask, AT_SYMLINK_NOFOLLOW))
		ret = -errno;
	free(cp);
	return ret;
}

static int eg_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	struct eg_cpath *cp;
	int ret;

	if (fi)
		return futimens(FH(fi)->fd, tv) ? -errno : 0;
	ret = resolve(path, &cp);
	if (ret)
		return ret;
	if (utimensat(FS()->rootfd, cp->path, tv, AT_SYMLINK_NOFOLLOW))
		ret = -errno;
	free(cp);
	return ret;
}

/* Plain fallocate (mode 0) only extends, as truncate does: ciphertext
 * cannot be preallocated meaningfully.  Other modes are refused, and
 * posix_fallocate() then falls back to writing zeros. */
static int eg_fallocate(const char *path, int mode, off_t off, off_t len,
			struct fuse_file_info *fi)
{
	struct eg_fs *fs = FS();
	struct eg_fh *fh = FH(fi);
	uint64_t size;
	int ret;

	(void)path;
	if (mode)
		return -EOPNOTSUPP;
	if (off < 0 || len <= 0)
		return -EINVAL;
	pthread_rwlock_wrlock(&fh->in->lock);
	ret = eg_file_size(fh->fd, &size, NULL);
	if (!ret && (uint64_t)(off + len) > size)
		ret = eg_file_truncate(&fs->contents, fh->fd, &fh->in->st, (uint64_t)(off + len));
	pthread_rwlock_unlock(&fh->in->lock);
	return ret;
}

const struct fuse_operations eg_fuse_ops = {
	.getattr = eg_getattr,
	.readlink = eg_readlink,
	.mknod = eg_mknod,
	.mkdir = eg_mkdir,
	.unlink = eg_unlink,
	.rmdir = eg_rmdir,
	.symlink = eg_symlink,
	.rename = eg_rename,
	.link = eg_link,
	.chmod = eg_chmod,
	.chown = eg_chown,
	.truncate = eg_truncate,
	.open = eg_open,
	.read = eg_read,
	.write = eg_write,
	.statfs = eg_statfs,
	.release = eg_release,
	.fsync = eg_fsync,
	.setxattr = eg_setxattr,
	.getxattr = eg_getxattr,
	.listxattr = eg_listxattr,
	.removexattr = eg_removexattr,
	.opendir = eg_opendir,
	.readdir = eg_readdir,
	.releasedir = eg_releasedir,
	.fsyncdir = eg_fsyncdir,
	.init = eg_init,
	.destroy = eg_destroy,
	.access = eg_access,
	.create = eg_create,
	.utimens = eg_utimens,
	.fallocate = eg_fallocate,
};
