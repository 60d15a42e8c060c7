// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * main.c - ptaskd: options, start-up and orderly shutdown.  Nothing else.
 *
 *   ptaskd [--mode kernel|user|auto] [--backend cuda|sim|cpu|auto]
 *          [--socket PATH] [--socket-mode OCTAL] [--policy NAME]
 *          [--isolation client|shared] [--sim-config FILE]
 *          [--spin-us N] [--budgets on|off] [--host-kernels DIR]
 *          [--inflight N] [--lanes N] [--inplace-max BYTES]
 *          [--uid-bytes BYTES] [-v]
 *
 * kernel mode: register with ptask.ko as its executor (source_kernel.c);
 * user mode:   hold the namespace here and serve it on a UNIX socket
 *              (ns_user.c, server.c).
 * Either way the engine (engine.c) runs the invocations on the backend.
 *
 * Signals are blocked in every thread and taken here with sigwait():
 * SIGTERM and SIGINT drain (stop taking, finish what was taken, hang up
 * the clients) and exit 0; SIGHUP reopens nothing and is ignored.  After
 * an error that leaves the backend unusable (pd_fatal(): a sticky CUDA
 * error) the same drain runs and the exit status is PD_EXIT_FATAL (70),
 * so that systemd's Restart=on-failure starts a fresh daemon.
 */
#include <errno.h>
#include <pwd.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "daemon/backend/backend.h"
#include "daemon/backend/host.h"
#include "daemon/backend/twins.h"
#include "daemon/engine/engine.h"
#include "uapi/ptaskd.h"
#include "daemon/fatal.h"
#include "daemon/log.h"
#include "daemon/trace.h"
#include "daemon/user/ns_user.h"
#include "daemon/user/ns_admin.h"
#include "daemon/user/server.h"
#include "daemon/user/source_remote.h"
#include "daemon/kernel/netlink.h"
#include "daemon/kernel/source_kernel.h"
#include "daemon/supervisor.h"

#define PTASKD_VERSION	"1.0"
/* A pipe directory that cannot exist: no MPS control daemon is found. */
#define PD_NO_MPS_DIR	"/dev/null/ptaskd-no-mps"

/* Where `make install` puts twin libraries (the build passes it). */
#ifndef PD_TWIN_DIR
#define PD_TWIN_DIR	"/usr/local/lib/ptask/twins"
#endif

struct options {
	const char *mode;
	const char *backend;
	const char *socket;
	mode_t socket_mode;
	const char *policy;
	bool shared;
	const char *sim_config;
	unsigned long spin_us;
	int budgets;		/* -1: the core's default (on) */
	const char *twin_dir;
	bool twin_dir_named;	/* --host-kernels or $PTASKD_HOST_KERNELS */
	unsigned long inflight;	/* 0: the engine's default */
	unsigned long lanes;	/* 0: the backend's default */
	bool inplace_set;
	unsigned long long inplace_max;
	unsigned long long uid_bytes;	/* 0: no per-uid limit */
	long long exec_uid;		/* one uid's executor; -1 */
	int exec_fd;			/* user mode: its lifeline; -1 */
	bool executors_per_uid;		/* --executors uid or process */
	bool per_process;		/* --executors process */
	unsigned long executor_idle_s;
	bool mps;			/* --mps: executors may use NVIDIA MPS */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ptaskd [options]\n"
		"  --mode kernel|user|auto   kernel: be ptask.ko's executor; user: hold the\n"
		"                            namespace and serve --socket (auto: kernel when\n"
		"                            /dev/ptask and its netlink family exist)\n"
		"  --backend cuda|sim|cpu|auto  accelerators (auto: cuda if a GPU answers, else cpu)\n"
		"  --socket PATH             user mode's socket (env PTASK_SOCKET; default %s)\n"
		"  --socket-mode OCTAL       its permission bits (default 0666)\n"
		"  --policy NAME             first-available, fifo, priority, data-aware (default)\n"
		"  --isolation client|shared one CUDA context per client per GPU (default), or\n"
		"                            one per GPU shared by every client\n"
		"  --sim-config FILE         simulated accelerators (backend sim)\n"
		"  --spin-us N               user mode: a connection polls this long (us) for\n"
		"                            its client's next call before it sleeps (50)\n"
		"  --budgets on|off          user mode: PTSched's per-process GPU budgets\n"
		"                            (default on; kernel mode: /sys/kernel/ptask/sched)\n"
		"  --uid-bytes BYTES         user mode: the most datablock memory one uid other\n"
		"                            than root may hold; more is -EDQUOT (0: no limit,\n"
		"                            the default; kernel mode: /sys/kernel/ptask/limits)\n"
		"  --executors shared|uid|process  this process executes for everyone\n"
		"                            (default), or it supervises an executor process\n"
		"                            per uid that owns ptasks (--exec-uid), started on\n"
		"                            demand and restarted if it dies (user mode: ptaskd\n"
		"                            keeps the namespace, each executor runs as its\n"
		"                            uid); process (user mode): one per client process\n"
		"  --executor-idle-s N       --executors uid: stop a uid's executor after N s\n"
		"                            without ptasks (1..86400; 60)\n"
		"  --exec-uid UID            be the executor of this uid (a number or a user\n"
		"                            name) alone: only its ptasks run here, and nowhere\n"
		"                            else while this runs (user mode: with --exec-fd)\n"
		"  --exec-fd N               user mode, set by --executors uid: the executor\n"
		"                            connection ptaskd handed this process\n"
		"  --mps                     --executors uid: the executors may use NVIDIA MPS\n"
		"                            when its control daemon runs; they then all keep\n"
		"                            this process's uid, to share one MPS server (else\n"
		"                            they bypass MPS, and in user mode run as their uid)\n"
		"  --host-kernels DIR        twin libraries for the cpu and sim backends\n"
		"                            (env PTASKD_HOST_KERNELS; default %s)\n"
		"  --inflight N              jobs in flight per device at once (1..%u; 64)\n"
		"  --lanes N                 cuda and cpu: queues per memory space (streams,\n"
		"                            worker threads; 1..%u; default cuda 4, cpu one\n"
		"                            per core); sim: the lanes key of --sim-config\n"
		"  --inplace-max BYTES       inputs and client outputs up to this size are used\n"
		"                            in place in host memory, not copied (0: never;\n"
		"                            default: what the backend measured)\n"
		"  -v, --verbose             more log lines (twice: debug)\n"
		"  -h, --help, --version\n"
		"Logs go to stderr.  SIGTERM or SIGINT: finish the work taken, then exit.\n"
		"Exit status 70: a GPU error poisoned CUDA for the process (restart it).\n",
		PTASKD_SOCKET_DEFAULT, PD_TWIN_DIR, PD_INFLIGHT_MAX,
		PD_MAX_LANES);
}

/* A decimal number in [@min, @max] from option @name's @arg. */
static int parse_ulong(const char *name, const char *arg,
		       unsigned long long min, unsigned long long max,
		       unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(arg, &end, 10);
	if (!*arg || *end || errno || *arg == '-' || *out < min || *out > max) {
		fprintf(stderr, "ptaskd: --%s is %llu..%llu\n", name, min, max);
		return 2;
	}
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "backend", required_argument, NULL, 'b' },
		{ "socket", required_argument, NULL, 's' },
		{ "socket-mode", required_argument, NULL, 'M' },
		{ "policy", required_argument, NULL, 'p' },
		{ "isolation", required_argument, NULL, 'i' },
		{ "sim-config", required_argument, NULL, 'c' },
		{ "spin-us", required_argument, NULL, 'S' },
		{ "budgets", required_argument, NULL, 'B' },
		{ "host-kernels", required_argument, NULL, 'H' },
		{ "inflight", required_argument, NULL, 'I' },
		{ "lanes", required_argument, NULL, 'L' },
		{ "inplace-max", required_argument, NULL, 'P' },
		{ "uid-bytes", required_argument, NULL, 'U' },
		{ "exec-uid", required_argument, NULL, 'E' },
		{ "executors", required_argument, NULL, 'X' },
		{ "executor-idle-s", required_argument, NULL, 'D' },
		{ "exec-fd", required_argument, NULL, 'F' },
		{ "mps", no_argument, NULL, 'G' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ }
	};
	unsigned long long v;
	char *end;
	int ch;

	o->mode = "auto";
	o->backend = "auto";
	o->socket = getenv("PTASK_SOCKET") ?: PTASKD_SOCKET_DEFAULT;
	o->socket_mode = 0666;
	o->policy = "data-aware";
	o->sim_config = "";
	o->spin_us = PD_SERVER_SPIN_US;
	o->budgets = -1;
	o->exec_uid = -1;
	o->exec_fd = -1;
	o->executor_idle_s = 60;
	o->twin_dir = getenv("PTASKD_HOST_KERNELS");
	o->twin_dir_named = o->twin_dir != NULL;
	if (!o->twin_dir)
		o->twin_dir = PD_TWIN_DIR;
	while ((ch = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'm': o->mode = optarg; break;
		case 'b': o->backend = optarg; break;
		case 's': o->socket = optarg; break;
		case 'M':
			o->socket_mode = (mode_t)strtoul(optarg, &end, 8);
			if (*end || o->socket_mode > 0777) {
				fprintf(stderr, "ptaskd: bad --socket-mode '%s'\n", optarg);
				return 2;
			}
			break;
		case 'p': o->policy = optarg; break;
		case 'i':
			if (strcmp(optarg, "client") && strcmp(optarg, "shared")) {
				fprintf(stderr, "ptaskd: --isolation is client or shared\n");
				return 2;
			}
			o->shared = !strcmp(optarg, "shared");
			break;
		case 'c': o->sim_config = optarg; break;
		case 'S':
			o->spin_us = strtoul(optarg, &end, 10);
			if (!*optarg || *end || o->spin_us > 1000000) {
				fprintf(stderr, "ptaskd: --spin-us is 0..1000000\n");
				return 2;
			}
			break;
		case 'B':
			if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
				fprintf(stderr, "ptaskd: --budgets is on or off\n");
				return 2;
			}
			o->budgets = !strcmp(optarg, "on");
			break;
		case 'H':
			o->twin_dir = optarg;
			o->twin_dir_named = true;
			break;
		case 'I':
			if (parse_ulong("inflight", optarg, 1, PD_INFLIGHT_MAX,
					&v))
				return 2;
			o->inflight = (unsigned long)v;
			break;
		case 'L':
			if (parse_ulong("lanes", optarg, 1, PD_MAX_LANES, &v))
				return 2;
			o->lanes = (unsigned long)v;
			break;
		case 'P':
			if (parse_ulong("inplace-max", optarg, 0, UINT64_MAX,
					&o->inplace_max))
				return 2;
			o->inplace_set = true;
			break;
		case 'U':
			if (parse_ulong("uid-bytes", optarg, 0, UINT64_MAX,
					&o->uid_bytes))
				return 2;
			break;
		case 'X':
			if (strcmp(optarg, "shared") && strcmp(optarg, "uid") &&
			    strcmp(optarg, "process")) {
				fprintf(stderr, "ptaskd: --executors is shared, uid or process\n");
				return 2;
			}
			o->per_process = !strcmp(optarg, "process");
			o->executors_per_uid = strcmp(optarg, "shared") != 0;
			break;
		case 'D':
			if (parse_ulong("executor-idle-s", optarg, 1, 86400, &v))
				return 2;
			o->executor_idle_s = (unsigned long)v;
			break;
		case 'G':
			o->mps = true;
			break;
		case 'F':
			if (parse_ulong("exec-fd", optarg, 3, 1023, &v))
				return 2;
			o->exec_fd = (int)v;
			break;
		case 'E': {
			const struct passwd *pw = getpwnam(optarg);

			if (pw) {
				o->exec_uid = pw->pw_uid;
				break;
			}
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (!*optarg || *end || errno || *optarg == '-' ||
			    v >= UINT32_MAX) {
				fprintf(stderr, "ptaskd: --exec-uid: '%s' is neither a user nor a uid\n",
					optarg);
				return 2;
			}
			o->exec_uid = (long long)v;
			break;
		}
		case 'v': pd_log_level++; break;
		case 'h': usage(stdout); return 1;
		case 'V': printf("ptaskd %s\n", PTASKD_VERSION); return 1;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ptaskd: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (strcmp(o->mode, "auto") && strcmp(o->mode, "kernel") &&
	    strcmp(o->mode, "user")) {
		fprintf(stderr, "ptaskd: --mode is kernel, user or auto\n");
		return 2;
	}
	if (o->lanes && !strcmp(o->backend, "sim")) {
		fprintf(stderr, "ptaskd: --lanes is for cuda and cpu; the sim's lanes are its configuration's lanes key\n");
		return 2;
	}
	if (o->executors_per_uid && (o->exec_uid >= 0 || o->exec_fd >= 0)) {
		fprintf(stderr, "ptaskd: --executors uid starts the --exec-uid executors itself\n");
		return 2;
	}
	if (o->per_process && !strcmp(o->mode, "kernel")) {
		fprintf(stderr, "ptaskd: --executors process is user mode's for now (kernel mode: uid)\n");
		return 2;
	}
	if (o->mps && !o->executors_per_uid && o->exec_uid < 0) {
		fprintf(stderr, "ptaskd: --mps is for --executors uid\n");
		return 2;
	}
	if (o->exec_fd >= 0 && (o->exec_uid < 0 || !strcmp(o->mode, "kernel"))) {
		fprintf(stderr, "ptaskd: --exec-fd goes with --mode user and --exec-uid (ptaskd --executors uid passes them)\n");
		return 2;
	}
	if (o->exec_uid >= 0 && !strcmp(o->mode, "user") && o->exec_fd < 0) {
		fprintf(stderr, "ptaskd: --exec-uid in user mode needs the --exec-fd its supervisor gives: run ptaskd --mode user --executors uid\n");
		return 2;
	}
	if (pd_policy_parse(o->policy) < 0) {
		fprintf(stderr, "ptaskd: unknown --policy '%s'\n", o->policy);
		return 2;
	}
	return 0;
}

/* The config string of cuda or cpu: "shared" and "lanes=N" items. */
static const char *backend_config(const struct options *o, bool cuda,
				  char *buf, size_t len)
{
	bool shared = cuda && o->shared;

	if (!o->lanes)
		return shared ? "shared" : "";
	snprintf(buf, len, "%slanes=%lu", shared ? "shared," : "", o->lanes);
	return buf;
}

/* Open the backend @name ("auto": cuda, else cpu). */
static int open_backend(const struct options *o, struct pd_backend *be)
{
	const char *name = o->backend;
	const char *config;
	char buf[64];
	int err;

	if (!strcmp(name, "auto")) {
		be->ops = &pd_backend_cuda;
		err = be->ops->init(be, backend_config(o, true, buf,
						       sizeof(buf)));
		if (!err)
			return 0;
		pd_log_info("no CUDA device (%s): using the cpu backend",
			    strerror(-err));
		name = "cpu";
	}
	be->ops = pd_backend_find(name);
	if (!be->ops) {
		pd_log_err("unknown --backend '%s'", name);
		return -EINVAL;
	}
	config = !strcmp(name, "sim") ? o->sim_config :
		 backend_config(o, !strcmp(name, "cuda"), buf, sizeof(buf));
	err = be->ops->init(be, config);
	if (err)
		pd_log_err("backend %s: %s", name, strerror(-err));
	return err;
}

static void log_devices(const struct pd_backend *be)
{
	uint32_t i;

	for (i = 0; i < be->ndev; i++)
		pd_log_info("device %u: %s (%s, %llu MiB, strength %.2f, %u lane(s), in place up to %llu bytes)",
			    i, be->info[i].name, be->ops->name,
			    (unsigned long long)(be->info[i].memory >> 20),
			    be->info[i].strength, be->info[i].lanes,
			    (unsigned long long)be->info[i].inplace_max);
}

/* Wait for SIGTERM or SIGINT (blocked in every thread). */
static void wait_for_stop(const sigset_t *set)
{
	int sig;

	for (;;) {
		if (sigwait(set, &sig))
			continue;
		if (sig == SIGTERM || sig == SIGINT) {
			pd_log_info("%s: draining", strsignal(sig));
			return;
		}
	}
}

/* The namespace's forget notifier: a dead datablock's views go at once. */
static void engine_forget(void *engine, uint32_t handle)
{
	pd_engine_forget(engine, handle);
}

/* The namespace's opened notifier: a client's GPU ptask, made ready. */
static void engine_opened(void *engine, uint32_t ptask, int32_t owner_pid)
{
	pd_engine_prewarm(engine, ptask, owner_pid);
}

static int run_user(const struct options *o, struct pd_backend *be,
		    const struct pd_engine_config *cfg, const sigset_t *set)
{
	struct ptaskd_info info = { .version = PTASKD_PROTO_VERSION };
	struct pd_server *server;
	struct pd_engine *engine;
	struct pd_source *src;
	struct pd_ns *ns;
	int err;

	err = pd_ns_create(be, &ns);
	if (err)
		return err;
	if (o->budgets >= 0) {
		struct ptask_sched_params p = { .budgets = (uint32_t)o->budgets };

		pd_ns_sched_set(ns, PTASK_SCHED_SET_BUDGETS, &p);
	}
	pd_ns_uid_limit_set(ns, o->uid_bytes);
	err = pd_ns_source_open(ns, be->ndev, &src);
	if (err)
		goto err_ns;
	err = pd_engine_start(src, be, cfg, &engine);
	if (err)
		goto err_source;
	pd_ns_set_forget(ns, engine_forget, engine);
	pd_ns_set_opened(ns, engine_opened, engine);
	info.ndev = be->ndev;
	snprintf(info.backend, sizeof(info.backend), "%s", be->ops->name);
	snprintf(info.policy, sizeof(info.policy), "%s",
		 pd_policy_name(cfg->policy));
	err = pd_server_start(ns, engine, o->socket, o->socket_mode,
			      (uint32_t)o->spin_us, &info, &server);
	if (err) {
		pd_log_err("socket %s: %s", o->socket, strerror(-err));
		goto err_engine;
	}
	pd_log_info("user mode: serving %s (backend %s, policy %s)", o->socket,
		    be->ops->name, info.policy);
	wait_for_stop(set);
	/* Clients first: nothing new arrives while the engine drains. */
	pd_server_stop(server);
err_engine:
	pd_ns_set_opened(ns, NULL, NULL);
	pd_ns_set_forget(ns, NULL, NULL);
	pd_engine_stop(engine);
err_source:
	pd_ns_source_close(src);
err_ns:
	pd_ns_destroy(ns);
	return err;
}

/* --- user mode, --executors uid: ptaskd keeps the namespace ---------- */

struct user_sup {
	struct pd_ns *ns;
	struct pd_server *server;
	int kick;
};

static int user_owners(void *arg,
		       void (*seen)(void *seen_arg, uint32_t uid, int32_t pid),
		       void *seen_arg)
{
	struct user_sup *us = arg;

	pd_ns_ptask_owners(us->ns, seen, seen_arg);
	return 0;
}

static int user_prepare(void *arg, uint32_t uid, int *keep_fd, int *child_fd)
{
	int sv[2];

	(void)arg;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		pd_log_err("supervisor: socketpair for uid %u: %s", uid,
			   strerror(errno));
		return -errno;
	}
	*keep_fd = sv[0];
	*child_fd = sv[1];
	return 0;
}

static void user_spawned(void *arg, uint32_t uid, int32_t served, pid_t pid,
			 int keep_fd)
{
	struct user_sup *us = arg;
	const struct passwd *pw = getpwuid(uid);
	struct ptask_caller who = {
		.uid = uid, .gid = pw ? pw->pw_gid : uid, .pid = pid,
	};

	/* A refusal closes the fd: the child sees ptaskd hang up, and exits. */
	pd_server_adopt(us->server, keep_fd, &who, served);
}

/* A GPU ptask opened: its owner may need an executor started now. */
static void user_kick(void *arg, uint32_t ptask, int32_t owner_pid)
{
	struct user_sup *us = arg;
	uint64_t one = 1;

	(void)ptask;
	(void)owner_pid;
	if (write(us->kick, &one, sizeof(one)) < 0) {
		/* EAGAIN: the count is full, a look is due anyway */
	}
}

static int run_user_supervised(const struct options *o,
			       const struct pd_engine_config *cfg, int argc,
			       char **argv, const sigset_t *set)
{
	struct ptaskd_info info = { .version = PTASKD_PROTO_VERSION };
	struct user_sup us = { .kick = -1 };
	struct pd_sup_ops ops = {
		.what = "the namespace", .owners = user_owners,
		.prepare = user_prepare, .spawned = user_spawned,
		.by_process = o->per_process,
	};
	int err;

	/* No backend here: each executor registers the arenas it maps. */
	err = pd_ns_create(NULL, &us.ns);
	if (err)
		return err;
	if (o->budgets >= 0) {
		struct ptask_sched_params p = { .budgets = (uint32_t)o->budgets };

		pd_ns_sched_set(us.ns, PTASK_SCHED_SET_BUDGETS, &p);
	}
	pd_ns_uid_limit_set(us.ns, o->uid_bytes);
	us.kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (us.kick < 0) {
		err = -errno;
		goto out_ns;
	}
	ops.kick_fd = us.kick;
	snprintf(info.backend, sizeof(info.backend), "%s", o->backend);
	snprintf(info.policy, sizeof(info.policy), "%s",
		 pd_policy_name(cfg->policy));
	err = pd_server_start(us.ns, NULL, o->socket, o->socket_mode,
			      (uint32_t)o->spin_us, &info, &us.server);
	if (err) {
		pd_log_err("socket %s: %s", o->socket, strerror(-err));
		goto out_kick;
	}
	pd_ns_set_opened(us.ns, user_kick, &us);
	pd_log_info("user mode: serving %s, an executor process per %s (backend %s, policy %s)",
		    o->socket, o->per_process ? "client process" : "uid",
		    o->backend, info.policy);
	err = pd_supervise(argc, argv, (unsigned int)o->executor_idle_s, set,
			   &ops, &us);
	pd_ns_set_opened(us.ns, NULL, NULL);
	pd_server_stop(us.server);
out_kick:
	close(us.kick);
out_ns:
	pd_ns_destroy(us.ns);
	return err;
}

/*
 * An executor of --executors uid runs as the uid it serves: different
 * uids never share a process, and this one can do no more than its uid
 * could.  Root's own executor stays root.
 */
static int become_uid(uint32_t uid, bool mps)
{
	const struct passwd *pw;
	gid_t gid;

	/*
	 * MPS runs one server per uid and makes a client of another uid
	 * wait until that server has no client left: executors of several
	 * uids share it only under one uid (DOC in ptaskd.md, "MPS").
	 */
	if (mps) {
		pd_log_info("executor of uid %u keeps uid %u: --mps (one MPS server for every executor)",
			    uid, (unsigned int)geteuid());
		return 0;
	}
	if (geteuid() != 0 || uid == 0)
		return 0;
	pw = getpwuid(uid);
	gid = pw ? pw->pw_gid : (gid_t)uid;
	if ((pw ? initgroups(pw->pw_name, gid) : setgroups(0, NULL)) ||
	    setresgid(gid, gid, gid) || setresuid(uid, uid, uid)) {
		pd_log_err("executor: cannot become uid %u: %s", uid,
			   strerror(errno));
		return -errno;
	}
	/* a change of credentials clears it: die with ptaskd still */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() == 1)
		return -ESRCH;
	return 0;
}

/* User mode, --exec-fd: one uid's executor, fed by its supervisor. */
static int run_remote(const struct options *o, struct pd_backend *be,
		      const struct pd_engine_config *cfg, const sigset_t *set)
{
	struct pd_engine *engine;
	struct pd_source *src;
	uint32_t uid;
	int err;

	err = pd_remote_source_open(o->exec_fd, be, &uid, &src);
	if (err) {
		pd_log_err("executor: ptaskd refused the executor connection: %s",
			   strerror(-err));
		return err;
	}
	err = pd_engine_start(src, be, cfg, &engine);
	if (err)
		goto out_source;
	pd_remote_source_set_forget(src, engine_forget, engine);
	pd_log_info("executor of uid %u (pid %d): backend %s, policy %s", uid,
		    (int)getpid(), be->ops->name, pd_policy_name(cfg->policy));
	wait_for_stop(set);
	pd_remote_source_set_forget(src, NULL, NULL);
	pd_engine_stop(engine);
out_source:
	pd_remote_source_close(src);
	return err;
}

static const struct pd_sup_ops kernel_sup_ops = {
	.what = "ptask.ko", .owners = pd_nl_ptask_owners, .kick_fd = -1,
};

static int run_kernel(struct pd_backend *be,
		      const struct pd_engine_config *cfg, long long exec_uid,
		      const sigset_t *set)
{
	struct pd_engine *engine;
	struct pd_source *src;
	int err;

	err = pd_kernel_source_open(be, exec_uid, &src);
	if (err) {
		pd_log_err("kernel mode: cannot register with ptask.ko%s: %s",
			   exec_uid >= 0 ? " as one uid's executor" : "",
			   strerror(-err));
		return err;
	}
	if (exec_uid >= 0)
		pd_log_info("kernel mode: the executor of uid %lld alone",
			    exec_uid);
	err = pd_engine_start(src, be, cfg, &engine);
	if (err)
		goto out_source;
	pd_kernel_source_set_forget(src, engine_forget, engine);
	pd_log_info("kernel mode: executor for /dev/ptask (backend %s, policy %s)",
		    be->ops->name, pd_policy_name(cfg->policy));
	wait_for_stop(set);
	pd_kernel_source_set_forget(src, NULL, NULL);
	pd_engine_stop(engine);
out_source:
	pd_kernel_source_close(src);
	return err;
}

int main(int argc, char **argv)
{
	struct pd_engine_config cfg = { .migrate_threshold = 0.0 };
	struct pd_backend be = { };
	struct options o = { };
	sigset_t set;
	bool kernel;
	int err;

	err = parse_options(argc, argv, &o);
	if (err)
		return err == 1 ? 0 : 2;
	cfg.policy = pd_policy_parse(o.policy);
	cfg.shared_isolation = o.shared;
	cfg.max_inflight = (uint32_t)o.inflight;
	cfg.inplace_set = o.inplace_set;
	cfg.inplace_max = o.inplace_max;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (pd_trace_init()) {
		pd_log_err("PTASKD_TRACE: out of memory for the trace tables");
		return 1;
	}
	kernel = !strcmp(o.mode, "kernel") ||
		 (!strcmp(o.mode, "auto") && pd_kernel_available());
	if (!kernel && o.exec_uid >= 0 && o.exec_fd < 0) {
		pd_log_err("user mode (no ptask.ko): --exec-uid needs the connection ptaskd --executors uid hands its executors");
		return 2;
	}
	if (kernel && o.per_process) {
		pd_log_err("--executors process is user mode's for now (kernel mode: --executors uid)");
		return 2;
	}
	if (kernel && o.exec_fd >= 0) {
		pd_log_err("--exec-fd is user mode's");
		return 2;
	}
	/*
	 * Without --mps the executors bypass an MPS control daemon (the
	 * driver runs a process without MPS when it finds no control pipe),
	 * so executors of several uids never queue behind each other's MPS
	 * server.  Set before any thread starts; the children inherit it.
	 */
	if (o.executors_per_uid && !o.mps)
		setenv("CUDA_MPS_PIPE_DIRECTORY", PD_NO_MPS_DIR, 1);
	/* The supervisor opens no backend: its children each do. */
	if (o.executors_per_uid) {
		err = kernel ? pd_supervise(argc, argv,
					    (unsigned int)o.executor_idle_s,
					    &set, &kernel_sup_ops, NULL) :
			       run_user_supervised(&o, &cfg, argc, argv, &set);
		if (err)
			return 1;
		pd_log_info("stopped");
		return 0;
	}
	if (o.exec_fd >= 0 && become_uid((uint32_t)o.exec_uid, o.mps))
		return 1;
	err = open_backend(&o, &be);
	if (err)
		return 1;
	log_devices(&be);
	/*
	 * Only the host backends run twins: with cuda, ptaskd loads no
	 * application's code at all.
	 */
	if (be.ops->kernel_load == pd_twin_kernel_load &&
	    pd_twins_load_dir(o.twin_dir, o.twin_dir_named)) {
		be.ops->fini(&be);
		return 1;
	}
	err = kernel ? run_kernel(&be, &cfg, o.exec_uid, &set) :
	      o.exec_fd >= 0 ? run_remote(&o, &be, &cfg, &set) :
			       run_user(&o, &be, &cfg, &set);
	pd_trace_report();
	be.ops->fini(&be);
	pd_twins_unload_all();
	if (pd_fatal_happened())
		return pd_fatal_status();
	if (err)
		return 1;
	pd_log_info("stopped");
	return 0;
}
