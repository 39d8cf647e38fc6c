/* flower_index: hash indexes of a flower batch (see flower_index.h). */
#include "switch/flower_index.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

uint32_t flower_match_hash(const struct flower_match *m)
{
	return hash_murmur3_finish(hash_murmur3_bytes(0x666c6f77u, (const uint8_t *)m, sizeof(*m)));
}

struct fidx_key fidx_key_of(const struct flower_rule *r)
{
	return (struct fidx_key){ .port = r->port, .chain = r->chain, .pref = r->pref,
				  .handle = r->handle, .match = &r->spec.match, .key_hash = r->key_hash };
}

static uint32_t key_hash(enum fidx_kind kind, const struct fidx_key *k)
{
	uint64_t h = hash_mix64(((uint64_t)k->port << 32 | k->chain) ^ 0x9e3779b97f4a7c15ull);
	h = hash_mix64(h ^ k->pref);
	if (kind == FIDX_PLACE)
		h = hash_mix64(h ^ ((uint64_t)k->handle << 32 | 1));
	else if (kind == FIDX_KEY)
		h = hash_mix64(h ^ ((uint64_t)k->key_hash << 32 | 2));
	return (uint32_t)(h ^ (h >> 32));
}

static bool key_eq(enum fidx_kind kind, const struct flower_rule *r, const struct fidx_key *k)
{
	if (r->port != k->port || r->chain != k->chain || r->pref != k->pref)
		return false;
	if (kind == FIDX_PLACE)
		return r->handle == k->handle;
	if (kind == FIDX_KEY)
		return r->key_hash == k->key_hash && !memcmp(&r->spec.match, k->match, sizeof(*k->match));
	return true;
}

int fidx_init(struct fidx *ix, enum fidx_kind kind, size_t expect)
{
	size_t cap = 64;
	while (cap < 2 * expect)
		cap *= 2;
	*ix = (struct fidx){ .kind = kind, .mask = cap - 1 };
	ix->e = calloc(cap, sizeof(*ix->e));
	return ix->e ? 0 : -ENOMEM;
}

void fidx_free(struct fidx *ix)
{
	free(ix->e);
	ix->e = NULL;
	ix->n = 0;
}

/* The slot holding k, or the empty one where it would go. */
static size_t slot_of(const struct fidx *ix, const struct fidx_key *k, uint32_t h)
{
	size_t i = h & ix->mask;
	while (ix->e[i].r && (ix->e[i].h != h || !key_eq(ix->kind, ix->e[i].r, k)))
		i = (i + 1) & ix->mask;
	return i;
}

const struct fidx_entry *fidx_find(const struct fidx *ix, const struct fidx_key *k)
{
	size_t i = slot_of(ix, k, key_hash(ix->kind, k));
	return ix->e[i].r ? &ix->e[i] : NULL;
}

/* Twice the room; at most half full after. */
static int grow(struct fidx *ix)
{
	size_t cap = 2 * (ix->mask + 1);
	struct fidx_entry *e = calloc(cap, sizeof(*e)), *old = ix->e;
	if (!e)
		return -ENOMEM;
	size_t old_cap = ix->mask + 1;
	ix->e = e;
	ix->mask = cap - 1;
	for (size_t i = 0; i < old_cap; i++) {
		if (!old[i].r)
			continue;
		size_t j = old[i].h & ix->mask;
		while (e[j].r)
			j = (j + 1) & ix->mask;
		e[j] = old[i];
	}
	free(old);
	return 0;
}

int fidx_insert(struct fidx *ix, const struct flower_rule *r)
{
	if (2 * (ix->n + 1) > ix->mask + 1 && grow(ix))
		return -ENOMEM;
	struct fidx_key k = fidx_key_of(r);
	uint32_t h = key_hash(ix->kind, &k);
	size_t i = slot_of(ix, &k, h);
	if (ix->e[i].r) { /* FIDX_PREF: one more in the pref */
		ix->e[i].count++;
		return 0;
	}
	ix->e[i] = (struct fidx_entry){ .r = r, .h = h, .count = 1 };
	ix->n++;
	return 0;
}

void fidx_remove(struct fidx *ix, const struct flower_rule *r)
{
	struct fidx_key k = fidx_key_of(r);
	size_t i = slot_of(ix, &k, key_hash(ix->kind, &k));
	if (!ix->e[i].r || (ix->kind == FIDX_PREF && --ix->e[i].count))
		return;
	/* Backward shift: each later entry of the run moves into the hole
	 * unless its home lies cyclically in (hole, its slot]. */
	ix->n--;
	size_t hole = i;
	for (size_t j = (i + 1) & ix->mask; ix->e[j].r; j = (j + 1) & ix->mask) {
		size_t home = ix->e[j].h & ix->mask;
		bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
		if (stays)
			continue;
		ix->e[hole] = ix->e[j];
		hole = j;
	}
	ix->e[hole] = (struct fidx_entry){ 0 };
}
