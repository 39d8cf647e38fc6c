/* Unit tests for egress rules and indev in the table and the flow cache
 * (src/switch/flower_hook.c, flower_table.c, flow_cache.c): a port's
 * ingress and egress are separate rule lists (the same pref and handle at
 * both, automatic prefs each, a del of one leaves the other), a frame is
 * classified at the hook asked for, indev matches the key's in_port (on
 * ingress only its own port), a name that is no port is refused, and the
 * flow cache keeps verdicts of different hooks apart. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "flower_test_util.h"
#include "switch/flow_cache.h"
#include "switch/flower_hook.h"

#define IN "filter add dev vnet0 ingress "
#define OUT "filter add dev vnet0 egress "
#define EG1 (1 | FLOWER_HOOK_EGRESS) /* vnet0's egress */

static struct flow_key icmp_key(uint16_t in_port)
{
	struct flow_key k;
	memset(&k, 0, sizeof(k));
	k.in_port = in_port;
	k.dl_type = 0x0800;
	k.nw_family = 4;
	k.nw_proto = 1;
	return k;
}

static const struct flower_rule *first(const struct flower_table *t, uint16_t hook, const struct flow_key *k)
{
	struct flower_verdict v;
	flower_table_classify_hook(t, hook, k, &v);
	return v.n_rules ? v.rules[0] : NULL;
}

static void test_hooks_apart(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(IN "pref 1 handle 1 protocol ip flower action pass",
				       OUT "pref 1 handle 1 protocol ip flower action drop",
				       OUT "pref 2 protocol ip flower ip_proto icmp action drop");
	assert_int_equal(flower_table_n_rules(t), 3);
	assert_true(flower_table_port_has_rules(t, 1));
	assert_true(flower_table_port_has_rules(t, EG1));
	assert_false(flower_table_port_has_rules(t, 2 | FLOWER_HOOK_EGRESS));
	/* sorted by hook: the ingress rule, then the egress ones */
	assert_int_equal(flower_table_rule(t, 0)->port, 1);
	assert_int_equal(flower_table_rule(t, 1)->port, EG1);
	assert_int_equal(flower_table_rule(t, 2)->pref, 2);
	struct flow_key k = icmp_key(2);
	const struct flower_rule *in = first(t, 1, &k), *out = first(t, EG1, &k);
	assert_non_null(in);
	assert_non_null(out);
	assert_true(in->spec.actions[0].type == FLOWER_ACT_PASS);
	assert_true(out->spec.actions[0].type == FLOWER_ACT_DROP);
	assert_true(out->spec.given & FLOWER_SF_EGRESS);
	/* classify() is the ingress of key->in_port */
	struct flower_verdict v;
	k.in_port = 1;
	flower_table_classify(t, &k, &v);
	assert_ptr_equal(v.rules[0], in);
	/* a del of the egress list leaves the ingress one */
	struct flower_table *t2 = test_table(t, (const char *const[]){ "filter del dev vnet0 egress" }, 1);
	assert_int_equal(flower_table_n_rules(t2), 1);
	assert_false(flower_table_port_has_rules(t2, EG1));
	assert_true(flower_table_port_has_rules(t2, 1));
	flower_table_destroy(t2);
	flower_table_destroy(t);
}

static void test_auto_pref_per_hook(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(IN "protocol ip flower action pass", OUT "protocol ip flower action drop");
	for (size_t i = 0; i < flower_table_n_rules(t); i++)
		assert_int_equal(flower_table_rule(t, i)->pref, FLOWER_AUTO_PREF);
	flower_table_destroy(t);
}

static void test_indev(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(OUT "pref 1 protocol ip flower indev vxlan0 action drop",
				       OUT "pref 2 protocol ip flower action pass",
				       IN "pref 1 protocol ip flower indev vnet1 action drop",
				       IN "pref 2 protocol ip flower indev vnet0 action pass");
	struct flow_key from_vxlan = icmp_key(3), from_tap = icmp_key(4);
	assert_int_equal(first(t, EG1, &from_vxlan)->pref, 1);
	assert_int_equal(first(t, EG1, &from_tap)->pref, 2);
	/* on vnet0's ingress, in_port is vnet0: indev vnet1 never matches */
	struct flow_key own = icmp_key(1);
	assert_int_equal(first(t, 1, &own)->pref, 2);
	flower_table_destroy(t);
	/* a name that is no port is refused, naming it */
	struct flower_table *bad = NULL;
	struct flower_error err;
	int ret = test_apply(NULL, (const char *const[]){ OUT "flower indev nosuch action drop" }, 1, &bad, &err);
	assert_int_equal(ret, -ENOENT);
	assert_null(bad);
	assert_non_null(strstr(err.msg, "indev \"nosuch\""));
}

static void test_cache_by_hook(void **state)
{
	(void)state;
	struct flower_table *t = TABLE(IN "pref 1 protocol ip flower action pass",
				       OUT "pref 1 protocol ip flower action drop");
	struct flow_cache *fc;
	assert_int_equal(flow_cache_create(64, &fc), 0);
	struct flow_key k = icmp_key(1);
	bool fast;
	const struct flower_verdict *v = flow_cache_classify_hook(fc, t, 1, &k, &fast);
	assert_false(fast);
	assert_true(v->rules[0]->spec.actions[0].type == FLOWER_ACT_PASS);
	v = flow_cache_classify_hook(fc, t, EG1, &k, &fast);
	assert_false(fast); /* the same key at another hook: another entry */
	assert_true(v->rules[0]->spec.actions[0].type == FLOWER_ACT_DROP);
	v = flow_cache_classify_hook(fc, t, EG1, &k, &fast);
	assert_true(fast);
	assert_true(v->rules[0]->spec.actions[0].type == FLOWER_ACT_DROP);
	v = flow_cache_classify(fc, t, &k, &fast);
	assert_true(fast);
	assert_true(v->rules[0]->spec.actions[0].type == FLOWER_ACT_PASS);
	flow_cache_destroy(fc);
	flower_table_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hooks_apart), cmocka_unit_test(test_auto_pref_per_hook),
		cmocka_unit_test(test_indev),       cmocka_unit_test(test_cache_by_hook),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
