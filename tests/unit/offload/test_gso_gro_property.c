/* Property test: GSO and GRO are inverses (gro-gso-rules.md: "GRO output
 * must be re-segmentable by GSO into exactly the original frames", here the
 * other way round).
 *
 * Thousands of random TSO frames (fixed seed): IPv4/IPv6, VLAN or not, TCP
 * options, payload and MSS sizes, IP ID near the wrap, ACK with any of
 * PSH/FIN/CWR/ECE, sent plain or through VXLAN (full frames, or UDP payloads
 * as a socket delivers them).  Each goes through gso_ref_train_build(), the
 * parser, and gro_receive_batch().  Then:
 *  - a frame of at most PKT_MAX_FRAGS + 1 segments comes back as exactly
 *    one frame, byte for byte the original (GRO's pseudo-header checksum
 *    field, fresh IPv4 checksum and first IP ID included), with gso_type,
 *    gso_size = MSS, ECN iff CWR, and it passes gso_tap_frame_ok();
 *  - a one-segment frame comes back unchanged except its completed checksum;
 *  - a frame of more segments, or an IPv6 one longer than GRO's 64 KB L3
 *    cap, comes back as several in-order frames whose
 *    payloads concatenate to the original's, each fit for a TAP. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "offload/gro.h"
#include "offload/gso.h"
#include "offload/vxlan_encap.h"
#include "parse/flow_extract.h"
#include "gso_test_util.h"
#include "pool_fixture.h"

enum { PROPERTY_CASES = 4000, MAX_OUT = 64 };

static uint8_t train_buf[4 * 65536];
static uint8_t flat[PKT_BUF_SIZE];

struct collector {
	struct pkt *out[MAX_OUT];
	unsigned n;
};

static void collect(void *aux, struct pkt *pkt, const struct flow_key *key)
{
	(void)key;
	struct collector *c = aux;
	if (c->n == MAX_OUT)
		fail_msg("GRO emitted more than %d frames", MAX_OUT);
	c->out[c->n++] = pkt;
}

PKT_POOL_FIXTURE(2 * GSO_MAX_SEGS + 16)

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t bound)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return bound ? (uint32_t)((rng_state >> 11) % bound) : 0;
}

enum path { PATH_PLAIN, PATH_VXLAN_FRAME, PATH_VXLAN_UDP, PATH_COUNT };

static void random_spec(struct tso_spec *s, int *path)
{
	memset(s, 0, sizeof(*s));
	s->version = rnd(2) ? 4 : 6;
	s->vlan = rnd(4) == 0;
	s->tcp_opt_len = (uint8_t)(rnd(4) == 0 ? 4 * rnd(11) : (rnd(2) ? 12 : 0));
	s->ip_id = rnd(3) == 0 ? (uint16_t)(0xffff - rnd(80)) : (uint16_t)rnd(65536);
	s->seq = rnd(3) == 0 ? 0xffffffffu - rnd(100000) : (uint32_t)rnd(0x7fffffff) * 2;
	s->tos = (uint8_t)(rnd(4) == 0 ? 0x02 : 0);
	s->src_port = (uint16_t)(1024 + rnd(60000));
	s->tcp_flags = TCP_ACK;
	if (rnd(3) == 0)
		s->tcp_flags |= TCP_PSH;
	if (rnd(6) == 0)
		s->tcp_flags |= TCP_FIN;
	if (rnd(6) == 0)
		s->tcp_flags |= TCP_ECE;
	if (rnd(6) == 0)
		s->tcp_flags |= TCP_CWR;
	s->ecn = s->tcp_flags & TCP_CWR;

	/* MSS: typical underlay values most of the time, anything sometimes. */
	static const uint16_t common[] = { 1398, 1448, 1378, 1428, 536, 8948 };
	s->mss = rnd(2) ? common[rnd(6)] : (uint16_t)(1 + rnd(3000));
	uint32_t hdrs = (s->version == 4 ? IPV4_HDR_LEN : 0) + TCP_HDR_LEN + s->tcp_opt_len;
	uint32_t max_payload = 65535 - hdrs;
	/* Mostly within one GRO frame (<= 65 segments), sometimes beyond. */
	uint32_t cap = rnd(8) == 0 ? s->mss * 200u : s->mss * 65u;
	if (cap > max_payload)
		cap = max_payload;
	switch (rnd(5)) {
	case 0:
		s->payload_len = 1 + rnd(s->mss); /* tiny */
		break;
	case 1:
		s->payload_len = cap; /* as big as allowed */
		break;
	default:
		s->payload_len = 1 + rnd(cap);
		break;
	}
	if (s->payload_len > max_payload)
		s->payload_len = max_payload;
	if ((uint64_t)(s->payload_len + s->mss - 1) / s->mss > GSO_MAX_SEGS)
		s->payload_len = (uint32_t)s->mss * GSO_MAX_SEGS;
	*path = (int)rnd(PATH_COUNT);
	/* A VXLAN datagram must fit an IP datagram. */
	if (*path != PATH_PLAIN && s->mss > 9000)
		*path = PATH_PLAIN;
}

static const struct vxlan_encap encap = {
	.family = 4, .vni = 0x123456,
	.src_mac = { 2, 0, 0, 0, 9, 1 }, .dst_mac = { 2, 0, 0, 0, 9, 2 },
	.src_ip = { 203, 0, 113, 1 }, .dst_ip = { 203, 0, 113, 2 },
};

/* Turns train segment i into a parsed pkt, as the receiving port would. */
static struct pkt *receive_segment(const struct gso_train *t, uint32_t i, int path, struct flow_key *key)
{
	struct pkt *p = pkt_alloc(pool);
	assert_non_null(p);
	uint32_t len = i + 1 < t->nr_segs ? t->stride : t->last_size;
	assert_int_equal(pkt_set_data(p, t->buf + (size_t)i * t->stride, len), 0);
	enum drop_reason why;
	if (path == PATH_VXLAN_UDP) {
		p->tunnel.family = 4;
		memcpy(p->tunnel.src, encap.src_ip, 4);
		memcpy(p->tunnel.dst, encap.dst_ip, 4);
		p->tunnel.src_port = 50000;
		p->tunnel.dst_port = VXLAN_DEFAULT_PORT;
		why = flow_extract_vxlan(p, key);
	} else {
		why = flow_extract(p, path == PATH_VXLAN_FRAME ? VXLAN_DEFAULT_PORT : 0, key);
	}
	if (why != DROP_NONE)
		fail_msg("segment %u does not parse: %s", i, drop_reason_name(why));
	return p;
}

static void check_case(const struct tso_spec *s, int path, uint32_t case_no)
{
	struct pkt *in = pkt_alloc(pool);
	tso_build(in, s);
	uint32_t orig_len = in->size, hdr_len = in->payload_ofs;
	uint32_t l3_ofs = in->l3_ofs, l4_ofs = in->l4_ofs;
	uint8_t *orig = malloc(orig_len);
	memcpy(orig, in->data, orig_len);

	static const enum gso_train_shape shapes[] = { GSO_TRAIN_PLAIN, GSO_TRAIN_VXLAN_FRAME, GSO_TRAIN_VXLAN_UDP };
	struct gso_train t = { .buf = train_buf, .cap = sizeof(train_buf) };
	uint16_t outer_id = (uint16_t)rnd(65536);
	int err = gso_ref_train_build(in, shapes[path], &encap, &outer_id, 0, &t);
	if (err)
		fail_msg("case %u: gso_ref_train_build: %d", case_no, err);
	pkt_free(in);

	struct collector col = { .n = 0 };
	struct gro_config cfg = { .emit = collect, .emit_aux = &col };
	struct gro_table *gro;
	assert_int_equal(gro_create(&cfg, &gro), 0);
	static struct pkt *batch[GSO_MAX_SEGS];
	static struct flow_key keys[GSO_MAX_SEGS];
	for (uint32_t i = 0; i < t.nr_segs; i++)
		batch[i] = receive_segment(&t, i, path, &keys[i]);
	gro_receive_batch(gro, batch, keys, t.nr_segs, 1000);

	/* GRO stops a run at PKT_MAX_FRAGS frags or at an L3 length of
	 * GRO_DEFAULT_MAX_SIZE (gro_max_size), which a full IPv6 TSO frame
	 * (payload length 65535, L3 65575) exceeds. */
	uint32_t max_per_frame = PKT_MAX_FRAGS + 1;
	bool fits_one = t.nr_segs <= max_per_frame && orig_len - l3_ofs < GRO_DEFAULT_MAX_SIZE;
	if (t.nr_segs == 1) {
		/* One segment: unchanged but for the completed checksum. */
		assert_int_equal(col.n, 1);
		struct pkt *p = col.out[0];
		assert_int_equal(pkt_len(p), orig_len);
		assert_int_equal(pkt_copy_out(p, 0, orig_len, flat), 0);
		uint32_t csum_at = l4_ofs + TCP_CSUM_OFFSET;
		assert_memory_equal(flat, orig, csum_at);
		assert_memory_equal(flat + csum_at + 2, orig + csum_at + 2, orig_len - csum_at - 2);
		assert_true(csum_ref_l4_ok(s->version, flat + l3_ofs, flat + l4_ofs,
					     orig_len - l4_ofs, IP_PROTO_TCP));
		assert_int_equal(p->ol.gso_type, PKT_GSO_NONE);
		assert_true(gso_tap_frame_ok(p));
	} else if (fits_one) {
		if (col.n != 1)
			fail_msg("case %u: %u segments (mss %u, payload %u, path %d, v%d) came back as %u frames",
				 case_no, t.nr_segs, s->mss, s->payload_len, path, s->version, col.n);
		struct pkt *p = col.out[0];
		assert_int_equal(pkt_len(p), orig_len);
		assert_int_equal(pkt_copy_out(p, 0, orig_len, flat), 0);
		for (uint32_t k = 0; k < orig_len; k++)
			if (flat[k] != orig[k])
				fail_msg("case %u: byte %u differs: got %02x want %02x", case_no, k, flat[k], orig[k]);
		uint8_t want_type = (s->version == 4 ? PKT_GSO_TCPV4 : PKT_GSO_TCPV6) |
				    ((s->tcp_flags & TCP_CWR) ? PKT_GSO_ECN : 0);
		assert_int_equal(p->ol.gso_type, want_type);
		assert_int_equal(p->ol.gso_size, s->mss);
		assert_int_equal(p->ol.flags & PKT_OL_NEEDS_CSUM, PKT_OL_NEEDS_CSUM);
		assert_int_equal(p->ol.csum_start, l4_ofs);
		assert_int_equal(p->ol.csum_offset, TCP_CSUM_OFFSET);
		assert_int_equal(p->ol.hdr_len, hdr_len);
		assert_true(gso_tap_frame_ok(p));
	} else {
		/* More than one GRO frame holds: in order, payloads concatenate. */
		assert_true(col.n >= 2);
		uint32_t payload_seen = 0;
		for (unsigned k = 0; k < col.n; k++) {
			struct pkt *p = col.out[k];
			uint32_t len = pkt_len(p);
			assert_int_equal(pkt_copy_out(p, 0, len, flat), 0);
			assert_int_equal(len > hdr_len, true);
			assert_int_equal(load_be32(flat + l4_ofs + 4), s->seq + payload_seen);
			for (uint32_t b = hdr_len; b < len; b++)
				if (flat[b] != payload_byte(payload_seen + b - hdr_len))
					fail_msg("case %u: frame %u payload byte %u differs", case_no, k, b);
			payload_seen += len - hdr_len;
			assert_true(gso_tap_frame_ok(p));
		}
		assert_int_equal(payload_seen, s->payload_len);
	}
	for (unsigned k = 0; k < col.n; k++)
		pkt_free(col.out[k]);
	gro_destroy(gro);
	free(orig);
}

static void test_gso_then_gro_gives_back_the_frame(void **state)
{
	(void)state;
	uint32_t by_path[PATH_COUNT] = { 0 }, big = 0, tiny = 0;
	for (uint32_t c = 0; c < PROPERTY_CASES; c++) {
		struct tso_spec s;
		int path;
		random_spec(&s, &path);
		uint32_t segs = s.payload_len <= s.mss ? 1 : (s.payload_len + s.mss - 1) / s.mss;
		by_path[path]++;
		big += segs > PKT_MAX_FRAGS + 1;
		tiny += segs == 1;
		check_case(&s, path, c);
	}
	/* The generator really covers every branch. */
	for (int p = 0; p < PATH_COUNT; p++)
		assert_true(by_path[p] > PROPERTY_CASES / 5);
	assert_true(big > 50 && tiny > 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gso_then_gro_gives_back_the_frame),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
