/* Unit tests for the vxlan socket's non-blocking send (vxlan_backlog.c,
 * vxlan_tx.c) and its receive side's errors and buffers (vxlan_sock.c).
 *
 * The send backlog twice: against sends this file makes push back with
 * EAGAIN (sendmmsg and sendmsg are interposed, as in test_vxlan.c), which
 * runs anywhere; and against the real kernel (root only, else skipped).
 * A loopback send never pushes back -- loopback_xmit orphans the skb, so
 * the send buffer is free again before sendmsg returns, however small
 * SO_SNDBUF is and whether or not the receiver reads -- so the real test
 * runs in a network namespace of its own with a tbf qdisc on lo slow
 * enough to hold the skbs (and so the send buffer) until it is deleted. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "frame_builder.h"
#include "packet/hdr.h"
#include "parse/flow_extract.h"
#include "port/vxlan.h"

/* Fault injection: while push_back is set every send fails with EAGAIN,
 * as on a socket whose send buffer is full; rx_error makes recvmmsg fail
 * with that errno. */
static bool push_back;
static int rx_error;

int sendmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags)
{
	static int (*real)(int, struct mmsghdr *, unsigned int, int);
	if (!real)
		real = (int (*)(int, struct mmsghdr *, unsigned int, int))dlsym(RTLD_NEXT, "sendmmsg");
	if (push_back) {
		errno = EAGAIN;
		return -1;
	}
	return real(fd, msgs, vlen, flags);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	static ssize_t (*real)(int, const struct msghdr *, int);
	if (!real)
		real = (ssize_t (*)(int, const struct msghdr *, int))dlsym(RTLD_NEXT, "sendmsg");
	if (push_back) {
		errno = EAGAIN;
		return -1;
	}
	return real(fd, msg, flags);
}

int recvmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags, struct timespec *timeout)
{
	static int (*real)(int, struct mmsghdr *, unsigned int, int, struct timespec *);
	if (!real)
		real = (int (*)(int, struct mmsghdr *, unsigned int, int, struct timespec *))dlsym(RTLD_NEXT, "recvmmsg");
	if (rx_error) {
		errno = rx_error;
		return -1;
	}
	return real(fd, msgs, vlen, flags, timeout);
}

struct fixture {
	struct pkt_pool *pool;
	struct port *port;
	struct port_io io;
	struct vxlan_sock *sock;
};

static struct vxlan_addr loopback(void)
{
	struct vxlan_addr a = { .family = 4 };
	inet_pton(AF_INET, "127.0.0.1", a.bytes);
	return a;
}

/* A port on 127.0.0.1 whose remote is itself, on a port of its own. */
static void open_port(struct fixture *fx)
{
	struct vxlan_options opts = { .vni = 7, .local = loopback(), .mtu = 1450, .n_remotes = 1 };
	opts.remotes[0] = loopback();
	fx->port = NULL;
	for (unsigned i = 0; i < 50 && !fx->port; i++) {
		opts.dst_port = (uint16_t)(20000 + (getpid() * 11 + i * 137) % 30000);
		if (vxlan_port_open(&opts, NULL, &fx->port) < 0)
			fx->port = NULL;
	}
	assert_non_null(fx->port);
	assert_int_equal(port_io_init(fx->port, &fx->io, 0), 0);
	fx->sock = vxlan_port_sock(fx->port);
}

static void close_port(struct fixture *fx)
{
	port_io_fini(fx->port, &fx->io);
	port_destroy(fx->port);
	fx->port = NULL;
}

static int setup(void **state)
{
	static struct fixture fx;
	memset(&fx, 0, sizeof(fx));
	if (pkt_pool_create(1024, &fx.pool) < 0)
		return -1;
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	pkt_pool_destroy(fx->pool);
	return 0;
}

/* A plain TCP frame of 100 payload bytes whose TCP seq is `seq`. */
static struct pkt *frame_seq(struct fixture *fx, uint32_t seq)
{
	uint8_t buf[512];
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.payload_len = 100;
	f.seq = seq;
	size_t len = fb_build(&f, buf, sizeof(buf), NULL);
	struct pkt *pkt = pkt_alloc(fx->pool);
	assert_non_null(pkt);
	assert_int_equal(pkt_set_data(pkt, buf, (uint32_t)len), 0);
	struct flow_key key;
	assert_int_equal(flow_extract(pkt, 0, &key), DROP_NONE);
	pkt->tunnel.family = 4;
	memcpy(pkt->tunnel.dst, loopback().bytes, 16);
	return pkt;
}

/* Sends frames seq first..first+n-1, `per_batch` per tx_batch. */
static void send_seqs(struct fixture *fx, uint32_t first, unsigned n, unsigned per_batch)
{
	struct pkt *pkts[64];
	for (unsigned done = 0; done < n;) {
		unsigned k = 0;
		for (; k < per_batch && done + k < n; k++)
			pkts[k] = frame_seq(fx, first + done + k);
		fx->port->cls->tx_batch(fx->port, &fx->io, pkts, k);
		done += k;
	}
}

/* Reads everything queued on the socket (until 200 ms of quiet) and
 * stores the inner TCP seqs; their count. */
static unsigned read_seqs(struct fixture *fx, uint32_t *seqs, unsigned max)
{
	unsigned n = 0;
	struct pkt *rx[64];
	struct pollfd pfd = { .fd = vxlan_sock_fd(fx->sock), .events = POLLIN };
	while (poll(&pfd, 1, 200) > 0) {
		int got = vxlan_sock_rx_batch(fx->sock, fx->pool, rx, 64);
		assert_true(got >= 0);
		for (int i = 0; i < got; i++) {
			struct flow_key key;
			assert_int_equal(flow_extract_vxlan(rx[i], &key), DROP_NONE);
			const struct tcp_hdr *th = (const void *)(rx[i]->data + rx[i]->inner_l4_ofs);
			if (n < max)
				seqs[n++] = ntohl(th->seq_be);
			pkt_free(rx[i]);
		}
	}
	return n;
}

/* The kernel pushes back: the first 256 messages wait in the backlog, the
 * rest are dropped and counted; while blocked resume says -EAGAIN and new
 * frames queue behind (here: are dropped, it is full); once the kernel
 * takes sends again resume drains all 256 in order. */
static void test_pushed_back_sends_wait_in_order(void **state)
{
	struct fixture *fx = *state;
	open_port(fx);
	push_back = true;
	send_seqs(fx, 0, 300, 30);
	struct vxlan_sock_stats st;
	vxlan_sock_get_stats(fx->sock, &st);
	assert_true(vxlan_sock_tx_blocked(fx->sock));
	assert_int_equal(st.tx_backlogged, 256);
	assert_int_equal(st.tx_backlog_len, 256);
	assert_int_equal(st.tx_backlog_drops, 44);
	assert_int_equal(st.tx_blocked_events, 1);
	assert_int_equal(st.tx_errors, 0);
	assert_int_equal(fx->io.stats.drops[DROP_UNDERLAY_BACKLOG_FULL], 44);
	assert_int_equal(fx->io.stats.drops[DROP_TX_ERROR], 0);
	assert_string_equal(drop_reason_name(DROP_UNDERLAY_BACKLOG_FULL), "underlay_backlog_full");
	assert_int_equal(vxlan_sock_tx_resume(fx->sock), -EAGAIN);

	push_back = false;
	assert_int_equal(vxlan_sock_tx_resume(fx->sock), 0);
	assert_false(vxlan_sock_tx_blocked(fx->sock));
	vxlan_sock_get_stats(fx->sock, &st);
	assert_int_equal(st.tx_backlog_len, 0);
	assert_int_equal(st.tx_sends, 256);
	static uint32_t seqs[512];
	unsigned n = read_seqs(fx, seqs, 512);
	assert_int_equal(n, 256);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(seqs[i], i);
	/* The frames' own buffers went back at once (the backlog holds
	 * copies). */
	close_port(fx);
	struct pkt_pool_stats ps;
	pkt_pool_get_stats(fx->pool, &ps);
	assert_int_equal(ps.in_use, 0);
}

/* A frame sent while the socket is blocked goes behind the backlog even
 * when the kernel would take it: nothing overtakes. */
static void test_blocked_socket_never_reorders(void **state)
{
	struct fixture *fx = *state;
	open_port(fx);
	push_back = true;
	send_seqs(fx, 0, 3, 3);
	push_back = false;
	send_seqs(fx, 3, 2, 2); /* the kernel would take these now */
	struct vxlan_sock_stats st;
	vxlan_sock_get_stats(fx->sock, &st);
	assert_int_equal(st.tx_sends, 0);
	assert_int_equal(st.tx_backlog_len, 5);
	assert_int_equal(st.tx_blocked_events, 1);
	assert_int_equal(vxlan_sock_tx_resume(fx->sock), 0);
	uint32_t seqs[8];
	assert_int_equal(read_seqs(fx, seqs, 8), 5);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(seqs[i], i);
	close_port(fx);
}

/* ---- against the kernel, in a namespace of our own (root) ---------------- */

static int netns_enter(void)
{
	int orig = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (orig < 0 || unshare(CLONE_NEWNET) < 0)
		return -1;
	if (system("ip link set lo up") != 0) {
		setns(orig, CLONE_NEWNET);
		close(orig);
		return -1;
	}
	return orig;
}

static void netns_leave(int orig)
{
	assert_int_equal(setns(orig, CLONE_NEWNET), 0);
	close(orig);
}

/* A small SO_SNDBUF and a qdisc that holds what is sent: the kernel pushes
 * back, the backlog fills and overflows.  Deleting the qdisc frees its skbs
 * (lost; they are the kernel's) and the send buffer: EPOLLOUT, and
 * tx_resume drains the backlog, whose frames arrive in order after
 * whatever the qdisc let through before. */
static void test_full_send_buffer_backlogs_then_drains(void **state)
{
	struct fixture *fx = *state;
	int ns = geteuid() == 0 ? netns_enter() : -1;
	if (ns < 0)
		skip();
	assert_int_equal(system("tc qdisc add dev lo root tbf rate 8kbit burst 1600 limit 1000000"), 0);
	open_port(fx);
	int small = 4096;
	assert_int_equal(setsockopt(vxlan_sock_fd(fx->sock), SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
	send_seqs(fx, 0, 400, 20);
	struct vxlan_sock_stats st;
	vxlan_sock_get_stats(fx->sock, &st);
	uint64_t accepted = st.tx_sends;
	assert_true(vxlan_sock_tx_blocked(fx->sock));
	assert_true(accepted > 0 && accepted < 100);
	assert_int_equal(st.tx_backlogged, 256);
	assert_int_equal(st.tx_backlog_drops, 400 - 256 - accepted);
	assert_int_equal(fx->io.stats.drops[DROP_UNDERLAY_BACKLOG_FULL], 400 - 256 - accepted);
	assert_int_equal(vxlan_sock_tx_resume(fx->sock), -EAGAIN);

	assert_int_equal(system("tc qdisc del dev lo root"), 0);
	int r = -EAGAIN;
	for (int tries = 0; tries < 20 && r == -EAGAIN; tries++) {
		struct pollfd pfd = { .fd = vxlan_sock_fd(fx->sock), .events = POLLOUT };
		poll(&pfd, 1, 100);
		r = vxlan_sock_tx_resume(fx->sock);
	}
	assert_int_equal(r, 0);
	static uint32_t seqs[512];
	unsigned n = read_seqs(fx, seqs, 512);
	assert_true(n >= 256);
	for (unsigned i = 1; i < n; i++)
		assert_true(seqs[i] > seqs[i - 1]);
	for (unsigned i = 0; i < 256; i++)
		assert_int_equal(seqs[n - 256 + i], accepted + i);
	close_port(fx);
	netns_leave(ns);
}

/* ---- receive ----------------------------------------------------------------- */

/* A failing recvmmsg (not EAGAIN) is returned and counted. */
static void test_rx_error_is_returned_and_counted(void **state)
{
	struct fixture *fx = *state;
	open_port(fx);
	struct pkt *rx[8];
	assert_int_equal(vxlan_sock_rx_batch(fx->sock, fx->pool, rx, 8), 0); /* EAGAIN: nothing */
	rx_error = ENOMEM;
	int r = vxlan_sock_rx_batch(fx->sock, fx->pool, rx, 8);
	rx_error = 0;
	assert_int_equal(r, -ENOMEM);
	struct vxlan_sock_stats st;
	vxlan_sock_get_stats(fx->sock, &st);
	assert_int_equal(st.rx_errors, 1);
	assert_int_equal(st.last_rx_errno, ENOMEM);
	close_port(fx);
}

/* An empty read allocates nothing: the receive buffers stay in the socket
 * between calls and only the ones filled are replaced.  They go back to
 * the pool with vxlan_sock_rx_release() or the socket. */
static void test_empty_read_allocates_nothing(void **state)
{
	struct fixture *fx = *state;
	open_port(fx);
	struct pkt *rx[64];
	struct pkt_pool_stats before, after;
	assert_int_equal(vxlan_sock_rx_batch(fx->sock, fx->pool, rx, 64), 0);
	pkt_pool_get_stats(fx->pool, &before);
	assert_int_equal(before.in_use, 1); /* max 64: a burst of one buffer */
	for (int i = 0; i < 10; i++)
		assert_int_equal(vxlan_sock_rx_batch(fx->sock, fx->pool, rx, 64), 0);
	pkt_pool_get_stats(fx->pool, &after);
	assert_int_equal(after.in_use, before.in_use);
	assert_int_equal(after.allocs, before.allocs);

	/* One datagram in: one buffer used and replaced, one pkt out. */
	send_seqs(fx, 42, 1, 1);
	uint32_t seq;
	assert_int_equal(read_seqs(fx, &seq, 1), 1);
	assert_int_equal(seq, 42);
	/* The filled buffer was given up; the next read takes one new. */
	pkt_pool_get_stats(fx->pool, &after);
	assert_int_equal(after.in_use, before.in_use - 1);
	assert_int_equal(vxlan_sock_rx_batch(fx->sock, fx->pool, rx, 64), 0);
	pkt_pool_get_stats(fx->pool, &after);
	assert_int_equal(after.in_use, before.in_use);
	/* The frame sent, the pkt read out of the datagram, one new buffer. */
	assert_int_equal(after.allocs, before.allocs + 3);
	vxlan_sock_rx_release(fx->sock);
	pkt_pool_get_stats(fx->pool, &after);
	assert_int_equal(after.in_use, 0);
	close_port(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pushed_back_sends_wait_in_order),
		cmocka_unit_test(test_blocked_socket_never_reorders),
		cmocka_unit_test(test_full_send_buffer_backlogs_then_drains),
		cmocka_unit_test(test_rx_error_is_returned_and_counted),
		cmocka_unit_test(test_empty_read_allocates_nothing),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
