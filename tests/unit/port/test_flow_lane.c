/* Unit tests for src/port/flow_lane.c: one flow hash, three forms.
 *   - The C mirror is symmetric: the reply of every IPv4 and IPv6 TCP,
 *     UDP and ICMP flow (addresses and ports swapped) has its lane.
 *   - Flows spread: 256 TCP flows with client ports of one parity (as
 *     Linux's connect() picks them) land on every lane, none with more
 *     than twice its share.
 *   - The classic BPF program of a reuseport group, run by libpcap's
 *     interpreter (bpf_filter) over VXLAN payloads (the inner frame 8
 *     bytes in), picks the lane flow_lane_pick() says, for inner IPv4
 *     with and without options, IPv6, TCP, UDP, ICMP, ARP-less short
 *     frames and truncated headers.
 *   - The eBPF program on a real multi-queue tap (root only): frames of
 *     those flows sent into the device from an AF_PACKET socket come out
 *     of the queue flow_lane_pick() names, and the tap says it is
 *     steered. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <pcap/bpf.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "frame_builder.h"
#include "packet/hdr.h"
#include "packet/vnet_hdr.h"
#include "port/flow_lane.h"
#include "port/tap.h"

static const uint8_t protos[] = { IP_PROTO_TCP, IP_PROTO_UDP, IP_PROTO_ICMP };

/* Flow i of a test set: family, protocol, addresses and ports from i. */
static size_t flow_frame(uint8_t *buf, size_t cap, uint32_t i, bool reply)
{
	struct fb_frame f;
	uint8_t family = i % 2 ? 6 : 4;
	uint8_t proto = protos[(i / 2) % 3];
	if (family == 6 && proto == IP_PROTO_ICMP)
		proto = IP_PROTO_ICMPV6;
	fb_frame_init(&f, family, proto);
	unsigned last = family == 4 ? 3 : 15;
	f.src_ip[last] = (uint8_t)(1 + i % 251);
	f.dst_ip[last] = (uint8_t)(2 + (i * 7) % 251);
	f.src_ip[last - 1] = (uint8_t)(i >> 8);
	f.src_port = (uint16_t)(32768 + 2 * i);
	f.dst_port = (uint16_t)(proto == IP_PROTO_TCP || proto == IP_PROTO_UDP ? 5201 + i % 3 : 0x0800);
	static const uint8_t opts[8] = { 1, 1, 1, 1, 1, 1, 1, 0 }; /* NOPs, EOL */
	if (family == 4 && i % 5 == 0) {
		f.ip_opts = opts;
		f.ip_opts_len = sizeof(opts);
	}
	if (reply) {
		uint8_t t[16];
		memcpy(t, f.src_ip, 16), memcpy(f.src_ip, f.dst_ip, 16), memcpy(f.dst_ip, t, 16);
		if (proto == IP_PROTO_TCP || proto == IP_PROTO_UDP) {
			uint16_t p = f.src_port;
			f.src_port = f.dst_port, f.dst_port = p;
		}
	}
	size_t len = fb_build(&f, buf, cap, NULL);
	assert_true(len > 0);
	return len;
}

static void test_both_directions_of_a_flow_share_a_lane(void **state)
{
	(void)state;
	uint8_t a[256], b[256];
	for (unsigned n = 2; n <= 5; n++)
		for (uint32_t i = 0; i < 600; i++) {
			size_t la = flow_frame(a, sizeof(a), i, false), lb = flow_frame(b, sizeof(b), i, true);
			assert_int_equal(flow_lane_pick(a, la, 0, n), flow_lane_pick(b, lb, 0, n));
		}
}

static void test_flows_spread(void **state)
{
	(void)state;
	uint8_t b[256];
	for (unsigned n = 2; n <= 4; n++) {
		unsigned count[4] = { 0 };
		for (uint32_t i = 0; i < 256; i++) {
			struct fb_frame f;
			fb_frame_init(&f, 4, IP_PROTO_TCP);
			f.src_port = (uint16_t)(40000 + 2 * i);
			f.dst_port = 5201;
			count[flow_lane_pick(b, fb_build(&f, b, sizeof(b), NULL), 0, n)]++;
		}
		for (unsigned l = 0; l < n; l++) {
			assert_true(count[l] > 0);
			assert_true(count[l] <= 2 * 256 / n);
		}
	}
}

static unsigned run_cbpf(const uint8_t *b, size_t len, unsigned n)
{
	struct sock_filter f[FLOW_LANE_PROG_MAX];
	unsigned insns = flow_lane_cbpf(f, VXLAN_HDR_LEN, false, n);
	assert_true(insns <= FLOW_LANE_PROG_MAX);
	_Static_assert(sizeof(struct sock_filter) == sizeof(struct bpf_insn), "same layout");
	struct bpf_program prog = { .bf_len = insns, .bf_insns = (struct bpf_insn *)f };
	assert_true(bpf_validate(prog.bf_insns, (int)insns));
	return bpf_filter(prog.bf_insns, b, (u_int)len, (u_int)len);
}

static void test_reuseport_program_matches_c(void **state)
{
	(void)state;
	uint8_t b[VXLAN_HDR_LEN + 256];
	for (unsigned n = 2; n <= 5; n++) {
		for (uint32_t i = 0; i < 600; i++) {
			size_t len = flow_frame(b + VXLAN_HDR_LEN, 256, i, i % 4 == 3);
			/* Some cut short inside the IP or L4 header: both give 0. */
			if (i % 11 == 0)
				len = 14 + 10 + i % 30;
			unsigned want = flow_lane_pick(b + VXLAN_HDR_LEN, len, 0, n);
			assert_int_equal(run_cbpf(b, VXLAN_HDR_LEN + len, n), want);
		}
	}
}

/* Which of the tap's queues has `frame` to read (-1: none in 1 s).
 * Frames the stack sends on its own (IPv6 autoconf) are skipped. */
static int queue_with(const struct port *port, const uint8_t *frame, size_t len)
{
	struct pollfd pfd[PORT_MAX_QUEUES];
	for (unsigned q = 0; q < port->n_queues; q++)
		pfd[q] = (struct pollfd){ .fd = port->queue_fd[q], .events = POLLIN };
	for (int tries = 0; tries < 20; tries++) {
		if (poll(pfd, port->n_queues, 50) <= 0)
			continue;
		for (unsigned q = 0; q < port->n_queues; q++) {
			uint8_t buf[2048];
			ssize_t n;
			while ((n = read(pfd[q].fd, buf, sizeof(buf))) > 0)
				if ((size_t)n == VNET_HDR_V1_LEN + len && memcmp(buf + VNET_HDR_V1_LEN, frame, len) == 0)
					return (int)q;
		}
	}
	return -1;
}

static void tap_steers(unsigned n_queues)
{
	char name[IF_NAMESIZE];
	snprintf(name, sizeof(name), "vxfl%d", (int)(getpid() % 100000));
	struct tap_options opts = { .name = name, .mtu = 1500, .queues = n_queues };
	struct port *port = NULL;
	char why[256] = "";
	assert_int_equal(tap_port_open(&opts, &port, why, sizeof(why)), 0);
	struct tap_port_info ti;
	tap_port_get_info(port, NULL, &ti);
	assert_int_equal(ti.queues, n_queues);
	assert_true(ti.steered);
	int raw = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = (int)if_nametoindex(name) };
	assert_true(raw >= 0);
	assert_int_equal(bind(raw, (struct sockaddr *)&sll, sizeof(sll)), 0);
	unsigned seen[PORT_MAX_QUEUES] = { 0 };
	uint8_t frame[256];
	for (uint32_t i = 0; i < 90; i++) {
		size_t len = flow_frame(frame, sizeof(frame), i, i % 2 == 0);
		if (i % 15 == 7)
			len = 14 + 8; /* an IP header cut short: queue 0 */
		if (i % 15 == 8) {
			frame[12] = 0x08, frame[13] = 0x06; /* not IP: queue 0 */
			len = 14 + 28;
		}
		unsigned want = flow_lane_pick(frame, len, 0, n_queues);
		assert_int_equal(send(raw, frame, len, 0), (ssize_t)len);
		int got = queue_with(port, frame, len);
		assert_int_equal(got, (int)want);
		seen[got]++;
	}
	for (unsigned q = 0; q < n_queues; q++)
		assert_true(seen[q] > 0);
	close(raw);
	tap_port_set_delete(port, true);
	port_destroy(port);
}

static void test_tap_steers_two(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	tap_steers(2);
}

static void test_tap_steers_three(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	tap_steers(3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_directions_of_a_flow_share_a_lane),
		cmocka_unit_test(test_flows_spread),
		cmocka_unit_test(test_reuseport_program_matches_c),
		cmocka_unit_test(test_tap_steers_two),
		cmocka_unit_test(test_tap_steers_three),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
