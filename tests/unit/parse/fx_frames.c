/* Frames for the flow_extract tests: see fx_frames.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "flow_invariants.h"
#include "fx_frames.h"
#include "packet/hdr.h"

struct pkt_pool *fx_pool;
uint8_t fx_frame_buf[FB_MAX_FRAME];
uint8_t fx_inner_buf[FB_MAX_FRAME];

/* ---- frames --------------------------------------------------------------- */

size_t fx_build(const struct fb_frame *f, uint8_t *buf)
{
	size_t len = fb_build(f, buf, FB_MAX_FRAME, NULL);
	assert_true(len > 0);
	return len;
}

const uint8_t fx_syn_opts[20] = {
	TCP_OPT_MSS, 4, 0x05, 0xb4,                   /* MSS 1460 */
	TCP_OPT_SACK_PERM, 2, TCP_OPT_TIMESTAMP, 10,
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* TSval, TSecr */
	TCP_OPT_NOP, TCP_OPT_WSCALE, 3, 7,            /* window scale 7 */
};

size_t f_tcp4(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.payload_len = 100;
	return fx_build(&f, buf);
}

size_t f_tcp4_syn_opts(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.tcp_flags = TCP_SYN;
	f.tcp_opts = fx_syn_opts;
	f.tcp_opts_len = sizeof(fx_syn_opts);
	return fx_build(&f, buf);
}

size_t f_tcp4_ack_padded(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.pad_to = ETH_MIN_FRAME;
	return fx_build(&f, buf);
}

size_t f_tcp4_ipopts(uint8_t *buf)
{
	static const uint8_t router_alert[8] = { 0x94, 4, 0, 0, 1, 1, 1, 0 };
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.ip_opts = router_alert;
	f.ip_opts_len = sizeof(router_alert);
	f.payload_len = 10;
	return fx_build(&f, buf);
}

size_t f_tcp4_vlan(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.n_vlans = 1;
	f.vlan_tpid[0] = ETH_TYPE_VLAN;
	f.vlan_tci[0] = 0x2064; /* PCP 1, VID 100 */
	f.payload_len = 10;
	return fx_build(&f, buf);
}

size_t f_tcp4_9100(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.n_vlans = 1;
	f.vlan_tpid[0] = ETH_TYPE_QINQ_OLD;
	f.vlan_tci[0] = 5;
	return fx_build(&f, buf);
}

size_t f_udp6_qinq(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 6, IP_PROTO_UDP);
	f.n_vlans = 2;
	f.vlan_tpid[0] = ETH_TYPE_QINQ;
	f.vlan_tci[0] = 10;
	f.vlan_tpid[1] = ETH_TYPE_VLAN;
	f.vlan_tci[1] = 0xe014; /* PCP 7, VID 20 */
	f.payload_len = 16;
	return fx_build(&f, buf);
}

size_t f_tcp4_3tags(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.n_vlans = 3;
	f.vlan_tpid[0] = ETH_TYPE_QINQ;
	f.vlan_tpid[1] = ETH_TYPE_VLAN;
	f.vlan_tpid[2] = ETH_TYPE_VLAN;
	return fx_build(&f, buf);
}

size_t f_udp4(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.payload_len = 32;
	return fx_build(&f, buf);
}

size_t f_udp4_empty(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	return fx_build(&f, buf);
}

/* UDP length 8 (header only) in an IP datagram carrying 32 more bytes. */
size_t f_udp4_short_udp_len(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.payload_len = 32;
	f.udp_len_override = UDP_HDR_LEN;
	return fx_build(&f, buf);
}

size_t f_udp4_to_vxlan_7_bytes(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.dst_port = VXLAN_DEFAULT_PORT;
	f.payload_len = VXLAN_HDR_LEN - 1;
	return fx_build(&f, buf);
}

size_t f_icmp4(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_ICMP);
	f.src_port = 8; /* echo request */
	f.dst_port = 0; /* code */
	f.payload_len = 8;
	return fx_build(&f, buf);
}

size_t f_arp(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, FB_ARP, 0);
	f.arp_op = 2;
	f.pad_to = ETH_MIN_FRAME;
	return fx_build(&f, buf);
}

size_t f_ip4_proto0(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, 0);
	f.payload_len = 20;
	f.pad_to = ETH_MIN_FRAME;
	return fx_build(&f, buf);
}

size_t f_ip4_gre(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, 47);
	f.payload_len = 24;
	return fx_build(&f, buf);
}

size_t f_udp4_frag_first(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.frag_off = IPV4_MF;
	f.payload_len = 64;
	f.udp_len_override = 1000; /* the whole datagram, longer than this fragment */
	return fx_build(&f, buf);
}

size_t f_udp4_frag_later(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.frag_off = 9; /* 72 bytes in, last fragment */
	f.payload_len = 64;
	return fx_build(&f, buf);
}

size_t f_unknown_ethertype(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.eth_type_override = 0x88b5; /* local experimental */
	return fx_build(&f, buf);
}

size_t f_8023(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.eth_type_override = 46; /* an 802.3 length */
	f.pad_to = ETH_MIN_FRAME;
	return fx_build(&f, buf);
}

size_t f_tcp6(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 6, IP_PROTO_TCP);
	f.tos = 0xb8;
	f.ipv6_label = 0xabcde;
	f.payload_len = 100;
	return fx_build(&f, buf);
}

size_t f_udp6(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 6, IP_PROTO_UDP);
	f.payload_len = 4;
	f.pad_to = ETH_MIN_FRAME + 10; /* 66 bytes of frame; 70 with padding */
	return fx_build(&f, buf);
}

size_t f_icmp6(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 6, IP_PROTO_ICMPV6);
	f.src_port = 135; /* neighbour solicitation */
	f.dst_port = 0;
	f.payload_len = 20;
	return fx_build(&f, buf);
}

size_t f_ip6_no_next(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 6, IP_PROTO_NONE);
	f.pad_to = ETH_MIN_FRAME;
	return fx_build(&f, buf);
}

size_t ipv6_with_ext(uint8_t *buf, uint8_t proto, const struct fb_ipv6_ext *ext,
			    unsigned n, int32_t ip_len_override)
{
	struct fb_frame f;
	fb_frame_init(&f, 6, proto);
	for (unsigned i = 0; i < n; i++)
		f.ipv6_ext[i] = ext[i];
	f.n_ipv6_ext = (uint8_t)n;
	f.payload_len = 16;
	f.ip_len_override = ip_len_override;
	return fx_build(&f, buf);
}

size_t f_tcp6_hbh(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_HOPOPTS } };
	return ipv6_with_ext(buf, IP_PROTO_TCP, e, 1, -1);
}

size_t f_udp6_routing(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_ROUTING, .len8 = 2 } };
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, 1, -1);
}

size_t f_tcp6_dstopts(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_DSTOPTS, .len8 = 1 } };
	return ipv6_with_ext(buf, IP_PROTO_TCP, e, 1, -1);
}

size_t f_tcp6_ah(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_AH, .len8 = 4 } };
	return ipv6_with_ext(buf, IP_PROTO_TCP, e, 1, -1);
}

size_t f_udp6_frag_first(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = {
		{ .type = IP_PROTO_FRAGMENT, .frag_more = true, .frag_id = 77 },
	};
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, 1, -1);
}

/* Offset 0 and no more fragments (RFC 6946): a whole datagram. */
size_t f_udp6_atomic_frag(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_FRAGMENT, .frag_id = 78 } };
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, 1, -1);
}

size_t f_udp6_frag_later(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = {
		{ .type = IP_PROTO_FRAGMENT, .frag_offset = 185, .frag_id = 77 },
	};
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, 1, -1);
}

size_t f_udp6_all_ext(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = {
		{ .type = IP_PROTO_HOPOPTS },
		{ .type = IP_PROTO_DSTOPTS },
		{ .type = IP_PROTO_ROUTING },
		{ .type = IP_PROTO_FRAGMENT },
		{ .type = IP_PROTO_AH, .len8 = 1 },
		{ .type = IP_PROTO_DSTOPTS, .len8 = 2 },
	};
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, ARRAY_SIZE(e), -1);
}

size_t ipv6_n_dstopts(uint8_t *buf, unsigned n)
{
	struct fb_ipv6_ext e[FB_MAX_IPV6_EXT];
	for (unsigned i = 0; i < n; i++)
		e[i] = (struct fb_ipv6_ext){ .type = IP_PROTO_DSTOPTS };
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, n, -1);
}

size_t f_udp6_8_ext(uint8_t *buf)
{
	return ipv6_n_dstopts(buf, FLOW_IPV6_MAX_EXT_HDRS);
}

size_t f_udp6_9_ext(uint8_t *buf)
{
	return ipv6_n_dstopts(buf, FLOW_IPV6_MAX_EXT_HDRS + 1);
}

size_t f_udp6_hbh_second(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_DSTOPTS }, { .type = IP_PROTO_HOPOPTS } };
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, 2, -1);
}

size_t f_jumbo_len0(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_HOPOPTS } };
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, 1, 0);
}

size_t f_jumbo_option(uint8_t *buf)
{
	static const uint8_t jumbo[6] = { IPV6_OPT_JUMBO, 4, 0, 1, 0, 0 };
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_HOPOPTS, .body = jumbo } };
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, 1, -1);
}

size_t f_hbh_bad_option(uint8_t *buf)
{
	static const uint8_t overrun[6] = { 1, 5, 0, 0, 0, 0 }; /* PadN of 5 in 4 bytes */
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_HOPOPTS, .body = overrun } };
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, 1, -1);
}

size_t f_dstopts_bad_option(uint8_t *buf)
{
	static const uint8_t overrun[6] = { 0, 0, 0, 0, 0x1e, 9 }; /* Pad1 x4, then too long */
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_DSTOPTS, .body = overrun } };
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, 1, -1);
}

size_t fx_wrap(uint8_t *buf, size_t (*inner)(uint8_t *), uint8_t family)
{
	size_t inner_len = inner(fx_inner_buf);
	struct fb_vxlan vx;
	fb_vxlan_init(&vx, family, VNI);
	size_t len = fb_wrap_vxlan(&vx, fx_inner_buf, inner_len, buf, FB_MAX_FRAME);
	assert_true(len > 0);
	return len;
}

size_t f_vx4_tcp4(uint8_t *buf) { return fx_wrap(buf, f_tcp4, 4); }
size_t f_vx4_tcp4_opts(uint8_t *buf) { return fx_wrap(buf, f_tcp4_syn_opts, 4); }
size_t f_vx4_udp6(uint8_t *buf) { return fx_wrap(buf, f_udp6, 4); }
size_t f_vx4_arp(uint8_t *buf) { return fx_wrap(buf, f_arp, 4); }
size_t f_vx4_icmp6(uint8_t *buf) { return fx_wrap(buf, f_icmp6, 4); }
size_t f_vx4_vlan(uint8_t *buf) { return fx_wrap(buf, f_tcp4_vlan, 4); }
size_t f_vx4_ack_padded(uint8_t *buf) { return fx_wrap(buf, f_tcp4_ack_padded, 4); }
size_t f_vx4_ext(uint8_t *buf) { return fx_wrap(buf, f_udp6_all_ext, 4); }
size_t f_vx4_frag_later(uint8_t *buf) { return fx_wrap(buf, f_udp4_frag_later, 4); }
size_t f_vx6_tcp6(uint8_t *buf) { return fx_wrap(buf, f_tcp6, 6); }
size_t f_vx6_icmp4(uint8_t *buf) { return fx_wrap(buf, f_icmp4, 6); }
size_t f_vx4_vxlan(uint8_t *buf) { return fx_wrap(buf, f_vx4_tcp4, 4); }
size_t f_vx4_3tags(uint8_t *buf) { return fx_wrap(buf, f_tcp4_3tags, 4); }
size_t f_vx4_unknown_type(uint8_t *buf) { return fx_wrap(buf, f_unknown_ethertype, 4); }

size_t f_vx4_inner_short(uint8_t *buf)
{
	memset(fx_inner_buf, 0xab, 10);
	struct fb_vxlan vx;
	fb_vxlan_init(&vx, 4, VNI);
	return fb_wrap_vxlan(&vx, fx_inner_buf, 10, buf, FB_MAX_FRAME);
}

/* Outer datagram is an IPv4 first fragment: VXLAN is not parsed. */
size_t f_vx4_outer_frag(uint8_t *buf)
{
	size_t inner_len = f_tcp4(fx_inner_buf);
	struct fb_vxlan vx;
	fb_vxlan_init(&vx, 4, VNI);
	vx.frag_off = IPV4_MF;
	return fb_wrap_vxlan(&vx, fx_inner_buf, inner_len, buf, FB_MAX_FRAME);
}

/* ---- running a frame ------------------------------------------------------ */

enum drop_reason fx_extract(struct pkt *p, const uint8_t *frame, size_t len,
				uint16_t vxlan_port, struct flow_key *key)
{
	assert_int_equal(pkt_set_data(p, frame, (uint32_t)len), 0);
	p->in_port = TEST_IN_PORT;
	return flow_extract(p, vxlan_port, key);
}

/* Invariants every successful parse keeps, whatever the frame (the same
 * list the fuzz target holds the parser to). */
void fx_check_invariants(const struct pkt *p, const struct flow_key *key)
{
	const char *violated = flow_invariant_violated(p, key, false);

	assert_int_equal(key->in_port, TEST_IN_PORT);
	if (violated)
		fail_msg("invariant does not hold: %s", violated);
}
