/* pkt_vlan: push, pop and modify the outer tag; the headers after it and
 * the offload metadata stay where the bytes went. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "packet/pkt.h"
#include "packet/pkt_vlan.h"

static const uint8_t frame[] = {
	0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00, /* MACs, IPv4 */
	0x45, 0, 0, 20, 0, 0, 0, 0, 64, 6, 0, 0, 192, 0, 2, 1, 192, 0, 2, 2,
};

static struct pkt *make(struct pkt_pool *pool)
{
	struct pkt *p = pkt_alloc(pool);
	assert_non_null(p);
	assert_int_equal(pkt_set_data(p, frame, sizeof(frame)), 0);
	p->l2_ofs = 0;
	p->l3_ofs = 14;
	p->ol.flags = PKT_OL_NEEDS_CSUM;
	p->ol.csum_start = 34;
	p->ol.hdr_len = 54;
	return p;
}

static void test_push_pop_round_trip(void **state)
{
	(void)state;
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(4, &pool), 0);
	struct pkt *p = make(pool);
	assert_false(pkt_vlan_tagged(p));
	assert_int_equal(pkt_vlan_pop(p), -ENOENT);
	assert_int_equal(pkt_vlan_modify(p, 5, 0, false), -ENOENT);
	assert_int_equal(pkt_vlan_push(p, 0x8100, 0x2005), 0);
	assert_int_equal(p->size, sizeof(frame) + 4);
	assert_memory_equal(p->data, frame, 12);
	static const uint8_t tag[] = { 0x81, 0x00, 0x20, 0x05, 0x08, 0x00, 0x45 };
	assert_memory_equal(p->data + 12, tag, sizeof(tag));
	assert_int_equal(p->l2_ofs, 0);
	assert_int_equal(p->l3_ofs, 18);
	assert_int_equal(p->ol.csum_start, 38);
	assert_int_equal(p->ol.hdr_len, 58);
	assert_true(pkt_vlan_tagged(p));
	/* modify: the VID, and the PCP only when asked */
	assert_int_equal(pkt_vlan_modify(p, 7, 0, false), 0);
	assert_int_equal(p->data[14], 0x20);
	assert_int_equal(p->data[15], 0x07);
	assert_int_equal(pkt_vlan_modify(p, 4095, 6, true), 0);
	assert_int_equal(p->data[14], 0xcf);
	assert_int_equal(p->data[15], 0xff);
	assert_int_equal(pkt_vlan_pop(p), 0);
	assert_int_equal(p->size, sizeof(frame));
	assert_memory_equal(p->data, frame, sizeof(frame));
	assert_int_equal(p->l2_ofs, 0);
	assert_int_equal(p->l3_ofs, 14);
	assert_int_equal(p->ol.csum_start, 34);
	assert_int_equal(p->ol.hdr_len, 54);
	pkt_free(p);
	pkt_pool_destroy(pool);
}

static void test_short_frame_refused(void **state)
{
	(void)state;
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(2, &pool), 0);
	struct pkt *p = pkt_alloc(pool);
	assert_int_equal(pkt_set_data(p, frame, 10), 0);
	assert_int_equal(pkt_vlan_push(p, 0x8100, 1), -EINVAL);
	assert_int_equal(p->size, 10);
	pkt_free(p);
	pkt_pool_destroy(pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_pop_round_trip),
		cmocka_unit_test(test_short_frame_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
