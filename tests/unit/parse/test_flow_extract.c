/* Unit tests for src/parse/flow_extract.c.
 *
 * The core is a numbered table (like WireGuard's selftest/counter.c): one
 * frame built by tests/unit/support/frame_builder, optionally patched byte by
 * byte and cut, the VXLAN port to use, and the expected drop reason (plus,
 * for valid corners, a check of the key and offsets).  There is a case for
 * every drop reason flow_extract can return.  Around it: exact whole-key
 * comparisons, a truncation sweep over every valid frame, tcp_opts_parse()
 * cases, flow_extract_vxlan() and frames whose payload sits in frags.
 *
 * On a mismatch the frame is dumped in hex with the case number. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "flow_invariants.h"
#include "frame_builder.h"
#include "packet/hdr.h"
#include "parse/flow_extract.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum { TEST_IN_PORT = 7, VNI = 0x123456 };

static struct pkt_pool *pool;
static uint8_t frame_buf[FB_MAX_FRAME];
static uint8_t inner_buf[FB_MAX_FRAME];

/* ---- frames --------------------------------------------------------------- */

static size_t build(const struct fb_frame *f, uint8_t *buf)
{
	size_t len = fb_build(f, buf, FB_MAX_FRAME, NULL);
	assert_true(len > 0);
	return len;
}

static const uint8_t syn_opts[20] = {
	TCP_OPT_MSS, 4, 0x05, 0xb4,                   /* MSS 1460 */
	TCP_OPT_SACK_PERM, 2, TCP_OPT_TIMESTAMP, 10,
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, /* TSval, TSecr */
	TCP_OPT_NOP, TCP_OPT_WSCALE, 3, 7,            /* window scale 7 */
};

static size_t f_tcp4(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.payload_len = 100;
	return build(&f, buf);
}

static size_t f_tcp4_syn_opts(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.tcp_flags = TCP_SYN;
	f.tcp_opts = syn_opts;
	f.tcp_opts_len = sizeof(syn_opts);
	return build(&f, buf);
}

static size_t f_tcp4_ack_padded(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.pad_to = ETH_MIN_FRAME;
	return build(&f, buf);
}

static size_t f_tcp4_ipopts(uint8_t *buf)
{
	static const uint8_t router_alert[8] = { 0x94, 4, 0, 0, 1, 1, 1, 0 };
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.ip_opts = router_alert;
	f.ip_opts_len = sizeof(router_alert);
	f.payload_len = 10;
	return build(&f, buf);
}

static size_t f_tcp4_vlan(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.n_vlans = 1;
	f.vlan_tpid[0] = ETH_TYPE_VLAN;
	f.vlan_tci[0] = 0x2064; /* PCP 1, VID 100 */
	f.payload_len = 10;
	return build(&f, buf);
}

static size_t f_tcp4_9100(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.n_vlans = 1;
	f.vlan_tpid[0] = ETH_TYPE_QINQ_OLD;
	f.vlan_tci[0] = 5;
	return build(&f, buf);
}

static size_t f_udp6_qinq(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 6, IP_PROTO_UDP);
	f.n_vlans = 2;
	f.vlan_tpid[0] = ETH_TYPE_QINQ;
	f.vlan_tci[0] = 10;
	f.vlan_tpid[1] = ETH_TYPE_VLAN;
	f.vlan_tci[1] = 0xe014; /* PCP 7, VID 20 */
	f.payload_len = 16;
	return build(&f, buf);
}

static size_t f_tcp4_3tags(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.n_vlans = 3;
	f.vlan_tpid[0] = ETH_TYPE_QINQ;
	f.vlan_tpid[1] = ETH_TYPE_VLAN;
	f.vlan_tpid[2] = ETH_TYPE_VLAN;
	return build(&f, buf);
}

static size_t f_udp4(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.payload_len = 32;
	return build(&f, buf);
}

static size_t f_udp4_empty(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	return build(&f, buf);
}

/* UDP length 8 (header only) in an IP datagram carrying 32 more bytes. */
static size_t f_udp4_short_udp_len(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.payload_len = 32;
	f.udp_len_override = UDP_HDR_LEN;
	return build(&f, buf);
}

static size_t f_udp4_to_vxlan_7_bytes(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.dst_port = VXLAN_DEFAULT_PORT;
	f.payload_len = VXLAN_HDR_LEN - 1;
	return build(&f, buf);
}

static size_t f_icmp4(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_ICMP);
	f.src_port = 8; /* echo request */
	f.dst_port = 0; /* code */
	f.payload_len = 8;
	return build(&f, buf);
}

static size_t f_arp(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, FB_ARP, 0);
	f.arp_op = 2;
	f.pad_to = ETH_MIN_FRAME;
	return build(&f, buf);
}

static size_t f_ip4_proto0(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, 0);
	f.payload_len = 20;
	f.pad_to = ETH_MIN_FRAME;
	return build(&f, buf);
}

static size_t f_ip4_gre(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, 47);
	f.payload_len = 24;
	return build(&f, buf);
}

static size_t f_udp4_frag_first(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.frag_off = IPV4_MF;
	f.payload_len = 64;
	f.udp_len_override = 1000; /* the whole datagram, longer than this fragment */
	return build(&f, buf);
}

static size_t f_udp4_frag_later(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.frag_off = 9; /* 72 bytes in, last fragment */
	f.payload_len = 64;
	return build(&f, buf);
}

static size_t f_unknown_ethertype(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.eth_type_override = 0x88b5; /* local experimental */
	return build(&f, buf);
}

static size_t f_8023(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.eth_type_override = 46; /* an 802.3 length */
	f.pad_to = ETH_MIN_FRAME;
	return build(&f, buf);
}

static size_t f_tcp6(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 6, IP_PROTO_TCP);
	f.tos = 0xb8;
	f.ipv6_label = 0xabcde;
	f.payload_len = 100;
	return build(&f, buf);
}

static size_t f_udp6(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 6, IP_PROTO_UDP);
	f.payload_len = 4;
	f.pad_to = ETH_MIN_FRAME + 10; /* 66 bytes of frame; 70 with padding */
	return build(&f, buf);
}

static size_t f_icmp6(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 6, IP_PROTO_ICMPV6);
	f.src_port = 135; /* neighbour solicitation */
	f.dst_port = 0;
	f.payload_len = 20;
	return build(&f, buf);
}

static size_t f_ip6_no_next(uint8_t *buf)
{
	struct fb_frame f;
	fb_frame_init(&f, 6, IP_PROTO_NONE);
	f.pad_to = ETH_MIN_FRAME;
	return build(&f, buf);
}

static size_t ipv6_with_ext(uint8_t *buf, uint8_t proto, const struct fb_ipv6_ext *ext,
			    unsigned n, int32_t ip_len_override)
{
	struct fb_frame f;
	fb_frame_init(&f, 6, proto);
	for (unsigned i = 0; i < n; i++)
		f.ipv6_ext[i] = ext[i];
	f.n_ipv6_ext = (uint8_t)n;
	f.payload_len = 16;
	f.ip_len_override = ip_len_override;
	return build(&f, buf);
}

static size_t f_tcp6_hbh(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_HOPOPTS } };
	return ipv6_with_ext(buf, IP_PROTO_TCP, e, 1, -1);
}

static size_t f_udp6_routing(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_ROUTING, .len8 = 2 } };
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, 1, -1);
}

static size_t f_tcp6_dstopts(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_DSTOPTS, .len8 = 1 } };
	return ipv6_with_ext(buf, IP_PROTO_TCP, e, 1, -1);
}

static size_t f_tcp6_ah(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_AH, .len8 = 4 } };
	return ipv6_with_ext(buf, IP_PROTO_TCP, e, 1, -1);
}

static size_t f_udp6_frag_first(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = {
		{ .type = IP_PROTO_FRAGMENT, .frag_more = true, .frag_id = 77 },
	};
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, 1, -1);
}

/* Offset 0 and no more fragments (RFC 6946): a whole datagram. */
static size_t f_udp6_atomic_frag(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_FRAGMENT, .frag_id = 78 } };
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, 1, -1);
}

static size_t f_udp6_frag_later(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = {
		{ .type = IP_PROTO_FRAGMENT, .frag_offset = 185, .frag_id = 77 },
	};
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, 1, -1);
}

static size_t f_udp6_all_ext(uint8_t *buf)
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

static size_t ipv6_n_dstopts(uint8_t *buf, unsigned n)
{
	struct fb_ipv6_ext e[FB_MAX_IPV6_EXT];
	for (unsigned i = 0; i < n; i++)
		e[i] = (struct fb_ipv6_ext){ .type = IP_PROTO_DSTOPTS };
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, n, -1);
}

static size_t f_udp6_8_ext(uint8_t *buf)
{
	return ipv6_n_dstopts(buf, FLOW_IPV6_MAX_EXT_HDRS);
}

static size_t f_udp6_9_ext(uint8_t *buf)
{
	return ipv6_n_dstopts(buf, FLOW_IPV6_MAX_EXT_HDRS + 1);
}

static size_t f_udp6_hbh_second(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_DSTOPTS }, { .type = IP_PROTO_HOPOPTS } };
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, 2, -1);
}

static size_t f_jumbo_len0(uint8_t *buf)
{
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_HOPOPTS } };
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, 1, 0);
}

static size_t f_jumbo_option(uint8_t *buf)
{
	static const uint8_t jumbo[6] = { IPV6_OPT_JUMBO, 4, 0, 1, 0, 0 };
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_HOPOPTS, .body = jumbo } };
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, 1, -1);
}

static size_t f_hbh_bad_option(uint8_t *buf)
{
	static const uint8_t overrun[6] = { 1, 5, 0, 0, 0, 0 }; /* PadN of 5 in 4 bytes */
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_HOPOPTS, .body = overrun } };
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, 1, -1);
}

static size_t f_dstopts_bad_option(uint8_t *buf)
{
	static const uint8_t overrun[6] = { 0, 0, 0, 0, 0x1e, 9 }; /* Pad1 x4, then too long */
	const struct fb_ipv6_ext e[] = { { .type = IP_PROTO_DSTOPTS, .body = overrun } };
	return ipv6_with_ext(buf, IP_PROTO_UDP, e, 1, -1);
}

static size_t wrap(uint8_t *buf, size_t (*inner)(uint8_t *), uint8_t family)
{
	size_t inner_len = inner(inner_buf);
	struct fb_vxlan vx;
	fb_vxlan_init(&vx, family, VNI);
	size_t len = fb_wrap_vxlan(&vx, inner_buf, inner_len, buf, FB_MAX_FRAME);
	assert_true(len > 0);
	return len;
}

static size_t f_vx4_tcp4(uint8_t *buf) { return wrap(buf, f_tcp4, 4); }
static size_t f_vx4_tcp4_opts(uint8_t *buf) { return wrap(buf, f_tcp4_syn_opts, 4); }
static size_t f_vx4_udp6(uint8_t *buf) { return wrap(buf, f_udp6, 4); }
static size_t f_vx4_arp(uint8_t *buf) { return wrap(buf, f_arp, 4); }
static size_t f_vx4_icmp6(uint8_t *buf) { return wrap(buf, f_icmp6, 4); }
static size_t f_vx4_vlan(uint8_t *buf) { return wrap(buf, f_tcp4_vlan, 4); }
static size_t f_vx4_ack_padded(uint8_t *buf) { return wrap(buf, f_tcp4_ack_padded, 4); }
static size_t f_vx4_ext(uint8_t *buf) { return wrap(buf, f_udp6_all_ext, 4); }
static size_t f_vx4_frag_later(uint8_t *buf) { return wrap(buf, f_udp4_frag_later, 4); }
static size_t f_vx6_tcp6(uint8_t *buf) { return wrap(buf, f_tcp6, 6); }
static size_t f_vx6_icmp4(uint8_t *buf) { return wrap(buf, f_icmp4, 6); }
static size_t f_vx4_vxlan(uint8_t *buf) { return wrap(buf, f_vx4_tcp4, 4); }
static size_t f_vx4_3tags(uint8_t *buf) { return wrap(buf, f_tcp4_3tags, 4); }
static size_t f_vx4_unknown_type(uint8_t *buf) { return wrap(buf, f_unknown_ethertype, 4); }

static size_t f_vx4_inner_short(uint8_t *buf)
{
	memset(inner_buf, 0xab, 10);
	struct fb_vxlan vx;
	fb_vxlan_init(&vx, 4, VNI);
	return fb_wrap_vxlan(&vx, inner_buf, 10, buf, FB_MAX_FRAME);
}

/* Outer datagram is an IPv4 first fragment: VXLAN is not parsed. */
static size_t f_vx4_outer_frag(uint8_t *buf)
{
	size_t inner_len = f_tcp4(inner_buf);
	struct fb_vxlan vx;
	fb_vxlan_init(&vx, 4, VNI);
	vx.frag_off = IPV4_MF;
	return fb_wrap_vxlan(&vx, inner_buf, inner_len, buf, FB_MAX_FRAME);
}

/* ---- running a frame ------------------------------------------------------ */

static enum drop_reason extract(struct pkt *p, const uint8_t *frame, size_t len,
				uint16_t vxlan_port, struct flow_key *key)
{
	assert_int_equal(pkt_set_data(p, frame, (uint32_t)len), 0);
	p->in_port = TEST_IN_PORT;
	return flow_extract(p, vxlan_port, key);
}

/* Invariants every successful parse keeps, whatever the frame (the same
 * list the fuzz target holds the parser to). */
static void check_invariants(const struct pkt *p, const struct flow_key *key)
{
	const char *violated = flow_invariant_violated(p, key, false);

	assert_int_equal(key->in_port, TEST_IN_PORT);
	if (violated)
		fail_msg("invariant does not hold: %s", violated);
}

/* ---- the table -------------------------------------------------------------- */

struct patch {
	uint16_t ofs1; /* offset + 1; 0 ends the list */
	uint8_t val;
};
#define P(o, v) { (o) + 1, (v) }

struct frame_case {
	unsigned n;
	const char *what;
	size_t (*build)(uint8_t *buf);
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
	size_t len = tc->build(frame_buf);
	assert_true(len > 0);
	for (size_t i = 0; i < ARRAY_SIZE(tc->patch) && tc->patch[i].ofs1; i++) {
		assert_true(tc->patch[i].ofs1 - 1u < len);
		frame_buf[tc->patch[i].ofs1 - 1] = tc->patch[i].val;
	}
	/* cut 1 means "cut to 0 bytes" (0 already means "no cut"). */
	if (tc->cut)
		len = tc->cut == 1 ? 0 : tc->cut;

	struct flow_key key;
	enum drop_reason got = extract(p, frame_buf, len, tc->vxlan_port, &key);
	if (got != tc->want) {
		char title[160];
		snprintf(title, sizeof(title), "case %u (%s)", tc->n, tc->what);
		fb_hexdump(title, frame_buf, len);
		fail_msg("case %u (%s): got %s, want %s", tc->n, tc->what, drop_reason_name(got),
			 drop_reason_name(tc->want));
	}
	if (got == DROP_NONE) {
		check_invariants(p, &key);
		expect_failure[0] = 0;
		if (tc->check)
			tc->check(p, &key);
		if (expect_failure[0]) {
			char title[160];
			snprintf(title, sizeof(title), "case %u (%s)", tc->n, tc->what);
			fb_hexdump(title, frame_buf, len);
			fail_msg("case %u (%s): %s", tc->n, tc->what, expect_failure);
		}
	}
}

static void test_table(void **state)
{
	(void)state;
	struct pkt *p = pkt_alloc(pool);
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

/* ---- exact keys ------------------------------------------------------------ */

static void assert_key_equal(const struct flow_key *got, const struct flow_key *want,
			     const uint8_t *frame, size_t len)
{
	if (memcmp(got, want, sizeof(*got)) == 0)
		return;
	fb_hexdump("frame", frame, len);
	fb_hexdump("want key", (const uint8_t *)want, sizeof(*want));
	fb_hexdump("got key ", (const uint8_t *)got, sizeof(*got));
	fail_msg("flow keys differ");
}

static void test_exact_key_tcp4_vlan_syn(void **state)
{
	(void)state;
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.n_vlans = 1;
	f.vlan_tpid[0] = ETH_TYPE_VLAN;
	f.vlan_tci[0] = 0x0fff;
	f.tos = 0x2e;
	f.ttl = 3;
	f.src_port = 40000;
	f.dst_port = 443;
	f.tcp_flags = TCP_SYN | TCP_ECE | TCP_CWR | TCP_NS;
	f.tcp_opts = syn_opts;
	f.tcp_opts_len = sizeof(syn_opts);
	f.payload_len = 5;
	size_t len = build(&f, frame_buf);

	struct flow_key want;
	memset(&want, 0, sizeof(want));
	want.in_port = TEST_IN_PORT;
	memcpy(want.dl_dst, f.dst_mac, 6);
	memcpy(want.dl_src, f.src_mac, 6);
	want.dl_type = ETH_TYPE_IPV4;
	want.vlan_tci[0] = 0x0fff;
	want.vlan_tpid[0] = ETH_TYPE_VLAN;
	want.n_vlans = 1;
	want.nw_family = 4;
	want.nw_proto = IP_PROTO_TCP;
	want.nw_tos = 0x2e;
	want.nw_ttl = 3;
	memcpy(want.nw_src, f.src_ip, 4);
	memcpy(want.nw_dst, f.dst_ip, 4);
	want.tp_src = 40000;
	want.tp_dst = 443;
	want.tcp_flags = TCP_SYN | TCP_ECE | TCP_CWR | TCP_NS;
	want.tcp_opts = (struct tcp_opts){
		.present = TCP_OPTS_MSS | TCP_OPTS_SACK_PERM | TCP_OPTS_TIMESTAMP | TCP_OPTS_WSCALE,
		.wscale = 7, .mss = 1460, .tsval = 0x11223344, .tsecr = 0x55667788,
	};

	struct pkt *p = pkt_alloc(pool);
	struct flow_key key;
	assert_int_equal(extract(p, frame_buf, len, VXLAN_DEFAULT_PORT, &key), DROP_NONE);
	assert_key_equal(&key, &want, frame_buf, len);
	assert_int_equal(p->l2_ofs, 0);
	assert_int_equal(p->l3_ofs, 18);
	assert_int_equal(p->l4_ofs, 38);
	assert_int_equal(p->payload_ofs, 38 + 40);
	assert_int_equal(p->tunnel_ofs, PKT_OFS_NONE);
	assert_int_equal(p->inner_l2_ofs, PKT_OFS_NONE);
	assert_int_equal(p->size, len);
	pkt_free(p);
}

static void test_exact_key_vxlan6_udp4(void **state)
{
	(void)state;
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.src_port = 5353;
	f.dst_port = 53;
	f.payload_len = 30;
	size_t inner_len = build(&f, inner_buf);
	struct fb_vxlan vx;
	fb_vxlan_init(&vx, 6, 0xffffff);
	vx.src_port = 61000;
	size_t len = fb_wrap_vxlan(&vx, inner_buf, inner_len, frame_buf, sizeof(frame_buf));
	assert_true(len > 0);

	struct flow_key want;
	memset(&want, 0, sizeof(want));
	memcpy(want.tun_src, vx.src_ip, 16);
	memcpy(want.tun_dst, vx.dst_ip, 16);
	want.tun_vni = 0xffffff;
	want.tun_src_port = 61000;
	want.tun_dst_port = VXLAN_DEFAULT_PORT;
	want.tun_family = 6;
	want.in_port = TEST_IN_PORT;
	memcpy(want.dl_dst, f.dst_mac, 6);
	memcpy(want.dl_src, f.src_mac, 6);
	want.dl_type = ETH_TYPE_IPV4;
	want.nw_family = 4;
	want.nw_proto = IP_PROTO_UDP;
	want.nw_ttl = 64;
	memcpy(want.nw_src, f.src_ip, 4);
	memcpy(want.nw_dst, f.dst_ip, 4);
	want.tp_src = 5353;
	want.tp_dst = 53;

	struct pkt *p = pkt_alloc(pool);
	struct flow_key key;
	assert_int_equal(extract(p, frame_buf, len, VXLAN_DEFAULT_PORT, &key), DROP_NONE);
	assert_key_equal(&key, &want, frame_buf, len);
	assert_int_equal(p->l4_ofs, 54);
	assert_int_equal(p->tunnel_ofs, 62);
	assert_int_equal(p->inner_l2_ofs, 70);
	assert_int_equal(p->inner_l3_ofs, 84);
	assert_int_equal(p->inner_l4_ofs, 104);
	assert_int_equal(p->inner_payload_ofs, 112);
	assert_int_equal(pkt_innermost_l4(p), 104);
	assert_int_equal(pkt_innermost_payload(p), 112);
	assert_int_equal(p->tunnel.vni, 0xffffff);
	assert_int_equal(p->tunnel.src_port, 61000);
	assert_memory_equal(p->tunnel.dst, vx.dst_ip, 16);
	pkt_free(p);
}

/* The same inner frame gives the same L2..L4 key whether it came alone,
 * in a whole outer frame or from a UDP socket (flow_extract_vxlan). */
static void test_flow_extract_vxlan_matches_decap(void **state)
{
	(void)state;
	size_t inner_len = f_tcp4_syn_opts(inner_buf);
	struct fb_vxlan vx;
	fb_vxlan_init(&vx, 4, 99);
	size_t outer_len = fb_wrap_vxlan(&vx, inner_buf, inner_len, frame_buf, sizeof(frame_buf));
	struct pkt *p = pkt_alloc(pool);
	struct flow_key whole, plain, sock;
	assert_int_equal(extract(p, frame_buf, outer_len, VXLAN_DEFAULT_PORT, &whole), DROP_NONE);
	assert_int_equal(extract(p, inner_buf, inner_len, 0, &plain), DROP_NONE);

	struct fb_vxlan bare = vx;
	bare.family = 0;
	static uint8_t sock_buf[FB_MAX_FRAME];
	size_t sock_len = fb_wrap_vxlan(&bare, inner_buf, inner_len, sock_buf, sizeof(sock_buf));
	assert_int_equal(sock_len, VXLAN_HDR_LEN + inner_len);
	assert_int_equal(pkt_set_data(p, sock_buf, (uint32_t)sock_len), 0);
	p->in_port = TEST_IN_PORT;
	p->tunnel.family = 4;
	memcpy(p->tunnel.src, vx.src_ip, 4);
	memcpy(p->tunnel.dst, vx.dst_ip, 4);
	p->tunnel.src_port = vx.src_port;
	p->tunnel.dst_port = vx.dst_port;
	assert_int_equal(flow_extract_vxlan(p, &sock), DROP_NONE);
	assert_int_equal(p->l2_ofs, PKT_OFS_NONE);
	assert_int_equal(p->l4_ofs, PKT_OFS_NONE);
	assert_int_equal(p->tunnel_ofs, 0);
	assert_int_equal(p->inner_l2_ofs, 8);
	assert_int_equal(p->inner_l3_ofs, 22);
	assert_int_equal(p->inner_l4_ofs, 42);
	assert_int_equal(p->inner_payload_ofs, 82);
	assert_int_equal(p->tunnel.vni, 99);

	assert_key_equal(&sock, &whole, sock_buf, sock_len);
	const size_t l2 = offsetof(struct flow_key, dl_dst);
	assert_memory_equal((uint8_t *)&whole + l2, (uint8_t *)&plain + l2, sizeof(whole) - l2);
	assert_int_equal(whole.tun_vni, 99);
	assert_int_equal(plain.tun_family, 0);

	/* Socket path refuses bad VXLAN headers by name too. */
	sock_buf[0] = 0;
	assert_int_equal(pkt_set_data(p, sock_buf, (uint32_t)sock_len), 0);
	assert_int_equal(flow_extract_vxlan(p, &sock), DROP_VXLAN_NO_VNI_FLAG);
	assert_int_equal(pkt_set_data(p, sock_buf, 7), 0);
	assert_int_equal(flow_extract_vxlan(p, &sock), DROP_TRUNCATED_VXLAN);
	pkt_free(p);
}

/* A GRO'd frame: headers linear, payload in a frag.  Lengths count the
 * frag; padding past the IP length is trimmed out of the frag. */
static void test_payload_in_frags(void **state)
{
	(void)state;
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.payload_len = 1000;
	size_t len = build(&f, frame_buf);
	struct pkt *head = pkt_alloc(pool), *body = pkt_alloc(pool);
	assert_int_equal(pkt_set_data(head, frame_buf, 54), 0);
	frame_buf[len] = 0xee; /* one byte of "padding" after the datagram */
	assert_int_equal(pkt_set_data(body, frame_buf + 54, (uint32_t)(len - 54 + 1)), 0);
	assert_int_equal(pkt_add_frag(head, body->data, body->size, body), 0);
	struct flow_key key;
	assert_int_equal(flow_extract(head, 0, &key), DROP_NONE);
	assert_int_equal(pkt_len(head), len);
	assert_int_equal(head->payload_ofs, 54);
	assert_int_equal(key.tp_dst, 2000);

	/* Headers must be linear: TCP header in the frag is truncated_tcp. */
	assert_int_equal(pkt_set_data(head, frame_buf, 40), 0);
	assert_int_equal(pkt_set_data(body, frame_buf + 40, (uint32_t)(len - 40)), 0);
	assert_int_equal(pkt_add_frag(head, body->data, body->size, body), 0);
	assert_int_equal(flow_extract(head, 0, &key), DROP_TRUNCATED_TCP);
	pkt_free(head);
	pkt_free(body);
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
	struct pkt *p = pkt_alloc(pool);
	unsigned frames = 0, cuts = 0;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct frame_case *tc = &cases[i];
		if (tc->want != DROP_NONE || tc->patch[0].ofs1 || tc->cut)
			continue;
		size_t full = tc->build(frame_buf);
		struct flow_key full_key;
		assert_int_equal(extract(p, frame_buf, full, tc->vxlan_port, &full_key), DROP_NONE);
		uint32_t parsed_len = p->size; /* after padding was trimmed */
		frames++;
		for (size_t len = 0; len < full; len++) {
			struct flow_key key;
			enum drop_reason got = extract(p, frame_buf, len, tc->vxlan_port, &key);
			cuts++;
			if (got == DROP_NONE) {
				check_invariants(p, &key);
				/* Cutting into the parsed frame must be noticed
				 * unless nothing told us its length (802.3,
				 * unknown type, ARP tail). */
				if (len >= parsed_len)
					assert_memory_equal(&key, &full_key, sizeof(key));
				continue;
			}
			if (!is_length_reason(got)) {
				fb_hexdump(tc->what, frame_buf, len);
				fail_msg("case %u cut at %zu: %s", tc->n, len, drop_reason_name(got));
			}
		}
	}
	assert_true(frames >= 40);
	assert_true(cuts > 3000);
	pkt_free(p);
}

/* ---- tcp_opts_parse ------------------------------------------------------ */

struct tcp_opts_case {
	unsigned n;
	uint8_t bytes[40];
	size_t len;
	bool ok;
	struct tcp_opts want;
};

static const struct tcp_opts_case tcp_opts_cases[] = {
	{ 1, {}, 0, true, {} },
	{ 2, { TCP_OPT_EOL, 0xff, 0xff, 0xff }, 4, true, {} }, /* junk after EOL ignored */
	{ 3, { TCP_OPT_NOP, TCP_OPT_NOP, TCP_OPT_NOP, TCP_OPT_NOP }, 4, true, {} },
	{ 4, { TCP_OPT_MSS, 4, 0x23, 0x28 }, 4, true, { .present = TCP_OPTS_MSS, .mss = 9000 } },
	{ 5, { TCP_OPT_MSS, 3, 0x23 }, 3, false, {} },
	{ 6, { TCP_OPT_MSS, 4, 0x23 }, 3, false, {} }, /* length past the end */
	{ 7, { TCP_OPT_MSS }, 1, false, {} },          /* no length byte */
	{ 8, { TCP_OPT_WSCALE, 3, 14, TCP_OPT_NOP }, 4, true, { .present = TCP_OPTS_WSCALE, .wscale = 14 } },
	{ 9, { TCP_OPT_WSCALE, 4, 14, 0 }, 4, false, {} },
	{ 10, { TCP_OPT_NOP, TCP_OPT_NOP, TCP_OPT_TIMESTAMP, 10, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff }, 12, true,
	  { .present = TCP_OPTS_TIMESTAMP, .tsval = 1, .tsecr = 0xffffffff } },
	{ 11, { TCP_OPT_TIMESTAMP, 8, 0, 0, 0, 1, 0, 0 }, 8, false, {} },
	{ 12, { TCP_OPT_SACK_PERM, 2, TCP_OPT_NOP, TCP_OPT_NOP }, 4, true, { .present = TCP_OPTS_SACK_PERM } },
	{ 13, { TCP_OPT_SACK_PERM, 3, 0, TCP_OPT_EOL }, 4, true, {} }, /* ignored, as Linux */
	{ 14, { TCP_OPT_NOP, TCP_OPT_NOP, TCP_OPT_SACK, 10, 0, 0, 0, 1, 0, 0, 0, 2 }, 12, true, { .present = TCP_OPTS_SACK } },
	{ 15, { TCP_OPT_SACK, 6, 0, 0, 0, 1 }, 6, true, {} }, /* half a block: ignored */
	{ 16, { 30, 4, 1, 2 }, 4, true, {} },                 /* unknown (MPTCP) skipped */
	{ 17, { 30, 0, 1, 2 }, 4, false, {} },                /* length 0 would loop forever */
	{ 18, { 30, 1, 1, 2 }, 4, false, {} },
	{ 19, { 253, 2 }, 2, true, {} },
	{ 20, { TCP_OPT_MSS, 4, 0x05, 0xb4, TCP_OPT_MSS, 4, 0x05, 0xa0 }, 8, true, { .present = TCP_OPTS_MSS, .mss = 1440 } },
	{ 21, { TCP_OPT_MSS, 4, 0x05, 0xb4, TCP_OPT_NOP, TCP_OPT_WSCALE, 3, 7, TCP_OPT_SACK_PERM, 2,
		TCP_OPT_TIMESTAMP, 10, 1, 2, 3, 4, 5, 6, 7, 8 }, 20, true,
	  { .present = TCP_OPTS_MSS | TCP_OPTS_WSCALE | TCP_OPTS_SACK_PERM | TCP_OPTS_TIMESTAMP,
	    .wscale = 7, .mss = 1460, .tsval = 0x01020304, .tsecr = 0x05060708 } },
	{ 22, { TCP_OPT_NOP, TCP_OPT_NOP, TCP_OPT_TIMESTAMP, 10, 1, 2, 3, 4, 5, 6, 7 }, 11, false, {} },
};

static void test_tcp_opts_parse(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(tcp_opts_cases); i++) {
		const struct tcp_opts_case *tc = &tcp_opts_cases[i];
		struct tcp_opts got;
		memset(&got, 0xa5, sizeof(got));
		bool ok = tcp_opts_parse(tc->bytes, tc->len, &got);
		if (ok != tc->ok)
			fail_msg("tcp_opts case %u: returned %d", tc->n, ok);
		if (ok && memcmp(&got, &tc->want, sizeof(got)) != 0) {
			fb_hexdump("options", tc->bytes, tc->len);
			fail_msg("tcp_opts case %u: present %#x mss %u wscale %u tsval %#x tsecr %#x",
				 tc->n, got.present, got.mss, got.wscale, got.tsval, got.tsecr);
		}
	}
}

/* SCTP: the ports are in the key (flower's src_port/dst_port); a common
 * header cut short leaves them zero and is not a drop; no payload offset. */
static void test_sctp_ports(void **state)
{
	(void)state;
	struct pkt *p = pkt_alloc(pool);
	struct flow_key key;
	for (uint8_t family = 4; family <= 6; family += 2) {
		struct fb_frame f;
		fb_frame_init(&f, family, IP_PROTO_SCTP);
		f.src_port = 5000, f.dst_port = 36412;
		f.payload_len = 16;
		struct fb_layout lay;
		size_t len = fb_build(&f, frame_buf, sizeof(frame_buf), &lay);
		assert_int_equal(extract(p, frame_buf, len, 0, &key), DROP_NONE);
		check_invariants(p, &key);
		assert_int_equal(key.nw_proto, IP_PROTO_SCTP);
		assert_int_equal(key.tp_src, 5000);
		assert_int_equal(key.tp_dst, 36412);
		assert_int_equal(p->l4_ofs, lay.l4_ofs);
		assert_int_equal(p->payload_ofs, PKT_OFS_NONE);
		/* 11 bytes of SCTP (the IPv4 header checksum is not verified here):
		 * the ports are not read */
		f.payload_len = 0;
		len = fb_build(&f, frame_buf, sizeof(frame_buf), &lay);
		uint8_t *ip = frame_buf + lay.l3_ofs;
		if (family == 4)
			ip[3] = (uint8_t)(ip[3] - 1);
		else
			ip[5] = (uint8_t)(ip[5] - 1);
		assert_int_equal(extract(p, frame_buf, len - 1, 0, &key), DROP_NONE);
		assert_int_equal(key.tp_src, 0);
		assert_int_equal(key.tp_dst, 0);
	}
	pkt_free(p);
}

/* Offsets from a previous frame never leak into the next parse. */
static void test_offsets_reset_between_frames(void **state)
{
	(void)state;
	struct pkt *p = pkt_alloc(pool);
	struct flow_key key;
	size_t len = f_vx4_tcp4(frame_buf);
	assert_int_equal(extract(p, frame_buf, len, VXLAN_DEFAULT_PORT, &key), DROP_NONE);
	assert_int_not_equal(p->inner_l4_ofs, PKT_OFS_NONE);
	/* Re-parse the same bytes in place without decap. */
	p->in_port = TEST_IN_PORT;
	assert_int_equal(flow_extract(p, 0, &key), DROP_NONE);
	assert_int_equal(p->tunnel_ofs, PKT_OFS_NONE);
	assert_int_equal(p->inner_l2_ofs, PKT_OFS_NONE);
	assert_int_equal(p->inner_l4_ofs, PKT_OFS_NONE);
	assert_int_equal(key.tun_vni, 0);
	assert_int_equal(p->tunnel.family, 0); /* no stale tunnel metadata */
	check_invariants(p, &key);
	pkt_free(p);
}

static int setup(void **state)
{
	(void)state;
	return pkt_pool_create(4, &pool) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	pkt_pool_destroy(pool);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_table_covers_every_parse_reason),
		cmocka_unit_test(test_exact_key_tcp4_vlan_syn),
		cmocka_unit_test(test_exact_key_vxlan6_udp4),
		cmocka_unit_test(test_flow_extract_vxlan_matches_decap),
		cmocka_unit_test(test_payload_in_frags),
		cmocka_unit_test(test_truncation_sweep),
		cmocka_unit_test(test_tcp_opts_parse),
		cmocka_unit_test(test_offsets_reset_between_frames),
		cmocka_unit_test(test_sctp_ports),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
