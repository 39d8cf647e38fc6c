/* The kernel datapath's choice of UDP source ports (bpf/vxdp_abi.h): a
 * flow's port within the VNI's range is the userspace datapath's, and the
 * skb hash the program sets makes the vxlan device's own choice
 * (udp_flow_src_port() over the device's range, written out below as the
 * kernel does it) come out as exactly that port, for every port the device
 * can give.  tests/netns/test_kdp_vxlan_options.sh reads the ports on the
 * wire. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "dp/kernel/bpf/vxdp_abi.h"
#include "offload/vxlan_encap.h"

/* include/net/udp.h, udp_flow_src_port(), with the device's range. */
static uint32_t kernel_src_port(uint32_t hash)
{
	uint32_t min = VXDP_SPORT_DEV_MIN, max = VXDP_SPORT_DEV_MAX;
	hash ^= hash << 16;
	return (uint32_t)((((uint64_t)hash * (max - min)) >> 32) + min);
}

static void test_every_port_comes_out(void **state)
{
	(void)state;
	for (uint32_t port = VXDP_SPORT_DEV_MIN; port <= VXDP_SPORT_TOP; port++) {
		uint32_t h = vxdp_sport_hash(port);
		assert_int_not_equal(h, 0);
		assert_int_equal(kernel_src_port(h), port);
	}
}

static void test_pick_is_userspace_choice(void **state)
{
	(void)state;
	static const uint16_t ranges[][2] = { { 4789, 4789 }, { 40000, 40009 }, { 49152, 49215 }, { 1, 64 } };
	uint32_t x = 2463534242u;
	for (unsigned r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++) {
		struct vxlan_encap cfg = { .src_port_min = ranges[r][0], .src_port_max = ranges[r][1] };
		uint64_t seen = 0;
		for (unsigned i = 0; i < 20000; i++) {
			x ^= x << 13, x ^= x >> 17, x ^= x << 5;
			uint32_t p = vxdp_sport_pick(x, ranges[r][0], ranges[r][1]);
			assert_true(p >= ranges[r][0] && p <= ranges[r][1]);
			assert_int_equal(p, vxlan_src_port(&cfg, x));
			seen |= 1ull << (p - ranges[r][0]);
		}
		unsigned n = ranges[r][1] - ranges[r][0] + 1u;
		assert_int_equal(seen, n == 64 ? ~0ull : (1ull << n) - 1); /* every port taken */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_port_comes_out),
		cmocka_unit_test(test_pick_is_userspace_choice),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
