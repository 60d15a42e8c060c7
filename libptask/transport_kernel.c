// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * transport_kernel.c - libptask's kernel mode: the ioctls of
 * uapi/ptask.h on /dev/ptask, datablocks mmapped from the module.  Push,
 * pull, datablock create and release go through the module's rings
 * (transport_kring.c) unless PTASK_TRANSPORT=ioctl or the module has
 * none; every other call is its ioctl, after the releases the rings hold.
 */
#define _FILE_OFFSET_BITS 64	/* mmap offsets reach 2^48 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "internal.h"

#define DEV_PATH	"/dev/" PTASK_DEVICE_NAME
#define EXECUTORS_PATH	PTASK_SYSFS_DIR "/executors"

static int k_call(struct ptask_ctx *ctx, unsigned int cmd, void *arg,
		  struct lp_mem *mem)
{
	int ret;

	(void)mem;	/* the module's datablocks map by mmap_offset */
	if (lp_ring_cmd(cmd) &&
	    !__atomic_load_n(&ctx->rings_off, __ATOMIC_RELAXED)) {
		ret = lp_kring_call(ctx, cmd, arg);
		if (ret <= 0)
			return ret;
		/* 1: no ring for this call; its ioctl then */
	}
	lp_krings_flush(ctx);
	do {
		ret = ioctl(ctx->fd, cmd, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : ret;
}

static uint64_t page_round(uint64_t bytes)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	return (bytes + page - 1) & ~(page - 1);
}

static int k_map(struct ptask_ctx *ctx, uint32_t handle, uint64_t mmap_offset,
		 uint64_t bytes, void **addr, void **cookie)
{
	void *p;

	(void)handle;
	p = mmap(NULL, page_round(bytes), PROT_READ | PROT_WRITE, MAP_SHARED,
		 ctx->fd, (off_t)mmap_offset);
	if (p == MAP_FAILED)
		return -errno;
	*addr = p;
	*cookie = NULL;
	return 0;
}

static void k_unmap(struct ptask_ctx *ctx, void *addr, uint64_t bytes,
		    void *cookie)
{
	(void)ctx;
	(void)cookie;
	munmap(addr, page_round(bytes));
}

static void k_close(struct ptask_ctx *ctx)
{
	lp_krings_close(ctx);
	/* What a program sees of releases it did not wait for. */
	if (ctx->release_failed)
		fprintf(stderr, "libptask: %llu datablock release(s) failed in ptask.ko (first: %s)\n",
			(unsigned long long)ctx->release_failed,
			strerror(-ctx->release_err));
	close(ctx->fd);
	ctx->fd = -1;
}

const struct lp_transport lp_kernel_transport = {
	.call = k_call,
	.map = k_map,
	.unmap = k_unmap,
	.close = k_close,
};

bool lp_kernel_usable(void)
{
	unsigned long n = 0;
	FILE *f;

	if (access(DEV_PATH, R_OK | W_OK))
		return false;
	f = fopen(EXECUTORS_PATH, "re");
	if (!f)
		return false;
	if (fscanf(f, "%lu", &n) != 1)
		n = 0;
	fclose(f);
	return n > 0;
}

/*
 * PTASK_TRANSPORT in kernel mode: "ring" (or unset, or empty), or "ioctl"
 * (also "socket", user mode's name for the path without rings).
 */
static int transport_from_env(bool *rings_off)
{
	const char *env = getenv("PTASK_TRANSPORT");

	*rings_off = false;
	if (!env || !*env || !strcmp(env, "ring"))
		return 0;
	if (strcmp(env, "ioctl") && strcmp(env, "socket"))
		return -EINVAL;
	*rings_off = true;
	return 0;
}

int lp_kernel_open(struct ptask_ctx *ctx)
{
	int err = transport_from_env(&ctx->rings_off);

	if (err)
		return err;
	ctx->fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	if (ctx->fd < 0)
		return -errno;
	ctx->t = &lp_kernel_transport;
	ctx->mode = PTASK_MODE_KERNEL;
	return 0;
}
