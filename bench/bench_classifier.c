/* bench_classifier: flower lookups per second, classifier alone and behind
 * the flow cache, for 1, 100, 1,000 and 10,000 rules over 16 distinct
 * masks.
 *
 *   bench_classifier [-n lookups] [-N rules]
 *
 * -n: lookups per measurement, default 2,000,000.  -N: one size only,
 * `rules` (1000000 for the million rules, `make
 * bench-flower-scale`), and the hit-rule-last case at rules + 1; the table
 * is applied in batches of 100,000, as ten `vxctl -b` files would be.
 *
 * Last line: what the control thread pays to build a table of 10,001
 * rules, and to apply a batch of one add on top of it (median of 9).
 *
 * Rules: one port, chain 0, rule i at pref 1 + i / 16 and handle 1 + i % 16
 * (their order is i's), each of one of 16
 * shapes of match (addresses, prefixes, ports, MACs, TOS, VNI, 5-tuple), so
 * a table of 16 rules or more has exactly 16 subtables.  Traces: keys built
 * to match a random rule (the classifier may find a better one), over
 *   - "friendly": 64 flows, round robin: the cache holds them all;
 *   - "busting": 131,072 distinct flows, each seen once per pass: more
 *     flows than the cache (8,192 entries) holds, so nearly all miss.
 * Every key then runs through flower_table_classify() ("cache off") and
 * flow_cache_classify() ("cache on").  Last, "10000+1": 10,000 rules and a
 * catch-all below them that alone matches the keys (SCTP flows outside
 * every rule), the "hit rule is the lowest priority" case: every
 * subtable is probed ("last/frnd" 64 flows, "last/bust" 131,072).  Rates are per second of this
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID), as the other benchmarks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_flower.h"
#include "switch/flow_cache.h"
#include "switch/flower_table.h"

enum { BUSTING_FLOWS = 131072, FRIENDLY_FLOWS = 64, N_SHAPES = 16 };

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t rng = 2463534242u;

static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

static int resolve(void *aux, const char *name, uint16_t *id)
{
	(void)aux;
	*id = strcmp(name, "vnet0") ? 2 : 1;
	return 0;
}

/* Rule i's match: shape i % 16, values from i so rules are distinct. */
static void rule_line(char *buf, size_t size, uint32_t i)
{
	uint32_t a = (i >> 8) & 0xff, b = i & 0xff, p = 1 + i % 60000;
	char m[200];
	switch (i % N_SHAPES) {
	case 0: snprintf(m, sizeof(m), "dst_ip 10.%u.%u.1", a, b); break;
	case 1: snprintf(m, sizeof(m), "dst_ip 10.%u.%u.0/24", a, b); break;
	case 2: snprintf(m, sizeof(m), "src_ip 10.%u.%u.2", a, b); break;
	case 3: snprintf(m, sizeof(m), "src_ip 10.%u.%u.0/24 dst_ip 10.%u.0.0/24", a, b, b); break;
	case 4: snprintf(m, sizeof(m), "ip_proto tcp dst_port %u", p); break;
	case 5: snprintf(m, sizeof(m), "ip_proto udp src_port %u dst_port %u", p, p); break;
	case 6: snprintf(m, sizeof(m), "ip_proto tcp src_port %u", p); break;
	case 7: snprintf(m, sizeof(m), "ip_proto tcp dst_ip 10.%u.%u.3 dst_port %u", a, b, p); break;
	case 8: snprintf(m, sizeof(m), "ip_proto udp src_ip 10.%u.%u.4 dst_port %u", a, b, p); break;
	case 9: snprintf(m, sizeof(m), "dst_mac 02:00:00:00:%02x:%02x", a, b); break;
	case 10: snprintf(m, sizeof(m), "src_mac 02:00:00:01:%02x:%02x", a, b); break;
	case 11: snprintf(m, sizeof(m), "dst_mac 02:00:00:02:%02x:%02x src_ip 10.%u.0.0/16", a, b, b); break;
	case 12: snprintf(m, sizeof(m), "ip_tos 0x%x", i & 0xff); break;
	case 13: snprintf(m, sizeof(m), "enc_key_id %u", i); break;
	case 14: snprintf(m, sizeof(m), "enc_key_id %u dst_ip 10.%u.%u.0/24", i, a, b); break;
	default: snprintf(m, sizeof(m), "ip_proto tcp src_ip 10.%u.%u.5 dst_ip 10.%u.%u.6 src_port %u "
			  "dst_port %u", a, b, b, a, p, p); break;
	}
	/* tc's prefs are 16 bits: 16 rules (one of each shape) a pref */
	snprintf(buf, size, "filter add dev vnet0 ingress pref %u handle %u protocol ip flower %s action drop",
		 1 + i / N_SHAPES, 1 + i % N_SHAPES, m);
}

enum { MAKE_BATCH = 100000 };

/* Rules [from, to) of rule_line(), the catch-all as rule n (to == n + 1),
 * applied on *t as one batch. */
static void apply_rules(struct flower_table **t, uint32_t from, uint32_t to, uint32_t n)
{
	struct ctl_flower *ops = calloc(to - from, sizeof(*ops));
	for (uint32_t i = from; ops && i < to; i++) {
		char line[512];
		char *words[CTL_MAX_WORDS + 1];
		struct ctl_err err;
		if (i < n)
			rule_line(line, sizeof(line), i);
		else
			snprintf(line, sizeof(line), "filter add dev vnet0 ingress pref %u protocol ip "
				 "flower action pass", n / N_SHAPES + 2);
		int nw = ctl_split_words(line, words, CTL_MAX_WORDS + 1);
		if (ctl_flower_parse(nw, (const char *const *)words, &ops[i - from], &err)) {
			fprintf(stderr, "rule %u refused: %s\n", i, err.msg);
			exit(1);
		}
	}
	struct flower_table *next = NULL;
	struct flower_error err;
	struct flower_op *batch = ops ? calloc(to - from, sizeof(*batch)) : NULL;
	if (batch)
		ctl_flower_ops(ops, to - from, batch);
	if (!batch || flower_table_apply(*t, batch, to - from, resolve, NULL, 0, &next, &err)) {
		fprintf(stderr, "table of %u rules refused: %s\n", n, batch ? err.msg : "no memory");
		exit(1);
	}
	free(batch);
	free(ops);
	flower_table_destroy(*t);
	*t = next;
}

/* n rules of rule_line(), then (catch_all) `protocol ip` at the lowest
 * priority of all, in batches of MAKE_BATCH. */
static struct flower_table *make_table(uint32_t n, bool catch_all)
{
	struct flower_table *t = NULL;
	uint32_t total = n + catch_all;
	for (uint32_t from = 0; from < total || !t; from += MAKE_BATCH)
		apply_rules(&t, from, from + MAKE_BATCH < total ? from + MAKE_BATCH : total, n);
	return t;
}

/* A TCP/IPv4 flow on vnet0, tunnelled, with random addresses and ports,
 * then overwritten with rule `r`'s masked bits so that it matches r. */
static void make_key(const struct flower_table *t, struct flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->in_port = 1;
	k->tun_family = 4;
	k->tun_vni = next_rand() & 0xffffff;
	k->dl_type = 0x0800;
	k->nw_family = 4;
	k->nw_proto = 6;
	k->nw_ttl = 64;
	uint32_t s = next_rand(), d = next_rand();
	memcpy(k->nw_src, &s, 4);
	memcpy(k->nw_dst, &d, 4);
	k->tp_src = (uint16_t)next_rand();
	k->tp_dst = (uint16_t)next_rand();
	k->tcp_flags = 0x10;
	const struct flower_rule *r = flower_table_rule(t, next_rand() % flower_table_n_rules(t));
	uint8_t *kb = (uint8_t *)k;
	const uint8_t *mv = (const uint8_t *)&r->match.key, *mm = (const uint8_t *)&r->match.mask;
	for (size_t i = 0; i < FLOW_KEY_MATCH_SIZE; i++)
		kb[i] = (uint8_t)((kb[i] & ~mm[i]) | mv[i]);
}

/* An SCTP flow outside every rule's addresses, TOS and VNIs: only the
 * catch-all matches it, after every subtable was probed. */
static void make_lowest_key(struct flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->in_port = 1;
	memcpy(k->dl_dst, (uint8_t[]){ 2, 0xff, 0, 0, (uint8_t)next_rand(), (uint8_t)next_rand() }, 6);
	memcpy(k->dl_src, (uint8_t[]){ 2, 0xfe, 0, 0, (uint8_t)next_rand(), (uint8_t)next_rand() }, 6);
	k->dl_type = 0x0800;
	k->nw_family = 4;
	k->nw_proto = 132;
	k->nw_tos = 1;
	k->nw_ttl = 64;
	memcpy(k->nw_src, (uint8_t[]){ 192, 0, 2, (uint8_t)next_rand() }, 4);
	memcpy(k->nw_dst, (uint8_t[]){ 198, 51, 100, (uint8_t)next_rand() }, 4);
	k->tp_src = (uint16_t)next_rand();
	k->tp_dst = (uint16_t)next_rand();
}

struct result {
	double mlps, ns, hit_rate;
};

static struct result run(const struct flower_table *t, const struct flow_key *keys, uint32_t n_keys,
			 uint64_t n_ops, struct flow_cache *fc)
{
	uint64_t matched = 0, hits = 0;
	bool fast = false;
	uint64_t t0 = cpu_ns();
	for (uint64_t i = 0, j = 0; i < n_ops; i++, j = j + 1 == n_keys ? 0 : j + 1) {
		if (fc) {
			const struct flower_verdict *v = flow_cache_classify(fc, t, &keys[j], &fast);
			matched += v->n_rules;
			hits += fast;
		} else {
			struct flower_verdict v;
			flower_table_classify(t, &keys[j], &v);
			matched += v.n_rules;
		}
	}
	uint64_t ns = cpu_ns() - t0;
	if (matched != n_ops) {
		fprintf(stderr, "expected every key to match a rule: %llu of %llu\n",
			(unsigned long long)matched, (unsigned long long)n_ops);
		exit(1);
	}
	return (struct result){ .mlps = ns ? (double)n_ops * 1e3 / (double)ns : 0,
				.ns = (double)ns / (double)n_ops,
				.hit_rate = fc ? 100.0 * (double)hits / (double)n_ops : 0 };
}

/* The control thread's side: a whole table from nothing (parse included),
 * and one batch of one add on top of it (copy, sort, classifiers built next
 * to the old ones), the median of 9, with how many subtables it shared. */
static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void print_batch_cost(const struct flower_table *t, uint64_t build_ns)
{
	char line[128];
	snprintf(line, sizeof(line), "filter add dev vnet0 ingress pref 65535 protocol ip flower action drop");
	char *words[CTL_MAX_WORDS + 1];
	struct ctl_flower f;
	int nw = ctl_split_words(line, words, CTL_MAX_WORDS + 1);
	if (ctl_flower_parse(nw, (const char *const *)words, &f, NULL))
		exit(1);
	struct flower_op op;
	ctl_flower_ops(&f, 1, &op);
	uint64_t add_ns[9];
	for (int i = 0; i < 9; i++) {
		struct flower_table *next;
		struct flower_error err;
		uint64_t t0 = cpu_ns();
		if (flower_table_apply(t, &op, 1, resolve, NULL, 0, &next, &err))
			exit(1);
		add_ns[i] = cpu_ns() - t0;
		flower_table_destroy(next);
	}
	qsort(add_ns, 9, sizeof(add_ns[0]), by_u64);
	uint32_t n_sub, n_lin;
	flower_table_stats(t, &n_sub, &n_lin);
	printf("table of %zu rules (%u subtables) built in %.1f ms; a batch of 1 add on it: %.2f ms "
	       "(median of 9, min %.2f)\n",
	       flower_table_n_rules(t), n_sub, (double)build_ns / 1e6, (double)add_ns[4] / 1e6,
	       (double)add_ns[0] / 1e6);
}

/* Both cache modes over keys[0..n_keys-1], one line each. */
static void run_both(const struct flower_table *t, const struct flow_key *keys, uint32_t n_keys,
		     uint64_t n_ops, const char *rules, const char *trace)
{
	uint32_t n_sub, n_lin;
	flower_table_stats(t, &n_sub, &n_lin);
	for (int cached = 0; cached < 2; cached++) {
		struct flow_cache *fc = NULL;
		if (cached && flow_cache_create(FLOW_CACHE_DEFAULT_ENTRIES, &fc))
			exit(1);
		struct result r = run(t, keys, n_keys, n_ops, fc);
		printf("%-7s %-6u %-9s %-10s %10.2f %9.1f %9.1f\n", rules, n_sub, trace,
		       cached ? "on" : "off", r.mlps, r.ns, r.hit_rate);
		flow_cache_destroy(fc);
	}
}

int main(int argc, char **argv)
{
	uint64_t n_ops = 2000000;
	uint32_t sizes[4] = { 1, 100, 1000, 10000 }, n_sizes = 4, last = 10000;
	for (int i = 1; i < argc; i += 2) {
		if (i + 1 < argc && !strcmp(argv[i], "-n")) {
			n_ops = strtoull(argv[i + 1], NULL, 10);
		} else if (i + 1 < argc && !strcmp(argv[i], "-N")) {
			sizes[0] = last = (uint32_t)strtoul(argv[i + 1], NULL, 10);
			n_sizes = 1;
		} else {
			fprintf(stderr, "usage: %s [-n lookups] [-N rules]\n", argv[0]);
			return 2;
		}
	}
	struct flow_key *keys = malloc(BUSTING_FLOWS * sizeof(*keys));
	if (!keys)
		return 1;
	printf("%-7s %-6s %-9s %-10s %10s %9s %9s\n", "rules", "masks", "trace", "cache",
	       "M lookup/s", "ns/lookup", "hit %");
	for (size_t s = 0; s < n_sizes; s++) {
		struct flower_table *t = make_table(sizes[s], false);
		char rules[16];
		snprintf(rules, sizeof(rules), "%u", sizes[s]);
		for (int busting = 0; busting < 2; busting++) {
			uint32_t n_keys = busting ? BUSTING_FLOWS : FRIENDLY_FLOWS;
			for (uint32_t i = 0; i < n_keys; i++)
				make_key(t, &keys[i]);
			run_both(t, keys, n_keys, n_ops, rules, busting ? "busting" : "friendly");
		}
		flower_table_destroy(t);
	}
	/* The hit rule last: `last` rules and a catch-all below them. */
	uint64_t t0 = cpu_ns();
	struct flower_table *t = make_table(last, true);
	uint64_t build_ns = cpu_ns() - t0;
	char last_name[16];
	snprintf(last_name, sizeof(last_name), "%u+1", last);
	for (int busting = 0; busting < 2; busting++) {
		uint32_t n_keys = busting ? BUSTING_FLOWS : FRIENDLY_FLOWS;
		for (uint32_t i = 0; i < n_keys; i++)
			make_lowest_key(&keys[i]);
		run_both(t, keys, n_keys, n_ops, last_name, busting ? "last/bust" : "last/frnd");
	}
	print_batch_cost(t, build_ns);
	flower_table_destroy(t);
	free(keys);
	return 0;
}
