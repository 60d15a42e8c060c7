/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * sockfuzz.h - a client that speaks ptaskd's wire protocol badly on
 * purpose (sockfuzz.c).
 */
#ifndef PTASK_TESTS_E2E_SOCKFUZZ_H
#define PTASK_TESTS_E2E_SOCKFUZZ_H

#include <linux/types.h>

/*
 * @n messages to the ptaskd at @socket_path, chosen by @seed, over up
 * to three connections: 0, or -errno when it cannot connect at all.
 */
int e2e_sock_fuzz(const char *socket_path, __u64 seed, unsigned int n);

#endif /* PTASK_TESTS_E2E_SOCKFUZZ_H */
