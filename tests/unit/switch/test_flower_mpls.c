/* Unit tests for the MPLS and ARP keys and `action continue` (flow_extract's
 * MPLS label stack, flower_match_mpls.c, classifier.c's rules past the
 * first of a masked value, flower_table_classify()): per key a line in tc's
 * grammar, a frame that must match and one that must not, through the real
 * parser; continue across prefs with every rule crossed counted, and
 * through the flow cache. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "flower_test_util.h"
#include "flow_invariants.h"
#include "frame_builder.h"
#include "packet/bytes.h"
#include "packet/hdr.h"
#include "parse/flow_extract.h"
#include "pool_fixture.h"
#include "switch/flow_cache.h"

PKT_POOL_FIXTURE(4)

enum { VNET0 = 1 };

static struct flow_key key_of_bytes(const uint8_t *buf, size_t len)
{
	struct flow_key key;
	struct pkt *p = pkt_alloc(pool);
	assert_non_null(p);
	assert_int_equal(pkt_set_data(p, buf, (uint32_t)len), 0);
	p->in_port = VNET0;
	assert_int_equal(flow_extract(p, 4789, &key), DROP_NONE);
	const char *bad = flow_invariant_violated(p, &key, false);
	if (bad)
		fail_msg("flow invariant: %s", bad);
	pkt_free(p);
	return key;
}

/* An Ethernet frame of `type` with MPLS entries lse[0..n-1] (label, tc,
 * bos, ttl each), then `tail` bytes of payload; returns its length. */
struct lse { uint32_t label; uint8_t tc, bos, ttl; };

static size_t mpls_frame(uint8_t *buf, uint16_t type, const struct lse *lse, size_t n, size_t tail)
{
	static const uint8_t macs[12] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1 };
	memcpy(buf, macs, 12);
	store_be16(buf + 12, type);
	size_t len = 14;
	for (size_t i = 0; i < n; i++, len += 4)
		store_be32(buf + len, lse[i].label << 12 | (uint32_t)lse[i].tc << 9 |
			   (uint32_t)lse[i].bos << 8 | lse[i].ttl);
	memset(buf + len, 0x45, tail); /* looks like IPv4: must not be parsed */
	return len + tail;
}

static struct flow_key mpls_key(const struct lse *lse, size_t n)
{
	uint8_t buf[128];
	return key_of_bytes(buf, mpls_frame(buf, ETH_TYPE_MPLS_UC, lse, n, 28));
}

/* pref * 1000 + handle of the rules of the verdict, in order, as one
 * number of up to three rules (0: none). */
static uint64_t hits(const struct flower_table *t, const struct flow_key *key)
{
	struct flower_verdict v;
	flower_table_classify(t, key, &v);
	uint64_t out = 0;
	for (unsigned i = 0; i < v.n_rules; i++)
		out = out * 1000000 + v.rules[i]->pref * 1000 + v.rules[i]->handle;
	return out;
}

#define A "filter add dev vnet0 ingress "
#define DROP " action drop"

static void test_mpls_parse(void **state)
{
	(void)state;
	const struct lse two[] = { { 100, 3, 0, 64 }, { 200, 5, 1, 63 } };
	struct flow_key k = mpls_key(two, 2);
	assert_int_equal(k.dl_type, ETH_TYPE_MPLS_UC);
	assert_int_equal(k.mpls_used, 0x3);
	assert_int_equal(k.mpls_lse[0], 100u << 12 | 3u << 9 | 64);
	assert_int_equal(k.mpls_lse[1], 200u << 12 | 5u << 9 | 1u << 8 | 63);
	assert_int_equal(k.nw_family, 0); /* nothing above the stack */
	/* a stack deeper than 7 keeps 7, as the kernel's FLOW_DIS_MPLS_MAX */
	struct lse nine[9];
	for (int i = 0; i < 9; i++)
		nine[i] = (struct lse){ (uint32_t)(16 + i), 0, i == 8, 10 };
	k = mpls_key(nine, 9);
	assert_int_equal(k.mpls_used, 0x7f);
	assert_int_equal(k.mpls_lse[6] >> 12, 22);
	/* cut short by the end of the frame: the entries read, no drop */
	uint8_t buf[64];
	size_t len = mpls_frame(buf, ETH_TYPE_MPLS_MC, two, 2, 0) - 2;
	k = key_of_bytes(buf, len);
	assert_int_equal(k.dl_type, ETH_TYPE_MPLS_MC);
	assert_int_equal(k.mpls_used, 0x1);
	/* no entry at all */
	k = key_of_bytes(buf, 14);
	assert_int_equal(k.mpls_used, 0);
}

static void test_mpls_first_entry(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(A "pref 1 protocol mpls_uc flower mpls_label 100" DROP,
				       A "pref 2 protocol mpls_uc flower mpls_tc 5" DROP,
				       A "pref 3 protocol mpls_uc flower mpls_bos 1" DROP,
				       A "pref 4 protocol mpls_uc flower mpls_ttl 7" DROP,
				       A "pref 5 protocol mpls_mc flower mpls_label 100" DROP);
	/* label 100 at depth 1: pref 1; at depth 2 only: not pref 1 */
	assert_int_equal(hits(t, (struct flow_key[]){ mpls_key((struct lse[]){ { 100, 0, 1, 1 } }, 1) }),
			 1001);
	assert_int_equal(hits(t, (struct flow_key[]){ mpls_key((struct lse[]){ { 99, 0, 0, 1 },
									      { 100, 0, 1, 1 } }, 2) }), 0);
	assert_int_equal(hits(t, (struct flow_key[]){ mpls_key((struct lse[]){ { 99, 5, 0, 1 },
									      { 100, 0, 1, 1 } }, 2) }), 2001);
	assert_int_equal(hits(t, (struct flow_key[]){ mpls_key((struct lse[]){ { 99, 4, 1, 1 } }, 1) }),
			 3001);
	assert_int_equal(hits(t, (struct flow_key[]){ mpls_key((struct lse[]){ { 99, 4, 0, 7 },
									      { 1, 0, 1, 7 } }, 2) }), 4001);
	assert_int_equal(hits(t, (struct flow_key[]){ mpls_key((struct lse[]){ { 99, 4, 0, 8 },
									      { 1, 0, 1, 7 } }, 2) }), 0);
	/* protocol mpls_mc: the multicast ethertype only */
	uint8_t buf[64];
	struct flow_key k = key_of_bytes(buf, mpls_frame(buf, ETH_TYPE_MPLS_MC,
							 (struct lse[]){ { 100, 0, 1, 1 } }, 1, 20));
	assert_int_equal(hits(t, &k), 5001);
	flower_table_destroy(t);
}

static void test_mpls_lse(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(
		A "pref 1 protocol mpls_uc flower mpls lse depth 2 label 200 tc 5 bos 1 ttl 63" DROP,
		A "pref 2 protocol mpls_uc flower mpls lse depth 1 label 100 lse depth 3" DROP,
		A "pref 3 protocol mpls_uc flower mpls lse depth 7 ttl 9" DROP);
	const struct lse two[] = { { 100, 3, 0, 64 }, { 200, 5, 1, 63 } };
	assert_int_equal(hits(t, (struct flow_key[]){ mpls_key(two, 2) }), 1001);
	const struct lse two_ttl[] = { { 100, 3, 0, 64 }, { 200, 5, 1, 62 } };
	assert_int_equal(hits(t, (struct flow_key[]){ mpls_key(two_ttl, 2) }), 0);
	/* depth 3 with no field: the entry must exist */
	const struct lse three[] = { { 100, 0, 0, 1 }, { 7, 0, 0, 1 }, { 8, 0, 1, 1 } };
	assert_int_equal(hits(t, (struct flow_key[]){ mpls_key(three, 3) }), 2001);
	assert_int_equal(hits(t, (struct flow_key[]){ mpls_key(two_ttl, 2) }), 0);
	struct lse seven[7];
	for (int i = 0; i < 7; i++)
		seven[i] = (struct lse){ 1, 0, i == 6, (uint8_t)(i == 6 ? 9 : 1) };
	assert_int_equal(hits(t, (struct flow_key[]){ mpls_key(seven, 7) }), 3001);
	seven[6].ttl = 8;
	assert_int_equal(hits(t, (struct flow_key[]){ mpls_key(seven, 7) }), 0);
	flower_table_destroy(t);
}

static struct flow_key arp_key(uint16_t op, uint8_t sip_last, uint8_t tip_last, uint8_t sha_last,
			       uint8_t tha_last)
{
	static uint8_t buf[FB_MAX_FRAME];
	struct fb_frame f;
	fb_frame_init(&f, FB_ARP, 0);
	f.arp_op = op;
	f.src_ip[0] = 192, f.src_ip[1] = 0, f.src_ip[2] = 2, f.src_ip[3] = sip_last;
	f.dst_ip[0] = 192, f.dst_ip[1] = 0, f.dst_ip[2] = 2, f.dst_ip[3] = tip_last;
	memcpy(f.src_mac, (uint8_t[]){ 2, 0, 0, 0, 0, sha_last }, 6);
	memcpy(f.dst_mac, (uint8_t[]){ 2, 0, 0, 0, 0, tha_last }, 6);
	return key_of_bytes(buf, fb_build(&f, buf, sizeof(buf), NULL));
}

/* RARP has ARP's format: parsed as ARP, matched under protocol rarp. */
static void test_rarp(void **state)
{
	(void)state;
	static uint8_t buf[FB_MAX_FRAME];
	struct flower_table *t = TABLE(A "pref 1 protocol rarp flower arp_tip 192.0.2.10" DROP);
	struct fb_frame f;
	fb_frame_init(&f, FB_ARP, 0);
	f.dst_ip[0] = 192, f.dst_ip[1] = 0, f.dst_ip[2] = 2, f.dst_ip[3] = 10;
	assert_int_equal(hits(t, (struct flow_key[]){ key_of_bytes(buf, fb_build(&f, buf, sizeof(buf), NULL)) }),
			 0);
	f.eth_type_override = 0x8035;
	assert_int_equal(hits(t, (struct flow_key[]){ key_of_bytes(buf, fb_build(&f, buf, sizeof(buf), NULL)) }),
			 1001);
	f.dst_ip[3] = 11;
	assert_int_equal(hits(t, (struct flow_key[]){ key_of_bytes(buf, fb_build(&f, buf, sizeof(buf), NULL)) }),
			 0);
	flower_table_destroy(t);
}

static void test_arp(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(A "pref 1 protocol arp flower arp_tip 192.0.2.10" DROP,
				       A "pref 2 protocol arp flower arp_sip 192.0.2.128/25" DROP,
				       A "pref 3 protocol arp flower arp_op reply" DROP,
				       A "pref 4 protocol arp flower arp_sha 02:00:00:00:00:07" DROP,
				       A "pref 5 protocol arp flower arp_tha 02:00:00:00:00:08/47" DROP);
	struct flow_key k = arp_key(1, 1, 10, 1, 1);
	assert_int_equal(k.arp_sha[5], 1); /* the builder's sha is the source MAC */
	assert_int_equal(hits(t, &k), 1001);
	assert_int_equal(hits(t, (struct flow_key[]){ arp_key(1, 1, 11, 1, 1) }), 0);
	assert_int_equal(hits(t, (struct flow_key[]){ arp_key(1, 200, 11, 1, 1) }), 2001);
	assert_int_equal(hits(t, (struct flow_key[]){ arp_key(2, 1, 11, 1, 1) }), 3001);
	assert_int_equal(hits(t, (struct flow_key[]){ arp_key(1, 1, 11, 7, 1) }), 4001);
	assert_int_equal(hits(t, (struct flow_key[]){ arp_key(1, 1, 11, 6, 9) }), 5001);
	assert_int_equal(hits(t, (struct flow_key[]){ arp_key(1, 1, 11, 6, 10) }), 0);
	flower_table_destroy(t);
}

/* enc_tos / enc_ttl: the outer header of a VXLAN frame, decapsulated by
 * flow_extract (afpacket, a frame on the wire) or read from the socket
 * (flow_extract_vxlan with what the port's cmsgs gave in pkt->tunnel). */
static struct flow_key vxlan_key(uint8_t family, uint8_t tos, uint8_t ttl, bool socket)
{
	static uint8_t inner[FB_MAX_FRAME], outer[FB_MAX_FRAME];
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	size_t len = fb_build(&f, inner, sizeof(inner), NULL);
	struct fb_vxlan vx;
	fb_vxlan_init(&vx, socket ? 0 : family, 99);
	vx.tos = tos;
	vx.ttl = ttl;
	size_t olen = fb_wrap_vxlan(&vx, inner, len, outer, sizeof(outer));
	if (!socket)
		return key_of_bytes(outer, olen);
	struct flow_key key;
	struct pkt *p = pkt_alloc(pool);
	assert_non_null(p);
	assert_int_equal(pkt_set_data(p, outer, (uint32_t)olen), 0);
	p->in_port = VNET0;
	p->tunnel = (struct pkt_tunnel){ .family = family, .src = { 198, 51, 100, 2 },
					 .dst = { 198, 51, 100, 1 }, .src_port = 50000, .dst_port = 4789,
					 .tos = tos, .ttl = ttl };
	assert_int_equal(flow_extract_vxlan(p, &key), DROP_NONE);
	pkt_free(p);
	return key;
}

static void test_enc_tos_ttl(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(A "pref 1 protocol ip flower enc_tos 0x28 enc_ttl 17" DROP,
				       A "pref 2 protocol ip flower enc_tos 0x20/0xfc" DROP,
				       A "pref 3 protocol ip flower enc_ttl 64/0xf0" DROP);
	for (int socket = 0; socket < 2; socket++) {
		for (int fam = 4; fam <= 6; fam += 2) {
			assert_int_equal(hits(t, (struct flow_key[]){ vxlan_key((uint8_t)fam, 0x28, 17, socket) }),
					 1001);
			assert_int_equal(hits(t, (struct flow_key[]){ vxlan_key((uint8_t)fam, 0x23, 16, socket) }),
					 2001);
			assert_int_equal(hits(t, (struct flow_key[]){ vxlan_key((uint8_t)fam, 0x10, 79, socket) }),
					 3001);
			assert_int_equal(hits(t, (struct flow_key[]){ vxlan_key((uint8_t)fam, 0x10, 80, socket) }),
					 0);
		}
	}
	/* a frame that did not come through a tunnel never matches an enc_ key */
	uint8_t buf[128];
	const struct lse one[] = { { 1, 0, 1, 1 } };
	struct flower_table *t0 = TABLE(A "pref 1 protocol mpls_uc flower enc_ttl 0/0" DROP);
	assert_int_equal(hits(t0, (struct flow_key[]){ key_of_bytes(buf, mpls_frame(buf, ETH_TYPE_MPLS_UC,
										  one, 1, 0)) }), 0);
	flower_table_destroy(t0);
	flower_table_destroy(t);
}

/* continue: on to the best match among later prefs, the same match
 * included (a rule the hash table shadows), counted on every rule. */
static void test_continue(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(
		A "pref 1 protocol mpls_uc flower mpls_label 100 action continue",
		A "pref 1 handle 2 protocol mpls_uc flower mpls_label 101 action continue",
		A "pref 2 protocol mpls_uc flower mpls_label 100 action pipe action continue",
		A "pref 3 protocol mpls_uc flower mpls_bos 1" DROP,
		A "pref 4 protocol mpls_uc flower mpls_label 100" DROP);
	struct flow_key k100 = mpls_key((struct lse[]){ { 100, 0, 1, 1 } }, 1);
	struct flow_key k100_nobos = mpls_key((struct lse[]){ { 100, 0, 0, 1 }, { 5, 0, 1, 1 } }, 2);
	struct flow_key k101 = mpls_key((struct lse[]){ { 101, 0, 0, 1 }, { 5, 0, 1, 1 } }, 2);
	assert_int_equal(hits(t, &k100), 1001ull * 1000000 * 1000000 + 2001ull * 1000000 + 3001);
	assert_int_equal(hits(t, &k100_nobos), 1001ull * 1000000 * 1000000 + 2001ull * 1000000 + 4001);
	/* pref 1's other handle continues past pref 1: nothing of pref 2..4 */
	assert_int_equal(hits(t, &k101), 1002);

	/* through the flow cache: the whole verdict, counted on each rule */
	struct flow_cache *fc;
	assert_int_equal(flow_cache_create(64, &fc), 0);
	struct flower_counters c = { 0 };
	assert_int_equal(flower_counters_reserve(&c, flower_table_n_slots(t)), 0);
	for (int i = 0; i < 3; i++) {
		bool fast;
		const struct flower_verdict *v = flow_cache_classify(fc, t, &k100, &fast);
		assert_int_equal(v->n_rules, 3);
		assert_int_equal(fast, i > 0);
		flower_counters_add(&c, v, 60, fast, 1);
	}
	uint64_t want_pkts[] = { 3, 0, 3, 3, 0 };
	for (size_t i = 0; i < flower_table_n_rules(t); i++) {
		struct flower_rule_counters rc;
		const struct flower_rule *r = flower_table_rule(t, i);
		flower_counters_get(&c, r, &rc);
		if (rc.fast_packets + rc.slow_packets != want_pkts[i])
			fail_msg("rule %u/%u: %llu packets, want %llu", r->pref, r->handle,
				 (unsigned long long)(rc.fast_packets + rc.slow_packets),
				 (unsigned long long)want_pkts[i]);
	}
	flower_counters_fini(&c);
	flow_cache_destroy(fc);
	flower_table_destroy(t);
}

/* The kernel's tc_flower.sh match_mpls_lse_test: eleven `continue` rules
 * on the first and second entries' fields and on the depth alone; its base
 * frame crosses ten of them, all counted (a limit of 8 rules crossed cut
 * it short and dropped it as a loop).  Past FLOWER_MAX_HOPS rules, the
 * frame is still dropped as a loop. */
static void test_continue_many(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(
		A "pref 1 protocol mpls_uc flower mpls lse depth 1 label 0 action continue",
		A "pref 2 protocol mpls_uc flower mpls lse depth 1 tc 0 action continue",
		A "pref 3 protocol mpls_uc flower mpls lse depth 1 bos 0 action continue",
		A "pref 4 protocol mpls_uc flower mpls lse depth 1 ttl 0 action continue",
		A "pref 5 protocol mpls_uc flower mpls lse depth 2 label 1048575 action continue",
		A "pref 6 protocol mpls_uc flower mpls lse depth 2 tc 7 action continue",
		A "pref 7 protocol mpls_uc flower mpls lse depth 2 bos 1 action continue",
		A "pref 8 protocol mpls_uc flower mpls lse depth 2 ttl 255 action continue",
		A "pref 9 protocol mpls_uc flower mpls lse depth 1 action continue",
		A "pref 10 protocol mpls_uc flower mpls lse depth 2 action continue",
		A "pref 11 protocol mpls_uc flower mpls lse depth 3 action continue");
	struct flow_key base = mpls_key((struct lse[]){ { 0, 0, 0, 0 }, { 1048575, 7, 1, 255 } }, 2);
	struct flower_verdict v;
	flower_table_classify(t, &base, &v);
	assert_int_equal(v.end, FLOWER_END_MATCHED);
	assert_int_equal(v.n_rules, 10);
	for (unsigned i = 0; i < 10; i++)
		assert_int_equal(v.rules[i]->pref, i + 1);
	/* three entries, the second without bos: depth 1's four, depth 2's
	 * label/tc/ttl, and the three depths */
	struct flow_key three = mpls_key((struct lse[]){ { 0, 0, 0, 0 }, { 1048575, 7, 0, 255 }, { 0, 0, 1, 255 } }, 3);
	flower_table_classify(t, &three, &v);
	assert_int_equal(v.end, FLOWER_END_MATCHED);
	assert_int_equal(v.n_rules, 10);
	assert_int_equal(v.rules[6]->pref, 8);
	assert_int_equal(v.rules[9]->pref, 11);
	flower_table_destroy(t);

	/* FLOWER_MAX_HOPS + 1 prefs that all continue: cut at the limit */
	static char lines[FLOWER_MAX_HOPS + 1][96];
	const char *ptrs[FLOWER_MAX_HOPS + 1];
	for (unsigned i = 0; i <= FLOWER_MAX_HOPS; i++) {
		snprintf(lines[i], sizeof(lines[i]), A "pref %u protocol all flower action continue", i + 1);
		ptrs[i] = lines[i];
	}
	t = test_table(NULL, ptrs, FLOWER_MAX_HOPS + 1);
	flower_table_classify(t, &base, &v);
	assert_int_equal(v.end, FLOWER_END_LOOP);
	assert_int_equal(v.n_rules, FLOWER_MAX_HOPS);
	flower_table_destroy(t);
}

/* continue then goto: the chain followed is the later rule's. */
static void test_continue_goto(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(
		A "pref 1 protocol all flower action continue",
		A "pref 2 protocol arp flower action goto chain 5",
		A "chain 5 pref 1 protocol arp flower arp_op request" DROP);
	assert_int_equal(hits(t, (struct flow_key[]){ arp_key(1, 1, 1, 1, 1) }),
			 1001ull * 1000000 * 1000000 + 2001ull * 1000000 + 1001);
	assert_int_equal(hits(t, (struct flow_key[]){ arp_key(2, 1, 1, 1, 1) }), 1001ull * 1000000 + 2001);
	flower_table_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mpls_parse),
		cmocka_unit_test(test_mpls_first_entry),
		cmocka_unit_test(test_mpls_lse),
		cmocka_unit_test(test_arp),
		cmocka_unit_test(test_rarp),
		cmocka_unit_test(test_enc_tos_ttl),
		cmocka_unit_test(test_continue),
		cmocka_unit_test(test_continue_goto),
		cmocka_unit_test(test_continue_many),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
