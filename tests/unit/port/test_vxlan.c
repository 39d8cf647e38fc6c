/* Unit tests for src/port/vxlan.c over the loopback device (no root): a TSO
 * frame leaves as one UDP_SEGMENT train and comes back through UDP_GRO,
 * cut again into one VXLAN datagram per segment; plain frames get their
 * partial checksum completed; oversized plain frames are dropped as
 * mtu_exceeded; two ports share one socket.  The UDP_SEGMENT fallback runs
 * against a sendmmsg that refuses UDP_SEGMENT with EIO (fault injection:
 * the kernel here accepts it on loopback), the UDP_GRO refusal against a
 * setsockopt that refuses UDP_GRO. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include "frame_builder.h"
#include "packet/csum.h"
#include "packet/hdr.h"
#include "parse/flow_extract.h"
#include "port/vxlan.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

/* Fault injection: this definition takes the place of libc's sendmmsg for
 * the vxlan port linked into this test.  With refuse_udp_segment set, it
 * answers like a kernel whose egress device has no checksum offload: it
 * sends the messages before the first one that carries a UDP_SEGMENT cmsg
 * and returns their count, or fails with EIO if that is the first. */
static bool refuse_udp_segment;
static unsigned refused_calls;

static bool msg_has_udp_segment(struct msghdr *mh)
{
	if (!mh->msg_control)
		return false;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c))
		if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_SEGMENT)
			return true;
	return false;
}

/* And setsockopt(UDP_GRO) fails with ENOPROTOOPT while refuse_udp_gro is
 * set, as on a kernel before 5.0. */
static bool refuse_udp_gro;

int setsockopt(int fd, int level, int optname, const void *optval, socklen_t optlen)
{
	static int (*real_setsockopt)(int, int, int, const void *, socklen_t);
	if (!real_setsockopt)
		real_setsockopt = (int (*)(int, int, int, const void *, socklen_t))dlsym(RTLD_NEXT, "setsockopt");
	if (refuse_udp_gro && level == IPPROTO_UDP && optname == UDP_GRO) {
		errno = ENOPROTOOPT;
		return -1;
	}
	return real_setsockopt(fd, level, optname, optval, optlen);
}

int sendmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags)
{
	static int (*real_sendmmsg)(int, struct mmsghdr *, unsigned int, int);
	if (!real_sendmmsg)
		real_sendmmsg = (int (*)(int, struct mmsghdr *, unsigned int, int))dlsym(RTLD_NEXT, "sendmmsg");
	unsigned first_refused = vlen;
	if (refuse_udp_segment)
		for (first_refused = 0; first_refused < vlen; first_refused++)
			if (msg_has_udp_segment(&msgs[first_refused].msg_hdr))
				break;
	if (first_refused == 0 && vlen > 0) {
		refused_calls++;
		errno = EIO;
		return -1;
	}
	return real_sendmmsg(fd, msgs, first_refused, flags);
}

struct fixture {
	struct pkt_pool *pool;
	struct port *port;
	struct port_io io;
	struct vxlan_sock *sock;
	uint16_t udp_port;
};

static struct vxlan_addr loopback(void)
{
	struct vxlan_addr a = { .family = 4 };
	inet_pton(AF_INET, "127.0.0.1", a.bytes);
	return a;
}

static int setup(void **state)
{
	static struct fixture fx;
	memset(&fx, 0, sizeof(fx));
	if (pkt_pool_create(256, &fx.pool) < 0)
		return -1;
	struct vxlan_options opts = { .vni = 99, .local = loopback(), .mtu = 1450, .n_remotes = 1 };
	opts.remotes[0] = loopback();
	/* A port of our own, so parallel runs do not collide. */
	for (unsigned i = 0; i < 50; i++) {
		fx.udp_port = (uint16_t)(20000 + (getpid() * 7 + i * 131) % 30000);
		opts.dst_port = fx.udp_port;
		if (vxlan_port_open(&opts, NULL, &fx.port) == 0)
			break;
		fx.port = NULL;
	}
	if (!fx.port || port_io_init(fx.port, &fx.io, 0) < 0)
		return -1;
	fx.sock = vxlan_port_sock(fx.port);
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	port_io_fini(fx->port, &fx->io);
	port_destroy(fx->port);
	pkt_pool_destroy(fx->pool);
	return 0;
}

/* A TCP frame with `payload` bytes from the builder, parsed, addressed to
 * the loopback VTEP. */
static struct pkt *tcp_frame(struct fixture *fx, size_t payload, enum fb_csum_mode csum)
{
	static uint8_t buf[FB_MAX_FRAME];
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.payload_len = payload;
	f.csum = csum;
	f.seq = 1000;
	struct fb_layout lay;
	size_t len = fb_build(&f, buf, sizeof(buf), &lay);
	assert_true(len > 0);
	struct pkt *pkt = pkt_alloc(fx->pool);
	assert_non_null(pkt);
	assert_int_equal(pkt_set_data(pkt, buf, (uint32_t)len), 0);
	struct flow_key key;
	assert_int_equal(flow_extract(pkt, 0, &key), DROP_NONE);
	if (csum == FB_CSUM_PARTIAL) {
		pkt->ol.flags = PKT_OL_NEEDS_CSUM;
		pkt->ol.csum_start = (uint16_t)lay.l4_ofs;
		pkt->ol.csum_offset = TCP_CSUM_OFFSET;
	}
	pkt->tunnel.family = 4;
	memcpy(pkt->tunnel.dst, loopback().bytes, 16);
	return pkt;
}

static int receive(struct fixture *fx, struct pkt **out, unsigned max, unsigned want)
{
	unsigned n = 0;
	for (int tries = 0; tries < 50 && n < want; tries++) {
		struct pollfd pfd = { .fd = vxlan_sock_fd(fx->sock), .events = POLLIN };
		poll(&pfd, 1, 100);
		int got = vxlan_sock_rx_batch(fx->sock, fx->pool, out + n, max - n);
		assert_true(got >= 0);
		n += (unsigned)got;
	}
	return (int)n;
}

/* The inner TCP checksum of a received datagram is complete and right. */
static void assert_inner_tcp_csum_ok(struct pkt *pkt)
{
	struct flow_key key;
	assert_int_equal(flow_extract_vxlan(pkt, &key), DROP_NONE);
	const struct ipv4_hdr *ip = (const void *)(pkt->data + pkt->inner_l3_ofs);
	uint32_t l4_len = pkt_len(pkt) - pkt->inner_l4_ofs;
	uint32_t sum = csum_pseudo_ipv4(ip->src, ip->dst, IP_PROTO_TCP, l4_len);
	sum = csum_pkt(pkt, pkt->inner_l4_ofs, l4_len, sum);
	assert_int_equal(csum_fold(sum), 0);
}

static void test_tso_frame_is_one_train_and_comes_back_cut(void **state)
{
	struct fixture *fx = *state;
	struct pkt *pkt = tcp_frame(fx, 10 * 1000, FB_CSUM_PARTIAL);
	pkt->ol.gso_type = PKT_GSO_TCPV4;
	pkt->ol.gso_size = 1000;
	fx->port->cls->tx_batch(fx->port, &fx->io, &pkt, 1);

	struct vxlan_sock_stats st;
	vxlan_sock_get_stats(fx->sock, &st);
	assert_int_equal(st.tx_datagrams, 10);
	assert_int_equal(st.tx_gso_sends, 1); /* one UDP_SEGMENT send */

	struct pkt *rx[64];
	int n = receive(fx, rx, 64, 10);
	assert_int_equal(n, 10);
	for (int i = 0; i < n; i++) {
		assert_int_equal(vxlan_pkt_vni(rx[i]), 99);
		assert_int_equal(rx[i]->tunnel.family, 4);
		assert_int_equal(rx[i]->tunnel.src_port, fx->udp_port);
		assert_inner_tcp_csum_ok(rx[i]);
		const struct tcp_hdr *th = (const void *)(rx[i]->data + rx[i]->inner_l4_ofs);
		assert_int_equal(ntohl(th->seq_be), 1000 + 1000 * (uint32_t)i);
		assert_int_equal(pkt_len(rx[i]) - rx[i]->inner_payload_ofs, 1000);
		pkt_free(rx[i]);
	}
	vxlan_sock_get_stats(fx->sock, &st);
	assert_int_equal(st.rx_datagrams, 10);
	assert_true(st.rx_gro_buffers >= 1); /* UDP_GRO handed back a coalesced buffer */
}

/* Receives `want` datagrams and checks they are the segments of a frame
 * with seq 1000 cut at `mss`, inner checksums right. */
static void receive_segments(struct fixture *fx, unsigned want, uint32_t mss)
{
	struct pkt *rx[64];
	int n = receive(fx, rx, 64, want);
	assert_int_equal(n, want);
	for (int i = 0; i < n; i++) {
		assert_int_equal(vxlan_pkt_vni(rx[i]), 99);
		assert_inner_tcp_csum_ok(rx[i]);
		const struct tcp_hdr *th = (const void *)(rx[i]->data + rx[i]->inner_l4_ofs);
		assert_int_equal(ntohl(th->seq_be), 1000 + mss * (uint32_t)i);
		assert_int_equal(pkt_len(rx[i]) - rx[i]->inner_payload_ofs, mss);
		pkt_free(rx[i]);
	}
}

/* Without UDP_SEGMENT the train goes out one message per datagram; the
 * datagrams are the same. */
static void test_tso_frame_without_udp_segment(void **state)
{
	struct fixture *fx = *state;
	struct vxlan_sock_stats before, st;
	vxlan_sock_get_stats(fx->sock, &before);
	vxlan_sock_set_udp_segment(fx->sock, false);
	struct pkt *pkt = tcp_frame(fx, 6 * 1000, FB_CSUM_PARTIAL);
	pkt->ol.gso_type = PKT_GSO_TCPV4;
	pkt->ol.gso_size = 1000;
	fx->port->cls->tx_batch(fx->port, &fx->io, &pkt, 1);
	vxlan_sock_set_udp_segment(fx->sock, true);
	vxlan_sock_get_stats(fx->sock, &st);
	assert_int_equal(st.tx_datagrams - before.tx_datagrams, 6);
	assert_int_equal(st.tx_sends - before.tx_sends, 6);
	assert_int_equal(st.tx_gso_sends - before.tx_gso_sends, 0);
	receive_segments(fx, 6, 1000);
}

/* A TSO frame whose payload is in frags (views into another buffer) is
 * sent from where it lies; the frag owner lives until the send is done. */
static void test_tso_frame_with_frags(void **state)
{
	struct fixture *fx = *state;
	struct pkt *pkt = tcp_frame(fx, 8 * 1000, FB_CSUM_PARTIAL);
	pkt->ol.gso_type = PKT_GSO_TCPV4;
	pkt->ol.gso_size = 1000;
	/* Move the payload into two frags cut mid-segment. */
	uint32_t hdr = pkt->payload_ofs, plen = pkt->size - hdr;
	struct pkt *owner = pkt_alloc(fx->pool);
	assert_int_equal(pkt_set_data(owner, pkt->data + hdr, plen), 0);
	pkt_trim(pkt, hdr);
	assert_int_equal(pkt_add_frag(pkt, owner->data, 2500, owner), 0);
	assert_int_equal(pkt_add_frag(pkt, owner->data + 2500, plen - 2500, owner), 0);
	pkt_free(owner);
	fx->port->cls->tx_batch(fx->port, &fx->io, &pkt, 1);
	receive_segments(fx, 8, 1000);
	struct pkt_pool_stats ps;
	pkt_pool_get_stats(fx->pool, &ps);
	assert_int_equal(ps.in_use, 0); /* frame and frag owner freed after the send */
}

/* A TSO frame of `segs` segments of 1000 bytes, payload in the linear part. */
static struct pkt *tso_frame(struct fixture *fx, unsigned segs)
{
	struct pkt *pkt = tcp_frame(fx, segs * 1000, FB_CSUM_PARTIAL);
	pkt->ol.gso_type = PKT_GSO_TCPV4;
	pkt->ol.gso_size = 1000;
	return pkt;
}

/* Receives exactly `want` datagrams into rx, then checks nothing more is
 * queued (no datagram sent twice).  Datagrams sent one per message come
 * back one per read. */
static void receive_exactly(struct fixture *fx, struct pkt **rx, unsigned want)
{
	unsigned n = 0;
	struct pollfd pfd = { .fd = vxlan_sock_fd(fx->sock), .events = POLLIN };
	while (n < want && poll(&pfd, 1, 200) > 0) {
		int got = vxlan_sock_rx_batch(fx->sock, fx->pool, rx + n, want - n);
		assert_true(got >= 0);
		n += (unsigned)got;
	}
	assert_int_equal(n, want);
	assert_int_equal(poll(&pfd, 1, 50), 0);
}

/* Inner TCP payload bytes and seq of a received datagram. */
static uint32_t rx_payload(struct pkt *pkt)
{
	assert_inner_tcp_csum_ok(pkt);
	return pkt_len(pkt) - pkt->inner_payload_ofs;
}
static uint32_t rx_seq(struct pkt *pkt)
{
	const struct tcp_hdr *th = (const void *)(pkt->data + pkt->inner_l4_ofs);
	return ntohl(th->seq_be);
}

static void refusal_begin(struct fixture *fx, struct vxlan_sock_stats *before)
{
	vxlan_sock_set_udp_segment(fx->sock, true);
	refuse_udp_segment = true;
	refused_calls = 0;
	vxlan_sock_get_stats(fx->sock, before);
}

/* Ends a refusal case; every pkt the case took must be back in the pool. */
static void refusal_end(struct fixture *fx)
{
	refuse_udp_segment = false;
	vxlan_sock_set_udp_segment(fx->sock, true);
	struct pkt_pool_stats ps;
	pkt_pool_get_stats(fx->pool, &ps);
	assert_int_equal(ps.in_use, 0);
}

/* The kernel refuses the UDP_SEGMENT send with EIO: the train is resent
 * one datagram per message, UDP_SEGMENT is switched off and counted, no
 * error is counted, and the next frame goes out without asking again. */
static void test_udp_segment_refused_train_is_resent_per_datagram(void **state)
{
	struct fixture *fx = *state;
	struct vxlan_sock_stats before, st;
	refusal_begin(fx, &before);
	struct pkt *pkt = tso_frame(fx, 10);
	fx->port->cls->tx_batch(fx->port, &fx->io, &pkt, 1);
	vxlan_sock_get_stats(fx->sock, &st);
	assert_int_equal(refused_calls, 1);
	assert_int_equal(st.udp_segment_fallbacks - before.udp_segment_fallbacks, 1);
	assert_false(st.udp_segment_on);
	assert_int_equal(st.tx_errors, before.tx_errors);
	assert_int_equal(st.tx_gso_sends, before.tx_gso_sends);
	assert_int_equal(st.tx_datagrams - before.tx_datagrams, 10);
	assert_int_equal(st.tx_bytes - before.tx_bytes,
			 10 * (VXLAN_HDR_LEN + ETH_HDR_LEN + IPV4_HDR_LEN + TCP_HDR_LEN + 1000));
	receive_segments(fx, 10, 1000);

	/* UDP_SEGMENT is off now: no message asks for it, none is refused. */
	pkt = tso_frame(fx, 6);
	fx->port->cls->tx_batch(fx->port, &fx->io, &pkt, 1);
	vxlan_sock_get_stats(fx->sock, &before);
	assert_int_equal(refused_calls, 1);
	assert_int_equal(before.udp_segment_fallbacks, st.udp_segment_fallbacks);
	assert_int_equal(before.tx_sends - st.tx_sends, 6);
	receive_segments(fx, 6, 1000);
	refusal_end(fx);
}

/* Plain frames around a refused train in one sendmmsg: the one before is
 * sent (the kernel returns 1), the train falls back, the one after is sent;
 * everything arrives once and in order. */
static void test_udp_segment_refused_mid_batch(void **state)
{
	struct fixture *fx = *state;
	struct vxlan_sock_stats before, st;
	refusal_begin(fx, &before);
	struct pkt *pkts[3] = { tcp_frame(fx, 300, FB_CSUM_PARTIAL), tso_frame(fx, 5),
				tcp_frame(fx, 400, FB_CSUM_PARTIAL) };
	fx->port->cls->tx_batch(fx->port, &fx->io, pkts, 3);
	vxlan_sock_get_stats(fx->sock, &st);
	assert_int_equal(refused_calls, 1);
	assert_int_equal(st.udp_segment_fallbacks - before.udp_segment_fallbacks, 1);
	assert_int_equal(st.tx_errors, before.tx_errors);
	assert_int_equal(st.tx_datagrams - before.tx_datagrams, 7);
	struct pkt *rx[8];
	receive_exactly(fx, rx, 7);
	assert_int_equal(rx_payload(rx[0]), 300);
	for (unsigned i = 0; i < 5; i++) {
		assert_int_equal(rx_payload(rx[1 + i]), 1000);
		assert_int_equal(rx_seq(rx[1 + i]), 1000 + 1000 * i);
	}
	assert_int_equal(rx_payload(rx[6]), 400);
	for (unsigned i = 0; i < 7; i++)
		pkt_free(rx[i]);
	refusal_end(fx);
}

/* Several refused messages queued before the first refusal was seen: two
 * frames, and a 64-segment frame that takes two UDP_SEGMENT sends (61 datagrams of
 * 1062 bytes fill one).  Each
 * falls back on its own; every segment arrives once, in order. */
static void test_udp_segment_refused_for_every_queued_train(void **state)
{
	struct fixture *fx = *state;
	struct vxlan_sock_stats before, st;
	refusal_begin(fx, &before);
	struct pkt *pkts[2] = { tso_frame(fx, 3), tso_frame(fx, 64) };
	fx->port->cls->tx_batch(fx->port, &fx->io, pkts, 2);
	vxlan_sock_get_stats(fx->sock, &st);
	assert_int_equal(refused_calls, 3);
	assert_int_equal(st.udp_segment_fallbacks - before.udp_segment_fallbacks, 3);
	assert_int_equal(st.tx_errors, before.tx_errors);
	assert_int_equal(st.tx_datagrams - before.tx_datagrams, 67);
	struct pkt *rx[80];
	receive_exactly(fx, rx, 67);
	for (unsigned i = 0; i < 67; i++) {
		uint32_t k = i < 3 ? i : i - 3;
		assert_int_equal(rx_payload(rx[i]), 1000);
		assert_int_equal(rx_seq(rx[i]), 1000 + 1000 * k);
		pkt_free(rx[i]);
	}
	refusal_end(fx);
}

/* The fallback cuts a train whose payload lies in frags cut mid-segment:
 * the datagrams' iovecs straddle the frag boundaries. */
static void test_udp_segment_refused_with_frags(void **state)
{
	struct fixture *fx = *state;
	struct vxlan_sock_stats before, st;
	refusal_begin(fx, &before);
	struct pkt *pkt = tso_frame(fx, 8);
	uint32_t hdr = pkt->payload_ofs, plen = pkt->size - hdr;
	struct pkt *owner = pkt_alloc(fx->pool);
	assert_int_equal(pkt_set_data(owner, pkt->data + hdr, plen), 0);
	pkt_trim(pkt, hdr);
	assert_int_equal(pkt_add_frag(pkt, owner->data, 700, owner), 0);
	assert_int_equal(pkt_add_frag(pkt, owner->data + 700, 2500, owner), 0);
	assert_int_equal(pkt_add_frag(pkt, owner->data + 3200, plen - 3200, owner), 0);
	pkt_free(owner);
	fx->port->cls->tx_batch(fx->port, &fx->io, &pkt, 1);
	vxlan_sock_get_stats(fx->sock, &st);
	assert_int_equal(st.udp_segment_fallbacks - before.udp_segment_fallbacks, 1);
	assert_int_equal(st.tx_errors, before.tx_errors);
	receive_segments(fx, 8, 1000);
	refusal_end(fx);
}

/* A socket whose UDP_GRO the kernel refused: a TSO train sent to it
 * arrives one datagram per read, all of it; switching UDP_GRO off is a
 * no-op that succeeds, switching it on is refused. */
static void test_udp_gro_refused_datagrams_arrive_one_by_one(void **state)
{
	struct fixture *fx = *state;
	struct vxlan_options opts = { .vni = 99, .local = loopback(), .mtu = 1450, .n_remotes = 1 };
	opts.remotes[0] = loopback();
	struct port *port = NULL;
	refuse_udp_gro = true;
	for (unsigned i = 1; i < 50 && !port; i++) {
		opts.dst_port = (uint16_t)(fx->udp_port + i * 17);
		if (vxlan_port_open(&opts, NULL, &port) < 0)
			port = NULL;
	}
	assert_non_null(port);
	struct vxlan_sock *sock = vxlan_port_sock(port);
	struct vxlan_sock_stats st;
	vxlan_sock_get_stats(sock, &st);
	assert_false(st.udp_gro_probed);
	assert_false(st.udp_gro_on);
	assert_int_equal(vxlan_sock_set_udp_gro(sock, false), 0);
	assert_int_equal(vxlan_sock_set_udp_gro(sock, true), -EOPNOTSUPP);
	refuse_udp_gro = false;

	/* The train goes out with UDP_SEGMENT (loopback keeps it whole); the
	 * kernel cuts it for a socket without UDP_GRO. */
	struct pkt *pkt = tso_frame(fx, 10);
	struct port_io io;
	assert_int_equal(port_io_init(port, &io, 0), 0);
	port->cls->tx_batch(port, &io, &pkt, 1);
	port_io_fini(port, &io);
	struct pkt *rx[16];
	unsigned n = 0;
	struct pollfd pfd = { .fd = vxlan_sock_fd(sock), .events = POLLIN };
	while (n < 10 && poll(&pfd, 1, 200) > 0) {
		int got = vxlan_sock_rx_batch(sock, fx->pool, rx + n, 16 - n);
		assert_true(got >= 0);
		n += (unsigned)got;
	}
	assert_int_equal(n, 10);
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(rx_payload(rx[i]), 1000);
		assert_int_equal(rx_seq(rx[i]), 1000 + 1000 * i);
		pkt_free(rx[i]);
	}
	vxlan_sock_get_stats(sock, &st);
	assert_int_equal(st.tx_gso_sends, 1);
	assert_int_equal(st.rx_calls, 10);
	assert_int_equal(st.rx_gro_buffers, 0);
	port_destroy(port);
}

static void test_plain_frame_gets_its_checksum_completed(void **state)
{
	struct fixture *fx = *state;
	struct pkt *pkt = tcp_frame(fx, 300, FB_CSUM_PARTIAL);
	fx->port->cls->tx_batch(fx->port, &fx->io, &pkt, 1);
	struct pkt *rx[4];
	assert_int_equal(receive(fx, rx, 4, 1), 1);
	assert_inner_tcp_csum_ok(rx[0]);
	pkt_free(rx[0]);
}

static void test_oversized_plain_frame_is_mtu_exceeded(void **state)
{
	struct fixture *fx = *state;
	uint64_t before = fx->io.stats.drops[DROP_MTU_EXCEEDED];
	struct pkt *pkt = tcp_frame(fx, 1450, FB_CSUM_FULL); /* L3 1490 > 1450 */
	fx->port->cls->tx_batch(fx->port, &fx->io, &pkt, 1);
	assert_int_equal(fx->io.stats.drops[DROP_MTU_EXCEEDED], before + 1);
	pkt = tcp_frame(fx, 1410, FB_CSUM_FULL); /* L3 exactly 1450: fits */
	fx->port->cls->tx_batch(fx->port, &fx->io, &pkt, 1);
	assert_int_equal(fx->io.stats.drops[DROP_MTU_EXCEEDED], before + 1);
	struct pkt *rx[4];
	assert_int_equal(receive(fx, rx, 4, 1), 1);
	pkt_free(rx[0]);
}

static void test_second_vni_shares_the_socket(void **state)
{
	struct fixture *fx = *state;
	struct vxlan_options opts = { .vni = 100, .local = loopback(), .dst_port = fx->udp_port, .n_remotes = 1 };
	opts.remotes[0] = loopback();
	struct port *second;
	/* Opening a second socket on the same address and port fails... */
	struct vxlan_sock *again;
	assert_int_equal(vxlan_sock_open(&opts.local, fx->udp_port, &again), -EADDRINUSE);
	/* ...so the second VNI shares the first socket. */
	assert_true(vxlan_sock_matches(fx->sock, &opts.local, fx->udp_port));
	assert_int_equal(vxlan_port_open(&opts, fx->sock, &second), 0);
	assert_ptr_equal(vxlan_port_sock(second), fx->sock);
	port_destroy(second); /* drops its reference only */
	assert_true(fcntl(vxlan_sock_fd(fx->sock), F_GETFD) >= 0); /* still open */
}

/* The configured mtu (1450) holds for GSO trains too: a TSO frame with
 * gso_size 1460 (inner L3 1500) leaves in segments of 1410 bytes, so that
 * each datagram's inner packet is 1450, though loopback would carry more. */
static void test_tso_frame_is_cut_to_the_configured_mtu(void **state)
{
	struct fixture *fx = *state;
	struct pkt *pkt = tcp_frame(fx, 14100, FB_CSUM_PARTIAL);
	pkt->ol.gso_type = PKT_GSO_TCPV4;
	pkt->ol.gso_size = 1460;
	uint64_t before = fx->io.stats.drops[DROP_MTU_EXCEEDED];
	fx->port->cls->tx_batch(fx->port, &fx->io, &pkt, 1);
	assert_int_equal(fx->io.stats.drops[DROP_MTU_EXCEEDED], before);
	receive_segments(fx, 10, 1410);
}

/* A UDP_L4 frame's segments are the application's datagrams: one over the
 * mtu cannot be cut smaller and is dropped. */
static void test_udp_gso_frame_over_the_mtu_is_dropped(void **state)
{
	struct fixture *fx = *state;
	static uint8_t buf[FB_MAX_FRAME];
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.payload_len = 3000;
	f.csum = FB_CSUM_PARTIAL;
	struct fb_layout lay;
	size_t len = fb_build(&f, buf, sizeof(buf), &lay);
	struct pkt *pkt = pkt_alloc(fx->pool);
	assert_int_equal(pkt_set_data(pkt, buf, (uint32_t)len), 0);
	struct flow_key key;
	assert_int_equal(flow_extract(pkt, 0, &key), DROP_NONE);
	pkt->ol = (struct pkt_offload){ .flags = PKT_OL_NEEDS_CSUM, .gso_type = PKT_GSO_UDP_L4,
					.gso_size = 1460, .csum_start = (uint16_t)lay.l4_ofs,
					.csum_offset = 6 };
	pkt->tunnel.family = 4;
	memcpy(pkt->tunnel.dst, loopback().bytes, 16);
	uint64_t before = fx->io.stats.drops[DROP_MTU_EXCEEDED];
	fx->port->cls->tx_batch(fx->port, &fx->io, &pkt, 1);
	assert_int_equal(fx->io.stats.drops[DROP_MTU_EXCEEDED], before + 1);
	struct pkt_pool_stats ps;
	pkt_pool_get_stats(fx->pool, &ps);
	assert_int_equal(ps.in_use, 0);
}

/* Two remotes behind routes of MTU 1400 and 1300 (a network namespace of
 * our own, so root; skipped otherwise): each is probed, the port's
 * underlay MTU is the smaller, and a TSO frame (gso_size 1460, 13100
 * bytes) towards each is cut to what fits that path: 1310 bytes a segment
 * (10 segments) towards the first, 1210 (11) towards the second. */
static void test_each_remote_gets_its_path_mtu(void **state)
{
	struct fixture *fx = *state;
	int orig = geteuid() == 0 ? open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC) : -1;
	if (orig < 0 || unshare(CLONE_NEWNET) < 0)
		skip();
	assert_int_equal(system("ip link set lo up && ip addr add 10.9.0.1/32 dev lo && "
				"ip route add 10.9.1.3/32 dev lo mtu 1400 && "
				"ip route add 10.9.1.2/32 dev lo mtu 1300"), 0);
	struct vxlan_options opts = { .vni = 99, .local = { .family = 4 }, .n_remotes = 2 };
	inet_pton(AF_INET, "10.9.0.1", opts.local.bytes);
	opts.remotes[0].family = opts.remotes[1].family = 4;
	inet_pton(AF_INET, "10.9.1.3", opts.remotes[0].bytes);
	inet_pton(AF_INET, "10.9.1.2", opts.remotes[1].bytes);
	struct port *port;
	assert_int_equal(vxlan_port_open(&opts, NULL, &port), 0);
	struct port_io io;
	assert_int_equal(port_io_init(port, &io, 0), 0);
	struct vxlan_port_info info;
	vxlan_port_get_info(port, &io, &info);
	assert_int_equal(info.remote_mtu[0], 1400);
	assert_int_equal(info.remote_mtu[1], 1300);
	assert_int_equal(info.underlay_mtu, 1300);
	assert_int_equal(info.inner_mtu_fit, 1250);
	for (unsigned r = 0; r < 2; r++) {
		struct pkt *pkt = tcp_frame(fx, 13100, FB_CSUM_PARTIAL);
		pkt->ol.gso_type = PKT_GSO_TCPV4;
		pkt->ol.gso_size = 1460;
		memcpy(pkt->tunnel.dst, opts.remotes[r].bytes, 16);
		port->cls->tx_batch(port, &io, &pkt, 1);
		vxlan_port_get_info(port, &io, &info);
		assert_int_equal(info.tx_gso_segments, r == 0 ? 10 : 10 + 11);
	}
	assert_int_equal(io.stats.drops[DROP_MTU_EXCEEDED], 0);
	struct vxlan_sock_stats st;
	vxlan_sock_get_stats(vxlan_port_sock(port), &st);
	assert_int_equal(st.tx_datagrams, 21);
	assert_int_equal(st.tx_errors, 0);
	port_io_fini(port, &io);
	port_destroy(port);
	assert_int_equal(setns(orig, CLONE_NEWNET), 0);
	close(orig);
}

/* Two workers' ios on one port count apart; the port itself counts
 * nothing (get_info without an io reads zeros). */
static void test_ios_count_apart(void **state)
{
	struct fixture *fx = *state;
	struct port_io other;
	assert_int_equal(port_io_init(fx->port, &other, 0), 0);
	struct vxlan_port_info before, info;
	vxlan_port_get_info(fx->port, &fx->io, &before);
	struct pkt *pkt = tso_frame(fx, 3);
	fx->port->cls->tx_batch(fx->port, &other, &pkt, 1);
	pkt = tcp_frame(fx, 300, FB_CSUM_PARTIAL);
	fx->port->cls->tx_batch(fx->port, &other, &pkt, 1);
	vxlan_port_get_info(fx->port, &other, &info);
	assert_int_equal(info.tx_gso_frames, 1);
	assert_int_equal(info.tx_gso_segments, 3);
	assert_int_equal(info.tx_plain_frames, 1);
	assert_int_equal(other.stats.tx_frames, 2);
	vxlan_port_get_info(fx->port, &fx->io, &info);
	assert_int_equal(info.tx_gso_frames, before.tx_gso_frames);
	assert_int_equal(info.tx_plain_frames, before.tx_plain_frames);
	vxlan_port_get_info(fx->port, NULL, &info);
	assert_int_equal(info.tx_gso_frames, 0);
	assert_int_equal(info.tx_plain_frames, 0);
	assert_true(info.underlay_mtu > 0);
	port_io_fini(fx->port, &other);
	struct pkt *rx[8];
	receive_exactly(fx, rx, 4);
	for (unsigned i = 0; i < 4; i++)
		pkt_free(rx[i]);
}

static void test_vni_of_short_pkt(void **state)
{
	struct fixture *fx = *state;
	struct pkt *pkt = pkt_alloc(fx->pool);
	uint8_t hdr[VXLAN_HDR_LEN] = { 0x08, 0, 0, 0, 0x12, 0x34, 0x56, 0 };
	pkt_set_data(pkt, hdr, 7);
	assert_int_equal(vxlan_pkt_vni(pkt), -1);
	pkt_set_data(pkt, hdr, 8);
	assert_int_equal(vxlan_pkt_vni(pkt), 0x123456);
	pkt_free(pkt);
}

/* An empty datagram and a 3-byte one are handed on as pkts of their length
 * (the datapath counts them as truncated_vxlan), not lost uncounted; the
 * socket counts both as datagrams and as too short. */
static void test_empty_and_short_datagrams_are_handed_on(void **state)
{
	struct fixture *fx = *state;
	int tx = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(tx >= 0);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(fx->udp_port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	const uint8_t three[3] = { 0x08, 0, 0 };
	assert_int_equal(sendto(tx, three, 0, 0, (struct sockaddr *)&to, sizeof(to)), 0);
	assert_int_equal(sendto(tx, three, 3, 0, (struct sockaddr *)&to, sizeof(to)), 3);
	close(tx);
	struct vxlan_sock_stats before, after;
	vxlan_sock_get_stats(fx->sock, &before);
	struct pkt *rx[4];
	receive_exactly(fx, rx, 2);
	assert_int_equal(pkt_len(rx[0]), 0);
	assert_int_equal(pkt_len(rx[1]), 3);
	assert_int_equal(vxlan_pkt_vni(rx[0]), -1);
	pkt_free(rx[0]);
	pkt_free(rx[1]);
	vxlan_sock_get_stats(fx->sock, &after);
	assert_int_equal(after.rx_datagrams - before.rx_datagrams, 2);
	assert_int_equal(after.rx_too_short - before.rx_too_short, 2);
}

/* The outer TOS and TTL of each datagram reach the pkt (pkt->tunnel.tos,
 * .ttl, from IP_RECVTOS/IP_RECVTTL) for flower's enc_tos and enc_ttl. */
static void test_outer_tos_ttl_are_read(void **state)
{
	struct fixture *fx = *state;
	int tx = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(tx >= 0);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(fx->udp_port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	const uint8_t dgram[8] = { 0x08, 0, 0, 0, 0, 0, 99, 0 };
	int tos[2] = { 0x28, 0xb8 }, ttl[2] = { 17, 200 };
	for (int i = 0; i < 2; i++) {
		assert_int_equal(setsockopt(tx, IPPROTO_IP, IP_TOS, &tos[i], sizeof(tos[i])), 0);
		assert_int_equal(setsockopt(tx, IPPROTO_IP, IP_TTL, &ttl[i], sizeof(ttl[i])), 0);
		assert_int_equal(sendto(tx, dgram, sizeof(dgram), 0, (struct sockaddr *)&to, sizeof(to)),
				 (ssize_t)sizeof(dgram));
	}
	close(tx);
	struct pkt *rx[4];
	receive_exactly(fx, rx, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rx[i]->tunnel.tos, tos[i]);
		assert_int_equal(rx[i]->tunnel.ttl, ttl[i]);
		pkt_free(rx[i]);
	}
}

/* Datagrams the kernel drops because nobody read the receive buffer in
 * time are counted from SO_RXQ_OVFL (rx_queue_drops), as the kernel counts
 * them for the socket: a flood sent while we do not read overflows the
 * 8 MB buffer, and the next read reports how many were lost. */
static void test_receive_buffer_drops_are_counted(void **state)
{
	struct fixture *fx = *state;
	int tx = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(tx >= 0);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(fx->udp_port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	uint8_t dgram[1400] = { 0x08, 0, 0, 0, 0, 0, 99, 0 }; /* VXLAN header, VNI 99 */
	const unsigned sent = 20000;                           /* ~60 MB of buffer space */
	for (unsigned i = 0; i < sent; i++)
		assert_int_equal(sendto(tx, dgram, sizeof(dgram), 0, (struct sockaddr *)&to, sizeof(to)),
				 (ssize_t)sizeof(dgram));
	struct pkt *out[64];
	unsigned got = 0;
	/* The kernel stamps each datagram with the drop count at the time it
	 * was queued: the ones already waiting carry the old count, the next
	 * one after the drain carries them all. */
	for (int round = 0; round < 2; round++) {
		for (;;) {
			int n = vxlan_sock_rx_batch(fx->sock, fx->pool, out, 64);
			if (n <= 0)
				break;
			got += (unsigned)n;
			for (int i = 0; i < n; i++)
				pkt_free(out[i]);
		}
		if (round == 0)
			assert_int_equal(sendto(tx, dgram, sizeof(dgram), 0, (struct sockaddr *)&to, sizeof(to)),
					 (ssize_t)sizeof(dgram));
	}
	close(tx);
	struct vxlan_sock_stats st;
	vxlan_sock_get_stats(fx->sock, &st);
	assert_true(got < sent);
	assert_true(st.rx_queue_drops > 0);
	/* Every datagram was either read or dropped by the kernel. */
	assert_int_equal(st.rx_queue_drops + got, sent + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tso_frame_is_one_train_and_comes_back_cut),
		cmocka_unit_test(test_tso_frame_without_udp_segment),
		cmocka_unit_test(test_tso_frame_with_frags),
		cmocka_unit_test(test_udp_segment_refused_train_is_resent_per_datagram),
		cmocka_unit_test(test_udp_segment_refused_mid_batch),
		cmocka_unit_test(test_udp_segment_refused_for_every_queued_train),
		cmocka_unit_test(test_udp_segment_refused_with_frags),
		cmocka_unit_test(test_udp_gro_refused_datagrams_arrive_one_by_one),
		cmocka_unit_test(test_plain_frame_gets_its_checksum_completed),
		cmocka_unit_test(test_oversized_plain_frame_is_mtu_exceeded),
		cmocka_unit_test(test_second_vni_shares_the_socket),
		cmocka_unit_test(test_tso_frame_is_cut_to_the_configured_mtu),
		cmocka_unit_test(test_udp_gso_frame_over_the_mtu_is_dropped),
		cmocka_unit_test(test_each_remote_gets_its_path_mtu),
		cmocka_unit_test(test_ios_count_apart),
		cmocka_unit_test(test_vni_of_short_pkt),
		cmocka_unit_test(test_empty_and_short_datagrams_are_handed_on),
		cmocka_unit_test(test_outer_tos_ttl_are_read),
		cmocka_unit_test(test_receive_buffer_drops_are_counted),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
