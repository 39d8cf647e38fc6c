/* flow_cache: exact-match cache of flower verdicts (see flow_cache.h). */
#include "switch/flow_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct fc_entry {
	uint64_t version;           /* 0 = empty */
	uint32_t hash;
	struct flow_key key;        /* match part compared */
	struct flower_verdict verdict;
};

struct flow_cache {
	uint32_t mask;              /* n entries - 1 */
	struct flow_cache_stats stats;
	struct fc_entry *entries;
};

typedef uint64_t fc_word __attribute__((may_alias, aligned(4)));
typedef uint32_t fc_word32 __attribute__((may_alias));

_Static_assert(FLOW_KEY_MATCH_SIZE % 8 == 4, "key hash: 64-bit words and one 32-bit tail");

/* Over the match part: 64-bit multiply-xorshift steps (a hash of a key we
 * parsed, not an adversary's choice of bucket: a collision costs a miss,
 * never a wrong verdict). */
static inline uint32_t key_hash(const struct flow_key *key)
{
	const fc_word *w = (const fc_word *)key;
	uint64_t h = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < FLOW_KEY_MATCH_SIZE / 8; i++) {
		h ^= w[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	h ^= ((const fc_word32 *)key)[FLOW_KEY_MATCH_SIZE / 4 - 1];
	h *= 0xc4ceb9fe1a85ec53ull;
	return (uint32_t)(h ^ (h >> 29));
}

int flow_cache_create(uint32_t n_entries, struct flow_cache **out)
{
	uint32_t n = 2;
	while (n < n_entries && n < (1u << 30))
		n <<= 1;
	struct flow_cache *fc = calloc(1, sizeof(*fc));
	if (fc)
		fc->entries = calloc(n, sizeof(*fc->entries));
	if (!fc || !fc->entries) {
		free(fc);
		return -ENOMEM;
	}
	fc->mask = n - 1;
	*out = fc;
	return 0;
}

void flow_cache_destroy(struct flow_cache *fc)
{
	if (!fc)
		return;
	free(fc->entries);
	free(fc);
}

void flow_cache_flush(struct flow_cache *fc)
{
	for (uint32_t i = 0; i <= fc->mask; i++)
		fc->entries[i].version = 0;
}

static inline bool entry_is(const struct fc_entry *e, uint64_t version, uint32_t hash,
			    const struct flow_key *key)
{
	return e->version == version && e->hash == hash &&
	       !memcmp(&e->key, key, FLOW_KEY_MATCH_SIZE);
}

const struct flower_verdict *flow_cache_classify(struct flow_cache *fc,
						 const struct flower_table *t,
						 const struct flow_key *key, bool *fast)
{
	uint64_t version = flower_table_version(t);
	uint32_t hash = key_hash(key);
	struct fc_entry *a = &fc->entries[hash & fc->mask];
	struct fc_entry *b = &fc->entries[(hash & fc->mask) ^ 1];
	struct fc_entry *hit = entry_is(a, version, hash, key) ? a
			       : entry_is(b, version, hash, key) ? b : NULL;
	if (hit) {
		fc->stats.hits++;
		*fast = true;
		return &hit->verdict;
	}
	fc->stats.misses++;
	*fast = false;
	struct fc_entry *e;
	if (a->version != version)
		e = a;
	else if (b->version != version)
		e = b;
	else {
		e = (hash >> 31) ? b : a;
		fc->stats.evictions++;
	}
	flower_table_classify(t, key, &e->verdict);
	e->version = version;
	e->hash = hash;
	memcpy(&e->key, key, FLOW_KEY_MATCH_SIZE);
	return &e->verdict;
}

void flow_cache_get_stats(const struct flow_cache *fc, struct flow_cache_stats *stats)
{
	*stats = fc->stats;
}
