/* Unit tests for tests/unit/support/frame_builder.c: the frames other tests
 * trust must have the lengths and checksums a real stack would give them.
 * Checksums are verified with src/packet/csum.c, so the builder's private
 * sum and csum.c check each other. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "frame_builder.h"
#include "packet/bytes.h"
#include "packet/csum.h"
#include "packet/hdr.h"

static uint8_t buf[FB_MAX_FRAME];
static uint8_t outer[FB_MAX_FRAME];

/* Folded sum over the L4 segment with its pseudo-header: 0 when correct. */
static uint16_t l4_residual(uint8_t family, const uint8_t *l3, const uint8_t *l4, size_t l4_len,
			    uint8_t proto)
{
	uint32_t sum = family == 4 ? csum_pseudo_ipv4(l3 + 12, l3 + 16, proto, (uint32_t)l4_len)
				   : csum_pseudo_ipv6(l3 + 8, l3 + 24, proto, (uint32_t)l4_len);
	return csum_fold(csum_partial(l4, l4_len, sum));
}

static void test_tcp4_lengths_and_checksums(void **state)
{
	(void)state;
	static const uint8_t ts[12] = { 1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 7 };
	struct fb_frame f;
	struct fb_layout lay;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.tcp_opts = ts;
	f.tcp_opts_len = sizeof(ts);
	f.seq = 0x01020304;
	f.tcp_flags = TCP_ACK | TCP_PSH | TCP_NS;
	f.payload_len = 1001; /* odd: exercises the padded last byte */
	f.payload_seed = 0xf0;
	size_t len = fb_build(&f, buf, sizeof(buf), &lay);
	assert_int_equal(len, 14 + 20 + 32 + 1001);
	assert_int_equal(lay.l3_ofs, 14);
	assert_int_equal(lay.l4_ofs, 34);
	assert_int_equal(lay.payload_ofs, 66);
	assert_int_equal(load_be16(buf + 12), ETH_TYPE_IPV4);
	assert_int_equal(load_be16(buf + 16), 20 + 32 + 1001);
	assert_true(csum_ipv4_hdr_ok(buf + 14, 20));
	assert_int_equal(buf[34 + 12], (32 / 4) << 4 | 1);
	assert_int_equal(buf[34 + 13], TCP_ACK | TCP_PSH);
	assert_int_equal(load_be16(buf + 38), 0x0102);
	assert_int_equal(l4_residual(4, buf + 14, buf + 34, len - 34, IP_PROTO_TCP), 0);
	assert_int_equal(buf[66], 0xf0);
	assert_int_equal(buf[66 + 20], 0x04); /* seed + i wraps */

	f.csum = FB_CSUM_BAD;
	assert_int_equal(fb_build(&f, buf, sizeof(buf), NULL), len);
	assert_int_not_equal(l4_residual(4, buf + 14, buf + 34, len - 34, IP_PROTO_TCP), 0);

	/* Partial: the field holds the folded pseudo-header sum, as a
	 * NEEDS_CSUM frame does; completing it gives the full checksum. */
	f.csum = FB_CSUM_PARTIAL;
	fb_build(&f, buf, sizeof(buf), NULL);
	uint16_t pseudo = csum_fold_nocomplement(
		csum_pseudo_ipv4(buf + 26, buf + 30, IP_PROTO_TCP, (uint32_t)(len - 34)));
	uint16_t field;
	memcpy(&field, buf + 34 + TCP_CSUM_OFFSET, 2);
	assert_int_equal(field, pseudo);
}

static void test_udp6_ext_headers_and_padding(void **state)
{
	(void)state;
	struct fb_frame f;
	struct fb_layout lay;
	fb_frame_init(&f, 6, IP_PROTO_UDP);
	f.n_ipv6_ext = 2;
	f.ipv6_ext[0].type = IP_PROTO_HOPOPTS;
	f.ipv6_ext[1] = (struct fb_ipv6_ext){ .type = IP_PROTO_FRAGMENT, .frag_more = true, .frag_id = 5 };
	f.payload_len = 3;
	f.pad_to = 100;
	f.n_vlans = 1;
	f.vlan_tpid[0] = ETH_TYPE_QINQ;
	f.vlan_tci[0] = 0x1234;
	size_t len = fb_build(&f, buf, sizeof(buf), &lay);
	assert_int_equal(len, 100);
	assert_int_equal(lay.l3_ofs, 18);
	assert_int_equal(lay.l4_ofs, 18 + 40 + 16);
	assert_int_equal(load_be16(buf + 12), ETH_TYPE_QINQ);
	assert_int_equal(load_be16(buf + 14), 0x1234);
	assert_int_equal(load_be16(buf + 16), ETH_TYPE_IPV6);
	assert_int_equal(load_be16(buf + 18 + 4), 16 + 8 + 3); /* payload length excludes padding */
	assert_int_equal(buf[18 + 6], IP_PROTO_HOPOPTS);
	assert_int_equal(buf[58], IP_PROTO_FRAGMENT); /* chained next headers */
	assert_int_equal(buf[66], IP_PROTO_UDP);
	assert_int_equal(load_be16(buf + 66 + 2), 1); /* offset 0, M */
	assert_int_equal(load_be16(buf + 74 + 4), 8 + 3);
	assert_int_equal(l4_residual(6, buf + 18, buf + 74, 11, IP_PROTO_UDP), 0);
	for (size_t i = 85; i < 100; i++)
		assert_int_equal(buf[i], 0);
}

static void test_later_fragment_has_no_l4_header(void **state)
{
	(void)state;
	struct fb_frame f;
	struct fb_layout lay;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.frag_off = 100;
	f.payload_len = 8;
	assert_int_equal(fb_build(&f, buf, sizeof(buf), &lay), 14 + 20 + 8);
	assert_int_equal(lay.payload_ofs, lay.l4_ofs);
	assert_int_equal(load_be16(buf + 20), 100);
}

static void test_vxlan_wrap(void **state)
{
	(void)state;
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.payload_len = 10;
	size_t inner = fb_build(&f, buf, sizeof(buf), NULL);
	struct fb_vxlan vx;

	fb_vxlan_init(&vx, 4, 0xabcdef);
	vx.udp_csum = true;
	size_t len = fb_wrap_vxlan(&vx, buf, inner, outer, sizeof(outer));
	assert_int_equal(len, VXLAN_ENCAP_LEN_IPV4 + inner);
	assert_true(csum_ipv4_hdr_ok(outer + 14, 20));
	assert_int_equal(load_be16(outer + 16), len - 14);
	assert_int_equal(load_be16(outer + 36), VXLAN_DEFAULT_PORT);
	assert_int_equal(load_be16(outer + 38), len - 34);
	assert_int_equal(l4_residual(4, outer + 14, outer + 34, len - 34, IP_PROTO_UDP), 0);
	assert_int_equal(outer[42], 0x08);
	assert_int_equal(outer[46], 0xab);
	assert_int_equal(outer[48], 0xef);
	assert_int_equal(outer[49], 0);
	assert_memory_equal(outer + 50, buf, inner);

	fb_vxlan_init(&vx, 6, 1);
	len = fb_wrap_vxlan(&vx, buf, inner, outer, sizeof(outer));
	assert_int_equal(len, VXLAN_ENCAP_LEN_IPV6 + inner);
	assert_int_equal(load_be16(outer + 18), len - 54);
	assert_int_not_equal(load_be16(outer + 60), 0); /* IPv6 UDP checksum is mandatory */
	assert_int_equal(l4_residual(6, outer + 14, outer + 54, len - 54, IP_PROTO_UDP), 0);

	fb_vxlan_init(&vx, 0, 2);
	assert_int_equal(fb_wrap_vxlan(&vx, buf, inner, outer, sizeof(outer)), 8 + inner);
	assert_int_equal(outer[0], 0x08);
	assert_int_equal(outer[6], 2); /* VNI 2 in the top 24 bits of word 2 */
	assert_int_equal(outer[7], 0);

	assert_int_equal(fb_wrap_vxlan(&vx, buf, inner, outer, inner), 0); /* does not fit */
}

static void test_impossible_descriptions_are_refused(void **state)
{
	(void)state;
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.tcp_opts_len = 3;
	assert_int_equal(fb_build(&f, buf, sizeof(buf), NULL), 0);
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.payload_len = 100;
	assert_int_equal(fb_build(&f, buf, 100, NULL), 0);
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.payload_len = 65535;
	assert_int_equal(fb_build(&f, buf, sizeof(buf), NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp4_lengths_and_checksums),
		cmocka_unit_test(test_udp6_ext_headers_and_padding),
		cmocka_unit_test(test_later_fragment_has_no_l4_header),
		cmocka_unit_test(test_vxlan_wrap),
		cmocka_unit_test(test_impossible_descriptions_are_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
