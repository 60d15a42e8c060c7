// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cuda_kernel.c - code of ptaskd's CUDA backend (see cuda_priv.h): the
 * per-space module cache, kernels and launches.
 *
 * Device time: launches are timed per fence span (cuda_fence.c, "device
 * time per fence"): pd_cuda_span_before and pd_cuda_span_after around
 * each launch.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/backend/cuda_priv.h"

static void module_free(struct cuda_be *cb, struct cuda_module *m)
{
	CUresult r = cb->cu.ModuleUnload(m->mod);

	if (r != CUDA_SUCCESS)
		pd_cuda_fail(cb, r, "cuModuleUnload");
	free(m->code);
	free(m);
}

void pd_cuda_code_release(struct cuda_be *cb, struct cuda_space *s)
{
	struct cuda_module *m;

	while ((m = s->modules)) {
		s->modules = m->next;
		module_free(cb, m);
	}
	s->nmodules = 0;
}

/* FNV-1a: finds a module again; memcmp of the code makes it exact */
static uint64_t code_hash(const void *code, size_t len)
{
	const unsigned char *p = code;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int module_load(struct cuda_be *cb, struct cuda_space *s,
		       const void *code, size_t len, struct cuda_module **out)
{
	char log[4096] = "";
	CUjit_option opt[2] = { CU_JIT_ERROR_LOG_BUFFER,
				CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *val[2] = { log, (void *)(uintptr_t)sizeof(log) };
	uint64_t h = code_hash(code, len);
	struct cuda_module *m;
	CUresult r;
	int err;

	for (m = s->modules; m; m = m->next) {
		if (m->hash == h && m->len == len && !memcmp(m->code, code, len)) {
			*out = m;
			return 0;
		}
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	/* PTX must end in a NUL; a cubin or fatbin ignores the extra byte */
	m->code = malloc(len + 1);
	if (!m->code) {
		err = -ENOMEM;
		goto err_free_module;
	}
	memcpy(m->code, code, len);
	m->code[len] = '\0';
	m->len = len;
	m->hash = h;
	r = cb->cu.ModuleLoadDataEx(&m->mod, m->code, 2, opt, val);
	if (r != CUDA_SUCCESS) {
		err = pd_cuda_fail(cb, r, "cuModuleLoadDataEx");
		if (log[0])
			fprintf(stderr, "ptaskd: cuda: %.*s\n",
				(int)sizeof(log), log);
		switch (r) {
		case CUDA_ERROR_INVALID_PTX:
		case CUDA_ERROR_INVALID_IMAGE:
		case CUDA_ERROR_INVALID_SOURCE:
		case CUDA_ERROR_INVALID_VALUE:
		case CUDA_ERROR_NO_BINARY_FOR_GPU:
		case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
			err = -EINVAL;
			break;
		}
		goto err_free_code;
	}
	m->next = s->modules;
	s->modules = m;
	s->nmodules++;
	*out = m;
	return 0;

err_free_code:
	free(m->code);
err_free_module:
	free(m);
	return err;
}

/* Drop @m if no kernel uses it and the space caches too many. */
static void module_put(struct cuda_be *cb, struct cuda_space *s,
		       struct cuda_module *m)
{
	struct cuda_module **pp;

	if (m->refs || s->nmodules <= PD_CUDA_MODULE_CACHE)
		return;
	for (pp = &s->modules; *pp != m; pp = &(*pp)->next)
		;
	*pp = m->next;
	s->nmodules--;
	module_free(cb, m);
}

/*
 * Learn @k's parameter count and sizes, so that launch can refuse a
 * parameter list that does not match: cuLaunchKernel reads as many
 * values as the kernel takes, from wherever params[] points.
 */
static int kernel_params(struct cuda_be *cb, struct cuda_kernel *k)
{
	size_t off, size;
	uint32_t i;
	CUresult r;

	if (!cb->cu.FuncGetParamInfo)
		return 0;	/* driver < 12.4: launches go unchecked */
	for (i = 0;; i++) {
		r = cb->cu.FuncGetParamInfo(k->fn, i, &off, &size);
		if (r == CUDA_ERROR_INVALID_VALUE)
			break;	/* past the last parameter */
		if (r != CUDA_SUCCESS) {
			/* the kernel still runs; its launches go unchecked */
			pd_cuda_fail(cb, r, "cuFuncGetParamInfo");
			return 0;
		}
		if (i == PD_MAX_PARAMS) {
			fprintf(stderr, "ptaskd: cuda: kernel takes over %d parameters\n",
				PD_MAX_PARAMS);
			return -EINVAL;
		}
		k->param_bytes[i] = (uint32_t)size;
	}
	k->nparams = i;
	k->checked = true;
	return 0;
}

int pd_cuda_kernel_load(struct pd_backend *be, void *space, const void *code,
			size_t code_len, const char *entry, void **kernel)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	struct cuda_kernel *k;
	CUresult r;
	int err;

	if (!code || !code_len || !entry || !*entry)
		return -EINVAL;
	err = pd_cuda_ctx_use(cb, &s->c);
	if (err)
		return err;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	err = module_load(cb, s, code, code_len, &k->module);
	if (err)
		goto err_free_kernel;
	k->module->refs++;
	r = cb->cu.ModuleGetFunction(&k->fn, k->module->mod, entry);
	if (r != CUDA_SUCCESS) {
		err = pd_cuda_fail(cb, r, "cuModuleGetFunction");
		if (r == CUDA_ERROR_NOT_FOUND)
			err = -ENOENT;
		goto err_put_module;
	}
	err = kernel_params(cb, k);
	if (err)
		goto err_put_module;
	*kernel = k;
	return 0;

err_put_module:
	k->module->refs--;
	module_put(cb, s, k->module);
err_free_kernel:
	free(k);
	return err;
}

void pd_cuda_kernel_unload(struct pd_backend *be, void *space, void *kernel)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	struct cuda_kernel *k = kernel;

	if (!k)
		return;
	k->module->refs--;
	/* cuModuleUnload acts in the current context */
	if (pd_cuda_ctx_use(cb, &s->c) == 0)
		module_put(cb, s, k->module);
	free(k);
}

static int launch_check(const struct cuda_kernel *k, const struct pd_launch *l)
{
	uint32_t i;

	if (l->nparams > PD_MAX_PARAMS)
		return -EINVAL;
	for (i = 0; i < 3; i++)
		if (!l->grid[i] || !l->block[i])
			return -EINVAL;
	for (i = 0; i < l->nparams; i++)
		if (!l->params[i])
			return -EINVAL;
	if (!k->checked)
		return 0;
	if (l->nparams != k->nparams) {
		fprintf(stderr, "ptaskd: cuda: launch with %u parameters, kernel takes %u\n",
			l->nparams, k->nparams);
		return -EINVAL;
	}
	for (i = 0; i < l->nparams; i++) {
		if (l->param_bytes[i] != k->param_bytes[i]) {
			fprintf(stderr, "ptaskd: cuda: parameter %u is %u bytes, kernel takes %u\n",
				i, l->param_bytes[i], k->param_bytes[i]);
			return -EINVAL;
		}
	}
	return 0;
}

int pd_cuda_launch(struct pd_backend *be, void *space, uint32_t lane,
		   void *kernel, const struct pd_launch *l)
{
	struct cuda_be *cb = be->priv;
	struct cuda_space *s = space;
	struct cuda_kernel *k = kernel;
	struct cuda_lane *ln;
	CUresult r;
	int err;

	err = launch_check(k, l);
	if (!err)
		err = pd_cuda_lane_get(s, lane, &ln);
	if (!err)
		err = pd_cuda_ctx_use(cb, &s->c);
	if (!err)
		err = pd_cuda_span_before(cb, s, ln, l->untimed);
	if (err)
		return err;
	r = cb->cu.LaunchKernel(k->fn, l->grid[0], l->grid[1], l->grid[2],
				l->block[0], l->block[1], l->block[2],
				l->shared_bytes, ln->stream,
				(void **)l->params, NULL);
	if (r != CUDA_SUCCESS) {
		/*
		 * The span stays open: its start event is recorded, and it
		 * is timed only from a launch whose end is (span_after).
		 */
		err = pd_cuda_queue_fail(cb, s, r, "cuLaunchKernel");
		/* a geometry or shared size the kernel cannot run with */
		if (r == CUDA_ERROR_INVALID_VALUE ||
		    r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
			return -EINVAL;
		return err;
	}
	return pd_cuda_span_after(cb, ln);
}
