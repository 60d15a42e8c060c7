/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * gemm.h - what the parts of the gemm example share.
 *
 * The example computes D = (A x B) x C for n x n row-major float matrices
 * (PTask, SOSP 2011, section 3.2 and Figure 6) these ways:
 *   ptask      a graph of two sgemm ptasks; A x B never returns to the host;
 *              one chain at a time;
 *   ptask_pipe the same graph with up to --depth chains in flight, as a
 *              streaming client drives it;
 *   modular    gemm(gemm(A, B), C) over the CUDA driver API, each call
 *              copying its inputs in and its result out;
 *   handcoded  the CUDA driver API with the intermediate kept on the GPU;
 *   handstream the same by an expert: --depth chains overlapped on as
 *              many streams (not the paper's baseline; on request only).
 * All run the same kernel (gemm_kernels.cu, embedded as PTX) with the
 * same launch geometry.
 */
#ifndef EXAMPLES_GEMM_H
#define EXAMPLES_GEMM_H

#include <stddef.h>
#include <stdint.h>

/* Tile edge of gemm_kernels.cu: block GEMM_TILE^2, grid ceil(n/GEMM_TILE)^2. */
#define GEMM_TILE	32
#define GEMM_ENTRY	"sgemm"
/* Most chains the pipelined ptask way keeps in flight (--depth). */
#define GEMM_MAX_DEPTH	16

/*
 * The PTX of gemm_kernels.cu, NUL-terminated, linked in by gemm_ptx.S;
 * gemm_ptx_len counts the NUL (what cuModuleLoadData and
 * ptask_gpu_ptask_open's @code_len expect), and gemm_ptx_end is just
 * past it (for the host twin's table, twin.c).
 */
extern const char gemm_ptx[], gemm_ptx_end[];
extern const unsigned long gemm_ptx_len;

/* --- gemm_ref.c: inputs, the CPU reference, comparison, clocks --------- */

/*
 * Fill an n x n matrix with uniform values in [0, 1) from @seed.  Positive
 * inputs mean no cancellation in the dot products, so a relative
 * per-element tolerance is meaningful for every element.
 */
void gemm_fill(float *m, int n, uint64_t seed);

/*
 * C = A x B on the CPU with @threads threads (cache-blocked; each element
 * is summed in ascending k, as the GPU kernel sums it).
 * Return: 0 or -errno (thread creation).
 */
int gemm_ref(const float *a, const float *b, float *c, int n, int threads);

/*
 * Compare @got with @want: an element matches when
 * |got - want| <= rtol * |want|.  Returns the number of elements that do
 * not (NaN never matches); *@max_rel gets the largest relative error.
 */
size_t gemm_compare(const float *got, const float *want, int n, double rtol,
		    double *max_rel);
/* The same against @want x @scale (a power of two: exact, so as strict). */
size_t gemm_compare_scaled(const float *got, const float *want, float scale,
			   int n, double rtol, double *max_rel);

/* CLOCK_MONOTONIC in ms. */
double gemm_now_ms(void);

/* Grid edge for @n: ceil(n / GEMM_TILE). */
static inline uint32_t gemm_grid(int n)
{
	return (uint32_t)((n + GEMM_TILE - 1) / GEMM_TILE);
}

/*
 * What the pipelined ptask way multiplies slot @slot's A by (gemm_ptask.c):
 * 2^slot, so each slot's D is exactly 2^slot times slot 0's.
 */
static inline float gemm_slot_scale(int slot)
{
	return (float)(1u << slot);
}

/* Bytes of one n x n float matrix. */
static inline size_t gemm_bytes(int n)
{
	return (size_t)n * (size_t)n * sizeof(float);
}

/* --- the ways ---------------------------------------------------------- */

/**
 * struct gemm_inputs - one size's problem
 * @n: matrix edge
 * @a: A, @b: B, @c: C (host, n x n each)
 */
struct gemm_inputs {
	int n;
	const float *a;
	const float *b;
	const float *c;
};

/*
 * Each way: open() prepares a size (graph or device buffers; the inputs
 * are copied where the way keeps them, untimed), chain() computes D once
 * (timed) and leaves it where result() finds it, close() frees it all.
 * Every function returns 0 or -errno and prints its own error detail.
 */
struct gemm_ptask;
struct ptask_ctx;
struct ptask_db;
/*
 * @depth: input slots (1..GEMM_MAX_DEPTH), so chains that may be in flight;
 * the channels hold at least that many.  @timeout_ns: for every push and
 * pull; PTASK_FOREVER (-1) to wait on.
 */
int gemm_ptask_open(struct ptask_ctx *ctx, const struct gemm_inputs *in,
		    int depth, int64_t timeout_ns, struct gemm_ptask **out);
/* One chain on slot 0: push, pull D, map it (one at a time). */
int gemm_ptask_chain(struct gemm_ptask *g);
/* D of the last chain (valid until the next chain or close). */
const float *gemm_ptask_result(struct gemm_ptask *g);
/*
 * The pipelined way's steps: push slot @slot's A, B, C (its previous
 * chain must have been pulled); pull the oldest D and map it (*@d is the
 * caller's until gemm_ptask_release; NULL after a failure).
 */
int gemm_ptask_push(struct gemm_ptask *g, int slot);
int gemm_ptask_pull(struct gemm_ptask *g, struct ptask_db **d,
		    const float **data);
void gemm_ptask_release(struct gemm_ptask *g, struct ptask_db *d);
int gemm_ptask_depth(const struct gemm_ptask *g);
void gemm_ptask_close(struct gemm_ptask *g);

struct pc_cuda_dev;
struct gemm_cuda;
/* @pageable: host buffers from malloc instead of cuMemAllocHost. */
int gemm_cuda_open(struct pc_cuda_dev *dev, const struct gemm_inputs *in,
		   int pageable, struct gemm_cuda **out);
int gemm_cuda_modular(struct gemm_cuda *g);
int gemm_cuda_handcoded(struct gemm_cuda *g);
const float *gemm_cuda_result(struct gemm_cuda *g);
void gemm_cuda_close(struct gemm_cuda *g);

struct gemm_hs;
/* @depth: slots (streams), 1..GEMM_MAX_DEPTH; host buffers page-locked. */
int gemm_hs_open(struct pc_cuda_dev *dev, const struct gemm_inputs *in,
		 int depth, struct gemm_hs **out);
/*
 * Enqueue chain @chain on slot @chain mod depth (its previous chain must
 * have been waited for) with D going to host buffer @chain mod 2 depth;
 * wait for it and find its D in *@data (valid until chain @chain + 2
 * depth is enqueued).
 */
int gemm_hs_enqueue(struct gemm_hs *g, int chain);
int gemm_hs_wait(struct gemm_hs *g, int chain, const float **data);
int gemm_hs_depth(const struct gemm_hs *g);
void gemm_hs_close(struct gemm_hs *g);

#endif /* EXAMPLES_GEMM_H */
