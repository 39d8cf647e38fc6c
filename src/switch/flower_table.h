/* flower_table: every port's flower rules as one immutable, versioned object.
 *
 * What?
 *   The rules of all ports, sorted by (port, chain, pref, handle), with one
 *   classifier (classifier.h) per (port, chain).  flower_table_classify()
 *   runs a frame through its port's chain 0 and every `goto chain` after,
 *   and says which rules matched, in order: their actions are what the
 *   datapath executes.  "port" here is a hook (flower_hook.h): a port's
 *   ingress is its id, its egress id | FLOWER_HOOK_EGRESS, two rule lists
 *   the table keeps apart like two ports; flower_table_classify_hook()
 *   classifies at a hook other than the key's in_port (egress).
 *
 * Immutable and versioned: atomic batches
 *   A table never changes once built.  A change is a *batch* of ops (add,
 *   del, replace, change, each with its rule as written, struct flower_spec
 *   of flower_spec.h): flower_table_apply() copies the old table's rule set
 *   (pointers: a rule object is shared by every table that holds it),
 *   applies the whole batch, rebuilds the classifiers and returns a new
 *   table with version old + 1, or refuses the batch and leaves nothing
 *   changed.  The daemon publishes the new table with one pointer store (its
 *   view, util/qsbr.h) and destroys the old one after a grace period, so a
 *   worker sees the batch entirely or not at all, never a half-updated
 *   table, and takes no lock.  Several workers can read the same table.
 *
 * Counters without writing the table
 *   A worker never writes the table.  Each rule has a `slot`, stable for the
 *   rule's life and reused only after it is deleted, and a `uid` never
 *   reused.  Each worker keeps its own struct flower_counters, an array by
 *   slot; flower_counters_add() resets a slot whose stored uid is not the
 *   rule's (the slot's previous owner was deleted), then counts.  Counts are
 *   split as tc splits hardware from software: "fast path" = flow-cache
 *   hits (switch/flow_cache.h), "slow path" = classifier lookups.  The
 *   control side reads a worker's array (a stats request, or plain loads of
 *   64-bit words, which tear on no 64-bit target) and sums the workers.
 *
 * Ranks, and what a change rebuilds
 *   Within a (port, chain) the classifier rank of a rule is pref << 32 |
 *   handle: lower (pref, handle) is lower rank, and wins, and an insertion
 *   moves no other rule's rank.  So each (port, chain) classifier of the
 *   new table is built with cls_build_from() next to the old table's and
 *   shares the subtables whose rules did not change (classifier.h): adding
 *   one rule to 10,000 over 16 masks hashes one subtable again, not 16.
 *   The rest of a change stays linear in the rules, once per batch: the
 *   rule list is copied and given slots, and hash indexes of the rules
 *   (flower_index.h: taken places, keys per pref, protocol per pref) are
 *   built, against which each command of the batch is checked in O(1)
 *   when it names its pref and handle.  Commands that need the order (an
 *   automatic pref or handle, a del of a whole pref, chain or port) merge
 *   the batch's adds into the sorted list first, O(rules) each.  So a batch
 *   of 100,000 adds on 900,000 rules costs about what one add does (under
 *   a second here), and no line costs O(rules). 
 *
 * Thread-safety
 *   flower_table_apply(), flower_table_destroy() and the accessors of the
 *   rule list: the control thread.  flower_table_classify() and
 *   flower_table_port_has_rules(): any thread, on a live table.
 *   flower_counters_add() and _reserve(): the worker owning the counters. */
#ifndef VX_SWITCH_FLOWER_TABLE_H
#define VX_SWITCH_FLOWER_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "switch/flower_rule.h"
#include "switch/flower_spec.h"

enum flower_table_limits {
	/* No cap below memory: this one is the classifier's (CLS_MAX_RULES,
	 * 32-bit slots and indexes), 16.7 million rules, ~28 GB of them. */
	FLOWER_MAX_TABLE_RULES = 1 << 24,
	/* Rules one frame goes through (goto chain, continue): the kernel's
	 * max_reclassify_loop (net/sched/cls_api.c), which it applies to
	 * goto only; continue only moves on to later prefs, and the kernel's
	 * tc_flower.sh crosses 10 rules with it (match_mpls_lse_test). */
	FLOWER_MAX_HOPS = 16,
	FLOWER_ERR_SIZE = 256,    /* struct flower_error's message incl. NUL */
};

struct flower_table;

/* ---- the control thread -------------------------------------------------- */

struct flower_error {
	size_t op;                /* index of the refused command in the batch */
	char msg[FLOWER_ERR_SIZE]; /* one line, no trailing newline */
};

/* What one command of a batch does with its rule (tc's filter add, del,
 * replace and change; the command language's verbs map onto these). */
enum flower_op_kind {
	FLOWER_OP_ADD = 1,
	FLOWER_OP_DEL,      /* the rules at spec's place: dev and hook, then
	                     * chain, pref and handle as given (FLOWER_SF_*) */
	FLOWER_OP_REPLACE,  /* the rule at pref and handle replaced, else added */
	FLOWER_OP_CHANGE,   /* the rule at pref and handle replaced: it must exist */
};

struct flower_op {
	uint8_t kind;                   /* enum flower_op_kind */
	const struct flower_spec *spec; /* the caller's, read during the call only */
};

/* A new table: old (NULL = empty) with ops[0..n-1] applied in order
 * (replace/change: the rule at the op's pref and handle leaves and the new
 * one takes its place in the same new table; change refuses with -ENOENT
 * when there is none, replace adds).  Port names
 * (dev, mirred dev) go through `resolve`.  An add without pref gets tc's
 * automatic one (49152 in an empty chain, else one below the lowest), an
 * add without handle the lowest free one from 1 within its pref.  Refused,
 * with *err filled and *out NULL, on the first op that fails:
 *   -ENOENT  a port that does not exist; a del that matches no rule
 *   -EEXIST  (port, chain, pref, handle) already taken, or a rule of the
 *            same (port, chain, pref) with the same match (tc: one filter
 *            per key), both "Filter already exists"
 *   -EINVAL  a pref already holding rules of another protocol (tc's rule:
 *            one protocol per pref); no automatic pref left; a show
 *   -ENOSPC  more than FLOWER_MAX_TABLE_RULES rules
 *   -ENOMEM
 * `now_ns` is the added rules' install time. */
int flower_table_apply(const struct flower_table *old, const struct flower_op *ops, size_t n,
		       flower_port_resolver *resolve, void *aux, uint64_t now_ns,
		       struct flower_table **out, struct flower_error *err);

/* Frees the table, and the rules no other table holds.  NULL is a no-op.
 * Only once no worker can hold it (after a grace period).  A table given
 * to flower_table_hold() n times is freed by the n + 1st destroy: a
 * streamed `filter show` keeps the table it started on (control/
 * filters_show.c) while later batches replace it. */
void flower_table_destroy(struct flower_table *t);
void flower_table_hold(struct flower_table *t);

uint64_t flower_table_version(const struct flower_table *t);
/* Counter slots a worker needs for t: 1 + its highest rule slot (slots are
 * reused, so this stays near the number of rules).  NULL: 0.  Any thread,
 * on a live table. */
uint32_t flower_table_n_slots(const struct flower_table *t);
size_t flower_table_n_rules(const struct flower_table *t);
/* Rule i in (port, chain, pref, handle) order, for show and config. */
const struct flower_rule *flower_table_rule(const struct flower_table *t, size_t i);
/* Distinct masks and linear-stage rules over all classifiers (bench, show). */
void flower_table_stats(const struct flower_table *t, uint32_t *n_subtables, uint32_t *n_linear);
/* Of those subtables, how many this table took over from the one it was
 * built from (classifier.h, "Incremental"), for tests and the bench. */
uint32_t flower_table_shared_subtables(const struct flower_table *t);

/* ---- any thread, on a live table ----------------------------------------- */

/* port: a hook (flower_hook.h), the port id alone for its ingress. */
bool flower_table_port_has_rules(const struct flower_table *t, uint16_t port);

enum flower_end {
	FLOWER_END_NO_MATCH = 0, /* no rule matched: L2 switching as before */
	FLOWER_END_MATCHED,      /* rules[0..n_rules-1] matched, in order */
	FLOWER_END_LOOP,         /* goto chain or continue went on past
	                          * FLOWER_MAX_HOPS rules: the frame is dropped
	                          * (the kernel's "reclassify loop" limit, for
	                          * goto; the kernel has none for continue) */
};

/* What a frame does: execute rules[0]'s actions, then rules[1]'s (reached
 * by rules[0]'s goto, or by its continue: the best match among the later
 * prefs of the same chain), and so on; a goto whose chain matched nothing,
 * a continue that no later pref matched, or a last list that ends without
 * a final action, continues to L2 switching.  Every rule crossed is in
 * rules[] and is counted; the flow cache keeps the whole verdict. */
struct flower_verdict {
	uint8_t end;             /* enum flower_end */
	uint8_t n_rules;
	const struct flower_rule *rules[FLOWER_MAX_HOPS];
};

/* Classifies key (key->in_port is the ingress port).  No allocation, no
 * lock, no write outside *v. */
void flower_table_classify(const struct flower_table *t, const struct flow_key *key,
			   struct flower_verdict *v);
/* The same at hook `hook` (switch/flower_hook.h: a port's ingress, or its
 * egress), key->in_port still the port the frame came in on (indev). */
void flower_table_classify_hook(const struct flower_table *t, uint16_t hook, const struct flow_key *key,
				struct flower_verdict *v);

/* ---- what a verdict depends on (megaflows) -------------------------------- */

/* ORs into *mask the bits of a key that some rule at hook `hook` reads
 * (cls_match_widen over its rules, every chain).  Two keys equal under it,
 * in_port included, get the same verdict from flower_table_classify_hook()
 * whatever their other bits, so a cache may keep one verdict for the
 * masked key, as Open vSwitch's megaflows do: the kernel datapath's
 * decisions (control/kdp_rules.c), where a port whose rules read no TCP
 * port or flag takes one entry for every connection rather than one per
 * connection and flag combination.  O(rules of the table): called when a
 * table is published, not per frame.  flower_wildcards.c. */
void flower_table_hook_mask(const struct flower_table *t, uint16_t hook, struct flow_key *mask);

/* ---- a worker's counters ------------------------------------------------- */

struct flower_rule_counters {
	uint64_t uid;            /* the rule these counts belong to */
	uint64_t fast_packets, fast_bytes; /* flow-cache hits */
	uint64_t slow_packets, slow_bytes; /* classifier lookups */
	uint64_t last_used_ns;
};

/* One per worker, 48 bytes a slot, an array by rule slot that grows with
 * the tables: the worker calls flower_counters_reserve(c,
 * flower_table_n_slots(t)) when it takes up a new view (off the packet
 * path: counting never allocates), so it owns and resizes its array
 * alone, and the control side only ever sees a copy (the SNAPSHOT
 * request, flower_counters_copy() on the worker).  A rule whose slot is
 * past the array (the growth failed: out of memory) is not counted.
 * Bytes are the frame's length as received (tc counts skb->len, the L2
 * frame).  Zero-initialised is empty. */
struct flower_counters {
	size_t n;                           /* slots */
	struct flower_rule_counters *slot;
};

/* At least n slots, the new ones zero.  0 or -ENOMEM (unchanged). */
int flower_counters_reserve(struct flower_counters *c, size_t n);
void flower_counters_fini(struct flower_counters *c);
/* dst's slots from src's, as far as both go; dst's others zero. */
void flower_counters_copy(struct flower_counters *dst, const struct flower_counters *src);

/* Counts one frame of `bytes` for every rule of v. */
void flower_counters_add(struct flower_counters *c, const struct flower_verdict *v,
			 uint32_t bytes, bool fast, uint64_t now_ns);
/* Adds the counts of src (another worker's) to dst, slot by slot: the
 * same rule's are summed; a slot's newer rule (a higher uid) wins. */
void flower_counters_merge(struct flower_counters *dst, const struct flower_counters *src);
/* The counts of rule r in c, zero if c has none for it. */
void flower_counters_get(const struct flower_counters *c, const struct flower_rule *r,
			 struct flower_rule_counters *out);

#endif /* VX_SWITCH_FLOWER_TABLE_H */
