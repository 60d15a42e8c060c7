// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * harness.c - the unit-test harness: TAP output, per-test namespace and
 * leak check, and the shell-like call helper (see harness.h).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/harness.h"

struct ptask_ns h_ns;
const struct ptask_caller h_user = {
	.uid = 1000, .gid = 1000, .pid = 4242, .nice = 0,
	.dac_override = false, .sys_nice = false,
};

static bool cur_failed;
static const char *cur_name;

/* ---------------------------------------------------------------------- */

const char *h_errname(int err)
{
	static char buf[32];

	switch (err) {
	case 0: return "0";
	case -EPERM: return "-EPERM";
	case -ENOENT: return "-ENOENT";
	case -EIO: return "-EIO";
	case -E2BIG: return "-E2BIG";
	case -EAGAIN: return "-EAGAIN";
	case -ENOMEM: return "-ENOMEM";
	case -EACCES: return "-EACCES";
	case -EFAULT: return "-EFAULT";
	case -EBUSY: return "-EBUSY";
	case -EEXIST: return "-EEXIST";
	case -EINVAL: return "-EINVAL";
	case -ENOSPC: return "-ENOSPC";
	case -ENOTTY: return "-ENOTTY";
	case -EPROTOTYPE: return "-EPROTOTYPE";
	case -ESHUTDOWN: return "-ESHUTDOWN";
	case -ETIMEDOUT: return "-ETIMEDOUT";
	case -EALREADY: return "-EALREADY";
	case -ECANCELED: return "-ECANCELED";
	case -EINTR: return "-EINTR";
	default:
		snprintf(buf, sizeof(buf), "%d", err);
		return buf;
	}
}

void h_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

bool h_check(bool ok, const char *file, int line, const char *what)
{
	if (!ok) {
		cur_failed = true;
		h_diag("%s: %s:%d: check failed: %s", cur_name ? cur_name : "?",
		       file, line, what);
	}
	return ok;
}

bool h_check_eq(long long a, long long b, const char *file, int line,
		const char *sa, const char *sb)
{
	if (a != b) {
		cur_failed = true;
		h_diag("%s: %s:%d: %s == %s: %lld != %lld",
		       cur_name ? cur_name : "?", file, line, sa, sb, a, b);
		return false;
	}
	return true;
}

bool h_check_err(int got, int want, const char *file, int line,
		 const char *what)
{
	if (got != want) {
		cur_failed = true;
		h_diag("%s: %s:%d: %s: got %s, want %s",
		       cur_name ? cur_name : "?", file, line, what,
		       h_errname(got), h_errname(want));
		return false;
	}
	return true;
}

bool h_failed(void)
{
	return cur_failed;
}

/* ---------------------------------------------------------------------- */

int h_teardown_check(struct ptask_ns *ns, long buffers_before)
{
	static const char *const names[] = PTASK_COUNT_NAMES;
	int bad = 0;
	unsigned int i;

	while (!ptask_list_empty(&ns->clients))
		ptask_core_client_destroy(ptask_list_first(&ns->clients,
				struct ptask_client, ns_node));
	for (i = 0; i < __PTASK_COUNT_MAX; i++) {
		if (ns->counts[i]) {
			h_diag("leak: %llu %s", (unsigned long long)ns->counts[i],
			       names[i]);
			bad = 1;
		}
	}
	if (ns->hcount) {
		h_diag("leak: %u handles", ns->hcount);
		bad = 1;
	}
	if (!ptask_list_empty(&ns->graphs) || !ptask_list_empty(&ns->ready)) {
		h_diag("leak: graphs or ready list not empty");
		bad = 1;
	}
	if (ns->executors) {
		h_diag("leak: %u executors", ns->executors);
		bad = 1;
	}
	if (ns->hcount) {
		/* ptask_core_ns_destroy() would trip its PTASK_WARN_ON (abort):
		 * report the leak and go on with the next test instead. */
		ptask_os_free(ns->htab);
		ns->htab = NULL;
	} else {
		ptask_core_ns_destroy(ns);
	}
	if (os_user_buffers != buffers_before) {
		h_diag("leak: %ld buffers", os_user_buffers - buffers_before);
		bad = 1;
	}
	return bad;
}

int h_main(const struct h_test *tests, size_t n, int argc, char **argv)
{
	size_t i, planned = 0, num = 0, failed = 0;
	int a;

	for (i = 0; i < n; i++) {
		bool sel = argc <= 1;

		for (a = 1; a < argc; a++)
			sel |= !strcmp(argv[a], tests[i].name);
		planned += sel;
	}
	printf("1..%zu\n", planned);
	fflush(stdout);
	for (i = 0; i < n; i++) {
		bool sel = argc <= 1;
		long buffers;

		for (a = 1; a < argc; a++)
			sel |= !strcmp(argv[a], tests[i].name);
		if (!sel)
			continue;
		cur_failed = false;
		cur_name = tests[i].name;
		os_user_fail_alloc_after = -1;
		os_user_fail_alloc_once = 0;
		os_user_locked = 1;
		/* A fresh namespace has no timer, and the real clock. */
		os_user_timer_ns = 0;
		os_user_clock_ns = 0;
		buffers = os_user_buffers;
		if (ptask_core_ns_init(&h_ns, NULL)) {
			h_diag("ptask_core_ns_init failed");
			cur_failed = true;
		} else {
			tests[i].fn();
			os_user_fail_alloc_after = -1;
			if (h_teardown_check(&h_ns, buffers))
				cur_failed = true;
		}
		num++;
		printf("%sok %zu - %s\n", cur_failed ? "not " : "", num,
		       tests[i].name);
		fflush(stdout);
		failed += cur_failed;
	}
	cur_name = NULL;
	if (failed)
		h_diag("%zu of %zu tests failed", failed, num);
	return failed ? 1 : 0;
}

/* ---------------------------------------------------------------------- */

struct ptask_client *h_client(void)
{
	struct ptask_client *c = ptask_core_client_create(&h_ns, NULL);

	if (!c) {
		fprintf(stderr, "h_client: out of memory\n");
		abort();
	}
	return c;
}

struct ptask_client *h_executor(void)
{
	struct ptask_client *c = h_client();

	if (ptask_core_exec_register(c, 1))
		abort();
	return c;
}

int h_call(struct ptask_client *c, const struct ptask_caller *who,
	   unsigned int cmd, void *arg, const struct ptask_call_io *io)
{
	static const struct ptask_call_io no_io;
	const struct ptask_arg_desc *d = ptask_core_args_desc(cmd);
	union ptask_args u;
	int err;

	if (!d)
		return -ENOTTY;
	memset(&u, 0, sizeof(u));
	memcpy(&u, arg, d->ksize);
	*(u32 *)&u = d->ksize;
	/* The descriptor's command: the size bits of @cmd are ignored. */
	err = ptask_core_args_check(d->cmd, &u);
	if (err)
		return err;
	err = ptask_core_call(c, who ? who : &h_user, d->cmd, &u, io ? io : &no_io);
	if (!err)
		memcpy(arg, &u, d->ksize);
	return err;
}

static void set_name(char *dst, const char *name)
{
	memset(dst, 0, PTASK_NAME_MAX);
	if (name)
		strncpy(dst, name, PTASK_NAME_MAX);	/* may leave no NUL */
}

int h_graph_who(struct ptask_client *c, const struct ptask_caller *who,
		const char *name, u32 flags, u32 mode, u32 *handle)
{
	struct ptask_graph_open a = { .flags = flags, .mode = mode };
	int err;

	set_name(a.name, name);
	err = h_call(c, who, PTASK_IOC_GRAPH_OPEN, &a, NULL);
	if (!err && handle)
		*handle = a.handle;
	return err;
}

int h_graph(struct ptask_client *c, const char *name, u32 flags, u32 mode,
	    u32 *handle)
{
	return h_graph_who(c, NULL, name, flags, mode, handle);
}

int h_tmpl(struct ptask_client *c, u32 graph, u32 kind, u32 stride, u32 x,
	   u32 y, u32 z, u32 *handle)
{
	struct ptask_template_open a = {
		.graph = graph, .kind = kind, .stride = stride,
		.dims = { x, y, z },
	};
	int err = h_call(c, NULL, PTASK_IOC_TEMPLATE_OPEN, &a, NULL);

	if (!err && handle)
		*handle = a.handle;
	return err;
}

int h_tmpl_named(struct ptask_client *c, u32 graph, u32 kind, u32 stride,
		 u32 x, u32 y, u32 z, const char *name, u32 *handle)
{
	struct ptask_template_open a = {
		.graph = graph, .kind = kind, .stride = stride,
		.dims = { x, y, z },
	};
	int err;

	set_name(a.name, name);
	err = h_call(c, NULL, PTASK_IOC_TEMPLATE_OPEN, &a, NULL);
	if (!err && handle)
		*handle = a.handle;
	return err;
}

int h_ptask_named(struct ptask_client *c, u32 graph, u32 nports,
		  const char *name, u32 *handle)
{
	struct ptask_ptask_open a = {
		.graph = graph, .kind = PTASK_KIND_CPU, .nports = nports,
	};
	int err;

	set_name(a.name, name);
	err = h_call(c, NULL, PTASK_IOC_PTASK_OPEN, &a, NULL);
	if (!err && handle)
		*handle = a.handle;
	return err;
}

int h_gpu_ptask(struct ptask_client *c, const struct ptask_caller *who,
		u32 graph, u32 nports, const void *code, u32 code_len,
		const char *entry, u32 *handle)
{
	struct ptask_ptask_open a = {
		.graph = graph, .kind = PTASK_KIND_GPU, .nports = nports,
		.code = (u64)(uintptr_t)code, .code_len = code_len,
	};
	struct ptask_call_io io = { .code = code };
	int err;

	set_name(a.entry, entry);
	err = h_call(c, who, PTASK_IOC_PTASK_OPEN, &a, &io);
	if (!err && handle)
		*handle = a.handle;
	return err;
}

int h_ptask(struct ptask_client *c, u32 graph, u32 nports, u32 *handle)
{
	return h_ptask_named(c, graph, nports, NULL, handle);
}

int h_port_named(struct ptask_client *c, u32 ptask, u32 kind, u32 tmpl,
		 const char *name, u32 *handle)
{
	struct ptask_port_open a = {
		.ptask = ptask, .kind = kind, .template = tmpl,
	};
	int err;

	set_name(a.name, name);
	err = h_call(c, NULL, PTASK_IOC_PORT_OPEN, &a, NULL);
	if (!err && handle)
		*handle = a.handle;
	return err;
}

int h_port(struct ptask_client *c, u32 ptask, u32 kind, u32 tmpl,
	   u32 *handle)
{
	return h_port_named(c, ptask, kind, tmpl, NULL, handle);
}

int h_chan_named(struct ptask_client *c, u32 graph, u32 src, u32 dst,
		 u32 capacity, u32 tmpl, const char *name, u32 *handle)
{
	struct ptask_channel_open a = {
		.graph = graph, .src = src, .dst = dst, .capacity = capacity,
		.template = tmpl,
	};
	int err;

	set_name(a.name, name);
	err = h_call(c, NULL, PTASK_IOC_CHANNEL_OPEN, &a, NULL);
	if (!err && handle)
		*handle = a.handle;
	return err;
}

int h_chan(struct ptask_client *c, u32 graph, u32 src, u32 dst, u32 capacity,
	   u32 tmpl, u32 *handle)
{
	return h_chan_named(c, graph, src, dst, capacity, tmpl, NULL, handle);
}

int h_lookup(struct ptask_client *c, u32 graph, u32 type, const char *name,
	     u32 *handle)
{
	struct ptask_lookup a = { .graph = graph, .type = type };
	int err;

	set_name(a.name, name);
	err = h_call(c, NULL, PTASK_IOC_LOOKUP, &a, NULL);
	if (!err && handle)
		*handle = a.handle;
	return err;
}

int h_db(struct ptask_client *c, u64 bytes, u32 *handle)
{
	struct ptask_datablock_create a = { .bytes = bytes };
	int err = h_call(c, NULL, PTASK_IOC_DATABLOCK_CREATE, &a, NULL);

	if (!err && handle)
		*handle = a.handle;
	return err;
}

int h_db_tmpl(struct ptask_client *c, u32 tmpl, u64 records, u32 *handle,
	      u64 *bytes)
{
	struct ptask_datablock_create a = { .template = tmpl,
					    .records = records };
	int err = h_call(c, NULL, PTASK_IOC_DATABLOCK_CREATE, &a, NULL);

	if (!err && handle)
		*handle = a.handle;
	if (!err && bytes)
		*bytes = a.bytes;
	return err;
}

int h_release(struct ptask_client *c, u32 db)
{
	struct ptask_datablock_release a = { .handle = db };

	return h_call(c, NULL, PTASK_IOC_DATABLOCK_RELEASE, &a, NULL);
}

int h_push(struct ptask_client *c, u32 channel, u32 db)
{
	struct ptask_push a = { .flags = PTASK_NONBLOCK, .channel = channel,
				.datablock = db };

	return h_call(c, NULL, PTASK_IOC_PUSH, &a, NULL);
}

int h_push_records(struct ptask_client *c, u32 channel, u32 db, u64 records)
{
	struct ptask_push a = {
		.flags = PTASK_NONBLOCK | PTASK_PUSH_SET_RECORDS,
		.channel = channel, .datablock = db, .records = records,
	};

	return h_call(c, NULL, PTASK_IOC_PUSH, &a, NULL);
}

int h_pull_full(struct ptask_client *c, u32 channel, struct ptask_pull *out)
{
	memset(out, 0, sizeof(*out));
	out->flags = PTASK_NONBLOCK;
	out->channel = channel;
	return h_call(c, NULL, PTASK_IOC_PULL, out, NULL);
}

int h_pull(struct ptask_client *c, u32 channel, u32 *db)
{
	struct ptask_pull a;
	int err = h_pull_full(c, channel, &a);

	if (!err && db)
		*db = a.datablock;
	return err;
}

int h_run(struct ptask_client *c, u32 graph)
{
	struct ptask_graph_ctl a = { .graph = graph };

	return h_call(c, NULL, PTASK_IOC_GRAPH_RUN, &a, NULL);
}

int h_terminate(struct ptask_client *c, u32 graph)
{
	struct ptask_graph_ctl a = { .graph = graph };

	return h_call(c, NULL, PTASK_IOC_GRAPH_TERMINATE, &a, NULL);
}

int h_close(struct ptask_client *c, u32 graph)
{
	struct ptask_graph_ctl a = { .graph = graph };

	return h_call(c, NULL, PTASK_IOC_GRAPH_CLOSE, &a, NULL);
}

int h_info(struct ptask_client *c, u32 ptask, void *code, u32 code_len,
	   struct ptask_exec_ptask_info *out)
{
	struct ptask_call_io io = { .code_out = code, .code_out_len = code_len };

	memset(out, 0, sizeof(*out));
	out->ptask = ptask;
	out->code = (u64)(uintptr_t)code;
	out->code_len = code_len;
	return h_call(c, NULL, PTASK_IOC_EXEC_PTASK_INFO, out, &io);
}

int h_take(struct ptask_client *c, u32 max_inv, u32 max_ports,
	   struct h_take *t)
{
	struct ptask_exec_take a = {
		.flags = PTASK_NONBLOCK, .max_invocations = max_inv,
		.max_ports = max_ports,
	};
	struct ptask_call_io io = { .invocations = t->inv, .ports = t->ports };
	int err;

	t->n_inv = 0;
	t->n_ports = 0;
	err = h_call(c, NULL, PTASK_IOC_EXEC_TAKE, &a, &io);
	if (!err) {
		t->n_inv = a.n_invocations;
		t->n_ports = a.n_ports;
		t->policy = a.policy;
	}
	return err;
}

int h_complete(struct ptask_client *c, u64 id, s32 status,
	       const struct ptask_exec_output *outs, u32 n)
{
	return h_complete_ns(c, id, status, outs, n, 0);
}

int h_complete_ns(struct ptask_client *c, u64 id, s32 status,
		  const struct ptask_exec_output *outs, u32 n, u64 gpu_ns)
{
	struct ptask_exec_complete a = {
		.id = id, .status = status, .n_outputs = n, .gpu_ns = gpu_ns,
		.outputs = (u64)(uintptr_t)outs,
	};
	struct ptask_call_io io = { .outputs = outs };

	return h_call(c, NULL, PTASK_IOC_EXEC_COMPLETE, &a, &io);
}

int h_passthrough(struct ptask_client *e, u32 max_inv)
{
	struct h_take *t = calloc(1, sizeof(*t));
	u32 i, j, done = 0;
	int err;

	if (!t)
		abort();
	err = h_take(e, max_inv, PTASK_TAKE_MAX_PORTS, t);
	for (i = 0; !err && i < t->n_inv; i++) {
		const struct ptask_invocation *inv = &t->inv[i];
		struct ptask_exec_output outs[PTASK_MAX_PORTS];
		u32 n = 0, in = 0;

		for (j = 0; j < inv->n_ports; j++) {
			const struct ptask_invocation_port *pr =
				&t->ports[inv->first_port + j];

			if (pr->kind != PTASK_PORT_OUTPUT && !in)
				in = pr->datablock;
		}
		for (j = 0; j < inv->n_ports; j++) {
			const struct ptask_invocation_port *pr =
				&t->ports[inv->first_port + j];

			if (pr->kind == PTASK_PORT_OUTPUT) {
				outs[n].index = pr->index;
				outs[n++].datablock = in;
			}
		}
		err = h_complete(e, inv->id, 0, outs, n);
		done += !err;
	}
	free(t);
	return err ? err : (int)done;
}

static int map_db(struct ptask_client *c, u32 db, u64 **p,
		  struct ptask_buf **buf)
{
	u64 bytes;
	int err = ptask_core_datablock_map(c, db, &bytes, buf);

	if (err)
		return err;
	if (bytes < sizeof(u64)) {
		ptask_os_buf_put(*buf);
		return -EINVAL;
	}
	*p = os_user_buf_data(*buf);
	return 0;
}

int h_write_tag(struct ptask_client *c, u32 db, u64 tag)
{
	struct ptask_buf *buf;
	u64 *p;
	int err = map_db(c, db, &p, &buf);

	if (err)
		return err;
	memcpy(p, &tag, sizeof(tag));
	ptask_os_buf_put(buf);
	return 0;
}

int h_read_tag(struct ptask_client *c, u32 db, u64 *tag)
{
	struct ptask_buf *buf;
	u64 *p;
	int err = map_db(c, db, &p, &buf);

	if (err)
		return err;
	memcpy(tag, p, sizeof(*tag));
	ptask_os_buf_put(buf);
	return 0;
}

/* ---------------------------------------------------------------------- */

#define OBJ_GETTER(fn, type, objtype)					\
type *fn(u32 handle)							\
{									\
	struct ptask_obj *o = ptask_core_ns_find(&h_ns, handle, objtype);	\
									\
	return o ? ptask_container_of(o, type, obj) : NULL;		\
}

OBJ_GETTER(h_graph_obj, struct ptask_graph, PTASK_OBJ_GRAPH)
OBJ_GETTER(h_ptask_obj, struct ptask_ptask, PTASK_OBJ_PTASK)
OBJ_GETTER(h_port_obj, struct ptask_port, PTASK_OBJ_PORT)
OBJ_GETTER(h_chan_obj, struct ptask_channel, PTASK_OBJ_CHANNEL)
OBJ_GETTER(h_db_obj, struct ptask_datablock, PTASK_OBJ_DATABLOCK)

u32 h_ready_len(void)
{
	struct ptask_list *pos;
	u32 n = 0;

	ptask_list_for_each(pos, &h_ns.ready)
		n++;
	return n;
}

bool h_ready_has(u32 ptask)
{
	struct ptask_list *pos;

	ptask_list_for_each(pos, &h_ns.ready)
		if (ptask_list_entry(pos, struct ptask_ptask,
				     ready_node)->obj.handle == ptask)
			return true;
	return false;
}
