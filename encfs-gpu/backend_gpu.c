// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * backend_gpu.c - the gpu backend: AES-256-XTS as a ptask.
 *
 * The kernel is gpu/aes_xts.cu, compiled to PTX and embedded in the binary
 * (gpu/aes_xts_ptx.S); libptask submits it to ptaskd, which owns the GPU
 * and schedules it among its other users.  ptaskd's cpu and sim backends
 * run its host twin (daemon/host_kernels_xts.c), so the whole path is
 * tested without a GPU.  Two graphs, one per direction, each one ptask:
 *
 *   data ---(in/out, param 0)--> [ xts_encrypt | xts_decrypt ] --> data
 *   tweaks ----(param 1)------/      (fixed grid of GPU_GRID x 256)
 *   key (sticky, param 2) ----/
 *   shape (param 3) ----------/
 *
 *   data    no template (GLOBAL): the request's units back to back; in/out,
 *           so the kernel works in place and the same datablock comes back
 *           on the output: no output buffer to size, no copy
 *   tweaks  no template (GLOBAL): 16 bytes per unit
 *   key     struct xts_key_param by value (PTASK_BIND_PARAM, 1112 bytes):
 *           the three key schedules and the alpha powers; pushed once
 *   shape   struct xts_shape_param by value (16 bytes): nunits, unit_len,
 *           last_len, pushed with every request
 *
 * A request (crypt) copies its data and tweaks into datablocks, fills the
 * shape, pushes the three and pulls the result, then copies it out.  The
 * datablocks are kept and pushed again (each push makes the host copy the
 * truth again): one per power-of-two size class up to GPU_CACHE_MAX per
 * direction, so a request costs four round trips to ptaskd (three pushes,
 * one pull, one release of the pulled reference) and no allocation.  A
 * size-class datablock is larger than the request; the shape says what the
 * kernel touches.
 *
 * Concurrency: one request at a time (gb->lock), across both directions.
 * That is the simple correct thing: the input channels pair datablocks by
 * arrival order, so two requests pushing at once would swap their tweaks.
 * Overlapping requests (a graph per worker, or batching concurrent FUSE
 * requests into one datablock, which needs a kernel taking per-unit
 * lengths) is left for later; see Documentation/encfs-gpu.md.
 *
 * Failure: any error on the ptask path (ptaskd killed: -ENOTCONN at once;
 * the graph failed: -EIO; no answer within GPU_TIMEOUT_NS) drops the whole
 * connection and fails the request with -EIO, leaving the caller's data
 * unchanged (it is only written on success); the next request connects
 * again, so a restarted ptaskd is picked up.  Nothing is ever returned
 * that the kernel did not produce.
 *
 * Fork: FUSE daemonizes after the backend is made, and a libptask context
 * does not survive fork (ptaskd ties connections to the pid that opened
 * them).  So eg_backend_gpu_new() checks the whole path once and
 * disconnects, and main.c calls eg_backend_detach() before fuse_main();
 * the first request connects from whichever process makes it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libptask/libptask.h"

#include "gpu/aes_ks.h"
#include "gpu/xts_params.h"
#include "keys.h"
#include "xts.h"

/* the kernel's PTX, NUL included (gpu/aes_xts_ptx.S) */
extern const char eg_xts_ptx[];
extern const uint64_t eg_xts_ptx_len;

#define GPU_THREADS	256		/* XTS_THREADS in aes_xts.cu */
/* Blocks per launch, whatever the request: the geometry is per ptask.  The
 * kernel loops grid-stride over its chunks (256 AES blocks of one unit
 * each), and a block without a chunk returns at once, so this only needs
 * to fill a big GPU: 8 per SM of a 132-SM H100 or H200, the most
 * xts_gpu_test launches. */
#define GPU_GRID	1056
#define GPU_TIMEOUT_NS	(60LL * 1000 * 1000 * 1000)
#define GPU_CACHE_MIN	4096u		/* the smallest size class */
#define GPU_CLASSES	11		/* 4 KiB .. 4 MiB */
#define GPU_CACHE_MAX	(GPU_CACHE_MIN << (GPU_CLASSES - 1))

/* A datablock this backend holds, with its mapping. */
struct gpu_db {
	struct ptask_db *db;
	void *p;
	uint64_t bytes;
};

/* One direction's graph. */
struct gpu_graph {
	uint32_t graph;
	uint32_t ch_data, ch_tweaks, ch_key, ch_shape, ch_out;
	uint32_t t_shape;
	struct gpu_db key, shape;
	struct gpu_db data[GPU_CLASSES], tweaks[GPU_CLASSES];
};

/**
 * struct gpu_backend - the backend
 * @be: the interface
 * @lock: one request at a time; guards everything below
 * @keys: the kernel's key parameter (key material: wiped at destroy)
 * @ctx: the connection to ptaskd, or NULL (connect on the next request)
 * @g: [0] decrypt, [1] encrypt; valid while @ctx is
 * @failing: a failure was logged and no request has succeeded since
 */
struct gpu_backend {
	struct eg_backend be;
	pthread_mutex_t lock;
	struct xts_key_param keys;
	struct ptask_ctx *ctx;
	struct gpu_graph g[2];
	int failing;
};

static const char *const gpu_entry[2] = { "xts_decrypt", "xts_encrypt" };

/* The size class of @bytes, or -1 above GPU_CACHE_MAX. */
static int size_class(uint64_t bytes)
{
	int c = 0;

	while (c < GPU_CLASSES && (uint64_t)GPU_CACHE_MIN << c < bytes)
		c++;
	return c < GPU_CLASSES ? c : -1;
}

static int db_new(struct ptask_ctx *ctx, uint32_t tmpl, uint64_t bytes, struct gpu_db *d)
{
	int err = ptask_datablock_create(ctx, tmpl, tmpl ? 0 : bytes, 1, &d->db);

	if (err)
		return err;
	err = ptask_datablock_map(ctx, d->db, &d->p);
	if (err) {
		ptask_datablock_release(ctx, d->db);
		d->db = NULL;
		return err;
	}
	d->bytes = ptask_db_bytes(d->db);
	return 0;
}

/* Wipe and release @d (its bytes were keys, plaintext or tweaks). */
static void db_drop(struct ptask_ctx *ctx, struct gpu_db *d)
{
	if (!d->db)
		return;
	eg_wipe(d->p, d->bytes);
	ptask_datablock_release(ctx, d->db);
	memset(d, 0, sizeof(*d));
}

/* Close the connection and everything made on it (ptaskd may be gone). */
static void disconnect(struct gpu_backend *gb)
{
	if (!gb->ctx)
		return;
	for (int dir = 0; dir < 2; dir++) {
		struct gpu_graph *g = &gb->g[dir];

		for (int c = 0; c < GPU_CLASSES; c++) {
			db_drop(gb->ctx, &g->data[c]);
			db_drop(gb->ctx, &g->tweaks[c]);
		}
		db_drop(gb->ctx, &g->shape);
		db_drop(gb->ctx, &g->key);
		if (g->graph) {
			/* terminate first: drops whatever a failed request left queued */
			ptask_graph_terminate(gb->ctx, g->graph);
			ptask_graph_close(gb->ctx, g->graph);
		}
		memset(g, 0, sizeof(*g));
	}
	ptask_ctx_close(gb->ctx);
	gb->ctx = NULL;
}

/*
 * One direction's graph: templates, the ptask and its ports in the
 * kernel's parameter order, channels, geometry; then run it and push the
 * key into its sticky port.  @what names the step that failed.
 */
static int graph_build(struct gpu_backend *gb, int dir, const char **what)
{
	static const uint32_t one[3] = { 1, 1, 1 };
	static const uint32_t grid[3] = { GPU_GRID, 1, 1 }, block[3] = { GPU_THREADS, 1, 1 };
	struct ptask_ctx *ctx = gb->ctx;
	struct gpu_graph *g = &gb->g[dir];
	uint32_t t_key, pt, p_out, p_data, p_tweaks, p_key, p_shape;
	int err;

	*what = "ptask_graph_open";
	err = ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600, &g->graph);
	if (err)
		return err;
	*what = "ptask_template_open";
	err = ptask_template_open(ctx, g->graph, "xts_key", PTASK_TEMPLATE_ARRAY, PTASK_BIND_PARAM,
				  sizeof(struct xts_key_param), one, &t_key);
	err = err ? err : ptask_template_open(ctx, g->graph, "xts_shape", PTASK_TEMPLATE_ARRAY,
					      PTASK_BIND_PARAM, sizeof(struct xts_shape_param),
					      one, &g->t_shape);
	if (err)
		return err;
	*what = "ptask_gpu_ptask_open";
	err = ptask_gpu_ptask_open(ctx, g->graph, gpu_entry[dir], eg_xts_ptx, eg_xts_ptx_len,
				   gpu_entry[dir], 5, &pt);
	if (err)
		return err;
	/* the output first: the in/out data port names it as its peer.  It is
	 * no parameter of its own (it emits data's update), so its
	 * param_index is never looked at. */
	*what = "ptask_port_open";
	err = ptask_port_open(ctx, pt, "out", PTASK_PORT_OUTPUT, 0, 0, 0, 0, &p_out);
	err = err ? err : ptask_port_open(ctx, pt, "data", PTASK_PORT_INPUT, PTASK_PORT_INOUT, 0,
					  0, p_out, &p_data);
	err = err ? err : ptask_port_open(ctx, pt, "tweaks", PTASK_PORT_INPUT, 0, 0, 1, 0,
					  &p_tweaks);
	err = err ? err : ptask_port_open(ctx, pt, "key", PTASK_PORT_STICKY, 0, t_key, 2, 0,
					  &p_key);
	err = err ? err : ptask_port_open(ctx, pt, "shape", PTASK_PORT_INPUT, 0, g->t_shape, 3,
					  0, &p_shape);
	if (err)
		return err;
	/* before the first invocation: ptaskd caches a ptask's geometry then */
	*what = "ptask_set_geometry";
	err = ptask_set_geometry(ctx, pt, grid, block, 0);
	if (err)
		return err;
	*what = "ptask_channel_open";
	err = ptask_channel_open(ctx, g->graph, "data", 0, p_data, 2, 0, &g->ch_data);
	err = err ? err : ptask_channel_open(ctx, g->graph, "tweaks", 0, p_tweaks, 2, 0,
					     &g->ch_tweaks);
	err = err ? err : ptask_channel_open(ctx, g->graph, "key", 0, p_key, 1, t_key, &g->ch_key);
	err = err ? err : ptask_channel_open(ctx, g->graph, "shape", 0, p_shape, 2, g->t_shape,
					     &g->ch_shape);
	err = err ? err : ptask_channel_open(ctx, g->graph, "out", p_out, 0, 2, 0, &g->ch_out);
	if (err)
		return err;
	*what = "ptask_graph_run";
	err = ptask_graph_run(ctx, g->graph);
	if (err)
		return err;
	*what = "the key datablock";
	err = db_new(ctx, t_key, 0, &g->key);
	if (err)
		return err;
	memcpy(g->key.p, &gb->keys, sizeof(gb->keys));
	err = ptask_push(ctx, g->ch_key, g->key.db, -1, GPU_TIMEOUT_NS);
	if (err)
		return err;
	*what = "the shape datablock";
	return db_new(ctx, g->t_shape, 0, &g->shape);
}

/* Connect to ptaskd and build both graphs; on failure nothing is left. */
static int connect_ptaskd(struct gpu_backend *gb, const char **what)
{
	int err;

	*what = "ptask_ctx_open";
	err = ptask_ctx_open(PTASK_MODE_AUTO, NULL, &gb->ctx);
	if (err) {
		gb->ctx = NULL;
		return err;
	}
	for (int dir = 0; dir < 2 && !err; dir++)
		err = graph_build(gb, dir, what);
	if (err)
		disconnect(gb);
	return err;
}

/* The cached datablock of @bytes' class in @cache, made on first use. */
static int db_class(struct gpu_backend *gb, struct gpu_db *cache, uint64_t bytes,
		    struct gpu_db *tmp, struct gpu_db **out)
{
	int c = size_class(bytes), err;

	if (c < 0) {
		/* larger than any class: one of its own, released after */
		err = db_new(gb->ctx, 0, bytes, tmp);
		*out = tmp;
		return err;
	}
	if (!cache[c].db) {
		err = db_new(gb->ctx, 0, (uint64_t)GPU_CACHE_MIN << c, &cache[c]);
		if (err)
			return err;
	}
	*out = &cache[c];
	return 0;
}

/*
 * One request through ptaskd, connecting first if need be.  @r->data is
 * written only once the result is in.  @what names a step that failed.
 */
static int run_request(struct gpu_backend *gb, int enc, const struct eg_xts_req *r,
		       const char **what)
{
	struct xts_shape_param sh = {
		.nunits = r->nunits, .unit_len = (uint32_t)r->unit_len,
		.last_len = (uint32_t)r->last_len,
	};
	const uint64_t bytes = eg_xts_req_bytes(r), tw_bytes = r->nunits * EG_TWEAK_LEN;
	struct gpu_db tmp_data = { 0 }, tmp_tw = { 0 }, *data, *tw;
	struct ptask_db *res;
	struct gpu_graph *g;
	int err = 0;

	if (!gb->ctx)
		err = connect_ptaskd(gb, what);
	if (err)
		return err;
	g = &gb->g[enc];
	*what = "a datablock";
	err = db_class(gb, g->data, bytes, &tmp_data, &data);
	err = err ? err : db_class(gb, g->tweaks, tw_bytes, &tmp_tw, &tw);
	if (err)
		goto out;
	memcpy(data->p, r->data, bytes);
	memcpy(tw->p, r->tweaks, tw_bytes);
	memcpy(g->shape.p, &sh, sizeof(sh));
	*what = "ptask_push";
	err = ptask_push(gb->ctx, g->ch_shape, g->shape.db, -1, GPU_TIMEOUT_NS);
	err = err ? err : ptask_push(gb->ctx, g->ch_tweaks, tw->db, -1, GPU_TIMEOUT_NS);
	err = err ? err : ptask_push(gb->ctx, g->ch_data, data->db, -1, GPU_TIMEOUT_NS);
	if (err)
		goto out;
	*what = "ptask_pull";
	err = ptask_pull(gb->ctx, g->ch_out, GPU_TIMEOUT_NS, &res);
	if (err)
		goto out;
	/* in/out: what comes back is our own datablock, transformed; its
	 * pages are the ones we mapped */
	if (ptask_db_handle(res) == ptask_db_handle(data->db)) {
		memcpy(r->data, data->p, bytes);
	} else {
		*what = "the result (not the datablock pushed)";
		err = -EPROTO;
	}
	ptask_datablock_release(gb->ctx, res);
out:
	db_drop(gb->ctx, &tmp_data);
	db_drop(gb->ctx, &tmp_tw);
	return err;
}

static int gpu_crypt(struct eg_backend *be, int enc, const struct eg_xts_req *r)
{
	struct gpu_backend *gb = (struct gpu_backend *)be;
	const char *what = "";
	int ret = eg_xts_req_check(r);

	if (ret || !r->nunits)
		return ret;
	pthread_mutex_lock(&gb->lock);
	ret = run_request(gb, !!enc, r, &what);
	if (ret) {
		if (!gb->failing)
			fprintf(stderr, "encfs-gpu: gpu backend: %s: %s; requests fail with EIO until ptaskd answers again\n",
				what, strerror(-ret));
		gb->failing = 1;
		disconnect(gb);
		ret = -EIO;
	} else if (gb->failing) {
		fprintf(stderr, "encfs-gpu: gpu backend: ptaskd answers again\n");
		gb->failing = 0;
	}
	pthread_mutex_unlock(&gb->lock);
	return ret;
}

/* Drop the connection; the next request makes a new one (see fork above). */
static void gpu_detach(struct eg_backend *be)
{
	struct gpu_backend *gb = (struct gpu_backend *)be;

	pthread_mutex_lock(&gb->lock);
	disconnect(gb);
	pthread_mutex_unlock(&gb->lock);
}

static void gpu_destroy(struct eg_backend *be)
{
	struct gpu_backend *gb = (struct gpu_backend *)be;

	disconnect(gb);
	eg_wipe(&gb->keys, sizeof(gb->keys));
	pthread_mutex_destroy(&gb->lock);
	free(gb);
}

static const struct eg_backend_ops gpu_ops = {
	.name = "gpu",
	.crypt = gpu_crypt,
	.detach = gpu_detach,
	.destroy = gpu_destroy,
};

/*
 * The whole path once, at mount: three units (two of 4096 bytes, one of
 * 1037, so the kernel steals ciphertext) encrypted by ptaskd and by
 * OpenSSL must agree, and decrypt back.  Catches a ptaskd whose cpu or
 * sim backend lacks the xts host kernels, a parameter layout that does
 * not match, and a GPU that computes wrong.
 */
static int self_test(struct gpu_backend *gb, const uint8_t key[EG_XTS_KEY_LEN],
		     const char **what)
{
	enum { UNIT = 4096, LAST = 1037, BYTES = 2 * UNIT + LAST };
	uint8_t *orig = malloc(BYTES), *a = malloc(BYTES), *b = malloc(BYTES), tw[3 * 16];
	struct eg_xts_req ra = { .data = a, .tweaks = tw, .nunits = 3, .unit_len = UNIT,
				 .last_len = LAST };
	struct eg_xts_req rb = ra;
	struct eg_backend *cpu = NULL;
	int err = -ENOMEM;

	rb.data = b;
	if (!orig || !a || !b)
		goto out;
	for (size_t i = 0; i < BYTES; i++)
		orig[i] = (uint8_t)(i * 131 + 7);
	for (size_t i = 0; i < sizeof(tw); i++)
		tw[i] = (uint8_t)(i * 29 + 1);
	memcpy(a, orig, BYTES);
	memcpy(b, orig, BYTES);
	*what = "OpenSSL refused the key";
	err = eg_backend_cpu_new(key, &cpu);
	err = err ? err : eg_backend_crypt(cpu, 1, &rb);
	if (err)
		goto out;
	err = run_request(gb, 1, &ra, what);
	if (err)
		goto out;
	*what = "its result differs from OpenSSL's";
	err = -EIO;
	if (memcmp(a, b, BYTES))
		goto out;
	err = run_request(gb, 0, &ra, what);
	if (err)
		goto out;
	*what = "decrypting its own result gives other bytes";
	err = memcmp(a, orig, BYTES) ? -EIO : 0;
out:
	eg_backend_destroy(cpu);
	free(orig);
	free(a);
	free(b);
	return err;
}

/**
 * eg_backend_gpu_new() - the ptask backend
 * @key: K1 || K2
 * @out: the backend, not connected (its first request connects)
 * @why: set to the reason it is unavailable (a static buffer: this is
 *	called once, at mount, before any thread starts)
 *
 * Connects to ptaskd (PTASK_MODE and PTASK_SOCKET choose how, as for any
 * libptask program), builds both graphs, checks the kernel's result
 * against OpenSSL on one request each way, and disconnects again.
 *
 * Return: 0; -ENODEV when ptaskd cannot be reached or cannot run the
 * kernel correctly (then *@why says which); -ENOMEM.
 */
int eg_backend_gpu_new(const uint8_t key[EG_XTS_KEY_LEN], struct eg_backend **out,
		       const char **why)
{
	static char msg[256];
	const char *what = "", *sock = getenv("PTASK_SOCKET");
	struct gpu_backend *gb;
	int err;

	*out = NULL;
	*why = NULL;
	if (!sock || !*sock)
		sock = PTASK_SOCKET_DEFAULT;
	gb = calloc(1, sizeof(*gb));
	if (!gb)
		return -ENOMEM;
	gb->be.ops = &gpu_ops;
	pthread_mutex_init(&gb->lock, NULL);
	err = aes_ks_param(key, EG_XTS_KEY_LEN, &gb->keys);
	if (err)
		goto err_free;
	err = connect_ptaskd(gb, &what);
	if (err == -ENOENT || err == -ENODEV || err == -ECONNREFUSED) {
		snprintf(msg, sizeof(msg),
			 "no ptaskd to run it: neither a ptask.ko executor nor a daemon at %s (%s; start ptaskd or set PTASK_SOCKET)",
			 sock, strerror(-err));
		goto err_why;
	}
	if (err) {
		snprintf(msg, sizeof(msg), "ptaskd (%s) refused the graph: %s: %s", sock, what,
			 strerror(-err));
		goto err_why;
	}
	err = self_test(gb, key, &what);
	disconnect(gb);
	if (err == -ENOMEM)
		goto err_free;
	if (err) {
		snprintf(msg, sizeof(msg), "ptaskd (%s) cannot run the XTS kernel: %s%s%s", sock,
			 what, err == -EIO ? "" : ": ", err == -EIO ? "" : strerror(-err));
		goto err_why;
	}
	*out = &gb->be;
	return 0;

err_why:
	*why = msg;
	err = -ENODEV;
err_free:
	gpu_destroy(&gb->be);
	return err;
}
