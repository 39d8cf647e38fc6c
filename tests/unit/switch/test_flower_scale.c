/* Unit tests for flower tables at scale (src/switch/flower_table.c,
 * flower_index.c): the batch index against a naive model, tables far past
 * the old 16,384-rule cap built in batches as flower.json's concurrency
 * cases do (add, then replace, then del, by pref and handle), duplicates
 * found by hash in a pref of 100,000 rules, batches mixing exact commands
 * with ones that need the order, and counter arrays sized by the table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "flower_test_util.h"
#include "switch/flower_index.h"

enum { VNET0 = 1, BATCH = 10000, N_BATCHES = 10 };

/* ---- the index against a model ------------------------------------------ */

static void test_index_model(void **state)
{
	(void)state;
	enum { N = 3000 };
	static struct flower_rule rules[N];
	static bool in[N];
	struct fidx place, pref;
	assert_int_equal(fidx_init(&place, FIDX_PLACE, 1), 0); /* it must grow */
	assert_int_equal(fidx_init(&pref, FIDX_PREF, 1), 0);
	for (unsigned i = 0; i < N; i++)
		rules[i] = (struct flower_rule){ .port = 1, .pref = i % 7, .handle = i };
	unsigned seed = 7, n_in = 0, per_pref[7] = { 0 };
	for (unsigned step = 0; step < 40000; step++) {
		seed = seed * 1103515245u + 12345u;
		unsigned i = (seed >> 8) % N;
		if (in[i]) {
			fidx_remove(&place, &rules[i]);
			fidx_remove(&pref, &rules[i]);
			n_in--, per_pref[i % 7]--;
		} else {
			assert_int_equal(fidx_insert(&place, &rules[i]), 0);
			assert_int_equal(fidx_insert(&pref, &rules[i]), 0);
			n_in++, per_pref[i % 7]++;
		}
		in[i] = !in[i];
		if (step % 4000)
			continue;
		for (unsigned j = 0; j < N; j++) {
			struct fidx_key k = fidx_key_of(&rules[j]);
			const struct fidx_entry *e = fidx_find(&place, &k);
			assert_true(in[j] ? e && e->r == &rules[j] : !e);
		}
		for (unsigned p = 0; p < 7; p++) {
			struct fidx_key k = { .port = 1, .pref = p };
			const struct fidx_entry *e = fidx_find(&pref, &k);
			assert_true(per_pref[p] ? e && e->count == per_pref[p] : !e);
		}
		assert_int_equal(place.n, n_in);
	}
	fidx_free(&place);
	fidx_free(&pref);
}

/* ---- flower.json's concurrency cases, at 100,000 rules ------------------ */

/* Rule i as tdc_batch.py writes it: pref 1, handle i + 1, a MAC pair of
 * its own. */
static void rule_line(char *buf, size_t size, const char *verb, unsigned i, bool with_key)
{
	int n = snprintf(buf, size, "filter %s dev vnet0 ingress protocol ip pref 1 handle %u flower", verb, i + 1);
	if (with_key)
		snprintf(buf + n, size - (size_t)n, " src_mac 02:00:%02x:%02x:%02x:01 dst_mac 02:00:00:00:00:02 "
			 "action drop", (i >> 16) & 0xff, (i >> 8) & 0xff, i & 0xff);
}

static struct ctl_flower ops[BATCH];

static int apply_range(struct flower_table **t, const char *verb, unsigned from, unsigned n, bool with_key,
		       struct flower_error *err)
{
	char line[512];
	for (unsigned i = 0; i < n; i++) {
		rule_line(line, sizeof(line), verb, from + i, with_key);
		test_parse_rule(line, &ops[i]);
	}
	struct flower_table *nt = NULL;
	int ret = test_apply_cmds(*t, ops, n, 1000, &nt, err);
	if (ret == 0) {
		flower_table_destroy(*t);
		*t = nt;
	} else {
		assert_null(nt);
	}
	return ret;
}

static const struct flower_rule *lookup_mac(const struct flower_table *t, unsigned i)
{
	struct flow_key k;
	memset(&k, 0, sizeof(k));
	k.in_port = VNET0;
	k.dl_type = 0x0800;
	k.nw_family = 4;
	const uint8_t src[6] = { 2, 0, (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i, 1 };
	const uint8_t dst[6] = { 2, 0, 0, 0, 0, 2 };
	memcpy(k.dl_src, src, 6);
	memcpy(k.dl_dst, dst, 6);
	struct flower_verdict v;
	flower_table_classify(t, &k, &v);
	return v.n_rules ? v.rules[0] : NULL;
}

static void check_all(const struct flower_table *t, unsigned n)
{
	assert_int_equal(flower_table_n_rules(t), n);
	assert_true(flower_table_n_slots(t) <= n);
	for (unsigned i = 0; i < n; i++) {
		const struct flower_rule *r = flower_table_rule(t, i);
		assert_int_equal(r->pref, 1);
		assert_int_equal(r->handle, i + 1); /* each once, in order */
		assert_ptr_equal(lookup_mac(t, i), r);
	}
}

static void test_concurrency_cases(void **state)
{
	(void)state;
	struct flower_table *t = NULL;
	struct flower_error err;
	for (unsigned b = 0; b < N_BATCHES; b++)
		assert_int_equal(apply_range(&t, "add", b * BATCH, BATCH, true, &err), 0);
	check_all(t, N_BATCHES * BATCH);
	uint64_t version = flower_table_version(t);
	/* a batch re-adding a handle: refused whole, at that line */
	assert_int_equal(apply_range(&t, "add", N_BATCHES * BATCH - 5, 10, true, &err), -EEXIST);
	assert_int_equal(err.op, 0);
	assert_non_null(strstr(err.msg, "duplicate handle"));
	/* the same key under another handle, found by hash among 100,000 */
	char line[512];
	rule_line(line, sizeof(line), "add", 54321, true);
	char *key = strstr(line, " src_mac");
	char other[512];
	snprintf(other, sizeof(other), "filter add dev vnet0 ingress protocol ip pref 1 handle 777777 flower%s", key);
	test_parse_rule(other, &ops[0]);
	struct flower_table *nt = NULL;
	assert_int_equal(test_apply_cmds(t, ops, 1, 1, &nt, &err), -EEXIST);
	assert_non_null(strstr(err.msg, "handle 54322 has the same key"));
	assert_int_equal(flower_table_version(t), version);

	/* replace, then del: each rule's uid changes once, slots are reused */
	uint64_t uid0 = flower_table_rule(t, 0)->uid;
	for (unsigned b = 0; b < N_BATCHES; b++)
		assert_int_equal(apply_range(&t, "replace", b * BATCH, BATCH, true, &err), 0);
	check_all(t, N_BATCHES * BATCH);
	assert_true(flower_table_rule(t, 0)->uid > uid0);
	struct flower_counters c = { 0 };
	assert_int_equal(flower_counters_reserve(&c, flower_table_n_slots(t)), 0);
	assert_true(c.n >= N_BATCHES * BATCH);
	for (unsigned b = 0; b < N_BATCHES; b++)
		assert_int_equal(apply_range(&t, "del", b * BATCH, BATCH, false, &err), 0);
	assert_int_equal(flower_table_n_rules(t), 0);
	assert_null(lookup_mac(t, 0));
	/* a del of a rule that is gone: refused */
	assert_int_equal(apply_range(&t, "del", 0, 1, false, &err), -ENOENT);
	flower_counters_fini(&c);
	flower_table_destroy(t);
}

/* Exact commands (O(1), pending) and ordered ones (automatic handle and
 * pref, del of a whole pref) in one batch see each other. */
static void test_mixed_batch(void **state)
{
	(void)state;
#define A "filter add dev vnet0 ingress "
	static const char *const lines[] = {
		A "pref 5 handle 3 protocol ip flower ip_proto tcp action drop",
		A "pref 5 protocol ip flower ip_proto udp action drop",         /* handle 1 */
		A "pref 5 protocol ip flower ip_proto icmp action drop",        /* handle 2 */
		A "protocol ip flower ip_proto 47 action drop",                 /* pref 4 */
		"filter del dev vnet0 ingress pref 5 handle 1",
		A "pref 5 protocol ip flower ip_proto udp action pass",         /* handle 1 again */
		A "pref 6 handle 1 protocol ip flower ip_proto tcp action drop",
		"filter del dev vnet0 ingress pref 6",
		A "pref 6 handle 1 protocol arp flower action drop",           /* pref 6 empty: arp ok */
	};
	struct flower_table *t = test_table(NULL, lines, sizeof(lines) / sizeof(lines[0]));
	static const uint32_t want[][2] = { { 4, 1 }, { 5, 1 }, { 5, 2 }, { 5, 3 }, { 6, 1 } };
	assert_int_equal(flower_table_n_rules(t), 5);
	for (unsigned i = 0; i < 5; i++) {
		assert_int_equal(flower_table_rule(t, i)->pref, want[i][0]);
		assert_int_equal(flower_table_rule(t, i)->handle, want[i][1]);
	}
	assert_int_equal(flower_table_rule(t, 1)->spec.actions[0].type, FLOWER_ACT_PASS);
	/* added and deleted in the same batch: in no table */
	static const char *const gone[] = { A "pref 9 handle 1 protocol ip flower action drop",
					    "filter del dev vnet0 ingress pref 9 handle 1" };
	struct flower_table *t2 = test_table(t, gone, 2);
	assert_int_equal(flower_table_n_rules(t2), 5);
	/* the other protocol at a pref, with pending adds only */
	static const char *const proto[] = { A "pref 8 handle 1 protocol ip flower action drop",
					     A "pref 8 handle 2 protocol arp flower action drop" };
	struct flower_error err;
	struct flower_table *t3 = NULL;
	assert_int_equal(test_apply(t2, proto, 2, &t3, &err), -EINVAL);
	assert_int_equal(err.op, 1);
	flower_table_destroy(t);
	flower_table_destroy(t2);
#undef A
}

/* Automatic prefs in one batch follow the chain's lowest pref as rules
 * come and go (kept per chain, found again when the lowest leaves), and an
 * automatic handle in an empty pref is 1. */
static void test_auto_pref_batch(void **state)
{
	(void)state;
#define A "filter add dev vnet0 ingress "
	static const char *const lines[] = {
		A "protocol ip flower ip_proto tcp action drop",           /* 49152 */
		A "protocol ip flower ip_proto udp action drop",           /* 49151 */
		A "protocol ip flower ip_proto icmp action drop",          /* 49150 */
		"filter del dev vnet0 ingress pref 49150",
		A "protocol ip flower ip_proto 47 action drop",            /* 49150 again */
		A "chain 3 protocol ip flower ip_proto 47 action drop",    /* chain 3: 49152 */
		A "pref 100 handle 7 protocol ip flower ip_proto 50 action drop",
		A "protocol ip flower ip_proto 51 action drop",            /* 99 */
		"filter del dev vnet0 ingress pref 99 handle 1",
		"filter del dev vnet0 ingress pref 100",
		A "protocol ip flower ip_proto 52 action drop",            /* 49149 */
		A "pref 7 protocol ip flower ip_proto 53 action drop",     /* pref 7, handle 1 */
	};
	struct flower_table *t = test_table(NULL, lines, sizeof(lines) / sizeof(lines[0]));
	static const uint32_t want[][3] = { { 0, 7, 1 },     { 0, 49149, 1 }, { 0, 49150, 1 },
					    { 0, 49151, 1 }, { 0, 49152, 1 }, { 3, 49152, 1 } };
	assert_int_equal(flower_table_n_rules(t), 6);
	for (unsigned i = 0; i < 6; i++) {
		assert_int_equal(flower_table_rule(t, i)->chain, want[i][0]);
		assert_int_equal(flower_table_rule(t, i)->pref, want[i][1]);
		assert_int_equal(flower_table_rule(t, i)->handle, want[i][2]);
	}
	/* Automatic handles in one pref: the lowest free, also after a del. */
	static const char *const handles[] = {
		A "pref 300 protocol ip flower ip_proto 1 action drop",    /* 1 */
		A "pref 300 protocol ip flower ip_proto 2 action drop",    /* 2 */
		A "pref 300 handle 4 protocol ip flower ip_proto 4 action drop",
		A "pref 300 protocol ip flower ip_proto 3 action drop",    /* 3 */
		A "pref 300 protocol ip flower ip_proto 5 action drop",    /* 5 */
		"filter del dev vnet0 ingress pref 300 handle 2",
		A "pref 300 protocol ip flower ip_proto 6 action drop",    /* 2 */
		A "pref 300 protocol ip flower ip_proto 7 action drop",    /* 6 */
	};
	struct flower_table *th = test_table(NULL, handles, sizeof(handles) / sizeof(handles[0]));
	static const uint8_t proto_of_handle[] = { 0, 1, 6, 3, 4, 5, 7 };
	assert_int_equal(flower_table_n_rules(th), 6);
	for (unsigned i = 0; i < 6; i++) {
		const struct flower_rule *r = flower_table_rule(th, i);
		assert_int_equal(r->handle, i + 1);
		assert_int_equal(r->spec.match.ip_proto, proto_of_handle[i + 1]);
	}
	flower_table_destroy(th);
	/* A second batch starts from the table: one below 7. */
	static const char *const more[] = { A "protocol ip flower ip_proto 54 action drop" };
	struct flower_table *t2 = test_table(t, more, 1);
	assert_int_equal(flower_table_rule(t2, 0)->pref, 6);
	flower_table_destroy(t);
	flower_table_destroy(t2);
#undef A
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index_model),
		cmocka_unit_test(test_concurrency_cases),
		cmocka_unit_test(test_mixed_batch),
		cmocka_unit_test(test_auto_pref_batch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
