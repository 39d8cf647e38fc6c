/* flower_index: the hash indexes a flower batch checks its commands
 * against (switch/flower_table.c), so that a command costs O(1) whatever
 * the number of rules, not a scan.
 *
 * Three kinds, each an open-addressing hash table of rule pointers
 * (linear probing, deletion by backward shift, no tombstones):
 *   FIDX_PLACE  (port, chain, pref, handle) -> the rule there: a taken
 *               handle, del/replace/change by handle;
 *   FIDX_KEY    (port, chain, pref, match) -> the rule with that key:
 *               tc's "one filter per key in a pref" (cls_flower's
 *               fl_ht_insert_unique()); the match is compared as bytes,
 *               which the parser keeps canonical (masked, unused zero);
 *   FIDX_PREF   (port, chain, pref) -> one of its rules, and how many it
 *               holds: tc's "one protocol per pref".
 * A batch builds them from the old table's rules (O(rules) once per batch,
 * as the classifier rebuild is) and keeps them in step with every add and
 * del of the batch.  A rule's key hash is computed once when the rule is
 * made (flower_rule.key_hash), so rebuilding hashes no match again.
 *
 * The indexes hold pointers and never own the rules.  Control thread only
 * (the batch's); workers never see them. */
#ifndef VX_SWITCH_FLOWER_INDEX_H
#define VX_SWITCH_FLOWER_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "switch/flower_rule.h"

enum fidx_kind { FIDX_PLACE, FIDX_KEY, FIDX_PREF };

struct fidx_entry {
	const struct flower_rule *r; /* NULL: empty */
	uint32_t h;                  /* the entry's hash */
	uint32_t count;              /* FIDX_PREF: rules in the pref */
};

struct fidx {
	enum fidx_kind kind;
	size_t mask;                 /* capacity - 1 (a power of 2) */
	size_t n;
	struct fidx_entry *e;
};

/* What is looked up: the fields of the kind's key (match: FIDX_KEY only,
 * with key_hash its flower_match_hash()). */
struct fidx_key {
	uint16_t port;
	uint32_t chain, pref, handle;
	const struct flower_match *match;
	uint32_t key_hash;
};

/* The key of rule r (its spec.match and key_hash). */
struct fidx_key fidx_key_of(const struct flower_rule *r);
/* The hash a rule's key_hash must hold: of its match. */
uint32_t flower_match_hash(const struct flower_match *m);

/* Room for `expect` entries without growing.  0 or -ENOMEM. */
int fidx_init(struct fidx *ix, enum fidx_kind kind, size_t expect);
void fidx_free(struct fidx *ix);
/* The entry of k, or NULL. */
const struct fidx_entry *fidx_find(const struct fidx *ix, const struct fidx_key *k);
/* Adds r (PLACE, KEY: its key must not be there; PREF: counts it in).
 * 0 or -ENOMEM (nothing changed). */
int fidx_insert(struct fidx *ix, const struct flower_rule *r);
/* Takes r out (PREF: counts it out, the entry goes at zero).  r must be
 * there. */
void fidx_remove(struct fidx *ix, const struct flower_rule *r);

#endif /* VX_SWITCH_FLOWER_INDEX_H */
