/* Unit tests for the vxlan port's outer-header settings over loopback (no
 * root): with a srcport range each inner flow keeps one source port of the
 * range and different flows spread over it; udpcsum off puts SO_NO_CHECK
 * on the send sockets and a TSO frame still arrives whole (the kernel
 * refuses UDP_SEGMENT there: the fallback sends it per datagram); df sets
 * IP_MTU_DISCOVER (set: DO, unset: DONT, inherit: switched per frame as its
 * inner DF says); what cannot be honoured is refused; ports sharing a
 * socket must agree. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "frame_builder.h"
#include "packet/hdr.h"
#include "parse/flow_extract.h"
#include "port/vxlan_internal.h"

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

/* Opens a port with `opts` on a port of our own (parallel runs). */
static void open_port(struct fixture *fx, struct vxlan_options *opts)
{
	memset(fx, 0, sizeof(*fx));
	assert_int_equal(pkt_pool_create(256, &fx->pool), 0);
	opts->vni = 99;
	opts->local = loopback();
	opts->n_remotes = 1;
	opts->remotes[0] = loopback();
	for (unsigned i = 0; i < 50 && !fx->port; i++) {
		fx->udp_port = (uint16_t)(20000 + (getpid() * 11 + i * 173) % 20000);
		opts->dst_port = fx->udp_port;
		if (vxlan_port_open(opts, NULL, &fx->port) < 0)
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
	pkt_pool_destroy(fx->pool);
}

/* A TCP frame of flow (sport -> 80) with `payload` bytes, inner DF as
 * given, addressed to the loopback VTEP. */
static struct pkt *tcp_frame(struct fixture *fx, uint16_t sport, size_t payload, bool df)
{
	static uint8_t buf[FB_MAX_FRAME];
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.payload_len = payload;
	f.csum = FB_CSUM_FULL;
	f.src_port = sport;
	f.seq = 1000;
	f.frag_off = df ? IPV4_DF : 0;
	struct fb_layout lay;
	size_t len = fb_build(&f, buf, sizeof(buf), &lay);
	assert_true(len > 0);
	assert_int_equal(!!(buf[lay.l3_ofs + 6] & 0x40), df);
	struct pkt *pkt = pkt_alloc(fx->pool);
	assert_non_null(pkt);
	assert_int_equal(pkt_set_data(pkt, buf, (uint32_t)len), 0);
	struct flow_key key;
	assert_int_equal(flow_extract(pkt, 0, &key), DROP_NONE);
	pkt->tunnel.family = 4;
	memcpy(pkt->tunnel.dst, loopback().bytes, 16);
	return pkt;
}

static void send_one(struct fixture *fx, struct pkt *pkt)
{
	fx->port->cls->tx_batch(fx->port, &fx->io, &pkt, 1);
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

static int sockopt(int fd, int level, int name)
{
	int v = -1;
	socklen_t len = sizeof(v);
	assert_int_equal(getsockopt(fd, level, name, &v, &len), 0);
	return v;
}

static void test_srcport_range_hashes_flows_into_it(void **state)
{
	(void)state;
	struct fixture fx;
	struct vxlan_options opts = { .src_port_min = 41000, .src_port_max = 41015 };
	open_port(&fx, &opts);
	assert_int_equal(fx.sock->n_tx, 16);
	bool seen[16] = { false };
	unsigned distinct = 0;
	for (uint16_t flow = 0; flow < 32; flow++) {
		uint16_t first = 0;
		for (int rep = 0; rep < 2; rep++) {
			send_one(&fx, tcp_frame(&fx, (uint16_t)(30000 + flow), 100, true));
			struct pkt *rx[4];
			assert_int_equal(receive(&fx, rx, 4, 1), 1);
			uint16_t sp = rx[0]->tunnel.src_port;
			pkt_free(rx[0]);
			assert_true(sp >= 41000 && sp <= 41015);
			if (rep == 0)
				first = sp;
			assert_int_equal(sp, first); /* one flow, one port */
		}
		distinct += !seen[first - 41000];
		seen[first - 41000] = true;
	}
	assert_true(distinct >= 8); /* 32 flows over 16 ports */
	/* Nothing came in on the send sockets' side: receiving is dstport's. */
	struct vxlan_options got;
	vxlan_sock_get_options(fx.sock, &got);
	assert_int_equal(got.src_port_min, 41000);
	assert_int_equal(got.src_port_max, 41015);
	close_port(&fx);
}

static void test_default_source_port_is_the_sockets(void **state)
{
	(void)state;
	struct fixture fx;
	struct vxlan_options opts = { 0 };
	open_port(&fx, &opts);
	assert_int_equal(fx.sock->n_tx, 1);
	assert_int_equal(fx.sock->tx_fd[0], vxlan_sock_fd(fx.sock));
	assert_int_equal(sockopt(fx.sock->tx_fd[0], IPPROTO_IP, IP_MTU_DISCOVER), IP_PMTUDISC_DO);
	assert_int_equal(sockopt(fx.sock->tx_fd[0], SOL_SOCKET, SO_NO_CHECK), 0);
	send_one(&fx, tcp_frame(&fx, 30000, 100, true));
	struct pkt *rx[4];
	assert_int_equal(receive(&fx, rx, 4, 1), 1);
	assert_int_equal(rx[0]->tunnel.src_port, fx.udp_port);
	pkt_free(rx[0]);
	close_port(&fx);
}

/* udpcsum off: SO_NO_CHECK on every send socket; the kernel refuses
 * UDP_SEGMENT without a checksum, and the train arrives anyway. */
static void test_udpcsum_off_falls_back_from_udp_segment(void **state)
{
	(void)state;
	struct fixture fx;
	struct vxlan_options opts = { .udp_zero_csum = true, .src_port_min = 42000, .src_port_max = 42003 };
	open_port(&fx, &opts);
	for (unsigned i = 0; i < fx.sock->n_tx; i++)
		assert_int_equal(sockopt(fx.sock->tx_fd[i], SOL_SOCKET, SO_NO_CHECK), 1);
	struct pkt *pkt = tcp_frame(&fx, 30000, 10 * 1000, true);
	pkt->ol.gso_type = PKT_GSO_TCPV4;
	pkt->ol.gso_size = 1000;
	send_one(&fx, pkt);
	struct pkt *rx[64];
	assert_int_equal(receive(&fx, rx, 64, 10), 10);
	uint16_t sp = rx[0]->tunnel.src_port;
	for (int i = 0; i < 10; i++) {
		assert_int_equal(rx[i]->tunnel.src_port, sp); /* a train is one flow */
		pkt_free(rx[i]);
	}
	struct vxlan_sock_stats st;
	vxlan_sock_get_stats(fx.sock, &st);
	assert_int_equal(st.udp_segment_fallbacks, 1);
	assert_false(st.udp_segment_on);
	assert_int_equal(st.tx_gso_sends, 0);
	close_port(&fx);
}

static void test_df_unset_and_inherit(void **state)
{
	(void)state;
	struct fixture fx;
	struct vxlan_options opts = { .df = VXLAN_DF_UNSET };
	open_port(&fx, &opts);
	assert_int_equal(sockopt(fx.sock->tx_fd[0], IPPROTO_IP, IP_MTU_DISCOVER), IP_PMTUDISC_DONT);
	close_port(&fx);

	opts = (struct vxlan_options){ .df = VXLAN_DF_INHERIT };
	open_port(&fx, &opts);
	int fd = fx.sock->tx_fd[0];
	const bool seq[] = { false, false, true, false };
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		send_one(&fx, tcp_frame(&fx, 30000, 100, seq[i]));
		assert_int_equal(sockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER), seq[i] ? IP_PMTUDISC_DO : IP_PMTUDISC_DONT);
		struct pkt *rx[4];
		assert_int_equal(receive(&fx, rx, 4, 1), 1);
		pkt_free(rx[0]);
	}
	/* inner IPv6: set; not IP at all: clear (as the kernel's vxlan) */
	uint8_t eth[ETH_HDR_LEN + IPV6_HDR_LEN] = { 0 };
	eth[12] = 0x86, eth[13] = 0xdd;
	assert_true(vxlan_txsock_want_df(fx.sock, eth, sizeof(eth)));
	eth[12] = 0x08, eth[13] = 0x06;
	assert_false(vxlan_txsock_want_df(fx.sock, eth, sizeof(eth)));
	close_port(&fx);
}

#ifndef UDP_NO_CHECK6_TX
#define UDP_NO_CHECK6_TX 101
#endif
#ifndef UDP_NO_CHECK6_RX
#define UDP_NO_CHECK6_RX 102
#endif

/* udpcsum off over IPv6: zero checksums sent (UDP_NO_CHECK6_TX) and
 * accepted (UDP_NO_CHECK6_RX, else the kernel drops them), both ends
 * configured as RFC 6936 asks; the frame arrives. */
static void test_udpcsum_off_over_ipv6(void **state)
{
	(void)state;
	struct vxlan_options opts = { .vni = 99, .local = { .family = 6 }, .udp_zero_csum = true, .n_remotes = 1 };
	opts.local.bytes[15] = 1; /* ::1 */
	opts.remotes[0] = opts.local;
	struct fixture fx = { 0 };
	assert_int_equal(pkt_pool_create(64, &fx.pool), 0);
	for (unsigned i = 0; i < 50 && !fx.port; i++) {
		opts.dst_port = (uint16_t)(20000 + (getpid() * 13 + i * 191) % 20000);
		if (vxlan_port_open(&opts, NULL, &fx.port) < 0)
			fx.port = NULL;
	}
	if (!fx.port) {
		pkt_pool_destroy(fx.pool);
		skip(); /* no IPv6 loopback here */
	}
	assert_int_equal(port_io_init(fx.port, &fx.io, 0), 0);
	fx.sock = vxlan_port_sock(fx.port);
	assert_int_equal(sockopt(fx.sock->tx_fd[0], IPPROTO_UDP, UDP_NO_CHECK6_TX), 1);
	assert_int_equal(sockopt(vxlan_sock_fd(fx.sock), IPPROTO_UDP, UDP_NO_CHECK6_RX), 1);
	struct pkt *pkt = tcp_frame(&fx, 30000, 100, true);
	pkt->tunnel.family = 6;
	memcpy(pkt->tunnel.dst, opts.local.bytes, 16);
	send_one(&fx, pkt);
	struct pkt *rx[4];
	assert_int_equal(receive(&fx, rx, 4, 1), 1);
	assert_int_equal(rx[0]->tunnel.family, 6);
	pkt_free(rx[0]);
	close_port(&fx);
}

static void test_refused_settings(void **state)
{
	(void)state;
	struct vxlan_sock *sock;
	struct vxlan_options opts = { .local = { .family = 6 }, .df = VXLAN_DF_UNSET };
	opts.local.bytes[15] = 1;
	assert_int_equal(vxlan_sock_open_opts(&opts, 0, &sock), -EINVAL); /* no DF in IPv6 */
	opts = (struct vxlan_options){ .local = loopback(), .src_port_min = 43000, .src_port_max = 43064 };
	assert_int_equal(vxlan_sock_open_opts(&opts, 0, &sock), -EINVAL); /* 65 ports */
	opts.src_port_max = 42999;
	assert_int_equal(vxlan_sock_open_opts(&opts, 0, &sock), -EINVAL); /* MIN > MAX */
}

/* A second VNI shares the socket only with the same settings. */
static void test_shared_socket_must_agree(void **state)
{
	(void)state;
	struct fixture fx;
	struct vxlan_options opts = { .udp_zero_csum = true, .src_port_min = 44000, .src_port_max = 44001 };
	open_port(&fx, &opts);
	struct vxlan_options other = opts;
	other.vni = 100;
	char why[160];
	struct port *second;
	assert_int_equal(vxlan_sock_check_options(fx.sock, &other, why, sizeof(why)), 0);
	assert_int_equal(vxlan_port_open(&other, fx.sock, &second), 0);
	port_destroy(second);

	other.udp_zero_csum = false;
	assert_int_equal(vxlan_sock_check_options(fx.sock, &other, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "udpcsum on differs from udpcsum off"));
	assert_int_equal(vxlan_port_open(&other, fx.sock, &second), -EINVAL);
	other.udp_zero_csum = true;
	other.df = VXLAN_DF_INHERIT;
	assert_int_equal(vxlan_sock_check_options(fx.sock, &other, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "df inherit differs from df set"));
	other.df = VXLAN_DF_SET;
	other.src_port_min = other.src_port_max = 0;
	assert_int_equal(vxlan_sock_check_options(fx.sock, &other, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "srcport differs from srcport 44000-44001"));
	close_port(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_srcport_range_hashes_flows_into_it),
		cmocka_unit_test(test_default_source_port_is_the_sockets),
		cmocka_unit_test(test_udpcsum_off_falls_back_from_udp_segment),
		cmocka_unit_test(test_df_unset_and_inherit),
		cmocka_unit_test(test_udpcsum_off_over_ipv6),
		cmocka_unit_test(test_refused_settings),
		cmocka_unit_test(test_shared_socket_must_agree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
