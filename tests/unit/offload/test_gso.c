/* Unit tests for src/offload/gso.c: per-segment IP/TCP rules for both IP
 * versions, ECN/CWR, FIN/PSH placement, short last segment, tiny GSO, IP ID
 * wrap, full and partial checksums (checked with a naive checksum), frames
 * with frags, UDP_L4, trains and their cutting into UDP_SEGMENT sends, the
 * TAP write checker.  Frames come from gso_test_util.h, independent of the
 * code under test. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "offload/gso.h"
#include "gso_test_util.h"
#include "pool_fixture.h"

static uint8_t train_buf[2 * 65536 + 16384];

PKT_POOL_FIXTURE(GSO_MAX_SEGS + 8)

static uint32_t spec_l2_len(const struct tso_spec *s)
{
	return ETH_HDR_LEN + (s->vlan ? VLAN_HDR_LEN : 0);
}

static uint32_t spec_hdr_len(const struct tso_spec *s)
{
	uint32_t l4 = (s->proto == IP_PROTO_UDP) ? UDP_HDR_LEN : TCP_HDR_LEN + s->tcp_opt_len;
	return spec_l2_len(s) + (s->version == 4 ? IPV4_HDR_LEN : IPV6_HDR_LEN) + l4;
}

static uint32_t expected_segs(const struct tso_spec *s)
{
	if (s->payload_len <= s->mss)
		return 1;
	return (s->payload_len + s->mss - 1) / s->mss;
}

/* Checks segment i of n against every rule in gso.h, using only the spec
 * and the original frame `orig` (whose headers must be reproduced). */
static void check_segment(const struct tso_spec *s, const uint8_t *orig, const uint8_t *seg,
			  uint32_t seg_len, uint32_t i, uint32_t n, bool partial)
{
	uint8_t proto = s->proto ? s->proto : IP_PROTO_TCP;
	uint32_t l2 = spec_l2_len(s), hdr = spec_hdr_len(s);
	uint32_t l4_ofs = l2 + (s->version == 4 ? IPV4_HDR_LEN : IPV6_HDR_LEN);
	uint32_t want_payload = s->payload_len - i * s->mss;
	if (want_payload > s->mss)
		want_payload = s->mss;
	assert_int_equal(seg_len, hdr + want_payload);

	/* L2 unchanged. */
	assert_memory_equal(seg, orig, l2);
	const uint8_t *l3 = seg + l2, *l4 = seg + l4_ofs;
	const uint8_t *ol3 = orig + l2, *ol4 = orig + l4_ofs;
	if (s->version == 4) {
		assert_int_equal(load_be16(l3 + 2), seg_len - l2);
		assert_int_equal(load_be16(l3 + 4), (uint16_t)(s->ip_id + i));
		assert_true(csum_ref_ipv4_hdr_ok(l3));
		/* All else as in the original: ver/ihl, tos, flags, ttl, proto, addrs. */
		assert_memory_equal(l3, ol3, 2);
		assert_memory_equal(l3 + 6, ol3 + 6, 4);
		assert_memory_equal(l3 + 12, ol3 + 12, 8);
	} else {
		assert_int_equal(load_be16(l3 + 4), seg_len - l4_ofs);
		assert_memory_equal(l3, ol3, 4);
		assert_memory_equal(l3 + 6, ol3 + 6, 34);
	}

	uint32_t l4_len = seg_len - l4_ofs;
	if (proto == IP_PROTO_TCP) {
		assert_memory_equal(l4, ol4, 4); /* ports */
		assert_int_equal(load_be32(l4 + 4), s->seq + i * s->mss);
		assert_memory_equal(l4 + 8, ol4 + 8, 5); /* ack, doff */
		uint8_t want = s->tcp_flags ? s->tcp_flags : TCP_ACK;
		if (i > 0)
			want &= (uint8_t)~TCP_CWR;
		if (i + 1 < n)
			want &= (uint8_t)~(TCP_FIN | TCP_PSH);
		assert_int_equal(l4[13], want);
		assert_memory_equal(l4 + 14, ol4 + 14, 2);                       /* window */
		assert_memory_equal(l4 + 18, ol4 + 18, 2 + s->tcp_opt_len);      /* urg, options */
	} else {
		assert_memory_equal(l4, ol4, 4);
		assert_int_equal(load_be16(l4 + 4), l4_len);
	}

	for (uint32_t k = 0; k < want_payload; k++)
		if (seg[hdr + k] != payload_byte(i * s->mss + k))
			fail_msg("segment %u payload byte %u differs", i, k);

	uint16_t csum_ofs = proto == IP_PROTO_TCP ? TCP_CSUM_OFFSET : UDP_CSUM_OFFSET;
	if (partial) {
		uint16_t want = csum_ref_fold(csum_ref_pseudo_l3(s->version, l3, proto, l4_len));
		assert_int_equal(load_be16(l4 + csum_ofs), want);
	} else {
		assert_true(csum_ref_l4_ok(s->version, l3, l4, l4_len, proto));
		if (proto == IP_PROTO_UDP)
			assert_int_not_equal(load_be16(l4 + csum_ofs), 0);
	}
}

/* Runs gso_ref_segment() over the spec and checks every segment. */
static void segment_and_check(const struct tso_spec *s, unsigned flags)
{
	struct pkt *in = pkt_alloc(pool);
	tso_build(in, s);
	uint8_t *orig = malloc(in->size);
	memcpy(orig, in->data, in->size);

	struct pkt *segs[GSO_MAX_SEGS];
	int n = gso_ref_segment(in, flags, pool, segs, GSO_MAX_SEGS);
	assert_int_equal(n, expected_segs(s));
	assert_memory_equal(in->data, orig, in->size); /* input untouched */
	bool partial = flags & GSO_CSUM_PARTIAL;
	for (int i = 0; i < n; i++) {
		check_segment(s, orig, segs[i]->data, segs[i]->size, (uint32_t)i, (uint32_t)n, partial);
		assert_int_equal(segs[i]->l3_ofs, in->l3_ofs);
		assert_int_equal(segs[i]->l4_ofs, in->l4_ofs);
		assert_int_equal(segs[i]->payload_ofs, spec_hdr_len(s));
		assert_int_equal(segs[i]->ol.gso_type, PKT_GSO_NONE);
		if (partial) {
			assert_int_equal(segs[i]->ol.flags, PKT_OL_NEEDS_CSUM);
			assert_int_equal(segs[i]->ol.csum_start, in->l4_ofs);
		} else {
			assert_int_equal(segs[i]->ol.flags, 0);
		}
		pkt_free(segs[i]);
	}
	free(orig);
	pkt_free(in);
}

static void test_tcpv4_short_last_segment(void **state)
{
	(void)state;
	struct tso_spec s = { .version = 4, .payload_len = 3 * 1448 + 100, .mss = 1448,
			      .ip_id = 1000, .seq = 0xfffff000, .tcp_flags = TCP_ACK | TCP_PSH | TCP_FIN };
	segment_and_check(&s, 0);
}

static void test_tcpv6_short_last_segment(void **state)
{
	(void)state;
	struct tso_spec s = { .version = 6, .payload_len = 5 * 1428 + 1, .mss = 1428,
			      .seq = 77, .tcp_flags = TCP_ACK | TCP_PSH };
	segment_and_check(&s, 0);
}

static void test_full_64k_frame_both_versions(void **state)
{
	(void)state;
	struct tso_spec v4 = { .version = 4, .payload_len = 65535 - 20 - 32, .mss = 1398,
			       .tcp_opt_len = 12, .ip_id = 5, .seq = 1 };
	segment_and_check(&v4, 0);
	struct tso_spec v6 = { .version = 6, .payload_len = 65535 - 32, .mss = 1378,
			       .tcp_opt_len = 12, .seq = 9 };
	segment_and_check(&v6, 0);
}

static void test_exact_multiple_has_equal_segments(void **state)
{
	(void)state;
	struct tso_spec s = { .version = 4, .payload_len = 4 * 1000, .mss = 1000,
			      .tcp_flags = TCP_ACK | TCP_FIN };
	segment_and_check(&s, 0);
}

static void test_ecn_cwr_only_on_first(void **state)
{
	(void)state;
	for (int v = 4; v <= 6; v += 2) {
		struct tso_spec s = { .version = v, .payload_len = 4000, .mss = 1200, .ecn = true,
				      .tos = 0x02, .tcp_flags = TCP_ACK | TCP_CWR | TCP_ECE | TCP_PSH };
		segment_and_check(&s, 0); /* check_segment: CWR on 0, ECE on all, PSH on last */
	}
}

static void test_tiny_gso_is_one_segment(void **state)
{
	(void)state;
	struct tso_spec s = { .version = 4, .payload_len = 500, .mss = 1448, .ip_id = 7,
			      .tcp_flags = TCP_ACK | TCP_PSH | TCP_FIN | TCP_CWR };
	segment_and_check(&s, 0);
	s.payload_len = 1448; /* exactly one MSS */
	segment_and_check(&s, 0);
	s.payload_len = 0;    /* headers only */
	segment_and_check(&s, 0);
	s.version = 6;
	s.payload_len = 1;
	segment_and_check(&s, 0);
}

static void test_ip_id_wraps(void **state)
{
	(void)state;
	struct tso_spec s = { .version = 4, .payload_len = 4 * 100, .mss = 100, .ip_id = 0xfffe };
	segment_and_check(&s, 0); /* fffe, ffff, 0000, 0001 */
}

static void test_partial_checksum_flag(void **state)
{
	(void)state;
	struct tso_spec v4 = { .version = 4, .payload_len = 3001, .mss = 1000, .tcp_flags = TCP_ACK | TCP_PSH };
	segment_and_check(&v4, GSO_CSUM_PARTIAL);
	struct tso_spec v6 = { .version = 6, .payload_len = 3001, .mss = 1000 };
	segment_and_check(&v6, GSO_CSUM_PARTIAL);
}

static void test_options_and_vlan_are_copied(void **state)
{
	(void)state;
	struct tso_spec s = { .version = 4, .payload_len = 9000, .mss = 1436, .tcp_opt_len = 40,
			      .vlan = true, .ip_id = 300 };
	segment_and_check(&s, 0);
	s.version = 6;
	s.tcp_opt_len = 12;
	segment_and_check(&s, GSO_CSUM_PARTIAL);
}

static void test_udp_l4_segmentation(void **state)
{
	(void)state;
	struct tso_spec s = { .version = 4, .proto = IP_PROTO_UDP, .payload_len = 4 * 1200 + 33,
			      .mss = 1200, .ip_id = 0xffff };
	segment_and_check(&s, 0);
	s.version = 6;
	segment_and_check(&s, 0);
}

static void test_sender_hdr_len_is_ignored(void **state)
{
	(void)state;
	struct tso_spec s = { .version = 4, .payload_len = 3000, .mss = 1000, .tcp_opt_len = 12 };
	struct pkt *in = pkt_alloc(pool);
	tso_build(in, &s);
	uint16_t lies[] = { 0, 1, 54, 66 + 500, 60000 };
	for (size_t k = 0; k < sizeof(lies) / sizeof(lies[0]); k++) {
		in->ol.hdr_len = lies[k];
		struct gso_plan plan;
		assert_int_equal(gso_plan(in, &plan), 0);
		assert_int_equal(plan.hdr_len, 14 + 20 + 32);
		assert_int_equal(plan.payload_len, 3000);
		assert_int_equal(plan.nr_segs, 3);
	}
	pkt_free(in);
}

/* The same frame with its payload in frags gives byte-identical segments. */
static void test_frags_give_same_segments(void **state)
{
	(void)state;
	struct tso_spec s = { .version = 6, .payload_len = 7777, .mss = 1300, .tcp_flags = TCP_ACK | TCP_PSH };
	struct pkt *lin = pkt_alloc(pool), *fr = pkt_alloc(pool), *owner = pkt_alloc(pool);
	tso_build(lin, &s);
	tso_build(fr, &s);
	/* Move the payload of `fr` into three frags of odd sizes living in `owner`. */
	uint32_t hdr = fr->payload_ofs;
	pkt_set_data(owner, lin->data + hdr, s.payload_len);
	pkt_trim(fr, hdr);
	uint32_t cuts[] = { 0, 1001, 4003, s.payload_len };
	for (int k = 0; k < 3; k++)
		assert_int_equal(pkt_add_frag(fr, owner->data + cuts[k], cuts[k + 1] - cuts[k], owner), 0);
	pkt_free(owner);
	assert_int_equal(pkt_len(fr), pkt_len(lin));

	struct pkt *a[16], *b[16];
	int na = gso_ref_segment(lin, 0, pool, a, 16);
	int nb = gso_ref_segment(fr, 0, pool, b, 16);
	assert_int_equal(na, 6);
	assert_int_equal(nb, na);
	for (int i = 0; i < na; i++) {
		assert_int_equal(a[i]->size, b[i]->size);
		assert_memory_equal(a[i]->data, b[i]->data, a[i]->size);
		pkt_free(a[i]);
		pkt_free(b[i]);
	}
	pkt_free(lin);
	pkt_free(fr);
}

static void test_errors_leave_nothing_allocated(void **state)
{
	(void)state;
	struct tso_spec s = { .version = 4, .payload_len = 10000, .mss = 1000 };
	struct pkt *in = pkt_alloc(pool);
	tso_build(in, &s);
	struct pkt *segs[GSO_MAX_SEGS];
	struct pkt_pool_stats before, after;
	pkt_pool_get_stats(pool, &before);
	assert_int_equal(gso_ref_segment(in, 0, pool, segs, 9), -ENOSPC);

	struct pkt_pool *small;
	assert_int_equal(pkt_pool_create(4, &small), 0);
	assert_int_equal(gso_ref_segment(in, 0, small, segs, GSO_MAX_SEGS), -ENOBUFS);
	struct pkt_pool_stats small_st;
	pkt_pool_get_stats(small, &small_st);
	assert_int_equal(small_st.in_use, 0);
	pkt_pool_destroy(small);
	pkt_pool_get_stats(pool, &after);
	assert_int_equal(after.in_use, before.in_use);
	assert_int_equal(gso_drop_reason(-ENOBUFS), DROP_GSO_NO_BUFFER);
	pkt_free(in);
}

static void test_plan_refuses_inconsistent_frames(void **state)
{
	(void)state;
	struct tso_spec s = { .version = 4, .payload_len = 3000, .mss = 1000 };
	struct pkt *in = pkt_alloc(pool);
	struct gso_plan plan;

	tso_build(in, &s);
	in->ol.gso_type = PKT_GSO_TCPV6; /* IPv4 frame */
	assert_int_equal(gso_plan(in, &plan), -EINVAL);

	tso_build(in, &s);
	in->ol.gso_type = PKT_GSO_UDP; /* UFO */
	assert_int_equal(gso_plan(in, &plan), -EOPNOTSUPP);
	assert_int_equal(gso_drop_reason(-EOPNOTSUPP), DROP_GSO_UNSUPPORTED);

	tso_build(in, &s);
	store_be16(in->data + 14 + 2, 20 + 20 + 2000); /* IP total length lies */
	assert_int_equal(gso_plan(in, &plan), -EINVAL);

	tso_build(in, &s);
	in->data[14 + 20 + 12] = 4 << 4; /* TCP doff below 5 */
	assert_int_equal(gso_plan(in, &plan), -EINVAL);

	tso_build(in, &s);
	in->data[14 + 20 + 12] = 15 << 4; /* options past the payload start: still inside */
	assert_int_equal(gso_plan(in, &plan), 0);
	assert_int_equal(plan.hdr_len, 14 + 20 + 60);

	tso_build(in, &s);
	in->ol.gso_size = 0;
	assert_int_equal(gso_plan(in, &plan), -EINVAL);

	tso_build(in, &s);
	in->ol.gso_size = 1; /* 3000 segments */
	assert_int_equal(gso_plan(in, &plan), -E2BIG);

	tso_build(in, &s);
	in->l4_ofs = PKT_OFS_NONE;
	assert_int_equal(gso_plan(in, &plan), -EINVAL);
	pkt_free(in);
}

/* A frame without gso: only its partial checksum is completed. */
static void test_non_gso_frame_checksum_completed(void **state)
{
	(void)state;
	for (int v = 4; v <= 6; v += 2) {
		for (int udp = 0; udp <= 1; udp++) {
			struct tso_spec s = { .version = v, .payload_len = 777,
					      .proto = udp ? IP_PROTO_UDP : IP_PROTO_TCP };
			struct pkt *in = pkt_alloc(pool);
			tso_build(in, &s);
			struct pkt *segs[1];
			assert_int_equal(gso_ref_segment(in, 0, pool, segs, 1), 1);
			uint32_t l4 = in->l4_ofs, l4_len = in->size - l4;
			assert_int_equal(segs[0]->ol.flags & PKT_OL_NEEDS_CSUM, 0);
			assert_true(csum_ref_l4_ok(v, segs[0]->data + in->l3_ofs, segs[0]->data + l4, l4_len,
						     s.proto ? s.proto : IP_PROTO_TCP));
			pkt_free(segs[0]);

			assert_false(csum_ref_l4_ok(v, in->data + in->l3_ofs, in->data + l4, l4_len,
						      s.proto ? s.proto : IP_PROTO_TCP));
			assert_int_equal(gso_csum_complete(in), 0);
			assert_int_equal(in->ol.flags & PKT_OL_NEEDS_CSUM, 0);
			assert_true(csum_ref_l4_ok(v, in->data + in->l3_ofs, in->data + l4, l4_len,
						     s.proto ? s.proto : IP_PROTO_TCP));
			assert_int_equal(gso_csum_complete(in), 0); /* no-op now */
			pkt_free(in);
		}
	}
}

/* A plain train holds the same bytes as gso_ref_segment() output, at one stride. */
static void test_plain_train_matches_segments(void **state)
{
	(void)state;
	struct tso_spec s = { .version = 4, .payload_len = 10 * 1448 + 17, .mss = 1448,
			      .tcp_flags = TCP_ACK | TCP_PSH, .tcp_opt_len = 12 };
	struct pkt *in = pkt_alloc(pool);
	tso_build(in, &s);
	struct gso_train t = { .buf = train_buf, .cap = sizeof(train_buf) };
	assert_int_equal(gso_ref_train_build(in, GSO_TRAIN_PLAIN, NULL, NULL, 0, &t), 0);
	assert_int_equal(t.nr_segs, 11);
	assert_int_equal(t.stride, 14 + 20 + 32 + 1448);
	assert_int_equal(t.last_size, 14 + 20 + 32 + 17);
	assert_int_equal(t.len, 10 * t.stride + t.last_size);
	assert_int_equal(gso_ref_train_size(in, GSO_TRAIN_PLAIN, NULL), t.len);

	struct pkt *segs[16];
	assert_int_equal(gso_ref_segment(in, 0, pool, segs, 16), 11);
	for (uint32_t i = 0; i < 11; i++) {
		assert_int_equal(segs[i]->size, i < 10 ? t.stride : t.last_size);
		assert_memory_equal(train_buf + i * t.stride, segs[i]->data, segs[i]->size);
		pkt_free(segs[i]);
	}

	t.cap = t.len - 1;
	assert_int_equal(gso_ref_train_build(in, GSO_TRAIN_PLAIN, NULL, NULL, 0, &t), -ENOSPC);
	t.cap = sizeof(train_buf);
	assert_int_equal(gso_ref_train_build(in, GSO_TRAIN_PLAIN, NULL, NULL, GSO_CSUM_PARTIAL, &t), -EINVAL);
	assert_int_equal(gso_ref_train_build(in, GSO_TRAIN_VXLAN_UDP, NULL, NULL, 0, &t), -EINVAL);
	pkt_free(in);
}

/* The socket shape: VXLAN header + inner segment, cut into sends. */
static void test_vxlan_udp_train_and_sends(void **state)
{
	(void)state;
	/* A full 64 KB TSO frame, MSS 1398 as on a 1450-MTU VM over a
	 * 1500-byte underlay, no TCP options. */
	struct tso_spec s = { .version = 4, .payload_len = 65535 - 40, .mss = 1398, .ip_id = 1 };
	struct pkt *in = pkt_alloc(pool);
	tso_build(in, &s);
	struct vxlan_encap enc = { .family = 4, .vni = 99 };
	struct gso_train t = { .buf = train_buf, .cap = sizeof(train_buf) };
	assert_int_equal(gso_ref_train_build(in, GSO_TRAIN_VXLAN_UDP, &enc, NULL, 0, &t), 0);
	/* 8 + 14 + 20 + 20 + 1398 = 1460 <= 1472 bytes of UDP payload at MTU 1500 */
	assert_int_equal(t.stride, 1460);
	assert_int_equal(t.nr_segs, (65495 + 1397) / 1398);
	for (uint32_t i = 0; i < t.nr_segs; i++) {
		const uint8_t *seg = train_buf + i * t.stride;
		assert_int_equal(load_be32(seg), VXLAN_FLAG_VNI);
		assert_int_equal(load_be32(seg + 4), 99u << 8);
		uint32_t len = i + 1 < t.nr_segs ? t.stride : t.last_size;
		check_segment(&s, in->data, seg + 8, len - 8, i, t.nr_segs, false);
	}

	/* 65507 bytes and 64 segments per send: 44 segments fit by bytes. */
	assert_int_equal(gso_segs_per_send(t.stride, GSO_UDP_SEND_MAX_BYTES_IPV4, GSO_UDP_MAX_SEGMENTS_OLD), 44);
	assert_int_equal(gso_segs_per_send(100, 65507, GSO_UDP_MAX_SEGMENTS_OLD), 64);
	assert_int_equal(gso_segs_per_send(70000, 65507, 64), 0);
	struct gso_send sends[8];
	int ns = gso_ref_train_sends(&t, GSO_UDP_SEND_MAX_BYTES_IPV4, GSO_UDP_MAX_SEGMENTS_OLD, sends, 8);
	assert_int_equal(ns, 2);
	uint32_t covered = 0, segs = 0;
	for (int k = 0; k < ns; k++) {
		assert_int_equal(sends[k].ofs, covered);
		assert_int_equal(sends[k].gso_size, t.stride);
		assert_true(sends[k].len <= GSO_UDP_SEND_MAX_BYTES_IPV4);
		assert_true(sends[k].nr_segs <= GSO_UDP_MAX_SEGMENTS_OLD);
		covered += sends[k].len;
		segs += sends[k].nr_segs;
	}
	assert_int_equal(covered, t.len);
	assert_int_equal(segs, t.nr_segs);
	assert_int_equal(gso_ref_train_sends(&t, GSO_UDP_SEND_MAX_BYTES_IPV4, 64, sends, 1), -ENOSPC);
	assert_int_equal(gso_ref_train_sends(&t, 1000, 64, sends, 8), -EMSGSIZE);
	/* Small segment cap: 10 per send. */
	assert_int_equal(gso_ref_train_sends(&t, GSO_UDP_SEND_MAX_BYTES_IPV4, 10, sends, 8), 5);
	assert_int_equal(sends[4].nr_segs, t.nr_segs - 40);
	assert_int_equal(sends[4].len, (t.nr_segs - 41) * t.stride + t.last_size);
	pkt_free(in);
}

static void test_tap_frame_checker(void **state)
{
	(void)state;
	struct tso_spec s = { .version = 4, .payload_len = 3000, .mss = 1448 };
	struct pkt *p = pkt_alloc(pool);
	tso_build(p, &s);
	assert_true(gso_tap_frame_ok(p));

	p->ol.gso_size = 0;
	assert_false(gso_tap_frame_ok(p));
	p->ol.gso_size = 3000; /* payload not larger than gso_size */
	assert_false(gso_tap_frame_ok(p));
	p->ol.gso_size = 1448;
	p->ol.csum_offset = 6;
	assert_false(gso_tap_frame_ok(p));
	p->ol.csum_offset = 16;
	p->ol.flags = 0;
	assert_false(gso_tap_frame_ok(p));
	p->ol.flags = PKT_OL_NEEDS_CSUM;
	p->ol.hdr_len = (uint16_t)(pkt_len(p) + 1);
	assert_false(gso_tap_frame_ok(p));
	p->ol.hdr_len = 54;
	p->ol.gso_type = 2; /* unknown */
	assert_false(gso_tap_frame_ok(p));
	p->ol.gso_type = PKT_GSO_TCPV4 | PKT_GSO_ECN;
	assert_true(gso_tap_frame_ok(p));

	/* No gso: fine with or without a valid partial checksum field. */
	p->ol.gso_type = PKT_GSO_NONE;
	p->ol.gso_size = 0;
	assert_true(gso_tap_frame_ok(p));
	p->ol.csum_start = (uint16_t)(pkt_len(p) - 1);
	assert_false(gso_tap_frame_ok(p));

	struct tso_spec u = { .version = 6, .proto = IP_PROTO_UDP, .payload_len = 3000, .mss = 1000 };
	tso_build(p, &u);
	assert_true(gso_tap_frame_ok(p));
	p->ol.gso_type |= PKT_GSO_ECN;
	assert_false(gso_tap_frame_ok(p));
	tso_build(p, &u);
	p->ol.gso_size = 20; /* 150 segments > UDP_MAX_SEGMENTS */
	assert_false(gso_tap_frame_ok(p));
	pkt_free(p);
}

/* GSO of every (payload, mss) pair in a small grid: the rules hold at all
 * boundaries (payload = k*mss - 1, k*mss, k*mss + 1). */
static void test_boundary_grid(void **state)
{
	(void)state;
	uint16_t mss_list[] = { 1, 2, 3, 536, 1398, 1448 };
	for (size_t m = 0; m < sizeof(mss_list) / sizeof(mss_list[0]); m++) {
		uint16_t mss = mss_list[m];
		for (uint32_t k = 1; k <= 4; k++) {
			for (int d = -1; d <= 1; d++) {
				int64_t payload = (int64_t)k * mss + d;
				if (payload < 0)
					continue;
				struct tso_spec s = { .version = (k & 1) ? 4 : 6, .payload_len = (uint32_t)payload,
						      .mss = mss, .ip_id = (uint16_t)(0xfffd + k),
						      .tcp_flags = TCP_ACK | TCP_PSH | TCP_FIN | TCP_CWR };
				segment_and_check(&s, (k & 2) ? GSO_CSUM_PARTIAL : 0);
			}
		}
	}
}

/* A UDP checksum that computes to 0 is sent as 0xffff (0 means "none").
 * Two payload bytes are chosen so the sum comes out exactly so. */
static void test_udp_zero_checksum_becomes_ffff(void **state)
{
	(void)state;
	for (int gso = 0; gso <= 1; gso++) {
		struct tso_spec s = { .version = 4, .proto = IP_PROTO_UDP, .payload_len = 100,
				      .mss = gso ? 1000 : 0 };
		struct pkt *in = pkt_alloc(pool);
		tso_build(in, &s);
		uint8_t *l3 = in->data + in->l3_ofs, *l4 = in->data + in->l4_ofs;
		uint32_t l4_len = in->size - in->l4_ofs;
		uint8_t *word = l4 + UDP_HDR_LEN + 10;
		uint16_t pseudo_field = load_be16(l4 + UDP_CSUM_OFFSET);
		store_be16(word, 0);
		store_be16(l4 + UDP_CSUM_OFFSET, 0);
		uint16_t rest = csum_ref_fold(csum_ref_sum_be(l4, l4_len, csum_ref_pseudo_l3(4, l3, IP_PROTO_UDP, l4_len)));
		store_be16(word, (uint16_t)(0xffff - rest));
		store_be16(l4 + UDP_CSUM_OFFSET, pseudo_field);

		struct pkt *segs[1];
		assert_int_equal(gso_ref_segment(in, 0, pool, segs, 1), 1);
		assert_int_equal(load_be16(segs[0]->data + in->l4_ofs + UDP_CSUM_OFFSET), 0xffff);
		assert_true(csum_ref_l4_ok(4, segs[0]->data + in->l3_ofs, segs[0]->data + in->l4_ofs,
					     l4_len, IP_PROTO_UDP));
		pkt_free(segs[0]);
		pkt_free(in);
	}
}

/* Concatenates the iovecs of an iovec train into `out`; returns the bytes. */
static uint32_t iov_flatten(const struct gso_iov_train *t, uint32_t first, uint32_t count, uint8_t *out)
{
	uint32_t len = 0;
	for (uint32_t k = first; k < first + count; k++) {
		memcpy(out + len, t->iov[k].iov_base, t->iov[k].iov_len);
		len += (uint32_t)t->iov[k].iov_len;
	}
	return len;
}

static uint8_t iov_hdrs[65536];
static struct iovec iov_vec[4096];
static struct gso_iov_train iov_train;
static uint8_t iov_flat[2 * 65536 + 16384];

/* Builds `in` both ways and checks the iovec train is the buffer train,
 * byte for byte, and its sends cut it at the same places. */
static void iov_train_matches(const struct pkt *in, enum gso_train_shape shape, const struct vxlan_encap *enc)
{
	struct gso_train t = { .buf = train_buf, .cap = sizeof(train_buf) };
	assert_int_equal(gso_ref_train_build(in, shape, enc, NULL, 0, &t), 0);

	struct gso_iov_train *it = &iov_train;
	memset(it, 0, sizeof(*it));
	it->hdr_buf = iov_hdrs;
	it->hdr_cap = sizeof(iov_hdrs);
	it->iov = iov_vec;
	it->iov_cap = 4096;
	uint32_t need_hdr = 0, need_iov = 0;
	assert_true(gso_iov_train_needs(in, shape, enc, &need_hdr, &need_iov));
	assert_int_equal(gso_train_build_iov(in, shape, enc, it), 0);
	assert_int_equal(it->hdr_used, need_hdr);
	assert_true(it->n_iov <= need_iov);
	assert_int_equal(it->stride, t.stride);
	assert_int_equal(it->nr_segs, t.nr_segs);
	assert_int_equal(it->last_size, t.last_size);
	assert_int_equal(it->len, t.len);
	assert_int_equal(iov_flatten(it, 0, it->n_iov, iov_flat), t.len);
	assert_memory_equal(iov_flat, train_buf, t.len);
	/* The payload is referenced, not copied: no iovec but the header
	 * blocks points into hdr_buf. */
	for (uint32_t i = 0; i < it->nr_segs; i++) {
		assert_ptr_equal(it->iov[it->seg_iov[i]].iov_base, iov_hdrs + (size_t)i * (need_hdr / it->nr_segs));
		for (uint32_t k = it->seg_iov[i] + 1u; k < it->seg_iov[i + 1]; k++)
			assert_false((uint8_t *)it->iov[k].iov_base >= iov_hdrs &&
				     (uint8_t *)it->iov[k].iov_base < iov_hdrs + sizeof(iov_hdrs));
	}

	uint32_t limits[] = { GSO_UDP_MAX_SEGMENTS_OLD, 10, 1 };
	for (size_t l = 0; l < 3; l++) {
		struct gso_send a[GSO_MAX_SEGS];
		struct gso_iov_send b[GSO_MAX_SEGS];
		int na = gso_ref_train_sends(&t, GSO_UDP_SEND_MAX_BYTES_IPV4, limits[l], a, GSO_MAX_SEGS);
		int nb = gso_iov_train_sends(it, GSO_UDP_SEND_MAX_BYTES_IPV4, limits[l], b, GSO_MAX_SEGS);
		assert_true(na > 0);
		assert_int_equal(nb, na);
		for (int k = 0; k < na; k++) {
			assert_int_equal(b[k].len, a[k].len);
			assert_int_equal(b[k].gso_size, a[k].gso_size);
			assert_int_equal(b[k].nr_segs, a[k].nr_segs);
			assert_int_equal(iov_flatten(it, b[k].iov_first, b[k].iov_count, iov_flat), a[k].len);
			assert_memory_equal(iov_flat, train_buf + a[k].ofs, a[k].len);
		}
		if (na > 1)
			assert_int_equal(gso_iov_train_sends(it, GSO_UDP_SEND_MAX_BYTES_IPV4, limits[l], b,
							     (unsigned)na - 1), -ENOSPC);
	}
}

/* The iovec train is the buffer train without the payload copy: for both
 * IP versions, TCP and UDP_L4, options and VLAN, both shapes, a linear
 * payload and one spread over frags of odd sizes. */
static void test_iov_train_matches_buffer_train(void **state)
{
	(void)state;
	struct vxlan_encap enc = { .family = 4, .vni = 99 };
	struct tso_spec specs[] = {
		{ .version = 4, .payload_len = 65535 - 40, .mss = 1398, .ip_id = 0xfff0,
		  .tcp_flags = TCP_ACK | TCP_PSH | TCP_CWR, .seq = 0xfffff000 },
		{ .version = 6, .payload_len = 10 * 1448 + 17, .mss = 1448, .tcp_opt_len = 12, .vlan = true },
		{ .version = 4, .payload_len = 3 * 1001, .mss = 1001, .tcp_flags = TCP_ACK | TCP_FIN },
		{ .version = 6, .proto = IP_PROTO_UDP, .payload_len = 5000, .mss = 1200 },
		{ .version = 4, .payload_len = 100, .mss = 1398 }, /* tiny GSO: one segment */
	};
	for (size_t k = 0; k < sizeof(specs) / sizeof(specs[0]); k++) {
		struct pkt *lin = pkt_alloc(pool);
		tso_build(lin, &specs[k]);
		iov_train_matches(lin, GSO_TRAIN_VXLAN_UDP, &enc);
		iov_train_matches(lin, GSO_TRAIN_PLAIN, NULL);

		/* The same frame with its payload in three frags. */
		struct pkt *fr = pkt_alloc(pool), *owner = pkt_alloc(pool);
		tso_build(fr, &specs[k]);
		uint32_t hdr = fr->payload_ofs, plen = specs[k].payload_len;
		pkt_set_data(owner, lin->data + hdr, plen);
		pkt_trim(fr, hdr);
		uint32_t cuts[] = { 0, plen / 7, plen / 7 + 1 + plen / 3, plen };
		for (int c = 0; c < 3; c++)
			assert_int_equal(pkt_add_frag(fr, owner->data + cuts[c], cuts[c + 1] - cuts[c], owner), 0);
		pkt_free(owner);
		iov_train_matches(fr, GSO_TRAIN_VXLAN_UDP, &enc);
		pkt_free(fr);
		pkt_free(lin);
	}
}

static void test_iov_train_limits(void **state)
{
	(void)state;
	struct tso_spec s = { .version = 4, .payload_len = 10 * 1398, .mss = 1398 };
	struct pkt *in = pkt_alloc(pool);
	tso_build(in, &s);
	struct vxlan_encap enc = { .family = 4, .vni = 7 };
	struct gso_iov_train *it = &iov_train;
	uint32_t need_hdr, need_iov;
	assert_true(gso_iov_train_needs(in, GSO_TRAIN_VXLAN_UDP, &enc, &need_hdr, &need_iov));
	assert_int_equal(need_hdr, 10 * (8 + 14 + 20 + 20));
	assert_int_equal(need_iov, 20);
	*it = (struct gso_iov_train){ .hdr_buf = iov_hdrs, .hdr_cap = need_hdr - 1, .iov = iov_vec, .iov_cap = 20 };
	assert_int_equal(gso_train_build_iov(in, GSO_TRAIN_VXLAN_UDP, &enc, it), -ENOSPC);
	it->hdr_cap = need_hdr;
	it->iov_cap = 19;
	assert_int_equal(gso_train_build_iov(in, GSO_TRAIN_VXLAN_UDP, &enc, it), -ENOSPC);
	it->iov_cap = 20;
	assert_int_equal(gso_train_build_iov(in, GSO_TRAIN_VXLAN_UDP, &enc, it), 0);
	assert_int_equal(gso_train_build_iov(in, GSO_TRAIN_VXLAN_FRAME, &enc, it), -EINVAL);
	assert_int_equal(gso_train_build_iov(in, GSO_TRAIN_VXLAN_UDP, NULL, it), -EINVAL);

	/* A frame without gso is not a train. */
	struct tso_spec plain = { .version = 4, .payload_len = 500 };
	tso_build(in, &plain);
	assert_false(gso_iov_train_needs(in, GSO_TRAIN_VXLAN_UDP, &enc, &need_hdr, &need_iov));
	assert_int_equal(gso_train_build_iov(in, GSO_TRAIN_VXLAN_UDP, &enc, it), -EINVAL);
	pkt_free(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcpv4_short_last_segment),
		cmocka_unit_test(test_tcpv6_short_last_segment),
		cmocka_unit_test(test_full_64k_frame_both_versions),
		cmocka_unit_test(test_exact_multiple_has_equal_segments),
		cmocka_unit_test(test_ecn_cwr_only_on_first),
		cmocka_unit_test(test_tiny_gso_is_one_segment),
		cmocka_unit_test(test_ip_id_wraps),
		cmocka_unit_test(test_partial_checksum_flag),
		cmocka_unit_test(test_options_and_vlan_are_copied),
		cmocka_unit_test(test_udp_l4_segmentation),
		cmocka_unit_test(test_sender_hdr_len_is_ignored),
		cmocka_unit_test(test_frags_give_same_segments),
		cmocka_unit_test(test_errors_leave_nothing_allocated),
		cmocka_unit_test(test_plan_refuses_inconsistent_frames),
		cmocka_unit_test(test_non_gso_frame_checksum_completed),
		cmocka_unit_test(test_plain_train_matches_segments),
		cmocka_unit_test(test_vxlan_udp_train_and_sends),
		cmocka_unit_test(test_tap_frame_checker),
		cmocka_unit_test(test_boundary_grid),
		cmocka_unit_test(test_udp_zero_checksum_becomes_ffff),
		cmocka_unit_test(test_iov_train_matches_buffer_train),
		cmocka_unit_test(test_iov_train_limits),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
