// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * ctx.c - opening and closing a context: which transport, and the order
 * things are torn down in (the CPU worker before the transport it uses).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "internal.h"

uint64_t lp_deadline(int64_t timeout_ns)
{
	struct timespec ts;

	if (timeout_ns < 0)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
	       (uint64_t)timeout_ns;
}

const char *ptask_mode_name(enum ptask_mode mode)
{
	switch (mode) {
	case PTASK_MODE_KERNEL:
		return "kernel";
	case PTASK_MODE_USER:
		return "user";
	default:
		return "auto";
	}
}

enum ptask_mode ptask_ctx_mode(const struct ptask_ctx *ctx)
{
	return ctx->mode;
}

/* PTASK_MODE from the environment, when @mode is AUTO. */
static int mode_from_env(enum ptask_mode *mode)
{
	const char *env = getenv("PTASK_MODE");

	if (*mode != PTASK_MODE_AUTO || !env || !*env || !strcmp(env, "auto"))
		return 0;
	if (!strcmp(env, "kernel"))
		*mode = PTASK_MODE_KERNEL;
	else if (!strcmp(env, "user"))
		*mode = PTASK_MODE_USER;
	else
		return -EINVAL;
	return 0;
}

int ptask_ctx_open(enum ptask_mode mode, const char *socket_path,
		   struct ptask_ctx **out)
{
	struct ptask_ctx *ctx;
	int err;

	err = mode_from_env(&mode);
	if (err)
		return err;
	if (!socket_path)
		socket_path = getenv("PTASK_SOCKET");
	if (!socket_path || !*socket_path)
		socket_path = PTASK_SOCKET_DEFAULT;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->fd = -1;
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_mutex_init(&ctx->async_lock, NULL);
	if (mode == PTASK_MODE_KERNEL) {
		err = lp_kernel_open(ctx);
	} else if (mode == PTASK_MODE_USER) {
		err = lp_user_open(ctx, socket_path);
	} else if (lp_kernel_usable()) {
		err = lp_kernel_open(ctx);
	} else {
		err = lp_user_open(ctx, socket_path);
		/* Neither: say so rather than "no such file". */
		if (err == -ENOENT || err == -ECONNREFUSED)
			err = -ENODEV;
	}
	if (err) {
		pthread_mutex_destroy(&ctx->async_lock);
		pthread_mutex_destroy(&ctx->lock);
		free(ctx);
		return err;
	}
	*out = ctx;
	return 0;
}

void ptask_ctx_close(struct ptask_ctx *ctx)
{
	if (!ctx)
		return;
	ctx->stopping = true;
	lp_cpu_stop(ctx);
	ctx->t->close(ctx);
	pthread_mutex_destroy(&ctx->async_lock);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}
