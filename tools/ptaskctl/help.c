// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * help.c - `ptaskctl help [COMMAND]`: the commands, from the table every
 * PTASKCTL_COMMAND() adds to.  With --json, a "commands" list.
 */
#include <stdio.h>
#include <string.h>
#include "ptaskctl.h"

static void help_text(const struct ptaskctl_cmd *const *cmds, unsigned int n)
{
	unsigned int i;

	printf("Usage: %s [--json] [--mode kernel|user|auto] [--socket PATH] "
	       "COMMAND [ARGS]\n\n"
	       "Commands (default: info):\n", ptaskctl_prog);
	for (i = 0; i < n; i++)
		printf("  %-8s %s\n", cmds[i]->name, cmds[i]->help);
	printf("\nOptions:\n"
	       "  --json          print one JSON document\n"
	       "  --mode MODE     kernel (ptask.ko), user (ptaskd's socket) or auto\n"
	       "                  (kernel when the module is loaded); also PTASK_MODE\n"
	       "  --socket PATH   ptaskd's socket; also PTASK_SOCKET (default %s)\n"
	       "See ptaskctl(8).\n", PTASK_SOCKET_DEFAULT);
}

static void help_json(const struct ptaskctl_cmd *const *cmds, unsigned int n)
{
	unsigned int i;

	out_begin();
	out_list_begin("commands");
	for (i = 0; i < n; i++) {
		out_obj_begin(NULL);
		out_str("name", cmds[i]->name);
		out_str("usage", cmds[i]->usage);
		out_str("help", cmds[i]->help);
		out_obj_end();
	}
	out_list_end();
	out_end();
}

static int help_main(int argc, char *argv[])
{
	const struct ptaskctl_cmd *const *cmds;
	unsigned int i, n;

	cmds = ptaskctl_commands(&n);
	if (argc > 2) {
		ptaskctl_err("help: at most one command name");
		return PTASKCTL_USAGE;
	}
	if (argc == 2) {
		for (i = 0; i < n; i++) {
			if (strcmp(cmds[i]->name, argv[1]))
				continue;
			printf("Usage: %s %s%s%s\n  %s\n", ptaskctl_prog,
			       cmds[i]->name, *cmds[i]->usage ? " " : "",
			       cmds[i]->usage, cmds[i]->help);
			return 0;
		}
		ptaskctl_err("help: no command '%s'", argv[1]);
		return PTASKCTL_USAGE;
	}
	if (ptaskctl_opts.json)
		help_json(cmds, n);
	else
		help_text(cmds, n);
	return 0;
}

PTASKCTL_COMMAND(help, help_main, "[COMMAND]", "list the commands, or show one's usage");
