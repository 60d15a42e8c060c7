// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * common_test.c - the common library's hash table and message framing
 * (common/hash.c, common/msg.c), compiled into this test under ASan and
 * UBSan: adding, finding, deleting and draining, growth; messages over a
 * socketpair, whole and byte by byte, with an fd, too long for the room,
 * malformed, cut off, timed out, and one call with its reply; the
 * polling history of common/spin.h.
 *
 * The netlink client (common/genl.c) needs the module: the kselftests
 * drive it in the test guest.  The CUDA shim needs a GPU: tests/gpu.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "tests/unit/harness.h"
#include "common/hash.c"
#include "common/msg.c"
#include "common/spin.h"
#include "uapi/ptask.h"
#include "uapi/ptaskd.h"

struct item {
	int tag;
	struct pc_hash_node node;
};

static struct item *item_of(struct pc_hash_node *n)
{
	return n ? pc_hash_entry(n, struct item, node) : NULL;
}

static void test_hash_add_find_del(void)
{
	enum { N = 1000 };
	struct item *it = calloc(N, sizeof(*it));
	struct pc_hash h;
	int i;

	REQUIRE(it);
	if (!CHECK_OK(pc_hash_init(&h, 256)))
		goto out_free;
	for (i = 0; i < N; i++) {
		it[i].tag = i;
		pc_hash_add(&h, &it[i].node, (uint64_t)i * 7);
	}
	CHECK_EQ(N, pc_hash_count(&h));
	for (i = 0; i < N; i++)
		CHECK(item_of(pc_hash_find(&h, (uint64_t)i * 7)) == &it[i]);
	CHECK(!pc_hash_find(&h, 3));
	for (i = 0; i < N; i += 2)
		CHECK_OK(pc_hash_del(&h, &it[i].node));
	CHECK_ERR(pc_hash_del(&h, &it[0].node), -ENOENT);
	CHECK_EQ(N / 2, pc_hash_count(&h));
	for (i = 0; i < N; i++)
		CHECK(item_of(pc_hash_find(&h, (uint64_t)i * 7)) ==
		      (i % 2 ? &it[i] : NULL));
	/* a key added twice: the newest is found first */
	it[0].tag = -1;
	pc_hash_add(&h, &it[0].node, 7);
	CHECK(item_of(pc_hash_find(&h, 7)) == &it[0]);
	CHECK_OK(pc_hash_del(&h, &it[0].node));
	CHECK(item_of(pc_hash_find(&h, 7)) == &it[1]);
	pc_hash_fini(&h);
out_free:
	free(it);
}

static void test_hash_grows_and_drains(void)
{
	enum { N = 20000 };
	struct item *it = calloc(N, sizeof(*it));
	struct pc_hash_node *n;
	struct pc_hash h;
	unsigned int bits;
	int i, popped = 0;

	REQUIRE(it);
	if (!CHECK_OK(pc_hash_init(&h, 1)))
		goto out_free;
	bits = h.bits;
	/* device pointers: 256-byte aligned, far apart */
	for (i = 0; i < N; i++)
		pc_hash_add(&h, &it[i].node, 0x7f0000000000ULL + (uint64_t)i * 256);
	CHECK(h.bits > bits);
	CHECK((size_t)N <= 2 * ((size_t)1 << h.bits));
	for (i = 0; i < N; i++)
		CHECK(item_of(pc_hash_find(&h, 0x7f0000000000ULL +
					   (uint64_t)i * 256)) == &it[i]);
	while ((n = pc_hash_pop(&h))) {
		CHECK(!n->next);
		popped++;
	}
	CHECK_EQ(N, popped);
	CHECK_EQ(0, pc_hash_count(&h));
	CHECK(!pc_hash_find(&h, 0x7f0000000000ULL));
	pc_hash_fini(&h);
out_free:
	free(it);
}

static void test_hash_zeroed_is_empty(void)
{
	struct pc_hash h = { 0 };
	struct item it = { 0 };

	CHECK(!pc_hash_find(&h, 1));
	CHECK_ERR(pc_hash_del(&h, &it.node), -ENOENT);
	CHECK(!pc_hash_pop(&h));
	pc_hash_fini(&h);
}

/* --- messages ------------------------------------------------------------ */

static bool pair(int sv[2])
{
	return CHECK(!socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
}

static void test_msg_pieces_roundtrip(void)
{
	struct ptaskd_hdr h = { .magic = PTASKD_PROTO_MAGIC, .op = 42, .len = 11 };
	struct iovec p[3] = {
		{ .iov_base = "abc", .iov_len = 3 },
		{ .iov_base = NULL, .iov_len = 0 },
		{ .iov_base = "defghijk", .iov_len = 8 },
	};
	char buf[32] = "";
	int sv[2], fd = 7;

	REQUIRE(pair(sv));
	CHECK_OK(pc_msg_send(sv[0], &h, p, 3, -1));
	memset(&h, 0, sizeof(h));
	CHECK_OK(pc_msg_recv(sv[1], &h, buf, sizeof(buf), &fd, 0));
	CHECK_EQ(42, h.op);
	CHECK_EQ(11, h.len);
	CHECK(!memcmp(buf, "abcdefghijk", 11));
	CHECK_EQ(-1, fd);
	/* the header's length must be the payload's */
	h.len = 5;
	CHECK_ERR(pc_msg_send(sv[0], &h, p, 3, -1), -EINVAL);
	CHECK_ERR(pc_msg_send(sv[0], &h, p, PC_MSG_MAX_PIECES + 1, -1),
		  -EINVAL);
	close(sv[0]);
	close(sv[1]);
}

struct dribble {
	int fd;
	const unsigned char *bytes;
	size_t len;
};

/* Writes one byte at a time: every read on the other side is short. */
static void *dribble_main(void *arg)
{
	struct dribble *d = arg;
	size_t i;

	for (i = 0; i < d->len; i++) {
		if (write(d->fd, d->bytes + i, 1) != 1)
			break;
		if (i % 5 == 0)
			usleep(200);
	}
	return NULL;
}

static void test_msg_short_reads(void)
{
	unsigned char wire[sizeof(struct ptaskd_hdr) + 300];
	struct ptaskd_hdr h = { .magic = PTASKD_PROTO_MAGIC, .op = 9,
				.err = -EEXIST, .len = 300 };
	struct dribble d = { .bytes = wire, .len = sizeof(wire) };
	unsigned char buf[300];
	pthread_t t;
	size_t i;
	int sv[2];

	memcpy(wire, &h, sizeof(h));
	for (i = 0; i < 300; i++)
		wire[sizeof(h) + i] = (unsigned char)(i * 13);
	REQUIRE(pair(sv));
	d.fd = sv[0];
	REQUIRE(!pthread_create(&t, NULL, dribble_main, &d));
	memset(&h, 0, sizeof(h));
	/* polling first, then sleeping: both see short reads */
	CHECK_OK(pc_msg_recv(sv[1], &h, buf, sizeof(buf), NULL,
			     now_ns() + 1000000));
	pthread_join(t, NULL);
	CHECK_EQ(300, h.len);
	CHECK_EQ(-EEXIST, h.err);
	CHECK(!memcmp(buf, wire + sizeof(h), 300));
	CHECK_ERR(pc_msg_reply_err(&h, 9), -EEXIST);
	CHECK_ERR(pc_msg_reply_err(&h, 8), -EPROTO);
	close(sv[0]);
	close(sv[1]);
}

static void test_msg_passes_an_fd(void)
{
	struct ptaskd_hdr h = { .magic = PTASKD_PROTO_MAGIC, .op = 2, .len = 4 };
	struct iovec p = { .iov_base = "map!", .iov_len = 4 };
	char buf[4], c = 0;
	int sv[2], pfd[2], fd = -1;

	REQUIRE(pair(sv));
	REQUIRE(!pipe(pfd));
	CHECK_OK(pc_msg_send(sv[0], &h, &p, 1, pfd[1]));
	CHECK_OK(pc_msg_recv(sv[1], &h, buf, sizeof(buf), &fd, 0));
	CHECK(fd >= 0 && fd != pfd[1]);
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	CHECK_EQ(1, write(fd, "x", 1));
	CHECK_EQ(1, read(pfd[0], &c, 1));
	CHECK_EQ('x', c);
	/* an fd nobody asked for is not left open here */
	CHECK_OK(pc_msg_send(sv[0], &h, &p, 1, pfd[1]));
	CHECK_OK(pc_msg_recv(sv[1], &h, buf, sizeof(buf), NULL, 0));
	if (fd >= 0)
		close(fd);
	close(pfd[0]);
	close(pfd[1]);
	close(sv[0]);
	close(sv[1]);
}

static void test_msg_longer_than_the_room(void)
{
	struct ptaskd_hdr h = { .magic = PTASKD_PROTO_MAGIC, .op = 1, .len = 10 };
	struct iovec p = { .iov_base = "0123456789", .iov_len = 10 };
	char buf[4];
	void *all = NULL;
	int sv[2];

	REQUIRE(pair(sv));
	CHECK_OK(pc_msg_send(sv[0], &h, &p, 1, -1));
	CHECK_OK(pc_msg_send(sv[0], &h, &p, 1, -1));
	CHECK_OK(pc_msg_recv(sv[1], &h, buf, sizeof(buf), NULL, 0));
	CHECK_EQ(10, h.len);
	CHECK(!memcmp(buf, "0123", 4));
	/* the rest was dropped: the next message starts in step */
	CHECK_OK(pc_msg_recv_alloc(sv[1], &h, &all, NULL));
	CHECK_EQ(10, h.len);
	CHECK(all && !memcmp(all, "0123456789", 10));
	free(all);
	close(sv[0]);
	close(sv[1]);
}

static void test_msg_malformed_cut_off_timed_out(void)
{
	struct ptaskd_hdr h = { .magic = 0x12345678, .op = 1 };
	struct timeval tv = { .tv_usec = 50000 };
	char buf[8];
	int sv[2];

	REQUIRE(pair(sv));
	CHECK_EQ((ssize_t)sizeof(h), write(sv[0], &h, sizeof(h)));
	CHECK_ERR(pc_msg_recv(sv[1], &h, buf, sizeof(buf), NULL, 0), -EPROTO);
	h.magic = PTASKD_PROTO_MAGIC;
	h.len = PTASKD_MSG_MAX + 1;
	CHECK_EQ((ssize_t)sizeof(h), write(sv[0], &h, sizeof(h)));
	CHECK_ERR(pc_msg_recv(sv[1], &h, buf, sizeof(buf), NULL, 0), -EPROTO);
	/* nothing comes within SO_RCVTIMEO */
	CHECK(!setsockopt(sv[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	CHECK_ERR(pc_msg_recv(sv[1], &h, buf, sizeof(buf), NULL, 0),
		  -ETIMEDOUT);
	/* half a message, then the peer goes */
	h.len = 8;
	CHECK_EQ((ssize_t)sizeof(h), write(sv[0], &h, sizeof(h)));
	CHECK_EQ(3, write(sv[0], "abc", 3));
	close(sv[0]);
	CHECK_ERR(pc_msg_recv(sv[1], &h, buf, sizeof(buf), NULL, 0),
		  -ENOTCONN);
	h.len = 0;
	CHECK_ERR(pc_msg_send(sv[1], &h, NULL, 0, -1), -ENOTCONN);
	close(sv[1]);
}

/* Answers one request: the payload reversed, err -ENOSPC when asked. */
static void *server_main(void *arg)
{
	int fd = *(int *)arg;
	struct ptaskd_hdr h;
	char buf[64], out[64];
	struct iovec p = { .iov_base = out };
	uint32_t i;

	if (pc_msg_recv(fd, &h, buf, sizeof(buf), NULL, 0) || h.len > 64)
		return NULL;
	for (i = 0; i < h.len; i++)
		out[i] = buf[h.len - 1 - i];
	p.iov_len = h.len;
	h.err = h.op == 99 ? -ENOSPC : 0;
	pc_msg_send(fd, &h, &p, 1, -1);
	return NULL;
}

static void test_msg_call(void)
{
	struct iovec req = { .iov_base = "hello", .iov_len = 5 };
	char buf[16] = "";
	struct iovec rep = { .iov_base = buf, .iov_len = sizeof(buf) };
	pthread_t t;
	int sv[2];

	REQUIRE(pair(sv));
	REQUIRE(!pthread_create(&t, NULL, server_main, &sv[1]));
	CHECK_OK(pc_msg_call(sv[0], 7, &req, &rep));
	pthread_join(t, NULL);
	CHECK_EQ(5, rep.iov_len);
	CHECK(!memcmp(buf, "olleh", 5));
	REQUIRE(!pthread_create(&t, NULL, server_main, &sv[1]));
	rep.iov_len = sizeof(buf);
	CHECK_ERR(pc_msg_call(sv[0], 99, &req, &rep), -ENOSPC);
	pthread_join(t, NULL);
	close(sv[0]);
	close(sv[1]);
	CHECK_ERR(pc_msg_connect("/nonexistent/ptaskd.sock", 100), -ENOENT);
}

/*
 * common/spin.h: every kind polls at first; a wait longer than the window
 * stops that kind alone from polling (the two words of the bitmap kept
 * apart: ioctl kinds below 64, protocol ops above), a wait within it (or
 * exactly the window) makes it poll again; ioctl numbers and protocol
 * ops map to different kinds.
 */
static void test_spin_hist(void)
{
	struct pc_spin_hist h = { { 0, 0 } };
	unsigned int pull = pc_spin_kind(PTASK_IOC_PULL);
	unsigned int push = pc_spin_kind(PTASK_IOC_PUSH);
	unsigned int map = pc_spin_kind(PTASKD_OP_MAP);
	unsigned int k;

	CHECK(pull < 64 && push < 64 && pull != push);
	CHECK(map >= 64 && map < 128);
	for (k = 0; k < 128; k++)
		CHECK(pc_spin_worth(&h, k));
	pc_spin_learn(&h, pull, 3000000, 50000);	/* a 3 ms frame */
	CHECK(!pc_spin_worth(&h, pull));
	for (k = 0; k < 128; k++)
		if (k != pull)
			CHECK(pc_spin_worth(&h, k));
	/* the same bit in the other word is another kind */
	CHECK(pc_spin_worth(&h, pull + 64));
	pc_spin_learn(&h, map, 50001, 50000);
	CHECK(!pc_spin_worth(&h, map));
	CHECK(!pc_spin_worth(&h, pull));
	pc_spin_learn(&h, pull, 50000, 50000);	/* within the window */
	CHECK(pc_spin_worth(&h, pull));
	CHECK(!pc_spin_worth(&h, map));
	pc_spin_learn(&h, map, 0, 50000);
	CHECK(pc_spin_worth(&h, map));
	CHECK_EQ(h.slow[0], 0);
	CHECK_EQ(h.slow[1], 0);
}

int main(int argc, char **argv)
{
	static const struct h_test tests[] = {
		H_TEST(test_hash_add_find_del),
		H_TEST(test_hash_grows_and_drains),
		H_TEST(test_hash_zeroed_is_empty),
		H_TEST(test_msg_pieces_roundtrip),
		H_TEST(test_msg_short_reads),
		H_TEST(test_msg_passes_an_fd),
		H_TEST(test_msg_longer_than_the_room),
		H_TEST(test_msg_malformed_cut_off_timed_out),
		H_TEST(test_msg_call),
		H_TEST(test_spin_hist),
	};

	return h_main(tests, ARRAY_SIZE(tests), argc, argv);
}
