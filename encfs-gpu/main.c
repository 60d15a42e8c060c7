// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * main.c - the encfs-gpu command: init, mount, passwd, --version, --help,
 * and mount(8)'s FUSE form "encfs-gpu CIPHERDIR MOUNTPOINT -o OPTIONS" (what
 * mount.fuse3 runs for `mount -t fuse.encfs-gpu` and /etc/fstab lines).
 *
 * Everything that can fail for a reason the user must hear (no config, a
 * truncated or tampered config, a wrong password, a backend that cannot
 * be had) fails here, before FUSE daemonizes, with a message on stderr
 * and a distinct exit status (see EXIT STATUS in encfs-gpu.1).
 */
#define FUSE_USE_VERSION 35
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "config.h"
#include "fs.h"
#include "keys.h"
#include "passwd.h"
#include "xts.h"

#define EG_VERSION "0.1.0"

enum {
	EXIT_USAGE = 2,
	EXIT_CONFIG = 3,	/* config missing, unreadable, truncated, malformed */
	EXIT_PASSWORD = 4,	/* wrong password, or the config was tampered with */
	EXIT_MOUNT = 5,		/* FUSE could not mount */
	EXIT_BACKEND = 6,	/* the asked-for backend is unavailable */
};

static const char usage_text[] =
	"usage:\n"
	"  encfs-gpu init [--scrypt-logn N] [--passfile F] CIPHERDIR\n"
	"  encfs-gpu mount [-f] [-d] [-s] [-o OPTIONS] [--backend gpu|cpu|auto]\n"
	"                  [--passfile F] CIPHERDIR MOUNTPOINT\n"
	"  encfs-gpu passwd [--passfile F] [--new-passfile F] [--scrypt-logn N] CIPHERDIR\n"
	"  encfs-gpu CIPHERDIR MOUNTPOINT [-o OPTIONS]   (mount(8)'s form: a mount)\n"
	"  encfs-gpu --version | --help\n"
	"\n"
	"  --passfile F      read the password from the first line of F (\"-\": stdin);\n"
	"                    without it: the terminal (no echo), or stdin if not a tty\n"
	"  --scrypt-logn N   scrypt cost N = 2^N (%d..%d, default %d)\n"
	"  --backend B       cipher backend: cpu (OpenSSL AES-NI); gpu (the CUDA kernel\n"
	"                    as a ptask: needs ptaskd, found as libptask finds it,\n"
	"                    PTASK_SOCKET / PTASK_MODE); auto (default): both, each\n"
	"                    request to the one measured faster at its size at mount;\n"
	"                    cpu alone when ptaskd cannot be reached\n"
	"  -f                stay in the foreground    -d  FUSE debug output\n"
	"  -s                single-threaded           -o  FUSE mount options\n"
	"  -o passfile=F,backend=B   the same as --passfile F --backend B (for fstab);\n"
	"                    \\, is a comma inside a value\n"
	"Unmount with: fusermount3 -u MOUNTPOINT (or umount as root).\n"
	"fstab: CIPHERDIR MOUNTPOINT fuse.encfs-gpu passfile=F,nofail 0 0\n";

static void usage(FILE *f)
{
	fprintf(f, usage_text, EG_SCRYPT_LOGN_MIN, EG_SCRYPT_LOGN_MAX, EG_SCRYPT_LOGN_DEFAULT);
}

static int conf_path(const char *cipherdir, char *out, size_t outsz)
{
	if ((size_t)snprintf(out, outsz, "%s/%s", cipherdir, EG_CONF_NAME) >= outsz)
		return -ENAMETOOLONG;
	return 0;
}

/* Read and parse CIPHERDIR's config; messages for every failure. */
static int load_config(const char *cipherdir, struct eg_config *cfg)
{
	char path[PATH_MAX], buf[EG_CONFIG_MAX + 1];
	const char *why;
	struct stat st;
	ssize_t n;
	int fd;

	if (conf_path(cipherdir, path, sizeof(path))) {
		fprintf(stderr, "encfs-gpu: %s: path too long\n", cipherdir);
		return EXIT_CONFIG;
	}
	/* O_NONBLOCK and the type check: a FIFO or device planted here must
	 * not hang the mount or be read from */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "encfs-gpu: cannot open %s: %s%s\n", path, strerror(errno),
			errno == ENOENT ? " (not an encfs-gpu directory? see 'encfs-gpu init')" : "");
		return EXIT_CONFIG;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "encfs-gpu: %s: config file refused: not a regular file\n", path);
		close(fd);
		return EXIT_CONFIG;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0) {
		fprintf(stderr, "encfs-gpu: cannot read %s: %s\n", path, strerror(errno));
		return EXIT_CONFIG;
	}
	if (eg_config_parse(buf, (size_t)n, cfg, &why)) {
		fprintf(stderr, "encfs-gpu: %s: config file refused: %s\n", path, why);
		return EXIT_CONFIG;
	}
	return 0;
}

static int write_config(const char *cipherdir, const struct eg_config *cfg, int replace)
{
	char path[PATH_MAX], tmp[PATH_MAX], buf[EG_CONFIG_MAX];
	ssize_t len = eg_config_format(cfg, buf, sizeof(buf));
	int fd, ret = 0;

	if (len < 0 || conf_path(cipherdir, path, sizeof(path)) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	/* a new file, then rename: a crash leaves the old config or the new one */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, (size_t)len) != len || fsync(fd))
		ret = -EIO;
	close(fd);
	if (!ret && !replace && link(tmp, path))
		ret = -errno;
	if (!ret && replace && rename(tmp, path))
		ret = -errno;
	unlink(tmp);
	return ret;
}

static int get_password(const char *passfile, const char *prompt, int confirm, char *pw)
{
	int ret = eg_password_read(passfile, prompt, confirm, pw, EG_PASS_MAX);

	/* a failed read can leave part of a password (-E2BIG, a read error),
	 * and no caller wipes what it was not given */
	if (ret)
		OPENSSL_cleanse(pw, EG_PASS_MAX);
	if (ret == -ENODATA)
		fprintf(stderr, "encfs-gpu: empty password\n");
	else if (ret == -EINVAL)
		fprintf(stderr, "encfs-gpu: the passwords differ\n");
	else if (ret)
		fprintf(stderr, "encfs-gpu: cannot read the password: %s\n", strerror(-ret));
	return ret;
}

static int parse_logn(const char *s, unsigned int *logn)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || v < EG_SCRYPT_LOGN_MIN || v > EG_SCRYPT_LOGN_MAX) {
		fprintf(stderr, "encfs-gpu: --scrypt-logn must be %d..%d\n", EG_SCRYPT_LOGN_MIN,
			EG_SCRYPT_LOGN_MAX);
		return -EINVAL;
	}
	*logn = (unsigned int)v;
	return 0;
}

enum { OPT_PASSFILE = 256, OPT_NEW_PASSFILE, OPT_LOGN, OPT_BACKEND, OPT_HELP };

static const struct option long_opts[] = {
	{ "passfile", required_argument, NULL, OPT_PASSFILE },
	{ "new-passfile", required_argument, NULL, OPT_NEW_PASSFILE },
	{ "scrypt-logn", required_argument, NULL, OPT_LOGN },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

struct opts {
	const char *passfile, *new_passfile, *backend;
	unsigned int logn;
	int foreground, debug, single;
	char *fuse_opts[16];
	int nfuse_opts;
	/* passfile= and backend= taken out of -o, unescaped */
	char passfile_opt[PATH_MAX], backend_opt[16];
};

/* Copy [s, e) to dst (dstsz bytes with the NUL), dropping each backslash
 * that escapes the next character: libfuse's escaping inside -o. */
static int unescape(const char *s, const char *e, char *dst, size_t dstsz)
{
	size_t n = 0;

	for (; s < e; s++) {
		if (*s == '\\' && s + 1 < e)
			s++;
		if (n + 1 >= dstsz)
			return -ENAMETOOLONG;
		dst[n++] = *s;
	}
	dst[n] = '\0';
	return 0;
}

/* An own option "NAME=VALUE" of the token [tok, end): its value unescaped
 * into dst.  1 if the token is NAME=..., 0 if not, -errno on a bad value. */
static int own_opt(const char *tok, const char *end, const char *name, char *dst,
		   size_t dstsz)
{
	size_t len = strlen(name);

	if ((size_t)(end - tok) <= len || strncmp(tok, name, len) || tok[len] != '=')
		return 0;
	if (end - tok == (ptrdiff_t)len + 1) {
		fprintf(stderr, "encfs-gpu: -o %s= needs a value\n", name);
		return -EINVAL;
	}
	if (unescape(tok + len + 1, end, dst, dstsz)) {
		fprintf(stderr, "encfs-gpu: -o %s=: value too long\n", name);
		return -ENAMETOOLONG;
	}
	return 1;
}

/*
 * One -o argument: takes encfs-gpu's own options out of it (passfile=F,
 * backend=B: an /etc/fstab line can carry nothing else, as mount.fuse3
 * runs "encfs-gpu SOURCE MOUNTPOINT -o OPTIONS") and keeps the rest, in
 * place, for FUSE.  Options are split at commas not escaped by a
 * backslash; what FUSE gets keeps its escapes.
 */
static int add_mount_opts(char *arg, struct opts *o)
{
	char *out = arg, *tok = arg;
	int ret;

	while (*tok) {
		char *end = tok;

		while (*end && *end != ',')
			end += (end[0] == '\\' && end[1]) ? 2 : 1;
		ret = own_opt(tok, end, "passfile", o->passfile_opt, sizeof(o->passfile_opt));
		if (ret > 0)
			o->passfile = o->passfile_opt;
		if (!ret) {
			ret = own_opt(tok, end, "backend", o->backend_opt, sizeof(o->backend_opt));
			if (ret > 0)
				o->backend = o->backend_opt;
		}
		if (ret < 0)
			return EXIT_USAGE;
		if (!ret && end > tok) {
			/* a FUSE option: move it down over what was taken out */
			if (out != arg)
				*out++ = ',';
			memmove(out, tok, (size_t)(end - tok));
			out += end - tok;
		}
		tok = *end ? end + 1 : end;
	}
	*out = '\0';
	if (out == arg)
		return 0;
	if (o->nfuse_opts == 16) {
		fprintf(stderr, "encfs-gpu: more than 16 -o options\n");
		return EXIT_USAGE;
	}
	o->fuse_opts[o->nfuse_opts++] = arg;
	return 0;
}

/* Options of a subcommand; leaves optind at the first operand. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->logn = EG_SCRYPT_LOGN_DEFAULT;
	o->backend = "auto";
	optind = 1;
	while ((c = getopt_long(argc, argv, "fdso:h", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_PASSFILE:
			o->passfile = optarg;
			break;
		case OPT_NEW_PASSFILE:
			o->new_passfile = optarg;
			break;
		case OPT_LOGN:
			if (parse_logn(optarg, &o->logn))
				return EXIT_USAGE;
			break;
		case OPT_BACKEND:
			o->backend = optarg;
			break;
		case 'f':
			o->foreground = 1;
			break;
		case 'd':
			o->debug = 1;
			break;
		case 's':
			o->single = 1;
			break;
		case 'o':
			if (add_mount_opts(optarg, o))
				return EXIT_USAGE;
			break;
		case 'h':
		case OPT_HELP:
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	return 0;
}

static int cmd_init(int argc, char **argv)
{
	char pw[EG_PASS_MAX], path[PATH_MAX];
	uint8_t master[EG_MASTER_LEN];
	struct eg_config cfg;
	struct opts o;
	int ret, empty = 1;
	struct stat st;
	DIR *d;

	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret;
	if (argc - optind != 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *dir = argv[optind];

	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "encfs-gpu: %s is not a directory\n", dir);
		return 1;
	}
	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "encfs-gpu: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	for (struct dirent *de; (de = readdir(d));)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = 0;
	closedir(d);
	if (!empty) {
		fprintf(stderr, "encfs-gpu: %s is not empty\n", dir);
		return 1;
	}
	if (o.logn < EG_SCRYPT_LOGN_WARN)
		fprintf(stderr, "encfs-gpu: warning: scrypt N = 2^%u is weak against password "
			"guessing; meant for tests (default 2^%d)\n", o.logn, EG_SCRYPT_LOGN_DEFAULT);
	if (get_password(o.passfile, "New password: ", 1, pw))
		return 1;
	ret = eg_keys_create(pw, strlen(pw), o.logn, &cfg, master);
	OPENSSL_cleanse(pw, sizeof(pw));
	OPENSSL_cleanse(master, sizeof(master));
	if (ret) {
		fprintf(stderr, "encfs-gpu: key creation failed: %s\n", strerror(-ret));
		return 1;
	}
	ret = eg_diriv_create(AT_FDCWD, dir);
	if (!ret)
		ret = write_config(dir, &cfg, 0);
	if (ret) {
		fprintf(stderr, "encfs-gpu: cannot initialise %s: %s\n", dir, strerror(-ret));
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, EG_DIRIV_NAME) < sizeof(path))
			unlink(path);
		return 1;
	}
	printf("encfs-gpu: initialised %s (scrypt N=2^%u); mount it with\n"
	       "  encfs-gpu mount %s MOUNTPOINT\n", dir, o.logn, dir);
	return 0;
}

/* Load the config, read the password, recover the master key. */
static int unlock(const char *dir, const char *passfile, struct eg_config *cfg,
		  uint8_t master[EG_MASTER_LEN])
{
	char pw[EG_PASS_MAX];
	int ret;

	ret = load_config(dir, cfg);
	if (ret)
		return ret;
	if (get_password(passfile, "Password: ", 0, pw))
		return 1;
	ret = eg_keys_unlock(cfg, pw, strlen(pw), master);
	OPENSSL_cleanse(pw, sizeof(pw));
	if (ret == -EKEYREJECTED) {
		fprintf(stderr, "encfs-gpu: wrong password, or the config file was tampered with\n");
		return EXIT_PASSWORD;
	}
	if (ret) {
		fprintf(stderr, "encfs-gpu: key derivation failed: %s\n", strerror(-ret));
		return 1;
	}
	return 0;
}

static int cmd_passwd(int argc, char **argv)
{
	uint8_t master[EG_MASTER_LEN];
	char pw[EG_PASS_MAX];
	struct eg_config cfg;
	struct opts o;
	int ret;

	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret;
	if (argc - optind != 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	ret = unlock(argv[optind], o.passfile, &cfg, master);
	if (ret)
		return ret;
	if (get_password(o.new_passfile, "New password: ", 1, pw)) {
		ret = 1;
		goto out;
	}
	ret = eg_keys_rewrap(&cfg, master, pw, strlen(pw), o.logn);
	if (!ret)
		ret = write_config(argv[optind], &cfg, 1);
	if (ret) {
		fprintf(stderr, "encfs-gpu: cannot change the password: %s\n", strerror(-ret));
		ret = 1;
	}
out:
	OPENSSL_cleanse(pw, sizeof(pw));
	OPENSSL_cleanse(master, sizeof(master));
	return ret;
}

/*
 * The mount's source, as /proc/self/mountinfo, df and findmnt show it: the
 * cipher directory's absolute path, so that `mount -a` and systemd find an
 * /etc/fstab line's mount already done (they compare source and target).
 * Commas and backslashes escaped for -o; "encfs-gpu" if the path cannot be
 * had.
 */
static void fsname_of(const char *dir, char *out, size_t outsz)
{
	char path[PATH_MAX];
	size_t n = 0;

	if (!realpath(dir, path)) {
		snprintf(out, outsz, "encfs-gpu");
		return;
	}
	for (const char *p = path; *p && n + 3 < outsz; p++) {
		if (*p == ',' || *p == '\\')
			out[n++] = '\\';
		out[n++] = *p;
	}
	out[n] = '\0';
}

static int cmd_mount(int argc, char **argv)
{
	uint8_t master[EG_MASTER_LEN], iv[EG_DIRIV_LEN];
	struct eg_backend *be = NULL;
	struct eg_config cfg;
	struct eg_keys keys;
	struct eg_fs *fs;
	const char *why;
	char *fargv[48], opts[2 * PATH_MAX + 64], fsname[2 * PATH_MAX];
	int fargc = 0, ret;
	struct opts o;
	struct rlimit nocore = { 0, 0 };

	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret;
	if (argc - optind != 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *dir = argv[optind], *mnt = argv[optind + 1];

	/* the keys live in this process: keep them out of core files, and
	 * out of reach of ptrace and /proc/PID/mem for the user's other
	 * processes (not dumpable) */
	setrlimit(RLIMIT_CORE, &nocore);
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		fprintf(stderr, "encfs-gpu: warning: cannot mark the process non-dumpable: %s\n",
			strerror(errno));
	ret = unlock(dir, o.passfile, &cfg, master);
	if (ret)
		return ret;
	ret = eg_keys_derive(master, &keys);
	OPENSSL_cleanse(master, sizeof(master));
	if (ret) {
		fprintf(stderr, "encfs-gpu: key derivation failed\n");
		return 1;
	}
	ret = eg_backend_open(o.backend, keys.xts, o.foreground || o.debug, &be, &why);
	if (ret) {
		fprintf(stderr, "encfs-gpu: backend %s unavailable: %s\n", o.backend,
			why ? why : strerror(-ret));
		ret = ret == -EINVAL ? EXIT_USAGE : EXIT_BACKEND;
		goto err_keys;
	}
	fs = calloc(1, sizeof(*fs));
	if (!fs) {
		ret = 1;
		goto err_be;
	}
	ret = eg_fs_init(fs, dir, &keys, be);
	/* fs and the backend hold their own copies; this stack frame lives
	 * until unmount, so no copy of the keys stays in it */
	eg_wipe(&keys, sizeof(keys));
	if (ret) {
		fprintf(stderr, "encfs-gpu: %s: %s\n", dir, strerror(-ret));
		ret = 1;
		goto err_fs;
	}
	fs->verbose = o.foreground || o.debug;
	fs->as_root = geteuid() == 0;
	if (eg_diriv_get(fs, ".", iv)) {
		fprintf(stderr, "encfs-gpu: %s has no valid %s\n", dir, EG_DIRIV_NAME);
		ret = EXIT_CONFIG;
		goto err_fini;
	}
	/* modes come from the caller, already masked by the kernel */
	umask(0);
	fsname_of(dir, fsname, sizeof(fsname));
	snprintf(opts, sizeof(opts), "fsname=%s,subtype=encfs-gpu,default_permissions", fsname);
	fargv[fargc++] = argv[0];
	fargv[fargc++] = (char *)mnt;
	fargv[fargc++] = "-o";
	fargv[fargc++] = opts;
	if (!o.single) {
		/* libfuse 3.14's fuse_main() honours max_threads (its default is
		 * 10 workers); 16 lets the FUSE requests of a few parallel
		 * readers and writers overlap.  Before the user's -o options, so
		 * "-o max_threads=N" still wins.  The "Ignoring invalid max
		 * threads value 4294967295" line at mount comes from libfuse's
		 * own defaults, with or without this. */
		fargv[fargc++] = "-o";
		fargv[fargc++] = "max_threads=16";
	}
	for (int i = 0; i < o.nfuse_opts; i++) {
		fargv[fargc++] = "-o";
		fargv[fargc++] = o.fuse_opts[i];
	}
	if (o.foreground)
		fargv[fargc++] = "-f";
	if (o.debug)
		fargv[fargc++] = "-d";
	if (o.single)
		fargv[fargc++] = "-s";
	fargv[fargc] = NULL;
	if (fs->verbose)
		fprintf(stderr, "encfs-gpu: mounting %s on %s, backend %s\n", dir, mnt,
			be->ops->name);
	/* fuse_main() forks to daemonize; a connection to ptaskd must not
	 * cross it, so the gpu backend reconnects on its first request */
	eg_backend_detach(be);
	ret = fuse_main(fargc, fargv, &eg_fuse_ops, fs) ? EXIT_MOUNT : 0;
err_fini:
	eg_fs_fini(fs);
err_fs:
	free(fs);
err_be:
	eg_backend_destroy(be);
err_keys:
	eg_wipe(&keys, sizeof(keys));
	return ret;
}

static int is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("encfs-gpu %s (volume format %d; %s; libfuse %s)\n", EG_VERSION,
		       EG_CONFIG_VERSION, OpenSSL_version(OPENSSL_VERSION), fuse_pkgversion());
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "init"))
		return cmd_init(argc - 1, argv + 1);
	if (!strcmp(argv[1], "mount"))
		return cmd_mount(argc - 1, argv + 1);
	if (!strcmp(argv[1], "passwd"))
		return cmd_passwd(argc - 1, argv + 1);
	/* mount(8)'s FUSE form: for `mount -t fuse.encfs-gpu` and fstab lines
	 * mount.fuse3 runs "encfs-gpu CIPHERDIR MOUNTPOINT -o OPTIONS"; a
	 * directory where a command was expected is that form (commands win,
	 * so ./init names a directory called init) */
	if (argv[1][0] != '-' && is_dir(argv[1]))
		return cmd_mount(argc, argv);
	fprintf(stderr, "encfs-gpu: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
