/* Unit tests for src/packet/pkt.c: pool accounting, push/pull offsets,
 * frags and their references, trim, copy-out, linearize, and clones that
 * share the payload. */
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
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(2, &pool), 0);
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
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(1, &pool), 0);
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
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(2, &pool), 0);
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
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(1, &pool), 0);
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
	assert_int_equal(pkt_pool_create(1, &pool), 0);
	a = pkt_alloc(pool);
	assert_int_equal(pkt_buf_size(a), PKT_BUF_SIZE);
	pkt_free(a);
	pkt_pool_destroy(pool);
}

/* ---- pkt_clone ------------------------------------------------------------ */

enum { CLONE_HDRS = 54, CLONE_LINEAR_PAYLOAD = 30000, CLONE_FRAG = 2000 };

static uint32_t pool_in_use(const struct pkt_pool *pool)
{
	struct pkt_pool_stats st;
	pkt_pool_get_stats(pool, &st);
	return st.in_use;
}

/* A TSO-like frame: Eth/IPv4/TCP headers, 30000 payload bytes in the linear
 * part, then one frag of 2000 bytes living in `seg`.  Metadata set to
 * values a clone must carry over. */
static struct pkt *clone_source(struct pkt_pool *pool, struct pkt **seg)
{
	static uint8_t bytes[CLONE_HDRS + CLONE_LINEAR_PAYLOAD];
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)(i * 7);
	struct pkt *p = pkt_alloc(pool);
	*seg = pkt_alloc(pool);
	assert_non_null(p);
	assert_non_null(*seg);
	assert_int_equal(pkt_set_data(p, bytes, sizeof(bytes)), 0);
	assert_int_equal(pkt_set_data(*seg, bytes, CLONE_FRAG + 10), 0);
	assert_int_equal(pkt_add_frag(p, (*seg)->data + 10, CLONE_FRAG, *seg), 0);
	p->l2_ofs = 0;
	p->l3_ofs = 14;
	p->l4_ofs = 34;
	p->payload_ofs = CLONE_HDRS;
	p->ol = (struct pkt_offload){ PKT_OL_NEEDS_CSUM, PKT_GSO_TCPV4, CLONE_HDRS, 1448, 34, 16 };
	p->in_port = 7;
	p->tunnel.vni = 99;
	p->tunnel.family = 4;
	p->tunnel.src[0] = 198;
	p->tunnel.src_port = 4789;
	p->timestamp_ns = 123456789;
	return p;
}

static void assert_same_meta(const struct pkt *a, const struct pkt *b)
{
	assert_memory_equal(&a->ol, &b->ol, sizeof(a->ol));
	assert_memory_equal(&a->tunnel, &b->tunnel, sizeof(a->tunnel));
	assert_int_equal(a->in_port, b->in_port);
	assert_int_equal(a->timestamp_ns, b->timestamp_ns);
	assert_int_equal(a->l2_ofs, b->l2_ofs);
	assert_int_equal(a->l3_ofs, b->l3_ofs);
	assert_int_equal(a->l4_ofs, b->l4_ofs);
	assert_int_equal(a->payload_ofs, b->payload_ofs);
	assert_int_equal(a->tunnel_ofs, b->tunnel_ofs);
	assert_int_equal(a->inner_l2_ofs, b->inner_l2_ofs);
	assert_int_equal(a->inner_l3_ofs, b->inner_l3_ofs);
	assert_int_equal(a->inner_l4_ofs, b->inner_l4_ofs);
	assert_int_equal(a->inner_payload_ofs, b->inner_payload_ofs);
}

/* The clone copies the headers only: its linear payload and frags point at
 * the original's bytes (no copy), with references on their owners. */
static void test_clone_shares_payload(void **state)
{
	(void)state;
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(3, &pool), 0);
	struct pkt *seg, *p = clone_source(pool, &seg);
	struct pkt *c = pkt_clone(pool, p);
	assert_non_null(c);
	assert_ptr_not_equal(c->data, p->data);
	assert_int_equal(c->size, CLONE_HDRS);
	assert_memory_equal(c->data, p->data, CLONE_HDRS);
	assert_int_equal(pkt_headroom(c), PKT_HEADROOM);
	assert_int_equal(c->nr_frags, 2);
	assert_ptr_equal(c->frags[0].data, p->data + CLONE_HDRS);
	assert_int_equal(c->frags[0].size, CLONE_LINEAR_PAYLOAD);
	assert_ptr_equal(c->frags[0].owner, p);
	assert_ptr_equal(c->frags[1].data, seg->data + 10);
	assert_int_equal(c->frags[1].size, CLONE_FRAG);
	assert_ptr_equal(c->frags[1].owner, seg);
	assert_int_equal(pkt_len(c), pkt_len(p));
	assert_int_equal(p->refcnt, 2);   /* its user and the clone's frag */
	assert_int_equal(seg->refcnt, 3); /* itself, p's frag, c's frag */
	assert_same_meta(c, p);
	assert_null(c->next);

	static uint8_t a[CLONE_HDRS + CLONE_LINEAR_PAYLOAD + CLONE_FRAG];
	static uint8_t b[sizeof(a)];
	assert_int_equal(pkt_copy_out(p, 0, sizeof(a), a), 0);
	assert_int_equal(pkt_copy_out(c, 0, sizeof(b), b), 0);
	assert_memory_equal(a, b, sizeof(a));

	pkt_free(seg);
	pkt_free(p);
	assert_int_equal(pool_in_use(pool), 3); /* the clone holds both */
	pkt_free(c);
	assert_int_equal(pool_in_use(pool), 0);
	pkt_pool_destroy(pool);
}

/* Encapsulating the clone (push, rewrite its headers) leaves the original's
 * bytes alone; freeing the clone first, then the original, empties the
 * pool too. */
static void test_clone_headers_are_private(void **state)
{
	(void)state;
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(3, &pool), 0);
	struct pkt *seg, *p = clone_source(pool, &seg);
	uint8_t before[CLONE_HDRS];
	memcpy(before, p->data, sizeof(before));
	struct pkt *c = pkt_clone(pool, p);
	assert_non_null(c);
	memset(c->data, 0xee, CLONE_HDRS);
	uint8_t *outer = pkt_push(c, 50);
	assert_non_null(outer);
	memset(outer, 0xdd, 50);
	assert_int_equal(c->l3_ofs, 64);
	c->ol.gso_size = 1;
	assert_memory_equal(p->data, before, sizeof(before));
	assert_int_equal(p->l3_ofs, 14);
	assert_int_equal(p->ol.gso_size, 1448);
	assert_int_equal(pkt_headroom(p), PKT_HEADROOM);

	pkt_free(c);
	assert_int_equal(p->refcnt, 1);
	assert_int_equal(seg->refcnt, 2);
	pkt_free(seg);
	pkt_free(p);
	assert_int_equal(pool_in_use(pool), 0);
	pkt_pool_destroy(pool);
}

/* A VXLAN frame: the headers end at the inner payload, not the outer one. */
static void test_clone_tunnelled_copies_inner_headers(void **state)
{
	(void)state;
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(2, &pool), 0);
	struct pkt *p = pkt_alloc(pool);
	uint8_t bytes[400];
	memset(bytes, 0x5a, sizeof(bytes));
	assert_int_equal(pkt_set_data(p, bytes, sizeof(bytes)), 0);
	p->payload_ofs = 42;
	p->tunnel_ofs = 42;
	p->inner_payload_ofs = 104;
	struct pkt *c = pkt_clone(pool, p);
	assert_non_null(c);
	assert_int_equal(c->size, 104);
	assert_int_equal(c->nr_frags, 1);
	assert_ptr_equal(c->frags[0].data, p->data + 104);
	assert_int_equal(c->frags[0].size, 400 - 104);
	pkt_free(p);
	pkt_free(c);
	assert_int_equal(pool_in_use(pool), 0);
	pkt_pool_destroy(pool);
}

/* No payload offset (an unparsed frame): the whole linear part is copied. */
static void test_clone_unparsed_copies_linear(void **state)
{
	(void)state;
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(2, &pool), 0);
	struct pkt *p = pkt_alloc(pool);
	uint8_t bytes[60] = { 1, 2, 3 };
	assert_int_equal(pkt_set_data(p, bytes, sizeof(bytes)), 0);
	struct pkt *c = pkt_clone(pool, p);
	assert_non_null(c);
	assert_int_equal(c->size, sizeof(bytes));
	assert_int_equal(c->nr_frags, 0);
	assert_memory_equal(c->data, bytes, sizeof(bytes));
	assert_int_equal(p->refcnt, 1);
	pkt_free(c);
	pkt_free(p);
	pkt_pool_destroy(pool);
}

/* Every frag slot used: the linear payload is copied, the frags shared. */
static void test_clone_full_frags_copies_linear_payload(void **state)
{
	(void)state;
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(3, &pool), 0);
	struct pkt *p = pkt_alloc(pool), *seg = pkt_alloc(pool);
	uint8_t bytes[200];
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)i;
	assert_int_equal(pkt_set_data(p, bytes, sizeof(bytes)), 0);
	assert_int_equal(pkt_set_data(seg, bytes, PKT_MAX_FRAGS), 0);
	for (int i = 0; i < PKT_MAX_FRAGS; i++)
		assert_int_equal(pkt_add_frag(p, seg->data + i, 1, seg), 0);
	p->payload_ofs = 54;
	struct pkt *c = pkt_clone(pool, p);
	assert_non_null(c);
	assert_int_equal(c->size, sizeof(bytes));
	assert_memory_equal(c->data, bytes, sizeof(bytes));
	assert_int_equal(c->nr_frags, PKT_MAX_FRAGS);
	assert_ptr_equal(c->frags[5].data, seg->data + 5);
	assert_int_equal(p->refcnt, 1);
	assert_int_equal(seg->refcnt, 1 + 2 * PKT_MAX_FRAGS);
	pkt_free(seg);
	pkt_free(p);
	pkt_free(c);
	assert_int_equal(pool_in_use(pool), 0);
	pkt_pool_destroy(pool);
}

/* An empty pool: NULL, counted, and the original untouched. */
static void test_clone_pool_empty(void **state)
{
	(void)state;
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(2, &pool), 0);
	struct pkt *seg, *p = clone_source(pool, &seg);
	assert_null(pkt_clone(pool, p));
	struct pkt_pool_stats st;
	pkt_pool_get_stats(pool, &st);
	assert_int_equal(st.alloc_failures, 1);
	assert_int_equal(p->refcnt, 1);
	assert_int_equal(seg->refcnt, 2);

	/* A pool whose buffers cannot hold the headers: NULL, nothing held. */
	struct pkt_pool *small = pkt_pool_create_sized(1, PKT_HEADROOM + PKT_TAILROOM);
	assert_non_null(small);
	p->payload_ofs = PKT_OFS_NONE; /* copy the whole 30 KB linear part */
	assert_null(pkt_clone(small, p));
	assert_int_equal(pool_in_use(small), 0);
	assert_int_equal(p->refcnt, 1);
	assert_int_equal(seg->refcnt, 2);
	pkt_pool_destroy(small);

	pkt_free(seg);
	pkt_free(p);
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
		cmocka_unit_test(test_clone_shares_payload),
		cmocka_unit_test(test_clone_headers_are_private),
		cmocka_unit_test(test_clone_tunnelled_copies_inner_headers),
		cmocka_unit_test(test_clone_unparsed_copies_linear),
		cmocka_unit_test(test_clone_full_frags_copies_linear_payload),
		cmocka_unit_test(test_clone_pool_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
