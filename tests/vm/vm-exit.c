// SPDX-License-Identifier: GPL-2.0
/*
 * vm-exit - power the QEMU test guest off with an exit status.
 *
 * Usage (in the guest, as root): vm-exit VALUE
 *
 * Writes VALUE (0..255) to I/O port 0xf4, where tests/vm/run.sh puts QEMU's
 * isa-debug-exit device; QEMU then exits at once with status
 * (VALUE << 1) | 1.  /init writes 0x10 (QEMU exits 33) when the guest saw no
 * failure and 0x11 (QEMU exits 35) when it did.  Any other QEMU status means
 * the guest did not get here (panic, hang, QEMU error).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/io.h>

#define DEBUG_EXIT_PORT 0xf4

int main(int argc, char **argv)
{
	unsigned long value;

	if (argc != 2) {
		fprintf(stderr, "usage: vm-exit VALUE\n");
		return 2;
	}
	value = strtoul(argv[1], NULL, 0);
	if (ioperm(DEBUG_EXIT_PORT, 1, 1)) {
		perror("vm-exit: ioperm");
		return 1;
	}
	outb((unsigned char)value, DEBUG_EXIT_PORT);
	/* Only reached without an isa-debug-exit device. */
	fprintf(stderr, "vm-exit: QEMU did not exit (no isa-debug-exit at 0x%x)\n",
		DEBUG_EXIT_PORT);
	return 1;
}
