/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * fastpath.h - the fast-path benchmark (issue 12): what one program shares
 * between its parts.
 *
 * DOC: Overview
 *
 * bench/fastpath measures, side by side in one run, what a caller of
 * libptask pays for small GPU invocations and what the same work costs
 * done by hand:
 *
 *   fastpath.c         options, the order of the parts, the output
 *   fastpath_ptask.c   the ptask side, written only against libptask.h
 *                      (as a new user would write it)
 *   fastpath_cuda.c    the raw CUDA driver API baselines (common/cuda_dl.h)
 *   fastpath_sock.c    the no-GPU baseline: a UNIX-socket ping-pong
 *                      between two processes, the floor of any IPC round
 *   fastpath_proc.c    processes: baselines run in forked children (the
 *                      parent never initialises CUDA, so it can fork
 *                      more), gangs of N processes started together, CPU
 *                      time of ptaskd and of the children
 *   fastpath_stats.c   medians, p99, the named results a child hands back
 *
 * Every ptask result is checked against the CPU's arithmetic (in[0] + k
 * for a chain of k ptasks) in the round that produced it: a wrong value
 * aborts the run, so no timing of a wrong answer ever counts.
 *
 * Locking: the program is single-threaded except P1b's pusher/puller pair
 * (fastpath_ptask.c says how those two share their slots).
 */
#ifndef PTASK_BENCH_FASTPATH_H
#define PTASK_BENCH_FASTPATH_H

#include <stdint.h>
#include <sys/types.h>

#define FP_MAX_LIST	16	/* entries of --procs and --chain */
#define FP_MAX_PROCS	64	/* processes of one P1c gang */
#define FP_MAX_UIDS	8	/* uids a P1c gang spreads over (--uids) */
#define FP_MAX_SERIES	128	/* named results of one child */
#define FP_INFLIGHT_MAX	4096
#define FP_PULL_TIMEOUT_NS	(10LL * 1000000000LL)

/* The parts, as bits of struct fp_opts.parts. */
enum fp_part {
	FP_P1 = 1 << 0,		/* one small invocation */
	FP_P1B = 1 << 1,	/* many invocations in flight */
	FP_P1C = 1 << 2,	/* N client processes */
	FP_P11 = 1 << 3,	/* chains of k ptasks */
	FP_IDLE = 1 << 4,	/* CPU of an idle ptaskd and client */
};

/* P1b's ptask variants: struct fp_opts.p1b. */
enum fp_p1b_variant {
	FP_P1B_BATCH = 1 << 0,		/* ptask_push all, then pull all */
	FP_P1B_ASYNC = 1 << 1,		/* ptask_push_async all, then pull all */
	FP_P1B_THREADS = 1 << 2,	/* a pusher and a puller thread */
};

/* Which side(s) a run measures: struct fp_opts.sides. */
enum fp_side {
	FP_SIDE_PTASK = 1 << 0,
	FP_SIDE_RAW = 1 << 1,
};

/* The baseline's kind: struct fp_opts.baseline. */
enum fp_baseline {
	FP_BASE_CUDA,	/* raw driver API on the GPU */
	FP_BASE_SOCKET,	/* UNIX-socket ping-pong (no GPU) */
	FP_BASE_NONE,
};

/**
 * struct fp_opts - what the command line asked for
 * @parts: enum fp_part bits
 * @sides: enum fp_side bits
 * @p1b: enum fp_p1b_variant bits
 * @baseline: enum fp_baseline
 * @rounds: timed rounds of P1 and P11 (each a median/p99 sample)
 * @warmup: untimed rounds before them
 * @batches: timed batches of P1b (each @inflight invocations)
 * @inflight: invocations in flight in P1b
 * @streams: streams of the raw copy pipeline of P1b
 * @seconds: length of each P1c measurement
 * @idle_seconds: length of the idle check
 * @procs: P1c's process counts
 * @nprocs: entries in @procs
 * @chain: P11's chain lengths
 * @nchain: entries in @chain
 * @big_bytes: P11's large datablock size
 * @big_max_k: longest chain run with @big_bytes
 * @ptx: the kernels' PTX text (NUL-terminated), @ptx_len bytes with it
 * @ptx_len: see @ptx
 * @ptaskd_pid: ptaskd's pid for its CPU time, or 0 (then unknown)
 * @tag: words appended to every result line ("iso=client"), or ""
 * @mps: the raw P1c processes run under NVIDIA MPS (the caller started it)
 * @seed: the first input value's seed
 * @threads: threads of fp_cuda_p1c_threads's one process (part_p1c sets
 *	it to each process count in turn)
 */
struct fp_opts {
	unsigned int parts;
	unsigned int sides;
	unsigned int p1b;
	enum fp_baseline baseline;
	int rounds;
	int warmup;
	int batches;
	int inflight;
	int streams;
	double seconds;
	double idle_seconds;
	int procs[FP_MAX_LIST];
	int nprocs;
	int chain[FP_MAX_LIST];
	int nchain;
	uint64_t big_bytes;
	int big_max_k;
	char *ptx;
	size_t ptx_len;
	pid_t ptaskd_pid;
	const char *tag;
	int mps;
	int uids;
	uint32_t seed;
	int threads;
};

/**
 * struct fp_stats - a sample's summary, in microseconds
 * @n: samples
 * @med: median
 * @p99: 99th percentile
 * @mean: mean
 */
struct fp_stats {
	int n;
	double med;
	double p99;
	double mean;
};

/**
 * struct fp_series - one named result (of a baseline child, mostly)
 * @key: its name, e.g. "p1.launch" or "p11.k10.b4.graph"
 * @st: per-round times
 * @per_s: a throughput, where the measurement has one (else 0)
 * @cpu_us: CPU time per operation in us, where measured (else 0)
 * @count: operations counted
 */
struct fp_series {
	char key[48];
	struct fp_stats st;
	double per_s;
	double cpu_us;
	long long count;
};

/**
 * struct fp_results - the named results of one part or one child
 * @n: entries used
 * @s: the entries
 *
 * Lives in MAP_SHARED memory when a child fills it for its parent.
 */
struct fp_results {
	int n;
	struct fp_series s[FP_MAX_SERIES];
};

/* fastpath_stats.c */
uint64_t fp_now_ns(void);
uint32_t fp_next_value(uint32_t *state);
int fp_stats_of(double *us, int n, struct fp_stats *st);
struct fp_series *fp_results_add(struct fp_results *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
const struct fp_series *fp_results_get(const struct fp_results *r,
				       const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * struct fp_gang - N processes measured together (P1c), in shared memory
 * @ready: children set up and waiting for the start
 * @done: children finished their timed window
 * @deadline_ns: end of the timed window (CLOCK_MONOTONIC), set before start
 * @count: each child's operations in the window
 * @cpu_us: each child's own CPU time in the window (getrusage, all threads)
 * @err: each child's error (negative errno), 0 when it ran
 */
struct fp_gang {
	int ready;
	int done;
	int64_t deadline_ns;
	long long count[FP_MAX_PROCS];
	double cpu_us[FP_MAX_PROCS];
	int err[FP_MAX_PROCS];
};

/*
 * A gang member's body: set up, fp_gang_wait_start(), work until
 * deadline_ns, fp_gang_finish(), tear down; return 0 or -errno.
 */
typedef int (*fp_gang_fn)(struct fp_gang *g, int idx, const struct fp_opts *o);

/**
 * struct fp_gang_result - what a gang's window measured
 * @count: operations of all members
 * @per_s: @count over the window
 * @client_cpu_us: the members' CPU time, summed
 * @daemon_cpu_us: ptaskd's CPU time over the window, or -1 when unknown
 */
struct fp_gang_result {
	long long count;
	double per_s;
	double client_cpu_us;
	double daemon_cpu_us;
};

/* fastpath_proc.c */
typedef int (*fp_child_fn)(const struct fp_opts *o, struct fp_results *r);
int fp_child_run(fp_child_fn fn, const struct fp_opts *o,
		 struct fp_results *out);
int fp_gang_run(int n, fp_gang_fn fn, const struct fp_opts *o,
		struct fp_gang_result *res);
int fp_gang_wait_start(struct fp_gang *g, int idx, double *cpu_us0);
void fp_gang_finish(struct fp_gang *g, int idx, long long count,
		    double cpu_us0, double peer_cpu_us);
double fp_self_cpu_us(void);
int fp_proc_cpu_ns(pid_t pid, int precise, uint64_t *ns);
pid_t fp_find_socket_owner(const char *path);

/* fastpath_ptask.c: each fills @r with "ptask..." series, or -errno */
int fp_ptask_p1(const struct fp_opts *o, struct fp_results *r);
int fp_ptask_p1b(const struct fp_opts *o, struct fp_results *r);
int fp_ptask_p11(const struct fp_opts *o, struct fp_results *r);
int fp_ptask_p1c_member(struct fp_gang *g, int idx, const struct fp_opts *o);
int fp_ptask_idle(const struct fp_opts *o, struct fp_results *r);
int fp_ptask_mode(char *buf, size_t len);

/* fastpath_cuda.c: run in a child (fp_child_run) */
int fp_cuda_p1(const struct fp_opts *o, struct fp_results *r);
int fp_cuda_p1b(const struct fp_opts *o, struct fp_results *r);
int fp_cuda_p11(const struct fp_opts *o, struct fp_results *r);
int fp_cuda_p1c_member(struct fp_gang *g, int idx, const struct fp_opts *o);
int fp_cuda_p1c_threads(struct fp_gang *g, int idx, const struct fp_opts *o);

/* fastpath_sock.c: run in a child (fp_child_run) */
int fp_sock_p1(const struct fp_opts *o, struct fp_results *r);
int fp_sock_p1b(const struct fp_opts *o, struct fp_results *r);
int fp_sock_p1c_member(struct fp_gang *g, int idx, const struct fp_opts *o);

#endif /* PTASK_BENCH_FASTPATH_H */
