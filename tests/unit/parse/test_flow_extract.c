/* Unit tests for src/parse/flow_extract.c: the numbered table.
 *
 * One frame per case (like WireGuard's selftest/counter.c), built by
 * fx_frames.c, optionally patched byte by byte and cut, the VXLAN port to
 * use, and the expected drop reason (plus, for valid corners, a check of the
 * key and offsets).  There is a case for every drop reason flow_extract can
 * return, and every valid frame of the table is cut at every length (the
 * truncation sweep).  Exact keys, VXLAN, frags, TCP options and SCTP are in
 * test_flow_extract_keys.c.
 *
 * On a mismatch the frame is dumped in hex with the case number. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "flow_invariants.h"
#include "fx_frames.h"
#include "packet/hdr.h"
#include "parse/flow_extract.h"

/* ---- the table -------------------------------------------------------------- */

struct patch {
	uint16_t ofs1; /* offset + 1; 0 ends the list */
	uint8_t val;
};
#define P(o, v) { (o) + 1, (v) }

struct frame_case {
	unsigned n;
	const char *what;
	size_t (*fx_build)(uint8_t *buf);
	struct patch patch[4];
	size_t cut; /* 0: keep the whole frame */
	uint16_t vxlan_port;
	enum drop_reason want;
	void (*check)(const struct pkt *p, const struct flow_key *key);
};

/* Frame offsets used by the patches (no VLAN): IPv4 at 14 (ver_ihl 14,
 * tot_len 16, frag 20, proto 23), its L4 at 34 (TCP doff 46, options 54;
 * UDP len 38); IPv6 at 14 (payload_len 18, next 20), ext/L4 at 54.  Outer
 * IPv4 VXLAN: UDP at 34, VXLAN flags 42, VNI 46, inner Ethernet 50, inner
 * IP 64, inner L4 84. */

/* Checks of valid table cases record the first mismatch instead of
 * aborting, so that run_case() can dump the frame with the case number. */
static char expect_failure[256];

static void expect_failed(int line, const char *what, unsigned long long got, unsigned long long want)
{
	if (expect_failure[0] == 0)
		snprintf(expect_failure, sizeof(expect_failure), "line %d: %s: got %llu (%#llx), want %llu (%#llx)",
			 line, what, got, got, want, want);
}

#define EXPECT_EQ(got, want)                                                                  \
	do {                                                                                  \
		unsigned long long got_ = (unsigned long long)(got), want_ = (unsigned long long)(want); \
		if (got_ != want_)                                                            \
			expect_failed(__LINE__, #got, got_, want_);                           \
	} while (0)
#define EXPECT_TRUE(cond) EXPECT_EQ(!!(cond), 1)
#define EXPECT_MEM(got, want, size) EXPECT_EQ(memcmp((got), (want), (size)), 0)

static void check_padding_trimmed(const struct pkt *p, const struct flow_key *key)
{
	EXPECT_EQ(p->size, 54); /* 60 on the wire */
	EXPECT_EQ(p->payload_ofs, 54);
	EXPECT_EQ(key->tcp_flags, TCP_ACK);
}

static void check_udp6_trimmed(const struct pkt *p, const struct flow_key *key)
{
	EXPECT_EQ(p->size, 14 + 40 + 8 + 4);
	EXPECT_EQ(p->payload_ofs, 62);
	EXPECT_EQ(key->nw_proto, IP_PROTO_UDP);
}

static void check_proto0(const struct pkt *p, const struct flow_key *key)
{
	EXPECT_EQ(key->nw_family, 4);
	EXPECT_EQ(key->nw_proto, 0);
	EXPECT_EQ(p->l4_ofs, 34);
	EXPECT_EQ(p->payload_ofs, PKT_OFS_NONE);
	EXPECT_EQ(p->size, 54);
}

static void check_gre(const struct pkt *p, const struct flow_key *key)
{
	EXPECT_EQ(key->nw_proto, 47);
	EXPECT_EQ(p->l4_ofs, 34);
	EXPECT_EQ(p->payload_ofs, PKT_OFS_NONE);
}

static void check_unknown_type(const struct pkt *p, const struct flow_key *key)
{
	EXPECT_EQ(key->dl_type, 0x88b5);
	EXPECT_EQ(key->nw_family, 0);
	EXPECT_EQ(key->nw_proto, 0);
	EXPECT_EQ(p->l2_ofs, 0);
	EXPECT_EQ(p->l3_ofs, PKT_OFS_NONE);
}

static void check_8023(const struct pkt *p, const struct flow_key *key)
{
	EXPECT_EQ(key->dl_type, FLOW_DL_TYPE_NONE);
	EXPECT_EQ(p->l3_ofs, PKT_OFS_NONE);
	EXPECT_EQ(p->size, 60);
}

static void check_frag_first4(const struct pkt *p, const struct flow_key *key)
{
	EXPECT_EQ(key->nw_frag, FLOW_FRAG_ANY);
	EXPECT_EQ(key->tp_src, 1000);
	EXPECT_EQ(p->payload_ofs, 42);
}

static void check_frag_later(const struct pkt *p, const struct flow_key *key)
{
	EXPECT_EQ(key->nw_frag, FLOW_FRAG_ANY | FLOW_FRAG_LATER);
	EXPECT_EQ(key->nw_proto, IP_PROTO_UDP);
	EXPECT_EQ(key->tp_src, 0);
	EXPECT_EQ(p->l4_ofs, PKT_OFS_NONE);
	EXPECT_EQ(p->payload_ofs, PKT_OFS_NONE);
}

static void check_vlan1(const struct pkt *p, const struct flow_key *key)
{
	EXPECT_EQ(key->n_vlans, 1);
	EXPECT_EQ(key->vlan_tpid[0], ETH_TYPE_VLAN);
	EXPECT_EQ(key->vlan_tci[0], 0x2064);
	EXPECT_EQ(key->vlan_tci[1], 0);
	EXPECT_EQ(key->dl_type, ETH_TYPE_IPV4);
	EXPECT_EQ(p->l3_ofs, 18);
}

static void check_9100(const struct pkt *p, const struct flow_key *key)
{
	EXPECT_EQ(key->n_vlans, 1);
	EXPECT_EQ(key->vlan_tpid[0], ETH_TYPE_QINQ_OLD);
	EXPECT_EQ(key->vlan_tci[0], 5);
	EXPECT_EQ(p->l4_ofs, 38);
}

static void check_qinq(const struct pkt *p, const struct flow_key *key)
{
	EXPECT_EQ(key->n_vlans, 2);
	EXPECT_EQ(key->vlan_tpid[0], ETH_TYPE_QINQ);
	EXPECT_EQ(key->vlan_tci[0], 10);
	EXPECT_EQ(key->vlan_tpid[1], ETH_TYPE_VLAN);
	EXPECT_EQ(key->vlan_tci[1], 0xe014);
	EXPECT_EQ(key->dl_type, ETH_TYPE_IPV6);
	EXPECT_EQ(p->l3_ofs, 22);
	EXPECT_EQ(p->l4_ofs, 62);
}

static void check_icmp4(const struct pkt *p, const struct flow_key *key)
{
	EXPECT_EQ(key->nw_proto, IP_PROTO_ICMP);
	EXPECT_EQ(key->tp_src, 8);
	EXPECT_EQ(key->tp_dst, 0);
	EXPECT_EQ(p->payload_ofs, 38);
}

static void check_icmp6(const struct pkt *p, const struct flow_key *key)
{
	EXPECT_EQ(key->nw_proto, IP_PROTO_ICMPV6);
	EXPECT_EQ(key->tp_src, 135);
	EXPECT_EQ(p->payload_ofs, 58);
}

static void check_arp(const struct pkt *p, const struct flow_key *key)
{
	static const uint8_t spa[4] = { 192, 0, 2, 1 }, tpa[4] = { 192, 0, 2, 2 };
	EXPECT_EQ(key->dl_type, ETH_TYPE_ARP);
	EXPECT_EQ(key->nw_family, 0);
	EXPECT_EQ(key->nw_proto, 2);
	EXPECT_MEM(key->nw_src, spa, 4);
	EXPECT_MEM(key->nw_dst, tpa, 4);
	EXPECT_MEM(key->arp_sha, key->dl_src, 6);
	EXPECT_MEM(key->arp_tha, key->dl_dst, 6);
	EXPECT_EQ(p->l3_ofs, 14);
	EXPECT_EQ(p->l4_ofs, PKT_OFS_NONE);
}

static void check_ipv6_ext(const struct pkt *p, const struct flow_key *key, uint16_t l4,
			   uint8_t proto, uint8_t frag)
{
	EXPECT_EQ(key->nw_family, 6);
	EXPECT_EQ(key->nw_proto, proto);
	EXPECT_EQ(key->nw_frag, frag);
	EXPECT_EQ(p->l4_ofs, l4);
	if (proto == IP_PROTO_UDP || proto == IP_PROTO_TCP)
		EXPECT_EQ(key->tp_dst, 2000);
}

static void check_hbh(const struct pkt *p, const struct flow_key *k) { check_ipv6_ext(p, k, 62, IP_PROTO_TCP, 0); }
static void check_routing(const struct pkt *p, const struct flow_key *k) { check_ipv6_ext(p, k, 78, IP_PROTO_UDP, 0); }
static void check_dstopts(const struct pkt *p, const struct flow_key *k) { check_ipv6_ext(p, k, 70, IP_PROTO_TCP, 0); }
static void check_ah(const struct pkt *p, const struct flow_key *k) { check_ipv6_ext(p, k, 78, IP_PROTO_TCP, 0); }
static void check_frag6_first(const struct pkt *p, const struct flow_key *k) { check_ipv6_ext(p, k, 62, IP_PROTO_UDP, FLOW_FRAG_ANY); }
static void check_all_ext(const struct pkt *p, const struct flow_key *k) { check_ipv6_ext(p, k, 54 + 8 + 8 + 8 + 8 + 12 + 24, IP_PROTO_UDP, FLOW_FRAG_ANY); }
static void check_8_ext(const struct pkt *p, const struct flow_key *k) { check_ipv6_ext(p, k, 54 + 64, IP_PROTO_UDP, 0); }

static void check_frag6_later(const struct pkt *p, const struct flow_key *key)
{
	check_frag_later(p, key);
	EXPECT_EQ(key->nw_family, 6);
}

static void check_no_next(const struct pkt *p, const struct flow_key *key)
{
	EXPECT_EQ(key->nw_proto, IP_PROTO_NONE);
	EXPECT_EQ(p->l4_ofs, 54);
	EXPECT_EQ(p->size, 54);
	EXPECT_EQ(p->payload_ofs, PKT_OFS_NONE);
}

static void check_short_udp_len(const struct pkt *p, const struct flow_key *key)
{
	EXPECT_EQ(key->tp_dst, 2000);
	EXPECT_EQ(p->payload_ofs, 42);
	EXPECT_EQ(p->size, 42 + 32); /* kept: IP says so */
}

static void check_not_decapped(const struct pkt *p, const struct flow_key *key)
{
	EXPECT_EQ(p->tunnel_ofs, PKT_OFS_NONE);
	EXPECT_EQ(key->tun_family, 0);
	EXPECT_EQ(key->tp_dst, VXLAN_DEFAULT_PORT);
	EXPECT_EQ(p->payload_ofs, 42);
}

static void check_not_decapped_frag(const struct pkt *p, const struct flow_key *key)
{
	check_not_decapped(p, key);
	EXPECT_EQ(key->nw_frag, FLOW_FRAG_ANY);
}

static void check_tunnel4(const struct pkt *p, const struct flow_key *key)
{
	static const uint8_t outer_src[4] = { 198, 51, 100, 1 }, outer_dst[4] = { 198, 51, 100, 2 };
	EXPECT_EQ(key->tun_family, 4);
	EXPECT_EQ(key->tun_vni, VNI);
	EXPECT_MEM(key->tun_src, outer_src, 4);
	EXPECT_MEM(key->tun_dst, outer_dst, 4);
	EXPECT_TRUE(flow_inv_is_zero(key->tun_src + 4, 12));
	EXPECT_EQ(key->tun_src_port, 49152);
	EXPECT_EQ(key->tun_dst_port, VXLAN_DEFAULT_PORT);
	EXPECT_EQ(p->tunnel.family, 4);
	EXPECT_EQ(p->tunnel.vni, VNI);
	EXPECT_EQ(p->l2_ofs, 0);
	EXPECT_EQ(p->l3_ofs, 14);
	EXPECT_EQ(p->l4_ofs, 34);
	EXPECT_EQ(p->payload_ofs, 42);
	EXPECT_EQ(p->tunnel_ofs, 42);
	EXPECT_EQ(p->inner_l2_ofs, 50);
}

static void check_vx_tcp4(const struct pkt *p, const struct flow_key *key)
{
	check_tunnel4(p, key);
	EXPECT_EQ(key->nw_family, 4);
	EXPECT_EQ(key->nw_proto, IP_PROTO_TCP);
	EXPECT_EQ(key->tp_src, 1000);
	EXPECT_EQ(p->inner_l3_ofs, 64);
	EXPECT_EQ(p->inner_l4_ofs, 84);
	EXPECT_EQ(p->inner_payload_ofs, 104);
	EXPECT_EQ(p->size, 50 + 54 + 100);
}

static void check_vx_tcp4_opts(const struct pkt *p, const struct flow_key *key)
{
	check_tunnel4(p, key);
	EXPECT_EQ(key->tcp_flags, TCP_SYN);
	EXPECT_EQ(key->tcp_opts.mss, 1460);
	EXPECT_EQ(key->tcp_opts.wscale, 7);
	EXPECT_EQ(p->inner_payload_ofs, 124);
}

static void check_vx_udp6(const struct pkt *p, const struct flow_key *key)
{
	check_tunnel4(p, key);
	EXPECT_EQ(key->nw_family, 6);
	EXPECT_EQ(p->inner_l4_ofs, 104);
	EXPECT_EQ(p->size, 50 + 66); /* inner padding trimmed */
}

static void check_vx_arp(const struct pkt *p, const struct flow_key *key)
{
	check_tunnel4(p, key);
	EXPECT_EQ(key->dl_type, ETH_TYPE_ARP);
	EXPECT_EQ(key->nw_proto, 2);
	EXPECT_EQ(p->inner_l3_ofs, 64);
	EXPECT_EQ(p->inner_l4_ofs, PKT_OFS_NONE);
}

static void check_vx_icmp6(const struct pkt *p, const struct flow_key *key)
{
	check_tunnel4(p, key);
	EXPECT_EQ(key->nw_proto, IP_PROTO_ICMPV6);
	EXPECT_EQ(key->tp_src, 135);
	EXPECT_EQ(p->inner_payload_ofs, 50 + 58);
}

static void check_vx_vlan(const struct pkt *p, const struct flow_key *key)
{
	check_tunnel4(p, key);
	EXPECT_EQ(key->n_vlans, 1);
	EXPECT_EQ(key->vlan_tci[0], 0x2064);
	EXPECT_EQ(p->inner_l3_ofs, 68);
}

static void check_vx_ack_padded(const struct pkt *p, const struct flow_key *key)
{
	check_tunnel4(p, key);
	EXPECT_EQ(p->size, 50 + 54);
	EXPECT_EQ(p->inner_payload_ofs, 50 + 54);
}

static void check_vx_ext(const struct pkt *p, const struct flow_key *key)
{
	check_tunnel4(p, key);
	EXPECT_EQ(key->nw_frag, FLOW_FRAG_ANY);
	EXPECT_EQ(p->inner_l4_ofs, 50 + 54 + 68);
}

static void check_vx_frag_later(const struct pkt *p, const struct flow_key *key)
{
	check_tunnel4(p, key);
	EXPECT_EQ(key->nw_frag, FLOW_FRAG_ANY | FLOW_FRAG_LATER);
	EXPECT_EQ(p->inner_l4_ofs, PKT_OFS_NONE);
}

static void check_vx6_tcp6(const struct pkt *p, const struct flow_key *key)
{
	EXPECT_EQ(key->tun_family, 6);
	EXPECT_EQ(key->tun_src[15], 1);
	EXPECT_EQ(key->tun_dst[15], 2);
	EXPECT_EQ(key->tun_vni, VNI);
	EXPECT_EQ(key->nw_family, 6);
	EXPECT_EQ(key->nw_tos, 0xb8);
	EXPECT_EQ(key->ipv6_label, 0xabcde);
	EXPECT_EQ(p->tunnel_ofs, 62);
	EXPECT_EQ(p->inner_l2_ofs, 70);
	EXPECT_EQ(p->inner_l4_ofs, 70 + 54);
}

static void check_vx6_icmp4(const struct pkt *p, const struct flow_key *key)
{
	EXPECT_EQ(key->tun_family, 6);
	EXPECT_EQ(key->nw_proto, IP_PROTO_ICMP);
	EXPECT_EQ(key->tp_src, 8);
	EXPECT_EQ(p->inner_payload_ofs, 70 + 38);
}

/* The outer L3 never stands in for a missing inner one. */
static void check_vx_unknown_type(const struct pkt *p, const struct flow_key *key)
{
	check_tunnel4(p, key);
	EXPECT_EQ(key->dl_type, 0x88b5);
	EXPECT_EQ(key->nw_family, 0);
	EXPECT_EQ(p->inner_l3_ofs, PKT_OFS_NONE);
	EXPECT_EQ(pkt_innermost_l3(p), PKT_OFS_NONE);
	EXPECT_EQ(pkt_innermost_l4(p), PKT_OFS_NONE);
	EXPECT_EQ(pkt_innermost_payload(p), PKT_OFS_NONE);
}

/* VXLAN inside VXLAN: the inner one is not decapsulated again. */
static void check_vx_nested(const struct pkt *p, const struct flow_key *key)
{
	check_tunnel4(p, key);
	EXPECT_EQ(key->nw_proto, IP_PROTO_UDP);
	EXPECT_EQ(key->tp_dst, VXLAN_DEFAULT_PORT);
	EXPECT_EQ(p->inner_payload_ofs, 50 + 42);
}

static const struct frame_case cases[] = {
	/* Ethernet and VLAN */
	{ 1, "empty frame", f_tcp4, {}, 0 + 1, 0, DROP_TRUNCATED_ETH },
	{ 2, "13-byte frame", f_tcp4, {}, 13, 0, DROP_TRUNCATED_ETH },
	{ 3, "tag cut after TPID", f_tcp4_vlan, {}, 16, 0, DROP_TRUNCATED_VLAN },
	{ 4, "tag cut in TCI", f_tcp4_vlan, {}, 17, 0, DROP_TRUNCATED_VLAN },
	{ 5, "three tags", f_tcp4_3tags, {}, 0, 0, DROP_VLAN_TOO_MANY_TAGS },
	{ 6, "one 802.1Q tag", f_tcp4_vlan, {}, 0, 0, DROP_NONE, check_vlan1 },
	{ 7, "TPID 0x9100", f_tcp4_9100, {}, 0, 0, DROP_NONE, check_9100 },
	{ 8, "802.1ad + 802.1Q", f_udp6_qinq, {}, 0, 0, DROP_NONE, check_qinq },
	{ 9, "unknown ethertype", f_unknown_ethertype, {}, 0, 0, DROP_NONE, check_unknown_type },
	{ 10, "802.3 length frame", f_8023, {}, 0, 0, DROP_NONE, check_8023 },
	/* ARP */
	{ 20, "ARP reply", f_arp, {}, 0, 0, DROP_NONE, check_arp },
	{ 21, "ARP cut in fixed part", f_arp, {}, 14 + 7, 0, DROP_TRUNCATED_ARP },
	{ 22, "ARP cut in addresses", f_arp, {}, 14 + 27, 0, DROP_TRUNCATED_ARP },
	{ 23, "ARP for other hardware: op only", f_arp, { P(15, 6) }, 14 + 8, 0, DROP_NONE },
	/* IPv4 */
	{ 30, "IPv4 cut at 19 bytes", f_tcp4, {}, 14 + 19, 0, DROP_TRUNCATED_IPV4 },
	{ 31, "IPv4 version 6", f_tcp4, { P(14, 0x65) }, 0, 0, DROP_BAD_IP_VERSION },
	{ 32, "IPv4 version 0", f_tcp4, { P(14, 0x05) }, 0, 0, DROP_BAD_IP_VERSION },
	{ 33, "IHL 4", f_tcp4, { P(14, 0x44) }, 0, 0, DROP_BAD_IHL },
	{ 34, "IHL 0", f_tcp4, { P(14, 0x40) }, 0, 0, DROP_BAD_IHL },
	{ 35, "IHL 15 past the frame", f_udp4_empty, { P(14, 0x4f) }, 0, 0, DROP_BAD_IHL },
	{ 36, "total length 19 < IHL", f_tcp4, { P(16, 0), P(17, 19) }, 0, 0, DROP_IPV4_TOTAL_LEN },
	{ 37, "total length past frame", f_tcp4, { P(16, 0x05), P(17, 0xdc) }, 0, 0, DROP_IPV4_TOTAL_LEN },
	{ 38, "total length one past frame", f_tcp4, { P(17, 141) }, 0, 0, DROP_IPV4_TOTAL_LEN },
	{ 39, "total length == IHL, TCP", f_tcp4, { P(17, 20) }, 0, 0, DROP_TRUNCATED_TCP },
	{ 40, "IPv4 options", f_tcp4_ipopts, {}, 0, 0, DROP_NONE },
	{ 41, "padding trimmed (CVE-2020-35498)", f_tcp4_ack_padded, {}, 0, 0, DROP_NONE, check_padding_trimmed },
	{ 42, "IP protocol 0 (CVE-2023-1668)", f_ip4_proto0, {}, 0, 0, DROP_NONE, check_proto0 },
	{ 43, "IP protocol GRE", f_ip4_gre, {}, 0, 0, DROP_NONE, check_gre },
	{ 44, "first fragment", f_udp4_frag_first, {}, 0, 0, DROP_NONE, check_frag_first4 },
	{ 45, "later fragment", f_udp4_frag_later, {}, 0, 0, DROP_NONE, check_frag_later },
	{ 46, "later fragment of TCP", f_udp4_frag_later, { P(23, IP_PROTO_TCP) }, 0, 0, DROP_NONE },
	{ 47, "first fragment too short for TCP", f_udp4_frag_first, { P(23, IP_PROTO_TCP), P(17, 30) }, 0, 0, DROP_TRUNCATED_TCP },
	{ 48, "bad IPv4 checksum is not flow_extract's business", f_tcp4, { P(24, 0), P(25, 0) }, 0, 0, DROP_NONE },
	/* IPv6 */
	{ 50, "IPv6 cut at 39 bytes", f_tcp6, {}, 14 + 39, 0, DROP_TRUNCATED_IPV6 },
	{ 51, "IPv6 version 4", f_tcp6, { P(14, 0x4b) }, 0, 0, DROP_BAD_IP_VERSION },
	{ 52, "payload length past frame", f_tcp6, { P(18, 0x01) }, 0, 0, DROP_IPV6_PAYLOAD_LEN },
	{ 53, "payload length one past frame", f_tcp6, { P(19, 121) }, 0, 0, DROP_IPV6_PAYLOAD_LEN },
	{ 54, "UDP over IPv6, padding trimmed", f_udp6, {}, 0, 0, DROP_NONE, check_udp6_trimmed },
	{ 55, "no next header", f_ip6_no_next, {}, 0, 0, DROP_NONE, check_no_next },
	{ 56, "hop-by-hop", f_tcp6_hbh, {}, 0, 0, DROP_NONE, check_hbh },
	{ 57, "routing", f_udp6_routing, {}, 0, 0, DROP_NONE, check_routing },
	{ 58, "destination options", f_tcp6_dstopts, {}, 0, 0, DROP_NONE, check_dstopts },
	{ 59, "AH", f_tcp6_ah, {}, 0, 0, DROP_NONE, check_ah },
	{ 60, "first fragment", f_udp6_frag_first, {}, 0, 0, DROP_NONE, check_frag6_first },
	{ 61, "later fragment", f_udp6_frag_later, {}, 0, 0, DROP_NONE, check_frag6_later },
	{ 62, "six extension headers", f_udp6_all_ext, {}, 0, 0, DROP_NONE, check_all_ext },
	{ 63, "eight extension headers (the limit)", f_udp6_8_ext, {}, 0, 0, DROP_NONE, check_8_ext },
	{ 64, "nine extension headers", f_udp6_9_ext, {}, 0, 0, DROP_IPV6_EXT_CHAIN },
	{ 65, "hop-by-hop after another header", f_udp6_hbh_second, {}, 0, 0, DROP_IPV6_EXT_CHAIN },
	{ 66, "routing header longer than payload", f_udp6_routing, { P(55, 10) }, 0, 0, DROP_TRUNCATED_IPV6_EXT },
	{ 67, "ext header with 1 byte left", f_udp6_routing, { P(18, 0), P(19, 1) }, 0, 0, DROP_TRUNCATED_IPV6_EXT },
	{ 68, "fragment header cut", f_udp6_frag_first, { P(19, 7) }, 0, 0, DROP_TRUNCATED_IPV6_EXT },
	{ 69, "jumbo: payload length 0 and hop-by-hop", f_jumbo_len0, {}, 0, 0, DROP_IPV6_JUMBO },
	{ 70, "jumbo option", f_jumbo_option, {}, 0, 0, DROP_IPV6_JUMBO },
	{ 71, "hop-by-hop option overruns", f_hbh_bad_option, {}, 0, 0, DROP_IPV6_BAD_OPTIONS },
	{ 72, "dest option overruns", f_dstopts_bad_option, {}, 0, 0, DROP_IPV6_BAD_OPTIONS },
	{ 73, "ICMPv6", f_icmp6, {}, 0, 0, DROP_NONE, check_icmp6 },
	{ 74, "ICMP (v4 number) over IPv6 is just a protocol", f_icmp6, { P(20, IP_PROTO_ICMP) }, 0, 0, DROP_NONE },
	{ 75, "first fragment: UDP length past it", f_udp6_frag_first, { P(66, 0x10) }, 0, 0, DROP_NONE, check_frag6_first },
	{ 76, "atomic fragment", f_udp6_atomic_frag, {}, 0, 0, DROP_NONE, check_frag6_first },
	{ 77, "atomic fragment: UDP length past it", f_udp6_atomic_frag, { P(66, 0x10) }, 0, 0, DROP_UDP_LEN },
	/* TCP */
	{ 80, "TCP cut at 19 bytes", f_tcp4, { P(17, 20 + 19) }, 0, 0, DROP_TRUNCATED_TCP },
	{ 81, "doff 4", f_tcp4, { P(46, 0x40) }, 0, 0, DROP_BAD_TCP_DOFF },
	{ 82, "doff 0", f_tcp4, { P(46, 0x00) }, 0, 0, DROP_BAD_TCP_DOFF },
	{ 83, "doff 15 past the segment", f_tcp4_syn_opts, { P(46, 0xf0) }, 0, 0, DROP_BAD_TCP_DOFF },
	{ 84, "MSS length 5", f_tcp4_syn_opts, { P(55, 5) }, 0, 0, DROP_BAD_TCP_OPTIONS },
	{ 85, "option length 0", f_tcp4_syn_opts, { P(55, 0) }, 0, 0, DROP_BAD_TCP_OPTIONS },
	{ 86, "window scale length past options", f_tcp4_syn_opts, { P(72, 9) }, 0, 0, DROP_BAD_TCP_OPTIONS },
	{ 87, "SYN with options", f_tcp4_syn_opts, {}, 0, 0, DROP_NONE },
	{ 88, "IPv4 options and TCP", f_tcp4_ipopts, {}, 0, 0, DROP_NONE },
	/* UDP, ICMP */
	{ 90, "UDP cut at 7 bytes", f_udp4, { P(17, 20 + 7) }, 0, 0, DROP_TRUNCATED_UDP },
	{ 91, "UDP length 7", f_udp4, { P(38, 0), P(39, 7) }, 0, 0, DROP_UDP_LEN },
	{ 92, "UDP length 0", f_udp4, { P(38, 0), P(39, 0) }, 0, 0, DROP_UDP_LEN },
	{ 93, "UDP length one past IP", f_udp4, { P(39, 41) }, 0, 0, DROP_UDP_LEN },
	{ 94, "UDP length shorter than IP payload", f_udp4_short_udp_len, {}, 0, 0, DROP_NONE, check_short_udp_len },
	{ 95, "ICMP echo", f_icmp4, {}, 0, 0, DROP_NONE, check_icmp4 },
	{ 96, "ICMP cut at 3 bytes", f_icmp4, { P(17, 23) }, 0, 0, DROP_TRUNCATED_ICMP },
	{ 97, "ICMPv6 cut at 3 bytes", f_icmp6, { P(19, 3) }, 0, 0, DROP_TRUNCATED_ICMP },
	/* VXLAN */
	{ 100, "VXLAN header cut", f_udp4_to_vxlan_7_bytes, {}, 0, VXLAN_DEFAULT_PORT, DROP_TRUNCATED_VXLAN },
	{ 101, "VXLAN without I flag", f_vx4_tcp4, { P(42, 0) }, 0, VXLAN_DEFAULT_PORT, DROP_VXLAN_NO_VNI_FLAG },
	{ 102, "VXLAN reserved flag bit", f_vx4_tcp4, { P(45, 1) }, 0, VXLAN_DEFAULT_PORT, DROP_VXLAN_RESERVED_BITS },
	{ 103, "VXLAN-GPE style G bit", f_vx4_tcp4, { P(42, 0x88) }, 0, VXLAN_DEFAULT_PORT, DROP_VXLAN_RESERVED_BITS },
	{ 104, "VNI reserved byte", f_vx4_tcp4, { P(49, 1) }, 0, VXLAN_DEFAULT_PORT, DROP_VXLAN_RESERVED_BITS },
	{ 105, "inner frame of 10 bytes", f_vx4_inner_short, {}, 0, VXLAN_DEFAULT_PORT, DROP_TRUNCATED_ETH },
	{ 106, "inner IHL 4", f_vx4_tcp4, { P(64, 0x44) }, 0, VXLAN_DEFAULT_PORT, DROP_BAD_IHL },
	{ 107, "inner doff 4", f_vx4_tcp4, { P(96, 0x40) }, 0, VXLAN_DEFAULT_PORT, DROP_BAD_TCP_DOFF },
	{ 108, "outer UDP shorter than inner frame", f_vx4_tcp4, { P(39, 0x40) }, 0, VXLAN_DEFAULT_PORT, DROP_IPV4_TOTAL_LEN },
	{ 109, "inner TCP/IPv4", f_vx4_tcp4, {}, 0, VXLAN_DEFAULT_PORT, DROP_NONE, check_vx_tcp4 },
	{ 110, "inner TCP with options", f_vx4_tcp4_opts, {}, 0, VXLAN_DEFAULT_PORT, DROP_NONE, check_vx_tcp4_opts },
	{ 111, "inner UDP/IPv6 padded", f_vx4_udp6, {}, 0, VXLAN_DEFAULT_PORT, DROP_NONE, check_vx_udp6 },
	{ 112, "inner ARP", f_vx4_arp, {}, 0, VXLAN_DEFAULT_PORT, DROP_NONE, check_vx_arp },
	{ 113, "inner ICMPv6", f_vx4_icmp6, {}, 0, VXLAN_DEFAULT_PORT, DROP_NONE, check_vx_icmp6 },
	{ 114, "inner VLAN", f_vx4_vlan, {}, 0, VXLAN_DEFAULT_PORT, DROP_NONE, check_vx_vlan },
	{ 115, "inner padding trimmed", f_vx4_ack_padded, {}, 0, VXLAN_DEFAULT_PORT, DROP_NONE, check_vx_ack_padded },
	{ 116, "inner IPv6 ext headers", f_vx4_ext, {}, 0, VXLAN_DEFAULT_PORT, DROP_NONE, check_vx_ext },
	{ 117, "inner later fragment", f_vx4_frag_later, {}, 0, VXLAN_DEFAULT_PORT, DROP_NONE, check_vx_frag_later },
	{ 118, "outer IPv6, inner TCP/IPv6", f_vx6_tcp6, {}, 0, VXLAN_DEFAULT_PORT, DROP_NONE, check_vx6_tcp6 },
	{ 119, "outer IPv6, inner ICMP", f_vx6_icmp4, {}, 0, VXLAN_DEFAULT_PORT, DROP_NONE, check_vx6_icmp4 },
	{ 120, "VXLAN in VXLAN: one level only", f_vx4_vxlan, {}, 0, VXLAN_DEFAULT_PORT, DROP_NONE, check_vx_nested },
	{ 121, "vxlan_port 0: plain UDP", f_vx4_tcp4, { P(42, 0) }, 0, 0, DROP_NONE, check_not_decapped },
	{ 122, "other port: plain UDP", f_vx4_tcp4, {}, 0, 8472, DROP_NONE, check_not_decapped },
	{ 123, "outer first fragment: no decap", f_vx4_outer_frag, {}, 0, VXLAN_DEFAULT_PORT, DROP_NONE, check_not_decapped_frag },
	{ 124, "inner three tags", f_vx4_3tags, {}, 0, VXLAN_DEFAULT_PORT, DROP_VLAN_TOO_MANY_TAGS },
	{ 125, "inner tag cut", f_vx4_vlan, { P(39, 8 + 8 + 16) }, 0, VXLAN_DEFAULT_PORT, DROP_TRUNCATED_VLAN },
	{ 126, "inner unknown ethertype", f_vx4_unknown_type, {}, 0, VXLAN_DEFAULT_PORT, DROP_NONE, check_vx_unknown_type },
};

static void run_case(const struct frame_case *tc, struct pkt *p)
{
	size_t len = tc->fx_build(fx_frame_buf);
	assert_true(len > 0);
	for (size_t i = 0; i < ARRAY_SIZE(tc->patch) && tc->patch[i].ofs1; i++) {
		assert_true(tc->patch[i].ofs1 - 1u < len);
		fx_frame_buf[tc->patch[i].ofs1 - 1] = tc->patch[i].val;
	}
	/* cut 1 means "cut to 0 bytes" (0 already means "no cut"). */
	if (tc->cut)
		len = tc->cut == 1 ? 0 : tc->cut;

	struct flow_key key;
	enum drop_reason got = fx_extract(p, fx_frame_buf, len, tc->vxlan_port, &key);
	if (got != tc->want) {
		char title[160];
		snprintf(title, sizeof(title), "case %u (%s)", tc->n, tc->what);
		fb_hexdump(title, fx_frame_buf, len);
		fail_msg("case %u (%s): got %s, want %s", tc->n, tc->what, drop_reason_name(got),
			 drop_reason_name(tc->want));
	}
	if (got == DROP_NONE) {
		fx_check_invariants(p, &key);
		expect_failure[0] = 0;
		if (tc->check)
			tc->check(p, &key);
		if (expect_failure[0]) {
			char title[160];
			snprintf(title, sizeof(title), "case %u (%s)", tc->n, tc->what);
			fb_hexdump(title, fx_frame_buf, len);
			fail_msg("case %u (%s): %s", tc->n, tc->what, expect_failure);
		}
	}
}

static void test_table(void **state)
{
	(void)state;
	struct pkt *p = pkt_alloc(fx_pool);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		if (i > 0)
			assert_true(cases[i].n > cases[i - 1].n); /* numbers stay unique */
		run_case(&cases[i], p);
	}
	pkt_free(p);
}

/* Every parse reason has at least one case. */
static void test_table_covers_every_parse_reason(void **state)
{
	(void)state;
	static const enum drop_reason parse_reasons[] = {
		DROP_TRUNCATED_ETH, DROP_TRUNCATED_VLAN, DROP_VLAN_TOO_MANY_TAGS,
		DROP_TRUNCATED_ARP, DROP_TRUNCATED_IPV4, DROP_BAD_IP_VERSION, DROP_BAD_IHL,
		DROP_IPV4_TOTAL_LEN, DROP_TRUNCATED_IPV6, DROP_IPV6_PAYLOAD_LEN,
		DROP_TRUNCATED_IPV6_EXT, DROP_IPV6_EXT_CHAIN, DROP_IPV6_JUMBO,
		DROP_IPV6_BAD_OPTIONS, DROP_TRUNCATED_TCP, DROP_BAD_TCP_DOFF,
		DROP_BAD_TCP_OPTIONS, DROP_TRUNCATED_UDP, DROP_UDP_LEN, DROP_TRUNCATED_ICMP,
		DROP_TRUNCATED_VXLAN, DROP_VXLAN_NO_VNI_FLAG, DROP_VXLAN_RESERVED_BITS,
	};
	for (size_t r = 0; r < ARRAY_SIZE(parse_reasons); r++) {
		bool found = false;
		for (size_t i = 0; i < ARRAY_SIZE(cases) && !found; i++)
			found = cases[i].want == parse_reasons[r];
		if (!found)
			fail_msg("no case for %s", drop_reason_name(parse_reasons[r]));
	}
}

/* ---- truncation sweep ----------------------------------------------------- */

static bool is_length_reason(enum drop_reason r)
{
	switch (r) {
	case DROP_TRUNCATED_ETH:
	case DROP_TRUNCATED_VLAN:
	case DROP_TRUNCATED_ARP:
	case DROP_TRUNCATED_IPV4:
	case DROP_BAD_IHL: /* IHL past the available bytes */
	case DROP_IPV4_TOTAL_LEN:
	case DROP_TRUNCATED_IPV6:
	case DROP_IPV6_PAYLOAD_LEN:
	case DROP_TRUNCATED_IPV6_EXT:
	case DROP_TRUNCATED_TCP:
	case DROP_BAD_TCP_DOFF: /* data offset past the end */
	case DROP_TRUNCATED_UDP:
	case DROP_UDP_LEN:
	case DROP_TRUNCATED_ICMP:
	case DROP_TRUNCATED_VXLAN:
		return true;
	default:
		return false;
	}
}

/* Every valid frame of the table cut at every length: a valid parse (of a
 * frame whose cut removed padding or an unparsed tail only) or a length
 * reason, never a crash, never another reason. */
static void test_truncation_sweep(void **state)
{
	(void)state;
	struct pkt *p = pkt_alloc(fx_pool);
	unsigned frames = 0, cuts = 0;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct frame_case *tc = &cases[i];
		if (tc->want != DROP_NONE || tc->patch[0].ofs1 || tc->cut)
			continue;
		size_t full = tc->fx_build(fx_frame_buf);
		struct flow_key full_key;
		assert_int_equal(fx_extract(p, fx_frame_buf, full, tc->vxlan_port, &full_key), DROP_NONE);
		uint32_t parsed_len = p->size; /* after padding was trimmed */
		frames++;
		for (size_t len = 0; len < full; len++) {
			struct flow_key key;
			enum drop_reason got = fx_extract(p, fx_frame_buf, len, tc->vxlan_port, &key);
			cuts++;
			if (got == DROP_NONE) {
				fx_check_invariants(p, &key);
				/* Cutting into the parsed frame must be noticed
				 * unless nothing told us its length (802.3,
				 * unknown type, ARP tail). */
				if (len >= parsed_len)
					assert_memory_equal(&key, &full_key, sizeof(key));
				continue;
			}
			if (!is_length_reason(got)) {
				fb_hexdump(tc->what, fx_frame_buf, len);
				fail_msg("case %u cut at %zu: %s", tc->n, len, drop_reason_name(got));
			}
		}
	}
	assert_true(frames >= 40);
	assert_true(cuts > 3000);
	pkt_free(p);
}


static int setup(void **state)
{
	(void)state;
	return pkt_pool_create(4, &fx_pool) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	pkt_pool_destroy(fx_pool);
	return 0;
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_table_covers_every_parse_reason),
		cmocka_unit_test(test_truncation_sweep),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
