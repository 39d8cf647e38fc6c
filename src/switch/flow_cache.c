/* flow_cache: exact-match cache of flower verdicts (see flow_cache.h). */
#include "switch/flow_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

struct fc_entry {
	uint64_t version;           /* 0 = empty */
	uint16_t hook;              /* where it was classified (flower_hook.h) */
	struct flow_key key;        /* match part compared */
	struct flower_verdict verdict;
};

/* tags[i] summarises entries[i]: low 32 bits of its version, its hash.
 * A lookup reads the two tags (8 KiB per 1024 entries: they stay in cache)
 * and touches an entry only when its tag matches, so a miss costs no read
 * of the large entries.  The entry's own version and key decide a hit. */
struct flow_cache {
	uint32_t mask;              /* n entries - 1 */
	struct flow_cache_stats stats;
	uint32_t contended;         /* misses that found both ways live */
	uint64_t *tags;
	struct fc_entry *entries;
	struct flower_verdict scratch; /* a verdict not cached */
};

static inline uint64_t tag_of(uint64_t version, uint32_t hash)
{
	return (uint64_t)(uint32_t)version << 32 | hash;
}

typedef uint64_t fc_word __attribute__((may_alias, aligned(4)));
typedef uint32_t fc_word32 __attribute__((may_alias));

_Static_assert(FLOW_KEY_MATCH_SIZE % 8 == 4, "key hash: 64-bit words and one 32-bit tail");

/* Over the match part: 64-bit multiply-xorshift steps (a hash of a key we
 * parsed, not an adversary's choice of bucket: a collision costs a miss,
 * never a wrong verdict). */
static inline uint32_t key_hash(const struct flow_key *key)
{
	uint32_t tail;
	memcpy(&tail, (const uint8_t *)key + FLOW_KEY_MATCH_SIZE - 4, 4);
	return hash_words64(0x9e3779b97f4a7c15ull, key, FLOW_KEY_MATCH_SIZE / 8, tail);
}

int flow_cache_create(uint32_t n_entries, struct flow_cache **out)
{
	uint32_t n = 2;
	while (n < n_entries && n < (1u << 30))
		n <<= 1;
	struct flow_cache *fc = calloc(1, sizeof(*fc));
	if (fc) {
		fc->entries = calloc(n, sizeof(*fc->entries));
		fc->tags = calloc(n, sizeof(*fc->tags));
	}
	if (!fc || !fc->entries || !fc->tags) {
		if (fc)
			free(fc->entries);
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
	free(fc->tags);
	free(fc);
}

void flow_cache_flush(struct flow_cache *fc)
{
	for (uint32_t i = 0; i <= fc->mask; i++) {
		fc->entries[i].version = 0;
		fc->tags[i] = 0;
	}
}

static inline bool entry_is(const struct fc_entry *e, uint64_t version, uint16_t hook,
			    const struct flow_key *key)
{
	return e->version == version && e->hook == hook && !memcmp(&e->key, key, FLOW_KEY_MATCH_SIZE);
}

const struct flower_verdict *flow_cache_classify(struct flow_cache *fc,
						 const struct flower_table *t,
						 const struct flow_key *key, bool *fast)
{
	return flow_cache_classify_hook(fc, t, key->in_port, key, fast);
}

const struct flower_verdict *flow_cache_classify_hook(struct flow_cache *fc, const struct flower_table *t,
						      uint16_t hook, const struct flow_key *key, bool *fast)
{
	uint64_t version = flower_table_version(t);
	/* An ingress hook is the key's in_port: mixing it changes nothing
	 * there; an egress one spreads the copies of a flood. */
	uint32_t hash = key_hash(key) ^ (uint32_t)(hook ^ key->in_port) * 0x9e3779b1u;
	uint64_t tag = tag_of(version, hash);
	uint32_t ia = hash & fc->mask, ib = ia ^ 1;
	uint32_t hit = fc->tags[ia] == tag && entry_is(&fc->entries[ia], version, hook, key) ? ia + 1
		       : fc->tags[ib] == tag && entry_is(&fc->entries[ib], version, hook, key) ? ib + 1
											    : 0;
	if (hit) {
		fc->stats.hits++;
		*fast = true;
		return &fc->entries[hit - 1].verdict;
	}
	fc->stats.misses++;
	*fast = false;
	uint32_t live = (uint32_t)version;
	uint32_t i;
	if ((uint32_t)(fc->tags[ia] >> 32) != live)
		i = ia;
	else if ((uint32_t)(fc->tags[ib] >> 32) != live)
		i = ib;
	else if (++fc->contended % FLOW_CACHE_EVICT_EVERY) {
		flower_table_classify_hook(t, hook, key, &fc->scratch);
		return &fc->scratch;
	} else {
		i = (hash >> 31) ? ib : ia;
		fc->stats.evictions++;
	}
	struct fc_entry *e = &fc->entries[i];
	flower_table_classify_hook(t, hook, key, &e->verdict);
	e->version = version;
	e->hook = hook;
	memcpy(&e->key, key, FLOW_KEY_MATCH_SIZE);
	fc->tags[i] = tag;
	return &e->verdict;
}

void flow_cache_get_stats(const struct flow_cache *fc, struct flow_cache_stats *stats)
{
	*stats = fc->stats;
}
