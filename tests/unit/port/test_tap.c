/* Unit tests for src/port/tap.c (root only: they create TAP devices; as
 * another user every test is skipped).  The far side of the tap is an
 * AF_PACKET socket bound to the device: what it sends, the port reads; what
 * the port writes, it receives. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>

#include "frame_builder.h"
#include "packet/hdr.h"
#include "parse/flow_extract.h"
#include "port/tap.h"
#include "port/rtnl.h"

struct fixture {
	struct pkt_pool *pool;
	struct port *port;
	struct port_io io;
	int raw;
};

static int setup(void **state)
{
	static struct fixture fx;
	memset(&fx, 0, sizeof(fx));
	fx.raw = -1;
	if (geteuid() != 0) {
		*state = &fx;
		return 0;
	}
	if (pkt_pool_create(16, &fx.pool) < 0)
		return -1;
	char name[IF_NAMESIZE];
	snprintf(name, sizeof(name), "vxtap%d", (int)(getpid() % 100000));
	struct tap_options opts = { .name = name, .mtu = 1450, .vni = 5 };
	if (tap_port_open(&opts, &fx.port, NULL, 0) < 0 || port_io_init(fx.port, &fx.io, 0) < 0)
		return -1;
	fx.raw = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				   .sll_ifindex = (int)if_nametoindex(name) };
	if (fx.raw < 0 || bind(fx.raw, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		return -1;
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	if (fx->raw >= 0)
		close(fx->raw);
	if (fx->port) {
		port_io_fini(fx->port, &fx->io);
		tap_port_set_delete(fx->port, true); /* persistent otherwise */
	}
	port_destroy(fx->port);
	pkt_pool_destroy(fx->pool);
	return 0;
}

static size_t build_tcp(uint8_t *buf, size_t cap, size_t payload, struct fb_layout *lay)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.payload_len = payload;
	return fb_build(&f, buf, cap, lay);
}

/* Next frame the AF_PACKET socket receives that the kernel got from the
 * tap (PACKET_HOST/OTHERHOST...), skipping what it sent itself; its length. */
static ssize_t raw_recv(int fd, uint8_t *buf, size_t cap)
{
	for (int tries = 0; tries < 50; tries++) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		struct sockaddr_ll from;
		socklen_t fromlen = sizeof(from);
		ssize_t n = recvfrom(fd, buf, cap, MSG_TRUNC, (struct sockaddr *)&from, &fromlen);
		if (n > 0 && from.sll_pkttype != PACKET_OUTGOING && n >= 14 && buf[12] == 0x08 && buf[13] == 0x00)
			return n;
	}
	return -1;
}

static void test_open_probes_offloads(void **state)
{
	struct fixture *fx = *state;
	if (!fx->port)
		skip();
	struct tap_port_info info;
	tap_port_get_info(fx->port, &fx->io, &info);
	/* Every kernel this runs on has had CSUM|TSO since 2.6. */
	assert_true(info.offloads_probed & TAP_OL_CSUM);
	assert_true(info.offloads_probed & TAP_OL_TSO);
	assert_int_equal(info.offloads_active, info.offloads_probed);
	assert_int_equal(tap_port_set_offload(fx->port, false), 0);
	tap_port_get_info(fx->port, &fx->io, &info);
	assert_int_equal(info.offloads_active, 0);
	assert_int_equal(tap_port_set_offload(fx->port, true), 0);
	assert_true(port_is_tap(fx->port));
	assert_int_equal(fx->port->mtu, 1450);
}

static void test_frame_sent_into_the_tap_is_read_with_its_bytes(void **state)
{
	struct fixture *fx = *state;
	if (!fx->port)
		skip();
	uint8_t frame[2048];
	size_t len = build_tcp(frame, sizeof(frame), 200, NULL);
	assert_int_equal(send(fx->raw, frame, len, 0), (ssize_t)len);
	struct pkt *pkts[4];
	int n = 0;
	for (int tries = 0; tries < 50 && n == 0; tries++) {
		struct pollfd pfd = { .fd = fx->port->fd, .events = POLLIN };
		poll(&pfd, 1, 100);
		n = fx->port->cls->rx_batch(fx->port, &fx->io, fx->pool, pkts, 4);
	}
	/* The stack may send its own frames (IPv6 autoconf) first: find ours. */
	bool found = false;
	for (int i = 0; i < n; i++) {
		if (pkts[i]->size == len && memcmp(pkts[i]->data, frame, len) == 0) {
			found = true;
			assert_int_equal(pkts[i]->in_port, fx->port->id);
		}
		pkt_free(pkts[i]);
	}
	assert_true(found);
	assert_true(fx->io.stats.rx_frames >= 1);
}

static void test_write_gathers_linear_part_and_frags(void **state)
{
	struct fixture *fx = *state;
	if (!fx->port)
		skip();
	static uint8_t frame[2048], got[4096];
	struct fb_layout lay;
	size_t len = build_tcp(frame, sizeof(frame), 1000, &lay);
	struct pkt *owner = pkt_alloc(fx->pool);
	assert_int_equal(pkt_set_data(owner, frame, (uint32_t)len), 0);
	struct pkt *pkt = pkt_alloc(fx->pool);
	/* Headers linear, payload in two frags of another pkt. */
	assert_int_equal(pkt_set_data(pkt, frame, (uint32_t)lay.payload_ofs), 0);
	size_t half = (len - lay.payload_ofs) / 2;
	assert_int_equal(pkt_add_frag(pkt, owner->data + lay.payload_ofs, (uint32_t)half, owner), 0);
	assert_int_equal(pkt_add_frag(pkt, owner->data + lay.payload_ofs + half,
				      (uint32_t)(len - lay.payload_ofs - half), owner), 0);
	pkt_free(owner);
	uint64_t before = fx->io.stats.tx_frames;
	fx->port->cls->tx_batch(fx->port, &fx->io, &pkt, 1);
	assert_int_equal(fx->io.stats.tx_frames, before + 1);
	assert_int_equal(fx->io.stats.tx_hist_frames[0], before + 1);
	ssize_t n = raw_recv(fx->raw, got, sizeof(got));
	assert_int_equal(n, (ssize_t)len);
	assert_memory_equal(got, frame, len);
	struct pkt_pool_stats st;
	pkt_pool_get_stats(fx->pool, &st);
	assert_int_equal(st.in_use, 0);
}

static void test_gso_frame_is_written_whole(void **state)
{
	struct fixture *fx = *state;
	if (!fx->port)
		skip();
	static uint8_t frame[8192], got[16384];
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.payload_len = 4000;
	f.csum = FB_CSUM_PARTIAL;
	struct fb_layout lay;
	size_t len = fb_build(&f, frame, sizeof(frame), &lay);
	struct pkt *pkt = pkt_alloc(fx->pool);
	assert_int_equal(pkt_set_data(pkt, frame, (uint32_t)len), 0);
	pkt->ol = (struct pkt_offload){
		.flags = PKT_OL_NEEDS_CSUM, .gso_type = PKT_GSO_TCPV4, .gso_size = 1000,
		.hdr_len = (uint16_t)lay.payload_ofs, .csum_start = (uint16_t)lay.l4_ofs,
		.csum_offset = TCP_CSUM_OFFSET,
	};
	struct tap_port_info info;
	tap_port_get_info(fx->port, &fx->io, &info);
	uint64_t gso_before = info.tx_gso_frames;
	fx->port->cls->tx_batch(fx->port, &fx->io, &pkt, 1);
	tap_port_get_info(fx->port, &fx->io, &info);
	assert_int_equal(info.tx_errors, 0);
	assert_int_equal(info.tx_gso_frames, gso_before + 1);
	/* The counters are the io's: none without one, none in another. */
	tap_port_get_info(fx->port, NULL, &info);
	assert_int_equal(info.tx_gso_frames, 0);
	assert_true(info.offloads_probed & TAP_OL_TSO);
	struct port_io other;
	assert_int_equal(port_io_init(fx->port, &other, 0), 0);
	tap_port_get_info(fx->port, &other, &info);
	assert_int_equal(info.tx_gso_frames, 0);
	port_io_fini(fx->port, &other);
	/* The kernel took one 4054-byte frame (packet sockets see it before
	 * any segmentation). */
	ssize_t n = raw_recv(fx->raw, got, sizeof(got));
	assert_int_equal(n, (ssize_t)len);
	assert_int_equal(fx->io.stats.tx_hist_frames[1], 1); /* 1.5K-8K bucket */
}

static void test_bad_gso_metadata_is_a_counted_write_error(void **state)
{
	struct fixture *fx = *state;
	if (!fx->port)
		skip();
	uint8_t frame[2048];
	size_t len = build_tcp(frame, sizeof(frame), 100, NULL);
	struct pkt *pkt = pkt_alloc(fx->pool);
	assert_int_equal(pkt_set_data(pkt, frame, (uint32_t)len), 0);
	pkt->ol.gso_type = 7; /* no such type: the kernel says EINVAL */
	pkt->ol.gso_size = 100;
	uint64_t before = fx->io.stats.drops[DROP_TX_ERROR];
	fx->port->cls->tx_batch(fx->port, &fx->io, &pkt, 1);
	assert_int_equal(fx->io.stats.drops[DROP_TX_ERROR], before + 1);
	struct tap_port_info info;
	tap_port_get_info(fx->port, &fx->io, &info);
	assert_int_equal(info.last_tx_errno, EINVAL);
}

static void test_bad_name_is_refused(void **state)
{
	(void)state;
	struct port *port;
	struct tap_options opts = { .name = "a-name-much-too-long-for-ifnamsiz" };
	assert_int_equal(tap_port_open(&opts, &port, NULL, 0), -EINVAL);
	opts.name = "";
	assert_int_equal(tap_port_open(&opts, &port, NULL, 0), -EINVAL);
}


/* ---- persistence, attaching, mac, the kernel's counters --------------------- */

static void side_name(char *name, const char *stem)
{
	snprintf(name, IF_NAMESIZE, "%s%d", stem, (int)(getpid() % 100000));
}

/* What `ip tuntap add mode tap NAME` does: a persistent tap nobody holds.
 * Returns an fd still holding it when `hold`, else -1 after closing. */
static int make_foreign_tap(const char *name, bool hold)
{
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	struct ifreq ifr = { 0 };
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	assert_int_equal(ioctl(fd, TUNSETIFF, &ifr), 0);
	assert_int_equal(ioctl(fd, TUNSETPERSIST, 1UL), 0);
	if (hold)
		return fd;
	close(fd);
	return -1;
}

static void delete_foreign_tap(const char *name)
{
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	struct ifreq ifr = { 0 };
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (fd >= 0 && ioctl(fd, TUNSETIFF, &ifr) == 0)
		ioctl(fd, TUNSETPERSIST, 0UL);
	if (fd >= 0)
		close(fd);
}

static void test_created_tap_outlives_the_port_and_is_attached_again(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	char name[IF_NAMESIZE];
	side_name(name, "vxpe");
	const uint8_t mac[6] = { 0x02, 0x00, 0x5e, 0x10, 0x20, 0x30 };
	struct tap_options opts = { .name = name, .default_mtu = 1400, .mac = mac, .vni = 1 };
	struct port *port;
	char why[200] = "";
	assert_int_equal(tap_port_open(&opts, &port, why, sizeof(why)), 0);
	struct tap_port_info info;
	tap_port_get_info(port, NULL, &info);
	assert_true(info.created);
	assert_true(info.owned);
	assert_memory_equal(info.mac, mac, 6);
	assert_int_equal(port->mtu, 1400);
	port_destroy(port); /* a shutdown: the device stays */
	assert_true(if_nametoindex(name) != 0);

	/* Attached again with no mtu and a different default: MTU and MAC kept. */
	opts.default_mtu = 9000;
	opts.mac = NULL;
	assert_int_equal(tap_port_open(&opts, &port, why, sizeof(why)), 0);
	tap_port_get_info(port, NULL, &info);
	assert_false(info.created);
	assert_true(info.owned); /* alias "vxswitchd": still the switch's */
	assert_memory_equal(info.mac, mac, 6);
	assert_int_equal(port->mtu, 1400);
	port_destroy(port);

	/* The same mac again is a restart with the same config: accepted;
	 * another one would change the device: refused, saying so. */
	opts.mac = mac;
	assert_int_equal(tap_port_open(&opts, &port, why, sizeof(why)), 0);
	port_destroy(port);
	const uint8_t other[6] = { 0x02, 0, 0, 0, 0, 9 };
	opts.mac = other;
	assert_int_equal(tap_port_open(&opts, &port, why, sizeof(why)), -EEXIST);
	assert_non_null(strstr(why, "would change the MAC of the existing tap (it has 02:00:5e:10:20:30"));

	/* An explicit mtu is applied to an existing tap; port del deletes it. */
	opts.mac = NULL;
	opts.mtu = 1300;
	assert_int_equal(tap_port_open(&opts, &port, why, sizeof(why)), 0);
	assert_int_equal(port->mtu, 1300);
	tap_port_set_delete(port, true);
	port_destroy(port);
	assert_int_equal(if_nametoindex(name), 0);
}

static void test_foreign_tap_is_attached_and_left_alone(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	char name[IF_NAMESIZE];
	side_name(name, "vxfo");
	make_foreign_tap(name, false);
	struct rtnl_link_info before;
	assert_int_equal(rtnl_link_get(-1, name, 0, &before), 0);
	struct tap_options opts = { .name = name, .default_mtu = 1400, .vni = 1 };
	struct port *port;
	char why[200] = "";
	assert_int_equal(tap_port_open(&opts, &port, why, sizeof(why)), 0);
	struct tap_port_info info;
	tap_port_get_info(port, NULL, &info);
	assert_false(info.created);
	assert_false(info.owned);
	assert_int_equal(port->mtu, before.mtu); /* 1500: default_mtu is for created taps */
	assert_memory_equal(info.mac, before.mac, 6);
	tap_port_set_delete(port, true); /* not the switch's: stays */
	port_destroy(port);
	assert_true(if_nametoindex(name) != 0);

	/* Held open by another process (QEMU): refused, saying so. */
	int held = make_foreign_tap(name, true);
	assert_int_equal(tap_port_open(&opts, &port, why, sizeof(why)), -EBUSY);
	assert_non_null(strstr(why, "held open by another process, e.g. QEMU"));
	close(held);
	delete_foreign_tap(name);
	assert_int_equal(if_nametoindex(name), 0);
}

static void test_kernel_counts_what_the_vm_sent_unread(void **state)
{
	struct fixture *fx = *state;
	if (!fx->port)
		skip();
	struct tap_kernel_stats ks;
	assert_int_equal(tap_port_kernel_stats(fx->port, &ks), 0);
	uint64_t before = ks.tx_dropped;
	/* Nobody reads the port: the tap's queue (txqueuelen 1000) overflows. */
	uint8_t frame[256];
	size_t len = build_tcp(frame, sizeof(frame), 100, NULL);
	for (int i = 0; i < 3000; i++)
		send(fx->raw, frame, len, MSG_DONTWAIT);
	assert_int_equal(tap_port_kernel_stats(fx->port, &ks), 0);
	assert_true(ks.tx_dropped > before);
	char path[128];
	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/tx_dropped", fx->port->name);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	unsigned long long sys = 0;
	assert_int_equal(fscanf(f, "%llu", &sys), 1);
	fclose(f);
	assert_int_equal(ks.tx_dropped, sys);
	/* Drain what did fit, for the tests after. */
	struct pkt *pkts[16];
	int n;
	while ((n = fx->port->cls->rx_batch(fx->port, &fx->io, fx->pool, pkts, 16)) > 0)
		for (int i = 0; i < n; i++)
			pkt_free(pkts[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_probes_offloads),
		cmocka_unit_test(test_frame_sent_into_the_tap_is_read_with_its_bytes),
		cmocka_unit_test(test_write_gathers_linear_part_and_frags),
		cmocka_unit_test(test_gso_frame_is_written_whole),
		cmocka_unit_test(test_bad_gso_metadata_is_a_counted_write_error),
		cmocka_unit_test(test_bad_name_is_refused),
		cmocka_unit_test(test_created_tap_outlives_the_port_and_is_attached_again),
		cmocka_unit_test(test_foreign_tap_is_attached_and_left_alone),
		cmocka_unit_test(test_kernel_counts_what_the_vm_sent_unread),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
