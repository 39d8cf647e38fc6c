/* Unit tests for src/parse/vnet_hdr_check.c: vnet_hdr_validate() against
 * frames parsed by the real flow_extract(): every drop reason has a case, and
 * the valid corners the over-strict kernel fixes once broke (tiny GSO,
 * payload == gso_size, short last segment, hdr_len == frame length, exactly
 * 128 UDP segments) are tested as hard as the rejects.  The header byte
 * layout (read, write) is tests/unit/packet/test_vnet_hdr.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "packet/csum.h"
#include "packet/hdr.h"
#include "packet/pkt.h"
#include "packet/vnet_hdr.h"
#include "parse/flow_extract.h"
#include "parse/vnet_hdr_check.h"

/* ---- frames -------------------------------------------------------------- */

enum frame_flags {
	FRAME_VLAN = 1 << 0,
	FRAME_IPV4_FIRST_FRAG = 1 << 1,
	FRAME_TCP_OPTS = 1 << 2,     /* 12 bytes of NOPs: doff 8 */
	FRAME_IPV6_HBH = 1 << 3,     /* an 8-byte hop-by-hop header */
	FRAME_VXLAN = 1 << 4,        /* wrapped in outer Eth/IPv4/UDP 4789/VXLAN */
	FRAME_PAYLOAD_IN_FRAGS = 1 << 5,
};

struct frame_spec {
	uint8_t family;   /* 4, 6, or 0 for ARP */
	uint8_t proto;    /* IP_PROTO_TCP, _UDP, _ICMP */
	uint32_t payload; /* L4 payload bytes */
	unsigned flags;
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint32_t put_eth(uint8_t *f, uint16_t type, bool vlan)
{
	static const uint8_t macs[12] = { 0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1 };
	memcpy(f, macs, 12);
	if (vlan) {
		put16(f + 12, ETH_TYPE_VLAN);
		put16(f + 14, 42);
		put16(f + 16, type);
		return ETH_HDR_LEN + VLAN_HDR_LEN;
	}
	put16(f + 12, type);
	return ETH_HDR_LEN;
}

/* Writes an Ethernet frame per `s` into `f`; returns its length and the
 * L4 offset in *l4_out (0 if none). */
static uint32_t build_plain(uint8_t *f, const struct frame_spec *s, uint32_t *l4_out)
{
	*l4_out = 0;
	if (s->family == 0) {
		uint32_t l3 = put_eth(f, ETH_TYPE_ARP, s->flags & FRAME_VLAN);
		uint8_t *a = f + l3;
		memset(a, 0, sizeof(struct arp_eth_ipv4));
		put16(a, 1);
		put16(a + 2, ETH_TYPE_IPV4);
		a[4] = 6;
		a[5] = 4;
		put16(a + 6, 1);
		return l3 + (uint32_t)sizeof(struct arp_eth_ipv4);
	}

	uint32_t l3 = put_eth(f, s->family == 4 ? ETH_TYPE_IPV4 : ETH_TYPE_IPV6, s->flags & FRAME_VLAN);
	uint32_t l4;
	uint32_t l4_hdr = s->proto == IP_PROTO_TCP ? TCP_HDR_LEN + (s->flags & FRAME_TCP_OPTS ? 12 : 0)
			: s->proto == IP_PROTO_UDP ? UDP_HDR_LEN : ICMP_HDR_LEN + 4;
	uint32_t l4_len = l4_hdr + s->payload;
	uint8_t *ip = f + l3;
	const uint8_t *src, *dst;
	if (s->family == 4) {
		static const uint8_t s4[4] = { 192, 0, 2, 1 }, d4[4] = { 192, 0, 2, 2 };
		memset(ip, 0, IPV4_HDR_LEN);
		ip[0] = 0x45;
		put16(ip + 2, (uint16_t)(IPV4_HDR_LEN + l4_len));
		put16(ip + 6, s->flags & FRAME_IPV4_FIRST_FRAG ? IPV4_MF : IPV4_DF);
		ip[8] = 64;
		ip[9] = s->proto;
		memcpy(ip + 12, s4, 4);
		memcpy(ip + 16, d4, 4);
		csum_ipv4_hdr_set(ip, IPV4_HDR_LEN);
		src = s4;
		dst = d4;
		l4 = l3 + IPV4_HDR_LEN;
	} else {
		static const uint8_t s6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
		static const uint8_t d6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
		uint32_t ext = s->flags & FRAME_IPV6_HBH ? 8 : 0;
		memset(ip, 0, IPV6_HDR_LEN + ext);
		ip[0] = 0x60;
		put16(ip + 4, (uint16_t)(ext + l4_len));
		ip[6] = ext ? IP_PROTO_HOPOPTS : s->proto;
		ip[7] = 64;
		memcpy(ip + 8, s6, 16);
		memcpy(ip + 24, d6, 16);
		if (ext) {
			ip[40] = s->proto; /* next header; length 0 = 8 bytes; PadN */
			ip[42] = 1;
			ip[43] = 4;
		}
		src = s6;
		dst = d6;
		l4 = l3 + IPV6_HDR_LEN + ext;
	}

	uint8_t *l4p = f + l4;
	memset(l4p, 0, l4_hdr);
	put16(l4p, 40000);
	put16(l4p + 2, 80);
	uint16_t pseudo;
	if (s->proto == IP_PROTO_TCP) {
		l4p[12] = (uint8_t)((l4_hdr / 4) << 4);
		l4p[13] = TCP_ACK;
		put16(l4p + 14, 512);
		memset(l4p + TCP_HDR_LEN, TCP_OPT_NOP, l4_hdr - TCP_HDR_LEN);
	} else if (s->proto == IP_PROTO_UDP) {
		put16(l4p + 4, (uint16_t)l4_len);
	} else {
		l4p[0] = 8; /* echo request */
	}
	for (uint32_t i = 0; i < s->payload; i++)
		l4p[l4_hdr + i] = (uint8_t)(i * 13 + 5);
	if (s->family == 4)
		pseudo = csum_fold_nocomplement(csum_pseudo_ipv4(src, dst, s->proto, l4_len));
	else
		pseudo = csum_fold_nocomplement(csum_pseudo_ipv6(src, dst, s->proto, l4_len));
	if (s->proto == IP_PROTO_TCP)
		memcpy(l4p + TCP_CSUM_OFFSET, &pseudo, 2);
	else if (s->proto == IP_PROTO_UDP)
		memcpy(l4p + UDP_CSUM_OFFSET, &pseudo, 2);
	*l4_out = l4;
	return l4 + l4_len;
}

/* Wraps the inner frame at f + VXLAN_ENCAP_LEN_IPV4 in outer headers. */
static uint32_t wrap_vxlan(uint8_t *f, uint32_t inner_len)
{
	uint32_t l3 = put_eth(f, ETH_TYPE_IPV4, false);
	uint8_t *ip = f + l3;
	uint32_t udp_len = UDP_HDR_LEN + VXLAN_HDR_LEN + inner_len;
	memset(ip, 0, IPV4_HDR_LEN);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(IPV4_HDR_LEN + udp_len));
	ip[8] = 64;
	ip[9] = IP_PROTO_UDP;
	ip[12] = 198, ip[13] = 51, ip[14] = 100, ip[15] = 1;
	ip[16] = 198, ip[17] = 51, ip[18] = 100, ip[19] = 2;
	csum_ipv4_hdr_set(ip, IPV4_HDR_LEN);
	uint8_t *udp = ip + IPV4_HDR_LEN;
	put16(udp, 49152);
	put16(udp + 2, VXLAN_DEFAULT_PORT);
	put16(udp + 4, (uint16_t)udp_len);
	put16(udp + 6, 0);
	uint8_t *vx = udp + UDP_HDR_LEN;
	memset(vx, 0, VXLAN_HDR_LEN);
	vx[0] = 0x08;
	vx[6] = 99; /* VNI 99 << 8 */
	return VXLAN_ENCAP_LEN_IPV4 + inner_len;
}

struct frame {
	struct pkt_pool *pool;
	struct pkt *pkt;
	struct flow_key key;
	uint32_t l4;  /* innermost L4 offset from the frame start */
	uint32_t len;
};

static uint8_t frame_buf[PKT_MAX_FRAME];

/* Builds, loads into a pkt and parses with the real flow_extract(). */
static void frame_make(struct frame *fr, const struct frame_spec *s)
{
	uint32_t l4 = 0, len;
	if (s->flags & FRAME_VXLAN) {
		uint32_t inner = build_plain(frame_buf + VXLAN_ENCAP_LEN_IPV4, s, &l4);
		len = wrap_vxlan(frame_buf, inner);
		l4 += VXLAN_ENCAP_LEN_IPV4;
	} else {
		len = build_plain(frame_buf, s, &l4);
	}
	assert_int_equal(pkt_pool_create(1, &fr->pool), 0);
	fr->pkt = pkt_alloc(fr->pool);
	assert_non_null(fr->pkt);
	uint32_t linear = len;
	if ((s->flags & FRAME_PAYLOAD_IN_FRAGS) && s->payload > 0)
		linear = len - s->payload;
	assert_int_equal(pkt_set_data(fr->pkt, frame_buf, linear), 0);
	/* Odd-sized frags, as GRO would leave them. */
	for (uint32_t at = linear; at < len;) {
		uint32_t n = len - at < 1001 ? len - at : 1001;
		assert_int_equal(pkt_add_frag(fr->pkt, frame_buf + at, n, NULL), 0);
		at += n;
	}
	assert_int_equal(flow_extract(fr->pkt, s->flags & FRAME_VXLAN ? VXLAN_DEFAULT_PORT : 0, &fr->key),
			 DROP_NONE);
	fr->l4 = l4;
	fr->len = len;
}

static void frame_destroy(struct frame *fr)
{
	pkt_free(fr->pkt);
	pkt_pool_destroy(fr->pool);
}

static uint16_t csum_offset_for(uint8_t proto)
{
	return proto == IP_PROTO_TCP ? TCP_CSUM_OFFSET : UDP_CSUM_OFFSET;
}

/* Sets a well-formed header for the frame: NEEDS_CSUM at the L4 header,
 * GSO of `gso_type` with `gso_size` (0 = no GSO). */
static void frame_set_offload(struct frame *fr, uint8_t proto, uint8_t gso_type, uint16_t gso_size)
{
	struct pkt_offload *ol = &fr->pkt->ol;
	memset(ol, 0, sizeof(*ol));
	ol->flags = PKT_OL_NEEDS_CSUM;
	ol->gso_type = gso_type;
	ol->gso_size = gso_size;
	ol->csum_start = (uint16_t)fr->l4;
	ol->csum_offset = csum_offset_for(proto);
}

/* Validates a header on a freshly built frame. */
static enum drop_reason check(const struct frame_spec *s, const struct pkt_offload *ol)
{
	struct frame fr;
	frame_make(&fr, s);
	fr.pkt->ol = *ol;
	enum drop_reason reason = vnet_hdr_validate(fr.pkt, &fr.key);
	frame_destroy(&fr);
	return reason;
}

/* One table row: a frame, a header, the expected reason. */
struct vcase {
	const char *name;
	struct frame_spec frame;
	/* Header: NEEDS_CSUM at the frame's own L4 unless overridden. */
	uint8_t flags;
	uint8_t gso_type;
	uint16_t gso_size;
	int32_t csum_start;  /* -1: the frame's L4 offset */
	int32_t csum_offset; /* -1: right for the protocol */
	int32_t hdr_len;     /* -1: the frame length; -2: frame length + 1 */
	enum drop_reason expect;
};

enum { CS = -1, CO = -1, NCS = PKT_OL_NEEDS_CSUM };

static const struct frame_spec TCP4 = { 4, IP_PROTO_TCP, 1000, 0 };
static const struct frame_spec TCP6 = { 6, IP_PROTO_TCP, 1000, 0 };
static const struct frame_spec UDP4 = { 4, IP_PROTO_UDP, 1000, 0 };
static const struct frame_spec UDP6 = { 6, IP_PROTO_UDP, 1000, 0 };

static void run_cases(const struct vcase *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct vcase *c = &cases[i];
		struct frame fr;
		frame_make(&fr, &c->frame);
		struct pkt_offload *ol = &fr.pkt->ol;
		memset(ol, 0, sizeof(*ol));
		ol->flags = c->flags;
		ol->gso_type = c->gso_type;
		ol->gso_size = c->gso_size;
		ol->csum_start = (uint16_t)(c->csum_start == CS ? (int32_t)fr.l4 : c->csum_start);
		ol->csum_offset = (uint16_t)(c->csum_offset == CO ? csum_offset_for(c->frame.proto) : c->csum_offset);
		ol->hdr_len = (uint16_t)(c->hdr_len == -1 ? (int32_t)fr.len : c->hdr_len == -2 ? (int32_t)fr.len + 1 : c->hdr_len);
		enum drop_reason got = vnet_hdr_validate(fr.pkt, &fr.key);
		if (got != c->expect)
			fail_msg("case %zu \"%s\": expected %s, got %s", i, c->name, drop_reason_name(c->expect),
				 drop_reason_name(got));
		/* A frame that passes can have its checksum completed, and it
		 * then verifies: the header said something true. */
		if (got == DROP_NONE && (c->flags & NCS)) {
			assert_int_equal(csum_complete_partial(fr.pkt, ol->csum_start, ol->csum_offset), 0);
			uint16_t l3 = pkt_innermost_l3(fr.pkt);
			uint32_t l4_len = pkt_len(fr.pkt) - ol->csum_start;
			uint32_t pseudo = fr.key.nw_family == 4
				? csum_pseudo_ipv4(fr.pkt->data + l3 + 12, fr.pkt->data + l3 + 16, fr.key.nw_proto, l4_len)
				: csum_pseudo_ipv6(fr.pkt->data + l3 + 8, fr.pkt->data + l3 + 24, fr.key.nw_proto, l4_len);
			if (csum_fold(csum_pkt(fr.pkt, ol->csum_start, l4_len, pseudo)) != 0)
				fail_msg("case %zu \"%s\": completed checksum does not verify", i, c->name);
		}
		frame_destroy(&fr);
	}
}

/* ---- valid frames, corners included ------------------------------------- */

static void test_valid_frames_pass(void **state)
{
	(void)state;
	const struct vcase cases[] = {
		{ "no offload, TCPv4", TCP4, 0, 0, 0, 0, 0, 0, DROP_NONE },
		{ "no offload, ARP", { 0, 0, 0, 0 }, 0, 0, 0, 0, 0, 0, DROP_NONE },
		{ "no offload, ICMP", { 4, IP_PROTO_ICMP, 10, 0 }, 0, 0, 0, 0, 0, 0, DROP_NONE },
		{ "DATA_VALID alone", UDP4, PKT_OL_DATA_VALID, 0, 0, 0, 0, 0, DROP_NONE },
		{ "csum TCPv4", TCP4, NCS, 0, 0, CS, CO, 0, DROP_NONE },
		{ "csum TCPv6", TCP6, NCS, 0, 0, CS, CO, 0, DROP_NONE },
		{ "csum UDPv4", UDP4, NCS, 0, 0, CS, CO, 0, DROP_NONE },
		{ "csum UDPv6", UDP6, NCS, 0, 0, CS, CO, 0, DROP_NONE },
		{ "csum TCPv4, empty payload", { 4, IP_PROTO_TCP, 0, 0 }, NCS, 0, 0, CS, CO, 0, DROP_NONE },
		{ "csum, VLAN tag", { 4, IP_PROTO_TCP, 500, FRAME_VLAN }, NCS, 0, 0, CS, CO, 0, DROP_NONE },
		{ "csum, TCP options", { 4, IP_PROTO_TCP, 500, FRAME_TCP_OPTS }, NCS, 0, 0, CS, CO, 0, DROP_NONE },
		{ "csum, IPv6 hop-by-hop", { 6, IP_PROTO_UDP, 500, FRAME_IPV6_HBH }, NCS, 0, 0, CS, CO, 0, DROP_NONE },
		{ "csum, payload in frags", { 4, IP_PROTO_TCP, 5000, FRAME_PAYLOAD_IN_FRAGS }, NCS, 0, 0, CS, CO, 0, DROP_NONE },
		{ "csum, inner TCP of VXLAN", { 4, IP_PROTO_TCP, 700, FRAME_VXLAN }, NCS, 0, 0, CS, CO, 0, DROP_NONE },
		{ "TSO4 64 KB", { 4, IP_PROTO_TCP, 65000, 0 }, NCS, PKT_GSO_TCPV4, 1448, CS, CO, 54, DROP_NONE },
		{ "TSO6 64 KB", { 6, IP_PROTO_TCP, 65000, 0 }, NCS, PKT_GSO_TCPV6, 1428, CS, CO, 74, DROP_NONE },
		{ "TSO4 with ECN", { 4, IP_PROTO_TCP, 3000, 0 }, NCS, PKT_GSO_TCPV4 | PKT_GSO_ECN, 1448, CS, CO, 0, DROP_NONE },
		{ "TSO6 with ECN", { 6, IP_PROTO_TCP, 3000, 0 }, NCS, PKT_GSO_TCPV6 | PKT_GSO_ECN, 1448, CS, CO, 0, DROP_NONE },
		{ "USO4", { 4, IP_PROTO_UDP, 14720, 0 }, NCS, PKT_GSO_UDP_L4, 1472, CS, CO, 0, DROP_NONE },
		{ "USO6", { 6, IP_PROTO_UDP, 14520, 0 }, NCS, PKT_GSO_UDP_L4, 1452, CS, CO, 0, DROP_NONE },
		/* The corners: */
		{ "tiny GSO: payload < gso_size", { 4, IP_PROTO_TCP, 100, 0 }, NCS, PKT_GSO_TCPV4, 1448, CS, CO, 0, DROP_NONE },
		{ "tiny GSO: 1 byte payload", { 6, IP_PROTO_UDP, 1, 0 }, NCS, PKT_GSO_UDP_L4, 1452, CS, CO, 0, DROP_NONE },
		{ "payload == gso_size", { 4, IP_PROTO_TCP, 1448, 0 }, NCS, PKT_GSO_TCPV4, 1448, CS, CO, 0, DROP_NONE },
		{ "short last segment", { 4, IP_PROTO_TCP, 3 * 1448 + 1, 0 }, NCS, PKT_GSO_TCPV4, 1448, CS, CO, 0, DROP_NONE },
		{ "UDP short last segment", { 4, IP_PROTO_UDP, 2 * 1000 + 7, 0 }, NCS, PKT_GSO_UDP_L4, 1000, CS, CO, 0, DROP_NONE },
		{ "USO exactly 128 segments", { 4, IP_PROTO_UDP, 128 * 100, 0 }, NCS, PKT_GSO_UDP_L4, 100, CS, CO, 0, DROP_NONE },
		{ "gso_size 1", { 4, IP_PROTO_TCP, 64, 0 }, NCS, PKT_GSO_TCPV4, 1, CS, CO, 0, DROP_NONE },
		{ "gso_size at the IPv4 maximum", TCP4, NCS, PKT_GSO_TCPV4, 65535 - 40, CS, CO, 0, DROP_NONE },
		{ "gso_size at the IPv6 maximum", TCP6, NCS, PKT_GSO_TCPV6, 65535 - 20, CS, CO, 0, DROP_NONE },
		{ "GSO payload in frags", { 4, IP_PROTO_TCP, 30000, FRAME_PAYLOAD_IN_FRAGS }, NCS, PKT_GSO_TCPV4, 1448, CS, CO, 0, DROP_NONE },
		{ "GSO on inner TCP of VXLAN", { 4, IP_PROTO_TCP, 9000, FRAME_VXLAN }, NCS, PKT_GSO_TCPV4, 1398, CS, CO, 0, DROP_NONE },
		{ "hdr_len == frame length (kernel read side)", TCP4, NCS, PKT_GSO_TCPV4, 500, CS, CO, -1, DROP_NONE },
		{ "hdr_len below the headers (a hint)", TCP4, NCS, PKT_GSO_TCPV4, 500, CS, CO, 10, DROP_NONE },
	};
	run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

/* ---- every reason -------------------------------------------------------- */

static void test_bad_gso_type(void **state)
{
	(void)state;
	const struct vcase cases[] = {
		{ "UFO", UDP4, NCS, PKT_GSO_UDP, 1000, CS, CO, 0, DROP_VNET_HDR_BAD_GSO_TYPE },
		{ "type 2", TCP4, NCS, 2, 1000, CS, CO, 0, DROP_VNET_HDR_BAD_GSO_TYPE },
		{ "type 6", UDP4, NCS, 6, 1000, CS, CO, 0, DROP_VNET_HDR_BAD_GSO_TYPE },
		{ "type 0x7f", TCP4, NCS, 0x7f, 1000, CS, CO, 0, DROP_VNET_HDR_BAD_GSO_TYPE },
		{ "type 0xff", TCP4, NCS, 0xff, 1000, CS, CO, 0, DROP_VNET_HDR_BAD_GSO_TYPE },
	};
	run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_ecn_only_with_tcp(void **state)
{
	(void)state;
	const struct vcase cases[] = {
		{ "USO with ECN", UDP4, NCS, PKT_GSO_UDP_L4 | PKT_GSO_ECN, 500, CS, CO, 0, DROP_VNET_HDR_ECN },
		{ "ECN without GSO", TCP4, NCS, PKT_GSO_ECN, 0, CS, CO, 0, DROP_VNET_HDR_ECN },
	};
	run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_gso_without_csum(void **state)
{
	(void)state;
	const struct vcase cases[] = {
		{ "TSO4 without NEEDS_CSUM", TCP4, 0, PKT_GSO_TCPV4, 500, CS, CO, 0, DROP_VNET_HDR_GSO_WITHOUT_CSUM },
		{ "USO with DATA_VALID only", UDP6, PKT_OL_DATA_VALID, PKT_GSO_UDP_L4, 500, CS, CO, 0,
		  DROP_VNET_HDR_GSO_WITHOUT_CSUM },
	};
	run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_gso_type_mismatch(void **state)
{
	(void)state;
	const struct vcase cases[] = {
		{ "TCPV4 on IPv6", TCP6, NCS, PKT_GSO_TCPV4, 500, CS, CO, 0, DROP_VNET_HDR_GSO_MISMATCH },
		{ "TCPV6 on IPv4", TCP4, NCS, PKT_GSO_TCPV6, 500, CS, CO, 0, DROP_VNET_HDR_GSO_MISMATCH },
		{ "TCPV4 on UDP", UDP4, NCS, PKT_GSO_TCPV4, 500, CS, CO, 0, DROP_VNET_HDR_GSO_MISMATCH },
		{ "UDP_L4 on TCP", TCP4, NCS, PKT_GSO_UDP_L4, 500, CS, CO, 0, DROP_VNET_HDR_GSO_MISMATCH },
		{ "TCPV4 on ICMP", { 4, IP_PROTO_ICMP, 1000, 0 }, NCS, PKT_GSO_TCPV4, 500, 34, 16, 0,
		  DROP_VNET_HDR_GSO_MISMATCH },
		{ "TCPV4 on ARP", { 0, 0, 0, 0 }, NCS, PKT_GSO_TCPV4, 500, 34, 16, 0, DROP_VNET_HDR_GSO_MISMATCH },
		{ "TCPV4 on a first fragment", { 4, IP_PROTO_TCP, 1000, FRAME_IPV4_FIRST_FRAG }, NCS, PKT_GSO_TCPV4,
		  500, CS, CO, 0, DROP_VNET_HDR_GSO_MISMATCH },
	};
	run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_gso_size(void **state)
{
	(void)state;
	const struct vcase cases[] = {
		{ "gso_size 0", TCP4, NCS, PKT_GSO_TCPV4, 0, CS, CO, 0, DROP_VNET_HDR_GSO_SIZE },
		{ "gso_size 0, UDP", UDP6, NCS, PKT_GSO_UDP_L4, 0, CS, CO, 0, DROP_VNET_HDR_GSO_SIZE },
		{ "gso_size 0xffff", TCP4, NCS, PKT_GSO_TCPV4, 0xffff, CS, CO, 0, DROP_VNET_HDR_GSO_SIZE },
		{ "gso_size 0xffff, IPv6", TCP6, NCS, PKT_GSO_TCPV6, 0xffff, CS, CO, 0, DROP_VNET_HDR_GSO_SIZE },
		{ "gso_size past the IPv4 maximum", TCP4, NCS, PKT_GSO_TCPV4, 65535 - 40 + 1, CS, CO, 0,
		  DROP_VNET_HDR_GSO_SIZE },
		{ "gso_size past the IPv6 maximum", TCP6, NCS, PKT_GSO_TCPV6, 65535 - 20 + 1, CS, CO, 0,
		  DROP_VNET_HDR_GSO_SIZE },
		{ "gso_size past the maximum with TCP options", { 4, IP_PROTO_TCP, 100, FRAME_TCP_OPTS }, NCS,
		  PKT_GSO_TCPV4, 65535 - 52 + 1, CS, CO, 0, DROP_VNET_HDR_GSO_SIZE },
		{ "GSO with no payload", { 4, IP_PROTO_TCP, 0, 0 }, NCS, PKT_GSO_TCPV4, 1448, CS, CO, 0,
		  DROP_VNET_HDR_GSO_SIZE },
	};
	run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_too_many_udp_segments(void **state)
{
	(void)state;
	const struct vcase cases[] = {
		{ "129 segments", { 4, IP_PROTO_UDP, 128 * 100 + 1, 0 }, NCS, PKT_GSO_UDP_L4, 100, CS, CO, 0,
		  DROP_VNET_HDR_TOO_MANY_SEGMENTS },
		{ "gso_size 1, 200 bytes", { 6, IP_PROTO_UDP, 200, 0 }, NCS, PKT_GSO_UDP_L4, 1, CS, CO, 0,
		  DROP_VNET_HDR_TOO_MANY_SEGMENTS },
	};
	run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_hdr_len_past_frame(void **state)
{
	(void)state;
	const struct vcase cases[] = {
		{ "hdr_len = length + 1", TCP4, NCS, PKT_GSO_TCPV4, 500, CS, CO, -2, DROP_VNET_HDR_HDR_LEN },
		{ "hdr_len 0xffff, no GSO", UDP4, 0, 0, 0, 0, 0, 0xffff, DROP_VNET_HDR_HDR_LEN },
	};
	run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_csum_start(void **state)
{
	(void)state;
	const struct vcase cases[] = {
		{ "csum_start = frame length", { 4, IP_PROTO_TCP, 100, 0 }, NCS, 0, 0, 14 + 20 + 20 + 100, CO, 0,
		  DROP_VNET_HDR_CSUM_START },
		{ "csum_start 0xffff", TCP4, NCS, 0, 0, 0xffff, CO, 0, DROP_VNET_HDR_CSUM_START },
		{ "csum_start at L3", TCP4, NCS, 0, 0, 14, CO, 0, DROP_VNET_HDR_CSUM_START },
		{ "csum_start one past L4", UDP4, NCS, 0, 0, 35, CO, 0, DROP_VNET_HDR_CSUM_START },
		{ "csum_start 199 on TSO (89add40066f9)", TCP4, NCS, PKT_GSO_TCPV4, 500, 199, 1536, 0,
		  DROP_VNET_HDR_CSUM_START },
		{ "csum_start at outer UDP of VXLAN", { 4, IP_PROTO_TCP, 700, FRAME_VXLAN }, NCS, 0, 0, 34, 6, 0,
		  DROP_VNET_HDR_CSUM_START },
		{ "NEEDS_CSUM on ICMP", { 4, IP_PROTO_ICMP, 100, 0 }, NCS, 0, 0, 34, 2, 0, DROP_VNET_HDR_CSUM_START },
		{ "NEEDS_CSUM on ARP", { 0, 0, 0, 0 }, NCS, 0, 0, 14, 6, 0, DROP_VNET_HDR_CSUM_START },
		{ "NEEDS_CSUM on a fragment", { 4, IP_PROTO_UDP, 100, FRAME_IPV4_FIRST_FRAG }, NCS, 0, 0, CS, CO, 0,
		  DROP_VNET_HDR_CSUM_START },
	};
	run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_csum_offset(void **state)
{
	(void)state;
	const struct vcase cases[] = {
		{ "TCP with 6", TCP4, NCS, 0, 0, CS, 6, 0, DROP_VNET_HDR_CSUM_OFFSET },
		{ "UDP with 16", UDP6, NCS, 0, 0, CS, 16, 0, DROP_VNET_HDR_CSUM_OFFSET },
		{ "TSO with 1536", TCP4, NCS, PKT_GSO_TCPV4, 500, CS, 1536, 0, DROP_VNET_HDR_CSUM_OFFSET },
		{ "USO with 0", UDP4, NCS, PKT_GSO_UDP_L4, 500, CS, 0, 0, DROP_VNET_HDR_CSUM_OFFSET },
		{ "0xffff", TCP6, NCS, 0, 0, CS, 0xffff, 0, DROP_VNET_HDR_CSUM_OFFSET },
	};
	run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}

/* Offsets set by hand: the L4 header straddles the end of the linear part,
 * which flow_extract() never produces; validate must still refuse to point
 * csum_complete_partial() at bytes outside the linear part. */
static void test_csum_field_outside_linear(void **state)
{
	(void)state;
	struct frame fr;
	frame_make(&fr, &UDP4);
	frame_set_offload(&fr, IP_PROTO_UDP, PKT_GSO_NONE, 0);
	assert_int_equal(vnet_hdr_validate(fr.pkt, &fr.key), DROP_NONE);
	pkt_trim(fr.pkt, 14 + 20 + 4);
	assert_int_equal(pkt_add_frag(fr.pkt, frame_buf + 38, 1000 + 4, NULL), 0);
	assert_int_equal(vnet_hdr_validate(fr.pkt, &fr.key), DROP_VNET_HDR_CSUM_OFFSET);
	frame_destroy(&fr);
}

/* The first failing check decides, in the documented order. */
static void test_reason_order(void **state)
{
	(void)state;
	struct pkt_offload ol = { .flags = 0, .gso_type = PKT_GSO_UDP, .gso_size = 0, .csum_start = 0xffff };
	assert_int_equal(check(&TCP4, &ol), DROP_VNET_HDR_BAD_GSO_TYPE);
	ol.gso_type = PKT_GSO_UDP_L4 | PKT_GSO_ECN;
	assert_int_equal(check(&TCP4, &ol), DROP_VNET_HDR_ECN);
	ol.gso_type = PKT_GSO_UDP_L4;
	assert_int_equal(check(&TCP4, &ol), DROP_VNET_HDR_GSO_WITHOUT_CSUM);
	ol.flags = PKT_OL_NEEDS_CSUM;
	assert_int_equal(check(&TCP4, &ol), DROP_VNET_HDR_GSO_MISMATCH);
	ol.gso_type = PKT_GSO_TCPV4;
	assert_int_equal(check(&TCP4, &ol), DROP_VNET_HDR_GSO_SIZE);
	ol.gso_size = 1448;
	ol.hdr_len = 0xffff;
	assert_int_equal(check(&TCP4, &ol), DROP_VNET_HDR_HDR_LEN);
	ol.hdr_len = 0;
	assert_int_equal(check(&TCP4, &ol), DROP_VNET_HDR_CSUM_START);
	ol.csum_start = 34;
	assert_int_equal(check(&TCP4, &ol), DROP_VNET_HDR_CSUM_OFFSET);
	ol.csum_offset = 16;
	assert_int_equal(check(&TCP4, &ol), DROP_NONE);
}

static void test_recompute_hdr_len(void **state)
{
	(void)state;
	const struct {
		struct frame_spec frame;
		uint16_t expect;
	} cases[] = {
		{ TCP4, 14 + 20 + 20 },
		{ TCP6, 14 + 40 + 20 },
		{ UDP4, 14 + 20 + 8 },
		{ { 4, IP_PROTO_TCP, 100, FRAME_VLAN | FRAME_TCP_OPTS }, 18 + 20 + 32 },
		{ { 6, IP_PROTO_UDP, 100, FRAME_IPV6_HBH }, 14 + 48 + 8 },
		{ { 4, IP_PROTO_TCP, 100, FRAME_VXLAN }, 50 + 14 + 20 + 20 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct frame fr;
		frame_make(&fr, &cases[i].frame);
		fr.pkt->ol.hdr_len = 7;
		vnet_hdr_recompute_hdr_len(fr.pkt);
		assert_int_equal(fr.pkt->ol.hdr_len, cases[i].expect);
		frame_destroy(&fr);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_frames_pass),
		cmocka_unit_test(test_bad_gso_type),
		cmocka_unit_test(test_ecn_only_with_tcp),
		cmocka_unit_test(test_gso_without_csum),
		cmocka_unit_test(test_gso_type_mismatch),
		cmocka_unit_test(test_gso_size),
		cmocka_unit_test(test_too_many_udp_segments),
		cmocka_unit_test(test_hdr_len_past_frame),
		cmocka_unit_test(test_csum_start),
		cmocka_unit_test(test_csum_offset),
		cmocka_unit_test(test_csum_field_outside_linear),
		cmocka_unit_test(test_reason_order),
		cmocka_unit_test(test_recompute_hdr_len),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
