/* Unit tests for tunnelled frames in GRO (src/offload/gro_vxlan.c): full
 * VXLAN frames (IPv4 and IPv6, either way round) and UDP-socket payloads
 * merge and leave decapsulated; socket views (headers copied, payload a
 * frag of the receive buffer) merge across the frag; outer UDP checksum
 * zero vs non-zero, VNI, inner MAC, in_port, tunnel metadata and inner
 * VLAN tag separate flows; gro_decap_passthrough() gives GRO's shape to a
 * frame with GRO off; gro_mark_big_tcp() marks a peer's whole GSO packet.
 * Fixture: gro_test_util.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "gro_test_util.h"
#include "offload/gso.h"

static void test_merge_vxlan_frame_ipv4_in_ipv4(void **state)
{
	(void)state;
	merge_four_segments(4, MODE_VXLAN_FRAME, 4);
}

static void test_merge_vxlan_frame_ipv6_in_ipv6(void **state)
{
	(void)state;
	merge_four_segments(6, MODE_VXLAN_FRAME, 6);
}

static void test_merge_vxlan_frame_ipv4_in_ipv6(void **state)
{
	(void)state;
	merge_four_segments(4, MODE_VXLAN_FRAME, 6);
}

static void test_merge_vxlan_udp_payloads(void **state)
{
	(void)state;
	merge_four_segments(4, MODE_VXLAN_UDP, 0);
	merge_four_segments(6, MODE_VXLAN_UDP, 0);
}

/* The daemon's input: the VXLAN port hands each datagram as a view, its
 * headers copied into the pkt and its payload a frag into the receive
 * buffer (src/port/vxlan.c).  Turns a built segment into that shape. */
static struct pkt *make_view(struct gro_test *t, struct pkt *pkt)
{
	struct pkt *buf = pkt_alloc(t->pool);
	assert_non_null(buf);
	uint32_t hdr = pkt->inner_payload_ofs;
	assert_int_equal(pkt_set_data(buf, pkt->data + hdr, pkt->size - hdr), 0);
	pkt_trim(pkt, hdr);
	assert_int_equal(pkt_add_frag(pkt, buf->data, buf->size, buf), 0);
	pkt_free(buf); /* the frag holds it now */
	return pkt;
}

/* Views merge like linear segments, checksums verified across the frag:
 * four full ones and a short last one make one frame whose payload is the
 * stream's, a corrupted view passes alone, and every receive buffer goes
 * back to the pool once the frames are freed (gro_test_free checks). */
static void test_merge_views_from_the_socket(void **state)
{
	(void)state;
	static uint8_t flat[FB_MAX_FRAME];
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_VXLAN_UDP, 0);
	struct pkt *segs[7];
	for (int i = 0; i < 4; i++)
		segs[i] = make_view(t, stream_next(t, &s, MSS));
	segs[4] = make_view(t, stream_next(t, &s, 100));
	segs[5] = make_view(t, stream_next(t, &s, MSS));
	segs[5]->frags[0].owner->data[7] ^= 1; /* payload, past the headers */
	segs[6] = make_view(t, stream_next(t, &s, MSS));
	receive_batch(t, segs, 7, 0);

	assert_int_equal(t->sink.n, 3);
	/* Held now: the first frame's pkt and its 5 receive buffers, and a
	 * pkt and a buffer for each frame passed alone; the merged views'
	 * own pkts are back in the pool, no buffer is. */
	struct pkt_pool_stats ps;
	pkt_pool_get_stats(t->pool, &ps);
	assert_int_equal(ps.in_use, 1 + 5 + 2 + 2);
	struct pkt *out = t->sink.out[0];
	uint32_t len = pkt_len(out);
	assert_int_equal(out_seq(out), s.isn);
	assert_int_equal(out_payload_len(out), 4 * MSS + 100);
	assert_int_equal(out->ol.gso_size, MSS);
	assert_int_equal(out->ol.gso_type, PKT_GSO_TCPV4);
	assert_int_equal(pkt_copy_out(out, 0, len, flat), 0);
	for (uint32_t i = 0; i < 4 * MSS + 100; i++)
		assert_int_equal(flat[out->payload_ofs + i], (uint8_t)i);
	uint32_t l4_len = len - out->l4_ofs;
	const uint8_t *l3 = flat + out->l3_ofs;
	uint32_t pseudo = csum_pseudo_ipv4(l3 + 12, l3 + 16, IP_PROTO_TCP, l4_len);
	assert_int_equal(csum_complete_partial(out, out->ol.csum_start, out->ol.csum_offset), 0);
	assert_int_equal(csum_fold(csum_pkt(out, out->l4_ofs, l4_len, pseudo)), 0);
	assert_int_equal(stats(t).passthrough[GRO_PASS_CSUM_BAD], 1);
	assert_int_equal(out_seq(t->sink.out[1]), s.isn + 4 * MSS + 100);
	assert_int_equal(out_seq(t->sink.out[2]), s.isn + 5 * MSS + 100);
	gro_test_free(t);
}

/* The trace's outer UDP checksum is 0 (RFC 7348 says SHOULD): still merged. */
static void test_vxlan_zero_and_nonzero_outer_csum(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_VXLAN_FRAME, 4);
	s.vx.udp_csum = false;
	feed(t, &s, MSS, 0);
	feed(t, &s, MSS, 0);
	/* Same flow, but one non-zero outer checksum: not the same flow any
	 * more (udp_gro_receive), so it starts its own run. */
	s.vx.udp_csum = true;
	feed(t, &s, MSS, 0);
	feed(t, &s, MSS, 0);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 2);
	check_frame(&s, t->sink.out[0], s.isn, 2 * MSS, 2, MSS);
	check_frame(&s, t->sink.out[1], s.isn + 2 * MSS, 2 * MSS, 2, MSS);
	gro_test_free(t);
}

static void test_different_vni_or_inner_mac_are_different_flows(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream a, b, c;
	stream_init(&a, 4, MODE_VXLAN_FRAME, 4);
	stream_init(&b, 4, MODE_VXLAN_FRAME, 4);
	stream_init(&c, 4, MODE_VXLAN_FRAME, 4);
	b.vx.vni = 100;
	c.f.src_mac[5] = 0x77;
	for (int i = 0; i < 3; i++) {
		feed(t, &a, MSS, 0);
		feed(t, &b, MSS, 0);
		feed(t, &c, MSS, 0);
	}
	assert_int_equal(stats(t).flows_held, 3);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 3);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(out_payload_len(t->sink.out[i]), 3 * MSS);
	gro_test_free(t);
}

/* Identical headers, different ingress (port, or outer source for socket
 * input where the outer headers are only metadata): different flows. */
static void test_in_port_and_tunnel_metadata_separate_flows(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_VXLAN_UDP, 0);
	s.f.payload_len = MSS;
	for (int i = 0; i < 2; i++) {
		struct pkt *a = stream_build(t, &s);
		struct pkt *b = stream_build(t, &s);
		struct pkt *c = stream_build(t, &s);
		b->in_port = 7;
		c->tunnel.src[3] = 9;
		receive(t, a, 0);
		receive(t, b, 0);
		receive(t, c, 0);
		s.f.seq += MSS; /* the three carry the same segment, one per flow */
		s.f.ip_id++;
	}
	assert_int_equal(stats(t).flows_held, 3);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 3);
	for (unsigned i = 0; i < 3; i++)
		check_frame(&s, t->sink.out[i], s.isn, 2 * MSS, 2, MSS);
	gro_test_free(t);
}

static void test_vlan_tagged_inner_frames_merge_per_tag(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream a, b;
	stream_init(&a, 4, MODE_VXLAN_FRAME, 4);
	stream_init(&b, 4, MODE_VXLAN_FRAME, 4);
	a.f.n_vlans = b.f.n_vlans = 1;
	a.f.vlan_tpid[0] = b.f.vlan_tpid[0] = ETH_TYPE_VLAN;
	a.f.vlan_tci[0] = 10;
	b.f.vlan_tci[0] = 20;
	for (int i = 0; i < 3; i++) {
		feed(t, &a, MSS, 0);
		feed(t, &b, MSS, 0);
	}
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 2);
	for (unsigned i = 0; i < 2; i++) {
		struct pkt *out = t->sink.out[i];
		assert_int_equal(out->l3_ofs, ETH_HDR_LEN + VLAN_HDR_LEN);
		check_frame(&a, out, a.isn, 3 * MSS, 3, MSS);
	}
	gro_test_free(t);
}

static void assert_same_shape(const struct pkt *a, const struct pkt *b)
{
	assert_int_equal(pkt_len(a), pkt_len(b));
	assert_int_equal(a->size, b->size);
	assert_memory_equal(a->data, b->data, a->size);
	assert_memory_equal(&a->l2_ofs, &b->l2_ofs, 9 * sizeof(uint16_t));
	assert_memory_equal(&a->tunnel, &b->tunnel, sizeof(a->tunnel));
	assert_int_equal(a->in_port, b->in_port);
}

/* gro_decap_passthrough() gives a frame the shape GRO gives one it passes
 * through (here a pure ACK): a datapath with GRO off then hands the TAP
 * the same frames. */
static void decap_like_gro(uint8_t family, enum stream_mode mode, uint8_t outer_family)
{
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, family, mode, outer_family);
	s.in_port = 3;
	s.f.payload_len = 0;
	struct pkt *alone = stream_build(t, &s);
	struct pkt *via_gro = stream_next(t, &s, 0);
	uint16_t inner_l2 = alone->inner_l2_ofs, inner_l4 = alone->inner_l4_ofs;
	uint8_t *inner = alone->data + inner_l2;

	receive(t, via_gro, 0);
	assert_int_equal(t->sink.n, 1);
	gro_decap_passthrough(alone);
	assert_same_shape(alone, t->sink.out[0]);
	assert_ptr_equal(alone->data, inner);
	assert_int_equal(alone->l2_ofs, 0);
	assert_int_equal(alone->l4_ofs, inner_l4 - inner_l2);
	assert_int_equal(alone->tunnel_ofs, PKT_OFS_NONE);
	assert_int_equal(alone->inner_l2_ofs, PKT_OFS_NONE);
	assert_int_equal(alone->inner_payload_ofs, PKT_OFS_NONE);
	pkt_free(alone);
	gro_test_free(t);
}

static void test_decap_passthrough_matches_gro_output(void **state)
{
	(void)state;
	decap_like_gro(4, MODE_VXLAN_FRAME, 4);
	decap_like_gro(6, MODE_VXLAN_FRAME, 6);
	decap_like_gro(4, MODE_VXLAN_UDP, 0);
	decap_like_gro(6, MODE_VXLAN_UDP, 0);
}

/* A plain frame, and one never parsed, are left as they are. */
static void test_decap_passthrough_leaves_plain_frames(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_PLAIN, 0);
	struct pkt *plain = stream_build(t, &s), *copy = stream_build(t, &s);
	gro_decap_passthrough(plain);
	assert_same_shape(plain, copy);
	pkt_clear_offsets(plain);
	pkt_clear_offsets(copy);
	gro_decap_passthrough(plain);
	assert_same_shape(plain, copy);
	pkt_free(plain);
	pkt_free(copy);
	gro_test_free(t);
}

/* Where big_tcp() builds its frames. */
static uint8_t big_buf[FB_MAX_FRAME];

/* gro_mark_big_tcp(): a whole big TCP segment gets GRO's metadata, and
 * finishing its seed gives back the checksum it came with. */
static struct pkt *big_tcp(struct gro_test *t, uint8_t family, size_t payload, uint16_t flags,
			   struct fb_layout *lay)
{
	struct fb_frame f;
	fb_frame_init(&f, family, IP_PROTO_TCP);
	f.payload_len = payload;
	f.tcp_flags = flags;
	size_t len = fb_build(&f, big_buf, sizeof(big_buf), lay);
	assert_true(len > 0);
	struct pkt *pkt = pkt_alloc(t->pool);
	assert_non_null(pkt);
	assert_int_equal(pkt_set_data(pkt, big_buf, (uint32_t)len), 0);
	pkt->l2_ofs = 0;
	pkt->l3_ofs = (uint16_t)lay->l3_ofs;
	pkt->l4_ofs = (uint16_t)lay->l4_ofs;
	pkt->payload_ofs = (uint16_t)lay->payload_ofs;
	pkt->ol.flags = PKT_OL_DATA_VALID;
	return pkt;
}

static void test_mark_big_tcp(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct fb_layout lay;
	for (uint8_t family = 4; family <= 6; family += 2) {
		struct pkt *pkt = big_tcp(t, family, 30000, TCP_ACK | TCP_CWR, &lay);
		uint16_t full;
		memcpy(&full, pkt->data + lay.l4_ofs + TCP_CSUM_OFFSET, 2);
		assert_true(gro_mark_big_tcp(pkt, 1450));
		assert_int_equal(pkt->ol.flags, PKT_OL_NEEDS_CSUM);
		assert_int_equal(pkt->ol.gso_type, (family == 4 ? PKT_GSO_TCPV4 : PKT_GSO_TCPV6) | PKT_GSO_ECN);
		assert_int_equal(pkt->ol.gso_size, 1450 - (family == 4 ? 20 : 40) - 20);
		assert_int_equal(pkt->ol.hdr_len, lay.l4_ofs + 20);
		assert_int_equal(pkt->ol.csum_start, lay.l4_ofs);
		assert_int_equal(pkt->ol.csum_offset, TCP_CSUM_OFFSET);
		assert_true(gso_tap_frame_ok(pkt));
		/* Not twice. */
		assert_false(gro_mark_big_tcp(pkt, 1450));
		assert_int_equal(csum_complete_partial(pkt, pkt->ol.csum_start, pkt->ol.csum_offset), 0);
		assert_memory_equal(pkt->data + lay.l4_ofs + TCP_CSUM_OFFSET, &full, 2);
		pkt_free(pkt);
	}
	/* Within the MTU, unverified, already offloaded, or not TCP: untouched. */
	struct pkt *pkt = big_tcp(t, 4, 1410, TCP_ACK, &lay);
	assert_false(gro_mark_big_tcp(pkt, 1450));
	pkt_free(pkt);
	pkt = big_tcp(t, 4, 1411, TCP_ACK, &lay);
	assert_true(gro_mark_big_tcp(pkt, 1450));
	pkt_free(pkt);
	pkt = big_tcp(t, 4, 20000, TCP_ACK, &lay);
	pkt->ol.flags = 0;
	assert_false(gro_mark_big_tcp(pkt, 1450));
	assert_int_equal(pkt->ol.gso_type, PKT_GSO_NONE);
	assert_memory_equal(pkt->data, big_buf, lay.len < pkt->size ? lay.len : pkt->size);
	pkt_free(pkt);
	pkt = big_tcp(t, 6, 20000, TCP_ACK, &lay);
	pkt->ol.gso_type = PKT_GSO_TCPV6;
	assert_false(gro_mark_big_tcp(pkt, 1450));
	pkt_free(pkt);
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.payload_len = 20000;
	size_t len = fb_build(&f, big_buf, sizeof(big_buf), &lay);
	pkt = pkt_alloc(t->pool);
	assert_int_equal(pkt_set_data(pkt, big_buf, (uint32_t)len), 0);
	pkt->l3_ofs = (uint16_t)lay.l3_ofs;
	pkt->l4_ofs = (uint16_t)lay.l4_ofs;
	pkt->ol.flags = PKT_OL_DATA_VALID;
	assert_false(gro_mark_big_tcp(pkt, 1450));
	pkt_free(pkt);
	gro_test_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_vxlan_frame_ipv4_in_ipv4),
		cmocka_unit_test(test_merge_vxlan_frame_ipv6_in_ipv6),
		cmocka_unit_test(test_merge_vxlan_frame_ipv4_in_ipv6),
		cmocka_unit_test(test_merge_vxlan_udp_payloads),
		cmocka_unit_test(test_merge_views_from_the_socket),
		cmocka_unit_test(test_vxlan_zero_and_nonzero_outer_csum),
		cmocka_unit_test(test_different_vni_or_inner_mac_are_different_flows),
		cmocka_unit_test(test_in_port_and_tunnel_metadata_separate_flows),
		cmocka_unit_test(test_vlan_tagged_inner_frames_merge_per_tag),
		cmocka_unit_test(test_decap_passthrough_matches_gro_output),
		cmocka_unit_test(test_decap_passthrough_leaves_plain_frames),
		cmocka_unit_test(test_mark_big_tcp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
