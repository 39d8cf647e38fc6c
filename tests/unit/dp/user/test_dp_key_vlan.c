/* Unit test of dp_key_vlan() (src/dp/user/dp_egress.c): after each vlan
 * action, the key edited in place equals the key flow_extract() parses
 * from the frame pkt_vlan.h edited, for frames with no, one and two tags,
 * push (802.1Q and 802.1ad), pop and modify (with and without priority):
 * what egress rules match after an ingress rule's vlan action is the
 * frame as it leaves. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "dp/user/worker_internal.h"
#include "packet/pkt_vlan.h"
#include "parse/flow_extract.h"

/* An ICMP echo request over IPv4, with n_tags 802.1Q tags (vid 7, 8). */
static struct pkt *frame(struct pkt_pool *pool, int n_tags)
{
	uint8_t f[128] = { 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2 };
	size_t at = 12;
	for (int i = 0; i < n_tags; i++) {
		f[at] = 0x81; f[at + 1] = 0x00; f[at + 2] = 0x20; f[at + 3] = (uint8_t)(7 + i);
		at += 4;
	}
	f[at++] = 0x08; f[at++] = 0x00;
	static const uint8_t ip_icmp[28] = {
		0x45, 0, 0, 28, 0, 1, 0, 0, 64, 1, 0, 0, 192, 0, 2, 1, 192, 0, 2, 2, /* IPv4 */
		8, 0, 0xf7, 0xff, 0, 0, 0, 0,                                            /* ICMP echo */
	};
	memcpy(f + at, ip_icmp, sizeof(ip_icmp));
	at += sizeof(ip_icmp);
	struct pkt *p = pkt_alloc(pool);
	assert_non_null(p);
	assert_int_equal(pkt_set_data(p, f, (uint32_t)at), 0);
	return p;
}

static void check(struct pkt_pool *pool, int n_tags, const struct flower_action *a)
{
	struct pkt *p = frame(pool, n_tags);
	struct flow_key key, want;
	assert_int_equal(flow_extract(p, 0, &key), DROP_NONE);
	key.in_port = 3;
	switch (a->type) {
	case FLOWER_ACT_VLAN_PUSH:
		assert_int_equal(pkt_vlan_push(p, a->vlan_tpid, a->vlan_tci), 0);
		break;
	case FLOWER_ACT_VLAN_POP:
		pkt_vlan_pop(p);
		break;
	default:
		pkt_vlan_modify(p, a->vlan_tci & 0x0fff, (uint8_t)(a->vlan_tci >> 13), a->set_prio);
	}
	dp_key_vlan(&key, a);
	assert_int_equal(flow_extract(p, 0, &want), DROP_NONE);
	want.in_port = 3;
	if (memcmp(&key, &want, FLOW_KEY_MATCH_SIZE))
		fail_msg("action %u on %d tags: key n_vlans %u tci %#x/%#x tpid %#x/%#x dl_type %#x, "
			 "frame's n_vlans %u tci %#x/%#x tpid %#x/%#x dl_type %#x", a->type, n_tags, key.n_vlans,
			 key.vlan_tci[0], key.vlan_tci[1], key.vlan_tpid[0], key.vlan_tpid[1], key.dl_type,
			 want.n_vlans, want.vlan_tci[0], want.vlan_tci[1], want.vlan_tpid[0], want.vlan_tpid[1],
			 want.dl_type);
	pkt_free(p);
}

static void test_key_follows_frame(void **state)
{
	(void)state;
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(8, &pool), 0);
	const struct flower_action acts[] = {
		{ .type = FLOWER_ACT_VLAN_PUSH, .vlan_tpid = 0x8100, .vlan_tci = 5 | 3 << 13 },
		{ .type = FLOWER_ACT_VLAN_PUSH, .vlan_tpid = 0x88a8, .vlan_tci = 100 },
		{ .type = FLOWER_ACT_VLAN_POP },
		{ .type = FLOWER_ACT_VLAN_MODIFY, .vlan_tci = 42 },
		{ .type = FLOWER_ACT_VLAN_MODIFY, .vlan_tci = 42 | 6 << 13, .set_prio = true },
	};
	for (int tags = 0; tags <= 2; tags++)
		for (size_t i = 0; i < sizeof(acts) / sizeof(acts[0]); i++)
			if (!(tags == 2 && acts[i].type == FLOWER_ACT_VLAN_PUSH)) /* 3 tags: not parsed */
				check(pool, tags, &acts[i]);
	pkt_pool_destroy(pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_follows_frame),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
