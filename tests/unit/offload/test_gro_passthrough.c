/* Unit tests for the frames GRO never holds (gro.h, "Never held"): bad TCP
 * or IPv4 header checksums (inner or outer), checked at every payload
 * length around the vectorised rounds, pass in order and are counted;
 * DATA_VALID input is trusted; IP options, fragments, IPv6 extension
 * headers, non-TCP, already offloaded and unparsed frames pass, the held
 * run of their flow flushed first.  Fixture: gro_test_util.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "gro_test_util.h"

/* DATA_VALID means a port already checked the checksum: GRO trusts it. */
static void test_data_valid_input_is_trusted(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_PLAIN, 0);
	s.f.csum = FB_CSUM_BAD;
	for (int i = 0; i < 3; i++) {
		struct pkt *pkt = stream_next(t, &s, MSS);
		pkt->ol.flags = PKT_OL_DATA_VALID;
		receive(t, pkt, 0);
	}
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 1);
	assert_int_equal(out_payload_len(t->sink.out[0]), 3 * MSS);
	assert_int_equal(stats(t).passthrough[GRO_PASS_CSUM_BAD], 0);
	gro_test_free(t);
}

static void test_bad_tcp_csum_passes_in_order_and_is_counted(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_VXLAN_FRAME, 4);
	feed(t, &s, MSS, 0);
	feed(t, &s, MSS, 0);
	s.f.csum = FB_CSUM_BAD;
	feed(t, &s, MSS, 0);
	s.f.csum = FB_CSUM_FULL;
	feed(t, &s, MSS, 0);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 3);
	check_frame(&s, t->sink.out[0], s.isn, 2 * MSS, 2, MSS);
	assert_int_equal(out_seq(t->sink.out[1]), s.isn + 2 * MSS);
	assert_int_equal(t->sink.out[1]->ol.flags, 0); /* not claimed valid */
	assert_int_equal(t->sink.out[1]->nr_frags, 0);
	assert_int_equal(out_seq(t->sink.out[2]), s.isn + 3 * MSS);
	assert_int_equal(stats(t).passthrough[GRO_PASS_CSUM_BAD], 1);
	gro_test_free(t);
}

/* The TCP checksum check (vectorised where the CPU allows) on payload
 * sizes around its 64-byte rounds and odd tails: every correct segment is
 * held, every one with a single payload bit flipped (first, middle or last
 * byte) passes as csum_bad. */
static void test_tcp_csum_check_every_length_and_position(void **state)
{
	(void)state;
	static const size_t lens[] = { 1, 2, 3, 31, 32, 33, 63, 64, 65, 95, 127, 128, 129, 191, 1000, 1447, MSS };
	struct gro_test *t = test_new(0, 0, 0);
	uint64_t bad = 0, good = 0;

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (int flip = -1; flip < 3; flip++) {
			struct stream s;
			stream_init(&s, i % 2 ? 6 : 4, MODE_VXLAN_FRAME, 4);
			struct pkt *pkt = stream_next(t, &s, lens[i]);
			if (flip >= 0) {
				size_t at = flip == 0 ? 0 : flip == 1 ? lens[i] / 2 : lens[i] - 1;
				pkt->data[pkt->inner_payload_ofs + at] ^= 0x10;
				bad++;
			} else {
				good++;
			}
			receive(t, pkt, 0);
			gro_flush(t->gro, GRO_FLUSH_ALL, 0);
		}
	}
	assert_int_equal(stats(t).passthrough[GRO_PASS_CSUM_BAD], bad);
	assert_int_equal(stats(t).passthrough[GRO_PASS_FLUSHED_ALONE], good);
	gro_test_free(t);
}

/* A corrupt IPv4 header checksum, inner or outer, in the middle of a
 * train: the run goes out first, the frame passes alone. */
static void bad_ip_csum_mid_train(bool outer)
{
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_VXLAN_FRAME, 4);
	feed(t, &s, MSS, 0);
	feed(t, &s, MSS, 0);
	struct pkt *bad = stream_next(t, &s, MSS);
	bad->data[(outer ? bad->l3_ofs : bad->inner_l3_ofs) + 10] ^= 0x40;
	receive(t, bad, 0);
	feed(t, &s, MSS, 0);
	feed(t, &s, MSS, 0);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 3);
	check_frame(&s, t->sink.out[0], s.isn, 2 * MSS, 2, MSS);
	assert_int_equal(out_seq(t->sink.out[1]), s.isn + 2 * MSS);
	assert_int_equal(t->sink.out[1]->nr_frags, 0);
	/* The IP ID keeps counting across the bad frame: a new run. */
	check_frame(&s, t->sink.out[2], s.isn + 3 * MSS, 2 * MSS, 2, MSS);
	assert_int_equal(stats(t).passthrough[GRO_PASS_IP_CSUM_BAD], 1);
	gro_test_free(t);
}

static void test_bad_ip_header_csum_passes(void **state)
{
	(void)state;
	bad_ip_csum_mid_train(false);
	bad_ip_csum_mid_train(true);
}

static void test_ip_options_fragments_ext_headers_pass(void **state)
{
	(void)state;
	static const uint8_t nop_opts[4] = { 1, 1, 1, 0 };
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s, s6;
	stream_init(&s, 4, MODE_PLAIN, 0);
	stream_init(&s6, 6, MODE_PLAIN, 0);

	feed(t, &s, MSS, 0);
	s.f.ip_opts = nop_opts;
	s.f.ip_opts_len = sizeof(nop_opts);
	feed(t, &s, MSS, 0);
	s.f.ip_opts = NULL;
	s.f.ip_opts_len = 0;
	s.f.frag_off = IPV4_MF; /* first fragment: still has the TCP header */
	feed(t, &s, MSS, 0);

	feed(t, &s6, MSS, 0);
	s6.f.n_ipv6_ext = 1;
	s6.f.ipv6_ext[0].type = IP_PROTO_DSTOPTS;
	feed(t, &s6, MSS, 0);

	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	struct gro_stats st = stats(t);
	assert_int_equal(st.passthrough[GRO_PASS_IP_OPTIONS], 1);
	assert_int_equal(st.passthrough[GRO_PASS_IP_FRAGMENT], 1);
	assert_int_equal(st.passthrough[GRO_PASS_IPV6_EXT], 1);
	/* Each flow in order: run flushed before the odd frame. */
	assert_int_equal(t->sink.n, 5);
	assert_int_equal(out_seq(t->sink.out[0]), s.isn);
	assert_int_equal(out_seq(t->sink.out[1]), s.isn + MSS);
	assert_int_equal(out_seq(t->sink.out[2]), s.isn + 2 * MSS);
	assert_int_equal(out_seq(t->sink.out[3]), s6.isn);
	assert_int_equal(out_seq(t->sink.out[4]), s6.isn + MSS);
	assert_int_equal(st.flushes[GRO_FLUSH_PASSTHROUGH], 2);
	gro_test_free(t);
}

static void test_non_tcp_passes_decapsulated(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_VXLAN_FRAME, 4);
	s.f.proto = IP_PROTO_UDP;
	s.f.payload_len = 100;
	struct pkt *udp = stream_build(t, &s);
	uint32_t inner_len = pkt_len(udp) - udp->inner_l2_ofs;
	receive(t, udp, 0);
	assert_int_equal(t->sink.n, 1);
	struct pkt *out = t->sink.out[0];
	assert_int_equal(pkt_len(out), inner_len);
	assert_memory_equal(out->data, s.f.dst_mac, 6);
	assert_int_equal(out->l2_ofs, 0);
	assert_int_equal(out->l3_ofs, ETH_HDR_LEN);
	assert_int_equal(out->tunnel.vni, 99);
	assert_int_equal(stats(t).passthrough[GRO_PASS_NOT_TCP], 1);
	gro_test_free(t);
}

/* A frame nobody parsed leaves exactly as it came. */
static void test_unparsed_frame_untouched(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct pkt *pkt = pkt_alloc(t->pool);
	uint8_t bytes[60] = { 1, 2, 3 };
	pkt_set_data(pkt, bytes, sizeof(bytes));
	receive(t, pkt, 0);
	assert_int_equal(t->sink.n, 1);
	assert_ptr_equal(t->sink.out[0], pkt);
	assert_false(t->sink.has_key[0]);
	assert_int_equal(pkt->size, 60);
	assert_memory_equal(pkt->data, bytes, 60);
	gro_test_free(t);
}

static void test_offloaded_input_passes(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_PLAIN, 0);
	feed(t, &s, MSS, 0);
	struct pkt *pkt = stream_next(t, &s, MSS);
	pkt->ol.gso_type = PKT_GSO_TCPV4;
	pkt->ol.gso_size = MSS;
	receive(t, pkt, 0);
	assert_int_equal(t->sink.n, 2);
	assert_int_equal(stats(t).passthrough[GRO_PASS_OFFLOADED], 1);
	gro_test_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data_valid_input_is_trusted),
		cmocka_unit_test(test_bad_tcp_csum_passes_in_order_and_is_counted),
		cmocka_unit_test(test_tcp_csum_check_every_length_and_position),
		cmocka_unit_test(test_bad_ip_header_csum_passes),
		cmocka_unit_test(test_ip_options_fragments_ext_headers_pass),
		cmocka_unit_test(test_non_tcp_passes_decapsulated),
		cmocka_unit_test(test_unparsed_frame_untouched),
		cmocka_unit_test(test_offloaded_input_passes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
