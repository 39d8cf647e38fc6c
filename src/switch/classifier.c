/* classifier: tuple-space search (see classifier.h for the design). */
#include "switch/classifier.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

enum { CLS_WORDS = FLOW_KEY_MATCH_SIZE / 4, CLS_MAX_RULES = 1 << 24 };

typedef uint32_t cls_word __attribute__((may_alias));

/* One distinct mask.  Entry e's masked words are values[e * n_words ...].
 * Shared by every classifier built from one that had it (refs). */
struct subtable {
	uint32_t refs;              /* classifiers holding it: control thread */
	uint32_t n_words;
	uint64_t best_rank;
	uint8_t idx[CLS_WORDS];     /* words of the key the mask touches */
	uint32_t mask[CLS_WORDS];   /* mask[i] applies to word idx[i] */
	uint32_t n_entries;
	uint32_t bucket_mask;       /* n buckets - 1 */
	uint32_t *buckets;          /* entry + 1; 0 = empty */
	uint32_t *hashes;
	uint32_t *values;
	uint64_t *ranks;
	const void **data;
	/* Rules of the same masked value, by rank: entry e's next is
	 * next[e] - 1 (0: none).  Only the first is in the buckets; the others
	 * are found by cls_lookup_after() (a `continue` past the first). */
	uint32_t *next;
	/* Every rule given with this mask, shadowed ones too, by rank: what
	 * cls_build_from() compares to share the subtable. */
	uint32_t n_members;
	uint64_t *m_ranks;
	const void **m_data;
};

struct linear_entry {
	struct cls_match match;
	uint64_t rank;
	const void *data;
};

struct cls {
	uint32_t n_rules;
	uint32_t n_subtables;
	uint32_t n_linear;
	uint32_t n_shared;
	struct subtable **subtables; /* by best_rank */
	struct linear_entry *linear; /* by rank */
};

static inline const cls_word *words_of(const struct flow_key *k)
{
	return (const cls_word *)k;
}

/* ---- the reference ----------------------------------------------------- */

bool cls_match_matches(const struct cls_match *m, const struct flow_key *key)
{
	const cls_word *k = words_of(key), *v = words_of(&m->key), *mk = words_of(&m->mask);
	for (int i = 0; i < CLS_WORDS; i++)
		if ((k[i] & mk[i]) != v[i])
			return false;
	if ((m->extra & CLS_SRC_RANGE) && (key->tp_src < m->src_min || key->tp_src > m->src_max))
		return false;
	if ((m->extra & CLS_DST_RANGE) && (key->tp_dst < m->dst_min || key->tp_dst > m->dst_max))
		return false;
	if ((m->extra & CLS_NOT_FIRSTFRAG) &&
	    (key->nw_frag & (FLOW_FRAG_ANY | FLOW_FRAG_LATER)) == FLOW_FRAG_ANY)
		return false;
	return true;
}

void cls_match_widen(const struct cls_match *m, struct flow_key *mask)
{
	cls_word *w = (cls_word *)mask;
	const cls_word *mk = words_of(&m->mask);
	for (int i = 0; i < CLS_WORDS; i++)
		w[i] |= mk[i];
	if (m->extra & CLS_SRC_RANGE)
		mask->tp_src = 0xffff;
	if (m->extra & CLS_DST_RANGE)
		mask->tp_dst = 0xffff;
	if (m->extra & CLS_NOT_FIRSTFRAG)
		mask->nw_frag |= FLOW_FRAG_ANY | FLOW_FRAG_LATER;
}

/* ---- hashing: murmur3 (util/hash.h), seed 0 ------------------------------ */

/* The key's words under st's mask into out[], and their hash. */
static inline uint32_t mask_key(const struct subtable *st, const cls_word *k, uint32_t *out)
{
	uint32_t h = 0;
	for (uint32_t i = 0; i < st->n_words; i++) {
		out[i] = k[st->idx[i]] & st->mask[i];
		h = hash_murmur3_add(h, out[i]);
	}
	return hash_murmur3_finish(h);
}

/* ---- build --------------------------------------------------------------- */

static int by_rank(const void *a, const void *b)
{
	uint64_t ra = ((const struct cls_rule *)a)->rank, rb = ((const struct cls_rule *)b)->rank;
	return ra < rb ? -1 : ra > rb;
}

static void subtable_init_mask(struct subtable *st, const struct cls_match *m)
{
	const cls_word *mk = words_of(&m->mask);
	st->n_words = 0;
	for (int i = 0; i < CLS_WORDS; i++) {
		if (!mk[i])
			continue;
		st->idx[st->n_words] = (uint8_t)i;
		st->mask[st->n_words++] = mk[i];
	}
}

static bool subtable_has_mask(const struct subtable *st, const struct cls_match *m)
{
	const cls_word *mk = words_of(&m->mask);
	uint32_t j = 0;
	for (int i = 0; i < CLS_WORDS; i++) {
		if (!mk[i])
			continue;
		if (j == st->n_words || st->idx[j] != i || st->mask[j] != mk[i])
			return false;
		j++;
	}
	return j == st->n_words;
}

static bool same_mask(const struct subtable *a, const struct subtable *b)
{
	return a->n_words == b->n_words && !memcmp(a->idx, b->idx, a->n_words) &&
	       !memcmp(a->mask, b->mask, a->n_words * sizeof(a->mask[0]));
}

static void subtable_unref(struct subtable *st)
{
	if (!st || --st->refs)
		return;
	free(st->buckets);
	free(st->hashes);
	free(st->values);
	free(st->ranks);
	free(st->data);
	free(st->next);
	free(st->m_ranks);
	free(st->m_data);
	free(st);
}

static int subtable_alloc(struct subtable *st, uint32_t n)
{
	uint32_t nb = 4;
	while (nb < 2 * n)
		nb <<= 1;
	st->bucket_mask = nb - 1;
	st->buckets = calloc(nb, sizeof(*st->buckets));
	st->hashes = malloc(n * sizeof(*st->hashes));
	st->values = malloc((size_t)n * (st->n_words ? st->n_words : 1) * sizeof(*st->values));
	st->ranks = malloc(n * sizeof(*st->ranks));
	st->data = malloc(n * sizeof(*st->data));
	st->next = calloc(n, sizeof(*st->next));
	st->m_ranks = malloc(n * sizeof(*st->m_ranks));
	st->m_data = malloc(n * sizeof(*st->m_data));
	if (!st->buckets || !st->hashes || !st->values || !st->ranks || !st->data || !st->next ||
	    !st->m_ranks || !st->m_data)
		return -ENOMEM;
	return 0;
}

/* Inserts r; when an entry of better rank has the same masked value (rules
 * come in rank order, so the one already there is better), r goes at the
 * end of its `next` list instead of into the buckets. */
static void subtable_insert(struct subtable *st, const struct cls_rule *r)
{
	uint32_t vals[CLS_WORDS];
	st->m_ranks[st->n_members] = r->rank;
	st->m_data[st->n_members++] = r->data;
	uint32_t h = mask_key(st, words_of(&r->match->key), vals);
	uint32_t b = h & st->bucket_mask, first = 0;
	for (; st->buckets[b]; b = (b + 1) & st->bucket_mask) {
		uint32_t e = st->buckets[b] - 1;
		if (st->hashes[e] == h &&
		    !memcmp(&st->values[e * st->n_words], vals, st->n_words * sizeof(uint32_t))) {
			first = e + 1; /* shadowed */
			break;
		}
	}
	uint32_t e = st->n_entries++;
	st->hashes[e] = h;
	memcpy(&st->values[e * st->n_words], vals, st->n_words * sizeof(uint32_t));
	st->ranks[e] = r->rank;
	st->data[e] = r->data;
	st->next[e] = 0;
	if (!first) {
		st->buckets[b] = e + 1;
		return;
	}
	uint32_t last = first - 1;
	while (st->next[last])
		last = st->next[last] - 1;
	st->next[last] = e + 1;
}

/* The rules of one mask, while building: `shell` holds the mask and best
 * rank, members[0..n-1] index the rank-sorted rules; hash is the mask's,
 * so that finding a rule's group compares one word per group first. */
struct group {
	struct subtable shell;
	const uint32_t *members;
	uint32_t n;
	uint32_t hash;
};

static uint32_t mask_hash(const struct cls_match *m)
{
	const cls_word *mk = words_of(&m->mask);
	uint32_t h = 0;
	for (int i = 0; i < CLS_WORDS; i++)
		h = hash_murmur3_add(h, mk[i]);
	return hash_murmur3_finish(h);
}

/* old's subtable of g's mask if it holds exactly g's rules, with one more
 * reference; else NULL. */
static struct subtable *subtable_share(const struct cls *old, const struct group *g,
				       const struct cls_rule *sorted)
{
	for (uint32_t s = 0; old && s < old->n_subtables; s++) {
		struct subtable *st = old->subtables[s];
		if (!same_mask(st, &g->shell))
			continue;
		if (st->n_members != g->n)
			return NULL;
		for (uint32_t j = 0; j < g->n; j++)
			if (st->m_ranks[j] != sorted[g->members[j]].rank || st->m_data[j] != sorted[g->members[j]].data)
				return NULL;
		st->refs++;
		return st;
	}
	return NULL;
}

static struct subtable *subtable_new(const struct group *g, const struct cls_rule *sorted)
{
	struct subtable *st = malloc(sizeof(*st));
	if (!st)
		return NULL;
	*st = g->shell;
	st->refs = 1;
	if (subtable_alloc(st, g->n)) {
		subtable_unref(st);
		return NULL;
	}
	for (uint32_t j = 0; j < g->n; j++)
		subtable_insert(st, &sorted[g->members[j]]);
	return st;
}

/* Groups the hashed rules by mask, in the order of each mask's best rule
 * (sorted is by rank); sub_of[i] = group of rule i, UINT32_MAX: linear.
 * *groups grows as masks are found.  The number of groups, or -ENOMEM. */
static long group_rules(struct cls *cls, struct group **groups, const struct cls_rule *sorted, size_t n,
			uint32_t *sub_of)
{
	uint32_t n_groups = 0, cap = 0;
	for (size_t i = 0; i < n; i++) {
		const struct cls_match *m = sorted[i].match;
		if (m->extra) {
			sub_of[i] = UINT32_MAX;
			cls->n_linear++;
			continue;
		}
		uint32_t h = mask_hash(m), s = 0;
		while (s < n_groups && ((*groups)[s].hash != h || !subtable_has_mask(&(*groups)[s].shell, m)))
			s++;
		if (s == n_groups) {
			if (n_groups == cap) {
				cap = cap ? 2 * cap : 16;
				struct group *g = realloc(*groups, cap * sizeof(*g));
				if (!g)
					return -ENOMEM;
				*groups = g;
			}
			struct group *g = &(*groups)[n_groups++];
			memset(g, 0, sizeof(*g));
			subtable_init_mask(&g->shell, m);
			g->shell.best_rank = sorted[i].rank;
			g->hash = h;
		}
		sub_of[i] = s;
		(*groups)[s].n++;
	}
	return n_groups;
}

/* Rules come in rank order from flower_table: sort only when they do not. */
static void sort_by_rank(struct cls_rule *r, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (r[i].rank < r[i - 1].rank) {
			qsort(r, n, sizeof(*r), by_rank);
			return;
		}
}

/* Each group's subtable, shared from old or built; then the linear stage. */
static int fill(struct cls *cls, const struct cls *old, struct group *groups, const struct cls_rule *sorted,
		size_t n, const uint32_t *sub_of, uint32_t *members)
{
	uint32_t at = 0;
	for (uint32_t s = 0; s < cls->n_subtables; s++) {
		groups[s].members = members + at;
		at += groups[s].n;
		groups[s].n = 0;
	}
	for (size_t i = 0; i < n; i++)
		if (sub_of[i] != UINT32_MAX)
			members[groups[sub_of[i]].members - members + groups[sub_of[i]].n++] = (uint32_t)i;
	for (uint32_t s = 0; s < cls->n_subtables; s++) {
		struct subtable *st = subtable_share(old, &groups[s], sorted);
		cls->n_shared += st != NULL;
		if (!st && !(st = subtable_new(&groups[s], sorted)))
			return -ENOMEM;
		cls->subtables[s] = st;
	}
	if (cls->n_linear && !(cls->linear = calloc(cls->n_linear, sizeof(*cls->linear))))
		return -ENOMEM;
	uint32_t nl = 0;
	for (size_t i = 0; i < n; i++) {
		if (sub_of[i] != UINT32_MAX)
			continue;
		struct linear_entry *le = &cls->linear[nl++];
		le->match = *sorted[i].match;
		le->rank = sorted[i].rank;
		le->data = sorted[i].data;
	}
	return 0;
}

int cls_build_from(const struct cls *old, const struct cls_rule *rules, size_t n, struct cls **out)
{
	*out = NULL;
	if (n > CLS_MAX_RULES)
		return -EINVAL;
	size_t m = n ? n : 1;
	struct cls *cls = calloc(1, sizeof(*cls));
	struct cls_rule *sorted = malloc(m * sizeof(*sorted));
	uint32_t *sub_of = malloc(m * sizeof(*sub_of)), *members = malloc(m * sizeof(*members));
	struct group *groups = NULL;
	int ret = -ENOMEM;
	if (!cls || !sorted || !sub_of || !members)
		goto out;
	memcpy(sorted, rules, n * sizeof(*sorted));
	sort_by_rank(sorted, n);
	ret = -EINVAL;
	for (size_t i = 1; i < n; i++)
		if (sorted[i].rank == sorted[i - 1].rank)
			goto out;
	cls->n_rules = (uint32_t)n;
	long n_groups = group_rules(cls, &groups, sorted, n, sub_of);
	ret = -ENOMEM;
	if (n_groups < 0)
		goto out;
	cls->n_subtables = (uint32_t)n_groups;
	if (!(cls->subtables = calloc(cls->n_subtables ? cls->n_subtables : 1, sizeof(*cls->subtables))))
		goto out;
	ret = fill(cls, old, groups, sorted, n, sub_of, members);
out:
	free(sorted);
	free(sub_of);
	free(members);
	free(groups);
	if (ret && cls)
		cls_destroy(cls);
	else if (!ret)
		*out = cls;
	return ret;
}

int cls_build(const struct cls_rule *rules, size_t n, struct cls **out)
{
	return cls_build_from(NULL, rules, n, out);
}

void cls_destroy(struct cls *cls)
{
	if (!cls)
		return;
	for (uint32_t s = 0; cls->subtables && s < cls->n_subtables; s++)
		subtable_unref(cls->subtables[s]);
	free(cls->subtables);
	free(cls->linear);
	free(cls);
}

/* ---- lookup ---------------------------------------------------------------- */

static inline bool words_equal(const uint32_t *a, const uint32_t *b, uint32_t n)
{
	uint32_t diff = 0;
	for (uint32_t i = 0; i < n; i++)
		diff |= a[i] ^ b[i];
	return !diff;
}

/* The first entry of rank >= min with the key's masked value. */
static inline void subtable_probe(const struct subtable *st, const cls_word *k, uint64_t min,
				  uint64_t *best, const void **best_data)
{
	uint32_t vals[CLS_WORDS];
	uint32_t h = mask_key(st, k, vals);
	for (uint32_t b = h & st->bucket_mask; st->buckets[b]; b = (b + 1) & st->bucket_mask) {
		uint32_t e = st->buckets[b] - 1;
		if (st->hashes[e] != h || !words_equal(&st->values[e * st->n_words], vals, st->n_words))
			continue;
		while (st->ranks[e] < min && st->next[e])
			e = st->next[e] - 1;
		if (st->ranks[e] >= min && st->ranks[e] < *best) {
			*best = st->ranks[e];
			*best_data = st->data[e];
		}
		return;
	}
}

static void linear_scan(const struct cls *cls, const struct flow_key *key, uint64_t min,
			uint64_t *best, const void **best_data)
{
	for (uint32_t i = 0; i < cls->n_linear && cls->linear[i].rank < *best; i++) {
		if (cls->linear[i].rank < min)
			continue;
		if (cls_match_matches(&cls->linear[i].match, key)) {
			*best = cls->linear[i].rank;
			*best_data = cls->linear[i].data;
			return;
		}
	}
}

const void *cls_lookup_after(const struct cls *cls, const struct flow_key *key, uint64_t min,
			     uint64_t *rank)
{
	uint64_t best = UINT64_MAX;
	const void *best_data = NULL;
	const cls_word *k = words_of(key);
	bool linear_done = cls->n_linear == 0;
	for (uint32_t s = 0; s < cls->n_subtables; s++) {
		const struct subtable *st = cls->subtables[s];
		if (!linear_done && cls->linear[0].rank < st->best_rank) {
			linear_scan(cls, key, min, &best, &best_data);
			linear_done = true;
		}
		if (best < st->best_rank)
			break; /* no later subtable holds a better rule */
		subtable_probe(st, k, min, &best, &best_data);
	}
	if (!linear_done)
		linear_scan(cls, key, min, &best, &best_data);
	if (rank)
		*rank = best;
	return best_data;
}

const void *cls_lookup(const struct cls *cls, const struct flow_key *key, uint64_t *rank)
{
	return cls_lookup_after(cls, key, 0, rank);
}

void cls_get_stats(const struct cls *cls, struct cls_stats *stats)
{
	stats->n_rules = cls->n_rules;
	stats->n_subtables = cls->n_subtables;
	stats->n_linear = cls->n_linear;
	stats->n_shared = cls->n_shared;
}
