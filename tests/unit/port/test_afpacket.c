/* Unit tests for src/port/afpacket.c (root only: they create a TAP device;
 * as another user every test is skipped).  The link under the port is a
 * tap this test holds open with IFF_VNET_HDR and TSO offloads, as QEMU
 * would: what the test writes into the tap fd, the link receives and the
 * port reads; what the port writes, the tap fd reads -- both with their
 * virtio_net_hdr, so 64 KB GSO frames can be seen crossing whole. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>
#include <cmocka.h>

#include "frame_builder.h"
#include "packet/hdr.h"
#include "packet/vnet_hdr.h"
#include "port/afpacket.h"
#include "port/rtnl.h"

struct fixture {
	struct pkt_pool *pool;
	struct port *port;
	struct port_io io;
	int tun;
	char name[IF_NAMESIZE];
};

static int tun_open(const char *name)
{
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	int hs = VNET_HDR_V1_LEN;
	if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr) < 0 || ioctl(fd, TUNSETVNETHDRSZ, &hs) < 0 ||
	    ioctl(fd, TUNSETOFFLOAD, (unsigned long)(TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6)) < 0)
		return -1;
	return fd;
}

static int setup(void **state)
{
	static struct fixture fx;
	memset(&fx, 0, sizeof(fx));
	fx.tun = -1;
	*state = &fx;
	if (geteuid() != 0)
		return 0;
	if (pkt_pool_create(16, &fx.pool) < 0)
		return -1;
	snprintf(fx.name, sizeof(fx.name), "vxafp%d", (int)(getpid() % 100000));
	fx.tun = tun_open(fx.name);
	if (fx.tun < 0 || rtnl_link_configure(-1, fx.name, 1450, true) < 0)
		return -1;
	struct afpacket_options opts = { .name = "c0", .dev = fx.name, .vni = 5 };
	if (afpacket_port_open(&opts, &fx.port, NULL, 0) < 0 || port_io_init(fx.port, &fx.io, 0) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	if (fx->port)
		port_io_fini(fx->port, &fx->io);
	port_destroy(fx->port);
	if (fx->tun >= 0)
		close(fx->tun);
	pkt_pool_destroy(fx->pool);
	return 0;
}

/* An IPv4/TCP frame of `payload` bytes with a partial checksum. */
static size_t build_tcp(uint8_t *buf, size_t cap, size_t payload)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.payload_len = payload;
	f.csum = FB_CSUM_PARTIAL;
	return fb_build(&f, buf, cap, NULL);
}

static void gso_hdr(uint8_t *hdr, uint16_t gso_size)
{
	struct pkt_offload ol = { .flags = PKT_OL_NEEDS_CSUM, .gso_type = gso_size ? PKT_GSO_TCPV4 : PKT_GSO_NONE,
				  .gso_size = gso_size, .csum_start = 34, .csum_offset = 16, .hdr_len = 54 };
	vnet_hdr_write(&ol, hdr, VNET_HDR_V1_LEN);
}

/* Reads from the port until a frame of `len` bytes comes (the stack may send
 * its own first); returns it, or NULL. */
static struct pkt *port_read(struct fixture *fx, size_t len)
{
	struct pkt *pkts[8], *found = NULL;
	for (int tries = 0; tries < 50 && !found; tries++) {
		struct pollfd pfd = { .fd = fx->port->fd, .events = POLLIN };
		poll(&pfd, 1, 100);
		int n = fx->port->cls->rx_batch(fx->port, &fx->io, fx->pool, pkts, 8);
		for (int i = 0; i < n; i++) {
			if (!found && pkts[i]->size == len)
				found = pkts[i];
			else
				pkt_free(pkts[i]);
		}
	}
	return found;
}

static void test_open_reports_the_link(void **state)
{
	struct fixture *fx = *state;
	if (!fx->port)
		skip();
	struct afpacket_port_info ai;
	afpacket_port_get_info(fx->port, &fx->io, &ai);
	assert_true(port_is_afpacket(fx->port));
	assert_string_equal(ai.dev, fx->name);
	assert_string_equal(port_frame_dev(fx->port), fx->name);
	assert_int_equal(ai.ifindex, (int)if_nametoindex(fx->name));
	assert_int_equal(ai.hdr_size, VNET_HDR_V1_LEN); /* Linux >= 6.4 */
	assert_int_equal(fx->port->mtu, 1450);
	assert_true(ai.rcvbuf >= AFP_SOCK_BUF);
	/* a link that is not there */
	struct port *p = NULL;
	char why[128] = "";
	struct afpacket_options opts = { .name = "c1", .dev = "vxafp-none", .vni = 5 };
	assert_int_equal(afpacket_port_open(&opts, &p, why, sizeof(why)), -ENODEV);
	assert_non_null(strstr(why, "no link vxafp-none"));
}

static void test_gso_frame_is_read_whole(void **state)
{
	struct fixture *fx = *state;
	if (!fx->port)
		skip();
	static uint8_t frame[65536];
	size_t len = build_tcp(frame, sizeof(frame), 60000);
	uint8_t hdr[VNET_HDR_V1_LEN];
	gso_hdr(hdr, 1398);
	struct iovec iov[2] = { { hdr, sizeof(hdr) }, { frame, len } };
	assert_int_equal(writev(fx->tun, iov, 2), (ssize_t)(sizeof(hdr) + len));
	struct pkt *pkt = port_read(fx, len);
	assert_non_null(pkt);
	assert_memory_equal(pkt->data, frame, len);
	assert_int_equal(pkt->ol.gso_type, PKT_GSO_TCPV4);
	assert_int_equal(pkt->ol.gso_size, 1398);
	assert_true(pkt->ol.flags & PKT_OL_NEEDS_CSUM);
	pkt_free(pkt);
	struct afpacket_port_info ai;
	afpacket_port_get_info(fx->port, &fx->io, &ai);
	assert_true(ai.rx_gso_frames >= 1);
}

static void test_gso_frame_is_written_whole_and_not_read_back(void **state)
{
	struct fixture *fx = *state;
	if (!fx->port)
		skip();
	struct pkt *pkt = pkt_alloc(fx->pool);
	size_t len = build_tcp(pkt->data, PKT_MAX_FRAME, 50000);
	pkt->size = (uint32_t)len;
	pkt->ol = (struct pkt_offload){ .flags = PKT_OL_NEEDS_CSUM, .gso_type = PKT_GSO_TCPV4, .gso_size = 1398,
					.csum_start = 34, .csum_offset = 16, .hdr_len = 54 };
	fx->port->cls->tx_batch(fx->port, &fx->io, &pkt, 1);
	static uint8_t buf[VNET_HDR_V1_LEN + 65536];
	ssize_t got = -1;
	for (int tries = 0; tries < 50; tries++) {
		struct pollfd pfd = { .fd = fx->tun, .events = POLLIN };
		poll(&pfd, 1, 100);
		got = read(fx->tun, buf, sizeof(buf));
		if (got == (ssize_t)(VNET_HDR_V1_LEN + len))
			break;
	}
	assert_int_equal(got, (ssize_t)(VNET_HDR_V1_LEN + len));
	struct pkt_offload ol;
	assert_int_equal(vnet_hdr_read(buf, (size_t)got, VNET_HDR_V1_LEN, &ol), DROP_NONE);
	assert_int_equal(ol.gso_type, PKT_GSO_TCPV4);
	assert_int_equal(ol.gso_size, 1398);
	assert_int_equal(fx->io.stats.tx_frames, 1);
	assert_int_equal(fx->io.stats.tx_hist_frames[port_hist_bucket((uint32_t)len)], 1);
	/* PACKET_IGNORE_OUTGOING: our own send is not read back */
	assert_null(port_read(fx, len));
}

static void test_poll_error_tells_down_from_gone(void **state)
{
	struct fixture *fx = *state;
	if (!fx->port)
		skip();
	/* the link down (ip link set down): ENETDOWN on the socket, but it
	 * is still bound, so the port is not lost */
	struct ifreq ifr = { 0 };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", fx->name);
	assert_int_equal(ioctl(fx->port->fd, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags &= ~IFF_UP;
	assert_int_equal(ioctl(fx->port->fd, SIOCSIFFLAGS, &ifr), 0);
	struct pollfd pfd = { .fd = fx->port->fd, .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 1000), 1);
	assert_true(pfd.revents & POLLERR);
	assert_int_equal(fx->port->cls->poll_error(fx->port), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0); /* the error was taken */
	close(fx->tun); /* not persistent: the link goes */
	fx->tun = -1;
	for (int i = 0; i < 50 && if_nametoindex(fx->name); i++)
		usleep(20000);
	assert_int_equal(fx->port->cls->poll_error(fx->port), -ENODEV);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_reports_the_link),
		cmocka_unit_test(test_gso_frame_is_read_whole),
		cmocka_unit_test(test_gso_frame_is_written_whole_and_not_read_back),
		cmocka_unit_test(test_poll_error_tells_down_from_gone),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
