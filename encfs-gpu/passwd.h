/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * passwd.h - reading the password: from a file (--passfile F, "-" for
 * standard input), else from the terminal without echo, else from
 * standard input when it is not a terminal.
 */
#ifndef ENCFS_GPU_PASSWD_H
#define ENCFS_GPU_PASSWD_H

#include <stddef.h>

#define EG_PASS_MAX 1024

int eg_password_read(const char *passfile, const char *prompt, int confirm, char *pw,
		     size_t pwsz);

#endif
