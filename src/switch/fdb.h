/* fdb: the forwarding database of the L2 switch, one table for all VNIs.
 *
 * What?
 *   Maps (VNI, MAC) to where that MAC lives: a local port, or a remote VTEP
 *   reached through a vxlan port.  Entries are learned from the source MAC
 *   of received frames, or added statically by the operator.  Learned
 *   entries age out `ageing_ns` after the last frame from that MAC.
 *
 * Bounded.
 *   All memory is allocated by fdb_create(): a pool of `max_learned` learned
 *   plus `max_static` static plus `max_evpn` EVPN entries and a bucket
 *   array (each kind has its own cap: a fabric's thousands of remote MACs
 *   do not eat the operator's static entries, nor the reverse).  Nothing is
 *   allocated per packet.  When the learned pool (or a VNI's share of it,
 *   `max_learned_per_vni`) is full, a new source MAC is *refused* and
 *   counted in `refused_full`, as the Linux bridge's fdb_max_learned does;
 *   existing entries are never evicted, so a MAC flood cannot push out the
 *   MACs that are already talking, and static entries are exempt from the
 *   cap and from ageing.
 *
 * Learning rules.
 *   - Only valid unicast source MACs are learned: never multicast, broadcast
 *     or all-zero (kernel vxlan fix f58f45c1e5b9: such an entry poisons the
 *     table).  fdb_learn() returns -EINVAL and counts `invalid_src`.
 *   - A learned MAC seen behind another destination moves (count `moved`).
 *   - A static entry is never moved or refreshed by learning; a frame whose
 *     source matches a static entry elsewhere is counted in
 *     `static_conflicts`, so a spoofer cannot hijack a static MAC.
 *   - Key is (VNI, MAC): the same MAC in two VNIs is two independent entries.
 *
 * Time.
 *   Every function that needs the time takes `now_ns` from the caller
 *   (monotonic nanoseconds); nothing here reads a clock, so tests warp time.
 *   An entry older than ageing_ns is invisible to lookups even before
 *   fdb_age() reclaims it, so forwarding does not depend on how often the
 *   caller sweeps.  Its slot, though, counts against the cap until the
 *   sweep (or until the same MAC is learned again, which reuses it): sweep
 *   about once a second so a full table frees up within a second of
 *   expiry.
 *
 * Hashing.
 *   Chained hash over preallocated entries (32-bit indices), keyed with a
 *   caller-supplied seed so that an attacker choosing source MACs cannot
 *   aim them at one bucket without knowing it.  Pass a random seed in
 *   production, a fixed one in tests.
 *
 * Thread-safety.
 *   One fdb is shared by every datapath worker and the control thread.
 *   - fdb_lookup() takes no lock and writes nothing: each bucket carries
 *     a sequence count that writers make odd while they change its chain,
 *     and a reader that saw it move walks again (after a few tries, it
 *     reads holding the bucket, so a lookup never fails for being
 *     unlucky).
 *   - fdb_learn() takes no lock for what nearly every frame is: a MAC seen
 *     again behind the same destination (its last-seen time is one atomic
 *     store), a MAC refused by a static entry, or a new MAC refused by a
 *     full table.  A new or moved MAC takes only its bucket (a spin lock
 *     of one chain); the entry comes from a lock-free free list and the
 *     caps are counts reserved atomically.  No table-wide lock is taken on
 *     the packet path: two workers learning meet only on one bucket.
 *   - Every control function (add, del, flush, age, dump, stats, caps)
 *     may run on any thread at any time; they take a control mutex among
 *     themselves and each bucket they change.  fdb_dump()'s callback runs
 *     with a bucket held: it must not call into the fdb.
 *   Counters are atomics.  Lookup and hit counts are the caller's (one per
 *   worker: forward.h), so that no cache line is written by every frame.
 *
 * Errors: 0 or a negative errno; predicates return bool. */
#ifndef VX_SWITCH_FDB_H
#define VX_SWITCH_FDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fdb_limits {
	FDB_DEFAULT_MAX_LEARNED = 8192,   /* OVS's mac-table-size default */
	FDB_DEFAULT_MAX_STATIC = 1024,
	FDB_DEFAULT_MAX_EVPN = 8192,      /* remote MACs from BGP EVPN (fdb_add_evpn) */
	FDB_MAX_ENTRIES = 1 << 24,        /* learned + static, sanity bound */
	FDB_VNI_MAX = (1 << 24) - 1,      /* VNIs are 24 bits */
	FDB_PORT_LIMIT = 256,             /* local ports with their own MAC cap: ids below this */
};

#define FDB_DEFAULT_AGEING_NS (300ull * 1000000000ull) /* Linux bridge: 300 s */
#define FDB_AGEING_NEVER UINT64_MAX /* learned entries never expire */
#define FDB_VNI_ANY UINT32_MAX                          /* filter: every VNI */

/* Where a MAC lives, and where a frame came from. */
enum fdb_dst_type {
	FDB_DST_NONE = 0,
	FDB_DST_PORT = 1, /* a local port (tap ...) */
	FDB_DST_VTEP = 2, /* a remote VTEP behind a vxlan port */
};

struct fdb_dst {
	uint8_t type;     /* FDB_DST_* */
	uint8_t family;   /* VTEP: 4 or 6; PORT: 0 */
	uint16_t port;    /* PORT: the local port id; VTEP: the vxlan port id */
	uint8_t addr[16]; /* VTEP: outer IP address (IPv4 in the first 4 bytes,
	                   * the rest zero); PORT: all zero */
};

/* Builders, so every fdb_dst of one destination compares equal. */
struct fdb_dst fdb_dst_port(uint16_t port);
struct fdb_dst fdb_dst_vtep4(uint16_t vxlan_port, const uint8_t addr[4]);
struct fdb_dst fdb_dst_vtep6(uint16_t vxlan_port, const uint8_t addr[16]);
/* From a decapsulated pkt's tunnel metadata (family 4 or 6, addr as in
 * struct pkt_tunnel).  Returns FDB_DST_NONE type for any other family. */
struct fdb_dst fdb_dst_vtep(uint16_t vxlan_port, uint8_t family, const uint8_t addr[16]);
bool fdb_dst_equal(const struct fdb_dst *a, const struct fdb_dst *b);

/* A source MAC that may be learned: not multicast/broadcast (I/G bit clear)
 * and not all zero. */
bool fdb_mac_is_learnable(const uint8_t mac[6]);

struct fdb_config {
	uint32_t max_learned;         /* 0: FDB_DEFAULT_MAX_LEARNED */
	uint32_t max_learned_per_vni; /* 0: no per-VNI cap */
	uint32_t max_static;          /* 0: FDB_DEFAULT_MAX_STATIC */
	uint32_t max_evpn;            /* 0: FDB_DEFAULT_MAX_EVPN */
	uint64_t ageing_ns;           /* 0: FDB_DEFAULT_AGEING_NS */
	uint64_t hash_seed;
};

struct fdb_stats {
	uint64_t learned;          /* new learned entries */
	uint64_t moved;            /* learned entries that changed destination */
	uint64_t refused_full;     /* new source MACs refused: table or VNI full */
	uint64_t aged;             /* learned entries removed by ageing */
	uint64_t invalid_src;      /* multicast/broadcast/zero source MACs */
	uint64_t static_conflicts; /* source matched a static entry elsewhere */
	uint64_t evpn_refused;     /* fdb_add_evpn refused: max_evpn entries exist */
	uint32_t n_learned;        /* entries now in the table */
	uint32_t n_static;         /* the operator's (EVPN ones not included) */
	uint32_t n_evpn;
};

/* One entry as shown by `vxctl fdb show`. */
struct fdb_entry_info {
	uint32_t vni;
	uint8_t mac[6];
	bool is_static;
	bool evpn;       /* installed from BGP EVPN (fdb_add_evpn); is_static too */
	struct fdb_dst dst;
	uint64_t age_ns; /* since the last frame (learned) or since added (static) */
};

struct fdb;

/* Constructor/destructor.  All memory is allocated here.  Returns 0 with
 * the table in *out, or with *out = NULL: -EINVAL for a bad config (sizes
 * above FDB_MAX_ENTRIES), -ENOMEM when an allocation fails (also when the
 * failpoint "fdb_create" hits: util/failpoint.h).  fdb_destroy(NULL) is a
 * no-op. */
int fdb_create(const struct fdb_config *config, struct fdb **out);
void fdb_destroy(struct fdb *fdb);

/* ---- data path ---------------------------------------------------------- */

/* Learns that `mac` in `vni` lives behind `dst` at `now_ns`.
 * Returns 0 if the entry exists now (new, refreshed or moved), -EINVAL for a
 * non-learnable MAC, a VNI above FDB_VNI_MAX or a bad dst, -ENOSPC when
 * refused because the table or the VNI is full, -EEXIST when the MAC is a
 * static entry with another destination (not changed).  Each outcome is
 * counted in the stats. */
int fdb_learn(struct fdb *fdb, uint32_t vni, const uint8_t mac[6],
	      const struct fdb_dst *dst, uint64_t now_ns);

/* Where does `mac` live in `vni`?  Returns true and fills *dst when there is
 * an unexpired entry.  Multicast/broadcast MACs are never found. */
bool fdb_lookup(const struct fdb *fdb, uint32_t vni, const uint8_t mac[6], uint64_t now_ns,
		struct fdb_dst *dst);

/* ---- control ------------------------------------------------------------ */

/* Adds or replaces a static entry (replacing a learned entry of the same
 * key converts it).  -EINVAL for a multicast/zero MAC or bad dst/VNI,
 * -ENOSPC when max_static static entries exist. */
int fdb_add_static(struct fdb *fdb, uint32_t vni, const uint8_t mac[6],
		   const struct fdb_dst *dst, uint64_t now_ns);

/* EVPN entries (control/evpn.h): a remote MAC BGP EVPN told us of, kept
 * like a static entry (never aged, shown as `evpn`), except that
 *   - they are counted apart (n_evpn) against their own cap, max_evpn
 *     (-ENOSPC beyond it, counted in evpn_refused), never against
 *     max_static;
 *   - an operator's static entry of the same key wins: -EEXIST, unchanged
 *     (and an operator's fdb_add_static over an EVPN entry replaces it);
 *   - a frame from a local port (FDB_DST_PORT) with that source MAC takes
 *     it over and it becomes a learned entry there: the MAC moved to this
 *     host (RFC 7432 mobility; zebra then advertises it with a higher
 *     sequence number once the local MAC is advertised).
 * fdb_add_evpn replaces a learned or EVPN entry; fdb_del_evpn deletes
 * only an EVPN entry (-ENOENT for any other, which stays). */
int fdb_add_evpn(struct fdb *fdb, uint32_t vni, const uint8_t mac[6],
		 const struct fdb_dst *dst, uint64_t now_ns);
int fdb_del_evpn(struct fdb *fdb, uint32_t vni, const uint8_t mac[6]);

/* Deletes the entry (static or learned).  -ENOENT if absent. */
int fdb_del(struct fdb *fdb, uint32_t vni, const uint8_t mac[6]);

/* What fdb_flush() removes: entries matching every given criterion. */
enum fdb_flush_kind {
	FDB_FLUSH_LEARNED = 1 << 0,
	FDB_FLUSH_STATIC = 1 << 1,
	FDB_FLUSH_ALL = FDB_FLUSH_LEARNED | FDB_FLUSH_STATIC,
};

struct fdb_flush_filter {
	uint32_t vni;          /* FDB_VNI_ANY for every VNI */
	const struct fdb_dst *dst; /* NULL: any destination.  For a PORT dst,
	                            * only entries on that port; for a VTEP dst
	                            * with family 0, every VTEP on that vxlan
	                            * port. */
	unsigned kinds;        /* FDB_FLUSH_*; 0 means FDB_FLUSH_LEARNED */
};

/* Removes the matching entries; returns how many.  Use when a port goes
 * away or a VNI is deleted (filter by dst / vni) or for `fdb flush`. */
size_t fdb_flush(struct fdb *fdb, const struct fdb_flush_filter *filter);

/* Removes learned entries idle for ageing_ns or longer; returns how many
 * (also counted in `aged`).  O(table); call about once a second. */
size_t fdb_age(struct fdb *fdb, uint64_t now_ns);

/* Changes the ageing time (`ip link set ... ageing_time`); 0 restores the
 * default, FDB_AGEING_NEVER turns ageing off (the bridge's ageing_time 0).
 * Takes effect at once for every entry, since expiry is computed from the
 * last-seen time. */
void fdb_set_ageing(struct fdb *fdb, uint64_t ageing_ns);
uint64_t fdb_get_ageing(const struct fdb *fdb);

/* Changes the per-VNI cap on learned entries (the bridge's fdb_max_learned,
 * `vxctl set fdb-max`); 0 removes it.  Returns -ERANGE, changing nothing,
 * above the table's max_learned (sized by fdb_create()).  Lowering it below
 * what a VNI holds removes nothing: that VNI learns no new MAC until ageing
 * or deletion brings it under the cap (static entries never count). */
int fdb_set_max_learned_per_vni(struct fdb *fdb, uint32_t max);
uint32_t fdb_get_max_learned_per_vni(const struct fdb *fdb);
/* The table's learned capacity over all VNIs together (config.max_learned). */
uint32_t fdb_get_max_learned(const struct fdb *fdb);

/* Calls `cb` for each live entry of `vni` (or every VNI with FDB_VNI_ANY),
 * in table order (not sorted).  Expired learned entries are skipped.  A
 * non-zero return from `cb` stops the walk and is returned; else 0.  `cb`
 * must not modify the fdb. */
typedef int fdb_dump_cb(const struct fdb_entry_info *entry, void *ctx);
int fdb_dump(const struct fdb *fdb, uint32_t vni, uint64_t now_ns, fdb_dump_cb *cb, void *ctx);

void fdb_get_stats(const struct fdb *fdb, struct fdb_stats *stats);

/* Per-port MAC limit (`max-macs N`, port security on a physical switch):
 * learned entries behind local port `port` (FDB_DST_PORT) are capped at
 * `max`; 0 removes the cap.  A new MAC, or a MAC moving to a full port, is
 * refused and counted (the frame is still forwarded, as with the other
 * caps); static entries never count.  -ERANGE for port >= FDB_PORT_LIMIT.
 * Lowering the cap evicts nothing. */
int fdb_set_port_max(struct fdb *fdb, uint16_t port, uint32_t max);

struct fdb_port_stats {
	uint32_t learned;   /* learned entries behind the port now */
	uint32_t max;       /* 0: no cap */
	uint64_t refused;   /* MACs refused by the cap */
};
void fdb_get_port_stats(const struct fdb *fdb, uint16_t port, struct fdb_port_stats *out);
/* A port is gone: its cap and its refusal count are forgotten (its entries
 * are flushed separately, fdb_flush). */
void fdb_port_forget(struct fdb *fdb, uint16_t port);

/* Learned entries currently held for `vni` (for tests and `fdb show`). */
uint32_t fdb_count_vni(const struct fdb *fdb, uint32_t vni);

#endif
