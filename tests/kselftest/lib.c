// SPDX-License-Identifier: GPL-2.0
/*
 * lib.c - helpers shared by the ptask kselftests and the test executor.
 * See lib.h.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <linux/capability.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>

#include "lib.h"

/* ------------------------------------------------------------------ */
/* time                                                                */
/* ------------------------------------------------------------------ */

__u64 pt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

__u64 pt_deadline_ms(unsigned int ms)
{
	return pt_now_ns() + (__u64)ms * 1000000ULL;
}

void pt_sleep_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000L,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

const char *pt_name(char buf[PTASK_NAME_MAX], const char *tag)
{
	snprintf(buf, PTASK_NAME_MAX, "kst.%d.%s", (int)getpid(), tag);
	return buf;
}

/* ------------------------------------------------------------------ */
/* raw ioctls                                                          */
/* ------------------------------------------------------------------ */

int pt_open_flags(int flags)
{
	int fd = open(PT_DEV_PATH, O_RDWR | O_CLOEXEC | flags);

	return fd < 0 ? -errno : fd;
}

int pt_open(void)
{
	return pt_open_flags(0);
}

int pt_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

static void pt_copy_name(char *dst, const char *src)
{
	memset(dst, 0, PTASK_NAME_MAX);
	if (src)
		strncpy(dst, src, PTASK_NAME_MAX - 1);
}

int pt_graph_open(int fd, const char *name, __u32 flags, __u32 mode,
		  __u32 *handle)
{
	struct ptask_graph_open a = {
		.size = sizeof(a), .flags = flags, .mode = mode,
	};
	int r;

	pt_copy_name(a.name, name);
	r = pt_ioctl(fd, PTASK_IOC_GRAPH_OPEN, &a);
	if (!r && handle)
		*handle = a.handle;
	return r;
}

int pt_template_open(int fd, __u32 graph, __u32 kind, __u32 binding,
		     __u32 stride, __u32 x, __u32 y, __u32 z, const char *name,
		     __u32 *handle)
{
	struct ptask_template_open a = {
		.size = sizeof(a), .graph = graph, .kind = kind,
		.binding = binding, .stride = stride, .dims = { x, y, z },
	};
	int r;

	pt_copy_name(a.name, name);
	r = pt_ioctl(fd, PTASK_IOC_TEMPLATE_OPEN, &a);
	if (!r && handle)
		*handle = a.handle;
	return r;
}

const char pt_dummy_code[] =
	"// ptask kselftest: never run, only carried\n"
	".version 7.0\n.target sm_50\n.address_size 64\n"
	".visible .entry copy()\n{\n\tret;\n}\n";
const __u32 pt_dummy_code_len = sizeof(pt_dummy_code) - 1;

int pt_ptask_open(int fd, __u32 graph, __u32 kind, __u32 nports,
		  const void *code, __u32 code_len, const char *entry,
		  const char *name, __u32 *handle)
{
	struct ptask_ptask_open a = {
		.size = sizeof(a), .graph = graph, .kind = kind,
		.nports = nports, .code = (__u64)(uintptr_t)code,
		.code_len = code_len,
	};
	int r;

	pt_copy_name(a.entry, entry);
	pt_copy_name(a.name, name);
	r = pt_ioctl(fd, PTASK_IOC_PTASK_OPEN, &a);
	if (!r && handle)
		*handle = a.handle;
	return r;
}

int pt_ptask_open_gpu(int fd, __u32 graph, __u32 nports, const char *name,
		      __u32 *handle)
{
	return pt_ptask_open(fd, graph, PTASK_KIND_GPU, nports, pt_dummy_code,
			     pt_dummy_code_len, "copy", name, handle);
}

int pt_ptask_open_cpu(int fd, __u32 graph, __u32 nports, const char *name,
		      __u32 *handle)
{
	return pt_ptask_open(fd, graph, PTASK_KIND_CPU, nports, NULL, 0, "",
			     name, handle);
}

int pt_port_open(int fd, __u32 ptask, __u32 kind, __u32 flags, __u32 tmpl,
		 __u32 param_index, __u32 inout_peer, const char *name,
		 __u32 *handle, __u32 *index)
{
	struct ptask_port_open a = {
		.size = sizeof(a), .flags = flags, .ptask = ptask,
		.kind = kind, .template = tmpl, .param_index = param_index,
		.inout_peer = inout_peer,
	};
	int r;

	pt_copy_name(a.name, name);
	r = pt_ioctl(fd, PTASK_IOC_PORT_OPEN, &a);
	if (!r && handle)
		*handle = a.handle;
	if (!r && index)
		*index = a.index;
	return r;
}

int pt_channel_open(int fd, __u32 graph, __u32 src, __u32 dst,
		    __u32 capacity, __u32 tmpl, const char *name,
		    __u32 *handle)
{
	struct ptask_channel_open a = {
		.size = sizeof(a), .graph = graph, .src = src, .dst = dst,
		.capacity = capacity, .template = tmpl,
	};
	int r;

	pt_copy_name(a.name, name);
	r = pt_ioctl(fd, PTASK_IOC_CHANNEL_OPEN, &a);
	if (!r && handle)
		*handle = a.handle;
	return r;
}

int pt_lookup(int fd, __u32 graph, __u32 type, const char *name,
	      __u32 *handle)
{
	struct ptask_lookup a = {
		.size = sizeof(a), .graph = graph, .type = type,
	};
	int r;

	pt_copy_name(a.name, name);
	r = pt_ioctl(fd, PTASK_IOC_LOOKUP, &a);
	if (!r && handle)
		*handle = a.handle;
	return r;
}

int pt_db_create(int fd, __u64 bytes, __u32 tmpl, __u64 records,
		 __u32 *handle, __u64 *mmap_offset, __u64 *out_bytes)
{
	struct ptask_datablock_create a = {
		.size = sizeof(a), .template = tmpl, .bytes = bytes,
		.records = records,
	};
	int r;

	r = pt_ioctl(fd, PTASK_IOC_DATABLOCK_CREATE, &a);
	if (r)
		return r;
	if (handle)
		*handle = a.handle;
	if (mmap_offset)
		*mmap_offset = a.mmap_offset;
	if (out_bytes)
		*out_bytes = a.bytes;
	return 0;
}

int pt_db_release(int fd, __u32 handle)
{
	struct ptask_datablock_release a = {
		.size = sizeof(a), .handle = handle,
	};

	return pt_ioctl(fd, PTASK_IOC_DATABLOCK_RELEASE, &a);
}

int pt_push(int fd, __u32 channel, __u32 datablock, __u32 flags,
	    __u64 records, __u64 timeout_ns)
{
	struct ptask_push a = {
		.size = sizeof(a), .flags = flags, .channel = channel,
		.datablock = datablock, .records = records,
		.timeout_ns = timeout_ns,
	};

	return pt_ioctl(fd, PTASK_IOC_PUSH, &a);
}

int pt_pull(int fd, __u32 channel, __u32 flags, __u64 timeout_ns,
	    struct ptask_pull *out)
{
	struct ptask_pull a = {
		.size = sizeof(a), .flags = flags, .channel = channel,
		.timeout_ns = timeout_ns,
	};
	int r;

	r = pt_ioctl(fd, PTASK_IOC_PULL, &a);
	if (!r && out)
		*out = a;
	return r;
}

static int pt_graph_ctl(int fd, unsigned long cmd, __u32 graph)
{
	struct ptask_graph_ctl a = { .size = sizeof(a), .graph = graph };

	return pt_ioctl(fd, cmd, &a);
}

int pt_graph_run(int fd, __u32 graph)
{
	return pt_graph_ctl(fd, PTASK_IOC_GRAPH_RUN, graph);
}

int pt_graph_terminate(int fd, __u32 graph)
{
	return pt_graph_ctl(fd, PTASK_IOC_GRAPH_TERMINATE, graph);
}

int pt_graph_close(int fd, __u32 graph)
{
	return pt_graph_ctl(fd, PTASK_IOC_GRAPH_CLOSE, graph);
}

int pt_set_priority(int fd, __u32 ptask, __u32 flags, __u32 static_prio,
		    __s32 proxy_nice)
{
	struct ptask_priority a = {
		.size = sizeof(a), .flags = flags, .ptask = ptask,
		.static_prio = static_prio, .proxy_nice = proxy_nice,
	};

	return pt_ioctl(fd, PTASK_IOC_PTASK_SET_PRIORITY, &a);
}

int pt_set_geometry(int fd, __u32 ptask, __u32 shared_bytes,
		    const __u32 grid[3], const __u32 block[3])
{
	struct ptask_geometry a = {
		.size = sizeof(a), .ptask = ptask,
		.shared_bytes = shared_bytes,
	};

	memcpy(a.grid, grid, sizeof(a.grid));
	memcpy(a.block, block, sizeof(a.block));
	return pt_ioctl(fd, PTASK_IOC_PTASK_SET_GEOMETRY, &a);
}

int pt_exec_take(int fd, __u32 flags, __u64 timeout_ns,
		 struct ptask_invocation *inv, __u32 max_inv,
		 struct ptask_invocation_port *ports, __u32 max_ports,
		 __u32 *n_inv, __u32 *n_ports)
{
	struct ptask_exec_take a = {
		.size = sizeof(a), .flags = flags,
		.max_invocations = max_inv, .max_ports = max_ports,
		.invocations = (__u64)(uintptr_t)inv,
		.ports = (__u64)(uintptr_t)ports, .timeout_ns = timeout_ns,
	};
	int r;

	r = pt_ioctl(fd, PTASK_IOC_EXEC_TAKE, &a);
	if (r)
		return r;
	if (n_inv)
		*n_inv = a.n_invocations;
	if (n_ports)
		*n_ports = a.n_ports;
	return 0;
}

int pt_exec_complete(int fd, __u64 id, __s32 status, __u64 gpu_ns,
		     const struct ptask_exec_output *outputs, __u32 n_outputs)
{
	struct ptask_exec_complete a = {
		.size = sizeof(a), .id = id, .status = status,
		.n_outputs = n_outputs, .gpu_ns = gpu_ns,
		.outputs = (__u64)(uintptr_t)outputs,
	};

	return pt_ioctl(fd, PTASK_IOC_EXEC_COMPLETE, &a);
}

int pt_exec_ptask_info(int fd, __u32 ptask, void *code, __u32 *code_len,
		       struct ptask_exec_ptask_info *info)
{
	struct ptask_exec_ptask_info a = {
		.size = sizeof(a), .ptask = ptask,
		.code_len = code_len ? *code_len : 0,
		.code = (__u64)(uintptr_t)code,
	};
	int r;

	r = pt_ioctl(fd, PTASK_IOC_EXEC_PTASK_INFO, &a);
	if (r)
		return r;
	if (code_len)
		*code_len = a.code_len;
	if (info)
		*info = a;
	return 0;
}

/* ------------------------------------------------------------------ */
/* datablock contents                                                  */
/* ------------------------------------------------------------------ */

void *pt_map(int fd, __u64 offset, size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, (off_t)offset);

	return p == MAP_FAILED ? NULL : p;
}

static __u8 pt_pattern_byte(__u32 seed, size_t i)
{
	__u32 x = seed * 2654435761U + (__u32)i * 40503U;

	return (__u8)(x ^ (x >> 13) ^ (x >> 24));
}

void pt_fill(void *p, size_t len, __u32 seed)
{
	__u8 *b = p;
	size_t i;

	memcpy(b, &seed, len < 4 ? len : 4);
	for (i = 4; i < len; i++)
		b[i] = pt_pattern_byte(seed, i);
}

int pt_check(const void *p, size_t len, __u32 *seed)
{
	const __u8 *b = p;
	__u32 s;
	size_t i;

	if (len < 4)
		return -EBADMSG;
	memcpy(&s, b, 4);
	for (i = 4; i < len; i++)
		if (b[i] != pt_pattern_byte(s, i))
			return -EBADMSG;
	if (seed)
		*seed = s;
	return 0;
}

static int pt_db_make_rec(int fd, size_t bytes, __u32 seed, __u64 records,
			  __u32 *handle)
{
	__u64 off;
	void *p;
	int r;

	r = pt_db_create(fd, bytes, 0, records, handle, &off, NULL);
	if (r)
		return r;
	p = pt_map(fd, off, bytes, PROT_READ | PROT_WRITE);
	if (!p) {
		r = -errno;
		pt_db_release(fd, *handle);
		return r;
	}
	pt_fill(p, bytes, seed);
	munmap(p, bytes);
	return 0;
}

int pt_db_make(int fd, size_t bytes, __u32 seed, __u32 *handle)
{
	return pt_db_make_rec(fd, bytes, seed, 0, handle);
}

int pt_push_seed(int fd, __u32 channel, size_t bytes, __u32 seed,
		 __u64 records, __u32 flags, __u64 timeout_ns)
{
	__u32 h;
	int r;

	r = pt_db_make_rec(fd, bytes, seed, records, &h);
	if (r)
		return r;
	r = pt_push(fd, channel, h, flags, 0, timeout_ns);
	pt_db_release(fd, h);
	return r;
}

int pt_pull_seed(int fd, __u32 channel, __u32 flags, __u64 timeout_ns,
		 __u32 *seed, __u64 *bytes, __u64 *records)
{
	struct ptask_pull pl;
	void *p;
	int r;

	r = pt_pull(fd, channel, flags, timeout_ns, &pl);
	if (r)
		return r;
	p = pt_map(fd, pl.mmap_offset, pl.bytes, PROT_READ);
	if (!p) {
		r = -errno;
	} else {
		r = pt_check(p, pl.bytes, seed);
		munmap(p, pl.bytes);
	}
	if (bytes)
		*bytes = pl.bytes;
	if (records)
		*records = pl.records;
	if (pt_db_release(fd, pl.datablock) && !r)
		r = -EBADSLT;
	return r;
}

int pt_fill_channel(int fd, __u32 channel, size_t bytes, __u32 seed0,
		    int max)
{
	int i, r;

	for (i = 0; i < max; i++) {
		r = pt_push_seed(fd, channel, bytes, seed0 + i, 0,
				 PTASK_NONBLOCK, 0);
		if (r == -EAGAIN)
			return i;
		if (r)
			return r;
	}
	return max;
}

/* ------------------------------------------------------------------ */
/* sysfs                                                               */
/* ------------------------------------------------------------------ */

const char *const pt_count_names[__PTASK_COUNT_MAX] = PTASK_COUNT_NAMES;

int pt_sysfs_u64(const char *rel, __u64 *val)
{
	char path[256], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", PTASK_SYSFS_DIR, rel);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	buf[n] = 0;
	*val = strtoull(buf, NULL, 0);
	return 0;
}

int pt_sysfs_u64_wait(const char *rel, __u64 *val, unsigned int ms)
{
	unsigned int waited;
	int err;

	for (waited = 0;; waited += 10) {
		err = pt_sysfs_u64(rel, val);
		if (err != -ENOENT || waited >= ms)
			return err;
		pt_sleep_ms(10);
	}
}

int pt_path_wait(const char *path, bool want, unsigned int ms)
{
	unsigned int waited;

	for (waited = 0; waited <= ms; waited += 10) {
		if ((access(path, F_OK) == 0) == want)
			return 0;
		pt_sleep_ms(10);
	}
	return -ETIMEDOUT;
}

int pt_counts_read(__u64 counts[__PTASK_COUNT_MAX])
{
	char rel[64];
	int i, r;

	for (i = 0; i < __PTASK_COUNT_MAX; i++) {
		snprintf(rel, sizeof(rel), "objects/%s", pt_count_names[i]);
		r = pt_sysfs_u64(rel, &counts[i]);
		if (r)
			return r;
	}
	return 0;
}

int pt_executors_read(__u64 *val)
{
	return pt_sysfs_u64("executors", val);
}

int pt_count_wait(enum ptask_count which, __u64 want, unsigned int ms)
{
	__u64 deadline = pt_deadline_ms(ms), c[__PTASK_COUNT_MAX];

	for (;;) {
		if (!pt_counts_read(c) && c[which] == want)
			return 0;
		if (pt_now_ns() > deadline)
			return -ETIMEDOUT;
		pt_sleep_ms(5);
	}
}

int pt_executors_wait(__u64 want, unsigned int ms)
{
	__u64 deadline = pt_deadline_ms(ms), v;

	for (;;) {
		if (!pt_executors_read(&v) && v == want)
			return 0;
		if (pt_now_ns() > deadline)
			return -ETIMEDOUT;
		pt_sleep_ms(5);
	}
}

int pt_counts_wait_all(const __u64 want[__PTASK_COUNT_MAX], unsigned int ms,
		       const char *who)
{
	__u64 deadline = pt_deadline_ms(ms), c[__PTASK_COUNT_MAX];
	int i, bad;

	for (;;) {
		bad = 0;
		if (pt_counts_read(c))
			return __PTASK_COUNT_MAX;
		for (i = 0; i < __PTASK_COUNT_MAX; i++)
			bad += c[i] != want[i];
		if (!bad || pt_now_ns() > deadline)
			break;
		pt_sleep_ms(10);
	}
	for (i = 0; i < __PTASK_COUNT_MAX; i++)
		if (c[i] != want[i])
			fprintf(stderr, "# %s: objects/%s is %llu, expected %llu\n",
				who, pt_count_names[i],
				(unsigned long long)c[i],
				(unsigned long long)want[i]);
	return bad;
}

int pt_wait_quiescent(__u64 base_invocations, unsigned int ms)
{
	__u64 deadline = pt_deadline_ms(ms), c[__PTASK_COUNT_MAX];
	int stable = 0;

	while (stable < 3) {
		if (pt_now_ns() > deadline)
			return -ETIMEDOUT;
		pt_sleep_ms(10);
		if (!pt_counts_read(c) &&
		    c[PTASK_COUNT_INVOCATIONS] == base_invocations)
			stable++;
		else
			stable = 0;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* /proc                                                               */
/* ------------------------------------------------------------------ */

pid_t pt_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

char pt_task_state(pid_t pid, pid_t tid)
{
	char path[96], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	return p[2];
}

int pt_wait_sleeping(pid_t pid, pid_t tid, unsigned int ms)
{
	__u64 deadline = pt_deadline_ms(ms);
	char s;

	for (;;) {
		s = pt_task_state(pid, tid);
		if (s == 'S' || s == 'D')
			return 0;
		if (pt_now_ns() > deadline)
			return -ETIMEDOUT;
		pt_sleep_ms(5);
	}
}

/* ------------------------------------------------------------------ */
/* generic netlink                                                     */
/* ------------------------------------------------------------------ */

/* What pt_nl_put_exec() adds: an executor fd (if >= 0), test devices. */
struct pt_nl_exec {
	int exec_fd;
	int n_accels;
	long long uid;		/* PTASK_A_OBJ_OWNER_UID, or -1 */
};

static int pt_nl_put_accels(struct nl_msg *msg, int n_accels)
{
	struct nlattr *accels, *accel;
	int i;

	accels = nla_nest_start(msg, PTASK_A_ACCELS);
	if (!accels)
		return -EMSGSIZE;
	for (i = 0; i < n_accels; i++) {
		accel = nla_nest_start(msg, PTASK_A_ACCEL);
		if (!accel ||
		    nla_put_u32(msg, PTASK_ACCEL_A_INDEX, (__u32)i) ||
		    nla_put_string(msg, PTASK_ACCEL_A_NAME, "test") ||
		    nla_put_u32(msg, PTASK_ACCEL_A_KIND, PTASK_ACCEL_TEST))
			return -EMSGSIZE;
		nla_nest_end(msg, accel);
	}
	nla_nest_end(msg, accels);
	return 0;
}

static int pt_nl_put_exec(struct nl_msg *msg, const void *arg)
{
	const struct pt_nl_exec *x = arg;

	if ((x->exec_fd >= 0 &&
	     nla_put_u32(msg, PTASK_A_EXEC_FD, (__u32)x->exec_fd)) ||
	    (x->uid >= 0 &&
	     nla_put_u32(msg, PTASK_A_OBJ_OWNER_UID, (__u32)x->uid)))
		return -EMSGSIZE;
	return x->n_accels > 0 ? pt_nl_put_accels(msg, x->n_accels) : 0;
}

/*
 * Sends @cmd through the common client (common/genl.h) and returns the
 * error of the netlink ack (0 or -errno, as the kernel wrote it), -ENOENT
 * when the family is not registered, -EIO when libnl itself fails.
 */
static int pt_nl_do_uid(int cmd, int exec_fd, int n_accels, long long uid)
{
	struct pt_nl_exec x = {
		.exec_fd = exec_fd, .n_accels = n_accels, .uid = uid,
	};
	struct pc_genl_req req = {
		.cmd = (__u8)cmd,
		.put = pt_nl_put_exec,
		.put_arg = &x,
	};

	return pc_genl_call(&req);
}

static int pt_nl_do(int cmd, int exec_fd, int n_accels)
{
	return pt_nl_do_uid(cmd, exec_fd, n_accels, -1);
}

int pt_nl_register_uid(int exec_fd, unsigned int uid)
{
	return pt_nl_do_uid(PTASK_CMD_EXEC_REGISTER, exec_fd, 1, uid);
}

int pt_nl_register_ex(int exec_fd, int n_accels)
{
	return pt_nl_do(PTASK_CMD_EXEC_REGISTER, exec_fd, n_accels);
}

int pt_nl_register(int exec_fd)
{
	return pt_nl_register_ex(exec_fd, 1);
}

int pt_nl_unregister(int exec_fd)
{
	return pt_nl_do(PTASK_CMD_EXEC_UNREGISTER, exec_fd, 0);
}

/* A bound NETLINK_GENERIC socket of our own (no libnl): fd or -errno. */
static int pt_nl_raw_socket(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int s, r;

	s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (s < 0)
		return -errno;
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa))) {
		r = -errno;
		close(s);
		return r;
	}
	return s;
}

/* One datagram within @ms: its length, -ETIMEDOUT, -EMSGSIZE or -errno. */
static int pt_nl_recv(int s, void *buf, size_t len, unsigned int ms)
{
	struct pollfd pf = { .fd = s, .events = POLLIN };
	ssize_t r;
	int p;

	p = poll(&pf, 1, (int)ms);
	if (p < 0)
		return -errno;
	if (p == 0)
		return -ETIMEDOUT;
	r = recv(s, buf, len, MSG_DONTWAIT | MSG_TRUNC);
	if (r < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	if ((size_t)r > len)
		return -EMSGSIZE;
	return (int)r;
}

/* A u32 attribute, if present: 0, or -EBADMSG when it is not 4 bytes. */
static int pt_nl_u32(const struct nlattr *a, __u32 *v)
{
	if (!a)
		return 0;
	if (nla_len(a) != (int)sizeof(__u32))
		return -EBADMSG;
	*v = nla_get_u32((struct nlattr *)a);
	return 0;
}

/* Parses a ptask genetlink message; the attribute table and bitmap. */
static int pt_nl_parse(struct nlmsghdr *nlh, __u8 *cmd,
		       struct nlattr *tb[PTASK_A_MAX + 1], __u32 *attrs)
{
	int i;

	if (nlh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
		return -EBADMSG;
	if (genlmsg_parse(nlh, 0, tb, PTASK_A_MAX, NULL) < 0)
		return -EBADMSG;
	*cmd = ((struct genlmsghdr *)NLMSG_DATA(nlh))->cmd;
	*attrs = 0;
	for (i = 1; i <= PTASK_A_MAX; i++)
		if (tb[i])
			*attrs |= 1U << i;
	return 0;
}

static int pt_nl_parse_obj(struct nlmsghdr *nlh, struct pt_nl_obj *o)
{
	struct nlattr *tb[PTASK_A_MAX + 1];
	__u8 cmd;
	int r;

	memset(o, 0, sizeof(*o));
	r = pt_nl_parse(nlh, &cmd, tb, &o->attrs);
	if (r || cmd != PTASK_CMD_GET_OBJECT)
		return -EBADMSG;
	if (pt_nl_u32(tb[PTASK_A_OBJ_TYPE], &o->type) ||
	    pt_nl_u32(tb[PTASK_A_OBJ_HANDLE], &o->handle) ||
	    pt_nl_u32(tb[PTASK_A_OBJ_GRAPH], &o->graph) ||
	    pt_nl_u32(tb[PTASK_A_OBJ_STATE], &o->state) ||
	    pt_nl_u32(tb[PTASK_A_OBJ_OWNER_UID], &o->owner_uid) ||
	    pt_nl_u32(tb[PTASK_A_OBJ_OWNER_PID], &o->owner_pid))
		return -EBADMSG;
	if (tb[PTASK_A_OBJ_NAME]) {
		const char *s = nla_data(tb[PTASK_A_OBJ_NAME]);
		int len = nla_len(tb[PTASK_A_OBJ_NAME]);

		/* NUL-terminated, at most PTASK_NAME_MAX with the NUL. */
		if (len < 1 || len > PTASK_NAME_MAX || s[len - 1])
			return -EBADMSG;
		memcpy(o->name, s, (size_t)len);
	}
	return 0;
}

int pt_nl_dump_start(struct pt_nl_dump *d)
{
	struct {
		struct nlmsghdr n;
		struct genlmsghdr g;
	} req;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int r;

	memset(d, 0, sizeof(*d));
	d->sock = -1;
	r = pc_genl_resolve(&d->family, NULL);
	if (r)
		return r;
	d->sock = pt_nl_raw_socket();
	if (d->sock < 0) {
		r = d->sock;
		d->sock = -1;
		return r;
	}
	d->seq = (__u32)pt_now_ns() | 1;
	memset(&req, 0, sizeof(req));
	req.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	req.n.nlmsg_type = (__u16)d->family;
	req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.n.nlmsg_seq = d->seq;
	req.g.cmd = PTASK_CMD_GET_OBJECT;
	req.g.version = PTASK_GENL_VERSION;
	if (sendto(d->sock, &req, req.n.nlmsg_len, 0,
		   (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		r = -errno;
		pt_nl_dump_close(d);
		return r;
	}
	return 0;
}

int pt_nl_dump_next(struct pt_nl_dump *d, struct pt_nl_obj *objs, int max,
		    int *n)
{
	static char buf[65536] __attribute__((aligned(8)));
	struct nlmsghdr *nlh;
	struct pt_nl_obj o;
	int len, r;

	if (d->done)
		return 0;
	len = pt_nl_recv(d->sock, buf, sizeof(buf), 5000);
	if (len < 0)
		return len;
	d->datagrams++;
	for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, len);
	     nlh = NLMSG_NEXT(nlh, len)) {
		if (nlh->nlmsg_seq != d->seq)
			return -EBADMSG;
		if (nlh->nlmsg_type == NLMSG_DONE) {
			d->done = true;
			d->end_type = NLMSG_DONE;
			if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(int)))
				return 0;
			memcpy(&r, NLMSG_DATA(nlh), sizeof(r));
			return r < 0 ? r : 0;
		}
		if (nlh->nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr e;

			d->done = true;
			d->end_type = NLMSG_ERROR;
			if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(e)))
				return -EBADMSG;
			memcpy(&e, NLMSG_DATA(nlh), sizeof(e));
			/* An ack (0) does not end a dump: malformed. */
			return e.error < 0 ? e.error : -EBADMSG;
		}
		if (nlh->nlmsg_type != d->family ||
		    !(nlh->nlmsg_flags & NLM_F_MULTI))
			return -EBADMSG;
		r = pt_nl_parse_obj(nlh, &o);
		if (r)
			return r;
		if (*n < max)
			objs[*n] = o;
		(*n)++;
	}
	return len ? -EBADMSG : 1;
}

void pt_nl_dump_close(struct pt_nl_dump *d)
{
	if (d->sock >= 0)
		close(d->sock);
	d->sock = -1;
}

int pt_nl_dump_objects(struct pt_nl_obj *objs, int max, int *n,
		       int *datagrams)
{
	struct pt_nl_dump d;
	int r;

	*n = 0;
	r = pt_nl_dump_start(&d);
	if (r)
		return r;
	do
		r = pt_nl_dump_next(&d, objs, max, n);
	while (r == 1);
	if (datagrams)
		*datagrams = d.datagrams;
	pt_nl_dump_close(&d);
	if (!r && *n > max)
		r = -ENOSPC;
	return r;
}

int pt_nl_events_open(struct pt_nl_events *ev)
{
	int r;

	memset(ev, 0, sizeof(*ev));
	ev->sock = -1;
	r = pc_genl_resolve(&ev->family, &ev->group);
	if (r)
		return r;
	ev->sock = pt_nl_raw_socket();
	if (ev->sock < 0) {
		r = ev->sock;
		ev->sock = -1;
		return r;
	}
	if (setsockopt(ev->sock, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
		       &ev->group, sizeof(ev->group))) {
		r = -errno;
		pt_nl_events_close(ev);
		return r;
	}
	return 0;
}

int pt_nl_events_next(struct pt_nl_events *ev, struct pt_nl_event *out,
		      unsigned int ms)
{
	struct nlattr *tb[PTASK_A_MAX + 1];
	struct nlmsghdr *nlh;
	int rem, r;

	for (;;) {
		if (ev->off >= ev->len) {
			r = pt_nl_recv(ev->sock, ev->buf, sizeof(ev->buf), ms);
			if (r < 0)
				return r;
			ev->len = r;
			ev->off = 0;
		}
		nlh = (struct nlmsghdr *)(ev->buf + ev->off);
		rem = ev->len - ev->off;
		if (!NLMSG_OK(nlh, rem)) {
			ev->off = ev->len;
			return -EBADMSG;
		}
		ev->off += (int)NLMSG_ALIGN(nlh->nlmsg_len);
		if (nlh->nlmsg_type != ev->family)
			continue;
		memset(out, 0, sizeof(*out));
		r = pt_nl_parse(nlh, &out->cmd, tb, &out->attrs);
		if (r)
			return r;
		if (pt_nl_u32(tb[PTASK_A_EVENT], &out->event) ||
		    pt_nl_u32(tb[PTASK_A_OBJ_TYPE], &out->type) ||
		    pt_nl_u32(tb[PTASK_A_OBJ_HANDLE], &out->handle))
			return -EBADMSG;
		return 0;
	}
}

int pt_nl_events_drain(struct pt_nl_events *ev, struct pt_nl_event *out,
		       int max, unsigned int quiet_ms)
{
	struct pt_nl_event e;
	int n = 0, r;

	while ((r = pt_nl_events_next(ev, &e, quiet_ms)) == 0) {
		if (n < max)
			out[n] = e;
		n++;
	}
	return r == -ETIMEDOUT ? n : r;
}

void pt_nl_events_close(struct pt_nl_events *ev)
{
	if (ev->sock >= 0)
		close(ev->sock);
	ev->sock = -1;
}

/* ------------------------------------------------------------------ */
/* identities                                                          */
/* ------------------------------------------------------------------ */

int pt_drop_all_caps(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

int pt_keep_caps(__u64 mask)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	int i;

	memset(data, 0, sizeof(data));
	for (i = 0; i < 2; i++) {
		data[i].effective = (__u32)(mask >> (32 * i));
		data[i].permitted = data[i].effective;
	}
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

int pt_become(uid_t uid)
{
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -errno;
	return 0;
}

/* ------------------------------------------------------------------ */
/* the copy executor                                                   */
/* ------------------------------------------------------------------ */

static void pt_sort_ports(const struct ptask_invocation_port **p, int n)
{
	const struct ptask_invocation_port *t;
	int i, j;

	for (i = 1; i < n; i++) {
		t = p[i];
		for (j = i; j > 0 && p[j - 1]->index > t->index; j--)
			p[j] = p[j - 1];
		p[j] = t;
	}
}

static int pt_copy_into(int fd, const struct ptask_invocation_port *src,
			__u64 dst_off, __u64 bytes)
{
	void *d, *s;
	int r = 0;

	d = pt_map(fd, dst_off, bytes, PROT_READ | PROT_WRITE);
	if (!d)
		return -errno;
	if (src) {
		s = pt_map(fd, src->mmap_offset, bytes, PROT_READ);
		if (!s)
			r = -errno;
		else {
			memcpy(d, s, bytes);
			munmap(s, bytes);
		}
	} else {
		memset(d, 0, bytes);
	}
	munmap(d, bytes);
	return r;
}

int pt_exec_copy_one(int fd, const struct ptask_invocation *inv,
		     const struct ptask_invocation_port *ports, __s32 status,
		     int verbose)
{
	const struct ptask_invocation_port *in[PTASK_MAX_PORTS];
	const struct ptask_invocation_port *out[PTASK_MAX_PORTS];
	struct ptask_exec_output outs[PTASK_MAX_PORTS];
	const struct ptask_invocation_port *p, *src;
	int nin = 0, nout = 0, j, r = 0, made = 0;
	__u64 t0, gpu_ns = 0, bytes, off;
	__u32 i;

	if (status)
		return pt_exec_complete(fd, inv->id, status, 0, NULL, 0);
	for (i = 0; i < inv->n_ports && i < PTASK_MAX_PORTS; i++) {
		p = &ports[inv->first_port + i];
		if (p->kind == PTASK_PORT_OUTPUT)
			out[nout++] = p;
		else
			in[nin++] = p;
	}
	pt_sort_ports(in, nin);
	pt_sort_ports(out, nout);
	for (j = 0; j < nout; j++) {
		src = j < nin ? in[j] : NULL;
		bytes = src ? src->bytes : (out[j]->bytes ? out[j]->bytes : 8);
		r = pt_db_create(fd, bytes, 0, src ? src->records : 0,
				 &outs[j].datablock, &off, NULL);
		if (r)
			goto err_release;
		made++;
		outs[j].index = out[j]->index;
		t0 = pt_now_ns();
		r = pt_copy_into(fd, src, off, bytes);
		gpu_ns += pt_now_ns() - t0;
		if (r)
			goto err_release;
		if (verbose)
			fprintf(stderr, "test_executor: invocation %llu: port %u (datablock %u, %llu bytes) -> port %u (datablock %u)\n",
				(unsigned long long)inv->id,
				src ? src->index : 0, src ? src->datablock : 0,
				(unsigned long long)bytes, outs[j].index,
				outs[j].datablock);
	}
	r = pt_exec_complete(fd, inv->id, 0, gpu_ns, outs, (__u32)nout);
	if (!r) {
		if (verbose)
			fprintf(stderr, "test_executor: invocation %llu of ptask %u completed (%d outputs, %llu ns)\n",
				(unsigned long long)inv->id, inv->ptask, nout,
				(unsigned long long)gpu_ns);
		return 0;
	}
err_release:
	/* After -ECANCELED the kernel already released them: ignore. */
	for (j = 0; j < made; j++)
		pt_db_release(fd, outs[j].datablock);
	if (verbose)
		fprintf(stderr, "test_executor: invocation %llu failed: %s\n",
			(unsigned long long)inv->id, strerror(-r));
	return r;
}

static void *pt_executor_main(void *arg)
{
	struct pt_executor *ex = arg;
	struct ptask_invocation *inv;
	struct ptask_invocation_port *ports;
	__u32 n_inv, n_ports, i;
	int r;

	inv = calloc(PT_EXEC_BATCH, sizeof(*inv));
	ports = calloc(PT_EXEC_PORTS, sizeof(*ports));
	if (!inv || !ports) {
		__atomic_add_fetch(&ex->errors, 1, __ATOMIC_SEQ_CST);
		goto out;
	}
	while (!__atomic_load_n(&ex->stop, __ATOMIC_SEQ_CST)) {
		r = pt_exec_take(ex->fd, 0, pt_deadline_ms(50), inv,
				 PT_EXEC_BATCH, ports, PT_EXEC_PORTS, &n_inv,
				 &n_ports);
		if (r == -ETIMEDOUT || r == -EINTR || r == -EAGAIN)
			continue;
		if (r) {
			ex->last_error = r;
			__atomic_add_fetch(&ex->errors, 1, __ATOMIC_SEQ_CST);
			pt_sleep_ms(5);
			continue;
		}
		__atomic_add_fetch(&ex->taken, n_inv, __ATOMIC_SEQ_CST);
		for (i = 0; i < n_inv; i++) {
			ex->last_owner_pid = (__u64)(__u32)inv[i].owner_pid;
			r = pt_exec_copy_one(ex->fd, &inv[i], ports,
					     ex->status, 0);
			if (!r) {
				__atomic_add_fetch(&ex->completed, 1,
						   __ATOMIC_SEQ_CST);
			} else if (r == -ECANCELED) {
				__atomic_add_fetch(&ex->canceled, 1,
						   __ATOMIC_SEQ_CST);
			} else {
				ex->last_error = r;
				__atomic_add_fetch(&ex->errors, 1,
						   __ATOMIC_SEQ_CST);
			}
		}
	}
out:
	free(inv);
	free(ports);
	return NULL;
}

int pt_executor_start(struct pt_executor *ex)
{
	int r;

	ex->fd = pt_open();
	if (ex->fd < 0)
		return ex->fd;
	r = pt_nl_register(ex->fd);
	if (r)
		goto err_close;
	ex->stop = 0;
	r = -pthread_create(&ex->thread, NULL, pt_executor_main, ex);
	if (r)
		goto err_close;
	ex->running = true;
	return 0;
err_close:
	close(ex->fd);
	ex->fd = -1;
	return r;
}

void pt_executor_stop(struct pt_executor *ex)
{
	if (ex->running) {
		__atomic_store_n(&ex->stop, 1, __ATOMIC_SEQ_CST);
		pthread_join(ex->thread, NULL);
		ex->running = false;
	}
	if (ex->fd >= 0) {
		close(ex->fd);
		ex->fd = -1;
	}
}

unsigned long pt_executor_completed(struct pt_executor *ex)
{
	return __atomic_load_n(&ex->completed, __ATOMIC_SEQ_CST);
}

int pt_executor_wait(struct pt_executor *ex, unsigned long n,
		     unsigned int ms)
{
	__u64 deadline = pt_deadline_ms(ms);

	while (pt_executor_completed(ex) < n) {
		if (pt_now_ns() > deadline)
			return -ETIMEDOUT;
		pt_sleep_ms(2);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* graph shapes                                                        */
/* ------------------------------------------------------------------ */

int pt_build_copy(int fd, const struct pt_copy_spec *s,
		  struct pt_copy_graph *g)
{
	bool named = s->name && s->name[0];
	__u32 flags = PTASK_GRAPH_CREATE | (named ? PTASK_GRAPH_EXCL : 0);
	char name[16];
	int i, r, n = s->n;

	if (n < 1 || n > PT_COPY_MAX)
		return -EINVAL;
	memset(g, 0, sizeof(*g));
	g->n = n;
	r = pt_graph_open(fd, s->name, flags, s->mode ? s->mode : 0600,
			  &g->graph);
	if (r)
		return r;
	if (s->kind == PTASK_KIND_CPU)
		r = pt_ptask_open_cpu(fd, g->graph, 2 * n, "copy", &g->ptask);
	else
		r = pt_ptask_open_gpu(fd, g->graph, 2 * n, "copy", &g->ptask);
	if (r)
		return r;
	for (i = 0; i < n; i++) {
		r = pt_port_open(fd, g->ptask,
				 (s->sticky_mask >> i) & 1 ? PTASK_PORT_STICKY
							   : PTASK_PORT_INPUT,
				 0, 0, i, 0, NULL, &g->in_port[i], NULL);
		if (r)
			return r;
	}
	for (i = 0; i < n; i++) {
		r = pt_port_open(fd, g->ptask, PTASK_PORT_OUTPUT, 0, 0, n + i,
				 0, NULL, &g->out_port[i], NULL);
		if (r)
			return r;
	}
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "in%d", i);
		r = pt_channel_open(fd, g->graph, 0, g->in_port[i],
				    s->in_cap ? s->in_cap : 4, 0, name,
				    &g->in_chan[i]);
		if (r)
			return r;
	}
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "out%d", i);
		r = pt_channel_open(fd, g->graph, g->out_port[i], 0,
				    s->out_cap ? s->out_cap : 4, 0, name,
				    &g->out_chan[i]);
		if (r)
			return r;
	}
	return s->run ? pt_graph_run(fd, g->graph) : 0;
}

int pt_build_copy1(int fd, bool run, struct pt_copy_graph *g)
{
	struct pt_copy_spec s = { .kind = PTASK_KIND_GPU, .n = 1, .run = run };

	return pt_build_copy(fd, &s, g);
}

int pt_build_chain(int fd, const char *name, int n, __u32 kind, __u32 cap,
		   struct pt_chain *c)
{
	bool named = name && name[0];
	char nm[16];
	int i, r;

	if (n < 1 || n > PT_CHAIN_MAX)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->n = n;
	r = pt_graph_open(fd, name, PTASK_GRAPH_CREATE |
			  (named ? PTASK_GRAPH_EXCL : 0), 0600, &c->graph);
	if (r)
		return r;
	for (i = 0; i < n; i++) {
		snprintf(nm, sizeof(nm), "stage%d", i);
		if (kind == PTASK_KIND_CPU)
			r = pt_ptask_open_cpu(fd, c->graph, 2, nm, &c->ptask[i]);
		else
			r = pt_ptask_open_gpu(fd, c->graph, 2, nm, &c->ptask[i]);
		if (r)
			return r;
		r = pt_port_open(fd, c->ptask[i], PTASK_PORT_INPUT, 0, 0, 0, 0,
				 NULL, &c->in_port[i], NULL);
		if (r)
			return r;
		r = pt_port_open(fd, c->ptask[i], PTASK_PORT_OUTPUT, 0, 0, 1, 0,
				 NULL, &c->out_port[i], NULL);
		if (r)
			return r;
	}
	for (i = 0; i <= n; i++) {
		snprintf(nm, sizeof(nm), "c%d", i);
		r = pt_channel_open(fd, c->graph, i ? c->out_port[i - 1] : 0,
				    i < n ? c->in_port[i] : 0, cap, 0, nm,
				    &c->chan[i]);
		if (r)
			return r;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* per-test environment                                                */
/* ------------------------------------------------------------------ */

void pt_skip_exit(void)
{
	fflush(stdout);
	fflush(stderr);
	_exit(255);	/* what the harness reads as SKIP */
}

int pt_env_init(struct pt_env *e)
{
	memset(e, 0, sizeof(*e));
	if (access(PT_DEV_PATH, F_OK) || access(PTASK_SYSFS_DIR, F_OK))
		return -ENODEV;
	if (pt_counts_read(e->base) || pt_executors_read(&e->base_executors))
		return -ENODEV;
	return 0;
}

static int pt_env_add_fd(struct pt_env *e, int fd)
{
	if (fd < 0)
		return fd;
	if (e->nfds == PT_ENV_FDS) {
		close(fd);
		return -EMFILE;
	}
	e->fds[e->nfds++] = fd;
	return fd;
}

int pt_env_open_flags(struct pt_env *e, int flags)
{
	return pt_env_add_fd(e, pt_open_flags(flags));
}

int pt_env_open(struct pt_env *e)
{
	return pt_env_open_flags(e, 0);
}

void pt_env_close(struct pt_env *e, int fd)
{
	int i;

	for (i = 0; i < e->nfds; i++) {
		if (e->fds[i] == fd) {
			e->fds[i] = e->fds[--e->nfds];
			close(fd);
			return;
		}
	}
}

void *pt_env_map(struct pt_env *e, int fd, __u64 offset, size_t len)
{
	void *p;

	if (e->nmaps == PT_ENV_MAPS) {
		errno = ENOMEM;
		return NULL;
	}
	p = pt_map(fd, offset, len, PROT_READ | PROT_WRITE);
	if (!p)
		return NULL;
	e->maps[e->nmaps].addr = p;
	e->maps[e->nmaps].len = len;
	e->nmaps++;
	return p;
}

void pt_env_unmap(struct pt_env *e, void *addr)
{
	int i;

	for (i = 0; i < e->nmaps; i++) {
		if (e->maps[i].addr == addr) {
			munmap(addr, e->maps[i].len);
			e->maps[i] = e->maps[--e->nmaps];
			return;
		}
	}
}

void pt_env_track_pid(struct pt_env *e, pid_t pid)
{
	if (pid > 0 && e->npids < PT_ENV_PIDS)
		e->pids[e->npids++] = pid;
}

static void pt_env_untrack_pid(struct pt_env *e, pid_t pid)
{
	int i;

	for (i = 0; i < e->npids; i++)
		if (e->pids[i] == pid)
			e->pids[i] = e->pids[--e->npids];
}

int pt_env_wait_pid(struct pt_env *e, pid_t pid, unsigned int ms)
{
	__u64 deadline = pt_deadline_ms(ms);
	int status;
	pid_t r;

	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid) {
			pt_env_untrack_pid(e, pid);
			return status;
		}
		if (r < 0) {
			pt_env_untrack_pid(e, pid);
			return -errno;
		}
		if (pt_now_ns() > deadline)
			return -ETIMEDOUT;
		pt_sleep_ms(5);
	}
}

struct pt_executor *pt_env_executor(struct pt_env *e)
{
	struct pt_executor *ex;

	if (e->nexecs == PT_ENV_EXECS)
		return NULL;
	ex = &e->execs[e->nexecs];
	memset(ex, 0, sizeof(*ex));
	ex->fd = -1;
	if (pt_executor_start(ex))
		return NULL;
	e->nexecs++;
	return ex;
}

const char *pt_executor_path(void)
{
	const char *p = getenv(PT_EXECUTOR_ENV);

	return p && *p ? p : PT_EXECUTOR_DEFAULT;
}

pid_t pt_env_spawn_executor(struct pt_env *e, const char *const *argv_extra)
{
	const char *path = pt_executor_path();
	const char *argv[16] = { "test_executor" };
	__u64 before, deadline;
	int i, n = 1, status;
	pid_t pid;

	if (access(path, X_OK))
		return -ENOENT;
	if (pt_executors_read(&before))
		return -ENODEV;
	for (i = 0; argv_extra && argv_extra[i] && n < 15; i++)
		argv[n++] = argv_extra[i];
	argv[n] = NULL;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execv(path, (char *const *)argv);
		_exit(127);
	}
	pt_env_track_pid(e, pid);
	deadline = pt_deadline_ms(PT_WAIT_MS);
	for (;;) {
		__u64 now;

		if (!pt_executors_read(&now) && now > before)
			return pid;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			pt_env_untrack_pid(e, pid);
			return -ECHILD;
		}
		if (pt_now_ns() > deadline)
			return -ETIMEDOUT;
		pt_sleep_ms(5);
	}
}

int pt_env_fini(struct pt_env *e)
{
	__u64 deadline;
	int i, bad, status;

	for (i = 0; i < e->nexecs; i++)
		pt_executor_stop(&e->execs[i]);
	e->nexecs = 0;
	for (i = 0; i < e->npids; i++)
		kill(e->pids[i], SIGTERM);
	deadline = pt_deadline_ms(1000);
	while (e->npids) {
		pid_t pid = e->pids[0];

		if (waitpid(pid, &status, WNOHANG) == 0) {
			if (pt_now_ns() < deadline) {
				pt_sleep_ms(5);
				continue;
			}
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
		pt_env_untrack_pid(e, pid);
	}
	while (e->nmaps)
		pt_env_unmap(e, e->maps[0].addr);
	while (e->nfds)
		pt_env_close(e, e->fds[0]);
	bad = pt_counts_wait_all(e->base, PT_WAIT_MS, "teardown");
	if (pt_executors_wait(e->base_executors, PT_WAIT_MS)) {
		fprintf(stderr, "# teardown: executors did not return to %llu\n",
			(unsigned long long)e->base_executors);
		bad++;
	}
	return bad;
}

/* ------------------------------------------------------------------ */
/* signals                                                             */
/* ------------------------------------------------------------------ */

static void pt_noop_handler(int sig)
{
	(void)sig;
}

int pt_sig_noop(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = pt_noop_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART: the call returns EINTR */
	return sigaction(sig, &sa, NULL) ? -errno : 0;
}

/*
 * Signals every @ms until stopped: should the first signal land before the
 * target went to sleep in its call, the next one still interrupts it.
 */
static void *pt_kicker_main(void *arg)
{
	struct pt_kicker *k = arg;

	while (!__atomic_load_n(&k->stop, __ATOMIC_SEQ_CST)) {
		pt_sleep_ms(k->ms);
		if (__atomic_load_n(&k->stop, __ATOMIC_SEQ_CST))
			break;
		pthread_kill(k->target, k->sig);
	}
	return NULL;
}

int pt_kick_after(struct pt_kicker *k, pthread_t target, int sig,
		  unsigned int ms)
{
	k->target = target;
	k->sig = sig;
	k->ms = ms;
	k->stop = 0;
	return -pthread_create(&k->thread, NULL, pt_kicker_main, k);
}

void pt_kick_join(struct pt_kicker *k)
{
	__atomic_store_n(&k->stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(k->thread, NULL);
}
