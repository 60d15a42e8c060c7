// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ring_client.c - see ring_client.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "common/msg.h"
#include "uapi/ptaskd.h"
#include "ring_client.h"

/* A connection past HELLO as a new client: the fd. */
static int hello(const char *socket)
{
	struct ptaskd_hello h = { .version = PTASKD_PROTO_VERSION };
	struct iovec out = { .iov_base = &h, .iov_len = sizeof(h) };
	struct iovec in = { .iov_base = &h, .iov_len = sizeof(h) };
	int fd, err;

	fd = pc_msg_connect(socket, 5000);
	if (fd < 0)
		return fd;
	err = pc_msg_call(fd, PTASKD_OP_HELLO, &out, &in);
	if (!err && in.iov_len != sizeof(h))
		err = -EPROTO;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int e2e_ring_open(const char *socket, uint32_t sq_entries,
		  struct e2e_ring *er)
{
	return e2e_ring_open_flags(socket, sq_entries, 0, er);
}

int e2e_ring_open_flags(const char *socket, uint32_t sq_entries,
			uint32_t flags, struct e2e_ring *er)
{
	struct ptaskd_ring_setup rs = {
		.sq_entries = sq_entries, .flags = flags,
	};
	size_t page = (size_t)sysconf(_SC_PAGESIZE), off;
	struct ptaskd_hdr h = {
		.magic = PTASKD_PROTO_MAGIC, .op = PTASKD_OP_RING_SETUP,
		.len = sizeof(rs),
	};
	struct iovec iov = { .iov_base = &rs, .iov_len = sizeof(rs) };
	int memfd = -1, err;

	memset(er, 0, sizeof(*er));
	er->fd = hello(socket);
	if (er->fd < 0)
		return er->fd;
	err = pc_msg_send(er->fd, &h, &iov, 1, -1);
	if (!err)
		err = pc_msg_recv(er->fd, &h, &rs, sizeof(rs), &memfd, 0);
	if (!err)
		err = h.err;
	if (!err && (h.len != sizeof(rs) || memfd < 0))
		err = -EPROTO;
	if (err)
		goto err_close;
	er->bytes = (size_t)rs.region_bytes;
	er->map = mmap(NULL, er->bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
		       memfd, 0);
	close(memfd);
	if (er->map == MAP_FAILED) {
		er->map = NULL;
		err = -errno;
		goto err_close;
	}
	err = pc_ring_attach(&er->r, er->map, er->bytes, PC_RING_CLIENT);
	if (err)
		goto err_close;
	er->flags = rs.flags;
	off = ((size_t)er->r.ring_bytes + page - 1) & ~(page - 1);
	if ((rs.flags & PTASKD_RING_DATA) && off < er->bytes) {
		er->data = (uint8_t *)er->map + off;
		er->data_bytes = er->bytes - off;
	}
	return 0;

err_close:
	e2e_ring_close(er);
	return err;
}

void e2e_ring_close(struct e2e_ring *er)
{
	if (er->map)
		munmap(er->map, er->bytes);
	if (er->fd > 0)
		close(er->fd);
	memset(er, 0, sizeof(*er));
}

int e2e_ring_submit(struct e2e_ring *er, const struct ptask_sqe *sqe)
{
	int space = pc_ring_q_space(&er->r.sq);

	if (space < 0)
		return space;
	if (!space)
		return -ENOSPC;
	memcpy(pc_ring_q_slot(&er->r.sq), sqe, sizeof(*sqe));
	pc_ring_q_publish(&er->r.sq, 1);
	return 0;
}

int e2e_ring_reap(struct e2e_ring *er, struct ptask_cqe *cqe, unsigned int ms)
{
	int n = pc_ring_q_wait(&er->r.cq, 0, false, (uint64_t)ms * 1000000);

	if (n < 0)
		return n;
	if (!n)
		return -ETIMEDOUT;
	pc_ring_q_peek(&er->r.cq, cqe);
	pc_ring_q_consume(&er->r.cq);
	return 0;
}

bool e2e_ring_hung_up(struct e2e_ring *er, unsigned int ms)
{
	struct pollfd p = { .fd = er->fd, .events = POLLRDHUP };

	return poll(&p, 1, (int)ms) > 0 &&
	       (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

int e2e_socket_ioctl(const char *socket, uint32_t cmd, const void *arg,
		     size_t len)
{
	struct ptaskd_hdr h = {
		.magic = PTASKD_PROTO_MAGIC, .op = cmd, .len = (uint32_t)len,
	};
	struct iovec iov = { .iov_base = (void *)arg, .iov_len = len };
	unsigned char reply[256];
	int fd, err;

	fd = hello(socket);
	if (fd < 0)
		return fd;
	err = pc_msg_send(fd, &h, &iov, 1, -1);
	if (!err)
		err = pc_msg_recv(fd, &h, reply, sizeof(reply), NULL, 0);
	close(fd);
	return err ? err : h.err;
}
