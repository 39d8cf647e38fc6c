/* Unit tests for the classifier and flower tables (src/switch/classifier.c,
 * flower_rule.c, flower_table.c): each match key against real frames run
 * through flow_extract (so the mapping of tc's keys onto struct flow_key is
 * checked against what the parser really produces), priority between
 * overlapping rules, chains and goto, per-port tables, the batch rules
 * (atomic, duplicate handle, automatic pref/handle, del), counters by slot,
 * and a property test against a linear scan of the same rules. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "flower_test_util.h"
#include "frame_builder.h"
#include "packet/hdr.h"
#include "parse/flow_extract.h"
#include "pool_fixture.h"

PKT_POOL_FIXTURE(4)

enum { VNET0 = 1, VNET1 = 2, VXLAN0 = 3 };

static uint8_t frame_buf[FB_MAX_FRAME], outer_buf[FB_MAX_FRAME];

static struct flow_key key_of_bytes(const uint8_t *buf, size_t len, uint16_t in_port)
{
	struct flow_key key;
	struct pkt *p = pkt_alloc(pool);
	assert_non_null(p);
	assert_true(len > 0);
	assert_int_equal(pkt_set_data(p, buf, (uint32_t)len), 0);
	p->in_port = in_port;
	assert_int_equal(flow_extract(p, 4789, &key), DROP_NONE);
	pkt_free(p);
	return key;
}

static struct flow_key key_of(const struct fb_frame *f, uint16_t in_port)
{
	return key_of_bytes(frame_buf, fb_build(f, frame_buf, sizeof(frame_buf), NULL), in_port);
}

/* The frame f inside VXLAN (outer IPv4 or IPv6, VNI), arriving on vxlan0. */
static struct flow_key key_of_vxlan(const struct fb_frame *f, uint8_t family, uint32_t vni)
{
	size_t len = fb_build(f, frame_buf, sizeof(frame_buf), NULL);
	struct fb_vxlan vx;
	fb_vxlan_init(&vx, family, vni);
	size_t olen = fb_wrap_vxlan(&vx, frame_buf, len, outer_buf, sizeof(outer_buf));
	return key_of_bytes(outer_buf, olen, VXLAN0);
}

/* pref * 1000 + handle of the first matching rule, 0 for none. */
static uint32_t hit(const struct flower_table *t, const struct flow_key *key)
{
	struct flower_verdict v;
	flower_table_classify(t, key, &v);
	if (v.end == FLOWER_END_NO_MATCH) {
		assert_int_equal(v.n_rules, 0);
		return 0;
	}
	return v.rules[0]->pref * 1000 + v.rules[0]->handle;
}

/* Frame f arriving on in_port hits rule `want` (pref * 1000 + handle). */
static void expect_hit_at(const struct flower_table *t, const struct flow_key *k, uint32_t want,
			  int line)
{
	uint32_t got = hit(t, k);
	if (got != want)
		fail_msg("line %d: hit %u, expected %u", line, got, want);
}
#define expect_hit(t, f, in_port, want) expect_hit_at(t, (struct flow_key[]){ key_of(f, in_port) }, want, __LINE__)
#define expect_hit_vxlan(t, f, family, vni, want) \
	expect_hit_at(t, (struct flow_key[]){ key_of_vxlan(f, family, vni) }, want, __LINE__)

static void ip4(uint8_t *a, uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3)
{
	a[0] = b0, a[1] = b1, a[2] = b2, a[3] = b3;
}

#define A "filter add dev vnet0 ingress "
#define DROP " action drop"

/* ---- L2 --------------------------------------------------------------------- */

static void test_protocol(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(A "pref 1 protocol arp flower" DROP,
				       A "pref 2 protocol ip flower" DROP,
				       A "pref 3 protocol ipv6 flower" DROP,
				       A "pref 4 protocol 802.1Q flower vlan_id 100" DROP,
				       A "pref 5 protocol all flower" DROP);
	struct fb_frame f;
	fb_frame_init(&f, FB_ARP, 0);
	expect_hit(t, &f, VNET0, 1001);
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	expect_hit(t, &f, VNET0, 2001);
	fb_frame_init(&f, 6, IP_PROTO_UDP);
	expect_hit(t, &f, VNET0, 3001);
	/* a tagged IPv4 frame is "protocol 802.1Q" (the wire's outer type) */
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.n_vlans = 1, f.vlan_tpid[0] = 0x8100, f.vlan_tci[0] = 100;
	expect_hit(t, &f, VNET0, 4001);
	f.vlan_tci[0] = 101;
	expect_hit(t, &f, VNET0, 5001);
	/* another port has no rules */
	expect_hit(t, &f, VNET1, 0);
	assert_false(flower_table_port_has_rules(t, VNET1));
	assert_true(flower_table_port_has_rules(t, VNET0));
	flower_table_destroy(t);
}

static void test_vlan_keys(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(
		A "pref 1 protocol 802.1Q flower vlan_id 10 vlan_prio 5 vlan_ethtype ipv6" DROP,
		A "pref 2 protocol 802.1Q flower vlan_prio 5" DROP,
		A "pref 3 protocol 802.1Q flower vlan_ethtype 802.1Q" DROP,
		A "pref 4 protocol 802.1ad flower vlan_id 7" DROP);
	struct fb_frame f;
	fb_frame_init(&f, 6, IP_PROTO_UDP);
	f.n_vlans = 1, f.vlan_tpid[0] = 0x8100, f.vlan_tci[0] = 5 << 13 | 10;
	expect_hit(t, &f, VNET0, 1001);
	fb_frame_init(&f, 4, IP_PROTO_UDP); /* same tag, IPv4 inside */
	f.n_vlans = 1, f.vlan_tpid[0] = 0x8100, f.vlan_tci[0] = 5 << 13 | 10;
	expect_hit(t, &f, VNET0, 2001);
	f.n_vlans = 2, f.vlan_tpid[1] = 0x8100, f.vlan_tci[0] = 3 << 13 | 10, f.vlan_tci[1] = 1;
	expect_hit(t, &f, VNET0, 3001);
	f.n_vlans = 1, f.vlan_tpid[0] = 0x88a8, f.vlan_tci[0] = 7;
	expect_hit(t, &f, VNET0, 4001);
	flower_table_destroy(t);
}

static void test_mac_masks(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(
		A "pref 1 flower dst_mac 02:00:00:00:00:02 src_mac 02:00:00:00:00:01" DROP,
		A "pref 2 flower dst_mac 02:00:00:00:00:00/40" DROP,
		A "pref 3 flower src_mac 01:00:00:00:00:00/01:00:00:00:00:00" DROP,
		A "pref 4 flower dst_mac ff:ff:ff:ff:ff:ff" DROP);
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	expect_hit(t, &f, VNET0, 1001);
	f.dst_mac[5] = 0x77; /* in 02:00:00:00:00:xx */
	expect_hit(t, &f, VNET0, 2001);
	memset(f.dst_mac, 0xff, 6);
	expect_hit(t, &f, VNET0, 4001);
	f.src_mac[0] = 0x03; /* group bit in the source */
	expect_hit(t, &f, VNET0, 3001);
	flower_table_destroy(t);
}

/* ---- L3 --------------------------------------------------------------------- */

static void test_prefixes_and_priority(void **state)
{
	(void)state;
	/* overlapping prefixes: the better pref wins whatever the length */
	struct flower_table *t = TABLE(A "pref 10 protocol ip flower dst_ip 192.0.2.0/24" DROP,
				       A "pref 20 protocol ip flower dst_ip 192.0.0.0/16" DROP,
				       A "pref 5 protocol ip flower dst_ip 192.0.2.128/25" DROP,
				       A "pref 30 protocol ip flower src_ip 0.0.0.0/0" DROP,
				       A "pref 10 handle 9 protocol ip flower dst_ip 192.0.2.2" DROP,
				       A "pref 1 protocol ipv6 flower dst_ip 2001:db8::/32" DROP,
				       A "pref 2 protocol ipv6 flower src_ip 2001:db8::1 dst_ip "
				       "2001:db8:1::/48" DROP);
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	ip4(f.dst_ip, 192, 0, 2, 200);
	expect_hit(t, &f, VNET0, 5001);
	ip4(f.dst_ip, 192, 0, 2, 2); /* pref 10: handle 1 (/24) before handle 9 (/32) */
	expect_hit(t, &f, VNET0, 10001);
	ip4(f.dst_ip, 192, 0, 3, 1);
	expect_hit(t, &f, VNET0, 20001);
	ip4(f.dst_ip, 203, 0, 113, 1);
	expect_hit(t, &f, VNET0, 30001);
	fb_frame_init(&f, 6, IP_PROTO_TCP);
	expect_hit(t, &f, VNET0, 1001); /* 2001:db8::1 -> 2001:db8::2 */
	f.dst_ip[0] = 0x20, f.dst_ip[1] = 0x02; /* 2002:... */
	expect_hit(t, &f, VNET0, 0);
	flower_table_destroy(t);

	/* the same rules with the /32 first: it wins for its address only */
	t = TABLE(A "pref 1 protocol ip flower dst_ip 192.0.2.2" DROP,
		  A "pref 2 protocol ip flower dst_ip 192.0.2.0/24" DROP,
		  A "pref 3 protocol ip flower dst_ip 192.0.0.0/255.255.0.1" DROP);
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	expect_hit(t, &f, VNET0, 1001);
	ip4(f.dst_ip, 192, 0, 2, 3);
	expect_hit(t, &f, VNET0, 2001);
	ip4(f.dst_ip, 192, 0, 3, 4); /* the non-contiguous mask: last bit 0 */
	expect_hit(t, &f, VNET0, 3001);
	ip4(f.dst_ip, 192, 0, 3, 5);
	expect_hit(t, &f, VNET0, 0);
	flower_table_destroy(t);
}

static void test_ip_fields(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(A "pref 1 protocol ip flower ip_tos 0xb8/0xfc" DROP,
				       A "pref 2 protocol ip flower ip_ttl 1" DROP,
				       A "pref 3 protocol ip flower ip_proto 0x2f" DROP,
				       A "pref 4 protocol ipv6 flower ip_ttl 0/0xc0" DROP);
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.tos = 0xb9; /* DSCP EF, ECN 1 */
	expect_hit(t, &f, VNET0, 1001);
	f.tos = 0, f.ttl = 1;
	expect_hit(t, &f, VNET0, 2001);
	fb_frame_init(&f, 4, 47);
	expect_hit(t, &f, VNET0, 3001);
	fb_frame_init(&f, 6, IP_PROTO_UDP);
	f.ttl = 63;
	expect_hit(t, &f, VNET0, 4001);
	f.ttl = 64;
	expect_hit(t, &f, VNET0, 0);
	flower_table_destroy(t);
}

/* ip_flags against first, later and no fragments. */
static void test_ip_flags(void **state)
{
	(void)state;
	static const struct {
		const char *flags;
		bool none, first, later;
	} cases[] = {
		{ "frag", false, true, true },           { "nofrag", true, false, false },
		{ "firstfrag", false, true, false },      { "nofirstfrag", true, false, true },
		{ "frag/firstfrag", false, true, false }, { "frag/nofirstfrag", false, false, true },
		{ "nofrag/nofirstfrag", true, false, false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char line[256];
		snprintf(line, sizeof(line), A "pref 1 protocol ip flower ip_flags %s" DROP,
			 cases[i].flags);
		const char *lines[] = { line };
		struct flower_table *t = test_table(NULL, lines, 1);
		struct fb_frame f;
		fb_frame_init(&f, 4, IP_PROTO_UDP);
		f.payload_len = 64;
		struct flow_key none = key_of(&f, VNET0);
		f.frag_off = IPV4_MF;
		struct flow_key first = key_of(&f, VNET0);
		f.frag_off = 8;
		struct flow_key later = key_of(&f, VNET0);
		assert_true(first.nw_frag == FLOW_FRAG_ANY);
		assert_true(later.nw_frag == (FLOW_FRAG_ANY | FLOW_FRAG_LATER));
		if ((hit(t, &none) != 0) != cases[i].none || (hit(t, &first) != 0) != cases[i].first ||
		    (hit(t, &later) != 0) != cases[i].later)
			fail_msg("ip_flags %s: none %u first %u later %u", cases[i].flags,
				 hit(t, &none), hit(t, &first), hit(t, &later));
		flower_table_destroy(t);
	}
}

/* ---- L4 --------------------------------------------------------------------- */

static void test_ports_and_ranges(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(A "pref 1 protocol ip flower ip_proto tcp dst_port 80" DROP,
				       A "pref 2 protocol ip flower ip_proto tcp dst_port 1000-2000" DROP,
				       A "pref 3 protocol ip flower ip_proto udp src_port 53 dst_port "
				       "1024-65535" DROP,
				       A "pref 4 protocol ipv6 flower ip_proto sctp dst_port 9" DROP,
				       A "pref 5 protocol ip flower ip_proto tcp" DROP);
	uint32_t n_sub, n_lin;
	flower_table_stats(t, &n_sub, &n_lin);
	assert_int_equal(n_lin, 2); /* the two range rules */
	static const struct {
		uint8_t family, proto;
		uint16_t src, dst;
		uint32_t expect;
	} cases[] = {
		{ 4, IP_PROTO_TCP, 1, 80, 1001 },    { 4, IP_PROTO_TCP, 1, 81, 5001 },
		{ 4, IP_PROTO_TCP, 1, 999, 5001 },   { 4, IP_PROTO_TCP, 1, 1000, 2001 },
		{ 4, IP_PROTO_TCP, 1, 2000, 2001 },  { 4, IP_PROTO_TCP, 1, 2001, 5001 },
		{ 4, IP_PROTO_UDP, 53, 1023, 0 },    { 4, IP_PROTO_UDP, 53, 1024, 3001 },
		{ 4, IP_PROTO_UDP, 53, 65535, 3001 }, { 4, IP_PROTO_UDP, 54, 5000, 0 },
		{ 6, 132, 1, 9, 4001 },    { 4, IP_PROTO_UDP, 1, 80, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fb_frame f;
		fb_frame_init(&f, cases[i].family, cases[i].proto);
		f.src_port = cases[i].src, f.dst_port = cases[i].dst;
		struct flow_key k = key_of(&f, VNET0);
		if (hit(t, &k) != cases[i].expect)
			fail_msg("case %zu: %u, expected %u", i, hit(t, &k), cases[i].expect);
	}
	flower_table_destroy(t);
}

/* tc's masked forms: dst_port 512/0xff00 is 512..767; ICMP type 8/254 is
 * types 8 and 9; code 0/0 is any code. */
static void test_port_and_icmp_masks(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(A "pref 1 protocol ip flower ip_proto udp dst_port 512/0xff00" DROP,
				       A "pref 2 protocol ip flower ip_proto udp src_port 0x1000/0xf000" DROP,
				       A "pref 3 protocol ip flower ip_proto icmp type 8/254 code 0/0" DROP);
	static const struct {
		uint8_t proto;
		uint16_t src, dst;
		uint32_t expect;
	} cases[] = {
		{ IP_PROTO_UDP, 1, 512, 1001 },  { IP_PROTO_UDP, 1, 767, 1001 },
		{ IP_PROTO_UDP, 1, 511, 0 },     { IP_PROTO_UDP, 1, 768, 0 },
		{ IP_PROTO_UDP, 0x1abc, 1, 2001 }, { IP_PROTO_UDP, 0x2abc, 1, 0 },
		{ IP_PROTO_ICMP, 8, 0, 3001 },   { IP_PROTO_ICMP, 9, 5, 3001 },
		{ IP_PROTO_ICMP, 0, 0, 0 },      { IP_PROTO_ICMP, 10, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fb_frame f;
		fb_frame_init(&f, 4, cases[i].proto);
		f.src_port = cases[i].src, f.dst_port = cases[i].dst;
		struct flow_key k = key_of(&f, VNET0);
		if (hit(t, &k) != cases[i].expect)
			fail_msg("case %zu: %u, expected %u", i, hit(t, &k), cases[i].expect);
	}
	flower_table_destroy(t);
}

static void test_tcp_flags_icmp(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(A "pref 1 protocol ip flower ip_proto tcp tcp_flags 0x2/0x12" DROP,
				       A "pref 2 protocol ip flower ip_proto tcp tcp_flags 0x100/0x100" DROP,
				       A "pref 3 protocol ip flower ip_proto icmp type 8 code 0" DROP,
				       A "pref 4 protocol ipv6 flower ip_proto icmpv6 type 135" DROP);
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.tcp_flags = TCP_SYN;
	expect_hit(t, &f, VNET0, 1001);
	f.tcp_flags = TCP_SYN | TCP_ACK; /* SYN-ACK: not SYN without ACK */
	expect_hit(t, &f, VNET0, 0);
	f.tcp_flags = TCP_ACK | TCP_NS;
	expect_hit(t, &f, VNET0, 2001);
	fb_frame_init(&f, 4, IP_PROTO_ICMP);
	f.src_port = 8, f.dst_port = 0; /* echo request */
	expect_hit(t, &f, VNET0, 3001);
	f.src_port = 0;
	expect_hit(t, &f, VNET0, 0);
	fb_frame_init(&f, 6, IP_PROTO_ICMPV6);
	f.src_port = 135;
	expect_hit(t, &f, VNET0, 4001);
	flower_table_destroy(t);
}

/* ---- tunnel metadata ------------------------------------------------------------ */

static void test_tunnel_keys(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(
		"filter add dev vxlan0 ingress pref 1 flower enc_key_id 42 enc_dst_port 4789" DROP,
		"filter add dev vxlan0 ingress pref 2 flower enc_src_ip 198.51.100.0/24 "
		"enc_dst_ip 198.51.100.2" DROP,
		"filter add dev vxlan0 ingress pref 3 flower enc_dst_ip 2001:db8:1::/48" DROP,
		"filter add dev vxlan0 ingress pref 4 flower enc_key_id 0" DROP,
		"filter add dev vxlan0 ingress pref 5 protocol ip flower enc_key_id 7 dst_ip "
		"192.0.2.2" DROP);
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	expect_hit_vxlan(t, &f, 4, 42, 1001);
	expect_hit_vxlan(t, &f, 4, 43, 2001); /* outer 198.51.100.1 -> .2 */
	expect_hit_vxlan(t, &f, 6, 43, 3001);
	expect_hit_vxlan(t, &f, 4, 0, 2001);
	expect_hit_vxlan(t, &f, 6, 0, 3001);
	expect_hit_vxlan(t, &f, 6, 7, 3001); /* inner 192.0.2.2: pref 3 first */
	/* an untunnelled frame has no VNI 0: enc_key_id 0 does not match it */
	expect_hit(t, &f, VXLAN0, 0);
	flower_table_destroy(t);

	t = TABLE("filter add dev vxlan0 ingress pref 1 flower enc_key_id 0" DROP);
	expect_hit_vxlan(t, &f, 6, 0, 1001);
	expect_hit(t, &f, VXLAN0, 0);
	flower_table_destroy(t);
}

/* ---- chains --------------------------------------------------------------------- */

static void test_chains_goto(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(
		A "pref 1 protocol ip flower ip_proto tcp action vlan push id 5 action goto chain 1",
		A "pref 2 protocol ip flower action goto chain 2",
		A "chain 1 pref 1 protocol ip flower dst_ip 192.0.2.2 action mirred egress redirect "
		"dev vxlan0",
		A "chain 2 pref 1 protocol ip flower action goto chain 0");
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	struct flow_key k = key_of(&f, VNET0);
	struct flower_verdict v;
	flower_table_classify(t, &k, &v);
	assert_int_equal(v.end, FLOWER_END_MATCHED);
	assert_int_equal(v.n_rules, 2);
	assert_int_equal(v.rules[0]->chain, 0);
	assert_int_equal(v.rules[0]->actions[0].type, FLOWER_ACT_VLAN_PUSH);
	assert_int_equal(v.rules[1]->chain, 1);
	assert_int_equal(v.rules[1]->actions[0].type, FLOWER_ACT_REDIRECT);
	assert_int_equal(v.rules[1]->actions[0].port, VXLAN0);
	/* chain 1 has nothing for this address: the goto's rule alone, L2 next */
	ip4(f.dst_ip, 192, 0, 2, 9);
	k = key_of(&f, VNET0);
	flower_table_classify(t, &k, &v);
	assert_int_equal(v.end, FLOWER_END_MATCHED);
	assert_int_equal(v.n_rules, 1);
	/* UDP: chain 0 pref 2 -> chain 2 -> chain 0 ... a loop, cut */
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	k = key_of(&f, VNET0);
	flower_table_classify(t, &k, &v);
	assert_int_equal(v.end, FLOWER_END_LOOP);
	assert_int_equal(v.n_rules, FLOWER_MAX_HOPS);
	/* a chain is never entered without a goto */
	fb_frame_init(&f, FB_ARP, 0);
	expect_hit(t, &f, VNET0, 0);
	flower_table_destroy(t);
}

/* ---- batches -------------------------------------------------------------------- */

static void test_batches(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(A "pref 2 protocol ip flower" DROP,
				       A "pref 2 protocol ip flower dst_ip 192.0.2.1" DROP,
				       A "protocol arp flower" DROP,
				       A "pref 1 protocol arp flower dst_mac 02:00:00:00:00:01" DROP);
	assert_int_equal(flower_table_version(t), 1);
	assert_int_equal(flower_table_n_rules(t), 4);
	/* automatic pref: 1 below the lowest (2); automatic handles from 1 */
	static const uint32_t place[4][2] = { { 1, 1 }, { 1, 2 }, { 2, 1 }, { 2, 2 } };
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(flower_table_rule(t, i)->pref, place[i][0]);
		assert_int_equal(flower_table_rule(t, i)->handle, place[i][1]);
	}
	/* the printed rule carries its pref and handle */
	char text[512];
	assert_true(test_format_rule(&flower_table_rule(t, 0)->spec, text, sizeof(text)) > 0);
	assert_string_equal(text, A "pref 1 handle 1 protocol arp flower action drop");

	/* a duplicate handle: refused, the table unchanged */
	struct flower_table *t2 = NULL;
	struct flower_error err;
	static const char *const dup[] = { "filter del dev vnet0 ingress pref 1",
					   A "pref 2 handle 2 protocol ip flower" DROP };
	assert_int_equal(test_apply(t, dup, 2, &t2, &err), -EEXIST);
	assert_null(t2);
	assert_int_equal(err.op, 1);
	assert_non_null(strstr(err.msg, "duplicate handle"));
	assert_int_equal(flower_table_n_rules(t), 4);
	/* the same key at the same pref: tc's "Filter already exists"
	 * (flower.json 4cbd), with or without a handle; another pref, another
	 * chain or another key is a new rule */
	static const char *const dupkey[] = { A "pref 2 protocol ip flower dst_ip 192.0.2.1/32" DROP };
	assert_int_equal(test_apply(t, dupkey, 1, &t2, &err), -EEXIST);
	assert_non_null(strstr(err.msg, "Filter already exists: handle 2 has the same key"));
	static const char *const dupkey_h[] = { A "pref 2 handle 9 protocol ip flower dst_ip 192.0.2.1" DROP };
	assert_int_equal(test_apply(t, dupkey_h, 1, &t2, &err), -EEXIST);
	static const char *const dup_in_batch[] = { A "pref 7 protocol ip flower ip_proto udp" DROP,
						    A "pref 7 protocol ip flower ip_proto udp action pass" };
	assert_int_equal(test_apply(t, dup_in_batch, 2, &t2, &err), -EEXIST);
	assert_int_equal(err.op, 1);
	/* the two spellings of a first-entry MPLS match are one key */
	static const char *const dup_mpls[] = { A "pref 8 protocol mpls_uc flower mpls_label 5" DROP,
						A "pref 8 protocol mpls_uc flower mpls lse depth 1 label 5" DROP };
	assert_int_equal(test_apply(t, dup_mpls, 2, &t2, &err), -EEXIST);
	assert_int_equal(err.op, 1);
	static const char *const not_dup[] = { A "pref 3 protocol ip flower dst_ip 192.0.2.1" DROP,
					       A "pref 2 chain 1 protocol ip flower dst_ip 192.0.2.1" DROP,
					       A "pref 2 protocol ip flower dst_ip 192.0.2.2" DROP,
					       "filter del dev vnet0 ingress pref 2 handle 1",
					       A "pref 2 protocol ip flower" DROP };
	t2 = test_table(t, not_dup, 5);
	assert_int_equal(flower_table_n_rules(t2), 7);
	flower_table_destroy(t2);
	t2 = NULL;
	/* replace: the rule at pref 2 handle 2 gives way to the new one in the
	 * same table (its own key again is no duplicate); its counters start
	 * again (a new uid), as a replaced tc filter's do */
	static const char *const repl[] = { "filter replace dev vnet0 ingress pref 2 handle 2 "
					    "protocol ip flower dst_ip 192.0.2.1 action pass" };
	t2 = test_table(t, repl, 1);
	assert_int_equal(flower_table_n_rules(t2), 4);
	assert_int_equal(flower_table_version(t2), 2);
	const struct flower_rule *nr = flower_table_rule(t2, 3);
	assert_int_equal(nr->pref, 2);
	assert_int_equal(nr->handle, 2);
	assert_true(nr->uid > flower_table_rule(t, 3)->uid);
	assert_true(test_format_rule(&nr->spec, text, sizeof(text)) > 0);
	assert_string_equal(text, A "pref 2 handle 2 protocol ip flower dst_ip 192.0.2.1 action pass");
	flower_table_destroy(t2);
	/* replace of a free handle adds; change of one refuses */
	static const char *const repl_new[] = { "filter replace dev vnet0 ingress pref 2 handle 7 "
						"protocol ip flower dst_ip 192.0.2.7" DROP };
	t2 = test_table(t, repl_new, 1);
	assert_int_equal(flower_table_n_rules(t2), 5);
	flower_table_destroy(t2);
	t2 = NULL;
	static const char *const chg_missing[] = { "filter change dev vnet0 ingress pref 2 handle 7 "
						   "protocol ip flower" DROP };
	assert_int_equal(test_apply(t, chg_missing, 1, &t2, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "no such filter to change"));
	/* replace onto the key of another rule of the pref: tc's EEXIST */
	static const char *const repl_dup[] = { "filter replace dev vnet0 ingress pref 2 handle 1 "
						"protocol ip flower dst_ip 192.0.2.1" DROP };
	assert_int_equal(test_apply(t, repl_dup, 1, &t2, &err), -EEXIST);
	/* del with tc's protocol selector: the pref's own protocol only */
	static const char *const del_proto[] = { "filter del dev vnet0 ingress pref 2 protocol arp" };
	assert_int_equal(test_apply(t, del_proto, 1, &t2, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "priority/protocol not found"));
	static const char *const del_ok[] = { "filter del dev vnet0 ingress pref 2 handle 1 protocol ip" };
	t2 = test_table(t, del_ok, 1);
	assert_int_equal(flower_table_n_rules(t2), 3);
	flower_table_destroy(t2);
	t2 = NULL;
	/* another protocol at a pref: tc's one protocol per pref */
	static const char *const proto[] = { A "pref 2 protocol ipv6 flower" DROP };
	assert_int_equal(test_apply(t, proto, 1, &t2, &err), -EINVAL);
	/* a missing port, as the filter's dev or as a target */
	static const char *const noport[] = { A "pref 9 flower action mirred egress redirect dev nope" };
	assert_int_equal(test_apply(t, noport, 1, &t2, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "\"nope\""));
	static const char *const nodev[] = { "filter add dev nope ingress flower" DROP };
	assert_int_equal(test_apply(t, nodev, 1, &t2, &err), -ENOENT);
	static const char *const nodel[] = { "filter del dev vnet0 ingress pref 7" };
	assert_int_equal(test_apply(t, nodel, 1, &t2, &err), -ENOENT);
	static const char *const noauto[] = { A "protocol arp flower" DROP };
	assert_int_equal(test_apply(t, noauto, 1, &t2, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "no automatic pref"));

	/* a good batch: one new table, version + 1, both changes in it */
	static const char *const ok[] = { "filter del dev vnet0 ingress pref 2 handle 1",
					  A "pref 3 protocol ip flower" DROP,
					  A "pref 4 protocol ip flower" DROP,
					  "filter del dev vnet0 ingress pref 4" };
	t2 = test_table(t, ok, 4);
	assert_int_equal(flower_table_version(t2), 2);
	assert_int_equal(flower_table_n_rules(t2), 4);
	assert_int_equal(flower_table_n_rules(t), 4); /* the old one as it was */
	assert_int_equal(flower_table_rule(t2, 1)->handle, 2);
	assert_int_equal(flower_table_rule(t2, 3)->pref, 3);
	/* surviving rules are shared, keep slot and uid; the new one takes the
	 * slot of the deleted one */
	assert_ptr_equal(flower_table_rule(t2, 0), flower_table_rule(t, 0));
	assert_int_equal(flower_table_rule(t2, 3)->slot, flower_table_rule(t, 2)->slot);
	assert_true(flower_table_rule(t2, 3)->uid > flower_table_rule(t, 3)->uid);
	flower_table_destroy(t);

	/* del without pref: the whole chain */
	static const char *const all[] = { "filter del dev vnet0 ingress" };
	struct flower_table *t3 = test_table(t2, all, 1);
	assert_int_equal(flower_table_n_rules(t3), 0);
	assert_int_equal(flower_table_version(t3), 3);
	flower_table_destroy(t2);
	flower_table_destroy(t3);
}

static void test_counters(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(A "pref 1 protocol ip flower action goto chain 1",
				       A "chain 1 pref 1 protocol ip flower" DROP);
	struct flower_counters c = { 0 };
	assert_int_equal(flower_counters_reserve(&c, flower_table_n_slots(t)), 0);
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	struct flow_key k = key_of(&f, VNET0);
	struct flower_verdict v;
	flower_table_classify(t, &k, &v);
	flower_counters_add(&c, &v, 100, false, 5);
	flower_counters_add(&c, &v, 60, true, 9);
	struct flower_rule_counters rc;
	for (int i = 0; i < 2; i++) {
		flower_counters_get(&c, flower_table_rule(t, (size_t)i), &rc);
		assert_int_equal(rc.slow_packets, 1);
		assert_int_equal(rc.slow_bytes, 100);
		assert_int_equal(rc.fast_packets, 1);
		assert_int_equal(rc.fast_bytes, 60);
		assert_int_equal(rc.last_used_ns, 9);
	}
	/* delete chain 1's rule and add another: it reuses the slot, counts
	 * start from zero */
	static const char *const swap[] = { "filter del dev vnet0 ingress chain 1",
					    A "chain 1 pref 5 protocol ip flower" DROP };
	struct flower_table *t2 = test_table(t, swap, 2);
	const struct flower_rule *r = flower_table_rule(t2, 1);
	assert_int_equal(r->slot, flower_table_rule(t, 1)->slot);
	flower_counters_get(&c, r, &rc);
	assert_int_equal(rc.slow_packets + rc.fast_packets, 0);
	flower_table_classify(t2, &k, &v);
	flower_counters_add(&c, &v, 10, false, 11);
	flower_counters_get(&c, r, &rc);
	assert_int_equal(rc.slow_packets, 1);
	assert_int_equal(rc.slow_bytes, 10);
	flower_counters_get(&c, flower_table_rule(t2, 0), &rc);
	assert_int_equal(rc.slow_packets, 2);
	flower_table_destroy(t);
	flower_table_destroy(t2);
	flower_counters_fini(&c);
}

/* The property test lives in test_classifier_property.c. */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_protocol),
		cmocka_unit_test(test_vlan_keys),
		cmocka_unit_test(test_mac_masks),
		cmocka_unit_test(test_prefixes_and_priority),
		cmocka_unit_test(test_ip_fields),
		cmocka_unit_test(test_ip_flags),
		cmocka_unit_test(test_ports_and_ranges),
		cmocka_unit_test(test_tcp_flags_icmp),
		cmocka_unit_test(test_port_and_icmp_masks),
		cmocka_unit_test(test_tunnel_keys),
		cmocka_unit_test(test_chains_goto),
		cmocka_unit_test(test_batches),
		cmocka_unit_test(test_counters),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
