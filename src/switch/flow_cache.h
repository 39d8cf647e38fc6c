/* flow_cache: a worker's exact-match cache of flower verdicts, in front of
 * the classifier.
 *
 * What?
 *   Maps a frame's whole struct flow_key (its match part, in_port included)
 *   and the hook it is classified at (its ingress port, or a port's egress:
 *   flower_hook.h) to the struct flower_verdict flower_table_classify() gave for it.  A hit
 *   costs one hash of the key, one or two entry compares and no classifier
 *   walk, whatever the rules; a miss classifies and caches the result.  It
 *   is Open vSwitch's EMC (exact match cache) in front of its dpcls.
 *
 * Why exact match, not a megaflow
 *   A megaflow (the key under the union of the masks the lookup consulted)
 *   needs un-wildcarding in every classifier step and a masked lookup of its
 *   own; an exact key needs neither and is correct by construction: equal
 *   keys get equal verdicts.  The price: every distinct key is an entry, so
 *   a trace of many short flows misses more (the benchmark measures both
 *   kinds of trace), and tcp_flags are in the key, so one TCP connection
 *   takes a few entries (SYN, ACK, PSH|ACK, FIN).
 *
 * Design
 *   A fixed array of 2^n entries, allocated by flow_cache_create(); nothing
 *   is allocated per packet.  Two-way set associative: a key may live in
 *   entry (hash & mask) or its neighbour (index ^ 1, same or next cache
 *   line).  A miss fills an empty or stale entry of the two.  When both are
 *   live, the cache is thrashing (more flows than entries): only every
 *   FLOW_CACHE_EVICT_EVERY-th such miss evicts one of them (chosen by a hash
 *   bit), the others return the classifier's verdict uncached.  This is
 *   OVS's emc-insert-inv-prob: rewriting a cold 200-byte entry on every
 *   miss of a cache-busting trace cost more than the cache saved, while a
 *   lasting flow still gets in after a few dozen misses.  A small array of
 *   tags (version and hash, 8 bytes an entry) is read first, so a miss does
 *   not touch the large entries at all.
 *
 * Invalidation
 *   Each entry holds the version of the table that computed it (table
 *   versions start at 1 and grow with each change, flower_table.h).  An
 *   entry is a hit only if its version is the current table's: publishing
 *   a new table invalidates every entry at once, with no flush and no
 *   message to the worker.  Cached verdicts point into the table that made
 *   them; they are read only when that table is the current one, hence
 *   alive.  One cache serves one lineage of tables (the daemon's); a cache
 *   moved to another lineage must be flushed first (flow_cache_flush).
 *
 * Use from the worker (dp_switch(), src/dp/user/datapath.c), one call per frame:
 *
 *     const struct flower_table *ft = w->view->flower;   // published by qsbr
 *     if (ft && flower_table_port_has_rules(ft, key->in_port)) {
 *             bool fast;
 *             const struct flower_verdict *v = flow_cache_classify(w->fcache, ft, key, &fast);
 *             flower_counters_add(w->fcounters, v, pkt_len(pkt), fast, w->now_ns);
 *             // execute v->rules[i]->actions in order (flower_rule.h), or
 *             // fall through to fwd_frame() when the verdict says L2
 *     }
 *
 *   Ports without rules pay one binary search over the table's (port,
 *   chain) list and nothing else.
 *
 * Thread-safety
 *   None needed: one cache per worker, used by that worker only; the stats
 *   are read by the control side through the worker's stats as the other
 *   per-worker counters are. */
#ifndef VX_SWITCH_FLOW_CACHE_H
#define VX_SWITCH_FLOW_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "parse/flow.h"
#include "switch/flower_table.h"

enum {
	FLOW_CACHE_DEFAULT_ENTRIES = 8192,
	FLOW_CACHE_EVICT_EVERY = 32,
};

struct flow_cache;

struct flow_cache_stats {
	uint64_t hits;     /* fast path */
	uint64_t misses;   /* classifier lookups (slow path) */
	uint64_t evictions; /* a live entry of the current table replaced */
};

/* n_entries is rounded up to a power of two, at least 2.  0 or -ENOMEM. */
int flow_cache_create(uint32_t n_entries, struct flow_cache **out);
void flow_cache_destroy(struct flow_cache *fc); /* NULL is a no-op */
void flow_cache_flush(struct flow_cache *fc);

/* The verdict of table t for key, from the cache (*fast = true) or from
 * flower_table_classify(), then cached.  The pointer is valid until the
 * next call on fc. */
const struct flower_verdict *flow_cache_classify(struct flow_cache *fc,
						 const struct flower_table *t,
						 const struct flow_key *key, bool *fast);

/* The same for hook `hook` (switch/flower_hook.h): the egress of a port
 * classifies the frame's ingress key there, and the hook is part of what
 * the entry is cached under. */
const struct flower_verdict *flow_cache_classify_hook(struct flow_cache *fc, const struct flower_table *t,
						      uint16_t hook, const struct flow_key *key, bool *fast);

void flow_cache_get_stats(const struct flow_cache *fc, struct flow_cache_stats *stats);

#endif /* VX_SWITCH_FLOW_CACHE_H */
