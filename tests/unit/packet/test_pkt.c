/* Unit tests for src/packet/pkt.c: pool accounting, push/pull offsets,
 * frags and their references, trim, copy-out and linearize. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "packet/pkt.h"

static void test_pool_exhaustion_is_counted(void **state)
{
	(void)state;
	struct pkt_pool *pool = pkt_pool_create(2);
	struct pkt *a = pkt_alloc(pool), *b = pkt_alloc(pool);
	assert_non_null(a);
	assert_non_null(b);
	assert_null(pkt_alloc(pool));
	struct pkt_pool_stats st;
	pkt_pool_get_stats(pool, &st);
	assert_int_equal(st.alloc_failures, 1);
	assert_int_equal(st.in_use, 2);
	pkt_free(a);
	assert_non_null(a = pkt_alloc(pool));
	pkt_free(a);
	pkt_free(b);
	pkt_pool_get_stats(pool, &st);
	assert_int_equal(st.in_use, 0);
	pkt_pool_destroy(pool);
	pkt_pool_destroy(NULL);
}

static void test_push_pull_keep_offsets_on_same_bytes(void **state)
{
	(void)state;
	struct pkt_pool *pool = pkt_pool_create(1);
	struct pkt *p = pkt_alloc(pool);
	uint8_t frame[64];
	for (size_t i = 0; i < sizeof(frame); i++)
		frame[i] = (uint8_t)i;
	assert_int_equal(pkt_set_data(p, frame, sizeof(frame)), 0);
	p->l3_ofs = 14;
	assert_non_null(pkt_push(p, 50));
	assert_int_equal(p->l3_ofs, 64);
	assert_int_equal(p->data[p->l3_ofs], 14);
	assert_non_null(pkt_pull(p, 60));
	assert_int_equal(p->l3_ofs, 4);
	assert_non_null(pkt_pull(p, 10));
	assert_int_equal(p->l3_ofs, PKT_OFS_NONE);
	assert_null(pkt_push(p, PKT_BUF_SIZE));
	assert_null(pkt_pull(p, p->size + 1));
	pkt_free(p);
	pkt_pool_destroy(pool);
}

static void test_frags_hold_owner_until_freed(void **state)
{
	(void)state;
	struct pkt_pool *pool = pkt_pool_create(2);
	struct pkt *head = pkt_alloc(pool), *seg = pkt_alloc(pool);
	uint8_t bytes[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	pkt_set_data(head, bytes, 4);
	pkt_set_data(seg, bytes, 10);
	assert_int_equal(pkt_add_frag(head, seg->data + 4, 6, seg), 0);
	pkt_free(seg); /* head still holds it */
	assert_int_equal(pkt_len(head), 10);
	uint8_t out[10];
	assert_int_equal(pkt_copy_out(head, 0, 10, out), 0);
	assert_memory_equal(out, bytes, 4);
	assert_memory_equal(out + 4, bytes + 4, 6);
	assert_int_equal(pkt_copy_out(head, 3, 8, out), -EINVAL);

	pkt_trim(head, 7);
	assert_int_equal(pkt_len(head), 7);
	assert_int_equal(pkt_linearize(head), 0);
	assert_int_equal(head->nr_frags, 0);
	assert_int_equal(head->size, 7);
	assert_int_equal(head->data[6], 7);

	struct pkt_pool_stats st;
	pkt_pool_get_stats(pool, &st);
	assert_int_equal(st.in_use, 1); /* seg went back when the frag was dropped */
	pkt_free(head);
	pkt_pool_destroy(pool);
}

static void test_frag_limit(void **state)
{
	(void)state;
	struct pkt_pool *pool = pkt_pool_create(1);
	struct pkt *p = pkt_alloc(pool);
	static const uint8_t byte = 0;
	for (int i = 0; i < PKT_MAX_FRAGS; i++)
		assert_int_equal(pkt_add_frag(p, &byte, 1, NULL), 0);
	assert_int_equal(pkt_add_frag(p, &byte, 1, NULL), -ENOSPC);
	pkt_free(p);
	pkt_pool_destroy(pool);
}

/* A sized pool: buffers of the asked size (rounded to cache lines),
 * tailroom measured against it, frames that do not fit refused, buffers
 * not overlapping; sizes outside [headroom + tailroom, PKT_BUF_SIZE]
 * refused. */
static void test_sized_pool_buffers(void **state)
{
	(void)state;
	uint8_t frame[2048];
	memset(frame, 0xab, sizeof(frame));
	errno = 0;
	assert_null(pkt_pool_create_sized(4, PKT_HEADROOM + PKT_TAILROOM - 1));
	assert_int_equal(errno, EINVAL);
	assert_null(pkt_pool_create_sized(4, PKT_BUF_SIZE + 1));

	struct pkt_pool *pool = pkt_pool_create_sized(3, PKT_HEADROOM + 1500 + PKT_TAILROOM);
	assert_non_null(pool);
	struct pkt *a = pkt_alloc(pool), *b = pkt_alloc(pool), *c = pkt_alloc(pool);
	assert_non_null(c);
	assert_null(pkt_alloc(pool));
	assert_int_equal(pkt_buf_size(a), 1728); /* 128 + 1500 + 64, rounded to 64 */
	assert_int_equal(pkt_tailroom(a), 1728 - PKT_HEADROOM);
	assert_int_equal(pkt_set_data(a, frame, 1500), 0);
	assert_int_equal(pkt_tailroom(a), 1728 - PKT_HEADROOM - 1500);
	assert_int_equal(pkt_set_data(b, frame, sizeof(frame)), -ENOSPC);
	assert_int_equal(pkt_set_data(b, frame, 1728 - PKT_HEADROOM), 0);
	assert_null(pkt_put(b, 1));
	/* Filling b to its last byte leaves a's bytes alone. */
	assert_int_equal(pkt_set_data(c, frame, 100), 0);
	assert_int_equal(a->data[1499], 0xab);
	assert_true(a->base + pkt_buf_size(a) <= b->base || b->base + pkt_buf_size(b) <= a->base);
	pkt_free(a);
	pkt_free(b);
	pkt_free(c);
	pkt_pool_destroy(pool);

	/* The default pool's pkts say PKT_BUF_SIZE. */
	pool = pkt_pool_create(1);
	a = pkt_alloc(pool);
	assert_int_equal(pkt_buf_size(a), PKT_BUF_SIZE);
	pkt_free(a);
	pkt_pool_destroy(pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_exhaustion_is_counted),
		cmocka_unit_test(test_push_pull_keep_offsets_on_same_bytes),
		cmocka_unit_test(test_frags_hold_owner_until_freed),
		cmocka_unit_test(test_frag_limit),
		cmocka_unit_test(test_sized_pool_buffers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
