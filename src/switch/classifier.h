/* classifier: tuple-space search over struct flow_key, for flower rules.
 *
 * What?
 * =====
 *   A set of rules, each a match (a masked value over struct flow_key, plus
 *   what a mask cannot say: port ranges, "not a first fragment") and a
 *   rank.  cls_lookup() returns the matching rule of lowest rank, i.e. of
 *   highest priority: flower orders rules by (pref, handle), lower first,
 *   and the caller turns that order into ranks 0, 1, 2...  One classifier
 *   holds the rules of one (port, chain); switch/flower_table.h keeps one
 *   per pair.
 *
 * Basic design (the one of Open vSwitch's lib/classifier.c and of the
 * kernel's cls_flower)
 * =================================================================
 *   Rules are grouped by mask.  Each distinct mask is a *subtable*: a hash
 *   table of the rules' masked values.  A lookup masks the key with each
 *   subtable's mask and probes its hash table: one probe per distinct mask,
 *   whatever the number of rules.  Operators use few masks (16 in the
 *   benchmark is already many), so lookups cost O(masks), not O(rules).
 *
 *   Subtables are sorted by the best (lowest) rank among their rules.  The
 *   lookup walks them in that order and stops as soon as the best match
 *   found so far outranks the next subtable's best rank: no later subtable
 *   can hold a better rule.  With the hit rule in the first subtable, a
 *   lookup costs one probe.
 *
 *   Two rules with the same mask and the same masked value: only the one
 *   of lower rank is in the hash table; the other hangs off it in rank
 *   order and is found only by cls_lookup_after() past the first (tc's
 *   `action continue`: the next rule of a later pref may have the same
 *   match).
 *
 *   A subtable hashes only the 32-bit words of the key its mask touches
 *   (a list of word indexes kept with the mask), so a rule matching only
 *   an ethertype costs one word, not the whole key.
 *
 * Ranges and other non-mask predicates: a linear stage
 * ====================================================
 *   A port range (dst_port 1000-2000) cannot be hashed.  Expanding it into
 *   prefix masks (up to 30 per port, 900 for a pair of ranges) multiplies
 *   the subtables, hence the cost of every lookup, for a feature operators
 *   use on a few rules.  So rules with a range, or with ip_flags
 *   nofirstfrag alone (fragments or not, "not a first fragment" is not one
 *   mask over the key's two fragment bits), go into a *linear stage*: an
 *   array sorted by rank, scanned rule by rule (masked compare, then the
 *   predicates) and stopped at the first match or once ranks pass the best
 *   match found.  It takes part in the subtable order as if it were a
 *   subtable whose best rank is that of its first rule, so hashed rules of
 *   better rank are still found first and the early stop still applies.
 *   Its cost is linear in the number of range rules only.
 *
 * Immutable
 * =========
 *   A classifier is built once from its rules (cls_build) and never changes:
 *   rule changes build a new one (switch/flower_table.h).  It is one
 *   allocation-free object for lookups: cls_lookup() allocates nothing,
 *   takes no lock and writes nothing, so any number of threads may look up
 *   the same classifier at once.
 *
 * Incremental: subtables shared between versions
 * ==============================================
 *   A change of one rule in a large table would rebuild every subtable
 *   (hash all the rules, allocate every array) though only the subtable of
 *   that rule's mask differs.  cls_build_from() builds the new classifier
 *   next to the old one and takes over, by reference, every old subtable
 *   whose rules are exactly the new one's (same mask, same (rank, data)
 *   list): only the subtables a change touched are hashed again.  This
 *   needs ranks that do not move when a rule is inserted before them, so
 *   ranks are the caller's stable order keys (flower: pref << 32 | handle),
 *   64 bits.  Subtables are immutable too; their reference counts are
 *   changed by cls_build_from() and cls_destroy() only, both on the
 *   control thread, so the lookups never see them.
 *
 * Thread-safety
 * =============
 *   cls_build() and cls_destroy(): the control thread.  cls_lookup(): any
 *   thread, concurrently, as long as the classifier is alive (qsbr keeps it
 *   so for the workers). */
#ifndef VX_SWITCH_CLASSIFIER_H
#define VX_SWITCH_CLASSIFIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse/flow.h"

/* Predicates a mask cannot express (cls_match.extra). */
enum cls_extra {
	CLS_SRC_RANGE = 1 << 0,     /* src_min <= tp_src <= src_max */
	CLS_DST_RANGE = 1 << 1,     /* dst_min <= tp_dst <= dst_max */
	CLS_NOT_FIRSTFRAG = 1 << 2, /* not (a fragment with offset 0) */
};

/* key has no bit outside mask.  Only the match part of both (the first
 * FLOW_KEY_MATCH_SIZE bytes) is looked at. */
struct cls_match {
	struct flow_key key;
	struct flow_key mask;
	uint8_t extra;              /* CLS_* */
	uint16_t src_min, src_max;
	uint16_t dst_min, dst_max;
};

/* The reference semantics, one rule: what cls_lookup() must agree with. */
bool cls_match_matches(const struct cls_match *m, const struct flow_key *key);
/* ORs into *mask every bit of a key that cls_match_matches(m, key) reads:
 * m's mask, the whole port of a port range, both fragment bits for "not
 * a first fragment".  Two keys equal under the result match m alike. */
void cls_match_widen(const struct cls_match *m, struct flow_key *mask);

/* One rule given to cls_build(); `data` is what cls_lookup() returns. */
struct cls_rule {
	const struct cls_match *match;
	uint64_t rank;              /* lower wins; distinct within a classifier */
	const void *data;
};

struct cls;

/* ---- constructor/destructor: the control thread ------------------------- */

/* A classifier of rules[0..n-1] (any order; the array and the matches are
 * not referenced afterwards except `data`).  0, -ENOMEM or -EINVAL (n too
 * large, or two rules of the same rank). */
int cls_build(const struct cls_rule *rules, size_t n, struct cls **out);
/* The same, sharing with `old` (NULL: none; it stays valid and unchanged)
 * each subtable whose rules are the same (rank, data) pairs.  The caller
 * promises that a (rank, data) pair given to both stands for the same
 * match (flower: a rule object is immutable). */
int cls_build_from(const struct cls *old, const struct cls_rule *rules, size_t n, struct cls **out);
void cls_destroy(struct cls *cls); /* NULL is a no-op */

/* ---- lookups: any thread --------------------------------------------------- */

/* The data of the matching rule of lowest rank, or NULL.  *rank (may be
 * NULL) gets its rank. */
const void *cls_lookup(const struct cls *cls, const struct flow_key *key, uint64_t *rank);
/* The same among the rules of rank >= min (flower: classification going on
 * after a rule whose action was continue). */
const void *cls_lookup_after(const struct cls *cls, const struct flow_key *key, uint64_t min,
			     uint64_t *rank);

struct cls_stats {
	uint32_t n_rules;
	uint32_t n_subtables;       /* distinct masks of hashed rules */
	uint32_t n_linear;          /* rules in the linear stage */
	uint32_t n_shared;          /* subtables taken over from the old one */
};
void cls_get_stats(const struct cls *cls, struct cls_stats *stats);

#endif /* VX_SWITCH_CLASSIFIER_H */
