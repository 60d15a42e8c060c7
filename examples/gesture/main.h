/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * main.h - the subcommands that live outside main.c, and its helpers.
 * Each takes the arguments after the program's name (argv[0] is the
 * subcommand) and returns the exit status.
 */
#ifndef EXAMPLES_GESTURE_MAIN_H
#define EXAMPLES_GESTURE_MAIN_H

#include <stdint.h>

int gesture_cmd_table(int argc, char **argv);	/* table.c */
int gesture_cmd_gpucheck(int argc, char **argv);	/* gpucheck.c */
/* A number in [@lo, @hi], or -EINVAL with a message naming @opt. */
int gesture_parse_u32(const char *opt, const char *s, uint32_t lo, uint32_t hi,
		      uint32_t *out);

#endif /* EXAMPLES_GESTURE_MAIN_H */
