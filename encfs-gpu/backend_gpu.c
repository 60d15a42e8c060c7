// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * backend_gpu.c - the gpu backend: AES-256-XTS as a ptask.
 *
 * The kernel is gpu/aes_xts.cu, compiled to PTX and embedded in the binary
 * (gpu/aes_xts_ptx.S); libptask submits it to ptaskd, which owns the GPU
 * and schedules it among its other users.  ptaskd's cpu and sim backends
 * run its host twin (encfs-gpu/gpu/twin.c), so the whole path is
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
 * truth again), one per size class (four per power of two, so at most a
 * quarter of what is copied is slack) from 4 KiB to GPU_CACHE_MAX; a
 * request costs four round trips to ptaskd (three pushes and the pull)
 * and the release of the pulled reference, and no allocation.  The shape
 * says what the kernel touches of a size-class datablock.
 *
 * Concurrency: a graph pair carries one request at a time, because its
 * input channels pair datablocks by arrival order (two requests pushing at
 * once would swap their tweaks).  So the backend has up to GPU_LANES_MAX
 * lanes (EG_GPU_LANES in the environment, default GPU_LANES), each
 * a pair of graphs with its own datablocks and lock, built on first use: a
 * request takes the first idle lane (lane 0 when requests come one by
 * one, so a sequential workload builds one), or waits for one.  Requests
 * in different lanes overlap their copies and round trips with each
 * other's kernels.
 *
 * Tunnel: concurrent requests are batched instead, through a ptask tunnel
 * (uapi/ptask.h, "Record-stream tunnels"; HiWayLib's batched copy): a
 * third graph per direction,
 *
 *   records =tunnel=> [ xts_batch_encrypt | xts_batch_decrypt ] =tunnel=>
 *   key (sticky, param 1) --/         (in/out, param 0; GPU_GRID x 256)
 *
 * where a request's units are records (struct xts_rec_head: its tweak
 * and length, then up to 4 KiB of data; xts_params.h): the request pushes
 * one datablock of its records on the input end and pulls, with that
 * datablock as ticket, exactly its records back from the output end,
 * whatever the other threads pushed.  ptaskd's core gathers the pushes of
 * every thread until the tunnel's threshold (bytes) or timeout passes,
 * both left at ptaskd's defaults, calibrated from the device's copy curve
 * (EG_TUNNEL_BYTES and EG_TUNNEL_US override them), and one kernel launch
 * does them all.  Which path a request takes (EG_GPU_TUNNEL): "auto",
 * the default, sends a request that is alone in the backend down a lane
 * (no batch to wait for: one invocation now) and requests that overlap
 * others through the tunnel, unless they are TUN_MAX_BYTES or larger;
 * "always" and "never" force one.  Requests whose units are over 4 KiB,
 * or with more units than a batch holds (TUN_RECORDS), take a lane.  A request's datablock comes from a pool
 * (TUN_POOL_RECORDS records each) and goes back once its slice is pulled,
 * so steady state allocates only the slices ptaskd returns.
 *
 * Failure: any error on the ptask path (ptaskd killed: -ENOTCONN at once;
 * the graph failed: -EIO; no answer within GPU_TIMEOUT_NS) fails the
 * request with -EIO, leaving the caller's data unchanged (it is only
 * written on success), and drops the connection with every lane once the
 * requests in flight on it are done; the next request connects again, so
 * a restarted ptaskd is picked up.  Nothing is ever returned that the
 * kernel did not produce.
 *
 * Locking: gb->conn (a rwlock) guards gb->ctx: a request holds it for
 * reading throughout, connecting and disconnecting hold it for writing,
 * so no lane is in use then.  A lane's lock guards the lane, and is taken
 * inside gb->conn.
 *
 * Fork: FUSE daemonizes after the backend is made, and a libptask context
 * does not survive fork (ptaskd ties connections to the pid that opened
 * them).  So eg_backend_gpu_new() checks the whole path once and
 * disconnects, and main.c calls eg_backend_detach() before fuse_main();
 * the first request connects from whichever process makes it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
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
#define GPU_LANES	4		/* requests in flight at most, by default */
#define GPU_LANES_MAX	16
#define GPU_CACHE_MIN	4096u		/* the smallest size class */
#define GPU_CLASSES	41		/* 4 KiB .. 4 MiB, four per power of two */
#define GPU_CACHE_MAX	(GPU_CACHE_MIN << ((GPU_CLASSES - 1) / 4))
#define TUN_RECORDS	1024		/* records a batch holds at most */
/*
 * Requests of this many bytes or more take a lane even beside others:
 * their copy is already past the copy curve's knee (64 KiB on the
 * machines measured), so a batch saves them nothing, and gathering them
 * into it and splitting them out costs two more copies of every byte
 * (1 MiB reads through the tunnel: ptaskd's CPU doubled, 144 against
 * 212 MB/s on the development VM, 2026-11-27).
 */
#define TUN_MAX_BYTES	(64U << 10)
#define TUN_PUSHES	256		/* requests a batch holds at most */
#define TUN_POOL_RECORDS 16		/* records of a pooled datablock */
#define TUN_POOL_MAX	64		/* pooled datablocks kept */

enum tun_mode { TUN_AUTO, TUN_ALWAYS, TUN_NEVER };

/* A datablock this backend holds, with its mapping. */
struct gpu_db {
	struct ptask_db *db;
	void *p;
	uint64_t bytes;
};

/* One direction's graph in one lane. */
struct gpu_graph {
	uint32_t graph;
	uint32_t ch_data, ch_tweaks, ch_key, ch_shape, ch_out;
	struct gpu_db key, shape;
	struct gpu_db data[GPU_CLASSES], tweaks[GPU_CLASSES];
};

/**
 * struct gpu_lane - a pair of graphs carrying one request at a time
 * @lock: held for a whole request in this lane
 * @built: @g exist on the current connection (cleared by disconnect())
 * @g: [0] decrypt, [1] encrypt
 */
struct gpu_lane {
	pthread_mutex_t lock;
	bool built;
	struct gpu_graph g[2];
};

/* One direction's tunnel graph. */
struct gpu_tunnel {
	uint32_t graph, ch_in, ch_out, ch_key;
	struct gpu_db key;
};

/**
 * struct gpu_tun - the tunnels, on the current connection
 * @lock: guards @built, @t and @pool (inside gb->conn, read)
 * @built: @t exist on the current connection
 * @t: [0] decrypt, [1] encrypt
 * @pool: datablocks of TUN_POOL_RECORDS records, not in a request
 * @npool: entries in @pool
 */
struct gpu_tun {
	pthread_mutex_t lock;
	bool built;
	struct gpu_tunnel t[2];
	struct gpu_db pool[TUN_POOL_MAX];
	int npool;
};

/**
 * struct gpu_backend - the backend
 * @be: the interface
 * @conn: read: a request using @ctx; write: connecting or disconnecting
 * @keys: the kernel's key parameter (key material: wiped at destroy);
 *	read-only after eg_backend_gpu_new()
 * @ctx: the connection to ptaskd, or NULL (connect on the next request);
 *	under @conn
 * @gen: connections made so far; under @conn
 * @nlanes: lanes in use, 1 .. GPU_LANES_MAX; read-only after new
 * @lane: the lanes; lane i under its own lock, inside @conn
 * @next: the lane a request waits for when all are busy (atomic)
 * @failing: a failure was logged and no request has succeeded since
 *	(atomic)
 * @tun: the tunnels
 * @tun_mode: EG_GPU_TUNNEL; read-only after new
 * @tun_bytes: EG_TUNNEL_BYTES (0: ptaskd's default); read-only after new
 * @tun_timeout_ns: EG_TUNNEL_US in ns (0: ptaskd's); read-only after new
 * @busy: requests in the backend now (atomic): "auto" tunnels when > 1
 */
struct gpu_backend {
	struct eg_backend be;
	pthread_rwlock_t conn;
	struct xts_key_param keys;
	struct ptask_ctx *ctx;
	unsigned long gen;
	int nlanes;
	struct gpu_lane lane[GPU_LANES_MAX];
	unsigned int next;
	int failing;
	struct gpu_tun tun;
	enum tun_mode tun_mode;
	uint64_t tun_bytes;
	uint64_t tun_timeout_ns;
	int busy;
};

static const char *const gpu_entry[2] = { "xts_decrypt", "xts_encrypt" };
static const char *const tun_entry[2] = { "xts_batch_decrypt", "xts_batch_encrypt" };

/* Class @c's size: 4 KiB << (c / 4), plus a quarter of that per c % 4. */
static uint64_t class_bytes(int c)
{
	uint64_t base = (uint64_t)GPU_CACHE_MIN << (c / 4);

	return base + base / 4 * (uint64_t)(c % 4);
}

/* The smallest class holding @bytes, or -1 above GPU_CACHE_MAX. */
static int size_class(uint64_t bytes)
{
	for (int c = 0; c < GPU_CLASSES; c++)
		if (class_bytes(c) >= bytes)
			return c;
	return -1;
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

/*
 * Drop what @lane made on the connection, built or half built (ptaskd may
 * be gone).  The lane locked, or @conn held for writing.
 */
static void lane_drop(struct gpu_backend *gb, struct gpu_lane *lane)
{
	for (int dir = 0; dir < 2; dir++) {
		struct gpu_graph *g = &lane->g[dir];

		for (int c = 0; c < GPU_CLASSES; c++) {
			db_drop(gb->ctx, &g->data[c]);
			db_drop(gb->ctx, &g->tweaks[c]);
		}
		db_drop(gb->ctx, &g->shape);
		db_drop(gb->ctx, &g->key);
		if (g->graph) {
			/* terminate first: drops what a failed request left queued */
			ptask_graph_terminate(gb->ctx, g->graph);
			ptask_graph_close(gb->ctx, g->graph);
		}
		memset(g, 0, sizeof(*g));
	}
	lane->built = false;
}

/*
 * Drop the tunnels and the pool (ptaskd may be gone).  gb->tun.lock held,
 * or @conn held for writing.
 */
static void tun_drop(struct gpu_backend *gb)
{
	for (int dir = 0; dir < 2; dir++) {
		struct gpu_tunnel *t = &gb->tun.t[dir];

		db_drop(gb->ctx, &t->key);
		if (t->graph) {
			ptask_graph_terminate(gb->ctx, t->graph);
			ptask_graph_close(gb->ctx, t->graph);
		}
		memset(t, 0, sizeof(*t));
	}
	while (gb->tun.npool)
		db_drop(gb->ctx, &gb->tun.pool[--gb->tun.npool]);
	gb->tun.built = false;
}

/*
 * Close the connection and everything made on it (ptaskd may be gone).
 * @conn held for writing, or no other thread about (new, destroy).
 */
static void disconnect(struct gpu_backend *gb)
{
	if (!gb->ctx)
		return;
	for (int l = 0; l < gb->nlanes; l++)
		lane_drop(gb, &gb->lane[l]);
	tun_drop(gb);
	ptask_ctx_close(gb->ctx);
	gb->ctx = NULL;
}
/*
 * One direction's graph of a lane: templates, the ptask and its ports in
 * the kernel's parameter order, channels, geometry; then run it and push
 * the key into its sticky port.  @what names the step that failed; what
 * was made is left in @g for disconnect() to drop.
 */
static int graph_build(struct gpu_backend *gb, struct gpu_graph *g, int dir, const char **what)
{
	static const uint32_t one[3] = { 1, 1, 1 };
	static const uint32_t grid[3] = { GPU_GRID, 1, 1 }, block[3] = { GPU_THREADS, 1, 1 };
	struct ptask_ctx *ctx = gb->ctx;
	uint32_t t_key, t_shape, pt, p_out, p_data, p_tweaks, p_key, p_shape;
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
					      one, &t_shape);
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
	err = err ? err : ptask_port_open(ctx, pt, "shape", PTASK_PORT_INPUT, 0, t_shape, 3,
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
	err = err ? err : ptask_channel_open(ctx, g->graph, "shape", 0, p_shape, 2, t_shape,
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
	return db_new(ctx, t_shape, 0, &g->shape);
}


/* Connect to ptaskd (@conn held for writing); no lane is built yet. */
static int connect_ptaskd(struct gpu_backend *gb, const char **what)
{
	int err;

	*what = "ptask_ctx_open";
	err = ptask_ctx_open(PTASK_MODE_AUTO, NULL, &gb->ctx);
	if (err) {
		gb->ctx = NULL;
		return err;
	}
	gb->gen++;
	return 0;
}

/* Hold @conn for reading, with a connection (made first if need be). */
static int conn_get(struct gpu_backend *gb, const char **what)
{
	int err = 0;

	pthread_rwlock_rdlock(&gb->conn);
	while (!gb->ctx) {
		pthread_rwlock_unlock(&gb->conn);
		pthread_rwlock_wrlock(&gb->conn);
		if (!gb->ctx)
			err = connect_ptaskd(gb, what);
		pthread_rwlock_unlock(&gb->conn);
		if (err)
			return err;
		pthread_rwlock_rdlock(&gb->conn);
	}
	return 0;
}

/*
 * An idle lane, locked: the first one free, so that requests coming one
 * at a time all use lane 0; when every lane is busy, wait for one.
 */
static struct gpu_lane *lane_get(struct gpu_backend *gb)
{
	struct gpu_lane *lane;

	for (int l = 0; l < gb->nlanes; l++)
		if (!pthread_mutex_trylock(&gb->lane[l].lock))
			return &gb->lane[l];
	lane = &gb->lane[__atomic_fetch_add(&gb->next, 1, __ATOMIC_RELAXED) %
			 (unsigned int)gb->nlanes];
	pthread_mutex_lock(&lane->lock);
	return lane;
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
		err = db_new(gb->ctx, 0, class_bytes(c), &cache[c]);
		if (err)
			return err;
	}
	*out = &cache[c];
	return 0;
}

/*
 * One request in @lane (locked, inside @conn held for reading), building
 * the lane's graphs first if need be.  @r->data is written only once the
 * result is in.  @what names a step that failed.
 */
static int lane_request(struct gpu_backend *gb, struct gpu_lane *lane, int enc,
			const struct eg_xts_req *r, const char **what)
{
	struct xts_shape_param sh = {
		.nunits = r->nunits, .unit_len = (uint32_t)r->unit_len,
		.last_len = (uint32_t)r->last_len,
	};
	const uint64_t bytes = eg_xts_req_bytes(r), tw_bytes = r->nunits * EG_TWEAK_LEN;
	struct gpu_db tmp_data = { 0 }, tmp_tw = { 0 }, *data, *tw;
	struct gpu_graph *g = &lane->g[enc];
	struct ptask_db *res;
	int err = 0;

	for (int dir = 0; dir < 2 && !lane->built && !err; dir++)
		err = graph_build(gb, &lane->g[dir], dir, what);
	if (err)
		return err;
	lane->built = true;
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

/*
 * One direction's tunnel graph: the batch kernel between the two ends of
 * a tunnel, the key in its sticky port; running.  What was made is left
 * in @t for tun_drop().
 */
static int tunnel_build(struct gpu_backend *gb, struct gpu_tunnel *t, int dir,
			const char **what)
{
	static const uint32_t one[3] = { 1, 1, 1 }, recs[3] = { TUN_RECORDS, 1, 1 };
	static const uint32_t grid[3] = { GPU_GRID, 1, 1 }, block[3] = { GPU_THREADS, 1, 1 };
	struct ptask_ctx *ctx = gb->ctx;
	uint32_t t_key, t_rec, pt, p_out, p_data, p_key;
	int err;

	*what = "ptask_graph_open (tunnel)";
	err = ptask_graph_open(ctx, "", PTASK_GRAPH_CREATE, 0600, &t->graph);
	if (err)
		return err;
	*what = "ptask_template_open (tunnel)";
	err = ptask_template_open(ctx, t->graph, "xts_key", PTASK_TEMPLATE_ARRAY, PTASK_BIND_PARAM,
				  sizeof(struct xts_key_param), one, &t_key);
	err = err ? err : ptask_template_open(ctx, t->graph, "xts_rec", PTASK_TEMPLATE_RECORDS,
					      PTASK_BIND_GLOBAL, XTS_REC_BYTES, recs, &t_rec);
	if (err)
		return err;
	*what = "ptask_gpu_ptask_open (tunnel)";
	err = ptask_gpu_ptask_open(ctx, t->graph, tun_entry[dir], eg_xts_ptx, eg_xts_ptx_len,
				   tun_entry[dir], 3, &pt);
	if (err)
		return err;
	*what = "ptask_port_open (tunnel)";
	err = ptask_port_open(ctx, pt, "out", PTASK_PORT_OUTPUT, 0, 0, 0, 0, &p_out);
	err = err ? err : ptask_port_open(ctx, pt, "batch", PTASK_PORT_INPUT, PTASK_PORT_INOUT,
					  t_rec, 0, p_out, &p_data);
	err = err ? err : ptask_port_open(ctx, pt, "key", PTASK_PORT_STICKY, 0, t_key, 1, 0,
					  &p_key);
	if (err)
		return err;
	*what = "ptask_set_geometry (tunnel)";
	err = ptask_set_geometry(ctx, pt, grid, block, 0);
	if (err)
		return err;
	*what = "ptask_tunnel_open";
	err = ptask_tunnel_open(ctx, t->graph, "records", 0, p_data, TUN_PUSHES, 0,
				gb->tun_bytes, 0, gb->tun_timeout_ns, &t->ch_in);
	err = err ? err : ptask_tunnel_open(ctx, t->graph, "out", p_out, 0, 4, t_rec, 0, 0, 0,
					    &t->ch_out);
	err = err ? err : ptask_channel_open(ctx, t->graph, "key", 0, p_key, 1, t_key,
					     &t->ch_key);
	if (err)
		return err;
	*what = "ptask_graph_run (tunnel)";
	err = ptask_graph_run(ctx, t->graph);
	if (err)
		return err;
	*what = "the key datablock (tunnel)";
	err = db_new(ctx, t_key, 0, &t->key);
	if (err)
		return err;
	memcpy(t->key.p, &gb->keys, sizeof(gb->keys));
	return ptask_push(ctx, t->ch_key, t->key.db, -1, GPU_TIMEOUT_NS);
}

/*
 * The tunnels built, and a datablock of at least @records records (from
 * the pool when it fits one); inside @conn held for reading.
 */
static int tun_get(struct gpu_backend *gb, uint64_t records, struct gpu_db *d,
		   const char **what)
{
	int err = 0;

	pthread_mutex_lock(&gb->tun.lock);
	for (int dir = 0; dir < 2 && !gb->tun.built && !err; dir++)
		err = tunnel_build(gb, &gb->tun.t[dir], dir, what);
	if (err) {
		tun_drop(gb);
	} else {
		gb->tun.built = true;
		if (records <= TUN_POOL_RECORDS && gb->tun.npool) {
			*d = gb->tun.pool[--gb->tun.npool];
			memset(&gb->tun.pool[gb->tun.npool], 0, sizeof(*d));
		}
	}
	pthread_mutex_unlock(&gb->tun.lock);
	if (err || d->db)
		return err;
	*what = "a datablock (tunnel)";
	return db_new(gb->ctx, 0, (records <= TUN_POOL_RECORDS ? TUN_POOL_RECORDS : records) *
			      (uint64_t)XTS_REC_BYTES, d);
}

/* @d back to the pool, or released. */
static void tun_put(struct gpu_backend *gb, struct gpu_db *d)
{
	pthread_mutex_lock(&gb->tun.lock);
	if (d->bytes == (uint64_t)TUN_POOL_RECORDS * XTS_REC_BYTES &&
	    gb->tun.npool < TUN_POOL_MAX && gb->tun.built) {
		gb->tun.pool[gb->tun.npool++] = *d;
		memset(d, 0, sizeof(*d));
	}
	pthread_mutex_unlock(&gb->tun.lock);
	db_drop(gb->ctx, d);
}

/*
 * One request through the tunnel (inside @conn held for reading): its
 * units as records, pushed; its records pulled back by ticket.  @r->data
 * is written only once the result is in.
 */
static int tun_request(struct gpu_backend *gb, int enc, const struct eg_xts_req *r,
		       const char **what)
{
	struct gpu_db d = { 0 };
	struct ptask_db *res;
	uint8_t *out;
	int err;

	err = tun_get(gb, r->nunits, &d, what);
	if (err)
		return err;
	for (size_t u = 0; u < r->nunits; u++) {
		uint8_t *rec = (uint8_t *)d.p + u * XTS_REC_BYTES;
		size_t len = u + 1 == r->nunits ? r->last_len : r->unit_len;
		struct xts_rec_head h = { .len = (uint32_t)len };

		memcpy(h.tweak, r->tweaks + EG_TWEAK_LEN * u, EG_TWEAK_LEN);
		memcpy(rec, &h, sizeof(h));
		memcpy(rec + XTS_REC_HEAD_BYTES, r->data + u * r->unit_len, len);
	}
	*what = "ptask_push (tunnel)";
	err = ptask_push(gb->ctx, gb->tun.t[enc].ch_in, d.db, (int64_t)r->nunits,
			 GPU_TIMEOUT_NS);
	if (err)
		goto out;
	*what = "ptask_pull_slice";
	err = ptask_pull_slice(gb->ctx, gb->tun.t[enc].ch_out, d.db, GPU_TIMEOUT_NS, &res);
	if (err)
		goto out;
	*what = "the slice (not the request's records)";
	err = ptask_db_records(res) == r->nunits &&
	      ptask_db_bytes(res) == r->nunits * (uint64_t)XTS_REC_BYTES ? 0 : -EPROTO;
	if (!err) {
		*what = "ptask_datablock_map (slice)";
		err = ptask_datablock_map(gb->ctx, res, (void **)&out);
	}
	for (size_t u = 0; !err && u < r->nunits; u++) {
		size_t len = u + 1 == r->nunits ? r->last_len : r->unit_len;

		memcpy(r->data + u * r->unit_len, out + u * XTS_REC_BYTES + XTS_REC_HEAD_BYTES,
		       len);
	}
	if (!err)
		eg_wipe(out, ptask_db_bytes(res));
	ptask_datablock_release(gb->ctx, res);
out:
	/* pushed or not, its slice is pulled or its batch failed: reusable */
	if (err)
		db_drop(gb->ctx, &d);
	else
		tun_put(gb, &d);
	return err;
}

/* Does @r go through the tunnel?  @others: requests in the backend but it. */
static bool use_tunnel(const struct gpu_backend *gb, const struct eg_xts_req *r, int others)
{
	if (gb->tun_mode == TUN_NEVER || r->unit_len > XTS_REC_DATA ||
	    r->last_len > XTS_REC_DATA || r->nunits > TUN_RECORDS)
		return false;
	if (gb->tun_mode == TUN_ALWAYS)
		return true;
	return others > 0 && r->nunits &&
	       (uint64_t)(r->nunits - 1) * r->unit_len + r->last_len <
	       TUN_MAX_BYTES;
}

/*
 * One request, connecting first if need be; no lock held.  @via: -1 as
 * use_tunnel() says, 0 a lane, 1 the tunnel (the self test's).
 */
static int run_request(struct gpu_backend *gb, int enc, const struct eg_xts_req *r, int via,
		       const char **what)
{
	struct gpu_lane *lane;
	unsigned long gen;
	int others, err = conn_get(gb, what);

	if (err)
		return err;
	others = __atomic_fetch_add(&gb->busy, 1, __ATOMIC_RELAXED);
	if (via < 0 ? use_tunnel(gb, r, others) : via) {
		err = tun_request(gb, enc, r, what);
	} else {
		lane = lane_get(gb);
		err = lane_request(gb, lane, enc, r, what);
		/* a failed lane is dropped at once, so a request that takes it
		 * before the connection is dropped builds it anew */
		if (err)
			lane_drop(gb, lane);
		pthread_mutex_unlock(&lane->lock);
	}
	__atomic_fetch_sub(&gb->busy, 1, __ATOMIC_RELAXED);
	gen = gb->gen;
	pthread_rwlock_unlock(&gb->conn);
	if (err) {
		/* once the other requests on this connection are done (the
		 * lanes are idle then), unless one of them dropped it already */
		pthread_rwlock_wrlock(&gb->conn);
		if (gb->gen == gen)
			disconnect(gb);
		pthread_rwlock_unlock(&gb->conn);
	}
	return err;
}

static int gpu_crypt(struct eg_backend *be, int enc, const struct eg_xts_req *r)
{
	struct gpu_backend *gb = (struct gpu_backend *)be;
	const char *what = "";
	int ret = eg_xts_req_check(r);

	if (ret || !r->nunits)
		return ret;
	ret = run_request(gb, !!enc, r, -1, &what);
	if (ret) {
		if (!__atomic_exchange_n(&gb->failing, 1, __ATOMIC_RELAXED))
			fprintf(stderr, "encfs-gpu: gpu backend: %s: %s; requests fail with EIO until ptaskd answers again\n",
				what, strerror(-ret));
		return -EIO;
	}
	if (__atomic_exchange_n(&gb->failing, 0, __ATOMIC_RELAXED))
		fprintf(stderr, "encfs-gpu: gpu backend: ptaskd answers again\n");
	return 0;
}

/* Drop the connection; the next request makes a new one (see fork above). */
static void gpu_detach(struct eg_backend *be)
{
	struct gpu_backend *gb = (struct gpu_backend *)be;

	pthread_rwlock_wrlock(&gb->conn);
	disconnect(gb);
	pthread_rwlock_unlock(&gb->conn);
}

static void gpu_destroy(struct eg_backend *be)
{
	struct gpu_backend *gb = (struct gpu_backend *)be;

	disconnect(gb);
	eg_wipe(&gb->keys, sizeof(gb->keys));
	for (int l = 0; l < GPU_LANES_MAX; l++)
		pthread_mutex_destroy(&gb->lane[l].lock);
	pthread_mutex_destroy(&gb->tun.lock);
	pthread_rwlock_destroy(&gb->conn);
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
 * not match, and a GPU that computes wrong (-EBADMSG).
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
	/* a lane, then (unless EG_GPU_TUNNEL=never) the tunnel */
	for (int via = 0; via <= (gb->tun_mode != TUN_NEVER); via++) {
		memcpy(a, orig, BYTES);
		err = run_request(gb, 1, &ra, via, what);
		if (err)
			goto out;
		*what = via ? "its result through the tunnel differs from OpenSSL's" :
			      "its result differs from OpenSSL's";
		err = -EBADMSG;
		if (memcmp(a, b, BYTES))
			goto out;
		err = run_request(gb, 0, &ra, via, what);
		if (err)
			goto out;
		*what = "decrypting its own result gives other bytes";
		err = memcmp(a, orig, BYTES) ? -EBADMSG : 0;
		if (err)
			goto out;
	}
out:
	eg_backend_destroy(cpu);
	free(orig);
	free(a);
	free(b);
	return err;
}

/* EG_GPU_LANES (1 .. GPU_LANES_MAX), else GPU_LANES: a benchmark's knob. */
static int lanes_from_env(void)
{
	const char *env = getenv("EG_GPU_LANES");
	char *end;
	long n;

	if (!env || !*env)
		return GPU_LANES;
	n = strtol(env, &end, 10);
	if (*end || n < 1 || n > GPU_LANES_MAX) {
		fprintf(stderr, "encfs-gpu: EG_GPU_LANES=%s is not 1..%d; using %d\n", env,
			GPU_LANES_MAX, GPU_LANES);
		return GPU_LANES;
	}
	return (int)n;
}

/* EG_GPU_TUNNEL: auto (default), always, never. */
static enum tun_mode tun_mode_from_env(void)
{
	const char *env = getenv("EG_GPU_TUNNEL");

	if (!env || !*env || !strcmp(env, "auto"))
		return TUN_AUTO;
	if (!strcmp(env, "always"))
		return TUN_ALWAYS;
	if (!strcmp(env, "never"))
		return TUN_NEVER;
	fprintf(stderr, "encfs-gpu: EG_GPU_TUNNEL=%s is not auto, always or never; using auto\n",
		env);
	return TUN_AUTO;
}

/* A number from @name in 0 .. @max, times @scale; 0 (ptaskd's default) if unset or bad. */
static uint64_t u64_from_env(const char *name, uint64_t max, uint64_t scale)
{
	const char *env = getenv(name);
	unsigned long long v;
	char *end;

	if (!env || !*env)
		return 0;
	errno = 0;
	v = strtoull(env, &end, 10);
	if (*end || errno || v > max / scale) {
		fprintf(stderr, "encfs-gpu: %s=%s is not 0..%llu; using ptaskd's default\n", name,
			env, (unsigned long long)(max / scale));
		return 0;
	}
	return v * scale;
}

/**
 * eg_backend_gpu_new() - the ptask backend
 * @key: K1 || K2
 * @out: the backend, not connected (its first request connects)
 * @why: set to the reason it is unavailable (a static buffer: this is
 *	called once, at mount, before any thread starts)
 *
 * Connects to ptaskd (PTASK_MODE and PTASK_SOCKET choose how, as for any
 * libptask program), builds a lane's graphs, checks the kernel's result
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
	pthread_rwlockattr_t attr;
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
	/* a failed request waits for the lock for writing to disconnect:
	 * new requests must not starve it */
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&gb->conn, &attr);
	pthread_rwlockattr_destroy(&attr);
	for (int l = 0; l < GPU_LANES_MAX; l++)
		pthread_mutex_init(&gb->lane[l].lock, NULL);
	pthread_mutex_init(&gb->tun.lock, NULL);
	gb->nlanes = lanes_from_env();
	gb->tun_mode = tun_mode_from_env();
	gb->tun_bytes = u64_from_env("EG_TUNNEL_BYTES", PTASK_DATABLOCK_MAX_BYTES, 1);
	gb->tun_timeout_ns = u64_from_env("EG_TUNNEL_US", PTASK_TUNNEL_MAX_TIMEOUT_NS, 1000);
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
		snprintf(msg, sizeof(msg), "cannot connect to ptaskd at %s: %s", sock,
			 strerror(-err));
		goto err_why;
	}
	err = self_test(gb, key, &what);
	disconnect(gb);
	if (err == -ENOMEM)
		goto err_free;
	if (err) {
		snprintf(msg, sizeof(msg), "ptaskd (%s) cannot run the XTS kernel: %s%s%s", sock,
			 what, err == -EBADMSG ? "" : ": ", err == -EBADMSG ? "" : strerror(-err));
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
