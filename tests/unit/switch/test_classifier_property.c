/* Property test of the classifier: tables of random rules over 16 shapes
 * of mask (plus ranges and nofirstfrag, the linear stage), on two ports,
 * with shared prefs so handles order rules too; random keys drawn from the
 * same small value sets so that many rules match many keys.  For every key,
 * flower_table_classify() must return exactly the rule a linear scan in
 * (port, chain, pref, handle) order finds with cls_match_matches(): any
 * tuple-space bug (a wrong subtable order, a bad early stop, a shadowed
 * entry, a hash or mask slip, a range rule out of order) shows as a
 * mismatch, printed with the seed and the rule line.  Every other round a
 * batch of random dels goes first, checked against a filter of the old
 * table, and every third a batch of random adds (prefs above the first
 * batch's), whose table must share with the old one every subtable the
 * adds did not touch; the old table is destroyed before the lookups, so
 * a shared subtable it freed would show (ASan).  Every table is checked to
 * be in place order. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "flower_test_util.h"
#include "parse/flow.h"
#include <errno.h>

enum { MAX_OPS = 600, ROUNDS = 60, KEYS_PER_ROUND = 5000 };

static uint32_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return n ? rng_state % n : 0;
}

static const uint16_t ports[] = { 53, 80, 443, 999, 1000, 1500, 2000, 2001, 65535 };
static const uint32_t vnis[] = { 0, 1, 2, 42 };

static uint16_t any_port(void)
{
	return rnd(8) ? ports[rnd(sizeof(ports) / sizeof(ports[0]))] : (uint16_t)rnd(65536);
}

/* A port a rule may name (tc refuses port 0). */
static uint16_t nz_port(void)
{
	uint16_t p = any_port();
	return p ? p : 1;
}

/* One rule line of shape `shape` (0..15) at pref on dev. */
static void rule_line(char *buf, size_t size, unsigned shape, uint32_t pref, const char *dev)
{
	char m[256];
	unsigned a = rnd(2), b = rnd(3), c = rnd(4);
	uint16_t lo = any_port(), hi = any_port();
	if (lo > hi) {
		uint16_t t = lo;
		lo = hi, hi = t;
	}
	/* tc's rules: a port above 0, a range with MIN < MAX */
	lo = lo ? lo : 1;
	if (hi <= lo) {
		lo = lo == 65535 ? 65534 : lo;
		hi = (uint16_t)(lo + 1);
	}
	switch (shape) {
	case 0: snprintf(m, sizeof(m), "protocol ip flower dst_ip 10.%u.%u.0/24", a, b); break;
	case 1: snprintf(m, sizeof(m), "protocol ip flower ip_proto tcp dst_ip 10.%u.0.0/16", a); break;
	case 2: snprintf(m, sizeof(m), "protocol ip flower ip_proto tcp dst_port %u", nz_port()); break;
	case 3: snprintf(m, sizeof(m), "protocol ip flower ip_proto udp dst_port %u-%u", lo, hi); break;
	case 4: snprintf(m, sizeof(m), "protocol ip flower src_ip 10.%u.%u.%u dst_ip 10.0.0.0/8", a, b,
			 c); break;
	case 5: snprintf(m, sizeof(m), "protocol ipv6 flower dst_ip 2001:db8:%u::/64", a); break;
	case 6: snprintf(m, sizeof(m), "protocol ipv6 flower ip_proto udp src_port %u", nz_port()); break;
	case 7: snprintf(m, sizeof(m), "protocol arp flower"); break;
	case 8: snprintf(m, sizeof(m), "flower dst_mac 02:00:00:00:00:0%u", c); break;
	case 9: snprintf(m, sizeof(m), "flower src_mac 02:00:0%u:00:00:00/24", a); break;
	case 10: snprintf(m, sizeof(m), "protocol 802.1Q flower vlan_id %u", c); break;
	case 11: snprintf(m, sizeof(m), "flower enc_key_id %u", vnis[c]); break;
	case 12: snprintf(m, sizeof(m), "protocol ip flower enc_key_id %u dst_ip 10.%u.%u.0/24",
			  vnis[c], a, b); break;
	case 13: snprintf(m, sizeof(m), "protocol ip flower ip_tos 0x%x/0xfc ip_ttl %u", 4 * c,
			  a ? 64 : 1); break;
	case 14: snprintf(m, sizeof(m), "protocol ip flower ip_proto tcp tcp_flags 0x%x/0x%x "
			  "src_port %u-%u", rnd(0x20), rnd(0x20) | 0x2, lo, hi); break;
	default: snprintf(m, sizeof(m), "protocol ip flower ip_flags %s",
			  (const char *[]){ "frag", "nofirstfrag", "frag/firstfrag", "nofrag" }[c]);
		break;
	}
	snprintf(buf, size, "filter add dev %s ingress pref %u %s action drop", dev, pref, m);
}

static void random_key(struct flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->in_port = (uint16_t)(1 + rnd(2));
	memcpy(k->dl_dst, (uint8_t[]){ 2, 0, 0, 0, 0, (uint8_t)rnd(5) }, 6);
	memcpy(k->dl_src, (uint8_t[]){ 2, 0, (uint8_t)rnd(3), 0, 0, (uint8_t)rnd(9) }, 6);
	if (rnd(2)) {
		k->tun_family = rnd(4) ? 4 : 6;
		k->tun_vni = vnis[rnd(4)];
		k->tun_src[0] = 198, k->tun_dst[0] = 198;
		k->tun_dst_port = 4789;
	}
	unsigned l3 = rnd(8);
	if (l3 == 0) {
		k->dl_type = 0x0806;
		return;
	}
	if (l3 == 1) {
		k->n_vlans = 1;
		k->vlan_tpid[0] = 0x8100;
		k->vlan_tci[0] = (uint16_t)rnd(5);
	}
	bool v6 = l3 == 2;
	k->dl_type = v6 ? 0x86dd : 0x0800;
	k->nw_family = v6 ? 6 : 4;
	k->nw_proto = (uint8_t[]){ 6, 17, 1 }[rnd(3)];
	k->nw_tos = (uint8_t)rnd(20);
	k->nw_ttl = rnd(2) ? 64 : 1;
	k->nw_frag = (uint8_t[]){ 0, 0, FLOW_FRAG_ANY, FLOW_FRAG_ANY | FLOW_FRAG_LATER }[rnd(4)];
	if (v6) {
		memcpy(k->nw_src, (uint8_t[]){ 0x20, 0x01, 0x0d, 0xb8, 0, (uint8_t)rnd(2) }, 6);
		memcpy(k->nw_dst, (uint8_t[]){ 0x20, 0x01, 0x0d, 0xb8, 0, (uint8_t)rnd(2) }, 6);
	} else {
		memcpy(k->nw_src, (uint8_t[]){ 10, (uint8_t)rnd(2), (uint8_t)rnd(3), (uint8_t)rnd(4) }, 4);
		memcpy(k->nw_dst, (uint8_t[]){ 10, (uint8_t)rnd(2), (uint8_t)rnd(3), (uint8_t)rnd(4) }, 4);
	}
	if (!(k->nw_frag & FLOW_FRAG_LATER)) {
		k->tp_src = any_port();
		k->tp_dst = any_port();
		if (k->nw_proto == 6)
			k->tcp_flags = (uint16_t)rnd(0x20);
	}
}

/* The reference: the first rule in table order on the key's port, chain 0. */
static const struct flower_rule *linear_lookup(const struct flower_table *t,
					       const struct flow_key *k)
{
	for (size_t i = 0; i < flower_table_n_rules(t); i++) {
		const struct flower_rule *r = flower_table_rule(t, i);
		if (r->port == k->in_port && r->chain == 0 && cls_match_matches(&r->match, k))
			return r;
	}
	return NULL;
}

/* Whether ops[i] has the key of an earlier op, or of a rule of base, at
 * its dev and pref. */
static bool same_key_before(const struct flower_table *base, const struct ctl_flower *ops, size_t i)
{
	for (size_t j = 0; base && j < flower_table_n_rules(base); j++) {
		const struct flower_spec *r = &flower_table_rule(base, j)->spec;
		if (r->pref == ops[i].rule.pref && !strcmp(r->dev, ops[i].rule.dev) &&
		    !memcmp(&r->match, &ops[i].rule.match, sizeof(ops[i].rule.match)))
			return true;
	}
	for (size_t j = 0; j < i; j++)
		if (ops[j].rule.pref == ops[i].rule.pref && !strcmp(ops[j].rule.dev, ops[i].rule.dev) &&
		    !memcmp(&ops[j].rule.match, &ops[i].rule.match, sizeof(ops[i].rule.match)))
			return true;
	return false;
}

/* A batch of n random rules on top of base (NULL: none), at prefs
 * pref0 + 1..4000; shapes[] and prefs[] remember each pref's shape so a
 * reused pref keeps one protocol (tc's rule). */
static struct flower_table *random_batch(const struct flower_table *base, size_t n, uint32_t pref0)
{
	static struct ctl_flower ops[MAX_OPS];
	static unsigned shape_of_pref[8192];
	memset(shape_of_pref, 0xff, sizeof(shape_of_pref));
	for (size_t i = 0; i < n; i++) {
		unsigned shape = rnd(16);
		const char *dev = rnd(3) ? "vnet0" : "vnet1";
		uint32_t pref = pref0 + 1 + rnd(4000);
		if (i && rnd(4) == 0) { /* share an earlier rule's pref and shape */
			pref = ops[rnd((uint32_t)i)].rule.pref;
			shape = shape_of_pref[pref];
		} else {
			while (shape_of_pref[pref] != 0xffffffffu)
				pref = pref0 + 1 + rnd(4000);
		}
		shape_of_pref[pref] = shape;
		char line[512];
		rule_line(line, sizeof(line), shape, pref, dev);
		test_parse_rule(line, &ops[i]);
		if (same_key_before(base, ops, i)) { /* tc refuses it (EEXIST): draw again */
			i--;
			continue;
		}
	}
	struct flower_table *t = NULL;
	struct flower_error err;
	if (test_apply_cmds(base, ops, n, 0, &t, &err))
		fail_msg("random batch refused at %zu: %s", err.op, err.msg);
	return t;
}

static struct flower_table *random_table(size_t n)
{
	return random_batch(NULL, n, 0);
}

/* 1..4 adds on t: each can change one subtable (or make a new one), the
 * rest are t's own. */
static unsigned n_add_batches;

static struct flower_table *random_adds(struct flower_table *t)
{
	size_t n = 1 + rnd(4);
	struct flower_table *next = random_batch(t, n, 4000);
	uint32_t sub_old, sub_new, lin;
	flower_table_stats(t, &sub_old, &lin);
	flower_table_stats(next, &sub_new, &lin);
	uint32_t shared = flower_table_shared_subtables(next);
	/* up to n subtables rebuilt, and at most 4 chains' (2 ports x
	 * chain 0) new subtables of shapes t had not */
	if (shared + n < sub_old || shared > sub_old)
		fail_msg("%zu adds: %u of %u subtables shared, %u before", n, shared, sub_new, sub_old);
	n_add_batches++;
	flower_table_destroy(t);
	return next;
}

/* Places strictly increase: no two rules share (port, chain, pref, handle). */
static void check_order(const struct flower_table *t)
{
	for (size_t i = 1; i < flower_table_n_rules(t); i++) {
		const struct flower_rule *a = flower_table_rule(t, i - 1), *b = flower_table_rule(t, i);
		bool less = a->port != b->port ? a->port < b->port
			    : a->chain != b->chain ? a->chain < b->chain
			    : a->pref != b->pref  ? a->pref < b->pref
						  : a->handle < b->handle;
		if (!less)
			fail_msg("rules %zu and %zu out of order or at one place", i - 1, i);
	}
}

/* A batch of random dels (by pref, or pref and handle, of existing rules)
 * leaves exactly the rules a filter over the old table keeps, in order. */
static unsigned n_del_batches;

static struct flower_table *random_dels(struct flower_table *t)
{
	static struct ctl_flower ops[16];
	size_t n_rules = flower_table_n_rules(t), n = 1 + rnd(16);
	if (n_rules < 2 * n)
		return t;
	for (size_t i = 0; i < n; i++) {
		const struct flower_rule *r = flower_table_rule(t, rnd((uint32_t)n_rules));
		memset(&ops[i], 0, sizeof(ops[i]));
		ops[i].verb = CTL_FILTER_DEL;
		strcpy(ops[i].rule.dev, test_port_names[r->port]);
		ops[i].rule.given = FLOWER_SF_PREF | (rnd(2) ? FLOWER_SF_HANDLE : 0);
		ops[i].rule.pref = r->pref;
		ops[i].rule.handle = r->handle;
	}
	struct flower_table *next = NULL;
	struct flower_error err;
	int ret = test_apply_cmds(t, ops, n, 0, &next, &err);
	if (ret == -ENOENT) /* a del of what an earlier del of the batch took */
		return t;
	if (ret)
		fail_msg("dels refused: %s", err.msg);
	size_t j = 0;
	for (size_t i = 0; i < n_rules; i++) {
		const struct flower_rule *r = flower_table_rule(t, i);
		bool gone = false;
		for (size_t k = 0; k < n; k++)
			gone |= r->port == (uint16_t)(strcmp(ops[k].rule.dev, "vnet0") ? 2 : 1) &&
				r->pref == ops[k].rule.pref &&
				(!(ops[k].rule.given & FLOWER_SF_HANDLE) || r->handle == ops[k].rule.handle);
		if (!gone && flower_table_rule(next, j++) != r)
			fail_msg("after the dels, rule %zu is not the one expected", j - 1);
	}
	assert_int_equal(j, flower_table_n_rules(next));
	n_del_batches++;
	flower_table_destroy(t);
	return next;
}

/* cls_lookup_after() (continue: the best rule from a rank on) against a
 * linear scan, over a classifier of t's rules of one port's chain 0 with
 * flower's ranks: rules of an equal match at several prefs are the ones
 * the hash table keeps behind the first. */
static uint64_t n_after_checks, n_after_shadowed;

static void check_lookup_after(const struct flower_table *t, const struct flow_key *keys, int n_keys,
			       uint16_t port)
{
	static struct cls_rule rules[MAX_OPS * 2];
	size_t n = 0;
	for (size_t i = 0; i < flower_table_n_rules(t) && n < MAX_OPS * 2; i++) {
		const struct flower_rule *r = flower_table_rule(t, i);
		if (r->port == port && r->chain == 0)
			rules[n++] = (struct cls_rule){ &r->match, (uint64_t)r->pref << 32 | r->handle, r };
	}
	struct cls *cls;
	assert_int_equal(cls_build(rules, n, &cls), 0);
	static size_t hits[MAX_OPS * 2];
	for (int i = 0; i < n_keys && i < 500; i++) {
		if (keys[i].in_port != port)
			continue;
		size_t n_hits = 0; /* the rules the key matches, in rank order */
		for (size_t j = 0; j < n; j++)
			if (cls_match_matches(rules[j].match, &keys[i]))
				hits[n_hits++] = j;
		/* from past each matching rule (a continue from it), and from 0 */
		for (size_t h = 0; h <= n_hits; h++) {
			uint64_t min = h == n_hits ? 0 : ((rules[hits[h]].rank >> 32) + 1) << 32;
			const void *want = NULL;
			for (size_t w = 0; w < n_hits && !want; w++)
				if (rules[hits[w]].rank >= min)
					want = rules[hits[w]].data;
			const void *got = cls_lookup_after(cls, &keys[i], min, NULL);
			n_after_checks++;
			if (got != want)
				fail_msg("cls_lookup_after from rank %#llx: got %p, want %p",
					 (unsigned long long)min, got, want);
			if (want && h < n_hits && !((const struct flower_rule *)want)->match.extra &&
			    !memcmp(&((const struct flower_rule *)want)->match, rules[hits[h]].match,
				    sizeof(struct cls_match)))
				n_after_shadowed++; /* the same match as the rule continued from */
		}
	}
	cls_destroy(cls);
}

static void test_against_linear_scan(void **state)
{
	(void)state;
	uint64_t lookups = 0, matched = 0;
	for (uint32_t round = 0; round < ROUNDS; round++) {
		uint32_t seed = 0x1234567u + round * 7919u;
		rng_state = seed;
		size_t n = round < 4 ? 1 + round : 1 + rnd(MAX_OPS);
		struct flower_table *t = random_table(n);
		check_order(t);
		if (round % 2)
			t = random_dels(t);
		if (round % 3 == 2)
			t = random_adds(t);
		check_order(t);
		static struct flow_key keys[KEYS_PER_ROUND];
		for (int i = 0; i < KEYS_PER_ROUND; i++) {
			struct flow_key k;
			random_key(&k);
			keys[i] = k;
			struct flower_verdict v;
			flower_table_classify(t, &k, &v);
			const struct flower_rule *want = linear_lookup(t, &k);
			const struct flower_rule *got = v.n_rules ? v.rules[0] : NULL;
			lookups++;
			matched += want != NULL;
			if (got != want) {
				char text[512] = "-", text2[512] = "-";
				if (want)
					test_format_rule(&want->spec, text, sizeof(text));
				if (got)
					test_format_rule(&got->spec, text2, sizeof(text2));
				fail_msg("seed %#x, %zu rules, key %d: classifier gave \"%s\", linear "
					 "scan \"%s\"", seed, n, i, text2, text);
			}
		}
		if (round % 4 == 0)
			for (uint16_t port = 1; port <= 2; port++)
				check_lookup_after(t, keys, KEYS_PER_ROUND, port);
		flower_table_destroy(t);
	}
	print_message("%llu lookups after a rank, %llu of them found a rule of the same match "
		      "as an earlier one\n", (unsigned long long)n_after_checks,
		      (unsigned long long)n_after_shadowed);
	assert_true(n_after_shadowed > 0);
	/* the test is only worth something if keys do match rules */
	print_message("%llu lookups, %llu matched a rule; %u batches of dels, %u of adds\n",
		      (unsigned long long)lookups, (unsigned long long)matched, n_del_batches, n_add_batches);
	assert_true(n_add_batches >= ROUNDS / 4);
	assert_true(matched > lookups / 4);
	assert_true(n_del_batches >= ROUNDS / 8);
	assert_true(matched < lookups);
}

/* flower_table_hook_mask(): a key's verdict is the verdict of every key
 * equal to it under its hook's mask (megaflows).  For random tables and
 * key pairs (k, o): k's bits under the mask, o's elsewhere, the same port,
 * must classify as k does, rule for rule.  A mask missing a bit some rule
 * reads (a range's port, the fragment bits, a field of one shape) shows as
 * a different verdict for some pair. */
static void test_hook_mask_keeps_the_verdict(void **state)
{
	(void)state;
	uint64_t pairs = 0, differed = 0, matched = 0;
	for (uint32_t round = 0; round < ROUNDS; round++) {
		uint32_t seed = 0x7654321u + round * 104729u;
		rng_state = seed;
		struct flower_table *t = random_table(1 + rnd(MAX_OPS));
		struct flow_key mask[3];
		memset(mask, 0, sizeof(mask));
		for (uint16_t port = 1; port <= 2; port++)
			flower_table_hook_mask(t, port, &mask[port]);
		for (int i = 0; i < KEYS_PER_ROUND; i++) {
			struct flow_key k, o, m;
			random_key(&k);
			random_key(&o);
			const uint8_t *kb = (const uint8_t *)&k, *ob = (const uint8_t *)&o;
			const uint8_t *mb = (const uint8_t *)&mask[k.in_port];
			uint8_t *out = (uint8_t *)&m;
			memset(&m, 0, sizeof(m));
			for (size_t b = 0; b < FLOW_KEY_MATCH_SIZE; b++)
				out[b] = (uint8_t)((kb[b] & mb[b]) | (ob[b] & ~mb[b]));
			m.in_port = k.in_port;
			struct flower_verdict vk, vm;
			flower_table_classify(t, &k, &vk);
			flower_table_classify(t, &m, &vm);
			pairs++;
			differed += memcmp(&k, &m, FLOW_KEY_MATCH_SIZE) != 0;
			matched += vk.n_rules > 0;
			bool same = vk.end == vm.end && vk.n_rules == vm.n_rules;
			for (unsigned r = 0; same && r < vk.n_rules; r++)
				same = vk.rules[r] == vm.rules[r];
			if (!same) {
				char text[512] = "-", text2[512] = "-";
				if (vk.n_rules)
					test_format_rule(&vk.rules[0]->spec, text, sizeof(text));
				if (vm.n_rules)
					test_format_rule(&vm.rules[0]->spec, text2, sizeof(text2));
				fail_msg("seed %#x, key %d: \"%s\", the key under the mask of port %u \"%s\"", seed, i,
					 text, k.in_port, text2);
			}
		}
		flower_table_destroy(t);
	}
	print_message("%llu pairs, %llu of them differed outside the mask, %llu matched a rule\n",
		      (unsigned long long)pairs, (unsigned long long)differed, (unsigned long long)matched);
	/* worth something only if the masks leave bits out and keys match */
	assert_true(differed > pairs / 2);
	assert_true(matched > pairs / 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_linear_scan),
		cmocka_unit_test(test_hook_mask_keeps_the_verdict),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
