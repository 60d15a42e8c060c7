// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * kring_raw - the module's side alone: datablock create + release pairs
 * by ioctl (two system calls a pair), through a ring one pair per ENTER,
 * and through a ring 32 pairs per ENTER (creates first, then their
 * releases); and the per-call cost alone, a release that fails at the
 * lookup, by ioctl and 1 or 32 per ENTER.  No libptask, no executor;
 * alternating blocks; microseconds per pair or call (median block).  A
 * measurement helper, not a test.
 *
 *   cc -static -O2 -I. -o build/kring_raw tests/kselftest/bench/kring_raw.c \
 *	build/lib/libptask-common.a
 *   PTASK_VM_ARGS="20000" tests/vm/run.sh bench kmod/ptask.ko build/kring_raw
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/ring.h"

#define BLOCKS	8
#define BATCH	32

static int fd;
static struct pc_ring ring;
static __u32 ring_id;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double now_us(void)
{
	return (double)pc_ring_now_ns() / 1e3;
}

static int by_ioctl(int n)
{
	struct ptask_datablock_create c = { .size = sizeof(c), .bytes = 8 };
	struct ptask_datablock_release r = { .size = sizeof(r) };
	int i;

	for (i = 0; i < n; i++) {
		if (ioctl(fd, PTASK_IOC_DATABLOCK_CREATE, &c))
			return -errno;
		r.handle = c.handle;
		if (ioctl(fd, PTASK_IOC_DATABLOCK_RELEASE, &r))
			return -errno;
	}
	return 0;
}

static void queue(__u32 cmd, __u32 flags, const void *arg, size_t len)
{
	struct ptask_sqe *sqe = pc_ring_q_slot(&ring.sq);

	memset(sqe, 0, sizeof(*sqe));
	sqe->cmd = cmd;
	sqe->flags = flags;
	memcpy(&sqe->arg, arg, len);
	pc_ring_q_publish(&ring.sq, 1);
}

static int enter(__u32 n)
{
	struct ptask_ring_enter e = {
		.size = sizeof(e), .ring = ring_id, .to_submit = n,
		.min_complete = ~0U,
	};
	int got = ioctl(fd, PTASK_IOC_RING_ENTER, &e);

	return got == (int)n ? 0 : -EPROTO;
}

/* @batch creates per ENTER, their releases riding with the next one. */
static int by_ring(int n, int batch)
{
	struct ptask_datablock_create c = { .size = sizeof(c), .bytes = 8 };
	struct ptask_datablock_release r = { .size = sizeof(r) };
	__u32 held[BATCH], nheld = 0, queued, j;
	struct ptask_cqe cqe;
	int i;

	for (i = 0; i < n; i += batch) {
		queued = 0;
		for (j = 0; j < nheld; j++) {
			r.handle = held[j];
			queue(PTASK_IOC_DATABLOCK_RELEASE,
			      PTASK_SQE_NO_CQE_ON_SUCCESS, &r, sizeof(r));
			queued++;
		}
		for (j = 0; j < (__u32)batch; j++, queued++)
			queue(PTASK_IOC_DATABLOCK_CREATE, 0, &c, sizeof(c));
		if (enter(queued))
			return -EPROTO;
		for (nheld = 0; nheld < (__u32)batch; nheld++) {
			if (pc_ring_q_ready(&ring.cq) < 1)
				return -EPROTO;
			pc_ring_q_peek(&ring.cq, &cqe);
			pc_ring_q_consume(&ring.cq);
			if (cqe.res)
				return cqe.res;
			held[nheld] = cqe.arg.create.handle;
		}
	}
	for (j = 0; j < nheld; j++) {
		r.handle = held[j];
		queue(PTASK_IOC_DATABLOCK_RELEASE, PTASK_SQE_NO_CQE_ON_SUCCESS,
		      &r, sizeof(r));
	}
	return enter(nheld);
}

/*
 * The per-call cost alone: a release of a handle nobody holds (-ENOENT
 * after the lookup), by ioctl (@batch 0) or @batch per ENTER (each
 * completes, and is reaped).
 */
static int bad_release(int n, int batch)
{
	struct ptask_datablock_release r = { .size = sizeof(r),
					     .handle = 0xfffff0 };
	struct ptask_cqe cqe;
	int i, j;

	for (i = 0; !batch && i < n; i++)
		if (ioctl(fd, PTASK_IOC_DATABLOCK_RELEASE, &r) == 0 ||
		    errno != ENOENT)
			return -EPROTO;
	for (i = 0; batch && i < n; i += batch) {
		for (j = 0; j < batch; j++)
			queue(PTASK_IOC_DATABLOCK_RELEASE, 0, &r, sizeof(r));
		if (enter(batch))
			return -EPROTO;
		for (j = 0; j < batch; j++) {
			pc_ring_q_peek(&ring.cq, &cqe);
			pc_ring_q_consume(&ring.cq);
			if (cqe.res != -ENOENT)
				return -EPROTO;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ptask_ring_setup s = { .size = sizeof(s), .sq_entries = 128 };
	int n = argc > 1 ? atoi(argv[1]) : 20000, b, w, err = 0;
	static const char *const names[6] = {
		"create+release, ioctl (2 calls a pair)",
		"create+release, ring, 1 pair/ENTER",
		"create+release, ring, 32 pairs/ENTER",
		"failing release, ioctl",
		"failing release, ring, 1/ENTER",
		"failing release, ring, 32/ENTER",
	};
	double t[6][BLOCKS], t0;
	void *map;

	n -= n % (BATCH * BLOCKS);
	fd = open("/dev/ptask", O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, PTASK_IOC_RING_SETUP, &s))
		return 1;
	map = mmap(NULL, s.region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, (off_t)s.mmap_offset);
	if (map == MAP_FAILED ||
	    pc_ring_attach(&ring, map, s.region_bytes, PC_RING_CLIENT))
		return 1;
	ring_id = s.ring;
	err = by_ioctl(500) ?: by_ring(512, 1) ?: by_ring(512, BATCH);
	for (b = 0; !err && b < BLOCKS; b++) {
		for (w = 0; !err && w < 6; w++) {
			static const int batch[6] = { 0, 1, BATCH, 0, 1, BATCH };

			t0 = now_us();
			if (w == 0)
				err = by_ioctl(n / BLOCKS);
			else if (w < 3)
				err = by_ring(n / BLOCKS, batch[w]);
			else
				err = bad_release(n / BLOCKS, batch[w]);
			t[w][b] = (now_us() - t0) / (n / BLOCKS);
		}
	}
	if (err) {
		fprintf(stderr, "kring_raw: %s\n", strerror(-err));
		return 1;
	}
	for (w = 0; w < 6; w++) {
		qsort(t[w], BLOCKS, sizeof(double), cmp_double);
		printf("%-40s %8.2f us per %s (median of %d blocks; min %.2f)\n",
		       names[w], t[w][BLOCKS / 2], w < 3 ? "pair" : "call",
		       BLOCKS, t[w][0]);
	}
	return 0;
}
