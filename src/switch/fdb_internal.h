/* Private to src/switch/fdb*.c: the table's layout and the atomic word
 * accessors both files use.
 *   fdb_table.c  destinations, hashing, per-VNI counts, construction
 *   fdb.c        lookups, learning and every change (the locking)
 *
 * Layout: one array of entries (learned and static share it; each kind is
 * capped separately, and the array holds max_learned + max_static so the
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
 * a reader that strays onto the free list or into another chain ends. */
#ifndef VX_SWITCH_FDB_INTERNAL_H
#define VX_SWITCH_FDB_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "switch/fdb.h"

#define FDB_NIL UINT32_MAX

enum fdb_entry_flags {
	FDB_ENTRY_STATIC = 1 << 0,
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
	_Atomic uint32_t seq;  /* odd while a writer changes the chain */
};

/* Counters bumped outside the writer lock too (refusals seen on the
 * lock-free path). */
struct fdb_counters {
	_Atomic uint64_t learned, moved, refused_full, aged, invalid_src, static_conflicts;
};

struct fdb_vni_count {
	uint32_t next; /* chain, or free list */
	uint32_t vni;
	uint32_t count;
};

struct fdb {
	struct fdb_config config;

	/* Writers: every change of entries, buckets, counts and caps. */
	pthread_mutex_t lock;
	union fdb_slot *entries;
	uint32_t n_entries;   /* size of `entries` */
	struct fdb_bucket *buckets;
	uint32_t bucket_mask;
	uint32_t free_head;

	struct fdb_vni_count *vni_counts;
	uint32_t *vni_buckets;
	uint32_t vni_bucket_mask;
	uint32_t vni_free_head;

	_Atomic uint32_t n_learned; /* read without the lock: a full table refuses there */
	uint32_t n_static;
	_Atomic uint64_t ageing_ns;
	struct fdb_counters stats;
	struct fdb_port_stats ports[FDB_PORT_LIMIT]; /* learned behind each local port */
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

/* A writer's change of what bucket b reaches, between begin and end. */
static inline void fdb_write_begin(struct fdb *fdb, uint32_t b)
{
	uint32_t s = atomic_load_explicit(&fdb->buckets[b].seq, memory_order_relaxed);
	atomic_store_explicit(&fdb->buckets[b].seq, s + 1, memory_order_relaxed);
}

static inline void fdb_write_end(struct fdb *fdb, uint32_t b)
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
/* Per-VNI learned counts (lock held). */
uint32_t fdb_vni_learned(const struct fdb *fdb, uint32_t vni);
void fdb_vni_count_inc(struct fdb *fdb, uint32_t vni);
void fdb_vni_count_dec(struct fdb *fdb, uint32_t vni);

#endif
