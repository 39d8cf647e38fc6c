/* Unit tests for src/port/vxlan_lanes.c: the reuseport group and its
 * steering (the program itself: test_flow_lane.c).
 *   - On the real kernel: a group of 2 and of 3 sockets on 127.0.0.1, fed
 *     datagrams of many inner flows and an ARP frame (steered by the
 *     outer source port, which libpcap's interpreter cannot read), each
 *     datagram arrives on the socket vxlan_lane_pick() names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "packet/bytes.h"
#include "port/vxlan.h"

enum { PAYLOAD = 8 + 14 + 40 + 20 + 16 };

/* A VXLAN payload: header, inner Ethernet, inner IP (4 or 6), L4. */
static size_t make_payload(uint8_t *b, int family, uint8_t proto, uint32_t seed, uint16_t sport, uint16_t dport)
{
	memset(b, 0, PAYLOAD);
	b[0] = 0x08;                                  /* VXLAN: I flag, VNI 0 */
	uint8_t *eth = b + 8;
	memcpy(eth, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	uint8_t *l3 = eth + 14, *l4;
	if (family == 4) {
		store_be16(eth + 12, 0x0800);
		l3[0] = 0x45;
		l3[9] = proto;
		store_be32(l3 + 12, 0xc0000201 + seed);      /* 192.0.2.x */
		store_be32(l3 + 16, 0xc0000202 + (seed >> 8));
		l4 = l3 + 20;
	} else {
		store_be16(eth + 12, 0x86dd);
		l3[0] = 0x60;
		l3[6] = proto;
		store_be32(l3 + 8, 0x20010db8);
		store_be32(l3 + 20, 0x100 + seed);
		store_be32(l3 + 24, 0x20010db8);
		store_be32(l3 + 36, 0x200 + (seed >> 8));
		l4 = l3 + 40;
	}
	store_be16(l4, sport);
	store_be16(l4 + 2, dport);
	return (size_t)(l4 + 20 - b);
}

/* Which lane's fd has a datagram now (-1: none within 1 s). */
static int lane_with_datagram(struct vxlan_sock *sock, unsigned n_lanes)
{
	struct pollfd pfd[VXLAN_MAX_LANES];
	for (unsigned l = 0; l < n_lanes; l++)
		pfd[l] = (struct pollfd){ .fd = vxlan_sock_fd(vxlan_sock_lane(sock, l)), .events = POLLIN };
	if (poll(pfd, n_lanes, 1000) <= 0)
		return -1;
	for (unsigned l = 0; l < n_lanes; l++) {
		if (pfd[l].revents & POLLIN) {
			uint8_t buf[2048];
			assert_true(recv(pfd[l].fd, buf, sizeof(buf), 0) > 0);
			return (int)l;
		}
	}
	return -1;
}

static void kernel_steers(unsigned n_lanes)
{
	struct vxlan_options opts = { .local = { .family = 4 }, .lanes = n_lanes };
	store_be32(opts.local.bytes, 0x7f000001);
	struct vxlan_sock *sock = NULL;
	uint16_t port = 0;
	for (uint16_t p = 47900; p < 47990 && !sock; p++)
		if (vxlan_sock_open_opts(&opts, p, &sock) == 0)
			port = p;
	assert_non_null(sock);
	assert_int_equal(vxlan_sock_n_lanes(sock), n_lanes);
	int tx = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in src = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
	assert_int_equal(bind(tx, (struct sockaddr *)&src, sizeof(src)), 0);
	socklen_t sl = sizeof(src);
	getsockname(tx, (struct sockaddr *)&src, &sl);
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(0x7f000001) };
	uint8_t b[PAYLOAD];
	unsigned seen[VXLAN_MAX_LANES] = { 0 };
	for (uint32_t i = 0; i < 64; i++) {
		size_t len = make_payload(b, i % 2 ? 6 : 4, i % 3 ? 6 : 17, i * 13, (uint16_t)(33000 + 2 * i), 80);
		if (i == 63) {
			store_be16(b + 8 + 12, 0x0806); /* ARP: the outer source port decides */
			len = 8 + 14 + 28;
		}
		unsigned want = vxlan_lane_pick(b, len, ntohs(src.sin_port), n_lanes);
		assert_int_equal(sendto(tx, b, len, 0, (struct sockaddr *)&dst, sizeof(dst)), (ssize_t)len);
		int got = lane_with_datagram(sock, n_lanes);
		assert_int_equal(got, (int)want);
		seen[got]++;
	}
	for (unsigned l = 0; l < n_lanes; l++)
		assert_true(seen[l] > 0);
	close(tx);
	vxlan_sock_unref(sock);
}

static void test_kernel_steers_two(void **state)
{
	(void)state;
	kernel_steers(2);
}

static void test_kernel_steers_three(void **state)
{
	(void)state;
	kernel_steers(3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_steers_two),
		cmocka_unit_test(test_kernel_steers_three),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
