// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * twins.c - see twins.h.
 *
 * A lookup compares the entry name, then the code bytes themselves (not
 * a digest of them): a load happens once per ptask per memory space,
 * and a memcmp of a few hundred KiB of PTX is cheaper than any hash of
 * it, with no collision to argue about.
 *
 * Why the ownership checks: ptaskd runs as root and a twin runs inside
 * it, so a twin library is code the administrator installed, like a
 * kernel module.  A directory or file that another user could write
 * would let that user run code as root; ptaskd refuses it rather than
 * trusting whoever made it writable.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/backend/twins.h"
#include "daemon/log.h"

#define PD_TWINS_MAX		256
#define PD_TWIN_LIBS_MAX	64

/**
 * struct pd_twin_slot - one twin ptaskd knows
 * @twin: the twin
 * @run_blocks: its block-range entry, or NULL (an ABI 1 table's twins,
 *	and twins that run whole)
 * @origin: the library (or the program) it came from
 */
struct pd_twin_slot {
	const struct ptask_twin *twin;
	ptask_twin_blocks_fn run_blocks;
	const char *origin;
};

static pthread_mutex_t pd_twins_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pd_twin_slot pd_twins[PD_TWINS_MAX];	/* under the lock */
static unsigned int pd_twins_n;				/* under the lock */
static void *pd_twin_libs[PD_TWIN_LIBS_MAX];		/* under the lock */
static unsigned int pd_twin_libs_n;			/* under the lock */

static bool same_code(const struct ptask_twin *t, const void *code,
		      size_t code_len)
{
	return (size_t)(t->code_end - t->code) == code_len &&
	       !memcmp(t->code, code, code_len);
}

static const struct ptask_twin *find_locked(const char *entry,
					    const void *code, size_t code_len,
					    unsigned int *named)
{
	unsigned int i;

	*named = 0;
	for (i = 0; i < pd_twins_n; i++) {
		const struct ptask_twin *t = pd_twins[i].twin;

		if (strcmp(t->entry, entry))
			continue;
		if (same_code(t, code, code_len))
			return t;
		(*named)++;
	}
	return NULL;
}

static int table_check(const struct ptask_twin_table *table)
{
	uint32_t i;

	if ((table->abi != PTASK_TWIN_ABI && table->abi != PTASK_TWIN_ABI_V1) ||
	    !table->count || !table->twins)
		return -EINVAL;
	for (i = 0; i < table->count; i++) {
		const struct ptask_twin *t = &table->twins[i];

		if (!t->entry || !t->entry[0] || !t->code || t->code_end <= t->code ||
		    !t->run || !t->cost)
			return -EINVAL;
	}
	return 0;
}

int pd_twins_add(const struct ptask_twin_table *table, const char *origin)
{
	unsigned int named;
	uint32_t i;
	int err = table_check(table);

	if (err)
		return err;
	pthread_mutex_lock(&pd_twins_lock);
	if (pd_twins_n + table->count > PD_TWINS_MAX) {
		err = -ENOSPC;
		goto out;
	}
	for (i = 0; i < table->count; i++) {
		const struct ptask_twin *t = &table->twins[i];

		if (find_locked(t->entry, t->code,
				(size_t)(t->code_end - t->code), &named)) {
			pd_log_err("twins: %s: a twin of '%s' for the same code is there already",
				   origin, t->entry);
			err = -EEXIST;
			goto out;
		}
	}
	for (i = 0; i < table->count; i++) {
		struct pd_twin_slot *slot = &pd_twins[pd_twins_n++];

		slot->twin = &table->twins[i];
		/* An ABI 1 table ends before run_blocks: never read it. */
		slot->run_blocks = table->abi >= 2 && table->run_blocks ?
				   table->run_blocks[i] : NULL;
		slot->origin = origin;
	}
out:
	pthread_mutex_unlock(&pd_twins_lock);
	return err;
}

int pd_twin_find(const char *entry, const void *code, size_t code_len,
		 const struct ptask_twin **twin)
{
	unsigned int named;

	pthread_mutex_lock(&pd_twins_lock);
	*twin = find_locked(entry, code, code_len, &named);
	pthread_mutex_unlock(&pd_twins_lock);
	if (*twin)
		return 0;
	if (named)
		pd_log_err("twins: kernel '%s': %u twin(s) of that name, none for this code (%zu bytes): it has no host twin and cannot run on this backend",
			   entry, named, code_len);
	else
		pd_log_err("twins: kernel '%s': no host twin of that name: it cannot run on this backend",
			   entry);
	return -ENOENT;
}

ptask_twin_blocks_fn pd_twin_run_blocks(const struct ptask_twin *twin)
{
	ptask_twin_blocks_fn fn = NULL;
	unsigned int i;

	pthread_mutex_lock(&pd_twins_lock);
	for (i = 0; i < pd_twins_n; i++) {
		if (pd_twins[i].twin == twin) {
			fn = pd_twins[i].run_blocks;
			break;
		}
	}
	pthread_mutex_unlock(&pd_twins_lock);
	return fn;
}

/* May ptaskd trust what @st describes?  NULL, or why not. */
static const char *untrusted(const struct stat *st)
{
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return "owned by another user";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "writable by group or others";
	return NULL;
}

/* dlopen @path and add its table; the library stays open until exit. */
static int load_one(const char *path)
{
	const struct ptask_twin_table *table;
	void *lib;
	int err;

	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		pd_log_err("twins: refusing %s: %s", path, dlerror());
		return -ENOEXEC;
	}
	table = dlsym(lib, "ptask_twin_table");
	if (!table) {
		pd_log_err("twins: refusing %s: it exports no ptask_twin_table", path);
		err = -ENOEXEC;
		goto err_close;
	}
	if (table_check(table)) {
		pd_log_err("twins: refusing %s: its table is not twin ABI %d or %d, or has an incomplete twin",
			   path, PTASK_TWIN_ABI_V1, PTASK_TWIN_ABI);
		err = -ENOEXEC;
		goto err_close;
	}
	pthread_mutex_lock(&pd_twins_lock);
	err = pd_twin_libs_n == PD_TWIN_LIBS_MAX ? -ENOSPC : 0;
	pthread_mutex_unlock(&pd_twins_lock);
	err = err ?: pd_twins_add(table, path);
	if (err) {
		pd_log_err("twins: refusing %s: %s", path, strerror(-err));
		goto err_close;
	}
	pthread_mutex_lock(&pd_twins_lock);
	pd_twin_libs[pd_twin_libs_n++] = lib;
	pthread_mutex_unlock(&pd_twins_lock);
	pd_log_info("twins: %s: %u twin(s), the first '%s' (ABI %u)", path,
		    table->count, table->twins[0].entry, table->abi);
	return 0;
err_close:
	dlclose(lib);
	return err;
}

static int is_library(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 3 && !strcmp(d->d_name + n - 3, ".so");
}

int pd_twins_load_dir(const char *dir, bool required)
{
	struct dirent **names;
	const char *why;
	struct stat st;
	char path[4096];
	int n, i, dfd;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		int err = -errno;

		if (err == -ENOENT && !required) {
			pd_log_info("twins: no %s: the cpu and sim backends have no host twins",
				    dir);
			return 0;
		}
		pd_log_err("twins: %s: %s", dir, strerror(-err));
		return err;
	}
	if (fstat(dfd, &st)) {
		close(dfd);
		return -errno;
	}
	why = untrusted(&st);
	if (why) {
		pd_log_err("twins: refusing the directory %s: %s (mode %04o, uid %u)",
			   dir, why, (unsigned int)(st.st_mode & 07777),
			   (unsigned int)st.st_uid);
		close(dfd);
		return -EPERM;
	}
	n = scandir(dir, &names, is_library, alphasort);
	if (n < 0) {
		int err = -errno;

		close(dfd);
		return err;
	}
	for (i = 0; i < n; i++) {
		const char *name = names[i]->d_name;

		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
			why = strerror(errno);
		else if (!S_ISREG(st.st_mode))
			why = "not a regular file";
		else
			why = untrusted(&st);
		if (why)
			pd_log_err("twins: refusing %s: %s", path, why);
		else
			load_one(path);
		free(names[i]);
	}
	free(names);
	close(dfd);
	return 0;
}

void pd_twins_unload_all(void)
{
	unsigned int i;

	pthread_mutex_lock(&pd_twins_lock);
	pd_twins_n = 0;
	for (i = 0; i < pd_twin_libs_n; i++)
		dlclose(pd_twin_libs[i]);
	pd_twin_libs_n = 0;
	pthread_mutex_unlock(&pd_twins_lock);
}
