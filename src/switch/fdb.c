/* fdb: lookups, learning and changes; see fdb.h for the contract and
 * fdb_internal.h for the layout and how readers and writers meet. */
#include "switch/fdb_internal.h"

#include <errno.h>

/* ---- entries -------------------------------------------------------------- */

static bool fdb_entry_is_static(const struct fdb_entry *e)
{
	return e->flags & FDB_ENTRY_STATIC;
}

static uint64_t fdb_entry_age(const struct fdb_entry *e, uint64_t now_ns)
{
	/* A caller's clock never runs backwards, but a test may warp it:
	 * treat "before the last update" as age 0 rather than as huge. */
	return now_ns > e->updated_ns ? now_ns - e->updated_ns : 0;
}

static bool fdb_entry_is_expired(const struct fdb *fdb, const struct fdb_entry *e, uint64_t now_ns)
{
	uint64_t ageing = atomic_load_explicit(&fdb->ageing_ns, memory_order_relaxed);
	return !fdb_entry_is_static(e) && ageing != FDB_AGEING_NEVER && fdb_entry_age(e, now_ns) >= ageing;
}

static bool fdb_entry_is(const struct fdb_entry *e, uint32_t vni, const uint8_t mac[6])
{
	return e->vni == vni && memcmp(e->mac, mac, 6) == 0;
}

static uint32_t fdb_bucket_of(const struct fdb *fdb, uint32_t vni, const uint8_t mac[6])
{
	return fdb_hash(fdb, vni, mac) & fdb->bucket_mask;
}

/* Writer side (lock held).  The entry for (vni, mac): its index and its
 * predecessor in the chain (FDB_NIL: it is the head); FDB_NIL if absent. */
static uint32_t fdb_find_locked(const struct fdb *fdb, uint32_t vni, const uint8_t mac[6], uint32_t *prev,
				struct fdb_entry *out)
{
	*prev = FDB_NIL;
	for (uint32_t i = fdb_head(fdb, fdb_bucket_of(fdb, vni, mac)); i != FDB_NIL; i = out->next) {
		fdb_get(fdb, i, out);
		if (fdb_entry_is(out, vni, mac))
			return i;
		*prev = i;
	}
	return FDB_NIL;
}

enum { FDB_READ_TRIES = 8 };

/* Reader side, no lock: 1 with the entry's index and a consistent copy, 0
 * if absent, -1 when writers kept changing the bucket (then: take the
 * lock). */
static int fdb_find_lockless(const struct fdb *fdb, uint32_t vni, const uint8_t mac[6], uint32_t *idx,
			     struct fdb_entry *out)
{
	uint32_t b = fdb_bucket_of(fdb, vni, mac);
	const struct fdb_bucket *bk = &fdb->buckets[b];
	for (unsigned t = 0; t < FDB_READ_TRIES; t++) {
		uint32_t s = atomic_load_explicit(&bk->seq, memory_order_acquire);
		if (s & 1)
			continue;
		int found = 0;
		uint32_t steps = 0;
		for (uint32_t i = fdb_head(fdb, b); i != FDB_NIL && steps++ <= fdb->n_entries; i = out->next) {
			fdb_get(fdb, i, out);
			if (fdb_entry_is(out, vni, mac)) {
				*idx = i;
				found = 1;
				break;
			}
		}
		if (atomic_load_explicit(&bk->seq, memory_order_relaxed) == s)
			return found;
	}
	return -1;
}

/* ---- per-port learned counts (lock held) --------------------------------------- */

static struct fdb_port_stats *fdb_port_of(struct fdb *fdb, const struct fdb_dst *dst)
{
	return dst->type == FDB_DST_PORT && dst->port < FDB_PORT_LIMIT ? &fdb->ports[dst->port] : NULL;
}

static void fdb_port_count(struct fdb *fdb, const struct fdb_dst *dst, int delta)
{
	struct fdb_port_stats *ps = fdb_port_of(fdb, dst);
	if (ps)
		ps->learned = (uint32_t)((int64_t)ps->learned + delta);
}

/* True (and counted) when one more learned MAC behind `dst` is over its cap. */
static bool fdb_port_full(struct fdb *fdb, const struct fdb_dst *dst)
{
	struct fdb_port_stats *ps = fdb_port_of(fdb, dst);
	if (!ps || !ps->max || ps->learned < ps->max)
		return false;
	ps->refused++;
	return true;
}

int fdb_set_port_max(struct fdb *fdb, uint16_t port, uint32_t max)
{
	if (port >= FDB_PORT_LIMIT)
		return -ERANGE;
	pthread_mutex_lock(&fdb->lock);
	fdb->ports[port].max = max;
	pthread_mutex_unlock(&fdb->lock);
	return 0;
}

void fdb_get_port_stats(const struct fdb *fdb, uint16_t port, struct fdb_port_stats *out)
{
	static const struct fdb_port_stats none;
	struct fdb *w = (struct fdb *)fdb; /* the lock only */
	pthread_mutex_lock(&w->lock);
	*out = port < FDB_PORT_LIMIT ? fdb->ports[port] : none;
	pthread_mutex_unlock(&w->lock);
}

void fdb_port_forget(struct fdb *fdb, uint16_t port)
{
	if (port >= FDB_PORT_LIMIT)
		return;
	pthread_mutex_lock(&fdb->lock);
	fdb->ports[port].max = 0;
	fdb->ports[port].refused = 0;
	pthread_mutex_unlock(&fdb->lock);
}

/* ---- changes (lock held) ---------------------------------------------------------- */

/* Takes an entry off the free list and puts it at the head of its bucket.
 * The caller has checked the per-kind cap, so the free list is not empty. */
static void fdb_insert(struct fdb *fdb, uint32_t vni, const uint8_t mac[6], const struct fdb_dst *dst,
		       uint8_t flags, uint64_t now_ns)
{
	uint32_t i = fdb->free_head;
	uint32_t b = fdb_bucket_of(fdb, vni, mac);
	struct fdb_entry e = { .vni = vni, .flags = flags, .dst = *dst, .updated_ns = now_ns };
	memcpy(e.mac, mac, 6);
	e.next = fdb_head(fdb, b);

	fdb->free_head = fdb_next(fdb, i);
	fdb_write_begin(fdb, b);
	fdb_put(fdb, i, &e);
	fdb_set_head(fdb, b, i);
	fdb_write_end(fdb, b);
	if (flags & FDB_ENTRY_STATIC) {
		fdb->n_static++;
	} else {
		atomic_fetch_add_explicit(&fdb->n_learned, 1, memory_order_relaxed);
		fdb_vni_count_inc(fdb, vni);
		fdb_port_count(fdb, dst, +1);
	}
}

/* Unlinks entry i (a copy: e; predecessor prev, FDB_NIL: head of b). */
static void fdb_unlink(struct fdb *fdb, uint32_t b, uint32_t prev, uint32_t i, const struct fdb_entry *e)
{
	fdb_write_begin(fdb, b);
	if (prev == FDB_NIL)
		fdb_set_head(fdb, b, e->next);
	else
		fdb_set_next(fdb, prev, e->next);
	fdb_write_end(fdb, b);
	if (fdb_entry_is_static(e)) {
		fdb->n_static--;
	} else {
		atomic_fetch_sub_explicit(&fdb->n_learned, 1, memory_order_relaxed);
		fdb_vni_count_dec(fdb, e->vni);
		fdb_port_count(fdb, &e->dst, -1);
	}
	fdb_set_next(fdb, i, fdb->free_head);
	fdb->free_head = i;
}

/* Rewrites entry i of bucket b in place (a move, a conversion). */
static void fdb_rewrite(struct fdb *fdb, uint32_t b, uint32_t i, const struct fdb_entry *e)
{
	fdb_write_begin(fdb, b);
	fdb_put(fdb, i, e);
	fdb_write_end(fdb, b);
}

/* ---- data path ------------------------------------------------------------ */

/* A learned entry that exists (e, index i) seen again behind dst. */
static int fdb_learn_existing(struct fdb *fdb, uint32_t i, struct fdb_entry *e, const struct fdb_dst *dst,
			      uint64_t now_ns)
{
	bool expired = fdb_entry_is_expired(fdb, e, now_ns);
	if (!fdb_dst_equal(&e->dst, dst)) {
		if (fdb_port_full(fdb, dst))
			return -ENOSPC; /* stays where it was, or expires there */
		fdb_port_count(fdb, &e->dst, -1);
		fdb_port_count(fdb, dst, +1);
		if (!expired)
			fdb_count(&fdb->stats.moved, 1);
		e->dst = *dst;
	}
	if (expired) {
		/* Aged out but not swept yet: account it as the ageing and
		 * the fresh learning it stands for. */
		fdb_count(&fdb->stats.aged, 1);
		fdb_count(&fdb->stats.learned, 1);
	}
	e->updated_ns = now_ns;
	fdb_rewrite(fdb, fdb_bucket_of(fdb, e->vni, e->mac), i, e);
	return 0;
}

static int fdb_learn_locked(struct fdb *fdb, uint32_t vni, const uint8_t mac[6], const struct fdb_dst *dst,
			    uint64_t now_ns)
{
	struct fdb_entry e;
	uint32_t prev;
	uint32_t i = fdb_find_locked(fdb, vni, mac, &prev, &e);
	if (i != FDB_NIL) {
		if (fdb_entry_is_static(&e)) {
			if (fdb_dst_equal(&e.dst, dst))
				return 0;
			fdb_count(&fdb->stats.static_conflicts, 1);
			return -EEXIST;
		}
		return fdb_learn_existing(fdb, i, &e, dst, now_ns);
	}
	if (atomic_load_explicit(&fdb->n_learned, memory_order_relaxed) >= fdb->config.max_learned ||
	    (fdb->config.max_learned_per_vni &&
	     fdb_vni_learned(fdb, vni) >= fdb->config.max_learned_per_vni)) {
		fdb_count(&fdb->stats.refused_full, 1);
		return -ENOSPC;
	}
	if (fdb_port_full(fdb, dst))
		return -ENOSPC;
	fdb_insert(fdb, vni, mac, dst, 0, now_ns);
	fdb_count(&fdb->stats.learned, 1);
	return 0;
}

int fdb_learn(struct fdb *fdb, uint32_t vni, const uint8_t mac[6],
	      const struct fdb_dst *dst, uint64_t now_ns)
{
	if (!fdb_mac_is_learnable(mac)) {
		fdb_count(&fdb->stats.invalid_src, 1);
		return -EINVAL;
	}
	if (vni > FDB_VNI_MAX || !fdb_dst_is_valid(dst))
		return -EINVAL;

	/* Lock-free for what almost every frame is: a MAC seen again where
	 * it was, or refused by a static entry or a full table. */
	struct fdb_entry e;
	uint32_t i;
	int found = fdb_find_lockless(fdb, vni, mac, &i, &e);
	if (found == 1 && fdb_entry_is_static(&e)) {
		if (fdb_dst_equal(&e.dst, dst))
			return 0;
		fdb_count(&fdb->stats.static_conflicts, 1);
		return -EEXIST;
	}
	if (found == 1 && fdb_dst_equal(&e.dst, dst) && !fdb_entry_is_expired(fdb, &e, now_ns)) {
		if (e.updated_ns != now_ns)
			fdb_touch(fdb, i, now_ns);
		return 0;
	}
	if (found == 0 && atomic_load_explicit(&fdb->n_learned, memory_order_relaxed) >= fdb->config.max_learned) {
		fdb_count(&fdb->stats.refused_full, 1);
		return -ENOSPC;
	}
	pthread_mutex_lock(&fdb->lock);
	int ret = fdb_learn_locked(fdb, vni, mac, dst, now_ns);
	pthread_mutex_unlock(&fdb->lock);
	return ret;
}

bool fdb_lookup(const struct fdb *fdb, uint32_t vni, const uint8_t mac[6], uint64_t now_ns,
		struct fdb_dst *dst)
{
	if (mac[0] & 0x01)
		return false;
	struct fdb_entry e;
	uint32_t i;
	int found = fdb_find_lockless(fdb, vni, mac, &i, &e);
	if (found < 0) {
		/* Writers kept the bucket busy: read it under their lock. */
		struct fdb *w = (struct fdb *)fdb;
		uint32_t prev;
		pthread_mutex_lock(&w->lock);
		found = fdb_find_locked(fdb, vni, mac, &prev, &e) != FDB_NIL;
		pthread_mutex_unlock(&w->lock);
	}
	if (!found || fdb_entry_is_expired(fdb, &e, now_ns))
		return false;
	*dst = e.dst;
	return true;
}

/* ---- control -------------------------------------------------------------- */

static int fdb_add_static_locked(struct fdb *fdb, uint32_t vni, const uint8_t mac[6], const struct fdb_dst *dst,
				 uint64_t now_ns)
{
	struct fdb_entry e;
	uint32_t prev;
	uint32_t i = fdb_find_locked(fdb, vni, mac, &prev, &e);
	if (i != FDB_NIL && fdb_entry_is_static(&e)) {
		e.dst = *dst;
		e.updated_ns = now_ns;
		fdb_rewrite(fdb, fdb_bucket_of(fdb, vni, mac), i, &e);
		return 0;
	}
	if (fdb->n_static >= fdb->config.max_static)
		return -ENOSPC;
	if (i != FDB_NIL) {
		/* Convert in place: it leaves the learned accounting. */
		atomic_fetch_sub_explicit(&fdb->n_learned, 1, memory_order_relaxed);
		fdb_vni_count_dec(fdb, vni);
		fdb_port_count(fdb, &e.dst, -1);
		fdb->n_static++;
		e.flags |= FDB_ENTRY_STATIC;
		e.dst = *dst;
		e.updated_ns = now_ns;
		fdb_rewrite(fdb, fdb_bucket_of(fdb, vni, mac), i, &e);
		return 0;
	}
	fdb_insert(fdb, vni, mac, dst, FDB_ENTRY_STATIC, now_ns);
	return 0;
}

int fdb_add_static(struct fdb *fdb, uint32_t vni, const uint8_t mac[6],
		   const struct fdb_dst *dst, uint64_t now_ns)
{
	if (!fdb_mac_is_learnable(mac) || vni > FDB_VNI_MAX || !fdb_dst_is_valid(dst))
		return -EINVAL;
	pthread_mutex_lock(&fdb->lock);
	int ret = fdb_add_static_locked(fdb, vni, mac, dst, now_ns);
	pthread_mutex_unlock(&fdb->lock);
	return ret;
}

int fdb_del(struct fdb *fdb, uint32_t vni, const uint8_t mac[6])
{
	struct fdb_entry e;
	uint32_t prev;
	pthread_mutex_lock(&fdb->lock);
	uint32_t i = fdb_find_locked(fdb, vni, mac, &prev, &e);
	if (i != FDB_NIL)
		fdb_unlink(fdb, fdb_bucket_of(fdb, vni, mac), prev, i, &e);
	pthread_mutex_unlock(&fdb->lock);
	return i != FDB_NIL ? 0 : -ENOENT;
}

static bool fdb_flush_matches(const struct fdb_entry *e, const struct fdb_flush_filter *filter,
			      unsigned kinds)
{
	unsigned kind = fdb_entry_is_static(e) ? FDB_FLUSH_STATIC : FDB_FLUSH_LEARNED;
	if (!(kinds & kind))
		return false;
	if (filter->vni != FDB_VNI_ANY && e->vni != filter->vni)
		return false;
	const struct fdb_dst *dst = filter->dst;
	if (!dst)
		return true;
	if (dst->type == FDB_DST_VTEP && dst->family == 0)
		return e->dst.type == FDB_DST_VTEP && e->dst.port == dst->port;
	return fdb_dst_equal(&e->dst, dst);
}

/* Removes every entry `doomed` says so of; lock held. */
typedef bool fdb_doomed_fn(const struct fdb *fdb, const struct fdb_entry *e, const void *aux);

static size_t fdb_sweep(struct fdb *fdb, fdb_doomed_fn *doomed, const void *aux)
{
	size_t removed = 0;
	for (uint32_t b = 0; b <= fdb->bucket_mask; b++) {
		uint32_t prev = FDB_NIL;
		uint32_t i = fdb_head(fdb, b);
		while (i != FDB_NIL) {
			struct fdb_entry e;
			fdb_get(fdb, i, &e);
			if (doomed(fdb, &e, aux)) {
				fdb_unlink(fdb, b, prev, i, &e);
				removed++;
			} else {
				prev = i;
			}
			i = e.next;
		}
	}
	return removed;
}

struct fdb_flush_aux {
	const struct fdb_flush_filter *filter;
	unsigned kinds;
};

static bool fdb_flush_doomed(const struct fdb *fdb, const struct fdb_entry *e, const void *aux)
{
	(void)fdb;
	const struct fdb_flush_aux *a = aux;
	return fdb_flush_matches(e, a->filter, a->kinds);
}

size_t fdb_flush(struct fdb *fdb, const struct fdb_flush_filter *filter)
{
	struct fdb_flush_aux aux = { filter, filter->kinds ? filter->kinds : FDB_FLUSH_LEARNED };
	pthread_mutex_lock(&fdb->lock);
	size_t removed = fdb_sweep(fdb, fdb_flush_doomed, &aux);
	pthread_mutex_unlock(&fdb->lock);
	return removed;
}

static bool fdb_age_doomed(const struct fdb *fdb, const struct fdb_entry *e, const void *aux)
{
	return fdb_entry_is_expired(fdb, e, *(const uint64_t *)aux);
}

size_t fdb_age(struct fdb *fdb, uint64_t now_ns)
{
	pthread_mutex_lock(&fdb->lock);
	size_t removed = fdb_sweep(fdb, fdb_age_doomed, &now_ns);
	pthread_mutex_unlock(&fdb->lock);
	fdb_count(&fdb->stats.aged, removed);
	return removed;
}

void fdb_set_ageing(struct fdb *fdb, uint64_t ageing_ns)
{
	atomic_store(&fdb->ageing_ns, ageing_ns ? ageing_ns : FDB_DEFAULT_AGEING_NS);
}

int fdb_set_max_learned_per_vni(struct fdb *fdb, uint32_t max)
{
	if (max > fdb->config.max_learned)
		return -ERANGE;
	pthread_mutex_lock(&fdb->lock);
	fdb->config.max_learned_per_vni = max;
	pthread_mutex_unlock(&fdb->lock);
	return 0;
}

uint32_t fdb_get_max_learned_per_vni(const struct fdb *fdb)
{
	struct fdb *w = (struct fdb *)fdb;
	pthread_mutex_lock(&w->lock);
	uint32_t max = fdb->config.max_learned_per_vni;
	pthread_mutex_unlock(&w->lock);
	return max;
}

uint32_t fdb_get_max_learned(const struct fdb *fdb)
{
	return fdb->config.max_learned;
}

uint64_t fdb_get_ageing(const struct fdb *fdb)
{
	return atomic_load(&fdb->ageing_ns);
}

static int fdb_dump_locked(const struct fdb *fdb, uint32_t vni, uint64_t now_ns, fdb_dump_cb *cb, void *ctx)
{
	for (uint32_t b = 0; b <= fdb->bucket_mask; b++) {
		struct fdb_entry e;
		for (uint32_t i = fdb_head(fdb, b); i != FDB_NIL; i = e.next) {
			fdb_get(fdb, i, &e);
			if (vni != FDB_VNI_ANY && e.vni != vni)
				continue;
			if (fdb_entry_is_expired(fdb, &e, now_ns))
				continue;
			struct fdb_entry_info info = {
				.vni = e.vni,
				.is_static = fdb_entry_is_static(&e),
				.dst = e.dst,
				.age_ns = fdb_entry_age(&e, now_ns),
			};
			memcpy(info.mac, e.mac, 6);
			int err = cb(&info, ctx);
			if (err)
				return err;
		}
	}
	return 0;
}

int fdb_dump(const struct fdb *fdb, uint32_t vni, uint64_t now_ns, fdb_dump_cb *cb, void *ctx)
{
	struct fdb *w = (struct fdb *)fdb;
	pthread_mutex_lock(&w->lock);
	int err = fdb_dump_locked(fdb, vni, now_ns, cb, ctx);
	pthread_mutex_unlock(&w->lock);
	return err;
}

void fdb_get_stats(const struct fdb *fdb, struct fdb_stats *stats)
{
	struct fdb *w = (struct fdb *)fdb;
	memset(stats, 0, sizeof(*stats));
	stats->learned = atomic_load(&w->stats.learned);
	stats->moved = atomic_load(&w->stats.moved);
	stats->refused_full = atomic_load(&w->stats.refused_full);
	stats->aged = atomic_load(&w->stats.aged);
	stats->invalid_src = atomic_load(&w->stats.invalid_src);
	stats->static_conflicts = atomic_load(&w->stats.static_conflicts);
	pthread_mutex_lock(&w->lock);
	stats->n_learned = atomic_load(&w->n_learned);
	stats->n_static = fdb->n_static;
	pthread_mutex_unlock(&w->lock);
}
