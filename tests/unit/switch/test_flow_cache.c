/* Unit tests for the flow cache (src/switch/flow_cache.c): a second lookup
 * of a key is a hit with the same verdict, every key field takes part in
 * the match, a new table version invalidates every entry (the verdict of
 * the new table, never the old one's), and over random keys and table
 * changes with a cache small enough to evict, the cached verdict is always
 * the classifier's; a thrashing cache evicts only every
 * FLOW_CACHE_EVICT_EVERY-th contended miss. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "flower_test_util.h"
#include "switch/flow_cache.h"

#define A "filter add dev vnet0 ingress "

static struct flow_key ip_key(uint8_t last_octet)
{
	struct flow_key k;
	memset(&k, 0, sizeof(k));
	k.in_port = 1;
	k.dl_type = 0x0800;
	k.nw_family = 4;
	k.nw_proto = 6;
	memcpy(k.nw_dst, (uint8_t[]){ 192, 0, 2, last_octet }, 4);
	k.tp_dst = 80;
	return k;
}

static bool same_verdict(const struct flower_verdict *a, const struct flower_verdict *b)
{
	if (a->end != b->end || a->n_rules != b->n_rules)
		return false;
	for (unsigned i = 0; i < a->n_rules; i++)
		if (a->rules[i] != b->rules[i])
			return false;
	return true;
}

static void test_hit_after_miss(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(A "pref 1 protocol ip flower dst_ip 192.0.2.1 action drop",
				       A "pref 2 protocol ip flower action pass");
	struct flow_cache *fc;
	assert_int_equal(flow_cache_create(100, &fc), 0);
	struct flow_key k = ip_key(1);
	bool fast = true;
	const struct flower_verdict *v = flow_cache_classify(fc, t, &k, &fast);
	assert_false(fast);
	assert_int_equal(v->n_rules, 1);
	assert_int_equal(v->rules[0]->pref, 1);
	v = flow_cache_classify(fc, t, &k, &fast);
	assert_true(fast);
	assert_int_equal(v->rules[0]->pref, 1);
	/* a key that differs in any field is another entry */
	struct flow_key k2 = ip_key(2);
	v = flow_cache_classify(fc, t, &k2, &fast);
	assert_false(fast);
	assert_int_equal(v->rules[0]->pref, 2);
	k2 = k;
	k2.tcp_flags = 0x10;
	flow_cache_classify(fc, t, &k2, &fast);
	assert_false(fast);
	k2 = k;
	k2.in_port = 2; /* no rules there: a cached "no match" */
	v = flow_cache_classify(fc, t, &k2, &fast);
	assert_false(fast);
	assert_int_equal(v->end, FLOWER_END_NO_MATCH);
	v = flow_cache_classify(fc, t, &k2, &fast);
	assert_true(fast);
	assert_int_equal(v->end, FLOWER_END_NO_MATCH);
	struct flow_cache_stats st;
	flow_cache_get_stats(fc, &st);
	assert_int_equal(st.hits, 2);
	assert_int_equal(st.misses, 4);
	/* a flush empties it */
	flow_cache_flush(fc);
	flow_cache_classify(fc, t, &k, &fast);
	assert_false(fast);
	flow_cache_destroy(fc);
	flower_table_destroy(t);
}

/* Each byte of the match part of the key counts; tcp_opts does not. */
static void test_every_key_byte(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(A "pref 1 flower action pass");
	struct flow_cache *fc;
	assert_int_equal(flow_cache_create(4096, &fc), 0);
	struct flow_key base = ip_key(1), k;
	bool fast;
	flow_cache_classify(fc, t, &base, &fast);
	for (size_t i = 0; i < FLOW_KEY_MATCH_SIZE; i++) {
		k = base;
		((uint8_t *)&k)[i] ^= 0x01;
		flow_cache_classify(fc, t, &k, &fast);
		if (fast)
			fail_msg("key byte %zu changed, still a hit", i);
	}
	k = base;
	k.tcp_opts.tsval = 12345;
	flow_cache_classify(fc, t, &k, &fast);
	assert_true(fast);
	flow_cache_destroy(fc);
	flower_table_destroy(t);
}

static void test_invalidated_by_version(void **state)
{
	(void)state;
	struct flower_table *t1 = TABLE(A "pref 1 protocol ip flower action drop");
	struct flow_cache *fc;
	assert_int_equal(flow_cache_create(64, &fc), 0);
	struct flow_key k = ip_key(1);
	bool fast;
	const struct flower_verdict *v = flow_cache_classify(fc, t1, &k, &fast);
	assert_int_equal(v->rules[0]->actions[0].type, FLOWER_ACT_DROP);
	v = flow_cache_classify(fc, t1, &k, &fast);
	assert_true(fast);

	static const char *const change[] = { "filter del dev vnet0 ingress pref 1",
					      A "pref 1 protocol ip flower action pass" };
	struct flower_table *t2 = test_table(t1, change, 2);
	assert_int_equal(flower_table_version(t2), flower_table_version(t1) + 1);
	v = flow_cache_classify(fc, t2, &k, &fast);
	assert_false(fast); /* the old entry is not used ... */
	assert_int_equal(v->rules[0]->actions[0].type, FLOWER_ACT_PASS); /* ... the new rule is */
	flower_table_destroy(t1); /* the old rules are gone: nothing may point at them */
	v = flow_cache_classify(fc, t2, &k, &fast);
	assert_true(fast);
	assert_int_equal(v->rules[0]->actions[0].type, FLOWER_ACT_PASS);

	/* a change to another port's rules invalidates too: one version */
	static const char *const other[] = { "filter add dev vnet1 ingress flower action drop" };
	struct flower_table *t3 = test_table(t2, other, 1);
	v = flow_cache_classify(fc, t3, &k, &fast);
	assert_false(fast);
	assert_int_equal(v->rules[0]->actions[0].type, FLOWER_ACT_PASS);
	flow_cache_destroy(fc);
	flower_table_destroy(t2);
	flower_table_destroy(t3);
}

/* A full cache (both ways live) lets a new key in only on every
 * FLOW_CACHE_EVICT_EVERY-th contended miss; the verdicts are right anyway. */
static void test_thrashing_evicts_rarely(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(A "pref 1 protocol ip flower dst_ip 192.0.2.3 action drop",
				       A "pref 2 protocol ip flower action pass");
	struct flow_cache *fc;
	assert_int_equal(flow_cache_create(2, &fc), 0);
	struct flow_key ka = ip_key(1), kb = ip_key(2), kc = ip_key(3);
	bool fast;
	flow_cache_classify(fc, t, &ka, &fast);
	flow_cache_classify(fc, t, &kb, &fast);
	for (int i = 1; i < FLOW_CACHE_EVICT_EVERY; i++) {
		const struct flower_verdict *v = flow_cache_classify(fc, t, &kc, &fast);
		assert_false(fast);
		assert_int_equal(v->rules[0]->pref, 1);
	}
	flow_cache_classify(fc, t, &ka, &fast);
	assert_true(fast);
	flow_cache_classify(fc, t, &kb, &fast);
	assert_true(fast);
	struct flow_cache_stats st;
	flow_cache_get_stats(fc, &st);
	assert_int_equal(st.evictions, 0);
	const struct flower_verdict *v = flow_cache_classify(fc, t, &kc, &fast);
	assert_false(fast);
	assert_int_equal(v->rules[0]->pref, 1);
	v = flow_cache_classify(fc, t, &kc, &fast); /* in now */
	assert_true(fast);
	assert_int_equal(v->rules[0]->pref, 1);
	flow_cache_get_stats(fc, &st);
	assert_int_equal(st.evictions, 1);
	flow_cache_destroy(fc);
	flower_table_destroy(t);
}

static uint32_t rng = 99;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng % n;
}

/* Random keys over a cache of 16 entries (evictions all the time) and a
 * table changed every 500 keys: the cache always answers as the table. */
static void test_random_against_table(void **state)
{
	(void)state;
	struct flow_cache *fc;
	assert_int_equal(flow_cache_create(16, &fc), 0);
	struct flower_table *t = TABLE(A "pref 1 protocol ip flower dst_ip 192.0.2.0/30 action drop",
				       A "pref 2 protocol ip flower ip_proto tcp dst_port 80-90 "
				       "action pass");
	uint64_t hits = 0;
	for (int i = 0; i < 20000; i++) {
		if (i % 500 == 499) {
			char line[256];
			snprintf(line, sizeof(line), A "pref %d protocol ip flower dst_ip 192.0.2.%u "
				 "action drop", 3 + i / 500, rnd(8));
			const char *lines[] = { line };
			struct flower_table *next = test_table(t, lines, 1);
			flower_table_destroy(t);
			t = next;
		}
		struct flow_key k = ip_key((uint8_t)rnd(8));
		k.tp_dst = (uint16_t)(78 + rnd(16));
		bool fast;
		const struct flower_verdict *got = flow_cache_classify(fc, t, &k, &fast);
		struct flower_verdict want;
		flower_table_classify(t, &k, &want);
		hits += fast;
		if (!same_verdict(got, &want))
			fail_msg("key %d: cached verdict differs from the table's", i);
	}
	struct flow_cache_stats st;
	flow_cache_get_stats(fc, &st);
	assert_int_equal(st.hits, hits);
	assert_int_equal(st.hits + st.misses, 20000);
	assert_true(st.hits > 0 && st.evictions > 0);
	flow_cache_destroy(fc);
	flower_table_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hit_after_miss),
		cmocka_unit_test(test_every_key_byte),
		cmocka_unit_test(test_invalidated_by_version),
		cmocka_unit_test(test_thrashing_evicts_rarely),
		cmocka_unit_test(test_random_against_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
