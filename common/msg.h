/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * msg.h - messages of ptaskd's wire protocol (uapi/ptaskd.h) on a UNIX
 * stream socket: a struct ptaskd_hdr, then exactly hdr.len bytes of
 * payload, and with some replies one fd (SCM_RIGHTS).
 *
 * DOC: Overview
 *
 * One implementation of the framing for every side of the socket:
 * ptaskd's server sends its replies with pc_msg_send(); libptask's user
 * transport, ptaskctl and the daemon's end-to-end tests connect with
 * pc_msg_connect() and exchange messages with pc_msg_send() and
 * pc_msg_recv() (or pc_msg_call(), both at once).  The server reads its
 * requests through a buffer of its own (several may be waiting), not
 * with pc_msg_recv().
 *
 * Every call goes on after EINTR and after short reads and writes; a
 * message is sent whole (one sendmsg() in the common case, so a request
 * wakes its reader once) and read whole.  An fd passed with a message
 * travels with its first byte.
 *
 * Errors, the same everywhere: -ENOTCONN (the peer closed the
 * connection or reset it), -ETIMEDOUT (a socket timeout, see
 * pc_msg_connect(), ran out), -EPROTO (a header with a bad magic, or a
 * length over PTASKD_MSG_MAX), -EMSGSIZE (a message to send over
 * PTASKD_MSG_MAX), or another -errno of the socket calls.
 *
 * Locking: none; one thread at a time on a socket.
 */
#ifndef PTASK_COMMON_MSG_H
#define PTASK_COMMON_MSG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include "uapi/ptaskd.h"

/**
 * pc_msg_connect() - a connected stream socket to ptaskd at @path
 * @path: the socket's path
 * @timeout_ms: a send and receive timeout on the socket (SO_SNDTIMEO,
 *	SO_RCVTIMEO): calls that wait longer fail with -ETIMEDOUT; 0: none
 *
 * The socket is close-on-exec.  No HELLO is sent.
 *
 * Return: the fd, -ENAMETOOLONG, or connect()'s -errno (-ENOENT: no such
 * socket, -ECONNREFUSED: nobody listens).
 */
int pc_msg_connect(const char *path, unsigned int timeout_ms);

/**
 * pc_msg_send() - send one message
 * @sock: a connected stream socket
 * @hdr: its header; @hdr->len must be the bytes of @payload
 * @payload: the payload in @n pieces (may be NULL when @n is 0)
 * @n: pieces, at most PC_MSG_MAX_PIECES
 * @pass_fd: an fd to send with it (SCM_RIGHTS), or -1
 *
 * Return: 0, -EINVAL (@hdr->len is not the payload's length, or too
 * many pieces), -EMSGSIZE, -ENOTCONN, -ETIMEDOUT or -errno.
 */
int pc_msg_send(int sock, const struct ptaskd_hdr *hdr,
		const struct iovec *payload, unsigned int n, int pass_fd);

#define PC_MSG_MAX_PIECES	4

/**
 * pc_msg_recv() - receive exactly one message
 * @sock: a connected stream socket
 * @hdr: the header read (@hdr->len: the whole payload's length)
 * @buf: room for the payload (may be NULL when @cap is 0)
 * @cap: bytes at @buf; a longer payload fills @buf and the rest is read
 *	and dropped, so the stream stays in step (callers that cannot take
 *	a longer payload compare @hdr->len with @cap)
 * @fd: where an fd passed with the message goes (-1: none came), or NULL
 *	to accept none (the kernel then closes what comes)
 * @spin_until_ns: CLOCK_MONOTONIC time until which the first read polls
 *	(non-blocking reads, sched_yield() between them) before it sleeps:
 *	waking a sleeping thread costs microseconds a quick answer need not
 *	pay; 0 sleeps at once
 *
 * The first read asks for the header and @cap bytes at once: the peer
 * must send nothing after this message until it gets an answer, which is
 * the protocol's rule (one call at a time on a connection).
 *
 * Return: 0, -ENOTCONN, -ETIMEDOUT, -EPROTO or -errno.  On error no fd is
 * left open (*@fd is -1).
 */
int pc_msg_recv(int sock, struct ptaskd_hdr *hdr, void *buf, size_t cap,
		int *fd, uint64_t spin_until_ns);

/**
 * pc_msg_recv_alloc() - receive exactly one message of any length
 * @sock: a connected stream socket
 * @hdr: the header read
 * @payload: the payload, malloc'd (NULL when it is empty); free() it
 * @fd: as for pc_msg_recv()
 *
 * Return: 0, -ENOMEM, or pc_msg_recv()'s errors.
 */
int pc_msg_recv_alloc(int sock, struct ptaskd_hdr *hdr, void **payload,
		      int *fd);

/**
 * pc_msg_reply_err() - the verdict of reply header @hdr to request @op
 * @hdr: a reply's header
 * @op: the request's op
 *
 * Return: the reply's err (0 or a negative errno), or -EPROTO when it
 * answers another op or its err is not an errno.
 */
int pc_msg_reply_err(const struct ptaskd_hdr *hdr, uint32_t op);

/**
 * pc_msg_call() - one request and its reply
 * @sock: a connected stream socket, idle
 * @op: the request's op
 * @req: its payload (iov_len bytes; iov_base may be NULL when 0)
 * @rep: in: room for the reply's payload; out: iov_len is the length
 *	of the reply's whole payload (more than the room when the rest was
 *	dropped, see pc_msg_recv())
 *
 * Return: 0, the daemon's -errno, or the errors of pc_msg_send(),
 * pc_msg_recv() and pc_msg_reply_err().
 */
int pc_msg_call(int sock, uint32_t op, const struct iovec *req,
		struct iovec *rep);

#endif /* PTASK_COMMON_MSG_H */
