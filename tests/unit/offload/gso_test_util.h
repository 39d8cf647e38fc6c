/* Test helpers for the GSO / VXLAN encap tests: a TSO frame builder that
 * does not depend on the code under test; its checksums come from the naive
 * reference in tests/unit/support/csum_reference.h, not from packet/csum.c.
 * Header-only, static functions, included by the offload tests (which link
 * frame_builder.o, as every unit test does). */
#ifndef VX_TESTS_GSO_TEST_UTIL_H
#define VX_TESTS_GSO_TEST_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "csum_reference.h"
#include "frame_builder.h"
#include "packet/bytes.h"
#include "packet/hdr.h"
#include "packet/pkt.h"

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
 * the pseudo-header sum in the L4 checksum field.  The bytes come from
 * frame_builder (FB_CSUM_PARTIAL), so no GSO code or csum.c is involved. */
static inline void tso_build(struct pkt *pkt, const struct tso_spec *s)
{
	static uint8_t payload[65536];
	uint8_t proto = s->proto ? s->proto : IP_PROTO_TCP;
	uint32_t l2_len = ETH_HDR_LEN + (s->vlan ? VLAN_HDR_LEN : 0);
	uint32_t l3_len = s->version == 4 ? IPV4_HDR_LEN : IPV6_HDR_LEN;
	uint32_t l4_hdr = proto == IP_PROTO_TCP ? TCP_HDR_LEN + s->tcp_opt_len : UDP_HDR_LEN;
	uint32_t len = l2_len + l3_len + l4_hdr + s->payload_len;
	uint8_t tcp_opts[40];
	struct fb_frame fb;

	fb_frame_init(&fb, (uint8_t)s->version, proto);
	if (s->vlan) {
		fb.n_vlans = 1;
		fb.vlan_tpid[0] = ETH_TYPE_VLAN;
		fb.vlan_tci[0] = 42;
	}
	fb.tos = s->tos;
	fb.ip_id = s->ip_id;
	fb.ipv6_label = 0x12345;
	fb.src_port = s->src_port ? s->src_port : 40000;
	fb.dst_port = s->dst_port ? s->dst_port : 5201;
	fb.seq = s->seq;
	fb.ack = 0xa0b0c0d0;
	fb.tcp_flags = s->tcp_flags ? s->tcp_flags : TCP_ACK;
	fb.window = 512;
	/* NOPs, with a timestamp option after the first two when there is room. */
	memset(tcp_opts, TCP_OPT_NOP, sizeof(tcp_opts));
	if (s->tcp_opt_len >= 12) {
		tcp_opts[2] = TCP_OPT_TIMESTAMP;
		tcp_opts[3] = 10;
		store_be32(tcp_opts + 4, 0x11223344);
		store_be32(tcp_opts + 8, 0x55667788);
	}
	fb.tcp_opts = tcp_opts;
	fb.tcp_opts_len = s->tcp_opt_len;
	for (uint32_t i = 0; i < s->payload_len; i++)
		payload[i] = payload_byte(i);
	fb.payload = payload;
	fb.payload_len = s->payload_len;
	fb.csum = FB_CSUM_PARTIAL;

	pkt_reset(pkt);
	if (fb_build(&fb, pkt_put(pkt, len), len, NULL) != len)
		abort(); /* a tso_spec the builder cannot express: a bug in the test */

	uint16_t csum_offset = proto == IP_PROTO_TCP ? TCP_CSUM_OFFSET : UDP_CSUM_OFFSET;
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
