/* Unit tests for src/offload/rx_csum.c: good, bad and unfinished (the
 * sender's pseudo-header seed) TCP and UDP checksums over IPv4 and IPv6,
 * finishing them to exactly what a full checksum gives, payload in frags,
 * odd lengths, Ethernet padding, UDP "no checksum", fragments, other
 * protocols, and IP lengths that lie. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "offload/rx_csum.h"
#include "packet/hdr.h"
#include "frame_builder.h"
#include "pool_fixture.h"


PKT_POOL_FIXTURE(8)

static uint8_t frame[FB_MAX_FRAME], expect[FB_MAX_FRAME];

/* Builds `f` into a pkt; with split > 0 everything past `split` bytes of
 * the frame becomes one frag (the VXLAN port's view shape). */
static struct pkt *build(const struct fb_frame *f, struct fb_layout *lay, size_t split)
{
	size_t len = fb_build(f, frame, sizeof(frame), lay);
	assert_true(len > 0);
	struct pkt *pkt = pkt_alloc(pool);
	assert_non_null(pkt);
	if (split && split < len) {
		assert_int_equal(pkt_set_data(pkt, frame, (uint32_t)split), 0);
		assert_int_equal(pkt_add_frag(pkt, frame + split, (uint32_t)(len - split), NULL), 0);
	} else {
		assert_int_equal(pkt_set_data(pkt, frame, (uint32_t)len), 0);
	}
	return pkt;
}

static void pkt_bytes(const struct pkt *pkt, uint8_t *out)
{
	assert_int_equal(pkt_copy_out(pkt, 0, pkt_len(pkt), out), 0);
}

/* A frame built with an unfinished checksum comes out of rx_csum_check()
 * byte for byte as the same frame built with the full checksum. */
static void check_finishes(uint8_t family, uint8_t proto, size_t payload_len, size_t split)
{
	struct fb_frame f;
	fb_frame_init(&f, family, proto);
	f.payload_len = payload_len;
	f.payload_seed = (uint8_t)(payload_len * 7 + family);
	f.csum = FB_CSUM_FULL;
	size_t full_len = fb_build(&f, expect, sizeof(expect), NULL);
	assert_true(full_len > 0);

	f.csum = FB_CSUM_PARTIAL;
	struct fb_layout lay;
	struct pkt *pkt = build(&f, &lay, split);
	assert_int_equal(rx_csum_check(pkt, (uint32_t)lay.l3_ofs, (uint32_t)lay.l4_ofs, proto, true),
			 RX_CSUM_FINISHED);
	static uint8_t got[FB_MAX_FRAME];
	assert_int_equal(pkt_len(pkt), full_len);
	pkt_bytes(pkt, got);
	assert_memory_equal(got, expect, full_len);
	/* And now it is simply good. */
	assert_int_equal(rx_csum_check(pkt, (uint32_t)lay.l3_ofs, (uint32_t)lay.l4_ofs, proto, true), RX_CSUM_GOOD);
	pkt_free(pkt);
}

static void test_good_is_good_and_untouched(void **state)
{
	(void)state;
	static const uint8_t protos[] = { IP_PROTO_TCP, IP_PROTO_UDP };
	for (uint8_t family = 4; family <= 6; family += 2)
		for (unsigned i = 0; i < 2; i++) {
			struct fb_frame f;
			fb_frame_init(&f, family, protos[i]);
			f.payload_len = 1000;
			struct fb_layout lay;
			struct pkt *pkt = build(&f, &lay, 0);
			assert_int_equal(rx_csum_check(pkt, (uint32_t)lay.l3_ofs, (uint32_t)lay.l4_ofs, protos[i], true),
					 RX_CSUM_GOOD);
			assert_memory_equal(pkt->data, frame, lay.len);
			pkt_free(pkt);
		}
}

static void test_unfinished_tcp_and_udp_are_finished(void **state)
{
	(void)state;
	check_finishes(4, IP_PROTO_TCP, 1448, 0);
	check_finishes(6, IP_PROTO_TCP, 1428, 0);
	check_finishes(4, IP_PROTO_UDP, 512, 0);
	check_finishes(6, IP_PROTO_UDP, 512, 0);
	/* Pure ACK and empty UDP: the seed alone. */
	check_finishes(4, IP_PROTO_TCP, 0, 0);
	check_finishes(6, IP_PROTO_UDP, 0, 0);
}

static void test_every_length_and_payload_in_a_frag(void **state)
{
	(void)state;
	for (size_t len = 0; len < 300; len++) {
		check_finishes(4, IP_PROTO_TCP, len, 0);
		check_finishes(6, IP_PROTO_UDP, len, 0);
		/* Headers linear, payload in a frag; odd split points too. */
		check_finishes(4, IP_PROTO_TCP, len, 14 + 20 + 20 + (len % 3));
		check_finishes(6, IP_PROTO_UDP, len, 14 + 40 + 8 + (len % 5));
	}
	check_finishes(4, IP_PROTO_TCP, 9000, 54);
}

static void test_unfinished_left_alone_without_finish(void **state)
{
	(void)state;
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.payload_len = 100;
	f.csum = FB_CSUM_PARTIAL;
	struct fb_layout lay;
	struct pkt *pkt = build(&f, &lay, 0);
	assert_int_equal(rx_csum_check(pkt, (uint32_t)lay.l3_ofs, (uint32_t)lay.l4_ofs, IP_PROTO_UDP, false),
			 RX_CSUM_UNFINISHED);
	assert_memory_equal(pkt->data, frame, lay.len);
	pkt_free(pkt);
}

static void test_seed_outside_linear_part_is_not_written(void **state)
{
	(void)state;
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.payload_len = 100;
	f.csum = FB_CSUM_PARTIAL;
	struct fb_layout lay;
	/* Split inside the TCP header, before its checksum field. */
	struct pkt *pkt = build(&f, &lay, 14 + 20 + 10);
	assert_int_equal(rx_csum_check(pkt, (uint32_t)lay.l3_ofs, (uint32_t)lay.l4_ofs, IP_PROTO_TCP, true),
			 RX_CSUM_UNFINISHED);
	pkt_free(pkt);
}

static void test_bad_is_bad_and_untouched(void **state)
{
	(void)state;
	for (uint8_t family = 4; family <= 6; family += 2) {
		struct fb_frame f;
		fb_frame_init(&f, family, IP_PROTO_TCP);
		f.payload_len = 700;
		f.csum = FB_CSUM_BAD;
		struct fb_layout lay;
		struct pkt *pkt = build(&f, &lay, 0);
		assert_int_equal(rx_csum_check(pkt, (uint32_t)lay.l3_ofs, (uint32_t)lay.l4_ofs, IP_PROTO_TCP, true),
				 RX_CSUM_BAD);
		assert_memory_equal(pkt->data, frame, lay.len);
		pkt_free(pkt);

		/* A corrupted payload under an unfinished seed is still the seed:
		 * accepted, as the kernel accepts CHECKSUM_PARTIAL.  A corrupted
		 * payload under a full checksum is bad. */
		f.csum = FB_CSUM_FULL;
		pkt = build(&f, &lay, 0);
		pkt->data[lay.payload_ofs + 5] ^= 0x40;
		assert_int_equal(rx_csum_check(pkt, (uint32_t)lay.l3_ofs, (uint32_t)lay.l4_ofs, IP_PROTO_TCP, true),
				 RX_CSUM_BAD);
		pkt_free(pkt);
	}
}

static void test_padding_is_not_summed(void **state)
{
	(void)state;
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.pad_to = 60;
	struct fb_layout lay;
	struct pkt *pkt = build(&f, &lay, 0);
	pkt->data[lay.len - 1] = 0x55; /* garbage in the padding */
	assert_int_equal(rx_csum_check(pkt, (uint32_t)lay.l3_ofs, (uint32_t)lay.l4_ofs, IP_PROTO_TCP, true),
			 RX_CSUM_GOOD);
	pkt_free(pkt);
}

static void test_udp_zero_checksum(void **state)
{
	(void)state;
	struct fb_frame f;
	struct fb_layout lay;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.payload_len = 33;
	f.csum = FB_CSUM_ZERO;
	struct pkt *pkt = build(&f, &lay, 0);
	assert_int_equal(rx_csum_check(pkt, (uint32_t)lay.l3_ofs, (uint32_t)lay.l4_ofs, IP_PROTO_UDP, true),
			 RX_CSUM_NOT_CHECKED);
	pkt_free(pkt);
	fb_frame_init(&f, 6, IP_PROTO_UDP);
	f.payload_len = 33;
	f.csum = FB_CSUM_ZERO;
	pkt = build(&f, &lay, 0);
	assert_int_equal(rx_csum_check(pkt, (uint32_t)lay.l3_ofs, (uint32_t)lay.l4_ofs, IP_PROTO_UDP, true),
			 RX_CSUM_BAD);
	pkt_free(pkt);
}

static void test_not_checked(void **state)
{
	(void)state;
	struct fb_frame f;
	struct fb_layout lay;
	fb_frame_init(&f, 4, IP_PROTO_ICMP);
	struct pkt *pkt = build(&f, &lay, 0);
	assert_int_equal(rx_csum_check(pkt, (uint32_t)lay.l3_ofs, (uint32_t)lay.l4_ofs, IP_PROTO_ICMP, true),
			 RX_CSUM_NOT_CHECKED);
	pkt_free(pkt);

	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.payload_len = 64;
	f.frag_off = IPV4_MF;
	f.csum = FB_CSUM_PARTIAL;
	pkt = build(&f, &lay, 0);
	assert_int_equal(rx_csum_check(pkt, (uint32_t)lay.l3_ofs, (uint32_t)lay.l4_ofs, IP_PROTO_UDP, true),
			 RX_CSUM_NOT_CHECKED);
	assert_memory_equal(pkt->data, frame, lay.len);
	pkt_free(pkt);
}

/* A routing header changes which destination the pseudo-header takes:
 * IPv6 with extension headers is left to the VM, even with a checksum that
 * looks wrong from the IPv6 header's destination. */
static void test_ipv6_extension_headers_not_checked(void **state)
{
	(void)state;
	struct fb_frame f;
	struct fb_layout lay;
	fb_frame_init(&f, 6, IP_PROTO_TCP);
	f.payload_len = 200;
	f.n_ipv6_ext = 1;
	f.ipv6_ext[0] = (struct fb_ipv6_ext){ .type = IP_PROTO_ROUTING, .len8 = 2 };
	f.csum = FB_CSUM_BAD;
	struct pkt *pkt = build(&f, &lay, 0);
	assert_int_equal(rx_csum_check(pkt, (uint32_t)lay.l3_ofs, (uint32_t)lay.l4_ofs, IP_PROTO_TCP, true),
			 RX_CSUM_NOT_CHECKED);
	assert_memory_equal(pkt->data, frame, lay.len);
	pkt_free(pkt);
}

static void test_lying_lengths_are_bad(void **state)
{
	(void)state;
	struct fb_frame f;
	struct fb_layout lay;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.payload_len = 100;
	f.ip_len_override = 20 + 20 + 200; /* longer than the frame */
	struct pkt *pkt = build(&f, &lay, 0);
	assert_int_equal(rx_csum_check(pkt, (uint32_t)lay.l3_ofs, (uint32_t)lay.l4_ofs, IP_PROTO_TCP, true),
			 RX_CSUM_BAD);
	pkt_free(pkt);

	fb_frame_init(&f, 6, IP_PROTO_UDP);
	f.ip_len_override = 4; /* shorter than a UDP header */
	pkt = build(&f, &lay, 0);
	assert_int_equal(rx_csum_check(pkt, (uint32_t)lay.l3_ofs, (uint32_t)lay.l4_ofs, IP_PROTO_UDP, true),
			 RX_CSUM_BAD);
	pkt_free(pkt);

	/* Offsets that do not fit the frame at all. */
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	pkt = build(&f, &lay, 0);
	assert_int_equal(rx_csum_check(pkt, 5000, 5020, IP_PROTO_TCP, true), RX_CSUM_BAD);
	assert_int_equal(rx_csum_check(pkt, (uint32_t)lay.l3_ofs, (uint32_t)lay.l3_ofs, IP_PROTO_TCP, true),
			 RX_CSUM_BAD);
	pkt_free(pkt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_is_good_and_untouched),
		cmocka_unit_test(test_unfinished_tcp_and_udp_are_finished),
		cmocka_unit_test(test_every_length_and_payload_in_a_frag),
		cmocka_unit_test(test_unfinished_left_alone_without_finish),
		cmocka_unit_test(test_seed_outside_linear_part_is_not_written),
		cmocka_unit_test(test_bad_is_bad_and_untouched),
		cmocka_unit_test(test_padding_is_not_summed),
		cmocka_unit_test(test_udp_zero_checksum),
		cmocka_unit_test(test_not_checked),
		cmocka_unit_test(test_ipv6_extension_headers_not_checked),
		cmocka_unit_test(test_lying_lengths_are_bad),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
