/* Shared fixture for the GRO unit tests (test_gro_*.c): a table whose
 * emit callback collects every frame and the key it left with, TCP streams
 * built with tests/unit/support/frame_builder.h and parsed with
 * flow_extract() as the datapath does, and check_frame(), which checks an
 * emitted frame against the stream it came from.
 *
 * Why a header of static inline functions: the Makefile links every
 * non-test_*.c file under tests/unit into every unit test, and this fixture
 * drives gro.c, which most tests have no business linking.  Each test file
 * gets its own copy (and its own static buffers); cmocka and frame_builder
 * are linked into every unit test anyway.  Test code only.
 *
 * The parsed key of a built pkt is remembered by the fixture and handed to
 * GRO with the pkt (receive(), receive_batch()), as the datapath hands its
 * parse; gro_test_free() checks that no pkt leaked. */
#ifndef VX_TESTS_GRO_TEST_UTIL_H
#define VX_TESTS_GRO_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "frame_builder.h"
#include "offload/gro.h"
#include "packet/csum.h"
#include "packet/hdr.h"
#include "packet/pkt.h"
#include "parse/flow_extract.h"

/* MSS: a 1500-byte MTU's TCP payload with the timestamp option. */
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

static inline void collect(void *aux, struct pkt *pkt, const struct flow_key *key)
{
	struct sink *sink = aux;
	assert_true(sink->n < SINK_MAX);
	sink->has_key[sink->n] = key != NULL;
	if (key)
		sink->keys[sink->n] = *key;
	sink->out[sink->n++] = pkt;
}

static inline void key_remember(struct gro_test *t, struct pkt *pkt, const struct flow_key *key)
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
static inline const struct flow_key *key_take(struct gro_test *t, const struct pkt *pkt, struct flow_key *out)
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

static inline void receive(struct gro_test *t, struct pkt *pkt, uint64_t now)
{
	struct flow_key key;
	gro_receive(t->gro, pkt, key_take(t, pkt, &key), now);
}

static inline void receive_batch(struct gro_test *t, struct pkt **pkts, unsigned n, uint64_t now)
{
	static struct flow_key keys[16];
	assert_true(n <= 16);
	for (unsigned i = 0; i < n; i++)
		assert_non_null(key_take(t, pkts[i], &keys[i]));
	gro_receive_batch(t->gro, pkts, keys, n, now);
}

static inline struct gro_test *test_new(uint32_t max_flows, uint32_t max_size, uint64_t hold_ns)
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

static inline void sink_clear(struct gro_test *t)
{
	for (unsigned i = 0; i < t->sink.n; i++)
		pkt_free(t->sink.out[i]);
	t->sink.n = 0;
}

/* Frees everything and checks that no pkt leaked. */
static inline void gro_test_free(struct gro_test *t)
{
	struct pkt_pool_stats st;
	sink_clear(t);
	gro_destroy(t->gro);
	pkt_pool_get_stats(t->pool, &st);
	assert_int_equal(st.in_use, 0);
	pkt_pool_destroy(t->pool);
	free(t);
}

static inline void stream_init(struct stream *s, uint8_t family, enum stream_mode mode, uint8_t outer_family)
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
static inline struct pkt *stream_build(struct gro_test *t, const struct stream *s)
{
	static uint8_t inner_buf[FB_MAX_FRAME];
	static uint8_t frame_buf[FB_MAX_FRAME + 128];
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
static inline struct pkt *stream_next(struct gro_test *t, struct stream *s, size_t payload)
{
	s->f.payload_len = payload;
	struct pkt *pkt = stream_build(t, s);
	s->f.seq += (uint32_t)payload;
	s->f.ip_id++;
	s->vx.ip_id++;
	return pkt;
}

static inline void feed(struct gro_test *t, struct stream *s, size_t payload, uint64_t now)
{
	receive(t, stream_next(t, s, payload), now);
}

static inline struct gro_stats stats(const struct gro_test *t)
{
	struct gro_stats st;
	gro_get_stats(t->gro, &st);
	return st;
}

static inline uint32_t out_seq(const struct pkt *pkt)
{
	struct tcp_hdr th;
	assert_int_equal(pkt_copy_out(pkt, pkt->l4_ofs, sizeof(th), &th), 0);
	return __builtin_bswap32(th.seq_be);
}

static inline uint8_t out_tcp_flags(const struct pkt *pkt)
{
	struct tcp_hdr th;
	assert_int_equal(pkt_copy_out(pkt, pkt->l4_ofs, sizeof(th), &th), 0);
	return th.flags;
}

static inline uint32_t out_payload_len(const struct pkt *pkt)
{
	return pkt_len(pkt) - pkt->payload_ofs;
}

/* Checks an emitted frame: plain (decapsulated) offsets, lengths in the IP
 * header, payload continuity from `first_seq`, and for merged frames the
 * offload metadata, and that completing the partial checksum as a NIC/TAP
 * would gives a valid TCP checksum. */
static inline void check_frame(const struct stream *s, struct pkt *pkt, uint32_t first_seq, uint32_t payload,
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

/* Four full-MSS segments of one stream in one batch leave as one merged
 * frame, and the stats count it so: the base case of every encapsulation
 * (test_gro_merge.c plain, test_gro_vxlan.c tunnelled). */
static inline void merge_four_segments(uint8_t family, enum stream_mode mode, uint8_t outer_family)
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

#endif
