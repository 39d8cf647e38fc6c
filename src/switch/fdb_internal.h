/* Private to src/switch/fdb*.c: the table's layout and the atomic word
 * accessors both files use.
 *   fdb_table.c  destinations, hashing, per-VNI counts, construction
 *   fdb.c        lookups, learning and every change (the locking)
 *
 * Layout: one array of entries (learned and static share it; each kind is
 * capped separately, and the array holds max_learned + max_static +
 * max_evpn so the
 * free list never runs dry before a cap is reached), a bucket array of
 * 32-bit entry indices chaining through entry.next, and a second, smaller
 * chained table counting learned entries per VNI for the per-VNI cap.  A
 * VNI has a count record only while it has learned entries, so there are
 * never more records than max_learned.
 *
 * Concurrency (fdb.h, "Thread-safety"): every word of an entry and of a
 * bucket is read with acquire and written with release atomics (plain
 * moves on x86), so that readers may walk a chain while a writer changes
 * it; each bucket has a sequence count, odd while a writer changes
 * anything reachable from it (an entry's key, destination or link, the
 * head), which a reader checks before and after its walk and retries on.
 * No fences: a reader that sees any word a writer stored (release) also
 * sees the odd count stored before it, and its acquire loads keep the
 * second read of the count after them (the seqlock of Boehm, "Can
 * seqlocks get along with programming language memory models?", which
 * ThreadSanitizer understands).  An entry taken off a chain goes back on
 * the free list at once: a reader still on it sees its bucket's count
 * move and walks again, and every walk is bounded by the table size, so
 * a reader that strays onto the free list or into another chain ends.
 *
 * Writers take the bucket they change (its count odd: a spin lock of one
 * chain), never a table-wide lock: learning on two workers meets only on
 * one bucket.  What is table-wide is lock-free: the free list (a tagged
 * stack), and the counts the caps look at (reserved with fetch_add before
 * an insert and given back when over the cap). */
#ifndef VX_SWITCH_FDB_INTERNAL_H
#define VX_SWITCH_FDB_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "switch/fdb.h"

#define FDB_NIL UINT32_MAX

enum fdb_entry_flags {
	FDB_ENTRY_STATIC = 1 << 0,
	/* With STATIC: installed from BGP EVPN (fdb_add_evpn), not by the
	 * operator; a local port's frame may take it over (mobility). */
	FDB_ENTRY_EVPN = 1 << 1,
};

struct fdb_entry {
	uint32_t next;       /* bucket chain, or free list */
	uint32_t vni;
	uint8_t mac[6];
	uint8_t flags;       /* FDB_ENTRY_* */
	uint8_t pad;
	struct fdb_dst dst;
	uint64_t updated_ns; /* last frame (learned) or when added (static) */
};

/* 48 bytes: four entries per pair of cache lines; a lookup that hits its
 * bucket's first entry touches one bucket and one entry. */
_Static_assert(sizeof(struct fdb_entry) == 48, "fdb_entry stays compact");

enum { FDB_ENTRY_WORDS = sizeof(struct fdb_entry) / sizeof(uint64_t) };

/* An entry as stored: read and written word by word with atomics (the
 * comment at the top). */
union fdb_slot {
	struct fdb_entry e;
	uint64_t w[FDB_ENTRY_WORDS];
};

struct fdb_bucket {
	_Atomic uint32_t head;
	/* Odd while a writer holds the bucket: the count is the bucket's
	 * lock too (fdb_bucket_lock), and readers retry on it. */
	_Atomic uint32_t seq;
};

/* Counters bumped outside the writer lock too (refusals seen on the
 * lock-free path). */
struct fdb_counters {
	_Atomic uint64_t learned, moved, refused_full, aged, invalid_src, static_conflicts, evpn_refused;
};

/* Learned entries of one VNI: an open-addressing slot, claimed for a VNI
 * on its first learned MAC and kept (count 0) after its last.  Frames are
 * learned only in VNIs that have ports, so FDB_VNI_SLOTS (>= 2 x the VNIs
 * a switch of VXD_MAX_PORTS ports can have) never fills. */
enum { FDB_VNI_SLOTS = 2048 };
struct fdb_vni_slot {
	_Atomic uint32_t vni_plus1;  /* 0: free */
	_Atomic uint32_t count;
};

/* Learned behind one local port, and its cap (fdb_set_port_max). */
struct fdb_port_count {
	_Atomic uint32_t learned, max;
	_Atomic uint64_t refused;
};

struct fdb {
	struct fdb_config config;

	/* Control operations among themselves (static add/del, flush, age,
	 * dump, caps): never taken on the packet path. */
	pthread_mutex_t lock;
	union fdb_slot *entries;
	uint32_t n_entries;   /* size of `entries` */
	struct fdb_bucket *buckets;
	uint32_t bucket_mask;
	/* Free entries: a lock-free stack, (tag << 32 | index), the tag
	 * against ABA. */
	_Atomic uint64_t free_head;

	struct fdb_vni_slot vni_slots[FDB_VNI_SLOTS];

	/* Counts are reserved before an insert (fetch_add, checked, given
	 * back when over the cap), so two workers cannot both take the last
	 * place. */
	_Atomic uint32_t n_learned;
	_Atomic uint32_t n_static;
	_Atomic uint32_t n_evpn;
	_Atomic uint32_t max_per_vni;     /* config.max_learned_per_vni at run time */
	_Atomic uint64_t ageing_ns;
	struct fdb_counters stats;
	struct fdb_port_count ports[FDB_PORT_LIMIT]; /* learned behind each local port */
};

/* ---- entry and bucket words -------------------------------------------------- */

static inline void fdb_get(const struct fdb *fdb, uint32_t i, struct fdb_entry *out)
{
	union fdb_slot copy;
	for (unsigned k = 0; k < FDB_ENTRY_WORDS; k++)
		copy.w[k] = __atomic_load_n(&fdb->entries[i].w[k], __ATOMIC_ACQUIRE);
	*out = copy.e;
}

static inline void fdb_put(struct fdb *fdb, uint32_t i, const struct fdb_entry *in)
{
	union fdb_slot copy = { .e = *in };
	for (unsigned k = 0; k < FDB_ENTRY_WORDS; k++)
		__atomic_store_n(&fdb->entries[i].w[k], copy.w[k], __ATOMIC_RELEASE);
}

static inline uint32_t fdb_next(const struct fdb *fdb, uint32_t i)
{
	struct fdb_entry e;
	fdb_get(fdb, i, &e);
	return e.next;
}

static inline void fdb_set_next(struct fdb *fdb, uint32_t i, uint32_t next)
{
	struct fdb_entry e;
	fdb_get(fdb, i, &e);
	e.next = next;
	fdb_put(fdb, i, &e);
}

/* Refreshes an entry's last-seen time (lock-free: learning on the data
 * path).  Racing a writer that reuses the slot, it may refresh the new
 * entry instead, which only makes that one look a little younger. */
static inline void fdb_touch(struct fdb *fdb, uint32_t i, uint64_t now_ns)
{
	__atomic_store_n(&fdb->entries[i].w[FDB_ENTRY_WORDS - 1], now_ns, __ATOMIC_RELAXED);
}

/* A writer takes bucket b: its count from even to odd.  Held for a
 * chain walk and one change, by a worker learning or the control thread;
 * nothing else is done while holding it. */
static inline void fdb_bucket_lock(struct fdb *fdb, uint32_t b)
{
	_Atomic uint32_t *seq = &fdb->buckets[b].seq;
	for (;;) {
		uint32_t s = atomic_load_explicit(seq, memory_order_relaxed);
		if (!(s & 1) &&
		    atomic_compare_exchange_weak_explicit(seq, &s, s + 1, memory_order_acquire, memory_order_relaxed))
			return;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
}

static inline void fdb_bucket_unlock(struct fdb *fdb, uint32_t b)
{
	uint32_t s = atomic_load_explicit(&fdb->buckets[b].seq, memory_order_relaxed);
	atomic_store_explicit(&fdb->buckets[b].seq, s + 1, memory_order_release);
}

static inline uint32_t fdb_head(const struct fdb *fdb, uint32_t b)
{
	return atomic_load_explicit(&fdb->buckets[b].head, memory_order_acquire);
}

static inline void fdb_set_head(struct fdb *fdb, uint32_t b, uint32_t i)
{
	atomic_store_explicit(&fdb->buckets[b].head, i, memory_order_release);
}

static inline void fdb_count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}


/* fdb_table.c */
uint32_t fdb_hash(const struct fdb *fdb, uint32_t vni, const uint8_t mac[6]);
bool fdb_dst_is_valid(const struct fdb_dst *dst);
/* The count of learned entries of vni (claimed on first use; NULL only if
 * FDB_VNI_SLOTS VNIs have learned, which cannot happen, see above). */
_Atomic uint32_t *fdb_vni_count(struct fdb *fdb, uint32_t vni, bool claim);
/* The free list: an entry, or FDB_NIL; give one back. */
uint32_t fdb_free_pop(struct fdb *fdb);
void fdb_free_push(struct fdb *fdb, uint32_t i);

#endif
