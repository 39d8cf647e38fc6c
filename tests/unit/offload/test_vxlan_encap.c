/* Unit tests for src/offload/vxlan_encap.c and the VXLAN shapes of GSO
 * trains: outer header fields for IPv4 and IPv6 (lengths, DF, TTL, VNI,
 * ports, checksums checked with a naive checksum), zero-checksum option,
 * config checks, source port stable per flow and inside its range, flow
 * hash over VLAN tags and fragments, in-place encapsulation of a pkt (with
 * frags and a partial inner checksum), and the full-frame train. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "offload/gso.h"
#include "offload/vxlan_encap.h"
#include "packet/csum.h"
#include "gso_test_util.h"
#include "pool_fixture.h"

static uint8_t train_buf[2 * 65536 + 16384];

PKT_POOL_FIXTURE(16)

static struct vxlan_encap encap_v4(void)
{
	struct vxlan_encap e = { .family = 4, .vni = 0xabcdef,
				 .src_mac = { 0x02, 0xaa, 0, 0, 0, 1 },
				 .dst_mac = { 0x02, 0xbb, 0, 0, 0, 2 },
				 .src_ip = { 198, 51, 100, 1 }, .dst_ip = { 198, 51, 100, 2 } };
	return e;
}

static struct vxlan_encap encap_v6(void)
{
	struct vxlan_encap e = { .family = 6, .vni = 99, .ttl = 17, .tos = 0x28,
				 .src_mac = { 0x02, 0xaa, 0, 0, 0, 1 },
				 .dst_mac = { 0x02, 0xbb, 0, 0, 0, 2 },
				 .src_ip = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 1 },
				 .dst_ip = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 2 } };
	return e;
}

/* Checks the outer headers of one full VXLAN frame of `len` bytes against
 * `e`; returns the outer UDP source port. */
static uint16_t check_outer(const struct vxlan_encap *e, const uint8_t *f, uint32_t len, uint16_t ip_id)
{
	assert_memory_equal(f, e->dst_mac, 6);
	assert_memory_equal(f + 6, e->src_mac, 6);
	const uint8_t *l3 = f + ETH_HDR_LEN, *l4;
	uint32_t udp_len;
	if (e->family == 4) {
		assert_int_equal(load_be16(f + 12), ETH_TYPE_IPV4);
		assert_int_equal(l3[0], 0x45);
		assert_int_equal(l3[1], e->tos);
		assert_int_equal(load_be16(l3 + 2), len - ETH_HDR_LEN);
		assert_int_equal(load_be16(l3 + 4), ip_id);
		assert_int_equal(load_be16(l3 + 6), e->no_df ? 0 : IPV4_DF);
		assert_int_equal(l3[8], e->ttl ? e->ttl : 64);
		assert_int_equal(l3[9], IP_PROTO_UDP);
		assert_true(csum_ref_ipv4_hdr_ok(l3));
		assert_memory_equal(l3 + 12, e->src_ip, 4);
		assert_memory_equal(l3 + 16, e->dst_ip, 4);
		l4 = l3 + IPV4_HDR_LEN;
		udp_len = len - ETH_HDR_LEN - IPV4_HDR_LEN;
	} else {
		assert_int_equal(load_be16(f + 12), ETH_TYPE_IPV6);
		uint32_t first = load_be32(l3);
		assert_int_equal(first >> 28, 6);
		assert_int_equal((first >> 20) & 0xff, e->tos);
		assert_int_equal(load_be16(l3 + 4), len - ETH_HDR_LEN - IPV6_HDR_LEN);
		assert_int_equal(l3[6], IP_PROTO_UDP);
		assert_int_equal(l3[7], e->ttl ? e->ttl : 64);
		assert_memory_equal(l3 + 8, e->src_ip, 16);
		assert_memory_equal(l3 + 24, e->dst_ip, 16);
		l4 = l3 + IPV6_HDR_LEN;
		udp_len = len - ETH_HDR_LEN - IPV6_HDR_LEN;
	}
	uint16_t sport = load_be16(l4);
	uint16_t lo = e->src_port_min ? e->src_port_min : 49152;
	uint16_t hi = e->src_port_max ? e->src_port_max : 65535;
	assert_in_range(sport, lo, hi);
	assert_int_equal(load_be16(l4 + 2), e->dst_port ? e->dst_port : 4789);
	assert_int_equal(load_be16(l4 + 4), udp_len);
	if (e->udp_zero_csum) {
		assert_int_equal(load_be16(l4 + 6), 0);
	} else {
		assert_int_not_equal(load_be16(l4 + 6), 0);
		assert_true(csum_ref_l4_ok(e->family, l3, l4, udp_len, IP_PROTO_UDP));
	}
	assert_int_equal(load_be32(l4 + 8), VXLAN_FLAG_VNI);
	assert_int_equal(load_be32(l4 + 12), e->vni << 8);
	return sport;
}

static void test_write_ipv4_and_ipv6(void **state)
{
	(void)state;
	struct tso_spec s = { .version = 4, .payload_len = 1001 };
	struct pkt *in = pkt_alloc(pool);
	tso_build(in, &s);
	uint8_t buf[2048];
	struct vxlan_encap cfgs[] = { encap_v4(), encap_v6() };
	cfgs[0].no_df = true;
	cfgs[0].dst_port = 8472;
	for (size_t k = 0; k < 2; k++) {
		const struct vxlan_encap *e = &cfgs[k];
		assert_int_equal(vxlan_encap_check(e), 0);
		uint32_t hdr = vxlan_encap_hdr_len(e);
		assert_int_equal(hdr, e->family == 4 ? 50 : 70);
		memcpy(buf + hdr, in->data, in->size);
		/* A sum of an odd-length inner frame (1001 payload) still adds right. */
		uint32_t sum = csum_partial(in->data, in->size, 0);
		vxlan_encap_write(buf, e, 0x12345678, 0x4242, in->size, sum);
		check_outer(e, buf, hdr + in->size, 0x4242);
		assert_memory_equal(buf + hdr, in->data, in->size);
		if (e->family == 6) /* the flow label comes from the hash */
			assert_int_equal(load_be32(buf + 14) & 0xfffff, (0x12345678 ^ (0x12345678 >> 12)) & 0xfffff);
	}
	pkt_free(in);
}

static void test_zero_checksum_option_ipv4_only(void **state)
{
	(void)state;
	struct vxlan_encap e = encap_v4();
	e.udp_zero_csum = true;
	assert_int_equal(vxlan_encap_check(&e), 0);
	uint8_t buf[50 + 64] = { 0 };
	vxlan_encap_write(buf, &e, 7, 1, 64, 0);
	check_outer(&e, buf, sizeof(buf), 1);

	struct vxlan_encap e6 = encap_v6();
	e6.udp_zero_csum = true;
	assert_int_equal(vxlan_encap_check(&e6), -EINVAL);
}

static void test_config_check(void **state)
{
	(void)state;
	struct vxlan_encap e = encap_v4();
	assert_int_equal(vxlan_encap_check(&e), 0);
	e.family = 5;
	assert_int_equal(vxlan_encap_check(&e), -EINVAL);
	e = encap_v4();
	e.vni = VXLAN_VNI_MAX + 1;
	assert_int_equal(vxlan_encap_check(&e), -EINVAL);
	e = encap_v4();
	e.src_port_min = 2000;
	e.src_port_max = 1999;
	assert_int_equal(vxlan_encap_check(&e), -EINVAL);
	e.src_port_min = 0;
	e.src_port_max = 100;
	assert_int_equal(vxlan_encap_check(&e), -EINVAL);
	e.src_port_min = 100;
	assert_int_equal(vxlan_encap_check(&e), 0);
}

/* Same flow (different seq, payload, length, IP ID) -> same hash; the
 * ports of many flows stay inside the range and use all of a small one. */
static void test_src_port_stable_per_flow_and_in_range(void **state)
{
	(void)state;
	struct pkt *a = pkt_alloc(pool), *b = pkt_alloc(pool);
	struct tso_spec sa = { .version = 4, .payload_len = 100, .seq = 1, .ip_id = 3, .src_port = 33333 };
	struct tso_spec sb = { .version = 4, .payload_len = 1400, .seq = 99999, .ip_id = 4,
			       .tcp_flags = TCP_ACK | TCP_PSH, .src_port = 33333 };
	tso_build(a, &sa);
	tso_build(b, &sb);
	assert_int_equal(vxlan_flow_hash(a->data, a->size), vxlan_flow_hash(b->data, b->size));
	sb.src_port = 33334;
	tso_build(b, &sb);
	assert_int_not_equal(vxlan_flow_hash(a->data, a->size), vxlan_flow_hash(b->data, b->size));

	struct vxlan_encap def = encap_v4(), small = encap_v4();
	small.src_port_min = 1000;
	small.src_port_max = 1003;
	bool seen[4] = { false };
	uint32_t distinct_default = 0;
	uint16_t prev = 0;
	for (uint16_t port = 1; port <= 400; port++) {
		struct tso_spec s = { .version = (port & 1) ? 4 : 6, .payload_len = 10, .src_port = port };
		tso_build(a, &s);
		uint32_t h = vxlan_flow_hash(a->data, a->size);
		uint16_t p = vxlan_src_port(&def, h);
		assert_in_range(p, 49152, 65535);
		distinct_default += p != prev;
		prev = p;
		uint16_t q = vxlan_src_port(&small, h);
		assert_in_range(q, 1000, 1003);
		seen[q - 1000] = true;
	}
	assert_true(seen[0] && seen[1] && seen[2] && seen[3]);
	assert_true(distinct_default > 350); /* neighbouring flows spread */
	/* Range edges are reachable and never left. */
	assert_int_equal(vxlan_src_port(&def, 0), 49152);
	assert_int_equal(vxlan_src_port(&def, 0xffff), 65535);
	pkt_free(a);
	pkt_free(b);
}

static void test_flow_hash_vlan_and_fragments(void **state)
{
	(void)state;
	struct pkt *a = pkt_alloc(pool), *b = pkt_alloc(pool);
	struct tso_spec plain = { .version = 4, .payload_len = 50 };
	struct tso_spec tagged = plain;
	tagged.vlan = true;
	tso_build(a, &plain);
	tso_build(b, &tagged);
	/* The tag is skipped: both hash the same IP 5-tuple. */
	assert_int_equal(vxlan_flow_hash(a->data, a->size), vxlan_flow_hash(b->data, b->size));

	/* An IPv4 fragment hashes without ports: changing them changes nothing. */
	tso_build(a, &plain);
	store_be16(a->data + 14 + 6, IPV4_MF);
	uint32_t h1 = vxlan_flow_hash(a->data, a->size);
	store_be16(a->data + 34, 1234);
	assert_int_equal(vxlan_flow_hash(a->data, a->size), h1);
	/* Non-IP: the MACs decide; truncated frames do not crash. */
	store_be16(a->data + 12, ETH_TYPE_ARP);
	uint32_t h2 = vxlan_flow_hash(a->data, a->size);
	a->data[0] ^= 1;
	assert_int_not_equal(vxlan_flow_hash(a->data, a->size), h2);
	for (size_t len = 0; len < 60; len++)
		(void)vxlan_flow_hash(b->data, len);
	pkt_free(a);
	pkt_free(b);
}

/* In place on a pkt whose payload partly lives in frags and whose inner
 * TCP checksum is still partial. */
static void test_encap_pkt_in_place(void **state)
{
	(void)state;
	struct vxlan_encap cfgs[] = { encap_v4(), encap_v6() };
	for (size_t k = 0; k < 2; k++) {
		const struct vxlan_encap *e = &cfgs[k];
		struct tso_spec s = { .version = 6, .payload_len = 1201 };
		struct pkt *p = pkt_alloc(pool), *owner = pkt_alloc(pool);
		tso_build(p, &s);
		uint32_t inner_len = p->size;
		uint32_t l3 = p->l3_ofs, l4 = p->l4_ofs, hdr = p->payload_ofs;
		pkt_set_data(owner, p->data + hdr, 1201);
		pkt_trim(p, hdr);
		assert_int_equal(pkt_add_frag(p, owner->data, 601, owner), 0);
		assert_int_equal(pkt_add_frag(p, owner->data + 601, 600, owner), 0);
		pkt_free(owner);

		assert_int_equal(vxlan_encap_pkt(p, e, 77), 0);
		uint32_t outer = vxlan_encap_hdr_len(e);
		assert_int_equal(pkt_len(p), outer + inner_len);
		assert_int_equal(p->l2_ofs, 0);
		assert_int_equal(p->l3_ofs, 14);
		assert_int_equal(p->l4_ofs, outer - 16);
		assert_int_equal(p->tunnel_ofs, outer - 8);
		assert_int_equal(p->inner_l2_ofs, outer);
		assert_int_equal(p->inner_l3_ofs, outer + l3);
		assert_int_equal(p->inner_l4_ofs, outer + l4);
		assert_int_equal(p->tunnel.vni, e->vni);
		assert_int_equal(p->tunnel.family, e->family);
		assert_int_equal(p->tunnel.dst_port, 4789);
		assert_int_equal(p->ol.flags, 0);

		uint8_t flat[4096];
		assert_int_equal(pkt_copy_out(p, 0, pkt_len(p), flat), 0);
		uint16_t sport = check_outer(e, flat, pkt_len(p), 77);
		assert_int_equal(p->tunnel.src_port, sport);
		/* Inner checksum completed before the outer one was taken. */
		assert_true(csum_ref_l4_ok(6, flat + outer + l3, flat + outer + l4, inner_len - l4, IP_PROTO_TCP));

		assert_int_equal(vxlan_encap_pkt(p, e, 78), -EINVAL); /* no VXLAN in VXLAN */
		pkt_free(p);
	}

	struct pkt *big = pkt_alloc(pool);
	struct tso_spec s = { .version = 4, .payload_len = 65535 - 40 };
	tso_build(big, &s);
	struct vxlan_encap e = encap_v4();
	assert_int_equal(vxlan_encap_pkt(big, &e, 1), -EMSGSIZE);
	pkt_free(big);
}

/* The full-frame shape: every segment a complete VXLAN frame at one stride,
 * outer IP ID advancing, one source port for the whole train. */
static void test_full_frame_train(void **state)
{
	(void)state;
	struct vxlan_encap cfgs[] = { encap_v4(), encap_v6() };
	for (size_t k = 0; k < 2; k++) {
		const struct vxlan_encap *e = &cfgs[k];
		struct tso_spec s = { .version = 4, .payload_len = 20000 + (uint32_t)k, .mss = 1398,
				      .ip_id = 0xfff0, .tcp_flags = TCP_ACK | TCP_PSH };
		struct pkt *in = pkt_alloc(pool);
		tso_build(in, &s);
		struct gso_train t = { .buf = train_buf, .cap = sizeof(train_buf) };
		uint16_t ip_id = 0xfffe;
		assert_int_equal(gso_ref_train_build(in, GSO_TRAIN_VXLAN_FRAME, e, &ip_id, 0, &t), 0);
		uint32_t outer = vxlan_encap_hdr_len(e);
		assert_int_equal(t.nr_segs, 15);
		assert_int_equal(t.stride, outer + 54 + 1398);
		assert_int_equal(t.len, gso_ref_train_size(in, GSO_TRAIN_VXLAN_FRAME, e));
		assert_int_equal(ip_id, (uint16_t)(0xfffe + 15));
		uint16_t first_port = 0;
		for (uint32_t i = 0; i < t.nr_segs; i++) {
			const uint8_t *f = train_buf + i * t.stride;
			uint32_t len = i + 1 < t.nr_segs ? t.stride : t.last_size;
			uint16_t port = check_outer(e, f, len, e->family == 4 ? (uint16_t)(0xfffe + i) : 0);
			if (i == 0)
				first_port = port;
			assert_int_equal(port, first_port);
			const uint8_t *inner = f + outer;
			assert_int_equal(load_be16(inner + 14 + 4), (uint16_t)(0xfff0 + i));
			assert_true(csum_ref_l4_ok(4, inner + 14, inner + 34, len - outer - 34, IP_PROTO_TCP));
		}
		pkt_free(in);
	}
	/* A bad config is refused before anything is written. */
	struct tso_spec s = { .version = 4, .payload_len = 3000, .mss = 1000 };
	struct pkt *in = pkt_alloc(pool);
	tso_build(in, &s);
	struct vxlan_encap bad = encap_v6();
	bad.udp_zero_csum = true;
	struct gso_train t = { .buf = train_buf, .cap = sizeof(train_buf) };
	assert_int_equal(gso_ref_train_build(in, GSO_TRAIN_VXLAN_FRAME, &bad, NULL, 0, &t), -EINVAL);
	/* A non-GSO frame with a partial checksum is one complete frame. */
	s.mss = 0;
	tso_build(in, &s);
	struct vxlan_encap e = encap_v4();
	assert_int_equal(gso_ref_train_build(in, GSO_TRAIN_VXLAN_FRAME, &e, NULL, 0, &t), 0);
	assert_int_equal(t.nr_segs, 1);
	assert_int_equal(t.len, 50 + in->size);
	check_outer(&e, train_buf, t.len, 0);
	assert_true(csum_ref_l4_ok(4, train_buf + 50 + 14, train_buf + 50 + 34, in->size - 34, IP_PROTO_TCP));
	pkt_free(in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_ipv4_and_ipv6),
		cmocka_unit_test(test_zero_checksum_option_ipv4_only),
		cmocka_unit_test(test_config_check),
		cmocka_unit_test(test_src_port_stable_per_flow_and_in_range),
		cmocka_unit_test(test_flow_hash_vlan_and_fragments),
		cmocka_unit_test(test_encap_pkt_in_place),
		cmocka_unit_test(test_full_frame_train),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
