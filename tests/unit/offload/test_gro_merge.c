/* Unit tests for GRO's TCP rules (src/offload/gro_tcp.c, gro.h "Merge and
 * flush rules"): plain frames merge on IPv4 and IPv6; each flush-before
 * rule (seq gap, ACK, options, TTL/TOS/DF, IP ID, flags, window) ends the
 * held run for its named reason; IP ID fixed or incrementing, decided at
 * the second segment; segment size rules; PSH/FIN merged then flushed,
 * SYN/RST/URG/CWR flushed before; interleaved flows come out whole and in
 * order.  Fixture: gro_test_util.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "gro_test_util.h"

static void test_merge_plain_ipv4(void **state)
{
	(void)state;
	merge_four_segments(4, MODE_PLAIN, 0);
}

static void test_merge_plain_ipv6(void **state)
{
	(void)state;
	merge_four_segments(6, MODE_PLAIN, 0);
}

/* Two segments, then a third that `mutate` changes; expects the first two
 * as one frame flushed for `why` and the third held as a new run. */
typedef void mutate_fn(struct stream *s);

static void expect_flush_before(uint8_t family, enum stream_mode mode, mutate_fn *mutate,
				enum gro_flush_reason why)
{
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, family, mode, 4);
	feed(t, &s, MSS, 0);
	feed(t, &s, MSS, 0);
	assert_int_equal(t->sink.n, 0);
	mutate(&s);
	feed(t, &s, MSS, 0);
	assert_int_equal(t->sink.n, 1);
	check_frame(&s, t->sink.out[0], s.isn, 2 * MSS, 2, MSS);
	assert_int_equal(stats(t).flushes[why], 1);
	assert_int_equal(stats(t).flows_held, 1);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 2);
	gro_test_free(t);
}

static void mutate_seq_gap(struct stream *s) { s->f.seq += 1; }

static void mutate_ack(struct stream *s) { s->f.ack += 1; }

static void mutate_tsval(struct stream *s)
{
	static const uint8_t ts2[12] = { 1, 1, 8, 10, 0, 0, 0, 8, 0, 0, 0, 3 };
	s->f.tcp_opts = ts2;
}

static void mutate_no_options(struct stream *s) { s->f.tcp_opts = NULL; s->f.tcp_opts_len = 0; }

static void mutate_ttl(struct stream *s) { s->f.ttl--; }

static void mutate_tos(struct stream *s) { s->f.tos = 0x10; }

static void mutate_df(struct stream *s) { s->f.frag_off = 0; }

static void mutate_ip_id(struct stream *s) { s->f.ip_id += 7; }

static void mutate_outer_ttl(struct stream *s) { s->vx.ttl--; }

static void mutate_outer_ip_id(struct stream *s) { s->vx.ip_id += 7; }

static void mutate_ece(struct stream *s) { s->f.tcp_flags |= TCP_ECE; }

static void mutate_window(struct stream *s) { s->f.window = 1000; }

static void test_flush_seq_gap(void **state)
{
	(void)state;
	expect_flush_before(4, MODE_PLAIN, mutate_seq_gap, GRO_FLUSH_SEQ_GAP);
	expect_flush_before(6, MODE_VXLAN_FRAME, mutate_seq_gap, GRO_FLUSH_SEQ_GAP);
}

static void test_flush_ack_changed(void **state)
{
	(void)state;
	expect_flush_before(4, MODE_PLAIN, mutate_ack, GRO_FLUSH_ACK_CHANGED);
	expect_flush_before(6, MODE_PLAIN, mutate_ack, GRO_FLUSH_ACK_CHANGED);
}

static void test_flush_options_changed(void **state)
{
	(void)state;
	expect_flush_before(4, MODE_PLAIN, mutate_tsval, GRO_FLUSH_OPTIONS_CHANGED);
	expect_flush_before(6, MODE_VXLAN_UDP, mutate_tsval, GRO_FLUSH_OPTIONS_CHANGED);
	expect_flush_before(4, MODE_PLAIN, mutate_no_options, GRO_FLUSH_OPTIONS_CHANGED); /* doff */
}

static void test_flush_ip_fields(void **state)
{
	(void)state;
	expect_flush_before(4, MODE_PLAIN, mutate_ttl, GRO_FLUSH_IP_FIELDS);
	expect_flush_before(4, MODE_PLAIN, mutate_tos, GRO_FLUSH_IP_FIELDS);
	expect_flush_before(4, MODE_PLAIN, mutate_df, GRO_FLUSH_IP_FIELDS);
	expect_flush_before(6, MODE_PLAIN, mutate_ttl, GRO_FLUSH_IP_FIELDS); /* hop limit */
	expect_flush_before(6, MODE_PLAIN, mutate_tos, GRO_FLUSH_IP_FIELDS); /* traffic class */
	expect_flush_before(4, MODE_VXLAN_FRAME, mutate_outer_ttl, GRO_FLUSH_IP_FIELDS);
}

static void test_flush_ip_id(void **state)
{
	(void)state;
	expect_flush_before(4, MODE_PLAIN, mutate_ip_id, GRO_FLUSH_IP_ID);
	expect_flush_before(4, MODE_VXLAN_FRAME, mutate_ip_id, GRO_FLUSH_IP_ID);
	expect_flush_before(4, MODE_VXLAN_FRAME, mutate_outer_ip_id, GRO_FLUSH_IP_ID);
}

static void test_flush_flags_changed(void **state)
{
	(void)state;
	expect_flush_before(4, MODE_PLAIN, mutate_ece, GRO_FLUSH_FLAGS_CHANGED);
}

/* The window is in the word Linux compares with the flags. */
static void test_flush_window_changed(void **state)
{
	(void)state;
	expect_flush_before(4, MODE_PLAIN, mutate_window, GRO_FLUSH_WINDOW_CHANGED);
	expect_flush_before(6, MODE_VXLAN_UDP, mutate_window, GRO_FLUSH_WINDOW_CHANGED);
}

/* Mainline: the second segment decides fixed or incrementing, for ever. */
static void test_ip_id_fixed_run(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_PLAIN, 0);
	for (int i = 0; i < 3; i++) {
		s.f.ip_id = 100; /* fixed */
		receive(t, stream_next(t, &s, MSS), 0);
	}
	assert_int_equal(t->sink.n, 0);
	s.f.ip_id = 103; /* now "incrementing" would fit, but the run is fixed */
	feed(t, &s, MSS, 0);
	assert_int_equal(t->sink.n, 1);
	assert_int_equal(out_payload_len(t->sink.out[0]), 3 * MSS);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_IP_ID], 1);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	gro_test_free(t);
}

static void test_ip_id_wraps(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_PLAIN, 0);
	s.f.ip_id = 0xfffe;
	for (int i = 0; i < 4; i++)
		feed(t, &s, MSS, 0);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 1);
	check_frame(&s, t->sink.out[0], s.isn, 4 * MSS, 4, MSS);
	gro_test_free(t);
}

static void test_segment_over_mss_starts_new_run(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_PLAIN, 0);
	feed(t, &s, 1000, 0);
	feed(t, &s, 1000, 0);
	feed(t, &s, 1001, 0); /* bigger than the run's MSS */
	feed(t, &s, 1001, 0);
	assert_int_equal(t->sink.n, 1);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_OVERSIZED_SEGMENT], 1);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 2);
	check_frame(&s, t->sink.out[0], s.isn, 2000, 2, 1000);
	check_frame(&s, t->sink.out[1], s.isn + 2000, 2002, 2, 1001);
	gro_test_free(t);
}

static void test_short_segment_merged_then_ends_run(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 6, MODE_VXLAN_FRAME, 4);
	feed(t, &s, MSS, 0);
	feed(t, &s, MSS, 0);
	feed(t, &s, 100, 0);
	assert_int_equal(t->sink.n, 1);
	check_frame(&s, t->sink.out[0], s.isn, 2 * MSS + 100, 3, MSS);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_SHORT_SEGMENT], 1);
	assert_int_equal(stats(t).flows_held, 0);
	/* The next full segment starts a fresh run. */
	feed(t, &s, MSS, 0);
	assert_int_equal(stats(t).flows_held, 1);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	gro_test_free(t);
}

static void test_pure_ack_never_merges_and_keeps_order(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_PLAIN, 0);
	feed(t, &s, MSS, 0);
	feed(t, &s, MSS, 0);
	feed(t, &s, 0, 0); /* pure ACK of the same flow */
	feed(t, &s, 0, 0);
	feed(t, &s, MSS, 0);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 4);
	check_frame(&s, t->sink.out[0], s.isn, 2 * MSS, 2, MSS);
	assert_int_equal(out_payload_len(t->sink.out[1]), 0);
	assert_int_equal(out_payload_len(t->sink.out[2]), 0);
	check_frame(&s, t->sink.out[3], s.isn + 2 * MSS, MSS, 1, MSS);
	struct gro_stats st = stats(t);
	assert_int_equal(st.passthrough[GRO_PASS_PURE_ACK], 2);
	assert_int_equal(st.flushes[GRO_FLUSH_PASSTHROUGH], 1);
	gro_test_free(t);
}

static void test_psh_and_fin_are_merged_then_flush(void **state)
{
	(void)state;
	static const uint8_t final_flags[] = { TCP_PSH, TCP_FIN, TCP_PSH | TCP_FIN };
	for (size_t k = 0; k < sizeof(final_flags); k++) {
		struct gro_test *t = test_new(0, 0, 0);
		struct stream s;
		stream_init(&s, 4, MODE_VXLAN_UDP, 0);
		feed(t, &s, MSS, 0);
		feed(t, &s, MSS, 0);
		s.f.tcp_flags = TCP_ACK | final_flags[k];
		feed(t, &s, MSS, 0);
		assert_int_equal(t->sink.n, 1);
		check_frame(&s, t->sink.out[0], s.isn, 3 * MSS, 3, MSS);
		assert_int_equal(out_tcp_flags(t->sink.out[0]), TCP_ACK | final_flags[k]);
		assert_int_equal(stats(t).flushes[GRO_FLUSH_FLAGS], 1);
		gro_test_free(t);
	}
}

/* SYN, RST and URG are not allowed to differ: flush first, then the
 * segment itself passes (it would end a run anyway). */
static void test_syn_rst_urg_flush_before_and_pass(void **state)
{
	(void)state;
	static const uint8_t flags[] = { TCP_SYN, TCP_RST, TCP_URG };
	for (size_t k = 0; k < sizeof(flags); k++) {
		struct gro_test *t = test_new(0, 0, 0);
		struct stream s;
		stream_init(&s, 6, MODE_PLAIN, 0);
		feed(t, &s, MSS, 0);
		feed(t, &s, MSS, 0);
		s.f.tcp_flags = TCP_ACK | flags[k];
		feed(t, &s, MSS, 0);
		assert_int_equal(t->sink.n, 2);
		check_frame(&s, t->sink.out[0], s.isn, 2 * MSS, 2, MSS);
		check_frame(&s, t->sink.out[1], s.isn + 2 * MSS, MSS, 1, MSS);
		assert_int_equal(out_tcp_flags(t->sink.out[1]), TCP_ACK | flags[k]);
		assert_int_equal(stats(t).flushes[GRO_FLUSH_FLAGS_CHANGED], 1);
		assert_int_equal(stats(t).passthrough[GRO_PASS_FLAGS], 1);
		assert_int_equal(stats(t).flows_held, 0);
		gro_test_free(t);
	}
}

/* A PSH segment with no run held leaves at once, not held. */
static void test_psh_without_run_passes(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_PLAIN, 0);
	s.f.tcp_flags = TCP_ACK | TCP_PSH;
	feed(t, &s, MSS, 0);
	assert_int_equal(t->sink.n, 1);
	assert_int_equal(stats(t).passthrough[GRO_PASS_FLAGS], 1);
	gro_test_free(t);
}

/* CWR never merges into a held run; like Linux it may start one, which
 * then carries gso_type | ECN. */
static void test_cwr_flushes_and_starts_ecn_run(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_PLAIN, 0);
	feed(t, &s, MSS, 0);
	feed(t, &s, MSS, 0);
	s.f.tcp_flags = TCP_ACK | TCP_CWR;
	feed(t, &s, MSS, 0);
	assert_int_equal(t->sink.n, 1);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_FLAGS], 1);
	s.f.tcp_flags = TCP_ACK;
	feed(t, &s, MSS, 0);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 2);
	check_frame(&s, t->sink.out[1], s.isn + 2 * MSS, 2 * MSS, 2, MSS);
	assert_int_equal(t->sink.out[1]->ol.gso_type, PKT_GSO_TCPV4 | PKT_GSO_ECN);
	gro_test_free(t);
}

/* Consecutive CWR segments: each flushes the one before (the fast path
 * must not take two equal CWR headers as mergeable). */
static void test_consecutive_cwr_never_merge(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_VXLAN_FRAME, 4);
	s.f.tcp_flags = TCP_ACK | TCP_CWR;
	for (int i = 0; i < 3; i++)
		feed(t, &s, MSS, 0);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 3);
	for (unsigned i = 0; i < 3; i++)
		check_frame(&s, t->sink.out[i], s.isn + i * MSS, MSS, 1, MSS);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_FLAGS], 2);
	gro_test_free(t);
}

/* Interleaved flows in one batch each come out whole and in order. */
static void test_interleaved_flows(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s[5];
	for (int i = 0; i < 5; i++) {
		stream_init(&s[i], (uint8_t)(i % 2 ? 6 : 4), i < 3 ? MODE_VXLAN_FRAME : MODE_PLAIN, 4);
		s[i].f.dst_port = (uint16_t)(80 + i);
		s[i].isn = s[i].f.seq = 1000u * (uint32_t)(i + 1);
	}
	for (int round = 0; round < 6; round++)
		for (int i = 0; i < 5; i++)
			feed(t, &s[i], MSS, 0);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 5);
	for (unsigned k = 0; k < 5; k++) {
		struct pkt *out = t->sink.out[k];
		uint16_t dport;
		assert_int_equal(pkt_copy_out(out, out->l4_ofs + 2, 2, &dport), 0);
		int i = __builtin_bswap16(dport) - 80;
		assert_true(i >= 0 && i < 5);
		check_frame(&s[i], out, s[i].isn, 6 * MSS, 6, MSS);
	}
	gro_test_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_plain_ipv4),
		cmocka_unit_test(test_merge_plain_ipv6),
		cmocka_unit_test(test_flush_seq_gap),
		cmocka_unit_test(test_flush_ack_changed),
		cmocka_unit_test(test_flush_options_changed),
		cmocka_unit_test(test_flush_ip_fields),
		cmocka_unit_test(test_flush_ip_id),
		cmocka_unit_test(test_flush_flags_changed),
		cmocka_unit_test(test_flush_window_changed),
		cmocka_unit_test(test_ip_id_fixed_run),
		cmocka_unit_test(test_ip_id_wraps),
		cmocka_unit_test(test_segment_over_mss_starts_new_run),
		cmocka_unit_test(test_short_segment_merged_then_ends_run),
		cmocka_unit_test(test_pure_ack_never_merges_and_keeps_order),
		cmocka_unit_test(test_psh_and_fin_are_merged_then_flush),
		cmocka_unit_test(test_syn_rst_urg_flush_before_and_pass),
		cmocka_unit_test(test_psh_without_run_passes),
		cmocka_unit_test(test_cwr_flushes_and_starts_ecn_run),
		cmocka_unit_test(test_consecutive_cwr_never_merge),
		cmocka_unit_test(test_interleaved_flows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
