// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ptaskctl.c - the administration tool of ptask: global options, then a
 * subcommand found in the table the PTASKCTL_COMMAND() lines build (one
 * file per subcommand; see ptaskctl.h).
 *
 *   ptaskctl [--json] [--mode kernel|user|auto] [--socket PATH] CMD [ARGS]
 *
 * With no command: `info`.  Exit status 0 on success, 1 on failure, 2 on a
 * usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ptaskctl.h"

struct ptaskctl_opts ptaskctl_opts;
const char *ptaskctl_prog = "ptaskctl";

extern const struct ptaskctl_cmd *const __start_ptaskctl_cmds[];
extern const struct ptaskctl_cmd *const __stop_ptaskctl_cmds[];

#define PTASKCTL_MAX_CMDS 64
static const struct ptaskctl_cmd *sorted[PTASKCTL_MAX_CMDS];

void ptaskctl_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", ptaskctl_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int cmd_cmp(const void *a, const void *b)
{
	const struct ptaskctl_cmd *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

const struct ptaskctl_cmd *const *ptaskctl_commands(unsigned int *n)
{
	static unsigned int count;
	const struct ptaskctl_cmd *const *p;

	if (!count) {
		for (p = __start_ptaskctl_cmds; p < __stop_ptaskctl_cmds &&
		     count < PTASKCTL_MAX_CMDS; p++)
			sorted[count++] = *p;
		qsort(sorted, count, sizeof(sorted[0]), cmd_cmp);
	}
	*n = count;
	return sorted;
}

static const struct ptaskctl_cmd *find_command(const char *name)
{
	const struct ptaskctl_cmd *const *cmds;
	unsigned int i, n;

	cmds = ptaskctl_commands(&n);
	for (i = 0; i < n; i++)
		if (!strcmp(cmds[i]->name, name))
			return cmds[i];
	return NULL;
}

static int parse_mode(const char *s, enum ptaskctl_mode *mode)
{
	if (!strcmp(s, "auto"))
		*mode = PTASKCTL_MODE_AUTO;
	else if (!strcmp(s, "kernel"))
		*mode = PTASKCTL_MODE_KERNEL;
	else if (!strcmp(s, "user"))
		*mode = PTASKCTL_MODE_USER;
	else
		return -EINVAL;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s [--json] [--mode kernel|user|auto] [--socket PATH] "
		"COMMAND [ARGS]\n"
		"Run '%s help' for the commands.\n", ptaskctl_prog, ptaskctl_prog);
}

/* Environment first, then the options over it. */
static int parse_options(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "mode", required_argument, NULL, 'm' },
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *env;
	int c;

	ptaskctl_opts.socket = PTASK_SOCKET_DEFAULT;
	env = getenv("PTASK_SOCKET");
	if (env && *env)
		ptaskctl_opts.socket = env;
	env = getenv("PTASK_MODE");
	if (env && *env && parse_mode(env, &ptaskctl_opts.mode)) {
		ptaskctl_err("PTASK_MODE=%s: want kernel, user or auto", env);
		return -EINVAL;
	}
	/* '+': stop at the first non-option, the subcommand. */
	while ((c = getopt_long(argc, argv, "+jm:s:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			ptaskctl_opts.json = true;
			break;
		case 'm':
			if (parse_mode(optarg, &ptaskctl_opts.mode)) {
				ptaskctl_err("--mode %s: want kernel, user or auto", optarg);
				return -EINVAL;
			}
			break;
		case 's':
			ptaskctl_opts.socket = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("%s (libptask API %d.%d, ptask ABI %d)\n", ptaskctl_prog,
			       LIBPTASK_VERSION_MAJOR, LIBPTASK_VERSION_MINOR,
			       PTASK_ABI_VERSION);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	return 0;
}

int main(int argc, char *argv[])
{
	static char *default_argv[] = { "info", NULL };
	const struct ptaskctl_cmd *cmd;
	char **cmd_argv;
	int cmd_argc, ret;

	if (parse_options(argc, argv))
		return 2;
	cmd_argc = argc - optind;
	cmd_argv = argv + optind;
	if (!cmd_argc) {
		cmd_argc = 1;
		cmd_argv = default_argv;
	}
	cmd = find_command(cmd_argv[0]);
	if (!cmd) {
		ptaskctl_err("unknown command '%s'", cmd_argv[0]);
		usage(stderr);
		return 2;
	}
	optind = 1;	/* the subcommand may use getopt on its own argv */
	ret = cmd->fn(cmd_argc, cmd_argv);
	if (ret == PTASKCTL_USAGE)
		return 2;
	return ret ? 1 : 0;
}
