/* Test helpers for the GSO / VXLAN encap tests: a TSO frame builder that
 * does not depend on the code under test; its checksums come from the naive
 * reference in tests/unit/support/csum_reference.h, not from packet/csum.c.
 * Header-only, static functions, included by the offload tests. */
#ifndef VX_TESTS_GSO_TEST_UTIL_H
#define VX_TESTS_GSO_TEST_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "csum_reference.h"
#include "packet/hdr.h"
#include "packet/pkt.h"

/* The naive checksum is tests/unit/support/csum_reference.h; these names
 * stay for test_gso.c until it moves to the csum_ref_* ones. */
static inline uint32_t naive_sum(const uint8_t *p, size_t len, uint32_t sum)
{
	return csum_ref_sum_be(p, len, sum);
}

static inline uint16_t naive_fold(uint32_t sum)
{
	return csum_ref_fold(sum);
}

static inline uint32_t naive_pseudo(int version, const uint8_t *l3, uint8_t proto, uint32_t l4_len)
{
	return csum_ref_pseudo_l3(version, l3, proto, l4_len);
}

static inline bool naive_l4_csum_ok(int version, const uint8_t *l3, const uint8_t *l4,
				    uint32_t l4_len, uint8_t proto)
{
	return csum_ref_l4_ok(version, l3, l4, l4_len, proto);
}

static inline bool naive_ipv4_hdr_ok(const uint8_t *ip)
{
	return csum_ref_ipv4_hdr_ok(ip);
}

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void wr32(uint8_t *p, uint32_t v)
{
	wr16(p, (uint16_t)(v >> 16));
	wr16(p + 2, (uint16_t)v);
}

static inline uint8_t payload_byte(uint32_t i)
{
	return (uint8_t)(i * 7 + 3 + (i >> 8));
}

/* What a test frame looks like. */
struct tso_spec {
	int version;          /* 4 or 6 */
	uint8_t proto;        /* IP_PROTO_TCP (default when 0) or IP_PROTO_UDP */
	uint32_t payload_len;
	uint16_t mss;         /* gso_size; 0 = no gso */
	uint8_t tcp_flags;    /* default ACK when 0 */
	uint16_t ip_id;
	uint32_t seq;
	uint8_t tcp_opt_len;  /* multiple of 4, <= 40: NOPs + a timestamp */
	bool vlan;            /* one 802.1Q tag */
	bool ecn;             /* gso_type | ECN */
	uint8_t tos;
	uint16_t src_port, dst_port;
};

/* Builds the frame into pkt (reset first) with offsets and offload metadata
 * as flow_extract() and vnet_hdr_read() would leave them: NEEDS_CSUM with
 * the pseudo-header sum in the L4 checksum field. */
static inline void tso_build(struct pkt *pkt, const struct tso_spec *s)
{
	uint8_t proto = s->proto ? s->proto : IP_PROTO_TCP;
	uint32_t l2_len = ETH_HDR_LEN + (s->vlan ? VLAN_HDR_LEN : 0);
	uint32_t l3_len = s->version == 4 ? IPV4_HDR_LEN : IPV6_HDR_LEN;
	uint32_t l4_hdr = proto == IP_PROTO_TCP ? TCP_HDR_LEN + s->tcp_opt_len : UDP_HDR_LEN;
	uint32_t len = l2_len + l3_len + l4_hdr + s->payload_len;

	pkt_reset(pkt);
	uint8_t *f = pkt_put(pkt, len);
	memset(f, 0, len);
	static const uint8_t dst_mac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	static const uint8_t src_mac[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	memcpy(f, dst_mac, 6);
	memcpy(f + 6, src_mac, 6);
	uint16_t l3_type = s->version == 4 ? ETH_TYPE_IPV4 : ETH_TYPE_IPV6;
	if (s->vlan) {
		wr16(f + 12, ETH_TYPE_VLAN);
		wr16(f + 14, 42);
		wr16(f + 16, l3_type);
	} else {
		wr16(f + 12, l3_type);
	}

	uint8_t *l3 = f + l2_len;
	uint8_t *l4 = l3 + l3_len;
	uint32_t l4_len = len - l2_len - l3_len;
	if (s->version == 4) {
		l3[0] = 0x45;
		l3[1] = s->tos;
		wr16(l3 + 2, (uint16_t)(len - l2_len));
		wr16(l3 + 4, s->ip_id);
		wr16(l3 + 6, IPV4_DF);
		l3[8] = 64;
		l3[9] = proto;
		uint8_t src[4] = { 192, 0, 2, 1 }, dst[4] = { 192, 0, 2, 2 };
		memcpy(l3 + 12, src, 4);
		memcpy(l3 + 16, dst, 4);
		uint16_t c = (uint16_t)~csum_ref_fold(csum_ref_sum_be(l3, 20, 0));
		wr16(l3 + 10, c);
	} else {
		wr32(l3, 6u << 28 | (uint32_t)s->tos << 20 | 0x12345);
		wr16(l3 + 4, (uint16_t)l4_len);
		l3[6] = proto;
		l3[7] = 64;
		uint8_t src[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
		uint8_t dst[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
		memcpy(l3 + 8, src, 16);
		memcpy(l3 + 24, dst, 16);
	}

	wr16(l4, s->src_port ? s->src_port : 40000);
	wr16(l4 + 2, s->dst_port ? s->dst_port : 5201);
	uint16_t csum_offset;
	if (proto == IP_PROTO_TCP) {
		wr32(l4 + 4, s->seq);
		wr32(l4 + 8, 0xa0b0c0d0);
		l4[12] = (uint8_t)((TCP_HDR_LEN + s->tcp_opt_len) / 4) << 4;
		l4[13] = s->tcp_flags ? s->tcp_flags : TCP_ACK;
		wr16(l4 + 14, 512);
		uint8_t *opt = l4 + TCP_HDR_LEN;
		for (uint32_t i = 0; i < s->tcp_opt_len; i++)
			opt[i] = TCP_OPT_NOP;
		if (s->tcp_opt_len >= 12) {
			opt[2] = TCP_OPT_TIMESTAMP;
			opt[3] = 10;
			wr32(opt + 4, 0x11223344);
			wr32(opt + 8, 0x55667788);
		}
		csum_offset = TCP_CSUM_OFFSET;
	} else {
		wr16(l4 + 4, (uint16_t)l4_len);
		csum_offset = UDP_CSUM_OFFSET;
	}
	uint8_t *payload = l4 + l4_hdr;
	for (uint32_t i = 0; i < s->payload_len; i++)
		payload[i] = payload_byte(i);
	wr16(l4 + csum_offset, csum_ref_fold(csum_ref_pseudo_l3(s->version, l3, proto, l4_len)));

	pkt->l2_ofs = 0;
	pkt->l3_ofs = (uint16_t)l2_len;
	pkt->l4_ofs = (uint16_t)(l2_len + l3_len);
	pkt->payload_ofs = (uint16_t)(l2_len + l3_len + l4_hdr);
	memset(&pkt->ol, 0, sizeof(pkt->ol));
	pkt->ol.flags = PKT_OL_NEEDS_CSUM;
	pkt->ol.csum_start = pkt->l4_ofs;
	pkt->ol.csum_offset = csum_offset;
	if (s->mss) {
		if (proto == IP_PROTO_UDP)
			pkt->ol.gso_type = PKT_GSO_UDP_L4;
		else
			pkt->ol.gso_type = s->version == 4 ? PKT_GSO_TCPV4 : PKT_GSO_TCPV6;
		if (s->ecn)
			pkt->ol.gso_type |= PKT_GSO_ECN;
		pkt->ol.gso_size = s->mss;
		pkt->ol.hdr_len = pkt->payload_ofs;
	}
}

#endif
