/* Unit tests for src/offload/gro.c: every merge and flush rule of gro.h on
 * IPv4 and IPv6, plain and VXLAN (full frames and UDP-socket payloads);
 * in-order emission; the hold timer measured from the first segment (seed
 * 001); eviction of the oldest run; the 64 KB cap; decapsulated output that
 * a TAP accepts (partial checksum completes to a valid one).
 *
 * Frames are built with tests/unit/support/frame_builder.h and parsed with
 * flow_extract(), as the datapath does. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "frame_builder.h"
#include "offload/gro.h"
#include "offload/gso.h"
#include "packet/csum.h"
#include "packet/hdr.h"
#include "parse/flow_extract.h"

enum { SINK_MAX = 512, POOL_PKTS = 400, MSS = 1448 };

enum stream_mode {
	MODE_PLAIN,
	MODE_VXLAN_FRAME, /* outer Eth/IP/UDP/VXLAN, as in a pcap */
	MODE_VXLAN_UDP,   /* from the VXLAN header on, as a UDP socket reads it */
};

/* What left GRO: the frames and the flow key each left with. */
struct sink {
	struct pkt *out[SINK_MAX];
	struct flow_key keys[SINK_MAX];
	bool has_key[SINK_MAX];
	unsigned n;
};

/* The key stream_build() parsed for a pkt not yet given to GRO: receive()
 * hands it over with the pkt, as the datapath does with its parse. */
struct parsed_key {
	struct pkt *pkt;
	struct flow_key key;
};

struct gro_test {
	struct pkt_pool *pool;
	struct gro_table *gro;
	struct sink sink;
	struct parsed_key parsed[POOL_PKTS];
	unsigned n_parsed;
};

/* One TCP stream: segment templates plus encapsulation. */
struct stream {
	struct fb_frame f;
	struct fb_vxlan vx;
	enum stream_mode mode;
	uint16_t in_port;
	uint32_t isn;
};

static uint8_t inner_buf[FB_MAX_FRAME];
static uint8_t frame_buf[FB_MAX_FRAME + 128];

static void collect(void *aux, struct pkt *pkt, const struct flow_key *key)
{
	struct sink *sink = aux;
	assert_true(sink->n < SINK_MAX);
	sink->has_key[sink->n] = key != NULL;
	if (key)
		sink->keys[sink->n] = *key;
	sink->out[sink->n++] = pkt;
}

static void key_remember(struct gro_test *t, struct pkt *pkt, const struct flow_key *key)
{
	unsigned i = 0;
	while (i < t->n_parsed && t->parsed[i].pkt != pkt)
		i++;
	assert_true(i < POOL_PKTS);
	t->parsed[i] = (struct parsed_key){ pkt, *key };
	if (i == t->n_parsed)
		t->n_parsed++;
}

/* The key remembered for `pkt` (copied to *out, and forgotten: GRO takes
 * the pkt), or NULL if it was never parsed. */
static const struct flow_key *key_take(struct gro_test *t, const struct pkt *pkt, struct flow_key *out)
{
	for (unsigned i = 0; i < t->n_parsed; i++) {
		if (t->parsed[i].pkt != pkt)
			continue;
		*out = t->parsed[i].key;
		t->parsed[i] = t->parsed[--t->n_parsed];
		return out;
	}
	return NULL;
}

static void receive(struct gro_test *t, struct pkt *pkt, uint64_t now)
{
	struct flow_key key;
	gro_receive(t->gro, pkt, key_take(t, pkt, &key), now);
}

static void receive_batch(struct gro_test *t, struct pkt **pkts, unsigned n, uint64_t now)
{
	static struct flow_key keys[16];
	assert_true(n <= 16);
	for (unsigned i = 0; i < n; i++)
		assert_non_null(key_take(t, pkts[i], &keys[i]));
	gro_receive_batch(t->gro, pkts, keys, n, now);
}

static struct gro_test *test_new(uint32_t max_flows, uint32_t max_size, uint64_t hold_ns)
{
	struct gro_test *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	assert_int_equal(pkt_pool_create(POOL_PKTS, &t->pool), 0);
	struct gro_config cfg = {
		.max_flows = max_flows, .max_size = max_size, .hold_ns = hold_ns,
		.emit = collect, .emit_aux = &t->sink,
	};
	assert_int_equal(gro_create(&cfg, &t->gro), 0);
	return t;
}

static void sink_clear(struct gro_test *t)
{
	for (unsigned i = 0; i < t->sink.n; i++)
		pkt_free(t->sink.out[i]);
	t->sink.n = 0;
}

/* Frees everything and checks that no pkt leaked. */
static void gro_test_free(struct gro_test *t)
{
	struct pkt_pool_stats st;
	sink_clear(t);
	gro_destroy(t->gro);
	pkt_pool_get_stats(t->pool, &st);
	assert_int_equal(st.in_use, 0);
	pkt_pool_destroy(t->pool);
	free(t);
}

static void stream_init(struct stream *s, uint8_t family, enum stream_mode mode, uint8_t outer_family)
{
	static const uint8_t tsopt[12] = { 1, 1, 8, 10, 0, 0, 0, 7, 0, 0, 0, 3 };
	memset(s, 0, sizeof(*s));
	fb_frame_init(&s->f, family, IP_PROTO_TCP);
	s->isn = 1000;
	s->f.seq = s->isn;
	s->f.ack = 5000;
	s->f.ip_id = 100;
	s->f.tcp_opts = tsopt;
	s->f.tcp_opts_len = sizeof(tsopt);
	s->mode = mode;
	fb_vxlan_init(&s->vx, mode == MODE_VXLAN_UDP ? 0 : outer_family, 99);
}

/* The current template as a parsed pkt (does not advance the stream). */
static struct pkt *stream_build(struct gro_test *t, const struct stream *s)
{
	struct fb_frame f = s->f;
	f.payload_seed = (uint8_t)(f.seq - s->isn);
	size_t len = fb_build(&f, inner_buf, sizeof(inner_buf), NULL);
	assert_true(len > 0);
	const uint8_t *bytes = inner_buf;
	if (s->mode != MODE_PLAIN) {
		len = fb_wrap_vxlan(&s->vx, inner_buf, len, frame_buf, sizeof(frame_buf));
		assert_true(len > 0);
		bytes = frame_buf;
	}
	struct pkt *pkt = pkt_alloc(t->pool);
	assert_non_null(pkt);
	assert_int_equal(pkt_set_data(pkt, bytes, (uint32_t)len), 0);
	pkt->in_port = s->in_port;

	struct flow_key key;
	enum drop_reason why;
	if (s->mode == MODE_VXLAN_UDP) {
		pkt->tunnel.family = 4;
		memcpy(pkt->tunnel.src, s->vx.src_ip, 4);
		memcpy(pkt->tunnel.dst, s->vx.dst_ip, 4);
		pkt->tunnel.src_port = s->vx.src_port;
		pkt->tunnel.dst_port = s->vx.dst_port;
		why = flow_extract_vxlan(pkt, &key);
	} else {
		why = flow_extract(pkt, VXLAN_DEFAULT_PORT, &key);
	}
	assert_int_equal(why, DROP_NONE);
	key_remember(t, pkt, &key);
	return pkt;
}

/* Next segment with `payload` bytes: seq and IP IDs advance. */
static struct pkt *stream_next(struct gro_test *t, struct stream *s, size_t payload)
{
	s->f.payload_len = payload;
	struct pkt *pkt = stream_build(t, s);
	s->f.seq += (uint32_t)payload;
	s->f.ip_id++;
	s->vx.ip_id++;
	return pkt;
}

static void feed(struct gro_test *t, struct stream *s, size_t payload, uint64_t now)
{
	receive(t, stream_next(t, s, payload), now);
}

static struct gro_stats stats(const struct gro_test *t)
{
	struct gro_stats st;
	gro_get_stats(t->gro, &st);
	return st;
}

static uint32_t out_seq(const struct pkt *pkt)
{
	struct tcp_hdr th;
	assert_int_equal(pkt_copy_out(pkt, pkt->l4_ofs, sizeof(th), &th), 0);
	return __builtin_bswap32(th.seq_be);
}

static uint8_t out_tcp_flags(const struct pkt *pkt)
{
	struct tcp_hdr th;
	assert_int_equal(pkt_copy_out(pkt, pkt->l4_ofs, sizeof(th), &th), 0);
	return th.flags;
}

static uint32_t out_payload_len(const struct pkt *pkt)
{
	return pkt_len(pkt) - pkt->payload_ofs;
}

/* Checks an emitted frame: plain (decapsulated) offsets, lengths in the IP
 * header, payload continuity from `first_seq`, and for merged frames the
 * offload metadata, and that completing the partial checksum as a NIC/TAP
 * would gives a valid TCP checksum. */
static void check_frame(const struct stream *s, struct pkt *pkt, uint32_t first_seq, uint32_t payload,
			uint32_t nr_segs, uint16_t mss)
{
	static uint8_t flat[FB_MAX_FRAME];
	uint32_t len = pkt_len(pkt);

	assert_int_equal(pkt->l2_ofs, 0);
	assert_int_equal(pkt->tunnel_ofs, PKT_OFS_NONE);
	assert_int_equal(pkt->inner_l2_ofs, PKT_OFS_NONE);
	assert_int_equal(out_seq(pkt), first_seq);
	assert_int_equal(out_payload_len(pkt), payload);
	assert_int_equal(pkt_copy_out(pkt, 0, len, flat), 0);
	/* Inner frame first: starts with the inner destination MAC. */
	assert_memory_equal(flat, s->f.dst_mac, 6);
	if (s->mode != MODE_PLAIN)
		assert_int_equal(pkt->tunnel.vni, s->vx.vni);

	const uint8_t *l3 = flat + pkt->l3_ofs;
	uint8_t family = l3[0] >> 4;
	if (family == 4) {
		assert_int_equal((l3[2] << 8 | l3[3]), len - pkt->l3_ofs);
		assert_true(csum_ipv4_hdr_ok(l3, IPV4_HDR_LEN));
	} else {
		assert_int_equal((l3[4] << 8 | l3[5]), len - pkt->l3_ofs - IPV6_HDR_LEN);
	}
	for (uint32_t i = 0; i < payload; i++) {
		if (flat[pkt->payload_ofs + i] != (uint8_t)(first_seq - s->isn + i)) {
			fb_hexdump("frame", flat, len);
			fail_msg("payload byte %u of frame is %u", i, flat[pkt->payload_ofs + i]);
		}
	}

	if (nr_segs == 1) {
		assert_int_equal(pkt->ol.gso_type, PKT_GSO_NONE);
		assert_false(pkt->ol.flags & PKT_OL_NEEDS_CSUM);
		assert_int_equal(pkt->nr_frags, 0);
		return;
	}
	assert_int_equal(pkt->ol.flags, PKT_OL_NEEDS_CSUM);
	assert_int_equal(pkt->ol.gso_type & ~PKT_GSO_ECN, family == 4 ? PKT_GSO_TCPV4 : PKT_GSO_TCPV6);
	assert_int_equal(pkt->ol.gso_size, mss);
	assert_int_equal(pkt->ol.csum_start, pkt->l4_ofs);
	assert_int_equal(pkt->ol.csum_offset, TCP_CSUM_OFFSET);
	assert_int_equal(pkt->ol.hdr_len, pkt->payload_ofs);
	/* No copy: every further segment is one frag. */
	assert_int_equal(pkt->nr_frags, nr_segs - 1);

	/* The field holds the pseudo-header sum... */
	uint32_t l4_len = len - pkt->l4_ofs;
	uint32_t pseudo = family == 4 ? csum_pseudo_ipv4(l3 + 12, l3 + 16, IP_PROTO_TCP, l4_len)
				      : csum_pseudo_ipv6(l3 + 8, l3 + 24, IP_PROTO_TCP, l4_len);
	uint16_t field;
	memcpy(&field, flat + pkt->l4_ofs + TCP_CSUM_OFFSET, 2);
	assert_int_equal(field, csum_fold_nocomplement(pseudo));
	/* ...and completing it yields a checksum the receiver accepts. */
	assert_int_equal(csum_complete_partial(pkt, pkt->ol.csum_start, pkt->ol.csum_offset), 0);
	assert_int_equal(csum_fold(csum_pkt(pkt, pkt->l4_ofs, l4_len, pseudo)), 0);
}

/* ---- merging, per encapsulation and IP version -------------------------- */

static void merge_four_segments(uint8_t family, enum stream_mode mode, uint8_t outer_family)
{
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, family, mode, outer_family);
	struct pkt *segs[4];
	for (int i = 0; i < 4; i++)
		segs[i] = stream_next(t, &s, MSS);
	receive_batch(t, segs, 4, 0);

	assert_int_equal(t->sink.n, 1);
	check_frame(&s, t->sink.out[0], s.isn, 4 * MSS, 4, MSS);
	struct gro_stats st = stats(t);
	assert_int_equal(st.segments_in, 4);
	assert_int_equal(st.frames_out, 1);
	assert_int_equal(st.merged_frames, 1);
	assert_int_equal(st.merged_segments, 4);
	assert_int_equal(st.segs_per_frame[2], 1); /* 4..7 */
	assert_int_equal(st.flushes[GRO_FLUSH_BATCH_END], 1);
	assert_int_equal(st.flows_held, 0);
	gro_test_free(t);
}

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

/* ---- flush-before rules ------------------------------------------------ */

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

/* ---- segment size rules ------------------------------------------------ */

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

/* ---- TCP flags --------------------------------------------------------- */

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

/* ---- frames that are never held ----------------------------------------- */

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

/* ---- bounds ------------------------------------------------------------ */

static void test_64k_cap(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_PLAIN, 0);
	s.f.tcp_opts = NULL;
	s.f.tcp_opts_len = 0;
	/* L3 = 40 + n * 1448 < 65536 holds up to n = 45. */
	for (int i = 0; i < 46; i++)
		feed(t, &s, MSS, 0);
	assert_int_equal(t->sink.n, 1);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_SIZE_CAP], 1);
	struct pkt *big = t->sink.out[0];
	check_frame(&s, big, s.isn, 45 * MSS, 45, MSS);
	assert_true(pkt_len(big) - ETH_HDR_LEN <= 65535);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 2);
	check_frame(&s, t->sink.out[1], s.isn + 45 * MSS, MSS, 1, MSS);
	gro_test_free(t);
}

static void test_configured_size_cap(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 10000, 0);
	struct stream s;
	stream_init(&s, 6, MODE_VXLAN_FRAME, 4);
	for (int i = 0; i < 20; i++)
		feed(t, &s, 1000, 0);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	for (unsigned i = 0; i < t->sink.n; i++)
		assert_true(pkt_len(t->sink.out[i]) - t->sink.out[i]->l3_ofs < 10000);
	/* 40 + 32 + 9 * 1000 < 10000: nine segments a frame. */
	assert_int_equal(out_payload_len(t->sink.out[0]), 9000);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_SIZE_CAP], 2);
	gro_test_free(t);
}

static void test_frags_full_ends_run(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_PLAIN, 0);
	for (int i = 0; i < PKT_MAX_FRAGS + 2; i++)
		feed(t, &s, 100, 0);
	assert_int_equal(t->sink.n, 1);
	check_frame(&s, t->sink.out[0], s.isn, (PKT_MAX_FRAGS + 1) * 100, PKT_MAX_FRAGS + 1, 100);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_FRAGS_FULL], 1);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	gro_test_free(t);
}

/* A full bucket completes its oldest run (the kernel's 8 per bucket); with
 * 8 flows there is one bucket, so "oldest of the table". */
static void test_table_full_flushes_oldest(void **state)
{
	(void)state;
	struct gro_test *t = test_new(8, 0, 0);
	struct stream s[9];
	for (int i = 0; i < 9; i++) {
		stream_init(&s[i], 4, MODE_PLAIN, 0);
		s[i].f.src_port = (uint16_t)(3000 + i);
		feed(t, &s[i], MSS, 0);
		feed(t, &s[i], MSS, 0);
	}
	assert_int_equal(t->sink.n, 1);
	struct pkt *out = t->sink.out[0];
	uint16_t sport;
	assert_int_equal(pkt_copy_out(out, out->l4_ofs, 2, &sport), 0);
	assert_int_equal(__builtin_bswap16(sport), 3000);
	check_frame(&s[0], out, s[0].isn, 2 * MSS, 2, MSS);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_TABLE_FULL], 1);
	assert_int_equal(stats(t).flows_held, 8);
	/* Flow 1 is now the oldest. */
	stream_init(&s[0], 4, MODE_PLAIN, 0);
	s[0].f.src_port = 4000;
	feed(t, &s[0], MSS, 0);
	assert_int_equal(t->sink.n, 2);
	out = t->sink.out[1];
	assert_int_equal(pkt_copy_out(out, out->l4_ofs, 2, &sport), 0);
	assert_int_equal(__builtin_bswap16(sport), 3001);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 10);
	gro_test_free(t);
}

/* ---- the hold timer (seeds/001_*) ----------------------------------------- */

static void test_timer_runs_from_first_segment_never_reset(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 1000);
	struct stream s;
	stream_init(&s, 4, MODE_VXLAN_FRAME, 4);
	feed(t, &s, MSS, 5000);
	assert_int_equal(gro_next_expiry_ns(t->gro), 6000);
	feed(t, &s, MSS, 5600);
	feed(t, &s, MSS, 5900);
	/* Later arrivals did not push the deadline back. */
	assert_int_equal(gro_next_expiry_ns(t->gro), 6000);
	gro_flush(t->gro, GRO_FLUSH_EXPIRED, 5999);
	assert_int_equal(t->sink.n, 0);
	gro_flush(t->gro, GRO_FLUSH_EXPIRED, 6000);
	assert_int_equal(t->sink.n, 1);
	check_frame(&s, t->sink.out[0], s.isn, 3 * MSS, 3, MSS);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_TIMEOUT], 1);
	assert_int_equal(gro_next_expiry_ns(t->gro), UINT64_MAX);
	gro_test_free(t);
}

/* seeds/001: the deadline is fixed at the first arrival.  The run stays
 * held across every expired-flush before it (as a daemon waking on its poll
 * timeout would call), segments arriving in between (and at the deadline
 * itself) join it without moving it, and the flush at the deadline
 * completes it as a timeout. */
static void test_timer_held_across_expired_flushes_until_deadline(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 1000);
	struct stream s;
	stream_init(&s, 4, MODE_VXLAN_UDP, 0);
	/* Time order: arrival 5000, flushes 5000 5100 5500, arrival 5600,
	 * flush 5800, arrival 5900, flush 5999, arrival 6000, flush 6000. */
	static const struct {
		uint64_t now;
		bool arrival;
	} events[] = { { 5000, true }, { 5000, false }, { 5100, false }, { 5500, false }, { 5600, true },
		       { 5800, false }, { 5900, true }, { 5999, false } };
	for (unsigned i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		if (events[i].arrival)
			feed(t, &s, MSS, events[i].now);
		else
			gro_flush(t->gro, GRO_FLUSH_EXPIRED, events[i].now);
		assert_int_equal(t->sink.n, 0);
		assert_int_equal(gro_next_expiry_ns(t->gro), 6000);
	}
	feed(t, &s, MSS, 6000); /* at the deadline: still joins */
	assert_int_equal(t->sink.n, 0);
	assert_int_equal(gro_next_expiry_ns(t->gro), 6000);
	gro_flush(t->gro, GRO_FLUSH_EXPIRED, 6000);
	assert_int_equal(t->sink.n, 1);
	check_frame(&s, t->sink.out[0], s.isn, 4 * MSS, 4, MSS);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_TIMEOUT], 1);
	assert_int_equal(stats(t).flows_held, 0);
	assert_int_equal(gro_next_expiry_ns(t->gro), UINT64_MAX);
	gro_test_free(t);
}

/* hold_ns 0 is taken literally: a run merges the segments of the poll that
 * started it (one now_ns) and the first expired-flush completes it.  (It
 * used to mean 50 us, and this flush emitted nothing.) */
static void test_timer_hold_zero_ends_with_the_poll(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 6, MODE_PLAIN, 0);
	for (int i = 0; i < 3; i++)
		feed(t, &s, MSS, 7000);
	assert_int_equal(t->sink.n, 0);
	assert_int_equal(gro_next_expiry_ns(t->gro), 7000);
	gro_flush(t->gro, GRO_FLUSH_EXPIRED, 7000);
	assert_int_equal(t->sink.n, 1);
	check_frame(&s, t->sink.out[0], s.isn, 3 * MSS, 3, MSS);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_TIMEOUT], 1);
	/* The next poll's segment starts a new run, due at its own arrival. */
	feed(t, &s, MSS, 7001);
	assert_int_equal(gro_next_expiry_ns(t->gro), 7001);
	gro_flush(t->gro, GRO_FLUSH_EXPIRED, 7001);
	assert_int_equal(t->sink.n, 2);
	gro_test_free(t);
}

/* The earliest deadline of all held runs, whichever flow started first. */
static void test_next_expiry_is_the_earliest_run(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 1000);
	struct stream a, b;
	stream_init(&a, 4, MODE_PLAIN, 0);
	stream_init(&b, 4, MODE_PLAIN, 0);
	b.f.src_port = 4001;
	assert_int_equal(gro_next_expiry_ns(t->gro), UINT64_MAX);
	feed(t, &b, MSS, 300);
	feed(t, &a, MSS, 100); /* the caller's clock may hand older stamps */
	feed(t, &b, MSS, 900);
	assert_int_equal(gro_next_expiry_ns(t->gro), 1100);
	gro_flush(t->gro, GRO_FLUSH_EXPIRED, 1100);
	assert_int_equal(t->sink.n, 1);
	assert_int_equal(gro_next_expiry_ns(t->gro), 1300);
	gro_flush(t->gro, GRO_FLUSH_ALL, 1200);
	assert_int_equal(gro_next_expiry_ns(t->gro), UINT64_MAX);
	gro_test_free(t);
}

/* A steady stream inside one long batch still leaves every hold_ns: the
 * segment that arrives after the deadline completes the run first. */
static void test_timer_expires_on_arrival(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 1000);
	struct stream s;
	stream_init(&s, 6, MODE_PLAIN, 0);
	uint64_t now = 0;
	for (int i = 0; i < 10; i++, now += 300)
		feed(t, &s, MSS, now);
	/* Arrivals at 0..2700: runs start at 0, 1200, 2400. */
	assert_int_equal(t->sink.n, 2);
	check_frame(&s, t->sink.out[0], s.isn, 4 * MSS, 4, MSS);
	check_frame(&s, t->sink.out[1], s.isn + 4 * MSS, 4 * MSS, 4, MSS);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_TIMEOUT], 2);
	gro_flush(t->gro, GRO_FLUSH_EXPIRED, now);
	assert_int_equal(t->sink.n, 2);
	gro_flush(t->gro, GRO_FLUSH_ALL, now);
	assert_int_equal(t->sink.n, 3);
	gro_test_free(t);
}

/* ---- decapsulation without GRO --------------------------------------------- */

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

/* ---- the flow key leaves with the frame -------------------------------------- */

/* The key the parser gives the stream's current segment, without GRO. */
static struct flow_key parsed_key_of(struct gro_test *t, const struct stream *s)
{
	struct flow_key key;
	struct pkt *pkt = stream_build(t, s);
	assert_non_null(key_take(t, pkt, &key));
	pkt_free(pkt);
	return key;
}

/* A merged frame leaves with its head segment's key: tunnel section (VNI,
 * outer addresses and ports) and the inner frame's L2..L4, and the PSH the
 * last segment merged into the header.  Before, the callback had no key and
 * the daemon parsed every frame again. */
static void merged_frame_keeps_head_key(uint8_t family, enum stream_mode mode, uint8_t outer_family)
{
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, family, mode, outer_family);
	s.in_port = 2;
	s.f.payload_len = MSS;
	struct flow_key want = parsed_key_of(t, &s);
	for (int i = 0; i < 3; i++)
		feed(t, &s, MSS, 0);
	s.f.tcp_flags = TCP_ACK | TCP_PSH;
	feed(t, &s, MSS, 0);

	assert_int_equal(t->sink.n, 1);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_FLAGS], 1);
	assert_true(t->sink.has_key[0]);
	const struct flow_key *got = &t->sink.keys[0];
	assert_int_equal(got->tcp_flags, TCP_ACK | TCP_PSH);
	want.tcp_flags |= TCP_PSH;
	assert_memory_equal(got, &want, FLOW_KEY_MATCH_SIZE);
	assert_memory_equal(&got->tcp_opts, &want.tcp_opts, sizeof(want.tcp_opts));
	assert_int_equal(got->in_port, 2);
	assert_int_equal(got->nw_family, family);
	assert_int_equal(got->tp_src, s.f.src_port);
	assert_int_equal(got->tun_family, mode == MODE_PLAIN ? 0 : (mode == MODE_VXLAN_UDP ? 4 : outer_family));
	assert_int_equal(got->tun_vni, mode == MODE_PLAIN ? 0 : 99);
	gro_test_free(t);
}

static void test_merged_frame_leaves_with_head_key(void **state)
{
	(void)state;
	merged_frame_keeps_head_key(4, MODE_PLAIN, 0);
	merged_frame_keeps_head_key(6, MODE_VXLAN_FRAME, 6);
	merged_frame_keeps_head_key(4, MODE_VXLAN_UDP, 0);
}

/* A frame passed through leaves with the key it came with, a run of one
 * with its own, a frame that came without a key without one; two flows
 * held at once each keep theirs (one slot, one key). */
static void test_unmerged_frames_keep_their_keys(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream a, b;
	stream_init(&a, 4, MODE_VXLAN_UDP, 0);
	stream_init(&b, 4, MODE_VXLAN_UDP, 0);
	b.f.src_port = 4001;
	a.f.payload_len = 0;
	struct flow_key ack_key = parsed_key_of(t, &a);
	feed(t, &a, 0, 0); /* pure ACK: passes */
	a.f.payload_len = MSS;
	b.f.payload_len = MSS;
	struct flow_key a_key = parsed_key_of(t, &a), b_key = parsed_key_of(t, &b);
	feed(t, &a, MSS, 0);
	feed(t, &b, MSS, 0);
	struct pkt *raw = stream_next(t, &a, MSS);
	struct flow_key unused;
	key_take(t, raw, &unused); /* as if never parsed */
	pkt_clear_offsets(raw);
	receive(t, raw, 0);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);

	assert_int_equal(t->sink.n, 4);
	assert_true(t->sink.has_key[0]);
	assert_memory_equal(&t->sink.keys[0], &ack_key, sizeof(ack_key));
	assert_false(t->sink.has_key[1]); /* the unparsed frame */
	for (unsigned i = 2; i < 4; i++) {
		assert_true(t->sink.has_key[i]);
		const struct flow_key *want = t->sink.keys[i].tp_src == 4001 ? &b_key : &a_key;
		assert_memory_equal(&t->sink.keys[i], want, sizeof(*want));
	}
	assert_int_not_equal(t->sink.keys[2].tp_src, t->sink.keys[3].tp_src);
	gro_test_free(t);
}

/* ---- API corners -------------------------------------------------------- */

static void test_create_rejects_bad_config_and_destroy_frees_held(void **state)
{
	(void)state;
	struct sink sink = { .n = 0 };
	const struct gro_config bad[] = {
		{ .emit = NULL },                                                   /* no emit */
		{ .max_size = 65537, .emit = collect, .emit_aux = &sink },          /* > 64 KB */
		{ .max_flows = GRO_MAX_FLOWS + 1, .emit = collect, .emit_aux = &sink },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* *out is cleared on failure, whatever it held before. */
		struct gro_table *out = (struct gro_table *)&sink;
		assert_int_equal(gro_create(&bad[i], &out), -EINVAL);
		assert_null(out);
	}
	/* The limits themselves are accepted. */
	struct gro_config at_limits = {
		.max_flows = GRO_MAX_FLOWS, .max_size = GRO_DEFAULT_MAX_SIZE, .emit = collect, .emit_aux = &sink,
	};
	struct gro_table *ok = NULL;
	assert_int_equal(gro_create(&at_limits, &ok), 0);
	assert_non_null(ok);
	gro_destroy(ok);
	gro_destroy(NULL);

	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, 4, MODE_PLAIN, 0);
	feed(t, &s, MSS, 0);
	feed(t, &s, MSS, 0);
	assert_int_equal(stats(t).flows_held, 1);
	gro_test_free(t); /* checks the held pkts went back to the pool */
}

static void test_reason_names(void **state)
{
	(void)state;
	assert_string_equal(gro_flush_reason_name(GRO_FLUSH_BATCH_END), "batch_end");
	assert_string_equal(gro_flush_reason_name(GRO_FLUSH_SEQ_GAP), "not_mergeable_seq_gap");
	assert_string_equal(gro_flush_reason_name(GRO_FLUSH_REASON_COUNT), "invalid");
	assert_string_equal(gro_pass_reason_name(GRO_PASS_CSUM_BAD), "csum_bad");
	assert_string_equal(gro_pass_reason_name(GRO_PASS_REASON_COUNT), "invalid");
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

/* gro_mark_big_tcp(): a whole big TCP segment gets GRO's metadata, and
 * finishing its seed gives back the checksum it came with. */
static struct pkt *big_tcp(struct gro_test *t, uint8_t family, size_t payload, uint16_t flags,
			   struct fb_layout *lay)
{
	struct fb_frame f;
	fb_frame_init(&f, family, IP_PROTO_TCP);
	f.payload_len = payload;
	f.tcp_flags = flags;
	size_t len = fb_build(&f, inner_buf, sizeof(inner_buf), lay);
	assert_true(len > 0);
	struct pkt *pkt = pkt_alloc(t->pool);
	assert_non_null(pkt);
	assert_int_equal(pkt_set_data(pkt, inner_buf, (uint32_t)len), 0);
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
	assert_memory_equal(pkt->data, inner_buf, lay.len < pkt->size ? lay.len : pkt->size);
	pkt_free(pkt);
	pkt = big_tcp(t, 6, 20000, TCP_ACK, &lay);
	pkt->ol.gso_type = PKT_GSO_TCPV6;
	assert_false(gro_mark_big_tcp(pkt, 1450));
	pkt_free(pkt);
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.payload_len = 20000;
	size_t len = fb_build(&f, inner_buf, sizeof(inner_buf), &lay);
	pkt = pkt_alloc(t->pool);
	assert_int_equal(pkt_set_data(pkt, inner_buf, (uint32_t)len), 0);
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
		cmocka_unit_test(test_merge_plain_ipv4),
		cmocka_unit_test(test_merge_plain_ipv6),
		cmocka_unit_test(test_merge_vxlan_frame_ipv4_in_ipv4),
		cmocka_unit_test(test_merge_vxlan_frame_ipv6_in_ipv6),
		cmocka_unit_test(test_merge_vxlan_frame_ipv4_in_ipv6),
		cmocka_unit_test(test_merge_vxlan_udp_payloads),
		cmocka_unit_test(test_merge_views_from_the_socket),
		cmocka_unit_test(test_vxlan_zero_and_nonzero_outer_csum),
		cmocka_unit_test(test_different_vni_or_inner_mac_are_different_flows),
		cmocka_unit_test(test_in_port_and_tunnel_metadata_separate_flows),
		cmocka_unit_test(test_vlan_tagged_inner_frames_merge_per_tag),
		cmocka_unit_test(test_data_valid_input_is_trusted),
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
		cmocka_unit_test(test_bad_tcp_csum_passes_in_order_and_is_counted),
		cmocka_unit_test(test_tcp_csum_check_every_length_and_position),
		cmocka_unit_test(test_bad_ip_header_csum_passes),
		cmocka_unit_test(test_ip_options_fragments_ext_headers_pass),
		cmocka_unit_test(test_non_tcp_passes_decapsulated),
		cmocka_unit_test(test_unparsed_frame_untouched),
		cmocka_unit_test(test_offloaded_input_passes),
		cmocka_unit_test(test_64k_cap),
		cmocka_unit_test(test_configured_size_cap),
		cmocka_unit_test(test_frags_full_ends_run),
		cmocka_unit_test(test_table_full_flushes_oldest),
		cmocka_unit_test(test_timer_runs_from_first_segment_never_reset),
		cmocka_unit_test(test_timer_expires_on_arrival),
		cmocka_unit_test(test_timer_held_across_expired_flushes_until_deadline),
		cmocka_unit_test(test_timer_hold_zero_ends_with_the_poll),
		cmocka_unit_test(test_next_expiry_is_the_earliest_run),
		cmocka_unit_test(test_decap_passthrough_matches_gro_output),
		cmocka_unit_test(test_decap_passthrough_leaves_plain_frames),
		cmocka_unit_test(test_merged_frame_leaves_with_head_key),
		cmocka_unit_test(test_unmerged_frames_keep_their_keys),
		cmocka_unit_test(test_create_rejects_bad_config_and_destroy_frees_held),
		cmocka_unit_test(test_reason_names),
		cmocka_unit_test(test_interleaved_flows),
		cmocka_unit_test(test_mark_big_tcp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
