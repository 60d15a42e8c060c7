// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * msg.c - ptaskd's wire protocol framing (see msg.h).
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/msg.h"

/* Room for the one fd a message may carry. */
union fd_control {
	char buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A socket call's errno as msg.h says. */
static int sock_err(int err)
{
	if (err == EAGAIN || err == EWOULDBLOCK)
		return -ETIMEDOUT;	/* SO_RCVTIMEO / SO_SNDTIMEO */
	if (err == EPIPE || err == ECONNRESET)
		return -ENOTCONN;
	return -err;
}

int pc_msg_connect(const char *path, unsigned int timeout_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = {
		.tv_sec = timeout_ms / 1000,
		.tv_usec = (suseconds_t)(timeout_ms % 1000) * 1000,
	};
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (timeout_ms &&
	    (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	     setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv))))
		goto err_close;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto err_close;
	return fd;

err_close:
	err = -errno;
	close(fd);
	return err;
}

/* Step @msg's iovecs past @n bytes sent or read. */
static void iov_advance(struct msghdr *msg, size_t n)
{
	while (msg->msg_iovlen && n >= msg->msg_iov->iov_len) {
		n -= msg->msg_iov->iov_len;
		msg->msg_iov++;
		msg->msg_iovlen--;
	}
	if (msg->msg_iovlen) {
		msg->msg_iov->iov_base = (char *)msg->msg_iov->iov_base + n;
		msg->msg_iov->iov_len -= n;
	}
}

int pc_msg_send(int sock, const struct ptaskd_hdr *hdr,
		const struct iovec *payload, unsigned int n, int pass_fd)
{
	struct iovec iov[1 + PC_MSG_MAX_PIECES];
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 1 };
	union fd_control ctl;
	struct cmsghdr *cm;
	size_t len = 0;
	unsigned int i;
	ssize_t sent;

	if (n > PC_MSG_MAX_PIECES)
		return -EINVAL;
	iov[0].iov_base = (void *)hdr;
	iov[0].iov_len = sizeof(*hdr);
	for (i = 0; i < n; i++) {
		len += payload[i].iov_len;
		if (payload[i].iov_len)
			iov[msg.msg_iovlen++] = payload[i];
	}
	if (len != hdr->len)
		return -EINVAL;
	if (len > PTASKD_MSG_MAX)
		return -EMSGSIZE;
	if (pass_fd >= 0) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &pass_fd, sizeof(int));
	}
	while (msg.msg_iovlen) {
		sent = sendmsg(sock, &msg, MSG_NOSIGNAL);
		if (sent < 0 && errno == EINTR)
			continue;
		if (sent < 0)
			return sock_err(errno);
		/* the fd went with the first byte */
		msg.msg_control = NULL;
		msg.msg_controllen = 0;
		iov_advance(&msg, (size_t)sent);
	}
	return 0;
}

/* recvmsg(), polling until @spin_until_ns (0: not at all) first. */
static ssize_t recv_spin(int sock, struct msghdr *msg, uint64_t spin_until_ns)
{
	ssize_t n;

	while (spin_until_ns) {
		n = recvmsg(sock, msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			return n;
		if (now_ns() >= spin_until_ns)
			break;
		/*
		 * On a busy CPU, let whoever else is ready run first: maybe
		 * the thread that is to answer.
		 */
		sched_yield();
	}
	return recvmsg(sock, msg, MSG_CMSG_CLOEXEC);
}

/* The fds that came in @msg: the first into *@fd, the others closed. */
static void take_fds(struct msghdr *msg, int *fd)
{
	struct cmsghdr *cm;
	size_t i, n;
	int v;

	for (cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			memcpy(&v, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (*fd < 0)
				*fd = v;
			else
				close(v);
		}
	}
}

/* Exactly @len bytes into @buf (NULL: read and drop them). */
static int read_exact(int sock, void *buf, size_t len)
{
	unsigned char skip[256];
	size_t want;
	ssize_t n;

	while (len) {
		want = buf || len < sizeof(skip) ? len : sizeof(skip);
		n = recv(sock, buf ? buf : skip, want, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return sock_err(errno);
		if (n == 0)
			return -ENOTCONN;
		if (buf)
			buf = (char *)buf + n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * The header, read together with up to @cap payload bytes into @buf;
 * *@early gets how many came.  An fd comes with the first read only.
 */
static int recv_head(int sock, struct ptaskd_hdr *hdr, void *buf, size_t cap,
		     int *fd, uint64_t spin_until_ns, size_t *early)
{
	union fd_control ctl;
	size_t got = 0;
	ssize_t n;

	while (got < sizeof(*hdr)) {
		struct iovec iov[2] = {
			{ .iov_base = (char *)hdr + got,
			  .iov_len = sizeof(*hdr) - got },
			{ .iov_base = buf, .iov_len = cap },
		};
		struct msghdr msg = { .msg_iov = iov, .msg_iovlen = cap ? 2 : 1 };

		if (fd && !got) {
			msg.msg_control = ctl.buf;
			msg.msg_controllen = sizeof(ctl.buf);
		}
		n = recv_spin(sock, &msg, got ? 0 : spin_until_ns);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return sock_err(errno);
		if (n == 0)
			return -ENOTCONN;
		if (fd && !got && msg.msg_controllen)
			take_fds(&msg, fd);
		got += (size_t)n;
	}
	*early = got - sizeof(*hdr);
	if (hdr->magic != PTASKD_PROTO_MAGIC || hdr->len > PTASKD_MSG_MAX ||
	    *early > hdr->len)
		return -EPROTO;
	return 0;
}

int pc_msg_recv(int sock, struct ptaskd_hdr *hdr, void *buf, size_t cap,
		int *fd, uint64_t spin_until_ns)
{
	size_t early, want;
	int err;

	if (fd)
		*fd = -1;
	err = recv_head(sock, hdr, buf, cap, fd, spin_until_ns, &early);
	if (!err) {
		want = hdr->len < cap ? hdr->len : cap;
		if (want > early)
			err = read_exact(sock, (char *)buf + early,
					 want - early);
		if (!err)
			err = read_exact(sock, NULL, hdr->len - want);
	}
	if (err && fd && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	return err;
}

int pc_msg_recv_alloc(int sock, struct ptaskd_hdr *hdr, void **payload,
		      int *fd)
{
	size_t early;
	int err;

	*payload = NULL;
	if (fd)
		*fd = -1;
	err = recv_head(sock, hdr, NULL, 0, fd, 0, &early);
	if (!err && hdr->len) {
		*payload = malloc(hdr->len);
		err = *payload ? read_exact(sock, *payload, hdr->len) : -ENOMEM;
	}
	if (err) {
		free(*payload);
		*payload = NULL;
		if (fd && *fd >= 0) {
			close(*fd);
			*fd = -1;
		}
	}
	return err;
}

int pc_msg_reply_err(const struct ptaskd_hdr *hdr, uint32_t op)
{
	if (hdr->op != op || hdr->err > 0 || hdr->err < -4095)
		return -EPROTO;
	return hdr->err;
}

int pc_msg_call(int sock, uint32_t op, const struct iovec *req,
		struct iovec *rep)
{
	struct ptaskd_hdr h = { .magic = PTASKD_PROTO_MAGIC, .op = op };
	int err;

	if (req && req->iov_len > PTASKD_MSG_MAX)
		return -EMSGSIZE;
	h.len = req ? (uint32_t)req->iov_len : 0;
	err = pc_msg_send(sock, &h, req, req ? 1 : 0, -1);
	if (!err)
		err = pc_msg_recv(sock, &h, rep ? rep->iov_base : NULL,
				  rep ? rep->iov_len : 0, NULL, 0);
	if (!err)
		err = pc_msg_reply_err(&h, op);
	if (!err && rep)
		rep->iov_len = h.len;
	return err;
}
