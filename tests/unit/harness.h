/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * harness.h - a tiny test harness for the portable core, shared by the
 * unit test programs (tests/unit/NAME_test.c).
 *
 * It does three things:
 *
 *  1. Drives the core the way a shell does: h_call() takes a call's
 *     argument struct, copies it into a union ptask_args with @size set,
 *     runs ptask_core_args_check() and then ptask_core_call(), and copies the struct
 *     back only on success (output members are written back only on
 *     success, as uapi/ptask.h says).  Small wrappers (h_graph(), h_push(),
 *     h_take(), ...) build the common calls.
 *
 *  2. Prints TAP: each test function is one "ok N - name" / "not ok N -
 *     name" line after a "1..N" plan; failed checks print "# file:line:
 *     ..." diagnostics.  The program exits 1 if any test failed.
 *
 *  3. Gives every test a fresh namespace (h_ns) and checks it for leaks
 *     afterwards: every client still alive is destroyed, the namespace is
 *     destroyed, and every ns.counts[] and os_user_buffers must be 0.
 *
 * Tests run in one process, one after another; a PTASK_WARN_ON in the core
 * aborts the whole program (os_user.c), which the TAP consumer counts as a
 * failure (the plan is not met).
 */
#ifndef PTASK_TEST_HARNESS_H
#define PTASK_TEST_HARNESS_H

#include <stdio.h>
#include <stdbool.h>
#include "core/ptask_core.h"
#include "tests/unit/os_user.h"

/* ---------------------------------------------------------------------- */
/* The namespace of the running test, and default callers.               */

extern struct ptask_ns h_ns;
/* uid 1000, gid 1000, pid 4242, nice 0, no capabilities */
extern const struct ptask_caller h_user;

static inline struct ptask_caller h_who(u32 uid, u32 gid)
{
	struct ptask_caller w = h_user;

	w.uid = uid;
	w.gid = gid;
	return w;
}

/* ---------------------------------------------------------------------- */
/* Checks.                                                                 */

bool h_check(bool ok, const char *file, int line, const char *what);
bool h_check_eq(long long a, long long b, const char *file, int line,
		const char *sa, const char *sb);
bool h_check_err(int got, int want, const char *file, int line,
		 const char *what);
void h_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *h_errname(int err);
bool h_failed(void);		/* has the running test failed so far? */

#define CHECK(cond)	h_check(!!(cond), __FILE__, __LINE__, #cond)
#define CHECK_EQ(a, b)	h_check_eq((long long)(a), (long long)(b), \
				   __FILE__, __LINE__, #a, #b)
/* @call returns 0 or -errno; @want is the expected value (0, -EAGAIN...) */
#define CHECK_ERR(call, want) h_check_err((call), (want), __FILE__, __LINE__, #call)
#define CHECK_OK(call)	CHECK_ERR(call, 0)
/* Give up on the test function (teardown and the leak check still run). */
#define REQUIRE(cond)	do { if (!CHECK(cond)) return; } while (0)
#define REQUIRE_OK(call) do { if (!CHECK_OK(call)) return; } while (0)

/* ---------------------------------------------------------------------- */
/* Test tables and the main loop.                                          */

struct h_test {
	const char *name;
	void (*fn)(void);
};
#define H_TEST(fn) { #fn, fn }

/*
 * Runs @tests (all, or those named on the command line) as TAP.  Each test
 * gets h_ns freshly initialized and checked for leaks afterwards.
 * Return: the process exit status (0: all passed).
 */
int h_main(const struct h_test *tests, size_t n, int argc, char **argv);

/* Leak check of h_ns after destroying every client in it; 0 if clean.
 * Also usable inside a test (e.g. per alloc-failure iteration). */
int h_teardown_check(struct ptask_ns *ns, long buffers_before);

/* ---------------------------------------------------------------------- */
/* The call helper and wrappers.                                           */

struct ptask_client *h_client(void);		/* in h_ns; aborts on ENOMEM */
struct ptask_client *h_executor(void);		/* a client, registered */

/* One call through args_desc/args_check/ptask_core_call; @arg is the call's
 * struct (its size field is filled in).  Output written back on success. */
int h_call(struct ptask_client *c, const struct ptask_caller *who,
	   unsigned int cmd, void *arg, const struct ptask_call_io *io);

int h_graph(struct ptask_client *c, const char *name, u32 flags, u32 mode,
	    u32 *handle);
int h_graph_who(struct ptask_client *c, const struct ptask_caller *who,
		const char *name, u32 flags, u32 mode, u32 *handle);
int h_tmpl(struct ptask_client *c, u32 graph, u32 kind, u32 stride, u32 x,
	   u32 y, u32 z, u32 *handle);
int h_tmpl_named(struct ptask_client *c, u32 graph, u32 kind, u32 stride,
		 u32 x, u32 y, u32 z, const char *name, u32 *handle);
int h_ptask(struct ptask_client *c, u32 graph, u32 nports, u32 *handle);
/* A GPU ptask with @code_len bytes of @code and entry point @entry. */
int h_gpu_ptask(struct ptask_client *c, const struct ptask_caller *who,
		u32 graph, u32 nports, const void *code, u32 code_len,
		const char *entry, u32 *handle);
int h_ptask_named(struct ptask_client *c, u32 graph, u32 nports,
		  const char *name, u32 *handle);
int h_port(struct ptask_client *c, u32 ptask, u32 kind, u32 tmpl,
	   u32 *handle);
int h_port_named(struct ptask_client *c, u32 ptask, u32 kind, u32 tmpl,
		 const char *name, u32 *handle);
int h_chan(struct ptask_client *c, u32 graph, u32 src, u32 dst, u32 capacity,
	   u32 tmpl, u32 *handle);
int h_chan_named(struct ptask_client *c, u32 graph, u32 src, u32 dst,
		 u32 capacity, u32 tmpl, const char *name, u32 *handle);
int h_lookup(struct ptask_client *c, u32 graph, u32 type, const char *name,
	     u32 *handle);
int h_db(struct ptask_client *c, u64 bytes, u32 *handle);
int h_db_tmpl(struct ptask_client *c, u32 tmpl, u64 records, u32 *handle,
	      u64 *bytes);
int h_release(struct ptask_client *c, u32 db);
int h_push(struct ptask_client *c, u32 channel, u32 db);	/* NONBLOCK */
int h_push_records(struct ptask_client *c, u32 channel, u32 db, u64 records);
int h_pull(struct ptask_client *c, u32 channel, u32 *db);	/* NONBLOCK */
int h_pull_full(struct ptask_client *c, u32 channel, struct ptask_pull *out);
int h_run(struct ptask_client *c, u32 graph);
int h_terminate(struct ptask_client *c, u32 graph);
int h_close(struct ptask_client *c, u32 graph);		/* GRAPH_CLOSE */
/* EXEC_PTASK_INFO; @code NULL asks the size only. */
int h_info(struct ptask_client *c, u32 ptask, void *code, u32 code_len,
	   struct ptask_exec_ptask_info *out);

/* Results of one EXEC_TAKE. */
struct h_take {
	u32 n_inv;
	u32 n_ports;
	u32 policy;		/* enum ptask_policy the take handed out */
	struct ptask_invocation inv[PTASK_TAKE_MAX_INVOCATIONS];
	struct ptask_invocation_port ports[PTASK_TAKE_MAX_PORTS];
};
int h_take(struct ptask_client *c, u32 max_inv, u32 max_ports,
	   struct h_take *t);
int h_complete(struct ptask_client *c, u64 id, s32 status,
	       const struct ptask_exec_output *outs, u32 n);
int h_complete_ns(struct ptask_client *c, u64 id, s32 status,
		  const struct ptask_exec_output *outs, u32 n, u64 gpu_ns);
/*
 * Executor step: take up to @max_inv invocations and complete each by
 * passing its first input datablock through to every output port.
 * Return: invocations completed, or the first error (-EAGAIN: none queued).
 */
int h_passthrough(struct ptask_client *e, u32 max_inv);

/* Datablock contents: an 8-byte tag at offset 0, through the mmap path
 * (ptask_core_datablock_map + os_user_buf_data). */
int h_write_tag(struct ptask_client *c, u32 db, u64 tag);
int h_read_tag(struct ptask_client *c, u32 db, u64 *tag);

/* White-box access to objects by handle (NULL if none of that type). */
struct ptask_graph *h_graph_obj(u32 handle);
struct ptask_ptask *h_ptask_obj(u32 handle);
struct ptask_port *h_port_obj(u32 handle);
struct ptask_channel *h_chan_obj(u32 handle);
struct ptask_datablock *h_db_obj(u32 handle);
u32 h_ready_len(void);				/* entries on h_ns.ready */
bool h_ready_has(u32 ptask);

/* Small deterministic PRNG (xorshift64*). */
static inline u64 h_rand(u64 *s)
{
	u64 x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static inline u32 h_rand_below(u64 *s, u32 n)
{
	return n ? (u32)(h_rand(s) % n) : 0;
}

#endif /* PTASK_TEST_HARNESS_H */
